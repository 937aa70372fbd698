/* sentry/confine.c - once set-up is over the sentry confines itself: it opens
 * no host path by name (the gofer resolves every host path), execs nothing,
 * and makes only the calls it needs.
 *
 * An allowlist with TSYNC (every sentry thread; threads started later inherit
 * it). Anything else fails with EPERM. Path-taking calls are allowed only in
 * the shapes the sentry uses:
 *   openat      dirfd == the guest pid namespace's procfs fd, O_RDONLY, or
 *               access mode 3 (no read, no write: an O_PATH open's stand-in,
 *               syscalls/sys_file.c return_reopened)
 *   readlinkat  dirfd == that procfs fd
 *   newfstatat  AT_EMPTY_PATH (fstat of a held fd)
 *   openat2, readlinkat  dirfd == an export root fd (direct file access,
 *               fs/directfs.c; what confines it is the mount layer, below:
 *               read-only binds in our root, and for cow exports the
 *               gofer's read-only clones of its overlays)
 *   kcmp        KCMP_FILE (the lock table: is this the same open file
 *               description?)
 * No fchown/fsetxattr on held fds: the gofer makes every change to a file of
 * the view. fchmod and futimens stay for guest memfds (fs/ allows them on
 * memfds only); on host files the sentry's own uid is not the owner.
 * The seccomp rule on openat sees the dirfd, not the path: an absolute path
 * would ignore the dirfd. What makes that harmless is the sentry's root, an
 * empty read-only tmpfs in a mount namespace of its own holding only
 * read-only binds of the host-directory exports, hidden names masked
 * (privilege.c).
 * ioctl is limited to the seccomp notification requests and TCGETS (isatty).
 * openat2's flags live in memory: allowed only on the export root fds, where
 * every write/create is EROFS by the mount layer. No socket (connections to
 * the gofer arrive over the control socket), no exec, no mount, no namespace.
 *
 * MOAT_SENTRY_FILTER_LEARN=1 logs (SECCOMP_RET_LOG, see dmesg) instead of
 * refusing, to find a call the list misses. */
#include "sentry/sentry.h"
#include "sentry/broker.h"
#include "sentry/netd.h"
#include "kernel/task.h"
#include "common/log.h"
#include "common/util.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/kcmp.h>
#include <linux/seccomp.h>
#include <seccomp.h>

#include "common/sanitize.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/openat2.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)
#endif

