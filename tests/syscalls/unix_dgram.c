/* AF_UNIX datagram sockets addressed by path: sendto/sendmsg/sendmmsg to a
 * path, the source address recvfrom/recvmsg/recvmmsg report, and the errors
 * of a bad destination. */
#include "t.h"
#include <stddef.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <pthread.h>

static socklen_t addr(struct sockaddr_un *sa, const char *path)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	snprintf(sa->sun_path, sizeof(sa->sun_path), "%s", path);
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(path) + 1);
}

/* receive one datagram on fd: data must be want, the source's path src ("" = unnamed) */
static void recv_check(int fd, const char *want, const char *src, const char *name)
{
	char buf[64] = { 0 };
	struct sockaddr_un from;
	socklen_t fl = sizeof(from);
	memset(&from, 0x7f, sizeof(from));
	ssize_t n = recvfrom(fd, buf, sizeof(buf) - 1, 0, (struct sockaddr *)&from, &fl);
	size_t want_len = *src ? offsetof(struct sockaddr_un, sun_path) + strlen(src) + 1 : 0;
	CHECK(n == (ssize_t)strlen(want) && !strcmp(buf, want) && fl == want_len &&
		      (!*src || !strcmp(from.sun_path, src)),
	      name, "n %zd '%s' len %u (want %zu) from '%s'", n, buf, fl, want_len,
	      fl > offsetof(struct sockaddr_un, sun_path) ? from.sun_path + !from.sun_path[0] : "");
}

/* two threads bind one socket to two paths: one bind wins, the other is
 * EINVAL and leaves no inode behind */
static int race_fd;
static pthread_barrier_t race_bar;
static void *race_bind(void *arg)
{
	struct sockaddr_un sa;
	socklen_t l = addr(&sa, arg);
	pthread_barrier_wait(&race_bar);
	return (void *)(long)bind(race_fd, (struct sockaddr *)&sa, l);
}

static void bind_race(void)
{
	int leftovers = 0, rounds = 40;
	for (int i = 0; i < rounds; i++) {
		char a[32], b[32];
		snprintf(a, sizeof(a), "ra%d.sock", i);
		snprintf(b, sizeof(b), "rb%d.sock", i);
		race_fd = socket(AF_UNIX, SOCK_DGRAM, 0);
		pthread_barrier_init(&race_bar, NULL, 2);
		pthread_t ta, tb;
		pthread_create(&ta, NULL, race_bind, a);
		pthread_create(&tb, NULL, race_bind, b);
		void *ra, *rb;
		pthread_join(ta, &ra);
		pthread_join(tb, &rb);
		pthread_barrier_destroy(&race_bar);
		struct stat st;
		int n = (stat(a, &st) == 0) + (stat(b, &st) == 0);
		if (n != 1 || ((long)ra == 0) + ((long)rb == 0) != 1)
			leftovers++;
		unlink(a);
		unlink(b);
		close(race_fd);
	}
	CHECK(leftovers == 0, "bind_race_one_inode", "%d of %d rounds left two inodes (or two binds won)",
	      leftovers, rounds);
}

/* recvmsg/recvmmsg: the source address of a datagram from a bound socket
 * is its path (full buffer, short buffer, no buffer), with the control
 * length and flags the kernel set; sendmmsg to paths (srv bound at sa, b
 * bound at "cli.sock" and connected to srv, u unbound). */
