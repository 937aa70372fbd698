/* AF_UNIX datagram sockets addressed by path: sendto/sendmsg to a path,
 * the source address recvfrom reports, and the errors of a bad destination. */
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
