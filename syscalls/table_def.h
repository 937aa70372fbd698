/* syscalls/table_def.h - helpers for #including syscalls/syscall_table.def.
 *
 * A row of the .def reads
 *
 *   SYSCALL(nr, name, ARGS(kind, ...), class, handler, status, "note")
 *
 *   class    FAST | EMULATE | EXEC | KILL | DENY_ERR(errno)
 *            | FAST_EXCEPT(rules, errno): native, except the calls matching
 *              the ARGDENY(rules, ...) list, which go to the sentry and are
 *              denied with errno (sysent.err carries it; see filter.c)
 *            | FAST_ONLY(rules, errno): native only for the calls matching
 *              an entry of the ARGALLOW(rules, ...) list; every other call
 *              goes to the sentry and is denied with errno
 *            | EXEC_UNLESS(rules): native when the one entry of the
 *              ARGALLOW(rules, ...) list (one RULE, full or one-bit mask)
 *              matches, a ptrace stop (as EXEC) otherwise: sendto/recvfrom
 *              with an address
 *            | FAST_TRAP(rules): native, except the calls matching the
 *              ARGTRAP(rules, ...) list, which go to the sentry and are
 *              answered by the row's handler (sysent.argtrap; the handler
 *              column names sys_<name> as for EMULATE)
 *            | FAST_TRAP_UNLESS(rules): native only for the calls matching
 *              an entry of the ARGALLOW(rules, ...) list; every other call
 *              goes to the row's handler (as FAST_TRAP)
 *            | FAST_TRAP_UNLESS_NET(rules, always): as FAST_TRAP_UNLESS
 *              when moat-netd runs (--net rules); without it native except
 *              the calls matching an entry of the ARGALLOW(always, ...)
 *              list, each a MATCH of two RULEs on the same two arguments
 *              (setsockopt's (level, name) pairs; filter.c
 *              add_fast_trap_pairs), which go to the row's handler
 *   handler  sys_<name> for EMULATE rows, NONE_H otherwise
 *   status   FULL | PARTIAL | NONE
 *
 * and an argument rule list reads
 *
 *   ARGDENY(rules, RULE(arg, value, mask), ...)
 *   ARGALLOW(rules, MATCH(RULE(arg, value, mask), ...), ...)
 *   ARGTRAP(rules, RULE(arg, value, mask), ...)
 *
 * (a MATCH holds when all its RULEs do, at most SC_ALLOW_MAXCMP of them, each
 * on a different argument; in an ARGDENY or ARGTRAP list,
 * RULE_AND(RULE(...), RULE(...)) is a rule that holds when both do, at most
 * SC_ALLOW_MAXCMP RULEs chained, each on a different argument). Every includer defines SYSCALL (and ARGDENY /
 * ARGALLOW / ARGTRAP if it wants the rules) and the .def #undefs them at its end. The column macros are expanded by pasting a
 * prefix onto the column (SC_CLS_##cls, ST_##status), so no short global names
 * like FAST or NONE are ever defined.
 */
#ifndef MOAT_SYSCALLS_TABLE_DEF_H
#define MOAT_SYSCALLS_TABLE_DEF_H

#include "syscalls/table.h"

/* class column -> designated initializers of struct sysent */
#define SC_CLS_FAST                .cls = SC_FAST
#define SC_CLS_EMULATE             .cls = SC_EMULATE
#define SC_CLS_EXEC                .cls = SC_EXEC
#define SC_CLS_KILL                .cls = SC_KILL
#define SC_CLS_DENY_ERR(e)         .cls = SC_DENY, .err = (e)
#define SC_CLS_FAST_EXCEPT(r, e)   .cls = SC_FAST, .err = (e), .deny = sc_argdeny_##r
#define SC_CLS_FAST_ONLY(r, e)     .cls = SC_FAST, .err = (e), .allow = sc_argallow_##r
#define SC_CLS_FAST_TRAP(r)        .cls = SC_FAST, .deny = sc_argdeny_##r, .argtrap = 1
#define SC_CLS_FAST_TRAP_UNLESS(r) .cls = SC_FAST, .allow = sc_argallow_##r, .argtrap = 1
#define SC_CLS_FAST_TRAP_UNLESS_NET(r, t) \
	.cls = SC_FAST, .allow = sc_argallow_##r, .trap_nonet = sc_argallow_##t, .argtrap = 1
