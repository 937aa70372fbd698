/* sentry/brokerhttp.c - the byte transforms of moat-broker (see broker.h).
 *
 * Outbound (the guest's requests): HTTP/1.x framing. A header block (request
 * line to the empty line) is gathered whole, checked (a request line ending
 * in HTTP/1.0 or HTTP/1.1, header lines NAME: VALUE, no obs-fold, at most one
 * Content-Length value, Transfer-Encoding ending in chunked if given) and
 * only then are the placeholders in its header field values (never the
 * request line, a field name or the Host) replaced by the values (same length: no framing changes). A secret whose HOST is a name goes only into a block
 * whose Host header names it. The body is passed unchanged, skipped by
 * Content-Length or chunked framing; then the next request's header block.
 * Anything that cannot be framed (not HTTP/1.x from the first bytes, an
 * oversized or malformed block, another transfer coding, CONNECT or
 * Upgrade) turns the connection to passing bytes unchanged for good: the
 * placeholder then reaches upstream as itself, which is harmless.
 *
 * Inbound (responses): every literal occurrence of a value becomes the
 * placeholder (same length). The tail after the last LF (at most the longest
 * value's length - 1, whatever it holds: scrub) is held until the next bytes
 * decide; the responses are framed too (status, HEAD, 1xx, 204,
 * 304, Content-Length, chunked) so that the held tail is let go at the end
 * of each message: a client waiting for a response's last bytes is never kept
 * waiting by the hold (a header block and a chunked body end in LF, which no
 * value contains; a Content-Length body may end in anything).
 */
#include "sentry/broker.h"
#include "common/util.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void bk_buf_put(struct bk_buf *b, const void *d, size_t n)
{
	if (!n)
		return;
	if (b->len + n > b->cap) {
		size_t c = b->cap ? b->cap : 4096;
		while (c < b->len + n)
			c *= 2;
		uint8_t *np = xmalloc(c);
		if (b->len)
			memcpy(np, b->p, b->len);
		if (b->p)
			memset(b->p, 0, b->cap); /* it may have held a value */
		free(b->p);
		b->p = np;
		b->cap = c;
	}
	memcpy(b->p + b->len, d, n);
	b->len += n;
}

void bk_buf_free(struct bk_buf *b)
{
	free(b->p);
	memset(b, 0, sizeof *b);
}

/* ---- header blocks ---- */

struct hdr_info {
	int bad;              /* not a block we understand */
	int64_t clen;         /* -1: none */
	int chunked;          /* Transfer-Encoding ends in chunked */
	int te_other;         /* a Transfer-Encoding not ending in chunked */
	int upgrade;          /* an Upgrade header */
	int expect;           /* an Expect header */
	int nte;              /* Transfer-Encoding lines */
	int req_bad;          /* framing a request may not have (a response may) */
	const uint8_t *host;  /* the Host value (trimmed), NULL if none */
	size_t hostlen;
	int nhost;
};

static int tchar(int c)
{
	return isalnum(c) || strchr("!#$%&'*+-.^_`|~", c);
}

/* The lines after the first of a header block [p, p+n) (ending in the empty
 * line). */
