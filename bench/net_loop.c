/* net_loop: egress cost (issue 10).
 *   net_loop serve PORTFILE         echo/stream server on 127.0.0.1 (run outside the sandbox)
 *   net_loop connect PORT [N]       N x (connect, 1-byte echo, close)
 *   net_loop stream PORT [MIB]      read MIB MiB from the server over one connection
 *   net_loop udp PORT [N]           N x (sendto 127.0.0.1:PORT 64 bytes, recv the echo): UDP
 *                                   egress through moat-netd (the server echoes UDP on PORT too)
 *   net_loop udpconn PORT [N]       the same on a connected socket (send + recv): under moat
 *                                   through moat-netd's relay
 *   net_loop dgram DIR [N]          AF_UNIX datagrams in DIR: N x sendto(path)+recvfrom(addr),
 *                                   then N x sendmsg without an address + recv (the cost
 *                                   every sendmsg pays now that it is a ptrace stop), send + recv,
 *                                   send + recvfrom/recvmsg asking for the source, and on a
 *                                   stream connected by path write + recvfrom/recvmsg likewise
 * Under moat: moat run --net allow=127.0.0.1:PORT -- net_loop connect PORT. */
#include "bench.h"
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

static struct sockaddr_in lo(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return a;
}

static int dial(int port)
{
	struct sockaddr_in a = lo(port);
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0 || connect(s, (struct sockaddr *)&a, sizeof a) < 0) {
		perror("connect");
		exit(1);
	}
	return s;
}

