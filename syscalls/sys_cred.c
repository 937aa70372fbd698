/* syscalls/sys_cred.c - identity: the get/set*id family, groups,
 * capget/capset, the capability prctls, uname, sethostname, setdomainname.
 *
 * Every call acts on the calling task's virtual credentials (kernel/cred.h:
 * Linux's transition rules), never on the host's: the guest's native ids do
 * not change. Credentials are per task (thread), as in Linux; glibc's setxid
 * broadcast makes every thread issue the call itself, and every thread's
 * call is trapped here. Small fixed inputs a handler needs (a group list, a
 * capability header and data, a host name) are read once into the handler's
 * own copy and decided on that copy.
 */
#include <errno.h>
#include <linux/capability.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/timex.h>
#include <sys/utsname.h>

#include "kernel/cred.h"
#include "kernel/task.h"
#include "syscalls/handlers.h"
#include "syscalls/sc.h"

#define ID(c, i) ((uint32_t)(c)->args[i])
#define LOCKED(t, expr) ({ pthread_mutex_lock(&(t)->lock); long r_ = (expr); \
			   pthread_mutex_unlock(&(t)->lock); r_; })

/* a change of the caller's ids: SO_PASSCRED's native credentials stop
 * being true once any task's ids differ from the native ones (setfs*id
 * return the old id: passcred_ids_changed looks at the ids themselves) */
/* A change that makes the thread non-dumpable (dump_note: commit_creds's
 * rule) makes its process so (Linux's flag is the mm's): the leader is
 * marked too, and the checks read either (task_nondump). The flag is
 * cleared around the change to tell a change now from an old one. */
#define SETID(c, expr) ({ struct task *t_ = (c)->task;                        \
	pthread_mutex_lock(&t_->lock);                                         \
	int nd0_ = t_->cred.nondump;                                           \
	t_->cred.nondump = 0;                                                  \
	long r2_ = (expr);                                                     \
	int nd1_ = t_->cred.nondump;                                           \
	t_->cred.nondump = nd0_ | nd1_;                                        \
	if (nd1_)                                                              \
		atomic_store(&t_->pdeathsig, 0); /* commit_creds's too */      \
	pthread_mutex_unlock(&t_->lock);                                       \
	if (nd1_)                                                              \
		task_mark_nondump((c)->sb, t_);                                \
	passcred_ids_changed(c); r2_; })

long sys_getuid(struct sc_call *c) { return LOCKED(c->task, c->task->cred.ruid); }
long sys_geteuid(struct sc_call *c) { return LOCKED(c->task, c->task->cred.euid); }
long sys_getgid(struct sc_call *c) { return LOCKED(c->task, c->task->cred.rgid); }
long sys_getegid(struct sc_call *c) { return LOCKED(c->task, c->task->cred.egid); }

long sys_setuid(struct sc_call *c) { return SETID(c, cred_setuid(&c->task->cred, ID(c, 0))); }
long sys_setgid(struct sc_call *c) { return SETID(c, cred_setgid(&c->task->cred, ID(c, 0))); }
long sys_setreuid(struct sc_call *c)
{
	return SETID(c, cred_setreuid(&c->task->cred, ID(c, 0), ID(c, 1)));
}
long sys_setregid(struct sc_call *c)
{
	return SETID(c, cred_setregid(&c->task->cred, ID(c, 0), ID(c, 1)));
}
long sys_setresuid(struct sc_call *c)
{
	return SETID(c, cred_setresuid(&c->task->cred, ID(c, 0), ID(c, 1), ID(c, 2)));
}
long sys_setresgid(struct sc_call *c)
{
	return SETID(c, cred_setresgid(&c->task->cred, ID(c, 0), ID(c, 1), ID(c, 2)));
}
long sys_setfsuid(struct sc_call *c) { return SETID(c, cred_setfsuid(&c->task->cred, ID(c, 0))); }
long sys_setfsgid(struct sc_call *c) { return SETID(c, cred_setfsgid(&c->task->cred, ID(c, 0))); }

static long getres(struct sc_call *c, int gid)
{
	uint32_t v[3];
	pthread_mutex_lock(&c->task->lock);
	const struct cred *cr = &c->task->cred;
	v[0] = gid ? cr->rgid : cr->ruid;
	v[1] = gid ? cr->egid : cr->euid;
	v[2] = gid ? cr->sgid : cr->suid;
	pthread_mutex_unlock(&c->task->lock);
	for (int i = 0; i < 3; i++)
		if (sc_write_guest(c, c->args[i], &v[i], sizeof v[i]) < 0)
			return -EFAULT;
	return 0;
}
long sys_getresuid(struct sc_call *c) { return getres(c, 0); }
long sys_getresgid(struct sc_call *c) { return getres(c, 1); }

