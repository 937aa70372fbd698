/* What root makes is root's to use as Linux's root may: it reads and writes
 * its own 0000 file, creates in its own 0444 directory and searches its 0000
 * one (CAP_DAC_OVERRIDE), access(2) and faccessat2(AT_EACCESS) say so
 * (LTP access01, access02), and a directory it gave to nobody takes nobody's
 * chmod without the set-gid bit (chmod05). What it keeps from others stays
 * kept: a child that setuid's to nobody gets EACCES on its 0600 file and in
 * its 0444 directory (statfs03), one that clears CAP_DAC_OVERRIDE (and
 * CAP_DAC_READ_SEARCH) from its effective set loses the override, one without
 * CAP_FOWNER or CAP_CHOWN is not the owner of what root gave away; one that
 * kept its capabilities over a setuid (PR_SET_KEEPCAPS) keeps the override.
 * Under moat the scratch is an rw bind of a host directory: the gofer makes
 * every file there, and what guest root makes is the sandbox's own file.
 * Run as another user (the rootless tier) the same files are refused. */
#include "t.h"
#include <grp.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/statfs.h>

#define NOBODY 65534
#define OTHER 1000

#ifndef AT_EACCESS
#define AT_EACCESS 0x200
#endif

static int faccessat2_(const char *p, int mode, int flags)
{
	return (int)syscall(SYS_faccessat2, AT_FDCWD, p, mode, flags);
}

static int open_close(const char *p, int flags)
{
	int fd = open(p, flags | O_CLOEXEC);
	if (fd >= 0)
		close(fd);
	return fd < 0 ? -1 : 0;
}

/* clear capabilities from the effective set (the permitted one stays) */
static void cap_clear_eff(unsigned long long bits)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];
	if (syscall(SYS_capget, &h, d) != 0)
		DIE("capget");
	d[0].effective &= ~(unsigned)bits;
	d[1].effective &= ~(unsigned)(bits >> 32);
	if (syscall(SYS_capset, &h, d) != 0)
		DIE("capset");
}

/* raise the effective set to the permitted one */
static void cap_raise_eff(void)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];
	if (syscall(SYS_capget, &h, d) != 0)
		DIE("capget");
	d[0].effective = d[0].permitted;
	d[1].effective = d[1].permitted;
	if (syscall(SYS_capset, &h, d) != 0)
		DIE("capset");
}

#define CAPB(c) (1ULL << (c))

static void as_nobody(void)
{
	t_become(NOBODY);
	EXPECT_ERR(open_close("f0600", O_RDONLY), EACCES, "nobody_read_root_0600");
	EXPECT_ERR(open_close("f0000", O_RDONLY), EACCES, "nobody_read_root_0000");
	EXPECT_ERR(open_close("tmpf", O_RDONLY), EACCES, "nobody_read_root_tmpfile");
	EXPECT_ERR(access("f0600", R_OK), EACCES, "nobody_access_root_0600");
	EXPECT_ERR(faccessat2_("f0600", R_OK, AT_EACCESS), EACCES, "nobody_eaccess_root_0600");
	EXPECT_ERR(mkdir("d0444/x", 0755), EACCES, "nobody_mkdir_in_root_0444");
	EXPECT_ERR(unlink("d0444/f"), EACCES, "nobody_unlink_in_root_0444");
	struct statfs sf;
	EXPECT_ERR(statfs("d0444/sub", &sf), EACCES, "nobody_statfs_unsearchable");
	EXPECT_ERR(access("d0000/f", F_OK), EACCES, "nobody_search_root_0000_dir");
	EXPECT_ERR(chmod("f0600", 0666), EPERM, "nobody_chmod_root_file");
	EXPECT_OK(open_close("d0555/f0644", O_RDONLY), "nobody_read_root_0644");
	EXPECT_ERR(open_close("d0555/f0644", O_WRONLY), EACCES, "nobody_write_root_0644");
	/* what root gave to OTHER is not nobody's either */
	EXPECT_ERR(open_close("gift", O_RDONLY), EACCES, "nobody_read_others_gift");
}

static void as_other(void)
{
	t_become(OTHER);
	/* root made it 0600 and gave it away: it is OTHER's now */
	int fd = open("gift", O_RDWR | O_APPEND);
	CHECK(fd >= 0 && write(fd, "y", 1) == 1, "other_writes_its_gift", "%s", strerror(errno));
	if (fd >= 0)
		close(fd);
	EXPECT_OK(chmod("gift", 0640), "other_chmods_its_gift");
	EXPECT_ERR(open_close("f0600", O_RDONLY), EACCES, "other_read_root_0600");
}

static void real_nobody_effective_root(void)
{
	/* access(2) checks the real ids, AT_EACCESS the effective ones */
	if (setresuid(NOBODY, 0, 0) != 0)
		DIE("setresuid");
	EXPECT_ERR(access("f0000", R_OK), EACCES, "access_real_nobody");
	EXPECT_OK(faccessat2_("f0000", R_OK | W_OK, AT_EACCESS), "eaccess_effective_root");
	EXPECT_ERR(faccessat2_("f0000", X_OK, AT_EACCESS), EACCES, "eaccess_root_no_x_bit");
}

