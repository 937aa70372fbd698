/* tests/unit/test_syscalls_table.c - the syscall table, its listing and the
 * strace-like decoder. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/fs.h>
#include <linux/fsverity.h>
#include <linux/netlink.h>
#include <sys/ioctl.h>
#include <sys/personality.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "syscalls/decode.h"
#include "syscalls/filter.h"
#include "syscalls/handlers.h"
#include "syscalls/table.h"
#include "syscalls/table_def.h"

static int nrows(void)
{
	int n = 0;

	for (int i = 0; i < SC_NR_MAX; i++)
		n += sc_table[i].name != NULL;
	return n;
}

Test(syscalls_table, every_row_sits_at_its_number)
{
	cr_assert_eq(nrows(), 383, "rows: %d", nrows());
	for (int i = 0; i < SC_NR_MAX; i++) {
		if (!sc_table[i].name)
			continue;
		cr_assert_eq(sc_table[i].nr, i, "%s: nr %d at index %d",
			     sc_table[i].name, sc_table[i].nr, i);
		cr_assert_eq(sc_lookup(i), &sc_table[i]);
	}
	cr_assert_null(sc_lookup(-1));
	cr_assert_null(sc_lookup(337));
	cr_assert_null(sc_lookup(SC_NR_MAX));
	cr_assert_null(sc_lookup(0x40000000 | 39));
}

Test(syscalls_table, names_are_unique_and_found)
{
	for (int i = 0; i < SC_NR_MAX; i++) {
		if (!sc_table[i].name)
			continue;
		for (int j = i + 1; j < SC_NR_MAX; j++)
			if (sc_table[j].name)
				cr_assert_str_neq(sc_table[i].name, sc_table[j].name);
		cr_assert_eq(sc_lookup_name(sc_table[i].name), &sc_table[i]);
	}
	cr_assert_null(sc_lookup_name("no_such_call"));
	cr_assert_null(sc_lookup_name(NULL));
}

/* libc's numbers and libseccomp's own table agree with ours */
Test(syscalls_table, numbers_match_libc_and_libseccomp)
{
	static const struct { const char *name; long nr; } libc[] = {
		{ "read", SYS_read }, { "open", SYS_open },
		{ "openat", SYS_openat }, { "execve", SYS_execve },
		{ "clone3", SYS_clone3 }, { "openat2", SYS_openat2 },
		{ "futex_waitv", SYS_futex_waitv }, { "rseq", SYS_rseq },
		{ "io_uring_setup", SYS_io_uring_setup },
	};

	for (size_t i = 0; i < sizeof(libc) / sizeof(libc[0]); i++) {
		const struct sysent *e = sc_lookup_name(libc[i].name);

		cr_assert_not_null(e, "%s", libc[i].name);
		cr_assert_eq(e->nr, libc[i].nr, "%s", libc[i].name);
	}
	for (int i = 0; i < SC_NR_MAX; i++) {
		int r;

		if (!sc_table[i].name)
			continue;
		r = seccomp_syscall_resolve_name_arch(SCMP_ARCH_X86_64,
						      sc_table[i].name);
		if (r >= 0)
			cr_assert_eq(r, i, "libseccomp: %s is %d, table %d",
				     sc_table[i].name, r, i);
	}
}

Test(syscalls_table, handlers_match_classes)
{
	char want[64];

	for (int i = 0; i < SC_NR_MAX; i++) {
		const struct sysent *e = &sc_table[i];

		if (!e->name)
			continue;
		cr_assert(e->cls >= SC_FAST && e->cls <= SC_KILL, "%s", e->name);
		cr_assert(e->status >= ST_FULL && e->status <= ST_NONE, "%s", e->name);
		cr_assert_not_null(e->note, "%s", e->name);
		cr_assert_not_null(e->handler_name, "%s", e->name);
		if (e->cls == SC_EMULATE || e->argtrap) {
			snprintf(want, sizeof(want), "sys_%s", e->name);
			cr_assert_not_null(e->handler, "%s", e->name);
			cr_assert_str_eq(e->handler_name, want);
		} else {
			cr_assert_null(e->handler, "%s", e->name);
			cr_assert_str_empty(e->handler_name, "%s", e->name);
		}
		if (e->cls == SC_DENY)
			cr_assert(e->err > 0 && e->err < 4096, "%s", e->name);
		if (e->deny) {
			cr_assert_eq(e->cls, SC_FAST, "%s", e->name);
			if (e->argtrap)
				cr_assert_eq(e->err, 0, "%s: trapped calls go to the handler", e->name);
			else
				cr_assert(e->err > 0, "%s: rules need an errno", e->name);
			cr_assert_geq(e->deny[0].arg, 0, "%s: empty rules", e->name);
		}
		if (e->allow && e->cls == SC_EXEC) {
			/* EXEC_UNLESS: one full-mask comparison, native when it holds */
			cr_assert_eq(e->allow[0].ncmp, 1, "%s", e->name);
			cr_assert_eq(e->allow[1].ncmp, 0, "%s", e->name);
			cr_assert_eq(e->err, 0, "%s", e->name);
		} else if (e->allow) {
			cr_assert_eq(e->cls, SC_FAST, "%s", e->name);
			if (e->argtrap)
				cr_assert_eq(e->err, 0, "%s: trapped calls go to the handler", e->name);
			else
				cr_assert(e->err > 0, "%s: an allow list needs an errno", e->name);
			cr_assert_gt(e->allow[0].ncmp, 0, "%s: empty allow list", e->name);
		}
		if (e->argtrap)
			cr_assert(e->deny || e->allow, "%s: FAST_TRAP without rules", e->name);
		if (e->cls != SC_DENY && !e->deny && !e->allow)
			cr_assert_eq(e->err, 0, "%s", e->name);
	}
}

Test(syscalls_table, arg_kinds_count_is_nargs)
{
	for (int i = 0; i < SC_NR_MAX; i++) {
		const struct sysent *e = &sc_table[i];

		if (!e->name)
			continue;
		cr_assert_leq(e->nargs, SC_MAXARGS, "%s", e->name);
		for (int a = 0; a < SC_MAXARGS; a++) {
			if (a < e->nargs)
				cr_assert_neq(e->args[a], A_NONE, "%s arg %d", e->name, a);
			else
				cr_assert_eq(e->args[a], A_NONE, "%s arg %d", e->name, a);
		}
	}
	cr_assert_eq(sc_lookup_name("getpid")->nargs, 0);
	cr_assert_eq(sc_lookup_name("mmap")->nargs, 6);
	cr_assert_eq(sc_lookup_name("openat")->args[1], A_PATH);
	cr_assert_eq(sc_lookup_name("openat2")->args[2], A_OPEN_HOW);
}

Test(syscalls_table, dangerous_calls_are_never_fast)
{
	static const char *const never[] = {
		"io_uring_setup", "io_uring_enter", "io_uring_register",
		"ptrace", "bpf", "mount", "umount2", "pivot_root", "chroot",
		"kexec_load", "kexec_file_load", "init_module", "finit_module",
		"delete_module", "userfaultfd", "perf_event_open",
		"open_by_handle_at", "name_to_handle_at", "unshare", "setns",
		"clone3", "fsopen", "fsmount", "move_mount", "open_tree",
		"pidfd_getfd", "keyctl", "add_key", "memfd_secret",
		"modify_ldt", "iopl", "ioperm", "settimeofday", "clock_settime",
		"execve", "execveat", "open", "openat", "openat2", "stat",
		"newfstatat", "statx", "chdir", "getcwd", "umask",
		"fsetxattr", "fremovexattr", "syslog", "acct", "vhangup",
		"quotactl", "migrate_pages", "move_pages", "process_madvise",
		"process_mrelease", "fanotify_init", "request_key",
	};

	for (size_t i = 0; i < sizeof(never) / sizeof(never[0]); i++) {
		const struct sysent *e = sc_lookup_name(never[i]);

		cr_assert_not_null(e, "%s", never[i]);
		cr_assert_neq(e->cls, SC_FAST, "%s is FAST", never[i]);
	}
	cr_assert_eq(sc_lookup_name("execve")->cls, SC_EXEC);
	cr_assert_eq(sc_lookup_name("execveat")->cls, SC_EXEC);
	cr_assert_eq(sc_lookup_name("clone3")->err, ENOSYS);
	cr_assert_eq(sc_lookup_name("ptrace")->err, EPERM);
	/* /proc/config.gz says CONFIG_FANOTIFY is not set: a kernel without it */
	cr_assert_eq(sc_lookup_name("fanotify_init")->err, ENOSYS);
	cr_assert_eq(sc_lookup_name("fanotify_mark")->err, ENOSYS);
	cr_assert_eq(sc_lookup_name("listmount")->err, ENOSYS);
	cr_assert_eq(sc_lookup_name("statmount")->err, ENOSYS);
	cr_assert_eq(sc_lookup_name("getpid")->cls, SC_FAST);
	cr_assert_eq(sc_lookup_name("fstat")->cls, SC_FAST);
}

