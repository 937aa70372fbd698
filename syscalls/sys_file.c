/* syscalls/sys_file.c - open, access, readlink and the calls that change the
 * namespace (mkdir, mknod, unlink, rmdir, rename, symlink, link, chmod,
 * chown, truncate, utime*).
 *
 * Error precedence follows Linux: the walk's errors first (ENOENT/ENOTDIR/
 * EACCES/ELOOP for the parents), then for creations EEXIST before EROFS
 * before EACCES; for removals and renames EROFS comes before a missing final
 * name (do_unlinkat takes mnt_want_write before looking the victim up).
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>
#include <utime.h>

#include "fs/procfs.h"
#include "platform/platform.h"
#include "syscalls/sys_fs.h"

#ifndef __O_TMPFILE
#define __O_TMPFILE 020000000
#endif
#define K_O_LARGEFILE 0100000

#define VALID_OPEN_FLAGS (O_ACCMODE | O_CREAT | O_EXCL | O_NOCTTY | O_TRUNC | O_APPEND | \
	O_NONBLOCK | O_DSYNC | FASYNC | O_DIRECT | K_O_LARGEFILE | O_DIRECTORY | O_NOFOLLOW | \
	O_NOATIME | O_CLOEXEC | O_SYNC | O_PATH | __O_TMPFILE)
#define VALID_RESOLVE (RESOLVE_NO_XDEV | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_SYMLINKS | \
	RESOLVE_BENEATH | RESOLVE_IN_ROOT | RESOLVE_CACHED)

/* ---- open ---- */

static int open_perm_mask(int flags)
{
	int acc = flags & O_ACCMODE;
	int mask = acc == O_RDONLY ? MAY_READ : acc == O_WRONLY ? MAY_WRITE : MAY_READ | MAY_WRITE;

	if (flags & O_TRUNC)
		mask |= MAY_WRITE;
	return mask;
}

/*
 * Opening a /proc magic link (fd/<n>, also reached through /dev/fd/<n>)
 * reopens the file on Linux: a new open file description with its own
 * offset, after the usual permission checks on the file. If the VFS can name
 * the target (a served file or directory still at its path, a synthetic
 * directory), replace the link node n by the target's node so that the
 * caller opens it afresh; *ident gets the target's (dev, ino) to check the
 * fresh open against. Otherwise (memfds, pipes, sockets, deleted files...)
 * n stays and procfs_open_magic checks and reopens the object (or hands out
 * the guest's own open file where it cannot). Returns 1 if n was replaced,
 * -ELOOP for a symlink's O_PATH fd.
 */
static int magic_target(struct sc_call *c, struct vfs_node *n, struct stat *ident)
{
	struct vfs *v = VFS_OF(c);
	cleanup_free struct vfs_node *tn = xmalloc(sizeof *tn);
	cleanup_fd int hfd = -1;

	if (procfs_open_magic(v, c->task, n->rel, O_PATH, &hfd) < 0)
		return 0;
	/* an O_PATH fd (a placeholder) names its object too: reopening it
	 * through the link opens that object, with the permission checks of
	 * an open by name (Linux: may_open on the inode) */
	if (vfs_host_fd_node(v, c->task, hfd, tn) < 0 || tn->kind == VN_FD || !tn->exists)
		return 0;
	/* a symlink's (O_PATH | O_NOFOLLOW) fd: Linux does not follow it
	 * from the magic link (ELOOP) */
	if (S_ISLNK(tn->st.st_mode))
		return -ELOOP;
	/* every other type as by its name: a FIFO's ends counted and its
	 * open blocking as one, a device through the device rules, a socket
	 * ENXIO (the O_PATH stand-in, a memfd, was handed out before) */
	*ident = tn->st;
	*n = *tn;
	vfs_node_fix_rel(n, tn);
	n->opath = 0;
	return 1;
}

int fs_id_to_host(const struct idmap *m, uint32_t id, int gid, uint32_t *out);

/*
 * A new file on a private export belongs to its creator, as in Linux: owner
 * fsuid, group fsgid (the parent's group under a set-group-ID directory). The
 * gofer creates it with its own ids, which the guest sees as guest_uid/gid:
 * other ids are given with a chown (when they map to host ids: rootless, only
 * the caller's own one does). Host files keep their owner.
 */
/* A host file made by mkdir, mknod or symlink has no fd to name it: the
 * gofer lstat's the name right after making it and replies with that stat
 * (own_made; if it found nothing, own_new looks the name up). So that what
 * it finds is what the gofer made, nothing may remove or replace a name
 * meanwhile: those calls (unlink, rmdir, rename: the only ones that can take
 * a name that exists) hold ns_lock shared, a create that will record a made
 * entry holds it alone from its gofer call to its look-up (red-team finding: a
 * thread renaming another user's 0600 file over a new symlink's name made
 * the sentry take that file for the guest's own). A link cannot take an
 * existing name. The host itself renaming files in a bind meanwhile is
 * outside the guest's reach. */
static pthread_rwlock_t ns_lock = PTHREAD_RWLOCK_INITIALIZER;

/* Will own_new record a made entry for n: a host file (every one the
 * sandbox makes, guest root's 0:0 ones too: on them guest root has Linux's
 * DAC override, LTP access01, statfs03, chmod05; and a file others may not
 * read in the system view's host directories is sealed unless the sandbox
 * made it, fs/vfs.c)? */
static int made_entry_needed(struct sc_call *c, const struct vfs_node *n)
{
	(void)c;
	return n->mnt && n->kind == VN_BACKEND && !n->mnt->private_fs;
}

/* A host file the sandbox just made (real: its stat) in the directory
 * whose stat is parent: the gofer made it as itself, never chowns it, and
 * never sets a set-id bit; the creator's fs ids (and a directory's set-gid
 * bit inherited from its parent) are virtual (fs/vmeta.c), and permission
 * checks take the file for the sandbox's own (fs/vfs.c), guest root's 0:0
 * ones too (its DAC override). */
static void own_host(struct sc_call *c, const struct stat *parent, const struct stat *real)
{
	struct task *t = c->task;

	pthread_mutex_lock(&t->lock);
	uid_t uid = t->cred.fsuid;
	gid_t gid = t->cred.fsgid;
	pthread_mutex_unlock(&t->lock);
	struct stat pview = *parent;
	vfs_view_stat(VFS_OF(c), &pview); /* a virtual set-gid directory counts */
	int sgid_dir = (pview.st_mode & S_ISGID) != 0;
	if (sgid_dir)
		gid = pview.st_gid;
	int dir_sgid = sgid_dir && S_ISDIR(real->st_mode);
	(void)vfs_meta_make(VFS_OF(c), real, uid, gid, dir_sgid ? S_ISGID : 0, dir_sgid);
}

/* A new private file in the directory whose stat is parent: the host ids
 * to chown it to (1), or 0 when the gofer's own ones are its creator's or
 * its creator's do not map to host ids */
static int private_owner(struct sc_call *c, const struct stat *parent, uint32_t *hu, uint32_t *hg)
{
	const struct idmap *m = &c->sb->idmap;
	struct task *t = c->task;

	pthread_mutex_lock(&t->lock);
	uid_t uid = t->cred.fsuid;
	gid_t gid = t->cred.fsgid;
	pthread_mutex_unlock(&t->lock);
	if (parent->st_mode & S_ISGID)
		gid = parent->st_gid;
	if (uid == m->guest_uid && gid == m->guest_gid)
		return 0;
	return fs_id_to_host(m, uid, 0, hu) == 0 && fs_id_to_host(m, gid, 1, hg) == 0;
}

/* The set-id bits a new non-directory made with mode keeps, after Linux's
 * mode_strip_sgid (fs/inode.c): S_ISGID with S_IXGRP in a set-gid directory
 * (parent: its stat) goes unless the creator is in the directory's group or
 * has CAP_FSETID (as the guest sees them; CVE-2018-13405, LTP creat09) */
static void trunc_setid(struct sc_call *c, const struct vfs_node *n, const struct stat *real);

static mode_t new_setid(struct sc_call *c, const struct stat *parent, mode_t mode)
{
	mode_t setid = mode & (S_ISUID | S_ISGID);
	struct stat pview = *parent;

	vfs_view_stat(VFS_OF(c), &pview); /* a virtual set-gid directory counts */
	if ((setid & S_ISGID) && (mode & S_IXGRP) && (pview.st_mode & S_ISGID) &&
	    !cred_capable(&c->task->cred, CRED_CAP_FSETID) && !cred_in_group(&c->task->cred, pview.st_gid))
		setid &= ~S_ISGID;
	return setid;
}

/* setid: the set-id bits the new file keeps (new_setid; 0 for a directory,
 * a symlink). On a private export the chown to its creator's ids clears
 * them, as Linux's chown does (root's too): they are given back with a
 * chmod of the object made (LTP creat08, open10, mknod05: a set-gid file
 * nobody made, or root made in another group's set-gid directory, showed
 * without its bit). */
static void own_new(struct sc_call *c, const struct vfs_node *n, const struct stat *made, mode_t setid)
{
	uint32_t hu, hg;

	if (!n->mnt || n->kind != VN_BACKEND)
		return;
	if (!n->mnt->private_fs) {
		struct stat real;
		cleanup_free struct vfs_node *nn = NULL;
		if (made)
			real = *made;
		else if (fs_walk(c, AT_FDCWD, n->path, WALK_NOFOLLOW | WALK_FRESH | WALK_CANON, &nn) == 0 && nn->exists)
			real = nn->st;
		else
			return;
		own_host(c, &n->pst, &real);
		return;
	}
	if (!private_owner(c, &n->pst, &hu, &hg))
		return;
	VFS_BE(VFS_OF(c), chown, n->mnt->export, n->rel, hu, hg);
	if (setid && made && made->st_ino && !S_ISDIR(made->st_mode) && !S_ISLNK(made->st_mode)) {
		gofer_expect_identity(made->st_dev, made->st_ino); /* the object made */
		(void)VFS_BE(VFS_OF(c), chmod, n->mnt->export, n->rel, (made->st_mode & 01777) | setid);
		gofer_expect_identity(0, 0);
	}
	vfs_invalidate(VFS_OF(c), n->mnt, n->rel, 0);
}

/* own_new of what mkdir, mknod or symlink made: the gofer's lstat of it
 * (made->st_ino 0: gone at once, or a backend without one: looked up) */
static void own_made(struct sc_call *c, const struct vfs_node *n, struct stat *made, mode_t setid)
{
	if (made->st_ino)
		vfs_map_stat(VFS_OF(c), made);
	own_new(c, n, made->st_ino ? made : NULL, setid);
}

/* openat2's RESOLVE_* as the path walk's flags */
/* do_open's own resolve bit (never the guest's: openat2 refuses unknown
 * bits first): path is a canonical guest path (open_by_handle_at) */
#define RESOLVE_MOAT_CANON (1ULL << 62)

static unsigned resolve_walk_flags(uint64_t resolve)
{
	unsigned wf = 0;
	if (resolve & RESOLVE_MOAT_CANON)
		wf |= WALK_CANON;
	if (resolve & RESOLVE_BENEATH)
		wf |= WALK_BENEATH;
	if (resolve & RESOLVE_IN_ROOT)
		wf |= WALK_IN_ROOT;
	if (resolve & RESOLVE_NO_SYMLINKS)
		wf |= WALK_NO_SYMLINKS | WALK_NO_MAGICLINKS;
	if (resolve & RESOLVE_NO_MAGICLINKS)
		wf |= WALK_NO_MAGICLINKS;
	if (resolve & RESOLVE_NO_XDEV)
		wf |= WALK_NO_XDEV;
	return wf;
}

/* O_TMPFILE: an unnamed file in the directory path names (fs/vfs.c
 * vfs_tmpfile_open; linkat names it). Linux's checks: the flags (O_TMPFILE
 * without O_CREAT, with write access), then the walk, EROFS, EACCES. */
static long open_tmpfile(struct sc_call *c, int dirfd, const char *path, int flags, mode_t mode,
			 uint64_t resolve)
{
	cleanup_free struct vfs_node *n = NULL;
	unsigned wf = WALK_DIRECTORY;
	struct stat st;
	int fd, r;

	if ((flags & (__O_TMPFILE | O_CREAT)) != __O_TMPFILE || (flags & O_ACCMODE) == O_RDONLY ||
	    (flags & O_PATH))
		return -EINVAL;
	wf |= resolve_walk_flags(resolve);
	if (flags & O_NOFOLLOW)
		wf |= WALK_NOFOLLOW;
	r = fs_walk(c, dirfd, path, wf, &n);
	if (r < 0)
		return r;
	if (n->kind != VN_BACKEND)
		return -EOPNOTSUPP;
	r = vfs_mount_write_err(n->mnt);
	if (r < 0)
		return r;
	r = vfs_permission_node(c->task, n, MAY_WRITE | MAY_EXEC);
	if (r < 0)
		return r;
	mode = mode & 07777 & ~fs_umask(c->task);
	mode_t setid = 0;
	if (vfs_node_is_host(n)) {
		setid = mode & (S_ISUID | S_ISGID);
		mode &= ~(mode_t)(S_ISUID | S_ISGID);
	}
	r = vfs_tmpfile_open(VFS_OF(c), n, flags & ~O_NOFOLLOW, mode, &fd, &st);
	if (r < 0)
		return r;
	uint32_t hu, hg;
	if (vfs_node_is_host(n))
		own_host(c, &n->st, &st); /* its creator's, as a named create's */
	else if (n->mnt->private_fs && private_owner(c, &n->st, &hu, &hg)) {
		void *ctx;
		const struct vfs_backend *be = vfs_backend(VFS_OF(c), &ctx);
		if (be->chownfd) /* as own_new's chown of a named one */
			(void)be->chownfd(ctx, n->mnt->export, fd, hu, hg);
	}
	if (setid) /* virtual on a host file, as for a named create (LTP openat03) */
		vfs_meta_update(VFS_OF(c), &st, (uid_t)-1, (gid_t)-1, setid, 1);
	return sc_return_fd(c, fd, flags & O_CLOEXEC);
}

