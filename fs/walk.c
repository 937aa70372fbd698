/* fs/walk.c - the one path walk (Linux's link_path_walk, gVisor's
 * ResolvingPath, PRoot's canonicalize).
 *
 * State: `cur`, the node reached so far (always an existing directory whose
 * path is canonical: every symlink before it already resolved), and `rem`,
 * the text still to walk. For each component:
 *   ""/"."   skip (a final "." names cur);
 *   ".."     cur becomes the lexical parent of cur's canonical path, which is
 *            its parent in the guest view (cur has no symlinks in it); never
 *            above the root ("/", or the dirfd with RESOLVE_IN_ROOT;
 *            RESOLVE_BENEATH fails with EXDEV instead). Crossing a mount point
 *            upward needs nothing special: vfs_lookup() picks the mount by
 *            longest prefix of the path.
 *   name     search permission on cur, then vfs_lookup(cur/name) (dentry
 *            cache, else the backend; `rem` is passed as a hint so one gofer
 *            walk stats the following components too). A symlink met in the
 *            middle, or at the end unless WALK_NOFOLLOW (a trailing slash
 *            always follows), replaces itself in `rem` by its target: absolute
 *            targets restart at the root, relative ones at cur (the link's
 *            directory). VFS_MAXSYMLINKS (40) links per walk, then ELOOP.
 *            RESOLVE_NO_MAGICLINKS refuses /proc's magic links (fd/<n>, and
 *            <pid>/exe, cwd, root, whose text the walk follows) with ELOOP,
 *            RESOLVE_BENEATH and RESOLVE_IN_ROOT with EXDEV (nd_jump_link),
 *            RESOLVE_NO_XDEV with EXDEV when the object is on another
 *            mount than the link (magic_xdev), as an absolute symlink's
 *            restart at a root on another mount than the link's, or before
 *            the walk set its root (nd_jump_root: a relative path that
 *            walked no "..").
 *            A non-directory followed by more components is ENOTDIR.
 * Errors: ENAMETOOLONG (component > NAME_MAX, path >= PATH_MAX, a node deeper
 * than VFS_PATH_MAX), ENOENT,
 * ENOTDIR, EACCES, ELOOP, EXDEV (RESOLVE_BENEATH/NO_XDEV).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/log.h"
#include "common/util.h"
#include "fs/vfs_priv.h"
#include "kernel/task.h"

struct walk {
	struct vfs_node cur;
	struct vfs_node nx;
	char root[VFS_PATH_MAX];
	char rem[2][2 * PATH_MAX];
	char cand[VFS_PATH_MAX];
	char link[PATH_MAX];
	struct vfs_node jmp;  /* a magic link's object (nd_jump_link) */
	struct vfs_shared_scratch ss;
};

static int start_node(struct vfs *v, struct task *t, int dirfd, const char *path,
		      unsigned flags, struct walk *w)
{
	int r;

	if (path[0] == '/' && !(flags & WALK_IN_ROOT)) {
		/* the task's root (chroot), or the sandbox's */
		r = vfs_lookup(v, t, w->root, NULL, 0, &w->cur);
		return r == 0 && !w->cur.exists ? -ENOENT : r;
	}
	if (dirfd == AT_FDCWD)
		return vfs_cwd_node(v, t, &w->cur);
	/* the guest's dirfd: keep the sentry's copy while the walk runs
	 * when it is the directory its path names in a host-file mount (a
	 * first look-up of a name directly in it: vfs_direct_absent_at) */
	int hfd = -1;
	r = vfs_fd_node(v, t, dirfd, &w->cur, &hfd);
	if (r == 0 && hfd >= 0 && w->cur.kind == VN_BACKEND && !w->cur.opath && w->cur.exists &&
	    S_ISDIR(w->cur.st.st_mode) && w->cur.mnt && w->cur.mnt->kind == VFS_MNT_GOFER &&
	    !w->cur.mnt->shared && strlen(w->cur.rel) < sizeof w->ss.hrel) {
		strcpy(w->ss.hrel, w->cur.rel);
		w->ss.hm = w->cur.mnt;
		w->ss.hfd = hfd;
	} else if (hfd >= 0) {
		close(hfd);
	}
	return r;
}