int main(int argc, char **argv)
{
	static char buf[1 << 16];
	if (argc < 3)
		return 2;
	if (!strcmp(argv[1], "serve")) {
		signal(SIGCHLD, SIG_IGN);
		int s = socket(AF_INET, SOCK_STREAM, 0), one = 1;
		setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
		struct sockaddr_in a = lo(0);
		socklen_t l = sizeof a;
		if (bind(s, (struct sockaddr *)&a, sizeof a) < 0 || listen(s, 128) < 0)
			return 1;
		getsockname(s, (struct sockaddr *)&a, &l);
		int u = socket(AF_INET, SOCK_DGRAM, 0); /* UDP echo on the same port */
		if (bind(u, (struct sockaddr *)&a, sizeof a) == 0 && fork() == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL); /* ends with the server */
			for (;;) {
				struct sockaddr_in from;
				socklen_t fl = sizeof from;
				ssize_t n = recvfrom(u, buf, sizeof buf, 0, (struct sockaddr *)&from, &fl);
				if (n >= 0)
					sendto(u, buf, (size_t)n, 0, (struct sockaddr *)&from, fl);
			}
		}
		close(u);
		FILE *f = fopen(argv[2], "w");
		fprintf(f, "%d\n", ntohs(a.sin_port));
		fclose(f);
		for (;;) {
			int c = accept(s, NULL, NULL);
			if (c < 0)
				continue;
			char m;
			if (read(c, &m, 1) == 1 && m == 'S') {
				if (fork() == 0) {
					memset(buf, 'x', sizeof buf);
					while (write(c, buf, sizeof buf) > 0)
						;
					_exit(0);
				}
			} else {
				write(c, &m, 1);
			}
			close(c);
		}
	}
	if (!strcmp(argv[1], "dgram")) {
		long n = bench_iters(argc - 2, argv + 2, 2000);
		struct sockaddr_un sa = { .sun_family = AF_UNIX }, sb = { .sun_family = AF_UNIX };
		snprintf(sa.sun_path, sizeof sa.sun_path, "%s/bench-a.sock", argv[2]);
		snprintf(sb.sun_path, sizeof sb.sun_path, "%s/bench-b.sock", argv[2]);
		unlink(sa.sun_path);
		unlink(sb.sun_path);
		int a = socket(AF_UNIX, SOCK_DGRAM, 0), b = socket(AF_UNIX, SOCK_DGRAM, 0);
		if (bind(a, (struct sockaddr *)&sa, sizeof sa) < 0 || bind(b, (struct sockaddr *)&sb, sizeof sb) < 0) {
			perror("bind");
			return 1;
		}
		char m = 'd';
		double t0 = bench_now_ns();
		for (long i = 0; i < n; i++) {
			struct sockaddr_un from;
			socklen_t fl = sizeof from;
			if (sendto(b, &m, 1, 0, (struct sockaddr *)&sa, sizeof sa) != 1 ||
			    recvfrom(a, &m, 1, 0, (struct sockaddr *)&from, &fl) != 1)
				return 1;
		}
		bench_report("dgram_sendto_path_recvfrom", t0, bench_now_ns(), n);
		if (connect(b, (struct sockaddr *)&sa, sizeof sa) < 0)
			return 1;
		struct iovec iov = { &m, 1 };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
		t0 = bench_now_ns();
		for (long i = 0; i < n; i++)
			if (sendmsg(b, &mh, 0) != 1 || recv(a, &m, 1, 0) != 1)
				return 1;
		bench_report("dgram_sendmsg_noaddr_recv", t0, bench_now_ns(), n);
		t0 = bench_now_ns();
		for (long i = 0; i < n; i++)
			if (send(b, &m, 1, 0) != 1 || recv(a, &m, 1, 0) != 1)
				return 1;
		bench_report("dgram_send_recv", t0, bench_now_ns(), n);
		/* the receives that ask for the source (unixgen39) */
		struct sockaddr_un from;
		socklen_t fl;
		t0 = bench_now_ns();
		for (long i = 0; i < n; i++)
			if (send(b, &m, 1, 0) != 1 || recvfrom(a, &m, 1, 0, (struct sockaddr *)&from, (fl = sizeof from, &fl)) != 1)
				return 1;
		bench_report("dgram_send_recvfrom_addr", t0, bench_now_ns(), n);
		struct msghdr rh = { .msg_name = &from, .msg_iov = &iov, .msg_iovlen = 1 };
		t0 = bench_now_ns();
		for (long i = 0; i < n; i++)
			if (send(b, &m, 1, 0) != 1 || (rh.msg_namelen = sizeof from, recvmsg(a, &rh, 0)) != 1)
				return 1;
		bench_report("dgram_send_recvmsg_name", t0, bench_now_ns(), n);
		/* a stream connected by path: its source is the peer's */
		struct sockaddr_un sl = { .sun_family = AF_UNIX };
		snprintf(sl.sun_path, sizeof sl.sun_path, "%s/bench-l.sock", argv[2]);
		unlink(sl.sun_path);
		int l = socket(AF_UNIX, SOCK_STREAM, 0), c = socket(AF_UNIX, SOCK_STREAM, 0);
		if (bind(l, (struct sockaddr *)&sl, sizeof sl) < 0 || listen(l, 1) < 0 ||
		    connect(c, (struct sockaddr *)&sl, sizeof sl) < 0)
			return 1;
		int d = accept(l, NULL, NULL);
		t0 = bench_now_ns();
		for (long i = 0; i < n; i++)
			if (write(c, &m, 1) != 1 || recvfrom(d, &m, 1, 0, (struct sockaddr *)&from, (fl = sizeof from, &fl)) != 1)
				return 1;
		bench_report("stream_write_recvfrom_addr", t0, bench_now_ns(), n);
		t0 = bench_now_ns();
		for (long i = 0; i < n; i++)
			if (write(c, &m, 1) != 1 || (rh.msg_namelen = sizeof from, recvmsg(d, &rh, 0)) != 1)
				return 1;
		bench_report("stream_write_recvmsg_name", t0, bench_now_ns(), n);
		unlink(sl.sun_path);
		unlink(sa.sun_path);
		unlink(sb.sun_path);
		return 0;
	}
	int port = atoi(argv[2]);
	if (!strcmp(argv[1], "udp") || !strcmp(argv[1], "udpconn")) {
		int n = argc > 3 ? atoi(argv[3]) : 2000, conn = !strcmp(argv[1], "udpconn");
		struct sockaddr_in a = lo(port);
		int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		struct timeval tv = { 5, 0 };
		setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
		if (conn && connect(s, (struct sockaddr *)&a, sizeof a) < 0) {
			perror("udpconn: connect");
			return 1;
		}
		memset(buf, 'u', 64);
		double t0 = bench_now_ns();
		for (int i = 0; i < n; i++) {
			ssize_t w = conn ? send(s, buf, 64, 0) : sendto(s, buf, 64, 0, (struct sockaddr *)&a, sizeof a);
			if (w != 64 || recv(s, buf, sizeof buf, 0) != 64) {
				perror(argv[1]);
				return 1;
			}
		}
		bench_report(conn ? "udp_connected_send_recv" : "udp_sendto_recv", t0, bench_now_ns(), n);
		return 0;
	}
	if (!strcmp(argv[1], "connect")) {
		long n = bench_iters(argc - 2, argv + 2, 2000);
		/* NET_LOOP_SPLIT=1: also the mean time of each part (socket,
		 * connect, echo, close): where a runtime's cost lies */
		int split = getenv("NET_LOOP_SPLIT") != NULL;
		double part[4] = { 0 };
		double t0 = bench_now_ns();
		for (long i = 0; i < n; i++) {
			double a = split ? bench_now_ns() : 0;
			struct sockaddr_in sa = lo(port);
			int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
			double b = split ? bench_now_ns() : 0;
			if (s < 0 || connect(s, (struct sockaddr *)&sa, sizeof sa) < 0) {
				perror("connect");
				return 1;
			}
			double c = split ? bench_now_ns() : 0;
			char m = 'e';
			/* send/recv, not write/read: runsc's hostinet (2022-12)
			 * answers a read of a blocking socket with nothing
			 * queued yet EAGAIN */
			if (send(s, &m, 1, 0) != 1 || recv(s, &m, 1, 0) != 1)
				return 1;
			double d = split ? bench_now_ns() : 0;
			close(s);
			if (split) {
				double e = bench_now_ns();
				part[0] += b - a, part[1] += c - b, part[2] += d - c, part[3] += e - d;
			}
		}
		bench_report("connect_echo_close", t0, bench_now_ns(), n);
		if (split)
			printf("  socket %.1f connect %.1f echo %.1f close %.1f\n", part[0] / (double)n,
			       part[1] / (double)n, part[2] / (double)n, part[3] / (double)n);
		return 0;
	}
	if (!strcmp(argv[1], "stream")) {
		long mib = bench_iters(argc - 2, argv + 2, 1024);
		int s = dial(port);
		long long want = (long long)mib << 20, got = 0;
		double t0 = bench_now_ns();
		if (send(s, "S", 1, 0) != 1)
			return 1;
		while (got < want) {
			ssize_t r = recv(s, buf, sizeof buf, 0);
			if (r <= 0)
				return 1;
			got += r;
		}
		double t1 = bench_now_ns();
		printf("stream %lld MiB in %.3f s: %.0f MiB/s\n", (long long)mib, (t1 - t0) / 1e9,
		       mib / ((t1 - t0) / 1e9));
		return 0;
	}
	return 2;
}
