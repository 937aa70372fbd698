/* fs/vfs.h - the guest's file namespace, as the sentry sees it.
 *
 * One VFS per sandbox: a mount table (gofer-served exports, the synthetic
 * /proc, synthetic symlinks such as /bin -> usr/bin or /dev/fd ->
 * /proc/self/fd), one path walk for every syscall (mount crossing, "..",
 * symlinks with a depth limit -> ELOOP, *at dirfds, trailing slash,
 * ENAMETOOLONG, permission checks against the task's virtual credentials),
 * and a dentry cache. Mount points that do not exist in their parent (e.g.
 * /work on a root tree without it, or every top-level name of the synthetic
 * system-view root) are synthesised as directories and appear in listings.
 *
 * Guest fds for files are host fds donated by the gofer; guest fds for
 * synthetic directories are memfds the sentry recognises by (st_dev, st_ino).
 * A guest fd is identified with task_getfd() + fstat(), never by tracking fd
 * numbers (close/dup run natively).
 */
#ifndef MOAT_FS_VFS_H
#define MOAT_FS_VFS_H

#include <stdio.h>
#include <stddef.h>
#include <sys/stat.h>
#include <stdint.h>
#include <sys/types.h>

struct vfs;
struct task;
struct sandbox;

enum vfs_mount_kind {
	VFS_MNT_GOFER = 1, /* served by the gofer, export index `export` */
	VFS_MNT_PROC,      /* synthetic procfs built from the task table (or one
			    * of its files, `target`) */
	VFS_MNT_SYMLINK,   /* the mount point is a symlink to `target` */
	VFS_MNT_SPARE,     /* not mounted: a spare private (tmpfs) export
			    * `export` for the guest's mount(2); path "/" */
};

struct vfs_mount_spec {
	const char *path;          /* absolute canonical guest path ("/" allowed) */
	int kind;
	int export;                /* GOFER: gofer export index */
	int writable;              /* GOFER: rw mount (else EROFS on writes) */
	int dev;                   /* GOFER: device export: open existing nodes only */
	int private_fs;            /* GOFER: a private in-memory export (tmpfs), no
				    * host file: real chmod/chown, and guest root
				    * keeps its override there. 0 (host files):
				    * virtual owners and set-id bits, no override */
	int shared;                /* GOFER: the host may change it while the sandbox
				    * runs: nothing about it is cached (fs/dcache.h) */
	int cow;                   /* GOFER: a cow export (an overlay the gofer
				    * mounted): writable, yet its read-only
				    * opens may be direct (fs/directfs.c) */
	int system;                /* GOFER: a directory of the system view or
				    * --root (/usr, /etc, ... and / of the root
				    * overlay): programs look a few names up in
				    * large directories there, so no directory
				    * prefetch (fs/vfs.c dir_prefetch) */
	int host_view;             /* GOFER: a host directory of the system view
				    * (/usr, /etc, /opt...; not --root, not a
				    * --bind): a file of it that host users
				    * other than its owner and group may not read
				    * is sealed (fs/vfs.c permission) */
	int aliased;               /* GOFER: another mount serves some of the same
				    * host files (two --bind of one tree, or one
				    * inside another): a change of an inode
				    * through it drops that inode's names in every
				    * mount (fs/dcache.h dcache_drop_inode) */
	const char *const *hidden; /* GOFER: relative paths that do not exist
				    * (ENOENT, left out of getdents), or NULL */
	const char *target;        /* SYMLINK: link target; PROC: NULL for /proc
				    * itself, or the procfs path of the one file
				    * this mount point is (/etc/hosts) */
};

/* Build the VFS. Mounts may be given in any order; a later mount on the same
 * path hides an earlier one. gofer_ctl is the gofer's control socket (each
 * sentry worker thread gets its own connection lazily). Returns 0 or -errno
 * with a one-line reason in err. */
/* /proc's device number: the guest's real procfs's (the sentry holds it;
 * fs/vfs.c vfs_reserve_devs) */
void vfs_set_proc_dev(int procfd);

int vfs_create(struct sandbox *sb, const struct vfs_mount_spec *m, size_t n,
	       int gofer_ctl, struct vfs **out, char *err, size_t errlen);
void vfs_destroy(struct vfs *v);

