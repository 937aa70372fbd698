/* sentry/netpolicy.c - the egress allowlist: parser and matcher (see netpolicy.h). */
#include "sentry/netpolicy.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

struct special {
	const char *cidr;
	const char *why;
	struct netpol_addr addr;
	int prefix;
};

/* Always denied unless a rule names them (its prefix lies inside). */
static struct special specials[] = {
	{ "127.0.0.0/8", "host loopback", { 0 }, 0 },
	{ "169.254.0.0/16", "link-local (cloud metadata)", { 0 }, 0 },
	{ "10.0.0.0/8", "private range", { 0 }, 0 },
	{ "172.16.0.0/12", "private range", { 0 }, 0 },
	{ "192.168.0.0/16", "private range", { 0 }, 0 },
	{ "100.64.0.0/10", "shared address space (CGNAT)", { 0 }, 0 },
	{ "224.0.0.0/4", "multicast", { 0 }, 0 },
	{ "240.0.0.0/4", "reserved/broadcast", { 0 }, 0 },
	{ "0.0.0.0/8", "unspecified address", { 0 }, 0 },
	{ "::1/128", "host loopback", { 0 }, 0 },
	{ "::/128", "unspecified address", { 0 }, 0 },
	{ "fe80::/10", "link-local", { 0 }, 0 },
	{ "fc00::/7", "private range (ULA)", { 0 }, 0 },
	{ "ff00::/8", "multicast", { 0 }, 0 },
	/* RFC 8215's local-use NAT64 prefix: a DNS64 network's AAAA answers
	 * embed the IPv4 address at /48, /56, /64 or /96 offsets alike, so
	 * the whole prefix is special (red team 16: 64:ff9b:1::a00:1 was
	 * 10.0.0.1 through such a gateway, held by allow=::/0 or a name) */
	{ "64:ff9b:1::/48", "NAT64 local-use prefix (embeds an IPv4 address)", { 0 }, 0 },
};
#define NSPECIAL (sizeof specials / sizeof specials[0])

static int parse_addr(const char *s, struct netpol_addr *a)
{
	memset(a, 0, sizeof *a);
	if (inet_pton(AF_INET, s, a->a) == 1) {
		a->family = AF_INET;
		return 0;
	}
	if (inet_pton(AF_INET6, s, a->a) == 1) {
		a->family = AF_INET6;
		static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
		if (memcmp(a->a, mapped, 12) == 0) { /* ::ffff:a.b.c.d is IPv4 */
			memmove(a->a, a->a + 12, 4);
			memset(a->a + 4, 0, 12);
			a->family = AF_INET;
		}
		return 0;
	}
	return -1;
}

static int in_prefix(const struct netpol_addr *net, int prefix, const struct netpol_addr *a)
{
	if (net->family != a->family)
		return 0;
	int full = prefix / 8, rest = prefix % 8;
	if (memcmp(net->a, a->a, (size_t)full))
		return 0;
	if (rest) {
		uint8_t m = (uint8_t)(0xff << (8 - rest));
		if ((net->a[full] & m) != (a->a[full] & m))
			return 0;
	}
	return 1;
}

static int parse_cidr(const char *s, struct netpol_addr *a, int *prefix)
{
	char buf[128];
	if (strlen(s) >= sizeof buf)
		return -1;
	strcpy(buf, s);
	char *slash = strchr(buf, '/');
	if (slash)
		*slash++ = 0;
	if (parse_addr(buf, a) < 0)
		return -1;
	int max = a->family == AF_INET ? 32 : 128;
	/* a v4-mapped IPv6 CIDR: its prefix counts the 96 mapped bits */
	int mapped = a->family == AF_INET && strchr(buf, ':');
	if (!slash) {
		*prefix = max;
	} else {
		char *end;
		if (!*slash || !isdigit((unsigned char)*slash))
			return -1;
		long n = strtol(slash, &end, 10);
		if (*end)
			return -1;
		if (mapped)
			n -= 96;
		if (n < 0 || n > max)
			return -1;
		*prefix = (int)n;
	}
	/* host bits must be zero (a typo guard, as ip(8) warns) */
	struct netpol_addr z = *a;
	int full = *prefix / 8, rest = *prefix % 8;
	if (rest)
		z.a[full++] &= (uint8_t)(0xff << (8 - rest));
	memset(z.a + full, 0, sizeof z.a - (size_t)full);
	if (a->family == AF_INET)
		memset(z.a + 4, 0, 12);
	return memcmp(z.a, a->a, sizeof z.a) ? -2 : 0;
}

