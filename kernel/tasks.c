/* kernel/tasks.c - the task table.
 *
 * Tasks are keyed by host tid in a small open hash. The ptrace thread creates
 * and removes them; worker threads look them up (counted references) for every
 * notification. One reader-writer lock (common/brlock.h) guards the table;
 * tasks carry their own locks.
 */
#include "kernel/task.h"
#include "common/brlock.h"
#include "common/log.h"
#include "common/util.h"
#include "platform/platform.h"

#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define NBUCKETS 1024

struct tnode {
	struct task *t;
	struct tnode *next;
};

/* readers: the look-ups of every trapped call (task_get), counts and
 * snapshots; writer: insert, remove, rekey (common/brlock.h: the readers on
 * several CPUs at once share no cache line) */
static struct brlock tab_lock = BRLOCK_INITIALIZER;
static struct tnode *buckets[NBUCKETS];
static int ntasks;
/* the tasks whose pd_parent is set, by it (hb(pd_parent)), linked through
 * pd_next/pd_pprev; under tab_lock like the table: a reaped thread's
 * children are found without a scan (task_pdeath_reparent) */
static struct task *pdbuckets[NBUCKETS];
/* entries that are not their group's leader (tid != tgid): none, and
 * task_group_others answers without a scan (every single-threaded reap) */
static int nonleaders;

static unsigned hb(pid_t tid) { return (unsigned)tid % NBUCKETS; }

static void (*pexec_free)(struct pending_exec *);

void task_set_pexec_free(void (*fn)(struct pending_exec *))
{
	pexec_free = fn;
}

/* every live fs_ctx (fs_ctx_for_each); a leaf lock (fs_ctx_new may take
 * it with another fs_ctx's lock held: fs_copy_locked; nothing takes an
 * fs_ctx's lock while holding it) */
static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct fs_ctx *reg_head;

struct fs_ctx *fs_ctx_new(const char *cwd, mode_t umask_)
{
	struct fs_ctx *fs = xcalloc(1, sizeof *fs);
	atomic_init(&fs->refs, 1);
	pthread_mutex_init(&fs->lock, NULL);
	snprintf(fs->cwd, sizeof fs->cwd, "%s", cwd);
	fs->cwd_fd = -1;
	fs->root_fd = -1;
	fs->umask = umask_;
	pthread_mutex_lock(&reg_lock);
	fs->reg_next = reg_head;
	if (reg_head)
		reg_head->reg_prev = fs;
	reg_head = fs;
	pthread_mutex_unlock(&reg_lock);
	return fs;
}

void fs_ctx_for_each(void (*fn)(struct fs_ctx *fs, void *arg), void *arg)
{
	struct fs_ctx **all = NULL;
	size_t n = 0, cap = 0;

	pthread_mutex_lock(&reg_lock);
	for (struct fs_ctx *fs = reg_head; fs; fs = fs->reg_next) {
		int r = atomic_load(&fs->refs);
		/* one whose last reference went is being freed: not counted */
		while (r > 0 && !atomic_compare_exchange_weak(&fs->refs, &r, r + 1))
			;
		if (r <= 0)
			continue;
		if (n == cap) {
			size_t nc = cap ? 2 * cap : 16;
			struct fs_ctx **na = realloc(all, nc * sizeof *all);
			if (!na) {
				atomic_fetch_sub(&fs->refs, 1); /* others hold it too */
				break;
			}
			all = na;
			cap = nc;
		}
		all[n++] = fs;
	}
	pthread_mutex_unlock(&reg_lock);
	for (size_t i = 0; i < n; i++) {
		fn(all[i], arg);
		fs_ctx_put(all[i]);
	}
	free(all);
}

void fs_ctx_put(struct fs_ctx *fs)
{
	if (fs && atomic_fetch_sub(&fs->refs, 1) == 1) {
		pthread_mutex_lock(&reg_lock);
		if (fs->reg_prev)
			fs->reg_prev->reg_next = fs->reg_next;
		else
			reg_head = fs->reg_next;
		if (fs->reg_next)
			fs->reg_next->reg_prev = fs->reg_prev;
		pthread_mutex_unlock(&reg_lock);
		pthread_mutex_destroy(&fs->lock);
		if (fs->cwd_fd >= 0)
			close(fs->cwd_fd);
		if (fs->root_fd >= 0)
			close(fs->root_fd);
		free(fs->root);
		free(fs);
	}
}

/* A copy of fs (locked by the caller), as fork makes one */
static struct fs_ctx *fs_copy_locked(const struct fs_ctx *fs)
{
	struct fs_ctx *n = fs_ctx_new(fs->cwd, fs->umask);

