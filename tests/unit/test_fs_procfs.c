/* Unit tests for fs/procfs.c: a fake sandbox whose "guest procfs" is the test
 * process's own /proc and whose only guest processes are the test process
 * itself (guest pid = host pid) and pid 1, registered in the real task table.
 */
#include "fs/procfs.h"
#include "kernel/task.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <seccomp.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <unistd.h>

static struct sandbox sb;
static struct task *me, *init_task;
static char pid_s[16];

static void setup(void)
{
	memset(&sb, 0, sizeof sb);
	sb.guest_procfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	cr_assert_geq(sb.guest_procfd, 0);
	sb.hostname[0] = 0;
	me = task_create(&sb, getpid(), getpid(), NULL, 0);
	cr_assert_not_null(me);
	cr_assert_eq(me->vtgid, getpid());
	snprintf(me->exe, sizeof me->exe, "/usr/bin/fake-guest");
	snprintf(me->comm, sizeof me->comm, "fake-guest");
	snprintf(me->fs->cwd, sizeof me->fs->cwd, "/work/dir");
	me->cred = (struct cred){ .ruid = 11, .euid = 12, .suid = 13, .fsuid = 14,
				  .rgid = 21, .egid = 22, .sgid = 23, .fsgid = 24,
				  .cap_eff = CRED_BIT(CRED_CAP_SETGID), .cap_bnd = CRED_CAPS_GRANTED };
	cr_assert_eq(cred_setgroups(&me->cred, 2, (gid_t[]){ 7, 5 }), 0);
	init_task = task_create(&sb, 1, 1, NULL, 0);
	snprintf(pid_s, sizeof pid_s, "%d", (int)getpid());
}

static void teardown(void)
{
	task_remove(&sb, 1);
	task_put(init_task);
	task_remove(&sb, getpid());
	task_put(me);
	close(sb.guest_procfd);
}

TestSuite(procfs, .init = setup, .fini = teardown);

