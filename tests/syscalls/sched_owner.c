/* Calls that act on another process by pid (prlimit64, setpriority,
 * sched_setparam/setscheduler/setaffinity/setattr, ioprio_set; and
 * get_robust_list, kcmp: the ptrace access check) from a
 * process that dropped root: another user's process is EPERM, its own
 * user's and its own are fine, root may act on anyone (Linux's owner rules;
 * under moat every guest task is one host uid, so the sentry checks the
 * virtual ids: red-team round 5 found a dropped-root process setting a
 * root process's RLIMIT_NOFILE to 0 and its policy to SCHED_IDLE).
 * Needs root (skipped natively otherwise); the dropped uid is an unusual
 * one (61236). */
#include "t.h"
#include <sched.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#define U1 61236
#define IOPRIO_WHO_PROCESS 1
#define IOPRIO_PRIO(cl, d) (((cl) << 13) | (d))

/* the nice value set: never below the one the test started at (a caller
 * without CAP_SYS_NICE may not lower it: EACCES natively when the test
 * runs at nice 19, as CI does), and one below that for the refusal */
static int nice_set = 5, nice_lower = -5;


/* a child that sleeps as uid, returned once its ids are set (acting on it
 * before then raced its setresuid: EPERM natively too, under load) */
static pid_t idle_child(uid_t uid)
{
	int ready[2];
	char x = 0;
	if (pipe(ready) < 0)
		return -1;
	pid_t p = fork();
	if (p == 0) {
		close(ready[0]);
		if (uid && (setresgid(uid, uid, uid) || setresuid(uid, uid, uid)))
			_exit(1);
		if (write(ready[1], &x, 1) != 1)
			_exit(1);
		close(ready[1]);
		for (;;)
			pause();
	}
	close(ready[1]);
	if (read(ready[0], &x, 1) != 1)
		x = 1;
	close(ready[0]);
	return p;
}

/* every call on pid p: EPERM when want_eperm, else success */
static void act_on(pid_t p, int want_eperm, const char *who)
{
	char n[96];
	struct rlimit rl;
	cpu_set_t cs;
	struct sched_param sp = { 0 };
	struct t_sched_attr at = { .size = sizeof at, .policy = SCHED_BATCH, .nice = nice_set };
	int e = want_eperm ? EPERM : 0;
#define ONE(expr, what)                                                        \
	do {                                                                   \
		snprintf(n, sizeof n, "%s_%s", what, who);                     \
		errno = 0;                                                     \
		long r_ = (long)(expr);                                        \
		CHECK(e ? r_ == -1 && errno == e : r_ != -1, n, "= %ld %s", r_,  \
		      strerror(errno));                                        \
	} while (0)

	ONE(syscall(SYS_prlimit64, p, RLIMIT_NOFILE, NULL, &rl), "prlimit_get");
	rl.rlim_cur = 64;
	rl.rlim_max = 4096;
	ONE(syscall(SYS_prlimit64, p, RLIMIT_NOFILE, &rl, NULL), "prlimit_set");
	/* a limit the kernel enforces with a signal: made by the guest's
	 * init in a sandbox of more than one identity (initrows) */
	rl.rlim_cur = 3600;
	rl.rlim_max = 3600;
	ONE(syscall(SYS_prlimit64, p, RLIMIT_CPU, &rl, NULL), "prlimit_cpu_set");
	ONE(setpriority(PRIO_PROCESS, (id_t)p, nice_set), "setpriority");
	CPU_ZERO(&cs);
	CPU_SET(0, &cs);
	ONE(sched_setaffinity(p, sizeof cs, &cs), "sched_setaffinity");
	ONE(sched_setscheduler(p, SCHED_BATCH, &sp), "sched_setscheduler");
	ONE(sched_setparam(p, &sp), "sched_setparam");
	ONE(syscall(SYS_sched_setattr, p, &at, 0), "sched_setattr");
	ONE(syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS, p, IOPRIO_PRIO(2, 7)), "ioprio_set");
	if (want_eperm) {
		/* the ptrace access check (only refusals compared: natively a
		 * process whose ids changed is not dumpable, which moat's are) */
		void *head;
		size_t len;
		ONE(syscall(SYS_get_robust_list, p, &head, &len), "get_robust_list");
		ONE(syscall(SYS_kcmp, p, getpid(), 0 /* KCMP_FILE */, 0, 0), "kcmp");
	}
#undef ONE
}

/* Linux's own refusals on a task the caller may act on (its own user's
 * process): in a sandbox of more than one identity the sentry makes these
 * calls itself at the check (pid reuse: ARCHITECTURE.md "Pids checked,
 * then used"), and the kernel must answer it as it answers the caller */
