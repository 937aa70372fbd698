/* syscalls/sys_ipc.c - SysV IPC (shm, sem, msg) checked on the virtual ids.
 *
 * Every guest task is one host uid, so the host's ipcperms() compares that
 * one uid with itself and always passes: before this file a process that
 * dropped root attached root's 0600 segment, read root's queue, changed its
 * semaphores and removed them (ARCHITECTURE.md, "SysV IPC").
 *
 * The sentry's threads are in the guest's IPC namespace (sentry/run.c), so
 * the sentry makes the objects itself and keeps each one's virtual owner,
 * creator and mode here (the native object is the sentry's, mode 0600: the
 * guest's uid is the sentry's on the host):
 *  - shmget/semget/msgget: the key is looked up (and made) by the sentry
 *    under one lock, Linux's order of EEXIST, EINVAL (size, nsems), EACCES
 *    (the requested mode bits of the flags) on the virtual entry;
 *  - shmat, semctl GET and SET commands, msgsnd, msgrcv, SHM_LOCK: Linux's
 *    rule on the entry, then the call runs natively (its id and command are
 *    register values; an id comes back only once no call on it has run
 *    natively for seconds: ipc_get);
 *  - semop/semtimedop: natively when the caller may both read and alter
 *    (whatever the operations are); otherwise the operations are copied
 *    once, read (all sem_op 0) needs read, any other alter, and the sentry
 *    runs the copy itself without waiting (a wait for zero by a caller
 *    without alter permission that would block is EAGAIN: Known gap);
 *  - IPC_STAT, SHM_STAT, SEM_STAT, MSG_STAT (and _ANY): made by the sentry,
 *    the ids and mode shown are the virtual ones; IPC_SET and IPC_RMID need
 *    the owner or creator (or CAP_SYS_ADMIN, never granted) and act on the
 *    entry (and the sentry removes the native object; msg_qbytes above
 *    msgmnb needs CAP_SYS_RESOURCE, never granted: EPERM).
 * Capabilities as Linux: CAP_IPC_OWNER and CAP_SYS_ADMIN are never granted
 * to guest root (kernel/cred.h), so root too is refused a user's 0600
 * object, as in Docker.
 */
#include "syscalls/handlers.h"
#include "syscalls/sc.h"
#include "kernel/cred.h"
#include "kernel/task.h"
#include "syscalls/sys_fs.h"
#include "fs/procfs.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <mqueue.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define CAP_IPC_OWNER_ 15
#define SEMOPM_MAX 4096 /* bound of one copy (Linux's default SEMOPM is 500) */

enum ipc_kind { K_SHM, K_SEM, K_MSG };

struct ipc_ent {
	int kind, id;
	uid_t uid, cuid;
	gid_t gid, cgid;
	unsigned mode;   /* the low 9 bits */
	pid_t cpid;      /* the creator's guest pid (shm_cpid; natively the sentry's) */
	int removed;     /* a removed segment lives on while attached */
	double last_cont; /* when a call on it was last let run natively (0: never) */
	unsigned nsems;  /* K_SEM: the set's size */
};

/* The semaphores of every set the sandbox holds, together (Linux's SEMMNS,
 * ENOSPC past it). A set's array is host kernel memory (64 bytes a
 * semaphore) made at semget, before anything is written, and the guest IPC
 * namespace's semmns is 1,024,000,000 (which rootless cannot lower: only
 * the namespace's uid 0 may write it): before red team 58 one semget of
 * 32,000 held 2 MB, 32,000 of them 64 GB, 200 held 390 MB under rootless
 * --memory 64M (peak_memory_bytes 9.8 MB, exit 0). 262,144 is 16 MiB
 * (IPC_SEM_TOTAL, fs/procfs.h: the guest's /proc/sys/kernel/sem says it). */
#define IPC_SEMMSL 32000

/* ids of removed objects that had a call let run natively within
 * IPC_QUARANTINE_S seconds (see ipc_get) */
#define IPC_QUARANTINE_S 10.0
struct ipc_qr {
	int kind, id;
	double last_cont;
};
static struct ipc_qr *qrs;
static size_t nqrs, cqrs;
static double qr_pruned, qr_overflow;

static double ipc_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void qr_prune(double now)
{
	size_t k = 0;
	for (size_t i = 0; i < nqrs; i++)
		if (now - qrs[i].last_cont < IPC_QUARANTINE_S)
			qrs[k++] = qrs[i];
	nqrs = k;
	qr_pruned = now;
}

/* when a call on (kind, id) was last let run natively, among removed objects
 * still in quarantine (0: none) */
static double qr_last(int kind, int id)
{
	double t = qr_overflow;
	for (size_t i = 0; i < nqrs; i++)
		if (qrs[i].kind == kind && qrs[i].id == id && qrs[i].last_cont > t)
			t = qrs[i].last_cont;
	return t;
}

