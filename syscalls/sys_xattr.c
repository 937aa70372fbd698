/* syscalls/sys_xattr.c - extended attributes by path.
 *
 * Not served by the gofer yet: the path is resolved (so ENOENT, ENOTDIR,
 * ELOOP, EACCES are Linux's), then every file has no attributes: get ->
 * ENODATA, list -> empty, set/remove -> EROFS on read-only mounts, else
 * ENOTSUP. fgetxattr/flistxattr run natively on the held host fd;
 * fsetxattr/fremovexattr are emulated like the path calls, and refused with
 * EPERM on an fd the VFS cannot name (a pipe, a socket, the caller's terminal
 * or a host file given as stdio: never changed from inside).
 */
#include <errno.h>

#include "syscalls/sys_fs.h"

static long xattr_path(struct sc_call *c, int dirfd, const char *path, int atflags,
		       int write)
{
	cleanup_free struct vfs_node *n = NULL;
	unsigned wf = 0;
	int r;

	if (atflags & ~(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH))
		return -EINVAL;
	if (atflags & AT_SYMLINK_NOFOLLOW)
		wf |= WALK_NOFOLLOW;
	if (atflags & AT_EMPTY_PATH)
		wf |= WALK_EMPTY_PATH;
	r = fs_walk(c, dirfd, path, wf, &n);
	if (r < 0)
		return r;
	if (write) {
		if (n->kind != VN_FD) {
			r = vfs_mount_write_err(n->mnt);
			if (r == -EROFS)
				return r;
		}
		return -ENOTSUP;
	}
	return 0;
}

#define NOFOLLOW AT_SYMLINK_NOFOLLOW

long sys_getxattr(struct sc_call *c)
{
	long r = xattr_path(c, AT_FDCWD, c->str[0], 0, 0);
	return r < 0 ? r : -ENODATA;
}

long sys_lgetxattr(struct sc_call *c)
{
	long r = xattr_path(c, AT_FDCWD, c->str[0], NOFOLLOW, 0);
	return r < 0 ? r : -ENODATA;
}

long sys_getxattrat(struct sc_call *c)
{
	long r = xattr_path(c, ARG_INT(c, 0), c->str[1], ARG_INT(c, 2), 0);
	return r < 0 ? r : -ENODATA;
}

long sys_listxattr(struct sc_call *c)
{
	return xattr_path(c, AT_FDCWD, c->str[0], 0, 0);
}

long sys_llistxattr(struct sc_call *c)
{
	return xattr_path(c, AT_FDCWD, c->str[0], NOFOLLOW, 0);
}

long sys_listxattrat(struct sc_call *c)
{
	return xattr_path(c, ARG_INT(c, 0), c->str[1], ARG_INT(c, 2), 0);
}

long sys_setxattr(struct sc_call *c)
{
	return xattr_path(c, AT_FDCWD, c->str[0], 0, 1);
}

long sys_lsetxattr(struct sc_call *c)
{
	return xattr_path(c, AT_FDCWD, c->str[0], NOFOLLOW, 1);
}

long sys_setxattrat(struct sc_call *c)
{
	return xattr_path(c, ARG_INT(c, 0), c->str[1], ARG_INT(c, 2), 1);
}

long sys_removexattr(struct sc_call *c)
{
	return xattr_path(c, AT_FDCWD, c->str[0], 0, 1);
}

long sys_lremovexattr(struct sc_call *c)
{
	return xattr_path(c, AT_FDCWD, c->str[0], NOFOLLOW, 1);
}

long sys_removexattrat(struct sc_call *c)
{
	return xattr_path(c, ARG_INT(c, 0), c->str[1], ARG_INT(c, 2), 1);
}

/* fsetxattr/fremovexattr: the fd's node, never the host object behind it. */
static long xattr_fd(struct sc_call *c, int fd)
{
	cleanup_free struct vfs_node *n = xmalloc(sizeof *n);
	int r = vfs_fd_node(VFS_OF(c), c->task, fd, n, NULL);

	if (r < 0)
		return r;
	if (n->opath)
		return -EBADF;
	if (n->kind == VN_FD)
		return -EPERM;
	r = vfs_mount_write_err(n->mnt);
	return r == -EROFS ? r : -ENOTSUP;
}

long sys_fsetxattr(struct sc_call *c)
{
	return xattr_fd(c, ARG_INT(c, 0));
}

long sys_fremovexattr(struct sc_call *c)
{
	return xattr_fd(c, ARG_INT(c, 0));
}
