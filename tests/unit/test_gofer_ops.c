/* tests/unit/test_gofer_ops.c - gofer operations through the client API,
 * against the fixture tree of test_gofer_common.h (run as root; the rootless
 * test drops to uid 1000 in a child). */
#include "test_gofer_common.h"
#include "gofer/proto.h"

#include <dirent.h>
#include <grp.h>
#include <linux/fs.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <sys/xattr.h>

static struct gofer_conn *c;

static void ops_init(void)
{
	setup_all();
	c = gofer_connect(gctl);
	cr_assert(c, "gofer_connect: %s", strerror(errno));
}

static void ops_fini(void)
{
	gofer_disconnect(c);
	teardown_all();
}

TestSuite(gofer_ops, .init = ops_init, .fini = ops_fini);

static void host_path(char *buf, size_t len, const char *rel)
{
	snprintf(buf, len, "%s/%s", tdir, rel);
}

static struct stat host_lstat(const char *rel)
{
	char p[256];
	struct stat st;

	host_path(p, sizeof p, rel);
	cr_assert(lstat(p, &st) == 0, "lstat %s: %s", p, strerror(errno));
	return st;
}

static int host_exists(const char *rel)
{
	char p[256];
	struct stat st;

	host_path(p, sizeof p, rel);
	return lstat(p, &st) == 0;
}

static int gl(int exp, const char *rel)
{
	struct stat st;
	return gofer_lstat(c, exp, rel, &st);
}

Test(gofer_ops, lstat_root_and_file)
{
	struct stat st, h = host_lstat("rw/file");

	cr_assert_eq(gofer_lstat(c, EXP_RW, "", &st), 0);
	cr_assert(S_ISDIR(st.st_mode));
	cr_assert_eq(gofer_lstat(c, EXP_RW, "file", &st), 0);
	cr_assert_eq(st.st_ino, h.st_ino);
	cr_assert_eq(st.st_size, 5);
	cr_assert_eq(st.st_uid, h.st_uid);
	cr_assert_eq(gofer_lstat(c, EXP_RW, "link", &st), 0);
	cr_assert(S_ISLNK(st.st_mode));
	cr_assert_eq(gl(EXP_RW, "nope"), -ENOENT);
	cr_assert_eq(gl(EXP_RW, "file/x"), -ENOTDIR);
}

Test(gofer_ops, walk)
{
	static struct gofer_walk w;

	cr_assert_eq(gofer_walk(c, EXP_RW, "", &w), 0);
	cr_assert_eq(w.n, 1);
	cr_assert(S_ISDIR(w.st[0].st_mode));

	cr_assert_eq(gofer_walk(c, EXP_RW, "sub/f", &w), 0);
	cr_assert_eq(w.n, 2);
	cr_assert_eq(w.err, 0);
	cr_assert(S_ISDIR(w.st[0].st_mode) && S_ISREG(w.st[1].st_mode));
	cr_assert_eq(w.st[1].st_ino, host_lstat("rw/sub/f").st_ino);

	cr_assert_eq(gofer_walk(c, EXP_RW, "sub/missing/x", &w), 0);
	cr_assert_eq(w.n, 1);
	cr_assert_eq(w.err, -ENOENT);

	cr_assert_eq(gofer_walk(c, EXP_RW, "file/x", &w), 0);
	cr_assert_eq(w.n, 1);
	cr_assert_eq(w.err, -ENOTDIR);

	/* a symlink ends the walk, its target returned, never followed */
	cr_assert_eq(gofer_walk(c, EXP_RW, "up/passwd", &w), 0);
	cr_assert_eq(w.n, 1);
	cr_assert_eq(w.err, 0);
	cr_assert(S_ISLNK(w.st[0].st_mode));
	cr_assert_str_eq(w.link, "../../../etc");
	cr_assert_eq(gofer_walk(c, EXP_RW, "link", &w), 0);
	cr_assert_eq(w.n, 1);
	cr_assert_str_eq(w.link, "file");

	/* hidden: missing */
	cr_assert_eq(gofer_walk(c, EXP_RO, "ssh/key", &w), 0);
	cr_assert_eq(w.n, 0);
	cr_assert_eq(w.err, -ENOENT);
	cr_assert_eq(gofer_walk(c, EXP_RW, "sub/deep/x", &w), 0);
	cr_assert_eq(w.n, 1);
	cr_assert_eq(w.err, -ENOENT);
}

