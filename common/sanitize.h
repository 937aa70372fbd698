/* common/sanitize.h - what the sanitizer runtime needs in a confined process.
 *
 * A -DMOAT_SANITIZE=ON build (ASan + UBSan) runs the sentry and the gofer
 * under their seccomp allowlists; ASan's runtime makes calls of its own there
 * (per-thread alternate signal stacks, limits, affinity, and on a report
 * prctl, tgkill). MOAT_SANITIZER_SYSCALLS lists them; only that build adds them
 * to the allowlists (sentry/confine.c, gofer/setup.c). Leak checking must be
 * off (ASAN_OPTIONS=detect_leaks=0): LSan stops the world with ptrace. */
#ifndef MOAT_COMMON_SANITIZE_H
#define MOAT_COMMON_SANITIZE_H

#include <sys/syscall.h>

#ifdef MOAT_SANITIZE
#define MOAT_SANITIZER_SYSCALLS \
	SYS_sigaltstack, SYS_prctl, SYS_sched_getaffinity, SYS_prlimit64, SYS_getrlimit, \
	SYS_rt_sigaction, SYS_tgkill, SYS_getpid, SYS_gettid, SYS_getppid, SYS_uname, \
	SYS_sched_yield, SYS_write, SYS_mincore, SYS_mmap, SYS_munmap, SYS_madvise, SYS_mprotect
#endif

/* moat_sanitizer_allow(ctx): add MOAT_SANITIZER_SYSCALLS to a libseccomp
 * allowlist (ASan builds); 0 or a libseccomp error. A no-op otherwise. */
#ifdef MOAT_SANITIZE
#include <errno.h>
#include <seccomp.h>
static inline int moat_sanitizer_allow(scmp_filter_ctx ctx)
{
	static const int san[] = { MOAT_SANITIZER_SYSCALLS };
	for (size_t i = 0; i < sizeof san / sizeof san[0]; i++) {
		int r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, san[i], 0);
		if (r && r != -EEXIST) /* a conditional rule of the same call exists */
			return r;
	}
	return 0;
}
#else
#define moat_sanitizer_allow(ctx) ((void)(ctx), 0)
#endif

#endif
