/* race_sched_attr: sched_setattr(0, attr) with a normal class in attr while
 * another thread keeps flipping attr between SCHED_OTHER (priority 0) and
 * SCHED_FIFO (priority 1). The sentry keeps real-time classes virtual (the
 * host never runs a guest task real-time: syscalls/sys_sched.c); a call it
 * checked as a normal class and then let run natively (CONTINUE) had the
 * kernel read attr again, and with a nonzero RLIMIT_RTPRIO (the caller's
 * limits, e.g. an "audio" group's rtprio 95) the host made the thread
 * SCHED_FIFO (toctou33). As guest root (CAP_SYS_NICE: a FIFO copy becomes
 * a virtual class) with the host's RLIMIT_RTPRIO 0, the kernel's second read
 * shows as EPERM, which Linux never gives root here; as another user (no
 * virtual class) the host's class is read with sched_getscheduler, which
 * then runs natively, and a win is put back at once.
 * usage: race_sched_attr SECONDS; prints "ok race_sched_attr N calls"
 * or "FAIL race_sched_attr ...". Never natively. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "race.h"

struct attr {
	uint32_t size, policy;
	uint64_t flags;
	int32_t nice;
	uint32_t prio;
	uint64_t runtime, deadline, period;
};

static volatile struct attr a = { .size = 48 };
static atomic_int stop;

static void *flip(void *arg)
{
	(void)arg;
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		a.policy = SCHED_FIFO;
		a.prio = 1;
		a.policy = SCHED_OTHER;
		a.prio = 0;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int secs = argc > 1 ? atoi(argv[1]) : 2;
	struct rlimit rl;
	if (getrlimit(RLIMIT_RTPRIO, &rl) == 0 && rl.rlim_cur < 1 && rl.rlim_max >= 1) {
		rl.rlim_cur = 1; /* a soft limit up to the hard one: no privilege */
		setrlimit(RLIMIT_RTPRIO, &rl);
	}
	if (getrlimit(RLIMIT_RTPRIO, &rl) == 0 && rl.rlim_cur < 1)
		printf("note: RLIMIT_RTPRIO 0 (the host refuses SCHED_FIFO anyway)\n");
	errno = 0;
	int nice = getpriority(PRIO_PROCESS, 0); /* kept: a lower one is EPERM */
	a.nice = errno ? 0 : nice;
	pthread_t th;
	if (pthread_create(&th, NULL, flip, NULL))
		return 1;
	double end = race_now() + secs;
	long calls = 0, won = 0, eperm = 0;
	int root = geteuid() == 0;
	while (race_now() < end && calls < 2000000) {
		calls++;
		if (syscall(SYS_sched_setattr, 0, &a, 0) != 0) {
			if (errno == EPERM && root) {
				eperm++;
				break;
			}
			continue;
		}
		if (root) {
			/* (a virtual class, which sched_getscheduler would show):
			 * put back each time, so a native run (the self-check,
			 * where root may be real-time) is never FIFO for long */
			struct sched_param sp = { 0 };
			sched_setscheduler(0, SCHED_OTHER, &sp);
			continue;
		}
		int p = sched_getscheduler(0);
		if (p != SCHED_OTHER && p >= 0) {
			struct sched_param sp = { 0 };
			sched_setscheduler(0, SCHED_OTHER, &sp); /* back at once */
			won++;
			break;
		}
	}
	atomic_store(&stop, 1);
	pthread_join(th, NULL);
	if (eperm) {
		printf("FAIL race_sched_attr root's call was EPERM after %ld calls (the kernel read attr again)\n", calls);
		return 1;
	}
	if (won) {
		printf("FAIL race_sched_attr the host ran the thread real-time after %ld calls\n", calls);
		return 1;
	}
	printf("ok race_sched_attr %ld calls\n", calls);
	return 0;
}
