/* fs/vfs_priv.h - struct vfs (private to fs/). */
#ifndef MOAT_FS_VFS_PRIV_H
#define MOAT_FS_VFS_PRIV_H

#include <pthread.h>
#include <time.h>

#include "fs/dcache.h"
#include "fs/walk.h"
#include "fs/vmeta.h"
#include "fs/vxattr.h"

/* A directory that exists only because mount points lie beneath it (or is
 * a mount point itself): the names to list in it. */
struct vfs_synth {
	char *path;
	char **children;         /* NULL-terminated */
	size_t n;
};

struct vfs {
	struct sandbox *sb;
	int gofer_ctl;
	unsigned gen;            /* tells thread-local gofer connections apart */
	struct vfs_mount *mnts;  /* room for mcap: never moved (nodes point in) */
	_Atomic size_t nmnts;    /* grows with the guest's mounts (mount_lock) */
	size_t mcap;
	/* mkey[i]: mnts[i].plen << 8 | its path[1], set before nmnts
	 * publishes the entry: vfs_mount_for scans this array (4 bytes a
	 * mount) instead of two cache lines of every struct vfs_mount */
	uint32_t *mkey;
	pthread_mutex_t mount_lock;
	int spare[8];            /* private exports for the guest's tmpfs mounts */
	size_t nspare;
	struct vfs_synth *synth; /* every ancestor of a mount point, and "/" */
	size_t nsynth;
	struct dcache *dc;
	struct wset *ws;         /* files the guest may write natively (dcache.h) */
	struct inomap *im;       /* directories handed out */
	struct inomap *fim;      /* other files handed out (for /proc/<pid>/fd) */
	struct inomap *lim;      /* O_PATH symlink placeholders -> link path + identity */
	struct inomap *him;      /* files named by name_to_handle_at */
	uint64_t handle_key;     /* the tag of those handles (vfs_handle_tag) */
	struct inomap *tim;      /* O_TMPFILE files -> their directory (odev: O_EXCL) */
	/* host mount id -> export it belongs to, (id << 8) | (export + 1), 0
	 * free: learnt from the fds handed out (vfs_node_open), insert-only
	 * (the exports' host mounts are made at start), lock-free; a directory
	 * fd the inode map forgot is named again only in its own export's
	 * mounts (vfs_refind_dir). Full: unknown, and aliased mounts are
	 * skipped there. */
#define VFS_HMNT_SLOTS 1024
	_Atomic uint64_t hmnt[VFS_HMNT_SLOTS];
	int flink;               /* the gofer can link an O_TMPFILE file (Linux >= 6.10) */
	struct vmeta *vm;        /* virtual metadata of host files */
	struct vxattr *vx;       /* trusted.* and security.* attributes (fs/vxattr.c) */
	_Atomic unsigned long long privdev[GOFER_MAX_EXPORTS]; /* st_dev of private
				  * exports seen so far (0 = free slot) */
	_Atomic unsigned long long viewdev[GOFER_MAX_EXPORTS]; /* st_dev of the
				  * system view's host directories seen so far */
	_Atomic int viewdev_full;  /* one did not fit: sealed_file fails closed */
	dev_t memfd_dev;         /* st_dev of our memfds (never "(deleted)" files) */
	ino_t *memfd_own;        /* the guest's memfds' inodes (vfs_memfd_made) */
	size_t memfd_own_n;      /* how many recorded (a ring of VFS_MEMFD_OWN_MAX) */
	const struct vfs_backend *be;
	void *bectx;
	dev_t synth_dev;
	int *droots;             /* direct file access: root fd per export (-1: none) */
	size_t ndroots;
	int direct_owner;        /* the sentry's own stat shows owners as the
				  * gofer's does (rootless, and root-run with
				  * idmap.sentry_owners: directfs.c) */
	struct timespec ctime;   /* times of synthetic nodes */
	_Atomic unsigned long long pts_dev; /* vfs_pts_dev: 0 = not asked yet */
};

/* What one walk learned of shared mounts (see fs/dcache.h): the stats of
 * the components of `batch` from one gofer walk, kept only until that walk
 * (vfs_walk) ends, so a path is one round trip and not one per component. */
struct vfs_shared_scratch {
	const struct vfs *v;
	int idx;                 /* the mount's dcache key; -1: empty */
	int n, err;              /* as in struct gofer_walk */
	char batch[VFS_PATH_MAX];
	struct stat st[GOFER_WALK_MAX]; /* guest view (ids mapped) */
	/* the directory a relative walk started from (the guest's dirfd of
	 * fstatat(dirfd, name), openat(dirfd, name)...): the sentry's copy
	 * of that fd, its mount and path there, while the walk runs, so the
	 * first look-up of a name directly in it is one statx relative to
	 * the fd (vfs_direct_absent_at); hfd -1: none */
	int hfd;
	const struct vfs_mount *hm;
	char hrel[VFS_PATH_MAX];
};
/* Begin a walk's scope (returns the enclosing one, for vfs_scratch_end). */
struct vfs_shared_scratch *vfs_scratch_begin(struct vfs_shared_scratch *s);
void vfs_scratch_end(struct vfs_shared_scratch *prev);

/* fs/directfs.c: 0 with a read-only host fd of n (owner and group in the
 * guest's view), or -EAGAIN: ask the gofer. */
/* ... and *mnt, the host mount of the fd (0: unknown) */
int vfs_direct_open(struct vfs *v, const struct vfs_node *n, int flags, int *fd, struct stat *st,
		    uint64_t *mnt);
#define VFS_ABSENT_DENIED 2
#define VFS_PRESENT_STAT 3
#define VFS_PRESENT_LINK 4
int vfs_direct_absent(struct vfs *v, const struct vfs_mount *m, const char *rel,
		      struct stat *st, char *link, size_t linklen);
int vfs_direct_absent_at(struct vfs *v, const struct vfs_mount *m, int dfd, const char *name,
			 struct stat *st);
int vfs_direct_restat(struct vfs *v, const struct vfs_mount *m, const char *rel,
		      const struct stat *cst, struct stat *st);
/* The access ACL (VFS_ACL_XATTR) of rel, a regular file or directory whose
 * walk stat is st, read by the sentry itself where its stats show the host's
 * ids (v->direct_owner): the value's length in buf (0: none), or -EAGAIN
 * (ask the gofer) */
#define VFS_ACL_XATTR "system.posix_acl_access"
long vfs_direct_acl(struct vfs *v, const struct vfs_mount *m, const char *rel,
		    const struct stat *st, void *buf, size_t size);
/* The sentry's own listing of a directory (fs/directfs.c): can it list
 * directories of m (1/0), and each regular file and subdirectory of dir
 * with its lstat (host ids, as the gofer's DIRSTAT gives them) passed to
 * put, at most max of them: how many, or -EAGAIN (ask the gofer). */
int vfs_direct_can_list(struct vfs *v, const struct vfs_mount *m);
int vfs_direct_dirstat(struct vfs *v, const struct vfs_mount *m, const char *dir,
		       void (*put)(void *, const char *, size_t, struct stat *), void *arg, int max);

/* The guest holds (or may hold) a writable fd of this file: its stats
 * are never answered from the dentry cache again (dcache.h). */
void vfs_note_written(struct vfs *v, const struct stat *st);

const struct vfs_synth *vfs_synth_find(struct vfs *v, const char *path);
void vfs_synth_stat(struct vfs *v, const char *path, struct stat *st);

#endif
