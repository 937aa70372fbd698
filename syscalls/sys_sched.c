/* syscalls/sys_sched.c - the real-time and deadline scheduling classes, kept
 * per task by the sentry (as gVisor keeps a task's policy) and never given
 * to the host.
 *
 * The host runs every guest task in the normal class: SCHED_FIFO, SCHED_RR
 * and SCHED_DEADLINE need CAP_SYS_NICE on the host (a real-time guest would
 * starve the host's own processes), which the sandbox never has. A guest
 * with CAP_SYS_NICE (guest root: kernel/cred.h) that asks for one of them
 * gets it virtually: Linux's checks (policy, priority 1..99, the deadline
 * parameters of __checkparam_dl, flags, sizes, the owner rule on the
 * virtual ids), then the task's struct vsched (kernel/task.h) holds it, the
 * sched_get* calls and /proc/<pid>/stat (fs/procfs.c) read it back, a fork or thread inherits it unless
 * SCHED_RESET_ON_FORK, an exec keeps it. The task keeps running natively in
 * its normal class at its nice value. Back to a normal class (SCHED_OTHER,
 * BATCH, IDLE) the virtual class is dropped and the call runs natively
 * (sched_setscheduler/sched_setparam: the policy is a register, and the
 * priority the kernel reads must then be 0); sched_setattr, whose policy is
 * in guest memory, is made by the sentry with its checked copy (a thread that
 * swapped in SCHED_FIFO after the check reached the host's class whenever the
 * caller's RLIMIT_RTPRIO allowed it: toctou33).
 * A caller without CAP_SYS_NICE gets Linux's rules as with RLIMIT_RTPRIO 0
 * (the host's default): it may lower a virtual priority or leave the class,
 * never enter one (EPERM, as before on the host). Every other call runs
 * natively as before: a task with no virtual class, normal classes, another
 * task named by pid after the owner check (in a sandbox of more than one
 * identity made by the sentry at the check instead: vs_owner_native, pid
 * reuse).
 * SCHED_DEADLINE is admitted by Linux's affinity rule (the task's affinity
 * must cover its root domain, taken as the host's online CPUs: EPERM, as a
 * task in a one-CPU cpuset of a larger machine is refused natively), and a
 * deadline task's sched_setaffinity to a narrower mask is EBUSY
 * (sc_sched_deadline_task, syscalls/sys_signal.c).
 * Not modelled: a SCHED_DEADLINE task's fork is not refused (Linux: EAGAIN),
 * no bandwidth admission (EBUSY), /proc/<pid>/sched shows the host's class,
 * sched_util_min/max (SCHED_FLAG_UTIL_CLAMP) on a virtual task are
 * EOPNOTSUPP (as a kernel without CONFIG_UCLAMP_TASK).
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "syscalls/handlers.h"
#include "syscalls/sc.h"

#define VS_FLAG_RESET_ON_FORK 0x01
#define VS_FLAG_KEEP_POLICY 0x08
#define VS_FLAG_KEEP_PARAMS 0x10
#define VS_FLAG_UTIL_CLAMP 0x60
#define VS_FLAG_ALL 0x7f
#define VS_ATTR_SIZE_VER0 48
#define VS_ATTR_SIZE_VER1 56
#define VS_PAGE 4096
#define VS_RR_TIMESLICE_NS 100000000L /* RR_TIMESLICE: 100 ms */
#define VS_DL_PERIOD_MIN_NS 100000ULL /* sched_dl_period_min_us 100 */
#define VS_DL_PERIOD_MAX_NS (4194304ULL * 1000) /* sched_dl_period_max_us */

/* struct sched_attr (SCHED_ATTR_SIZE_VER1) */
struct vs_attr {
	uint32_t size, policy;
	uint64_t flags;
	int32_t nice;
	uint32_t prio;
	uint64_t runtime, deadline, period;
	uint32_t util_min, util_max;
};

static int vs_rt(int policy) { return policy == SCHED_FIFO || policy == SCHED_RR; }
static int vs_special(int policy) { return vs_rt(policy) || policy == SCHED_DEADLINE; }

/* the task a sched call names (0: the caller), with a reference the caller
 * gives back with task_put; NULL: no such guest task (the kernel's ESRCH) */
static struct task *vs_get(struct sc_call *c, pid_t pid)
{
	return task_get_named(c->sb, c->task, pid);
}

