/* chroot: Linux's errors in Linux's order (the walk, search permission,
 * CAP_SYS_CHROOT); chroot("/") keeps the root (moat emulates no root of a
 * task's own: another directory would be EPERM there, so no case asks it). */
#include "t.h"

int main(int argc, char **argv)
{
	t_setup(argc, argv, "chroot");
	char longname[PATH_MAX + 16];
	int root = geteuid() == 0;

	t_write_file("f", "x", 0644);
	mkdir("d", 0755);
	symlink("loop2", "loop1");
	symlink("loop1", "loop2");
	memset(longname, 'a', sizeof longname - 1);
	longname[sizeof longname - 1] = 0;

	EXPECT_ERR(chroot("missing"), ENOENT, "enoent");
	EXPECT_ERR(chroot("f"), ENOTDIR, "enotdir");
	EXPECT_ERR(chroot("f/x"), ENOTDIR, "enotdir_component");
	EXPECT_ERR(chroot("loop1"), ELOOP, "eloop");
	EXPECT_ERR(chroot(longname), ENAMETOOLONG, "enametoolong");
	EXPECT_ERR(syscall(SYS_chroot, (char *)1), EFAULT, "efault");
	EXPECT_ERR(chroot(""), ENOENT, "empty");
	if (root) {
		EXPECT_OK(chroot("/"), "root_keeps_root");
		/* then / is still the same directory */
		CHECK(access("/proc/self", F_OK) == 0, "root_unchanged", "%s", strerror(errno));
	} else {
		EXPECT_ERR(chroot("/"), EPERM, "no_cap_eperm");
		EXPECT_ERR(chroot("d"), EPERM, "no_cap_eperm_dir");
	}
	return t_done();
}
