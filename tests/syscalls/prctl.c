/* prctl and friends: names (PR_SET_NAME / PR_GET_NAME, /proc/self/comm),
 * no_new_privs, dumpable, child subreaper (an orphaned grandchild comes to
 * us and is reaped), PDEATHSIG (a child told when its parent dies), clone3
 * (works, or ENOSYS so libc falls back: posix_spawn and threads work either
 * way), personality (all but MMAP_PAGE_ZERO), ptrace by the guest (EPERM
 * under moat: a documented gap). What moat refuses on purpose
 * (MMAP_PAGE_ZERO, ptrace) is checked by the isolation tests. */
#include "t.h"
#include <linux/sched.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>

extern char **environ;

static int thread_pipe[2], named_pipe[2];
static void *thread_fn(void *arg)
{
	char c;
	/* a thread names itself (prctl on itself); naming another thread
	 * writes /proc/self/task/<tid>/comm, which moat's procfs refuses */
	pthread_setname_np(pthread_self(), "worker-1");
	write(named_pipe[1], "n", 1);
	read(thread_pipe[0], &c, 1); /* alive until main has named and read it */
	return arg;
}

static void *dump_thread_fn(void *arg)
{
	char c;
	read(thread_pipe[0], &c, 1); /* after main's PR_SET_DUMPABLE 0 */
	c = (char)('0' + prctl(PR_GET_DUMPABLE));
	write(named_pipe[1], &c, 1);
	return arg;
}

static int pdeath_pipe[2];
static void on_usr1(int s)
{
	(void)s;
	write(pdeath_pipe[1], "d", 1);
}