static void parse_fields(const uint8_t *p, size_t n, struct hdr_info *h)
{
	memset(h, 0, sizeof *h);
	h->clen = -1;
	const uint8_t *e = p + n, *l = memchr(p, '\n', n);
	if (!l) {
		h->bad = 1;
		return;
	}
	for (l++; l < e;) {
		const uint8_t *nl = memchr(l, '\n', (size_t)(e - l));
		if (!nl)
			break;
		size_t ll = (size_t)(nl - l);
		if (ll && l[ll - 1] == '\r')
			ll--;
		if (!ll)
			break; /* the empty line */
		if (memchr(l, '\r', ll) || memchr(l, 0, ll)) {
			/* a bare CR (a line end to some servers: RFC 9112 2.2)
			 * or a NUL: the upstream may read other lines */
			h->bad = 1;
			return;
		}
		if (l[0] == ' ' || l[0] == '\t') {
			h->bad = 1; /* obs-fold */
			return;
		}
		size_t k = 0;
		while (k < ll && tchar(l[k]))
			k++;
		if (!k || k >= ll || l[k] != ':') {
			h->bad = 1;
			return;
		}
		const uint8_t *v = l + k + 1, *ve = l + ll;
		while (v < ve && (*v == ' ' || *v == '\t'))
			v++;
		while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t'))
			ve--;
		size_t vl = (size_t)(ve - v);
		if (k == 14 && !strncasecmp((const char *)l, "content-length", 14)) {
			/* digits, and several values (or lines) must agree */
			int64_t x = 0;
			size_t i = 0;
			if (!vl)
				h->bad = 1;
			if (vl > 1 && v[0] == '0')
				h->req_bad = 1; /* leading zeros: octal to a strtol(.., 0) reader */
			for (; i < vl && isdigit(v[i]); i++) {
				if (x > (INT64_MAX - 9) / 10) {
					h->bad = 1;
					break;
				}
				x = x * 10 + (v[i] - '0');
			}
			if (i != vl || (h->clen >= 0 && h->clen != x))
				h->bad = 1;
			h->clen = x;
		} else if (k == 17 && !strncasecmp((const char *)l, "transfer-encoding", 17)) {
			/* the last coding counts; it must be chunked */
			const uint8_t *last = v;
			for (const uint8_t *c = v; c < ve; c++)
				if (*c == ',')
					last = c + 1;
			while (last < ve && (*last == ' ' || *last == '\t'))
				last++;
			int ch = (size_t)(ve - last) == 7 && !strncasecmp((const char *)last, "chunked", 7);
			h->chunked = ch;
			h->te_other = !ch;
			/* a request: one line, one coding. "gzip, chunked" is
			 * chunked to RFC 9112, but a reader of the first line
			 * of two, or of the first coding, sees another (no
			 * body, or until close): its "body" is a request
			 * (broker2). A response keeps the RFC's reading: it is
			 * re-chunked, never passed raw (red team 56) */
			if (h->nte++ || vl != 7 || strncasecmp((const char *)v, "chunked", 7))
				h->req_bad = 1;
		} else if (k == 7 && !strncasecmp((const char *)l, "upgrade", 7)) {
			h->upgrade = 1;
		} else if (k == 6 && !strncasecmp((const char *)l, "expect", 6)) {
			h->expect = 1;
		} else if (k == 4 && !strncasecmp((const char *)l, "host", 4)) {
			h->host = v;
			h->hostlen = vl;
			h->nhost++;
		}
		l = nl + 1;
	}
	if ((h->chunked || h->te_other) && h->clen >= 0)
		h->bad = 1; /* both framings: RFC 9112 6.3 says Transfer-Encoding
			     * wins, an upstream that reads Content-Length
			     * instead sees another next request (smuggling:
			     * a value in what it takes for another Host's
			     * body). Forwarded as is, never substituted. */
}

/* Where the header block in [p, p+n) ends (just past its empty line), or 0. */
static size_t block_end(const uint8_t *p, size_t n, size_t from)
{
	for (size_t i = from; i < n; i++) {
		if (p[i] != '\n' || i == 0)
			continue;
		if (p[i - 1] == '\n')
			return i + 1;
		if (p[i - 1] == '\r' && i >= 2 && p[i - 2] == '\n')
			return i + 1;
	}
	return 0;
}

/* Could [p, p+n) still begin an HTTP/1.x request? -1 no, 0 undecided, 1 the
 * request line is whole and good. *method: 1 HEAD, 2 CONNECT, 0 other. */
static int request_line(const uint8_t *p, size_t n, int *method)
{
	size_t k = 0;
	while (k < n && k < 24 && isupper(p[k]))
		k++;
	if (k == n)
		return k < 24 ? 0 : -1;
	if (!k || p[k] != ' ')
		return -1;
	const uint8_t *nl = memchr(p, '\n', n);
	if (!nl)
		return n < 16384 ? 0 : -1;
	size_t ll = (size_t)(nl - p);
	if (ll && p[ll - 1] == '\r')
		ll--;
	if (ll < k + 10 || (memcmp(p + ll - 9, " HTTP/1.1", 9) && memcmp(p + ll - 9, " HTTP/1.0", 9)))
		return -1;
	for (size_t i = 0; i < ll; i++)
		if (p[i] < 0x20 || p[i] == 0x7f)
			return -1;
	*method = (k == 4 && !memcmp(p, "HEAD", 4)) ? 1 : (k == 7 && !memcmp(p, "CONNECT", 7)) ? 2 : 0;
	return 1;
}

/* [p, e) is a port: digits only (maybe none) */
static int port_only(const uint8_t *p, const uint8_t *e)
{
	for (; p < e; p++)
		if (!isdigit(*p))
			return 0;
	return 1;
}

/* Does the Host value name host (a name, case-insensitive; a port after ':'
 * is ignored)? */
static int host_is(const struct hdr_info *h, const char *host)
{
	if (h->nhost != 1)
		return 0;
	size_t l = h->hostlen;
	const uint8_t *c = memchr(h->host, ':', l);
	if (c) {
		l = (size_t)(c - h->host);
		if (!port_only(c + 1, h->host + h->hostlen))
			return 0; /* "api:x@evil": not a port, a server may read evil */
	}
	if (l && h->host[l - 1] == '.')
		l--;
	return l == strlen(host) && !strncasecmp((const char *)h->host, host, l);
}

/* Does the request target of the block's first line leave the Host header
 * its say? Origin-form ("/...") and "*" do; absolute-form ("http://A/...")
 * names the host itself, and RFC 9112 3.2.2 has the server ignore Host
 * then: A must name host too (no userinfo). Anything else does not. */
