/* flock(2) and fcntl's record locks between fds and processes: conflicts,
 * EAGAIN, F_GETLK contents, release on close and exit, OFD vs POSIX, upgrade
 * and downgrade, a blocked waiter woken by an unlock, EINTR by a signal
 * handler without SA_RESTART, EDEADLK; other fcntl commands stay as they are. */
#include "t.h"
#include <signal.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>

static const char *F = "lockfile";

static int openf(int flags)
{
	int fd = open(F, flags | O_CLOEXEC);
	if (fd < 0)
		DIE("open %s", F);
	return fd;
}

static int setlk(int fd, int cmd, short type, off_t start, off_t len)
{
	struct flock l = { .l_type = type, .l_whence = SEEK_SET, .l_start = start, .l_len = len };
	return fcntl(fd, cmd, &l);
}

static struct flock getlk(int fd, int cmd, short type, off_t start, off_t len)
{
	struct flock l = { .l_type = type, .l_whence = SEEK_SET, .l_start = start, .l_len = len };
	if (fcntl(fd, cmd, &l) < 0)
		l.l_type = -1;
	return l;
}

/* Run fn in a child; its exit status (or 128+signal). */
static int in_child(int (*fn)(void *), void *arg)
{
	pid_t pid = fork();
	if (pid < 0)
		DIE("fork");
	if (pid == 0)
		_exit(fn(arg));
	int st;
	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void msleep(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* Send fd over unix socket s (one byte, SCM_RIGHTS): 0, or -1. */
static int send_fd(int s, int fd)
{
	char b = 'f';
	struct iovec iov = { &b, 1 };
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	memset(&u, 0, sizeof u);
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			    .msg_controllen = sizeof u.buf };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof fd);
	return sendmsg(s, &m, 0) == 1 ? 0 : -1;
}

/* The fd received on unix socket s, or -1. */
static int recv_fd(int s)
{
	char b;
	struct iovec iov = { &b, 1 };
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			    .msg_controllen = sizeof u.buf };
	if (recvmsg(s, &m, MSG_CMSG_CLOEXEC) != 1)
		return -1;
	struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
	if (!cm || cm->cmsg_type != SCM_RIGHTS)
		return -1;
	int fd;
	memcpy(&fd, CMSG_DATA(cm), sizeof fd);
	return fd;
}

/* ---- children ---- */

struct range {
	int cmd;
	short type;
	off_t start, len;
};

/* F_SETLK on a fresh fd: 0 ok, 1 EAGAIN, 2 other */
static int child_setlk(void *arg)
{
	struct range *r = arg;
	int fd = openf(O_RDWR);
	if (setlk(fd, r->cmd, r->type, r->start, r->len) == 0)
		return 0;
	return errno == EAGAIN ? 1 : 2;
}

/* flock on a fresh fd: 0 ok, 1 EWOULDBLOCK, 2 other */
static int child_flock(void *arg)
{
	int op = *(int *)arg;
	int fd = openf(O_RDONLY);
	if (flock(fd, op) == 0)
		return 0;
	return errno == EWOULDBLOCK ? 1 : 2;
}

/* F_GETLK on a fresh fd; encodes what it saw: 0 = as expected */
static struct flock want;
static int child_getlk(void *arg)
{
	struct range *r = arg;
	int fd = openf(O_RDWR);
	struct flock l = getlk(fd, r->cmd, r->type, r->start, r->len);
	if (l.l_type != want.l_type)
		return 1;
	if (l.l_type == F_UNLCK)
		return 0;
	if (l.l_whence != SEEK_SET || l.l_start != want.l_start || l.l_len != want.l_len)
		return 2;
	if (want.l_pid == -2)
		return l.l_pid == getppid() ? 0 : 3; /* the holder is our parent */
	return l.l_pid == want.l_pid ? 0 : 3;
}

static int ready[2];
static void tell_ready(void)
{
	if (write(ready[1], "x", 1) != 1)
		_exit(90);
}
static void wait_ready(void)
{
	char b;
	if (read(ready[0], &b, 1) != 1)
		DIE("child did not get ready");
}