long sys_getgroups(struct sc_call *c)
{
	int size = (int)c->args[0];
	struct cred cr;
	long r;

	if (size < 0)
		return -EINVAL;
	pthread_mutex_lock(&c->task->lock);
	cred_copy(&cr, &c->task->cred);
	pthread_mutex_unlock(&c->task->lock);
	r = cred_ngroups(&cr);
	if (size && r) {
		if (size < r)
			r = -EINVAL;
		else if (sc_write_guest(c, c->args[1], cr.groups->g, (size_t)r * sizeof(gid_t)) < 0)
			r = -EFAULT;
	}
	cred_free(&cr);
	return r;
}

long sys_setgroups(struct sc_call *c)
{
	int n = (int)c->args[0];
	gid_t *g = NULL;
	long r;

	/* Linux's order: the capability, then the count (review 34) */
	pthread_mutex_lock(&c->task->lock);
	int cap = cred_capable(&c->task->cred, CRED_CAP_SETGID);
	pthread_mutex_unlock(&c->task->lock);
	if (!cap)
		return -EPERM;
	if (n < 0 || n > CRED_NGROUPS_MAX)
		return -EINVAL;
	if (n) {
		g = malloc((size_t)n * sizeof *g);
		if (!g)
			return -ENOMEM;
		if (sc_read_guest(c, c->args[1], g, (size_t)n * sizeof *g) < 0) {
			free(g);
			return -EFAULT;
		}
	}
	r = LOCKED(c->task, cred_setgroups(&c->task->cred, n, g));
	free(g);
	return r;
}

/* ---- capabilities ---- */

static int cap_header(struct sc_call *c, struct __user_cap_header_struct *h, int *words)
{
	if (sc_read_guest(c, c->args[0], h, sizeof *h) < 0)
		return -EFAULT;
	switch (h->version) {
	case _LINUX_CAPABILITY_VERSION_1: *words = 1; return 0;
	case _LINUX_CAPABILITY_VERSION_2:
	case _LINUX_CAPABILITY_VERSION_3: *words = 2; return 0;
	default: break;
	}
	h->version = _LINUX_CAPABILITY_VERSION_3;
	if (sc_write_guest(c, c->args[0], &h->version, sizeof h->version) < 0)
		return -EFAULT;
	return -EINVAL;
}

long sys_capget(struct sc_call *c)
{
	struct __user_cap_header_struct h;
	struct __user_cap_data_struct d[2];
	struct cred cr;
	int words, r = cap_header(c, &h, &words);

	/* a version probe: NULL data and an unknown version is 0, the version
	 * written (Linux's capget; review 34: EINVAL) */
	if (r == -EINVAL && !c->args[1])
		return 0;
	if (r < 0)
		return r;
	if (!c->args[1])
		return 0; /* a version probe */
	if (h.pid < 0)
		return -EINVAL;
	struct task *t = c->task;
	int other = h.pid && h.pid != t->vtid;
	if (other && !(t = task_get_vpid(c->sb, h.pid)))
		return -ESRCH;
	pthread_mutex_lock(&t->lock);
	cred_copy(&cr, &t->cred);
	pthread_mutex_unlock(&t->lock);
	if (other)
		task_put(t);
	for (int i = 0; i < 2; i++) {
		d[i].effective = (uint32_t)(cr.cap_eff >> (32 * i));
		d[i].permitted = (uint32_t)(cr.cap_prm >> (32 * i));
		d[i].inheritable = (uint32_t)(cr.cap_inh >> (32 * i));
	}
	cred_free(&cr);
	return sc_write_guest(c, c->args[1], d, (size_t)words * sizeof d[0]) < 0 ? -EFAULT : 0;
}

