/* AF_UNIX pathname sockets: bind creates a socket inode, connect finds it. */
#include "t.h"
#include <stddef.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/syscall.h>
#include <unistd.h>

static socklen_t addr(struct sockaddr_un *sa, const char *path)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	snprintf(sa->sun_path, sizeof(sa->sun_path), "%s", path);
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(path) + 1);
}

int main(int argc, char **argv)
{
	t_setup(argc, argv, "unix_socket");
	struct sockaddr_un sa;
	struct stat st;
	umask(022);

	/* bind creates a socket inode, mode 0777 & ~umask */
	int s = socket(AF_UNIX, SOCK_STREAM, 0);
	CHECK(bind(s, (struct sockaddr *)&sa, addr(&sa, "s.sock")) == 0, "bind_relative", "%s", strerror(errno));
	CHECK(stat("s.sock", &st) == 0 && S_ISSOCK(st.st_mode) && (st.st_mode & 0777) == 0755,
	      "bind_creates_socket_inode", "mode %o", st.st_mode);
	CHECK(listen(s, 4) == 0, "listen", "%s", strerror(errno));

	/* connect by a relative and by an absolute path, accept, talk */
	int c = socket(AF_UNIX, SOCK_STREAM, 0);
	CHECK(connect(c, (struct sockaddr *)&sa, addr(&sa, "s.sock")) == 0, "connect_relative", "%s",
	      strerror(errno));
	int a = accept(s, NULL, NULL);
	char buf[8] = {0};
	CHECK(a >= 0 && write(c, "ping", 4) == 4 && read(a, buf, 4) == 4 && !strcmp(buf, "ping"),
	      "stream_data", "%s", strerror(errno));
	char abs[PATH_MAX + 16];
	snprintf(abs, sizeof(abs), "%s/s.sock", t_scratch);
	int c2 = socket(AF_UNIX, SOCK_STREAM, 0);
	if (strlen(abs) < sizeof(sa.sun_path))
		CHECK(connect(c2, (struct sockaddr *)&sa, addr(&sa, abs)) == 0, "connect_absolute", "%s",
		      strerror(errno));
	else
		t_ok("connect_absolute");

	/* the names: as given to bind, for the socket and for its peer */
	struct sockaddr_un got;
	socklen_t gl = sizeof(got);
	memset(&got, 0, sizeof(got));
	CHECK(getsockname(s, (struct sockaddr *)&got, &gl) == 0 && !strcmp(got.sun_path, "s.sock") &&
		      gl == offsetof(struct sockaddr_un, sun_path) + 7,
	      "getsockname_path", "'%s' len %u", got.sun_path, gl);
	gl = sizeof(got);
	memset(&got, 0, sizeof(got));
	CHECK(getpeername(c, (struct sockaddr *)&got, &gl) == 0 && !strcmp(got.sun_path, "s.sock"),
	      "getpeername_path", "'%s'", got.sun_path);
	gl = 4; /* too short: truncated, the full length reported */
	CHECK(getsockname(s, (struct sockaddr *)&got, &gl) == 0 && gl == offsetof(struct sockaddr_un, sun_path) + 7,
	      "getsockname_truncated_len", "len %u", gl);

	/* Linux's errors */
	int s2 = socket(AF_UNIX, SOCK_STREAM, 0);
	EXPECT_ERR(bind(s2, (struct sockaddr *)&sa, addr(&sa, "s.sock")), EADDRINUSE, "bind_existing_eaddrinuse");
	int c3 = socket(AF_UNIX, SOCK_STREAM, 0);
	EXPECT_ERR(connect(c3, (struct sockaddr *)&sa, addr(&sa, "missing.sock")), ENOENT, "connect_missing_enoent");
	t_write_file("plain", "x", 0644);
	EXPECT_ERR(connect(c3, (struct sockaddr *)&sa, addr(&sa, "plain")), ECONNREFUSED,
		   "connect_regular_file_econnrefused");
	EXPECT_ERR(bind(s2, (struct sockaddr *)&sa, addr(&sa, "nodir/x.sock")), ENOENT, "bind_missing_dir_enoent");

	/* unlink the name; the listener lives on; the name can be bound again */
	CHECK(unlink("s.sock") == 0, "unlink_socket", "%s", strerror(errno));
	EXPECT_ERR(connect(c3, (struct sockaddr *)&sa, addr(&sa, "s.sock")), ENOENT, "connect_after_unlink_enoent");
	CHECK(bind(s2, (struct sockaddr *)&sa, addr(&sa, "s.sock")) == 0, "rebind_after_unlink", "%s",
	      strerror(errno));

	/* datagram sockets bound by path */
	int d1 = socket(AF_UNIX, SOCK_DGRAM, 0), d2 = socket(AF_UNIX, SOCK_DGRAM, 0);
	CHECK(bind(d1, (struct sockaddr *)&sa, addr(&sa, "d.sock")) == 0, "dgram_bind", "%s", strerror(errno));
	CHECK(connect(d2, (struct sockaddr *)&sa, addr(&sa, "d.sock")) == 0 && send(d2, "dg", 2, 0) == 2 &&
		      recv(d1, buf, sizeof(buf), 0) == 2,
	      "dgram_connect_send", "%s", strerror(errno));

	/* abstract names are untouched */
	int ab = socket(AF_UNIX, SOCK_STREAM, 0);
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	memcpy(sa.sun_path, "\0moat-test-abstract", 19);
	CHECK(bind(ab, (struct sockaddr *)&sa, offsetof(struct sockaddr_un, sun_path) + 19) == 0,
	      "abstract_bind", "%s", strerror(errno));
	/* a path on a socket that is not AF_UNIX: the kernel's error, no inode */
	int in4 = socket(AF_INET, SOCK_STREAM, 0);
	CHECK(bind(in4, (struct sockaddr *)&sa, addr(&sa, "inet-socket-long.sock")) == -1 && errno == EAFNOSUPPORT,
	      "bind_inet_socket_unix_addr", "%s", strerror(errno));
	CHECK(stat("inet-socket-long.sock", &st) == -1 && errno == ENOENT, "bind_inet_socket_no_inode", "exists");
	close(in4);
	/* a second bind of a bound socket fails and leaves no inode */
	int b2 = socket(AF_UNIX, SOCK_STREAM, 0);
	CHECK(bind(b2, (struct sockaddr *)&sa, addr(&sa, "first.sock")) == 0, "bind_first", "%s",
	      strerror(errno));
	CHECK(bind(b2, (struct sockaddr *)&sa, addr(&sa, "second.sock")) == -1 && errno == EINVAL,
	      "bind_twice_einval", "%s", strerror(errno));
	CHECK(stat("second.sock", &st) == -1 && errno == ENOENT, "bind_twice_no_inode", "exists");
	close(b2);
	unlink("first.sock");
	/* red team 55: the length registers of bind, connect and sendto with
	 * bit 32 set. The kernel takes an int (the low 32 bits); moat read all
	 * 64, found the length too long for a path and let the call run
	 * natively: the host kernel resolved the path in the guest's native
	 * root (EROFS, ENOENT), never the sandbox's file system */
	{
		int hb = socket(AF_UNIX, SOCK_STREAM, 0);
		socklen_t hl = addr(&sa, "hibit.sock");
		CHECK(syscall(SYS_bind, hb, &sa, (long)hl | (1L << 32)) == 0 && stat("hibit.sock", &st) == 0 &&
			      S_ISSOCK(st.st_mode),
		      "bind_len_high_bits_is_the_vfs", "%s", strerror(errno));
		CHECK(listen(hb, 4) == 0, "bind_len_high_bits_listen", "%s", strerror(errno));
		int hc = socket(AF_UNIX, SOCK_STREAM, 0);
		CHECK(syscall(SYS_connect, hc, &sa, (long)hl | (1L << 32)) == 0, "connect_len_high_bits_is_the_vfs",
		      "%s", strerror(errno));
		close(hc);
		close(hb);
		unlink("hibit.sock");
		int dr = socket(AF_UNIX, SOCK_DGRAM, 0), ds = socket(AF_UNIX, SOCK_DGRAM, 0);
		char hgot[8] = { 0 };
		hl = addr(&sa, "hibit.dgram");
		CHECK(bind(dr, (struct sockaddr *)&sa, hl) == 0 &&
			      syscall(SYS_sendto, ds, "hb", 2, 0, &sa, (long)hl | (1L << 32)) == 2 &&
			      recv(dr, hgot, sizeof hgot, MSG_DONTWAIT) == 2 && !strcmp(hgot, "hb"),
		      "sendto_len_high_bits_is_the_vfs", "%s", strerror(errno));
		close(dr);
		close(ds);
		unlink("hibit.dgram");
	}
	/* a server bound first stays reachable after 1100 short-lived binds
	 * (red team 20: moat's table of bound names was a ring of 1024, and
	 * the 1025th bind made the server ECONNREFUSED while it listened) */
	int srv = socket(AF_UNIX, SOCK_STREAM, 0);
	CHECK(bind(srv, (struct sockaddr *)&sa, addr(&sa, "srv.sock")) == 0 && listen(srv, 4) == 0,
	      "server_bind", "%s", strerror(errno));
	int n_ok = 0;
	for (int i = 0; i < 1100; i++) {
		char nm[32];
		snprintf(nm, sizeof(nm), "tmp%d.sock", i);
		int t = socket(AF_UNIX, SOCK_STREAM, 0);
		n_ok += bind(t, (struct sockaddr *)&sa, addr(&sa, nm)) == 0;
		close(t); /* (the names stay: 1100 inodes, none reused) */
	}
	int cl = socket(AF_UNIX, SOCK_STREAM, 0);
	CHECK(n_ok == 1100 && connect(cl, (struct sockaddr *)&sa, addr(&sa, "srv.sock")) == 0,
	      "server_reachable_after_many_binds", "%d binds, %s", n_ok, strerror(errno));
	close(cl);
	for (int i = 0; i < 1100; i++) {
		char nm[32];
		snprintf(nm, sizeof(nm), "tmp%d.sock", i);
		unlink(nm);
	}
	close(srv);
	unlink("srv.sock");
	return t_done();
}