static const char *P(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static const char *P(const char *fmt, ...)
{
	static char bufs[8][256];
	static int i;
	char *b = bufs[i++ % 8];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(b, 256, fmt, ap);
	va_end(ap);
	return b;
}

static char *rl(const char *rel)
{
	static char buf[4096];
	long n = procfs_readlink(NULL, me, rel, buf, sizeof buf - 1);

	cr_assert_geq(n, 0, "readlink %s: %ld", rel, n);
	buf[n] = 0;
	return buf;
}

static char *slurp_rel(const char *rel)
{
	static char buf[65536];
	int fd = -1;
	int r = procfs_open(NULL, me, rel, O_RDONLY, &fd);
	ssize_t n, tot = 0;

	cr_assert_eq(r, 0, "open %s: %d", rel, r);
	while ((n = read(fd, buf + tot, sizeof buf - 1 - tot)) > 0)
		tot += n;
	close(fd);
	buf[tot] = 0;
	return buf;
}

static int has_ent(struct procfs_dirent *v, long n, const char *name, unsigned char type)
{
	for (long i = 0; i < n; i++)
		if (!strcmp(v[i].name, name))
			return v[i].type == type ? 1 : -1;
	return 0;
}

Test(procfs, lstat_root_and_self)
{
	struct stat st;
	int flags = -1;

	cr_assert_eq(procfs_lstat(NULL, me, "", &st, &flags), 0);
	cr_assert(S_ISDIR(st.st_mode));
	cr_assert_eq(flags, 0);
	cr_assert_eq(st.st_dev, makedev(0, 0x4d));
	cr_assert_geq(st.st_nlink, 2);
	cr_assert_eq(procfs_lstat(NULL, me, "self", &st, NULL), 0);
	cr_assert(S_ISLNK(st.st_mode));
	cr_assert_str_eq(rl("self"), pid_s);
	cr_assert_str_eq(rl("thread-self"), P("%d/task/%d", getpid(), getpid()));
	cr_assert_str_eq(rl("mounts"), "self/mounts");
}

Test(procfs, lstat_pid_dir)
{
	struct stat st, st2;

	cr_assert_eq(procfs_lstat(NULL, me, pid_s, &st, NULL), 0);
	cr_assert(S_ISDIR(st.st_mode));
	cr_assert_eq(st.st_uid, 12);
	cr_assert_eq(st.st_gid, 22);
	cr_assert_geq(st.st_nlink, 2);
	/* self/... resolves to the same inodes as <pid>/... */
	cr_assert_eq(procfs_lstat(NULL, me, P("%s/status", pid_s), &st, NULL), 0);
	cr_assert_eq(procfs_lstat(NULL, me, "self/status", &st2, NULL), 0);
	cr_assert(S_ISREG(st.st_mode));
	cr_assert_eq(st.st_size, 0);
	cr_assert_eq(st.st_ino, st2.st_ino);
	cr_assert_eq(procfs_lstat(NULL, me, "self/cmdline", &st2, NULL), 0);
	cr_assert_neq(st.st_ino, st2.st_ino);
	cr_assert_eq(procfs_lstat(NULL, me, "1", &st, NULL), 0);
	cr_assert_eq(procfs_lstat(NULL, me, "self/task", &st, NULL), 0);
	cr_assert(S_ISDIR(st.st_mode));
	cr_assert_eq(procfs_lstat(NULL, me, "thread-self/status", &st, NULL), 0);
}

Test(procfs, links)
{
	struct stat st;
	int flags = -1;

	cr_assert_eq(procfs_lstat(NULL, me, P("%s/exe", pid_s), &st, &flags), 0);
	cr_assert(S_ISLNK(st.st_mode));
	cr_assert_eq(flags, 0);
	cr_assert_str_eq(rl(P("%s/exe", pid_s)), "/usr/bin/fake-guest");
	cr_assert_str_eq(rl("self/exe"), "/usr/bin/fake-guest");
	cr_assert_str_eq(rl("self/cwd"), "/work/dir");
	cr_assert_str_eq(rl("self/root"), "/");
	/* truncation like readlink(2) */
	char small[4];
	cr_assert_eq(procfs_readlink(NULL, me, "self/exe", small, sizeof small), 4);
	cr_assert_eq(memcmp(small, "/usr", 4), 0);
	/* not a link */
	cr_assert_eq(procfs_readlink(NULL, me, "self/status", small, sizeof small), -EINVAL);
	cr_assert_eq(procfs_readlink(NULL, me, "", small, sizeof small), -EINVAL);
}

Test(procfs, fd_magic_links)
{
	struct stat st, pst;
	int flags = 0, pfd[2], sv[2];
	int efd = eventfd(0, EFD_CLOEXEC);
	int nfd = open("/dev/null", O_RDONLY | O_CLOEXEC);

	cr_assert_eq(pipe2(pfd, O_CLOEXEC), 0);
	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	cr_assert_geq(efd, 0);
	cr_assert_geq(nfd, 0);

	cr_assert_eq(procfs_lstat(NULL, me, P("%s/fd/0", pid_s), &st, &flags), 0);
	cr_assert(S_ISLNK(st.st_mode));
	cr_assert(flags & PROCFS_MAGIC_LINK);
	cr_assert_eq(procfs_lstat(NULL, me, P("self/fd/%d", pfd[1]), &st, &flags), 0);
	cr_assert(flags & PROCFS_MAGIC_LINK);
	cr_assert_eq(st.st_mode & 0777, 0300); /* write end */

	cr_assert_eq(fstat(pfd[0], &pst), 0);
	cr_assert_str_eq(rl(P("self/fd/%d", pfd[0])), P("pipe:[%lu]", (unsigned long)pst.st_ino));
	cr_assert_eq(fstat(sv[0], &pst), 0);
	cr_assert_str_eq(rl(P("self/fd/%d", sv[0])), P("socket:[%lu]", (unsigned long)pst.st_ino));
	cr_assert_str_eq(rl(P("self/fd/%d", efd)), "anon_inode:[eventfd]");
	cr_assert_str_eq(rl(P("self/fd/%d", nfd)), "/dev/null");
	/* a served guest-procfs file shows as /proc/<pid>/<name> */
	int cfd = -1;
	cr_assert_eq(procfs_open(NULL, me, "self/stat", O_RDONLY, &cfd), 0);
	cr_assert_str_eq(rl(P("self/fd/%d", cfd)), P("/proc/%d/stat", getpid()));
	close(cfd);
	cr_assert_eq(procfs_open(NULL, me, "cpuinfo", O_RDONLY, &cfd), 0);
	cr_assert_str_eq(rl(P("self/fd/%d", cfd)), "/proc/cpuinfo");
	close(cfd);
	/* so does a synthesised one */
	cr_assert_eq(procfs_open(NULL, me, "self/status", O_RDONLY, &cfd), 0);
	cr_assert_str_eq(rl(P("self/fd/%d", cfd)), P("/proc/%d/status", getpid()));
	close(cfd);
	cr_assert_eq(procfs_open(NULL, me, "sys/kernel/hostname", O_RDONLY, &cfd), 0);
	cr_assert_str_eq(rl(P("self/fd/%d", cfd)), "/proc/sys/kernel/hostname");
	close(cfd);
	/* a guest memfd shows its own name */
	cfd = memfd_create("mine", MFD_CLOEXEC);
	cr_assert_str_eq(rl(P("self/fd/%d", cfd)), "/memfd:mine (deleted)");
	close(cfd);
	cfd = memfd_create("moat-proc:../../etc/passwd", MFD_CLOEXEC);
	cr_assert_str_eq(rl(P("self/fd/%d", cfd)), "/memfd:moat-proc:../../etc/passwd (deleted)");
	close(cfd);
	/* unknown regular files: no host path ever */
	cfd = open("/etc/hostname", O_RDONLY | O_CLOEXEC);
	if (cfd >= 0) {
		cr_assert_str_eq(rl(P("self/fd/%d", cfd)), "anon_inode:[unknown]");
		close(cfd);
	}

	/* not open */
	cr_assert_eq(procfs_lstat(NULL, me, "self/fd/999999", &st, NULL), -ENOENT);
	cr_assert_eq(procfs_lstat(NULL, me, "self/fd/01", &st, NULL), -ENOENT);
	cr_assert_eq(procfs_lstat(NULL, me, "self/fd/x", &st, NULL), -ENOENT);

	/* opening a magic link duplicates the open file, never with more access */
	int fd = -1;
	cr_assert_eq(procfs_open_magic(NULL, me, P("self/fd/%d", pfd[1]), O_WRONLY, &fd), 0);
	cr_assert_eq(write(fd, "x", 1), 1);
	char c;
	cr_assert_eq(read(pfd[0], &c, 1), 1);
	cr_assert_eq(c, 'x');
	close(fd);
	cr_assert_eq(procfs_open_magic(NULL, me, P("self/fd/%d", pfd[1]), O_RDONLY, &fd), -EACCES);
	cr_assert_eq(procfs_open_magic(NULL, me, P("self/fd/%d", nfd), O_RDWR, &fd), -EACCES);
	cr_assert_eq(procfs_open_magic(NULL, me, P("self/fd/%d", nfd), O_RDONLY | O_DIRECTORY, &fd),
		     -ENOTDIR);
	cr_assert_eq(procfs_open_magic(NULL, me, "self/exe", O_RDONLY, &fd), -EINVAL);
	/* procfs_open does not follow links */
	cr_assert_eq(procfs_open(NULL, me, P("self/fd/%d", nfd), O_RDONLY, &fd), -ELOOP);

	close(pfd[0]);
	close(pfd[1]);
	close(sv[0]);
	close(sv[1]);
	close(efd);
	close(nfd);
}

Test(procfs, readdir_root)
{
	struct procfs_dirent *v = NULL;
	long n = procfs_readdir(NULL, me, "", &v);

	cr_assert_gt(n, 0);
	cr_assert_eq(has_ent(v, n, pid_s, DT_DIR), 1);
	cr_assert_eq(has_ent(v, n, "1", DT_DIR), 1);
	cr_assert_eq(has_ent(v, n, "self", DT_LNK), 1);
	cr_assert_eq(has_ent(v, n, "thread-self", DT_LNK), 1);
	cr_assert_eq(has_ent(v, n, "cpuinfo", DT_REG), 1);
	cr_assert_eq(has_ent(v, n, "meminfo", DT_REG), 1);
	cr_assert_eq(has_ent(v, n, "sys", DT_DIR), 1);
	/* no other pid of the host */
	for (long i = 0; i < n; i++) {
		if (v[i].name[0] >= '0' && v[i].name[0] <= '9')
			cr_assert(!strcmp(v[i].name, pid_s) || !strcmp(v[i].name, "1"),
				  "unexpected pid %s", v[i].name);
		cr_assert_neq(v[i].ino, 0);
	}
	free(v);
}

Test(procfs, readdir_pid_fd_task)
{
	struct procfs_dirent *v = NULL;
	struct stat st;
	long n = procfs_readdir(NULL, me, pid_s, &v);

	cr_assert_gt(n, 0);
	cr_assert_eq(has_ent(v, n, "exe", DT_LNK), 1);
	cr_assert_eq(has_ent(v, n, "fd", DT_DIR), 1);
	cr_assert_eq(has_ent(v, n, "status", DT_REG), 1);
	cr_assert_eq(has_ent(v, n, "mem", DT_REG), 0);
	/* the ino of a listed entry is the ino lstat gives */
	for (long i = 0; i < n; i++) {
		if (strcmp(v[i].name, "status"))
			continue;
		cr_assert_eq(procfs_lstat(NULL, me, "self/status", &st, NULL), 0);
		cr_assert_eq(v[i].ino, st.st_ino);
	}
	free(v);

	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	n = procfs_readdir(NULL, me, P("%s/fd", pid_s), &v);
	cr_assert_gt(n, 0);
	cr_assert_eq(has_ent(v, n, P("%d", fd), DT_LNK), 1);
	cr_assert_eq(has_ent(v, n, ".", DT_DIR), 0);
	free(v);
	close(fd);

	n = procfs_readdir(NULL, me, "self/task", &v);
	cr_assert_gt(n, 0);
	cr_assert_eq(has_ent(v, n, pid_s, DT_DIR), 1);
	free(v);

	n = procfs_readdir(NULL, me, P("self/task/%s", pid_s), &v);
	cr_assert_gt(n, 0);
	cr_assert_eq(has_ent(v, n, "task", DT_DIR), 0);
	cr_assert_eq(has_ent(v, n, "status", DT_REG), 1);
	free(v);

	cr_assert_eq(procfs_readdir(NULL, me, "self/status", &v), -ENOTDIR);
	cr_assert_eq(procfs_readdir(NULL, me, "self/exe", &v), -ENOTDIR);
	cr_assert_eq(procfs_readdir(NULL, me, "self", &v), -ENOTDIR); /* a link */
	cr_assert_eq(procfs_readdir(NULL, me, "nosuch", &v), -ENOENT);
	n = procfs_readdir(NULL, me, "sys/kernel", &v);
	cr_assert_eq(has_ent(v, n, "hostname", DT_REG), 1);
	free(v);
}

Test(procfs, status_content)
{
	char *s = slurp_rel(P("%s/status", pid_s));

	cr_assert_not_null(strstr(s, "Name:"), "%s", s);
	cr_assert_not_null(strstr(s, P("\nPid:\t%d\n", getpid())), "%s", s);
	/* the virtual credentials, not the host ones */
	cr_assert_not_null(strstr(s, "\nUid:\t11\t12\t13\t14\n"), "%s", s);
	cr_assert_not_null(strstr(s, "\nGid:\t21\t22\t23\t24\n"), "%s", s);
	cr_assert_not_null(strstr(s, "\nGroups:\t5 7 \n"), "%s", s);
	cr_assert_not_null(strstr(s, "\nCapEff:\t0000000000000040\n"), "%s", s);
	cr_assert_not_null(strstr(s, "\nCapPrm:\t0000000000000000\n"), "%s", s);
	cr_assert_not_null(strstr(s, "\nCapBnd:\t00000000a88425fb\n"), "%s", s);

	int fd = -1;
	cr_assert_eq(procfs_open(NULL, me, "self/status", O_RDONLY, &fd), 0);
	cr_assert_eq(write(fd, "x", 1), -1); /* sealed */
	close(fd);
	cr_assert_eq(procfs_open(NULL, me, "self/status", O_WRONLY, &fd), -EACCES);
	cr_assert_eq(procfs_open(NULL, me, "self/comm", O_RDWR, &fd), -EACCES);
	cr_assert_eq(procfs_open(NULL, me, "self/status", O_RDONLY | O_TRUNC, &fd), -EACCES);
	cr_assert_eq(procfs_open(NULL, me, pid_s, O_RDONLY, &fd), -EISDIR);
	cr_assert_eq(procfs_open(NULL, me, "self", O_RDONLY, &fd), -ELOOP); /* a link: the VFS follows */
	cr_assert_eq(procfs_open(NULL, me, "self/status", O_RDONLY | O_DIRECTORY, &fd), -ENOTDIR);
}

Test(procfs, guest_files)
{
	cr_assert_not_null(strstr(slurp_rel("cpuinfo"), "processor"));
	cr_assert_not_null(strstr(slurp_rel("meminfo"), "MemTotal:"));
	cr_assert_neq(slurp_rel("uptime")[0], 0);
	cr_assert_neq(slurp_rel("self/cmdline")[0], 0);
	cr_assert_not_null(strstr(slurp_rel("self/stat"), P("%d (", getpid())));
	cr_assert_not_null(strstr(slurp_rel("self/limits"), "Max open files"));
	cr_assert_not_null(strstr(slurp_rel(P("self/task/%s/status", pid_s)), "Name:"));
	cr_assert_not_null(strstr(slurp_rel("thread-self/stat"), P("%d (", getpid())));
}

Test(procfs, synthesised_files)
{
	struct utsname u;

	cr_assert_str_eq(slurp_rel("sys/kernel/hostname"), "moat\n");
	snprintf(sb.hostname, sizeof sb.hostname, "box");
	cr_assert_str_eq(slurp_rel("sys/kernel/hostname"), "box\n");
	cr_assert_str_eq(slurp_rel("sys/kernel/ostype"), "Linux\n");
	cr_assert_eq(uname(&u), 0);
	/* never the host's release or build string */
	cr_assert_str_eq(slurp_rel("sys/kernel/osrelease"), MOAT_KERNEL_RELEASE "\n");
	snprintf(sb.release, sizeof sb.release, "9.9-x");
	cr_assert_str_eq(slurp_rel("sys/kernel/osrelease"), "9.9-x\n");
	cr_assert_null(strstr(slurp_rel("version"), u.version));
	cr_assert_not_null(strstr(slurp_rel("version"), "Linux version 9.9-x "));
	cr_assert_str_eq(slurp_rel("self/mounts"), "none / moatfs ro 0 0\n");
	cr_assert_not_null(strstr(slurp_rel("self/mountinfo"), " / / "));
}

Test(procfs, refused_names)
{
	static const char *const bad[] = {
		"mem", "syscall", "stack", "auxv", "fdinfo/x", "ns/x", "environ/x",
		"mountstats", "task/1/mem",
	};
	struct stat st;
	int fd = -1;

	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		int r = procfs_open(NULL, me, P("%s/%s", pid_s, bad[i]), O_RDONLY, &fd);

		cr_assert(r == -ENOENT || r == -EACCES || r == -ENOTDIR, "%s: %d", bad[i], r);
	}
	cr_assert_eq(procfs_lstat(NULL, me, P("%s/mem", pid_s), &st, NULL), -ENOENT);
	cr_assert_eq(procfs_open(NULL, me, "kcore", O_RDONLY, &fd), -ENOENT);
	cr_assert_eq(procfs_open(NULL, me, "sysrq-trigger", O_RDONLY, &fd), -ENOENT);
	cr_assert_eq(procfs_open(NULL, me, "sys/kernel/core_pattern", O_RDONLY, &fd), -ENOENT);
}

