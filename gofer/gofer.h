/* gofer/gofer.h - the gofer: the only process that touches host files.
 *
 * Lifecycle:
 *   1. moat (before the guest exists) calls gofer_start() with the exports.
 *      The gofer child: PR_SET_PDEATHSIG(SIGKILL); new user+mount namespace;
 *      bind-mounts each DIR export (MS_RDONLY unless writable: so fds it donates
 *      for read-only exports can never be written, fchmod'ed or truncated),
 *      mounts a tmpfs for TMPFS exports (in memory: gone when the gofer dies),
 *      bind-mounts host device nodes for the DEV export, over-mounts hidden
 *      names; pivot_root into that tree; Landlock (read-only for ro exports,
 *      read-write for rw ones) where the kernel has it; its own seccomp
 *      allowlist; then serves.
 *   2. The sentry holds the control socket. Each sentry worker thread asks for
 *      its own connection (gofer_connect) so a slow or blocking request (a FIFO
 *      open) stalls only that worker. The gofer serves each connection in its
 *      own thread.
 *   3. When the control socket closes, the gofer exits (and PDEATHSIG covers a
 *      sentry crash).
 *
 * Requests name an export index and a path *relative to the export root*:
 * "" is the root itself; components are separated by single '/'; no leading
 * '/', no "." or ".." or empty components, no NUL; each component is at most
 * NAME_MAX bytes, the whole at most PATH_MAX. The gofer checks all of that
 * (checkSafeName) and answers -EINVAL otherwise. It never follows a symlink in
 * any component (openat2 RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS|
 * RESOLVE_NO_MAGICLINKS|RESOLVE_NO_XDEV on the export's root fd): the sentry
 * resolves symlinks itself in the guest's view, so a symlink met by the gofer
 * is -ELOOP (except as the final component of walk/readlink/lstat/unlink/
 * rename/open(O_PATH|O_NOFOLLOW)). Names on the export's hidden list are
 * -ENOENT. Write operations on a read-only export are -EROFS.
 *
 * A malformed, truncated or oversized message gets an error reply or closes
 * that connection; the gofer never crashes and never serves outside its roots.
 */
#ifndef MOAT_GOFER_GOFER_H
#define MOAT_GOFER_GOFER_H

#include <stdint.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/types.h>
#include <time.h>

enum gofer_export_kind {
	GOFER_EXPORT_DIR = 1,  /* a host directory (or a single host file) */
	GOFER_EXPORT_TMPFS,    /* an in-memory scratch tree, always writable */
	GOFER_EXPORT_DEV,      /* null zero full random urandom tty, pts/ (a devpts of its own): open only */
};

struct gofer_export {
	int kind;
	const char *host_path;       /* DIR: absolute host path; else NULL */
	int writable;                /* DIR: rw bind */
	unsigned long long chk_dev, chk_ino; /* DIR: the object moat checked (a --bind
				      * or --root: no planted symlink, red team 92;
				      * rw: refuse_overlaps too; 0: none): the
				      * gofer's clone of host_path must be it */
	const char *const *hidden;   /* NULL-terminated list of relative paths never
				      * served (e.g. "shadow", "ssh"), or NULL */
	mode_t mode;                 /* TMPFS: mode of its root (0 = 0755; /tmp: 01777) */
	unsigned long long size;     /* TMPFS: its size limit in bytes (0: 512M) */
	int owner_set;               /* TMPFS: give its root to owner_uid:owner_gid;
				      * DEV: its devpts's new ptys belong to them */
	uid_t owner_uid;             /* (the home under --user; best effort) */
	gid_t owner_gid;
	int cow;                     /* DIR: a copy-on-write view of host_path: an
				      * overlayfs the gofer mounts (lower: a read-only
				      * clone of host_path; upper: scratch or --overlay
				      * DIR), served writable; host_path is never written */
	const char *cow_name;        /* cow: its directory under --export DIR ("root", "work") */
	const char *cow_prefix;      /* cow: prefix of its paths in that patch ("" or "etc/") */
	int cow_persist;             /* cow: the upper layer is in cow_config.upper_dir */
	int sealed;                  /* cow: a directory of the system view, where a
				      * host file others may not read is sealed
				      * (fs/vfs.c): --export never reads one, nor
				      * lists such a directory */
	const char *const *skeleton; /* cow: NULL, or the lower layer is not host_path
				      * but an empty read-only tmpfs holding these
				      * directories (relative paths, parents first):
				      * the root overlay's "/" (host_path "/" only
				      * names it: nothing of the host's root is read) */
};

