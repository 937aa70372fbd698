/* tests/unit/test_common_linediff.c - the line diff of --export's patches
 * (common/linediff.c): hunks checked byte for byte against what
 * `git diff --no-index` (git 2.39, default options) prints for the same two
 * files, edge cases (empty sides, "\ No newline at end of file", CRLF,
 * hunks merged or not, git's funcname in the header, where git's sliders
 * put ambiguous runs), shortest scripts on
 * random texts (against an LCS table, each patch applied back), and the
 * work bound with its whole-middle fallback. */
#include "common/linediff.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *diff_n(const char *a, size_t an, const char *b, size_t bn, unsigned long long max,
		    struct linediff_stats *st)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	cr_assert_not_null(f);
	cr_assert_eq(linediff_write(f, a, an, b, bn, max, st), 0);
	fclose(f);
	return buf;
}

static char *diff(const char *a, const char *b, struct linediff_stats *st)
{
	return diff_n(a, strlen(a), b, strlen(b), LINEDIFF_MAX_WORK, st);
}

/* ---- a small patch applier: the hunks must turn a into b ---- */

struct lns {
	const char **p;
	size_t *len, n;
};

static void lsplit(const char *d, size_t n, struct lns *l)
{
	l->p = calloc(n + 1, sizeof *l->p);
	l->len = calloc(n + 1, sizeof *l->len);
	l->n = 0;
	for (size_t o = 0; o < n;) {
		const char *nl = memchr(d + o, '\n', n - o);
		size_t k = nl ? (size_t)(nl - (d + o)) + 1 : n - o;
		l->p[l->n] = d + o;
		l->len[l->n++] = k;
		o += k;
	}
}

static size_t num(const char **s)
{
	char *e;
	size_t v = strtoul(*s, &e, 10);
	*s = e;
	return v;
}

/* a with the hunks applied (NULL if a hunk does not fit a, or its header's
 * counts are not its lines'); *outn its length */
static char *apply(const char *a, size_t an, const char *patch, size_t *outn)
{
	struct lns A, P;
	char *out = NULL;
	size_t olen = 0, pos = 0, c1 = 0, c2 = 0, n1 = 0, n2 = 0;
	FILE *f = open_memstream(&out, &olen);
	int bad = 0;

	lsplit(a, an, &A);
	lsplit(patch, strlen(patch), &P);
	for (size_t i = 0; i < P.n && !bad; i++) {
		const char *l = P.p[i];
		size_t tl = P.len[i] - 2;   /* the text after the tag, without its '\n' */
		if (!strncmp(l, "@@ -", 4)) {
			const char *s = l + 4;
			size_t s1 = num(&s), s2;
			c1 = c2 = 1;
			if (*s == ',')
				s++, c1 = num(&s);
			if (strncmp(s, " +", 2)) {
				bad = 1;
				break;
			}
			s += 2;
			s2 = num(&s);
			if (*s == ',')
				s++, c2 = num(&s);
			(void)s2;
			size_t at = c1 ? s1 - 1 : s1;
			if (at < pos || at > A.n || n1 != 0 || n2 != 0) {
				bad = 1;
				break;
			}
			for (; pos < at; pos++)
				fwrite(A.p[pos], 1, A.len[pos], f);
			n1 = c1;
			n2 = c2;
			continue;
		}
		if (i + 1 < P.n && !strncmp(P.p[i + 1], "\\ No newline at end of file\n", 28))
			;               /* the line has no '\n' */
		else
			tl++;
		if (l[0] == ' ' || l[0] == '-') {
			if (pos >= A.n || A.len[pos] != tl || memcmp(A.p[pos], l + 1, tl) || !n1) {
				bad = 1;
				break;
			}
			pos++;
			n1--;
		}
		if (l[0] == ' ' || l[0] == '+') {
			if (!n2) {
				bad = 1;
				break;
			}
			fwrite(l + 1, 1, tl, f);
			n2--;
		}
		if (l[0] == '\\')
			continue;
		if (l[0] != ' ' && l[0] != '-' && l[0] != '+')
			bad = 1;
	}
	for (; pos < A.n; pos++)
		fwrite(A.p[pos], 1, A.len[pos], f);
	fclose(f);
	free(A.p);
	free(A.len);
	free(P.p);
	free(P.len);
	if (bad || n1 || n2) {
		free(out);
		return NULL;
	}
	*outn = olen;
	return out;
}

