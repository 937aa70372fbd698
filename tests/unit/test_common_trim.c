/* tests/unit/test_common_trim.c - text_trim (common/util.c): the read-only
 * file pages of every loaded object (executable text, rodata) leave this
 * process's page tables (an idle sandbox's PSS), and what was relocated or
 * written stays: a pointer table in RELRO, initialised data, the heap, and
 * code still runs (it is mapped again from the page cache). */
#include "common/util.h"

#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Rss (KiB) of this process's executable file mappings ("r-xp"); with
 * touch, every page of them is read first (all mapped: a fixed before) */
static long text_rss(int touch)
{
	static char buf[1 << 20];
	int fd = open("/proc/self/smaps", O_RDONLY | O_CLOEXEC);
	long kb = 0;
	int in_text = 0;
	size_t n = 0;
	ssize_t r;

	cr_assert_geq(fd, 0);
	while ((r = read(fd, buf + n, sizeof buf - 1 - n)) > 0)
		n += (size_t)r;
	close(fd);
	buf[n] = 0;
	for (char *l = buf, *e; *l; l = e + 1) {
		e = strchr(l, '\n');
		if (!e)
			break;
		*e = 0;
		char perms[8];
		unsigned long lo, hi;
		if (sscanf(l, "%lx-%lx %7s", &lo, &hi, perms) == 3) {
			in_text = strchr(l, '/') && !strcmp(perms, "r-xp");
			for (unsigned long a = lo; touch && in_text && a < hi; a += 4096)
				(void)*(volatile const char *)a;
		}
		long v;
		if (in_text && sscanf(l, "Rss: %ld kB", &v) == 1)
			kb += v;
	}
	return kb;
}

static const char *const words[] = { "relro", "pointers", "survive" };
static int counter = 41;

static int __attribute__((noinline)) add_one(int x)
{
	return x + 1;
}

static int (*volatile fn)(int) = add_one;

Test(common_trim, drops_text_keeps_data)
{
	char *heap = strdup("heap");
	text_rss(1);
	long before = text_rss(0);

	text_trim();
	long after = text_rss(0);
	cr_log_info("text Rss %ld -> %ld KiB", before, after);
	cr_assert_gt(before, 256, "libc and the test's text are mapped (%ld KiB)", before);
	cr_assert_lt(after, before / 4, "text Rss %ld -> %ld KiB", before, after);
	/* relocated and written pages untouched */
	cr_assert_str_eq(words[0], "relro");
	cr_assert_str_eq(words[2], "survive");
	cr_assert_eq(fn(counter), 42);
	cr_assert_str_eq(heap, "heap");
	counter++;
	cr_assert_eq(counter, 42);
	free(heap);
	/* and again: nothing it dropped is needed twice */
	text_trim();
	cr_assert_eq(fn(1), 2);
}
