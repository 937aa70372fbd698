/* sentry/privilege.c - the sentry gives up host privilege before the guest
 * exists.
 *
 *   1. priv_drop(): run as root, the sentry takes a host uid of its own — a
 *      block of MOAT_UID_BLOCK ids per sandbox starting at MOAT_UID_BASE,
 *      claimed by priv_claim() with a lock that the gofer holds for the
 *      sandbox's life, so two live sandboxes never share a host uid —
 *      and becomes that uid (no supplementary groups, no capabilities). Run
 *      by an ordinary user, it keeps that user's uid. Either way it then
 *      enters a user namespace of its own (rootless its uid mapped to
 *      itself; root-run every host id, see map_helper) and a private copy
 *      of the mount namespace. The gofer, forked before this, is
 *      the only sandbox process that keeps the caller's privilege; moat-init
 *      and the guest are created after, inside the sentry's user namespace,
 *      so guest root is the sentry's unprivileged uid on the host.
 *   2. priv_sentry_root(): once the guest's init has mounted its procfs (a
 *      fresh procfs mount needs a visible one in the namespace it is cloned
 *      from), the sentry pivots into an empty read-only tmpfs; the
 *      host-directory exports are read-only clones, their hidden names
 *      masked, that it holds by their root fds only (in a detached box:
 *      Linux 6.15 mounts on a detached tree; else bound at "/<index>" in
 *      that root):
 *      whatever path the sentry opens (absolute, "..", a symlink), it
 *      resolves in that root, so it reaches the exports and nothing else
 *      of the host — and, detached, no path of it names a socket of an
 *      export (a sendto's sun_path: Known gaps before sentryfs37). This is the layer that confines the
 *      sentry's direct file access (fs/directfs.c); the seccomp rules on the
 *      dirfd and the openat2 RESOLVE_ flags are defence in depth. A cow
 *      export has no bind here (its files are the gofer's overlay): its root
 *      fd is the gofer's read-only recursive clone of the overlay, a
 *      detached mount (priv_add_export_root, after the gofer is ready).
 */
#include "sentry/sentry.h"
#include "common/log.h"
#include "common/util.h"
#include "gofer/gofer.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <grp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <unistd.h>

/* Claim a free slot: flock on MOAT_UID_LOCK_DIR/<slot>, a file opened
 * read-only. The claim is held by the gofer (gofer_keep_fd), which lives as
 * long as the sandbox (a gofer gone while the program runs ends the sandbox:
 * sentry/tracer.c reaped), and the sentry holds no writable host file. A
 * compromised sentry that frees it early (it shuts the gofer's control
 * socket) keeps the slot anyway: slot_sentry_alive (red team 59). */
/* A slot's flock says no gofer holds it; a compromised sentry can make its
 * gofer leave early (it shuts the gofer's control socket) and run on as the
 * slot's uid (red team 59). So each claimer notes its own pid, the sentry's,
 * in <slot>.pid (root's, 0600), and the next claimer of a free slot skips it
 * while that pid is a process whose real, effective, saved or fs uid is the
 * slot's (a reused pid is another process's: then the slot is free). The
 * sentry cannot change its pid or uid, and everything else of the sandbox
 * that runs as that uid ends with it (PDEATHSIG, the init's pid namespace). */
static int slot_sentry_alive(int dfd, unsigned s)
{
	char name[24], buf[32], path[48], st[4096];
	snprintf(name, sizeof name, "%u.pid", s);
	if (read_text_at(dfd, name, buf, sizeof buf) < 0)
		return 0;
	long pid = strtol(buf, NULL, 10);
	if (pid <= 0 || pid == getpid())
		return 0;
	snprintf(path, sizeof path, "/proc/%ld/status", pid);
	if (read_text_at(AT_FDCWD, path, st, sizeof st) < 0)
		return 0; /* gone */
	const char *u = strstr(st, "\nUid:");
	unsigned long want = MOAT_UID_BASE + s * MOAT_UID_BLOCK;
	if (!u)
		return 1; /* unreadable: not taken as free */
	u += 5;
	for (int i = 0; i < 4; i++) {
		char *end;
		unsigned long id = strtoul(u, &end, 10);
		if (end == u)
			break;
		if (id == want)
			return 1;
		u = end;
	}
	return 0;
}

/* The pid is written at a fixed width (right-aligned: strtol skips the
 * spaces) over the file's old bytes, never truncated first: the lock
 * directory may be on ext4 (/run is on this VM), where an O_TRUNC of the
 * file freed its block and made the close write the new one back
 * (auto_da_alloc): 0.2-0.3 ms of every root-run start, 1-2 ms at a load of
 * 7, on the start-up's critical path (issue 6, pexec5). A longer file (not
 * one this code writes) is cut to the width after the write. */