/* Exec support (called by the sentry's ptrace thread at an execve stop).
 * Resolves path relative to dirfd (AT_FDCWD = the task's cwd; AT_EMPTY_PATH
 * in atflags: dirfd itself), following symlinks unless AT_SYMLINK_NOFOLLOW
 * (then a final symlink is -ELOOP), checks search permissions and the execute
 * bit against the task's credentials (-EACCES; a directory is -EACCES; a
 * missing file -ENOENT; a noexec-like synthetic file -EACCES), and opens it
 * read-only. Returns 0 with a host fd in *fd, its stat in *st, and the
 * canonical guest path in canon; *unreadable (if not NULL) is set to 1 when
 * the task may not read the file (Linux's would_dump: the process that runs
 * it is not dumpable), left alone otherwise. */
int vfs_open_exec(struct task *t, int dirfd, const char *path, int atflags,
		  int *fd, struct stat *st, char *canon, size_t canonlen, int *unreadable);
/* The same; *host_id (not NULL) says whether st_dev and st_ino of *st are
 * the host file's behind *fd (the fstat of that very fd, by the sentry or
 * the gofer: a backend file) or not (a guest's own fd, whose stat came from
 * an earlier look at its number: fstat *fd for its identity). */
int vfs_open_exec_id(struct task *t, int dirfd, const char *path, int atflags, int *fd,
		     struct stat *st, char *canon, size_t canonlen, int *unreadable, int *host_id);

/* Open this thread's gofer connection now rather than at its first request
 * (the sentry calls it as each worker starts, off the guest's critical path). */
void vfs_thread_warmup(struct vfs *v);
/* MOAT_PROFILE: the directories the sentry listed itself for the dentry
 * cache (fs/vfs.c dir_prefetch), and the names they gave */
void vfs_profile_report(FILE *f);
/* A thread that ends: close its gofer connection (the gofer's thread for it
 * ends too). */
void vfs_thread_release(void);

/* Direct file access (fs/directfs.c): roots[i] is an O_PATH fd of a
 * read-only bind of export i in the sentry's own root, or -1. Read-only opens
 * of regular files and directories of read-only exports then skip the gofer. */
void vfs_enable_direct(struct vfs *v, const int *roots, size_t n);

/* Is `path` (absolute or relative to the task's cwd) an existing directory the
 * task may search? 0 or -errno; canonical path into canon. Used for --workdir. */
int vfs_check_dir(struct task *t, const char *path, char *canon, size_t canonlen);

/* st_dev of the sandbox's own devpts instance (the gofer mounts it as "pts"
 * on the device export, gofer/setup.c), asked of the gofer once; 0 if there
 * is none. A terminal fd whose st_dev is this one is the sandbox's own. */
dev_t vfs_pts_dev(struct vfs *v);
/* Open pty slave `index` of that instance (flags as open(2); O_NOCTTY is
 * always added: the gofer never takes a terminal). 0 with *fd and *st, or
 * -ENXIO if there is no such pty. */
int vfs_pts_open(struct vfs *v, unsigned index, int flags, int *fd, struct stat *st);
/* Set the window size of fd, a terminal of that instance, in the gofer (it
 * checks the fd's file system itself; the sentry may not make TIOCSWINSZ:
 * red team 71). 0, -EPERM (another terminal, no devpts) or -errno. */
struct winsize;
int vfs_pts_winsize(struct vfs *v, int fd, const struct winsize *ws);
/* A pty master's TIOCSIG, TIOCPKT, TIOCSPTLCK or TIOCGPTPEER (*peer: the
 * slave's fd, O_CLOEXEC; peer NULL for the others) on fd, a terminal of that
 * instance, made by the gofer on that file (it checks the file system
 * itself). 0, -EPERM (another terminal, no devpts) or -errno. */
int vfs_pts_ctl(struct vfs *v, int fd, unsigned cmd, int arg, int *peer);
/* The mode (utimes 0) or times (ts NULL: now) of fd, a memfd of the
 * guest's, set by the gofer (GOFER_OP_MEMFDATTR: the sentry's filter has
 * neither fchmod nor futimens); never a set-id bit. 0 or -errno. */
int vfs_memfd_attr(struct vfs *v, int fd, mode_t mode, const struct timespec *ts, int utimes);

/* The task whose call this thread serves (its notification id on notify_fd:
 * fs/vfs.c cow_copyup may swap its fds), or NULL after the call. */
void vfs_caller_set(struct task *t, int notify_fd, uint64_t id);
/* Did a copy-up by hand of this thread's call stay EOVERFLOW after the
 * sandbox let go of what it could (fs/vfs.c cow_copyup: another process
 * holds the directory, e.g. a compiler reading a file beneath it)? Cleared
 * by the call. The caller may wait and make the call again. */
int vfs_copyup_busy_take(void);

#endif
