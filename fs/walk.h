/* fs/walk.h - the VFS internals the file syscall handlers use: the path walk,
 * the node it returns, backend calls, the dentry cache and the inode map.
 *
 * A node is a canonical absolute guest path plus what lives there:
 *   VN_BACKEND  a file of a gofer mount (mnt, rel = path inside the export)
 *   VN_SYNTH    a synthetic directory (the synthetic root, a mount point or an
 *               ancestor of one that its parent mount does not contain)
 *   VN_PROC     a node of a PROC mount (rel = path inside /proc)
 *   VN_SYMMNT   a SYMLINK mount point (the node is a symlink to mnt->target)
 *   VN_FD       an open guest fd the VFS cannot name (a plain file, a pipe...):
 *               only valid as the AT_EMPTY_PATH target
 * Every stat in a node is in the guest's view: ids already mapped with
 * idmap_*_to_guest.
 *
 * Lifetime: struct vfs_mount entries live as long as the vfs; nodes are plain
 * values on the caller's stack (no references to drop).
 */
#ifndef MOAT_FS_WALK_H
#define MOAT_FS_WALK_H

#include <limits.h>
#include <pthread.h>
#include <stddef.h>
#include <string.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/types.h>
#include <time.h>

#include "common/util.h"
#include "fs/vfs.h"
#include "gofer/gofer.h"

struct task;

/* Internal mount kind for the synthetic root (no mount at "/"). */
#define VFS_MNT_SYNTH 0

struct vfs_mount {
	int idx;                 /* index in v->mnts (dcache key) */
	int kind;                /* enum vfs_mount_kind or VFS_MNT_SYNTH */
	char *path;              /* canonical guest path */
	size_t plen;             /* strlen(path); 0 for "/" so rel = path + plen + 1 */
	int export;
	_Atomic int writable;    /* changes with a guest's remount */
	int dev;
	int private_fs;          /* see vfs_mount_spec */
	int shared;              /* see vfs_mount_spec: never cached */
	int cow;                 /* see vfs_mount_spec */
	int system;              /* see vfs_mount_spec */
	int host_view;           /* see vfs_mount_spec */
	int aliased;             /* see vfs_mount_spec */
	char **hidden;           /* NULL-terminated, or NULL */
	_Atomic(unsigned char *) hidden_dirs; /* per hidden name, 2: a directory in the
				  * sentry's view, 1: not; NULL: not looked at
				  * yet (vfs_hidden_subdirs) */
	char *target;            /* SYMLINK */
	char *sub;               /* a guest's bind of a subdirectory: the path of
				  * its root inside the export (NULL: the export's
				  * root); every node's rel starts with it */
	size_t slen;             /* strlen(sub) */
	_Atomic unsigned long long root_dev; /* st_dev of its root as the guest sees
				  * it, +1 (0: not asked yet): mountinfo's
				  * major:minor (vfs_render_mounts) */
	dev_t sub_dev;           /* the bound directory's identity, when the */
	ino_t sub_ino;           /* export keeps it (not cow): 0 0 otherwise */
	int can_write;           /* the export takes writes (a remount may make it rw) */
	int guest;               /* made by the guest's mount(2) */
	int pos;                 /* index in v->mnts (idx, the dcache key, is the
				  * source's for a guest's bind: one cache per tree) */
	_Atomic int gone;        /* unmounted (entries are never freed or moved) */
	char src[32];            /* what /proc/mounts shows as its source */
};

enum vfs_node_kind { VN_BACKEND = 1, VN_SYNTH, VN_PROC, VN_SYMMNT, VN_FD };

