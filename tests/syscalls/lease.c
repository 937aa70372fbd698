/* fcntl leases (F_SETLEASE, F_GETLEASE): set and get each type, EAGAIN for a
 * read lease on a writable file and a write lease beside another open, EACCES
 * on a file of another owner (unprivileged only), EINVAL on a directory, a
 * pipe or a bad type; the break: an opener for writing (a truncate) waits
 * until the holder, signalled SIGIO, removes its lease; a read-only opener of
 * a write lease until it is downgraded; an O_NONBLOCK opener gets
 * EWOULDBLOCK. */
#include "t.h"
#include <signal.h>
#include <time.h>

static const char *F = "leasefile";

static int openf(int flags)
{
	int fd = open(F, flags | O_CLOEXEC);
	if (fd < 0)
		DIE("open %s", F);
	return fd;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* fork a breaker doing op; child exits 0 if op did what was expected within 10 s */
enum { OP_RDONLY, OP_RDWR, OP_TRUNC, OP_NONBLOCK };
static int go[2] = { -1, -1 };

/* fork a breaker that waits for go() */
static pid_t breaker(int op)
{
	if (go[0] >= 0) {
		close(go[0]);
		close(go[1]);
	}
	if (pipe(go) < 0)
		DIE("pipe");
	pid_t pid = fork();
	if (pid < 0)
		DIE("fork");
	if (pid)
		return pid;
	alarm(30);
	char b;
	close(go[1]);
	if (read(go[0], &b, 1) != 1)
		_exit(4);
	double t0 = now_s();
	int r;
	switch (op) {
	case OP_RDONLY:
		r = open(F, O_RDONLY);
		break;
	case OP_RDWR:
		r = open(F, O_RDWR);
		break;
	case OP_TRUNC:
		r = truncate(F, 0);
		break;
	default:
		r = open(F, O_RDONLY | O_NONBLOCK);
		_exit(r < 0 && errno == EWOULDBLOCK ? 0 : 3);
	}
	if (r < 0) {
		printf("FAIL breaker %d: %s\n", op, strerror(errno));
		_exit(2);
	}
	_exit(now_s() - t0 < 10 ? 0 : 1);
}

static int reap(pid_t pid)
{
	int st;
	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static siginfo_t last_si;

static bool got_sigio(void)
{
	if (write(go[1], "x", 1) != 1)
		return false;
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, SIGIO);
	struct timespec to = { 5, 0 };
	return sigtimedwait(&s, &last_si, &to) == SIGIO;
}

int main(int argc, char **argv)
{
	t_setup(argc, argv, "lease");
	if (t_write_file(F, "0123456789", 0644) < 0)
		DIE("setup");
	sigset_t io;
	sigemptyset(&io);
	sigaddset(&io, SIGIO);
	sigprocmask(SIG_BLOCK, &io, NULL);

	int rd = openf(O_RDONLY);
	CHECK(fcntl(rd, F_GETLEASE) == F_UNLCK, "getlease_none", "%s", strerror(errno));
	CHECK(fcntl(rd, F_SETLEASE, F_RDLCK) == 0, "setlease_rdlck", "%s", strerror(errno));
	CHECK(fcntl(rd, F_GETLEASE) == F_RDLCK, "getlease_rdlck", "got %d", fcntl(rd, F_GETLEASE));
	CHECK(fcntl(rd, F_SETLEASE, F_UNLCK) == 0 && fcntl(rd, F_GETLEASE) == F_UNLCK, "setlease_unlck",
	      "%s", strerror(errno));
	CHECK(fcntl(rd, F_SETLEASE, F_WRLCK) == 0, "setlease_wrlck_sole_open", "%s", strerror(errno));
	CHECK(fcntl(rd, F_GETLEASE) == F_WRLCK, "getlease_wrlck", "got %d", fcntl(rd, F_GETLEASE));
	CHECK(fcntl(rd, F_SETLEASE, F_RDLCK) == 0 && fcntl(rd, F_GETLEASE) == F_RDLCK, "setlease_downgrade",
	      "%s", strerror(errno));
	fcntl(rd, F_SETLEASE, F_UNLCK);
	EXPECT_ERR(fcntl(rd, F_SETLEASE, 99), EINVAL, "setlease_bad_type");

	int rw = openf(O_RDWR);
	EXPECT_ERR(fcntl(rw, F_SETLEASE, F_RDLCK), EAGAIN, "rdlck_on_writable_fd");
	EXPECT_ERR(fcntl(rd, F_SETLEASE, F_RDLCK), EAGAIN, "rdlck_while_open_for_write");
	EXPECT_ERR(fcntl(rd, F_SETLEASE, F_WRLCK), EAGAIN, "wrlck_with_second_open");
	close(rw);
	int rd2 = openf(O_RDONLY);
	EXPECT_ERR(fcntl(rd, F_SETLEASE, F_WRLCK), EAGAIN, "wrlck_with_second_reader");
	CHECK(fcntl(rd, F_SETLEASE, F_RDLCK) == 0 && fcntl(rd2, F_SETLEASE, F_RDLCK) == 0,
	      "two_read_leases", "%s", strerror(errno));
	fcntl(rd, F_SETLEASE, F_UNLCK);
	fcntl(rd2, F_SETLEASE, F_UNLCK);
	close(rd2);
	int d = dup(rd);
	CHECK(fcntl(rd, F_SETLEASE, F_WRLCK) == 0 && fcntl(d, F_GETLEASE) == F_WRLCK,
	      "lease_belongs_to_description", "%s", strerror(errno));
	fcntl(d, F_SETLEASE, F_UNLCK);
	close(d);

	int dir = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	EXPECT_ERR(fcntl(dir, F_SETLEASE, F_RDLCK), EINVAL, "setlease_directory_einval");
	close(dir);
	int p[2];
	if (pipe(p) < 0)
		DIE("pipe");
	EXPECT_ERR(fcntl(p[0], F_SETLEASE, F_RDLCK), EINVAL, "setlease_pipe_einval");
	close(p[0]);
	close(p[1]);
	if (geteuid() != 0) {
		/* a file of another owner, no CAP_LEASE */
		int o = open("/etc/passwd", O_RDONLY | O_CLOEXEC);
		EXPECT_ERR(fcntl(o, F_SETLEASE, F_RDLCK), EACCES, "other_owner_eacces");
		close(o);
	} else {
		t_ok("other_owner_eacces");
	}

	/* ---- breaks ---- */
	pid_t c = breaker(OP_RDWR);
	CHECK(fcntl(rd, F_SETLEASE, F_WRLCK) == 0, "break_wr_setup", "%s", strerror(errno));
	CHECK(got_sigio(), "break_wr_sigio", "no SIGIO in 5 s");
	CHECK(fcntl(rd, F_GETLEASE) == F_UNLCK, "break_wr_getlease_target", "got %d", fcntl(rd, F_GETLEASE));
	EXPECT_ERR(fcntl(rd, F_SETLEASE, F_RDLCK), EAGAIN, "break_wr_no_downgrade_for_writer");
	CHECK(fcntl(rd, F_SETLEASE, F_UNLCK) == 0, "break_wr_release", "%s", strerror(errno));
	int rc = reap(c);
	CHECK(rc == 0, "break_wr_open_completes", "child status %d", rc);

	c = breaker(OP_RDONLY);
	CHECK(fcntl(rd, F_SETLEASE, F_WRLCK) == 0, "break_rd_setup", "%s", strerror(errno));
	CHECK(got_sigio(), "break_rd_sigio", "no SIGIO in 5 s");
	CHECK(fcntl(rd, F_GETLEASE) == F_RDLCK, "break_rd_getlease_target", "got %d (SIGIO code %d from %d)",
	      fcntl(rd, F_GETLEASE), last_si.si_code, last_si.si_pid);
	CHECK(fcntl(rd, F_SETLEASE, F_RDLCK) == 0, "break_rd_downgrade", "%s", strerror(errno));
	rc = reap(c);
	CHECK(rc == 0, "break_rd_open_completes", "child status %d", rc);
	CHECK(fcntl(rd, F_GETLEASE) == F_RDLCK, "break_rd_keeps_read_lease", "got %d", fcntl(rd, F_GETLEASE));

	/* the read lease kept: a truncate breaks it */
	c = breaker(OP_TRUNC);
	CHECK(got_sigio(), "break_trunc_sigio", "no SIGIO in 5 s");
	CHECK(fcntl(rd, F_SETLEASE, F_UNLCK) == 0, "break_trunc_release", "%s", strerror(errno));
	rc = reap(c);
	CHECK(rc == 0, "break_trunc_completes", "child status %d", rc);

	c = breaker(OP_NONBLOCK);
	CHECK(fcntl(rd, F_SETLEASE, F_WRLCK) == 0, "break_nonblock_setup", "%s", strerror(errno));
	CHECK(got_sigio(), "break_nonblock_sigio", "no SIGIO in 5 s");
	rc = reap(c);
	CHECK(rc == 0, "break_nonblock_ewouldblock", "child status %d", rc);
	CHECK(fcntl(rd, F_SETLEASE, F_UNLCK) == 0, "break_nonblock_release", "%s", strerror(errno));

	/* the holder's fd moved (dup, close, the number taken by another
	 * file): the break signal still reaches it (under moat the holder is
	 * looked for again before the signal: holder_scan) */
	c = breaker(OP_NONBLOCK);
	CHECK(fcntl(rd, F_SETLEASE, F_WRLCK) == 0, "break_moved_setup", "%s", strerror(errno));
	int mv = fcntl(rd, F_DUPFD_CLOEXEC, 20);
	close(rd);
	int reuse = open("/dev/null", O_RDONLY | O_CLOEXEC);
	CHECK(got_sigio(), "break_moved_holder_sigio", "no SIGIO in 5 s");
	rc = reap(c);
	CHECK(rc == 0, "break_moved_ewouldblock", "child status %d", rc);
	CHECK(fcntl(mv, F_SETLEASE, F_UNLCK) == 0, "break_moved_release", "%s", strerror(errno));
	if (reuse >= 0)
		close(reuse);
	close(mv);
	return t_done();
}