static int target_is(const uint8_t *p, size_t n, const char *host)
{
	const uint8_t *nl = memchr(p, '\n', n);
	if (!nl)
		return 0;
	const uint8_t *t = memchr(p, ' ', (size_t)(nl - p));
	if (!t)
		return 0;
	t++;
	const uint8_t *te = t;
	for (const uint8_t *c = t; c < nl; c++)
		if (*c == ' ')
			te = c;
	size_t tl = (size_t)(te - t);
	if (tl && t[0] == '/')
		return 1;
	if (tl == 1 && t[0] == '*')
		return 1;
	size_t skip = tl >= 7 && !strncasecmp((const char *)t, "http://", 7)	 ? 7 :
		      tl >= 8 && !strncasecmp((const char *)t, "https://", 8) ? 8 :
										 0;
	if (!skip)
		return 0;
	const uint8_t *a = t + skip, *ae = a;
	while (ae < te && *ae != '/' && *ae != '?' && *ae != '#')
		ae++;
	if (memchr(a, '@', (size_t)(ae - a)))
		return 0;
	size_t l = (size_t)(ae - a);
	const uint8_t *c = memchr(a, ':', l);
	if (c) {
		l = (size_t)(c - a);
		if (!port_only(c + 1, ae))
			return 0;
	}
	if (l && a[l - 1] == '.')
		l--;
	return l == strlen(host) && !strncasecmp((const char *)a, host, l);
}

static void replace_all(uint8_t *p, size_t n, const char *from, const char *to, size_t len)
{
	if (len > n)
		return;
	for (size_t i = 0; i + len <= n;) {
		uint8_t *m = memmem(p + i, n - i, from, len);
		if (!m)
			break;
		memcpy(m, to, len);
		i = (size_t)(m - p) + len;
	}
}

/* The placeholders of s in the field values of the header block [p, p+n)
 * (parse_fields has checked its lines): how many, and replaced by the value
 * when subst. Never in the request line, a field name or the Host field: an
 * upstream transforms what it reflects of those — Node's req.headers
 * lowercases the names, WSGI's environ upper-cases them (HTTP_X_...), Go
 * canonicalizes them, nginx's $host is lower case —, and the inbound scrub
 * matches the value's literal bytes: a guest that sent the placeholder as
 * a header name (or as the Host, the secret's HOST an address) read the
 * value back from such a reflection, lower-cased (red team 77). A
 * credential goes in a field's value. */
static int field_values(uint8_t *p, size_t n, const struct broker_secret *s, int subst)
{
	int hits = 0;
	uint8_t *e = p + n, *l = memchr(p, '\n', n);
	for (l = l ? l + 1 : e; l < e;) {
		uint8_t *nl = memchr(l, '\n', (size_t)(e - l));
		if (!nl)
			break;
		uint8_t *c = memchr(l, ':', (size_t)(nl - l));
		if (c && !((size_t)(c - l) == 4 && !strncasecmp((const char *)l, "host", 4))) {
			for (uint8_t *v = c + 1; (size_t)(nl - v) >= s->len;) {
				uint8_t *m = memmem(v, (size_t)(nl - v), s->placeholder, s->len);
				if (!m)
					break;
				hits++;
				if (subst)
					memcpy(m, s->value, s->len);
				v = m + s->len;
			}
		}
		l = nl + 1;
	}
	return hits;
}

/* ---- chunked bodies (both directions): 1 = a message ended at this byte ---- */