static pthread_mutex_t ipc_mu = PTHREAD_MUTEX_INITIALIZER;
static struct ipc_ent *ents;
static size_t nents, cents;

static struct ipc_ent *ipc_find(int kind, int id)
{
	for (size_t i = 0; i < nents; i++)
		if (ents[i].kind == kind && ents[i].id == id)
			return &ents[i];
	return NULL;
}

static void ipc_drop(struct ipc_ent *e)
{
	double now = ipc_now();
	if (now - qr_pruned > 1.0)
		qr_prune(now);
	if (e->last_cont > 0 && now - e->last_cont < IPC_QUARANTINE_S) {
		if (nqrs == cqrs) {
			size_t n = cqrs ? cqrs * 2 : 64;
			struct ipc_qr *p = realloc(qrs, n * sizeof *p);
			if (p) {
				qrs = p;
				cqrs = n;
			}
		}
		if (nqrs < cqrs)
			qrs[nqrs++] = (struct ipc_qr){ e->kind, e->id, e->last_cont };
		else if (e->last_cont > qr_overflow)
			qr_overflow = e->last_cont; /* no room: no id comes back for a while */
	}
	*e = ents[--nents];
}

/* removed segments whose last attach is gone (the id is invalid now) */
static void ipc_sweep(void)
{
	for (size_t i = 0; i < nents;) {
		struct shmid_ds d;
		if (ents[i].kind == K_SHM && ents[i].removed &&
		    syscall(SYS_shmctl, ents[i].id, IPC_STAT, &d) < 0) {
			ipc_drop(&ents[i]);
			continue;
		}
		i++;
	}
}

static unsigned long sems_held(void)
{
	unsigned long n = 0;
	for (size_t i = 0; i < nents; i++)
		if (ents[i].kind == K_SEM)
			n += ents[i].nsems;
	return n;
}

static int ipc_add(int kind, int id, const struct cred *s, unsigned mode, pid_t cpid, unsigned nsems)
{
	if (nents == cents) {
		ipc_sweep();
		if (nents == cents) {
			size_t n = cents ? cents * 2 : 64;
			struct ipc_ent *p = realloc(ents, n * sizeof *p);
			if (!p)
				return -ENOMEM;
			ents = p;
			cents = n;
		}
	}
	ents[nents++] = (struct ipc_ent){ kind, id, s->euid, s->euid, s->egid, s->egid, mode & 0777, cpid, 0, 0,
					  kind == K_SEM ? nsems : 0 };
	return 0;
}

static struct cred caller_cred(struct sc_call *c)
{
	struct cred s;
	pthread_mutex_lock(&c->task->lock);
	cred_copy(&s, &c->task->cred);
	pthread_mutex_unlock(&c->task->lock);
	return s;
}

/* Linux's ipcperms(): flag's rwx bits (any of the three triads) */
static int ipc_may(const struct cred *s, const struct ipc_ent *e, unsigned flag)
{
	unsigned req = ((flag >> 6) | (flag >> 3) | flag) & 7, g = e->mode;
	if (s->euid == e->uid || s->euid == e->cuid)
		g >>= 6;
	else if (cred_in_group(s, e->gid) || cred_in_group(s, e->cgid))
		g >>= 3;
	return !(req & ~g & 7) || cred_capable(s, CAP_IPC_OWNER_);
}

/* ipcctl_obtain_check(): the owner or creator, or CAP_SYS_ADMIN */
static int ipc_owner(const struct cred *s, const struct ipc_ent *e)
{
	return s->euid == e->uid || s->euid == e->cuid || cred_capable(s, CRED_CAP_SYS_ADMIN);
}

/* a pid the sentry's stat shows (its own namespace: the host's) as the
 * guest's, 0 if no guest process */
static pid_t guest_pid(struct sandbox *sb, pid_t host)
{
	if (host <= 0)
		return 0;
	struct task *t = task_get(sb, host);
	if (!t)
		return 0;
	pid_t v = t->vtgid;
	task_put(t);
	return v;
}

static void ipc_show(const struct ipc_ent *e, struct ipc_perm *p)
{
	p->uid = e->uid;
	p->gid = e->gid;
	p->cuid = e->cuid;
	p->cgid = e->cgid;
	p->mode = (p->mode & ~0777u) | e->mode;
}

/* /proc/sysvipc/<which> (fs/procfs.c): each object's line with its virtual
 * owner, group, creator and mode, its pids as guest pids (Linux's formats,
 * ipc/{shm,msg,sem}.c); a line of an object the sentry did not make is
 * left out */
