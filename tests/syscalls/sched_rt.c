/* The real-time and deadline scheduling classes as root sets and reads
 * them back (LTP sched_getattr01, sched_setattr01, sched_setparam02,
 * sched_rr_get_interval01): natively root's CAP_SYS_NICE; under moat
 * the sentry keeps them per task (syscalls/sys_sched.c), the host never
 * runs the guest in them. Before, every such call was the host's EPERM.
 * Needs root (skipped otherwise: natively the host refuses); every change
 * is made in a child process or thread, which never spins while in a
 * real-time class. */
#include "t.h"
#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>

#ifndef SCHED_DEADLINE
#define SCHED_DEADLINE 6
#endif
#ifndef SCHED_RESET_ON_FORK
#define SCHED_RESET_ON_FORK 0x40000000
#endif

struct attr { /* struct sched_attr, SCHED_ATTR_SIZE_VER0 */
	uint32_t size, policy;
	uint64_t flags;
	int32_t nice;
	uint32_t prio;
	uint64_t runtime, deadline, period;
};

#define EXPECT(name, cond, ...) CHECK(cond, name, __VA_ARGS__)
#define ERR(name, expr, e)                                                     \
	do {                                                                   \
		errno = 0;                                                     \
		long r_ = (long)(expr);                                        \
		CHECK(r_ == -1 && errno == (e), name, "= %ld %s", r_,          \
		      strerror(errno));                                        \
	} while (0)

static int getprio(pid_t p)
{
	struct sched_param sp = { -1 };
	return sched_getparam(p, &sp) ? -1 : sp.sched_priority;
}

static void *deadline_thread(void *arg)
{
	(void)arg;
	struct attr a = { .size = sizeof a, .policy = SCHED_DEADLINE, .runtime = 10000000,
			  .deadline = 30000000, .period = 30000000 }, b;
	long r = syscall(SYS_sched_setattr, 0, &a, 0);
	EXPECT("deadline_set", r == 0, "= %ld %s", r, strerror(errno));
	memset(&b, 0, sizeof b);
	r = syscall(SYS_sched_getattr, 0, &b, sizeof b, 0);
	EXPECT("deadline_readback", r == 0 && b.policy == SCHED_DEADLINE && b.runtime == a.runtime &&
	       b.deadline == a.deadline && b.period == a.period && b.size == sizeof b,
	       "= %ld policy %u runtime %llu", r, b.policy, (unsigned long long)b.runtime);
	EXPECT("deadline_getscheduler", sched_getscheduler(0) == SCHED_DEADLINE, "%d",
	       sched_getscheduler(0));
	struct sched_param sp = { 1 };
	ERR("deadline_setparam_einval", sched_setparam(0, &sp), EINVAL);
	a.runtime = a.deadline + 1;
	ERR("deadline_runtime_past_deadline", syscall(SYS_sched_setattr, 0, &a, 0), EINVAL);
	a = (struct attr){ .size = sizeof a, .policy = SCHED_OTHER };
	r = syscall(SYS_sched_setattr, 0, &a, 0);
	EXPECT("deadline_back_to_other", r == 0 && sched_getscheduler(0) == SCHED_OTHER,
	       "= %ld %s", r, strerror(errno));
	return NULL;
}

static void *fifo_thread(void *arg)
{
	(void)arg;
	/* a thread's own class: its thread group's others keep theirs */
	struct sched_param sp = { 0 };
	EXPECT("thread_inherits", sched_getscheduler(0) == SCHED_FIFO, "%d", sched_getscheduler(0));
	EXPECT("thread_leaves", sched_setscheduler(0, SCHED_OTHER, &sp) == 0 &&
	       sched_getscheduler(0) == SCHED_OTHER, "%s", strerror(errno));
	return NULL;
}

