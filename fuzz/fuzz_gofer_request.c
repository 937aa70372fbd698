/* fuzz/fuzz_gofer_request.c: the gofer's request decoder (gofer/server.c
 * gofer_parse_request) on any bytes, as the control and as a data
 * connection. Whatever it accepts must be a well-formed request. */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gofer/proto.h"
#include "gofer/server.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gofer_request q;
	if (size > GOFER_MAX_REQ)
		return 0;
	/* an exact-size heap copy: ASan sees any read past the message */
	char *buf = malloc(size ? size : 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	for (int ctl = 0; ctl < 2; ctl++) {
		int r = gofer_parse_request(buf, size, ctl, 4, &q);
		if (r > 0)
			abort();
		if (r || q.ctl)
			continue;
		/* accepted: strings inside the message, NUL-terminated, checked */
		if (q.fixed.path.exp >= 4 || !q.path || q.path < buf || q.path >= buf + size)
			abort();
		if (strlen(q.path) != q.fixed.path.len || gofer_check_path(q.path, q.fixed.path.len))
			abort();
		/* no "..", "." or empty component survives */
		size_t pl = strlen(q.path);
		for (const char *c = q.path; pl && c <= q.path + pl; ) {
			const char *e = strchr(c, '/');
			size_t cl = e ? (size_t)(e - c) : strlen(c);
			if (cl == 0 || (cl == 1 && c[0] == '.') || (cl == 2 && c[0] == '.' && c[1] == '.'))
				abort();
			c += cl + 1;
		}
		if (q.path[0] == '/')
			abort();
		if (q.str2 && (q.str2 < buf || q.str2 >= buf + size || strlen(q.str2) != q.fixed.two.len2))
			abort();
	}
	free(buf);
	return 0;
}
