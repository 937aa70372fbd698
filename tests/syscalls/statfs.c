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
	struct statvfs v;
	CHECK(statvfs(".", &v) == 0 && !(v.f_flag & ST_RDONLY), "statvfs_writable_scratch", "flag %lx",
	      (long)v.f_flag);
	return t_done();
}