static char *sysvipc_text(struct sandbox *sb, const char *which, const char *text, size_t *outlen)
{
	int kind = !strcmp(which, "shm") ? K_SHM : !strcmp(which, "sem") ? K_SEM : !strcmp(which, "msg") ? K_MSG : -1;
	size_t cap = strlen(text) * 2 + 512, o = 0;
	char *res = malloc(cap);
	if (!res || kind < 0) {
		free(res);
		return NULL;
	}
	const char *p = text, *eol = strchr(p, '\n');
	if (!eol) {
		*outlen = 0;
		res[0] = 0;
		return res;
	}
	memcpy(res, p, (size_t)(eol - p + 1)); /* the header */
	o = (size_t)(eol - p + 1);
	p = eol + 1;
	pthread_mutex_lock(&ipc_mu);
	for (; *p; p = eol + 1) {
		eol = strchr(p, '\n');
		if (!eol)
			break;
		char line[512];
		size_t ll = (size_t)(eol - p) < sizeof line - 1 ? (size_t)(eol - p) : sizeof line - 1;
		memcpy(line, p, ll);
		line[ll] = 0;
		int key, id;
		unsigned mode, u[4];
		unsigned long long a[8];
		int w = 0, got;
		struct ipc_ent *e;
		if (kind == K_SHM) {
			/* key shmid perms size cpid lpid nattch uid gid cuid cgid atime dtime ctime rss swap */
			unsigned long long sz, cp, lp, na, at, dt, ct, rs, sw;
			got = sscanf(line, "%d %d %o %llu %llu %llu %llu %u %u %u %u %llu %llu %llu %llu %llu", &key, &id,
				     &mode, &sz, &cp, &lp, &na, &u[0], &u[1], &u[2], &u[3], &at, &dt, &ct, &rs, &sw);
			if (got != 16 || !(e = ipc_find(kind, id)))
				continue;
			w = snprintf(res + o, cap - o,
				     "%10d %10d  %4o %21llu %5d %5d  %5llu %5u %5u %5u %5u %10llu %10llu %10llu %21llu %21llu\n",
				     key, id, (mode & ~0777u) | e->mode, sz, (int)e->cpid, (int)guest_pid(sb, (pid_t)lp), na,
				     (unsigned)e->uid, (unsigned)e->gid, (unsigned)e->cuid, (unsigned)e->cgid, at, dt, ct, rs,
				     sw);
		} else if (kind == K_MSG) {
			/* key msqid perms cbytes qnum lspid lrpid uid gid cuid cgid stime rtime ctime */
			got = sscanf(line, "%d %d %o %llu %llu %llu %llu %u %u %u %u %llu %llu %llu", &key, &id, &mode,
				     &a[0], &a[1], &a[2], &a[3], &u[0], &u[1], &u[2], &u[3], &a[4], &a[5], &a[6]);
			if (got != 14 || !(e = ipc_find(kind, id)))
				continue;
			w = snprintf(res + o, cap - o,
				     "%10d %10d  %4o  %10llu %10llu %5d %5d %5u %5u %5u %5u %10llu %10llu %10llu\n", key, id,
				     (mode & ~0777u) | e->mode, a[0], a[1], (int)guest_pid(sb, (pid_t)a[2]),
				     (int)guest_pid(sb, (pid_t)a[3]), (unsigned)e->uid, (unsigned)e->gid,
				     (unsigned)e->cuid, (unsigned)e->cgid, a[4], a[5], a[6]);
		} else {
			/* key semid perms nsems uid gid cuid cgid otime ctime */
			got = sscanf(line, "%d %d %o %llu %u %u %u %u %llu %llu", &key, &id, &mode, &a[0], &u[0], &u[1],
				     &u[2], &u[3], &a[4], &a[5]);
			if (got != 10 || !(e = ipc_find(kind, id)))
				continue;
			w = snprintf(res + o, cap - o, "%10d %10d  %4o %10llu %5u %5u %5u %5u %10llu %10llu\n", key, id,
				     (mode & ~0777u) | e->mode, a[0], (unsigned)e->uid, (unsigned)e->gid,
				     (unsigned)e->cuid, (unsigned)e->cgid, a[4], a[5]);
		}
		if (w < 0 || (size_t)w >= cap - o)
			break;
		o += (size_t)w;
	}
	pthread_mutex_unlock(&ipc_mu);
	*outlen = o;
	return res;
}

__attribute__((constructor)) static void sysvipc_hook_set(void)
{
	procfs_sysvipc_hook = sysvipc_text;
}

/* the native get of kind (size/nsems in arg) with flags */
static long native_get(int kind, key_t key, uint64_t arg, int flg)
{
	switch (kind) {
	case K_SHM: return syscall(SYS_shmget, key, (size_t)arg, flg);
	case K_SEM: return syscall(SYS_semget, key, (int)arg, flg);
	default:    return syscall(SYS_msgget, key, flg);
	}
}

static void native_rmid(int kind, int id)
{
	if (kind == K_SHM)
		syscall(SYS_shmctl, id, IPC_RMID, NULL);
	else if (kind == K_SEM)
		syscall(SYS_semctl, id, 0, IPC_RMID, 0);
	else
		syscall(SYS_msgctl, id, IPC_RMID, NULL);
}

