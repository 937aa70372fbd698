/* Unit tests for the path walk (fs/walk.c, fs/vfs.c): a VFS over mkdtemp
 * trees served by a real gofer (test_vfs_gofer.h), and a fake task filled
 * in by hand.
 *
 * Guest view:
 *   /            export 0 (read-only), hidden "etc/shadow"
 *   /work        export 1 (writable)
 *   /home/user   export 1 too (so /home is a synthetic directory)
 *   /proc        PROC
 *   /bin      -> usr/bin (SYMLINK mount)
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fs/vfs.h"
#include "fs/walk.h"
#include "kernel/task.h"
#include "test_vfs_gofer.h"

static char rootdir[64], workdir[64];
static struct sandbox sb;
static struct fs_ctx fsx;

/* chdir by name, as the start-up --workdir does (the object is taken at the
 * next walk) */
static void set_cwd(const char *p)
{
	if (fsx.cwd_fd >= 0)
		close(fsx.cwd_fd);
	fsx.cwd_fd = -1;
	fsx.cwd_dev = 0;
	fsx.cwd_ino = 0;
	strcpy(fsx.cwd, p);
}
static struct task task;
static struct vfs *v;

static struct vfs_node node;

static void mkfile(const char *base, const char *rel)
{
	char p[PATH_MAX];
	snprintf(p, sizeof p, "%s/%s", base, rel);
	int fd = open(p, O_CREAT | O_WRONLY, 0644);
	cr_assert_geq(fd, 0, "create %s", p);
	close(fd);
}

static void mkd(const char *base, const char *rel, mode_t mode)
{
	char p[PATH_MAX];
	snprintf(p, sizeof p, "%s/%s", base, rel);
	cr_assert_eq(mkdir(p, mode), 0, "mkdir %s", p);
	chmod(p, mode);
}

static void mkl(const char *base, const char *rel, const char *target)
{
	char p[PATH_MAX];
	snprintf(p, sizeof p, "%s/%s", base, rel);
	cr_assert_eq(symlink(target, p), 0, "symlink %s", p);
}

static void rm_rf(const char *p)
{
	char cmd[PATH_MAX];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", p);
	if (system(cmd) != 0)
		fprintf(stderr, "cleanup of %s failed\n", p);
}

static void setup(void)
{
	strcpy(rootdir, "/tmp/moat-walk-root-XXXXXX");
	strcpy(workdir, "/tmp/moat-walk-work-XXXXXX");
	cr_assert_not_null(mkdtemp(rootdir));
	cr_assert_not_null(mkdtemp(workdir));
	chmod(rootdir, 0755);

	mkd(rootdir, "etc", 0755);
	mkfile(rootdir, "etc/hosts");
	mkfile(rootdir, "etc/shadow");
	mkd(rootdir, "usr", 0755);
	mkd(rootdir, "usr/bin", 0755);
	mkfile(rootdir, "usr/bin/sh");
	mkfile(rootdir, "file");
	mkd(rootdir, "secret", 0700);
	mkfile(rootdir, "secret/x");
	cr_assert_eq(chown(rootdir, 0, 0), 0);
	{
		char p[PATH_MAX];
		snprintf(p, sizeof p, "%s/secret", rootdir);
		cr_assert_eq(chown(p, 12345, 12345), 0);
	}
	mkl(rootdir, "loop1", "loop2");
	mkl(rootdir, "loop2", "loop1");
	mkl(rootdir, "abs", "/etc/hosts");
	mkl(rootdir, "rel", "work/sub");
	mkl(rootdir, "up", "../../../etc");
	/* l0 -> l1 -> ... -> l40 -> file: 41 links from l0, 40 from l1 */
	for (int i = 0; i <= 40; i++) {
		char name[16], tgt[16];
		snprintf(name, sizeof name, "l%d", i);
		if (i == 40)
			snprintf(tgt, sizeof tgt, "file");
		else
			snprintf(tgt, sizeof tgt, "l%d", i + 1);
		mkl(rootdir, name, tgt);
	}
	mkd(workdir, "sub", 0755);
	mkfile(workdir, "sub/x");
	mkfile(workdir, "sub/y");

	static const char *const hidden[] = { "etc/shadow", NULL };
	struct vfs_mount_spec m[] = {
		{ .path = "/", .kind = VFS_MNT_GOFER, .export = 0, .hidden = hidden },
		{ .path = "/work", .kind = VFS_MNT_GOFER, .export = 1, .writable = 1 },
		{ .path = "/home/user", .kind = VFS_MNT_GOFER, .export = 1, .writable = 1 },
		{ .path = "/proc", .kind = VFS_MNT_PROC },
		{ .path = "/bin", .kind = VFS_MNT_SYMLINK, .target = "usr/bin" },
	};
	char err[256];
	memset(&sb, 0, sizeof sb);
	sb.idmap.full_identity = 1;
	sb.guest_procfd = -1;
	int ctl = tg_start_ro_rw(rootdir, workdir, hidden);
	cr_assert_eq(vfs_create(&sb, m, sizeof m / sizeof m[0], ctl, &v, err, sizeof err), 0, "%s", err);
	sb.vfs = v;

	memset(&fsx, 0, sizeof fsx);
	pthread_mutex_init(&fsx.lock, NULL);
	fsx.cwd_fd = -1;
	strcpy(fsx.cwd, "/");
	fsx.umask = 022;
	atomic_store(&fsx.refs, 1); /* static: a task_fs_get/fs_ctx_put pair never frees it */
	memset(&task, 0, sizeof task);
	task.pidfd = -1;
	task.fs = &fsx;
	task.sb = &sb;
	pthread_mutex_init(&task.lock, NULL);
}

