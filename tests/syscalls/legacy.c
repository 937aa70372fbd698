/* The older and rarer entry points of rows the table calls FULL, through the raw
 * syscall (libc would pick the modern one): stat, lstat, getdents, fchown,
 * lchown, fchownat, open, mknod (a FIFO), utime, utimes, futimesat, faccessat, fchmodat2, uname,
 * rt_tgsigqueueinfo, clock_settime (never a valid time), sethostname/setdomainname (natively inside a user+UTS
 * namespace of its own: never the host's name), and the syscalls Linux never
 * had or removed (ENOSYS everywhere). */
#include "t.h"
#include <sched.h>
#include <signal.h>
#include <utime.h>
#include <sys/time.h>
#include <sys/utsname.h>
#include <time.h>

#ifndef SYS_fchmodat2
#define SYS_fchmodat2 452
#endif

static volatile sig_atomic_t got_val = -1, got_code;
static void on_sig(int s, siginfo_t *si, void *u)
{
	(void)s, (void)u;
	got_val = si->si_value.sival_int;
	got_code = si->si_code;
}

static void names(void)
{
	/* natively (and through fake-moat, the self-check's native guest run: not
	 * confined) a user+UTS namespace of our own, so the host keeps its name */
	if (!t_confined() && unshare(CLONE_NEWUSER | CLONE_NEWUTS) != 0)
		return;
	int h = sethostname("moat-legacy", 11);
	int d = setdomainname("moat.test", 9);
	struct utsname u;
	uname(&u);
	CHECK(h == 0 && d == 0 && !strcmp(u.nodename, "moat-legacy") && !strcmp(u.domainname, "moat.test"),
	      "sethostname_setdomainname", "sethostname %d setdomainname %d: %s [%s] [%s]", h, d,
	      strerror(errno), u.nodename, u.domainname);
	errno = 0;
	static const char longname[70] = "x";
	CHECK(sethostname(longname, 65) < 0 && errno == EINVAL, "sethostname_too_long", "errno %s", strerror(errno));
}