/* A synthesised file (/proc, /sys, /etc/hostname: a sealed memfd the sentry
 * made read-write) opened O_RDONLY: the guest gets a read-only open file
 * description, as on Linux (F_GETFL says O_RDONLY; Chromium checks it on a
 * /proc fd it passes to a renderer). The memfd is installed, reopened
 * read-only through the guest procfs (the kernel checks the reopen) and the
 * read-only description replaces it at the same number. The sealed memfd
 * is never writable, so a thread that sees the first one gains nothing.
 * acc O_ACCMODE (3: neither FMODE_READ nor FMODE_WRITE) for an O_PATH
 * open's stand-in (ADDFD refuses a real O_PATH file): read, write,
 * readahead, splice, sendfile on it are EBADF as on an O_PATH fd. */
static long return_reopened(struct sc_call *c, int fd, int flags, int acc)
{
	int cloexec = flags & O_CLOEXEC;
	struct stat st, rst;
	char p[64];
	int fl = fcntl(fd, F_GETFL);
	int gfd, ro;

	if (fl < 0 || (fl & O_ACCMODE) != O_RDWR || c->sb->guest_procfd < 0 ||
	    fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return sc_return_fd(c, fd, cloexec);
	gfd = unotify_addfd(c->notify_fd, c->id, fd, cloexec ? O_CLOEXEC : 0, -1, 0);
	close(fd);
	if (gfd < 0)
		return gfd == -ENOENT ? -EINTR : gfd; /* (the caller went away) */
	snprintf(p, sizeof p, "%d/task/%d/fd/%d", (int)c->task->vtgid, (int)c->task->vtid, gfd);
	/* The number is the guest's: another thread may have put any file of
	 * its own there since the install (a FIFO without a writer, a tty).
	 * O_NONBLOCK and O_NOCTTY, so that no open of it can block this worker
	 * or give the sentry a controlling terminal (red team round 10: a FIFO
	 * dup2()ed there held the worker in fifo_open for good, the guest's
	 * open never returned and moat ignored SIGTERM); only the file it
	 * installed is taken, and its O_NONBLOCK set as the guest asked. */
	ro = openat(c->sb->guest_procfd, p, acc | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (ro < 0)
		return gfd; /* keeps the read-write one (sealed: no write succeeds) */
	if (fstat(ro, &rst) == 0 && rst.st_dev == st.st_dev && rst.st_ino == st.st_ino &&
	    ((flags & O_NONBLOCK) || fcntl(ro, F_SETFL, 0) == 0))
		unotify_addfd(c->notify_fd, c->id, ro, cloexec ? O_CLOEXEC : 0, gfd, 0);
	close(ro);
	return gfd;
}

/* Linux's may_create_in_sticky (fs.protected_regular = 1 and
 * fs.protected_fifos = 1, as systemd sets them; the host's values are not
 * the guest's): an O_CREAT open of an existing regular file or FIFO in a
 * sticky, world-writable directory is EACCES unless the caller or the
 * directory's owner owns it. Red team 39: the kernel never sees the guest's
 * opens, so a process that dropped root made /tmp/NAME before root's
 * `echo secret > /tmp/NAME` and read what root wrote. Ids and modes as the
 * guest sees them. */
static int may_create_in_sticky(struct vfs *v, struct task *t, const struct vfs_node *n)
{
	struct stat ds, fs;

	/* (the view changes owners and set-id bits, never these) */
	if ((n->pst.st_mode & (S_ISVTX | S_IWOTH)) != (S_ISVTX | S_IWOTH))
		return 0;
	ds = n->pst;
	vfs_view_stat(v, &ds);
	fs = n->st;
	vfs_view_stat(v, &fs);
	if (!S_ISREG(fs.st_mode) && !S_ISFIFO(fs.st_mode))
		return 0;
	if (fs.st_uid == ds.st_uid || fs.st_uid == t->cred.fsuid)
		return 0;
	return -EACCES;
}

static long do_open(struct sc_call *c, int dirfd, const char *path, int flags, mode_t mode,
		    uint64_t resolve)
{
	struct vfs *v = VFS_OF(c);
	struct task *t = c->task;
	cleanup_free struct vfs_node *n = NULL;
	unsigned wf = 0;
	struct stat st;
	int fd = -1, r;

	flags &= ~K_O_LARGEFILE;
	if (flags & (__O_TMPFILE & ~O_DIRECTORY))
		return open_tmpfile(c, dirfd, path, flags, mode, resolve);
	if (flags & O_PATH)
		flags &= O_PATH | O_CLOEXEC | O_DIRECTORY | O_NOFOLLOW;
	if ((flags & (O_CREAT | O_DIRECTORY)) == (O_CREAT | O_DIRECTORY))
		return -EINVAL;
	if (flags & O_NOFOLLOW)
		wf |= WALK_NOFOLLOW;
	if (flags & O_CREAT) {
		wf |= WALK_CREATE | WALK_CREATE_GUESS;
		if (flags & O_EXCL)
			wf |= WALK_NOFOLLOW | WALK_CREATE_EXCL;
	}
	if (flags & O_DIRECTORY)
		wf |= WALK_DIRECTORY;
	wf |= resolve_walk_flags(resolve);

	int tries = 0;
again:
	free(n);
	n = NULL;
	r = fs_walk(c, dirfd, path, wf, &n);
	if (r < 0)
		return r;
	struct stat ident = { 0 };
	int reopen = n->exists && n->magic && S_ISLNK(n->st.st_mode) &&
		     !(flags & (O_NOFOLLOW | O_PATH)) ? magic_target(c, n, &ident) : 0;
	if (reopen < 0)
		return reopen;

	if (!n->exists) {
		/* create: EISDIR for "name/", then EROFS, then EACCES */
		if (n->trailing_slash)
			return -EISDIR;
		if (n->kind == VN_PROC)
			return vfs_proc_create_err(n->mnt);
		r = vfs_mount_write_err(n->mnt);
		if (r == 0)
			r = vfs_permission_parent(t, n, MAY_WRITE | MAY_EXEC);
		if (r < 0 && (wf & WALK_CREATE_GUESS) && n->kind == VN_BACKEND) {
			/* perhaps a guess (WALK_CREATE_GUESS): an existing name
			 * would not be refused so (Linux: EEXIST, or the file
			 * opened): look it up for real */
			wf = (wf & ~WALK_CREATE_GUESS) | WALK_FRESH;
			goto again;
		}
		if (r < 0)
			return r;
		mode = mode & 07777 & ~fs_umask(t);
		/* the name was absent: the gofer must create it (O_EXCL), never
		 * open a file that took the name since the walk, unchecked */
		r = vfs_node_open(v, t, n, flags | (n->kind == VN_BACKEND ? O_EXCL : 0), mode, &fd, &st);
		if (r == -ESTALE && n->kind == VN_BACKEND) {
			/* the directory checked is not the one the name is
			 * in any more (swapped): walk and check again */
			if (++tries >= 16)
				return -ENOENT;
			vfs_invalidate(v, n->mnt, n->rel, 0);
			wf = (wf & ~WALK_CREATE_GUESS) | WALK_FRESH;
			goto again;
		}
		if (r == -EEXIST && !(flags & O_EXCL) && n->kind == VN_BACKEND && ++tries < 16) {
			vfs_invalidate(v, n->mnt, n->rel, 0);
			wf = (wf & ~WALK_CREATE_GUESS) | WALK_FRESH;
			goto again; /* made meanwhile (or a guess): open what is there now, checked */
		}
		if (r < 0)
			return r;
		if (n->kind != VN_BACKEND) /* a backend create was cached by vfs_node_open */
			vfs_refresh(v, n->mnt, n->rel, &st);
		mode_t setid = new_setid(c, &n->pst, mode);
		own_new(c, n, &st, setid);
		if (vfs_node_is_host(n) && setid)
			/* the gofer creates host files without them: virtual */
			vfs_meta_update(v, &st, (uid_t)-1, (gid_t)-1, setid, 1);
		return sc_return_fd(c, fd, flags & O_CLOEXEC);
	}

	if ((flags & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL))
		return -EEXIST;
	int link_itself = S_ISLNK(n->st.st_mode) && (!n->magic || (flags & O_NOFOLLOW));

	if (link_itself) {
		/* only reached with O_NOFOLLOW: the link itself */
		if (!(flags & O_PATH))
			return -ELOOP;
	} else if (S_ISDIR(n->st.st_mode)) {
		if (flags & O_CREAT)
			return -EISDIR;
		if (!(flags & O_PATH) && ((flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC)))
			return -EISDIR;
	}
	if ((flags & O_CREAT) && !link_itself) {
		r = may_create_in_sticky(v, t, n);
		if (r < 0)
			return r;
	}
	/* a device node outside /dev is one the guest made (virtual) or a host
	 * one of a bind: the mounts are nodev, as Linux answers there */
	if (!(flags & O_PATH) && n->exists && n->kind == VN_BACKEND && !n->mnt->dev) {
		struct stat view = n->st;
		vfs_view_stat(v, &view);
		if (S_ISCHR(view.st_mode) || S_ISBLK(view.st_mode)) {
			/* Docker's device allowlist: the memory devices open as
			 * the sandbox's own /dev nodes, anything else EACCES */
			const char *as = NULL;
			if (S_ISCHR(view.st_mode) && major(view.st_rdev) == 1)
				switch (minor(view.st_rdev)) {
				case 3: as = "/dev/null"; break;
				case 5: as = "/dev/zero"; break;
				case 7: as = "/dev/full"; break;
				case 8: as = "/dev/random"; break;
				case 9: as = "/dev/urandom"; break;
				default: break;
				}
			if (!as || (flags & (O_DIRECTORY | O_TMPFILE)))
				return -EACCES;
			r = vfs_permission(t, &view, open_perm_mask(flags));
			if (r < 0)
				return r;
			return do_open(c, AT_FDCWD, as, flags & ~(O_CREAT | O_EXCL | O_TRUNC | O_NOFOLLOW),
				       0, RESOLVE_MOAT_CANON);
		}
	}
	if (!(flags & O_PATH)) {
		int mask = open_perm_mask(flags);
		if ((mask & MAY_WRITE) && (S_ISREG(n->st.st_mode) || S_ISDIR(n->st.st_mode))) {
			if (n->kind == VN_BACKEND && !n->mnt->writable && !n->mnt->dev)
				return -EROFS;
		}
		if (!S_ISLNK(n->st.st_mode)) {
			r = vfs_permission_node(t, n, mask);
			if (r < 0)
				return r;
		}
		/* O_NOATIME: the owner's, or CAP_FOWNER's (LTP open02) */
		if ((flags & O_NOATIME) && !cred_capable(&t->cred, CRED_CAP_FOWNER) && !vfs_owner(t, &n->st))
			return -EPERM;
		/* a program a process runs is not opened for writing (Linux's
		 * deny_write_access; the loader maps it, so the kernel does not
		 * know: LTP creat07) */
		if ((mask & MAY_WRITE) && S_ISREG(n->st.st_mode) && (n->st.st_mode & 0111) &&
		    task_text_busy(c->sb, n->st.st_dev, n->st.st_ino))
			return -ETXTBSY;
		/* a lease on the file (sys_lock.c) is broken before the open, as
		 * Linux's do_dentry_open does (so before an O_TRUNC) */
		if (S_ISREG(n->st.st_mode)) {
			r = lease_break(c, n->st.st_dev, n->st.st_ino, flags);
			if (r < 0)
				return r;
		}
	}
	int oflags = flags & ~(O_CREAT | O_EXCL);
	if (!S_ISREG(n->st.st_mode) && !n->magic)
		oflags &= ~O_TRUNC; /* (a /proc fd link: procfs_open_magic sees the file) */
	if (link_itself)
		oflags |= O_NOFOLLOW;
	if (n->kind == VN_BACKEND && n->mnt->dev && !(flags & O_PATH) &&
	    S_ISCHR(n->st.st_mode) && n->st.st_rdev == makedev(5, 0)) {
		/* /dev/tty: the caller's controlling terminal, not the gofer's */
		r = tty_open_ctty(c, oflags, &fd);
		return r < 0 ? r : sc_return_fd(c, fd, flags & O_CLOEXEC);
	}
	r = vfs_node_open(v, t, n, oflags, 0, &fd, &st);
	if (r == -ESTALE && n->kind == VN_BACKEND && ++tries < 16) {
		/* the name leads to another object than the one checked (the
		 * gofer refused it): walk and check again */
		vfs_invalidate(v, n->mnt, n->rel, 0);
		wf |= WALK_FRESH;
		goto again;
	}
	if (r == -ENOENT && (flags & O_CREAT) && n->kind == VN_BACKEND && ++tries < 16) {
		/* unlinked by someone else since the walk: O_CREAT makes it
		 * again, as Linux's open does (walk afresh, past the cache) */
		vfs_invalidate(v, n->mnt, n->rel, 0);
		wf |= WALK_FRESH;
		goto again;
	}
	if (r < 0)
		return r;
	if (reopen && n->kind == VN_BACKEND &&
	    (st.st_dev != ident.st_dev || st.st_ino != ident.st_ino)) {
		/* the path no longer names the file the fd has open */
		close(fd);
		return -ENOENT;
	}
	if ((oflags & O_TRUNC) && n->kind == VN_BACKEND) {
		vfs_invalidate(v, n->mnt, n->rel, 0);
		trunc_setid(c, n, &n->st);
	}
	if ((n->kind == VN_PROC || n->kind == VN_SYNTH) && !(flags & O_PATH) &&
	    (flags & O_ACCMODE) == O_RDONLY)
		return return_reopened(c, fd, flags, O_RDONLY);
	if (flags & O_PATH) /* a stand-in memfd (a directory's fd is O_RDONLY: kept) */
		return return_reopened(c, fd, flags, O_ACCMODE);
	/* a FIFO's ends are counted: our copy must be gone before the guest
	 * runs on (its peer's non-blocking open would see one end too many) */
	c->out_fd_close_first = S_ISFIFO(st.st_mode);
	/* a backend file (the sentry's direct open, the device pool's, the
	 * gofer's) is opened with oflags' access mode: a read-only one needs
	 * no write note, and the pipeline's F_GETFL for it is skipped */
	c->out_fd_rdonly = n->kind == VN_BACKEND && (oflags & O_ACCMODE) == O_RDONLY;
	return sc_return_fd(c, fd, flags & O_CLOEXEC);
}

/* ---- file handles: name_to_handle_at, open_by_handle_at ----
 * Emulated on the VFS (fs/vfs.c vfs_handle_*): a handle is our own, 24
 * bytes (dev sealed by a keyed permutation, ino, a tag keyed by the sandbox's
 * secret), for files of gofer
 * mounts; /proc and synthetic nodes have none (EOPNOTSUPP, as procfs) but
 * a FID (AT_HANDLE_FID: an identifier, which Linux gives for any file). An
 * open by handle finds the name the handle was made for (or the inode maps),
 * walks it from the sandbox's root and opens it only if it is still that
 * file (ESTALE otherwise): it never names a host inode the VFS cannot, and
 * opens with the checks of an open by name. CAP_DAC_READ_SEARCH (Linux's
 * rule), or euid 0: root inside has Docker's capabilities, without it, but
 * these handles are the sandbox's own. */
#define MOAT_HANDLE_TYPE 0x4d6f
#define MOAT_HANDLE_BYTES 24
#define MAX_HANDLE_SZ_ 128
#define AT_HANDLE_FID_ 0x200
#define AT_HANDLE_MNT_ID_UNIQUE_ 0x001
#define AT_HANDLE_CONNECTABLE_ 0x002
#define CAP_DAC_READ_SEARCH_ 2

struct moat_handle { uint32_t bytes; int32_t type; uint64_t dev, ino, tag; };

long sys_name_to_handle_at(struct sc_call *c)
{
	int flags = ARG_INT(c, 4);
	cleanup_free struct vfs_node *n = NULL;
	uint32_t want;
	unsigned wf = 0;
	long r;

	if (flags & ~(AT_SYMLINK_FOLLOW | AT_EMPTY_PATH | AT_HANDLE_FID_ | AT_HANDLE_MNT_ID_UNIQUE_ |
		      AT_HANDLE_CONNECTABLE_))
		return -EINVAL;
	/* a connectable handle (Linux 6.13; ours always are: an open by
	 * handle finds a name) is neither a FID nor of an fd */
	if ((flags & AT_HANDLE_CONNECTABLE_) && (flags & (AT_HANDLE_FID_ | AT_EMPTY_PATH)))
		return -EINVAL;
	if (!(flags & AT_SYMLINK_FOLLOW))
		wf |= WALK_NOFOLLOW;
	if (flags & AT_EMPTY_PATH)
		wf |= WALK_EMPTY_PATH;
	r = fs_walk(c, ARG_INT(c, 0), c->str[1], wf, &n);
	if (r < 0)
		return r;
	if (sc_read_guest(c, c->args[2], &want, sizeof want) < 0)
		return -EFAULT;
	if (want > MAX_HANDLE_SZ_)
		return -EINVAL;
	/* AT_HANDLE_FID: an identifier only, which Linux gives for any file
	 * (/proc's too); an open by it finds no name for a non-gofer one */
	if (!n->exists || (n->kind != VN_BACKEND && !(flags & AT_HANDLE_FID_)) || !n->mnt)
		return -EOPNOTSUPP;
	struct moat_handle h = { .bytes = MOAT_HANDLE_BYTES, .type = MOAT_HANDLE_TYPE,
				 .dev = vfs_handle_dev_seal(VFS_OF(c), (uint64_t)n->st.st_dev),
				 .ino = (uint64_t)n->st.st_ino };
	h.tag = vfs_handle_tag(VFS_OF(c), n->st.st_dev, n->st.st_ino);
	/* Linux's order: the mount id is written even when the handle does
	 * not fit (EOVERFLOW, with the size needed), and a fault there wins */
	if (flags & AT_HANDLE_MNT_ID_UNIQUE_) {
		uint64_t mid = (uint64_t)n->mnt->pos + 21;
		if (sc_write_guest(c, c->args[3], &mid, sizeof mid) < 0)
			return -EFAULT;
	} else {
		int mid = n->mnt->pos + 21; /* mountinfo's id (fs/vfs.c) */
		if (sc_write_guest(c, c->args[3], &mid, sizeof mid) < 0)
			return -EFAULT;
	}
	if (want < MOAT_HANDLE_BYTES) {
		uint32_t need = MOAT_HANDLE_BYTES;
		return sc_write_guest(c, c->args[2], &need, sizeof need) < 0 ? -EFAULT : -EOVERFLOW;
	}
	if (sc_write_guest(c, c->args[2], &h, sizeof h) < 0)
		return -EFAULT;
	vfs_handle_put(VFS_OF(c), n);
	return 0;
}

long sys_open_by_handle_at(struct sc_call *c)
{
	struct task *t = c->task;
	int mfd = ARG_INT(c, 0), flags = ARG_INT(c, 2);
	struct moat_handle h;
	char path[VFS_PATH_MAX];

	/* Linux's handle_to_path order: the header (EFAULT, EINVAL), the
	 * mount fd, then the capability (review 34: EPERM came first) */
	if (sc_read_guest(c, c->args[1], &h, 8) < 0)
		return -EFAULT;
	if (h.bytes > MAX_HANDLE_SZ_ || h.bytes == 0)
		return -EINVAL;
	if ((int)h.type < 0 || ((uint32_t)h.type & 0xffff0000u & ~0x30000u))
		return -EINVAL; /* FILEID_USER_FLAGS beyond CONNECTABLE|DIR */
	/* the mount the handle is decoded in: mount_fd's, or the cwd's */
	cleanup_free struct vfs_node *mn = xmalloc(sizeof *mn);
	if (mfd != AT_FDCWD) {
		int hf = -1;
		if (vfs_fd_node(VFS_OF(c), t, mfd, mn, &hf) < 0)
			return -EBADF;
		if (hf >= 0)
			close(hf);
	} else if (vfs_cwd_node(VFS_OF(c), t, mn) < 0) {
		return -ESTALE;
	}
	if (!cred_capable(&t->cred, CAP_DAC_READ_SEARCH_) && t->cred.euid != 0)
		return -EPERM;
	if (h.bytes != MOAT_HANDLE_BYTES || h.type != MOAT_HANDLE_TYPE)
		return -ESTALE;
	/* the rest of it, after the 8 bytes decided on above (each byte of
	 * guest memory read once) */
	if (sc_read_guest(c, c->args[1] + 8, (char *)&h + 8, sizeof h - 8) < 0)
		return -EFAULT;
	h.dev = vfs_handle_dev_unseal(VFS_OF(c), h.dev);
	if (h.tag != vfs_handle_tag(VFS_OF(c), (dev_t)h.dev, (ino_t)h.ino) ||
	    vfs_handle_path(VFS_OF(c), (dev_t)h.dev, (ino_t)h.ino, path, sizeof path) < 0)
		return -ESTALE;
	/* the file itself, never a link followed from it (Linux: a handle of
	 * a symlink opens only with O_PATH, else ELOOP) */
	cleanup_free struct vfs_node *n = NULL;
	long r = fs_walk(c, AT_FDCWD, path, WALK_NOFOLLOW | WALK_CANON, &n);
	if (r < 0 || !n->exists || n->st.st_dev != (dev_t)h.dev || n->st.st_ino != (ino_t)h.ino)
		return -ESTALE;
	/* another file system than the mount's: Linux cannot decode it there */
	if (mn->kind != VN_BACKEND || !mn->mnt || mn->mnt->export != n->mnt->export)
		return -ESTALE;
	return do_open(c, AT_FDCWD, path, (flags & ~O_CREAT) | O_NOFOLLOW, 0, RESOLVE_MOAT_CANON);
}

long sys_open(struct sc_call *c)
{
	return do_open(c, AT_FDCWD, c->str[0], (int)c->args[1], (mode_t)c->args[2], 0);
}

long sys_openat(struct sc_call *c)
{
	return do_open(c, ARG_INT(c, 0), c->str[1], (int)c->args[2], (mode_t)c->args[3], 0);
}

long sys_creat(struct sc_call *c)
{
	return do_open(c, AT_FDCWD, c->str[0], O_CREAT | O_WRONLY | O_TRUNC, (mode_t)c->args[1], 0);
}

long sys_openat2(struct sc_call *c)
{
	const unsigned char *how = c->buf[2];
	size_t size = c->args[3];
	struct open_how oh;

	if (size < sizeof oh)
		return -EINVAL;
	if (size > SC_STRUCT_USIZE_MAX)
		return -E2BIG; /* Linux's PAGE_SIZE bound */
	if (!how)
		return -EFAULT;
	/* the pipeline copied the first SC_BUFMAX bytes; a zero tail past
	 * them is Linux's too (a larger open_how of a newer libc: review 34) */
	for (size_t i = sizeof oh; i < size && i < SC_BUFMAX; i++)
		if (how[i])
			return -E2BIG;
	if (size > SC_BUFMAX) {
		int z = sc_guest_tail_zero(c, c->args[2] + SC_BUFMAX, size - SC_BUFMAX);
		if (z < 0)
			return z;
	}
	memcpy(&oh, how, sizeof oh);
	if (oh.flags & ~(uint64_t)VALID_OPEN_FLAGS)
		return -EINVAL;
	if (oh.resolve & ~(uint64_t)VALID_RESOLVE)
		return -EINVAL;
	if ((oh.resolve & RESOLVE_BENEATH) && (oh.resolve & RESOLVE_IN_ROOT))
		return -EINVAL;
	if ((oh.flags & (O_CREAT | __O_TMPFILE)) ? (oh.mode & ~07777ULL) : oh.mode)
		return -EINVAL;
	return do_open(c, ARG_INT(c, 0), c->str[1], (int)oh.flags, (mode_t)oh.mode, oh.resolve);
}

/* ---- access ---- */

static long do_faccessat(struct sc_call *c, int dirfd, const char *path, int mode, int flags)
{
	cleanup_free struct vfs_node *n = NULL;
	unsigned wf = 0;
	int r;

	if (mode & ~(R_OK | W_OK | X_OK))
		return -EINVAL;
	if (flags & ~(AT_EACCESS | AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH))
		return -EINVAL;
	if (flags & AT_SYMLINK_NOFOLLOW)
		wf |= WALK_NOFOLLOW;
	if (flags & AT_EMPTY_PATH)
		wf |= WALK_EMPTY_PATH;
	r = fs_walk(c, dirfd, path, wf, &n);
	if (r < 0 || mode == F_OK)
		return r;
	mode_t fmt = n->st.st_mode & S_IFMT;
	if ((mode & W_OK) && (fmt == S_IFREG || fmt == S_IFDIR || fmt == S_IFLNK) &&
	    (n->kind == VN_BACKEND || n->kind == VN_SYNTH || n->kind == VN_SYMMNT)) {
		r = vfs_mount_write_err(n->mnt);
		if (r == -EROFS)
			return r;
	}
	if ((mode & W_OK) && n->kind == VN_PROC && procfs_write_err(c->task, n->rel) == -EROFS)
		return -EROFS; /* /proc/sys, /sys: read-only */
	int mask = ((mode & R_OK) ? MAY_READ : 0) | ((mode & W_OK) ? MAY_WRITE : 0) |
		   ((mode & X_OK) ? MAY_EXEC : 0);
	if (flags & AT_EACCESS)
		return vfs_permission_node(c->task, n, mask);
	return vfs_permission_real(c->task, &n->st, mask);
}

long sys_access(struct sc_call *c)
{
	return do_faccessat(c, AT_FDCWD, c->str[0], ARG_INT(c, 1), 0);
}

long sys_faccessat(struct sc_call *c)
{
	return do_faccessat(c, ARG_INT(c, 0), c->str[1], ARG_INT(c, 2), 0);
}

long sys_faccessat2(struct sc_call *c)
{
	return do_faccessat(c, ARG_INT(c, 0), c->str[1], ARG_INT(c, 2), ARG_INT(c, 3));
}

/* ---- readlink ---- */

static long do_readlinkat(struct sc_call *c, int dirfd, const char *path, uint64_t buf, int bufsiz)
{
	cleanup_free struct vfs_node *n = NULL;
	cleanup_fd int hfd = -1;
	char tgt[PATH_MAX];
	long l;
	int r;

	if (bufsiz <= 0)
		return -EINVAL;
	if (path && !*path) {
		/* readlinkat(fd, "") on an O_PATH symlink fd; the cwd is no
		 * symlink: ENOENT, as Linux answers an empty name */
		if (dirfd == AT_FDCWD)
			return -ENOENT;
		n = xmalloc(sizeof *n);
		r = vfs_fd_node(VFS_OF(c), c->task, dirfd, n, &hfd);
		if (r < 0)
			return r;
		if (!S_ISLNK(n->st.st_mode))
			return -ENOENT;
		if (n->kind == VN_FD) {
			l = readlinkat(hfd, "", tgt, sizeof tgt);
			if (l < 0)
				return -errno;
			goto out;
		}
	} else {
		r = fs_walk(c, dirfd, path, WALK_NOFOLLOW, &n);
		if (r < 0)
			return r;
	}
	l = vfs_node_readlink(VFS_OF(c), c->task, n, tgt, sizeof tgt);
	if (l < 0)
		return l;
out:
	if (l > bufsiz)
		l = bufsiz;
	r = sc_write_guest(c, buf, tgt, l);
	return r < 0 ? r : l;
}

long sys_readlink(struct sc_call *c)
{
	return do_readlinkat(c, AT_FDCWD, c->str[0], c->args[1], ARG_INT(c, 2));
}

long sys_readlinkat(struct sc_call *c)
{
	return do_readlinkat(c, ARG_INT(c, 0), c->str[1], c->args[2], ARG_INT(c, 3));
}

/* ---- creations: mkdir, mknod, symlink ---- */

/* a new name may go in n's parent: its mount is writable, the caller may
 * write and search the directory. 0 or -errno. */
static int may_add_name(struct sc_call *c, const struct vfs_node *n)
{
	int r = vfs_mount_write_err(n->mnt);

	if (r < 0)
		return r;
	return vfs_permission_parent(c->task, n, MAY_WRITE | MAY_EXEC);
}

/* Resolve the new name of a creation. 0 with a negative node, or -errno in
 * Linux's order: parents' errors, EEXIST, ENOENT for "name/" of a
 * non-directory, EROFS, EACCES. */
static int create_lookup(struct sc_call *c, int dirfd, const char *path, int isdir,
			 struct vfs_node **n, int fresh)
{
	int r = fs_walk(c, dirfd, path, WALK_CREATE | WALK_NOFOLLOW | (fresh ? WALK_FRESH : 0), n);

	if (r < 0)
		return r;
	if ((*n)->exists)
		return -EEXIST;
	if ((*n)->trailing_slash && !isdir)
		return -ENOENT;
	if ((*n)->kind == VN_PROC)
		return vfs_proc_create_err((*n)->mnt);
	return may_add_name(c, *n);
}

/* The gofer makes, removes, renames or links a name only in the directory
 * the sentry checked (and, for an existing name, only the object checked):
 * the next request of this thread names them (-ESTALE otherwise: the name's
 * directory was swapped, RENAME_EXCHANGE in a writable export, between the
 * check and the request; the call walks and checks afresh, at most 16
 * times, then ENOENT). */
static void expect_dir(const struct vfs_node *n)
{
	if (n->kind == VN_BACKEND && n->mnt && n->mnt->kind == VFS_MNT_GOFER)
		gofer_expect_parent(n->pst.st_dev, n->pst.st_ino);
}

#define RETRY_STALE(call) ({ long r_; int tries_ = 0; \
	while ((r_ = (call)) == -ESTALE && ++tries_ < 16) \
		; \
	r_ == -ESTALE ? -ENOENT : r_; })

