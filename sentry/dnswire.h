/* sentry/dnswire.h - the DNS wire format as the sentry's stub (netdns.c) and
 * moat-netd (netd.c) read and write it: the guest's question, the query
 * netd sends, the host nameserver's answer. Pure functions on bytes (no I/O)
 * so that fuzz/fuzz_dns.c runs them on any input: every byte they read may
 * be an attacker's (the guest's question; an answer from the host's network,
 * which netd reads with the reach of the host's network). */
#ifndef MOAT_SENTRY_DNSWIRE_H
#define MOAT_SENTRY_DNSWIRE_H

#include <stddef.h>
#include <stdint.h>

#include "sentry/netpolicy.h"

/* The one question of the message p[0, n) (after the 12-byte header): its
 * name (lower case, dotted, NUL-terminated in name[cap]; no compression, no
 * empty name, no NUL or '.' in a label), QTYPE and QCLASS. The offset after
 * QCLASS, or -1. */
int dns_parse_question(const uint8_t *p, int n, char *name, size_t cap, int *qtype, int *qclass);

/* Skip a (possibly compressed) name at off in p[0, n): the offset after it,
 * or -1. A pointer ends the name (it is not followed). */
int dns_skip_name(const uint8_t *p, int n, int off);

/* A recursive query (RD) with id for name (dotted, labels of 1-63 bytes)
 * and qtype, class IN, into pkt[cap]: its length, or 0 (a bad name, or it
 * does not fit with 5 bytes to spare). */
int dns_build_query(uint8_t *pkt, int cap, uint16_t id, const char *name, int qtype);

/* Is ans[0, got) an answer (QR) to the query pkt[0, n): the same id and
 * the same question? */
int dns_answers_query(const uint8_t *ans, int got, const uint8_t *pkt, int n);

/* The answer section of ans[0, got), ANCOUNT records from off (after the
 * question): fn(arg, address, ttl) for each record of class IN and type
 * qtype (1 A, 28 AAAA) whose data is an address of that type (4 or 16
 * bytes). Stops at the first record that does not fit. */
void dns_answer_addrs(const uint8_t *ans, int got, int off, int qtype,
		      void (*fn)(void *arg, const struct netpol_addr *a, uint32_t ttl), void *arg);

#endif
