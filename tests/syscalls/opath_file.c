/* An O_PATH fd of a regular file (and of a symlink, O_NOFOLLOW) does no
 * I/O: read, write, readahead and splice are EBADF (LTP open13,
 * readahead01, splice07), while fstat, a *at call through it and its
 * /proc/self/fd link name the file. Under moat the guest's fd is a stand-in
 * reopened with access mode 3 (ADDFD refuses O_PATH files): before, a read
 * gave 0 bytes and a write EPERM. */
#include "t.h"
#include <sys/stat.h>

static void no_io(const char *name, int fd)
{
	char b[8], cs[96];
	int p[2];
	if (pipe(p) < 0) {
		t_fail(name, "pipe: %s", strerror(errno));
		return;
	}
	errno = 0;
	ssize_t r = read(fd, b, sizeof b);
	int re = errno;
	errno = 0;
	ssize_t w = write(fd, "x", 1);
	int we = errno;
	errno = 0;
	ssize_t ra = readahead(fd, 0, 1);
	int rae = errno;
	errno = 0;
	ssize_t sp = splice(fd, NULL, p[1], NULL, 1, 0);
	int spe = errno;
	snprintf(cs, sizeof cs, "%s_no_io", name);
	CHECK(r < 0 && re == EBADF && w < 0 && we == EBADF && ra < 0 && rae == EBADF && sp < 0 && spe == EBADF,
	      cs, "read %zd %s, write %zd %s, readahead %zd %s, splice %zd %s", r, strerror(re), w,
	      strerror(we), ra, strerror(rae), sp, strerror(spe));
	close(p[0]);
	close(p[1]);
}

int main(int argc, char **argv)
{
	t_setup(argc, argv, "opath_file");
	int f = open("f", O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
	if (f < 0 || write(f, "hello", 5) != 5 || symlink("f", "l") < 0) {
		t_fail("setup", "%s", strerror(errno));
		return t_done();
	}
	close(f);

	int fd = open("f", O_PATH | O_CLOEXEC);
	CHECK(fd >= 0, "opath_open", "%s", strerror(errno));
	no_io("opath_file", fd);
	int dfd = dup(fd);
	no_io("opath_dup", dfd);
	struct stat a, b;
	CHECK(fstat(fd, &a) == 0 && stat("f", &b) == 0 && a.st_ino == b.st_ino && a.st_size == 5,
	      "opath_fstat", "ino %lu/%lu size %ld", (unsigned long)a.st_ino, (unsigned long)b.st_ino,
	      (long)a.st_size);
	CHECK(fstatat(fd, "", &a, AT_EMPTY_PATH) == 0 && a.st_ino == b.st_ino, "opath_fstatat_empty",
	      "%s", strerror(errno));
	char path[64], link[PATH_MAX];
	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	ssize_t n = readlink(path, link, sizeof link - 1);
	link[n > 0 ? n : 0] = 0;
	size_t ll = strlen(link);
	CHECK(n > 2 && !strcmp(link + ll - 2, "/f"), "opath_proc_link", "%s", link);
	/* reopening through the link opens the file itself, readable */
	int ro = open(path, O_RDONLY | O_CLOEXEC);
	char b5[8] = "";
	CHECK(ro >= 0 && read(ro, b5, 5) == 5 && !memcmp(b5, "hello", 5), "opath_reopen_reads", "%s",
	      strerror(errno));
	if (ro >= 0)
		close(ro);
	close(dfd);
	close(fd);

	int lfd = open("l", O_PATH | O_NOFOLLOW | O_CLOEXEC);
	CHECK(lfd >= 0, "opath_symlink_open", "%s", strerror(errno));
	no_io("opath_symlink", lfd);
	CHECK(fstatat(lfd, "", &a, AT_EMPTY_PATH) == 0 && S_ISLNK(a.st_mode), "opath_symlink_is_link",
	      "%s mode %o", strerror(errno), a.st_mode);
	close(lfd);
	return t_done();
}
