/* probe_udp: UDP egress through moat-netd (tests/integration/isolation_net.sh).
 *   probe_udp echo ADDR PORT
 *     sendto, sendmsg (msg_name) and sendmmsg, each on a new socket, to an
 *     echo server: the reply must come back byte-exact from
 *     ADDR:PORT. One line per case, "ok CASE" or "FAIL CASE: why".
 *   probe_udp reaim ADDR PORT SINK SPORT
 *     one allowed sendto, then on the same socket every way of aiming it at
 *     SINK:SPORT (sendto, sendmsg, sendmmsg, AF_UNSPEC-family sendto,
 *     connect, connect(AF_UNSPEC)+sendto) and a race: another thread flips
 *     msg_name between ADDR:PORT and SINK:SPORT while sendmsg/sendmmsg/
 *     sendto run. Prints "CASE ERRNO" (or "CASE SENT") lines; whether
 *     anything reached the sink is checked on the sink's side.
 *   probe_udp connected ADDR PORT SINK SPORT
 *     a connected UDP socket (moat forwards it through moat-netd's relay):
 *     send/recvfrom round trips of 1 to 60000 bytes (the source shown is the
 *     destination), getpeername, a dual-stack
 *     (IPv6, v4-mapped) socket, reconnect; sendto and connect to
 *     SINK:SPORT, connect to ADDR:PORT+1 (ENETUNREACH if no rule names it);
 *     a datagram to the relay's end (the source recvfrom shows) from
 *     another socket, "STRAY", must reach nobody (checked by the caller).
 *   probe_udp inbound ADDR PORT
 *     sends "inject-me" to the echo server, which echoes it and also sends
 *     "INJECT" from another port and "INJECT-ADDR" from another address of
 *     its host (tests/integration/isolation_net.sh uecho.py); prints each
 *     datagram received in 1.5 s ("got WHAT"), then tries to remove or
 *     replace the socket's filter (detach, attach an accept-all program,
 *     lock): "CASE ERRNO" lines.
 *   probe_udp swaprace ADDR PORT SINK SPORT
 *     the guest's own UDP socket sends to 127.0.0.1:SPORT (its own loopback,
 *     native) while another thread dup2()s a moat-netd UDP socket over it.
 *   probe_udp refused ADDR PORT
 *     ADDR (IPv4 or IPv6) PORT is a closed UDP port: a connected socket
 *     sends one datagram and the ICMP port unreachable that answers it must
 *     show as on Linux (under moat: moat-netd passes it on from the relay's
 *     host-side socket). "CASE ERRNO" lines: a blocked recv wakes with
 *     ECONNREFUSED; a later send fails with it; poll sees POLLERR and
 *     SO_ERROR holds it (and then no more); a dual-stack socket to the
 *     v4-mapped address (IPv4 ADDR only). "local ADDR" lines: getsockname's
 *     address (natively the one the route to ADDR picks).
 *   probe_udp loss ADDR PORT N MS [fresh|keep]
 *     N x (sendto ADDR:PORT a numbered 64-byte datagram on one unconnected
 *     socket — "fresh": a new socket each time, so each is a first send,
 *     which under moat makes moat-netd's socket for the guest; "keep": the
 *     same, every socket kept open until the end —, recv its echo with an
 *     MS ms timeout): "lost K of N" (a
 *     timeout, or an echo of another number, counts one; on a timeout the
 *     next round drains a late echo first, so a slow reply is not counted
 *     twice). Natively nothing is lost on a loopback echo server.
 *   probe_udp burst ADDR PORT N M
 *     one unconnected socket sends N numbered datagrams to a burst server
 *     (isolation_net.sh burst.py), which answers each with M numbered
 *     copies; the next datagram goes out as soon as the first copy of the
 *     last one is in, so copies are still arriving while it is sent (under
 *     moat: while moat-netd sends it from the twin of the guest's socket;
 *     a twin closed then took a copy now and then). Then reads until 1 s of
 *     silence: "lost K of N*M" (copies never received).
 */
#include "t.h"
#include <arpa/inet.h>
#include <linux/filter.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>

static struct sockaddr_in dst, sink;
static volatile int stop_flip;