int main(int argc, char **argv)
{
	t_setup(argc, argv, "prctl");
	char name[32] = "";

	/* names: 15 bytes kept, visible in /proc/self/comm */
	EXPECT_OK(prctl(PR_SET_NAME, "moat-test-name-longer-than-16"), "set_name");
	EXPECT_OK(prctl(PR_GET_NAME, name), "get_name");
	CHECK(strcmp(name, "moat-test-name-") == 0, "name_truncated", "got '%s'", name);
	char comm[64] = "";
	t_read_file("/proc/self/comm", comm, sizeof comm);
	CHECK(strcmp(comm, "moat-test-name-\n") == 0, "proc_comm", "got '%s'", comm);
	/* a thread's own name */
	char tcomm[64] = "";
	char path[64], c;
	prctl(PR_SET_NAME, "main");
	pthread_t th;
	if (pipe(thread_pipe) < 0 || pipe(named_pipe) < 0)
		DIE("pipe");
	pthread_create(&th, NULL, thread_fn, NULL);
	read(named_pipe[0], &c, 1);
	pthread_getname_np(th, tcomm, sizeof tcomm);
	CHECK(strcmp(tcomm, "worker-1") == 0, "thread_name", "got '%s'", tcomm);
	write(thread_pipe[1], "x", 1);
	pthread_join(th, NULL);
	snprintf(path, sizeof path, "/proc/%d/comm", (int)getpid());
	t_read_file(path, comm, sizeof comm);
	CHECK(strcmp(comm, "main\n") == 0, "proc_pid_comm", "got '%s'", comm);

	/* no_new_privs: set is for good (moat's guest already has it) */
	EXPECT_OK(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "set_no_new_privs");
	CHECK(prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 1, "get_no_new_privs", "not set");
	EXPECT_ERR(prctl(PR_SET_NO_NEW_PRIVS, 0, 0, 0, 0), EINVAL, "no_new_privs_not_cleared");

	/* dumpable */
	EXPECT_OK(prctl(PR_SET_DUMPABLE, 0), "set_dumpable_0");
	CHECK(prctl(PR_GET_DUMPABLE) == 0, "get_dumpable_0", "still dumpable");
	EXPECT_OK(prctl(PR_SET_DUMPABLE, 1), "set_dumpable_1");
	CHECK(prctl(PR_GET_DUMPABLE) == 1, "get_dumpable_1", "not dumpable");
	EXPECT_ERR(prctl(PR_SET_DUMPABLE, 2), EINVAL, "dumpable_2_einval");
	/* the flag is the process's (the mm's): a thread made before another
	 * thread's PR_SET_DUMPABLE 0 reads 0 too (red team 38: moat kept it
	 * per thread and said 1) */
	if (pipe(thread_pipe) < 0 || pipe(named_pipe) < 0)
		DIE("pipe");
	pthread_create(&th, NULL, dump_thread_fn, NULL);
	EXPECT_OK(prctl(PR_SET_DUMPABLE, 0), "set_dumpable_0_with_thread");
	write(thread_pipe[1], "x", 1);
	c = 0;
	read(named_pipe[0], &c, 1);
	pthread_join(th, NULL);
	CHECK(c == '0', "dumpable_is_the_process", "the other thread read %c", c);
	EXPECT_OK(prctl(PR_SET_DUMPABLE, 1), "set_dumpable_1_again");

	/* child subreaper: a grandchild whose parent exits becomes ours */
	EXPECT_OK(prctl(PR_SET_CHILD_SUBREAPER, 1), "set_subreaper");
	int v = 0;
	CHECK(prctl(PR_GET_CHILD_SUBREAPER, &v) == 0 && v == 1, "get_subreaper", "v=%d", v);
	int p[2];
	if (pipe(p) < 0)
		DIE("pipe");
	pid_t me = getpid(), mid = fork();
	if (mid == 0) {
		pid_t g = fork();
		if (g == 0) {
			close(p[0]);
			for (int i = 0; i < 300 && getppid() != me; i++)
				usleep(10000);
			char y = getppid() == me ? 'y' : 'n';
			write(p[1], &y, 1);
			_exit(7);
		}
		_exit(0);
	}
	close(p[1]);
	int st;
	waitpid(mid, &st, 0);
	c = 0;
	read(p[0], &c, 1);
	close(p[0]);
	CHECK(c == 'y', "orphan_reparented_to_subreaper", "grandchild said %c", c);
	pid_t w = wait(&st);
	CHECK(w > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 7, "subreaper_reaps", "wait %d st %#x", (int)w, st);
	prctl(PR_SET_CHILD_SUBREAPER, 0);

	/* PDEATHSIG: the child is told when the thread that forked it exits */
	if (pipe(pdeath_pipe) < 0)
		DIE("pipe");
	mid = fork();
	if (mid == 0) {
		pid_t g = fork();
		if (g == 0) {
			signal(SIGUSR1, on_usr1);
			prctl(PR_SET_PDEATHSIG, SIGUSR1);
			int got = 0;
			prctl(PR_GET_PDEATHSIG, &got);
			write(pdeath_pipe[1], got == SIGUSR1 ? "g" : "x", 1);
			for (int i = 0; i < 500; i++)
				usleep(10000);
			_exit(0);
		}
		char r;
		read(pdeath_pipe[0], &r, 1); /* the grandchild is ready */
		_exit(r == 'g' ? 0 : 1);
	}
	close(pdeath_pipe[1]);
	waitpid(mid, &st, 0);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "get_pdeathsig", "status %#x", st);
	c = 0;
	struct timeval tv = { 5, 0 };
	fd_set rf;
	FD_ZERO(&rf);
	FD_SET(pdeath_pipe[0], &rf);
	if (select(pdeath_pipe[0] + 1, &rf, NULL, NULL, &tv) > 0)
		read(pdeath_pipe[0], &c, 1);
	CHECK(c == 'd', "pdeathsig_delivered", "got '%c'", c ? c : '-');
	close(pdeath_pipe[0]);

	/* clone3: works or ENOSYS (libc falls back: spawn and threads work) */
	struct clone_args ca;
	memset(&ca, 0, sizeof ca);
	ca.exit_signal = SIGCHLD;
	long r = syscall(SYS_clone3, &ca, sizeof ca);
	if (r == 0)
		_exit(3);
	if (r > 0) {
		waitpid((pid_t)r, &st, 0);
		CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 3, "clone3_or_enosys", "status %#x", st);
	} else {
		CHECK(errno == ENOSYS, "clone3_or_enosys", "%s", strerror(errno));
	}
	pid_t sp;
	char *sargv[] = { "/bin/sh", "-c", "exit 4", NULL };
	CHECK(posix_spawn(&sp, "/bin/sh", NULL, NULL, sargv, environ) == 0 &&
	      waitpid(sp, &st, 0) == sp && WIFEXITED(st) && WEXITSTATUS(st) == 4,
	      "posix_spawn", "status %#x", st);

	/* personality: the query and the safe values */
	int cur = personality(0xffffffff);
	CHECK(cur >= 0 && (cur & PER_MASK) == PER_LINUX, "personality_query", "%#x", cur);
	CHECK(personality(PER_LINUX | ADDR_NO_RANDOMIZE) >= 0 &&
	      (personality(0xffffffff) & ADDR_NO_RANDOMIZE), "personality_no_aslr", "%s", strerror(errno));
	CHECK(personality(PER_LINUX) >= 0 && personality(0xffffffff) == PER_LINUX,
	      "personality_back", "%#x", personality(0xffffffff));
	/* the legacy execution domains and flags (LTP personality01/02):
	 * PER_SVR3 is STICKY_TIMEOUTS | SHORT_INODE; READ_IMPLIES_EXEC too.
	 * Only MMAP_PAGE_ZERO is refused under moat (EPERM;
	 * tests/integration/isolation_syscalls.sh probes it). */
	errno = 0;
	int svr3 = personality(PER_SVR3) >= 0 ? personality(0xffffffff) : -1;
	CHECK(svr3 == PER_SVR3, "personality_svr3", "%#x (%s)", svr3, strerror(errno));
	errno = 0;
	int rie = personality(PER_LINUX | READ_IMPLIES_EXEC) >= 0 ? personality(0xffffffff) : -1;
	CHECK(rie == (PER_LINUX | READ_IMPLIES_EXEC), "personality_read_implies_exec", "%#x (%s)", rie,
	      strerror(errno));
	personality(PER_LINUX);

	/* ptrace: the sentry is every task's tracer; the guest gets EPERM */
	mid = fork();
	if (mid == 0) {
		long t = ptrace(PTRACE_TRACEME, 0, 0, 0);
		_exit(t == 0 ? 0 : errno == EPERM ? 1 : 2);
	}
	waitpid(mid, &st, 0);
	/* natively 0; moat: EPERM (isolation_syscalls.sh checks which) */
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) <= 1, "ptrace_traceme", "status %#x", st);

	return t_done();
}
