/* aio: Linux AIO contexts (io_setup, io_destroy, io_submit/io_getevents on
 * a pipe) and the events they hold of the host-wide fs.aio-nr. Under moat a
 * sandbox holds at most an eighth of fs.aio-max-nr (sentry/aio.c, red team
 * 23), counted per address space: what a context gives back when it is
 * destroyed, when its process exits or execs, when the call failed, must
 * come back, or a program that makes and drops contexts in a loop would
 * run out. Every count here stays below 8192 events at a time (an eighth of
 * the default 65536) and natively passes as long as the host has that
 * many free. /proc/sys/fs/aio-max-nr and aio-nr read back numbers (under
 * moat the sandbox's share and what it holds): a context of 1000 events is
 * counted in aio-nr, and one of aio-max-nr + 1 is EAGAIN (LTP io_setup01,
 * io_setup02). */
#include "t.h"
#include <linux/aio_abi.h>
#include <pthread.h>

static long setup(unsigned n, aio_context_t *c)
{
	*c = 0;
	return syscall(SYS_io_setup, n, c);
}

/* a /proc/sys/fs number, or -1 */
static long sysfs_num(const char *name)
{
	char path[64], buf[64], *end;
	snprintf(path, sizeof path, "/proc/sys/fs/%s", name);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	long v = strtol(buf, &end, 10);
	return end != buf && *end == '\n' && !end[1] && v >= 0 ? v : -1;
}

static void *thread_setup(void *arg)
{
	return (void *)(long)setup(1000, arg);
}

/* n children in turn each make a context of 4000 events, then exit (or
 * exec /bin/true): the number that succeeded */
static int child_rounds(int n, int exec)
{
	int i;
	for (i = 0; i < n; i++) {
		pid_t k = fork();
		if (k == 0) {
			aio_context_t x;
			if (setup(4000, &x))
				_exit(1);
			if (exec)
				execl("/bin/true", "true", (char *)NULL);
			_exit(exec);
		}
		int st = 0;
		waitpid(k, &st, 0);
		if (!WIFEXITED(st) || WEXITSTATUS(st))
			break;
	}
	return i;
}

int main(int argc, char **argv)
{
	t_setup(argc, argv, "aio");
	aio_context_t c = 0, d[4];
	long r = setup(16, &c);
	if (r && errno == EAGAIN) {
		printf("skip: the host has no aio events free\n");
		return 77;
	}
	CHECK(r == 0 && c != 0, "setup", "%s", strerror(errno));
	/* a read of a pipe through the context */
	int p[2];
	pipe(p);
	write(p[1], "abc", 3);
	char buf[8];
	struct iocb cb = { .aio_fildes = (uint32_t)p[0], .aio_lio_opcode = IOCB_CMD_PREAD,
			   .aio_buf = (uint64_t)(uintptr_t)buf, .aio_nbytes = sizeof buf };
	struct iocb *cbs[1] = { &cb };
	struct io_event ev;
	CHECK(syscall(SYS_io_submit, c, 1, cbs) == 1 && syscall(SYS_io_getevents, c, 1, 1, &ev, NULL) == 1 &&
	      ev.res == 3 && memcmp(buf, "abc", 3) == 0, "pipe_read", "%s res %lld", strerror(errno), (long long)ev.res);
	CHECK(syscall(SYS_io_destroy, c) == 0, "destroy", "%s", strerror(errno));
	errno = 0;
	CHECK(syscall(SYS_io_destroy, c) == -1 && errno == EINVAL, "destroy_twice_einval", "%s", strerror(errno));
	errno = 0;
	CHECK(setup(0, &c) == -1 && errno == EINVAL, "zero_einval", "%s", strerror(errno));
	/* too many for the ring: EINVAL before any budget's EAGAIN (LTP io_setup02) */
	CHECK(setup(-1, &c) == -1 && errno == EINVAL, "minus_one_einval", "%s", strerror(errno));
	CHECK(setup(0x7fffffff, &c) == -1 && errno == EINVAL, "huge_einval", "%s", strerror(errno));
	c = 1;
	errno = 0;
	CHECK(syscall(SYS_io_setup, 16, &c) == -1 && errno == EINVAL, "ctx_not_zero_einval", "%s", strerror(errno));
	/* made and dropped in a loop: 60 x 4000 events, 4000 at a time
	 * (more than fs.aio-max-nr's 65536 and the sandbox's eighth of it;
	 * each io_destroy waits for an RCU grace period: 400 took 10 s) */
	int i;
	for (i = 0; i < 60; i++)
		if (setup(4000, &c) || syscall(SYS_io_destroy, c))
			break;
	CHECK(i == 60, "loop_given_back", "round %d: %s", i, strerror(errno));
	/* failed calls hold nothing (EFAULT: the kernel undoes the context) */
	for (i = 0; i < 50; i++)
		syscall(SYS_io_setup, 4000, (void *)8);
	CHECK(setup(4000, &c) == 0 && syscall(SYS_io_destroy, c) == 0, "efault_given_back", "%s", strerror(errno));
	/* contexts of processes that exit, or exec, go with them */
	i = child_rounds(20, 0);
	CHECK(i == 20, "exit_given_back", "child %d", i);
	i = child_rounds(10, 1);
	CHECK(i == 10, "exec_given_back", "child %d", i);
	/* a thread's context is its process's: still there after the thread
	 * exits, and io_destroy of it from the main thread gives it back */
	for (i = 0; i < 4; i++) {
		pthread_t th;
		void *res = (void *)1L;
		if (pthread_create(&th, NULL, thread_setup, &d[i]) || pthread_join(th, &res) || res)
			break;
	}
	CHECK(i == 4, "thread_setup", "thread %d", i);
	for (i = 0; i < 4; i++)
		if (syscall(SYS_io_destroy, d[i]))
			break;
	CHECK(i == 4, "thread_ctx_destroyed_by_process", "%d: %s", i, strerror(errno));
	CHECK(setup(7000, &c) == 0 && syscall(SYS_io_destroy, c) == 0, "threads_given_back", "%s", strerror(errno));
	/* a vfork child's context is its parent's (one address space) */
	pid_t k = vfork();
	if (k == 0)
		_exit(setup(1000, &d[0]) ? 1 : 0);
	int st = 0;
	waitpid(k, &st, 0);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0 && syscall(SYS_io_destroy, d[0]) == 0, "vfork_ctx_parents",
	      "status %#x %s", st, strerror(errno));
	/* the sysctls */
	long max = sysfs_num("aio-max-nr"), nr0 = sysfs_num("aio-nr");
	CHECK(max > 0 && nr0 >= 0 && nr0 <= max, "sysctls_read", "aio-max-nr %ld aio-nr %ld", max, nr0);
	if (max > 1000) {
		CHECK(setup(1000, &c) == 0, "setup_1000", "%s", strerror(errno));
		long nr1 = sysfs_num("aio-nr");
		CHECK(nr1 >= 1000 && nr1 <= max, "aio_nr_counts_context", "aio-nr %ld", nr1);
		syscall(SYS_io_destroy, c);
		errno = 0;
		CHECK(setup((unsigned)max + 1, &c) == -1 && errno == EAGAIN, "past_aio_max_nr_eagain", "%s",
		      strerror(errno));
	}
	return t_done();
}
