/* platform/guestmem.c - bounded copies to and from guest memory. */
#include "platform/platform.h"

#include <errno.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>

/* MOAT_PROFILE: this thread's wall time in guest_write since the last
 * guest_io_take() (the pipeline's "out-copy" stage); off, one branch. */
int guestmem_profile;
static _Thread_local unsigned long long gio_ns;

static unsigned long long gio_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ULL + (unsigned long long)ts.tv_nsec;
}

unsigned long long guest_io_take(void)
{
	unsigned long long ns = gio_ns;
	gio_ns = 0;
	return ns;
}

int guest_read(pid_t tid, uint64_t addr, void *buf, size_t len)
{
	struct iovec l = { buf, len }, r = { (void *)(uintptr_t)addr, len };
	if (len == 0)
		return 0;
	ssize_t n = process_vm_readv(tid, &l, 1, &r, 1, 0);
	if (n < 0)
		return errno == ESRCH ? -ESRCH : -EFAULT;
	return (size_t)n == len ? 0 : -EFAULT;
}

int guest_write(pid_t tid, uint64_t addr, const void *buf, size_t len)
{
	struct iovec l = { (void *)buf, len }, r = { (void *)(uintptr_t)addr, len };
	if (len == 0)
		return 0;
	unsigned long long t0 = guestmem_profile ? gio_now() : 0;
	ssize_t n = process_vm_writev(tid, &l, 1, &r, 1, 0);
	if (t0)
		gio_ns += gio_now() - t0;
	if (n < 0)
		return errno == ESRCH ? -ESRCH : -EFAULT;
	return (size_t)n == len ? 0 : -EFAULT;
}

#define STR_FIRST 256

long guest_read_str(pid_t tid, uint64_t addr, char *buf, size_t max)
{
	size_t got = 0;
	if (addr == 0)
		return -EFAULT;
	/* Read page by page: a string may end right before an unmapped page.
	 * The first read takes at most STR_FIRST bytes: nearly every path is
	 * shorter, and copying the rest of its page (up to 4 KiB: a path in
	 * the heap) was most of the kernel's work in a path's copy-in. */
	while (got < max) {
		uint64_t a = addr + got;
		size_t chunk = 4096 - (a & 4095);
		if (got == 0 && chunk > STR_FIRST)
			chunk = STR_FIRST;
		if (chunk > max - got)
			chunk = max - got;
		struct iovec l = { buf + got, chunk }, r = { (void *)(uintptr_t)a, chunk };
		ssize_t n = process_vm_readv(tid, &l, 1, &r, 1, 0);
		if (n <= 0)
			return -EFAULT;
		char *z = memchr(buf + got, 0, n);
		if (z)
			return z - buf;
		got += n;
	}
	return -ENAMETOOLONG;
}
