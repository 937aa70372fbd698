/* name_to_handle_at / open_by_handle_at: a handle names a file, opens it
 * again (root: CAP_DAC_READ_SEARCH; others EPERM), reports the size it needs
 * (EOVERFLOW), and goes stale when the file is gone (ESTALE). */
#include "t.h"

struct fh { unsigned int bytes; int type; unsigned char h[128]; };

int main(int argc, char **argv)
{
	t_setup(argc, argv, "handle");
	struct fh fh;
	int mid = -1, fd;
	char buf[64];

	t_write_file("f", "handled", 0644);
	mkdir("d", 0755);
	symlink("f", "l");
	memset(&fh, 0, sizeof fh);
	fh.bytes = 0;
	EXPECT_ERR(syscall(SYS_name_to_handle_at, AT_FDCWD, "f", &fh, &mid, 0), EOVERFLOW, "size_probe_eoverflow");
	CHECK(fh.bytes > 0 && fh.bytes <= 128, "size_probe_bytes", "%u", fh.bytes);
	EXPECT_ERR(syscall(SYS_name_to_handle_at, AT_FDCWD, "f", &fh, &mid, 0x4000), EINVAL, "bad_flags_einval");
	EXPECT_ERR(syscall(SYS_name_to_handle_at, AT_FDCWD, "missing", &fh, &mid, 0), ENOENT, "missing_enoent");
	/* AT_HANDLE_FID (0x200) identifies any file, /proc's too; a
	 * connectable handle (AT_HANDLE_CONNECTABLE, 0x002, Linux 6.13) is
	 * neither a FID nor of an fd (LTP name_to_handle_at03) */
	fh.bytes = 128;
	EXPECT_OK(syscall(SYS_name_to_handle_at, AT_FDCWD, "/proc/filesystems", &fh, &mid, 0x200),
		  "fid_of_proc_file");
	fh.bytes = 128;
	EXPECT_ERR(syscall(SYS_name_to_handle_at, AT_FDCWD, "f", &fh, &mid, 0x202), EINVAL,
		   "connectable_fid_einval");
	fh.bytes = 128;
	EXPECT_ERR(syscall(SYS_name_to_handle_at, AT_FDCWD, "", &fh, &mid, 0x1002), EINVAL,
		   "connectable_empty_path_einval");
	fh.bytes = 128;
	errno = 0;
	long cr = syscall(SYS_name_to_handle_at, AT_FDCWD, "f", &fh, &mid, 0x002);
	CHECK(cr == 0 || errno == EOPNOTSUPP, "connectable_handle", "%s", strerror(errno));
	fh.bytes = 128;
	EXPECT_OK(syscall(SYS_name_to_handle_at, AT_FDCWD, "f", &fh, &mid, 0), "handle_of_file");
	if (geteuid() == 0) {
		fd = (int)syscall(SYS_open_by_handle_at, AT_FDCWD, &fh, O_RDONLY);
		CHECK(fd >= 0 && read(fd, buf, sizeof buf) == 7 && !memcmp(buf, "handled", 7), "open_by_handle",
		      "%s", strerror(errno));
		if (fd >= 0)
			close(fd);
		EXPECT_ERR(syscall(SYS_open_by_handle_at, 0, &fh, O_RDONLY), ESTALE, "other_fs_estale");
		struct fh bad = fh;
		bad.h[0] ^= 0x55;
		EXPECT_ERR(syscall(SYS_open_by_handle_at, AT_FDCWD, &bad, O_RDONLY), ESTALE, "forged_estale");
		bad = fh;
		bad.bytes = 0;
		EXPECT_ERR(syscall(SYS_open_by_handle_at, AT_FDCWD, &bad, O_RDONLY), EINVAL, "zero_bytes_einval");
		struct fh dh = { .bytes = 128 }, lh = { .bytes = 128 };
		EXPECT_OK(syscall(SYS_name_to_handle_at, AT_FDCWD, "d", &dh, &mid, 0), "handle_of_dir");
		fd = (int)syscall(SYS_open_by_handle_at, AT_FDCWD, &dh, O_RDONLY | O_DIRECTORY);
		CHECK(fd >= 0, "open_dir_by_handle", "%s", strerror(errno));
		if (fd >= 0)
			close(fd);
		EXPECT_OK(syscall(SYS_name_to_handle_at, AT_FDCWD, "l", &lh, &mid, 0), "handle_of_symlink");
		EXPECT_ERR(syscall(SYS_open_by_handle_at, AT_FDCWD, &lh, O_RDONLY), ELOOP, "symlink_eloop");
		unlink("f");
		EXPECT_ERR(syscall(SYS_open_by_handle_at, AT_FDCWD, &fh, O_RDONLY), ESTALE, "unlinked_estale");
	} else {
		EXPECT_ERR(syscall(SYS_open_by_handle_at, AT_FDCWD, &fh, O_RDONLY), EPERM, "user_eperm");
	}
	return t_done();
}
