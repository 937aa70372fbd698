/* Unit tests for the dentry cache and the inode maps (fs/dcache.c): what a
 * deep tree makes them hold stays within their byte budgets, and what fits
 * is still found. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "fs/dcache.h"

static char *long_name(char *buf, size_t len, int i)
{
	memset(buf, 'a', len - 16);
	snprintf(buf + len - 16, 16, "/%d", i);
	return buf;
}

Test(fs_dcache, names_bounded)
{
	static char name[8000];
	struct dcache *d = dcache_new();
	struct stat st = { .st_mode = S_IFDIR | 0755 };
	for (int i = 0; i < DCACHE_SIZE; i++)
		dcache_put(d, dcache_gen(d), 0, long_name(name, sizeof name, i), &st, 0, NULL);
	cr_assert_leq(dcache_bytes(d), 4u << 20, "%zu bytes", dcache_bytes(d));
	cr_assert_gt(dcache_bytes(d), 3u << 20, "%zu bytes: the budget is used", dcache_bytes(d));
	/* the last one is there */
	int neg = -1;
	cr_assert(dcache_get(d, 0, long_name(name, sizeof name, DCACHE_SIZE - 1), &st, &neg, NULL, 0));
	/* short names are not limited by it */
	struct dcache *e = dcache_new();
	for (int i = 0; i < DCACHE_SIZE; i++) {
		char n[32];
		snprintf(n, sizeof n, "f%d", i);
		dcache_put(e, dcache_gen(e), 0, n, &st, 0, NULL);
	}
	cr_assert(dcache_get(e, 0, "f0", &st, &neg, NULL, 0), "a short name evicted");
	dcache_free(d);
	dcache_free(e);
}

Test(fs_dcache, inomap_paths_bounded)
{
	static char name[8000];
	struct inomap *m = inomap_new();
	for (int i = 0; i < INOMAP_SIZE; i++)
		inomap_put(m, 1, (ino_t)i + 1, long_name(name, sizeof name, i));
	cr_assert_leq(inomap_bytes(m), 4u << 20, "%zu bytes", inomap_bytes(m));
	char out[8192];
	cr_assert_eq(inomap_get(m, 1, INOMAP_SIZE, out, sizeof out), 0, "the newest is kept");
	inomap_renamed(m, "aaaa", "b");
	cr_assert_leq(inomap_bytes(m), 4u << 20);
	inomap_free(m);
}

static long rss_kib(void)
{
	long pages = 0, res = 0;
	FILE *f = fopen("/proc/self/statm", "r");
	if (f) {
		if (fscanf(f, "%ld %ld", &pages, &res) != 2)
			res = 0;
		fclose(f);
	}
	return res * 4;
}

/* A few hundred names (an idle sandbox: the loader's and the program's
 * first look-ups) touch pages in proportion to them, not to the tables'
 * capacity: fixed hash tables spread them over every page (PSS). */
Test(fs_dcache, small_use_small_rss)
{
	struct stat st = { .st_mode = S_IFREG | 0644 };
	long before = rss_kib();
	struct dcache *d = dcache_new();
	struct inomap *m[4];
	for (int k = 0; k < 4; k++)
		m[k] = inomap_new();
	for (int i = 0; i < 200; i++) {
		char n[32];
		snprintf(n, sizeof n, "usr/lib/f%d", i);
		dcache_put(d, dcache_gen(d), 0, n, &st, 0, NULL);
		for (int k = 0; k < 4; k++)
			inomap_put(m[k], 1, (ino_t)i + 1, n);
	}
	long grew = rss_kib() - before; /* (the test runner's own threads add ~100-200) */
	cr_assert_lt(grew, 768, "%ld KiB for 200 names in the dcache and four inode maps", grew);
	for (int k = 0; k < 4; k++)
		inomap_free(m[k]);
	dcache_free(d);
}

/* The tables grow under their entries: everything put is found again. */
Test(fs_dcache, growth_keeps_entries)
{
	struct dcache *d = dcache_new();
	struct inomap *m = inomap_new();
	char n[32], out[64];
	int neg;
	for (int i = 0; i < 6000; i++) {
		struct stat st = { .st_mode = S_IFREG | 0644, .st_ino = (ino_t)i + 1 };
		snprintf(n, sizeof n, "d/f%d", i);
		dcache_put(d, dcache_gen(d), 0, n, &st, 0, NULL);
		inomap_put(m, 7, (ino_t)i + 1, n);
	}
	dcache_drop(d, 0, "d/f17", 0);
	for (int i = 0; i < 6000; i++) {
		struct stat st;
		snprintf(n, sizeof n, "d/f%d", i);
		cr_assert_eq(dcache_get(d, 0, n, &st, &neg, NULL, 0), i != 17, "%s", n);
		if (i != 17)
			cr_assert_eq(st.st_ino, (ino_t)i + 1);
		cr_assert_eq(inomap_get(m, 7, (ino_t)i + 1, out, sizeof out), 0, "%s", n);
		cr_assert_str_eq(out, n);
	}
	dcache_drop(d, 0, "d", 1);
	cr_assert_eq(dcache_get(d, 0, "d/f5", NULL, &neg, NULL, 0), 0);
	inomap_free(m);
	dcache_free(d);
}

/* Complete directories (dcache_mark_complete): a miss beneath a directory
 * the sentry made is an absent name only while every change of a name in it
 * left an entry; any entry beneath it leaving the cache, a drop of a name in
 * it that was not cached, or a new store of the directory unmarks it. */