static void init_specials(void)
{
	static int done;
	if (done)
		return;
	for (size_t i = 0; i < NSPECIAL; i++)
		parse_cidr(specials[i].cidr, &specials[i].addr, &specials[i].prefix);
	done = 1;
}

/* An IPv6 address that carries an IPv4 one a gateway or the kernel may
 * reach it by: NAT64 (64:ff9b::/96, RFC 6052; a DNS64 network's AAAA
 * answers), IPv4-compatible (::a.b.c.d, /96: the sit driver's automatic
 * tunnel), v4-mapped (an AAAA answer ::ffff:a.b.c.d; a connect's is made
 * IPv4 before it gets here), SIIT's ::ffff:0:a.b.c.d, 6to4 (2002:AABB:CCDD::/16,
 * bits 16-47), Teredo and ISATAP's identifier. 1 with the IPv4
 * address and the bit offset of its first bit, else 0. */
static int embedded_v4(const struct netpol_addr *a, struct netpol_addr *v4, int *shift)
{
	static const uint8_t nat64[12] = { 0x00, 0x64, 0xff, 0x9b };
	static const uint8_t compat[12];
	static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	if (a->family != AF_INET6)
		return 0;
	memset(v4, 0, sizeof *v4);
	v4->family = AF_INET;
	if (!memcmp(a->a, nat64, 12) || !memcmp(a->a, mapped, 12) ||
	    (!memcmp(a->a, compat, 12) && (a->a[12] | a->a[13]))) {
		memcpy(v4->a, a->a + 12, 4); /* (::/128 and ::1 are specials of their own) */
		*shift = 96;
		return 1;
	}
	/* SIIT's IPv4-translated form ::ffff:0:a.b.c.d (RFC 2765/6145: a
	 * stateless translator's default prefix; red team 67: allow=::/0
	 * held ::ffff:0:7f00:1) */
	static const uint8_t siit[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0 };
	if (!memcmp(a->a, siit, 12)) {
		memcpy(v4->a, a->a + 12, 4);
		*shift = 96;
		return 1;
	}
	if (a->a[0] == 0x20 && a->a[1] == 0x02) {
		memcpy(v4->a, a->a + 2, 4);
		*shift = 16;
		return 1;
	}
	/* Teredo (2001:0::/32, RFC 4380): the client's IPv4 address, each bit
	 * inverted, in the last 32 bits; a host with a Teredo interface
	 * (miredo) sends to it over UDP (red team 16) */
	if (a->a[0] == 0x20 && a->a[1] == 0x01 && a->a[2] == 0 && a->a[3] == 0) {
		for (int i = 0; i < 4; i++)
			v4->a[i] = (uint8_t)~a->a[12 + i];
		*shift = 96;
		return 1;
	}
	/* ISATAP's interface identifier 0:5efe:a.b.c.d or 200:5efe:a.b.c.d
	 * under any /64 (RFC 5214: the sit driver's isatap mode sends to the
	 * IPv4 address over IPv4; red team 67). Last: a 6to4 or Teredo
	 * address with such an identifier is checked for its prefix's IPv4
	 * address only (one embedding per address) */
	if ((a->a[8] == 0 || a->a[8] == 2) && a->a[9] == 0 && a->a[10] == 0x5e && a->a[11] == 0xfe) {
		memcpy(v4->a, a->a + 12, 4);
		*shift = 96;
		return 1;
	}
	return 0;
}

/* The special range holding a (for an address that embeds an IPv4 one, the
 * range holding that: a DNS answer or an allow-all rule must not reach
 * 10.0.0.1 as 64:ff9b::a00:1 through a NAT64 gateway — red team 15), its
 * index, or -1 */
static int special_of(const struct netpol_addr *a, int *shift)
{
	struct netpol_addr v4;
	const struct netpol_addr *x = a;
	*shift = 0;
	init_specials();
	for (size_t i = 0; i < NSPECIAL; i++)
		if (in_prefix(&specials[i].addr, specials[i].prefix, a))
			return (int)i;
	if (!embedded_v4(a, &v4, shift))
		return -1;
	x = &v4;
	for (size_t i = 0; i < NSPECIAL; i++)
		if (in_prefix(&specials[i].addr, specials[i].prefix, x))
			return (int)i;
	return -1;
}

