/* syscalls/filter.c - libseccomp filter generated from sc_table.
 *
 * The one subtle part is FAST rows with argument rules. libseccomp cannot
 * say "ALLOW, except when arg1 == TIOCSTI" (an unconditional rule swallows
 * later conditional ones, and there is no masked not-equal), so the allowed
 * calls are written as the complement of the denied ones: a set of
 * SCMP_CMP_MASKED_EQ terms that together cover exactly the argument values no
 * rule matches. Whatever they do not cover falls to the default action,
 * USER_NOTIF, and the sentry denies it. The terms come from a binary decision
 * tree over the (argument, bit) pairs the rules look at (region_terms()), so
 * no two terms overlap and the result does not depend on the order
 * libseccomp evaluates them in. A rule may be a conjunction on several
 * arguments (RULE_AND: fcntl's F_SETFL with O_ASYNC): the tree settles the
 * command first and cuts only its region on the flag, so each term is one
 * libseccomp rule of at most one comparison per argument.
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

#define MAX_RULES 1024   /* libseccomp rules per syscall */

/* A rule of a deny list: a conjunction of comparisons, each on a different
 * argument (a plain RULE: one; RULE_AND: a chain of entries). */
struct conj {
	int n;
	const struct sc_argdeny *c[SC_ALLOW_MAXCMP];
};

/* A region of the argument space: (args[a] & mask[a]) == value[a] for every
 * a (mask 0: any value) */
struct region {
	uint64_t mask[SC_MAXARGS];
	uint64_t value[SC_MAXARGS];
};

struct region_set {
	struct region r[MAX_RULES];
	int n;
	int err;
};

static uint64_t rule_mask(const struct sc_argdeny *r)
{
	return r->mask ? r->mask : ~(uint64_t)0;
}

/* Emit the regions where no rule of rules[0..n) can match, within the region
 * at (already fixed bits). A rule is contradicted when one of its
 * comparisons disagrees with a fixed bit, matches when all its bits are
 * fixed and agree. */
static void region_terms(const struct conj *rules, int n, struct region *at,
			 struct region_set *out)
{
	uint64_t next[SC_MAXARGS] = { 0 };
	bool alive = false;

	if (out->err)
		return;
	for (int i = 0; i < n; i++) {
		bool dead = false, decided = true;

		for (int j = 0; j < rules[i].n && !dead; j++) {
			const struct sc_argdeny *r = rules[i].c[j];
			uint64_t m = rule_mask(r), pm = at->mask[r->arg];

			if ((at->value[r->arg] ^ r->value) & m & pm)
				dead = true;    /* contradicted by a fixed bit */
			else if (m & ~pm)
				decided = false;
		}
		if (dead)
			continue;
		if (decided)
			return;                 /* fully decided and matching: denied */
		alive = true;
		for (int j = 0; j < rules[i].n; j++)
			next[rules[i].c[j]->arg] |= rule_mask(rules[i].c[j]) &
						    ~at->mask[rules[i].c[j]->arg];
	}
	if (!alive) {
		if (out->n == MAX_RULES) {
			out->err = -E2BIG;
			return;
		}
		out->r[out->n++] = *at;
		return;
	}
	/* branch on the undecided bit that most live rules look at, the
	 * highest of those on a tie (the lowest argument on a tie between
	 * arguments): with a few exact values and a few classes (ioctl: type
	 * byte, direction bit) the shared bits are settled first, so a region
	 * that no rule can match any more ends as one term instead of being
	 * cut along every bit of an exact value (the ioctl rules: 106 terms,
	 * 499 highest-bit-first); a conjunction's command is settled before
	 * its flag bit (fcntl: the F_SETFL region alone is cut on O_ASYNC) */
	int besta = -1, bestn = 0;
	uint64_t best = 0;

	for (int a = 0; a < SC_MAXARGS; a++) {
		for (int bit = 63; bit >= 0; bit--) {
			uint64_t m = (uint64_t)1 << bit;
			int cnt = 0;

			if (!(next[a] & m))
				continue;
			for (int i = 0; i < n; i++) {
				bool live = true, looks = false;

				for (int j = 0; j < rules[i].n && live; j++) {
					const struct sc_argdeny *r = rules[i].c[j];
					uint64_t rm = rule_mask(r);

					if ((at->value[r->arg] ^ r->value) & rm & at->mask[r->arg])
						live = false;
					else if (r->arg == a && (rm & m))
						looks = true;
				}
				cnt += live && looks;
			}
			if (cnt > bestn) {
				bestn = cnt;
				best = m;
				besta = a;
			}
		}
	}
	struct region sub = *at;

