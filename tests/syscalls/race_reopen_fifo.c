/*
 * race_reopen_fifo: a synthesised file's read-only reopen against a thread
 * that puts a FIFO at the new fd's number. NOT a differential test: an
 * isolation probe (tests/integration/isolation_race.sh).
 *
 *   race_reopen_fifo [SECONDS]
 *
 * An open of /proc/self/status (a sealed memfd the sentry makes) is
 * installed in the guest read-write and reopened read-only through the
 * guest procfs at its fd number (syscalls/sys_file.c return_reopened).
 * Another thread watches that number and dup2()s the read end of a FIFO
 * without a writer onto it as soon as a regular file shows up there. A
 * reopen that follows the number without O_NONBLOCK blocks the sentry's
 * worker in fifo_open for good (red team round 10: the guest's open never
 * returned, and moat ignored SIGTERM until killed). A watchdog thread sees
 * the open loop stall, opens the FIFO for writing (which frees the worker)
 * and reports. The racer and the opener are pinned to different CPUs (on
 * two CPUs the guest thread that installs the fd otherwise preempts the
 * racer until the reopen is done). Natively the open never involves a
 * FIFO: the probe passes. Prints "ok race_reopen_fifo ..." (exit 0) or
 * "FAIL race_reopen_fifo: ..." (exit 1).
 */
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static atomic_int stop;
static atomic_long opens;
static int fifo_rd = -1, num = -1;
static char fifo_path[64];

static void pin(int cpu)
{
	cpu_set_t s;
	CPU_ZERO(&s);
	CPU_SET(cpu, &s);
	(void)sched_setaffinity(0, sizeof s, &s);
}

static void *racer(void *a)
{
	struct stat st;
	(void)a;
	pin(1);
	while (!stop)
		if (fstat(num, &st) == 0 && S_ISREG(st.st_mode))
			dup2(fifo_rd, num);
	return NULL;
}

static void *watchdog(void *a)
{
	long last = -1;
	int still = 0;
	(void)a;
	while (!stop) {
		sleep(1);
		long n = atomic_load(&opens);
		if (n != last) {
			last = n;
			still = 0;
			continue;
		}
		if (++still < 3)
			continue;
		/* stalled: report, then free whatever waits for a writer (the
		 * open may itself wait behind the stuck one) */
		printf("FAIL race_reopen_fifo: an open of /proc/self/status stalled for 3 s after %ld opens "
		       "(the reopen waited for the FIFO's writer)\n", n);
		fflush(stdout);
		(void)open(fifo_path, O_WRONLY | O_NONBLOCK);
		_exit(1);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int secs = argc > 1 ? atoi(argv[1]) : 2;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	pthread_t t, w;

	snprintf(fifo_path, sizeof fifo_path, "/tmp/race_reopen_fifo.%d", (int)getpid());
	unlink(fifo_path);
	if (mkfifo(fifo_path, 0666) < 0 || chmod(fifo_path, 0666) < 0) {
		printf("FAIL race_reopen_fifo: mkfifo\n");
		return 1;
	}
	fifo_rd = open(fifo_path, O_RDONLY | O_NONBLOCK);
	num = open("/dev/null", O_RDONLY);
	if (fifo_rd < 0 || num < 0) {
		printf("FAIL race_reopen_fifo: set-up\n");
		return 1;
	}
	close(num);
	if (cpus >= 2)
		pin(0);
	pthread_create(&t, NULL, racer, NULL);
	pthread_create(&w, NULL, watchdog, NULL);
	time_t t0 = time(NULL);
	long fifos = 0;
	while (time(NULL) - t0 < secs) {
		close(num);
		int fd = open("/proc/self/status", O_RDONLY);
		struct stat st;
		if (fd >= 0 && fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode))
			fifos++;
		if (fd >= 0 && fd != num)
			close(fd);
		atomic_fetch_add(&opens, 1);
	}
	stop = 1;
	pthread_join(t, NULL);
	unlink(fifo_path);
	printf("ok race_reopen_fifo (%ld opens, %ld with the FIFO swapped in after)\n", atomic_load(&opens), fifos);
	return 0;
}