	if (fs->cwd_fd >= 0)
		n->cwd_fd = fcntl(fs->cwd_fd, F_DUPFD_CLOEXEC, 0);
	n->cwd_dev = fs->cwd_dev;
	n->cwd_ino = fs->cwd_ino;
	if (fs->root) {
		n->root = xstrdup(fs->root);
		atomic_store(&n->rooted, 1);
		if (fs->root_fd >= 0)
			n->root_fd = fcntl(fs->root_fd, F_DUPFD_CLOEXEC, 0);
		n->root_dev = fs->root_dev;
		n->root_ino = fs->root_ino;
	}
	return n;
}

void task_unshare_fs(struct task *t)
{
	struct fs_ctx *old = t->fs;

	if (atomic_load(&old->refs) <= 1)
		return;
	pthread_mutex_lock(&old->lock);
	struct fs_ctx *n = fs_copy_locked(old);
	pthread_mutex_unlock(&old->lock);
	/* readers of another task's fs_ctx take their reference under t->lock
	 * (task_fs_get): before red-team round 8 they used the pointer bare,
	 * and the old one could be freed (its other sharer exiting) under them */
	pthread_mutex_lock(&t->lock);
	t->fs = n;
	pthread_mutex_unlock(&t->lock);
	fs_ctx_put(old);
}

struct fs_ctx *task_fs_get(struct task *t)
{
	pthread_mutex_lock(&t->lock);
	struct fs_ctx *fs = t->fs;
	if (fs)
		atomic_fetch_add(&fs->refs, 1);
	pthread_mutex_unlock(&t->lock);
	return fs;
}

struct text_q { dev_t dev; ino_t ino; };

static int text_visit(struct task *t, void *arg)
{
	const struct text_q *q = arg;
	int hit;

	if (atomic_load(&t->exited))
		return 0;
	pthread_mutex_lock(&t->lock);
	hit = (t->exe_ino == q->ino && t->exe_dev == q->dev) ||
	      (t->interp_ino == q->ino && t->interp_dev == q->dev);
	pthread_mutex_unlock(&t->lock);
	return hit;
}

int task_text_busy(struct sandbox *sb, dev_t dev, ino_t ino)
{
	struct text_q q = { dev, ino };

	return ino && task_for_each_leader(sb, text_visit, &q) != 0;
}

int task_fs_rooted(struct task *t)
{
	pthread_mutex_lock(&t->lock);
	int r = t->fs && atomic_load(&t->fs->rooted);
	pthread_mutex_unlock(&t->lock);
	return r;
}

int task_root(const struct task *t, char *buf, size_t len)
{
	struct fs_ctx *fs = t && task_fs_rooted((struct task *)t) ? task_fs_get((struct task *)t) : NULL;
	int r = 0;

	if (fs && atomic_load(&fs->rooted)) {
		pthread_mutex_lock(&fs->lock);
		if (fs->root && strlen(fs->root) < len) {
			strcpy(buf, fs->root);
			r = 1;
		}
		pthread_mutex_unlock(&fs->lock);
	}
	fs_ctx_put(fs);
	if (!r && len >= 2) /* every walk comes here: no snprintf */
		memcpy(buf, "/", 2);
	else if (!r && len)
		buf[0] = 0;
	return r;
}

int task_root_strip(const struct task *t, char *path)
{
	char root[VFS_PATH_MAX];

	if (!task_root(t, root, sizeof root))
		return 0;
	size_t l = strlen(root);
	if (strncmp(path, root, l) || (path[l] && path[l] != '/'))
		return -1;
	if (!path[l])
		strcpy(path, "/");
	else
		memmove(path, path + l, strlen(path + l) + 1);
	return 0;
}

static unsigned long long status_mask(const char *buf, const char *key)
{
	const char *p = strstr(buf, key);
	return p ? strtoull(p + strlen(key), NULL, 16) : 0;
}

int task_signal_pending(struct task *t)
{
	char path[64], buf[4096];
	if (t && __atomic_load_n(&t->intr_now, __ATOMIC_RELAXED))
		return 1; /* a signal came before the sentry took this call */
	if (!t || t->sb->guest_procfd < 0 || t->vtid <= 0)
		return 0;
	snprintf(path, sizeof path, "%d/status", t->vtid);
	if (read_text_at(t->sb->guest_procfd, path, buf, sizeof buf) < 0)
		return 1; /* the task is gone: stop waiting for it */
	unsigned long long pend = status_mask(buf, "\nSigPnd:") | status_mask(buf, "\nShdPnd:");
	unsigned long long blk = status_mask(buf, "\nSigBlk:"), ign = status_mask(buf, "\nSigIgn:");
	if (__atomic_load_n(&t->net_hold, __ATOMIC_ACQUIRE))
		blk = __atomic_load_n(&t->net_held_mask, __ATOMIC_RELAXED); /* its own, not the hold's */
	return (pend & ~blk & ~ign) != 0;
}

