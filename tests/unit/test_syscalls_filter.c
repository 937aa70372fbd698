/* tests/unit/test_syscalls_filter.c - the generated seccomp filter, installed
 * for real in a child with a user-notification listener.
 *
 * The child installs the filter (SECCOMP_FILTER_FLAG_NEW_LISTENER), passes
 * the listener to the parent over a socketpair (sendmsg is FAST), then makes
 * probe calls. The parent plays the sentry: it records every notification and
 * answers the way the sentry would (EPERM for argument rules, ENOSYS for
 * unknown numbers). The child reports each probe's result in its exit status.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/fs.h>
#include <linux/netlink.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/util.h"
#include "syscalls/filter.h"
#include "syscalls/table.h"

#define MAXN 64

struct seen {
	int n;
	int nr[MAXN];
	uint64_t a0[MAXN], a1[MAXN];
};

static long raw(long nr, long a0, long a1, long a2)
{
	long r = syscall(nr, a0, a1, a2, 0, 0, 0);

	return r < 0 ? -errno : r;
}

/* i386 getpid (20) through int 0x80, in a child: returns its exit code
 * (0: ENOSYS, 1: the call ran, 2: other) or 100 + signal if it was killed */
static int int80_probe(void)
{
	pid_t p = fork();
	int st;

	if (p == 0) {
		long ret;
		long me = syscall(SYS_getpid);

		__asm__ volatile("int $0x80" : "=a"(ret) : "a"(20L) : "memory");
		_exit(ret == -ENOSYS ? 0 : ret == me ? 1 : 2);
	}
	if (p < 0 || waitpid(p, &st, 0) != p)
		return 3;
	return WIFSIGNALED(st) ? 100 + WTERMSIG(st) : WEXITSTATUS(st);
}

