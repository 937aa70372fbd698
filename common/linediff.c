/* common/linediff.c - unified line diff (see linediff.h): the lines, their
 * numbers, Myers' linear-space search, git's hunk framing. */
#include "common/linediff.h"
#include "common/log.h"
#include "common/util.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

#include <limits.h>
#include <stdint.h>
#include <string.h>

struct lines {
	const char **p;
	size_t *len;
	size_t n;
};

static void *xrealloc(void *p, size_t n)
{
	void *r = realloc(p, n ? n : 1);

	if (!r)
		die("out of memory");   /* as xmalloc */
	return r;
}

static void split(const char *d, size_t n, struct lines *l)
{
	size_t cap = 16;

	l->p = xmalloc(cap * sizeof *l->p);
	l->len = xmalloc(cap * sizeof *l->len);
	l->n = 0;
	for (size_t o = 0; o < n;) {
		const char *nl = memchr(d + o, '\n', n - o);
		size_t k = nl ? (size_t)(nl - (d + o)) + 1 : n - o;
		if (l->n == cap) {
			cap *= 2;
			l->p = xrealloc(l->p, cap * sizeof *l->p);
			l->len = xrealloc(l->len, cap * sizeof *l->len);
		}
		l->p[l->n] = d + o;
		l->len[l->n++] = k;
		o += k;
	}
}

static int same(const struct lines *a, size_t i, const struct lines *b, size_t k)
{
	return a->len[i] == b->len[k] && !memcmp(a->p[i], b->p[k], a->len[i]);
}

/* ---- line numbers: equal lines of either text get the same int ---- */

struct classes {
	uint32_t *slot;           /* class + 1, 0 empty */
	size_t mask;
	uint64_t *hash;
	const char **p;
	size_t *len, n;
};

static int class_of(struct classes *c, const char *p, size_t len)
{
	uint64_t h = XXH3_64bits(p, len);

	for (size_t s = (size_t)h & c->mask;; s = (s + 1) & c->mask) {
		uint32_t k = c->slot[s];
		if (!k) {
			c->slot[s] = (uint32_t)++c->n;
			c->hash[c->n - 1] = h;
			c->p[c->n - 1] = p;
			c->len[c->n - 1] = len;
			return (int)c->n - 1;
		}
		k--;
		if (c->hash[k] == h && c->len[k] == len && !memcmp(c->p[k], p, len))
			return (int)k;
	}
}

/* ---- Myers: the middle snake, divide and conquer ---- */

struct search {
	const int *a, *b;         /* line numbers of the middles */
	char *ca, *cb;            /* out: changed lines */
	int *fx, *bx;             /* per diagonal k = x - y: the furthest x a path
				   * reaches from the top left (fx), the least x one
				   * reaches from the bottom right (bx) */
	unsigned long long work, max;
};

/* The point where a shortest path through [o1,l1) x [o2,l2) crosses its
 * middle (both ends already differ): forward paths from the top left and
 * backward paths from the bottom right, one edit more each round, until
 * they overlap on a diagonal. -1 when the work bound is passed. */