/* tasks whose jobstop is set, by thread group (tgid modulo NBUCKETS): the
 * look below is made only while one of a group of that slot is stopped */
static int njobstop[NBUCKETS];

void task_jobstop_set(struct task *t, int on)
{
	if (atomic_exchange(&t->jobstop, on) != on)
		__atomic_add_fetch(&njobstop[hb(t->tgid)], on ? 1 : -1, __ATOMIC_RELAXED);
}

int task_stop_pending(struct task *t)
{
	if (!t || !__atomic_load_n(&njobstop[hb(t->tgid)], __ATOMIC_RELAXED))
		return 0;
	int r = 0;
	unsigned rs = brlock_rdlock(&tab_lock);
	for (int b = 0; b < NBUCKETS && !r; b++)
		for (struct tnode *p = buckets[b]; p && !r; p = p->next)
			r = p->t->tgid == t->tgid && p->t != t && atomic_load(&p->t->jobstop);
	brlock_rdunlock(&tab_lock, rs);
	return r;
}

int task_wait_must_end(struct task *t)
{
	return task_signal_pending(t) || task_stop_pending(t);
}

static void pd_link(struct task *t)
{
	if (t->pd_parent <= 0 || t->pd_pprev)
		return;
	struct task **h = &pdbuckets[hb(t->pd_parent)];
	t->pd_next = *h;
	if (*h)
		(*h)->pd_pprev = &t->pd_next;
	*h = t;
	t->pd_pprev = h;
}

static void pd_unlink(struct task *t)
{
	if (!t->pd_pprev)
		return;
	*t->pd_pprev = t->pd_next;
	if (t->pd_next)
		t->pd_next->pd_pprev = t->pd_pprev;
	t->pd_next = NULL;
	t->pd_pprev = NULL;
}

static void insert(struct task *t)
{
	struct tnode *n = xmalloc(sizeof *n);
	n->t = t;
	n->next = buckets[hb(t->tid)];
	buckets[hb(t->tid)] = n;
	pd_link(t);
	nonleaders += t->tid != t->tgid;
	__atomic_add_fetch(&ntasks, 1, __ATOMIC_RELAXED);
}

struct task *task_create(struct sandbox *sb, pid_t tid, pid_t tgid,
			 struct task *parent, int share_fs)
{
	struct task *t = xcalloc(1, sizeof *t);
	atomic_init(&t->refs, 2); /* table + caller */
	t->tid = tid;
	t->tgid = tgid;
	t->sb = sb;
	pthread_mutex_init(&t->lock, NULL);
	/* placeholders: the sentry sets the guest ids from the parent's fork
	 * return (sentry/run.c); tests with no pid namespace keep these */
	t->vtid = tid;
	t->vtgid = tgid;
	/* a thread's pidfd names its process, as its parent thread's does:
	 * a duplicate (no new pidfs file), one fd per task as before */
	if (parent && parent->tgid == tgid && parent->pidfd >= 0)
		t->pidfd = fcntl(parent->pidfd, F_DUPFD_CLOEXEC, 0);
	else
		t->pidfd = (int)syscall(SYS_pidfd_open, tgid, 0);
	/* a new process's dumpable flag is its parent process's (dup_mm
	 * copies the mm's), not the forking thread's own: a thread that had
	 * not made its process's PR_SET_DUMPABLE 0 forked a dumpable copy of
	 * its memory (red team 38) */
	int pnd = parent && tid == tgid ? task_nondump(sb, parent) : 0;
	if (parent) {
		pthread_mutex_lock(&parent->lock);
		cred_copy(&t->cred, &parent->cred);
		if (pnd)
			t->cred.nondump = 1;
		memcpy(t->exe, parent->exe, sizeof t->exe);
		t->exe_dev = parent->exe_dev;
		t->exe_ino = parent->exe_ino;
		t->interp_dev = parent->interp_dev;
		t->interp_ino = parent->interp_ino;
		memcpy(t->comm, parent->comm, sizeof t->comm);
		t->vcore_cur = parent->vcore_cur;
		t->vcore_max = parent->vcore_max;
		if (!parent->vsched.reset)
			t->vsched = parent->vsched; /* else SCHED_OTHER, as sched_fork */
		pthread_mutex_unlock(&parent->lock);
		t->vppid = tid == tgid ? parent->vtgid : parent->vppid;
		if (share_fs) {
			atomic_fetch_add(&parent->fs->refs, 1);
			t->fs = parent->fs;
		} else {
			pthread_mutex_lock(&parent->fs->lock);
			t->fs = fs_copy_locked(parent->fs);
			pthread_mutex_unlock(&parent->fs->lock);
		}
	} else {
		t->fs = fs_ctx_new("/", sb && sb->umask0 ? (sb->umask0 - 1) & 0777 : 022);
		/* the first guest task: the caller's core limit, as the guest's
		 * own (the tracer pins the real one to 1 byte) */
		struct rlimit rl = { 0, 0 };
		getrlimit(RLIMIT_CORE, &rl);
		t->vcore_cur = sb && sb->core0_set ? sb->core0_cur : rl.rlim_cur;
		t->vcore_max = sb && sb->core0_set ? sb->core0_max : rl.rlim_max;
	}
	brlock_wrlock(&tab_lock);
	insert(t);
	brlock_wrunlock(&tab_lock);
	return t;
}

