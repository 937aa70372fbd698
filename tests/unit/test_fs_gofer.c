/* The VFS over a real gofer (the default backend: one gofer connection per
 * thread, batched walks): lookups, opens, a creation and its invalidation,
 * the hidden list, read-only exports. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fs/vfs.h"
#include "fs/walk.h"
#include "gofer/gofer.h"
#include "kernel/task.h"

static char tdir[64], rodir[80], rwdir[80];
static pid_t gpid = -1;
static int gctl = -1;
static struct sandbox sb;
static struct fs_ctx fsx;
static struct task task;
static struct vfs *v;
static struct vfs_node node;

static void sh(const char *cmd)
{
	cr_assert_eq(system(cmd), 0, "%s", cmd);
}

static void setup(void)
{
	char cmd[512], err[256];

	snprintf(tdir, sizeof tdir, "/tmp/moat-fsg-XXXXXX");
	cr_assert_not_null(mkdtemp(tdir));
	snprintf(rodir, sizeof rodir, "%s/ro", tdir);
	snprintf(rwdir, sizeof rwdir, "%s/rw", tdir);
	snprintf(cmd, sizeof cmd,
		 "cd %s && mkdir -p ro/etc ro/a/b/c/d rw/sub && echo hi > ro/etc/hosts && "
		 "echo s > ro/etc/shadow && echo x > ro/a/b/c/d/e && ln -s /etc/hosts ro/abs && "
		 "echo w > rw/sub/f && chmod -R a+rX .", tdir);
	sh(cmd);
	static const char *const hidden[] = { "etc/shadow", NULL };
	struct gofer_export ex[] = {
		{ .kind = GOFER_EXPORT_DIR, .host_path = rodir, .hidden = hidden },
		{ .kind = GOFER_EXPORT_DIR, .host_path = rwdir, .writable = 1 },
	};
	cr_assert_eq(gofer_start(ex, 2, &gpid, &gctl, err, sizeof err), 0, "%s", err);
	struct vfs_mount_spec m[] = {
		{ .path = "/", .kind = VFS_MNT_GOFER, .export = 0, .hidden = hidden },
		{ .path = "/work", .kind = VFS_MNT_GOFER, .export = 1, .writable = 1 },
	};
	memset(&sb, 0, sizeof sb);
	sb.idmap.full_identity = 1;
	sb.guest_procfd = -1;
	cr_assert_eq(vfs_create(&sb, m, 2, gctl, &v, err, sizeof err), 0, "%s", err);
	sb.vfs = v;
	pthread_mutex_init(&fsx.lock, NULL);
	strcpy(fsx.cwd, "/");
	fsx.umask = 022;
	atomic_store(&fsx.refs, 1); /* static: a task_fs_get/fs_ctx_put pair never frees it */
	task.pidfd = -1;
	task.fs = &fsx;
	task.sb = &sb;
}

static void teardown(void)
{
	char cmd[128];

	vfs_destroy(v);
	if (gctl >= 0)
		close(gctl);
	if (gpid > 0) {
		kill(gpid, SIGKILL);
		waitpid(gpid, NULL, 0);
	}
	snprintf(cmd, sizeof cmd, "rm -rf %s", tdir);
	if (system(cmd) != 0)
		fprintf(stderr, "cleanup failed\n");
}

TestSuite(fs_gofer, .init = setup, .fini = teardown);

Test(fs_gofer, walk_open_read)
{
	int fd = -1;
	struct stat st;
	char buf[8] = "";

	cr_assert_eq(vfs_walk(v, &task, AT_FDCWD, "/a/b/c/d/e", 0, &node), 0);
	cr_assert(S_ISREG(node.st.st_mode));
	/* the batched walk cached the intermediate names */
	cr_assert_eq(vfs_walk(v, &task, AT_FDCWD, "/a/b/c", 0, &node), 0);
	cr_assert(S_ISDIR(node.st.st_mode));
	cr_assert_eq(vfs_walk(v, &task, AT_FDCWD, "/abs", 0, &node), 0);
	cr_assert_str_eq(node.path, "/etc/hosts");
	cr_assert_eq(vfs_node_open(v, &task, &node, O_RDONLY, 0, &fd, &st), 0);
	cr_assert_eq(read(fd, buf, sizeof buf - 1), 3);
	cr_assert_str_eq(buf, "hi\n");
	close(fd);
	cr_assert_eq(vfs_walk(v, &task, AT_FDCWD, "/etc/shadow", 0, &node), -ENOENT);
	cr_assert_eq(vfs_walk(v, &task, AT_FDCWD, "/work/sub/f", 0, &node), 0);
}

Test(fs_gofer, create_on_rw_erofs_on_ro)
{
	int fd = -1;
	struct stat st;

	cr_assert_eq(vfs_walk(v, &task, AT_FDCWD, "/work/new", WALK_CREATE, &node), 0);
	cr_assert_eq(node.exists, 0);
	cr_assert_eq(vfs_node_open(v, &task, &node, O_CREAT | O_WRONLY, 0644, &fd, &st), 0);
	close(fd);
	cr_assert_eq(vfs_walk(v, &task, AT_FDCWD, "/work/new", 0, &node), 0);
	cr_assert(S_ISREG(node.st.st_mode));
	cr_assert_eq(vfs_walk(v, &task, AT_FDCWD, "/etc/new", WALK_CREATE, &node), 0);
	cr_assert_eq(vfs_mount_write_err(node.mnt), -EROFS);
	cr_assert_eq(vfs_node_open(v, &task, &node, O_CREAT | O_WRONLY, 0644, &fd, &st), -EROFS);
}