static struct vsched vs_read(struct task *t)
{
	pthread_mutex_lock(&t->lock);
	struct vsched v = t->vsched;
	pthread_mutex_unlock(&t->lock);
	return v;
}

/* __checkparam_dl */
static int vs_dl_ok(const struct vs_attr *a)
{
	uint64_t period = a->period ? a->period : a->deadline;

	if (!a->deadline || a->runtime < (1ULL << 10))
		return 0;
	if ((a->deadline | a->period) & (1ULL << 63))
		return 0;
	if (period < a->deadline || a->deadline < a->runtime)
		return 0;
	return period >= VS_DL_PERIOD_MIN_NS && period <= VS_DL_PERIOD_MAX_NS;
}

/* whether mask (len bytes, as the kernel reads a cpumask) holds every CPU
 * of the host's root domain (sb->host_cpus, read at start) */
int sc_sched_covers_host(struct sandbox *sb, const void *mask, size_t len)
{
	const unsigned char *m = mask;
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
		if (CPU_ISSET(cpu, &sb->host_cpus) && ((size_t)cpu / 8 >= len || !(m[cpu / 8] & (1u << (cpu % 8)))))
			return 0;
	return 1;
}

/* the task pid names (0: the caller), with a reference the caller gives
 * back with task_put, when it has a virtual SCHED_DEADLINE class (its
 * sched_setaffinity keeps covering the host's CPUs: EBUSY); else NULL */
struct task *sc_sched_deadline_task(struct sc_call *c, pid_t pid)
{
	struct task *t = pid < 0 ? NULL : vs_get(c, pid);
	if (t && vs_read(t).policy != SCHED_DEADLINE) {
		task_put(t);
		t = NULL;
	}
	return t;
}

/* A native call on another task made by the sentry at the check, on the
 * task checked (pid reuse: syscalls/sys_signal.c sc_owner_make), with the
 * sentry's copy of the request: sched_setattr's attr (its size field the
 * one checked), or sched_setscheduler's policy (with RESET_ON_FORK) and
 * sched_setparam's priority. */
struct vs_native {
	struct sandbox *sb;
	long nr;
	int policy, prio;
	const void *attr;
};

/* made by the guest's init (its number there: sc_init_make; the sentry's
 * filter refuses these calls on any task but its own, initrows2) */
static long vs_native_fn(const pid_t *h, void *arg)
{
	struct vs_native *n = arg;
	struct init_act_req q = { .nr = (int32_t)n->nr, .a = n->policy };
	struct init_act_rep p;
	if (n->nr == SYS_sched_setattr) {
		uint32_t size;
		memcpy(&size, n->attr, sizeof size); /* the size checked (sys_sched_setattr) */
		q.len = size < VS_ATTR_SIZE_VER0 ? VS_ATTR_SIZE_VER0 : size > VS_PAGE ? VS_PAGE : size;
		memcpy(q.buf, n->attr, q.len);
	} else {
		q.len = sizeof n->prio;
		memcpy(q.buf, &n->prio, sizeof n->prio);
	}
	return sc_init_make(n->sb, h, &q, &p);
}

/* the owner check of a call that runs natively: 0 (c->cont: native), the
 * answer of the call made by the sentry (n: the request), or -EPERM */
static long vs_owner_native(struct sc_call *c, pid_t pid, struct vs_native *n, uint64_t uparam)
{
	struct task *t;
	n->sb = c->sb;
	long r = sc_owner_nice_pin(c, pid, &t);
	if (r <= 0)
		return r;
	if (!n->attr && sc_read_guest(c, uparam, &n->prio, sizeof n->prio) < 0) {
		task_put(t);
		return -EFAULT;
	}
	return sc_owner_make(c, t, vs_native_fn, n);
}

/* __sched_setscheduler on a task with a virtual class or for a real-time or
 * deadline one: a's policy (valid values checked here), priority, deadline
 * parameters and flags. 0 with c->cont set: the task goes back to a normal
 * class natively; 0: set virtually; or -errno. */
