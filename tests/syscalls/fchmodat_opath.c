/* fchmodat(AT_SYMLINK_NOFOLLOW) as glibc does it without fchmodat2: an O_PATH
 * open, then chmod("/proc/self/fd/N") (tar -xf restores directory modes so). */
#include "t.h"

static int chmod_via_opath(const char *path, mode_t mode)
{
	int fd = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	char p[64];
	snprintf(p, sizeof p, "/proc/self/fd/%d", fd);
	int r = chmod(p, mode);
	int e = errno;
	close(fd);
	errno = e;
	return r;
}

int main(int argc, char **argv)
{
	t_setup(argc, argv, "fchmodat_opath");
	struct stat st;

	mkdir("d", 0700);
	CHECK(chmod_via_opath("d", 0755) == 0 && stat("d", &st) == 0 && (st.st_mode & 07777) == 0755,
	      "dir", "%s mode %o", strerror(errno), st.st_mode & 07777);
	t_write_file("f", "x", 0600);
	CHECK(chmod_via_opath("f", 0640) == 0 && stat("f", &st) == 0 && (st.st_mode & 07777) == 0640,
	      "file", "%s mode %o", strerror(errno), st.st_mode & 07777);
	symlink("f", "l");
	/* A symlink's mode cannot be changed: EOPNOTSUPP through the magic link. */
	EXPECT_ERR(chmod_via_opath("l", 0600), EOPNOTSUPP, "symlink_eopnotsupp");
	CHECK(stat("f", &st) == 0 && (st.st_mode & 07777) == 0640, "symlink_target_untouched", "mode %o",
	      st.st_mode & 07777);
	/* The library call itself. */
	CHECK(fchmodat(AT_FDCWD, "d", 0711, AT_SYMLINK_NOFOLLOW) == 0 && stat("d", &st) == 0 &&
		      (st.st_mode & 07777) == 0711,
	      "fchmodat_nofollow", "%s mode %o", strerror(errno), st.st_mode & 07777);
	/* fchown through the O_PATH magic link to our own ids is allowed. */
	{
		int fd = open("f", O_PATH | O_CLOEXEC);
		char p[64];
		snprintf(p, sizeof p, "/proc/self/fd/%d", fd);
		CHECK(chown(p, getuid(), getgid()) == 0, "chown_own_ids", "%s", strerror(errno));
		/* utimes through the link. */
		struct timespec ts[2] = {{1000000000, 0}, {1000000000, 0}};
		CHECK(utimensat(AT_FDCWD, p, ts, 0) == 0 && stat("f", &st) == 0 && st.st_mtime == 1000000000,
		      "utimens_magic", "%s", strerror(errno));
		close(fd);
	}
	chmod("d", 0755);
	return t_done();
}
