/* An O_PATH fd of a regular file (and of a symlink, O_NOFOLLOW) does no
 * I/O: read, write, readahead and splice are EBADF (LTP open13,
 * readahead01, splice07), while fstat, a *at call through it and its
 * /proc/self/fd link name the file. Under moat the guest's fd is a stand-in
 * reopened with access mode 3 (ADDFD refuses O_PATH files): before, a read
 * gave 0 bytes and a write EPERM. */
#include "t.h"
#include <grp.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <sys/ioctl.h>
#include <linux/fs.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>

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

/* errno of execve(path) in a child (0: it ran and exited 42) */
static int exec_errno(const char *path)
{
	pid_t pid = fork();
	if (pid == 0) {
		char *av[] = { (char *)path, "--exit42", NULL };
		execve(path, av, av + 2);
		_exit(errno & 0x3f);
	}
	int st;
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st) == 42 ? 0 : WEXITSTATUS(st);
}

#define ERRNO_OF(expr) (errno = 0, (expr) < 0 ? errno : 0)

/* ioctl, locks and getsockname on an O_PATH fd are EBADF (LTP open13:
 * FIGETBSZ). Under moat the stand-in is a real file: before, FIGETBSZ gave
 * the memfd's block size, flock/F_SETLK took a lock, getsockname was
 * ENOTSOCK. */
static void no_ioctl_lock(const char *name, int fd)
{
	char cs[96];
	int bsz = 0, fl = 0;
	long ver = 0;
	struct flock l = { .l_type = F_RDLCK, .l_whence = SEEK_SET };
	int ie = ERRNO_OF(ioctl(fd, FIGETBSZ, &bsz));
	int ge = ERRNO_OF(ioctl(fd, FS_IOC_GETFLAGS, &fl));
	int ve = ERRNO_OF(ioctl(fd, FS_IOC_GETVERSION, &ver));
	int fe = ERRNO_OF(flock(fd, LOCK_SH | LOCK_NB));
	int le = ERRNO_OF(fcntl(fd, F_SETLK, &l));
	struct sockaddr_storage ss;
	socklen_t sl = sizeof ss;
	int se = ERRNO_OF(getsockname(fd, (struct sockaddr *)&ss, &sl));
	snprintf(cs, sizeof cs, "%s_no_ioctl_lock", name);
	CHECK(ie == EBADF && ge == EBADF && ve == EBADF && fe == EBADF && le == EBADF && se == EBADF, cs,
	      "FIGETBSZ %s, GETFLAGS %s, GETVERSION %s, flock %s, F_SETLK %s, getsockname %s",
	      strerror(ie), strerror(ge), strerror(ve), strerror(fe), strerror(le), strerror(se));
}

/* Path calls through /proc/self/fd/N of an O_PATH fd act on the file the fd
 * names, with the permission checks by path (Linux follows the magic link).
 * Under moat the fd is a stand-in: before, the xattr calls acted on it
 * (ENODATA, EOPNOTSUPP, an empty list: a set was lost), truncate was EINVAL,
 * inotify_add_watch EPERM, and an execve of a FIFO's link ELOOP. */
static void procfd_calls(void)
{
	char p[64], b[16] = "";
	struct stat st;
	int fd;

	if (t_write_file("x", "hello", 0644) < 0 || mkfifo("fifo", 0755) < 0) {
		t_fail("procfd_setup", "%s", strerror(errno));
		return;
	}
	fd = open("x", O_PATH | O_CLOEXEC);
	snprintf(p, sizeof p, "/proc/self/fd/%d", fd);
	int se = ERRNO_OF(setxattr(p, "user.t", "v", 1, 0));
	ssize_t g = getxattr("x", "user.t", b, sizeof b);
	CHECK(fd >= 0 && se == 0 && g == 1 && b[0] == 'v', "opath_procfd_setxattr",
	      "set %s, get by name %zd %s", strerror(se), g, strerror(errno));
	memset(b, 0, sizeof b);
	g = getxattr(p, "user.t", b, sizeof b);
	CHECK(g == 1 && b[0] == 'v', "opath_procfd_getxattr", "%zd %s", g, strerror(errno));
	char lb[256];
	ssize_t l = listxattr(p, lb, sizeof lb);
	int found = 0;
	for (ssize_t i = 0; l > 0 && i < l; i += (ssize_t)strlen(lb + i) + 1)
		found |= !strcmp(lb + i, "user.t");
	CHECK(found, "opath_procfd_listxattr", "%zd %s", l, strerror(errno));
	/* the l* calls: the link itself (Linux: user.* of a symlink) */
	int le = ERRNO_OF(lsetxattr(p, "user.u", "v", 1, 0));
	CHECK(le == EPERM, "opath_procfd_lsetxattr_link", "%s", strerror(le));
	le = ERRNO_OF(lgetxattr(p, "user.t", b, sizeof b));
	CHECK(le == ENODATA, "opath_procfd_lgetxattr_link", "%s", strerror(le));
	int re = ERRNO_OF(removexattr(p, "user.t"));
	int ge = ERRNO_OF(getxattr("x", "user.t", b, sizeof b));
	CHECK(re == 0 && ge == ENODATA, "opath_procfd_removexattr", "remove %s, get %s", strerror(re),
	      strerror(ge));
	int te = ERRNO_OF(truncate(p, 2));
	CHECK(te == 0 && stat("x", &st) == 0 && st.st_size == 2, "opath_procfd_truncate", "%s size %ld",
	      strerror(te), (long)st.st_size);
	int in = inotify_init1(IN_CLOEXEC);
	int we = ERRNO_OF(inotify_add_watch(in, p, IN_MODIFY));
	CHECK(we == 0, "opath_procfd_inotify", "%s", strerror(we));
	close(in);
	/* exec through the link: the file it names (a FIFO: EACCES) */
	int sfd = open(t_self, O_PATH | O_CLOEXEC);
	char sp[64];
	snprintf(sp, sizeof sp, "/proc/self/fd/%d", sfd);
	int xe = exec_errno(sp);
	CHECK(xe == 0, "opath_procfd_execve", "%s", strerror(xe));
	close(sfd);
	int ffd = open("fifo", O_PATH | O_CLOEXEC);
	snprintf(sp, sizeof sp, "/proc/self/fd/%d", ffd);
	xe = exec_errno(sp);
	CHECK(xe == EACCES, "opath_procfd_execve_fifo", "%s", strerror(xe));
	close(ffd);
	close(fd);
}

