/* wait options and job control plumbing: WUNTRACED/WCONTINUED, waitid with
 * WNOWAIT, WSTOPPED, WCONTINUED, P_PGID and P_PIDFD, WNOHANG, process groups
 * and sessions (setpgid/setsid/getpgid/getsid and their refusals), vfork,
 * an exec chain, and an exec from a thread that is not the leader (the
 * process keeps its pid). */
#include "t.h"
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

extern char **environ;

static void *exec_thread(void *arg)
{
	char *argv[] = { "/bin/sh", "-c", "exit $(( $$ == $0 ? 42 : 1 ))", arg, NULL };
	execve("/bin/sh", argv, environ);
	return NULL;
}

int main(int argc, char **argv)
{
	t_setup(argc, argv, "wait_jobs");
	int st;

	/* 1. stopped and continued, seen by waitpid */
	pid_t p = fork();
	if (p == 0) {
		for (;;)
			pause();
	}
	kill(p, SIGSTOP);
	CHECK(waitpid(p, &st, WUNTRACED) == p && WIFSTOPPED(st) && WSTOPSIG(st) == SIGSTOP,
	      "waitpid_wuntraced", "st %#x", st);
	kill(p, SIGCONT);
	CHECK(waitpid(p, &st, WCONTINUED) == p && WIFCONTINUED(st), "waitpid_wcontinued", "st %#x", st);
	CHECK(waitpid(p, &st, WNOHANG) == 0, "waitpid_wnohang_running", "child not running");

	/* 2. waitid: WSTOPPED, WCONTINUED, WNOWAIT keeps the zombie */
	siginfo_t si;
	kill(p, SIGSTOP);
	memset(&si, 0, sizeof si);
	CHECK(waitid(P_PID, p, &si, WSTOPPED) == 0 && si.si_pid == p && si.si_code == CLD_STOPPED &&
	      si.si_status == SIGSTOP, "waitid_wstopped", "code %d", si.si_code);
	kill(p, SIGCONT);
	memset(&si, 0, sizeof si);
	CHECK(waitid(P_PID, p, &si, WCONTINUED) == 0 && si.si_code == CLD_CONTINUED,
	      "waitid_wcontinued", "code %d", si.si_code);
	kill(p, SIGTERM);
	memset(&si, 0, sizeof si);
	CHECK(waitid(P_PID, p, &si, WEXITED | WNOWAIT) == 0 && si.si_code == CLD_KILLED &&
	      si.si_status == SIGTERM, "waitid_wnowait", "code %d", si.si_code);
	CHECK(waitpid(p, &st, 0) == p && WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM,
	      "reaped_after_wnowait", "st %#x", st);

	/* 3. waitid P_PGID and P_PIDFD */
	p = fork();
	if (p == 0) {
		setpgid(0, 0);
		_exit(5);
	}
	setpgid(p, p); /* both sides, as shells do (one of them wins) */
	memset(&si, 0, sizeof si);
	CHECK(waitid(P_PGID, p, &si, WEXITED) == 0 && si.si_pid == p && si.si_status == 5,
	      "waitid_p_pgid", "pid %d status %d", si.si_pid, si.si_status);
	p = fork();
	if (p == 0)
		_exit(6);
	int pfd = (int)syscall(SYS_pidfd_open, p, 0);
	memset(&si, 0, sizeof si);
	CHECK(pfd >= 0 && waitid(P_PIDFD, pfd, &si, WEXITED) == 0 && si.si_pid == p &&
	      si.si_status == 6, "waitid_p_pidfd", "%s", strerror(errno));
	if (pfd >= 0)
		close(pfd);

	/* 4. process groups and sessions */
	p = fork();
	if (p == 0) {
		int ok = 1;
		pid_t me = getpid();
		ok &= setsid() == me;                       /* a new session */
		ok &= getsid(0) == me && getpgid(0) == me;
		ok &= setsid() == -1 && errno == EPERM;     /* already a leader */
		pid_t c = fork();
		if (c == 0) {
			_exit(setpgid(0, 0) == 0 && getpgid(0) == getpid() &&
			      getsid(0) == getppid() ? 0 : 1);
		}
		int cs;
		waitpid(c, &cs, 0);
		ok &= WIFEXITED(cs) && WEXITSTATUS(cs) == 0;
		_exit(ok ? 0 : 1);
	}
	CHECK(waitpid(p, &st, 0) == p && WIFEXITED(st) && WEXITSTATUS(st) == 0, "setsid_setpgid",
	      "st %#x", st);
	/* a child in another session cannot be moved into our group */
	int sync[2];
	if (pipe(sync) < 0)
		DIE("pipe");
	p = fork();
	if (p == 0) {
		setsid();
		write(sync[1], "s", 1);
		pause();
		_exit(0);
	}
	char c;
	read(sync[0], &c, 1);
	EXPECT_ERR(setpgid(p, getpgrp()), EPERM, "setpgid_other_session_eperm");
	CHECK(getsid(p) == p, "getsid_child", "sid %d", (int)getsid(p));
	kill(p, SIGKILL);
	waitpid(p, &st, 0);
	EXPECT_ERR(setpgid(getpid() + 100000, 0), ESRCH, "setpgid_esrch");

	/* 5. vfork + exec, and an exec chain */
	p = vfork();
	if (p == 0) {
		execl("/bin/sh", "sh", "-c", "exec /bin/sh -c 'exec /bin/sh -c \"exit 9\"'", (char *)NULL);
		_exit(99);
	}
	CHECK(waitpid(p, &st, 0) == p && WIFEXITED(st) && WEXITSTATUS(st) == 9, "vfork_exec_chain",
	      "st %#x", st);

	/* 6. exec from a thread that is not the leader: same pid */
	p = fork();
	if (p == 0) {
		char pidstr[16];
		snprintf(pidstr, sizeof pidstr, "%d", (int)getpid());
		pthread_t th;
		pthread_create(&th, NULL, exec_thread, pidstr);
		pthread_join(th, NULL);
		_exit(2);
	}
	CHECK(waitpid(p, &st, 0) == p && WIFEXITED(st) && WEXITSTATUS(st) == 42,
	      "exec_from_thread_keeps_pid", "st %#x", st);

	/* 7. ECHILD once everything is reaped */
	EXPECT_ERR(wait(&st), ECHILD, "wait_echild");
	return t_done();
}
