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
