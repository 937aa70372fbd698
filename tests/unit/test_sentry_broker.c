/* tests/unit/test_sentry_broker.c - moat-broker's stream transforms
 * (sentry/brokerhttp.c): header-only substitution outbound, scrubbing
 * inbound, HTTP/1.x framing both ways. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sentry/broker.h"

#define VAL "sk-VALUE/0123456789+abcdef"
#define PH  "Ph4c3h0ld3rXXXXXXXXXXXXXXX"

static struct broker_secret sec[BROKER_MAX_SECRETS];

static void setup(void)
{
	memset(sec, 0, sizeof sec);
	cr_assert_eq(strlen(VAL), strlen(PH));
	strcpy(sec[0].name, "KEY");
	sec[0].len = strlen(VAL);
	memcpy(sec[0].value, VAL, sec[0].len);
	memcpy(sec[0].placeholder, PH, sec[0].len);
}

/* Run s through the outbound transform in pieces of step bytes (0: whole);
 * the result as a NUL-terminated string (static). */
static const char *out_run(const char *s, size_t step, uint32_t mask)
{
	static char res[200000];
	struct bk_out o;
	struct bk_buf b = { 0 };
	bk_out_init(&o, sec, mask);
	size_t n = strlen(s);
	for (size_t i = 0; i < n;) {
		size_t k = step && step < n - i ? step : n - i;
		bk_out_feed(&o, (const uint8_t *)s + i, k, &b);
		i += k;
	}
	bk_out_eof(&o, &b);
	cr_assert_eq(b.len, n, "length changed: %zu != %zu", b.len, n);
	cr_assert_lt(b.len, sizeof res);
	memcpy(res, b.p, b.len);
	res[b.len] = 0;
	bk_buf_free(&b);
	bk_out_free(&o);
	return res;
}

/* the stream s passes the broker unchanged (in one piece, secret 0 only) */
#define assert_unchanged(s) \
	do { \
		const char *s_ = (s); \
		cr_assert_str_eq(out_run(s_, 0, 1), s_); \
	} while (0)

static const char *in_run(const char *req, const char *s, size_t step)
{
	static char res[200000];
	struct bk_out o;
	struct bk_in in;
	struct bk_buf b = { 0 }, ob = { 0 };
	bk_out_init(&o, sec, 1);
	bk_in_init(&in, sec, 1, &o);
	if (req)
		bk_out_feed(&o, (const uint8_t *)req, strlen(req), &ob);
	size_t n = strlen(s);
	for (size_t i = 0; i < n;) {
		size_t k = step && step < n - i ? step : n - i;
		bk_in_feed(&in, (const uint8_t *)s + i, k, &b);
		i += k;
	}
	bk_in_eof(&in, &b);
	if (!strstr(s, "chunked")) /* a chunked body is re-chunked */
		cr_assert_eq(b.len, n);
	cr_assert_lt(b.len, sizeof res);
	memcpy(res, b.p, b.len);
	res[b.len] = 0;
	bk_buf_free(&b);
	bk_buf_free(&ob);
	bk_in_free(&in);
	bk_out_free(&o);
	return res;
}

TestSuite(broker, .init = setup);

/* s from its first "\r\n\r\n" on is a chunked body: the header block then
 * the data joined (static; NULL if the framing is bad or does not end with
 * the last chunk and an empty trailer section). */
static const char *dechunk(const char *s)
{
	static char res[200000];
	const char *b = strstr(s, "\r\n\r\n");
	if (!b)
		return NULL;
	b += 4;
	size_t o = (size_t)(b - s);
	memcpy(res, s, o);
	for (;;) {
		char *e;
		unsigned long n = strtoul(b, &e, 16);
		if (e == b || strncmp(e, "\r\n", 2))
			return NULL;
		b = e + 2;
		if (!n)
			break;
		if (strlen(b) < n + 2 || strncmp(b + n, "\r\n", 2))
			return NULL;
		memcpy(res + o, b, n);
		o += n;
		b += n + 2;
	}
	if (strcmp(b, "\r\n"))
		return NULL;
	res[o] = 0;
	return res;
}

/* Red team 56: a value cut by the upstream's chunk framing
 * ("sk-VA\r\n15\r\nLUE..."), which the guest's client joins again, passed
 * the scrub of the raw bytes: a server reflecting the request headers in
 * 64-byte chunks gave the guest the value, the guest choosing where the cut
 * fell by a header's length. The body is re-chunked: scrubbed as one
 * stream, at every cut and every read size. */