static const char *ename(int e)
{
	static char b[32];
	switch (e) {
	case 0: return "SENT";
	case ENETUNREACH: return "ENETUNREACH";
	case EPERM: return "EPERM";
	case EINVAL: return "EINVAL";
	case EAFNOSUPPORT: return "EAFNOSUPPORT";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case ECONNREFUSED: return "ECONNREFUSED";
	case EDESTADDRREQ: return "EDESTADDRREQ";
	case EFAULT: return "EFAULT";
	case EISCONN: return "EISCONN";
	case EPIPE: return "EPIPE";
	case ENOENT: return "ENOENT";
	case EAGAIN: return "EAGAIN";
	default: snprintf(b, sizeof b, "errno%d", e); return b;
	}
}

static void fill(unsigned char *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++) {
		seed = seed * 1103515245 + 12345;
		p[i] = (unsigned char)(seed >> 16);
	}
}

static int udp(void)
{
	int s = socket(AF_INET, SOCK_DGRAM, 0);
	struct timeval tv = { 5, 0 };
	setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	return s;
}

/* the echo of what was sent, byte-exact, from dst */
static int check_reply(int s, const unsigned char *want, size_t n, const char *name)
{
	static unsigned char got[65536];
	struct sockaddr_in from;
	socklen_t fl = sizeof from;
	ssize_t r = recvfrom(s, got, sizeof got, 0, (struct sockaddr *)&from, &fl);
	if (r < 0) {
		printf("FAIL %s: recvfrom: %s\n", name, strerror(errno));
		return 1;
	}
	if ((size_t)r != n || memcmp(got, want, n)) {
		printf("FAIL %s: reply differs (%zd bytes, wanted %zu)\n", name, r, n);
		return 1;
	}
	if (from.sin_addr.s_addr != dst.sin_addr.s_addr || from.sin_port != dst.sin_port) {
		printf("FAIL %s: reply from another address\n", name);
		return 1;
	}
	printf("ok %s\n", name);
	return 0;
}

static int echo(void)
{
	static unsigned char buf[8000];
	int bad = 0;
	size_t sizes[] = { 1, 1200, sizeof buf };
	for (int how = 0; how < 3; how++) {
		for (size_t k = 0; k < 3; k++) {
			size_t n = sizes[k];
			fill(buf, n, (unsigned)(how * 10 + k + 1));
			int s = udp();
			ssize_t w = -1;
			char name[64];
			static const char *const hows[] = { "sendto", "sendmsg", "sendmmsg" };
			snprintf(name, sizeof name, "echo_%s_%zu", hows[how], n);
			struct iovec iov[2] = { { buf, n / 2 }, { buf + n / 2, n - n / 2 } };
			struct msghdr m = { .msg_name = &dst, .msg_namelen = sizeof dst, .msg_iov = iov, .msg_iovlen = 2 };
			if (how == 0) {
				w = sendto(s, buf, n, 0, (struct sockaddr *)&dst, sizeof dst);
			} else if (how == 1) {
				w = sendmsg(s, &m, 0);
			} else {
				struct mmsghdr mm = { .msg_hdr = m };
				w = sendmmsg(s, &mm, 1, 0) == 1 ? (ssize_t)mm.msg_len : -1;
			}
			if (w != (ssize_t)n) {
				printf("FAIL %s: send: %zd %s\n", name, w, strerror(errno));
				bad = 1;
			} else {
				bad |= check_reply(s, buf, n, name);
			}
			close(s);
		}
	}
	return bad;
}

static void *flipper(void *arg)
{
	struct sockaddr_in *p = arg;
	while (!stop_flip) {
		*(volatile struct sockaddr_in *)p = sink;
		*(volatile struct sockaddr_in *)p = dst;
	}
	return NULL;
}

static void say(const char *c, ssize_t r)
{
	printf("%s %s\n", c, ename(r < 0 ? errno : 0));
}