/* The destination the kernel reaches for a: a connect or send to the
 * unspecified address goes to the local host — Linux's IPv4 route look-up
 * takes daddr 0 as the socket's own source, 127.0.0.1 for an unbound one
 * (`ip_route_output_key_hash_rcu`; ::ffff:0.0.0.0 is 0.0.0.0 here), and
 * IPv6's connect and send take :: as ::1 (`tcp_v6_connect`,
 * `ip6_datagram_connect`, `udpv6_sendmsg`). moat-netd's sockets are
 * unbound, so the policy decides on loopback: before red team 79 a rule
 * naming 0.0.0.0 or :: (allow=0.0.0.0:5432, read as "any address") let the
 * guest reach the host's 127.0.0.1:5432 or [::1]:5432, and the host-address
 * check (netd's host_local) did not see it as local (its source is
 * 127.0.0.1, not 0.0.0.0). */
static const struct netpol_addr *reached(const struct netpol_addr *a, struct netpol_addr *lo)
{
	static const uint8_t zero[16];
	if ((a->family != AF_INET && a->family != AF_INET6) || memcmp(a->a, zero, sizeof zero))
		return a;
	memset(lo, 0, sizeof *lo);
	lo->family = a->family;
	if (a->family == AF_INET)
		lo->a[0] = 127, lo->a[3] = 1;
	else
		lo->a[15] = 1;
	return lo;
}

const char *netpolicy_special(const struct netpol_addr *a0)
{
	struct netpol_addr lo;
	const struct netpol_addr *a = reached(a0, &lo);
	int shift, i = special_of(a, &shift);
	return i < 0 ? NULL : specials[i].why;
}

/* Does the rule's own prefix lie inside the special range holding a? (An
 * embedded IPv4 one: inside that range's embedding, the same bits.) */
static int names_special(const struct netpol_rule *r, const struct netpol_addr *a)
{
	int shift, i = special_of(a, &shift);
	if (i < 0)
		return 1; /* not special */
	if (r->is_name)
		return 0;
	if (!shift)
		return r->prefix >= specials[i].prefix && in_prefix(&specials[i].addr, specials[i].prefix, &r->addr);
	/* r names a prefix of the IPv6 embedding no wider than the IPv4
	 * special range, and a lies in it */
	return r->addr.family == AF_INET6 && r->prefix >= shift + specials[i].prefix && in_prefix(&r->addr, r->prefix, a);
}

static int valid_name(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > 253)
		return 0;
	size_t label = 0;
	for (size_t i = 0; i < n; i++) {
		char ch = s[i];
		if (ch == '.') {
			if (label == 0)
				return 0;
			label = 0;
			continue;
		}
		if (!(isalnum((unsigned char)ch) || ch == '-' || ch == '_'))
			return 0;
		if (++label > 63)
			return 0;
	}
	return label > 0;
}

static int parse_port(const char *s, uint16_t *lo, uint16_t *hi)
{
	char *end;
	if (!isdigit((unsigned char)*s))
		return -1;
	long a = strtol(s, &end, 10), b = a;
	if (*end == '-') {
		const char *t = end + 1;
		if (!isdigit((unsigned char)*t))
			return -1;
		b = strtol(t, &end, 10);
	}
	if (*end || a < 1 || a > 65535 || b < a || b > 65535)
		return -1;
	*lo = (uint16_t)a;
	*hi = (uint16_t)b;
	return 0;
}

#define FAIL(...)                                      \
	do {                                           \
		snprintf(err, errlen, __VA_ARGS__);    \
		return -1;                             \
	} while (0)

