/* sentry/tracer.c - the ptrace state machine: the main thread traces every
 * guest task (ptrace requests must come from the thread that attached)
 * while worker threads answer notifications (pipeline.c).
 *
 * Ownership: this thread alone creates, re-keys and removes tasks, and it
 * alone reads and writes the "tracer" fields of struct task (kernel/task.h):
 * pt_state, held, initial, fork_*, parked, doomed_parent, exec_pending. It
 * keeps one table of its own, early[]: tids whose first stop came before
 * their parent's fork event (held, never resumed, until that event, or
 * killed when that parent died at its event stop: early_orphans).
 *
 * Bounds: at most max_tasks tasks (MAX_TASKS, without --pids at most an
 * eighth of kernel.pid_max / 3, less if the sentry's fd limit,
 * raised to its hard limit first, cannot hold a pidfd per task and
 * FDS_SPARE more, or a pidfd per task and four fds per worker of a waiting
 * call (pipeline_wait_begin) for every task: a fifth of the limit;
 * MOAT_MAX_TASKS may lower it).
 * A fork or clone past the bound is refused: the child is registered (never
 * an unknown task) but killed at its first stop before it runs any guest
 * code (a thread is made to exit(0) on its clone's own syscall instruction,
 * a process gets SIGKILL), and its parent is held at the call's syscall exit
 * until the child is gone, then sees -EAGAIN (audited). A refused fork's
 * child is a zombie the parent may still reap. early[] is bounded too (a
 * task beyond it is killed, never resumed unregistered).
 */
#include "sentry/sentry.h"
#include "sentry/netd.h"
#include "gofer/gofer.h"
#include "fs/walk.h"
#include "kernel/task.h"
#include "kernel/cred.h"
#include "platform/arch.h"
#include "platform/platform.h"
#include "syscalls/table.h"
#include "syscalls/filter.h"
#include "common/log.h"
#include "common/util.h"

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_TASKS 4096
#define PID_SHARE_DIV 8 /* at most an eighth of kernel.pid_max (3 per task) */

struct tracer {
	struct tracer_args *a;
	struct sandbox *sb;
	pid_t main_pid;
	int listener, main_done, init_reaped, status_out;
	int trimmed;             /* the heap trimmed once the program runs */
	int max_tasks;
	pid_t *early;            /* new tasks whose first stop came before their parent's event */
	double *early_ms;        /* when each came (or was last seen named by its parent) */
	int nearly, cap_early;
	unsigned long early_waits, orphans; /* MOAT_PROFILE */
	struct task **xf;        /* execs let go and not over (exec_fenced): one per group */
	int nxf, cap_xf;
	struct held_stop *held;  /* stops held while a sibling's exec runs (hold_stop) */
	int nheld, cap_held, nready;
};

/* A ptrace stop taken off wait4 and not handled yet (hold_stop), or a
 * refused fork's parent to answer (refused) */
struct held_stop {
	pid_t tid, tgid;
	int st, ready, refused;
	struct rusage ru;
};

