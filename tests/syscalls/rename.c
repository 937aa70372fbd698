/* rename, renameat, renameat2. */
#include "t.h"
#include <linux/fs.h>

int main(int argc, char **argv)
{
	t_setup(argc, argv, "rename");
	struct stat st, st2;
	char buf[32];

	t_write_file("a", "AAA", 0644);
	stat("a", &st);
	CHECK(rename("a", "b") == 0 && access("a", F_OK) != 0 && stat("b", &st2) == 0 &&
		      st.st_ino == st2.st_ino,
	      "basic", "%s", strerror(errno));
	t_write_file("c", "CCC", 0644);
	CHECK(rename("b", "c") == 0 && t_read_file("c", buf, sizeof(buf)) == 3 && strcmp(buf, "AAA") == 0,
	      "replace_file", "'%s'", buf);
	EXPECT_ERR(rename("missing", "x"), ENOENT, "enoent");
	EXPECT_ERR(rename("c", "nodir/x"), ENOENT, "enoent_target_parent");
	CHECK(rename("c", "c") == 0, "same_path_noop", "%s", strerror(errno));
	link("c", "c2");
	CHECK(rename("c", "c2") == 0 && access("c", F_OK) == 0, "same_inode_noop", "%s", strerror(errno));

	mkdir("d1", 0755);
	mkdir("d2", 0755);
	mkdir("full", 0755);
	t_write_file("full/x", "", 0644);
	CHECK(rename("d1", "d2") == 0 && access("d1", F_OK) != 0, "dir_over_empty_dir", "%s", strerror(errno));
	{
		errno = 0;
		int r = rename("d2", "full");
		CHECK(r == -1 && (errno == ENOTEMPTY || errno == EEXIST), "dir_over_full_dir", "r=%d %s", r,
		      strerror(errno));
	}
	EXPECT_ERR(rename("c", "d2"), EISDIR, "file_over_dir");
	EXPECT_ERR(rename("d2", "c"), ENOTDIR, "dir_over_file");
	mkdir("d2/inner", 0755);
	EXPECT_ERR(rename("d2", "d2/inner/x"), EINVAL, "dir_into_itself");
	EXPECT_ERR(rename("c/", "z"), ENOTDIR, "trailing_slash_file");
	CHECK(rename("d2/", "d3/") == 0 && access("d3/inner", F_OK) == 0, "dir_trailing_slash", "%s",
	      strerror(errno));
	EXPECT_ERR(rename("d3/.", "x"), EBUSY, "rename_dot");

	/* Symlinks are renamed, not followed. */
	symlink("c", "lnk");
	CHECK(rename("lnk", "lnk2") == 0 && lstat("lnk2", &st) == 0 && S_ISLNK(st.st_mode) &&
		      access("c", F_OK) == 0,
	      "symlink_itself", "%s", strerror(errno));

	/* renameat with dirfds. */
	int d3 = open("d3", O_RDONLY | O_DIRECTORY), full = open("full", O_RDONLY | O_DIRECTORY);
	CHECK(renameat(full, "x", d3, "moved") == 0 && access("d3/moved", F_OK) == 0, "renameat_dirfds",
	      "%s", strerror(errno));

	/* renameat2 flags. */
	t_write_file("p", "P", 0644);
	t_write_file("q", "Q", 0644);
	long r = syscall(SYS_renameat2, AT_FDCWD, "p", AT_FDCWD, "q", RENAME_NOREPLACE);
	CHECK(r == -1 && errno == EEXIST, "renameat2_noreplace", "r=%ld %s", r, strerror(errno));
	r = syscall(SYS_renameat2, AT_FDCWD, "p", AT_FDCWD, "q", RENAME_EXCHANGE);
	char b1[8] = {0}, b2[8] = {0};
	t_read_file("p", b1, sizeof(b1));
	t_read_file("q", b2, sizeof(b2));
	CHECK(r == 0 && !strcmp(b1, "Q") && !strcmp(b2, "P"), "renameat2_exchange", "r=%ld '%s' '%s' %s", r,
	      b1, b2, strerror(errno));
	EXPECT_ERR(syscall(SYS_renameat2, AT_FDCWD, "p", AT_FDCWD, "nonexist", RENAME_EXCHANGE), ENOENT,
		   "renameat2_exchange_enoent");
	EXPECT_ERR(syscall(SYS_renameat2, AT_FDCWD, "p", AT_FDCWD, "q", RENAME_EXCHANGE | RENAME_NOREPLACE),
		   EINVAL, "renameat2_bad_combo");
	r = syscall(SYS_renameat2, AT_FDCWD, "p", AT_FDCWD, "fresh", RENAME_NOREPLACE);
	CHECK(r == 0 && access("fresh", F_OK) == 0, "renameat2_noreplace_ok", "%s", strerror(errno));
	close(d3);
	close(full);

	/* An open fd follows the file across a rename. */
	int fd = open("fresh", O_RDONLY);
	rename("fresh", "d3/fresh2");
	memset(buf, 0, sizeof(buf));
	CHECK(read(fd, buf, sizeof(buf)) == 1 && buf[0] == 'Q', "fd_survives_rename", "'%s'", buf);
	close(fd);
	return t_done();
}
