/* seccomp: a guest's own extra filters (seccomp() and PR_SET_SECCOMP) apply
 * on top of the sandbox's: a stricter filter works (ERRNO, KILL, TRACE
 * without a tracer of its own), an allow-all filter loosens nothing, and
 * filters are inherited across fork and exec. Each case runs in a child so
 * the filters never reach this process. */
#include "t.h"
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/utsname.h>

#define LOAD_NR BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr))
#define ON(nr, ret) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1), BPF_STMT(BPF_RET | BPF_K, (ret))
#define ALLOW BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)

static int install(struct sock_filter *f, unsigned short n, int via_prctl, unsigned flags)
{
	struct sock_fprog prog = { .len = n, .filter = f };
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -1;
	if (via_prctl)
		return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0);
	return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &prog);
}

/* run fn in a child; its exit status (or 128+signal) */
static int in_child(int (*fn)(void))
{
	pid_t p = fork();
	if (p == 0)
		_exit(fn());
	int st;
	if (waitpid(p, &st, 0) != p)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* ERRNO on a native call (getppid) and on one the sandbox emulates (uname) */
static int errno_filter(int via_prctl)
{
	struct sock_filter f[] = {
		LOAD_NR,
		ON(SYS_getppid, SECCOMP_RET_ERRNO | EPERM),
		ON(SYS_uname, SECCOMP_RET_ERRNO | EACCES),
		ALLOW,
	};
	if (install(f, sizeof f / sizeof f[0], via_prctl, 0) < 0)
		return 10;
	struct utsname u;
	errno = 0;
	if (syscall(SYS_getppid) != -1 || errno != EPERM)
		return 11;
	errno = 0;
	if (uname(&u) != -1 || errno != EACCES)
		return 12;
	/* other calls, trapped or not, still work */
	if (getpid() <= 0 || access("/", R_OK) != 0)
		return 13;
	return 0;
}
static int errno_seccomp(void) { return errno_filter(0); }
static int errno_prctl(void) { return errno_filter(1); }

/* KILL_PROCESS on getppid */
static int kill_filter(void)
{
	struct sock_filter f[] = {
		LOAD_NR,
		ON(SYS_getppid, SECCOMP_RET_KILL_PROCESS),
		ALLOW,
	};
	if (install(f, 4, 0, 0) < 0)
		return 10;
	syscall(SYS_getppid);
	return 1;
}

/* an allow-all filter: moat's rules still hold (and the files still work) */
static int allow_all(void)
{
	struct sock_filter f[] = { ALLOW };
	if (install(f, 1, 0, 0) < 0)
		return 10;
	char buf[64];
	if (t_read_file("/proc/self/comm", buf, sizeof buf) <= 0)
		return 11;
	/* (that the sandbox's denials hold under it: isolation_proctree.sh) */
	return 0;
}

/* inherited across fork and exec: the exec'd shell cannot run uname */
static int inherited(void)
{
	struct sock_filter f[] = {
		LOAD_NR,
		ON(SYS_uname, SECCOMP_RET_ERRNO | EACCES),
		ALLOW,
	};
	if (install(f, 4, 0, 0) < 0)
		return 10;
	pid_t p = fork();
	if (p == 0) {
		execl("/bin/sh", "sh", "-c", "uname >/dev/null 2>&1 && exit 0 || exit 5", (char *)NULL);
		_exit(9);
	}
	int st;
	waitpid(p, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 20;
}

/* A program that may return RET_TRACE: the guest can have no tracer of its
 * own (ptrace is denied), so natively every such call is ENOSYS. Under moat
 * the sandbox's RET_USER_NOTIF outranks the guest's RET_TRACE (and its own
 * RET_TRACE ties with it on exec): before red team 88 uname was answered,
 * an openat opened and an exec ran that the guest's filter refused. Now
 * such a program is refused (EINVAL): 0 when the call was ENOSYS, 2 when
 * the install was EINVAL. */
static int traced_call(int which)
{
	int sv[2];
	struct utsname u;
	switch (which) {
	case 0:
		return (int)syscall(SYS_getppid);
	case 1:
		return uname(&u);
	case 2:
		return open("/", O_RDONLY);
	case 3:
		/* ran: the child exits 1 */
		return execl("/bin/false", "false", (char *)NULL);
	case 4:
		if (socketpair(AF_UNIX, SOCK_DGRAM, 0, sv) < 0)
			return 0; /* (not the call under test) */
		return (int)syscall(SYS_sendto, sv[0], "hi", 2, 0, NULL, 0);
	default:
		return 0;
	}
}
static const int traced_nr[] = { SYS_getppid, SYS_uname, SYS_openat, SYS_execve, SYS_sendto };
static int trace_which, trace_via_acc, trace_data = 7;
static int trace_filter(void)
{
	struct sock_filter k[] = {
		LOAD_NR,
		ON(traced_nr[trace_which], SECCOMP_RET_TRACE | trace_data),
		ALLOW,
	};
	/* the same action from the accumulator (BPF_RET | BPF_A) */
	struct sock_filter a[] = {
		LOAD_NR,
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, traced_nr[trace_which], 0, 2),
		BPF_STMT(BPF_LD | BPF_IMM, SECCOMP_RET_TRACE | trace_data),
		BPF_STMT(BPF_RET | BPF_A, 0),
		ALLOW,
	};
	int r = trace_via_acc ? install(a, 5, trace_which & 1, 0) : install(k, 4, trace_which & 1, 0);
	if (r < 0)
		return errno == EINVAL ? 2 : 10;
	errno = 0;
	r = traced_call(trace_which);
	return r == -1 && errno == ENOSYS ? 0 : 1;
}

/* TSYNC: a filter for every thread at once */
static int tsync(void)
{
	struct sock_filter f[] = {
		LOAD_NR,
		ON(SYS_getppid, SECCOMP_RET_ERRNO | EPERM),
		ALLOW,
	};
	return install(f, 4, 0, SECCOMP_FILTER_FLAG_TSYNC) == 0 && syscall(SYS_getppid) == -1 ? 0 : 1;
}

/* a listener of the guest's own: moat's sandbox already has one (EBUSY) */
static int listener(void)
{
	struct sock_filter f[] = { ALLOW };
	int fd = install(f, 1, 0, SECCOMP_FILTER_FLAG_NEW_LISTENER);
	if (fd >= 0)
		return 0;
	return errno == EBUSY ? 1 : 2;
}

/* strict mode: only read, write, exit, sigreturn */
static int strict(void)
{
	int p[2];
	if (pipe(p) < 0)
		return 10;
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT, 0, 0, 0) < 0)
		return errno == EINVAL ? 1 : 2;
	write(p[1], "s", 1);
	syscall(SYS_exit, 0);
	return 3;
}

