/*
 * A process's CPU affinity across fork and execve is its own: a fork's
 * child starts with its parent's mask and an exec keeps the caller's
 * (sched(7)). Under moat the tracer runs a new child from its fork to its
 * first stop, and an exec from its stop to PTRACE_EVENT_EXEC (or the failed
 * call's exit), pinned to the tracer's CPU, and gives the task its own mask
 * back before it runs a guest instruction (sentry/tracer.c task_pin; issue
 * 6, pexec3): these cases see the mask right after fork, after exec (many
 * times: each exec is such a window), after an exec the kernel fails once
 * rewritten (E2BIG), and with a narrowed mask the pin must not widen. A
 * pin left in place is inherited: the first case compares this program's
 * mask (its own exec was one) with its parent's.
 *
 * "exec_affinity --mask" prints its own mask (the exec target).
 */
#include "t.h"
#include <sched.h>

static void mask_hex(const cpu_set_t *s, char *out, size_t cap)
{
	size_t n = 0;
	out[0] = 0;
	for (int c = 0; c < CPU_SETSIZE && n + 8 < cap; c++)
		if (CPU_ISSET(c, s))
			n += (size_t)snprintf(out + n, cap - n, "%d,", c);
}

static int own_mask(char *out, size_t cap)
{
	cpu_set_t s;
	if (sched_getaffinity(0, sizeof s, &s) < 0)
		return -errno;
	mask_hex(&s, out, cap);
	return 0;
}

/* fork; the child sends its mask right away (mode 0), or execs
 * "--mask" (mode 1), or execs with an argv the kernel refuses (E2BIG,
 * after the sentry rewrote the call) and then sends its mask (mode 2).
 * Returns 0 and the child's mask in out, or -1. */
static int child_mask(int mode, char *out, size_t cap)
{
	int fd;
	pid_t pid = t_fork_piped(&fd);
	if (pid < 0)
		return -1;
	if (pid == 0) {
		char m[1024];
		if (mode == 1) {
			dup2(fd, 1);
			char *av[] = {t_self, "--mask", NULL}, *ev[] = {NULL};
			execve(t_self, av, ev);
			_exit(127);
		}
		if (mode == 2) {
			/* one argument past MAX_ARG_STRLEN (32 pages): E2BIG
			 * from the kernel, after the sentry rewrote the call */
			static char big[33 * 4096 + 1];
			memset(big, 'x', sizeof big - 1);
			char *av[] = {t_self, big, NULL}, *ev[] = {NULL};
			execve(t_self, av, ev);
			if (errno != E2BIG)
				_exit(3);
		}
		if (own_mask(m, sizeof m) < 0)
			_exit(2);
		ssize_t w = write(fd, m, strlen(m) + 1);
		_exit(w > 0 ? 0 : 1);
	}
	size_t n = t_read_to_end(fd, out, cap);
	if (n && out[n - 1] == '\n')
		out[n - 1] = 0;
	int st;
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return -1;
	return 0;
}

/* rounds of fork (+exec): every child's mask must be want */
static void rounds(const char *name, int mode, int n, const char *want)
{
	char got[1024];
	for (int i = 0; i < n; i++) {
		if (child_mask(mode, got, sizeof got) < 0) {
			t_fail(name, "round %d: the child failed", i);
			return;
		}
		if (strcmp(got, want) != 0) {
			t_fail(name, "round %d: mask %s, want %s", i, got, want);
			return;
		}
	}
	t_ok(name);
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--mask") == 0) {
		char m[1024];
		if (own_mask(m, sizeof m) < 0)
			return 2;
		printf("%s\n", m);
		return 0;
	}
	t_setup(argc, argv, "exec_affinity");
	char all[1024], one[1024];
	cpu_set_t s, mine;
	if (sched_getaffinity(0, sizeof mine, &mine) < 0)
		DIE("sched_getaffinity");
	mask_hex(&mine, all, sizeof all);
	/* this program's own exec (under moat, the first of the sandbox)
	 * kept its parent's mask: the harness's shell, or moat's init */
	cpu_set_t pm;
	char pmask[1024];
	if (sched_getaffinity(getppid(), sizeof pm, &pm) < 0)
		DIE("sched_getaffinity(parent)");
	mask_hex(&pm, pmask, sizeof pmask);
	CHECK(strcmp(pmask, all) == 0, "own_exec_kept_parents_mask", "mask %s, the parent's %s", all, pmask);

	rounds("fork_child_keeps_mask", 0, 50, all);
	rounds("exec_keeps_mask", 1, 100, all);
	rounds("failed_exec_keeps_mask", 2, 20, all);

	/* narrowed to the highest CPU it may use: one CPU, nothing to pin */
	int last = -1;
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &mine))
			last = c;
	CPU_ZERO(&s);
	CPU_SET(last, &s);
	if (sched_setaffinity(0, sizeof s, &s) < 0)
		DIE("sched_setaffinity");
	mask_hex(&s, one, sizeof one);
	rounds("narrow_mask_fork", 0, 20, one);
	rounds("narrow_mask_exec", 1, 20, one);
	if (sched_setaffinity(0, sizeof mine, &mine) < 0)
		DIE("sched_setaffinity back");
	rounds("mask_back_exec", 1, 20, all);
	return t_done();
}