static int reaim(void)
{
	unsigned char b[16] = "allowed";
	int s = udp();
	if (sendto(s, b, 7, 0, (struct sockaddr *)&dst, sizeof dst) != 7 || check_reply(s, b, 7, "first_allowed"))
		return 1;
	say("sendto_sink", sendto(s, "LEAK-sendto", 11, 0, (struct sockaddr *)&sink, sizeof sink));
	struct iovec iov = { "LEAK-sendmsg", 12 };
	struct msghdr m = { .msg_name = &sink, .msg_namelen = sizeof sink, .msg_iov = &iov, .msg_iovlen = 1 };
	say("sendmsg_sink", sendmsg(s, &m, 0));
	struct iovec iov2 = { "LEAK-sendmmsg", 13 };
	struct mmsghdr mm[2];
	memset(mm, 0, sizeof mm);
	mm[0].msg_hdr = (struct msghdr){ .msg_name = &sink, .msg_namelen = sizeof sink, .msg_iov = &iov2, .msg_iovlen = 1 };
	mm[1].msg_hdr = mm[0].msg_hdr;
	say("sendmmsg_sink", sendmmsg(s, mm, 2, 0) < 0 ? -1 : 0);
	/* the first message allowed, the second to the sink */
	struct iovec iov3 = { "allowed", 7 };
	mm[0].msg_hdr = (struct msghdr){ .msg_name = &dst, .msg_namelen = sizeof dst, .msg_iov = &iov3, .msg_iovlen = 1 };
	int nm = sendmmsg(s, mm, 2, 0);
	printf("sendmmsg_mixed %d\n", nm);
	/* UDP reads sin_addr of an AF_UNSPEC address as AF_INET */
	struct sockaddr_in un = sink;
	un.sin_family = AF_UNSPEC;
	say("sendto_unspec_family", sendto(s, "LEAK-unspec", 11, 0, (struct sockaddr *)&un, sizeof un));
	say("connect_sink", connect(s, (struct sockaddr *)&sink, sizeof sink));
	say("send_no_address", send(s, "LEAK-send", 9, 0));
	struct sockaddr uns = { .sa_family = AF_UNSPEC };
	say("disconnect", connect(s, &uns, sizeof uns));
	say("sendto_sink_after_disconnect", sendto(s, "LEAK-disc", 9, 0, (struct sockaddr *)&sink, sizeof sink));
	say("bind_after_disconnect", bind(s, (struct sockaddr *)&sink, sizeof sink) < 0 ? -1 : 0);
	/* races: msg_name (and sendto's address) flipped by another thread */
	static struct sockaddr_in shared;
	shared = dst;
	stop_flip = 0;
	pthread_t th;
	pthread_create(&th, NULL, flipper, &shared);
	struct iovec iov4 = { "RACE", 4 };
	struct msghdr rm = { .msg_name = &shared, .msg_namelen = sizeof shared, .msg_iov = &iov4, .msg_iovlen = 1 };
	struct mmsghdr rmm = { .msg_hdr = rm };
	int sent = 0;
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; i < 3000; i++) {
		sent += sendmsg(s, &rm, 0) > 0;
		sent += sendmmsg(s, &rmm, 1, 0) == 1;
		sent += sendto(s, "RACE", 4, 0, (struct sockaddr *)&shared, sizeof shared) > 0;
		clock_gettime(CLOCK_MONOTONIC, &t1);
		if (t1.tv_sec - t0.tv_sec > 20)
			break;
	}
	stop_flip = 1;
	pthread_join(th, NULL);
	printf("race done\n");
	(void)sent;
	close(s);
	return 0;
}

/* n bytes (seed) over the connected s and their echo back; *from the
 * source of the reply */
static int conn_round(int s, size_t n, unsigned seed, const char *name, struct sockaddr_storage *from)
{
	static unsigned char buf[60000], got[65536];
	fill(buf, n, seed);
	ssize_t w = seed & 1 ? write(s, buf, n) : send(s, buf, n, 0);
	if (w != (ssize_t)n) {
		printf("FAIL %s: send: %zd %s\n", name, w, strerror(errno));
		return 1;
	}
	socklen_t fl = sizeof *from;
	ssize_t r;
	if (seed == 7) { /* recvmsg (under moat its exit shows the destination too) */
		struct iovec iov = { got, sizeof got };
		struct msghdr m = { .msg_name = from, .msg_namelen = fl, .msg_iov = &iov, .msg_iovlen = 1 };
		r = recvmsg(s, &m, 0);
	} else {
		r = recvfrom(s, got, sizeof got, 0, (struct sockaddr *)from, &fl);
	}
	if (r != (ssize_t)n || memcmp(got, buf, n)) {
		printf("FAIL %s: reply %zd bytes (wanted %zu)%s\n", name, r, n, r < 0 ? strerror(errno) : "");
		return 1;
	}
	/* the source: the destination (moat: the relay's end, rewritten) */
	const struct sockaddr_in *f4 = (const struct sockaddr_in *)from;
	const struct sockaddr_in6 *f6 = (const struct sockaddr_in6 *)from;
	int same = from->ss_family == AF_INET ? f4->sin_addr.s_addr == dst.sin_addr.s_addr && f4->sin_port == dst.sin_port :
		   from->ss_family == AF_INET6 ? !memcmp(&f6->sin6_addr.s6_addr[12], &dst.sin_addr, 4) &&
						       f6->sin6_addr.s6_addr[10] == 0xff && f6->sin6_port == dst.sin_port :
						       0;
	if (!same) {
		printf("FAIL %s: reply's source is not the destination\n", name);
		return 1;
	}
	printf("ok %s\n", name);
	return 0;
}