/* without no_new_privs and CAP_SYS_ADMIN a filter is EACCES (LTP prctl02;
 * the host's no_new_privs is always set under moat: the guest's own is
 * virtual), after the EFAULT of an unreadable sock_fprog; with
 * no_new_privs set, it installs. A root child drops CAP_SYS_ADMIN from its
 * effective set first. 0: as Linux; 9: no_new_privs was already set here */
#include <linux/capability.h>
static int needs_nnp(void)
{
	if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 0)
		return 9;
	if (geteuid() == 0) {
		struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
		struct __user_cap_data_struct d[2];
		if (syscall(SYS_capget, &h, d) < 0)
			return 20;
		d[0].effective &= ~(1u << CAP_SYS_ADMIN);
		if (syscall(SYS_capset, &h, d) < 0)
			return 21;
	}
	struct sock_filter f[] = { ALLOW };
	struct sock_fprog prog = { .len = 1, .filter = f };
	errno = 0;
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) != -1 || errno != EACCES)
		return 22;
	errno = 0;
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != -1 || errno != EACCES)
		return 23;
	/* red team 55: the op with bit 32 set. The kernel takes an unsigned
	 * int (SECCOMP_SET_MODE_FILTER); moat compared all 64 bits, took it
	 * for another op and let it run natively, where the host's
	 * no_new_privs is always set: the filter installed */
	errno = 0;
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER | (1L << 32), 0, &prog) != -1 || errno != EACCES)
		return 27;
	errno = 0;
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, (void *)8, 0, 0) != -1 || errno != EFAULT)
		return 24;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1)
		return 25;
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0)
		return 26;
	return 0;
}

int main(int argc, char **argv)
{
	t_setup(argc, argv, "seccomp");
	unsigned act = SECCOMP_RET_KILL_PROCESS;
	EXPECT_OK(syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &act), "get_action_avail");
	act = SECCOMP_RET_USER_NOTIF;
	EXPECT_OK(syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &act), "get_action_avail_notif");
	static const struct {
		int (*fn)(void);
		int want; /* the child's exit status, 128 + its signal */
		const char *name;
	} cases[] = {
		{ errno_seccomp, 0, "errno_filter_seccomp" },
		{ errno_prctl, 0, "errno_filter_prctl" },
		{ kill_filter, 128 + SIGSYS, "kill_process_filter" },
		{ allow_all, 0, "allow_all_loosens_nothing" },
		{ inherited, 5, "inherited_across_exec" },
		{ tsync, 0, "tsync" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		int r = in_child(cases[i].fn);
		CHECK(r == cases[i].want, cases[i].name, "child %d", r);
	}
	/* getppid (native), uname (emulated), openat (emulated), execve (the
	 * sandbox's own RET_TRACE), sendto without an address (native form of
	 * an EXEC_UNLESS row: red team 14), each with RET_DATA 7 and 0, from a
	 * constant and from the accumulator */
	static const char *const tname[] = { "getppid", "uname", "openat", "execve", "sendto" };
	for (trace_which = 0; trace_which < 5; trace_which++)
		for (trace_via_acc = 0; trace_via_acc < 2; trace_via_acc++)
			for (trace_data = 7; trace_data >= 0; trace_data -= 7) {
				int r = in_child(trace_filter);
				CHECK(r == 0 || (r == 2 && t_in_guest()), "trace_filter_holds_or_is_refused",
				      "%s data %d%s: child %d", tname[trace_which], trace_data,
				      trace_via_acc ? " (RET A)" : "", r);
			}
	int r = in_child(listener);
	/* the sandbox's filter chain has the one listener a chain may have */
	CHECK(r == 0 || r == 1, "new_listener", "child %d", r);
	r = in_child(strict);
	/* strict mode cannot follow filter mode: the guest always has a
	 * filter (EINVAL); natively it works */
	CHECK(r == 0 || r == 1, "strict_mode", "child %d", r);
	r = in_child(needs_nnp);
	/* (9 natively only: a sandbox's guest starts without its own no_new_privs) */
	CHECK(r == 0 || (r == 9 && !t_in_guest()), "filter_needs_nnp_or_cap_sys_admin", "child %d", r);
	EXPECT_ERR(syscall(SYS_seccomp, 99, 0, NULL), EINVAL, "bad_op");
	return t_done();
}