Test(procfs, rejected_paths)
{
	static const char *const bad[] = {
		"../etc", "self/../..", "..", ".", "self/./status", "/etc", "nosuch",
		"self/nosuch", "99999999", "2", "0", "01", "-1", "self/task/2",
		"self/task/self", "sys/nosuch", "self/fd/../status",
	};
	struct stat st;

	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		cr_assert_eq(procfs_lstat(NULL, me, bad[i], &st, NULL), -ENOENT, "%s", bad[i]);
	cr_assert_eq(procfs_lstat(NULL, me, "cpuinfo/x", &st, NULL), -ENOTDIR);
	cr_assert_eq(procfs_lstat(NULL, me, "self/exe/x", &st, NULL), -ENOTDIR);
	/* empty components are tolerated */
	cr_assert_eq(procfs_lstat(NULL, me, "self//status", &st, NULL), 0);
	cr_assert_eq(procfs_lstat(NULL, NULL, "self", &st, NULL), -ENOENT);
}

static void *thread_main(void *arg)
{
	pid_t *tid = arg;

	*tid = gettid();
	pause();
	return NULL;
}

Test(procfs, threads)
{
	pthread_t th;
	volatile pid_t tid = 0;
	struct stat st;

	cr_assert_eq(pthread_create(&th, NULL, thread_main, (void *)&tid), 0);
	while (!tid)
		usleep(1000);
	struct task *t = task_create(&sb, tid, getpid(), me, 1);

	cr_assert_eq(t->vtgid, getpid());
	/* a thread is reachable under task/ and (like Linux) as /proc/<tid>, but
	 * is not listed at the top */
	cr_assert_eq(procfs_lstat(NULL, me, P("self/task/%d", tid), &st, NULL), 0);
	cr_assert_not_null(strstr(slurp_rel(P("self/task/%d/status", tid)), P("\nPid:\t%d\n", tid)));
	struct procfs_dirent *v = NULL;
	long n = procfs_readdir(NULL, me, "", &v);
	cr_assert_eq(has_ent(v, n, P("%d", tid), DT_DIR), 0);
	free(v);
	n = procfs_readdir(NULL, me, "self/task", &v);
	cr_assert_eq(has_ent(v, n, P("%d", tid), DT_DIR), 1);
	free(v);

	char buf[64];
	long l = procfs_readlink(NULL, t, "thread-self", buf, sizeof buf - 1);
	cr_assert_gt(l, 0);
	buf[l] = 0;
	cr_assert_str_eq(buf, P("%d/task/%d", getpid(), tid));
	/* a thread of another process is not under our task/ */
	cr_assert_eq(procfs_lstat(NULL, me, P("1/task/%d", tid), &st, NULL), -ENOENT);

	task_remove(&sb, tid);
	task_put(t);
}