static const int allowed[] = {
	/* fds the sentry holds: listener, gofer sockets, memfds, pidfds, guest
	 * fds duplicated with pidfd_getfd */
	SCMP_SYS(read), SCMP_SYS(write), SCMP_SYS(pread64), SCMP_SYS(pwrite64),
	SCMP_SYS(readv), SCMP_SYS(writev), SCMP_SYS(lseek), SCMP_SYS(close),
	SCMP_SYS(dup), SCMP_SYS(dup2), SCMP_SYS(dup3), SCMP_SYS(fcntl),
	SCMP_SYS(fstat), SCMP_SYS(fstatfs), SCMP_SYS(getdents64), SCMP_SYS(ftruncate),
	SCMP_SYS(fchmod), /* a guest memfd's mode (set-id stripped); a host file's owner is not us */
	SCMP_SYS(fsync), SCMP_SYS(fdatasync), SCMP_SYS(fgetxattr), SCMP_SYS(flistxattr),
	SCMP_SYS(memfd_create), SCMP_SYS(pipe2),
	SCMP_SYS(sendmsg), SCMP_SYS(recvmsg), SCMP_SYS(sendto), SCMP_SYS(recvfrom),
	SCMP_SYS(poll), SCMP_SYS(ppoll), SCMP_SYS(getsockname), SCMP_SYS(getpeername),
	SCMP_SYS(getsockopt), /* netconn.c: a guest socket's type, state and options */
	SCMP_SYS(shutdown), /* the gofer's control socket: how the sandbox ends it */
	/* guests */
	SCMP_SYS(ptrace), SCMP_SYS(wait4), SCMP_SYS(waitid), SCMP_SYS(process_vm_readv),
	SCMP_SYS(process_vm_writev), SCMP_SYS(pidfd_open), SCMP_SYS(pidfd_getfd),
	SCMP_SYS(kill), SCMP_SYS(tgkill), SCMP_SYS(tkill),
	SCMP_SYS(pidfd_send_signal), /* limits.c ends guest processes by pidfd: no pid reuse (kill is allowed anyway) */
	/* memory, threads, signals, time */
	SCMP_SYS(mmap), SCMP_SYS(munmap), SCMP_SYS(mprotect), SCMP_SYS(mremap),
	SCMP_SYS(madvise), SCMP_SYS(brk), SCMP_SYS(mincore), SCMP_SYS(msync),
	SCMP_SYS(clone), SCMP_SYS(clone3), SCMP_SYS(set_robust_list), SCMP_SYS(rseq),
	SCMP_SYS(futex), SCMP_SYS(exit), SCMP_SYS(exit_group), SCMP_SYS(sched_yield),
	SCMP_SYS(getpid), SCMP_SYS(gettid), SCMP_SYS(getuid), SCMP_SYS(geteuid),
	SCMP_SYS(getgid), SCMP_SYS(getegid), SCMP_SYS(rt_sigaction),
	SCMP_SYS(rt_sigprocmask), SCMP_SYS(rt_sigreturn), SCMP_SYS(sigaltstack),
	SCMP_SYS(restart_syscall), SCMP_SYS(nanosleep), SCMP_SYS(clock_nanosleep),
	SCMP_SYS(clock_gettime), SCMP_SYS(gettimeofday), SCMP_SYS(getrandom),
	SCMP_SYS(sched_getaffinity), SCMP_SYS(prlimit64),
	SCMP_SYS(sysinfo), /* the guest's sysinfo, capped (fs/procfs.c) */
};

static int rule(scmp_filter_ctx ctx, int nr, unsigned n, const struct scmp_arg_cmp *c)
{
	return seccomp_rule_add_array(ctx, SCMP_ACT_ALLOW, nr, n, c);
}

