/* syscalls/sys_lock.c - flock(2) and fcntl's record locks, kept in the
 * sentry's lock table so that a guest never takes a lock, or a lease, on a
 * host file (ARCHITECTURE.md, "Locks").
 *
 * One table per sandbox (the sentry serves one), keyed by the host file's
 * identity (st_dev, st_ino of the guest's fd, duplicated with pidfd_getfd).
 * Linux's rules:
 *   - flock locks (class LC_FLOCK) belong to an open file description and
 *     cover the whole file; a conversion drops the old lock first (a failed
 *     LOCK_NB upgrade loses it, as on Linux).
 *   - POSIX record locks belong to the process (thread group), OFD record
 *     locks to the open file description; both are class LC_POSIX and
 *     conflict with each other, never with flock locks. Byte ranges are
 *     inclusive, end LK_EOF = "to the end, however far"; a new lock of an
 *     owner replaces, splits and merges that owner's ranges.
 *   - F_GETLK reports the first conflicting lock (l_pid: the holder's guest
 *     pid, -1 for an OFD lock); F_SETLK/LOCK_NB answer EAGAIN; F_SETLKW and
 *     blocking flock wait in the worker (20 ms slices) and answer
 *     -ERESTARTSYS when a signal is pending, like the FIFO-open wait; a POSIX
 *     wait that would close a cycle of waiting processes is EDEADLK.
 * An owner is identified by what the sentry can hold on to: a pidfd of the
 * process (POSIX), or a duplicate of the open file description (flock, OFD),
 * compared with kcmp(KCMP_FILE). close(2) and exit run natively, so release
 * is lazy: when a lock stands in the way, its holder is checked (the process
 * still runs and still has an fd on the file; some guest fd still refers to
 * the description, or may: a guest mmap of the file, a message queued on a
 * guest unix socket, hscan_refs) and the lock dropped if not.
 * Leases (F_SETLEASE) are class LC_LEASE, owned by the description, with
 * Linux's conflicts; an open or truncate through the sentry breaks them
 * (lease_break, below, before the open: signal, then the opener's worker
 * waits, /proc/sys/fs/lease-break-time at most).
 * Bounded: LK_MAX locks and leases per sandbox, then ENOLCK (after a sweep
 * of stale owners).
 */
#include "syscalls/handlers.h"
#include "syscalls/sc.h"
#include "kernel/task.h"
#include "syscalls/sys_fs.h"
#include "gofer/gofer.h"
#include "fs/procfs.h"
#include "loader/loader_abi.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/inotify.h>
#include "common/log.h"
#include <linux/kcmp.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#define LK_MAX 512           /* locks per sandbox */
#define LK_SLICE_MS 20       /* how often a waiter looks for signals and stale holders */
#define LK_EOF INT64_MAX     /* OFFSET_MAX */
#define LK_WIT 2           /* fds remembered per POSIX owner and file */
#define LK_MAXWAIT 64        /* waiters tracked for deadlock detection (= workers) */
#define ERESTARTSYS_ 512     /* include/linux/errno.h, not exported to user space */
#ifndef LOCK_MAND
#define LOCK_MAND 32
#endif

enum { LC_FLOCK = 1, LC_POSIX, LC_LEASE };
#define CAP_LEASE_ 28
enum { OWN_PROC = 1, OWN_FILE };

struct lk_owner {
	int refs;                /* locks pointing here */
	int kind;                /* OWN_PROC: a process; OWN_FILE: an open file description */
	int fd;                  /* PROC: pidfd of the process; FILE: our dup of the description */
	pid_t tgid;              /* host tgid: PROC the owner; FILE the last process seen holding it */
	pid_t vpid;              /* guest pid (PROC: l_pid of F_GETLK) */
	int hint;                /* FILE: a guest fd number last seen on the description */
	unsigned long seen_scan; /* FILE: the holder scan (scan_begun) that last found it */
	bool gone;               /* FILE: a complete holder scan found no guest fd on it */
	dev_t dev;               /* the file (PROC: one owner per process and file; */
	ino_t ino;               /*  FILE: what an mmap of it shows, hscan_refs) */
	int nwit;                /* PROC: the fds the process locked through */
	struct { int fd, dup; } wit[LK_WIT];
	struct lk_owner *next;
};

struct lk_lock {
	struct lk_owner *own;
	int cls;
	short type;              /* F_RDLCK or F_WRLCK */
	int64_t start, end;      /* inclusive */
	dev_t dev;
	ino_t ino;
	bool breaking;           /* LEASE: a break is under way... */
	short brk;               /* ...to this type (F_RDLCK or F_UNLCK) */
	int64_t brk_end;         /* LEASE: CLOCK_MONOTONIC ms when the break times out */
	struct lk_lock *next;
};

struct lk_waiter {
	struct lk_owner *who, *blocker;
};

static pthread_mutex_t lk_mu = PTHREAD_MUTEX_INITIALIZER;
/* Waiters sleep on the condition of their file's bucket (lk_cvi): a change of
 * one file's locks wakes the waiters of files in its bucket, not every
 * waiter of the sandbox (red team 65: 1000 threads waiting on one file
 * were all woken by each flock of another, and that other thread's
 * flock/unlock pairs ran at 20-50 a second, the sentry at 0.4-1 CPU). */
#define LK_CVS 64
static pthread_cond_t lk_cv[LK_CVS];
static pthread_once_t lk_once = PTHREAD_ONCE_INIT;
static struct lk_lock *locks;
static struct lk_owner *owners;
static int nlocks;
static int nleases;          /* leases in the table (read unlocked by lease_break) */
static struct lk_waiter waiters[LK_MAXWAIT];

static void lk_init(void)
{
	pthread_condattr_t a;
	pthread_condattr_init(&a);
	pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
	for (int i = 0; i < LK_CVS; i++)
		pthread_cond_init(&lk_cv[i], &a);
	pthread_condattr_destroy(&a);
}

/* the request, decoded */
struct lk_req {
	int cls;
	short type;              /* F_RDLCK, F_WRLCK, F_UNLCK */
	int64_t start, end;
	dev_t dev;
	ino_t ino;
	int ofd;                 /* the sentry's dup of the caller's description */
	int guestfd;
	bool ofd_owner;          /* OFD lock (or flock): owned by the description */
	bool wait;
};

static void owner_put(struct lk_owner *o)
{
	if (--o->refs > 0)
		return;
	for (struct lk_owner **pp = &owners; *pp; pp = &(*pp)->next)
		if (*pp == o) {
			*pp = o->next;
			break;
		}
	close(o->fd);
	for (int i = 0; i < o->nwit; i++)
		close(o->wit[i].dup);
	free(o);
}

static void lock_free(struct lk_lock **pp)
{
	struct lk_lock *l = *pp;
	*pp = l->next;
	if (l->cls == LC_LEASE)
		__atomic_sub_fetch(&nleases, 1, __ATOMIC_RELAXED);
	owner_put(l->own);
	free(l);
	nlocks--;
}

/* Unlink and free lock l (lk_mu held). */
static void lock_remove(struct lk_lock *l)
{
	for (struct lk_lock **pp = &locks; *pp; pp = &(*pp)->next)
		if (*pp == l) {
			lock_free(pp);
			return;
		}
}

static unsigned lk_cvi(dev_t dev, ino_t ino)
{
	return (unsigned)((((uint64_t)ino ^ ((uint64_t)dev << 17)) * 0x9E3779B97F4A7C15ull) >> 58) % LK_CVS;
}

/* wake the waiters of the file dev:ino (a change of its locks or leases) */
static void lk_wake(dev_t dev, ino_t ino)
{
	pthread_cond_broadcast(&lk_cv[lk_cvi(dev, ino)]);
}

/* wake every waiter (a change that may touch several files) */
static void lk_wake_all(void)
{
	for (int i = 0; i < LK_CVS; i++)
		pthread_cond_broadcast(&lk_cv[i]);
}

/* Wait on the bucket of dev:ino (lk_mu held) for at most one slice: waiters
 * look for signals and stale holders between slices. */
static void wait_slice(dev_t dev, ino_t ino)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	long ms = wait_poll_ms(LK_SLICE_MS);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	pthread_cond_timedwait(&lk_cv[lk_cvi(dev, ino)], &lk_mu, &ts);
}

static int64_t now_ms(void);

/* A waiter's look at its task (notification gone, a signal to take) is due:
 * once a wait_poll_ms slice, however often lk_cv wakes it (*next: 0 before
 * the first wake-up). */
static bool look_due(int64_t *next)
{
	int64_t now = now_ms();
	if (*next && now < *next)
		return false;
	*next = now + wait_poll_ms(LK_SLICE_MS);
	return true;
}

/* Drop every lock of o (an owner is one description, or one process on
 * one file). */
static void drop_owner_locks(struct lk_owner *o)
{
	o->refs++; /* keep o while its locks go */
	for (struct lk_lock **pp = &locks; *pp;) {
		struct lk_lock *l = *pp;
		if (l->own == o)
			lock_free(pp);
		else
			pp = &l->next;
	}
	owner_put(o);
	lk_wake_all();
}

static int kcmp_file(pid_t a, int fda, pid_t b, int fdb)
{
	return (int)syscall(SYS_kcmp, a, b, KCMP_FILE, fda, fdb);
}

/* The guest fd numbers of process vpid, into fds[] (up to max). -1 if gone,
 * -2 if it has more than max. (sc.h) */