static int slot_sentry_note(int dfd, unsigned s)
{
	char name[24], buf[24];
	snprintf(name, sizeof name, "%u.pid", s);
	int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	int n = snprintf(buf, sizeof buf, "%11ld\n", (long)getpid());
	ssize_t w = pwrite(fd, buf, (size_t)n, 0);
	int e = errno;
	struct stat st;
	if (w == n && (fstat(fd, &st) < 0 || (st.st_size > n && ftruncate(fd, n) < 0))) {
		e = errno;
		w = -1;
	}
	close(fd);
	if (w != n) {
		errno = w < 0 ? e : EIO;
		return -1;
	}
	return 0;
}

int priv_claim(struct priv *p, char *err, size_t errlen)
{
	p->lockfd = p->locktree = -1;
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
	/* The slot held (by the gofer, host root in a namespace mapping every
	 * host id, with CAP_CHOWN and CAP_FOWNER there) is opened through a
	 * read-only clone of the directory's mount: fchmod, fchown, futimens,
	 * fsetxattr and their AT_EMPTY_PATH forms on it are EROFS. Landlock
	 * has no hook for them; before red team 90 a compromised gofer could
	 * change the mode, owner, times and user xattrs of the host's
	 * /run/moat-uids/<slot> (MOAT_TEST_GOFER_CONFINEMENT claim_*). A
	 * missing slot file is made through the directory itself. */
	int ro = (int)syscall(SYS_open_tree, dfd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
	struct mount_attr ra = { .attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
					     MOUNT_ATTR_NOEXEC };
	if (ro < 0 || syscall(SYS_mount_setattr, ro, "", AT_EMPTY_PATH, &ra, sizeof ra) < 0) {
		int e = errno;
		snprintf(err, errlen, "%s: a read-only clone: %s", MOAT_UID_LOCK_DIR, strerror(e));
		if (ro >= 0)
			close(ro);
		close(dfd);
		return -e;
	}
	for (unsigned s = 0; s < MOAT_UID_SLOTS; s++) {
		char name[16];
		snprintf(name, sizeof name, "%u", s);
		int fd = openat(ro, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0 && errno == ENOENT) {
			int c = openat(dfd, name, O_RDONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0400);
			if (c >= 0) {
				close(c);
				fd = openat(ro, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
			}
		}
		if (fd < 0) {
			int e = errno;
			snprintf(err, errlen, "%s/%s: %s", MOAT_UID_LOCK_DIR, name, strerror(e));
			close(ro);
			close(dfd);
			return -e;
		}
		if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
			if (slot_sentry_alive(dfd, s)) {
				close(fd); /* freed early: skip it while its sentry runs */
				continue;
			}
			if (slot_sentry_note(dfd, s) < 0) {
				snprintf(err, errlen, "%s/%u.pid: %s", MOAT_UID_LOCK_DIR, s, strerror(errno));
				close(fd);
				close(ro);
				close(dfd);
				return -EPERM;
			}
			close(dfd);
			p->lockfd = fd;
			p->locktree = ro; /* (the gofer attaches it: gofer_keep_fd) */
			p->slot = s;
			return 0;
		}
		close(fd);
	}
	close(ro);
	close(dfd);
	snprintf(err, errlen, "no free sandbox uid: %u sandboxes are running", MOAT_UID_SLOTS);
	return -EAGAIN;
}

/*
 * The per-user budgets the kernel counts up the user namespace chain
 * (kernel/ucount.c): every inotify instance and watch, pending signal and
 * POSIX message queue byte of the guest is also counted for the uid that
 * owns the sentry's user namespace in the host's, the caller's when rootless.
 * Unbounded, a rootless guest took all of them and the caller's own
 * processes outside the sandbox got EMFILE from inotify_init, EAGAIN from
 * sigqueue and EMFILE from mq_open (red team round 7).
 *
 * RLIMIT_SIGPENDING, RLIMIT_MSGQUEUE and RLIMIT_MEMLOCK (SysV SHM_LOCK and
 * hugetlb memfds are counted per user: user_shm_lock): a new user namespace records its
 * creator's soft limits (create_user_ns: set_userns_rlimit_max), and a charge
 * in it or below fails once the count of the creator's uid in the parent
 * namespace would pass them. So the sentry lowers its soft limits to half
 * while it creates its namespace (lim_lower) and restores them right after
 * (lim_restore): the count of the caller's uid stays below half its limit
 * whatever all its sandboxes do together, and the caller keeps the rest.
 *
 * RLIMIT_NPROC the same way (create_user_ns records it too, for a creator
 * that is not the host's root; copy_process checks every level for
 * processes and threads alike), lowered to three quarters: before red team
 * 58 a rootless guest without --pids forked until the caller's uid was at
 * its limit and the caller's own fork (its shell's) was EAGAIN while the
 * sandbox ran. A quarter rather than half is kept back, since the caller's
 * running tasks already count against the lowered limit: a caller past it
 * could not start a sandbox at all (its sentry could not make threads).
 *
 * Inotify instances and watches are sysctls of each user namespace
 * (/proc/sys/user/max_inotify_*), checked at every level: the sentry,
 * capable in its fresh namespace, sets its own to a quarter of the host's
 * (fs.inotify.max_user_*, read before), so one sandbox takes at most a
 * quarter of the caller's. */
#define UCOUNT_SHARE_INOTIFY 4
struct lims {
	struct rlimit sig, mq, lock, nproc;
	long ino_inst, ino_watch;
};

static void lim_lower(struct lims *l)
{
	struct rlimit half;

	l->ino_inst = read_long_file("/proc/sys/fs/inotify/max_user_instances");
	l->ino_watch = read_long_file("/proc/sys/fs/inotify/max_user_watches");
	if (getrlimit(RLIMIT_SIGPENDING, &l->sig) == 0 && l->sig.rlim_cur != RLIM_INFINITY) {
		half = l->sig;
		half.rlim_cur = l->sig.rlim_cur / 2;
		(void)setrlimit(RLIMIT_SIGPENDING, &half);
	}
	if (getrlimit(RLIMIT_MSGQUEUE, &l->mq) == 0 && l->mq.rlim_cur != RLIM_INFINITY) {
		half = l->mq;
		half.rlim_cur = l->mq.rlim_cur / 2;
		(void)setrlimit(RLIMIT_MSGQUEUE, &half);
	}
	if (getrlimit(RLIMIT_MEMLOCK, &l->lock) == 0 && l->lock.rlim_cur != RLIM_INFINITY) {
		half = l->lock;
		half.rlim_cur = l->lock.rlim_cur / 2;
		(void)setrlimit(RLIMIT_MEMLOCK, &half);
	}
	if (getrlimit(RLIMIT_NPROC, &l->nproc) == 0 && l->nproc.rlim_cur != RLIM_INFINITY) {
		half = l->nproc;
		half.rlim_cur = l->nproc.rlim_cur - l->nproc.rlim_cur / 4;
		(void)setrlimit(RLIMIT_NPROC, &half);
	}
}

/* After the namespace exists: the soft limits back (the guest's own, per
 * process, are the caller's), and the namespace's inotify budgets. A write
 * that fails leaves the host's (no worse than before). */
static void lim_restore(const struct lims *l)
{
	char v[32];

	(void)setrlimit(RLIMIT_SIGPENDING, &l->sig);
	(void)setrlimit(RLIMIT_MSGQUEUE, &l->mq);
	(void)setrlimit(RLIMIT_MEMLOCK, &l->lock);
	(void)setrlimit(RLIMIT_NPROC, &l->nproc);
	if (l->ino_inst > 0) {
		snprintf(v, sizeof v, "%ld", l->ino_inst / UCOUNT_SHARE_INOTIFY > 0 ? l->ino_inst / UCOUNT_SHARE_INOTIFY : 1);
		(void)write_file("/proc/sys/user/max_inotify_instances", v);
	}
	if (l->ino_watch > 0) {
		snprintf(v, sizeof v, "%ld", l->ino_watch / UCOUNT_SHARE_INOTIFY > 0 ? l->ino_watch / UCOUNT_SHARE_INOTIFY : 1);
		(void)write_file("/proc/sys/user/max_inotify_watches", v);
	}
}

/*
 * Root-run, the sentry's user namespace maps every host id onto itself (as
 * the gofer's does), so that its own fstat shows a file's real owner and
 * group: a first look-up of an existing name is then answered by the
 * sentry's openat2 + fstat (fs/directfs.c, VFS_PRESENT_STAT) instead of a
 * gofer round trip, as rootless. A map of more than the writer's own id
 * needs CAP_SETUID in the parent namespace (the host's), which the sentry no
 * longer has once it is its sandbox uid: a helper forked while it is still
 * root writes it (the identity map of its own /proc/self/{uid,gid}_map, as
 * gofer/setup.c write_maps) once the sentry has unshared, and exits.
 *
 * The map changes what stat reports, never what the sentry may open: file
 * permission compares the fsuid/fsgid (the sandbox's, which own nothing on
 * the host; no supplementary groups) with the inode's ids whatever the
 * namespace maps. What a map widens is the reach of capabilities held in
 * the namespace (capable_wrt_inode_uidgid: DAC override, CAP_FOWNER... apply
 * to inodes whose owner and group the namespace maps) — with only its own
 * uid mapped, the full set the sentry has in its namespace after unshare
 * touched nothing of the host's; with every id mapped it would reach every
 * host file its mounts show. So the sentry holds none of them: right after
 * the map, everything but CAP_SYS_ADMIN (the set-up's mounts, its pivot, the
 * setns into the guest's IPC namespace and moat-publish's into its network
 * namespace) and CAP_SETPCAP (to drop the rest) leaves the bounding,
 * permitted, effective and inheritable sets (priv_keep_setup_caps), and
 * before any guest input is read everything goes (priv_drop_caps: the
 * sentry's main thread before its first thread exists, and moat-netd,
 * moat-broker and moat-publish at their start). See ARCHITECTURE.md
 * "Credentials and identity" for what else was checked (ptrace, pidfds,
 * the guest's namespace).
 */
static pid_t map_helper(int *go, int *done)
{
	/* the maps and their paths made here, before the fork: the child
	 * only writes them (no stdio, no allocation: none of the copied
	 * heap's pages faulted in for it) */
	static char uid_map[1024], gid_map[1024], uid_path[64], gid_path[64];
	int a[2], b[2];
	pid_t parent = getpid();
	if (moat_identity_map("/proc/self/uid_map", uid_map, sizeof uid_map) < 0 ||
	    moat_identity_map("/proc/self/gid_map", gid_map, sizeof gid_map) < 0)
		return -1;
	snprintf(uid_path, sizeof uid_path, "/proc/%d/uid_map", (int)parent);
	snprintf(gid_path, sizeof gid_path, "/proc/%d/gid_map", (int)parent);
	if (pipe2(a, O_CLOEXEC) < 0)
		return -1;
	if (pipe2(b, O_CLOEXEC) < 0) {
		close(a[0]);
		close(a[1]);
		return -1;
	}
	pid_t pid = fork();
	if (pid < 0) {
		close(a[0]); close(a[1]); close(b[0]); close(b[1]);
		return -1;
	}
	if (pid == 0) {
		/* root, in the host's user namespace: write the sentry's maps
		 * once it says it has unshared, then leave */
		char c;
		int r = -EIO;
		close(a[1]);
		close(b[0]);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(1);
		if (read(a[0], &c, 1) == 1 && c == 'U') {
			r = write_file(uid_path, uid_map);
			if (!r)
				r = write_file(gid_path, gid_map);
		}
		c = r ? 'E' : 'K';
		if (write(b[1], &c, 1) != 1)
			_exit(1);
		_exit(0);
	}
	close(a[0]);
	close(b[1]);
	*go = a[1];
	*done = b[0];
	return pid;
}

struct caps_hdr { uint32_t version; int pid; };
struct caps_data { uint32_t effective, permitted, inheritable; };

/* Keep at most `keep` (a mask of capability numbers below 64) in every set,
 * the bounding set included; ambient cleared. 0 or -errno. */
static int caps_limit(uint64_t keep)
{
	(void)prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	for (int cap = 0; cap < 64; cap++) {
		if (keep & (1ULL << cap))
			continue;
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0) {
			if (errno == EINVAL)
				break; /* past CAP_LAST_CAP */
			return -errno;
		}
	}
	if (!keep)  /* no way back through a uid 0 of the namespace either */
		(void)prctl(PR_SET_SECUREBITS, 0x2f /* NOROOT(+LOCKED), NO_SETUID_FIXUP(+LOCKED), KEEP_CAPS_LOCKED */
			    | 0xc0 /* NO_CAP_AMBIENT_RAISE(+LOCKED) */, 0, 0, 0);
	struct caps_hdr h = { 0x20080522 /* _LINUX_CAPABILITY_VERSION_3 */, 0 };
	struct caps_data d[2] = { { (uint32_t)keep, (uint32_t)keep, 0 },
				  { (uint32_t)(keep >> 32), (uint32_t)(keep >> 32), 0 } };
	if (syscall(SYS_capset, &h, d) < 0)
		return -errno;
	return 0;
}

