/* forkexec_loop [N] [PROG]: N fork+execve(PROG)+wait (default /bin/true). */
#include "bench.h"
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long n = bench_iters(argc, argv, 1000);
	char *prog = argc > 2 ? argv[2] : "/bin/true";
	char *av[] = {prog, NULL}, *ev[] = {NULL};
	double t0 = bench_now_ns();
	for (long i = 0; i < n; i++) {
		pid_t pid = fork();
		if (pid == 0) {
			execve(prog, av, ev);
			_exit(127);
		}
		int status;
		waitpid(pid, &status, 0);
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
			fprintf(stderr, "%s failed: status %#x\n", prog, status);
			return 1;
		}
	}
	double t1 = bench_now_ns();
	bench_report("fork_exec", t0, t1, n);
	return 0;
}