Test(broker, value_cut_by_chunk_framing_scrubbed)
{
	size_t n = strlen(VAL);
	for (size_t cut = 0; cut <= n; cut++)
		for (size_t step = 0; step < 9; step++) {
			char s[512];
			snprintf(s, sizeof s,
				 "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
				 "%zx\r\nauth=%.*s\r\n%zx;ext=1\r\n%s!\r\n0\r\nX-T: 1\r\n\r\n",
				 cut + 5, (int)cut, VAL, n - cut + 1, &VAL[cut]);
			const char *r = in_run("GET / HTTP/1.1\r\n\r\n", s, step);
			cr_assert(!strstr(r, VAL), "cut %zu step %zu: %s", cut, step, r);
			/* the trailer as sent, after a last chunk of moat's */
			size_t rl = strlen(r);
			cr_assert(rl > 13 && !strcmp(r + rl - 13, "0\r\nX-T: 1\r\n\r\n"), "%s", r);
			char joined[512];
			snprintf(joined, sizeof joined, "%.*s\r\n", (int)(rl - 10), r);
			const char *d = dechunk(joined);
			cr_assert(d, "bad framing: cut %zu step %zu: %s", cut, step, r);
			cr_assert_str_eq(d, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nauth=" PH "!");
		}
}

Test(broker, header_substituted_whole_and_bytewise)
{
	const char *r = "GET /x HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " PH "\r\n\r\n";
	const char *w = "GET /x HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " VAL "\r\n\r\n";
	for (size_t step = 0; step < 9; step++)
		cr_assert_str_eq(out_run(r, step, 1), w, "step %zu", step);
}

/* Red team 20: a value in the request target is one the upstream reflects
 * at will (a 404 naming the path, gzip'ed as the guest asked): the
 * placeholder there stays itself, the header's is substituted. */
Test(broker, request_line_never_substituted)
{
	const char *r = "GET /v1/" PH " HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Key: " PH "\r\n\r\n";
	const char *w = "GET /v1/" PH " HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Key: " VAL "\r\n\r\n";
	for (size_t step = 0; step < 5; step++)
		cr_assert_str_eq(out_run(r, step, 1), w, "step %zu", step);
	assert_unchanged("GET /?key=" PH " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
}

/* Red team 20: a block that carries a value asks for no compression (the
 * inbound scrub matches literal bytes: a gzip'ed reflection passed it) */
Test(broker, value_block_asks_no_coding)
{
	const char *r = "GET / HTTP/1.1\r\nAccept-Encoding: gzip\r\nTE: gzip\r\nA: " PH "\r\n"
			"range: bytes=0-9\r\nAccept-Charset: utf-16\r\n\r\n"
			"GET / HTTP/1.1\r\naccept-encoding: br\r\nRange: bytes=1-\r\n\r\n";
	const char *w = "GET / HTTP/1.1\r\nX-Moat-Encoding: gzip\r\nXT: gzip\r\nA: " VAL "\r\n"
			"X-Rng: bytes=0-9\r\nX-Moat-Charset: utf-16\r\n\r\n"
			"GET / HTTP/1.1\r\naccept-encoding: br\r\nRange: bytes=1-\r\n\r\n";
	cr_assert_str_eq(out_run(r, 0, 1), w);
	cr_assert_str_eq(out_run(r, 3, 1), w);
}

Test(broker, not_in_mask)
{
	const char *r = "GET / HTTP/1.1\r\nAuthorization: " PH "\r\n\r\n";
	cr_assert_str_eq(out_run(r, 0, 2), r);
}

Test(broker, body_untouched_keepalive_substituted)
{
	char r[1024], w[1024];
	const char *body = "data=" PH;
	snprintf(r, sizeof r,
		 "POST / HTTP/1.1\r\nAuthorization: " PH "\r\nContent-Length: %zu\r\n\r\n%s"
		 "GET / HTTP/1.1\r\nX-Key: " PH "\r\n\r\n",
		 strlen(body), body);
	snprintf(w, sizeof w,
		 "POST / HTTP/1.1\r\nAuthorization: " VAL "\r\nContent-Length: %zu\r\n\r\n%s"
		 "GET / HTTP/1.1\r\nX-Key: " VAL "\r\n\r\n",
		 strlen(body), body);
	for (size_t step = 0; step < 7; step++)
		cr_assert_str_eq(out_run(r, step, 1), w, "step %zu", step);
}

Test(broker, chunked_body_untouched)
{
	const char *r = "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nA: " PH "\r\n\r\n"
			"1a;ext=1\r\n" PH "\r\n0\r\nTrailer: " PH "\r\n\r\n"
			"GET / HTTP/1.1\r\nA: " PH "\r\n\r\n";
	const char *w = "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nA: " VAL "\r\n\r\n"
			"1a;ext=1\r\n" PH "\r\n0\r\nTrailer: " PH "\r\n\r\n"
			"GET / HTTP/1.1\r\nA: " VAL "\r\n\r\n";
	cr_assert_eq(strlen(PH), 0x1a);
	for (size_t step = 0; step < 5; step++)
		cr_assert_str_eq(out_run(r, step, 1), w, "step %zu", step);
}

Test(broker, not_http_passes_unchanged)
{
	assert_unchanged("\x16\x03\x01 GET / HTTP/1.1\r\nA: " PH "\r\n\r\n");
	assert_unchanged("get / HTTP/1.1\r\nA: " PH "\r\n\r\n");
	assert_unchanged("GET / HTTP/2.0\r\nA: " PH "\r\n\r\n");
	/* obs-fold, a line without a colon: not ours to read */
	assert_unchanged("GET / HTTP/1.1\r\nA: x\r\n " PH "\r\n\r\n");
	assert_unchanged("GET / HTTP/1.1\r\nA " PH "\r\n\r\n");
	/* another transfer coding, two Content-Lengths that disagree */
	assert_unchanged("POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\nA: " PH "\r\n\r\n");
	assert_unchanged("POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\nA: " PH "\r\n\r\nxx");
	/* a partial block at the end of the stream */
	assert_unchanged("GET / HTTP/1.1\r\nA: " PH "\r\n");
}

Test(broker, after_unframed_nothing_is_substituted)
{
	/* a body framed wrongly would be read as a header block: once lost,
	 * the stream stays unchanged */
	const char *r = "GET / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"
			"GET / HTTP/1.1\r\nA: " PH "\r\n\r\n";
	cr_assert_str_eq(out_run(r, 0, 1), r);
	const char *c = "CONNECT a:80 HTTP/1.1\r\nA: " PH "\r\n\r\nGET / HTTP/1.1\r\nA: " PH "\r\n\r\n";
	const char *cw = "CONNECT a:80 HTTP/1.1\r\nA: " VAL "\r\n\r\nGET / HTTP/1.1\r\nA: " PH "\r\n\r\n";
	cr_assert_str_eq(out_run(c, 0, 1), cw);
	assert_unchanged("GET / HTTP/1.1\r\nUpgrade: websocket\r\n\r\nGET / HTTP/1.1\r\nA: " PH "\r\n\r\n");
}

Test(broker, oversized_block_unchanged)
{
	static char r[BROKER_HDR_MAX + 4096];
	strcpy(r, "GET / HTTP/1.1\r\nA: " PH "\r\nB: ");
	size_t n = strlen(r);
	memset(r + n, 'x', BROKER_HDR_MAX);
	strcpy(r + n + BROKER_HDR_MAX, "\r\n\r\n");
	cr_assert_str_eq(out_run(r, 0, 1), r);
	cr_assert_str_eq(out_run(r, 1000, 1), r);
}

Test(broker, host_name_must_match)
{
	strcpy(sec[0].host, "api.example.com");
	const char *ok = "GET / HTTP/1.1\r\nhost: API.example.com.:8080\r\nA: " PH "\r\n\r\n";
	const char *okw = "GET / HTTP/1.1\r\nhost: API.example.com.:8080\r\nA: " VAL "\r\n\r\n";
	cr_assert_str_eq(out_run(ok, 0, 1), okw);
	assert_unchanged("GET / HTTP/1.1\r\nHost: evil.example.com\r\nA: " PH "\r\n\r\n");
	assert_unchanged("GET / HTTP/1.1\r\nA: " PH "\r\n\r\n");
	assert_unchanged("GET / HTTP/1.1\r\nHost: api.example.com\r\nHost: evil.com\r\nA: " PH "\r\n\r\n");
	assert_unchanged("GET / HTTP/1.1\r\nHost: xapi.example.com\r\nA: " PH "\r\n\r\n");
}

Test(broker, inbound_scrubbed_at_any_split)
{
	char s[512], w[512];
	snprintf(s, sizeof s, "HTTP/1.1 200 OK\r\nX-Echo: %s\r\nContent-Length: %zu\r\n\r\nauth=%s", VAL,
		 strlen(VAL) + 5, VAL);
	snprintf(w, sizeof w, "HTTP/1.1 200 OK\r\nX-Echo: %s\r\nContent-Length: %zu\r\n\r\nauth=%s", PH,
		 strlen(VAL) + 5, PH);
	for (size_t step = 0; step < 40; step++)
		cr_assert_str_eq(in_run("GET / HTTP/1.1\r\n\r\n", s, step), w, "step %zu", step);
	/* unframed too */
	cr_assert_str_eq(in_run(NULL, "garbage " VAL " more " VAL, 3), "garbage " PH " more " PH);
}

/* A Content-Length body ending in a prefix of the value goes out whole at
 * once: the client waiting for its last bytes is not kept waiting. */
Test(broker, hold_released_at_message_end)
{
	struct bk_out o;
	struct bk_in in;
	struct bk_buf b = { 0 }, ob = { 0 };
	bk_out_init(&o, sec, 1);
	bk_in_init(&in, sec, 1, &o);
	const char *req = "GET / HTTP/1.1\r\n\r\nGET / HTTP/1.1\r\n\r\n";
	bk_out_feed(&o, (const uint8_t *)req, strlen(req), &ob);
	const char *r1 = "HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nxsk-VA";
	bk_in_feed(&in, (const uint8_t *)r1, strlen(r1), &b);
	cr_assert_eq(b.len, strlen(r1));
	cr_assert_eq(in.nheld, 0);
	/* mid-body, the tail after the last LF is held until the next bytes
	 * (all of it, value or not: hold_does_not_depend_on_the_value) */
	const char *r2 = "HTTP/1.1 200 OK\r\nContent-Length: 8\r\n\r\nxsk-VA";
	bk_in_feed(&in, (const uint8_t *)r2, strlen(r2), &b);
	cr_assert_eq(b.len, strlen(r1) + strlen(r2) - 6);
	bk_in_feed(&in, (const uint8_t *)"LU", 2, &b);
	cr_assert_eq(b.len, strlen(r1) + strlen(r2) + 2);
	bk_buf_free(&b);
	bk_buf_free(&ob);
	bk_in_free(&in);
	bk_out_free(&o);
}

Test(broker, head_and_interim_responses)
{
	const char *req = "HEAD / HTTP/1.1\r\n\r\nGET / HTTP/1.1\r\n\r\n";
	char s[512], w[512];
	snprintf(s, sizeof s,
		 "HTTP/1.1 200 OK\r\nContent-Length: 99\r\n\r\n"
		 "HTTP/1.1 100 Continue\r\n\r\n"
		 "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n%zx\r\n%s\r\n0\r\n\r\n",
		 strlen(VAL), VAL);
	snprintf(w, sizeof w,
		 "HTTP/1.1 200 OK\r\nContent-Length: 99\r\n\r\n"
		 "HTTP/1.1 100 Continue\r\n\r\n"
		 "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n%s",
		 PH);
	/* the chunked body is re-chunked: compared joined */
	for (size_t step = 0; step <= 4; step += 4) {
		const char *r = in_run(req, s, step);
		const char *c = strstr(r, "HTTP/1.1 200 OK\r\nTransfer-Encoding");
		cr_assert(c);
		char head[512];
		snprintf(head, sizeof head, "%.*s", (int)(c - r), r);
		const char *d = dechunk(c);
		cr_assert(d, "%s", r);
		char all[1024];
		snprintf(all, sizeof all, "%s%s", head, d);
		cr_assert_str_eq(all, w);
	}
}

Test(broker, idle_unframed_tail_released_as_sent)
{
	struct bk_in in;
	struct bk_buf b = { 0 };
	bk_in_init(&in, sec, 1, NULL);
	const char *s = "not http at all\nsk-VAL";
	bk_in_feed(&in, (const uint8_t *)s, strlen(s), &b);
	cr_assert_eq(in.mode, BK_PASS);
	cr_assert_eq(b.len, strlen(s) - 6);
	cr_assert_eq(bk_in_idle(&in, &b), 1);
	cr_assert_eq(b.len, strlen(s));
	cr_assert(!memcmp(b.p, s, strlen(s)));
	bk_buf_free(&b);
	bk_in_free(&in);
}

/* Red team 20: an upstream that echoes the guest's bytes (unframed, as an
 * echo service or a websocket does) made the hold an oracle: a guess that
 * began the value came back short, then as the placeholder's bytes; one
 * that did not came back at once as sent. The guest read the value a byte
 * at a time. What goes out, and when, must not depend on the value short of
 * a whole one. */
Test(broker, hold_does_not_depend_on_the_value)
{
	const char *guess[] = { "\nsk-VALUE/012", "\nsk-VALUE/013", "\nzzzzzzzzzzzz", "\ns" };
	size_t first[4], after[4];
	for (int g = 0; g < 4; g++) {
		struct bk_in in;
		struct bk_buf b = { 0 };
		bk_in_init(&in, sec, 1, NULL);
		bk_in_feed(&in, (const uint8_t *)"echo\n", 5, &b); /* unframed */
		size_t base = b.len;
		bk_in_feed(&in, (const uint8_t *)guess[g], strlen(guess[g]), &b);
		first[g] = b.len - base;
		bk_in_idle(&in, &b);
		after[g] = b.len - base;
		cr_assert_eq(after[g], strlen(guess[g]));
		cr_assert(!memcmp(b.p + base, guess[g], strlen(guess[g])), "guess %d came back changed", g);
		bk_buf_free(&b);
		bk_in_free(&in);
	}
	cr_assert_eq(first[0], first[1]);
	cr_assert_eq(first[0], first[2]);
	cr_assert_eq(first[3], 1); /* the LF: nothing after it goes before the rest */
}

/* The decisions the relay reports (moat-broker makes them audit events):
 * the request line as the guest sent it, never a value. */
Test(broker, events)
{
	strcpy(sec[0].host, "api.example.com");
	struct bk_out o;
	struct bk_buf b = { 0 };
	bk_out_init(&o, sec, 1);
	const char *r = "GET /a?k=" PH " HTTP/1.1\r\nHost: api.example.com\r\nA: " PH "\r\n\r\n"
			"GET /b HTTP/1.1\r\nHost: other.com\r\nA: " PH "\r\n\r\n"
			"GET /c HTTP/1.1\r\nHost: api.example.com\r\n\r\n"
			"\x16\x03\x01";
	bk_out_feed(&o, (const uint8_t *)r, strlen(r), &b);
	cr_assert_eq(o.nev, 3);
	cr_assert_eq(o.ev[0].kind, BK_EV_SUBST);
	cr_assert_str_eq(o.ev[0].what, "GET /a?k=" PH " HTTP/1.1");
	cr_assert_eq(o.ev[0].mask, 1);
	cr_assert_eq(o.ev[1].kind, BK_EV_NOHOST);
	cr_assert_str_eq(o.ev[1].what, "GET /b HTTP/1.1");
	cr_assert_eq(o.ev[2].kind, BK_EV_UNFRAMED);
	cr_assert_str_eq(o.ev[2].what, "not HTTP/1.x");
	/* the header field's placeholder became the value, the request
	 * line's stayed (request_line_never_substituted) */
	cr_assert_not_null(memmem(b.p, b.len, "A: " VAL, strlen(VAL) + 3));
	cr_assert_not_null(memmem(b.p, b.len, "GET /a?k=" PH, strlen(PH) + 9));
	bk_buf_free(&b);
	bk_out_free(&o);
}

/* Red team 14: a request the relay frames one way and the upstream another
 * (request smuggling) carried the value into what the upstream took for a
 * body of another Host's request: Content-Length with Transfer-Encoding
 * (RFC 9112 6.3: an intermediary must not forward both), a bare CR in a
 * header line (a line end to some servers), a chunk size with junk after
 * it ("1 0": 1 here, 0x10 or an error upstream). Such a stream is passed as
 * it is from there on: the placeholder goes out as itself. */
Test(broker, ambiguous_framing_never_substituted)
{
	strcpy(sec[0].host, "api.example.com");
	const char *smuggled = "GET / HTTP/1.1\r\nHost: api.example.com\r\nA: " PH "\r\n\r\n";
	const char *heads[] = {
		"POST / HTTP/1.1\r\nHost: other.example.com\r\nContent-Length: 71\r\n"
		"Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
		"POST / HTTP/1.1\r\nHost: other.example.com\r\nTransfer-Encoding: chunked\r\n"
		"Content-Length: 71\r\n\r\n0\r\n\r\n",
		"POST / HTTP/1.1\r\nHost: other.example.com\r\nTransfer-Encoding: gzip\r\n"
		"Content-Length: 5\r\n\r\nhello",
		"POST / HTTP/1.1\r\nHost: api.example.com\r\nTransfer-Encoding: chunked\r\n\r\n"
		"1 0\r\nA\r\n0\r\n\r\n",
		"POST / HTTP/1.1\r\nHost: api.example.com\r\nTransfer-Encoding: chunked\r\n\r\n"
		"1x\r\nA\r\n0\r\n\r\n",
		/* red team 56: chunked in HTTP/1.0 (RFC 9112 6.1: faulty); an
		 * upstream reading no body takes the size line for a request
		 * to other.example.com */
		"POST / HTTP/1.0\r\nHost: api.example.com\r\nTransfer-Encoding: chunked\r\n\r\n"
		"1;x http://other.example.com/ HTTP/1.1\r\nA\r\n0\r\n\r\n",
	};
	static char r[4096];
	for (size_t i = 0; i < sizeof heads / sizeof heads[0]; i++) {
		snprintf(r, sizeof r, "%s%s", heads[i], smuggled);
		cr_assert_str_eq(out_run(r, 0, 1), r, "case %zu", i);
		cr_assert_str_eq(out_run(r, 7, 1), r, "case %zu bytewise", i);
	}
	assert_unchanged("GET / HTTP/1.1\r\nHost: api.example.com\r\nX: a\rHost: evil.com\r\nA: " PH "\r\n\r\n");
	/* blanks before an extension are still a size */
	const char *okr = "POST / HTTP/1.1\r\nHost: api.example.com\r\nTransfer-Encoding: chunked\r\n\r\n"
			  "1 ;e=1\r\nA\r\n0\r\n\r\nGET / HTTP/1.1\r\nHost: api.example.com\r\nA: " PH "\r\n\r\n";
	const char *okw = "POST / HTTP/1.1\r\nHost: api.example.com\r\nTransfer-Encoding: chunked\r\n\r\n"
			  "1 ;e=1\r\nA\r\n0\r\n\r\nGET / HTTP/1.1\r\nHost: api.example.com\r\nA: " VAL "\r\n\r\n";
	cr_assert_str_eq(out_run(okr, 0, 1), okw);
}

/* Red team 14: an absolute-form target names the host itself and RFC 9112
 * 3.2.2 has the server ignore the Host header then: "GET http://evil/ ...
 * Host: api" went to evil on a shared address with the value. */
Test(broker, absolute_form_target_must_name_host)
{
	strcpy(sec[0].host, "api.example.com");
	const char *evil[] = {
		"GET http://evil.example.com/ HTTP/1.1\r\nHost: api.example.com\r\nA: " PH "\r\n\r\n",
		"GET HTTP://evil.example.com HTTP/1.1\r\nHost: api.example.com\r\nA: " PH "\r\n\r\n",
		"GET http://api.example.com@evil.example.com/ HTTP/1.1\r\nHost: api.example.com\r\nA: " PH "\r\n\r\n",
		"GET evil.example.com:80 HTTP/1.1\r\nHost: api.example.com\r\nA: " PH "\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: api.example.com:x@evil.example.com\r\nA: " PH "\r\n\r\n",
		"GET http://api.example.com:1@evil.example.com/ HTTP/1.1\r\nHost: api.example.com\r\nA: " PH "\r\n\r\n",
		"GET http://api.example.com:x/ HTTP/1.1\r\nHost: api.example.com\r\nA: " PH "\r\n\r\n",
	};
	for (size_t i = 0; i < sizeof evil / sizeof evil[0]; i++)
		cr_assert_str_eq(out_run(evil[i], 0, 1), evil[i], "case %zu", i);
	const char *ok = "GET http://API.example.com.:8080/x?y HTTP/1.1\r\nHost: api.example.com\r\nA: " PH "\r\n\r\n";
	const char *okw = "GET http://API.example.com.:8080/x?y HTTP/1.1\r\nHost: api.example.com\r\nA: " VAL "\r\n\r\n";
	cr_assert_str_eq(out_run(ok, 0, 1), okw);
	const char *star = "OPTIONS * HTTP/1.1\r\nHost: api.example.com\r\nA: " PH "\r\n\r\n";
	const char *starw = "OPTIONS * HTTP/1.1\r\nHost: api.example.com\r\nA: " VAL "\r\n\r\n";
	cr_assert_str_eq(out_run(star, 0, 1), starw);
}

/* broker2: framing the relay and an upstream may read differently (RFC 9112
 * 6.1-6.3, 7.1): each is passed as it is from there on, never substituted.
 * Content-Length: differing duplicates, a sign, leading zeros (octal to a
 * strtol(.., 0) reader), a list; a space before the colon; a
 * Transfer-Encoding other than one "chunked" (a reader of the first line
 * sees identity: no body); a chunk size past 31 bits (truncated to 32 bits
 * "100000000" is the last chunk) or of more than 16 digits; a bare CR in a
 * chunk line (a line end to some readers), a 100 KB extension; HTTP/0.9. */
Test(broker, framing_ambiguities_never_substituted)
{
	strcpy(sec[0].host, "api.example.com");
	const char *smuggled = "GET / HTTP/1.1\r\nHost: api.example.com\r\nA: " PH "\r\n\r\n";
	static char ext[120000];
	snprintf(ext, sizeof ext, "POST / HTTP/1.1\r\nHost: api.example.com\r\nTransfer-Encoding: chunked\r\n\r\n1;x=");
	size_t el = strlen(ext);
	memset(ext + el, 'a', 100000);
	strcpy(ext + el + 100000, "\r\nA\r\n0\r\n\r\n");
	const char *heads[] = {
		"POST / HTTP/1.1\r\nHost: api.example.com\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!",
		"POST / HTTP/1.1\r\nHost: api.example.com\r\nContent-Length: +5\r\n\r\nhello",
		"POST / HTTP/1.1\r\nHost: api.example.com\r\nContent-Length: 010\r\n\r\nhellohello",
		"POST / HTTP/1.1\r\nHost: api.example.com\r\nContent-Length: 5, 5\r\n\r\nhello",
		"POST / HTTP/1.1\r\nHost: api.example.com\r\nContent-Length : 5\r\n\r\nhello",
		"POST / HTTP/1.1\r\nHost: api.example.com\r\nTransfer-Encoding: chunked, identity\r\n\r\n0\r\n\r\n",
		"POST / HTTP/1.1\r\nHost: api.example.com\r\nTransfer-Encoding: xchunked\r\n\r\n0\r\n\r\n",
		"POST / HTTP/1.1\r\nHost: api.example.com\r\nTransfer-Encoding: identity\r\n"
		"Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
		"POST / HTTP/1.1\r\nHost: api.example.com\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n",
		"POST / HTTP/1.1\r\nHost: api.example.com\r\nTransfer-Encoding: chunked\r\n\r\n"
		"100000000\r\nA\r\n0\r\n\r\n",
		"POST / HTTP/1.1\r\nHost: api.example.com\r\nTransfer-Encoding: chunked\r\n\r\n"
		"00000000000000001\r\nA\r\n0\r\n\r\n",
		"POST / HTTP/1.1\r\nHost: api.example.com\r\nTransfer-Encoding: chunked\r\n\r\n"
		"1;a\rb\r\nA\r\n0\r\n\r\n",
		"POST / HTTP/1.1\r\nHost: api.example.com\r\nTransfer-Encoding: chunked\r\n\r\n"
		"1\r\nA\r\r\n0\r\n\r\n",
		ext,
		"GET /\r\n",
	};
	static char r[200000];
	for (size_t i = 0; i < sizeof heads / sizeof heads[0]; i++) {
		snprintf(r, sizeof r, "%s%s", heads[i], smuggled);
		cr_expect_str_eq(out_run(r, 0, 1), r, "case %zu", i);
		cr_expect_str_eq(out_run(r, 7, 1), r, "case %zu bytewise", i);
	}
	/* the value itself never goes with a NUL or bare CR in its line, nor
	 * with an absolute-form target naming another host */
	const char *one[] = {
		"GET http://evil.example.com/ HTTP/1.1\r\nHost: api.example.com\r\nA: " PH "\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: api.example.com\r\nA: " PH "\rB: x\r\n\r\n",
	};
	for (size_t i = 0; i < sizeof one / sizeof one[0]; i++)
		cr_assert_str_eq(out_run(one[i], 0, 1), one[i], "one %zu", i);
	/* what stays framed: one Content-Length twice alike, "0", trimmed OWS */
	const char *ok = "POST / HTTP/1.1\r\nHost: api.example.com\r\nContent-Length: 5 \r\nContent-Length:5\r\n\r\nhello"
			 "POST / HTTP/1.1\r\nHost: api.example.com\r\nContent-Length: 0\r\nA: " PH "\r\n\r\n";
	const char *okw = "POST / HTTP/1.1\r\nHost: api.example.com\r\nContent-Length: 5 \r\nContent-Length:5\r\n\r\nhello"
			  "POST / HTTP/1.1\r\nHost: api.example.com\r\nContent-Length: 0\r\nA: " VAL "\r\n\r\n";
	cr_assert_str_eq(out_run(ok, 0, 1), okw);
}

/* Both directions of one connection, interleaved as the relay sees them:
 * guest bytes (out) and upstream bytes (in), in turn. What went upstream. */
static const char *relay_run(const char *const *steps, size_t n)
{
	static char res[65536];
	struct bk_out o;
	struct bk_in in;
	struct bk_buf ob = { 0 }, ib = { 0 };
	bk_out_init(&o, sec, 1);
	bk_in_init(&in, sec, 1, &o);
	for (size_t i = 0; i < n; i++) {
		const char *s = steps[i];
		if (s[0] == '>')
			bk_out_feed(&o, (const uint8_t *)s + 1, strlen(s + 1), &ob);
		else
			bk_in_feed(&in, (const uint8_t *)s + 1, strlen(s + 1), &ib);
	}
	cr_assert_lt(ob.len, sizeof res);
	memcpy(res, ob.p, ob.len);
	res[ob.len] = 0;
	bk_buf_free(&ob);
	bk_buf_free(&ib);
	bk_in_free(&in);
	bk_out_free(&o);
	return res;
}

/* broker2: Expect: 100-continue. An upstream that answers a final status
 * (417, or 401 at once) without a 100 has not read the body: the guest's
 * "body" is its next request (another Host, a Content-Length taking in the
 * next block, a value put in, as its body). After a final answer to a
 * request whose body was not all sent, or to one that expected 100 and got
 * none, nothing more is substituted on the connection; nor in a block that
 * follows an unanswered expecting request (pipelined). */
Test(broker, early_answer_stops_substitution)
{
	strcpy(sec[0].host, "api.example.com");
	const char *body = "POST /paste HTTP/1.1\r\nHost: other.example.com\r\nContent-Length: 300\r\n\r\n";
	char req[512];
	snprintf(req, sizeof req,
		 ">POST / HTTP/1.1\r\nHost: api.example.com\r\nA: " PH "\r\nExpect: 100-continue\r\n"
		 "Content-Length: %zu\r\n\r\n",
		 strlen(body));
	const char *next = ">GET / HTTP/1.1\r\nHost: api.example.com\r\nA: " PH "\r\n\r\n";
	char bodyst[512];
	snprintf(bodyst, sizeof bodyst, ">%s", body);
	/* 417 before the body */
	const char *a[] = { req, "<HTTP/1.1 417 Expectation Failed\r\nContent-Length: 0\r\n\r\n", bodyst, next };
	cr_assert_null(strstr(strstr(relay_run(a, 4), "POST /paste"), VAL));
	/* 401 early, the body after */
	const char *b[] = { req, "<HTTP/1.1 401 No\r\nContent-Length: 0\r\n\r\n", bodyst, next };
	cr_assert_null(strstr(strstr(relay_run(b, 4), "POST /paste"), VAL));
	/* all sent at once (pipelined), the answer after: no 100 came */
	const char *c[] = { req, bodyst, next, "<HTTP/1.1 417 Expectation Failed\r\nContent-Length: 0\r\n\r\n" };
	cr_assert_null(strstr(strstr(relay_run(c, 4), "POST /paste"), VAL));
	/* an answer mid-body, no Expect */
	char req2[512];
	snprintf(req2, sizeof req2,
		 ">POST / HTTP/1.1\r\nHost: api.example.com\r\nContent-Length: %zu\r\n\r\nPOST /paste", strlen(body));
	const char *d[] = { req2, "<HTTP/1.1 401 No\r\nContent-Length: 0\r\n\r\n", bodyst + 12, next };
	cr_assert_null(strstr(strstr(relay_run(d, 4), "POST /paste"), VAL));
	/* the normal way: 100, the body, the final answer, the next request */
	const char *e[] = { req, "<HTTP/1.1 100 Continue\r\n\r\n", bodyst,
			    "<HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", next };
	const char *r = relay_run(e, 5);
	cr_assert(strstr(strstr(r, "POST /paste"), VAL), "%s", r);
	cr_assert(strstr(r, "A: " VAL "\r\nExpect"), "%s", r);
}

/* broker2: a chunk size past 31 bits is not framed (a 32-bit reader takes
 * 0x100000000 for 0, the last chunk: its "data" is the next request) */
Test(broker, huge_chunk_size_unframed)
{
	const char *sizes[] = { "100000000", "80000000", "ffffffffffffff" };
	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
		char r[256];
		snprintf(r, sizeof r, "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n%s\r\n", sizes[i]);
		struct bk_out o;
		struct bk_buf b = { 0 };
		bk_out_init(&o, sec, 1);
		bk_out_feed(&o, (const uint8_t *)r, strlen(r), &b);
		cr_expect_eq(o.mode, BK_PASS, "%s", sizes[i]);
		bk_buf_free(&b);
		bk_out_free(&o);
	}
}

/* broker2: a NUL in a header line (a string's end to a C reader: the rest of
 * the line, "\r\nHost: evil", is another line to some) is never substituted */
Test(broker, nul_in_header_never_substituted)
{
	strcpy(sec[0].host, "api.example.com");
	static const char r[] = "GET / HTTP/1.1\r\nHost: api.example.com\r\nX: a\0b\r\nA: " PH "\r\n\r\n";
	struct bk_out o;
	struct bk_buf b = { 0 };
	bk_out_init(&o, sec, 1);
	bk_out_feed(&o, (const uint8_t *)r, sizeof r - 1, &b);
	bk_out_eof(&o, &b);
	cr_assert_eq(b.len, sizeof r - 1);
	cr_assert_eq(memcmp(b.p, r, b.len), 0);
	cr_assert_eq(o.substituted, 0);
	bk_buf_free(&b);
	bk_out_free(&o);
}

/* broker2: the stricter framing is a request's only. A response with
 * "gzip, chunked", two Transfer-Encoding lines, a chunk line with a bare
 * CR or a bare LF after the data is still re-chunked: passed raw, a value
 * cut by its chunk framing would reach the guest whole (red team 56). */
Test(broker, lenient_response_still_rechunked)
{
	const char *heads[] = {
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: identity, chunked\r\n\r\n",
	};
	const char *bodies[] = { "5\r\nsk-VA\r\n15\r\nLUE/0123456789+abcdef\r\n0\r\n\r\n",
				 "5\r\nsk-VA\n15\r\nLUE/0123456789+abcdef\r\n0\r\n\r\n",
				 "5;a\rb\r\nsk-VA\r\n15\r\nLUE/0123456789+abcdef\r\n0\r\n\r\n" };
	for (size_t h = 0; h < 2; h++)
		for (size_t b = 0; b < 3; b++) {
			char s[512];
			snprintf(s, sizeof s, "%s%s", heads[h], bodies[b]);
			const char *r = in_run("GET / HTTP/1.1\r\n\r\n", s, 0);
			const char *d = dechunk(r);
			cr_assert(d, "%zu %zu: not re-chunked: %s", h, b, r);
			cr_assert_str_eq(d + strlen(heads[h]), PH, "%zu %zu: %s", h, b, r);
		}
}

/* Red team 77: a value goes into header field values only — not into a
 * field name (Node lowercases names, WSGI upper-cases them, Go
 * canonicalizes them: the reflection passed the literal scrub), not into
 * the Host (nginx's $host is lower case), not into the request line. */
Test(broker, value_only_in_field_values)
{
	const char *r = "GET / HTTP/1.1\r\nHost: " PH "\r\n" PH ": 1\r\nX-" PH "-Y: " PH "\r\nhOsT-x: " PH "\r\n\r\n";
	const char *w = "GET / HTTP/1.1\r\nHost: " PH "\r\n" PH ": 1\r\nX-" PH "-Y: " VAL "\r\nhOsT-x: " VAL "\r\n\r\n";
	for (size_t step = 0; step < 5; step++)
		cr_assert_str_eq(out_run(r, step, 1), w, "step %zu", step);
	/* only in a name or the Host: nothing to put in, the block as sent */
	const char *n = "GET / HTTP/1.1\r\nHOST: " PH "\r\n" PH ": 1\r\n\r\n";
	cr_assert_str_eq(out_run(n, 0, 1), n);
}

/* Red team 77: a body on a GET (HEAD, DELETE, OPTIONS, TRACE), which many
 * servers never read (Python's http.server in do_GET): their next request
 * is that body — another Host, a Content-Length taking in the next block.
 * The block itself is substituted, nothing after it on the connection. */
Test(broker, body_on_get_stops_substitution)
{
	const char *d = "POST /paste HTTP/1.1\r\nHost: other\r\nContent-Length: 48\r\n\r\n";
	char r[1024], w[1024];
	snprintf(r, sizeof r, "GET / HTTP/1.1\r\nA: " PH "\r\nContent-Length: %zu\r\n\r\n%sGET / HTTP/1.1\r\nA: " PH "\r\n\r\n",
		 strlen(d), d);
	snprintf(w, sizeof w, "GET / HTTP/1.1\r\nA: " VAL "\r\nContent-Length: %zu\r\n\r\n%sGET / HTTP/1.1\r\nA: " PH "\r\n\r\n",
		 strlen(d), d);
	for (size_t step = 0; step < 4; step++)
		cr_assert_str_eq(out_run(r, step, 1), w, "step %zu: %s", step, out_run(r, step, 1));
	/* a POST's body is read: the next block is substituted */
	snprintf(r, sizeof r, "POST / HTTP/1.1\r\nContent-Length: 3\r\n\r\nabcGET / HTTP/1.1\r\nA: " PH "\r\n\r\n");
	snprintf(w, sizeof w, "POST / HTTP/1.1\r\nContent-Length: 3\r\n\r\nabcGET / HTTP/1.1\r\nA: " VAL "\r\n\r\n");
	cr_assert_str_eq(out_run(r, 0, 1), w);
}
