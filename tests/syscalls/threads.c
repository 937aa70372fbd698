/* clone(CLONE_THREAD) via pthreads: shared memory and fds, trapped calls from many threads. */
#include "t.h"
#include <pthread.h>
#include <sched.h>
#include <signal.h>

#define NT 8
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static long counter;
static pid_t tids[NT];
static int shared_fd = -1;
static int stat_errors;

static void *worker(void *arg)
{
	long i = (long)arg;
	tids[i] = (pid_t)syscall(SYS_gettid);
	for (int k = 0; k < 10000; k++) {
		pthread_mutex_lock(&mu);
		counter++;
		pthread_mutex_unlock(&mu);
	}
	return (void *)(i * 10);
}

static void *stater(void *arg)
{
	(void)arg;
	struct stat st;
	for (int k = 0; k < 300; k++) {
		if (stat("f", &st) != 0 || st.st_size != 5) {
			__atomic_add_fetch(&stat_errors, 1, __ATOMIC_RELAXED);
		}
		int fd = open("f", O_RDONLY);
		if (fd < 0)
			__atomic_add_fetch(&stat_errors, 1, __ATOMIC_RELAXED);
		else
			close(fd);
	}
	return NULL;
}

static void *opener(void *arg)
{
	(void)arg;
	shared_fd = open("f", O_RDONLY);
	return NULL;
}

static volatile sig_atomic_t sig_tid;
static void on_usr1(int s)
{
	(void)s;
	sig_tid = (sig_atomic_t)syscall(SYS_gettid);
}

static void *sleeper(void *arg)
{
	pid_t *out = arg;
	*out = (pid_t)syscall(SYS_gettid);
	while (!sig_tid)
		usleep(1000);
	return NULL;
}

static int count_threads(void)
{
	char buf[4096];
	if (t_read_file("/proc/self/status", buf, sizeof(buf)) <= 0)
		return -1;
	char *p = strstr(buf, "\nThreads:");
	return p ? atoi(p + 9) : -1;
}

static void *blocker(void *arg)
{
	int *fds = arg;
	char c;
	read(fds[0], &c, 1);
	return NULL;
}

static void *exec_from_thread(void *arg)
{
	(void)arg;
	static char *av[] = {"sh", "-c", "exit 9", NULL};
	static char *ev[] = {NULL};
	execve("/bin/sh", av, ev);
	_exit(98);
}

/* A thread made by clone(2) with an exit signal (SIGCHLD): Linux ignores the
 * signal for CLONE_THREAD, but ptrace reports PTRACE_EVENT_FORK for it. It is
 * still a thread: its getpid and /proc/self are its process's, and CLONE_FS
 * shares the cwd (red team 19: moat took it for a process of its own). */
static char sigchld_stack[1 << 16] __attribute__((aligned(16)));
static volatile int sigchld_done;
static char sigchld_status[512];
static int sigchld_thread(void *arg)
{
	(void)arg;
	int fd = open("/proc/self/status", O_RDONLY);
	if (fd >= 0) {
		ssize_t n = read(fd, sigchld_status, sizeof sigchld_status - 1);
		sigchld_status[n > 0 ? n : 0] = 0;
		close(fd);
	}
	if (chdir("sub") != 0)
		sigchld_status[0] = 0;
	__atomic_store_n(&sigchld_done, 1, __ATOMIC_SEQ_CST);
	for (;;)
		pause();
	return 0;
}

/* in the child, once its thread has run: the thread's /proc/self was
 * this process and its chdir moved it (exit 3, 4 when not; 0) */
static void __attribute__((noreturn)) thread_child_checks(void)
{
	while (!__atomic_load_n(&sigchld_done, __ATOMIC_SEQ_CST))
		usleep(1000);
	char want[64], cwd[PATH_MAX];
	snprintf(want, sizeof want, "\nPid:\t%d\n", (int)getpid());
	if (!strstr(sigchld_status, want))
		_exit(3); /* /proc/self in the thread is not its process */
	if (!getcwd(cwd, sizeof cwd) || strcmp(strrchr(cwd, '/'), "/sub") != 0)
		_exit(4); /* the thread's chdir did not move its process */
	_exit(0);
}

static void thread_child_wait(pid_t pid, const char *name)
{
	int status;
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, name, "status %x", status);
	rmdir("sub");
}

static void clone_thread_sigchld(void)
{
	pid_t pid = fork();
	if (pid == 0) {
		mkdir("sub", 0755);
		int fl = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM | SIGCHLD;
		if (clone(sigchld_thread, sigchld_stack + sizeof sigchld_stack, fl, NULL) < 0)
			_exit(2);
		thread_child_checks();
	}
	thread_child_wait(pid, "clone_thread_sigchld_is_thread");
}