/* exit codes of the filtered child: 0 all good, else the failed probe */
static void child(int sock)
{
	scmp_filter_ctx ctx;
	struct sock_fprog prog;
	long pid, r;
	int lfd, fds[2];
	char c = 'x';

	if (sc_build_guest_filter(&ctx, 0) || sc_filter_export(ctx, &prog))
		_exit(50);
	pid = syscall(SYS_getpid);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		_exit(51);
	lfd = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
			   SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
	if (lfd < 0)
		_exit(52);
	if (send_fd_number(sock, lfd) < 0) /* send*msg are ptrace stops: no tracer here */
		_exit(53);
	close(lfd);

	/* 1. FAST runs natively: the parent sees nothing */
	if (raw(SYS_getpid, 0, 0, 0) != pid)
		_exit(1);
	/* 2. x32 entry: the sentry's ENOSYS */
	r = raw(0x40000000 | SYS_getpid, 0, 0, 0);
	if (r != -ENOSYS)
		_exit(2);
	/* 3. i386 entry (int 0x80): never runs (the sentry's ENOSYS) */
	r = int80_probe();
	if (r != 0 && r < 100)
		_exit(3);
	/* 4. ioctl(TIOCSTI) goes to the sentry, even with junk in the high bits */
	if (pipe(fds))
		_exit(54);
	if (raw(SYS_ioctl, fds[0], TIOCSTI, (long)&c) != -EPERM)
		_exit(4);
	if (raw(SYS_ioctl, fds[0], (long)(TIOCSTI | (1UL << 32)), (long)&c) != -EPERM)
		_exit(5);
	/* 5. other ioctls run natively (a pipe is not a tty) */
	if (raw(SYS_ioctl, fds[0], TCGETS, (long)&c) != -ENOTTY)
		_exit(6);
	/* 6. unknown number: the sentry's ENOSYS */
	if (raw(1000, 1, 2, 3) != -ENOSYS)
		_exit(7);
	/* 7. clone with a namespace flag: the sentry's EPERM (if it ever ran
	 * natively, the new child leaves at once) */
	r = raw(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0);
	if (r == 0)
		_exit(0);
	if (r != -EPERM)
		_exit(8);
	/* 8. plain fork still works natively */
	r = raw(SYS_clone, SIGCHLD, 0, 0);
	if (r == 0)
		_exit(0);
	if (r < 0 || waitpid((pid_t)r, NULL, 0) != r)
		_exit(9);
	/* 9. EMULATE and DENY rows reach the sentry */
	if (raw(SYS_openat, AT_FDCWD, (long)"/", O_RDONLY) != -ENOSYS)
		_exit(10);
	if (raw(SYS_ptrace, 0, 0, 0) != -EPERM)
		_exit(11);
	/* 10. FAST_TRAP: fcntl's lock commands reach the sentry (answered
	 * ENOLCK below), F_GETFL runs natively */
	if (raw(SYS_fcntl, fds[1], F_SETLK, 0) != -ENOLCK)
		_exit(13);
	if (raw(SYS_fcntl, fds[1], F_SETLEASE | (1L << 32), 0) != -ENOLCK)
		_exit(14);
	if (raw(SYS_fcntl, fds[1], F_GETFL, 0) != O_WRONLY)
		_exit(15);
	/* 11. EXEC is RET_TRACE: with no tracer, the kernel answers ENOSYS */
	if (raw(SYS_execve, (long)"/bin/true", 0, 0) != -ENOSYS)
		_exit(12);
	/* 11. allow lists: AF_UNIX/AF_INET and NETLINK_ROUTE run natively
	 * (untrapped), AF_VSOCK and AF_PACKET are the sentry's EAFNOSUPPORT,
	 * even with junk in the high bits, NETLINK_AUDIT its EPROTONOSUPPORT */
	r = raw(SYS_socket, AF_UNIX, SOCK_DGRAM, 0);
	if (r < 0)
		_exit(13);
	close((int)r);
	r = raw(SYS_socket, AF_INET, SOCK_DGRAM, 0);
	if (r < 0)
		_exit(14);
	close((int)r);
	r = raw(SYS_socket, AF_NETLINK, SOCK_RAW, NETLINK_ROUTE);
	if (r < 0)
		_exit(15);
	close((int)r);
	if (raw(SYS_socket, AF_VSOCK, SOCK_STREAM, 0) != -EAFNOSUPPORT)
		_exit(16);
	if (raw(SYS_socket, (long)(AF_VSOCK | (1UL << 32)), SOCK_STREAM, 0) != -EAFNOSUPPORT)
		_exit(17);
	if (raw(SYS_socket, AF_PACKET, SOCK_RAW, 0) != -EAFNOSUPPORT)
		_exit(18);
	if (raw(SYS_socket, AF_NETLINK, SOCK_RAW, NETLINK_AUDIT) != -EPROTONOSUPPORT)
		_exit(19);
	/* a pair no built-in protosw holds (red team 67): the sentry's, with
	 * Linux's answer without the module; the built-in pair runs natively
	 * whatever its flags */
	if (raw(SYS_socket, AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 132) != -EPROTONOSUPPORT)
		_exit(24);
	if (raw(SYS_socket, AF_INET6, SOCK_SEQPACKET, 0) != -ESOCKTNOSUPPORT)
		_exit(25);
	r = raw(SYS_socket, AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 6 | (1L << 32));
	if (r < 0)
		_exit(26);
	close((int)r);
	{
		int sp[2];

		if (raw(SYS_socketpair, AF_UNIX, SOCK_STREAM, 0) == -EAFNOSUPPORT)
			_exit(20);
		if (syscall(SYS_socketpair, AF_UNIX, SOCK_STREAM, 0, sp) != 0)
			_exit(21);
		close(sp[0]);
		close(sp[1]);
		if (raw(SYS_socketpair, AF_TIPC, SOCK_SEQPACKET, 0) != -EAFNOSUPPORT)
			_exit(22);
	}
	/* 12. an ioctl class: FS_IOC_SETFLAGS is the sentry's EPERM */
	if (raw(SYS_ioctl, fds[0], FS_IOC_SETFLAGS, (long)&c) != -EPERM)
		_exit(23);
	_exit(0);
}

