/* gofer/seccomp_rules.c - the gofer's seccomp allowlist (what server.c,
 * glibc and pthreads need; no fd in any rule), as libseccomp rules. The build
 * compiles it once (gen_seccomp.c -> gofer_bpf.c) and the gofer loads that
 * program (setup.c): libseccomp's compilation was ~0.4 ms of the gofer's
 * set-up, which the sentry waits for. */
#include "gofer/seccomp_rules.h"

#include <stddef.h>

#include "common/sanitize.h"

#include <errno.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#ifndef __NR_fchmodat2
#define __NR_fchmodat2 452
#endif
#define ARRAY_SIZE_(a) (sizeof(a) / sizeof((a)[0]))

int gofer_seccomp_rules(scmp_filter_ctx ctx)
{
	static const int allow[] = {
		SCMP_SYS(read), SCMP_SYS(write), SCMP_SYS(close),
		SCMP_SYS(fstat), SCMP_SYS(newfstatat), SCMP_SYS(statx),
		SCMP_SYS(openat2), SCMP_SYS(readlinkat), SCMP_SYS(mkdirat),
		SCMP_SYS(mknodat), SCMP_SYS(unlinkat), SCMP_SYS(renameat2), SCMP_SYS(renameat),
		SCMP_SYS(symlinkat), SCMP_SYS(linkat), SCMP_SYS(fchmodat),
		SCMP_SYS(fchmod), SCMP_SYS(fchownat), SCMP_SYS(fchown),
		SCMP_SYS(ftruncate), SCMP_SYS(utimensat), SCMP_SYS(fstatfs),
		SCMP_SYS(getdents64), SCMP_SYS(fcntl),
		SCMP_SYS(sendmsg), SCMP_SYS(recvmsg), SCMP_SYS(sendto),
		SCMP_SYS(recvfrom), SCMP_SYS(poll), SCMP_SYS(ppoll),
		SCMP_SYS(mmap), SCMP_SYS(munmap), SCMP_SYS(mprotect),
		SCMP_SYS(mremap), SCMP_SYS(madvise), SCMP_SYS(brk),
		SCMP_SYS(futex), SCMP_SYS(set_robust_list), SCMP_SYS(rseq),
		SCMP_SYS(rt_sigprocmask), SCMP_SYS(rt_sigreturn),
		SCMP_SYS(sched_yield), SCMP_SYS(nanosleep), SCMP_SYS(clock_nanosleep),
		SCMP_SYS(clock_gettime), SCMP_SYS(gettimeofday), SCMP_SYS(getrandom),
		SCMP_SYS(gettid), SCMP_SYS(getpid), SCMP_SYS(restart_syscall),
		SCMP_SYS(exit), SCMP_SYS(exit_group),
		/* user.* extended attributes (server.c refuses other names) */
		SCMP_SYS(flistxattr), SCMP_SYS(fsetxattr), SCMP_SYS(fremovexattr),
		/* the export (after the guest): opaque-directory xattrs, the reaper */
		SCMP_SYS(fgetxattr), SCMP_SYS(lseek), SCMP_SYS(wait4),
		/* COPYUP of a lower file overlayfs cannot copy (server.c) */
		SCMP_SYS(copy_file_range),
		/* a FIFO reader's open: is there a writer (server.c
		 * fifo_wait_writer: tee into a pipe of its own) */
		SCMP_SYS(pipe2), SCMP_SYS(tee),
	};
	const uint64_t newns = CLONE_NEWNS | CLONE_NEWUSER | CLONE_NEWPID |
		CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP |
		CLONE_NEWTIME | CLONE_THREAD | CLONE_VM;
	const struct scmp_arg_cmp clone_cmp = {
		.arg = 0, .op = SCMP_CMP_MASKED_EQ,
		.datum_a = newns, .datum_b = CLONE_THREAD | CLONE_VM,
	};
	const struct scmp_arg_cmp unix_cmp = {
		.arg = 0, .op = SCMP_CMP_EQ, .datum_a = AF_UNIX, .datum_b = 0,
	};
	const struct scmp_arg_cmp self_cmp = {
		.arg = 0, .op = SCMP_CMP_EQ, .datum_a = 0, .datum_b = 0,
	};
	const struct scmp_arg_cmp unshare_fs_cmp = {
		.arg = 0, .op = SCMP_CMP_EQ, .datum_a = CLONE_FS, .datum_b = 0,
	};
	int r = 0;

	for (size_t i = 0; i < ARRAY_SIZE_(allow) && !r; i++)
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, allow[i], 0);
	if (!r)
		r = moat_sanitizer_allow(ctx);
	/* fchmodat2 (not known to every libseccomp) */
	if (!r)
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, __NR_fchmodat2, 0);
	/* threads only: CLONE_THREAD|CLONE_VM, no new namespaces */
	if (!r)
		r = seccomp_rule_add_array(ctx, SCMP_ACT_ALLOW, SCMP_SYS(clone), 1,
					   &clone_cmp);
	/* clone3's flags are behind a pointer: make glibc fall back to clone */
	if (!r)
		r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
	if (!r)
		r = seccomp_rule_add_array(ctx, SCMP_ACT_ALLOW, SCMP_SYS(socketpair), 1,
					   &unix_cmp);
	/* WATCH (h_watch): a thread's own working directory (unshare of
	 * CLONE_FS only), fchdir to an fd beneath an export, and the watch by
	 * a name relative to it; events only, never a new open */
	if (!r)
		r = seccomp_rule_add_array(ctx, SCMP_ACT_ALLOW, SCMP_SYS(unshare), 1,
					   &unshare_fs_cmp);
	if (!r)
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(fchdir), 0);
	if (!r)
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(inotify_add_watch), 0);
	/* a connection's thread keeps to its sentry thread's CPU (serve_conn,
	 * GOFER_HDR_CPU): its own affinity only (pid 0) */
	if (!r)
		r = seccomp_rule_add_array(ctx, SCMP_ACT_ALLOW, SCMP_SYS(sched_setaffinity), 1,
					   &self_cmp);
	/* WINSZ (h_winsz): the window size of a terminal of the sandbox's
	 * devpts, checked there; no other ioctl. The gofer holds no terminal
	 * of the caller's (stdio /dev/null; but fd 2 under MOAT_DEBUG) */
	if (!r) {
		const struct scmp_arg_cmp winsz_cmp = {
			.arg = 1, .op = SCMP_CMP_MASKED_EQ, .datum_a = 0xffffffffUL,
			.datum_b = TIOCSWINSZ,
		};
		r = seccomp_rule_add_array(ctx, SCMP_ACT_ALLOW, SCMP_SYS(ioctl), 1, &winsz_cmp);
	}
	/* PTSCTL (h_ptsctl): a pty master's requests on a terminal of the
	 * sandbox's devpts, checked there */
	const unsigned long ptsctl[] = { TIOCSIG, TIOCPKT, TIOCSPTLCK, TIOCGPTPEER };
	for (size_t i = 0; i < sizeof ptsctl / sizeof *ptsctl && !r; i++) {
		const struct scmp_arg_cmp cmp = {
			.arg = 1, .op = SCMP_CMP_MASKED_EQ, .datum_a = 0xffffffffUL,
			.datum_b = ptsctl[i],
		};
		r = seccomp_rule_add_array(ctx, SCMP_ACT_ALLOW, SCMP_SYS(ioctl), 1, &cmp);
	}
	return r;
}