Test(gofer_ops, open_read_and_create)
{
	struct stat st;
	char buf[16] = { 0 };
	int fd;

	cr_assert_eq(gofer_open(c, EXP_RW, "file", O_RDONLY, 0, &fd, &st), 0);
	cr_assert(S_ISREG(st.st_mode));
	cr_assert_eq(read(fd, buf, sizeof buf), 5);
	cr_assert_str_eq(buf, "hello");
	cr_assert(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	close(fd);

	cr_assert_eq(gofer_open(c, EXP_RW, "sub/new", O_WRONLY | O_CREAT | O_EXCL, 0640,
				&fd, NULL), 0);
	cr_assert_eq(write(fd, "xyz", 3), 3);
	close(fd);
	st = host_lstat("rw/sub/new");
	cr_assert_eq(st.st_size, 3);
	cr_assert_eq(st.st_mode & 07777, 0640);
	cr_assert_eq(gofer_open(c, EXP_RW, "sub/new", O_WRONLY | O_CREAT | O_EXCL, 0640,
				&fd, NULL), -EEXIST);
	/* the fd's status flags are the ones asked for: the O_NONBLOCK the
	 * gofer opens with (FIFOs) is off again, O_APPEND kept; an exclusive
	 * create is opened without it; asked for, it stays */
	cr_assert_eq(gofer_open(c, EXP_RW, "sub/new", O_WRONLY | O_APPEND, 0, &fd, NULL), 0);
	cr_assert_eq(fcntl(fd, F_GETFL) & (O_NONBLOCK | O_APPEND | O_ACCMODE), O_APPEND | O_WRONLY);
	close(fd);
	cr_assert_eq(gofer_open(c, EXP_RW, "sub/new", O_RDONLY | O_NONBLOCK, 0, &fd, NULL), 0);
	cr_assert(fcntl(fd, F_GETFL) & O_NONBLOCK);
	close(fd);
	cr_assert_eq(gofer_open(c, EXP_RW, "sub/new2", O_RDWR | O_CREAT | O_EXCL, 0600, &fd, &st), 0);
	cr_assert_eq(fcntl(fd, F_GETFL) & (O_NONBLOCK | O_ACCMODE), O_RDWR);
	cr_assert(S_ISREG(st.st_mode) && st.st_ino == host_lstat("rw/sub/new2").st_ino);
	close(fd);
	cr_assert_eq(gofer_unlink(c, EXP_RW, "sub/new2", 0), 0);
	/* a create beneath a name that is no directory */
	cr_assert_eq(gofer_open(c, EXP_RW, "file/x", O_WRONLY | O_CREAT | O_EXCL, 0600, &fd, NULL), -ENOTDIR);

	/* the root directory itself, read as a directory stream */
	cr_assert_eq(gofer_open(c, EXP_RW, "", O_RDONLY | O_DIRECTORY, 0, &fd, &st), 0);
	cr_assert(S_ISDIR(st.st_mode));
	close(fd);
	/* O_TMPFILE in a writable directory */
	cr_assert_eq(gofer_open(c, EXP_RW, "sub", O_TMPFILE | O_RDWR, 0600, &fd, &st), 0);
	close(fd);
	cr_assert_eq(gofer_open(c, EXP_RW, "file", 0x40000000, 0, &fd, &st), -EINVAL);
}

Test(gofer_ops, open_symlink_final)
{
	struct stat st;
	int fd;

	cr_assert_eq(gofer_open(c, EXP_RW, "link", O_RDONLY, 0, &fd, &st), -ELOOP);
	cr_assert_eq(gofer_open(c, EXP_RW, "link", O_PATH | O_NOFOLLOW, 0, &fd, &st), 0);
	cr_assert(S_ISLNK(st.st_mode));
	close(fd);
}

Test(gofer_ops, readlink)
{
	char buf[64];
	long n = gofer_readlink(c, EXP_RW, "up", buf, sizeof buf);

	cr_assert_eq(n, 12);
	cr_assert(!memcmp(buf, "../../../etc", 12));
	cr_assert_eq(gofer_readlink(c, EXP_RW, "up", buf, 4), 4);
	cr_assert(!memcmp(buf, "../.", 4));
	cr_assert_eq(gofer_readlink(c, EXP_RW, "file", buf, sizeof buf), -EINVAL);
	cr_assert_eq(gofer_readlink(c, EXP_RW, "", buf, sizeof buf), -EINVAL);
	/* the connection is still in step after a truncated reply */
	cr_assert_eq(gl(EXP_RW, "file"), 0);
}

Test(gofer_ops, mkdir_mknod_unlink)
{
	struct stat st;

	cr_assert_eq(gofer_mkdir(c, EXP_RW, "d", 0751), 0);
	st = host_lstat("rw/d");
	cr_assert(S_ISDIR(st.st_mode));
	cr_assert_eq(st.st_mode & 07777, 0751);
	cr_assert_eq(gofer_mkdir(c, EXP_RW, "d", 0755), -EEXIST);
	cr_assert_eq(gofer_mkdir(c, EXP_RW, "", 0755), -EEXIST);
	cr_assert_eq(gofer_mkdir(c, EXP_RW, "nope/d", 0755), -ENOENT);

	cr_assert_eq(gofer_mknod(c, EXP_RW, "d/fifo", S_IFIFO | 0600), 0);
	cr_assert(S_ISFIFO(host_lstat("rw/d/fifo").st_mode));
	cr_assert_eq(gofer_mknod(c, EXP_RW, "d/reg", 0644), 0);
	cr_assert(S_ISREG(host_lstat("rw/d/reg").st_mode));
	cr_assert_eq(gofer_mknod(c, EXP_RW, "d/sock", S_IFSOCK | 0600), 0);
	cr_assert_eq(gofer_mknod(c, EXP_RW, "d/chr", S_IFCHR | 0600), -EPERM);
	cr_assert_eq(gofer_mknod(c, EXP_RW, "d/blk", S_IFBLK | 0600), -EPERM);

	/* the _st forms reply with what was made (a made entry keys on it) */
	struct stat made;
	cr_assert_eq(gofer_mkdir_st(c, EXP_RW, "d/sub", 0700, &made), 0);
	st = host_lstat("rw/d/sub");
	cr_assert(S_ISDIR(made.st_mode) && made.st_ino == st.st_ino && made.st_dev == st.st_dev);
	cr_assert_eq(gofer_mknod_st(c, EXP_RW, "d/fifo2", S_IFIFO | 0600, &made), 0);
	cr_assert(S_ISFIFO(made.st_mode) && made.st_ino == host_lstat("rw/d/fifo2").st_ino);
	cr_assert_eq(gofer_symlink_st(c, EXP_RW, "t", "d/sl", &made), 0);
	cr_assert(S_ISLNK(made.st_mode) && made.st_ino == host_lstat("rw/d/sl").st_ino);
	cr_assert_eq(gofer_mkdir_st(c, EXP_RW, "d/sub", 0700, &made), -EEXIST);
	cr_assert_eq(gofer_unlink(c, EXP_RW, "d/sub", AT_REMOVEDIR), 0);
	cr_assert_eq(gofer_unlink(c, EXP_RW, "d/fifo2", 0), 0);
	cr_assert_eq(gofer_unlink(c, EXP_RW, "d/sl", 0), 0);

	cr_assert_eq(gofer_unlink(c, EXP_RW, "d", AT_REMOVEDIR), -ENOTEMPTY);
	cr_assert_eq(gofer_unlink(c, EXP_RW, "d/fifo", 0), 0);
	cr_assert_eq(gofer_unlink(c, EXP_RW, "d/reg", 0), 0);
	cr_assert_eq(gofer_unlink(c, EXP_RW, "d/sock", 0), 0);
	cr_assert_eq(gofer_unlink(c, EXP_RW, "d", 0), -EISDIR);
	cr_assert_eq(gofer_unlink(c, EXP_RW, "d", AT_REMOVEDIR), 0);
	cr_assert(!host_exists("rw/d"));
	cr_assert_eq(gofer_unlink(c, EXP_RW, "", AT_REMOVEDIR), -EBUSY);
	cr_assert_eq(gofer_unlink(c, EXP_RW, "link", 0), 0);
	cr_assert(host_exists("rw/file"));
}

Test(gofer_ops, rename_symlink_link)
{
	cr_assert_eq(gofer_rename(c, EXP_RW, "file", "sub/moved", 0), 0);
	cr_assert(!host_exists("rw/file") && host_exists("rw/sub/moved"));
	cr_assert_eq(gofer_rename(c, EXP_RW, "sub/moved", "sub/f", RENAME_NOREPLACE), -EEXIST);
	cr_assert_eq(gofer_rename(c, EXP_RW, "sub/moved", "sub/f", RENAME_EXCHANGE), 0);
	cr_assert_eq(gofer_rename(c, EXP_RW, "sub/f", "x", RENAME_WHITEOUT), -EINVAL);
	cr_assert_eq(gofer_rename(c, EXP_RW, "", "x", 0), -EBUSY);
	cr_assert_eq(gofer_rename(c, EXP_RW, "sub/f", "", 0), -EBUSY);

	cr_assert_eq(gofer_symlink(c, EXP_RW, "/anything/../at all", "sub/sl"), 0);
	char buf[64];
	char p[256];
	host_path(p, sizeof p, "rw/sub/sl");
	ssize_t n = readlink(p, buf, sizeof buf);
	cr_assert_eq(n, 19);
	cr_assert(!memcmp(buf, "/anything/../at all", 19));
	cr_assert_eq(gofer_symlink(c, EXP_RW, "", "sub/sl2"), -ENOENT);
	cr_assert_eq(gofer_symlink(c, EXP_RW, "t", "sub/sl"), -EEXIST);

	cr_assert_eq(gofer_link(c, EXP_RW, "sub/f", "hard"), 0);
	cr_assert_eq(host_lstat("rw/hard").st_ino, host_lstat("rw/sub/f").st_ino);
	cr_assert_eq(gofer_link(c, EXP_RW, "sub", "hard2"), -EPERM);
	/* linking a symlink links the symlink, never its target */
	cr_assert_eq(gofer_link(c, EXP_RW, "abs", "abs2"), 0);
	cr_assert(S_ISLNK(host_lstat("rw/abs2").st_mode));
}

/* LINK of the object checked: linked by an fd of it, -ESTALE for another
 * (the name renamed meanwhile), and the reply says what both names are
 * after the link (the sentry caches them: git unlinks its temporary name
 * next) */
Test(gofer_ops, link_checked_object)
{
	struct stat f = host_lstat("rw/file"), st[2];

	gofer_expect_identity(f.st_dev, f.st_ino + 1000000);
	cr_assert_eq(gofer_link_st(c, EXP_RW, "file", "h1", st), -ESTALE);
	cr_assert(!host_exists("rw/h1"));
	gofer_expect_identity(f.st_dev, f.st_ino);
	cr_assert_eq(gofer_link_st(c, EXP_RW, "file", "h1", st), 0);
	cr_assert_eq(host_lstat("rw/h1").st_ino, f.st_ino);
	cr_assert_eq(st[0].st_ino, f.st_ino);
	cr_assert_eq(st[0].st_nlink, f.st_nlink + 1);
	cr_assert_eq(st[1].st_ino, f.st_ino);
	cr_assert_eq(st[1].st_nlink, f.st_nlink + 1);
	/* a symlink checked is linked itself, never its target */
	struct stat l = host_lstat("rw/abs");
	gofer_expect_identity(l.st_dev, l.st_ino);
	cr_assert_eq(gofer_link_st(c, EXP_RW, "abs", "abs3", st), 0);
	cr_assert(S_ISLNK(host_lstat("rw/abs3").st_mode));
	cr_assert(S_ISLNK(st[0].st_mode) && st[0].st_ino == l.st_ino);
	/* no identity named: linked by name, as before */
	cr_assert_eq(gofer_link_st(c, EXP_RW, "file", "h2", NULL), 0);
	cr_assert_eq(host_lstat("rw/h2").st_ino, f.st_ino);
}

/* LINK of two names in one directory (git's objects/XX/tmp_obj_Y ->
 * objects/XX/<hash>) opens that directory once (h_link, same_parent): both
 * directories the sentry checked are still compared with it, each one */
/* gofer_link_st of f (its identity expected) under the parent and target
 * directory identities the sentry would have checked */
static long link_checked(const struct stat *f, const struct stat *parent, ino_t parent_ino,
			 const struct stat *target, ino_t target_ino, const char *to, struct stat st[2])
{
	gofer_expect_identity(f->st_dev, f->st_ino);
	gofer_expect_parent(parent->st_dev, parent_ino);
	gofer_expect_target(target->st_dev, target_ino, 0, 0);
	return gofer_link_st(c, EXP_RW, "lk/f", to, st);
}

Test(gofer_ops, link_one_directory_checked_twice)
{
	mk("rw/lk");
	put("rw/lk/f", "f", 0644);
	mk("rw/lk/in");
	struct stat d = host_lstat("rw/lk"), in = host_lstat("rw/lk/in"), f = host_lstat("rw/lk/f");
	struct stat st[2];

	cr_assert_eq(link_checked(&f, &d, d.st_ino, &d, d.st_ino + 1000000, "lk/g", st), -ESTALE,
		     "the destination's directory");
	cr_assert(!host_exists("rw/lk/g"));
	cr_assert_eq(link_checked(&f, &d, d.st_ino + 1000000, &d, d.st_ino, "lk/g", st), -ESTALE,
		     "the source's directory");
	cr_assert(!host_exists("rw/lk/g"));
	cr_assert_eq(link_checked(&f, &d, d.st_ino, &d, d.st_ino, "lk/g", st), 0);
	cr_assert_eq(host_lstat("rw/lk/g").st_ino, f.st_ino);
	cr_assert(st[0].st_ino == f.st_ino && st[1].st_ino == f.st_ino && st[0].st_nlink == f.st_nlink + 1);
	/* a longer path with the same start is another directory */
	cr_assert_eq(link_checked(&f, &d, d.st_ino, &d, d.st_ino, "lk/in/h", st), -ESTALE, "lk/in is not lk");
	cr_assert(!host_exists("rw/lk/in/h"));
	cr_assert_eq(link_checked(&f, &d, d.st_ino, &in, in.st_ino, "lk/in/h", st), 0);
	cr_assert_eq(host_lstat("rw/lk/in/h").st_ino, f.st_ino);
}

Test(gofer_ops, setattr)
{
	struct timespec ts[2] = { { 1000, 5 }, { 2000, 7 } };
	struct stat st;

	cr_assert_eq(gofer_chmod(c, EXP_RW, "file", 0604), 0);
	cr_assert_eq(host_lstat("rw/file").st_mode & 07777, 0604);
	cr_assert_eq(gofer_chmod(c, EXP_RW, "link", 0600), -EOPNOTSUPP);
	cr_assert_eq(gofer_chmod(c, EXP_RW, "file", 010000), -EINVAL);
	cr_assert_eq(gofer_chmod(c, EXP_RW, "", 0711), 0);
	cr_assert_eq(host_lstat("rw").st_mode & 07777, 0711);

	/* host files never change owners, whatever the request */
	cr_assert_eq(gofer_chown(c, EXP_RW, "file", geteuid(), getegid()), -EPERM);
	cr_assert_eq(gofer_chown(c, EXP_RW, "file", 1234, 4321), -EPERM);
	cr_assert_eq(gofer_chown(c, EXP_RW, "link", 0, 0), -EPERM);
	st = host_lstat("rw/file");
	cr_assert(st.st_uid == geteuid() && st.st_gid == getegid());


	cr_assert_eq(gofer_truncate(c, EXP_RW, "file", 2), 0);
	cr_assert_eq(host_lstat("rw/file").st_size, 2);
	cr_assert_eq(gofer_truncate(c, EXP_RW, "file", 1 << 20), 0);
	cr_assert_eq(host_lstat("rw/file").st_size, 1 << 20);
	cr_assert_eq(gofer_truncate(c, EXP_RW, "sub", 0), -EISDIR);
	cr_assert_eq(gofer_truncate(c, EXP_RW, "link", 0), -ELOOP);
	cr_assert_eq(gofer_truncate(c, EXP_RW, "file", -1), -EINVAL);

	cr_assert_eq(gofer_utimens(c, EXP_RW, "file", ts, 0), 0);
	st = host_lstat("rw/file");
	cr_assert(st.st_atim.tv_sec == 1000 && st.st_atim.tv_nsec == 5);
	cr_assert(st.st_mtim.tv_sec == 2000 && st.st_mtim.tv_nsec == 7);
	cr_assert_eq(gofer_utimens(c, EXP_RW, "link", ts, 0), -ELOOP);
	cr_assert_eq(gofer_utimens(c, EXP_RW, "link", ts, AT_SYMLINK_NOFOLLOW), 0);
	cr_assert_eq(host_lstat("rw/link").st_mtim.tv_sec, 2000);
	cr_assert_eq(gofer_utimens(c, EXP_RW, "file", NULL, 0), 0);
	cr_assert(host_lstat("rw/file").st_mtim.tv_sec > 2000);
}

/* No set-id bit, owner change or device node reaches a host file, and no
 * new name for a set-id host file, whatever the sentry asks; the private
 * tmpfs export keeps real chmod/chown. */
Test(gofer_ops, no_setid_on_host_files)
{
	struct stat st;
	char p[256];
	int fd;

	cr_assert_eq(gofer_chmod(c, EXP_RW, "file", 04755), 0);
	cr_assert_eq(host_lstat("rw/file").st_mode & 07777, 0755);
	cr_assert_eq(gofer_chmod(c, EXP_RW, "sub", 02775), 0);
	cr_assert_eq(host_lstat("rw/sub").st_mode & 07777, 0775);
	cr_assert_eq(gofer_open(c, EXP_RW, "new", O_WRONLY | O_CREAT | O_EXCL, 06755, &fd, &st), 0);
	close(fd);
	cr_assert_eq(host_lstat("rw/new").st_mode & 07000, 0);
	cr_assert_eq(gofer_mkdir(c, EXP_RW, "nd", 03777), 0);
	cr_assert_eq(host_lstat("rw/nd").st_mode & 06000, 0);
	cr_assert_eq(gofer_mknod(c, EXP_RW, "nf", S_IFREG | 04700), 0);
	cr_assert_eq(host_lstat("rw/nf").st_mode & 07000, 0);
	cr_assert_eq(gofer_mknod(c, EXP_RW, "cdev", S_IFCHR | 0600), -EPERM);
	cr_assert(!host_exists("rw/cdev"));

	/* a set-id file the host put there gets no second name */
	host_path(p, sizeof p, "rw/suid");
	put("rw/suid", "x", 0755);
	cr_assert_eq(chmod(p, 04755), 0);
	cr_assert_eq(gofer_link(c, EXP_RW, "suid", "suid2"), -EPERM);
	cr_assert(!host_exists("rw/suid2"));
	cr_assert_eq(gofer_link(c, EXP_RW, "file", "file2"), 0);

	/* the sandbox's own tmpfs: real */
	cr_assert_eq(gofer_open(c, EXP_TMP, "s", O_WRONLY | O_CREAT, 0755, &fd, NULL), 0);
	close(fd);
	cr_assert_eq(gofer_chmod(c, EXP_TMP, "s", 04755), 0);
	cr_assert_eq(gofer_lstat(c, EXP_TMP, "s", &st), 0);
	cr_assert_eq(st.st_mode & 07777, 04755);
	if (geteuid() == 0) {
		cr_assert_eq(gofer_chown(c, EXP_TMP, "s", 1234, 4321), 0);
		cr_assert_eq(gofer_lstat(c, EXP_TMP, "s", &st), 0);
		cr_assert(st.st_uid == 1234 && st.st_gid == 4321);
	}
}

Test(gofer_ops, statfs)
{
	struct statfs a, b;
	char p[256];

	host_path(p, sizeof p, "rw");
	cr_assert_eq(statfs(p, &b), 0);
	cr_assert_eq(gofer_statfs(c, EXP_RW, "", &a), 0);
	cr_assert_eq(a.f_type, b.f_type);
	cr_assert_eq(gofer_statfs(c, EXP_RW, "sub/f", &a), 0);
	cr_assert_eq(a.f_type, b.f_type);
	cr_assert_eq(gofer_statfs(c, EXP_TMP, "", &a), 0);
	cr_assert_eq(a.f_type, 0x01021994 /* TMPFS_MAGIC */);
	cr_assert_eq(gofer_statfs(c, EXP_RW, "link/x", &a), -ELOOP);
}

Test(gofer_ops, readonly_export)
{
	int fd;
	struct stat st;
	char buf[32], proc[64];

	cr_assert_eq(gofer_mkdir(c, EXP_RO, "x", 0755), -EROFS);
	cr_assert_eq(gofer_mknod(c, EXP_RO, "x", 0644), -EROFS);
	cr_assert_eq(gofer_unlink(c, EXP_RO, "data", 0), -EROFS);
	cr_assert_eq(gofer_rename(c, EXP_RO, "data", "x", 0), -EROFS);
	cr_assert_eq(gofer_symlink(c, EXP_RO, "t", "x"), -EROFS);
	cr_assert_eq(gofer_link(c, EXP_RO, "data", "x"), -EROFS);
	cr_assert_eq(gofer_chmod(c, EXP_RO, "data", 0777), -EROFS);
	cr_assert_eq(gofer_chown(c, EXP_RO, "data", 1, 1), -EROFS);
	cr_assert_eq(gofer_truncate(c, EXP_RO, "data", 0), -EROFS);
	cr_assert_eq(gofer_utimens(c, EXP_RO, "data", NULL, 0), -EROFS);
	cr_assert_eq(gofer_open(c, EXP_RO, "data", O_WRONLY, 0, &fd, &st), -EROFS);
	cr_assert_eq(gofer_open(c, EXP_RO, "data", O_RDWR, 0, &fd, &st), -EROFS);
	cr_assert_eq(gofer_open(c, EXP_RO, "new", O_RDONLY | O_CREAT, 0644, &fd, &st), -EROFS);
	cr_assert_eq(gofer_open(c, EXP_RO, "data", O_RDONLY | O_TRUNC, 0, &fd, &st), -EROFS);

	/* the fd it donates cannot be used to write, natively */
	cr_assert_eq(gofer_open(c, EXP_RO, "data", O_RDONLY, 0, &fd, &st), 0);
	cr_assert_eq(read(fd, buf, sizeof buf), 8);
	cr_assert_eq(write(fd, "x", 1), -1);
	cr_assert_eq(errno, EBADF);
	cr_assert_eq(fchmod(fd, 0777), -1);
	cr_assert_eq(errno, EROFS);
	cr_assert_eq(fchown(fd, 1, 1), -1);
	cr_assert_eq(errno, EROFS);
	cr_assert_eq(ftruncate(fd, 0), -1);
	cr_assert(errno == EINVAL || errno == EBADF || errno == EROFS);
	/* nor re-opened for writing through /proc */
	snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
	cr_assert_eq(open(proc, O_RDWR), -1);
	cr_assert_eq(errno, EROFS);
	close(fd);
	cr_assert_eq(host_lstat("ro/data").st_mode & 07777, 0644);

	/* a donated directory fd: no creating beneath it natively either */
	cr_assert_eq(gofer_open(c, EXP_RO, "dir", O_RDONLY | O_DIRECTORY, 0, &fd, &st), 0);
	cr_assert_eq(openat(fd, "evil", O_WRONLY | O_CREAT, 0644), -1);
	cr_assert_eq(errno, EROFS);
	cr_assert_eq(mkdirat(fd, "evil", 0755), -1);
	cr_assert_eq(errno, EROFS);
	close(fd);
}

Test(gofer_ops, symlink_in_middle_is_eloop)
{
	static const char *const paths[] = {
		"link/x", "up/passwd", "abs/passwd", "up", "abs/shadow",
	};
	struct stat st;
	int fd;

	for (size_t i = 0; i < 4; i++) {
		int want = i == 3 ? 0 : -ELOOP;
		cr_assert_eq(gl(EXP_RW, paths[i]), want, "%s", paths[i]);
	}
	cr_assert_eq(gofer_open(c, EXP_RW, "up/passwd", O_RDONLY, 0, &fd, &st), -ELOOP);
	cr_assert_eq(gofer_open(c, EXP_RW, "abs/passwd", O_RDONLY, 0, &fd, &st), -ELOOP);
	cr_assert_eq(gofer_open(c, EXP_RW, "up", O_RDONLY, 0, &fd, &st), -ELOOP);
	/* a create through a symlink in the middle (one openat2 of the whole
	 * path): never made where the link leads */
	cr_assert_eq(gofer_open(c, EXP_RW, "link/made", O_WRONLY | O_CREAT | O_EXCL, 0600, &fd, &st), -ELOOP);
	cr_assert_eq(gofer_open(c, EXP_RW, "up/made", O_WRONLY | O_CREAT, 0600, &fd, &st), -ELOOP);
	int r = gofer_open(c, EXP_RW, "abs", O_RDONLY | O_DIRECTORY, 0, &fd, &st);
	cr_assert(r == -ELOOP || r == -ENOTDIR, "%d", r);
	cr_assert_eq(gofer_mkdir(c, EXP_RW, "up/x", 0755), -ELOOP);
	cr_assert_eq(gofer_unlink(c, EXP_RW, "abs/passwd", 0), -ELOOP);
	cr_assert_eq(gofer_rename(c, EXP_RW, "file", "abs/x", 0), -ELOOP);
	cr_assert_eq(gofer_symlink(c, EXP_RW, "x", "up/x"), -ELOOP);
	cr_assert_eq(gofer_chmod(c, EXP_RW, "abs/passwd", 0777), -ELOOP);
	cr_assert_eq(gofer_truncate(c, EXP_RW, "up/passwd", 0), -ELOOP);
	cr_assert_eq(gl(EXP_RO, "ldir/x"), -ELOOP);
	cr_assert_eq(gofer_readlink(c, EXP_RW, "up/x", (char[8]){ 0 }, 8), -ELOOP);
}

Test(gofer_ops, unsafe_paths_are_einval)
{
	static const char *const bad[] = {
		"..", ".", "../etc", "sub/..", "sub/../file", "./file", "/etc",
		"/", "sub//f", "sub/", "//", "sub/./f",
	};
	char longname[NAME_MAX + 2];
	struct stat st;
	int fd;

	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		cr_assert_eq(gl(EXP_RW, bad[i]), -EINVAL, "%s", bad[i]);
		cr_assert_eq(gofer_open(c, EXP_RW, bad[i], O_RDONLY, 0, &fd, &st), -EINVAL);
		cr_assert_eq(gofer_mkdir(c, EXP_RW, bad[i], 0755), -EINVAL);
		cr_assert_eq(gofer_rename(c, EXP_RW, "file", bad[i], 0), -EINVAL);
	}
	memset(longname, 'a', sizeof longname - 1);
	longname[sizeof longname - 1] = '\0';
	cr_assert_eq(gl(EXP_RW, longname), -ENAMETOOLONG);
	longname[NAME_MAX] = '\0';
	cr_assert_eq(gl(EXP_RW, longname), -ENOENT);
	cr_assert_eq(gl(EXP_N, "file"), -EINVAL);
	cr_assert_eq(gl(-1, "file"), -EINVAL);
}

