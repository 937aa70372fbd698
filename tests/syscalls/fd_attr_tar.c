/* fchmod and futimens on a held fd, as GNU tar -x makes them on each file
 * (create O_EXCL 0600, write, futimens, fchown, fchmod, close), with a stat
 * by name between the calls: what the name shows must follow each change
 * (under moat the gofer makes the two, CHMOD and UTIMENS, and the sentry
 * refreshes its cache), through a second link too. */
#include "t.h"
#include <time.h>

static int stat_of(const char *p, struct stat *st)
{
	return stat(p, st) == 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
	t_setup(argc, argv, "fd_attr_tar");
	struct stat st;
	int fd = open("f", O_WRONLY | O_CREAT | O_EXCL | O_NOCTTY | O_NONBLOCK | O_CLOEXEC, 0600);
	CHECK(fd >= 0 && write(fd, "0123456789", 10) == 10, "create", "%s", strerror(errno));
	CHECK(stat_of("f", &st) == 0 && (st.st_mode & 07777) == 0600 && st.st_size == 10, "stat_new",
	      "mode %o size %ld", st.st_mode & 07777, (long)st.st_size);
	struct timespec ts[2] = {{.tv_nsec = UTIME_OMIT}, {.tv_sec = 1234567890, .tv_nsec = 5000}};
	CHECK(futimens(fd, ts) == 0, "futimens", "%s", strerror(errno));
	CHECK(stat_of("f", &st) == 0 && st.st_mtim.tv_sec == 1234567890 && st.st_mtim.tv_nsec == 5000,
	      "stat_after_futimens", "mtime %ld.%ld", (long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
	CHECK(fchown(fd, getuid(), getgid()) == 0, "fchown", "%s", strerror(errno));
	CHECK(fchmod(fd, 0644) == 0, "fchmod", "%s", strerror(errno));
	CHECK(stat_of("f", &st) == 0 && (st.st_mode & 07777) == 0644 && st.st_mtim.tv_sec == 1234567890,
	      "stat_after_fchmod", "mode %o mtime %ld", st.st_mode & 07777, (long)st.st_mtim.tv_sec);
	/* a second name of the inode shows the same (its cached entry too) */
	CHECK(link("f", "h") == 0 && stat_of("h", &st) == 0 && (st.st_mode & 07777) == 0644, "link",
	      "%s mode %o", strerror(errno), st.st_mode & 07777);
	CHECK(fchmod(fd, 0640) == 0 && stat_of("h", &st) == 0 && (st.st_mode & 07777) == 0640 &&
		      stat_of("f", &st) == 0 && (st.st_mode & 07777) == 0640,
	      "fchmod_both_names", "mode %o", st.st_mode & 07777);
	/* the set-uid bit: shown by stat as set (under moat a virtual bit) */
	CHECK(fchmod(fd, 04755) == 0 && stat_of("f", &st) == 0 && (st.st_mode & 07777) == 04755,
	      "fchmod_setuid", "mode %o", st.st_mode & 07777);
	CHECK(fchmod(fd, 0644) == 0 && stat_of("f", &st) == 0 && (st.st_mode & 07777) == 0644,
	      "fchmod_back", "mode %o", st.st_mode & 07777);
	/* now: both times move */
	time_t now = time(NULL);
	CHECK(futimens(fd, NULL) == 0 && stat_of("h", &st) == 0 && labs(st.st_mtim.tv_sec - now) < 10,
	      "futimens_now", "mtime %ld now %ld", (long)st.st_mtim.tv_sec, (long)now);
	CHECK(fstat(fd, &st) == 0 && (st.st_mode & 0777) == 0644, "fstat", "mode %o", st.st_mode & 07777);
	close(fd);
	/* an fd opened read-only: its owner may still change both */
	fd = open("f", O_RDONLY);
	CHECK(fd >= 0 && fchmod(fd, 0600) == 0 && futimens(fd, ts) == 0 && stat_of("f", &st) == 0 &&
		      (st.st_mode & 07777) == 0600 && st.st_mtim.tv_sec == 1234567890,
	      "rdonly_fd", "%s mode %o", strerror(errno), st.st_mode & 07777);
	close(fd);
	/* a file made by a read-only create, never opened for writing: its
	 * name's cached entry is what a stat shows (not re-stat'ed) */
	fd = open("g", O_RDONLY | O_CREAT | O_EXCL, 0600);
	CHECK(fd >= 0 && stat_of("g", &st) == 0 && (st.st_mode & 07777) == 0600, "ro_create", "%s",
	      strerror(errno));
	CHECK(fchmod(fd, 0604) == 0 && stat_of("g", &st) == 0 && (st.st_mode & 07777) == 0604,
	      "ro_fchmod", "mode %o", st.st_mode & 07777);
	CHECK(futimens(fd, ts) == 0 && stat_of("g", &st) == 0 && st.st_mtim.tv_sec == 1234567890,
	      "ro_futimens", "mtime %ld", (long)st.st_mtim.tv_sec);
	close(fd);
	unlink("g");
	unlink("h");
	unlink("f");
	return t_done();
}