static int chunk_byte(int *mode, uint64_t *left, size_t *line, uint64_t *chunk, int *ok, uint8_t c, int strict)
{
	/* *ok in a size line: 0 nothing yet, 1 size digits, 2 an extension,
	 * 3 blanks after the size, 4 a CR (the LF must follow: a bare CR is a
	 * line end to some readers, broker2). strict: a request's (the
	 * upstream must read it as moat-broker does); a response's framing
	 * is read as before (not strict: a lenient upstream's answer stays
	 * re-chunked, never raw) */
	switch (*mode) {
	case BK_CHUNK_SIZE:
		if (*ok == 4 && c != '\n') {
			if (strict) {
				*mode = BK_PASS;
				return 0;
			}
			*ok = 2; /* as an extension */
		}
		if (c == '\n') {
			if (!*ok) {
				*mode = BK_PASS;
				return 0;
			}
			*mode = *chunk ? BK_CHUNK_DATA : BK_TRAILER;
			*left = *chunk;
			*line = 0;
			*ok = 0;
			return 0;
		}
		if (c == '\r') {
			if (!*ok)
				*mode = BK_PASS; /* the size comes first */
			*ok = 4;
			return 0;
		}
		if (strict && ((c < 0x20 && c != '\t') || c == 0x7f)) {
			*mode = BK_PASS; /* a NUL, a control: no reader agrees */
			return 0;
		}
		if (*ok == 3) {
			/* after the size and blanks only an extension: "1 0"
			 * is size 1 here, 0x10 or an error upstream */
			if (c == ';')
				*ok = 2;
			else if (c != ' ' && c != '\t')
				*mode = BK_PASS;
		} else if (*ok < 2 && isxdigit(c)) {
			/* at most 16 digits and 31 bits: a reader that keeps
			 * 32 bits takes "100000000" for the last chunk, its
			 * data for the next request (broker2) */
			if (strict ? *line >= 16 || *chunk > (0x7fffffffu >> 4) : *chunk > (UINT64_MAX >> 8)) {
				*mode = BK_PASS;
				return 0;
			}
			*chunk = *chunk * 16 + (uint64_t)(isdigit(c) ? c - '0' : (tolower(c) - 'a' + 10));
			*ok = 1;
		} else if (!*ok) {
			*mode = BK_PASS; /* the size comes first */
			return 0;
		} else if (*ok == 1 && (c == ' ' || c == '\t')) {
			*ok = 3; /* blanks after the size (BWS before ';') */
		} else if (*ok == 1 && c != ';') {
			*mode = BK_PASS; /* "1x": not a size any reader agrees on */
			return 0;
		} else if (*ok != 2) {
			*ok = 2; /* extensions after the size: ignored */
		}
		if (++*line > 4096)
			*mode = BK_PASS;
		return 0;
	case BK_CHUNK_END: /* CRLF after the data, exactly (a reader may skip 2 bytes) */
		if (c == '\n' && *line == 1) {
			*mode = BK_CHUNK_SIZE;
			*chunk = 0;
			*ok = 0;
			*line = 0;
		} else if (c == '\r' && (*line == 0 || !strict)) {
			*line = 1;
		} else if (c == '\n' && !strict) {
			*mode = BK_CHUNK_SIZE;
			*chunk = 0;
			*ok = 0;
			*line = 0;
		} else {
			*mode = BK_PASS;
		}
		return 0;
	case BK_TRAILER: /* lines until an empty one; a CR only before LF */
		if (*ok == 4 && c != '\n' && strict) {
			*mode = BK_PASS;
			return 0;
		}
		*ok = 0;
		if (c == '\n') {
			if (*line == 0)
				return 1;
			*line = 0;
		} else if (c == '\r') {
			*ok = 4;
		} else if (c == 0 && strict) {
			*mode = BK_PASS;
		} else {
			(*line)++;
			if (*line > BROKER_HDR_MAX)
				*mode = BK_PASS;
		}
		return 0;
	default:
		return 0;
	}
}

/* ---- outbound ---- */

void bk_out_init(struct bk_out *o, const struct broker_secret *sec, uint32_t mask)
{
	memset(o, 0, sizeof *o);
	o->sec = sec;
	o->mask = mask;
	o->hdr = xmalloc(BROKER_HDR_MAX);
	o->mode = BK_HDR;
}

void bk_out_free(struct bk_out *o)
{
	free(o->hdr);
	o->hdr = NULL;
}

static void out_event(struct bk_out *o, int kind, uint32_t mask, const uint8_t *what, size_t n)
{
	if (o->nev >= BK_MAX_EVENTS) {
		o->ev_lost++;
		return;
	}
	struct bk_event *e = &o->ev[o->nev++];
	memset(e, 0, sizeof *e);
	e->kind = kind;
	e->mask = mask;
	size_t k = 0;
	for (; k < n && k < sizeof e->what - 1 && what[k] != '\r' && what[k] != '\n'; k++)
		e->what[k] = what[k] >= 0x20 && what[k] < 0x7f ? (char)what[k] : '?';
}

static void out_pass_why(struct bk_out *o, struct bk_buf *out, const char *why)
{
	if (o->mode != BK_PASS)
		out_event(o, BK_EV_UNFRAMED, o->mask, (const uint8_t *)why, strlen(why));
	bk_buf_put(out, o->hdr, o->hlen);
	o->hlen = 0;
	o->mode = BK_PASS;
	o->qlost = 1;
}

#define out_pass(o, out) out_pass_why(o, out, "not HTTP/1.x")

static void q_push(struct bk_out *o, uint8_t m)
{
	if (o->qtail - o->qhead >= sizeof o->q) {
		o->qlost = 1;
		return;
	}
	o->q[o->qtail++ % sizeof o->q] = m;
}

/* A block that carries a value asks for no content or transfer coding:
 * its Accept-Encoding and TE field names become X-Moat-Encoding and XT
 * (same length; an upstream ignores them and answers in identity). The
 * inbound scrub matches a value's literal bytes: a reflection the guest
 * asked to have compressed passed it (red team 20: a 404 naming the request
 * target, gzip'ed; a reflected header the same way). Nor a part of the
 * answer, nor another charset (red team 77): Range becomes X-Rng (a server
 * honouring it on a reflection gave the value in two answers cut where the
 * guest chose, neither holding it whole) and Accept-Charset X-Moat-Charset
 * (UTF-16 has none of the value's bytes in a row). */