Test(gofer_ops, hidden_names)
{
	struct stat st;
	char buf[8];
	int fd, dfd;

	cr_assert_eq(gl(EXP_RW, "secret"), -ENOENT);
	cr_assert_eq(gl(EXP_RW, "sub/deep"), -ENOENT);
	cr_assert_eq(gl(EXP_RW, "sub/deep/x"), -ENOENT);
	cr_assert_eq(gl(EXP_RW, "secretive"), -ENOENT);    /* just missing */
	cr_assert_eq(gofer_open(c, EXP_RW, "secret", O_RDONLY, 0, &fd, &st), -ENOENT);
	cr_assert_eq(gofer_unlink(c, EXP_RW, "secret", 0), -ENOENT);
	cr_assert_eq(gofer_rename(c, EXP_RW, "file", "secret", 0), -ENOENT);
	cr_assert_eq(gofer_rename(c, EXP_RW, "secret", "x", 0), -ENOENT);
	cr_assert_eq(gofer_link(c, EXP_RW, "secret", "x"), -ENOENT);
	cr_assert_eq(gofer_chmod(c, EXP_RW, "secret", 0777), -ENOENT);
	cr_assert_eq(gl(EXP_RO, "shadow"), -ENOENT);
	cr_assert_eq(gl(EXP_RO, "ssh"), -ENOENT);
	cr_assert_eq(gl(EXP_RO, "ssh/key"), -ENOENT);
	cr_assert(host_exists("rw/secret") && host_exists("ro/ssh/key"));

	/* defence in depth: a donated directory fd sees them over-mounted empty */
	cr_assert_eq(gofer_open(c, EXP_RO, "", O_RDONLY | O_DIRECTORY, 0, &dfd, &st), 0);
	fd = openat(dfd, "shadow", O_RDONLY);
	if (fd >= 0) {
		cr_assert_eq(read(fd, buf, sizeof buf), 0);
		close(fd);
	} else {
		cr_assert_eq(errno, EACCES);   /* rootless: the empty file is 0000 */
	}
	cr_assert_eq(openat(dfd, "ssh/key", O_RDONLY), -1);
	close(dfd);
}

