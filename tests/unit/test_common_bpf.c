/* tests/unit/test_common_bpf.c - the allow-list builder (common/bpf.h
 * bpf_allow_build): its jumps land where they should (every jump forward,
 * inside the program, the allow's return last), and a built program
 * installed in a child decides as its rows say: a listed call runs, an
 * argument row's other value gets its miss action, anything else the
 * default. */
#include "common/bpf.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static const struct bpf_allow rows[] = {
	{ .nr = __NR_exit_group, .arg = -1 },
	{ .nr = __NR_getppid, .arg = -1 },
	{ .nr = __NR_getpriority, .arg = 0, .val = PRIO_PROCESS, .miss = SECCOMP_RET_ERRNO | EACCES },
	{ .nr = __NR_write, .arg = 0, .val = 1 },
	{ .nr = __NR_getpgid, .arg = -1 },
};
#define NROWS (sizeof rows / sizeof rows[0])

Test(bpf_allow, jumps_land_inside)
{
	struct sock_filter f[BPF_ALLOW_LEN(NROWS)];
	int n = bpf_allow_build(rows, NROWS, SECCOMP_RET_ERRNO | EPERM, f, BPF_ALLOW_LEN(NROWS));
	cr_assert_gt(n, 0);
	cr_assert_eq(f[n - 1].code, BPF_RET | BPF_K);
	cr_assert_eq(f[n - 1].k, SECCOMP_RET_ALLOW);
	for (int i = 0; i < n; i++) {
		if (BPF_CLASS(f[i].code) == BPF_RET)
			continue;
		if (BPF_CLASS(f[i].code) == BPF_JMP) {
			cr_assert_lt(i + 1 + f[i].jt, n, "insn %d jt", i);
			cr_assert_lt(i + 1 + f[i].jf, n, "insn %d jf", i);
		}
	}
	/* every row's compare reaches the allow, directly or through its
	 * argument's compare */
	for (size_t r = 0; r < NROWS; r++) {
		int i = 4 + (int)r, to = i + 1 + f[i].jt;
		cr_assert_eq(f[i].k, (unsigned)rows[r].nr);
		if (rows[r].arg < 0) {
			cr_assert_eq(to, n - 1, "row %zu", r);
		} else {
			cr_assert_eq(f[to].code, BPF_LD | BPF_W | BPF_ABS);
			cr_assert_eq(f[to].k, offsetof(struct seccomp_data, args[0]) + 8 * (unsigned)rows[r].arg);
			cr_assert_eq(f[to + 1].k, rows[r].val);
			cr_assert_eq(to + 2 + f[to + 1].jt, n - 1, "row %zu", r);
			cr_assert_eq(f[to + 2].k, rows[r].miss ? rows[r].miss : (SECCOMP_RET_ERRNO | EPERM));
		}
	}
	/* too small a buffer */
	cr_assert_eq(bpf_allow_build(rows, NROWS, SECCOMP_RET_ERRNO | EPERM, f, 5), -E2BIG);
}

/* each outcome as a bit of the child's exit status */
Test(bpf_allow, kernel_decides_as_rows_say)
{
	struct sock_filter f[BPF_ALLOW_LEN(NROWS)];
	int n = bpf_allow_build(rows, NROWS, SECCOMP_RET_ERRNO | EPERM, f, BPF_ALLOW_LEN(NROWS));
	cr_assert_gt(n, 0);
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		struct sock_fprog prog = { .len = (unsigned short)n, .filter = f };
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
		    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0)
			syscall(__NR_exit_group, 100);
		int bits = 0;
		if (syscall(__NR_getppid) > 0)
			bits |= 1; /* listed */
		errno = 0;
		if (syscall(__NR_getpriority, PRIO_PROCESS, 0) >= 0 && errno == 0)
			bits |= 2; /* its argument's value */
		if (syscall(__NR_getpriority, PRIO_PGRP, 0) < 0 && errno == EACCES)
			bits |= 4; /* another value: the miss action */
		if (syscall(__NR_write, 2, "", 0) < 0 && errno == EPERM)
			bits |= 8; /* another value, no miss: the default */
		if (syscall(__NR_getpid) < 0 && errno == EPERM)
			bits |= 16; /* not listed: the default */
		if (syscall(__NR_getpgid, 0) >= 0)
			bits |= 32; /* the last row */
		syscall(__NR_exit_group, bits);
	}
	int st;
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFEXITED(st));
	cr_assert_eq(WEXITSTATUS(st), 63, "outcomes %#x", WEXITSTATUS(st));
}
