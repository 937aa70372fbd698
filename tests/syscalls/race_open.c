/*
 * race_open: the TOCTOU probe.  NOT a differential test: run natively it
 * must FAIL (the forbidden file is there); under moat it must pass.
 *
 *   race_open MODE SCRATCH FORBIDDEN [SECONDS]
 *     MODE       open | stat | exec
 *     SCRATCH    writable directory (the allowed file is created there)
 *     FORBIDDEN  a host path outside the guest's view (e.g. /etc/shadow, or a
 *                canary under /root or the caller's home; for exec: an
 *                executable canary that exits 99)
 *
 * One thread flips a shared path buffer between an allowed path and
 * FORBIDDEN, as fast as it can, while worker threads hand that very buffer to
 * open(2) / stat(2) / execve(2).  A sandbox that checks the path and then lets
 * the kernel re-read guest memory (SECCOMP_USER_NOTIF_FLAG_CONTINUE) loses this
 * race; one that acts on its own copy never does.
 *
 * Leak = open succeeds and the data is not the allowed file's; stat succeeds
 * with another inode; exec runs the canary (exit 99).
 * Prints "ok race_MODE ..." and exits 0 when there was no leak and the allowed
 * path did succeed; "FAIL race_MODE: ..." and exit 1 otherwise.
 */
#include "t.h"
#include <pthread.h>
#include <time.h>

#define ALLOWED_CONTENT "ALLOWED-CONTENT\n"
#define NWORKERS 3

static char path_buf[PATH_MAX];
static char allowed[PATH_MAX], forbidden[PATH_MAX];
static volatile int stop;
static long attempts, successes, leaks;
static struct stat allowed_st;
static const char *mode;

static void *flipper(void *arg)
{
	(void)arg;
	size_t la = strlen(allowed) + 1, lf = strlen(forbidden) + 1;
	while (!stop) {
		memcpy(path_buf, forbidden, lf);
		__asm__ volatile("" ::: "memory");
		memcpy(path_buf, allowed, la);
		__asm__ volatile("" ::: "memory");
	}
	return NULL;
}

static void *open_worker(void *arg)
{
	(void)arg;
	char buf[64];
	while (!stop) {
		__atomic_add_fetch(&attempts, 1, __ATOMIC_RELAXED);
		int fd = open(path_buf, O_RDONLY);
		if (fd < 0)
			continue;
		ssize_t n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		buf[n > 0 ? n : 0] = 0;
		if (strcmp(buf, ALLOWED_CONTENT) == 0)
			__atomic_add_fetch(&successes, 1, __ATOMIC_RELAXED);
		else
			__atomic_add_fetch(&leaks, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static void *stat_worker(void *arg)
{
	(void)arg;
	struct stat st;
	while (!stop) {
		__atomic_add_fetch(&attempts, 1, __ATOMIC_RELAXED);
		if (stat(path_buf, &st) != 0)
			continue;
		if (st.st_ino == allowed_st.st_ino && st.st_dev == allowed_st.st_dev)
			__atomic_add_fetch(&successes, 1, __ATOMIC_RELAXED);
		else
			__atomic_add_fetch(&leaks, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

/* exec: each round forks a child that races its own flipper against execve. */
static int exec_round(void)
{
	pid_t pid = fork();
	if (pid == 0) {
		pthread_t f;
		pthread_create(&f, NULL, flipper, NULL);
		char *av[] = {"race", NULL}, *ev[] = {NULL};
		for (int i = 0; i < 20; i++)
			execve(path_buf, av, ev);
		_exit(127);
	}
	int status;
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: race_open open|stat|exec SCRATCH FORBIDDEN [SECONDS]\n");
		return 2;
	}
	mode = argv[1];
	double seconds = argc > 4 ? atof(argv[4]) : 5.0;
	snprintf(forbidden, sizeof(forbidden), "%s", argv[3]);
	setvbuf(stdout, NULL, _IOLBF, 0);

	if (!strcmp(mode, "exec")) {
		snprintf(allowed, sizeof(allowed), "/bin/true");
		memcpy(path_buf, allowed, strlen(allowed) + 1);
		double end = now() + seconds;
		long rounds = 0, ok0 = 0, canary = 0;
		while (now() < end && rounds < 20000) {
			int r = exec_round();
			rounds++;
			if (r == 0)
				ok0++;
			else if (r == 99)
				canary++;
		}
		if (canary || !ok0) {
			printf("FAIL race_exec: %ld rounds, %ld ran the allowed binary, %ld ran the forbidden one\n",
			       rounds, ok0, canary);
			return 1;
		}
		printf("ok race_exec (%ld rounds, %ld allowed, 0 leaks)\n", rounds, ok0);
		return 0;
	}

	snprintf(allowed, sizeof(allowed), "%s/race_allowed.%d", argv[2], (int)getpid());
	if (t_write_file(allowed, ALLOWED_CONTENT, 0644) != 0 || stat(allowed, &allowed_st) != 0) {
		printf("FAIL race_%s: cannot create %s: %s\n", mode, allowed, strerror(errno));
		return 1;
	}
	memcpy(path_buf, allowed, strlen(allowed) + 1);
	void *(*work)(void *) = !strcmp(mode, "open") ? open_worker : !strcmp(mode, "stat") ? stat_worker : NULL;
	if (!work) {
		fprintf(stderr, "race_open: unknown mode %s\n", mode);
		unlink(allowed);
		return 2;
	}
	pthread_t f, w[NWORKERS];
	pthread_create(&f, NULL, flipper, NULL);
	for (int i = 0; i < NWORKERS; i++)
		pthread_create(&w[i], NULL, work, NULL);
	/* Run for SECONDS, but at least until 20000 attempts (capped at 6x SECONDS). */
	double start = now();
	while (!(now() - start >= seconds && __atomic_load_n(&attempts, __ATOMIC_RELAXED) >= 20000) &&
	       now() - start < seconds * 6)
		usleep(10000);
	stop = 1;
	pthread_join(f, NULL);
	for (int i = 0; i < NWORKERS; i++)
		pthread_join(w[i], NULL);
	unlink(allowed);
	if (leaks || !successes) {
		printf("FAIL race_%s: %ld attempts, %ld allowed, %ld reached the forbidden path\n", mode, attempts,
		       successes, leaks);
		return 1;
	}
	printf("ok race_%s (%ld attempts, %ld allowed, 0 leaks)\n", mode, attempts, successes);
	return 0;
}
