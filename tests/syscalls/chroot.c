/* chroot: Linux's errors in Linux's order (the walk, search permission,
 * CAP_SYS_CHROOT); chroot("/") keeps the root; as root, chroot into a
 * directory: absolute paths and absolute symlinks start there, ".." stops
 * there, getcwd is relative to it (ENOENT from glibc for a cwd outside),
 * children inherit it, a second chroot nests; the root is kept by object:
 * renamed by another process, it stays the root (paths, "..", getcwd,
 * /proc/self/root, RESOLVE_IN_ROOT). */
#include <linux/openat2.h>
#include <sys/wait.h>

#include "t.h"

#define J(cond, name) do { if (cond) printf("ok jail_%s\n", name); else { printf("FAIL jail_%s: errno %d\n", name, errno); bad = 1; } } while (0)

/* in a child: the root changes for good */
static void jail(void)
{
	char cwd[PATH_MAX];
	struct stat a, b;

	mkdir("j", 0755);
	mkdir("j/sub", 0755);
	mkdir("j/sub/in", 0755);
	t_write_file("j/sub/x", "jailed", 0644);
	symlink("/sub", "j/abs");
	symlink("../../../../sub", "j/sub/up");
	fflush(stdout);
	pid_t p = fork();
	if (p == 0) {
		char buf[64];
		int bad = 0;
		J(chroot("j") == 0, "chroot");
		J(!getcwd(cwd, sizeof cwd) && errno == ENOENT, "cwd_outside_enoent");
		J(access("/sub/x", F_OK) == 0, "abs_path_inside");
		J(access("/j", F_OK) < 0 && errno == ENOENT, "old_names_gone");
		J(t_read_file("/abs/x", buf, sizeof buf) == 6 && !strcmp(buf, "jailed"), "abs_symlink_inside");
		J(access("/sub/up/x", F_OK) == 0, "dotdot_symlink_stops");
		J(chdir("/sub/in") == 0 && getcwd(cwd, sizeof cwd) && !strcmp(cwd, "/sub/in"), "getcwd");
		J(stat("../../../..", &a) == 0 && stat("/", &b) == 0 && a.st_ino == b.st_ino &&
		  a.st_dev == b.st_dev, "dotdot_stops_at_root");
		J(access("../../sub/x", F_OK) == 0, "relative_inside");
		fflush(stdout);
		pid_t q = fork();
		if (q == 0)
			_exit(access("/sub/x", F_OK) == 0 && getcwd(cwd, sizeof cwd) &&
			      !strcmp(cwd, "/sub/in") ? 0 : 1);
		int st = -1;
		waitpid(q, &st, 0);
		J(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child_inherits");
		J(chroot("/sub") == 0 && access("/x", F_OK) == 0 && access("/sub", F_OK) < 0, "nested");
		J(getcwd(cwd, sizeof cwd) && !strcmp(cwd, "/in"), "nested_getcwd");
		fflush(stdout);
		_exit(bad);
	}
	int st = -1;
	waitpid(p, &st, 0);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "jail", "child status %#x", st);
}

/* chroot through /proc/self/fd/N enters N's directory (red team 48:
 * ENOTDIR under moat, the link itself) */
static void jail_proc_fd(void)
{
	mkdir("pj", 0755);
	t_write_file("pj/y", "pjail", 0644);
	fflush(stdout);
	pid_t p = fork();
	if (p == 0) {
		char lp[64], buf[64];
		int bad = 0, d = open("pj", O_RDONLY | O_DIRECTORY);
		snprintf(lp, sizeof lp, "/proc/self/fd/%d", d);
		J(d >= 0 && chroot(lp) == 0, "proc_fd_chroot");
		J(t_read_file("/y", buf, sizeof buf) == 5 && !strcmp(buf, "pjail"), "proc_fd_root_inside");
		fflush(stdout);
		_exit(bad);
	}
	int st = -1;
	waitpid(p, &st, 0);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "jail_proc_fd", "child status %#x", st);
}

/* the root renamed by another process (the parent, outside the chroot)
 * stays the child's root, as Linux keeps a root by its dentry */
