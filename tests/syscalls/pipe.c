/* pipe, pipe2, FIFOs (a blocking open must not stall other tasks), poll. */
#include "t.h"
#include <poll.h>
#include <signal.h>

static void on_alarm(int sig) { (void)sig; }

int main(int argc, char **argv)
{
	t_setup(argc, argv, "pipe");
	int p[2];
	char buf[256];
	int status;

	CHECK(pipe(p) == 0 && write(p[1], "abc", 3) == 3 && read(p[0], buf, sizeof(buf)) == 3 &&
		      !memcmp(buf, "abc", 3),
	      "roundtrip", "%s", strerror(errno));
	close(p[1]);
	CHECK(read(p[0], buf, sizeof(buf)) == 0, "eof_after_writer_closed", "no eof");
	close(p[0]);

	CHECK(pipe2(p, O_CLOEXEC | O_NONBLOCK) == 0 && (fcntl(p[0], F_GETFD) & FD_CLOEXEC) &&
		      (fcntl(p[1], F_GETFL) & O_NONBLOCK),
	      "pipe2_flags", "%s", strerror(errno));
	EXPECT_ERR(read(p[0], buf, sizeof(buf)), EAGAIN, "nonblock_empty_eagain");
	close(p[0]);
	signal(SIGPIPE, SIG_IGN);
	EXPECT_ERR(write(p[1], "x", 1), EPIPE, "epipe");
	close(p[1]);
	signal(SIGPIPE, SIG_DFL);
	EXPECT_ERR(pipe2(p, 0x12345), EINVAL, "pipe2_bad_flags");
	EXPECT_ERR(syscall(SYS_pipe2, (int *)1, 0), EFAULT, "efault");

	/* 1 MiB through a pipe to a child. */
	pipe(p);
	pid_t pid = fork();
	if (pid == 0) {
		close(p[1]);
		long total = 0;
		ssize_t r;
		unsigned sum = 0;
		while ((r = read(p[0], buf, sizeof(buf))) > 0) {
			for (ssize_t i = 0; i < r; i++)
				sum = sum * 31 + (unsigned char)buf[i];
			total += r;
		}
		_exit(total == (1 << 20) ? 0 : 1);
	}
	close(p[0]);
	static char big[1 << 20];
	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (char)i;
	size_t off = 0;
	while (off < sizeof(big)) {
		ssize_t w = write(p[1], big + off, sizeof(big) - off);
		if (w <= 0)
			break;
		off += (size_t)w;
	}
	close(p[1]);
	waitpid(pid, &status, 0);
	CHECK(off == sizeof(big) && WIFEXITED(status) && WEXITSTATUS(status) == 0, "one_mib_to_child",
	      "off %zu status %x", off, status);

	pipe(p);
	long sz = fcntl(p[0], F_GETPIPE_SZ);
	CHECK(sz >= 4096 && fcntl(p[0], F_SETPIPE_SZ, 1 << 16) >= (1 << 16), "pipe_size", "sz %ld", sz);
	struct pollfd pf = {.fd = p[0], .events = POLLIN};
	CHECK(poll(&pf, 1, 0) == 0, "poll_empty", "ready");
	write(p[1], "z", 1);
	CHECK(poll(&pf, 1, 1000) == 1 && (pf.revents & POLLIN), "poll_ready", "revents %x", pf.revents);
	close(p[0]);
	close(p[1]);

	/* FIFO: the reader's open blocks until a writer comes; meanwhile the parent works. */
	CHECK(mkfifo("fifo", 0644) == 0, "mkfifo", "%s", strerror(errno));
	struct stat st;
	CHECK(stat("fifo", &st) == 0 && S_ISFIFO(st.st_mode), "fifo_stat", "mode %o", st.st_mode);
	EXPECT_ERR(mkfifo("fifo", 0644), EEXIST, "mkfifo_eexist");
	pid = fork();
	if (pid == 0) {
		int fd = open("fifo", O_RDONLY); /* blocks */
		char c = 0;
		_exit(fd >= 0 && read(fd, &c, 1) == 1 && c == 'F' ? 0 : 1);
	}
	usleep(100000);
	/* Other trapped calls keep working while the child is blocked in open. */
	int ok = 1;
	for (int i = 0; i < 50; i++)
		ok &= stat("fifo", &st) == 0;
	CHECK(ok, "trapped_calls_while_open_blocks", "stat failed");
	CHECK(waitpid(pid, &status, WNOHANG) == 0, "reader_still_blocked", "reader finished early");
	int w = open("fifo", O_WRONLY);
	write(w, "F", 1);
	close(w);
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "fifo_transfer", "status %x", status);
	EXPECT_ERR(open("fifo", O_WRONLY | O_NONBLOCK), ENXIO, "fifo_nonblock_writer_no_reader");
	int r = open("fifo", O_RDONLY | O_NONBLOCK);
	CHECK(r >= 0, "fifo_nonblock_reader", "%s", strerror(errno));
	close(r);

	/* A blocking reader's open returns at once while a writer holds the
	 * FIFO open, silent or not (Linux waits only when there is none):
	 * one's own O_RDWR end (sysfuzz's HANG: under moat the open waited for
	 * data that never came), then another process's O_WRONLY end that
	 * writes nothing. The alarm ends a wrong wait with EINTR. */
	struct sigaction sa = { .sa_handler = on_alarm };
	sigaction(SIGALRM, &sa, NULL); /* no SA_RESTART */
	int rw = open("fifo", O_RDWR);
	CHECK(rw >= 0, "fifo_rdwr_open", "%s", strerror(errno));
	alarm(5);
	r = open("fifo", O_RDONLY);
	alarm(0);
	CHECK(r >= 0, "fifo_reader_open_with_own_rdwr_end", "%s", strerror(errno));
	CHECK(r >= 0 && write(rw, "G", 1) == 1 && read(r, buf, 1) == 1 && buf[0] == 'G',
	      "fifo_reader_reads_own_rdwr_end", "%s", strerror(errno));
	if (r >= 0)
		close(r);
	close(rw);
	int sync[2];
	CHECK(pipe(sync) == 0, "sync_pipe", "%s", strerror(errno));
	int hold = open("fifo", O_RDONLY | O_NONBLOCK); /* a reader, so the child's writer opens */
	pid = fork();
	if (pid == 0) {
		int wfd = open("fifo", O_WRONLY);
		char c = wfd >= 0 ? 'w' : 'e';
		(void)!write(sync[1], &c, 1);
		pause(); /* holds its silent writer end */
		_exit(0);
	}
	char c = 0;
	CHECK(read(sync[0], &c, 1) == 1 && c == 'w', "fifo_silent_writer_open", "child said %c", c);
	close(hold);
	alarm(5);
	r = open("fifo", O_RDONLY);
	int e = errno;
	alarm(0);
	CHECK(r >= 0, "fifo_reader_open_with_silent_writer", "%s", strerror(e));
	if (r >= 0)
		close(r);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	close(sync[0]);
	close(sync[1]);
	return t_done();
}