static void no_codings(uint8_t *p, size_t n)
{
	uint8_t *e = p + n, *l = memchr(p, '\n', n);
	for (l = l ? l + 1 : e; l < e;) {
		uint8_t *nl = memchr(l, '\n', (size_t)(e - l));
		if (!nl)
			break;
		size_t ll = (size_t)(nl - l);
		if (ll >= 16 && !strncasecmp((const char *)l, "accept-encoding:", 16))
			memcpy(l, "X-Moat-Encoding", 15);
		else if (ll >= 3 && !strncasecmp((const char *)l, "te:", 3))
			memcpy(l, "XT", 2);
		else if (ll >= 15 && !strncasecmp((const char *)l, "accept-charset:", 15))
			memcpy(l, "X-Moat-Charset", 14);
		else if (ll >= 6 && !strncasecmp((const char *)l, "range:", 6))
			memcpy(l, "X-Rng", 5);
		l = nl + 1;
	}
}

/* Is the request line's method one a server may take a body of as the
 * next request? */
static int no_body_method(const uint8_t *p, size_t n)
{
	static const char *const m[] = { "GET ", "HEAD ", "DELETE ", "OPTIONS ", "TRACE " };
	for (size_t i = 0; i < sizeof m / sizeof m[0]; i++)
		if (n >= strlen(m[i]) && !memcmp(p, m[i], strlen(m[i])))
			return 1;
	return 0;
}

/* A whole header block is in o->hdr[0, o->hlen). */
static void out_block(struct bk_out *o, int method, struct bk_buf *out)
{
	struct hdr_info h;
	parse_fields(o->hdr, o->hlen, &h);
	if (o->stop) {
		out_pass_why(o, out, o->stop);
		return;
	}
	if (o->expect == 1) {
		/* the one before expects 100-continue and has no answer yet:
		 * whether its body is read (100) or not (a final status)
		 * decides what these bytes are to the upstream (broker2) */
		out_pass_why(o, out, "a request after one expecting 100-continue, unanswered");
		return;
	}
	if (h.bad || h.te_other || h.req_bad) {
		out_pass_why(o, out, h.bad || h.req_bad ? "a header block it cannot read" : "a transfer coding other than chunked");
		return;
	}
	/* Transfer-Encoding in an HTTP/1.0 request: faulty framing (RFC 9112
	 * 6.1), which an upstream may read as no body and the chunk-size line
	 * as the next request line (absolute-form, another virtual host), the
	 * chunk as its headers and the next block, a value put in, as its
	 * body (red team 56). Forwarded as is, never substituted. */
	const uint8_t *rl = memchr(o->hdr, '\n', o->hlen);
	size_t rll = rl ? (size_t)(rl - o->hdr) : 0;
	if (rll && o->hdr[rll - 1] == '\r')
		rll--;
	if (h.chunked && rll >= 9 && !memcmp(o->hdr + rll - 9, " HTTP/1.0", 9)) {
		out_pass_why(o, out, "Transfer-Encoding in an HTTP/1.0 request");
		return;
	}
	/* the header fields only, never the request line: a value put in
	 * the request target is one the upstream reflects at will (a 404's
	 * "no route /v1/<target>", gzip'ed at the guest's Accept-Encoding,
	 * reached the guest whole: red team 20); --secret's values go in
	 * request header field values (not a name, not the Host:
	 * field_values, red team 77) */
	uint32_t done = 0, nohost = 0;
	for (int i = 0; i < BROKER_MAX_SECRETS; i++) {
		const struct broker_secret *s = &o->sec[i];
		if (!(o->mask & (1u << i)) || !s->len || !field_values(o->hdr, o->hlen, s, 0))
			continue;
		if (s->host[0] && (!host_is(&h, s->host) || !target_is(o->hdr, o->hlen, s->host))) {
			nohost |= 1u << i;
			continue;
		}
		done |= 1u << i;
	}
	/* the events carry the request line as the guest sent it */
	if (nohost)
		out_event(o, BK_EV_NOHOST, nohost, o->hdr, o->hlen);
	if (done)
		out_event(o, BK_EV_SUBST, done, o->hdr, o->hlen);
	for (int i = 0; i < BROKER_MAX_SECRETS; i++) {
		const struct broker_secret *s = &o->sec[i];
		if (done & (1u << i)) {
			field_values(o->hdr, o->hlen, s, 1);
			o->substituted++;
		}
	}
	if (done)
		no_codings(o->hdr, o->hlen);
	int body_ignored = (h.chunked || h.clen > 0) && no_body_method(o->hdr, o->hlen);
	bk_buf_put(out, o->hdr, o->hlen);
	o->hlen = 0;
	q_push(o, (uint8_t)method);
	o->expect = 0;
	if (h.expect && (h.chunked || h.clen > 0)) {
		o->expect = 1;
		o->expect_idx = o->qtail - 1;
	}
	/* a body on a method whose body many servers never read (RFC 9110
	 * gives it no meaning on GET, HEAD, DELETE, OPTIONS; TRACE has none):
	 * Python's http.server in do_GET, and others, answer and take the body
	 * for the next request — another Host, a Content-Length that takes in
	 * the next block, the value put in, as its body (red team 77).
	 * This block is substituted (it comes before the body), none after it
	 * on the connection */
	if (body_ignored)
		o->stop = "a body on a GET, HEAD, DELETE, OPTIONS or TRACE request (the upstream may not read it)";
	if (method == 2 || h.upgrade) {
		const char *why = method == 2 ? "CONNECT: another protocol follows" : "Upgrade: another protocol follows";
		out_event(o, BK_EV_UNFRAMED, o->mask, (const uint8_t *)why, strlen(why));
		o->mode = BK_PASS; /* another protocol follows */
		o->qlost = 1;
	} else if (h.chunked) {
		o->mode = BK_CHUNK_SIZE;
		o->chunk = 0;
		o->chunk_ok = 0;
		o->line = 0;
	} else if (h.clen > 0) {
		o->mode = BK_BODY;
		o->left = (uint64_t)h.clen;
	} else {
		o->mode = BK_HDR; /* a request without either has no body */
	}
}

