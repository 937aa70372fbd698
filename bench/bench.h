/* bench.h: shared timing for the bench loops. Each prints "<name> <ns per call>". */
#ifndef MOAT_BENCH_H
#define MOAT_BENCH_H
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static inline double bench_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static inline long bench_iters(int argc, char **argv, long def)
{
	return argc > 1 ? atol(argv[1]) : def;
}

static inline void bench_report(const char *name, double t0, double t1, long n)
{
	printf("%s %.1f\n", name, (t1 - t0) / (double)n);
}
#endif
