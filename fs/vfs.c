/* fs/vfs.c - mount table, lookups of single names (dentry cache + backend),
 * permissions, opening nodes, fd identification, exec helpers.
 *
 * The walk itself (components, "..", symlinks) is fs/walk.c.
 */
#include "fs/vfs.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* vfs_node_open's own flag (no open flag has this bit): the O_PATH open of
 * a directory, whose O_DSYNC marks it */
#define VFS_OPATH_DIR 0x40000000
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <dirent.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "common/log.h"
#include "common/util.h"
#include "fs/procfs.h"
#include "fs/vfs_priv.h"
#include "gofer/proto.h"
#include "kernel/task.h"
#include "platform/platform.h"

/* ---- the default backend: the gofer, one connection per worker thread ---- */

static atomic_uint vfs_gens = 1;

/* room for the guest's own mounts (mount(2)) beside the sandbox's */
#define VFS_GUEST_MOUNTS 32
static __thread struct gofer_conn *tl_conn;
static __thread unsigned tl_gen;

static struct gofer_conn *conn(void *ctx)
{
	struct vfs *v = ctx;

	if (tl_conn && tl_gen == v->gen && !gofer_conn_broken(tl_conn))
		return tl_conn;
	if (tl_conn && tl_gen == v->gen) {
		gofer_disconnect(tl_conn); /* abandoned a reply: start afresh */
		tl_conn = NULL;
	}
	if (v->gofer_ctl < 0)
		return NULL;
	tl_conn = gofer_connect(v->gofer_ctl);
	tl_gen = v->gen;
	return tl_conn;
}

#define GC(ctx) struct gofer_conn *gc = conn(ctx); if (!gc) return -EIO

/* A write to a lower file of a cow export whose owner or group the gofer's
 * user namespace does not map (rootless: a 1000:0 file, a root-owned 0666
 * one), or a create, unlink or rename in such a lower directory, is
 * EOVERFLOW from overlayfs's copy-up. Then the gofer copies the file, or the
 * directories on the way to it, up by hand (GOFER_OP_COPYUP, the object the
 * sentry checked, if it named one), each copy is recorded as its original
 * for stat and permission checks (vmeta_copied), the names cached for them
 * are dropped, and the call is made once more, naming the copy. 1: retry
 * with *dev and *ino (set if a check was named) as the identity; else the
 * copy-up's error (-EOVERFLOW: not a file it applies to, the call's own
 * error stands). */
struct park_q {
	struct vfs *v;
	int exp;
	const char *top;  /* the first component of the copy-up's path */
	size_t tlen;
	size_t n;         /* how many were let go of */
};

/* Is guest path on export q->exp, at or beneath q->top? */
static int park_under(const struct park_q *q, const char *path, char *rel)
{
	const struct vfs_mount *m = vfs_mount_for(q->v, path);

	if (!m || m->kind != VFS_MNT_GOFER || m->export != q->exp)
		return 0;
	const char *tail = path + m->plen;
	while (*tail == '/')
		tail++;
	if (snprintf(rel, VFS_PATH_MAX, "%s%s%s", m->sub ? m->sub : "", m->sub && *tail ? "/" : "",
		     tail) >= VFS_PATH_MAX)
		return 0;
	return !strncmp(rel, q->top, q->tlen) && (!rel[q->tlen] || rel[q->tlen] == '/');
}

/* A cwd or chroot root held beneath a directory about to be copied up by
 * hand lets go of its object (the fd: the name, and for the cwd the
 * identity, stay): overlayfs keeps an in-use dentry as it was looked up,
 * lower-only, and the copy would stay unseen (EOVERFLOW). The cwd is held
 * again by its name at its next relative walk (cwd_node: the copy, a new
 * inode), the root by its name from then on. */
static void park_one(struct fs_ctx *fs, void *arg)
{
	struct park_q *q = arg;
	char path[VFS_PATH_MAX], rel[VFS_PATH_MAX];
	struct stat st;
	dev_t dev = 0;
	ino_t ino = 0;
	int fd;

	for (int k = 0; k < 2; k++) {
		pthread_mutex_lock(&fs->lock);
		fd = k ? fs->root_fd : fs->cwd_fd;
		if (fd >= 0) {
			snprintf(path, sizeof path, "%s", k ? (fs->root ? fs->root : "/") : fs->cwd);
			dev = k ? fs->root_dev : fs->cwd_dev;
			ino = k ? fs->root_ino : fs->cwd_ino;
		}
		pthread_mutex_unlock(&fs->lock);
		/* by its name only while the name still leads to it (one
		 * renamed away and not walked since keeps its fd: held by
		 * name, it would become whatever has the old name now) */
		if (fd < 0 || !park_under(q, path, rel) ||
		    VFS_BE(q->v, lstat, q->exp, rel, &st) < 0 || st.st_dev != dev || st.st_ino != ino)
			continue;
		pthread_mutex_lock(&fs->lock);
		if (!k && fs->cwd_fd == fd && !strcmp(fs->cwd, path)) {
			fs_cwd_write_begin(fs);
			close(fs->cwd_fd);
			fs->cwd_fd = -1;
			fs->cwd_dev = 0;  /* taken again at the next walk */
			fs->cwd_ino = 0;
			fs_cwd_write_end(fs);
			q->n++;
		} else if (k && fs->root_fd == fd && fs->root && !strcmp(fs->root, path)) {
			close(fs->root_fd);
			fs->root_fd = -1;
			q->n++;
		}
		pthread_mutex_unlock(&fs->lock);
	}
}

static size_t park_held(struct vfs *v, int exp, const char *rel)
{
	struct park_q q = { .v = v, .exp = exp, .top = rel, .tlen = strcspn(rel, "/") };

	if (q.tlen)
		fs_ctx_for_each(park_one, &q);
	return q.n;
}

/* The calling task (sentry/pipeline.c, around each handler): its fds can be
 * replaced while its notification is pending (ADDFD with SETFD). */
static __thread struct task *tl_caller;
static __thread int tl_caller_nfd = -1;
static __thread uint64_t tl_caller_id;

static __thread int tl_copyup_busy;

int vfs_copyup_busy_take(void)
{
	int b = tl_copyup_busy;
	tl_copyup_busy = 0;
	return b;
}

void vfs_caller_set(struct task *t, int notify_fd, uint64_t id)
{
	tl_caller = t;
	tl_caller_nfd = notify_fd;
	tl_caller_id = id;
}

/* A guest fd of a directory or file at or beneath a directory about to be
 * copied up, let go of for the copy-up and opened again after it. */
struct held_fd {
	int gfd;              /* its number in the caller */
	int flags;            /* F_GETFL */
	int cloexec;
	off_t pos;
	dev_t dev;            /* its object (raw) */
	ino_t ino;
	int wd;               /* its pin (pin_fd), or -1 */
	struct stat st;       /* its stat then */
	int dir;
	char *rel;            /* its name in the export */
	dev_t sdev;           /* the stand-in memfd put at its number */
	ino_t sino;
};
#define HELD_MAX 64
static int pin_fd = -1;  /* made before the sentry confines itself (vfs_create) */

/* The caller's own fds (a dirfd, a file open beneath) hold overlayfs's
 * dentry of the directory as the cwd does (park_one): each one at or
 * beneath rel's first component on this export is swapped for an empty
 * memfd in the caller (so the guest holds nothing of the overlay there),
 * its object pinned by an inotify watch (the inode kept: it is looked up
 * again with the same number after the shrink) unless it is one of the
 * directories on rel's way that may be copied (a lower-only one: pinned it
 * could never be seen as merged), and the sentry's copy closed. Another
 * process's fds (a forked child's share of the same open file) are not
 * reached: then the copy-up stays EOVERFLOW, as before. */
static size_t park_guest(struct vfs *v, int exp, const char *rel, struct held_fd *h)
{
	struct task *t = tl_caller;
	size_t n = 0, tlen = strcspn(rel, "/");
	int ph = -1;

	if (!t || tl_caller_nfd < 0 || !tlen)
		return 0;
	/* the caller's fd table, by number (its /proc/<pid>/fd is the
	 * kernel's to refuse the sentry: another user namespace's) */
	long top = 1024;
	char stp[64], sbuf[2048];
	snprintf(stp, sizeof stp, "/proc/%d/status", (int)atomic_load(&t->tid));
	int sfd = open(stp, O_RDONLY | O_CLOEXEC);
	if (sfd >= 0) {
		ssize_t k = read(sfd, sbuf, sizeof sbuf - 1);
		close(sfd);
		sbuf[k > 0 ? k : 0] = 0;
		const char *fs_ = strstr(sbuf, "FDSize:");
		if (fs_)
			top = strtol(fs_ + 7, NULL, 10);
	}
	if (top > 65536)
		top = 65536;
	struct vfs_node *node = xmalloc(sizeof *node);
	for (long gfd = 0; gfd < top && n < HELD_MAX; gfd++) {
		int fd = task_getfd(t, (int)gfd);
		struct stat st;
		if (fd < 0)
			continue;
		/* only an overlay file of this export itself: never an O_PATH
		 * stand-in (a memfd the VFS names as its object, sys_file.c
		 * return_reopened), which no open by name could give back */
		if (fstat(fd, &st) < 0 || !(S_ISDIR(st.st_mode) || S_ISREG(st.st_mode)) ||
		    vfs_is_memfd(v, &st) || (fcntl(fd, F_GETFL) & O_ACCMODE) == O_ACCMODE ||
		    vfs_host_fd_node(v, t, fd, node) < 0 || node->kind != VN_BACKEND ||
		    node->st.st_dev != st.st_dev || node->st.st_ino != st.st_ino ||
		    node->mnt->export != exp || strncmp(node->rel, rel, tlen) ||
		    (node->rel[tlen] && node->rel[tlen] != '/')) {
			close(fd);
			continue;
		}
		struct held_fd *e = &h[n];
		size_t rl = strlen(node->rel);
		int on_way = !strncmp(rel, node->rel, rl) && (!rel[rl] || rel[rl] == '/');
		e->gfd = (int)gfd;
		e->flags = fcntl(fd, F_GETFL);
		e->pos = lseek(fd, 0, SEEK_CUR);
		e->dev = st.st_dev;
		e->ino = st.st_ino;
		e->st = st;
		e->dir = S_ISDIR(st.st_mode);
		e->wd = -1;
		e->cloexec = 0;
		char info[96], buf[256];
		snprintf(info, sizeof info, "/proc/%d/fdinfo/%ld", (int)atomic_load(&t->tid), gfd);
		int ifd = open(info, O_RDONLY | O_CLOEXEC);
		if (ifd >= 0) {
			ssize_t k = read(ifd, buf, sizeof buf - 1);
			close(ifd);
			buf[k > 0 ? k : 0] = 0;
			const char *fl = strstr(buf, "flags:");
			if (fl)
				e->cloexec = (strtoul(fl + 6, NULL, 8) & O_CLOEXEC) != 0;
		} else {
			/* refused (as /proc/<pid>/fd is): guessed. stdio is
			 * inherited by convention; the directories and files a
			 * program opens beyond it are close-on-exec in glibc's
			 * opendir, fts, Python, gnulib */
			e->cloexec = gfd > 2;
		}
		if (e->dir && pin_fd >= 0 && !(on_way && st.st_nlink != 1)) {
			/* (a file keeps its number: only directories need it;
			 * the gofer adds the watch, on the object checked:
			 * the sentry has no working directory of its own to
			 * take, sys_file.c add_watch) */
			e->wd = v->be->watch ? v->be->watch(v->bectx, exp, node->rel, pin_fd, IN_DELETE_SELF,
							    st.st_dev, st.st_ino) : -EPERM;
			if (e->wd < 0)
				dbg("vfs: pin %s: %s", node->rel, strerror(-e->wd));
		}
		if (ph < 0)
			ph = memfd_create("moat-held", MFD_CLOEXEC);
		struct stat sst;
		if (ph >= 0 && fstat(ph, &sst) == 0) {
			e->sdev = sst.st_dev;
			e->sino = sst.st_ino;
		}
		if (e->flags < 0 || ph < 0 ||
		    unotify_addfd(tl_caller_nfd, tl_caller_id, ph, e->cloexec ? O_CLOEXEC : 0,
				  e->gfd, 0) < 0) {
			if (e->wd >= 0)
				inotify_rm_watch(pin_fd, e->wd);
			close(fd);
			continue;  /* left as it was */
		}
		e->rel = xstrdup(node->rel);
		dbg("vfs: fd %d (%s) let go for a copy-up of %s (pin %d)", e->gfd, e->rel, rel, e->wd);
		close(fd);
		n++;
	}
	free(node);
	if (ph >= 0)
		close(ph);
	return n;
}

/* Each parked fd opened again by its name, only as the object it was (or
 * the copy pairs made of it: -ESTALE from the gofer else), at its offset
 * (a copied directory's from its start: the merged listing is another),
 * put back at its number. One that cannot be (removed meanwhile) stays the
 * empty memfd. */
static void rehome_guest(struct gofer_conn *gc, int exp, struct held_fd *h, size_t n,
			 struct stat (*pairs)[2], int np)
{
	for (size_t i = 0; i < n; i++) {
		struct held_fd *e = &h[i];
		dev_t dev = e->dev;
		ino_t ino = e->ino;
		int copied = 0, fd = -1;
		for (int k = 0; k < np; k++)
			if (pairs[k][0].st_dev == dev && pairs[k][0].st_ino == ino) {
				dev = pairs[k][1].st_dev;
				ino = pairs[k][1].st_ino;
				copied = 1;
				break;
			}
		int fl = e->flags & (O_ACCMODE | O_APPEND | O_NONBLOCK | O_DIRECTORY | O_PATH |
				     O_NOATIME | O_LARGEFILE | O_DSYNC | O_SYNC | O_DIRECT);
		struct stat st;
		gofer_expect_identity(dev, ino);
		int r = gofer_open(gc, exp, e->rel, fl | O_NOFOLLOW, 0, &fd, &st);
		gofer_expect_clear();
		if (r == -ESTALE && e->dir && !copied && e->wd < 0) {
			/* a lower-only directory on the way the copy-up did not
			 * make (another process holds it too), unpinned: the
			 * shrink gave it another number. Taken if it is still the
			 * directory it was by everything else it shows. */
			r = gofer_open(gc, exp, e->rel, fl | O_NOFOLLOW, 0, &fd, &st);
			if (r == 0 && (!S_ISDIR(st.st_mode) || st.st_mode != e->st.st_mode ||
				       st.st_uid != e->st.st_uid || st.st_gid != e->st.st_gid ||
				       st.st_nlink != e->st.st_nlink ||
				       st.st_mtim.tv_sec != e->st.st_mtim.tv_sec ||
				       st.st_mtim.tv_nsec != e->st.st_mtim.tv_nsec)) {
				close(fd);
				fd = -1;
				r = -ESTALE;
			}
		}
		/* put back only over its stand-in: a sibling thread of the
		 * caller may have closed that and opened another file at the
		 * number meanwhile, which must stay (as after its dup2) */
		int cur = r == 0 && tl_caller ? task_getfd(tl_caller, e->gfd) : -1;
		struct stat cst;
		if (r == 0 && (cur < 0 || fstat(cur, &cst) < 0 || cst.st_dev != e->sdev ||
			       cst.st_ino != e->sino)) {
			dbg("vfs: fd %d (%s) not put back: no longer the stand-in", e->gfd, e->rel);
			close(fd);
			fd = -1;
			r = -EBADF;
		}
		if (cur >= 0)
			close(cur);
		if (r == 0) {
			if (e->pos > 0 && !(copied && e->dir) && !(fl & O_PATH))
				(void)lseek(fd, e->pos, SEEK_SET);
			(void)unotify_addfd(tl_caller_nfd, tl_caller_id, fd, e->cloexec ? O_CLOEXEC : 0,
					    e->gfd, 0);
			close(fd);
		} else {
			dbg("vfs: fd %d (%s) not opened again after a copy-up: %s", e->gfd,
				 e->rel, strerror(-r));
		}
		if (e->wd >= 0)
			inotify_rm_watch(pin_fd, e->wd);
		free(e->rel);
	}
	char ev[1024];  /* the IN_IGNORED of each pin taken off: nothing to do */
	while (pin_fd >= 0 && read(pin_fd, ev, sizeof ev) > 0)
		;
}

/* What a copy-up's pairs tell: each copy is recorded as its original
 * (vmeta), and what the VFS cached of the mount, or of rel and the
 * directories on its way, is dropped */
static void copyup_apply(struct vfs *v, int exp, const char *rel, struct stat (*pairs)[2], int n)
{
	int dirs = 0;
	for (int k = 0; k < n; k++) {
		vfs_map_stat(v, &pairs[k][0]);
		vfs_map_stat(v, &pairs[k][1]);
		/* a full table (VMETA_MAX) leaves the copy shown and checked as
		 * the caller's own file: only the sandbox's copy, never a host
		 * file */
		(void)vmeta_copied(v->vm, &pairs[k][0], &pairs[k][1]);
		/* a directory's old number (overlayfs's, not kept) names nothing
		 * any more; a file's may still be another name's (a lower link) */
		if (S_ISREG(pairs[k][0].st_mode) && pairs[k][0].st_nlink > 1)
			dirs = 1;  /* its other names were linked to the copy */
		if (S_ISDIR(pairs[k][0].st_mode)) {
			dirs = 1;
			if (pairs[k][0].st_ino != pairs[k][1].st_ino || pairs[k][0].st_dev != pairs[k][1].st_dev)
				vmeta_forget(v->vm, pairs[k][0].st_dev, pairs[k][0].st_ino);
		}
	}
	/* a directory copied: overlayfs looked every directory it did not hold
	 * up again, with new numbers; nothing cached of the mount is kept */
	for (size_t i = 0; dirs && i < v->nmnts; i++)
		if (v->mnts[i].kind == VFS_MNT_GOFER && v->mnts[i].export == exp)
			vfs_invalidate(v, &v->mnts[i], "", 1);
	/* rel and every directory on the way (a copied directory is a new
	 * overlay inode) */
	char pre[VFS_PATH_MAX];
	size_t len = strnlen(rel, sizeof pre - 1);
	memcpy(pre, rel, len);
	pre[len] = 0;
	for (size_t i = 0; i < v->nmnts; i++) {
		if (v->mnts[i].kind != VFS_MNT_GOFER || v->mnts[i].export != exp)
			continue;
		for (size_t l = len + 1; l-- > 0;) {
			if (l < len && pre[l] != '/')
				continue;
			char c = pre[l];
			pre[l] = 0;
			vfs_invalidate(v, &v->mnts[i], pre, 0);
			pre[l] = c;
		}
	}
}

/* gofer_copyup, whose -EBUSY may come with the new numbers of directories
 * copied before (the shrink's): those are taken in all the same */
static int copyup_ask(struct vfs *v, struct gofer_conn *gc, int exp, const char *rel, dev_t dev,
		      ino_t ino, struct stat (*pairs)[2])
{
	int busy = 0;
	int n = gofer_copyup(gc, exp, rel, dev, ino, pairs, &busy);

	if (n > 0 && busy) {
		copyup_apply(v, exp, rel, pairs, n);
		n = -EBUSY;
	}
	dbg("vfs: copy-up of %s: %d", rel, n);
	return n;
}

static int cow_copyup(struct vfs *v, struct gofer_conn *gc, int exp, const char *rel,
		      dev_t *dev, ino_t *ino)
{
	struct stat pairs[GOFER_COPYUP_MAX][2];

	int n = copyup_ask(v, gc, exp, rel, *dev, *ino, pairs);
	if (n == -EBUSY) {
		/* a directory on the way that overlayfs holds: let go of what
		 * the sandbox holds there and try once more */
		cleanup_free struct held_fd *held = xcalloc(HELD_MAX, sizeof *held);
		struct gofer_expect ex;
		gofer_expect_get(&ex);  /* the call's own, kept across the re-opens */
		gofer_expect_clear();
		size_t nheld = park_held(v, exp, rel);
		size_t nguest = park_guest(v, exp, rel, held);
		if (nheld || nguest)
			n = copyup_ask(v, gc, exp, rel, *dev, *ino, pairs);
		if (nguest)
			rehome_guest(gc, exp, held, nguest, pairs, n);
		gofer_expect_set(&ex);
	}
	if (n == -EBUSY) {
		tl_copyup_busy = 1;  /* another process holds it: the call may wait */
		n = -EOVERFLOW;      /* the call's own error */
	}
	if (n == -EAGAIN) {
		/* copied up meanwhile by another call: made again, afresh */
		for (size_t i = 0; i < v->nmnts; i++)
			if (v->mnts[i].kind == VFS_MNT_GOFER && v->mnts[i].export == exp)
				vfs_invalidate(v, &v->mnts[i], "", 1);
		return 1;
	}
	if (n < 0)
		return n; /* ENOSPC (--disk), ESTALE (not the object checked)... */
	copyup_apply(v, exp, rel, pairs, n);
	if (*ino && pairs[n - 1][0].st_ino == *ino && pairs[n - 1][0].st_dev == *dev) {
		*dev = pairs[n - 1][1].st_dev;
		*ino = pairs[n - 1][1].st_ino;
	}
	return 1;
}

/* The directory rel is in ("" for the export's root, which overlayfs never
 * copies: nothing to do there) */
static const char *parent_of(const char *rel, char *buf)
{
	const char *sl = strrchr(rel, '/');
	size_t l = sl ? (size_t)(sl - rel) : 0;

	memcpy(buf, rel, l);
	buf[l] = 0;
	return buf;
}

#define COW_RETRY(call) ({ struct gofer_expect ex_; gofer_expect_get(&ex_); \
	dev_t cd_ = (dev_t)ex_.dev; ino_t ci_ = (ino_t)ex_.ino; \
	__typeof__(call) r_ = (call); \
	if (r_ == -EOVERFLOW) { \
		int c_ = cow_copyup(ctx, gc, exp, rel, &cd_, &ci_); \
		if (c_ == 1) { \
			ex_.dev = (uint64_t)cd_; \
			ex_.ino = (uint64_t)ci_; \
			gofer_expect_set(&ex_); \
			r_ = (call); \
		} else { \
			r_ = c_; \
		} \
	} \
	gofer_expect_clear(); \
	r_; })
