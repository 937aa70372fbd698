/* fuzz/fuzz_broker.c: moat-broker's stream transforms (sentry/brokerhttp.c)
 * on any bytes, both directions, cut into reads at the places the input's
 * first bytes choose. What must hold: nothing is lost or added (the
 * substitutions keep lengths; an inbound chunked body is re-chunked), a connection that may carry no secret is
 * passed unchanged, and no unframed (non-HTTP) inbound stream lets a value
 * through whole within one read. And (broker2) a chunked response built
 * from the input (chunk sizes, extensions, data cut from the values at
 * chosen places): moat-broker's re-chunked body decodes back to the
 * upstream's data, scrubbed, and no value is in the guest-bound bytes. */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sentry/broker.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define VAL "sk-VALUE/0123456789+abcdef"
#define PH "Ph4c3h0ld3rXXXXXXXXXXXXXXX"

static struct broker_secret sec[BROKER_MAX_SECRETS];

/* Does [d, d+n) hold "chunked" in any case (a response may be chunked)? */
static int has_chunked(const uint8_t *d, size_t n)
{
	for (size_t i = 0; i + 7 <= n; i++)
		if (!strncasecmp((const char *)d + i, "chunked", 7))
			return 1;
	return 0;
}

static void run(const uint8_t *d, size_t n, size_t step, uint32_t mask, int dir)
{
	struct bk_out o;
	struct bk_in in;
	struct bk_buf b = { 0 };
	bk_out_init(&o, sec, mask);
	bk_in_init(&in, sec, mask, &o);
	for (size_t i = 0; i < n;) {
		size_t k = step < n - i ? step : n - i;
		if (dir)
			bk_in_feed(&in, d + i, k, &b);
		else
			bk_out_feed(&o, d + i, k, &b);
		if (dir && (k & 1))
			bk_in_idle(&in, &b);
		i += k;
	}
	if (dir)
		bk_in_eof(&in, &b);
	else
		bk_out_eof(&o, &b);
	/* an inbound chunked body is re-chunked (red team 56): its length may
	 * change; anything else keeps it */
	if (b.len != n && !(dir && has_chunked(d, n)))
		abort();
	if (!mask && n && memcmp(b.p, d, n))
		abort();
	/* one read of a stream that is not an HTTP/1.x response: every whole
	 * value in it is scrubbed */
	if (dir && b.len && (mask & 1) && step >= n && (n < 7 || memcmp(d, "HTTP/1.", 7)) &&
	    memmem(b.p, b.len, VAL, strlen(VAL)))
		abort();
	bk_buf_free(&b);
	bk_in_free(&in);
	bk_out_free(&o);
}

/* The values, for chunk data cut from them */
static const char dict[] = VAL "0123456789abcdef" VAL "\n0123456789abcdef";

static void must(int c)
{
	if (!c)
		abort();
}

/* A chunked response from d: each chunk a control byte c (size (c & 63) +
 * 1, an extension if c & 64, data from dict at the next byte's offset if c &
 * 128, else the input's next bytes), then the last chunk. Through bk_in in
 * reads of step bytes: the output's header block as sent, its body
 * chunked, decoding to the data with each value in mask replaced by its
 * placeholder. */
