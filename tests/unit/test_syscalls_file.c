/* The file syscall handlers (syscalls/sys_*.c) called directly: the "guest"
 * is this test process (the call's tid is ours, so sc_write_guest/
 * sc_read_guest copy within our own memory through process_vm_*; the task's
 * pidfd is our own, so task_getfd duplicates our own fds) and the VFS is
 * served by a real gofer (test_vfs_gofer.h) over mkdtemp trees.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fs/vfs.h"
#include "fs/walk.h"
#include "kernel/task.h"
#include "test_vfs_gofer.h"
#include "syscalls/handlers.h"
#include "syscalls/sc.h"

static char rootdir[64], workdir[64];
static struct sandbox sb;
static struct fs_ctx fsx;
static struct task task;
static struct vfs *v;

static struct sc_call call;

static void setup(void)
{
	char cmd[512], err[256];

	strcpy(rootdir, "/tmp/moat-sysf-root-XXXXXX");
	strcpy(workdir, "/tmp/moat-sysf-work-XXXXXX");
	cr_assert_not_null(mkdtemp(rootdir));
	cr_assert_not_null(mkdtemp(workdir));
	snprintf(cmd, sizeof cmd, "cd %s && mkdir etc && echo hi > etc/hosts && echo s > etc/shadow"
		 " && chmod 755 . etc && ln -s etc/hosts lnk", rootdir);
	cr_assert_eq(system(cmd), 0);
	static const char *const hidden[] = { "etc/shadow", NULL };
	struct vfs_mount_spec m[] = {
		{ .path = "/", .kind = VFS_MNT_GOFER, .export = 0, .hidden = hidden },
		{ .path = "/work", .kind = VFS_MNT_GOFER, .export = 1, .writable = 1 },
		{ .path = "/etc/mnt", .kind = VFS_MNT_GOFER, .export = 1, .writable = 1 },
		{ .path = "/dev/fd", .kind = VFS_MNT_SYMLINK, .target = "/proc/self/fd" },
	};
	memset(&sb, 0, sizeof sb);
	sb.idmap.full_identity = 1;
	sb.guest_procfd = -1;
	int ctl = tg_start_ro_rw(rootdir, workdir, hidden);
	cr_assert_eq(vfs_create(&sb, m, 4, ctl, &v, err, sizeof err), 0, "%s", err);
	sb.vfs = v;
	pthread_mutex_init(&fsx.lock, NULL);
	strcpy(fsx.cwd, "/");
	fsx.umask = 022;
	atomic_store(&fsx.refs, 1); /* static: a task_fs_get/fs_ctx_put pair never frees it */
	task.pidfd = (int)syscall(SYS_pidfd_open, getpid(), 0);
	cr_assert_geq(task.pidfd, 0);
	task.fs = &fsx;
	task.sb = &sb;
	cred_init(&task.cred, 0, 0);
}

static void teardown(void)
{
	char cmd[256];

	vfs_destroy(v);
	tg_stop();
	snprintf(cmd, sizeof cmd, "rm -rf %s %s", rootdir, workdir);
	if (system(cmd) != 0)
		fprintf(stderr, "cleanup failed\n");
}

TestSuite(sys_file, .init = setup, .fini = teardown);

/* Call handler h with args; strings go to c->str[i]. */
static long call6(sc_handler_fn h, const char *s0, const char *s1, const char *s2, const char *s3,
		  uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4)
{
	memset(&call, 0, sizeof call);
	call.task = &task;
	call.sb = &sb;
	call.tid = getpid();
	call.notify_fd = -1; /* no notification: the copy guard checks none */
	call.out_fd = -1;
	call.out_newfd_at = -1;
	call.args[0] = a0;
	call.args[1] = a1;
	call.args[2] = a2;
	call.args[3] = a3;
	call.args[4] = a4;
	call.str[0] = (char *)s0;
	call.str[1] = (char *)s1;
	call.str[2] = (char *)s2;
	call.str[3] = (char *)s3;
	if (s1 && !a1)
		call.args[1] = (uintptr_t)s1;
	return h(&call);
}

static int openat_(int dirfd, const char *path, int flags, mode_t mode)
{
	long r = call6(sys_openat, NULL, path, NULL, NULL, (uint64_t)dirfd, 0, flags, mode, 0);
	if (r < 0)
		return (int)r;
	return call.out_fd;
}

