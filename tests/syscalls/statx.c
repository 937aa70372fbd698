/* statx. */
#include "t.h"

int main(int argc, char **argv)
{
	t_setup(argc, argv, "statx");
	struct statx sx;
	struct stat st;

	t_write_file("f", "hello", 0604);
	symlink("f", "lnk");
	if (statx(AT_FDCWD, "f", 0, STATX_BASIC_STATS, &sx) != 0 && errno == ENOSYS) {
		printf("skip statx: ENOSYS\n");
		t_done();
		return T_SKIP;
	}
	stat("f", &st);
	CHECK(statx(AT_FDCWD, "f", 0, STATX_BASIC_STATS, &sx) == 0 &&
		      (sx.stx_mask & STATX_BASIC_STATS) == STATX_BASIC_STATS && sx.stx_size == 5 &&
		      S_ISREG(sx.stx_mode) && (sx.stx_mode & 07777) == 0604,
	      "basic", "mask %x size %llu mode %o", sx.stx_mask, (unsigned long long)sx.stx_size,
	      sx.stx_mode);
	CHECK(sx.stx_ino == st.st_ino && sx.stx_nlink == st.st_nlink && sx.stx_uid == st.st_uid &&
		      makedev(sx.stx_dev_major, sx.stx_dev_minor) == st.st_dev,
	      "agrees_with_stat", "ino %llu vs %llu", (unsigned long long)sx.stx_ino,
	      (unsigned long long)st.st_ino);
	CHECK(sx.stx_mtime.tv_sec == st.st_mtim.tv_sec && sx.stx_mtime.tv_nsec == st.st_mtim.tv_nsec,
	      "mtime_agrees", "differs");
	CHECK(statx(AT_FDCWD, "lnk", AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS, &sx) == 0 &&
		      S_ISLNK(sx.stx_mode),
	      "nofollow", "mode %o", sx.stx_mode);
	CHECK(statx(AT_FDCWD, "lnk", 0, STATX_BASIC_STATS, &sx) == 0 && S_ISREG(sx.stx_mode), "follow",
	      "mode %o", sx.stx_mode);
	int fd = open("f", O_RDONLY);
	CHECK(statx(fd, "", AT_EMPTY_PATH, STATX_SIZE, &sx) == 0 && sx.stx_size == 5, "empty_path_fd",
	      "%s", strerror(errno));
	close(fd);
	CHECK(statx(AT_FDCWD, "f", AT_STATX_DONT_SYNC, STATX_ALL, &sx) == 0, "statx_all", "%s",
	      strerror(errno));
	EXPECT_ERR(statx(AT_FDCWD, "missing", 0, STATX_BASIC_STATS, &sx), ENOENT, "enoent");
	EXPECT_ERR(statx(AT_FDCWD, "f", 0x40000000, STATX_BASIC_STATS, &sx), EINVAL, "bad_flags");
	EXPECT_ERR(statx(AT_FDCWD, "f", 0, STATX__RESERVED, &sx), EINVAL, "reserved_mask");
	EXPECT_ERR(statx(AT_FDCWD, "f", AT_STATX_FORCE_SYNC | AT_STATX_DONT_SYNC, STATX_BASIC_STATS, &sx),
		   EINVAL, "both_sync_flags");
	EXPECT_ERR(statx(AT_FDCWD, "f", 0, STATX_BASIC_STATS, (struct statx *)1), EFAULT, "efault");
	mkdir("d", 0700);
	CHECK(statx(AT_FDCWD, "d", 0, STATX_TYPE | STATX_MODE, &sx) == 0 && S_ISDIR(sx.stx_mode) &&
		      (sx.stx_mode & 07777) == 0700,
	      "directory", "mode %o", sx.stx_mode);
	/* the mount: statx's mnt_id is a line of mountinfo whose major:minor is
	 * the file's device (df, findmnt and LTP statx01 match them so), and
	 * the fd's fdinfo names the same mount */
	{
		char line[4096];
		int found = 0, fdmid = -1;
		CHECK(statx(AT_FDCWD, "f", 0, STATX_BASIC_STATS | STATX_MNT_ID, &sx) == 0 &&
		      (sx.stx_mask & STATX_MNT_ID), "mnt_id_mask", "mask %x", sx.stx_mask);
		FILE *mi = fopen("/proc/self/mountinfo", "r");
		while (mi && fgets(line, sizeof line, mi)) {
			unsigned long long id;
			unsigned ma, mi_;
			if (sscanf(line, "%llu %*d %u:%u", &id, &ma, &mi_) == 3 && id == sx.stx_mnt_id &&
			    ma == sx.stx_dev_major && mi_ == sx.stx_dev_minor)
				found = 1;
		}
		if (mi)
			fclose(mi);
		CHECK(found, "mnt_id_in_mountinfo", "mnt_id %llu dev %u:%u", (unsigned long long)sx.stx_mnt_id,
		      sx.stx_dev_major, sx.stx_dev_minor);
		int ffd = open("f", O_RDONLY);
		char fi[64];
		snprintf(fi, sizeof fi, "/proc/self/fdinfo/%d", ffd);
		FILE *fp = fopen(fi, "r");
		while (fp && fgets(line, sizeof line, fp))
			if (sscanf(line, "mnt_id: %d", &fdmid) == 1)
				break;
		if (fp)
			fclose(fp);
		close(ffd);
		CHECK(fdmid >= 0 && (unsigned long long)fdmid == sx.stx_mnt_id, "fdinfo_mnt_id", "%d vs %llu",
		      fdmid, (unsigned long long)sx.stx_mnt_id);
	}
	return t_done();
}