Test(gofer_ops, tmpfs_export)
{
	struct stat st;
	char buf[4096];
	int fd;

	cr_assert_eq(gofer_lstat(c, EXP_TMP, "", &st), 0);
	cr_assert(S_ISDIR(st.st_mode));
	cr_assert_eq(st.st_mode & 07777, 0755);
	cr_assert_eq(st.st_uid, geteuid());
	cr_assert_eq(gofer_open(c, EXP_TMP, "", O_RDONLY | O_DIRECTORY, 0, &fd, NULL), 0);
	long n = syscall(SYS_getdents64, fd, buf, sizeof buf);
	int entries = 0;
	for (long off = 0; off < n;) {
		struct dirent64 *d = (struct dirent64 *)(buf + off);
		entries++;
		off += d->d_reclen;
	}
	cr_assert_eq(entries, 2, "tmpfs export starts empty");
	close(fd);
	cr_assert_eq(gofer_mkdir(c, EXP_TMP, "d", 0700), 0);
	cr_assert_eq(gofer_open(c, EXP_TMP, "d/f", O_RDWR | O_CREAT, 0600, &fd, &st), 0);
	cr_assert_eq(write(fd, "abc", 3), 3);
	cr_assert_eq(ftruncate(fd, 1), 0);
	close(fd);
	cr_assert_eq(gofer_lstat(c, EXP_TMP, "d/f", &st), 0);
	cr_assert_eq(st.st_size, 1);

	/* CHOWNFD: an unnamed O_TMPFILE file of the private export only */
	uid_t u = geteuid() == 0 ? 1234 : geteuid();
	gid_t g = geteuid() == 0 ? 4321 : getegid();
	cr_assert_eq(gofer_open(c, EXP_TMP, "d", O_TMPFILE | O_RDWR, 0600, &fd, &st), 0);
	cr_assert_eq(gofer_chownfd(c, EXP_TMP, fd, u, g), 0);
	cr_assert_eq(fstat(fd, &st), 0);
	cr_assert(st.st_uid == u && st.st_gid == g);
	close(fd);
	cr_assert_eq(gofer_open(c, EXP_TMP, "d/f", O_RDWR, 0, &fd, NULL), 0);
	cr_assert_eq(gofer_chownfd(c, EXP_TMP, fd, u, g), -EPERM, "a named file");
	close(fd);
	cr_assert_eq(gofer_open(c, EXP_RW, "", O_TMPFILE | O_RDWR, 0600, &fd, &st), 0);
	cr_assert_eq(gofer_chownfd(c, EXP_RW, fd, u, g), -EPERM, "a host export");
	cr_assert_eq(gofer_chownfd(c, EXP_TMP, fd, u, g), -EPERM, "another file system's");
	close(fd);
}