static long mkdirat_once(struct sc_call *c, int dirfd, const char *path, mode_t mode, int fresh)
{
	cleanup_free struct vfs_node *n = NULL;
	int r = create_lookup(c, dirfd, path, 1, &n, fresh);

	if (r < 0)
		return r;
	mode = mode & (07777 & ~(S_ISUID | S_ISGID)) & ~fs_umask(c->task);
	int excl = made_entry_needed(c, n);
	if (excl)
		pthread_rwlock_wrlock(&ns_lock);
	struct stat made = { 0 };
	/* what was cached beneath the name goes first; the gofer's lstat of
	 * the new directory is then cached (vfs_made_dir): the next create
	 * in it needs no gofer walk of it (git's objects/XX, tar's, cp -r's
	 * directories) */
	vfs_drop_beneath(VFS_OF(c), n->mnt, n->rel);
	unsigned long gen0 = vfs_cache_gen(VFS_OF(c));
	expect_dir(n);
	r = VFS_BE(VFS_OF(c), mkdir, n->mnt->export, n->rel, mode, &made);
	gofer_expect_clear();
	if (r == 0 && made.st_ino && S_ISDIR(made.st_mode))
		vfs_made_dir(VFS_OF(c), n->mnt, n->rel, &made, gen0);
	else
		vfs_invalidate(VFS_OF(c), n->mnt, n->rel, 1);
	if (r == 0)
		own_made(c, n, &made, 0);
	if (excl)
		pthread_rwlock_unlock(&ns_lock);
	return r;
}

