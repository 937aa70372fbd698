/* sentry/netpolicy.h - the egress allowlist (--net allow=RULE,...).
 *
 * RULE = TARGET[:PORT[-PORT]][/tcp|/udp]
 *   TARGET = host name ("example.com", "*.example.com": any name below it),
 *            IPv4 or IPv6 address, IPv4 or IPv6 CIDR; an IPv6 target with a
 *            port is written in brackets: "[2001:db8::1]:443".
 * Matching an address (no names: a name rule matches only the addresses the
 * DNS stub handed out for it, netpolicy_remember):
 *   - a rule matches if its address/CIDR holds the address (or the address was
 *     resolved for it), the port is in its range (none: any) and the protocol
 *     agrees (none: both);
 *   - special ranges (host loopback, link-local incl. 169.254.169.254,
 *     private, multicast, unspecified) are denied unless the matching rule
 *     *names* the range: its prefix lies inside the special range (so
 *     0.0.0.0/0 or ::/0 never names 10.0.0.1, but 10.0.0.0/8 or 10.0.0.1 does);
 *   - the host's own addresses (moat-netd asks the host's routing, it is no
 *     range) only by a rule of that one address (netpolicy_match_exact),
 *     host loopback excepted (the range rule above already named it).
 * Pure data + functions: no I/O; used by moat-netd (which enforces) and by the
 * sentry (which audits). */
#ifndef MOAT_SENTRY_NETPOLICY_H
#define MOAT_SENTRY_NETPOLICY_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>

#define NETPOL_MAX_RULES 256
#define NETPOL_MAX_RESOLVED 64   /* addresses remembered per name rule */

enum { NP_ANY = 0, NP_TCP = 1, NP_UDP = 2 };

struct netpol_addr {
	int family;             /* AF_INET or AF_INET6 */
	uint8_t a[16];          /* IPv4 in the first 4 bytes */
};

struct netpol_rule {
	char text[300];         /* as given, for audit */
	int is_name;            /* name rule */
	int wildcard;           /* "*.suffix" */
	char name[256];         /* lower case, no trailing dot; the suffix for wildcards */
	struct netpol_addr addr; /* address rule */
	int prefix;             /* CIDR prefix length in bits */
	uint16_t port_lo, port_hi; /* 0,0 = any */
	int proto;              /* NP_ANY/NP_TCP/NP_UDP */
	struct netpol_addr resolved[NETPOL_MAX_RESOLVED];
	int nresolved;
	int secret;             /* --secret NAME@HOST: 1 + its slot (broker.h), 0 = none */
	char secret_name[64];   /* NAME, for audit (never the value) */
};

struct netpolicy {
	struct netpol_rule rules[NETPOL_MAX_RULES];
	int nrules;
};

/* Parse one --net value: "none" or "allow=RULE[,RULE...]"; rules append.
 * 0, or -1 with a one-line message in err. */
int netpolicy_parse(struct netpolicy *p, const char *spec, char *err, size_t errlen);
/* Parse one rule into r. 0 or -1 (err). */
int netpolicy_parse_rule(struct netpol_rule *r, const char *text, char *err, size_t errlen);

/* Decide for a destination. Returns the index of the matching rule (>= 0) or
 * -1 (denied); why (static text) says why when denied. Here and below the
 * unspecified address is decided as the loopback address it reaches
 * (0.0.0.0 as 127.0.0.1, :: as ::1: red team 79). */
int netpolicy_match(const struct netpolicy *p, const struct netpol_addr *a, uint16_t port,
		    int proto, const char **why);
/* A rule that holds (a, port, proto) and names the single address a itself
 * (an address rule of /32 or /128, not a name or a wider CIDR), or -1: what
 * lets a destination that is one of the host's own addresses through
 * (moat-netd's host_local; red team 33). */
int netpolicy_match_exact(const struct netpolicy *p, const struct netpol_addr *a, uint16_t port, int proto);
/* The IPv4 address an IPv6 one carries for a gateway or the kernel to reach
 * (NAT64, IPv4-compatible, v4-mapped, 6to4, Teredo) into *v4: 1, else 0. */
int netpolicy_embedded_v4(const struct netpol_addr *a, struct netpol_addr *v4);
/* The name rule that covers a host name, or -1. */
int netpolicy_match_name(const struct netpolicy *p, const char *name);
/* Remember an address the DNS stub handed out for a host name in every
 * name rule covering the name, exact and wildcard (a --secret rule and a
 * --net rule for the same name both match its addresses; a rule covering
 * another name never does). -1: a special range (refused), or no rule
 * covers the name. */
int netpolicy_remember(struct netpolicy *p, const char *name, const struct netpol_addr *a);
/* The --secret slots (a bit each) whose rules match a TCP destination: its
 * connections are brokered (moat-broker). 0 = none. */
uint32_t netpolicy_secrets(const struct netpolicy *p, const struct netpol_addr *a, uint16_t port);
/* The special range holding a, or NULL. */
const char *netpolicy_special(const struct netpol_addr *a);
/* From/to a sockaddr (v4-mapped IPv6 becomes IPv4). 0 or -1. */
int netpol_from_sockaddr(const void *sa, size_t len, struct netpol_addr *a, uint16_t *port);
void netpol_format(const struct netpol_addr *a, char *buf, size_t len);

#endif
