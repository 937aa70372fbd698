/*
 * probe_selfref: N threads, one after another, each naming itself by its own
 * thread id in the calls whose handler looks the named task up (prlimit64 of
 * RLIMIT_CORE, read and set, and of RLIMIT_NOFILE; sched_getattr;
 * sched_getaffinity/sched_setaffinity), then exiting.  Not differential:
 * tests/integration/sysfuzz.sh samples the sentry's fds around a run of it
 * (fuzz_self_named_released).  A reference kept per call keeps each thread's
 * task, its pidfd with it (fuzz87: prlimit64 of RLIMIT_CORE by the caller's
 * own tid, +1 sentry fd a thread).
 *
 *   probe_selfref N     prints "ok selfref N" and exits 0
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

static void *one(void *p)
{
	(void)p;
	pid_t tid = (pid_t)syscall(SYS_gettid);
	uint64_t lim[2], attr[7];
	cpu_set_t set;
	if (syscall(SYS_prlimit64, tid, RLIMIT_CORE, NULL, lim) == 0)
		syscall(SYS_prlimit64, tid, RLIMIT_CORE, lim, NULL);
	syscall(SYS_prlimit64, tid, RLIMIT_NOFILE, NULL, lim);
	syscall(SYS_sched_getattr, tid, attr, 56, 0);
	if (sched_getaffinity(tid, sizeof set, &set) == 0)
		sched_setaffinity(tid, sizeof set, &set);
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 100;
	for (int i = 0; i < n; i++) {
		pthread_t t;
		if (pthread_create(&t, NULL, one, NULL) != 0) {
			perror("pthread_create");
			return 1;
		}
		pthread_join(t, NULL);
	}
	printf("ok selfref %d\n", n);
	return 0;
}
