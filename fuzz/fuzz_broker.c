/* fuzz/fuzz_broker.c: moat-broker's stream transforms (sentry/brokerhttp.c)
 * on any bytes, both directions, cut into reads at the places the input's
 * first bytes choose. What must hold: nothing is lost or added (the
 * substitutions keep lengths; an inbound chunked body is re-chunked), a connection that may carry no secret is
 * passed unchanged, and no unframed (non-HTTP) inbound stream lets a value
 * through whole within one read. */
#include <stdint.h>
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
	run(data, size, step, mask, 0);
	run(data, size, step, mask, 1);
	run(data, size, size ? size : 1, mask, 1);
	return 0;
}