/* The same calls by someone the file's mode refuses: EACCES as by name, and
 * the file unchanged (root: a child that drops to 65534; else the owner of a
 * mode-000 file). */
static void procfd_denied(void)
{
	if (t_write_file("y", "hello", 0644) < 0 || setxattr("y", "user.k", "k", 1, 0) < 0) {
		t_fail("procfd_denied_setup", "%s", strerror(errno));
		return;
	}
	if (getuid() != 0) {
		if (chmod("y", 0) < 0) {
			t_fail("procfd_denied_setup", "chmod %s", strerror(errno));
			return;
		}
	} else if (chmod("y", 0600) < 0) {
		t_fail("procfd_denied_setup", "chmod %s", strerror(errno));
		return;
	}
	int pp[2];
	if (pipe(pp) < 0)
		return;
	pid_t pid = fork();
	if (pid == 0) {
		int e[6];
		char p[64], b[16];
		close(pp[0]);
		if (getuid() == 0 && (setgroups(0, NULL) < 0 || setresgid(65534, 65534, 65534) < 0 ||
				      setresuid(65534, 65534, 65534) < 0))
			_exit(1);
		int fd = open("y", O_PATH | O_CLOEXEC);
		snprintf(p, sizeof p, "/proc/self/fd/%d", fd);
		e[0] = ERRNO_OF(setxattr(p, "user.k", "z", 1, 0));
		e[1] = ERRNO_OF(getxattr(p, "user.k", b, sizeof b));
		e[2] = ERRNO_OF(removexattr(p, "user.k"));
		e[3] = ERRNO_OF(truncate(p, 1));
		int in = inotify_init1(IN_CLOEXEC);
		e[4] = ERRNO_OF(inotify_add_watch(in, p, IN_MODIFY));
		e[5] = fd < 0 ? errno : 0;
		if (write(pp[1], e, sizeof e) != sizeof e)
			_exit(1);
		_exit(0);
	}
	close(pp[1]);
	int e[6] = { -1, -1, -1, -1, -1, -1 }, st;
	ssize_t n = read(pp[0], e, sizeof e);
	close(pp[0]);
	waitpid(pid, &st, 0);
	if (n != sizeof e || e[5]) {
		t_fail("opath_procfd_denied", "child: %zd bytes, open %s", n, strerror(e[5]));
		return;
	}
	CHECK(e[0] == EACCES, "opath_procfd_denied_setxattr", "%s", strerror(e[0]));
	CHECK(e[1] == EACCES, "opath_procfd_denied_getxattr", "%s", strerror(e[1]));
	CHECK(e[2] == EACCES, "opath_procfd_denied_removexattr", "%s", strerror(e[2]));
	CHECK(e[3] == EACCES, "opath_procfd_denied_truncate", "%s", strerror(e[3]));
	CHECK(e[4] == EACCES, "opath_procfd_denied_inotify", "%s", strerror(e[4]));
	char b[16] = "";
	struct stat sb;
	chmod("y", 0600);
	ssize_t g = getxattr("y", "user.k", b, sizeof b);
	CHECK(g == 1 && b[0] == 'k' && stat("y", &sb) == 0 && sb.st_size == 5, "opath_procfd_denied_unchanged",
	      "xattr %zd '%c' size %ld", g, b[0], (long)sb.st_size);
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--exit42"))
		_exit(42);
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
	no_ioctl_lock("opath_file", fd);
	/* on an ordinary fd those requests answer (under moat: natively) */
	int rf = open("f", O_RDONLY | O_CLOEXEC), bs = 0;
	CHECK(rf >= 0 && ioctl(rf, FIGETBSZ, &bs) == 0 && bs > 0 && flock(rf, LOCK_SH | LOCK_NB) == 0,
	      "file_ioctl_lock", "%s bsz %d", strerror(errno), bs);
	if (rf >= 0)
		close(rf);
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
	no_ioctl_lock("opath_symlink", lfd);
	CHECK(fstatat(lfd, "", &a, AT_EMPTY_PATH) == 0 && S_ISLNK(a.st_mode), "opath_symlink_is_link",
	      "%s mode %o", strerror(errno), a.st_mode);
	close(lfd);
	procfd_calls();
	procfd_denied();
	return t_done();
}
