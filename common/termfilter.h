/* common/termfilter.h - the terminal-controls filter of `moat run -t`'s
 * output (--tty-controls=screen, the default): what reaches the caller's
 * terminal is text and the controls that only draw on its screen; queries
 * (answered into the terminal's input), strings (OSC, DCS, SOS, PM, APC:
 * clipboard, titles, colours, hyperlinks, file transfer, passthrough) and
 * resets are dropped, and the modes the guest turned on are undone at the
 * end (term_filter_restore). See ARCHITECTURE "Terminals". */
#ifndef MOAT_COMMON_TERMFILTER_H
#define MOAT_COMMON_TERMFILTER_H

#include <stddef.h>

#define TERM_FILTER_SEQ_MAX 128 /* a longer CSI or ESC sequence is dropped */

struct term_filter {
	int state;       /* TF_* in termfilter.c */
	int utf8;        /* the caller's terminal decodes UTF-8 (else 8-bit C1) */
	int u8_left;     /* continuation bytes a UTF-8 character still has */
	unsigned char u8_lo; /* the least next continuation byte (no overlong form) */
	int c2_held;     /* a 0xC2 held: U+0080-U+009F are C1 controls */
	size_t len;      /* of seq */
	unsigned char seq[TERM_FILTER_SEQ_MAX];
	unsigned long long dec;  /* DEC private modes away from their default (a bit each) */
	unsigned others; /* TFO_*: the other state the end undoes */
	unsigned long long dropped; /* sequences and controls dropped */
};

void term_filter_init(struct term_filter *f, int utf8);
/* Filters n bytes of output into out, which holds n + TERM_FILTER_SEQ_MAX
 * bytes; a sequence split across calls is held until its end. The length
 * written. */
size_t term_filter(struct term_filter *f, const unsigned char *in, size_t n, unsigned char *out);
/* The controls that undo the modes the output turned on (alternate screen,
 * hidden cursor, mouse and focus reporting, bracketed paste, application
 * keys, scroll region, insert mode, cursor style, charsets, SGR), written to
 * out (cap >= 256); 0 when nothing is on. */
size_t term_filter_restore(const struct term_filter *f, char *out, size_t cap);
/* Whether a locale's names (LC_ALL, LC_CTYPE, LANG, the first set) say UTF-8 */
int term_filter_locale_utf8(const char *lc_all, const char *lc_ctype, const char *lang);

#endif