Test(gofer_ops, dev_export)
{
	struct stat st;
	char buf[8] = { 1, 1, 1, 1 };
	int fd;

	cr_assert_eq(gofer_open(c, EXP_DEV, "null", O_RDWR, 0, &fd, &st), 0);
	cr_assert(S_ISCHR(st.st_mode));
	cr_assert_eq(write(fd, "x", 1), 1);
	cr_assert_eq(read(fd, buf, 1), 0);
	close(fd);
	/* as a shell's "> /dev/null" asks */
	cr_assert_eq(gofer_open(c, EXP_DEV, "null", O_WRONLY | O_CREAT | O_TRUNC, 0666,
				&fd, &st), 0);
	close(fd);
	cr_assert_eq(gofer_open(c, EXP_DEV, "zero", O_RDONLY, 0, &fd, &st), 0);
	cr_assert_eq(read(fd, buf, 4), 4);
	cr_assert_eq(buf[0] | buf[1] | buf[2] | buf[3], 0);
	close(fd);
	cr_assert_eq(gofer_open(c, EXP_DEV, "urandom", O_RDONLY, 0, &fd, &st), 0);
	close(fd);
	cr_assert_eq(gofer_open(c, EXP_DEV, "sda", O_RDONLY, 0, &fd, &st), -ENOENT);
	cr_assert_eq(gofer_open(c, EXP_DEV, "mem", O_RDONLY, 0, &fd, &st), -ENOENT);
	cr_assert_neq(gofer_open(c, EXP_DEV, "new", O_WRONLY | O_CREAT, 0666, &fd, &st), 0);
	cr_assert_eq(gofer_mknod(c, EXP_DEV, "new", 0666), -EROFS);
	cr_assert_eq(gofer_unlink(c, EXP_DEV, "null", 0), -EROFS);
	cr_assert_eq(gofer_chmod(c, EXP_DEV, "null", 0777), -EROFS);
	cr_assert_eq(gofer_open(c, EXP_DEV, "", O_RDONLY | O_TMPFILE, 0600, &fd, &st), -EROFS);
}

/* WINSZ (red team 71): the window size of a terminal of the DEV export's
 * own devpts only; a host pty (the caller's terminal is one) is refused,
 * whatever export is named. */
Test(gofer_ops, winsz_own_devpts_only)
{
	struct winsize ws = { .ws_row = 7, .ws_col = 9 }, now;
	struct stat st;
	int fd;

	int m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	cr_assert(m >= 0 && grantpt(m) == 0 && unlockpt(m) == 0);
	cr_assert_eq(ioctl(m, TIOCGWINSZ, &now), 0);
	cr_assert_eq(gofer_winsz(c, EXP_DEV, m, &ws), -EPERM, "a host pty");
	cr_assert_eq(gofer_winsz(c, EXP_RW, m, &ws), -EINVAL, "not a DEV export");
	cr_assert_eq(ioctl(m, TIOCGWINSZ, &ws), 0);
	cr_assert(ws.ws_row == now.ws_row && ws.ws_col == now.ws_col, "the host pty kept its size");
	close(m);
	cr_assert_eq(gofer_open(c, EXP_DEV, "null", O_RDWR, 0, &fd, &st), 0);
	cr_assert_eq(gofer_winsz(c, EXP_DEV, fd, &ws), -EPERM, "no terminal of its devpts");
	close(fd);
}