/* Copy-on-write settings (gofer_set_cow, before gofer_start). */
struct gofer_cow_config {
	const char *upper_dir;        /* --overlay DIR: persistent upper layers (absolute) */
	const char *export_dir;       /* --export DIR (absolute, exists) or NULL */
	unsigned long long upper_dev, upper_ino;   /* what moat checked and locked as */
	unsigned long long export_dev, export_ino; /* these two (0: none): the gofer's opens must be them */
	unsigned long long max_bytes; /* --export-max-bytes */
	unsigned long long max_files; /* --export-max-files */
	unsigned long long disk_bytes; /* --disk: one tmpfs of this size holds every
					* writable layer (tmpfs exports, the cow scratch);
					* 0 = each its own */
	int disk_implicit;            /* disk_bytes is --memory's (no memory cgroup holds
					* it): what the pool cannot hold (--overlay DIR, a
					* cow scratch where tmpfs keeps no user xattrs) stays
					* outside it instead of failing the start */
};
void gofer_set_cow(const struct gofer_cow_config *cfg);
/* Remove the caller's host scratch directories (moat-cow.* under $TMPDIR or
 * /var/tmp) that no live sandbox's reaper holds (flock) and that are older
 * than a minute: what a killed reaper or a host crash left behind. */
void gofer_clean_stale_scratch(void);
/* The gofer's exit status after a clean end (control socket closed): 0, or
 * GOFER_EXIT_REFUSED when the export refused changes (listed in its
 * manifest.json), GOFER_EXIT_EXPORT_FAILED when it could not be written. */
#define GOFER_EXIT_REFUSED 10
#define GOFER_EXIT_EXPORT_FAILED 11
/* ... GOFER_EXIT_EXPORT_LATE when it passed gofer_export_deadline() and
 * was given up: nothing of it is left in the export directory. */
#define GOFER_EXIT_EXPORT_LATE 12

/* --timeout's bound on the export (gofer/export.c): the CLOCK_MONOTONIC
 * time in ms past which the gofer gives the export up; 0: none. A word in
 * a MAP_SHARED page made before the gofer's clone (gofer_start_begin), set
 * by the sentry before it closes the control socket, read by the gofer. */
void gofer_export_deadline_set(double ms);
double gofer_export_deadline(void);
/* ...and GOFER_EXPORT_KILL_MS past that deadline, in the middle of one
 * file's line diff or hashing, the gofer ends itself (exit_group). */
#define GOFER_EXPORT_KILL_MS 1000

#define GOFER_MAX_EXPORTS 64

/* Start the gofer serving exports[0..n-1] (indexes are the export ids).
 * On success returns 0 and sets *pid and *ctl_sock (O_CLOEXEC). On failure
 * returns -errno and writes a one-line reason into err. */
int gofer_start(const struct gofer_export *exports, size_t n, pid_t *pid,
		int *ctl_sock, char *err, size_t errlen);

/* gofer_start() in two halves, so the caller can work while the gofer
 * builds its namespaces: begin returns once the child exists and its id maps
 * are written; finish waits for "ready" (or the one-line start-up error; the
 * child is then reaped and ctl_sock closed). */
int gofer_start_begin(const struct gofer_export *exports, size_t n, pid_t *pid,
		      int *ctl_sock, char *err, size_t errlen);
