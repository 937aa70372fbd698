/* A directory fd (and the cwd) refer to the directory, not to its name:
 * after a rename or rmdir, *at calls, fchdir and /proc/self/fd/N/x follow the
 * object as Linux does. */
#include "t.h"

static int ndirs;

/* open every directory beneath dfd (d_type only, no stat), up to 8400 */
static void open_dirs(int dfd)
{
	char dbuf[8192];
	long n;

	while (ndirs < 8400 && (n = syscall(SYS_getdents64, dfd, dbuf, sizeof dbuf)) > 0) {
		for (long off = 0; off < n && ndirs < 8400;) {
			struct { uint64_t ino; int64_t off; unsigned short reclen; unsigned char type; char name[]; }
				*d = (void *)(dbuf + off);
			off += d->reclen;
			if (d->type != DT_DIR || !strcmp(d->name, ".") || !strcmp(d->name, ".."))
				continue;
			int c = openat(dfd, d->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (c < 0)
				continue;
			ndirs++;
			open_dirs(c);
			close(c);
		}
	}
}

int main(int argc, char **argv)
{
	t_setup(argc, argv, "dirfd_rename");
	char buf[PATH_MAX], p[96];
	struct stat st;

	mkdir("d", 0755);
	t_write_file("d/x", "old", 0644);
	int fd = open("d", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		DIE("open d");
	if (rename("d", "e") != 0)
		DIE("rename");
	mkdir("d", 0755);
	t_write_file("d/x", "impostor", 0644);

	int f = openat(fd, "x", O_RDONLY | O_CLOEXEC);
	ssize_t n = f >= 0 ? read(f, buf, sizeof buf - 1) : -1;
	buf[n > 0 ? n : 0] = 0;
	CHECK(f >= 0 && strcmp(buf, "old") == 0, "openat_after_rename", "fd %d %s '%s'", f, strerror(errno), buf);
	if (f >= 0)
		close(f);
	CHECK(fstatat(fd, "x", &st, 0) == 0 && st.st_size == 3, "fstatat_after_rename", "%s size %ld",
	      strerror(errno), (long)st.st_size);
	CHECK(mkdirat(fd, "sub", 0755) == 0 && stat("e/sub", &st) == 0 && S_ISDIR(st.st_mode),
	      "mkdirat_after_rename", "%s", strerror(errno));
	CHECK(openat(fd, "y", O_CREAT | O_WRONLY | O_CLOEXEC, 0644) >= 0 && access("e/y", F_OK) == 0 &&
		      access("d/y", F_OK) != 0,
	      "create_after_rename", "%s", strerror(errno));
	CHECK(unlinkat(fd, "y", 0) == 0 && access("e/y", F_OK) != 0, "unlinkat_after_rename", "%s",
	      strerror(errno));

	snprintf(p, sizeof p, "/proc/self/fd/%d/x", fd);
	n = t_read_file(p, buf, sizeof buf);
	CHECK(n == 3 && strcmp(buf, "old") == 0, "proc_fd_path_after_rename", "%s '%s'",
	      n < 0 ? strerror(errno) : "read", n < 0 ? "" : buf);
	/* The same as the first use of a directory fd after its rename. */
	mkdir("p1", 0755);
	t_write_file("p1/x", "p1", 0644);
	int pfd = open("p1", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	rename("p1", "p2");
	mkdir("p1", 0755);
	t_write_file("p1/x", "impostor", 0644);
	snprintf(p, sizeof p, "/proc/self/fd/%d/x", pfd);
	n = t_read_file(p, buf, sizeof buf);
	CHECK(n == 2 && strcmp(buf, "p1") == 0, "proc_fd_path_first_use", "%s '%s'",
	      n < 0 ? strerror(errno) : "read", n < 0 ? "" : buf);
	snprintf(p, sizeof p, "/proc/self/fd/%d", pfd);
	n = readlink(p, buf, sizeof buf - 1);
	buf[n > 0 ? n : 0] = 0;
	CHECK(n > 3 && strcmp(buf + n - 3, "/p2") == 0, "proc_fd_readlink_after_rename", "'%s'", buf);
	close(pfd);

	CHECK(fchdir(fd) == 0, "fchdir_after_rename", "%s", strerror(errno));
	n = t_read_file("x", buf, sizeof buf);
	CHECK(n == 3 && strcmp(buf, "old") == 0, "relative_after_fchdir", "%s '%s'",
	      n < 0 ? strerror(errno) : "read", n < 0 ? "" : buf);
	CHECK(getcwd(buf, sizeof buf) && strlen(buf) > 2 && strcmp(buf + strlen(buf) - 2, "/e") == 0,
	      "getcwd_after_fchdir", "'%s'", buf);
	if (chdir(t_scratch) != 0)
		DIE("chdir back");

	/* The cwd itself moves with its directory. */
	mkdir("c1", 0755);
	t_write_file("c1/f", "c1", 0644);
	if (chdir("c1") != 0)
		DIE("chdir c1");
	char from[PATH_MAX + 16], to[PATH_MAX + 16];
	snprintf(from, sizeof from, "%s/c1", t_scratch);
	snprintf(to, sizeof to, "%s/c2", t_scratch);
	rename(from, to);
	n = readlink("/proc/self/cwd", buf, sizeof buf - 1);
	buf[n > 0 ? n : 0] = 0;
	CHECK(n > 3 && strcmp(buf + n - 3, "/c2") == 0, "proc_cwd_follows_rename", "'%s'", buf);
	n = t_read_file("f", buf, sizeof buf);
	CHECK(n == 2 && strcmp(buf, "c1") == 0, "cwd_follows_rename", "%s", n < 0 ? strerror(errno) : buf);
	CHECK(getcwd(buf, sizeof buf) && strcmp(buf + strlen(buf) - 3, "/c2") == 0, "getcwd_follows_rename",
	      "'%s'", buf);
	CHECK(stat("..", &st) == 0 && S_ISDIR(st.st_mode), "dotdot_after_rename", "%s", strerror(errno));
	if (chdir(t_scratch) != 0)
		DIE("chdir back");

	/* A removed directory: relative calls are ENOENT, not ENOTDIR. */
	mkdir("gone", 0755);
	int g = open("gone", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	rmdir("gone");
	EXPECT_ERR(openat(g, "x", O_RDONLY), ENOENT, "removed_openat");
	EXPECT_ERR(openat(g, "x", O_CREAT | O_WRONLY, 0644), ENOENT, "removed_create");
	EXPECT_ERR(mkdirat(g, "x", 0755), ENOENT, "removed_mkdirat");
	CHECK(fstatat(g, "", &st, AT_EMPTY_PATH) == 0 && S_ISDIR(st.st_mode) && st.st_nlink == 0,
	      "removed_fstat", "%s nlink %ld", strerror(errno), (long)st.st_nlink);
	close(g);
	/* A removed cwd: the same. */
	mkdir("gone2", 0755);
	if (chdir("gone2") != 0)
		DIE("chdir gone2");
	snprintf(from, sizeof from, "%s/gone2", t_scratch);
	rmdir(from);
	EXPECT_ERR(open("x", O_CREAT | O_WRONLY, 0644), ENOENT, "removed_cwd_create");
	EXPECT_ERR(getcwd(buf, sizeof buf) ? 0 : -1, ENOENT, "removed_cwd_getcwd");
	if (chdir(t_scratch) != 0)
		DIE("chdir back");

	close(fd);

	/* An open file keeps naming its file after a rename of it or of its
	 * directory: metadata calls on the fd act on it. */
	mkdir("fd1", 0755);
	t_write_file("fd1/f", "f", 0644);
	t_write_file("g1", "g", 0644);
	int ff = open("fd1/f", O_RDWR | O_CLOEXEC), gf = open("g1", O_RDWR | O_CLOEXEC);
	rename("fd1", "fd2");
	rename("g1", "g2");
	CHECK(fchmod(ff, 0600) == 0 && stat("fd2/f", &st) == 0 && (st.st_mode & 0777) == 0600,
	      "fchmod_file_in_renamed_dir", "%s mode %o", strerror(errno), st.st_mode & 0777);
	CHECK(fchmod(gf, 0640) == 0 && stat("g2", &st) == 0 && (st.st_mode & 0777) == 0640,
	      "fchmod_renamed_file", "%s mode %o", strerror(errno), st.st_mode & 0777);
	struct timespec ts[2] = {{1000000000, 0}, {1000000000, 0}};
	CHECK(futimens(gf, ts) == 0 && stat("g2", &st) == 0 && st.st_mtime == 1000000000,
	      "futimens_renamed_file", "%s", strerror(errno));
	snprintf(p, sizeof p, "/proc/self/fd/%d", gf);
	n = readlink(p, buf, sizeof buf - 1);
	buf[n > 0 ? n : 0] = 0;
	CHECK(n > 3 && strcmp(buf + n - 3, "/g2") == 0, "proc_fd_readlink_renamed_file", "'%s'", buf);
	close(ff);
	close(gf);

	/* A directory fd held while many other directories are opened (moat's
	 * table of directory names is bounded: it must find the name again). */
	mkdir("many", 0755);
	mkdir("held", 0755);
	t_write_file("held/x", "held", 0644);
	int h = open("held", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int mok = 1;
	/* /usr's directories first (cheap, read-only), then new ones here if
	 * /usr has too few */
	int usr = open("/usr", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (usr >= 0) {
		open_dirs(usr);
		close(usr);
	}
	for (int i = ndirs; i < 8400 && mok; i++) {
		snprintf(p, sizeof p, "many/%d", i);
		int d = mkdir(p, 0755) == 0 ? open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
		mok = d >= 0;
		if (d >= 0)
			close(d);
	}
	f = openat(h, "x", O_RDONLY | O_CLOEXEC);
	n = f >= 0 ? read(f, buf, sizeof buf - 1) : -1;
	buf[n > 0 ? n : 0] = 0;
	CHECK(mok && f >= 0 && strcmp(buf, "held") == 0, "dirfd_after_many_opens", "%s '%s'", strerror(errno), buf);
	if (f >= 0)
		close(f);
	close(h);
	return t_done();
}
