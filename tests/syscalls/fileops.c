/* File semantics a build or a package manager relies on: fallocate, fsync,
 * fifo and socket nodes, hard links that stay links, O_APPEND/O_TRUNC/
 * O_EXCL/O_NOFOLLOW/O_DIRECTORY, RENAME_EXCHANGE of a file and a directory,
 * ENAMETOOLONG and ELOOP, and a getdents64 scan that stays stable while
 * another fd adds and removes entries. */
#include "t.h"
#include <linux/falloc.h>
#include <linux/fs.h>
#include <sys/socket.h>
#include <sys/un.h>

struct d64 {
	uint64_t ino;
	int64_t off;
	unsigned short reclen;
	unsigned char type;
	char name[];
};

int main(int argc, char **argv)
{
	t_setup(argc, argv, "fileops");
	struct stat st, st2;
	char buf[512];

	/* fallocate */
	int fd = open("fa", O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	CHECK(fallocate(fd, 0, 0, 65536) == 0 && fstat(fd, &st) == 0 && st.st_size == 65536,
	      "fallocate_extends", "%s size %ld", strerror(errno), (long)st.st_size);
	CHECK(fallocate(fd, FALLOC_FL_KEEP_SIZE, 65536, 65536) == 0 && fstat(fd, &st) == 0 &&
		      st.st_size == 65536,
	      "fallocate_keep_size", "%s size %ld", strerror(errno), (long)st.st_size);
	if (write(fd, "abcdefgh", 8) != 8)
		DIE("write");
	{
		errno = 0;
		int r = fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, 4096);
		int ok = r == 0 ? pread(fd, buf, 8, 0) == 8 && !memcmp(buf, "\0\0\0\0\0\0\0\0", 8)
				: errno == EOPNOTSUPP;
		CHECK(ok, "fallocate_punch_hole", "r %d %s", r, strerror(errno));
	}
	EXPECT_ERR(fallocate(fd, FALLOC_FL_PUNCH_HOLE, 0, 4096), EOPNOTSUPP, "fallocate_punch_needs_keep");
	EXPECT_ERR(fallocate(fd, 0, 0, -1), EINVAL, "fallocate_einval");
	close(fd);
	fd = open("fa", O_RDONLY | O_CLOEXEC);
	EXPECT_ERR(fallocate(fd, 0, 0, 4096), EBADF, "fallocate_rdonly_ebadf");
	close(fd);

	/* fsync, fdatasync, syncfs */
	fd = open("fa", O_RDWR | O_CLOEXEC);
	CHECK(fsync(fd) == 0 && fdatasync(fd) == 0 && syncfs(fd) == 0, "fsync_file", "%s", strerror(errno));
	close(fd);
	fd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CHECK(fsync(fd) == 0, "fsync_dir", "%s", strerror(errno));
	close(fd);
	int pp[2];
	if (pipe(pp) != 0)
		DIE("pipe");
	EXPECT_ERR(fsync(pp[0]), EINVAL, "fsync_pipe_einval");
	close(pp[0]);
	close(pp[1]);

	/* fifos */
	umask(027);
	CHECK(mkfifo("ff", 0666) == 0 && lstat("ff", &st) == 0 && S_ISFIFO(st.st_mode) &&
		      (st.st_mode & 0777) == 0640,
	      "mkfifo_mode_umask", "%s mode %o", strerror(errno), st.st_mode & 0777);
	umask(022);
	EXPECT_ERR(mkfifo("ff", 0644), EEXIST, "mkfifo_eexist");
	EXPECT_ERR(open("ff", O_WRONLY | O_NONBLOCK), ENXIO, "fifo_open_writer_no_reader_enxio");
	{
		int rd = open("ff", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		int wr = open("ff", O_WRONLY | O_NONBLOCK | O_CLOEXEC);
		CHECK(rd >= 0 && wr >= 0 && write(wr, "pipe", 4) == 4 && read(rd, buf, 8) == 4 &&
			      !memcmp(buf, "pipe", 4),
		      "fifo_through", "%s", strerror(errno));
		close(rd);
		close(wr);
	}
	CHECK(mknod("ff2", S_IFIFO | 0600, 0) == 0 && lstat("ff2", &st) == 0 && S_ISFIFO(st.st_mode),
	      "mknod_fifo", "%s", strerror(errno));
	/* set-id bits of the mode stay (virtual on host files: LTP mknod05) */
	CHECK(mknod("ff3", S_IFIFO | S_ISGID | S_ISUID | 0640, 0) == 0 && lstat("ff3", &st) == 0 &&
	      (st.st_mode & 07777) == ((S_ISGID | S_ISUID | 0640) & ~022),
	      "mknod_fifo_setid", "%s mode %o", strerror(errno), st.st_mode & 07777);
	unlink("ff3");
	EXPECT_ERR(mkfifo("nodir/ff", 0600), ENOENT, "mkfifo_enoent");
	EXPECT_ERR(mkfifo("fa/ff", 0600), ENOTDIR, "mkfifo_enotdir");

	/* socket nodes */
	CHECK(mknod("sn", S_IFSOCK | 0600, 0) == 0 && lstat("sn", &st) == 0 && S_ISSOCK(st.st_mode),
	      "mknod_socket", "%s", strerror(errno));
	{
		int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		struct sockaddr_un a = { .sun_family = AF_UNIX };
		snprintf(a.sun_path, sizeof a.sun_path, "sn");
		EXPECT_ERR(connect(s, (struct sockaddr *)&a, sizeof a), ECONNREFUSED, "mknod_socket_refused");
		close(s);
		s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		snprintf(a.sun_path, sizeof a.sun_path, "bound");
		CHECK(bind(s, (struct sockaddr *)&a, sizeof a) == 0 && lstat("bound", &st) == 0 &&
			      S_ISSOCK(st.st_mode),
		      "bind_makes_socket_node", "%s", strerror(errno));
		int s2 = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		EXPECT_ERR(bind(s2, (struct sockaddr *)&a, sizeof a), EADDRINUSE, "bind_existing_eaddrinuse");
		close(s2);
		close(s);
		CHECK(unlink("bound") == 0, "unlink_socket_node", "%s", strerror(errno));
	}
	CHECK(mknod("rn", S_IFREG | 0600, 0) == 0 && lstat("rn", &st) == 0 && S_ISREG(st.st_mode) &&
		      st.st_size == 0,
	      "mknod_regular", "%s", strerror(errno));

	/* hard links stay links */
	t_write_file("h1", "one", 0644);
	CHECK(link("h1", "h2") == 0 && stat("h1", &st) == 0 && stat("h2", &st2) == 0 &&
		      st.st_ino == st2.st_ino && st.st_nlink == 2 && st2.st_nlink == 2,
	      "link_same_inode", "%s nlink %ld", strerror(errno), (long)st.st_nlink);
	fd = open("h2", O_WRONLY | O_APPEND | O_CLOEXEC);
	CHECK(write(fd, "+two", 4) == 4 && t_read_file("h1", buf, sizeof buf) == 7 && !strcmp(buf, "one+two"),
	      "link_shares_data", "'%s'", buf);
	close(fd);
	CHECK(chmod("h2", 0600) == 0 && stat("h1", &st) == 0 && (st.st_mode & 0777) == 0600,
	      "link_shares_mode", "mode %o", st.st_mode & 0777);
	CHECK(rename("h1", "h3") == 0 && stat("h3", &st) == 0 && st.st_ino == st2.st_ino && st.st_nlink == 2,
	      "link_survives_rename", "%s", strerror(errno));
	CHECK(unlink("h3") == 0 && stat("h2", &st) == 0 && st.st_nlink == 1, "link_unlink_one",
	      "nlink %ld", (long)st.st_nlink);
	EXPECT_ERR(link("h2", "h2"), EEXIST, "link_eexist");
	EXPECT_ERR(link("missing", "h4"), ENOENT, "link_enoent");
	mkdir("ldir", 0755);
	EXPECT_ERR(link("ldir", "ldir2"), EPERM, "link_dir_eperm");

	/* open flags */
	t_write_file("of", "0123456789", 0644);
	fd = open("of", O_WRONLY | O_APPEND | O_CLOEXEC);
	lseek(fd, 0, SEEK_SET);
	CHECK(write(fd, "AB", 2) == 2 && t_read_file("of", buf, sizeof buf) == 12 && !strcmp(buf, "0123456789AB"),
	      "o_append_writes_at_end", "'%s'", buf);
	close(fd);
	fd = open("of", O_WRONLY | O_TRUNC | O_CLOEXEC);
	CHECK(fd >= 0 && fstat(fd, &st) == 0 && st.st_size == 0, "o_trunc", "%s", strerror(errno));
	close(fd);
	symlink("of", "ol");
	symlink("nowhere", "dangling");
	EXPECT_ERR(open("ol", O_RDONLY | O_NOFOLLOW), ELOOP, "o_nofollow_eloop");
	EXPECT_ERR(open("ol", O_CREAT | O_EXCL | O_WRONLY, 0644), EEXIST, "o_excl_symlink_eexist");
	EXPECT_ERR(open("dangling", O_CREAT | O_EXCL | O_WRONLY, 0644), EEXIST, "o_excl_dangling_eexist");
	CHECK(access("nowhere", F_OK) != 0, "o_excl_dangling_not_created", "created");
	EXPECT_ERR(open("of", O_RDONLY | O_DIRECTORY), ENOTDIR, "o_directory_enotdir");
	EXPECT_ERR(open("ldir", O_WRONLY), EISDIR, "open_dir_wronly_eisdir");
	EXPECT_ERR(open("of/x", O_RDONLY), ENOTDIR, "open_through_file_enotdir");

	/* RENAME_EXCHANGE of a file and a directory, NOREPLACE */
	mkdir("xd", 0755);
	t_write_file("xd/in", "in", 0644);
	t_write_file("xf", "xf", 0644);
	long r = syscall(SYS_renameat2, AT_FDCWD, "xd", AT_FDCWD, "xf", RENAME_EXCHANGE);
	CHECK(r == 0 && lstat("xf", &st) == 0 && S_ISDIR(st.st_mode) && access("xf/in", F_OK) == 0 &&
		      lstat("xd", &st2) == 0 && S_ISREG(st2.st_mode),
	      "exchange_file_and_dir", "r %ld %s", r, strerror(errno));
	errno = 0;
	r = syscall(SYS_renameat2, AT_FDCWD, "xf", AT_FDCWD, "nothere", RENAME_EXCHANGE);
	CHECK(r == -1 && errno == ENOENT, "exchange_missing_enoent", "r %ld %s", r, strerror(errno));
	errno = 0;
	r = syscall(SYS_renameat2, AT_FDCWD, "xf", AT_FDCWD, "xd", RENAME_EXCHANGE | RENAME_NOREPLACE);
	CHECK(r == -1 && errno == EINVAL, "exchange_noreplace_einval", "r %ld %s", r, strerror(errno));
	errno = 0;
	r = syscall(SYS_renameat2, AT_FDCWD, "xd", AT_FDCWD, "xf", RENAME_NOREPLACE);
	CHECK(r == -1 && errno == EEXIST, "noreplace_eexist", "r %ld %s", r, strerror(errno));
	mkdir("full", 0755);
	t_write_file("full/f", "", 0644);
	mkdir("empty", 0755);
	errno = 0;
	r = rename("empty", "full");
	CHECK(r == -1 && (errno == ENOTEMPTY || errno == EEXIST), "rename_onto_full_dir", "r %ld %s", r,
	      strerror(errno));
	EXPECT_ERR(rmdir("full"), ENOTEMPTY, "rmdir_enotempty");

	/* ENAMETOOLONG, ELOOP */
	char longname[300];
	memset(longname, 'n', 256);
	longname[256] = 0;
	EXPECT_ERR(open(longname, O_CREAT | O_WRONLY, 0644), ENAMETOOLONG, "name_256_enametoolong");
	EXPECT_ERR(mkdir(longname, 0755), ENAMETOOLONG, "mkdir_enametoolong");
	EXPECT_ERR(rename("of", longname), ENAMETOOLONG, "rename_enametoolong");
	EXPECT_ERR(symlink("of", longname), ENAMETOOLONG, "symlink_enametoolong");
	longname[255] = 0;
	fd = open(longname, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
	CHECK(fd >= 0, "name_255_ok", "%s", strerror(errno));
	close(fd);
	unlink(longname);
	symlink("loop2", "loop1");
	symlink("loop1", "loop2");
	EXPECT_ERR(open("loop1", O_RDONLY), ELOOP, "symlink_loop_eloop");
	EXPECT_ERR(stat("loop1/x", &st), ELOOP, "symlink_loop_middle_eloop");
	CHECK(lstat("loop1", &st) == 0 && S_ISLNK(st.st_mode), "lstat_loop_ok", "%s", strerror(errno));

	/* getdents64 stable under concurrent changes by another fd */
	mkdir("gd", 0755);
	for (int i = 0; i < 300; i++) {
		snprintf(buf, sizeof buf, "gd/keep_%03d", i);
		t_write_file(buf, "", 0644);
		snprintf(buf, sizeof buf, "gd/gone_%03d", i);
		t_write_file(buf, "", 0644);
	}
	int dfd = open("gd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int other = open("gd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	static unsigned char seen[300], dup;
	char dbuf[1024];
	long n;
	int round = 0, bad = 0;
	while ((n = syscall(SYS_getdents64, dfd, dbuf, sizeof dbuf)) > 0) {
		for (long off = 0; off < n;) {
			struct d64 *d = (struct d64 *)(dbuf + off);
			off += d->reclen;
			int k;
			if (sscanf(d->name, "keep_%d", &k) == 1 && k >= 0 && k < 300) {
				if (seen[k]++)
					dup = 1;
			}
		}
		/* between reads, another fd adds and removes entries */
		for (int j = 0; j < 5; j++, round++) {
			if (round < 300) {
				snprintf(buf, sizeof buf, "gone_%03d", round);
				unlinkat(other, buf, 0);
			}
			snprintf(buf, sizeof buf, "new_%03d", round);
			int nf = openat(other, buf, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
			if (nf >= 0)
				close(nf);
		}
	}
	for (int i = 0; i < 300; i++)
		if (seen[i] != 1)
			bad++;
	CHECK(n == 0 && !dup && !bad, "getdents_stable", "n %ld dup %d missing/repeated %d", n, dup, bad);
	close(dfd);
	close(other);

	return t_done();
}
