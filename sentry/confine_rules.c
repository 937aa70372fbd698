/* sentry/confine_rules.c - the sentry's own seccomp allowlist (confine.c
 * says what it allows and why), as libseccomp rules. Shared by the run time
 * (confine.c) and the build (gen_confine.c), which compiles it once with
 * placeholder fds (confine_rules.h) so that start-up only patches the fd
 * numbers into a copy of the program: libseccomp's compilation took ~0.5 ms
 * of every start, on the program's critical path. */
#include "sentry/confine_rules.h"
#include "common/sanitize.h"

#include <fcntl.h>
#include <linux/kcmp.h>
#include <linux/seccomp.h>
#include <errno.h>
#include <sched.h>
#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/resource.h>
#include <linux/sockios.h>
#include <termios.h>
#include <sys/socket.h>

#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)
#endif
/* O_TMPFILE without its O_DIRECTORY (a directory open is allowed) */
#define O_TMPFILE_BIT 020000000
#define ARRAY_SIZE_(a) (sizeof(a) / sizeof((a)[0]))

static const int allowed[] = {
	/* fds the sentry holds: listener, gofer sockets, memfds, pidfds, guest
	 * fds duplicated with pidfd_getfd */
	SCMP_SYS(read), SCMP_SYS(write), SCMP_SYS(pread64), SCMP_SYS(pwrite64),
	SCMP_SYS(readv), SCMP_SYS(writev), SCMP_SYS(lseek), SCMP_SYS(close),
	SCMP_SYS(dup), SCMP_SYS(dup2), SCMP_SYS(dup3), /* fcntl: below */
	SCMP_SYS(fstat), SCMP_SYS(fstatfs), SCMP_SYS(getdents64), SCMP_SYS(ftruncate),
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
	SCMP_SYS(getpgid), SCMP_SYS(getsid), /* a guest process's group and session, read by the group
					       * rows (syscalls/sys_signal.c pgw_each): reads; a pid's
					       * existence kill(pid, 0) tells anyway */
	/* memory, threads, signals, time */
	SCMP_SYS(mmap), SCMP_SYS(munmap), SCMP_SYS(mprotect), SCMP_SYS(mremap),
	SCMP_SYS(madvise), SCMP_SYS(brk), SCMP_SYS(mincore), SCMP_SYS(msync),
	SCMP_SYS(set_robust_list), SCMP_SYS(rseq), /* clone: below */
	SCMP_SYS(futex), SCMP_SYS(exit), SCMP_SYS(exit_group), SCMP_SYS(sched_yield),
	SCMP_SYS(getpid), SCMP_SYS(gettid), SCMP_SYS(getuid), SCMP_SYS(geteuid),
	SCMP_SYS(getgid), SCMP_SYS(getegid), SCMP_SYS(rt_sigaction),
	SCMP_SYS(rt_sigprocmask), SCMP_SYS(rt_sigreturn), SCMP_SYS(sigaltstack),
	SCMP_SYS(restart_syscall), SCMP_SYS(nanosleep), SCMP_SYS(clock_nanosleep),
	SCMP_SYS(setitimer), /* --kill-after's timer, armed by a forwarded SIGTERM (limits.c) */
	SCMP_SYS(clock_gettime), SCMP_SYS(gettimeofday), SCMP_SYS(getrandom),
	SCMP_SYS(sched_getaffinity), /* prlimit64: below */
	SCMP_SYS(sysinfo), /* the guest's sysinfo, capped (fs/procfs.c) */
	/* SysV IPC of the guest's namespace (the sentry's threads joined it,
	 * run.c): syscalls/sys_ipc.c makes, stats, sets and removes the objects
	 * so that their owners are the virtual ones; never attaches */
	SCMP_SYS(shmget), SCMP_SYS(shmctl), SCMP_SYS(semget), SCMP_SYS(semctl),
	SCMP_SYS(semtimedop), SCMP_SYS(msgget), SCMP_SYS(msgctl),
	/* and its POSIX message queues (sys_ipc.c opens them for the guest) */
	SCMP_SYS(mq_open), SCMP_SYS(mq_unlink),
};