int confine_sentry(struct sandbox *sb, char *err, size_t errlen)
{
	int learn = getenv("MOAT_SENTRY_FILTER_LEARN") != NULL;
	int pfd = sb->guest_procfd;
	if (pfd < 0) {
		snprintf(err, errlen, "sentry confinement: no guest procfs");
		return -EINVAL;
	}
	scmp_filter_ctx ctx = seccomp_init(learn ? SCMP_ACT_LOG : SCMP_ACT_ERRNO(EPERM));
	if (!ctx) {
		snprintf(err, errlen, "sentry confinement: seccomp_init failed");
		return -ENOMEM;
	}
	int rc = 0;
	for (size_t i = 0; i < ARRAY_SIZE(allowed) && !rc; i++)
		rc = rule(ctx, allowed[i], 0, NULL);
	if (!rc)
		rc = moat_sanitizer_allow(ctx);
	if (!rc) {
		struct scmp_arg_cmp c[2] = {
			{ .arg = 0, .op = SCMP_CMP_EQ, .datum_a = (scmp_datum_t)pfd },
			{ .arg = 2, .op = SCMP_CMP_MASKED_EQ, .datum_a = O_ACCMODE, .datum_b = O_RDONLY },
		};
		rc = rule(ctx, SCMP_SYS(openat), 2, c);
		c[1].datum_b = O_ACCMODE;
		if (!rc)
			rc = rule(ctx, SCMP_SYS(openat), 2, c);
	}
	if (!rc) {
		struct scmp_arg_cmp c = { .arg = 0, .op = SCMP_CMP_EQ, .datum_a = (scmp_datum_t)pfd };
		rc = rule(ctx, SCMP_SYS(readlinkat), 1, &c);
	}
	/* a guest socket's classic BPF filter, made here on the pinned file
	 * (netconn.c sys_setsockopt): SOL_SOCKET and the filter options only */
	static const int filter_opts[] = { SO_ATTACH_FILTER, SO_DETACH_FILTER, SO_LOCK_FILTER,
					   SO_ATTACH_REUSEPORT_CBPF, SO_DETACH_REUSEPORT_BPF };
	for (size_t i = 0; i < ARRAY_SIZE(filter_opts) && !rc; i++) {
		struct scmp_arg_cmp c[2] = {
			{ .arg = 1, .op = SCMP_CMP_EQ, .datum_a = SOL_SOCKET },
			{ .arg = 2, .op = SCMP_CMP_EQ, .datum_a = (scmp_datum_t)filter_opts[i] },
		};
		rc = rule(ctx, SCMP_SYS(setsockopt), 2, c);
	}
	/* direct file access (fs/directfs.c): openat2 and readlinkat on the
	 * export root fds only. openat2's flags live in memory where the rule
	 * cannot see them: what holds is the mount layer (privilege.c) — every
	 * path from these fds, "..", absolute or through a symlink, stays in our
	 * root, where each export is a read-only bind with its hidden names
	 * masked and the rest is an empty read-only tmpfs (a write or create
	 * open is EROFS whatever the flags); a cow export's root is a detached
	 * read-only clone of the gofer's overlay (masks included): ".." at its
	 * root stays there, an absolute path resolves in our root, a write is
	 * EROFS. */
	size_t nroots;
	const int *roots = priv_export_roots(&nroots);
	for (size_t i = 0; i < nroots && !rc; i++) {
		if (roots[i] < 0)
			continue;
		struct scmp_arg_cmp c = { .arg = 0, .op = SCMP_CMP_EQ, .datum_a = (scmp_datum_t)roots[i] };
		rc = rule(ctx, SCMP_SYS(openat2), 1, &c);
		if (!rc)
			rc = rule(ctx, SCMP_SYS(readlinkat), 1, &c);
	}
	if (!rc) {
		struct scmp_arg_cmp c = { .arg = 3, .op = SCMP_CMP_MASKED_EQ, .datum_a = AT_EMPTY_PATH,
					  .datum_b = AT_EMPTY_PATH };
		rc = rule(ctx, SCMP_SYS(newfstatat), 1, &c);
	}
	if (!rc) { /* futimens of a guest memfd */
		struct scmp_arg_cmp c = { .arg = 1, .op = SCMP_CMP_EQ, .datum_a = 0 };
		rc = rule(ctx, SCMP_SYS(utimensat), 1, &c);
	}
	if (!rc) {
		/* inotify_add_watch (syscalls/sys_file.c): a short-lived thread
		 * takes a working directory of its own (CLONE_FS only), enters
		 * the watched directory by fd and adds the watch by name */
		struct scmp_arg_cmp c = { .arg = 0, .op = SCMP_CMP_EQ, .datum_a = CLONE_FS };
		rc = rule(ctx, SCMP_SYS(unshare), 1, &c);
		if (!rc)
			rc = rule(ctx, SCMP_SYS(fchdir), 0, NULL);
		if (!rc)
			rc = rule(ctx, SCMP_SYS(inotify_add_watch), 0, NULL);
	}
	if (!rc) {
		/* the lock table (syscalls/sys_lock.c) tells open file
		 * descriptions apart: KCMP_FILE only, which compares, never acts */
		struct scmp_arg_cmp c = { .arg = 2, .op = SCMP_CMP_EQ, .datum_a = KCMP_FILE };
		rc = rule(ctx, SCMP_SYS(kcmp), 1, &c);
	}
	const unsigned long ioctls[] = {
		SECCOMP_IOCTL_NOTIF_RECV, SECCOMP_IOCTL_NOTIF_SEND, SECCOMP_IOCTL_NOTIF_ID_VALID,
		SECCOMP_IOCTL_NOTIF_ADDFD, SECCOMP_IOCTL_NOTIF_SET_FLAGS, TCGETS,
	};
	for (size_t i = 0; i < ARRAY_SIZE(ioctls) && !rc; i++) {
		struct scmp_arg_cmp c = { .arg = 1, .op = SCMP_CMP_MASKED_EQ, .datum_a = 0xffffffffUL,
					  .datum_b = (uint32_t)ioctls[i] };
		rc = rule(ctx, SCMP_SYS(ioctl), 1, &c);
	}
	if (!rc) {
		/* -t: window size in, the caller's terminal settings restored at exit */
		struct scmp_arg_cmp g = { .arg = 1, .op = SCMP_CMP_MASKED_EQ, .datum_a = 0xffffffffUL,
					  .datum_b = TIOCGWINSZ };
		rc = rule(ctx, SCMP_SYS(ioctl), 1, &g);
		if (!rc && tty_master() >= 0) {
			struct scmp_arg_cmp sw[2] = {
				{ .arg = 0, .op = SCMP_CMP_EQ, .datum_a = (scmp_datum_t)tty_master() },
				{ .arg = 1, .op = SCMP_CMP_MASKED_EQ, .datum_a = 0xffffffffUL, .datum_b = TIOCSWINSZ },
			};
			rc = rule(ctx, SCMP_SYS(ioctl), 2, sw);
			struct scmp_arg_cmp ts[2] = {
				{ .arg = 0, .op = SCMP_CMP_EQ, .datum_a = 0 },
				{ .arg = 1, .op = SCMP_CMP_MASKED_EQ, .datum_a = 0xffffffffUL, .datum_b = TCSETSW },
			};
			if (!rc)
				rc = rule(ctx, SCMP_SYS(ioctl), 2, ts);
		}
	}
	/* a binary tree over the syscall numbers: the ioctls of every trapped
	 * call (their rules look at arguments, so the kernel's per-syscall
	 * allow cache cannot skip the filter) walk a few tests, not the list */
	if (!rc)
		rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
	if (!rc)
		rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_TSYNC, 1);
	if (!rc)
		rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 1);
	if (!rc)
		rc = seccomp_load(ctx);
	seccomp_release(ctx);
	if (rc) {
		snprintf(err, errlen, "sentry confinement: %s", strerror(-rc));
		return rc;
	}
	return 0;
}

