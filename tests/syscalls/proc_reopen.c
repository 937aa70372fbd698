/* open("/proc/self/fd/N", O_RDONLY) of a regular file held read-write (a
 * memfd) makes a NEW open file description, read-only:
 * writes through it fail, its offset is its own (Chromium hands such fds to
 * its renderers). */
#include "t.h"
#include <sys/mman.h>

static void one(const char *name, int fd)
{
	char p[64], b[8] = { 0 };
	if (write(fd, "hello", 5) != 5)
		t_fail(name, "write: %s", strerror(errno));
	snprintf(p, sizeof p, "/proc/self/fd/%d", fd);
	int ro = open(p, O_RDONLY | O_CLOEXEC);
	if (ro < 0) {
		t_fail(name, "reopen: %s", strerror(errno));
		return;
	}
	int fl = fcntl(ro, F_GETFL);
	errno = 0;
	ssize_t w = pwrite(ro, "X", 1, 0);
	int werr = errno;
	ssize_t r = read(ro, b, 5); /* its own offset: 0, not the writer's 5 */
	CHECK((fl & O_ACCMODE) == O_RDONLY && w < 0 && werr == EBADF && r == 5 && !strcmp(b, "hello"),
	      name, "flags %#x pwrite %zd (%s) read %zd [%s]", fl, w, strerror(werr), r, b);
	/* what Chromium checks of a read-only shared-memory handle: no writable
	 * shared mapping, and the same file as the writable one */
	struct stat sa, sb;
	void *wm = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, ro, 0);
	int merr = errno;
	void *rm = mmap(NULL, 4096, PROT_READ, MAP_SHARED, ro, 0);
	char n2[96];
	snprintf(n2, sizeof n2, "%s_mmap_and_identity", name);
	CHECK(wm == MAP_FAILED && merr == EACCES && rm != MAP_FAILED && fstat(fd, &sa) == 0 && fstat(ro, &sb) == 0 &&
		      sa.st_ino == sb.st_ino && sa.st_dev == sb.st_dev,
	      n2, "writable mmap %s (%s), read mmap %s", wm == MAP_FAILED ? "failed" : "succeeded", strerror(merr),
	      rm == MAP_FAILED ? "failed" : "ok");
	if (wm != MAP_FAILED)
		munmap(wm, 4096);
	if (rm != MAP_FAILED)
		munmap(rm, 4096);
	close(ro);
}

int main(int argc, char **argv)
{
	t_setup(argc, argv, "proc_reopen");
	int m = memfd_create("moat-test", MFD_CLOEXEC);
	if (ftruncate(m, 4096) != 0)
		t_fail("memfd_setup", "ftruncate: %s", strerror(errno));
	one("memfd_reopen_rdonly", m);
	close(m);
	/* (an unlinked file of a host export is not covered yet: the sentry's
	 * unprivileged uid cannot reopen a file the gofer created; see
	 * ARCHITECTURE.md known gaps) */
	/* O_TRUNC through a memfd's /proc name truncates it (LTP memfd_create01) */
	{
		int mfd = memfd_create("trunc", 0);
		char pp[64];
		struct stat mst;
		snprintf(pp, sizeof pp, "/proc/self/fd/%d", mfd);
		int t2 = (mfd >= 0 && ftruncate(mfd, 4096) == 0) ? open(pp, O_RDWR | O_TRUNC) : -1;
		CHECK(t2 >= 0 && fstat(mfd, &mst) == 0 && mst.st_size == 0, "memfd_reopen_trunc", "fd %d size %ld (%s)",
		      t2, (long)mst.st_size, strerror(errno));
		if (t2 >= 0)
			close(t2);
		if (mfd >= 0)
			close(mfd);
	}
	return t_done();
}