struct vfs_node {
	char path[VFS_PATH_MAX]; /* canonical guest path of the node */
	char xrel[VFS_PATH_MAX]; /* rel when it is not a tail of path: a PROC
				  * directory mount's "<target><path inside>", a
				  * guest bind of a subdirectory's "<sub>/<path
				  * inside>" (only its used part is copied) */
	const struct vfs_mount *mnt;
	const char *rel;         /* the path inside the mount's export: points
				  * into path (or, for a PROC file mount, at
				  * mnt->target; for a PROC directory mount, /sys,
				  * or a mount with a sub, into xrel) */
	int mroot;               /* the node is its mount's root */
	int kind;
	int exists;              /* 0: negative final component (WALK_CREATE) */
	int magic;               /* PROC magic link (fd/<n>) */
	int magic_text;          /* PROC link Linux treats as magic (<pid>/exe, cwd,
				  * root: RESOLVE_NO_MAGICLINKS refuses it), though
				  * the walk follows its text */
	int opath;               /* from vfs_fd_node: the guest fd is a placeholder
				  * for an O_PATH open of this node (a symlink,
				  * a file, or a directory we may not read) */
	int trailing_slash;      /* the walked path ended in '/' */
	int last_dot;            /* final component was "." (1) or ".." (2) */
	struct stat st;          /* guest-view stat (valid if exists) */
	struct stat pst;         /* parent directory's stat (final component) */
};

/* Walk flags. */
#define WALK_NOFOLLOW      0x001 /* don't follow a final symlink */
#define WALK_DIRECTORY     0x002 /* final must be a directory (ENOTDIR) */
#define WALK_CREATE        0x004 /* a missing final component is not an error:
				  * exists = 0 (its parent exists and is a dir) */
#define WALK_FRESH         0x008 /* re-stat the final component if it may have changed natively (dcache.h) */
#define WALK_EMPTY_PATH    0x010 /* "" names dirfd itself */
#define WALK_BENEATH       0x020 /* RESOLVE_BENEATH */
#define WALK_IN_ROOT       0x040 /* RESOLVE_IN_ROOT */
#define WALK_NO_SYMLINKS   0x080 /* RESOLVE_NO_SYMLINKS */
#define WALK_NO_MAGICLINKS 0x100 /* RESOLVE_NO_MAGICLINKS */
#define WALK_NO_XDEV       0x200 /* RESOLVE_NO_XDEV */
#define WALK_EXEC_PERM     0x400 /* (unused by walk: callers' convenience) */
#define WALK_CREATE_GUESS  0x1000 /* with WALK_CREATE: a final component the
				      * sentry may not look up itself (its uid
				      * may not search the directory) on a
				      * writable mount is taken as absent,
				      * uncached (be_lookup): only for a create
				      * that the gofer makes with O_EXCL */
#define WALK_CREATE_EXCL   0x2000 /* with WALK_CREATE_GUESS: the guest's own
				      * O_CREAT|O_EXCL, whose answer for a name
				      * that exists is EEXIST whatever it is: an
				      * uncached final component on a writable,
				      * non-shared mount is taken as absent
				      * without the sentry's own look-up */
#define WALK_CANON         0x800 /* path is a canonical guest path (a node's):
				      * from the sandbox's "/", not the task's
				      * chroot root */

#define VFS_MAXSYMLINKS 40

/* The one path walk. dirfd: AT_FDCWD or a guest fd. Returns 0 or -errno. */
int vfs_walk(struct vfs *v, struct task *t, int dirfd, const char *path,
	     unsigned flags, struct vfs_node *out);

/* Drop the pages of the calling thread's cached walk scratch (~145 KiB,
 * ~32 KiB of it touched by a walk), if any (MADV_DONTNEED: the allocation
 * stays cached): the sentry's main thread keeps the one its set-up and first
 * exec used through an idle run otherwise. */
void vfs_walk_release(void);
/* A node for a walk's result, this thread's cached one if it is free
 * (else malloc'd); given back with vfs_node_give (freed if another is
 * cached meanwhile). For a hot path: no malloc arena lock per call. */
struct vfs_node *vfs_node_take(void);
void vfs_node_give(struct vfs_node *n);

/* Look up one canonical absolute path whose parents are already resolved
 * (no symlinks in them). ahead: the components still to walk (a batching
 * hint for the gofer, may be NULL). Returns 0 (out->exists says if found) or
 * -errno. */