/* creates, unlinks, links and renames: what may need a copy-up is rel (a
 * link's or rename's source, with the directories on the way) or, then,
 * the directory of rel2 (a create's, unlink's or the target's). The call
 * is made again with the same identities checked: a directory copied up
 * is a new inode, so the gofer may answer -ESTALE, and the sentry walks
 * (and checks) afresh, finding the copies. */
#define COW_RETRY_NOID(rel, rel2, call) ({ dev_t cd_ = 0; ino_t ci_ = 0; \
	char pb_[VFS_PATH_MAX]; \
	struct gofer_expect ex_; \
	gofer_expect_get(&ex_); \
	__typeof__(call) r_ = (call); \
	if (r_ == -EOVERFLOW && (rel)) { \
		int c_ = cow_copyup(ctx, gc, exp, (rel), &cd_, &ci_); \
		gofer_expect_set(&ex_); \
		r_ = c_ == 1 ? (call) : c_; \
	} \
	if (r_ == -EOVERFLOW && (rel2) && *parent_of((rel2), pb_)) { \
		int c_ = cow_copyup(ctx, gc, exp, pb_, &cd_, &ci_); \
		gofer_expect_set(&ex_); \
		r_ = c_ == 1 ? (call) : c_; \
	} \
	gofer_expect_clear(); \
	r_; })

static int g_walk(void *ctx, int exp, const char *rel, struct gofer_walk *out)
{ GC(ctx); return gofer_walk(gc, exp, rel, out); }
static int g_lstat(void *ctx, int exp, const char *rel, struct stat *st)
{ GC(ctx); return gofer_lstat(gc, exp, rel, st); }
static int g_open(void *ctx, int exp, const char *rel, int flags, mode_t mode, int *fd, struct stat *st)
{ GC(ctx); return COW_RETRY(gofer_open(gc, exp, rel, flags, mode, fd, st)); }
static long g_readlink(void *ctx, int exp, const char *rel, char *buf, size_t len)
{ GC(ctx); return gofer_readlink(gc, exp, rel, buf, len); }
static int g_mkdir(void *ctx, int exp, const char *rel, mode_t mode, struct stat *st)
{ GC(ctx); return COW_RETRY_NOID((const char *)NULL, rel, gofer_mkdir_st(gc, exp, rel, mode, st)); }
static int g_mknod(void *ctx, int exp, const char *rel, mode_t mode, struct stat *st)
{ GC(ctx); return COW_RETRY_NOID((const char *)NULL, rel, gofer_mknod_st(gc, exp, rel, mode, st)); }
static int g_unlink(void *ctx, int exp, const char *rel, int flags)
{ GC(ctx); return COW_RETRY_NOID((const char *)NULL, rel, gofer_unlink(gc, exp, rel, flags)); }
static int g_rename(void *ctx, int exp, const char *o, const char *n, unsigned flags)
{ GC(ctx); return COW_RETRY_NOID(o, n, gofer_rename(gc, exp, o, n, flags)); }
static int g_symlink(void *ctx, int exp, const char *target, const char *rel, struct stat *st)
{ GC(ctx); return COW_RETRY_NOID((const char *)NULL, rel, gofer_symlink_st(gc, exp, target, rel, st)); }
static int g_link(void *ctx, int exp, const char *o, const char *n, struct stat st[2])
{ GC(ctx); return COW_RETRY_NOID(o, n, gofer_link_st(gc, exp, o, n, st)); }
static int g_chmod(void *ctx, int exp, const char *rel, mode_t mode)
{ GC(ctx); return COW_RETRY(gofer_chmod(gc, exp, rel, mode)); }
static int g_chown(void *ctx, int exp, const char *rel, uid_t uid, gid_t gid)
{ GC(ctx); return gofer_chown(gc, exp, rel, uid, gid); }
static int g_truncate(void *ctx, int exp, const char *rel, off_t len)
{ GC(ctx); return COW_RETRY(gofer_truncate(gc, exp, rel, len)); }
static int g_utimens(void *ctx, int exp, const char *rel, const struct timespec ts[2], int flags)
{ GC(ctx); return COW_RETRY(gofer_utimens(gc, exp, rel, ts, flags)); }
static int g_statfs(void *ctx, int exp, const char *rel, struct statfs *st)
{ GC(ctx); return gofer_statfs(gc, exp, rel, st); }
static long g_pathof(void *ctx, int exp, int fd, char *buf, size_t len)
{ GC(ctx); return gofer_pathof(gc, exp, fd, buf, len); }
static int g_linkfd(void *ctx, int exp, int fd, const char *rel)
{ GC(ctx); return gofer_linkfd(gc, exp, fd, rel); }
static int g_chownfd(void *ctx, int exp, int fd, uid_t uid, gid_t gid)
{ GC(ctx); return gofer_chownfd(gc, exp, fd, uid, gid); }
static int g_watch(void *ctx, int exp, const char *rel, int ifd, uint32_t mask, dev_t dev, ino_t ino)
{ GC(ctx); return gofer_watch(gc, exp, rel, ifd, mask, dev, ino); }
static int g_winsz(void *ctx, int exp, int fd, const struct winsize *ws)
{ GC(ctx); return gofer_winsz(gc, exp, fd, ws); }
static int g_ptsctl(void *ctx, int exp, int fd, unsigned cmd, int arg, int *peer)
{ GC(ctx); return gofer_ptsctl(gc, exp, fd, cmd, arg, peer); }
static int g_memfdattr(void *ctx, int exp, int fd, mode_t mode, const struct timespec *ts)
{ GC(ctx); return gofer_memfdattr(gc, exp, fd, mode, ts); }
static long g_dirstat(void *ctx, int exp, const char *rel, uint64_t pos, void *buf, size_t len)
{ GC(ctx); return gofer_dirstat(gc, exp, rel, pos, buf, len); }
static int g_devopen(void *ctx, int exp, const char *name, int flags, int count, int *fds,
		     struct stat *st)
{ GC(ctx); return gofer_devopen(gc, exp, name, flags, count, fds, st); }

static long g_getxattr(void *ctx, int exp, const char *rel, const char *name, void *buf, size_t size)
{ GC(ctx); return gofer_getxattr(gc, exp, rel, name, buf, size); }
static long g_listxattr(void *ctx, int exp, const char *rel, char *buf, size_t size)
{ GC(ctx); return gofer_listxattr(gc, exp, rel, buf, size); }
static int g_setxattr(void *ctx, int exp, const char *rel, const char *name, const void *val,
		      size_t size, int flags)
{ GC(ctx); return COW_RETRY(gofer_setxattr(gc, exp, rel, name, val, size, flags)); }
static int g_removexattr(void *ctx, int exp, const char *rel, const char *name)
{ GC(ctx); return COW_RETRY(gofer_removexattr(gc, exp, rel, name)); }

static const struct vfs_backend gofer_backend = {
	.walk = g_walk, .lstat = g_lstat, .open = g_open, .readlink = g_readlink,
	.mkdir = g_mkdir, .mknod = g_mknod, .unlink = g_unlink, .rename = g_rename,
	.symlink = g_symlink, .link = g_link, .chmod = g_chmod, .chown = g_chown,
	.truncate = g_truncate, .utimens = g_utimens, .statfs = g_statfs,
	.getxattr = g_getxattr, .listxattr = g_listxattr, .setxattr = g_setxattr,
	.removexattr = g_removexattr,
	.pathof = g_pathof, .linkfd = g_linkfd, .chownfd = g_chownfd, .dirstat = g_dirstat,
	.watch = g_watch, .devopen = g_devopen, .winsz = g_winsz, .memfdattr = g_memfdattr,
	.ptsctl = g_ptsctl,
};

void vfs_set_backend(struct vfs *v, const struct vfs_backend *ops, void *ctx)
{
	v->be = ops;
	v->bectx = ctx;
}

const struct vfs_backend *vfs_backend(struct vfs *v, void **ctx)
{
	*ctx = v->bectx;
	return v->be;
}

/* ---- mount table ---- */

static int canonical(const char *p)
{
	if (p[0] != '/')
		return 0;
	if (!strcmp(p, "/"))
		return 1;
	for (const char *c = p; *c; ) {
		if (*c != '/')
			return 0;
		const char *e = strchrnul(c + 1, '/');
		size_t n = e - c - 1;
		if (n == 0 || n > NAME_MAX || (n == 1 && c[1] == '.') ||
		    (n == 2 && c[1] == '.' && c[2] == '.'))
			return 0;
		c = e;
	}
	return 1;
}

static int path_under(const char *p, const char *m, size_t mlen)
{
	if (mlen == 0)           /* "/" */
		return 1;
	return !strncmp(p, m, mlen) && (p[mlen] == 0 || p[mlen] == '/');
}

static uint32_t mount_key(const struct vfs_mount *m)
{
	return (uint32_t)m->plen << 8 | (unsigned char)m->path[1];
}

const struct vfs_mount *vfs_mount_for(struct vfs *v, const char *path)
{
	const struct vfs_mount *best = NULL;
	size_t n = atomic_load_explicit(&v->nmnts, memory_order_acquire);
	uint32_t c1 = (unsigned char)path[1], bestlen = 0;

	/* every lookup of every walked component comes here: test the
	 * length and the first character after the '/' (v->mkey, one
	 * contiguous array) before the strncmp (the default mount table
	 * has ~30 entries) */
	for (size_t i = 0; i < n; i++) {
		uint32_t k = v->mkey[i], pl = k >> 8;
		if ((best && pl < bestlen) || (pl && (k & 0xff) != c1))
			continue;
		const struct vfs_mount *m = &v->mnts[i];
		if (path_under(path, m->path, m->plen) && !m->gone) {
			best = m;
			bestlen = pl;
		}
	}
	return best;
}

dev_t vfs_pts_dev(struct vfs *v)
{
	unsigned long long d = atomic_load(&v->pts_dev);
	struct stat st;

	if (d)
		return d == 1 ? 0 : (dev_t)d;
	d = 1; /* none */
	for (size_t i = 0; i < v->nmnts; i++) {
		const struct vfs_mount *m = &v->mnts[i];
		if (m->kind != VFS_MNT_GOFER || !m->dev || strcmp(m->path, "/dev"))
			continue;
		int r = v->be->lstat(v->bectx, m->export, "pts", &st);
		if (r == -EIO)
			return 0; /* the transport: ask again next time */
		if (r == 0 && S_ISDIR(st.st_mode) && st.st_dev)
			d = st.st_dev;
	}
	atomic_store(&v->pts_dev, d);
	return d == 1 ? 0 : (dev_t)d;
}

int vfs_pts_open(struct vfs *v, unsigned index, int flags, int *fd, struct stat *st)
{
	char rel[32];
	dev_t pts = vfs_pts_dev(v);

	if (!pts)
		return -ENXIO;
	for (size_t i = 0; i < v->nmnts; i++) {
		const struct vfs_mount *m = &v->mnts[i];
		if (m->kind != VFS_MNT_GOFER || !m->dev || strcmp(m->path, "/dev"))
			continue;
		snprintf(rel, sizeof rel, "pts/%u", index);
		int r = v->be->open(v->bectx, m->export, rel, (flags & ~(O_CREAT | O_EXCL |
				    O_TRUNC | O_DIRECTORY | O_PATH)) | O_NOCTTY, 0, fd, st);
		if (r < 0)
			return r == -ENOENT ? -ENXIO : r;
		if (st->st_dev != pts || !S_ISCHR(st->st_mode)) {
			close(*fd);
			return -ENXIO;
		}
		return 0;
	}
	return -ENXIO;
}

/* the export of the gofer's /dev (its devpts is the sandbox's), or -1 */
static int dev_export(const struct vfs *v)
{
	for (size_t i = 0; i < v->nmnts; i++) {
		const struct vfs_mount *m = &v->mnts[i];
		if (m->kind == VFS_MNT_GOFER && m->dev && !strcmp(m->path, "/dev"))
			return m->export;
	}
	return -1;
}

int vfs_pts_winsize(struct vfs *v, int fd, const struct winsize *ws)
{
	int exp = dev_export(v);
	if (!v->be->winsz || exp < 0)
		return -EPERM;
	return v->be->winsz(v->bectx, exp, fd, ws);
}

int vfs_pts_ctl(struct vfs *v, int fd, unsigned cmd, int arg, int *peer)
{
	int exp = dev_export(v);
	if (!v->be->ptsctl || exp < 0)
		return -EPERM;
	return v->be->ptsctl(v->bectx, exp, fd, cmd, arg, peer);
}

int vfs_memfd_attr(struct vfs *v, int fd, mode_t mode, const struct timespec *ts, int utimes)
{
	static const struct timespec now[2] = { { .tv_nsec = UTIME_NOW }, { .tv_nsec = UTIME_NOW } };

	if (!v->be->memfdattr)
		return -EPERM;
	for (size_t i = 0; i < v->nmnts; i++)
		if (v->mnts[i].kind == VFS_MNT_GOFER)
			return v->be->memfdattr(v->bectx, v->mnts[i].export, fd,
						mode & 07777 & ~(mode_t)(S_ISUID | S_ISGID),
						utimes ? (ts ? ts : now) : NULL);
	return -EPERM;
}

const struct vfs_synth *vfs_synth_find(struct vfs *v, const char *path)
{
	/* every look-up below a mount's root comes here: the character
	 * after the '/' first, as vfs_mount_for does */
	char c1 = path[0] ? path[1] : 0; /* synthetic paths are absolute */
	for (size_t i = 0; i < v->nsynth; i++)
		if (v->synth[i].path[1] == c1 && !strcmp(v->synth[i].path, path))
			return &v->synth[i];
	return NULL;
}

int vfs_holds_mounts(struct vfs *v, const char *path)
{
	const struct vfs_synth *s = strcmp(path, "/") ? vfs_synth_find(v, path) : NULL;

	return s && s->n > 0;
}

unsigned long long vfs_private_used(struct vfs *v)
{
	fsid_t seen[32];
	size_t nseen = 0, n = atomic_load(&v->nmnts);
	unsigned long long sum = 0;

	for (size_t i = 0; i < n && nseen < ARRAY_SIZE(seen); i++) {
		const struct vfs_mount *m = &v->mnts[i];
		struct statfs sf;
		size_t k;

		if (m->kind != VFS_MNT_GOFER || !m->private_fs || !m->can_write || atomic_load(&m->gone) ||
		    VFS_BE(v, statfs, m->export, "", &sf) < 0)
			continue;
		for (k = 0; k < nseen && memcmp(&seen[k], &sf.f_fsid, sizeof sf.f_fsid); k++)
			;
		if (k < nseen)
			continue; /* a bind of one already counted (the pool) */
		seen[nseen++] = sf.f_fsid;
		if (sf.f_blocks >= sf.f_bfree)
			sum += (unsigned long long)(sf.f_blocks - sf.f_bfree) * (unsigned long long)sf.f_bsize;
	}
	return sum;
}

char *const *vfs_synth_children(struct vfs *v, const char *path)
{
	const struct vfs_synth *s = vfs_synth_find(v, path);

	return s ? s->children : NULL;
}

static struct vfs_synth *synth_get(struct vfs *v, const char *path)
{
	struct vfs_synth *s = (struct vfs_synth *)vfs_synth_find(v, path);

	if (s)
		return s;
	v->synth = realloc(v->synth, (v->nsynth + 1) * sizeof *v->synth);
	if (!v->synth)
		die("out of memory");
	s = &v->synth[v->nsynth++];
	s->path = xstrdup(path);
	s->children = xcalloc(1, sizeof(char *));
	s->n = 0;
	return s;
}

static void synth_add_child(struct vfs *v, const char *dir, const char *name)
{
	struct vfs_synth *s = synth_get(v, dir);

	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->children[i], name))
			return;
	s->children = realloc(s->children, (s->n + 2) * sizeof(char *));
	if (!s->children)
		die("out of memory");
	s->children[s->n++] = xstrdup(name);
	s->children[s->n] = NULL;
}

/* Register every ancestor of mount point p, each naming its child. */
static void synth_register(struct vfs *v, const char *p)
{
	char buf[PATH_MAX];

	snprintf(buf, sizeof buf, "%s", p);
	synth_get(v, "/");
	while (strcmp(buf, "/")) {
		char *slash = strrchr(buf, '/');
		char name[NAME_MAX + 1];
		snprintf(name, sizeof name, "%s", slash + 1);
		if (slash == buf)
			slash[1] = 0;
		else
			*slash = 0;
		synth_add_child(v, buf, name);
	}
}

void vfs_synth_stat(struct vfs *v, const char *path, struct stat *st)
{
	memset(st, 0, sizeof *st);
	st->st_dev = v->synth_dev;
	st->st_ino = (moat_hash(path, strlen(path)) & 0x7fffffff) | 1;
	st->st_mode = S_IFDIR | 0755;
	st->st_nlink = 2;
	st->st_blksize = 4096;
	st->st_size = 4096;
	st->st_atim = st->st_mtim = st->st_ctim = v->ctime;
}


/* The device numbers of synthetic nodes (synth_dev: directories made for
 * mount points, /dev entries of our own; procfs_dev: /proc). private_file
 * takes a stat with one of them for the sandbox's own, so they must be no
 * host file system's: fixed numbers (0:0xfe and 0:0x4d before) are
 * anonymous devices the kernel hands out to tmpfs, overlayfs and its lower
 * layers' pseudo devices too, and a sealed host file (0711 program) on an
 * overlay whose lower layer had 0:0x4d ran (found in review). The kernel's
 * own internal file systems hold their anonymous device for the life of the
 * machine and never share it: anon_inodefs (an eventfd's) for synth_dev,
 * pipefs (a pipe's) for /proc until the guest's real procfs, whose device is
 * as unique while the sandbox holds it, replaces it (vfs_set_proc_dev).
 * Guest eventfds and pipes share these numbers; they are its own objects. */
static void vfs_reserve_devs(struct vfs *v)
{
	struct stat st;
	int fd = eventfd(0, EFD_CLOEXEC), p[2];

	v->synth_dev = fd >= 0 && fstat(fd, &st) == 0 ? st.st_dev : makedev(0, 0xfe);
	if (fd >= 0)
		close(fd);
	if (pipe2(p, O_CLOEXEC) == 0) {
		if (fstat(p[0], &st) == 0 && st.st_dev != v->synth_dev)
			procfs_dev = st.st_dev;
		close(p[0]);
		close(p[1]);
	}
}

void vfs_set_proc_dev(int procfd)
{
	struct stat st;

	if (procfd >= 0 && fstat(procfd, &st) == 0)
		procfs_dev = st.st_dev;
}

int vfs_create(struct sandbox *sb, const struct vfs_mount_spec *m, size_t n,
	       int gofer_ctl, struct vfs **out, char *err, size_t errlen)
{
	struct vfs *v = xcalloc(1, sizeof *v);
	int have_root = 0;

	v->sb = sb;
	v->gofer_ctl = gofer_ctl;
	v->gen = atomic_fetch_add(&vfs_gens, 1);
	if (pin_fd < 0)
		pin_fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
	v->be = &gofer_backend;
	v->bectx = v;
	vfs_reserve_devs(v);
	clock_gettime(CLOCK_REALTIME, &v->ctime);
	v->mcap = n + 1 + VFS_GUEST_MOUNTS;
	v->mnts = xcalloc(v->mcap, sizeof *v->mnts);
	v->mkey = xcalloc(v->mcap, sizeof *v->mkey);
	pthread_mutex_init(&v->mount_lock, NULL);
	for (size_t i = 0; i < n; i++) {
		struct vfs_mount *d = &v->mnts[v->nmnts];
		if (m[i].kind == VFS_MNT_SPARE) {
			if (v->nspare < ARRAY_SIZE(v->spare))
				v->spare[v->nspare++] = m[i].export;
			continue;
		}
		if (!m[i].path || !canonical(m[i].path)) {
			snprintf(err, errlen, "mount path '%s' is not a canonical absolute path",
				 m[i].path ? m[i].path : "(null)");
			goto fail;
		}
		if (m[i].kind != VFS_MNT_GOFER && m[i].kind != VFS_MNT_PROC &&
		    m[i].kind != VFS_MNT_SYMLINK) {
			snprintf(err, errlen, "mount %s: unknown kind %d", m[i].path, m[i].kind);
			goto fail;
		}
		if (m[i].kind == VFS_MNT_SYMLINK && (!m[i].target || !*m[i].target ||
						     !strcmp(m[i].path, "/"))) {
			snprintf(err, errlen, "symlink mount %s needs a target", m[i].path);
			goto fail;
		}
		d->idx = d->pos = (int)v->nmnts;
		d->kind = m[i].kind;
		d->path = xstrdup(m[i].path);
		d->plen = strcmp(d->path, "/") ? strlen(d->path) : 0;
		d->export = m[i].export;
		d->writable = m[i].kind == VFS_MNT_GOFER && m[i].writable;
		d->can_write = d->writable;
		d->dev = m[i].kind == VFS_MNT_GOFER && m[i].dev;
		d->private_fs = m[i].kind == VFS_MNT_GOFER && m[i].private_fs;
		d->shared = m[i].kind == VFS_MNT_GOFER && m[i].shared;
		d->system = m[i].kind == VFS_MNT_GOFER && m[i].system;
		d->host_view = m[i].kind == VFS_MNT_GOFER && m[i].host_view && !d->private_fs;
		d->cow = m[i].kind == VFS_MNT_GOFER && m[i].cow;
		d->aliased = m[i].kind == VFS_MNT_GOFER && m[i].aliased;
		snprintf(d->src, sizeof d->src, "%s", d->dev ? "dev" : d->private_fs ? "tmpfs" :
			 m[i].kind == VFS_MNT_PROC ? "proc" : "moat");
		d->target = m[i].target ? xstrdup(m[i].target) : NULL;
		if (m[i].hidden) {
			size_t k = 0;
			while (m[i].hidden[k])
				k++;
			d->hidden = xcalloc(k + 1, sizeof(char *));
			for (size_t j = 0; j < k; j++)
				d->hidden[j] = xstrdup(m[i].hidden[j]);
		}
		if (d->plen == 0)
			have_root = 1;
		v->mkey[v->nmnts] = mount_key(d);
		v->nmnts++;
	}
	if (!have_root) {
		struct vfs_mount *d = &v->mnts[v->nmnts];
		d->idx = d->pos = (int)v->nmnts++;
		d->kind = VFS_MNT_SYNTH;
		d->path = xstrdup("/");
		d->plen = 0;
		v->mkey[d->pos] = mount_key(d);
		snprintf(d->src, sizeof d->src, "none");
	}
	for (size_t i = 0; i < v->nmnts; i++)
		synth_register(v, v->mnts[i].path);
	v->dc = dcache_new();
	v->ws = wset_new();
	/* the guest inherits our stdio: a file there is written natively */
	for (int fd = 0; fd < 3; fd++) {
		struct stat sst;
		if (fstat(fd, &sst) == 0)
			vfs_note_written(v, &sst);
	}
	v->im = inomap_new();
	v->fim = inomap_new();
	v->lim = inomap_new();
	v->tim = inomap_new();
	v->him = inomap_new();
	if (getrandom(&v->handle_key, sizeof v->handle_key, 0) != sizeof v->handle_key)
		v->handle_key = (uint64_t)v ^ (uint64_t)v->ctime.tv_nsec;
	{
		struct utsname u;
		unsigned maj = 0, min = 0;
		if (uname(&u) == 0 && sscanf(u.release, "%u.%u", &maj, &min) == 2)
			v->flink = maj > 6 || (maj == 6 && min >= 10);
	}
	v->vm = vmeta_new();
	v->vx = vxattr_new();
	{
		struct stat mst;
		int mfd = memfd_create("moat-probe", MFD_CLOEXEC);

		if (mfd >= 0 && fstat(mfd, &mst) == 0)
			v->memfd_dev = mst.st_dev;
		if (mfd >= 0)
			close(mfd);
	}
	*out = v;
	return 0;
fail:
	vfs_destroy(v);
	return -EINVAL;
}