static long dents_names(int fd, char *names, size_t len)
{
	char buf[4096];
	long r, total = 0;

	names[0] = 0;
	while ((r = call6(sys_getdents64, NULL, NULL, NULL, NULL, fd, (uintptr_t)buf, sizeof buf, 0, 0)) > 0) {
		for (long p = 0; p < r; ) {
			struct dirent64 *d = (struct dirent64 *)(buf + p);
			strncat(names, d->d_name, len - strlen(names) - 2);
			strcat(names, " ");
			p += d->d_reclen;
			total++;
		}
	}
	return r < 0 ? r : total;
}

Test(sys_file, open_stat_read)
{
	struct stat st;
	char buf[8] = "";
	int fd = openat_(AT_FDCWD, "/etc/hosts", O_RDONLY, 0);

	cr_assert_geq(fd, 0);
	cr_assert_eq(read(fd, buf, 7), 3);
	close(fd);
	cr_assert_eq(call6(sys_newfstatat, NULL, "/lnk", NULL, NULL, AT_FDCWD, 0, (uintptr_t)&st, 0, 0), 0);
	cr_assert(S_ISREG(st.st_mode));
	cr_assert_eq(call6(sys_newfstatat, NULL, "/lnk", NULL, NULL, AT_FDCWD, 0, (uintptr_t)&st,
			   AT_SYMLINK_NOFOLLOW, 0), 0);
	cr_assert(S_ISLNK(st.st_mode));
	cr_assert_eq(openat_(AT_FDCWD, "/lnk", O_RDONLY | O_NOFOLLOW, 0), -ELOOP);
	cr_assert_eq(openat_(AT_FDCWD, "/etc/shadow", O_RDONLY, 0), -ENOENT);
	cr_assert_eq(openat_(AT_FDCWD, "/etc", O_WRONLY, 0), -EISDIR);
	cr_assert_eq(openat_(AT_FDCWD, "/etc/hosts", O_WRONLY, 0), -EROFS);
	cr_assert_eq(openat_(AT_FDCWD, "/etc/new", O_CREAT | O_WRONLY, 0644), -EROFS);
	fd = openat_(AT_FDCWD, "/etc/hosts", O_CREAT | O_RDONLY, 0644);
	cr_assert_geq(fd, 0);
	close(fd);
	cr_assert_eq(openat_(AT_FDCWD, "/etc/hosts", O_CREAT | O_EXCL | O_RDONLY, 0644), -EEXIST);
	/* O_TMPFILE: Linux's order of checks (flags, walk, EROFS) */
	cr_assert_eq(openat_(AT_FDCWD, "/etc/hosts", O_TMPFILE | O_RDWR, 0644), -ENOTDIR);
	cr_assert_eq(openat_(AT_FDCWD, "/etc", O_TMPFILE | O_RDWR, 0644), -EROFS);
	cr_assert_eq(openat_(AT_FDCWD, "/etc", O_TMPFILE | O_RDONLY, 0644), -EINVAL);
	cr_assert_eq(openat_(AT_FDCWD, "/etc", O_TMPFILE | O_CREAT | O_RDWR, 0644), -EINVAL);
	cr_assert_eq(openat_(AT_FDCWD, "/nonexistent", O_TMPFILE | O_RDWR, 0644), -ENOENT);
}

Test(sys_file, dirfd_and_empty_path)
{
	struct stat st;
	int dfd = openat_(AT_FDCWD, "/etc", O_RDONLY | O_DIRECTORY, 0);

	cr_assert_geq(dfd, 0);
	int fd = openat_(dfd, "hosts", O_RDONLY, 0);
	cr_assert_geq(fd, 0);
	close(fd);
	cr_assert_eq(call6(sys_newfstatat, NULL, "", NULL, NULL, dfd, 0, (uintptr_t)&st, AT_EMPTY_PATH, 0), 0);
	cr_assert(S_ISDIR(st.st_mode));
	/* a synthetic directory (the mount point /dev has no host dir) */
	int sfd = openat_(AT_FDCWD, "/dev", O_RDONLY | O_DIRECTORY, 0);
	cr_assert_geq(sfd, 0);
	cr_assert_eq(call6(sys_newfstatat, NULL, "", NULL, NULL, sfd, 0, (uintptr_t)&st, AT_EMPTY_PATH, 0), 0);
	cr_assert(S_ISDIR(st.st_mode));
	cr_assert_eq(call6(sys_fchdir, NULL, NULL, NULL, NULL, sfd, 0, 0, 0, 0), 0);
	char cwd[64];
	cr_assert_eq(call6(sys_getcwd, NULL, NULL, NULL, NULL, (uintptr_t)cwd, sizeof cwd, 0, 0, 0), 5);
	cr_assert_str_eq(cwd, "/dev");
	cr_assert_eq(call6(sys_getcwd, NULL, NULL, NULL, NULL, (uintptr_t)cwd, 4, 0, 0, 0), -ERANGE);
	close(sfd);
	close(dfd);
}

