/*
 * An exec's auxiliary vector carries the process's ids after the exec
 * (AT_UID, AT_EUID, AT_GID, AT_EGID) and AT_SECURE, Linux's secureexec:
 * set when the effective ids differ from the real ones, so ld.so ignores
 * LD_PRELOAD/LD_LIBRARY_PATH and glibc the other unsafe variables. Under
 * moat the kernel execs the loader with the host ids of the sandbox (the
 * same for every task) and never secure: the loader sets these five from
 * the sentry's virtual ids (loader/loader_abi.h, version 3). Red team 25:
 * a process of ruid 1000, euid 0 exec'd with AT_SECURE 0 (LD_PRELOAD ran
 * with euid 0), and after a drop to 1000 AT_UID still said 0.
 *
 * "auxv_ids --aux" writes its auxv ids and get*id to fd 3.
 */
#include "t.h"
#include <grp.h>
#include <sys/auxv.h>

/* fork; the child sets its ids (mode 0: none; 1: ruid 1000, euid 0;
 * 2: all 1000) and execs "--aux"; its line in out. 0, or -1 */
static int child_aux(int mode, char *out, size_t cap)
{
	int fd;
	pid_t pid = t_fork_piped(&fd);
	if (pid < 0)
		return -1;
	if (pid == 0) {
		if (dup2(fd, 3) < 0)
			_exit(2);
		if (mode && setgroups(0, NULL) < 0)
			_exit(3);
		if (mode == 1 && (setresgid(1000, 0, 0) < 0 || setresuid(1000, 0, 0) < 0))
			_exit(4);
		if (mode == 2 && (setresgid(1000, 1000, 1000) < 0 || setresuid(1000, 1000, 1000) < 0))
			_exit(5);
		char *av[] = { t_self, "--aux", NULL }, *ev[] = { NULL };
		execve(t_self, av, ev);
		_exit(6);
	}
	size_t n = t_read_to_end(fd, out, cap);
	int st = 0;
	waitpid(pid, &st, 0);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		snprintf(out, cap, "child status %#x", st);
	return n > 0 ? 0 : -1;
}

static void expect(const char *name, int mode, const char *want)
{
	char got[256];
	if (child_aux(mode, got, sizeof got) < 0 || strcmp(got, want) != 0)
		t_fail(name, "got '%s', want '%s'", got, want);
	else
		t_ok(name);
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--aux") == 0) {
		dprintf(3, "AT_UID=%lu AT_EUID=%lu AT_GID=%lu AT_EGID=%lu AT_SECURE=%lu ids=%d,%d,%d,%d",
			getauxval(AT_UID), getauxval(AT_EUID), getauxval(AT_GID), getauxval(AT_EGID),
			getauxval(AT_SECURE), (int)getuid(), (int)geteuid(), (int)getgid(), (int)getegid());
		return 0;
	}
	t_setup(argc, argv, "auxv_ids");
	char want[256];
	snprintf(want, sizeof want, "AT_UID=%d AT_EUID=%d AT_GID=%d AT_EGID=%d AT_SECURE=0 ids=%d,%d,%d,%d",
		 (int)getuid(), (int)geteuid(), (int)getgid(), (int)getegid(),
		 (int)getuid(), (int)geteuid(), (int)getgid(), (int)getegid());
	expect("exec_auxv_ids_are_the_process_ids", 0, want);
	if (geteuid() == 0) {
		expect("exec_with_ruid_not_euid_is_secure", 1,
		       "AT_UID=1000 AT_EUID=0 AT_GID=1000 AT_EGID=0 AT_SECURE=1 ids=1000,0,1000,0");
		expect("exec_after_dropping_root_shows_the_new_ids", 2,
		       "AT_UID=1000 AT_EUID=1000 AT_GID=1000 AT_EGID=1000 AT_SECURE=0 ids=1000,1000,1000,1000");
	} else {
		t_ok("exec_with_ruid_not_euid_is_secure");
		t_ok("exec_after_dropping_root_shows_the_new_ids");
	}
	return t_done();
}