Test(fs_dcache, complete_dir_unmarked_by_every_loss)
{
	struct dcache *d = dcache_new();
	struct stat dir = { .st_mode = S_IFDIR | 0755, .st_ino = 2 };
	struct stat reg = { .st_mode = S_IFREG | 0644, .st_ino = 3 };
	unsigned long g;
	int neg;

	/* marked only as a positive directory, with no drop since gen */
	g = dcache_gen(d);
	dcache_put(d, g, 0, "f", &reg, 0, NULL);
	cr_assert(!dcache_mark_complete(d, g, 0, "f"), "a file marked");
	g = dcache_gen(d);
	dcache_put(d, g, 0, "o", &dir, 0, NULL);
	dcache_drop(d, 0, "other", 0);
	cr_assert(!dcache_mark_complete(d, g, 0, "o"), "marked across a drop");
	cr_assert(dcache_mark_complete(d, dcache_gen(d), 0, "o"));
	cr_assert(dcache_parent_complete(d, 0, "o/x"));
	cr_assert(!dcache_parent_complete(d, 0, "o/x/y"), "a grandchild");
	cr_assert(!dcache_parent_complete(d, 0, "p/x"));

	/* stores of names in it keep it; a sentry unlink's negative entry too */
	g = dcache_gen(d);
	cr_assert(dcache_put_bump(d, &g, 0, "o/a", &reg));
	cr_assert(dcache_put_neg_bump(d, &g, 0, "o/a"));
	cr_assert(dcache_get(d, 0, "o/a", NULL, &neg, NULL, 0) && neg);
	cr_assert(dcache_parent_complete(d, 0, "o/x"), "unmarked by a store");
	/* a cached name is the cache's to answer, never taken for absent */
	g = dcache_gen(d);
	cr_assert(dcache_put_bump(d, &g, 0, "o/c", &reg));
	cr_assert(!dcache_parent_complete(d, 0, "o/c"), "a cached name taken for absent");
	cr_assert(!dcache_parent_complete(d, 0, "o/a"), "a negative entry bypassed");

	/* a drop of a cached name in it (a rename, a symlink made) */
	dcache_drop(d, 0, "o/a", 0);
	cr_assert(!dcache_parent_complete(d, 0, "o/x"), "a dropped entry kept the mark");
	/* a drop of a name never cached in it */
	cr_assert(dcache_mark_complete(d, dcache_gen(d), 0, "o"));
	dcache_drop(d, 0, "o/never", 0);
	cr_assert(!dcache_parent_complete(d, 0, "o/x"), "an uncached drop kept the mark");
	/* a put_bump that cannot store (a drop ran since) drops instead */
	cr_assert(dcache_mark_complete(d, dcache_gen(d), 0, "o"));
	g = dcache_gen(d) - 1;
	cr_assert(!dcache_put_neg_bump(d, &g, 0, "o/b"));
	cr_assert(!dcache_parent_complete(d, 0, "o/x"), "a failed store kept the mark");
	/* a new store of the directory itself */
	cr_assert(dcache_mark_complete(d, dcache_gen(d), 0, "o"));
	dcache_put(d, dcache_gen(d), 0, "o", &dir, 0, NULL);
	cr_assert(!dcache_parent_complete(d, 0, "o/x"), "a re-store kept the mark");
	/* a drop of the subtree above it (a rename of an ancestor) */
	g = dcache_gen(d);
	dcache_put(d, g, 0, "o/s", &dir, 0, NULL);
	cr_assert(dcache_mark_complete(d, g, 0, "o/s"));
	dcache_drop(d, 0, "o", 1);
	cr_assert(!dcache_parent_complete(d, 0, "o/s/x"));
	dcache_free(d);
}

/* an entry beneath a complete directory evicted by the clock unmarks it:
 * the name would otherwise be answered absent */
Test(fs_dcache, complete_dir_unmarked_by_eviction)
{
	struct dcache *d = dcache_new();
	struct stat dir = { .st_mode = S_IFDIR | 0755, .st_ino = 2 };
	struct stat reg = { .st_mode = S_IFREG | 0644, .st_ino = 3 };
	char n[32];
	int neg;
	struct stat st;

	/* the table full, c and c/kept in its last two slots */
	for (int i = 0; i < DCACHE_SIZE - 2; i++) {
		snprintf(n, sizeof n, "y/f%d", i);
		dcache_put(d, dcache_gen(d), 0, n, &reg, 0, NULL);
	}
	unsigned long g = dcache_gen(d);
	dcache_put(d, g, 0, "c", &dir, 0, NULL);
	cr_assert(dcache_mark_complete(d, g, 0, "c"));
	cr_assert(dcache_put_bump(d, &g, 0, "c/kept", &reg));
	cr_assert(dcache_parent_complete(d, 0, "c/x"));
	/* the clock's first lap clears every bit, then evicts in order */
	for (int i = 0; i < DCACHE_SIZE; i++) {
		snprintf(n, sizeof n, "z/f%d", i);
		dcache_put(d, dcache_gen(d), 0, n, &reg, 0, NULL);
		/* the directory's own entry referenced (a get sets the clock
		 * bit), not c/kept: the file goes first */
		dcache_get(d, 0, "c", &st, &neg, NULL, 0);
	}
	cr_assert(!dcache_get(d, 0, "c/kept", &st, &neg, NULL, 0), "c/kept never evicted");
	cr_assert(dcache_get(d, 0, "c", &st, &neg, NULL, 0), "c evicted");
	cr_assert(!dcache_parent_complete(d, 0, "c/kept"), "evicted, still marked");
	dcache_free(d);
}