void vfs_destroy(struct vfs *v)
{
	if (!v)
		return;
	for (size_t i = 0; i < v->nmnts; i++) {
		struct vfs_mount *m = &v->mnts[i];
		free(m->path);
		free(m->target);
		free(m->sub);
		for (char **h = m->hidden; h && *h; h++)
			free(*h);
		free(m->hidden);
		free(m->hidden_dirs);
	}
	free(v->mnts);
	free(v->mkey);
	pthread_mutex_destroy(&v->mount_lock);
	for (size_t i = 0; i < v->nsynth; i++) {
		for (size_t j = 0; j < v->synth[i].n; j++)
			free(v->synth[i].children[j]);
		free(v->synth[i].children);
		free(v->synth[i].path);
	}
	free(v->synth);
	free(v->droots);
	free(v->memfd_own);
	dcache_free(v->dc);
	wset_free(v->ws);
	inomap_free(v->im);
	inomap_free(v->fim);
	inomap_free(v->lim);
	inomap_free(v->tim);
	inomap_free(v->him);
	vmeta_free(v->vm);
	vxattr_free(v->vx);
	if (tl_conn && tl_gen == v->gen) {
		gofer_disconnect(tl_conn);
		tl_conn = NULL;
	}
	free(v);
}

struct sandbox *vfs_sandbox(struct vfs *v)
{
	return v->sb;
}

void vfs_map_stat(struct vfs *v, struct stat *st)
{
	if (!v->sb)
		return;
	st->st_uid = idmap_uid_to_guest(&v->sb->idmap, st->st_uid);
	st->st_gid = idmap_gid_to_guest(&v->sb->idmap, st->st_gid);
}

int vfs_is_memfd(struct vfs *v, const struct stat *st)
{
	return v->memfd_dev && st->st_dev == v->memfd_dev && S_ISREG(st->st_mode) &&
	       st->st_nlink == 0;
}

/* The guest's memfds by inode number (the internal shmem mount's, one
 * st_dev for every memfd on the host: only the inode tells them apart; its
 * numbers come from the kernel's get_next_ino, a 32-bit counter, so one
 * recurs only after ~4e9 inodes made on the host). The last
 * VFS_MEMFD_OWN_MAX made are kept (a ring): an older one's chmod and
 * utimens are EPERM, as a host peer's (fail closed). */
#define VFS_MEMFD_OWN_MAX 65536
static pthread_mutex_t memfd_lock = PTHREAD_MUTEX_INITIALIZER;

void vfs_memfd_made(struct vfs *v, const struct stat *st)
{
	pthread_mutex_lock(&memfd_lock);
	if (!v->memfd_own)
		v->memfd_own = calloc(VFS_MEMFD_OWN_MAX, sizeof *v->memfd_own);
	if (v->memfd_own)
		v->memfd_own[v->memfd_own_n++ % VFS_MEMFD_OWN_MAX] = st->st_ino;
	pthread_mutex_unlock(&memfd_lock);
}

int vfs_memfd_guests(struct vfs *v, const struct stat *st)
{
	int found = 0;
	pthread_mutex_lock(&memfd_lock);
	size_t n = v->memfd_own_n < VFS_MEMFD_OWN_MAX ? v->memfd_own_n : VFS_MEMFD_OWN_MAX;
	for (size_t i = 0; v->memfd_own && i < n && !found; i++)
		found = v->memfd_own[i] == st->st_ino;
	pthread_mutex_unlock(&memfd_lock);
	return found && vfs_is_memfd(v, st);
}

int vfs_caller_stdio_access(struct vfs *v, const struct stat *st)
{
	int acc = -1;

	for (int i = 0; v->sb && i < 3; i++) {
		struct stat cs;
		int fl, fd = v->sb->caller_stdio[i];
		if (fd < 0 || fstat(fd, &cs) < 0 || cs.st_dev != st->st_dev || cs.st_ino != st->st_ino ||
		    (fl = fcntl(fd, F_GETFL)) < 0)
			continue;
		acc = (acc < 0 ? 0 : acc) | ((fl & O_ACCMODE) != O_WRONLY ? MAY_READ : 0) |
		      ((fl & O_ACCMODE) != O_RDONLY ? MAY_WRITE : 0);
	}
	return acc;
}

/* Host mount mnt serves export exp (see vfs_priv.h hmnt). */
static void hmnt_note(struct vfs *v, uint64_t mnt, int exp)
{
	if (!mnt || exp < 0 || exp >= 255 || mnt >= (1ull << 56))
		return;
	uint64_t want = mnt << 8 | (uint64_t)(exp + 1);
	for (unsigned k = 0, s = (unsigned)(mnt % VFS_HMNT_SLOTS); k < VFS_HMNT_SLOTS;
	     k++, s = (s + 1) % VFS_HMNT_SLOTS) {
		uint64_t cur = atomic_load_explicit(&v->hmnt[s], memory_order_relaxed);
		if (cur >> 8 == mnt) {
			if (cur != want) /* another export? then it names none */
				atomic_store(&v->hmnt[s], mnt << 8 | 0xff);
			return;
		}
		if (!cur) {
			if (atomic_compare_exchange_strong(&v->hmnt[s], &cur, want))
				return;
			if (cur >> 8 == mnt) {
				if (cur != want)
					atomic_store(&v->hmnt[s], mnt << 8 | 0xff);
				return;
			}
		}
	}
}

/* The export host mount mnt serves, -1 unknown (never seen, table full, or
 * seen serving two: *seen set then) */
static int hmnt_export_seen(struct vfs *v, uint64_t mnt, int *seen)
{
	*seen = 0;
	if (!mnt || mnt >= (1ull << 56))
		return -1;
	for (unsigned k = 0, s = (unsigned)(mnt % VFS_HMNT_SLOTS); k < VFS_HMNT_SLOTS;
	     k++, s = (s + 1) % VFS_HMNT_SLOTS) {
		uint64_t cur = atomic_load(&v->hmnt[s]);
		if (!cur)
			return -1;
		if (cur >> 8 == mnt) {
			*seen = 1;
			return (cur & 0xff) == 0xff ? -1 : (int)(cur & 0xff) - 1;
		}
	}
	return -1;
}

static int hmnt_export(struct vfs *v, uint64_t mnt)
{
	int seen;
	return hmnt_export_seen(v, mnt, &seen);
}

int vfs_fd_on_export(struct vfs *v, int fd)
{
	int seen;
	(void)hmnt_export_seen(v, fd_mount_id(fd), &seen);
	return seen;
}

int vfs_path_of_inode(struct vfs *v, dev_t dev, ino_t ino, char *buf, size_t len)
{
	/* a name to show: the inode's in any host mount */
	int r = inomap_get_any(v->im, dev, ino, buf, len);

	if (r < 0)
		r = inomap_get_any(v->fim, dev, ino, buf, len);
	if (r < 0)
		r = inomap_get(v->lim, dev, ino, buf, len);
	return r < 0 ? r : (int)strlen(buf);
}

int vfs_path_of_file(struct vfs *v, const struct stat *st, char *buf, size_t len)
{
	static const char deleted[] = " (deleted)";
	int r = vfs_path_of_inode(v, st->st_dev, st->st_ino, buf, len);

	if (r < 0 || st->st_nlink != 0 || (v->memfd_dev && st->st_dev == v->memfd_dev))
		return r;
	if ((size_t)r + sizeof deleted > len)
		return -ENAMETOOLONG;
	memcpy(buf + r, deleted, sizeof deleted);
	return r + (int)sizeof deleted - 1;
}

void vfs_renamed(struct vfs *v, const struct stat *st, const char *from, const char *to)
{
	if (!S_ISDIR(st->st_mode)) {
		/* the file's entries under the old name, in whichever host
		 * mount (a scan of one name's: those of other names stay) */
		inomap_renamed_exact(v->fim, st->st_dev, st->st_ino, from, to);
		return;
	}
	inomap_renamed(v->fim, from, to);
	inomap_renamed(v->im, from, to);
}

static void parent_changed(struct vfs *v, const struct vfs_mount *m, const char *rel);

void vfs_invalidate(struct vfs *v, const struct vfs_mount *m, const char *rel, int subtree)
{
	dcache_drop(v->dc, m->idx, rel, subtree);
	parent_changed(v, m, rel);
}

static void parent_changed(struct vfs *v, const struct vfs_mount *m, const char *rel)
{
	/* the parent directory's times, size and nlink changed with it; its
	 * type, mode and owner did not. A cached parent stays, its inode in
	 * the written set: walks through it use the entry as they would have,
	 * a stat of it is fresh (the sentry's own fstat, vfs_direct_restat,
	 * else the gofer). Dropping it cost every create or unlink in a
	 * directory a gofer walk of that directory on the next call (tar -x,
	 * rm -r, git's objects). On a cow export an overlay directory's inode
	 * may change with a copy-up (the change copied it up: layers on two
	 * file systems without xino): there it stays only if the sentry's own
	 * fstat through the overlay's read-only clone still finds the cached
	 * inode and type (vfs_direct_restat), else it is dropped as before. */
	if (*rel) {
		const char *sl = strrchr(rel, '/');
		char parent[VFS_PATH_MAX];
		size_t pl = sl ? (size_t)(sl - rel) : 0;
		struct stat pst;
		int neg = 0;
		if (pl < sizeof parent) {
			memcpy(parent, rel, pl);
			parent[pl] = 0;
			struct stat fresh;
			if (!m->shared && dcache_get(v->dc, m->idx, parent, &pst, &neg, NULL, 0) &&
			    !neg && S_ISDIR(pst.st_mode) &&
			    (!m->cow || vfs_direct_restat(v, m, parent, &pst, &fresh) == 0))
				wset_add(v->ws, pst.st_dev, pst.st_ino);
			else
				dcache_drop(v->dc, m->idx, parent, 0);
		}
	}
}

/* A change made through one name (chmod, chown, utimens, truncate) is the
 * inode's: a non-directory with other links has other names cached with the
 * old mode and owner, and so has any object of a mount another mount aliases
 * (two --bind of one host tree: other dentry-cache keys), and open/exec/
 * access check the cached entry (only stat-like calls re-stat a multi-link
 * file). Red-team 9: root's chmod 600
 * through one link left the other readable to a process that dropped root. */
static void other_links_changed(struct vfs *v, const struct vfs_mount *m, const struct stat *a,
				const struct stat *b)
{
	if (m->aliased || (a && !S_ISDIR(a->st_mode) && a->st_nlink > 1) ||
	    (b && !S_ISDIR(b->st_mode) && b->st_nlink > 1))
		dcache_drop_inode(v->dc, a ? a->st_dev : b->st_dev, a ? a->st_ino : b->st_ino);
}

void vfs_refresh(struct vfs *v, const struct vfs_mount *m, const char *rel, const struct stat *known)
{
	struct stat st;

	other_links_changed(v, m, known, NULL);
	dcache_drop(v->dc, m->idx, rel, 0);
	if (m->kind != VFS_MNT_GOFER || !m->writable || m->shared)
		return;
	unsigned long gen = dcache_gen(v->dc);
	if (vfs_direct_restat(v, m, rel, known, &st) == 0) {
		other_links_changed(v, m, &st, NULL);
		dcache_put(v->dc, gen, m->idx, rel, &st, 0, NULL);
	}
}

static void note_devs(struct vfs *v, const struct vfs_mount *m, dev_t dev);

/* rel as the gofer's lstat *st (host ids) saw it right after the sentry
 * changed it (made, linked): cached as a look-up would have cached it, with
 * *gen taken before the change (dcache_put_bump: look-ups in flight then
 * cannot land an older answer over it), or dropped. */
static void put_changed(struct vfs *v, unsigned long *gen, const struct vfs_mount *m,
			const char *rel, const struct stat *st)
{
	if (m->kind == VFS_MNT_GOFER && m->writable && !m->shared && *rel && st && st->st_ino &&
	    (S_ISREG(st->st_mode) || S_ISDIR(st->st_mode)) && !vfs_is_hidden(m, rel)) {
		struct stat s = *st;
		note_devs(v, m, s.st_dev);
		vfs_map_stat(v, &s);
		dcache_put_bump(v->dc, gen, m->idx, rel, &s); /* drops rel when it cannot */
		return;
	}
	dcache_drop(v->dc, m->idx, rel, 0);
}

/* An exclusive mount of a host directory: every change to its names is the
 * sentry's own (not shared, no other mount of the same tree, not an overlay) */
static int mnt_exclusive(const struct vfs_mount *m)
{
	return m->kind == VFS_MNT_GOFER && m->writable && !m->shared && !m->aliased && !m->cow;
}

void vfs_made_dir(struct vfs *v, const struct vfs_mount *m, const char *rel, const struct stat *st,
		  unsigned long gen0)
{
	put_changed(v, &gen0, m, rel, st);
	/* A directory just made is empty, and every name made in it from now
	 * on is the sentry's own change (an exclusive mount: not shared, no
	 * other mount of the same tree, not an overlay): a miss beneath it is
	 * an absent name with no openat2 of the sentry's (git's access of
	 * each new object's name in a new objects/XX; dcache.h, "complete
	 * directories", for what unmarks it) */
	if (mnt_exclusive(m) && !getenv("MOAT_NO_COMPLETE_DIRS"))
		dcache_mark_complete(v->dc, gen0, m->idx, rel);
	parent_changed(v, m, rel);
}

void vfs_unlinked(struct vfs *v, const struct vfs_mount *m, const char *rel, unsigned long gen0)
{
	/* absent now, as the gofer's unlink left it: a negative entry in
	 * place of the old one (a drop would unmark a complete directory,
	 * dcache.h: git unlinks its tmp_obj_X in objects/XX after each link) */
	if (mnt_exclusive(m) && *rel && !vfs_is_hidden(m, rel)) {
		dcache_put_neg_bump(v->dc, &gen0, m->idx, rel); /* drops rel when it cannot */
		parent_changed(v, m, rel);
		return;
	}
	vfs_invalidate(v, m, rel, 0);
}

void vfs_linked(struct vfs *v, const struct vfs_mount *m, const char *orel, const char *nrel,
		const struct stat st[2], unsigned long gen0)
{
	put_changed(v, &gen0, m, nrel, st ? &st[0] : NULL);
	/* the old name: the same inode (one more link), if the gofer saw it so */
	put_changed(v, &gen0, m, orel,
		    st && st[1].st_ino == st[0].st_ino && st[1].st_dev == st[0].st_dev ? &st[1] : NULL);
	parent_changed(v, m, nrel);
	parent_changed(v, m, orel);
}

void vfs_drop_beneath(struct vfs *v, const struct vfs_mount *m, const char *rel)
{
	dcache_drop(v->dc, m->idx, rel, 1);
}

unsigned long vfs_cache_gen(struct vfs *v)
{
	return dcache_gen(v->dc);
}

void vfs_refresh_since(struct vfs *v, const struct vfs_mount *m, const char *rel,
		       const struct stat *known, int hfd, unsigned long gen0)
{
	struct stat st;

	/* the held fd first: one fstat where the re-stat by name is an
	 * openat2, an fstat and a close (the name was the object's when the
	 * gofer changed it; gen0 covers what happened to the name since) */
	if (m->kind == VFS_MNT_GOFER && m->writable && !m->shared && *rel &&
	    (S_ISREG(known->st_mode) || S_ISDIR(known->st_mode)) &&
	    ((hfd >= 0 && fstat(hfd, &st) == 0 && st.st_dev == known->st_dev &&
	      st.st_ino == known->st_ino && (st.st_mode & S_IFMT) == (known->st_mode & S_IFMT)) ||
	     vfs_direct_restat(v, m, rel, known, &st) == 0)) {
		st.st_uid = known->st_uid;
		st.st_gid = known->st_gid;
		other_links_changed(v, m, known, &st);
		/* bumping: a look-up that saw the name absent before the
		 * create cannot land that answer after it */
		dcache_put_bump(v->dc, &gen0, m->idx, rel, &st);
		return;
	}
	other_links_changed(v, m, known, NULL);
	dcache_drop(v->dc, m->idx, rel, 0);
}

int vfs_is_hidden(const struct vfs_mount *m, const char *rel)
{
	for (char **h = m->hidden; h && *h; h++) {
		size_t n = strlen(*h);
		if (!strncmp(rel, *h, n) && (rel[n] == 0 || rel[n] == '/'))
			return 1;
	}
	return 0;
}

int vfs_hides_child(const struct vfs_mount *m, const char *dir)
{
	size_t dl = strlen(dir);
	for (char **h = m->hidden; h && *h; h++)
		if (vfs_hidden_in_dir(*h, dir, dl))
			return 1;
	return 0;
}

int vfs_watch_refused(const struct vfs_node *n)
{
	if (n->kind == VN_BACKEND && n->mnt && S_ISDIR(n->st.st_mode) &&
	    vfs_hides_child(n->mnt, n->rel))
		return -EACCES;
	return 0;
}

uint32_t vfs_watch_host_events(const struct vfs_node *n)
{
	const struct vfs_mount *m = n->mnt;

	if (n->kind != VN_BACKEND || !m || m->kind != VFS_MNT_GOFER)
		return 0;
	if (m->dev || !(S_ISREG(n->st.st_mode) || S_ISDIR(n->st.st_mode) || S_ISLNK(n->st.st_mode)))
		return IN_ACCESS | IN_OPEN | IN_CLOSE_NOWRITE | IN_MODIFY | IN_CLOSE_WRITE;
	if (m->private_fs || m->cow)
		return 0; /* the sandbox's own files, or an overlay's merged inode */
	return IN_ACCESS | IN_OPEN | IN_CLOSE_NOWRITE;
}

int vfs_mount_write_err(const struct vfs_mount *m)
{
	switch (m->kind) {
	case VFS_MNT_GOFER:
		if (m->dev)
			return -EACCES;
		return m->writable ? 0 : -EROFS;
	case VFS_MNT_PROC:
		return -EACCES;
	default:
		return -EROFS;
	}
}

/* A name to create that does not exist in a procfs mount: /proc's is ENOENT
 * (Linux: no procfs directory makes names), /sys's EROFS (a read-only sysfs
 * mount, as in Docker: LTP's cgroup set-up, mkdir in /sys/fs/cgroup, then
 * skips with TCONF instead of breaking: mmap22, madvise09). */
static int vfs_proc_dir_mount(const struct vfs_mount *m);

int vfs_proc_create_err(const struct vfs_mount *m)
{
	return m && m->kind == VFS_MNT_PROC && m->target && vfs_proc_dir_mount(m) ? -EROFS : -ENOENT;
}

/* ---- permissions ---- */

/* Put dev into a device table of GOFER_MAX_EXPORTS slots (lock-free: a
 * slot goes from 0 to a device once). 0 when it is there, -1 when full. */
static int note_dev(_Atomic unsigned long long *tab, dev_t dev)
{
	for (size_t i = 0; i < GOFER_MAX_EXPORTS; i++) {
		unsigned long long cur = atomic_load(&tab[i]);
		if (cur == (unsigned long long)dev)
			return 0;
		if (cur == 0) {
			unsigned long long zero = 0;
			if (atomic_compare_exchange_strong(&tab[i], &zero, dev) ||
			    zero == (unsigned long long)dev)
				return 0;
		}
	}
	return -1;
}

/* Is dev in a table note_dev fills? */
static int has_dev(_Atomic unsigned long long *tab, dev_t dev)
{
	for (size_t i = 0; i < GOFER_MAX_EXPORTS; i++) {
		unsigned long long d = atomic_load(&tab[i]);
		if (d == 0)
			break;
		if (d == (unsigned long long)dev)
			return 1;
	}
	return 0;
}

/* Remember that dev is the file system of a private export. */
static void note_private_dev(struct vfs *v, dev_t dev)
{
	(void)note_dev(v->privdev, dev);
}

