/* gofer/setup.c - gofer_start(): fork the gofer and confine it.
 *
 * The child, in order (any failure: one line to the parent, then exit):
 *   1. PR_SET_PDEATHSIG(SIGKILL), re-check the parent; keep only its socket
 *      and the cow sources the parent cloned for it (stdio becomes
 *      /dev/null unless MOAT_DEBUG is set).
 *   2. It is cloned into new user and mount namespaces (CLONE_NEWUSER|
 *      CLONE_NEWNS); the parent writes the id maps meanwhile (a full map can
 *      only be written from the parent namespace) and says when: as root
 *      the identity of the parent's own maps, so files keep their owners and
 *      DAC override still works; rootless "U U 1"/"G G 1" with setgroups deny.
 *   3. mount --make-rprivate /; clone every source tree (open_tree
 *      OPEN_TREE_CLONE|AT_RECURSIVE) while the host is still visible.
 *   4. a small tmpfs becomes the new root; each export is attached at "/<i>":
 *      DIR trees, a tmpfs per TMPFS export (512m, 0755), a tmpfs holding
 *      bind mounts of the six host device nodes for DEV. Hidden names that
 *      exist are over-mounted (empty read-only tmpfs on a directory, an empty
 *      file on a file). Mount attributes, recursively: ro exports
 *      RDONLY|NOSUID|NODEV, rw ones NOSUID|NODEV, DEV RDONLY|NOSUID.
 *   5. pivot_root into it first and detach the old root (the exports of
 *      step 4 are then made beneath it); open an O_PATH root fd per export.
 *   6. Landlock (best ABI the kernel has): read beneath ro exports,
 *      read/write/make/remove beneath rw and tmpfs ones, read/write/ioctl for
 *      the device nodes; no TCP (ABI 4), no signals or abstract sockets out
 *      (ABI 6).
 *   7. seccomp allowlist (compiled at build time: seccomp_rules.c), default EPERM; then serve.
 */
#include "gofer/gofer.h"
#include "gofer/proto.h"
#include "gofer/server.h"
#include "common/bpf.h"
#include "common/log.h"
#include "common/util.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/landlock.h>
#include <linux/openat2.h>
#include <sched.h>
#include <malloc.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <dirent.h>
#include <sys/xattr.h>
#include <sys/file.h>
#include <time.h>

#include "common/sanitize.h"
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <linux/mount.h>
#include <stddef.h>
#include "platform/arch.h"
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/inotify.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV (1ULL << 15)
#endif
#define LL_NET_BIND_TCP (1ULL << 0)
#define LL_NET_CONNECT_TCP (1ULL << 1)
#define LL_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#define LL_SCOPE_SIGNAL (1ULL << 1)

/* struct landlock_ruleset_attr as of ABI 6 (the header may be older) */
struct ll_ruleset_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net;
	uint64_t scoped;
};

static const char *const dev_nodes[] = {
	"null", "zero", "full", "random", "urandom", "tty",
};

/* ---- child: failures go to the parent as one line ---- */

static int child_sock = -1;

