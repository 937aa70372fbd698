/*
 * race_pidfd: pidfd_send_signal with a siginfo on an fd number another
 * thread keeps swapping between a pidfd of the caller's own child and a
 * pidfd of a root process. NOT a differential test: an isolation probe
 * (tests/integration/isolation_race.sh).
 *
 *   race_pidfd [SECONDS]   (run as root: the work runs as 1000:1000)
 *
 * Linux takes the target and checks it in one call: the root process never
 * gets the signal (EPERM whenever the number held its pidfd). A sandbox that
 * checks the target it read from the fd and then lets the call run natively
 * on the fd number (red team round 9) delivers some of them. The root
 * process counts SIGUSR2 (SI_QUEUE); prints "ok race_pidfd ..." (exit 0) or
 * "FAIL race_pidfd: ..." (exit 1).
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "race.h"

#define N 50
static int own = -1, rootfd = -1;
static volatile sig_atomic_t got;

static void on_usr2(int s)
{
	(void)s;
	got++;
}

int main(int argc, char **argv)
{
	int secs = argc > 1 ? atoi(argv[1]) : 2;
	if (geteuid() != 0) {
		printf("ok race_pidfd (skipped: not root)\n");
		return 0;
	}
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_usr2;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGUSR2, &sa, NULL);
	pid_t root = getpid();
	int res[2];
	if (pipe(res) < 0)
		return 1;
	pid_t d = fork();
	if (d == 0) {
		signal(SIGUSR2, SIG_IGN); /* its child ignores it too */
		if (setresgid(1000, 1000, 1000) || setresuid(1000, 1000, 1000))
			_exit(3);
		pid_t e = fork();
		if (e == 0) {
			for (;;)
				pause();
		}
		own = (int)syscall(SYS_pidfd_open, e, 0);
		rootfd = (int)syscall(SYS_pidfd_open, root, 0);
		siginfo_t si;
		memset(&si, 0, sizeof si);
		si.si_signo = SIGUSR2;
		si.si_code = SI_QUEUE;
		long direct = syscall(SYS_pidfd_send_signal, rootfd, SIGUSR2, &si, 0);
		int derr = errno;
		struct race_flip fl;
		race_flip_start(&fl, own, rootfd, N);
		long sent = 0;
		double end = race_now() + secs;
		while (race_now() < end)
			if (syscall(SYS_pidfd_send_signal, N, SIGUSR2, &si, 0) == 0)
				sent++;
		race_flip_end(&fl);
		kill(e, SIGKILL);
		waitpid(e, NULL, 0);
		long out[2] = { direct == -1 && derr == EPERM, sent };
		write(res[1], out, sizeof out);
		_exit(0);
	}
	close(res[1]);
	long out[2] = { 0, 0 };
	ssize_t n;
	while ((n = read(res[0], out, sizeof out)) < 0 && errno == EINTR)
		;
	waitpid(d, NULL, 0);
	usleep(100000);
	if (n != sizeof out || !out[0]) {
		printf("FAIL race_pidfd: the direct send to root's process was not EPERM\n");
		return 1;
	}
	if (got) {
		printf("FAIL race_pidfd: root's process got %d of the signals (%ld sends succeeded)\n", (int)got,
		       out[1]);
		return 1;
	}
	printf("ok race_pidfd (%ld sends to its own child)\n", out[1]);
	return 0;
}
