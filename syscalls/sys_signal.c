/* syscalls/sys_signal.c - the permission check of kill, tkill, tgkill,
 * rt_sigqueueinfo, rt_tgsigqueueinfo (and of process_vm_readv/writev)
 * against the virtual credentials.
 *
 * Every guest task runs as the same host uid, so the host kernel would let
 * any of them signal any other: a process that dropped root could still kill
 * root's. These calls are trapped; for a target that is one task (pid > 0)
 * the sentry applies Linux's rule (the caller's own thread group, CAP_KILL,
 * or the sender's real or effective uid is the target's real or saved uid) and
 * answers EPERM, or lets the call run natively (SECCOMP_USER_NOTIF_FLAG_
 * CONTINUE: the arguments checked are plain register values; a siginfo
 * pointer is never read here). SIGCONT to a process of the sender's session
 * is always allowed (Linux's exemption; the sessions are read from the
 * guest's procfs only when the ids refuse).
 *
 * kill(0), kill(-pgrp) and kill(-1) reach every process of the group (every
 * process but the guest's init and the sender) the sender may signal, as on
 * Linux: natively with CAP_KILL or in a one-identity sandbox; otherwise the
 * sentry reads the members (the processes of the task table whose group,
 * asked of the kernel, is the one named: pgw_each) and signals those the sender may signal itself
 * (their siginfo then shows pid 0, a sender outside their pid namespace):
 * 0 if any, else EPERM (kill(-1) ignores EPERM, as Linux) (group below).
 * A single target outside the caller's process is signalled natively only
 * when pid reuse is harmless (one-identity sandbox, sc_pid_reuse_harmless
 * below); otherwise by the sentry through its pidfd of the checked task, and
 * an unknown pid is ESRCH (ARCHITECTURE.md, "Pids checked, then used").
 *
 * The owner of a file's SIGIO/SIGURG (F_SETOWN, F_SETOWN_EX, FIOSETOWN,
 * SIOCSPGRP) is another way to signal: the file's I/O sends SIGIO, or any
 * signal F_SETSIG chose (SIGKILL, SIGSTOP included), to the owner. Linux
 * checks at delivery the ids the setter had (sigio_perm: its euid is root,
 * or its euid or uid is the target's uid or saved uid); on the host they are
 * all one uid, so the check is made here when the owner is set, on the
 * virtual ids (sigio_owner_check), and a refusal is EPERM (Linux would
 * accept the owner and drop its signals). F_SETOWN (a register) then runs
 * natively where whoever holds the number passes; otherwise it and the
 * others (which carry a pointer) are made by the sentry on the pinned file
 * with the number translated to its own namespace, held (pin_act); a
 * process group owner is refused in a sandbox of other ids (a later member
 * would be signalled unchecked). F_SETSIG is made on the pinned file. The caller's
 * own open file descriptions (moat's fds 0-2, which the guest's stdio
 * shares without -t) keep their owner and signal: EPERM (red team 47: a
 * guest's F_SETSIG SIGKILL on the shared terminal description killed the
 * caller, which owned its stdin's SIGIO, at the next line typed, also after
 * the sandbox's end).
 *
 * process_vm_readv/writev get Linux's ptrace access check
 * (PTRACE_MODE_ATTACH_REALCREDS): the caller's real uid and gid must equal
 * the target's real, effective and saved ones (CAP_SYS_PTRACE is never
 * granted), else EPERM; without it a process that dropped root could write
 * into a root process's memory. Another process's memory is then copied by
 * the sentry against the image checked (vm_call below).
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <signal.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <poll.h>

#include "fs/procfs.h"
#include "fs/walk.h"
#include "kernel/cred.h"
#include "kernel/task.h"
#include "syscalls/handlers.h"
#include "syscalls/sc.h"
#include "syscalls/sys_fs.h"
#include "common/util.h"

static struct cred cred_of(struct task *t);
static void pidcall_test_delay(void);
/* host[0..1]: the tasks' host ids; host[2..3]: the same tasks' numbers in
 * the guest's pid namespace (pin_act; NO_TASK_PID all four: on no task) */
typedef long (*pid_fn)(const pid_t *host, void *arg);
static long pin_act(struct task *const *t, int n, int thread, pid_fn fn, void *arg, const unsigned *execs);

#ifndef PIDFD_SIGNAL_THREAD
#define PIDFD_SIGNAL_THREAD (1UL << 0)
#define PIDFD_SIGNAL_THREAD_GROUP (1UL << 1)
#define PIDFD_SIGNAL_PROCESS_GROUP (1UL << 2)
#endif
#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL
#endif

struct ids {
	uid_t ruid, euid, suid;
	gid_t rgid, egid, sgid;
	int cap_kill;
};

static struct ids ids_of(struct task *t)
{
	struct ids i;
	pthread_mutex_lock(&t->lock);
	i.ruid = t->cred.ruid;
	i.euid = t->cred.euid;
	i.suid = t->cred.suid;
	i.rgid = t->cred.rgid;
	i.egid = t->cred.egid;
	i.sgid = t->cred.sgid;
	i.cap_kill = cred_capable(&t->cred, CRED_CAP_KILL);
	pthread_mutex_unlock(&t->lock);
	return i;
}

/* Linux's kill_ok_by_cred (CAP_KILL is the caller's business) */
static int ids_may_signal(const struct ids *s, const struct ids *d)
{
	return s->euid == d->suid || s->euid == d->ruid || s->ruid == d->suid || s->ruid == d->ruid;
}

/* SIGCONT within the sender's session is always allowed */
static int same_session(struct sandbox *sb, pid_t a, pid_t b)
{
	pid_t sa, sb_;
	return task_proc_ids(sb, a, NULL, &sa, NULL) == 0 &&
	       task_proc_ids(sb, b, NULL, &sb_, NULL) == 0 && sa == sb_;
}

/* ---- the members of a process group (pgwalk) ----
 * The group rows (kill(0), kill(-pgrp), kill(-1), F_SETOWN of a group,
 * setpriority/ioprio_set of a group, PR_SCHED_CORE of a group) walk the
 * task table's processes once and keep those whose process group is the one
 * named. The sentry keeps no process group or session of its own (setpgid
 * and setsid run natively, untrapped): each is asked of the kernel at the
 * walk, for each process. By host number: with the reap gate held
 * (kernel/task.h) a process not marked reaped keeps its host pid, so
 * getpgid/getsid on it answer for that very process (0.3 us; its
 * /proc/<pid>/stat in the guest's procfs took ~9 us a process, ~2 ms a
 * group kill with 200 processes), and the group named is translated to its
 * host number once: the caller's own, getpgid of the caller; a guest number,
 * the host pid of the task-table process that holds it (a group's id is
 * its creator's pid, never given again while the group or that process
 * lives). Without the gate (held shut past TASK_IO_WAIT_MS), or for a group
 * whose creator is not in the table (it is gone, or the guest's init), the
 * walk reads each process's group from the guest's procfs, as before. */
struct pgw;
typedef int (*pgw_fn)(struct task *t, struct pgw *w, void *arg);

struct pgw {
	struct sc_call *c;
	pid_t pgrp;      /* the group's guest number (0: the caller's, not read; -1: every process) */
	pid_t hpgrp;     /* its host number, 0: from the guest's procfs */
	pid_t hsid, vsid;/* the caller's session, host or guest number (read when first asked) */
	int held;        /* the reap gate */
	pgw_fn fn;
	void *arg;
};

/* 1: t, a process of the walk, is of the caller's session */
static int pgw_same_session(struct pgw *w, struct task *t)
{
	if (w->held) {
		if (!w->hsid)
			w->hsid = getsid(w->c->task->tgid);
		if (w->hsid > 0) {
			pid_t s = getsid(t->tgid);
			return s > 0 && s == w->hsid;
		}
	}
	pid_t s;
	if (!w->vsid && task_proc_ids(w->c->sb, w->c->task->vtgid, NULL, &w->vsid, NULL) < 0)
		w->vsid = -1;
	return w->vsid > 0 && task_proc_ids(w->c->sb, t->vtgid, NULL, &s, NULL) == 0 && s == w->vsid;
}

static int pgw_visit(struct task *t, void *arg)
{
	struct pgw *w = arg;
	pid_t v = t->vtgid;
	if (atomic_load(&t->exited) || v <= 0)
		return 0;
	if (w->held && w->hpgrp) {
		if (atomic_load(&t->reaped) || getpgid(t->tgid) != w->hpgrp)
			return 0; /* gone, or of another group */
	} else if (w->held && w->pgrp < 0) {
		if (atomic_load(&t->reaped))
			return 0; /* gone */
	} else {
		pid_t pg;
		if (task_proc_ids(w->c->sb, v, &pg, NULL, NULL) < 0)
			return 0; /* gone meanwhile */
		if (w->pgrp >= 0 && pg != w->pgrp)
			return 0;
	}
	return w->fn(t, w, w->arg);
}

/* fn for each process of group pgrp (0: the caller's; -1: every process)
 * that lives; 0, fn's nonzero answer, or -ESRCH when the caller's group
 * cannot be read (it is gone) */
static int pgw_each(struct sc_call *c, pid_t pgrp, pgw_fn fn, void *arg)
{
	struct pgw w = { .c = c, .pgrp = pgrp, .fn = fn, .arg = arg };
	w.held = task_reap_hold() == 0;
	if (w.held && atomic_load(&c->task->reaped)) {
		task_reap_release(); /* (the caller's number may be another's) */
		w.held = 0;
	}
	if (w.held && pgrp == 0) {
		pid_t h = getpgid(c->task->tgid);
		w.hpgrp = h > 0 ? h : 0;
	} else if (w.held && pgrp > 0) {
		struct task *l = task_get_vpid(c->sb, pgrp);
		if (l && l->vtid == pgrp && l->vtgid == pgrp && !atomic_load(&l->reaped))
			w.hpgrp = l->tgid; /* (the gate held: its number is its own) */
		task_put(l);
	}
	if (w.held && !w.hpgrp && pgrp >= 0) {
		task_reap_release(); /* (by procfs: not held through a slow walk) */
		w.held = 0;
	}
	if (pgrp == 0 && !w.hpgrp && task_proc_ids(c->sb, c->task->vtgid, &w.pgrp, NULL, NULL) < 0)
		return -ESRCH;
	int r = task_for_each_leader(c->sb, pgw_visit, &w);
	if (w.held)
		task_reap_release();
	return r;
}

/* ---- a pid checked, then run natively: reuse (gaps31) ----
 * A call the sentry checks by pid and lets the kernel run (CONTINUE) names
 * the target again when the caller's thread runs it, which the guest can
 * put off (a SCHED_IDLE thread on a busy CPU): a target that exits and is
 * reaped meanwhile leaves its number to the next process the pid space's
 * wrap gives it to (32768 pids here; a guest forks through them in
 * seconds). The guest is pid 1's namespace, so that process is always a
 * guest task (no moat process but the guest's init, pid 1, which is never
 * reused, lives in it; the host's and moat's own processes have no number
 * there): the harm stays inside the sandbox, between its virtual users (a
 * process that dropped root, killing or writing into root's). It is none
 * when every task that may ever hold a number would pass the same check:
 * every live task has one uid and one gid, the caller's, in all three slots,
 * and none can change them (no CAP_SETUID/CAP_SETGID permitted, uid 0
 * counted as able: an exec gives root its capabilities back). A process
 * forked later copies its parent's ids, so it passes too. That is the usual
 * one-user sandbox, where these calls stay native and unchanged; otherwise
 * the handlers below act through the sentry's pidfd of the task the check
 * saw (taken at its clone: it never names another), or refuse. */
struct one_id {
	uid_t u;
	gid_t g;
	int mixed;
};

static int one_id_visit(struct task *t, void *arg)
{
	struct one_id *o = arg;
	if (atomic_load(&t->exited))
		return 0;
	struct cred d = cred_of(t);
	if (d.ruid != o->u || d.euid != o->u || d.suid != o->u || d.fsuid != o->u || d.rgid != o->g ||
	    d.egid != o->g || d.sgid != o->g || d.fsgid != o->g || d.ruid == 0 ||
	    (d.cap_prm & (CRED_BIT(CRED_CAP_SETUID) | CRED_BIT(CRED_CAP_SETGID)))) {
		o->mixed = 1;
		return 1;
	}
	return 0;
}

/* 1: a number checked now names, whenever the kernel looks it up, a task
 * that passes any of the owner, kill and ptrace checks for the caller */
int sc_pid_reuse_harmless(struct sc_call *c)
{
	/* once one identity, always (the scan's conditions leave no way to
	 * another uid or gid: exec gives a non-root uid no capability, and new
	 * namespaces are EPERM): measured 10 us a kill with 200 tasks before
	 * this was kept */
	if (atomic_load(&c->sb->one_identity))
		return 1;
	struct cred s = cred_of(c->task);
	struct one_id o = { .u = s.ruid, .g = s.rgid };
	task_for_each_thread(c->sb, one_id_visit, &o);
	if (!o.mixed)
		atomic_store(&c->sb->one_identity, 1);
	return !o.mixed;
}