/* Remember that dev is a file system of the system view's host directories
 * (an overlay of the root's /usr, /etc..., or with --overlay none the host's
 * own file system: a --bind on that one is then sealed alike). Noted where
 * a stat of a host_view mount enters the VFS (be_put, the opens), before any
 * permission check can see it. An overlay shows up to three: its own (its
 * directories), its upper layer's files, and a pseudo device of its lower
 * file system for lower files (overlayfs without xino). */
static void note_view_dev(struct vfs *v, dev_t dev)
{
	if (note_dev(v->viewdev, dev) < 0)
		atomic_store(&v->viewdev_full, 1); /* fail closed: see sealed_file */
}

static void note_devs(struct vfs *v, const struct vfs_mount *m, dev_t dev)
{
	if (m->private_fs)
		note_private_dev(v, dev);
	else if (m->host_view)
		note_view_dev(v, dev);
}

/* A sealed file: a host file of the system view (not one the sandbox made)
 * that host users other than its owner and group may not read (no S_IROTH:
 * /etc/default/cacerts, a 0600 key under /opt, a 0700 directory). Run as
 * root, guest root acts as host uid 0 on host files and would be their
 * owner; the system view promises the host's programs, not its secrets
 * (red-team finding: guest root read root's 0600 files in /etc and /opt
 * through the gofer). On a sealed file every task is "other". */
static int sealed_file(struct vfs *v, const struct stat *st)
{
	if (!v || (st->st_mode & S_IROTH) || S_ISLNK(st->st_mode))
		return 0;
	if (atomic_load(&v->viewdev_full))
		return 1; /* a view dev went unrecorded: every host file may be one */
	return has_dev(v->viewdev, st->st_dev);
}

/* Is st a file of the sandbox's own (no host file): a synthetic node, /proc,
 * or a private in-memory export? Anything else is a host file. */
static int private_file(struct vfs *v, const struct stat *st)
{
	if (!v)
		return 0;
	if (st->st_dev == v->synth_dev || st->st_dev == PROCFS_DEV)
		return 1;
	return has_dev(v->privdev, st->st_dev);
}

static const struct idmap identity = { .full_identity = 1 };

/* Which of st's owner classes does cred c fall in (acting as uid/gid):
 * 2 owner, 1 group, 0 other. Group: gid or, for the fs credentials, a
 * supplementary group. On host files through the idmap accessors: the host
 * ids the credentials act as against the host ids behind the owner shown. */
static int owner_class(struct task *t, const struct cred *c, uid_t uid, gid_t gid,
		       const struct stat *st, int host)
{
	const struct idmap *m = t->sb ? &t->sb->idmap : &identity;
	int fs = c && gid == c->fsgid;

	if (!host) {
		if (uid == st->st_uid)
			return 2;
		return gid == st->st_gid || (fs && cred_in_group(c, st->st_gid)) ? 1 : 0;
	}
	uid_t hu = idmap_cred_uid_to_host(m, uid);
	if (hu != (uid_t)-1 && hu == idmap_view_uid_to_host(m, st->st_uid))
		return 2;
	gid_t fg = idmap_view_gid_to_host(m, st->st_gid);
	if (fg == (gid_t)-1)
		return 0;
	gid_t hg = idmap_cred_gid_to_host(m, gid);
	if (hg != (gid_t)-1 && hg == fg)
		return 1;
	if (fs && c->groups)
		for (int i = 0; i < c->groups->n; i++) {
			gid_t h = idmap_cred_gid_to_host(m, c->groups->g[i]);
			if (h != (gid_t)-1 && h == fg)
				return 1;
		}
	return 0;
}

/*
 * May task t access an inode with stat st (a real file's guest view) for
 * mask (MAY_*)? The rules, in order:
 *  1. An empty mask is always granted.
 *  2. On the sandbox's own files (synthetic nodes, /proc, private tmpfs
 *     exports) a task with the virtual CAP_DAC_OVERRIDE (kernel/cred.h) is
 *     granted read and write on anything, and search on a directory; execute
 *     on a non-directory needs at least one x bit (capable_wrt_inode_uidgid +
 *     CAP_DAC_OVERRIDE in Linux). CAP_DAC_READ_SEARCH is never granted. On
 *     host files guest root has no override: only the mode bits of its class
 *     (rules 3-5), whatever the gofer could do. A root that dropped its
 *     capabilities (setuid, capset) has no override anywhere.
 *  3. The owner gets the owner bits, and only those: an owner without a bit
 *     is denied even if group or other has it. On host files "owner" means
 *     the host id the credentials act as (idmap_cred_uid_to_host) is the
 *     host id behind the file's owner (idmap_view_uid_to_host).
 *  4. A member of the file's group (fsgid or a supplementary group; on host
 *     files compared as in 3) gets the group bits, and only those.
 *  5. Everyone else gets the other bits.
 * Denial is -EACCES. Virtual owners and set-id bits (fs/vmeta.c) never
 * enter: checks see the real file, except on a host file the sandbox
 * created (the gofer made it as itself, vmeta_made): that one is the
 * sandbox's own, checked as a private file with the ids the guest sees
 * (its creator's, or what was chown'ed since), so a guest of any ids can
 * use what it made, as on Linux. Nothing else of the host becomes
 * reachable: such a file holds only what the guest wrote.
 */
static int own_file(struct task *t, const struct stat **st, struct stat *buf)
{
	struct vfs *v = t->sb ? t->sb->vfs : NULL;

	if (private_file(v, *st))
		return 1;
	if (!v || !vmeta_made(v->vm, *st, buf)) {
		/* a lower file copied up by hand: checked as the original */
		if (v && vmeta_checked(v->vm, *st, buf))
			*st = buf;
		return 0;
	}
	*st = buf; /* the ids the guest sees, one look-up */
	return 1;
}

static int permission(struct task *t, int fscred, const struct stat *st, int mask, int own)
{
	struct stat vbuf;
	int priv = own ? 1 : own_file(t, &st, &vbuf);
	mode_t m = st->st_mode;
	uid_t uid = fscred ? t->cred.fsuid : t->cred.ruid;
	gid_t gid = fscred ? t->cred.fsgid : t->cred.rgid;
	int bits;

	if (!mask)                                             /* 1 */
		return 0;
	/* access(2) checks with the real ids and, for a non-root real uid, no
	 * capabilities (Linux: access_override_creds clears them) */
	int override = fscred ? cred_capable(&t->cred, CRED_CAP_DAC_OVERRIDE)
			      : (uid == 0 && (t->cred.cap_prm & CRED_BIT(CRED_CAP_DAC_OVERRIDE)));
	if (override && priv) {                                /* 2 */
		if (!(mask & MAY_EXEC) || S_ISDIR(m) || (m & 0111))
			return 0;
		return -EACCES;
	}
	switch (!priv && sealed_file(t->sb ? t->sb->vfs : NULL, st) ? 0 :
		owner_class(t, &t->cred, uid, gid, st, !priv)) {
	case 2: bits = (m >> 6) & 7; break;                    /* 3 */
	case 1: bits = (m >> 3) & 7; break;                    /* 4 */
	default: bits = m & 7; break;                          /* 5 */
	}
	return (bits & mask) == mask ? 0 : -EACCES;
}

int vfs_permission(struct task *t, const struct stat *st, int mask)
{
	return permission(t, 1, st, mask, 0);
}

int vfs_permission_real(struct task *t, const struct stat *st, int mask)
{
	return permission(t, 0, st, mask, 0);
}

int vfs_permission_obj(struct task *t, const struct stat *st, int mask)
{
	return permission(t, 1, st, mask, 1);
}

/*
 * POSIX ACLs of host files (red team 80). The rules above read the mode
 * bits only, and root-run the gofer opens with the real override, so
 * nothing else saw an access ACL: a host file 0644 with "user:1000:---"
 * was read by --user 1000, and one whose group bits show a mask wider
 * than the owning group's entry ("chmod 640; setfacl -m u:bob:rw": mode
 * 0660, group r--) written by a member of its group. Linux consults the
 * ACL for everyone but the owner when the group bits are not empty
 * (acl_permission_check); so does this, after permission() granted by the
 * mode bits, on the host ids the credentials act as. Rootless the gofer
 * and the sentry's direct opens are the caller, whose own rights the
 * host kernel checks ACLs included, and no other guest id acts as a host
 * id: only root-run (full_identity) asks. The value is the sentry's own
 * read through its read-only view of the export where it can open the file
 * (vfs_direct_acl: 0755 directories, 0644 files), else the gofer's
 * (GETXATTR of system.posix_acl_access, the one system.* name it reads,
 * never sets), on the object checked (its identity), kept per inode and
 * ctime (an ACL change moves ctime) in a table, absent ones too.
 */
#define ACL_SLOTS 16384
#define ACL_BYTES 4096                /* GOFER_XATTR_MAX: 510 entries */

struct acl_slot {
	dev_t dev;
	ino_t ino;
	struct timespec ctim;
	int used;
	uint16_t len;                 /* 0: no ACL */
	uint8_t *val;
};
static struct acl_slot acl_tab[ACL_SLOTS];
static pthread_mutex_t acl_lock = PTHREAD_MUTEX_INITIALIZER;

static struct acl_slot *acl_slot_of(const struct stat *st)
{
	uint64_t h = ((uint64_t)st->st_dev * 0x9e3779b97f4a7c15ull) ^ (uint64_t)st->st_ino;
	return &acl_tab[(h ^ (h >> 29)) % ACL_SLOTS];
}

/* 1 when the table knows st: *len (0 for no ACL) and, for an ACL, a copy
 * of it in *val (the caller's to free) */
static int acl_cached(const struct stat *st, uint8_t **val, size_t *len)
{
	int hit = 0;

	pthread_mutex_lock(&acl_lock);
	struct acl_slot *s = acl_slot_of(st);
	if (s->used && s->dev == st->st_dev && s->ino == st->st_ino &&
	    s->ctim.tv_sec == st->st_ctim.tv_sec && s->ctim.tv_nsec == st->st_ctim.tv_nsec) {
		*len = s->len;
		if (s->len) {
			*val = xmalloc(s->len);
			memcpy(*val, s->val, s->len);
		}
		hit = 1;
	}
	pthread_mutex_unlock(&acl_lock);
	return hit;
}

static void acl_store(const struct stat *st, const uint8_t *val, size_t len)
{
	uint8_t *copy = len ? xmalloc(len) : NULL;

	if (len)
		memcpy(copy, val, len);
	pthread_mutex_lock(&acl_lock);
	struct acl_slot *s = acl_slot_of(st);
	free(s->val);
	*s = (struct acl_slot){ .dev = st->st_dev, .ino = st->st_ino, .ctim = st->st_ctim,
				.used = 1, .len = (uint16_t)len, .val = copy };
	pthread_mutex_unlock(&acl_lock);
}

/* Is the task (fs ids, as host ids) in host group hg? */
static int acl_in_group(struct task *t, const struct idmap *m, gid_t hg)
{
	const struct cred *c = &t->cred;
	gid_t g = idmap_cred_gid_to_host(m, c->fsgid);

	if (hg == (gid_t)-1)
		return 0;
	if (g != (gid_t)-1 && g == hg)
		return 1;
	if (c->groups)
		for (int i = 0; i < c->groups->n; i++) {
			g = idmap_cred_gid_to_host(m, c->groups->g[i]);
			if (g != (gid_t)-1 && g == hg)
				return 1;
		}
	return 0;
}

/* Linux's posix_acl_permission for a task that is not the owner, on the
 * value's little-endian entries (version 2; tag, perm: u16, id: u32, in
 * the kernel's order). 0 or -EACCES (a malformed value denies). */
static int acl_eval(struct task *t, const struct idmap *m, const struct stat *st,
		    const uint8_t *a, size_t n, int want)
{
	uid_t hu = idmap_cred_uid_to_host(m, t->cred.fsuid);
	size_t cnt = n >= 4 ? (n - 4) / 8 : 0;
	int found = 0;
	size_t i;

	if (n < 4 || (n - 4) % 8 || (a[0] | a[1] << 8 | a[2] << 16 | (uint32_t)a[3] << 24) != 2)
		return -EACCES;
#define ACL_TAG(i) (a[4 + 8 * (i)] | a[5 + 8 * (i)] << 8)
#define ACL_PERM(i) (a[6 + 8 * (i)] | a[7 + 8 * (i)] << 8)
#define ACL_ID(i) ((uint32_t)a[8 + 8 * (i)] | (uint32_t)a[9 + 8 * (i)] << 8 | \
		   (uint32_t)a[10 + 8 * (i)] << 16 | (uint32_t)a[11 + 8 * (i)] << 24)
	for (i = 0; i < cnt; i++) {
		int perm = ACL_PERM(i);
		switch (ACL_TAG(i)) {
		case 0x01: /* ACL_USER_OBJ: the owner's, decided by permission() */
			break;
		case 0x02: /* ACL_USER */
			if (hu != (uid_t)-1 && ACL_ID(i) == hu)
				goto mask;
			break;
		case 0x04: /* ACL_GROUP_OBJ */
			if (acl_in_group(t, m, idmap_view_gid_to_host(m, st->st_gid))) {
				found = 1;
				if ((perm & want) == want)
					goto mask;
			}
			break;
		case 0x08: /* ACL_GROUP */
			if (acl_in_group(t, m, (gid_t)ACL_ID(i))) {
				found = 1;
				if ((perm & want) == want)
					goto mask;
			}
			break;
		case 0x10: /* ACL_MASK */
			break;
		case 0x20: /* ACL_OTHER */
			if (found)
				return -EACCES;
			return (perm & want) == want ? 0 : -EACCES;
		default:
			return -EACCES;
		}
	}
	return -EACCES;
mask:
	for (size_t j = i + 1; j < cnt; j++)
		if (ACL_TAG(j) == 0x10)
			return (ACL_PERM(i) & ACL_PERM(j) & want) == want ? 0 : -EACCES;
	return (ACL_PERM(i) & want) == want ? 0 : -EACCES;
#undef ACL_TAG
#undef ACL_PERM
#undef ACL_ID
}

/* The ACL check of the object st of mount mnt at export path rel, after
 * the mode bits granted mask (0 or -EACCES). */
static int acl_permission(struct task *t, const struct vfs_mount *mnt, const char *rel,
			  const struct stat *st, int mask)
{
	struct vfs *v = t->sb ? t->sb->vfs : NULL;
	struct stat vbuf;
	const struct stat *cst = st;
	uint8_t *buf = NULL;
	size_t len = 0;
	int r;

	if (!v || !mask || !t->sb->idmap.full_identity || !mnt || !(st->st_mode & S_IRWXG) ||
	    S_ISLNK(st->st_mode) || own_file(t, &cst, &vbuf) || sealed_file(v, st) ||
	    owner_class(t, &t->cred, t->cred.fsuid, t->cred.fsgid, st, 1) == 2)
		return 0;
	if (!acl_cached(st, &buf, &len)) {
		buf = xmalloc(ACL_BYTES);
		long n = vfs_direct_acl(v, mnt, rel, st, buf, ACL_BYTES);
		if (n == -EAGAIN) {
			gofer_expect_identity(st->st_dev, st->st_ino);
			n = VFS_BE(v, getxattr, mnt->export, rel, VFS_ACL_XATTR, buf, ACL_BYTES);
			gofer_expect_identity(0, 0);
		}
		if (n == -ENODATA || n == -EOPNOTSUPP || n == 0) {
			len = 0;
		} else if (n < 0) {
			free(buf);
			return n == -ENOENT || n == -ESTALE ? -ENOENT : -EACCES;
		} else {
			len = (size_t)n;
		}
		acl_store(st, buf, len);
	}
	r = len ? acl_eval(t, &t->sb->idmap, st, buf, len, mask & (MAY_READ | MAY_WRITE | MAY_EXEC)) : 0;
	free(buf);
	return r;
}

int vfs_permission_node(struct task *t, const struct vfs_node *n, int mask)
{
	int r = vfs_permission(t, &n->st, mask);

	if (r < 0 || n->kind != VN_BACKEND || !n->exists)
		return r;
	return acl_permission(t, n->mnt, n->rel, &n->st, mask);
}

int vfs_permission_parent(struct task *t, const struct vfs_node *n, int mask)
{
	int r = vfs_permission(t, &n->pst, mask);

	if (r < 0 || n->kind != VN_BACKEND || n->mroot)
		return r;
	char *rel = xstrdup(n->rel), *slash = strrchr(rel, '/');
	if (slash)
		*slash = '\0';
	else
		*rel = '\0';
	r = acl_permission(t, n->mnt, rel, &n->pst, mask);
	free(rel);
	return r;
}

static int owner_of(struct task *t, const struct stat *st, int fowner)
{
	struct stat vbuf;
	int priv = own_file(t, &st, &vbuf);

	if (fowner && priv && cred_capable(&t->cred, CRED_CAP_FOWNER))
		return 1;
	if (!priv && sealed_file(t->sb ? t->sb->vfs : NULL, st))
		return 0; /* no chmod that would make it readable */
	return owner_class(t, &t->cred, t->cred.fsuid, t->cred.fsgid, st, !priv) == 2;
}

int vfs_owner(struct task *t, const struct stat *st)
{
	return owner_of(t, st, 1);
}

int vfs_is_owner(struct task *t, const struct stat *st)
{
	return owner_of(t, st, 0);
}

int vfs_sealed(struct task *t, const struct stat *st)
{
	struct stat vbuf;

	return !own_file(t, &st, &vbuf) && sealed_file(t->sb ? t->sb->vfs : NULL, st);
}

/* ---- virtual metadata ---- */

int vfs_node_is_host(const struct vfs_node *n)
{
	return n->kind == VN_BACKEND && n->mnt && !n->mnt->private_fs;
}

/* The host's own device nodes bound into /dev (gofer/setup.c dev_nodes):
 * null, zero, full, random, urandom, tty */
static int host_dev_node(const struct stat *st)
{
	unsigned ma = major(st->st_rdev), mi = minor(st->st_rdev);

	return S_ISCHR(st->st_mode) && ((ma == 1 && (mi == 3 || mi == 5 || mi == 7 || mi == 8 || mi == 9)) ||
					(ma == 5 && mi == 0));
}

void vfs_view_stat(struct vfs *v, struct stat *st)
{
	/* (a real device node on the host, before the view: a node the guest
	 * made is an empty regular file there, which the view makes one) */
	int priv = private_file(v, st), hostdev = host_dev_node(st);
	if (!priv)
		vmeta_apply(v->vm, st);
	else
		vmeta_apply_dev(v->vm, st); /* a device node the guest made */
	/* their times are the host's: devtmpfs made them at the host's boot
	 * (its uptime), and /dev/tty's mtime moves with the host's use of its
	 * terminals; shown as the sandbox's boot (red team 13) */
	if (!priv && hostdev && v && v->sb) {
		struct timespec b = procfs_boot_realtime(v->sb);
		if (b.tv_sec)
			st->st_atim = st->st_mtim = st->st_ctim = b;
	}
}

int vfs_node_vdev(struct vfs *v, const struct vfs_node *n)
{
	if (n->kind != VN_BACKEND || !n->exists || !S_ISREG(n->st.st_mode))
		return 0;
	struct stat view = n->st;
	vfs_view_stat(v, &view);
	return S_ISCHR(view.st_mode) || S_ISBLK(view.st_mode);
}

int vfs_meta_update(struct vfs *v, const struct stat *real, uid_t uid, gid_t gid,
		    mode_t setid, int set_mode)
{
	return vmeta_update(v->vm, real, uid, gid, setid, set_mode);
}

int vfs_meta_make(struct vfs *v, const struct stat *real, uid_t uid, gid_t gid, mode_t setid, int set_mode)
{
	return vmeta_make(v->vm, real, uid, gid, setid, set_mode);
}

int vfs_meta_set_dev(struct vfs *v, const struct stat *real, mode_t type, dev_t rdev)
{
	return vmeta_set_dev(v->vm, real, type, rdev);
}

void vfs_meta_forget(struct vfs *v, const struct stat *real)
{
	vmeta_forget(v->vm, real->st_dev, real->st_ino);
	vxattr_forget(v->vx, real->st_dev, real->st_ino);
}

struct vxattr *vfs_vxattr(struct vfs *v)
{
	return v->vx;
}

/* ---- file handles (name_to_handle_at, open_by_handle_at) ----
 * A handle names a file of a gofer mount by its dev/ino, with a tag keyed by
 * a per-sandbox secret so a guest cannot forge one; it never reaches the
 * host (whose handles would name any inode of the file system). The name
 * the handle was made for is kept (bounded, FIFO) to find the file again. */
uint64_t vfs_handle_tag(struct vfs *v, dev_t dev, ino_t ino)
{
	uint64_t in[3] = { v->handle_key, (uint64_t)dev, (uint64_t)ino };

	return moat_hash(in, sizeof in);
}

/* A handle carried the host's st_dev in clear (red team 18: 0xfe00, the
 * host disk's device number, where stat shows the guest a virtual one): a
 * 4-round Feistel permutation of its 64 bits keyed by handle_key hides it
 * and open_by_handle_at gets it back. */
static uint32_t dev_round(const struct vfs *v, int i, uint32_t x)
{
	uint64_t in[3] = { v->handle_key, (uint64_t)i, x };

	return (uint32_t)moat_hash(in, sizeof in);
}

uint64_t vfs_handle_dev_seal(struct vfs *v, uint64_t dev)
{
	uint32_t l = (uint32_t)(dev >> 32), r = (uint32_t)dev;

	for (int i = 0; i < 4; i++) {
		uint32_t t = r;
		r = l ^ dev_round(v, i, r);
		l = t;
	}
	return (uint64_t)l << 32 | r;
}

uint64_t vfs_handle_dev_unseal(struct vfs *v, uint64_t sealed)
{
	uint32_t l = (uint32_t)(sealed >> 32), r = (uint32_t)sealed;

	for (int i = 3; i >= 0; i--) {
		uint32_t t = l;
		l = r ^ dev_round(v, i, l);
		r = t;
	}
	return (uint64_t)l << 32 | r;
}

