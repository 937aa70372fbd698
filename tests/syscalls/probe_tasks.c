/* probe_tasks.c - guest side of the task-table leak cases of
 * tests/integration/isolation_sentry.sh: guest tasks die at every kind of
 * ptrace stop, and the sentry's task table and tracer must stay consistent
 * (nothing left: task entries counted against --pids, the tracer's early
 * list, pending execs and their fds; nothing stuck). Not differential: run
 * natively it passes too (the sanity of each case). argv[0] must be the
 * absolute path of this program (it execs itself).
 *
 *   forkkill KIND N   N times: a process P forks (KIND fork, vfork, or a
 *                     thread), and its parent kills P right after P made
 *                     the call (with MOAT_TEST_STOP_DELAY=fork-event:MS,
 *                     vfork-event or clone-event, P is at its event stop
 *                     then; KIND execsib: P's leader forks while a sibling
 *                     thread's exec, held at its exec stop by
 *                     MOAT_TEST_STOP_DELAY=seccomp:MS, is on its way, and
 *                     that exec's de_thread kills it at its fork event
 *                     when the tracer lets the exec go first; no kill by
 *                     the parent). P's new child holds the write end of a pipe:
 *                     its EOF must come within 10 s (the child ran and
 *                     exited, or was killed): a child left held at its first
 *                     stop keeps it open for ever. Prints "ok forkkill ..."
 *   execkill N        N times: a non-leader thread of P execs this program
 *                     ("pause") and P's parent kills P during the exec (with
 *                     MOAT_TEST_STOP_DELAY=exec-event:MS, at its
 *                     PTRACE_EVENT_EXEC, after the thread took the leader's
 *                     pid). Then as many children as fit (--pids) must fit
 *                     as before: "ok execkill N capacity A"
 *   churn N           prints "phase1", waits for ./go1; N fork+exec+kill of
 *                     every shape (kill after a few us, after an exec by a
 *                     thread, SIGSTOP then SIGKILL, a child killed as it
 *                     forks); the capacity as in execkill; prints "phase2",
 *                     waits for ./go2; "ok churn N capacity A"
 *   pause             (the exec'd image) waits to be killed
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CAP_MAX 64

static const char *self;

static void nap_us(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static void *pauser(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

static void *execer(void *arg)
{
	int fd = *(int *)arg;
	char *av[] = { (char *)self, "pause", NULL };
	if (fd >= 0 && write(fd, "x", 1) != 1)
		_exit(3);
	execv(self, av);
	_exit(4);
}

/* How many children can be alive at once (at most CAP_MAX): each waits for
 * EOF on a pipe, then all go. */
static int capacity(void)
{
	int p[2], n = 0;
	pid_t kids[CAP_MAX];
	if (pipe(p) < 0)
		return -1;
	for (; n < CAP_MAX; n++) {
		pid_t c = fork();
		if (c < 0)
			break;
		if (c == 0) {
			char b;
			close(p[1]);
			while (read(p[0], &b, 1) < 0 && errno == EINTR)
				;
			_exit(0);
		}
		kids[n] = c;
	}
	close(p[1]);
	close(p[0]);
	for (int i = 0; i < n; i++)
		waitpid(kids[i], NULL, 0);
	return n;
}

/* The capacity once what was killed is gone: a child held at its first
 * stop for a parent killed at its fork event is killed after a second, and
 * counts in the sandbox's cgroup pids.max meanwhile: a leak stays, that
 * goes. Up to 4 s for the count to come back to want. */
static int settled(int want)
{
	int b = capacity();
	for (int i = 0; i < 20 && b < want; i++) {
		nap_us(200000);
		b = capacity();
	}
	return b;
}