static int middle(struct search *s, int o1, int l1, int o2, int l2, int *m1, int *m2)
{
	const int *a = s->a, *b = s->b;
	int *fx = s->fx, *bx = s->bx;
	int klo = o1 - l2, khi = l1 - o2;
	int kf0 = o1 - o2, kb0 = l1 - l2;
	int odd_delta = (kf0 - kb0) & 1;
	int flo = kf0, fhi = kf0, blo = kb0, bhi = kb0;

	fx[kf0] = o1;
	bx[kb0] = l1;
	/* each round one edit more in each direction: the diagonals a path
	 * can reach widen by one on each side (a sentinel beyond them), or
	 * step back inside where they meet the box's edge */
	for (;;) {
		if (flo > klo)
			fx[--flo - 1] = -1;
		else
			++flo;
		if (fhi < khi)
			fx[++fhi + 1] = -1;
		else
			--fhi;
		for (int k = fhi; k >= flo; k -= 2) {
			int x = fx[k - 1] >= fx[k + 1] ? fx[k - 1] + 1 : fx[k + 1];
			int y = x - k;
			int x0 = x;
			while (x < l1 && y < l2 && a[x] == b[y])
				x++, y++;
			s->work += 1 + (unsigned)(x - x0);
			if (s->work > s->max)
				return -1;
			fx[k] = x;
			if (odd_delta && blo <= k && k <= bhi && bx[k] <= x) {
				*m1 = x;
				*m2 = y;
				return 0;
			}
		}
		if (blo > klo)
			bx[--blo - 1] = INT_MAX;
		else
			++blo;
		if (bhi < khi)
			bx[++bhi + 1] = INT_MAX;
		else
			--bhi;
		for (int k = bhi; k >= blo; k -= 2) {
			int x = bx[k - 1] < bx[k + 1] ? bx[k - 1] : bx[k + 1] - 1;
			int y = x - k;
			int x0 = x;
			while (x > o1 && y > o2 && a[x - 1] == b[y - 1])
				x--, y--;
			s->work += 1 + (unsigned)(x0 - x);
			if (s->work > s->max)
				return -1;
			bx[k] = x;
			if (!odd_delta && flo <= k && k <= fhi && x <= fx[k]) {
				*m1 = x;
				*m2 = y;
				return 0;
			}
		}
	}
}

static int is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static void mark(char *c, int from, int to)
{
	if (to > from)
		memset(c + from, 1, (size_t)(to - from));
}

/* Mark the lines of [o1,l1) and [o2,l2) a shortest script changes; -1 when
 * the work bound is passed. */
static int compare(struct search *s, int o1, int l1, int o2, int l2)
{
	for (;;) {
		int m1, m2, o1s = o1, l1s = l1;

		while (o1 < l1 && o2 < l2 && s->a[o1] == s->b[o2])
			o1++, o2++;
		while (o1 < l1 && o2 < l2 && s->a[l1 - 1] == s->b[l2 - 1])
			l1--, l2--;
		s->work += (unsigned)(o1 - o1s) + (unsigned)(l1s - l1);
		if (o1 == l1 || o2 == l2) {
			mark(s->ca, o1, l1);
			mark(s->cb, o2, l2);
			return 0;
		}
		if (middle(s, o1, l1, o2, l2, &m1, &m2) < 0)
			return -1;
		if ((m1 == o1 && m2 == o2) || (m1 == l1 && m2 == l2)) {
			/* no progress (never seen): a correct, longer script */
			mark(s->ca, o1, l1);
			mark(s->cb, o2, l2);
			return 0;
		}
		if (compare(s, o1, m1, o2, m2) < 0)
			return -1;
		o1 = m1;
		o2 = m2;
	}
}


/* ---- sliders: where a shortest script may put a run of added (or
 *      removed) lines in several places, put it where git diff does ----
 *
 * git's compaction with its default indent heuristic, rebuilt from its
 * documented behaviour: each run of changed lines of one text is slid up
 * and down as far as equal lines allow (merging with runs it meets); if
 * some position lines it up with a change in the other text, the lowest
 * such one is taken, else the position whose two boundaries score best by
 * blank lines and indentation (looking at most 100 positions up). */

struct side {
	const struct lines *l;
	char *c;                  /* changed marks, c[-1] and c[n] are 0 */
	size_t n;
};

struct group {
	size_t start, end;        /* changed lines [start, end) */
};

static void group_first(const struct side *s, struct group *g)
{
	g->start = g->end = 0;
	while (s->c[g->end])
		g->end++;
}

static int group_next(const struct side *s, struct group *g)
{
	if (g->end == s->n)
		return -1;
	g->start = g->end + 1;
	for (g->end = g->start; s->c[g->end]; g->end++)
		;
	return 0;
}

static int group_prev(const struct side *s, struct group *g)
{
	if (g->start == 0)
		return -1;
	g->end = g->start - 1;
	for (g->start = g->end; s->c[(ptrdiff_t)g->start - 1]; g->start--)
		;
	return 0;
}

static int slide_down(struct side *s, struct group *g)
{
	if (g->end >= s->n || !same(s->l, g->start, s->l, g->end))
		return -1;
	s->c[g->start++] = 0;
	s->c[g->end++] = 1;
	while (s->c[g->end])
		g->end++;
	return 0;
}