void vfs_handle_put(struct vfs *v, const struct vfs_node *n)
{
	inomap_put(v->him, n->st.st_dev, n->st.st_ino, n->path);
}

int vfs_handle_path(struct vfs *v, dev_t dev, ino_t ino, char *buf, size_t len)
{
	if (inomap_get(v->him, dev, ino, buf, len) == 0)
		return 0;
	return vfs_path_of_inode(v, dev, ino, buf, len);
}

/* ---- single lookups ---- */

/* A PROC mount whose target ends in '/' serves a procfs subtree (/sys). */
static int vfs_proc_dir_mount(const struct vfs_mount *m)
{
	size_t l = m->target ? strlen(m->target) : 0;

	return l > 1 && m->target[l - 1] == '/';
}

/* A rel that cannot fit: one component longer than NAME_MAX, which no file
 * system holds and every host call refuses (ENAMETOOLONG). Before red-team
 * round 8 it was "-", a name a file at the export's root may have: a path
 * too deep under a guest's bind of a subdirectory reached that file (a
 * dropped process unlinked and re-created root's /data/- through its own
 * deep directories). */
static void xrel_too_long(struct vfs_node *n)
{
	memset(n->xrel, '-', NAME_MAX + 1);
	n->xrel[NAME_MAX + 1] = 0;
}

static void node_set(struct vfs_node *n, const char *path, const struct vfs_mount *m)
{
	size_t len = strlen(path);

	memmove(n->path, path, len + 1);
	n->mnt = m;
	n->rel = n->path + m->plen;
	if (*n->rel == '/')
		n->rel++;
	n->mroot = !*n->rel;
	if (m->sub) {
		/* a guest's bind of a subdirectory: the same export, below sub */
		if (snprintf(n->xrel, sizeof n->xrel, "%s%s%s", m->sub, *n->rel ? "/" : "",
			     n->rel) >= (int)sizeof n->xrel)
			xrel_too_long(n); /* ENAMETOOLONG */
		n->rel = n->xrel;
	} else if (m->kind == VFS_MNT_PROC && m->target && vfs_proc_dir_mount(m)) {
		/* a directory mount (/sys): a subtree of procfs */
		size_t tl = strlen(m->target);

		if (snprintf(n->xrel, sizeof n->xrel, "%.*s%s%s", (int)(tl - 1), m->target,
			     *n->rel ? "/" : "", n->rel) >= 128)
			snprintf(n->xrel, sizeof n->xrel, "%s", "-"); /* too long: ENOENT (procfs has no "-") */
		n->rel = n->xrel;
	} else if (m->kind == VFS_MNT_PROC && m->target && !*n->rel)
		n->rel = m->target; /* a file mount: one procfs file */
	n->magic = 0;
	n->magic_text = 0;
	n->opath = 0;
	n->exists = 0;
	switch (m->kind) {
	case VFS_MNT_GOFER: n->kind = VN_BACKEND; break;
	case VFS_MNT_PROC: n->kind = VN_PROC; break;
	case VFS_MNT_SYMLINK: n->kind = VN_SYMMNT; break;
	default: n->kind = VN_SYNTH; break;
	}
}

/* May a cached stat of this file be out of date although the sentry made
 * (and invalidated) every change of the name? Yes when the guest may write
 * the file natively (the written set) or when it has several links (a
 * change through another name changes its nlink and ctime): see dcache.h. */
static int stat_may_change(struct vfs *v, const struct vfs_mount *m, const struct stat *st)
{
	return wset_has(v->ws, st->st_dev, st->st_ino) ||
	       (m->can_write && !S_ISDIR(st->st_mode) && st->st_nlink > 1);
}

void vfs_note_written(struct vfs *v, const struct stat *st)
{
	if (S_ISREG(st->st_mode) || S_ISBLK(st->st_mode))
		wset_add(v->ws, st->st_dev, st->st_ino);
}

/* The dentry cache as one mount may use it: a shared mount's entries are
 * never stored nor read (the host may change them at any time). */
static int mnt_dc_get(struct vfs *v, const struct vfs_mount *m, const char *rel,
		      struct stat *st, int *neg, char *link, size_t linklen)
{
	return !m->shared && dcache_get(v->dc, m->idx, rel, st, neg, link, linklen);
}

static void mnt_dc_neg(struct vfs *v, unsigned long gen, const struct vfs_mount *m,
		       const char *rel)
{
	if (!m->shared)
		dcache_put(v->dc, gen, m->idx, rel, NULL, 1, NULL);
}

static void be_put(struct vfs *v, unsigned long gen, const struct vfs_mount *m, const char *rel,
		   struct stat *st, const char *link)
{
	note_devs(v, m, st->st_dev);
	vfs_map_stat(v, st);
	if (!m->shared)
		dcache_put(v->dc, gen, m->idx, rel, st, 0, S_ISLNK(st->st_mode) ? link : NULL);
}

/* The current walk's scratch (NULL outside a walk). */
static _Thread_local struct vfs_shared_scratch *tl_scratch;

struct vfs_shared_scratch *vfs_scratch_begin(struct vfs_shared_scratch *s)
{
	struct vfs_shared_scratch *prev = tl_scratch;

	s->idx = -1;
	s->hfd = -1;
	s->hm = NULL;
	tl_scratch = s;
	return prev;
}

void vfs_scratch_end(struct vfs_shared_scratch *prev)
{
	tl_scratch = prev;
}

/* A shared mount's rel in this walk's scratch: 1 found (*st), 0 missing,
 * -1 not there. */
static int scratch_get(struct vfs *v, const struct vfs_mount *m, const char *rel,
		       struct stat *st)
{
	struct vfs_shared_scratch *s = tl_scratch;
	size_t len = strlen(rel);
	int k = 0;

	if (!s || s->idx != m->idx || s->v != v || !len || strncmp(s->batch, rel, len) ||
	    (s->batch[len] && s->batch[len] != '/'))
		return -1;
	for (const char *c = rel; *c; c++)
		k += *c == '/';
	if (k < s->n) {
		*st = s->st[k];
		return 1;
	}
	return k == s->n && s->err == -ENOENT ? 0 : -1;
}

/* Directory prefetch. The fourth cache miss in one directory of a writable,
 * non-shared gofer mount asks the gofer for the whole directory, its regular
 * files and subdirectories with their lstat (GOFER_OP_DIRSTAT, a page of ~80
 * per round trip, at most DIR_PREFETCH_MAX), and caches them: a program that
 * stats a tree name by name (git status, tar, rm -r, make) pays a round trip
 * per page instead of per name. What it caches is what a lookup of each name
 * would have cached (ids mapped, the same generation rule); symlinks and
 * absent names still take their own lookups. A small table remembers the
 * directories already fetched and the last misses (a hint: a race costs at
 * most one more fetch or one lookup more). Not on read-only mounts nor on
 * the system view's (m->system: /usr, /etc... even where the root overlay
 * makes them writable): there programs look a few names up in large system
 * directories (the loader's libraries among the 1,300 of
 * /usr/lib/x86_64-linux-gnu), and fetching them all made `python3 -c
 * "import json, subprocess"` ~20% slower (measured again with the overlay:
 * the third library open of `python3 -c pass` took 5-10 ms, the fetch of
 * that directory's 16 pages); absent names there are answered without the
 * gofer anyway (vfs_direct_absent). */
#define DIR_PREFETCH_MAX 4096
#define PF_SLOTS 256
#define PF_WAYS 4
#define PF_MISSES 4
enum { PF_COUNTING, PF_FETCHING, PF_DONE };
static struct pf_slot {
	uint64_t h;              /* 0: free */
	int misses, state;
} pf_tab[PF_SLOTS];
static pthread_mutex_t pf_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pf_cond = PTHREAD_COND_INITIALIZER;

enum { PF_NO, PF_FETCH, PF_WAITED };

static uint64_t pf_key(const struct vfs_mount *m, const char *dir, size_t dlen)
{
	char key[VFS_PATH_MAX + 16];
	int n = snprintf(key, sizeof key, "%d:", m->idx);
	if (n < 0 || (size_t)n + dlen >= sizeof key)
		return 0;
	memcpy(key + n, dir, dlen);
	return moat_hash(key, n + dlen) | 1;
}

/* Count a miss in the directory with key h. PF_FETCH: the caller fetches
 * it now and calls pf_done. PF_WAITED: another worker was fetching it, and
 * this one waited until it was done (the entries are in the cache unless a
 * drop came in between), rather than asking the gofer for the same names
 * one by one meanwhile (git status's preload threads, ten at a time, each
 * in its own directory: ~80 LSTATs of names a page already on its way had).
 * need: the misses that make a fetch (PF_MISSES; list_ahead's PFA_MISSES).
 * Slots are 4-way associative: two directories in use at once no longer
 * reset each other's count on a shared slot (they did: a directory could
 * take 18 misses before its fetch). A full set takes the oldest slot that
 * is not being fetched. Without wait (the sentry's own listing: the caller
 * has looked its name up already) a fetch in flight is PF_NO. */
/* waits for another worker's fetch, and their wall time (MOAT_PROFILE;
 * under pf_lock): counted in the waiting call's handler stage */
static unsigned long pf_waits;
static unsigned long long pf_wait_ns;

static int pf_want(uint64_t h, int wait, int need)
{
	int want = PF_NO;
	if (!h)
		return PF_NO;
	pthread_mutex_lock(&pf_lock);
	struct pf_slot *set = &pf_tab[(h % (PF_SLOTS / PF_WAYS)) * PF_WAYS], *s = NULL;
	for (int i = 0; i < PF_WAYS && !s; i++)
		if (set[i].h == h)
			s = &set[i];
	if (!s) {
		/* a free way, else the way after the last one taken (round robin) */
		for (int i = 0; i < PF_WAYS && !s; i++)
			if (!set[i].h)
				s = &set[i];
		for (int i = 0; i < PF_WAYS && !s; i++) {
			struct pf_slot *c = &set[(h / PF_SLOTS + (unsigned)i) % PF_WAYS];
			if (c->state != PF_FETCHING)
				s = c;
		}
		if (!s)
			goto out;
		s->h = h;
		s->misses = 0;
		s->state = PF_COUNTING;
	}
	if (s->state == PF_COUNTING && ++s->misses >= need) {
		s->state = PF_FETCHING;
		want = PF_FETCH;
	} else if (s->state == PF_FETCHING && wait) {
		/* the fetcher holds no lock we hold; pass the pipeline's lead
		 * on as any gofer wait does */
		struct timespec t0, t1;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		pthread_mutex_unlock(&pf_lock);
		gofer_before_block();
		pthread_mutex_lock(&pf_lock);
		while (s->h == h && s->state == PF_FETCHING)
			pthread_cond_wait(&pf_cond, &pf_lock);
		want = PF_WAITED;
		clock_gettime(CLOCK_MONOTONIC, &t1);
		pf_waits++;
		pf_wait_ns += (unsigned long long)(t1.tv_sec - t0.tv_sec) * 1000000000ull +
			      (unsigned long long)t1.tv_nsec - (unsigned long long)t0.tv_nsec;
	}
out:
	pthread_mutex_unlock(&pf_lock);
	return want;
}

static void pf_done(uint64_t h)
{
	pthread_mutex_lock(&pf_lock);
	struct pf_slot *set = &pf_tab[(h % (PF_SLOTS / PF_WAYS)) * PF_WAYS];
	for (int i = 0; i < PF_WAYS; i++)
		if (set[i].h == h && set[i].state == PF_FETCHING)
			set[i].state = PF_DONE;
	pthread_cond_broadcast(&pf_cond);
	pthread_mutex_unlock(&pf_lock);
}

/* directories listed by the sentry itself, and their names; names found
 * absent in a complete directory (be_lookup) (MOAT_PROFILE) */
static unsigned long pf_local_dirs, pf_local_names, complete_absent;
/* first look-ups answered relative to the walk's dirfd, and how many of
 * them found the name absent (vfs_direct_absent_at; MOAT_PROFILE) */
static unsigned long held_names, held_absent;
/* directories listed ahead of a dirfd walk and their names (list_ahead) */
static unsigned long pfa_dirs, pfa_names;

void vfs_profile_report(FILE *f)
{
	fprintf(f, "moat profile: directories listed by the sentry: %lu (%lu names)\n",
		__atomic_load_n(&pf_local_dirs, __ATOMIC_RELAXED),
		__atomic_load_n(&pf_local_names, __ATOMIC_RELAXED));
	fprintf(f, "moat profile: names absent in complete directories: %lu\n",
		__atomic_load_n(&complete_absent, __ATOMIC_RELAXED));
	fprintf(f, "moat profile: first look-ups relative to the guest's dirfd: %lu (%lu absent)\n",
		__atomic_load_n(&held_names, __ATOMIC_RELAXED),
		__atomic_load_n(&held_absent, __ATOMIC_RELAXED));
	fprintf(f, "moat profile: directories listed ahead of a dirfd walk: %lu (%lu names)\n",
		__atomic_load_n(&pfa_dirs, __ATOMIC_RELAXED),
		__atomic_load_n(&pfa_names, __ATOMIC_RELAXED));
	pthread_mutex_lock(&pf_lock);
	fprintf(f, "moat profile: waits for another worker's directory fetch: %lu (%.2f ms in all)\n",
		pf_waits, pf_wait_ns / 1e6);
	pthread_mutex_unlock(&pf_lock);
}

struct pf_put {
	struct vfs *v;
	const struct vfs_mount *m;
	unsigned long gen;
	const char *dir;
	size_t dlen;
};

/* One entry of a fetched directory into the cache, as its look-up would
 * have put it (hidden names left out: masked in our view, absent in the
 * gofer's). */
static void pf_put_one(void *arg, const char *name, size_t nl, struct stat *st)
{
	struct pf_put *p = arg;
	char path[VFS_PATH_MAX];

	if (memchr(name, '/', nl) || memchr(name, 0, nl) ||
	    !(S_ISREG(st->st_mode) || S_ISDIR(st->st_mode)))
		return;
	int pl = snprintf(path, sizeof path, "%.*s%s%.*s", (int)p->dlen, p->dir, p->dlen ? "/" : "",
			  (int)nl, name);
	if (pl < 0 || (size_t)pl >= sizeof path || vfs_is_hidden(p->m, path))
		return;
	be_put(p->v, p->gen, p->m, path, st, NULL);
}

/* Fetch and cache the entries of the directory holding rel, a
 * GOFER_OP_DIRSTAT round trip per page; 1 when it did (or another worker
 * did while this one waited). With local (the sentry's own lstat is the
 * gofer's: vfs_direct_can_list) be_lookup calls it after each present
 * name's own first look-up (vfs_direct_absent) and the fetch is the
 * sentry's own listing (vfs_direct_dirstat: getdents64 and an fstatat per
 * name, no round trip); the gofer's pages are for the rest. */
static int dir_prefetch(struct vfs *v, const struct vfs_mount *m, const char *rel, int local)
{
	void *ctx;
	const struct vfs_backend *be = vfs_backend(v, &ctx);
	const char *slash = strrchr(rel, '/');
	size_t dlen = slash ? (size_t)(slash - rel) : 0;

	if (!m->writable || m->shared || m->dev || m->system || (!be->dirstat && !local))
		return 0;
	uint64_t key = pf_key(m, rel, dlen);
	int w = pf_want(key, !local, PF_MISSES);
	if (w != PF_FETCH)
		return w == PF_WAITED;
	char dir[VFS_PATH_MAX];
	memcpy(dir, rel, dlen);
	dir[dlen] = 0;
	struct pf_put p = { .v = v, .m = m, .gen = dcache_gen(v->dc), .dir = dir, .dlen = dlen };
	/* the sentry's own listing where its lstat is the gofer's: a
	 * fstatat per name, no round trip (fs/directfs.c)
	 * (names taken or left as vfs_direct_absent_at takes them: not a
	 * mount's root; the st_dev test left a cow bind's files out, their
	 * st_dev being the overlay layer's) */
	int got = local ? vfs_direct_dirstat(v, m, dir, pf_put_one, &p, DIR_PREFETCH_MAX) :
			  -EAGAIN;
	if (got >= 0) {
		__atomic_fetch_add(&pf_local_dirs, 1, __ATOMIC_RELAXED);
		__atomic_fetch_add(&pf_local_names, (unsigned long)got, __ATOMIC_RELAXED);
		pf_done(key);
		return 1;
	}
	if (!be->dirstat) {
		pf_done(key);
		return 0;
	}
	char *buf = xmalloc(GOFER_MAX_REP);
	uint64_t pos = 0;
	int total = 0;
	for (;;) {
		long len = be->dirstat(ctx, m->export, dir, pos, buf, GOFER_MAX_REP);
		if (len < (long)sizeof(struct gofer_rep_dirstat))
			break;
		struct gofer_rep_dirstat h;
		memcpy(&h, buf, sizeof h);
		size_t off = sizeof h;
		for (uint32_t i = 0; i < h.n; i++) {
			struct gofer_dirent de;
			if (off + sizeof de > (size_t)len)
				break;
			memcpy(&de, buf + off, sizeof de);
			size_t rec = sizeof de + ((de.namelen + 7) & ~(size_t)7);
			if (!de.namelen || de.namelen > NAME_MAX || off + rec > (size_t)len)
				break;
			const char *name = buf + off + sizeof de;
			off += rec;
			pf_put_one(&p, name, de.namelen, &de.st);
			total++;
		}
		if (h.done || h.next == pos || total >= DIR_PREFETCH_MAX)
			break;
		pos = h.next;
	}
	free(buf);
	pf_done(key);
	return 1;
}

/* Listing ahead of a walk relative to the guest's dirfd (issue 6, perfwalk):
 * du, find, ls -l, grep -r — every fts walk — stat (or open) each name of a
 * directory they just listed, relative to its fd. A first look-up there is
 * one statx (vfs_direct_absent_at), and on the root overlay a cold one
 * (each sandbox's overlay has its own dentries: ~5 us a name, a quarter of
 * a du of /usr/include). At the second such present name in one
 * directory (PFA_MISSES) the rest of it is listed by a thread of its own (vfs_direct_dirstat:
 * the same statx per name, taken or left as vfs_direct_absent_at takes it)
 * and cached under the usual generation rule (pf_put_one, be_put: stored
 * only if nothing was dropped since the listing began), while the guest's
 * calls go on: the walk's look-ups that follow find their names cached
 * and the overlay's dentries made on the other CPU. (Not at the fourth, as
 * dir_prefetch: the thread must start early to run ahead of the walk, and
 * at the fourth du's walk of /usr/include, ~11 names a directory, still
 * made half its look-ups itself.) Mounts whose own
 * look-ups the sentry answers (vfs_direct_can_list), not shared ones,
 * and not where be_lookup's listing of writable mounts runs (local). A
 * directory is listed once (pf_want: the same slots as dir_prefetch); a
 * full queue drops the job (the names are then looked up one by one, as
 * before). Off unless MOAT_LIST_AHEAD=1: measured on the shared 2-vCPU VM
 * it gained nothing (du -s /usr/include 335-350 ms either way,
 * ~5% more CPU: names the walk reached first are stat'ed twice, and the
 * thread's stores meet the workers' look-ups in the cache); it is kept
 * for a machine with idle CPUs to measure (ARCHITECTURE, "Issue 6,
 * perfwalk"). */
#define PFA_QUEUE 8
#define PFA_MISSES 2
static struct pfa_job {
	const struct vfs_mount *m;
	uint64_t key;
	char dir[PATH_MAX];
} pfa_q[PFA_QUEUE];
static unsigned pfa_head, pfa_tail;    /* pfa_tail - pfa_head jobs queued */
static struct vfs *pfa_v;
static int pfa_state;                  /* 0 not started, 1 running, -1 off */
static pthread_mutex_t pfa_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pfa_cv = PTHREAD_COND_INITIALIZER;

static void *pfa_main(void *arg)
{
	struct vfs *v = arg;
	struct pfa_job *j = xmalloc(sizeof *j);

	for (;;) {
		pthread_mutex_lock(&pfa_lock);
		while (pfa_head == pfa_tail)
			pthread_cond_wait(&pfa_cv, &pfa_lock);
		*j = pfa_q[pfa_head % PFA_QUEUE];
		pfa_head++;
		pthread_mutex_unlock(&pfa_lock);
		struct pf_put p = { .v = v, .m = j->m, .gen = dcache_gen(v->dc), .dir = j->dir,
				    .dlen = strlen(j->dir) };
		int got = vfs_direct_dirstat(v, j->m, j->dir, pf_put_one, &p, DIR_PREFETCH_MAX);
		if (got >= 0) {
			__atomic_fetch_add(&pfa_dirs, 1, __ATOMIC_RELAXED);
			__atomic_fetch_add(&pfa_names, (unsigned long)got, __ATOMIC_RELAXED);
		}
		pf_done(j->key);
	}
	return NULL;
}

static void list_ahead(struct vfs *v, const struct vfs_mount *m, const char *rel, size_t dlen)
{
	if (dlen >= PATH_MAX || m->shared || !vfs_direct_can_list(v, m) ||
	    __atomic_load_n(&pfa_state, __ATOMIC_RELAXED) < 0)
		return;
	uint64_t key = pf_key(m, rel, dlen);
	if (pf_want(key, 0, PFA_MISSES) != PF_FETCH)
		return;
	pthread_mutex_lock(&pfa_lock);
	if (pfa_state == 0) {
		const char *on = getenv("MOAT_LIST_AHEAD");
		pthread_attr_t at;
		pthread_t th;
		sigset_t all, old;
		pfa_state = -1;
		if (on && *on && strcmp(on, "0")) {
			pthread_attr_init(&at);
			pthread_attr_setstacksize(&at, 256 * 1024);
			pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
			/* moat's own signals go to the main thread, as for workers */
			sigfillset(&all);
			pthread_sigmask(SIG_BLOCK, &all, &old);
			if (pthread_create(&th, &at, pfa_main, v) == 0) {
				pfa_state = 1;
				pfa_v = v;
			}
			pthread_sigmask(SIG_SETMASK, &old, NULL);
			pthread_attr_destroy(&at);
		}
	}
	int queued = 0;
	if (pfa_state > 0 && pfa_v == v && pfa_tail - pfa_head < PFA_QUEUE) {
		struct pfa_job *j = &pfa_q[pfa_tail % PFA_QUEUE];
		j->m = m;
		j->key = key;
		memcpy(j->dir, rel, dlen);
		j->dir[dlen] = 0;
		pfa_tail++;
		queued = 1;
		pthread_cond_signal(&pfa_cv);
	}
	pthread_mutex_unlock(&pfa_lock);
	if (!queued)
		pf_done(key);
}