int netpolicy_parse_rule(struct netpol_rule *r, const char *text, char *err, size_t errlen)
{
	memset(r, 0, sizeof *r);
	char s[300];
	if (!*text)
		FAIL("empty rule");
	if (strlen(text) >= sizeof s)
		FAIL("rule too long: %.40s...", text);
	strcpy(r->text, text);
	strcpy(s, text);
	for (char *p = s; *p; p++)
		*p = (char)tolower((unsigned char)*p);
	size_t n = strlen(s);
	if (n > 4 && strcmp(s + n - 4, "/tcp") == 0)
		r->proto = NP_TCP, s[n - 4] = 0;
	else if (n > 4 && strcmp(s + n - 4, "/udp") == 0)
		r->proto = NP_UDP, s[n - 4] = 0;
	char *target = s, *port = NULL;
	if (s[0] == '[') { /* [v6]:port */
		char *close = strchr(s, ']');
		if (!close)
			FAIL("rule %s: missing ']'", text);
		*close = 0;
		target = s + 1;
		if (close[1] == ':')
			port = close + 2;
		else if (close[1])
			FAIL("rule %s: expected ':PORT' after ']'", text);
	} else {
		char *c1 = strchr(s, ':');
		if (c1 && !strchr(c1 + 1, ':')) { /* one colon: host:port or v4:port */
			*c1 = 0;
			port = c1 + 1;
		}
	}
	if (port && parse_port(port, &r->port_lo, &r->port_hi) < 0)
		FAIL("rule %s: bad port '%s' (1-65535 or LO-HI)", text, port);
	int pr = parse_cidr(target, &r->addr, &r->prefix);
	if (pr == -2)
		FAIL("rule %s: address has bits set beyond the prefix", text);
	if (pr == 0)
		return 0;
	if (strchr(target, '/') || strchr(target, ':'))
		FAIL("rule %s: bad address or CIDR '%s'", text, target);
	if (strlen(target) > 1 && target[strlen(target) - 1] == '.')
		target[strlen(target) - 1] = 0;
	r->is_name = 1;
	if (strncmp(target, "*.", 2) == 0) {
		r->wildcard = 1;
		target += 2;
	}
	if (!valid_name(target) || strchr(target, '*'))
		FAIL("rule %s: bad host name '%s'", text, target);
	/* all digits and dots would be a mistyped address; what inet_aton reads
	 * as one (0x7f.1, 017700000001: 127.0.0.1) is an address a resolver
	 * would never be asked for, not a name: said so, not taken as a name */
	struct in_addr ia;
	if (strspn(target, "0123456789.") == strlen(target) || inet_aton(target, &ia))
		FAIL("rule %s: bad address '%s' (write IPv4 addresses as a.b.c.d)", text, target);
	strcpy(r->name, target);
	return 0;
}

int netpolicy_parse(struct netpolicy *p, const char *spec, char *err, size_t errlen)
{
	if (strcmp(spec, "none") == 0)
		return 0;
	if (strncmp(spec, "allow=", 6) != 0)
		FAIL("--net %s: expected none or allow=RULE[,RULE...]", spec);
	const char *s = spec + 6;
	if (!*s)
		FAIL("--net %s: no rule after allow=", spec);
	while (*s) {
		const char *e = strchr(s, ',');
		size_t n = e ? (size_t)(e - s) : strlen(s);
		char one[300];
		if (n >= sizeof one)
			FAIL("--net: rule too long");
		memcpy(one, s, n);
		one[n] = 0;
		if (p->nrules >= NETPOL_MAX_RULES)
			FAIL("--net: too many rules (max %d)", NETPOL_MAX_RULES);
		char e2[400];
		if (netpolicy_parse_rule(&p->rules[p->nrules], one, e2, sizeof e2) < 0)
			FAIL("--net: %s", e2);
		p->nrules++;
		if (!e)
			break;
		s = e + 1;
		if (!*s)
			FAIL("--net %s: empty rule after ','", spec);
	}
	return 0;
}

static int name_covers(const struct netpol_rule *r, const char *name)
{
	if (!r->is_name)
		return 0;
	if (!r->wildcard)
		return strcmp(r->name, name) == 0;
	size_t n = strlen(name), m = strlen(r->name);
	return n > m + 1 && name[n - m - 1] == '.' && strcmp(name + n - m, r->name) == 0;
}

/* name0 in lower case, without a trailing dot, into name: 0, or -1 */
static int norm_name(const char *name0, char *name, size_t len)
{
	size_t n = strlen(name0);
	if (n == 0 || n >= len)
		return -1;
	for (size_t i = 0; i <= n; i++)
		name[i] = (char)tolower((unsigned char)name0[i]);
	if (name[n - 1] == '.')
		name[n - 1] = 0;
	return 0;
}

int netpolicy_match_name(const struct netpolicy *p, const char *name0)
{
	char name[256];
	if (norm_name(name0, name, sizeof name) < 0)
		return -1;
	for (int i = 0; i < p->nrules; i++)
		if (name_covers(&p->rules[i], name))
			return i;
	return -1;
}

static void remember_one(struct netpol_rule *r, const struct netpol_addr *a)
{
	for (int k = 0; k < r->nresolved; k++)
		if (r->resolved[k].family == a->family && !memcmp(r->resolved[k].a, a->a, 16))
			return;
	if (r->nresolved >= NETPOL_MAX_RESOLVED) /* oldest out */
		memmove(r->resolved, r->resolved + 1, sizeof r->resolved[0] * (NETPOL_MAX_RESOLVED - 1)),
			r->nresolved--;
	r->resolved[r->nresolved++] = *a;
}