int gofer_start_finish(pid_t pid, int ctl_sock, char *err, size_t errlen);
/* After gofer_start(_finish): the O_PATH root fd the gofer donated for export
 * i (a read-only recursive clone of a cow export's overlay, hidden names
 * masked: what the sentry's direct opens there resolve beneath), or -1. The
 * caller takes it: a second call answers -1. */
int gofer_take_cow_root(size_t i);
/* After gofer_start(_finish): 1 if cow export i's overlay hides its hidden
 * name k itself (a whiteout in its upper layer, proto.h gofer_root): an
 * ordinary absent name the guest may create, not refused by name. */
int gofer_layer_hides(size_t i, size_t k);
/* An fd the gofer started next keeps open for its whole life and never uses
 * (the sandbox's claim on its host uid: see sentry/privilege.c), and the
 * detached read-only tree it was opened through (or -1), which the gofer
 * attaches in its own root: a detached tree's last close costs an RCU
 * grace period. */
void gofer_keep_fd(int fd, int tree);
/* cgroup.procs fds (opened by the caller) the gofer started next moves
 * itself into once its set-up has forked the cow scratch reaper, then
 * closes: the reaper stays out of the sandbox's cgroups, whose kill at the
 * end (moat-cgroup: cgroup.kill, or SIGKILL to each pid listed) must not
 * take it before it removed the scratch directory. A failure is reported
 * on stderr by gofer_start_finish. At most GOFER_JOIN_MAX. */
#define GOFER_JOIN_MAX 8
void gofer_join_cgroups(const int *fds, size_t n);

/* ---- client (used by fs/; thread-safe per connection, one per thread) ---- */

struct gofer_conn;

/* A new dedicated connection, obtained over the control socket (serialised
 * internally). NULL on failure (errno set). */
struct gofer_conn *gofer_connect(int ctl_sock);
void gofer_disconnect(struct gofer_conn *c);

/* Requests that may block for long (a FIFO open waits for its peer): while
 * hook is set on this thread, waiting for a reply polls every 20 ms and stops
 * with -EINTR when hook(arg) returns nonzero. The connection is then hung up
 * (the gofer ends the wait when it sees that: it opens FIFOs O_NONBLOCK and
 * waits in poll on the FIFO and the connection, never in open(2)) and is
 * broken (gofer_conn_broken): it must be replaced. NULL clears the hook. */
void gofer_set_wait_hook(int (*hook)(void *), void *arg);
/* Called (by this thread) before every request: the sentry's pipeline passes
 * its RECV lead on before a thread may wait for the gofer. */
void gofer_set_block_hook(void (*hook)(void));
/* With held() true (this thread holds the pipeline's RECV lead), a request
 * does not call the block hook first: it waits for its reply in poll with
 * notify_fd, and calls the hook only if a guest call arrives meanwhile. */
void gofer_set_lead(int (*held)(void), int notify_fd);
/* MOAT_PROFILE: count the round trips and their wall time per op; the
 * report goes to f (nothing when never turned on). */
void gofer_profile(int on);
void gofer_profile_report(FILE *f);
/* the calling thread's gofer round-trip wall time (ns) since the last call
 * (MOAT_PROFILE: the pipeline's "gofer" stage) */
unsigned long long gofer_profile_take(void);
/* The same hook, called by a handler of a call the pipeline answers without
 * a hand-off (an open) before it waits for anything else (a lease break,
 * syscalls/sys_lock.c), so the wait never stalls other guest tasks. */
void gofer_before_block(void);
/* Around a wait for another guest task (a FIFO open without a peer, a lock or
 * lease wait): the pipeline passes its lead on and lets the worker count
 * outside its pool's cap while it waits (sentry/pipeline.c
 * pipeline_wait_begin). Set by the pipeline; no-ops elsewhere. Nest. */