/* every row that takes a path is emulated or denied */
Test(syscalls_table, path_calls_never_run_natively)
{
	for (int i = 0; i < SC_NR_MAX; i++) {
		const struct sysent *e = &sc_table[i];

		if (!e->name)
			continue;
		for (int a = 0; a < e->nargs; a++)
			if (e->args[a] == A_PATH)
				cr_assert_neq(e->cls, SC_FAST, "%s takes a path", e->name);
	}
}

/* The TOCTOU rule (syscalls/table.c sc_cont_rows): a call the kernel runs
 * after the sentry decided on it (a CONTINUE, or a ptrace stop resumed)
 * must not have been decided on memory the kernel then reads again. A row
 * that may be resumed so and declares an argument the pipeline copies in
 * for the policy (PATH, STR, OPEN_HOW, SOCKADDR, ARGV), or for a ptrace
 * stop (class EXEC, whose stop reads raw memory) any pointer, breaks the
 * rule unless it is on sc_toctou_exceptions with why the kernel's second
 * read cannot undo the decision. A CONTINUE row's A_PTR arguments are the
 * kernel's alone: the pipeline refuses a CONTINUE after any read of the
 * caller's memory (sc_cont_allowed). */
static int toctou_copies_in(int kind)
{
	return kind == A_PATH || kind == A_STR || kind == A_OPEN_HOW || kind == A_SOCKADDR || kind == A_ARGV;
}

/* NULL, or why row e (resumed: cont 1 for a CONTINUE row, else a ptrace
 * stop) breaks the rule given the exceptions exc[0..nexc-1] */
static const char *toctou_violation(const struct sysent *e, int cont, const struct sc_cont *exc, size_t nexc)
{
	for (size_t i = 0; i < nexc; i++)
		if (exc[i].nr == e->nr)
			return exc[i].why && exc[i].why[0] ? NULL : "an exception without a reason";
	for (int a = 0; a < e->nargs; a++) {
		if (toctou_copies_in(e->args[a]))
			return "a CONTINUE or a resumed stop after the pipeline copied a pointer argument in";
		if (!cont && e->args[a] == A_PTR)
			return "a resumed ptrace stop with a pointer argument";
	}
	return NULL;
}

Test(syscalls_table, toctou_rule)
{
	const struct sc_cont *rows, *exc;
	size_t n = sc_cont_rows_get(&rows), nexc = sc_toctou_exceptions_get(&exc);

	cr_assert_gt(n, 0);
	for (size_t i = 0; i < n; i++) {
		const struct sysent *e = sc_lookup(rows[i].nr);
		cr_assert_not_null(e, "CONTINUE row %d is not in the table", rows[i].nr);
		cr_assert(rows[i].why && rows[i].why[0], "%s: a CONTINUE row without its reason", e->name);
		/* a handler answers it (EMULATE, or FAST with argument traps) */
		cr_assert(e->handler && (e->cls == SC_EMULATE || (e->cls == SC_FAST && e->argtrap)),
			  "%s: a CONTINUE row no handler answers", e->name);
		cr_assert_eq(sc_cont_row(rows[i].nr), &rows[i], "%s listed twice", e->name);
		const char *why = toctou_violation(e, 1, exc, nexc);
		cr_assert_null(why, "%s: %s", e->name, why);
		/* the pipeline's half: registers only, unless declared */
		cr_assert(sc_cont_allowed(e->nr, 0));
		cr_assert_eq(sc_cont_allowed(e->nr, 1), rows[i].reads, "%s", e->name);
	}
	for (int i = 0; i < SC_NR_MAX; i++) {
		const struct sysent *e = &sc_table[i];
		if (!e->name)
			continue;
		if (e->cls == SC_EXEC) {
			const char *why = toctou_violation(e, 0, exc, nexc);
			cr_assert_null(why, "%s: %s", e->name, why);
		} else if (!sc_cont_row(e->nr)) {
			cr_assert_not(sc_cont_allowed(e->nr, 0), "%s", e->name);
		}
	}
	for (size_t i = 0; i < nexc; i++)
		cr_assert_not_null(sc_lookup(exc[i].nr), "exception %d is not in the table", exc[i].nr);

	/* the check itself: a bad row is seen (openat's path; a stop's
	 * pointer), an exception is not */
	cr_assert_not_null(toctou_violation(sc_lookup_name("openat"), 1, exc, nexc));
	cr_assert_not_null(toctou_violation(sc_lookup_name("connect"), 0, NULL, 0));
	cr_assert_not_null(toctou_violation(sc_lookup_name("recvmsg"), 0, NULL, 0));
	cr_assert_null(toctou_violation(sc_lookup_name("kill"), 1, NULL, 0));
	cr_assert_null(toctou_violation(sc_lookup_name("connect"), 0, exc, nexc));
	const struct sc_cont bad = { __NR_connect, 1, "" };
	cr_assert_not_null(toctou_violation(sc_lookup_name("connect"), 0, &bad, 1));
}

Test(syscalls_table, argument_rules)
{
	const struct sysent *ioctl_e = sc_lookup_name("ioctl");
	const struct sysent *clone_e = sc_lookup_name("clone");
	uint64_t a[SC_MAXARGS] = { 0 };

	a[1] = TIOCSTI;
	cr_assert_not_null(sc_argdeny_match(ioctl_e, a));
	a[1] = TIOCSTI | (1ULL << 32);  /* the kernel truncates cmd to 32 bits */
	cr_assert_not_null(sc_argdeny_match(ioctl_e, a));
	a[1] = TIOCLINUX;
	cr_assert_not_null(sc_argdeny_match(ioctl_e, a));
	a[1] = FIONREAD;
	cr_assert_null(sc_argdeny_match(ioctl_e, a));
	a[1] = TCGETS;
	cr_assert_null(sc_argdeny_match(ioctl_e, a));

	memset(a, 0, sizeof(a));
	a[0] = CLONE_NEWUSER | SIGCHLD;
	cr_assert_not_null(sc_argdeny_match(clone_e, a));
	a[0] = CLONE_VM | CLONE_THREAD | CLONE_SIGHAND | CLONE_NEWNET;
	cr_assert_not_null(sc_argdeny_match(clone_e, a));
	a[0] = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD |
	       CLONE_SYSVSEM | CLONE_SETTLS | CLONE_PARENT_SETTID |
	       CLONE_CHILD_CLEARTID;
	cr_assert_null(sc_argdeny_match(clone_e, a));
	cr_assert_null(sc_argdeny_match(sc_lookup_name("read"), a));
}

