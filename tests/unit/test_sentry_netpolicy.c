/* tests/unit/test_sentry_netpolicy.c - the --net parser and the egress matcher. */
#include <criterion/criterion.h>
#include <arpa/inet.h>
#include <string.h>
#include <sys/socket.h>

#include "sentry/netpolicy.h"

static struct netpolicy pol;
static char err[512];

static void reset(void)
{
	memset(&pol, 0, sizeof pol);
	err[0] = 0;
}

static int parse(const char *spec)
{
	return netpolicy_parse(&pol, spec, err, sizeof err);
}

static struct netpol_addr A(const char *s)
{
	struct netpol_addr a;
	memset(&a, 0, sizeof a);
	if (inet_pton(AF_INET, s, a.a) == 1)
		a.family = AF_INET;
	else if (inet_pton(AF_INET6, s, a.a) == 1)
		a.family = AF_INET6;
	else
		cr_assert_fail("bad test address %s", s);
	return a;
}

static int match(const char *addr, int port, int proto)
{
	struct netpol_addr a = A(addr);
	const char *why = NULL;
	int r = netpolicy_match(&pol, &a, (uint16_t)port, proto, &why);
	if (r < 0)
		cr_assert_not_null(why);
	return r;
}

TestSuite(netpolicy, .init = reset);

Test(netpolicy, none_is_empty)
{
	cr_assert_eq(parse("none"), 0);
	cr_assert_eq(pol.nrules, 0);
	cr_assert_lt(match("93.184.216.34", 443, NP_TCP), 0);
	cr_assert_lt(match("127.0.0.1", 80, NP_TCP), 0);
}

Test(netpolicy, parses_rules)
{
	cr_assert_eq(parse("allow=example.com,*.pypi.org:443/tcp,1.2.3.4:53/udp,10.1.0.0/16:8000-8100,"
			   "[2001:db8::1]:443,2001:db8::/32"),
		     0, "%s", err);
	cr_assert_eq(pol.nrules, 6);
	cr_assert(pol.rules[0].is_name && !pol.rules[0].wildcard);
	cr_assert_str_eq(pol.rules[0].name, "example.com");
	cr_assert(pol.rules[1].wildcard);
	cr_assert_str_eq(pol.rules[1].name, "pypi.org");
	cr_assert_eq(pol.rules[1].port_lo, 443);
	cr_assert_eq(pol.rules[1].proto, NP_TCP);
	cr_assert_eq(pol.rules[2].proto, NP_UDP);
	cr_assert_eq(pol.rules[3].prefix, 16);
	cr_assert_eq(pol.rules[3].port_lo, 8000);
	cr_assert_eq(pol.rules[3].port_hi, 8100);
	cr_assert_eq(pol.rules[4].addr.family, AF_INET6);
	cr_assert_eq(pol.rules[4].port_lo, 443);
	cr_assert_eq(pol.rules[5].prefix, 32);
	/* repeatable: rules append */
	cr_assert_eq(parse("allow=Example.ORG."), 0);
	cr_assert_eq(pol.nrules, 7);
	cr_assert_str_eq(pol.rules[6].name, "example.org");
}

Test(netpolicy, parse_errors)
{
	const char *bad[] = { "",
			      "allow",
			      "allow=",
			      "deny=1.2.3.4",
			      "allow=1.2.3.4,",
			      "allow=,1.2.3.4",
			      "allow=1.2.3.4:0",
			      "allow=1.2.3.4:65536",
			      "allow=1.2.3.4:80-70",
			      "allow=1.2.3.4:x",
			      "allow=10.0.0.1/8",       /* host bits */
			      "allow=10.0.0.0/33",
			      "allow=1.2.3.4/",
			      "allow=1.2.3",            /* mistyped address */
			      "allow=0x7f.1",           /* inet_aton's forms: 127.0.0.1, not a name */
			      "allow=0x7f000001",
			      "allow=017700000001:80",
			      "allow=0xa.0x0.0.1",
			      "allow=exa mple.com",
			      "allow=*",
			      "allow=*.*.com",
			      "allow=a..b",
			      "allow=[2001:db8::1",
			      "allow=[2001:db8::1]x",
			      "allow=2001:db8::zz",
			      "allow=example.com/sctp" };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		reset();
		cr_expect_eq(parse(bad[i]), -1, "accepted: '%s'", bad[i]);
		cr_expect(err[0] && !strchr(err, '\n'), "one-line error for '%s'", bad[i]);
	}
}