/* An id on which a call was let run natively is not handed out again within
 * IPC_QUARANTINE_S of that call. The checks above let the
 * call run natively on the id (a register value) after the sentry's reply:
 * were the object removed and its id given to another virtual user's new
 * object in between, the caller would act on an object it was not checked
 * for. Linux's ids only grow ((seq << shift) + idx, idx allocated
 * cyclically, seq bumped at each wrap of idx) until seq wraps (after
 * 65,536 wraps, 128 with ipcmni_extend) or the namespace's *_next_id sysctl
 * (CHECKPOINT_RESTORE) names one; only the sentry makes objects in the
 * guest's IPC namespace, so an id not above the highest it made of that
 * kind may be a reused one: unless every call let run on it is older than
 * IPC_QUARANTINE_S (a native call looks its id up once scheduled after the
 * reply: seconds at worst), that object is removed again and the create
 * retried (a next_id is used once), then ENOSPC. Never reusing an id at all
 * (before red-team 12) let a process that dropped root wrap the ids (4.2
 * million creates, under 3 minutes) and make every later create ENOSPC. */
static int max_made[3] = { -1, -1, -1 };

/* ipcget(): key, size/nsems, flags */
static long ipc_get(struct sc_call *c, int kind, key_t key, uint64_t arg, int flg)
{
	const int extra = flg & ~(IPC_CREAT | IPC_EXCL | 0777); /* SHM_HUGETLB, SHM_NORESERVE... */
	struct cred s = caller_cred(c);
	long r;
	pthread_mutex_lock(&ipc_mu);
	if (key != IPC_PRIVATE) {
		/* does it exist? (size/nsems 0 pass any object's check) */
		r = native_get(kind, key, 0, 0);
		if (r >= 0) {
			struct ipc_ent *e = ipc_find(kind, (int)r);
			if ((flg & IPC_CREAT) && (flg & IPC_EXCL))
				r = -EEXIST;
			else if (!e)
				r = -EACCES; /* not one the sentry made: never */
			else if ((r = native_get(kind, key, arg, extra)) < 0)
				r = -errno; /* Linux's more_checks: size, nsems */
			else if (!ipc_may(&s, e, (unsigned)flg))
				r = -EACCES;
			goto out;
		}
		if (errno != ENOENT || !(flg & IPC_CREAT)) {
			r = -errno;
			goto out;
		}
	}
	if (kind == K_SHM && (flg & SHM_HUGETLB)) {
		/* the host's one huge page pool, charged to no memory cgroup (red
		 * team 23; mmap MAP_HUGETLB and memfd MFD_HUGETLB: the table):
		 * Linux's answer without CAP_IPC_LOCK past RLIMIT_MEMLOCK */
		r = -EPERM;
		goto out;
	}
	if (kind == K_SEM && (int)arg > 0 && (int)arg <= IPC_SEMMSL &&
	    sems_held() + (unsigned)arg > IPC_SEM_TOTAL) {
		r = -ENOSPC; /* newary's semmns check (an nsems Linux refuses stays EINVAL) */
		goto out;
	}
	for (int tries = 0;; tries++) {
		r = native_get(kind, key, arg, extra | IPC_CREAT | IPC_EXCL | 0600);
		if (r < 0) {
			r = -errno;
			goto out;
		}
		if ((int)r > max_made[kind])
			break;
		/* an id given out before: Linux's ids wrap (after 4,194,304
		 * creates with few objects in use, under 3 minutes here; before
		 * red-team 12 every create was ENOSPC from then on, a process
		 * that dropped root denying root its SysV objects). It comes
		 * back only when no call on it has been let run natively for
		 * IPC_QUARANTINE_S: such a call looks the id up as soon as it
		 * is scheduled after the reply. */
		struct ipc_ent *stale = ipc_find(kind, (int)r);
		double last = stale && stale->last_cont > qr_last(kind, (int)r) ? stale->last_cont
										 : qr_last(kind, (int)r);
		if (ipc_now() - last >= IPC_QUARANTINE_S)
			break;
		native_rmid(kind, (int)r);
		if (tries >= 3) {
			r = -ENOSPC;
			goto out;
		}
	}
	if ((int)r > max_made[kind])
		max_made[kind] = (int)r;
	struct ipc_ent *old = ipc_find(kind, (int)r);
	if (old)
		ipc_drop(old); /* a removed segment's entry whose last detach was not yet seen */
	if (ipc_add(kind, (int)r, &s, (unsigned)flg, c->task->vtgid, (unsigned)arg) < 0) {
		native_rmid(kind, (int)r);
		r = -ENOSPC;
	}
out:
	pthread_mutex_unlock(&ipc_mu);
	cred_free(&s);
	if (r < 0)
		snprintf(c->note, sizeof c->note, "sysv ipc get: %s", strerror((int)-r));
	return r;
}

