/* mkdir, mkdirat, rmdir. */
#include "t.h"

int main(int argc, char **argv)
{
	t_setup(argc, argv, "mkdir");
	struct stat st;

	CHECK(mkdir("d", 0777) == 0 && stat("d", &st) == 0 && S_ISDIR(st.st_mode) &&
		      (st.st_mode & 07777) == 0755,
	      "mkdir_umask", "mode %o", st.st_mode & 07777);
	EXPECT_ERR(mkdir("d", 0755), EEXIST, "eexist");
	EXPECT_ERR(mkdir("missing/d", 0755), ENOENT, "enoent_parent");
	t_write_file("f", "", 0644);
	EXPECT_ERR(mkdir("f", 0755), EEXIST, "eexist_file");
	EXPECT_ERR(mkdir("f/d", 0755), ENOTDIR, "enotdir_parent");
	symlink("d", "lnk");
	EXPECT_ERR(mkdir("lnk", 0755), EEXIST, "eexist_symlink");
	symlink("nowhere", "dangling");
	EXPECT_ERR(mkdir("dangling", 0755), EEXIST, "eexist_dangling_symlink");
	CHECK(mkdir("slash/", 0700) == 0 && stat("slash", &st) == 0 && (st.st_mode & 07777) == 0700,
	      "trailing_slash", "%s", strerror(errno));
	CHECK(mkdir("d/sub", 0711) == 0 && stat("d/sub", &st) == 0 && (st.st_mode & 07777) == 0711,
	      "nested", "mode %o", st.st_mode & 07777);
	CHECK(stat("d", &st) == 0 && st.st_nlink == 3, "parent_nlink", "nlink %ld", (long)st.st_nlink);
	int dfd = open("d", O_RDONLY | O_DIRECTORY);
	CHECK(mkdirat(dfd, "at", 0755) == 0 && stat("d/at", &st) == 0, "mkdirat", "%s", strerror(errno));
	EXPECT_ERR(mkdirat(dfd, "at", 0755), EEXIST, "mkdirat_eexist");
	close(dfd);
	char longname[300];
	memset(longname, 'n', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = 0;
	EXPECT_ERR(mkdir(longname, 0755), ENAMETOOLONG, "enametoolong");
	EXPECT_ERR(mkdir("", 0755), ENOENT, "empty");

	/* rmdir. */
	EXPECT_ERR(rmdir("d"), ENOTEMPTY, "rmdir_notempty");
	EXPECT_ERR(rmdir("f"), ENOTDIR, "rmdir_file");
	EXPECT_ERR(rmdir("lnk"), ENOTDIR, "rmdir_symlink");
	EXPECT_ERR(rmdir("missing"), ENOENT, "rmdir_enoent");
	EXPECT_ERR(rmdir("d/sub/."), EINVAL, "rmdir_dot");
	EXPECT_ERR(rmdir("d/sub/.."), ENOTEMPTY, "rmdir_dotdot");
	CHECK(rmdir("d/sub") == 0 && stat("d/sub", &st) != 0 && errno == ENOENT, "rmdir", "%s",
	      strerror(errno));
	CHECK(rmdir("slash/") == 0, "rmdir_trailing_slash", "%s", strerror(errno));
	/* 0555 directory: creating inside needs write permission (root bypasses). */
	mkdir("ro", 0555);
	if (geteuid() == 0) {
		/* in /tmp: the scratch dir is a host directory under moat, where
		 * guest root has no DAC override (isolation_meta.sh) */
		char tp[64], tx[80];
		snprintf(tp, sizeof tp, "/tmp/moat-mkdir-%d", (int)getpid());
		snprintf(tx, sizeof tx, "%s/x", tp);
		mkdir(tp, 0555);
		chmod(tp, 0555);
		CHECK(mkdir(tx, 0755) == 0, "root_bypasses_dir_perm", "%s", strerror(errno));
		rmdir(tx);
		rmdir(tp);
	}
	else
		EXPECT_ERR(mkdir("ro/x", 0755), EACCES, "eacces_in_0555");
	return t_done();
}
