/* tests/unit/test_platform_guestmem.c - guest_read_str (platform/guestmem.c)
 * at page boundaries, read from this process through its own pid: a path
 * that ends right before an unmapped page is read whole, one that runs into
 * it is EFAULT, one that crosses into a mapped page is read whole, and long
 * strings past the first read and ENAMETOOLONG still work; a failed read
 * leaves buf ended by a NUL. */
#include "platform/platform.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static char *pages; /* three pages: rw, rw, none */

static void setup(void)
{
	pages = mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	cr_assert(pages != MAP_FAILED);
	cr_assert(mprotect(pages + 2 * 4096, 4096, PROT_NONE) == 0);
	memset(pages, 'a', 2 * 4096);
}

static void teardown(void)
{
	munmap(pages, 3 * 4096);
}

static long rd(const char *at, char *buf, size_t max)
{
	return guest_read_str(getpid(), (uint64_t)(uintptr_t)at, buf, max);
}

/* s, len bytes then a NUL put there ('a' again after), reads whole (what
 * and i name the case) */
static void reads_whole(char *s, int len, const char *what, int i)
{
	char buf[4096];
	s[len] = 0;
	long r = rd(s, buf, sizeof buf);
	cr_assert_eq(r, len, "%s %d: %ld", what, i, r);
	cr_assert_eq(memcmp(buf, s, len + 1), 0);
	s[len] = 'a';
}

Test(guestmem, ends_before_unmapped_page, .init = setup, .fini = teardown)
{
	for (int len = 0; len < 300; len++) /* its NUL: the last mapped byte */
		reads_whole(pages + 3 * 4096 - 4096 - len - 1, len, "len", len);
}

Test(guestmem, runs_into_unmapped_page, .init = setup, .fini = teardown)
{
	char buf[4096];
	for (int len = 1; len < 300; len++) {
		char *s = pages + 2 * 4096 - len; /* no NUL before the unmapped page */
		memset(buf, 'x', sizeof buf);
		cr_assert_eq(rd(s, buf, sizeof buf), -EFAULT, "len %d", len);
		/* what was read before the fault, ended: a caller that
		 * names the failed path reads no further than buf */
		cr_assert_lt(strnlen(buf, sizeof buf), sizeof buf, "len %d: no NUL", len);
	}
}

Test(guestmem, crosses_into_mapped_page, .init = setup, .fini = teardown)
{
	for (int off = 1; off < 300; off++) /* starts off bytes before the page boundary */
		reads_whole(pages + 4096 - off, 200, "off", off);
}

Test(guestmem, long_strings_and_limit, .init = setup, .fini = teardown)
{
	char buf[4096];
	char *s = pages + 100;
	s[5000] = 0; /* crosses a page boundary past the first read */
	cr_assert_eq(rd(s, buf, sizeof buf), -ENAMETOOLONG);
	cr_assert_eq(strnlen(buf, sizeof buf), sizeof buf - 1, "ends in a NUL");
	memset(buf, 'x', sizeof buf);
	cr_assert_eq(guest_read_str(getpid(), 0, buf, sizeof buf), -EFAULT);
	cr_assert_eq(buf[0], 0);
	s[3000] = 0;
	cr_assert_eq(rd(s, buf, sizeof buf), 3000);
	cr_assert_eq(memcmp(buf, s, 3001), 0);
	char small[16];
	cr_assert_eq(rd(s, small, sizeof small), -ENAMETOOLONG);
	s[15] = 0;
	cr_assert_eq(rd(s, small, sizeof small), 15);
	s = pages + 4096 - 8; /* max below the first read, across the boundary */
	s[12] = 0;
	cr_assert_eq(rd(s, small, sizeof small), 12);
	cr_assert_eq(rd(s, small, 0), -ENAMETOOLONG);
	cr_assert_eq(guest_read_str(getpid(), 0, buf, sizeof buf), -EFAULT);
}
