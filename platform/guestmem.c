/* platform/guestmem.c - bounded copies to and from guest memory. */
#include "platform/platform.h"

#include <errno.h>
#include <string.h>
#include <sys/uio.h>

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
	ssize_t n = process_vm_writev(tid, &l, 1, &r, 1, 0);
	if (n < 0)
		return errno == ESRCH ? -ESRCH : -EFAULT;
	return (size_t)n == len ? 0 : -EFAULT;
}

long guest_read_str(pid_t tid, uint64_t addr, char *buf, size_t max)
{
	size_t got = 0;
	if (addr == 0)
		return -EFAULT;
	/* Read page by page: a string may end right before an unmapped page. */
	while (got < max) {
		uint64_t a = addr + got;
		size_t chunk = 4096 - (a & 4095);
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
