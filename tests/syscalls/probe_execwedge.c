/* probe_execwedge.c - guest side of isolation_proctree's exec_never_wedges
 * (hang87/hang93): a process whose non-leader thread execs while the rest of
 * its thread group is busy at every kind of ptrace stop must end, never stay
 * in a stop the tracer took and did not resume. Not differential: natively
 * it passes too (each mode's sanity). argv[0] must be the absolute path of
 * this program (it execs itself).
 *
 *   probe_execwedge MODE ROUNDS [SECONDS]
 *     ROUNDS times (or until SECONDS have passed): a process P, a leader and
 *     four threads; two siblings loop in calls moat traps (mknod and unlink
 *     beneath /tmp, semtimedop with a 1 ms timeout, a stat), one in native
 *     ones (nanosleep, sched_yield), while a fourth execs this program
 * ("image", which exits 0 at once), after a delay that moves each round.
 *     MODE, what the rest of P does meanwhile:
 *       fork    the leader forks (the child exits at once) and reaps, in a loop
 *       sig     the leader sends a caught signal to every thread, in a loop
 *       exit    the leader is gone first (SYS_exit: a zombie leader)
 *       two     two threads exec at once (one wins)
 *       fail    the exec'ing thread tries names that never exec ("/nonexistent",
 *               "", "/dev/null", "/", a bad pointer), 20 of them, then the
 *               real one
 *       vfork   the thread vforks and the child execs (the exec is not P's;
 *               P then ends with exit_group)
 *       clone   the leader makes threads that exit at once, in a loop
 *       stop    P's parent stops and continues P (SIGSTOP, SIGCONT) every
 *               300 us meanwhile: group-stops around the exec
 *       mix     each round one of the above
 *     P's parent gives P 10 s to end: a P still there is "HUNG", its state
 *     and wchan printed from /proc, and killed. Prints "ok MODE N" (N rounds)
 *     or "FAIL ..." and exits 1.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/sem.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *self;
static int g_mode, g_semid = -1;
static unsigned g_round;
static long g_delay_us;
static pid_t g_tids[8];
static volatile int g_ntids;

enum { M_FORK, M_SIG, M_EXIT, M_TWO, M_FAIL, M_VFORK, M_CLONE, M_STOP, M_MIX, M_N };
static const char *const mode_names[M_N] = { "fork", "sig", "exit", "two", "fail", "vfork", "clone", "stop", "mix" };

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void nap_us(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };
	nanosleep(&ts, NULL); /* EINTR ends it early: fine */
}

static void note_tid(void)
{
	int i = __atomic_fetch_add(&g_ntids, 1, __ATOMIC_SEQ_CST);
	if (i < 8)
		g_tids[i] = (pid_t)syscall(SYS_gettid);
}

static void on_sig(int s)
{
	(void)s;
}

/* trapped calls: a path made and removed, a semaphore wait that times out */
static void *trapped(void *arg)
{
	long k = (long)arg;
	char p[64];
	struct stat st;
	note_tid();
	snprintf(p, sizeof p, "/tmp/ew-%d-%ld", (int)getpid(), k);
	for (;;) {
		if (k & 1) {
			struct sembuf op = { 0, -1, 0 };
			struct timespec to = { 0, 1000000 };
			if (g_semid >= 0)
				syscall(SYS_semtimedop, g_semid, &op, 1, &to); /* EAGAIN after 1 ms */
			stat("/tmp", &st);
		} else {
			mknod(p, S_IFIFO | 0600, 0);
			unlink(p);
		}
	}
	return NULL;
}

static void *native(void *arg)
{
	(void)arg;
	note_tid();
	for (;;) {
		nap_us(200);
		sched_yield();
	}
	return NULL;
}

static void do_exec(void)
{
	char *av[] = { (char *)self, (char *)"image", NULL };
	execv(self, av);
}

static void *execer(void *arg)
{
	(void)arg;
	note_tid();
	nap_us(g_delay_us);
	if (g_mode == M_FAIL) {
		static const char *bad[] = { "/nonexistent", "", "/dev/null", "/" };
		char *av[] = { (char *)"x", NULL };
		for (int i = 0; i < 20; i++) {
			if (i % 5 == 4)
				syscall(SYS_execve, (void *)8, av, NULL); /* a bad pointer */
			else
				execv(bad[i % 5], av);
			nap_us(50);
		}
	}
	if (g_mode == M_VFORK) {
		pid_t c = vfork();
		if (c == 0) {
			do_exec();
			_exit(3);
		}
		if (c > 0)
			waitpid(c, NULL, 0);
		syscall(SYS_exit_group, 0);
	}
	do_exec();
	_exit(4); /* the real exec failed */
}

static void *clone_exiter(void *arg)
{
	(void)arg;
	return NULL;
}

