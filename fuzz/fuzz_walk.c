/* fuzz/fuzz_walk.c: the one path walk (fs/walk.c, fs/vfs.c) on any path
 * bytes and walk flags, over a small fixed view: a read-only root export with
 * a hidden "etc/shadow", a writable /work export, a synthetic /home, /proc
 * (no guest procfs here) and a symlink mount, with symlink loops, absolute,
 * relative and ".." links. The backend is a real gofer (gofer/server.c, the
 * code moat runs) serving mkdtemp trees, made once. Whatever resolves must be canonical and never
 * the hidden file. Nothing is created: WALK_CREATE only permits a negative
 * final component. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fs/vfs.h"
#include "gofer/gofer.h"
#include "fs/walk.h"
#include "kernel/task.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char rootdir[64], workdir[64];
static struct sandbox sb;
static struct fs_ctx fsx;
static struct task task;
static struct vfs *v;
static pid_t gofer_pid = -1;
static int gofer_ctl = -1;
static struct vfs_node node;

static void mk(const char *base, const char *rel, int kind, const char *target)
{
	char p[PATH_MAX];
	snprintf(p, sizeof p, "%s/%s", base, rel);
	if (kind == 'd')
		mkdir(p, 0755);
	else if (kind == 'l')
		symlink(target, p);
	else
		close(open(p, O_CREAT | O_WRONLY | O_CLOEXEC, 0644));
}

static void cleanup(void)
{
	char cmd[256];
	snprintf(cmd, sizeof cmd, "rm -rf '%s' '%s'", rootdir, workdir);
	if (system(cmd) != 0)
		fprintf(stderr, "fuzz_walk: cleanup failed\n");
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	strcpy(rootdir, "/tmp/moat-fuzz-root-XXXXXX");
	strcpy(workdir, "/tmp/moat-fuzz-work-XXXXXX");
	if (!mkdtemp(rootdir) || !mkdtemp(workdir))
		abort();
	chmod(rootdir, 0755);
	atexit(cleanup);
	mk(rootdir, "etc", 'd', NULL);
	mk(rootdir, "etc/hosts", 'f', NULL);
	mk(rootdir, "etc/shadow", 'f', NULL);
	mk(rootdir, "usr", 'd', NULL);
	mk(rootdir, "usr/bin", 'd', NULL);
	mk(rootdir, "usr/bin/sh", 'f', NULL);
	mk(rootdir, "loop1", 'l', "loop2");
	mk(rootdir, "loop2", 'l', "loop1");
	mk(rootdir, "abs", 'l', "/etc/hosts");
	mk(rootdir, "sh", 'l', "/etc/shadow");
	mk(rootdir, "rel", 'l', "work/sub");
	mk(rootdir, "up", 'l', "../../../etc");
	mk(rootdir, "dot", 'l', ".");
	mk(workdir, "sub", 'd', NULL);
	mk(workdir, "sub/x", 'f', NULL);
	mk(workdir, "sub/back", 'l', "../../etc/./shadow");

	static const char *const hidden[] = { "etc/shadow", NULL };
	struct vfs_mount_spec m[] = {
		{ .path = "/", .kind = VFS_MNT_GOFER, .export = 0, .hidden = hidden },
		{ .path = "/work", .kind = VFS_MNT_GOFER, .export = 1, .writable = 1 },
		{ .path = "/home/user", .kind = VFS_MNT_GOFER, .export = 1, .writable = 1 },
		{ .path = "/proc", .kind = VFS_MNT_PROC },
		{ .path = "/bin", .kind = VFS_MNT_SYMLINK, .target = "usr/bin" },
	};
	char err[256];
	const struct gofer_export ex[2] = {
		{ .kind = GOFER_EXPORT_DIR, .host_path = rootdir, .writable = 0, .hidden = hidden, .mode = 0 },
		{ .kind = GOFER_EXPORT_DIR, .host_path = workdir, .writable = 1, .hidden = NULL, .mode = 0 },
	};
	if (gofer_start(ex, 2, &gofer_pid, &gofer_ctl, err, sizeof err) != 0) {
		fprintf(stderr, "fuzz_walk: %s\n", err);
		abort();
	}
	sb.idmap.full_identity = 1;
	sb.idmap.native_uid = (uid_t)-1;
	sb.idmap.native_gid = (gid_t)-1;
	sb.guest_procfd = -1;
	if (vfs_create(&sb, m, sizeof m / sizeof m[0], gofer_ctl, &v, err, sizeof err) != 0) {
		fprintf(stderr, "fuzz_walk: %s\n", err);
		abort();
	}
	sb.vfs = v;
	pthread_mutex_init(&fsx.lock, NULL);
	strcpy(fsx.cwd, "/work");
	fsx.umask = 022;
	atomic_store(&fsx.refs, 1); /* static: a task_fs_get/fs_ctx_put pair never frees it */
	task.pidfd = -1;
	/* the caller's guest ids known (a task's first ones are 0 until the
	 * tracer learns them, and /proc/self waits up to 5 s for them: every
	 * input through /proc/self took 5 s, 8 executions a second: fuzz87) */
	atomic_store(&task.vtgid, 2);
	atomic_store(&task.vtid, 2);
	task.fs = &fsx;
	task.sb = &sb;
	pthread_mutex_init(&task.lock, NULL);
	/* the backend answers: a walk that resolves must resolve here (a
	 * gofer that died at its start, every walk EIO, fuzzed only the
	 * error path: fuzz87) */
	static const char *const must[] = { "/etc/hosts", "/work/sub/x", "/bin/sh", "/home/user" };
	for (size_t i = 0; i < sizeof must / sizeof must[0]; i++) {
		memset(&node, 0, sizeof node);
		int r = vfs_walk(v, &task, AT_FDCWD, must[i], 0, &node);
		if (r != 0 || !node.exists) {
			fprintf(stderr, "fuzz_walk: %s does not resolve (%d): the gofer is not serving\n", must[i], r);
			abort();
		}
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const unsigned allowed = WALK_NOFOLLOW | WALK_DIRECTORY | WALK_CREATE |
					WALK_EMPTY_PATH | WALK_BENEATH | WALK_IN_ROOT;
	if (size < 1 || size > PATH_MAX + 16)
		return 0;
	unsigned flags = data[0] & allowed;
	char *path = malloc(size); /* exact size: ASan sees overreads */
	memcpy(path, data + 1, size - 1);
	path[size - 1] = 0;
	memset(&node, 0, sizeof node);
	int r = vfs_walk(v, &task, AT_FDCWD, path, flags, &node);
	if (r > 0)
		abort();
	if (r == 0) {
		const char *p = node.path;
		if (p[0] != '/' || strstr(p, "//") || strstr(p, "/./") || strstr(p, "/../"))
			abort();
		size_t l = strlen(p);
		if (l > 1 && (p[l - 1] == '/' || !strcmp(p + l - 2, "/.") ||
			      (l >= 3 && !strcmp(p + l - 3, "/.."))))
			abort();
		if (node.exists && !strcmp(p, "/etc/shadow"))
			abort(); /* the hidden file resolved */
	}
	free(path);
	return 0;
}