static void teardown(void)
{
	vfs_destroy(v);
	tg_stop();
	rm_rf(rootdir);
	rm_rf(workdir);
}

TestSuite(fs_walk, .init = setup, .fini = teardown);

static int walk(const char *path, unsigned flags)
{
	return vfs_walk(v, &task, AT_FDCWD, path, flags, &node);
}

/* p walks (following) to the node named want */
#define assert_walks_to(p, want) \
	do { \
		cr_assert_eq(walk(p, 0), 0, "%s", p); \
		cr_assert_str_eq(node.path, want); \
	} while (0)

Test(fs_walk, plain_file)
{
	assert_walks_to("/etc/hosts", "/etc/hosts");
	cr_assert_str_eq(node.rel, "etc/hosts");
	cr_assert(S_ISREG(node.st.st_mode));
	cr_assert_eq(node.kind, VN_BACKEND);
	/* again, from the dentry cache */
	assert_walks_to("//etc/./hosts", "/etc/hosts");
	cr_assert_eq(walk("/etc/nope", 0), -ENOENT);
	cr_assert_eq(walk("/nope/x", 0), -ENOENT);
	cr_assert_eq(walk("", 0), -ENOENT);
}

Test(fs_walk, symlink_loop)
{
	cr_assert_eq(walk("/loop1", 0), -ELOOP);
	cr_assert_eq(walk("/loop1/x", 0), -ELOOP);
	cr_assert_eq(walk("/loop1", WALK_NOFOLLOW), 0);
	cr_assert(S_ISLNK(node.st.st_mode));
}

Test(fs_walk, forty_links_ok_fortyone_eloop)
{
	assert_walks_to("/l1", "/file");
	cr_assert_eq(walk("/l0", 0), -ELOOP);
}

Test(fs_walk, dotdot_at_root)
{
	assert_walks_to("/..", "/");
	assert_walks_to("/../../etc/../..", "/");
	assert_walks_to("/../etc/hosts", "/etc/hosts");
	/* a relative symlink climbing above the root stops at "/" */
	assert_walks_to("/up/hosts", "/etc/hosts");
}

Test(fs_walk, dotdot_across_mount_point)
{
	assert_walks_to("/work/sub/../..", "/");
	assert_walks_to("/work/..", "/");
	assert_walks_to("/home/user/..", "/home");
	cr_assert_eq(node.kind, VN_SYNTH);
	set_cwd("/work/sub");
	assert_walks_to("../../etc/hosts", "/etc/hosts");
}

Test(fs_walk, mount_crossing)
{
	cr_assert_eq(walk("/work/sub/x", 0), 0);
	cr_assert_str_eq(node.mnt->path, "/work");
	cr_assert_str_eq(node.rel, "sub/x");
	cr_assert(node.mnt->writable);
	cr_assert_eq(walk("/work", 0), 0);
	cr_assert_str_eq(node.rel, "");
	cr_assert(S_ISDIR(node.st.st_mode));
	/* the same export bound twice */
	cr_assert_eq(walk("/home/user/sub/x", 0), 0);
	cr_assert_str_eq(node.mnt->path, "/home/user");
	cr_assert_str_eq(node.rel, "sub/x");
}

