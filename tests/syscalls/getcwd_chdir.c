/* getcwd, chdir, fchdir. */
#include "t.h"

int main(int argc, char **argv)
{
	t_setup(argc, argv, "getcwd_chdir");
	char buf[PATH_MAX], want[PATH_MAX + 32];

	CHECK(getcwd(buf, sizeof(buf)) && strcmp(buf, t_scratch) == 0, "initial", "'%s'", buf);
	mkdir("a", 0755);
	mkdir("a/b", 0755);
	t_write_file("f", "", 0644);
	symlink("a/b", "lnk");

	CHECK(chdir("a/b") == 0, "chdir_relative", "%s", strerror(errno));
	snprintf(want, sizeof(want), "%s/a/b", t_scratch);
	CHECK(getcwd(buf, sizeof(buf)) && strcmp(buf, want) == 0, "getcwd_after_chdir", "'%s'", buf);
	CHECK(chdir("../..") == 0 && getcwd(buf, sizeof(buf)) && strcmp(buf, t_scratch) == 0,
	      "chdir_dotdot", "'%s'", buf);
	CHECK(chdir("lnk") == 0 && getcwd(buf, sizeof(buf)) && strcmp(buf, want) == 0,
	      "chdir_symlink_resolved", "'%s'", buf);
	chdir(t_scratch);
	int fd = open("a", O_RDONLY | O_DIRECTORY);
	snprintf(want, sizeof(want), "%s/a", t_scratch);
	CHECK(fchdir(fd) == 0 && getcwd(buf, sizeof(buf)) && strcmp(buf, want) == 0, "fchdir", "'%s'", buf);
	close(fd);
	chdir(t_scratch);
	fd = open("f", O_RDONLY);
	EXPECT_ERR(fchdir(fd), ENOTDIR, "fchdir_file");
	close(fd);
	EXPECT_ERR(fchdir(9999), EBADF, "fchdir_ebadf");
	EXPECT_ERR(chdir("f"), ENOTDIR, "chdir_file");
	EXPECT_ERR(chdir("missing"), ENOENT, "chdir_enoent");
	EXPECT_ERR(chdir(""), ENOENT, "chdir_empty");
	/* chdir through /proc/self/fd/N enters N's directory (red team 48:
	 * ENOTDIR under moat, the link itself); a file's or a pipe's is
	 * ENOTDIR */
	{
		char lp[64];
		int dfd = open("a/b", O_RDONLY | O_DIRECTORY), ffd = open("f", O_RDONLY), pp[2];
		if (dfd < 0 || ffd < 0 || pipe(pp) != 0)
			DIE("open a/b, f, pipe");
		snprintf(lp, sizeof lp, "/proc/self/fd/%d", dfd);
		snprintf(want, sizeof(want), "%s/a/b", t_scratch);
		CHECK(chdir(lp) == 0 && getcwd(buf, sizeof(buf)) && strcmp(buf, want) == 0, "chdir_proc_fd_dir",
		      "%s '%s'", strerror(errno), buf);
		CHECK(chdir("..") == 0 && getcwd(buf, sizeof(buf)) && strcmp(buf + strlen(buf) - 2, "/a") == 0,
		      "chdir_proc_fd_dir_then_dotdot", "%s '%s'", strerror(errno), buf);
		snprintf(lp, sizeof lp, "/proc/self/fd/%d", ffd);
		EXPECT_ERR(chdir(lp), ENOTDIR, "chdir_proc_fd_file");
		snprintf(lp, sizeof lp, "/proc/self/fd/%d", pp[0]);
		EXPECT_ERR(chdir(lp), ENOTDIR, "chdir_proc_fd_pipe");
		close(dfd);
		close(ffd);
		close(pp[0]);
		close(pp[1]);
		chdir(t_scratch);
	}
	CHECK(chdir("/") == 0 && getcwd(buf, sizeof(buf)) && strcmp(buf, "/") == 0, "chdir_root", "'%s'", buf);
	CHECK(chdir("..") == 0 && getcwd(buf, sizeof(buf)) && strcmp(buf, "/") == 0, "dotdot_at_root",
	      "'%s'", buf);
	chdir(t_scratch);
	EXPECT_ERR(syscall(SYS_getcwd, buf, 2), ERANGE, "erange");
	EXPECT_ERR(syscall(SYS_getcwd, (char *)1, sizeof(buf)), EFAULT, "efault");
	long n = syscall(SYS_getcwd, buf, sizeof(buf));
	CHECK(n == (long)strlen(t_scratch) + 1, "raw_returns_length_with_nul", "n=%ld", n);

	/* cwd removed under us: the raw syscall says ENOENT. */
	mkdir("gone", 0755);
	chdir("gone");
	rmdir(t_scratch[0] ? "../gone" : "");
	EXPECT_ERR(syscall(SYS_getcwd, buf, sizeof(buf)), ENOENT, "removed_cwd");
	chdir(t_scratch);

	/* cwd is per process: a child's chdir does not move the parent. */
	pid_t pid = fork();
	if (pid == 0) {
		chdir("/");
		_exit(0);
	}
	waitpid(pid, NULL, 0);
	CHECK(getcwd(buf, sizeof(buf)) && strcmp(buf, t_scratch) == 0, "child_chdir_private", "'%s'", buf);
	return t_done();
}
