/* A vfork child (posix_spawn, dash's commands, Python's subprocess) reads
 * /proc/self right after exec, as ld.so does for $ORIGIN (java finds
 * libjli.so so): it must see itself even before its parent's vfork returned
 * (under moat the tracer learns a vfork child's guest pid only then). */
#include "t.h"
#include <spawn.h>

extern char **environ;

int main(int argc, char **argv)
{
	if (argc > 2 && !strcmp(argv[2], "child")) {
		/* first thing after exec: no other trapped call before */
		char b[PATH_MAX];
		ssize_t n = readlink("/proc/self/exe", b, sizeof b - 1);
		char s[32];
		ssize_t m = readlink("/proc/self", s, sizeof s - 1);
		if (n <= 0 || m <= 0)
			_exit(3);
		b[n] = 0;
		s[m] = 0;
		_exit(strcmp(b, argv[3]) || atoi(s) != getpid() ? 4 : 0);
	}
	t_setup(argc, argv, "vfork_self");
	int bad = 0, runs = 400, why = 0;
	char *cargv[] = { argv[0], argv[1] ? argv[1] : "/tmp", "child", t_self, NULL };
	for (int i = 0; i < runs; i += 4) {
		pid_t p[4];
		for (int k = 0; k < 4; k++) /* four at once: the tracer is busier */
			if (posix_spawn(&p[k], t_self, NULL, NULL, cargv, environ) != 0) {
				p[k] = -1;
				bad++;
			}
		for (int k = 0; k < 4; k++) {
			int st;
			if (p[k] < 0 || waitpid(p[k], &st, 0) != p[k])
				continue;
			if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
				bad++;
				why = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
			}
		}
	}
	CHECK(bad == 0, "proc_self_right_after_vfork_exec", "%d of %d children could not read /proc/self (last status %d)",
	      bad, runs, why);
	return t_done();
}