static void applies(const char *a, size_t an, const char *b, size_t bn, const char *patch)
{
	size_t n = 0;
	char *r = apply(a, an, patch, &n);

	cr_assert_not_null(r, "the patch does not fit:\n%s", patch);
	cr_assert(n == bn && !memcmp(r, b, bn), "the patch gives another text:\n%s", patch);
	free(r);
}

/* ---- fixed cases: the expected text is git diff's, from the first @@ ---- */

struct fixed {
	const char *name, *a, *b, *want;
};

static const struct fixed fixed[] = {
	{ "identical", "a\nb\n", "a\nb\n", "" },
	{ "both_empty", "", "", "" },
	{ "add_whole", "", "a\nb\nc\n", "@@ -0,0 +1,3 @@\n+a\n+b\n+c\n" },
	{ "delete_whole", "a\nb\n", "", "@@ -1,2 +0,0 @@\n-a\n-b\n" },
	{ "one_line", "a\n", "b\n", "@@ -1 +1 @@\n-a\n+b\n" },
	{ "add_one_to_empty", "", "x\n", "@@ -0,0 +1 @@\n+x\n" },
	{ "newline_added", "one\ntwo", "one\ntwo\n",
	  "@@ -1,2 +1,2 @@\n one\n-two\n\\ No newline at end of file\n+two\n" },
	{ "newline_removed", "one\ntwo\n", "one\ntwo",
	  "@@ -1,2 +1,2 @@\n one\n-two\n+two\n\\ No newline at end of file\n" },
	{ "both_no_newline", "alpha\nbeta\ngamma", "alpha\nbeta\nGAMMA",
	  "@@ -1,3 +1,3 @@\n alpha\n beta\n-gamma\n\\ No newline at end of file\n+GAMMA\n"
	  "\\ No newline at end of file\n" },
	{ "no_newline_context", "a\nb\nc\nd\ne", "a\nB\nc\nd\ne",
	  "@@ -1,5 +1,5 @@\n a\n-b\n+B\n c\n d\n e\n\\ No newline at end of file\n" },
	{ "no_newline_only_line", "x", "y",
	  "@@ -1 +1 @@\n-x\n\\ No newline at end of file\n+y\n\\ No newline at end of file\n" },
	{ "crlf", "a\r\nb\r\nc\r\n", "a\r\nB\r\nc\r\n", "@@ -1,3 +1,3 @@\n a\r\n-b\r\n+B\r\n c\r\n" },
	{ "crlf_to_lf", "a\r\nb\r\n", "a\nb\r\n", "@@ -1,2 +1,2 @@\n-a\r\n+a\n b\r\n" },
	{ "funcname", "int main(void)\n{\n\tint a;\n\tint b;\n\tint c;\n\tint d;\n\treturn 0;\n}\n",
	  "int main(void)\n{\n\tint a;\n\tint b;\n\tint c;\n\tint d;\n\treturn 1;\n}\n",
	  "@@ -4,5 +4,5 @@ int main(void)\n \tint b;\n \tint c;\n \tint d;\n-\treturn 0;\n+\treturn 1;\n }\n" },
	{ "funcname_long_cut_at_80",
	  "static int a_function_with_a_very_long_name_that_goes_past_eighty_bytes(int argument_one, int two)\r\n"
	  "{\n 1\n 2\n 3\n 4\n}\n",
	  "static int a_function_with_a_very_long_name_that_goes_past_eighty_bytes(int argument_one, int two)\r\n"
	  "{\n 1\n 2\n 3\n four\n}\n",
	  "@@ -3,5 +3,5 @@ static int a_function_with_a_very_long_name_that_goes_past_eighty_bytes(int argu\n"
	  "  1\n  2\n  3\n- 4\n+ four\n }\n" },
	{ "funcname_trailing_blanks_cut", "_start:   \t\n 1\n 2\n 3\n 4\n", "_start:   \t\n 1\n 2\n 3\n 5\n",
	  "@@ -2,4 +2,4 @@ _start:\n  1\n  2\n  3\n- 4\n+ 5\n" },
	{ "funcname_crlf_cut", "f(x)\r\n 1\r\n 2\r\n 3\r\n 4\r\n", "f(x)\r\n 1\r\n 2\r\n 3\r\n 5\r\n",
	  "@@ -2,4 +2,4 @@ f(x)\n  1\r\n  2\r\n  3\r\n- 4\r\n+ 5\r\n" },
	{ "funcname_kept_for_the_next_hunk",
	  "$x\n 1\n 2\n 3\n 4\n 5\n 6\n 7\n 8\n 9\n 10\n 11\n 12\n 13\n 14\n 15\n 16\n 17\n 18\n 19\n 20\n"
	  " 21\n 22\n 23\n 24\n 25\n 26\n 27\n 28\n 29\n 30\n",
	  "$x\n 1\n 2\n 3\n 4\n changed\n 6\n 7\n 8\n 9\n 10\n 11\n 12\n 13\n 14\n 15\n 16\n 17\n 18\n 19\n"
	  " changed\n 21\n 22\n 23\n 24\n 25\n 26\n 27\n 28\n 29\n 30\n",
	  "@@ -3,7 +3,7 @@ $x\n  2\n  3\n  4\n- 5\n+ changed\n  6\n  7\n  8\n"
	  "@@ -18,7 +18,7 @@ $x\n  17\n  18\n  19\n- 20\n+ changed\n  21\n  22\n  23\n" },
	/* sliders: where the added lines go among equal ones */
	{ "slider_lined_up_with_the_other_side", "x4\nx0\nx3\nx4\nx2\n", "x4\nx0\nx3\nx2\nx4\nx2\nx2\n",
	  "@@ -1,5 +1,7 @@\n x4\n x0\n x3\n+x2\n x4\n x2\n+x2\n" },
	{ "slider_indent_heuristic", "/* c */\n\t}\n\t\ty();\n\t\ty();\n",
	  "/* c */\n\t}\n\t}\n\t}\n\t\ty();\n\t\ty();\n",
	  "@@ -1,4 +1,6 @@\n /* c */\n+\t}\n+\t}\n \t}\n \t\ty();\n \t\ty();\n" },
	{ "slider_indent_heuristic_up", "int g(void)\n\treturn 1;\n{\n/* c */\nint f(void)\n\tif (x) {\n",
	  "int g(void)\nint g(void)\n}\n/* c */\nint g(void)\n\treturn 1;\n{\n/* c */\nint f(void)\n\tif (x) {\n",
	  "@@ -1,3 +1,7 @@\n+int g(void)\n+int g(void)\n+}\n+/* c */\n int g(void)\n \treturn 1;\n {\n" },
};