long sys_shmget(struct sc_call *c) { return ipc_get(c, K_SHM, (key_t)c->args[0], c->args[1], (int)c->args[2]); }
long sys_semget(struct sc_call *c) { return ipc_get(c, K_SEM, (key_t)c->args[0], c->args[1], (int)c->args[2]); }
long sys_msgget(struct sc_call *c) { return ipc_get(c, K_MSG, (key_t)c->args[0], 0, (int)c->args[1]); }

/* check one object with Linux's rule (flag: 0444 read, 0222 write/alter,
 * -1 owner), then let the call run natively; an id the sentry did not make
 * is EINVAL (what Linux says of an id that does not exist) */
static long ipc_check_cont(struct sc_call *c, int kind, int id, int flag, int eperm)
{
	struct cred s = caller_cred(c);
	long r = 0;
	pthread_mutex_lock(&ipc_mu);
	struct ipc_ent *e = ipc_find(kind, id);
	if (!e)
		r = -EINVAL;
	else if (flag < 0 ? !ipc_owner(&s, e) : !ipc_may(&s, e, (unsigned)flag))
		r = eperm ? -EPERM : -EACCES;
	else
		e->last_cont = ipc_now(); /* the id is not handed out again soon (ipc_get) */
	pthread_mutex_unlock(&ipc_mu);
	cred_free(&s);
	if (r == 0)
		c->cont = 1;
	else
		snprintf(c->note, sizeof c->note, "sysv ipc %d: %s on the virtual ids", id, strerror((int)-r));
	return r;
}

long sys_shmat(struct sc_call *c)
{
	int flg = (int)c->args[2];
	/* Linux's do_shmat: read, write unless SHM_RDONLY, execute with SHM_EXEC */
	int need = ((flg & SHM_RDONLY) ? 0444 : 0666) | ((flg & SHM_EXEC) ? 0111 : 0);
	return ipc_check_cont(c, K_SHM, (int)c->args[0], need, 0);
}

long sys_msgsnd(struct sc_call *c) { return ipc_check_cont(c, K_MSG, (int)c->args[0], 0222, 0); }
long sys_msgrcv(struct sc_call *c) { return ipc_check_cont(c, K_MSG, (int)c->args[0], 0444, 0); }

/* a *_STAT command made by the sentry into buf, shown with the virtual ids.
 * stat_idx: the id argument is an index (SHM_STAT...; the call returns the
 * object's id); any: no read permission needed (*_STAT_ANY). */
static long ipc_stat(struct sc_call *c, int kind, int idarg, int cmd, int stat_idx, int any, uint64_t addr)
{
	union {
		struct shmid_ds shm;
		struct semid_ds sem;
		struct msqid_ds msg;
	} u;
	memset(&u, 0, sizeof u);
	struct cred s = caller_cred(c);
	long r;
	pthread_mutex_lock(&ipc_mu);
	if (kind == K_SHM)
		r = syscall(SYS_shmctl, idarg, cmd, &u.shm);
	else if (kind == K_SEM)
		r = syscall(SYS_semctl, idarg, 0, cmd, &u.sem);
	else
		r = syscall(SYS_msgctl, idarg, cmd, &u.msg);
	if (r < 0) {
		r = -errno;
		goto out;
	}
	int id = stat_idx ? (int)r : idarg;
	struct ipc_ent *e = ipc_find(kind, id);
	if (!e) {
		r = -EINVAL;
		goto out;
	}
	if (!any && !ipc_may(&s, e, 0444)) {
		r = -EACCES;
		goto out;
	}
	size_t len;
	if (kind == K_SHM) {
		ipc_show(e, &u.shm.shm_perm);
		u.shm.shm_cpid = e->cpid;
		u.shm.shm_lpid = guest_pid(c->sb, u.shm.shm_lpid);
		len = sizeof u.shm;
	} else if (kind == K_SEM) {
		ipc_show(e, &u.sem.sem_perm);
		len = sizeof u.sem;
	} else {
		ipc_show(e, &u.msg.msg_perm);
		u.msg.msg_lspid = guest_pid(c->sb, u.msg.msg_lspid);
		u.msg.msg_lrpid = guest_pid(c->sb, u.msg.msg_lrpid);
		len = sizeof u.msg;
	}
	pthread_mutex_unlock(&ipc_mu);
	cred_free(&s);
	if (sc_write_guest(c, addr, &u, len) < 0)
		return -EFAULT;
	return r;
out:
	pthread_mutex_unlock(&ipc_mu);
	cred_free(&s);
	return r;
}