/* lstat rel on a gofer mount, through the cache; batches `ahead` components
 * into the same gofer round trip. 1 found, 0 missing, -errno. */
static int be_lookup(struct vfs *v, const struct vfs_mount *m, const char *rel,
		     const char *ahead, unsigned flags, struct stat *st)
{
	int neg = 0;
	int r;

	/* a shared mount: nothing cached, but what this walk's own gofer walk
	 * saw a moment ago (the components ahead of an earlier one) */
	if (m->shared && (r = scratch_get(v, m, rel, st)) >= 0)
		return r;
	if (mnt_dc_get(v, m, rel, st, &neg, NULL, 0) &&
	    (neg || !(flags & WALK_FRESH) || !stat_may_change(v, m, st)))
		return !neg;
	/* a writable mount's fresh stat of a name the cache knows: the
	 * sentry's own fstat of the same inode, the cached owner (directfs.c) */
	if ((flags & WALK_FRESH) && m->writable && *rel) {
		struct stat cst;
		if (mnt_dc_get(v, m, rel, &cst, &neg, NULL, 0) && !neg &&
		    vfs_direct_restat(v, m, rel, &cst, st) == 0)
			return 1;
	}

	/* The name of the guest's own O_CREAT|O_EXCL open (tar's create of
	 * each file), not in the cache: taken as absent without the sentry's
	 * openat2 (~5 us: a negative look-up, then the gofer's create looks
	 * the name up again), and not cached, as for the guess below. The
	 * gofer creates it with O_EXCL, so a name that exists is its EEXIST,
	 * which is that open's answer whatever the name is (a symlink, a
	 * directory, a hidden name: ENOENT as before), and do_open walks for
	 * real before any answer of its own a present name would change. */
	if ((flags & WALK_CREATE_EXCL) && (flags & WALK_CREATE_GUESS) && !(flags & WALK_FRESH) &&
	    m->writable && !m->shared && *rel)
		return 0;
	int local = m->writable && !m->shared && !m->system && *rel && vfs_direct_can_list(v, m);
	/* taken before the backend answers: see dcache.h */
	unsigned long gen = dcache_gen(v->dc);
	/* a name not cached in a directory the sentry made and has seen
	 * every change of since (vfs_made_dir): absent, no openat2. (Not
	 * a name that is cached: a fresh stat of one whose re-stat failed
	 * comes here too.) */
	if (m->writable && !m->shared && *rel && !vfs_is_hidden(m, rel) &&
	    dcache_parent_complete(v->dc, m->idx, rel)) {
		__atomic_add_fetch(&complete_absent, 1, __ATOMIC_RELAXED);
		mnt_dc_neg(v, gen, m, rel);
		return 0;
	}
	char dlink[PATH_MAX];
	int da = -EAGAIN;
	/* a name directly in the directory the walk started from (the
	 * guest's dirfd): one statx relative to the sentry's copy of that fd
	 * (fs/directfs.c vfs_direct_absent_at) */
	const struct vfs_shared_scratch *ws = tl_scratch;
	size_t held = 0;    /* answered there: the directory's length + 1 */
	if (ws && ws->hfd >= 0 && ws->hm == m && !m->shared && *rel) {
		const char *sl = strrchr(rel, '/');
		size_t pl = sl ? (size_t)(sl - rel) : 0;
		if (strlen(ws->hrel) == pl && !memcmp(ws->hrel, rel, pl))
			da = vfs_direct_absent_at(v, m, ws->hfd, sl ? sl + 1 : rel, st);
		if (da != -EAGAIN) {
			held = pl + 1;
			__atomic_fetch_add(&held_names, 1, __ATOMIC_RELAXED);
			if (da == 1)
				__atomic_fetch_add(&held_absent, 1, __ATOMIC_RELAXED);
		}
	}
	/* (a shared mount caches nothing: its symlink's target is the gofer's) */
	if (da == -EAGAIN)
		da = vfs_direct_absent(v, m, rel, st, m->shared ? NULL : dlink, sizeof dlink);
	if (da == 1) {
		mnt_dc_neg(v, gen, m, rel);
		return 0;
	}
	if (da == VFS_PRESENT_STAT || da == VFS_PRESENT_LINK) {
		be_put(v, gen, m, rel, st, da == VFS_PRESENT_LINK ? dlink : NULL); /* maps *st's ids */
		/* Where the sentry can list the directory itself, the fourth
		 * present name looked up in one directory fetches the rest of
		 * it (dir_prefetch: one fstatat per name instead of this
		 * openat2, fstat and close per name — git status's lstat of
		 * every file in a fresh sandbox). Absent names do not count:
		 * probes of a few missing names (git's objects/XX, $PATH) must
		 * not list a large directory. */
		if (local)
			dir_prefetch(v, m, rel, 1);
		else if (held)
			list_ahead(v, m, rel, held - 1);
		return 1;
	}
	/* The name an O_CREAT open is about to make, in a directory the
	 * sentry's uid may not search: taken as absent without asking, and not
	 * cached. The open then creates it through the gofer with O_EXCL, so a
	 * name that exists after all is EEXIST there, never opened unchecked;
	 * do_open walks again with WALK_FRESH (no guess) on that EEXIST without
	 * the guest's O_EXCL, and before any answer of its own that a name that
	 * exists would change (EROFS, EACCES): tar's create needs no gofer walk
	 * of the new name (root-run, GNU tar's directories are 0700 until it is
	 * done). */
	if (da == VFS_ABSENT_DENIED && (flags & WALK_CREATE_GUESS) && !(flags & WALK_FRESH) &&
	    m->writable && !m->shared)
		return 0;
	/* a fresh entry either way: the gofer stat'ed it a moment ago */
	if (*rel && !local && dir_prefetch(v, m, rel, 0) && mnt_dc_get(v, m, rel, st, &neg, NULL, 0) && !neg)
		return 1;
	if ((flags & WALK_FRESH) || !*rel) {
		r = VFS_BE(v, lstat, m->export, rel, st);
		if (r == -ENOENT) {
			mnt_dc_neg(v, gen, m, rel);
			return 0;
		}
		if (r < 0)
			return r;
		char link[PATH_MAX] = "";
		if (S_ISLNK(st->st_mode)) {
			long l = VFS_BE(v, readlink, m->export, rel, link, sizeof link - 1);
			link[l > 0 ? l : 0] = 0;
		}
		be_put(v, gen, m, rel, st, link);
		return 1;
	}

	/* rel + the plain components ahead, up to GOFER_WALK_MAX in total */
	char batch[VFS_PATH_MAX];
	int ncomp = 1;
	size_t len = strlen(rel);
	memcpy(batch, rel, len + 1);
	for (const char *c = rel; *c; c++)
		ncomp += *c == '/';
	int want = ncomp;
	for (const char *a = ahead; a && *a && ncomp < GOFER_WALK_MAX; ) {
		while (*a == '/')
			a++;
		const char *e = strchrnul(a, '/');
		size_t cl = e - a;
		if (!cl || (cl == 1 && a[0] == '.') || (cl == 2 && a[0] == '.' && a[1] == '.') ||
		    cl > NAME_MAX || len + 1 + cl >= sizeof batch)
			break;
		batch[len++] = '/';
		memcpy(batch + len, a, cl);
		len += cl;
		batch[len] = 0;
		ncomp++;
		a = e;
	}
	if (want > GOFER_WALK_MAX)
		return be_lookup(v, m, rel, NULL, flags | WALK_FRESH, st);

	struct gofer_walk *w = xmalloc(sizeof *w);
	r = VFS_BE(v, walk, m->export, batch, w);
	if (r < 0) {
		free(w);
		return r;
	}
	/* cache every prefix the walk stat'ed */
	char pre[VFS_PATH_MAX];
	const char *c = batch;
	size_t plen = 0;
	for (int i = 0; i <= w->n && i < ncomp; i++) {
		const char *e = strchrnul(c, '/');
		memcpy(pre + plen, c, e - c);
		plen += e - c;
		pre[plen] = 0;
		if (i == w->n) {
			if (w->err == -ENOENT && !vfs_is_hidden(m, pre))
				mnt_dc_neg(v, gen, m, pre);
			break;
		}
		be_put(v, gen, m, pre, &w->st[i], i == w->n - 1 ? w->link : NULL);
		if (i + 1 == want)
			*st = w->st[i];
		if (!*e)
			break;
		pre[plen++] = '/';
		c = e + 1;
	}
	struct vfs_shared_scratch *s = tl_scratch;
	if (m->shared && s) {
		s->v = v;
		s->idx = m->idx;
		s->n = w->n < ncomp ? w->n : ncomp;
		s->err = w->n < ncomp ? w->err : 0;
		memcpy(s->batch, batch, len + 1);
		memcpy(s->st, w->st, s->n * sizeof *s->st); /* mapped by be_put */
	}
	int got = w->n, err = w->err;
	free(w);
	if (got >= want)
		return 1;
	if (got == want - 1 && err == -ENOENT)
		return 0;
	if (got == want - 1 && err < 0)
		return err;
	/* the walk stopped early (e.g. a concurrent change): ask directly */
	return be_lookup(v, m, rel, NULL, flags | WALK_FRESH, st);
}

int vfs_lookup(struct vfs *v, struct task *t, const char *path, const char *ahead,
	       unsigned flags, struct vfs_node *n)
{
	const struct vfs_mount *m = vfs_mount_for(v, path);
	const struct vfs_synth *syn;
	int r;

	node_set(n, path, m);
	syn = !n->mroot ? vfs_synth_find(v, n->path) : NULL;
	switch (m->kind) {
	case VFS_MNT_SYMLINK:
		if (*n->rel)
			return -ENOTDIR;
		n->kind = VN_SYMMNT;
		memset(&n->st, 0, sizeof n->st);
		n->st.st_dev = v->synth_dev;
		n->st.st_ino = (moat_hash(n->path, strlen(n->path)) & 0x7fffffff) | 1;
		n->st.st_mode = S_IFLNK | 0777;
		n->st.st_nlink = 1;
		n->st.st_size = strlen(m->target);
		n->st.st_blksize = 4096;
		n->st.st_atim = n->st.st_mtim = n->st.st_ctim = v->ctime;
		n->exists = 1;
		return 0;
	case VFS_MNT_SYNTH:
		if (*n->rel && !syn)
			return 0;
		n->kind = VN_SYNTH;
		vfs_synth_stat(v, n->path, &n->st);
		n->exists = 1;
		return 0;
	case VFS_MNT_PROC: {
		int pflags = 0;
		if (m->target && !vfs_proc_dir_mount(m) && n->rel != m->target)
			return -ENOTDIR; /* below a file mount */
		r = procfs_lstat(v, t, n->rel, &n->st, &pflags);
		if (r == -ENOENT && syn)
			goto synthetic;
		if (r == -ENOENT)
			return 0;
		if (r < 0)
			return r;
		n->kind = VN_PROC;
		n->magic = !!(pflags & PROCFS_MAGIC_LINK);
		n->magic_text = !n->magic && S_ISLNK(n->st.st_mode) &&
				procfs_is_magic_text(t, n->rel);
		n->exists = 1;
		return 0;
	}
	case VFS_MNT_GOFER:
		if (vfs_is_hidden(m, n->rel) && !syn)
			return 0;
		r = be_lookup(v, m, n->rel, ahead, flags, &n->st);
		if (syn && (r <= 0 || !S_ISDIR(n->st.st_mode)))
			goto synthetic;
		if (r <= 0)
			return r;
		/* a guest's bind of a subdirectory: its root is that directory,
		 * never what now has its name (Linux's bind pins the dentry;
		 * before red-team round 8 a dropped process renamed the source
		 * away and put a symlink to / or its own directory there, and
		 * root's bind led where it chose): gone, as a deleted source */
		if (n->mroot && m->sub &&
		    (!S_ISDIR(n->st.st_mode) ||
		     (m->sub_ino && (n->st.st_dev != m->sub_dev || n->st.st_ino != m->sub_ino))))
			return 0;
		n->kind = VN_BACKEND;
		n->exists = 1;
		return 0;
	default:
		return -EINVAL;
	}
synthetic:
	n->kind = VN_SYNTH;
	vfs_synth_stat(v, n->path, &n->st);
	n->exists = 1;
	return 0;
}

long vfs_node_readlink(struct vfs *v, struct task *t, const struct vfs_node *n,
		       char *buf, size_t len)
{
	if (!n->exists)
		return -ENOENT;
	if (!S_ISLNK(n->st.st_mode))
		return -EINVAL;
	switch (n->kind) {
	case VN_SYMMNT: {
		size_t l = strlen(n->mnt->target);
		if (l > len)
			l = len;
		memcpy(buf, n->mnt->target, l);
		return l;
	}
	case VN_PROC:
		return procfs_readlink(v, t, n->rel, buf, len);
	case VN_BACKEND: {
		char link[PATH_MAX];
		int neg;
		if (mnt_dc_get(v, n->mnt, n->rel, NULL, &neg, link, sizeof link) && !neg) {
			size_t l = strlen(link);
			if (l) {
				if (l > len)
					l = len;
				memcpy(buf, link, l);
				return l;
			}
		}
		return VFS_BE(v, readlink, n->mnt->export, n->rel, buf, len);
	}
	default:
		return -EINVAL;
	}
}

static int memfd_dir(struct vfs *v, const struct vfs_node *n, int *fd, struct stat *st)
{
	struct stat mst;
	int mfd = memfd_create("moat-dir", MFD_CLOEXEC);

	if (mfd < 0)
		return -errno;
	if (fstat(mfd, &mst) < 0) {
		int e = -errno;
		close(mfd);
		return e;
	}
	inomap_put_m(v->im, mst.st_dev, mst.st_ino, fd_mount_id(mfd), n->path);
	*fd = mfd;
	if (st)
		*st = n->st;
	return 0;
}

/* The placeholder for an O_PATH fd of n (see walk.h). */
static int link_placeholder(struct vfs *v, const struct vfs_node *n, int *fd, struct stat *st)
{
	struct stat mst;
	int mfd = memfd_create("moat-link", MFD_CLOEXEC | MFD_ALLOW_SEALING);

	if (mfd < 0)
		return -errno;
	if (fcntl(mfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) < 0 ||
	    fstat(mfd, &mst) < 0) {
		int e = -errno;
		close(mfd);
		return e;
	}
	inomap_put_obj(v->lim, mst.st_dev, mst.st_ino, n->path, n->st.st_dev, n->st.st_ino);
	*fd = mfd;
	if (st)
		*st = n->st;
	return 0;
}

#define ERESTARTSYS_ 512 /* include/linux/errno.h, not exported to user space */

static int fifo_wait_hook(void *arg)
{
	return task_wait_must_end(arg);
}

/* The gofer acts only on the object the walk found and the caller
 * checked (-ESTALE if the name leads elsewhere by then): the next request
 * of this thread names its identity (gofer_expect_identity). */
static void expect_node(const struct vfs_node *n)
{
	if (n->exists && n->kind == VN_BACKEND)
		gofer_expect_identity(n->st.st_dev, n->st.st_ino);
	else if (n->kind == VN_BACKEND && n->pst.st_ino)
		/* a create: only in the directory checked */
		gofer_expect_parent(n->pst.st_dev, n->pst.st_ino);
}

/* Opens of /dev's memory devices (null, zero, full, random, urandom) come
 * from a pool the gofer fills a batch at a time (GOFER_OP_DEVOPEN: up to
 * GOFER_DEVOPEN_MAX fds in one round trip, the batch doubling from 1 with
 * each refill of a kind), not one OPEN round trip each: git opens
 * /dev/urandom for every object it writes (727 of a 500-file commit's
 * 1,295 gofer opens), shells open /dev/null for every redirection. Each
 * fd is an open file description of its own, opened with the same flags
 * as OPEN would have (the guest's access mode; O_CLOEXEC is the guest
 * fd's own, set by the reply), so nothing the guest can see tells it from
 * an open made at the call: these devices keep no state per open (no
 * offset that moves, an open that never blocks). Only plain opens: any
 * other status flag (O_NONBLOCK, O_APPEND, O_SYNC...) takes OPEN. */
#define DEVPOOL_KINDS 10 /* minors 0..9 of major 1 */
/* fds held in the pool at most, all kinds together: the sentry's own fds
 * are bounded (sentry/tracer.c FDS_SPARE), and 15 kinds of 31 would be
 * 465 (with batches of 8 at most, before pgit6, ~105) */
#define DEVPOOL_TOTAL 96
static struct devpool {
	pthread_mutex_t lock;
	struct vfs *v;
	int total; /* fds held, all kinds */
	struct { int fd[GOFER_DEVOPEN_MAX]; int n, batch, filling; struct stat st; } k[DEVPOOL_KINDS][3];
} devpool = { .lock = PTHREAD_MUTEX_INITIALIZER };

static int devpool_open(struct vfs *v, const struct vfs_node *n, int flags, int *fd,
			struct stat *st)
{
	void *ctx;
	const struct vfs_backend *be = vfs_backend(v, &ctx);
	unsigned mi = minor(n->st.st_rdev);
	int acc = flags & O_ACCMODE;
	const char *name = strrchr(n->rel, '/');

	name = name ? name + 1 : n->rel;
	if (!be->devopen || !n->exists || !S_ISCHR(n->st.st_mode) || major(n->st.st_rdev) != 1 ||
	    (mi != 3 && mi != 5 && mi != 7 && mi != 8 && mi != 9) || acc == O_ACCMODE ||
	    (flags & ~(O_ACCMODE | O_CLOEXEC | O_LARGEFILE | O_NOCTTY | O_NOFOLLOW)) || !*name)
		return -EAGAIN;
	pthread_mutex_lock(&devpool.lock);
	if (devpool.v != v) {
		/* another vfs (unit tests): start afresh */
		for (int i = 0; i < DEVPOOL_KINDS; i++)
			for (int j = 0; j < 3; j++)
				while (devpool.k[i][j].n)
					close(devpool.k[i][j].fd[--devpool.k[i][j].n]);
		memset(devpool.k, 0, sizeof devpool.k);
		devpool.total = 0;
		devpool.v = v;
	}
	__typeof__(devpool.k[0][0]) *k = &devpool.k[mi][acc];
	if (k->n) {
		/* the oldest first (a batch's order) */
		*fd = k->fd[0];
		memmove(k->fd, k->fd + 1, --k->n * sizeof *k->fd);
		devpool.total--;
		*st = k->st;
		pthread_mutex_unlock(&devpool.lock);
		return 0;
	}
	if (k->filling) {
		/* another worker's batch is on its way: a plain OPEN meanwhile */
		pthread_mutex_unlock(&devpool.lock);
		return -EAGAIN;
	}
	/* the round trip outside the lock */
	k->filling = 1;
	int want = k->batch ? k->batch * 2 : 1;
	if (want > GOFER_DEVOPEN_MAX)
		want = GOFER_DEVOPEN_MAX;
	/* what this batch leaves in the pool stays within DEVPOOL_TOTAL,
	 * reserved now (other kinds' fills run meanwhile) */
	int room = DEVPOOL_TOTAL - devpool.total + 1;
	if (want > room)
		want = room > 1 ? room : 1;
	devpool.total += want - 1;
	pthread_mutex_unlock(&devpool.lock);
	int got[GOFER_DEVOPEN_MAX];
	struct stat gst;
	int r = be->devopen(ctx, n->mnt->export, name, acc, want, got, &gst);
	if (r > 0 && (gst.st_rdev != n->st.st_rdev || !S_ISCHR(gst.st_mode))) {
		while (r)
			close(got[--r]);
		r = -EAGAIN;
	}
	pthread_mutex_lock(&devpool.lock);
	k->filling = 0;
	if (devpool.v == v)
		devpool.total -= want - 1; /* the reservation: what is kept counts below */
	if (r > 0 && devpool.v == v && !k->n) {
		k->batch = want;
		k->st = gst;
		for (int i = 1; i < r; i++)
			k->fd[k->n++] = got[i];
		devpool.total += r - 1;
		r = 1;
	} else if (r > 0) {
		for (int i = 1; i < r; i++) /* (not reached: one filler a kind) */
			close(got[i]);
		r = 1;
	}
	pthread_mutex_unlock(&devpool.lock);
	if (r <= 0)
		return -EAGAIN;
	*fd = got[0];
	*st = gst;
	return 0;
}