static void edges(pid_t p)
{
	char n[64];
	struct rlimit rl, big;
	cpu_set_t none;
#define EDGE(expr, what, err)                                                  \
	do {                                                                   \
		snprintf(n, sizeof n, "%s", what);                             \
		errno = 0;                                                     \
		long r_ = (long)(expr);                                        \
		CHECK(r_ == -1 && errno == (err), n, "= %ld %s", r_, strerror(errno)); \
	} while (0)
	if (nice_lower >= -20)
		EDGE(setpriority(PRIO_PROCESS, (id_t)p, nice_lower), "setpriority_lower_nice_eacces", EACCES);
	EDGE(syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS, p, IOPRIO_PRIO(1, 0)), "ioprio_rt_eperm", EPERM);
	if (syscall(SYS_prlimit64, p, RLIMIT_NOFILE, NULL, &rl) == 0 && rl.rlim_max != RLIM_INFINITY) {
		big.rlim_cur = rl.rlim_cur;
		big.rlim_max = rl.rlim_max + 1;
		EDGE(syscall(SYS_prlimit64, p, RLIMIT_NOFILE, &big, NULL), "prlimit_raise_hard_eperm", EPERM);
	}
	EDGE(syscall(SYS_prlimit64, p, RLIMIT_NOFILE, NULL, (void *)8), "prlimit_old_efault", EFAULT);
	EDGE(syscall(SYS_prlimit64, p, 99, NULL, &rl), "prlimit_resource_einval", EINVAL);
	/* the same through the guest's init (a signalling limit set) */
	if (syscall(SYS_prlimit64, p, RLIMIT_CPU, NULL, &rl) == 0) {
		if (rl.rlim_max != RLIM_INFINITY) {
			big.rlim_cur = rl.rlim_cur;
			big.rlim_max = rl.rlim_max + 1;
			EDGE(syscall(SYS_prlimit64, p, RLIMIT_CPU, &big, NULL), "prlimit_cpu_raise_hard_eperm", EPERM);
		}
		big.rlim_cur = 10;
		big.rlim_max = 5;
		EDGE(syscall(SYS_prlimit64, p, RLIMIT_FSIZE, &big, NULL), "prlimit_fsize_cur_gt_max_einval", EINVAL);
		EDGE(syscall(SYS_prlimit64, p, RLIMIT_CPU, &rl, (void *)8), "prlimit_cpu_old_efault", EFAULT);
		EDGE(syscall(SYS_prlimit64, p, RLIMIT_STACK, (void *)8, NULL), "prlimit_stack_new_efault", EFAULT);
	}
	/* and the rows made through the init since initrows2: the kernel's
	 * own argument checks there (a priority in a normal class, a lower
	 * nice in an attr, an I/O class past the last, a soft limit above
	 * the hard) */
	EDGE(sched_setparam(p, &(struct sched_param){ 1 }), "setparam_normal_prio_einval", EINVAL);
	EDGE(sched_setscheduler(p, SCHED_BATCH, &(struct sched_param){ 1 }), "setscheduler_batch_prio_einval",
	     EINVAL);
	if (nice_lower >= -20) {
		struct t_sched_attr lo = { .size = sizeof lo, .policy = SCHED_OTHER, .nice = nice_lower };
		EDGE(syscall(SYS_sched_setattr, p, &lo, 0), "setattr_lower_nice_eperm", EPERM);
	}
	EDGE(syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS, p, IOPRIO_PRIO(4, 0)), "ioprio_bad_class_einval", EINVAL);
	big.rlim_cur = 10;
	big.rlim_max = 5;
	EDGE(syscall(SYS_prlimit64, p, RLIMIT_NOFILE, &big, NULL), "prlimit_nofile_cur_gt_max_einval", EINVAL);
	CPU_ZERO(&none);
	EDGE(sched_setaffinity(p, sizeof none, &none), "setaffinity_empty_einval", EINVAL);
	EDGE(syscall(SYS_sched_setaffinity, p, sizeof none, (void *)8), "setaffinity_efault", EFAULT);
	EDGE(syscall(SYS_sched_setscheduler, p, SCHED_FIFO, &(struct sched_param){ 1 }), "setscheduler_fifo_eperm",
	     EPERM);
	/* pid 1 (natively the host's init, in moat the guest's: root's) and a
	 * number no task holds (answered by the sentry after its copy of the
	 * attr, toctou33: pid 1 was a success without an effect) */
	struct t_sched_attr at = { .size = sizeof at, .policy = SCHED_BATCH, .nice = nice_set };
	EDGE(syscall(SYS_sched_setattr, 1, &at, 0), "setattr_init_eperm", EPERM);
	EDGE(syscall(SYS_sched_setattr, 4000000, &at, 0), "setattr_no_task_esrch", ESRCH);
#undef EDGE
}

int main(int argc, char **argv)
{
	t_setup(argc, argv, "sched_owner");
	if (!t_need_root())
		return T_SKIP;
	errno = 0;
	int base = getpriority(PRIO_PROCESS, 0);
	if (base == -1 && errno)
		base = 0;
	if (base > nice_set)
		nice_set = base;
	nice_lower = (nice_set > 0 ? 0 : nice_set) - 5;
	fflush(stdout);
	pid_t root_p = idle_child(0), u1_p = idle_child(U1);
	act_on(root_p, 0, "root_on_root");
	pid_t c = fork();
	if (c == 0) {
		if (setresgid(U1, U1, U1) || setresuid(U1, U1, U1))
			_exit(2);
		act_on(root_p, 1, "user_on_root");
		act_on(u1_p, 0, "user_on_own_user");
		edges(u1_p);
		act_on(getpid(), 0, "user_on_self_by_pid");
		t_child_exit();
	}
	t_child_wait(c);
	/* (root on another user's process is not compared: it needs
	 * CAP_SYS_NICE/CAP_SYS_RESOURCE, which the host's root has and the
	 * sandbox's root, with Docker's default set, has not) */
	kill(root_p, SIGKILL);
	kill(u1_p, SIGKILL);
	while (wait(NULL) > 0)
		;
	return t_done();
}
