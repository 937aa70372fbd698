/* syscalls/sys_xattr.c - extended attributes.
 *
 * user.* attributes of files of gofer mounts (rw and ro binds, cow binds,
 * the overlay, tmpfs exports) are the host file's own, set and read by the
 * gofer (gofer_*xattr: it refuses every other namespace and never follows a
 * final symlink). The sentry resolves the path, applies Linux's checks in
 * Linux's order with the task's virtual credentials (EROFS on a read-only
 * mount, then the namespace, then read permission for get, write permission
 * and the sticky-directory rule for set/remove), then asks the gofer.
 *
 * Other namespaces never reach the host. trusted.* and security.* (but
 * security.capability, whose file capabilities moat's exec would not grant:
 * ENODATA to get, EOPNOTSUPP to set) are virtual: kept by the sentry for
 * the sandbox's life, keyed by the file (fs/vxattr.c), on every file type
 * (symlinks too, as Linux), with Linux's rules: trusted.* needs
 * CAP_SYS_ADMIN to get, set or list (ENODATA / EPERM / not listed without
 * it), security.* needs it to set or remove, and neither checks the file's
 * mode; euid 0 counts as CAP_SYS_ADMIN here, as for mount(2). system.* (POSIX ACLs) is EOPNOTSUPP, a file system without ACLs;
 * unknown prefixes EOPNOTSUPP.
 *
 * Sizes: a value is at most GOFER_XATTR_MAX (4096) bytes in the gofer
 * protocol: a larger set is ENOSPC (as ext4 with no room), a larger host
 * value E2BIG. Linux's own limits stay: name 1..255 bytes (ERANGE), value
 * 64 KiB (E2BIG).
 *
 * Synthetic nodes (/proc, mount points) and fds the VFS cannot name have no
 * attributes: get ENODATA, list empty, set EROFS on read-only mounts, else
 * EOPNOTSUPP (fsetxattr on an unnamed fd: EPERM, never the host object).
 * A path ending in a /proc magic link (/proc/self/fd/N) acts on the object
 * the fd has open (an O_PATH placeholder's object too: before, on the
 * placeholder, so a set was lost), unless AT_SYMLINK_NOFOLLOW (the l*
 * calls: the link itself, which has none, as Linux's proc symlinks).
 * The f* calls act on the fd's file by the VFS's name for it, as the path
 * calls do (never natively on the held fd: it may be a host file the guest
 * was handed, and the sentry's uid may not read what the guest may).
 */
#include <errno.h>
#include <string.h>
#include <sys/xattr.h>

#include "fs/vxattr.h"
#include "kernel/cred.h"
#include "syscalls/sys_fs.h"

#define XATTR_SIZE_MAX_ 65536
#define XATTR_NAME_MAX_ 255

enum xop { X_GET, X_LIST, X_SET, X_REMOVE };

static int has_prefix(const char *s, const char *p)
{
	return !strncmp(s, p, strlen(p));
}

#define CAP_SYS_ADMIN_ 21

/* The namespace verdict: -errno, 0 for user.* (the gofer's), 1 for a
 * virtual one (trusted.*, security.*: fs/vxattr.c) */
static int xattr_ns(struct sc_call *c, const char *name, enum xop op)
{
	int write = op == X_SET || op == X_REMOVE;
	/* (euid 0 counts: root inside has no CAP_SYS_ADMIN, as in Docker, but
	 * these attributes are the sandbox's own, as its mount table is) */
	int admin = cred_capable(&c->task->cred, CAP_SYS_ADMIN_) || c->task->cred.euid == 0;

	if (has_prefix(name, "user.moat."))   /* moat's own: none to the guest */
		return write ? -EOPNOTSUPP : -ENODATA; /* (the gofer refuses them too) */
	if (has_prefix(name, "user.") && name[5])
		return 0;
	if (has_prefix(name, "trusted.") && name[8]) {
		if (!admin)
			return write ? -EPERM : -ENODATA;
		return 1;
	}
	if (!strcmp(name, "security.capability"))
		return write ? -EOPNOTSUPP : -ENODATA;
	if (has_prefix(name, "security.") && name[9]) {
		if (write && !admin)
			return -EPERM;
		return 1;
	}
	return -EOPNOTSUPP;
}

struct xreq {
	enum xop op;
	const char *name;      /* X_GET, X_SET, X_REMOVE */
	uint64_t addr;         /* X_GET/X_LIST: output; X_SET: value */
	size_t size;
	int flags;             /* X_SET */
};

/* listxattr shows trusted.* names to CAP_SYS_ADMIN only */
static int list_want(const char *name, void *arg)
{
	struct sc_call *c = arg;

	return !has_prefix(name, "trusted.") || cred_capable(&c->task->cred, CAP_SYS_ADMIN_) ||
	       c->task->cred.euid == 0;
}