static void p_main(void)
{
	struct sigaction sa = { .sa_handler = on_sig };
	sigaction(SIGURG, &sa, NULL);
	pthread_t th;
	pthread_create(&th, NULL, trapped, (void *)0);
	pthread_create(&th, NULL, trapped, (void *)1);
	pthread_create(&th, NULL, native, NULL);
	pthread_create(&th, NULL, execer, NULL);
	if (g_mode == M_TWO)
		pthread_create(&th, NULL, execer, NULL);
	double end = now_s() + 8;
	switch (g_mode) {
	case M_EXIT:
		syscall(SYS_exit, 0); /* the leader alone: a zombie leader */
		break;
	case M_FORK:
		while (now_s() < end) {
			pid_t c = fork();
			if (c == 0)
				_exit(0);
			if (c > 0)
				waitpid(c, NULL, 0);
		}
		break;
	case M_SIG:
		while (now_s() < end) {
			int n = g_ntids < 8 ? g_ntids : 8;
			for (int i = 0; i < n; i++)
				syscall(SYS_tgkill, getpid(), g_tids[i], SIGURG);
			nap_us(20);
		}
		break;
	case M_CLONE:
		while (now_s() < end) {
			pthread_t t;
			if (pthread_create(&t, NULL, clone_exiter, NULL) == 0)
				pthread_join(t, NULL);
		}
		break;
	default:
		break;
	}
	for (;;)
		pause(); /* the exec takes this thread */
}

/* P's end within 10 s: 0, or 1 (HUNG: described and killed) */
static int watch(pid_t p, int mode)
{
	int pfd = (int)syscall(SYS_pidfd_open, p, 0);
	struct pollfd pf = { pfd, POLLIN, 0 };
	if (mode == M_STOP) {
		for (int i = 0; i < 20 && pfd >= 0 && poll(&pf, 1, 0) == 0; i++) {
			kill(p, SIGSTOP);
			nap_us(300);
			kill(p, SIGCONT);
			nap_us(300);
		}
		kill(p, SIGCONT);
	}
	if (pfd >= 0 && poll(&pf, 1, 10000) == 1) {
		int st;
		waitpid(p, &st, 0);
		close(pfd);
		if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
			return 0;
		printf("FAIL %s round %u: P ended %s %d\n", mode_names[mode], g_round,
		       WIFEXITED(st) ? "with status" : "by signal", WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
		return 1;
	}
	printf("FAIL %s round %u: HUNG (P still there after 10 s):", mode_names[mode], g_round);
	char path[64], buf[4096];
	snprintf(path, sizeof path, "/proc/%d/task", (int)p);
	FILE *ls = NULL;
	char cmd[128];
	snprintf(cmd, sizeof cmd, "ls %s 2>/dev/null", path);
	ls = popen(cmd, "r");
	while (ls && fgets(buf, sizeof buf, ls)) {
		int t = atoi(buf);
		char f[96], st[256] = "", wc[64] = "", sc[64] = "";
		snprintf(f, sizeof f, "/proc/%d/task/%d/stat", (int)p, t);
		FILE *x = fopen(f, "r");
		if (x) {
			if (fgets(st, sizeof st, x)) {
				char *r = strrchr(st, ')');
				if (r && r[1])
					snprintf(st, sizeof st, "%c", r[2]);
			}
			fclose(x);
		}
		snprintf(f, sizeof f, "/proc/%d/task/%d/wchan", (int)p, t);
		if ((x = fopen(f, "r"))) {
			if (!fgets(wc, sizeof wc, x))
				wc[0] = 0;
			fclose(x);
		}
		snprintf(f, sizeof f, "/proc/%d/task/%d/syscall", (int)p, t);
		if ((x = fopen(f, "r"))) {
			if (fgets(sc, sizeof sc, x))
				sc[strcspn(sc, " \n")] = 0;
			else
				sc[0] = 0;
			fclose(x);
		}
		printf(" [%d %s %s %s]", t, st, wc, sc);
	}
	if (ls)
		pclose(ls);
	printf("\n");
	kill(p, SIGKILL);
	waitpid(p, NULL, 0);
	if (pfd >= 0)
		close(pfd);
	return 1;
}

int main(int argc, char **argv)
{
	self = argv[0];
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc >= 2 && !strcmp(argv[1], "image"))
		return 0;
	if (argc < 3) {
		fprintf(stderr, "usage: probe_execwedge fork|sig|exit|two|fail|vfork|clone|stop|mix ROUNDS [SECONDS]\n");
		return 2;
	}
	int mode = -1;
	for (int i = 0; i < M_N; i++)
		if (!strcmp(argv[1], mode_names[i]))
			mode = i;
	if (mode < 0 || self[0] != '/') {
		fprintf(stderr, "probe_execwedge: unknown mode, or argv[0] not absolute\n");
		return 2;
	}
	unsigned rounds = (unsigned)atoi(argv[2]);
	double end = argc > 3 ? now_s() + atof(argv[3]) : 0;
	unsigned done = 0;
	g_semid = semget(IPC_PRIVATE, 1, 0600); /* value 0: every wait times out */
	int rc = 0;
	for (g_round = 0; g_round < rounds && (!end || now_s() < end); g_round++, done++) {
		g_mode = mode == M_MIX ? (int)(g_round % M_MIX) : mode;
		g_delay_us = (long)((g_round * 7919u) % 3000u); /* 0-3 ms: moves the exec over the siblings' stops */
		pid_t p = fork();
		if (p < 0) {
			printf("FAIL fork: %s\n", strerror(errno));
			rc = 1;
			break;
		}
		if (p == 0) {
			p_main();
			_exit(5);
		}
		int hung = watch(p, g_mode);
		char f[64];
		snprintf(f, sizeof f, "/tmp/ew-%d-0", (int)p); /* the mknod thread's, if the exec cut it short */
		unlink(f);
		if (hung) {
			rc = 1;
			break;
		}
	}
	if (g_semid >= 0)
		semctl(g_semid, 0, IPC_RMID);
	if (!rc)
		printf("ok %s %u\n", mode_names[mode], done);
	return rc;
}