/* MEMFDATTR (sentryfs37): the mode and times of a memfd only; a host file
 * (the caller's stdio, a rw bind's file), a named or unnamed tmpfs file
 * (O_TMPFILE of the private export) is refused, whatever export is named. */
Test(gofer_ops, memfdattr_memfd_only)
{
	struct timespec ts[2] = { { .tv_sec = 1000 }, { .tv_sec = 2000 } };
	struct stat st;
	int fd;

	int m = memfd_create("m", MFD_CLOEXEC);
	cr_assert(m >= 0);
	cr_assert_eq(gofer_memfdattr(c, EXP_RW, m, 04640, NULL), 0);
	cr_assert_eq(fstat(m, &st), 0);
	cr_assert_eq(st.st_mode & 07777, 0640, "mode %o, never a set-id bit", st.st_mode & 07777);
	cr_assert_eq(gofer_memfdattr(c, EXP_TMP, m, 0, ts), 0);
	cr_assert_eq(fstat(m, &st), 0);
	cr_assert(st.st_atim.tv_sec == 1000 && st.st_mtim.tv_sec == 2000);
	close(m);
	cr_assert_eq(gofer_open(c, EXP_RW, "", O_TMPFILE | O_RDWR, 0600, &fd, &st), 0);
	cr_assert_eq(gofer_memfdattr(c, EXP_RW, fd, 0666, NULL), -EPERM, "a host export's file");
	cr_assert_eq(gofer_memfdattr(c, EXP_RW, fd, 0, ts), -EPERM, "a host export's file");
	cr_assert_eq(fstat(fd, &st), 0);
	cr_assert_eq(st.st_mode & 07777, 0600);
	close(fd);
	cr_assert_eq(gofer_open(c, EXP_TMP, "", O_TMPFILE | O_RDWR, 0600, &fd, &st), 0);
	cr_assert_eq(gofer_memfdattr(c, EXP_TMP, fd, 0666, NULL), -EPERM, "an unnamed tmpfs file");
	close(fd);
	fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	cr_assert_eq(gofer_memfdattr(c, EXP_RW, fd, 0666, NULL), -EPERM, "a device");
	close(fd);
}

/* DEVOPEN: a batch of opens of one memory device in one round trip, each
 * its own open file description; nothing else of /dev (tty, pts/), no
 * other flags, no path, and only from a DEV export. */