/* A virtual attribute of n's file (xattr_ns 1). */
static long xattr_virtual(struct sc_call *c, const struct vfs_node *n, const struct xreq *x)
{
	struct vxattr *vx = vfs_vxattr(VFS_OF(c));
	size_t size = x->size > XATTR_SIZE_MAX_ ? XATTR_SIZE_MAX_ : x->size;
	cleanup_free char *buf = size ? xmalloc(size) : NULL;
	long r;

	switch (x->op) {
	case X_LIST:
		return -EINVAL;
	case X_GET:
		r = vxattr_get(vx, n->st.st_dev, n->st.st_ino, x->name, buf, size);
		if (r > 0 && size && sc_write_guest(c, x->addr, buf, (size_t)r) < 0)
			return -EFAULT;
		return r;
	case X_SET:
		if (size && sc_read_guest(c, x->addr, buf, size) < 0)
			return -EFAULT;
		return vxattr_set(vx, n->st.st_dev, n->st.st_ino, x->name, buf, size, x->flags);
	case X_REMOVE:
	default:
		return vxattr_remove(vx, n->st.st_dev, n->st.st_ino, x->name);
	}
}


/* listxattr's user.* part: the gofer's names of n's file, written to the
 * guest at x->addr (their length; -ERANGE when x->size is too small). */
static long xattr_list_user(struct sc_call *c, const struct vfs_node *n, const struct xreq *x)
{
	size_t size = x->size > XATTR_SIZE_MAX_ ? XATTR_SIZE_MAX_ : x->size;
	cleanup_free char *buf = size ? xmalloc(size) : NULL;

	gofer_expect_identity(n->st.st_dev, n->st.st_ino);
	long r = VFS_BE(VFS_OF(c), listxattr, n->mnt->export, n->rel, buf, size);
	gofer_expect_identity(0, 0);
	if (r > 0 && size && sc_write_guest(c, x->addr, buf, (size_t)r) < 0)
		return -EFAULT;
	return r;
}

static long xattr_node(struct sc_call *c, const struct vfs_node *n, const struct xreq *x)
{
	struct vfs *v = VFS_OF(c);
	struct task *t = c->task;
	int write = x->op == X_SET || x->op == X_REMOVE;
	cleanup_free char *buf = NULL;
	long r;

	if (write && n->kind != VN_FD) {
		r = vfs_mount_write_err(n->mnt);
		if (r == -EROFS)
			return r;
	}
	int virt = 0;
	if (x->op != X_LIST) {
		r = xattr_ns(c, x->name, x->op);
		if (r < 0)
			return r;
		virt = r;
	}
	if (n->kind != VN_BACKEND) {
		/* Linux's xattr_permission: user.* of a symlink (a /proc link
		 * too, lsetxattr of /proc/self/fd/N) is EPERM to set */
		if (!virt && write && n->kind == VN_PROC && S_ISLNK(n->st.st_mode))
			return -EPERM;
		if (x->op == X_GET)
			return -ENODATA;
		if (x->op == X_LIST)
			return 0;
		return n->kind == VN_FD ? -EPERM : -EOPNOTSUPP;
	}
	if (virt)
		return xattr_virtual(c, n, x);
	if (x->op == X_LIST) {
		/* the gofer's user.* names, then the virtual ones */
		long u = 0;
		struct stat lview = n->st;
		vfs_view_stat(v, &lview);
		if (S_ISREG(lview.st_mode) || S_ISDIR(lview.st_mode)) {
			u = xattr_list_user(c, n, x);
			if (u < 0)
				return u;
		}
		size_t size = x->size > XATTR_SIZE_MAX_ ? XATTR_SIZE_MAX_ : x->size;
		cleanup_free char *vb = size > (size_t)u ? xmalloc(size - (size_t)u) : NULL;
		if (size && size <= (size_t)u) {
			long need = vxattr_list(vfs_vxattr(v), n->st.st_dev, n->st.st_ino, list_want, c, NULL, 0);
			return need > 0 ? -ERANGE : u;
		}
		long vl = vxattr_list(vfs_vxattr(v), n->st.st_dev, n->st.st_ino, list_want, c, vb,
				      size ? size - (size_t)u : 0);
		if (vl < 0)
			return vl;
		if (size && vl && sc_write_guest(c, x->addr + (uint64_t)u, vb, (size_t)vl) < 0)
			return -EFAULT;
		return u + vl;
	}
	/* Linux: user.* only on regular files and directories (the guest's
	 * view: a device node it made is an empty regular host file) */
	struct stat view = n->st;
	vfs_view_stat(v, &view);
	if (!S_ISREG(view.st_mode) && !S_ISDIR(view.st_mode)) {
		if (x->op == X_LIST)
			return 0;
		return write ? -EPERM : -ENODATA;
	}
	if (x->op == X_GET || write) {
		r = vfs_permission_node(t, n, write ? MAY_WRITE : MAY_READ);
		if (r)
			return r;
	}
	if (write && S_ISDIR(n->st.st_mode) && (n->st.st_mode & S_ISVTX) &&
	    !vfs_owner(t, &n->st))
		return -EPERM;

	/* the gofer acts only on the object checked here (else -ESTALE) */
	gofer_expect_identity(n->st.st_dev, n->st.st_ino);
	switch (x->op) {
	case X_GET:
	case X_LIST: {
		size_t size = x->size > XATTR_SIZE_MAX_ ? XATTR_SIZE_MAX_ : x->size;
		if (size)
			buf = xmalloc(size);
		r = x->op == X_GET ?
			VFS_BE(v, getxattr, n->mnt->export, n->rel, x->name, buf, size) :
			VFS_BE(v, listxattr, n->mnt->export, n->rel, buf, size);
		gofer_expect_identity(0, 0);
		if (r > 0 && size && sc_write_guest(c, x->addr, buf, (size_t)r) < 0)
			return -EFAULT;
		return r;
	}
	case X_SET:
		if (x->size) {
			buf = xmalloc(x->size);
			if (sc_read_guest(c, x->addr, buf, x->size) < 0) {
				gofer_expect_identity(0, 0);
				return -EFAULT;
			}
		}
		r = VFS_BE(v, setxattr, n->mnt->export, n->rel, x->name, buf, x->size, x->flags);
		break;
	case X_REMOVE:
	default:
		r = VFS_BE(v, removexattr, n->mnt->export, n->rel, x->name);
		break;
	}
	gofer_expect_identity(0, 0);
	vfs_invalidate(v, n->mnt, n->rel, 0);
	return r;
}