	sub.mask[besta] |= best;
	region_terms(rules, n, &sub, out);
	sub.value[besta] |= best;
	region_terms(rules, n, &sub, out);
}

/* ALLOW rules covering exactly the calls no rule of rules[0..n) matches:
 * one per region, one SCMP_CMP_MASKED_EQ comparison per argument the region
 * fixes (a libseccomp rule of several comparisons is their conjunction) */
static int add_allow_complement(scmp_filter_ctx ctx, int nr, const struct conj *rules, int n)
{
	struct region_set *set __attribute__((cleanup(cleanup_freep))) = calloc(1, sizeof *set);
	struct region all = { { 0 }, { 0 } };

	if (!set)
		return -ENOMEM;
	region_terms(rules, n, &all, set);
	if (set->err)
		return set->err;
	for (int i = 0; i < set->n; i++) {
		struct scmp_arg_cmp cmp[SC_MAXARGS];
		unsigned k = 0;
		int ret;

		for (int a = 0; a < SC_MAXARGS; a++)
			if (set->r[i].mask[a])
				cmp[k++] = (struct scmp_arg_cmp){
					.arg = (unsigned)a,
					.op = SCMP_CMP_MASKED_EQ,
					.datum_a = set->r[i].mask[a],
					.datum_b = set->r[i].value[a],
				};
		ret = seccomp_rule_add_array(ctx, SCMP_ACT_ALLOW, nr, k, cmp);
		if (ret < 0)
			return ret;
	}
	return 0; /* no region: every value denied, nothing to allow */
}

/* One conjunction from cmp[0..n): each on a different argument in range */
static int conj_make(struct conj *out, const struct sc_argdeny *cmp, int n)
{
	if (n < 1 || n > SC_ALLOW_MAXCMP)
		return -EINVAL;
	out->n = n;
	for (int j = 0; j < n; j++) {
		if (cmp[j].arg < 0 || cmp[j].arg >= SC_MAXARGS)
			return -EINVAL;
		for (int k = 0; k < j; k++)
			if (cmp[k].arg == cmp[j].arg)
				return -EINVAL;
		out->c[j] = &cmp[j];
	}
	return 0;
}

/* ALLOW rules for a FAST row with argument rules: the complement of its
 * deny list, each RULE_AND chain one conjunction. */
static int add_fast_with_rules(scmp_filter_ctx ctx, const struct sysent *e)
{
	struct conj rules[128];
	int n = 0, ret;

	for (const struct sc_argdeny *r = e->deny; r->arg >= 0;) {
		int len = 1;

		while (r[len - 1].and_next && r[len].arg >= 0)
			len++;
		if (r[len - 1].and_next)
			return -EINVAL; /* a chain ending at the list's end */
		if (n == (int)ARRAY_SIZE(rules))
			return -E2BIG;
		if ((ret = conj_make(&rules[n++], r, len)) < 0)
			return ret;
		r += len;
	}
	return add_allow_complement(ctx, e->nr, rules, n);
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
 * entries (each a MATCH: a conjunction), the complement as for a deny list */
static int add_fast_trap_pairs(scmp_filter_ctx ctx, const struct sysent *e)
{
	struct conj rules[64];
	int n = 0, ret;

	for (const struct sc_argallow *m = e->trap_nonet; m->ncmp; m++) {
		if (n == (int)ARRAY_SIZE(rules))
			return -E2BIG;
		if ((ret = conj_make(&rules[n++], m->cmp, m->ncmp)) < 0)
			return ret;
	}
	return add_allow_complement(ctx, e->nr, rules, n);
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
	for (const struct sc_argdeny *r = e->deny; r->arg >= 0;) {
		const struct sc_argdeny *first = r;
		bool all = true;

		/* a RULE_AND chain holds when every entry of it does */
		for (;; r++) {
			if (r->arg >= SC_MAXARGS || (args[r->arg] & rule_mask(r)) != r->value)
				all = false;
			if (!r->and_next || r[1].arg < 0)
				break;
		}
		r++;
		if (all)
			return first;
	}
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