/* allow lists (FAST_ONLY): socket families, socketpair, personality */
Test(syscalls_table, allow_lists)
{
	const struct sysent *so = sc_lookup_name("socket");
	const struct sysent *sp = sc_lookup_name("socketpair");
	const struct sysent *pe = sc_lookup_name("personality");
	uint64_t a[SC_MAXARGS] = { 0 };

	cr_assert_eq(so->cls, SC_FAST);
	cr_assert_not_null(so->allow);
	cr_assert_eq(so->err, EAFNOSUPPORT);
	cr_assert_eq(sp->err, EAFNOSUPPORT);
	cr_assert_eq(pe->err, EPERM);
	static const int ok[] = { AF_UNIX, AF_INET, AF_INET6 };
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		a[0] = (uint64_t)ok[i];
		a[1] = SOCK_STREAM | SOCK_CLOEXEC;
		a[2] = ok[i] == AF_UNIX ? 123 : 6; /* AF_UNIX: any protocol */
		cr_assert_not_null(sc_argallow_match(so, a), "family %d", ok[i]);
		cr_assert(sc_args_native(so, a));
		a[0] |= 1ULL << 32; /* int: the kernel ignores the high bits */
		cr_assert(sc_args_native(so, a));
	}
	/* AF_INET/AF_INET6: the built-in (type & 0xf, protocol) pairs only
	 * (red team 67); the others are Linux's answer without the module */
	static const struct { int f, t, p, native, err; } pairs[] = {
		{ AF_INET, SOCK_STREAM, 0, 1, 0 }, { AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 6, 1, 0 },
		{ AF_INET, SOCK_STREAM, 262, 1, 0 }, { AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 17, 1, 0 },
		{ AF_INET, SOCK_DGRAM, 136, 1, 0 }, { AF_INET, SOCK_DGRAM, 1, 1, 0 },
		{ AF_INET6, SOCK_DGRAM, 58, 1, 0 }, { AF_INET, SOCK_RAW, 132, 1, 0 },
		{ AF_INET6, SOCK_RAW, 255, 1, 0 }, { AF_INET, SOCK_STREAM | 0x100, 6, 1, 0 },
		{ AF_INET, SOCK_STREAM, 132, 0, EPROTONOSUPPORT }, { AF_INET6, SOCK_STREAM, 256, 0, EPROTONOSUPPORT },
		{ AF_INET, SOCK_DGRAM, 115, 0, EPROTONOSUPPORT }, { AF_INET, SOCK_DGRAM, 58, 0, EPROTONOSUPPORT },
		{ AF_INET6, SOCK_DGRAM, 1, 0, EPROTONOSUPPORT }, { AF_INET, SOCK_STREAM, 17, 0, EPROTONOSUPPORT },
		{ AF_INET, SOCK_SEQPACKET, 132, 0, ESOCKTNOSUPPORT }, { AF_INET6, 6, 33, 0, ESOCKTNOSUPPORT },
		{ AF_INET, 0, 0, 0, ESOCKTNOSUPPORT }, { AF_INET6, SOCK_PACKET, 0, 0, ESOCKTNOSUPPORT },
		{ AF_INET, SOCK_PACKET, 0, 0, EAFNOSUPPORT }, { AF_INET, 11, 0, 0, EINVAL },
		{ AF_INET, SOCK_STREAM, 263, 0, EINVAL }, { AF_INET, SOCK_DGRAM, -1, 0, EINVAL },
		{ AF_INET, SOCK_STREAM | 0x100, 132, 0, EINVAL },
		{ AF_NETLINK, SOCK_RAW, NETLINK_GENERIC, 0, EPROTONOSUPPORT },
		{ AF_NETLINK, SOCK_STREAM, NETLINK_AUDIT, 0, ESOCKTNOSUPPORT },
		{ AF_VSOCK, SOCK_STREAM, 0, 0, EAFNOSUPPORT },
	};
	for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
		uint64_t b[SC_MAXARGS] = { (uint64_t)pairs[i].f, (uint64_t)pairs[i].t, (uint32_t)pairs[i].p };
		cr_assert_eq(sc_args_native(so, b), pairs[i].native, "pair %zu", i);
		if (!pairs[i].native)
			cr_assert_eq(sc_deny_errno(so, b), pairs[i].err, "pair %zu: %d", i, sc_deny_errno(so, b));
		b[2] |= 1ULL << 32; /* an int: the high bits are not the protocol */
		cr_assert_eq(sc_args_native(so, b), pairs[i].native, "pair %zu high bits", i);
		if (pairs[i].f == AF_NETLINK || pairs[i].f == AF_VSOCK)
			continue;
		b[2] = (uint32_t)pairs[i].p;
		cr_assert_eq(sc_args_native(sp, b), pairs[i].native, "socketpair %zu", i);
		if (!pairs[i].native)
			cr_assert_eq(sc_deny_errno(sp, b), pairs[i].err, "socketpair %zu", i);
	}
	a[1] = SOCK_STREAM;
	static const int bad[] = { AF_VSOCK, AF_PACKET, AF_ALG, AF_KEY,
				   AF_BLUETOOTH, AF_XDP, AF_CAN, AF_TIPC,
				   AF_RDS, AF_UNSPEC, 255 };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		a[0] = (uint64_t)bad[i];
		a[2] = 0;
		cr_assert_null(sc_argallow_match(so, a), "family %d", bad[i]);
		cr_assert_not(sc_args_native(so, a), "family %d", bad[i]);
	}
	/* netlink: NETLINK_ROUTE only */
	a[0] = AF_NETLINK;
	a[2] = NETLINK_ROUTE;
	cr_assert(sc_args_native(so, a));
	static const int nl_bad[] = { NETLINK_AUDIT, NETLINK_KOBJECT_UEVENT,
				      NETLINK_SOCK_DIAG, NETLINK_NETFILTER,
				      NETLINK_GENERIC, NETLINK_XFRM,
				      NETLINK_CONNECTOR, NETLINK_SELINUX };
	for (size_t i = 0; i < sizeof(nl_bad) / sizeof(nl_bad[0]); i++) {
		a[2] = (uint64_t)nl_bad[i];
		cr_assert_not(sc_args_native(so, a), "netlink %d", nl_bad[i]);
	}
	a[2] = NETLINK_ROUTE | (1ULL << 32);
	cr_assert(sc_args_native(so, a));
	/* socketpair: AF_UNIX, and AF_INET/AF_INET6 (the kernel's errors) */
	a[0] = AF_UNIX, a[2] = 0;
	cr_assert(sc_args_native(sp, a));
	a[0] = AF_TIPC;
	cr_assert_not(sc_args_native(sp, a));
	a[0] = AF_INET;
	cr_assert(sc_args_native(sp, a));
	a[0] = AF_INET6;
	cr_assert(sc_args_native(sp, a));
	a[0] = AF_PACKET;
	cr_assert_not(sc_args_native(sp, a));
	a[0] = AF_NETLINK; /* not allowed at all for socketpair */
	cr_assert_not(sc_args_native(sp, a));
	cr_assert_eq(sc_deny_errno(sp, a), EAFNOSUPPORT);
	/* personality */
	memset(a, 0, sizeof(a));
	cr_assert(sc_args_native(pe, a));
	a[0] = 0xffffffff;
	cr_assert(sc_args_native(pe, a));
	a[0] = ADDR_NO_RANDOMIZE;
	cr_assert(sc_args_native(pe, a));
	a[0] = MMAP_PAGE_ZERO;
	cr_assert_not(sc_args_native(pe, a));
	a[0] = READ_IMPLIES_EXEC;
	cr_assert(sc_args_native(pe, a));
	a[0] = PER_SVR4; /* has MMAP_PAGE_ZERO */
	cr_assert_not(sc_args_native(pe, a));
	/* rows without rules run natively whatever their args, and no row has
	 * both kinds of rules (the filter refuses that) */
	cr_assert(sc_args_native(sc_lookup_name("read"), a));
	cr_assert_not(sc_args_native(sc_lookup_name("openat"), a));
	for (int i = 0; i < SC_NR_MAX; i++) {
		const struct sysent *e = &sc_table[i];

		if (!e->name)
			continue;
		cr_assert(!(e->deny && e->allow), "%s has both rule kinds", e->name);
		if (e->deny || (e->allow && e->cls != SC_EXEC))
			cr_assert_eq(e->cls, SC_FAST, "%s", e->name);
		if ((e->deny && !e->argtrap) || (e->allow && e->cls != SC_EXEC && !e->argtrap))
			cr_assert_gt(e->err, 0, "%s", e->name);
	}
	/* FAST_TRAP_UNLESS: setsockopt runs natively for its (level, name)
	 * pairs only (the low 32 bits, as the kernel reads an int), every
	 * other call goes to its handler (hyg33) */
	const struct sysent *sso = sc_lookup_name("setsockopt");
	memset(a, 0, sizeof(a));
	cr_assert(sso->argtrap && sso->allow && !sso->deny);
	a[1] = IPPROTO_TCP, a[2] = TCP_NODELAY;
	cr_assert(sc_args_native(sso, a));
	cr_assert_not(sc_argtrap_match(sso, a));
	a[1] = 0x100000000ull | IPPROTO_TCP;
	cr_assert(sc_args_native(sso, a));
	a[1] = SOL_SOCKET, a[2] = SO_KEEPALIVE;
	cr_assert(sc_args_native(sso, a));
	a[2] = TCP_NODELAY; /* SO_DEBUG: the pair, not the number */
	cr_assert_not(sc_args_native(sso, a));
	cr_assert(sc_argtrap_match(sso, a));
	a[1] = IPPROTO_IP, a[2] = IP_TTL;
	cr_assert(sc_argtrap_match(sso, a));
	a[1] = IPPROTO_TCP, a[2] = 37; /* TCP_TX_DELAY */
	cr_assert(sc_argtrap_match(sso, a));
	a[2] = TCP_ULP;
	cr_assert(sc_argtrap_match(sso, a));
	/* FAST_TRAP_UNLESS_NET: without moat-netd only the options the
	 * handler decides whatever the namespace trap (hyg34) */
	cr_assert_not_null(sso->trap_nonet);
	cr_assert(sc_args_native_net(sso, a, false)); /* TCP_ULP */
	a[2] = 37; /* TCP_TX_DELAY: a host-wide static key */
	cr_assert_not(sc_args_native_net(sso, a, false));
	cr_assert(sc_argtrap_match_net(sso, a, false));
	a[1] = IPPROTO_IP, a[2] = IP_TTL;
	cr_assert(sc_args_native_net(sso, a, false));
	cr_assert_not(sc_argtrap_match_net(sso, a, false));
	a[1] = SOL_SOCKET, a[2] = SO_ATTACH_FILTER;
	cr_assert(sc_argtrap_match_net(sso, a, false));
	a[1] = IPPROTO_IPV6; /* IPV6_V6ONLY: the pair, not the number */
	cr_assert(sc_args_native_net(sso, a, false));
	/* no pair is both native with netd and trapped without it */
	for (const struct sc_argallow *m = sso->trap_nonet; m->ncmp; m++) {
		a[1] = m->cmp[0].value, a[2] = m->cmp[1].value;
		cr_assert_null(sc_argallow_match(sso, a), "%llu/%llu", (unsigned long long)a[1],
			       (unsigned long long)a[2]);
	}
	/* EXEC_UNLESS: sendto/recvfrom without an address run natively */
	const struct sysent *st = sc_lookup_name("sendto");
	memset(a, 0, sizeof(a));
	cr_assert_eq(st->cls, SC_EXEC);
	cr_assert(sc_args_native(st, a));
	a[4] = 0x7ffc0000;
	cr_assert_not(sc_args_native(st, a));
}