static void nap_us(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

#define GOFER_DEADLINE_MS 10000.0
#define FDS_SPARE 512 /* fds the sentry keeps for itself: workers, gofer, calls in flight */

static int past_deadline(void *arg)
{
	return moat_ms_now() > *(const double *)arg;
}

static int take_early(struct tracer *tr, pid_t tid)
{
	for (int i = 0; i < tr->nearly; i++)
		if (tr->early[i] == tid) {
			tr->nearly--;
			tr->early[i] = tr->early[tr->nearly];
			tr->early_ms[i] = tr->early_ms[tr->nearly];
			return 1;
		}
	return 0;
}

/* 0, or -1 when the table is full (the caller kills the task). */
static int add_early(struct tracer *tr, pid_t tid)
{
	if (tr->nearly == tr->cap_early) {
		if (tr->cap_early >= 2 * tr->max_tasks)
			return -1;
		int cap = tr->cap_early ? tr->cap_early * 2 : 64;
		pid_t *n = realloc(tr->early, cap * sizeof *n);
		if (!n)
			return -1;
		tr->early = n;
		double *m = realloc(tr->early_ms, cap * sizeof *m);
		if (!m)
			return -1;
		tr->early_ms = m;
		tr->cap_early = cap;
	}
	tr->early_ms[tr->nearly] = moat_ms_now();
	tr->early[tr->nearly++] = tid;
	return 0;
}

/* ---- orphans in early[] ----
 * A child's first stop waits in early[] for its parent's fork event. A
 * parent killed at that event stop (a kill of its group; a sibling's exec,
 * whose de_thread kills it) never reports it: the child was left held at
 * its first stop for ever, unregistered (a process reparented to the init
 * with the pipes and the pid its parent gave it; a thread dies with its
 * group and is reaped). Nothing names the parent in the child, so an entry
 * is taken for an orphan when it has waited EARLY_ORPHAN_MS and no live
 * task's last ptrace event message names it (a parent at its fork event
 * stop, even one not yet waited for, names its child there): it is killed
 * before it runs any guest code (fail closed: it was never registered) and
 * reaped. A parent on its way to its event stop, between the kernel's
 * wake-up of the child and that stop (a few instructions), for a second
 * would lose its child so (a guest that slows its own threads harms
 * itself). While early[] is not empty the round's blocking wait polls
 * instead (early_wait), so that the check runs when nothing else stops. */
#define EARLY_ORPHAN_MS 1000.0

struct tidv {
	pid_t *v;
	int n, cap;
};

static int collect_tid(struct task *t, void *arg)
{
	struct tidv *a = arg;
	if (atomic_load(&t->reaped) || t->exited)
		return 0;
	if (a->n == a->cap) {
		int cap = a->cap ? a->cap * 2 : 64;
		pid_t *v = realloc(a->v, (size_t)cap * sizeof *v);
		if (!v)
			return 1;
		a->v = v;
		a->cap = cap;
	}
	a->v[a->n++] = atomic_load(&t->tid);
	return 0;
}

static void early_orphans(struct tracer *tr)
{
	double now = moat_ms_now();
	struct tidv live = { 0 };
	int have = 0;
	for (int i = 0; i < tr->nearly; i++) {
		if (now - tr->early_ms[i] < EARLY_ORPHAN_MS)
			continue;
		if (!have) {
			task_for_each_thread(tr->sb, collect_tid, &live);
			have = 1;
		}
		int named = 0;
		for (int j = 0; j < live.n && !named; j++) {
			unsigned long m = 0;
			named = ptrace(PTRACE_GETEVENTMSG, live.v[j], 0, &m) == 0 && (pid_t)m == tr->early[i];
		}
		tr->early_ms[i] = now; /* named: its event comes; else killed once a second */
		if (named)
			continue;
		dbg("task %d held at its first stop, its parent gone before its fork event: killed",
		    (int)tr->early[i]);
		kill(tr->early[i], SIGKILL); /* its exit takes it off early[] */
		tr->orphans++;
	}
	free(live.v);
}

/* The round's blocking wait while early[] holds a task: poll (50 us, then
 * longer, up to 1.6 ms apart) until a stop or exit is there to take,
 * checking for orphans meanwhile. As a rule the parent's event is there
 * before the round ends and this never runs (fork, thread and fork+exec
 * loops: none); an orphan's second costs every stop meanwhile up to 1.6 ms
 * more before the tracer sees it. */
static void early_wait(struct tracer *tr)
{
	long us = 50;
	tr->early_waits++;
	while (tr->nearly > 0) {
		siginfo_t si;
		memset(&si, 0, sizeof si);
		if (waitid(P_ALL, 0, &si, WEXITED | __WALL | WNOWAIT | WNOHANG) < 0 || si.si_pid)
			return;
		early_orphans(tr);
		nap_us(us);
		if (us < 1000)
			us *= 2;
	}
}

/* Give a child its guest ids (vid < 0: unknown) and let it run if it is held. */
static void release_child(struct tracer *tr, pid_t child, pid_t vid, int thread)
{
	struct task *c = task_get(tr->sb, child);
	if (!c)
		return;
	c->vtid = vid;
	if (!thread)
		c->vtgid = vid;
	if (c->doomed_parent) {
		/* refused: it never runs */
	} else if (c->held) {
		c->held = 0;
		c->pt_state = 1;
		ptrace(PTRACE_CONT, child, 0, 0);
	} else if (c->pt_state == 0) {
		c->pt_state = 2; /* resume at its first stop */
	}
	task_put(c);
}

/* A task's run from its resume to its next stop on the tracer's CPU (issue
 * 6, pexec3; ARCHITECTURE "Processes and ptrace"). A resume wakes the
 * tracee with a plain wake-up: with the tracer still running on its CPU,
 * the scheduler puts it on the other, idle (on this VM halted) CPU, and
 * its next stop wakes the tracer across again; each such hand-off is an
 * IPI and a vCPU coming out of halt. A fork's child from the fork event to
 * its first stop, and an exec from its seccomp stop to PTRACE_EVENT_EXEC
 * (or the failed call's exit) run in the kernel only, so for those the
 * tracer pins the task to its own CPU (sched_getcpu: rseq, no system call)
 * and gives it back its own affinity at that next stop, before it runs a
 * guest instruction: the guest never sees the pin (the only window is
 * another task's sched_getaffinity of it meanwhile). Not when the CPU is
 * outside the task's affinity, the task may use one CPU only, or the
 * kernel refuses (EPERM: a task of another host uid). */
static int pin_on = -1;
static unsigned long pin_n, pin_refused, pin_busy; /* MOAT_PROFILE */
/* One pinned task at a time (a second window runs wherever the scheduler
 * puts it; alone this did not undo the parallel case's loss below, the
 * runnable count did). Set by the tracer, cleared by whoever unpins (a
 * worker for the loader's pin) or by the tracer when the task is gone;
 * only ever compared, never dereferenced. */
static struct task *pin_holder;
/* The guest's pid namespace and sandbox (tracer_run): a task's affinity
 * and its RLIMIT_CORE are set by the guest's init, by the task's number
 * there (guest_number: the sentry's filter refuses these calls on any task
 * but its own, initrows2) */
static int act_pidns = -1;
static struct sandbox *act_sb;

/* NS_GET_PID_IN_PIDNS (linux/nsfs.h, Linux 6.9): a pid of our namespace
 * translated into the namespace of the fd's. */
#ifndef NS_GET_PID_IN_PIDNS
#define NS_GET_PID_IN_PIDNS _IOR(0xb7, 0x8, int)
#endif

/* host tid's number in the guest's pid namespace, or -1 (before Linux
 * 6.9: ENOTTY) */
static pid_t guest_number(pid_t tid)
{
	if (act_pidns < 0)
		return -1;
	int v = ioctl(act_pidns, NS_GET_PID_IN_PIDNS, (unsigned long)tid);
	return v > 0 ? (pid_t)v : -1;
}

/* sched_setaffinity of a guest task (its host tid) made by the guest's
 * init: 0 or -errno */
static long init_affinity(pid_t tid, const cpu_set_t *mask)
{
	struct init_act_req q = { .nr = SYS_sched_setaffinity, .pid = guest_number(tid), .len = sizeof *mask };
	struct init_act_rep p;
	memcpy(q.buf, mask, sizeof *mask);
	return q.pid > 0 ? init_act_call(act_sb, &q, &p) : -ESRCH;
}

/* Anything else runnable on the machine now (the fourth field of
 * /proc/loadavg, runnable tasks over all CPUs, counts this thread): then no
 * CPU is idle for a resume to wake, nothing is gained, and a pin only keeps
 * the task from a CPU that frees up: two fork+exec loops side by side in one
 * sandbox took +18% wall with every window pinned (14 interleaved rounds).
 * 1.4 us a read (pread of the guest procfs' loadavg: global, not per pid
 * namespace); unreadable: no pin. */
static int loadavg_fd = -2, pin_always = -1;

static int others_running(int procfd)
{
	if (pin_always < 0) /* tests: pin whatever runs (isolation_proctree) */
		pin_always = getenv("MOAT_TEST_EXEC_PIN_ALWAYS") != NULL;
	if (pin_always)
		return 0;
	if (loadavg_fd == -2)
		loadavg_fd = procfd >= 0 ? openat(procfd, "loadavg", O_RDONLY | O_CLOEXEC) : -1;
	if (loadavg_fd < 0)
		return 1;
	char b[128];
	ssize_t n = pread(loadavg_fd, b, sizeof b - 1, 0);
	if (n <= 0)
		return 1;
	b[n] = 0;
	const char *p = b;
	for (int f = 0; f < 3 && p; f++) {
		p = strchr(p, ' ');
		if (p)
			p++;
	}
	return !p || atoi(p) > 1;
}

static void pin_release(struct task *t)
{
	struct task *e = t;
	__atomic_compare_exchange_n(&pin_holder, &e, NULL, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
}

static void task_pin(struct task *t, pid_t tid, int procfd)
{
	if (pin_on < 0) {
		const char *e = getenv("MOAT_NO_EXEC_PIN"); /* tests and A/B */
		pin_on = !(e && *e && strcmp(e, "0") != 0);
	}
	if (!pin_on || t->pinned)
		return;
	if (__atomic_load_n(&pin_holder, __ATOMIC_ACQUIRE)) {
		pin_busy++;
		return;
	}
	int cpu = sched_getcpu();
	if (cpu < 0 || cpu >= CPU_SETSIZE)
		return;
	if (others_running(procfd)) {
		pin_busy++;
		return;
	}
	if (sched_getaffinity(tid, sizeof t->pin_mask, &t->pin_mask) < 0) {
		pin_refused++;
		return;
	}
	if (!CPU_ISSET(cpu, &t->pin_mask) || CPU_COUNT(&t->pin_mask) < 2)
		return;
	cpu_set_t one;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	if (init_affinity(tid, &one) == 0) {
		t->pinned = 1;
		t->pin_cpu = cpu;
		__atomic_store_n(&pin_holder, t, __ATOMIC_RELEASE);
		pin_n++;
	} else {
		pin_refused++;
	}
}

/* Its own affinity back, unless someone changed it meanwhile (a task
 * allowed to set another's: what it set stays). */
static void affinity_back(pid_t tid, int cpu, const cpu_set_t *mask)
{
	cpu_set_t now;
	if (sched_getaffinity(tid, sizeof now, &now) == 0 && CPU_COUNT(&now) == 1 &&
	    CPU_ISSET(cpu, &now))
		init_affinity(tid, mask);
}

/* At the pinned task's next stop, before it is resumed. */
static void task_unpin(struct task *t, pid_t tid)
{
	if (!t->pinned)
		return;
	t->pinned = 0;
	affinity_back(tid, t->pin_cpu, &t->pin_mask);
	pin_release(t);
}

/* An exec's pin goes on past PTRACE_EVENT_EXEC while the loader (moat's
 * code, not yet the program's) runs to its call: the resume, the call's
 * wake-up of a worker and the program fd's ADDFD round trip stay on one
 * CPU. The worker serving the call gives the mask back before its answer
 * (exec_loader_call), or the tracer at any stop of the task before that;
 * whichever takes loader_pin first. */
static void task_pin_to_loader(struct task *t, pid_t tid)
{
	if (!t->pinned)
		return;
	t->pinned = 0;
	pthread_mutex_lock(&t->lock);
	if (t->loader_ok) {
		t->loader_pin_cpu = t->pin_cpu;
		t->loader_pin_mask = t->pin_mask;
		__atomic_store_n(&t->loader_pin, 1, __ATOMIC_RELEASE);
	}
	int handed = t->loader_pin;
	pthread_mutex_unlock(&t->lock);
	if (!handed) {
		affinity_back(tid, t->pin_cpu, &t->pin_mask);
		pin_release(t);
	}
}

void task_loader_unpin(struct task *t)
{
	if (!__atomic_load_n(&t->loader_pin, __ATOMIC_ACQUIRE))
		return;
	pthread_mutex_lock(&t->lock);
	int was = t->loader_pin, cpu = t->loader_pin_cpu;
	cpu_set_t m = t->loader_pin_mask;
	__atomic_store_n(&t->loader_pin, 0, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&t->lock);
	if (was) {
		affinity_back(atomic_load_explicit(&t->tid, memory_order_relaxed), cpu, &m);
		pin_release(t);
	}
}

/* 1 when the traced thread tid has exited (its exit waits for the tracer,
 * WNOWAIT: not reaped here), waiting up to 100 ms for it */
static int doomed_exited(pid_t tid)
{
	for (int i = 0; i < 100; i++) {
		siginfo_t si;
		memset(&si, 0, sizeof si);
		if (waitid(P_PID, (id_t)tid, &si, WEXITED | WNOHANG | WNOWAIT | __WALL) != 0)
			return 0;
		if (si.si_pid == tid)
			return 1;
		struct timespec ms = { 0, 1000000 };
		nanosleep(&ms, NULL);
	}
	return 0;
}

/* A refused task at its first stop: it must not run guest code. */
static void kill_doomed(struct task *c)
{
	if (c->tid != c->tgid) {
		/* SIGKILL would take the whole thread group: run exit(0) on the
		 * clone's own syscall instruction (the one before the stop's ip).
		 * That call passes the guest's own seccomp filters, which may
		 * answer it (RET_ERRNO, RET_TRACE: ENOSYS here); a signal pending
		 * at the resume ran the guest's handler first, whose frame's
		 * registers sigreturn restores; and the instruction read here is
		 * guest memory another thread may rewrite before the thread runs
		 * it: each way the thread went on running guest code past the
		 * bound (red team 52). So every signal is blocked first (none is
		 * delivered to it; a process-directed one goes to another
		 * thread) and the thread runs that one instruction alone
		 * (PTRACE_SINGLESTEP, t->doomed_exit): the exit kills it without
		 * another stop; any stop that comes instead (the step's trap
		 * after an answered exit or another instruction, a guest's
		 * RET_TRACE stop) kills its process (doomed_stop). */
		arch_regs regs;
		sigset_t all;
		sigfillset(&all);
		if (ptrace(PTRACE_GETREGS, c->tid, 0, &regs) == 0 &&
		    ptrace(PTRACE_SETSIGMASK, c->tid, sizeof(uint64_t), &all) == 0) {
			errno = 0;
			long w = ptrace(PTRACE_PEEKTEXT, c->tid, REG_IP(regs) - 2, 0);
			if (errno == 0 && (w & 0xffff) == 0x050f) {
				REG_IP(regs) -= 2;
				REG_SYSNO(regs) = -1; /* no restart logic */
				REG_RET(regs) = __NR_exit;
				REG_ARG0(regs) = 0;
				if (ptrace(PTRACE_SETREGS, c->tid, 0, &regs) == 0 &&
				    ptrace(PTRACE_SINGLESTEP, c->tid, 0, 0) == 0) {
					c->doomed_exit = 1;
					return;
				}
			}
		}
		/* killed at its first stop (a sibling's exec: de_thread's
		 * SIGKILL; its group's kill): only a fatal signal takes a
		 * stopped tracee out of its stop, so the requests are ESRCH and
		 * it runs no guest code again. Killing its process then killed
		 * the image the sibling's exec had just made (red team 53: 4-13%
		 * of the runs of a process making threads past the bound while
		 * a thread execs). Its exit seen (not reaped) is the proof;
		 * without it, fail closed. */
		if (errno == ESRCH && doomed_exited(c->tid))
			return;
		/* fail closed: the whole process */
		warn_guest("a refused thread (task %d) could not be sent to exit: its process is killed", (int)c->tid);
		kill(c->tgid, SIGKILL);
		return;
	}
	kill(c->tid, SIGKILL);
}

/* A stop of a refused thread sent to exit(0) by one step (kill_doomed)
 * but a group-stop (event_stop) or a SIGSTOP's delivery: the exit did not happen (a filter
 * answered it, or another instruction ran); the process is killed (fail
 * closed) before the thread runs a second instruction of the guest's. */
static void doomed_stop(struct task *t, pid_t tid)
{
	warn_guest("a refused thread (task %d) did not exit: its process is killed", (int)tid);
	kill(t->tgid, SIGKILL);
}

static const char *fork_name(long nr)
{
	switch (nr) {
	case __NR_fork: return "fork";
	case __NR_vfork: return "vfork";
	case __NR_clone3: return "clone3";
	default: return "clone";
	}
}

/* The refused fork's child is gone: the parent's call returns -EAGAIN. */
static void finish_refused(struct tracer *tr, struct task *p)
{
	arch_regs regs;
	const char *name = "clone";
	if (ptrace(PTRACE_GETREGS, p->tid, 0, &regs) == 0) {
		name = fork_name(REG_NR(regs));
		REG_RET(regs) = (unsigned long)-EAGAIN;
		ptrace(PTRACE_SETREGS, p->tid, 0, &regs);
	}
	audit_event(tr->sb->audit, tr->sb, p, p->tid, name, "", DEC_DENY, -EAGAIN,
		    p->fork_refused == 2 ? "the host's pids nearly all taken" :
		    tr->a->pids_max ? "--pids reached" : "task table full");
	tr->sb->n_fork_refused++;
	if (p->fork_refused == 2)
		tr->sb->n_fork_host_low++;
	p->fork_child = 0;
	p->fork_refused = 0;
	p->parked = 0;
	ptrace(PTRACE_CONT, p->tid, 0, 0);
}

/* The syscall exit of a fork/clone we asked to see. Returns 1 when the
 * parent stays stopped (parked until its refused child is gone). */
static int fork_exit(struct tracer *tr, struct task *p)
{
	if (p->fork_refused) {
		struct task *c = task_get(tr->sb, p->fork_child);
		task_put(c);
		if (c) {
			p->parked = 1;
			return 1;
		}
		finish_refused(tr, p);
		return 1;
	}
	arch_regs regs;
	long ret = -1;
	if (ptrace(PTRACE_GETREGS, p->tid, 0, &regs) == 0)
		ret = (long)REG_RET(regs);
	release_child(tr, p->fork_child, ret > 0 ? (pid_t)ret : -1, p->fork_thread);
	p->fork_child = 0;
	return 0;
}

/* ---- the tracer's own accesses and a sibling's exec (tracerw) ----
 * Everything the tracer does at a stop it does by the stopped task's tid:
 * guest_write (process_vm_writev) below its stack or to a buffer it named,
 * PTRACE_SETREGS, the resume. Once it has let an exec of the thread group
 * go (exec_fenced), that exec's de_thread may kill the stopped task at any
 * moment, and when the task is the group's leader the exec'ing thread takes
 * its pid with the new mm (exchange_tids): a write by that pid lands in the
 * new image (the kernel refuses ptrace requests to a task whose
 * PTRACE_EVENT_EXEC was not waited for, not process_vm_writev). So a stop of
 * a task whose group has an exec in flight by another task is not handled:
 * it is held (hold_stop) until that exec is over. At PTRACE_EVENT_EXEC every
 * other thread of the group is dead (de_thread): its held stops are dropped
 * (held_drop). When the exec failed (its syscall exit) or its task died,
 * they are handled then (held_release: marked ready, taken before the next
 * wait4), each checked again. Only the tracer handles stops and lets execs
 * go, so a stop it started handling with no exec of the group in flight
 * ends before one can be: the check at the stop's start is enough. The
 * common case costs one atomic load (the group's fence slot). */
static struct task *exec_in_flight(struct tracer *tr, const struct task *t)
{
	if (!task_fence_up(t->tgid))
		return NULL;
	for (int i = 0; i < tr->nxf; i++)
		if (tr->xf[i]->tgid == t->tgid && tr->xf[i] != t)
			return tr->xf[i];
	return NULL;
}

static void *grow(void *p, int *cap, size_t size)
{
	int n = *cap ? *cap * 2 : 16;
	void *q = realloc(p, (size_t)n * size);
	if (!q) {
		/* fail closed: never handle a stop that should wait */
		warn_guest("out of memory (the tracer's held stops)");
		abort();
	}
	*cap = n;
	return q;
}

static void hold_stop(struct tracer *tr, pid_t tid, pid_t tgid, int st, const struct rusage *ru, int refused)
{
	if (tr->nheld == tr->cap_held)
		tr->held = grow(tr->held, &tr->cap_held, sizeof *tr->held);
	struct held_stop *h = &tr->held[tr->nheld++];
	memset(h, 0, sizeof *h);
	h->tid = tid;
	h->tgid = tgid;
	h->st = st;
	h->refused = refused;
	if (ru)
		h->ru = *ru;
}

static void held_remove(struct tracer *tr, int i)
{
	if (tr->held[i].ready)
		tr->nready--;
	tr->held[i] = tr->held[--tr->nheld];
}

/* Drop the held stops of thread group tgid (tgid > 0) or of task tid (tid > 0) */
static void held_drop(struct tracer *tr, pid_t tgid, pid_t tid)
{
	for (int i = tr->nheld - 1; i >= 0; i--)
		if ((tgid > 0 && tr->held[i].tgid == tgid) || (tid > 0 && tr->held[i].tid == tid))
			held_remove(tr, i);
}

static void held_release(struct tracer *tr, pid_t tgid)
{
	for (int i = 0; i < tr->nheld; i++)
		if (tr->held[i].tgid == tgid && !tr->held[i].ready) {
			tr->held[i].ready = 1;
			tr->nready++;
		}
}

/* the oldest ready held stop, taken off the list: 1, or 0 (none) */
static int held_next(struct tracer *tr, struct held_stop *out)
{
	if (!tr->nready)
		return 0;
	for (int i = 0; i < tr->nheld; i++)
		if (tr->held[i].ready) {
			*out = tr->held[i];
			tr->nready--;
			memmove(&tr->held[i], &tr->held[i + 1], (size_t)(tr->nheld - i - 1) * sizeof *tr->held);
			tr->nheld--;
			return 1;
		}
	return 0;
}

static void exec_let_go(struct tracer *tr, struct task *t)
{
	if (tr->nxf == tr->cap_xf)
		tr->xf = grow(tr->xf, &tr->cap_xf, sizeof *tr->xf);
	tr->xf[tr->nxf++] = t;
	t->exec_fenced = 1;
}

/* The exec fence (kernel/task.h task_fence_close): raised at an exec stop
 * before the rewritten exec runs, lowered once that exec is over: at
 * PTRACE_EVENT_EXEC (the new image is in place and every other thread of the
 * group, each trapped call's caller among them, is gone: no notification of
 * the old image stays valid), at the failed exec's syscall exit, or at the
 * exec'ing task's death. The group's held stops are handled from then on
 * (PTRACE_EVENT_EXEC drops them first). */
static void exec_unfence(struct tracer *tr, struct task *t)
{
	if (t && t->exec_fenced) {
		t->exec_fenced = 0;
		task_fence_open(t->tgid);
		for (int i = 0; i < tr->nxf; i++)
			if (tr->xf[i] == t) {
				tr->xf[i] = tr->xf[--tr->nxf];
				break;
			}
		held_release(tr, t->tgid);
	}
}

/* Every exec of thread group tgid marked in flight is over (its leader's
 * number reaped, or its PTRACE_EVENT_EXEC: the exec'ing thread holds that
 * number, every other is dead): nothing else of the group will end one. */
static void group_unfence(struct tracer *tr, pid_t tgid)
{
	for (int i = tr->nxf - 1; i >= 0; i--)
		if (i < tr->nxf && tr->xf[i]->tgid == tgid)
			exec_unfence(tr, tr->xf[i]);
}

/* A wait4 just reaped tid (st its status), the reap gate still closed:
 * the task is marked before its number can be given to another (the
 * handling, task_gone, comes later in the round) and copies into its group
 * prove their call again (task_io_gone) */
static void reap_note(struct sandbox *sb, pid_t tid, int st)
{
	if (!WIFEXITED(st) && !WIFSIGNALED(st))
		return;
	struct task *t = task_get(sb, tid);
	if (t) {
		atomic_store(&t->reaped, 1);
		task_io_gone(t->tgid);
		task_put(t);
	}
}

/* What the tracer keeps for task t (keyed tid), which is gone. */
static void task_forget(struct tracer *tr, struct task *t, pid_t tid)
{
	exec_unfence(tr, t); /* died exec'ing (another thread's exec won) */
	held_drop(tr, 0, tid); /* its number may be given again */
	task_io_gone(t->tgid); /* its tid may be reused: copies prove their call again */
	pin_release(t); /* died pinned: the next may pin */
	aio_leave(tr->sb, t);
	if (t->fork_child) /* it died inside fork */
		release_child(tr, t->fork_child, -1, t->fork_thread);
	if (t->doomed_parent) {
		struct task *p = task_get(tr->sb, t->doomed_parent);
		if (p && p->parked) {
			if (exec_in_flight(tr, p))
				hold_stop(tr, p->tid, p->tgid, 0, NULL, 1); /* answered when that exec is over */
			else
				finish_refused(tr, p);
		}
		task_put(p);
	}
}

/* The parent-death signal (forget_original_parent): the thread tid, of
 * thread group tgid, is gone. Every task whose parent it was gets a new
 * one — heir, or (heir < 0) a live thread of the same group, else the init
 * (0: the guest's init never dies before the program; a subreaper is not
 * known) — and each with a parent-death signal set has it sent to its
 * process, through the sentry's pidfd (si_pid 0: the sender is outside the
 * guest's pid namespace; Linux's names the dying parent). The signal is
 * virtual (syscalls/sys_cred.c sys_prctl): a set*id that changes the
 * effective or file-system ids clears it, which the native one could not
 * be. A reap comes after the kernel's exit_notify, so the child's getppid()
 * names its new parent by then, as in Linux; a leader that exits before its
 * threads is reaped only with the last of them, and its children hear of
 * it then. */
static void pdeath_send(struct tracer *tr, pid_t tid, pid_t tgid, pid_t heir)
{
	struct task **v = NULL;
	int n = task_pdeath_reparent(tr->sb, tid, tgid, heir, &v); /* every one: no cap */
	for (int i = 0; i < n; i++) {
		int sig = atomic_load(&v[i]->pdeathsig);
		if (sig && v[i]->pidfd >= 0 && !atomic_load(&v[i]->reaped))
			syscall(SYS_pidfd_send_signal, v[i]->pidfd, sig, NULL, 0);
		task_put(v[i]);
	}
	free(v);
}

/* A task is gone (reaped). */
static void task_gone(struct tracer *tr, pid_t tid)
{
	struct task *t = task_get(tr->sb, tid);
	if (t) {
		pdeath_send(tr, tid, t->tgid, -1);
		if (tid == t->tgid) {
			/* the leader's number reaped: the group is empty (a leader
			 * is reaped after its threads; an exec'ing thread that
			 * took the number and died is the leader then), so an
			 * exec still marked in flight for it is over */
			group_unfence(tr, tid);
			held_drop(tr, tid, 0);
			/* and any other entry of the group is stale: a thread
			 * whose death came under the leader's number (it exec'd,
			 * took that number, and was killed before its
			 * PTRACE_EVENT_EXEC was handled) would stay for ever,
			 * counted against --pids with its pidfd and pending
			 * exec's fds */
			pid_t o[64];
			int n;
			for (int r = 0; r < 128 && (n = task_group_others(tr->sb, tid, o, 64)) > 0; r++)
				for (int i = 0; i < n; i++) {
					struct task *x = task_get(tr->sb, o[i]);
					if (x) {
						task_forget(tr, x, o[i]);
						task_put(x);
					}
					take_early(tr, o[i]);
					pdeath_send(tr, o[i], tid, -1);
					task_remove(tr->sb, o[i]);
				}
		}
		task_forget(tr, t, tid);
		task_put(t);
	}
	task_remove(tr->sb, tid); /* a pending exec is dropped with the last reference */
}

/* The init's events: its one fork is the program. */
/* Core dumps never happen in a sandbox (ARCHITECTURE.md, "Core dumps"):
 * the host's core_pattern would write into the guest's native cwd or hand
 * the image to the host's helper (a pipe pattern ignores RLIMIT_CORE 0).
 * At the delivery stop of a signal whose default action dumps core and
 * that will kill the task (not caught; not ignored unless the kernel
 * forces it, a fault), the task's RLIMIT_CORE becomes 1 byte: too small for
 * a core file, and the value Linux takes as "no pipe dump". The process
 * dies of the signal with WCOREDUMP false, as when Linux cannot dump. A task
 * sharing its dispositions (sighand_shared) gets it whatever it shows.
 * Since red team 19 the real limit is 1 byte from the start anyway (pinned
 * in init_stop, the guest's own is virtual: syscalls/sys_signal.c), so this
 * is a second line: a dump needs no ptrace stop. */
static void no_core_dump(struct sandbox *sb, struct task *t, pid_t tid, int sig)
{
	static const unsigned long long core_sigs =
		1ULL << (SIGQUIT - 1) | 1ULL << (SIGILL - 1) | 1ULL << (SIGTRAP - 1) |
		1ULL << (SIGABRT - 1) | 1ULL << (SIGBUS - 1) | 1ULL << (SIGFPE - 1) |
		1ULL << (SIGSEGV - 1) | 1ULL << (SIGXCPU - 1) | 1ULL << (SIGXFSZ - 1) |
		1ULL << (SIGSYS - 1);
	unsigned long long bit, cgt = 0, ign = 0;
	char path[48], buf[4096];
	const char *p;

	if (sig < 1 || sig > 64 || !(core_sigs & (1ULL << (sig - 1))))
		return;
	bit = 1ULL << (sig - 1);
	/* The kernel reads the disposition again once this stop ends: a task
	 * sharing it (a thread; CLONE_SIGHAND) may set SIG_DFL between our
	 * read and that one, so what we read proves nothing there and the
	 * limit always drops (red team 19: a thread flipping SIGQUIT between
	 * a handler and SIG_DFL got a process killed by its default action,
	 * a core dump, with RLIMIT_CORE unlimited, one try in ~20). Alone, no
	 * one else can change it while it is stopped. */
	snprintf(path, sizeof path, "%d/status", (int)t->vtid);
	if (!t->sighand_shared && sb->guest_procfd >= 0 && read_text_at(sb->guest_procfd, path, buf, sizeof buf) > 0) {
		if ((p = strstr(buf, "\nSigIgn:\t")))
			ign = strtoull(p + 9, NULL, 16);
		if ((p = strstr(buf, "\nSigCgt:\t")))
			cgt = strtoull(p + 9, NULL, 16);
		if (cgt & bit)
			return; /* a handler runs */
		if (ign & bit) {
			siginfo_t si;

			if (ptrace(PTRACE_GETSIGINFO, tid, 0, &si) < 0 || si.si_code <= 0)
				return; /* ignored (a fault is forced: it kills) */
		}
	}
	/* made by the guest's init (the process's limit: any of its tids) */
	uint64_t one[2] = { 1, 1 };
	struct init_act_req q = { .nr = SYS_prlimit64, .pid = t->vtgid, .a = RLIMIT_CORE,
				  .flags = INIT_ACT_NEW, .len = sizeof one };
	struct init_act_rep rep;
	memcpy(q.buf, one, sizeof one);
	(void)sb;
	if (q.pid > 0)
		init_act_call(act_sb, &q, &rep);
}

/* Kernel-internal restart codes (include/linux/errno.h, not exported). */
#define ERESTARTSYS_ 512
#define ERESTARTNOINTR_ 513
#define ERESTARTNOHAND_ 514

/* Whether sig's disposition in task tid is to ignore it: SIG_IGN, or SIG_DFL
 * with a default of ignore (SIGCHLD, SIGWINCH, SIGURG, SIGCONT). A blocked
 * signal never reaches a delivery stop, so the mask is not looked at.
 * One read of the guest procfs' status; -1 if it cannot be read. */
static int sig_ignored(struct sandbox *sb, struct task *t, int sig)
{
	static const unsigned long long dfl_ign =
		1ULL << (SIGCHLD - 1) | 1ULL << (SIGWINCH - 1) | 1ULL << (SIGURG - 1) |
		1ULL << (SIGCONT - 1);
	unsigned long long bit, cgt, ign;
	char path[48], buf[4096];
	const char *p, *q;

	if (sig < 1 || sig > 64 || sig == SIGKILL || sig == SIGSTOP || sb->guest_procfd < 0)
		return -1;
	bit = 1ULL << (sig - 1);
	snprintf(path, sizeof path, "%d/status", (int)t->vtid);
	if (read_text_at(sb->guest_procfd, path, buf, sizeof buf) < 0)
		return -1;
	if (!(p = strstr(buf, "\nSigIgn:\t")) || !(q = strstr(buf, "\nSigCgt:\t")))
		return -1;
	ign = strtoull(p + 9, NULL, 16);
	cgt = strtoull(q + 9, NULL, 16);
	if (ign & bit)
		return 1;
	return !(cgt & bit) && (dfl_ign & bit);
}

/* The register of a call that returns -EINTR itself (io_pgetevents:
 * -ERESTARTNOHAND) with a relative timeout behind a pointer in guest
 * memory, which the kernel would restart (or a plain restart would start)
 * in full: rt_sigtimedwait, semtimedop, epoll_pwait2, io_getevents,
 * io_pgetevents. NULL for other calls. */
static unsigned long long *intr_tp_reg(long nr, arch_regs *r)
{
	switch (nr) {
	case __NR_rt_sigtimedwait:
		return &REG_ARG2(*r);
	case __NR_semtimedop:
	case __NR_epoll_pwait2:
		return &REG_ARG3(*r);
	case __NR_io_getevents:
	case __NR_io_pgetevents:
		return &REG_ARG4(*r);
	default:
		return NULL;
	}
}

static int intr_timeout_ptr(long nr, arch_regs *r)
{
	unsigned long long *reg = intr_tp_reg(nr, r);
	return reg && *reg != 0;
}

static long long mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Such a call, interrupted by a signal the task ignores, restarted with
 * what is left of its timeout: a copy of it (struct timespec) is written
 * below the stopped thread's red zone, where a signal frame would go and
 * no program keeps anything, and the pointer register names the copy until
 * the restarted call's syscall exit (PTRACE_SYSCALL: intr_tp_stage), which
 * puts the guest's own pointer back (intr_tp_sysstop). The guest's timespec
 * is only read. The time is counted from the first restart of this call
 * (cont: the call's last exit was this restart's -EINTR again): the time
 * before the first signal is not known, so the whole wait is at most the
 * timeout plus that. 0 when restarted (regs set), -1 to leave the EINTR. */
static int intr_tp_restart(struct task *t, pid_t tid, arch_regs *r, long nr, int cont)
{
	unsigned long long *reg = intr_tp_reg(nr, r);
	long long now = mono_ns(), left;
	struct timespec ts;

	if (!reg || !*reg)
		return -1;
	if (cont && t->intr_tp_nr == nr + 1 && t->intr_tp_ptr == *reg) {
		left = t->intr_tp_ns - (now - t->intr_tp_t0);
	} else {
		if (guest_read(tid, *reg, &ts, sizeof ts) < 0 || ts.tv_sec < 0 || ts.tv_nsec < 0 ||
		    ts.tv_nsec >= 1000000000L)
			return -1; /* the call checked it: it cannot be so */
		t->intr_tp_nr = nr + 1;
		t->intr_tp_ptr = *reg;
		t->intr_tp_ns = (ts.tv_sec > 9000000000LL ? 9000000000LL : (long long)ts.tv_sec) * 1000000000LL +
				ts.tv_nsec;
		t->intr_tp_t0 = now;
		left = t->intr_tp_ns;
	}
	if (left < 0)
		left = 0; /* a zero timeout: the call's own answer at its end (EAGAIN, 0) */
	ts.tv_sec = (time_t)(left / 1000000000LL);
	ts.tv_nsec = (long)(left % 1000000000LL);
	uint64_t sc = (REG_SP(*r) - ARCH_RED_ZONE - sizeof ts - 16) & ~15ULL;
	if (guest_write(tid, sc, &ts, sizeof ts) < 0) {
		t->intr_tp_nr = 0;
		return -1;
	}
	*reg = sc;
	REG_RET(*r) = (unsigned long long)-ERESTARTNOINTR_;
	if (ptrace(PTRACE_SETREGS, tid, 0, r) < 0) {
		t->intr_tp_nr = 0;
		return -1;
	}
	t->intr_tp_stage = 1;
	return 0;
}

/* A syscall stop of a call intr_tp_restart restarted: at its entry, go on
 * to its exit; at its exit, the guest's own timeout pointer back in its
 * register (a program may assume a syscall keeps it). */
static void intr_tp_sysstop(struct task *t, pid_t tid)
{
	arch_regs r;

	if (ptrace(PTRACE_GETREGS, tid, 0, &r) < 0) {
		t->intr_tp_stage = 0;
		t->intr_tp_nr = 0;
		ptrace(PTRACE_CONT, tid, 0, 0);
		return;
	}
	if (t->intr_tp_stage == 1 && (long)REG_RET(r) == -ENOSYS) {
		t->intr_tp_stage = 2; /* the entry */
		ptrace(PTRACE_SYSCALL, tid, 0, 0);
		return;
	}
	long nr = REG_NR(r), rax = (long)REG_RET(r);
	unsigned long long *reg = intr_tp_reg(nr, &r);
	t->intr_tp_stage = 0;
	if (reg && nr + 1 == t->intr_tp_nr) {
		*reg = t->intr_tp_ptr;
		ptrace(PTRACE_SETREGS, tid, 0, &r);
	}
	t->intr_tp_cont = rax == -EINTR || rax == -ERESTARTNOHAND_;
	if (!t->intr_tp_cont)
		t->intr_tp_nr = 0;
	ptrace(PTRACE_CONT, tid, 0, 0);
}

/* A signal stop between intr_tp_restart and the restarted call's entry
 * (a second signal at the same exit, or one that came before the task got
 * back to its syscall instruction). Ignored: dropped, the call runs on.
 * Otherwise the call ends with EINTR, as natively for a signal that is
 * delivered while it waits: the guest's pointer back, and a call the
 * kernel had already rewound for its restart (rax its number again) goes
 * past its syscall instruction. */
static int intr_tp_signal(struct sandbox *sb, struct task *t, pid_t tid, arch_regs *r, int sig)
{
	long nr = REG_NR(*r), rax = (long)REG_RET(*r);
	unsigned long long *reg = intr_tp_reg(nr, r);

	if (sig_ignored(sb, t, sig) == 1)
		return 0;
	t->intr_tp_stage = 0;
	t->intr_restarted = 0;
	if (!reg || nr + 1 != t->intr_tp_nr) {
		t->intr_tp_nr = 0;
		return sig;
	}
	t->intr_tp_nr = 0;
	*reg = t->intr_tp_ptr;
	if (rax == (long)REG_SYSNO(*r)) { /* the kernel rewinds rax to all of orig_rax */
		REG_IP(*r) += 2; /* the syscall instruction, which the kernel had gone back to */
		REG_RET(*r) = (unsigned long long)-EINTR;
	} else if (rax == -ERESTARTNOINTR_) {
		REG_RET(*r) = (unsigned long long)-EINTR;
	}
	ptrace(PTRACE_SETREGS, tid, 0, r);
	return sig;
}

static long long mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* epoll_wait/epoll_pwait restarted at an ignored signal: the millisecond
 * timeout is a register, so the restart gets what is left of it, counted
 * from the first restart of this call (the time before it is not known:
 * the whole wait is at most twice the timeout). The first restart writes
 * one millisecond less, which marks the call as restarted (a new call of
 * the program shows its own value). */
static void intr_epoll_timeout(struct task *t, arch_regs *r)
{
	int to = (int)REG_ARG3(*r);
	long long now = mono_ms();

	if (to <= 0)
		return; /* no wait, or none without end */
	if (t->intr_ep_nr == REG_NR(*r) + 1 && t->intr_ep_fd == REG_ARG0(*r) &&
	    t->intr_ep_written == to) {
		long long left = t->intr_ep_orig - (now - t->intr_ep_t0);
		to = left > 0 ? (int)left : 0;
	} else {
		t->intr_ep_nr = REG_NR(*r) + 1;
		t->intr_ep_fd = REG_ARG0(*r);
		t->intr_ep_orig = to;
		t->intr_ep_t0 = now;
		to = to - 1;
	}
	t->intr_ep_written = to;
	REG_ARG3(*r) = (unsigned long long)(unsigned)to;
}

/* Signals and trapped calls (ARCHITECTURE.md, "Signals and interrupted
 * calls"), at the signal-delivery stop of sig, before the kernel's restart
 * logic (handle_signal) looks at rax. Returns the signal to inject: sig, or
 * 0 when an ignored signal is dropped.
 *  (a) rax -ERESTARTSYS from a call the filter traps to the sentry, which no
 *      worker answered so (restart_answered): the seccomp wait was
 *      interrupted before RECV, the call never started. It becomes
 *      -ERESTARTNOINTR: restarted after the handler whatever SA_RESTART says,
 *      as if the signal had come just before the call (no EINTR from open,
 *      stat, kill...). The restarted call is marked (intr_before): if it
 *      would wait (a FIFO open, a lock), it answers EINTR at once, as the
 *      native call would have. A native call (a pipe's read) keeps its
 *      -ERESTARTSYS.
 *  (b) rax -EINTR of an interrupted call at the stop of a signal the task
 *      ignores: Linux queues an ignored signal for a traced task only, so
 *      natively it never woke. The signal is dropped and the call restarted
 *      (-ERESTARTNOINTR; a relative timeout starts again). If a handled
 *      signal is delivered at the same exit (rax still -ERESTARTNOINTR,
 *      intr_restarted), its -EINTR is put back, as natively. The
 *      -ERESTART* codes need nothing: without a handler the kernel restarts
 *      them itself. close is left alone (its fd is gone even on EINTR), and
 *      so is a worker's own -EINTR answer.
 *  (c) the same for a call whose relative timeout is behind a pointer
 *      (intr_tp_reg; io_pgetevents' -ERESTARTNOHAND too, which the kernel
 *      would restart in full): restarted with what is left of its timeout
 *      (intr_tp_restart), to its syscall exit (PTRACE_SYSCALL). A handled
 *      signal before the restarted call's entry gives it its EINTR
 *      (intr_tp_signal). */
static int sig_restart(struct sandbox *sb, struct task *t, pid_t tid, int sig)
{
	arch_regs regs;
	long rax, nr;

	int cont = t->intr_tp_cont;

	t->intr_tp_cont = 0;
	if (ptrace(PTRACE_GETREGS, tid, 0, &regs) < 0) {
		netconn_drop_pending(t);
		return sig;
	}
	if (netconn_signal_stop(t, &regs)) {
		/* the private call of a bind/listen/send stop, interrupted
		 * before a worker took it: made again at once, the signal
		 * held to its exit (netconn.c) */
		t->intr_restarted = 0;
		t->intr_tp_nr = 0;
		return sig;
	}
	rax = (long)REG_RET(regs);
	nr = REG_NR(regs);
	if (t->intr_tp_stage == 1)
		return intr_tp_signal(sb, t, tid, &regs, sig); /* (c) before its entry */
	if (nr >= 0 && (rax == -EINTR || rax == -ERESTARTNOHAND_) && intr_timeout_ptr(nr, &regs)) {
		/* (c) a relative timeout behind a pointer */
		t->intr_restarted = 0;
		if (__atomic_exchange_n(&t->restart_answered, 0, __ATOMIC_ACQUIRE) == nr + 1 ||
		    sig_ignored(sb, t, sig) != 1 || intr_tp_restart(t, tid, &regs, nr, cont) < 0) {
			t->intr_tp_nr = 0;
			return sig;
		}
		return 0;
	}
	t->intr_tp_nr = 0;
	if (nr < 0 || (rax != -ERESTARTSYS_ && rax != -EINTR && rax != -ERESTARTNOINTR_)) {
		t->intr_restarted = 0;
		return sig;
	}
	if (rax == -ERESTARTSYS_) {
		long answered = __atomic_exchange_n(&t->restart_answered, 0, __ATOMIC_ACQUIRE);
		const struct sysent *e = sc_lookup(nr);
		uint64_t args[SC_MAXARGS] = { REG_ARG0(regs), REG_ARG1(regs), REG_ARG2(regs),
					      REG_ARG3(regs), REG_ARG4(regs), REG_ARG5(regs) };

		t->intr_restarted = 0;
		if (answered == nr + 1 || !e || e->cls == SC_EXEC ||
		    (e->cls == SC_FAST && sc_args_native(e, args)))
			return sig; /* native, a ptrace stop, or the handler's own answer */
		if (sig_ignored(sb, t, sig) == 1)
			return sig; /* the kernel restarts it itself, and no wait of the
				     * restarted call may end for a signal Linux drops */
		REG_RET(regs) = (unsigned long long)-ERESTARTNOINTR_;
		if (ptrace(PTRACE_SETREGS, tid, 0, &regs) == 0)
			__atomic_store_n(&t->intr_before, nr + 1, __ATOMIC_RELEASE);
		return sig;
	}
	if (rax == -ERESTARTNOINTR_) {
		if (t->intr_restarted != nr + 1)
			return sig; /* the kernel's own (fork), or (a)'s */
		int ign = sig_ignored(sb, t, sig);
		if (ign == 1)
			return 0;
		t->intr_restarted = 0;
		REG_RET(regs) = (unsigned long long)-EINTR;
		ptrace(PTRACE_SETREGS, tid, 0, &regs);
		return sig;
	}
	/* -EINTR: a worker's own answer (the mark taken) is left alone */
	t->intr_restarted = 0;
	if (__atomic_exchange_n(&t->restart_answered, 0, __ATOMIC_ACQUIRE) == nr + 1 ||
	    nr == __NR_close || sig_ignored(sb, t, sig) != 1)
		return sig;
	if (nr == __NR_epoll_wait || nr == __NR_epoll_pwait)
		intr_epoll_timeout(t, &regs);
	REG_RET(regs) = (unsigned long long)-ERESTARTNOINTR_;
	if (ptrace(PTRACE_SETREGS, tid, 0, &regs) == 0)
		t->intr_restarted = nr + 1;
	return 0;
}

static void event_stop(struct tracer *tr, struct task *t, int sig);

static void init_stop(struct tracer *tr, pid_t tid, int sig, int ev)
{
	struct tracer_args *a = tr->a;
	struct sandbox *sb = tr->sb;
	if (ev == PTRACE_EVENT_FORK || ev == PTRACE_EVENT_VFORK || ev == PTRACE_EVENT_CLONE) {
		unsigned long child = 0;
		ptrace(PTRACE_GETEVENTMSG, tid, 0, &child);
		tr->main_pid = (pid_t)child;
		sb->main_pid = tr->main_pid;
		struct task *m = task_create(sb, tr->main_pid, tr->main_pid, NULL, 0);
		/* No core dump ever: the real RLIMIT_CORE is 1 byte from before
		 * the program's first instruction, inherited by every guest task;
		 * the guest sees and sets a virtual one (m->vcore_*, sys_signal.c).
		 * A dump needs no ptrace stop (a seccomp RET_KILL_PROCESS of a
		 * guest's own filter, a forced SIGSEGV), so no_core_dump alone
		 * missed those (red team 19). The init set it on itself before
		 * the fork (sentry/spawn.c: the sentry's filter lets it set no
		 * other process's limits, initrows2); checked here, fail closed. */
		struct rlimit one = { 0, 0 };
		rlim_t pin = sb->core_zero ? 0 : 1; /* (or 0: sentry/run.c core_limit) */
		if (prlimit(tr->main_pid, RLIMIT_CORE, NULL, &one) < 0 ||
		    (one.rlim_cur != 1 && one.rlim_cur != pin) || one.rlim_max != one.rlim_cur) {
			pwarn("RLIMIT_CORE of the program"); /* fail closed */
			kill(tr->main_pid, SIGKILL);
		}
		sb->n_tasks_peak = 1;
		cred_init(&m->cred, a->sb->start_uid, a->sb->start_gid);
		snprintf(m->fs->cwd, sizeof m->fs->cwd, "%s", a->workdir);
		m->initial = 1;
		m->vtid = m->vtgid = 2; /* the init's first child */
		m->vppid = 1;
		int early = take_early(tr, tr->main_pid);
		*a->forward_to = tr->main_pid;
		/* the init is done with: it only reaps from now on */
		ptrace(PTRACE_DETACH, tid, 0, 0);
		/* its first stop came first: released here, and its listener
		 * taken, as when that stop comes after this event (before,
		 * it was resumed without its listener ever being taken) */
		if (early)
			event_stop(tr, m, SIGTRAP);
		task_put(m);
	} else if (ev == PTRACE_EVENT_STOP) {
		ptrace(PTRACE_CONT, tid, 0, 0);
	} else {
		ptrace(PTRACE_CONT, tid, 0, ev ? 0 : sig);
	}
}

/* A SECCOMP_RET_TRACE stop that the sandbox's filter did not ask for (it
 * traces only its EXEC rows): a filter the guest stacked itself returned
 * RET_TRACE. The guest can have no tracer of its own (ptrace is denied), so
 * the call fails with ENOSYS, as Linux answers when no tracer is attached.
 * 1 if so (the call is skipped), 0 for the sandbox's own stops. */
static int guest_trace_stop(struct task *t, arch_regs regs)
{
	const struct sysent *e = sc_lookup(REG_NR(regs));
	/* an EXEC_UNLESS row (sendto/recvfrom) in the form the sandbox's
	 * filter runs natively (no address) was traced by the guest's filter:
	 * the RET_DATA proves nothing (the guest's filter wins a tie) */
	uint64_t args[SC_MAXARGS] = { REG_ARG0(regs), REG_ARG1(regs), REG_ARG2(regs),
				       REG_ARG3(regs), REG_ARG4(regs), REG_ARG5(regs) };
	if (e && e->cls == SC_EXEC && !(e->allow && sc_args_native(e, args)))
		return 0;
	REG_SYSNO(regs) = -1; /* skip the call */
	REG_RET(regs) = -ENOSYS;
	ptrace(PTRACE_SETREGS, t->tid, 0, &regs);
	return 1;
}

/* A new task's guest pid, read at its parent's fork event: the kernel
 * translates the host tid into the guest's pid namespace (the child cannot
 * be reaped meanwhile: only this thread reaps). -1 when the kernel cannot
 * (before 6.9: ENOTTY), and the parent's syscall exit names it instead. */
static pid_t guest_pid_of(struct tracer *tr, pid_t child)
{
	(void)tr; /* its guest_pidns: act_pidns */
	return guest_number(child);
}

static void fork_event(struct tracer *tr, struct task *t, int ev)
{
	struct sandbox *sb = tr->sb;
	unsigned long child = 0;
	if (ptrace(PTRACE_GETEVENTMSG, t->tid, 0, &child) < 0 || child == 0)
		return; /* the parent is gone (killed at this stop: a group kill, a sibling's exec) */
	int thread = 0, share_fs = 0, share_sighand = 0, share_vm = 1, same_parent = 0;
	/* The flags of a clone(2), whatever event it gave: ptrace reports
	 * PTRACE_EVENT_FORK for an exit signal of SIGCHLD and VFORK for
	 * CLONE_VFORK, even with CLONE_THREAD (red team 19: such a thread was
	 * taken for a process of its own: no pidfd, a cwd of its own, and its
	 * shared dispositions unseen). fork and vfork share neither. */
	arch_regs regs;
	if (ptrace(PTRACE_GETREGS, t->tid, 0, &regs) == 0 && REG_NR(regs) == __NR_clone) {
		unsigned long fl = REG_ARG0(regs);
		thread = !!(fl & CLONE_THREAD);
		share_fs = !!(fl & CLONE_FS);
		share_sighand = !!(fl & CLONE_SIGHAND);
		share_vm = !!(fl & CLONE_VM);
		same_parent = !!(fl & (CLONE_THREAD | CLONE_PARENT));
	} else if (ev == PTRACE_EVENT_FORK) {
		share_vm = 0; /* fork(2); unknown: taken as shared (aio.c: counted longer) */
	}
	int count = task_count(sb);
	/* 1: the task bound; 2: the host's pids nearly all taken (hostres.c) */
	int refuse = count >= tr->max_tasks ? 1 : hostres_pids_low(sb, count) ? 2 : 0;
	if (!refuse && (unsigned long)count + 1 > sb->n_tasks_peak)
		sb->n_tasks_peak = (unsigned long)count + 1;
	/* registered even when refused: no task ever runs unknown */
	struct task *n = task_create(sb, (pid_t)child, thread ? t->tgid : (pid_t)child, t, share_fs);
	aio_fork(t, n, share_vm);
	task_pd_parent_set(sb, n, t, same_parent); /* Linux's real_parent */
	if (share_sighand)
		t->sighand_shared = n->sighand_shared = 1;
	/* Its guest ids come from the parent's return value: run the parent to
	 * its syscall exit (PTRACE_SYSCALL) and hold the child at its first stop
	 * until then. A vfork parent returns only after its child execs or
	 * exits, so that child runs with its ids unknown (-1) meanwhile. */
	n->vtid = -1;
	n->vtgid = thread ? t->vtgid : -1;
	n->vppid = thread ? t->vppid : t->vtgid;
	t->fork_child = (pid_t)child;
	t->fork_thread = thread;
	t->fork_refused = refuse;
	if (refuse)
		n->doomed_parent = t->tid;
	if (take_early(tr, (pid_t)child)) {
		if (refuse)
			kill_doomed(n);
		else
			n->held = 1;
	}
	if (!thread && !refuse && !n->held)
		task_pin(n, (pid_t)child, sb->guest_procfd); /* until its first stop (held: past it) */
	pid_t vid = refuse ? -1 : guest_pid_of(tr, (pid_t)child);
	if (vid > 0) {
		/* named now: no syscall-exit stop of the parent, and the child
		 * runs from its first stop */
		task_put(n);
		t->fork_child = 0;
		release_child(tr, (pid_t)child, vid, thread);
		ptrace(PTRACE_CONT, t->tid, 0, 0);
		return;
	}
	if (ev == PTRACE_EVENT_VFORK && !refuse) {
		if (n->held) {
			n->held = 0;
			n->pt_state = 1;
			ptrace(PTRACE_CONT, (pid_t)child, 0, 0);
		} else {
			n->pt_state = 2; /* resume at its first stop */
		}
	}
	task_put(n);
	ptrace(PTRACE_SYSCALL, t->tid, 0, 0);
}

/* PTRACE_EVENT_STOP of a registered task: its first stop, or a group-stop. */
static void event_stop(struct tracer *tr, struct task *t, int sig)
{
	struct tracer_args *a = tr->a;
	pid_t tid = t->tid;
	if (t->doomed_exit) {
		/* a group-stop before its step: the registers stay set */
		if (sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU)
			ptrace(PTRACE_LISTEN, tid, 0, 0);
		else
			ptrace(PTRACE_SINGLESTEP, tid, 0, 0);
	} else if (t->doomed_parent) {
		kill_doomed(t);
	} else if (t->pt_state == 0 && t->vtid < 0) {
		t->held = 1; /* until its parent's fork returns */
	} else if (t->pt_state == 0 || t->pt_state == 2) {
		t->pt_state = 1;
		if (tid == tr->main_pid && tr->listener < 0) {
			/* the program installs its filter next and sends the listener */
			ptrace(PTRACE_CONT, tid, 0, 0);
			if (a->on_release) {
				/* the rest of our set-up, beside the program's */
				void (*f)(void *) = a->on_release;
				a->on_release = NULL;
				f(a->on_release_arg);
			}
			int fds[1], nfd = 1;
			char buf[256];
			long n = recv_fds(a->sync_sock, buf, sizeof buf - 1, fds, &nfd);
			int lfd = -1;
			if (n == 1 + (long)sizeof(int) && buf[0] == 'L' && nfd == 0)
				lfd = take_fd_number(a->sync_sock, tid, buf + 1);
			if (lfd >= 0) {
				tr->listener = lfd;
				dbg("%.2f ms: listener received", moat_ms_now() - a->t0);
				int pe = pipeline_start(tr->sb, tr->listener);
				if (pe < 0) {
					char why[128];
					kill(tid, SIGKILL);
					die(SPAWN_FAILED_FMT, "the sentry's first worker thread",
					    spawn_error(-pe, why, sizeof why));
				}
				/* test hook: the crash path (backtrace, guests die) */
				if (a->crash_test) {
					volatile uintptr_t crash_test_addr = 16; /* unmapped, not NULL (UBSan builds) */
					*(volatile int *)crash_test_addr = 1;
				}
			} else if (n > 0 && buf[0] == 'L') {
				warnx_("guest set-up: the seccomp listener: %s", strerror(lfd < 0 ? -lfd : EPROTO));
			} else if (n > 0 && buf[0] == 'E') {
				buf[n] = 0;
				warnx_("guest set-up: %s", buf + 1);
			}
			close(a->sync_sock);
			a->sync_sock = -1;
		} else {
			ptrace(PTRACE_CONT, tid, 0, 0);
		}
	} else if (sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU) {
		task_jobstop_set(t, 1); /* 'T' in its stat, until its next stop */
		ptrace(PTRACE_LISTEN, tid, 0, 0); /* group-stop */
	} else {
		/* (a thread netconn_signal_stop holds: on to its call's exit) */
		ptrace(t->net_hold ? PTRACE_SYSCALL : PTRACE_CONT, tid, 0, 0);
	}
}

/* tests (MOAT_TEST_GOFER_RELEASE=MS): a compromised sentry's early release
 * of its uid claim, the gofer's control socket shut down MS ms in */
static void *gofer_release_test(void *arg)
{
	long ms = strtol(getenv("MOAT_TEST_GOFER_RELEASE"), NULL, 10);
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
	shutdown(*(int *)arg, SHUT_RDWR);
	return NULL;
}

/* An exit or death reported by waitpid. Returns 1 when the loop is over. */
static int reaped(struct tracer *tr, pid_t tid, int st)
{
	struct tracer_args *a = tr->a;
	struct sandbox *sb = tr->sb;
	if (tid == *a->gofer_pid) {
		*a->gofer_pid = -1; /* handlers now fail with EPIPE; the guest sees EIO */
		if (a->gofer_status)
			*a->gofer_status = st;
		if (!tr->main_done && !getenv("MOAT_TEST_GOFER_RELEASE")) {
			/* gone while the program runs (killed, out of memory,
			 * crashed): the sandbox ends with it. Root-run it held
			 * the uid claim (gofer_keep_fd), now free for the next
			 * sandbox; running on would share that host uid (red
			 * team 59, isolation_host gofer_gone_sandbox_ends) */
			if (WIFSIGNALED(st))
				warnx_("the gofer was killed (signal %d) while the program ran: the sandbox ends", WTERMSIG(st));
			else
				warnx_("the gofer exited (status %d) while the program ran: the sandbox ends", WEXITSTATUS(st));
			kill(sb->init_pid, SIGKILL);
			reopen_helper_shutdown();
		}
		return tr->main_done && tr->init_reaped;
	}
	if (reopen_helper_reaped(tid)) /* gone at its channel's shutdown (below) */
		return tr->main_done && tr->init_reaped;
	if (tid == sb->init_pid) {
		tr->init_reaped = 1;
		__atomic_store_n(&sb->init_gone, 1, __ATOMIC_SEQ_CST); /* for limits_end */
	}
	if (tid == tr->main_pid && !a->main_seen) {
		/* for --result: also when the init died first (an OOM group kill) */
		a->main_raw = st;
		a->main_seen = 1;
	}
	if (tid == tr->main_pid && !tr->main_done) {
		tr->main_done = 1;
		tr->status_out = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		*a->forward_to = -1; /* nothing to forward to, nothing for --kill-after to end */
		dbg("%.2f ms: program exited", moat_ms_now() - a->t0);
		kill(sb->init_pid, SIGKILL);
		/* the gofer runs with the caller's ids, which we cannot signal:
		 * it leaves when its control socket is shut down */
		if (*a->gofer_pid > 0 && !a->gofer_export)
			shutdown(a->gofer_ctl, SHUT_RDWR);
		/* moat-reopen too: its exit beside the init's, not after */
		reopen_helper_shutdown();
		/* the cow roots too, by a thread, beside the init's end and the
		 * gofer's (what the killed tasks still ask of the files fails
		 * from here on, as with the gofer shut down) */
		priv_export_roots_release();
	}
	if (tid == sb->init_pid && !tr->main_done) {
		/* init died first (set-up failure or killed) */
		tr->main_done = 1;
		tr->status_out = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		if (a->sync_sock >= 0) {
			/* before the program's listener: the init's line, if its
			 * fork of the program failed (spawn.c; run.c reads it
			 * when the init is gone before the sentry joined it) */
			char msg[256];
			ssize_t n = recv(a->sync_sock, msg, sizeof msg - 1, MSG_DONTWAIT);
			if (n > 1 && msg[0] == 'E') {
				msg[n] = 0;
				warnx_("%s", msg + 1);
				tr->status_out = 1;
			}
		}
	}
	take_early(tr, tid);
	task_gone(tr, tid);
	/* init is reaped only after every task of its pid ns */
	return tr->main_done && tr->init_reaped;
}

/* A drain takes every stop pending at once and handles them after, none
 * resumed meanwhile, so a task reports one stop in a drain. The same tid
 * twice means the first report's task is not in that stop any more: an
 * exec by a non-leader took the leader's number (de_thread, exchange_tids)
 * and reported PTRACE_EVENT_EXEC under it, or the task died there (an exit
 * reaped), or its number went to another. The earlier stop is dropped
 * (its tid set to 0): handled after the exec's event was waited for, the
 * kernel no longer refuses requests by that number (looks_like_a_spurious
 * _pid only holds until then), so what was meant for the dead leader acted
 * on the new image. A leader's fork or clone event (never held for an exec
 * in flight) resumed the exec'ing thread from its PTRACE_EVENT_EXEC with
 * PTRACE_SYSCALL before that event was handled; the event's own handling
 * then failed (the task running) and left the exec fence up, and the new
 * image's next stop, its exec's syscall exit, was held for that exec for
 * ever (hang87/hang93: one task under the leader's pid, State t, syscall
 * 59, the tracer idle). q: the drain's first n entries; st: the new
 * entry's status, of tid. */
struct qent {
	pid_t tid;
	int st;
	struct rusage ru;
};

static unsigned long stale_n; /* MOAT_PROFILE */

static void round_stale(struct qent *q, int n, pid_t tid, int st)
{
	for (int j = 0; j < n; j++)
		if (q[j].tid == tid && WIFSTOPPED(q[j].st)) {
			dbg("a stale stop of task %d dropped (status %#x, then %#x)", (int)tid, q[j].st, st);
			q[j].tid = 0;
			stale_n++;
		}
}

/* MOAT_PROFILE=1: the tracer's stops by kind, with the mean wall time this
 * thread's CPU time spent on each (from taking it off the round to the
 * next; the wall time would count its waits for a CPU),
 * printed at exit. Off: one branch per stop. */
enum { TP_EXIT, TP_SYSEXIT, TP_SIGNAL, TP_SECCOMP, TP_FORK, TP_VFORK, TP_CLONE, TP_EXEC,
       TP_STOP, TP_EARLY, TP_INIT, TP_OTHER, TP_N };
static const char *const tp_names[TP_N] = {
	"exit", "syscall-exit", "signal", "seccomp", "fork-event", "vfork-event", "clone-event",
	"exec-event", "event-stop", "early-stop", "init", "other",
};

static int stop_kind(pid_t tid, int st, const struct sandbox *sb, int known)
{
	if (WIFEXITED(st) || WIFSIGNALED(st))
		return TP_EXIT;
	if (!WIFSTOPPED(st))
		return TP_OTHER;
	if (tid == sb->init_pid)
		return TP_INIT;
	if (!known)
		return TP_EARLY;
	switch ((unsigned)st >> 16) {
	case 0: return WSTOPSIG(st) == (SIGTRAP | 0x80) ? TP_SYSEXIT : TP_SIGNAL;
	case PTRACE_EVENT_SECCOMP: return TP_SECCOMP;
	case PTRACE_EVENT_FORK: return TP_FORK;
	case PTRACE_EVENT_VFORK: return TP_VFORK;
	case PTRACE_EVENT_CLONE: return TP_CLONE;
	case PTRACE_EVENT_EXEC: return TP_EXEC;
	case PTRACE_EVENT_STOP: return TP_STOP;
	default: return TP_OTHER;
	}
}

static double cpu_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void tracer_profile_report(const unsigned long *n, const double *ms, unsigned long rounds,
				  double wait_ms)
{
	fprintf(stderr, "moat profile: tracer stops (count, mean us of the tracer thread's CPU time handling one)\n");
	for (int k = 0; k < TP_N; k++)
		if (n[k])
			fprintf(stderr, "  %-14s %9lu %9.1f\n", tp_names[k], n[k], ms[k] * 1e3 / n[k]);
	fprintf(stderr, "  rounds %lu, %.1f ms blocked in wait4\n", rounds, wait_ms);
}

int tracer_run(struct tracer_args *a)
{
	const char *pe = getenv("MOAT_PROFILE");
	int prof = pe && *pe && strcmp(pe, "0") != 0;
	unsigned long pn[TP_N] = { 0 }, rounds = 0;
	double pms[TP_N] = { 0 }, wait_ms = 0, last_t = 0;
	int last_kind = -1;
	struct tracer tr = { .a = a, .sb = a->sb, .listener = -1, .status_out = 1,
			     .max_tasks = MAX_TASKS };
	struct sandbox *sb = a->sb;
	act_pidns = a->guest_pidns;
	act_sb = sb;
	const char *mt = getenv("MOAT_MAX_TASKS"); /* tests: a lower bound only */
	if (mt && atoi(mt) >= 8 && atoi(mt) < MAX_TASKS)
		tr.max_tasks = atoi(mt);
	/* every task holds a pidfd here: the fd limit bounds the table too */
	struct rlimit rl = { RLIM_INFINITY, RLIM_INFINITY };
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		if (rl.rlim_cur < rl.rlim_max) {
			rl.rlim_cur = rl.rlim_max;
			setrlimit(RLIMIT_NOFILE, &rl);
			getrlimit(RLIMIT_NOFILE, &rl);
		}
		if (rl.rlim_cur != RLIM_INFINITY && (long)rl.rlim_cur - FDS_SPARE < tr.max_tasks)
			tr.max_tasks = (long)rl.rlim_cur > FDS_SPARE + 64 ? (int)rl.rlim_cur - FDS_SPARE : 64;
	}
	if (a->pids_max > 0 && a->pids_max < tr.max_tasks)
		tr.max_tasks = a->pids_max; /* --pids: the sentry's own accounting, in every mode */
	/* Host pids are one space for the whole host (kernel.pid_max; 32768
	 * on small hosts), and a guest task waiting in a trapped call holds
	 * three: its own, a sentry worker's, a gofer thread's. Without
	 * --pids a sandbox takes at most an eighth of them: before red team
	 * 23 one took 4096 tasks (~12,700 host pids waiting, 39% of 32768),
	 * and three left the host's root no fork. --pids is the caller's
	 * explicit choice and is kept. */
	if (a->pids_max == 0 && sb->host_pid_max > 0 && sb->host_pid_max / (3 * PID_SHARE_DIV) < tr.max_tasks)
		tr.max_tasks = sb->host_pid_max / (3 * PID_SHARE_DIV) > 64 ? (int)(sb->host_pid_max / (3 * PID_SHARE_DIV)) : 64;
	/* Workers past the pool's 64 for calls that wait for another task
	 * (pipeline_wait_begin): one per waiting task at most, so the task
	 * bound; each holds a gofer connection (and a lock wait a dup of the
	 * file), so a finite fd limit bounds them too. */
	int wait_cap = tr.max_tasks;
	if (rl.rlim_cur != RLIM_INFINITY && ((long)rl.rlim_cur - tr.max_tasks) / 4 < wait_cap) {
		/* Every task but one may wait at once: were the cap below the
		 * task bound, the waits past it would count against the pool,
		 * and once the pool was all waits no trapped call of any other
		 * task was served (red team 13: nofile 2000, a process that
		 * dropped root blocked 300 threads in FIFO opens; root's open
		 * never returned; with the default 20,000, 4,040 threads).
		 * So the task bound comes down to what the fds hold: a pidfd
		 * per task and four per waiting worker. */
		long fit = (long)rl.rlim_cur / 5;
		if (fit < tr.max_tasks)
			tr.max_tasks = fit > 8 ? (int)fit : 8;
		wait_cap = tr.max_tasks;
	}
	pipeline_set_wait_cap(wait_cap);
	task_set_pexec_free(exec_pexec_free);
	/* Stops are served a round at a time: every task stopped when the
	 * round starts, then the next round. wait4(-1) alone prefers the
	 * newest tracee, so two processes looping on a costly stop (a path
	 * bind or connect through long symlink chains) kept every older one
	 * waiting without end; a round bounds the wait to the others' stops.
	 * A round is the stop the blocking wait4 gives, then (once that one
	 * is handled) every stop pending then. */
	enum { ROUND = 64 };
	struct qent *q = xcalloc(ROUND, sizeof *q);
	int qn = 0, qi = 0, drain = 0;
	/* tests: the program's first stop handled before the init's fork
	 * event, an order a loaded machine can give (init_stop's early path) */
	int main_first = getenv("MOAT_TEST_MAIN_STOP_FIRST") != NULL;
	/* tests: what a compromised sentry can do, shut its gofer's control
	 * socket (the gofer leaves, its uid claim with it) and run on
	 * (isolation_host freed_claim_not_reused), MOAT_TEST_GOFER_RELEASE
	 * milliseconds after the tracer starts */
	if (getenv("MOAT_TEST_GOFER_RELEASE")) {
		static int rel_fd;
		pthread_t rel;
		rel_fd = tr.a->gofer_ctl;
		if (pthread_create(&rel, NULL, gofer_release_test, &rel_fd) == 0)
			pthread_detach(rel);
	}
	/* tests: MOAT_TEST_STOP_DELAY=KIND:MS[,KIND:MS...], this thread
	 * sleeps MS before handling each stop of KIND (tp_names: fork-event,
	 * exec-event...), a window for the guest to kill the task there
	 * (isolation_sentry) */
	int stop_delay_ms[TP_N] = { 0 }, stop_delay = 0;
	for (const char *sdl = getenv("MOAT_TEST_STOP_DELAY"); sdl && *sdl;) {
		/* KIND:MS[,KIND:MS...] */
		for (int k = 0; k < TP_N; k++)
			if (!strncmp(sdl, tp_names[k], strlen(tp_names[k])) && sdl[strlen(tp_names[k])] == ':') {
				int ms = atoi(sdl + strlen(tp_names[k]) + 1);
				if (ms > 0 && ms <= 5000)
					stop_delay_ms[k] = ms, stop_delay = 1;
			}
		sdl = strchr(sdl, ',');
		if (sdl)
			sdl++;
	}
	/* tests: MOAT_TEST_DRAIN_DELAY=MS, this thread sleeps MS after each
	 * stop a round's drain takes (a tracer preempted mid-drain on a loaded
	 * machine: an exec let go at the round's first stop ends meanwhile,
	 * hang93) */
	const char *ddl = getenv("MOAT_TEST_DRAIN_DELAY");
	int drain_delay_ms = ddl && atoi(ddl) > 0 && atoi(ddl) <= 5000 ? atoi(ddl) : 0;
	/* tests: this thread's writes at stops wait (platform.h) */
	const char *twd = getenv("MOAT_TEST_TRACER_WRITE_DELAY");
	if (twd && atoi(twd) > 0 && atoi(twd) <= 5000)
		guestmem_test_tracer_delay_ms = atoi(twd);
	/* this thread lowers the exec fences: a guard it takes (a procfs
	 * check at an exec or socket stop: /proc/<pid>/fd/N) never waits on
	 * one (kernel/task.h task_io_no_wait) */
	task_io_no_wait();
	for (;;) {
		pid_t tid;
		int st;
		struct rusage ru;
		struct held_stop h;
		if (held_next(&tr, &h)) {
			/* a stop held for a sibling's exec that failed or died */
			tid = h.tid;
			st = h.st;
			ru = h.ru;
			if (h.refused) {
				struct task *p = task_get(sb, tid);
				if (p && p->parked) {
					if (exec_in_flight(&tr, p))
						hold_stop(&tr, tid, p->tgid, 0, NULL, 1);
					else
						finish_refused(&tr, p);
				}
				task_put(p);
				continue;
			}
			goto stop;
		}
		if (qi == qn && drain) {
			/* The rest of the round: every stop pending now. Taken
			 * after the round's first stop is handled, not before:
			 * that task (a fork's parent, an exec's child: usually
			 * the only one) is resumed one wait4 sooner, and the
			 * WNOHANG call, which finds nothing as a rule, runs while
			 * it does (pexec4). Each task still comes once in a
			 * drain (none is resumed during it). */
			qi = qn = drain = 0;
			if (last_kind >= 0)
				pms[last_kind] += cpu_ms() - last_t;
			last_kind = -1;
			pid_t w;
			task_reap_close(); /* a reap frees numbers: kernel/task.h */
			while (qn < ROUND && (w = wait4(-1, &q[qn].st, __WALL | WNOHANG, &q[qn].ru)) > 0) {
				reap_note(sb, w, q[qn].st);
				round_stale(q, qn, w, q[qn].st);
				q[qn++].tid = w;
				if (drain_delay_ms)
					nap_us(drain_delay_ms * 1000L);
			}
			task_reap_open();
		}
		if (qi == qn) {
			qi = qn = 0;
			double w0 = prof ? moat_ms_now() : 0;
			if (last_kind >= 0)
				pms[last_kind] += cpu_ms() - last_t;
			last_kind = -1;
			/* wait without reaping, then reap with the reap gate
			 * closed (kernel/task.h: no worker acts on a pid that
			 * this reap may free) */
			siginfo_t wsi;
			pid_t w;
			if (tr.nearly > 0)
				early_wait(&tr); /* orphans of a parent killed at its fork event */
			memset(&wsi, 0, sizeof wsi);
			if (waitid(P_ALL, 0, &wsi, WEXITED | __WALL | WNOWAIT) < 0) {
				w = -1;
			} else {
				task_reap_close();
				w = wait4(-1, &q[0].st, __WALL | WNOHANG, &q[0].ru);
				if (w > 0)
					reap_note(sb, w, q[0].st);
				task_reap_open();
				if (w == 0)
					continue; /* (nothing after all: wait again) */
			}
			if (prof) {
				wait_ms += moat_ms_now() - w0;
				rounds++;
			}
			if (w < 0) {
				if (errno == EINTR)
					continue;
				break; /* ECHILD: every guest task and the init are gone */
			}
			q[qn++].tid = w;
			drain = 1;
			if (main_first) {
				main_first = 0;
				task_reap_close(); /* (a test's order: holds wait) */
				while (qn < 2 && (w = wait4(-1, &q[qn].st, __WALL, &q[qn].ru)) > 0) {
					reap_note(sb, w, q[qn].st);
					round_stale(q, qn, w, q[qn].st);
					q[qn++].tid = w;
				}
				task_reap_open();
				if (qn >= 2 && q[0].tid == sb->init_pid) {
					__typeof__(q[0]) x = q[0];
					q[0] = q[1];
					q[1] = x;
				}
			}
		}
		tid = q[qi].tid;
		st = q[qi].st;
		ru = q[qi].ru;
		qi++;
		if (tid == 0)
			continue; /* a stale stop (round_stale) */
	stop:
		if (prof) {
			/* the previous stop's handling ends here */
			double now = cpu_ms();
			if (last_kind >= 0)
				pms[last_kind] += now - last_t;
			struct task *k = task_get(sb, tid);
			last_kind = stop_kind(tid, st, sb, k != NULL);
			task_put(k);
			pn[last_kind]++;
			last_t = now;
		}
		if (WIFEXITED(st) || WIFSIGNALED(st)) {
			if (tid == tr.main_pid && !a->main_seen && a->main_ru)
				*a->main_ru = ru; /* the program and the children it waited for */
			if (reaped(&tr, tid, st))
				break;
			continue;
		}
		if (!WIFSTOPPED(st))
			continue;
		int sig = WSTOPSIG(st), ev = (unsigned)st >> 16;
		if (tid == sb->init_pid) {
			init_stop(&tr, tid, sig, ev);
			continue;
		}
		struct task *t = task_get(sb, tid);
		if (stop_delay && stop_delay_ms[stop_kind(tid, st, sb, t != NULL)])
			nap_us(stop_delay_ms[stop_kind(tid, st, sb, t != NULL)] * 1000L); /* tests: a window to kill the task at this stop */
		if (!t) {
			/* a new task's first stop before its parent's event: held */
			if (add_early(&tr, tid) < 0)
				kill(tid, SIGKILL); /* never run unregistered */
			continue;
		}
		task_jobstop_set(t, 0); /* a stop: out of a group-stop's LISTEN */
		/* (not a fork event: its handler only reads the parent by
		 * ptrace, which Linux refuses for a pid an exec took until its
		 * PTRACE_EVENT_EXEC is waited for, and acts on the child, which
		 * natively outlives its parent's death by de_thread) */
		int fork_ev = ev == PTRACE_EVENT_FORK || ev == PTRACE_EVENT_VFORK || ev == PTRACE_EVENT_CLONE;
		struct task *xe = ev != PTRACE_EVENT_EXEC && !fork_ev ? exec_in_flight(&tr, t) : NULL;
		if (xe) {
			/* a sibling's exec is on its way: nothing is done by this
			 * tid until it is over (tracerw, exec_in_flight) */
			dbg("stop of task %d held: the exec of task %d is on its way", (int)tid, (int)xe->tid);
			hold_stop(&tr, tid, t->tgid, st, &ru, 0);
			task_put(t);
			continue;
		}
		if (ev != PTRACE_EVENT_EXEC) {
			task_unpin(t, tid); /* its next stop: its own affinity back */
			task_loader_unpin(t);
		}
		if (t->doomed_exit && ev == 0 && sig == SIGSTOP) {
			/* the one signal its mask cannot block, taken before its
			 * step: passed on (no handler can run: the group-stop
			 * follows, event_stop), the step still to come */
			ptrace(PTRACE_SINGLESTEP, tid, 0, SIGSTOP);
			task_put(t);
			continue;
		}
		if (t->doomed_exit && ev != PTRACE_EVENT_STOP) {
			doomed_stop(t, tid); /* a refused thread that did not exit */
			task_put(t);
			continue;
		}
		switch (ev) {
		case 0:
			if (sig == (SIGTRAP | 0x80)) {
				/* a syscall exit we asked to see */
				if (t->net_hold) {
					ptrace(netconn_hold_stop(t), tid, 0, 0); /* or its entry */
					break;
				}
				if (t->intr_tp_stage) {
					intr_tp_sysstop(t, tid); /* or the entry of a restarted call */
					break;
				}
				if (t->sock_exit) {
					unixsock_exit(sb, t);
					t->sock_exit = 0;
				} else if (t->aio_exit) {
					aio_exit(sb, t);
				} else if (t->exec_pending) {
					/* the rewritten exec failed: its pending exec goes */
					t->exec_pending = 0;
					exec_unfence(&tr, t);
					exec_drop(t);
				} else if (t->fork_child && fork_exit(&tr, t)) {
					break; /* parked, or resumed with -EAGAIN */
				}
				ptrace(PTRACE_CONT, tid, 0, 0);
				break;
			}
			/* signal-delivery-stop: re-inject (never a core dump),
			 * an interrupted call restarted where Linux would */
			sig = sig_restart(sb, t, tid, sig);
			if (sig)
				no_core_dump(sb, t, tid, sig);
			ptrace(t->exec_pending || t->sock_exit || t->aio_exit || t->intr_tp_stage || t->net_hold ?
				       PTRACE_SYSCALL : PTRACE_CONT,
			       tid, 0, sig);
			break;
		case PTRACE_EVENT_SECCOMP: {
			/* the registers once, for every step below */
			arch_regs regs;
			/* another trapped call: a request a bind/listen/send
			 * stop left for the thread is stale (netconn.c) */
			netconn_drop_pending(t);
			if (ptrace(PTRACE_GETREGS, tid, 0, &regs) < 0 || guest_trace_stop(t, regs)) {
				ptrace(t->net_hold ? PTRACE_SYSCALL : PTRACE_CONT, tid, 0, 0);
				break;
			}
			long scnr = REG_NR(regs);
			int is_exec = scnr == __NR_execve || scnr == __NR_execveat;
			dbg("%.2f ms: exec stop", moat_ms_now() - a->t0);
			__atomic_store_n(&sb->last_activity_ms, (long long)moat_ms_now(), __ATOMIC_RELAXED);
			/* Gofer calls made here cannot block (exec opens are
			 * O_NONBLOCK, walks use O_PATH), and whatever the gofer
			 * does, none may hold this thread for long: past the
			 * deadline a call is abandoned (-EINTR, the guest sees EIO). */
			double deadline = moat_ms_now() + GOFER_DEADLINE_MS;
			gofer_set_wait_hook(past_deadline, &deadline);
			exec_unfence(&tr, t); /* (none is up here: belt and braces) */
			int pending = is_exec ? exec_stop(sb, t, &regs) : 0;
			if (pending && task_fence_close(t->tgid, TASK_IO_WAIT_MS) < 0) {
				/* A worker's copy into this thread group still runs
				 * after 3 s: the exec fails (EAGAIN) rather than put a
				 * new image under a copy in flight (red team 29) */
				arch_regs fail = regs;
				REG_SYSNO(fail) = -1;
				REG_RET(fail) = -EAGAIN;
				ptrace(PTRACE_SETREGS, tid, 0, &fail);
				exec_drop(t);
				pending = 0;
				warn_guest("exec of task %d refused (EAGAIN): a copy into its thread group did not end in %d ms",
				       (int)tid, TASK_IO_WAIT_MS);
			} else if (pending) {
				/* no worker copies into the group from here until
				 * the exec is over: a copy never lands in the image
				 * it puts under the caller's pid; no stop of
				 * another task of the group is handled either
				 * (exec_in_flight) */
				exec_let_go(&tr, t);
			}
			t->sock_exit = 0;
			t->aio_exit = 0;
			if (!is_exec) {
				unixsock_stop(sb, t, &regs); /* bind, connect, listen, send*, recvfrom */
				aio_stop(sb, t, &regs); /* io_setup, io_destroy */
			}
			gofer_set_wait_hook(NULL, NULL);
			dbg("%.2f ms: exec resolved", moat_ms_now() - a->t0);
			/* an exec rewritten to the loader: see its syscall exit if it fails */
			t->exec_pending = pending;
			if (pending)
				task_pin(t, tid, sb->guest_procfd); /* to PTRACE_EVENT_EXEC or the failed exit */
			ptrace(pending || t->sock_exit || t->aio_exit || t->net_hold ? PTRACE_SYSCALL : PTRACE_CONT, tid, 0, 0);
			break;
		}
		case PTRACE_EVENT_FORK:
		case PTRACE_EVENT_VFORK:
		case PTRACE_EVENT_CLONE:
			fork_event(&tr, t, ev);
			break;
		case PTRACE_EVENT_EXEC: {
			unsigned long former = 0;
			if (ptrace(PTRACE_GETEVENTMSG, tid, 0, &former) < 0) {
				/* killed at this stop: its exit, under this number,
				 * comes next (task_gone ends the exec there and drops
				 * a non-leader's entry, which took the number). Not
				 * dying (it left this stop another way): nothing
				 * would end its exec, whose fence would hold every
				 * later stop of the process for ever; its process is
				 * killed (fail closed), and that exit ends it */
				if (!doomed_exited(tid)) {
					warn_guest("the exec of task %d left its PTRACE_EVENT_EXEC unhandled: its process is killed",
						   (int)tid);
					kill(tid, SIGKILL);
				}
				break;
			}
			/* every other thread of the group is dead: the stops held
			 * for this exec go unhandled (the leader's number is this
			 * task's now) */
			held_drop(&tr, t->tgid, 0);
			if ((pid_t)former != tid) {
				struct task *old = task_get(sb, tid); /* the leader it replaces */
				if (old) {
					aio_leave(sb, old);
					exec_unfence(&tr, old); /* its own exec lost */
					if (old->fork_child) /* it died inside fork, as in task_gone */
						release_child(&tr, old->fork_child, -1, old->fork_thread);
				}
				task_put(old);
				/* the old leader died in the exec (de_thread): its
				 * children are told and become the exec'ing thread's,
				 * whose own keep it under its new number */
				pdeath_send(&tr, tid, t->tgid, (pid_t)former);
				task_pdeath_reparent(sb, (pid_t)former, t->tgid, tid, NULL);
				task_rekey(sb, (pid_t)former, tid);
			}
			struct task *e = task_get(sb, tid);
			if (e) {
				aio_leave(sb, e); /* a new mm: the old one's contexts went with it */
				/* the loader may now take the pending exec, once */
				e->exec_pending = 0;
				/* not dumpable (an exec-only program) before the
				 * fence comes down: a ptrace-mode check made in a
				 * guard from then on sees the new image's flag
				 * (task_io_execs) */
				exec_done(e);
				exec_unfence(&tr, e); /* the new image is in place, the others gone */
				e->sighand_shared = 0; /* exec unshares the dispositions */
				task_pin_to_loader(e, tid);
				task_put(e);
			}
			/* and any other mark of the group's (the exec'ing entry
			 * not found under former, re-keyed or not): left up, it
			 * held every later stop of the new image for ever */
			group_unfence(&tr, tid);
			ptrace(PTRACE_CONT, tid, 0, 0);
			/* The program runs: what set-up and the first exec
			 * freed goes back (an idle sandbox's PSS), once,
			 * with the pages of this thread's cached walk scratch
			 * (~32 KiB touched; vfs_walk_release). */
			if (!tr.trimmed) {
				tr.trimmed = 1;
				vfs_walk_release();
				malloc_trim(0);
				stack_trim();
			}
			break;
		}
		case PTRACE_EVENT_STOP:
			event_stop(&tr, t, sig);
			break;
		default:
			ptrace(PTRACE_CONT, tid, 0, 0);
			break;
		}
		task_put(t);
	}
	free(q);
	free(tr.early);
	free(tr.early_ms);
	free(tr.xf);
	free(tr.held);
	if (prof) {
		tracer_profile_report(pn, pms, rounds, wait_ms);
		fprintf(stderr, "  exec pins %lu (refused %lu, not while another task runs or is pinned %lu)\n", pin_n, pin_refused, pin_busy);
		/* every guest task is gone by now: anything listed leaked */
		fprintf(stderr, "  tasks left %d, early %d, held %d, execs in flight %d; early waits %lu, orphans killed %lu, stale stops dropped %lu\n",
			task_count(sb), tr.nearly, tr.nheld, tr.nxf, tr.early_waits, tr.orphans, stale_n);
	}
	return tr.status_out;
}
