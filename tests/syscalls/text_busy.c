/* ETXTBSY: a program a process runs may not be opened for writing or
 * truncated (Linux's deny_write_access; under moat the loader maps the
 * program, so the sentry keeps the rule); reading it is fine, and once the
 * process is gone writing is allowed again. The other way round too: a
 * program some process holds open for writing does not run (LTP execve04;
 * before, under moat, it ran), and runs once that fd is closed. */
#include <signal.h>
#include <sys/wait.h>

#include "t.h"

/* -1 with errno that of execve("path", "0") in a child (sleep 0), else 0 */
static int exec_try(const char *path)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		execl(path, "prog", "0", (char *)NULL);
		int e = errno;
		(void)!write(p[1], &e, sizeof e);
		_exit(127);
	}
	close(p[1]);
	int e = 0;
	ssize_t n = read(p[0], &e, sizeof e);
	close(p[0]);
	waitpid(pid, NULL, 0);
	if (n == (ssize_t)sizeof e) {
		errno = e;
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	t_setup(argc, argv, "text_busy");
	char buf[65536];
	ssize_t n;
	int in = open("/bin/sleep", O_RDONLY), out = open("prog", O_WRONLY | O_CREAT | O_TRUNC, 0755);

	CHECK(in >= 0 && out >= 0, "copy_open", "%s", strerror(errno));
	while ((n = read(in, buf, sizeof buf)) > 0)
		if (write(out, buf, (size_t)n) != n)
			break;
	close(in);
	close(out);
	pid_t child = fork();
	if (child == 0) {
		execl("./prog", "prog", "30", (char *)NULL);
		_exit(127);
	}
	/* until the child runs the program (its exe link names it) */
	char exe[64], link[PATH_MAX];
	snprintf(exe, sizeof exe, "/proc/%d/exe", (int)child);
	for (int i = 0; i < 500; i++) {
		ssize_t l = readlink(exe, link, sizeof link - 1);
		if (l > 5 && !strcmp(link + l - 5, "/prog"))
			break;
		usleep(10000);
	}
	EXPECT_ERR(open("prog", O_WRONLY), ETXTBSY, "open_wronly_etxtbsy");
	EXPECT_ERR(open("prog", O_RDWR), ETXTBSY, "open_rdwr_etxtbsy");
	EXPECT_ERR(truncate("prog", 0), ETXTBSY, "truncate_etxtbsy");
	int r = open("prog", O_RDONLY);
	CHECK(r >= 0, "open_rdonly_ok", "%s", strerror(errno));
	if (r >= 0)
		close(r);
	kill(child, SIGKILL);
	int st;
	waitpid(child, &st, 0);
	r = open("prog", O_WRONLY);
	CHECK(r >= 0, "open_wronly_after_exit", "%s", strerror(errno));
	if (r >= 0)
		close(r);
	/* exec of a file open for writing (here by this process: the fd is
	 * inherited by the child, which execs; O_CLOEXEC or not, Linux checks
	 * before it closes them) */
	int w = open("prog", O_WRONLY | O_CLOEXEC);
	CHECK(w >= 0, "open_wronly_for_exec", "%s", strerror(errno));
	EXPECT_ERR(exec_try("./prog"), ETXTBSY, "exec_while_open_for_writing");
	if (w >= 0)
		close(w);
	CHECK(exec_try("./prog") == 0, "exec_after_writer_closed", "%s", strerror(errno));
	return t_done();
}