/* The sentry's confinement refuses readlinkat: anon inodes are then named
 * from their fdinfo in the guest procfs (and an epoll probe). */
Test(procfs, anon_names_without_readlinkat)
{
	int efd = eventfd(0, EFD_CLOEXEC);
	int ep = epoll_create1(EPOLL_CLOEXEC);
	int ep2 = epoll_create1(EPOLL_CLOEXEC);
	int tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	sigset_t ss;
	struct epoll_event ev = { .events = EPOLLIN };

	sigemptyset(&ss);
	sigaddset(&ss, SIGUSR1);
	int sfd = signalfd(-1, &ss, SFD_CLOEXEC);
	cr_assert(efd >= 0 && ep >= 0 && ep2 >= 0 && tfd >= 0 && sfd >= 0);
	cr_assert_eq(epoll_ctl(ep2, EPOLL_CTL_ADD, efd, &ev), 0);

	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	cr_assert_not_null(ctx);
	cr_assert_eq(seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(readlinkat), 0), 0);
	cr_assert_eq(seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(readlink), 0), 0);
	cr_assert_eq(seccomp_load(ctx), 0);
	seccomp_release(ctx);
	char b[8];
	cr_assert_eq(readlinkat(sb.guest_procfd, "self", b, sizeof b), -1);

	cr_assert_str_eq(rl(P("self/fd/%d", efd)), "anon_inode:[eventfd]");
	cr_assert_str_eq(rl(P("self/fd/%d", ep)), "anon_inode:[eventpoll]");
	cr_assert_str_eq(rl(P("self/fd/%d", ep2)), "anon_inode:[eventpoll]");
	cr_assert_str_eq(rl(P("self/fd/%d", tfd)), "anon_inode:[timerfd]");
	cr_assert_str_eq(rl(P("self/fd/%d", sfd)), "anon_inode:[signalfd]");
	/* sockets and pipes never needed it */
	int p[2];
	struct stat st;
	cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
	cr_assert_eq(fstat(p[0], &st), 0);
	cr_assert_str_eq(rl(P("self/fd/%d", p[0])), P("pipe:[%lu]", (unsigned long)st.st_ino));
}