/* Send sig (with *info when not NULL) to t from the sentry, through its
 * pidfd: to its process, or (thread) to that one thread. The siginfo a
 * process-directed kill() would carry (si_pid, si_uid of the sender) shows
 * pid 0 and the sentry's uid, a sender outside the guest's pid namespace.
 * Before Linux 6.9 (no thread pidfds, no PIDFD_SIGNAL_THREAD) a signal for
 * one thread goes to its process instead. */
static long send_pinned(struct task *t, int sig, siginfo_t *info, int thread)
{
	if (atomic_load(&t->exited) || atomic_load(&t->reaped) || t->pidfd < 0)
		return -ESRCH;
	int pfd = t->pidfd, own = -1;
	unsigned flags = 0;
	if (thread && t->vtid == t->vtgid) {
		flags = PIDFD_SIGNAL_THREAD; /* the leader: the pidfd's own task */
	} else if (thread) {
		/* another thread: a pidfd of it, taken by its host tid inside
		 * the reap gate once the task is seen not reaped (the tracer
		 * marks it inside the gate as it reaps: the tid is still its
		 * own until the gate is let go). An exec of its group under
		 * way (fenced) may free the tid without a reap (de_thread):
		 * then its process, whose pidfd stays */
		if (task_reap_hold() < 0)
			return -EAGAIN;
		if (atomic_load(&t->reaped) || atomic_load(&t->exited)) {
			task_reap_release();
			return -ESRCH;
		}
		if (!task_fence_up(t->tgid))
			own = (int)syscall(SYS_pidfd_open, t->tid, PIDFD_THREAD);
		task_reap_release();
		if (own >= 0)
			pfd = own; /* (else its process: fenced, a thread gone meanwhile, or Linux < 6.9) */
	}
	if (info)
		info->si_signo = sig;
	long r = syscall(SYS_pidfd_send_signal, pfd, sig, info, flags);
	if (r < 0 && errno == EINVAL && flags && sig >= 0 && sig < 65)
		r = syscall(SYS_pidfd_send_signal, pfd, sig, info, 0); /* (before 6.9: no flags) */
	r = r < 0 ? -errno : 0;
	if (own >= 0)
		close(own);
	return r;
}

/* target: guest tid (or pid); tgid: its thread group, or 0 for any;
 * thread: tkill/tgkill/rt_tgsigqueueinfo (one thread); info: the guest's
 * siginfo pointer (rt_*sigqueueinfo), 0 for none */
static long check_send(struct sc_call *c, pid_t target, pid_t tgid, int sig, int thread, uint64_t info)
{
	c->cont = 1;
	if (target <= 0)
		return 0;        /* not a single target: see group() */
	pid_t own = c->task->vtgid;
	if (target == own || tgid == own)
		return 0;        /* its own process, alive while it waits here:
				  * native (the kernel checks a tid against tgid) */
	struct ids s = ids_of(c->task);
	if (s.cap_kill)
		return 0;        /* any guest task is its to signal, whoever
				  * holds the number then */
	struct task *t = task_get_vpid(c->sb, target);
	if (!t && target == 1 && s.euid != 0 && s.ruid != 0) {
		c->cont = 0;     /* the guest's init is root's (/proc/1/status) */
		return -EPERM;
	}
	if (!t && target == 1)
		return 0;        /* the guest's init (ignored); pid 1 is never reused */
	int harmless = -1;
#define HARMLESS() (harmless < 0 ? (harmless = sc_pid_reuse_harmless(c)) : harmless)
	if (!t) {
		if (HARMLESS())
			return 0; /* the kernel answers (ESRCH) */
		c->cont = 0;      /* a task forked there later is not checked */
		return -ESRCH;
	}
	int other_group = tgid > 0 && t->vtgid != tgid;
	int same_process = t->vtgid == own;
	struct ids d = ids_of(t);
	pid_t dst = t->vtgid;
	long r = 0;
	if (other_group) {
		/* native: ESRCH, unless a thread of tgid takes the number */
		if (!HARMLESS()) {
			c->cont = 0;
			r = -ESRCH;
		}
	} else if (same_process || ids_may_signal(&s, &d) ||
		   (sig == SIGCONT && same_session(c->sb, own, dst))) {
		/* its own threads (by tid: tkill) always, as Linux */
		if (!HARMLESS()) {
			siginfo_t si;
			c->cont = 0;
			if (info && sc_read_guest(c, info, &si, sizeof si) < 0)
				r = -EFAULT;
			else
				r = send_pinned(t, sig, info ? &si : NULL, thread);
			snprintf(c->note, sizeof c->note, "sent by pidfd (the sandbox has other ids)");
		}
	} else {
		c->cont = 0;
		r = -EPERM;
	}
#undef HARMLESS
	task_put(t);
	return r;
}

static long check(struct sc_call *c, pid_t target, pid_t tgid, int sig)
{
	return check_send(c, target, tgid, sig, 0, 0);
}

struct member {
	pid_t host, vpid;
	int ok;
};

struct grp {
	struct sc_call *c;
	struct ids s;
	int all;              /* kill(-1) */
	int sig;
	struct member *m;
	size_t n, cap;
};

/* a process of the group (pgw_each) */
static int grp_visit(struct task *t, struct pgw *w, void *arg)
{
	struct grp *g = arg;
	pid_t v = t->vtgid;

	if (g->all && (v == 1 || v == g->c->task->vtgid))
		return 0;        /* kill(-1) spares init and the sender */
	struct ids d = ids_of(t);
	int ok = v == g->c->task->vtgid || ids_may_signal(&g->s, &d);
	if (!ok && g->sig == SIGCONT && pgw_same_session(w, t))
		ok = 1;
	if (grow_array(&g->m, &g->cap, g->n, sizeof *g->m, 16))
		return -ENOMEM;
	g->m[g->n++] = (struct member){ .host = t->tgid, .vpid = v, .ok = ok };
	return 0;
}

/* kill(pid <= 0): Linux's rule for each member of the group. Native only
 * where whoever is a member when the kernel looks the group up passes: the
 * caller has CAP_KILL, or reuse is harmless (one identity: every task that
 * may ever be a member passes the check). Otherwise the group's kernel
 * lookup comes late, as a single pid's does (a process of another identity
 * joins the group meanwhile, setpgid within the session, or takes a freed
 * number and makes it a group; kill(-1): is forked), so the sentry reads
 * the members from its task table (their process groups asked of the
 * kernel: pgw_each), checks each again as it sends, and signals those that pass
 * through its pidfds of them (a process gone meanwhile is never another's;
 * one that joins after the read is not signalled, as after Linux's call).
 * Linux's answers: a group kill succeeds if any member was signalled, else
 * EPERM (ESRCH without members); kill(-1) ignores EPERM (ESRCH when nothing
 * but init and the caller lives). info: pidfd_send_signal's siginfo (its
 * PIDFD_SIGNAL_PROCESS_GROUP), checked by the caller, or NULL. pidgroups; ARCHITECTURE.md "Pids
 * checked, then used". */
static long group(struct sc_call *c, pid_t pid, int sig, siginfo_t *info)
{
	struct grp g = { .c = c, .s = ids_of(c->task), .all = pid == -1, .sig = sig };

	c->cont = 1;
	if (pid == INT_MIN || g.s.cap_kill || sig < 0 || sig > SIGRTMAX)
		return 0;        /* the kernel answers (ESRCH, EINVAL) or may */
	if (sc_pid_reuse_harmless(c)) {
		pidcall_test_delay();
		return 0;        /* whoever is a member then is its to signal */
	}
	c->cont = 0;
	int e = pgw_each(c, pid == -1 ? -1 : -pid, grp_visit, &g);
	if (e < 0) {
		free(g.m);
		return e;        /* -ENOMEM; -ESRCH: the caller's group is gone */
	}
	size_t nok = 0, sent = 0;
	for (size_t i = 0; i < g.n; i++) {
		if (!g.m[i].ok)
			continue;
		/* by pidfd: a process gone meanwhile is never another's; its
		 * ids again as it is signalled (Linux checks at the send) */
		struct task *t = task_get(c->sb, g.m[i].host); /* (by its host number: hashed) */
		if (t && t->tgid == g.m[i].host && t->vtgid == g.m[i].vpid && t->pidfd >= 0 &&
		    !atomic_load(&t->exited)) {
			struct ids d = ids_of(t);
			/* (SIGCONT: ok was the session's exemption, read once) */
			if (g.m[i].vpid == c->task->vtgid || ids_may_signal(&g.s, &d) || sig == SIGCONT) {
				nok++;
				if (sig == 0 || syscall(SYS_pidfd_send_signal, t->pidfd, sig, info, 0) == 0)
					sent++;
			}
		}
		task_put(t);
	}
	long r;
	if (sent)
		r = 0;
	else if (g.n == 0)
		r = -ESRCH;      /* no member (kill(-1): no process but init and the caller) */
	else if (g.all)
		r = 0;           /* kill(-1) ignores EPERM */
	else
		r = nok ? -ESRCH : -EPERM; /* (the ones it may signal gone meanwhile) */
	snprintf(c->note, sizeof c->note, "group kill by the sentry: %zu of %zu members", sent, g.n);
	free(g.m);
	pidcall_test_delay();
	return r;
}

/* sigio_owner_check: the members of process group `pgrp` */
struct sigio_grp {
	struct sc_call *c;
	struct ids s;
	pid_t pgrp;
	int any, members, denied;
};

static int sigio_visit(struct task *t, struct pgw *w, void *arg)
{
	struct sigio_grp *g = arg;
	pid_t v = t->vtgid;
	(void)w;
	g->members++;
	struct ids d = ids_of(t);
	if (!g->any && v != g->c->task->vtgid && !ids_may_signal(&g->s, &d))
		g->denied = 1;
	return 0;
}

/* The owner check: 0 with *tp the task named (a reference; for a process
 * group its leader, whose number names the group), or -errno. A process
 * group is checked on the members it has now, but the kernel signals
 * whoever is a member when the I/O comes (a process of the same session
 * may join it any time later, setpgid), with the setter's authority, which
 * on the one host uid passes for every guest task: in a sandbox of more
 * than one identity a group owner is refused (EPERM) unless the setter's
 * euid is root (sigio_perm: any task is its to signal) (pidgroups;
 * ARCHITECTURE.md "Pids checked, then used"). 1 with *tp NULL: group 1,
 * moat-init's (no task of the table), set by its host number. */
static long sigio_owner_check(struct sc_call *c, int type, pid_t who, struct task **tp)
{
	struct ids s = ids_of(c->task);
	int any = s.euid == 0; /* sigio_perm: the setter's euid is root */
	*tp = NULL;
	if (who <= 0)
		return -ESRCH;
	if (type == F_OWNER_PGRP) {
		struct sigio_grp g = { .c = c, .s = s, .pgrp = who, .any = any };
		pgw_each(c, who, sigio_visit, &g);
		if (!g.members)
			return -ESRCH;
		if (!any && !sc_pid_reuse_harmless(c)) {
			snprintf(c->note, sizeof c->note,
				 "SIGIO owner: group %d may gain members of other ids (the sandbox has other ids)", (int)who);
			return -EPERM;
		}
		if (g.denied) {
			snprintf(c->note, sizeof c->note, "SIGIO owner: group %d has a process the caller may not signal",
				 (int)who);
			return -EPERM;
		}
		/* the group's creator holds its number, a member or not (it may
		 * have moved to another group of the session) */
		*tp = task_get_vpid(c->sb, who);
		if (*tp && (*tp)->vtgid != who) {
			task_put(*tp);
			*tp = NULL;
		}
		if (!*tp && who == 1)
			return 1; /* the program's group 1: moat-init's (sb->init_pid),
				   * which lives as long as the sandbox (pin40) */
		if (!*tp)
			return -ESRCH; /* its creator is gone: no number to pin (rare) */
		return 0;
	}
	struct task *t = task_get_vpid(c->sb, who);
	if (!t)
		return -ESRCH;
	struct ids d = ids_of(t);
	int own = t->vtgid == c->task->vtgid;
	if (!any && !own && !ids_may_signal(&s, &d)) {
		task_put(t);
		snprintf(c->note, sizeof c->note, "SIGIO owner: %d is not the caller's to signal", (int)who);
		return -EPERM;
	}
	*tp = t;
	return 0;
}

/* the owner set by the sentry on its own copy of the file (hfd), the
 * named task's number in the sentry's pid namespace */
struct sigio_arg {
	int hfd, ex, type;
};

static long sigio_fn(const pid_t *h, void *arg)
{
	struct sigio_arg *a = arg;
	long r;
	if (a->ex) {
		struct f_owner_ex o = { .type = a->type, .pid = h[0] };
		r = fcntl(a->hfd, F_SETOWN_EX, &o);
	} else {
		r = fcntl(a->hfd, F_SETOWN, a->type == F_OWNER_PGRP ? -h[0] : h[0]);
	}
	return r < 0 ? -errno : 0;
}

/* fcntl(F_SETOWN[_EX]) or FIOSETOWN/SIOCSPGRP of who (of type) on the
 * sentry's copy of the guest's file: checked, then made on the task
 * checked while its number is held (pin_act; the caller's own thread or
 * process directly: alive while it waits), so a number freed and reused
 * meanwhile is never the owner (the kernel keeps the owner's struct pid:
 * once set, a reuse of the number does not move it) */