static struct task *unlink_locked(pid_t tid)
{
	for (struct tnode **pp = &buckets[hb(tid)]; *pp; pp = &(*pp)->next) {
		if ((*pp)->t->tid == tid) {
			struct tnode *n = *pp;
			struct task *t = n->t;
			*pp = n->next;
			free(n);
			pd_unlink(t);
			nonleaders -= t->tid != t->tgid;
			__atomic_sub_fetch(&ntasks, 1, __ATOMIC_RELAXED);
			return t;
		}
	}
	return NULL;
}

/* task_zombie_cred's table: direct-mapped by guest pid (a collision or a
 * pid reused drops the older entry; the reader falls back then) */
#define ZCRED_SLOTS 256
static struct zcred {
	pid_t vpid; /* 0: empty */
	struct cred cred;
} zcreds[ZCRED_SLOTS];
static pthread_mutex_t zcred_lock = PTHREAD_MUTEX_INITIALIZER;

static void zcred_save(struct task *t)
{
	struct cred c;

	if (t->tid != t->tgid || t->vtgid <= 0)
		return;
	pthread_mutex_lock(&t->lock);
	cred_copy(&c, &t->cred);
	pthread_mutex_unlock(&t->lock);
	pthread_mutex_lock(&zcred_lock);
	struct zcred *z = &zcreds[(unsigned)t->vtgid % ZCRED_SLOTS];
	if (z->vpid)
		cred_free(&z->cred);
	z->vpid = t->vtgid;
	z->cred = c;
	pthread_mutex_unlock(&zcred_lock);
}

int task_zombie_cred(struct sandbox *sb, pid_t vpid, struct cred *out)
{
	int found = 0;

	(void)sb;
	if (vpid <= 0)
		return 0;
	pthread_mutex_lock(&zcred_lock);
	struct zcred *z = &zcreds[(unsigned)vpid % ZCRED_SLOTS];
	if (z->vpid == vpid) {
		cred_copy(out, &z->cred);
		found = 1;
	}
	pthread_mutex_unlock(&zcred_lock);
	return found;
}

void task_remove(struct sandbox *sb, pid_t tid)
{
	(void)sb;
	brlock_wrlock(&tab_lock);
	struct task *t = unlink_locked(tid);
	brlock_wrunlock(&tab_lock);
	if (t) {
		zcred_save(t);
		task_jobstop_set(t, 0); /* killed in a group-stop */
		t->exited = 1;
		task_put(t);
	}
}

void task_rekey(struct sandbox *sb, pid_t old_tid, pid_t new_tid)
{
	(void)sb;
	brlock_wrlock(&tab_lock);
	struct task *gone = unlink_locked(new_tid); /* the old leader */
	struct task *t = unlink_locked(old_tid);
	if (t) {
		t->tid = new_tid;
		t->vtid = t->vtgid;
		insert(t);
	}
	brlock_wrunlock(&tab_lock);
	if (gone) {
		gone->exited = 1;
		task_put(gone);
	}
}

int task_count(struct sandbox *sb)
{
	(void)sb;
	unsigned rs = brlock_rdlock(&tab_lock);
	int n = ntasks;
	brlock_rdunlock(&tab_lock, rs);
	return n;
}

