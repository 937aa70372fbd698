/* statfs, fstatfs. */
#include "t.h"
#include <linux/magic.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>

int main(int argc, char **argv)
{
	t_setup(argc, argv, "statfs");
	struct statfs a, b;
	t_write_file("f", "", 0644);
	CHECK(statfs(".", &a) == 0 && a.f_bsize > 0 && a.f_blocks > 0 && a.f_namelen >= 255, "scratch",
	      "bsize %ld blocks %ld namelen %ld", (long)a.f_bsize, (long)a.f_blocks, (long)a.f_namelen);
	int fd = open("f", O_RDONLY);
	CHECK(fstatfs(fd, &b) == 0 && b.f_type == a.f_type && b.f_bsize == a.f_bsize, "fstatfs_agrees",
	      "type %lx vs %lx", (long)b.f_type, (long)a.f_type);
	close(fd);
	EXPECT_ERR(fstatfs(9999, &b), EBADF, "fstatfs_ebadf");
	EXPECT_ERR(statfs("missing", &a), ENOENT, "enoent");
	EXPECT_ERR(statfs((const char *)1, &a), EFAULT, "efault");
	CHECK(statfs("/proc", &a) == 0 && a.f_type == PROC_SUPER_MAGIC, "proc_magic", "type %lx",
	      (long)a.f_type);
	CHECK(statfs("/usr", &a) == 0 && a.f_bsize > 0, "usr", "%s", strerror(errno));
	/* statfs by path and fstatfs of a held fd name one file system: the
	 * same size and inode count (under moat before issue 7 a cow view's
	 * path said upper + the lower's used blocks, its fd the upper alone) */
	static const char *const paths[] = { "/usr", "/usr/bin/env", "/etc", "/", "." };
	int same = 1;
	char why[256] = "";
	for (size_t i = 0; i < sizeof paths / sizeof *paths; i++) {
		int pfd = open(paths[i], O_RDONLY);
		if (pfd < 0)
			continue;
		if (statfs(paths[i], &a) == 0 && fstatfs(pfd, &b) == 0 &&
		    (a.f_type != b.f_type || a.f_blocks != b.f_blocks || a.f_files != b.f_files ||
		     a.f_bsize != b.f_bsize)) {
			same = 0;
			snprintf(why, sizeof why, "%s: path %llu blocks %llu files, fd %llu %llu", paths[i],
				 (unsigned long long)a.f_blocks, (unsigned long long)a.f_files,
				 (unsigned long long)b.f_blocks, (unsigned long long)b.f_files);
		}
		close(pfd);
	}
	CHECK(same, "fstatfs_same_size_as_path", "%s", why);
	struct statvfs v;
	CHECK(statvfs(".", &v) == 0 && !(v.f_flag & ST_RDONLY), "statvfs_writable_scratch", "flag %lx",
	      (long)v.f_flag);
	return t_done();
}
