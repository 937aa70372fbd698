/* unlink, unlinkat. */
#include "t.h"

int main(int argc, char **argv)
{
	t_setup(argc, argv, "unlink");
	struct stat st;
	char buf[32];

	t_write_file("f", "data", 0644);
	CHECK(unlink("f") == 0 && access("f", F_OK) != 0 && errno == ENOENT, "unlink", "%s", strerror(errno));
	EXPECT_ERR(unlink("f"), ENOENT, "enoent");
	mkdir("d", 0755);
	EXPECT_ERR(unlink("d"), EISDIR, "eisdir");
	t_write_file("g", "data", 0644);
	EXPECT_ERR(unlink("g/"), ENOTDIR, "trailing_slash_file");
	EXPECT_ERR(unlink("g/x"), ENOTDIR, "enotdir");

	/* Unlinking a symlink removes the link, not the target. */
	symlink("g", "lnk");
	CHECK(unlink("lnk") == 0 && access("g", F_OK) == 0 && lstat("lnk", &st) != 0, "symlink_only",
	      "%s", strerror(errno));

	/* An open file survives its unlink. */
	int fd = open("g", O_RDONLY);
	unlink("g");
	CHECK(fd >= 0 && read(fd, buf, sizeof(buf)) == 4 && fstat(fd, &st) == 0 && st.st_nlink == 0,
	      "open_survives", "nlink %ld", (long)st.st_nlink);
	close(fd);

	/* Hard link count drops. */
	t_write_file("h", "", 0644);
	link("h", "h2");
	unlink("h");
	CHECK(stat("h2", &st) == 0 && st.st_nlink == 1, "hardlink_nlink", "nlink %ld", (long)st.st_nlink);

	/* unlinkat. */
	int dfd = open(".", O_RDONLY | O_DIRECTORY);
	mkdir("d/e", 0755);
	EXPECT_ERR(unlinkat(dfd, "d", AT_REMOVEDIR), ENOTEMPTY, "unlinkat_removedir_notempty");
	CHECK(unlinkat(dfd, "d/e", AT_REMOVEDIR) == 0, "unlinkat_removedir", "%s", strerror(errno));
	EXPECT_ERR(unlinkat(dfd, "h2", AT_REMOVEDIR), ENOTDIR, "unlinkat_removedir_file");
	EXPECT_ERR(unlinkat(dfd, "h2", 0x1), EINVAL, "unlinkat_bad_flag");
	CHECK(unlinkat(dfd, "h2", 0) == 0, "unlinkat_file", "%s", strerror(errno));
	int sub = open("d", O_RDONLY | O_DIRECTORY);
	t_write_file("d/x", "", 0644);
	CHECK(unlinkat(sub, "x", 0) == 0 && access("d/x", F_OK) != 0, "unlinkat_dirfd", "%s", strerror(errno));
	close(sub);
	close(dfd);
	EXPECT_ERR(unlink(""), ENOENT, "empty");

	/* Sticky /tmp-like directory: owner may remove its own file. */
	mkdir("sticky", 01777);
	chmod("sticky", 01777);
	t_write_file("sticky/mine", "", 0644);
	CHECK(unlink("sticky/mine") == 0, "sticky_own_file", "%s", strerror(errno));
	return t_done();
}