int task_group_others(struct sandbox *sb, pid_t tgid, pid_t *out, int max)
{
	(void)sb;
	int n = 0;
	unsigned rs = brlock_rdlock(&tab_lock);
	for (int b = 0; nonleaders && b < NBUCKETS && n < max; b++)
		for (struct tnode *p = buckets[b]; p && n < max; p = p->next)
			if (p->t->tgid == tgid && p->t->tid != tgid)
				out[n++] = p->t->tid;
	brlock_rdunlock(&tab_lock, rs);
	return n;
}

int task_count_hint(void)
{
	return __atomic_load_n(&ntasks, __ATOMIC_RELAXED);
}

struct task *task_get(struct sandbox *sb, pid_t tid)
{
	(void)sb;
	struct task *r = NULL;
	unsigned rs = brlock_rdlock(&tab_lock);
	for (struct tnode *n = buckets[hb(tid)]; n; n = n->next)
		if (n->t->tid == tid) {
			r = n->t;
			atomic_fetch_add(&r->refs, 1);
			break;
		}
	brlock_rdunlock(&tab_lock, rs);
	return r;
}

struct task *task_get_vpid(struct sandbox *sb, pid_t vtid)
{
	(void)sb;
	struct task *r = NULL;
	unsigned rs = brlock_rdlock(&tab_lock);
	for (int b = 0; b < NBUCKETS && !r; b++)
		for (struct tnode *n = buckets[b]; n; n = n->next)
			if (n->t->vtid == vtid) {
				r = n->t;
				atomic_fetch_add(&r->refs, 1);
				break;
			}
	brlock_rdunlock(&tab_lock, rs);
	return r;
}

struct task *task_get_named(struct sandbox *sb, struct task *self, pid_t vtid)
{
	if (vtid == 0 || vtid == atomic_load(&self->vtid)) {
		atomic_fetch_add(&self->refs, 1);
		return self;
	}
	return task_get_vpid(sb, vtid);
}

int task_nondump(struct sandbox *sb, struct task *t)
{
	pthread_mutex_lock(&t->lock);
	int nd = t->cred.nondump;
	pthread_mutex_unlock(&t->lock);
	if (!nd && t->tid != t->tgid) {
		struct task *l = task_get(sb, t->tgid); /* its leader, by host tid (hashed) */
		if (l) {
			pthread_mutex_lock(&l->lock);
			nd = l->cred.nondump;
			pthread_mutex_unlock(&l->lock);
			task_put(l);
		}
	}
	return nd;
}

void task_mark_nondump(struct sandbox *sb, struct task *t)
{
	if (t->tid == t->tgid)
		return;
	struct task *l = task_get(sb, t->tgid);
	if (l) {
		pthread_mutex_lock(&l->lock);
		l->cred.nondump = 1;
		pthread_mutex_unlock(&l->lock);
		task_put(l);
	}
}

void task_put(struct task *t)
{
	if (!t || atomic_fetch_sub(&t->refs, 1) != 1)
		return;
	fs_ctx_put(t->fs);
	cred_free(&t->cred);
	if (t->pidfd >= 0)
		close(t->pidfd);
	if (t->pexec && pexec_free)
		pexec_free(t->pexec); /* closes its fds */
	else
		free(t->pexec);
	free(t->net_pending);
	pthread_mutex_destroy(&t->lock);
	free(t);
}

static int for_each(int leaders_only, int (*fn)(struct task *, void *), void *arg)
{
	/* Snapshot under the lock, call fn outside it. */
	struct task **v = NULL;
	int n = 0, cap = 0, r = 0;
	unsigned rs = brlock_rdlock(&tab_lock);
	for (int b = 0; b < NBUCKETS; b++)
		for (struct tnode *p = buckets[b]; p; p = p->next) {
			if (leaders_only && p->t->tid != p->t->tgid)
				continue;
			if (n == cap) {
				cap = cap ? cap * 2 : 32;
				struct task **nv = realloc(v, cap * sizeof *v);
				if (!nv)
					break;
				v = nv;
			}
			atomic_fetch_add(&p->t->refs, 1);
			v[n++] = p->t;
		}
	brlock_rdunlock(&tab_lock, rs);
	for (int i = 0; i < n; i++) {
		if (!r)
			r = fn(v[i], arg);
		task_put(v[i]);
	}
	free(v);
	return r;
}

int task_for_each_leader(struct sandbox *sb, int (*fn)(struct task *, void *), void *arg)
{
	(void)sb;
	return for_each(1, fn, arg);
}

int task_for_each_thread(struct sandbox *sb, int (*fn)(struct task *, void *), void *arg)
{
	(void)sb;
	return for_each(0, fn, arg);
}