Test(netpolicy, address_port_proto)
{
	cr_assert_eq(parse("allow=93.184.216.34:443/tcp,8.8.8.0/24:53"), 0, "%s", err);
	cr_assert_eq(match("93.184.216.34", 443, NP_TCP), 0);
	cr_assert_lt(match("93.184.216.34", 443, NP_UDP), 0);
	cr_assert_lt(match("93.184.216.34", 80, NP_TCP), 0);
	cr_assert_lt(match("93.184.216.35", 443, NP_TCP), 0);
	cr_assert_eq(match("8.8.8.8", 53, NP_UDP), 1);
	cr_assert_eq(match("8.8.8.8", 53, NP_TCP), 1);
	cr_assert_lt(match("8.8.9.8", 53, NP_UDP), 0);
}

Test(netpolicy, allow_all_does_not_name_special_ranges)
{
	cr_assert_eq(parse("allow=0.0.0.0/0,::/0"), 0, "%s", err);
	cr_assert_geq(match("93.184.216.34", 443, NP_TCP), 0);
	cr_assert_geq(match("2606:2800:220:1::1", 443, NP_TCP), 0);
	const char *denied[] = { "127.0.0.1", "127.1.2.3", "169.254.169.254", "10.0.0.1",
				 "172.16.5.4", "172.31.255.255", "192.168.1.1", "224.0.0.1",
				 "255.255.255.255", "0.0.0.0", "100.64.0.1",
				 "::1", "::", "fe80::1", "fd00::1", "fc00::1", "ff02::1",
				 "::ffff:10.0.0.1",
				 /* IPv4 inside IPv6 (red team 15): NAT64, IPv4-compatible, 6to4 */
				 "64:ff9b::a00:1", "64:ff9b::a9fe:a9fe", "64:ff9b::7f00:1", "::10.0.0.1",
				 "::169.254.169.254", "2002:a00:1::1", "2002:7f00:1::" };
	for (size_t i = 0; i < sizeof denied / sizeof denied[0]; i++) {
		struct netpol_addr a;
		memset(&a, 0, sizeof a);
		if (strchr(denied[i], ':')) {
			struct sockaddr_in6 s6 = { .sin6_family = AF_INET6 };
			inet_pton(AF_INET6, denied[i], &s6.sin6_addr);
			uint16_t port;
			cr_assert_eq(netpol_from_sockaddr(&s6, sizeof s6, &a, &port), 0);
		} else {
			a = A(denied[i]);
		}
		const char *why = NULL;
		cr_expect_lt(netpolicy_match(&pol, &a, 80, NP_TCP, &why), 0, "allowed %s", denied[i]);
		cr_expect_not_null(why);
	}
	/* neighbours of the special ranges are ordinary */
	cr_assert_geq(match("172.32.0.1", 80, NP_TCP), 0);
	cr_assert_geq(match("11.0.0.1", 80, NP_TCP), 0);
	cr_assert_geq(match("169.253.1.1", 80, NP_TCP), 0);
	cr_assert_geq(match("64:ff9b::5db8:d822", 80, NP_TCP), 0); /* 93.184.216.34 */
	cr_assert_geq(match("2002:5db8:d822::1", 80, NP_TCP), 0);
}

/* A NAT64 (or 6to4, IPv4-compatible) address of a special IPv4 range is
 * special: a DNS answer into it is refused, a rule names it only with its
 * embedding's bits (red team 15: a hostile resolver's AAAA 64:ff9b::a00:1
 * for an allowed name reached 10.0.0.1 through a DNS64/NAT64 network) */