static int slide_up(struct side *s, struct group *g)
{
	if (g->start == 0 || !same(s->l, g->start - 1, s->l, g->end - 1))
		return -1;
	s->c[--g->start] = 1;
	s->c[--g->end] = 0;
	while (s->c[(ptrdiff_t)g->start - 1])
		g->start--;
	return 0;
}

/* columns of leading blanks (a tab to the next multiple of 8), at most
 * 200; -1 for a blank line */
static int indent_of(const struct lines *l, size_t i)
{
	int r = 0;

	for (size_t k = 0; k < l->len[i]; k++) {
		char c = l->p[i][k];
		if (!is_space(c))
			return r;
		if (c == ' ')
			r++;
		else if (c == '\t')
			r += 8 - r % 8;
		if (r >= 200)
			return 200;
	}
	return -1;
}

struct score {
	int indent, penalty;
};

/* the score of a boundary above line at (smaller is better) */
static void score_split(const struct lines *l, size_t at, struct score *s)
{
	int eof = at >= l->n, ind = eof ? -1 : indent_of(l, at);
	int pre_blank = 0, pre_ind = -1, post_blank = 0, post_ind = -1;

	for (size_t i = at; i-- > 0;) {
		if ((pre_ind = indent_of(l, i)) != -1)
			break;
		if (++pre_blank == 20) {
			pre_ind = 0;
			break;
		}
	}
	for (size_t i = at + 1; i < l->n; i++) {
		if ((post_ind = indent_of(l, i)) != -1)
			break;
		if (++post_blank == 20) {
			post_ind = 0;
			break;
		}
	}
	int blank_after = ind == -1 ? 1 + post_blank : 0, total = pre_blank + blank_after;
	int eff = ind != -1 ? ind : post_ind;

	if (pre_ind == -1 && pre_blank == 0)
		s->penalty += 1;                /* start of the file */
	if (eof)
		s->penalty += 21;               /* end of the file */
	s->penalty += -30 * total + 6 * blank_after;
	s->indent += eff;
	if (eff == -1 || pre_ind == -1 || eff == pre_ind)
		return;
	if (eff > pre_ind)
		s->penalty += total ? 10 : -4;  /* indented more than above */
	else if (post_ind != -1 && post_ind > eff)
		s->penalty += total ? 17 : 24;  /* a block's start */
	else
		s->penalty += total ? 17 : 23;  /* a block's end */
}

static int score_cmp(const struct score *a, const struct score *b)
{
	return 60 * ((a->indent > b->indent) - (a->indent < b->indent)) + a->penalty - b->penalty;
}

static void compact(struct side *x, struct side *o)
{
	struct group g, go;

	group_first(x, &g);
	group_first(o, &go);
	for (;;) {
		if (g.end != g.start) {
			size_t size, earliest;
			ptrdiff_t aligned;
			do {
				size = g.end - g.start;
				aligned = -1;
				while (!slide_up(x, &g))
					group_prev(o, &go);
				earliest = g.end;
				if (go.end > go.start)
					aligned = (ptrdiff_t)g.end;
				while (!slide_down(x, &g)) {
					group_next(o, &go);
					if (go.end > go.start)
						aligned = (ptrdiff_t)g.end;
				}
			} while (size != g.end - g.start);
			if (g.end == earliest) {
				/* it cannot move */
			} else if (aligned != -1) {
				while (go.end == go.start && !slide_up(x, &g))
					group_prev(o, &go);
			} else {
				size_t shift = earliest, best = 0;
				struct score bs = { 0, 0 };
				int have = 0;
				if (g.end >= size + 1 && g.end - size - 1 > shift)
					shift = g.end - size - 1;
				if (g.end >= 100 && g.end - 100 > shift)
					shift = g.end - 100;
				for (; shift <= g.end; shift++) {
					struct score sc = { 0, 0 };
					score_split(x->l, shift, &sc);
					score_split(x->l, shift - size, &sc);
					if (!have || score_cmp(&sc, &bs) <= 0) {
						bs = sc;
						best = shift;
						have = 1;
					}
				}
				while (g.end > best && !slide_up(x, &g))
					group_prev(o, &go);
			}
		}
		if (group_next(x, &g))
			break;
		group_next(o, &go);
	}
}