static int connected(void)
{
	int bad = 0;
	struct sockaddr_storage from;
	int s = udp();
	if (connect(s, (struct sockaddr *)&dst, sizeof dst) < 0) {
		printf("FAIL conn_connect: %s\n", ename(errno));
		return 1;
	}
	size_t sizes[] = { 1, 1200, 8000, 60000 };
	for (unsigned k = 0; k < 4; k++) {
		char name[32];
		snprintf(name, sizeof name, "conn_echo_%zu", sizes[k]);
		bad |= conn_round(s, sizes[k], k + 1, name, &from);
	}
	struct sockaddr_in peer;
	socklen_t pl = sizeof peer;
	if (getpeername(s, (struct sockaddr *)&peer, &pl) < 0 || pl != sizeof peer ||
	    peer.sin_addr.s_addr != dst.sin_addr.s_addr || peer.sin_port != dst.sin_port) {
		char a[64] = "?";
		inet_ntop(AF_INET, &peer.sin_addr, a, sizeof a);
		printf("FAIL conn_getpeername: %s:%d\n", a, ntohs(peer.sin_port));
		bad = 1;
	} else {
		printf("ok conn_getpeername\n");
	}
	/* reconnect to the same destination: still one path */
	if (connect(s, (struct sockaddr *)&dst, sizeof dst) < 0)
		printf("FAIL conn_reconnect: %s\n", ename(errno)), bad = 1;
	else
		bad |= conn_round(s, 100, 7, "conn_reconnect", &from);
	/* a datagram from another socket to where the replies really come from:
	 * under moat the relay's end, somewhere on 127.0.0.53 or [::1] (no call
	 * shows it), so to every port of both */
	int o = udp(), o6 = socket(AF_INET6, SOCK_DGRAM, 0);
	struct sockaddr_in r4 = { .sin_family = AF_INET };
	struct sockaddr_in6 r6 = { .sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT };
	inet_pton(AF_INET, "127.0.0.53", &r4.sin_addr);
	static struct sockaddr_in a4[1024];
	static struct sockaddr_in6 a6[1024];
	static struct mmsghdr m4[1024], m6[1024];
	struct iovec siov = { "STRAY", 5 };
	for (unsigned p = 1; p < 65536; p += 1024) {
		unsigned k = 0;
		for (; k < 1024 && p + k < 65536; k++) {
			a4[k] = r4;
			a6[k] = r6;
			a4[k].sin_port = a6[k].sin6_port = htons((uint16_t)(p + k));
			m4[k].msg_hdr = (struct msghdr){ .msg_name = &a4[k], .msg_namelen = sizeof a4[k],
							 .msg_iov = &siov, .msg_iovlen = 1 };
			m6[k].msg_hdr = (struct msghdr){ .msg_name = &a6[k], .msg_namelen = sizeof a6[k],
							 .msg_iov = &siov, .msg_iovlen = 1 };
		}
		/* sendmmsg stops at the first port nobody listens on (ECONNREFUSED
		 * from the ICMP of the one before): go on past it */
		for (unsigned d = 0; d < k;) {
			int r = sendmmsg(o, m4 + d, k - d, MSG_DONTWAIT);
			d += r > 0 ? (unsigned)r : 1;
		}
		for (unsigned d = 0; o6 >= 0 && d < k;) {
			int r = sendmmsg(o6, m6 + d, k - d, MSG_DONTWAIT);
			d += r > 0 ? (unsigned)r : 1;
		}
	}
	close(o);
	if (o6 >= 0)
		close(o6);
	/* sendto another address on the connected socket, and connect to it */
	say("conn_sendto_sink", sendto(s, "LEAK-csendto", 12, 0, (struct sockaddr *)&sink, sizeof sink));
	say("conn_connect_sink", connect(s, (struct sockaddr *)&sink, sizeof sink));
	say("conn_send_after", send(s, "after", 5, 0));
	/* the destination's next port (no rule names it) */
	struct sockaddr_in next = dst;
	next.sin_port = htons((uint16_t)(ntohs(dst.sin_port) + 1));
	say("conn_connect_next_port", connect(s, (struct sockaddr *)&next, sizeof next));
	close(s);
	/* dual stack: an IPv6 socket to the v4-mapped destination */
	int s6 = socket(AF_INET6, SOCK_DGRAM, 0);
	struct timeval tv = { 5, 0 };
	setsockopt(s6, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	struct sockaddr_in6 m = { .sin6_family = AF_INET6, .sin6_port = dst.sin_port };
	m.sin6_addr.s6_addr[10] = m.sin6_addr.s6_addr[11] = 0xff;
	memcpy(&m.sin6_addr.s6_addr[12], &dst.sin_addr, 4);
	if (connect(s6, (struct sockaddr *)&m, sizeof m) < 0) {
		printf("FAIL conn_v4mapped: connect: %s\n", ename(errno));
		bad = 1;
	} else {
		bad |= conn_round(s6, 3000, 9, "conn_v4mapped", &from);
		struct sockaddr_in6 p6;
		socklen_t l6 = sizeof p6;
		if (getpeername(s6, (struct sockaddr *)&p6, &l6) < 0 || memcmp(&p6.sin6_addr, &m.sin6_addr, 16) ||
		    p6.sin6_port != m.sin6_port)
			printf("FAIL conn_v4mapped_getpeername\n"), bad = 1;
		else
			printf("ok conn_v4mapped_getpeername\n");
	}
	close(s6);
	return bad;
}

static int inbound(void)
{
	int s = udp();
	struct timeval tv = { 1, 500000 };
	setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	if (sendto(s, "inject-me", 9, 0, (struct sockaddr *)&dst, sizeof dst) != 9) {
		printf("FAIL inbound_send: %s\n", ename(errno));
		return 1;
	}
	char b[64];
	ssize_t n;
	while ((n = recv(s, b, sizeof b - 1, 0)) >= 0) {
		b[n] = 0;
		printf("got %s\n", b);
	}
	int zero = 0, one = 1;
	struct sock_filter all = BPF_STMT(BPF_RET | BPF_K, 0x40000);
	struct sock_fprog fp = { 1, &all };
	say("detach_filter", setsockopt(s, SOL_SOCKET, SO_DETACH_FILTER, &zero, sizeof zero));
	say("attach_accept_all", setsockopt(s, SOL_SOCKET, SO_ATTACH_FILTER, &fp, sizeof fp));
	say("lock_filter", setsockopt(s, SOL_SOCKET, SO_LOCK_FILTER, &one, sizeof one));
	close(s);
	return 0;
}

static void *swapper(void *arg)
{
	int *sw = arg;
	while (!stop_flip) {
		dup2(sw[1], sw[0]);
		dup2(sw[2], sw[0]);
	}
	return NULL;
}

static int swaprace(void)
{
	/* a moat-netd socket (after one allowed send), and the guest's own */
	int netd = udp();
	if (sendto(netd, "allowed", 7, 0, (struct sockaddr *)&dst, sizeof dst) != 7)
		return 1;
	int own = udp();
	int fd = dup(own);
	struct sockaddr_in lo = sink;
	lo.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	int pid = fork();
	if (pid == 0) { /* not sharing the fd table: flips nothing */
		_exit(0);
	}
	waitpid(pid, NULL, 0);
	struct swap {
		int fd, a, b;
	} sw = { fd, netd, own };
	pthread_t th;
	stop_flip = 0;
	pthread_create(&th, NULL, swapper, &sw);
	for (int i = 0; i < 20000; i++)
		sendto(fd, "SWAP", 4, MSG_DONTWAIT, (struct sockaddr *)&lo, sizeof lo);
	stop_flip = 1;
	pthread_join(th, NULL);
	printf("swaprace done\n");
	return 0;
}

/* refused: a connected UDP socket to a closed port */
static struct sockaddr_storage rdst;
static socklen_t rdlen;

static int rsock(int family)
{
	int s = socket(family, SOCK_DGRAM, 0);
	struct timeval tv = { 5, 0 };
	setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	return s;
}

/* the local address: natively the one the route picks */
static void print_local(int s, const char *name)
{
	struct sockaddr_storage me;
	socklen_t ml = sizeof me;
	memset(&me, 0, sizeof me);
	getsockname(s, (struct sockaddr *)&me, &ml);
	char a[INET6_ADDRSTRLEN] = "?";
	if (me.ss_family == AF_INET && ml == sizeof(struct sockaddr_in))
		inet_ntop(AF_INET, &((struct sockaddr_in *)&me)->sin_addr, a, sizeof a);
	else if (me.ss_family == AF_INET6 && ml == sizeof(struct sockaddr_in6))
		inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&me)->sin6_addr, a, sizeof a);
	printf("%s %s\n", name, a);
}

