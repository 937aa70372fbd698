/* readlink, readlinkat. */
#include "t.h"

int main(int argc, char **argv)
{
	t_setup(argc, argv, "readlink");
	char buf[PATH_MAX];
	ssize_t n;

	symlink("target/with/parts", "lnk");
	t_write_file("f", "x", 0644);
	mkdir("d", 0755);
	symlink("../f", "d/up");

	n = readlink("lnk", buf, sizeof(buf));
	CHECK(n == 17 && memcmp(buf, "target/with/parts", 17) == 0, "basic", "n=%zd", n);
	memset(buf, 'Z', sizeof(buf));
	n = readlink("lnk", buf, 6);
	CHECK(n == 6 && memcmp(buf, "target", 6) == 0 && buf[6] == 'Z', "truncated_no_nul", "n=%zd", n);
	EXPECT_ERR(readlink("f", buf, sizeof(buf)), EINVAL, "not_a_link");
	EXPECT_ERR(readlink("missing", buf, sizeof(buf)), ENOENT, "enoent");
	EXPECT_ERR(readlink("lnk", buf, 0), EINVAL, "zero_size");
	EXPECT_ERR(syscall(SYS_readlink, "lnk", (char *)1, sizeof(buf)), EFAULT, "efault_buf");
	int dfd = open("d", O_RDONLY | O_DIRECTORY);
	n = readlinkat(dfd, "up", buf, sizeof(buf));
	CHECK(n == 4 && memcmp(buf, "../f", 4) == 0, "readlinkat_dirfd", "n=%zd", n);
	int lfd = open("lnk", O_PATH | O_NOFOLLOW);
	n = readlinkat(lfd, "", buf, sizeof(buf));
	CHECK(n == 17, "readlinkat_empty_path_o_path", "n=%zd %s", n, strerror(errno));
	close(lfd);
	close(dfd);

	/* Magic links of /proc. */
	n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = 0;
	CHECK(n > 0 && strcmp(buf, t_self) == 0, "proc_self_exe", "'%s' want '%s'", buf, t_self);
	n = readlink("/proc/self/cwd", buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = 0;
	CHECK(n > 0 && strcmp(buf, t_scratch) == 0, "proc_self_cwd", "'%s' want '%s'", buf, t_scratch);
	int fd = open("f", O_RDONLY);
	char p[64], want[PATH_MAX + 8];
	snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
	snprintf(want, sizeof(want), "%s/f", t_scratch);
	n = readlink(p, buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = 0;
	CHECK(n > 0 && strcmp(buf, want) == 0, "proc_self_fd", "'%s' want '%s'", buf, want);
	unlink("f");
	n = readlink(p, buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = 0;
	strcat(want, " (deleted)");
	CHECK(n > 0 && strcmp(buf, want) == 0, "proc_self_fd_deleted", "'%s' want '%s'", buf, want);
	close(fd);
	/* an empty name: ENOENT (the cwd is no symlink; LTP readlink03) */
	{
		char b[16];
		EXPECT_ERR(readlink("", b, sizeof b), ENOENT, "empty_name_enoent");
	}
	return t_done();
}
