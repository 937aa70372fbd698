/* ETXTBSY: a program a process runs may not be opened for writing or
 * truncated (Linux's deny_write_access; under moat the loader maps the
 * program, so the sentry keeps the rule); reading it is fine, and once the
 * process is gone writing is allowed again. The other way round too: a
 * program some process holds open for writing does not run (LTP execve04;
 * before, under moat, it ran), and runs once that fd is closed: a file it
 * made itself, one whose note 300 other writers pushed out of the sentry's
 * table, one held by a process with more than 1024 fds (red team 22). */
#include <signal.h>
#include <sys/resource.h>
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

/* a copy of /bin/sleep at name, left open as flags say (-1: failed) */
static int copy_prog(const char *name, int flags)
{
	char buf[65536];
	ssize_t n;
	int in = open("/bin/sleep", O_RDONLY | O_CLOEXEC), out = open(name, flags, 0755);
	if (in < 0 || out < 0) {
		if (in >= 0)
			close(in);
		return out >= 0 ? (close(out), -1) : -1;
	}
	while ((n = read(in, buf, sizeof buf)) > 0)
		if (write(out, buf, (size_t)n) != n)
			break;
	close(in);
	return out;
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

	/* red team 22: every way to hold a program open for writing. A file
	 * this process made (before, only opens of an existing file were
	 * noted: a create ran) */
	w = copy_prog("made", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC);
	CHECK(w >= 0, "create_for_exec", "%s", strerror(errno));
	EXPECT_ERR(exec_try("./made"), ETXTBSY, "exec_of_created_file_open_for_writing");
	if (w >= 0)
		close(w);
	/* a writer whose note 300 other files opened for writing pushed out
	 * of the sentry's table (before: it ran) */
	w = open("prog", O_RDWR | O_CLOEXEC);
	for (int i = 0; i < 300; i++) {
		char nm[32];
		snprintf(nm, sizeof nm, "f%d", i);
		int f = open(nm, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (f >= 0)
			close(f);
		f = open(nm, O_WRONLY | O_CLOEXEC); /* an existing file's open too */
		if (f >= 0)
			close(f);
	}
	EXPECT_ERR(exec_try("./prog"), ETXTBSY, "exec_while_open_for_writing_after_300_others");
	/* a writer noted after 300 others (the sentry's table is a set that
	 * drops the newest note once full: isolation_sentry runs this with
	 * MOAT_TEST_WRITERS_MAX=256, so that the drop happens here) */
	for (int i = 0; i < 300; i++) {
		char nm[32];
		snprintf(nm, sizeof nm, "g%d", i);
		int f = open(nm, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (f >= 0)
			close(f);
	}
	int late = copy_prog("late", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC);
	CHECK(late >= 0, "create_late_for_exec", "%s", strerror(errno));
	EXPECT_ERR(exec_try("./late"), ETXTBSY, "exec_while_open_for_writing_noted_after_300_others");
	if (late >= 0)
		close(late);
	CHECK(exec_try("./late") == 0, "exec_late_after_writer_closed", "%s", strerror(errno));
	unlink("late");
	for (int i = 0; i < 300; i++) {
		char nm[32];
		snprintf(nm, sizeof nm, "f%d", i);
		unlink(nm); /* (kept till now: a freed inode's number comes back) */
		snprintf(nm, sizeof nm, "g%d", i);
		unlink(nm);
	}
	/* the same writer in a process holding more than 1024 fds (before:
	 * "cannot tell", it ran) */
	struct rlimit rl;
	int big = -1;
	if (w >= 0 && getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_max > 1100) {
		if (rl.rlim_cur < 1100) {
			rl.rlim_cur = 1100;
			setrlimit(RLIMIT_NOFILE, &rl);
		}
		big = dup2(w, 1090);
	}
	if (big >= 0) {
		for (int i = 0; i < 1050; i++)
			if (fcntl(w, F_DUPFD_CLOEXEC, 10) < 0)
				break;
		close(w);
		w = -1;
		EXPECT_ERR(exec_try("./prog"), ETXTBSY, "exec_while_open_for_writing_past_1024_fds");
		closefrom(10);
	}
	if (w >= 0)
		close(w);
	CHECK(exec_try("./prog") == 0, "exec_after_writers_closed", "%s", strerror(errno));
	return t_done();
}
