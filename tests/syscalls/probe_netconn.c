/* probe_netconn: inet sockets through moat's emulated connect (the fd is
 * replaced by moat-netd's socket). Run by tests/integration/isolation_net.sh,
 * natively first and then under `moat run --net allow=ADDR:PORT,ADDR:CLOSED`:
 * the two outputs must be equal.
 *   probe_netconn ADDR PORT CLOSEDPORT
 * PORT serves an echo (one line back); CLOSEDPORT has no listener. */
#include "t.h"
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/socket.h>

static struct sockaddr_in dst;

static void to(int port)
{
	dst.sin_port = htons((uint16_t)port);
}

static int getint(int fd, int level, int name)
{
	int v = -1;
	socklen_t l = sizeof(v);
	if (getsockopt(fd, level, name, &v, &l) < 0)
		return -errno;
	return v;
}

static int echo(int fd, const char *what)
{
	char buf[64] = { 0 };
	size_t n = strlen(what);
	if (write(fd, what, n) != (ssize_t)n)
		return -1;
	size_t got = 0;
	while (got < n) {
		ssize_t r = read(fd, buf + got, sizeof(buf) - 1 - got);
		if (r <= 0)
			return -1;
		got += (size_t)r;
	}
	return strcmp(buf, what) == 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: probe_netconn ADDR PORT CLOSEDPORT\n");
		return 2;
	}
	int port = atoi(argv[2]), closed = atoi(argv[3]);
	dst.sin_family = AF_INET;
	if (inet_pton(AF_INET, argv[1], &dst.sin_addr) != 1)
		return 2;

	/* blocking connect; options set before it survive the replacement */
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int one = 1, rcv = 65536, idle = 77;
	CHECK(setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) == 0 &&
		      setsockopt(s, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one)) == 0 &&
		      setsockopt(s, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle)) == 0 &&
		      setsockopt(s, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof(rcv)) == 0,
	      "setsockopt_before_connect", "%s", strerror(errno));
	int rcv_before = getint(s, SOL_SOCKET, SO_RCVBUF);
	struct timeval tmo = { 7, 250000 }, tgot;
	struct linger lg = { 1, 3 }, lgot;
	int tos = 0x10;
	CHECK(setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tmo, sizeof tmo) == 0 &&
		      setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tmo, sizeof tmo) == 0 &&
		      setsockopt(s, SOL_SOCKET, SO_LINGER, &lg, sizeof lg) == 0 &&
		      setsockopt(s, IPPROTO_IP, IP_TOS, &tos, sizeof tos) == 0,
	      "setsockopt_struct_before_connect", "%s", strerror(errno));
	struct timeval tbefore[2]; /* as the kernel keeps them (rounded to its tick) */
	for (int k = 0; k < 2; k++) {
		socklen_t gl = sizeof tbefore[k];
		getsockopt(s, SOL_SOCKET, k ? SO_SNDTIMEO : SO_RCVTIMEO, &tbefore[k], &gl);
	}
	to(port);
	CHECK(connect(s, (struct sockaddr *)&dst, sizeof(dst)) == 0, "connect_blocking", "%s", strerror(errno));
	CHECK(getint(s, IPPROTO_TCP, TCP_NODELAY) == 1, "nodelay_kept", "%d", getint(s, IPPROTO_TCP, TCP_NODELAY));
	CHECK(getint(s, SOL_SOCKET, SO_KEEPALIVE) == 1, "keepalive_kept", "%d", getint(s, SOL_SOCKET, SO_KEEPALIVE));
	CHECK(getint(s, IPPROTO_TCP, TCP_KEEPIDLE) == 77, "keepidle_kept", "%d", getint(s, IPPROTO_TCP, TCP_KEEPIDLE));
	CHECK(getint(s, SOL_SOCKET, SO_RCVBUF) == rcv_before, "rcvbuf_kept", "%d vs %d",
	      getint(s, SOL_SOCKET, SO_RCVBUF), rcv_before);
	CHECK(fcntl(s, F_GETFD) == FD_CLOEXEC, "cloexec_kept", "%d", fcntl(s, F_GETFD));
	for (int k = 0; k < 2; k++) {
		socklen_t gl = sizeof tgot;
		memset(&tgot, 0, sizeof tgot);
		getsockopt(s, SOL_SOCKET, k ? SO_SNDTIMEO : SO_RCVTIMEO, &tgot, &gl);
		CHECK(tgot.tv_sec == tbefore[k].tv_sec && tgot.tv_usec == tbefore[k].tv_usec && tgot.tv_sec == 7,
		      k ? "sndtimeo_kept" : "rcvtimeo_kept", "%ld.%06ld", (long)tgot.tv_sec, (long)tgot.tv_usec);
	}
	socklen_t lgl = sizeof lgot;
	memset(&lgot, 0, sizeof lgot);
	getsockopt(s, SOL_SOCKET, SO_LINGER, &lgot, &lgl);
	CHECK(lgot.l_onoff == 1 && lgot.l_linger == 3, "linger_kept", "%d %d", lgot.l_onoff, lgot.l_linger);
	CHECK(getint(s, IPPROTO_IP, IP_TOS) == 0x10, "tos_kept", "%d", getint(s, IPPROTO_IP, IP_TOS));
	CHECK(getint(s, SOL_SOCKET, SO_TYPE) == SOCK_STREAM && getint(s, SOL_SOCKET, SO_DOMAIN) == AF_INET,
	      "type_domain", "%d %d", getint(s, SOL_SOCKET, SO_TYPE), getint(s, SOL_SOCKET, SO_DOMAIN));
	struct sockaddr_in peer;
	socklen_t pl = sizeof(peer);
	CHECK(getpeername(s, (struct sockaddr *)&peer, &pl) == 0 && pl == sizeof(peer) &&
		      peer.sin_addr.s_addr == dst.sin_addr.s_addr && peer.sin_port == dst.sin_port,
	      "getpeername", "%s", strerror(errno));
	struct sockaddr_in me;
	socklen_t ml = sizeof(me);
	CHECK(getsockname(s, (struct sockaddr *)&me, &ml) == 0 && me.sin_family == AF_INET && me.sin_port != 0,
	      "getsockname", "%s", strerror(errno));
	CHECK(echo(s, "blocking\n") == 0, "echo_blocking", "%s", strerror(errno));
	CHECK(connect(s, (struct sockaddr *)&dst, sizeof(dst)) == -1 && errno == EISCONN, "connect_again_eisconn",
	      "%s", strerror(errno));
	CHECK(shutdown(s, SHUT_WR) == 0, "shutdown_wr", "%s", strerror(errno));
	char c;
	CHECK(read(s, &c, 1) == 0, "eof_after_shutdown", "not EOF");
	close(s);

	/* non-blocking connect, completion seen by select */
	s = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	int r = connect(s, (struct sockaddr *)&dst, sizeof(dst));
	CHECK(r == 0 || (r == -1 && errno == EINPROGRESS), "connect_nonblock_einprogress", "%s", strerror(errno));
	fd_set w;
	FD_ZERO(&w);
	FD_SET(s, &w);
	struct timeval tv = { 10, 0 };
	CHECK(select(s + 1, NULL, &w, NULL, &tv) == 1 && FD_ISSET(s, &w) && getint(s, SOL_SOCKET, SO_ERROR) == 0,
	      "select_writable", "%s", strerror(errno));
	CHECK(fcntl(s, F_GETFL) & O_NONBLOCK, "nonblock_kept", "flags %x", fcntl(s, F_GETFL));
	CHECK(fcntl(s, F_GETFD) == 0, "no_cloexec_kept", "%d", fcntl(s, F_GETFD));
	int fl = fcntl(s, F_GETFL);
	fcntl(s, F_SETFL, fl & ~O_NONBLOCK);
	CHECK(echo(s, "select\n") == 0, "echo_select", "%s", strerror(errno));
	close(s);

	/* non-blocking connect, completion seen by epoll */
	s = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	int ep = epoll_create1(EPOLL_CLOEXEC);
	r = connect(s, (struct sockaddr *)&dst, sizeof(dst));
	CHECK(r == 0 || (r == -1 && errno == EINPROGRESS), "connect_epoll_einprogress", "%s", strerror(errno));
	/* registered after the connect: the fd epoll sees is the replaced one */
	struct epoll_event ev = { .events = EPOLLOUT, .data.fd = s }, got;
	CHECK(epoll_ctl(ep, EPOLL_CTL_ADD, s, &ev) == 0 && epoll_wait(ep, &got, 1, 10000) == 1 &&
		      (got.events & EPOLLOUT) && getint(s, SOL_SOCKET, SO_ERROR) == 0,
	      "epoll_writable", "%s", strerror(errno));
	fcntl(s, F_SETFL, fcntl(s, F_GETFL) & ~O_NONBLOCK);
	CHECK(echo(s, "epoll\n") == 0, "echo_epoll", "%s", strerror(errno));
	close(s);
	close(ep);

	/* a port with no listener on an allowed address: ECONNREFUSED, blocking and not */
	to(closed);
	s = socket(AF_INET, SOCK_STREAM, 0);
	CHECK(connect(s, (struct sockaddr *)&dst, sizeof(dst)) == -1 && errno == ECONNREFUSED,
	      "connect_refused", "%s", strerror(errno));
	close(s);
	s = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	r = connect(s, (struct sockaddr *)&dst, sizeof(dst));
	struct pollfd pf = { s, POLLOUT, 0 };
	CHECK((r == -1 && (errno == EINPROGRESS || errno == ECONNREFUSED)) &&
		      (errno == ECONNREFUSED ||
		       (poll(&pf, 1, 10000) == 1 && getint(s, SOL_SOCKET, SO_ERROR) == ECONNREFUSED)),
	      "connect_nonblock_refused", "%s", strerror(errno));
	close(s);
	return t_done();
}