Test(linediff, fixed_cases_are_git_diffs)
{
	for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++) {
		const struct fixed *c = &fixed[i];
		struct linediff_stats st;
		char *got = diff(c->a, c->b, &st);
		cr_expect_str_eq(got, c->want, "%s", c->name);
		cr_expect_eq(st.fell_back, 0, "%s", c->name);
		applies(c->a, strlen(c->a), c->b, strlen(c->b), got);
		free(got);
	}
}

/* "<fmt with i>" for i in 1..n, with edits: 'r' line i becomes rfmt,
 * 'd' line i is gone, 'i' rfmt is added after line i */
struct edit {
	int line;
	char op;
	const char *rfmt;
};

static char *seq(const char *fmt, int n, const struct edit *ed, size_t ned)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	for (int i = 1; i <= n; i++) {
		const struct edit *e = NULL;
		for (size_t k = 0; k < ned; k++)
			if (ed[k].line == i)
				e = &ed[k];
		if (!e || e->op == 'i')
			fprintf(f, fmt, i);
		if (e && e->op != 'd')
			fprintf(f, e->rfmt, i);
	}
	fclose(f);
	return buf;
}

struct gen {
	const char *name, *fmt;
	int n;
	struct edit ed[4];
	size_t ned;
	const char *want;
};