void task_pd_parent_set(struct sandbox *sb, struct task *n, struct task *parent, int same)
{
	(void)sb;
	brlock_wrlock(&tab_lock);
	int linked = n->pd_pprev != NULL;
	pd_unlink(n);
	n->pd_parent = same ? parent->pd_parent : parent->tid;
	/* in the index only while in the table (a task removed meanwhile is
	 * never linked again) */
	if (linked || !n->exited)
		pd_link(n);
	brlock_wrunlock(&tab_lock);
}

int task_pdeath_reparent(struct sandbox *sb, pid_t dead, pid_t tgid, pid_t heir, struct task ***out)
{
	(void)sb;
	int named = 0, find = heir < 0;
	if (out)
		*out = NULL;
	if (find)
		heir = 0;
	if (dead <= 0)
		return 0;
	/* the common case: nobody named it, one bucket's look */
	unsigned rs = brlock_rdlock(&tab_lock);
	for (struct task *t = pdbuckets[hb(dead)]; t && !named; t = t->pd_next)
		named = t->pd_parent == dead;
	/* the heir: a live thread of the group (Linux's find_alive_thread); a
	 * leader is reaped after every other thread of its group (ptrace(2):
	 * its exit is reported once they are gone), so none for it */
	if (named && find && dead != tgid)
		for (int b = 0; b < NBUCKETS && !heir; b++)
			for (struct tnode *p = buckets[b]; p; p = p->next) {
				struct task *t = p->t;
				if (t->tgid == tgid && t->tid != dead && !atomic_load(&t->reaped) && !t->exited) {
					heir = t->tid;
					break;
				}
			}
	brlock_rdunlock(&tab_lock, rs);
	if (!named)
		return 0;

	/* The moves: every task of dead's bucket that names it leaves the
	 * bucket (heir's may be the same one: taken out first, put back
	 * after). No cap on their number. Only the tracer writes pd_parent and
	 * changes the table, so the answers above still hold. */
	struct task **v = NULL, *moved = NULL;
	int n = 0, cap = 0;
	brlock_wrlock(&tab_lock);
	for (struct task *t = pdbuckets[hb(dead)], *next; t; t = next) {
		next = t->pd_next;
		if (t->pd_parent != dead)
			continue;
		pd_unlink(t);
		t->pd_parent = heir;
		t->pd_next = moved; /* a private list, relinked below */
		moved = t;
	}
	for (struct task *t = moved, *next; t; t = next) {
		next = t->pd_next;
		t->pd_next = NULL;
		pd_link(t); /* heir 0: stays out */
		if (!out || !atomic_load(&t->pdeathsig))
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 16;
			struct task **nv = xmalloc((size_t)cap * sizeof *nv);
			if (n)
				memcpy(nv, v, (size_t)n * sizeof *nv);
			free(v);
			v = nv;
		}
		atomic_fetch_add(&t->refs, 1);
		v[n++] = t;
	}
	brlock_wrunlock(&tab_lock);
	if (out)
		*out = v;
	return n;
}