long sys_capset(struct sc_call *c)
{
	struct __user_cap_header_struct h;
	struct __user_cap_data_struct d[2];
	int words, r = cap_header(c, &h, &words);

	if (r < 0)
		return r;
	if (h.pid && h.pid != c->task->vtid)
		return -EPERM;
	memset(d, 0, sizeof d);
	if (sc_read_guest(c, c->args[1], d, (size_t)words * sizeof d[0]) < 0)
		return -EFAULT;
	uint64_t e = d[0].effective | (uint64_t)d[1].effective << 32;
	uint64_t p = d[0].permitted | (uint64_t)d[1].permitted << 32;
	uint64_t i = d[0].inheritable | (uint64_t)d[1].inheritable << 32;
	/* bits past the last capability are ignored, as in Linux */
	e &= CRED_CAP_ALL; p &= CRED_CAP_ALL; i &= CRED_CAP_ALL;
	return LOCKED(c->task, cred_capset(&c->task->cred, e, p, i));
}

/* prctl: only the options ARGTRAP(prctl) sends here (capabilities, securebits,
 * dumpable, no_new_privs, seccomp, core scheduling, the parent-death signal). */
/* Installing a seccomp filter (prctl PR_SET_SECCOMP or seccomp
 * SECCOMP_SET_MODE_FILTER): Linux needs no_new_privs or CAP_SYS_ADMIN,
 * which the guest's virtual credentials decide (the host's no_new_privs is
 * always set); allowed, it runs natively. Refused, the errors Linux gives
 * first: unknown flags EINVAL, an unreadable sock_fprog EFAULT, a length
 * out of range EINVAL; then EACCES.
 *
 * A program that may return SECCOMP_RET_TRACE is refused too (EINVAL, as
 * a program the kernel does not take; red team 88). The guest never has a
 * tracer of its own (ptrace is EPERM), so such a return means ENOSYS on
 * Linux; here the sandbox's RET_USER_NOTIF outranks it (the kernel keeps
 * the filters' strictest action, and USER_NOTIF is stricter than TRACE),
 * and on the exec rows the sandbox's own RET_TRACE ties with it: the
 * sentry emulated or continued the call, and ran the exec, that the
 * guest's own filter refused. Nothing tells the sentry which filter
 * answered, so the confinement asked for could not hold: refused. A return
 * of the accumulator (BPF_RET | BPF_A) may be any action: refused as well.
 * The program is read here and again by the kernel after the CONTINUE: a
 * thread that swaps it meanwhile weakens only the filter being installed,
 * which that thread is not yet under (sc_cont_rows). */
#define SECCOMP_FILTER_FLAGS_ 0x3fUL /* TSYNC ... WAIT_KILLABLE_RECV */
#define SECCOMP_FLAG_TSYNC_ 1UL
#define SECCOMP_FLAG_NEW_LISTENER_ 8UL
#define SECCOMP_FLAG_TSYNC_ESRCH_ 16UL
#define SECCOMP_FLAG_WAIT_KILLABLE_RECV_ 32UL

/* 1 when one of the program's n instructions at addr may return
 * SECCOMP_RET_TRACE, 0 if none, -EFAULT */
static int filter_may_trace(struct sc_call *c, uint64_t addr, unsigned n)
{
	struct {
		uint16_t code;
		uint8_t jt, jf;
		uint32_t k;
	} ins[256];
	for (unsigned i = 0; i < n;) {
		unsigned m = n - i < 256 ? n - i : 256;
		if (sc_read_guest(c, addr + (uint64_t)i * sizeof ins[0], ins, m * sizeof ins[0]) < 0)
			return -EFAULT;
		for (unsigned j = 0; j < m; j++) {
			if ((ins[j].code & 0x07) != 0x06 /* BPF_RET */)
				continue;
			if ((ins[j].code & 0x18) != 0x00 /* BPF_K */)
				return 1; /* BPF_A: any action */
			if ((ins[j].k & 0xffff0000U) == 0x7ff00000U /* SECCOMP_RET_TRACE */)
				return 1;
		}
		i += m;
	}
	return 0;
}

