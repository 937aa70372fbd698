/* getdents64 of /proc's numbered directories while entries come and go:
 * Linux keys the position on the number (fd/: fd + 2; /proc: 258 + pid), so
 * an entry gone since the last read skips none of the rest. Python's
 * subprocess close_fds=True (its _close_open_fds_safe) reads /proc/self/fd
 * 280 bytes at a time and closes each fd it reads: moat's position was the
 * entry's index, the closed fds shifted the rest down and the child kept
 * fds open (test_subprocess test_pass_fds). */
#include "t.h"
#include <signal.h>
#include <sys/wait.h>

struct linux_dirent64 {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

#define NPIPES 20
#define NKIDS 8

static int num(const char *s)
{
	char *end;
	long v = strtol(s, &end, 10);

	return *s && !*end ? (int)v : -1;
}

int main(int argc, char **argv)
{
	t_setup(argc, argv, "proc_dir_pos");

	/* ---- close every fd >= lo while reading /proc/self/fd (Python's loop) ---- */
	int lo = -1, hi = -1;
	for (int i = 0; i < NPIPES; i++) {
		int p[2];
		if (pipe(p))
			DIE("pipe");
		if (lo < 0)
			lo = p[0];
		hi = p[1];
	}
	int dfd = open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		DIE("open /proc/self/fd");
	char buf[sizeof(struct linux_dirent64) + 256];
	long n;
	while ((n = syscall(SYS_getdents64, dfd, buf, sizeof buf)) > 0)
		for (long off = 0; off < n;) {
			struct linux_dirent64 *d = (void *)(buf + off);
			int fd = num(d->d_name);
			off += d->d_reclen;
			if (fd >= lo && fd != dfd)
				close(fd);
		}
	CHECK(n == 0, "fd_read_to_end", "getdents64 = %ld errno %d", n, errno);
	close(dfd);
	int left = 0;
	for (int fd = lo; fd <= hi; fd++)
		left += fcntl(fd, F_GETFD) >= 0;
	CHECK(left == 0, "fd_close_while_reading_closes_all", "%d of %d fds left open", left, hi - lo + 1);

	/* ---- a process read from /proc, then gone: the ones after it are still listed ---- */
	pid_t kids[NKIDS];
	int seen[NKIDS] = { 0 }, reaped = -1;
	for (int i = 0; i < NKIDS; i++) {
		kids[i] = fork();
		if (kids[i] < 0)
			DIE("fork");
		if (kids[i] == 0) {
			pause();
			_exit(0);
		}
	}
	dfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		DIE("open /proc");
	char small[64]; /* two entries a read: stop right after a child now and then */
	while ((n = syscall(SYS_getdents64, dfd, small, sizeof small)) > 0) {
		int last = -1;
		for (long off = 0; off < n;) {
			struct linux_dirent64 *d = (void *)(small + off);
			int pid = num(d->d_name);
			off += d->d_reclen;
			last = -1;
			for (int i = 0; i < NKIDS; i++)
				if (pid == kids[i]) {
					seen[i]++;
					last = i;
				}
		}
		/* the read ended on a child that is not the last: it exits */
		if (reaped < 0 && last >= 0 && last < NKIDS - 1 && kids[last] < kids[NKIDS - 1]) {
			kill(kids[last], SIGKILL);
			waitpid(kids[last], NULL, 0);
			reaped = last;
		}
	}
	CHECK(n == 0, "proc_read_to_end", "getdents64 = %ld errno %d", n, errno);
	close(dfd);
	int missing = 0;
	for (int i = 0; i < NKIDS; i++)
		if (i != reaped)
			missing += seen[i] != 1;
	CHECK(reaped >= 0, "proc_one_child_gone_midway", "no read ended on a child");
	CHECK(missing == 0, "proc_children_after_gone_one_listed", "%d of %d children not listed once", missing,
	      NKIDS - 1);
	for (int i = 0; i < NKIDS; i++)
		if (i != reaped) {
			kill(kids[i], SIGKILL);
			waitpid(kids[i], NULL, 0);
		}
	return t_done();
}
