/* pidfd_ns.c - ioctl(pidfd, PIDFD_GET_*_NAMESPACE) (Linux 6.11) gets a
 * namespace fd only after a ptrace read check of the pidfd's process: a
 * process that dropped root is refused root's processes (EACCES). moat saw
 * one host uid and handed out the fds (red team round 11); its check is on
 * the virtual ids (syscalls/sys_signal.c sc_pidfd_ns_ioctl). */
#include "t.h"
#include <signal.h>
#include <sys/ioctl.h>

#define PIDFD_NS(n) _IO(0xFF, (n)) /* 1 cgroup .. 10 uts */

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