/* ioctl: the dangerous classes are denied whatever the fd */
Test(syscalls_table, ioctl_classes)
{
	const struct sysent *e = sc_lookup_name("ioctl");
	static const unsigned long denied[] = {
		TIOCSTI, TIOCLINUX, TIOCSETD, TIOCCONS, TIOCVHANGUP, TIOCEXCL,
		TIOCNXCL /* red team 89: the caller's exclusive mode */, TIOCSCTTY, 0x4b3a /* KDSETMODE */, 0x5606 /* VT_ACTIVATE */,
		FIOASYNC /* SIGIO for the owner: sigio_fioasync_ioctl (red team 82) */,
		/* the serial line's controls (red team 62) */
		TIOCMBIS, TIOCMBIC, TIOCMSET, TIOCSBRK, TIOCCBRK, TIOCSSERIAL, TIOCSRS485,
		0xc0285443 /* TIOCSISO7816 */, TIOCSERCONFIG, TIOCSERSETMULTI,
		0x4c00 /* LOOP_SET_FD */, FS_IOC_SETFLAGS, FS_IOC32_SETFLAGS,
		FS_IOC_SETVERSION, FS_IOC_FSSETXATTR, FS_IOC_FSGETXATTR,
		FIFREEZE, FITHAW, FITRIM, FICLONE, FICLONERANGE, FIDEDUPERANGE,
		FS_IOC_SET_ENCRYPTION_POLICY, FS_IOC_ADD_ENCRYPTION_KEY,
		FS_IOC_ENABLE_VERITY, FS_IOC_SETFSLABEL,
		0x8901 /* FIOSETOWN: checked by sys_ioctl */, 0x8902 /* SIOCSPGRP */,
		/* the socket interface and wireless classes (red team 20: with
		 * --net rules a moat-netd socket is the host's; sys_ioctl ->
		 * netconn_if_ioctl, native without moat-netd) */
		0x8912 /* SIOCGIFCONF */, 0x8933 /* SIOCGIFINDEX */, 0x8903 /* FIOGETOWN */,
		0x8927 /* SIOCGIFHWADDR */, 0x8946 /* SIOCETHTOOL */, 0x8b01 /* SIOCGIWNAME */,
	};
	static const unsigned long native[] = {
		TCGETS, TIOCGWINSZ, TIOCGPGRP,
		TIOCSPGRP, TIOCNOTTY, FIONREAD, FIONBIO, FIOCLEX, FIONCLEX,
		TIOCGPTN,
		0x5401 + 0x80000000UL /* a read request of type 'T' */,
	};
	/* the termios writes: trapped to be noted (sys_ioctl), then native
	 * (tty_guard_restore, red team 36); TCFLSH and TCXONC stay native */
	static const unsigned long termios_set[] = {
		TCSETS, TCSETSW, TCSETSF, TCSETA, TCSETAW, TCSETAF,
		0x402c542b /* TCSETS2 */, 0x402c542c /* TCSETSW2 */, 0x402c542d /* TCSETSF2 */,
		TIOCSSOFTCAR,
	};
	uint64_t ta[SC_MAXARGS] = { 0 };
	for (size_t i = 0; i < sizeof(termios_set) / sizeof(termios_set[0]); i++) {
		ta[1] = termios_set[i];
		cr_assert_not(sc_args_native(e, ta), "ioctl %#lx is not trapped", termios_set[i]);
		ta[1] = termios_set[i] | (7ULL << 32);
		cr_assert_not(sc_args_native(e, ta), "ioctl %#lx (high bits) is not trapped", termios_set[i]);
		cr_assert(sc_ioctl_termios_set((unsigned)termios_set[i]), "ioctl %#lx not a termios write",
			  termios_set[i]);
	}
	for (unsigned long n = 0x5400; n < 0x5480; n++) /* nothing else of 'T' is noted */
		if (n != 0x5402 && n != 0x5403 && n != 0x5404 && n != 0x5406 && n != 0x5407 && n != 0x5408 &&
		    n != 0x541a)
			cr_assert_not(sc_ioctl_termios_set((unsigned)n), "ioctl %#lx a termios write", n);
	/* the window size: trapped, the sentry's (sys_ioctl, red team 62: it
	 * resized the caller's terminal), not a termios write */
	ta[1] = TIOCSWINSZ;
	cr_assert_not(sc_args_native(e, ta), "TIOCSWINSZ runs natively");
	cr_assert_not(sc_ioctl_termios_set(TIOCSWINSZ), "TIOCSWINSZ a termios write");
	ta[1] = TCFLSH;
	cr_assert(sc_args_native(e, ta), "TCFLSH is trapped");
	/* tcflow: trapped, the sentry's (sys_ioctl: TCIOFF/TCION send a
	 * character to the caller's terminal emulator past the filter, EPERM) */
	ta[1] = TCXONC;
	cr_assert_not(sc_args_native(e, ta), "TCXONC runs natively");
	cr_assert_not(sc_ioctl_termios_set(TCXONC), "TCXONC a termios write");
	/* the file-information reads a memfd answers: trapped so that an O_PATH
	 * placeholder's stand-in is EBADF (sys_ioctl), else run natively */
	static const unsigned long fileinfo[] = {
		FIGETBSZ, FIOQSIZE, FS_IOC_GETFLAGS,
	};
	/* a file system's or an inode's identity: trapped, ENOTTY (sc_ioctl_fsidentity) */
	static const unsigned long fsidentity[] = {
		0x80111500 /* FS_IOC_GETFSUUID */, 0x80811501 /* FS_IOC_GETFSSYSFSPATH */,
		0x8008662c /* EXT4_IOC_GETFSUUID */, FS_IOC_GETFSLABEL,
		0x80047213 /* FAT_IOCTL_GET_VOLUME_ID */,
		FS_IOC_GETVERSION, 0x80086603 /* EXT4_IOC_GETVERSION (red team 31) */,
	};
	/* PIDFD_GET_INFO at any size: trapped (sys_ioctl: ENOTTY on a pidfd, red
	 * team 31); TCFLSH, the same number of another type, stays native */
	static const unsigned long pidfd_info[] = { 0xc050ff0b, 0xc040ff0b, 0xc0a8ff0b };
	uint64_t a[SC_MAXARGS] = { 0 };

	for (size_t i = 0; i < sizeof(denied) / sizeof(denied[0]); i++) {
		a[1] = denied[i];
		cr_assert_not(sc_args_native(e, a), "ioctl %#lx runs natively", denied[i]);
		a[1] = denied[i] | (7ULL << 32);
		cr_assert_not(sc_args_native(e, a), "ioctl %#lx (high bits) runs natively", denied[i]);
	}
	for (size_t i = 0; i < sizeof(native) / sizeof(native[0]); i++) {
		a[1] = native[i];
		cr_assert(sc_args_native(e, a), "ioctl %#lx is denied", native[i]);
	}
	for (size_t i = 0; i < sizeof(fileinfo) / sizeof(fileinfo[0]); i++) {
		a[1] = fileinfo[i];
		cr_assert_not(sc_args_native(e, a), "ioctl %#lx is not trapped", fileinfo[i]);
		cr_assert(sc_ioctl_fileinfo((unsigned)fileinfo[i]), "ioctl %#lx not a file-information read",
			  fileinfo[i]);
	}
	for (size_t i = 0; i < sizeof(pidfd_info) / sizeof(pidfd_info[0]); i++) {
		a[1] = pidfd_info[i];
		cr_assert_not(sc_args_native(e, a), "ioctl %#lx is not trapped", pidfd_info[i]);
		cr_assert(sc_ioctl_pidfd_info((unsigned)pidfd_info[i]), "ioctl %#lx not PIDFD_GET_INFO", pidfd_info[i]);
	}
	a[1] = TCFLSH;
	cr_assert(sc_args_native(e, a), "TCFLSH is trapped");
	for (size_t i = 0; i < sizeof(fsidentity) / sizeof(fsidentity[0]); i++) {
		a[1] = fsidentity[i];
		cr_assert_not(sc_args_native(e, a), "ioctl %#lx is not trapped", fsidentity[i]);
		cr_assert(sc_ioctl_fsidentity((unsigned)fsidentity[i]), "ioctl %#lx not an identity read",
			  fsidentity[i]);
		cr_assert_not(sc_ioctl_fileinfo((unsigned)fsidentity[i]));
	}
	cr_assert_not(sc_ioctl_fsidentity(FS_IOC_GETFLAGS));
	cr_assert_not(sc_ioctl_fsidentity(0x8008662d)); /* (EXT4 'f' 45: native) */
	cr_assert_not(sc_ioctl_fileinfo(FIONREAD));
	cr_assert_not(sc_ioctl_fileinfo(TCGETS));
}