static long vs_set(struct sc_call *c, pid_t pid, struct task *t, const struct vs_attr *a, struct vs_native *n)
{
	int policy = (int)a->policy;
	int normal = policy == SCHED_OTHER || policy == SCHED_BATCH || policy == SCHED_IDLE;

	if (!normal && !vs_special(policy))
		return -EINVAL;
	if (a->flags & ~(uint64_t)VS_FLAG_ALL)
		return -EINVAL;
	if (a->prio > 99)
		return -EINVAL;
	if ((policy == SCHED_DEADLINE && !vs_dl_ok(a)) || vs_rt(policy) != (a->prio != 0))
		return -EINVAL;
	if (a->flags & VS_FLAG_UTIL_CLAMP)
		return -EOPNOTSUPP;
	struct task *pt;
	long r = sc_owner_nice_pin(c, pid, &pt); /* 1: a normal class is made by the sentry */
	if (r < 0)
		return r;
	struct vsched old = vs_read(t);
	if (!cred_capable(&c->task->cred, CRED_CAP_SYS_NICE)) { /* its own: no lock */
		/* Linux's rules with RLIMIT_RTPRIO 0 (a virtual class was
		 * given to a task with CAP_SYS_NICE, which it has since lost):
		 * a real-time task may lower its priority or leave, no more */
		if (policy == SCHED_DEADLINE || (vs_rt(policy) && policy != old.policy) ||
		    (vs_rt(policy) && (int)a->prio > old.prio) ||
		    (old.reset && !(a->flags & VS_FLAG_RESET_ON_FORK))) {
			c->cont = 0;
			snprintf(c->note, sizeof c->note, "real-time class without CAP_SYS_NICE");
			if (r == 1)
				task_put(pt);
			return -EPERM;
		}
	}
	if (policy == SCHED_DEADLINE) {
		/* Linux's SMP rule (__sched_setscheduler): a deadline task's
		 * affinity covers its root domain, else EPERM */
		cpu_set_t aff;
		if (sched_getaffinity(atomic_load(&t->tid), sizeof aff, &aff) < 0 ||
		    !sc_sched_covers_host(c->sb, &aff, sizeof aff)) {
			c->cont = 0;
			snprintf(c->note, sizeof c->note, "deadline: affinity narrower than the host's CPUs");
			if (r == 1)
				task_put(pt);
			return -EPERM;
		}
	}
	struct vsched v = { 0 };
	if (!normal) {
		v.policy = policy;
		v.prio = (int)a->prio;
		v.reset = !!(a->flags & VS_FLAG_RESET_ON_FORK);
		if (policy == SCHED_DEADLINE) {
			v.runtime = a->runtime;
			v.deadline = a->deadline;
			v.period = a->period ? a->period : a->deadline;
		}
		c->cont = 0;
		snprintf(c->note, sizeof c->note, "virtual class %d", policy);
		if (r == 1)
			task_put(pt);
		r = 0;
	}
	pthread_mutex_lock(&t->lock);
	t->vsched = v;
	pthread_mutex_unlock(&t->lock);
	if (r == 1) { /* a normal class on another task: made now (c->cont cleared) */
		n->sb = c->sb;
		return sc_owner_make(c, pt, vs_native_fn, n);
	}
	if (c->cont) {
		/* back to a normal class (the owner check let it run): made
		 * here with the priority or attr read above, never CONTINUE'd,
		 * as the kernel would read them again (the TOCTOU rule,
		 * syscalls/table.c sc_cont_rows: rt81) */
		c->cont = 0;
		n->sb = c->sb;
		atomic_fetch_add(&t->refs, 1);
		return sc_owner_make(c, t, vs_native_fn, n);
	}
	return 0;
}

