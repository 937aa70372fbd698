/* platform/guestmem.c - bounded copies to and from guest memory. */
#include "platform/platform.h"

#include <errno.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

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

/* tests (MOAT_TEST_COPYOUT_DELAY=MS:ADDR[:in], set by the pipeline): a
 * handler's copy-out to [ADDR, ADDR + 64 KiB) sleeps MS first, as a worker
 * preempted between its checks and the write; ":in" sleeps inside the copy
 * guard, after its ID_VALID (red team 29) */
int guestmem_test_delay_ms, guestmem_test_delay_in;
uint64_t guestmem_test_delay_addr;
void (*guestmem_test_block)(void); /* the pipeline's: another worker takes the lead */

void guestmem_test_delay(uint64_t addr, int in)
{
	if (in == guestmem_test_delay_in && addr >= guestmem_test_delay_addr &&
	    addr - guestmem_test_delay_addr < (64u << 10)) {
		if (guestmem_test_block)
			guestmem_test_block();
		usleep((useconds_t)guestmem_test_delay_ms * 1000);
	}
}

_Thread_local int guestmem_test_tracer_delay_ms;

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
	if (guestmem_test_tracer_delay_ms)
		usleep((useconds_t)guestmem_test_tracer_delay_ms * 1000);
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
	/* buf ends in a NUL whatever the answer (a caller that names the
	 * path of a failed call in a trace or a warning read on past it:
	 * sentry/exec.c's trace of a 4,096-byte exec path without a NUL read
	 * 4,101 bytes of a 4,096-byte buffer, ASan in CI's sysfuzz) */
	if (max)
		buf[0] = 0;
	if (addr == 0)
		return -EFAULT;
	/* The first read takes at most STR_FIRST bytes: nearly every path is
	 * shorter, and copying the rest of its page (up to 4 KiB: a path in
	 * the heap) was most of the kernel's work in a path's copy-in. A
	 * string may end right before an unmapped page, so a read never runs
	 * into the next page in one piece: the first read's remote side is
	 * split at the page boundary into two iovec elements, which
	 * process_vm_readv transfers whole or not at all (its man page; a
	 * fault in the second answers the first's bytes), so a short path
	 * that crosses a page costs one call, not two (Linux 6.x also returns
	 * the bytes before a fault inside one element: not relied on). Later
	 * reads go page by page. */
	while (got < max) {
		uint64_t a = addr + got;
		size_t chunk = 4096 - (a & 4095);
		struct iovec l, r[2];
		int nr = 1;
		if (got == 0) {
			size_t first = STR_FIRST < max ? STR_FIRST : max;
			if (chunk < first) {
				r[1] = (struct iovec){ (void *)(uintptr_t)(a + chunk), first - chunk };
				nr = 2;
			} else {
				chunk = first;
			}
		} else if (chunk > max - got) {
			chunk = max - got;
		}
		r[0] = (struct iovec){ (void *)(uintptr_t)a, chunk };
		l = (struct iovec){ buf + got, chunk + (nr == 2 ? r[1].iov_len : 0) };
		ssize_t n = process_vm_readv(tid, &l, 1, r, nr, 0);
		if (n <= 0) {
			buf[got] = 0; /* got < max: the bytes before the fault */
			return -EFAULT;
		}
		char *z = memchr(buf + got, 0, n);
		if (z)
			return z - buf;
		got += n;
	}
	if (max)
		buf[max - 1] = 0;
	return -ENAMETOOLONG;
}
