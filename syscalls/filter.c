/* syscalls/filter.c - libseccomp filter generated from sc_table.
 *
 * The one subtle part is FAST rows with argument rules. libseccomp cannot
 * say "ALLOW, except when arg1 == TIOCSTI" (an unconditional rule swallows
 * later conditional ones, and there is no masked not-equal), so the allowed
 * calls are written as the complement of the denied ones: a set of
 * SCMP_CMP_MASKED_EQ terms that together cover exactly the argument values no
 * rule matches. Whatever they do not cover falls to the default action,
 * USER_NOTIF, and the sentry denies it. The terms come from a binary decision
 * tree over the bits the rules look at (allow_terms()), so no two terms
 * overlap and the result does not depend on the order libseccomp evaluates
 * them in.
 *
 * FAST rows with an allow list (FAST_ONLY) are the easy case: one ALLOW rule
 * per entry, each a conjunction of SCMP_CMP_MASKED_EQ comparisons; a call
 * matching none falls to the default, USER_NOTIF, and the sentry denies it.
 */
#include <errno.h>
#include <linux/netlink.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/bpf.h"
#include "common/util.h"
#include "syscalls/filter.h"

#define MAX_TERMS 512    /* allow terms per argument */
#define MAX_RULES 1024   /* libseccomp rules per syscall */

struct term {
	uint64_t mask;
	uint64_t value;
};

struct term_set {
	struct term t[MAX_TERMS];
	int n;
	int err;
};

static uint64_t rule_mask(const struct sc_argdeny *r)
{
	return r->mask ? r->mask : ~(uint64_t)0;
}

/* Emit the (mask, value) regions, over the bits in `bits`, where no rule of
 * rules[0..n) can match. pmask/pval: the bits fixed so far. */
static void allow_terms(const struct sc_argdeny *const *rules, int n,
			uint64_t bits, uint64_t pmask, uint64_t pval,
			struct term_set *out)
{
	uint64_t next = 0;
	bool alive = false;

	if (out->err)
		return;
	for (int i = 0; i < n; i++) {
		uint64_t m = rule_mask(rules[i]);

		if ((pval ^ rules[i]->value) & m & pmask)
			continue;       /* contradicted by a fixed bit */
		if (!(m & ~pmask))
			return;         /* fully decided and matching: denied */
		alive = true;
		next |= m & ~pmask;
	}
	if (!alive) {
		if (out->n == MAX_TERMS) {
			out->err = -E2BIG;
			return;
		}
		out->t[out->n].mask = pmask;
		out->t[out->n].value = pval;
		out->n++;
		return;
	}
	/* branch on the undecided bit that most live rules look at, the
	 * highest of those on a tie: with a few exact values and a few
	 * classes (ioctl: type byte, direction bit) the shared bits are
	 * settled first, so a region that no rule can match any more ends as
	 * one term instead of being cut along every bit of an exact value
	 * (the ioctl rules: 106 terms, 499 highest-bit-first) */
	next &= bits;
	{
		uint64_t best = 0;
		int bestn = 0;

		for (int bit = 63; bit >= 0; bit--) {
			uint64_t m = (uint64_t)1 << bit;
			int cnt = 0;

			if (!(next & m))
				continue;
			for (int i = 0; i < n; i++) {
				uint64_t rm = rule_mask(rules[i]);

				if (!((pval ^ rules[i]->value) & rm & pmask) &&
				    (rm & m))
					cnt++;
			}
			if (cnt > bestn) {
				bestn = cnt;
				best = m;
			}
		}
		next = best;
	}
	allow_terms(rules, n, bits, pmask | next, pval, out);
	allow_terms(rules, n, bits, pmask | next, pval | next, out);
}

