/* tests/unit/test_syscalls_prebuilt.c - the guest's seccomp program compiled
 * at build time (syscalls/gen_filter.c) is the one libseccomp builds from the
 * table now, and its --deny prefix sends exactly the denied numbers to the
 * sentry, like sc_build_guest_filter_deny(). Installed for real in a child
 * without a listener: a USER_NOTIF action then fails the call with ENOSYS. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
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
	/* and the program for a sandbox with moat-netd */
	cr_assert_eq(sc_build_guest_filter_net(&ctx, MOAT_SYS_LOADER, NULL, true), 0);
	cr_assert_eq(sc_filter_export(ctx, &a), 0);
	seccomp_release(ctx);
	cr_assert_eq(sc_guest_filter_prebuilt_net(MOAT_SYS_LOADER, NULL, true, &b), 0);
	cr_assert_eq(a.len, b.len, "stale prebuilt netd program: %u vs %u instructions", a.len, b.len);
	cr_assert_eq(memcmp(a.filter, b.filter, a.len * sizeof a.filter[0]), 0, "stale prebuilt netd program");
	free(a.filter);
	free(b.filter);
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

/* The program holds the table's argument rules (red team 31: a rule
 * RULE(1, 0xff0b, 0xffff) on ioctl trapped 0xff0b but not 0xc050ff0b, while
 * sc_args_native, which the other tests check, said trapped). The prebuilt
 * program runs here on a classic-BPF interpreter for every FAST row with
 * rules: each rule's value, with each bit of its mask flipped and with the
 * bits outside its mask set at random; a call the table sends to the sentry
 * must not be ALLOWed by the program, nor the reverse. */
static uint32_t bpf_run(const struct sock_fprog *p, const struct seccomp_data *d)
{
	uint32_t a = 0, x = 0, mem[BPF_MEMWORDS] = { 0 };
	for (unsigned pc = 0; pc < p->len; pc++) {
		const struct sock_filter *f = &p->filter[pc];
		uint32_t k = f->k;
		switch (f->code) {
		case BPF_LD | BPF_W | BPF_ABS: cr_assert_lt(k + 4, sizeof *d + 1); memcpy(&a, (const char *)d + k, 4); break;
		case BPF_LD | BPF_IMM: a = k; break;
		case BPF_LDX | BPF_IMM: x = k; break;
		case BPF_LD | BPF_MEM: a = mem[k]; break;
		case BPF_LDX | BPF_MEM: x = mem[k]; break;
		case BPF_ST: mem[k] = a; break;
		case BPF_STX: mem[k] = x; break;
		case BPF_ALU | BPF_AND | BPF_K: a &= k; break;
		case BPF_ALU | BPF_OR | BPF_K: a |= k; break;
		case BPF_ALU | BPF_AND | BPF_X: a &= x; break;
		case BPF_ALU | BPF_SUB | BPF_K: a -= k; break;
		case BPF_ALU | BPF_ADD | BPF_K: a += k; break;
		case BPF_MISC | BPF_TAX: x = a; break;
		case BPF_MISC | BPF_TXA: a = x; break;
		case BPF_JMP | BPF_JA: pc += k; break;
		case BPF_JMP | BPF_JEQ | BPF_K: pc += a == k ? f->jt : f->jf; break;
		case BPF_JMP | BPF_JGT | BPF_K: pc += a > k ? f->jt : f->jf; break;
		case BPF_JMP | BPF_JGE | BPF_K: pc += a >= k ? f->jt : f->jf; break;
		case BPF_JMP | BPF_JSET | BPF_K: pc += (a & k) ? f->jt : f->jf; break;
		case BPF_JMP | BPF_JEQ | BPF_X: pc += a == x ? f->jt : f->jf; break;
		case BPF_JMP | BPF_JGT | BPF_X: pc += a > x ? f->jt : f->jf; break;
		case BPF_JMP | BPF_JGE | BPF_X: pc += a >= x ? f->jt : f->jf; break;
		case BPF_RET | BPF_K: return k;
		case BPF_RET | BPF_A: return a;
		default: cr_assert_fail("BPF op %#x at %u not in the interpreter", f->code, pc);
		}
	}
	cr_assert_fail("fell off the program");
	return 0;
}