static void finish(struct walk *w, const char *path, int dot, struct vfs_node *out)
{
	size_t l = strlen(path);

	vfs_node_copy(out, &w->cur);
	out->pst = w->cur.st;
	out->trailing_slash = l && path[l - 1] == '/';
	out->last_dot = dot;
}

static void node_copy(struct vfs_node *dst, const struct vfs_node *src)
{
	vfs_node_copy(dst, src);
}

/* A walk ending at "." or ".." (or at its start, an empty path) for a
 * stat-like call (WALK_FRESH) re-looks that directory up fresh, as a final
 * name is: its node was looked up as an inner component, from the cache, and
 * a writable exclusive mount's cached directory misses what the guest changed
 * since (mkdir x/y: stat x said nlink 3, stat x/. and x/y/.. the cached 2;
 * find -printf %n, rsync's tree of a bind). */
static void refresh_last(struct vfs *v, struct task *t, struct walk *w, unsigned flags)
{
	if (!(flags & WALK_FRESH) || w->cur.kind != VN_BACKEND || !w->cur.mnt ||
	    !w->cur.mnt->writable || w->cur.mnt->shared)
		return;
	/* (a failed look-up keeps the node the walk holds) */
	if (vfs_lookup(v, t, w->cur.path, NULL, WALK_FRESH, &w->nx) == 0 && w->nx.exists &&
	    w->nx.kind == VN_BACKEND && w->nx.st.st_dev == w->cur.st.st_dev &&
	    w->nx.st.st_ino == w->cur.st.st_ino)
		node_copy(&w->cur, &w->nx);
}

/* One struct walk (~170 KiB) kept per thread: malloc'd and freed per walk it
 * sat above the heap's top and its free trimmed the heap again, two brk calls
 * (the shrink a cross-CPU TLB flush) per trapped stat or open. A nested walk
 * (a look-up inside a walk) takes a fresh one. Freed when the thread ends. */
static pthread_key_t walk_key;
static pthread_once_t walk_once = PTHREAD_ONCE_INIT;

/* The same for one result node (~33 KiB), taken by the hot stat path
 * (vfs_node_take): its malloc and free went to the sentry's one malloc
 * arena (M_ARENA_MAX 1, sentry/run.c) on every trapped stat, and with
 * stats served on two CPUs at once the arena's lock was contended (futex
 * waits and wakes: issue 6). */
static pthread_key_t node_key;

static void walk_key_make(void)
{
	if (pthread_key_create(&walk_key, free) != 0 || pthread_key_create(&node_key, free) != 0)
		die("pthread_key_create");
}

struct vfs_node *vfs_node_take(void)
{
	pthread_once(&walk_once, walk_key_make);
	struct vfs_node *n = pthread_getspecific(node_key);
	if (!n)
		return xmalloc(sizeof *n);
	pthread_setspecific(node_key, NULL);
	return n;
}

void vfs_node_give(struct vfs_node *n)
{
	if (n && (pthread_getspecific(node_key) || pthread_setspecific(node_key, n) != 0))
		free(n);
}

static struct walk *walk_take(void)
{
	struct walk *w;

	pthread_once(&walk_once, walk_key_make);
	w = pthread_getspecific(walk_key);
	if (!w)
		return xmalloc(sizeof *w);
	pthread_setspecific(walk_key, NULL);
	return w;
}

void vfs_walk_release(void)
{
	pthread_once(&walk_once, walk_key_make);
	struct walk *w = pthread_getspecific(walk_key);
	if (!w)
		return;
	/* Its pages, not the allocation: a free() of the mmap'd chunk would
	 * raise malloc's mmap threshold past it, and every later walk
	 * scratch (a worker's) would come from the heap, whose freed middle
	 * is never given back (measured: +35 KiB of [heap] for 32 KiB of
	 * anonymous memory saved). The contents are scratch, written before
	 * they are read (a walk takes the memory uninitialized): zero pages
	 * do as well. */
	uintptr_t pg = 4096, lo = ((uintptr_t)w + pg - 1) & ~(pg - 1),
		  hi = ((uintptr_t)w + sizeof *w) & ~(pg - 1);
	if (hi > lo)
		(void)madvise((void *)lo, hi - lo, MADV_DONTNEED);
}

static void walk_give(struct walk *w)
{
	if (pthread_getspecific(walk_key) || pthread_setspecific(walk_key, w) != 0)
		free(w);
}

