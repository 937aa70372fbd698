/* syscalls/filter.h - the guest's seccomp filter, generated from the table.
 *
 * Lifecycle (the sentry, in the guest's first task before it execs):
 *   1. sc_build_guest_filter(&ctx, loader_nr)  build the libseccomp context
 *   2. sc_filter_hash(ctx, &h)                  policy version for the audit
 *   3. sc_filter_export(ctx, &prog)             raw BPF, malloc'ed
 *   4. seccomp(SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER |
 *              SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV, &prog) -> listener fd
 *   5. free(prog.filter); seccomp_release(ctx)
 *
 * What the filter does, in order:
 *   - arch != AUDIT_ARCH_X86_64 (int 0x80, sysenter, a far jump to the
 *     32-bit code segment) and x32 numbers (nr >= 0x40000000):
 *     SECCOMP_RET_USER_NOTIF. The sentry checks the arch and the x32 bit
 *     before any look-up in the x86_64 table (an i386 5 is open, x86_64's
 *     fstat), audits the call as "i386_syscall_N" / "x32_syscall_N" and
 *     answers ENOSYS (sentry/pipeline.c deny_unknown; red team 75: the
 *     BPF's own ENOSYS left no audit record).
 *   - FAST rows: SECCOMP_RET_ALLOW; if the row has deny rules, only the
 *     calls that match none of them; if it has an allow list, only the calls
 *     that match one of its entries (the others fall to the default).
 *   - EXEC rows: SECCOMP_RET_TRACE (the sentry is the ptrace tracer).
 *   - KILL rows: SECCOMP_RET_KILL_PROCESS.
 *   - everything else - EMULATE and DENY rows, FAST calls that match an
 *     argument rule, numbers the table does not know, notify_nr_extra -
 *     SECCOMP_RET_USER_NOTIF (the default action). The sentry answers:
 *     handler, -row.err for DENY and argument rules (a FAST_TRAP row's
 *     matching calls: its handler), -ENOSYS for unknown.
 */
#ifndef MOAT_SYSCALLS_FILTER_H
#define MOAT_SYSCALLS_FILTER_H

#include <linux/filter.h>
#include <seccomp.h>
#include <stdbool.h>
#include <stdint.h>

#include "syscalls/table.h"

/* Build the guest filter from sc_table. notify_nr_extra, if not 0, is one more
 * number that must reach the sentry whatever its row says (the loader's
 * private call); 0 means none. *out is released by the caller with
 * seccomp_release(). Returns 0 or -errno. */
int sc_build_guest_filter(scmp_filter_ctx *out, uint32_t notify_nr_extra);
/* Values of a force[] array (SC_NR_MAX entries, or NULL): what a number does
 * whatever its row says. */
#define SC_FORCE_NOTIFY 1 /* to the sentry (USER_NOTIF), for a policy to deny (--deny) */
#define SC_FORCE_TRACE 2  /* a ptrace stop (sendmmsg with --net rules: UDP egress) */
/* DENY rows the filter answers itself (SECCOMP_RET_ERRNO with the row's
 * errno: clone3, tried by glibc at every thread and spawn), unless forced
 * to the sentry: --audit, --trace and --result count them there, and
 * --deny's EPERM is the sentry's (sentry/run.c). */
int sc_deny_in_filter(int nr);
/* The same, with force[nr] != 0 routing those numbers as it says. */
int sc_build_guest_filter_deny(scmp_filter_ctx *out, uint32_t notify_nr_extra,
			       const unsigned char *force);

/* The same, for a sandbox where moat-netd runs (netd true) or not: a
 * FAST_TRAP_UNLESS_NET row's allow list applies only with moat-netd,
 * without it only its trap_nonet entries trap. The two others build the
 * program without moat-netd. */
int sc_build_guest_filter_net(scmp_filter_ctx *out, uint32_t notify_nr_extra,
			      const unsigned char *force, bool netd);

/* The BPF program of ctx in out->filter (malloc'ed, the caller frees it) and
 * out->len. Returns 0 or -errno. */
int sc_filter_export(scmp_filter_ctx ctx, struct sock_fprog *out);

/* The same program without libseccomp: the one gen_filter.c compiled at
 * build time (for notify_nr_extra = MOAT_SYS_LOADER only, else -EINVAL), with
 * the numbers force[] names (or NULL) routed by a prefix (filter_prebuilt.c).
 * out->filter is malloc'ed. Returns 0 or -errno. */
int sc_guest_filter_prebuilt(uint32_t notify_nr_extra, const unsigned char *force,
			     struct sock_fprog *out);
/* The same, gen_filter.c's program for a sandbox with moat-netd (netd
 * true: sc_build_guest_filter_net's) or without. */
int sc_guest_filter_prebuilt_net(uint32_t notify_nr_extra, const unsigned char *force, bool netd,
				 struct sock_fprog *out);

/* xxHash (XXH3, moat_hash) of the exported BPF: the policy version. */
int sc_filter_hash(scmp_filter_ctx ctx, uint64_t *out);

/* For a FAST row with argument rules: the rule args match (so the call must
 * be denied with -e->err), or NULL (for a RULE_AND chain: its first entry,
 * when every entry holds). NULL for rows without rules. Uses the same
 * compare as the filter: (arg & mask) == value, mask 0 = all 64 bits. */
const struct sc_argdeny *sc_argdeny_match(const struct sysent *e,
					  const uint64_t args[SC_MAXARGS]);

/* For a FAST row with an allow list: the entry the args match, or NULL
 * (also NULL for rows without one). Same compare as the filter. */
const struct sc_argallow *sc_argallow_match(const struct sysent *e,
					    const uint64_t args[SC_MAXARGS]);

/* For a row with argtrap: the call goes to the row's handler (FAST_TRAP: a
 * deny rule matches; FAST_TRAP_UNLESS: no allow-list entry does). */
bool sc_argtrap_match(const struct sysent *e, const uint64_t args[SC_MAXARGS]);
/* The same for a filter built with or without moat-netd (the two above:
 * with it, the stricter; a call a filter without moat-netd traps is
 * trapped with it too). */
bool sc_argtrap_match_net(const struct sysent *e, const uint64_t args[SC_MAXARGS], bool netd);

/* Whether the filter lets this call run natively: a FAST row whose deny
 * rules do not match and whose allow list (if any) does. */
bool sc_args_native(const struct sysent *e, const uint64_t args[SC_MAXARGS]);
bool sc_args_native_net(const struct sysent *e, const uint64_t args[SC_MAXARGS], bool netd);

/* The positive errno the sentry answers a FAST call the filter did not let
 * run (no allow-list entry matched, or a deny rule did): the row's err,
 * but for socket and socketpair of AF_INET/AF_INET6/AF_NETLINK, Linux's
 * answer for the (type, protocol) on a kernel without the module it would
 * have asked for (EINVAL, ESOCKTNOSUPPORT, EPROTONOSUPPORT, EAFNOSUPPORT
 * for AF_INET SOCK_PACKET: red team 67). */
int sc_deny_errno(const struct sysent *e, const uint64_t args[SC_MAXARGS]);

#endif
