/* probe_untraced.c - guest side of isolation_proctree's clone_untraced_refused
 * (red team 52): a task must never run guest code outside the sentry's
 * tracing. clone(CLONE_UNTRACED) makes a child ptrace does not attach
 * (kernel_clone reports no fork/vfork/clone event and ptrace_init_task
 * links nothing): it ran with the seccomp filter but unknown to the tracer,
 * outside the task table's bound (a fork bomb past the sandbox's share of
 * the host's pid_max) and forked more of its kind. Each form below must be
 * refused (EPERM) before any child runs; a plain fork must still work.
 * Not differential: natively every form runs (the fake-moat self-check sees
 * this case fail). Prints one line per form, "NAME refused ERRNO" or
 * "NAME ran" (or "made (did not run)"); exit 0 when every form was refused. */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static int pfd[2];
static char stack[64 * 1024] __attribute__((aligned(16)));

static int thread_fn(void *arg)
{
	(void)arg;
	(void)!write(pfd[1], "R", 1);
	syscall(SYS_exit, 0);
	return 0;
}

/* ran: did a child write to the pipe within 2 s? A process child has its
 * own copy of the write end: with the parent's closed, the pipe reads end
 * of file at once when no child holds one (none was made, or it exited
 * without writing), so a refusal is not waited out for 2 s. A thread
 * shares the parent's descriptors: for it the parent keeps its write end
 * and waits the 2 s. */
static int ran(int thread)
{
	struct pollfd p = { .fd = pfd[0], .events = POLLIN };
	char c;
	if (!thread) {
		close(pfd[1]);
		pfd[1] = -1;
	}
	if (poll(&p, 1, 2000) == 1 && read(pfd[0], &c, 1) == 1)
		return 1;
	return 0;
}

static int one(const char *name, unsigned long flags, int thread)
{
	long r;
	int bad;
	if (pipe(pfd) < 0)
		return perror("pipe"), 1;
	if (thread) {
		r = clone(thread_fn, stack + sizeof stack, (int)flags, NULL);
	} else {
		r = syscall(SYS_clone, flags, 0, 0, 0, 0);
		if (r == 0) {
			(void)!write(pfd[1], "R", 1);
			_exit(0);
		}
	}
	int e = errno;
	int child_ran = ran(thread);
	bad = r >= 0 || child_ran;
	if (r >= 0 && !thread)
		waitpid((pid_t)r, NULL, __WALL);
	if (bad)
		printf("%s %s\n", name, child_ran ? "ran" : "made (did not run)");
	else
		printf("%s refused %s\n", name, e == EPERM ? "EPERM" : strerror(e));
	fflush(stdout);
	close(pfd[0]);
	if (pfd[1] >= 0)
		close(pfd[1]);
	return bad;
}

int main(void)
{
	int bad = 0;
	bad |= one("fork", CLONE_UNTRACED | SIGCHLD, 0);
	bad |= one("vfork", CLONE_UNTRACED | CLONE_VFORK | SIGCHLD, 0);
	bad |= one("ptrace", CLONE_UNTRACED | CLONE_PTRACE | SIGCHLD, 0);
	bad |= one("thread", CLONE_UNTRACED | CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND |
			      CLONE_THREAD | CLONE_SYSVSEM, 1);
	/* the ordinary forms still work */
	pid_t p = fork();
	if (p == 0)
		_exit(3);
	int st = 0;
	if (p < 0 || waitpid(p, &st, 0) != p || !WIFEXITED(st) || WEXITSTATUS(st) != 3) {
		printf("plain fork failed\n");
		bad = 1;
	} else {
		printf("plain fork ok\n");
	}
	return bad;
}
