/* Files a process makes belong to its fs ids: after seteuid/setegid to
 * nobody (65534) a new file, directory and symlink show those ids, and their
 * creator may reopen them for writing, chmod and chown them to its own
 * group, and create inside its own 0700 directory; a directory made in a
 * set-gid directory takes its group and its set-gid bit, a file its group.
 * Under moat the scratch is an rw bind of a host directory (the gofer makes
 * every file as itself: the creator's ids are virtual there). Needs root
 * (natively and inside) to change ids; skipped otherwise. */
#include "t.h"
#include <grp.h>
#include <sys/fsuid.h>

#define NOBODY 65534

static void as_root(void)
{
	if (seteuid(0) != 0 || setegid(0) != 0)
		DIE("back to root");
}

static void as_nobody(gid_t g)
{
	if (setegid(g) != 0 || seteuid(NOBODY) != 0)
		DIE("seteuid %d", NOBODY);
}

int main(int argc, char **argv)
{
	if (geteuid() != 0)
		return T_SKIP;
	t_setup(argc, argv, "owner_new");
	gid_t none = 0;
	if (setgroups(1, &none) != 0)
		DIE("setgroups");
	CHECK(mkdir("pub", 0777) == 0 && chmod("pub", 0777) == 0, "setup_pub", "%s", strerror(errno));
	CHECK(mkdir("sg", 0777) == 0 && chown("sg", 0, 100) == 0 && chmod("sg", 02777) == 0, "setup_sgid_dir",
	      "%s", strerror(errno));

	as_nobody(NOBODY);
	struct stat st;
	int fd = open("pub/f", O_CREAT | O_EXCL | O_RDWR, 0644);
	CHECK(fd >= 0 && fstat(fd, &st) == 0 && st.st_uid == NOBODY && st.st_gid == NOBODY, "new_file_owner",
	      "fd %d uid %u gid %u (%s)", fd, st.st_uid, st.st_gid, strerror(errno));
	CHECK(stat("pub/f", &st) == 0 && st.st_uid == NOBODY && st.st_gid == NOBODY, "new_file_stat",
	      "uid %u gid %u", st.st_uid, st.st_gid);
	CHECK(fd >= 0 && fchmod(fd, 0600) == 0, "creator_fchmod", "%s", strerror(errno));
	if (fd >= 0)
		close(fd);
	CHECK(chmod("pub/f", 0640) == 0 && stat("pub/f", &st) == 0 && (st.st_mode & 07777) == 0640,
	      "creator_chmod", "%s mode %o", strerror(errno), st.st_mode & 07777);
	fd = open("pub/f", O_WRONLY | O_APPEND);
	CHECK(fd >= 0 && write(fd, "x", 1) == 1, "creator_reopen_write", "%s", strerror(errno));
	if (fd >= 0)
		close(fd);
	CHECK(chown("pub/f", (uid_t)-1, NOBODY) == 0, "creator_chown_own_group", "%s", strerror(errno));
	EXPECT_ERR(chown("pub/f", 1, (gid_t)-1), EPERM, "creator_chown_other_user");
	CHECK(mkdir("pub/d", 0700) == 0 && stat("pub/d", &st) == 0 && st.st_uid == NOBODY, "new_dir_owner",
	      "%s uid %u", strerror(errno), st.st_uid);
	fd = open("pub/d/inner", O_CREAT | O_WRONLY, 0600);
	CHECK(fd >= 0, "create_in_own_0700_dir", "%s", strerror(errno));
	if (fd >= 0)
		close(fd);
	CHECK(symlink("f", "pub/l") == 0 && lstat("pub/l", &st) == 0 && st.st_uid == NOBODY, "new_symlink_owner",
	      "%s uid %u", strerror(errno), st.st_uid);
	/* a set-gid directory: its group and, for a directory, its bit */
	CHECK(mkdir("sg/sub", 0755) == 0 && stat("sg/sub", &st) == 0 && st.st_gid == 100 && (st.st_mode & S_ISGID),
	      "sgid_dir_inherited", "%s gid %u mode %o", strerror(errno), st.st_gid, st.st_mode & 07777);
	fd = open("sg/file", O_CREAT | O_WRONLY, 0644);
	CHECK(fd >= 0 && fstat(fd, &st) == 0 && st.st_gid == 100 && !(st.st_mode & S_ISGID), "sgid_file_group",
	      "%s gid %u mode %o", strerror(errno), st.st_gid, st.st_mode & 07777);
	if (fd >= 0)
		close(fd);
	/* another id is not the owner of what nobody made */
	as_root();
	as_nobody(NOBODY);
	if (seteuid(0) != 0 || seteuid(NOBODY + 1 - 2) != 0) /* 65533 */
		DIE("seteuid 65533");
	EXPECT_ERR(chmod("pub/f", 0666), EPERM, "other_id_not_owner");
	EXPECT_ERR(open("pub/d/inner", O_RDONLY), EACCES, "other_id_no_access");
	as_root();
	unlink("pub/d/inner");
	rmdir("pub/d");
	unlink("pub/l");
	unlink("pub/f");
	rmdir("pub");
	unlink("sg/file");
	rmdir("sg/sub");
	rmdir("sg");
	return t_done();
}