static int caps_verified; /* priv_drop_caps saw none left (the confined sentry cannot capget) */

int priv_drop_caps(void)
{
	int r = caps_limit(0);
	if (r < 0)
		return r;
	if (priv_caps_held() != 0) /* fail closed: -1 (cannot tell) or 1 */
		return -EPERM;
	caps_verified = 1;
	return 0;
}

int priv_caps_verified_none(void)
{
	return caps_verified;
}

int priv_caps_held(void)
{
	struct caps_hdr h = { 0x20080522, 0 };
	struct caps_data d[2];
	if (syscall(SYS_capget, &h, d) < 0)
		return -1;
	int bound = 0;
	for (int cap = 0; cap < 64; cap++) {
		int r = prctl(PR_CAPBSET_READ, cap, 0, 0, 0);
		if (r < 0)
			break;
		bound |= r > 0;
	}
	return (d[0].effective | d[0].permitted | d[0].inheritable | d[1].effective | d[1].permitted |
		d[1].inheritable) != 0 || bound;
}

int priv_drop(struct priv *p, char *err, size_t errlen)
{
	char map[64];
	int r;
	int go = -1, done = -1;
	pid_t helper = -1;

	p->host_uid = getuid();
	p->host_gid = getgid();
	p->owner_map = 0;
	if (geteuid() == 0) {
		if (!getenv("MOAT_NO_ROOT_OWNERS")) /* (a knob: the one-id map, for comparisons) */
			helper = map_helper(&go, &done);
		if (p->lockfd < 0) {
			snprintf(err, errlen, "no sandbox uid claimed");
			return -EINVAL;
		}
		close(p->lockfd); /* the gofer holds the claim from here on */
		p->lockfd = -1;
		if (p->locktree >= 0)
			close(p->locktree); /* (attached in the gofer's root: no unmount) */
		p->locktree = -1;
		p->host_uid = p->host_gid = MOAT_UID_BASE + p->slot * MOAT_UID_BLOCK;
		if (setgroups(0, NULL) < 0 || setresgid(p->host_gid, p->host_gid, p->host_gid) < 0 ||
		    setresuid(p->host_uid, p->host_uid, p->host_uid) < 0) {
			r = -errno;
			if (helper > 0) {
				close(go);
				close(done);
				waitpid(helper, NULL, 0);
			}
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
	struct lims lims;
	lim_lower(&lims);
	if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0) {
		r = -errno;
		if (helper > 0) {
			close(go);
			close(done);
			waitpid(helper, NULL, 0);
		}
		lim_restore(&lims);
		snprintf(err, errlen, "cannot create the sentry's namespaces: %s%s", strerror(errno),
			 errno == EPERM || errno == ENOSPC ? " (are unprivileged user namespaces enabled?)" : "");
		return r;
	}
	r = write_file("/proc/self/setgroups", "deny");
	if (r && r != -ENOENT)
		goto maps;
	r = 0;
	if (helper > 0) {
		char c = 'U';
		if (write(go, &c, 1) == 1 && read(done, &c, 1) == 1 && c == 'K')
			p->owner_map = 1;
		close(go);
		close(done);
		go = done = -1;
		/* it leaves right after its answer: reaped below, once the
		 * rest is done (no wait for its exit here) */
	}
	if (!p->owner_map) {
		snprintf(map, sizeof map, "%u %u 1\n", (unsigned)p->host_uid, (unsigned)p->host_uid);
		if ((r = write_file("/proc/self/uid_map", map)) < 0)
			goto maps;
		snprintf(map, sizeof map, "%u %u 1\n", (unsigned)p->host_gid, (unsigned)p->host_gid);
		if ((r = write_file("/proc/self/gid_map", map)) < 0)
			goto maps;
	}
	lim_restore(&lims);
	/* every host id mapped: no capability that would reach host files
	 * (see the comment above map_helper) */
	if (p->owner_map && (r = caps_limit((1ULL << 21 /* CAP_SYS_ADMIN */) | (1ULL << 8 /* CAP_SETPCAP */))) < 0)
		snprintf(err, errlen, "sentry: drop capabilities: %s", strerror(-r));
	if (r >= 0 && mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
		r = -errno;
		snprintf(err, errlen, "sentry: make / private: %s", strerror(errno));
	}
	if (helper > 0) /* (gone by now as a rule: no wait) */
		waitpid(helper, NULL, 0);
	return r < 0 ? r : 0;
maps:
	if (helper > 0) {
		if (go >= 0) {
			close(go);
			close(done);
		}
		waitpid(helper, NULL, 0);
	}
	lim_restore(&lims);
	snprintf(err, errlen, "cannot write the sentry's id maps: %s", strerror(-r));
	return r;
}

/* ---- the sentry's root: an empty read-only tmpfs holding read-only binds of
 * the host-directory exports (the layer that confines direct file access) ---- */

static int sentry_roots[GOFER_MAX_EXPORTS];
static size_t sentry_nroots;
/* the roots that are detached clones (priv_add_export_root): released at
 * the program's exit by priv_export_roots_release */
static char sentry_root_clone[GOFER_MAX_EXPORTS];
/* /.empty (a regular file in the sentry's root), O_PATH: what a released
 * root's fd number refers to from then on (nothing resolves beneath it) */
static int inert_fd = -1;

const int *priv_export_roots(size_t *n)
{
	*n = sentry_nroots;
	return sentry_roots;
}

void priv_add_export_root(size_t i, int fd)
{
	if (i >= GOFER_MAX_EXPORTS) {
		close(fd);
		return;
	}
	if (i < sentry_nroots && sentry_roots[i] >= 0)
		close(sentry_roots[i]);
	for (size_t k = sentry_nroots; k < i; k++)
		sentry_roots[k] = -1;
	sentry_roots[i] = fd;
	sentry_root_clone[i] = 1;
	if (sentry_nroots <= i)
		sentry_nroots = i + 1;
}

static int new_tmpfs(const char *size, const char *mode, unsigned attrs)
{
	int fs = (int)syscall(SYS_fsopen, "tmpfs", FSOPEN_CLOEXEC);
	int m;

	if (fs < 0)
		return -1;
	if (syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, "size", size, 0) < 0 ||
	    syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, "mode", mode, 0) < 0 ||
	    syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, "nr_inodes", "256", 0) < 0 ||
	    syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0) {
		int e = errno;
		close(fs);
		errno = e;
		return -1;
	}
	m = (int)syscall(SYS_fsmount, fs, FSMOUNT_CLOEXEC, attrs);
	close(fs);
	return m;
}