int vfs_lookup(struct vfs *v, struct task *t, const char *path, const char *ahead,
	       unsigned flags, struct vfs_node *out);

/* Identify a guest fd: *hostfd gets the duplicated host fd (caller closes).
 * Directories are named through the inode map; other fds give VN_FD. */
int vfs_fd_node(struct vfs *v, struct task *t, int guestfd, struct vfs_node *out,
		int *hostfd);

/* The same for a host fd the caller holds (e.g. a magic link's target). A
 * directory whose recorded name no longer leads to it (renamed since) is
 * found again by its object (vfs_refind_dir); a removed one is VN_FD. */
int vfs_host_fd_node(struct vfs *v, struct task *t, int hostfd, struct vfs_node *out);

/* 1 when hostfd (a guest fd's host file) is an O_PATH placeholder's stand-in
 * (the sealed memfd reopened with access mode 3), else 0: calls Linux refuses
 * on an O_PATH fd (ioctl, flock, fcntl locks) answer EBADF for it. */
int vfs_fd_is_placeholder(struct vfs *v, int hostfd);

/* Follow a final /proc magic link (fd/<n>: a walk without WALK_NOFOLLOW stops
 * at it) to the object the fd has open, as Linux's path calls do: n becomes
 * that object's node (vfs_host_fd_node: the VFS's name for a served file or
 * directory, an O_PATH placeholder's object, else VN_FD), opath cleared.
 * *hostfd (may be NULL) gets the guest's file (caller closes). 0 when n is
 * not such a link (n unchanged, *hostfd -1), 1 when followed, or -errno. */
int vfs_follow_magic(struct vfs *v, struct task *t, struct vfs_node *n, int *hostfd);

/* Objects, not names: fd (a host directory fd, stat st) was last known as
 * oldpath; ask the gofer where that directory is now (it walks ".." up from
 * the object) and look it up there. 0 with the node, -ENOENT if it was
 * removed, -ESTALE if it cannot be named (read-only or synthetic mount).
 * oldpath NULL: no name is known; every gofer mount is tried. */
int vfs_refind_dir(struct vfs *v, struct task *t, int fd, const struct stat *st,
		   const char *oldpath, struct vfs_node *n);

/* The task's working directory as a node. The cwd is held as an object (a
 * host O_PATH fd kept in its fs_ctx, for directories of writable mounts) plus
 * the name it was last seen by: when that name no longer leads to the
 * object, the name is found again (and stored); a removed cwd is -ENOENT. */
int vfs_cwd_node(struct vfs *v, struct task *t, struct vfs_node *out);
/* O_TMPFILE: an unnamed regular file in directory dir (a gofer mount),
 * remembered (host identity -> dir's mount, O_EXCL) so that linkat can name
 * it. -EOPNOTSUPP where the gofer could not link it later (Linux < 6.10 lets
 * only CAP_DAC_READ_SEARCH in the initial namespace flink). */
int vfs_tmpfile_open(struct vfs *v, const struct vfs_node *dir, int flags, mode_t mode,
		     int *fd, struct stat *st);
/* linkat of the file behind host fd hostfd to the new name nn (checked by the
 * caller: absent, writable). 1 if hostfd is an O_TMPFILE file of ours (then
 * *err is the result), 0 if not. */
int vfs_tmpfile_link(struct vfs *v, int hostfd, const struct vfs_node *nn, int *err);
/* chdir/fchdir to n (hostfd: the guest's fd of it for fchdir, or -1). */
int vfs_cwd_set(struct vfs *v, struct task *t, const struct vfs_node *n, int hostfd);
/* chroot to n (a directory; "/" is the sandbox's root again). The root is
 * held as the cwd is: the name plus, on writable or shared mounts, the
 * object (an O_PATH fd and its identity). */