static int rule(scmp_filter_ctx ctx, int nr, unsigned n, const struct scmp_arg_cmp *c)
{
	return seccomp_rule_add_array(ctx, SCMP_ACT_ALLOW, nr, n, c);
}

int confine_rules(scmp_filter_ctx ctx, int pfd, const int *roots, size_t nroots, int tty)
{
	int rc = 0;
	for (size_t i = 0; i < ARRAY_SIZE_(allowed) && !rc; i++)
		rc = rule(ctx, allowed[i], 0, NULL);
	if (!rc)
		rc = moat_sanitizer_allow(ctx);
	/* threads, never namespaces: clone with no CLONE_NEW* flag (a sentry
	 * that made a user namespace would hold every capability in it, and
	 * with a mount namespace could rearrange what its root fds show);
	 * clone3's flags are in memory the rule cannot read: ENOSYS, and
	 * glibc's pthread_create falls back to clone */
	if (!rc) {
		struct scmp_arg_cmp c = { .arg = 0, .op = SCMP_CMP_MASKED_EQ,
					  .datum_a = CLONE_NEWNS | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET |
						     CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP | CLONE_NEWTIME,
					  .datum_b = 0 };
		rc = rule(ctx, SCMP_SYS(clone), 1, &c);
	}
	if (!rc)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
	/* fcntl: the commands the sentry makes (flags, a cloexec dup, a guest
	 * file's SIGIO owner and signal, a memfd's seals, their reads), never
	 * a lock, a lease, F_NOTIFY or a pipe's size on a host object (red
	 * team 72: rootless our uid owns the caller's files in an export, and
	 * a read lease on one held every open of it for writing by the
	 * caller's own processes for lease-break-time, 45 s, again and again;
	 * the guest's locks and leases are the sentry's lock table,
	 * syscalls/sys_lock.c, and its F_NOTIFY runs natively). The kernel
	 * reads the command as an unsigned int: its low 32 bits compared */
	static const int fcntl_cmds[] = { F_DUPFD, F_DUPFD_CLOEXEC, F_GETFD, F_SETFD, F_GETFL, F_SETFL,
					  F_GETOWN, F_SETOWN, F_GETOWN_EX, F_SETOWN_EX, F_GETSIG, F_SETSIG,
					  F_ADD_SEALS, F_GET_SEALS };
	for (size_t i = 0; i < ARRAY_SIZE_(fcntl_cmds) && !rc; i++) {
		struct scmp_arg_cmp c = { .arg = 1, .op = SCMP_CMP_MASKED_EQ, .datum_a = 0xffffffffUL,
					  .datum_b = (uint32_t)fcntl_cmds[i] };
		rc = rule(ctx, SCMP_SYS(fcntl), 1, &c);
	}
	/* prlimit64: a read of any process's limits (a guest task's: the
	 * guest's procfs limits, the program's RLIMIT_CORE checked at start,
	 * sentry/tracer.c) and our own set (setrlimit: pid 0). Never a set of
	 * another process's (red team 72: rootless the caller's processes
	 * share our ids, which is all do_prlimit checks, and Landlock does not
	 * scope it: RLIMIT_CPU of 0 was SIGKILL to any of them, the kill the
	 * signal scope refuses, and a lowered RLIMIT_NOFILE, RLIMIT_AS or
	 * RLIMIT_NPROC their next open, allocation or fork refused): the
	 * guest's init makes those for a guest task, by its number in the
	 * guest's pid namespace (sentry/spawn.c init_act; initrows, initrows2) */
	if (!rc) {
		struct scmp_arg_cmp c = { .arg = 2, .op = SCMP_CMP_EQ, .datum_a = 0 };
		rc = rule(ctx, SCMP_SYS(prlimit64), 1, &c);
	}
	if (!rc) {
		struct scmp_arg_cmp c = { .arg = 0, .op = SCMP_CMP_MASKED_EQ, .datum_a = 0xffffffffUL,
					  .datum_b = 0 };
		rc = rule(ctx, SCMP_SYS(prlimit64), 1, &c);
	}
	/* no fchmod, no futimens (netbind's review): rootless a file of the
	 * caller's the sentry holds (stdio, an fd from pidfd_getfd) is its
	 * uid's, and seccomp cannot tell a memfd from it; the gofer sets a
	 * guest memfd's mode and times (GOFER_OP_MEMFDATTR, memfds only) and
	 * a host file's (CHMOD, UTIMENS) */
	/* the guest procfs: read-only opens, never O_CREAT, O_TRUNC or
	 * O_TMPFILE (red team 45: the access mode alone was checked; through a
	 * guest task's fd/N magic link of a gofer file, an O_CREAT or O_TRUNC
	 * open would have made or emptied files in the gofer's tree;
	 * fs/procfs.c reopen_new truncates by the guest's own description
	 * instead) */
	if (!rc) {
		struct scmp_arg_cmp c[2] = {
			{ .arg = 0, .op = SCMP_CMP_EQ, .datum_a = (scmp_datum_t)pfd },
			{ .arg = 2, .op = SCMP_CMP_MASKED_EQ,
			  .datum_a = O_ACCMODE | O_CREAT | O_TRUNC | O_TMPFILE_BIT, .datum_b = O_RDONLY },
		};
		rc = rule(ctx, SCMP_SYS(openat), 2, c);
		c[1].datum_b = O_ACCMODE;
		if (!rc)
			rc = rule(ctx, SCMP_SYS(openat), 2, c);
	}
	/* readlinkat on any fd: a symlink's target read from the O_PATH |
	 * O_NOFOLLOW fd of the symlink itself (fs/directfs.c, readlinkat(fd,
	 * "")), besides the guest procfs and the export roots. Link text
	 * only, never a file's data; our own fds resolve in our root, a guest
	 * fd the gofer opened in the gofer's tree, and a directory the caller
	 * gave as stdio in the host's, where newfstatat(fd, path,
	 * AT_EMPTY_PATH) below already tells every name's metadata
	 * (ARCHITECTURE "Start-up", the ppy2 round) */
	if (!rc)
		rc = rule(ctx, SCMP_SYS(readlinkat), 0, NULL);
	/* our own affinity only (a pipeline stage's, sentry/pipeline.c):
	 * a guest task's, the tracer's pins (sentry/tracer.c task_pin) and a
	 * guest's sched_setaffinity of another task, is made by the guest's
	 * init (initrows2: rootless a host number could name any of the
	 * caller's processes, which one CPU would slow down) */
	if (!rc) {
		struct scmp_arg_cmp c = { .arg = 0, .op = SCMP_CMP_MASKED_EQ, .datum_a = 0xffffffffUL,
					  .datum_b = 0 };
		rc = rule(ctx, SCMP_SYS(sched_setaffinity), 1, &c);
	}
	/* a guest socket's classic BPF filter, made here on the pinned file
	 * (netconn.c sys_setsockopt): SOL_SOCKET and the filter options only */
	/* and SO_REUSEPORT/SO_REUSEADDR of guest sockets (netreuse.c: the
	 * sentry sets the kernel's reuseport flag; moat-netd, or without it
	 * the guest's init, binds such a socket on the pinned file: no bind
	 * here, red team 72's gap — a socket it can take from the guest may be
	 * the caller's stdio, of the host's network namespace, where an
	 * abstract name is the host's), and SO_PASSCRED (sys_peercred.c: set
	 * and cleared by the sentry) */
	static const int filter_opts[] = { SO_ATTACH_FILTER, SO_DETACH_FILTER, SO_LOCK_FILTER,
					   SO_ATTACH_REUSEPORT_CBPF, SO_DETACH_REUSEPORT_BPF,
					   SO_REUSEPORT, SO_REUSEADDR, SO_PASSCRED };
	for (size_t i = 0; i < ARRAY_SIZE_(filter_opts) && !rc; i++) {
		struct scmp_arg_cmp c[2] = {
			{ .arg = 1, .op = SCMP_CMP_EQ, .datum_a = SOL_SOCKET },
			{ .arg = 2, .op = SCMP_CMP_EQ, .datum_a = (scmp_datum_t)filter_opts[i] },
		};
		rc = rule(ctx, SCMP_SYS(setsockopt), 2, c);
	}
	/* direct file access (fs/directfs.c): openat2 on the export root fds
	 * only (readlinkat: above). openat2's flags live in memory where the rule
	 * cannot see them: what holds is the mount layer (privilege.c) — every
	 * path from these fds, "..", absolute or through a symlink, stays in our
	 * root, where each export is a read-only bind with its hidden names
	 * masked and the rest is an empty read-only tmpfs (a write or create
	 * open is EROFS whatever the flags); a cow export's root is a detached
	 * read-only clone of the gofer's overlay (masks included): ".." at its
	 * root stays there, an absolute path resolves in our root, a write is
	 * EROFS. */
	for (size_t i = 0; i < nroots && !rc; i++) {
		if (roots[i] < 0)
			continue;
		struct scmp_arg_cmp c = { .arg = 0, .op = SCMP_CMP_EQ, .datum_a = (scmp_datum_t)roots[i] };
		rc = rule(ctx, SCMP_SYS(openat2), 1, &c);
	}
	if (!rc) {
		struct scmp_arg_cmp c = { .arg = 3, .op = SCMP_CMP_MASKED_EQ, .datum_a = AT_EMPTY_PATH,
					  .datum_b = AT_EMPTY_PATH };
		rc = rule(ctx, SCMP_SYS(newfstatat), 1, &c);
	}
	if (!rc) {
		/* the same in statx's shape (its flags are argument 2): the
		 * first look-up of a name in the directory a guest's dirfd
		 * has open, which also says whether the name is a mount's
		 * root (fs/directfs.c vfs_direct_absent_at); metadata only,
		 * what newfstatat above already tells */
		struct scmp_arg_cmp c = { .arg = 2, .op = SCMP_CMP_MASKED_EQ, .datum_a = AT_EMPTY_PATH,
					  .datum_b = AT_EMPTY_PATH };
		rc = rule(ctx, SCMP_SYS(statx), 1, &c);
	}
	/* no fchdir, no unshare(CLONE_FS), no inotify_add_watch (red team 72):
	 * a working directory taken in a guest task's directory (the guest
	 * procfs's "PID/fd/N", or the fd itself: a host directory the caller
	 * gave as stdio) let bind() make a socket inode there by a relative
	 * path (and sendmsg reach a path socket there). The gofer adds every
	 * inotify watch (GOFER_OP_WATCH: syscalls/sys_file.c add_watch,
	 * fs/vfs.c park_guest); the sentry's working directory stays its own
	 * root's "/", an empty read-only tmpfs. fs/vfs.c park_guest takes its
	 * own pins off again: */
	if (!rc)
		rc = rule(ctx, SCMP_SYS(inotify_rm_watch), 0, NULL);
	/* kcmp: the lock table (syscalls/sys_lock.c) tells open file
	 * descriptions apart (KCMP_FILE), and a guest's kcmp naming another
	 * process is made here (any type): it compares, never acts */
	if (!rc)
		rc = rule(ctx, SCMP_SYS(kcmp), 0, NULL);
	/* the owner rows a guest task makes on another task by pid, at the
	 * check in a sandbox of more than one identity, on the task checked
	 * with its number held (syscalls/sys_signal.c "the owner rows made by
	 * the sentry", pid reuse): setpriority, ioprio_set,
	 * sched_setscheduler/setparam/setattr are the guest's init's to make
	 * (initrows2: rootless the caller's other processes share our uid,
	 * the kernel checks no more, and Landlock has no hook for these: nice
	 * 19, the idle I/O class or SCHED_IDLE of any of them), never ours;
	 * the robust list head is read here (a ptrace read check, which the
	 * Landlock domain, confine_scope, scopes to the sentry's own tree). */
	if (!rc)
		rc = rule(ctx, SCMP_SYS(get_robust_list), 0, NULL);
	const unsigned long ioctls[] = {
		SECCOMP_IOCTL_NOTIF_RECV, SECCOMP_IOCTL_NOTIF_SEND, SECCOMP_IOCTL_NOTIF_ID_VALID,
		SECCOMP_IOCTL_NOTIF_ADDFD, SECCOMP_IOCTL_NOTIF_SET_FLAGS, TCGETS,
		/* and the foreground group (tty.c jobctl: the guest continued at fg) */
		TIOCGPGRP,
		/* NS_GET_PID_IN_PIDNS: the tracer reads a new task's guest pid
		 * (a translation: it changes nothing) */
		_IOR(0xb7, 0x8, int),
		/* the guest's interface reads, made on a socket of its netns
		 * (netconn_if_ioctl, with moat-netd): reads, never changes */
		SIOCGIFNAME, SIOCGIFCONF, SIOCGIFFLAGS, SIOCGIFADDR, SIOCGIFDSTADDR, SIOCGIFBRDADDR,
		SIOCGIFNETMASK, SIOCGIFMETRIC, SIOCGIFMTU, SIOCGIFHWADDR, SIOCGIFINDEX, SIOCGIFTXQLEN,
		SIOCGIFMAP,
	};
	for (size_t i = 0; i < ARRAY_SIZE_(ioctls) && !rc; i++) {
		struct scmp_arg_cmp c = { .arg = 1, .op = SCMP_CMP_MASKED_EQ, .datum_a = 0xffffffffUL,
					  .datum_b = (uint32_t)ioctls[i] };
		rc = rule(ctx, SCMP_SYS(ioctl), 1, &c);
	}
	/* without -t: the caller's terminal settings put back and its output
	 * restarted once the guest is gone (tty.c tty_guard_restore), on fds
	 * 0-2 only (the terminals among them it saved); any other fd the
	 * sentry holds (a guest's terminal taken with pidfd_getfd) is refused */
	const unsigned long stdio_ioctls[] = { TCSETS, TCXONC };
	for (size_t i = 0; i < ARRAY_SIZE_(stdio_ioctls) && !rc; i++) {
		struct scmp_arg_cmp c[2] = {
			{ .arg = 0, .op = SCMP_CMP_LE, .datum_a = 2 },
			{ .arg = 1, .op = SCMP_CMP_MASKED_EQ, .datum_a = 0xffffffffUL,
			  .datum_b = (uint32_t)stdio_ioctls[i] },
		};
		rc = rule(ctx, SCMP_SYS(ioctl), 2, c);
	}
	if (!rc) {
		/* -t: window size in, the caller's terminal settings restored at exit */
		struct scmp_arg_cmp g = { .arg = 1, .op = SCMP_CMP_MASKED_EQ, .datum_a = 0xffffffffUL,
					  .datum_b = TIOCGWINSZ };
		rc = rule(ctx, SCMP_SYS(ioctl), 1, &g);
		/* no TIOCSWINSZ (red team 71: allowed on any fd before, so a
		 * compromised sentry could resize the caller's terminal on fds
		 * 0-2 and signal its foreground job): -t's master and a guest's
		 * resize of its own pty are made by the gofer, which checks the
		 * terminal is of the sandbox's devpts (GOFER_OP_WINSZ) */
		if (!rc && tty >= 0) {
			struct scmp_arg_cmp ts[2] = {
				{ .arg = 0, .op = SCMP_CMP_EQ, .datum_a = 0 },
				{ .arg = 1, .op = SCMP_CMP_MASKED_EQ, .datum_a = 0xffffffffUL, .datum_b = TCSETSW },
			};
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
	return rc;
}