int main(int argc, char **argv)
{
	t_setup(argc, argv, "legacy");
	char f[PATH_MAX + 8], l[PATH_MAX + 8], d[PATH_MAX + 8];
	snprintf(f, sizeof f, "%s/f", t_scratch);
	snprintf(l, sizeof l, "%s/l", t_scratch);
	snprintf(d, sizeof d, "%s/d", t_scratch);
	if (t_write_file(f, "hello", 0640) < 0 || symlink("f", l) < 0 || mkdir(d, 0755) < 0)
		DIE("setup: %s", strerror(errno));

	struct stat s, ls;
	long r = syscall(SYS_stat, f, &s);
	CHECK(r == 0 && s.st_size == 5 && (s.st_mode & 07777) == 0640 && S_ISREG(s.st_mode), "stat",
	      "r %ld size %ld mode %o", r, (long)s.st_size, s.st_mode);
	r = syscall(SYS_lstat, l, &ls);
	CHECK(r == 0 && S_ISLNK(ls.st_mode) && ls.st_size == 1, "lstat", "r %ld mode %o", r, ls.st_mode);
	errno = 0;
	EXPECT_ERR(syscall(SYS_stat, "/nonexistent/x", &s), ENOENT, "stat_enoent");

	/* getdents (the old struct linux_dirent): . .. a b */
	char a[PATH_MAX + 16];
	snprintf(a, sizeof a, "%s/a", d);
	t_write_file(a, "", 0644);
	snprintf(a, sizeof a, "%s/b", d);
	t_write_file(a, "", 0644);
	int dfd = open(d, O_RDONLY | O_DIRECTORY);
	char buf[4096];
	int n = 0;
	long got;
	while ((got = syscall(SYS_getdents, dfd, buf, sizeof buf)) > 0)
		for (long off = 0; off < got;) {
			unsigned short reclen = *(unsigned short *)(buf + off + 2 * sizeof(long));
			n++;
			off += reclen;
		}
	CHECK(got == 0 && n == 4, "getdents", "got %ld entries %d", got, n);
	lseek(dfd, 0, SEEK_SET);
	EXPECT_ERR(syscall(SYS_getdents, dfd, buf, 8), EINVAL, "getdents_small_buffer");
	close(dfd);

	/* ownership to our own ids: a no-op that must succeed */
	uid_t u = getuid();
	gid_t g = getgid();
	int fd = open(f, O_RDONLY);
	EXPECT_OK(syscall(SYS_fchown, fd, u, g), "fchown_own_ids");
	EXPECT_OK(syscall(SYS_lchown, l, u, g), "lchown_own_ids");
	EXPECT_OK(syscall(SYS_fchownat, AT_FDCWD, f, -1, -1, 0), "fchownat_minus_one");
	errno = 0;
	EXPECT_ERR(syscall(SYS_fchownat, AT_FDCWD, f, u, g, 0x4000000), EINVAL, "fchownat_bad_flags");

	/* times */
	struct utimbuf ub = { .actime = 1000000, .modtime = 2000000 };
	r = syscall(SYS_utime, f, &ub);
	stat(f, &s);
	CHECK(r == 0 && s.st_mtime == 2000000 && s.st_atime == 1000000, "utime", "r %ld mtime %ld", r,
	      (long)s.st_mtime);
	struct timeval tv[2] = { { 3000000, 0 }, { 4000000, 500000 } };
	r = syscall(SYS_utimes, f, tv);
	stat(f, &s);
	CHECK(r == 0 && s.st_mtime == 4000000 && s.st_mtim.tv_nsec == 500000000, "utimes",
	      "r %ld mtime %ld.%09ld", r, (long)s.st_mtime, s.st_mtim.tv_nsec);
	tv[1].tv_sec = 5000000;
	r = syscall(SYS_futimesat, AT_FDCWD, f, tv);
	stat(f, &s);
	CHECK(r == 0 && s.st_mtime == 5000000, "futimesat", "r %ld mtime %ld", r, (long)s.st_mtime);
	tv[1].tv_usec = 2000000;
	errno = 0;
	EXPECT_ERR(syscall(SYS_utimes, f, tv), EINVAL, "utimes_bad_usec");

	/* access checks and modes */
	EXPECT_OK(syscall(SYS_faccessat, AT_FDCWD, f, R_OK), "faccessat_r");
	errno = 0;
	EXPECT_ERR(syscall(SYS_faccessat, AT_FDCWD, "/nonexistent/x", F_OK), ENOENT, "faccessat_enoent");
	r = syscall(SYS_fchmodat2, AT_FDCWD, f, 0600, 0);
	stat(f, &s);
	CHECK(r == 0 && (s.st_mode & 07777) == 0600, "fchmodat2", "r %ld (%s) mode %o", r, strerror(errno),
	      s.st_mode & 07777);
	errno = 0;
	EXPECT_ERR(syscall(SYS_fchmodat2, AT_FDCWD, f, 0600, 0x4000000), EINVAL, "fchmodat2_bad_flags");
	close(fd);

	/* open (libc uses openat) and mknod of a FIFO (libc uses mknodat) */
	char p2[PATH_MAX + 16];
	snprintf(p2, sizeof p2, "%s/new", t_scratch);
	int ofd = (int)syscall(SYS_open, p2, O_WRONLY | O_CREAT | O_EXCL, 0600);
	CHECK(ofd >= 0 && write(ofd, "abc", 3) == 3 && stat(p2, &s) == 0 && s.st_size == 3, "open_creat",
	      "fd %d: %s", ofd, strerror(errno));
	if (ofd >= 0)
		close(ofd);
	EXPECT_ERR(syscall(SYS_open, p2, O_WRONLY | O_CREAT | O_EXCL, 0600), EEXIST, "open_excl_eexist");
	snprintf(p2, sizeof p2, "%s/fifo", t_scratch);
	r = syscall(SYS_mknod, p2, S_IFIFO | 0600, 0);
	CHECK(r == 0 && stat(p2, &s) == 0 && S_ISFIFO(s.st_mode), "mknod_fifo", "r %ld: %s", r, strerror(errno));
	EXPECT_ERR(syscall(SYS_mknod, p2, S_IFIFO | 0600, 0), EEXIST, "mknod_eexist");

	/* clock_settime: the clocks Linux cannot set and bad times are EINVAL
	 * (never a valid CLOCK_REALTIME time: natively as root it would set
	 * the host's clock) */
	struct timespec ts = { .tv_sec = 1, .tv_nsec = 0 };
	EXPECT_ERR(syscall(SYS_clock_settime, CLOCK_MONOTONIC, &ts), EINVAL, "clock_settime_monotonic");
	EXPECT_ERR(syscall(SYS_clock_settime, 100, &ts), EINVAL, "clock_settime_bad_clock");
	ts.tv_nsec = 2000000000L;
	EXPECT_ERR(syscall(SYS_clock_settime, CLOCK_REALTIME, &ts), EINVAL, "clock_settime_realtime_bad_nsec");
	EXPECT_ERR(syscall(SYS_clock_settime, CLOCK_REALTIME, (void *)8), EFAULT, "clock_settime_efault");

	/* uname: the fields that do not name the machine */
	struct utsname un;
	r = syscall(SYS_uname, &un);
	CHECK(r == 0 && !strcmp(un.sysname, "Linux") && !strcmp(un.machine, "x86_64"), "uname", "r %ld %s %s", r,
	      un.sysname, un.machine);

	/* rt_tgsigqueueinfo to our own thread: the handler sees the value */
	struct sigaction sa = { .sa_sigaction = on_sig, .sa_flags = SA_SIGINFO };
	sigaction(SIGUSR1, &sa, NULL);
	siginfo_t si;
	memset(&si, 0, sizeof si);
	si.si_signo = SIGUSR1;
	si.si_code = SI_QUEUE;
	si.si_value.sival_int = 42;
	si.si_pid = getpid();
	si.si_uid = getuid();
	r = syscall(SYS_rt_tgsigqueueinfo, getpid(), syscall(SYS_gettid), SIGUSR1, &si);
	CHECK(r == 0 && got_val == 42 && got_code == SI_QUEUE, "rt_tgsigqueueinfo", "r %ld val %d code %d", r,
	      (int)got_val, (int)got_code);
	/* a code >= 0 claims the kernel sent it: EPERM for another process */
	pid_t child = fork();
	if (child == 0) {
		pause();
		_exit(0);
	}
	si.si_code = SI_KERNEL;
	EXPECT_ERR(syscall(SYS_rt_tgsigqueueinfo, child, child, SIGUSR1, &si), EPERM,
		   "rt_tgsigqueueinfo_fake_kernel_code");
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);

	/* never implemented or removed: ENOSYS natively and inside */
	static const struct { long nr; const char *name; } gone[] = {
		{ SYS_uselib, "uselib" }, { SYS__sysctl, "_sysctl" }, { SYS_create_module, "create_module" },
		{ SYS_get_kernel_syms, "get_kernel_syms" }, { SYS_query_module, "query_module" },
		{ SYS_nfsservctl, "nfsservctl" }, { SYS_getpmsg, "getpmsg" }, { SYS_putpmsg, "putpmsg" },
		{ SYS_afs_syscall, "afs_syscall" }, { SYS_tuxcall, "tuxcall" }, { SYS_security, "security" },
		{ SYS_lookup_dcookie, "lookup_dcookie" }, { SYS_epoll_ctl_old, "epoll_ctl_old" },
		{ SYS_epoll_wait_old, "epoll_wait_old" }, { SYS_vserver, "vserver" },
	};
	for (size_t i = 0; i < sizeof gone / sizeof gone[0]; i++) {
		char name[64];
		snprintf(name, sizeof name, "enosys_%s", gone[i].name);
		errno = 0;
		EXPECT_ERR(syscall(gone[i].nr, 0, 0, 0, 0, 0, 0), ENOSYS, name);
	}

	/* last: natively this enters namespaces of its own */
	if (getuid() == 0)
		names();
	return t_done();
}
