/* reuseport: SO_REUSEPORT groups (TCP listeners, UDP sockets), IPv4 and IPv6.
 * Sockets of one user share an address and port; another user's socket gets
 * EADDRINUSE, also a process that dropped root against root's group and root
 * against a user's group (Linux compares the sockets' owners, no capability
 * is an exception). Under moat every guest task is one host uid, so the
 * sentry keeps the owners (sentry/netreuse.c); before, a dropped process
 * joined root's group and took part of its connections (red-team 9 F4).
 * A socket bound to port 0 with SO_REUSEPORT gets a port others of its user
 * can join; a group's port is free again once its sockets are closed.
 * The cross-user cases need root (skipped otherwise); uid 61238. */
#include "t.h"
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#define U1 61238

struct fam {
	const char *name;
	int family;
	const char *addr, *any;
};

static const struct fam fams[] = { { "v4", AF_INET, "127.0.0.1", "0.0.0.0" }, { "v6", AF_INET6, "::1", "::" } };

static socklen_t mkaddr(const struct fam *f, const char *ip, int port, struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof *ss);
	if (f->family == AF_INET) {
		struct sockaddr_in *s = (struct sockaddr_in *)ss;
		s->sin_family = AF_INET;
		s->sin_port = htons((uint16_t)port);
		inet_pton(AF_INET, ip, &s->sin_addr);
		return sizeof *s;
	}
	struct sockaddr_in6 *s = (struct sockaddr_in6 *)ss;
	s->sin6_family = AF_INET6;
	s->sin6_port = htons((uint16_t)port);
	inet_pton(AF_INET6, ip, &s->sin6_addr);
	return sizeof *s;
}

/* a socket bound (and listening, TCP) at ip:port, SO_REUSEPORT if rp: fd or -errno */
static int mk(const struct fam *f, int type, const char *ip, int port, int rp)
{
	int s = socket(f->family, type, 0);
	if (s < 0)
		return -errno;
	int one = 1;
	if (f->family == AF_INET6)
		setsockopt(s, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
	if (rp && setsockopt(s, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one) < 0) {
		int e = errno;
		close(s);
		return -e;
	}
	struct sockaddr_storage ss;
	socklen_t l = mkaddr(f, ip, port, &ss);
	if (bind(s, (struct sockaddr *)&ss, l) < 0 || (type == SOCK_STREAM && listen(s, 8) < 0)) {
		int e = errno;
		close(s);
		return -e;
	}
	return s;
}

static int port_of(int s)
{
	struct sockaddr_storage ss;
	socklen_t l = sizeof ss;
	if (getsockname(s, (struct sockaddr *)&ss, &l) < 0)
		return -1;
	return ntohs(ss.ss_family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port :
					       ((struct sockaddr_in6 *)&ss)->sin6_port);
}

/* in a child that dropped root: mk(...) -> 0 or errno, as its exit status */
static int dropped_mk(const struct fam *f, int type, const char *ip, int port)
{
	pid_t p = fork();
	if (p == 0) {
		if (setresgid(U1, U1, U1) || setresuid(U1, U1, U1))
			_exit(250);
		int s = mk(f, type, ip, port, 1);
		_exit(s >= 0 ? 0 : -s);
	}
	int st = 0;
	waitpid(p, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 251;
}

static void one(const struct fam *f, int type, int root)
{
	const char *pn = type == SOCK_STREAM ? "tcp" : "udp";
	char n[96];
#define NAME(x) (snprintf(n, sizeof n, "%s_%s_%s", pn, f->name, x), n)
	int a = mk(f, type, f->addr, 0, 1);
	if (a == -EADDRNOTAVAIL || a == -EAFNOSUPPORT) {
		t_ok(NAME("no_address")); /* no IPv6 here: the same natively and inside */
		return;
	}
	int port = a >= 0 ? port_of(a) : -1;
	CHECK(a >= 0 && port > 0, NAME("port0_bound"), "fd %d port %d", a, port);
	if (a < 0)
		return;
	int v = 0;
	socklen_t vl = sizeof v;
	CHECK(getsockopt(a, SOL_SOCKET, SO_REUSEPORT, &v, &vl) == 0 && v == 1, NAME("getsockopt_set"), "%d", v);
	int b = mk(f, type, f->addr, port, 1);
	CHECK(b >= 0, NAME("same_user_shares"), "%s", strerror(-b));
	int c = mk(f, type, f->addr, port, 0);
	CHECK(c == -EADDRINUSE, NAME("without_reuseport_in_use"), "%d", c);
	if (c >= 0)
		close(c);
	if (root) {
		int e = dropped_mk(f, type, f->addr, port);
		CHECK(e == EADDRINUSE, NAME("dropped_joins_root_refused"), "%s", e ? strerror(e) : "joined");
		e = dropped_mk(f, type, f->any, port);
		CHECK(e == EADDRINUSE, NAME("dropped_wildcard_refused"), "%s", e ? strerror(e) : "bound");
	}
	close(a);
	if (b >= 0)
		close(b);
	if (root) {
		/* the port is free again: the dropped user's group now, and root is refused */
		int sync[2], back[2];
		if (pipe(sync) || pipe(back))
			return;
		pid_t p = fork();
		if (p == 0) {
			if (setresgid(U1, U1, U1) || setresuid(U1, U1, U1))
				_exit(1);
			int s = mk(f, type, f->addr, port, 1);
			int r = s >= 0 ? 0 : -s;
			(void)!write(back[1], &r, sizeof r);
			char x;
			(void)!read(sync[0], &x, 1);
			_exit(0);
		}
		int r = -1;
		(void)!read(back[0], &r, sizeof r);
		CHECK(r == 0, NAME("free_after_close"), "%s", strerror(r));
		int d = mk(f, type, f->addr, port, 1);
		CHECK(d == -EADDRINUSE, NAME("root_joins_user_refused"), "%s", d >= 0 ? "joined" : strerror(-d));
		if (d >= 0)
			close(d);
		(void)!write(sync[1], "x", 1);
		waitpid(p, NULL, 0);
		close(sync[0]), close(sync[1]), close(back[0]), close(back[1]);
	}
#undef NAME
}

int main(int argc, char **argv)
{
	t_setup(argc, argv, "reuseport");
	int root = geteuid() == 0;
	for (int i = 0; i < 2; i++) {
		one(&fams[i], SOCK_STREAM, root);
		one(&fams[i], SOCK_DGRAM, root);
	}
	return t_done();
}
