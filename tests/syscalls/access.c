/* access, faccessat, faccessat2. */
#include "t.h"

int main(int argc, char **argv)
{
	t_setup(argc, argv, "access");
	bool root = geteuid() == 0;

	t_write_file("rw", "x", 0600);
	t_write_file("none", "x", 0000);
	t_write_file("exe", "#!/bin/sh\n", 0755);
	t_write_file("noexec", "x", 0644);
	symlink("rw", "lnk");
	symlink("missing", "dangling");

	CHECK(access("rw", F_OK) == 0, "f_ok", "%s", strerror(errno));
	CHECK(access("rw", R_OK | W_OK) == 0, "rw_ok", "%s", strerror(errno));
	EXPECT_ERR(access("missing", F_OK), ENOENT, "enoent");
	EXPECT_ERR(access("rw/x", F_OK), ENOTDIR, "enotdir");
	CHECK(access("exe", X_OK) == 0, "x_ok", "%s", strerror(errno));
	/* X_OK needs an x bit somewhere, even for root. */
	EXPECT_ERR(access("noexec", X_OK), EACCES, "x_ok_denied");
	/* root's DAC override is checked in /tmp only: the scratch dir is a
	 * host directory under moat (a rw bind), where guest root has none
	 * (ARCHITECTURE.md; tests/integration/isolation_meta.sh) */
	if (root) {
		/* /tmp is the sandbox's own (private tmpfs): root keeps its override */
		char tp[64];
		snprintf(tp, sizeof tp, "/tmp/moat-access-%d", (int)getpid());
		int tfd = open(tp, O_CREAT | O_EXCL | O_WRONLY, 0000);
		CHECK(tfd >= 0 && access(tp, R_OK | W_OK) == 0, "root_bypasses_rw", "%s",
		      strerror(errno));
		if (tfd >= 0)
			close(tfd);
		unlink(tp);
	}
	else
		EXPECT_ERR(access("none", R_OK), EACCES, "unreadable");
	CHECK(access(".", R_OK | W_OK | X_OK) == 0, "dir_rwx", "%s", strerror(errno));
	EXPECT_ERR(access("rw", 0x40), EINVAL, "bad_mode");
	EXPECT_ERR(access("dangling", F_OK), ENOENT, "dangling");
	CHECK(faccessat(AT_FDCWD, "dangling", F_OK, AT_SYMLINK_NOFOLLOW) == 0, "faccessat_nofollow",
	      "%s", strerror(errno));
	mkdir("d", 0755);
	int dfd = open("d", O_RDONLY | O_DIRECTORY);
	CHECK(faccessat(dfd, "../rw", R_OK, 0) == 0, "faccessat_dirfd", "%s", strerror(errno));
	EXPECT_ERR(faccessat(dfd, "rw", R_OK, 0), ENOENT, "faccessat_dirfd_enoent");
	long r = syscall(SYS_faccessat2, AT_FDCWD, "rw", R_OK, AT_EACCESS);
	if (r != 0 && errno == ENOSYS)
		t_ok("faccessat2_skipped");
	else {
		CHECK(r == 0, "faccessat2_eaccess", "%s", strerror(errno));
		EXPECT_ERR(syscall(SYS_faccessat2, AT_FDCWD, "rw", R_OK, 0x1), EINVAL, "faccessat2_bad_flag");
		int fd = open("rw", O_RDONLY);
		CHECK(syscall(SYS_faccessat2, fd, "", R_OK, AT_EMPTY_PATH) == 0, "faccessat2_empty_path",
		      "%s", strerror(errno));
		close(fd);
	}
	close(dfd);
	CHECK(access("/bin/sh", X_OK) == 0, "bin_sh_x", "%s", strerror(errno));
	CHECK(access("/etc/passwd", R_OK) == 0, "etc_passwd_r", "%s", strerror(errno));
	EXPECT_ERR(access((const char *)1, F_OK), EFAULT, "efault");
	return t_done();
}