/* Red team 90: a directory the caller gives as stdio (`moat run ... < DIR`)
 * is the host's tree, outside every export. The guest's init and every
 * guest task inherit it as fd 0-2, and through the guest procfs's
 * "PID/fd/0/..." magic link (the openat the sentry's filter allows on that
 * fd, read-only) a compromised sentry opened and listed what lies beneath
 * and above it: the host's whole tree with the sandbox uid's access,
 * rootless the caller's own (MOAT_TEST_CONFINEMENT_STDIO_FILE probes it:
 * stdio_dir_file, stdio_dir_dotdot). The guest saw it as a removed
 * directory already (red team 83: lookups ENOENT, an empty listing), so it
 * gets one: the root of an empty read-only tmpfs made for it, detached
 * (".." stays there), in place of each such fd, ours too. Files, pipes,
 * sockets and terminals stay the caller's. */
int priv_stdio_dirs(char *err, size_t errlen)
{
	for (int fd = 0; fd < 3; fd++) {
		struct stat st;
		if (fstat(fd, &st) < 0 || !S_ISDIR(st.st_mode))
			continue;
		int m = new_tmpfs("4k", "0555", MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
						 MOUNT_ATTR_NOEXEC);
		int d = m < 0 ? -1 : openat(m, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		int e = errno;
		if (m >= 0)
			close(m);
		if (d < 0 || dup2(d, fd) != fd) {
			e = d < 0 ? e : errno;
			snprintf(err, errlen, "sentry: stdio %d, a directory: an empty one in its place: %s", fd,
				 strerror(e));
			if (d >= 0)
				close(d);
			return -e;
		}
		close(d);
	}
	return 0;
}

/* Mask a hidden name beneath an attached export (as the gofer does): an empty
 * read-only tmpfs over a directory, the root's empty file over a file. A
 * name we cannot reach (absent, behind a symlink, or beneath a directory our
 * uid may not search) is one we cannot open either. */
static int mask_hidden(int expfd, const char *h)
{
	struct open_how how = {
		.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV,
	};
	struct stat st;
	int fd = (int)syscall(SYS_openat2, expfd, h, &how, sizeof how), m = -1, r = 0;

	if (fd < 0)
		return 0;
	if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode))
		m = new_tmpfs("4k", "0000", MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
			      MOUNT_ATTR_NOEXEC);
	else if (S_ISREG(st.st_mode))
		m = (int)syscall(SYS_open_tree, AT_FDCWD, "/tmp/.empty", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
	else
		goto out;  /* a symlink: never followed by the fast path; its target is in the root */
	if (m < 0 || syscall(SYS_move_mount, m, "", fd, "", MOVE_MOUNT_F_EMPTY_PATH |
			     MOVE_MOUNT_T_EMPTY_PATH) < 0)
		r = -errno;
out:
	if (m >= 0)
		close(m);
	close(fd);
	return r;
}