/* red team 55: clone with bit 32 of rax set. The kernel's entry takes the
 * low 32 bits (clone) and seccomp sees the same, but orig_rax keeps all 64:
 * the tracer compared them with __NR_clone, read no flags and registered
 * the thread as a process of its own (its /proc/self was its tid, an exec
 * of it fenced no sibling). The thread runs on the parent's TLS, as with
 * glibc's clone() above. */
static void __attribute__((used)) hibit_thread(void)
{
	sigchld_thread(NULL);
}

static void clone_high_bit_nr(void)
{
	pid_t pid = fork();
	if (pid == 0) {
		unsigned long fl = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD |
				   CLONE_SYSVSEM;
		mkdir("sub", 0755);
		long ret;
		register long r10 __asm__("r10") = 0;
		register long r8 __asm__("r8") = 0;
		__asm__ volatile("syscall\n\t"
				 "test %%rax, %%rax\n\t"
				 "jnz 1f\n\t"
				 "call hibit_thread\n\t"
				 "ud2\n"
				 "1:"
				 : "=a"(ret)
				 : "a"((long)SYS_clone | (1L << 32)), "D"(fl),
				   "S"(sigchld_stack + sizeof sigchld_stack - 64), "d"(0), "r"(r10), "r"(r8)
				 : "rcx", "r11", "memory");
		if (ret < 0)
			_exit(2);
		thread_child_checks();
	}
	thread_child_wait(pid, "clone_high_bit_nr_is_thread");
}

int main(int argc, char **argv)
{
	t_setup(argc, argv, "threads");
	pthread_t th[NT];
	t_write_file("f", "hello", 0644);

	for (long i = 0; i < NT; i++)
		pthread_create(&th[i], NULL, worker, (void *)i);
	long sum = 0;
	for (int i = 0; i < NT; i++) {
		void *ret;
		pthread_join(th[i], &ret);
		sum += (long)ret;
	}
	CHECK(counter == NT * 10000L, "mutex_counter", "counter %ld", counter);
	CHECK(sum == 10L * NT * (NT - 1) / 2, "join_values", "sum %ld", sum);
	int distinct = 1;
	for (int i = 0; i < NT; i++)
		for (int j = i + 1; j < NT; j++)
			if (tids[i] == tids[j] || tids[i] == getpid())
				distinct = 0;
	CHECK(distinct, "distinct_tids", "duplicate tid");

	pthread_t o;
	pthread_create(&o, NULL, opener, NULL);
	pthread_join(o, NULL);
	char buf[8] = {0};
	CHECK(shared_fd >= 0 && read(shared_fd, buf, 5) == 5 && !strcmp(buf, "hello"), "fd_table_shared",
	      "fd %d", shared_fd);
	close(shared_fd);

	/* Trapped calls from many threads at once. */
	for (int i = 0; i < 4; i++)
		pthread_create(&th[i], NULL, stater, NULL);
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	CHECK(stat_errors == 0, "concurrent_stat_open", "%d errors", stat_errors);

	/* A thread blocked in read does not stop others; /proc/self/status counts threads. */
	int fds[2];
	pipe(fds);
	pthread_t b;
	pthread_create(&b, NULL, blocker, fds);
	usleep(20000);
	CHECK(count_threads() == 2, "proc_status_threads", "Threads: %d", count_threads());
	struct stat st;
	CHECK(stat("f", &st) == 0, "stat_while_other_thread_blocked", "%s", strerror(errno));
	write(fds[1], "x", 1);
	pthread_join(b, NULL);
	close(fds[0]);
	close(fds[1]);

	/* A signal directed at one thread (tgkill) runs the handler there. */
	signal(SIGUSR1, on_usr1);
	pid_t target = 0;
	pthread_t s;
	pthread_create(&s, NULL, sleeper, &target);
	while (!__atomic_load_n(&target, __ATOMIC_SEQ_CST))
		usleep(1000);
	pthread_kill(s, SIGUSR1);
	pthread_join(s, NULL);
	CHECK(sig_tid == target, "tgkill_targets_thread", "ran in %d want %d", (int)sig_tid, (int)target);

	/* fork from a multithreaded process: the child has one thread and works. */
	for (int i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, worker, (void *)(long)i);
	pid_t pid = fork();
	if (pid == 0)
		_exit(count_threads() == 1 && stat("f", &st) == 0 ? 0 : 1);
	int status;
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "fork_from_thread", "status %x", status);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);

	/* exec from a non-main thread replaces the whole process. */
	pid = fork();
	if (pid == 0) {
		pthread_t e;
		pthread_create(&e, NULL, exec_from_thread, NULL);
		for (;;)
			pause();
	}
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 9, "exec_from_thread", "status %x", status);

	clone_thread_sigchld();
	sigchld_done = 0;
	clone_high_bit_nr();
	return t_done();
}
