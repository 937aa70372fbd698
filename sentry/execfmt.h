/* sentry/execfmt.h - the exec header parsers, as pure functions (no fds, no
 * task): "#!" lines and ELF64 x86_64 headers. exec.c feeds them from the
 * file; fuzz/ feeds them any bytes. */
#ifndef MOAT_SENTRY_EXECFMT_H
#define MOAT_SENTRY_EXECFMT_H

#include <stddef.h>
#include <sys/types.h>

/* Parse "#!interp [arg]\n" (the first n bytes of a file) like binfmt_script:
 * 0, -ENOEXEC (not a script or no interpreter), -ENAMETOOLONG. */
int execfmt_shebang(const char *buf, size_t n, char *interp, size_t ilen, char *arg, size_t alen);

/* Read exactly len bytes at off: len, or anything else on failure. */
typedef ssize_t (*execfmt_read_fn)(void *ctx, void *buf, size_t len, off_t off);

/* Check an ELF header (ELF64, x86_64, ET_EXEC/ET_DYN, sane program headers)
 * and find PT_INTERP: 0 with interp[0] possibly 0 (static), or -ENOEXEC. */
int execfmt_elf_interp(execfmt_read_fn rd, void *ctx, char *interp, size_t ilen);

#endif