void vfs_root_set(struct vfs *v, struct task *t, const struct vfs_node *n);
/* A chrooted task's root renamed since it was last seen (by the guest or
 * the host): store its name now, found from the object. Nothing when the
 * name still leads to it (one lookup), when t has no root of its own, or
 * when the object has no name (removed: the old name stays, under which
 * nothing is found). Callers: the walk, getcwd, /proc/<pid>/root. */
void vfs_root_refresh(struct vfs *v, struct task *t);

/* Read a symlink node's target (VN_SYMMNT, VN_PROC or VN_BACKEND). Returns
 * length (no NUL) or -errno (-EINVAL: not a link). */
long vfs_node_readlink(struct vfs *v, struct task *t, const struct vfs_node *n,
		       char *buf, size_t len);

/* Open a node for the guest (no permission checks: callers do them). Returns
 * 0 and a host fd; directories are recorded in the inode map.
 * O_PATH|O_NOFOLLOW of a symlink: seccomp's ADDFD cannot install an O_PATH
 * file, so the fd is a sealed empty memfd that vfs_fd_node() recognises as
 * the link (fstatat/readlinkat/... with AT_EMPTY_PATH work on it; native
 * read/write on it see an empty sealed file instead of EBADF). */
int vfs_node_open(struct vfs *v, struct task *t, const struct vfs_node *n,
		  int flags, mode_t mode, int *fd, struct stat *st);

/* Permission check against the task's virtual credentials. mask: MAY_*
 * st is a real file's guest-view stat (never one with virtual metadata
 * applied); the rules are in fs/vfs.c. */
#define MAY_EXEC  1
#define MAY_WRITE 2
#define MAY_READ  4
int vfs_permission(struct task *t, const struct stat *st, int mask);
/* vfs_permission, then, root-run, the host file's POSIX access ACL
 * (fs/vfs.c acl_permission): of the node n, or of its parent directory
 * (n->pst). */
int vfs_permission_node(struct task *t, const struct vfs_node *n, int mask);
int vfs_permission_parent(struct task *t, const struct vfs_node *n, int mask);
/* The same with the real ids (access(2) without AT_EACCESS). */
int vfs_permission_real(struct task *t, const struct stat *st, int mask);
/* The check of a kernel object the guest made (a memfd, a pipe: st its
 * fstat with ids mapped, vfs_map_stat), the sandbox's own as a private
 * file is: the owner's, group's, other's bits, and a root guest's
 * CAP_DAC_OVERRIDE (Linux's may_open on the object's inode). */
int vfs_permission_obj(struct task *t, const struct stat *st, int mask);
/* May t act as the owner of st (chmod, utimes, sticky directories)? On
 * private files: fsuid 0 or the owner; on host files: only the owner. */
int vfs_owner(struct task *t, const struct stat *st);
/* Is t the owner of st itself (fsuid; no CAP_FOWNER): chown's rules. */
int vfs_is_owner(struct task *t, const struct stat *st);
/* Is st a sealed file of the system view (fs/vfs.c sealed_file)? No task
 * may read one, so a directory fd on one is an O_PATH placeholder. */
int vfs_sealed(struct task *t, const struct stat *st);

/* ---- virtual metadata of host files (fs/vmeta.c) ---- */
/* Is n a file of a host-backed export (virtual owners and set-id bits)? */
int vfs_node_is_host(const struct vfs_node *n);
/* Apply the virtual owner, group and set-id bits to a real stat (what the
 * stat family shows the guest). */
void vfs_view_stat(struct vfs *v, struct stat *st);
/* Is n a device node the guest made (its host file an empty regular one,
 * vmeta_set_dev)? A call that acts on the node by its type (truncate: EINVAL,
 * exec: EACCES) must not act on that file. */
int vfs_node_vdev(struct vfs *v, const struct vfs_node *n);
/* Record them for the file whose real stat is real (see vmeta.h). */
int vfs_meta_update(struct vfs *v, const struct stat *real, uid_t uid, gid_t gid,
		    mode_t setid, int set_mode);
