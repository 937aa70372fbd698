/* fuzz/fuzz_dns.c: the DNS wire format (sentry/dnswire.c) on any bytes, as
 * the sentry's stub reads the guest's question and moat-netd reads the host
 * nameserver's answer (and the name the sentry hands it). What must hold,
 * besides no sanitizer report: a parsed question's name is a NUL-terminated
 * lower-case dotted name inside its buffer, and the query netd builds from
 * it parses back to the same name and is answered by itself with QR; every
 * address an answer yields is of the type asked, at most ANCOUNT of them;
 * a skipped name ends after where it started and inside the message. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "sentry/dnswire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void must(int c)
{
	if (!c)
		abort();
}

struct seen {
	int qtype;
	int count;
};

static void on_addr(void *arg, const struct netpol_addr *a, uint32_t ttl)
{
	struct seen *s = arg;
	(void)ttl;
	must(a->family == (s->qtype == 1 ? AF_INET : AF_INET6));
	if (s->qtype == 1)
		for (int i = 4; i < 16; i++)
			must(a->a[i] == 0);
	s->count++;
}

/* The answer section of m[0, n) from off, for A and AAAA. */
static void answers(const uint8_t *m, int n, int off)
{
	int an = n >= 12 ? m[6] << 8 | m[7] : 0;
	for (int qt = 1; qt <= 28; qt += 27) {
		struct seen s = { qt, 0 };
		dns_answer_addrs(m, n, off, qt, on_addr, &s);
		must(s.count <= an);
	}
}

/* netd's query for name (as the sentry hands it): it parses back. */
static void query_of(const char *name, uint16_t id, int qtype)
{
	uint8_t pkt[512];
	int n = dns_build_query(pkt, (int)sizeof pkt, id, name, qtype);
	if (!n)
		return;
	must(n >= 17 && n <= (int)sizeof pkt);
	char back[256];
	int qt, qc;
	int qend = dns_parse_question(pkt, n, back, sizeof back, &qt, &qc);
	size_t len = strlen(name);
	if (len && name[len - 1] == '.')
		len--; /* "a." is asked as "a" */
	if (!len) {
		must(qend < 0);
		return;
	}
	must(qend == n && qt == qtype && qc == 1 && strlen(back) == len);
	for (size_t i = 0; i < len; i++) {
		char c = name[i];
		must(back[i] == (c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c));
	}
	/* it answers itself once QR is set, and not before */
	must(!dns_answers_query(pkt, n, pkt, n));
	pkt[2] |= 0x80;
	must(dns_answers_query(pkt, n, pkt, n));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 1500) /* netd's and the stub's receive buffers */
		return 0;
	int n = (int)size;
	/* the guest's question, as the stub reads it */
	char name[256];
	memset(name, 0x5a, sizeof name);
	int qtype = 0, qclass = 0;
	int qend = dns_parse_question(data, n, name, sizeof name, &qtype, &qclass);
	if (qend >= 0) {
		must(qend <= n && qend >= 12 + 2 + 4);
		size_t len = strnlen(name, sizeof name);
		must(len > 0 && len < sizeof name);
		must(name[0] != '.' && name[len - 1] != '.' && !strstr(name, ".."));
		for (size_t i = 0; i < len; i++)
			must(!(name[i] >= 'A' && name[i] <= 'Z'));
		/* netd asks A or AAAA of the host's nameserver for it */
		uint16_t id = (uint16_t)(data[0] << 8 | data[1]);
		for (int qt = 1; qt <= 28; qt += 27) {
			query_of(name, id, qt);
			/* the input as the answer to that query */
			uint8_t pkt[512];
			int qn = dns_build_query(pkt, (int)sizeof pkt, id, name, qt);
			if (qn && dns_answers_query(data, n, pkt, qn))
				answers(data, n, qn);
		}
	}
	/* any answer section, wherever the names end */
	int off = dns_skip_name(data, n, 12);
	if (off >= 0) {
		must(off > 12 && off <= n);
		answers(data, n, off + 4);
	}
	for (int o = 0; o < n && o < 64; o++) {
		int e = dns_skip_name(data, n, o);
		must(e < 0 || (e > o && e <= n));
	}
	answers(data, n, 12);
	/* the input as a name the sentry hands netd (up to 255 bytes) */
	char raw[256];
	size_t rl = size < sizeof raw - 1 ? size : sizeof raw - 1;
	memcpy(raw, data, rl);
	raw[rl] = 0;
	query_of(raw, 0x1234, size && (data[0] & 1) ? 28 : 1);
	return 0;
}