void gofer_set_wait_hooks(void (*begin)(void), void (*end)(void));
void gofer_wait_begin(void);
void gofer_wait_end(void);
int gofer_conn_broken(const struct gofer_conn *c);

#define GOFER_WALK_MAX 64
/* COPYUP: at most this many objects copied up by one request (the lower
 * directories on the way and the object) */
#define GOFER_COPYUP_MAX 64
struct gofer_walk {
	int n;                        /* components stat'ed: st[0..n-1] */
	int err;                      /* 0, or -errno for component n (-ENOENT,
				       * -ENOTDIR when a non-directory is followed
				       * by more components, -EACCES ...) */
	struct stat st[GOFER_WALK_MAX];
	char link[PATH_MAX];          /* if st[n-1] is a symlink: its target (the
				       * walk stops after a symlink) */
};
/* Walk rel component by component from the export root: lstat each; stop at a
 * symlink (target in ->link), a missing component, or after GOFER_WALK_MAX.
 * rel "" stats the root into st[0] with n=1. Returns 0 (see out->err) or -errno
 * for a bad request/transport failure. */
int gofer_walk(struct gofer_conn *c, int exp, const char *rel, struct gofer_walk *out);

/* lstat of one path. */
int gofer_lstat(struct gofer_conn *c, int exp, const char *rel, struct stat *st);

/* Open rel with open(2) flags (O_CLOEXEC is always added; O_NOFOLLOW implied;
 * O_CREAT/O_TRUNC/O_WRONLY/O_RDWR need a writable export (else -EROFS);
 * O_PATH|O_NOFOLLOW on a symlink gives the link). Returns 0 with a new host fd
 * in *fd and its fstat in *st (may be NULL). For a DEV export only the device
 * names and its devpts instance ("pts/ptmx", "pts/N") exist. */
/* The next OPEN or xattr request of the calling thread acts only on the
 * object (dev, ino), else fails with -ESTALE (struct gofer_req_open). */
void gofer_expect_identity(dev_t dev, ino_t ino);
/* The next request of the calling thread that changes a name (UNLINK,
 * RENAME's source, MKDIR, MKNOD, SYMLINK, an OPEN that creates, LINKFD)
 * acts on it only in the directory (dev, ino), else -ESTALE. */
void gofer_expect_parent(dev_t dev, ino_t ino);
/* The next RENAME or LINK of the calling thread: its destination name only
 * in the directory (pdev, pino) and (RENAME) only if the name is still the
 * object (dev, ino) checked, or still free (ino 0), else -ESTALE. */
void gofer_expect_target(dev_t pdev, ino_t pino, dev_t dev, ino_t ino);
/* All of them, to keep across a retry (fs/vfs.c COW_RETRY) */
struct gofer_expect {
	uint64_t ino, dev, pino, pdev, tino, tdev, tpino, tpdev;
};
void gofer_expect_get(struct gofer_expect *e);
void gofer_expect_set(const struct gofer_expect *e);
void gofer_expect_clear(void);
/* The identity the next request would name (not consumed). */
void gofer_peek_identity(dev_t *dev, ino_t *ino);
/* COPYUP (proto.h): copy the lower file or directory at rel of a cow export,
 * and the lower directories on the way to it, up by hand; rel only if it is
 * the object dev/ino (0: any). pairs[k]: an object's lstat before and after
 * (GOFER_COPYUP_MAX of room), rel's last if it was copied. How many, or
 * -errno: -EOVERFLOW where that does not apply (not a cow export, nothing
 * to copy), -EBUSY for a directory on the way that overlayfs holds (the
 * sandbox has it open: fs/vfs.c cow_copyup lets go and asks again),
 * -EAGAIN when nothing was left to copy (another call copied the
 * directories since this one failed: the call is made again). *busy: 1
 * when the pairs are of directories copied before, whose numbers the
 * shrink changed, and the copy-up itself was -EBUSY (the pairs still
 * count). */