static long sigio_set(struct sc_call *c, int hfd, int ex, int type, pid_t who)
{
	struct sigio_arg a = { .hfd = hfd, .ex = ex, .type = type };
	pid_t none[2] = { 0, 0 };
	if (who == 0 && tty_of_host(c, hfd)) {
		/* no owner on a host terminal's description: its next O_ASYNC
		 * (F_SETFL, FIOASYNC) would make the tty's foreground group
		 * the owner (tty_fasync), moat's job, outside the guest's
		 * session, with the guest's ids and F_SETSIG's signal (red
		 * team 82: SIGKILL of moat at the next key typed, root-run
		 * and rootless). A task that is gone is the owner instead:
		 * no signal, F_GETOWN 0, as with none. */
		snprintf(c->note, sizeof c->note, "%s 0 on a host terminal: an owner that is gone",
			 ex ? "F_SETOWN_EX" : "F_SETOWN");
		return moat_sigio_dead_owner(&hfd, 1, type);
	}
	if (who == 0)
		return sigio_fn(none, &a); /* no owner */
	struct task *t;
	long r = sigio_owner_check(c, type, who, &t);
	if (r < 0)
		return r;
	if (r == 1) { /* group 1: moat-init's number, no task to pin */
		pid_t h[2] = { c->sb->init_pid, 0 };
		return sigio_fn(h, &a);
	}
	if (t->vtid == c->task->vtid || t->vtid == c->task->vtgid) {
		pid_t h[2] = { atomic_load(&t->tid), 0 };
		r = sigio_fn(h, &a);
	} else {
		r = pin_act(&t, 1, 1, sigio_fn, &a, NULL);
	}
	task_put(t);
	return r;
}

/* one of the caller's own open file descriptions: moat's fds 0-2 as the
 * caller gave them (sb->caller_stdio; /dev/null where the caller left one
 * closed). The guest shares those it was not given a fresh description of
 * (tty_stdio_fresh: a regular file, a socket, a failed reopen). Their
 * SIGIO owner and signal are the caller's:
 * a process outside that set itself as its stdin's owner gets the signal
 * F_SETSIG names (SIGKILL too) at the next input, during the run and after
 * it (red team 47). hfd is the sentry's copy of the guest's file. */
static int caller_ofd(struct sandbox *sb, int hfd)
{
	pid_t me = getpid();
	for (int i = 0; i < 3; i++)
		if (syscall(SYS_kcmp, me, me, 0 /* KCMP_FILE */, hfd, sb->caller_stdio[i]) == 0)
			return 1;
	return 0;
}

static long caller_ofd_refuse(struct sc_call *c, int hfd, const char *what)
{
	if (!caller_ofd(c->sb, hfd))
		return 0;
	snprintf(c->note, sizeof c->note, "%s: the caller's own open file (moat's stdio)", what);
	return -EPERM;
}

/* fcntl F_SETSIG: made on the pinned file (a thread could swap the fd
 * number after a check), never on the caller's own descriptions */
long sigio_setsig_fcntl(struct sc_call *c)
{
	int hfd = task_getfd(c->task, (int)c->args[0]);
	if (hfd < 0)
		return -EBADF;
	long r = caller_ofd_refuse(c, hfd, "F_SETSIG");
	if (r == 0 && fcntl(hfd, F_SETSIG, (unsigned long)c->args[2]) < 0)
		r = -errno;
	close(hfd);
	return r;
}

/* fcntl F_SETOWN (native after the check where reuse is harmless, the
 * setter is root or the owner is its own process: the pid is a register)
 * and F_SETOWN_EX (its struct read once; made here on the pinned file).
 * Neither on the caller's own descriptions (caller_ofd, on the pinned
 * file; a thread that swaps the fd number after that check can make a
 * guest task the owner of one by a native F_SETOWN: Known gaps) */
long sigio_setown_fcntl(struct sc_call *c)
{
	int fd = (int)c->args[0];
	int ex = (int)c->args[1] == F_SETOWN_EX;
	struct f_owner_ex o;
	if (!ex) {
		int who = (int)c->args[2];
		int pfd = task_getfd(c->task, fd);
		if (pfd < 0)
			return -EBADF;
		long rr = caller_ofd_refuse(c, pfd, "F_SETOWN");
		close(pfd);
		if (rr < 0)
			return rr;
		/* a caller description the guest still shares (a regular file
		 * or socket stdio: tty_stdio_fresh): no native F_SETOWN where
		 * the sentry can make it on the pinned file, or a dup2(0, fd)
		 * after the check above made a guest task its owner */
		int shared = c->sb->caller_shared != 0;
		c->cont = 1;
		if (who == INT_MIN)
			return 0; /* EINVAL: the kernel's */
		if (!shared && (who == c->task->vtgid || who == c->task->vtid))
			return 0; /* its own process or thread, alive while it waits */
		/* (0, no owner: made on the pinned file, sigio_set, which
		 * may not clear a host terminal's; a thread's dup2 after a
		 * check here would let the native call clear one) */
		if (who != 0) {
			struct task *t;
			long r = sigio_owner_check(c, who < 0 ? F_OWNER_PGRP : F_OWNER_PID, who < 0 ? -who : who, &t);
			task_put(t);
			if (r == -EPERM) {
				c->cont = 0;
				return r;
			}
			/* never native where the guest shares a caller's
			 * description: a thread's dup2 of it onto the number
			 * after the check made a guest group its SIGIO owner
			 * (pin40, race_setown); group 1, moat-init's, is set on
			 * the pinned file too (sigio_set), a group whose creator
			 * is gone is ESRCH there (Known gaps) */
			if ((ids_of(c->task).euid == 0 || sc_pid_reuse_harmless(c)) && !shared) {
				pidcall_test_delay(); /* (tests: the window a guest holds) */
				return 0; /* whoever takes the number passes; ESRCH: the kernel's */
			}
		}
		c->cont = 0;
		o.type = who < 0 ? F_OWNER_PGRP : F_OWNER_PID;
		o.pid = who < 0 ? -who : who;
	} else {
		if (sc_read_guest(c, c->args[2], &o, sizeof o) < 0)
			return -EFAULT;
		if (o.type != F_OWNER_TID && o.type != F_OWNER_PID && o.type != F_OWNER_PGRP)
			return -EINVAL;
	}
	int hfd = task_getfd(c->task, fd);
	if (hfd < 0)
		return -EBADF;
	long r = caller_ofd_refuse(c, hfd, ex ? "F_SETOWN_EX" : "F_SETOWN");
	if (r == 0)
		r = sigio_set(c, hfd, ex, o.type, o.pid);
	close(hfd);
	if (!ex)
		pidcall_test_delay();
	return r;
}

/* ioctl FIOSETOWN/SIOCSPGRP: a socket's F_SETOWN (sock_ioctl's f_setown);
 * the int read once, the owner set here on the pinned file */
long sigio_setown_ioctl(struct sc_call *c)
{
	int who;
	if (sc_read_guest(c, c->args[2], &who, sizeof who) < 0)
		return -EFAULT;
	int hfd = sc_getfd_socket(c, (int)c->args[0], ENOTTY);
	if (hfd < 0)
		return hfd;
	long r = 0;
	if (who == INT_MIN)
		r = -EINVAL;
	else if ((r = caller_ofd_refuse(c, hfd, "FIOSETOWN/SIOCSPGRP")) == 0)
		r = sigio_set(c, hfd, 0, who < 0 ? F_OWNER_PGRP : F_OWNER_PID, who < 0 ? -who : who);
	close(hfd);
	return r;
}

/* ---- O_ASYNC: SIGIO for the file's owner ----
 *
 * F_SETFL with O_ASYNC (the filter's rule) and ioctl FIOASYNC turn SIGIO
 * on for a file's owner, whoever set it: on one of the caller's own
 * descriptions the guest shares (a socket stdio, which cannot be reopened;
 * a terminal whose fresh reopen failed) the caller's owner got SIGIO,
 * whose default action ends it, at the next event (red team 82: a caller
 * that owned its socket's SIGURG, with O_ASYNC off, was killed by its
 * first byte once the guest turned O_ASYNC on; on such a terminal
 * tty_fasync made moat's job the owner, Known gaps before). Refused
 * (EPERM) on a caller's description or a file whose owner is a process or
 * group of no guest task (F_GETOWN_EX in the sentry's pid namespace: a
 * host process); otherwise made on the pinned file, never natively after
 * the check (a thread's dup2(0, fd) meanwhile). A terminal with no owner
 * gets one first, which tty_fasync would otherwise pick itself (the
 * terminal's foreground group; here the calling thread would be the
 * sentry's): on a host terminal a task that is gone, on one of the
 * sandbox's devpts the caller's process (Linux: the foreground group if
 * the terminal has one). The kernel notes the fd number for a signal
 * F_SETSIG chose (si_fd): the sentry's copy's number, not the guest's. */
struct pg_find {
	pid_t pgid;
	int found;
};

static int pg_member(struct task *t, void *arg)
{
	struct pg_find *f = arg;
	if (!f->found && getpgid(t->tgid) == f->pgid)
		f->found = 1;
	return 0;
}

/* 1: hfd's SIGIO owner is outside the sandbox or hfd is the caller's own;
 * 0: none, a task gone, or a guest task, process or group (*none: no
 * owner or a task gone) */
static int owner_outside(struct sc_call *c, int hfd, int *none)
{
	struct f_owner_ex o;
	*none = 0;
	if (caller_ofd(c->sb, hfd) || fcntl(hfd, F_GETOWN_EX, &o) < 0)
		return 1;
	if (o.pid == 0) {
		*none = 1;
		return 0;
	}
	if (o.pid == c->sb->init_pid)
		return 0; /* the guest's init, or the program's own group 1 */
	if (o.type == F_OWNER_PGRP) {
		struct pg_find f = { o.pid, 0 };
		task_for_each_leader(c->sb, pg_member, &f);
		return !f.found;
	}
	struct task *t = task_get(c->sb, o.pid);
	task_put(t);
	return t == NULL;
}

static long async_on(struct sc_call *c, int hfd, int fl, const char *what)
{
	int none;
	if (owner_outside(c, hfd, &none)) {
		snprintf(c->note, sizeof c->note, "%s: the file's SIGIO owner is outside the sandbox (or the caller's own file)",
			 what);
		return -EPERM;
	}
	int cur = fcntl(hfd, F_GETFL);
	if (cur < 0)
		return -errno;
	if ((fl & O_ASYNC) && !(cur & O_ASYNC) && none && isatty(hfd)) {
		long r;
		if (tty_of_host(c, hfd)) {
			r = moat_sigio_dead_owner(&hfd, 1, F_OWNER_PID);
		} else {
			struct sigio_arg a = { .hfd = hfd, .ex = 0, .type = F_OWNER_PID };
			pid_t h[2] = { c->task->tgid, 0 };
			r = sigio_fn(h, &a);
		}
		if (r < 0)
			return r;
	}
	return fcntl(hfd, F_SETFL, fl) < 0 ? -errno : 0;
}

long sigio_setfl_fcntl(struct sc_call *c)
{
	int hfd = task_getfd(c->task, (int)c->args[0]);
	if (hfd < 0)
		return -EBADF;
	long r = async_on(c, hfd, (int)c->args[2], "F_SETFL O_ASYNC");
	close(hfd);
	return r;
}

/* ioctl FIOASYNC: the int read once; on or off made as F_SETFL on the
 * pinned file (the sentry's filter has no FIOASYNC) */
long sigio_fioasync_ioctl(struct sc_call *c)
{
	int on;
	if (sc_read_guest(c, c->args[2], &on, sizeof on) < 0)
		return -EFAULT;
	int hfd = task_getfd(c->task, (int)c->args[0]);
	if (hfd < 0)
		return -EBADF;
	int fl = fcntl(hfd, F_GETFL);
	long r = fl < 0 ? -errno : async_on(c, hfd, on ? fl | O_ASYNC : fl & ~O_ASYNC, "FIOASYNC");
	close(hfd);
	return r;
}

long sys_kill(struct sc_call *c)
{
	pid_t pid = (pid_t)c->args[0];
	int sig = (int)c->args[1];
	return pid > 0 ? check(c, pid, 0, sig) : group(c, pid, sig, NULL);
}
long sys_tkill(struct sc_call *c) { return check_send(c, (pid_t)c->args[0], 0, (int)c->args[1], 1, 0); }
long sys_tgkill(struct sc_call *c)
{
	return check_send(c, (pid_t)c->args[1], (pid_t)c->args[0], (int)c->args[2], 1, 0);
}
long sys_rt_sigqueueinfo(struct sc_call *c)
{
	return check_send(c, (pid_t)c->args[0], 0, (int)c->args[1], 0, c->args[2]);
}
long sys_rt_tgsigqueueinfo(struct sc_call *c)
{
	return check_send(c, (pid_t)c->args[1], (pid_t)c->args[0], (int)c->args[2], 1, c->args[3]);
}

/* pidfd_send_signal: the target is read from the caller's fdinfo (a real
 * pidfd) or is the VFS's (a /proc/<pid> directory fd, which Linux also
 * accepts); after the kill check (a group's, for PIDFD_SIGNAL_PROCESS_GROUP)
 * the sentry sends the signal through its own pidfd of the task (a siginfo
 * is read once and checked as Linux does). */
