/*
 * race_pidfd_ns: ioctl(N, PIDFD_GET_NET_NAMESPACE) on an fd number another
 * thread keeps swapping between /dev/null and a pidfd of a root process,
 * as a process that dropped root. NOT a differential test: an isolation
 * probe (tests/integration/isolation_race.sh).
 *
 *   race_pidfd_ns [SECONDS]   (run as root: the work runs as 1000:1000)
 *
 *   race_pidfd_ns SECONDS zombie   (a pidfd of its own zombie child, not
 *                                   /dev/null: a pidfd the check allows)
 *
 * Linux looks the file up once and checks the pidfd's process there: the
 * call is ENOTTY (/dev/null), ESRCH (the zombie) or EACCES (root's pidfd),
 * never a namespace fd. A sandbox that checks what the number held and
 * then lets the call run natively on the number (pts39's gap:
 * sc_pidfd_ns_ioctl CONTINUE'd after finding no pidfd, or a pidfd it
 * allowed) hands out root's namespace; with the zombie and the sentry's
 * test delay after its check (MOAT_TEST_PIDCALL_DELAY_MS) nearly every
 * allowed check did on main. Prints "ok race_pidfd_ns ..." (exit 0) or "FAIL
 * race_pidfd_ns: ..." (exit 1).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "race.h"

#define N 50
#define PIDFD_GET_NET_NS _IO(0xFF, 4)

int main(int argc, char **argv)
{
	int secs = argc > 1 ? atoi(argv[1]) : 2;
	int zombie = argc > 2 && strcmp(argv[2], "zombie") == 0;
	if (geteuid() != 0) {
		printf("ok race_pidfd_ns (skipped: not root)\n");
		return 0;
	}
	pid_t root = getpid(), d = fork();
	if (d > 0) { /* root's process, until its child has reported */
		int st = 0;
		waitpid(d, &st, 0);
		return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
	}
	if (d < 0 || setresgid(1000, 1000, 1000) || setresuid(1000, 1000, 1000))
		return 1;
	pid_t z = fork(); /* a zombie of its own: ESRCH (no namespaces left) */
	if (z == 0)
		_exit(0);
	int zfd = (int)syscall(SYS_pidfd_open, z, 0);
	siginfo_t si;
	waitid(P_PID, z, &si, WEXITED | WNOWAIT);
	int nul = zombie ? zfd : open("/dev/null", O_RDONLY | O_CLOEXEC);
	int rootfd = (int)syscall(SYS_pidfd_open, root, 0);
	errno = 0;
	int f = ioctl(rootfd, PIDFD_GET_NET_NS, 0);
	if (f < 0 && (errno == ENOTTY || errno == EINVAL)) {
		printf("ok race_pidfd_ns (skipped: no PIDFD_GET_NET_NAMESPACE here)\n");
		return 0;
	}
	if (f >= 0 || errno != EACCES) {
		printf("FAIL race_pidfd_ns: the direct request on root's pidfd was not EACCES (%s)\n",
		       f >= 0 ? "a namespace fd" : strerror(errno));
		return 1;
	}
	long leaks = 0, notty = 0, acces = 0;
	struct race_flip fl;
	race_flip_start(&fl, nul, rootfd, N);
	double end = race_now() + secs;
	while (race_now() < end) {
		f = ioctl(N, PIDFD_GET_NET_NS, 0);
		if (f >= 0) {
			leaks++;
			close(f);
		} else if (errno == ENOTTY || errno == ESRCH) {
			notty++;
		} else if (errno == EACCES) {
			acces++;
		}
	}
	race_flip_end(&fl);
	if (leaks) {
		printf("FAIL race_pidfd_ns: %ld of the swapped requests got root's namespace (%ld ENOTTY or ESRCH, %ld EACCES)\n",
		       leaks, notty, acces);
		return 1;
	}
	printf("ok race_pidfd_ns (%ld ENOTTY or ESRCH, %ld EACCES, none got root's namespace)\n", notty, acces);
	return 0;
}
