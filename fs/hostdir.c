/* fs/hostdir.c - a VFS backend over host directory fds, with the gofer's
 * semantics (gofer/gofer.h). For unit tests of the walk without a gofer
 * process; moat itself always uses the gofer.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fs/walk.h"

static int root(void *ctx, int exp)
{
	struct vfs_hostdir *h = ctx;

	return exp >= 0 && exp < h->nroots ? h->roots[exp] : -1;
}

static int ro(void *ctx, int exp)
{
	struct vfs_hostdir *h = ctx;

	return !h->writable[exp];
}

static const char *dotted(const char *rel)
{
	return *rel ? rel : ".";
}

#define ROOT(ctx, exp) int rfd = root(ctx, exp); if (rfd < 0) return -EINVAL
#define RW(ctx, exp) do { if (ro(ctx, exp)) return -EROFS; } while (0)
#define R(x) ((x) < 0 ? -errno : 0)

static int h_lstat(void *ctx, int exp, const char *rel, struct stat *st)
{
	ROOT(ctx, exp);
	return R(fstatat(rfd, dotted(rel), st, AT_SYMLINK_NOFOLLOW));
}

static long h_readlink(void *ctx, int exp, const char *rel, char *buf, size_t len)
{
	ROOT(ctx, exp);
	ssize_t n = readlinkat(rfd, rel, buf, len);
	return n < 0 ? -errno : n;
}

static int h_walk(void *ctx, int exp, const char *rel, struct gofer_walk *out)
{
	char pre[PATH_MAX];
	size_t pl = 0;

	ROOT(ctx, exp);
	out->n = 0;
	out->err = 0;
	out->link[0] = 0;
	if (!*rel) {
		if (fstatat(rfd, ".", &out->st[0], 0) < 0)
			return -errno;
		out->n = 1;
		return 0;
	}
	for (const char *c = rel; out->n < GOFER_WALK_MAX; ) {
		const char *e = strchrnul(c, '/');
		if (pl)
			pre[pl++] = '/';
		memcpy(pre + pl, c, e - c);
		pl += e - c;
		pre[pl] = 0;
		if (out->n && !S_ISDIR(out->st[out->n - 1].st_mode)) {
			out->err = -ENOTDIR;
			return 0;
		}
		if (fstatat(rfd, pre, &out->st[out->n], AT_SYMLINK_NOFOLLOW) < 0) {
			out->err = -errno;
			return 0;
		}
		out->n++;
		if (S_ISLNK(out->st[out->n - 1].st_mode)) {
			ssize_t l = readlinkat(rfd, pre, out->link, sizeof out->link - 1);
			out->link[l > 0 ? l : 0] = 0;
			return 0;
		}
		if (!*e)
			break;
		c = e + 1;
	}
	return 0;
}

static int h_open(void *ctx, int exp, const char *rel, int flags, mode_t mode,
		  int *fd, struct stat *st)
{
	struct open_how how = { 0 };

	ROOT(ctx, exp);
	if ((flags & (O_CREAT | O_TRUNC)) || (flags & O_ACCMODE) != O_RDONLY)
		RW(ctx, exp);
	how.flags = flags | O_CLOEXEC | O_NOFOLLOW;
	how.mode = (flags & O_CREAT) ? mode : 0;
	how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
	int r = syscall(SYS_openat2, rfd, dotted(rel), &how, sizeof how);
	if (r < 0)
		return -errno;
	if (st && fstat(r, st) < 0) {
		int e = -errno;
		close(r);
		return e;
	}
	*fd = r;
	return 0;
}

static int h_mkdir(void *ctx, int exp, const char *rel, mode_t mode)
{ ROOT(ctx, exp); RW(ctx, exp); return R(mkdirat(rfd, rel, mode)); }
static int h_mknod(void *ctx, int exp, const char *rel, mode_t mode)
{
	ROOT(ctx, exp);
	RW(ctx, exp);
	if (!S_ISFIFO(mode) && !S_ISREG(mode) && !S_ISSOCK(mode) && (mode & S_IFMT))
		return -EPERM;
	return R(mknodat(rfd, rel, mode, 0));
}
static int h_unlink(void *ctx, int exp, const char *rel, int flags)
{ ROOT(ctx, exp); RW(ctx, exp); return R(unlinkat(rfd, rel, flags)); }
static int h_rename(void *ctx, int exp, const char *o, const char *n, unsigned flags)
{ ROOT(ctx, exp); RW(ctx, exp); return R(renameat2(rfd, o, rfd, n, flags)); }
static int h_symlink(void *ctx, int exp, const char *target, const char *rel)
{ ROOT(ctx, exp); RW(ctx, exp); return R(symlinkat(target, rfd, rel)); }
static int h_link(void *ctx, int exp, const char *o, const char *n)
{ ROOT(ctx, exp); RW(ctx, exp); return R(linkat(rfd, o, rfd, n, 0)); }
static int h_chmod(void *ctx, int exp, const char *rel, mode_t mode)
{ ROOT(ctx, exp); RW(ctx, exp); return R(fchmodat(rfd, dotted(rel), mode, 0)); }
static int h_chown(void *ctx, int exp, const char *rel, uid_t uid, gid_t gid)
{ ROOT(ctx, exp); RW(ctx, exp); return R(fchownat(rfd, dotted(rel), uid, gid, AT_SYMLINK_NOFOLLOW)); }
static int h_truncate(void *ctx, int exp, const char *rel, off_t len)
{
	int fd = -1, r;
	ROOT(ctx, exp);
	RW(ctx, exp);
	r = h_open(ctx, exp, rel, O_WRONLY, 0, &fd, NULL);
	if (r < 0)
		return r;
	r = R(ftruncate(fd, len));
	close(fd);
	return r;
}
static int h_utimens(void *ctx, int exp, const char *rel, const struct timespec ts[2], int flags)
{ ROOT(ctx, exp); RW(ctx, exp); return R(utimensat(rfd, dotted(rel), ts, flags)); }
static int h_statfs(void *ctx, int exp, const char *rel, struct statfs *st)
{
	int fd = -1, r;
	ROOT(ctx, exp);
	r = h_open(ctx, exp, rel, O_PATH, 0, &fd, NULL);
	if (r < 0)
		return r;
	r = R(fstatfs(fd, st));
	close(fd);
	return r;
}

const struct vfs_backend vfs_hostdir_backend = {
	.walk = h_walk, .lstat = h_lstat, .open = h_open, .readlink = h_readlink,
	.mkdir = h_mkdir, .mknod = h_mknod, .unlink = h_unlink, .rename = h_rename,
	.symlink = h_symlink, .link = h_link, .chmod = h_chmod, .chown = h_chown,
	.truncate = h_truncate, .utimens = h_utimens, .statfs = h_statfs,
};
