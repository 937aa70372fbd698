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
	SYS_sigaltstack, SYS_prctl, SYS_sched_getaffinity, SYS_getrlimit, \
	SYS_rt_sigaction, SYS_tgkill, SYS_getpid, SYS_gettid, SYS_getppid, SYS_uname, \
	SYS_sched_yield, SYS_write, SYS_mincore, SYS_mmap, SYS_munmap, SYS_madvise, SYS_mprotect
#endif

/* MOAT_STACK_SCALE: threads made with a fixed stack size (the gofer's
 * connections, the sentry's workers) get this many times more in a sanitizer
 * build, whose frames are two to three times larger (redzones, no slot
 * sharing between scopes). */
#ifdef MOAT_SANITIZE
#define MOAT_STACK_SCALE 4
#else
#define MOAT_STACK_SCALE 1
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
	/* prlimit64 on the caller itself only (pid 0: glibc's getrlimit and
	 * setrlimit): allowed whatever the pid, the sanitized gofer's filter
	 * let a compromised gofer set a host process's limits (CI's asan
	 * tier, isolation_host gofer_confinement_probe prlimit_host_pid) */
	struct scmp_arg_cmp self = { .arg = 0, .op = SCMP_CMP_EQ, .datum_a = 0, .datum_b = 0 };
	int r = seccomp_rule_add_array(ctx, SCMP_ACT_ALLOW, SCMP_SYS(prlimit64), 1, &self);
	return r == -EEXIST ? 0 : r;
}
#else
#define moat_sanitizer_allow(ctx) ((void)(ctx), 0)
#endif

/* moat_filter_finish(ctx, rc): the common tail of a helper process's
 * allowlist (moat-netd, moat-broker, moat-netpub): anonymous mmap only (malloc's
 * arenas), the sanitizer runtime's calls (ASan builds), no_new_privs, load.
 * rc is the result of the rules added so far; the context is released either
 * way. 0 when the filter is loaded, -1 otherwise. */
#include <seccomp.h>
static inline int moat_filter_finish(scmp_filter_ctx ctx, int rc)
{
	/* fd == -1 in its low 32 bits: glibc passes mmap's fd as an int
	 * (r8d, the upper half zero), and the kernel reads only those bits
	 * (fget's unsigned int). Compared as 64 bits, every mmap of malloc
	 * (a buffer of 128 KiB or more) killed the helper: moat-broker died
	 * on a large chunked response read slowly (red team 56). */
	struct scmp_arg_cmp anon = { .arg = 4, .op = SCMP_CMP_MASKED_EQ, .datum_a = 0xffffffffu, .datum_b = 0xffffffffu };
	if (!rc)
		rc = seccomp_rule_add_array(ctx, SCMP_ACT_ALLOW, SCMP_SYS(mmap), 1, &anon);
	if (!rc)
		rc = moat_sanitizer_allow(ctx);
	if (!rc)
		rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 1);
	if (!rc)
		rc = seccomp_load(ctx);
	seccomp_release(ctx);
	return rc ? -1 : 0;
}

#endif