/* IPC_SET and IPC_RMID: owner or creator; buf read once (IPC_SET) */
static long ipc_set_rmid(struct sc_call *c, int kind, int id, int cmd, uint64_t addr)
{
	union {
		struct shmid_ds shm;
		struct semid_ds sem;
		struct msqid_ds msg;
	} u, cur;
	struct ipc_perm *np = NULL;
	if (cmd == IPC_SET) {
		size_t len = kind == K_SHM ? sizeof u.shm : kind == K_SEM ? sizeof u.sem : sizeof u.msg;
		if (sc_read_guest(c, addr, &u, len) < 0)
			return -EFAULT;
		np = kind == K_SHM ? &u.shm.shm_perm : kind == K_SEM ? &u.sem.sem_perm : &u.msg.msg_perm;
	}
	struct cred s = caller_cred(c);
	long r = 0;
	pthread_mutex_lock(&ipc_mu);
	struct ipc_ent *e = ipc_find(kind, id);
	if (!e) { /* (a removed segment still attached is found, as on Linux) */
		r = -EINVAL;
		goto out;
	}
	if (!ipc_owner(&s, e)) {
		r = -EPERM;
		goto out;
	}
	if (cmd == IPC_RMID) {
		if (kind == K_SHM)
			r = syscall(SYS_shmctl, id, IPC_RMID, NULL);
		else if (kind == K_SEM)
			r = syscall(SYS_semctl, id, 0, IPC_RMID, 0);
		else
			r = syscall(SYS_msgctl, id, IPC_RMID, NULL);
		if (r < 0) {
			r = -errno;
			goto out;
		}
		if (kind == K_SHM)
			e->removed = 1; /* attaches keep it (and its id) */
		else
			ipc_drop(e);
		goto out;
	}
	/* IPC_SET: the native object keeps the sentry's ids and 0600; a native
	 * IPC_SET of the current values stamps its ctime (and msg_qbytes) */
	memset(&cur, 0, sizeof cur);
	if (kind == K_SHM)
		r = syscall(SYS_shmctl, id, IPC_STAT, &cur.shm);
	else if (kind == K_SEM)
		r = syscall(SYS_semctl, id, 0, IPC_STAT, &cur.sem);
	else
		r = syscall(SYS_msgctl, id, IPC_STAT, &cur.msg);
	if (r < 0) {
		r = -errno;
		goto out;
	}
	if (kind == K_MSG) {
		struct msginfo mi;
		memset(&mi, 0, sizeof mi);
		syscall(SYS_msgctl, 0, IPC_INFO, &mi);
		if (u.msg.msg_qbytes > (msglen_t)mi.msgmnb &&
		    u.msg.msg_qbytes > cur.msg.msg_qbytes) {
			r = -EPERM; /* CAP_SYS_RESOURCE: never granted */
			goto out;
		}
		cur.msg.msg_qbytes = u.msg.msg_qbytes;
		r = syscall(SYS_msgctl, id, IPC_SET, &cur.msg);
	} else if (kind == K_SHM) {
		r = syscall(SYS_shmctl, id, IPC_SET, &cur.shm);
	} else {
		r = syscall(SYS_semctl, id, 0, IPC_SET, &cur.sem);
	}
	if (r < 0) {
		r = -errno;
		goto out;
	}
	e->uid = np->uid;
	e->gid = np->gid;
	e->mode = np->mode & 0777;
	r = 0;
out:
	pthread_mutex_unlock(&ipc_mu);
	cred_free(&s);
	if (r < 0)
		snprintf(c->note, sizeof c->note, "sysv ipc %d: %s on the virtual ids", id, strerror((int)-r));
	return r;
}

long sys_shmctl(struct sc_call *c)
{
	int id = (int)c->args[0], cmd = (int)c->args[1];
	uint64_t buf = c->args[2];
	switch (cmd) {
	case IPC_INFO:
	case SHM_INFO:
		c->cont = 1; /* no ids in them */
		return 0;
	case IPC_STAT:     return ipc_stat(c, K_SHM, id, cmd, 0, 0, buf);
	case SHM_STAT:     return ipc_stat(c, K_SHM, id, cmd, 1, 0, buf);
	case SHM_STAT_ANY: return ipc_stat(c, K_SHM, id, cmd, 1, 1, buf);
	case IPC_SET:
	case IPC_RMID:     return ipc_set_rmid(c, K_SHM, id, cmd, buf);
	case SHM_LOCK:
	case SHM_UNLOCK:   /* owner or creator (CAP_IPC_LOCK is never granted); the
			    * kernel's RLIMIT_MEMLOCK check runs natively */
		return ipc_check_cont(c, K_SHM, id, -1, 1);
	default:
		return -EINVAL;
	}
}

long sys_msgctl(struct sc_call *c)
{
	int id = (int)c->args[0], cmd = (int)c->args[1];
	uint64_t buf = c->args[2];
	switch (cmd) {
	case IPC_INFO:
	case MSG_INFO:
		c->cont = 1;
		return 0;
	case IPC_STAT:     return ipc_stat(c, K_MSG, id, cmd, 0, 0, buf);
	case MSG_STAT:     return ipc_stat(c, K_MSG, id, cmd, 1, 0, buf);
	case MSG_STAT_ANY: return ipc_stat(c, K_MSG, id, cmd, 1, 1, buf);
	case IPC_SET:
	case IPC_RMID:     return ipc_set_rmid(c, K_MSG, id, cmd, buf);
	default:
		return -EINVAL;
	}
}