Test(gofer_ops, dev_open_batch)
{
	struct stat st;
	int fds[GOFER_DEVOPEN_MAX], fd;

	cr_assert_eq(gofer_devopen(c, EXP_DEV, "urandom", O_RDONLY, GOFER_DEVOPEN_MAX, fds, &st),
		     GOFER_DEVOPEN_MAX);
	cr_assert(S_ISCHR(st.st_mode) && major(st.st_rdev) == 1 && minor(st.st_rdev) == 9);
	cr_assert_eq(fcntl(fds[0], F_SETFL, O_NONBLOCK), 0);
	for (int i = 0; i < GOFER_DEVOPEN_MAX; i++) {
		struct stat fst;
		cr_assert(fstat(fds[i], &fst) == 0 && fst.st_rdev == st.st_rdev);
		cr_assert_eq(fcntl(fds[i], F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
		cr_assert_eq(fcntl(fds[i], F_GETFL) & O_ACCMODE, O_RDONLY);
		if (i)  /* a description of its own: the flag set on fds[0] is not here */
			cr_assert_eq(fcntl(fds[i], F_GETFL) & O_NONBLOCK, 0, "fd %d shares fds[0]'s", i);
		close(fds[i]);
	}
	cr_assert_eq(gofer_devopen(c, EXP_DEV, "null", O_WRONLY, 3, fds, &st), 3);
	for (int i = 0; i < 3; i++) {
		cr_assert_eq(write(fds[i], "x", 1), 1);
		close(fds[i]);
	}
	cr_assert_eq(gofer_devopen(c, EXP_DEV, "tty", O_RDWR, 1, fds, &st), -EINVAL);
	cr_assert_eq(gofer_devopen(c, EXP_DEV, "pts/ptmx", O_RDWR, 1, fds, &st), -EINVAL);
	cr_assert_eq(gofer_devopen(c, EXP_DEV, "zero", O_RDONLY | O_NONBLOCK, 1, fds, &st), -EINVAL);
	cr_assert_eq(gofer_devopen(c, EXP_DEV, "zero", O_RDONLY, GOFER_DEVOPEN_MAX + 1, fds, &st),
		     -EINVAL);
	cr_assert_eq(gofer_devopen(c, EXP_DEV, "sda", O_RDONLY, 1, fds, &st), -EINVAL);
	cr_assert_eq(gofer_devopen(c, EXP_RW, "file", O_RDONLY, 1, fds, &st), -EINVAL);
	/* the connection is still in step */
	cr_assert_eq(gofer_open(c, EXP_DEV, "zero", O_RDONLY, 0, &fd, &st), 0);
	close(fd);
}

Test(gofer_ops, file_export)
{
	struct stat st;
	char buf[16] = { 0 };
	int fd;

	cr_assert_eq(gofer_lstat(c, EXP_FILE, "", &st), 0);
	cr_assert(S_ISREG(st.st_mode));
	cr_assert_eq(st.st_ino, host_lstat("one").st_ino);
	cr_assert_eq(gofer_open(c, EXP_FILE, "", O_RDONLY, 0, &fd, &st), 0);
	cr_assert_eq(read(fd, buf, sizeof buf), 6);
	cr_assert_str_eq(buf, "single");
	cr_assert_eq(fchmod(fd, 0777), -1);
	cr_assert_eq(errno, EROFS);
	close(fd);
	cr_assert_eq(gofer_open(c, EXP_FILE, "", O_WRONLY, 0, &fd, &st), -EROFS);
	cr_assert_eq(gl(EXP_FILE, "x"), -ENOTDIR);
	cr_assert_eq(gofer_truncate(c, EXP_FILE, "", 0), -EROFS);
}

Test(gofer_ops, many_connections)
{
	struct gofer_conn *cs[16];

	for (int i = 0; i < 16; i++) {
		cs[i] = gofer_connect(gctl);
		cr_assert(cs[i]);
	}
	for (int i = 0; i < 16; i++) {
		struct stat st;
		cr_assert_eq(gofer_lstat(cs[i], EXP_RW, "file", &st), 0);
		gofer_disconnect(cs[i]);
	}
	cr_assert_eq(gl(EXP_RW, "file"), 0);
}

/* gofer_start refuses what it cannot serve, with one clear line */
Test(gofer_start_errors, bad_exports)
{
	struct gofer_export ex = { .kind = GOFER_EXPORT_DIR, .host_path = "/nonexistent/moat" };
	char err[256];
	pid_t pid;
	int ctl;

	cr_assert_eq(gofer_start(&ex, 1, &pid, &ctl, err, sizeof err), -ENOENT);
	cr_assert_str_eq(err, "gofer: /nonexistent/moat: No such file or directory");
	ex.host_path = "relative";
	cr_assert_eq(gofer_start(&ex, 1, &pid, &ctl, err, sizeof err), -EINVAL);
	ex.host_path = "/tmp";
	ex.hidden = (const char *const[]){ "../x", NULL };
	cr_assert_eq(gofer_start(&ex, 1, &pid, &ctl, err, sizeof err), -EINVAL);
	ex.hidden = NULL;
	ex.kind = 99;
	cr_assert_eq(gofer_start(&ex, 1, &pid, &ctl, err, sizeof err), -EINVAL);
	cr_assert_eq(waitpid(-1, NULL, WNOHANG), -1, "no child left behind");
}

/* The gofer dies with its parent (PDEATHSIG). */
Test(gofer_start_errors, dies_with_parent)
{
	int p[2];
	pid_t mid, g = 0;

	make_tree();
	cr_assert_eq(pipe(p), 0);
	mid = fork();
	if (mid == 0) {
		start_gofer();
		cr_assert(write(p[1], &gpid, sizeof gpid) == sizeof gpid);
		_exit(0);
	}
	close(p[1]);
	cr_assert_eq(read(p[0], &g, sizeof g), (ssize_t)sizeof g);
	waitpid(mid, NULL, 0);
	int alive = 1;
	for (int i = 0; i < 200 && alive; i++) {
		char path[64], state = 0;
		snprintf(path, sizeof path, "/proc/%d/stat", (int)g);
		FILE *f = fopen(path, "r");
		if (!f || fscanf(f, "%*d %*s %c", &state) != 1 || state == 'Z')
			alive = 0;
		if (f)
			fclose(f);
		if (alive)
			usleep(10000);
	}
	cr_assert(!alive, "gofer %d survived its parent", (int)g);
	remove_tree();
}

/* Rootless: as uid 1000 the gofer maps only that id. Runs in a child that
 * drops privileges; results come back as the exit status (step number). */
static int rootless_child(void)
{
	struct gofer_export ex[2] = {
		{ .kind = GOFER_EXPORT_DIR, .writable = 1 },
		{ .kind = GOFER_EXPORT_DIR },
	};
	char rw[128], ro[128], err[256];
	struct gofer_conn *cc;
	struct stat st;
	pid_t pid;
	int ctl, fd;

	snprintf(rw, sizeof rw, "%s/rw", tdir);
	snprintf(ro, sizeof ro, "%s/ro", tdir);
	ex[0].host_path = rw;
	ex[1].host_path = ro;
	if (setgroups(0, NULL) || setgid(1000) || setuid(1000))
		return 1;
	if (gofer_start(ex, 2, &pid, &ctl, err, sizeof err)) {
		fprintf(stderr, "rootless gofer_start: %s\n", err);
		return 2;
	}
	cc = gofer_connect(ctl);
	if (!cc)
		return 3;
	if (gofer_lstat(cc, 0, "file", &st) || st.st_uid != 1000 || st.st_gid != 1000)
		return 4;
	if (gofer_lstat(cc, 1, "data", &st) || st.st_uid != 65534)   /* root: unmapped */
		return 5;
	if (gofer_open(cc, 0, "made", O_WRONLY | O_CREAT | O_EXCL, 0600, &fd, &st))
		return 6;
	close(fd);
	if (st.st_uid != 1000)
		return 7;
	if (gofer_open(cc, 0, "secret", O_RDONLY, 0, &fd, &st) != -EACCES)  /* root 0600 */
		return 8;
	if (gofer_mkdir(cc, 1, "x", 0755) != -EROFS)
		return 9;
	if (gofer_lstat(cc, 0, "up/passwd", &st) != -ELOOP)
		return 10;
	gofer_disconnect(cc);
	close(ctl);
	if (waitpid(pid, NULL, 0) != pid)
		return 11;
	return 0;
}

Test(gofer_rootless, as_uid_1000)
{
	char p[256];
	int st;
	pid_t pid;

	make_tree();
	host_path(p, sizeof p, "rw");
	cr_assert_eq(chown(p, 1000, 1000), 0);
	host_path(p, sizeof p, "rw/file");
	cr_assert_eq(chown(p, 1000, 1000), 0);
	pid = fork();
	if (pid == 0)
		_exit(rootless_child());
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	host_path(p, sizeof p, "rw/made");
	struct stat hs;
	int made = stat(p, &hs) == 0 ? (int)hs.st_uid : -1;
	remove_tree();
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "rootless step %d failed",
		  WIFEXITED(st) ? WEXITSTATUS(st) : -WTERMSIG(st));
	cr_assert_eq(made, 1000);
}

/* The running gofer is confined: own user and mount namespaces, seccomp
 * filter, no_new_privs, and only a handful of fds. */
Test(gofer_ops, confined)
{
	char path[64], a[64], b[64], line[256];
	int seccomp = -1, nnp = -1, nfd = 0;
	FILE *f;

	snprintf(path, sizeof path, "/proc/%d/status", (int)gpid);
	f = fopen(path, "r");
	cr_assert(f);
	while (fgets(line, sizeof line, f)) {
		sscanf(line, "Seccomp: %d", &seccomp);
		sscanf(line, "NoNewPrivs: %d", &nnp);
	}
	fclose(f);
	cr_assert_eq(seccomp, 2);
	cr_assert_eq(nnp, 1);
	static const char *const ns[] = { "mnt", "user" };
	for (int i = 0; i < 2; i++) {
		snprintf(path, sizeof path, "/proc/%d/ns/%s", (int)gpid, ns[i]);
		ssize_t la = readlink(path, a, sizeof a - 1);
		snprintf(path, sizeof path, "/proc/self/ns/%s", ns[i]);
		ssize_t lb = readlink(path, b, sizeof b - 1);
		cr_assert(la > 0 && lb > 0);
		a[la] = b[lb] = '\0';
		cr_assert_str_neq(a, b, "%s namespace shared", ns[i]);
	}
	/* stdio, control socket, "/", one root per export, this connection; a
	 * connection of an earlier test may still be closing on a loaded
	 * machine, so look again for up to a second */
	snprintf(path, sizeof path, "/proc/%d/fd", (int)gpid);
	for (int tries = 0; tries < 20; tries++) {
		DIR *d = opendir(path);
		cr_assert(d);
		nfd = 0;
		for (struct dirent *e; (e = readdir(d));)
			nfd += e->d_name[0] != '.';
		closedir(d);
		if (nfd <= 3 + 1 + 1 + EXP_N + 1)
			break;
		usleep(50000);
	}
	cr_assert_leq(nfd, 3 + 1 + 1 + EXP_N + 1, "%d fds", nfd);
}

/* user.* attributes only: whatever a (compromised) sentry asks, no other
 * namespace reaches a host file (no security.capability, no trusted.*, no
 * ACL), a symlink is never followed, a read-only export is EROFS. */
Test(gofer_ops, xattr_user_only)
{
	char p[256], v[64];
	long n;

	host_path(p, sizeof p, "rw/file");
	if (setxattr(p, "user.probe", "1", 1, 0) < 0 && errno == ENOTSUP)
		cr_skip_test("no user xattrs on the test directory's file system");
	removexattr(p, "user.probe");
	cr_assert_eq(gofer_setxattr(c, EXP_RW, "file", "user.a", "va", 2, 0), 0);
	cr_assert_eq(getxattr(p, "user.a", v, sizeof v), 2);
	n = gofer_getxattr(c, EXP_RW, "file", "user.a", v, sizeof v);
	cr_assert(n == 2 && !memcmp(v, "va", 2), "get %ld", n);
	cr_assert_eq(gofer_getxattr(c, EXP_RW, "file", "user.a", NULL, 0), 2);
	cr_assert_eq(gofer_getxattr(c, EXP_RW, "file", "user.a", v, 1), -ERANGE);
	cr_assert_eq(gofer_setxattr(c, EXP_RW, "file", "user.a", "x", 1, XATTR_CREATE), -EEXIST);
	cr_assert_eq(gofer_setxattr(c, EXP_RW, "file", "user.b", "x", 1, XATTR_REPLACE), -ENODATA);
	n = gofer_listxattr(c, EXP_RW, "file", v, sizeof v);
	cr_assert(n == 7 && !memcmp(v, "user.a", 7), "list %ld", n);

	cr_assert_eq(gofer_setxattr(c, EXP_RW, "file", "security.capability", "\1\0\0\2", 4, 0), -EOPNOTSUPP);
	cr_assert_eq(gofer_setxattr(c, EXP_RW, "file", "trusted.x", "1", 1, 0), -EOPNOTSUPP);
	cr_assert_eq(gofer_setxattr(c, EXP_RW, "file", "system.posix_acl_access", "1", 1, 0), -EOPNOTSUPP);
	cr_assert_eq(gofer_setxattr(c, EXP_RW, "file", "user.", "1", 1, 0), -EOPNOTSUPP);
	cr_assert_eq(gofer_getxattr(c, EXP_RW, "file", "security.capability", v, sizeof v), -EOPNOTSUPP);
	cr_assert_eq(gofer_removexattr(c, EXP_RW, "file", "trusted.x"), -EOPNOTSUPP);
	cr_assert_eq(getxattr(p, "security.capability", v, sizeof v), -1);
	/* a symlink is not followed: it has no attributes */
	cr_assert_eq(gofer_setxattr(c, EXP_RW, "link", "user.a", "x", 1, 0), -EPERM);
	cr_assert_eq(gofer_getxattr(c, EXP_RW, "link", "user.a", v, sizeof v), -ENODATA);
	cr_assert_eq(gofer_setxattr(c, EXP_RW, "abs/passwd", "user.a", "x", 1, 0), -ELOOP);
	cr_assert_eq(gofer_setxattr(c, EXP_RO, "data", "user.a", "x", 1, 0), -EROFS);
	cr_assert_eq(gofer_removexattr(c, EXP_RO, "data", "user.a"), -EROFS);
	cr_assert_eq(gofer_setxattr(c, EXP_RW, "file", "user.big", v, GOFER_XATTR_MAX + 1, 0), -ENOSPC);
	cr_assert_eq(gofer_removexattr(c, EXP_RW, "file", "user.a"), 0);
	cr_assert_eq(gofer_removexattr(c, EXP_RW, "file", "user.a"), -ENODATA);
}

/* PATHOF names a held directory where it is now; LINKFD names an O_TMPFILE
 * file; both refuse what they were not made for. */
Test(gofer_ops, pathof_and_linkfd)
{
	char buf[PATH_MAX], p[256];
	struct stat st;
	int fd;

	cr_assert_eq(gofer_mkdir(c, EXP_RW, "pa", 0755), 0);
	cr_assert_eq(gofer_mkdir(c, EXP_RW, "pa/pb", 0755), 0);
	cr_assert_eq(gofer_open(c, EXP_RW, "pa/pb", O_RDONLY | O_DIRECTORY, 0, &fd, &st), 0);
	cr_assert_eq(gofer_rename(c, EXP_RW, "pa", "pz", 0), 0);
	long l = gofer_pathof(c, EXP_RW, fd, buf, sizeof buf);
	cr_assert_eq(l, 5, "%ld", l);
	cr_assert(!memcmp(buf, "pz/pb", 5));
	/* not beneath that export: ESTALE; removed: ENOENT */
	l = gofer_pathof(c, EXP_RO, fd, buf, sizeof buf);
	cr_assert(l == -ESTALE || l == -EACCES, "%ld", l);
	cr_assert_eq(gofer_unlink(c, EXP_RW, "pz/pb", AT_REMOVEDIR), 0);
	cr_assert_eq(gofer_pathof(c, EXP_RW, fd, buf, sizeof buf), -ENOENT);
	close(fd);
	/* a host directory outside every export */
	fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	l = gofer_pathof(c, EXP_RW, fd, buf, sizeof buf);
	cr_assert(l == -ESTALE || l == -EACCES, "%ld", l);
	close(fd);
	/* an unnamed file gets its name; a named file does not get another */
	cr_assert_eq(gofer_open(c, EXP_RW, "pz", O_TMPFILE | O_RDWR, 0600, &fd, &st), 0);
	cr_assert_eq(st.st_nlink, 0);
	int r = gofer_linkfd(c, EXP_RW, fd, "pz/named");
	if (r == 0) {
		host_path(p, sizeof p, "rw/pz/named");
		cr_assert(lstat(p, &st) == 0 && S_ISREG(st.st_mode));
		cr_assert_eq(gofer_linkfd(c, EXP_RW, fd, "pz/again"), -ENOENT);
	} else {
		cr_assert_eq(r, -ENOENT, "%d (Linux < 6.10 refuses the gofer's flink)", r);
	}
	cr_assert_eq(gofer_linkfd(c, EXP_RO, fd, "x"), -EROFS);
	close(fd);
	cr_assert_eq(gofer_open(c, EXP_RW, "pz", O_RDONLY | O_DIRECTORY, 0, &fd, &st), 0);
	cr_assert_eq(gofer_linkfd(c, EXP_RW, fd, "pz/dir2"), -ENOENT);
	close(fd);
}

/* DIRSTAT pages: every regular file and directory once, with its lstat;
 * hidden names, symlinks, "." and ".." never; a listing longer than one
 * page continues from the reply's next. */
static int dirstat_all(int exp, const char *rel, char names[][32], struct stat *sts, int max)
{
	char *buf = malloc(GOFER_MAX_REP);
	uint64_t pos = 0;
	int n = 0, pages = 0;

	cr_assert(buf);
	for (;;) {
		long len = gofer_dirstat(c, exp, rel, pos, buf, GOFER_MAX_REP);
		cr_assert_geq(len, (long)sizeof(struct gofer_rep_dirstat), "dirstat %s: %ld", rel, len);
		struct gofer_rep_dirstat h;
		memcpy(&h, buf, sizeof h);
		size_t off = sizeof h;
		for (uint32_t i = 0; i < h.n; i++) {
			struct gofer_dirent de;
			memcpy(&de, buf + off, sizeof de);
			cr_assert(de.namelen > 0 && de.namelen < 32 && n < max);
			memcpy(names[n], buf + off + sizeof de, de.namelen);
			names[n][de.namelen] = 0;
			sts[n++] = de.st;
			off += sizeof de + ((de.namelen + 7) & ~7u);
		}
		cr_assert_eq(off, (size_t)len);
		pages++;
		if (h.done)
			break;
		pos = h.next;
	}
	free(buf);
	return n * 1000 + pages;
}

Test(gofer_ops, dirstat)
{
	static char names[512][32];
	static struct stat sts[512];
	char p[256];
	int r, n, saw_file = 0, saw_sub = 0;

	r = dirstat_all(EXP_RW, "", names, sts, 512);
	n = r / 1000;
	for (int i = 0; i < n; i++) {
		cr_assert(strcmp(names[i], "secret") && strcmp(names[i], "link") &&
			  strcmp(names[i], ".") && strcmp(names[i], ".."), "listed %s", names[i]);
		if (!strcmp(names[i], "file")) {
			struct stat h = host_lstat("rw/file");
			saw_file = 1;
			cr_assert_eq(sts[i].st_ino, h.st_ino);
			cr_assert_eq(sts[i].st_size, h.st_size);
		}
		saw_sub |= !strcmp(names[i], "sub") && S_ISDIR(sts[i].st_mode);
	}
	cr_assert(saw_file && saw_sub);
	r = dirstat_all(EXP_RW, "sub", names, sts, 512);
	for (int i = 0; i < r / 1000; i++)
		cr_assert(strcmp(names[i], "deep"), "listed the hidden sub/deep");
	cr_assert_lt(gofer_dirstat(c, EXP_RW, "secret", 0, names, sizeof names), 0);

	/* 300 files: several pages, each name once */
	host_path(p, sizeof p, "rw/many");
	cr_assert(mkdir(p, 0755) == 0);
	for (int i = 0; i < 300; i++) {
		char f[300];
		snprintf(f, sizeof f, "%s/f%03d", p, i);
		int fd = open(f, O_CREAT | O_WRONLY, 0644);
		cr_assert(fd >= 0);
		close(fd);
	}
	r = dirstat_all(EXP_RW, "many", names, sts, 512);
	cr_assert_eq(r / 1000, 300);
	cr_assert_gt(r % 1000, 1, "one page for 300 entries");
	int seen[300] = { 0 };
	for (int i = 0; i < 300; i++) {
		int k = atoi(names[i] + 1);
		cr_assert(k >= 0 && k < 300 && !seen[k]);
		seen[k] = 1;
	}
}