/* FAST_TRAP: fcntl's lock, lease, dnotify and SIGIO-owner commands go to sys_fcntl, the
 * rest stays native; flock is emulated whole */
Test(syscalls_table, trap_rules)
{
	const struct sysent *f = sc_lookup_name("fcntl");
	const int trapped[] = { F_GETLK, F_SETLK, F_SETLKW, F_OFD_GETLK, F_OFD_SETLK,
				F_OFD_SETLKW, F_SETLEASE, F_GETLEASE, F_NOTIFY,
				F_SETOWN, F_SETOWN_EX, F_SETSIG /* red team 47 */ };
	const int native[] = { F_GETFL, F_SETFL, F_GETFD, F_SETFD, F_DUPFD, F_DUPFD_CLOEXEC,
			       F_SETPIPE_SZ, F_GETPIPE_SZ, F_GETOWN, F_GETSIG, F_ADD_SEALS,
			       F_GET_SEALS };
	uint64_t a[SC_MAXARGS] = { 0 };

	cr_assert_eq(f->cls, SC_FAST);
	cr_assert(f->argtrap);
	cr_assert_not_null(f->handler);
	cr_assert_str_eq(f->handler_name, "sys_fcntl");
	for (size_t i = 0; i < sizeof(trapped) / sizeof(trapped[0]); i++) {
		a[1] = (uint64_t)trapped[i];
		cr_assert_not_null(sc_argdeny_match(f, a), "cmd %d", trapped[i]);
		a[1] |= 1ULL << 32; /* cmd is an int: high bits do not count */
		cr_assert_not_null(sc_argdeny_match(f, a), "cmd %d", trapped[i]);
	}
	for (size_t i = 0; i < sizeof(native) / sizeof(native[0]); i++) {
		a[1] = (uint64_t)native[i];
		cr_assert_null(sc_argdeny_match(f, a), "cmd %d", native[i]);
	}
	/* F_SETFL with O_ASYNC: SIGIO for the owner (red team 82), O_NONBLOCK alone native */
	a[1] = F_SETFL;
	a[2] = O_ASYNC | O_NONBLOCK;
	cr_assert_not_null(sc_argdeny_match(f, a), "F_SETFL O_ASYNC");
	a[2] = O_NONBLOCK | O_APPEND;
	cr_assert_null(sc_argdeny_match(f, a), "F_SETFL O_NONBLOCK");
	/* another command with the bit in its third register (glibc leaves rdx
	 * stale for F_GETFL, F_GETFD, F_SETFD): native (fcntl39) */
	a[2] = O_ASYNC;
	for (size_t i = 0; i < sizeof(native) / sizeof(native[0]); i++) {
		a[1] = (uint64_t)native[i];
		cr_assert_eq(sc_argdeny_match(f, a) != NULL, native[i] == F_SETFL, "cmd %d O_ASYNC", native[i]);
	}
	cr_assert_eq(sc_lookup_name("flock")->cls, SC_EMULATE);
	/* ioctl: its deny rules go to sys_ioctl (TIOCSCTTY on the sandbox's
	 * own ptys runs natively; everything else matching is EPERM) */
	cr_assert(sc_lookup_name("ioctl")->argtrap);
	cr_assert_str_eq(sc_lookup_name("ioctl")->handler_name, "sys_ioctl");
}

/* RULE_AND: a deny or trap rule that holds when all its RULEs do (a chain of
 * entries, and_next on all but the last), next to plain RULEs */
Test(syscalls_table, rule_and)
{
	static const struct sc_argdeny rules[] = {
		RULE(0, 7, 0xffffffff),
		RULE_AND(RULE(1, 4, 0xffffffff), RULE(2, 0x2000, 0x2000)),
		RULE_AND(RULE(1, 5, 0xffffffff), RULE_AND(RULE(3, 1, 0), RULE(2, 0, 0xff))),
		RULE(4, 9, 0),
		{ .arg = -1 },
	};
	const struct sysent e = { .nr = 0, .name = "t", .cls = SC_FAST, .deny = rules, .argtrap = 1 };
	static const struct {
		uint64_t a[SC_MAXARGS];
		int match; /* index of the chain's first entry, -1: none */
	} cases[] = {
		{ { 7 }, 0 },
		{ { 0, 4, 0x2000 }, 1 },
		{ { 0, 4, 0x2001 | (1ull << 40) }, 1 },
		{ { 0, 4, 0x1000 }, -1 },
		{ { 0, 3, 0x2000 }, -1 },
		{ { 0, 5, 0x100, 1 }, 3 },
		{ { 0, 5, 0x101, 1 }, -1 },
		{ { 0, 5, 0x100, 1 | (1ull << 32) }, -1 }, /* mask 0: all 64 bits */
		{ { 0, 5, 0x100, 0 }, -1 },
		{ { 7, 4, 0x2000 }, 0 },
		{ { 0, 0, 0, 0, 9 }, 6 },
	};

	cr_assert_eq(sizeof(rules) / sizeof(rules[0]), 8);
	cr_assert(!rules[0].and_next && rules[1].and_next && !rules[2].and_next);
	cr_assert(rules[3].and_next && rules[4].and_next && !rules[5].and_next && !rules[6].and_next);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct sc_argdeny *m = sc_argdeny_match(&e, cases[i].a);

		cr_expect_eq(m ? (int)(m - rules) : -1, cases[i].match, "case %zu", i);
		cr_expect_eq(sc_argtrap_match(&e, cases[i].a), cases[i].match >= 0, "case %zu", i);
		cr_expect_eq(sc_args_native(&e, cases[i].a), cases[i].match < 0, "case %zu", i);
	}
}

