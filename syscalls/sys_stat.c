/* syscalls/sys_stat.c - stat, lstat, newfstatat (glibc's fstat), statx,
 * statfs, fstatfs.
 *
 * Stats leave in the guest's view: ids mapped with idmap_*_to_guest, so a
 * stat of a path and a native fstat of the fd agree, and the virtual owner,
 * group and set-id bits of host files applied (vfs_view_stat; a native fstat
 * shows the host's). The final component is
 * re-stat'ed (WALK_FRESH) when the guest may have changed it natively
 * (fs/dcache.h: the written set).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/random.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "fs/procfs.h"
#include "common/log.h"
#include "common/sha.h"
#include "syscalls/sys_fs.h"

#ifndef AT_STATX_SYNC_TYPE
#define AT_STATX_SYNC_TYPE 0x6000
#endif
#ifndef STATX__RESERVED
#define STATX__RESERVED 0x80000000U
#endif

/* Stat of what path names (following a final /proc magic link to the open
 * file it stands for). */
static int stat_node(struct sc_call *c, struct vfs_node *n, int dirfd, const char *path,
		     int flags, struct stat *st, int *mnt_id);

static int stat_path(struct sc_call *c, int dirfd, const char *path, int flags,
		     struct stat *st, int *mnt_id)
{
	if (flags & ~(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH | AT_NO_AUTOMOUNT | AT_STATX_SYNC_TYPE))
		return -EINVAL;
	if (!path)
		return -EFAULT;
	/* this thread's cached node, not a malloc (fs/walk.h vfs_node_take) */
	struct vfs_node *n = vfs_node_take();
	int r = stat_node(c, n, dirfd, path, flags, st, mnt_id);
	vfs_node_give(n);
	return r;
}

static int stat_node(struct sc_call *c, struct vfs_node *n, int dirfd, const char *path,
		     int flags, struct stat *st, int *mnt_id)
{
	unsigned wf = WALK_FRESH;
	int r;

	if (flags & AT_SYMLINK_NOFOLLOW)
		wf |= WALK_NOFOLLOW;
	if (flags & AT_EMPTY_PATH)
		wf |= WALK_EMPTY_PATH;
	r = vfs_walk(VFS_OF(c), c->task, dirfd, path, wf, n);
	if (r < 0)
		return r;
	if (n->magic && !n->opath && S_ISLNK(n->st.st_mode) && !(flags & AT_SYMLINK_NOFOLLOW)) {
		int fd;
		r = procfs_open_magic(VFS_OF(c), c->task, n->rel, O_PATH, &fd);
		if (r < 0)
			return r;
		/* the object the link names, with the owners the view shows
		 * (a file of the view: the gofer's; anything else: ours) */
		struct vfs_node *o = xmalloc(sizeof *o);
		r = vfs_host_fd_node(VFS_OF(c), c->task, fd, o);
		close(fd);
		if (r == 0) {
			*st = o->st;
			vfs_view_stat(VFS_OF(c), st);
			if (mnt_id && o->mnt)
				*mnt_id = o->mnt->pos + 21;
		}
		free(o);
		return r;
	}
	/* mountinfo's id of the mount it is on (fs/vfs.c vfs_render_mounts) */
	if (mnt_id && n->mnt)
		*mnt_id = n->mnt->pos + 21;
	*st = n->st;
	if (n->kind == VN_BACKEND || n->kind == VN_FD)
		vfs_view_stat(VFS_OF(c), st);   /* virtual owner and set-id bits */
	/* a directory holding hidden subdirectories (/etc's sudoers.d,
	 * /etc/ssl's private): the host's link count has one per hidden one,
	 * the guest's listing none (issue 7); 1 (overlayfs's merged
	 * directories: "unknown") is left. A held fd's fstat is native and
	 * still counts them (documented: ARCHITECTURE.md). */
	if (n->kind == VN_BACKEND && n->mnt && n->mnt->kind == VFS_MNT_GOFER && n->mnt->hidden &&
	    S_ISDIR(st->st_mode) && st->st_nlink > 2 && vfs_hides_child(n->mnt, n->rel)) {
		unsigned k = vfs_hidden_subdirs(VFS_OF(c), n->mnt, n->rel);
		if (st->st_nlink >= 2 + k)
			st->st_nlink -= k;
	}
	return 0;
}