static long filter_install(struct sc_call *c, unsigned long flags, uint64_t prog)
{
	struct task *t = c->task;
	pthread_mutex_lock(&t->lock);
	int ok = t->cred.nnp || cred_capable(&t->cred, CRED_CAP_SYS_ADMIN);
	pthread_mutex_unlock(&t->lock);
	if (flags & ~SECCOMP_FILTER_FLAGS_)
		return -EINVAL;
	/* seccomp_set_mode_filter's flag rules, before it reads the program */
	if ((flags & SECCOMP_FLAG_TSYNC_) && (flags & SECCOMP_FLAG_NEW_LISTENER_) &&
	    !(flags & SECCOMP_FLAG_TSYNC_ESRCH_))
		return -EINVAL;
	if ((flags & SECCOMP_FLAG_WAIT_KILLABLE_RECV_) && !(flags & SECCOMP_FLAG_NEW_LISTENER_))
		return -EINVAL;
	struct {
		unsigned short len;
		uint64_t filter;
	} fp;
	if (sc_read_guest(c, prog, &fp, sizeof fp) < 0)
		return -EFAULT;
	if (fp.len == 0 || fp.len > 4096 /* BPF_MAXINSNS */)
		return -EINVAL;
	if (!ok)
		return -EACCES;
	int tr = filter_may_trace(c, fp.filter, fp.len);
	if (tr < 0)
		return tr;
	if (tr) {
		snprintf(c->note, sizeof c->note, "the program may return RET_TRACE");
		return -EINVAL;
	}
	c->cont = 1;
	return 0;
}

long sys_seccomp(struct sc_call *c)
{
	/* op and flags are the kernel's unsigned ints (the low 32 bits): red
	 * team 55, an op with bit 32 set was another op here and ran natively
	 * as SET_MODE_FILTER, past the no_new_privs check */
	if ((uint32_t)c->args[0] == 1 /* SECCOMP_SET_MODE_FILTER */)
		return filter_install(c, (uint32_t)c->args[1], c->args[2]);
	c->cont = 1;
	return 0;
}

long sys_prctl(struct sc_call *c)
{
	int op = (int)c->args[0];
	unsigned long a2 = c->args[1], a3 = c->args[2], a4 = c->args[3], a5 = c->args[4];
	struct task *t = c->task;
	struct cred *cr = &t->cred;
	long r;

	if (op == PR_SET_DUMPABLE && a2 <= 1) {
		/* per process in Linux (the mm's): the caller and its leader, the
		 * task a pidfd or a pid names; then natively too (core dumps) */
		LOCKED(t, cr->nondump = !a2);
		struct task *l = t->vtid != t->vtgid ? task_get_vpid(c->sb, t->vtgid) : NULL;
		if (l) {
			LOCKED(l, l->cred.nondump = !a2);
			task_put(l);
		}
		c->cont = 1;
		return 0;
	}
	if (op == PR_SCHED_CORE)
		return sc_sched_core_owner(c);
	if (op == PR_SET_SECCOMP) {
		if (a2 == 2 /* SECCOMP_MODE_FILTER */)
			return filter_install(c, 0, a3);
		c->cont = 1;
		return 0;
	}
	if (op == PR_SET_PDEATHSIG) {
		if (a2 > 64 /* valid_signal */)
			return -EINVAL;
		atomic_store(&t->pdeathsig, (int)a2);
		return 0;
	}
	if (op == PR_GET_PDEATHSIG) {
		int v = atomic_load(&t->pdeathsig);
		return sc_write_guest(c, a2, &v, sizeof v) < 0 ? -EFAULT : 0;
	}
	if (op == PR_GET_DUMPABLE)
		return task_nondump(c->sb, t) ? 0 : 1; /* the process's flag */
	pthread_mutex_lock(&t->lock);
	switch (op) {
	case PR_GET_NO_NEW_PRIVS:
		r = a2 || a3 || a4 || a5 ? -EINVAL : cr->nnp;
		break;
	case PR_SET_NO_NEW_PRIVS:
		if (a2 != 1 || a3 || a4 || a5)
			r = -EINVAL;
		else {
			cr->nnp = 1;
			r = 0;
		}
		break;
	case PR_SET_DUMPABLE:
		r = -EINVAL;
		break;
	case PR_CAPBSET_READ:
		r = a2 > CRED_CAP_LAST ? -EINVAL : !!(cr->cap_bnd & CRED_BIT(a2));
		break;
	case PR_CAPBSET_DROP:
		if (a2 > CRED_CAP_LAST)
			r = -EINVAL;
		else if (!cred_capable(cr, CRED_CAP_SETPCAP))
			r = -EPERM;
		else {
			cr->cap_bnd &= ~CRED_BIT(a2);
			r = 0;
		}
		break;
	case PR_GET_KEEPCAPS:
		r = !!(cr->securebits & CRED_SECBIT_KEEP_CAPS);
		break;
	case PR_SET_KEEPCAPS:
		if (a2 > 1)
			r = -EINVAL;
		else if (cr->securebits & CRED_SECBIT_KEEP_CAPS_LOCKED)
			r = -EPERM;
		else {
			cr->securebits = a2 ? cr->securebits | CRED_SECBIT_KEEP_CAPS
					    : cr->securebits & ~CRED_SECBIT_KEEP_CAPS;
			r = 0;
		}
		break;
	case PR_GET_SECUREBITS:
		r = cr->securebits;
		break;
	case PR_SET_SECUREBITS:
		/* SECBIT_KEEP_CAPS and SECBIT_NO_CAP_AMBIENT_RAISE and their
		 * locks are modelled; NOROOT and NO_SETUID_FIXUP are refused.
		 * Linux's rules (cap_task_prctl): a locked bit cannot change, a
		 * lock cannot be dropped, CAP_SETPCAP. */
		if (!cred_capable(cr, CRED_CAP_SETPCAP) || (a2 & ~(unsigned long)CRED_SECBIT_MODELLED) ||
		    (((cr->securebits & CRED_SECBIT_LOCKS) >> 1) & (cr->securebits ^ (unsigned)a2)) ||
		    (cr->securebits & CRED_SECBIT_LOCKS & ~(unsigned)a2))
			r = -EPERM;
		else {
			cr->securebits = (unsigned)a2;
			r = 0;
		}
		break;
	case PR_CAP_AMBIENT:
		if (a2 == PR_CAP_AMBIENT_CLEAR_ALL) {
			if (a3 || a4 || a5)
				r = -EINVAL;
			else {
				cr->cap_amb = 0;
				r = 0;
			}
			break;
		}
		if (a3 > CRED_CAP_LAST || a4 || a5) {
			r = -EINVAL;
			break;
		}
		if (a2 == PR_CAP_AMBIENT_IS_SET)
			r = !!(cr->cap_amb & CRED_BIT(a3));
		else if (a2 == PR_CAP_AMBIENT_RAISE) {
			if (!(cr->cap_prm & cr->cap_inh & CRED_BIT(a3)) ||
			    (cr->securebits & CRED_SECBIT_NO_CAP_AMBIENT_RAISE))
				r = -EPERM;
			else {
				cr->cap_amb |= CRED_BIT(a3);
				r = 0;
			}
		} else if (a2 == PR_CAP_AMBIENT_LOWER) {
			cr->cap_amb &= ~CRED_BIT(a3);
			r = 0;
		} else
			r = -EINVAL;
		break;
	default:
		r = -EINVAL; /* the filter sends nothing else */
		break;
	}
	pthread_mutex_unlock(&t->lock);
	return r;
}