int gofer_copyup(struct gofer_conn *c, int exp, const char *rel, dev_t dev, ino_t ino,
		 struct stat (*pairs)[2], int *busy);
int gofer_open(struct gofer_conn *c, int exp, const char *rel, int flags,
	       mode_t mode, int *fd, struct stat *st);
/* From now on (for the rest of the process) gofer_open returns only once the
 * gofer has closed its own copy of the fd (one more round trip, GOFER_OP_SYNC):
 * the caller's copies are then the last ones, so an inotify watcher sees
 * IN_CLOSE_WRITE at the guest's own close, not at the gofer's, which another
 * CPU may run after the guest's next calls. */
void gofer_set_close_barrier(void);

/* readlink: returns the length (not NUL-terminated beyond len) or -errno. */
long gofer_readlink(struct gofer_conn *c, int exp, const char *rel, char *buf, size_t len);

int gofer_mkdir(struct gofer_conn *c, int exp, const char *rel, mode_t mode);
/* mknod for S_IFIFO, S_IFREG and S_IFSOCK only (devices: -EPERM). */
int gofer_mknod(struct gofer_conn *c, int exp, const char *rel, mode_t mode);
/* The same, and *st (if not NULL) the new node's lstat as the gofer saw it
 * right after making it (st_ino 0: gone already). */
int gofer_mkdir_st(struct gofer_conn *c, int exp, const char *rel, mode_t mode, struct stat *st);
int gofer_mknod_st(struct gofer_conn *c, int exp, const char *rel, mode_t mode, struct stat *st);
int gofer_symlink_st(struct gofer_conn *c, int exp, const char *target, const char *rel, struct stat *st);
/* flags: 0 or AT_REMOVEDIR */
int gofer_unlink(struct gofer_conn *c, int exp, const char *rel, int flags);
/* Within one export; flags: RENAME_NOREPLACE | RENAME_EXCHANGE (RENAME_WHITEOUT: -EINVAL) */
int gofer_rename(struct gofer_conn *c, int exp, const char *oldrel, const char *newrel, unsigned flags);
int gofer_symlink(struct gofer_conn *c, int exp, const char *target, const char *rel);
int gofer_link(struct gofer_conn *c, int exp, const char *oldrel, const char *newrel);
/* The same, linking only the object gofer_expect_identity named (-ESTALE
 * when oldrel is another one's by then); st (may be NULL): st[0] the new
 * name's lstat after the link, st[1] the old name's if it is still the
 * same inode (st_ino 0: not given). */
int gofer_link_st(struct gofer_conn *c, int exp, const char *oldrel, const char *newrel,
		  struct stat st[2]);
/* chmod (never follows a final symlink: -EOPNOTSUPP as Linux's fchmodat
 * AT_SYMLINK_NOFOLLOW) */
int gofer_chmod(struct gofer_conn *c, int exp, const char *rel, mode_t mode);
/* uid/gid (uid_t)-1 = unchanged; does not follow a final symlink */
int gofer_chown(struct gofer_conn *c, int exp, const char *rel, uid_t uid, gid_t gid);
int gofer_truncate(struct gofer_conn *c, int exp, const char *rel, off_t len);
/* ts as utimensat(2) (UTIME_NOW / UTIME_OMIT allowed; NULL = now). flags: 0 or
 * AT_SYMLINK_NOFOLLOW */
int gofer_utimens(struct gofer_conn *c, int exp, const char *rel, const struct timespec ts[2], int flags);
int gofer_statfs(struct gofer_conn *c, int exp, const char *rel, struct statfs *st);
/* The current path of the directory dirfd (a host fd the gofer donated)
 * relative to export exp's root, as it stands now: the name follows the
 * object across renames. Returns its length (no NUL; 0 for the root), or
 * -ENOENT (removed), -ESTALE (not beneath exp), -ENAMETOOLONG. */