Test(syscalls_prebuilt, program_holds_every_argument_rule)
{
	struct sock_fprog p;
	cr_assert_eq(sc_guest_filter_prebuilt(MOAT_SYS_LOADER, NULL, &p), 0);
	uint64_t rs = 0x9e3779b97f4a7c15ull;
	int checked = 0;
	for (int nr = 0; nr < SC_NR_MAX; nr++) {
		const struct sysent *e = &sc_table[nr];
		if (!e->name || !e->deny || e->cls != SC_FAST)
			continue;
		for (const struct sc_argdeny *r = e->deny, *first = r; r->arg >= 0;
		     first = r->and_next ? first : r + 1, r++) {
			uint64_t m = r->mask ? r->mask : ~0ull;
			/* a RULE_AND chain's other entries hold (their values) */
			uint64_t base[SC_MAXARGS] = { 0 };
			for (const struct sc_argdeny *o = first;; o++) {
				base[o->arg] = o->value;
				if (!o->and_next)
					break;
			}
			for (int v = -1; v < 64 + 8; v++) {
				struct seccomp_data d = { .nr = nr, .arch = AUDIT_ARCH_X86_64 };
				uint64_t val = r->value;
				if (v >= 0 && v < 64) {
					if (!(m & (1ull << v)))
						continue;
					val ^= 1ull << v;
				} else if (v >= 64) {
					rs ^= rs << 13; rs ^= rs >> 7; rs ^= rs << 17;
					val |= rs & ~m & (v & 1 ? 0xffffffffull : ~0ull);
				}
				uint64_t a[SC_MAXARGS];
				memcpy(a, base, sizeof a);
				a[r->arg] = val;
				memcpy(d.args, a, sizeof a);
				int native = sc_args_native(e, a);
				uint32_t act = bpf_run(&p, &d) & SECCOMP_RET_ACTION_FULL;
				cr_expect_eq(act == SECCOMP_RET_ALLOW, native, "%s arg %d = %#llx: program %s, table %s",
					     e->name, r->arg, (unsigned long long)val, act == SECCOMP_RET_ALLOW ? "allows" : "traps",
					     native ? "native" : "trapped");
				checked++;
			}
		}
	}
	cr_assert_gt(checked, 100);
	free(p.filter);
}

/* RULE_AND (fcntl39): fcntl traps F_SETFL with O_ASYNC, not another
 * command whose third register holds the bit (glibc's F_GETFL/F_GETFD leave
 * rdx stale), nor F_SETFL without it; getsockopt traps SO_PEERCRED,
 * SO_PEERGROUPS and SO_PEERPIDFD at SOL_SOCKET only; both programs (with and
 * without moat-netd) agree with the table whatever the upper 32 bits */
Test(syscalls_prebuilt, conjunction_rules)
{
	static const struct {
		int nr;
		uint64_t a1, a2;
		int trapped;
	} cases[] = {
		{ SYS_fcntl, F_SETFL, O_ASYNC, 1 },
		{ SYS_fcntl, F_SETFL, O_ASYNC | O_NONBLOCK | 0xffffffff00000000ull, 1 },
		{ SYS_fcntl, F_SETFL | 0x100000000ull, O_ASYNC, 1 },
		{ SYS_fcntl, F_SETFL, O_NONBLOCK, 0 },
		{ SYS_fcntl, F_SETFL, (uint64_t)O_ASYNC << 32, 0 },
		{ SYS_fcntl, F_GETFL, O_ASYNC, 0 },
		{ SYS_fcntl, F_GETFD, O_ASYNC, 0 },
		{ SYS_fcntl, F_SETFD, O_ASYNC | FD_CLOEXEC, 0 },
		{ SYS_fcntl, F_DUPFD, O_ASYNC, 0 },
		{ SYS_fcntl, F_SETLK, O_ASYNC, 1 },
		{ SYS_fcntl, F_SETOWN, 0, 1 },
		{ SYS_fcntl, F_SETSIG, O_ASYNC, 1 },
		{ SYS_getsockopt, SOL_SOCKET, SO_PEERCRED, 1 },
		{ SYS_getsockopt, SOL_SOCKET | 0x500000000ull, 59 /* SO_PEERGROUPS */, 1 },
		{ SYS_getsockopt, SOL_SOCKET, 77 /* SO_PEERPIDFD */, 1 },
		{ SYS_getsockopt, SOL_SOCKET, SO_TYPE, 0 },
		{ SYS_getsockopt, IPPROTO_IPV6, 17 /* IPV6_MULTICAST_IF */, 0 },
		{ SYS_getsockopt, IPPROTO_TCP, 17 /* TCP_THIN_DUPACK */, 0 },
		{ SYS_getsockopt, IPPROTO_IPV6, 59 /* IPV6_DSTOPTS */, 0 },
	};
	for (int netd = 0; netd < 2; netd++) {
		struct sock_fprog p;
		cr_assert_eq(sc_guest_filter_prebuilt_net(MOAT_SYS_LOADER, NULL, netd, &p), 0);
		for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
			struct seccomp_data d = { .nr = cases[i].nr, .arch = AUDIT_ARCH_X86_64 };
			uint64_t a[SC_MAXARGS] = { 3, cases[i].a1, cases[i].a2 };
			memcpy(d.args, a, sizeof a);
			uint32_t act = bpf_run(&p, &d) & SECCOMP_RET_ACTION_FULL;
			const struct sysent *e = &sc_table[cases[i].nr];
			cr_expect_eq(act != SECCOMP_RET_ALLOW, cases[i].trapped, "case %zu (netd %d): program", i, netd);
			cr_expect_eq(sc_argtrap_match(e, a), cases[i].trapped, "case %zu: table", i);
			cr_expect_eq(!sc_args_native(e, a), cases[i].trapped, "case %zu: native", i);
		}
		free(p.filter);
	}
}

