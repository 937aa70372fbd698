/* forkwait_loop [N]: N fork + _exit(0) in the child + waitpid in the parent. */
#include "bench.h"
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long n = bench_iters(argc, argv, 1000);
	double t0 = bench_now_ns();
	for (long i = 0; i < n; i++) {
		pid_t pid = fork();
		if (pid == 0)
			_exit(0);
		int status;
		if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) {
			fprintf(stderr, "fork+wait failed\n");
			return 1;
		}
	}
	double t1 = bench_now_ns();
	bench_report("fork_wait", t0, t1, n);
	return 0;
}
