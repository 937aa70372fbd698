/* mount, umount2: a tmpfs, filled, remounted read-only (EROFS for every
 * kind of write, as the Linux Test Project's read-only file systems), back
 * to read-write, bound elsewhere and remounted read-only there, unmounted;
 * /proc/self/mounts and statfs follow. As a user: EPERM. Natively the test
 * first enters a mount namespace of its own (nothing is left mounted on the
 * host if it fails half-way). */

#include "t.h"

#include <sched.h>
#include <sys/mount.h>
#include <sys/statvfs.h>
#include <sys/time.h>
#include <sys/xattr.h>

/* the /proc/self/mounts line of mount point abs: its options field */
static int mount_opts(const char *abs, char *opts, size_t len)
{
	char line[8192], src[4096], mp[4096], type[256], o[1024];
	FILE *f = fopen("/proc/self/mounts", "r");
	int found = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "%4095s %4095s %255s %1023s", src, mp, type, o) == 4 &&
		    !strcmp(mp, abs)) {
			snprintf(opts, len, "%s", o);
			found = 1;   /* the last one: the topmost */
		}
	fclose(f);
	return found;
}

static int is_ro(const char *opts)
{
	return !strncmp(opts, "ro,", 3) || !strcmp(opts, "ro");
}

int main(int argc, char **argv)
{
	t_setup(argc, argv, "mount");
	char abs[PATH_MAX + 16], abs2[PATH_MAX + 16], opts[1024], buf[64];
	struct statvfs sv;
	int fd;

	mkdir("mnt", 0755);
	mkdir("mnt2", 0755);
	if (geteuid() != 0) {
		EXPECT_ERR(mount("none", "mnt", "tmpfs", 0, NULL), EPERM, "user_mount_eperm");
		EXPECT_ERR(umount2("mnt", 0), EPERM, "user_umount_eperm");
		return t_done();
	}
	if (!t_confined()) { /* natively, and through fake-moat (the self-check): our own mount namespace */
		if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
			printf("no mount namespace natively: %s\n", strerror(errno));
			t_rmrf(t_scratch);
			return T_SKIP;
		}
	}
	snprintf(abs, sizeof abs, "%s/mnt", t_scratch);
	snprintf(abs2, sizeof abs2, "%s/mnt2", t_scratch);

	EXPECT_ERR(mount("none", "missing", "tmpfs", 0, NULL), ENOENT, "target_enoent");
	/* a target that ends on a symlink: /proc/<pid>/fd/<n> of an O_PATH fd
	 * of another fd's magic link (LTP mount08; Linux since d80b065b:
	 * ENOENT; moat gave ENOTDIR) */
	{
		char p[64];
		int f = open("mnt/../magic", O_CREAT | O_RDONLY | O_CLOEXEC, 0644);
		snprintf(p, sizeof p, "/proc/%d/fd/%d", (int)getpid(), f);
		int pf = open(p, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		snprintf(p, sizeof p, "/proc/%d/fd/%d", (int)getpid(), pf);
		EXPECT_ERR(mount("mnt2", p, "", MS_BIND, NULL), ENOENT, "target_magic_link_enoent");
		close(pf);
		close(f);
		unlink("magic");
	}
	EXPECT_ERR(mount("none", "mnt", "moat-no-such-fs", 0, NULL), ENODEV, "unknown_type_enodev");
	EXPECT_ERR(umount2("mnt", 0), EINVAL, "umount_not_a_mount_einval");
	EXPECT_ERR(umount2("mnt", 0x100), EINVAL, "umount_bad_flags_einval");

	EXPECT_OK(mount("none", "mnt", "tmpfs", 0, NULL), "mount_tmpfs");
	CHECK(mount_opts(abs, opts, sizeof opts) && !is_ro(opts), "proc_mounts_rw", "%s", opts);
	CHECK(statvfs("mnt", &sv) == 0 && !(sv.f_flag & ST_RDONLY), "statvfs_rw", "%s", strerror(errno));
	fd = open("mnt/file", O_CREAT | O_WRONLY, 0666);
	CHECK(fd >= 0 && write(fd, "content", 7) == 7, "create_in_tmpfs", "%s", strerror(errno));
	close(fd);
	EXPECT_OK(mkdir("mnt/dir", 0777), "mkdir_in_tmpfs");
	struct stat st;
	CHECK(stat("mnt", &st) == 0 && (st.st_mode & 07777) == 01777, "tmpfs_root_mode_1777",
	      "mode %o", st.st_mode & 07777);

	/* read-only */
	EXPECT_OK(mount("none", "mnt", "tmpfs", MS_REMOUNT | MS_RDONLY, NULL), "remount_ro");
	CHECK(mount_opts(abs, opts, sizeof opts) && is_ro(opts), "proc_mounts_ro", "%s", opts);
	CHECK(statvfs("mnt", &sv) == 0 && (sv.f_flag & ST_RDONLY), "statvfs_ro", "%s", strerror(errno));
	CHECK(t_read_file("mnt/file", buf, sizeof buf) == 7, "read_on_ro", "%s", strerror(errno));
	EXPECT_ERR(open("mnt/new", O_CREAT | O_WRONLY, 0666), EROFS, "ro_create_erofs");
	EXPECT_ERR(open("mnt/file", O_WRONLY), EROFS, "ro_open_write_erofs");
	EXPECT_ERR(open("mnt/file", O_RDONLY | O_TRUNC), EROFS, "ro_open_trunc_erofs");
	EXPECT_ERR(mkdir("mnt/d2", 0777), EROFS, "ro_mkdir_erofs");
	EXPECT_ERR(rmdir("mnt/dir"), EROFS, "ro_rmdir_erofs");
	EXPECT_ERR(unlink("mnt/file"), EROFS, "ro_unlink_erofs");
	EXPECT_ERR(rename("mnt/file", "mnt/file2"), EROFS, "ro_rename_erofs");
	EXPECT_ERR(link("mnt/file", "mnt/file2"), EROFS, "ro_link_erofs");
	EXPECT_ERR(symlink("file", "mnt/sl"), EROFS, "ro_symlink_erofs");
	EXPECT_ERR(mkfifo("mnt/fifo", 0666), EROFS, "ro_mkfifo_erofs");
	EXPECT_ERR(chmod("mnt/file", 0600), EROFS, "ro_chmod_erofs");
	EXPECT_ERR(chown("mnt/file", 0, 0), EROFS, "ro_chown_erofs");
	EXPECT_ERR(truncate("mnt/file", 0), EROFS, "ro_truncate_erofs");
	EXPECT_ERR(utimes("mnt/file", NULL), EROFS, "ro_utimes_erofs");
	EXPECT_ERR(setxattr("mnt/file", "user.x", "1", 1, 0), EROFS, "ro_setxattr_erofs");
	EXPECT_ERR(access("mnt/file", W_OK), EROFS, "ro_access_w_erofs");

	/* read-write again */
	EXPECT_OK(mount("none", "mnt", "tmpfs", MS_REMOUNT, NULL), "remount_rw");
	fd = open("mnt/new", O_CREAT | O_WRONLY, 0666);
	CHECK(fd >= 0, "rw_again_create", "%s", strerror(errno));
	close(fd);

	/* a bind mount, made read-only on its own */
	/* MS_RDONLY with a new bind is ignored (only a remount sets it) */
	EXPECT_OK(mount("mnt", "mnt2", NULL, MS_BIND | MS_RDONLY, NULL), "bind");
	fd = open("mnt2/y", O_CREAT | O_WRONLY, 0666);
	CHECK(fd >= 0, "bind_rdonly_flag_ignored", "%s", strerror(errno));
	close(fd);
	CHECK(t_read_file("mnt2/file", buf, sizeof buf) == 7, "bind_sees_file", "%s", strerror(errno));
	EXPECT_OK(mount("none", "mnt2", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY, NULL), "bind_remount_ro");
	EXPECT_ERR(open("mnt2/x", O_CREAT | O_WRONLY, 0666), EROFS, "bind_ro_create_erofs");
	fd = open("mnt/x", O_CREAT | O_WRONLY, 0666);
	CHECK(fd >= 0, "original_still_rw", "%s", strerror(errno));
	close(fd);
	CHECK(access("mnt2/x", F_OK) == 0, "bind_shares_files", "%s", strerror(errno));
	EXPECT_OK(mount(NULL, "mnt", NULL, MS_PRIVATE, NULL), "make_private");

	/* a bind of a subdirectory: its root is that directory */
	char abs3[PATH_MAX + 16], cwd[PATH_MAX + 64];
	struct stat a, b;
	snprintf(abs3, sizeof abs3, "%s/mnt3", t_scratch);
	mkdir("mnt3", 0755);
	CHECK(mkdir("mnt/sub", 0755) == 0 && mkdir("mnt/sub/deep", 0755) == 0 &&
	      t_write_file("mnt/sub/deep/f", "deep", 0644) == 0, "sub_tree", "%s", strerror(errno));
	EXPECT_ERR(mount("mnt/sub/deep/f", "mnt3", NULL, MS_BIND, NULL), ENOTDIR, "bind_file_on_dir_enotdir");
	EXPECT_OK(mount("mnt/sub", "mnt3", NULL, MS_BIND, NULL), "bind_subdir");
	CHECK(t_read_file("mnt3/deep/f", buf, sizeof buf) == 4, "bind_subdir_sees_file", "%s", strerror(errno));
	CHECK(access("mnt3/sub", F_OK) < 0 && errno == ENOENT, "bind_subdir_root_is_sub", "%s",
	      strerror(errno));
	fd = open("mnt3/deep/g", O_CREAT | O_WRONLY, 0666);
	CHECK(fd >= 0 && access("mnt/sub/deep/g", F_OK) == 0, "bind_subdir_shares_files", "%s",
	      strerror(errno));
	if (fd >= 0)
		close(fd);
	CHECK(stat("mnt3/..", &a) == 0 && stat(".", &b) == 0 && a.st_ino == b.st_ino &&
	      a.st_dev == b.st_dev, "bind_subdir_dotdot_is_parent", "%s", strerror(errno));
	CHECK(stat("mnt3", &a) == 0 && stat("mnt/sub", &b) == 0 && a.st_ino == b.st_ino,
	      "bind_subdir_same_inode", "%s", strerror(errno));
	CHECK(mount_opts(abs3, opts, sizeof opts), "bind_subdir_listed", "not in /proc/self/mounts");
	EXPECT_ERR(rename("mnt3", "mnt4"), EBUSY, "bind_subdir_rename_ebusy");
	EXPECT_ERR(rmdir("mnt3"), EBUSY, "bind_subdir_rmdir_ebusy");
	int here = open(".", O_RDONLY | O_DIRECTORY);
	CHECK(chdir("mnt3/deep") == 0 && getcwd(cwd, sizeof cwd) &&
	      !strncmp(cwd, abs3, strlen(abs3)) && !strcmp(cwd + strlen(abs3), "/deep"),
	      "bind_subdir_getcwd", "%s", cwd);
	CHECK(rename("../../mnt/sub/deep", "../../mnt/sub/deeper") == 0 && getcwd(cwd, sizeof cwd) &&
	      !strcmp(cwd + strlen(abs3), "/deeper"), "bind_subdir_getcwd_after_rename", "%s", cwd);
	CHECK(here >= 0 && fchdir(here) == 0, "back", "%s", strerror(errno));
	if (here >= 0)
		close(here);
	EXPECT_OK(umount2("mnt3", 0), "umount_bind_subdir");
	CHECK(access("mnt3/deeper", F_OK) < 0 && errno == ENOENT, "bind_subdir_gone", "%s", strerror(errno));

	/* unmount */
	EXPECT_OK(umount2("mnt2", 0), "umount_bind");
	EXPECT_OK(umount2("mnt", 0), "umount_tmpfs");
	CHECK(access("mnt/file", F_OK) < 0 && errno == ENOENT, "gone_after_umount", "%s", strerror(errno));
	CHECK(!mount_opts(abs, opts, sizeof opts) && !mount_opts(abs2, opts, sizeof opts),
	      "proc_mounts_after_umount", "still listed");
	EXPECT_ERR(umount2("mnt", 0), EINVAL, "umount_twice_einval");
	return t_done();
}
