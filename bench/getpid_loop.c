/* getpid_loop [N]: N raw getpid syscalls (a FAST call: should cost what it costs natively). */
#include "bench.h"
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long n = bench_iters(argc, argv, 1000000);
	double t0 = bench_now_ns();
	for (long i = 0; i < n; i++)
		syscall(SYS_getpid);
	double t1 = bench_now_ns();
	bench_report("getpid", t0, t1, n);
	return 0;
}
