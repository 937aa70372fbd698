/* truncate, ftruncate. */
#include "t.h"
#include <signal.h>
#include <sys/resource.h>

int main(int argc, char **argv)
{
	t_setup(argc, argv, "truncate");
	struct stat st;
	char buf[64];

	t_write_file("f", "0123456789", 0644);
	CHECK(truncate("f", 4) == 0 && stat("f", &st) == 0 && st.st_size == 4 &&
		      t_read_file("f", buf, sizeof(buf)) == 4 && !memcmp(buf, "0123", 4),
	      "shrink", "size %ld", (long)st.st_size);
	CHECK(truncate("f", 8) == 0 && t_read_file("f", buf, sizeof(buf)) == 8 &&
		      !memcmp(buf, "0123\0\0\0\0", 8),
	      "grow_zero_filled", "%s", strerror(errno));
	CHECK(truncate("f", 1 << 20) == 0 && stat("f", &st) == 0 && st.st_size == 1 << 20, "grow_sparse",
	      "size %ld", (long)st.st_size);
	int fd = open("f", O_RDWR);
	CHECK(ftruncate(fd, 3) == 0 && fstat(fd, &st) == 0 && st.st_size == 3, "ftruncate", "size %ld",
	      (long)st.st_size);
	EXPECT_ERR(ftruncate(fd, -1), EINVAL, "ftruncate_negative");
	close(fd);
	fd = open("f", O_RDONLY);
	EXPECT_ERR(ftruncate(fd, 0), EINVAL, "ftruncate_rdonly");
	close(fd);
	EXPECT_ERR(ftruncate(9999, 0), EBADF, "ftruncate_ebadf");
	EXPECT_ERR(truncate("f", -1), EINVAL, "negative");
	EXPECT_ERR(truncate("missing", 0), ENOENT, "enoent");
	mkdir("d", 0755);
	EXPECT_ERR(truncate("d", 0), EISDIR, "eisdir");
	symlink("f", "lnk");
	CHECK(truncate("lnk", 0) == 0 && stat("f", &st) == 0 && st.st_size == 0, "follows_symlink", "%s",
	      strerror(errno));
	/* Writes after truncation land at the file offset, leaving a hole. */
	fd = open("f", O_RDWR);
	lseek(fd, 5, SEEK_SET);
	write(fd, "x", 1);
	CHECK(fstat(fd, &st) == 0 && st.st_size == 6, "write_past_end", "size %ld", (long)st.st_size);
	close(fd);
	if (geteuid() != 0) {
		chmod("f", 0444);
		EXPECT_ERR(truncate("f", 0), EACCES, "eacces_readonly_file");
	} else
		t_ok("eacces_readonly_file");
	/* past RLIMIT_FSIZE: EFBIG (SIGXFSZ ignored here; LTP truncate03) */
	{
		struct rlimit old, rl = { 4096, 4096 };
		signal(SIGXFSZ, SIG_IGN);
		getrlimit(RLIMIT_FSIZE, &old);
		int zf = open("fsz", O_CREAT | O_WRONLY, 0644);
		close(zf);
		setrlimit(RLIMIT_FSIZE, &rl);
		EXPECT_ERR(truncate("fsz", 8192), EFBIG, "truncate_past_rlimit_fsize_efbig");
		CHECK(truncate("fsz", 4096) == 0, "truncate_at_rlimit_fsize", "%s", strerror(errno));
		setrlimit(RLIMIT_FSIZE, &old);
		signal(SIGXFSZ, SIG_DFL);
		unlink("fsz");
	}
	return t_done();
}
