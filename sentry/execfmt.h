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

/* Read len bytes at off: the count read (short at the end of the file),
 * or -errno. */
typedef ssize_t (*execfmt_read_fn)(void *ctx, void *buf, size_t len, off_t off);

/* Linux 6.x reads at most 65536 bytes of program headers (1170 of them) */
#define EXECFMT_PHDRS_MAX 65536

/* Check a program's ELF header as Linux does before its point of no return
 * (the magic, x86_64, ET_EXEC/ET_DYN, its program headers all read; not
 * e_ident's class, byte order, version or OS ABI) and find its
 * first PT_INTERP: 1 with its name in interp (possibly "", which the open
 * refuses), 0 for none (interp ""), -ENOEXEC, or the PT_INTERP string's read
 * error (-EIO when short). */
int execfmt_elf_interp(execfmt_read_fn rd, void *ctx, char *interp, size_t ilen);

/* Check an ELF interpreter as Linux does before its point of no return: its
 * header read (-EIO when short), ELF magic and x86_64, its program headers
 * all read; else -ELIBBAD. Its own PT_INTERP is not looked at. */
int execfmt_elf_interp_check(execfmt_read_fn rd, void *ctx);

#endif