/* sched_setscheduler and sched_setparam (policy -1: keep the task's) */
static long vs_setparam(struct sc_call *c, int policy)
{
	pid_t pid = (pid_t)c->args[0];
	uint64_t uparam = c->args[policy < 0 ? 1 : 2];
	int prio;

	c->cont = 1;
	if (pid < 0 || !uparam)
		return 0; /* the kernel's EINVAL */
	int reset = policy >= 0 && (policy & SCHED_RESET_ON_FORK);
	if (policy >= 0)
		policy &= ~SCHED_RESET_ON_FORK;
	struct task *t = vs_get(c, pid);
	if (!t) {
		/* a number no guest task holds: ESRCH natively, or (pid reuse
		 * not harmless) the sentry's call on no task, as a task forked
		 * onto the number meanwhile would be set unchecked */
		struct vs_native n = { .nr = policy < 0 ? SYS_sched_setparam : SYS_sched_setscheduler,
				       .policy = (int)c->args[1] };
		return vs_owner_native(c, pid, &n, uparam);
	}
	struct vsched v = vs_read(t);
	long r = 0;
	if (v.policy || (policy >= 0 && vs_rt(policy))) {
		c->cont = 0;
		if (sc_read_guest(c, uparam, &prio, sizeof prio) < 0) {
			r = -EFAULT;
		} else if (policy < 0 && v.policy == SCHED_DEADLINE) {
			r = -EINVAL; /* a deadline task's parameters are sched_setattr's */
		} else {
			/* sched_param's priority, an int: a negative one is EINVAL */
			struct vs_attr a = { .policy = (uint32_t)(policy < 0 ? v.policy : policy),
					     .prio = prio < 0 ? 100 : (uint32_t)prio,
					     .flags = (policy < 0 ? v.reset : reset) ?
						      VS_FLAG_RESET_ON_FORK : 0 };
			struct vs_native n = { .nr = policy < 0 ? SYS_sched_setparam : SYS_sched_setscheduler,
					       .policy = (int)c->args[1], .prio = prio };
			r = vs_set(c, pid, t, &a, &n);
		}
	} else {
		struct vs_native n = { .nr = policy < 0 ? SYS_sched_setparam : SYS_sched_setscheduler,
				       .policy = (int)c->args[1] };
		r = vs_owner_native(c, pid, &n, uparam);
	}
	task_put(t);
	return r;
}

long sys_sched_setscheduler(struct sc_call *c)
{
	int policy = (int)c->args[1];
	if (policy < 0) {
		c->cont = 1; /* the kernel's EINVAL (after its own argument checks) */
		return 0;
	}
	return vs_setparam(c, policy);
}

long sys_sched_setparam(struct sc_call *c) { return vs_setparam(c, -1); }

long sys_sched_setattr(struct sc_call *c)
{
	pid_t pid = (pid_t)c->args[0];
	uint64_t uattr = c->args[1];
	unsigned char buf[VS_PAGE]; /* (not TLS: every thread's start wrote its 4 KiB, pss38) */
	uint32_t size;
	struct vs_attr a = { 0 };
	struct vs_native n = { 0 };

	c->cont = 1;
	if (!uattr || pid < 0 || (unsigned)c->args[2])
		return 0; /* the kernel's EINVAL */
	struct task *t = vs_get(c, pid);
	if (!t) {
		/* a number no guest task holds: ESRCH, answered by the sentry
		 * after the same copy (a bad size is E2BIG first), never left
		 * to the kernel: a task forked onto the number meanwhile would
		 * be set unchecked, with the kernel's second read of the attr
		 * (toctou33). The guest's init (moat's, no task here) natively,
		 * for whom the owner rule lets (root) */
		struct task *pt;
		long e = sc_owner_nice_pin(c, pid, &pt);
		if (e < 0)
			return e;
		if (e == 0 && pid == 1)
			return 0;
	}
	c->cont = 0;
	long r = 0;
	if (sc_read_guest(c, uattr, &size, sizeof size) < 0) {
		r = -EFAULT;
		goto out;
	}
	if (!size)
		size = VS_ATTR_SIZE_VER0;
	if (size < VS_ATTR_SIZE_VER0 || size > VS_PAGE)
		goto e2big;
	if (sc_read_guest(c, uattr, buf, size) < 0) {
		r = -EFAULT;
		goto out;
	}
	for (uint32_t i = sizeof a; i < size; i++)
		if (buf[i])
			goto e2big;
	/* the size checked, in the copy the sentry may pass to the kernel
	 * (vs_native: another thread may have changed it between the reads) */
	memcpy(buf, &size, sizeof size);
	memcpy(&a, buf, size < sizeof a ? size : sizeof a);
	if ((a.flags & VS_FLAG_UTIL_CLAMP) && size < VS_ATTR_SIZE_VER1) {
		r = -EINVAL;
		goto out;
	}
	if ((int)a.policy < 0) {
		r = -EINVAL;
		goto out;
	}
	if (!t) {
		r = -ESRCH; /* the kernel's, after its copy of the attr */
		goto out;
	}
	struct vsched v = vs_read(t);
	int keep_policy = !!(a.flags & VS_FLAG_KEEP_POLICY);
	n = (struct vs_native){ .sb = c->sb, .nr = SYS_sched_setattr, .attr = buf };
	if (!v.policy && (keep_policy || !vs_special((int)a.policy))) {
		r = vs_owner_native(c, pid, &n, 0); /* a normal class natively */
		goto out;
	}
	if (keep_policy)
		a.policy = (uint32_t)v.policy;
	if (a.flags & VS_FLAG_KEEP_PARAMS) {
		a.prio = (uint32_t)v.prio;
		a.runtime = v.runtime;
		a.deadline = v.deadline;
		a.period = v.period;
	}
	a.flags &= ~(uint64_t)(VS_FLAG_KEEP_POLICY | VS_FLAG_KEEP_PARAMS);
	r = vs_set(c, pid, t, &a, &n);
	goto out;
e2big:
	size = sizeof a;
	r = sc_write_guest(c, uattr, &size, sizeof size) < 0 ? -EFAULT : -E2BIG;
out:
	if (r == 0 && c->cont && t && n.attr) {
		/* a normal class the owner check let run: made here with the
		 * copy checked above, never CONTINUE'd. The attr is in guest
		 * memory, and the kernel's second read of it is another
		 * thread's to change: a SCHED_FIFO the sentry keeps virtual
		 * reached the host whenever the caller's RLIMIT_RTPRIO allows
		 * one (as guest root, with the host's limit 0, an EPERM Linux
		 * never gives; toctou33, isolation_race sched_attr_copy_once) */
		c->cont = 0;
		atomic_fetch_add(&t->refs, 1);
		r = sc_owner_make(c, t, vs_native_fn, &n);
		snprintf(c->note, sizeof c->note, "a normal class, made by the sentry with its copy");
	}
	task_put(t);
	return r;
}

