/* sysfs(2): the file system types, as /proc/filesystems lists them. */
#include "t.h"

int main(int argc, char **argv)
{
	t_setup(argc, argv, "sysfs");
	char name[64] = "", fsl[8192];
	long n = syscall(SYS_sysfs, 3);
	int fd = open("/proc/filesystems", O_RDONLY);
	ssize_t len = fd >= 0 ? read(fd, fsl, sizeof fsl - 1) : -1;
	long lines = 0;

	if (fd >= 0)
		close(fd);
	for (ssize_t i = 0; i < len; i++)
		lines += fsl[i] == '\n';
	CHECK(n > 0 && n == lines, "count_is_proc_filesystems", "%ld vs %ld", n, lines);
	long p = syscall(SYS_sysfs, 1, "proc");
	CHECK(p >= 0 && syscall(SYS_sysfs, 2, (unsigned)p, name) == 0 && !strcmp(name, "proc"), "name_index_roundtrip",
	      "%ld [%s]", p, name);
	EXPECT_ERR(syscall(SYS_sysfs, 1, "moat-no-such-fs"), EINVAL, "unknown_name_einval");
	EXPECT_ERR(syscall(SYS_sysfs, 2, 100000u, name), EINVAL, "index_past_end_einval");
	EXPECT_ERR(syscall(SYS_sysfs, 9), EINVAL, "bad_option_einval");
	EXPECT_ERR(syscall(SYS_sysfs, 1, (char *)8), EFAULT, "bad_name_efault");
	return t_done();
}
