/* common/termfilter.c - the terminal-controls filter of `moat run -t`'s
 * output: a small ECMA-48 parser (ground, ESC, CSI, the control strings)
 * whose state carries over from one read to the next.
 *
 * What is emitted is only text, the C0 controls that move or ring (BEL, BS,
 * HT, LF, VT, FF, CR, SO, SI) and whole sequences checked against an
 * allowlist, written again from the parser's copy: the terminal never sees
 * a partial sequence of the guest's, so nothing the guest writes later can
 * complete or reopen one. Dropped: every control string (OSC: titles,
 * colours and their queries, OSC 52 clipboard, OSC 8 links, OSC 7/9/777/1337
 * notifications and file transfer, OSC 50 font; DCS: DECRQSS, sixel,
 * XTGETTCAP, tmux passthrough; SOS, PM, APC: kitty graphics), every query
 * (DSR, DA, DECRQM, window reports `CSI t`, ENQ, DECID), resets (RIS `ESC
 * c`, DECSTR `CSI ! p`), keyboard locks and the modes not in dec_modes, and
 * the 8-bit C1 controls: raw 0x80-0x9f on a terminal that is not UTF-8 (a
 * Latin-1 one reads 0x9b as CSI), U+0080-U+009F (C2 80-C2 9F) and stray
 * continuation bytes on a UTF-8 one. */
#include "common/termfilter.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

enum { TF_GROUND, TF_ESC, TF_CSI, TF_STR, TF_STR_ESC, TF_IGNORE };

enum {
	TFO_SCROLL = 1,  /* DECSTBM set a region */
	TFO_IRM = 2,     /* CSI 4 h: insert mode */
	TFO_KEYPAD = 4,  /* ESC =: application keypad */
	TFO_CURSOR = 8,  /* CSI Ps SP q: cursor style */
	TFO_CHARSET = 16,/* a designation or SO */
	TFO_SGR = 32,    /* any SGR */
};

/* The DEC private modes passed on (CSI ? Pm h / l), and whether the mode is
 * on by default (the end puts each back when the guest changed it). Mouse
 * and focus reporting, bracketed paste, the alternate screen, application
 * cursor keys: what vim, less, top and readline use. */
static const struct {
	unsigned short n;
	unsigned char on;
} dec_modes[] = {
	{ 1049, 0 }, { 1047, 0 }, { 47, 0 }, /* the alternate screen: left first */
	{ 1, 0 },    { 5, 0 },    { 6, 0 },    { 7, 1 },    { 9, 0 },    { 12, 0 },
	{ 25, 1 },   { 66, 0 },   { 1000, 0 }, { 1002, 0 }, { 1003, 0 },
	{ 1004, 0 }, { 1005, 0 }, { 1006, 0 }, { 1015, 0 }, { 1016, 0 }, { 1048, 0 },
	{ 2004, 0 }, { 2026, 0 },
};
#define N_DEC (sizeof dec_modes / sizeof dec_modes[0])

void term_filter_init(struct term_filter *f, int utf8)
{
	memset(f, 0, sizeof *f);
	f->utf8 = utf8;
}

static int dec_index(unsigned long v)
{
	for (size_t i = 0; i < N_DEC; i++)
		if (dec_modes[i].n == v)
			return (int)i;
	return -1;
}

/* CSI ? Pm h / l: rewritten with the allowed modes only; 0 if none */
static size_t csi_dec(struct term_filter *f, const unsigned char *p, size_t np, unsigned char fin,
		      unsigned char *out)
{
	size_t o = 0;
	unsigned long v = 0;
	int digits = 0;
	out[o++] = 0x1b;
	out[o++] = '[';
	out[o++] = '?';
	for (size_t i = 0; i <= np; i++) {
		if (i < np && p[i] >= '0' && p[i] <= '9') {
			if (v < 100000)
				v = v * 10 + (unsigned long)(p[i] - '0');
			digits = 1;
			continue;
		}
		if (i < np && p[i] != ';')
			return 0; /* a colon or a marker: not a mode list */
		int k = digits ? dec_index(v) : -1;
		if (k >= 0) {
			int len = snprintf((char *)out + o, 8, "%s%u", o > 3 ? ";" : "", dec_modes[k].n);
			o += (size_t)len;
			if ((fin == 'h') != dec_modes[k].on)
				f->dec |= 1ull << k;
			else
				f->dec &= ~(1ull << k);
		} else {
			f->dropped++;
		}
		v = 0;
		digits = 0;
	}
	if (o == 3)
		return 0;
	out[o++] = fin;
	return o;
}