/* ---- the hunks ---- */

/* git's default funcname rule (xdiff def_ff): a line that starts with a
 * letter, '_' or '$', cut to 80 bytes, trailing blanks cut; -1 if none */
static long func_name(const char *p, size_t n, char *buf)
{
	if (!n || !((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '_' ||
		    *p == '$'))
		return -1;
	if (n > 80)
		n = 80;
	while (n && is_space(p[n - 1]))
		n--;
	memcpy(buf, p, n);
	return (long)n;
}

static void put_line(FILE *f, char tag, const char *p, size_t n)
{
	fputc(tag, f);
	fwrite(p, 1, n, f);
	if (!n || p[n - 1] != '\n')
		fputs("\n\\ No newline at end of file\n", f);
}

struct change {
	size_t i1, n1, i2, n2;    /* a's lines [i1, i1+n1) become b's [i2, i2+n2) */
};

static void header(FILE *f, size_t s1, size_t c1, size_t s2, size_t c2, const char *fn,
		   long fl)
{
	char buf[128];
	int nb;

	nb = snprintf(buf, sizeof buf, "@@ -%zu", c1 ? s1 + 1 : s1);
	if (c1 != 1)
		nb += snprintf(buf + nb, sizeof buf - (size_t)nb, ",%zu", c1);
	nb += snprintf(buf + nb, sizeof buf - (size_t)nb, " +%zu", c2 ? s2 + 1 : s2);
	if (c2 != 1)
		nb += snprintf(buf + nb, sizeof buf - (size_t)nb, ",%zu", c2);
	nb += snprintf(buf + nb, sizeof buf - (size_t)nb, " @@");
	if (fl > 0) {
		buf[nb++] = ' ';
		if ((size_t)fl > sizeof buf - (size_t)nb - 1)
			fl = (long)(sizeof buf - (size_t)nb - 1);
		memcpy(buf + nb, fn, (size_t)fl);
		nb += (int)fl;
	}
	buf[nb++] = '\n';
	fwrite(buf, 1, (size_t)nb, f);
}

static void emit(FILE *f, const struct lines *a, const struct lines *b, const char *ca,
		 const char *cb, struct linediff_stats *st)
{
	const size_t ctx = LINEDIFF_CONTEXT;
	struct change *ch = NULL;
	size_t nch = 0, cap = 0, i = 0, k = 0, flim = 0;
	char fn[80];
	long fl = 0;

	while (i < a->n || k < b->n) {
		if ((i < a->n && ca[i]) || (k < b->n && cb[k])) {
			struct change c = { .i1 = i, .i2 = k };
			while (i < a->n && ca[i])
				i++;
			while (k < b->n && cb[k])
				k++;
			c.n1 = i - c.i1;
			c.n2 = k - c.i2;
			if (nch == cap) {
				cap = cap ? 2 * cap : 16;
				ch = xrealloc(ch, cap * sizeof *ch);
			}
			ch[nch++] = c;
		} else {
			i++, k++;
		}
	}
	for (size_t h = 0; h < nch;) {
		size_t e = h;
		while (e + 1 < nch && ch[e + 1].i1 - (ch[e].i1 + ch[e].n1) <= 2 * ctx)
			e++;
		size_t s1 = ch[h].i1 > ctx ? ch[h].i1 - ctx : 0;
		size_t s2 = ch[h].i2 > ctx ? ch[h].i2 - ctx : 0;
		size_t lctx = ctx, end1 = ch[e].i1 + ch[e].n1, end2 = ch[e].i2 + ch[e].n2;
		if (lctx > a->n - end1)
			lctx = a->n - end1;
		if (lctx > b->n - end2)
			lctx = b->n - end2;
		/* the function line: searched back from the hunk to where the
		 * last search began (git's funclineprev), else the last one found */
		for (size_t l = s1; l > flim; l--) {
			long r = func_name(a->p[l - 1], a->len[l - 1], fn);
			if (r >= 0) {
				fl = r;
				break;
			}
		}
		flim = s1;
		header(f, s1, end1 + lctx - s1, s2, end2 + lctx - s2, fn, fl);
		for (size_t l = s1; l < ch[h].i1; l++)
			put_line(f, ' ', a->p[l], a->len[l]);
		for (size_t c = h; c <= e; c++) {
			if (c > h)
				for (size_t l = ch[c - 1].i1 + ch[c - 1].n1; l < ch[c].i1; l++)
					put_line(f, ' ', a->p[l], a->len[l]);
			for (size_t l = ch[c].i1; l < ch[c].i1 + ch[c].n1; l++)
				put_line(f, '-', a->p[l], a->len[l]);
			for (size_t l = ch[c].i2; l < ch[c].i2 + ch[c].n2; l++)
				put_line(f, '+', b->p[l], b->len[l]);
			st->removed += ch[c].n1;
			st->added += ch[c].n2;
		}
		for (size_t l = end1; l < end1 + lctx; l++)
			put_line(f, ' ', a->p[l], a->len[l]);
		st->hunks++;
		h = e + 1;
	}
	free(ch);
}

int linediff_write(FILE *f, const char *a, size_t an, const char *b, size_t bn,
		   unsigned long long max_work, struct linediff_stats *st)
{
	struct linediff_stats dummy;
	struct lines la, lb;
	size_t P = 0, S = 0, N, M;
	char *ca, *cb;

	if (!st)
		st = &dummy;
	memset(st, 0, sizeof *st);
	split(a, an, &la);
	split(b, bn, &lb);
	while (P < la.n && P < lb.n && same(&la, P, &lb, P))
		P++;
	while (S < la.n - P && S < lb.n - P && same(&la, la.n - 1 - S, &lb, lb.n - 1 - S))
		S++;
	N = la.n - P - S;
	M = lb.n - P - S;
	ca = (char *)xcalloc(la.n + 2, 1) + 1;  /* ca[-1] and ca[n]: 0 */
	cb = (char *)xcalloc(lb.n + 2, 1) + 1;
	if (N && M && N + M <= LINEDIFF_MAX_LINES) {
		struct classes c = { .mask = 1 };
		struct search s = { .ca = ca + P, .cb = cb + P, .max = max_work };
		int *ida = xmalloc(N * sizeof *ida), *idb = xmalloc(M * sizeof *idb);
		int *kv = xmalloc(2 * (N + M + 3) * sizeof *kv);

		while (c.mask + 1 < 2 * (N + M))
			c.mask = 2 * c.mask + 1;
		c.slot = xcalloc(c.mask + 1, sizeof *c.slot);
		c.hash = xmalloc((N + M) * sizeof *c.hash);
		c.p = xmalloc((N + M) * sizeof *c.p);
		c.len = xmalloc((N + M) * sizeof *c.len);
		for (size_t i = 0; i < N; i++)
			ida[i] = class_of(&c, la.p[P + i], la.len[P + i]);
		for (size_t i = 0; i < M; i++)
			idb[i] = class_of(&c, lb.p[P + i], lb.len[P + i]);
		s.a = ida;
		s.b = idb;
		s.fx = kv + M + 1;
		s.bx = s.fx + (N + M + 3);
		if (compare(&s, 0, (int)N, 0, (int)M) < 0) {
			memset(ca + P, 1, N);
			memset(cb + P, 1, M);
			st->fell_back = 1;
		}
		st->work = s.work;
		free(kv);
		free(ida);
		free(idb);
		free(c.slot);
		free(c.hash);
		free(c.p);
		free(c.len);
	} else {
		/* one side's middle is empty (the script is exact), or too long */
		memset(ca + P, 1, N);
		memset(cb + P, 1, M);
		st->fell_back = N && M;
	}
	struct side sa = { &la, ca, la.n }, sb = { &lb, cb, lb.n };
	compact(&sa, &sb);
	compact(&sb, &sa);
	emit(f, &la, &lb, ca, cb, st);
	free(ca - 1);
	free(cb - 1);
	free(la.p);
	free(la.len);
	free(lb.p);
	free(lb.len);
	return ferror(f) ? -1 : 0;
}