/* Linux's may_follow_link (fs.protected_symlinks = 1, as every major
 * distribution sets it; the host's value is not the guest's): a symlink in a
 * sticky, world-writable directory is followed only by its owner or when its
 * owner is the directory's. Red team 39: the kernel never sees the guest's
 * walks, so a process that dropped root planted /tmp/x -> a root file and
 * root's `echo > /tmp/x` wrote through it. No capability passes (as Linux).
 * Ids and modes as the guest sees them (vfs_view_stat). */
/* RESOLVE_NO_XDEV at a magic link w->nx (Linux's nd_jump_link): -EXDEV
 * unless the object it jumps to is on the link's own mount (an fd of a
 * /proc file). The object's mount is the one its path (the link's text,
 * under the task's root) lies in; an object with no path (a pipe, a
 * socket, an anonymous inode) is on none of ours: -EXDEV. */
static int magic_xdev(struct vfs *v, struct task *t, struct walk *w)
{
	long l = vfs_node_readlink(v, t, &w->nx, w->link, sizeof w->link - 1);
	if (l < 0)
		return (int)l;
	w->link[l] = 0;
	if (w->link[0] != '/')
		return -EXDEV;
	size_t rl = strcmp(w->root, "/") ? strlen(w->root) : 0;
	if (rl + (size_t)l >= sizeof w->cand)
		return -EXDEV;
	memcpy(w->cand, w->root, rl);
	memcpy(w->cand + rl, w->link, (size_t)l + 1);
	return vfs_mount_for(v, w->cand) == w->nx.mnt ? 0 : -EXDEV;
}

static int may_follow_link(struct vfs *v, struct task *t, const struct vfs_node *dir,
			   const struct vfs_node *link)
{
	struct stat ds, ls;

	/* (the view changes owners and set-id bits, never these: the common
	 * case costs no look-up) */
	if ((dir->st.st_mode & (S_ISVTX | S_IWOTH)) != (S_ISVTX | S_IWOTH))
		return 0;
	ds = dir->st;
	vfs_view_stat(v, &ds);
	ls = link->st;
	vfs_view_stat(v, &ls);
	if (ls.st_uid == t->cred.fsuid || ls.st_uid == ds.st_uid)
		return 0;
	return -EACCES;
}