/* weak stubs answer ENOSYS and are listed as NONE */
Test(syscalls_table, stubs_answer_enosys)
{
	struct sc_call c;

	memset(&c, 0, sizeof(c));
	for (int i = 0; i < SC_NR_MAX; i++) {
		const struct sysent *e = &sc_table[i];

		if (!e->name || (e->cls != SC_EMULATE && !e->argtrap))
			continue;
		if (sc_handler_is_stub(e->handler)) {
			c.ent = e;
			c.nr = e->nr;
			cr_assert_eq(e->handler(&c), -ENOSYS, "%s", e->name);
			cr_assert_eq(sc_effective_status(e), ST_NONE);
		} else {
			cr_assert_eq(sc_effective_status(e), e->status);
		}
	}
	cr_assert_not(sc_handler_is_stub(NULL));
	cr_assert_eq(sc_effective_status(sc_lookup_name("read")), ST_FULL);
}

static char *listing(const char *fmt, int *ret)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	*ret = sc_print_listing(f, fmt);
	fclose(f);
	return buf;
}

static int count(const char *hay, const char *needle)
{
	int n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

Test(syscalls_table, listing_formats)
{
	int ret;
	char *s;

	s = listing("table", &ret);
	cr_assert_eq(ret, 0);
	cr_assert(strstr(s, "NR   NAME"));
	cr_assert(strstr(s, "DENY(EPERM)"));
	cr_assert_eq(count(s, " FAST+ "), 14, "fourteen FAST_TRAP rows (ioctl, fcntl, prctl, setsockopt, getsockopt, seccomp, getrlimit and setrlimit (RLIMIT_CORE), fadvise64 (POSIX_FADV_DONTNEED), and the five that act on another task by pid: prlimit64, setpriority, ioprio_set, get_robust_list, kcmp; sched_setparam/setscheduler/setattr and sched_setaffinity (a virtual deadline class's EBUSY) are EMULATE: syscalls/sys_sched.c), listed as FAST+");
	cr_assert(strstr(s, "\n72   fcntl "));
	cr_assert_geq(count(s, " FAST! "), 2, "FAST_EXCEPT rows (ioctl, clone...)");
	cr_assert_eq(count(s, "\n"), nrows() + 1);
	free(s);

	s = listing("csv", &ret);
	cr_assert_eq(ret, 0);
	cr_assert(!strncmp(s, "nr,name,class,errno,status,handler,note\n", 40));
	cr_assert(strstr(s, "\n101,ptrace,DENY,EPERM,NONE,,"));
	cr_assert(strstr(s, "\n72,fcntl,FAST,,PARTIAL,sys_fcntl,"));
	cr_assert_eq(count(s, "\n"), nrows() + 1);
	free(s);

	s = listing("json", &ret);
	cr_assert_eq(ret, 0);
	cr_assert_eq(s[0], '[');
	cr_assert_str_eq(s + strlen(s) - 3, "\n]\n");
	cr_assert_eq(count(s, "{\"nr\":"), nrows());
	cr_assert(strstr(s, "{\"nr\":257,\"name\":\"openat\",\"class\":\"EMULATE\""));
	cr_assert(strstr(s, "\"args\":[\"DIRFD\",\"PATH\",\"OFLAGS\",\"MODE\"]"));
	free(s);

	s = listing("yaml", &ret);
	cr_assert_eq(ret, -EINVAL);
	free(s);
	cr_assert_str_eq(sc_class_name(SC_EXEC), "EXEC");
	cr_assert_str_eq(sc_status_name(ST_PARTIAL), "PARTIAL");
}

/* ---- decoder ---- */

/* c zeroed, then the call to name (the table's entry, its number) */
static void call_of(struct sc_call *c, const char *name)
{
	memset(c, 0, sizeof(*c));
	c->ent = sc_lookup_name(name);
	cr_assert_not_null(c->ent, "%s", name);
	c->nr = c->ent->nr;
}

static const char *decode(const char *name, uint64_t a0, uint64_t a1,
			  uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5,
			  const char *s0, const char *s1)
{
	static char out[512];
	struct sc_call c;

	call_of(&c, name);
	c.args[0] = a0, c.args[1] = a1, c.args[2] = a2;
	c.args[3] = a3, c.args[4] = a4, c.args[5] = a5;
	/* the string goes to the first/second PATH or STR argument */
	for (int i = 0, k = 0; i < c.ent->nargs; i++)
		if (c.ent->args[i] == A_PATH || c.ent->args[i] == A_STR)
			c.str[i] = (char *)(k++ == 0 ? s0 : s1);
	sc_decode_args(&c, out, sizeof(out));
	return out;
}

Test(syscalls_decode, sample_calls)
{
	cr_assert_str_eq(decode("openat", (uint64_t)AT_FDCWD, 0x1000,
				O_RDONLY | O_CLOEXEC, 0, 0, 0, "/etc/passwd", NULL),
			 "AT_FDCWD, \"/etc/passwd\", O_RDONLY|O_CLOEXEC, 0");
	cr_assert_str_eq(decode("openat", 3, 0x1000,
				O_WRONLY | O_CREAT | O_TRUNC, 0644, 0, 0, "out", NULL),
			 "3, \"out\", O_WRONLY|O_CREAT|O_TRUNC, 0644");
	cr_assert_str_eq(decode("mmap", 0, 4096, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, (uint64_t)-1, 0, NULL, NULL),
			 "NULL, 4096, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0");
	cr_assert_str_eq(decode("mprotect", 0x7f0000001000, 8192, 0, 0, 0, 0, NULL, NULL),
			 "0x7f0000001000, 8192, PROT_NONE");
	cr_assert_str_eq(decode("clone", CLONE_VM | CLONE_FS | CLONE_FILES | SIGCHLD,
				0, 0, 0, 0, 0, NULL, NULL),
			 "CLONE_VM|CLONE_FS|CLONE_FILES|SIGCHLD, NULL, NULL, NULL, NULL");
	cr_assert_str_eq(decode("unshare", CLONE_NEWUSER | CLONE_NEWTIME, 0, 0, 0, 0, 0,
				NULL, NULL),
			 "CLONE_NEWTIME|CLONE_NEWUSER");
	cr_assert_str_eq(decode("kill", 1, SIGTERM, 0, 0, 0, 0, NULL, NULL), "1, SIGTERM");
	cr_assert_str_eq(decode("kill", 1, 34, 0, 0, 0, 0, NULL, NULL), "1, SIGRT_2");
	cr_assert_str_eq(decode("lseek", 3, (uint64_t)-5, SEEK_END, 0, 0, 0, NULL, NULL),
			 "3, -5, SEEK_END");
	cr_assert_str_eq(decode("renameat2", (uint64_t)AT_FDCWD, 1, 5, 2,
				RENAME_NOREPLACE, 0, "a", "b"),
			 "AT_FDCWD, \"a\", 5, \"b\", RENAME_NOREPLACE");
	cr_assert_str_eq(decode("unlinkat", (uint64_t)AT_FDCWD, 1, AT_REMOVEDIR,
				0, 0, 0, "d", NULL),
			 "AT_FDCWD, \"d\", AT_REMOVEDIR");
	cr_assert_str_eq(decode("faccessat2", (uint64_t)AT_FDCWD, 1, 4,
				AT_EACCESS | AT_SYMLINK_NOFOLLOW, 0, 0, "f", NULL),
			 "AT_FDCWD, \"f\", 4, AT_EACCESS|AT_SYMLINK_NOFOLLOW");
	cr_assert_str_eq(decode("newfstatat", 3, 1, 0x2000, AT_EMPTY_PATH, 0, 0, "", NULL),
			 "3, \"\", 0x2000, AT_EMPTY_PATH");
	cr_assert_str_eq(decode("statx", (uint64_t)AT_FDCWD, 1, 0,
				STATX_BASIC_STATS | STATX_BTIME, 0x10, 0, "/", NULL),
			 "AT_FDCWD, \"/\", 0, STATX_BASIC_STATS|STATX_BTIME, 0x10");
	cr_assert_str_eq(decode("ioctl", 1, TIOCSTI, 0x7ffd0000, 0, 0, 0, NULL, NULL),
			 "1, TIOCSTI, 0x7ffd0000");
	cr_assert_str_eq(decode("fcntl", 3, F_SETFD, FD_CLOEXEC, 0, 0, 0, NULL, NULL),
			 "3, F_SETFD, FD_CLOEXEC");
	cr_assert_str_eq(decode("fcntl", 3, F_SETFL, O_RDWR | O_NONBLOCK, 0, 0, 0, NULL, NULL),
			 "3, F_SETFL, O_RDWR|O_NONBLOCK");
	cr_assert_str_eq(decode("mknodat", (uint64_t)AT_FDCWD, 1, S_IFCHR | 0600, 0x103,
				0, 0, "/dev/x", NULL),
			 "AT_FDCWD, \"/dev/x\", S_IFCHR|0600, 0x103");
	cr_assert_str_eq(decode("getpid", 0, 0, 0, 0, 0, 0, NULL, NULL), "");
	cr_assert_str_eq(decode("socket", AF_VSOCK, SOCK_STREAM | SOCK_CLOEXEC, 0,
				0, 0, 0, NULL, NULL),
			 "AF_VSOCK, SOCK_STREAM|SOCK_CLOEXEC, 0");
	cr_assert_str_eq(decode("socket", AF_NETLINK, SOCK_RAW, NETLINK_AUDIT,
				0, 0, 0, NULL, NULL),
			 "AF_NETLINK, SOCK_RAW, NETLINK_AUDIT");
	cr_assert_str_eq(decode("socket", AF_INET6, SOCK_DGRAM | SOCK_NONBLOCK,
				IPPROTO_UDP, 0, 0, 0, NULL, NULL),
			 "AF_INET6, SOCK_DGRAM|SOCK_NONBLOCK, IPPROTO_UDP");
	cr_assert_str_eq(decode("socket", 99, 12, 7, 0, 0, 0, NULL, NULL), "99, 12, 7");
	cr_assert_str_eq(decode("socketpair", AF_TIPC, SOCK_SEQPACKET, 0, 0x10,
				0, 0, NULL, NULL),
			 "AF_TIPC, SOCK_SEQPACKET, 0, 0x10");
	cr_assert_str_eq(decode("personality", MMAP_PAGE_ZERO | PER_LINUX32, 0, 0,
				0, 0, 0, NULL, NULL),
			 "PER_LINUX32|MMAP_PAGE_ZERO");
	/* a path that was not copied prints as its address */
	cr_assert_str_eq(decode("chdir", 0x1234, 0, 0, 0, 0, 0, NULL, NULL), "0x1234");
}

Test(syscalls_decode, strings_are_escaped_and_truncated)
{
	cr_assert_str_eq(decode("chdir", 1, 0, 0, 0, 0, 0, "a\"b\\c\nd\te\033f\0011", NULL),
			 "\"a\\\"b\\\\c\\nd\\te\\33f\\0011\"");
	/* STR arguments: 32 characters, then ... */
	cr_assert_str_eq(decode("memfd_create", 1, MFD_CLOEXEC, 0, 0, 0, 0,
				"0123456789abcdef0123456789abcdefXYZ", NULL),
			 "\"0123456789abcdef0123456789abcdef\"..., 0x1");
	/* paths are printed whole, as strace does */
	cr_assert_str_eq(decode("chdir", 1, 0, 0, 0, 0, 0,
				"/0123456789abcdef0123456789abcdef/x", NULL),
			 "\"/0123456789abcdef0123456789abcdef/x\"");
	/* non-ASCII bytes become octal escapes */
	cr_assert_str_eq(decode("chdir", 1, 0, 0, 0, 0, 0, "\xc3\xa9", NULL),
			 "\"\\303\\251\"");
}

Test(syscalls_decode, structs_copied_in)
{
	struct sockaddr_in in = { .sin_family = AF_INET, .sin_port = htons(80) };
	struct open_how how = { .flags = O_RDONLY | O_CLOEXEC,
				.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS };
	static const char argv[] = "sh\0-c\0echo hi\0";
	struct sc_call c;
	char out[512];

	inet_pton(AF_INET, "127.0.0.1", &in.sin_addr);
	call_of(&c, "connect");
	c.args[0] = 3, c.args[1] = 0x1000, c.args[2] = sizeof(in);
	c.buf[1] = &in, c.buflen[1] = sizeof(in);
	sc_decode_args(&c, out, sizeof(out));
	cr_assert_str_eq(out, "3, {sa_family=AF_INET, sin_port=htons(80), "
			 "sin_addr=inet_addr(\"127.0.0.1\")}, 16");

	/* an abstract name whole, its NULs shown (red team 86: "@a\0b"
	 * read "@a", another socket's name) */
	struct sockaddr_un un = { .sun_family = AF_UNIX };
	memcpy(un.sun_path, "\0a\0b", 4);
	call_of(&c, "connect");
	c.args[0] = 3, c.args[1] = 0x1000, c.args[2] = offsetof(struct sockaddr_un, sun_path) + 4;
	c.buf[1] = &un, c.buflen[1] = (size_t)c.args[2];
	sc_decode_args(&c, out, sizeof(out));
	cr_assert_str_eq(out, "3, {sa_family=AF_UNIX, sun_path=@\"a\\0b\"}, 6");

	call_of(&c, "openat2");
	c.args[0] = (uint64_t)AT_FDCWD, c.args[3] = sizeof(how);
	c.str[1] = (char *)"/x";
	c.buf[2] = &how, c.buflen[2] = sizeof(how);
	sc_decode_args(&c, out, sizeof(out));
	cr_assert_str_eq(out, "AT_FDCWD, \"/x\", {flags=O_RDONLY|O_CLOEXEC, mode=0, "
			 "resolve=RESOLVE_NO_MAGICLINKS|RESOLVE_IN_ROOT}, 24");

	call_of(&c, "execve");
	c.str[0] = (char *)"/bin/sh";
	c.buf[1] = (void *)argv, c.buflen[1] = sizeof(argv);
	c.args[2] = 0x2000;
	sc_decode_args(&c, out, sizeof(out));
	cr_assert_str_eq(out, "\"/bin/sh\", [\"sh\", \"-c\", \"echo hi\"], 0x2000");
}

Test(syscalls_decode, output_is_bounded)
{
	struct sc_call c;
	char out[16];
	size_t n;

	call_of(&c, "chdir");
	c.str[0] = (char *)"/a/very/long/path/that/does/not/fit";
	memset(out, 'X', sizeof(out));
	n = sc_decode_args(&c, out, sizeof(out));
	cr_assert_lt(n, sizeof(out));
	cr_assert_eq(strlen(out), n);
	cr_assert_eq(sc_decode_args(&c, out, 0), 0);

	/* unknown numbers: raw registers */
	memset(&c, 0, sizeof(c));
	c.nr = 1000;
	c.args[0] = 1;
	char big[256];

	sc_decode_args(&c, big, sizeof(big));
	cr_assert_str_eq(big, "0x1, 0, 0, 0, 0, 0");
	sc_decode_call(&c, -ENOSYS, big, sizeof(big));
	cr_assert_str_eq(big, "syscall_1000(0x1, 0, 0, 0, 0, 0) = -1 ENOSYS (Function not implemented)");
}

/* Red team 86: a cut was silent, so a guest path that filled the buffer
 * hid its tail without a sign; now a cut ends in "..." (buffers over 8). */
Test(syscalls_decode, cut_is_marked)
{
	struct sc_call c;
	char out[24], big[64];
	size_t n;

	call_of(&c, "chdir");
	c.str[0] = (char *)"/safe/path/../../../etc/shadow";
	n = sc_decode_args(&c, out, sizeof(out));
	cr_assert_eq(strlen(out), n);
	cr_assert_str_eq(out, "\"/safe/path/../../.....");
	n = sc_decode_args(&c, big, sizeof(big));
	cr_assert_str_eq(big, "\"/safe/path/../../../etc/shadow\"");
	n = json_escape(out, sizeof(out), "/safe/path/\n../../etc/shadow");
	cr_assert_eq(strlen(out), n);
	cr_assert_str_eq(out, "/safe/path/\\n../../e...");
	sc_quote_str(out, sizeof(out), "\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01", 0);
	cr_assert_str_eq(out, "\"\\1\\1\\1\\1\\1\\1\\1\\1\\1...");
	/* max: s need not end within it */
	char raw[4] = { 'a', 'b', 'c', 'd' };
	sc_quote_str(big, sizeof(big), raw, 2);
	cr_assert_str_eq(big, "\"ab\"...");
}

Test(syscalls_decode, return_values)
{
	char out[128];
	struct sc_call c;

	sc_decode_ret(sc_lookup_name("openat"), 3, out, sizeof(out));
	cr_assert_str_eq(out, "3");
	sc_decode_ret(sc_lookup_name("openat"), -ENOENT, out, sizeof(out));
	cr_assert_str_eq(out, "-1 ENOENT (No such file or directory)");
	sc_decode_ret(sc_lookup_name("mmap"), 0x7f0012340000, out, sizeof(out));
	cr_assert_str_eq(out, "0x7f0012340000");
	sc_decode_ret(NULL, -EPERM, out, sizeof(out));
	cr_assert_str_eq(out, "-1 EPERM (Operation not permitted)");
	sc_decode_ret(NULL, -4000, out, sizeof(out));
	cr_assert_str_eq(out, "-1 errno 4000");

	call_of(&c, "openat");
	c.args[0] = (uint64_t)AT_FDCWD;
	c.str[1] = (char *)"/etc/shadow";
	sc_decode_call(&c, -ENOENT, out, sizeof(out));
	cr_assert_str_eq(out, "openat(AT_FDCWD, \"/etc/shadow\", O_RDONLY, 0) = -1 ENOENT (No such file or directory)");

	cr_assert_str_eq(sc_errno_name(ENOENT), "ENOENT");
	cr_assert_str_eq(sc_errno_name(EPERM), "EPERM");
	cr_assert_str_eq(sc_errno_name(512), "ERESTARTSYS");
	cr_assert_null(sc_errno_name(0));
	cr_assert_null(sc_errno_name(-1));
}

Test(syscalls_decode, json_escape)
{
	char out[64];

	json_escape(out, sizeof(out), "a\"b\\c\nd\x01");
	cr_assert_str_eq(out, "a\\\"b\\\\c\\nd\\u0001");
	json_escape(out, sizeof(out), "caf\xc3\xa9");
	cr_assert_str_eq(out, "caf\xc3\xa9");
	json_escape(out, sizeof(out), "x\xffy\xc3");
	cr_assert_str_eq(out, "x\\ufffdy\\ufffd");
	/* overlong encoding of '/' is not passed through */
	json_escape(out, sizeof(out), "\xc0\xaf");
	cr_assert_str_eq(out, "\\ufffd\\ufffd");
	/* an escape is never cut in half */
	cr_assert_eq(json_escape(out, 4, "ab\n"), 2);
	cr_assert_str_eq(out, "ab");
}

/* Red team 25: a guest's path reached the caller's `cat audit.jsonl` with
 * the C1 controls (U+009B is CSI to a terminal that takes C1 controls,
 * U+009D OSC), line separators and bidirectional overrides raw, where ESC
 * itself is escaped. */
Test(syscalls_decode, json_escape_hidden_code_points)
{
	static const char *const cases[][2] = {
		{ "/x\xc2\x9b" "2J\xc2\x9d" "0;t\xc2\x9c", "/x\\u009b2J\\u009d0;t\\u009c" },
		{ "a\xc2\x80" "b\xc2\x9f" "c\xc2\xa0", "a\\u0080b\\u009fc\xc2\xa0" },
		{ "\xe2\x80\xae" "gpj.exe\xe2\x80\xa8\xe2\x81\xa6", "\\u202egpj.exe\\u2028\\u2066" },
		{ "\xd8\x9c\xe2\x80\x8e\xe2\x80\x8f", "\\u061c\\u200e\\u200f" },
		/* the neighbours pass: U+2027, U+202F, U+2065, U+206A, an emoji */
		{ "\xe2\x80\xa7\xe2\x80\xaf\xe2\x81\xa5\xe2\x81\xaa\xf0\x9f\x98\x80",
		  "\xe2\x80\xa7\xe2\x80\xaf\xe2\x81\xa5\xe2\x81\xaa\xf0\x9f\x98\x80" },
	};
	char out[128];

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		json_escape(out, sizeof(out), cases[i][0]);
		cr_assert_str_eq(out, cases[i][1], "case %zu", i);
	}
	/* an escape is never cut in half */
	cr_assert_eq(json_escape(out, 7, "a\xc2\x9b"), 1);
	cr_assert_str_eq(out, "a");
}