Test(fs_walk, relative_symlink_crossing_mount)
{
	assert_walks_to("/rel/x", "/work/sub/x");
	cr_assert_str_eq(node.mnt->path, "/work");
}

Test(fs_walk, absolute_symlink_in_guest_view)
{
	struct stat hst;
	char p[PATH_MAX];

	snprintf(p, sizeof p, "%s/etc/hosts", rootdir);
	cr_assert_eq(stat(p, &hst), 0);
	assert_walks_to("/abs", "/etc/hosts");
	cr_assert_eq(node.st.st_ino, hst.st_ino);
	cr_assert_eq(node.st.st_dev, hst.st_dev);
	cr_assert_eq(walk("/abs", WALK_NOFOLLOW), 0);
	cr_assert(S_ISLNK(node.st.st_mode));
	char buf[64];
	long l = vfs_node_readlink(v, &task, &node, buf, sizeof buf);
	cr_assert_eq(l, 10);
	cr_assert_eq(memcmp(buf, "/etc/hosts", 10), 0);
}

Test(fs_walk, symlink_mount)
{
	cr_assert_eq(walk("/bin", WALK_NOFOLLOW), 0);
	cr_assert(S_ISLNK(node.st.st_mode));
	cr_assert_eq(node.kind, VN_SYMMNT);
	assert_walks_to("/bin/sh", "/usr/bin/sh");
	assert_walks_to("/bin", "/usr/bin");
}

Test(fs_walk, trailing_slash)
{
	cr_assert_eq(walk("/etc/hosts/", 0), -ENOTDIR);
	cr_assert_eq(walk("/etc/hosts/x", 0), -ENOTDIR);
	assert_walks_to("/etc/", "/etc");
	cr_assert_eq(walk("/etc/hosts", WALK_DIRECTORY), -ENOTDIR);
	/* a trailing slash follows a final symlink even with NOFOLLOW */
	cr_assert_eq(walk("/bin/", WALK_NOFOLLOW), 0);
	cr_assert_str_eq(node.path, "/usr/bin");
}

Test(fs_walk, name_too_long)
{
	char comp[300], path[PATH_MAX + 16];

	memset(comp, 'a', 256);
	comp[256] = 0;
	snprintf(path, sizeof path, "/etc/%s", comp);
	cr_assert_eq(walk(path, 0), -ENAMETOOLONG);
	comp[255] = 0;
	snprintf(path, sizeof path, "/etc/%s", comp);
	cr_assert_eq(walk(path, 0), -ENOENT);

	/* 4096 bytes (PATH_MAX including the NUL would be 4095) */
	size_t n = 0;
	while (n + 2 <= 4096) {
		path[n++] = '/';
		path[n++] = '.';
	}
	path[4096] = 0;
	cr_assert_eq(strlen(path), 4096);
	cr_assert_eq(walk(path, 0), -ENAMETOOLONG);
	path[4094] = 0;
	cr_assert_eq(walk(path, 0), 0);
}

Test(fs_walk, hidden_is_enoent)
{
	cr_assert_eq(walk("/etc/shadow", 0), -ENOENT);
	cr_assert_eq(walk("/etc/shadow", WALK_CREATE), 0);
	cr_assert_eq(node.exists, 0);
}

Test(fs_walk, erofs_on_read_only_mount)
{
	cr_assert_eq(walk("/etc/newfile", WALK_CREATE), 0);
	cr_assert_eq(node.exists, 0);
	cr_assert_eq(vfs_mount_write_err(node.mnt), -EROFS);
	cr_assert_eq(walk("/work/newfile", WALK_CREATE), 0);
	cr_assert_eq(vfs_mount_write_err(node.mnt), 0);
	/* the backend itself refuses writes on the read-only export */
	cr_assert_eq(VFS_BE(v, mkdir, 0, "newdir", 0755, NULL), -EROFS);
	cr_assert_eq(walk("/home", 0), 0);
	cr_assert_eq(vfs_mount_write_err(node.mnt), -EROFS);
}

