/* openat2: struct open_how, RESOLVE_* flags, argument validation. */
#include "t.h"
#include <linux/openat2.h>

static long sys_openat2(int dfd, const char *path, struct open_how *how, size_t size)
{
	return syscall(SYS_openat2, dfd, path, how, size);
}

int main(int argc, char **argv)
{
	t_setup(argc, argv, "openat2");
	struct open_how how;
	long fd;

	memset(&how, 0, sizeof(how));
	how.flags = O_RDONLY;
	fd = sys_openat2(AT_FDCWD, ".", &how, sizeof(how));
	if (fd < 0 && errno == ENOSYS) {
		printf("skip openat2: ENOSYS\n");
		t_done();
		return T_SKIP;
	}
	CHECK(fd >= 0, "basic", "%s", strerror(errno));
	if (fd >= 0)
		close((int)fd);

	mkdir("root", 0755);
	mkdir("root/sub", 0755);
	t_write_file("root/file", "inside", 0644);
	t_write_file("outside", "outside", 0644);
	symlink("/file", "root/abs_link");
	symlink("../outside", "root/escape_link");
	symlink("file", "root/rel_link");
	int dfd = open("root", O_RDONLY | O_DIRECTORY);

	memset(&how, 0, sizeof(how));
	how.flags = O_CREAT | O_WRONLY;
	how.mode = 0640;
	fd = sys_openat2(dfd, "created", &how, sizeof(how));
	struct stat st;
	CHECK(fd >= 0 && fstat((int)fd, &st) == 0 && (st.st_mode & 0777) == 0640, "create_mode",
	      "%s", strerror(errno));
	if (fd >= 0)
		close((int)fd);

	memset(&how, 0, sizeof(how));
	how.resolve = RESOLVE_BENEATH;
	EXPECT_ERR(sys_openat2(dfd, "../outside", &how, sizeof(how)), EXDEV, "beneath_dotdot");
	EXPECT_ERR(sys_openat2(dfd, "/etc/passwd", &how, sizeof(how)), EXDEV, "beneath_absolute");
	EXPECT_ERR(sys_openat2(dfd, "escape_link", &how, sizeof(how)), EXDEV, "beneath_symlink_escape");
	fd = sys_openat2(dfd, "sub/../file", &how, sizeof(how));
	CHECK(fd >= 0, "beneath_inner_dotdot", "%s", strerror(errno));
	if (fd >= 0)
		close((int)fd);

	memset(&how, 0, sizeof(how));
	how.resolve = RESOLVE_IN_ROOT;
	char buf[64] = {0};
	fd = sys_openat2(dfd, "/file", &how, sizeof(how));
	CHECK(fd >= 0 && read((int)fd, buf, sizeof(buf) - 1) == 6 && strcmp(buf, "inside") == 0,
	      "in_root_absolute", "%s '%s'", strerror(errno), buf);
	if (fd >= 0)
		close((int)fd);
	memset(buf, 0, sizeof(buf));
	fd = sys_openat2(dfd, "abs_link", &how, sizeof(how));
	CHECK(fd >= 0 && read((int)fd, buf, sizeof(buf) - 1) == 6 && strcmp(buf, "inside") == 0,
	      "in_root_abs_symlink", "%s '%s'", strerror(errno), buf);
	if (fd >= 0)
		close((int)fd);
	memset(buf, 0, sizeof(buf));
	fd = sys_openat2(dfd, "../../../../file", &how, sizeof(how));
	CHECK(fd >= 0 && read((int)fd, buf, sizeof(buf) - 1) == 6 && strcmp(buf, "inside") == 0,
	      "in_root_dotdot_clamped", "%s '%s'", strerror(errno), buf);
	if (fd >= 0)
		close((int)fd);

	memset(&how, 0, sizeof(how));
	how.resolve = RESOLVE_NO_SYMLINKS;
	EXPECT_ERR(sys_openat2(dfd, "rel_link", &how, sizeof(how)), ELOOP, "no_symlinks");
	memset(&how, 0, sizeof(how));
	how.resolve = RESOLVE_NO_MAGICLINKS;
	EXPECT_ERR(sys_openat2(AT_FDCWD, "/proc/self/cwd", &how, sizeof(how)), ELOOP, "no_magiclinks");
	fd = sys_openat2(dfd, "rel_link", &how, sizeof(how));
	CHECK(fd >= 0, "no_magiclinks_allows_plain_symlink", "%s", strerror(errno));
	if (fd >= 0)
		close((int)fd);
	/* a scoped look-up takes no magic-link jump (Linux's nd_jump_link:
	 * EXDEV; red team 46: followed) */
	{
		char m[32];
		int pself = open("/proc/self", O_PATH | O_DIRECTORY);
		snprintf(m, sizeof m, "fd/%d", (int)dfd);
		memset(&how, 0, sizeof(how));
		how.resolve = RESOLVE_BENEATH;
		EXPECT_ERR(sys_openat2(pself, m, &how, sizeof(how)), EXDEV, "beneath_no_magic_fd");
		EXPECT_ERR(sys_openat2(pself, "cwd", &how, sizeof(how)), EXDEV, "beneath_no_magic_cwd");
		how.resolve = RESOLVE_IN_ROOT;
		EXPECT_ERR(sys_openat2(pself, m, &how, sizeof(how)), EXDEV, "in_root_no_magic_fd");
		EXPECT_ERR(sys_openat2(pself, "exe", &how, sizeof(how)), EXDEV, "in_root_no_magic_exe");
		how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
		EXPECT_ERR(sys_openat2(pself, m, &how, sizeof(how)), ELOOP, "no_magiclinks_before_scope");
		/* RESOLVE_NO_XDEV: a jump to another mount's object is EXDEV,
		 * to the link's own (an fd of a /proc file) not (nd_jump_link;
		 * red team 48: followed) */
		int pp[2] = { -1, -1 }, pst = open("/proc/self/status", O_RDONLY);
		if (pipe(pp) != 0)
			DIE("pipe");
		memset(&how, 0, sizeof(how));
		how.resolve = RESOLVE_NO_XDEV;
		EXPECT_ERR(sys_openat2(pself, m, &how, sizeof(how)), EXDEV, "no_xdev_no_magic_fd");
		EXPECT_ERR(sys_openat2(pself, "cwd", &how, sizeof(how)), EXDEV, "no_xdev_no_magic_cwd");
		snprintf(m, sizeof m, "fd/%d", pp[0]);
		EXPECT_ERR(sys_openat2(pself, m, &how, sizeof(how)), EXDEV, "no_xdev_no_magic_pipe");
		snprintf(m, sizeof m, "fd/%d", pst);
		fd = sys_openat2(pself, m, &how, sizeof(how));
		CHECK(fd >= 0, "no_xdev_magic_same_mount", "%s", strerror(errno));
		if (fd >= 0)
			close((int)fd);
		/* an absolute symlink restarts at the root (nd_jump_root):
		 * EXDEV before the look-up set its root (a relative path
		 * that walked no ".."), after, when the link's mount is not
		 * the root's */
		struct statx sa, sb;
		if (symlinkat("/", dfd, "slash_link") != 0)
			DIE("symlink");
		how.flags = O_DIRECTORY;
		EXPECT_ERR(sys_openat2(dfd, "slash_link", &how, sizeof(how)), EXDEV, "no_xdev_absolute_link_root_unset");
		if (statx(dfd, "", AT_EMPTY_PATH, STATX_MNT_ID, &sa) == 0 &&
		    statx(AT_FDCWD, "/", 0, STATX_MNT_ID, &sb) == 0 && (sa.stx_mask & sb.stx_mask & STATX_MNT_ID)) {
			fd = sys_openat2(dfd, "../root/slash_link", &how, sizeof(how));
			int want = sa.stx_mnt_id != sb.stx_mnt_id ? EXDEV : 0;
			CHECK(want ? fd < 0 && errno == want : fd >= 0, "no_xdev_absolute_link_other_mount", "%ld %s",
			      fd, strerror(errno));
			if (fd >= 0)
				close((int)fd);
		}
		unlinkat(dfd, "slash_link", 0);
		close(pp[0]);
		close(pp[1]);
		if (pst >= 0)
			close(pst);
		if (pself >= 0)
			close(pself);
	}

	/* Argument validation. */
	memset(&how, 0, sizeof(how));
	how.flags = O_RDONLY;
	how.mode = 0644;
	EXPECT_ERR(sys_openat2(dfd, "file", &how, sizeof(how)), EINVAL, "mode_without_creat");
	memset(&how, 0, sizeof(how));
	how.resolve = 1ULL << 40;
	EXPECT_ERR(sys_openat2(dfd, "file", &how, sizeof(how)), EINVAL, "unknown_resolve_bit");
	memset(&how, 0, sizeof(how));
	how.flags = 1ULL << 40;
	EXPECT_ERR(sys_openat2(dfd, "file", &how, sizeof(how)), EINVAL, "unknown_flag_bit");
	memset(&how, 0, sizeof(how));
	EXPECT_ERR(sys_openat2(dfd, "file", &how, 8), EINVAL, "size_too_small");
	struct {
		struct open_how how;
		uint64_t extra;
	} big = {.how = {.flags = O_RDONLY}, .extra = 1};
	EXPECT_ERR(sys_openat2(dfd, "file", &big.how, sizeof(big)), E2BIG, "size_big_nonzero_tail");
	big.extra = 0;
	fd = sys_openat2(dfd, "file", &big.how, sizeof(big));
	CHECK(fd >= 0, "size_big_zero_tail", "%s", strerror(errno));
	if (fd >= 0)
		close((int)fd);
	EXPECT_ERR(sys_openat2(dfd, "file", (struct open_how *)1, sizeof(how)), EFAULT, "efault_how");
	EXPECT_ERR(sys_openat2(dfd, "missing", &how, sizeof(how)), ENOENT, "enoent");
	close(dfd);
	return t_done();
}
