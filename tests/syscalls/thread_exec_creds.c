/* thread_exec_creds: a non-leader thread's exec keeps that thread's
 * credentials (red team 53). Linux's ids are per thread (a raw setresuid
 * changes only its caller); a non-leader that execs takes the leader's pid
 * (de_thread, exchange_tids), and the new image must have the exec'ing
 * thread's ids, not the leader's: moat keys a task by host tid and re-keys
 * the exec'ing thread's entry to the leader's number (tracer.c, the
 * PTRACE_EVENT_EXEC re-key). Two shapes: the leader alive (killed by
 * de_thread) and the leader a zombie (exited with SYS_exit before the
 * exec). The thread drops to U1 while the leader stays root; after the
 * exec the image reports its ids and whether it may create a root-only
 * file. Needs root (skips otherwise). */
#include "t.h"
#include <pthread.h>
#include <sys/syscall.h>

#define U1 61253

static int g_fd;
static int g_zombie;
static char g_exe[4096]; /* read before the leader exits: a zombie leader's
                          * /proc/self/exe is gone */

static void *dropper(void *a)
{
	(void)a;
	if (syscall(SYS_setresuid, U1, U1, U1) != 0)
		_exit(3);
	if (g_zombie)
		usleep(50000); /* the leader has exited by now */
	char fdarg[16];
	snprintf(fdarg, sizeof fdarg, "%d", g_fd);
	char *av[] = { (char *)"thread_exec_creds", (char *)"--report", fdarg, NULL };
	execv(g_exe, av);
	_exit(4);
}

/* "R E S C": the new image's real, effective, saved uid and 1 if it could
 * create a file in the root-only directory dir */
static int report(int fd, const char *dir)
{
	uid_t r = 9, e = 9, s = 9;
	getresuid(&r, &e, &s);
	char path[4096];
	snprintf(path, sizeof path, "%s/f", dir);
	int c = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	if (c >= 0)
		close(c);
	char out[128];
	int n = snprintf(out, sizeof out, "%u %u %u %d", (unsigned)r, (unsigned)e, (unsigned)s, c >= 0);
	write(fd, out, (size_t)n);
	return 0;
}

static void shape(const char *name, int zombie)
{
	char dir[4200];
	snprintf(dir, sizeof dir, "%s/%s", t_scratch, name);
	if (mkdir(dir, 0700) != 0)
		DIE("mkdir %s", dir);
	int fd = -1;
	pid_t p = t_fork_piped(&fd);
	if (p < 0)
		DIE("fork");
	if (p == 0) {
		if (chdir(dir) != 0)
			_exit(5);
		g_fd = fd;
		g_zombie = zombie;
		pthread_t t;
		if (pthread_create(&t, NULL, dropper, NULL) != 0)
			_exit(6);
		if (zombie)
			syscall(SYS_exit, 0);
		for (;;)
			pause();
	}
	char buf[128] = "";
	ssize_t n = read(fd, buf, sizeof buf - 1);
	if (n > 0)
		buf[n] = 0;
	close(fd);
	int st = 0;
	waitpid(p, &st, 0);
	char want[64];
	snprintf(want, sizeof want, "%u %u %u 0", U1, U1, U1);
	char cname[128];
	snprintf(cname, sizeof cname, "%s_keeps_thread_ids", name);
	CHECK(!strcmp(buf, want) && WIFEXITED(st) && WEXITSTATUS(st) == 0, cname,
	      "new image: \"%s\" (want \"%s\"), status 0x%x", buf, want, st);
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--report"))
		return report(atoi(argv[2]), ".");
	t_setup(argc, argv, "thread_exec_creds");
	if (!t_need_root())
		return T_SKIP;
	ssize_t l = readlink("/proc/self/exe", g_exe, sizeof g_exe - 1);
	if (l <= 0)
		DIE("readlink /proc/self/exe");
	g_exe[l] = 0;
	shape("live_leader", 0);
	shape("zombie_leader", 1);
	return t_done();
}
