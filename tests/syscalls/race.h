/*
 * race.h: the race probes' clock. A probe runs for SECONDS of the monotonic
 * clock: time(NULL) + SECONDS ended a 1 s race anywhere from 0 to 1 s after
 * it began (the wall clock's next whole second), so a probe started near a
 * second's end ran a few connects and said "not reached" without isolation
 * (isolation_net netd_socket_fd_swap_race passed against fake-moat).
 */
#ifndef MOAT_TESTS_SYSCALLS_RACE_H
#define MOAT_TESTS_SYSCALLS_RACE_H

#include <time.h>

static inline double race_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

#endif