/* the virtual class of the task a getter names into *v: 1, or 0 with
 * c->cont set (no virtual class, no such task, a bad pid: the kernel answers) */
static int vs_get_virtual(struct sc_call *c, struct vsched *v)
{
	pid_t pid = (pid_t)c->args[0];
	struct task *t = pid < 0 ? NULL : vs_get(c, pid);
	c->cont = 1;
	if (!t)
		return 0;
	*v = vs_read(t);
	task_put(t);
	c->cont = !v->policy;
	return v->policy != 0;
}

long sys_sched_getscheduler(struct sc_call *c)
{
	struct vsched v;
	if (!vs_get_virtual(c, &v))
		return 0;
	return v.policy | (v.reset ? SCHED_RESET_ON_FORK : 0);
}

long sys_sched_getparam(struct sc_call *c)
{
	struct vsched v;
	if (!c->args[1] || !vs_get_virtual(c, &v)) {
		c->cont = 1; /* a NULL param: EINVAL natively */
		return 0;
	}
	int prio = v.prio;
	return sc_write_guest(c, c->args[1], &prio, sizeof prio) < 0 ? -EFAULT : 0;
}

long sys_sched_getattr(struct sc_call *c)
{
	struct vsched v;
	uint32_t usize = (uint32_t)c->args[2];
	if (!c->args[1] || usize > VS_PAGE || usize < VS_ATTR_SIZE_VER0 || (unsigned)c->args[3] ||
	    !vs_get_virtual(c, &v)) {
		c->cont = 1; /* bad arguments: EINVAL natively */
		return 0;
	}
	struct vs_attr a = { .policy = (uint32_t)v.policy, .prio = (uint32_t)v.prio,
			     .flags = v.reset ? VS_FLAG_RESET_ON_FORK : 0,
			     .runtime = v.runtime, .deadline = v.deadline, .period = v.period,
			     .util_min = 0, .util_max = 1024 };
	/* the smaller of the two sizes, as sched_attr_copy_to_user */
	a.size = usize < sizeof a ? usize : (uint32_t)sizeof a;
	return sc_write_guest(c, c->args[1], &a, a.size) < 0 ? -EFAULT : 0;
}

long sys_sched_rr_get_interval(struct sc_call *c)
{
	struct vsched v;
	if (!vs_get_virtual(c, &v))
		return 0;
	/* SCHED_RR's slice; FIFO and DEADLINE have none (0) */
	struct timespec ts = { 0, v.policy == SCHED_RR ? VS_RR_TIMESLICE_NS : 0 };
	return sc_write_guest(c, c->args[1], &ts, sizeof ts) < 0 ? -EFAULT : 0;
}
