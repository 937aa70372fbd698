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
	close(ro);
}

int main(int argc, char **argv)
{
	t_setup(argc, argv, "proc_reopen");
	int m = memfd_create("moat-test", MFD_CLOEXEC);
	one("memfd_reopen_rdonly", m);
	close(m);
	/* (an unlinked file of a host export is not covered yet: the sentry's
	 * unprivileged uid cannot reopen a file the gofer created; see
	 * ARCHITECTURE.md known gaps) */
	return t_done();
}
