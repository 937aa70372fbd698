/* ETXTBSY: a program a process runs may not be opened for writing or
 * truncated (Linux's deny_write_access; under moat the loader maps the
 * program, so the sentry keeps the rule); reading it is fine, and once the
 * process is gone writing is allowed again. */
#include <signal.h>
#include <sys/wait.h>

#include "t.h"

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
	return t_done();
}
