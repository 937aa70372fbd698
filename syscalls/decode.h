/* syscalls/decode.h - strace-like text for a trapped call (--trace, --audit).
 *
 * Decoding reads only what the pipeline already copied: c->args, c->str[i]
 * (PATH/STR arguments) and c->buf[i]/c->buflen[i] (OPEN_HOW, SOCKADDR, and
 * ARGV as consecutive NUL-terminated strings). It never touches guest memory,
 * so an argument that was not copied prints as its address.
 *
 * Every function writes at most outlen bytes including the terminating NUL
 * (always written when outlen > 0), never splits an escape sequence, and
 * returns the number of characters written (not counting the NUL).
 */
#ifndef MOAT_SYSCALLS_DECODE_H
#define MOAT_SYSCALLS_DECODE_H

#include <stddef.h>
#include <stdint.h>

#include "syscalls/sc.h"

/* strace's default string limit: longer STR arguments print 32 chars + "...".
 * Paths are printed whole, as strace does. */
#define SC_DECODE_STRMAX 32

/* `AT_FDCWD, "/etc/passwd", O_RDONLY|O_CLOEXEC, 0` (no parentheses). */
size_t sc_decode_args(const struct sc_call *c, char *out, size_t outlen);

/* "3", "0x7f..." for address results, or "-1 ENOENT (No such file or
 * directory)" for -4095 <= ret < 0. e may be NULL. */
size_t sc_decode_ret(const struct sysent *e, long ret, char *out, size_t len);

/* `openat(AT_FDCWD, "/etc/passwd", O_RDONLY) = 3`: the whole trace line
 * (without newline). */
size_t sc_decode_call(const struct sc_call *c, long ret, char *out, size_t len);

/* "ENOENT" for 2; "E123"-style text from a static buffer is never returned:
 * unknown values give NULL. err is positive. */
const char *sc_errno_name(int err);

/* Name of an argument kind ("PATH", "FD"...), for listings. */
const char *sc_argkind_name(int kind);

/* C-style quoting as strace does it: "a\nb", non-printable and non-ASCII bytes
 * as octal escapes. At most max bytes of s are shown (s need not end within
 * them); if s is longer, `...` follows the closing quote. max == 0 means no
 * limit. The one quoting of a guest string in an audit event's args and
 * notes (red team 86). Output that does not fit outlen ends in "..."
 * (also for sc_decode_args and json_escape, when outlen > 8). */
size_t sc_quote_str(char *out, size_t outlen, const char *s, size_t max);

/* JSON string body escaping (no surrounding quotes): ", \ and control
 * characters escaped; valid UTF-8 passes through but for the code points a
 * reader does not see as text (C1 controls, U+2028/U+2029, bidirectional
 * marks: \uXXXX); each byte of an invalid
 * UTF-8 sequence becomes \ufffd (callers that need the exact bytes quote
 * them with sc_quote_str first, which keeps the text ASCII). */
size_t json_escape(char *out, size_t outlen, const char *s);

#endif