/* The file is gone (its last link removed by the sentry). */
void vfs_meta_forget(struct vfs *v, const struct stat *real);
/* a device node the guest made: real is its (empty, regular) host file */
int vfs_meta_set_dev(struct vfs *v, const struct stat *real, mode_t type, dev_t rdev);
/* the sandbox's trusted. and security. attributes (fs/vxattr.h) */
struct vxattr *vfs_vxattr(struct vfs *v);
/* File handles (fs/vfs.c): the tag that authenticates one, remember the
 * name a handle was made for, find it again (0, or -ENOENT). */
uint64_t vfs_handle_tag(struct vfs *v, dev_t dev, ino_t ino);
/* the host st_dev a handle carries, sealed by a keyed permutation (and back) */
uint64_t vfs_handle_dev_seal(struct vfs *v, uint64_t dev);
uint64_t vfs_handle_dev_unseal(struct vfs *v, uint64_t sealed);
void vfs_handle_put(struct vfs *v, const struct vfs_node *n);
int vfs_handle_path(struct vfs *v, dev_t dev, ino_t ino, char *buf, size_t len);
/* A host file the sandbox just created as uid/gid (fs/vmeta.h vmeta_make). */
int vfs_meta_make(struct vfs *v, const struct stat *real, uid_t uid, gid_t gid, mode_t setid, int set_mode);

/* The guest's mount(2) and umount2, on the sandbox's own mount table
 * (fs/vfs.c; never the host's). path: a canonical absolute guest path of an
 * existing directory (the caller walked it). 0 or -errno. */
/* a new, empty tmpfs (one of the spare private exports: -ENOMEM when none is left) */
int vfs_mount_tmpfs(struct vfs *v, const char *path, int rdonly, const char *src);
/* the mount a canonical guest path lies in (the longest mount point) */
const struct vfs_mount *vfs_mount_for(struct vfs *v, const char *path);
/* MS_BIND: the directory src (a node of a gofer mount: its root or a
 * subdirectory, which becomes the new mount's root) again at path */
int vfs_mount_bind(struct vfs *v, const struct vfs_node *src, const char *path, int rdonly);
/* MS_REMOUNT: read-only or back to read-write (-EPERM for an export the
 * gofer serves read-only); -EINVAL when path is no mount point */
int vfs_remount(struct vfs *v, const char *path, int rdonly);
/* umount2: -EINVAL when path is no mount point, -EBUSY for the sandbox's own
 * mounts and for a mount with others beneath it (unless detach: they go too) */
int vfs_umount(struct vfs *v, const char *path, int detach);

/* 0 if the mount of a node may be modified, else -EROFS / -EACCES. */
int vfs_mount_write_err(const struct vfs_mount *m);
/* a missing name created in a procfs mount: -EROFS in /sys, else -ENOENT */
int vfs_proc_create_err(const struct vfs_mount *m);

/* Children names of a synthetic directory or mount-point names to merge into
 * a listing of path. Returns a NULL-terminated array owned by the vfs (or NULL). */
char *const *vfs_synth_children(struct vfs *v, const char *path);

/* Is rel (inside mount m) hidden? */
int vfs_is_hidden(const struct vfs_mount *m, const char *rel);
/* Does a hidden name of m lie directly in the directory dir (a rel)? */
int vfs_hides_child(const struct vfs_mount *m, const char *dir);
/* -EACCES for a directory a watch (inotify_add_watch, F_NOTIFY) may not be
 * put on: one directly holding a hidden name, whose events name the hidden
 * child or, host-backed, come for the host's own opens there; else 0 */
int vfs_watch_refused(const struct vfs_node *n);
/* The inotify events a watch of n must not carry (red team 32): on a mount
 * of host files the host's own processes act too, so the events that only
 * say someone read or opened it (IN_ACCESS, IN_OPEN, IN_CLOSE_NOWRITE) are
 * the host's activity; on the device mount (the host's null, zero, random,
 * urandom, tty) and for any node that is not a file, directory or symlink
 * IN_MODIFY and IN_CLOSE_WRITE are too (a write there changes no content
 * the guest could read). 0 for private, cow and synthetic nodes. */