/* the sentry's side: record, answer as the table says, until the child is gone */
static void serve(int lfd, pid_t pid, struct seen *s, int *status)
{
	struct seccomp_notif req;
	struct seccomp_notif_resp resp;

	for (;;) {
		struct pollfd pfd = { .fd = lfd, .events = POLLIN };
		int pr = poll(&pfd, 1, 100);

		if (waitpid(pid, status, WNOHANG) == pid)
			return;
		if (pr <= 0 || !(pfd.revents & POLLIN))
			continue;
		memset(&req, 0, sizeof(req));
		if (ioctl(lfd, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0)
			continue;
		if (s->n < MAXN) {
			s->nr[s->n] = req.data.nr;
			s->a0[s->n] = req.data.args[0];
			s->a1[s->n] = req.data.args[1];
			s->n++;
		}
		memset(&resp, 0, sizeof(resp));
		resp.id = req.id;
		{
			const struct sysent *e = sc_lookup(req.data.nr);
			uint64_t args[SC_MAXARGS];

			for (int i = 0; i < SC_MAXARGS; i++)
				args[i] = req.data.args[i];

			/* a foreign number space never meets the x86_64 table
			 * (the sentry's deny_unknown) */
			if (req.data.arch != AUDIT_ARCH_X86_64 || (req.data.nr & 0x40000000))
				resp.error = -ENOSYS;
			else if (!e)
				resp.error = -ENOSYS;
			else if (e->argtrap && sc_argtrap_match(e, args))
				/* the handler would answer: sys_ioctl denies all
				 * but TIOCSCTTY on the sandbox's ptys */
				resp.error = req.data.nr == SYS_ioctl ? -EPERM : -ENOLCK;
			else if (e->cls == SC_DENY ||
				 (e->cls == SC_FAST && !sc_args_native(e, args)))
				resp.error = -sc_deny_errno(e, args);
			else
				resp.error = -ENOSYS; /* EMULATE: no handlers here */
		}
		ioctl(lfd, SECCOMP_IOCTL_NOTIF_SEND, &resp);
	}
}

static int count_nr(const struct seen *s, int nr)
{
	int n = 0;

	for (int i = 0; i < s->n; i++)
		n += s->nr[i] == nr;
	return n;
}

Test(syscalls_filter, guest_filter_in_a_child)
{
	int sv[2], lfd = -1, status = -1;
	char b[1 + sizeof(int)];
	struct seen s = { 0 };
	pid_t pid;

	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		close(sv[0]);
		child(sv[1]);
	}
	close(sv[1]);
	cr_assert_eq(read(sv[0], b, sizeof b), (ssize_t)sizeof b, "child failed before the listener");
	cr_assert_eq(b[0], 'L');
	lfd = take_fd_number(sv[0], pid, b + 1);
	cr_assert_geq(lfd, 0, "pidfd_getfd of the listener: %s", strerror(-lfd));
	serve(lfd, pid, &s, &status);
	close(lfd);

	cr_assert(WIFEXITED(status), "child killed by signal %d", WTERMSIG(status));
	cr_assert_eq(WEXITSTATUS(status), 0, "probe %d failed", WEXITSTATUS(status));
	cr_assert_eq(count_nr(&s, SYS_getpid), 0, "getpid trapped");
	/* int 0x80 (i386 getpid, 20: x86_64's writev, FAST) and the x32
	 * getpid reach the sentry, to be audited (red team 75). A kernel
	 * without IA-32 emulation (a pvm guest's: "IA-32 emulation off")
	 * faults int 0x80 before any filter sees it, natively too: there
	 * nothing reaches the sentry, nor runs */
	int native80 = int80_probe();
	cr_assert_eq(count_nr(&s, 20), native80 == 100 + SIGSEGV ? 0 : 1,
		     "int 0x80 not sent to the sentry (native probe %d)", native80);
	cr_assert_eq(count_nr(&s, 0x40000000 | SYS_getpid), 1, "x32 not sent to the sentry");
	cr_assert_eq(count_nr(&s, SYS_ioctl), 3, "ioctl(TIOCSTI) x2 + FS_IOC_SETFLAGS expected");
	/* vsock x2, packet, audit, sctp, inet6 seqpacket: the allowed
	 * families and built-in pairs (flags in the type, junk above the
	 * protocol's int) never reach the sentry */
	cr_assert_eq(count_nr(&s, SYS_socket), 6, "socket: only the denied families and pairs trap");
	cr_assert_eq(count_nr(&s, SYS_socketpair), 1, "socketpair: only AF_TIPC traps");
	cr_assert_eq(count_nr(&s, 1000), 1, "unknown number not trapped");
	cr_assert_eq(count_nr(&s, SYS_clone), 1, "only the CLONE_NEWUSER clone traps");
	cr_assert_eq(count_nr(&s, SYS_fcntl), 2, "only F_SETLK and F_SETLEASE trap");
	cr_assert_eq(count_nr(&s, SYS_openat), 1);
	cr_assert_eq(count_nr(&s, SYS_ptrace), 1);
	cr_assert_eq(count_nr(&s, SYS_execve), 0, "execve is RET_TRACE, not NOTIFY");
}

Test(syscalls_filter, export_and_hash)
{
	scmp_filter_ctx a, b;
	struct sock_fprog p;
	uint64_t ha, hb, hc;

	cr_assert_eq(sc_build_guest_filter(&a, 0), 0);
	cr_assert_eq(sc_build_guest_filter(&b, 0), 0);
	cr_assert_eq(sc_filter_export(a, &p), 0);
	cr_assert_gt(p.len, 10);
	cr_assert_leq(p.len, BPF_MAXINSNS);
	/* the first instructions check the architecture */
	cr_assert_eq(p.filter[0].code, BPF_LD | BPF_W | BPF_ABS);
	cr_assert_eq(p.filter[0].k, 4 /* offsetof(struct seccomp_data, arch) */);
	free(p.filter);
	cr_assert_eq(sc_filter_hash(a, &ha), 0);
	cr_assert_eq(sc_filter_hash(b, &hb), 0);
	cr_assert_eq(ha, hb, "same table, same version");
	seccomp_release(b);
	/* an extra notified number changes the program and the version */
	cr_assert_eq(sc_build_guest_filter(&b, SYS_getpid), 0);
	cr_assert_eq(sc_filter_hash(b, &hc), 0);
	cr_assert_neq(ha, hc);
	seccomp_release(a);
	seccomp_release(b);
}
