/* posix_fadvise (fadvise64): the answers of every advice on every kind of fd.
 * POSIX_FADV_DONTNEED is answered by the sentry (red team 74: natively it
 * dropped the host's page cache of a bind's files), so its errors are the
 * ones Linux gives: EBADF (no fd, an O_PATH one), ESPIPE (a pipe, a
 * FIFO), EINVAL (a negative length), else 0. (Not here: an O_PATH directory,
 * which Linux answers EBADF for every advice and moat, before and after,
 * 0 for the native ones: the guest's O_PATH directory fd is a readable
 * directory fd.) */
#include "t.h"
#include <sys/eventfd.h>
#include <sys/socket.h>

static int adv(int fd, off_t off, off_t len, int advice)
{
	return (int)syscall(SYS_fadvise64, fd, off, len, advice);
}

int main(int argc, char **argv)
{
	t_setup(argc, argv, "fadvise");
	static const int advices[] = { POSIX_FADV_NORMAL, POSIX_FADV_RANDOM, POSIX_FADV_SEQUENTIAL,
				       POSIX_FADV_WILLNEED, POSIX_FADV_DONTNEED, POSIX_FADV_NOREUSE, 6, -1 };
	int f = open("f", O_CREAT | O_RDWR | O_TRUNC, 0644);
	char buf[8192];
	memset(buf, 'x', sizeof buf);
	CHECK(f >= 0 && write(f, buf, sizeof buf) == (ssize_t)sizeof buf, "file_made", "errno %d", errno);
	int ro = open("f", O_RDONLY);
	int dir = open(".", O_RDONLY | O_DIRECTORY);
	int pp[2];
	CHECK(pipe(pp) == 0, "pipe_made", "errno %d", errno);
	mkfifo("fifo", 0600);
	int fifo = open("fifo", O_RDWR);
	int sv[2];
	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0, "socketpair_made", "errno %d", errno);
	int ev = eventfd(0, 0);
	int closed = dup(f);
	close(closed);
	struct {
		const char *name;
		int fd;
	} fds[] = { { "file", f }, { "file_ro", ro }, { "dir", dir }, { "pipe", pp[0] },
		    { "fifo", fifo }, { "socket", sv[0] }, { "eventfd", ev }, { "closed", closed }, { "minus1", -1 },
		    { "huge", 0x7ffffff } };
	for (size_t i = 0; i < sizeof fds / sizeof fds[0]; i++)
		for (size_t a = 0; a < sizeof advices / sizeof advices[0]; a++) {
			static const off_t lens[] = { 0, 4096, -1 };
			for (size_t l = 0; l < 3; l++) {
				char name[96];
				snprintf(name, sizeof name, "%s_advice%d_len%lld", fds[i].name, advices[a],
					 (long long)lens[l]);
				errno = 0;
				int r = adv(fds[i].fd, l == 1 ? 4096 : 0, lens[l], advices[a]);
				int e = r < 0 ? errno : 0;
				printf("%s: %d %s\n", name, r, e ? strerror(e) : "");
			}
		}
	/* DONTNEED on a file written here, then read back: the data stays. */
	CHECK(adv(f, 0, 0, POSIX_FADV_DONTNEED) == 0, "dontneed_file_ok", "errno %d", errno);
	CHECK(pread(ro, buf, sizeof buf, 0) == (ssize_t)sizeof buf && buf[0] == 'x' && buf[8191] == 'x',
	      "data_kept_after_dontneed", "errno %d", errno);
	/* glibc's posix_fadvise answers the error number itself */
	CHECK(posix_fadvise(pp[1], 0, 0, POSIX_FADV_DONTNEED) == ESPIPE, "posix_fadvise_pipe_espipe", "not ESPIPE");
	CHECK(posix_fadvise(ro, 0, -5, POSIX_FADV_DONTNEED) == EINVAL, "posix_fadvise_negative_len_einval",
	      "not EINVAL");
	return t_done();
}