static void jail_renamed(void)
{
	int go[2], done[2];

	mkdir("r", 0755);
	mkdir("r/sub", 0755);
	t_write_file("r/sub/x", "kept", 0644);
	if (pipe(go) < 0 || pipe(done) < 0) {
		CHECK(0, "renamed_pipe", "%s", strerror(errno));
		return;
	}
	fflush(stdout);
	pid_t p = fork();
	if (p == 0) {
		char cwd[PATH_MAX], buf[64];
		struct stat a, b;
		int bad = 0;
		close(go[0]);
		close(done[1]);
		J(chroot("r") == 0 && chdir("/sub") == 0, "renamed_chroot");
		if (write(go[1], "g", 1) != 1 || read(done[0], buf, 1) != 1)
			_exit(2);
		J(t_read_file("/sub/x", buf, sizeof buf) == 4 && !strcmp(buf, "kept"), "renamed_abs_path");
		J(getcwd(cwd, sizeof cwd) && !strcmp(cwd, "/sub"), "renamed_getcwd");
		J(stat("/..", &a) == 0 && stat("/", &b) == 0 && a.st_ino == b.st_ino &&
		  a.st_dev == b.st_dev && stat("/sub", &b) == 0, "renamed_dotdot_stops");
		ssize_t l = readlink("/proc/self/root", buf, sizeof buf - 1);
		if (l >= 0)
			buf[l] = 0;
		/* /proc is not in the chroot natively: only the guest's /proc
		 * (the sandbox's, outside too) is read where it exists */
		J(l < 0 ? errno == ENOENT : !strcmp(buf, "/"), "renamed_proc_root");
		struct open_how how = { .flags = O_RDONLY, .resolve = RESOLVE_IN_ROOT };
		int d = open("/sub", O_RDONLY | O_DIRECTORY);
		int f = d < 0 ? -1 : (int)syscall(SYS_openat2, d, "/x", &how, sizeof how);
		J(f >= 0 || errno == ENOSYS, "renamed_resolve_in_root");
		if (f >= 0)
			close(f);
		if (d >= 0)
			close(d);
		J(mkdir("/made", 0755) == 0 && access("/made", F_OK) == 0, "renamed_create");
		fflush(stdout);
		_exit(bad);
	}
	close(go[1]);
	close(done[0]);
	char c;
	int ok = read(go[0], &c, 1) == 1;
	CHECK(ok && rename("r", "r2") == 0, "renamed_by_other", "%s", strerror(errno));
	if (write(done[1], "d", 1) != 1)
		ok = 0;
	close(go[0]);
	close(done[1]);
	int st = -1;
	waitpid(p, &st, 0);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "renamed_jail", "child status %#x", st);
	CHECK(access("r2/made", F_OK) == 0, "renamed_created_inside", "%s", strerror(errno));
}

int main(int argc, char **argv)
{
	t_setup(argc, argv, "chroot");
	char longname[PATH_MAX + 16];
	int root = geteuid() == 0;

	t_write_file("f", "x", 0644);
	mkdir("d", 0755);
	symlink("loop2", "loop1");
	symlink("loop1", "loop2");
	memset(longname, 'a', sizeof longname - 1);
	longname[sizeof longname - 1] = 0;

	EXPECT_ERR(chroot("missing"), ENOENT, "enoent");
	EXPECT_ERR(chroot("f"), ENOTDIR, "enotdir");
	EXPECT_ERR(chroot("f/x"), ENOTDIR, "enotdir_component");
	EXPECT_ERR(chroot("loop1"), ELOOP, "eloop");
	EXPECT_ERR(chroot(longname), ENAMETOOLONG, "enametoolong");
	EXPECT_ERR(syscall(SYS_chroot, (char *)1), EFAULT, "efault");
	EXPECT_ERR(chroot(""), ENOENT, "empty");
	if (root) {
		EXPECT_OK(chroot("/"), "root_keeps_root");
		/* then / is still the same directory */
		CHECK(access("/proc/self", F_OK) == 0, "root_unchanged", "%s", strerror(errno));
		jail();
		jail_proc_fd();
		jail_renamed();
	} else {
		EXPECT_ERR(chroot("/"), EPERM, "no_cap_eperm");
		EXPECT_ERR(chroot("d"), EPERM, "no_cap_eperm_dir");
	}
	return t_done();
}
