/* A synthesised file (/proc, /etc/hostname) opened O_RDONLY is a read-only
 * open file description, as on Linux: F_GETFL says O_RDONLY, a write is
 * EBADF, and a read-only reopen through /proc/self/fd/N is read-only too
 * (Chromium checks the mode of a /proc/<pid>/status fd it passes on). */
#include "t.h"

static void one(const char *name, const char *path, int extra)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | extra);
	if (fd < 0) {
		t_fail(name, "open %s: %s", path, strerror(errno));
		return;
	}
	int fl = fcntl(fd, F_GETFL), fdfl = fcntl(fd, F_GETFD);
	char b[16];
	ssize_t r = read(fd, b, sizeof b);
	errno = 0;
	ssize_t w = write(fd, "x", 1);
	int werr = errno;
	CHECK((fl & O_ACCMODE) == O_RDONLY && (fdfl & FD_CLOEXEC) && r > 0 && w < 0 && werr == EBADF &&
	      !!(fl & O_NONBLOCK) == !!(extra & O_NONBLOCK),
	      name, "flags %#x fdflags %#x read %zd write %zd (%s)", fl, fdfl, r, w, strerror(werr));
	close(fd);
}

int main(int argc, char **argv)
{
	t_setup(argc, argv, "proc_rdonly");
	one("proc_self_status", "/proc/self/status", 0);
	one("proc_self_stat", "/proc/self/stat", 0);
	one("proc_meminfo", "/proc/meminfo", 0);
	one("proc_cpuinfo_nonblock", "/proc/cpuinfo", O_NONBLOCK);
	one("etc_hostname", "/etc/hostname", 0);
	return t_done();
}
