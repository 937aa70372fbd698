/* symlink, symlinkat, link, linkat: and the symlink depth limit. */
#include "t.h"

int main(int argc, char **argv)
{
	t_setup(argc, argv, "symlink_link");
	struct stat st, st2;
	char buf[PATH_MAX];

	t_write_file("f", "content", 0644);
	CHECK(symlink("f", "s") == 0 && readlink("s", buf, sizeof(buf)) == 1, "symlink", "%s", strerror(errno));
	EXPECT_ERR(symlink("f", "s"), EEXIST, "symlink_eexist");
	EXPECT_ERR(symlink("f", "missing/s"), ENOENT, "symlink_enoent_parent");
	EXPECT_ERR(symlink("", "empty_target"), ENOENT, "symlink_empty_target");
	CHECK(symlink("does/not/exist", "dangling") == 0 && lstat("dangling", &st) == 0 &&
		      stat("dangling", &st2) != 0 && errno == ENOENT,
	      "dangling", "%s", strerror(errno));
	mkdir("d", 0755);
	int dfd = open("d", O_RDONLY | O_DIRECTORY);
	CHECK(symlinkat("../f", dfd, "s2") == 0 && stat("d/s2", &st) == 0 && S_ISREG(st.st_mode),
	      "symlinkat_relative_to_link", "%s", strerror(errno));
	char abs[PATH_MAX + 8];
	snprintf(abs, sizeof(abs), "%s/f", t_scratch);
	CHECK(symlink(abs, "absl") == 0 && t_read_file("absl", buf, sizeof(buf)) == 7, "absolute_target",
	      "%s", strerror(errno));
	CHECK(symlink("d", "dl") == 0 && stat("dl/s2", &st) == 0, "symlink_to_dir_in_path", "%s",
	      strerror(errno));

	/* Depth: Linux follows at most 40 links in one lookup. */
	char name[32], target[32];
	t_write_file("chain0", "end", 0644);
	for (int i = 1; i <= 45; i++) {
		snprintf(name, sizeof(name), "chain%d", i);
		snprintf(target, sizeof(target), "chain%d", i - 1);
		symlink(target, name);
	}
	CHECK(t_read_file("chain30", buf, sizeof(buf)) == 3, "depth_30_ok", "%s", strerror(errno));
	CHECK(t_read_file("chain40", buf, sizeof(buf)) == 3, "depth_40_ok", "%s", strerror(errno));
	EXPECT_ERR(open("chain41", O_RDONLY), ELOOP, "depth_41_eloop");
	symlink("self", "self");
	EXPECT_ERR(stat("self", &st), ELOOP, "self_loop");
	EXPECT_ERR(stat("self/x", &st), ELOOP, "loop_in_middle");

	/* Hard links. */
	CHECK(link("f", "h") == 0 && stat("f", &st) == 0 && stat("h", &st2) == 0 && st.st_ino == st2.st_ino &&
		      st.st_nlink == 2,
	      "link", "nlink %ld", (long)st.st_nlink);
	EXPECT_ERR(link("f", "h"), EEXIST, "link_eexist");
	EXPECT_ERR(link("missing", "h3"), ENOENT, "link_enoent");
	EXPECT_ERR(link("d", "dlink"), EPERM, "link_dir_eperm");
	EXPECT_ERR(link("f", "missing/h"), ENOENT, "link_enoent_parent");
	/* linkat: by default a symlink itself is linked; AT_SYMLINK_FOLLOW links the target. */
	CHECK(linkat(AT_FDCWD, "s", AT_FDCWD, "hs", 0) == 0 && lstat("hs", &st) == 0 && S_ISLNK(st.st_mode),
	      "linkat_nofollow", "%s", strerror(errno));
	CHECK(linkat(AT_FDCWD, "s", dfd, "hf", AT_SYMLINK_FOLLOW) == 0 && lstat("d/hf", &st) == 0 &&
		      S_ISREG(st.st_mode),
	      "linkat_follow", "%s", strerror(errno));
	EXPECT_ERR(linkat(AT_FDCWD, "f", AT_FDCWD, "bad", 0x1), EINVAL, "linkat_bad_flag");
	close(dfd);
	return t_done();
}