/* ---- Landlock scope: who the sentry's tree may signal and trace ----
 *
 * Applied right after the sentry takes its host uid, before moat-netd and
 * the guest's init are forked, so they are in the same domain. A Landlock
 * domain limits ptrace (and process_vm_*, pidfd_getfd: the same access
 * check) to processes of the same or a nested domain, and with
 * LANDLOCK_SCOPE_SIGNAL (ABI 6, Linux 6.12) signals too (kill, tgkill,
 * pidfd_send_signal, F_SETOWN). Run rootless, the sentry shares the caller's
 * uid: this is what keeps a compromised sentry (or guest) from signalling or
 * tracing the caller's other processes. The domain handles no file or
 * network access (a domain that handles file access may not mount, and the
 * sentry and the init still build their roots). Before ABI 6 a domain needs
 * a handled access, so none is made. Returns the ABI used, 0 if none. */
static int scope_abi;

int confine_scope(char *err, size_t errlen)
{
	struct {
		uint64_t handled_access_fs, handled_access_net, scoped;
	} ra = { .scoped = 1ULL << 1 /* LANDLOCK_SCOPE_SIGNAL */ };
	long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, 1U /* _VERSION */);
	if (abi < 6 || getenv("MOAT_NO_LANDLOCK_SCOPE")) /* (the knob: to watch the test fail) */
		return 0;
	long rs = syscall(SYS_landlock_create_ruleset, &ra, sizeof ra, 0);
	if (rs < 0) {
		snprintf(err, errlen, "sentry confinement: landlock_create_ruleset: %s", strerror(errno));
		return -1;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    syscall(SYS_landlock_restrict_self, (int)rs, 0) < 0) {
		snprintf(err, errlen, "sentry confinement: landlock_restrict_self: %s", strerror(errno));
		close((int)rs);
		return -1;
	}
	close((int)rs);
	scope_abi = (int)abi;
	return scope_abi;
}