Test(netpolicy, embedded_ipv4_special)
{
	cr_assert_eq(parse("allow=example.com,[64:ff9b::a00:0/104]:22"), 0, "%s", err);
	struct netpol_addr n = A("64:ff9b::a00:1"), c = A("2002:a9fe:a9fe::1"), o = A("64:ff9b::5db8:d822");
	cr_assert_not_null(netpolicy_special(&n));
	cr_assert_eq(netpolicy_remember(&pol, "example.com", &n), -1);
	cr_assert_eq(netpolicy_remember(&pol, "example.com", &c), -1);
	cr_assert_eq(netpolicy_remember(&pol, "example.com", &o), 0);
	cr_assert_eq(match("64:ff9b::5db8:d822", 80, NP_TCP), 0);
	/* named by its embedding: 64:ff9b::10.0.0.0/104 */
	cr_assert_eq(match("64:ff9b::a00:1", 22, NP_TCP), 1);
	cr_assert_lt(match("64:ff9b::a00:1", 80, NP_TCP), 0);
	reset();
	cr_assert_eq(parse("allow=64:ff9b::/96"), 0, "%s", err); /* wider: names none */
	cr_assert_geq(match("64:ff9b::5db8:d822", 80, NP_TCP), 0);
	cr_assert_lt(match("64:ff9b::a00:1", 80, NP_TCP), 0);
}

/* red team 16: the embeddings red team 15's fix left out: RFC 8215's
 * local-use NAT64 prefix (any of its offsets) and Teredo's inverted client
 * address */
Test(netpolicy, embedded_ipv4_more_forms)
{
	cr_assert_eq(parse("allow=example.com,::/0"), 0, "%s", err);
	static const char *const bad[] = {
		"64:ff9b:1::a00:1",          /* /96: 10.0.0.1 */
		"64:ff9b:1:a00:0:100::",     /* /48: 10.0.0.1 (bits 64-71 the u octet) */
		"64:ff9b:1:7f:0:1::",        /* /56: 127.0.0.1 */
		"2001:0:4136:e378:8000:63bf:f5ff:fffe", /* Teredo: client 10.0.0.1 */
		"2001:0:4136:e378:8000:63bf:80ff:fffe", /* Teredo: client 127.0.0.1 */
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct netpol_addr a = A(bad[i]);
		cr_assert_not_null(netpolicy_special(&a), "%s", bad[i]);
		cr_assert_eq(netpolicy_remember(&pol, "example.com", &a), -1, "%s", bad[i]);
		cr_assert_lt(match(bad[i], 80, NP_TCP), 0, "%s", bad[i]);
	}
	/* a public client's Teredo address stays allowed by ::/0 */
	cr_assert_geq(match("2001:0:4136:e378:8000:63bf:a247:dd1d", 80, NP_TCP), 0); /* 93.184.34.226 */
	reset();
	cr_assert_eq(parse("allow=64:ff9b:1::/96"), 0, "%s", err); /* names it */
	cr_assert_geq(match("64:ff9b:1::a00:1", 80, NP_TCP), 0);
}

/* red team 67: two more IPv6 forms that carry an IPv4 address a host may
 * deliver to over IPv4: SIIT's IPv4-translated ::ffff:0:a.b.c.d (RFC 2765,
 * a stateless translator's default) and ISATAP's interface identifier
 * (RFC 5214: 0:5efe:a.b.c.d or 200:5efe:a.b.c.d under any /64, the sit
 * driver's isatap mode); allow=::/0 held ::ffff:0:7f00:1 */
