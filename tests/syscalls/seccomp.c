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

/* RET_TRACE with no tracer of the guest's own: ENOSYS (the sandbox's
 * tracer must not run the call) */
static int trace_no_tracer(void)
{
	struct sock_filter f[] = {
		LOAD_NR,
		ON(SYS_getppid, SECCOMP_RET_TRACE | 7),
		ALLOW,
	};
	if (install(f, 4, 0, 0) < 0)
		return 10;
	errno = 0;
	long r = syscall(SYS_getppid);
	return r == -1 && errno == ENOSYS ? 0 : 1;
}

/* RET_TRACE on calls of the sandbox's EXEC rows in the form its filter
 * runs natively (sendto/recvfrom without an address): ENOSYS too. The
 * tracer took them for its own stops and ran them (red team 14). */
static int trace_exec_row_native_form(void)
{
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_DGRAM, 0, sv) < 0)
		return 11;
	struct sock_filter f[] = {
		LOAD_NR,
		ON(SYS_sendto, SECCOMP_RET_TRACE | 7),
		ON(SYS_recvfrom, SECCOMP_RET_TRACE | 7),
		ALLOW,
	};
	if (install(f, 6, 0, 0) < 0)
		return 10;
	errno = 0;
	long r = syscall(SYS_sendto, sv[0], "hi", 2, 0, NULL, 0);
	if (r != -1 || errno != ENOSYS)
		return 1;
	char b[4];
	errno = 0;
	r = syscall(SYS_recvfrom, sv[1], b, sizeof b, MSG_DONTWAIT, NULL, NULL);
	if (r != -1 || errno != ENOSYS)
		return 2;
	return 0;
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
		{ trace_no_tracer, 0, "trace_without_tracer_enosys" },
		{ trace_exec_row_native_form, 0, "trace_exec_row_native_form_enosys" },
		{ tsync, 0, "tsync" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		int r = in_child(cases[i].fn);
		CHECK(r == cases[i].want, cases[i].name, "child %d", r);
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
