/* procfd_jump: a walk through /proc/self/fd/N/NAME starts at the object of
 * fd N (Linux's nd_jump_link): no search permission on N's ancestors is
 * wanted (red team 43, item 3). Root makes DIR/a (0700) and DIR/a/b (0777)
 * with a file f, opens b, and drops to uid 61245: through the fd it still
 * opens and stats b/f and makes a file in b; moat re-walked b's path and
 * wanted search permission on a (EACCES). A ".." from there goes back
 * through a: EACCES both. Cases in the scratch (under moat an rw bind: host
 * files) and under /tmp (the sandbox's own tmpfs). Needs root (skips
 * otherwise). */
#include "t.h"
#include <grp.h>

#define U1 61245

static void set_up(const char *dir)
{
	char p[PATH_MAX + 32];
	snprintf(p, sizeof p, "%s/a", dir);
	if (mkdir(p, 0700) != 0 || chmod(p, 0700) != 0)
		DIE("mkdir %s", p);
	snprintf(p, sizeof p, "%s/a/b", dir);
	if (mkdir(p, 0777) != 0 || chmod(p, 0777) != 0)
		DIE("mkdir %s", p);
	snprintf(p, sizeof p, "%s/a/b/f", dir);
	if (t_write_file(p, "data", 0644) != 0)
		DIE("write %s", p);
}

/* in the dropped child: the cases for dir, whose a/b is open as fd */
static void cases(const char *tag, int fd)
{
	char p[128], name[96];
	struct stat st;
#define NAME(s) (snprintf(name, sizeof name, "%s_%s", tag, s), name)
	snprintf(p, sizeof p, "/proc/self/fd/%d/f", fd);
	int f = open(p, O_RDONLY);
	CHECK(f >= 0, NAME("open_through_fd"), "%s", strerror(errno));
	if (f >= 0) {
		char b[8] = { 0 };
		CHECK(read(f, b, sizeof b - 1) == 4 && !strcmp(b, "data"), NAME("read_through_fd"), "%s", b);
		close(f);
	}
	CHECK(stat(p, &st) == 0 && st.st_size == 4, NAME("stat_through_fd"), "%s", strerror(errno));
	snprintf(p, sizeof p, "/proc/self/fd/%d/./f", fd);
	CHECK(access(p, R_OK) == 0, NAME("access_dot_through_fd"), "%s", strerror(errno));
	snprintf(p, sizeof p, "/proc/self/fd/%d/new", fd);
	f = open(p, O_WRONLY | O_CREAT | O_EXCL, 0600);
	CHECK(f >= 0, NAME("create_through_fd"), "%s", strerror(errno));
	if (f >= 0) {
		close(f);
		CHECK(fstatat(fd, "new", &st, 0) == 0 && st.st_uid == U1, NAME("created_owner"), "%s uid %u",
		      strerror(errno), (unsigned)st.st_uid);
		CHECK(unlink(p) == 0, NAME("unlink_through_fd"), "%s", strerror(errno));
	}
	snprintf(p, sizeof p, "/proc/self/fd/%d/", fd);
	int d = open(p, O_RDONLY | O_DIRECTORY);
	CHECK(d >= 0, NAME("open_dir_trailing_slash"), "%s", strerror(errno));
	if (d >= 0)
		close(d);
	errno = 0;
	snprintf(p, sizeof p, "/proc/self/fd/%d/../b/f", fd);
	CHECK(open(p, O_RDONLY) < 0 && errno == EACCES, NAME("dotdot_needs_search"), "%s", strerror(errno));
	errno = 0;
	snprintf(p, sizeof p, "/proc/self/fd/%d/f/x", fd);
	CHECK(open(p, O_RDONLY) < 0 && errno == ENOTDIR, NAME("file_then_more_enotdir"), "%s", strerror(errno));
#undef NAME
}

int main(int argc, char **argv)
{
	t_setup(argc, argv, "procfd_jump");
	if (!t_need_root())
		return T_SKIP;
	char tmp[] = "/tmp/procfd_jump.XXXXXX";
	if (!mkdtemp(tmp) || chmod(tmp, 0755) != 0 || chmod(t_scratch, 0755) != 0)
		DIE("mkdtemp");
	set_up(t_scratch);
	set_up(tmp);
	char p[PATH_MAX + 32];
	snprintf(p, sizeof p, "%s/a/b", t_scratch);
	int fs = open(p, O_RDONLY | O_DIRECTORY);
	snprintf(p, sizeof p, "%s/a/b", tmp);
	int ft = open(p, O_RDONLY | O_DIRECTORY);
	if (fs < 0 || ft < 0)
		DIE("open b");
	pid_t c = fork();
	if (c < 0)
		DIE("fork");
	if (c == 0) {
		if (setgroups(0, NULL) != 0 || setresgid(U1, U1, U1) != 0 || setresuid(U1, U1, U1) != 0)
			_exit(99);
		snprintf(p, sizeof p, "%s/a/b/f", t_scratch);
		errno = 0;
		CHECK(open(p, O_RDONLY) < 0 && errno == EACCES, "by_name_eacces", "%s", strerror(errno));
		cases("scratch", fs);
		cases("tmp", ft);
		_exit(t_failures ? 1 : 0);
	}
	int st;
	waitpid(c, &st, 0);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "dropped_child", "status %#x", st);
	close(fs);
	close(ft);
	t_rmrf(tmp);
	return t_done();
}
