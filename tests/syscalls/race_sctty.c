/*
 * race_sctty: TIOCSCTTY on an fd number that holds a pty slave of the
 * sandbox's own devpts, while a thread sharing the fd table dup2()s the
 * caller's terminal (stdin: a pty slave no session has) onto the number and
 * then leaves the table (exit, or unshare(CLONE_FILES) first). NOT a
 * differential test: an isolation probe (tests/integration/isolation_race.sh).
 *
 *   race_sctty [SECONDS]   (stdin: the caller's pty slave, of no session)
 *
 * Each try is a child of its own that makes a new session, so that it may
 * take a controlling terminal. The sandbox lets TIOCSCTTY run natively on
 * the number only on a terminal of its own devpts and only while no other
 * task shares the caller's fd table (sc_fdtable_shared); a sandbox that
 * looks for the table's other users after pinning and checking the file
 * misses a thread that swapped the number after the pin and has left by
 * the look, and the kernel then makes the caller's terminal the guest
 * session's (cont41). A quarter of the tries make the call after the swap
 * (natively the caller's terminal is taken at once; the sandbox refuses
 * it, EPERM, on the pinned file). Reached: TIOCGSID on stdin answers (the caller's
 * terminal has a session: the child's). Natively nothing refuses the
 * caller's terminal: "reached" there.
 * Prints "held ..." (exit 0) or "reached ..." (exit 1); "setup: ..."
 * (exit 2).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "race.h"

#define N 50
static volatile int go, swapped;
static double delay; /* seconds after go */
static int leave_by_unshare;

static void *swap(void *a)
{
	(void)a;
	while (!go)
		;
	double t0 = race_now();
	while (race_now() - t0 < delay)
		;
	dup2(0, N);
	swapped = 1;
	if (leave_by_unshare)
		syscall(SYS_unshare, CLONE_FILES);
	syscall(SYS_exit, 0); /* this thread only: out of the table */
	return NULL;
}

/* one try in a new session: 1 reached, 0 held, 2 setup */
static int try_once(unsigned seed)
{
	pid_t pid = fork();
	if (pid < 0)
		return 2;
	if (pid == 0) {
		srand(seed);
		/* half the tries within the sentry's own window (tens of µs),
		 * half over a test delay's (MOAT_TEST_PIDCALL_DELAY_MS) */
		delay = (rand() % 2 ? 60e-6 : 2.5e-3) * (rand() / (double)RAND_MAX);
		leave_by_unshare = rand() % 2;
		int after = rand() % 4 == 0; /* a quarter: the call after the swap */
		if (setsid() < 0)
			_exit(2);
		int m = posix_openpt(O_RDWR | O_NOCTTY);
		if (m < 0 || unlockpt(m) < 0)
			_exit(2);
		int s = ioctl(m, TIOCGPTPEER, O_RDWR | O_NOCTTY);
		if (s < 0 || dup2(s, N) < 0)
			_exit(2);
		pthread_t th;
		if (pthread_create(&th, NULL, swap, NULL) != 0)
			_exit(2);
		go = 1;
		while (after && !swapped)
			;
		ioctl(N, TIOCSCTTY, 0);
		int sid;
		_exit(ioctl(0, TIOCGSID, &sid) == 0 ? 1 : 0);
	}
	int st;
	if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st))
		return 2;
	return WEXITSTATUS(st);
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 2;
	int sid;
	if (!isatty(0) || ioctl(0, TIOCGSID, &sid) == 0) {
		printf("setup: stdin is no terminal, or one a session has: %d\n", errno);
		return 2;
	}
	double end = race_now() + secs;
	unsigned tries = 0;
	while (race_now() < end) {
		int r = try_once(tries++);
		if (r == 2) {
			printf("setup: a try's child failed\n");
			return 2;
		}
		if (r == 1) {
			printf("reached race_sctty: the caller's terminal became a guest session's after %u tries\n",
			       tries);
			return 1;
		}
	}
	printf("held race_sctty: %u tries\n", tries);
	return 0;
}
