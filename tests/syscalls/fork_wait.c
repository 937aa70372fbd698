/* fork, vfork, wait4, waitpid, waitid, getpid/getppid. */
#include "t.h"
#include <signal.h>
#include <sys/resource.h>

static volatile sig_atomic_t got_chld;
static void on_chld(int s)
{
	(void)s;
	got_chld = 1;
}

int main(int argc, char **argv)
{
	t_setup(argc, argv, "fork_wait");
	int status = 0;
	pid_t me = getpid();

	pid_t pid = fork();
	if (pid == 0)
		_exit(getppid() == me && getpid() != me ? 42 : 1);
	CHECK(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 42,
	      "fork_exit_status", "status %x", status);

	pid = fork();
	if (pid == 0) {
		pause();
		_exit(0);
	}
	CHECK(waitpid(pid, &status, WNOHANG) == 0, "wnohang_running", "child not running");
	kill(pid, SIGKILL);
	CHECK(waitpid(pid, &status, 0) == pid && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
	      "killed_by_signal", "status %x", status);

	pid = fork();
	if (pid == 0)
		_exit(3);
	siginfo_t si;
	memset(&si, 0, sizeof(si));
	CHECK(waitid(P_PID, (id_t)pid, &si, WEXITED) == 0 && si.si_pid == pid && si.si_code == CLD_EXITED &&
		      si.si_status == 3,
	      "waitid", "code %d status %d", si.si_code, si.si_status);

	pid = fork();
	if (pid == 0) {
		volatile unsigned long x = 0;
		for (unsigned long i = 0; i < 20000000UL; i++)
			x += i;
		_exit(x == 0); /* use x: the loop is the point (CPU time) */
	}
	struct rusage ru;
	memset(&ru, 0, sizeof(ru));
	/* user OR system time: a child whose CPU time the kernel charges as
	 * system time (a sandbox's traps, a loaded host) has only stime */
	CHECK(wait4(pid, &status, 0, &ru) == pid &&
	          (ru.ru_utime.tv_sec > 0 || ru.ru_utime.tv_usec > 0 || ru.ru_stime.tv_sec > 0 ||
	           ru.ru_stime.tv_usec > 0),
	      "wait4_rusage", "utime and stime 0");

	/* vfork: parent is suspended until the child execs or exits. */
	volatile int shared = 0;
	pid = vfork();
	if (pid == 0) {
		shared = 7;
		_exit(5);
	}
	CHECK(waitpid(pid, &status, 0) == pid && WEXITSTATUS(status) == 5 && shared == 7, "vfork",
	      "status %x shared %d", status, shared);

	/* Many children, reaped by wait(). */
	enum { N = 50 };
	for (int i = 0; i < N; i++)
		if (fork() == 0)
			_exit(i);
	int reaped = 0, sum = 0;
	while ((pid = wait(&status)) > 0) {
		reaped++;
		sum += WEXITSTATUS(status);
	}
	CHECK(reaped == N && sum == N * (N - 1) / 2 && errno == ECHILD, "many_children", "reaped %d sum %d",
	      reaped, sum);
	EXPECT_ERR(waitpid(-1, &status, 0), ECHILD, "echild");
	EXPECT_ERR(waitpid(getpid(), &status, 0), ECHILD, "wait_not_child");

	/* SIGCHLD is delivered. */
	struct sigaction sa = {.sa_handler = on_chld};
	sigaction(SIGCHLD, &sa, NULL);
	pid = fork();
	if (pid == 0)
		_exit(0);
	waitpid(pid, &status, 0);
	CHECK(got_chld, "sigchld", "not delivered");
	signal(SIGCHLD, SIG_DFL);

	/* Grandchild: waitpid on a process that is not our child fails.
	 * Two pipes: the pid goes up one, the release comes down the other (one
	 * shared pipe let the grandchild eat a byte of the pid). */
	int p[2], q[2];
	pipe(p);
	pipe(q);
	pid = fork();
	if (pid == 0) {
		pid_t g = fork();
		if (g == 0) {
			char c;
			read(q[0], &c, 1);
			_exit(0);
		}
		write(p[1], &g, sizeof(g));
		waitpid(g, NULL, 0);
		_exit(0);
	}
	pid_t g = 0;
	CHECK(read(p[0], &g, sizeof(g)) == sizeof(g) && g > 0, "grandchild_pid", "g %d", g);
	EXPECT_ERR(waitpid(g, &status, WNOHANG), ECHILD, "grandchild_not_waitable");
	write(q[1], "x", 1);
	waitpid(pid, &status, 0);
	close(p[0]);
	close(p[1]);
	close(q[0]);
	close(q[1]);

	/* Fork preserves open files and their offsets are shared. */
	t_write_file("f", "abcdef", 0644);
	int fd = open("f", O_RDONLY);
	pid = fork();
	if (pid == 0) {
		char c;
		_exit(read(fd, &c, 1) == 1 && c == 'a' ? 0 : 1);
	}
	waitpid(pid, &status, 0);
	CHECK(WEXITSTATUS(status) == 0 && lseek(fd, 0, SEEK_CUR) == 1, "shared_offset", "offset %ld",
	      (long)lseek(fd, 0, SEEK_CUR));
	close(fd);
	return t_done();
}
