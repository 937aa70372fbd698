/* Set-id bits of a new file, as Linux leaves them (LTP creat08, open10,
 * mknod05): a file made with S_ISGID by a member of its group keeps it, a
 * file root makes with S_ISGID in a set-gid directory of another group keeps
 * it (CAP_FSETID), a FIFO likewise, and a non-member's S_ISGID|S_IXGRP file
 * in that directory loses it (CVE-2018-13405, LTP creat09). Each case runs
 * in the scratch (under moat an rw bind: host files, set-id bits virtual)
 * and in a directory under /tmp (under moat the sandbox's own tmpfs: a
 * private file whose chown to its creator's ids cleared the bit; before the
 * fix "dir_a"/"root_sgid"/"fifo" failed in /tmp). Needs root to change
 * ids; skipped otherwise. */
#include "t.h"
#include <grp.h>

#define NOBODY 65534
#define OTHER_GID 100

/* open(O_CREAT | O_EXCL) of dir/file with mode: the new fd's group and
 * set-id bits as wanted (case "<where>_<what>") */
static void create_check(const char *where, const char *what, const char *dir, const char *file,
			 mode_t mode, gid_t gid, mode_t want)
{
	char p[PATH_MAX + 32], name[128];
	struct stat st = { 0 };

	snprintf(p, sizeof p, "%s/%s", dir, file);
	int fd = open(p, O_CREAT | O_EXCL | O_WRONLY, mode);
	snprintf(name, sizeof name, "%s_%s", where, what);
	CHECK(fd >= 0 && fstat(fd, &st) == 0 && st.st_gid == gid && (st.st_mode & 07777) == want, name,
	      "%s gid %u mode %o", strerror(errno), st.st_gid, st.st_mode & 07777);
	if (fd >= 0)
		close(fd);
}

static void cases(const char *where, const char *dir)
{
	char a[PATH_MAX], b[PATH_MAX], p[PATH_MAX + 32], name[128];
	struct stat st;

	snprintf(a, sizeof a, "%s/dir_a", dir);
	snprintf(b, sizeof b, "%s/dir_b", dir);
	if (mkdir(a, 0777) != 0 || chmod(a, 0777) != 0 || chown(a, NOBODY, NOBODY) != 0)
		DIE("set up %s", a);
	if (mkdir(b, 0777) != 0 || chown(b, NOBODY, OTHER_GID) != 0 || chmod(b, 02777) != 0)
		DIE("set up %s", b);
	umask(0);

	/* nobody, a member of the file's group (its own), keeps S_ISGID */
	if (setegid(NOBODY) != 0 || seteuid(NOBODY) != 0)
		DIE("seteuid nobody");
	create_check(where, "member_keeps_sgid", a, "setgid", 02777, NOBODY, 02777);
	snprintf(p, sizeof p, "%s/setgid", a);
	snprintf(name, sizeof name, "%s_member_keeps_sgid_stat", where);
	CHECK(stat(p, &st) == 0 && (st.st_mode & 07777) == 02777, name, "%s mode %o", strerror(errno),
	      st.st_mode & 07777);
	/* nobody is not in the set-gid directory's group: S_ISGID goes */
	create_check(where, "nonmember_loses_sgid", b, "nonmember", 02777, OTHER_GID, 0777);
	if (seteuid(0) != 0 || setegid(0) != 0)
		DIE("back to root");

	/* root (CAP_FSETID) in the set-gid directory of another group */
	create_check(where, "root_keeps_setid", b, "root_sgid", 06777, OTHER_GID, 06777);
	snprintf(p, sizeof p, "%s/fifo", b);
	snprintf(name, sizeof name, "%s_root_fifo_keeps_sgid", where);
	CHECK(mknod(p, S_IFIFO | 02777, 0) == 0 && stat(p, &st) == 0 && st.st_gid == OTHER_GID &&
		      (st.st_mode & 07777) == 02777,
	      name, "%s gid %u mode %o", strerror(errno), st.st_gid, st.st_mode & 07777);
	umask(022);
}

int main(int argc, char **argv)
{
	if (geteuid() != 0)
		return T_SKIP;
	t_setup(argc, argv, "setid_new");
	gid_t none = 0;
	if (setgroups(1, &none) != 0)
		DIE("setgroups");
	cases("scratch", t_scratch);
	char tmp[] = "/tmp/setid_new.XXXXXX";
	if (!mkdtemp(tmp) || chmod(tmp, 0755) != 0)
		DIE("mkdtemp");
	cases("tmp", tmp);
	t_rmrf(tmp);
	return t_done();
}
