/* sentry/privilege.c - the sentry gives up host privilege before the guest
 * exists.
 *
 *   1. priv_drop(): run as root, the sentry takes a host uid of its own — a
 *      block of MOAT_UID_BLOCK ids per sandbox starting at MOAT_UID_BASE,
 *      claimed with an OFD lock on one byte of MOAT_UID_LOCK that the sentry
 *      holds until it exits, so two live sandboxes never share a host uid —
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

/* Claim a free slot: an OFD write lock on byte `slot` of the lock file. */
static int claim_slot(int *lockfd, unsigned *slot_out, char *err, size_t errlen)
{
	if (mkdir(MOAT_UID_LOCK_DIR, 0700) < 0 && errno != EEXIST) {
		snprintf(err, errlen, "%s: %s", MOAT_UID_LOCK_DIR, strerror(errno));
		return -errno;
	}
	int fd = open(MOAT_UID_LOCK, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		snprintf(err, errlen, "%s: %s", MOAT_UID_LOCK, strerror(errno));
		return -errno;
	}
	for (unsigned s = 0; s < MOAT_UID_SLOTS; s++) {
		struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = s, .l_len = 1 };
		if (fcntl(fd, F_OFD_SETLK, &fl) == 0) {
			*lockfd = fd;
			*slot_out = s;
			return 0;
		}
		if (errno != EAGAIN && errno != EACCES) {
			snprintf(err, errlen, "%s: lock: %s", MOAT_UID_LOCK, strerror(errno));
			close(fd);
			return -errno;
		}
	}
	close(fd);
	snprintf(err, errlen, "no free sandbox uid: %u sandboxes are running", MOAT_UID_SLOTS);
	return -EAGAIN;
}

int priv_drop(struct priv *p, char *err, size_t errlen)
{
	char map[64];
	int r;

	p->lockfd = -1;
	p->host_uid = getuid();
	p->host_gid = getgid();
	if (geteuid() == 0) {
		unsigned slot = 0;
		if ((r = claim_slot(&p->lockfd, &slot, err, errlen)) < 0)
			return r;
		p->host_uid = p->host_gid = MOAT_UID_BASE + slot * MOAT_UID_BLOCK;
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