/* MOAT_DEBUG: a start-up mark of the gofer's, on the sentry's clock */
#define gmark(fmt, ...) do { if (moat_debug) \
	warnx_("%.2f ms: gofer: " fmt, moat_ms_now() - moat_mark_t0, ##__VA_ARGS__); } while (0)

static noreturn __attribute__((format(printf, 2, 3)))
void fail(int err, const char *fmt, ...)
{
	struct gofer_hello h = { .err = err < 0 ? err : -EIO };
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(h.msg, sizeof h.msg, fmt, ap);
	va_end(ap);
	send(child_sock, &h, sizeof h, MSG_NOSIGNAL);
	_exit(1);
}

/* fail with ": strerror(errno)" appended */
#define failp(fmt, ...) do { \
	int e_ = errno; \
	fail(-e_, fmt ": %s", ##__VA_ARGS__, strerror(e_)); \
} while (0)

static int mattr(int fd, const char *path, unsigned flags, uint64_t set)
{
	struct mount_attr a = { .attr_set = set };

	return mount_setattr(fd, path, flags, &a, sizeof a);
}

/* A fresh tmpfs as a detached mount fd. */
static int new_tmpfs_inodes(const char *size, const char *inodes, const char *mode,
			    unsigned attrs)
{
	int fs = fsopen("tmpfs", FSOPEN_CLOEXEC);
	int m;

	if (fs < 0)
		return -1;
	if (fsconfig(fs, FSCONFIG_SET_STRING, "size", size, 0) < 0 ||
	    (inodes && fsconfig(fs, FSCONFIG_SET_STRING, "nr_inodes", inodes, 0) < 0) ||
	    fsconfig(fs, FSCONFIG_SET_STRING, "mode", mode, 0) < 0 ||
	    fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0) {
		int e = errno;
		close(fs);
		errno = e;
		return -1;
	}
	m = fsmount(fs, FSMOUNT_CLOEXEC, attrs);
	close(fs);
	return m;
}

/* kernel.pty.max is one count for the whole host: every devpts instance
 * but the host's initial one may take up to max - reserve (3072 of 4096 by
 * default) together. Before red team 23 a guest opened /dev/ptmx 3071 times
 * and every other sandbox's (and container's) openpty was ENOSPC; now the
 * sandbox's instance holds at most a sixteenth of that (devpts "max=", 192
 * by default). Read before the pivot (no /proc after it). */
#define PTY_SHARE_DIV 16
static long pty_share = 192;

static void pty_share_read(void)
{
	long max = read_long_file("/proc/sys/kernel/pty/max");
	long reserve = read_long_file("/proc/sys/kernel/pty/reserve");
	if (max > 0 && reserve >= 0 && max > reserve)
		pty_share = (max - reserve) / PTY_SHARE_DIV > 0 ? (max - reserve) / PTY_SHARE_DIV : 1;
}

/* The sandbox's own terminals: a new devpts instance (every devpts mount is
 * one since Linux 4.7; mountable in a user namespace), its ptmx usable by
 * anyone (the guest's /dev/ptmx is a symlink to pts/ptmx, view.c), at most
 * pty_share ptys. The host's ptys are in another instance: never reachable
 * from here. -1 if the kernel refuses (then the guest has no /dev/pts). */
static int new_devpts(const struct gofer_export *ex)
{
	int fs = fsopen("devpts", FSOPEN_CLOEXEC);
	int m;
	char id[16], max[24];

	if (fs < 0)
		return -1;
	snprintf(max, sizeof max, "%ld", pty_share);
	if (fsconfig(fs, FSCONFIG_SET_STRING, "ptmxmode", "0666", 0) < 0 ||
	    fsconfig(fs, FSCONFIG_SET_STRING, "mode", "0620", 0) < 0 ||
	    fsconfig(fs, FSCONFIG_SET_STRING, "max", max, 0) < 0) {
		close(fs);
		return -1;
	}
	/* --user: new ptys belong to the program's ids (the only guest ids
	 * that act as host ids on these files: fs/vfs.c), not to ours */
	if (ex->owner_set) {
		snprintf(id, sizeof id, "%u", (unsigned)ex->owner_uid);
		if (fsconfig(fs, FSCONFIG_SET_STRING, "uid", id, 0) < 0)
			errno = 0; /* an id our namespace does not map: ours */
		snprintf(id, sizeof id, "%u", (unsigned)ex->owner_gid);
		if (fsconfig(fs, FSCONFIG_SET_STRING, "gid", id, 0) < 0)
			errno = 0;
	}
	if (fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0) {
		close(fs);
		return -1;
	}
	m = fsmount(fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC);
	close(fs);
	return m;
}

static int new_tmpfs(const char *size, const char *mode, unsigned attrs)
{
	return new_tmpfs_inodes(size, NULL, mode, attrs);
}

/* The inode count of a tmpfs of `bytes` the guest writes: bytes/1024, at
 * least 4096. A tmpfs's size= bounds its data pages only; its inodes,
 * dentries and names (~1.5 KiB of kernel memory an empty file with a long
 * name, measured) are bounded by nr_inodes alone, whose default is half of
 * the host's RAM in pages (3 million here) for each tmpfs, whatever its
 * size. Before red team 58 an empty-file flood of a 512M /tmp held 150 MB
 * of host kernel memory per 100,000 names with `df` saying 0 used, ~4.5 GB
 * per tmpfs and ~30 GB over the seven 512M ones of a default sandbox. */
#define TMPFS_DEFAULT_BYTES (512ULL << 20)   /* --tmpfs without size=, /tmp... */
#define TMPFS_BYTES_PER_INODE 1024
#define TMPFS_MIN_INODES 4096ULL
static void tmpfs_inodes_for(unsigned long long bytes, char *out, size_t len)
{
	unsigned long long ni = bytes / TMPFS_BYTES_PER_INODE;
	long pages = sysconf(_SC_PHYS_PAGES);

	/* never more than the kernel's own default (a huge size= asked) */
	if (pages > 0 && ni > (unsigned long long)pages / 2)
		ni = (unsigned long long)pages / 2;
	snprintf(out, len, "%llu", ni < TMPFS_MIN_INODES ? TMPFS_MIN_INODES : ni);
}

/* --disk: one tmpfs of that size (and size/1024 inodes) at /.disk (of our root) holds
 * every writable layer: each tmpfs export and the cow scratch is a bind of
 * a directory of it, so the kernel's ENOSPC caps them together, for writes
 * through the gofer and through fds it donated alike. The cow scratch needs
 * user xattrs there (Linux >= 6.6). */
#define DISK_POOL "/.disk"
static struct gofer_cow_config cow_cfg;   /* (set by gofer_set_cow, below) */

static void disk_pool_mount(void)
{
	char size[32], inodes[32];
	int m;

	snprintf(size, sizeof size, "%llu", cow_cfg.disk_bytes);
	tmpfs_inodes_for(cow_cfg.disk_bytes, inodes, sizeof inodes);
	m = new_tmpfs_inodes(size, inodes, "0700", MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
	if (m < 0 || mkdir(DISK_POOL, 0700) < 0 ||
	    move_mount(m, "", AT_FDCWD, DISK_POOL, MOVE_MOUNT_F_EMPTY_PATH) < 0)
		failp("gofer: --disk: its tmpfs");
	close(m);
}

/* A detached bind of a new directory `name` of the pool, mode `mode`. */
static int disk_pool_dir(const char *name, mode_t mode)
{
	char p[64];
	int m;

	snprintf(p, sizeof p, DISK_POOL "/%s", name);
	if (mkdir(p, mode) < 0 || chmod(p, mode) < 0)
		failp("gofer: --disk: %s", p);
	m = open_tree(AT_FDCWD, p, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
	if (m < 0)
		failp("gofer: --disk: %s", p);
	return m;
}

struct child_export {
	int tree;           /* DIR: cloned tree */
	int dev[ARRAY_SIZE(dev_nodes)];
	int is_file;
};

static void over_mount_hidden(int expfd, const char *h, const char *host)
{
	struct open_how how = {
		.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
			   RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV,
	};
	struct stat st;
	int fd, m = -1;

	fd = syscall(SYS_openat2, expfd, h, &how, sizeof how);
	if (fd < 0)
		return;         /* absent or behind a symlink: refused anyway */
	if (fstat(fd, &st) < 0)
		goto out;
	if (S_ISDIR(st.st_mode))
		m = new_tmpfs("4k", "0000", MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID |
			      MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
	else if (S_ISREG(st.st_mode))
		m = open_tree(AT_FDCWD, "/.empty", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
	else
		goto out;
	if (m < 0 || move_mount(m, "", fd, "", MOVE_MOUNT_F_EMPTY_PATH |
				 MOVE_MOUNT_T_EMPTY_PATH) < 0)
		failp("gofer: %s/%s: cannot hide", host, h);
out:
	if (m >= 0)
		close(m);
	close(fd);
}

/* ---- copy-on-write exports (overlayfs) ---- */

static struct gofer_cow_config cow_cfg;

void gofer_set_cow(const struct gofer_cow_config *cfg)
{
	cow_cfg = *cfg;
}

static int export_fd = -1;          /* --export DIR, opened before the pivot */
static int reaper_fd = -1;          /* write end: its EOF starts the clean-up */
static pid_t reaper_pid = -1;
static int join_fds[GOFER_JOIN_MAX]; /* gofer_join_cgroups */
static size_t njoin;

static void close_join_fds(void)
{
	for (size_t i = 0; i < njoin; i++)
		close(join_fds[i]);
	njoin = 0;
}

/* Remove name beneath top, the whole tree, never following a symlink, never
 * crossing into another mount and never leaving the tree: iteratively, with
 * at most two fds of the tree open whatever its depth (red team 30: the
 * recursive walk held one fd per level, and a guest's tree deeper than the
 * fd limit stayed on the host after moat exited). It walks down with one fd
 * (each directory entry: rmdir first, descend when not empty) and back up
 * through "..", which must be the ancestor it came from (a stack of
 * dev/ino, memory only: anything else, as a directory moved away meanwhile,
 * ends the walk, leaving files rather than touching any outside the tree).
 * A parent is read afresh from its start after each ascent; a directory
 * that cannot be emptied (an entry that will not go) is remembered by inode
 * and skipped, so the walk ends. */
#define RM_TREE_STUCK_MAX 4096
struct rm_id {
	dev_t dev;
	ino_t ino;
};

/* A directory of the tree, opened without following a symlink; -1 (errno
 * EXDEV) for another file system or mount: dev, and mnt when known, are the
 * tree root's (0: take any, for the root itself). */
static int rm_open_dir(int dirfd, const char *name, dev_t dev, uint64_t mnt)
{
	int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;

	if (fd < 0 && errno == EACCES) {
		/* a 0000 or 0300 directory (overlayfs's work/work, a guest's
		 * chmod): made searchable without following a symlink
		 * (fchmodat2, Linux >= 6.6; before, it stays) */
		if (syscall(452 /* fchmodat2 */, dirfd, name, 0700, AT_SYMLINK_NOFOLLOW) == 0)
			fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	}
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || !S_ISDIR(st.st_mode) || (dev && st.st_dev != dev) ||
	    (mnt && fd_mount_id(fd) != mnt)) {
		close(fd);
		errno = EXDEV;
		return -1;
	}
	fchmod(fd, 0700);   /* overlayfs leaves its work/work dir 0000 */
	return fd;
}

static int rm_stuck_has(const struct rm_id *v, size_t n, dev_t dev, ino_t ino)
{
	for (size_t i = 0; i < n; i++)
		if (v[i].ino == ino && v[i].dev == dev)
			return 1;
	return 0;
}

static void rm_tree(int top, const char *name)
{
	struct rm_id *up = NULL, stuck[64], *stk = stuck;
	size_t depth = 0, cap = 0, nstuck = 0, stuck_cap = ARRAY_SIZE(stuck);
	struct stat st;
	DIR *d;
	dev_t dev;
	uint64_t mnt;
	int fd, failed = 0;

	fd = rm_open_dir(top, name, 0, 0);
	if (fd < 0) {
		if (errno != EXDEV)
			unlinkat(top, name, 0);
		return;
	}
	if (fstat(fd, &st) < 0 || !(d = fdopendir(fd))) {
		close(fd);
		return;
	}
	dev = st.st_dev;
	mnt = fd_mount_id(fd);
	for (;;) {
		struct dirent *de;
		int down = -1;

		while (down < 0 && (de = readdir(d))) {
			if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
				continue;
			if (de->d_type != DT_DIR) {
				if (unlinkat(dirfd(d), de->d_name, 0) == 0)
					continue;
				if (errno != EISDIR) {
					failed = 1;
					continue;
				}
			}
			if (rm_stuck_has(stk, nstuck, dev, de->d_ino)) {
				failed = 1;
				continue;
			}
			if (unlinkat(dirfd(d), de->d_name, AT_REMOVEDIR) == 0)
				continue;
			down = rm_open_dir(dirfd(d), de->d_name, dev, mnt);
			if (down < 0)
				failed = 1;
		}
		if (down >= 0) {
			/* one level down: remember where we came from */
			if (fstat(dirfd(d), &st) < 0) {
				close(down);
				break;
			}
			if (depth == cap) {
				struct rm_id *n = realloc(up, (cap ? cap * 2 : 256) * sizeof *up);
				if (!n) {
					close(down);
					break;
				}
				up = n;
				cap = cap ? cap * 2 : 256;
			}
			up[depth++] = (struct rm_id){ st.st_dev, st.st_ino };
			closedir(d);
			if (!(d = fdopendir(down))) {
				close(down);
				d = NULL;
				break;
			}
			failed = 0;
			continue;
		}
		/* this directory is done (empty, or holding what will not go) */
		if (depth == 0) {
			closedir(d);
			d = NULL;
			unlinkat(top, name, AT_REMOVEDIR);
			break;
		}
		if (failed) {
			if (fstat(dirfd(d), &st) < 0)
				break;
			if (nstuck == stuck_cap) {
				if (stk != stuck || stuck_cap >= RM_TREE_STUCK_MAX)
					break;
				stk = malloc(RM_TREE_STUCK_MAX * sizeof *stk);
				if (!stk) {
					stk = stuck;
					break;
				}
				memcpy(stk, stuck, sizeof stuck);
				stuck_cap = RM_TREE_STUCK_MAX;
			}
			stk[nstuck++] = (struct rm_id){ st.st_dev, st.st_ino };
		}
		int p = openat(dirfd(d), "..", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		depth--;
		if (p < 0 || fstat(p, &st) < 0 || st.st_dev != up[depth].dev ||
		    st.st_ino != up[depth].ino) {
			if (p >= 0)
				close(p);
			break;  /* moved away meanwhile: not ours to follow */
		}
		closedir(d);
		if (!(d = fdopendir(p))) {
			close(p);
			break;
		}
		failed = 0;  /* the parent is read again from its start */
	}
	if (d)
		closedir(d);
	free(up);
	if (stk != stuck)
		free(stk);
}

/* Remove the copy-up temporaries a killed gofer left in a kept upper layer
 * (gofer_temp_name; regular files only, never following a symlink), before
 * the guest can see them. A walk of the upper layer (getdents64), at most
 * 64 directories deep. */
static void rm_temps(int dirfd, int depth)
{
	int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d;
	struct dirent *de;

	if (fd < 0 || depth > 64 || !(d = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (de->d_type == DT_REG && gofer_temp_name(de->d_name)) {
			unlinkat(fd, de->d_name, 0);
		} else if (de->d_type == DT_DIR) {
			int sub = openat(fd, de->d_name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sub >= 0) {
				rm_temps(sub, depth + 1);
				close(sub);
			}
		}
	}
	closedir(d);
}

/* The dentry shrinker (rootless only): a child of the gofer made before it
 * confines itself (Landlock refuses every remount to a confined process),
 * holding, per cow export, an fspick(2) context of its overlay and nothing
 * else. For each export number it reads on its socket it reconfigures that
 * overlay with no change (fsconfig FSCONFIG_CMD_RECONFIGURE), whose one
 * effect is the kernel's shrink_dcache_sb: overlayfs forgets the unused
 * dentries of the layers it looked up, so a directory the gofer copied up by
 * hand in the upper layer (server.c copy_up_dirs) is looked up again with
 * it. Its seccomp filter lets it do only that: read, write, fsconfig with
 * that command, exit. It ends at EOF (the gofer ended) or with the gofer
 * (PDEATHSIG). */
static long max_watches = 8192;  /* read at the start (child_main): no procfs later */

/* The sentry went away before our "ready" (its set-up failed or was
 * signalled: run.c run_die_cleanup shuts our control socket): moat-dshrink
 * and the scratch reaper are told to go and reaped, as gofer_serve does at
 * its end; before red team 16 moat-dshrink was left a zombie for the host's
 * init (lifecycle setup_signal_reaps, rootless). */
static _Noreturn void ready_failed(const struct gofer_srv *s)
{
	gofer_helpers_stop(s);
	_exit(1);
}

static void start_dshrink(struct gofer_srv *s)
{
	int fds[GOFER_MAX_EXPORTS], sv[2], any = 0;
	pid_t pid;

	s->dshrink_fd = -1;
	s->pin_fd = -1;
	if (geteuid() == 0)
		return;  /* as root every id is mapped: overlayfs copies up all */
	for (size_t i = 0; i < s->n; i++) {
		fds[i] = -1;
		if (s->exp[i].cow && !s->exp[i].is_file)
			fds[i] = (int)syscall(SYS_fspick, s->exp[i].rootfd, "",
					      FSPICK_EMPTY_PATH | FSPICK_NO_AUTOMOUNT | FSPICK_CLOEXEC);
		any |= fds[i] >= 0;
		if (s->exp[i].cow)
			dbg("gofer: export %zu: fspick %d (%s)", i, fds[i], fds[i] < 0 ? strerror(errno) : "ok");
	}
	if (!any || socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		goto out;
	pid = fork();
	if (pid < 0) {
		close(sv[0]);
		close(sv[1]);
		goto out;
	}
	if (pid == 0) {
		prctl(PR_SET_NAME, "moat-dshrink");
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		/* keep only the socket and the contexts */
		for (unsigned lo = 0;;) {
			unsigned next = ~0U;
			if ((unsigned)sv[1] >= lo)
				next = (unsigned)sv[1];
			for (size_t i = 0; i < s->n; i++)
				if (fds[i] >= 0 && (unsigned)fds[i] >= lo && (unsigned)fds[i] < next)
					next = (unsigned)fds[i];
			if (next > lo)
				syscall(SYS_close_range, lo, next == ~0U ? ~0U : next - 1, 0);
			if (next == ~0U)
				break;
			lo = next + 1;
		}
		/* fsconfig's reconfigure only (another command kills), the
		 * socket's read and write, exit; anything else EPERM */
		static const struct bpf_allow rows[] = {
			{ .nr = __NR_fsconfig, .arg = 1, .val = FSCONFIG_CMD_RECONFIGURE, .miss = SECCOMP_RET_KILL_PROCESS },
			{ .nr = __NR_read, .arg = -1 },
			{ .nr = __NR_write, .arg = -1 },
			{ .nr = __NR_exit_group, .arg = -1 },
			{ .nr = __NR_exit, .arg = -1 },
			{ .nr = __NR_rt_sigreturn, .arg = -1 },
		};
		struct sock_filter f[BPF_ALLOW_LEN(sizeof rows / sizeof rows[0])];
		int len = bpf_allow_build(rows, sizeof rows / sizeof rows[0], SECCOMP_RET_ERRNO | EPERM, f,
					  sizeof f / sizeof f[0]);
		if (len < 0)
			syscall(SYS_exit_group, 1);
		/* moat's text and rodata the gofer's set-up mapped (~270 KiB
		 * of PSS, only this process's once the gofer trims its own):
		 * this loop needs a page or two of it; after the filter's build
		 * (its rows are rodata, the builder text: built after the trim
		 * they stayed mapped) */
		text_trim();
		struct sock_fprog prog = { .len = (unsigned short)len, .filter = f };
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
		    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0)
			syscall(SYS_exit_group, 1);
		for (;;) {
			uint32_t i;
			int32_t r;
			long n = syscall(SYS_read, sv[1], &i, sizeof i);
			if (n <= 0) {
				if (n < 0 && errno == EINTR)
					continue;
				syscall(SYS_exit_group, 0);
			}
			r = n == sizeof i && i < GOFER_MAX_EXPORTS && i < s->n && fds[i] >= 0 ?
				(syscall(SYS_fsconfig, fds[i], FSCONFIG_CMD_RECONFIGURE, NULL, NULL, 0) < 0 ?
				 -errno : 0) : -EINVAL;
			if (syscall(SYS_write, sv[1], &r, sizeof r) != sizeof r)
				syscall(SYS_exit_group, 0);
		}
	}
	close(sv[1]);
	s->dshrink_fd = sv[0];
	s->dshrink_pid = pid;
	/* the directories whose numbers the sandbox keeps state for, pinned
	 * across shrinks (server.c pin_dir) */
	s->pin_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	/* a quarter of the caller's inotify watches at most (they are its
	 * user's, shared with its other programs and the guest's own) */
	s->pin_max = max_watches / 4 > 65536 ? 65536 : (int)(max_watches / 4);
	dbg("gofer: directory pins: %d at most", s->pin_max);
out:
	for (size_t i = 0; i < s->n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

/* The scratch reaper: a child of the gofer made before it confines itself,
 * holding the scratch directory's parent. It reads nothing but EOF on a
 * pipe whose write end only the gofer holds: EOF comes when the gofer ends,
 * cleanly (it then waits for us) or killed (kill -9 of moat: PDEATHSIG), and
 * the scratch directory goes with it. */
static void start_reaper(const char *parent, const char *name)
{
	int p[2], dfd, lk;
	pid_t pid;

	dfd = open(parent, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0 || pipe2(p, O_CLOEXEC) < 0)
		failp("gofer: scratch %s", parent);
	/* the reaper's flock says "in use" to gofer_clean_stale_scratch */
	lk = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (lk < 0 || flock(lk, LOCK_EX | LOCK_NB) < 0)
		failp("gofer: lock the scratch directory");
	pid = fork();
	if (pid < 0)
		failp("gofer: fork the scratch reaper");
	if (pid == 0) {
		char c;
		prctl(PR_SET_NAME, "moat-reaper");
		close(p[1]);
		close_join_fds(); /* (it stays out of the sandbox's cgroups) */
		signal(SIGINT, SIG_IGN);
		signal(SIGTERM, SIG_IGN);
		signal(SIGHUP, SIG_IGN);
		while (read(p[0], &c, 1) < 0 && errno == EINTR)
			;
		rm_tree(dfd, name);
		_exit(0);
	}
	close(p[0]);
	close(dfd);
	close(lk);
	reaper_fd = p[1];
	reaper_pid = pid;
}

static const char *scratch_parent(void)
{
	const char *tmp = getenv("TMPDIR");

	if (!tmp || tmp[0] != '/' || strlen(tmp) > PATH_MAX - 32)
		tmp = "/var/tmp";
	return tmp;
}

void gofer_clean_stale_scratch(void)
{
	DIR *d = opendir(scratch_parent());
	struct dirent *de;
	time_t now = time(NULL);

	if (!d)
		return;
	while ((de = readdir(d))) {
		struct stat st;
		int fd;

		if (strncmp(de->d_name, "moat-cow.", 9))
			continue;
		fd = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			continue;
		/* ours, older than a minute (a new one is locked within
		 * microseconds of its creation), and no reaper holds it */
		if (fstat(fd, &st) == 0 && st.st_uid == geteuid() && now - st.st_mtime > 60 &&
		    flock(fd, LOCK_EX | LOCK_NB) == 0)
			rm_tree(dirfd(d), de->d_name);
		close(fd);
	}
	closedir(d);
}

/* Does a fresh tmpfs keep user.* xattrs (Linux >= 6.6)? overlayfs in a user
 * namespace (userxattr) needs them in its upper layer for opaque
 * directories and redirects. */
static int tmpfs_has_user_xattr(int m)
{
	int fd = openat(m, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int ok;

	if (fd < 0)
		return 0;
	ok = fsetxattr(fd, "user.moat.probe", "1", 1, 0) == 0;
	close(fd);
	return ok;
}

/* Whether a new tmpfs keeps user xattrs here (Linux >= 6.6). */
static int tmpfs_keeps_user_xattrs(void)
{
	int m = new_tmpfs("64k", "0700", MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
	int ok = m >= 0 && tmpfs_has_user_xattr(m);

	if (m >= 0)
		close(m);
	return ok;
}

/* The scratch that holds the upper and work directories of the cow exports
 * (as a detached mount), chosen while the host is visible: a tmpfs if it
 * keeps user xattrs (MOAT_COW_SCRATCH=host forces the other choice), else a
 * new 0700 directory under $TMPDIR or /var/tmp, removed by the reaper. */
static int cow_scratch(const struct gofer_export *ex, size_t n)
{
	const char *force = getenv("MOAT_COW_SCRATCH");
	const char *tmp = scratch_parent();
	char path[PATH_MAX];
	int m;

	if (!force || strcmp(force, "host")) {
		m = new_tmpfs("50%", "0700", MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
		if (m >= 0 && tmpfs_has_user_xattr(m))
			return m;
		if (m >= 0)
			close(m);
		if (force && !strcmp(force, "memory"))
			fail(-EOPNOTSUPP, "gofer: MOAT_COW_SCRATCH=memory: tmpfs has no user xattrs here");
	}
	snprintf(path, sizeof path, "%s/moat-cow.XXXXXX", tmp);
	if (!mkdtemp(path))
		failp("gofer: scratch directory in %s", tmp);
	/* never where the guest writes: in an rw bind's source, the guest
	 * (rootless, the caller's uid) could rename or replace the layers
	 * while they are mounted (red team 64) */
	for (size_t i = 0; i < n; i++)
		if (ex[i].kind == GOFER_EXPORT_DIR && ex[i].writable && !ex[i].cow && ex[i].host_path &&
		    moat_paths_overlap(path, ex[i].host_path)) {
			rmdir(path);
			fail(-EINVAL, "gofer: the copy-on-write scratch directory (in %s) and the rw "
			     "bind of %s overlap: set TMPDIR elsewhere", tmp, ex[i].host_path);
		}
	*strrchr(path, '/') = '\0';
	start_reaper(path, path + strlen(path) + 1);
	path[strlen(path)] = '/';
	m = open_tree(AT_FDCWD, path, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
	if (m < 0)
		failp("gofer: %s", path);
	return m;
}

/* "etc", "usr_local": the persistent layer's name for a host path */
static void persist_key(const char *host, char *out, size_t len)
{
	size_t o = 0;

	for (const char *p = host; *p && o + 1 < len; p++)
		if (*p != '/' || (o && out[o - 1] != '_' && p[1]))
			out[o++] = *p == '/' ? '_' : *p;
	if (!o)
		out[o++] = '_';
	out[o] = 0;
}

/* The upper/work parent of cow export i, in the pre-pivot tree. */
static void cow_dirs(const struct gofer_export *e, size_t i, char *up, char *work, size_t len)
{
	char key[256], base[512];

	if (e->cow_persist) {
		persist_key(e->host_path, key, sizeof key);
		snprintf(base, sizeof base, "/.ovl/%s", key);
		snprintf(up, len, "%s/upper", base);
		snprintf(work, len, "%s/work", base);
	} else {
		snprintf(base, sizeof base, "/.cow/%zu", i);
		snprintf(up, len, "%s/u", base);
		snprintf(work, len, "%s/w", base);
	}
	if ((mkdir(base, 0700) < 0 && errno != EEXIST) ||
	    (mkdir(up, 0755) < 0 && errno != EEXIST) ||
	    (mkdir(work, 0700) < 0 && errno != EEXIST))
		failp("gofer: %s: upper layer", e->host_path);
}

/* Hidden names of cow export i its overlay hides itself (gofer_root). */
static uint8_t layer_hides[GOFER_MAX_EXPORTS][GOFER_LAYER_HIDES_MAX / 8];

struct mirrored {
	char rel[PATH_MAX];
	struct timespec t[2];
};

/* The upper-layer directory the last walk of hide_one ended in (dir, len
 * bytes of the hidden name before its last '/'): the parent of the next
 * names beneath it (/etc/ssh's host keys), which then cost one mknodat. */
struct hide_parent {
	char dir[PATH_MAX];
	size_t len;
	int ufd;
};

/* Make hidden name h absent in the overlay of lower lfd and upper ufd
 * (upper-layer directories, before the overlay is mounted): 0, or -1 when
 * it stays refused by name. Walking h's components: an entry the upper
 * layer has already (a whiteout, a non-directory: the guest's own in a
 * persistent layer) hides the lower one, and so does an opaque directory
 * at the end; a directory continues the walk. Where the upper layer has
 * nothing: the last component, or one the lower layer lacks (a tree the
 * host makes later stays hidden), gets a whiteout (a 0/0 character
 * device, which overlayfs shows as absent: what its own unlink of a lower
 * file leaves, made without reading it); a lower directory on the way is
 * copied up as overlayfs does it (mode, owner and, after, times: mirrored,
 * fixed by the caller once its whiteouts are in); a lower non-directory
 * on the way (a symlink) has nothing of h beneath it. The lower layer is
 * only stat'ed, never read. */
static int hide_one(int lfd, int ufd, const char *h, struct mirrored *mir, size_t *nmir,
		    size_t maxmir, struct hide_parent *hp)
{
	char rel[PATH_MAX];
	int lcur = -1, ucur = -1, r = -1, at_last = 0;
	const char *leaf = strrchr(h, '/');
	size_t dlen = leaf ? (size_t)(leaf - h) : 0;

	if (strlen(h) >= sizeof rel)
		return -1;
	/* the common case first: the upper directory that holds h's last
	 * component (the layer's root, or the one the walk below opened for
	 * the name before, h's parent too) has nothing of that name. The walk
	 * would find the same (its fstatat ENOENT) and make the same whiteout;
	 * anything else (EEXIST) takes the walk. */
	leaf = leaf ? leaf + 1 : h;
	int pfd = !dlen ? ufd : hp->ufd >= 0 && hp->len == dlen && !memcmp(hp->dir, h, dlen) ?
		  hp->ufd : -1;
	if (pfd >= 0 && *leaf && mknodat(pfd, leaf, S_IFCHR | 0, makedev(0, 0)) == 0)
		return 0;
	strcpy(rel, h);
	lcur = fcntl(lfd, F_DUPFD_CLOEXEC, 0);
	ucur = fcntl(ufd, F_DUPFD_CLOEXEC, 0);
	if (lcur < 0)
		goto out;
	for (char *comp = rel; ucur >= 0;) {
		char *slash = strchr(comp, '/');
		int last = !slash;
		struct stat ust, lst;

		if (slash)
			*slash = '\0';
		at_last = last;
		if (fstatat(ucur, comp, &ust, AT_SYMLINK_NOFOLLOW) == 0) {
			if (!S_ISDIR(ust.st_mode)) {
				r = 0;
				break;
			}
			if (last) {
				/* only an opaque directory hides the lower one */
				char v[2] = "";
				int d = openat(ucur, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
					       O_CLOEXEC);
				r = d >= 0 && fgetxattr(d, "user.overlay.opaque", v, 1) == 1 &&
				    v[0] == 'y' ? 0 : -1;
				if (d >= 0)
					close(d);
				break;
			}
		} else if (errno != ENOENT) {
			break;
		} else if (last || lcur < 0 || fstatat(lcur, comp, &lst, AT_SYMLINK_NOFOLLOW) < 0) {
			if (lcur < 0)
				errno = ENOENT;
			if (!last && errno != ENOENT)
				break;
			r = mknodat(ucur, comp, S_IFCHR | 0, makedev(0, 0)) == 0 ? 0 : -1;
			break;
		} else if (!S_ISDIR(lst.st_mode)) {
			r = 0;
			break;
		} else {
			if (*nmir == maxmir || mkdirat(ucur, comp, 0700) < 0)
				break;
			if (fchownat(ucur, comp, lst.st_uid, lst.st_gid, AT_SYMLINK_NOFOLLOW) < 0 ||
			    fchmodat(ucur, comp, lst.st_mode & 07777, 0) < 0) {
				/* rootless: a root-owned directory cannot be
				 * given its owner; left to the by-name refusal */
				unlinkat(ucur, comp, AT_REMOVEDIR);
				break;
			}
			struct mirrored *m = &mir[(*nmir)++];
			snprintf(m->rel, sizeof m->rel, "%.*s", (int)(comp + strlen(comp) - rel), h);
			m->t[0] = lst.st_atim;
			m->t[1] = lst.st_mtim;
		}
		/* (a lower layer without this directory: -1, the rest is
		 * absent there, whited out for what the host makes later) */
		int nl = lcur < 0 ? -1 : openat(lcur, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW |
						O_CLOEXEC);
		int nu = openat(ucur, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (lcur >= 0)
			close(lcur);
		close(ucur);
		lcur = nl;
		ucur = nu;
		comp = slash + 1;
	}
out:
	if (at_last && dlen && ucur >= 0 && dlen < sizeof hp->dir) {
		/* h's parent in the upper layer, reached without following a
		 * symlink: kept for the next name beneath it */
		if (hp->ufd >= 0)
			close(hp->ufd);
		hp->ufd = ucur;
		ucur = -1;
		memcpy(hp->dir, h, dlen);
		hp->len = dlen;
	}
	if (lcur >= 0)
		close(lcur);
	if (ucur >= 0)
		close(ucur);
	return r;
}

/* Whiteouts for cow export e's hidden names in its upper layer up (lower
 * low), before the overlay is mounted; layer_hides[i] says which. */
static void hide_in_upper(const struct gofer_export *e, size_t i, const char *low,
			  const char *up)
{
	struct mirrored mir[32];
	static struct hide_parent hp; /* (PATH_MAX: off the stack) */
	size_t nmir = 0;
	int lfd, ufd;

	hp.ufd = -1;
	hp.len = 0;

	memset(layer_hides[i], 0, sizeof layer_hides[i]);
	if (!e->hidden || moat_dev_knob("MOAT_TEST_HIDE_BY_NAME"))
		return;
	lfd = open(low, O_PATH | O_DIRECTORY | O_CLOEXEC);
	ufd = open(up, O_PATH | O_DIRECTORY | O_CLOEXEC);
	for (size_t k = 0; lfd >= 0 && ufd >= 0 && e->hidden[k] &&
	     k < GOFER_LAYER_HIDES_MAX; k++) {
		if (hide_one(lfd, ufd, e->hidden[k], mir, &nmir, ARRAY_SIZE(mir), &hp) == 0)
			layer_hides[i][k / 8] |= (uint8_t)(1u << (k % 8));
		else
			dbg("gofer: %s/%s: hidden by name", e->host_path, e->hidden[k]);
	}
	/* the copied-up directories' times, now that their entries are in
	 * (deepest first: a child's utimensat leaves its parent's mtime) */
	for (size_t k = nmir; k-- > 0 && ufd >= 0;)
		(void)!utimensat(ufd, mir[k].rel, mir[k].t, AT_SYMLINK_NOFOLLOW);
	if (hp.ufd >= 0)
		close(hp.ufd);
	if (lfd >= 0)
		close(lfd);
	if (ufd >= 0)
		close(ufd);
}

/* Mount the overlay of cow export i at slot: lower /.low<i>. 0, or
 * -EINVAL when overlayfs refuses the lower layer (locked submounts, see
 * pre_clone_cow); any other failure ends the start-up. */
static int mount_cow(const struct gofer_export *e, size_t i, const char *slot)
{
	char low[48], up[PATH_MAX], work[PATH_MAX];
	int fs, m;

	snprintf(low, sizeof low, "/.low%zu", i);
	cow_dirs(e, i, up, work, sizeof up);
	/* the merged root is the upper directory: it shows the source's
	 * mode (no set-id bits) and owner, as every other merged directory
	 * does its lower one's; before red-team round 24 every cow mount's
	 * root was root's (the gofer's) 0755 whatever the source: a 0700
	 * directory open to every guest user, and --user 1000 could not
	 * create at the top of its own directory (where the owner cannot be
	 * given: the gofer's own, as before) */
	struct stat lst;
	if (stat(low, &lst) == 0) {
		(void)!chown(up, lst.st_uid, lst.st_gid);
		(void)!chmod(up, lst.st_mode & 01777);
	}
	hide_in_upper(e, i, low, up);
	fs = fsopen("overlay", FSOPEN_CLOEXEC);
	if (fs < 0)
		failp("gofer: %s: overlayfs", e->host_path);
	if (fsconfig(fs, FSCONFIG_SET_STRING, "lowerdir", low, 0) < 0 ||
	    fsconfig(fs, FSCONFIG_SET_STRING, "upperdir", up, 0) < 0 ||
	    fsconfig(fs, FSCONFIG_SET_STRING, "workdir", work, 0) < 0 ||
	    /* user.overlay.* xattrs (a user namespace may not set trusted.*);
	     * it implies redirect_dir=nofollow and no metacopy: a merged
	     * directory's rename is EXDEV (mv copies), copy-up copies data */
	    fsconfig(fs, FSCONFIG_SET_FLAG, "userxattr", NULL, 0) < 0)
		failp("gofer: %s: overlayfs (needs Linux >= 5.11; upper layer needs user xattrs)",
		      e->host_path);
	/* xino: the layers' inode numbers in one space (a layer's number in
	 * the high bits), so a lower directory's st_ino is its own number,
	 * not one the overlay makes up per inode, and a listing's d_ino is
	 * the same number without a look-up of each name (the sentry's
	 * cow_dir_ino, sys_dir.c, looked each directory up: ~4 µs a cold
	 * one, issue 6 pydir39). A kernel without it keeps the old numbers */
	(void)fsconfig(fs, FSCONFIG_SET_STRING, "xino", "on", 0);
	if (fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0) {
		if (errno == EINVAL) {
			close(fs);
			/* served read-only from the lower layer: by name */
			memset(layer_hides[i], 0, sizeof layer_hides[i]);
			return -EINVAL;
		}
		failp("gofer: %s: overlayfs (needs Linux >= 5.11; upper layer needs user xattrs)",
		      e->host_path);
	}
	m = fsmount(fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
	close(fs);
	if (m < 0 || move_mount(m, "", AT_FDCWD, slot, MOVE_MOUNT_F_EMPTY_PATH) < 0)
		failp("gofer: %s: mount the overlay", e->host_path);
	close(m);
	return 0;
}

/* The lower layer of the root overlay's "/": an empty tmpfs holding only the
 * directories the view needs there (mount points' ancestors, e.g. "home"
 * for /home/user), never anything of the host's root. A detached mount. */
static int skeleton_lower(const char *const *dirs)
{
	int m = new_tmpfs("1m", "0755", MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);

	if (m < 0)
		failp("gofer: the root layer");
	for (const char *const *d = dirs; *d; d++)
		if (mkdirat(m, *d, 0755) < 0 && errno != EEXIST)
			failp("gofer: the root layer: %s", *d);
	return m;
}

/* Cow sources cloned before we enter our user namespace (pre_clone_cow). */
static int pre_tree[GOFER_MAX_EXPORTS];

/* The object the gofer opened by name is the one moat checked for overlaps
 * and locked (dev, ino; 0: none checked): a host process that swaps a
 * directory for a symlink between moat's check and this open (the names
 * are resolved twice) would have given the guest its own layer or export
 * through an rw bind (red team 71). Fails the start. */
static void checked_object(int fd, unsigned long long dev, unsigned long long ino, const char *opt,
			   const char *path)
{
	struct stat st;
	if (!ino)
		return;
	if (fstat(fd, &st) < 0)
		failp("gofer: %s %s", opt, path);
	if ((unsigned long long)st.st_dev != dev || (unsigned long long)st.st_ino != ino)
		fail(-ESTALE, "gofer: %s %s: replaced since moat checked it", opt, path);
}

/* A cow source's submounts (Docker's bind of /etc/resolv.conf, hosts,
 * hostname) become locked when our new user namespace copies the mount
 * table, and overlayfs refuses a lower layer with locked children ("failed
 * to clone lowerpath", EINVAL). Cloned here first, with the caller's
 * privilege in the caller's namespace, the tree is a detached one nothing
 * locks; we attach it after unshare. Unprivileged callers cannot clone
 * before the unshare: their cow sources must have no submounts. */
static void pre_clone_cow(const struct gofer_export *ex, size_t n)
{
	for (size_t i = 0; i < GOFER_MAX_EXPORTS; i++)
		pre_tree[i] = -1;
	for (size_t i = 0; i < n; i++)
		if (ex[i].kind == GOFER_EXPORT_DIR && ex[i].cow && !ex[i].skeleton)
			pre_tree[i] = open_tree(AT_FDCWD, ex[i].host_path, OPEN_TREE_CLONE |
						OPEN_TREE_CLOEXEC | AT_RECURSIVE);
}

/* The caller's claim (gofer_keep_fd): the file, and the detached read-only
 * tree it was opened through, which build_root attaches in our root */
static int keep_fd = -1, keep_tree = -1;

/* Read-only clones of the cow exports' overlays, for the sentry (ready). */
static int cow_roots[GOFER_MAX_EXPORTS];

static void build_root(const struct gofer_export *ex, size_t n,
		       struct child_export *ce)
{
	char slot[32];
	int base, fd, scratch = -1, persist = -1, ncow = 0;
	int keys[GOFER_MAX_EXPORTS]; /* --overlay DIR: this run's DIR/<key>, each a mount of its own */
	char key[256];

	for (size_t i = 0; i < GOFER_MAX_EXPORTS; i++)
		keys[i] = -1;

	/* host paths first: /tmp is covered by our root below */
	if (cow_cfg.export_dir) {
		export_fd = open(cow_cfg.export_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (export_fd < 0)
			failp("gofer: --export %s", cow_cfg.export_dir);
		checked_object(export_fd, cow_cfg.export_dev, cow_cfg.export_ino, "--export",
			       cow_cfg.export_dir);
	}
	for (size_t i = 0; i < n; i++) {
		if (ex[i].kind != GOFER_EXPORT_DIR || !ex[i].cow)
			continue;
		ncow++;
		if (ex[i].cow_persist && cow_cfg.disk_bytes && !cow_cfg.disk_implicit)
			fail(-EINVAL, "gofer: --disk cannot cap --overlay DIR (a host directory)");
		if (ex[i].cow_persist && persist < 0) {
			if (!cow_cfg.upper_dir)
				fail(-EINVAL, "gofer: no --overlay DIR");
			if (mkdir(cow_cfg.upper_dir, 0700) < 0 && errno != EEXIST)
				failp("gofer: --overlay %s", cow_cfg.upper_dir);
			persist = open(cow_cfg.upper_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
			if (persist < 0)
				failp("gofer: --overlay %s", cow_cfg.upper_dir);
			checked_object(persist, cow_cfg.upper_dev, cow_cfg.upper_ino, "--overlay",
				       cow_cfg.upper_dir);
		}
		if (ex[i].cow_persist) {
			/* only this run's keys of DIR are attached (at
			 * /.ovl/<key>), never DIR itself: red team 45, from an
			 * upper-layer fd ".." reached DIR's every key */
			persist_key(ex[i].host_path, key, sizeof key);
			if (mkdirat(persist, key, 0700) < 0 && errno != EEXIST)
				failp("gofer: --overlay %s/%s", cow_cfg.upper_dir, key);
			keys[i] = open_tree(persist, key, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_SYMLINK_NOFOLLOW);
			if (keys[i] < 0)
				failp("gofer: --overlay %s/%s", cow_cfg.upper_dir, key);
		} else if (!ex[i].cow_persist && scratch < 0 && cow_cfg.disk_bytes &&
			   (!cow_cfg.disk_implicit || tmpfs_keeps_user_xattrs())) {
			scratch = -2;   /* in the --disk pool, once it exists */
		} else if (!ex[i].cow_persist && scratch < 0) {
			scratch = cow_scratch(ex, n);
		}
	}

	gmark("scratch chosen");
	/* 3. clone the sources while the host is visible */
	for (size_t i = 0; i < n; i++) {
		struct stat st;

		ce[i].tree = -1;
		ce[i].is_file = 0;
		for (size_t k = 0; k < ARRAY_SIZE(dev_nodes); k++)
			ce[i].dev[k] = -1;
		if (ex[i].kind == GOFER_EXPORT_DIR && ex[i].skeleton) {
			/* its lower layer is made below (skeleton_lower) */
		} else if (ex[i].kind == GOFER_EXPORT_DIR) {
			ce[i].tree = pre_tree[i] >= 0 ? pre_tree[i] :
				     open_tree(AT_FDCWD, ex[i].host_path, OPEN_TREE_CLONE |
					       OPEN_TREE_CLOEXEC | AT_RECURSIVE);
			pre_tree[i] = -1;
			if (ce[i].tree < 0 || fstat(ce[i].tree, &st) < 0)
				failp("gofer: %s", ex[i].host_path);
			checked_object(ce[i].tree, ex[i].chk_dev, ex[i].chk_ino, "--bind", ex[i].host_path);
			if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode))
				fail(-EINVAL, "gofer: %s: not a directory or regular file",
				     ex[i].host_path);
			ce[i].is_file = S_ISREG(st.st_mode);
		} else if (ex[i].kind == GOFER_EXPORT_DEV) {
			pty_share_read();
			for (size_t k = 0; k < ARRAY_SIZE(dev_nodes); k++) {
				char p[32];
				snprintf(p, sizeof p, "/dev/%s", dev_nodes[k]);
				ce[i].dev[k] = open_tree(AT_FDCWD, p, OPEN_TREE_CLONE |
							 OPEN_TREE_CLOEXEC);
				if (ce[i].dev[k] < 0 && k == 0)
					failp("gofer: %s", p);
			}
		}
	}

	gmark("sources cloned");
	/* 4. the new root: a small tmpfs attached over /tmp (private to us) */
	base = new_tmpfs("64k", "0755", MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
			 MOUNT_ATTR_NOEXEC);
	if (base < 0)
		failp("gofer: tmpfs");
	if (move_mount(base, "", AT_FDCWD, "/tmp", MOVE_MOUNT_F_EMPTY_PATH) < 0)
		failp("gofer: mount root on /tmp");
	close(base);
	/* 5. pivot_root(".", ".") into it now (runc's way: the old root is
	 * stacked on the new one, which absolute paths still name) and
	 * detach the old root: the exports are made beneath the new root, the
	 * host out of reach. (A thread doing the detach beside the exports'
	 * set-up, as the sentry's, measured no better: under load its RCU
	 * grace period outlasted the set-up; MOAT_DEBUG marks, 200 rounds.) */
	if (chdir("/tmp") < 0)
		failp("gofer: chdir");
	if (syscall(SYS_pivot_root, ".", ".") < 0)
		failp("gofer: pivot_root");
	if (umount2(".", MNT_DETACH) < 0)
		failp("gofer: detach old root");
	gmark("pivoted, old root detached");
	fd = open("/.empty", O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0);
	if (fd < 0)
		failp("gofer: /.empty");
	close(fd);
	if (cow_cfg.disk_bytes) {
		disk_pool_mount();
		if (scratch == -2) {
			scratch = disk_pool_dir("cow", 0700);
			if (!tmpfs_has_user_xattr(scratch))
				fail(-EOPNOTSUPP, "gofer: --disk with a cow mount or --overlay memory needs "
				     "a tmpfs that keeps user xattrs (Linux >= 6.6)");
		}
	}
	if (scratch >= 0 && (mkdir("/.cow", 0700) < 0 ||
			     move_mount(scratch, "", AT_FDCWD, "/.cow", MOVE_MOUNT_F_EMPTY_PATH) < 0))
		failp("gofer: attach the scratch layer");
	if (persist >= 0 && mkdir("/.ovl", 0700) < 0)
		failp("gofer: attach --overlay %s", cow_cfg.upper_dir);
	for (size_t i = 0; i < n; i++) {
		char at[300];
		if (keys[i] < 0)
			continue;
		persist_key(ex[i].host_path, key, sizeof key);
		snprintf(at, sizeof at, "/.ovl/%s", key);
		if ((mkdir(at, 0700) < 0 && errno != EEXIST) ||
		    move_mount(keys[i], "", AT_FDCWD, at, MOVE_MOUNT_F_EMPTY_PATH) < 0)
			failp("gofer: attach --overlay %s/%s", cow_cfg.upper_dir, key);
		close(keys[i]);
	}
	if (scratch >= 0)
		close(scratch);
	if (persist >= 0)
		close(persist);
	(void)ncow;
	gmark("base root, scratch attached");

	for (size_t i = 0; i < n; i++) {
		snprintf(slot, sizeof slot, "/%zu", i);
		if (ce[i].is_file)
			fd = mknod(slot, S_IFREG | 0, 0);
		else
			fd = mkdir(slot, 0755);
		if (fd < 0)
			failp("gofer: %s", slot);

		switch (ex[i].kind) {
		case GOFER_EXPORT_DIR:
			if (ex[i].cow && !ce[i].is_file) {
				char low[48];
				snprintf(low, sizeof low, "/.low%zu", i);
				if (ex[i].skeleton)
					ce[i].tree = skeleton_lower(ex[i].skeleton);
				if (mkdir(low, 0755) < 0 ||
				    move_mount(ce[i].tree, "", AT_FDCWD, low,
					       MOVE_MOUNT_F_EMPTY_PATH) < 0)
					failp("gofer: %s: attach the lower layer", ex[i].host_path);
				close(ce[i].tree);
				/* masked in the lower clone too (overlayfs does not
				 * see mounts in a layer: the guest is kept from them
				 * by name; this keeps the export's reads off them) */
				if (ex[i].hidden) {
					int lfd = open(low, O_PATH | O_DIRECTORY | O_CLOEXEC);
					if (lfd < 0)
						failp("gofer: %s", low);
					for (const char *const *h = ex[i].hidden; *h; h++)
						over_mount_hidden(lfd, *h, ex[i].host_path);
					close(lfd);
				}
				if (mattr(AT_FDCWD, low, AT_RECURSIVE, MOUNT_ATTR_RDONLY |
					  MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV) < 0)
					failp("gofer: %s: read-only lower layer", ex[i].host_path);
				if (mount_cow(&ex[i], i, slot) == 0)
					break;
				/* overlayfs refused the lower layer (submounts
				 * our user namespace locked: rootless, in a
				 * container binding /etc/resolv.conf). A cow
				 * bind fails; the root overlay serves this
				 * directory read-only instead (as --overlay
				 * none: writes are EROFS) */
				if (!ex[i].cow_name || strcmp(ex[i].cow_name, "root"))
					fail(-EINVAL, "gofer: %s: overlayfs refuses it as a lower layer "
					     "(it has submounts)", ex[i].host_path);
				dbg("gofer: %s: no overlay (submounts): read-only", ex[i].host_path);
				fd = open_tree(AT_FDCWD, low, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC |
					       AT_RECURSIVE);
				if (fd < 0 || move_mount(fd, "", AT_FDCWD, slot,
							 MOVE_MOUNT_F_EMPTY_PATH) < 0)
					failp("gofer: %s: attach", ex[i].host_path);
				close(fd);
				break;
			}
			if (ex[i].cow)
				fail(-EINVAL, "gofer: %s: cow needs a directory", ex[i].host_path);
			if (move_mount(ce[i].tree, "", AT_FDCWD, slot,
				       MOVE_MOUNT_F_EMPTY_PATH) < 0)
				failp("gofer: %s: attach", ex[i].host_path);
			close(ce[i].tree);
			break;
		case GOFER_EXPORT_TMPFS:
		{
			char mode[16], size[32], inodes[32];
			unsigned long long bytes = ex[i].size ? ex[i].size : TMPFS_DEFAULT_BYTES;
			snprintf(mode, sizeof mode, "%o", ex[i].mode ? ex[i].mode & 07777 : 0755);
			snprintf(size, sizeof size, "%llu", bytes);
			tmpfs_inodes_for(bytes, inodes, sizeof inodes);
			if (cow_cfg.disk_bytes && !ex[i].size) {
				char name[32];
				snprintf(name, sizeof name, "e%zu", i);
				fd = disk_pool_dir(name, ex[i].mode ? ex[i].mode & 07777 : 0755);
			} else {
				fd = new_tmpfs_inodes(size, inodes, mode,
						      MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
			}
		}
			if (fd < 0 || move_mount(fd, "", AT_FDCWD, slot,
						 MOVE_MOUNT_F_EMPTY_PATH) < 0)
				failp("gofer: tmpfs export");
			close(fd);
			/* best effort: an id the gofer's namespace does not map
			 * leaves the root's owner as it is */
			if (ex[i].owner_set && chown(slot, ex[i].owner_uid, ex[i].owner_gid) < 0)
				errno = 0;
			break;
		case GOFER_EXPORT_DEV:
			fd = new_tmpfs("4k", "0755", MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC);
			if (fd < 0 || move_mount(fd, "", AT_FDCWD, slot,
						 MOVE_MOUNT_F_EMPTY_PATH) < 0)
				failp("gofer: dev export");
			close(fd);
			for (size_t k = 0; k < ARRAY_SIZE(dev_nodes); k++) {
				char p[48];
				if (ce[i].dev[k] < 0)
					continue;
				snprintf(p, sizeof p, "%s/%s", slot, dev_nodes[k]);
				if (mknod(p, S_IFREG | 0, 0) < 0 ||
				    move_mount(ce[i].dev[k], "", AT_FDCWD, p,
					       MOVE_MOUNT_F_EMPTY_PATH) < 0)
					failp("gofer: /dev/%s: attach", dev_nodes[k]);
				close(ce[i].dev[k]);
			}
			fd = new_devpts(&ex[i]);
			if (fd >= 0) {
				char p[48];
				snprintf(p, sizeof p, "%s/pts", slot);
				if (mkdir(p, 0755) < 0 ||
				    move_mount(fd, "", AT_FDCWD, p, MOVE_MOUNT_F_EMPTY_PATH) < 0)
					failp("gofer: /dev/pts: attach");
				close(fd);
			}
			break;
		default:
			fail(-EINVAL, "gofer: export %zu: bad kind", i);
		}

		if (ex[i].hidden && !ce[i].is_file) {
			int efd = open(slot, O_PATH | O_DIRECTORY | O_CLOEXEC);
			if (efd < 0)
				failp("gofer: %s", slot);
			/* (not the names the overlay hides itself: in a
			 * persistent layer the guest's own of an earlier run) */
			for (size_t k = 0; ex[i].hidden[k]; k++)
				if (k >= GOFER_LAYER_HIDES_MAX ||
				    !((layer_hides[i][k / 8] >> (k % 8)) & 1))
					over_mount_hidden(efd, ex[i].hidden[k], ex[i].host_path ?
							  ex[i].host_path : "tmpfs");
			close(efd);
		}

		uint64_t attrs = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;
		if (ex[i].kind == GOFER_EXPORT_DEV)
			attrs = MOUNT_ATTR_NOSUID | MOUNT_ATTR_RDONLY;
		else if (ex[i].kind == GOFER_EXPORT_DIR && !ex[i].writable && !ex[i].cow)
			attrs |= MOUNT_ATTR_RDONLY;
		if (mattr(AT_FDCWD, slot, AT_RECURSIVE, attrs) < 0)
			failp("gofer: %s: mount attributes", slot);
		cow_roots[i] = -1;
		if (ex[i].kind == GOFER_EXPORT_DIR && ex[i].cow && !ce[i].is_file) {
			/* the sentry's direct read-only opens in the overlay: a
			 * detached recursive clone (the hidden names' masks come
			 * with it), read-only, so nothing opened beneath it
			 * can write the upper layer */
			cow_roots[i] = open_tree(AT_FDCWD, slot, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC |
						 AT_RECURSIVE);
			if (cow_roots[i] < 0 ||
			    mattr(cow_roots[i], "", AT_EMPTY_PATH | AT_RECURSIVE, MOUNT_ATTR_RDONLY |
				  MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV) < 0)
				failp("gofer: %s: read-only clone of the overlay", ex[i].host_path);
		}
		gmark("export %zu (%s%s) attached", i, ex[i].host_path ? ex[i].host_path :
		      ex[i].kind == GOFER_EXPORT_DEV ? "dev" : "tmpfs", ex[i].cow ? ", cow" : "");
	}

	/* the uid claim's read-only tree (sentry/privilege.c priv_claim,
	 * red team 90): attached at "/.claim", beneath our mode-0 root and
	 * never in Landlock's rules, only so that the last close of the
	 * tree's fd costs nothing; a detached tree's last close unmounts it,
	 * an RCU grace period: 1.5-30 ms on the start-up's path, measured */
	if (keep_tree >= 0) {
		if (mkdir("/.claim", 0) < 0 ||
		    move_mount(keep_tree, "", AT_FDCWD, "/.claim", MOVE_MOUNT_F_EMPTY_PATH) < 0)
			failp("gofer: attach the uid claim's tree");
		close(keep_tree);
		keep_tree = -1;
	}
	if (chdir("/") < 0)
		failp("gofer: chdir /");
	/* our "/" is mode 0: we pass it by DAC override (our namespace's
	 * root owns it), nobody else does. Red team 45: a guest task holds
	 * fds of our exports (ADDFD), and through its fd/N magic link
	 * "PID/fd/N/.." a compromised sentry (rootless the same uid as the
	 * owner) listed and read from here every export's layers, the cow
	 * scratch and the --overlay DIR */
	if (chmod("/", 0) < 0)
		failp("gofer: chmod /");
	if (mattr(AT_FDCWD, "/", 0, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID |
		  MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC) < 0)
		failp("gofer: read-only root");
}

/* 6. Landlock. Returns the ABI used (0: not available). */
static int landlock(const struct gofer_export *ex, const struct gofer_srv *srv)
{
	const uint64_t rd = LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR;
	const uint64_t file_only = LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE |
		LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_TRUNCATE |
		LANDLOCK_ACCESS_FS_IOCTL_DEV;
	uint64_t all, rw;
	struct ll_ruleset_attr ra = { 0 };
	size_t rasz = sizeof ra.handled_access_fs;
	int abi, rs;

	abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
	if (abi < 1)
		return 0;
	all = (1ULL << 13) - 1;                 /* ABI 1: EXECUTE .. MAKE_SYM */
	if (abi >= 2)
		all |= LANDLOCK_ACCESS_FS_REFER;
	if (abi >= 3)
		all |= LANDLOCK_ACCESS_FS_TRUNCATE;
	if (abi >= 5)
		all |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
	ra.handled_access_fs = all;
	if (abi >= 4) {
		ra.handled_access_net = LL_NET_BIND_TCP | LL_NET_CONNECT_TCP;
		rasz = offsetof(struct ll_ruleset_attr, scoped);
	}
	if (abi >= 6) {
		ra.scoped = LL_SCOPE_ABSTRACT_UNIX_SOCKET | LL_SCOPE_SIGNAL;
		rasz = sizeof ra;
	}
	rs = syscall(SYS_landlock_create_ruleset, &ra, rasz, 0);
	if (rs < 0)
		failp("gofer: landlock_create_ruleset");

	rw = all & ~(LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_MAKE_CHAR |
		     LANDLOCK_ACCESS_FS_MAKE_BLOCK | LANDLOCK_ACCESS_FS_IOCTL_DEV);
	for (size_t i = 0; i < srv->n; i++) {
		const struct gofer_srv_export *e = &srv->exp[i];
		struct landlock_path_beneath_attr pb = { .parent_fd = e->rootfd };

		if (e->kind == GOFER_EXPORT_DEV)
			pb.allowed_access = rd | LANDLOCK_ACCESS_FS_WRITE_FILE |
					    LANDLOCK_ACCESS_FS_IOCTL_DEV;
		else if (e->writable)
			pb.allowed_access = rw;
		else
			pb.allowed_access = rd;
		if (e->is_file)
			pb.allowed_access &= file_only;
		pb.allowed_access &= all;
		if (syscall(SYS_landlock_add_rule, rs, LANDLOCK_RULE_PATH_BENEATH, &pb, 0) < 0)
			failp("gofer: landlock_add_rule (export %zu)", i);
		/* the export reads both layers of a cow export; a directory
		 * copy-up by hand (rootless, server.c copy_up_dirs) makes
		 * directories in the upper one, and removes them again */
		for (int k = 0; e->cow && k < 2; k++) {
			struct landlock_path_beneath_attr lb = {
				.parent_fd = k ? e->upperfd : e->lowerfd,
				.allowed_access = rd,
			};
			if (k && srv->dshrink_fd >= 0)
				lb.allowed_access |= LANDLOCK_ACCESS_FS_MAKE_DIR |
						     LANDLOCK_ACCESS_FS_REMOVE_DIR;
			if (syscall(SYS_landlock_add_rule, rs, LANDLOCK_RULE_PATH_BENEATH, &lb, 0) < 0)
				failp("gofer: landlock_add_rule (layers of %zu)", i);
		}
	}
	if (srv->exportfd >= 0) {       /* --export DIR: make and write files there */
		struct landlock_path_beneath_attr xb = {
			.parent_fd = srv->exportfd,
			.allowed_access = rw & ~(LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO |
						 LANDLOCK_ACCESS_FS_MAKE_SYM | LANDLOCK_ACCESS_FS_REFER),
		};
		if (syscall(SYS_landlock_add_rule, rs, LANDLOCK_RULE_PATH_BENEATH, &xb, 0) < 0)
			failp("gofer: landlock_add_rule (--export)");
	}
	if (syscall(SYS_landlock_restrict_self, rs, 0) < 0)
		failp("gofer: landlock_restrict_self");
	close(rs);
	(void)ex;
	return abi;
}

/* 7. seccomp allowlist (seccomp_rules.c): the program the build compiled
 * from it (gen_seccomp.c -> gofer_bpf.c); no_new_privs is set above. */
extern const unsigned short gofer_bpf_len;
extern const struct sock_filter gofer_bpf[];

static void seccomp_allowlist(void)
{
	struct sock_fprog prog = { .len = gofer_bpf_len, .filter = (struct sock_filter *)gofer_bpf };

	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0)
		failp("gofer: seccomp");
}

void gofer_join_cgroups(const int *fds, size_t n)
{
	njoin = n < GOFER_JOIN_MAX ? n : GOFER_JOIN_MAX;
	memcpy(join_fds, fds, njoin * sizeof *fds);
}

/* (child) into the sandbox's cgroups (gofer_join_cgroups), once the
 * scratch reaper is forked: 0 or the first -errno */
static int join_cgroups(void)
{
	char v[32];
	int n = snprintf(v, sizeof v, "%d", (int)getpid()), r = 0;

	for (size_t i = 0; i < njoin; i++)
		if (write(join_fds[i], v, (size_t)n) != n && !r)
			r = -errno;
	close_join_fds();
	return r;
}

/* (child) fds[] moved to 5 and up, out of the way of fds 0-4 */
static void fds_above_4(int *fds, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (fds[i] >= 0 && fds[i] < 5) {
			int nfd = fcntl(fds[i], F_DUPFD_CLOEXEC, 5);
			if (nfd < 0)
				failp("gofer: dup");
			close(fds[i]);
			fds[i] = nfd;
		}
}

/* Close every fd from lo up but those in keep[] (-1: none). */
static void close_except(unsigned lo, const int *keep, size_t nk)
{
	for (;;) {
		unsigned next = ~0U;
		for (size_t i = 0; i < nk; i++)
			if (keep[i] >= 0 && (unsigned)keep[i] >= lo && (unsigned)keep[i] < next)
				next = (unsigned)keep[i];
		if (next > lo)
			close_range(lo, next == ~0U ? ~0U : next - 1, 0);
		if (next == ~0U)
			break;
		lo = next + 1;
	}
}

void gofer_keep_fd(int fd, int tree)
{
	keep_fd = fd;
	keep_tree = tree;
}

static noreturn void child_main(const struct gofer_export *ex, size_t n, int sock,
				pid_t parent)
{
	static struct gofer_srv srv;
	struct child_export ce[GOFER_MAX_EXPORTS];
	struct gofer_hello ack;
	int fd;

	child_sock = sock;
	gmark("forked");
	/* 1. die with the parent; keep only the socket */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
		_exit(1);
	prctl(PR_SET_NAME, "moat-gofer");
	FILE *mw = fopen("/proc/sys/fs/inotify/max_user_watches", "re");
	if (mw) {
		if (fscanf(mw, "%ld", &max_watches) != 1 || max_watches < 0)
			max_watches = 8192;
		fclose(mw);
	}
	/* (its oom_score_adj: the parent's, gofer_start_begin) */
	/* the cow sources our parent cloned for us (pre_clone_cow): above
	 * the two fds we place next */
	fds_above_4(pre_tree, n);
	fds_above_4(join_fds, njoin); /* (and the cgroups we join once set up) */
	fds_above_4(&keep_tree, 1);   /* (and the claim's tree: build_root) */
	/* out of the caller's terminal: /dev/tty opened here is ENXIO, never
	 * the user's terminal, and its ^C is not ours (leave_caller_terminal:
	 * not setsid, whose new autogroup cost the start-up 0.05-4.7 ms) */
	int lr = leave_caller_terminal();
	if (lr < 0)
		fail(-lr, "gofer: leaving the caller's terminal: %s", strerror(-lr));
	fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (fd < 0)
		failp("gofer: /dev/null");
	/* (stderr kept for MOAT_DEBUG, and for the test hook's lines:
	 * MOAT_TEST_GOFER_CONFINEMENT, probe.c) */
	int probe = getenv("MOAT_TEST_GOFER_CONFINEMENT") != NULL;
	for (int i = 0; i < 3; i++)
		if (i != 2 || !(moat_debug || probe))
			dup2(fd, i);
	if (fd > 2)
		close(fd);
	if (sock > 3) {
		if (dup2(sock, 3) < 0)
			failp("gofer: dup2");
		close(sock);
		sock = child_sock = 3;
	}
	/* the caller's claim on a resource that must last as long as we do
	 * (gofer_keep_fd): fd 4, never used, closed when we exit */
	int keep[GOFER_MAX_EXPORTS + GOFER_JOIN_MAX + 1];
	memcpy(keep, pre_tree, n * sizeof *keep);
	memcpy(keep + n, join_fds, njoin * sizeof *keep);
	keep[n + njoin] = keep_tree;
	if (keep_fd >= 0 && (keep_fd == 4 || dup2(keep_fd, 4) == 4)) {
		fcntl(4, F_SETFD, FD_CLOEXEC);
		close_except(5, keep, n + njoin + 1);
	} else {
		close_except(4, keep, n + njoin + 1);
	}
	umask(0);

	/* 2. namespaces: we were born in ours (gofer_start_begin's clone);
	 * the parent writes our maps meanwhile (a full map can only be
	 * written from the parent namespace) and says when */
	gmark("prelude done");
	if (recv(sock, &ack, sizeof ack, 0) != sizeof ack)
		_exit(1);
	if (ack.err)
		fail(ack.err, "gofer: writing uid/gid maps: %s", strerror(-ack.err));
	gmark("maps written");
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		failp("gofer: make / private");
	gmark("/ private");

	build_root(ex, n, ce);
	/* the cow scratch reaper (build_root's cow_scratch) is forked: now
	 * into the sandbox's cgroups, without it */
	int join_err = join_cgroups();

	srv.n = n;
	srv.basefd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (srv.basefd < 0)
		failp("gofer: open /");
	for (size_t i = 0; i < n; i++) {
		struct gofer_srv_export *e = &srv.exp[i];
		size_t nh = 0;

		e->kind = ex[i].kind;
		e->writable = ex[i].kind == GOFER_EXPORT_TMPFS ||
			      (ex[i].kind == GOFER_EXPORT_DIR && (ex[i].writable || ex[i].cow));
		e->cow = ex[i].kind == GOFER_EXPORT_DIR && ex[i].cow;
		e->lowerfd = e->upperfd = -1;
		if (e->cow) {
			char low[48], up[PATH_MAX], key[256];
			snprintf(low, sizeof low, "/.low%zu", i);
			if (ex[i].cow_persist) {
				persist_key(ex[i].host_path, key, sizeof key);
				snprintf(up, sizeof up, "/.ovl/%s/upper", key);
			} else {
				snprintf(up, sizeof up, "/.cow/%zu/u", i);
			}
			e->lowerfd = open(low, O_PATH | O_DIRECTORY | O_CLOEXEC);
			e->upperfd = open(up, O_PATH | O_DIRECTORY | O_CLOEXEC);
			if (e->lowerfd < 0 || e->upperfd < 0)
				failp("gofer: export %zu layers", i);
			if (ex[i].cow_persist)
				rm_temps(e->upperfd, 0);
			e->host_path = ex[i].host_path;
			e->cow_name = ex[i].cow_name ? ex[i].cow_name : "cow";
			e->cow_prefix = ex[i].cow_prefix ? ex[i].cow_prefix : "";
			e->sealed = ex[i].sealed;
		}
		e->is_file = ce[i].is_file;
		/* never a symlink; no mount crossing, except into the device
		 * nodes bound over the DEV export's placeholders */
		e->resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
		if (e->kind != GOFER_EXPORT_DEV)
			e->resolve |= RESOLVE_NO_XDEV;
		snprintf(e->slot, sizeof e->slot, "%zu", i);
		e->rootfd = openat(srv.basefd, e->slot, O_PATH | O_CLOEXEC |
				   (e->is_file ? 0 : O_DIRECTORY));
		if (e->rootfd < 0)
			failp("gofer: export %zu root", i);
		for (const char *const *h = ex[i].hidden; h && *h; h++)
			nh++;
		e->nhidden = nh;
		e->hidden = nh ? xcalloc(nh, sizeof(char *)) : NULL;
		for (size_t k = 0; k < nh; k++)
			e->hidden[k] = xstrdup(ex[i].hidden[k]);
		/* the names the overlay hides itself are served as any
		 * absent name (the export's diff still leaves them out) */
		e->by_layer = nh ? xcalloc(nh, 1) : NULL;
		for (size_t k = 0; k < nh && k < GOFER_LAYER_HIDES_MAX; k++)
			e->by_layer[k] = (layer_hides[i][k / 8] >> (k % 8)) & 1;
	}

	srv.exportfd = export_fd;
	srv.max_bytes = cow_cfg.max_bytes;
	srv.max_files = cow_cfg.max_files;
	srv.reaper_fd = reaper_fd;
	srv.reaper_pid = reaper_pid;
	gmark("export fds open");
	start_dshrink(&srv);
	gmark("dshrink");

	{       /* MEMFDATTR's check (server.c h_memfdattr): a memfd's st_dev */
		struct stat mst;
		int mfd = memfd_create("moat-probe", MFD_CLOEXEC);

		if (mfd >= 0 && fstat(mfd, &mst) == 0)
			srv.memfd_dev = mst.st_dev;
		if (mfd >= 0)
			close(mfd);
	}

	/* 6, 7: confine ourselves */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		failp("gofer: no_new_privs");
	prctl(PR_SET_DUMPABLE, 0);
	stack_trim_note(); /* (before Landlock and the filter) */
	int abi = landlock(ex, &srv);
	dbg("gofer: landlock ABI %d", abi);
	gmark("landlocked");
	seccomp_allowlist();
	gmark("seccomp");
	if (probe) /* what a compromised gofer would try (probe.c) */
		gofer_confine_selftest(&srv, keep_fd >= 0 ? 4 : -1, parent);

	malloc_trim(0);
	stack_trim();
	struct gofer_hello ready = { .err = 0, .join_err = join_err };
	snprintf(ready.msg, sizeof ready.msg, "ready");
	for (size_t i = 0; i < n; i++)
		ready.nroots += cow_roots[i] >= 0;
	if (send(sock, &ready, sizeof ready, MSG_NOSIGNAL) < 0)
		ready_failed(&srv);
	for (size_t i = 0; i < n; i++) {
		struct gofer_root gr = { .export = (uint32_t)i };
		memcpy(gr.layer_hides, layer_hides[i], sizeof gr.layer_hides);
		if (cow_roots[i] < 0)
			continue;
		if (send_fds(sock, &gr, sizeof gr, &cow_roots[i], 1) < 0)
			ready_failed(&srv);
		close(cow_roots[i]); /* the sentry's now; we keep none */
		cow_roots[i] = -1;
	}
	gofer_serve(&srv, sock);
}

/* ---- parent ---- */

static int write_maps(pid_t pid)
{
	char path[64], map[1024];
	int r;

	if (geteuid() == 0) {
		r = moat_identity_map("/proc/self/uid_map", map, sizeof map);
		snprintf(path, sizeof path, "/proc/%d/uid_map", (int)pid);
		if (!r)
			r = write_file(path, map);
		if (!r)
			r = moat_identity_map("/proc/self/gid_map", map, sizeof map);
		snprintf(path, sizeof path, "/proc/%d/gid_map", (int)pid);
		if (!r)
			r = write_file(path, map);
		return r;
	}
	snprintf(path, sizeof path, "/proc/%d/setgroups", (int)pid);
	r = write_file(path, "deny");
	if (r && r != -ENOENT)
		return r;
	snprintf(path, sizeof path, "/proc/%d/uid_map", (int)pid);
	snprintf(map, sizeof map, "%u %u 1\n", geteuid(), geteuid());
	r = write_file(path, map);
	if (r)
		return r;
	snprintf(path, sizeof path, "/proc/%d/gid_map", (int)pid);
	snprintf(map, sizeof map, "%u %u 1\n", getegid(), getegid());
	return write_file(path, map);
}

static int check_exports(const struct gofer_export *ex, size_t n, char *err, size_t errlen)
{
	if (n > GOFER_MAX_EXPORTS) {
		snprintf(err, errlen, "gofer: too many exports (%zu > %d)", n, GOFER_MAX_EXPORTS);
		return -EINVAL;
	}
	for (size_t i = 0; i < n; i++) {
		switch (ex[i].kind) {
		case GOFER_EXPORT_DIR:
			if (!ex[i].host_path || ex[i].host_path[0] != '/') {
				snprintf(err, errlen, "gofer: export %zu: host path must be absolute", i);
				return -EINVAL;
			}
			break;
		case GOFER_EXPORT_TMPFS:
		case GOFER_EXPORT_DEV:
			break;
		default:
			snprintf(err, errlen, "gofer: export %zu: bad kind %d", i, ex[i].kind);
			return -EINVAL;
		}
		for (const char *const *h = ex[i].hidden; h && *h; h++) {
			if (!**h || gofer_check_path(*h, strlen(*h))) {
				snprintf(err, errlen, "gofer: export %zu: bad hidden name \"%s\"", i, *h);
				return -EINVAL;
			}
		}
		if (ex[i].skeleton && (ex[i].kind != GOFER_EXPORT_DIR || !ex[i].cow)) {
			snprintf(err, errlen, "gofer: export %zu: a skeleton needs a cow export", i);
			return -EINVAL;
		}
		for (const char *const *h = ex[i].skeleton; h && *h; h++) {
			if (!**h || gofer_check_path(*h, strlen(*h))) {
				snprintf(err, errlen, "gofer: export %zu: bad skeleton name \"%s\"", i, *h);
				return -EINVAL;
			}
		}
	}
	return 0;
}

static int recv_hello(int sock, struct gofer_hello *h)
{
	ssize_t n;

	do
		n = recv(sock, h, sizeof *h, 0);
	while (n < 0 && errno == EINTR);
	if (n != (ssize_t)sizeof *h) {
		h->err = -ECHILD;
		snprintf(h->msg, sizeof h->msg, "gofer: exited during start-up");
		return -ECHILD;
	}
	h->msg[sizeof h->msg - 1] = '\0';
	if (h->err > 0 || h->err < -4095)
		h->err = -EPROTO;
	return h->err;
}

static long long *export_deadline_ms; /* shared with the gofer: gofer.h */

void gofer_export_deadline_set(double ms)
{
	if (export_deadline_ms)
		__atomic_store_n(export_deadline_ms, (long long)ms, __ATOMIC_RELEASE);
}

double gofer_export_deadline(void)
{
	return export_deadline_ms ? (double)__atomic_load_n(export_deadline_ms, __ATOMIC_ACQUIRE) : 0;
}

int gofer_start_begin(const struct gofer_export *exports, size_t n, pid_t *pid,
		      int *ctl_sock, char *err, size_t errlen)
{
	struct gofer_hello h;
	pid_t parent = getpid(), child;
	int sv[2], r;

	if (errlen)
		err[0] = '\0';
	r = check_exports(exports, n, err, errlen);
	if (r)
		return r;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		r = -errno;
		snprintf(err, errlen, "gofer: socketpair: %s", strerror(-r));
		return r;
	}
	/* The gofer is born in its own user and mount namespaces, so that we
	 * write its maps (below) while it sets itself up, with no round trip
	 * (it used to unshare them and wait for our answer). What needs the
	 * caller's privilege in the caller's namespaces is done here, before:
	 * the cow sources' clones (pre_clone_cow: its fds are inherited) and,
	 * after, the child's oom_score_adj. Writing the maps needs it
	 * dumpable: a caller that changed its ids is not (the child inherits
	 * our mm's flag; ours is restored below). */
	pre_clone_cow(exports, n);
	if (!export_deadline_ms) {
		void *pg = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		export_deadline_ms = pg == MAP_FAILED ? NULL : pg; /* (none: no bound but the kill) */
	}
	if (export_deadline_ms) /* (a second gofer of this process: tests) */
		madvise(export_deadline_ms, 4096, MADV_DOFORK);
	int dumpable = prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
	if (dumpable != 1)
		prctl(PR_SET_DUMPABLE, 1);
	/* (a raw clone, as the guest's init: no CLONE_VM, the child runs on
	 * its copy of our stack, like fork's; we have no other thread) */
	child = (pid_t)syscall(SYS_clone, CLONE_NEWUSER | CLONE_NEWNS | SIGCHLD, 0, NULL, NULL, 0);
	if (child == 0) {
		close(sv[0]);
		child_main(exports, n, sv[1], parent);
	}
	r = child < 0 ? -errno : 0;
	njoin = 0; /* (the caller's fds: the child has its copies) */
	/* the deadline's page is the gofer's and ours only: no process forked
	 * later (moat-netd, moat-broker, the guest's init before its exec)
	 * inherits it to write (review 37: moat-netd and moat-broker held it
	 * writable, and could give the export up or set a deadline where
	 * --timeout set none) */
	if (export_deadline_ms)
		madvise(export_deadline_ms, 4096, MADV_DONTFORK);
	for (size_t i = 0; i < n; i++)
		if (pre_tree[i] >= 0) {
			close(pre_tree[i]);   /* the child's */
			pre_tree[i] = -1;
		}
	if (child < 0) {
		if (dumpable != 1)
			prctl(PR_SET_DUMPABLE, 0);
		char why[128];
		if (r == -EAGAIN)
			snprintf(err, errlen, SPAWN_FAILED_FMT, "the gofer", spawn_error(-r, why, sizeof why));
		else
			snprintf(err, errlen, "gofer: clone(CLONE_NEWUSER|CLONE_NEWNS): %s", strerror(-r));
		close(sv[0]);
		close(sv[1]);
		return r;
	}
	close(sv[1]);
	{
		/* never an OOM victim (root-run: our CAP_SYS_RESOURCE; rootless
		 * the kernel refuses): it holds the guest's writable layers and
		 * is in the sandbox's memory cgroup (sentry/limits.c
		 * limits_attach_gofer), whose OOM kills must take the guest's
		 * processes and leave it to export */
		char p[64];
		snprintf(p, sizeof p, "/proc/%d/oom_score_adj", (int)child);
		int fd = open(p, O_WRONLY | O_CLOEXEC);
		if (fd >= 0) {
			/* where it may not be spared (no CAP_SYS_RESOURCE: this
			 * VM's root, rootless), the OOM killer's choice after the
			 * guest (1000) and before the sentry (0), which joins the
			 * memory cgroup too (red team 17) and whose death loses
			 * the result, the cgroup's removal and the gofer anyway:
			 * a 96M copy-up under --memory 32M once took the sentry
			 * (limits memory_copyup_refused) */
			if (write(fd, "-1000", 5) < 0 && write(fd, "500", 3) < 0)
				dbg("gofer: oom_score_adj: %s", strerror(errno));
			close(fd);
		} else {
			dbg("gofer: %s: %s", p, strerror(errno));
		}
	}
	struct gofer_hello ack = { .err = write_maps(child) };
	if (dumpable != 1)
		prctl(PR_SET_DUMPABLE, 0);
	if (send(sv[0], &ack, sizeof ack, MSG_NOSIGNAL) < 0 || ack.err)
		r = recv_hello(sv[0], &h); /* its failure (it may have failed first) */
	if (r) {
		snprintf(err, errlen, "%s", h.msg[0] ? h.msg : "gofer: start-up failed");
		close(sv[0]);
		kill(child, SIGKILL);
		while (waitpid(child, NULL, 0) < 0 && errno == EINTR)
			;
		return r;
	}
	*pid = child;
	*ctl_sock = sv[0];
	return 0;
}

/* (parent) the roots the last gofer donated, fd + 1 (0: none):
 * gofer_take_cow_root */
static int taken_roots[GOFER_MAX_EXPORTS];
static uint8_t taken_hides[GOFER_MAX_EXPORTS][GOFER_LAYER_HIDES_MAX / 8];

int gofer_take_cow_root(size_t i)
{
	int fd = i < GOFER_MAX_EXPORTS ? taken_roots[i] - 1 : -1;

	if (fd >= 0)
		taken_roots[i] = 0;
	return fd;
}

int gofer_layer_hides(size_t i, size_t k)
{
	return i < GOFER_MAX_EXPORTS && k < GOFER_LAYER_HIDES_MAX &&
	       ((taken_hides[i][k / 8] >> (k % 8)) & 1);
}

static int recv_roots(int sock, uint32_t nroots)
{
	memset(taken_hides, 0, sizeof taken_hides);
	for (size_t i = 0; i < GOFER_MAX_EXPORTS; i++)
		if (taken_roots[i] > 0) {
			close(taken_roots[i] - 1);
			taken_roots[i] = 0;
		}
	if (nroots > GOFER_MAX_EXPORTS)
		return -EPROTO;
	for (uint32_t k = 0; k < nroots; k++) {
		struct gofer_root gr;
		int fd = -1, nfd = 1;
		long l = recv_fds(sock, &gr, sizeof gr, &fd, &nfd);
		if (l != (long)sizeof gr || nfd != 1 || gr.export >= GOFER_MAX_EXPORTS ||
		    taken_roots[gr.export] > 0) {
			if (nfd == 1)
				close(fd);
			return l < 0 ? (int)l : -EPROTO;
		}
		taken_roots[gr.export] = fd + 1;
		memcpy(taken_hides[gr.export], gr.layer_hides, sizeof gr.layer_hides);
	}
	return 0;
}

int gofer_start_finish(pid_t pid, int ctl_sock, char *err, size_t errlen)
{
	struct gofer_hello h;
	int r = recv_hello(ctl_sock, &h);

	if (!r && (r = recv_roots(ctl_sock, h.nroots)) < 0)
		snprintf(h.msg, sizeof h.msg, "gofer: the overlays' read-only roots: %s", strerror(-r));
	if (!r && h.join_err)
		warnx_("cannot move the gofer into the sandbox's cgroup (%s): its work is not "
		       "counted by --memory/--cpus", strerror(-h.join_err));

	if (r) {
		snprintf(err, errlen, "%s", h.msg[0] ? h.msg : "gofer: start-up failed");
		close(ctl_sock);
		kill(pid, SIGKILL);
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	return r;
}

int gofer_start(const struct gofer_export *exports, size_t n, pid_t *pid,
		int *ctl_sock, char *err, size_t errlen)
{
	int r = gofer_start_begin(exports, n, pid, ctl_sock, err, errlen);

	return r ? r : gofer_start_finish(*pid, *ctl_sock, err, errlen);
}
