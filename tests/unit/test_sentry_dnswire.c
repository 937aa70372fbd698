/* tests/unit/test_sentry_dnswire.c - the DNS wire format of the stub and
 * moat-netd (sentry/dnswire.c; fuzzed by fuzz/fuzz_dns.c, seeds in
 * fuzz/corpus/dns/): the cases the seeds hold, fixed. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "sentry/dnswire.h"

static uint8_t m[1500];
static int mn;

static void put(const void *p, int n)
{
	memcpy(m + mn, p, (size_t)n);
	mn += n;
}

/* a record: name bytes, type, class IN, ttl, data */
static void rr(const void *name, int nl, int type, uint32_t ttl, const void *data, int dl)
{
	uint8_t h[10] = { 0, (uint8_t)type, 0, 1, (uint8_t)(ttl >> 24), (uint8_t)(ttl >> 16),
			  (uint8_t)(ttl >> 8), (uint8_t)ttl, 0, (uint8_t)dl };
	put(name, nl);
	put(h, 10);
	put(data, dl);
}

struct got {
	int n;
	struct netpol_addr a[8];
	uint32_t ttl[8];
};

static void on_addr(void *arg, const struct netpol_addr *a, uint32_t ttl)
{
	struct got *g = arg;
	if (g->n < 8)
		g->a[g->n] = *a, g->ttl[g->n] = ttl;
	g->n++;
}

/* the query netd sends for name, as the answer's start (QR set), ancount */
static int start(const char *name, int qtype, int ancount)
{
	mn = dns_build_query(m, 512, 0x1234, name, qtype);
	cr_assert_gt(mn, 0);
	m[2] |= 0x80;
	m[7] = (uint8_t)ancount;
	return mn;
}

Test(dnswire, question_parsed_lower_case)
{
	static const uint8_t q[] = { 0x12, 0x34, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 3, 'W', 'w', 'W',
				     7, 'E', 'x', 'a', 'm', 'p', 'l', 'e', 0, 0, 28, 0, 1 };
	char name[256];
	int qt, qc;
	cr_assert_eq(dns_parse_question(q, sizeof q, name, sizeof name, &qt, &qc), (int)sizeof q);
	cr_assert_str_eq(name, "www.example");
	cr_assert_eq(qt, 28);
	cr_assert_eq(qc, 1);
	/* cut anywhere before its end: refused */
	for (int n = 0; n < (int)sizeof q; n++)
		cr_assert_lt(dns_parse_question(q, n, name, sizeof name, &qt, &qc), 0, "cut at %d", n);
}

Test(dnswire, question_pointer_or_dot_refused)
{
	uint8_t q[] = { 0, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0xc0, 12, 0, 1, 0, 1 };
	char name[256];
	int qt, qc;
	cr_assert_lt(dns_parse_question(q, sizeof q, name, sizeof name, &qt, &qc), 0);
	uint8_t d[] = { 0, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 3, 'a', '.', 'b', 0, 0, 1, 0, 1 };
	cr_assert_lt(dns_parse_question(d, sizeof d, name, sizeof name, &qt, &qc), 0);
}

Test(dnswire, query_parses_back)
{
	uint8_t pkt[512];
	char name[256];
	int qt, qc;
	int n = dns_build_query(pkt, sizeof pkt, 7, "Good.Test", 1);
	cr_assert_eq(dns_parse_question(pkt, n, name, sizeof name, &qt, &qc), n);
	cr_assert_str_eq(name, "good.test");
	cr_assert_eq(dns_build_query(pkt, sizeof pkt, 7, "a..b", 1), 0);
	cr_assert_eq(dns_build_query(pkt, 20, 7, "longer.than.this", 1), 0);
	cr_assert(!dns_answers_query(pkt, n, pkt, n), "a query is no answer");
}

Test(dnswire, answer_a_and_cname_chain)
{
	int q = start("www.example.com", 1, 3);
	static const uint8_t p12[] = { 0xc0, 12 }, a[] = { 93, 184, 216, 34 }, a6[16] = { 0x20, 1 };
	static const uint8_t cn[] = { 1, 'a', 7, 'e', 'x', 'a', 'm', 'p', 'l', 'e', 3, 'n', 'e', 't', 0 };
	int cno = mn + 12;
	rr(p12, 2, 5, 60, cn, sizeof cn);                  /* CNAME: skipped */
	uint8_t pc[] = { 0xc0, (uint8_t)cno };
	rr(pc, 2, 28, 60, a6, 16);                          /* AAAA for an A question: skipped */
	rr(pc, 2, 1, 42, a, 4);
	uint8_t pkt[512];
	int n = dns_build_query(pkt, sizeof pkt, 0x1234, "www.example.com", 1);
	cr_assert(dns_answers_query(m, mn, pkt, n));
	struct got g = { 0 };
	dns_answer_addrs(m, mn, q, 1, on_addr, &g);
	cr_assert_eq(g.n, 1);
	cr_assert_eq(g.a[0].family, AF_INET);
	cr_assert(!memcmp(g.a[0].a, a, 4));
	cr_assert_eq(g.ttl[0], 42);
	/* another id or question: not ours */
	pkt[1] ^= 1;
	cr_assert(!dns_answers_query(m, mn, pkt, n));
}