static void msg_cases(int srv, int b, int u, const struct sockaddr_un *sa, socklen_t sl)
{
	size_t cli_len = offsetof(struct sockaddr_un, sun_path) + strlen("cli.sock") + 1;
	char buf[16];
	struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) };
	struct sockaddr_un from;

	/* a whole buffer */
	CHECK(send(b, "m1", 2, 0) == 2, "send_m1", "%s", strerror(errno));
	memset(&from, 0x7f, sizeof(from));
	char ctl[64];
	struct msghdr mh = { .msg_name = &from, .msg_namelen = sizeof(from), .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = ctl, .msg_controllen = sizeof(ctl), .msg_flags = 0x5a5a };
	ssize_t n = recvmsg(srv, &mh, 0);
	CHECK(n == 2 && mh.msg_namelen == cli_len && !strcmp(from.sun_path, "cli.sock") && mh.msg_name == &from &&
		      mh.msg_controllen == 0 && mh.msg_flags == 0,
	      "recvmsg_bound_source", "n %zd len %u '%s' ctl %zu flags %#x", n, mh.msg_namelen,
	      from.sun_path + !from.sun_path[0], (size_t)mh.msg_controllen, mh.msg_flags);

	/* a short buffer: truncated, the whole length reported */
	CHECK(send(b, "m2", 2, 0) == 2, "send_m2", "%s", strerror(errno));
	memset(&from, 0x7f, sizeof(from));
	mh.msg_namelen = offsetof(struct sockaddr_un, sun_path) + 3;
	mh.msg_controllen = 0;
	mh.msg_control = NULL;
	n = recvmsg(srv, &mh, 0);
	CHECK(n == 2 && mh.msg_namelen == cli_len && !memcmp(from.sun_path, "cli", 3) &&
		      (unsigned char)from.sun_path[3] == 0x7f,
	      "recvmsg_short_name_buffer", "n %zd len %u '%.3s' next %#x", n, mh.msg_namelen,
	      from.sun_path + !from.sun_path[0], (unsigned char)from.sun_path[3]);

	/* a message cut short: MSG_TRUNC in msg_flags, through the copy */
	CHECK(send(b, "0123456789abcdefXYZ", 19, 0) == 19, "send_long", "%s", strerror(errno));
	mh.msg_namelen = sizeof(from);
	mh.msg_flags = 0;
	n = recvmsg(srv, &mh, 0);
	CHECK(n == 16 && (mh.msg_flags & MSG_TRUNC) && mh.msg_namelen == cli_len, "recvmsg_trunc_flag",
	      "n %zd flags %#x len %u", n, mh.msg_flags, mh.msg_namelen);

	/* no name buffer */
	CHECK(send(b, "m3", 2, 0) == 2, "send_m3", "%s", strerror(errno));
	struct msghdr nm = { .msg_iov = &iov, .msg_iovlen = 1 };
	n = recvmsg(srv, &nm, 0);
	CHECK(n == 2 && nm.msg_namelen == 0, "recvmsg_no_name", "n %zd len %u", n, nm.msg_namelen);

	/* an unnamed sender: no name (length 0) */
	CHECK(sendto(u, "m4", 2, 0, (const struct sockaddr *)sa, sl) == 2, "sendto_m4", "%s", strerror(errno));
	mh.msg_namelen = sizeof(from);
	n = recvmsg(srv, &mh, 0);
	CHECK(n == 2 && mh.msg_namelen == 0, "recvmsg_unnamed_source", "n %zd len %u", n,
	      mh.msg_namelen);

	/* recvmmsg: three messages, from b, u, b; the middle one has no name buffer */
	CHECK(send(b, "r1", 2, 0) == 2 && sendto(u, "r2", 2, 0, (const struct sockaddr *)sa, sl) == 2 &&
		      send(b, "r3", 2, 0) == 2,
	      "send_r123", "%s", strerror(errno));
	struct mmsghdr mv[3];
	struct sockaddr_un fv[3];
	char bv[3][8];
	struct iovec iv[3];
	memset(mv, 0, sizeof(mv));
	memset(fv, 0x7f, sizeof(fv));
	for (int i = 0; i < 3; i++) {
		iv[i].iov_base = bv[i];
		iv[i].iov_len = sizeof(bv[i]);
		mv[i].msg_hdr.msg_iov = &iv[i];
		mv[i].msg_hdr.msg_iovlen = 1;
		if (i != 1) {
			mv[i].msg_hdr.msg_name = &fv[i];
			mv[i].msg_hdr.msg_namelen = sizeof(fv[i]);
		}
	}
	struct timespec tmo = { 1, 0 };
	int k = recvmmsg(srv, mv, 3, MSG_WAITFORONE, &tmo);
	CHECK(k == 3 && mv[0].msg_len == 2 && mv[1].msg_len == 2 && mv[2].msg_len == 2 &&
		      mv[0].msg_hdr.msg_namelen == cli_len && !strcmp(fv[0].sun_path, "cli.sock") &&
		      mv[1].msg_hdr.msg_namelen == 0 && mv[2].msg_hdr.msg_namelen == cli_len &&
		      !strcmp(fv[2].sun_path, "cli.sock") && mv[0].msg_hdr.msg_name == &fv[0],
	      "recvmmsg_sources", "k %d len %u %u %u '%s' '%s'", k, mv[0].msg_hdr.msg_namelen,
	      mv[1].msg_hdr.msg_namelen, mv[2].msg_hdr.msg_namelen, fv[0].sun_path + !fv[0].sun_path[0],
	      fv[2].sun_path + !fv[2].sun_path[0]);

	/* sendmmsg to a path from the unbound socket: two messages, then the
	 * batch with a missing path second (one sent), then first (ENOENT) */
	struct sockaddr_un bad;
	memset(&bad, 0, sizeof(bad));
	bad.sun_family = AF_UNIX;
	strcpy(bad.sun_path, "nothing-here.sock");
	socklen_t badl = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(bad.sun_path) + 1);
	struct mmsghdr sv[2];
	struct iovec si[2] = { { "s1", 2 }, { "s22", 3 } };
	memset(sv, 0, sizeof(sv));
	for (int i = 0; i < 2; i++) {
		sv[i].msg_hdr.msg_name = (void *)sa;
		sv[i].msg_hdr.msg_namelen = sl;
		sv[i].msg_hdr.msg_iov = &si[i];
		sv[i].msg_hdr.msg_iovlen = 1;
	}
	k = sendmmsg(u, sv, 2, 0);
	CHECK(k == 2 && sv[0].msg_len == 2 && sv[1].msg_len == 3 && sv[0].msg_hdr.msg_name == sa,
	      "sendmmsg_paths", "k %d (%s) len %u %u", k, strerror(errno), sv[0].msg_len, sv[1].msg_len);
	n = recv(srv, buf, sizeof(buf), MSG_DONTWAIT);
	ssize_t n2 = recv(srv, buf + 8, 8, MSG_DONTWAIT);
	CHECK(n == 2 && n2 == 3 && !memcmp(buf, "s1", 2) && !memcmp(buf + 8, "s22", 3), "sendmmsg_paths_arrive",
	      "n %zd %zd", n, n2);
	sv[1].msg_hdr.msg_name = &bad;
	sv[1].msg_hdr.msg_namelen = badl;
	k = sendmmsg(u, sv, 2, 0);
	CHECK(k == 1, "sendmmsg_second_missing_sends_one", "k %d (%s)", k, strerror(errno));
	n = recv(srv, buf, sizeof(buf), MSG_DONTWAIT);
	CHECK(n == 2 && recv(srv, buf, sizeof(buf), MSG_DONTWAIT) == -1 && errno == EAGAIN,
	      "sendmmsg_second_missing_one_arrives", "n %zd", n);
	k = sendmmsg(u, &sv[1], 1, 0);
	CHECK(k == -1 && errno == ENOENT, "sendmmsg_missing_enoent", "k %d (%s)", k, strerror(errno));

	/* a stream connection from a bound socket: recvmsg on the accepted end
	 * names the peer's path */
	int ls = socket(AF_UNIX, SOCK_STREAM, 0), cs = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un la, ca;
	socklen_t ll = addr(&la, "msl.sock"), cl = addr(&ca, "msc.sock");
	CHECK(bind(ls, (struct sockaddr *)&la, ll) == 0 && listen(ls, 1) == 0 &&
		      bind(cs, (struct sockaddr *)&ca, cl) == 0 && connect(cs, (struct sockaddr *)&la, ll) == 0,
	      "stream_setup", "%s", strerror(errno));
	int as = accept(ls, NULL, NULL);
	CHECK(as >= 0 && send(cs, "st", 2, 0) == 2, "stream_send", "%s", strerror(errno));
	memset(&from, 0x7f, sizeof(from));
	struct msghdr smh = { .msg_name = &from, .msg_namelen = sizeof(from), .msg_iov = &iov, .msg_iovlen = 1 };
	n = recvmsg(as, &smh, 0);
	CHECK(n == 2 && smh.msg_namelen == cl && !strcmp(from.sun_path, "msc.sock"), "recvmsg_stream_peer_path",
	      "n %zd len %u '%s'", n, smh.msg_namelen, from.sun_path + !from.sun_path[0]);
	close(as);
	close(cs);
	close(ls);
	unlink("msl.sock");
	unlink("msc.sock");
}