/* A complete CSI sequence in f->seq (ESC [ params intermediates final):
 * its length in out when it only draws, else 0 */
static size_t csi_done(struct term_filter *f, unsigned char *out)
{
	const unsigned char *s = f->seq + 2;
	size_t n = f->len - 2;
	unsigned char fin = s[n - 1];
	unsigned char mark = n > 1 && s[0] >= 0x3c && s[0] <= 0x3f ? s[0] : 0;
	size_t np = 0, ni = 0;
	if (mark) {
		s++;
		n--;
	}
	while (np < n - 1 && s[np] >= 0x30 && s[np] <= 0x3f)
		np++;
	while (np + ni < n - 1 && s[np + ni] >= 0x20 && s[np + ni] <= 0x2f)
		ni++;
	if (np + ni != n - 1)
		return 0; /* a parameter byte after an intermediate */
	for (size_t i = 0; i < np; i++)
		if (s[i] >= 0x3c) /* a second marker */
			return 0;
	int colon = memchr(s, ':', np) != NULL;
	if (mark == '?' && !ni && (fin == 'h' || fin == 'l'))
		return csi_dec(f, s, np, fin, out);
	if (mark)
		return 0;
	if (ni) {
		/* DECSCUSR, the cursor's shape: CSI Ps SP q */
		if (ni == 1 && s[np] == ' ' && fin == 'q' && !colon) {
			f->others |= TFO_CURSOR;
			goto pass;
		}
		return 0;
	}
	if (colon && fin != 'm')
		return 0;
	switch (fin) {
	case 'm':
		f->others |= TFO_SGR;
		goto pass;
	case 'h':
	case 'l': /* ANSI modes: insert mode only (not KAM's keyboard lock, SRM's echo, LNM) */
		if (np == 1 && s[0] == '4') {
			if (fin == 'h')
				f->others |= TFO_IRM;
			else
				f->others &= ~(unsigned)TFO_IRM;
			goto pass;
		}
		return 0;
	case 'r': /* DECSTBM */
		if (np)
			f->others |= TFO_SCROLL;
		else
			f->others &= ~(unsigned)TFO_SCROLL;
		goto pass;
	case 's':
	case 'u': /* save and restore the cursor, without parameters only */
		if (np)
			return 0;
		goto pass;
	case 'T': /* scroll down; with 5 parameters xterm's mouse highlight tracking */
		if (memchr(s, ';', np))
			return 0;
		goto pass;
	case '@': case 'A': case 'B': case 'C': case 'D': case 'E': case 'F': case 'G':
	case 'H': case 'I': case 'J': case 'K': case 'L': case 'M': case 'P': case 'S':
	case 'X': case 'Z': case '`': case 'a': case 'b': case 'd': case 'e': case 'f':
	case 'g':
		goto pass;
	default: /* DSR n, DA c, window ops and reports t, DECRQM $p, media copy i, DECLL q... */
		return 0;
	}
pass:
	memcpy(out, f->seq, f->len);
	return f->len;
}

/* A complete ESC sequence in f->seq (ESC intermediates final) */
static size_t esc_done(struct term_filter *f, unsigned char *out)
{
	unsigned char fin = f->seq[f->len - 1];
	if (f->len == 2) {
		switch (fin) {
		case '=':
			f->others |= TFO_KEYPAD;
			break;
		case '>':
			f->others &= ~(unsigned)TFO_KEYPAD;
			break;
		case '7': case '8': case 'D': case 'E': case 'H': case 'M': case 'N': case 'O':
			break;
		default: /* RIS c, DECID Z, locking shifts n o | } ~, ST alone... */
			return 0;
		}
	} else if (f->len == 3) {
		unsigned char i = f->seq[1];
		if (i == '#') {
			if (!strchr("34568", fin))
				return 0;
		} else if (strchr("()*+-./", i)) {
			f->others |= TFO_CHARSET;
		} else { /* S7C1T/S8C1T (SP F/G), ESC % (leaving UTF-8)... */
			return 0;
		}
	} else {
		return 0;
	}
	memcpy(out, f->seq, f->len);
	return f->len;
}