int netpolicy_remember(struct netpolicy *p, const char *name0, const struct netpol_addr *a)
{
	char name[256];
	int hit = 0;
	if (netpolicy_special(a) || norm_name(name0, name, sizeof name) < 0)
		return -1;
	/* every rule covering the name, exact or wildcard, whichever is first
	 * (red team 79: a wildcard first kept the exact rule's port denied) */
	for (int j = 0; j < p->nrules; j++)
		if (name_covers(&p->rules[j], name))
			remember_one(&p->rules[j], a), hit = 1;
	return hit ? 0 : -1;
}

/* Does rule r hold (a, port, proto)? special: netpolicy_special(a). */
static int rule_holds(const struct netpol_rule *r, const struct netpol_addr *a, uint16_t port, int proto,
		      const char *special)
{
	if (r->proto != NP_ANY && r->proto != proto)
		return 0;
	if (r->port_lo && (port < r->port_lo || port > r->port_hi))
		return 0;
	int hit = 0;
	if (r->is_name) {
		for (int k = 0; k < r->nresolved && !hit; k++)
			hit = r->resolved[k].family == a->family && !memcmp(r->resolved[k].a, a->a, 16);
	} else {
		hit = in_prefix(&r->addr, r->prefix, a);
	}
	/* a wider rule covers a special address but does not name it */
	return hit && (!special || names_special(r, a));
}

uint32_t netpolicy_secrets(const struct netpolicy *p, const struct netpol_addr *a0, uint16_t port)
{
	struct netpol_addr lo;
	const struct netpol_addr *a = reached(a0, &lo);
	const char *special = netpolicy_special(a);
	uint32_t m = 0;
	for (int i = 0; i < p->nrules; i++)
		if (p->rules[i].secret > 0 && p->rules[i].secret <= 32 &&
		    rule_holds(&p->rules[i], a, port, NP_TCP, special))
			m |= 1u << (p->rules[i].secret - 1);
	return m;
}

int netpolicy_match(const struct netpolicy *p, const struct netpol_addr *a0, uint16_t port,
		    int proto, const char **why)
{
	struct netpol_addr lo;
	const struct netpol_addr *a = reached(a0, &lo);
	const char *special = netpolicy_special(a);
	for (int i = 0; i < p->nrules; i++)
		if (rule_holds(&p->rules[i], a, port, proto, special))
			return i;
	if (why)
		*why = special ? special : "no rule allows this destination";
	return -1;
}

int netpolicy_embedded_v4(const struct netpol_addr *a, struct netpol_addr *v4)
{
	int shift;
	return embedded_v4(a, v4, &shift);
}

int netpolicy_match_exact(const struct netpolicy *p, const struct netpol_addr *a0, uint16_t port, int proto)
{
	struct netpol_addr lo;
	const struct netpol_addr *a = reached(a0, &lo);
	int full = a->family == AF_INET ? 32 : 128;
	for (int i = 0; i < p->nrules; i++) {
		const struct netpol_rule *r = &p->rules[i];
		if (!r->is_name && r->prefix == full && r->addr.family == a->family &&
		    rule_holds(r, a, port, proto, netpolicy_special(a)))
			return i;
	}
	return -1;
}

int netpol_from_sockaddr(const void *sa, size_t len, struct netpol_addr *a, uint16_t *port)
{
	memset(a, 0, sizeof *a);
	sa_family_t fam;
	if (len < sizeof fam)
		return -1;
	memcpy(&fam, sa, sizeof fam);
	if (fam == AF_INET && len >= sizeof(struct sockaddr_in)) {
		struct sockaddr_in in;
		memcpy(&in, sa, sizeof in);
		a->family = AF_INET;
		memcpy(a->a, &in.sin_addr, 4);
		*port = ntohs(in.sin_port);
		return 0;
	}
	if (fam == AF_INET6 && len >= sizeof(struct sockaddr_in6)) {
		struct sockaddr_in6 in6;
		memcpy(&in6, sa, sizeof in6);
		a->family = AF_INET6;
		memcpy(a->a, &in6.sin6_addr, 16);
		*port = ntohs(in6.sin6_port);
		static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
		if (memcmp(a->a, mapped, 12) == 0) {
			memmove(a->a, a->a + 12, 4);
			memset(a->a + 4, 0, 12);
			a->family = AF_INET;
		}
		return 0;
	}
	return -1;
}

void netpol_format(const struct netpol_addr *a, char *buf, size_t len)
{
	if (!inet_ntop(a->family, a->a, buf, (socklen_t)len))
		snprintf(buf, len, "?");
}