long gofer_pathof(struct gofer_conn *c, int exp, int dirfd, char *buf, size_t len);
/* One DIRSTAT page (gofer/proto.h) of directory rel from pos into buf (room
 * for GOFER_MAX_REP): the payload's length or -errno. */
/* DEVOPEN (proto.h): up to count opens of memory device name of DEV export
 * exp (flags O_RDONLY, O_WRONLY or O_RDWR) into fds, its stat in *st: how
 * many, or -errno. */
int gofer_devopen(struct gofer_conn *c, int exp, const char *name, int flags, int count,
		  int *fds, struct stat *st);
long gofer_dirstat(struct gofer_conn *c, int exp, const char *rel, uint64_t pos, void *buf, size_t len);
/* Name the O_TMPFILE file fd (opened through the gofer) rel: linkat with
 * AT_EMPTY_PATH in the gofer (Linux >= 6.10 lets the opener do that). */
int gofer_linkfd(struct gofer_conn *c, int exp, int fd, const char *rel);
/* fchown an unnamed O_TMPFILE file of a private (TMPFS) export (its
 * creator's ids: what CHOWN does for a named file); -EPERM for anything else */
int gofer_chownfd(struct gofer_conn *c, int exp, int fd, uid_t uid, gid_t gid);
/* Set the window size of fd, a terminal of the DEV export exp's own devpts
 * instance (a pty or its master), in the gofer; -EPERM for any other
 * terminal, -ENOTTY for no character device. */
struct winsize;
int gofer_winsz(struct gofer_conn *c, int exp, int fd, const struct winsize *ws);
/* A pty master's TIOCSIG, TIOCPKT, TIOCSPTLCK (arg: the signal, the int)
 * or TIOCGPTPEER (arg: the open flags; *peer: the slave's fd, O_CLOEXEC) on
 * fd, a terminal of the DEV export exp's own devpts instance, in the gofer;
 * -EPERM for any other terminal (PTSCTL). peer is NULL but for TIOCGPTPEER. */
int gofer_ptsctl(struct gofer_conn *c, int exp, int fd, unsigned cmd, int arg, int *peer);
/* the mode (ts NULL) or times of fd, a memfd of the guest's (the gofer
 * refuses any other file: MEMFDATTR) */
int gofer_memfdattr(struct gofer_conn *c, int exp, int fd, mode_t mode,
		    const struct timespec *ts);
/* Add a watch for the inotify instance ifd on rel, only if it is the object
 * (dev, ino): a directory itself, else by name with IN_DONT_FOLLOW. Returns
 * the watch descriptor or -errno (-ESTALE: rel names another object now). */
int gofer_watch(struct gofer_conn *c, int exp, const char *rel, int ifd, uint32_t mask,
		dev_t dev, ino_t ino);

/* Extended attributes of rel (never following a final symlink), user.*
 * names only (others: -EOPNOTSUPP). A value travels whole in one message:
 * at most GOFER_XATTR_MAX bytes (a larger set is -ENOSPC, as a file system
 * with no room for it; a larger host value or list is -E2BIG). Symlinks and
 * special files have none (get -ENODATA, list empty, set/remove -EPERM).
 * get/list: size 0 asks the length; else the length copied, or -ERANGE. */
#define GOFER_XATTR_MAX 4096
#define GOFER_XATTR_LIST_MAX 8192
long gofer_getxattr(struct gofer_conn *c, int exp, const char *rel, const char *name,
		    void *buf, size_t size);
long gofer_listxattr(struct gofer_conn *c, int exp, const char *rel, char *buf, size_t size);
/* flags: 0, XATTR_CREATE (-EEXIST) or XATTR_REPLACE (-ENODATA) */
int gofer_setxattr(struct gofer_conn *c, int exp, const char *rel, const char *name,
		   const void *val, size_t size, int flags);
int gofer_removexattr(struct gofer_conn *c, int exp, const char *rel, const char *name);

#endif