/* printable ASCII, BEL, BS, HT, LF, VT, FF, CR: passed as they are */
static inline int plain(unsigned char c)
{
	return (unsigned char)(c - 0x20) < 0x5f || (unsigned char)(c - 0x07) < 7;
}

size_t term_filter(struct term_filter *f, const unsigned char *in, size_t n, unsigned char *out)
{
	size_t o = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = in[i];
		if (f->state == TF_GROUND) {
			if (plain(c)) {
				/* a run of printable ASCII and line controls at once */
				if (f->c2_held) {
					out[o++] = 0xc2;
					f->c2_held = 0;
				}
				f->u8_left = 0;
				size_t j = i + 1;
				while (j < n && plain(in[j]))
					j++;
				memcpy(out + o, in + i, j - i);
				o += j - i;
				i = j - 1;
				continue;
			}
			if (c >= 0x80) {
				if (!f->utf8) {
					if (c <= 0x9f) { /* an 8-bit C1 control (CSI 0x9b, OSC 0x9d...) */
						f->dropped++;
						if (c == 0x9b)
							goto csi;
						if (c == 0x9d || c == 0x90 || c == 0x98 || c == 0x9e || c == 0x9f)
							goto str;
						continue;
					}
					out[o++] = c;
					continue;
				}
				if (f->c2_held) {
					f->c2_held = 0;
					if (c <= 0x9f) { /* U+0080-U+009F: C1 on a UTF-8 terminal */
						f->dropped++;
						f->u8_left = 0;
						continue;
					}
					out[o++] = 0xc2;
					out[o++] = c;
					f->u8_left = 0;
					continue;
				}
				if (c <= 0xbf) { /* a continuation byte */
					if (f->u8_left && c >= f->u8_lo) {
						f->u8_left--;
						f->u8_lo = 0x80;
						out[o++] = c;
					} else { /* stray, or an overlong form (E0 82 9B is U+009B) */
						f->u8_left = 0;
						f->dropped++;
					}
					continue;
				}
				f->u8_left = 0;
				if (c == 0xc2) {
					f->c2_held = 1;
					continue;
				}
				if (c < 0xc2 || c > 0xf4) { /* C0 9B, C1 9B: ESC and CSI overlong */
					f->dropped++;
					continue;
				}
				f->u8_left = c >= 0xf0 ? 3 : c >= 0xe0 ? 2 : 1;
				f->u8_lo = c == 0xe0 ? 0xa0 : c == 0xf0 ? 0x90 : 0x80;
				out[o++] = c;
				continue;
			}
			/* a C0 control or DEL */
			if (f->c2_held) {
				out[o++] = 0xc2;
				f->c2_held = 0;
			}
			f->u8_left = 0;
			if (c == 0x1b) {
				f->state = TF_ESC;
				f->seq[0] = c;
				f->len = 1;
			} else if ((c >= 0x07 && c <= 0x0f) || c == 0x7f) {
				if (c == 0x0e)
					f->others |= TFO_CHARSET;
				out[o++] = c;
			} else {
				f->dropped++; /* ENQ (answerback), NUL, XON/XOFF, CAN, SUB... */
			}
			continue;
		}
		/* inside a sequence or string */
		if (f->state == TF_STR || f->state == TF_STR_ESC) {
			int was_esc = f->state == TF_STR_ESC;
			f->state = TF_STR;
			if (c == 0x07 || c == 0x18 || c == 0x1a || (!f->utf8 && c == 0x9c) ||
			    (was_esc && c == '\\')) {
				f->state = TF_GROUND; /* BEL, CAN, SUB, ST: the string is over */
			} else if (c == 0x1b) {
				f->state = TF_STR_ESC;
			} else if (was_esc) {
				/* ESC and another byte: the string ended, a sequence starts */
				f->seq[0] = 0x1b;
				f->len = 1;
				f->state = TF_ESC;
				i--;
			}
			continue;
		}
		if (c == 0x18 || c == 0x1a || c >= 0x80) {
			/* CAN, SUB or an 8-bit byte: the sequence is abandoned
			 * (nothing of it was written) */
			f->dropped++;
			f->state = TF_GROUND;
			if (c >= 0x80)
				i--;
			continue;
		}
		if (c == 0x1b) { /* a new sequence */
			f->dropped++;
			f->seq[0] = c;
			f->len = 1;
			f->state = TF_ESC;
			continue;
		}
		if (c < 0x20 || c == 0x7f) {
			/* a control within a sequence acts at once (as on the terminal) */
			if (c >= 0x07 && c <= 0x0f)
				out[o++] = c;
			continue;
		}
		if (f->state == TF_ESC && f->len == 1) {
			if (c == '[') {
			csi:
				f->seq[0] = 0x1b;
				f->seq[1] = '[';
				f->len = 2;
				f->state = TF_CSI;
				continue;
			}
			if (c == ']' || c == 'P' || c == 'X' || c == '^' || c == '_') {
			str:
				f->dropped++;
				f->state = TF_STR;
				continue;
			}
		}
		if (f->state == TF_IGNORE) {
			if (c >= 0x40)
				f->state = TF_GROUND;
			continue;
		}
		if (f->len >= sizeof f->seq) {
			f->dropped++;
			f->state = c >= 0x40 && c <= 0x7e ? TF_GROUND : TF_IGNORE;
			continue;
		}
		f->seq[f->len++] = c;
		if (f->state == TF_ESC && c >= 0x30) {
			size_t w = esc_done(f, out + o);
			o += w;
			f->dropped += !w;
			f->state = TF_GROUND;
		} else if (f->state == TF_CSI && c >= 0x40) {
			size_t w = csi_done(f, out + o);
			o += w;
			f->dropped += !w;
			f->state = TF_GROUND;
		}
	}
	return o;
}

