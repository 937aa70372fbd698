/* pipe_loop [N]: N round trips of one byte between two processes over two
 * pipes (read and write never trap under moat: the time is the kernel's). */
#include "bench.h"
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long n = bench_iters(argc, argv, 100000);
	int a[2], b[2];
	char c = 'x';
	if (pipe(a) < 0 || pipe(b) < 0)
		return 1;
	pid_t pid = fork();
	if (pid == 0) {
		for (long i = 0; i < n; i++)
			if (read(a[0], &c, 1) != 1 || write(b[1], &c, 1) != 1)
				_exit(1);
		_exit(0);
	}
	double t0 = bench_now_ns();
	for (long i = 0; i < n; i++)
		if (write(a[1], &c, 1) != 1 || read(b[0], &c, 1) != 1) {
			fprintf(stderr, "pipe ping-pong failed\n");
			return 1;
		}
	double t1 = bench_now_ns();
	int status;
	waitpid(pid, &status, 0);
	bench_report("pipe_pingpong", t0, t1, n);
	return 0;
}