Test(fs_walk, permission_denied_for_non_root)
{
	/* host files: guest root has no DAC override, only the bits of its
	 * class (/secret is 0700 12345:12345) */
	cr_assert_eq(walk("/secret/x", 0), -EACCES);
	task.cred.fsuid = task.cred.euid = task.cred.ruid = 1000;
	task.cred.fsgid = task.cred.egid = task.cred.rgid = 1000;
	cr_assert_eq(walk("/secret/x", 0), -EACCES);
	cr_assert_eq(walk("/secret", 0), 0);       /* the dir itself is visible */
	cr_assert_eq(vfs_permission(&task, &node.st, MAY_READ), -EACCES);
	cr_assert_eq(walk("/etc/hosts", 0), 0);
	cr_assert_eq(vfs_permission(&task, &node.st, MAY_READ), 0);
	cr_assert_eq(vfs_permission(&task, &node.st, MAY_WRITE), -EACCES);
	cr_assert_eq(vfs_permission(&task, &node.st, MAY_EXEC), -EACCES);
	/* root owns the host's root-owned files (identity map), and only
	 * gets their owner bits */
	task.cred.fsuid = task.cred.fsgid = 0;
	cr_assert_eq(vfs_permission(&task, &node.st, MAY_EXEC), -EACCES);
	cr_assert_eq(vfs_permission(&task, &node.st, MAY_READ | MAY_WRITE), 0);
	node.st.st_mode = S_IFREG | 0044;
	cr_assert_eq(vfs_permission(&task, &node.st, MAY_READ), -EACCES);
}

Test(fs_walk, synthetic_mount_point_dirs)
{
	char *const *kids = vfs_synth_children(v, "/");
	int work = 0, home = 0, proc = 0, bin = 0;

	cr_assert_not_null(kids);
	for (; *kids; kids++) {
		work |= !strcmp(*kids, "work");
		home |= !strcmp(*kids, "home");
		proc |= !strcmp(*kids, "proc");
		bin |= !strcmp(*kids, "bin");
	}
	cr_assert(work && home && proc && bin);
	kids = vfs_synth_children(v, "/home");
	cr_assert_not_null(kids);
	cr_assert_str_eq(kids[0], "user");
	cr_assert_null(kids[1]);
	cr_assert_eq(walk("/home", 0), 0);
	cr_assert_eq(node.kind, VN_SYNTH);
	cr_assert(S_ISDIR(node.st.st_mode));
	cr_assert_eq(node.st.st_uid, 0);
	cr_assert_eq(node.st.st_mode & 07777, 0755);
	/* /work does not exist in the root tree: the mount root answers */
	cr_assert_eq(walk("/work", 0), 0);
	cr_assert_eq(node.kind, VN_BACKEND);
	cr_assert_eq(walk("/proc", 0), 0);
	cr_assert_eq(node.kind, VN_PROC);
}

Test(fs_walk, beneath_and_in_root)
{
	set_cwd("/work");
	cr_assert_eq(walk("../etc", WALK_BENEATH), -EXDEV);
	cr_assert_eq(walk("/etc", WALK_BENEATH), -EXDEV);
	cr_assert_eq(walk("sub/x", WALK_BENEATH), 0);
	cr_assert_str_eq(node.path, "/work/sub/x");
	cr_assert_eq(walk("/sub/x", WALK_IN_ROOT), 0);
	cr_assert_str_eq(node.path, "/work/sub/x");
	cr_assert_eq(walk("../../sub/x", WALK_IN_ROOT), 0);
	cr_assert_str_eq(node.path, "/work/sub/x");
	set_cwd("/");
	cr_assert_eq(walk("/abs", WALK_NO_SYMLINKS), -ELOOP);
	cr_assert_eq(walk("/work/sub", WALK_NO_XDEV), -EXDEV);
}

Test(fs_walk, create_and_invalidate)
{
	cr_assert_eq(walk("/work/newdir", WALK_CREATE), 0);
	cr_assert_eq(node.exists, 0);
	cr_assert_eq(VFS_BE(v, mkdir, node.mnt->export, node.rel, 0755, NULL), 0);
	/* the negative entry is still cached until invalidated */
	cr_assert_eq(walk("/work/newdir", 0), -ENOENT);
	vfs_invalidate(v, node.mnt, node.rel, 0);
	cr_assert_eq(walk("/work/newdir", 0), 0);
	cr_assert(S_ISDIR(node.st.st_mode));
}

/* An exclusive writable mount keeps stats in the dentry cache; a file the
 * guest got a writable fd of is re-stat'ed (its size changes natively). */
