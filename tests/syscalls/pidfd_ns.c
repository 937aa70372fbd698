/* pidfd_ns.c - ioctl(pidfd, PIDFD_GET_*_NAMESPACE) (Linux 6.11) gets a
 * namespace fd only after a ptrace read check of the pidfd's process: a
 * process that dropped root is refused root's processes (EACCES). moat saw
 * one host uid and handed out the fds (red team round 11); its check is on
 * the virtual ids (syscalls/sys_signal.c sc_pidfd_ns_ioctl). */
#include "t.h"
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/stat.h>

#define PIDFD_NS(n) _IO(0xFF, (n)) /* 1 cgroup .. 10 uts */
#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL
#endif

static const char *const names[] = { "cgroup", "ipc", "mnt", "net", "pid", "pid_for_children",
				     "time", "time_for_children", "user", "uts" };
static const int types[] = { CLONE_NEWCGROUP, CLONE_NEWIPC, CLONE_NEWNS, CLONE_NEWNET, CLONE_NEWPID,
			     CLONE_NEWPID, CLONE_NEWTIME, CLONE_NEWTIME, CLONE_NEWUSER, CLONE_NEWUTS };
#define NS_GET_NSTYPE _IO(0xb7, 0x3)

/* each request on pfd gives a namespace fd of its type, close-on-exec (the
 * kernel's open_namespace), the one ino[] holds when set (else noted
 * there); pin40 made them the sentry's, on the file it pinned */
static void each_namespace(int pfd, const char *what, ino_t *ino)
{
	for (int n = 1; n <= 10; n++) {
		char name[96];
		struct stat a;
		snprintf(name, sizeof name, "%s_%s", what, names[n - 1]);
		errno = 0;
		int f = ioctl(pfd, PIDFD_NS(n), 0);
		if (f < 0 && errno == EOPNOTSUPP)
			continue; /* (a namespace the kernel lacks) */
		int ok = f >= 0 && fstat(f, &a) == 0 && ioctl(f, NS_GET_NSTYPE) == types[n - 1] &&
			 fcntl(f, F_GETFD) == FD_CLOEXEC && (!ino[n - 1] || ino[n - 1] == a.st_ino);
		CHECK(ok, name, "fd %d (%s)", f, strerror(errno));
		if (ok)
			ino[n - 1] = a.st_ino;
		if (f >= 0)
			close(f);
	}
}

static volatile pid_t thread_tid;

static void *idle(void *a)
{
	thread_tid = (pid_t)syscall(SYS_gettid);
	pause();
	return a;
}

int main(int argc, char **argv)
{
	t_setup(argc, argv, "pidfd_ns");
	int self = (int)syscall(SYS_pidfd_open, getpid(), 0);
	if (self < 0) {
		t_done();
		return T_SKIP;
	}
	errno = 0;
	int ns = ioctl(self, PIDFD_NS(9), 0); /* the user namespace */
	if (ns < 0 && errno == ENOTTY) { /* before Linux 6.11 */
		t_done();
		return T_SKIP;
	}
	CHECK(ns >= 0, "own_namespace_fd", "%s", strerror(errno));
	if (ns >= 0)
		close(ns);
	ino_t ino[10] = { 0 };
	each_namespace(self, "own", ino);
	/* a thread's pidfd (Linux 6.9): its namespaces */
	pthread_t th;
	pthread_create(&th, NULL, idle, NULL);
	for (int i = 0; i < 2000 && !thread_tid; i++)
		usleep(1000);
	pid_t tid = thread_tid;
	int tfd = tid ? (int)syscall(SYS_pidfd_open, tid, PIDFD_THREAD) : -1;
	if (tfd >= 0) {
		each_namespace(tfd, "thread", ino); /* the process's */
		close(tfd);
	}
	/* Linux's other answers: a nonzero argument EINVAL, no pidfd ENOTTY,
	 * no fd EBADF, a process gone ESRCH */
	errno = 0;
	CHECK(ioctl(self, PIDFD_NS(4), 1) == -1 && errno == EINVAL, "argument_einval", "%s", strerror(errno));
	int nul = open("/dev/null", O_RDONLY);
	errno = 0;
	CHECK(ioctl(nul, PIDFD_NS(4), 0) == -1 && errno == ENOTTY, "not_pidfd_enotty", "%s", strerror(errno));
	close(nul);
	errno = 0;
	CHECK(ioctl(nul, PIDFD_NS(4), 0) == -1 && errno == EBADF, "closed_ebadf", "%s", strerror(errno));
	pid_t z = fork();
	if (z == 0)
		_exit(0);
	int zfd = (int)syscall(SYS_pidfd_open, z, 0);
	waitpid(z, NULL, 0);
	errno = 0;
	CHECK(zfd >= 0 && ioctl(zfd, PIDFD_NS(4), 0) == -1 && errno == ESRCH, "gone_esrch", "%s", strerror(errno));
	if (zfd >= 0)
		close(zfd);
	if (geteuid() != 0)
		return t_done();
	/* a child that drops to uid 1000 asks for the root parent's */
	int p[2];
	if (pipe(p) < 0)
		return 1;
	pid_t parent = getpid();
	pid_t c = fork();
	if (c == 0) {
		close(p[0]);
		char r[64];
		if (setgid(1000) || setuid(1000)) {
			snprintf(r, sizeof r, "setuid %s", strerror(errno));
		} else {
			int pfd = (int)syscall(SYS_pidfd_open, parent, 0);
			int bad = 0, err = 0;
			for (int n = 1; n <= 10; n++) {
				errno = 0;
				int f = ioctl(pfd, PIDFD_NS(n), 0);
				if (f >= 0 || errno != EACCES) {
					bad = n;
					err = errno;
				}
				if (f >= 0)
					close(f);
			}
			if (bad)
				snprintf(r, sizeof r, "request %d: %s", bad, err ? strerror(err) : "a namespace fd");
			else
				snprintf(r, sizeof r, "refused");
		}
		if (write(p[1], r, strlen(r) + 1) < 0)
			_exit(1);
		_exit(0);
	}
	close(p[1]);
	char buf[64] = "";
	ssize_t n = read(p[0], buf, sizeof buf - 1);
	buf[n > 0 ? n : 0] = 0;
	waitpid(c, NULL, 0);
	CHECK(strcmp(buf, "refused") == 0, "dropped_refused_roots", "%s", buf);
	return t_done();
}