Test(netpolicy, embedded_ipv4_translated_isatap)
{
	cr_assert_eq(parse("allow=example.com,::/0"), 0, "%s", err);
	static const char *const bad[] = {
		"::ffff:0:7f00:1",            /* SIIT: 127.0.0.1 */
		"::ffff:0:a9fe:a9fe",         /* SIIT: 169.254.169.254 */
		"2001:db8::5efe:a00:1",       /* ISATAP: 10.0.0.1 */
		"2001:db8::200:5efe:7f00:1",  /* ISATAP, u bit: 127.0.0.1 */
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct netpol_addr a = A(bad[i]);
		cr_assert_not_null(netpolicy_special(&a), "%s", bad[i]);
		cr_assert_eq(netpolicy_remember(&pol, "example.com", &a), -1, "%s", bad[i]);
		cr_assert_lt(match(bad[i], 80, NP_TCP), 0, "%s", bad[i]);
		struct netpol_addr v4;
		cr_assert_eq(netpolicy_embedded_v4(&a, &v4), 1, "%s", bad[i]);
	}
	/* public IPv4 addresses in those forms stay allowed by ::/0 */
	cr_assert_geq(match("::ffff:0:5db8:d822", 80, NP_TCP), 0);
	cr_assert_geq(match("2001:db8::5efe:5db8:d822", 80, NP_TCP), 0);
	reset();
	cr_assert_eq(parse("allow=::ffff:0:7f00:1"), 0, "%s", err); /* names it */
	cr_assert_geq(match("::ffff:0:7f00:1", 80, NP_TCP), 0);
}

Test(netpolicy, naming_a_special_range)
{
	cr_assert_eq(parse("allow=127.0.0.1:8080,10.0.0.0/8,fd00::/8,169.254.169.254"), 0, "%s", err);
	cr_assert_eq(match("127.0.0.1", 8080, NP_TCP), 0);
	cr_assert_lt(match("127.0.0.1", 8081, NP_TCP), 0);
	cr_assert_lt(match("127.0.0.2", 8080, NP_TCP), 0);
	cr_assert_eq(match("10.200.0.1", 22, NP_TCP), 1);
	cr_assert_eq(match("fd00::1", 22, NP_TCP), 2);
	cr_assert_lt(match("fc00::1", 22, NP_TCP), 0);
	cr_assert_eq(match("169.254.169.254", 80, NP_TCP), 3);
	cr_assert_lt(match("192.168.0.1", 80, NP_TCP), 0);
	/* a rule wider than the special range does not name it */
	reset();
	cr_assert_eq(parse("allow=8.0.0.0/5"), 0, "%s", err); /* 8.0.0.0-15.255.255.255 */
	cr_assert_geq(match("9.1.1.1", 80, NP_TCP), 0);
	cr_assert_lt(match("10.0.0.1", 80, NP_TCP), 0);
}

Test(netpolicy, name_rules)
{
	cr_assert_eq(parse("allow=example.com:443,*.pypi.org"), 0, "%s", err);
	cr_assert_eq(netpolicy_match_name(&pol, "example.com"), 0);
	cr_assert_eq(netpolicy_match_name(&pol, "EXAMPLE.com."), 0);
	cr_assert_lt(netpolicy_match_name(&pol, "www.example.com"), 0);
	cr_assert_lt(netpolicy_match_name(&pol, "example.com.evil.net"), 0);
	cr_assert_eq(netpolicy_match_name(&pol, "files.pypi.org"), 1);
	cr_assert_eq(netpolicy_match_name(&pol, "a.b.pypi.org"), 1);
	cr_assert_lt(netpolicy_match_name(&pol, "pypi.org"), 0);
	cr_assert_lt(netpolicy_match_name(&pol, "evilpypi.org"), 0);
	/* a name rule allows exactly the addresses resolved for it */
	cr_assert_lt(match("93.184.216.34", 443, NP_TCP), 0);
	struct netpol_addr a = A("93.184.216.34");
	cr_assert_eq(netpolicy_remember(&pol, "example.com", &a), 0);
	cr_assert_eq(match("93.184.216.34", 443, NP_TCP), 0);
	cr_assert_lt(match("93.184.216.34", 80, NP_TCP), 0);
	cr_assert_lt(match("93.184.216.35", 443, NP_TCP), 0);
	/* DNS answers into denied ranges are refused */
	struct netpol_addr p = A("10.0.0.1"), m = A("169.254.169.254"), l = A("127.0.0.1");
	cr_assert_eq(netpolicy_remember(&pol, "example.com", &p), -1);
	cr_assert_eq(netpolicy_remember(&pol, "example.com", &m), -1);
	cr_assert_eq(netpolicy_remember(&pol, "example.com", &l), -1);
	cr_assert_lt(match("10.0.0.1", 443, NP_TCP), 0);
}