/* /proc/config.gz's text: an option that stands for a call follows the row
 * (a denied call is "not set"), the text is whole at any buffer size. */
Test(syscalls_table, kconfig_follows_the_table)
{
	char buf[16384], small[64];
	size_t n = sc_kconfig_text(buf, sizeof buf);

	cr_assert(n > 0 && n < sizeof buf);
	cr_assert_eq(sc_lookup_name("userfaultfd")->cls, SC_DENY);
	cr_assert_not_null(strstr(buf, "\n# CONFIG_USERFAULTFD is not set\n"));
	cr_assert_not_null(strstr(buf, "\n# CONFIG_USER_NS is not set\n"));
	cr_assert_not_null(strstr(buf, "\n# CONFIG_IO_URING is not set\n"));
	cr_assert_eq(sc_lookup_name("eventfd2")->cls, SC_FAST);
	cr_assert_not_null(strstr(buf, "\nCONFIG_EVENTFD=y\n"));
	cr_assert_not_null(strstr(buf, "\nCONFIG_FILE_LOCKING=y\n")); /* flock: EMULATE */
	cr_assert_null(strstr(buf, "CONFIG_IA32_EMULATION=y"));
	/* cut at any size: the full length comes back, the buffer ends in NUL */
	cr_assert_eq(sc_kconfig_text(small, sizeof small), n);
	cr_assert_eq(strlen(small), sizeof small - 1);
	cr_assert_eq(sc_kconfig_text(NULL, 0), n);
}