/* ---- uts names ---- */

long sys_uname(struct sc_call *c)
{
	struct utsname u;
	memset(&u, 0, sizeof u);
	snprintf(u.sysname, sizeof u.sysname, "Linux");
	snprintf(u.version, sizeof u.version, "#1 SMP PREEMPT_DYNAMIC");
	snprintf(u.machine, sizeof u.machine, "x86_64");
	pthread_mutex_lock(&c->sb->uts_lock);
	snprintf(u.nodename, sizeof u.nodename, "%s", c->sb->hostname);
	snprintf(u.release, sizeof u.release, "%s", c->sb->release);
	snprintf(u.domainname, sizeof u.domainname, "%s", c->sb->domainname);
	pthread_mutex_unlock(&c->sb->uts_lock);
	return sc_write_guest(c, c->args[0], &u, sizeof u) < 0 ? -EFAULT : 0;
}

/* Linux needs CAP_SYS_ADMIN over the uts namespace, which the sandbox never
 * grants; the names here are the sandbox's own, so a guest root (euid 0
 * with a non-empty effective set: one that has not dropped its
 * capabilities) may change them. */
static long set_uts(struct sc_call *c, char *dst)
{
	int len = (int)c->args[1]; /* the kernel's int: the low 32 bits */
	char name[65];

	/* Linux's order: the capability, then the length (review 34) */
	pthread_mutex_lock(&c->task->lock);
	int ok = c->task->cred.euid == 0 && c->task->cred.cap_eff != 0;
	pthread_mutex_unlock(&c->task->lock);
	if (!ok)
		return -EPERM;
	if (len < 0 || len > 64)
		return -EINVAL;
	if (len && sc_read_guest(c, c->args[0], name, (size_t)len) < 0)
		return -EFAULT;
	name[len] = 0;
	pthread_mutex_lock(&c->sb->uts_lock);
	memcpy(dst, name, (size_t)len + 1);
	pthread_mutex_unlock(&c->sb->uts_lock);
	return 0;
}