#define SC_CLS_EXEC_UNLESS(r)      .cls = SC_EXEC, .allow = sc_argallow_##r
#define SC_CLASS(cls)              SC_CLS_##cls

/* ARGS(...) column -> .nargs/.args. sizeof of a compound literal counts the
 * kinds (ARGS() gives 0); more than SC_MAXARGS kinds is an excess-initializer
 * error. */
#define SC_ARGS(...) \
	.nargs = sizeof((uint8_t[]){ 0, __VA_ARGS__ }) - 1, \
	.args = { __VA_ARGS__ }
#define SC_ARGS_COL(a)             SC_##a

/* handler column: NONE_H or a function name. A preprocessor probe tells the
 * two apart: SC_PROBE_NONE_H expands to "~, 1", anything else stays one token,
 * so the second element of the list is 1 for NONE_H and 0 otherwise. NONE_H
 * itself is never defined as a macro. */
#define SC_CAT_(a, b)              a##b
#define SC_CAT(a, b)               SC_CAT_(a, b)
#define SC_SECOND_(a, b, ...)      b
#define SC_SECOND(...)             SC_SECOND_(__VA_ARGS__, 0, )
#define SC_PROBE_NONE_H            ~, 1
#define SC_IS_NONE_H(h)            SC_SECOND(SC_CAT_(SC_PROBE_, h))
#define SC_IF_0(t, f)              f
#define SC_IF_1(t, f)              t
#define SC_IF(c)                   SC_CAT(SC_IF_, c)
/* NONE_H -> nothing, sys_x -> code */
#define SC_IF_HANDLER(h, code)     SC_IF(SC_IS_NONE_H(h))(, code)
#define SC_HANDLER(h) \
	.handler = SC_IF(SC_IS_NONE_H(h))(NULL, h), \
	.handler_name = SC_IF(SC_IS_NONE_H(h))("", #h)

#define SC_STATUS(st)              SC_CAT_(ST_, st)

/* the whole row as a designated initializer of sc_table[] */
#define SC_ROW(nr_, name_, args_, cls_, h_, st_, note_) \
	[nr_] = { .nr = nr_, .name = #name_, SC_ARGS_COL(args_), \
		  SC_CLASS(cls_), SC_HANDLER(h_), .status = SC_STATUS(st_), \
		  .note = note_ }

/* argument rules: match when (arg & mask) == value (mask 0: full compare);
 * ARGDENY and ARGTRAP lists are the same array type */
#define RULE(a, v, m)              { .arg = (a), .value = (v), .mask = (m) }
/* a rule of a deny or trap list that holds only when all its RULEs do, each
 * on a different argument (a flag bit that means something for one command
 * alone: RULE_AND(RULE(1, F_SETFL, 0xffffffff), RULE(2, O_ASYNC, O_ASYNC))).
 * The second may itself be a RULE_AND (three conditions); the first is a
 * RULE, which SC_AND_ marks as chained to the next entry (pasting SC_AND_
 * onto the RULE token calls SC_AND_RULE). The filter emits the chain as one
 * conjunction of comparisons (filter.c region_terms). */
#define RULE_AND(r, s)             SC_AND_##r, s
#define SC_AND_RULE(a, v, m) \
	{ .arg = (a), .and_next = 1, .value = (v), .mask = (m) }
/* an int argument that is not 0 (one rule per bit: the filter's allow term
 * is the value 0 alone), and one that is not 1 */
#define SC_RULES_NONZERO(a) \
	RULE(a, 1, 1), SC_RULES_BITS_1_31(a)
#define SC_RULES_NOT_ONE(a) \
	RULE(a, 0, 1), SC_RULES_BITS_1_31(a)
#define SC_RULES_BITS_1_31(a) \
	RULE(a, 1u << 1, 1u << 1), \
	RULE(a, 1u << 2, 1u << 2), \
	RULE(a, 1u << 3, 1u << 3), \
	RULE(a, 1u << 4, 1u << 4), \
	RULE(a, 1u << 5, 1u << 5), \
	RULE(a, 1u << 6, 1u << 6), \
	RULE(a, 1u << 7, 1u << 7), \
	RULE(a, 1u << 8, 1u << 8), \
	RULE(a, 1u << 9, 1u << 9), \
	RULE(a, 1u << 10, 1u << 10), \
	RULE(a, 1u << 11, 1u << 11), \
	RULE(a, 1u << 12, 1u << 12), \
	RULE(a, 1u << 13, 1u << 13), \
	RULE(a, 1u << 14, 1u << 14), \
	RULE(a, 1u << 15, 1u << 15), \
	RULE(a, 1u << 16, 1u << 16), \
	RULE(a, 1u << 17, 1u << 17), \
	RULE(a, 1u << 18, 1u << 18), \
	RULE(a, 1u << 19, 1u << 19), \
	RULE(a, 1u << 20, 1u << 20), \
	RULE(a, 1u << 21, 1u << 21), \
	RULE(a, 1u << 22, 1u << 22), \
	RULE(a, 1u << 23, 1u << 23), \
	RULE(a, 1u << 24, 1u << 24), \
	RULE(a, 1u << 25, 1u << 25), \
	RULE(a, 1u << 26, 1u << 26), \
	RULE(a, 1u << 27, 1u << 27), \
	RULE(a, 1u << 28, 1u << 28), \
	RULE(a, 1u << 29, 1u << 29), \
	RULE(a, 1u << 30, 1u << 30), \
	RULE(a, 1u << 31, 1u << 31)
#define SC_ARGDENY_ARRAY(r, ...) \
	static const struct sc_argdeny sc_argdeny_##r[] = { \
		__VA_ARGS__, { .arg = -1, .value = 0, .mask = 0 } };