/* --deny NAME takes the calls that do NAME's work by another entry point
 * (red-team round 5: --deny openat was stepped around with open, --deny
 * kill with tgkill) */
Test(syscalls_table, deny_family)
{
	static const char *const rows[][7] = {
		{ "openat", "open", "openat2", "creat", "open_by_handle_at" },
		{ "tgkill", "kill", "tkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo", "pidfd_send_signal" },
		{ "execve", "execveat" },
		{ "unlink", "unlinkat" },
		{ "renameat2", "rename", "renameat" },
		{ "fork", "vfork", "clone", "clone3" },
		{ "write", "writev", "pwrite64", "pwritev", "pwritev2" },
	};
	for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
		unsigned char deny[SC_NR_MAX] = { 0 };
		int n = 0;
		while (n < 7 && rows[r][n])
			n++;
		cr_assert_eq(sc_deny_family(rows[r][0], deny), n, "%s", rows[r][0]);
		for (int k = 0; k < n; k++)
			cr_assert(deny[sc_lookup_name(rows[r][k])->nr], "%s: %s", rows[r][0], rows[r][k]);
	}
	unsigned char deny[SC_NR_MAX] = { 0 };
	cr_assert_eq(sc_deny_family("unlink", deny), 2);
	cr_assert(!deny[sc_lookup_name("rmdir")->nr]); /* unlinkat's other use is not unlink's */
	cr_assert_eq(sc_deny_family("getpid", deny), 1);
	cr_assert_eq(sc_deny_family("no_such_call", deny), -1);
	/* every name of every row is a syscall: a row naming an unknown call
	 * would silently leave it allowed */
	for (int i = 0; i < SC_NR_MAX; i++) {
		unsigned char d[SC_NR_MAX] = { 0 };
		if (sc_table[i].name)
			cr_assert_geq(sc_deny_family(sc_table[i].name, d), 1);
	}
}
