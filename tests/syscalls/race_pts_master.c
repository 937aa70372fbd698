/*
 * race_pts_master: a pty master's TIOCGPTPEER and TIOCSIG on an fd number
 * another thread keeps swapping between a master of the sandbox's own
 * devpts (/dev/ptmx) and the caller's pty master given as stdin. NOT a
 * differential test: an isolation probe (tests/integration/isolation_race.sh).
 *
 *   race_pts_master [SECONDS]   (stdin: the caller's pty master)
 *
 * The caller's master is the caller's terminal: its slave's keystrokes,
 * its slave's foreground job. The sandbox refuses the master's requests on
 * it (EPERM) and makes them on its own ptys' masters only; a sandbox that
 * checks the file the fd held and then lets the call run natively on the fd
 * number opens the caller's slave once a swap falls between the two (pts39:
 * before, TIOCGPTPEER's slave was then of the caller's devpts, not the
 * sandbox's). Every slave got is fstat'ed: one that is not the sandbox's
 * own slave (another devpts, or another pty of it: its st_dev or st_rdev
 * differs) is the caller's. Natively both masters are of one devpts and the
 * caller's slave is another pty of it: the probe says "reached" there.
 * Prints "held ..." (exit 0) or "reached ..." (exit 1); "setup: ..."
 * (exit 2).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>
#include "race.h"

#define N 50
static volatile int stop;
static int own = -1;

static void *flip(void *a)
{
	(void)a;
	while (!stop) {
		dup2(own, N);
		dup2(0, N);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 2;
	struct stat caller, mine, st;

	own = posix_openpt(O_RDWR | O_NOCTTY);
	if (own < 0 || fstat(0, &caller) < 0 || unlockpt(own) < 0) {
		printf("setup: own pty or stdin: %d\n", errno);
		return 2;
	}
	int s = ioctl(own, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (s < 0 || fstat(s, &mine) < 0) {
		printf("setup: TIOCGPTPEER on the sandbox's own master: %d\n", errno);
		return 2;
	}
	close(s);
	if (caller.st_dev == mine.st_dev) {
		printf("setup: stdin is a master of the sandbox's own devpts\n");
		return 2;
	}
	if (dup2(own, N) < 0) {
		printf("setup: dup2: %d\n", errno);
		return 2;
	}
	pthread_t t;
	if (pthread_create(&t, NULL, flip, NULL)) {
		printf("setup: thread\n");
		return 2;
	}
	long tries = 0, own_ok = 0, eperm = 0, reached = 0, sig_ok = 0, other = 0;
	int last = 0, sig_err = 0;
	double end = race_now() + secs;
	while (race_now() < end) {
		tries++;
		int fd = ioctl(N, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC | O_NONBLOCK);
		if (fd >= 0) {
			if (fstat(fd, &st) == 0 && (st.st_dev != mine.st_dev || st.st_rdev != mine.st_rdev))
				reached++;
			else
				own_ok++;
			close(fd);
		} else if (errno == EPERM) {
			eperm++;
		} else {
			other++;
			last = errno;
		}
		/* SIGINT to the slave's foreground group: none on the
		 * sandbox's own pty (no session) */
		if (ioctl(N, TIOCSIG, 2) == 0)
			sig_ok++;
		else
			sig_err = errno;
	}
	stop = 1;
	pthread_join(t, NULL);
	printf("%s tries=%ld own=%ld eperm=%ld reached=%ld other=%ld (errno %d) sig_ok=%ld (errno %d)\n",
	       reached ? "reached" : "held", tries, own_ok, eperm, reached, other, last, sig_ok, sig_err);
	return reached ? 1 : 0;
}
