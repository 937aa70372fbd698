/* tests/unit/test_syscalls_prebuilt.c - the guest's seccomp program compiled
 * at build time (syscalls/gen_filter.c) is the one libseccomp builds from the
 * table now, and its --deny prefix sends exactly the denied numbers to the
 * sentry, like sc_build_guest_filter_deny(). Installed for real in a child
 * without a listener: a USER_NOTIF action then fails the call with ENOSYS. */
#include <criterion/criterion.h>
#include <errno.h>
#include <linux/seccomp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "loader/loader_abi.h"
#include "syscalls/filter.h"
#include "syscalls/table.h"

static long raw0(long nr)
{
	long r = syscall(nr);
	return r < 0 ? -errno : r;
}

/* bit i of the exit status: probe i reached the (absent) sentry */
static int probe(const struct sock_fprog *p)
{
	pid_t c = fork();
	if (c == 0) {
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
		    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, p) < 0)
			_exit(255);
		int bits = 0;
		bits |= (raw0(SYS_getpid) == -ENOSYS) << 0;
		bits |= (raw0(SYS_getppid) == -ENOSYS) << 1;
		bits |= (raw0(SYS_gettid) == -ENOSYS) << 2;
		bits |= (raw0(0x40000000 | SYS_getppid) == -ENOSYS) << 3; /* x32: the filter's own ENOSYS */
		bits |= (raw0(SYS_sched_yield) == -ENOSYS) << 4;
		_exit(bits);
	}
	int st;
	cr_assert_eq(waitpid(c, &st, 0), c);
	cr_assert(WIFEXITED(st));
	return WEXITSTATUS(st);
}

Test(syscalls_prebuilt, same_program_as_libseccomp)
{
	scmp_filter_ctx ctx;
	struct sock_fprog a, b;
	cr_assert_eq(sc_build_guest_filter_deny(&ctx, MOAT_SYS_LOADER, NULL), 0);
	cr_assert_eq(sc_filter_export(ctx, &a), 0);
	seccomp_release(ctx);
	cr_assert_eq(sc_guest_filter_prebuilt(MOAT_SYS_LOADER, NULL, &b), 0);
	cr_assert_eq(a.len, b.len, "stale prebuilt program: %u vs %u instructions", a.len, b.len);
	cr_assert_eq(memcmp(a.filter, b.filter, a.len * sizeof a.filter[0]), 0, "stale prebuilt program");
	free(a.filter);
	free(b.filter);
	/* only for the loader's number it was built with */
	cr_assert_eq(sc_guest_filter_prebuilt(0, NULL, &b), -EINVAL);
}

Test(syscalls_prebuilt, deny_prefix_matches_libseccomp)
{
	unsigned char *deny = calloc(SC_NR_MAX, 1);
	scmp_filter_ctx ctx;
	struct sock_fprog a, b;
	cr_assert_eq(sc_table[SYS_getpid].cls, SC_FAST);
	cr_assert_eq(sc_table[SYS_sched_yield].cls, SC_FAST);
	/* nothing denied: the FAST calls run natively */
	cr_assert_eq(sc_guest_filter_prebuilt(MOAT_SYS_LOADER, deny, &b), 0);
	cr_assert_eq(probe(&b), 1 << 3);
	free(b.filter);
	deny[SYS_getpid] = deny[SYS_gettid] = 1;
	cr_assert_eq(sc_guest_filter_prebuilt(MOAT_SYS_LOADER, deny, &b), 0);
	cr_assert_eq(sc_build_guest_filter_deny(&ctx, MOAT_SYS_LOADER, deny), 0);
	cr_assert_eq(sc_filter_export(ctx, &a), 0);
	seccomp_release(ctx);
	int want = 1 << 0 | 1 << 2 | 1 << 3;
	cr_assert_eq(probe(&a), want, "libseccomp: %#x", probe(&a));
	cr_assert_eq(probe(&b), want, "prebuilt: %#x", probe(&b));
	free(a.filter);
	free(b.filter);
	free(deny);
}

/* SC_FORCE_TRACE: a ptrace stop whatever the row
 * says. Without a tracer a TRACE action fails the call with ENOSYS too, so
 * the probe sees it as reaching moat; the prefix must say TRACE, not NOTIFY. */
Test(syscalls_prebuilt, trace_prefix)
{
	unsigned char *force = calloc(SC_NR_MAX, 1);
	scmp_filter_ctx ctx;
	struct sock_fprog a, b;
	force[SYS_getpid] = SC_FORCE_TRACE;
	force[SYS_gettid] = SC_FORCE_NOTIFY;
	cr_assert_eq(sc_guest_filter_prebuilt(MOAT_SYS_LOADER, force, &b), 0);
	cr_assert_eq(sc_build_guest_filter_deny(&ctx, MOAT_SYS_LOADER, force), 0);
	cr_assert_eq(sc_filter_export(ctx, &a), 0);
	seccomp_release(ctx);
	int want = 1 << 0 | 1 << 2 | 1 << 3;
	cr_assert_eq(probe(&a), want, "libseccomp: %#x", probe(&a));
	cr_assert_eq(probe(&b), want, "prebuilt: %#x", probe(&b));
	int trace_after_getpid = 0, notify_after_gettid = 0;
	for (unsigned i = 0; i + 1 < b.len; i++) {
		const struct sock_filter *f = &b.filter[i];
		if (f->code != (BPF_JMP | BPF_JEQ | BPF_K) || b.filter[i + 1].code != (BPF_RET | BPF_K))
			continue;
		if (f->k == SYS_getpid && b.filter[i + 1].k == SECCOMP_RET_TRACE)
			trace_after_getpid = 1;
		if (f->k == SYS_gettid && b.filter[i + 1].k == SECCOMP_RET_USER_NOTIF)
			notify_after_gettid = 1;
	}
	cr_assert(trace_after_getpid, "no TRACE for getpid in the prefix");
	cr_assert(notify_after_gettid, "no USER_NOTIF for gettid in the prefix");
	free(a.filter);
	free(b.filter);
	free(force);
}
