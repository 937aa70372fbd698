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