/* Argument checks Linux makes before the lookup. */
static long xattr_args(const struct xreq *x)
{
	if (x->op == X_SET && (x->flags & ~(XATTR_CREATE | XATTR_REPLACE)))
		return -EINVAL;
	if (x->op != X_LIST) {
		if (!x->name)
			return -EFAULT;
		size_t l = strnlen(x->name, XATTR_NAME_MAX_ + 1);
		if (l == 0 || l > XATTR_NAME_MAX_)
			return -ERANGE;
	}
	if (x->op == X_SET && x->size > XATTR_SIZE_MAX_)
		return -E2BIG;
	return 0;
}

static long xattr_path(struct sc_call *c, int dirfd, const char *path, int atflags,
		       const struct xreq *x)
{
	cleanup_free struct vfs_node *n = NULL;
	unsigned wf = 0;
	long r;

	if (atflags & ~(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH))
		return -EINVAL;
	r = xattr_args(x);
	if (r)
		return r;
	if (atflags & AT_SYMLINK_NOFOLLOW)
		wf |= WALK_NOFOLLOW;
	if (atflags & AT_EMPTY_PATH)
		wf |= WALK_EMPTY_PATH;
	for (int tries = 0;; tries++) {
		free(n);
		n = NULL;
		r = fs_walk(c, dirfd, path, wf, &n);
		if (r < 0)
			return r;
		/* /proc/self/fd/N: the object the fd has open (an O_PATH
		 * placeholder's too), with the checks by path; the l* calls
		 * act on the link itself, as Linux */
		if (!(atflags & AT_SYMLINK_NOFOLLOW)) {
			r = vfs_follow_magic(VFS_OF(c), c->task, n, NULL);
			if (r < 0)
				return r;
		}
		r = xattr_node(c, n, x);
		if (r != -ESTALE || n->kind != VN_BACKEND || tries >= 15)
			return r == -ESTALE ? -EAGAIN : r;
		/* another object than the one checked has the name now */
		vfs_invalidate(VFS_OF(c), n->mnt, n->rel, 0);
		wf |= WALK_FRESH;
	}
}

#define NOFOLLOW AT_SYMLINK_NOFOLLOW

#define XGET(c, i) (&(struct xreq){ .op = X_GET, .name = (c)->str[i], \
	.addr = (c)->args[(i) + 1], .size = (size_t)(c)->args[(i) + 2] })
#define XLIST(c, i) (&(struct xreq){ .op = X_LIST, .addr = (c)->args[i], \
	.size = (size_t)(c)->args[(i) + 1] })
#define XSET(c, i) (&(struct xreq){ .op = X_SET, .name = (c)->str[i], \
	.addr = (c)->args[(i) + 1], .size = (size_t)(c)->args[(i) + 2], \
	.flags = (int)(c)->args[(i) + 3] })
