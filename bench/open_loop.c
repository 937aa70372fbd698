/* open_loop [N] [PATH]: N open+close pairs of PATH (default /etc/os-release). */
#include "bench.h"
#include <fcntl.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long n = bench_iters(argc, argv, 100000);
	const char *path = argc > 2 ? argv[2] : "/etc/os-release";
	double t0 = bench_now_ns();
	for (long i = 0; i < n; i++) {
		int fd = open(path, O_RDONLY);
		if (fd < 0) {
			perror(path);
			return 1;
		}
		close(fd);
	}
	double t1 = bench_now_ns();
	bench_report("open_close", t0, t1, n);
	return 0;
}