static void run_chunked(const uint8_t *d, size_t n, size_t step, uint32_t mask)
{
	static const char head[] = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
	struct bk_buf in = { 0 }, body = { 0 }, b = { 0 };
	bk_buf_put(&in, head, sizeof head - 1);
	for (size_t i = 0; i < n;) {
		uint8_t c = d[i++];
		size_t sz = (size_t)(c & 63) + 1;
		const uint8_t *src;
		if (c & 128) {
			if (i >= n)
				break;
			size_t off = d[i++] % (sizeof dict - 1);
			if (sz > sizeof dict - 1 - off)
				sz = sizeof dict - 1 - off;
			src = (const uint8_t *)dict + off;
		} else {
			if (sz > n - i)
				sz = n - i;
			if (!sz)
				break;
			src = d + i;
			i += sz;
		}
		char h[32];
		int hl = snprintf(h, sizeof h, "%zx%s\r\n", sz, (c & 64) ? ";e=\"x\"" : "");
		bk_buf_put(&in, h, (size_t)hl);
		bk_buf_put(&in, src, sz);
		bk_buf_put(&in, "\r\n", 2);
		bk_buf_put(&body, src, sz);
	}
	bk_buf_put(&in, "0\r\nT: 1\r\n\r\n", 12);
	/* the expected body: each value replaced (they cannot overlap) */
	for (int k = 0; k < 2; k++)
		if ((mask & (1u << k)) && body.len >= sec[k].len)
			for (size_t j = 0; j + sec[k].len <= body.len;) {
				uint8_t *m = memmem(body.p + j, body.len - j, sec[k].value, sec[k].len);
				if (!m)
					break;
				memcpy(m, sec[k].placeholder, sec[k].len);
				j = (size_t)(m - body.p) + sec[k].len;
			}
	struct bk_out o;
	struct bk_in bi;
	bk_out_init(&o, sec, mask);
	bk_in_init(&bi, sec, mask, &o);
	for (size_t i = 0; i < in.len;) {
		size_t k = step < in.len - i ? step : in.len - i;
		bk_in_feed(&bi, in.p + i, k, &b);
		if (k & 1)
			bk_in_idle(&bi, &b);
		i += k;
	}
	bk_in_eof(&bi, &b);
	/* no value in what the guest gets */
	for (int k = 0; k < 2; k++)
		if (mask & (1u << k))
			must(!memmem(b.p, b.len, sec[k].value, sec[k].len));
	if (!mask) { /* no secret: as it came */
		must(b.len == in.len && !memcmp(b.p, in.p, in.len));
	} else {
		/* the head as sent, then chunks of the scrubbed data, "0", the
		 * trailers as sent */
		must(b.len >= sizeof head - 1 && !memcmp(b.p, head, sizeof head - 1));
		size_t p = sizeof head - 1, got = 0;
		for (;;) {
			size_t sz = 0, q = p;
			while (q < b.len && isxdigit(b.p[q])) {
				sz = sz * 16 + (size_t)(isdigit(b.p[q]) ? b.p[q] - '0' : (tolower(b.p[q]) - 'a' + 10));
				q++;
			}
			must(q > p && q + 2 <= b.len && b.p[q] == '\r' && b.p[q + 1] == '\n');
			p = q + 2;
			if (!sz)
				break;
			must(sz <= b.len - p && got + sz <= body.len && !memcmp(b.p + p, body.p + got, sz));
			got += sz;
			p += sz;
			must(p + 2 <= b.len && b.p[p] == '\r' && b.p[p + 1] == '\n');
			p += 2;
		}
		must(got == body.len);
		must(b.len - p == 9 && !memcmp(b.p + p, "T: 1\r\n\r\n", 9));
	}
	bk_buf_free(&in);
	bk_buf_free(&body);
	bk_buf_free(&b);
	bk_in_free(&bi);
	bk_out_free(&o);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!sec[0].len) {
		strcpy(sec[0].name, "KEY");
		sec[0].len = strlen(VAL);
		memcpy(sec[0].value, VAL, sec[0].len);
		memcpy(sec[0].placeholder, PH, sec[0].len);
		strcpy(sec[1].name, "K2");
		strcpy(sec[1].host, "api.example.com");
		sec[1].len = 16;
		memcpy(sec[1].value, "0123456789abcdef", 16);
		memcpy(sec[1].placeholder, "ZZZZZZZZZZZZZZZZ", 16);
	}
	if (size < 2)
		return 0;
	size_t step = (size_t)data[0] + 1;
	uint32_t mask = data[1] & 3;
	data += 2, size -= 2;
	if (data[-1] & 4) {
		run_chunked(data, size, step, mask);
		return 0;
	}
	run(data, size, step, mask, 0);
	run(data, size, step, mask, 1);
	run(data, size, size ? size : 1, mask, 1);
	return 0;
}
