/* sentry/confine.c - once set-up is over the sentry confines itself: it opens
 * no host path by name (the gofer resolves every host path), execs nothing,
 * and makes only the calls it needs.
 *
 * An allowlist with TSYNC (every sentry thread; threads started later inherit
 * it). Anything else fails with EPERM. Path-taking calls are allowed only in
 * the shapes the sentry uses:
 *   openat      dirfd == the guest pid namespace's procfs fd, O_RDONLY
 *   readlinkat  dirfd == that procfs fd
 *   newfstatat  AT_EMPTY_PATH (fstat of a held fd)
 *   utimensat   path NULL (futimens of a held fd)
 * ioctl is limited to the seccomp notification requests and TCGETS (isatty).
 * There is no openat2 (its flags live in memory), no socket (connections to
 * the gofer arrive over the control socket), no exec, no mount, no namespace.
 *
 * MOAT_SENTRY_FILTER_LEARN=1 logs (SECCOMP_RET_LOG, see dmesg) instead of
 * refusing, to find a call the list misses. */
#include "sentry/sentry.h"
#include "kernel/task.h"
#include "common/log.h"
#include "common/util.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <seccomp.h>

#include "common/sanitize.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)
#endif

static const int allowed[] = {
	/* fds the sentry holds: listener, gofer sockets, memfds, pidfds, guest
	 * fds duplicated with pidfd_getfd */
	SCMP_SYS(read), SCMP_SYS(write), SCMP_SYS(pread64), SCMP_SYS(pwrite64),
	SCMP_SYS(readv), SCMP_SYS(writev), SCMP_SYS(lseek), SCMP_SYS(close),
	SCMP_SYS(dup), SCMP_SYS(dup2), SCMP_SYS(dup3), SCMP_SYS(fcntl),
	SCMP_SYS(fstat), SCMP_SYS(fstatfs), SCMP_SYS(getdents64), SCMP_SYS(fchmod),
	SCMP_SYS(fchown), SCMP_SYS(ftruncate), SCMP_SYS(fsync), SCMP_SYS(fdatasync),
	SCMP_SYS(fgetxattr), SCMP_SYS(fsetxattr), SCMP_SYS(flistxattr),
	SCMP_SYS(fremovexattr), SCMP_SYS(memfd_create), SCMP_SYS(pipe2),
	SCMP_SYS(sendmsg), SCMP_SYS(recvmsg), SCMP_SYS(sendto), SCMP_SYS(recvfrom),
	SCMP_SYS(poll), SCMP_SYS(ppoll), SCMP_SYS(getsockname), SCMP_SYS(getpeername),
	/* guests */
	SCMP_SYS(ptrace), SCMP_SYS(wait4), SCMP_SYS(waitid), SCMP_SYS(process_vm_readv),
	SCMP_SYS(process_vm_writev), SCMP_SYS(pidfd_open), SCMP_SYS(pidfd_getfd),
	SCMP_SYS(kill), SCMP_SYS(tgkill), SCMP_SYS(tkill),
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
#ifdef MOAT_SANITIZE
	static const int san[] = { MOAT_SANITIZER_SYSCALLS };
	for (size_t i = 0; i < ARRAY_SIZE(san) && !rc; i++)
		rc = rule(ctx, san[i], 0, NULL);
#endif
	if (!rc) {
		struct scmp_arg_cmp c[2] = {
			{ .arg = 0, .op = SCMP_CMP_EQ, .datum_a = (scmp_datum_t)pfd },
			{ .arg = 2, .op = SCMP_CMP_MASKED_EQ, .datum_a = O_ACCMODE, .datum_b = O_RDONLY },
		};
		rc = rule(ctx, SCMP_SYS(openat), 2, c);
	}
	if (!rc) {
		struct scmp_arg_cmp c = { .arg = 0, .op = SCMP_CMP_EQ, .datum_a = (scmp_datum_t)pfd };
		rc = rule(ctx, SCMP_SYS(readlinkat), 1, &c);
	}
	if (!rc) {
		struct scmp_arg_cmp c = { .arg = 3, .op = SCMP_CMP_MASKED_EQ, .datum_a = AT_EMPTY_PATH,
					  .datum_b = AT_EMPTY_PATH };
		rc = rule(ctx, SCMP_SYS(newfstatat), 1, &c);
	}
	if (!rc) {
		struct scmp_arg_cmp c = { .arg = 1, .op = SCMP_CMP_EQ, .datum_a = 0 };
		rc = rule(ctx, SCMP_SYS(utimensat), 1, &c);
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