static int child_lock_and_exit(void *arg)
{
	(void)arg;
	int fd = openf(O_RDWR);
	if (setlk(fd, F_SETLK, F_WRLCK, 0, 0) < 0 || flock(fd, LOCK_EX | LOCK_NB) < 0)
		return 1;
	tell_ready();
	return 0; /* exit with both locks held */
}

static int child_setlkw(void *arg)
{
	struct range *r = arg;
	int fd = openf(O_RDWR);
	tell_ready();
	if (setlk(fd, r->cmd, r->type, r->start, r->len) < 0)
		return errno == EINTR ? 4 : 2;
	return 0;
}

static int child_flock_wait(void *arg)
{
	(void)arg;
	int fd = openf(O_RDONLY);
	tell_ready();
	if (flock(fd, LOCK_EX) < 0)
		return errno == EINTR ? 4 : 2;
	return 0;
}

static volatile sig_atomic_t got_alarm;
static void on_alarm(int s)
{
	(void)s;
	got_alarm = 1;
}

/* a blocking wait interrupted by a handler installed without SA_RESTART */
static int child_eintr(void *arg)
{
	int use_flock = *(int *)arg;
	struct sigaction sa = { .sa_handler = on_alarm };
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = 0;
	sigaction(SIGALRM, &sa, NULL);
	int fd = openf(O_RDWR);
	struct itimerval it = { .it_value = { 0, 200000 } };
	setitimer(ITIMER_REAL, &it, NULL);
	int r = use_flock ? flock(fd, LOCK_EX) : setlk(fd, F_SETLKW, F_WRLCK, 0, 1);
	if (r == 0)
		return 1;
	return errno == EINTR && got_alarm ? 0 : 2;
}

/* holds [1,1], then waits for [0,0] (held by the parent) */
static int child_deadlock(void *arg)
{
	(void)arg;
	int fd = openf(O_RDWR);
	if (setlk(fd, F_SETLK, F_WRLCK, 1, 1) < 0)
		return 1;
	tell_ready();
	if (setlk(fd, F_SETLKW, F_WRLCK, 0, 1) < 0)
		return 2;
	return 0;
}

