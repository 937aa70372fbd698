/* chmod, fchmod, fchmodat. */
#include "t.h"

static mode_t mode_of(const char *p)
{
	struct stat st;
	if (stat(p, &st) != 0)
		return (mode_t)-1;
	return st.st_mode & 07777;
}

int main(int argc, char **argv)
{
	t_setup(argc, argv, "chmod");
	t_write_file("f", "", 0644);
	CHECK(chmod("f", 0600) == 0 && mode_of("f") == 0600, "chmod", "mode %o", mode_of("f"));
	CHECK(chmod("f", 04755) == 0 && mode_of("f") == 04755, "setuid_bit", "mode %o", mode_of("f"));
	CHECK(chmod("f", 0) == 0 && mode_of("f") == 0, "zero", "mode %o", mode_of("f"));
	chmod("f", 0644);
	int fd = open("f", O_RDONLY);
	CHECK(fchmod(fd, 0640) == 0 && mode_of("f") == 0640, "fchmod", "mode %o", mode_of("f"));
	close(fd);
	fd = open("f", O_PATH);
	EXPECT_ERR(fchmod(fd, 0600), EBADF, "fchmod_o_path");
	close(fd);
	EXPECT_ERR(fchmod(9999, 0600), EBADF, "fchmod_ebadf");
	symlink("f", "lnk");
	CHECK(chmod("lnk", 0604) == 0 && mode_of("f") == 0604, "follows_symlink", "mode %o", mode_of("f"));
	mkdir("d", 0755);
	int dfd = open("d", O_RDONLY | O_DIRECTORY);
	t_write_file("d/g", "", 0644);
	CHECK(fchmodat(dfd, "g", 0611, 0) == 0 && mode_of("d/g") == 0611, "fchmodat", "mode %o",
	      mode_of("d/g"));
	EXPECT_ERR(fchmodat(dfd, "g", 0611, 0x4000000), EINVAL, "fchmodat_bad_flag");
	close(dfd);
	CHECK(chmod("d", 0700) == 0 && mode_of("d") == 0700, "chmod_dir", "mode %o", mode_of("d"));
	EXPECT_ERR(chmod("missing", 0600), ENOENT, "enoent");
	EXPECT_ERR(chmod("f/x", 0600), ENOTDIR, "enotdir");
	/* Mode bits beyond 07777 are ignored. */
	CHECK(chmod("f", 0170644) == 0 && mode_of("f") == 0644, "high_bits_ignored", "mode %o", mode_of("f"));
	/* Permission takes effect. */
	chmod("f", 0);
	if (geteuid() != 0)
		EXPECT_ERR(open("f", O_RDONLY), EACCES, "mode_enforced");
	else
		t_ok("mode_enforced");
	chmod("f", 0644);
	/* A file of another owner: chmod and chown are EPERM, not EACCES (LTP
	 * fchownat03 on /dev/null). Only when not root: natively root would
	 * change the host's /dev/null. */
	if (geteuid() != 0) {
		EXPECT_ERR(chmod("/dev/null", 0666), EPERM, "other_owner_chmod_eperm");
		EXPECT_ERR(fchownat(AT_FDCWD, "/dev/null", geteuid(), getegid(), 0), EPERM,
			   "other_owner_chown_eperm");
	} else {
		t_ok("other_owner_chmod_eperm");
		t_ok("other_owner_chown_eperm");
	}
	return t_done();
}