/* the connected socket's error after one datagram, waited for with poll */
static void refused_poll(int s, const char *name)
{
	struct pollfd pf = { s, 0, 0 };
	int n = poll(&pf, 1, 5000);
	int err = 0;
	socklen_t el = sizeof err;
	getsockopt(s, SOL_SOCKET, SO_ERROR, &err, &el);
	printf("%s %s%s\n", name, n == 1 && (pf.revents & POLLERR) ? "POLLERR " : "nothing ", err ? ename(err) : "0");
	err = -1;
	getsockopt(s, SOL_SOCKET, SO_ERROR, &err, &el);
	printf("%s_again %s\n", name, err ? ename(err) : "0");
}

static int refused(void)
{
	char b[64];
	int s = rsock(rdst.ss_family);
	if (connect(s, (struct sockaddr *)&rdst, rdlen) < 0) {
		printf("connect %s\n", ename(errno));
		return 1;
	}
	print_local(s, "local");
	say("refused_send_first", send(s, "ping", 4, 0));
	say("refused_recv", recv(s, b, sizeof b, 0));
	say("refused_recv_after", recv(s, b, sizeof b, MSG_DONTWAIT));
	/* a send after the error came: it reports it */
	say("refused_send", send(s, "ping", 4, 0));
	struct timespec ts = { 0, 300 * 1000 * 1000 };
	nanosleep(&ts, NULL);
	say("refused_send_later", send(s, "ping", 4, 0));
	close(s);
	s = rsock(rdst.ss_family);
	connect(s, (struct sockaddr *)&rdst, rdlen);
	send(s, "ping", 4, 0);
	refused_poll(s, "refused_poll");
	close(s);
	if (rdst.ss_family == AF_INET) {
		/* dual stack: an IPv6 socket to the v4-mapped address */
		const struct sockaddr_in *d4 = (const struct sockaddr_in *)&rdst;
		struct sockaddr_in6 m = { .sin6_family = AF_INET6, .sin6_port = d4->sin_port };
		m.sin6_addr.s6_addr[10] = m.sin6_addr.s6_addr[11] = 0xff;
		memcpy(&m.sin6_addr.s6_addr[12], &d4->sin_addr, 4);
		s = rsock(AF_INET6);
		if (connect(s, (struct sockaddr *)&m, sizeof m) < 0) {
			printf("v4mapped_connect %s\n", ename(errno));
		} else {
			print_local(s, "local_v4mapped");
			say("refused_v4mapped_send_first", send(s, "ping", 4, 0));
			say("refused_v4mapped_recv", recv(s, b, sizeof b, 0));
		}
		close(s);
	}
	return 0;
}

