/* tests/unit/test_common_termfilter.c - -t's terminal-controls filter
 * (common/termfilter.c): what draws passes as written, queries, control
 * strings, resets and C1 controls are dropped, a sequence split across
 * reads is held until its end, and the end undoes the modes left on. */
#include "common/termfilter.h"

#include <criterion/criterion.h>
#include <string.h>

/* the output of s fed in pieces of `step` bytes (0: at once) */
static const char *run(struct term_filter *f, const char *s, size_t step)
{
	static unsigned char out[8192];
	size_t n = strlen(s), o = 0;
	if (!step)
		step = n ? n : 1;
	for (size_t i = 0; i < n; i += step) {
		size_t k = n - i < step ? n - i : step;
		o += term_filter(f, (const unsigned char *)s + i, k, out + o);
	}
	out[o] = 0;
	return (const char *)out;
}

static const char *once(const char *s, int utf8, size_t step)
{
	static struct term_filter f;
	term_filter_init(&f, utf8);
	return run(&f, s, step);
}

Test(termfilter, screen_controls_pass)
{
	const char *s = "a\r\n\tb\033[1;31mred\033[38:2:1:2:3m\033[0m\033[2J\033[H\033[10;20H"
			"\033[K\033[3;20r\033[?25l\033[?1049h\0337\0338\033(0q\033(B\016\017\033[2 q\bz";
	for (size_t step = 0; step < 4; step++)
		cr_assert_str_eq(once(s, 1, step), s, "step %zu", step);
	cr_assert_str_eq(once("h\xc3\xa9 \xc5\x9b \xe2\x82\xac", 1, 1), "h\xc3\xa9 \xc5\x9b \xe2\x82\xac");
}

Test(termfilter, queries_and_strings_dropped)
{
	const char *s = "a\033]52;c;aGVsbG8=\007b\033]0;title\033\\c\033[21t\033[20t\033[6n\033[c"
			"\033[>c\033P$qm\033\\d\033Ptmux;\033\033]52;c;eA==\007\033\\e\033]8;;http://x\033\\"
			"f\033]1337;File=a:b\007g\033_Gf=1\033\\h\033^pm\033\\i\033Xsos\033\\j\033c\033[!p"
			"\033[2h\033[?2$p\033Z\005k\033[?1;2c\033]4;1;?\007\033]11;?\007l\033[?9999h";
	for (size_t step = 0; step < 4; step++)
		cr_assert_str_eq(once(s, 1, step), "abcdefghijkl", "step %zu", step);
}

Test(termfilter, c1_controls_dropped)
{
	/* UTF-8: U+009B and U+009D (C2 9B, C2 9D) and stray continuation bytes */
	cr_assert_str_eq(once("a\xc2\x9b" "6nb\xc2\x9d" "52;c;x\x07" "c\x9b" "d", 1, 0), "a6nb52;c;x\x07" "cd");
	cr_assert_str_eq(once("a\xc2\xa0" "b", 1, 1), "a\xc2\xa0" "b");
	/* overlong forms of ESC and CSI (C0 9B, C1 9B, E0 82 9B, F0 80 82 9B) */
	cr_assert_str_eq(once("a\xc0\x9b" "b\xc1\x9b" "c\xe0\x82\x9b" "d\xf0\x80\x82\x9b" "e", 1, 1), "abc\xe0" "d\xf0" "e");
	/* Latin-1: raw 0x9b opens a CSI (dropped with it), 0x9d an OSC to BEL or ST */
	cr_assert_str_eq(once("a\x9b" "6nb\x9d" "52;c;x\x07" "c\x90" "$qm\x9c" "d\xe9", 0, 0), "abcd\xe9");
}

Test(termfilter, modes_restored)
{
	struct term_filter f;
	char r[512];
	term_filter_init(&f, 1);
	run(&f, "\033[?1049h\033[?25l\033[?1000;1006h\033[?2004h\033[5;10r\033=\033[1m", 3);
	r[term_filter_restore(&f, r, sizeof r)] = 0;
	cr_assert_str_eq(r, "\033[?1049l\033[?25h\033[?1000l\033[?1006l\033[?2004l\0337\033[r\0338\033>\033[0m");
	/* what the program turned off again stays */
	term_filter_init(&f, 1);
	run(&f, "\033[?1049h\033[?2004h\033[?1049l\033[?2004l", 0);
	cr_assert_eq(term_filter_restore(&f, r, sizeof r), 0);
}

Test(termfilter, locale)
{
	cr_assert(term_filter_locale_utf8(NULL, NULL, "en_US.UTF-8"));
	cr_assert(term_filter_locale_utf8("C.utf8", NULL, "fr_FR.ISO-8859-1"));
	cr_assert(!term_filter_locale_utf8(NULL, "de_DE.ISO-8859-1", "en_US.UTF-8"));
	cr_assert(term_filter_locale_utf8(NULL, NULL, NULL));
	cr_assert(term_filter_locale_utf8(NULL, NULL, "C"));
	cr_assert(term_filter_locale_utf8("POSIX", NULL, "en_US.ISO-8859-1"));
	cr_assert(!term_filter_locale_utf8(NULL, NULL, "en_US"));
}
