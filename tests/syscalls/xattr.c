/* setxattr, getxattr, listxattr, removexattr and their l* and f* variants:
 * user.* attributes and the error cases. Skips where the scratch file system
 * keeps no user.* attributes (tmpfs before Linux 6.6). Run natively then
 * under moat (tests/syscalls/run.sh); tests/integration/fs_xattr_mounts.sh
 * runs it again in a cow bind and the overlay. */
#include "t.h"

#include <sys/xattr.h>

/* listxattr output contains name */
static int has_name(const char *list, ssize_t n, const char *name)
{
	for (ssize_t i = 0; i < n; i += (ssize_t)strlen(list + i) + 1)
		if (!strcmp(list + i, name))
			return 1;
	return 0;
}

int main(int argc, char **argv)
{
	t_setup(argc, argv, "xattr");
	char buf[8192], list[8192], big[3000], name[300];
	ssize_t n;
	int fd;

	t_write_file("f", "data", 0644);
	if (setxattr("f", "user.probe", "1", 1, 0) < 0) {
		if (errno == ENOTSUP) {
			printf("no user xattrs on the scratch file system\n");
			t_rmrf(t_scratch);
			return T_SKIP;
		}
		DIE("setxattr probe: %s", strerror(errno));
	}
	removexattr("f", "user.probe");

	/* get, set, create/replace */
	EXPECT_ERR(getxattr("f", "user.test", buf, sizeof buf), ENODATA, "get_missing_enodata");
	n = listxattr("f", list, sizeof list);
	CHECK(n == 0 || (n > 0 && !has_name(list, n, "user.test")), "list_initially_no_user_test",
	      "n=%zd %s", n, strerror(errno));
	EXPECT_OK(setxattr("f", "user.test", "", 0, 0), "set_empty_value");
	n = getxattr("f", "user.test", buf, sizeof buf);
	CHECK(n == 0, "get_empty_value", "n=%zd %s", n, strerror(errno));
	EXPECT_OK(setxattr("f", "user.test", "hello", 5, XATTR_REPLACE), "set_replace_existing");
	n = getxattr("f", "user.test", buf, sizeof buf);
	CHECK(n == 5 && !memcmp(buf, "hello", 5), "get_value", "n=%zd %s", n, strerror(errno));
	n = getxattr("f", "user.test", NULL, 0);
	CHECK(n == 5, "get_size_query", "n=%zd %s", n, strerror(errno));
	EXPECT_ERR(getxattr("f", "user.test", buf, 2), ERANGE, "get_small_buffer_erange");
	EXPECT_ERR(setxattr("f", "user.test", "bye", 3, XATTR_CREATE), EEXIST, "create_existing_eexist");
	EXPECT_ERR(setxattr("f", "user.test2", "bye", 3, XATTR_REPLACE), ENODATA, "replace_missing_enodata");
	EXPECT_ERR(setxattr("f", "user.test2", "bye", 3, 4), EINVAL, "set_bad_flags_einval");
	EXPECT_OK(setxattr("f", "user.test2", "foo", 3, XATTR_CREATE), "create_new");

	/* list */
	n = listxattr("f", list, sizeof list);
	CHECK(n > 0 && has_name(list, n, "user.test") && has_name(list, n, "user.test2"),
	      "list_names", "n=%zd %s", n, strerror(errno));
	ssize_t need = listxattr("f", NULL, 0);
	CHECK(need == n, "list_size_query", "need=%zd n=%zd", need, n);
	EXPECT_ERR(listxattr("f", list, 3), ERANGE, "list_small_buffer_erange");

	/* remove */
	EXPECT_OK(removexattr("f", "user.test"), "remove");
	EXPECT_ERR(getxattr("f", "user.test", buf, sizeof buf), ENODATA, "get_removed_enodata");
	EXPECT_ERR(removexattr("f", "user.test"), ENODATA, "remove_missing_enodata");
	n = listxattr("f", list, sizeof list);
	CHECK(n > 0 && !has_name(list, n, "user.test") && has_name(list, n, "user.test2"),
	      "list_after_remove", "n=%zd", n);

	/* many names and a larger value */
	int many_ok = 1;
	for (int i = 0; i < 100 && many_ok; i++) {
		snprintf(name, sizeof name, "user.many%d", i);
		many_ok = setxattr("f", name, "x", 1, 0) == 0;
	}
	n = listxattr("f", list, sizeof list);
	CHECK(many_ok && n > 0 && has_name(list, n, "user.many0") && has_name(list, n, "user.many99"),
	      "many_names", "%s", strerror(errno));
	memset(big, 'a', sizeof big);
	/* (ext4 keeps one block of attributes per file: a file of its own) */
	t_write_file("b", "", 0644);
	EXPECT_OK(setxattr("b", "user.big", big, sizeof big, 0), "set_3000_bytes");
	n = getxattr("b", "user.big", buf, sizeof buf);
	CHECK(n == (ssize_t)sizeof big && !memcmp(buf, big, sizeof big), "get_3000_bytes", "n=%zd", n);

	/* names and sizes */
	EXPECT_ERR(setxattr("f", "", "x", 1, 0), ERANGE, "empty_name_erange");
	memset(name, 'n', sizeof name);
	memcpy(name, "user.", 5);
	name[260] = '\0';
	EXPECT_ERR(setxattr("f", name, "x", 1, 0), ERANGE, "long_name_erange");
	EXPECT_ERR(getxattr("f", name, buf, sizeof buf), ERANGE, "get_long_name_erange");
	EXPECT_ERR(setxattr("f", "bogus.name", "x", 1, 0), EOPNOTSUPP, "unknown_namespace_eopnotsupp");
	EXPECT_ERR(getxattr("f", "bogus.name", buf, sizeof buf), EOPNOTSUPP, "get_unknown_namespace");
	char *huge = calloc(1, 65537);
	EXPECT_ERR(setxattr("f", "user.huge", huge, 65537, 0), E2BIG, "value_over_64k_e2big");
	free(huge);
	EXPECT_ERR(getxattr("f", "security.moat_none", buf, sizeof buf), ENODATA, "get_security_enodata");
	if (geteuid() != 0) {
		EXPECT_ERR(setxattr("f", "trusted.x", "1", 1, 0), EPERM, "trusted_set_nonroot_eperm");
		EXPECT_ERR(getxattr("f", "trusted.x", buf, sizeof buf), ENODATA, "trusted_get_nonroot_enodata");
	} else {
		t_ok("trusted_set_nonroot_eperm");
		t_ok("trusted_get_nonroot_enodata");
	}
	/* root: trusted.* and security.* (virtual under moat), on a symlink too */
	if (geteuid() == 0) {
		static char lst[65536];
		symlink("f", "xsl");
		EXPECT_OK(lsetxattr("xsl", "security.moat_sl", "v", 1, XATTR_CREATE), "security_on_symlink");
		CHECK(lgetxattr("xsl", "security.moat_sl", buf, sizeof buf) == 1 && buf[0] == 'v',
		      "security_on_symlink_get", "%s", strerror(errno));
		EXPECT_ERR(lsetxattr("xsl", "security.moat_sl", "w", 1, XATTR_CREATE), EEXIST,
			   "security_create_eexist");
		EXPECT_ERR(getxattr("xsl", "security.moat_sl", buf, sizeof buf), ENODATA,
			   "security_not_on_target");
		EXPECT_OK(setxattr("f", "trusted.moat_t", "tv", 2, 0), "trusted_set_root");
		ssize_t ln = listxattr("f", lst, sizeof lst);
		int seen = 0;
		for (ssize_t i = 0; i < ln; i += (ssize_t)strlen(lst + i) + 1)
			seen |= !strcmp(lst + i, "trusted.moat_t");
		CHECK(seen, "trusted_listed_root", "%zd %s", ln, strerror(errno));
		CHECK(listxattr("f", NULL, 0) == ln, "list_size_probe", "%zd", ln);
		EXPECT_ERR(listxattr("f", lst, 3), ERANGE, "list_small_erange");
		EXPECT_OK(removexattr("f", "trusted.moat_t"), "trusted_remove");
		EXPECT_ERR(removexattr("f", "trusted.moat_t"), ENODATA, "trusted_remove_again_enodata");
		EXPECT_ERR(setxattr("f", "trusted.moat_t", "x", 1, XATTR_REPLACE), ENODATA,
			   "trusted_replace_missing_enodata");
		unlink("xsl");
	}

	/* paths */
	EXPECT_ERR(getxattr("missing", "user.test", buf, sizeof buf), ENOENT, "get_enoent");
	EXPECT_ERR(setxattr("missing", "user.test", "x", 1, 0), ENOENT, "set_enoent");
	EXPECT_ERR(getxattr("f/x", "user.test", buf, sizeof buf), ENOTDIR, "get_enotdir");

	/* symlinks: followed by the plain calls; l* calls see the link itself,
	 * which carries no user.* attributes */
	symlink("f", "lnk");
	n = getxattr("lnk", "user.test2", buf, sizeof buf);
	CHECK(n == 3 && !memcmp(buf, "foo", 3), "get_follows_symlink", "n=%zd %s", n, strerror(errno));
	EXPECT_ERR(lgetxattr("lnk", "user.test2", buf, sizeof buf), ENODATA, "lget_symlink_enodata");
	EXPECT_ERR(lsetxattr("lnk", "user.x", "1", 1, 0), EPERM, "lset_symlink_eperm");
	n = llistxattr("lnk", list, sizeof list);
	CHECK(n >= 0 && !has_name(list, n, "user.test2"), "llist_symlink", "n=%zd %s", n, strerror(errno));
	EXPECT_OK(lsetxattr("f", "user.l", "1", 1, 0), "lset_file");
	EXPECT_OK(lremovexattr("f", "user.l"), "lremove_file");

	/* directories */
	mkdir("d", 0755);
	EXPECT_OK(setxattr("d", "user.dir", "dv", 2, 0), "set_dir");
	n = getxattr("d", "user.dir", buf, sizeof buf);
	CHECK(n == 2 && !memcmp(buf, "dv", 2), "get_dir", "n=%zd %s", n, strerror(errno));

	/* by fd */
	fd = open("f", O_RDONLY);
	EXPECT_OK(fsetxattr(fd, "user.fd", "v1", 2, 0), "fset");
	n = fgetxattr(fd, "user.fd", buf, sizeof buf);
	CHECK(n == 2 && !memcmp(buf, "v1", 2), "fget", "n=%zd %s", n, strerror(errno));
	n = getxattr("f", "user.fd", buf, sizeof buf);
	CHECK(n == 2 && !memcmp(buf, "v1", 2), "fset_seen_by_path", "n=%zd %s", n, strerror(errno));
	n = flistxattr(fd, list, sizeof list);
	CHECK(n > 0 && has_name(list, n, "user.fd"), "flist", "n=%zd %s", n, strerror(errno));
	EXPECT_ERR(fsetxattr(fd, "user.fd", "v2", 2, XATTR_CREATE), EEXIST, "fset_create_eexist");
	EXPECT_OK(fremovexattr(fd, "user.fd"), "fremove");
	EXPECT_ERR(fgetxattr(fd, "user.fd", buf, sizeof buf), ENODATA, "fget_removed_enodata");
	EXPECT_ERR(fremovexattr(fd, "user.fd"), ENODATA, "fremove_missing_enodata");
	close(fd);
	EXPECT_ERR(fsetxattr(fd, "user.fd", "v", 1, 0), EBADF, "fset_closed_ebadf");
	EXPECT_ERR(fgetxattr(fd, "user.fd", buf, sizeof buf), EBADF, "fget_closed_ebadf");
	EXPECT_ERR(flistxattr(fd, list, sizeof list), EBADF, "flist_closed_ebadf");
	fd = open("g0", O_CREAT | O_WRONLY, 0600);
	EXPECT_OK(fsetxattr(fd, "user.w", "wv", 2, 0), "fset_on_write_only_fd");
	n = fgetxattr(fd, "user.w", buf, sizeof buf);
	CHECK(n == 2 && !memcmp(buf, "wv", 2), "fget_on_write_only_fd", "n=%zd %s", n, strerror(errno));
	EXPECT_ERR(fgetxattr(fd, "user.w", buf, 1), ERANGE, "fget_small_buffer_erange");
	close(fd);
	fd = open("g0", O_PATH);
	EXPECT_ERR(fgetxattr(fd, "user.w", buf, sizeof buf), EBADF, "fget_opath_ebadf");
	close(fd);
	fd = open("d", O_RDONLY | O_DIRECTORY);
	EXPECT_OK(fsetxattr(fd, "user.dfd", "w", 1, 0), "fset_dir");
	n = getxattr("d", "user.dfd", buf, sizeof buf);
	CHECK(n == 1 && buf[0] == 'w', "fset_dir_seen_by_path", "n=%zd %s", n, strerror(errno));
	close(fd);
	int p[2];
	if (pipe(p) == 0) {
		EXPECT_ERR(fsetxattr(p[0], "user.x", "1", 1, 0), EPERM, "fset_pipe_eperm");
		EXPECT_ERR(fgetxattr(p[0], "user.x", buf, sizeof buf), ENODATA, "fget_pipe_enodata");
		close(p[0]);
		close(p[1]);
	}

	/* an attribute stays with the file across a rename */
	rename("f", "g");
	n = getxattr("g", "user.test2", buf, sizeof buf);
	CHECK(n == 3 && !memcmp(buf, "foo", 3), "kept_across_rename", "n=%zd %s", n, strerror(errno));

	/* permissions (as a user: root overrides them) */
	if (geteuid() != 0) {
		t_write_file("ro", "x", 0444);
		EXPECT_ERR(setxattr("ro", "user.x", "1", 1, 0), EACCES, "set_readonly_file_eacces");
		t_write_file("wo", "x", 0200);
		EXPECT_ERR(getxattr("wo", "user.x", buf, sizeof buf), EACCES, "get_unreadable_eacces");
	} else {
		t_ok("set_readonly_file_eacces");
		t_ok("get_unreadable_eacces");
	}
	return t_done();
}