long sys_semctl(struct sc_call *c)
{
	int id = (int)c->args[0], cmd = (int)c->args[2];
	uint64_t arg = c->args[3];
	switch (cmd) {
	case IPC_INFO:
	case SEM_INFO:
		c->cont = 1;
		return 0;
	case IPC_STAT:     return ipc_stat(c, K_SEM, id, cmd, 0, 0, arg);
	case SEM_STAT:     return ipc_stat(c, K_SEM, id, cmd, 1, 0, arg);
	case SEM_STAT_ANY: return ipc_stat(c, K_SEM, id, cmd, 1, 1, arg);
	case IPC_SET:
	case IPC_RMID:     return ipc_set_rmid(c, K_SEM, id, cmd, arg);
	case GETVAL:
	case GETALL:
	case GETPID:
	case GETNCNT:
	case GETZCNT:      return ipc_check_cont(c, K_SEM, id, 0444, 0);
	case SETVAL:
	case SETALL:       return ipc_check_cont(c, K_SEM, id, 0222, 0);
	default:
		return -EINVAL;
	}
}

/* semop/semtimedop (timeout: the guest address, 0 for semop) */
static long sem_op(struct sc_call *c, uint64_t timeout)
{
	int id = (int)c->args[0];
	uint64_t sops = c->args[1];
	size_t nsops = (size_t)(unsigned)c->args[2];
	struct cred s = caller_cred(c);
	int both, rd, wr;
	pthread_mutex_lock(&ipc_mu);
	struct ipc_ent *e = ipc_find(K_SEM, id);
	if (e) {
		rd = ipc_may(&s, e, 0444);
		wr = ipc_may(&s, e, 0222);
		if (rd && wr)
			e->last_cont = ipc_now(); /* runs natively below */
	} else {
		rd = wr = 0;
	}
	pthread_mutex_unlock(&ipc_mu);
	cred_free(&s);
	both = rd && wr;
	if (!e) {
		return -EINVAL;
	}
	if (both) {
		c->cont = 1; /* whatever the operations are, Linux lets it */
		return 0;
	}
	if (!rd && !wr) {
		snprintf(c->note, sizeof c->note, "sysv sem %d: EACCES on the virtual ids", id);
		return -EACCES;
	}
	/* one of the two: the operations decide, from one copy, run by the sentry */
	if (nsops < 1)
		return -EINVAL;
	if (nsops > SEMOPM_MAX)
		return -E2BIG;
	struct sembuf *ops = malloc(nsops * sizeof *ops);
	if (!ops)
		return -ENOMEM;
	if (sc_read_guest(c, sops, ops, nsops * sizeof *ops) < 0) {
		free(ops);
		return -EFAULT;
	}
	int alter = 0;
	for (size_t i = 0; i < nsops; i++)
		alter |= ops[i].sem_op != 0;
	long r;
	if (alter ? !wr : !rd) {
		snprintf(c->note, sizeof c->note, "sysv sem %d: EACCES on the virtual ids", id);
		r = -EACCES;
	} else {
		(void)timeout;
		/* SEM_UNDO would be the sentry's: refused with it */
		for (size_t i = 0; i < nsops; i++) {
			if (ops[i].sem_flg & SEM_UNDO) {
				free(ops);
				snprintf(c->note, sizeof c->note, "sysv sem %d: SEM_UNDO without read and alter", id);
				return -EACCES;
			}
			ops[i].sem_flg |= IPC_NOWAIT;
		}
		r = syscall(SYS_semtimedop, id, ops, nsops, NULL);
		if (r < 0)
			r = -errno;
	}
	free(ops);
	return r;
}

long sys_semop(struct sc_call *c) { return sem_op(c, 0); }
long sys_semtimedop(struct sc_call *c) { return sem_op(c, c->args[3]); }

/* ---- POSIX message queues ----
 * The queues live in the IPC namespace's internal mqueue mount, whose
 * inodes the host checks against the one host uid: a process that dropped
 * root opened root's 0600 queue and unlinked it (uidclass sweep). The
 * sentry opens and makes every queue itself (mq_open acts on the caller's
 * IPC namespace: its threads are in the guest's) from the copied name and
 * attributes, keeps each queue's virtual owner, group and mode, applies
 * Linux's rules (generic_permission on the virtual ids, CAP_DAC_OVERRIDE;
 * unlink: the owner, the directory's (root) or CAP_FOWNER) and installs
 * the fd. The native queue is the sentry's, 0600. */

struct mq_ent {
	char name[NAME_MAX + 1];
	uid_t uid;
	gid_t gid;
	unsigned mode;
};

