/* chown by someone who is not the file's owner (Linux's chown_ok,
 * chgrp_ok, notify_change): naming the ids the file already has is still
 * naming them (EPERM without CAP_CHOWN), and chown(f, -1, -1), which names
 * none, clears S_ISUID (and S_ISGID with S_IXGRP) of a non-directory, a mode
 * change only the owner or CAP_FOWNER may make (EPERM, the bits stay); with
 * no bit to clear it succeeds. The owner's own chown(-1, -1) clears its
 * S_ISUID. Red team 43: moat let a dropped user name root's ids and clear
 * the set-id bits of root's files. Cases run in the scratch (under moat an
 * rw bind: host files, set-id bits virtual) and under /tmp (the sandbox's
 * own tmpfs). As another user (the rootless tier) only the owner's cases.
 * Root without CAP_CHOWN but with CAP_FOWNER (red team 44): CAP_FOWNER is
 * no owner for chown_ok/chgrp_ok (moat took it as one on its own files: a
 * chgrp of another user's file to root's group went), only for the mode
 * change of clearing the set-id bits. */
#include "t.h"
#include <grp.h>
#include <linux/capability.h>
#include <sys/syscall.h>

#define OTHER 1000

static mode_t mode_of(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 ? st.st_mode & 07777 : (mode_t)-1;
}

static void mk(const char *dir, const char *f, mode_t m, uid_t u)
{
	char p[PATH_MAX + 32];
	snprintf(p, sizeof p, "%s/%s", dir, f);
	if (t_write_file(p, "x", 0644) != 0 || (u != (uid_t)-1 && chown(p, u, u) != 0) || chmod(p, m) != 0)
		DIE("set up %s", p);
}

static void set_up(const char *dir, int root)
{
	char p[PATH_MAX + 32];
	if (root) {
		mk(dir, "suid", 04755, (uid_t)-1);
		mk(dir, "sgidx", 02755, (uid_t)-1);
		mk(dir, "plain", 0644, (uid_t)-1);
		mk(dir, "sgid", 02644, (uid_t)-1);   /* group 0: OTHER is no member */
		mk(dir, "sgid_member", 02644, (uid_t)-1);
		snprintf(p, sizeof p, "%s/sgid_member", dir);
		if (chown(p, 0, OTHER) != 0 || chmod(p, 02644) != 0)
			DIE("chgrp %s", p);
		mk(dir, "own_sgid", 02644, OTHER);
		snprintf(p, sizeof p, "%s/own_sgid", dir);
		if (chown(p, OTHER, 0) != 0 || chmod(p, 02644) != 0)
			DIE("chgrp %s", p);
	}
	mk(dir, "own_suid", 04755, root ? OTHER : (uid_t)-1);
}

static void cases(const char *where, const char *dir, int root)
{
	char p[PATH_MAX + 32], name[128];
#define AT(f) (snprintf(p, sizeof p, "%s/%s", dir, f), p)
#define NAME(x) (snprintf(name, sizeof name, "%s_%s", where, x), name)
	if (root) {
		EXPECT_ERR(chown(AT("suid"), (uid_t)-1, (gid_t)-1), EPERM, NAME("nonowner_keeps_suid"));
		CHECK(mode_of(AT("suid")) == 04755, NAME("nonowner_suid_mode"), "mode %o", mode_of(p));
		EXPECT_ERR(chown(AT("sgidx"), (uid_t)-1, (gid_t)-1), EPERM, NAME("nonowner_keeps_sgid"));
		CHECK(mode_of(AT("sgidx")) == 02755, NAME("nonowner_sgid_mode"), "mode %o", mode_of(p));
		/* S_ISGID without S_IXGRP: Linux >= 6.2 (setattr_should_drop_sgid)
		 * clears it for a caller in neither the file's group nor
		 * CAP_FSETID, so a non-owner's chown(-1, -1) is a mode change:
		 * EPERM (red team 43: moat allowed it); a member changes nothing */
		EXPECT_ERR(chown(AT("sgid"), (uid_t)-1, (gid_t)-1), EPERM, NAME("nonowner_nonmember_sgid"));
		CHECK(mode_of(AT("sgid")) == 02644, NAME("nonowner_nonmember_sgid_mode"), "mode %o", mode_of(p));
		EXPECT_OK(chown(AT("sgid_member"), (uid_t)-1, (gid_t)-1), NAME("nonowner_member_sgid"));
		CHECK(mode_of(AT("sgid_member")) == 02644, NAME("nonowner_member_sgid_mode"), "mode %o", mode_of(p));
		/* the owner outside the file's group: the bit goes */
		EXPECT_OK(chown(AT("own_sgid"), (uid_t)-1, (gid_t)-1), NAME("owner_nonmember_sgid"));
		CHECK(mode_of(AT("own_sgid")) == 0644, NAME("owner_nonmember_sgid_cleared"), "mode %o", mode_of(p));
		EXPECT_OK(chown(AT("plain"), (uid_t)-1, (gid_t)-1), NAME("nonowner_no_change_plain"));
		EXPECT_ERR(chown(AT("plain"), 0, (gid_t)-1), EPERM, NAME("nonowner_names_owner"));
		EXPECT_ERR(chown(AT("plain"), (uid_t)-1, 0), EPERM, NAME("nonowner_names_group"));
		EXPECT_ERR(lchown(AT("plain"), 0, 0), EPERM, NAME("nonowner_names_both"));
	}
	EXPECT_OK(chown(AT("own_suid"), (uid_t)-1, (gid_t)-1), NAME("owner_no_change"));
	CHECK(mode_of(AT("own_suid")) == 0755, NAME("owner_clears_suid"), "mode %o", mode_of(p));
	EXPECT_OK(chown(AT("own_suid"), getuid(), getgid()), NAME("owner_names_itself"));
#undef AT
#undef NAME
}

