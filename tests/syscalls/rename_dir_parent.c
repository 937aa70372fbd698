/* A directory that changes parent has its ".." rewritten, so Linux's
 * vfs_rename wants write permission on the directory itself (and, with
 * RENAME_EXCHANGE, on a directory target too) besides the two parents'
 * write and search: a user who may write both parents still cannot move
 * root's 0755 directory out of one into the other, nor exchange its own
 * file with root's directory elsewhere; within one parent it may. Red team
 * 43: moat checked only the parents (the gofer renames with its own
 * rights), and a dropped user moved root's directories anywhere it could
 * write. Each case runs in the scratch (under moat an rw bind: host files)
 * and under /tmp (the sandbox's own tmpfs); as another user (the rootless
 * tier) its own 0555 directory stands in for root's. */
#include "t.h"
#include <grp.h>

#define OTHER 1000

static int mkdir_mode(const char *p, mode_t m)
{
	return mkdir(p, m) == 0 && chmod(p, m) == 0 ? 0 : -1;
}

/* dir has a/ and b/, both 0777; a/ro (root's 0755 or the user's 0555),
 * b/ro2 likewise; a/own, a/ownf and b/ownd the mover's own */
static void set_up(const char *dir, mode_t ro)
{
	char p[PATH_MAX + 32];
	static const char *const d777[] = { "a", "b" };
	for (int i = 0; i < 2; i++) {
		snprintf(p, sizeof p, "%s/%s", dir, d777[i]);
		if (mkdir_mode(p, 0777) != 0)
			DIE("mkdir %s", p);
	}
	snprintf(p, sizeof p, "%s/a/ro", dir);
	if (mkdir_mode(p, ro) != 0)
		DIE("mkdir %s", p);
	snprintf(p, sizeof p, "%s/a/ro_same", dir);
	if (mkdir_mode(p, ro) != 0)
		DIE("mkdir %s", p);
	snprintf(p, sizeof p, "%s/b/ro2", dir);
	if (mkdir_mode(p, ro) != 0)
		DIE("mkdir %s", p);
}

static void mover_cases(const char *where, const char *dir)
{
	char s[PATH_MAX + 32], d[PATH_MAX + 32], name[128];

#define NAME(x) (snprintf(name, sizeof name, "%s_%s", where, x), name)
	snprintf(s, sizeof s, "%s/a/ro", dir);
	snprintf(d, sizeof d, "%s/b/ro", dir);
	EXPECT_ERR(rename(s, d), EACCES, NAME("unwritable_dir_other_parent"));
	snprintf(s, sizeof s, "%s/a/ro_same", dir);
	snprintf(d, sizeof d, "%s/a/ro_moved", dir);
	EXPECT_OK(rename(s, d), NAME("unwritable_dir_same_parent"));
	snprintf(s, sizeof s, "%s/a/own", dir);
	if (mkdir_mode(s, 0755) != 0)
		DIE("mkdir %s", s);
	snprintf(d, sizeof d, "%s/b/own", dir);
	EXPECT_OK(rename(s, d), NAME("own_dir_other_parent"));
	snprintf(s, sizeof s, "%s/a/ownf", dir);
	if (t_write_file(s, "x", 0644) != 0)
		DIE("write %s", s);
	snprintf(d, sizeof d, "%s/b/ro2", dir);
	EXPECT_ERR(syscall(SYS_renameat2, AT_FDCWD, s, AT_FDCWD, d, RENAME_EXCHANGE), EACCES,
		   NAME("exchange_with_unwritable_dir_other_parent"));
	snprintf(d, sizeof d, "%s/b/own", dir);
	EXPECT_OK(syscall(SYS_renameat2, AT_FDCWD, s, AT_FDCWD, d, RENAME_EXCHANGE),
		  NAME("exchange_with_own_dir_other_parent"));
#undef NAME
}

static void drop_and_move(const char *where, const char *dir)
{
	pid_t p = fork();
	if (p < 0)
		DIE("fork");
	if (p == 0) {
		t_become(OTHER);
		mover_cases(where, dir);
		t_child_exit();
	}
	t_child_wait(p);
}

int main(int argc, char **argv)
{
	t_setup(argc, argv, "rename_dir_parent");
	int root = geteuid() == 0;
	char tmp[] = "/tmp/rename_dir_parent.XXXXXX";
	if (!mkdtemp(tmp) || chmod(tmp, 0755) != 0)
		DIE("mkdtemp");
	if (chmod(t_scratch, 0755) != 0)
		DIE("chmod scratch");
	set_up(t_scratch, root ? 0755 : 0555);
	set_up(tmp, root ? 0755 : 0555);
	if (root) {
		drop_and_move("scratch", t_scratch);
		drop_and_move("tmp", tmp);
	} else {
		mover_cases("scratch", t_scratch);
		mover_cases("tmp", tmp);
	}
	t_rmrf(tmp);
	return t_done();
}