/* ALLOW rules for a FAST row with argument rules. */
static int add_fast_with_rules(scmp_filter_ctx ctx, const struct sysent *e)
{
	struct term_set *sets __attribute__((cleanup(cleanup_freep))) = NULL;
	const struct sc_argdeny *rules[64];
	int args[SC_MAXARGS], nargs = 0;
	int idx[SC_MAXARGS] = { 0 };
	long total = 1;
	int ret, k;

	sets = calloc(SC_MAXARGS, sizeof(*sets));
	if (!sets)
		return -ENOMEM;
	for (int a = 0; a < SC_MAXARGS; a++) {
		uint64_t bits = 0;
		int n = 0;

		for (const struct sc_argdeny *r = e->deny; r->arg >= 0; r++) {
			if (r->arg != a)
				continue;
			if (n == (int)ARRAY_SIZE(rules))
				return -E2BIG;
			rules[n++] = r;
			bits |= rule_mask(r);
		}
		if (!n)
			continue;
		allow_terms(rules, n, bits, 0, 0, &sets[nargs]);
		if (sets[nargs].err)
			return sets[nargs].err;
		if (sets[nargs].n == 0)
			return 0; /* every value denied: nothing to allow */
		total *= sets[nargs].n;
		if (total > MAX_RULES)
			return -E2BIG;
		args[nargs++] = a;
	}
	if (!nargs)
		return seccomp_rule_add(ctx, SCMP_ACT_ALLOW, e->nr, 0);

	/* one rule per combination of terms, one comparison per argument */
	for (;;) {
		struct scmp_arg_cmp cmp[SC_MAXARGS];

		for (int j = 0; j < nargs; j++) {
			const struct term *t = &sets[j].t[idx[j]];

			cmp[j] = (struct scmp_arg_cmp){
				.arg = (unsigned)args[j],
				.op = SCMP_CMP_MASKED_EQ,
				.datum_a = t->mask,
				.datum_b = t->value,
			};
		}
		ret = seccomp_rule_add_array(ctx, SCMP_ACT_ALLOW, e->nr,
					     (unsigned)nargs, cmp);
		if (ret < 0)
			return ret;
		/* next combination */
		k = 0;
		while (k < nargs && ++idx[k] == sets[k].n)
			idx[k++] = 0;
		if (k == nargs)
			return 0;
	}
}

/* ALLOW rules for a FAST row with an allow list: one per entry. */
static int add_fast_allow(scmp_filter_ctx ctx, const struct sysent *e)
{
	for (const struct sc_argallow *m = e->allow; m->ncmp; m++) {
		struct scmp_arg_cmp cmp[SC_ALLOW_MAXCMP];
		int ret;

		if (m->ncmp > SC_ALLOW_MAXCMP)
			return -EINVAL;
		for (int j = 0; j < m->ncmp; j++) {
			if (m->cmp[j].arg < 0 || m->cmp[j].arg >= SC_MAXARGS)
				return -EINVAL;
			cmp[j] = (struct scmp_arg_cmp){
				.arg = (unsigned)m->cmp[j].arg,
				.op = SCMP_CMP_MASKED_EQ,
				.datum_a = rule_mask(&m->cmp[j]),
				.datum_b = m->cmp[j].value,
			};
		}
		ret = seccomp_rule_add_array(ctx, SCMP_ACT_ALLOW, e->nr,
					     m->ncmp, cmp);
		if (ret < 0)
			return ret;
	}
	return 0;
}

/* FAST_TRAP_UNLESS_NET without moat-netd: ALLOW but for the trap_nonet
 * entries, each a pair of rules on the same two arguments A and B (a level
 * and an option name): the complement, as add_fast_with_rules makes it, in
 * two parts that never overlap — the values of A no entry names (one
 * comparison on A), and for each value of A an entry names, the values of
 * B no entry of that value names (two comparisons). Every value of A an
 * entry names must share one mask, so those values never overlap either. */