static void as_other(const char *where, const char *dir)
{
	pid_t p = fork();
	if (p < 0)
		DIE("fork");
	if (p == 0) {
		t_become(OTHER);
		cases(where, dir, 1);
		t_child_exit();
	}
	t_child_wait(p);
}

/* root with CAP_CHOWN dropped from the effective set, CAP_FOWNER kept */
static void as_fowner(const char *where, const char *dir)
{
	pid_t p = fork();
	if (p < 0)
		DIE("fork");
	if (p == 0) {
		struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
		struct __user_cap_data_struct d[2];
		char f[PATH_MAX + 32], s[PATH_MAX + 32], name[128];
		if (syscall(SYS_capget, &h, d) != 0)
			DIE("capget");
		d[0].effective &= ~(1u << CAP_CHOWN);
		if (syscall(SYS_capset, &h, d) != 0)
			DIE("capset");
		snprintf(f, sizeof f, "%s/%s", dir, "fowner_plain");
		snprintf(s, sizeof s, "%s/%s", dir, "fowner_suid");
#define NAME(x) (snprintf(name, sizeof name, "%s_%s", where, x), name)
		EXPECT_ERR(chown(f, (uid_t)-1, 0), EPERM, NAME("fowner_is_no_owner_group"));
		EXPECT_ERR(chown(f, OTHER, (gid_t)-1), EPERM, NAME("fowner_is_no_owner_uid"));
		EXPECT_ERR(chown(f, (uid_t)-1, OTHER), EPERM, NAME("fowner_names_file_group"));
		struct stat st;
		CHECK(stat(f, &st) == 0 && st.st_uid == OTHER && st.st_gid == OTHER, NAME("fowner_ids_kept"),
		      "ids %d:%d", (int)st.st_uid, (int)st.st_gid);
		EXPECT_OK(chown(s, (uid_t)-1, (gid_t)-1), NAME("fowner_clears_suid"));
		CHECK(mode_of(s) == 0755, NAME("fowner_suid_cleared"), "mode %o", mode_of(s));
#undef NAME
		t_child_exit();
	}
	t_child_wait(p);
}

/* root's own chown of a file with both set-id bits (LTP chown02): S_ISUID
 * always goes from a non-directory, S_ISGID with S_IXGRP; without S_IXGRP
 * root (CAP_FSETID, in the group) keeps it. Under moat a private file's
 * chmod after the gofer's chown once put S_ISUID back (06770 -> 04770). */
static void root_both(const char *where, const char *dir)
{
	char p[PATH_MAX + 32], name[128];
	snprintf(p, sizeof p, "%s/root_both", dir);
	if (t_write_file(p, "x", 0644) != 0 || chmod(p, 06770) != 0)
		DIE("set up %s", p);
	snprintf(name, sizeof name, "%s_root_chown_clears_both", where);
	EXPECT_OK(chown(p, 0, 0), name);
	CHECK(mode_of(p) == 0770, name, "mode %o", mode_of(p));
	if (chmod(p, 06760) != 0)
		DIE("chmod %s", p);
	snprintf(name, sizeof name, "%s_root_chown_keeps_sgid_noexec", where);
	EXPECT_OK(chown(p, 0, 0), name);
	CHECK(mode_of(p) == 02760, name, "mode %o", mode_of(p));
}

int main(int argc, char **argv)
{
	t_setup(argc, argv, "chown_nonowner");
	int root = geteuid() == 0;
	char tmp[] = "/tmp/chown_nonowner.XXXXXX";
	if (!mkdtemp(tmp) || chmod(tmp, 0755) != 0 || chmod(t_scratch, 0755) != 0)
		DIE("mkdtemp");
	set_up(t_scratch, root);
	set_up(tmp, root);
	if (root) {
		as_other("scratch", t_scratch);
		as_other("tmp", tmp);
		mk(t_scratch, "fowner_plain", 0644, OTHER);
		mk(t_scratch, "fowner_suid", 04755, OTHER);
		mk(tmp, "fowner_plain", 0644, OTHER);
		mk(tmp, "fowner_suid", 04755, OTHER);
		as_fowner("scratch", t_scratch);
		as_fowner("tmp", tmp);
		root_both("scratch", t_scratch);
		root_both("tmp", tmp);
	} else {
		cases("scratch", t_scratch, 0);
		cases("tmp", tmp, 0);
	}
	t_rmrf(tmp);
	return t_done();
}