/* the checks, in a child so the test process's own class never changes */
static void rt_cases(void)
{
	struct sched_param sp = { 10 };
	struct timespec ts;

	EXPECT("fifo_set", sched_setscheduler(0, SCHED_FIFO, &sp) == 0, "%s", strerror(errno));
	EXPECT("fifo_get", sched_getscheduler(0) == SCHED_FIFO && getprio(0) == 10, "%d %d",
	       sched_getscheduler(0), getprio(0));
	sp.sched_priority = 20;
	EXPECT("fifo_setparam", sched_setparam(0, &sp) == 0 && getprio(0) == 20, "%d", getprio(0));
	EXPECT("fifo_by_pid", sched_getscheduler(getpid()) == SCHED_FIFO && getprio(getpid()) == 20,
	       "%d", sched_getscheduler(getpid()));
	sp.sched_priority = 0;
	ERR("fifo_prio0_einval", sched_setparam(0, &sp), EINVAL);
	sp.sched_priority = 100;
	ERR("fifo_prio100_einval", sched_setscheduler(0, SCHED_FIFO, &sp), EINVAL);
	ERR("fifo_null_param", sched_setscheduler(0, SCHED_FIFO, NULL), EINVAL);
	ERR("getscheduler_negative", sched_getscheduler(-1), EINVAL);
	EXPECT("fifo_interval", sched_rr_get_interval(0, &ts) == 0 && ts.tv_sec == 0 && ts.tv_nsec == 0,
	       "%ld.%09ld", (long)ts.tv_sec, ts.tv_nsec);
	struct attr a;
	memset(&a, 0, sizeof a);
	long r = syscall(SYS_sched_getattr, 0, &a, sizeof a, 0);
	EXPECT("fifo_getattr", r == 0 && a.policy == SCHED_FIFO && a.prio == 20, "= %ld %u %u",
	       r, a.policy, a.prio);

	pthread_t th;
	if (pthread_create(&th, NULL, fifo_thread, NULL) == 0)
		pthread_join(th, NULL);
	EXPECT("thread_left_alone", sched_getscheduler(0) == SCHED_FIFO, "%d", sched_getscheduler(0));

	pid_t me = getpid(), c = fork();
	if (c == 0) {
		int ok = sched_getscheduler(0) == SCHED_FIFO && getprio(0) == 20 &&
			 sched_getscheduler(me) == SCHED_FIFO;
		_exit(ok ? 0 : 1);
	}
	int st = -1;
	waitpid(c, &st, 0);
	EXPECT("fork_inherits", WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %#x", st);

	sp.sched_priority = 5;
	EXPECT("rr_reset_on_fork", sched_setscheduler(0, SCHED_RR | SCHED_RESET_ON_FORK, &sp) == 0 &&
	       sched_getscheduler(0) == (SCHED_RR | SCHED_RESET_ON_FORK), "%d %s",
	       sched_getscheduler(0), strerror(errno));
	EXPECT("rr_interval", sched_rr_get_interval(0, &ts) == 0 && (ts.tv_sec || ts.tv_nsec),
	       "%ld.%09ld", (long)ts.tv_sec, ts.tv_nsec);
	c = fork();
	if (c == 0)
		_exit(sched_getscheduler(0) == SCHED_OTHER && getprio(0) == 0 ? 0 : 1);
	waitpid(c, &st, 0);
	EXPECT("fork_reset", WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %#x", st);

	/* a process without CAP_SYS_NICE (dropped root, RLIMIT_RTPRIO 0):
	 * may lower its priority or leave, no more */
	EXPECT("rr_set", sched_setscheduler(0, SCHED_RR, &sp) == 0 &&
	       sched_getscheduler(0) == SCHED_RR, "%d %s", sched_getscheduler(0), strerror(errno));
	c = fork();
	if (c == 0) {
		struct rlimit rl = { 0, 0 };
		struct sched_param p = { 4 };
		int ok = setrlimit(RLIMIT_RTPRIO, &rl) == 0 && setresuid(61237, 61237, 61237) == 0;
		ok = ok && sched_setscheduler(0, SCHED_RR, &p) == 0;
		p.sched_priority = 6;
		ok = ok && sched_setparam(0, &p) == -1 && errno == EPERM;
		p.sched_priority = 3;
		ok = ok && sched_setscheduler(0, SCHED_FIFO, &p) == -1 && errno == EPERM;
		p.sched_priority = 0;
		ok = ok && sched_setscheduler(0, SCHED_OTHER, &p) == 0;
		p.sched_priority = 1;
		ok = ok && sched_setscheduler(0, SCHED_FIFO, &p) == -1 && errno == EPERM;
		_exit(ok ? 0 : 1);
	}
	waitpid(c, &st, 0);
	EXPECT("unprivileged_rules", WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %#x", st);

	if (pthread_create(&th, NULL, deadline_thread, NULL) == 0)
		pthread_join(th, NULL);

	sp.sched_priority = 0;
	EXPECT("back_to_other", sched_setscheduler(0, SCHED_OTHER, &sp) == 0 &&
	       sched_getscheduler(0) == SCHED_OTHER && getprio(0) == 0, "%d", sched_getscheduler(0));
	a = (struct attr){ .size = 40, .policy = SCHED_FIFO, .prio = 1 };
	ERR("setattr_small_e2big", syscall(SYS_sched_setattr, 0, &a, 0), E2BIG);
	EXPECT("setattr_e2big_size", a.size == 56 || a.size == 48, "%u", a.size);
}

int main(int argc, char **argv)
{
	t_setup(argc, argv, "sched_rt");
	if (geteuid() != 0) {
		printf("skip: needs root\n");
		t_done();
		return T_SKIP;
	}
	fflush(stdout);
	pid_t c = fork();
	if (c == 0) {
		rt_cases();
		fflush(stdout);
		_exit(t_failures ? 1 : 0);
	}
	int st = -1;
	waitpid(c, &st, 0);
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		t_failures++;
	return t_done();
}
