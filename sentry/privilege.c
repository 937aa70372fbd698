/* sentry/privilege.c - the sentry gives up host privilege before the guest
 * exists.
 *
 *   1. priv_drop(): run as root, the sentry takes a host uid of its own — a
 *      block of MOAT_UID_BLOCK ids per sandbox starting at MOAT_UID_BASE,
 *      claimed by priv_claim() with a lock that the gofer holds for the
 *      sandbox's life, so two live sandboxes never share a host uid —
 *      and becomes that uid (no supplementary groups, no capabilities). Run
 *      by an ordinary user, it keeps that user's uid. Either way it then
 *      enters a user namespace of its own (its uid mapped to itself) and a
 *      private copy of the mount namespace. The gofer, forked before this, is
 *      the only sandbox process that keeps the caller's privilege; moat-init
 *      and the guest are created after, inside the sentry's user namespace,
 *      so guest root is the sentry's unprivileged uid on the host.
 *   2. priv_empty_root(): once the guest's init has mounted its procfs (a
 *      fresh procfs mount needs a visible one in the namespace it is cloned
 *      from), the sentry pivots into an empty read-only tmpfs: a path that the
 *      sentry ever opens by name (its seccomp filter allows openat on one
 *      dirfd, but an absolute path ignores the dirfd) finds nothing.
 */
#include "sentry/sentry.h"
#include "common/log.h"
#include "common/util.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int r = write_all(fd, s, strlen(s));
	close(fd);
	return r;
}

/* Claim a free slot: flock on MOAT_UID_LOCK_DIR/<slot>, a file opened
 * read-only. The claim is held by the gofer (gofer_keep_fd), which lives as
 * long as the sandbox and which the sentry cannot drive to unlock it: a
 * compromised sentry cannot free its uid for another sandbox while it still
 * runs, and holds no writable host file. */
int priv_claim(struct priv *p, char *err, size_t errlen)
{
	p->lockfd = -1;
	p->slot = 0;
	if (geteuid() != 0)
		return 0;
	if (mkdir(MOAT_UID_LOCK_DIR, 0700) < 0 && errno != EEXIST) {
		snprintf(err, errlen, "%s: %s", MOAT_UID_LOCK_DIR, strerror(errno));
		return -errno;
	}
	int dfd = open(MOAT_UID_LOCK_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	if (dfd < 0 || fstat(dfd, &st) < 0 || st.st_uid != 0 || (st.st_mode & 022)) {
		snprintf(err, errlen, "%s: %s", MOAT_UID_LOCK_DIR,
			 dfd < 0 ? strerror(errno) : "not a directory owned by root and writable only by it");
		if (dfd >= 0)
			close(dfd);
		return -EPERM;
	}
	for (unsigned s = 0; s < MOAT_UID_SLOTS; s++) {
		char name[16];
		snprintf(name, sizeof name, "%u", s);
		int fd = openat(dfd, name, O_RDONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0400);
		if (fd < 0) {
			snprintf(err, errlen, "%s/%s: %s", MOAT_UID_LOCK_DIR, name, strerror(errno));
			close(dfd);
			return -errno;
		}
		if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
			close(dfd);
			p->lockfd = fd;
			p->slot = s;
			return 0;
		}
		close(fd);
	}
	close(dfd);
	snprintf(err, errlen, "no free sandbox uid: %u sandboxes are running", MOAT_UID_SLOTS);
	return -EAGAIN;
}

int priv_drop(struct priv *p, char *err, size_t errlen)
{
	char map[64];
	int r;

	p->host_uid = getuid();
	p->host_gid = getgid();
	if (geteuid() == 0) {
		if (p->lockfd < 0) {
			snprintf(err, errlen, "no sandbox uid claimed");
			return -EINVAL;
		}
		close(p->lockfd); /* the gofer holds the claim from here on */
		p->lockfd = -1;
		p->host_uid = p->host_gid = MOAT_UID_BASE + p->slot * MOAT_UID_BLOCK;
		if (setgroups(0, NULL) < 0 || setresgid(p->host_gid, p->host_gid, p->host_gid) < 0 ||
		    setresuid(p->host_uid, p->host_uid, p->host_uid) < 0) {
			r = -errno;
			snprintf(err, errlen, "cannot become uid %u: %s", (unsigned)p->host_uid, strerror(errno));
			return r;
		}
		if (geteuid() != p->host_uid || getegid() != p->host_gid) {
			snprintf(err, errlen, "cannot become uid %u", (unsigned)p->host_uid);
			return -EPERM;
		}
	}
	/* A changed uid makes us non-dumpable, and /proc/<pid>/uid_map of our
	 * children would then belong to root: we must write them. */
	prctl(PR_SET_DUMPABLE, 1);
	if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0) {
		r = -errno;
		snprintf(err, errlen, "cannot create the sentry's namespaces: %s%s", strerror(errno),
			 errno == EPERM || errno == ENOSPC ? " (are unprivileged user namespaces enabled?)" : "");
		return r;
	}
	r = write_str("/proc/self/setgroups", "deny");
	if (r && r != -ENOENT)
		goto maps;
	snprintf(map, sizeof map, "%u %u 1\n", (unsigned)p->host_uid, (unsigned)p->host_uid);
	if ((r = write_str("/proc/self/uid_map", map)) < 0)
		goto maps;
	snprintf(map, sizeof map, "%u %u 1\n", (unsigned)p->host_gid, (unsigned)p->host_gid);
	if ((r = write_str("/proc/self/gid_map", map)) < 0)
		goto maps;
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
		r = -errno;
		snprintf(err, errlen, "sentry: make / private: %s", strerror(errno));
		return r;
	}
	return 0;
maps:
	snprintf(err, errlen, "cannot write the sentry's id maps: %s", strerror(-r));
	return r;
}

int priv_empty_root(char *err, size_t errlen)
{
	static const char *const dirs[] = { "/tmp", "/proc", "/dev", "/" };
	const char *d = NULL;
	for (size_t i = 0; i < ARRAY_SIZE(dirs) && !d; i++)
		if (mount("moat-sentry", dirs[i], "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
			  "size=4k,mode=0555,nr_inodes=2") == 0)
			d = dirs[i];
	if (!d) {
		snprintf(err, errlen, "sentry: mount an empty root: %s", strerror(errno));
		return -errno;
	}
	if (chdir(d) < 0 || syscall(SYS_pivot_root, ".", ".") < 0) {
		snprintf(err, errlen, "sentry: pivot_root: %s", strerror(errno));
		return -errno;
	}
	if (umount2(".", MNT_DETACH) < 0 || chdir("/") < 0) {
		snprintf(err, errlen, "sentry: detach the old root: %s", strerror(errno));
		return -errno;
	}
	if (mount(NULL, "/", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
		  NULL) < 0) {
		snprintf(err, errlen, "sentry: read-only root: %s", strerror(errno));
		return -errno;
	}
	return 0;
}