Test(dnswire, compression_loop_and_truncation_end)
{
	int q = start("x.test", 1, 200);
	uint8_t self[] = { 0xc0, (uint8_t)mn };
	static const uint8_t a[] = { 1, 2, 3, 4 };
	rr(self, 2, 1, 1, a, 4); /* a name that points at itself: not followed */
	uint8_t lbl[] = { 1, 'x', 0xc0, (uint8_t)mn };
	rr(lbl, 4, 1, 1, a, 4);
	struct got g = { 0 };
	dns_answer_addrs(m, mn, q, 1, on_addr, &g);
	cr_assert_eq(g.n, 2, "ANCOUNT 200, two records there");
	/* the last record cut anywhere: it is not read */
	for (int cut = mn - 1; cut > mn - 16; cut--) {
		struct got h = { 0 };
		dns_answer_addrs(m, cut, q, 1, on_addr, &h);
		cr_assert_eq(h.n, 1, "cut at %d", cut);
	}
	/* labels that run past the end, a reserved label type */
	uint8_t past[] = { 63, 'a' }, bad[] = { 0x80, 0 };
	cr_assert_lt(dns_skip_name(past, sizeof past, 0), 0);
	cr_assert_lt(dns_skip_name(bad, sizeof bad, 0), 0);
	cr_assert_lt(dns_skip_name(self, 1, 0), 0);
}

/* red team 91: the limits at their edges (a label of 63 bytes and of 64, a
 * name of 253 bytes, the most the stub's 256-byte buffer holds and one more),
 * an empty datagram, an answer record of no data, a pointer to offset 0 */
static int question(const char *const *labels, int nl)
{
	mn = 0;
	static const uint8_t h[12] = { 0, 1, 1, 0, 0, 1 };
	put(h, sizeof h);
	for (int i = 0; i < nl; i++) {
		uint8_t l = (uint8_t)strlen(labels[i]);
		put(&l, 1);
		put(labels[i], l);
	}
	static const uint8_t tail[5] = { 0, 0, 1, 0, 1 };
	put(tail, sizeof tail);
	return mn;
}

Test(dnswire, limits_at_their_edges)
{
	char l63[64], l64[65], l61[62], l62[63], name[256], big[300];
	memset(l63, 'a', 63), l63[63] = 0;
	memset(l64, 'b', 64), l64[64] = 0;
	memset(l61, 'c', 61), l61[61] = 0;
	memset(l62, 'c', 62), l62[62] = 0;
	int qt, qc;
	const char *one63[] = { l63 }, *one64[] = { l64 };
	cr_assert_eq(dns_parse_question(m, question(one63, 1), name, sizeof name, &qt, &qc), mn);
	cr_assert_eq(strlen(name), 63);
	cr_assert_lt(dns_parse_question(m, question(one64, 1), name, sizeof name, &qt, &qc), 0);
	/* 63.63.63.61: 253 bytes, 255 on the wire: parsed, and built back */
	const char *n253[] = { l63, l63, l63, l61 }, *n254[] = { l63, l63, l63, l62 };
	cr_assert_eq(dns_parse_question(m, question(n253, 4), name, sizeof name, &qt, &qc), mn);
	cr_assert_eq(strlen(name), 253);
	uint8_t pkt[512];
	char back[256];
	int n = dns_build_query(pkt, sizeof pkt, 9, name, 1);
	cr_assert_eq(dns_parse_question(pkt, n, back, sizeof back, &qt, &qc), n);
	cr_assert_str_eq(back, name);
	/* 254 bytes fill the buffer (and its NUL); a longer one is refused,
	 * not cut */
	cr_assert_eq(dns_parse_question(m, question(n254, 4), name, sizeof name, &qt, &qc), mn);
	cr_assert_eq(strlen(name), 254);
	cr_assert_lt(dns_parse_question(m, question(n254, 4), name, 254, &qt, &qc), 0);
	snprintf(big, sizeof big, "%s.%s.%s.%s.x", l63, l63, l63, l63);
	cr_assert_eq(dns_build_query(pkt, 260, 9, big, 1), 0, "does not fit: refused");
	/* an empty datagram, or a header only */
	cr_assert_lt(dns_parse_question(m, 0, name, sizeof name, &qt, &qc), 0);
	cr_assert_lt(dns_parse_question(m, 12, name, sizeof name, &qt, &qc), 0);
	cr_assert(!dns_answers_query(m, 0, pkt, n));
	struct got g = { 0 };
	dns_answer_addrs(m, 0, 12, 1, on_addr, &g);
	dns_answer_addrs(m, 11, 12, 1, on_addr, &g);
	cr_assert_eq(g.n, 0);
	/* a record of no data (RDLENGTH 0) for an A question: no address; a
	 * name that points at offset 0 (the header): not followed, the record
	 * after it read */
	int q = start("p.test", 1, 2);
	static const uint8_t p0[] = { 0xc0, 0 }, a[] = { 10, 0, 0, 1 };
	rr(p0, 2, 1, 5, a, 0);
	rr(p0, 2, 1, 5, a, 4);
	dns_answer_addrs(m, mn, q, 1, on_addr, &g);
	cr_assert_eq(g.n, 1);
	cr_assert(!memcmp(g.a[0].a, a, 4));
}