Test(sys_file, getdents_merges_mount_points_and_hides)
{
	char names[1024];
	int fd = openat_(AT_FDCWD, "/etc", O_RDONLY | O_DIRECTORY, 0);

	cr_assert_geq(fd, 0);
	cr_assert_eq(dents_names(fd, names, sizeof names), 4, "%s", names); /* . .. hosts mnt */
	cr_assert_not_null(strstr(names, "hosts "));
	cr_assert_not_null(strstr(names, "mnt "));
	cr_assert_null(strstr(names, "shadow"));
	/* rewinddir: the extras come back exactly once */
	lseek(fd, 0, SEEK_SET);
	cr_assert_eq(dents_names(fd, names, sizeof names), 4, "%s", names);
	close(fd);
	/* the root: host names plus work and dev */
	fd = openat_(AT_FDCWD, "/", O_RDONLY | O_DIRECTORY, 0);
	cr_assert_eq(dents_names(fd, names, sizeof names), 6, "%s", names);
	cr_assert_not_null(strstr(names, "work "));
	cr_assert_not_null(strstr(names, "dev "));
	close(fd);
	/* a synthetic directory */
	fd = openat_(AT_FDCWD, "/dev", O_RDONLY | O_DIRECTORY, 0);
	cr_assert_eq(dents_names(fd, names, sizeof names), 3, "%s", names);
	cr_assert_str_eq(names, ". .. fd ");
	lseek(fd, 0, SEEK_SET);
	cr_assert_eq(dents_names(fd, names, sizeof names), 3, "%s", names);
	close(fd);
}

Test(sys_file, namespace_changes_on_rw_mount)
{
	struct stat st;

	cr_assert_eq(call6(sys_mkdir, "/work/d", NULL, NULL, NULL, 0, 0755, 0, 0, 0), 0);
	cr_assert_eq(call6(sys_mkdir, "/work/d", NULL, NULL, NULL, 0, 0755, 0, 0, 0), -EEXIST);
	cr_assert_eq(call6(sys_mkdir, "/etc/d", NULL, NULL, NULL, 0, 0755, 0, 0, 0), -EROFS);
	cr_assert_eq(call6(sys_mkdir, "/etc/hosts", NULL, NULL, NULL, 0, 0755, 0, 0, 0), -EEXIST);
	int fd = openat_(AT_FDCWD, "/work/d/f", O_CREAT | O_WRONLY, 0666);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, "abc", 3), 3);
	close(fd);
	cr_assert_eq(call6(sys_stat, "/work/d/f", NULL, NULL, NULL, 0, (uintptr_t)&st, 0, 0, 0), 0);
	cr_assert_eq(st.st_size, 3);
	cr_assert_eq(st.st_mode & 0777, 0644);  /* umask 022 */
	cr_assert_eq(call6(sys_rename, "/work/d/f", "/work/d/g", NULL, NULL, 0, 0, 0, 0, 0), 0);
	cr_assert_eq(call6(sys_stat, "/work/d/f", NULL, NULL, NULL, 0, (uintptr_t)&st, 0, 0, 0), -ENOENT);
	cr_assert_eq(call6(sys_stat, "/work/d/g", NULL, NULL, NULL, 0, (uintptr_t)&st, 0, 0, 0), 0);
	cr_assert_eq(call6(sys_rename, "/work/d/g", "/etc/g", NULL, NULL, 0, 0, 0, 0, 0), -EXDEV);
	cr_assert_eq(call6(sys_symlink, "g", "/work/d/s", NULL, NULL, 0, 0, 0, 0, 0), 0);
	char buf[16];
	cr_assert_eq(call6(sys_readlink, "/work/d/s", NULL, NULL, NULL, 0, (uintptr_t)buf, sizeof buf, 0, 0), 1);
	cr_assert_eq(call6(sys_readlink, "/work/d/g", NULL, NULL, NULL, 0, (uintptr_t)buf, sizeof buf, 0, 0), -EINVAL);
	cr_assert_eq(call6(sys_link, "/work/d/g", "/work/d/h", NULL, NULL, 0, 0, 0, 0, 0), 0);
	cr_assert_eq(call6(sys_chmod, "/work/d/h", NULL, NULL, NULL, 0, 0600, 0, 0, 0), 0);
	cr_assert_eq(call6(sys_stat, "/work/d/g", NULL, NULL, NULL, 0, (uintptr_t)&st, 0, 0, 0), 0);
	cr_assert_eq(st.st_mode & 0777, 0600);
	cr_assert_eq(call6(sys_truncate, "/work/d/g", NULL, NULL, NULL, 0, 1, 0, 0, 0), 0);
	cr_assert_eq(call6(sys_rmdir, "/work/d", NULL, NULL, NULL, 0, 0, 0, 0, 0), -ENOTEMPTY);
	cr_assert_eq(call6(sys_unlink, "/work/d", NULL, NULL, NULL, 0, 0, 0, 0, 0), -EISDIR);
	cr_assert_eq(call6(sys_unlink, "/work/d/g", NULL, NULL, NULL, 0, 0, 0, 0, 0), 0);
	cr_assert_eq(call6(sys_unlink, "/work/d/h", NULL, NULL, NULL, 0, 0, 0, 0, 0), 0);
	cr_assert_eq(call6(sys_unlink, "/work/d/s", NULL, NULL, NULL, 0, 0, 0, 0, 0), 0);
	cr_assert_eq(call6(sys_rmdir, "/work/d", NULL, NULL, NULL, 0, 0, 0, 0, 0), 0);
	cr_assert_eq(call6(sys_stat, "/work/d", NULL, NULL, NULL, 0, (uintptr_t)&st, 0, 0, 0), -ENOENT);
	cr_assert_eq(call6(sys_unlink, "/etc/nope", NULL, NULL, NULL, 0, 0, 0, 0, 0), -EROFS);
	cr_assert_eq(call6(sys_unlink, "/work/nope", NULL, NULL, NULL, 0, 0, 0, 0, 0), -ENOENT);
	cr_assert_eq(call6(sys_rmdir, "/work", NULL, NULL, NULL, 0, 0, 0, 0, 0), -EBUSY);
}

