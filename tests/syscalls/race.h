/*
 * race.h: the race probes' clock. A probe runs for SECONDS of the monotonic
 * clock: time(NULL) + SECONDS ended a 1 s race anywhere from 0 to 1 s after
 * it began (the wall clock's next whole second), so a probe started near a
 * second's end ran a few connects and said "not reached" without isolation
 * (isolation_net netd_socket_fd_swap_race passed against fake-moat).
 */
#ifndef MOAT_TESTS_SYSCALLS_RACE_H
#define MOAT_TESTS_SYSCALLS_RACE_H

#include <pthread.h>
#include <time.h>
#include <unistd.h>

static inline double race_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* a thread that keeps dup2()ing a, then b, onto the number n until
 * race_flip_end: the swap the fd-number probes race against */
struct race_flip {
	int a, b, n;
	volatile int stop;
	pthread_t th;
};

static inline void *race_flip_run(void *arg)
{
	struct race_flip *f = arg;
	while (!f->stop) {
		dup2(f->a, f->n);
		dup2(f->b, f->n);
	}
	return NULL;
}

static inline void race_flip_start(struct race_flip *f, int a, int b, int n)
{
	f->a = a, f->b = b, f->n = n, f->stop = 0;
	pthread_create(&f->th, NULL, race_flip_run, f);
}

static inline void race_flip_end(struct race_flip *f)
{
	f->stop = 1;
	pthread_join(f->th, NULL);
}

#endif