void bk_out_feed(struct bk_out *o, const uint8_t *in, size_t n, struct bk_buf *out)
{
	if (o->stop && o->mode != BK_PASS)
		out_pass_why(o, out, o->stop);
	while (n) {
		if (o->mode == BK_PASS) {
			bk_buf_put(out, in, n);
			return;
		}
		if (o->mode == BK_BODY || o->mode == BK_CHUNK_DATA) {
			size_t k = o->left < n ? (size_t)o->left : n;
			bk_buf_put(out, in, k);
			in += k, n -= k;
			if ((o->left -= k) == 0)
				o->mode = o->mode == BK_BODY ? BK_HDR : BK_CHUNK_END;
			continue;
		}
		if (o->mode != BK_HDR) { /* chunk framing bytes: passed, parsed */
			int end = chunk_byte(&o->mode, &o->left, &o->line, &o->chunk, &o->chunk_ok, *in, 1);
			bk_buf_put(out, in, 1);
			in++, n--;
			if (end)
				o->mode = BK_HDR;
			if (o->mode == BK_PASS) {
				static const char why[] = "chunked framing it cannot read";
				out_event(o, BK_EV_UNFRAMED, o->mask, (const uint8_t *)why, sizeof why - 1);
				o->qlost = 1;
			}
			continue;
		}
		/* BK_HDR: gather up to the end of the block */
		if (o->hlen == 0 && (*in == '\r' || *in == '\n')) {
			bk_buf_put(out, in, 1); /* stray line ends between requests */
			in++, n--;
			continue;
		}
		size_t room = BROKER_HDR_MAX - o->hlen, k = n < room ? n : room;
		size_t from = o->hlen ? o->hlen - 1 : 0;
		memcpy(o->hdr + o->hlen, in, k);
		o->hlen += k;
		int method = 0, rl = request_line(o->hdr, o->hlen, &method);
		if (rl < 0) {
			out_pass(o, out);
			in += k, n -= k;
			continue;
		}
		size_t e = rl > 0 ? block_end(o->hdr, o->hlen, from > 2 ? from - 2 : 0) : 0;
		if (!e) {
			in += k, n -= k;
			if (o->hlen == BROKER_HDR_MAX) /* too long to be ours to read */
				out_pass_why(o, out, "a header block over 64 KiB");
			continue;
		}
		/* the block ends inside what was just copied: the rest is the body */
		size_t extra = o->hlen - e;
		o->hlen = e;
		in += k - extra, n -= k - extra;
		out_block(o, method, out);
	}
}

void bk_out_eof(struct bk_out *o, struct bk_buf *out)
{
	if (o->mode == BK_HDR && o->hlen)
		out_pass_why(o, out, "the stream ended inside a header block");
}

/* ---- inbound ---- */

void bk_in_init(struct bk_in *i, const struct broker_secret *sec, uint32_t mask, struct bk_out *req)
{
	memset(i, 0, sizeof *i);
	i->sec = sec;
	i->mask = mask;
	i->req = req;
	i->hdr = xmalloc(BROKER_HDR_MAX);
	i->mode = BK_HDR;
}

void bk_in_free(struct bk_in *i)
{
	free(i->hdr);
	i->hdr = NULL;
	memset(i->held, 0, sizeof i->held);
}

/* Scrub [p, p+n) (a work buffer: the held tail, then new bytes) in place;
 * send all of it when flush, else all but the tail that could still be the
 * start of a value split across reads (kept in held): every byte after the
 * last LF (no value holds one), at most the longest value's length - 1,
 * *whatever those bytes are*. The hold must not depend on the values: an
 * upstream that echoes the guest's bytes (an echo service, a websocket chat)
 * made it an oracle. Before red team 20 only a tail that begins a value was
 * held (and its idle release was the placeholder's bytes): the guest sent
 * "\n" + a guess and saw its echo come back short, then as other bytes,
 * exactly when the guess began the value, and so read a 32-byte value one
 * byte at a time in 40 s. Now a guess that begins the value and one that
 * does not are held alike and come back alike (a whole value still becomes
 * the placeholder: that is the scrubbing, and needs the whole value). */
