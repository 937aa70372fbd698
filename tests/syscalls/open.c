/* open, openat, creat: flags, errors, modes. */
#include "t.h"

int main(int argc, char **argv)
{
	t_setup(argc, argv, "open");
	char buf[256];
	int fd;

	fd = EXPECT_OK(open("f", O_CREAT | O_EXCL | O_WRONLY, 0666), "creat_excl_new");
	if (fd >= 0) {
		CHECK(write(fd, "hello", 5) == 5, "write_new", "short write");
		close(fd);
	}
	EXPECT_ERR(open("f", O_CREAT | O_EXCL | O_WRONLY, 0666), EEXIST, "creat_excl_exists");
	struct stat st;
	CHECK(stat("f", &st) == 0 && (st.st_mode & 07777) == 0644, "creat_mode_umask",
	      "mode %o", st.st_mode & 07777);
	CHECK(t_read_file("f", buf, sizeof(buf)) == 5 && strcmp(buf, "hello") == 0,
	      "read_back", "got '%s'", buf);

	EXPECT_ERR(open("missing", O_RDONLY), ENOENT, "enoent");
	EXPECT_ERR(open("", O_RDONLY), ENOENT, "empty_path");
	EXPECT_ERR(open((const char *)1, O_RDONLY), EFAULT, "efault");
	EXPECT_ERR(open("f", O_RDONLY | O_DIRECTORY), ENOTDIR, "o_directory_on_file");
	EXPECT_ERR(open("f/", O_RDONLY), ENOTDIR, "trailing_slash_on_file");
	EXPECT_ERR(open("f/x", O_RDONLY), ENOTDIR, "component_is_file");
	EXPECT_ERR(open("nodir/x", O_CREAT | O_WRONLY, 0644), ENOENT, "creat_missing_parent");

	mkdir("d", 0755);
	EXPECT_ERR(open("d", O_WRONLY), EISDIR, "dir_wronly");
	EXPECT_ERR(open("d", O_RDWR), EISDIR, "dir_rdwr");
	EXPECT_ERR(open("d/", O_CREAT | O_WRONLY, 0644), EISDIR, "creat_on_dir_slash");
	fd = EXPECT_OK(open("d", O_RDONLY | O_DIRECTORY), "dir_rdonly");
	if (fd >= 0)
		close(fd);

	char longname[400];
	memset(longname, 'a', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = 0;
	EXPECT_ERR(open(longname, O_RDONLY), ENAMETOOLONG, "name_too_long");
	static char longpath[PATH_MAX + 100];
	for (size_t i = 0; i + 2 < sizeof(longpath); i += 2)
		memcpy(longpath + i, "./", 2);
	longpath[sizeof(longpath) - 1] = 0;
	EXPECT_ERR(open(longpath, O_RDONLY), ENAMETOOLONG, "path_too_long");

	/* O_TRUNC and O_APPEND. */
	fd = open("f", O_WRONLY | O_TRUNC);
	CHECK(fd >= 0 && fstat(fd, &st) == 0 && st.st_size == 0, "o_trunc", "size %ld", (long)st.st_size);
	if (fd >= 0) {
		write(fd, "ab", 2);
		close(fd);
	}
	fd = open("f", O_WRONLY | O_APPEND);
	if (fd >= 0) {
		lseek(fd, 0, SEEK_SET);
		write(fd, "cd", 2);
		close(fd);
	}
	CHECK(t_read_file("f", buf, sizeof(buf)) == 4 && strcmp(buf, "abcd") == 0, "o_append",
	      "got '%s'", buf);

	/* O_CLOEXEC, access mode bits. */
	fd = open("f", O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0 && (fcntl(fd, F_GETFD) & FD_CLOEXEC), "o_cloexec", "flag missing");
	CHECK(fd >= 0 && (fcntl(fd, F_GETFL) & O_ACCMODE) == O_RDONLY, "getfl_rdonly", "bad accmode");
	EXPECT_ERR(write(fd, "x", 1), EBADF, "write_on_rdonly");
	if (fd >= 0)
		close(fd);

	/* A file of a read-only system directory (under moat: the sentry's
	 * direct open, fs/directfs.c): the guest's flags exactly, no O_NONBLOCK
	 * it did not ask for, close-on-exec only when asked, the file's stat. */
	{
		struct stat a, b;
		int pf = open("/etc/passwd", O_RDONLY);
		int fl = pf >= 0 ? fcntl(pf, F_GETFL) : -1;
		CHECK(pf >= 0 && !(fl & O_NONBLOCK) && (fl & O_ACCMODE) == O_RDONLY &&
		      !(fcntl(pf, F_GETFD) & FD_CLOEXEC), "ro_system_file_flags", "flags %#x", fl);
		CHECK(pf >= 0 && fstat(pf, &a) == 0 && stat("/etc/passwd", &b) == 0 &&
		      a.st_ino == b.st_ino && a.st_dev == b.st_dev &&
		      a.st_mode == b.st_mode && a.st_size == b.st_size, "ro_system_file_fstat", "differs");
		EXPECT_ERR(write(pf, "x", 1), EBADF, "ro_system_file_write");
		if (pf >= 0)
			close(pf);
		pf = open("/etc/passwd", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		fl = pf >= 0 ? fcntl(pf, F_GETFL) : -1;
		CHECK(pf >= 0 && (fl & O_NONBLOCK) && (fcntl(pf, F_GETFD) & FD_CLOEXEC),
		      "ro_system_file_nonblock_cloexec", "flags %#x", fl);
		if (pf >= 0)
			close(pf);
		pf = open("/etc", O_RDONLY | O_DIRECTORY);
		fl = pf >= 0 ? fcntl(pf, F_GETFL) : -1;
		CHECK(pf >= 0 && !(fl & O_NONBLOCK) && (fl & O_DIRECTORY), "ro_system_dir_flags", "flags %#x", fl);
		if (pf >= 0)
			close(pf);
	}

	/* Symlinks. */
	symlink("f", "lnk");
	symlink("nowhere", "dangling");
	symlink("loop2", "loop1");
	symlink("loop1", "loop2");
	fd = open("lnk", O_RDONLY);
	CHECK(fd >= 0, "follow_symlink", "%s", strerror(errno));
	if (fd >= 0)
		close(fd);
	EXPECT_ERR(open("lnk", O_RDONLY | O_NOFOLLOW), ELOOP, "o_nofollow_symlink");
	EXPECT_ERR(open("loop1", O_RDONLY), ELOOP, "symlink_loop");
	EXPECT_ERR(open("dangling", O_RDONLY), ENOENT, "dangling_enoent");
	fd = open("dangling", O_CREAT | O_WRONLY, 0600);
	CHECK(fd >= 0 && access("nowhere", F_OK) == 0, "creat_through_dangling", "%s", strerror(errno));
	if (fd >= 0)
		close(fd);
	EXPECT_ERR(open("lnk", O_CREAT | O_EXCL | O_WRONLY, 0600), EEXIST, "excl_on_symlink");
	fd = open("lnk", O_PATH | O_NOFOLLOW);
	CHECK(fd >= 0 && fstat(fd, &st) == 0 && S_ISLNK(st.st_mode), "o_path_nofollow", "not a link");
	if (fd >= 0)
		close(fd);

	/* openat: dirfd, AT_FDCWD, bad fds. */
	int dfd = open("d", O_RDONLY | O_DIRECTORY);
	fd = openat(dfd, "inner", O_CREAT | O_WRONLY, 0644);
	CHECK(fd >= 0 && access("d/inner", F_OK) == 0, "openat_dirfd", "%s", strerror(errno));
	if (fd >= 0)
		close(fd);
	fd = openat(dfd, "../f", O_RDONLY);
	CHECK(fd >= 0, "openat_dotdot", "%s", strerror(errno));
	if (fd >= 0)
		close(fd);
	fd = openat(AT_FDCWD, "f", O_RDONLY);
	CHECK(fd >= 0, "openat_fdcwd", "%s", strerror(errno));
	int ffd = fd;
	EXPECT_ERR(openat(ffd, "x", O_RDONLY), ENOTDIR, "openat_file_dirfd");
	EXPECT_ERR(openat(9999, "x", O_RDONLY), EBADF, "openat_bad_dirfd");
	char abspath[PATH_MAX + 8];
	snprintf(abspath, sizeof(abspath), "%s/f", t_scratch);
	fd = openat(9999, abspath, O_RDONLY);
	CHECK(fd >= 0, "openat_abs_ignores_dirfd", "%s", strerror(errno));
	if (fd >= 0)
		close(fd);
	close(ffd);
	close(dfd);

	/* creat(). */
	fd = creat("c", 0600);
	CHECK(fd >= 0 && (fcntl(fd, F_GETFL) & O_ACCMODE) == O_WRONLY, "creat", "%s", strerror(errno));
	if (fd >= 0)
		close(fd);

	/* fstat of an opened file agrees with stat of its path. */
	struct stat a, b;
	fd = open("f", O_RDONLY);
	CHECK(fd >= 0 && fstat(fd, &a) == 0 && stat("f", &b) == 0 && a.st_ino == b.st_ino &&
		      a.st_dev == b.st_dev,
	      "fstat_matches_stat", "ino/dev differ");
	if (fd >= 0)
		close(fd);

	/* Many opens and closes: no fd leak, lowest fd reused. */
	int first = open("f", O_RDONLY);
	close(first);
	int again = -1;
	for (int i = 0; i < 2000; i++) {
		again = open("f", O_RDONLY);
		if (again < 0)
			break;
		close(again);
	}
	CHECK(again == first, "fd_reuse_lowest", "got %d want %d", again, first);

	/* Reading a read-only system file. */
	fd = open("/etc/passwd", O_RDONLY);
	CHECK(fd >= 0 && read(fd, buf, 5) == 5, "read_etc_passwd", "%s", strerror(errno));
	if (fd >= 0)
		close(fd);

	/* O_NOATIME: only the owner (or CAP_FOWNER): EPERM for another euid (LTP open02) */
	if (geteuid() == 0) {
		int nf = open("noatime", O_CREAT | O_WRONLY, 0644);
		close(nf);
		CHECK((nf = open("noatime", O_RDONLY | O_NOATIME)) >= 0, "noatime_root", "%s", strerror(errno));
		if (nf >= 0)
			close(nf);
		if (seteuid(65534) == 0) {
			errno = 0;
			nf = open("noatime", O_RDONLY | O_NOATIME);
			int e = errno;
			if (nf >= 0)
				close(nf);
			if (seteuid(0) != 0)
				DIE("seteuid 0");
			CHECK(nf < 0 && e == EPERM, "noatime_not_owner_eperm", "fd %d %s", nf, strerror(e));
		} else {
			t_ok("noatime_not_owner_eperm");
		}
		unlink("noatime");
	} else {
		t_ok("noatime_root");
		t_ok("noatime_not_owner_eperm");
	}
	return t_done();
}