int vfs_walk(struct vfs *v, struct task *t, int dirfd, const char *path,
	     unsigned flags, struct vfs_node *out)
{
	size_t plen = strlen(path);
	int nlinks = 0, which = 0, r;
	/* Linux's nd->root is set: an absolute path, RESOLVE_IN_ROOT, or a
	 * ".." walked (nd_jump_root under RESOLVE_NO_XDEV, below) */
	int root_set = path[0] == '/' || (flags & WALK_IN_ROOT);
	struct walk *w;
	const char *p;

	if (plen >= PATH_MAX)
		return -ENAMETOOLONG;
	if (!plen && !(flags & WALK_EMPTY_PATH))
		return -ENOENT;
	if (path[0] == '/' && (flags & WALK_BENEATH))
		return -EXDEV;
	w = walk_take();
	struct vfs_shared_scratch *prev = vfs_scratch_begin(&w->ss);
	if (flags & WALK_CANON)
		strcpy(w->root, "/");
	else {
		vfs_root_refresh(v, t); /* a root renamed since: its name now */
		task_root(t, w->root, sizeof w->root);
	}
	r = start_node(v, t, dirfd, path, flags, w);
	if (r < 0)
		goto out;
	if (!plen) {
		finish(w, path, 0, out);
		goto out;
	}
	if (w->cur.kind == VN_FD || !S_ISDIR(w->cur.st.st_mode)) {
		/* a directory the VFS cannot name has been removed: Linux's
		 * lookups in a dead directory are ENOENT */
		r = w->cur.kind == VN_FD && S_ISDIR(w->cur.st.st_mode) ? -ENOENT : -ENOTDIR;
		goto out;
	}
	if (flags & (WALK_BENEATH | WALK_IN_ROOT))
		strcpy(w->root, w->cur.path);
	memcpy(w->rem[0], path, plen + 1);
	p = w->rem[0];

	for (;;) {
		while (*p == '/')
			p++;
		if (!*p) {
			finish(w, path, 0, out);
			goto out;
		}
		const char *e = strchrnul(p, '/');
		size_t cl = e - p;
		const char *q = e;
		while (*q == '/')
			q++;
		int last = !*q;
		int slash = last && *e == '/';

		if (cl > NAME_MAX) {
			r = -ENAMETOOLONG;
			goto out;
		}
		if (!S_ISDIR(w->cur.st.st_mode)) {
			r = -ENOTDIR;
			goto out;
		}
		r = vfs_permission_node(t, &w->cur, MAY_EXEC);
		if (r < 0)
			goto out;

		if (cl == 1 && p[0] == '.') {
			if (last) {
				refresh_last(v, t, w, flags);
				finish(w, path, 1, out);
				goto out;
			}
			p = e;
			continue;
		}
		if (cl == 2 && p[0] == '.' && p[1] == '.') {
			root_set = 1;
			if (!strcmp(w->cur.path, w->root)) {
				if (flags & WALK_BENEATH) {
					r = -EXDEV;
					goto out;
				}
			} else {
				char parent[VFS_PATH_MAX];
				strcpy(parent, w->cur.path);
				char *s = strrchr(parent, '/');
				if (s == parent)
					s[1] = 0;
				else
					*s = 0;
				const struct vfs_mount *from = w->cur.mnt;
				r = vfs_lookup(v, t, parent, NULL, 0, &w->nx);
				if (r == 0 && !w->nx.exists)
					r = -ENOENT;
				if (r < 0)
					goto out;
				if ((flags & WALK_NO_XDEV) && w->nx.mnt != from) {
					r = -EXDEV;
					goto out;
				}
				node_copy(&w->cur, &w->nx);
			}
			if (last) {
				refresh_last(v, t, w, flags);
				finish(w, path, 2, out);
				goto out;
			}
			p = e;
			continue;
		}

		size_t dl = strcmp(w->cur.path, "/") ? strlen(w->cur.path) : 0;
		if (dl + 1 + cl >= VFS_PATH_MAX) {
			r = -ENAMETOOLONG;
			goto out;
		}
		memcpy(w->cand, w->cur.path, dl);
		w->cand[dl] = '/';
		memcpy(w->cand + dl + 1, p, cl);
		w->cand[dl + 1 + cl] = 0;
		r = vfs_lookup(v, t, w->cand, e, last ? (flags & (WALK_FRESH | WALK_CREATE_GUESS | WALK_CREATE_EXCL)) : 0, &w->nx);
		if (r < 0)
			goto out;
		if ((flags & WALK_NO_XDEV) && w->nx.exists && w->nx.mnt != w->cur.mnt) {
			r = -EXDEV;
			goto out;
		}
		if (!w->nx.exists) {
			if (last && (flags & WALK_CREATE)) {
				node_copy(out, &w->nx);
				out->pst = w->cur.st;
				out->trailing_slash = slash;
				out->last_dot = 0;
				goto out;
			}
			r = -ENOENT;
			goto out;
		}
		if (S_ISLNK(w->nx.st.st_mode) && (!last || !(flags & WALK_NOFOLLOW) || slash)) {
			if ((flags & WALK_NO_SYMLINKS) ||
			    (w->nx.magic_text && (flags & WALK_NO_MAGICLINKS))) {
				r = -ELOOP;
				goto out;
			}
			/* Linux's nd_jump_link: a magic link (fd/<n>, and
			 * exe, cwd, root, ns/<x>, whose text the walk follows)
			 * is no jump a scoped look-up may take: EXDEV under
			 * RESOLVE_BENEATH or RESOLVE_IN_ROOT, after the ELOOP
			 * of RESOLVE_NO_MAGICLINKS (red team 46: followed, so a
			 * program confining a look-up beneath a directory
			 * holding /proc, as runc and libpathrs do, opened the
			 * object of any fd, the process's root or cwd) */
			if ((w->nx.magic || w->nx.magic_text) && !(flags & WALK_NO_MAGICLINKS) &&
			    (flags & (WALK_BENEATH | WALK_IN_ROOT))) {
				r = -EXDEV;
				goto out;
			}
			/* and under RESOLVE_NO_XDEV a jump to an object on
			 * another mount than the link's (red team 48: followed,
			 * openat2(/proc/self/fd, "N", NO_XDEV) opened fd N's
			 * file on any mount) */
			if ((w->nx.magic || w->nx.magic_text) && !(flags & WALK_NO_MAGICLINKS) &&
			    (flags & WALK_NO_XDEV)) {
				r = magic_xdev(v, t, w);
				if (r < 0)
					goto out;
			}
			r = may_follow_link(v, t, &w->cur, &w->nx);
			if (r < 0)
				goto out;
			if (w->nx.magic) {
				if (flags & WALK_NO_MAGICLINKS) {
					r = -ELOOP;
					goto out;
				}
				if (last) {
					/* opened/stat'ed through procfs_open_magic */
					node_copy(out, &w->nx);
					out->pst = w->cur.st;
					out->trailing_slash = slash;
					out->last_dot = 0;
					goto out;
				}
			}
			if (++nlinks > VFS_MAXSYMLINKS) {
				r = -ELOOP;
				goto out;
			}
			/* nd_jump_link: the walk goes on from the object a
			 * magic link names (fd/<n> of a directory), not from
			 * the root down its name, so N's ancestors want no
			 * search permission (red team 43: a directory held
			 * from before a drop, under root's 0700, was EACCES
			 * through /proc/self/fd/N/NAME). The object comes from
			 * procfs_open_magic (its checks: the fd's owner, ptrace
			 * access) and is named by the VFS (vfs_host_fd_node):
			 * what follows is looked up by that guest path, as
			 * any walk. A link whose object is no named directory
			 * (a removed one, the guest procfs's own) keeps the
			 * text walk below. */
			if (w->nx.magic) {
				node_copy(&w->jmp, &w->nx);
				if (vfs_follow_magic(v, t, &w->jmp, NULL) > 0 && w->jmp.kind != VN_FD &&
				    w->jmp.exists && S_ISDIR(w->jmp.st.st_mode)) {
					if ((flags & WALK_NO_XDEV) && w->jmp.mnt != w->cur.mnt) {
						r = -EXDEV;
						goto out;
					}
					node_copy(&w->cur, &w->jmp);
					p = e;
					continue;
				}
			}
			long l = vfs_node_readlink(v, t, &w->nx, w->link, sizeof w->link - 1);
			if (l < 0) {
				r = (int)l;
				goto out;
			}
			if (l == 0) {
				r = -ENOENT;
				goto out;
			}
			w->link[l] = 0;
			size_t rl = strlen(e);
			if (l + rl + 1 >= sizeof w->rem[0]) {
				r = -ENAMETOOLONG;
				goto out;
			}
			which ^= 1;
			memcpy(w->rem[which], w->link, l);
			memcpy(w->rem[which] + l, e, rl + 1);
			p = w->rem[which];
			if (w->link[0] == '/') {
				if (flags & WALK_BENEATH) {
					r = -EXDEV;
					goto out;
				}
				int jump = w->nx.magic || w->nx.magic_text; /* magic_xdev's */
				r = vfs_lookup(v, t, w->root, NULL, 0, &w->nx);
				if (r == 0 && !w->nx.exists)
					r = -ENOENT;
				if (r < 0)
					goto out;
				/* Linux's nd_jump_root: RESOLVE_NO_XDEV refuses an
				 * absolute link from another mount than the
				 * root's, and any while its root is not set yet
				 * (a relative path that walked no "..": the
				 * comparison is with none) (red team 48:
				 * restarted there) */
				if ((flags & WALK_NO_XDEV) && !jump && (!root_set || w->nx.mnt != w->cur.mnt)) {
					r = -EXDEV;
					goto out;
				}
				node_copy(&w->cur, &w->nx);
			}
			continue;
		}
		if (last) {
			if ((slash || (flags & WALK_DIRECTORY)) && !S_ISDIR(w->nx.st.st_mode) &&
			    !S_ISLNK(w->nx.st.st_mode)) {
				r = -ENOTDIR;
				goto out;
			}
			if ((flags & WALK_DIRECTORY) && S_ISLNK(w->nx.st.st_mode)) {
				r = -ENOTDIR;
				goto out;
			}
			node_copy(out, &w->nx);
			out->pst = w->cur.st;
			out->trailing_slash = slash;
			out->last_dot = 0;
			goto out;
		}
		if (!S_ISDIR(w->nx.st.st_mode)) {
			r = -ENOTDIR;
			goto out;
		}
		node_copy(&w->cur, &w->nx);
		p = e;
	}
out:
	if (w->ss.hfd >= 0)
		close(w->ss.hfd);
	w->ss.hfd = -1;
	vfs_scratch_end(prev);
	walk_give(w);
	return r;
}