int vfs_node_open(struct vfs *v, struct task *t, const struct vfs_node *n,
		  int flags, mode_t mode, int *fd, struct stat *st)
{
	struct stat tmp;
	int r, mapped = 0;
	uint64_t hm = 0; /* the fd's host mount, when known */
	unsigned long gen0 = dcache_gen(v->dc); /* before any backend call */

	if (!st)
		st = &tmp;
	if ((flags & (O_PATH | O_NOFOLLOW)) == (O_PATH | O_NOFOLLOW) && n->exists &&
	    S_ISLNK(n->st.st_mode) && (n->kind == VN_BACKEND || n->kind == VN_PROC))
		return link_placeholder(v, n, fd, st);
	/* SECCOMP_IOCTL_NOTIF_ADDFD cannot install an O_PATH file. A directory
	 * gets a plain read-only directory fd (all a guest can do with either is
	 * use it as a dirfd, fchdir or fstat: emulated), anything else, or a
	 * directory we may not read, the placeholder that names it. "We" is
	 * the task (its virtual credentials), not the gofer, which opens what
	 * host root may: a guest that may not read a directory must not get
	 * a directory fd it can list (red-team round 4: getdents on an O_PATH
	 * fd listed a 0700 directory). */
	if ((flags & O_PATH) && n->exists && n->kind == VN_BACKEND) {
		if (S_ISDIR(n->st.st_mode) && (!t || vfs_permission_node(t, n, MAY_READ) == 0)) {
			/* marked O_DSYNC (F_SETFL cannot clear it; a guest's own
			 * directory open never has it, below): getdents on it is
			 * EBADF as on Linux's O_PATH fd, whoever holds it — red
			 * team 13: root's O_PATH fd of its 0700 directory, kept
			 * across a drop to uid 1000, listed it */
			r = vfs_node_open(v, t, n, O_RDONLY | O_DIRECTORY | O_DSYNC | VFS_OPATH_DIR | (flags & O_CLOEXEC), 0, fd, st);
			if (r != -EACCES)
				return r;
		}
		return link_placeholder(v, n, fd, st);
	}
	/* O_SYNC/O_DSYNC mean nothing to a directory; kept off the guest's own
	 * directory fds, where O_DSYNC marks an O_PATH open's (above) */
	if (!(flags & O_PATH) && n->exists && S_ISDIR(n->st.st_mode) && !(flags & VFS_OPATH_DIR))
		flags &= ~(O_DSYNC | O_SYNC); /* (O_SYNC holds __O_SYNC and O_DSYNC) */
	flags &= ~VFS_OPATH_DIR;
	switch (n->kind) {
	case VN_BACKEND:
		if (n->exists && S_ISFIFO(n->st.st_mode) && !(flags & (O_NONBLOCK | O_PATH)) &&
		    (flags & O_ACCMODE) != O_RDWR && t) {
			/* Opening a FIFO blocks until its peer comes. The guest
			 * waits killably in its notification, so a signal stays
			 * pending: watch for one and answer -ERESTARTSYS, which
			 * the guest's kernel turns into EINTR or a restart exactly
			 * as for a native open. */
			gofer_set_wait_hook(fifo_wait_hook, t);
			/* it waits for another task: outside the pool's cap
			 * (64 such opens had stalled every other call) */
			gofer_wait_begin();
			expect_node(n);
			r = VFS_BE(v, open, n->mnt->export, n->rel, flags, mode, fd, st);
			gofer_expect_clear();
			gofer_wait_end();
			gofer_set_wait_hook(NULL, NULL);
			if (r == -EINTR)
				return -ERESTARTSYS_;
		} else if ((r = vfs_direct_open(v, n, flags, fd, st, &hm)) == 0) {
			mapped = 1;
		} else if (!(n->mnt->dev && (r = devpool_open(v, n, flags, fd, st)) == 0)) {
			expect_node(n);
			r = VFS_BE(v, open, n->mnt->export, n->rel, flags, mode, fd, st);
			gofer_expect_clear();
		}
		if (r < 0)
			return r;
		note_devs(v, n->mnt, st->st_dev);
		if (S_ISDIR(st->st_mode) || !(flags & O_PATH)) {
			/* keyed by the host mount the fd is on: the same
			 * directory opened through another sandbox mount (a
			 * read-only bind of an rw bind's tree) is another entry */
			if (!hm) /* (the direct open's statx had it) */
				hm = fd_mount_id(*fd);
			hmnt_note(v, hm, n->mnt->export);
			inomap_put_m(S_ISDIR(st->st_mode) ? v->im : v->fim, st->st_dev, st->st_ino,
				     hm, n->path);
		}
		if (!mapped)
			vfs_map_stat(v, st);
		if (!(flags & O_PATH) && ((flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC)))
			/* the guest writes it natively from now on; a cow
			 * mount copied it up (a new inode) */
			vfs_note_written(v, st);
		if ((flags & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL)) {
			/* the gofer made the name: cache what it made (the
			 * next fchmod, futimens, unlink of it needs no gofer
			 * walk, even where the sentry may not search the
			 * directory: tar's 0700 directories, root-run) */
			vfs_refresh_since(v, n->mnt, n->rel, st, *fd, gen0);
			parent_changed(v, n->mnt, n->rel);
		} else if (flags & (O_CREAT | O_TRUNC) || (flags & O_ACCMODE) != O_RDONLY) {
			vfs_invalidate(v, n->mnt, n->rel, 0);
		}
		return 0;
	case VN_SYNTH:
		return memfd_dir(v, n, fd, st);
	case VN_PROC:
		if (S_ISDIR(n->st.st_mode))
			return memfd_dir(v, n, fd, st);
		if (n->magic)
			r = procfs_open_magic(v, t, n->rel, flags, fd);
		else
			r = procfs_open(v, t, n->rel, flags, fd);
		if (r < 0)
			return r;
		*st = n->st;
		return 0;
	case VN_SYMMNT:
		if (!(flags & O_PATH))
			return -ELOOP;
		return memfd_dir(v, n, fd, st);
	default:
		return -EBADF;
	}
}

/* n was looked up by a name recorded for the object st: is it that object?
 * Then give it the held file's fresh size and times. */
static int node_is(struct vfs_node *n, const struct stat *st)
{
	struct stat fresh = *st;

	if (!n->exists || (n->kind == VN_BACKEND &&
	    (n->st.st_dev != st->st_dev || n->st.st_ino != st->st_ino)))
		return 0;
	if (n->kind == VN_BACKEND) {
		/* owners from the gofer's stat (our own fstat sees ids through
		 * the sentry's user namespace, where only our uid is mapped) */
		fresh.st_uid = n->st.st_uid;
		fresh.st_gid = n->st.st_gid;
		n->st = fresh;
	}
	return 1;
}

/* Name directory fd (stat st) where it is now beneath mount m's export. */
static int refind_in(struct vfs *v, struct task *t, int fd, const struct stat *st,
		     const struct vfs_mount *m, struct vfs_node *n)
{
	cleanup_free char *rel = xmalloc(VFS_PATH_MAX), *path = xmalloc(VFS_PATH_MAX);
	void *ctx;
	const struct vfs_backend *be = vfs_backend(v, &ctx);
	long l;
	int r;

	if (!be->pathof)
		return -ESTALE;
	/* a directory of another export (the same host directory bound
	 * twice: the gofer's walk up by identity ends at a root that looks
	 * like this export's) is not this mount's to name */
	int exp = hmnt_export(v, fd_mount_id(fd));
	if (exp >= 0 && exp != m->export)
		return -ESTALE;
	l = be->pathof(ctx, m->export, fd, rel, VFS_PATH_MAX - 1);
	if (l < 0)
		return (int)l;
	rel[l] = 0;
	const char *tail = rel;
	if (m->sub) {
		/* a guest's bind of a subdirectory shows only what is below it */
		if (strncmp(rel, m->sub, m->slen) || (rel[m->slen] && rel[m->slen] != '/'))
			return -ESTALE;
		tail = rel + m->slen + (rel[m->slen] == '/');
	}
	if ((size_t)snprintf(path, VFS_PATH_MAX, "%s%s%s", m->path, *tail && m->plen ? "/" : "",
			     tail) >= VFS_PATH_MAX)
		return -ENAMETOOLONG;
	r = vfs_lookup(v, t, path, NULL, 0, n);
	if (r < 0)
		return r;
	if (n->mnt != m || !node_is(n, st))
		return -ESTALE;
	inomap_put_m(v->im, st->st_dev, st->st_ino, fd_mount_id(fd), n->path);
	return 0;
}

int vfs_refind_dir(struct vfs *v, struct task *t, int fd, const struct stat *st,
		   const char *oldpath, struct vfs_node *n)
{
	if (!S_ISDIR(st->st_mode))
		return -ESTALE;
	if (st->st_nlink == 0)
		return -ENOENT;
	if (oldpath) {
		const struct vfs_mount *m = vfs_mount_for(v, oldpath);
		if (!m || m->kind != VFS_MNT_GOFER || !(m->writable || m->shared))
			return -ESTALE; /* nothing renames in a read-only exclusive mount */
		return refind_in(v, t, fd, st, m, n);
	}
	/* no name recorded (the inode map is bounded and forgot it): try the
	 * gofer mounts of the export whose host mount the fd is on, most
	 * recently added first. Where that is unknown, no mount that another
	 * mount aliases (the same host directory bound twice, ro and rw: the
	 * object alone cannot say which one it was opened through, and the
	 * writable one must not be guessed) */
	int exp = hmnt_export(v, fd_mount_id(fd));
	for (size_t i = v->nmnts; i-- > 0;) {
		const struct vfs_mount *m = &v->mnts[i];
		if (m->kind != VFS_MNT_GOFER || m->dev || m->gone)
			continue;
		if (exp >= 0 ? m->export != exp : m->aliased)
			continue;
		if (refind_in(v, t, fd, st, m, n) == 0)
			return 0;
	}
	return -ESTALE;
}

int vfs_host_fd_node(struct vfs *v, struct task *t, int fd, struct vfs_node *n)
{
	char path[VFS_PATH_MAX];
	struct stat st;
	dev_t odev;
	ino_t oino;
	uint64_t hm;
	int sr = fd_stat_mount(fd, &st, &hm);

	if (sr < 0)
		return sr;
	/* the name it was opened by in the host mount it is on: never the
	 * same inode's name in another sandbox mount (fs/dcache.h) */
	if (inomap_get_m(v->im, st.st_dev, st.st_ino, hm, path, sizeof path) == 0 ||
	    inomap_get_m(v->fim, st.st_dev, st.st_ino, hm, path, sizeof path) == 0) {
		int r = vfs_lookup(v, t, path, NULL, 0, n);
		/* a backend path is only trusted while it still names this inode */
		if (r == 0 && node_is(n, &st))
			return 0;
		/* a directory renamed since: its name now, from the object */
		if (vfs_refind_dir(v, t, fd, &st, path, n) == 0)
			return 0;
	} else if (inomap_get_obj(v->lim, st.st_dev, st.st_ino, path, sizeof path,
				  &odev, &oino) == 0) {
		/* an O_PATH placeholder: its object, while the path still names it
		 * (re-stat: its size and times may have changed natively since,
		 * and fstat of the fd shows them) */
		int r = vfs_lookup(v, t, path, NULL, WALK_FRESH, n);
		if (r == 0 && n->exists &&
		    n->st.st_dev == odev && n->st.st_ino == oino) {
			n->opath = 1;
			return 0;
		}
	} else if (S_ISDIR(st.st_mode) && st.st_nlink && !vfs_is_memfd(v, &st) &&
		   vfs_refind_dir(v, t, fd, &st, NULL, n) == 0) {
		return 0;   /* a directory whose name the inode map forgot */
	}
	n->path[0] = 0;
	memset((char *)n + offsetof(struct vfs_node, mnt), 0,
	       sizeof *n - offsetof(struct vfs_node, mnt));
	n->kind = VN_FD;
	n->exists = 1;
	n->rel = n->path;
	n->mnt = NULL;
	vfs_map_stat(v, &st);
	n->st = st;
	return 0;
}

int vfs_fd_is_placeholder(struct vfs *v, int hostfd)
{
	char path[VFS_PATH_MAX];
	struct stat st;
	dev_t odev;
	ino_t oino;

	if (fstat(hostfd, &st) < 0 || !S_ISREG(st.st_mode))
		return 0;
	return inomap_get_obj(v->lim, st.st_dev, st.st_ino, path, sizeof path, &odev, &oino) == 0;
}

int vfs_follow_magic(struct vfs *v, struct task *t, struct vfs_node *n, int *hostfd)
{
	int fd = -1, r;

	if (hostfd)
		*hostfd = -1;
	if (n->kind != VN_PROC || !n->magic || !S_ISLNK(n->st.st_mode))
		return 0;
	r = procfs_open_magic(v, t, n->rel, O_PATH, &fd);
	if (r < 0)
		return r;
	r = vfs_host_fd_node(v, t, fd, n);
	if (r < 0) {
		close(fd);
		return r;
	}
	n->opath = 0;
	if (hostfd)
		*hostfd = fd;
	else
		close(fd);
	return 1;
}

#ifndef __O_TMPFILE
#define __O_TMPFILE 020000000
#endif

int vfs_tmpfile_open(struct vfs *v, const struct vfs_node *dir, int flags, mode_t mode,
		     int *fd, struct stat *st)
{
	void *ctx;
	const struct vfs_backend *be = vfs_backend(v, &ctx);
	int r;

	if (dir->kind != VN_BACKEND || !v->flink || !be->linkfd)
		return -EOPNOTSUPP;
	r = be->open(ctx, dir->mnt->export, dir->rel, flags, mode, fd, st);
	if (r < 0)
		return r;
	note_devs(v, dir->mnt, st->st_dev);
	inomap_put_obj(v->tim, st->st_dev, st->st_ino, dir->path, (flags & O_EXCL) ? 1 : 0, 0);
	vfs_map_stat(v, st);
	vfs_note_written(v, st);
	return 0;
}

int vfs_tmpfile_link(struct vfs *v, int hostfd, const struct vfs_node *nn, int *err)
{
	char dir[VFS_PATH_MAX];
	struct stat st;
	dev_t excl;
	ino_t unused;
	void *ctx;
	const struct vfs_backend *be = vfs_backend(v, &ctx);

	if (fstat(hostfd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    inomap_get_obj(v->tim, st.st_dev, st.st_ino, dir, sizeof dir, &excl, &unused) < 0)
		return 0;
	if (st.st_nlink != 0 || excl) {
		*err = -ENOENT; /* linked already (then a name walks to it), or O_EXCL */
		return 1;
	}
	if (vfs_mount_for(v, dir) != nn->mnt || nn->kind != VN_BACKEND || !be->linkfd) {
		*err = -EXDEV;
		return 1;
	}
	if (nn->mnt->kind == VFS_MNT_GOFER)
		gofer_expect_parent(nn->pst.st_dev, nn->pst.st_ino); /* the directory checked */
	*err = be->linkfd(ctx, nn->mnt->export, hostfd, nn->rel);
	gofer_expect_clear();
	if (*err == 0) {
		inomap_put_m(v->fim, st.st_dev, st.st_ino, fd_mount_id(hostfd), nn->path);
		vfs_invalidate(v, nn->mnt, nn->rel, 0);
	}
	return 1;
}

/* The guest-view path of the directory behind host fd (for /proc/<pid>/fd). */
int vfs_path_of_dirfd(struct vfs *v, struct task *t, int fd, char *buf, size_t len)
{
	cleanup_free struct vfs_node *n = xmalloc(sizeof *n);
	int r = vfs_host_fd_node(v, t, fd, n);

	if (r < 0)
		return r;
	if (n->kind == VN_FD)
		return -ENOENT;
	if (strlen(n->path) >= len)
		return -ENAMETOOLONG;
	strcpy(buf, n->path);
	return (int)strlen(buf);
}

int vfs_cwd_path(struct vfs *v, struct task *t, char *buf, size_t len)
{
	cleanup_free struct vfs_node *n = xmalloc(sizeof *n);
	int r = vfs_cwd_node(v, t, n);

	if (r < 0)
		return r;
	if (strlen(n->path) >= len)
		return -ENAMETOOLONG;
	strcpy(buf, n->path);
	return 0;
}

static int cwd_node(struct vfs *v, struct task *t, struct fs_ctx *fs, struct vfs_node *n);

/* t may be another task (/proc/<pid>/cwd, open_by_handle_at's mount):
 * its fs_ctx by a counted reference (task_fs_get) */
int vfs_cwd_node(struct vfs *v, struct task *t, struct vfs_node *n)
{
	struct fs_ctx *fs = task_fs_get(t);
	if (!fs)
		return -ENOENT;
	int r = cwd_node(v, t, fs, n);
	fs_ctx_put(fs);
	return r;
}

static int cwd_set(struct vfs *v, struct fs_ctx *fs, const struct vfs_node *n, int hostfd);

static int cwd_node(struct vfs *v, struct task *t, struct fs_ctx *fs, struct vfs_node *n)
{
	char cwd[VFS_PATH_MAX];
	dev_t dev;
	ino_t ino;
	int r, fd = -1;

	/* the string, not the whole 16 KiB array: every walk of a relative
	 * path starts here (git status's lstats); read under the sequence
	 * (a copy that a writer overlapped is made again), the lock only
	 * while a writer keeps it odd */
	int held = 0, ok = 0;
	for (int k = 0; k < 4 && !ok; k++) {
		unsigned s1 = atomic_load_explicit(&fs->cwd_seq, memory_order_acquire);
		if (s1 & 1)
			continue;
		size_t l = strnlen(fs->cwd, sizeof cwd - 1);
		memcpy(cwd, fs->cwd, l);
		cwd[l] = 0;
		dev = fs->cwd_dev;
		ino = fs->cwd_ino;
		held = fs->cwd_fd >= 0;
		atomic_thread_fence(memory_order_acquire);
		ok = atomic_load_explicit(&fs->cwd_seq, memory_order_relaxed) == s1;
	}
	if (!ok) {
		pthread_mutex_lock(&fs->lock);
		memcpy(cwd, fs->cwd, strlen(fs->cwd) + 1);
		dev = fs->cwd_dev;
		ino = fs->cwd_ino;
		held = fs->cwd_fd >= 0;
		pthread_mutex_unlock(&fs->lock);
	}
	r = vfs_lookup(v, t, cwd, NULL, 0, n);
	if (!held) {
		if (r == 0 && !n->exists)
			r = -ENOENT;
		/* hold the object of a cwd in a writable mount (the start-up
		 * --workdir, set by name): from now on it follows renames */
		if (r == 0 && !dev && !ino && n->kind == VN_BACKEND &&
		    (n->mnt->writable || n->mnt->shared) &&
		    S_ISDIR(n->st.st_mode))
			cwd_set(v, fs, n, -1);
		return r;
	}
	if (r == 0 && n->exists && n->kind == VN_BACKEND && n->st.st_dev == dev && n->st.st_ino == ino)
		return 0;
	/* the name no longer leads to the cwd: find the directory itself */
	pthread_mutex_lock(&fs->lock);
	if (fs->cwd_fd >= 0)
		fd = fcntl(fs->cwd_fd, F_DUPFD_CLOEXEC, 0);
	pthread_mutex_unlock(&fs->lock);
	if (fd < 0)
		return -ENOENT;
	struct stat st;
	if (fstat(fd, &st) < 0)
		r = -errno;
	else
		r = vfs_refind_dir(v, t, fd, &st, cwd, n);
	close(fd);
	if (r == -ESTALE)
		r = -ENOENT;
	if (r == 0) {
		pthread_mutex_lock(&fs->lock);
		if (!strcmp(fs->cwd, cwd) && fs->cwd_dev == dev && fs->cwd_ino == ino) {
			fs_cwd_write_begin(fs);
			snprintf(fs->cwd, sizeof fs->cwd, "%s", n->path);
			fs_cwd_write_end(fs);
		}
		pthread_mutex_unlock(&fs->lock);
	}
	return r;
}

int vfs_cwd_set(struct vfs *v, struct task *t, const struct vfs_node *n, int hostfd)
{
	struct fs_ctx *fs = task_fs_get(t);
	if (!fs)
		return -ENOENT;
	int r = cwd_set(v, fs, n, hostfd);
	fs_ctx_put(fs);
	return r;
}

/* The object of directory n, held by an fs_ctx (cwd, root): an O_PATH fd
 * for a directory of a writable or shared mount (a dup of hostfd, or
 * opened by the gofer and checked to be n), else -1 (nothing renames it,
 * or it was replaced meanwhile: the name only). */
static int hold_dir(struct vfs *v, const struct vfs_node *n, int hostfd)
{
	int fd = -1;

	if (n->kind == VN_BACKEND && (n->mnt->writable || n->mnt->shared) &&
	    S_ISDIR(n->st.st_mode)) {
		if (hostfd >= 0) {
			fd = fcntl(hostfd, F_DUPFD_CLOEXEC, 0);
		} else {
			struct stat st;
			if (VFS_BE(v, open, n->mnt->export, n->rel, O_PATH | O_DIRECTORY, 0, &fd, &st) < 0)
				fd = -1;
			else if (st.st_dev != n->st.st_dev || st.st_ino != n->st.st_ino) {
				close(fd); /* replaced meanwhile: keep the name only */
				fd = -1;
			} else {
				hmnt_note(v, fd_mount_id(fd), n->mnt->export);
			}
		}
	}
	return fd;
}

static int cwd_set(struct vfs *v, struct fs_ctx *fs, const struct vfs_node *n, int hostfd)
{
	int fd = hold_dir(v, n, hostfd);

	pthread_mutex_lock(&fs->lock);
	fs_cwd_write_begin(fs);
	snprintf(fs->cwd, sizeof fs->cwd, "%s", n->path);
	if (fs->cwd_fd >= 0)
		close(fs->cwd_fd);
	fs->cwd_fd = fd;
	fs->cwd_dev = n->st.st_dev;
	fs->cwd_ino = n->st.st_ino;
	fs_cwd_write_end(fs);
	pthread_mutex_unlock(&fs->lock);
	return 0;
}

void vfs_root_set(struct vfs *v, struct task *t, const struct vfs_node *n)
{
	struct fs_ctx *fs = t->fs;
	int top = !strcmp(n->path, "/");
	char *root = top ? NULL : xstrdup(n->path);
	int fd = top ? -1 : hold_dir(v, n, -1);

	pthread_mutex_lock(&fs->lock);
	free(fs->root);
	fs->root = root;
	if (fs->root_fd >= 0)
		close(fs->root_fd);
	fs->root_fd = fd;
	fs->root_dev = n->st.st_dev;
	fs->root_ino = n->st.st_ino;
	atomic_store(&fs->rooted, root != NULL);
	pthread_mutex_unlock(&fs->lock);
}

void vfs_root_refresh(struct vfs *v, struct task *t)
{
	struct fs_ctx *fs = t && task_fs_rooted(t) ? task_fs_get(t) : NULL;
	cleanup_free char *root = NULL;
	cleanup_free struct vfs_node *n = NULL;
	dev_t dev = 0;
	ino_t ino = 0;
	int fd = -1;

	if (!fs || !atomic_load(&fs->rooted))
		goto out;
	pthread_mutex_lock(&fs->lock);
	if (fs->root && fs->root_fd >= 0) {
		root = xstrdup(fs->root);
		dev = fs->root_dev;
		ino = fs->root_ino;
	}
	pthread_mutex_unlock(&fs->lock);
	if (!root)
		goto out; /* a root no one renames (read-only exclusive mount) */
	n = xmalloc(sizeof *n);
	if (vfs_lookup(v, t, root, NULL, 0, n) == 0 && n->exists &&
	    n->kind == VN_BACKEND && n->st.st_dev == dev && n->st.st_ino == ino)
		goto out; /* the name still leads to it */
	pthread_mutex_lock(&fs->lock);
	if (fs->root_fd >= 0)
		fd = fcntl(fs->root_fd, F_DUPFD_CLOEXEC, 0);
	pthread_mutex_unlock(&fs->lock);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0 ||
	    vfs_refind_dir(v, t, fd, &st, root, n) < 0)
		goto out;
	pthread_mutex_lock(&fs->lock);
	if (fs->root && !strcmp(fs->root, root) && fs->root_dev == dev && fs->root_ino == ino &&
	    strcmp(n->path, "/")) {
		free(fs->root);
		fs->root = xstrdup(n->path);
	}
	pthread_mutex_unlock(&fs->lock);
out:
	if (fd >= 0)
		close(fd);
	fs_ctx_put(fs);
}