/* ---- the test hook: what a compromised sentry would try ---- */

static void probe(const char *name, long r)
{
	if (r >= 0) {
		fprintf(stderr, "confinement-probe %s: ALLOWED\n", name);
		if (r > 2)
			close((int)r);
	} else {
		fprintf(stderr, "confinement-probe %s: refused (%s)\n", name, strerror(errno));
	}
}

/* An open that succeeded on a mask (the empty file or tmpfs over a hidden
 * name) reveals nothing: ALLOWED only if there is something to read. */
static void probe_content(const char *name, long r)
{
	if (r >= 0) {
		char b[4096];
		long n = read((int)r, b, 1);
		if (n < 0 && errno == EISDIR) {
			n = syscall(SYS_getdents64, (int)r, b, sizeof b);
			/* "." and ".." alone: an empty mask */
			long k = 0, off = 0;
			while (n > 0 && off < n) {
				unsigned short reclen = *(unsigned short *)(b + off + 16);
				const char *nm = b + off + 19;
				if (strcmp(nm, ".") && strcmp(nm, ".."))
					k++;
				off += reclen;
			}
			n = k;
		}
		close((int)r);
		if (n <= 0) {
			fprintf(stderr, "confinement-probe %s: refused (empty mask)\n", name);
			return;
		}
		fprintf(stderr, "confinement-probe %s: ALLOWED\n", name);
		return;
	}
	probe(name, r);
}

void confine_selftest(struct sandbox *sb)
{
	int pfd = sb->guest_procfd;
	const char *e = getenv("MOAT_TEST_CONFINEMENT_PID");
	pid_t host = e ? (pid_t)atoi(e) : 0;
	struct open_how how = { .flags = O_RDONLY };

	probe("open_abs", open("/etc/passwd", O_RDONLY | O_CLOEXEC));
	probe("openat_cwd", openat(AT_FDCWD, "etc/passwd", O_RDONLY | O_CLOEXEC));
	/* the allowed dirfd with an absolute path: the rule cannot see the path */
	probe("openat_procfd_abs", openat(pfd, "/etc/passwd", O_RDONLY | O_CLOEXEC));
	probe("openat_procfd_dotdot", openat(pfd, "../../../etc/passwd", O_RDONLY | O_CLOEXEC));
	probe("openat_procfd_root_link", openat(pfd, "1/root/etc/passwd", O_RDONLY | O_CLOEXEC));
	probe("openat_procfd_write", openat(pfd, "1/comm", O_WRONLY | O_CLOEXEC));
	probe("openat2", syscall(SYS_openat2, AT_FDCWD, "/etc/passwd", &how, sizeof how));
	/* direct file access: from the export root fds the filter allows, try
	 * to leave the exports or write them (privilege.c's mount layer) */
	size_t nroots;
	const int *roots = priv_export_roots(&nroots);
	int nr = 0;
	for (size_t i = 0; i < nroots; i++) {
		if (roots[i] < 0)
			continue;
		char lbl[64];
		struct open_how bare = { .flags = O_RDONLY | O_CLOEXEC };
		struct open_how wr = { .flags = O_WRONLY | O_CLOEXEC };
		struct open_how cr = { .flags = O_RDWR | O_CREAT | O_CLOEXEC, .mode = 0644 };
		struct open_how tmp = { .flags = O_TMPFILE | O_RDWR | O_CLOEXEC, .mode = 0600 };
#define P2(what, fd, path, h) do { snprintf(lbl, sizeof lbl, "export%zu_%s", i, what); \
	probe_content(lbl, syscall(SYS_openat2, fd, path, h, sizeof *(h))); } while (0)
		P2("abs_shadow", roots[i], "/etc/shadow", &bare);
		P2("abs_passwd", roots[i], "/etc/passwd", &bare);
		P2("dotdot_shadow", roots[i], "../etc/shadow", &bare);
		P2("dotdot_root", roots[i], "../../root", &bare);
		P2("dotdot3_passwd", roots[i], "../../../etc/passwd", &bare);
		P2("hidden_shadow", roots[i], "shadow", &bare);
		P2("hidden_etc_shadow", roots[i], "etc/shadow", &bare);
		P2("hidden_machine_id", roots[i], "machine-id", &bare); /* world-readable: only the mask stops it */
		P2("rel_etc_passwd", roots[i], "etc/passwd", &bare);
		P2("proc_self", roots[i], "/proc/self/root/etc/shadow", &bare);
		P2("write_passwd", roots[i], "passwd", &wr);
		/* symlinks that lead out of the export (/etc/mtab -> ../proc/self/mounts,
		 * /etc/os-release -> ../usr/lib/os-release): followed, they resolve in
		 * our root, where neither exists */
		P2("symlink_mtab", roots[i], "mtab", &bare);
		P2("symlink_os_release", roots[i], "os-release", &bare);
		P2("create", roots[i], "moat-probe-created", &cr);
		P2("tmpfile", roots[i], ".", &tmp);
		/* O_PATH (the direct negative lookup's open) and stat: success
		 * alone would reveal a host file's existence and metadata */
		struct open_how op = { .flags = O_PATH | O_NOFOLLOW | O_CLOEXEC };
#define PS(what, fd, path, h) do { snprintf(lbl, sizeof lbl, "export%zu_%s", i, what); \
	probe(lbl, syscall(SYS_openat2, fd, path, h, sizeof *(h))); } while (0)
		PS("opath_abs_shadow", roots[i], "/etc/shadow", &op);
		PS("opath_dotdot_shadow", roots[i], "../etc/shadow", &op);
		PS("opath_dotdot3_passwd", roots[i], "../../../etc/passwd", &op);