/* P's parent: wait for P's word, give it time to reach the stop, kill it. */
static void kill_after_word(pid_t pid, int word, long us)
{
	char b;
	if (read(word, &b, 1) != 1) {
		/* it died first */
	}
	nap_us(us);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

static int forkkill(const char *kind, int n)
{
	for (int i = 0; i < n; i++) {
		int out[2], word[2];
		if (pipe(out) < 0 || pipe(word) < 0)
			return printf("FAIL forkkill: pipe: %s\n", strerror(errno)), 1;
		pid_t p = fork();
		if (p < 0)
			return printf("FAIL forkkill: fork: %s\n", strerror(errno)), 1;
		if (p == 0) {
			close(out[0]);
			close(word[0]);
			if (write(word[1], "x", 1) != 1)
				_exit(3);
			if (!strcmp(kind, "execsib")) {
				/* a sibling execs first; this thread forks 50 ms
				 * later: its exec (with MOAT_TEST_STOP_DELAY=
				 * seccomp:MS, held at its exec stop meanwhile) kills
				 * this thread, at its fork event, in de_thread */
				pthread_t th;
				fcntl(out[1], F_SETFD, FD_CLOEXEC); /* the child's only */
				static int none = -1;
				if (pthread_create(&th, NULL, execer, &none) != 0)
					_exit(0);
				nap_us(50000);
			}
			if (!strcmp(kind, "thread")) {
				pthread_t th;
				pthread_create(&th, NULL, pauser, NULL);
				pause();
			}
			pid_t c = !strcmp(kind, "vfork") ? vfork() : fork();
			if (c == 0)
				_exit(0);
			_exit(0);
		}
		close(out[1]);
		close(word[1]);
		int sib = !strcmp(kind, "execsib");
		if (!sib) {
			kill_after_word(p, word[0], 30000);
		} else {
			char b;
			if (read(word[0], &b, 1) != 1) {
				/* it died first */
			}
		}
		close(word[0]);
		struct pollfd pf = { out[0], POLLIN, 0 };
		int r = poll(&pf, 1, 10000);
		close(out[0]);
		if (sib) {
			/* the exec'd image waits */
			kill(p, SIGKILL);
			waitpid(p, NULL, 0);
		}
		if (r != 1) {
			printf("FAIL forkkill %s: round %d: the new child of a process killed as it forked "
			       "never ran nor ended (its pipe stays open)\n", kind, i);
			return 1;
		}
	}
	printf("ok forkkill %s %d\n", kind, n);
	return 0;
}

/* P: a thread execs this program, the leader waits; its parent kills P
 * us after the thread's word (the exec under way). */
static void thread_exec_kill(long us)
{
	int word[2];
	if (pipe(word) < 0)
		return;
	pid_t p = fork();
	if (p == 0) {
		close(word[0]);
		pthread_t th;
		if (pthread_create(&th, NULL, execer, &word[1]) != 0) {
			/* EAGAIN: --pids full (an orphan held for its second) */
			if (write(word[1], "x", 1) != 1)
				_exit(3);
			_exit(0);
		}
		pause();
		_exit(0);
	}
	close(word[1]);
	if (p > 0)
		kill_after_word(p, word[0], us);
	close(word[0]);
}

static int execkill(int n)
{
	int a = capacity();
	for (int i = 0; i < n; i++)
		thread_exec_kill(100000);
	int b = settled(a);
	if (a != b) {
		printf("FAIL execkill %d: %d children fit before, %d after\n", n, a, b);
		return 1;
	}
	printf("ok execkill %d capacity %d\n", n, a);
	return 0;
}

static void wait_file(const char *f)
{
	for (int i = 0; i < 1200 && access(f, F_OK) < 0; i++)
		nap_us(50000);
}

static int churn(int n)
{
	printf("phase1\n");
	fflush(stdout);
	wait_file("go1");
	int a = capacity();
	for (int i = 0; i < n; i++) {
		long us = (i * 37L) % 3000;
		int shape = i % 4;
		if (shape == 1) {
			thread_exec_kill(us);
			continue;
		}
		pid_t c = fork();
		if (c < 0) {
			nap_us(1000);
			continue;
		}
		if (c == 0) {
			if (shape == 3) {
				/* killed as it forks: the grandchild exits at once */
				if (fork() == 0)
					_exit(0);
				pause();
			}
			char *av[] = { (char *)self, "pause", NULL };
			execv(self, av);
			_exit(4);
		}
		if (shape != 3)
			nap_us(us);
		if (shape == 2) {
			kill(c, SIGSTOP);
			nap_us(us / 4);
		}
		kill(c, SIGKILL);
		waitpid(c, NULL, 0);
	}
	int b = settled(a);
	printf("phase2\n");
	fflush(stdout);
	wait_file("go2");
	if (a != b) {
		printf("FAIL churn %d: %d children fit before, %d after\n", n, a, b);
		return 1;
	}
	printf("ok churn %d capacity %d\n", n, a);
	return 0;
}

int main(int argc, char **argv)
{
	self = argv[0];
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc >= 2 && !strcmp(argv[1], "pause")) {
		for (;;)
			pause();
	}
	if (argc >= 4 && !strcmp(argv[1], "forkkill"))
		return forkkill(argv[2], atoi(argv[3]));
	if (argc >= 3 && !strcmp(argv[1], "execkill"))
		return execkill(atoi(argv[2]));
	if (argc >= 3 && !strcmp(argv[1], "churn"))
		return churn(atoi(argv[2]));
	fprintf(stderr, "usage: probe_tasks forkkill fork|vfork|thread N | execkill N | churn N\n");
	return 2;
}
