/* stat_loop [N] [PATH]: N stat calls on PATH (default /usr/bin/env). */
#include "bench.h"
#include <sys/stat.h>

int main(int argc, char **argv)
{
	long n = bench_iters(argc, argv, 100000);
	const char *path = argc > 2 ? argv[2] : "/usr/bin/env";
	struct stat st;
	double t0 = bench_now_ns();
	for (long i = 0; i < n; i++)
		if (stat(path, &st) != 0) {
			perror(path);
			return 1;
		}
	double t1 = bench_now_ns();
	bench_report("stat", t0, t1, n);
	return 0;
}
