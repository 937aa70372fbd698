/* utimensat, futimens, utimes. */
#include "t.h"
#include <sys/time.h>
#include <time.h>

int main(int argc, char **argv)
{
	t_setup(argc, argv, "utimensat");
	struct stat st;
	t_write_file("f", "", 0644);
	symlink("f", "lnk");

	struct timespec ts[2] = {{.tv_sec = 1000000000, .tv_nsec = 123456789},
				 {.tv_sec = 1200000000, .tv_nsec = 987654321}};
	CHECK(utimensat(AT_FDCWD, "f", ts, 0) == 0 && stat("f", &st) == 0 &&
		      st.st_atim.tv_sec == 1000000000 && st.st_atim.tv_nsec == 123456789 &&
		      st.st_mtim.tv_sec == 1200000000 && st.st_mtim.tv_nsec == 987654321,
	      "set_both", "atime %ld mtime %ld", (long)st.st_atim.tv_sec, (long)st.st_mtim.tv_sec);
	struct timespec omit[2] = {{.tv_sec = 5, .tv_nsec = UTIME_OMIT}, {.tv_sec = 1300000000, .tv_nsec = 0}};
	CHECK(utimensat(AT_FDCWD, "f", omit, 0) == 0 && stat("f", &st) == 0 &&
		      st.st_atim.tv_sec == 1000000000 && st.st_mtim.tv_sec == 1300000000,
	      "utime_omit", "atime %ld mtime %ld", (long)st.st_atim.tv_sec, (long)st.st_mtim.tv_sec);
	time_t now = time(NULL);
	CHECK(utimensat(AT_FDCWD, "f", NULL, 0) == 0 && stat("f", &st) == 0 &&
		      labs(st.st_mtim.tv_sec - now) < 10,
	      "null_is_now", "mtime %ld now %ld", (long)st.st_mtim.tv_sec, (long)now);
	struct timespec nowts[2] = {{.tv_nsec = UTIME_NOW}, {.tv_nsec = UTIME_OMIT}};
	utimensat(AT_FDCWD, "f", ts, 0);
	CHECK(utimensat(AT_FDCWD, "f", nowts, 0) == 0 && stat("f", &st) == 0 &&
		      labs(st.st_atim.tv_sec - now) < 10 && st.st_mtim.tv_sec == 1200000000,
	      "utime_now", "atime %ld", (long)st.st_atim.tv_sec);
	int fd = open("f", O_RDONLY);
	CHECK(futimens(fd, ts) == 0 && fstat(fd, &st) == 0 && st.st_mtim.tv_sec == 1200000000, "futimens",
	      "%s", strerror(errno));
	close(fd);
	/* AT_SYMLINK_NOFOLLOW sets the link's own times. */
	struct timespec lts[2] = {{.tv_sec = 1111, .tv_nsec = 0}, {.tv_sec = 2222, .tv_nsec = 0}};
	CHECK(utimensat(AT_FDCWD, "lnk", lts, AT_SYMLINK_NOFOLLOW) == 0 && lstat("lnk", &st) == 0 &&
		      st.st_mtim.tv_sec == 2222 && stat("f", &st) == 0 && st.st_mtim.tv_sec == 1200000000,
	      "nofollow", "%s", strerror(errno));
	CHECK(utimensat(AT_FDCWD, "lnk", lts, 0) == 0 && stat("f", &st) == 0 && st.st_mtim.tv_sec == 2222,
	      "follows_by_default", "%s", strerror(errno));
	struct timeval tv[2] = {{.tv_sec = 3333, .tv_usec = 500000}, {.tv_sec = 4444, .tv_usec = 250000}};
	CHECK(utimes("f", tv) == 0 && stat("f", &st) == 0 && st.st_mtim.tv_sec == 4444 &&
		      st.st_mtim.tv_nsec == 250000000,
	      "utimes", "%s", strerror(errno));
	struct timespec bad[2] = {{.tv_sec = 0, .tv_nsec = 1000000000}, {.tv_sec = 0, .tv_nsec = 0}};
	EXPECT_ERR(utimensat(AT_FDCWD, "f", bad, 0), EINVAL, "bad_nsec");
	EXPECT_ERR(utimensat(AT_FDCWD, "f", ts, 0x4000), EINVAL, "bad_flag");
	EXPECT_ERR(utimensat(AT_FDCWD, "missing", ts, 0), ENOENT, "enoent");
	mkdir("d", 0755);
	CHECK(utimensat(AT_FDCWD, "d", ts, 0) == 0 && stat("d", &st) == 0 && st.st_mtim.tv_sec == 1200000000,
	      "directory", "%s", strerror(errno));
	/* Writing updates mtime. */
	utimensat(AT_FDCWD, "f", ts, 0);
	fd = open("f", O_WRONLY);
	write(fd, "x", 1);
	fstat(fd, &st);
	close(fd);
	CHECK(st.st_mtim.tv_sec != 1200000000, "write_updates_mtime", "mtime %ld", (long)st.st_mtim.tv_sec);
	return t_done();
}
