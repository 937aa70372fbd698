/* fuzz/fuzz_decode.c: the syscall argument decoder (syscalls/decode.c) that
 * prints every trapped call for --trace/--audit, on any row, any argument
 * values and any copied-in strings and structs (as the pipeline leaves them:
 * a string NUL-terminated within SC_STRMAX, a struct of up to SC_BUFMAX bytes
 * with the guest's claimed length), then json_escape of the result.
 *
 * Input: u16 nr | 6 x u64 args | i64 ret | u8 lens[5] | bytes (3 strings,
 * then 2 structs, each taking lens[k] bytes, short input truncating). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "syscalls/decode.h"
#include "syscalls/sc.h"
#include "syscalls/table.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct sc_call c;
/* separate heap blocks of exactly the pipeline's sizes: ASan sees overreads */
static char *strs[3];
static unsigned char *structs[2];

static size_t take(const uint8_t **p, size_t *left, void *dst, size_t n)
{
	n = n < *left ? n : *left;
	memcpy(dst, *p, n);
	*p += n;
	*left -= n;
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *p = data;
	size_t left = size;
	uint16_t nr = 0;
	int64_t ret = 0;
	uint8_t lens[5] = { 0 };
	char out[8192], json[4 * 8192];

	memset(&c, 0, sizeof c);
	take(&p, &left, &nr, sizeof nr);
	take(&p, &left, c.args, sizeof c.args);
	take(&p, &left, &ret, sizeof ret);
	take(&p, &left, lens, sizeof lens);
	c.nr = nr % SC_NR_MAX;
	c.ent = &sc_table[c.nr];
	if (!c.ent->name)
		return 0; /* (nothing allocated yet) */
	c.out_fd = -1;
	c.out_newfd_at = -1;
	int ns = 0, nb = 0;
	for (int i = 0; i < c.ent->nargs && i < SC_MAXARGS; i++) {
		switch (c.ent->args[i]) {
		case A_PATH:
		case A_STR:
			if (ns < 3) {
				/* lens scaled so a string can reach the decoder's bounds */
				size_t want = (size_t)lens[ns] * 16 % SC_STRMAX;
				strs[ns] = malloc(want + 1);
				size_t n = take(&p, &left, strs[ns], want);
				strs[ns][n] = 0;
				c.str[i] = strs[ns++];
			}
			break;
		case A_OPEN_HOW:
		case A_SOCKADDR:
		case A_ARGV:
			if (nb < 2) {
				structs[nb] = calloc(1, SC_BUFMAX);
				size_t n = take(&p, &left, structs[nb], lens[3 + nb] % (SC_BUFMAX + 1));
				c.buf[i] = structs[nb++];
				/* the guest's length, which may exceed what was copied */
				c.buflen[i] = i + 1 < SC_MAXARGS && c.ent->args[i] != A_ARGV ? c.args[i + 1] : n;
				if (c.buflen[i] > n && c.ent->args[i] == A_ARGV)
					c.buflen[i] = n;
			}
			break;
		default:
			break;
		}
	}
	size_t n = sc_decode_call(&c, (long)ret, out, sizeof out);
	if (n >= sizeof out || strlen(out) != n)
		abort();
	sc_decode_args(&c, out, (size_t)(ret & 0xff) + 1); /* tiny buffers: truncation */
	json_escape(json, sizeof json, out);
	json_escape(json, (size_t)(ret >> 8 & 0x3f) + 1, out);
	for (int k = 0; k < 3; k++)
		free(strs[k]), strs[k] = NULL;
	for (int k = 0; k < 2; k++)
		free(structs[k]), structs[k] = NULL;
	return 0;
}
