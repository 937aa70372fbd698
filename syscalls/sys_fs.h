/* syscalls/sys_fs.h - shared helpers of the file syscall handlers
 * (sys_file.c, sys_stat.c, sys_dir.c, sys_xattr.c). Each handler decodes its
 * arguments and calls a typed worker shared by the variants (open/openat/
 * openat2/creat -> do_open), which walks with fs/walk.h and answers -errno
 * or a value as Linux would.
 */
#ifndef MOAT_SYSCALLS_SYS_FS_H
#define MOAT_SYSCALLS_SYS_FS_H

#include <errno.h>
#include <fcntl.h>

#include "common/util.h"
#include "fs/walk.h"
#include "kernel/task.h"
#include "syscalls/handlers.h"
#include "syscalls/sc.h"

#define VFS_OF(c) ((c)->sb->vfs)

/* Guest argument helpers: fds and AT_ flags are ints in the ABI. */
#define ARG_INT(c, i) ((int)(c)->args[i])
#define ARG_UINT(c, i) ((unsigned)(c)->args[i])

/* Walk with a heap node: `cleanup_free struct vfs_node *n = NULL;`. */
static inline int fs_walk(struct sc_call *c, int dirfd, const char *path, unsigned flags,
			  struct vfs_node **n)
{
	*n = xmalloc(sizeof **n);
	if (!path)
		return -EFAULT;
	return vfs_walk(VFS_OF(c), c->task, dirfd, path, flags, *n);
}

/* A guest id to the host's through the sandbox's user-namespace mapping
 * (-1 stays -1): 0, or -EINVAL when the id is not mapped (sys_file.c). */
int fs_id_to_host(const struct idmap *m, uint32_t id, int gid, uint32_t *out);

/* The umask of the calling task. */
static inline mode_t fs_umask(struct task *t)
{
	mode_t m;

	pthread_mutex_lock(&t->fs->lock);
	m = t->fs->umask;
	pthread_mutex_unlock(&t->fs->lock);
	return m;
}

/* Is the task allowed to delete (or rename away) the entry n from its
 * parent? (namei.c may_delete; rules numbered in sys_file.c) */
int fs_may_delete(struct task *t, const struct vfs_node *n, int isdir);

/* mknodat as the guest's mknodat would (umask applied); 0 or -errno. */
long fs_mknodat(struct sc_call *c, int dirfd, const char *path, mode_t mode);
/* unlinkat(dirfd, path, 0) as the guest's would; 0 or -errno. */
long fs_unlinkat(struct sc_call *c, int dirfd, const char *path);

/* open("/dev/tty"): the caller's controlling terminal if it is one of the
 * sandbox's ptys (sys_tty.c); 0 with *fd, or -ENXIO. */
int tty_open_ctty(struct sc_call *c, int flags, int *fd);
int tty_of_host(struct sc_call *c, int hfd); /* a terminal not of the sandbox's devpts */

/* Break the leases (sys_lock.c) that an open with `flags` (truncate: O_WRONLY)
 * of the file dev/ino conflicts with: signal their holders and wait for them
 * (/proc/sys/fs/lease-break-time at most; O_NONBLOCK: -EWOULDBLOCK). 0 or -errno. */
int lease_break(struct sc_call *c, dev_t dev, ino_t ino, int flags);
/* syscalls/sys_signal.c: may the caller make guest process/thread/group
 * `who` (F_OWNER_TID/PID/PGRP) the owner of a file's SIGIO? 0 with *host
 * (the sentry's number for that pid), else -EPERM/-ESRCH */
long sigio_setown_fcntl(struct sc_call *c);
long sigio_setfl_fcntl(struct sc_call *c);
long sigio_fioasync_ioctl(struct sc_call *c);
long sigio_setown_ioctl(struct sc_call *c);
long sigio_setsig_fcntl(struct sc_call *c); /* sys_signal.c: F_SETSIG */
/* ioctl 0x89xx/0x8Bxx (sentry/netconn.c): native without moat-netd; with it
 * the SIOCGIF* reads answered from the guest's netns, the rest EOPNOTSUPP */
long netconn_if_ioctl(struct sc_call *c);
long sc_pidfd_ns_ioctl(struct sc_call *c); /* sys_signal.c: PIDFD_GET_*_NAMESPACE */
long sc_pidfd_info_ioctl(struct sc_call *c); /* sys_signal.c: PIDFD_GET_INFO */

#endif
