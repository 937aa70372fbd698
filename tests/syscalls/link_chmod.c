/* link_chmod: mode and owner are the inode's, whatever name changed them.
 * Root makes a file with two hard links, a process that dropped root reads
 * it (and so looks both names up), root makes it private through the OTHER
 * name (chmod, fchmod of an fd opened by it, chown + chmod): the dropped
 * process may no longer open it by either name. Red-team round 9: the
 * sentry re-cached only the name the change went through; open checked the
 * other name's cached mode (an rw bind, as the harness's scratch is, and a
 * cow bind) and read root's now-0600 file. Red-team round 34: the same on
 * the sandbox's private file systems (--tmpfs, the root overlay's /tmp),
 * whose chmod and chown re-cached only the changed name; and a chown alone
 * (mode 0004: the dropped process, other before, is the owner after, with
 * no bits). Needs root (skipped otherwise); uid 61238. */
#include "t.h"

#define U1 61238

/* in a child that drops to U1: 0 when path opens for reading, else errno;
 * look: stat it first (a stat re-stats a name with several links, and
 * re-caches it: the open after a change must be the first look) */
static int open_as_user(const char *path, int look)
{
	int p[2];
	if (pipe(p) < 0)
		return -1;
	pid_t c = fork();
	if (c == 0) {
		close(p[0]);
		int e = 0;
		if (setresgid(U1, U1, U1) || setresuid(U1, U1, U1)) {
			e = 255;
		} else {
			struct stat st;
			if (look)
				stat(path, &st); /* a lookup, as a real reader makes */
			int fd = open(path, O_RDONLY);
			char b[8];
			if (fd < 0)
				e = errno;
			else if (read(fd, b, sizeof b) < 0)
				e = errno;
			if (fd >= 0)
				close(fd);
		}
		write(p[1], &e, sizeof e);
		_exit(0);
	}
	close(p[1]);
	int e = -1;
	if (read(p[0], &e, sizeof e) != sizeof e)
		e = -1;
	close(p[0]);
	waitpid(c, NULL, 0);
	return e;
}

int main(int argc, char **argv)
{
	t_setup(argc, argv, "link_chmod");
	if (geteuid() != 0)
		return T_SKIP;
	char d1[PATH_MAX + 16], d2[PATH_MAX + 16], a[PATH_MAX + 32], b[PATH_MAX + 32], n[64];
	chmod(t_scratch, 0755);
	static const char *const how[] = { "chmod_other_name", "fchmod_other_name", "chown_other_name",
					     "chown_only_other_name" };
	for (int k = 0; k < 4; k++) {
		snprintf(d1, sizeof d1, "%s/a%d", t_scratch, k);
		snprintf(d2, sizeof d2, "%s/b%d", t_scratch, k);
		snprintf(a, sizeof a, "%s/f", d1);
		snprintf(b, sizeof b, "%s/l", d2);
		mkdir(d1, 0755);
		mkdir(d2, 0755);
		chmod(d1, 0755);
		chmod(d2, 0755);
		int fd = open(a, O_CREAT | O_WRONLY | O_TRUNC, 0644);
		write(fd, "SECRET\n", 7);
		close(fd);
		chmod(a, k == 3 ? 0004 : 0644);
		if (link(a, b) < 0) {
			t_fail(how[k], "link: %s", strerror(errno));
			continue;
		}
		int before = open_as_user(a, 1);
		open_as_user(b, 1);
		if (k == 0) {
			chmod(b, 0600);
		} else if (k == 1) {
			fd = open(b, O_RDONLY);
			fchmod(fd, 0600);
			close(fd);
		} else if (k == 2) {
			chown(b, 0, 0);
			chmod(b, 0640);
		} else if (chown(b, U1, U1) < 0) {
			/* a rootless sandbox's root owns no other host id: the
			 * case cannot be made there (isolation_fs expects this) */
			printf("skip %s (chown: %s)\n", how[k], strerror(errno));
			continue;
		}
		int after_a = open_as_user(a, 0), after_b = open_as_user(b, 0);
		snprintf(n, sizeof n, "%s", how[k]);
		CHECK(before == 0 && after_a == EACCES && after_b == EACCES, n,
		      "before %d, after: by the other name %s, by the changed one %s", before,
		      strerror(after_a), strerror(after_b));
	}
	return t_done();
}