uint32_t vfs_watch_host_events(const struct vfs_node *n);
/* hidden name h (export-relative) is an entry of directory dir (dl bytes) */
static inline int vfs_hidden_in_dir(const char *h, const char *dir, size_t dl)
{
	const char *sl = strrchr(h, '/');
	size_t pl = sl ? (size_t)(sl - h) : 0;
	return pl == dl && !strncmp(h, dir, dl);
}
/* How many of those are directories (counted in the host's st_nlink of dir,
 * absent from the guest's listing): fs/directfs.c. */
unsigned vfs_hidden_subdirs(struct vfs *v, const struct vfs_mount *m, const char *dir);

/* Is st (a VN_FD's stat) a memfd, an anonymous file in no file system? */
int vfs_is_memfd(struct vfs *v, const struct stat *st);
/* A memfd the guest made (sys_memfd_create: the sentry makes it and
 * records its inode here): vfs_memfd_made records, vfs_memfd_guests asks
 * (st a memfd's host fstat). A memfd a host peer sent in or the caller gave
 * is none of these, whatever fd number holds it. */
void vfs_memfd_made(struct vfs *v, const struct stat *st);
int vfs_memfd_guests(struct vfs *v, const struct stat *st);
/* One of the caller's stdio objects (sb->caller_stdio: moat's fds 0-2 as
 * the caller gave them; st a host fstat, device and inode compared): the
 * access (MAY_READ, MAY_WRITE) the caller's descriptions of it give
 * together, or -1 for any other object. What the caller gave is a
 * description, not the file (red team 83). */
int vfs_caller_stdio_access(struct vfs *v, const struct stat *st);
/* fd (a host fd) is on a host mount that serves one of the sandbox's
 * exports (one the VFS opened a file through: the guest's binds, its
 * private tmpfs); 0 for a mount it never saw (an object the caller or a
 * host peer passed in) */
int vfs_fd_on_export(struct vfs *v, int fd);

/* Guest-view stat of a host fd (ids mapped). */
void vfs_map_stat(struct vfs *v, struct stat *st);
struct sandbox *vfs_sandbox(struct vfs *v);

/* After rename(from, to) of the object st succeeded (not RENAME_EXCHANGE):
 * the names recorded for open files (and, for a directory, everything
 * beneath it) move to to, so an fd of a renamed file keeps naming it
 * (fchmod, /proc/self/fd/N). A file: one entry; a directory: a scan. */
void vfs_renamed(struct vfs *v, const struct stat *st, const char *from, const char *to);

/* Dentry cache invalidation (after a mutation): the entry for rel, and with
 * subtree also everything beneath it. */
void vfs_invalidate(struct vfs *v, const struct vfs_mount *m, const char *rel, int subtree);
/* After the sentry changed rel's metadata or created it (known: its stat as
 * the walk or the create saw it, ids in the guest's view): drop the entry,
 * and on a writable host-directory bind store it again from the sentry's own
 * fstat of the same inode with known's owner (vfs_direct_restat), so the next
 * call on the name (tar: create, fchmod, fchown, utimensat, then rm's unlink)
 * needs no gofer walk. Anything else is only dropped. */
void vfs_refresh(struct vfs *v, const struct vfs_mount *m, const char *rel, const struct stat *known);
/* The same after a change the gofer made by name on the object the walk
 * checked (gofer_expect_identity), or a create it made (O_EXCL), where hfd
 * (or -1) is a host fd of that object: the fd's fstat (else the re-stat by
 * name), with known's owner, is stored unless the dentry cache saw any drop
 * since gen0 (vfs_cache_gen, taken before the change: another task may have
 * renamed or removed the name since); else the entry is dropped. Where the
 * sentry cannot stat the name itself (root-run, a directory on the way its
 * uid may not search: tar extracts into 0700 directories) the fd is the only
 * way. */