static void no_dac_override(void)
{
	cap_clear_eff(CAPB(CAP_DAC_OVERRIDE) | CAPB(CAP_DAC_READ_SEARCH));
	EXPECT_ERR(open_close("f0000", O_RDONLY), EACCES, "nocap_read_0000");
	EXPECT_ERR(faccessat2_("f0000", R_OK, AT_EACCESS), EACCES, "nocap_eaccess_0000");
	EXPECT_OK(open_close("f0600", O_RDWR), "nocap_owner_reads_0600");
	EXPECT_ERR(mkdir("d0444/y", 0755), EACCES, "nocap_mkdir_in_0444");
	struct stat st;
	EXPECT_ERR(stat("d0000/f", &st), EACCES, "nocap_search_0000_dir");
	/* access(2) of a real root checks with the permitted set */
	EXPECT_OK(access("f0000", R_OK), "nocap_access_takes_permitted");
	/* FOWNER still held: chmod of what root gave away */
	EXPECT_OK(chmod("gift", 0600), "nocap_dac_fowner_chmod");
}

static void no_fowner(void)
{
	cap_clear_eff(CAPB(CAP_FOWNER));
	EXPECT_ERR(chmod("gift", 0644), EPERM, "nofowner_chmod_others_file");
	EXPECT_OK(chmod("f0600", 0600), "nofowner_chmod_own_file");
}

static void no_chown(void)
{
	cap_clear_eff(CAPB(CAP_CHOWN));
	EXPECT_ERR(chown("gift", 0, 0), EPERM, "nochown_take_back");
	EXPECT_ERR(chown("f0600", OTHER, (gid_t)-1), EPERM, "nochown_give_away");
}

static void keep_caps(void)
{
	if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) != 0 || setresuid(OTHER, OTHER, OTHER) != 0)
		DIE("keepcaps setuid");
	EXPECT_ERR(open_close("f0000", O_RDONLY), EACCES, "keepcaps_effective_cleared");
	cap_raise_eff();
	EXPECT_OK(open_close("f0000", O_RDONLY), "keepcaps_override_read_0000");
	EXPECT_OK(mkdir("d0444/k", 0755), "keepcaps_override_mkdir_in_0444");
}