static long do_stat(struct sc_call *c, int dirfd, const char *path, int flags, uint64_t buf)
{
	struct stat st;
	int r = stat_path(c, dirfd, path, flags & ~AT_STATX_SYNC_TYPE, &st, NULL);

	if (r < 0)
		return r;
	return sc_write_guest(c, buf, &st, sizeof st);
}

long sys_stat(struct sc_call *c)
{
	return do_stat(c, AT_FDCWD, c->str[0], 0, c->args[1]);
}

long sys_lstat(struct sc_call *c)
{
	return do_stat(c, AT_FDCWD, c->str[0], AT_SYMLINK_NOFOLLOW, c->args[1]);
}

long sys_newfstatat(struct sc_call *c)
{
	return do_stat(c, ARG_INT(c, 0), c->str[1], ARG_INT(c, 3), c->args[2]);
}

static struct statx_timestamp stx_ts(struct timespec ts)
{
	return (struct statx_timestamp){ .tv_sec = ts.tv_sec, .tv_nsec = ts.tv_nsec };
}

long sys_statx(struct sc_call *c)
{
	int flags = ARG_INT(c, 2);
	unsigned mask = ARG_UINT(c, 3);
	struct statx sx;
	struct stat st;
	int r;

	if ((flags & AT_STATX_SYNC_TYPE) == AT_STATX_SYNC_TYPE)
		return -EINVAL;
	if (mask & STATX__RESERVED)
		return -EINVAL;
	int mid = -1;
	r = stat_path(c, ARG_INT(c, 0), c->str[1], flags, &st, &mid);
	if (r < 0)
		return r;
	memset(&sx, 0, sizeof sx);
	sx.stx_mask = STATX_BASIC_STATS;
	if (mid >= 0) {
		sx.stx_mask |= STATX_MNT_ID;
		sx.stx_mnt_id = (uint64_t)mid;
	}
	sx.stx_blksize = st.st_blksize;
	sx.stx_nlink = st.st_nlink;
	sx.stx_uid = st.st_uid;
	sx.stx_gid = st.st_gid;
	sx.stx_mode = st.st_mode;
	sx.stx_ino = st.st_ino;
	sx.stx_size = st.st_size;
	sx.stx_blocks = st.st_blocks;
	sx.stx_atime = stx_ts(st.st_atim);
	sx.stx_mtime = stx_ts(st.st_mtim);
	sx.stx_ctime = stx_ts(st.st_ctim);
	sx.stx_rdev_major = major(st.st_rdev);
	sx.stx_rdev_minor = minor(st.st_rdev);
	sx.stx_dev_major = major(st.st_dev);
	sx.stx_dev_minor = minor(st.st_dev);
	return sc_write_guest(c, c->args[4], &sx, sizeof sx);
}

/* f_fsid as the guest sees it (red team 18): the host's is an identifier
 * of the host's disk (ext4 and xfs derive it from the file system's UUID,
 * tmpfs from a host device number), the same in every sandbox on that
 * host and across its reboots: `stat -f` of a bind (or of /usr with
 * --overlay none) named it. Now SHA-256 of a random key of this sandbox's
 * and the host's value, cut to 64 bits: one file system keeps one value
 * within the run (and two keep two), nothing links it to the host or to
 * another sandbox. 0 (no fsid) stays 0. */
static uint8_t fsid_key[32];
static pthread_once_t fsid_once = PTHREAD_ONCE_INIT;