int main(int argc, char **argv)
{
	t_setup(argc, argv, "locks");
	if (t_write_file(F, "0123456789", 0644) < 0 || pipe(ready) < 0)
		DIE("setup");

	/* ---- flock ---- */
	int a = openf(O_RDONLY), b = openf(O_RDONLY);
	CHECK(flock(a, LOCK_EX) == 0, "flock_ex", "%s", strerror(errno));
	EXPECT_ERR(flock(b, LOCK_EX | LOCK_NB), EWOULDBLOCK, "flock_ex_vs_ex_other_fd");
	EXPECT_ERR(flock(b, LOCK_SH | LOCK_NB), EWOULDBLOCK, "flock_sh_vs_ex_other_fd");
	int op = LOCK_SH | LOCK_NB;
	CHECK(in_child(child_flock, &op) == 1, "flock_child_conflict", "child could lock");
	int d = dup(a);
	CHECK(flock(d, LOCK_EX | LOCK_NB) == 0, "flock_dup_same_description", "%s", strerror(errno));
	close(d);
	CHECK(flock(a, LOCK_SH) == 0 && flock(b, LOCK_SH | LOCK_NB) == 0, "flock_downgrade_then_shared",
	      "%s", strerror(errno));
	/* a failed LOCK_NB conversion loses the old lock (Linux drops it first) */
	EXPECT_ERR(flock(a, LOCK_EX | LOCK_NB), EWOULDBLOCK, "flock_upgrade_conflict");
	CHECK(flock(b, LOCK_EX | LOCK_NB) == 0, "flock_failed_upgrade_dropped_old", "%s", strerror(errno));
	CHECK(flock(b, LOCK_UN) == 0 && flock(a, LOCK_EX | LOCK_NB) == 0, "flock_unlock", "%s",
	      strerror(errno));
	close(a);
	CHECK(flock(b, LOCK_EX | LOCK_NB) == 0, "flock_released_on_close", "%s", strerror(errno));
	flock(b, LOCK_UN);
	EXPECT_ERR(flock(b, 0), EINVAL, "flock_einval");
	EXPECT_ERR(flock(b, LOCK_SH | LOCK_EX), EINVAL, "flock_einval_two_ops");
	EXPECT_ERR(flock(999, LOCK_SH), EBADF, "flock_ebadf");

	/* flock and fcntl locks do not see each other */
	CHECK(flock(b, LOCK_EX) == 0, "flock_again", "%s", strerror(errno));
	struct range wr_all = { F_SETLK, F_WRLCK, 0, 0 };
	CHECK(in_child(child_setlk, &wr_all) == 0, "flock_and_posix_independent", "conflict");
	close(b);

	/* ---- POSIX record locks ---- */
	int p = openf(O_RDWR);
	CHECK(setlk(p, F_SETLK, F_WRLCK, 0, 10) == 0, "posix_wrlck", "%s", strerror(errno));
	struct range r5 = { F_SETLK, F_WRLCK, 5, 1 };
	CHECK(in_child(child_setlk, &r5) == 1, "posix_conflict_eagain", "child got the lock");
	struct range r10 = { F_SETLK, F_RDLCK, 10, 5 };
	CHECK(in_child(child_setlk, &r10) == 0, "posix_no_overlap", "conflict");
	want = (struct flock){ .l_type = F_WRLCK, .l_start = 0, .l_len = 10, .l_pid = -2 };
	struct range g = { F_GETLK, F_RDLCK, 3, 1 };
	CHECK(in_child(child_getlk, &g) == 0, "getlk_reports_holder", "wrong F_GETLK contents");
	struct flock own = getlk(p, F_GETLK, F_WRLCK, 0, 10);
	CHECK(own.l_type == F_UNLCK, "getlk_own_lock_no_conflict", "type %d", own.l_type);
	struct flock bad = { .l_type = F_UNLCK, .l_whence = SEEK_SET };
	EXPECT_ERR(fcntl(p, F_GETLK, &bad), EINVAL, "getlk_unlck_einval");

	/* own ranges: RD [0,100) then WR [20,30) splits it */
	CHECK(setlk(p, F_SETLK, F_UNLCK, 0, 0) == 0 && setlk(p, F_SETLK, F_RDLCK, 0, 100) == 0 &&
		      setlk(p, F_SETLK, F_WRLCK, 20, 10) == 0,
	      "posix_split_by_type", "%s", strerror(errno));
	want = (struct flock){ .l_type = F_WRLCK, .l_start = 20, .l_len = 10, .l_pid = -2 };
	g = (struct range){ F_GETLK, F_RDLCK, 0, 100 };
	CHECK(in_child(child_getlk, &g) == 0, "getlk_split_middle", "wrong F_GETLK contents");
	want = (struct flock){ .l_type = F_RDLCK, .l_start = 30, .l_len = 70, .l_pid = -2 };
	g = (struct range){ F_GETLK, F_WRLCK, 50, 1 };
	CHECK(in_child(child_getlk, &g) == 0, "getlk_split_right", "wrong F_GETLK contents");
	/* RD again over the middle: merged back into one RD [0,100) */
	CHECK(setlk(p, F_SETLK, F_RDLCK, 20, 10) == 0, "posix_downgrade", "%s", strerror(errno));
	want = (struct flock){ .l_type = F_RDLCK, .l_start = 0, .l_len = 100, .l_pid = -2 };
	g = (struct range){ F_GETLK, F_WRLCK, 0, 200 };
	CHECK(in_child(child_getlk, &g) == 0, "getlk_merged", "wrong F_GETLK contents");
	/* a hole punched by an unlock */
	CHECK(setlk(p, F_SETLK, F_UNLCK, 40, 20) == 0, "posix_unlock_hole", "%s", strerror(errno));
	want = (struct flock){ .l_type = F_UNLCK };
	g = (struct range){ F_GETLK, F_WRLCK, 40, 20 };
	CHECK(in_child(child_getlk, &g) == 0, "getlk_hole_free", "hole is locked");
	/* to EOF */
	CHECK(setlk(p, F_SETLK, F_UNLCK, 0, 0) == 0 && setlk(p, F_SETLK, F_WRLCK, 1000, 0) == 0,
	      "posix_to_eof", "%s", strerror(errno));
	want = (struct flock){ .l_type = F_WRLCK, .l_start = 1000, .l_len = 0, .l_pid = -2 };
	g = (struct range){ F_GETLK, F_RDLCK, 5000, 1 };
	CHECK(in_child(child_getlk, &g) == 0, "getlk_to_eof", "wrong F_GETLK contents");
	setlk(p, F_SETLK, F_UNLCK, 0, 0);

	/* argument errors */
	int ro = openf(O_RDONLY), wo = openf(O_WRONLY);
	EXPECT_ERR(setlk(ro, F_SETLK, F_WRLCK, 0, 1), EBADF, "wrlck_on_rdonly_ebadf");
	EXPECT_ERR(setlk(wo, F_SETLK, F_RDLCK, 0, 1), EBADF, "rdlck_on_wronly_ebadf");
	struct flock w = { .l_type = F_WRLCK, .l_whence = 7 };
	EXPECT_ERR(fcntl(p, F_SETLK, &w), EINVAL, "bad_whence_einval");
	w = (struct flock){ .l_type = 99, .l_whence = SEEK_SET };
	EXPECT_ERR(fcntl(p, F_SETLK, &w), EINVAL, "bad_type_einval");
	w = (struct flock){ .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = -5 };
	EXPECT_ERR(fcntl(p, F_SETLK, &w), EINVAL, "negative_start_einval");
	EXPECT_ERR(fcntl(p, F_SETLK, (struct flock *)8), EFAULT, "setlk_efault");
	EXPECT_ERR(setlk(999, F_SETLK, F_WRLCK, 0, 1), EBADF, "setlk_ebadf");
	close(ro);
	close(wo);

	/* release on close (no other fd of this process on the file) */
	CHECK(setlk(p, F_SETLK, F_WRLCK, 0, 0) == 0, "posix_lock_before_close", "%s", strerror(errno));
	close(p);
	CHECK(in_child(child_setlk, &wr_all) == 0, "posix_released_on_close", "still locked");

	/* release on exit (POSIX and flock) */
	if (in_child(child_lock_and_exit, NULL) != 0)
		t_fail("locks_released_on_exit", "child could not lock");
	else {
		wait_ready();
		int x = openf(O_RDWR);
		CHECK(setlk(x, F_SETLK, F_WRLCK, 0, 0) == 0 && flock(x, LOCK_EX | LOCK_NB) == 0,
		      "locks_released_on_exit", "%s", strerror(errno));
		close(x);
	}

	/* ---- OFD locks ---- */
	int o1 = openf(O_RDWR), o2 = openf(O_RDWR);
	CHECK(setlk(o1, F_OFD_SETLK, F_WRLCK, 0, 10) == 0, "ofd_wrlck", "%s", strerror(errno));
	EXPECT_ERR(setlk(o2, F_OFD_SETLK, F_WRLCK, 5, 1), EAGAIN, "ofd_conflict_same_process");
	EXPECT_ERR(setlk(o2, F_SETLK, F_RDLCK, 0, 1), EAGAIN, "ofd_vs_posix_same_process");
	int od = dup(o1);
	CHECK(setlk(od, F_OFD_SETLK, F_RDLCK, 0, 5) == 0, "ofd_dup_same_owner", "%s", strerror(errno));
	close(od);
	struct flock ol = getlk(o2, F_OFD_GETLK, F_RDLCK, 0, 100);
	CHECK(ol.l_type == F_WRLCK && ol.l_start == 5 && ol.l_len == 5 && ol.l_pid == -1,
	      "ofd_getlk_pid_minus_one", "type %d start %ld len %ld pid %d", ol.l_type,
	      (long)ol.l_start, (long)ol.l_len, (int)ol.l_pid);
	struct flock op_ = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_pid = 1 };
	EXPECT_ERR(fcntl(o2, F_OFD_SETLK, &op_), EINVAL, "ofd_lpid_einval");
	close(o1);
	CHECK(setlk(o2, F_OFD_SETLK, F_WRLCK, 0, 10) == 0, "ofd_released_on_close", "%s", strerror(errno));
	/* the holder's fd moved (dup, close, its number taken by another
	 * file): held while an fd holds the description, released with the
	 * last (under moat the fd number remembered is stale: the holder
	 * scan finds the description, then finds it gone) */
	int m1 = openf(O_RDWR);
	CHECK(setlk(m1, F_OFD_SETLK, F_WRLCK, 20, 5) == 0, "ofd_moved_setup", "%s", strerror(errno));
	int m2 = fcntl(m1, F_DUPFD_CLOEXEC, 60);
	close(m1);
	int filler = open("/dev/null", O_RDONLY | O_CLOEXEC);
	EXPECT_ERR(setlk(o2, F_OFD_SETLK, F_WRLCK, 20, 1), EAGAIN, "ofd_moved_holder_kept");
	close(m2);
	CHECK(setlk(o2, F_OFD_SETLK, F_WRLCK, 20, 1) == 0, "ofd_moved_holder_closed_released", "%s",
	      strerror(errno));
	if (filler >= 0)
		close(filler);

	/* red team 44: a description held by no fd, but by an mmap of the
	 * file or by an SCM_RIGHTS message in flight, keeps its locks (Linux
	 * drops them at the description's last reference); under moat, a
	 * holder scan that found no guest fd on it dropped them */
	int mf = openf(O_RDWR);
	CHECK(flock(mf, LOCK_EX) == 0, "flock_mmap_setup", "%s", strerror(errno));
	void *map = mmap(NULL, 4096, PROT_READ, MAP_SHARED, mf, 0);
	CHECK(map != MAP_FAILED, "flock_mmap_map", "%s", strerror(errno));
	close(mf);
	op = LOCK_EX | LOCK_NB;
	CHECK(in_child(child_flock, &op) == 1, "flock_mmap_held_kept", "child could lock");
	/* a waiter blocked behind it is woken at the munmap */
	pid_t mw = fork();
	if (mw == 0) {
		if (map != MAP_FAILED)
			munmap(map, 4096); /* (its copy of the mapping holds it too) */
		_exit(child_flock_wait(NULL));
	}
	wait_ready();
	msleep(150);
	int mst = -1;
	CHECK(waitpid(mw, &mst, WNOHANG) == 0, "flock_mmap_waiter_blocks", "child did not wait");
	if (map != MAP_FAILED)
		munmap(map, 4096);
	waitpid(mw, &mst, 0);
	CHECK(WIFEXITED(mst) && WEXITSTATUS(mst) == 0, "flock_mmap_waiter_woken_by_munmap", "status %#x", mst);
	CHECK(in_child(child_flock, &op) == 0, "flock_mmap_unmapped_released", "still locked");
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		DIE("socketpair");
	int fl1 = openf(O_RDWR);
	CHECK(setlk(fl1, F_OFD_SETLK, F_WRLCK, 40, 5) == 0, "ofd_in_flight_setup", "%s", strerror(errno));
	CHECK(send_fd(sv[0], fl1) == 0, "ofd_in_flight_send", "%s", strerror(errno));
	close(fl1);
	EXPECT_ERR(setlk(o2, F_OFD_SETLK, F_WRLCK, 40, 1), EAGAIN, "ofd_in_flight_kept");
	int got = recv_fd(sv[1]);
	CHECK(got >= 0, "ofd_in_flight_recv", "%s", strerror(errno));
	EXPECT_ERR(setlk(o2, F_OFD_SETLK, F_WRLCK, 40, 1), EAGAIN, "ofd_received_kept");
	if (got >= 0)
		close(got);
	CHECK(setlk(o2, F_OFD_SETLK, F_WRLCK, 40, 1) == 0 && setlk(o2, F_OFD_SETLK, F_UNLCK, 0, 0) == 0,
	      "ofd_received_closed_released", "%s", strerror(errno));
	/* a message never received goes with the sockets: released */
	fl1 = openf(O_RDWR);
	CHECK(setlk(fl1, F_OFD_SETLK, F_WRLCK, 40, 5) == 0 && send_fd(sv[0], fl1) == 0,
	      "ofd_in_flight_setup2", "%s", strerror(errno));
	close(fl1);
	EXPECT_ERR(setlk(o2, F_OFD_SETLK, F_WRLCK, 40, 1), EAGAIN, "ofd_in_flight_kept2");
	close(sv[0]);
	close(sv[1]);
	CHECK(setlk(o2, F_OFD_SETLK, F_WRLCK, 40, 1) == 0 && setlk(o2, F_OFD_SETLK, F_UNLCK, 0, 0) == 0,
	      "ofd_in_flight_dropped_released", "%s", strerror(errno));
	/* a stream socket at EOF: in flight while the message is queued,
	 * released once it is read (EOF alone holds nothing) */
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		DIE("socketpair");
	fl1 = openf(O_RDWR);
	CHECK(setlk(fl1, F_OFD_SETLK, F_WRLCK, 40, 5) == 0 && send_fd(sv[0], fl1) == 0,
	      "ofd_in_flight_setup3", "%s", strerror(errno));
	close(fl1);
	shutdown(sv[0], SHUT_WR);
	EXPECT_ERR(setlk(o2, F_OFD_SETLK, F_WRLCK, 40, 1), EAGAIN, "ofd_in_flight_kept_at_eof");
	got = recv_fd(sv[1]);
	if (got >= 0)
		close(got);
	CHECK(got >= 0 && setlk(o2, F_OFD_SETLK, F_WRLCK, 40, 1) == 0, "ofd_released_beside_eof_socket", "%s",
	      strerror(errno));
	close(sv[0]);
	close(sv[1]);
	close(o2);

	/* ---- blocking waits ---- */
	int h = openf(O_RDWR);
	setlk(h, F_SETLK, F_WRLCK, 0, 1);
	{
		pid_t c = fork();
		if (c == 0) {
			struct range rw = { F_SETLKW, F_WRLCK, 0, 1 };
			_exit(child_setlkw(&rw));
		}
		wait_ready();
		msleep(150);
		int st = -1;
		CHECK(waitpid(c, &st, WNOHANG) == 0, "setlkw_blocks", "child did not wait");
		setlk(h, F_SETLK, F_UNLCK, 0, 1);
		waitpid(c, &st, 0);
		CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "setlkw_woken_by_unlock", "status %#x", st);
	}
	flock(h, LOCK_EX);
	{
		pid_t c = fork();
		if (c == 0)
			_exit(child_flock_wait(NULL));
		wait_ready();
		msleep(150);
		int st = -1;
		CHECK(waitpid(c, &st, WNOHANG) == 0, "flock_blocks", "child did not wait");
		flock(h, LOCK_UN);
		waitpid(c, &st, 0);
		CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "flock_woken_by_unlock", "status %#x", st);
	}
	/* EINTR by a handler without SA_RESTART */
	setlk(h, F_SETLK, F_WRLCK, 0, 1);
	flock(h, LOCK_EX);
	int zero = 0, one = 1;
	CHECK(in_child(child_eintr, &zero) == 0, "setlkw_eintr", "not interrupted");
	CHECK(in_child(child_eintr, &one) == 0, "flock_eintr", "not interrupted");
	flock(h, LOCK_UN);

	/* EDEADLK: we hold [0,0], the child holds [1,1] and waits for [0,0] */
	{
		pid_t c = fork();
		if (c == 0)
			_exit(child_deadlock(NULL));
		wait_ready();
		msleep(150);
		EXPECT_ERR(setlk(h, F_SETLKW, F_WRLCK, 1, 1), EDEADLK, "setlkw_edeadlk");
		setlk(h, F_SETLK, F_UNLCK, 0, 0);
		int st = -1;
		waitpid(c, &st, 0);
		CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "deadlock_child_gets_lock", "status %#x", st);
	}

	/* ---- the rest of fcntl is untouched ---- */
	CHECK(fcntl(h, F_GETLEASE) == F_UNLCK, "getlease_none", "%s", strerror(errno));
	int fl = fcntl(h, F_GETFL);
	CHECK(fl >= 0 && (fl & O_ACCMODE) == O_RDWR && fcntl(h, F_SETFL, fl | O_APPEND) == 0 &&
		      (fcntl(h, F_GETFL) & O_APPEND),
	      "getfl_setfl", "%s", strerror(errno));
	int nd = fcntl(h, F_DUPFD_CLOEXEC, 50);
	CHECK(nd >= 50 && (fcntl(nd, F_GETFD) & FD_CLOEXEC), "dupfd_cloexec", "%s", strerror(errno));
	close(nd);
	close(h);
	return t_done();
}