/* FAST_TRAP_UNLESS_NET (setsockopt): without moat-netd the program traps
 * only the row's trap_nonet pairs, with it everything outside the allow
 * list; each as the table says, whatever the upper 32 bits (hyg34) */
Test(syscalls_prebuilt, setsockopt_programs_with_and_without_netd)
{
	const struct sysent *e = &sc_table[SYS_setsockopt];
	const uint64_t levels[] = { 0, 1, 6, 17, 41, 136, 255, 263, 0x100000006ull, 0xffffffff00000001ull };
	cr_assert_not_null(e->trap_nonet);
	for (int netd = 0; netd < 2; netd++) {
		struct sock_fprog p;
		int trapped = 0, native = 0;
		cr_assert_eq(sc_guest_filter_prebuilt_net(MOAT_SYS_LOADER, NULL, netd, &p), 0);
		for (size_t l = 0; l < sizeof levels / sizeof levels[0]; l++)
			for (uint64_t name = 0; name < 140; name++)
				for (int hi = 0; hi < 2; hi++) {
					struct seccomp_data d = { .nr = SYS_setsockopt, .arch = AUDIT_ARCH_X86_64 };
					uint64_t a[SC_MAXARGS] = { 3, levels[l], name | (hi ? 0xdead00000000ull : 0) };
					memcpy(d.args, a, sizeof a);
					int want = sc_args_native_net(e, a, netd);
					uint32_t act = bpf_run(&p, &d) & SECCOMP_RET_ACTION_FULL;
					cr_expect_eq(act == SECCOMP_RET_ALLOW, want,
						     "netd %d level %#llx name %#llx: program %s", netd,
						     (unsigned long long)a[1], (unsigned long long)a[2],
						     act == SECCOMP_RET_ALLOW ? "allows" : "traps");
					cr_expect_eq(!want, sc_argtrap_match_net(e, a, netd));
					trapped += !want;
					native += want;
				}
		free(p.filter);
		/* without netd: the 16 pairs alone, and again for the levels
		 * with junk above bit 31 (TCP's one, SOL_SOCKET's eleven), each
		 * with and without junk in the name; with it most calls trap */
		if (!netd)
			cr_assert_eq(trapped, 2 * (16 + 1 + 11), "%d trapped", trapped);
		else
			cr_assert_gt(trapped, native);
	}
	/* no call the netd-less program traps runs natively with moat-netd */
	uint64_t a[SC_MAXARGS] = { 0 };
	for (const struct sc_argallow *m = e->trap_nonet; m->ncmp; m++) {
		a[1] = m->cmp[0].value, a[2] = m->cmp[1].value;
		cr_assert_not(sc_args_native_net(e, a, true), "%llu/%llu", (unsigned long long)a[1],
			      (unsigned long long)a[2]);
		cr_assert_not(sc_args_native_net(e, a, false));
	}
	a[1] = IPPROTO_IP, a[2] = 2; /* IP_TTL: netd's only */
	cr_assert(sc_args_native_net(e, a, false));
	cr_assert_not(sc_args_native_net(e, a, true));
}