int sc_list_fds(struct sandbox *sb, pid_t vpid, int *fds, int max)
{
	char path[32], buf[2048];
	int n = 0;

	if (!sb || sb->guest_procfd < 0 || vpid <= 0)
		return -1;
	snprintf(path, sizeof path, "%d/fd", vpid);
	int dfd = openat(sb->guest_procfd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -1;
	for (;;) {
		long r = syscall(SYS_getdents64, dfd, buf, sizeof buf);
		if (r <= 0)
			break;
		for (long off = 0; off < r;) {
			struct dirent64 *d = (struct dirent64 *)(buf + off);
			off += d->d_reclen;
			if (d->d_name[0] < '0' || d->d_name[0] > '9')
				continue;
			if (n == max) {
				close(dfd);
				return -2;
			}
			fds[n++] = atoi(d->d_name);
		}
	}
	close(dfd);
	return n;
}

/* Liveness of an OWN_FILE holder whose remembered fd number no longer
 * names its description (a native dup/close moves it for free). Looking
 * for it means every fd of every guest process: never under lk_mu (red
 * team 42: one such search per conflicting lock, under the mutex, held
 * every lock call of the sandbox 8.7 s). Under lk_mu such a holder counts
 * as there, and the request notes it (alive_ctx.want); the caller then
 * runs one holder scan (holder_scan) outside lk_mu that looks for every
 * such holder at once and re-keys what it finds, or marks it gone, and
 * asks again. A holder found by a scan begun after the request began
 * (seen_scan > since) counts as there without another scan, so a request
 * makes at most one scan per wait slice. */
struct alive_ctx {
	unsigned long since;     /* scan_begun when the request (or slice) began */
	bool want;               /* a holder was presumed there: a scan decides */
};
static unsigned long scan_begun, scan_ended; /* (lk_mu) holder scans, numbered */
static int64_t scan_end_ms, scan_took_ms;   /* (lk_mu) the last one's end, length */
static int64_t now_ms(void);

/* May a waiter's new slice scan again? Not before twice the last scan's
 * length has passed since it ended: waiters behind a holder that keeps
 * moving its fds cost the sandbox at most a third of a CPU in scans
 * (lk_mu held). */
static bool rescan_due(void)
{
	return now_ms() >= scan_end_ms + 2 * scan_took_ms;
}

/* Is the holder o of a lock on dev/ino still there? (lazily validated
 * release on close and exit) */
static bool owner_alive(struct alive_ctx *ax, struct lk_owner *o)
{
	if (o->kind == OWN_PROC) {
		struct pollfd p = { .fd = o->fd, .events = POLLIN };
		int pr = poll(&p, 1, 0);
		if (pr != 0) {
			dbg("lock owner %d: poll %d revents %x errno %d", o->tgid, pr, p.revents, errno);
			return false; /* exited (or the pidfd is bad) */
		}
		/* Linux drops them at the first close of an fd of the file;
		 * what the sentry can see: an fd it locked through that no
		 * longer holds the same description */
		for (int i = 0; i < o->nwit; i++) {
			int k = kcmp_file(getpid(), o->wit[i].dup, o->tgid, o->wit[i].fd);
			if (k != 0) {
				dbg("lock owner %d: witness fd %d kcmp %d errno %d", o->tgid, o->wit[i].fd, k, errno);
				return false;
			}
		}
		return true;
	}
	if (o->gone)
		return false;
	if (o->tgid > 0 && o->hint >= 0 && kcmp_file(getpid(), o->fd, o->tgid, o->hint) == 0)
		return true;
	if (ax && o->seen_scan <= ax->since)
		ax->want = true;
	return true;
}

/* ---- the holder scan (outside lk_mu) ---- */

static pthread_mutex_t scan_mu = PTHREAD_MUTEX_INITIALIZER; /* one scan at a time */

struct hscan {
	struct sandbox *sb;
	struct sc_call *c;       /* its caller: the scan ends when it is gone */
	struct lk_owner **o;     /* the holders looked for, sorted by kcmp's order */
	int n, left;
	bool *found;
	pid_t only;              /* first pass: the processes last seen holding them */
	bool first;
	bool incomplete, abandoned;
	unsigned long seen;
	long budget_left;        /* the scan's budget (scan_budget): entries left, */
	int64_t budget_end_cpu_ms; /* and its end in the thread's CPU time */
	int64_t budget_end_ms;   /* and on the wall clock */
	bool lknown;             /* the loader's device (loader_dev) */
	dev_t ldev;
};

/* The whole scan has one budget, in entries (fds searched, maps lines and
 * fds looked at for references) and in time: the fd search reads every fd
 * of every guest process (a kcmp per step of a binary search), which with
 * many processes and fds is long (review 55: 200 processes of 500 unix
 * sockets, 0.35-0.94 s for one lock request, after the references' look
 * below had a budget of its own; hyg33: one budget for both). Past it the
 * answer is "cannot tell" (incomplete: the holders are kept, never
 * dropped), as for an fd table that never holds still. */
#define HSCAN_ENTRIES 131072
#define HSCAN_MS 250       /* of the scanning thread's CPU time */
#define HSCAN_WALL_MS 1000 /* and of the wall clock, a backstop */
/* A request that waits anyway (a blocking lock, an open that breaks a
 * lease) doubles the wall clock's backstop at each scan it makes, from
 * HSCAN_WALL_MS up to this (scan_wall_ms): with the backstop at
 * HSCAN_WALL_MS for every scan, a scan that got a quarter of a CPU or
 * less never ended (each one starts again from the first process), so a
 * lock whose holder had died was never granted while the load lasted
 * (lockload: `moved_lock_holders_do_not_stall_locks` released 26-104 s
 * under load, never in 60 s with moat and four busy loops on one CPU;
 * `moved_lock_holders_released_under_load`). The first scan keeps the
 * short backstop: one that sleeps is cut as soon as before (a first
 * backstop of 10 s made that case 11.9 s once in CI's ASan tier). Up to
 * two minutes, not 10 s: at a load where a scan's 250 ms of CPU take
 * longer than the last backstop every scan is cut again (the unloaded case
 * released in 32 s at a load of 17 on two CPUs, the CI-like run's one CPU
 * shared with three helpers); the request waits either way, and a
 * scan's CPU budget still ends it. */
#define HSCAN_WAIT_WALL_MS 120000

/* the backstop of a request's scan number n (0: its first) */
static int64_t scan_wall_ms(bool waits, int n)
{
	int64_t ms = HSCAN_WALL_MS;
	while (waits && n-- > 0 && ms < HSCAN_WAIT_WALL_MS)
		ms *= 2;
	return ms < HSCAN_WAIT_WALL_MS ? ms : HSCAN_WAIT_WALL_MS;
}

/* The time budget counts the CPU time the scan itself takes (user and
 * system, CLOCK_THREAD_CPUTIME_ID), not the wall clock: on a loaded machine
 * a wall-clock budget of the same size ran out before a scan the sandbox
 * needed could end, so a lock whose holder had died was kept as long as the
 * load lasted (citrim: isolation_sentry moved_lock_holders_do_not_stall_locks
 * 9.5 to 80 s under a load of 15 on 2 CPUs). The wall clock stays a
 * backstop for a scan that sleeps (a /proc read waiting on a process's
 * mmap lock). */
static int64_t thread_cpu_ms(void)
{
	struct timespec ts;
	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
		return now_ms();
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* one more entry looked at: false (and incomplete) once the budget is out */
static bool scan_budget(struct hscan *h)
{
	if (h->budget_left <= 0)
		return false;
	if (--h->budget_left % 64 == 0 &&
	    (thread_cpu_ms() >= h->budget_end_cpu_ms || now_ms() >= h->budget_end_ms))
		h->budget_left = 0;
	if (h->budget_left <= 0) {
		h->incomplete = true;
		dbg("lock holder scan: past the budget (%d entries, %d ms of CPU, %d ms): kept", HSCAN_ENTRIES,
		    HSCAN_MS, HSCAN_WALL_MS);
		return false;
	}
	return true;
}

static int kcmp_order(const void *a, const void *b)
{
	const struct lk_owner *x = *(struct lk_owner *const *)a;
	const struct lk_owner *y = *(struct lk_owner *const *)b;
	int k = kcmp_file(getpid(), x->fd, getpid(), y->fd);
	return k == 1 ? -1 : k == 2 ? 1 : 0;
}

static int list_fds_all(struct sandbox *sb, pid_t vpid, int *fixed, int **fds);
static bool notif_gone(struct sc_call *c);

/* Search fds[0..n) of process t for the holders still sought. */
static void hscan_fds(struct hscan *h, struct task *t, const int *fds, int n)
{
	for (int i = 0; i < n && h->left > 0; i++) {
		if (h->c && ++h->seen % 1024 == 0 && notif_gone(h->c)) {
			h->abandoned = true;
			return;
		}
		if (!scan_budget(h))
			return; /* incomplete: kept */
		/* a binary search: kcmp orders descriptions (1: ours first) */
		int lo = 0, hi = h->n - 1;
		while (lo <= hi) {
			int mid = (lo + hi) / 2;
			int k = kcmp_file(getpid(), h->o[mid]->fd, t->tgid, fds[i]);
			if (k == 0) {
				if (!h->found[mid]) {
					h->found[mid] = true;
					h->left--;
					h->o[mid]->tgid = t->tgid;
					h->o[mid]->hint = fds[i];
				}
				break;
			}
			if (k == 1)
				lo = mid + 1;
			else if (k == 2)
				hi = mid - 1;
			else
				break; /* closed meanwhile, or not comparable */
		}
	}
}

#define HSCAN_RELIST 3
static int hscan_leader(struct task *t, void *arg)
{
	struct hscan *h = arg;
	bool mine = false;
	for (int i = 0; i < h->n && !mine; i++)
		mine = h->o[i]->tgid == t->tgid;
	if (h->first != mine)
		return 0; /* (first pass: those only; second: the others) */
	if (h->budget_left <= 0) {
		h->incomplete = true;
		return 1;
	}
	int fixed[2][1024], *fds[2];
	int n[2];
	int cur = 0;
	n[0] = list_fds_all(h->sb, t->vtgid, fixed[0], &fds[0]);
	fds[1] = fixed[1];
	n[1] = -1;
	for (int round = 0; n[cur] >= 0; round++) {
		hscan_fds(h, t, fds[cur], n[cur]);
		if (h->left == 0 || h->abandoned || h->budget_left <= 0)
			break;
		/* a description moved between the listing and its kcmp
		 * (dup, then close of the number listed) was missed: list
		 * again until the table holds still */
		int o = 1 - cur;
		if (fds[o] != fixed[o])
			free(fds[o]);
		n[o] = list_fds_all(h->sb, t->vtgid, fixed[o], &fds[o]);
		if (n[o] == n[cur] && !memcmp(fds[o], fds[cur], (size_t)n[o] * sizeof(int)))
			break; /* (sc_list_fds reads them in order) */
		cur = o;
		if (round == HSCAN_RELIST) {
			h->incomplete = true; /* never still: cannot tell, kept */
			break;
		}
	}
	if (n[cur] == -2)
		h->incomplete = true;
	for (int i = 0; i < 2; i++)
		if (fds[i] != fixed[i])
			free(fds[i]);
	return h->left == 0 || h->abandoned || h->budget_left <= 0;
}

/* ---- references no fd shows (red team 44) ----
 * A description no guest fd holds may still be held by an mmap of its
 * file (vm_file) or by an SCM_RIGHTS message in flight; Linux keeps its
 * flock, OFD locks and lease until the last reference goes. The kernel
 * shows neither per description (epoll, the weak reference that would,
 * refuses regular files: EPERM), so this side is conservative: a holder
 * not found in any fd table is kept while some guest process maps a file
 * of its inode number (/proc/PID/maps), or while some guest unix socket
 * has anything queued (readable: a message, a connection, or EOF), as that
 * may carry it in flight. Over-holding is the safe side (a lock kept past
 * the description's end: a later waiter waits or gets EAGAIN for longer);
 * dropping a lock a program holds is not. */

/* The pass below reads every guest process's maps and looks at every fd
 * of every guest process (a pidfd_getfd and poll per unix socket): with
 * many processes and sockets that is long (review 55: 200 processes of 500
 * unix sockets, 1.1 s for one lock request). It spends what is left of the
 * scan's budget (scan_budget); past it the answer is "cannot tell"
 * (incomplete: the holders are kept), the side this pass takes anyway. */

/* The loader's file (MOAT_LOADER_PATH), mapped by every guest process,
 * lies in the guest's native root, a tmpfs of its own that holds nothing
 * else; its inode number (2, a tmpfs's first file) is the one a guest's
 * first file in a fresh tmpfs gets too, and the inode-only match below kept
 * such a file's flock/OFD lock held for good once its holder had exited
 * (realprogs 34: a lock file made first in /tmp, every later waiter hung).
 * The native root's device: the root mount of the calling guest process's
 * kernel mountinfo (its root; pid 1's and the guest's /root links are not
 * the sentry's to follow). Looked up until found; 0, or -1 (then every
 * line counts, as before). */
static int loader_dev(struct sandbox *sb, pid_t vpid, dev_t *dev)
{
	static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	static bool known;
	static dev_t ld;
	pthread_mutex_lock(&mu);
	if (!known && sb && sb->guest_procfd >= 0 && vpid > 0) {
		char path[32];
		snprintf(path, sizeof path, "%d/mountinfo", (int)vpid);
		int f = openat(sb->guest_procfd, path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
		FILE *fp = f >= 0 ? fdopen(f, "r") : NULL;
		if (!fp && f >= 0)
			close(f);
		char line[512];
		unsigned maj, mnr;
		char mp[8];
		/* ID PARENT MAJ:MIN ROOT MOUNTPOINT ...: the first one at "/" */
		while (fp && fgets(line, sizeof line, fp))
			if (sscanf(line, "%*d %*d %u:%u %*s %7s", &maj, &mnr, mp) == 3 && !strcmp(mp, "/")) {
				ld = makedev(maj, mnr);
				known = true;
				break;
			}
		if (fp)
			fclose(fp);
	}
	*dev = ld;
	int r = known ? 0 : -1;
	pthread_mutex_unlock(&mu);
	return r;
}

static void hscan_maps_line(struct hscan *h, const char *line)
{
	unsigned long ino = 0;
	unsigned maj = 0, mnr = 0;
	/* start-end perms offset maj:min inode [path]; the inode number only
	 * (st_dev and the device maps shows differ on some file systems:
	 * another file's equal number keeps it, the safe side), but the
	 * loader's own mapping (its device and number) is nobody's lock */
	if (sscanf(line, "%*x-%*x %*s %*x %x:%x %lu", &maj, &mnr, &ino) != 3 || !ino)
		return;
	if (h->lknown && makedev(maj, mnr) == h->ldev)
		return;
	for (int i = 0; i < h->n; i++)
		if (!h->found[i] && (unsigned long)h->o[i]->ino == ino) {
			h->found[i] = true;
			h->left--;
		}
}

/* Every line of /proc/<vpid>/maps: mark the holders sought whose inode a
 * mapping shows. */
static void hscan_maps(struct hscan *h, struct task *t)
{
	char path[32];
	snprintf(path, sizeof path, "%d/maps", t->vtgid);
	int f = openat(h->sb->guest_procfd, path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (f < 0)
		return; /* exited: its mappings are gone too */
	char buf[8192];
	size_t have = 0;
	bool skip = false;
	for (;;) {
		ssize_t n = read(f, buf + have, sizeof buf - 1 - have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		have += (size_t)n;
		buf[have] = 0;
		char *line = buf, *nl;
		if (skip) { /* the rest of a line past the buffer, looked at already */
			if (!(nl = strchr(buf, '\n'))) {
				have = 0;
				continue;
			}
			line = nl + 1;
			skip = false;
		}
		while ((nl = strchr(line, '\n'))) {
			*nl = 0;
			if (!scan_budget(h)) {
				close(f);
				return;
			}
			hscan_maps_line(h, line);
			if (h->c && ++h->seen % 1024 == 0 && notif_gone(h->c)) {
				h->abandoned = true;
				close(f);
				return;
			}
			line = nl + 1;
		}
		have = (size_t)(buf + have - line);
		memmove(buf, line, have);
		buf[have] = 0;
		if (have == sizeof buf - 1) {
			/* a line past 8 KiB (a long path): its inode comes first */
			if (!scan_budget(h))
				break;
			hscan_maps_line(h, buf);
			have = 0;
			skip = true;
		}
		if (h->left == 0)
			break;
	}
	close(f);
}

/* May unix socket s (the sentry's dup) hold a message in flight? Readable
 * is yes (a message, a connection waiting in a listener), but for a stream
 * socket at EOF readable is also "nothing left": there a peek of one byte
 * tells (a stream message that carries fds carries a byte: a send of 0
 * bytes sends no fds). The peek changes nothing the guest sees unless it
 * set SO_PEEK_OFF (then: kept). */
static bool unix_queued(int s)
{
	struct pollfd p = { .fd = s, .events = POLLIN | POLLRDHUP };
	if (poll(&p, 1, 0) <= 0 || !(p.revents & POLLIN))
		return false;
	int type = -1, listening = 0, off = 0;
	socklen_t l1 = sizeof type, l2 = sizeof listening, l3 = sizeof off;
	if (!(p.revents & POLLRDHUP) || getsockopt(s, SOL_SOCKET, SO_TYPE, &type, &l1) < 0 ||
	    type != SOCK_STREAM || getsockopt(s, SOL_SOCKET, SO_ACCEPTCONN, &listening, &l2) < 0 ||
	    listening || getsockopt(s, SOL_SOCKET, SO_PEEK_OFF, &off, &l3) < 0 || off >= 0)
		return true;
	char b;
	return recv(s, &b, 1, MSG_PEEK | MSG_DONTWAIT) != 0;
}

/* Is a unix socket of process t readable (a message, a connection or EOF
 * queued: something may be in flight in it)? */
static bool hscan_queued(struct hscan *h, struct task *t)
{
	int fixed[1024], *fds;
	int n = list_fds_all(h->sb, t->vtgid, fixed, &fds);
	bool q = false;
	if (n == -2)
		q = true; /* cannot tell */
	for (int i = 0; i < n && !q; i++) {
		if (h->c && ++h->seen % 1024 == 0 && notif_gone(h->c)) {
			h->abandoned = true;
			break;
		}
		if (!scan_budget(h))
			break; /* incomplete: kept */
		char path[48], lnk[32];
		snprintf(path, sizeof path, "%d/fd/%d", t->vtgid, fds[i]);
		ssize_t k = readlinkat(h->sb->guest_procfd, path, lnk, sizeof lnk - 1);
		if (k < 7 || memcmp(lnk, "socket:", 7) != 0)
			continue;
		int s = task_getfd(t, fds[i]);
		if (s < 0)
			continue;
		int dom = -1;
		socklen_t dl = sizeof dom;
		if (getsockopt(s, SOL_SOCKET, SO_DOMAIN, &dom, &dl) == 0 && dom == AF_UNIX)
			q = unix_queued(s);
		close(s);
	}
	if (fds != fixed)
		free(fds);
	return q;
}

static int hscan_refs_leader(struct task *t, void *arg)
{
	struct hscan *h = arg;
	hscan_maps(h, t);
	return h->left == 0 || h->abandoned || h->budget_left <= 0;
}

static int hscan_sock_leader(struct task *t, void *arg)
{
	struct hscan *h = arg;
	if (hscan_queued(h, t)) {
		for (int i = 0; i < h->n; i++)
			h->found[i] = true; /* which one is in flight cannot be told */
		h->left = 0;
	}
	return h->left == 0 || h->abandoned || h->budget_left <= 0;
}

/* The holders no fd table showed: kept if an mmap or a queued socket may
 * hold them (above). */
static void hscan_refs(struct hscan *h)
{
	task_for_each_leader(h->sb, hscan_refs_leader, h);
	if (h->left > 0 && !h->abandoned && !h->incomplete)
		task_for_each_leader(h->sb, hscan_sock_leader, h);
}

/* One scan of every guest fd for every holder presumed there at or after
 * `since` (see alive_ctx); lk_mu not held. 0, or -EINTR when the caller
 * is gone. Scans run one at a time; a caller that waited for another's
 * that began after `since` takes that one's answer. */
static int holder_scan(struct sc_call *c, unsigned long since, int64_t wall_ms)
{
	struct timespec ts;
	for (;;) {
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += LK_SLICE_MS * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		if (pthread_mutex_timedlock(&scan_mu, &ts) == 0)
			break;
		if (notif_gone(c))
			return -EINTR;
	}
	struct hscan h = { .sb = c->sb, .c = c };
	pthread_mutex_lock(&lk_mu);
	if (scan_ended > since) {
		pthread_mutex_unlock(&lk_mu);
		pthread_mutex_unlock(&scan_mu);
		return 0;
	}
	unsigned long me = ++scan_begun;
	int64_t t0 = now_ms();
	for (struct lk_owner *o = owners; o; o = o->next)
		if (o->kind == OWN_FILE && !o->gone && o->refs > 0)
			h.n++;
	h.o = calloc((size_t)h.n + 1, sizeof *h.o);
	h.found = calloc((size_t)h.n + 1, sizeof *h.found);
	int k = 0;
	for (struct lk_owner *o = owners; o && h.o && h.found && k < h.n; o = o->next)
		if (o->kind == OWN_FILE && !o->gone && o->refs > 0) {
			/* only those whose fd number is stale */
			if (o->tgid > 0 && o->hint >= 0 && kcmp_file(getpid(), o->fd, o->tgid, o->hint) == 0)
				continue;
			o->refs++; /* pinned across the scan */
			h.o[k++] = o;
		}
	h.n = h.left = k;
	pthread_mutex_unlock(&lk_mu);
	if (h.n > 1)
		qsort(h.o, (size_t)h.n, sizeof *h.o, kcmp_order);
	if (h.n > 0 && c->sb && c->sb->guest_procfd >= 0) {
		h.budget_left = HSCAN_ENTRIES;
		h.budget_end_cpu_ms = thread_cpu_ms() + HSCAN_MS;
		h.budget_end_ms = now_ms() + wall_ms;
		h.first = true;
		task_for_each_leader(c->sb, hscan_leader, &h);
		h.first = false;
		if (h.left > 0 && !h.abandoned)
			task_for_each_leader(c->sb, hscan_leader, &h);
		if (h.left > 0 && !h.abandoned && !h.incomplete) {
			h.lknown = loader_dev(c->sb, c->task ? c->task->vtgid : 0, &h.ldev) == 0;
			hscan_refs(&h);
		}
	} else {
		h.incomplete = true; /* cannot tell: keep them */
	}
	pthread_mutex_lock(&lk_mu);
	for (int i = 0; i < h.n; i++) {
		struct lk_owner *o = h.o[i];
		if (h.found[i] || (h.incomplete && !h.abandoned) ||
		    (o->tgid > 0 && o->hint >= 0 && kcmp_file(getpid(), o->fd, o->tgid, o->hint) == 0)) {
			/* (found, or cannot tell, or re-keyed meanwhile by a
			 * request of its own: there) */
			o->seen_scan = me;
		} else if (!h.abandoned) {
			dbg("lock owner (description) held by no guest fd: its locks go");
			o->gone = true;
			drop_owner_locks(o);
		}
		owner_put(o);
	}
	if (!h.abandoned)
		scan_ended = me;
	scan_end_ms = now_ms();
	scan_took_ms = scan_end_ms - t0;
	lk_wake_all();
	pthread_mutex_unlock(&lk_mu);
	pthread_mutex_unlock(&scan_mu);
	free(h.o);
	free(h.found);
	return h.abandoned ? -EINTR : 0;
}

/* A request's one holder scan (lk_mu held on entry): lk_mu is dropped
 * for the scan and taken again; 0, or -EINTR with lk_mu NOT held (the
 * caller is gone). After it the request's presumed holders are known
 * (ax->want cleared) and it never scans again (*scanned). */
static int scan_unlocked(struct sc_call *c, struct alive_ctx *ax, bool *scanned, int64_t wall_ms)
{
	pthread_mutex_unlock(&lk_mu);
	if (holder_scan(c, ax->since, wall_ms) < 0)
		return -EINTR;
	*scanned = true;
	ax->want = false;
	pthread_mutex_lock(&lk_mu);
	return 0;
}

/* Drop every lock whose holder is gone (when the table is full). */
static void sweep(struct alive_ctx *ax)
{
	for (struct lk_lock *l = locks; l;) {
		if (!owner_alive(ax, l->own)) {
			drop_owner_locks(l->own);
			l = locks; /* the list changed: start over */
			continue;
		}
		l = l->next;
	}
}

static bool conflicts(const struct lk_lock *l, const struct lk_req *r, const struct lk_owner *own)
{
	if (l->cls != r->cls || l->dev != r->dev || l->ino != r->ino || l->own == own)
		return false;
	if (r->type == F_UNLCK || (l->type != F_WRLCK && r->type != F_WRLCK))
		return false;
	if (r->cls == LC_FLOCK)
		return true;
	return l->start <= r->end && r->start <= l->end;
}

/* The first conflicting lock whose holder is still there (stale ones are
 * dropped on the way), or NULL. */
/* The conflicting lock that starts first (what F_GETLK reports: Linux keeps
 * an owner's locks sorted by start), or NULL. */
static struct lk_lock *find_conflict(struct alive_ctx *ax, const struct lk_req *r, const struct lk_owner *own)
{
	struct lk_lock *first;
again:
	first = NULL;
	for (struct lk_lock *l = locks; l; l = l->next) {
		if (!conflicts(l, r, own))
			continue;
		if (!owner_alive(ax, l->own)) {
			drop_owner_locks(l->own);
			goto again;
		}
		if (!first || l->start < first->start)
			first = l;
	}
	return first;
}

/* Remember that POSIX owner o locks through guest fd r->guestfd. -1 if that
 * fd number already held another description (it was closed since). */
static int witness(struct lk_owner *o, const struct lk_req *r)
{
	for (int i = 0; i < o->nwit; i++)
		if (o->wit[i].fd == r->guestfd)
			return kcmp_file(getpid(), o->wit[i].dup, getpid(), r->ofd) == 0 ? 0 : -1;
	int d = fcntl(r->ofd, F_DUPFD_CLOEXEC, 0);
	if (d < 0)
		return 0;
	if (o->nwit == LK_WIT) {
		close(o->wit[0].dup);
		memmove(&o->wit[0], &o->wit[1], sizeof o->wit[0] * (LK_WIT - 1));
		o->nwit--;
	}
	o->wit[o->nwit].fd = r->guestfd;
	o->wit[o->nwit].dup = d;
	o->nwit++;
	return 0;
}

/* The caller's owner for r (found, or made with refs 0: the caller takes a
 * reference at once and puts it when done). NULL: out of memory. */
static struct lk_owner *owner_of(struct sc_call *c, const struct lk_req *r)
{
	struct task *t = c->task;

	if (r->ofd_owner) {
		for (struct lk_lock *l = locks; l; l = l->next)
			if (l->own->kind == OWN_FILE && !l->own->gone && l->dev == r->dev && l->ino == r->ino &&
			    kcmp_file(getpid(), l->own->fd, getpid(), r->ofd) == 0) {
				l->own->tgid = t->tgid;
				l->own->hint = r->guestfd;
				return l->own;
			}
	} else {
		for (struct lk_owner *o = owners; o; o = o->next) {
			if (o->kind != OWN_PROC || o->tgid != t->tgid || o->dev != r->dev ||
			    o->ino != r->ino)
				continue;
			if (!owner_alive(NULL, o) || witness(o, r) < 0) {
				dbg("lock owner %d: dropped at a new request through fd %d", o->tgid, r->guestfd);
				/* a dead process whose pid came back, or an fd
				 * of the file was closed: its locks are gone */
				drop_owner_locks(o);
				break;
			}
			return o;
		}
	}
	struct lk_owner *o = calloc(1, sizeof *o);
	if (!o)
		return NULL;
	o->kind = r->ofd_owner ? OWN_FILE : OWN_PROC;
	o->tgid = t->tgid;
	o->vpid = r->ofd_owner ? -1 : t->vtgid;
	o->hint = r->guestfd;
	if (r->ofd_owner)
		o->fd = fcntl(r->ofd, F_DUPFD_CLOEXEC, 0);
	else if (t->pidfd >= 0)
		o->fd = fcntl(t->pidfd, F_DUPFD_CLOEXEC, 0);
	else
		o->fd = (int)syscall(SYS_pidfd_open, t->tgid, 0);
	if (o->fd < 0) {
		free(o);
		return NULL;
	}
	o->dev = r->dev;
	o->ino = r->ino;
	if (!r->ofd_owner)
		witness(o, r);
	o->next = owners;
	owners = o;
	return o;
}

static struct lk_lock *new_lock(struct lk_owner *o, const struct lk_req *r, short type,
				int64_t s, int64_t e)
{
	struct lk_lock *l = calloc(1, sizeof *l);
	if (!l)
		return NULL;
	*l = (struct lk_lock){ .own = o, .cls = r->cls, .type = type, .start = s, .end = e,
			       .dev = r->dev, .ino = r->ino, .next = locks };
	o->refs++;
	locks = l;
	nlocks++;
	if (l->cls == LC_LEASE)
		__atomic_add_fetch(&nleases, 1, __ATOMIC_RELAXED);
	return l;
}

/* Apply a POSIX/OFD request of owner o (no conflict stands in the way). */
static int posix_apply(const struct lk_req *r, struct lk_owner *o)
{
	int64_t ns = r->start, ne = r->end;
	struct lk_lock *spare = NULL;

	for (struct lk_lock **pp = &locks; *pp;) {
		struct lk_lock *l = *pp;
		if (l->cls != LC_POSIX || l->own != o || l->dev != r->dev || l->ino != r->ino) {
			pp = &l->next;
			continue;
		}
		if (r->type != F_UNLCK && l->type == r->type) {
			/* same type: merge when overlapping or adjacent */
			if ((ne == LK_EOF || l->start <= ne + 1) && (ns == 0 || l->end >= ns - 1)) {
				if (l->start < ns)
					ns = l->start;
				if (l->end > ne)
					ne = l->end;
				lock_free(pp);
				continue;
			}
		} else if (l->start <= ne && ns <= l->end) {
			if (l->start < ns && l->end > ne) {
				/* split: keep the left part here, add the right part */
				if (!spare)
					spare = calloc(1, sizeof *spare);
				if (!spare)
					return -ENOLCK;
				*spare = *l;
				spare->start = ne + 1;
				spare->own->refs++;
				nlocks++;
				l->end = ns - 1;
				spare->next = l->next;
				l->next = spare;
				spare = NULL;
				pp = &l->next->next;
				continue;
			} else if (l->start < ns) {
				l->end = ns - 1;
			} else if (l->end > ne) {
				l->start = ne + 1;
			} else {
				lock_free(pp);
				continue;
			}
		}
		pp = &l->next;
	}
	if (r->type != F_UNLCK && !new_lock(o, r, r->type, ns, ne))
		return -ENOLCK;
	return 0;
}

/* Would process `who` waiting for `blocker` close a cycle of POSIX waiters?
 * (POSIX owners are per process and file: processes compare by tgid.) */
static bool deadlock(const struct lk_owner *who, const struct lk_owner *blocker)
{
	for (int depth = 0; blocker && depth < LK_MAXWAIT; depth++) {
		if (blocker->tgid == who->tgid)
			return true;
		const struct lk_owner *next = NULL;
		for (int i = 0; i < LK_MAXWAIT; i++)
			if (waiters[i].who && waiters[i].who->kind == OWN_PROC &&
			    waiters[i].who->tgid == blocker->tgid) {
				next = waiters[i].blocker;
				break;
			}
		if (!next || next->kind != OWN_PROC)
			return false;
		blocker = next;
	}
	return false;
}

static bool notif_gone(struct sc_call *c)
{
	uint64_t id = c->id;
	return c->notify_fd > 0 &&
	       ioctl(c->notify_fd, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) < 0 && errno == ENOENT;
}

/* A blocked lock call's look at its task, once a slice (look_due): -EINTR
 * (the notification is gone), -ERESTARTSYS_ (a signal is pending) or 0. */
static int wait_interrupted(struct sc_call *c, int64_t *next_look)
{
	if (!look_due(next_look))
		return 0;
	if (notif_gone(c))
		return -EINTR;
	if (task_wait_must_end(c->task))
		return -ERESTARTSYS_;
	return 0;
}

/* Set/clear a lock for the caller, waiting if r->wait. 0 or -errno.
 * *waited: it waited (gofer_wait_begin called; the caller ends it). */
static int lk_set_(struct sc_call *c, struct lk_req *r, bool *waited)
{
	int ret;
	int slot = -1;
	int64_t next_look = 0;

	pthread_once(&lk_once, lk_init);
	pthread_mutex_lock(&lk_mu);
	struct alive_ctx ax = { .since = scan_begun };
	bool scanned = false; /* (a holder scan since ax.since) */
	int nscans = 0;       /* this request's scans (scan_wall_ms) */
	for (;;) {
		struct lk_owner *o = owner_of(c, r);
		if (!o) {
			ret = -ENOLCK;
			break;
		}
		o->refs++; /* hold it across the steps below */
		if (r->cls == LC_FLOCK) {
			/* Linux: the old lock of this description goes first */
			for (struct lk_lock **pp = &locks; *pp; pp = &(*pp)->next) {
				struct lk_lock *l = *pp;
				if (l->cls == LC_FLOCK && l->own == o && l->dev == r->dev && l->ino == r->ino) {
					if (l->type == r->type) {
						owner_put(o);
						ret = 0;
						goto out;
					}
					lock_free(pp);
					lk_wake(r->dev, r->ino);
					break;
				}
			}
		}
		struct lk_lock *cf = find_conflict(&ax, r, o);
		if (!cf) {
			if (r->type == F_UNLCK) {
				ret = r->cls == LC_POSIX ? posix_apply(r, o) : 0;
			} else {
				if (nlocks + 2 > LK_MAX)
					sweep(&ax);
				if (nlocks + 2 > LK_MAX && ax.want && !scanned) {
					owner_put(o);
					goto rescan;
				}
				if (nlocks + 2 > LK_MAX) {
					snprintf(c->note, sizeof c->note, "lock table full (%d locks)", LK_MAX);
					ret = -ENOLCK;
				} else if (r->cls == LC_POSIX) {
					ret = posix_apply(r, o);
				} else {
					ret = new_lock(o, r, r->type, 0, LK_EOF) ? 0 : -ENOLCK;
				}
			}
			if (r->type == F_UNLCK || ret == 0)
				lk_wake(r->dev, r->ino);
			owner_put(o);
			break;
		}
		if (ax.want && !scanned) {
			/* a conflicting holder's fd number is stale: whether
			 * some guest fd still holds it is one scan of every fd,
			 * made outside lk_mu (holder_scan), then the request
			 * is looked at again */
			owner_put(o);
		rescan:
			if (scan_unlocked(c, &ax, &scanned, scan_wall_ms(r->wait, nscans++)) < 0)
				return -EINTR;
			continue;
		}
		if (!r->wait) {
			owner_put(o);
			ret = -EAGAIN;
			break;
		}
		if (r->cls == LC_POSIX && o->kind == OWN_PROC && cf->own->kind == OWN_PROC &&
		    deadlock(o, cf->own)) {
			owner_put(o);
			ret = -EDEADLK;
			break;
		}
		if (slot < 0)
			for (int i = 0; i < LK_MAXWAIT; i++)
				if (!waiters[i].who) {
					slot = i;
					break;
				}
		struct lk_owner *blocker = cf->own;
		blocker->refs++; /* its pointer stays valid in waiters[] */
		if (slot >= 0)
			waiters[slot] = (struct lk_waiter){ .who = o, .blocker = blocker };
		if (!*waited) {
			/* a wait for another task: this worker counts outside
			 * the pool's cap meanwhile (pipeline_wait_begin) */
			*waited = true;
			gofer_wait_begin();
		}
		wait_slice(r->dev, r->ino);
		if (slot >= 0)
			waiters[slot] = (struct lk_waiter){ 0 };
		owner_put(blocker);
		owner_put(o);
		pthread_mutex_unlock(&lk_mu);
		/* the guest waits killably in its notification: a signal stays
		 * pending, and the guest's kernel turns -ERESTARTSYS into EINTR
		 * or a restart as for a native wait (looked at once a slice,
		 * not at every wake-up: each change of the table wakes every
		 * waiter of the file's lk_cv bucket) */
		int stop = wait_interrupted(c, &next_look);
		if (stop)
			return stop;
		pthread_mutex_lock(&lk_mu);
		/* each slice looks at the holders afresh */
		ax = (struct alive_ctx){ .since = scan_begun };
		scanned = !rescan_due(); /* (a waiter scans at most so often) */
	}
out:
	pthread_mutex_unlock(&lk_mu);
	return ret;
}

static int lk_set(struct sc_call *c, struct lk_req *r)
{
	bool waited = false;
	int ret = lk_set_(c, r, &waited);
	if (waited)
		gofer_wait_end();
	return ret;
}

/* Duplicate guest fd `fd` and fill r's file identity. 0 or -EBADF. */
static int lk_file(struct sc_call *c, int fd, struct lk_req *r, int *accmode)
{
	struct stat st;
	int h = task_getfd(c->task, fd);
	if (h < 0)
		return -EBADF;
	int fl = fcntl(h, F_GETFL);
	/* an O_PATH fd: EBADF (the guest's is a placeholder's stand-in, access
	 * mode 3, on which the host would lock) */
	if (fstat(h, &st) < 0 || fl < 0 || (fl & O_PATH) ||
	    ((fl & O_ACCMODE) == 3 && vfs_fd_is_placeholder(VFS_OF(c), h))) {
		close(h);
		return -EBADF;
	}
	r->dev = st.st_dev;
	r->ino = st.st_ino;
	r->ofd = h;
	r->guestfd = fd;
	if (accmode)
		*accmode = fl & O_ACCMODE;
	return 0;
}

long sys_flock(struct sc_call *c)
{
	unsigned cmd = (unsigned)c->args[1];
	struct lk_req r = { .cls = LC_FLOCK, .start = 0, .end = LK_EOF, .ofd_owner = true };

	if (cmd & LOCK_MAND)
		return 0; /* Linux ignores these (with a warning) */
	switch (cmd & ~(unsigned)LOCK_NB) {
	case LOCK_SH:
		r.type = F_RDLCK;
		break;
	case LOCK_EX:
		r.type = F_WRLCK;
		break;
	case LOCK_UN:
		r.type = F_UNLCK;
		break;
	default:
		return -EINVAL;
	}
	r.wait = !(cmd & LOCK_NB);
	int ret = lk_file(c, (int)c->args[0], &r, NULL);
	if (ret < 0)
		return ret;
	ret = lk_set(c, &r);
	close(r.ofd);
	return ret == -EAGAIN ? -EWOULDBLOCK : ret;
}

/* struct flock (x86_64: 32 bytes) -> r's range; Linux's flock_to_posix_lock */
static int flock_range(const struct flock *l, int h, struct lk_req *r)
{
	int64_t base;
	struct stat st;

	switch (l->l_whence) {
	case SEEK_SET:
		base = 0;
		break;
	case SEEK_CUR:
		base = lseek(h, 0, SEEK_CUR);
		if (base < 0)
			base = 0; /* not seekable: f_pos stays 0 */
		break;
	case SEEK_END:
		if (fstat(h, &st) < 0)
			return -EBADF;
		base = st.st_size;
		break;
	default:
		return -EINVAL;
	}
	/* a start past OFFSET_MAX is EOVERFLOW, not a wrap to a negative
	 * start's EINVAL (review 34: SEEK_END with l_start INT64_MAX) */
	if (l->l_start > LK_EOF - base)
		return -EOVERFLOW;
	int64_t start = base + l->l_start;
	if (start < 0)
		return -EINVAL;
	if (l->l_len > 0) {
		if (l->l_len - 1 > LK_EOF - start)
			return -EOVERFLOW;
		r->start = start;
		r->end = start + (l->l_len - 1); /* (INT64_MAX + 1 - 1: no intermediate overflow) */
	} else if (l->l_len < 0) {
		if (start + l->l_len < 0)
			return -EINVAL;
		r->end = start - 1;
		r->start = start + l->l_len;
	} else {
		r->start = start;
		r->end = LK_EOF;
	}
	if (l->l_type != F_RDLCK && l->l_type != F_WRLCK && l->l_type != F_UNLCK)
		return -EINVAL;
	r->type = l->l_type;
	return 0;
}

static long lk_getlk(struct sc_call *c, struct lk_req *r, struct flock *l, uint64_t addr)
{
	pthread_once(&lk_once, lk_init);
	pthread_mutex_lock(&lk_mu);
	struct alive_ctx ax = { .since = scan_begun };
	bool scanned = false;
again:;
	struct lk_owner *o = owner_of(c, r);
	if (!o) {
		pthread_mutex_unlock(&lk_mu);
		return -ENOLCK;
	}
	o->refs++;
	struct lk_lock *cf = find_conflict(&ax, r, o);
	if (cf && ax.want && !scanned) {
		/* a holder's fd moved: one scan, outside lk_mu, then again */
		owner_put(o);
		if (scan_unlocked(c, &ax, &scanned, HSCAN_WALL_MS) < 0)
			return -EINTR;
		goto again;
	}
	if (cf) {
		l->l_type = cf->type;
		l->l_whence = SEEK_SET;
		l->l_start = cf->start;
		l->l_len = cf->end == LK_EOF ? 0 : cf->end - cf->start + 1;
		l->l_pid = cf->own->kind == OWN_FILE ? -1 : cf->own->vpid;
	} else {
		l->l_type = F_UNLCK;
	}
	owner_put(o);
	pthread_mutex_unlock(&lk_mu);
	return sc_write_guest(c, addr, l, sizeof *l);
}

/* ---- leases (F_SETLEASE, F_GETLEASE, the break at open and truncate) ----
 * Class LC_LEASE, owned by the open file description (OWN_FILE), never a
 * host lease. Linux's rules (fs/locks.c): a read lease needs the file open
 * for writing nowhere (this description included), a write lease needs no
 * other open description; an open that conflicts (any open of a write
 * lease's file, an open for writing or O_TRUNC, or truncate, of a read
 * lease's) sends the holder its break signal and waits until the lease is
 * gone or downgraded, or the sandbox's lease-break-time (procfs_lease_break_time) passes. */

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

struct open_scan {
	struct sandbox *sb;
	dev_t dev;
	ino_t ino;
	int ofd;                 /* our dup of the caller's description */
	bool writer;             /* some description of the file is open for writing */
	bool other;              /* some other description of the file is open */
	bool exec_q;             /* sc_exec_write_busy: writers of (dev, ino) only */
	bool collect;            /* and every file open for writing, into wset (wr_rebuild) */
	bool incomplete;         /* some fd table could not be read whole */
	struct sc_call *c;       /* lease_set: its caller (the scan ends when it is gone) */
	bool abandoned;          /* ...and it was gone */
	unsigned long seen;      /* fds looked at (the check's count) */
	struct wrs *wset;        /* collect: every file open for writing */
};

/* fdinfo's "flags:" (octal) and "ino:" of guest fd `fd` of process vpid */
static int fd_info(struct sandbox *sb, pid_t vpid, int fd, int *flags, unsigned long *ino)
{
	char path[48], buf[512];
	snprintf(path, sizeof path, "%d/fdinfo/%d", vpid, fd);
	if (read_text_at(sb->guest_procfd, path, buf, sizeof buf) < 0)
		return -1;
	char *p = strstr(buf, "flags:");
	char *q = strstr(buf, "\nino:");
	if (!p || !q)
		return -1;
	*flags = (int)strtol(p + 6, NULL, 8);
	*ino = strtoul(q + 5, NULL, 10);
	return 0;
}

/* The guest fd numbers of process vpid, however many (*fds: fixed, or
 * malloc'd when it holds more than 1024; the caller frees it if it is not
 * fixed): the count, -1 if gone, -2 past 1<<20 (more than Linux's default
 * nr_open allows). Before red team 22 a table past 1024 was "cannot tell"
 * and a program open for writing in such a process ran. */
static int list_fds_all(struct sandbox *sb, pid_t vpid, int *fixed, int **fds)
{
	*fds = fixed;
	int n = sc_list_fds(sb, vpid, fixed, 1024);
	for (int max = 1 << 14; n == -2 && max <= 1 << 20; max <<= 2) {
		int *v = realloc(*fds == fixed ? NULL : *fds, (size_t)max * sizeof *v);
		if (!v)
			break;
		*fds = v;
		n = sc_list_fds(sb, vpid, v, max);
	}
	return n;
}

/* A set of files (dev, ino), open addressing with linear probing, grown
 * by doubling up to SC_WRITERS_MAX entries (then full: wrs_add -1). */
struct wr_id {
	dev_t dev;
	ino_t ino;                /* 0: a free slot */
	unsigned long gen;        /* (the table's: wr_gen when noted) */
};
struct wrs {
	struct wr_id *v;
	unsigned cap, n;          /* slots (a power of 2), entries */
};

/* the table's size (tests: MOAT_TEST_WRITERS_MAX, smaller, so that a
 * test reaches a full table with a few hundred files) */
static unsigned wr_max = SC_WRITERS_MAX;
static pthread_once_t wr_once = PTHREAD_ONCE_INIT;
static void wr_init(void)
{
	const char *e = getenv("MOAT_TEST_WRITERS_MAX");
	long v = e ? strtol(e, NULL, 10) : 0;
	if (v > 0 && v < SC_WRITERS_MAX)
		wr_max = (unsigned)v;
}

static unsigned wrs_hash(dev_t dev, ino_t ino, unsigned cap)
{
	uint64_t h = (uint64_t)ino * 0x9e3779b97f4a7c15ull ^ (uint64_t)dev * 0xc2b2ae3d27d4eb4full;
	return (unsigned)(h >> 32) & (cap - 1);
}

static struct wr_id *wrs_find(const struct wrs *w, dev_t dev, ino_t ino)
{
	if (!w->cap || !ino)
		return NULL;
	for (unsigned i = wrs_hash(dev, ino, w->cap);; i = (i + 1) & (w->cap - 1)) {
		if (!w->v[i].ino)
			return NULL;
		if (w->v[i].ino == ino && w->v[i].dev == dev)
			return &w->v[i];
	}
}

/* Add or renew (gen). 0, or -1 when the set is full (SC_WRITERS_MAX) or
 * memory is short. */
static int wrs_add(struct wrs *w, dev_t dev, ino_t ino, unsigned long gen)
{
	struct wr_id *e = wrs_find(w, dev, ino);
	if (e) {
		e->gen = gen;
		return 0;
	}
	if (!ino)
		return 0;
	if (w->n >= wr_max)
		return -1;
	if ((w->n + 1) * 2 > w->cap) { /* at most half full */
		unsigned nc = w->cap ? w->cap * 2 : 64;
		struct wr_id *nv = calloc(nc, sizeof *nv);
		if (!nv)
			return -1;
		for (unsigned i = 0; i < w->cap; i++)
			if (w->v[i].ino) {
				unsigned j = wrs_hash(w->v[i].dev, w->v[i].ino, nc);
				while (nv[j].ino)
					j = (j + 1) & (nc - 1);
				nv[j] = w->v[i];
			}
		free(w->v);
		w->v = nv;
		w->cap = nc;
	}
	unsigned i = wrs_hash(dev, ino, w->cap);
	while (w->v[i].ino)
		i = (i + 1) & (w->cap - 1);
	w->v[i] = (struct wr_id){ dev, ino, gen };
	w->n++;
	return 0;
}

/* Remove e (an entry of w): the run after it moves back (no tombstones). */
static void wrs_del(struct wrs *w, struct wr_id *e)
{
	unsigned i = (unsigned)(e - w->v), m = w->cap - 1;
	w->v[i].ino = 0;
	w->n--;
	for (unsigned j = (i + 1) & m; w->v[j].ino; j = (j + 1) & m) {
		unsigned h = wrs_hash(w->v[j].dev, w->v[j].ino, w->cap);
		/* j's entry may fill the hole at i when its home h is not in (i, j] */
		if (((j - h) & m) >= ((j - i) & m)) {
			w->v[i] = w->v[j];
			w->v[j].ino = 0;
			i = j;
		}
	}
}

static void wrs_free(struct wrs *w)
{
	free(w->v);
	*w = (struct wrs){ 0 };
}

static void wset_add(struct open_scan *s, dev_t dev, ino_t ino)
{
	if (wrs_add(s->wset, dev, ino, 0) < 0)
		s->incomplete = true; /* more than the table holds: no rebuild */
}

/* Every guest fd of every guest process: linear in what the guest holds
 * (12 processes of 15,000 fds each: 2.3 s a scan). So it runs under no
 * lock of this file, and a lease_set scan ends once its caller's
 * notification is gone (checked every SCAN_CHECK_EVERY fds). */
#define SCAN_CHECK_EVERY 1024
static int scan_opens(struct task *t, void *arg)
{
	struct open_scan *s = arg;
	int fixed[1024], *fds;
	int n = list_fds_all(s->sb, t->vtgid, fixed, &fds);
	if (n == -2) {
		if (fds != fixed)
			free(fds);
		s->incomplete = true;
		if (s->exec_q)
			return 0; /* cannot tell: the exec runs, as before */
		s->writer = s->other = true; /* cannot tell: as if open */
		return 1;
	}
	int stop = 0;
	for (int i = 0; i < n && !stop; i++) {
		int fl;
		unsigned long ino;
		struct stat st;
		if (s->c && ++s->seen % SCAN_CHECK_EVERY == 0 && notif_gone(s->c)) {
			s->abandoned = true; /* its answer goes nowhere */
			stop = 1;
			break;
		}
		if (fd_info(s->sb, t->vtgid, fds[i], &fl, &ino) < 0 || (fl & O_PATH))
			continue;
		int wr = (fl & O_ACCMODE) == O_WRONLY || (fl & O_ACCMODE) == O_RDWR;
		if (ino != (unsigned long)s->ino && !(s->collect && wr))
			continue;
		int h = task_getfd(t, fds[i]);
		if (h < 0)
			continue;
		int stok = fstat(h, &st) == 0;
		bool same = stok && st.st_dev == s->dev && st.st_ino == s->ino;
		if (s->collect && wr && stok && S_ISREG(st.st_mode))
			wset_add(s, st.st_dev, st.st_ino);
		if (same && (fl & O_ACCMODE) != O_RDONLY)
			s->writer = true;
		/* (sc_exec_write_busy asks for writers only: no description to compare) */
		if (same && !s->exec_q && kcmp_file(getpid(), s->ofd, getpid(), h) != 0)
			s->other = true;
		close(h);
		if (s->exec_q && s->writer && !s->collect)
			stop = 1;
	}
	if (fds != fixed)
		free(fds);
	return stop;
}

/* ---- ETXTBSY at exec (sc.h) ---- */

static pthread_mutex_t wr_mu = PTHREAD_MUTEX_INITIALIZER;
static struct wrs wr_tab;
/* A note was dropped (the table was full) while its file may still be open
 * for writing: until a scan has seen every writer again, an exec of a file
 * not noted scans too (red team 22: 256 other files opened for writing, and
 * an exec of the first, still open, ran). wr_gen counts the notes (each
 * entry keeps its own), so that a scan's rebuild keeps those made
 * meanwhile. The table grows to SC_WRITERS_MAX files (red team 42: with a
 * ring of 256, 300 files open for writing made every exec scan every guest
 * fd, 1.4-2.9 s an exec at 180,000 fds). */
static bool wr_lost;
static unsigned long wr_gen, wr_evicted; /* (wr_gen at the last note dropped) */

static void note_write_open(dev_t dev, ino_t ino)
{
	pthread_once(&wr_once, wr_init);
	pthread_mutex_lock(&wr_mu);
	if (wrs_add(&wr_tab, dev, ino, ++wr_gen) < 0) {
		wr_lost = true;
		wr_evicted = wr_gen;
	}
	pthread_mutex_unlock(&wr_mu);
}

void sc_note_write_fd(int fd)
{
	struct stat st;
	int fl = fcntl(fd, F_GETFL);
	/* O_WRONLY and O_RDWR only: an O_PATH stand-in's mode 3 writes nothing */
	if (fl < 0 || (fl & O_PATH) || ((fl & O_ACCMODE) != O_WRONLY && (fl & O_ACCMODE) != O_RDWR))
		return;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
		note_write_open(st.st_dev, st.st_ino);
}

int sc_exec_write_busy(struct sandbox *sb, dev_t dev, ino_t ino)
{
	if (!ino)
		return 0;
	pthread_mutex_lock(&wr_mu);
	bool found = wrs_find(&wr_tab, dev, ino) != NULL;
	bool lost = wr_lost;
	unsigned long gen = wr_gen;
	pthread_mutex_unlock(&wr_mu);
	if (!found && !lost)
		return 0; /* never opened for writing by the sandbox (as far as noted) */
	struct open_scan *q = xcalloc(1, sizeof *q);
	struct wrs ws = { 0 };
	*q = (struct open_scan){ .sb = sb, .dev = dev, .ino = ino, .ofd = -1, .exec_q = true,
				 .collect = lost, .wset = &ws };
	task_for_each_leader(sb, scan_opens, q);
	pthread_mutex_lock(&wr_mu);
	/* every file open for writing now, and the notes made since the scan
	 * began: the table again, if they fit */
	for (unsigned i = 0; lost && i < wr_tab.cap; i++)
		if (wr_tab.v[i].ino && wr_tab.v[i].gen > gen)
			wset_add(q, wr_tab.v[i].dev, wr_tab.v[i].ino);
	if (lost && !q->incomplete && wr_evicted <= gen) {
		wrs_free(&wr_tab);
		wr_tab = ws;
		ws = (struct wrs){ 0 };
		for (unsigned i = 0; i < wr_tab.cap; i++)
			wr_tab.v[i].gen = wr_gen;
		wr_lost = false;
	} else if (!q->writer) {
		struct wr_id *e = wrs_find(&wr_tab, dev, ino);
		if (e && e->gen <= gen)
			wrs_del(&wr_tab, e); /* (a note made meanwhile stays) */
	}
	pthread_mutex_unlock(&wr_mu);
	wrs_free(&ws);
	int busy = q->writer;
	free(q);
	return busy;
}

/* the lease of description r->ofd on its file, or NULL */
static struct lk_lock *lease_of(const struct lk_req *r)
{
	for (struct lk_lock *l = locks; l; l = l->next)
		if (l->cls == LC_LEASE && l->dev == r->dev && l->ino == r->ino &&
		    kcmp_file(getpid(), l->own->fd, getpid(), r->ofd) == 0)
			return l;
	return NULL;
}

/* Send the holder of lease l its break signal (F_SETSIG's, else SIGIO): to
 * the sandbox process that holds the description, never anyone else. */
static void lease_signal(struct sandbox *sb, struct lk_lock *l)
{
	struct lk_owner *o = l->own;
	int sig = fcntl(o->fd, F_GETSIG);
	if (sig <= 0)
		sig = SIGIO;
	struct task *t = task_get(sb, o->tgid);
	if (!t)
		return;
	int pfd = (int)syscall(SYS_pidfd_open, o->tgid, 0);
	/* the pidfd is of a process that still holds the description */
	if (pfd >= 0 && o->hint >= 0 && kcmp_file(getpid(), o->fd, o->tgid, o->hint) == 0)
		syscall(SYS_pidfd_send_signal, pfd, sig, NULL, 0);
	if (pfd >= 0)
		close(pfd);
	task_put(t);
}

static long lease_set(struct sc_call *c, struct lk_req *r, long arg)
{
	struct stat st;
	struct vfs_node *n = calloc(1, sizeof *n);
	if (!n)
		return -ENOMEM;
	if (vfs_fd_node(VFS_OF(c), c->task, r->guestfd, n, NULL) == 0 && !n->opath) {
		st = n->st;
	} else if (fstat(r->ofd, &st) < 0) {
		free(n);
		return -EBADF;
	} else {
		st.st_uid = c->task->cred.fsuid; /* a pipe or socket: the caller's */
	}
	free(n);
	if (arg != F_RDLCK && arg != F_WRLCK && arg != F_UNLCK)
		return -EINVAL;
	if (!vfs_owner(c->task, &st) && !cred_capable(&c->task->cred, CAP_LEASE_)) {
		snprintf(c->note, sizeof c->note, "F_SETLEASE: not the owner, no CAP_LEASE");
		return -EACCES;
	}
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	r->cls = LC_LEASE;
	r->ofd_owner = true;
	r->start = 0;
	r->end = LK_EOF;
	pthread_once(&lk_once, lk_init);
	/* Who holds the file open is read from every guest fd table, outside
	 * lk_mu: the scan is linear in the guest's fds, and under the mutex
	 * it stalled every lock and lease call of the sandbox (red team 42:
	 * 180,000 fds, an F_SETLEASE took 2.3 s and another thread's flock of
	 * an unrelated file waited 1.8 s of it). Nothing in the lock table
	 * decides what it finds (opens run without lk_mu: under it the scan
	 * was no more atomic against them); the table's own checks are made
	 * under the mutex after it, on the table as it is then. */
	struct open_scan s = { .sb = c->sb, .dev = r->dev, .ino = r->ino, .ofd = r->ofd, .c = c };
	if (arg != F_UNLCK && c->sb && c->sb->guest_procfd >= 0) {
		task_for_each_leader(c->sb, scan_opens, &s);
		if (s.abandoned)
			return -EINTR; /* the caller is gone */
	}
	pthread_mutex_lock(&lk_mu);
	struct alive_ctx ax = { .since = scan_begun };
	bool scanned = false;
	long ret;
	struct lk_lock *mine;
relook:
	ret = 0;
	mine = lease_of(r);
	if (arg == F_UNLCK) {
		if (mine) {
			lock_remove(mine);
			lk_wake(r->dev, r->ino);
		} else {
			ret = -EAGAIN; /* no lease to drop: generic_delete_lease's (review 34) */
		}
		goto out;
	}
	/* during a break only a downgrade to what the breaker waits for */
	if (mine && mine->breaking && (mine->brk == F_UNLCK || arg == F_WRLCK)) {
		ret = -EAGAIN;
		goto out;
	}
again:
	for (struct lk_lock *l = locks; l; l = l->next) {
		if (l->cls != LC_LEASE || l == mine || l->dev != r->dev || l->ino != r->ino)
			continue;
		if (!owner_alive(&ax, l->own)) {
			drop_owner_locks(l->own);
			goto again;
		}
		if (arg == F_WRLCK || l->type == F_WRLCK || l->breaking) {
			if (ax.want && !scanned) {
				/* a holder's fd moved: one scan outside lk_mu */
				if (scan_unlocked(c, &ax, &scanned, HSCAN_WALL_MS) < 0)
					return -EINTR;
				goto relook;
			}
			ret = -EAGAIN;
			goto out;
		}
	}
	if ((arg == F_RDLCK && s.writer) || (arg == F_WRLCK && s.other)) {
		ret = -EAGAIN;
		goto out;
	}
	if (mine) {
		mine->type = (short)arg;
		if (mine->breaking && mine->brk == F_RDLCK)
			mine->breaking = false; /* downgraded as the breaker asked */
		mine->own->tgid = c->task->tgid;
		mine->own->hint = r->guestfd;
	} else {
		if (nlocks + 1 > LK_MAX)
			sweep(&ax);
		if (nlocks + 1 > LK_MAX && ax.want && !scanned) {
			if (scan_unlocked(c, &ax, &scanned, HSCAN_WALL_MS) < 0)
				return -EINTR;
			goto relook;
		}
		struct lk_owner *o = nlocks + 1 > LK_MAX ? NULL : owner_of(c, r);
		if (!o) {
			snprintf(c->note, sizeof c->note, "lock table full (%d locks)", LK_MAX);
			ret = -ENOLCK;
			goto out;
		}
		o->refs++;
		mine = new_lock(o, r, (short)arg, 0, LK_EOF);
		owner_put(o);
		if (!mine) {
			ret = -ENOLCK;
			goto out;
		}
	}
	/* Linux: the lease holder gets the description's SIGIO (F_SETOWN) */
	fcntl(r->ofd, F_SETOWN, c->task->tgid);
	lk_wake(r->dev, r->ino);
out:
	pthread_mutex_unlock(&lk_mu);
	return ret;
}

static long lease_get(struct lk_req *r)
{
	if (!__atomic_load_n(&nleases, __ATOMIC_RELAXED))
		return F_UNLCK;
	pthread_once(&lk_once, lk_init);
	pthread_mutex_lock(&lk_mu);
	struct lk_lock *l = lease_of(r);
	long ret = !l ? F_UNLCK : l->breaking ? l->brk : l->type;
	pthread_mutex_unlock(&lk_mu);
	return ret;
}

static int lease_break_(struct sc_call *c, dev_t dev, ino_t ino, int flags, bool *waited);

int lease_break(struct sc_call *c, dev_t dev, ino_t ino, int flags)
{
	if (!__atomic_load_n(&nleases, __ATOMIC_RELAXED))
		return 0;
	bool waited = false;
	int ret = lease_break_(c, dev, ino, flags, &waited);
	if (waited)
		gofer_wait_end();
	return ret;
}

static int lease_break_(struct sc_call *c, dev_t dev, ino_t ino, int flags, bool *waited)
{
	bool wr = (flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC);
	short want = wr ? F_UNLCK : F_RDLCK;
	int64_t next_look = 0;

	pthread_once(&lk_once, lk_init);
	pthread_mutex_lock(&lk_mu);
	struct alive_ctx ax = { .since = scan_begun };
	bool scanned = false;
	int nscans = 0; /* (scan_wall_ms) */
	for (;;) {
		bool wait = false;
	again:
		for (struct lk_lock *l = locks; l; l = l->next) {
			if (l->cls != LC_LEASE || l->dev != dev || l->ino != ino)
				continue;
			if (l->type == F_RDLCK && !wr)
				continue;
			if (!owner_alive(&ax, l->own)) {
				drop_owner_locks(l->own);
				goto again;
			}
			if (ax.want && !scanned) {
				/* its fd moved: find it (outside lk_mu) before
				 * the break signal goes to its holder; open is
				 * answered by the RECV lead, passed on first */
				pthread_mutex_unlock(&lk_mu);
				if (!*waited) {
					*waited = true;
					gofer_wait_begin();
				}
				if (holder_scan(c, ax.since, scan_wall_ms(!(flags & O_NONBLOCK), nscans++)) < 0)
					return -EINTR;
				scanned = true;
				ax.want = false;
				pthread_mutex_lock(&lk_mu);
				goto again;
			}
			if (!l->breaking || (want == F_UNLCK && l->brk == F_RDLCK)) {
				if (!l->breaking)
					l->brk_end = now_ms() + procfs_lease_break_time(c->sb) * 1000;
				l->breaking = true;
				l->brk = want;
				dbg("lease %p break to %d by flags %#x", (void *)l, want, flags);
				lease_signal(c->sb, l);
			} else if (now_ms() >= l->brk_end) {
				/* the holder did not answer in time: the break is made */
				if (l->brk == F_RDLCK) {
					l->type = F_RDLCK;
					l->breaking = false;
				} else {
					lock_remove(l);
				}
				lk_wake(dev, ino);
				goto again;
			}
			wait = true;
		}
		if (!wait)
			break;
		if (flags & O_NONBLOCK) {
			pthread_mutex_unlock(&lk_mu);
			return -EWOULDBLOCK;
		}
		/* open is answered by the pipeline's RECV lead: pass it on
		 * before waiting, or no other guest call is served; and count
		 * outside the pool's cap while the holder takes its time */
		if (!*waited) {
			*waited = true;
			gofer_wait_begin();
		}
		wait_slice(dev, ino);
		pthread_mutex_unlock(&lk_mu);
		int stop = wait_interrupted(c, &next_look);
		if (stop)
			return stop;
		pthread_mutex_lock(&lk_mu);
		ax = (struct alive_ctx){ .since = scan_begun };
		scanned = !rescan_due(); /* (a waiter scans at most so often) */
	}
	pthread_mutex_unlock(&lk_mu);
	return 0;
}

/* F_NOTIFY's check on the fd's object (hostfd: the guest fd's dup): EACCES
 * where inotify_add_watch is (vfs_watch_refused). Another task sharing
 * the fd table could swap the fd number between this check and the native
 * call (dup2): refused while one does (sc_fdtable_shared, sys_fcntl, asked
 * before the pin). */
static int notify_ok(struct sc_call *c, int hostfd)
{
	cleanup_free struct vfs_node *n = xmalloc(sizeof *n);

	if (vfs_host_fd_node(VFS_OF(c), c->task, hostfd, n) < 0)
		return 0; /* native: the kernel's answer (ENOTDIR...) */
	int r = vfs_watch_refused(n);
	if (r < 0)
		return r;
	/* a host directory: DN_ACCESS (and on the device mount DN_MODIFY)
	 * would come for the host's own reads (writes) of its entries, as
	 * inotify's read events (vfs_watch_host_events; red team 32). The
	 * call runs natively with the guest's argument, so it is refused. */
	uint32_t hostev = vfs_watch_host_events(n);
	unsigned long arg = (unsigned long)c->args[2];
	if (((hostev & IN_ACCESS) && (arg & DN_ACCESS)) || ((hostev & IN_MODIFY) && (arg & DN_MODIFY)))
		return -EACCES;
	return 0;
}

long sys_fcntl(struct sc_call *c)
{
	int cmd = (int)c->args[1];
	int fd = (int)c->args[0];
	uint64_t addr = c->args[2];
	struct lk_req r = { .cls = LC_POSIX };
	struct flock l;
	int acc = 0, ret;

	if (cmd == F_SETOWN || cmd == F_SETOWN_EX)
		return sigio_setown_fcntl(c);
	if (cmd == F_SETSIG)
		return sigio_setsig_fcntl(c);
	if (cmd == F_SETFL)
		return sigio_setfl_fcntl(c); /* with O_ASYNC (the filter's rule) */
	switch (cmd) {
	case F_GETLEASE: case F_SETLEASE: case F_NOTIFY: case F_GETLK: case F_SETLK: case F_SETLKW:
	case F_OFD_GETLK: case F_OFD_SETLK: case F_OFD_SETLKW:
		break;
	default:
		/* another command (the filter sends none since its F_SETFL
		 * rule is one conjunction of command and O_ASYNC, fcntl39; a
		 * number forced to the sentry may): the kernel's, decided on
		 * registers */
		c->cont = 1;
		return 0;
	}
	/* F_NOTIFY: the table's other users looked for before the file is
	 * pinned (sc_fdtable_shared: one that dup2s after the pin and then
	 * leaves the table is not seen by a look after it) */
	int shared = cmd == F_NOTIFY && ((uint32_t)c->args[2] & ~(uint32_t)DN_MULTISHOT) &&
		     sc_fdtable_shared(c); /* (a mask with no event: below) */
	ret = lk_file(c, fd, &r, &acc);
	if (ret < 0)
		return ret;
	switch (cmd) {
	case F_GETLEASE:
		ret = (int)lease_get(&r);
		goto out;
	case F_NOTIFY:
		/* dnotify on a directory the guest holds: it learns that the
		 * directory changed, which it may already list and watch with
		 * inotify; the signal goes to the caller. Native (the checked
		 * values are registers: fd, command, mask), but not on a
		 * directory inotify refuses (one directly holding a hidden
		 * name: on a host-backed mount its DN_ACCESS/DN_MODIFY came
		 * for the host's own reads and writes there, e.g. every read of
		 * /etc/shadow under --overlay none; red team 27) */
		ret = notify_ok(c, r.ofd);
		sc_fdtable_test_delay();
		if (!ret && shared) {
			/* native on the number checked: a task sharing the fd
			 * table could dup2 a refused directory there first. A
			 * mask with no event (0 or DN_MULTISHOT alone, the
			 * kernel's unsigned int: a removal, dnotify_flush) sets
			 * nothing on any directory: native whatever the number
			 * holds (Python's test_fcntl_64_bit, run by a threaded
			 * test runner) */
			snprintf(c->note, sizeof c->note, "F_NOTIFY: the fd table has other users");
			ret = -EPERM;
		} else if (!ret) {
			c->cont = 1;
		}
		goto out;
	case F_SETLEASE:
		ret = (int)lease_set(c, &r, (long)(int)addr);
		goto out;
	case F_GETLK:
	case F_SETLK:
	case F_SETLKW:
	case F_OFD_GETLK:
	case F_OFD_SETLK:
	case F_OFD_SETLKW:
		break;
	default:
		ret = -EINVAL; /* the filter sends nothing else */
		goto out;
	}
	/* copied in once; every decision below is made on this copy */
	if (sc_read_guest(c, addr, &l, sizeof l) < 0) {
		ret = -EFAULT;
		goto out;
	}
	bool ofd = cmd == F_OFD_GETLK || cmd == F_OFD_SETLK || cmd == F_OFD_SETLKW;
	r.ofd_owner = ofd;
	if (cmd == F_GETLK || cmd == F_OFD_GETLK) {
		if (l.l_type != F_RDLCK && l.l_type != F_WRLCK) {
			ret = -EINVAL;
			goto out;
		}
		ret = flock_range(&l, r.ofd, &r);
		if (!ret && ofd && l.l_pid != 0)
			ret = -EINVAL;
		if (!ret)
			ret = (int)lk_getlk(c, &r, &l, addr);
		goto out;
	}
	ret = flock_range(&l, r.ofd, &r);
	if (ret)
		goto out;
	if ((r.type == F_RDLCK && acc == O_WRONLY) || (r.type == F_WRLCK && acc == O_RDONLY)) {
		ret = -EBADF;
		goto out;
	}
	if (ofd && l.l_pid != 0) {
		ret = -EINVAL;
		goto out;
	}
	r.wait = cmd == F_SETLKW || cmd == F_OFD_SETLKW;
	ret = lk_set(c, &r);
out:
	close(r.ofd);
	return ret;
}