static void scrub(struct bk_in *i, uint8_t *p, size_t n, int flush, struct bk_buf *out)
{
	size_t hold = 0, longest = 0;
	for (int k = 0; k < BROKER_MAX_SECRETS; k++) {
		const struct broker_secret *s = &i->sec[k];
		if (!(i->mask & (1u << k)) || !s->len)
			continue;
		replace_all(p, n, s->value, s->placeholder, s->len);
		if (s->len > longest)
			longest = s->len;
	}
	if (!flush && longest) {
		size_t max = longest - 1 < n ? longest - 1 : n;
		while (hold < max && p[n - hold - 1] != '\n')
			hold++;
	}
	bk_buf_put(out, p, n - hold);
	memcpy(i->held, p + n - hold, hold);
	i->nheld = hold;
}

/* Pass [in, in+n) through the scrubber; flush at its end (a message ended). */
static void in_bytes(struct bk_in *i, const uint8_t *in, size_t n, int flush, struct bk_buf *out)
{
	if (!n && !flush)
		return;
	if (!i->mask) {
		bk_buf_put(out, in, n);
		return;
	}
	size_t w = i->nheld + n;
	uint8_t *p = xmalloc(w ? w : 1);
	memcpy(p, i->held, i->nheld);
	if (n)
		memcpy(p + i->nheld, in, n);
	scrub(i, p, w, flush, out);
	memset(p, 0, w);
	free(p);
}

/* A chunked response's body, re-chunked: its data bytes are one stream to
 * the scrubber (the hold carries across the upstream's chunk framing, which
 * is dropped), and what the scrubber lets go is sent as a chunk of its own.
 * Scrubbing the raw bytes missed a value cut by the upstream's framing
 * ("...sk-VA\r\n40\r\nLUE..."), which the guest's client joins again: a
 * server that reflects the request headers in 64-byte chunks gave the guest
 * the value whole, the guest choosing where the cut falls by the length of a
 * header before it (red team 56). Never a chunk of size 0 but the last. */
static void in_chunk(struct bk_in *i, const uint8_t *in, size_t n, int flush, struct bk_buf *out)
{
	struct bk_buf t = { 0 };
	in_bytes(i, in, n, flush, &t);
	if (t.len) {
		char h[24];
		int hl = snprintf(h, sizeof h, "%zx\r\n", t.len);
		bk_buf_put(out, h, (size_t)hl);
		bk_buf_put(out, t.p, t.len);
		bk_buf_put(out, "\r\n", 2);
		explicit_bzero(t.p, t.len);
	}
	bk_buf_free(&t);
}

static int q_pop(struct bk_in *i)
{
	struct bk_out *o = i->req;
	if (!o || o->qlost || o->qhead == o->qtail)
		return o && o->qlost ? -1 : 0;
	return o->q[o->qhead++ % sizeof o->q];
}

/* A whole response header block is in i->hdr[0, i->hlen). */
static void in_block(struct bk_in *i)
{
	const uint8_t *p = i->hdr;
	size_t n = i->hlen;
	i->hlen = 0;
	if (n < 12 || memcmp(p, "HTTP/1.", 7) || !isdigit(p[9]) || !isdigit(p[10]) || !isdigit(p[11])) {
		i->mode = BK_PASS;
		return;
	}
	int status = (p[9] - '0') * 100 + (p[10] - '0') * 10 + (p[11] - '0');
	struct hdr_info h;
	parse_fields(p, n, &h);
	struct bk_out *o = i->req;
	if (status >= 100 && status < 200 && status != 101) {
		i->mode = BK_HDR; /* an interim response: the real one follows */
		if (status == 100 && o && o->expect == 1 && !o->qlost && o->qhead == o->expect_idx)
			o->expect = 2; /* the body will be read */
		return;
	}
	/* Expect: 100-continue answered by a final status with no 100, or
	 * any final answer to the request whose body is still being sent:
	 * the upstream may not read that body, and the guest's next bytes
	 * (its "body") may be a request to it. Nothing more is substituted
	 * on the connection (broker2: a 417 or an early 401 from a server
	 * that keeps the connection took the body for a request to another
	 * Host, with a Content-Length taking in the next block, a value put
	 * in) */
	if (o && o->mode != BK_PASS) {
		int last = o->qlost || o->qhead + 1 == o->qtail;
		int inbody = o->mode != BK_HDR;
		if (o->expect && (o->qlost || o->qhead == o->expect_idx)) {
			if (o->expect == 1)
				o->stop = "a final answer, no 100 Continue, to a request expecting it";
			o->expect = 0;
		}
		if (last && inbody)
			o->stop = "an answer before the request's body was all sent";
	}
	int m = q_pop(i);
	if (m < 0 || status == 101 || (m == 2 && status / 100 == 2) || h.bad || h.te_other) {
		i->mode = BK_PASS;
		return;
	}
	if (m == 1 || status == 204 || status == 304) {
		i->mode = BK_HDR;
	} else if (h.chunked) {
		i->mode = BK_CHUNK_SIZE;
		i->chunk = 0;
		i->chunk_ok = 0;
		i->line = 0;
	} else if (h.clen >= 0) {
		i->mode = h.clen ? BK_BODY : BK_HDR;
		i->left = (uint64_t)h.clen;
	} else {
		i->mode = BK_CLOSE; /* until the end of the stream */
	}
}

