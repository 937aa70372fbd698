/* Directory chains deeper than PATH_MAX, walked relatively (as rm -rf, tar
 * and find do with *at calls): Linux has no limit there. */
#include "t.h"

#define NAME "ddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd" /* 71 */
#define DEPTH 80 /* 80 * 72 = 5760 bytes > PATH_MAX */

int main(int argc, char **argv)
{
	t_setup(argc, argv, "deep_tree");
	int ok = 1, i;
	mkdir("top", 0755);
	int fd = open("top", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	for (i = 0; i < DEPTH && ok; i++) {
		if (mkdirat(fd, NAME, 0755) != 0) {
			ok = 0;
			break;
		}
		int nfd = openat(fd, NAME, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (nfd < 0) {
			ok = 0;
			break;
		}
		close(fd);
		fd = nfd;
	}
	CHECK(ok, "mkdirat_openat_chain", "level %d: %s", i, strerror(errno));
	int f = openat(fd, "leaf", O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
	CHECK(f >= 0 && write(f, "leaf", 4) == 4, "create_at_bottom", "%s", strerror(errno));
	if (f >= 0)
		close(f);
	struct stat st;
	CHECK(fstatat(fd, "leaf", &st, 0) == 0 && st.st_size == 4, "fstatat_at_bottom", "%s", strerror(errno));
	/* the deep directory follows a rename of the top of its chain */
	CHECK(rename("top", "top2") == 0 && (f = openat(fd, "leaf2", O_CREAT | O_WRONLY | O_CLOEXEC, 0644)) >= 0,
	      "create_after_top_renamed", "%s", strerror(errno));
	if (f >= 0)
		close(f);
	CHECK(unlinkat(fd, "leaf2", 0) == 0 && rename("top2", "top") == 0, "unlink_after_top_renamed", "%s",
	      strerror(errno));
	/* chdir down the chain and work relatively. */
	ok = chdir("top") == 0;
	for (i = 0; i < DEPTH && ok; i++)
		ok = chdir(NAME) == 0;
	CHECK(ok, "chdir_chain", "level %d: %s", i, strerror(errno));
	CHECK(stat("leaf", &st) == 0 && st.st_size == 4, "stat_relative_at_bottom", "%s", strerror(errno));
	char buf[8];
	EXPECT_ERR(getcwd(buf, sizeof buf) ? 0 : -1, ERANGE, "getcwd_erange");
	/* Up again with ".." and remove on the way. */
	ok = unlink("leaf") == 0;
	for (i = 0; i < DEPTH && ok; i++)
		ok = chdir("..") == 0 && rmdir(NAME) == 0;
	CHECK(ok, "dotdot_rmdir_chain", "level %d: %s", i, strerror(errno));
	CHECK(getcwd(buf, sizeof buf) == NULL && errno == ERANGE, "back_at_top", "%s", strerror(errno));
	close(fd);
	return t_done();
}
