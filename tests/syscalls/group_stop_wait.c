/* A group-stop (SIGSTOP) of a process whose other threads wait in calls that
 * block (a FIFO open without a writer, a blocking flock): Linux's waits are
 * interruptible, every thread takes its part and the parent's
 * waitpid(WUNTRACED) sees the process stopped at once; after SIGCONT the
 * waits start again and complete when the writer comes and the lock goes.
 * Under moat each wait is a trapped call a sentry worker makes while the
 * thread waits killably only: before red team 88 the stop never completed
 * (no WUNTRACED, a shell's ^Z hung) until the waits ended. */
#include "t.h"
#include <pthread.h>
#include <signal.h>
#include <sys/file.h>
#include <time.h>

#define NFIFO 3

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1000 + (double)ts.tv_nsec / 1e6;
}

static int ok_count;

static void *fifo_reader(void *arg)
{
	(void)arg;
	int fd = open("fifo", O_RDONLY);
	if (fd >= 0)
		__atomic_add_fetch(&ok_count, 1, __ATOMIC_RELAXED);
	return NULL;
}

static void *locker(void *arg)
{
	(void)arg;
	int fd = open("lockfile", O_RDWR);
	if (fd >= 0 && flock(fd, LOCK_EX) == 0)
		__atomic_add_fetch(&ok_count, 1, __ATOMIC_RELAXED);
	return NULL;
}

/* the child: NFIFO readers and a locker wait; its main thread joins them */
static int child(void)
{
	pthread_t th[NFIFO + 1];
	for (int i = 0; i < NFIFO; i++)
		if (pthread_create(&th[i], NULL, fifo_reader, NULL) != 0)
			return 2;
	if (pthread_create(&th[NFIFO], NULL, locker, NULL) != 0)
		return 2;
	for (int i = 0; i <= NFIFO; i++)
		pthread_join(th[i], NULL);
	return ok_count == NFIFO + 1 ? 0 : 1;
}

/* waitpid with a deadline: the status, or -1 when nothing came */
static int wait_for(pid_t p, int flags, int ms)
{
	double end = now_ms() + ms;
	int st;
	do {
		pid_t r = waitpid(p, &st, flags | WNOHANG);
		if (r == p)
			return st;
		if (r < 0)
			return -1;
		usleep(2000);
	} while (now_ms() < end);
	return -1;
}

int main(int argc, char **argv)
{
	t_setup(argc, argv, "group_stop_wait");
	signal(SIGPIPE, SIG_IGN);
	CHECK(mkfifo("fifo", 0600) == 0, "mkfifo", "%s", strerror(errno));
	int lf = open("lockfile", O_RDWR | O_CREAT, 0600);
	CHECK(lf >= 0 && flock(lf, LOCK_EX) == 0, "parent_lock", "%s", strerror(errno));
	fflush(stdout);
	pid_t c = fork();
	if (c == 0)
		_exit(child());
	usleep(200000); /* let its threads reach their waits */
	CHECK(wait_for(c, 0, 0) == -1, "waiters_blocked", "the child ended early");
	kill(c, SIGSTOP);
	int st = wait_for(c, WUNTRACED, 3000);
	CHECK(st != -1 && WIFSTOPPED(st), "stop_reported_with_waiting_threads",
	      "no WUNTRACED in 3 s (status %d): a waiting thread held the group-stop off", st);
	kill(c, SIGCONT);
	/* the writer comes and the lock goes: every wait completes. A reader
	 * whose open is made again after the stop may come after our write:
	 * write until they are all through (EPIPE: no reader yet) */
	flock(lf, LOCK_UN);
	double end = now_ms() + 5000;
	st = -1;
	while (st == -1 && now_ms() < end) {
		int w = open("fifo", O_WRONLY | O_NONBLOCK);
		if (w >= 0) {
			if (write(w, "x", 1) < 0 && errno != EPIPE && errno != EAGAIN)
				t_fail("fifo_write", "%s", strerror(errno));
			close(w);
		}
		st = wait_for(c, 0, 20);
	}
	if (st == -1) {
		kill(c, SIGKILL);
		waitpid(c, &st, 0);
	}
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "waits_complete_after_cont", "status %#x", st);
	close(lf);
	return t_done();
}