void bk_in_feed(struct bk_in *i, const uint8_t *in, size_t n, struct bk_buf *out)
{
	if (!i->mask) { /* no secret on this connection: passed as it came */
		bk_buf_put(out, in, n);
		return;
	}
	/* the framing only decides where messages end (flush points) */
	size_t seg = 0; /* bytes of in not yet scrubbed */
	const uint8_t *start = in;
	while (n) {
		int end = 0;
		size_t k = 1;
		if (i->mode == BK_CHUNK_SIZE || i->mode == BK_CHUNK_DATA || i->mode == BK_CHUNK_END) {
			/* a chunked body: re-chunked (in_chunk); what came
			 * before it (its header block, ending in LF) goes first */
			if (seg)
				in_bytes(i, start, seg, 1, out);
			seg = 0;
			if (i->mode == BK_CHUNK_DATA) {
				k = i->left < n ? (size_t)i->left : n;
				in_chunk(i, in, k, 0, out);
				if ((i->left -= k) == 0)
					i->mode = BK_CHUNK_END;
			} else {
				/* a framing byte: parsed, not sent */
				chunk_byte(&i->mode, &i->left, &i->line, &i->chunk, &i->chunk_ok, *in, 0);
				if (i->mode == BK_TRAILER || i->mode == BK_PASS)
					in_chunk(i, NULL, 0, 1, out); /* the data's held tail */
				if (i->mode == BK_TRAILER)
					bk_buf_put(out, "0\r\n", 3); /* then the trailers as sent */
			}
			in += k, n -= k;
			start = in;
			continue;
		}
		switch (i->mode) {
		case BK_PASS:
		case BK_CLOSE:
			k = n;
			break;
		case BK_BODY:
			k = i->left < n ? (size_t)i->left : n;
			if ((i->left -= k) == 0)
				end = 1, i->mode = BK_HDR;
			break;
		case BK_HDR: {
			size_t from = i->hlen ? i->hlen - 1 : 0;
			size_t room = BROKER_HDR_MAX - i->hlen;
			k = n < room ? n : room;
			memcpy(i->hdr + i->hlen, in, k);
			i->hlen += k;
			size_t cmp = i->hlen < 7 ? i->hlen : 7;
			if (memcmp(i->hdr, "HTTP/1.", cmp)) {
				i->mode = BK_PASS; /* not an HTTP/1.x response */
				i->hlen = 0;
				break;
			}
			size_t e = block_end(i->hdr, i->hlen, from > 2 ? from - 2 : 0);
			if (e) {
				k -= i->hlen - e;
				i->hlen = e;
				in_block(i);
				end = i->mode == BK_HDR; /* a message without a body */
			} else if (i->hlen == BROKER_HDR_MAX) {
				i->mode = BK_PASS;
			}
			break;
		}
		default:
			end = chunk_byte(&i->mode, &i->left, &i->line, &i->chunk, &i->chunk_ok, *in, 0);
			if (end)
				i->mode = BK_HDR;
			break;
		}
		in += k, n -= k, seg += k;
		if (end) {
			in_bytes(i, start, seg, 1, out);
			start = in;
			seg = 0;
		}
	}
	in_bytes(i, start, seg, 0, out);
}

void bk_in_eof(struct bk_in *i, struct bk_buf *out)
{
	if (i->mode == BK_CHUNK_SIZE || i->mode == BK_CHUNK_DATA || i->mode == BK_CHUNK_END)
		in_chunk(i, NULL, 0, 1, out); /* cut short: the held data, framed */
	else
		in_bytes(i, NULL, 0, 1, out);
}

int bk_in_idle(struct bk_in *i, struct bk_buf *out)
{
	/* not an HTTP answer read until close (BK_CLOSE): its tail waits for
	 * the next bytes or the end, as a Content-Length body's does — a
	 * remote HOST's pauses (slow start's round trips, a window the guest
	 * shrank) fall where the guest aims a reflected value, and the tail
	 * let go at one cut it (red team 77) */
	if (!i->nheld || i->mode != BK_PASS)
		return 0;
	/* an unframed stream (or one read until close) quiet with a held
	 * tail: the tail goes out as it came (not a whole value: it would
	 * have been replaced). Sent as the placeholder's bytes when it began
	 * a value, it told an echoing upstream's guest that it did (scrub) */
	bk_buf_put(out, i->held, i->nheld);
	memset(i->held, 0, sizeof i->held);
	i->nheld = 0;
	return 1;
}