static long do_mkdirat(struct sc_call *c, int dirfd, const char *path, mode_t mode)
{
	int fresh = 0;

	return RETRY_STALE(mkdirat_once(c, dirfd, path, mode, fresh++));
}

long sys_mkdir(struct sc_call *c)
{
	return do_mkdirat(c, AT_FDCWD, c->str[0], (mode_t)c->args[1]);
}

long sys_mkdirat(struct sc_call *c)
{
	return do_mkdirat(c, ARG_INT(c, 0), c->str[1], (mode_t)c->args[2]);
}

static long do_mknodat(struct sc_call *c, int dirfd, const char *path, mode_t mode, dev_t dev);

long fs_mknodat(struct sc_call *c, int dirfd, const char *path, mode_t mode)
{
	return do_mknodat(c, dirfd, path, mode, 0);
}

static long mknodat_once(struct sc_call *c, int dirfd, const char *path, mode_t mode, dev_t dev,
			 int fresh);

static long do_mknodat(struct sc_call *c, int dirfd, const char *path, mode_t mode, dev_t dev)
{
	int fresh = 0;

	return RETRY_STALE(mknodat_once(c, dirfd, path, mode, dev, fresh++));
}

static long mknodat_once(struct sc_call *c, int dirfd, const char *path, mode_t mode, dev_t dev,
			 int fresh)
{
	cleanup_free struct vfs_node *n = NULL;
	mode_t fmt = mode & S_IFMT;
	int r;

	if (fmt == 0)
		mode |= fmt = S_IFREG;
	if (fmt != S_IFREG && fmt != S_IFCHR && fmt != S_IFBLK && fmt != S_IFIFO && fmt != S_IFSOCK)
		return -EINVAL;
	r = create_lookup(c, dirfd, path, 0, &n, fresh);
	if (r < 0)
		return r;
	/* a device node (CAP_MKNOD, which root inside has, as in Docker) is
	 * virtual: an empty regular host file whose type and device number
	 * the guest sees (vfs_meta_set_dev); it never opens a device (the
	 * mounts are nodev: EACCES, do_open) */
	int vdev = fmt == S_IFCHR || fmt == S_IFBLK;
	if (vdev && !cred_capable(&c->task->cred, CRED_CAP_MKNOD))
		return -EPERM;
	if (vdev && n->kind == VN_BACKEND && n->mnt->dev)
		return -EPERM;  /* not in /dev, the host's device nodes */
	mode = (mode & ~07777) | (mode & 07777 & ~fs_umask(c->task));
	if (vdev)
		mode = (mode & 07777) | S_IFREG;
	int excl = made_entry_needed(c, n);
	if (excl)
		pthread_rwlock_wrlock(&ns_lock);
	struct stat made = { 0 };
	expect_dir(n);
	r = VFS_BE(VFS_OF(c), mknod, n->mnt->export, n->rel, mode, &made);
	gofer_expect_clear();
	vfs_invalidate(VFS_OF(c), n->mnt, n->rel, 0);
	if (r == 0 && vdev) {
		struct stat real = made;
		cleanup_free struct vfs_node *nn = NULL;
		if (!real.st_ino && fs_walk(c, AT_FDCWD, n->path, WALK_NOFOLLOW | WALK_FRESH | WALK_CANON, &nn) == 0 &&
		    nn->exists)
			real = nn->st;
		/* marked on the host file too (user.moat.vdev), so that an
		 * export refuses it as a device node (gofer/export.c); a
		 * private export never leaves the sandbox */
		int marked = VFS_BE(VFS_OF(c), setxattr, n->mnt->export, n->rel, "user.moat.vdev", "1", 1, 0) == 0;
		/* undone: only the node made, in the directory checked (a
		 * swap of the directory since must not remove another's name) */
		if (!real.st_ino || (!marked && !n->mnt->private_fs)) {
			expect_dir(n);
			gofer_expect_identity(real.st_dev, real.st_ino);
			(void)VFS_BE(VFS_OF(c), unlink, n->mnt->export, n->rel, 0);
			gofer_expect_clear();
			r = -EPERM;
		} else if (vfs_meta_set_dev(VFS_OF(c), &real, fmt, dev) < 0) {
			expect_dir(n);
			gofer_expect_identity(real.st_dev, real.st_ino);
			(void)VFS_BE(VFS_OF(c), unlink, n->mnt->export, n->rel, 0);
			gofer_expect_clear();
			r = -ENOSPC;
		}
		vfs_invalidate(VFS_OF(c), n->mnt, n->rel, 0);
	}
	if (r == 0) {
		struct stat real = made;
		/* after Linux's rule for a set-gid directory's group (kept
		 * with CAP_FSETID or membership: LTP mknod05) */
		mode_t setid = new_setid(c, &n->pst, mode);

		own_made(c, n, &made, setid);
		if (real.st_ino && vfs_node_is_host(n) && setid)
			/* the gofer makes host nodes without them: virtual */
			vfs_meta_update(VFS_OF(c), &real, (uid_t)-1, (gid_t)-1, setid, 1);
	}
	if (excl)
		pthread_rwlock_unlock(&ns_lock);
	return r;
}

long sys_mknod(struct sc_call *c)
{
	return do_mknodat(c, AT_FDCWD, c->str[0], (mode_t)c->args[1], (dev_t)c->args[2]);
}

long sys_mknodat(struct sc_call *c)
{
	return do_mknodat(c, ARG_INT(c, 0), c->str[1], (mode_t)c->args[2], (dev_t)c->args[3]);
}

static long symlinkat_once(struct sc_call *c, const char *target, int dirfd, const char *path,
			   int fresh)
{
	cleanup_free struct vfs_node *n = NULL;
	int r;

	if (!target)
		return -EFAULT;
	if (!*target)
		return -ENOENT;
	r = create_lookup(c, dirfd, path, 0, &n, fresh);
	if (r < 0)
		return r;
	int excl = made_entry_needed(c, n);
	if (excl)
		pthread_rwlock_wrlock(&ns_lock);
	struct stat made = { 0 };
	expect_dir(n);
	r = VFS_BE(VFS_OF(c), symlink, n->mnt->export, target, n->rel, &made);
	gofer_expect_clear();
	vfs_invalidate(VFS_OF(c), n->mnt, n->rel, 0);
	if (r == 0)
		own_made(c, n, &made, 0);
	if (excl)
		pthread_rwlock_unlock(&ns_lock);
	return r;
}

static long do_symlinkat(struct sc_call *c, const char *target, int dirfd, const char *path)
{
	int fresh = 0;

	return RETRY_STALE(symlinkat_once(c, target, dirfd, path, fresh++));
}

long sys_symlink(struct sc_call *c)
{
	return do_symlinkat(c, c->str[0], AT_FDCWD, c->str[1]);
}