static struct mq_ent *mqs;
static size_t nmqs, cmqs;

static struct mq_ent *mq_find(const char *name)
{
	for (size_t i = 0; i < nmqs; i++)
		if (strcmp(mqs[i].name, name) == 0)
			return &mqs[i];
	return NULL;
}

/* generic_permission: mask 4 read, 2 write */
static int mq_may(const struct cred *s, const struct mq_ent *e, unsigned mask)
{
	unsigned g = e->mode;
	if (s->fsuid == e->uid)
		g >>= 6;
	else if (cred_in_group(s, e->gid))
		g >>= 3;
	return !(mask & ~g & 7) || cred_capable(s, CRED_CAP_DAC_OVERRIDE);
}

long sys_mq_open(struct sc_call *c)
{
	const char *name = c->str[0];
	int oflag = (int)c->args[1];
	mode_t mode = (mode_t)c->args[2];
	uint64_t ua = c->args[3];
	int acc = oflag & O_ACCMODE;
	if (!name)
		return -EFAULT;
	if (strlen(name) > NAME_MAX)
		return -ENAMETOOLONG;
	struct mq_attr a, *ap = NULL;
	if ((oflag & O_CREAT) && ua) {
		if (sc_read_guest(c, ua, &a, sizeof a) < 0)
			return -EFAULT;
		ap = &a;
	}
	unsigned mask = acc == O_RDONLY ? 4 : acc == O_WRONLY ? 2 : 6;
	const int keep = acc | (oflag & O_NONBLOCK) | O_CLOEXEC;
	struct cred s = caller_cred(c);
	long r;
	pthread_mutex_lock(&ipc_mu);
	struct mq_ent *e = mq_find(name);
	if (e) {
		if ((oflag & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL))
			r = -EEXIST;
		else if (acc == O_ACCMODE)
			r = -EINVAL; /* Linux's prepare_open order */
		else if (!mq_may(&s, e, mask))
			r = -EACCES;
		else if ((r = syscall(SYS_mq_open, name, keep, 0, NULL)) < 0)
			r = -errno;
		if (r == -ENOENT) /* gone without us: forget it */
			*e = mqs[--nmqs];
		goto out;
	}
	if (!(oflag & O_CREAT)) {
		r = syscall(SYS_mq_open, name, O_RDONLY | O_CLOEXEC, 0, NULL);
		if (r >= 0) {
			close((int)r); /* there, but not one the sentry made: never */
			r = -EACCES;
		} else {
			r = -errno;
		}
		goto out;
	}
	if (nmqs == cmqs) {
		size_t n = cmqs ? cmqs * 2 : 16;
		struct mq_ent *p = realloc(mqs, n * sizeof *p);
		if (!p) {
			r = -ENOMEM;
			goto out;
		}
		mqs = p;
		cmqs = n;
	}
	r = syscall(SYS_mq_open, name, keep | O_CREAT | O_EXCL, 0600, ap);
	if (r < 0) {
		r = errno == EEXIST ? -EACCES : -errno; /* EEXIST: not one of ours */
		goto out;
	}
	e = &mqs[nmqs++];
	snprintf(e->name, sizeof e->name, "%s", name);
	e->uid = s.fsuid;
	e->gid = s.fsgid;
	e->mode = mode & 0777 & ~fs_umask(c->task);
out:
	pthread_mutex_unlock(&ipc_mu);
	cred_free(&s);
	if (r < 0) {
		snprintf(c->note, sizeof c->note, "mq_open: %s on the virtual ids", strerror((int)-r));
		return r;
	}
	return sc_return_fd(c, (int)r, 1); /* Linux: always close-on-exec */
}

long sys_mq_unlink(struct sc_call *c)
{
	const char *name = c->str[0];
	if (!name)
		return -EFAULT;
	struct cred s = caller_cred(c);
	long r;
	pthread_mutex_lock(&ipc_mu);
	struct mq_ent *e = mq_find(name);
	if (!e) {
		r = syscall(SYS_mq_open, name, O_RDONLY | O_CLOEXEC, 0, NULL);
		if (r >= 0) {
			close((int)r);
			r = -EACCES;
		} else {
			r = -errno;
		}
	} else if (s.fsuid != e->uid && s.fsuid != 0 && !cred_capable(&s, CRED_CAP_FOWNER)) {
		r = -EACCES; /* the sticky directory (Linux answers EACCES here) */
	} else if ((r = syscall(SYS_mq_unlink, name)) < 0) {
		r = -errno;
		if (r == -ENOENT)
			*e = mqs[--nmqs];
	} else {
		*e = mqs[--nmqs];
	}
	pthread_mutex_unlock(&ipc_mu);
	cred_free(&s);
	if (r < 0)
		snprintf(c->note, sizeof c->note, "mq_unlink: %s on the virtual ids", strerror((int)-r));
	return r;
}