static const struct gen gens[] = {
	{ "six_common_lines_between_one_hunk", "l%d\n", 20, { { 5, 'r', "X%d\n" }, { 12, 'r', "X%d\n" } }, 2,
	  "@@ -2,14 +2,14 @@ l1\n l2\n l3\n l4\n-l5\n+X5\n l6\n l7\n l8\n l9\n l10\n l11\n-l12\n+X12\n l13\n l14\n l15\n" },
	{ "seven_common_lines_between_two_hunks", "l%d\n", 20, { { 5, 'r', "X%d\n" }, { 13, 'r', "X%d\n" } }, 2,
	  "@@ -2,7 +2,7 @@ l1\n l2\n l3\n l4\n-l5\n+X5\n l6\n l7\n l8\n"
	  "@@ -10,7 +10,7 @@ l9\n l10\n l11\n l12\n-l13\n+X13\n l14\n l15\n l16\n" },
	{ "insert_in_the_middle", "l%d\n", 10, { { 5, 'i', "new\n" } }, 1,
	  "@@ -3,6 +3,7 @@ l2\n l3\n l4\n l5\n+new\n l6\n l7\n l8\n" },
	{ "delete_a_block", "l%d\n", 12,
	  { { 4, 'd', NULL }, { 5, 'd', NULL }, { 6, 'd', NULL }, { 7, 'd', NULL } }, 4,
	  "@@ -1,10 +1,6 @@\n l1\n l2\n l3\n-l4\n-l5\n-l6\n-l7\n l8\n l9\n l10\n" },
	{ "top_and_bottom", "row %d\n", 40, { { 2, 'r', "ROW %d\n" }, { 39, 'r', "ROW %d\n" } }, 2,
	  "@@ -1,5 +1,5 @@\n row 1\n-row 2\n+ROW 2\n row 3\n row 4\n row 5\n"
	  "@@ -36,5 +36,5 @@ row 35\n row 36\n row 37\n row 38\n-row 39\n+ROW 39\n row 40\n" },
};

Test(linediff, generated_cases_are_git_diffs)
{
	for (size_t i = 0; i < sizeof gens / sizeof *gens; i++) {
		const struct gen *g = &gens[i];
		char *a = seq(g->fmt, g->n, NULL, 0), *b = seq(g->fmt, g->n, g->ed, g->ned);
		char *got = diff(a, b, NULL);
		cr_expect_str_eq(got, g->want, "%s", g->name);
		applies(a, strlen(a), b, strlen(b), got);
		free(got);
		free(a);
		free(b);
	}
}

/* The case: one line edited near each end of a 10,000-line file is
 * two hunks of 7 lines, not one of ~10,000. */
Test(linediff, long_file_small_hunks)
{
	const struct edit ed[] = { { 2, 'r', "edited %d\n" }, { 9999, 'r', "edited %d\n" } };
	char *a = seq("line %d\n", 10000, NULL, 0), *b = seq("line %d\n", 10000, ed, 2);
	struct linediff_stats st;
	char *got = diff(a, b, &st);

	cr_assert_eq(st.hunks, 2);
	cr_assert_eq(st.removed, 2);
	cr_assert_eq(st.added, 2);
	cr_assert_eq(st.fell_back, 0);
	cr_assert_str_eq(got, "@@ -1,5 +1,5 @@\n line 1\n-line 2\n+edited 2\n line 3\n line 4\n line 5\n"
			 "@@ -9996,5 +9996,5 @@ line 9995\n line 9996\n line 9997\n line 9998\n"
			 "-line 9999\n+edited 9999\n line 10000\n");
	free(got);
	free(a);
	free(b);
}

/* ---- shortest scripts: random texts, the script's length against an LCS
 *      table, every patch applied back ---- */

static size_t lcs(const struct lns *a, const struct lns *b)
{
	size_t *t = calloc((a->n + 1) * (b->n + 1), sizeof *t), r;
#define T(i, k) t[(i) * (b->n + 1) + (k)]
	for (size_t i = a->n; i-- > 0;)
		for (size_t k = b->n; k-- > 0;)
			T(i, k) = a->len[i] == b->len[k] && !memcmp(a->p[i], b->p[k], a->len[i])
				  ? T(i + 1, k + 1) + 1
				  : T(i + 1, k) > T(i, k + 1) ? T(i + 1, k) : T(i, k + 1);
	r = T(0, 0);
#undef T
	free(t);
	return r;
}

static char *random_text(unsigned *seed, int n, int alpha, int nonl, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	for (int i = 0; i < n; i++) {
		int r = rand_r(seed) % (alpha + 2);
		if (r == alpha)
			fputs("\n", f);          /* an empty line */
		else if (r == alpha + 1)
			fputs("x\r\n", f);
		else
			fprintf(f, "w%d\n", r);
	}
	fclose(f);
	if (nonl && *len)
		buf[--*len] = 0;
	return buf;
}

