/* A listening AF_UNIX server stays reachable however many short-lived
 * sockets are bound (and closed) after it, and every such bind succeeds.
 * Under moat a path's socket lives under an abstract name the sentry keeps
 * in a table; red team 22 made a server ECONNREFUSED with 16,500 closed
 * binds (the full table forgot the oldest name). Now a full table drops
 * the names no socket holds; isolation_net unix_names_swept runs this with
 * the table's maximum lowered to 64 (MOAT_TEST_UNIX_NAMES_MAX), so that
 * its rounds of 60 binds fill it. */
#include "t.h"
#include <sys/socket.h>
#include <sys/un.h>

static socklen_t addr(struct sockaddr_un *sa, const char *name)
{
	memset(sa, 0, sizeof *sa);
	sa->sun_family = AF_UNIX;
	snprintf(sa->sun_path, sizeof sa->sun_path, "%s", name);
	return (socklen_t)sizeof *sa;
}

int main(int argc, char **argv)
{
	struct sockaddr_un sa;
	t_setup(argc, argv, "unix_name_churn");
	int srv = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CHECK(srv >= 0 && bind(srv, (struct sockaddr *)&sa, addr(&sa, "srv.sock")) == 0 && listen(srv, 4) == 0,
	      "server_bind", "%s", strerror(errno));
	int n_ok = 0, n = 0;
	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < 60; i++, n++) {
			char nm[32];
			snprintf(nm, sizeof nm, "c%d.sock", n);
			int t = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
			n_ok += t >= 0 && bind(t, (struct sockaddr *)&sa, addr(&sa, nm)) == 0;
			if (t >= 0)
				close(t); /* (the file stays: a new inode each time) */
		}
		if (round < 2)
			usleep(600 * 1000); /* (moat keeps a name half a second) */
	}
	CHECK(n_ok == n, "closed_binds_all_succeed", "%d of %d binds (%s)", n_ok, n, strerror(errno));
	int cl = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CHECK(connect(cl, (struct sockaddr *)&sa, addr(&sa, "srv.sock")) == 0, "server_reachable_after_churn",
	      "%s", strerror(errno));
	close(cl);
	for (int i = 0; i < n; i++) {
		char nm[32];
		snprintf(nm, sizeof nm, "c%d.sock", i);
		unlink(nm);
	}
	close(srv);
	unlink("srv.sock");
	return t_done();
}