long sys_sethostname(struct sc_call *c) { return set_uts(c, c->sb->hostname); }
long sys_setdomainname(struct sc_call *c) { return set_uts(c, c->sb->domainname); }

/* clock_settime: never sets anything, but answers as Linux does a process
 * without CAP_SYS_TIME in the host's user namespace (which the guest never
 * has): clocks that cannot be set (CLOCK_MONOTONIC, ...) and unknown ids are
 * EINVAL, as is a bad time for CLOCK_REALTIME (checked before the
 * capability), and CLOCK_REALTIME itself is EPERM. Negative ids (CPU-time and
 * fd clocks) stay EPERM. */
long sys_clock_settime(struct sc_call *c)
{
	int clk = (int)c->args[0];
	struct timespec ts;

	if (sc_read_guest(c, c->args[1], &ts, sizeof ts) < 0)
		return -EFAULT;
	if (clk < 0)
		return -EPERM;
	if (clk != CLOCK_REALTIME)
		return -EINVAL;
	/* timespec64_valid_settod: past TIME_SETTOD_SEC_MAX (KTIME_SEC_MAX less
	 * 30 years of uptime) is EINVAL too, before the permission's EPERM */
	if (ts.tv_sec < 0 || ts.tv_nsec < 0 || ts.tv_nsec >= 1000000000L ||
	    ts.tv_sec >= 9223372036LL - 30LL * 365 * 86400)
		return -EINVAL;
	return -EPERM;
}

/* adjtimex and clock_adjtime(CLOCK_REALTIME): Linux's checks in its order
 * (timekeeping_validate_timex: the kernel's ADJ_ADJTIME 0x8000 needs
 * ADJ_OFFSET_SINGLESHOT 0x0001, else EINVAL; any change needs CAP_SYS_TIME in
 * the host's user namespace, which the guest never has: EPERM). A read
 * (modes 0, or ADJ_OFFSET_SS_READ) gets an unsynchronized clock, as a
 * machine without NTP shows: the time is now, the rest the kernel's boot
 * values, never the host's NTP state (the sentry makes no adjtimex call). */
#define K_ADJ_ADJTIME 0x8000u
#define K_ADJ_SINGLESHOT 0x0001u
#define K_ADJ_READONLY 0x2000u

static long adjtimex_read(struct sc_call *c, uint64_t addr)
{
	struct timex tx;
	struct timespec now;

	if (sc_read_guest(c, addr, &tx, sizeof tx) < 0)
		return -EFAULT;
	unsigned modes = tx.modes;
	if (modes & K_ADJ_ADJTIME) {
		if (!(modes & K_ADJ_SINGLESHOT))
			return -EINVAL;
		if (!(modes & K_ADJ_READONLY))
			return -EPERM;
	} else if (modes) {
		return -EPERM;
	}
	clock_gettime(CLOCK_REALTIME, &now);
	memset(&tx, 0, sizeof tx);
	tx.modes = modes;
	tx.maxerror = 16000000; /* NTP_PHASE_LIMIT */
	tx.esterror = 16000000;
	tx.status = STA_UNSYNC;
	tx.constant = 2;
	tx.precision = 1;
	tx.tolerance = 500L << 16; /* MAXFREQ_SCALED >> 16: 500 ppm */
	tx.time.tv_sec = now.tv_sec;
	tx.time.tv_usec = now.tv_nsec / 1000;
	tx.tick = 1000000 / 100; /* USER_HZ */
	tx.shift = 0;
	if (sc_write_guest(c, addr, &tx, sizeof tx) < 0)
		return -EFAULT;
	return TIME_ERROR; /* STA_UNSYNC */
}

long sys_adjtimex(struct sc_call *c) { return adjtimex_read(c, c->args[0]); }

long sys_clock_adjtime(struct sc_call *c)
{
	int clk = (int)c->args[0];
	struct timex tx;

	if (sc_read_guest(c, c->args[1], &tx, sizeof tx) < 0)
		return -EFAULT;
	if (clk == CLOCK_REALTIME)
		return adjtimex_read(c, c->args[1]);
	/* the other clocks Linux knows have no adjustment (CPU-time clocks
	 * included); 10 was CLOCK_SGI_CYCLE, gone */
	if (clk < 0 || (clk <= CLOCK_TAI && clk != 10))
		return -EOPNOTSUPP;
	return -EINVAL;
}