static void fsid_key_init(void)
{
	if (getrandom(fsid_key, sizeof fsid_key, 0) != (ssize_t)sizeof fsid_key)
		die("getrandom: %s", strerror(errno));
}

static void virt_fsid(struct statfs *sf)
{
	static const fsid_t zero;
	if (!memcmp(&sf->f_fsid, &zero, sizeof zero))
		return;
	pthread_once(&fsid_once, fsid_key_init);
	struct sha_ctx h;
	uint8_t d[32];
	sha256_init(&h);
	sha_update(&h, fsid_key, sizeof fsid_key);
	sha_update(&h, &sf->f_fsid, sizeof sf->f_fsid);
	sha_final(&h, d);
	memcpy(&sf->f_fsid, d, sizeof sf->f_fsid);
}

/* Figures for synthetic directories (tmpfs-like) and /proc. */
static void synth_statfs(const struct vfs_node *n, struct statfs *sf)
{
	memset(sf, 0, sizeof *sf);
	sf->f_type = n->kind == VN_PROC ? PROC_SUPER_MAGIC : TMPFS_MAGIC;
	sf->f_bsize = 4096;
	sf->f_frsize = 4096;
	sf->f_namelen = NAME_MAX;
	sf->f_flags = ST_RDONLY | ST_NOSUID | ST_NODEV;
	if (n->kind == VN_PROC)
		sf->f_flags = ST_NOSUID | ST_NODEV | ST_NOEXEC;
}

long sys_statfs(struct sc_call *c)
{
	cleanup_free struct vfs_node *n = NULL;
	struct statfs sf;
	int r = fs_walk(c, AT_FDCWD, c->str[0], 0, &n);

	if (r < 0)
		return r;
	if (n->kind == VN_BACKEND) {
		r = VFS_BE(VFS_OF(c), statfs, n->mnt->export, n->rel, &sf);
		if (r < 0)
			return r;
		if (!n->mnt->writable && !n->mnt->dev)
			sf.f_flags |= ST_RDONLY;
	} else {
		synth_statfs(n, &sf);
	}
	virt_fsid(&sf);
	return sc_write_guest(c, c->args[1], &sf, sizeof sf);
}

long sys_fstatfs(struct sc_call *c)
{
	cleanup_free struct vfs_node *n = xmalloc(sizeof *n);
	cleanup_fd int hfd = -1;
	struct statfs sf;
	int r = vfs_fd_node(VFS_OF(c), c->task, ARG_INT(c, 0), n, &hfd);

	if (r < 0)
		return r;
	if (n->kind == VN_SYNTH || n->kind == VN_PROC) {
		synth_statfs(n, &sf);
	} else if (n->kind == VN_BACKEND && n->mnt->cow &&
		   VFS_BE(VFS_OF(c), statfs, n->mnt->export, "", &sf) == 0) {
		/* a cow view: the gofer's figures, as statfs by path gives
		 * them (the upper layer's free space, the lower's used space
		 * added, h_statfs); the fd's own (overlayfs: the upper layer
		 * alone) said another size (issue 7). One file system: its
		 * root's figures are every file's. */
	} else {
		if (fstatfs(hfd, &sf) < 0)
			return -errno;
		/* a direct fd (fs/directfs.c) of a writable mount is the
		 * sentry's open through its read-only bind: the figures are
		 * the file system's, the flags the gofer's mount's */
		if (n->kind == VN_BACKEND && n->mnt->writable && (sf.f_flags & ST_RDONLY)) {
			struct statfs gsf;
			if (VFS_BE(VFS_OF(c), statfs, n->mnt->export, n->rel, &gsf) == 0)
				sf.f_flags = gsf.f_flags;
		}
		if (n->kind == VN_BACKEND && !n->mnt->writable && !n->mnt->dev)
			sf.f_flags |= ST_RDONLY;
	}
	virt_fsid(&sf);
	return sc_write_guest(c, c->args[1], &sf, sizeof sf);
}