long sys_symlinkat(struct sc_call *c)
{
	return do_symlinkat(c, c->str[0], ARG_INT(c, 1), c->str[2]);
}

/* ---- removals ---- */

/*
 * May the task remove the existing entry n (namei.c may_delete)?
 *  1. The victim must exist (ENOENT; checked by the caller after EROFS).
 *  2. A mount point or a synthetic directory cannot be removed (EBUSY).
 *  3. The parent must be writable and searchable (EACCES).
 *  4. In a sticky parent, only the owner of the victim, the owner of the
 *     parent, or root may remove it (EPERM); on host files root only as
 *     their owner (vfs_owner: no CAP_FOWNER against host files).
 *  5. rmdir needs a directory (ENOTDIR); unlink refuses one (EISDIR).
 *  6. A read-only mount refuses everything (EROFS; checked by the caller
 *     before rule 1, as Linux does).
 */
int fs_may_delete(struct task *t, const struct vfs_node *n, int isdir)
{
	int r;

	if (!n->exists)                                            /* 1 */
		return -ENOENT;
	if (n->kind != VN_BACKEND || n->mroot)                     /* 2 */
		return -EBUSY;
	r = vfs_permission_parent(t, n, MAY_WRITE | MAY_EXEC);      /* 3 */
	if (r < 0)
		return r;
	if ((n->pst.st_mode & S_ISVTX) && !vfs_owner(t, &n->st) &&  /* 4 */
	    !vfs_owner(t, &n->pst))
		return -EPERM;
	if (isdir >= 0) {                                          /* 5 */
		if (isdir && !S_ISDIR(n->st.st_mode))
			return -ENOTDIR;
		if (!isdir && S_ISDIR(n->st.st_mode))
			return -EISDIR;
	}
	return 0;
}

static long unlinkat_once(struct sc_call *c, int dirfd, const char *path, int flags, int fresh);

static long do_unlinkat(struct sc_call *c, int dirfd, const char *path, int flags)
{
	int r, tries = 0;

	/* -ESTALE: the name is another object's than the one checked (renamed
	 * meanwhile): walked and checked afresh, at most 16 times */
	while ((r = (int)unlinkat_once(c, dirfd, path, flags, tries)) == -ESTALE && ++tries < 16)
		;
	return r == -ESTALE ? -ENOENT : r;
}

static long unlinkat_once(struct sc_call *c, int dirfd, const char *path, int flags, int fresh)
{
	cleanup_free struct vfs_node *n = NULL;
	int rmdir_ = !!(flags & AT_REMOVEDIR);
	int r;

	if (flags & ~AT_REMOVEDIR)
		return -EINVAL;
	r = fs_walk(c, dirfd, path, WALK_CREATE | WALK_NOFOLLOW | (fresh ? WALK_FRESH : 0), &n);
	if (r < 0)
		return r;
	if (n->last_dot)
		return rmdir_ ? (n->last_dot == 1 ? -EINVAL : -ENOTEMPTY) : -EISDIR;
	if (n->exists && (n->kind != VN_BACKEND || n->mroot || vfs_holds_mounts(VFS_OF(c), n->path)))
		return -EBUSY;
	if (n->kind == VN_PROC)
		return n->exists ? -EACCES : -ENOENT;
	r = vfs_mount_write_err(n->mnt);                           /* 6 */
	if (r < 0)
		return r;
	r = fs_may_delete(c->task, n, rmdir_);
	if (r < 0)
		return r;
	if (!rmdir_ && n->trailing_slash)
		return -ENOTDIR;
	pthread_rwlock_rdlock(&ns_lock);
	if (n->mnt->kind == VFS_MNT_GOFER) {
		gofer_expect_identity(n->st.st_dev, n->st.st_ino); /* the object checked */
		gofer_expect_parent(n->pst.st_dev, n->pst.st_ino); /* in the directory checked */
	}
	unsigned long gen0 = vfs_cache_gen(VFS_OF(c));
	r = VFS_BE(VFS_OF(c), unlink, n->mnt->export, n->rel, rmdir_ ? AT_REMOVEDIR : 0);
	gofer_expect_clear();
	pthread_rwlock_unlock(&ns_lock);
	if (r == 0 && !rmdir_)
		vfs_unlinked(VFS_OF(c), n->mnt, n->rel, gen0);
	else
		vfs_invalidate(VFS_OF(c), n->mnt, n->rel, rmdir_);
	if (r == 0 && (rmdir_ || n->st.st_nlink <= 1))
		vfs_meta_forget(VFS_OF(c), &n->st);
	return r;
}

long fs_unlinkat(struct sc_call *c, int dirfd, const char *path)
{
	return do_unlinkat(c, dirfd, path, 0);
}

long sys_unlink(struct sc_call *c)
{
	return do_unlinkat(c, AT_FDCWD, c->str[0], 0);
}

long sys_rmdir(struct sc_call *c)
{
	return do_unlinkat(c, AT_FDCWD, c->str[0], AT_REMOVEDIR);
}

long sys_unlinkat(struct sc_call *c)
{
	return do_unlinkat(c, ARG_INT(c, 0), c->str[1], ARG_INT(c, 2));
}

/* ---- rename ---- */

/* The mount of n's parent directory: n's own, unless n is a mount's root. */
static const struct vfs_mount *parent_mnt(struct sc_call *c, const struct vfs_node *n)
{
	char parent[VFS_PATH_MAX];
	const char *slash = strrchr(n->path, '/');

	if (!n->mroot || !slash || !n->path[1])
		return n->mnt;
	snprintf(parent, sizeof parent, "%.*s", slash == n->path ? 1 : (int)(slash - n->path), n->path);
	return vfs_mount_for(VFS_OF(c), parent);
}

static long renameat2_once(struct sc_call *c, int odfd, const char *opath, int ndfd,
			   const char *npath, unsigned flags, int fresh)
{
	cleanup_free struct vfs_node *o = NULL;
	cleanup_free struct vfs_node *nn = NULL;
	struct task *t = c->task;
	unsigned wf = WALK_CREATE | WALK_NOFOLLOW | (fresh ? WALK_FRESH : 0);
	int r;

	if (flags & ~(RENAME_NOREPLACE | RENAME_EXCHANGE | RENAME_WHITEOUT))
		return -EINVAL;
	if ((flags & RENAME_NOREPLACE) && (flags & RENAME_EXCHANGE))
		return -EINVAL;
	if (flags & RENAME_WHITEOUT)
		return -EINVAL;
	r = fs_walk(c, odfd, opath, wf, &o);
	if (r < 0)
		return r;
	r = fs_walk(c, ndfd, npath, wf, &nn);
	if (r < 0)
		return r;
	if (o->last_dot || nn->last_dot)
		return -EBUSY;
	/* EXDEV compares the mounts of the two parent directories (a mount
	 * point's own mount is not its name's): a mount point renamed within
	 * its parent mount is EBUSY below, as on Linux */
	if (parent_mnt(c, o) != parent_mnt(c, nn))
		return -EXDEV;
	if (o->mnt != nn->mnt)
		return -EBUSY;
	if (o->kind == VN_PROC)
		return o->exists ? -EACCES : -ENOENT;
	r = vfs_mount_write_err(o->mnt);
	if (r < 0)
		return r;
	if (!o->exists)
		return -ENOENT;
	if ((flags & RENAME_EXCHANGE) && !nn->exists)
		return -ENOENT;
	if ((flags & RENAME_NOREPLACE) && nn->exists)
		return -EEXIST;
	if ((o->exists && (o->kind != VN_BACKEND || o->mroot ||
			   vfs_holds_mounts(VFS_OF(c), o->path))) ||
	    (nn->exists && (nn->kind != VN_BACKEND || nn->mroot ||
			    vfs_holds_mounts(VFS_OF(c), nn->path))))
		return -EBUSY;
	if (!strcmp(o->path, nn->path))
		return 0;
	if (nn->exists && o->st.st_dev == nn->st.st_dev && o->st.st_ino == nn->st.st_ino &&
	    !(flags & RENAME_EXCHANGE))
		return 0;   /* hard links of one inode: nothing to do */
	/* a sealed file (fs/vfs.c) is no task's: renaming it would copy it up
	 * into the overlay's upper layer (overlayfs copies a lower file up to
	 * rename it), where it is a file the sandbox changed (--export, an
	 * --overlay DIR kept for the next run); as for a file one does not own
	 * in a sticky directory, EPERM (red team round 7) */
	if (vfs_sealed(t, &o->st) || ((flags & RENAME_EXCHANGE) && vfs_sealed(t, &nn->st)))
		return -EPERM;
	r = fs_may_delete(t, o, -1);
	if (r < 0)
		return r;
	if (nn->exists) {
		r = fs_may_delete(t, nn, -1);
		if (r < 0)
			return r;
	} else {
		r = vfs_permission_parent(t, nn, MAY_WRITE | MAY_EXEC);
		if (r < 0)
			return r;
	}
	int odir = S_ISDIR(o->st.st_mode);
	if (!odir && (o->trailing_slash || nn->trailing_slash))
		return -ENOTDIR;
	if (nn->exists && !(flags & RENAME_EXCHANGE)) {
		if (odir && !S_ISDIR(nn->st.st_mode))
			return -ENOTDIR;
		if (!odir && S_ISDIR(nn->st.st_mode))
			return -EISDIR;
	}
	size_t ol = strlen(o->path);
	if (odir && !strncmp(nn->path, o->path, ol) && nn->path[ol] == '/')
		return -EINVAL;
	if ((flags & RENAME_EXCHANGE) && S_ISDIR(nn->st.st_mode)) {
		size_t nl = strlen(nn->path);
		if (!strncmp(o->path, nn->path, nl) && o->path[nl] == '/')
			return -EINVAL;
	}
	/* a directory that changes parent has its ".." rewritten: Linux's
	 * vfs_rename wants write permission on the directory itself (on both
	 * with RENAME_EXCHANGE). Before red team 43 a dropped user moved
	 * root's 0755 directory out of a world-writable one into another. */
	if (o->pst.st_dev != nn->pst.st_dev || o->pst.st_ino != nn->pst.st_ino) {
		if (odir) {
			r = vfs_permission_node(t, o, MAY_WRITE);
			if (r < 0)
				return r;
		}
		if ((flags & RENAME_EXCHANGE) && S_ISDIR(nn->st.st_mode)) {
			r = vfs_permission_node(t, nn, MAY_WRITE);
			if (r < 0)
				return r;
		}
	}
	pthread_rwlock_rdlock(&ns_lock);
	if (o->mnt->kind == VFS_MNT_GOFER) {
		/* the objects checked: the source in its directory, the
		 * destination's directory and what its name held (nothing:
		 * then it must still be free) */
		gofer_expect_identity(o->st.st_dev, o->st.st_ino);
		gofer_expect_parent(o->pst.st_dev, o->pst.st_ino);
		gofer_expect_target(nn->pst.st_dev, nn->pst.st_ino, nn->exists ? nn->st.st_dev : 0,
				    nn->exists ? nn->st.st_ino : 0);
	}
	r = VFS_BE(VFS_OF(c), rename, o->mnt->export, o->rel, nn->rel, flags);
	gofer_expect_clear();
	pthread_rwlock_unlock(&ns_lock);
	vfs_invalidate(VFS_OF(c), o->mnt, o->rel, 1);
	vfs_invalidate(VFS_OF(c), nn->mnt, nn->rel, 1);
	if (r == 0 && !(flags & RENAME_EXCHANGE))
		vfs_renamed(VFS_OF(c), &o->st, o->path, nn->path);
	if (r == 0 && nn->exists && !(flags & RENAME_EXCHANGE) &&
	    (S_ISDIR(nn->st.st_mode) || nn->st.st_nlink <= 1))
		vfs_meta_forget(VFS_OF(c), &nn->st);   /* the replaced file is gone */
	return r;
}

static long do_renameat2(struct sc_call *c, int odfd, const char *opath, int ndfd,
			 const char *npath, unsigned flags)
{
	int fresh = 0;

	return RETRY_STALE(renameat2_once(c, odfd, opath, ndfd, npath, flags, fresh++));
}

long sys_rename(struct sc_call *c)
{
	return do_renameat2(c, AT_FDCWD, c->str[0], AT_FDCWD, c->str[1], 0);
}

long sys_renameat(struct sc_call *c)
{
	return do_renameat2(c, ARG_INT(c, 0), c->str[1], ARG_INT(c, 2), c->str[3], 0);
}

long sys_renameat2(struct sc_call *c)
{
	return do_renameat2(c, ARG_INT(c, 0), c->str[1], ARG_INT(c, 2), c->str[3],
			    ARG_UINT(c, 4));
}

/* ---- link ---- */

