/*
 * race_pidfd_ns: ioctl(N, PIDFD_GET_NET_NAMESPACE) on an fd number another
 * thread keeps swapping between /dev/null and a pidfd of a root process,
 * as a process that dropped root. NOT a differential test: an isolation
 * probe (tests/integration/isolation_race.sh).
 *
 *   race_pidfd_ns [SECONDS]   (run as root: the work runs as 1000:1000)
 *
 * Linux looks the file up once and checks the pidfd's process there: the
 * call is ENOTTY (/dev/null) or EACCES (root's pidfd), never a namespace
 * fd. A sandbox that checks what the number held and then lets the call
 * run natively on the number (pts39's gap: sc_pidfd_ns_ioctl CONTINUE'd
 * after finding no pidfd, or a pidfd it allowed) hands out root's
 * namespace. Prints "ok race_pidfd_ns ..." (exit 0) or "FAIL
 * race_pidfd_ns: ..." (exit 1).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
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
static volatile int stop;
static int nul = -1, rootfd = -1;

static void *flip(void *a)
{
	(void)a;
	while (!stop) {
		dup2(nul, N);
		dup2(rootfd, N);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int secs = argc > 1 ? atoi(argv[1]) : 2;
	if (geteuid() != 0) {
		printf("ok race_pidfd_ns (skipped: not root)\n");
		return 0;
	}
	pid_t root = getpid();
	int res[2];
	if (pipe(res) < 0)
		return 1;
	pid_t d = fork();
	if (d == 0) {
		long out[4] = { 0, 0, 0, 0 }; /* direct errno, leaks, ENOTTY, EACCES */
		if (setresgid(1000, 1000, 1000) || setresuid(1000, 1000, 1000))
			_exit(3);
		nul = open("/dev/null", O_RDONLY | O_CLOEXEC);
		rootfd = (int)syscall(SYS_pidfd_open, root, 0);
		errno = 0;
		int f = ioctl(rootfd, PIDFD_GET_NET_NS, 0);
		out[0] = f >= 0 ? -1 : errno;
		if (f >= 0)
			close(f);
		if (out[0] == EACCES) {
			pthread_t th;
			pthread_create(&th, NULL, flip, NULL);
			double end = race_now() + secs;
			while (race_now() < end) {
				f = ioctl(N, PIDFD_GET_NET_NS, 0);
				if (f >= 0) {
					out[1]++;
					close(f);
				} else if (errno == ENOTTY) {
					out[2]++;
				} else if (errno == EACCES) {
					out[3]++;
				}
			}
			stop = 1;
			pthread_join(th, NULL);
		}
		if (write(res[1], out, sizeof out) != sizeof out)
			_exit(1);
		_exit(0);
	}
	close(res[1]);
	long out[4] = { 0, 0, 0, 0 };
	ssize_t n;
	while ((n = read(res[0], out, sizeof out)) < 0 && errno == EINTR)
		;
	waitpid(d, NULL, 0);
	if (n != sizeof out) {
		printf("FAIL race_pidfd_ns: no report from the child\n");
		return 1;
	}
	if (out[0] == ENOTTY || out[0] == EINVAL) {
		printf("ok race_pidfd_ns (skipped: no PIDFD_GET_NET_NAMESPACE here)\n");
		return 0;
	}
	if (out[0] != EACCES) {
		printf("FAIL race_pidfd_ns: the direct request on root's pidfd was not EACCES (%s)\n",
		       out[0] < 0 ? "a namespace fd" : strerror((int)out[0]));
		return 1;
	}
	if (out[1]) {
		printf("FAIL race_pidfd_ns: %ld of the swapped requests got root's namespace (%ld ENOTTY, %ld EACCES)\n",
		       out[1], out[2], out[3]);
		return 1;
	}
	printf("ok race_pidfd_ns (%ld ENOTTY, %ld EACCES, none got root's namespace)\n", out[2], out[3]);
	return 0;
}