static int add_fast_trap_pairs(scmp_filter_ctx ctx, const struct sysent *e)
{
	const struct sc_argdeny *lv[40], *nm[40];
	struct term_set *set __attribute__((cleanup(cleanup_freep))) = calloc(1, sizeof *set);
	const struct sc_argallow *t = e->trap_nonet;
	int nl = 0, ret;

	if (!set)
		return -ENOMEM;
	for (const struct sc_argallow *m = t; m->ncmp; m++) {
		if (m->ncmp != 2 || m->cmp[0].arg != t->cmp[0].arg || m->cmp[1].arg != t->cmp[1].arg ||
		    m->cmp[0].arg < 0 || m->cmp[0].arg >= SC_MAXARGS || m->cmp[1].arg < 0 ||
		    m->cmp[1].arg >= SC_MAXARGS || m->cmp[0].arg == m->cmp[1].arg ||
		    rule_mask(&m->cmp[0]) != rule_mask(&t->cmp[0]))
			return -EINVAL;
		int k = 0;
		while (k < nl && lv[k]->value != m->cmp[0].value)
			k++;
		if (k == nl) {
			if (nl == (int)ARRAY_SIZE(lv))
				return -E2BIG;
			lv[nl++] = &m->cmp[0];
		}
	}
	unsigned a = (unsigned)t->cmp[0].arg, b = (unsigned)t->cmp[1].arg;
	allow_terms(lv, nl, rule_mask(lv[0]), 0, 0, set);
	if (set->err)
		return set->err;
	for (int i = 0; i < set->n; i++) {
		struct scmp_arg_cmp c = { .arg = a, .op = SCMP_CMP_MASKED_EQ,
					  .datum_a = set->t[i].mask, .datum_b = set->t[i].value };
		if ((ret = seccomp_rule_add_array(ctx, SCMP_ACT_ALLOW, e->nr, 1, &c)) < 0)
			return ret;
	}
	for (int l = 0; l < nl; l++) {
		int nn = 0;
		uint64_t bits = 0;
		for (const struct sc_argallow *m = t; m->ncmp; m++) {
			if (m->cmp[0].value != lv[l]->value)
				continue;
			if (nn == (int)ARRAY_SIZE(nm))
				return -E2BIG;
			nm[nn++] = &m->cmp[1];
			bits |= rule_mask(&m->cmp[1]);
		}
		memset(set, 0, sizeof *set);
		allow_terms(nm, nn, bits, 0, 0, set);
		if (set->err)
			return set->err;
		for (int i = 0; i < set->n; i++) {
			struct scmp_arg_cmp c[2] = {
				{ .arg = a, .op = SCMP_CMP_MASKED_EQ, .datum_a = rule_mask(lv[l]),
				  .datum_b = lv[l]->value },
				{ .arg = b, .op = SCMP_CMP_MASKED_EQ, .datum_a = set->t[i].mask,
				  .datum_b = set->t[i].value },
			};
			if ((ret = seccomp_rule_add_array(ctx, SCMP_ACT_ALLOW, e->nr, 2, c)) < 0)
				return ret;
		}
	}
	return 0;
}

/* EXEC_UNLESS: ALLOW when the one comparison holds, TRACE when it does not
 * (a full mask: SCMP_CMP_NE; a one-bit mask: the bit's other value; the two
 * rules never overlap). */
static int add_exec_unless(scmp_filter_ctx ctx, const struct sysent *e)
{
	const struct sc_argallow *m = e->allow;
	uint64_t mask = m->ncmp ? rule_mask(&m->cmp[0]) : 0;
	int onebit = mask && !(mask & (mask - 1));
	if (!m->ncmp || m[1].ncmp || m->ncmp != 1 || m->cmp[0].arg < 0 ||
	    m->cmp[0].arg >= SC_MAXARGS || (mask != ~(uint64_t)0 && !onebit))
		return -EINVAL;
	struct scmp_arg_cmp eq = { .arg = (unsigned)m->cmp[0].arg, .op = SCMP_CMP_EQ,
				   .datum_a = m->cmp[0].value, .datum_b = 0 };
	struct scmp_arg_cmp ne = eq;
	ne.op = SCMP_CMP_NE;
	if (onebit) { /* one bit: its other value is the complement */
		eq.op = ne.op = SCMP_CMP_MASKED_EQ;
		eq.datum_a = ne.datum_a = mask;
		eq.datum_b = m->cmp[0].value & mask;
		ne.datum_b = (m->cmp[0].value ^ mask) & mask;
	}
	int ret = seccomp_rule_add_array(ctx, SCMP_ACT_ALLOW, e->nr, 1, &eq);
	if (!ret)
		ret = seccomp_rule_add_array(ctx, SCMP_ACT_TRACE(0), e->nr, 1, &ne);
	return ret;
}