static long linkat_once(struct sc_call *c, int odfd, const char *opath, int ndfd,
			const char *npath, int flags, int fresh)
{
	cleanup_free struct vfs_node *o = NULL;
	cleanup_free struct vfs_node *nn = NULL;
	unsigned wf = fresh ? WALK_FRESH : 0;
	int r;

	if (flags & ~(AT_SYMLINK_FOLLOW | AT_EMPTY_PATH))
		return -EINVAL;
	if (!(flags & AT_SYMLINK_FOLLOW))
		wf |= WALK_NOFOLLOW;
	if (flags & AT_EMPTY_PATH)
		wf |= WALK_EMPTY_PATH;
	r = fs_walk(c, odfd, opath, wf, &o);
	if (r < 0)
		return r;
	/* the file an fd has open: AT_EMPTY_PATH, or /proc/self/fd/N followed */
	cleanup_fd int hfd = -1;
	if (o->kind == VN_FD && (flags & AT_EMPTY_PATH) && !*opath) {
		r = vfs_fd_node(VFS_OF(c), c->task, odfd, o, &hfd);
		if (r < 0)
			return r;
	} else if (o->kind == VN_PROC && o->magic && (flags & AT_SYMLINK_FOLLOW)) {
		r = procfs_open_magic(VFS_OF(c), c->task, o->rel, O_PATH, &hfd);
		if (r < 0)
			return r;
		r = vfs_host_fd_node(VFS_OF(c), c->task, hfd, o);
		if (r < 0)
			return r;
		o->opath = 0;
	}
	if (o->kind == VN_FD && hfd < 0)
		return -ENOENT;   /* an fd the VFS cannot name */
	r = fs_walk(c, ndfd, npath, WALK_CREATE | WALK_NOFOLLOW | (fresh ? WALK_FRESH : 0), &nn);
	if (r < 0)
		return r;
	if (nn->exists)
		return -EEXIST;
	if (nn->trailing_slash)
		return -ENOENT;
	if (o->kind == VN_FD) {
		/* an O_TMPFILE file of ours gets its first name */
		if (nn->kind != VN_BACKEND)
			return -EXDEV;
		r = may_add_name(c, nn);
		if (r < 0)
			return r;
		/* protected_hardlinks as below (may_linkat): before red team 13
		 * a process that dropped root gave root's 0600 O_TMPFILE file,
		 * inherited, a name with AT_EMPTY_PATH (Linux: ENOENT without
		 * CAP_DAC_READ_SEARCH, EPERM through /proc/self/fd) */
		struct stat vst = o->st;
		vfs_view_stat(VFS_OF(c), &vst);
		/* (the owner the view shows, or CAP_FOWNER: not vfs_owner, whose
		 * sealing of root-only host files would take a 0600 file of
		 * the guest's own in a host bind for one) */
		if (c->task->cred.fsuid != vst.st_uid && !cred_capable(&c->task->cred, CRED_CAP_FOWNER)) {
			mode_t m = vst.st_mode;
			if (!S_ISREG(m) || (m & S_ISUID) || (m & (S_ISGID | S_IXGRP)) == (S_ISGID | S_IXGRP) ||
			    vfs_permission(c->task, &vst, MAY_READ | MAY_WRITE) < 0)
				return -EPERM;
		}
		if (!vfs_tmpfile_link(VFS_OF(c), hfd, nn, &r))
			return -ENOENT;
		return r;
	}
	if (o->mnt != nn->mnt)
		return -EXDEV;
	r = may_add_name(c, nn);
	if (r < 0)
		return r;
	if (S_ISDIR(o->st.st_mode))
		return -EPERM;
	if (o->kind != VN_BACKEND)
		return -EXDEV;
	if (!vfs_owner(c->task, &o->st)) {
		/* protected_hardlinks (may_linkat): a file one does not own
		 * must be a regular one without set-id bits that one may read
		 * and write; guest root owns host files only as their owner */
		mode_t m = o->st.st_mode;
		if (!S_ISREG(m) || (m & S_ISUID) || (m & (S_ISGID | S_IXGRP)) == (S_ISGID | S_IXGRP) ||
		    vfs_permission_node(c->task, o, MAY_READ | MAY_WRITE) < 0)
			return -EPERM;
	}
	/* the object checked, from the directory its walk went through, into
	 * the directory checked (-ESTALE: walked and checked again); the
	 * reply says what both names are after the link, cached as look-ups
	 * would have cached them (vfs_linked): git unlinks its temporary name
	 * right after linking the object's */
	struct stat lst[2] = { 0 };
	unsigned long gen0 = vfs_cache_gen(VFS_OF(c));
	if (o->mnt->kind == VFS_MNT_GOFER) {
		gofer_expect_identity(o->st.st_dev, o->st.st_ino);
		gofer_expect_parent(o->pst.st_dev, o->pst.st_ino);
		gofer_expect_target(nn->pst.st_dev, nn->pst.st_ino, 0, 0);
	}
	r = VFS_BE(VFS_OF(c), link, o->mnt->export, o->rel, nn->rel, lst);
	gofer_expect_clear();
	if (r == 0) {
		vfs_linked(VFS_OF(c), o->mnt, o->rel, nn->rel, lst, gen0);
	} else {
		vfs_invalidate(VFS_OF(c), o->mnt, o->rel, 0);
		vfs_invalidate(VFS_OF(c), nn->mnt, nn->rel, 0);
	}
	return r;
}

static long do_linkat(struct sc_call *c, int odfd, const char *opath, int ndfd,
		      const char *npath, int flags)
{
	int fresh = 0;

	return RETRY_STALE(linkat_once(c, odfd, opath, ndfd, npath, flags, fresh++));
}

static long linkat_retry(struct sc_call *c, int odfd, const char *opath, int ndfd,
			 const char *npath, int flags)
{
	int r, tries = 0;

	/* -ESTALE: the old name is another object's than the one checked
	 * (renamed meanwhile): walked (the entries were dropped) and checked
	 * afresh, at most 16 times */
	while ((r = (int)do_linkat(c, odfd, opath, ndfd, npath, flags)) == -ESTALE && ++tries < 16)
		;
	return r == -ESTALE ? -ENOENT : r;
}

long sys_link(struct sc_call *c)
{
	return linkat_retry(c, AT_FDCWD, c->str[0], AT_FDCWD, c->str[1], 0);
}

long sys_linkat(struct sc_call *c)
{
	return linkat_retry(c, ARG_INT(c, 0), c->str[1], ARG_INT(c, 2), c->str[3], ARG_INT(c, 4));
}

/* ---- attributes: chmod, chown, truncate, utimes ---- */

/*
 * Metadata calls on an fd the VFS cannot name (VN_FD: the caller's terminal,
 * a host file given as stdio, a pipe, a socket, an export file whose path no
 * longer names it). The sentry would carry them out with its own rights on an
 * object of the host, so they are refused (EPERM), except on a memfd: an
 * anonymous file that exists in no file system, where chmod (never a set-id
 * bit) and utimens are applied to the held fd, if it is not one the caller
 * gave as stdio. Owners are never changed.
 */
static int fd_meta_ok(struct sc_call *c, const struct vfs_node *n)
{
	/* a memfd the guest made, by the file's identity (vfs_memfd_guests),
	 * never one the caller gave as stdio (red team 83: the guest's root
	 * chmod'ed the caller's 0600 memfd to 0666) nor one a host peer sent
	 * over a socket (pts39: the same, through a socket stdio) */
	return n->kind == VN_FD && vfs_memfd_guests(VFS_OF(c), &n->st) &&
	       vfs_caller_stdio_access(VFS_OF(c), &n->st) < 0 ? 0 : -EPERM;
}

/* memfd_create: made by the sentry and installed as the call's result, its
 * inode recorded (vfs_memfd_made), so that a later fchmod or futimens
 * knows the file for the guest's own by what it is, not by the fd number
 * that holds it (which a thread's dup2 or a receive of a host peer's memfd
 * could fill). Natively a memfd had the guest's host uid; the sentry's is
 * the same (guest root is the sentry's uid on the host: sentry/privilege.c).
 * The name (copied once by the dispatcher) and flags are the kernel's to
 * check; MFD_HUGETLB is EINVAL (the host's pool, red team 23; also the
 * filter's ARGDENY). */
