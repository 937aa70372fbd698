/* fuzz/fuzz_execfmt.c: exec's header parsers (sentry/execfmt.c) on any file
 * contents: the "#!" line and the ELF64 header, program headers and
 * PT_INTERP (read through a bounds-checked buffer reader). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "sentry/execfmt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct file { const uint8_t *p; size_t n; };

static ssize_t rd(void *ctx, void *buf, size_t len, off_t off)
{
	const struct file *f = ctx;
	if (off < 0)
		return -22; /* -EINVAL, as pread */
	if ((size_t)off > f->n)
		return 0;
	size_t k = f->n - (size_t)off < len ? f->n - (size_t)off : len;
	memcpy(buf, f->p + off, k);
	return (ssize_t)k;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char interp[4096], arg[4096];
	struct file f = { data, size };

	/* exec.c reads at most 256 header bytes for "#!" */
	int r = execfmt_shebang((const char *)data, size < 256 ? size : 256, interp, sizeof interp, arg,
				sizeof arg);
	if (r == 0 && (!interp[0] || strlen(interp) >= sizeof interp || strlen(arg) >= sizeof arg))
		abort();
	/* small output buffers: the length checks */
	execfmt_shebang((const char *)data, size, interp, 8, arg, 8);
	r = execfmt_elf_interp(rd, &f, interp, sizeof interp);
	if ((r >= 0 && strlen(interp) >= sizeof interp) || (r == 0 && interp[0]))
		abort();
	execfmt_elf_interp(rd, &f, interp, 16);
	/* the interpreter's check: every header the program's accepts */
	if (execfmt_elf_interp_check(rd, &f) != 0 && r >= 0)
		abort();
	return 0;
}