static int loss(int n, int ms, int fresh, int keep)
{
	int s = -1, lost = 0, *kept = keep ? calloc((size_t)n, sizeof *kept) : NULL;
	struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };
	char out[64], in[128];
	for (int i = 0; i < n; i++) {
		if (s < 0 || fresh || keep) {
			if (s >= 0 && !keep)
				close(s);
			s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
			if (s < 0 || setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) < 0)
				return 1;
			if (keep)
				kept[i] = s;
		}
		memset(out, 'l', sizeof out);
		memcpy(out, &i, sizeof i);
		if (sendto(s, out, sizeof out, 0, (struct sockaddr *)&dst, sizeof dst) != (ssize_t)sizeof out) {
			printf("sendto %d: %s\n", i, strerror(errno));
			return 1;
		}
		int got = -1;
		for (;;) {
			ssize_t r = recv(s, in, sizeof in, 0);
			if (r < 0)
				break; /* timed out: lost (a late echo is read next round) */
			if (r == (ssize_t)sizeof out)
				memcpy(&got, in, sizeof got);
			if (got == i)
				break;
		}
		lost += got != i;
	}
	printf("lost %d of %d\n", lost, n);
	for (int i = 0; keep && i < n; i++)
		close(kept[i]);
	if (!keep)
		close(s);
	free(kept);
	return 0;
}