/* The exports' box: a detached tmpfs never attached to our root, holding
 * each host-directory export's clone at "<index>" (Linux 6.15 mounts on a
 * detached tree): no path of our root reaches an export, and the kernel
 * still names a file of one "/<index>/..." (d_path from the box's root: the
 * guest's /proc/PID/maps, fs/vfs.c vfs_kernel_names). Its fd is held for
 * the program's life (its last close dissolves the box) and released at
 * exit with the cow roots. -1: none (an older kernel: the exports are bound
 * at "/<index>" in our root instead). */
static int export_box = -1, box_used;

/* Put tree, a clone of export i, in the box: its root's O_PATH fd, or -1
 * (no box, or the kernel cannot mount there: tree is unchanged then) */
static int box_export(size_t i, int tree)
{
	char name[24];

	if (export_box < 0)
		return -1;
	snprintf(name, sizeof name, "%zu", i);
	if (mkdirat(export_box, name, 0555) < 0 ||
	    syscall(SYS_move_mount, tree, "", export_box, name, MOVE_MOUNT_F_EMPTY_PATH) < 0) {
		if (box_used)   /* (closing it would unmount what it holds) */
			return -1;
		close(export_box);
		export_box = -1;
		return -1;
	}
	box_used = 1;
	close(tree);
	return openat(export_box, name, O_PATH | O_DIRECTORY | O_CLOEXEC);
}