/* ioctl request classes (<asm/ioctl.h> layout): the type byte, and the
 * _IOC_WRITE direction bit (set in _IOW and _IOWR requests) */
#define SC_IOC_TYPE(t)             ((uint64_t)(t) << _IOC_TYPESHIFT)
#define SC_IOC_TYPE_MASK           ((uint64_t)_IOC_TYPEMASK << _IOC_TYPESHIFT)
#define SC_IOC_W                   ((uint64_t)_IOC_WRITE << _IOC_DIRSHIFT)
/* file system and inode identity reads outside the 0x15 class (sc.h
 * sc_ioctl_fsidentity; checked against the kernel's headers in sys_tty.c) */
#define SC_IOCTL_EXT4_GETFSUUID    0x8008662cu /* _IOR('f', 44, struct fsuuid) */
#define SC_IOCTL_FAT_GET_VOLUME_ID 0x80047213u /* _IOR('r', 0x13, __u32) */
/* an inode's generation, ext4's own number (FS_IOC_GETVERSION's twin) */
#define SC_IOCTL_EXT4_GETVERSION   0x80086603u /* _IOR('f', 3, long) */
/* allow lists: native when all RULEs of one MATCH hold */
#define MATCH(...) \
	{ .ncmp = sizeof((struct sc_argdeny[]){ __VA_ARGS__ }) / \
		  sizeof(struct sc_argdeny), \
	  .cmp = { __VA_ARGS__ } }
#define SC_ARGALLOW_ARRAY(r, ...) \
	static const struct sc_argallow sc_argallow_##r[] = { \
		__VA_ARGS__, { .ncmp = 0 } };

#endif
