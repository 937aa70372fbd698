/* tests/unit/test_common_quote.c - moat_quote_path and moat_cp_hidden
 * (common/util.c), the one rule for guest names in moat's output for
 * people (red team 50): git's core.quotePath form in the export's patch
 * (git apply reads it back), the strict form in `moat diff`'s lines. */
#include "common/util.h"

#include <criterion/criterion.h>
#include <string.h>

static const char *q(const char *prefix, const char *s, int strict)
{
	static char out[256];
	moat_quote_path(out, sizeof out, prefix, s, strict);
	return out;
}

Test(common_quote, plain_ascii_as_is)
{
	cr_assert_str_eq(q("a/", "src/main.c", 0), "a/src/main.c");
	cr_assert_str_eq(q("b/", "my file.txt", 0), "b/my file.txt");
	cr_assert_str_eq(q("", "x -> y", 0), "x -> y");
}

Test(common_quote, git_form_for_other_bytes)
{
	/* as git diff writes them (checked with git 2.39) */
	cr_assert_str_eq(q("a/", "rlo\xe2\x80\xaetxt", 0), "\"a/rlo\\342\\200\\256txt\"");
	cr_assert_str_eq(q("b/", "alm\xd8\x9cx", 0), "\"b/alm\\330\\234x\"");
	cr_assert_str_eq(q("", "t\tn\nq\"b\\e\x1b", 0), "\"t\\tn\\nq\\\"b\\\\e\\033\"");
	cr_assert_str_eq(q("", "del\x7f", 0), "\"del\\177\"");
}

Test(common_quote, strict_quotes_ambiguous_names)
{
	cr_assert_str_eq(q("", "x -> y", 1), "\"x -> y\"");
	cr_assert_str_eq(q("", "t ", 1), "\"t \"");
	cr_assert_str_eq(q("", " s", 1), "\" s\"");
	cr_assert_str_eq(q("", "p: q", 1), "\"p: q\"");
	cr_assert_str_eq(q("", "d b/q b", 1), "d b/q b");
}

Test(common_quote, cut_never_within_an_escape)
{
	char out[8];
	size_t n = moat_quote_path(out, sizeof out, "", "\xe2\x80\xae\xe2", 0);
	cr_assert_eq(n, strlen(out));
	cr_assert_str_eq(out, "\"\\342");          /* the next \\ooo does not fit */
	n = moat_quote_path(out, 1, "", "abc", 0);
	cr_assert_eq(n, 0);
	cr_assert_str_eq(out, "");
}

Test(common_quote, hidden_code_points)
{
	static const uint32_t hidden[] = { 0x80, 0x9b, 0x9f, 0x61c, 0x200e, 0x200f, 0x2028, 0x2029,
					   0x202a, 0x202e, 0x2066, 0x2069 };
	static const uint32_t shown[] = { 0x7e, 0xa0, 0xe9, 0x200d, 0x2030, 0x2065, 0x206a };
	for (size_t i = 0; i < sizeof hidden / sizeof hidden[0]; i++)
		cr_assert(moat_cp_hidden(hidden[i]), "U+%04x", hidden[i]);
	for (size_t i = 0; i < sizeof shown / sizeof shown[0]; i++)
		cr_assert(!moat_cp_hidden(shown[i]), "U+%04x", shown[i]);
}

/* moat_escape_text: moat's messages and --trace lines (red teams 15, 23,
 * 86): every byte outside printable ASCII as \ooo, an escape never cut,
 * the cut said. */
Test(common_quote, escape_text)
{
	char out[16];
	int cut = 0;
	size_t n = moat_escape_text(out, sizeof out, 0, "a\033]52;\n\\", 8, 1, &cut);
	cr_assert_str_eq(out, "a\\033]52;\\012");
	cr_assert_eq(n, strlen(out));
	cr_assert_eq(cut, 1); /* the backslash's \134 did not fit */
	cut = 0;
	n = moat_escape_text(out, sizeof out, 0, "x\\\xc2\x9b", 4, 0, &cut);
	cr_assert_str_eq(out, "x\\\\302\\233");
	cr_assert_eq(cut, 0);
	n = moat_escape_text(out, sizeof out, 2, "yz", 2, 0, &cut);
	cr_assert_eq(n, 4);
	cr_assert_eq(memcmp(out, "x\\yz", 5), 0);
}