int task_proc_ids(struct sandbox *sb, pid_t vpid, pid_t *pgrp, pid_t *sid, int *tty_nr)
{
	char path[32], buf[1024];
	int pg = 0, se = 0, tn = 0;

	if (!sb || sb->guest_procfd < 0 || vpid <= 0)
		return -ESRCH;
	snprintf(path, sizeof path, "%d/stat", (int)vpid);
	int fd = openat(sb->guest_procfd, path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
	if (fd < 0)
		return -ESRCH;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return -ESRCH;
	buf[n] = 0;
	/* "pid (comm) S ppid pgrp session tty_nr ...": comm may hold ')' */
	char *p = strrchr(buf, ')');
	if (!p || sscanf(p + 1, " %*c %*d %d %d %d", &pg, &se, &tn) != 3)
		return -ESRCH;
	if (pgrp)
		*pgrp = pg;
	if (sid)
		*sid = se;
	if (tty_nr)
		*tty_nr = tn;
	return 0;
}

int task_is_init(struct sandbox *sb, pid_t vtid)
{
	char path[40];
	if (vtid == 1)
		return 1;
	if (!sb || sb->guest_procfd < 0 || vtid <= 1)
		return 0;
	/* (the init lives as long as the sandbox: its thread numbers are
	 * never another's meanwhile) */
	snprintf(path, sizeof path, "1/task/%d", (int)vtid);
	int fd = openat(sb->guest_procfd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return 0;
	close(fd);
	return 1;
}

/* The copy guard (task.h). One slot per tgid modulo IO_SLOTS, a cache line
 * each: io counts copies in flight, fence the execs in flight, gen the
 * group's "image may have changed" events (an exec fenced, a task reaped).
 * The copier adds to io then reads fence; the tracer adds to fence then
 * reads io (both sequentially consistent): at least one of them sees the
 * other, so a copy never runs while an exec the tracer let go is in the
 * kernel. */
#define IO_SLOTS 1024
static struct io_slot {
	atomic_int io;
	atomic_int fence;
	atomic_uint gen;
	atomic_uint execs; /* execs over (task_fence_open): task_io_execs */
	char pad[64 - 4 * sizeof(atomic_int)];
} io_slots[IO_SLOTS];

static struct io_slot *io_slot(pid_t tgid) { return &io_slots[(unsigned)tgid % IO_SLOTS]; }

/* the call this worker serves, and the group's gen when its notification
 * was last proved valid inside the guard (io_caller_ok) */
static _Thread_local const struct task *io_caller_t;
static _Thread_local int io_caller_nfd = -1, io_caller_ok;
static _Thread_local uint64_t io_caller_id;
static _Thread_local unsigned io_caller_gen, io_entry_gen;
static _Thread_local int io_no_wait; /* the tracer: a fence up is -EAGAIN at once */

void task_io_no_wait(void)
{
	io_no_wait = 1;
}

void task_io_caller(const struct task *t, int nfd, uint64_t id)
{
	io_caller_t = t;
	io_caller_nfd = nfd;
	io_caller_id = id;
	io_caller_ok = 0;
}

void task_io_proved(void)
{
	io_caller_gen = io_entry_gen;
	io_caller_ok = 1;
}

static void io_nap(void)
{
	struct timespec ts = { 0, 100000 }; /* 100 us */
	nanosleep(&ts, NULL);
}

int task_io_begin(const struct task *t, int nfd, uint64_t id)
{
	struct io_slot *s = io_slot(t ? t->tgid : 0);
	for (int naps = 0;; naps++) {
		atomic_fetch_add(&s->io, 1);
		if (atomic_load(&s->fence) == 0)
			break;
		/* an exec of the group is in the kernel: wait it out (it
		 * ends in PTRACE_EVENT_EXEC, its failed exit or a death) */
		atomic_fetch_sub(&s->io, 1);
		if (naps >= TASK_IO_WAIT_MS * 10 || io_no_wait)
			return -EAGAIN;
		io_nap();
	}
	/* read before any ID_VALID below: an exec fenced from here on bumps
	 * it, so a proof made now never stands in for one after that exec */
	unsigned g = atomic_load(&s->gen);
	io_entry_gen = g;
	if (nfd < 0)
		return 0;
	int mine = io_caller_t && t && io_caller_t->tgid == t->tgid && io_caller_nfd == nfd &&
		   io_caller_id == id;
	if (mine && io_caller_ok && io_caller_gen == g)
		return 0; /* proved since the group's last exec or death: still the caller's image */
	if (unotify_id_valid(nfd, id) < 0) {
		atomic_fetch_sub_explicit(&s->io, 1, memory_order_release);
		return -ESRCH;
	}
	if (mine)
		task_io_proved();
	return 0;
}

int task_io_try(const struct task *t)
{
	struct io_slot *s = io_slot(t ? t->tgid : 0);
	atomic_fetch_add(&s->io, 1);
	if (atomic_load(&s->fence) == 0) {
		io_entry_gen = atomic_load(&s->gen);
		return 0;
	}
	atomic_fetch_sub(&s->io, 1);
	return -EAGAIN;
}

void task_io_end(const struct task *t)
{
	atomic_fetch_sub_explicit(&io_slot(t ? t->tgid : 0)->io, 1, memory_order_release);
}

int task_io_begin_caller(const struct task *t)
{
	const struct task *c = io_caller_t;
	if (!c || !t || c->tgid != t->tgid)
		return 0;
	int g = task_io_begin(t, io_caller_nfd, io_caller_id);
	return g < 0 ? g : 1;
}

int task_fence_close(pid_t tgid, int timeout_ms)
{
	struct io_slot *s = io_slot(tgid);
	atomic_fetch_add(&s->gen, 1);
	atomic_fetch_add(&s->fence, 1);
	for (long naps = 0; atomic_load(&s->io) != 0; naps++) {
		if (naps >= (long)timeout_ms * 10) {
			atomic_fetch_sub(&s->fence, 1);
			return -EAGAIN;
		}
		io_nap();
	}
	return 0;
}

void task_fence_open(pid_t tgid)
{
	struct io_slot *s = io_slot(tgid);
	/* before the fence comes down: a guard entered once it is down sees
	 * the count of this exec (seq_cst both) */
	atomic_fetch_add(&s->execs, 1);
	atomic_fetch_sub(&s->fence, 1);
}

unsigned task_io_execs(const struct task *t)
{
	return atomic_load(&io_slot(t ? t->tgid : 0)->execs);
}

void task_io_gone(pid_t tgid)
{
	atomic_fetch_add(&io_slot(tgid)->gen, 1);
}

static atomic_int reap_holds, reap_closed;

int task_reap_hold(void)
{
	for (int naps = 0;; naps++) {
		atomic_fetch_add(&reap_holds, 1);
		if (atomic_load(&reap_closed) == 0)
			return 0; /* (seq_cst both sides: the tracer sees the hold, or we see it closed) */
		atomic_fetch_sub(&reap_holds, 1);
		if (naps >= TASK_IO_WAIT_MS * 10)
			return -EAGAIN;
		io_nap();
	}
}

void task_reap_release(void)
{
	atomic_fetch_sub_explicit(&reap_holds, 1, memory_order_release);
}

void task_reap_close(void)
{
	atomic_store(&reap_closed, 1);
	while (atomic_load(&reap_holds) != 0)
		io_nap();
}

void task_reap_open(void)
{
	atomic_store(&reap_closed, 0);
}

int task_fence_up(pid_t tgid)
{
	return atomic_load(&io_slot(tgid)->fence) != 0;
}

int task_getfd(struct task *t, int guestfd)
{
	if (!t || t->pidfd < 0 || guestfd < 0)
		return -EBADF;
	int guard = task_io_begin_caller(t);
	if (guard < 0)
		return guard;
	int fd = (int)syscall(SYS_pidfd_getfd, t->pidfd, guestfd, 0);
	int e = errno;
	if (guard)
		task_io_end(t);
	if (fd < 0)
		return e == EBADF ? -EBADF : -e;
	return fd;
}

uid_t idmap_uid_to_guest(const struct idmap *m, uid_t host)
{
	if (m->full_identity)
		return host == m->native_uid && host != (uid_t)-1 ? m->guest_uid : host;
	return host == m->host_uid ? m->guest_uid : 65534;
}

gid_t idmap_gid_to_guest(const struct idmap *m, gid_t host)
{
	if (m->full_identity)
		return host == m->native_gid && host != (gid_t)-1 ? m->guest_gid : host;
	return host == m->host_gid ? m->guest_gid : 65534;
}

uid_t idmap_cred_uid_to_host(const struct idmap *m, uid_t guest)
{
	if (m->full_identity)
		return guest == m->act_uid ? guest : (uid_t)-1;
	return guest == m->guest_uid ? m->host_uid : (uid_t)-1;
}

gid_t idmap_cred_gid_to_host(const struct idmap *m, gid_t guest)
{
	if (m->full_identity)
		return guest == m->act_gid ? guest : (gid_t)-1;
	return guest == m->guest_gid ? m->host_gid : (gid_t)-1;
}

uid_t idmap_view_uid_to_host(const struct idmap *m, uid_t view)
{
	if (m->full_identity)
		return view;
	return view == m->guest_uid ? m->host_uid : (uid_t)-1;
}

gid_t idmap_view_gid_to_host(const struct idmap *m, gid_t view)
{
	if (m->full_identity)
		return view;
	return view == m->guest_gid ? m->host_gid : (gid_t)-1;
}

/* ---- the init's act channel (task.h init_act_req) ---- */
static pthread_mutex_t init_act_lock = PTHREAD_MUTEX_INITIALIZER;

long init_act_call_fd(struct sandbox *sb, const struct init_act_req *q, int fd, struct init_act_rep *p)
{
	size_t len = offsetof(struct init_act_req, buf) + (q->len < INIT_ACT_BUF ? q->len : INIT_ACT_BUF);
	ssize_t n = -1;
	if ((q->pid <= 0 && q->nr != SYS_bind) || sb->init_act_fd <= 2)
		return -ESRCH;
	pthread_mutex_lock(&init_act_lock);
	if (send_fds(sb->init_act_fd, q, len, &fd, fd >= 0) == (long)len)
		do
			n = read(sb->init_act_fd, p, sizeof *p);
		while (n < 0 && errno == EINTR);
	pthread_mutex_unlock(&init_act_lock);
	if (n != (ssize_t)sizeof *p)
		return -ESRCH; /* the init is gone: the sandbox ends */
	return (long)p->r;
}

long init_act_call(struct sandbox *sb, const struct init_act_req *q, struct init_act_rep *p)
{
	return init_act_call_fd(sb, q, -1, p);
}