static int burst(int n, int m)
{
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0 || n <= 0 || m <= 0 || m > 1000)
		return 1;
	unsigned char *seen = calloc((size_t)n * (size_t)m, 1);
	if (!seen)
		return 1;
	long got = 0;
	char out[64], in[128];
	for (int i = 0; i <= n; i++) {
		if (i < n) {
			memset(out, 'b', sizeof out);
			memcpy(out, &i, sizeof i);
			if (sendto(s, out, sizeof out, 0, (struct sockaddr *)&dst, sizeof dst) != (ssize_t)sizeof out) {
				printf("sendto %d: %s\n", i, strerror(errno));
				return 1;
			}
		}
		/* until a copy of datagram i (then the next goes out while the
		 * rest of i's copies arrive); after the last, 1 s of silence */
		for (;;) {
			struct pollfd pf = { s, POLLIN, 0 };
			if (poll(&pf, 1, i < n ? 300 : 1000) != 1)
				break;
			ssize_t r = recv(s, in, sizeof in, 0);
			int j, k;
			if (r != 8 + 56)
				continue;
			memcpy(&j, in, sizeof j);
			memcpy(&k, in + 4, sizeof k);
			if (j < 0 || j >= n || k < 0 || k >= m || seen[(size_t)j * (size_t)m + (size_t)k]++)
				continue;
			got++;
			if (j == i && i < n)
				break;
		}
	}
	printf("lost %ld of %ld\n", (long)n * m - got, (long)n * m);
	free(seen);
	close(s);
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	if (argc < 4) {
		fprintf(stderr, "usage: probe_udp echo|reaim|connected|inbound|swaprace ADDR PORT [SINK SPORT]\n");
		return 77;
	}
	if (!strcmp(argv[1], "refused")) {
		struct sockaddr_in *r4 = (struct sockaddr_in *)&rdst;
		struct sockaddr_in6 *r6 = (struct sockaddr_in6 *)&rdst;
		if (inet_pton(AF_INET, argv[2], &r4->sin_addr) == 1) {
			r4->sin_family = AF_INET;
			r4->sin_port = htons((uint16_t)atoi(argv[3]));
			rdlen = sizeof *r4;
		} else if (inet_pton(AF_INET6, argv[2], &r6->sin6_addr) == 1) {
			r6->sin6_family = AF_INET6;
			r6->sin6_port = htons((uint16_t)atoi(argv[3]));
			rdlen = sizeof *r6;
		} else {
			return 77;
		}
		return refused();
	}
	dst.sin_family = AF_INET;
	dst.sin_port = htons((uint16_t)atoi(argv[3]));
	inet_pton(AF_INET, argv[2], &dst.sin_addr);
	if (argc >= 6) {
		sink.sin_family = AF_INET;
		sink.sin_port = htons((uint16_t)atoi(argv[5]));
		inet_pton(AF_INET, argv[4], &sink.sin_addr);
	}
	if (!strcmp(argv[1], "echo"))
		return echo();
	if (!strcmp(argv[1], "reaim") && argc >= 6)
		return reaim();
	if (!strcmp(argv[1], "inbound"))
		return inbound();
	if (!strcmp(argv[1], "connected") && argc >= 6)
		return connected();
	if (!strcmp(argv[1], "swaprace") && argc >= 6)
		return swaprace();
	if (!strcmp(argv[1], "burst") && argc >= 6)
		return burst(atoi(argv[4]), atoi(argv[5]));
	if (!strcmp(argv[1], "loss") && argc >= 6)
		return loss(atoi(argv[4]), atoi(argv[5]), argc > 6 && !strcmp(argv[6], "fresh"),
			    argc > 6 && !strcmp(argv[6], "keep"));
	return 77;
}
