/* setxattrat, getxattrat, listxattrat, removexattrat (Linux 6.13): the *at
 * forms of the xattr calls, by dirfd and relative path, with AT_EMPTY_PATH
 * on an fd and AT_SYMLINK_NOFOLLOW on a symlink, and their argument errors. */
#include "t.h"
#include <sys/syscall.h>
#include <sys/xattr.h>

#ifndef __NR_setxattrat
#define __NR_setxattrat 463
#define __NR_getxattrat 464
#define __NR_listxattrat 465
#define __NR_removexattrat 466
#endif

struct xargs {
	uint64_t value;
	uint32_t size;
	uint32_t flags;
};

static long sx(int dfd, const char *p, int at, const char *name, const void *v, uint32_t sz, uint32_t fl)
{
	struct xargs a = { (uint64_t)(uintptr_t)v, sz, fl };
	return syscall(__NR_setxattrat, dfd, p, at, name, &a, sizeof a);
}

static long gx(int dfd, const char *p, int at, const char *name, void *v, uint32_t sz)
{
	struct xargs a = { (uint64_t)(uintptr_t)v, sz, 0 };
	return syscall(__NR_getxattrat, dfd, p, at, name, &a, sizeof a);
}

int main(int argc, char **argv)
{
	t_setup(argc, argv, "xattrat");
	char buf[256];
	long n;

	/* a kernel without them answers ENOSYS to a bad call too: skip whole */
	if (syscall(__NR_listxattrat, AT_FDCWD, ".", -1, buf, sizeof buf) < 0 && errno == ENOSYS) {
		printf("no *xattrat calls on this kernel\n");
		t_rmrf(t_scratch);
		return T_SKIP;
	}
	mkdir("d", 0755);
	t_write_file("d/f", "data", 0644);
	symlink("f", "d/l");
	if (setxattr("d/f", "user.probe", "1", 1, 0) < 0) {
		printf("no user xattrs on the scratch file system\n");
		t_rmrf(t_scratch);
		return T_SKIP;
	}
	removexattr("d/f", "user.probe");
	int dfd = open("d", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		DIE("open d: %s", strerror(errno));

	EXPECT_OK(sx(dfd, "f", 0, "user.a", "va", 2, 0), "set_by_dirfd");
	n = gx(dfd, "f", 0, "user.a", buf, sizeof buf);
	CHECK(n == 2 && !memcmp(buf, "va", 2), "get_by_dirfd", "n=%ld %s", n, strerror(errno));
	n = gx(dfd, "f", 0, "user.a", NULL, 0);
	CHECK(n == 2, "get_size_query", "n=%ld", n);
	EXPECT_ERR(gx(dfd, "f", 0, "user.a", buf, 1), ERANGE, "get_small_erange");
	EXPECT_ERR(sx(dfd, "f", 0, "user.a", "x", 1, XATTR_CREATE), EEXIST, "set_create_eexist");
	EXPECT_ERR(sx(dfd, "f", 0, "user.b", "x", 1, XATTR_REPLACE), ENODATA, "set_replace_enodata");
	n = syscall(__NR_listxattrat, dfd, "f", 0, buf, sizeof buf);
	CHECK(n == 7 && !memcmp(buf, "user.a", 7), "list_by_dirfd", "n=%ld %s", n, strerror(errno));
	/* through the symlink (followed) and on the link itself (nofollow: EPERM for user.*) */
	n = gx(dfd, "l", 0, "user.a", buf, sizeof buf);
	CHECK(n == 2, "get_follows_symlink", "n=%ld %s", n, strerror(errno));
	EXPECT_ERR(sx(dfd, "l", AT_SYMLINK_NOFOLLOW, "user.a", "x", 1, 0), EPERM, "set_nofollow_link_eperm");
	/* AT_EMPTY_PATH on a file fd */
	int fd = openat(dfd, "f", O_RDONLY | O_CLOEXEC);
	n = gx(fd, "", AT_EMPTY_PATH, "user.a", buf, sizeof buf);
	CHECK(n == 2, "get_empty_path_fd", "n=%ld %s", n, strerror(errno));
	close(fd);
	/* argument errors */
	EXPECT_ERR(sx(dfd, "f", 0x80000, "user.a", "x", 1, 0), EINVAL, "set_bad_at_flags");
	EXPECT_ERR(sx(dfd, "f", 0, "user.a", "x", 1, 0x100), EINVAL, "set_bad_xattr_flags");
	EXPECT_ERR(gx(dfd, "missing", 0, "user.a", buf, sizeof buf), ENOENT, "get_missing_enoent");
	EXPECT_ERR(gx(dfd, "f", 0, "user.none", buf, sizeof buf), ENODATA, "get_absent_enodata");
	EXPECT_OK(syscall(__NR_removexattrat, dfd, "f", 0, "user.a"), "remove_by_dirfd");
	EXPECT_ERR(syscall(__NR_removexattrat, dfd, "f", 0, "user.a"), ENODATA, "remove_again_enodata");
	close(dfd);
	t_rmrf(t_scratch);
	return t_done();
}