int sc_deny_in_filter(int nr)
{
	/* glibc tries clone3 first at every pthread_create and posix_spawn
	 * and falls back to clone on ENOSYS: a trip to the sentry each time
	 * (two wake-ups) for an answer the filter can give itself */
	return nr == __NR_clone3;
}

int sc_build_guest_filter(scmp_filter_ctx *out, uint32_t notify_nr_extra)
{
	return sc_build_guest_filter_deny(out, notify_nr_extra, NULL);
}

int sc_build_guest_filter_deny(scmp_filter_ctx *out, uint32_t notify_nr_extra,
			       const unsigned char *force)
{
	return sc_build_guest_filter_net(out, notify_nr_extra, force, false);
}

int sc_build_guest_filter_net(scmp_filter_ctx *out, uint32_t notify_nr_extra,
			      const unsigned char *force, bool netd)
{
	scmp_filter_ctx ctx;
	int ret;

	*out = NULL;
	ctx = seccomp_init(SCMP_ACT_NOTIFY);
	if (!ctx)
		return -ENOMEM;
	/* int 0x80 / sysenter / i386 and (by libseccomp's x86_64 prologue) x32
	 * numbers: the sentry's, which audits them and answers ENOSYS before
	 * any look-up in the x86_64 table (pipeline.c deny_unknown) */
	ret = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_NOTIFY);
	if (!ret)
		ret = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
	if (ret)
		goto fail;

	for (int nr = 0; nr < SC_NR_MAX; nr++) {
		const struct sysent *e = &sc_table[nr];

		if (!e->name || (notify_nr_extra && (uint32_t)nr == notify_nr_extra))
			continue;
		if (force && force[nr] == SC_FORCE_TRACE) {
			ret = seccomp_rule_add(ctx, SCMP_ACT_TRACE(0), nr, 0);
			if (ret)
				goto fail;
			continue;
		}
		if (force && force[nr])
			continue; /* policy-denied: the default (USER_NOTIF), answered by policy_check */
		switch (e->cls) {
		case SC_FAST:
			if (e->deny && e->allow)
				ret = -EINVAL; /* one kind of rule per row */
			else if (e->trap_nonet && !netd)
				ret = add_fast_trap_pairs(ctx, e);
			else if (e->allow)
				ret = add_fast_allow(ctx, e);
			else if (e->deny)
				ret = add_fast_with_rules(ctx, e);
			else
				ret = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 0);
			break;
		case SC_EXEC:
			if (e->allow)
				ret = add_exec_unless(ctx, e);
			else
				ret = seccomp_rule_add(ctx, SCMP_ACT_TRACE(0), nr, 0);
			break;
		case SC_KILL:
			ret = seccomp_rule_add(ctx, SCMP_ACT_KILL_PROCESS, nr, 0);
			break;
		case SC_DENY:
			if (sc_deny_in_filter(nr)) {
				ret = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(e->err > 0 ? e->err : ENOSYS), nr, 0);
				break;
			}
			/* fall through */
		case SC_EMULATE:
			/* the default action: USER_NOTIF (libseccomp refuses
			 * rules that repeat the default) */
			ret = 0;
			break;
		default:
			ret = -EINVAL;
			break;
		}
		if (ret)
			goto fail;
	}
	*out = ctx;
	return 0;
fail:
	seccomp_release(ctx);
	return ret < 0 ? ret : -EINVAL;
}

int sc_filter_export(scmp_filter_ctx ctx, struct sock_fprog *out)
{
	return bpf_export(ctx, out);
}

int sc_filter_hash(scmp_filter_ctx ctx, uint64_t *out)
{
	struct sock_fprog prog;
	int ret = sc_filter_export(ctx, &prog);

	if (ret)
		return ret;
	*out = moat_hash(prog.filter, prog.len * sizeof(struct sock_filter));
	free(prog.filter);
	return 0;
}

const struct sc_argdeny *sc_argdeny_match(const struct sysent *e,
					  const uint64_t args[SC_MAXARGS])
{
	if (!e || !e->deny)
		return NULL;
	for (const struct sc_argdeny *r = e->deny; r->arg >= 0; r++)
		if (r->arg < SC_MAXARGS &&
		    (args[r->arg] & rule_mask(r)) == r->value)
			return r;
	return NULL;
}