#define XREM(c, i) (&(struct xreq){ .op = X_REMOVE, .name = (c)->str[i] })

long sys_getxattr(struct sc_call *c)
{
	return xattr_path(c, AT_FDCWD, c->str[0], 0, XGET(c, 1));
}

long sys_lgetxattr(struct sc_call *c)
{
	return xattr_path(c, AT_FDCWD, c->str[0], NOFOLLOW, XGET(c, 1));
}

long sys_listxattr(struct sc_call *c)
{
	return xattr_path(c, AT_FDCWD, c->str[0], 0, XLIST(c, 1));
}

long sys_llistxattr(struct sc_call *c)
{
	return xattr_path(c, AT_FDCWD, c->str[0], NOFOLLOW, XLIST(c, 1));
}

long sys_setxattr(struct sc_call *c)
{
	return xattr_path(c, AT_FDCWD, c->str[0], 0, XSET(c, 1));
}

long sys_lsetxattr(struct sc_call *c)
{
	return xattr_path(c, AT_FDCWD, c->str[0], NOFOLLOW, XSET(c, 1));
}

long sys_removexattr(struct sc_call *c)
{
	return xattr_path(c, AT_FDCWD, c->str[0], 0, XREM(c, 1));
}

long sys_lremovexattr(struct sc_call *c)
{
	return xattr_path(c, AT_FDCWD, c->str[0], NOFOLLOW, XREM(c, 1));
}

/* The *xattrat calls (Linux 6.13): value, size and flags in a struct
 * xattr_args { u64 value; u32 size; u32 flags; } at args[4], args[5] bytes. */
static long xattrat_args(struct sc_call *c, struct xreq *x)
{
	struct { uint64_t value; uint32_t size, flags; } a;

	if ((size_t)c->args[5] < sizeof a)
		return -EINVAL;
	if ((size_t)c->args[5] > SC_STRUCT_USIZE_MAX)
		return -E2BIG;   /* Linux's PAGE_SIZE bound */
	/* no extension of the struct is known: a larger one's tail must be
	 * zero, as copy_struct_from_user checks it first (review 34) */
	int z = sc_guest_tail_zero(c, c->args[4] + sizeof a, (size_t)c->args[5] - sizeof a);
	if (z < 0)
		return z;
	if (sc_read_guest(c, c->args[4], &a, sizeof a) < 0)
		return -EFAULT;
	x->addr = a.value;
	x->size = a.size;
	x->flags = (int)a.flags;
	if (x->op != X_SET && a.flags)
		return -EINVAL;
	return 0;
}

long sys_getxattrat(struct sc_call *c)
{
	struct xreq x = { .op = X_GET, .name = c->str[3] };
	long r = xattrat_args(c, &x);

	return r ? r : xattr_path(c, ARG_INT(c, 0), c->str[1], ARG_INT(c, 2), &x);
}

long sys_setxattrat(struct sc_call *c)
{
	struct xreq x = { .op = X_SET, .name = c->str[3] };
	long r = xattrat_args(c, &x);

	return r ? r : xattr_path(c, ARG_INT(c, 0), c->str[1], ARG_INT(c, 2), &x);
}

long sys_listxattrat(struct sc_call *c)
{
	struct xreq x = { .op = X_LIST, .addr = c->args[3], .size = (size_t)c->args[4] };

	return xattr_path(c, ARG_INT(c, 0), c->str[1], ARG_INT(c, 2), &x);
}

long sys_removexattrat(struct sc_call *c)
{
	return xattr_path(c, ARG_INT(c, 0), c->str[1], ARG_INT(c, 2), XREM(c, 3));
}

/* fsetxattr/fremovexattr: the fd's node, never the host object behind it. */
static long xattr_fd(struct sc_call *c, int fd, const struct xreq *x)
{
	cleanup_free struct vfs_node *n = xmalloc(sizeof *n);
	long r = xattr_args(x);

	if (r)
		return r;
	r = vfs_fd_node(VFS_OF(c), c->task, fd, n, NULL);
	if (r < 0)
		return r;
	if (n->opath)
		return -EBADF;
	r = xattr_node(c, n, x);
	return r == -ESTALE ? -EAGAIN : r; /* renamed away meanwhile */
}

long sys_fgetxattr(struct sc_call *c)
{
	return xattr_fd(c, ARG_INT(c, 0), XGET(c, 1));
}

long sys_flistxattr(struct sc_call *c)
{
	return xattr_fd(c, ARG_INT(c, 0), XLIST(c, 1));
}

long sys_fsetxattr(struct sc_call *c)
{
	return xattr_fd(c, ARG_INT(c, 0), XSET(c, 1));
}

long sys_fremovexattr(struct sc_call *c)
{
	return xattr_fd(c, ARG_INT(c, 0), XREM(c, 1));
}