#undef PS
		struct stat sst;
		snprintf(lbl, sizeof lbl, "export%zu_stat_dotdot_shadow", i);
		probe(lbl, fstatat(roots[i], "../etc/shadow", &sst, AT_EMPTY_PATH) < 0 ? -1 : 0);
		snprintf(lbl, sizeof lbl, "export%zu_stat_abs_shadow", i);
		probe(lbl, fstatat(roots[i], "/etc/shadow", &sst, AT_EMPTY_PATH) < 0 ? -1 : 0);
		snprintf(lbl, sizeof lbl, "export%zu_readlink_abs", i);
		char lb[64];
		probe(lbl, readlinkat(roots[i], "/proc/self/exe", lb, sizeof lb) < 0 ? -1 : 3);
#undef P2
		nr++;
	}
	fprintf(stderr, "confinement-probe export_roots: %d\n", nr);
	probe("socket_inet", socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
	probe("socket_unix", socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
	char *argv[] = { "/bin/true", NULL };
	probe("execve", execve("/bin/true", argv, argv + 1));
	probe("mkdir", mkdirat(pfd, "x", 0700));
	probe("fchown_held_fd", fchown(pfd, 0, 0));
	probe("unshare_user", unshare(CLONE_NEWUSER));
	probe("mount", mount("none", "/", "tmpfs", 0, NULL));
	if (host > 0) {
		probe("kill_host_pid", kill(host, 0));
		probe("kill_host_pid_term", kill(host, SIGTERM));
		probe("ptrace_host_pid", ptrace(PTRACE_ATTACH, host, 0, 0));
		char b[8];
		struct iovec l = { b, sizeof b }, r = { (void *)0x400000, sizeof b };
		probe("vm_readv_host_pid", process_vm_readv(host, &l, 1, &r, 1, 0));
		long pid_fd = syscall(SYS_pidfd_open, host, 0);
		probe("pidfd_getfd_host_pid", pid_fd < 0 ? pid_fd : syscall(SYS_pidfd_getfd, (int)pid_fd, 0, 0));
		if (pid_fd >= 0)
			close((int)pid_fd);
	}
	netconn_selftest();
	broker_selftest();
	fprintf(stderr, "confinement-probe landlock_abi: %d\n", scope_abi);
	fprintf(stderr, "confinement-probe done\n");
}