/* The entry of the list (ncmp 0 ends it) the args match, or NULL. */
static const struct sc_argallow *sc_allow_list_match(const struct sc_argallow *list,
						     const uint64_t args[SC_MAXARGS])
{
	for (const struct sc_argallow *m = list; m->ncmp; m++) {
		int j;

		for (j = 0; j < m->ncmp && j < SC_ALLOW_MAXCMP; j++) {
			const struct sc_argdeny *r = &m->cmp[j];

			if (r->arg < 0 || r->arg >= SC_MAXARGS ||
			    (args[r->arg] & rule_mask(r)) != r->value)
				break;
		}
		if (j == m->ncmp)
			return m;
	}
	return NULL;
}

const struct sc_argallow *sc_argallow_match(const struct sysent *e,
					    const uint64_t args[SC_MAXARGS])
{
	return e && e->allow ? sc_allow_list_match(e->allow, args) : NULL;
}

bool sc_argtrap_match(const struct sysent *e, const uint64_t args[SC_MAXARGS])
{
	return sc_argtrap_match_net(e, args, true);
}

bool sc_argtrap_match_net(const struct sysent *e, const uint64_t args[SC_MAXARGS], bool netd)
{
	if (!e || e->cls != SC_FAST || !e->argtrap)
		return false;
	if (e->trap_nonet && !netd)
		return sc_allow_list_match(e->trap_nonet, args) != NULL;
	if (e->allow)
		return sc_argallow_match(e, args) == NULL;
	return sc_argdeny_match(e, args) != NULL;
}

bool sc_args_native(const struct sysent *e, const uint64_t args[SC_MAXARGS])
{
	return sc_args_native_net(e, args, true);
}

bool sc_args_native_net(const struct sysent *e, const uint64_t args[SC_MAXARGS], bool netd)
{
	if (e && e->cls == SC_FAST && e->trap_nonet && !netd)
		return sc_allow_list_match(e->trap_nonet, args) == NULL;
	if (e && e->cls == SC_EXEC && e->allow)
		return sc_argallow_match(e, args) != NULL; /* EXEC_UNLESS */
	if (!e || e->cls != SC_FAST)
		return false;
	if (sc_argdeny_match(e, args))
		return false;
	return !e->allow || sc_argallow_match(e, args);
}

/* Linux's answer, in __sys_socket_create/__sock_create and inet_create,
 * inet6_create, netlink_create order, for a socket the filter refused; the
 * module look-ups (request_module) are left out: the answer is a kernel's
 * that has no such module. */
static int sock_deny_errno(const uint64_t args[SC_MAXARGS], bool pair, int dflt)
{
	int family = (int)args[0], type = (int)args[1], proto = (int)args[2];
	int flags = type & ~0xf;

	/* socketpair of AF_NETLINK is not allowed at all (EAFNOSUPPORT) */
	if (family != AF_INET && family != AF_INET6 && (family != AF_NETLINK || pair))
		return dflt;
	if (flags & ~(SOCK_CLOEXEC | SOCK_NONBLOCK))
		return EINVAL;
	type &= 0xf;
	if (type >= 11) /* SOCK_MAX */
		return EINVAL;
	if (family == AF_NETLINK) {
		if (type != SOCK_RAW && type != SOCK_DGRAM)
			return ESOCKTNOSUPPORT;
		return EPROTONOSUPPORT;
	}
	if (family == AF_INET && type == SOCK_PACKET)
		return EAFNOSUPPORT; /* __sock_create: PF_PACKET, not allowed */
	if (proto < 0 || proto >= 263) /* IPPROTO_MAX */
		return EINVAL;
	/* the types with a protosw list built in: the others' lists are empty */
	if (type != SOCK_STREAM && type != SOCK_DGRAM && type != SOCK_RAW)
		return ESOCKTNOSUPPORT;
	return EPROTONOSUPPORT;
}

int sc_deny_errno(const struct sysent *e, const uint64_t args[SC_MAXARGS])
{
	int err = e && e->err > 0 ? e->err : EPERM;

	if (e && e->cls == SC_FAST && (e->nr == __NR_socket || e->nr == __NR_socketpair))
		return sock_deny_errno(args, e->nr == __NR_socketpair, err);
	return err;
}