int main(int argc, char **argv)
{
	t_setup(argc, argv, "unix_dgram");
	struct sockaddr_un sa, sb;
	socklen_t sl, bl;

	int srv = socket(AF_UNIX, SOCK_DGRAM, 0);
	sl = addr(&sa, "srv.sock");
	CHECK(bind(srv, (struct sockaddr *)&sa, sl) == 0, "bind", "%s", strerror(errno));

	/* an unbound socket sends to the path; the source is unnamed */
	int u = socket(AF_UNIX, SOCK_DGRAM, 0);
	CHECK(sendto(u, "one", 3, 0, (struct sockaddr *)&sa, sl) == 3, "sendto_path", "%s", strerror(errno));
	recv_check(srv, "one", "", "recvfrom_unnamed_source");

	/* a bound socket: the source address is its path */
	int b = socket(AF_UNIX, SOCK_DGRAM, 0);
	bl = addr(&sb, "cli.sock");
	CHECK(bind(b, (struct sockaddr *)&sb, bl) == 0, "bind_client", "%s", strerror(errno));
	CHECK(sendto(b, "two", 3, 0, (struct sockaddr *)&sa, sl) == 3, "sendto_path_bound", "%s",
	      strerror(errno));
	recv_check(srv, "two", "cli.sock", "recvfrom_bound_source");

	/* sendmsg with msg_name */
	struct iovec iov = { .iov_base = "three", .iov_len = 5 };
	struct msghdr mh = { .msg_name = &sa, .msg_namelen = sl, .msg_iov = &iov, .msg_iovlen = 1 };
	CHECK(sendmsg(b, &mh, 0) == 5, "sendmsg_path", "%s", strerror(errno));
	recv_check(srv, "three", "cli.sock", "recvfrom_after_sendmsg");
	/* the guest's msghdr is unchanged */
	CHECK(mh.msg_name == &sa && mh.msg_namelen == sl, "sendmsg_msghdr_unchanged", "%p %u",
	      mh.msg_name, mh.msg_namelen);

	/* an absolute path */
	char abs[PATH_MAX + 16];
	snprintf(abs, sizeof(abs), "%s/srv.sock", t_scratch);
	if (strlen(abs) < sizeof(sa.sun_path)) {
		struct sockaddr_un aa;
		socklen_t al = addr(&aa, abs);
		CHECK(sendto(u, "four", 4, 0, (struct sockaddr *)&aa, al) == 4, "sendto_absolute", "%s",
		      strerror(errno));
		recv_check(srv, "four", "", "recvfrom_absolute");
	} else {
		t_ok("sendto_absolute");
		t_ok("recvfrom_absolute");
	}

	/* no address: send on a connected datagram socket, source still the path */
	CHECK(connect(b, (struct sockaddr *)&sa, sl) == 0 && send(b, "five", 4, 0) == 4,
	      "connected_send", "%s", strerror(errno));
	recv_check(srv, "five", "cli.sock", "recvfrom_connected_source");

	/* a buffer too short for the source address: truncated, full length reported */
	CHECK(send(b, "six", 3, 0) == 3, "send_six", "%s", strerror(errno));
	{
		char buf[8];
		struct sockaddr_un from;
		socklen_t fl = 4;
		ssize_t n = recvfrom(srv, buf, sizeof(buf), 0, (struct sockaddr *)&from, &fl);
		CHECK(n == 3 && fl == offsetof(struct sockaddr_un, sun_path) + 9, "recvfrom_short_buffer",
		      "n %zd len %u", n, fl);
	}

	msg_cases(srv, b, u, &sa, sl);

	/* bad destinations */
	struct sockaddr_un bad;
	socklen_t badl = addr(&bad, "nothing.sock");
	CHECK(sendto(u, "x", 1, 0, (struct sockaddr *)&bad, badl) == -1 && errno == ENOENT,
	      "sendto_missing_enoent", "%s", strerror(errno));
	int f = open("plain", O_CREAT | O_WRONLY, 0644);
	close(f);
	badl = addr(&bad, "plain");
	CHECK(sendto(u, "x", 1, 0, (struct sockaddr *)&bad, badl) == -1 && errno == ECONNREFUSED,
	      "sendto_regular_file_econnrefused", "%s", strerror(errno));
	/* a stream socket's path from a datagram socket: wrong type */
	int st = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un ss;
	socklen_t ssl = addr(&ss, "stream.sock");
	CHECK(bind(st, (struct sockaddr *)&ss, ssl) == 0 && listen(st, 1) == 0, "bind_stream", "%s",
	      strerror(errno));
	CHECK(sendto(u, "x", 1, 0, (struct sockaddr *)&ss, ssl) == -1 && errno == EPROTOTYPE,
	      "sendto_stream_path_eprototype", "%s", strerror(errno));
	/* a stream socket given an address on send */
	int sc = socket(AF_UNIX, SOCK_STREAM, 0);
	CHECK(connect(sc, (struct sockaddr *)&ss, ssl) == 0, "connect_stream", "%s", strerror(errno));
	CHECK(sendto(sc, "x", 1, 0, (struct sockaddr *)&ss, ssl) == -1 && errno == EISCONN,
	      "sendto_stream_eisconn", "%s", strerror(errno));

	/* an inet socket given an AF_UNIX address */
	int in4 = socket(AF_INET, SOCK_DGRAM, 0);
	CHECK(sendto(in4, "x", 1, 0, (struct sockaddr *)&sa, sl) == -1 &&
		      (errno == EAFNOSUPPORT || errno == EINVAL),
	      "sendto_inet_unix_address", "%s", strerror(errno));
	/* (shorter than a sockaddr_in: EINVAL before the family is looked at) */
	CHECK(bind(in4, (struct sockaddr *)&sa, sl) == -1 && errno == EINVAL,
	      "bind_inet_unix_address", "%s", strerror(errno));

	bind_race();

	/* after unlink, the path is gone */
	unlink("srv.sock");
	CHECK(sendto(u, "x", 1, 0, (struct sockaddr *)&sa, sl) == -1 && errno == ENOENT,
	      "sendto_unlinked_enoent", "%s", strerror(errno));
	close(srv);
	close(u);
	close(b);
	close(st);
	close(sc);
	close(in4);
	unlink("cli.sock");
	unlink("stream.sock");
	unlink("plain");
	return t_done();
}