unsigned long vfs_cache_gen(struct vfs *v);
void vfs_refresh_since(struct vfs *v, const struct vfs_mount *m, const char *rel,
		       const struct stat *known, int hfd, unsigned long gen0);
/* After the gofer made the directory rel (mkdir): st is its lstat from the
 * gofer's reply (host ids; st_ino 0: none), stored as a look-up would have
 * stored it unless a drop ran since gen0 (taken before the mkdir, after
 * vfs_drop_beneath of rel), then the parent as after any change: the next
 * create in it (git's first object of each objects/XX) needs no gofer walk
 * of the new directory. */
/* rel removed by the gofer's unlink (not rmdir), gen0 taken before it */
void vfs_unlinked(struct vfs *v, const struct vfs_mount *m, const char *rel, unsigned long gen0);
void vfs_made_dir(struct vfs *v, const struct vfs_mount *m, const char *rel, const struct stat *st,
		  unsigned long gen0);
/* After the gofer linked orel to nrel: st[0] is the new name's lstat, st[1]
 * the old name's, both seen by the gofer after the link (host ids; st_ino 0:
 * none; NULL: neither). Stored as look-ups would have stored them (the old
 * name only when it is still the same inode), unless a drop ran since gen0,
 * taken before the link: git's unlink of its temporary object right after
 * the link needs no gofer walk of it. */
void vfs_linked(struct vfs *v, const struct vfs_mount *m, const char *orel, const char *nrel,
		const struct stat st[2], unsigned long gen0);
/* Drop rel's entry and everything cached beneath it (before a mkdir of rel). */
void vfs_drop_beneath(struct vfs *v, const struct vfs_mount *m, const char *rel);
/* Does path (canonical, not "/") have mount points beneath it? Such a
 * directory of a writable mount (the root overlay's "home" of /home/user)
 * cannot be removed or renamed (EBUSY): the mounts stay where they are. */
int vfs_holds_mounts(struct vfs *v, const char *path);
/* Bytes in use on the sandbox's private in-memory file systems (the tmpfs
 * exports: /tmp, the home, /dev/shm, --tmpfs, the guest's own mounts; with
 * a pool, --disk or --memory's, that pool, which holds the cow scratch
 * too), each file system counted once (by f_fsid): a gofer statfs each. */
unsigned long long vfs_private_used(struct vfs *v);

/* ---- backends for GOFER mounts (the gofer; a unit test may put a stub in
 * front of it). Same semantics as gofer/gofer.h. ---- */
