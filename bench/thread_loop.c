/* thread_loop [N]: N pthread_create + pthread_join of an empty thread. */
#include "bench.h"
#include <pthread.h>

static void *body(void *arg)
{
	return arg;
}

int main(int argc, char **argv)
{
	long n = bench_iters(argc, argv, 1000);
	double t0 = bench_now_ns();
	for (long i = 0; i < n; i++) {
		pthread_t th;
		if (pthread_create(&th, NULL, body, NULL) != 0 || pthread_join(th, NULL) != 0) {
			fprintf(stderr, "thread create/join failed\n");
			return 1;
		}
	}
	double t1 = bench_now_ns();
	bench_report("thread", t0, t1, n);
	return 0;
}
