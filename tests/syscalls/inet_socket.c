/* inet_socket.c - AF_INET/AF_INET6 sockets on loopback: socket, bind, listen,
 * connect (blocking and non-blocking), accept4, getsockname/getpeername,
 * send/recv, sendto/recvfrom (UDP), sendmsg SCM_RIGHTS (AF_UNIX socketpair),
 * shutdown, setsockopt/getsockopt, socket filters (SO_ATTACH/DETACH/LOCK_FILTER,
 * and option numbers shared with them at other levels). Loopback only: under moat the guest's own
 * network namespace (no rule names host loopback). */
#include "t.h"

#include <arpa/inet.h>
#include <linux/filter.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>

static struct sockaddr_in lo4(uint16_t port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return a;
}


/* Classic BPF on the guest's own UDP socket (moat makes the call on the
 * pinned file): a filter that keeps datagrams from one source port only,
 * detach, lock; IPV6_V6ONLY shares SO_ATTACH_FILTER's number (26). */
static void socket_filters(void)
{
	int r = socket(AF_INET, SOCK_DGRAM, 0), t1 = socket(AF_INET, SOCK_DGRAM, 0), t2 = socket(AF_INET, SOCK_DGRAM, 0);
	struct sockaddr_in a = lo4(0), b1 = lo4(0), b2 = lo4(0);
	socklen_t al = sizeof a;
	bind(r, (struct sockaddr *)&a, sizeof a);
	getsockname(r, (struct sockaddr *)&a, &al);
	bind(t1, (struct sockaddr *)&b1, sizeof b1);
	al = sizeof b1;
	getsockname(t1, (struct sockaddr *)&b1, &al);
	bind(t2, (struct sockaddr *)&b2, sizeof b2);
	struct sock_filter prog[] = {
		BPF_STMT(BPF_LD | BPF_H | BPF_ABS, 0), /* the UDP source port */
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ntohs(b1.sin_port), 0, 1),
		BPF_STMT(BPF_RET | BPF_K, 0x40000),
		BPF_STMT(BPF_RET | BPF_K, 0),
	};
	struct sock_fprog fp = { 4, prog };
	CHECK(setsockopt(r, SOL_SOCKET, SO_ATTACH_FILTER, &fp, sizeof fp) == 0, "filter_attach", "%s", strerror(errno));
	char buf[8];
	sendto(t2, "two", 3, 0, (struct sockaddr *)&a, sizeof a);
	sendto(t1, "one", 3, 0, (struct sockaddr *)&a, sizeof a);
	ssize_t n = recv(r, buf, sizeof buf, MSG_DONTWAIT);
	CHECK(n == 3 && !memcmp(buf, "one", 3), "filter_keeps_one_source", "n=%zd %s", n, strerror(errno));
	CHECK(recv(r, buf, sizeof buf, MSG_DONTWAIT) < 0 && errno == EAGAIN, "filter_dropped_other", "%s", strerror(errno));
	int zero = 0;
	CHECK(setsockopt(r, SOL_SOCKET, SO_DETACH_FILTER, &zero, sizeof zero) == 0, "filter_detach", "%s",
	      strerror(errno));
	CHECK(setsockopt(r, SOL_SOCKET, SO_DETACH_FILTER, &zero, sizeof zero) < 0 && errno == ENOENT,
	      "filter_detach_none", "%s", strerror(errno));
	sendto(t2, "two", 3, 0, (struct sockaddr *)&a, sizeof a);
	n = recv(r, buf, sizeof buf, MSG_DONTWAIT);
	CHECK(n == 3 && !memcmp(buf, "two", 3), "filter_detached_gets_all", "n=%zd", n);
	struct sock_fprog bad = { 0, prog };
	CHECK(setsockopt(r, SOL_SOCKET, SO_ATTACH_FILTER, &bad, sizeof bad) < 0 && errno == EINVAL,
	      "filter_empty_einval", "%s", strerror(errno));
	CHECK(setsockopt(r, SOL_SOCKET, SO_ATTACH_FILTER, &fp, 2) < 0 && errno == EINVAL, "filter_short_einval",
	      "%s", strerror(errno));
	struct sock_fprog wild = { 4, (struct sock_filter *)8 };
	CHECK(setsockopt(r, SOL_SOCKET, SO_ATTACH_FILTER, &wild, sizeof wild) < 0 && errno == EFAULT,
	      "filter_efault", "%s", strerror(errno));
	int one = 1;
	CHECK(setsockopt(r, SOL_SOCKET, SO_ATTACH_FILTER, &fp, sizeof fp) == 0 &&
	      setsockopt(r, SOL_SOCKET, SO_LOCK_FILTER, &one, sizeof one) == 0, "filter_lock", "%s", strerror(errno));
	CHECK(setsockopt(r, SOL_SOCKET, SO_DETACH_FILTER, &zero, sizeof zero) < 0 && errno == EPERM,
	      "filter_locked_detach_eperm", "%s", strerror(errno));
	CHECK(setsockopt(t1, SOL_SOCKET, SO_DETACH_FILTER, &zero, sizeof zero) < 0 && errno == ENOENT,
	      "filter_detach_unfiltered", "%s", strerror(errno));
	int fd = open("/", O_RDONLY | O_DIRECTORY);
	CHECK(setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &fp, sizeof fp) < 0 && errno == ENOTSOCK,
	      "filter_enotsock", "%s", strerror(errno));
	close(fd);
	/* 26 at IPPROTO_IPV6 is IPV6_V6ONLY */
	int s6 = socket(AF_INET6, SOCK_DGRAM, 0), v = 0;
	socklen_t vl = sizeof v;
	CHECK(setsockopt(s6, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one) == 0 &&
	      getsockopt(s6, IPPROTO_IPV6, IPV6_V6ONLY, &v, &vl) == 0 && v == 1, "v6only_same_number", "%s v=%d",
	      strerror(errno), v);
	close(s6);
	close(r);
	close(t1);
	close(t2);
}