long sys_memfd_create(struct sc_call *c)
{
	unsigned flags = (unsigned)c->args[1];
	if (flags & MFD_HUGETLB)
		return -EINVAL;
	int fd = memfd_create(c->str[0], flags | MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	struct stat st;
	if (fstat(fd, &st) < 0) {
		int e = -errno;
		close(fd);
		return e;
	}
	vfs_memfd_made(VFS_OF(c), &st);
	return sc_return_fd(c, fd, flags & MFD_CLOEXEC);
}

/* Resolve the target of an attribute change; *hfd gets the host fd for an
 * AT_EMPTY_PATH target the VFS cannot name (VN_FD, a memfd: fd_meta_ok).
 * owner_only (chmod, chown): a change only an owner may make, so a node of
 * the device mount, whose owners and modes are the host's and never change,
 * is EPERM as for a file of another owner (Linux checks ownership there; a
 * write to the device mount is EACCES) — LTP fchownat03. */
/* ATTR_FD_CALL (internal, never a guest's flag): fchmod/fchown on the fd
 * itself, where an O_PATH fd (a placeholder here) is EBADF as on Linux */
#define ATTR_FD_CALL 0x40000000

static int attr_lookup(struct sc_call *c, int dirfd, const char *path, int atflags,
		       struct vfs_node **n, int *hfd, int owner_only)
{
	unsigned wf = 0;
	int r;

	*hfd = -1;
	if (atflags & AT_SYMLINK_NOFOLLOW)
		wf |= WALK_NOFOLLOW;
	if ((atflags & AT_EMPTY_PATH) && path && !*path) {
		*n = xmalloc(sizeof **n);
		r = vfs_fd_node(VFS_OF(c), c->task, dirfd, *n, hfd);
		if (r == 0 && (atflags & ATTR_FD_CALL) && (*n)->opath)
			return -EBADF;
	} else {
		r = fs_walk(c, dirfd, path, wf, n);
	}
	if (r < 0)
		return r;
	if ((*n)->kind == VN_PROC && (*n)->magic && S_ISLNK((*n)->st.st_mode) &&
	    !(atflags & AT_SYMLINK_NOFOLLOW)) {
		/* /proc/self/fd/N (glibc's fchmodat(AT_SYMLINK_NOFOLLOW) on an
		 * O_PATH fd): the file the fd has open, as for the fd itself */
		r = procfs_open_magic(VFS_OF(c), c->task, (*n)->rel, O_PATH, hfd);
		if (r < 0)
			return r;
		r = vfs_host_fd_node(VFS_OF(c), c->task, *hfd, *n);
		if (r < 0)
			return r;
		(*n)->opath = 0;
	}
	if ((*n)->kind == VN_FD)
		return fd_meta_ok(c, *n);
	if ((*n)->kind == VN_PROC)
		return -EPERM;
	r = vfs_mount_write_err((*n)->mnt);
	return r == -EACCES && owner_only ? -EPERM : r;
}

/*
 * chmod of a host file (the caller owns it on the host: vfs_owner). The
 * permission bits go to the gofer; the set-id bits never do (the gofer would
 * strip them anyway): they are kept as virtual metadata, after Linux's rule
 * that S_ISGID needs membership of the file's group (as the guest sees it) or
 * root (CAP_FSETID, which only ever acts on the virtual bit).
 */
static long chmod_host(struct sc_call *c, const struct vfs_node *n, mode_t mode, int hfd)
{
	struct vfs *v = VFS_OF(c);
	struct task *t = c->task;
	struct stat view = n->st, real = n->st;
	mode_t setid = mode & (S_ISUID | S_ISGID);
	int r;

	vfs_view_stat(v, &view);
	if (!cred_capable(&t->cred, CRED_CAP_FSETID) && !cred_in_group(&t->cred, view.st_gid))
		setid &= ~S_ISGID;
	/* fchmod too: the gofer makes it (the sentry's filter has no fchmod:
	 * rootless a file of the caller's it holds is its uid's) */
	unsigned long gen0 = vfs_cache_gen(v);
	gofer_expect_identity(n->st.st_dev, n->st.st_ino); /* the object checked */
	r = VFS_BE(v, chmod, n->mnt->export, n->rel, mode & ~(S_ISUID | S_ISGID));
	gofer_expect_identity(0, 0);
	vfs_refresh_since(v, n->mnt, n->rel, &n->st, r == 0 ? hfd : -1, gen0);
	if (r < 0)
		return r == -ESTALE ? -ENOENT : r; /* renamed away meanwhile */
	real.st_mode = (real.st_mode & S_IFMT) | (mode & ~(S_ISUID | S_ISGID));
	return vfs_meta_update(v, &real, (uid_t)-1, (gid_t)-1, setid, 1);
}

static long do_fchmodat(struct sc_call *c, int dirfd, const char *path, mode_t mode, int flags)
{
	cleanup_free struct vfs_node *n = NULL;
	cleanup_fd int hfd = -1;
	int r;

	if (flags & ~(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH | ATTR_FD_CALL))
		return -EINVAL;
	r = attr_lookup(c, dirfd, path, flags, &n, &hfd, 1);
	if (r < 0)
		return r;
	if (S_ISLNK(n->st.st_mode))
		return -EOPNOTSUPP;
	if (!vfs_owner(c->task, &n->st))
		return -EPERM;
	mode &= 07777;
	if (n->kind == VN_FD)          /* a memfd (fd_meta_ok): the gofer sets it */
		return vfs_memfd_attr(VFS_OF(c), hfd, mode, NULL, 0);
	if (vfs_node_is_host(n))
		return chmod_host(c, n, mode, hfd);
	if (!cred_capable(&c->task->cred, CRED_CAP_FSETID) && !cred_in_group(&c->task->cred, n->st.st_gid))
		mode &= ~S_ISGID;
	gofer_expect_identity(n->st.st_dev, n->st.st_ino); /* the object checked */
	r = VFS_BE(VFS_OF(c), chmod, n->mnt->export, n->rel, mode);
	gofer_expect_identity(0, 0);
	/* the inode's other names too (vfs_refresh: a hard link's cached
	 * entry kept the old mode, and open checks it; red-team 34: the
	 * private file systems, tmpfs and the overlay, only dropped rel) */
	vfs_refresh(VFS_OF(c), n->mnt, n->rel, &n->st);
	return r == -ESTALE ? -ENOENT : r; /* renamed away meanwhile */
}

long sys_chmod(struct sc_call *c)
{
	return do_fchmodat(c, AT_FDCWD, c->str[0], (mode_t)c->args[1], 0);
}

long sys_fchmodat(struct sc_call *c)
{
	return do_fchmodat(c, ARG_INT(c, 0), c->str[1], (mode_t)c->args[2], 0);
}

long sys_fchmodat2(struct sc_call *c)
{
	if (ARG_INT(c, 3) & ATTR_FD_CALL)
		return -EINVAL;
	return do_fchmodat(c, ARG_INT(c, 0), c->str[1], (mode_t)c->args[2], ARG_INT(c, 3));
}

/* guest id -> host id through the sandbox's user-namespace mapping */
int fs_id_to_host(const struct idmap *m, uint32_t id, int gid, uint32_t *out)
{
	if (id == (uint32_t)-1) {
		*out = id;
		return 0;
	}
	if (m->full_identity) {
		*out = id;
		return 0;
	}
	if (id == (gid ? m->guest_gid : m->guest_uid)) {
		*out = gid ? m->host_gid : m->host_uid;
		return 0;
	}
	return -EINVAL;  /* not mapped in the guest's user namespace */
}

/*
 * chown. On private (tmpfs) files it goes to the gofer with the ids mapped to
 * the host; on host files it is virtual only (fs/vmeta.c): the host file
 * keeps its owner, the guest's stat shows the new one. Rules (chown_ok/
 * chgrp_ok in Linux), against the owner and group the guest sees:
 *  1. naming an owner needs CAP_CHOWN, or being the owner and naming
 *     oneself (EPERM);
 *  2. naming a group needs CAP_CHOWN, or being the owner and naming the
 *     file's group or one's own (EPERM);
 *  3. an id outside the guest's user namespace mapping is EINVAL;
 *  4. on a non-directory, a chown clears S_ISUID, and S_ISGID if the group
 *     may execute or the caller is neither in the file's group nor
 *     CAP_FSETID (Linux >= 6.2; virtual bits on host files, and on private
 *     files a chmod after the gofer's chown, which keeps the latter): a
 *     mode change, so only for
 *     the owner or CAP_FOWNER (notify_change's ATTR_KILL_S*ID become
 *     ATTR_MODE, which setattr_prepare checks), else EPERM. CAP_FOWNER is
 *     the virtual one here as CAP_CHOWN is, host file or not: root gives a
 *     host file away virtually, set-uid or not.
 * Before red team 43, 1 and 2 let anyone name the ids the file had, and 4
 * was not checked: a dropped user's chown(root's file, -1, -1) cleared its
 * set-id bits; after it, S_ISGID without S_IXGRP was never cleared (a
 * non-member's chown(-1, -1) of root's file was allowed, not EPERM).
 */
/* A truncate by path or an O_TRUNC open of an existing file (real: its
 * stat before): Linux's setattr_should_drop_suidgid (do_truncate's
 * dentry_needs_remove_privs): a writer without CAP_FSETID drops S_ISUID
 * from a regular file, and S_ISGID when the group may execute or the
 * writer is not in the file's group (setattr_should_drop_sgid); with
 * CAP_FSETID they stay. A host file's bits are virtual (vmeta): set here.
 * A private file's are real and the gofer's truncate applies the gofer's
 * rule (it clears S_ISUID, keeps S_ISGID without S_IXGRP): a chmod puts
 * the caller's result (red team 43: a host file kept its bits, a private
 * one followed the gofer). Writes are not seen (see ARCHITECTURE.md). */
static void trunc_setid(struct sc_call *c, const struct vfs_node *n, const struct stat *real)
{
	if (!S_ISREG(real->st_mode))
		return;
	struct stat view = *real;
	vfs_view_stat(VFS_OF(c), &view);
	mode_t setid = view.st_mode & (S_ISUID | S_ISGID), keep = setid;
	if (!setid)
		return;
	if (!cred_capable(&c->task->cred, CRED_CAP_FSETID)) {
		keep &= ~(mode_t)S_ISUID;
		if ((keep & S_ISGID) && ((view.st_mode & S_IXGRP) || !cred_in_group(&c->task->cred, view.st_gid)))
			keep &= ~(mode_t)S_ISGID;
	}
	if (vfs_node_is_host(n)) {
		if (keep != setid)
			(void)vfs_meta_update(VFS_OF(c), real, (uid_t)-1, (gid_t)-1, keep, 1);
		return;
	}
	(void)VFS_BE(VFS_OF(c), chmod, n->mnt->export, n->rel, (real->st_mode & 01777) | keep);
	vfs_refresh(VFS_OF(c), n->mnt, n->rel, real);
}

static long do_fchownat(struct sc_call *c, int dirfd, const char *path, uint32_t uid,
			uint32_t gid, int flags)
{
	cleanup_free struct vfs_node *n = NULL;
	cleanup_fd int hfd = -1;
	struct task *t = c->task;
	uint32_t hu, hg;
	int r;

	if (flags & ~(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH | ATTR_FD_CALL))
		return -EINVAL;
	r = attr_lookup(c, dirfd, path, flags, &n, &hfd, 1);
	if (r < 0)
		return r;
	if (n->kind == VN_FD)
		return -EPERM;
	struct stat view = n->st;
	vfs_view_stat(VFS_OF(c), &view);
	/* the owner itself (fsuid), never CAP_FOWNER, for 1 and 2 (chown_ok,
	 * chgrp_ok; red team 44: root without CAP_CHOWN named its groups on
	 * anyone's file as if its owner); 4 is a mode change, CAP_FOWNER's */
	int owner = vfs_is_owner(t, &n->st), cap_chown = cred_capable(&t->cred, CRED_CAP_CHOWN);
	if (uid != (uint32_t)-1 && !cap_chown && (!owner || uid != view.st_uid))      /* 1 */
		return -EPERM;
	if (gid != (uint32_t)-1 && !cap_chown &&                                       /* 2 */
	    (!owner || (gid != view.st_gid && !cred_in_group(&t->cred, gid))))
		return -EPERM;
	/* 4: setattr_should_drop_sgid (Linux >= 6.2): S_ISGID goes when the
	 * group may execute, or the caller is neither in the file's group nor
	 * CAP_FSETID */
	int drop_sgid = !S_ISDIR(view.st_mode) && (view.st_mode & S_ISGID) &&
			((view.st_mode & S_IXGRP) ||
			 (!cred_in_group(&t->cred, view.st_gid) && !cred_capable(&t->cred, CRED_CAP_FSETID)));
	if (!owner && !cred_capable(&t->cred, CRED_CAP_FOWNER) && !S_ISDIR(view.st_mode) && /* 4 */
	    ((view.st_mode & S_ISUID) || drop_sgid))
		return -EPERM;
	if (fs_id_to_host(&c->sb->idmap, uid, 0, &hu) < 0 ||                          /* 3 */
	    fs_id_to_host(&c->sb->idmap, gid, 1, &hg) < 0)
		return -EINVAL;
	if (vfs_node_is_host(n)) {
		mode_t setid = view.st_mode & (S_ISUID | S_ISGID);
		if (!S_ISDIR(view.st_mode)) {                                      /* 4 */
			setid &= ~S_ISUID;
			if (drop_sgid)
				setid &= ~S_ISGID;
		}
		unsigned long gen0 = vfs_cache_gen(VFS_OF(c));
		r = vfs_meta_update(VFS_OF(c), &n->st, uid, gid, setid, 1);
		/* the real owner stays */
		vfs_refresh_since(VFS_OF(c), n->mnt, n->rel, &n->st, r == 0 ? hfd : -1, gen0);
		return r;
	}
	r = VFS_BE(VFS_OF(c), chown, n->mnt->export, n->rel, hu, hg);
	vfs_refresh(VFS_OF(c), n->mnt, n->rel, &n->st); /* other names too, as chmod */
	if (r == 0 && drop_sgid && (n->st.st_mode & S_ISGID) && !(n->st.st_mode & S_IXGRP)) {
		/* the gofer's chown keeps S_ISGID without S_IXGRP (it is
		 * CAP_FSETID): the caller's rule clears it. n->st is the stat
		 * from before the chown (vfs_refresh does not rewrite it), and
		 * the chown cleared S_ISUID of this non-directory as Linux's
		 * does for anyone: it stays cleared (LTP chown02 saw a 06770
		 * file come back 04770 when this chmod kept it) */
		(void)VFS_BE(VFS_OF(c), chmod, n->mnt->export, n->rel,
			     n->st.st_mode & 07777 & ~(mode_t)(S_ISGID | S_ISUID));
		vfs_refresh(VFS_OF(c), n->mnt, n->rel, &n->st);
	}
	return r;
}

long sys_chown(struct sc_call *c)
{
	return do_fchownat(c, AT_FDCWD, c->str[0], ARG_UINT(c, 1), ARG_UINT(c, 2), 0);
}

long sys_lchown(struct sc_call *c)
{
	return do_fchownat(c, AT_FDCWD, c->str[0], ARG_UINT(c, 1), ARG_UINT(c, 2),
			   AT_SYMLINK_NOFOLLOW);
}

long sys_fchownat(struct sc_call *c)
{
	if (ARG_INT(c, 4) & ATTR_FD_CALL)
		return -EINVAL;
	return do_fchownat(c, ARG_INT(c, 0), c->str[1], ARG_UINT(c, 2), ARG_UINT(c, 3),
			   ARG_INT(c, 4));
}

/* fchmod/fchown on a held fd: as fchmodat/fchownat(fd, "", AT_EMPTY_PATH),
 * except that an O_PATH fd (a placeholder here) is EBADF as on Linux: told
 * by attr_lookup from the one fd look-up it makes (a separate check cost a
 * second pidfd_getfd, fstat and close per call: tar makes one fchmod and
 * one fchown per file). */
long sys_fchmod(struct sc_call *c)
{
	return do_fchmodat(c, ARG_INT(c, 0), "", (mode_t)c->args[1], AT_EMPTY_PATH | ATTR_FD_CALL);
}

long sys_fchown(struct sc_call *c)
{
	return do_fchownat(c, ARG_INT(c, 0), "", ARG_UINT(c, 1), ARG_UINT(c, 2),
			   AT_EMPTY_PATH | ATTR_FD_CALL);
}

long sys_truncate(struct sc_call *c)
{
	cleanup_free struct vfs_node *n = NULL;
	off_t len = (off_t)c->args[1];
	int r;

	if (len < 0)
		return -EINVAL;
	r = fs_walk(c, AT_FDCWD, c->str[0], 0, &n);
	if (r < 0)
		return r;
	/* /proc/self/fd/N: the file the fd has open (before: EINVAL) */
	r = vfs_follow_magic(VFS_OF(c), c->task, n, NULL);
	if (r < 0)
		return r;
	if (S_ISDIR(n->st.st_mode))
		return -EISDIR;
	/* a device node the guest made is not a regular file (Linux's
	 * vfs_truncate: EINVAL), whatever its host file is */
	if (!S_ISREG(n->st.st_mode) || vfs_node_vdev(VFS_OF(c), n))
		return -EINVAL;
	if (n->kind != VN_BACKEND)
		return -EACCES;
	r = vfs_mount_write_err(n->mnt);
	if (r < 0)
		return r;
	r = vfs_permission_node(c->task, n, MAY_WRITE);
	if (r < 0)
		return r;
	if (task_text_busy(c->sb, n->st.st_dev, n->st.st_ino))
		return -ETXTBSY; /* a running program (see do_open) */
	/* the guest's RLIMIT_FSIZE, which the gofer's truncate would not see:
	 * EFBIG and SIGXFSZ, as Linux's inode_newsize_ok (LTP truncate03) */
	struct rlimit fsz;
	pid_t htid = c->task->tid;
	if (len > n->st.st_size && prlimit(htid, RLIMIT_FSIZE, NULL, &fsz) == 0 && fsz.rlim_cur != RLIM_INFINITY &&
	    (rlim_t)len > fsz.rlim_cur) {
		(void)syscall(SYS_tgkill, (pid_t)c->task->tgid, htid, SIGXFSZ);
		return -EFBIG;
	}
	r = lease_break(c, n->st.st_dev, n->st.st_ino, O_WRONLY); /* Linux's vfs_truncate */
	if (r < 0)
		return r;
	gofer_expect_identity(n->st.st_dev, n->st.st_ino); /* the object checked */
	r = VFS_BE(VFS_OF(c), truncate, n->mnt->export, n->rel, len);
	gofer_expect_identity(0, 0);
	if (r == 0)
		trunc_setid(c, n, &n->st);
	vfs_refresh(VFS_OF(c), n->mnt, n->rel, &n->st);
	return r == -ESTALE ? -ENOENT : r; /* renamed away meanwhile */
}

/* ts NULL: both now. */
static long do_utimens(struct sc_call *c, int dirfd, const char *path, int null_path,
		       const struct timespec *ts, int flags)
{
	cleanup_free struct vfs_node *n = NULL;
	cleanup_fd int hfd = -1;
	int r;

	if (flags & ~(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH))
		return -EINVAL;
	for (int i = 0; ts && i < 2; i++)
		if (ts[i].tv_nsec != UTIME_NOW && ts[i].tv_nsec != UTIME_OMIT &&
		    (ts[i].tv_nsec < 0 || ts[i].tv_nsec > 999999999))
			return -EINVAL;
	if (null_path) {
		/* futimens(fd, ts): the held host fd */
		if (dirfd == AT_FDCWD)
			return -EFAULT;
		if (flags)
			return -EINVAL;
		n = xmalloc(sizeof *n);
		r = vfs_fd_node(VFS_OF(c), c->task, dirfd, n, &hfd);
		if (r < 0)
			return r;
		if (n->opath)
			return -EBADF;
		if (n->kind == VN_FD) {
			r = fd_meta_ok(c, n);
			if (r < 0)
				return r;
		} else if (n->kind != VN_BACKEND) {
			return -EROFS;
		}
	} else {
		r = attr_lookup(c, dirfd, path, flags, &n, &hfd, 0);
		if (r < 0)
			return r;
	}
	if (ts && ts[0].tv_nsec == UTIME_OMIT && ts[1].tv_nsec == UTIME_OMIT)
		return 0;
	int now = !ts || (ts[0].tv_nsec == UTIME_NOW && ts[1].tv_nsec == UTIME_NOW);
	if (!vfs_owner(c->task, &n->st)) {
		if (!now)
			return -EPERM;
		r = vfs_permission_node(c->task, n, MAY_WRITE);
		if (r < 0)
			return r;
	}
	if (n->kind == VN_FD)          /* a memfd (fd_meta_ok): the gofer sets it */
		return vfs_memfd_attr(VFS_OF(c), hfd, 0, ts, 1);
	if (n->kind != VN_BACKEND)
		return -EROFS;
	unsigned long gen0 = vfs_cache_gen(VFS_OF(c));
	gofer_expect_identity(n->st.st_dev, n->st.st_ino); /* the object checked */
	r = VFS_BE(VFS_OF(c), utimens, n->mnt->export, n->rel, ts, flags & AT_SYMLINK_NOFOLLOW);
	gofer_expect_identity(0, 0);
	if (r == -ESTALE)
		r = -ENOENT; /* renamed away meanwhile */
	vfs_refresh_since(VFS_OF(c), n->mnt, n->rel, &n->st, r == 0 ? hfd : -1, gen0);
	return r;
}

long sys_utimensat(struct sc_call *c)
{
	struct timespec ts[2];
	int r;

	if (c->args[2]) {
		r = sc_read_guest(c, c->args[2], ts, sizeof ts);
		if (r < 0)
			return r;
	}
	return do_utimens(c, ARG_INT(c, 0), c->str[1], c->args[1] == 0,
			  c->args[2] ? ts : NULL, ARG_INT(c, 3));
}

static long do_futimesat(struct sc_call *c, int dirfd, const char *path, uint64_t tvp)
{
	struct timeval tv[2];
	struct timespec ts[2];
	int r;

	if (!tvp)
		return do_utimens(c, dirfd, path, 0, NULL, 0);
	r = sc_read_guest(c, tvp, tv, sizeof tv);
	if (r < 0)
		return r;
	for (int i = 0; i < 2; i++) {
		if (tv[i].tv_usec < 0 || tv[i].tv_usec >= 1000000)
			return -EINVAL;
		ts[i].tv_sec = tv[i].tv_sec;
		ts[i].tv_nsec = tv[i].tv_usec * 1000;
	}
	return do_utimens(c, dirfd, path, 0, ts, 0);
}

long sys_utimes(struct sc_call *c)
{
	return do_futimesat(c, AT_FDCWD, c->str[0], c->args[1]);
}

long sys_futimesat(struct sc_call *c)
{
	return do_futimesat(c, ARG_INT(c, 0), c->str[1], c->args[2]);
}

long sys_utime(struct sc_call *c)
{
	struct utimbuf ub;
	struct timespec ts[2];
	int r;

	if (!c->args[1])
		return do_utimens(c, AT_FDCWD, c->str[0], 0, NULL, 0);
	r = sc_read_guest(c, c->args[1], &ub, sizeof ub);
	if (r < 0)
		return r;
	ts[0] = (struct timespec){ .tv_sec = ub.actime };
	ts[1] = (struct timespec){ .tv_sec = ub.modtime };
	return do_utimens(c, AT_FDCWD, c->str[0], 0, ts, 0);
}

/* ---- inotify: watch the gofer's file through the held inotify instance ----
 *
 * The guest's inotify fd (pidfd_getfd) gets the watch from the gofer
 * (GOFER_OP_WATCH), on the object the walk found and the sentry checked on
 * the guest's credentials: a directory as itself, anything else as its name
 * in its parent directory, with IN_DONT_FOLLOW (the walk already followed
 * what the guest asked to follow), from a gofer thread's own working
 * directory (fchdir to its fd). The sentry once did it itself the same way,
 * and its filter then had fchdir and unshare(CLONE_FS): red team 72 made a
 * working directory in a guest task's directory (the guest procfs's
 * "PID/fd/N", a host directory the caller gave as stdio) and bound a socket
 * by a relative path there. The sentry has neither call now; its working
 * directory is its own root's "/".
 * Events are the kernel's on that inode: what the guest does through the
 * gofer (creates, renames, unlinks in the overlay or a bind) and natively
 * (writes through held fds), and on host-backed mounts what the host does. */
static int inotify_watched;

int sc_inotify_watched(void)
{
	return __atomic_load_n(&inotify_watched, __ATOMIC_ACQUIRE);
}

static long add_watch(struct sc_call *c)
{
	cleanup_free struct vfs_node *n = NULL, *pn = NULL;
	cleanup_fd int ifd = -1;
	uint32_t mask = (uint32_t)c->args[2];
	unsigned wf = 0;
	int r;

	if (mask & IN_DONT_FOLLOW)
		wf |= WALK_NOFOLLOW;
	if (mask & IN_ONLYDIR)
		wf |= WALK_DIRECTORY;
	ifd = task_getfd(c->task, ARG_INT(c, 0));
	if (ifd < 0)
		return -EBADF;
	r = fs_walk(c, AT_FDCWD, c->str[1], wf, &n);
	if (r < 0)
		return r;
	/* /proc/self/fd/N: the object the fd has open (before: EPERM) */
	if (!(mask & IN_DONT_FOLLOW)) {
		r = vfs_follow_magic(VFS_OF(c), c->task, n, NULL);
		if (r < 0)
			return r;
		if (r && (mask & IN_ONLYDIR) && !S_ISDIR(n->st.st_mode))
			return -ENOTDIR;
	}
	r = vfs_permission_node(c->task, n, MAY_READ);
	if (r < 0)
		return r;
	if (n->kind != VN_BACKEND)
		return -EPERM;   /* synthetic: nothing would ever change */
	/* A directory holding a hidden name: the kernel's events name each
	 * child, hidden or not, and on a host-backed mount come for the
	 * host's own opens. Before red team 15, --overlay none, a watch of
	 * /etc saw "shadow" IN_OPEN/IN_ACCESS at every login or sudo on the
	 * host (and named what the view hides: krb5.keytab, wireguard...).
	 * Refused as for a directory one may not read; an overlay's too
	 * (its merged directory has the sandbox's events only, but a root
	 * overlay whose lower layer has submounts is the host's directory
	 * read-only: gofer/setup.c). */
	r = vfs_watch_refused(n);
	if (r < 0)
		return r;
	/* Host files: what only says that someone read or opened them is the
	 * host's activity too (red team 32: a watch of /dev/tty, /dev/urandom,
	 * /etc/passwd under --overlay none or /usr/bin/sudo counted the host's
	 * opens and reads: logins, password prompts' keystrokes). Those events
	 * are left out of the mask; a watch left with none still exists (its
	 * wd, IN_IGNORED), as one that never fires. */
	uint32_t hostev = vfs_watch_host_events(n);
	if (hostev && (mask & IN_ALL_EVENTS & hostev)) {
		mask &= ~hostev;
		if (!(mask & IN_ALL_EVENTS))
			mask |= IN_UNMOUNT;
	}
	if (!S_ISDIR(n->st.st_mode)) {
		/* anything else by name in its parent, a directory of the
		 * same mount */
		char parent[PATH_MAX];
		char *slash = strrchr(n->path, '/');
		if (n->mroot || !slash)
			return -EPERM;   /* a file mount's root: no parent of its own */
		snprintf(parent, sizeof parent, "%.*s", (int)(slash - n->path), n->path);
		if (!parent[0])
			snprintf(parent, sizeof parent, "/");
		r = fs_walk(c, AT_FDCWD, parent, WALK_CANON, &pn);
		if (r < 0)
			return r;
		if (pn->kind != VN_BACKEND || pn->mnt != n->mnt)
			return -EPERM;
		mask |= IN_DONT_FOLLOW;
	}
	/* The gofer adds the watch on the object checked (GOFER_OP_WATCH: a
	 * directory as itself, anything else by name in its parent), from a
	 * thread's own working directory. The sentry may not take one (red
	 * team 72): its filter has no fchdir, no unshare, no inotify_add_watch
	 * (a working directory in a guest task's directory, the guest procfs
	 * or a host directory the caller gave as stdio, had a relative bind()
	 * make a socket inode there) */
	{
		void *ctx;
		const struct vfs_backend *be = vfs_backend(VFS_OF(c), &ctx);

		r = be->watch ? be->watch(ctx, n->mnt->export, n->rel, ifd, mask & ~IN_ONLYDIR,
					  n->st.st_dev, n->st.st_ino) : -EPERM;
		if (r == -ESTALE)
			r = -ENOENT; /* renamed away meanwhile */
	}
	if (r >= 0 && !__atomic_exchange_n(&inotify_watched, 1, __ATOMIC_ACQ_REL))
		gofer_set_close_barrier(); /* nor the gofer's close after the guest's */
	return r;
}

/* The walk, the permission check and the watch see one object: a file is
 * watched by name in its parent (the sentry's, or the gofer's, who checks the
 * object first), and a guest thread renaming another file onto that name in
 * between had the watch land on a file it may not read (red team round 7: a
 * process that dropped root got IN_OPEN/IN_MODIFY of root's 0600 file, which
 * it could not watch by its own name). ns_lock held alone keeps every guest
 * rename and unlink out meanwhile (inotify_add_watch is rare). */
long sys_inotify_add_watch(struct sc_call *c)
{
	pthread_rwlock_wrlock(&ns_lock);
	long r = add_watch(c);
	pthread_rwlock_unlock(&ns_lock);
	return r;
}

/* fadvise64(fd, offset, len, POSIX_FADV_DONTNEED), the one advice the filter
 * traps: answered here and never run. Natively it drops the clean pages of
 * the file from the page cache, and the guest's files of a bind (ro, rw or
 * cow: an overlay's lower file is the host's inode) and of the root's lower
 * layer are host files: a guest evicted the host's cache of /usr/bin/python3
 * or of a neighbour's shared data at will (every later reader, on the host
 * or in another sandbox, back to the disk), and with preadv2(RWF_NOWAIT)
 * could then tell which pages the host read since (red team 74; "Known
 * gaps", red team 31). The advice is advisory: 0, with Linux's errors for
 * the pinned file (ksys_fadvise64_64, vfs_fadvise, generic_fadvise): EBADF
 * for no fd or an O_PATH one, ESPIPE for a pipe or FIFO, EINVAL for a
 * negative length. The guest's own in-memory files (tmpfs, memfd) have
 * nothing to drop natively either. */
long sys_fadvise64(struct sc_call *c)
{
	int fd = sc_getfd(c, (int)c->args[0]);
	if (fd < 0)
		return fd;
	struct stat st;
	long ret = 0;
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0 || (fl & O_PATH))
		ret = -EBADF;
	else if (fstat(fd, &st) < 0)
		ret = -errno;
	else if (S_ISFIFO(st.st_mode))
		ret = -ESPIPE;
	else if ((int64_t)c->args[2] < 0)
		ret = -EINVAL;
	close(fd);
	return ret;
}