size_t term_filter_restore(const struct term_filter *f, char *out, size_t cap)
{
	size_t o = 0;
	if (cap < 256)
		return 0;
	for (size_t k = 0; k < N_DEC; k++)
		if (f->dec & (1ull << k))
			o += (size_t)snprintf(out + o, cap - o, "\033[?%u%c", dec_modes[k].n,
					      dec_modes[k].on ? 'h' : 'l');
	if (f->others & TFO_SCROLL) /* DECSTBM homes the cursor: kept around it */
		o += (size_t)snprintf(out + o, cap - o, "\0337\033[r\0338");
	if (f->others & TFO_IRM)
		o += (size_t)snprintf(out + o, cap - o, "\033[4l");
	if (f->others & TFO_KEYPAD)
		o += (size_t)snprintf(out + o, cap - o, "\033>");
	if (f->others & TFO_CURSOR)
		o += (size_t)snprintf(out + o, cap - o, "\033[0 q");
	if (f->others & TFO_CHARSET)
		o += (size_t)snprintf(out + o, cap - o, "\033(B\017");
	if (f->others & TFO_SGR)
		o += (size_t)snprintf(out + o, cap - o, "\033[0m");
	return o;
}

static int says_utf8(const char *s)
{
	const char *d = s ? strchr(s, '.') : NULL;
	if (!d)
		return 0;
	d++;
	return strncasecmp(d, "utf-8", 5) == 0 || strncasecmp(d, "utf8", 4) == 0;
}

int term_filter_locale_utf8(const char *lc_all, const char *lc_ctype, const char *lang)
{
	const char *v = lc_all && *lc_all ? lc_all : lc_ctype && *lc_ctype ? lc_ctype : lang;
	/* no locale, C or POSIX says nothing of the terminal, which today is
	 * UTF-8 (the 8-bit rule would cut every UTF-8 character with a byte
	 * in 0x80-0x9f: an em dash, curly quotes); only a locale naming
	 * another character set (en_US.ISO-8859-1, or en_US: glibc's Latin-1)
	 * gets it. The UTF-8 rule drops C1 as U+0080-U+009F and stray bytes. */
	if (!v || !*v || !strcmp(v, "C") || !strcmp(v, "POSIX") || !strncmp(v, "C.", 2))
		return 1;
	return says_utf8(v);
}