int main(int argc, char **argv)
{
	t_setup(argc, argv, "inet_socket");
	char buf[64];

	/* a TCP server on 127.0.0.1, port chosen by the kernel */
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CHECK(s >= 0, "socket_tcp", "%s", strerror(errno));
	int one = 1, v = 0;
	socklen_t vl = sizeof v;
	CHECK(setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) == 0 &&
	      getsockopt(s, SOL_SOCKET, SO_REUSEADDR, &v, &vl) == 0 && v == 1,
	      "sockopt_reuseaddr", "%s v=%d", strerror(errno), v);
	struct sockaddr_in sa = lo4(0);
	CHECK(bind(s, (struct sockaddr *)&sa, sizeof sa) == 0, "bind_tcp", "%s", strerror(errno));
	socklen_t sl = sizeof sa;
	CHECK(getsockname(s, (struct sockaddr *)&sa, &sl) == 0 && sl == sizeof sa && sa.sin_port != 0 &&
	      sa.sin_addr.s_addr == htonl(INADDR_LOOPBACK), "getsockname_tcp", "%s", strerror(errno));
	CHECK(listen(s, 8) == 0, "listen", "%s", strerror(errno));

	/* blocking connect */
	int c = socket(AF_INET, SOCK_STREAM, 0);
	CHECK(setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) == 0, "sockopt_nodelay_set", "%s",
	      strerror(errno));
	CHECK(connect(c, (struct sockaddr *)&sa, sizeof sa) == 0, "connect_blocking", "%s", strerror(errno));
	v = 0;
	vl = sizeof v;
	CHECK(getsockopt(c, IPPROTO_TCP, TCP_NODELAY, &v, &vl) == 0 && v == 1, "sockopt_nodelay_kept",
	      "v=%d", v);
	struct sockaddr_in peer;
	socklen_t pl = sizeof peer;
	int a = accept4(s, (struct sockaddr *)&peer, &pl, SOCK_CLOEXEC);
	CHECK(a >= 0 && pl == sizeof peer && peer.sin_addr.s_addr == htonl(INADDR_LOOPBACK),
	      "accept4", "%s", strerror(errno));
	CHECK((fcntl(a, F_GETFD) & FD_CLOEXEC) != 0, "accept4_cloexec", "flags %d", fcntl(a, F_GETFD));
	pl = sizeof peer;
	CHECK(getpeername(c, (struct sockaddr *)&peer, &pl) == 0 && peer.sin_port == sa.sin_port,
	      "getpeername", "%s", strerror(errno));
	CHECK(send(c, "ping", 4, 0) == 4 && recv(a, buf, 4, MSG_WAITALL) == 4 && !memcmp(buf, "ping", 4),
	      "send_recv", "%s", strerror(errno));
	CHECK(connect(c, (struct sockaddr *)&sa, sizeof sa) == -1 && errno == EISCONN, "connect_isconn",
	      "%s", strerror(errno));
	CHECK(shutdown(c, SHUT_WR) == 0 && recv(a, buf, sizeof buf, 0) == 0, "shutdown_eof", "%s",
	      strerror(errno));
	close(a);
	close(c);

	/* non-blocking connect: 0 or EINPROGRESS, then writable with SO_ERROR 0 */
	c = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	int r = connect(c, (struct sockaddr *)&sa, sizeof sa);
	CHECK(r == 0 || errno == EINPROGRESS, "connect_nonblock", "%s", strerror(errno));
	struct pollfd pf = { c, POLLOUT, 0 };
	int e = -1;
	vl = sizeof e;
	CHECK(poll(&pf, 1, 5000) == 1 && getsockopt(c, SOL_SOCKET, SO_ERROR, &e, &vl) == 0 && e == 0,
	      "connect_nonblock_done", "e=%d", e);
	CHECK((fcntl(c, F_GETFL) & O_NONBLOCK) != 0, "connect_nonblock_flag", "flags %x", fcntl(c, F_GETFL));
	a = accept4(s, NULL, NULL, 0);
	CHECK(a >= 0 && write(c, "x", 1) == 1 && read(a, buf, 1) == 1, "nonblock_transfer", "%s",
	      strerror(errno));
	close(a);
	close(c);
	/* 0.0.0.0 means the local host */
	c = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in any = sa;
	any.sin_addr.s_addr = htonl(INADDR_ANY);
	CHECK(connect(c, (struct sockaddr *)&any, sizeof any) == 0, "connect_inaddr_any", "%s", strerror(errno));
	a = accept4(s, NULL, NULL, 0);
	close(a);
	close(c);
	close(s);

	/* nothing listening: ECONNREFUSED */
	c = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in closed = sa; /* the listener is closed now */
	CHECK(connect(c, (struct sockaddr *)&closed, sizeof closed) == -1 && errno == ECONNREFUSED,
	      "connect_refused", "%s", strerror(errno));
	close(c);

	/* UDP: sendto/recvfrom, connected send */
	int u1 = socket(AF_INET, SOCK_DGRAM, 0), u2 = socket(AF_INET, SOCK_DGRAM, 0);
	struct sockaddr_in ua = lo4(0);
	sl = sizeof ua;
	CHECK(bind(u1, (struct sockaddr *)&ua, sizeof ua) == 0 && getsockname(u1, (struct sockaddr *)&ua, &sl) == 0,
	      "udp_bind", "%s", strerror(errno));
	CHECK(sendto(u2, "dg", 2, 0, (struct sockaddr *)&ua, sizeof ua) == 2, "udp_sendto", "%s",
	      strerror(errno));
	struct sockaddr_in from;
	socklen_t fl = sizeof from;
	CHECK(recvfrom(u1, buf, sizeof buf, 0, (struct sockaddr *)&from, &fl) == 2 &&
	      from.sin_addr.s_addr == htonl(INADDR_LOOPBACK), "udp_recvfrom", "%s", strerror(errno));
	CHECK(connect(u2, (struct sockaddr *)&ua, sizeof ua) == 0 && send(u2, "c", 1, 0) == 1 &&
	      recv(u1, buf, sizeof buf, 0) == 1, "udp_connect_send", "%s", strerror(errno));
	close(u1);
	close(u2);

	/* IPv6 loopback */
	int s6 = socket(AF_INET6, SOCK_STREAM, 0);
	struct sockaddr_in6 a6 = { .sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT };
	socklen_t l6 = sizeof a6;
	if (bind(s6, (struct sockaddr *)&a6, sizeof a6) < 0 && errno == EADDRNOTAVAIL) {
		t_ok("ipv6_loopback"); /* no IPv6 on this host */
	} else {
		getsockname(s6, (struct sockaddr *)&a6, &l6);
		listen(s6, 1);
		int c6 = socket(AF_INET6, SOCK_STREAM, 0);
		CHECK(connect(c6, (struct sockaddr *)&a6, sizeof a6) == 0, "ipv6_loopback", "%s",
		      strerror(errno));
		close(c6);
	}
	close(s6);

	/* family mismatch: an AF_INET socket with an IPv6 address */
	c = socket(AF_INET, SOCK_STREAM, 0);
	CHECK(connect(c, (struct sockaddr *)&a6, sizeof a6) == -1, "connect_family_mismatch", "succeeded");
	/* short address */
	CHECK(connect(c, (struct sockaddr *)&sa, 8) == -1 && errno == EINVAL, "connect_short", "%s",
	      strerror(errno));
	close(c);

	/* SCM_RIGHTS over a socketpair */
	int sp[2];
	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sp) == 0, "socketpair", "%s", strerror(errno));
	int p[2];
	pipe(p);
	char cbuf[CMSG_SPACE(sizeof(int))];
	memset(cbuf, 0, sizeof cbuf);
	struct iovec iov = { "f", 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &p[1], sizeof(int));
	CHECK(sendmsg(sp[0], &m, 0) == 1, "sendmsg_rights", "%s", strerror(errno));
	char rb[1];
	struct iovec riov = { rb, 1 };
	memset(cbuf, 0, sizeof cbuf);
	struct msghdr rm = { .msg_iov = &riov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf };
	int got = -1;
	if (recvmsg(sp[1], &rm, 0) == 1 && CMSG_FIRSTHDR(&rm))
		memcpy(&got, CMSG_DATA(CMSG_FIRSTHDR(&rm)), sizeof got);
	CHECK(got >= 0 && write(got, "z", 1) == 1 && read(p[0], rb, 1) == 1 && rb[0] == 'z',
	      "recvmsg_rights", "%s", strerror(errno));
	socket_filters();
	/* socketpair of inet families: the kernel's own errors (LTP socketpair01) */
	{
		int sv[2];
		EXPECT_ERR(socketpair(AF_INET, SOCK_STREAM, 0, sv), EOPNOTSUPP, "socketpair_inet_stream");
		EXPECT_ERR(socketpair(AF_INET6, SOCK_DGRAM, 0, sv), EOPNOTSUPP, "socketpair_inet6_dgram");
		EXPECT_ERR(socketpair(AF_INET, 75, 0, sv), EINVAL, "socketpair_inet_bad_type");
		EXPECT_ERR(socketpair(AF_INET, SOCK_STREAM, IPPROTO_UDP, sv), EPROTONOSUPPORT, "socketpair_inet_bad_proto");
	}
	return t_done();
}