Test(netpolicy, sockaddr)
{
	struct sockaddr_in in = { .sin_family = AF_INET, .sin_port = htons(80) };
	inet_pton(AF_INET, "1.2.3.4", &in.sin_addr);
	struct netpol_addr a;
	uint16_t port = 0;
	cr_assert_eq(netpol_from_sockaddr(&in, sizeof in, &a, &port), 0);
	cr_assert_eq(a.family, AF_INET);
	cr_assert_eq(port, 80);
	char buf[64];
	netpol_format(&a, buf, sizeof buf);
	cr_assert_str_eq(buf, "1.2.3.4");
	cr_assert_eq(netpol_from_sockaddr(&in, 8, &a, &port), -1);
}

/* --secret rules (cli/main.c puts them first, with .secret = slot + 1): the
 * slots whose rules hold a TCP destination; a DNS answer for a name is
 * remembered in every rule covering it (a --secret rule and a --net rule
 * for the same name, a wildcard --net rule). */
Test(netpolicy, secret_rules)
{
	cr_assert_eq(parse("allow=api.example.com:80/tcp,127.0.0.1:8080/tcp,api.example.com,*.example.com:443,"
			   "127.0.0.1:8080"),
		     0, "%s", err);
	pol.rules[0].secret = 1;
	pol.rules[1].secret = 3;
	struct netpol_addr lo = A("127.0.0.1"), pub = A("93.184.216.34");
	cr_assert_eq(netpolicy_secrets(&pol, &lo, 8080), 1u << 2);
	cr_assert_eq(netpolicy_secrets(&pol, &lo, 8081), 0);
	cr_assert_eq(netpolicy_secrets(&pol, &pub, 80), 0); /* not resolved yet */
	cr_assert_eq(netpolicy_remember(&pol, "api.example.com", &pub), 0);
	cr_assert_eq(netpolicy_secrets(&pol, &pub, 80), 1u << 0);
	cr_assert_eq(netpolicy_secrets(&pol, &pub, 443), 0);
	cr_assert_eq(match("93.184.216.34", 80, NP_TCP), 0);
	cr_assert_eq(match("93.184.216.34", 22, NP_TCP), 2);  /* the --net rule got it too */
	cr_assert_eq(match("93.184.216.34", 443, NP_UDP), 2);
	cr_assert_eq(pol.rules[3].nresolved, 1);              /* the wildcard too */
	/* the guest's brokered address: only the rule's own */
	cr_assert_eq(netpolicy_secrets(&pol, &pub, 8080), 0);
}

/* A name whose first covering rule is a wildcard: its answer is remembered
 * for the exact rule too (red team 79 record: allow=*.example.com:22,
 * api.example.com:443 denied api.example.com:443, the answer kept for the
 * wildcard only); never for a rule covering another name. */
Test(netpolicy, wildcard_first_remembers_for_exact_rule)
{
	cr_assert_eq(parse("allow=*.example.com:22,api.example.com:443,www.example.com:80,example.com:8080,"
			   "*.api.example.com:25"),
		     0, "%s", err);
	struct netpol_addr pub = A("93.184.216.34"), other = A("93.184.216.35");
	cr_assert_eq(netpolicy_match_name(&pol, "api.example.com"), 0);
	cr_assert_eq(netpolicy_remember(&pol, "API.example.com.", &pub), 0);
	cr_expect_eq(match("93.184.216.34", 22, NP_TCP), 0);
	cr_expect_eq(match("93.184.216.34", 443, NP_TCP), 1); /* was denied */
	cr_expect_lt(match("93.184.216.34", 80, NP_TCP), 0);  /* www's rule: not its name */
	cr_expect_lt(match("93.184.216.34", 8080, NP_TCP), 0);
	cr_expect_lt(match("93.184.216.34", 25, NP_TCP), 0);
	cr_expect_eq(pol.rules[2].nresolved + pol.rules[3].nresolved + pol.rules[4].nresolved, 0);
	/* a name no rule covers remembers nothing */
	cr_assert_eq(netpolicy_remember(&pol, "example.org", &other), -1);
	cr_expect_lt(match("93.184.216.35", 22, NP_TCP), 0);
}

