/* /dev: null, zero, full, random, urandom, fd/N, stdin/stdout/stderr. */
#include <sys/sendfile.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>

#include "t.h"
#include <sys/random.h>

int main(int argc, char **argv)
{
	t_setup(argc, argv, "dev");
	char buf[4096];
	struct stat st;
	int fd;

	fd = open("/dev/null", O_RDWR);
	CHECK(fd >= 0 && read(fd, buf, sizeof(buf)) == 0 && write(fd, buf, sizeof(buf)) == sizeof(buf),
	      "null", "%s", strerror(errno));
	close(fd);
	CHECK(stat("/dev/null", &st) == 0 && S_ISCHR(st.st_mode) && major(st.st_rdev) == 1 &&
		      minor(st.st_rdev) == 3 && (st.st_mode & 0666) == 0666,
	      "null_stat", "mode %o rdev %d:%d", st.st_mode, major(st.st_rdev), minor(st.st_rdev));
	fd = open("/dev/zero", O_RDONLY);
	memset(buf, 1, sizeof(buf));
	int zeros = fd >= 0 && read(fd, buf, sizeof(buf)) == sizeof(buf);
	for (size_t i = 0; zeros && i < sizeof(buf); i++)
		zeros = buf[i] == 0;
	CHECK(zeros, "zero", "not zeros");
	close(fd);
	CHECK(stat("/dev/zero", &st) == 0 && S_ISCHR(st.st_mode) && major(st.st_rdev) == 1 &&
		      minor(st.st_rdev) == 5,
	      "zero_stat", "rdev %d:%d", major(st.st_rdev), minor(st.st_rdev));
	fd = open("/dev/full", O_RDWR);
	EXPECT_ERR(write(fd, "x", 1), ENOSPC, "full_write_enospc");
	CHECK(read(fd, buf, 16) == 16 && buf[0] == 0, "full_reads_zeros", "%s", strerror(errno));
	close(fd);
	const char *rnd[] = {"/dev/urandom", "/dev/random"};
	for (int k = 0; k < 2; k++) {
		unsigned char a[64] = {0}, b[64] = {0};
		fd = open(rnd[k], O_RDONLY);
		int ok = fd >= 0 && read(fd, a, sizeof(a)) == sizeof(a) && read(fd, b, sizeof(b)) == sizeof(b) &&
			 memcmp(a, b, sizeof(a)) != 0;
		CHECK(ok, k ? "random" : "urandom", "%s", strerror(errno));
		close(fd);
	}
	unsigned char g[32];
	CHECK(getrandom(g, sizeof(g), 0) == sizeof(g), "getrandom", "%s", strerror(errno));

	/* /dev/fd/N reopens an open file. */
	t_write_file("f", "through-dev-fd", 0644);
	fd = open("f", O_RDONLY);
	char path[64];
	snprintf(path, sizeof(path), "/dev/fd/%d", fd);
	CHECK(t_read_file(path, buf, sizeof(buf)) == 14 && !strcmp(buf, "through-dev-fd"), "dev_fd_n", "%s",
	      strerror(errno));
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	CHECK(t_read_file(path, buf, sizeof(buf)) == 14, "proc_self_fd_n", "%s", strerror(errno));
	close(fd);
	EXPECT_ERR(open("/dev/fd/999", O_RDONLY), ENOENT, "dev_fd_closed");
	/* Pipes reopened through /dev/fd. */
	int p[2];
	pipe(p);
	snprintf(path, sizeof(path), "/dev/fd/%d", p[1]);
	int w = open(path, O_WRONLY);
	CHECK(w >= 0 && write(w, "P", 1) == 1 && read(p[0], buf, 1) == 1 && buf[0] == 'P', "dev_fd_pipe",
	      "%s", strerror(errno));
	if (w >= 0)
		close(w);
	close(p[0]);
	close(p[1]);

	ssize_t n = readlink("/dev/stdin", buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = 0;
	CHECK(n > 0 && !strcmp(buf, "/proc/self/fd/0"), "dev_stdin_link", "'%s'", buf);
	n = readlink("/dev/stderr", buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = 0;
	CHECK(n > 0 && !strcmp(buf, "/proc/self/fd/2"), "dev_stderr_link", "'%s'", buf);
	n = readlink("/dev/fd", buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = 0;
	CHECK(n > 0 && !strcmp(buf, "/proc/self/fd"), "dev_fd_link", "'%s'", buf);
	fd = open("/dev/stdout", O_WRONLY);
	CHECK(fd >= 0, "open_dev_stdout", "%s", strerror(errno));
	if (fd >= 0)
		close(fd);
	EXPECT_ERR(open("/dev/nonexistent-device", O_RDONLY), ENOENT, "enoent");
	CHECK(stat("/dev", &st) == 0 && S_ISDIR(st.st_mode), "dev_is_dir", "%s", strerror(errno));
	/* a device node root makes (CAP_MKNOD): its type and number; the memory
	 * devices work as /dev's do; user.* attributes only on files and
	 * directories (EPERM); without the capability EPERM */
	if (geteuid() == 0) {
		struct stat dst;
		char db[8];
		EXPECT_OK(mknod("mynull", S_IFCHR | 0666, makedev(1, 3)), "mknod_chr");
		CHECK(stat("mynull", &dst) == 0 && S_ISCHR(dst.st_mode) && dst.st_rdev == makedev(1, 3) &&
		      (dst.st_mode & 0777) == (0666 & ~022), "mknod_chr_stat", "%o %lx", dst.st_mode,
		      (unsigned long)dst.st_rdev);
		int dfd = open("mynull", O_RDWR);
		CHECK(dfd >= 0 && write(dfd, "x", 1) == 1 && read(dfd, db, sizeof db) == 0, "mknod_null_works",
		      "%s", strerror(errno));
		if (dfd >= 0)
			close(dfd);
		EXPECT_ERR(setxattr("mynull", "user.x", "1", 1, 0), EPERM, "mknod_chr_no_user_xattr");
		/* a device node is not a regular file: truncate is EINVAL, O_TRUNC
		 * is ignored, ftruncate EINVAL, fallocate ENODEV, copy_file_range
		 * into it EINVAL; sendfile and splice into /dev/null discard; times
		 * and hard links are the node's */
		EXPECT_ERR(truncate("mynull", 4096), EINVAL, "mknod_chr_truncate_einval");
		dfd = open("mynull", O_WRONLY | O_TRUNC);
		CHECK(dfd >= 0 && write(dfd, "abc", 3) == 3, "mknod_chr_o_trunc", "%s", strerror(errno));
		EXPECT_ERR(ftruncate(dfd, 4096), EINVAL, "mknod_chr_ftruncate_einval");
		EXPECT_ERR(fallocate(dfd, 0, 0, 4096), ENODEV, "mknod_chr_fallocate_enodev");
		int src = open("cfr_src", O_RDWR | O_CREAT | O_TRUNC, 0644);
		CHECK(src >= 0 && write(src, "0123456789", 10) == 10, "mknod_src", "%s", strerror(errno));
		loff_t off = 0;
		EXPECT_ERR(copy_file_range(src, &off, dfd, NULL, 10, 0), EINVAL, "mknod_chr_copy_file_range_einval");
		off_t soff = 0;
		CHECK(sendfile(dfd, src, &soff, 10) == 10, "mknod_chr_sendfile", "%s", strerror(errno));
		int pp[2];
		if (pipe(pp) == 0) {
			CHECK(write(pp[1], "xyz", 3) == 3 && splice(pp[0], NULL, dfd, NULL, 3, 0) == 3,
			      "mknod_chr_splice", "%s", strerror(errno));
			close(pp[0]);
			close(pp[1]);
		}
		if (src >= 0)
			close(src);
		if (dfd >= 0)
			close(dfd);
		struct timespec ts[2] = { { 1000000000, 0 }, { 1000000000, 0 } };
		CHECK(utimensat(AT_FDCWD, "mynull", ts, 0) == 0 && stat("mynull", &dst) == 0 &&
		      dst.st_mtime == 1000000000 && S_ISCHR(dst.st_mode) && dst.st_size == 0,
		      "mknod_chr_utimes", "%s", strerror(errno));
		CHECK(link("mynull", "mynull2") == 0 && stat("mynull2", &dst) == 0 && S_ISCHR(dst.st_mode) &&
		      dst.st_rdev == makedev(1, 3) && dst.st_nlink == 2, "mknod_chr_link", "%s", strerror(errno));
		unlink("mynull2");
		unlink("cfr_src");
		char xl[256];
		EXPECT_ERR(getxattr("mynull", "user.moat.vdev", xl, sizeof xl), ENODATA, "mknod_chr_getxattr_enodata");
		CHECK(listxattr("mynull", xl, sizeof xl) == 0, "mknod_chr_listxattr_empty", "%s",
		      strerror(errno));
		CHECK(chmod("mynull", 0755) == 0, "mknod_chr_chmod", "%s", strerror(errno));
		char *const argv0[] = { "mynull", NULL };
		fflush(stdout);
		pid_t xp = fork();
		if (xp == 0) {
			execv("./mynull", argv0);
			_exit(errno == EACCES ? 0 : 1);
		}
		int xst = -1;
		waitpid(xp, &xst, 0);
		CHECK(WIFEXITED(xst) && WEXITSTATUS(xst) == 0, "mknod_chr_exec_eacces", "status %#x", xst);
		EXPECT_OK(mknod("myblk", S_IFBLK | 0600, makedev(7, 99)), "mknod_blk");
		CHECK(lstat("myblk", &dst) == 0 && S_ISBLK(dst.st_mode) && dst.st_rdev == makedev(7, 99),
		      "mknod_blk_stat", "%o", dst.st_mode);
		EXPECT_ERR(truncate("myblk", 4096), EINVAL, "mknod_blk_truncate_einval");
		EXPECT_OK(unlink("myblk"), "mknod_blk_unlink");
		EXPECT_OK(unlink("mynull"), "mknod_chr_unlink");
	} else {
		EXPECT_ERR(mknod("mynull", S_IFCHR | 0666, makedev(1, 3)), EPERM, "mknod_chr_user_eperm");
	}
	return t_done();
}