int vfs_fd_node(struct vfs *v, struct task *t, int guestfd, struct vfs_node *n,
		int *hostfd)
{
	int fd = task_getfd(t, guestfd);
	int r;

	if (fd < 0)
		return -EBADF;
	r = vfs_host_fd_node(v, t, fd, n);
	if (r < 0 || !hostfd)
		close(fd);
	else
		*hostfd = fd;
	return r;
}

/* ---- the guest's mount table: mount(2), umount2 ---- */

/* The topmost live mount whose mount point is path, or NULL. */
static struct vfs_mount *mount_at(struct vfs *v, const char *path)
{
	for (size_t i = v->nmnts; i-- > 0; ) {
		struct vfs_mount *m = &v->mnts[i];
		if (!m->gone && m->kind != VFS_MNT_SYMLINK && !strcmp(m->path, path))
			return m;
	}
	return NULL;
}

/* Append a mount (mount_lock held). */
static int mount_append(struct vfs *v, const char *path, int kind, int export,
			int writable, int can_write, int dev, int private_fs, int shared,
			int cow, int host_view, char *const *hidden, const char *src, int cache_idx)
{
	struct vfs_mount *d;

	if (v->nmnts >= v->mcap)
		return -ENOMEM;
	d = &v->mnts[v->nmnts];
	memset(d, 0, sizeof *d);
	d->pos = (int)v->nmnts;
	d->idx = cache_idx >= 0 ? cache_idx : d->pos;
	d->kind = kind;
	d->path = xstrdup(path);
	d->plen = strcmp(path, "/") ? strlen(path) : 0;
	d->export = export;
	d->writable = writable;
	d->can_write = can_write;
	d->dev = dev;
	d->private_fs = private_fs;
	d->shared = shared;
	d->cow = cow;
	d->host_view = host_view;
	d->guest = 1;
	snprintf(d->src, sizeof d->src, "%s", src);
	if (hidden) {
		size_t k = 0;
		while (hidden[k])
			k++;
		d->hidden = xcalloc(k + 1, sizeof(char *));
		for (size_t j = 0; j < k; j++)
			d->hidden[j] = xstrdup(hidden[j]);
	}
	v->mkey[d->pos] = mount_key(d);
	v->nmnts = v->nmnts + 1;    /* publishes the entry */
	return 0;
}

int vfs_mount_tmpfs(struct vfs *v, const char *path, int rdonly, const char *src)
{
	int r = -ENOMEM;

	pthread_mutex_lock(&v->mount_lock);
	if (v->nspare > 0) {
		r = mount_append(v, path, VFS_MNT_GOFER, v->spare[v->nspare - 1], !rdonly, 1,
				 0, 1, 0, 0, 0, NULL, src && *src && strlen(src) < 32 ? src : "tmpfs", -1);
		if (!r)
			v->nspare--;
	}
	pthread_mutex_unlock(&v->mount_lock);
	return r;
}

/* Whether one of the sandbox's own mounts (not the guest's) has its mount
 * point strictly beneath path (mount_lock held). The bind's new mount shows
 * its source's export as it is, with nothing mounted over it: a name one of
 * those mounts covers would be reached through it (a `--bind D:/w:rw` with
 * `--bind D/.git:/w/.git:ro` or `--tmpfs /w/secrets` over it: root's
 * `mount --bind /w /y` wrote D/.git and read D/secrets before red-team round
 * 24). Linux refuses the same bind in a user namespace for the mounts it
 * inherited (locked: has_locked_children, EINVAL), recursive or not. */
static int mount_locked_beneath(struct vfs *v, const char *path)
{
	size_t plen = strcmp(path, "/") ? strlen(path) : 0;

	for (size_t i = 0; i < v->nmnts; i++) {
		const struct vfs_mount *m = &v->mnts[i];
		if (!m->gone && !m->guest && strcmp(m->path, path) &&
		    path_under(m->path, path, plen))
			return 1;
	}
	return 0;
}

int vfs_mount_bind(struct vfs *v, const struct vfs_node *src, const char *path, int rdonly)
{
	int r;

	pthread_mutex_lock(&v->mount_lock);
	const struct vfs_mount *s = src->mnt;
	if (!s || s->gone || s->kind != VFS_MNT_GOFER || src->kind != VN_BACKEND || !src->exists) {
		r = -EINVAL;   /* only what a gofer mount serves is bound again */
	} else if (mount_locked_beneath(v, src->path)) {
		r = -EINVAL;   /* it would show what the sandbox's mounts cover */
	} else {
		r = mount_append(v, path, s->kind, s->export, s->writable && !rdonly,
				 s->can_write, s->dev, s->private_fs, s->shared, s->cow, s->host_view,
				 s->hidden, s->src,
				 s->idx /* the same files: the same dentry cache entries */);
		if (!r)
			v->mnts[v->nmnts - 1].aliased = s->aliased;
		if (!r && *src->rel) {
			/* a subdirectory (or a subdirectory of one): its path
			 * inside the export is the new mount's root */
			struct vfs_mount *d = &v->mnts[v->nmnts - 1];
			d->sub = xstrdup(src->rel);
			d->slen = strlen(d->sub);
			if (!s->cow) {
				d->sub_dev = src->st.st_dev;
				d->sub_ino = src->st.st_ino;
			}
		}
	}
	pthread_mutex_unlock(&v->mount_lock);
	return r;
}

int vfs_remount(struct vfs *v, const char *path, int rdonly)
{
	int r = 0;

	pthread_mutex_lock(&v->mount_lock);
	struct vfs_mount *m = mount_at(v, path);
	if (!m)
		r = -EINVAL;
	else if (m->kind != VFS_MNT_GOFER || m->dev)
		r = rdonly ? -EBUSY : 0;
	else if (!rdonly && !m->can_write)
		r = -EPERM;   /* the gofer serves it read-only */
	else
		m->writable = !rdonly;
	pthread_mutex_unlock(&v->mount_lock);
	return r;
}

int vfs_umount(struct vfs *v, const char *path, int detach)
{
	int r = 0;

	pthread_mutex_lock(&v->mount_lock);
	struct vfs_mount *m = mount_at(v, path);
	if (!m) {
		r = -EINVAL;
	} else if (!m->guest) {
		r = -EBUSY;
	} else {
		for (size_t i = (size_t)m->pos + 1; i < v->nmnts && !r; i++)
			if (!v->mnts[i].gone && path_under(v->mnts[i].path, m->path, m->plen))
				r = detach ? 0 : -EBUSY;
		if (!r) {
			for (size_t i = (size_t)m->pos + 1; i < v->nmnts; i++)
				if (path_under(v->mnts[i].path, m->path, m->plen))
					v->mnts[i].gone = 1;
			m->gone = 1;
		}
	}
	pthread_mutex_unlock(&v->mount_lock);
	return r;
}

/* ---- /proc/mounts, /proc/<pid>/mountinfo ---- */

/* A path as /proc/mounts writes it: space, tab, newline, backslash octal */
static size_t mangle(char *out, size_t len, const char *p)
{
	size_t o = 0;

	for (; *p && o + 5 < len; p++) {
		if (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\\')
			o += (size_t)snprintf(out + o, len - o, "\\%03o", (unsigned char)*p);
		else
			out[o++] = *p;
	}
	out[o] = 0;
	return o;
}

/* The mount a mount point lies in (its parent in mountinfo). */
static const struct vfs_mount *mount_parent(struct vfs *v, const struct vfs_mount *m)
{
	const struct vfs_mount *best = NULL;

	if (m->plen == 0)
		return NULL;
	for (size_t i = 0; i < v->nmnts; i++) {
		const struct vfs_mount *p = &v->mnts[i];
		if (p == m || p->gone || p->kind == VFS_MNT_SYMLINK)
			continue;
		if (m->guest && p->pos > m->pos)
			continue;   /* mounted over it later */
		if (p->plen < m->plen && path_under(m->path, p->path, p->plen) &&
		    (!best || p->plen >= best->plen))
			best = p;
	}
	return best;
}

/* The device of m's root, as stat shows it to the guest (mountinfo's
 * major:minor, which tools match with st_dev: df, findmnt, LTP statx01). */
static dev_t mount_root_dev(struct vfs *v, const struct vfs_mount *cm)
{
	struct vfs_mount *m = (struct vfs_mount *)cm; /* only the cache is written */
	unsigned long long d = atomic_load(&m->root_dev);
	struct stat st;

	if (d)
		return (dev_t)(d - 1);
	switch (m->kind) {
	case VFS_MNT_GOFER:
		if (VFS_BE(v, lstat, m->export, m->sub ? m->sub : "", &st) < 0)
			return makedev(0, (unsigned)m->idx + 30); /* as before: a stand-in */
		d = (unsigned long long)st.st_dev;
		break;
	case VFS_MNT_PROC:
		d = (unsigned long long)PROCFS_DEV;
		break;
	default:
		d = (unsigned long long)v->synth_dev;
		break;
	}
	atomic_store(&m->root_dev, d + 1);
	return (dev_t)d;
}

int vfs_fd_mnt_id(struct vfs *v, struct task *t, int hostfd)
{
	cleanup_free struct vfs_node *n = xmalloc(sizeof *n);

	if (vfs_host_fd_node(v, t, hostfd, n) < 0 || !n->mnt)
		return -1;
	return n->mnt->pos + 21;
}

long vfs_kernel_names(struct vfs *v, struct vfs_kname **out)
{
	size_t n = v->nmnts, k = 0, strs = 0;

	*out = NULL;
	for (size_t i = 0; i < n; i++)
		if (v->mnts[i].kind == VFS_MNT_GOFER && v->mnts[i].export >= 0)
			strs += 2 * (v->mnts[i].slen + 24);
	struct vfs_kname *e = malloc(2 * n * sizeof *e + strs + 1);
	if (!e)
		return -ENOMEM;
	char *s = (char *)(e + 2 * n);
	for (size_t i = 0; i < n; i++) {
		const struct vfs_mount *m = &v->mnts[i];
		if (m->kind != VFS_MNT_GOFER || m->export < 0 || m->gone)
			continue;
		for (int det = 0; det <= m->cow; det++) {
			/* "/<export>[/<sub>]"; a cow export's detached clone:
			 * "[/<sub>]" with the overlay's device */
			int l = det ? sprintf(s, "%s%s", m->sub ? "/" : "", m->sub ? m->sub : "")
				    : sprintf(s, "/%d%s%s", m->export, m->sub ? "/" : "", m->sub ? m->sub : "");
			e[k] = (struct vfs_kname){ .kp = s, .kl = (size_t)l, .gp = m->plen ? m->path : "",
						   .gl = m->plen, .dev = det ? mount_root_dev(v, m) : 0 };
			s += l + 1;
			k++;
		}
	}
	*out = e;
	return (long)k;
}

long vfs_render_mounts(struct vfs *v, char *buf, size_t len, int mountinfo)
{
	size_t off = 0, n = v->nmnts, root = n;

	/* "/" first, then the rest in the order they were mounted */
	for (size_t i = 0; i < n; i++)
		if (v->mnts[i].plen == 0 && !v->mnts[i].gone && v->mnts[i].kind != VFS_MNT_SYMLINK &&
		    (root == n || !v->mnts[i].guest))
			root = root == n ? i : root;
	for (size_t k = 0; k <= n; k++) {
		size_t i = k == 0 ? root : k - 1;
		if (i >= n || (k > 0 && i == root))
			continue;
		const struct vfs_mount *m = &v->mnts[i];
		const char *type, *opt;
		char line[4 * PATH_MAX + 512], mp[PATH_MAX * 2], src[160];
		int l;

		if (m->gone)
			continue;
		switch (m->kind) {
		case VFS_MNT_GOFER:
			type = m->dev ? "devtmpfs" : m->private_fs ? "tmpfs" : "moatfs";
			opt = m->writable || m->dev ? "rw,nosuid" : "ro,nosuid";
			if (!m->dev)
				opt = m->writable ? "rw,nosuid,nodev" : "ro,nosuid,nodev";
			break;
		case VFS_MNT_PROC:
			type = "proc"; opt = "rw,nosuid,nodev,noexec";
			if (vfs_proc_dir_mount(m)) {
				type = "sysfs"; opt = "ro,nosuid,nodev,noexec";
			}
			break;
		case VFS_MNT_SYNTH:
			type = "tmpfs"; opt = "ro,nosuid,nodev";
			break;
		default:
			continue;
		}
		mangle(mp, sizeof mp, m->path);
		mangle(src, sizeof src, m->kind == VFS_MNT_PROC && vfs_proc_dir_mount(m) ? "sysfs" : m->src); /* a guest's mount(2) names it */
		if (mountinfo) {
			const struct vfs_mount *p = mount_parent(v, m);
			char mroot[PATH_MAX * 2] = "/";
			if (m->sub)
				mangle(mroot + 1, sizeof mroot - 1, m->sub);
			dev_t rd = mount_root_dev(v, m);
			l = snprintf(line, sizeof line, "%d %d %u:%u %s %s %s%s - %s %s %s\n",
				     m->pos + 21, p ? p->pos + 21 : m->pos + 21, major(rd), minor(rd), mroot, mp,
				     opt, m->kind == VFS_MNT_GOFER ? ",relatime" : "",
				     type, src, strncmp(opt, "ro", 2) ? "rw" : "ro");
		} else {
			l = snprintf(line, sizeof line, "%s %s %s %s%s 0 0\n", src, mp, type, opt,
				     m->kind == VFS_MNT_GOFER ? ",relatime" : "");
		}
		if (l < 0 || (size_t)l >= sizeof line)
			continue;
		if (buf && off + (size_t)l <= len)
			memcpy(buf + off, line, (size_t)l);
		off += (size_t)l;
		if (m->kind == VFS_MNT_PROC && vfs_proc_dir_mount(m)) {
			/* /sys/fs/cgroup of the synthetic /sys (fs/procfs.c): the
			 * cgroup2 mount container runtimes (the JVM) look for; its
			 * parent is that /sys, its id one no table position takes
			 * (before: parent 1, no mount's id, and findmnt showed it as
			 * a second root; its id nmnts + 1 was a position's too) */
			if (mountinfo)
				l = snprintf(line, sizeof line, "%zu %d 0:%zu / %s/fs/cgroup ro,nosuid,nodev,noexec"
					     " - cgroup2 cgroup2 ro,nosuid,nodev,noexec\n", (size_t)v->mcap + 21,
					     m->pos + 21, v->nmnts + 30, m->path);
			else
				l = snprintf(line, sizeof line, "cgroup2 %s/fs/cgroup cgroup2 ro,nosuid,nodev,noexec 0 0\n",
					     m->path);
			if (l < 0)
				continue;
			if (buf && off + (size_t)l <= len)
				memcpy(buf + off, line, (size_t)l);
			off += (size_t)l;
		}
	}
	return (long)off;
}

/* ---- exec helpers ---- */

int vfs_open_exec(struct task *t, int dirfd, const char *path, int atflags,
		  int *fd, struct stat *st, char *canon, size_t canonlen, int *unreadable)
{
	return vfs_open_exec_id(t, dirfd, path, atflags, fd, st, canon, canonlen, unreadable, NULL);
}

int vfs_open_exec_id(struct task *t, int dirfd, const char *path, int atflags, int *fd,
		     struct stat *st, char *canon, size_t canonlen, int *unreadable, int *host_id)
{
	struct vfs *v = t->sb->vfs;
	struct vfs_node *n = xmalloc(sizeof *n);
	unsigned wf = 0;
	int r, mfd = -1, noread = 0;

	if (host_id)
		*host_id = 0;
	if (atflags & AT_SYMLINK_NOFOLLOW)
		wf |= WALK_NOFOLLOW;
	if (atflags & AT_EMPTY_PATH)
		wf |= WALK_EMPTY_PATH;
	r = vfs_walk(v, t, dirfd, path, wf, n);
	if (r < 0)
		goto out;
	/* /proc/self/fd/N: the file the fd has open, as Linux (before: ELOOP
	 * for every such exec; a FIFO's is EACCES below) */
	if (!(atflags & AT_SYMLINK_NOFOLLOW)) {
		r = vfs_follow_magic(v, t, n, &mfd);
		if (r < 0)
			goto out;
	}
	if (S_ISLNK(n->st.st_mode)) {
		r = -ELOOP;
		goto out;
	}
	if (!S_ISREG(n->st.st_mode) || n->kind == VN_PROC || n->kind == VN_SYNTH ||
	    vfs_node_vdev(v, n)) {
		r = -EACCES; /* a device node the guest made too: not a regular file */
		goto out;
	}
	r = vfs_permission_node(t, n, MAY_EXEC);
	if (r < 0)
		goto out;
	/* a sealed program (mode 0711: others may run it, not read it): the
	 * loader maps it into the guest, which could then read it (Linux makes
	 * such a process non-dumpable) */
	if (vfs_sealed(t, &n->st)) {
		r = -EACCES;
		goto out;
	}
	/* runnable but not readable (a 0711 program of another user's): the
	 * loader maps it all the same, so its process must not be dumpable
	 * (red team 19: a process of the same ids read its text with
	 * process_vm_readv and /proc/<pid>/maps; Linux refuses both) */
	noread = unreadable && vfs_permission_node(t, n, MAY_READ) < 0;
	if (n->kind == VN_FD) {
		/* the guest's own file: through the link, or the dirfd */
		r = mfd >= 0 ? mfd : task_getfd(t, dirfd);
		mfd = -1;
		if (r < 0)
			goto out;
		*fd = r;
		/* the file fetched now, not the walk's: the dirfd's number
		 * may name another file since (another thread's dup2) */
		if (fstat(*fd, st) < 0) {
			r = -errno;
			close(*fd);
			goto out;
		}
		vfs_map_stat(v, st);
		r = 0;
	} else {
		/* The file may have been swapped since the walk: open it
		 * O_NONBLOCK (a FIFO must not block this, the ptrace thread)
		 * and check what was opened. */
		r = vfs_node_open(v, t, n, O_RDONLY | O_NONBLOCK, 0, fd, st);
		if (r < 0)
			goto out;
		if (fcntl(*fd, F_SETFL, 0) < 0) {
			r = -errno;
			close(*fd);
			goto out;
		}
		/* a backend file's open stats the fd it returns (the sentry's
		 * openat2+fstat, or the gofer's fstat of the fd it passes):
		 * only the owners are mapped */
		if (host_id && n->kind == VN_BACKEND)
			*host_id = 1;
	}
	/* Decided on the file that runs, not only on the walk's node (red
	 * team 73): a rename in the guest's view between the walk and this
	 * open, or another file dup2'd at the dirfd's number, put a file
	 * here the checks above never saw; a sealed one was then mapped into
	 * the guest, and one it may not read left dumpable. The checks
	 * again, on what was opened (in memory: its mode and owners). */
	if (!S_ISREG(st->st_mode) || vfs_permission(t, st, MAY_EXEC) < 0 || vfs_sealed(t, st)) {
		close(*fd); /* Linux: EACCES for anything but a regular file */
		r = -EACCES;
		goto out;
	}
	if (unreadable && vfs_permission(t, st, MAY_READ) < 0)
		noread = 1;
	if (canon && canonlen) {
		if (strlen(n->path) >= canonlen) {
			close(*fd);
			r = -ENAMETOOLONG;
			goto out;
		}
		strcpy(canon, n->path);
	}
	if (r == 0 && noread)
		*unreadable = 1;
out:
	if (mfd >= 0)
		close(mfd);
	free(n);
	return r;
}

int vfs_check_dir(struct task *t, const char *path, char *canon, size_t canonlen)
{
	struct vfs *v = t->sb->vfs;
	struct vfs_node *n = xmalloc(sizeof *n);
	int r = vfs_walk(v, t, AT_FDCWD, path, WALK_DIRECTORY, n);

	if (r == 0)
		r = vfs_permission_node(t, n, MAY_EXEC);
	if (r == 0 && canon) {
		if (strlen(n->path) >= canonlen)
			r = -ENAMETOOLONG;
		else
			strcpy(canon, n->path);
	}
	free(n);
	return r;
}

void vfs_thread_warmup(struct vfs *v)
{
	(void)conn(v);
}

void vfs_thread_release(void)
{
	gofer_disconnect(tl_conn);
	tl_conn = NULL;
}
