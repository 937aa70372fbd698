/* sentry/dnswire.c - the DNS wire format (dnswire.h). */
#include "sentry/dnswire.h"

#include <string.h>
#include <sys/socket.h>

int dns_parse_question(const uint8_t *p, int n, char *name, size_t cap, int *qtype, int *qclass)
{
	int off = 12;
	size_t w = 0;
	for (;;) {
		if (off >= n)
			return -1;
		uint8_t l = p[off++];
		if (l == 0)
			break;
		if (l > 63 || off + l > n || w + l + 2 > cap)
			return -1;
		if (w)
			name[w++] = '.';
		for (int i = 0; i < l; i++) {
			char ch = (char)p[off + i];
			if (ch >= 'A' && ch <= 'Z')
				ch = (char)(ch - 'A' + 'a');
			if (ch == 0 || ch == '.')
				return -1;
			name[w++] = ch;
		}
		off += l;
	}
	name[w] = 0;
	if (off + 4 > n || w == 0)
		return -1;
	*qtype = p[off] << 8 | p[off + 1];
	*qclass = p[off + 2] << 8 | p[off + 3];
	return off + 4;
}

int dns_skip_name(const uint8_t *p, int n, int off)
{
	for (int hops = 0; off < n && hops < 128; hops++) {
		uint8_t l = p[off];
		if (l == 0)
			return off + 1;
		if ((l & 0xc0) == 0xc0)
			return off + 2 <= n ? off + 2 : -1;
		if (l & 0xc0)
			return -1;
		off += 1 + l;
	}
	return -1;
}

int dns_build_query(uint8_t *pkt, int cap, uint16_t id, const char *name, int qtype)
{
	int n = 0;
	if (cap < 12)
		return 0;
	pkt[n++] = (uint8_t)(id >> 8);
	pkt[n++] = (uint8_t)id;
	pkt[n++] = 0x01; /* RD */
	pkt[n++] = 0;
	pkt[n++] = 0, pkt[n++] = 1; /* QDCOUNT */
	memset(pkt + n, 0, 6);
	n += 6;
	for (const char *l = name; *l;) {
		const char *dot = strchr(l, '.');
		size_t len = dot ? (size_t)(dot - l) : strlen(l);
		if (len == 0 || len > 63 || n + (int)len + 6 > cap)
			return 0;
		pkt[n++] = (uint8_t)len;
		memcpy(pkt + n, l, len);
		n += (int)len;
		l += len + (dot ? 1 : 0);
		if (!dot)
			break;
	}
	pkt[n++] = 0;
	pkt[n++] = 0, pkt[n++] = (uint8_t)qtype;
	pkt[n++] = 0, pkt[n++] = 1;
	return n;
}

int dns_answers_query(const uint8_t *ans, int got, const uint8_t *pkt, int n)
{
	return got >= 12 && n >= 12 && ans[0] == pkt[0] && ans[1] == pkt[1] && (ans[2] & 0x80) && got >= n &&
	       memcmp(ans + 12, pkt + 12, (size_t)(n - 12)) == 0;
}

void dns_answer_addrs(const uint8_t *ans, int got, int off, int qtype,
		      void (*fn)(void *arg, const struct netpol_addr *a, uint32_t ttl), void *arg)
{
	if (got < 12)
		return;
	int an = ans[6] << 8 | ans[7];
	for (int i = 0; i < an && off >= 0; i++) {
		off = dns_skip_name(ans, got, off);
		if (off < 0 || off + 10 > got)
			break;
		int type = ans[off] << 8 | ans[off + 1], cls = ans[off + 2] << 8 | ans[off + 3];
		uint32_t ttl = (uint32_t)ans[off + 4] << 24 | (uint32_t)ans[off + 5] << 16 |
			       (uint32_t)ans[off + 6] << 8 | ans[off + 7];
		int rdlen = ans[off + 8] << 8 | ans[off + 9];
		off += 10;
		if (off + rdlen > got)
			break;
		struct netpol_addr a;
		memset(&a, 0, sizeof a);
		if (cls == 1 && type == qtype && ((type == 1 && rdlen == 4) || (type == 28 && rdlen == 16))) {
			a.family = type == 1 ? AF_INET : AF_INET6;
			memcpy(a.a, ans + off, (size_t)rdlen);
			fn(arg, &a, ttl);
		}
		off += rdlen;
	}
}