Test(sys_file, access_and_umask)
{
	cr_assert_eq(call6(sys_access, "/etc/hosts", NULL, NULL, NULL, 0, R_OK, 0, 0, 0), 0);
	cr_assert_eq(call6(sys_access, "/etc/hosts", NULL, NULL, NULL, 0, W_OK, 0, 0, 0), -EROFS);
	cr_assert_eq(call6(sys_access, "/etc/hosts", NULL, NULL, NULL, 0, X_OK, 0, 0, 0), -EACCES);
	cr_assert_eq(call6(sys_access, "/etc/shadow", NULL, NULL, NULL, 0, F_OK, 0, 0, 0), -ENOENT);
	cr_assert_eq(call6(sys_umask, NULL, NULL, NULL, NULL, 077, 0, 0, 0, 0), 022);
	cr_assert_eq(call6(sys_umask, NULL, NULL, NULL, NULL, 022, 0, 0, 0, 0), 077);
}

/* Host files through the real gofer: set-id bits and owners the guest sets
 * are virtual (the stat family shows them, the host file never gets them);
 * guest root has no DAC override on them; metadata calls on an fd the VFS
 * cannot name are EPERM (a memfd keeps chmod without set-id bits). */
Test(sys_file, virtual_metadata_and_no_dac_override)
{
	struct stat st, hst;
	char hp[PATH_MAX];
	int fd, p[2];

	cr_assert_eq(geteuid(), 0, "run as root");
	cr_assert_eq(chmod(workdir, 0755), 0);    /* mkdtemp's 0700: searchable */
	snprintf(hp, sizeof hp, "%s/f", workdir);
	fd = openat_(AT_FDCWD, "/work/f", O_CREAT | O_WRONLY, 04755);
	cr_assert_geq(fd, 0);
	close(fd);
	cr_assert_eq(stat(hp, &hst), 0);
	cr_assert_eq(hst.st_mode & 07777, 0755);
	cr_assert_eq(call6(sys_newfstatat, NULL, "/work/f", NULL, NULL, AT_FDCWD, 0, (uintptr_t)&st, 0, 0), 0);
	cr_assert_eq(st.st_mode & 07777, 04755);

	cr_assert_eq(call6(sys_fchmodat, NULL, "/work/f", NULL, NULL, AT_FDCWD, 0, 02751, 0, 0), 0);
	cr_assert_eq(stat(hp, &hst), 0);
	cr_assert_eq(hst.st_mode & 07777, 0751);
	cr_assert_eq(call6(sys_fchownat, NULL, "/work/f", NULL, NULL, AT_FDCWD, 0, 65534, 65534, 0), 0);
	cr_assert_eq(stat(hp, &hst), 0);
	cr_assert(hst.st_uid == 0 && hst.st_gid == 0 && (hst.st_mode & 07777) == 0751);
	cr_assert_eq(call6(sys_newfstatat, NULL, "/work/f", NULL, NULL, AT_FDCWD, 0, (uintptr_t)&st, 0, 0), 0);
	/* chown cleared S_ISGID (group may execute) */
	cr_assert(st.st_uid == 65534 && st.st_gid == 65534 && (st.st_mode & 07777) == 0751);
	cr_assert_eq(call6(sys_fchownat, NULL, "/work/f", NULL, NULL, AT_FDCWD, 0, 0, 0, 0), 0);
	cr_assert_eq(call6(sys_newfstatat, NULL, "/work/f", NULL, NULL, AT_FDCWD, 0, (uintptr_t)&st, 0, 0), 0);
	cr_assert(st.st_uid == 0 && st.st_gid == 0);

	/* no DAC override: a 0600 file and a 0700 dir of another host uid */
	snprintf(hp, sizeof hp, "%s/p", workdir);
	fd = open(hp, O_CREAT | O_WRONLY, 0600);
	cr_assert_geq(fd, 0);
	close(fd);
	cr_assert_eq(chown(hp, 12345, 12345), 0);
	snprintf(hp, sizeof hp, "%s/pd", workdir);
	cr_assert_eq(mkdir(hp, 0700), 0);
	cr_assert_eq(chown(hp, 12345, 12345), 0);
	cr_assert_eq(openat_(AT_FDCWD, "/work/p", O_RDONLY, 0), -EACCES);
	cr_assert_eq(openat_(AT_FDCWD, "/work/pd", O_RDONLY | O_DIRECTORY, 0), -EACCES);
	cr_assert_eq(call6(sys_newfstatat, NULL, "/work/pd/x", NULL, NULL, AT_FDCWD, 0, (uintptr_t)&st, 0, 0),
		     -EACCES);
	cr_assert_eq(call6(sys_fchmodat, NULL, "/work/p", NULL, NULL, AT_FDCWD, 0, 0644, 0, 0), -EPERM);
	/* a guest that switched to 12345 acts as no host id on host files:
	 * changing ids never reaches another host user's files */
	task.cred.fsuid = task.cred.fsgid = 12345;
	cr_assert_eq(openat_(AT_FDCWD, "/work/p", O_RDONLY, 0), -EACCES);
	/* started as 12345 (--user): the owner */
	sb.idmap.act_uid = sb.idmap.act_gid = 12345;
	fd = openat_(AT_FDCWD, "/work/p", O_RDONLY, 0);
	cr_assert_geq(fd, 0);
	close(fd);
	sb.idmap.act_uid = sb.idmap.act_gid = 0;
	task.cred.fsuid = task.cred.fsgid = 0;

	/* fds the VFS cannot name */
	cr_assert_eq(pipe(p), 0);
	cr_assert_eq(call6(sys_fchmod, NULL, NULL, NULL, NULL, p[0], 04755, 0, 0, 0), -EPERM);
	cr_assert_eq(call6(sys_fchown, NULL, NULL, NULL, NULL, p[0], 0, 0, 0, 0), -EPERM);
	close(p[0]);
	close(p[1]);
	/* a memfd the guest made (sys_memfd_create: the sentry makes it and
	 * records it) takes a mode, never a set-id bit; one it did not make
	 * (a host peer's, sent over a socket) is EPERM (pts39) */
	cr_assert_eq(call6(sys_memfd_create, "t", NULL, NULL, NULL, 0, 0, 0, 0, 0), 0);
	fd = call.out_fd;
	cr_assert_geq(fd, 0);
	cr_assert_eq(call6(sys_fchmod, NULL, NULL, NULL, NULL, fd, 04755, 0, 0, 0), 0);
	cr_assert_eq(fstat(fd, &hst), 0);
	cr_assert_eq(hst.st_mode & 07777, 0755);
	close(fd);
	fd = memfd_create("peer", 0);
	cr_assert_eq(fchmod(fd, 0600), 0);
	cr_assert_eq(call6(sys_fchmod, NULL, NULL, NULL, NULL, fd, 0666, 0, 0, 0), -EPERM);
	cr_assert_eq(fstat(fd, &hst), 0);
	cr_assert_eq(hst.st_mode & 07777, 0600);
	close(fd);
}