/* priv_sentry_root's old root detach, beside the wait for the gofer: the
 * thread's cwd is ours (the new root, with the old one stacked on it);
 * absolute paths start at the new root, never at what is stacked on it */
static pthread_t detacher;
static int detacher_on, detach_err;
static size_t sentry_root_n;
static char sentry_root_bound[GOFER_MAX_EXPORTS];

static void *detach_old_root(void *arg)
{
	(void)arg;
	detach_err = umount2(".", MNT_DETACH) < 0 ? errno : 0;
	return NULL;
}

int priv_sentry_root(const struct gofer_export *ex, size_t n, char *err, size_t errlen)
{
	int trees[GOFER_MAX_EXPORTS];
	char slot[32];
	int base, fd;

	sentry_nroots = 0;
	if (n > GOFER_MAX_EXPORTS)
		n = GOFER_MAX_EXPORTS;
	/* clone every host-directory export while the host is still visible in
	 * our copy of the mount namespace (recursively: submounts our namespace
	 * inherited locked cannot be left behind). One we cannot reach (root-run:
	 * an ancestor our uid may not search) simply has no fast path. */
	for (size_t i = 0; i < n; i++) {
		struct stat st;
		trees[i] = -1;
		sentry_roots[i] = -1;
		if (ex[i].kind != GOFER_EXPORT_DIR || !ex[i].host_path || ex[i].cow)
			continue;        /* a cow export's files are the gofer's overlay */
		trees[i] = (int)syscall(SYS_open_tree, AT_FDCWD, ex[i].host_path,
					OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
		if (trees[i] >= 0 && (fstat(trees[i], &st) < 0 || !S_ISDIR(st.st_mode))) {
			close(trees[i]);
			trees[i] = -1;
		}
		/* a --bind source is the object moat checked (no planted
		 * symlink; rw: for overlaps), as the gofer's clone must be
		 * (checked_object): this clone resolves
		 * the name once more, and a host process that swapped it for a
		 * symlink to the layer's directory in between gave the fast
		 * path (stat, lookups) the guest's own layer at the bind while
		 * the gofer served the checked directory (flake38: a run in
		 * ~5,000 under the toggler; isolation_cow
		 * overlay_overlap_missing_source_not_raced) */
		if (trees[i] >= 0 && ex[i].chk_ino &&
		    ((unsigned long long)st.st_dev != ex[i].chk_dev || (unsigned long long)st.st_ino != ex[i].chk_ino)) {
			snprintf(err, errlen, "sentry: --bind %s: replaced since moat checked it",
				 ex[i].host_path);
			return -ESTALE;
		}
	}
	/* 0755 while we fill it (root-run we hold no DAC override: we are its
	 * owner), 0555 and read-only before the pivot */
	base = new_tmpfs("64k", "0755", MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
	if (base < 0 || syscall(SYS_move_mount, base, "", AT_FDCWD, "/tmp", MOVE_MOUNT_F_EMPTY_PATH) < 0) {
		snprintf(err, errlen, "sentry: mount an empty root: %s", strerror(errno));
		return -errno;
	}
	close(base);
	fd = open("/tmp/.empty", O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, errlen, "sentry: /tmp/.empty: %s", strerror(errno));
		return -errno;
	}
	close(fd);
	export_box = new_tmpfs("64k", "0755", MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
	for (size_t i = 0; i < n; i++) {
		if (trees[i] < 0)
			continue;
		/* in the box where the kernel lets us mount on a detached
		 * tree (Linux 6.15): no path of our root reaches the export,
		 * so no sun_path a sendto names does either (a read-only mount
		 * does not stop a datagram to a socket inode in it); else bound
		 * at "/<index>", and a socket of the export is within reach by
		 * its path (Known gaps) */
		snprintf(slot, sizeof slot, "/tmp/%zu", i);
		int efd = box_export(i, trees[i]);
		if (efd >= 0) {
			sentry_roots[i] = efd;  /* (held: not closed below) */
		} else if (export_box >= 0) {
			snprintf(err, errlen, "sentry: %s: %s", ex[i].host_path, strerror(errno));
			return -errno;
		} else {
			if (mkdir(slot, 0555) < 0 ||
			    syscall(SYS_move_mount, trees[i], "", AT_FDCWD, slot, MOVE_MOUNT_F_EMPTY_PATH) < 0) {
				snprintf(err, errlen, "sentry: %s: attach: %s", ex[i].host_path, strerror(errno));
				return -errno;
			}
			close(trees[i]);
			sentry_root_bound[i] = 1;
			efd = open(slot, O_PATH | O_DIRECTORY | O_CLOEXEC);
		}
		if (efd < 0) {
			snprintf(err, errlen, "sentry: %s: %s", slot, strerror(errno));
			return -errno;
		}
		for (const char *const *h = ex[i].hidden; h && *h; h++)
			if (mask_hidden(efd, *h) < 0) {
				snprintf(err, errlen, "sentry: %s/%s: cannot hide: %s", ex[i].host_path,
					 *h, strerror(errno));
				return -EPERM;
			}
		if (sentry_root_bound[i])
			close(efd);
		/* read-only whatever the export (the fast path only reads; the
		 * gofer makes every change), recursively */
		struct mount_attr a = { .attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV };
		if (sentry_root_bound[i] &&  /* (the box's: below, from its root) */
		    syscall(SYS_mount_setattr, AT_FDCWD, slot, AT_RECURSIVE, &a, sizeof a) < 0) {
			snprintf(err, errlen, "sentry: %s: read-only: %s", slot, strerror(errno));
			return -errno;
		}
	}
	/* the box and every export in it read-only, recursively (a mount in
	 * a detached tree is changed from the tree's root only) */
	struct mount_attr ba = { .attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV };
	if (export_box >= 0 && syscall(SYS_mount_setattr, export_box, "", AT_EMPTY_PATH | AT_RECURSIVE,
				       &ba, sizeof ba) < 0) {
		snprintf(err, errlen, "sentry: the exports' box: read-only: %s", strerror(errno));
		return -errno;
	}
	if (chmod("/tmp", 0555) < 0 || chdir("/tmp") < 0 || syscall(SYS_pivot_root, ".", ".") < 0) {
		snprintf(err, errlen, "sentry: pivot_root: %s", strerror(errno));
		return -errno;
	}
	/* the old root's detach ends with an RCU grace period (every unmount
	 * does: 0.3-1 ms on a loaded 2-vCPU VM): a thread does it while we
	 * wait for the gofer (priv_sentry_root_finish joins it) */
	sentry_root_n = n;
	detacher_on = pthread_create(&detacher, NULL, detach_old_root, NULL) == 0;
	if (!detacher_on)
		detach_old_root(NULL);
	return 0;
}

int priv_sentry_root_finish(char *err, size_t errlen)
{
	size_t n = sentry_root_n;
	char slot[32];

	if (detacher_on && pthread_join(detacher, NULL) != 0) {
		snprintf(err, errlen, "sentry: detach the old root: no join");
		return -EIO;
	}
	detacher_on = 0;
	if (detach_err || chdir("/") < 0) {
		int e = detach_err ? detach_err : errno;
		snprintf(err, errlen, "sentry: detach the old root: %s", strerror(e));
		return -e;
	}
	struct mount_attr ra = { .attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
					     MOUNT_ATTR_NOEXEC };
	if (syscall(SYS_mount_setattr, AT_FDCWD, "/", 0, &ra, sizeof ra) < 0) {
		snprintf(err, errlen, "sentry: read-only root: %s", strerror(errno));
		return -errno;
	}
	for (size_t i = 0; i < n; i++) {
		if (!sentry_root_bound[i])
			continue;
		snprintf(slot, sizeof slot, "/%zu", i);
		sentry_roots[i] = open(slot, O_PATH | O_DIRECTORY | O_CLOEXEC);
	}
	sentry_nroots = n;
	inert_fd = open("/.empty", O_PATH | O_CLOEXEC);
	return 0;
}

/* ---- the cow roots' release at the program's exit ----
 *
 * A cow export's root is a detached clone of the gofer's overlay: the last
 * close of it dissolves the clone's anonymous mount namespace, and the last
 * mount of an overlay ends its superblock. Each ends in an expedited RCU
 * grace period (namespace_unlock; ovl_free_fs's kern_unmount_array), and the
 * sentry, the overlays' last holder, ran them one after the other in its
 * exit_group (eight for the default overlays, then its own mount
 * namespace's: ~0.1 ms each quiet, more under load, on the wall time of
 * `moat run`). Once the program has exited (the tracer has killed the init
 * and shut the gofer down: what the dying tasks still ask of the files fails
 * from then on either way), one thread drops them instead, beside the init's
 * end and the gofer's: dup3 of /.empty over each fd, so the number never
 * names anything else and a call still in flight in a worker resolves
 * nothing beneath it. Not joined: a thread still in a grace period at
 * exit_group finishes it there (uninterruptible), and moat's parent hears of
 * the exit only once every thread has ended. One thread, not one per root:
 * four (their waits shared) cost ~3 ms more tree CPU per run under load. */
static int nreleasing;
static int releasing_fds[GOFER_MAX_EXPORTS + 1];

static void *release_roots(void *arg)
{
	(void)arg;
	/* each old file's last fput runs as this thread returns from dup3 */
	for (int k = 0; k < nreleasing; k++)
		dup3(inert_fd, releasing_fds[k], O_CLOEXEC);
	return NULL;
}

void priv_export_roots_release(void)
{
	pthread_attr_t at;
	pthread_t th;
	char mark[64];

	if (inert_fd < 0)
		return;
	for (size_t i = 0; i < sentry_nroots && i < GOFER_MAX_EXPORTS; i++) {
		if (!sentry_root_clone[i] || sentry_roots[i] < 0)
			continue;
		sentry_root_clone[i] = 0;
		releasing_fds[nreleasing++] = sentry_roots[i];
	}
	int ncow = nreleasing, box = export_box >= 0 && nreleasing < GOFER_MAX_EXPORTS + 1;
	if (box) {
		releasing_fds[nreleasing++] = export_box;
		export_box = -1;
	}
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&at, 64 * 1024); /* dup3 and the kernel's work only */
	if (nreleasing && pthread_create(&th, &at, release_roots, NULL) != 0)
		release_roots(NULL);
	pthread_attr_destroy(&at);
	snprintf(mark, sizeof mark, "export roots releasing: %d%s", ncow, box ? ", the exports' box" : "");
	dbg_mark(mark);
}