/* The host's own addresses (moat-netd's host_local, red team 33): only a
 * rule of that one address names one; a wider CIDR, a name or another
 * port/protocol does not. */
Test(netpolicy, match_exact_names_one_address)
{
	reset();
	cr_assert_eq(parse("allow=0.0.0.0/0,::/0,198.51.100.0/24,[2001:db8::7]:443/tcp,198.51.100.7:80"), 0, "%s", err);
	struct netpol_addr a = A("198.51.100.7"), b = A("198.51.100.8"), c = A("2001:db8::7"), d = A("2001:db8::8");
	cr_expect_eq(netpolicy_match_exact(&pol, &a, 80, NP_TCP), 4);
	cr_expect_eq(netpolicy_match_exact(&pol, &a, 80, NP_UDP), 4);
	cr_expect_lt(netpolicy_match_exact(&pol, &a, 81, NP_TCP), 0);
	cr_expect_lt(netpolicy_match_exact(&pol, &b, 80, NP_TCP), 0);
	cr_expect_eq(netpolicy_match_exact(&pol, &c, 443, NP_TCP), 3);
	cr_expect_lt(netpolicy_match_exact(&pol, &c, 443, NP_UDP), 0);
	cr_expect_lt(netpolicy_match_exact(&pol, &d, 443, NP_TCP), 0);
	/* a v4-mapped rule is the IPv4 address */
	reset();
	cr_assert_eq(parse("allow=::ffff:198.51.100.7"), 0, "%s", err);
	cr_expect_eq(netpolicy_match_exact(&pol, &a, 1, NP_TCP), 0);
	/* a name rule never names one (its DNS answer may be the host's) */
	reset();
	cr_assert_eq(parse("allow=host.test"), 0, "%s", err);
	cr_assert_eq(netpolicy_remember(&pol, "host.test", &a), 0);
	cr_expect_eq(netpolicy_match(&pol, &a, 80, NP_TCP, NULL), 0);
	cr_expect_lt(netpolicy_match_exact(&pol, &a, 80, NP_TCP), 0);
}

/* The unspecified address is the loopback it reaches (red team 79: a rule
 * naming 0.0.0.0 or :: let the guest reach the host's 127.0.0.1 or ::1) */
Test(netpolicy, unspecified_is_loopback)
{
	cr_assert_eq(parse("allow=0.0.0.0:5432,[::]:5432,0.0.0.0/8"), 0, "%s", err);
	cr_expect_lt(match("0.0.0.0", 5432, NP_TCP), 0);
	cr_expect_lt(match("0.0.0.0", 5432, NP_UDP), 0);
	cr_expect_lt(match("::", 5432, NP_TCP), 0);
	cr_expect_lt(match("::ffff:0.0.0.0", 5432, NP_TCP), 0); /* (A keeps it IPv6: embedded) */
	struct netpol_addr z4 = A("0.0.0.0"), z6 = A("::");
	cr_expect_str_eq(netpolicy_special(&z4), "host loopback");
	cr_expect_str_eq(netpolicy_special(&z6), "host loopback");
	cr_expect_lt(netpolicy_match_exact(&pol, &z4, 5432, NP_TCP), 0);
	/* the rest of 0.0.0.0/8 is still what a rule naming it names */
	cr_expect_eq(match("0.1.2.3", 80, NP_TCP), 2);
	/* a rule naming loopback holds it, as it holds 127.0.0.1 */
	reset();
	cr_assert_eq(parse("allow=127.0.0.1:5432,[::1]:5432"), 0, "%s", err);
	cr_expect_eq(match("0.0.0.0", 5432, NP_TCP), 0);
	cr_expect_eq(match("::", 5432, NP_TCP), 1);
	cr_expect_lt(match("0.0.0.0", 5433, NP_TCP), 0);
	/* an allow-all rule names neither */
	reset();
	cr_assert_eq(parse("allow=0.0.0.0/0,::/0"), 0, "%s", err);
	cr_expect_lt(match("0.0.0.0", 80, NP_TCP), 0);
	cr_expect_lt(match("::", 80, NP_TCP), 0);
}