/* The guest pid a pidfd of the caller's refers to ("Pid:" of its fdinfo in
 * the guest procfs), -ESRCH if its process is gone, -EBADF if the fd is not
 * open or not a pidfd. Never "the kernel answers" (CONTINUE): the number is
 * the guest's, and another thread may dup2 a pidfd of a root process onto it
 * before the kernel runs the call (the lookup of fdinfo/N itself fails now
 * and then, ENOENT, while N is being replaced: race_pidfd saw root's
 * process signalled that way through the old CONTINUE). */
static pid_t pidfd_target(struct sc_call *c)
{
	char p[64], buf[512];
	int fd = -1;
	ssize_t n;

	if (c->sb->guest_procfd < 0)
		return -EPERM; /* cannot tell the target: fail closed */
	snprintf(p, sizeof p, "%d/fdinfo/%d", (int)c->task->vtgid, (int)c->args[0]);
	for (int i = 0; i < 3 && fd < 0; i++)
		fd = openat(c->sb->guest_procfd, p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -EBADF;
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return -EBADF;
	buf[n] = 0;
	const char *l = strstr(buf, "\nPid:");
	if (!l)
		return -EBADF; /* not a pidfd: Linux's EBADF */
	long pid = strtol(l + 5, NULL, 10);
	return pid > 0 ? (pid_t)pid : pid == -1 ? -ESRCH : -EBADF; /* -1: its process is gone */
}


long sys_pidfd_send_signal(struct sc_call *c)
{
	cleanup_free struct vfs_node *n = xmalloc(sizeof *n);
	int sig = (int)c->args[1];
	unsigned flags = (unsigned)c->args[3]; /* the kernel's unsigned int: the low 32 bits */
	int procdir = 0;
	pid_t pid = 0;
	long r;

	if (vfs_fd_node(VFS_OF(c), c->task, (int)c->args[0], n, NULL) == 0 && n->kind == VN_PROC &&
	    S_ISDIR(n->st.st_mode))
		pid = procfs_dir_pid(c->task, n->rel), procdir = 1;
	if (pid <= 0) {
		/* a real pidfd: its target from the caller's fdinfo (in the
		 * guest's pid namespace), then Linux's kill rule. Whatever the
		 * siginfo and flags, the signal is sent by the sentry through
		 * its own pidfd of that target: another thread may dup2 a
		 * pidfd of another process onto the number once the fdinfo is
		 * read (red-team 9: "checked, then native" let a process that
		 * dropped root signal root's process that way) */
		pid = pidfd_target(c);
		if (pid <= 0) {
			/* not a pidfd, or a dead one; Linux checks the flags first */
			if ((flags & ~(PIDFD_SIGNAL_THREAD | PIDFD_SIGNAL_THREAD_GROUP |
				       PIDFD_SIGNAL_PROCESS_GROUP)) || (flags & (flags - 1)))
				return -EINVAL;
			return pid < 0 ? pid : -EBADF;
		}
		procdir = 0;
	}
	if ((procdir && flags) || sig < 0 || sig >= 65 ||
	    (flags & ~(PIDFD_SIGNAL_THREAD | PIDFD_SIGNAL_THREAD_GROUP | PIDFD_SIGNAL_PROCESS_GROUP)) ||
	    (flags & (flags - 1)))
		return -EINVAL;
	/* a siginfo: read once, Linux's rules on the copy (its si_signo must
	 * be the signal; a code the kernel makes, >= 0 or SI_TKILL, only to
	 * the caller's own process, and then the kernel refuses it from the
	 * sentry: EPERM, as it would be sent by another process), then sent
	 * with it */
	siginfo_t info;
	if (c->args[2]) {
		if (sc_read_guest(c, c->args[2], &info, sizeof info) < 0)
			return -EFAULT;
		if (info.si_signo != sig)
			return -EINVAL;
		if ((info.si_code >= 0 || info.si_code == SI_TKILL) &&
		    (pid != c->task->vtgid || (flags & PIDFD_SIGNAL_PROCESS_GROUP)))
			return -EPERM;
	}
	if (flags & PIDFD_SIGNAL_PROCESS_GROUP) {
		/* every member of the group whose id is the pidfd's pid, as
		 * kill(-pid): all permitted, sent below to the group; else
		 * group() sent it (with the siginfo) to the permitted ones, or refused */
		r = group(c, -pid, sig, c->args[2] ? &info : NULL);
		if (!c->cont)
			return r;
	} else {
		r = check(c, pid, 0, sig);
		if (!c->cont)
			return r;
	}
	c->cont = 0;
	struct task *t = task_get_vpid(c->sb, pid);
	if (!t)
		return pid == 1 ? 0 : -ESRCH; /* the guest's init: ignored, as Linux's init does */
	if (t->exited || t->pidfd < 0) {
		task_put(t);
		return -ESRCH;
	}
	int pfd = t->pidfd, own = -1;
	if ((flags & PIDFD_SIGNAL_THREAD) && t->vtid != t->vtgid) {
		/* one thread, not the leader: a pidfd of that thread */
		own = (int)syscall(SYS_pidfd_open, t->tid, PIDFD_THREAD);
		if (own < 0 || atomic_load(&t->exited)) {
			if (own >= 0)
				close(own);
			task_put(t);
			return -ESRCH;
		}
		pfd = own;
	}
	r = syscall(SYS_pidfd_send_signal, pfd, sig, c->args[2] ? &info : NULL, flags);
	r = r < 0 ? -errno : 0;
	if (own >= 0)
		close(own);
	task_put(t);
	return r;
}


/* Calls that act on another task by pid: prlimit64, setpriority,
 * sched_setparam/setscheduler/setaffinity/setattr (the classes the sentry
 * keeps itself: syscalls/sys_sched.c), ioprio_set. Every guest
 * task is the same host uid, so the kernel's owner checks pass for any
 * target (red-team round 5: a process that dropped root set a root
 * process's RLIMIT_NOFILE to 0 and its policy to SCHED_IDLE; get_robust_list
 * and kcmp, which Linux guards with the ptrace access check, likewise). The filter
 * keeps the caller's own calls (pid 0) native and sends the others here;
 * Linux's rule is applied on the virtual ids, then the call runs natively
 * (its arguments checked are plain register values) where pid reuse is
 * harmless, else the sentry makes it at the check with its own copy of the
 * arguments (below: "the owner rows made by the sentry"). */
enum owner_rule { OWN_NICE, OWN_IOPRIO, OWN_RLIMIT, OWN_PTRACE };

static struct cred cred_of(struct task *t)
{
	pthread_mutex_lock(&t->lock);
	struct cred c = t->cred;
	pthread_mutex_unlock(&t->lock);
	return c;
}

/* a target's credentials for the ptrace check, with its process's
 * dumpable flag (PR_SET_DUMPABLE of another thread marks the leader) */
static struct cred cred_of_target(struct sandbox *sb, struct task *t)
{
	struct cred d = cred_of(t);
	d.nondump = task_nondump(sb, t);
	return d;
}

static int owner_ok(const struct cred *s, const struct cred *d, enum owner_rule r)
{
	switch (r) {
	case OWN_NICE:   /* set_one_prio_perm, check_same_owner */
		return s->euid == d->ruid || s->euid == d->euid ||
		       cred_capable(s, CRED_CAP_SYS_NICE);
	case OWN_IOPRIO: /* set_task_ioprio */
		return d->ruid == s->euid || d->ruid == s->ruid ||
		       cred_capable(s, CRED_CAP_SYS_NICE);
	case OWN_RLIMIT: /* check_prlimit_permission */
		return (s->ruid == d->euid && s->ruid == d->suid && s->ruid == d->ruid &&
			s->rgid == d->egid && s->rgid == d->sgid && s->rgid == d->rgid) ||
		       cred_capable(s, CRED_CAP_SYS_RESOURCE);
	case OWN_PTRACE: /* PTRACE_MODE_READ_REALCREDS; CAP_SYS_PTRACE is never granted;
			  * a non-dumpable target (its ids changed, PR_SET_DUMPABLE 0) never */
		return !d->nondump && s->ruid == d->euid && s->ruid == d->suid && s->ruid == d->ruid &&
		       s->rgid == d->egid && s->rgid == d->sgid && s->rgid == d->rgid;
	default:
		return 0;
	}
}

/* MOAT_TEST_PIDCALL_DELAY_MS (tests only): an owner row naming another
 * task holds its answer this long after the check, the window a guest
 * thread can hold natively between a CONTINUE and the kernel's lookup
 * (isolation_identity dropped_owner_calls_act_at_check) */
static void pidcall_test_delay(void)
{
	static atomic_int ms = -1;
	int v = atomic_load(&ms);
	if (v < 0) {
		const char *e = getenv("MOAT_TEST_PIDCALL_DELAY_MS");
		v = e ? atoi(e) : 0;
		atomic_store(&ms, v);
	}
	if (v > 0) {
		struct timespec ts = { v / 1000, (long)(v % 1000) * 1000000L };
		nanosleep(&ts, NULL);
	}
}

/* one target (a guest tid or pid): Linux's rule on the virtual ids. 0 with
 * c->cont set (passed: the kernel runs it), or -EPERM. *tp (when tp is not
 * NULL) gets the task checked, a reference (NULL: none, or the caller's own
 * process) */
static long owner_check(struct sc_call *c, pid_t target, enum owner_rule r, struct task **tp)
{
	if (tp)
		*tp = NULL;
	c->cont = 1;
	if (target <= 0)
		return 0;        /* the caller itself, or the kernel's EINVAL/ESRCH */
	struct cred s = cred_of(c->task), d;
	struct task *t = task_get_vpid(c->sb, target);
	if (!t && r != OWN_PTRACE && (r != OWN_RLIMIT || c->args[2]) && task_is_init(c->sb, target)) {
		/* a nice, class, affinity, I/O priority or new limit of
		 * moat-init's (pid 1 or its act thread) is moat's: the guest's
		 * root set SCHED_IDLE, nice 19 or RLIMIT_NOFILE 16 on the
		 * thread that makes the sentry's calls and on the reaper
		 * (stdio39) */
		c->cont = 0;
		snprintf(c->note, sizeof c->note, "task %d is moat-init's", (int)target);
		return -EPERM;
	}
	if (!t) {
		if (target != 1)
			return 0; /* ESRCH from the kernel */
		memset(&d, 0, sizeof d); /* the guest's init is root's */
	} else {
		d = cred_of_target(c->sb, t);
		if (t->vtgid == c->task->vtgid) {
			/* its own threads: no check (a sibling thread's number
			 * is freed by its reap all the same: owner_native) */
			if (tp)
				*tp = t;
			else
				task_put(t);
			return 0;
		}
	}
	if (owner_ok(&s, &d, r)) {
		if (tp)
			*tp = t;
		else
			task_put(t);
		return 0;
	}
	task_put(t);
	c->cont = 0;
	snprintf(c->note, sizeof c->note, "task %d is not the caller's", (int)target);
	return -EPERM;
}

/* another task's number (not the caller's own thread or process, not the
 * guest's init): what the test hook holds */
static int pid_other(struct sc_call *c, pid_t target)
{
	return target > 1 && target != c->task->vtid && target != c->task->vtgid;
}

static long owner_one(struct sc_call *c, pid_t target, enum owner_rule r)
{
	struct task *t;
	long e = owner_check(c, target, r, &t);
	task_put(t);
	if (e == 0 && pid_other(c, target))
		pidcall_test_delay();
	return e;
}

/* ---- the owner rows made by the sentry at the check (pidcalls) ----
 * Like kill (above: "a pid checked, then run natively"), a passed owner
 * check let the kernel look the number up again whenever the caller's
 * thread got round to the call; a target reaped meanwhile left its number
 * to the next guest task the pid space gave it to, another user's
 * included. These calls have no pidfd form, so where reuse is not harmless
 * the sentry makes the call itself, on the task it checked, by its host
 * tid (or tgid), while nothing can free that number: inside the target
 * group's copy guard (task_io_begin: no exec of the group, whose de_thread
 * frees the exec'ing thread's old tid without a reap, is let go meanwhile)
 * and the reap gate (no reap), the task seen neither exited nor reaped.
 * The rows that set something the guest's init makes, by the task's
 * number in the guest's pid namespace (sc_init_make; the sentry's filter
 * refuses them on another task: initrows2); the sentry reads (prlimit64
 * without new limits, get_robust_list) and compares (kcmp) itself. The
 * kernel applies the same rules to the sentry and the init as to the
 * caller: all are the guest's one host uid without capabilities in the
 * initial namespace (can_nice and sched_setattr's RLIMIT_RTPRIO are the
 * target's limits, prlimit's hard raise needs the initial CAP_SYS_RESOURCE
 * none has; the ptrace read check of get_robust_list and kcmp passes for the tracer as
 * process_vm_* does). ARCHITECTURE.md "Pids checked, then used". */

/* 1: a call on target that passed its check may run natively: the
 * caller's own thread or process (alive while it waits here: a group's
 * number stays until its last thread is reaped), the guest's init (never
 * reused), a caller whose capability passes the rule for any task, or a
 * sandbox where every task that may take the number passes it */
static int owner_native(struct sc_call *c, pid_t target, enum owner_rule r)
{
	if (target <= 0 || target == 1 || target == c->task->vtid || target == c->task->vtgid)
		return 1;
	if (r == OWN_PTRACE)
		return 0; /* an exec may put an image the caller may not see under
			   * any other number, whatever the sandbox's ids (vmexec:
			   * ptrace_check_at_image) */
	struct cred s = cred_of(c->task);
	if ((r == OWN_NICE || r == OWN_IOPRIO) && cred_capable(&s, CRED_CAP_SYS_NICE))
		return 1;
	if (r == OWN_RLIMIT && cred_capable(&s, CRED_CAP_SYS_RESOURCE))
		return 1;
	return sc_pid_reuse_harmless(c);
}

/* fn(host ids, arg) on tasks t[0..n-1] (n <= 2) by their host tids
 * (thread) or tgids (and the same in the guest's pid namespace after
 * them, for the calls the guest's init makes: sc_init_make), with their
 * numbers held: their groups' copy guards and
 * the reap gate, each seen not exited or reaped (the process's pidfd not
 * readable). -ESRCH when one is gone; -EAGAIN when a guard or the gate
 * stayed shut past TASK_IO_WAIT_MS. Guest memory is never touched inside
 * (a fault there must not hold the tracer's reaps). With execs (the
 * groups' exec counts at a check bound to their images:
 * ptrace_check_at_image), -EPERM when one moved: an exec since the check.
 * The second group's guard is never waited for while the first is held
 * (task_io_try: the first let go while the second's exec runs). */
static long pin_act(struct task *const *t, int n, int thread, pid_fn fn, void *arg, const unsigned *execs)
{
	int two = n > 1 && t[1]->tgid != t[0]->tgid;
	for (int naps = 0;; naps++) {
		if (task_io_begin(t[0], -1, 0) < 0)
			return -EAGAIN;
		if (!two || task_io_try(t[1]) == 0)
			break;
		task_io_end(t[0]);
		if (naps >= TASK_IO_WAIT_MS * 10)
			return -EAGAIN;
		struct timespec ts = { 0, 100000 }; /* 100 us */
		nanosleep(&ts, NULL);
	}
	long r = 0;
	for (int i = 0; execs && i < n && !r; i++)
		if (task_io_execs(t[i]) != execs[i])
			r = -EPERM; /* it exec'd since the check */
	if (r) {
	} else if (task_reap_hold() < 0) {
		r = -EAGAIN;
	} else {
		pid_t host[4] = { 0, 0, 0, 0 };
		for (int i = 0; i < n && !r; i++) {
			struct pollfd pf = { .fd = t[i]->pidfd, .events = POLLIN };
			if (t[i]->pidfd < 0 || atomic_load(&t[i]->exited) || atomic_load(&t[i]->reaped) ||
			    poll(&pf, 1, 0) != 0)
				r = -ESRCH;
			else
				host[i] = thread ? atomic_load(&t[i]->tid) : t[i]->tgid;
			host[2 + i] = thread ? t[i]->vtid : t[i]->vtgid;
		}
		if (!r)
			r = fn(host, arg);
		task_reap_release();
	}
	if (two)
		task_io_end(t[1]);
	task_io_end(t[0]);
	return r;
}

/* The check of an owner row on target: 1 when the sentry must make the
 * call itself (*tp: the task checked, a reference, or NULL for a number no
 * guest task holds; c->cont cleared; then owner_make), else 0 (native:
 * c->cont set) or -errno as owner_one. A number no task holds is never
 * left to the kernel there either: a task forked onto it before the
 * caller's thread ran the call (the next number, which the guest can
 * tell) would be hit unchecked. */
static long ptrace_check_at_image(struct sc_call *c, pid_t target, struct task **tp, unsigned *execs);

/* (OWN_PTRACE: *execs gets the target group's exec count at a second check
 * bound to its image, ptrace_check_at_image; owner_make then refuses the
 * call when it moved) */
static long owner_pin(struct sc_call *c, pid_t target, enum owner_rule r, struct task **tp, unsigned *execs)
{
	long e = owner_check(c, target, r, tp);
	if (e < 0)
		return e;
	if (!pid_other(c, target) || owner_native(c, target, r)) {
		task_put(*tp);
		*tp = NULL;
		if (pid_other(c, target))
			pidcall_test_delay();
		return 0;
	}
	c->cont = 0;
	if (r == OWN_PTRACE && *tp && (e = ptrace_check_at_image(c, target, tp, execs)) < 0) {
		task_put(*tp);
		*tp = NULL;
		return e;
	}
	return 1;
}

/* the call made on t (owner_pin's; NULL: on no task), t put; execs as
 * pin_act's (the check bound to t's image) or NULL */
static long owner_make(struct sc_call *c, struct task *t, int thread, pid_fn fn, void *arg, const unsigned *execs)
{
	long r;
	if (t) {
		if (execs && sc_test_vm_check_delay_ms) {
			if (guestmem_test_block)
				guestmem_test_block(); /* another worker takes the lead */
			usleep((useconds_t)sc_test_vm_check_delay_ms * 1000);
		}
		r = pin_act(&t, 1, thread, fn, arg, execs);
		task_put(t);
	} else {
		pid_t none[4] = { NO_TASK_PID, NO_TASK_PID, NO_TASK_PID, NO_TASK_PID };
		r = fn(none, arg);
	}
	pidcall_test_delay();
	snprintf(c->note, sizeof c->note, "made by the sentry (the sandbox has other ids)");
	return r;
}

long sc_owner_nice_pin(struct sc_call *c, pid_t target, struct task **tp)
{
	return owner_pin(c, target, OWN_NICE, tp, NULL);
}

long sc_owner_make(struct sc_call *c, struct task *t, long (*fn)(const pid_t *host, void *arg), void *arg)
{
	return owner_make(c, t, 1, fn, arg, NULL);
}

/* q made by the guest's init (sentry/spawn.c init_act) on the task a
 * pid_fn was given (h: pin_act's; its number in the guest's pid namespace,
 * where a number names a guest task only, held by the reap gate, so it
 * names the task checked; NO_TASK_PID, a number no pid space gives, as it
 * is: the kernel's argument checks, then ESRCH). The sentry's own filter
 * refuses these calls on any task but its own (initrows2: rootless, a host
 * number could name any of the caller's processes). */
long sc_init_make(struct sandbox *sb, const pid_t *h, struct init_act_req *q, struct init_act_rep *p)
{
	q->pid = h[0] == NO_TASK_PID ? NO_TASK_PID : h[2];
	return init_act_call(sb, q, p);
}

/* ---- setpriority PRIO_PGRP/PRIO_USER, ioprio_set IOPRIO_WHO_PGRP/USER
 * made by the sentry (pidgroups) ----
 * Natively the kernel finds the group's members (or, for a user, every task
 * of the one host uid: every guest task, whatever its virtual user) when
 * the caller's thread runs the call, which the guest can put off: a process
 * of another identity that joins the group meanwhile (setpgid within the
 * session), or takes a freed number and makes it a group, is acted on
 * unchecked. So, unless the caller passes the rule for any task
 * (CAP_SYS_NICE) or reuse is harmless (one identity), the sentry reads the
 * members from its task table (every thread of a process whose group, from
 * the guest's procfs, is who; every thread whose virtual real uid is who),
 * checks each on the virtual ids and makes the call for each that passes by
 * its host tid, its number held (pin_act). A user's tasks are always made
 * so: natively the call would reach every guest task (one host uid), or no
 * task at all (a virtual uid the guest's user namespace does not map).
 * Linux's answers: setpriority sets every member it may and answers the
 * last refusal (EPERM; EACCES from can_nice, the kernel's), 0 when all
 * passed, ESRCH without members; ioprio_set stops at the first error. */
struct pg_member {
	pid_t vtid, tid;
};

struct pg_collect {
	struct sc_call *c;
	int user;
	uid_t uid;
	pid_t *tg;            /* the group's processes (host tgids) */
	size_t ntg, ctg;
	struct pg_member *m;  /* their threads, or the user's */
	size_t n, cap;
};

static int pg_leader_visit(struct task *t, struct pgw *w, void *arg)
{
	struct pg_collect *g = arg;
	(void)w;
	if (g->ntg == g->ctg) {
		size_t nc = g->ctg ? g->ctg * 2 : 16;
		pid_t *n = realloc(g->tg, nc * sizeof *n);
		if (!n)
			return -ENOMEM;
		g->tg = n;
		g->ctg = nc;
	}
	g->tg[g->ntg++] = t->tgid;
	return 0;
}

static int pg_thread_visit(struct task *t, void *arg)
{
	struct pg_collect *g = arg;
	if (atomic_load(&t->exited) || t->vtid <= 0)
		return 0;
	if (g->user) {
		if (cred_of(t).ruid != g->uid)
			return 0;
	} else {
		size_t i = 0;
		while (i < g->ntg && g->tg[i] != t->tgid)
			i++;
		if (i == g->ntg)
			return 0;
	}
	if (grow_array(&g->m, &g->cap, g->n, sizeof *g->m, 16))
		return -ENOMEM;
	g->m[g->n++] = (struct pg_member){ .vtid = t->vtid, .tid = atomic_load(&t->tid) };
	return 0;
}

/* setpriority PRIO_PROCESS or ioprio_set IOPRIO_WHO_PROCESS of one task,
 * made by the guest's init */
struct prio_arg {
	struct sandbox *sb;
	long nr;
	int prio;
};

static long prio_fn(const pid_t *h, void *arg)
{
	struct prio_arg *a = arg;
	struct init_act_req q = { .nr = (int32_t)a->nr, .a = a->prio };
	struct init_act_rep p;
	return sc_init_make(a->sb, h, &q, &p);
}

/* a process group (who: 0 = the caller's) or a user's tasks (0 = its real
 * uid); a: the call for one task (PRIO_PROCESS, IOPRIO_WHO_PROCESS) */
static long prio_group(struct sc_call *c, int user, int who, enum owner_rule r, struct prio_arg *a)
{
	struct pg_collect g = { .c = c, .user = user };
	struct cred s = cred_of(c->task);
	int ioprio = r == OWN_IOPRIO;

	c->cont = 1;
	if (who < 0)
		return 0;        /* the kernel's ESRCH/EINVAL: no task holds it */
	/* (group 1, the caller's own at first, is moat-init's too: never
	 * native, the sentry sets the guest's members only) */
	if (!user && who > 1 && (cred_capable(&s, CRED_CAP_SYS_NICE) || sc_pid_reuse_harmless(c))) {
		pidcall_test_delay(); /* (tests: the window a guest holds) */
		return 0;        /* whoever is a member then passes */
	}
	c->cont = 0;
	pid_t none[4] = { NO_TASK_PID, NO_TASK_PID, NO_TASK_PID, NO_TASK_PID };
	long err = ioprio ? prio_fn(none, a) : -ESRCH; /* ioprio_check_cap first, as Linux */
	if (err != -ESRCH)
		return err;
	if (user) {
		g.uid = who ? (uid_t)who : s.ruid;
	} else {
		int e = pgw_each(c, who, pg_leader_visit, &g);
		if (e < 0) {
			free(g.tg);
			return e; /* -ENOMEM; -ESRCH: the caller's group is gone */
		}
	}
	if ((user || g.ntg) && task_for_each_thread(c->sb, pg_thread_visit, &g) < 0) {
		free(g.tg);
		free(g.m);
		return -ENOMEM;
	}
	size_t acted = 0, refused = 0;
	for (size_t i = 0; i < g.n; i++) {
		struct task *t = task_get(c->sb, g.m[i].tid); /* (by its host number: hashed) */
		if (!t || t->vtid != g.m[i].vtid || atomic_load(&t->tid) != g.m[i].tid || atomic_load(&t->exited)) {
			task_put(t);
			continue; /* gone meanwhile */
		}
		struct cred d = cred_of(t);
		long e;
		if (!owner_ok(&s, &d, r)) {
			e = -EPERM;
			refused++;
		} else {
			e = pin_act(&t, 1, 1, prio_fn, a, NULL);
		}
		task_put(t);
		if (e == -ESRCH)
			continue; /* gone meanwhile */
		acted++;
		if (ioprio) {
			err = e;
			if (e < 0)
				break;
		} else if (e < 0) {
			err = e;
		} else if (err == -ESRCH) {
			err = 0;
		}
	}
	snprintf(c->note, sizeof c->note, "%s %d made by the sentry: %zu members, %zu refused",
		 user ? "user" : "process group", who, acted, refused);
	free(g.tg);
	free(g.m);
	pidcall_test_delay();
	return acted ? err : -ESRCH;
}

/* Whether another live guest task shares the caller's fd table (kcmp
 * KCMP_FILES, 2: a thread, or a clone(CLONE_FILES)): 1, or 0 when the
 * caller is its table's one user. A call the sentry checks on the file an
 * fd number holds and then lets run (TIOCSCTTY, F_NOTIFY: only the calling
 * task can make them) is only sound without a sharer: the caller waits in
 * the call, so nothing else can dup2 another file onto the number, nor
 * make a new sharer (io_uring, whose workers share it, is not offered). A
 * kcmp that fails but for a task gone counts as shared. Asked before the
 * number's file is pinned and checked: a sharer may dup2 onto the number
 * after the pin and then leave the table (exit, unshare(CLONE_FILES)),
 * unseen by a look made after the check (cont41); with none at the look,
 * none can come until the call's end. */
struct fdt_share {
	pid_t me;
	int shared;
};

static int fdt_visit(struct task *t, void *arg)
{
	struct fdt_share *s = arg;
	pid_t tid = atomic_load(&t->tid);
	if (tid == s->me || tid <= 0 || atomic_load(&t->exited))
		return 0;
	long r = syscall(SYS_kcmp, s->me, tid, 2 /* KCMP_FILES */, 0, 0);
	if (r == 0 || (r < 0 && errno != ESRCH)) {
		s->shared = 1;
		return 1;
	}
	return 0;
}

int sc_fdtable_shared(struct sc_call *c)
{
	struct fdt_share s = { .me = atomic_load(&c->task->tid) };
	task_for_each_thread(c->sb, fdt_visit, &s);
	return s.shared;
}

void sc_fdtable_test_delay(void) { pidcall_test_delay(); }

/* sched_setaffinity: the mask as the kernel reads it, min(len, its
 * cpumask size) bytes (sched_getaffinity's answer: the size it copies) */
enum { AFF_MAX = 1024 }; /* NR_CPUS 8192 */

struct aff_arg {
	struct sandbox *sb;
	unsigned long len;
	unsigned long mask[AFF_MAX / sizeof(unsigned long)];
};

/* made by the guest's init */
static long aff_fn(const pid_t *h, void *arg)
{
	struct aff_arg *a = arg;
	struct init_act_req q = { .nr = SYS_sched_setaffinity, .len = (uint32_t)a->len };
	struct init_act_rep p;
	memcpy(q.buf, a->mask, a->len);
	return sc_init_make(a->sb, h, &q, &p);
}

static unsigned long cpumask_bytes(void)
{
	static atomic_ulong n;
	unsigned long v = atomic_load(&n);
	if (!v) {
		unsigned long m[AFF_MAX / sizeof(unsigned long)];
		long r = syscall(SYS_sched_getaffinity, 0, sizeof m, m);
		v = r > 0 ? (unsigned long)r : sizeof m;
		atomic_store(&n, v);
	}
	return v;
}

long sys_sched_setaffinity(struct sc_call *c)
{
	struct task *t;
	long r = owner_pin(c, (pid_t)c->args[0], OWN_NICE, &t, NULL);
	if (r < 0)
		return r;
	/* a task with a virtual SCHED_DEADLINE class (syscalls/sys_sched.c)
	 * keeps a mask that covers the host's CPUs (Linux's EBUSY): its call
	 * is made by the sentry with the mask checked, never let run */
	struct task *dl = sc_sched_deadline_task(c, (pid_t)c->args[0]);
	if (r == 0 && !dl)
		return 0; /* native: its own, or the owner rule lets */
	if (r == 0) {
		c->cont = 0;
		t = dl;
		atomic_fetch_add(&t->refs, 1);
	}
	struct aff_arg a = { .sb = c->sb, .len = (unsigned)c->args[1] };
	if (a.len > cpumask_bytes())
		a.len = cpumask_bytes();
	long e = 0;
	if (a.len && sc_read_guest(c, c->args[2], a.mask, a.len) < 0)
		e = -EFAULT;
	else if (dl && !sc_sched_covers_host(c->sb, a.mask, a.len))
		e = -EBUSY;
	if (dl)
		task_put(dl);
	if (e < 0) {
		task_put(t);
		return e;
	}
	return owner_make(c, t, 1, aff_fn, &a, NULL);
}

/* prctl(PR_SCHED_CORE, op, pid, type, uaddr): a task's core scheduling
 * cookie (which tasks may share an SMT core with it) read, made or shared
 * after Linux's ptrace check (PTRACE_MODE_READ_REALCREDS) on the named task
 * and, for CREATE and SHARE_TO of a PIDTYPE_TGID (1) or PIDTYPE_PGID (2),
 * on every thread the call reaches (do_each_pid_thread): every thread of
 * the named task's process, or of every process of its group (of the
 * caller's, pid 0); the guest's init, root's, is of group 1. One host uid
 * passes them all natively (red team 31: a dropped process could pull
 * root's cookie to itself, SHARE_FROM, and run beside it on the sibling
 * thread, or give root's a new one; red team 35: only the named task or
 * each process's leader was checked, so a root thread of a process whose
 * leader alone dropped, and made itself dumpable again, was reached); the
 * check on the virtual ids, then native (the kernel's own answers: EINVAL
 * without core scheduling, for GET and SHARE_FROM of a group, ESRCH). */
struct core_chk {
	struct sc_call *c;
	struct cred s;
	struct pg_collect g;  /* the processes reached (host tgids) */
	int refused;
};

static int core_thread_visit(struct task *t, void *arg)
{
	struct core_chk *k = arg;
	if (atomic_load(&t->exited) || t->vtid <= 0 || t->vtgid == k->c->task->vtgid)
		return 0;     /* gone; its own process: no check */
	size_t i = 0;
	while (i < k->g.ntg && k->g.tg[i] != t->tgid)
		i++;
	if (i == k->g.ntg)
		return 0;
	struct cred d = cred_of_target(k->c->sb, t);
	if (!owner_ok(&k->s, &d, OWN_PTRACE)) {
		k->refused = 1;
		return 1;
	}
	return 0;
}

long sc_sched_core_owner(struct sc_call *c)
{
	pid_t pid = (pid_t)c->args[2];
	/* the kernel's sched_core_share_pid takes an unsigned int command and
	 * an enum type: the low 32 bits (red team 55: CREATE with bit 32 set
	 * was "one task" here, and the kernel applied it to the group) */
	unsigned cmd = (unsigned)c->args[1], type = (unsigned)c->args[3];
	long r = owner_one(c, pid, OWN_PTRACE);
	if (r < 0 || (cmd != 1 /* CREATE */ && cmd != 2 /* SHARE_TO */) ||
	    (type != 1 /* PIDTYPE_TGID */ && type != 2 /* PIDTYPE_PGID */))
		return r; /* one task, or the kernel's EINVAL */
	struct core_chk k = { .c = c, .s = cred_of(c->task), .g = { .c = c } };
	int init_member = 0;
	if (type == 1) {
		struct task *t = pid > 0 ? task_get_vpid(c->sb, pid) : NULL;
		if (!t)
			return r; /* its own process, the guest's init (checked), or the kernel's ESRCH */
		pid_t tg = t->tgid;
		task_put(t);
		k.g.tg = &tg;
		k.g.ntg = 1;
		task_for_each_thread(c->sb, core_thread_visit, &k);
		k.g.tg = NULL;
	} else {
		pid_t pg = 0;
		if (pid > 0 && task_proc_ids(c->sb, pid, &pg, NULL, NULL) < 0)
			return r; /* gone: the kernel's ESRCH */
		pid_t named = pg;
		if (!named && task_proc_ids(c->sb, c->task->vtgid, &named, NULL, NULL) < 0)
			named = 0;
		init_member = named == 1; /* the guest's init's group: init (not in the table) is of it */
		int e = pgw_each(c, pg, pg_leader_visit, &k.g);
		if (e < 0) {
			free(k.g.tg);
			c->cont = 0;
			return e; /* -ENOMEM; -ESRCH: the caller's group is gone */
		}
		if (k.g.ntg)
			task_for_each_thread(c->sb, core_thread_visit, &k);
		free(k.g.tg);
	}
	if (init_member) {
		struct cred init;
		memset(&init, 0, sizeof init); /* the guest's init is root's */
		if (!owner_ok(&k.s, &init, OWN_PTRACE))
			k.refused = 1;
	}
	if (!k.refused)
		return r;
	c->cont = 0;
	snprintf(c->note, sizeof c->note, "PR_SCHED_CORE: %s %d has a thread that is not the caller's",
		 type == 1 ? "process" : "process group", (int)pid);
	return -EPERM;
}
/* the sched_set* owner check (syscalls/sys_sched.c): 0 with c->cont set, or -EPERM */
long sc_owner_nice(struct sc_call *c, pid_t target) { return owner_one(c, target, OWN_NICE); }

/* the ptrace access check of get_robust_list (another task's robust list
 * head: an address of its memory) and kcmp (whether two processes share
 * files, memory, fd tables...): red-team round 5 read a root process's
 * robust list head from a process that dropped root */
struct robust_arg {
	uint64_t head;
	size_t len;
};

static long robust_fn(const pid_t *h, void *arg)
{
	struct robust_arg *a = arg;
	void *head = NULL;
	long r = syscall(SYS_get_robust_list, h[0], &head, &a->len);
	a->head = (uint64_t)(uintptr_t)head;
	return r < 0 ? -errno : r;
}

long sys_get_robust_list(struct sc_call *c)
{
	struct task *t;
	unsigned execs = 0;
	long r = owner_pin(c, (pid_t)c->args[0], OWN_PTRACE, &t, &execs);
	if (r <= 0)
		return r;
	struct robust_arg a = { 0, 0 };
	r = owner_make(c, t, 1, robust_fn, &a, t ? &execs : NULL);
	if (r < 0)
		return r;
	/* as Linux: the length first, then the head */
	if (sc_write_guest(c, c->args[2], &a.len, sizeof a.len) < 0 ||
	    sc_write_guest(c, c->args[1], &a.head, sizeof a.head) < 0)
		return -EFAULT;
	return 0;
}

/* ioctl(pidfd, PIDFD_GET_*_NAMESPACE) (_IO(0xFF, 1..10), Linux 6.11): a
 * namespace fd of the pidfd's process after Linux's ptrace read check,
 * which the host makes against one host uid: a process that dropped root
 * got the fds of root's processes (red team round 11). The check is on the
 * virtual ids, EACCES as Linux, and the request is the sentry's, made on
 * the file it pinned (pidfd_getfd), never natively on the guest's fd number
 * (pin40): before, the process was read from the number's fdinfo, checked,
 * and the call CONTINUE'd, so a thread's dup2 of root's pidfd onto the
 * number after the check (or after a check that found no pidfd there:
 * native ENOTTY) got root's namespace (race_pidfd_ns). The pinned pidfd's
 * task is found by its pidfs inode (pidfs since Linux 6.9, below the
 * request's 6.11) among the sandbox's tasks; the namespace is opened
 * through the guest procfs (<vtid>/ns/<name>) while the reap gate holds
 * that number to that task, and installed O_CLOEXEC, as the kernel's
 * open_namespace. Linux's answers, in its order: not a pidfd ENOTTY, a
 * process gone ESRCH, a nonzero argument EINVAL, the check EACCES. A pidfd
 * of no guest task (a host process's, given as stdio) is EACCES: the
 * guest's own ptrace check on it fails (measured, pts39). */
static const char *const pidfd_ns_names[] = {
	"cgroup", "ipc", "mnt", "net", "pid", "pid_for_children", "time", "time_for_children", "user", "uts",
};

struct pidfs_find {
	dev_t dev;
	ino_t ino;
	struct task *t; /* found (a reference) */
};

static int pidfs_find_one(struct task *t, void *arg)
{
	struct pidfs_find *f = arg;
	struct stat st;
	int own = t->tid == t->tgid ? -1 : (int)syscall(SYS_pidfd_open, (pid_t)t->tid, PIDFD_THREAD);
	int pfd = t->tid == t->tgid ? t->pidfd : own;
	int hit = pfd >= 0 && fstat(pfd, &st) == 0 && st.st_dev == f->dev && st.st_ino == f->ino;
	if (own >= 0)
		close(own);
	if (!hit)
		return 0;
	atomic_fetch_add(&t->refs, 1);
	f->t = t;
	return 1;
}

long sc_pidfd_ns_ioctl(struct sc_call *c)
{
	unsigned nr = (unsigned)c->args[1] & 0xff;
	cleanup_fd int hfd = sc_getfd(c, (int)c->args[0]);
	if (hfd < 0)
		return hfd;
	struct stat st, pst;
	int self = (int)syscall(SYS_pidfd_open, (pid_t)c->task->tid, PIDFD_THREAD);
	int ok = self >= 0 && fstat(self, &pst) == 0 && fstat(hfd, &st) == 0;
	if (self >= 0)
		close(self);
	if (!ok || st.st_dev != pst.st_dev)
		return -ENOTTY; /* not a pidfd (or no pidfs: before the request) */
	struct pidfs_find f = { .dev = st.st_dev, .ino = st.st_ino, .t = NULL };
	/* the number's fdinfo names a candidate (one look), taken only if the
	 * pidfs inode of the pinned file is its: a swap meanwhile names
	 * another, and every thread is walked then (a pidfd opened for each
	 * that is no leader: the cost grew with the sandbox's threads) */
	pid_t hint = pidfd_target(c);
	struct task *h = hint > 0 ? task_get_vpid(c->sb, hint) : NULL;
	if (h)
		pidfs_find_one(h, &f);
	task_put(h);
	if (!f.t)
		task_for_each_thread(c->sb, pidfs_find_one, &f);
	if (!f.t || atomic_load(&f.t->exited)) {
		struct pollfd pf = { .fd = hfd, .events = POLLIN };
		int gone = f.t || poll(&pf, 1, 0) == 1;
		task_put(f.t);
		if (!gone)
			snprintf(c->note, sizeof c->note, "PIDFD_GET_*_NAMESPACE: a pidfd of no guest task");
		return gone ? -ESRCH : -EACCES;
	}
	pid_t vtid = atomic_load(&f.t->vtid);
	long r = c->args[2] ? -EINVAL : owner_one(c, vtid, OWN_PTRACE);
	if (r == 0 && task_reap_hold() < 0)
		r = -EAGAIN;
	else if (r == 0) {
		struct task *now = task_get_vpid(c->sb, vtid);
		char p[64];
		snprintf(p, sizeof p, "%d/ns/%s", (int)vtid, pidfd_ns_names[nr - 1]);
		int ns = now == f.t ? openat(c->sb->guest_procfd, p, O_RDONLY | O_CLOEXEC) : -1;
		r = now != f.t || (ns < 0 && errno == ENOENT) ? -ESRCH : ns < 0 ? -errno : ns;
		task_reap_release();
		task_put(now);
	}
	task_put(f.t);
	if (r < 0)
		return r == -EPERM ? -EACCES : r;
	return sc_return_fd(c, (int)r, 1);
}

/* ioctl(pidfd, PIDFD_GET_INFO) (Linux 6.13: _IOWR(0xFF, 11, struct
 * pidfd_info), any size: an extensible struct): the process's native ids and
 * cgroup, not its virtual ids (red team 31: root-run, a process that
 * dropped root showed ruid/euid 0, what a peer check after SO_PEERPIDFD
 * would trust; and the host cgroup's id). ENOTTY, as Linux before 6.13
 * answers (programs fall back to /proc/<pid>/status, the virtual ids). On
 * any other open fd ENOTTY too, what Linux answers for a request a file does
 * not know, and EBADF for no fd: never the native call after a check of
 * the number (red team 70: a thread's dup2 of a pidfd onto the number of
 * /dev/null after the check showed the native ids within ~700 tries). */
long sc_pidfd_info_ioctl(struct sc_call *c)
{
	if (pidfd_target(c) == -EBADF) {
		int fd = sc_getfd(c, (int)c->args[0]);
		if (fd < 0)
			return fd;
		close(fd);
		return -ENOTTY;
	}
	snprintf(c->note, sizeof c->note, "PIDFD_GET_INFO: the native ids, not the virtual ones");
	return -ENOTTY;
}

/* process_vm_readv/writev: the ptrace access check (owner_one: the same
 * real ids as the target's real, effective and saved ones, a dumpable
 * target, its own threads always), then native (the iovecs are never read)
 * for the caller's own process (an exec of it kills the caller's thread
 * before the new mm is in place) and the guest's init (moat-init: never
 * execs, non-dumpable: the kernel's EPERM). Any other process is copied by
 * the sentry (vm_copy), whatever the sandbox's ids: the check binds to the
 * target's image (Linux's mm_access takes the mm once), and an exec of an
 * exec-only program (Linux's would_dump: not dumpable) may put another image
 * under the pid between the check and the copy — natively the copy would
 * reach it (vmexec: the one-identity sandbox's CONTINUE and the sentry's own
 * copies both did). So the check is made inside the target group's copy
 * guard (task_io_begin: no exec of the group runs while it is held) with
 * the group's exec count (task_io_execs), and every chunk's access inside
 * another guard: a count moved means an exec ran since, and the copy stops
 * there (EPERM when nothing was copied: the mm Linux would have taken is
 * gone). The caller's side goes through the copy guard (its call's
 * ID_VALID), the target's by its host pid while the reap gate is held and
 * its pidfd says it has not exited (kernel/task.h: no number of a live task
 * is freed while a worker holds the gate), 64 KiB at a time. As Linux: the
 * count copied up to the first fault (EFAULT when none), at most IOV_MAX
 * iovecs each side, flags 0. */
enum { VM_CHUNK = 64 * 1024, VM_IOV_MAX = 1024 };
#define VM_RW_MAX 0x7ffff000ull          /* MAX_RW_COUNT: INT_MAX & PAGE_MASK */

/* tests: MOAT_TEST_PTRACE_CHECK_DELAY=MS (read by the pipeline at start):
 * process_vm_* sleeps MS between its ptrace check and its copy, as a worker
 * preempted there (0: off) */
int sc_test_vm_check_delay_ms;

struct vm_iov {
	uint64_t base, len;
};

/* one access to t's memory at addr, len <= VM_CHUNK: bytes moved or -errno;
 * -EPERM when an exec of t's group ran since the check (execs moved) */
static long vm_remote(struct task *t, unsigned execs, int write, void *buf, uint64_t addr, size_t len)
{
	if (task_io_begin(t, -1, 0) < 0)
		return -EAGAIN; /* an exec of the group held past 3 s */
	if (task_io_execs(t) != execs) {
		task_io_end(t);
		return -EPERM; /* another image may be under the pid */
	}
	if (task_reap_hold() < 0) {
		task_io_end(t);
		return -EAGAIN;
	}
	long r;
	struct pollfd pf = { .fd = t->pidfd, .events = POLLIN };
	if (t->pidfd < 0 || atomic_load(&t->exited) || atomic_load(&t->reaped) || poll(&pf, 1, 0) != 0) {
		r = -ESRCH; /* exited (readable), or no handle: never by number alone */
	} else {
		struct iovec l = { buf, len }, rv = { (void *)(uintptr_t)addr, len };
		r = write ? process_vm_writev(t->tgid, &l, 1, &rv, 1, 0) : process_vm_readv(t->tgid, &l, 1, &rv, 1, 0);
		if (r < 0)
			r = -errno;
	}
	task_reap_release();
	task_io_end(t);
	return r;
}

static long vm_copy(struct sc_call *c, struct task *t, unsigned execs, int write)
{
	/* Linux's types: the local count goes through import_iovec's
	 * unsigned (32 bits), the remote one stays an unsigned long */
	unsigned long lcnt = (unsigned)c->args[2], rcnt = c->args[4];
	if (c->args[5])
		return -EINVAL;
	if (lcnt > VM_IOV_MAX || rcnt > VM_IOV_MAX)
		return -EINVAL;
	cleanup_free struct vm_iov *lv = xmalloc((lcnt + 1) * sizeof *lv);
	cleanup_free struct vm_iov *rv = xmalloc((rcnt + 1) * sizeof *rv);
	/* Linux's order (process_vm_rw, as Linux 6.18 answers): the local
	 * vector is copied and checked (a length past SSIZE_MAX EINVAL, a
	 * total past it EFAULT, the total cut at MAX_RW_COUNT), then the
	 * remote one (a length past SSIZE_MAX EINVAL; its total is not
	 * checked). Review 34: any total past SSIZE_MAX was EINVAL, and
	 * nothing cut the local total. */
	if (lcnt && sc_read_guest(c, c->args[1], lv, lcnt * sizeof *lv) < 0)
		return -EFAULT;
	for (unsigned long i = 0; i < lcnt; i++)
		if (lv[i].len > (uint64_t)SSIZE_MAX)
			return -EINVAL;
	uint64_t ltot = 0, lsum = 0;
	for (unsigned long i = 0; i < lcnt; i++) {
		if (__builtin_add_overflow(lsum, lv[i].len, &lsum) || lsum > (uint64_t)SSIZE_MAX)
			return -EFAULT;
		if (lv[i].len > VM_RW_MAX - ltot)
			lv[i].len = VM_RW_MAX - ltot;
		ltot += lv[i].len;
	}
	if (rcnt && sc_read_guest(c, c->args[3], rv, rcnt * sizeof *rv) < 0)
		return -EFAULT;
	for (unsigned long i = 0; i < rcnt; i++)
		if (rv[i].len > (uint64_t)SSIZE_MAX)
			return -EINVAL;
	if (sc_test_vm_check_delay_ms) {
		if (guestmem_test_block)
			guestmem_test_block(); /* another worker takes the lead */
		usleep((useconds_t)sc_test_vm_check_delay_ms * 1000);
	}
	cleanup_free char *buf = xmalloc(VM_CHUNK);
	unsigned long li = 0, ri = 0;
	uint64_t lo = 0, ro = 0;
	long done = 0, err = 0;
	while (li < lcnt && ri < rcnt) {
		if (lv[li].len == lo) {
			li++, lo = 0;
			continue;
		}
		if (rv[ri].len == ro) {
			ri++, ro = 0;
			continue;
		}
		size_t n = VM_CHUNK;
		if (n > lv[li].len - lo)
			n = (size_t)(lv[li].len - lo);
		if (n > rv[ri].len - ro)
			n = (size_t)(rv[ri].len - ro);
		long m;
		if (write) {
			if (sc_read_guest(c, lv[li].base + lo, buf, n) < 0) {
				err = -EFAULT;
				break;
			}
			m = vm_remote(t, execs, 1, buf, rv[ri].base + ro, n);
		} else {
			m = vm_remote(t, execs, 0, buf, rv[ri].base + ro, n);
			if (m > 0 && sc_write_guest(c, lv[li].base + lo, buf, (size_t)m) < 0) {
				err = -EFAULT;
				break;
			}
		}
		if (m < 0) {
			err = m;
			break;
		}
		done += m;
		lo += (uint64_t)m;
		ro += (uint64_t)m;
		if ((size_t)m < n)
			break; /* a fault in the target: partial */
	}
	return done > 0 ? done : err;
}

/* The ptrace access check of another process at a known image: inside a
 * guard of *tp's group, the task the pid names now (a non-leader's exec
 * re-keys it) checked, *execs its group's exec count. 0 (*tp may be
 * replaced: the caller puts it), -EPERM, -ESRCH or -EAGAIN. */
static long ptrace_check_at_image(struct sc_call *c, pid_t target, struct task **tp, unsigned *execs)
{
	struct task *t = *tp;
	if (task_io_begin(t, -1, 0) < 0)
		return -EAGAIN;
	struct task *n = task_get_vpid(c->sb, target);
	long r = 0;
	if (!n || n->tgid != t->tgid || atomic_load(&n->exited)) {
		r = -ESRCH;
	} else {
		*execs = task_io_execs(t);
		struct cred s = cred_of(c->task), d = cred_of_target(c->sb, n);
		if (n->vtgid != c->task->vtgid && !owner_ok(&s, &d, OWN_PTRACE))
			r = -EPERM;
	}
	task_io_end(t);
	if (n && r == 0) {
		task_put(t);
		*tp = n;
	} else if (n) {
		task_put(n);
	}
	return r;
}

static long vm_call(struct sc_call *c, int write)
{
	pid_t target = (pid_t)c->args[0];
	long r = owner_one(c, target, OWN_PTRACE);
	if (!c->cont || target <= 0 || target == c->task->vtgid || target == 1)
		return r; /* refused, the kernel's EINVAL/ESRCH, its own process, or the init */
	struct task *t = task_get_vpid(c->sb, target);
	if (t && t->tgid == c->task->tgid && sc_pid_reuse_harmless(c)) {
		task_put(t);
		return r; /* a thread of its own process (an exec kills the caller
			   * first), its tid nobody else's if reused: native */
	}
	c->cont = 0;
	if (!t)
		return -ESRCH; /* a process forked there later is not checked */
	unsigned execs = 0;
	r = ptrace_check_at_image(c, target, &t, &execs);
	if (r == 0)
		r = vm_copy(c, t, execs, write);
	task_put(t);
	if (r == -EPERM)
		snprintf(c->note, sizeof c->note, "task %d is not the caller's (or it exec'd)", (int)target);
	else
		snprintf(c->note, sizeof c->note, "copied by the sentry");
	return r;
}

long sys_process_vm_readv(struct sc_call *c) { return vm_call(c, 0); }
long sys_process_vm_writev(struct sc_call *c) { return vm_call(c, 1); }

/* kcmp: both tasks checked; made by the sentry on both when either is
 * another process's (or a sibling thread) in a sandbox where reuse is not
 * harmless. KCMP_EPOLL_TFD's slot (idx2: a pointer) is the sentry's copy;
 * unreadable, a NULL one gives the kernel's EFAULT in its own order. */
struct kcmp_arg {
	long type;
	unsigned long idx1, idx2;
	uint32_t slot[3];
};

static long kcmp_fn(const pid_t *h, void *arg)
{
	struct kcmp_arg *a = arg;
	long r = syscall(SYS_kcmp, h[0], h[1], a->type, a->idx1, a->idx2);
	return r < 0 ? -errno : r;
}

long sys_kcmp(struct sc_call *c)
{
	pid_t p[2] = { (pid_t)c->args[0], (pid_t)c->args[1] };
	struct task *t[2] = { NULL, NULL };
	long r = owner_check(c, p[0], OWN_PTRACE, &t[0]);
	if (r >= 0)
		r = owner_check(c, p[1], OWN_PTRACE, &t[1]);
	int other = pid_other(c, p[0]) || pid_other(c, p[1]);
	if (r < 0 || !other || p[0] <= 0 || p[1] <= 0 || p[0] == 1 || p[1] == 1 ||
	    (owner_native(c, p[0], OWN_PTRACE) && owner_native(c, p[1], OWN_PTRACE))) {
		/* refused, or native: its own, pid 0 (the kernel's ESRCH), the
		 * guest's init (not dumpable: EPERM) */
		task_put(t[0]);
		task_put(t[1]);
		if (r >= 0 && other)
			pidcall_test_delay();
		return r;
	}
	c->cont = 0;
	if (!t[0] || !t[1]) {
		/* a number no task holds (not left to the kernel: a task
		 * forked onto it meanwhile would be compared unchecked) */
		task_put(t[0]);
		task_put(t[1]);
		pidcall_test_delay();
		return -ESRCH;
	}
	struct kcmp_arg a = { .type = (long)(int)c->args[2], .idx1 = c->args[3], .idx2 = c->args[4] };
	if (a.type == 7 /* KCMP_EPOLL_TFD */)
		a.idx2 = sc_read_guest(c, c->args[4], a.slot, sizeof a.slot) < 0 ? 0 : (unsigned long)(uintptr_t)a.slot;
	/* each check bound to its task's image (vmexec): natively, an exec of
	 * a program the caller may not read after the check had the new
	 * image's files, mm... compared */
	unsigned execs[2] = { 0, 0 };
	for (int i = 0; i < 2 && r >= 0; i++)
		r = ptrace_check_at_image(c, p[i], &t[i], &execs[i]);
	if (r >= 0 && sc_test_vm_check_delay_ms) {
		if (guestmem_test_block)
			guestmem_test_block(); /* another worker takes the lead */
		usleep((useconds_t)sc_test_vm_check_delay_ms * 1000);
	}
	if (r >= 0)
		r = pin_act(t, 2, 1, kcmp_fn, &a, execs);
	task_put(t[0]);
	task_put(t[1]);
	pidcall_test_delay();
	snprintf(c->note, sizeof c->note, "made by the sentry (the sandbox has other ids)");
	return r;
}

/* setpriority and ioprio_set: which names a process (owner_one), a process
 * group or a user (prio_group), by each call's own numbers; anything else
 * runs natively for the kernel's EINVAL. */
static long prio_set(struct sc_call *c, int process, int pgrp, int user, enum owner_rule kind)
{
	int which = (int)c->args[0], who = (int)c->args[1];

	if (which == process) {
		struct task *t;
		long r = owner_pin(c, who, kind, &t, NULL);
		if (r <= 0)
			return r;
		struct prio_arg a = { .sb = c->sb, .nr = kind == OWN_NICE ? SYS_setpriority : SYS_ioprio_set,
				      .prio = (int)c->args[2] };
		return owner_make(c, t, 1, prio_fn, &a, NULL);
	}
	if (which == pgrp || which == user) {
		struct prio_arg a = { .sb = c->sb, .nr = kind == OWN_NICE ? SYS_setpriority : SYS_ioprio_set,
				      .prio = (int)c->args[2] };
		return prio_group(c, which == user, who, kind, &a);
	}
	c->cont = 1;
	return 0;
}

long sys_setpriority(struct sc_call *c)
{
	return prio_set(c, 0 /* PRIO_PROCESS */, 1 /* PRIO_PGRP */, 2 /* PRIO_USER */, OWN_NICE);
}

long sys_ioprio_set(struct sc_call *c)
{
	return prio_set(c, 1 /* IOPRIO_WHO_PROCESS */, 2 /* IOPRIO_WHO_PGRP */, 3 /* IOPRIO_WHO_USER */,
			OWN_IOPRIO);
}

/* pidfd_getfd: another guest process's fd, with Linux's rule on the
 * virtual ids (PTRACE_MODE_ATTACH_REALCREDS: the same real, effective and
 * saved ids; CAP_SYS_PTRACE is never granted). The sentry takes the fd
 * through its own handle on the task (task_getfd) and installs it
 * close-on-exec, as Linux does; the guest's init (pid 1, moat-init) holds
 * nothing the guest may have: EPERM. */
long sys_pidfd_getfd(struct sc_call *c)
{
	int tfd = (int)c->args[1];

	if ((unsigned)c->args[2]) /* flags: the kernel's unsigned int */
		return -EINVAL;
	pid_t pid = pidfd_target(c);
	if (pid < 0)
		return pid;
	if (pid == 0)
		return -EBADF;
	if (pid == 1)
		return -EPERM;
	struct task *t = task_get_vpid(c->sb, pid);
	if (!t || atomic_load(&t->exited)) {
		if (t)
			task_put(t);
		return -ESRCH;
	}
	/* another process's: the check and the fetch in one exec guard of
	 * it (vmexec: an exec of a program the caller may not read between
	 * them would hand over the new image's fds; a leader an exec
	 * replaced is exited by then) */
	int other = t->tgid != c->task->tgid;
	if (other && task_io_begin(t, -1, 0) < 0) {
		task_put(t);
		return -EAGAIN;
	}
	struct cred s = cred_of(c->task), d = cred_of_target(c->sb, t);
	long refused = atomic_load(&t->exited) ? -ESRCH : 0;
	if (!refused && t->vtgid != c->task->vtgid && !owner_ok(&s, &d, OWN_PTRACE))
		refused = -EPERM;
	if (!refused && other && sc_test_vm_check_delay_ms) {
		if (guestmem_test_block)
			guestmem_test_block();
		usleep((useconds_t)sc_test_vm_check_delay_ms * 1000); /* (in the guard: an exec waits) */
	}
	int hf = refused ? (int)refused : task_getfd(t, tfd);
	if (other)
		task_io_end(t);
	task_put(t);
	if (refused)
		return refused;
	if (hf < 0)
		return hf == -EPERM ? -EPERM : -EBADF;
	return sc_return_fd(c, hf, 1);
}

/* ---- RLIMIT_CORE: virtual (red team 19) ----
 * The real RLIMIT_CORE of every guest task is {1, 1} (pinned by the tracer
 * before the program runs): too small for a core file, and the value Linux
 * takes as "no pipe dump" (0 is not: a pipe core_pattern ignores it). A
 * dump that skips the tracer's signal-delivery stop (SA_IMMUTABLE: a
 * seccomp RET_KILL_PROCESS of the guest's own filter, a forced SIGSEGV of
 * syscall user dispatch) still finds 1. What the guest sets and reads is
 * the process's virtual value (task vcore_*, a copy in every thread, set
 * together), checked as Linux's do_prlimit checks it: cur <= max, and a
 * raised hard limit needs CAP_SYS_RESOURCE of the initial namespace, which
 * no guest task has. getrlimit/setrlimit/prlimit64 of RLIMIT_CORE are
 * trapped for it (the table's ARGTRAP rows), never native. */
#define VCORE_RES 4 /* RLIMIT_CORE */

struct vcore_set {
	pid_t tgid;
	uint64_t cur, max;
};

static int vcore_visit(struct task *t, void *arg)
{
	struct vcore_set *s = arg;
	if (t->tgid == s->tgid) {
		pthread_mutex_lock(&t->lock);
		t->vcore_cur = s->cur;
		t->vcore_max = s->max;
		pthread_mutex_unlock(&t->lock);
	}
	return 0;
}

/* do_prlimit of RLIMIT_CORE on t's process: nw (may be NULL) checked and
 * set, the value before it in *old (may be NULL) */
static long vcore_prlimit(struct sc_call *c, struct task *t, const uint64_t nw[2], uint64_t old[2])
{
	uint64_t cur[2];
	pthread_mutex_lock(&t->lock);
	cur[0] = t->vcore_cur;
	cur[1] = t->vcore_max;
	pthread_mutex_unlock(&t->lock);
	if (nw) {
		if (nw[0] > nw[1])
			return -EINVAL;
		if (nw[1] > cur[1])
			return -EPERM;
		struct vcore_set s = { .tgid = t->tgid, .cur = nw[0], .max = nw[1] };
		task_for_each_thread(c->sb, vcore_visit, &s);
	}
	if (old) {
		old[0] = cur[0];
		old[1] = cur[1];
	}
	return 0;
}

long sys_getrlimit(struct sc_call *c)
{
	if ((uint32_t)c->args[0] != VCORE_RES) { /* the kernel takes an unsigned int */
		c->cont = 1;
		return 0;
	}
	uint64_t old[2];
	vcore_prlimit(c, c->task, NULL, old);
	return sc_write_guest(c, c->args[1], old, sizeof old) < 0 ? -EFAULT : 0;
}

long sys_setrlimit(struct sc_call *c)
{
	if ((uint32_t)c->args[0] != VCORE_RES) { /* the kernel takes an unsigned int */
		c->cont = 1;
		return 0;
	}
	uint64_t nw[2];
	if (sc_read_guest(c, c->args[1], nw, sizeof nw) < 0)
		return -EFAULT;
	return vcore_prlimit(c, c->task, nw, NULL);
}

struct rl_arg {
	struct sandbox *sb;
	unsigned res;
	int has_new, want_old;
	uint64_t nw[2], old[2];
};

/* prlimit64 of another process: a read by the sentry (its filter lets it
 * read any process's limits), a set made by the guest's init (its filter
 * lets it set its own only: red team 72, rootless RLIMIT_CPU 0 was a
 * SIGKILL of any of the caller's processes past the Landlock signal scope,
 * and a lowered RLIMIT_NOFILE, RLIMIT_AS or RLIMIT_NPROC their next open,
 * allocation or fork refused; initrows for the four the kernel enforces
 * with a signal, initrows2 for the rest) */
/* A guest socket's bind (hfd pinned, sa the copy) made by the guest's init
 * where no moat-netd runs (sentry/netconn.c reuse_dobind): the sentry's own
 * filter has no bind, so that a compromised sentry cannot name a socket of
 * the host's network namespace it takes from the guest (the caller's stdio)
 * with an abstract name of the host's. The init binds only a socket of its
 * own namespace, the guest's, and never to an AF_UNIX path. */
long init_act_bind(struct sandbox *sb, int hfd, const void *sa, size_t len)
{
	struct init_act_req q = { .nr = SYS_bind, .len = (uint32_t)len };
	struct init_act_rep p;
	if (len > sizeof(struct sockaddr_storage))
		return -EINVAL;
	memcpy(q.buf, sa, len);
	long r = init_act_call_fd(sb, &q, hfd, &p);
	return r == -ESRCH ? -EPERM : r; /* ESRCH: the init is gone, the sandbox ends */
}

static long rl_fn(const pid_t *h, void *arg)
{
	struct rl_arg *a = arg;
	if (!a->has_new) {
		long r = syscall(SYS_prlimit64, h[0], a->res, NULL, a->want_old ? a->old : NULL);
		return r < 0 ? -errno : r;
	}
	struct init_act_req q = { .nr = SYS_prlimit64, .a = a->res, .len = sizeof a->nw,
				  .flags = INIT_ACT_NEW | (a->want_old ? INIT_ACT_OLD : 0) };
	struct init_act_rep p;
	memcpy(q.buf, a->nw, sizeof a->nw);
	long r = sc_init_make(a->sb, h, &q, &p);
	if (r == 0 && a->want_old)
		memcpy(a->old, p.old, sizeof a->old);
	return r;
}

long sys_prlimit64(struct sc_call *c)
{
	pid_t pid = (pid_t)c->args[0];
	if ((uint32_t)c->args[1] != VCORE_RES) { /* unsigned int: upper bits ignored */
		struct task *t;
		long r = owner_pin(c, pid, OWN_RLIMIT, &t, NULL);
		if (r <= 0)
			return r;
		/* as Linux: the new limits read first, the old written last
		 * (after the change) */
		struct rl_arg a = { .sb = c->sb, .res = (unsigned)c->args[1], .has_new = c->args[2] != 0,
				    .want_old = c->args[3] != 0 };
		if (a.has_new && sc_read_guest(c, c->args[2], a.nw, sizeof a.nw) < 0) {
			task_put(t);
			return -EFAULT;
		}
		/* a set made by the guest's init, by the number in the guest's
		 * pid namespace, still held (rl_fn; before initrows the four
		 * signalling limits were EPERM in any sandbox of more than one
		 * identity) */
		r = owner_make(c, t, 0, rl_fn, &a, NULL); /* the process's limits: by its tgid */
		if (r == 0 && a.want_old && sc_write_guest(c, c->args[3], a.old, sizeof a.old) < 0)
			r = -EFAULT;
		return r;
	}
	uint64_t nw[2], old[2];
	if (c->args[2] && sc_read_guest(c, c->args[2], nw, sizeof nw) < 0)
		return -EFAULT;
	if (pid < 0)
		return -ESRCH;
	/* a reference whatever it names, the caller's own thread too (that
	 * one was never put: a thread naming itself was kept, its pidfd and
	 * fs with it, fuzz87) */
	struct task *t = task_get_named(c->sb, c->task, pid);
	if (!t)
		return pid == 1 ? -EPERM : -ESRCH; /* the guest's init: not the guest's */
	if (t->vtgid != c->task->vtgid) {
		struct cred s = cred_of(c->task), d = cred_of_target(c->sb, t);
		if (!owner_ok(&s, &d, OWN_RLIMIT)) {
			task_put(t);
			snprintf(c->note, sizeof c->note, "task %d is not the caller's", (int)pid);
			return -EPERM;
		}
	}
	long r = vcore_prlimit(c, t, c->args[2] ? nw : NULL, old);
	task_put(t);
	if (r == 0 && c->args[3] && sc_write_guest(c, c->args[3], old, sizeof old) < 0)
		r = -EFAULT;
	return r;
}