Test(fs_walk, fresh_stat_sees_size_change)
{
	char p[PATH_MAX];
	int fd = -1;
	struct stat st;

	cr_assert_eq(walk("/work/sub/x", 0), 0);
	cr_assert_eq(node.st.st_size, 0);
	cr_assert_eq(vfs_node_open(v, &task, &node, O_WRONLY, 0, &fd, &st), 0);
	cr_assert_eq(write(fd, "hello", 5), 5);
	close(fd);
	cr_assert_eq(walk("/work/sub/x", WALK_FRESH), 0);
	cr_assert_eq(node.st.st_size, 5);
	/* a file nobody got a writable fd of: the cached stat (a change the
	 * host made behind the sandbox's back is not seen: exclusive) */
	cr_assert_eq(walk("/work/sub/y", 0), 0);
	snprintf(p, sizeof p, "%s/sub/y", workdir);
	FILE *f = fopen(p, "w");
	fputs("hello", f);
	fclose(f);
	cr_assert_eq(walk("/work/sub/y", WALK_FRESH), 0);
	cr_assert_eq(node.st.st_size, 0);
	/* a change the sentry made invalidates the name and its parent */
	cr_assert_eq(walk("/work/sub", 0), 0);
	struct stat parent = node.st;
	cr_assert_eq(walk("/work/sub/z", WALK_CREATE), 0);
	cr_assert_eq(VFS_BE(v, mkdir, node.mnt->export, node.rel, 0755, NULL), 0);
	vfs_invalidate(v, node.mnt, node.rel, 0);
	cr_assert_eq(walk("/work/sub", WALK_FRESH), 0);
	cr_assert_eq(node.st.st_nlink, parent.st_nlink + 1);
}

Test(fs_walk, exec_and_check_dir)
{
	int fd = -1;
	struct stat st;
	char canon[PATH_MAX];

	cr_assert_eq(vfs_check_dir(&task, "/work/sub", canon, sizeof canon), 0);
	cr_assert_str_eq(canon, "/work/sub");
	cr_assert_eq(vfs_check_dir(&task, "/etc/hosts", canon, sizeof canon), -ENOTDIR);
	cr_assert_eq(vfs_open_exec(&task, AT_FDCWD, "/etc/hosts", 0, &fd, &st, canon, sizeof canon, NULL), -EACCES);
	cr_assert_eq(vfs_open_exec(&task, AT_FDCWD, "/etc", 0, &fd, &st, canon, sizeof canon, NULL), -EACCES);
	cr_assert_eq(vfs_open_exec(&task, AT_FDCWD, "/nope", 0, &fd, &st, canon, sizeof canon, NULL), -ENOENT);
	char p[PATH_MAX];
	snprintf(p, sizeof p, "%s/usr/bin/sh", rootdir);
	chmod(p, 0755);
	cr_assert_eq(vfs_open_exec(&task, AT_FDCWD, "/bin/sh", 0, &fd, &st, canon, sizeof canon, NULL), 0);
	cr_assert_str_eq(canon, "/usr/bin/sh");
	cr_assert_geq(fd, 0);
	close(fd);
}

/* kB of anonymous memory of this process (smaps_rollup) */
static long anon_kb(void)
{
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/self/smaps_rollup", "re");
	cr_assert_not_null(f);
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "Anonymous: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

/* vfs_walk_release drops the pages of this thread's cached walk scratch
 * (an idle sentry kept those its set-up's walks had touched) and walks
 * work as before on the zeroed pages after it. */
Test(fs_walk, release_drops_scratch_pages)
{
	/* 40 links and a long name: root, both remainder buffers, the
	 * candidate and the link buffers all written */
	char longp[3000];
	memset(longp, 'a', sizeof longp);
	longp[0] = '/';
	for (size_t i = 200; i < sizeof longp - 1; i += 200)
		longp[i] = '/';
	longp[sizeof longp - 1] = 0;
	for (int i = 0; i < 3; i++) {
		cr_assert_eq(walk("/l1", 0), 0);
		cr_assert_eq(walk(longp, 0), -ENOENT);
	}
	long before = anon_kb();
	vfs_walk_release();
	long after = anon_kb();
	cr_assert_geq(before - after, 16, "anonymous %ld kB -> %ld kB", before, after);
	assert_walks_to("/l1", "/file");
	assert_walks_to("/rel/x", "/work/sub/x");
	vfs_walk_release();
	vfs_walk_release();
	cr_assert_eq(walk("/etc/hosts", 0), 0);
}