struct winsize;
struct vfs_backend {
	int (*walk)(void *ctx, int exp, const char *rel, struct gofer_walk *out);
	int (*lstat)(void *ctx, int exp, const char *rel, struct stat *st);
	int (*open)(void *ctx, int exp, const char *rel, int flags, mode_t mode,
		    int *fd, struct stat *st);
	long (*readlink)(void *ctx, int exp, const char *rel, char *buf, size_t len);
	/* mkdir, mknod, symlink: *st the new node's lstat (st_ino 0: gone) */
	int (*mkdir)(void *ctx, int exp, const char *rel, mode_t mode, struct stat *st);
	int (*mknod)(void *ctx, int exp, const char *rel, mode_t mode, struct stat *st);
	int (*unlink)(void *ctx, int exp, const char *rel, int flags);
	int (*rename)(void *ctx, int exp, const char *o, const char *n, unsigned flags);
	int (*symlink)(void *ctx, int exp, const char *target, const char *rel, struct stat *st);
	/* st (may be NULL): st[0] the new name's lstat after the link, st[1]
	 * the old name's (st_ino 0: not given) */
	int (*link)(void *ctx, int exp, const char *o, const char *n, struct stat st[2]);
	int (*chmod)(void *ctx, int exp, const char *rel, mode_t mode);
	int (*chown)(void *ctx, int exp, const char *rel, uid_t uid, gid_t gid);
	int (*truncate)(void *ctx, int exp, const char *rel, off_t len);
	int (*utimens)(void *ctx, int exp, const char *rel, const struct timespec ts[2], int flags);
	int (*statfs)(void *ctx, int exp, const char *rel, struct statfs *st);
	long (*getxattr)(void *ctx, int exp, const char *rel, const char *name, void *buf, size_t size);
	long (*listxattr)(void *ctx, int exp, const char *rel, char *buf, size_t size);
	int (*setxattr)(void *ctx, int exp, const char *rel, const char *name, const void *val,
			size_t size, int flags);
	int (*removexattr)(void *ctx, int exp, const char *rel, const char *name);
	long (*pathof)(void *ctx, int exp, int fd, char *buf, size_t len); /* may be NULL */
	int (*linkfd)(void *ctx, int exp, int fd, const char *rel);         /* may be NULL */
	int (*chownfd)(void *ctx, int exp, int fd, uid_t uid, gid_t gid);   /* may be NULL */
	long (*dirstat)(void *ctx, int exp, const char *rel, uint64_t pos, void *buf, size_t len); /* may be NULL */
	int (*watch)(void *ctx, int exp, const char *rel, int ifd, uint32_t mask,
		     dev_t dev, ino_t ino);                                      /* may be NULL */
	/* the window size of a terminal of a DEV export's devpts (gofer_winsz); may be NULL */
	int (*winsz)(void *ctx, int exp, int fd, const struct winsize *ws);
	/* a pty master's request on a terminal of a DEV export's devpts
	 * (gofer_ptsctl); may be NULL */
	int (*ptsctl)(void *ctx, int exp, int fd, unsigned cmd, int arg, int *peer);
	/* the mode (ts NULL) or times of a memfd (gofer_memfdattr); may be NULL */
	int (*memfdattr)(void *ctx, int exp, int fd, mode_t mode, const struct timespec *ts);
	/* up to count opens of a memory device (gofer_devopen); may be NULL */
	int (*devopen)(void *ctx, int exp, const char *name, int flags, int count, int *fds,
		       struct stat *st);
};

/* Replace the backend (before use; tests). ctx is passed to every op. */
void vfs_set_backend(struct vfs *v, const struct vfs_backend *ops, void *ctx);
const struct vfs_backend *vfs_backend(struct vfs *v, void **ctx);

/* Shorthand for backend calls on a node's mount. */
#define VFS_BE(v, op, ...) ({ void *be_ctx_; const struct vfs_backend *be_ = vfs_backend((v), &be_ctx_); \
	be_->op(be_ctx_, __VA_ARGS__); })

/* dst = src for a node copied by value: rel follows the copy's path
 * (unless it points at a PROC file mount's target). */
static inline void vfs_node_fix_rel(struct vfs_node *dst, const struct vfs_node *src)
{
	uintptr_t r = (uintptr_t)src->rel, p = (uintptr_t)src->path, q = (uintptr_t)src->xrel;
	dst->rel = r >= p && r <= p + sizeof src->path ? dst->path + (r - p) :
		   r >= q && r <= q + sizeof src->xrel ? dst->xrel + (r - q) : src->rel;
}

/* dst = src, copying only the used part of the path (nodes are large). */
static inline void vfs_node_copy(struct vfs_node *dst, const struct vfs_node *src)
{
	const size_t off = offsetof(struct vfs_node, mnt);

	memcpy(dst->path, src->path, strlen(src->path) + 1);
	if ((uintptr_t)src->rel >= (uintptr_t)src->xrel &&
	    (uintptr_t)src->rel < (uintptr_t)src->xrel + sizeof src->xrel)
		memcpy(dst->xrel, src->xrel, strlen(src->xrel) + 1);
	memcpy((char *)dst + off, (const char *)src + off, sizeof *dst - off);
	vfs_node_fix_rel(dst, src);
}

#endif