Test(linediff, random_texts_shortest_and_apply)
{
	unsigned seed = 42;

	for (int it = 0; it < 2000; it++) {
		int alpha = 1 + rand_r(&seed) % 12;
		size_t an, bn;
		char *a = random_text(&seed, rand_r(&seed) % 40, alpha, rand_r(&seed) % 4 == 0, &an);
		char *b;
		if (rand_r(&seed) % 2) {
			b = random_text(&seed, rand_r(&seed) % 40, alpha, rand_r(&seed) % 4 == 0, &bn);
		} else {
			/* a few edits of a */
			char *m = NULL;
			size_t ml = 0;
			FILE *f = open_memstream(&m, &ml);
			struct lns L;
			lsplit(a, an, &L);
			for (size_t i = 0; i <= L.n; i++) {
				int r = rand_r(&seed) % 10;
				if (r == 0)
					fprintf(f, "w%d\n", rand_r(&seed) % alpha);
				if (i < L.n && r != 1)
					fwrite(L.p[i], 1, L.len[i], f);
			}
			fclose(f);
			free(L.p);
			free(L.len);
			b = m;
			bn = ml;
		}
		struct linediff_stats st;
		struct lns A, B;
		char *got = diff_n(a, an, b, bn, LINEDIFF_MAX_WORK, &st);
		lsplit(a, an, &A);
		lsplit(b, bn, &B);
		size_t l = lcs(&A, &B);
		cr_assert_eq(st.fell_back, 0);
		cr_assert_eq(st.removed, A.n - l, "case %d:\n%s", it, got);
		cr_assert_eq(st.added, B.n - l, "case %d:\n%s", it, got);
		applies(a, an, b, bn, got);
		free(A.p);
		free(A.len);
		free(B.p);
		free(B.len);
		free(got);
		free(a);
		free(b);
	}
}

/* ---- the bound ---- */

/* Past the work bound: one hunk over the whole changed middle, still a
 * correct patch. */
Test(linediff, fallback_whole_middle)
{
	const struct edit ed[] = { { 5, 'r', "X%d\n" }, { 30, 'r', "X%d\n" } };
	char *a = seq("l%d\n", 40, NULL, 0), *b = seq("l%d\n", 40, ed, 2);
	struct linediff_stats st;
	char *got = diff_n(a, strlen(a), b, strlen(b), 1, &st);

	cr_assert_eq(st.fell_back, 1);
	cr_assert_eq(st.hunks, 1);
	cr_assert_eq(st.removed, 26);
	cr_assert_eq(st.added, 26);
	const char *head = "@@ -2,32 +2,32 @@ l1\n l2\n l3\n l4\n-l5\n-l6\n";

	cr_assert(!strncmp(got, head, strlen(head)), "%s", got);
	applies(a, strlen(a), b, strlen(b), got);
	free(got);
	free(a);
	free(b);
}

/* No line in common (D = 2 x 40,000): the search stops at the bound (one
 * snake past it at most) and falls back. */
Test(linediff, bounded_without_common_lines)
{
	char *a = seq("a%d\n", 40000, NULL, 0), *b = seq("b%d\n", 40000, NULL, 0);
	struct linediff_stats st;
	char *got = diff(a, b, &st);

	cr_assert_eq(st.fell_back, 1);
	cr_assert_leq(st.work, LINEDIFF_MAX_WORK + 80000);
	cr_assert_eq(st.removed, 40000);
	cr_assert_eq(st.added, 40000);
	applies(a, strlen(a), b, strlen(b), got);
	free(got);
	free(a);
	free(b);
}

/* Many equal lines (every snake long) with scattered insertions: a
 * shortest script, well below the bound. */
Test(linediff, bounded_equal_lines)
{
	size_t n = 200000, an = 2 * n, bn = 0;
	char *a = malloc(an), *b = malloc(an + 4 * 2000);
	struct linediff_stats st;

	for (size_t i = 0; i < n; i++) {
		a[2 * i] = 'x';
		a[2 * i + 1] = '\n';
		if (i % 100 == 50) {
			memcpy(b + bn, "y\n", 2);
			bn += 2;
		}
		memcpy(b + bn, "x\n", 2);
		bn += 2;
	}
	char *got = diff_n(a, an, b, bn, LINEDIFF_MAX_WORK, &st);
	cr_assert_leq(st.work, LINEDIFF_MAX_WORK + 2 * n + 4000);
	cr_assert_eq(st.fell_back, 0);          /* ~4.4M steps */
	cr_assert_eq(st.removed, 0);
	cr_assert_eq(st.added, 2000);
	applies(a, an, b, bn, got);
	free(got);
	free(a);
	free(b);
}