static void root_cases(void)
{
	struct stat st;
	struct statfs sf;

	CHECK(t_write_file("f0600", "x", 0600) == 0 && t_write_file("f0000", "x", 0000) == 0 &&
	      t_write_file("gift", "x", 0600) == 0, "setup_files", "%s", strerror(errno));
	/* CAP_DAC_OVERRIDE on what it made */
	EXPECT_OK(open_close("f0000", O_RDONLY), "root_reads_0000");
	EXPECT_OK(open_close("f0000", O_WRONLY), "root_writes_0000");
	EXPECT_OK(access("f0000", R_OK | W_OK), "root_access_0000_rw");
	EXPECT_ERR(access("f0000", X_OK), EACCES, "root_access_0000_no_x");
	EXPECT_OK(faccessat2_("f0000", W_OK, AT_EACCESS), "root_eaccess_0000_w");
	EXPECT_OK(mkdir("d0444", 0444), "mkdir_0444");
	EXPECT_OK(mkdir("d0444/sub", 0444), "root_mkdir_in_0444");
	EXPECT_OK(open_close("d0444/f", O_CREAT | O_WRONLY), "root_creat_in_0444");
	EXPECT_OK(rename("d0444/f", "d0444/g") == 0 && rename("d0444/g", "d0444/f") == 0 ? 0 : -1,
		  "root_rename_in_0444");
	EXPECT_OK(symlink("f", "d0444/l"), "root_symlink_in_0444");
	EXPECT_OK(mknod("d0444/p", S_IFIFO | 0000, 0), "root_mkfifo_in_0444");
	EXPECT_OK(open_close("d0444/p", O_RDWR), "root_opens_0000_fifo");
	EXPECT_OK(statfs("d0444/sub", &sf), "root_statfs");
	EXPECT_OK(mkdir("d0000", 0), "mkdir_0000");
	EXPECT_ERR(access("d0000/f", F_OK), ENOENT, "root_searches_0000_dir");
	EXPECT_OK(open_close("d0000/f", O_CREAT | O_WRONLY), "root_creat_in_0000_dir");
	CHECK(chmod("f0000", 0640) == 0 && stat("f0000", &st) == 0 && (st.st_mode & 07777) == 0640,
	      "root_chmod_own", "%s mode %o", strerror(errno), st.st_mode & 07777);
	if (chmod("f0000", 0) != 0)
		DIE("chmod back");
	EXPECT_OK(mkdir("d0555", 0755), "mkdir_0555");
	EXPECT_OK(t_write_file("d0555/f0644", "x", 0644), "setup_0644");
	EXPECT_OK(chmod("d0555", 0555), "chmod_0555");
	/* a file root made and gave away */
	CHECK(chown("gift", OTHER, OTHER) == 0 && stat("gift", &st) == 0 && st.st_uid == OTHER, "root_chown_gift",
	      "%s uid %u", strerror(errno), st.st_uid);
	EXPECT_OK(open_close("gift", O_RDWR), "root_reads_others_gift");
	EXPECT_OK(chmod("gift", 0600), "root_chmods_others_gift");

	/* an O_TMPFILE file is its creator's too, named or not */
	int fd = open(".", O_TMPFILE | O_RDWR, 0000);
	char pp[64];
	snprintf(pp, sizeof pp, "/proc/self/fd/%d", fd);
	CHECK(fd >= 0 && linkat(AT_FDCWD, pp, AT_FDCWD, "tmpf", AT_SYMLINK_FOLLOW) == 0, "root_tmpfile_linked",
	      "fd %d %s", fd, strerror(errno));
	if (fd >= 0)
		close(fd);
	EXPECT_OK(open_close("tmpf", O_RDWR), "root_reopens_0000_tmpfile");
	EXPECT_OK(mkdir("pub", 0777) == 0 && chmod("pub", 0777) == 0 ? 0 : -1, "setup_pub");
	if (seteuid(NOBODY) != 0)
		DIE("seteuid");
	fd = open("pub", O_TMPFILE | O_RDWR, 0600);
	snprintf(pp, sizeof pp, "/proc/self/fd/%d", fd);
	CHECK(fd >= 0 && linkat(AT_FDCWD, pp, AT_FDCWD, "pub/t", AT_SYMLINK_FOLLOW) == 0 && stat("pub/t", &st) == 0 &&
	      st.st_uid == NOBODY && open_close("pub/t", O_RDWR) == 0,
	      "nobody_tmpfile_is_its_own", "fd %d %s uid %u", fd, strerror(errno), st.st_uid);
	if (fd >= 0)
		close(fd);
	if (seteuid(0) != 0)
		DIE("seteuid 0");

	t_in_child(as_nobody);
	t_in_child(as_other);
	t_in_child(real_nobody_effective_root);
	t_in_child(no_dac_override);
	t_in_child(no_fowner);
	t_in_child(no_chown);
	t_in_child(keep_caps);

	/* chmod05: the owner of a directory that is not in its group changes
	 * its mode, but not its set-gid bit */
	gid_t g = NOBODY;
	CHECK(mkdir("sg", 0777) == 0 && chown("sg", NOBODY, 12345) == 0, "setup_sg", "%s", strerror(errno));
	if (setgroups(1, &g) != 0 || setegid(NOBODY) != 0 || seteuid(NOBODY) != 0)
		DIE("seteuid nobody");
	CHECK(chmod("sg", 03777) == 0 && stat("sg", &st) == 0 && (st.st_mode & 07777) == 01777,
	      "owner_chmod_drops_sgid", "%s mode %o", strerror(errno), st.st_mode & 07777);
	/* statfs03: a path nobody cannot search */
	EXPECT_ERR(statfs("d0444/sub", &sf), EACCES, "seteuid_nobody_statfs");
	if (seteuid(0) != 0 || setegid(0) != 0 || setgroups(0, NULL) != 0)
		DIE("back to root");
	chmod("d0555", 0755);
	chmod("d0444", 0755);
	chmod("d0000", 0755);
}

/* Another user (the rootless tier): Linux refuses its own 0000 file and its
 * 0444 directory, and lets it chmod them back. */
static void user_cases(void)
{
	CHECK(t_write_file("f0000", "x", 0000) == 0, "user_setup", "%s", strerror(errno));
	EXPECT_ERR(open_close("f0000", O_RDONLY), EACCES, "user_reads_0000");
	EXPECT_ERR(access("f0000", R_OK), EACCES, "user_access_0000");
	EXPECT_ERR(faccessat2_("f0000", W_OK, AT_EACCESS), EACCES, "user_eaccess_0000");
	EXPECT_OK(chmod("f0000", 0600), "user_chmod_own");
	EXPECT_OK(open_close("f0000", O_RDWR), "user_reads_after_chmod");
	EXPECT_OK(mkdir("d0444", 0444), "user_mkdir_0444");
	EXPECT_ERR(mkdir("d0444/sub", 0755), EACCES, "user_mkdir_in_0444");
	EXPECT_OK(mkdir("d0000", 0), "user_mkdir_0000");
	EXPECT_ERR(access("d0000/f", F_OK), EACCES, "user_search_0000");
	struct statfs sf;
	EXPECT_ERR(statfs("d0000/f", &sf), EACCES, "user_statfs_0000");
	EXPECT_ERR(chown("f0000", 0, (gid_t)-1), EPERM, "user_chown_to_root");
	chmod("d0444", 0755);
	chmod("d0000", 0755);
}

int main(int argc, char **argv)
{
	t_setup(argc, argv, "owner_root");
	if (geteuid() == 0)
		root_cases();
	else
		user_cases();
	return t_done();
}
