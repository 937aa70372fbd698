/* gofer/server.c - the gofer's request loop and its handlers.
 *
 * Runs confined (see setup.c): the only files it can reach are its exports,
 * each held as an O_PATH root fd. Every handler works *at() on those fds:
 *
 *   1. the message is validated before anything else (serve_one): length
 *      consistent with the op's fixed part and string lengths, strings
 *      NUL-terminated and NUL-free, export index in range, paths safe
 *      (gofer_check_path), hidden names refused;
 *   2. the parent directory of the final component is reached with openat2
 *      RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS|RESOLVE_NO_MAGICLINKS|
 *      RESOLVE_NO_XDEV from the export root (open_parent): a symlink in any
 *      middle component is -ELOOP, never followed;
 *   3. the operation is one *at() call on (parent fd, final name) that does
 *      not follow a final symlink; a request that changes a name acts
 *      only if that parent fd (and the object there) is what the sentry
 *      checked (parent_is, name_is: -ESTALE otherwise). OPEN, and CHMOD/UTIMENS of the object
 *      the sentry checked, use one openat2 of the whole path from the
 *      export root with the same rules instead (fewer calls, the same
 *      resolution).
 *
 * The path "" names the export root itself; its parent is the gofer's "/"
 * (basefd) and its name the export's mount point (slot), so chmod, chown,
 * utimens and truncate of the root go through the same code.
 *
 * Host files (DIR exports) get neither set-id bits nor new owners from
 * anyone, whatever the sentry asks (a compromised sentry talks to us too):
 * creations and chmod lose S_ISUID/S_ISGID, chown is -EPERM, and a hard link
 * to a set-id file, a device node or a file the gofer's caller could not
 * have linked (protected_hardlinks) is -EPERM. What the guest sees instead
 * is the sentry's virtual metadata (fs/vmeta.c). TMPFS exports are the
 * sandbox's own, in memory, never visible to the host (and mounted nosuid):
 * there chmod and chown are real.
 */
#include "gofer/server.h"
#include "gofer/proto.h"
#include "common/log.h"
#include "common/sanitize.h"
#include "common/util.h"

#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef __NR_fchmodat2
#define __NR_fchmodat2 452
#endif

/* glibc's __O_TMPFILE includes O_DIRECTORY: this is the bit of its own */
#define TMPFILE_BIT (O_TMPFILE & ~O_DIRECTORY)
#define CONN_STACK (256 * 1024 * MOAT_STACK_SCALE) /* two VFS_PATH_MAX requests fit on it */
/* a connection per sentry worker: 64, plus one per guest task waiting in a
 * call (pipeline_wait_begin: at most the tracer's task bound, 4096), plus
 * the tracer's and slack */
#define MAX_CONNS (4096 + 256)

static const struct gofer_srv *srv;
static atomic_int nconns;

/* ---- validation ---- */

int gofer_check_path(const char *p, size_t len)
{
	size_t start = 0;

	if (len == 0)
		return 0;
	if (len >= VFS_PATH_MAX)
		return -ENAMETOOLONG;
	for (size_t i = 0; i <= len; i++) {
		if (i < len && p[i] == '\0')
			return -EINVAL;
		if (i < len && p[i] != '/')
			continue;
		size_t n = i - start;
		if (n == 0)
			return -EINVAL;             /* "", leading, trailing or "//" */
		if (n == 1 && p[start] == '.')
			return -EINVAL;
		if (n == 2 && p[start] == '.' && p[start + 1] == '.')
			return -EINVAL;
		if (n > NAME_MAX)
			return -ENAMETOOLONG;
		start = i + 1;
	}
	return 0;
}

static int is_hidden(const struct gofer_srv_export *e, const char *p)
{
	for (size_t i = 0; i < e->nhidden; i++) {
		if (e->by_layer && e->by_layer[i])
			continue;       /* absent in the overlay: an ordinary name */
		size_t hl = strlen(e->hidden[i]);
		if (!strncmp(p, e->hidden[i], hl) && (p[hl] == '\0' || p[hl] == '/'))
			return 1;
	}
	return 0;
}

int gofer_temp_name(const char *name)
{
	const char *hex = !strncmp(name, ".moat-copyup.", 13) ? name + 13 :
			  !strncmp(name, ".moat-link.", 11) ? name + 11 : NULL;

	if (!hex || strlen(hex) != 16)
		return 0;
	for (int i = 0; i < 16; i++)
		if (!((hex[i] >= '0' && hex[i] <= '9') || (hex[i] >= 'a' && hex[i] <= 'f')))
			return 0;
	return 1;
}

/* ---- helpers ---- */

static int oat2_one(const struct gofer_srv_export *e, int dirfd, const char *path,
		    int flags, mode_t mode)
{
	struct open_how how = {
		.flags = (uint64_t)(unsigned)flags,
		.mode = (flags & (O_CREAT | TMPFILE_BIT)) ? mode : 0,
		.resolve = e->resolve,
	};
	long r;

	do
		r = syscall(SYS_openat2, dirfd, path, &how, sizeof how);
	while (r < 0 && errno == EINTR);
	return r < 0 ? -errno : (int)r;
}

/* openat2 beneath dirfd with the export's rules; a path longer than the
 * kernel takes in one call (a deep tree, up to VFS_PATH_MAX) is opened in
 * steps: each leading part as an O_PATH directory, with the same rules, from
 * the one before (beneath it, so still beneath the export). */
static int oat2(const struct gofer_srv_export *e, int dirfd, const char *path,
		int flags, mode_t mode)
{
	size_t len = strlen(path);
	int cur = dirfd, r;

	while (len >= PATH_MAX) {
		char part[PATH_MAX];
		const char *cut = path + PATH_MAX - 1;
		while (cut > path && *cut != '/')
			cut--;
		if (cut == path) {
			r = -ENAMETOOLONG;
			goto out;
		}
		memcpy(part, path, cut - path);
		part[cut - path] = 0;
		r = oat2_one(e, cur, part, O_PATH | O_DIRECTORY | O_CLOEXEC, 0);
		if (r < 0)
			goto out;
		if (cur != dirfd)
			close(cur);
		cur = r;
		path = cut + 1;
		len = strlen(path);
	}
	r = oat2_one(e, cur, path, flags, mode);
out:
	if (cur != dirfd)
		close(cur);
	return r;
}

/* An O_PATH fd of name beneath dirfd (never followed), only if it is the
 * object the sentry checked (dev, ino): else -ESTALE, and a name swapped
 * since the check is never acted on. *st: its stat. */
static int open_checked(const struct gofer_srv_export *e, int dirfd, const char *name, uint64_t dev,
			uint64_t ino, struct stat *st)
{
	int fd = oat2(e, dirfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC, 0);
	if (fd < 0)
		return fd;
	int r = fstat(fd, st) < 0 ? -errno : st->st_ino != ino || st->st_dev != (dev_t)dev ? -ESTALE : 0;
	if (r < 0) {
		close(fd);
		return r;
	}
	return fd;
}

/* Reach the parent of path's final component. On success *name points into
 * path (which is modified: the last '/' becomes NUL) and the return value is
 * a directory fd; *owned says whether the caller must close it. */
static int open_parent(const struct gofer_srv_export *e, char *path,
		       const char **name, int *owned)
{
	char *slash;
	int fd;

	*owned = 0;
	if (!*path) {
		*name = e->slot;
		return srv->basefd;
	}
	if (e->is_file)
		return -ENOTDIR;
	slash = strrchr(path, '/');
	if (!slash) {
		*name = path;
		return e->rootfd;
	}
	*slash = '\0';
	*name = slash + 1;
	fd = oat2(e, e->rootfd, path, O_PATH | O_DIRECTORY | O_CLOEXEC, 0);
	if (fd < 0)
		return fd;
	*owned = 1;
	return fd;
}

#define close_owned(fd, owned) do { if (owned) close(fd); } while (0)

/* pfd is the directory the sentry checked (pino 0: none named): else
 * -ESTALE. The name-changing requests (UNLINK, RENAME, LINK, MKDIR, MKNOD,
 * SYMLINK, a creating OPEN, LINKFD) act relative to a directory fd so
 * verified, never by a path resolved again after the check: a guest that
 * swaps a directory it may write with another user's (RENAME_EXCHANGE in
 * a writable parent) between the check and the request cannot have the
 * gofer (host root when run as root) change a name in the other one. */
static int parent_is(int pfd, uint64_t pdev, uint64_t pino)
{
	struct stat st;

	if (!pino)
		return 0;
	if (fstat(pfd, &st) < 0)
		return -errno;
	return st.st_ino == pino && st.st_dev == (dev_t)pdev ? 0 : -ESTALE;
}

/* open_parent, and that directory is the one checked (parent_is): the fd
 * (*owned: the caller closes it with close_owned) or -errno. */
static int open_checked_parent(const struct gofer_srv_export *e, char *path, const char **name,
			       int *owned, uint64_t pdev, uint64_t pino)
{
	int pfd = open_parent(e, path, name, owned);
	if (pfd < 0)
		return pfd;
	int r = parent_is(pfd, pdev, pino);
	if (r < 0) {
		close_owned(pfd, *owned);
		return r;
	}
	return pfd;
}

/* name in the directory pfd is the object (dev, ino) checked (ino 0: none
 * named): else -ESTALE (or the fstatat's error). What is left between this
 * and the call on the name is a change of names inside that verified
 * directory, which only the guest's own checked renames there can make:
 * what they can put under the name is what the guest could remove or move
 * there itself. */
static int name_is(int pfd, const char *name, uint64_t dev, uint64_t ino)
{
	struct stat st;

	if (!ino)
		return 0;
	if (fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	return st.st_ino == ino && st.st_dev == (dev_t)dev ? 0 : -ESTALE;
}

/* A host file: what the guest asks never sets a set-id bit or an owner. */
static int host_files(const struct gofer_srv_export *e)
{
	return e->kind != GOFER_EXPORT_TMPFS;
}

static mode_t host_mode(const struct gofer_srv_export *e, mode_t mode)
{
	return host_files(e) ? mode & ~(mode_t)(S_ISUID | S_ISGID) : mode;
}

/* A host file opened for writing loses its set-id bits (S_ISGID with
 * S_IXGRP) and its file capability now, as the kernel takes them off at a
 * write(2) or truncate by one without CAP_FSETID (file_remove_privs): a
 * write through a shared mapping of the fd takes off neither. Before
 * red-team round 24 guest root mapped a root-owned 4755 file of a rw bind
 * (or one with security.capability) writable and wrote into it: a set-uid
 * (capable) host file of the guest's content. Cannot: EPERM. */
static int drop_privs(int fd, struct stat *st)
{
	if ((st->st_mode & S_ISUID) || (st->st_mode & (S_ISGID | S_IXGRP)) == (S_ISGID | S_IXGRP)) {
		if (fchmod(fd, st->st_mode & 07777 & ~(mode_t)(S_ISUID | S_ISGID)) < 0)
			return -EPERM;
		st->st_mode &= ~(mode_t)(S_ISUID | S_ISGID);
	}
	if (fgetxattr(fd, "security.capability", NULL, 0) >= 0 &&
	    fremovexattr(fd, "security.capability") < 0)
		return -EPERM;
	return 0;
}

/* ---- requests ---- */

struct req {
	const struct gofer_srv_export *e;
	const void *fixed;       /* the op's fixed struct (aligned copy) */
	char *path;              /* first string (always a path) */
	char *str2;              /* second string or NULL */
	char *blob;              /* SETXATTR's value */
	int sock;                /* the client's connection (FIFO waits watch it) */
	int infd;                /* PATHOF: the fd that came with it, else -1 */
};

struct rep {
	char *payload;           /* room for GOFER_MAX_REP - rhdr */
	size_t len;              /* payload bytes */
	int fd;                  /* to donate, or -1 (closed after sending) */
	int xfd[GOFER_DEVOPEN_MAX - 1]; /* DEVOPEN: more to donate after fd */
	int nx;
};

typedef int (*handler_fn)(struct req *rq, struct rep *rp);

static int h_walk(struct req *rq, struct rep *rp)
{
	const struct gofer_srv_export *e = rq->e;
	struct gofer_rep_walk w = { 0 };
	struct stat *st = (struct stat *)(rp->payload + sizeof w);
	char *p = rq->path, *comp;
	int cur = e->rootfd, cur_owned = 0;

	if (!*p) {
		if (fstat(e->rootfd, &st[0]) < 0)
			return -errno;
		w.n = 1;
		goto out;
	}
	if (e->is_file) {
		w.err = -ENOTDIR;
		goto out;
	}
	comp = p;
	while (comp) {
		char *next = strchr(comp, '/');
		if (next)
			*next = '\0';
		if (w.n >= GOFER_WALK_MAX)
			break;
		/* hidden: rq->path up to here is the prefix walked so far */
		if (is_hidden(e, rq->path)) {
			w.err = -ENOENT;
			break;
		}
		int fd = oat2(e, cur, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC, 0);
		if (fd < 0) {
			w.err = fd;
			break;
		}
		close_owned(cur, cur_owned);
		cur = fd;
		cur_owned = 1;
		if (fstat(fd, &st[w.n]) < 0) {
			w.err = -errno;
			break;
		}
		w.n++;
		if (S_ISLNK(st[w.n - 1].st_mode)) {
			char *link = (char *)&st[w.n];
			ssize_t l = readlinkat(fd, "", link, PATH_MAX);
			if (l < 0)
				w.err = -errno;
			else
				w.linklen = l;
			break;
		}
		if (next) {
			*next = '/';
			comp = next + 1;
			if (!S_ISDIR(st[w.n - 1].st_mode)) {
				w.err = -ENOTDIR;
				break;
			}
		} else {
			comp = NULL;
		}
	}
	close_owned(cur, cur_owned);
out:
	memcpy(rp->payload, &w, sizeof w);
	rp->len = sizeof w + w.n * sizeof(struct stat) + w.linklen;
	return 0;
}

/* DIRSTAT (see proto.h): as many entries as fit in one reply. */
static int h_dirstat(struct req *rq, struct rep *rp)
{
	const struct gofer_srv_export *e = rq->e;
	const struct gofer_req_dirstat *f = rq->fixed;
	struct gofer_rep_dirstat h = { .next = f->pos };
	const size_t cap = GOFER_MAX_REP - sizeof(struct gofer_rhdr);
	size_t used = sizeof h, plen = strlen(rq->path);
	char dbuf[4096] __attribute__((aligned(8)));
	char full[VFS_PATH_MAX];
	long n;
	int full_page = 0;

	if (e->is_file)
		return -ENOTDIR;
	int dfd = oat2(e, e->rootfd, *rq->path ? rq->path : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
	if (dfd < 0)
		return dfd;
	if (f->pos && lseek(dfd, (off_t)f->pos, SEEK_SET) < 0) {
		int r = -errno;
		close(dfd);
		return r;
	}
	while (!full_page && (n = syscall(SYS_getdents64, dfd, dbuf, sizeof dbuf)) > 0) {
		for (long off = 0; off < n;) {
			struct { uint64_t ino; int64_t off; unsigned short reclen; unsigned char type; char name[]; }
				*d = (void *)(dbuf + off);
			off += d->reclen;
			size_t nl = strlen(d->name);
			size_t rec = sizeof(struct gofer_dirent) + ((nl + 7) & ~(size_t)7);
			struct gofer_dirent de = { .namelen = (uint32_t)nl };
			if (used + rec > cap) {
				full_page = 1;
				break;
			}
			if ((d->type != DT_REG && d->type != DT_DIR && d->type != DT_UNKNOWN) ||
			    !strcmp(d->name, ".") || !strcmp(d->name, "..") || nl > NAME_MAX ||
			    plen + 1 + nl >= sizeof full)
				goto next;
			snprintf(full, sizeof full, "%s%s%s", rq->path, plen ? "/" : "", d->name);
			if (is_hidden(e, full) || fstatat(dfd, d->name, &de.st, AT_SYMLINK_NOFOLLOW) < 0 ||
			    !(S_ISREG(de.st.st_mode) || S_ISDIR(de.st.st_mode)))
				goto next;
			memcpy(rp->payload + used, &de, sizeof de);
			memcpy(rp->payload + used + sizeof de, d->name, nl);
			memset(rp->payload + used + sizeof de + nl, 0, rec - sizeof de - nl);
			used += rec;
			h.n++;
next:
			h.next = (uint64_t)d->off;
		}
	}
	close(dfd);
	if (!full_page && n < 0)
		return -errno;
	h.done = !full_page;
	memcpy(rp->payload, &h, sizeof h);
	rp->len = used;
	return 0;
}

/* DEVOPEN (see proto.h): count opens of one memory device, each its own
 * open file description, as OPEN would make them one at a time (the same
 * flags: O_NOCTTY, O_NOFOLLOW, O_CLOEXEC; these devices never block an
 * open, so no O_NONBLOCK to take off again). Anything but a memory device
 * (1:3 null, 1:5 zero, 1:7 full, 1:8 random, 1:9 urandom) is EINVAL. */
static int h_devopen(struct req *rq, struct rep *rp)
{
	const struct gofer_req_devopen *f = rq->fixed;
	const struct gofer_srv_export *e = rq->e;
	struct stat st, st0;
	int r = 0;

	static const char *const memdevs[] = { "null", "zero", "full", "random", "urandom" };
	int known = 0;
	for (size_t i = 0; i < sizeof memdevs / sizeof *memdevs; i++)
		known |= !strcmp(rq->path, memdevs[i]);
	/* by name first: nothing else of /dev (tty, pts/) is even opened */
	if (e->kind != GOFER_EXPORT_DEV || !known ||
	    (f->flags & ~O_ACCMODE) || (f->flags & O_ACCMODE) == O_ACCMODE || f->count < 1 ||
	    f->count > GOFER_DEVOPEN_MAX)
		return -EINVAL;
	for (uint32_t i = 0; i < f->count; i++) {
		int fd = oat2(e, e->rootfd, rq->path, f->flags | O_NOCTTY | O_NOFOLLOW | O_CLOEXEC, 0);
		if (fd < 0) {
			r = fd;
			break;
		}
		unsigned mi = 0;
		if (fstat(fd, &st) < 0 || !S_ISCHR(st.st_mode) || major(st.st_rdev) != 1 ||
		    ((mi = minor(st.st_rdev)) != 3 && mi != 5 && mi != 7 && mi != 8 && mi != 9) ||
		    (i && (st.st_rdev != st0.st_rdev || st.st_ino != st0.st_ino))) {
			close(fd);
			r = -EINVAL;
			break;
		}
		if (!i) {
			st0 = st;
			rp->fd = fd;
		} else {
			rp->xfd[rp->nx++] = fd;
		}
	}
	if (r < 0) {
		if (rp->fd >= 0)
			close(rp->fd);
		rp->fd = -1;
		while (rp->nx)
			close(rp->xfd[--rp->nx]);
		return r;
	}
	memcpy(rp->payload, &st0, sizeof st0);
	rp->len = sizeof st0;
	return 0;
}

static int h_lstat(struct req *rq, struct rep *rp)
{
	struct stat st;
	const char *name;
	int owned, pfd, r = 0;

	if (!*rq->path) {
		if (fstat(rq->e->rootfd, &st) < 0)
			return -errno;
	} else {
		pfd = open_parent(rq->e, rq->path, &name, &owned);
		if (pfd < 0)
			return pfd;
		if (fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			r = -errno;
		close_owned(pfd, owned);
		if (r)
			return r;
	}
	memcpy(rp->payload, &st, sizeof st);
	rp->len = sizeof st;
	return 0;
}

#define OPEN_ALLOWED (O_ACCMODE | O_CREAT | O_EXCL | O_NOCTTY | O_TRUNC | \
		      O_APPEND | O_NONBLOCK | O_DSYNC | O_SYNC | O_DIRECT | \
		      O_LARGEFILE | O_DIRECTORY | O_NOFOLLOW | O_NOATIME | \
		      O_CLOEXEC | O_PATH | O_TMPFILE | FASYNC)

/* FIFO opens never block a gofer thread in open(2): the file is opened
 * O_NONBLOCK and the blocking semantics are emulated here, watching the
 * client's connection, so a client that gives up (the guest was interrupted:
 * it hangs up, see gofer_set_wait_hook) ends the wait and nothing is left
 * blocked. A reader's open returns once a writer has written or come and gone
 * (poll on the FIFO; Linux returns as soon as a writer opens); a writer's
 * open (ENXIO while there is no reader) is retried every FIFO_SLICE_MS. */
#define FIFO_SLICE_MS 10

/* 1: the client hung up (or sent something while it should be waiting). */
static int client_gone(int sock, int ms)
{
	struct pollfd p = { .fd = sock, .events = POLLIN | POLLRDHUP };
	int r = poll(&p, 1, ms);
	if (r < 0)
		return errno != EINTR;
	return r > 0;
}

/* Wait as Linux's blocking reader open does: not at all while a writer
 * holds the FIFO open (silent or not: one's own O_RDWR end too), else until
 * one opens it. fd is open O_NONBLOCK (no gofer thread ever blocks in
 * open(2)). A writer that is there: tee(2) of the FIFO into a scratch pipe
 * answers EAGAIN on an empty FIFO with a writer and 0 on one without, and
 * copies, not takes, what is in it (data: a writer has been there). One
 * that comes after the open: poll, POLLIN when it writes, POLLHUP when it
 * came and went (the FIFO's writer count moved since this open), and the
 * next tee (FIFO_SLICE_MS, doubling to 250 ms) when it opens and stays
 * silent. Before,
 * only data or a hang-up ended the wait: a reader's open beside its own
 * O_RDWR end, or beside a writer that had not written, waited for good
 * (sysfuzz's HANG; tests/syscalls/pipe.c). 0 or -EINTR. */
static int fifo_wait_writer(int sock, int fd)
{
	int sp[2] = { -1, -1 }, r, slice = FIFO_SLICE_MS;
	if (pipe2(sp, O_CLOEXEC | O_NONBLOCK) < 0)
		sp[0] = sp[1] = -1; /* (then data or a hang-up only, as before) */
	for (;;) {
		if (sp[1] >= 0) {
			ssize_t t = tee(fd, sp[1], 1, SPLICE_F_NONBLOCK);
			if (t > 0 || (t < 0 && errno == EAGAIN)) {
				r = 0;
				break;
			}
			if (t < 0 && errno != EINTR) {
				close(sp[0]);
				close(sp[1]);
				sp[0] = sp[1] = -1;
			}
		}
		struct pollfd p[2] = {
			{ .fd = sock, .events = POLLIN | POLLRDHUP },
			{ .fd = fd, .events = POLLIN },
		};
		int n = poll(p, 2, sp[1] >= 0 ? slice : -1);
		/* (a silent writer is seen within the slice: 10 ms, doubled up
		 * to 250 ms, so that hundreds of waiting readers stay cheap) */
		if (slice < 250)
			slice = slice * 2 > 250 ? 250 : slice * 2;
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || p[0].revents) {
			r = -EINTR;
			break;
		}
		if (p[1].revents) {
			r = 0;
			break;
		}
	}
	if (sp[0] >= 0) {
		close(sp[0]);
		close(sp[1]);
	}
	return r;
}

/* A blocking writer's open of a FIFO without a reader waits: fd is the
 * first try's answer; ENXIO on a FIFO is retried every FIFO_SLICE_MS until
 * a reader comes or the client is gone (-EINTR). */
static int fifo_wait(const struct req *rq, int pfd, const char *name, int flags,
		     mode_t cmode, int fd)
{
	struct stat st;

	while (fd == -ENXIO && fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	       S_ISFIFO(st.st_mode)) {
		if (client_gone(rq->sock, FIFO_SLICE_MS))
			return -EINTR;
		fd = oat2(rq->e, pfd, name, flags, cmode);
	}
	return fd;
}

static int h_open(struct req *rq, struct rep *rp)
{
	const struct gofer_req_open *f = rq->fixed;
	const struct gofer_srv_export *e = rq->e;
	int flags = f->flags, fd, pfd, owned, r = 0;
	int excl_create;
	const char *name;
	struct stat st;
	int want_nb = flags & O_NONBLOCK;
	int whole = 0;   /* opened by the whole path: the parent only on demand */

	if ((flags & ~OPEN_ALLOWED) || (flags & O_ACCMODE) == O_ACCMODE ||
	    (f->mode & ~07777u))
		return -EINVAL;
	if (flags & O_PATH) {
		/* openat2 takes nothing else with O_PATH */
		flags &= O_PATH | O_DIRECTORY | O_NOFOLLOW;
	} else {
		if (((flags & O_ACCMODE) != O_RDONLY ||
		     (flags & (O_CREAT | O_TRUNC | TMPFILE_BIT))) &&
		    !e->writable && e->kind != GOFER_EXPORT_DEV)
			return -EROFS;
		if (e->kind == GOFER_EXPORT_DEV && (flags & TMPFILE_BIT))
			return -EROFS;
		flags |= O_NOCTTY;
		/* never block here (see FIFO_SLICE_MS); an exclusive create
		 * or an O_TMPFILE open makes a regular file and cannot block,
		 * so it needs no O_NONBLOCK, nor the F_SETFL that takes it
		 * off again */
		if ((flags & (O_CREAT | O_EXCL)) != (O_CREAT | O_EXCL) && !(flags & TMPFILE_BIT))
			flags |= O_NONBLOCK;
	}
	flags |= O_NOFOLLOW | O_CLOEXEC;
	/* The object the sentry checked is named: open without truncating,
	 * make sure it is that object, then truncate (a name swapped meanwhile
	 * must not be truncated, nor opened, with our privilege). */
	int trunc = 0;
	if (f->ino && (flags & O_TRUNC)) {
		trunc = 1;
		flags &= ~O_TRUNC;
	}
	excl_create = (flags & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL);
	mode_t cmode = host_mode(e, f->mode);

	if (!*rq->path && !e->is_file) {
		/* the root directory itself */
		fd = oat2(e, e->rootfd, ".", flags, cmode);
		if (fd < 0)
			return fd;
		excl_create = 0;
		pfd = -1;
		owned = 0;
		name = NULL;
	} else if (*rq->path && !e->is_file && f->pino) {
		/* a create (the name was absent when the sentry checked its
		 * directory): made only in that directory, through its fd */
		pfd = open_checked_parent(e, rq->path, &name, &owned, f->pdev, f->pino);
		if (pfd < 0)
			return pfd;
		fd = oat2(e, pfd, name, flags, cmode);
		if (fd < 0) {
			close_owned(pfd, owned);
			return fd;
		}
	} else if (*rq->path && !e->is_file) {
		/* The whole path in one openat2 beneath the export root, with
		 * its rules: each component resolved as the parent's openat2
		 * and then the name's would resolve it (no symlink, no other
		 * mount, never above the root), one openat2 and one close
		 * less per open. The parent is opened only for what needs it:
		 * a blocking FIFO writer's wait, a rollback, O_RDONLY|O_TRUNC. */
		pfd = -1;
		owned = 0;
		name = NULL;
		fd = oat2(e, e->rootfd, rq->path, flags, cmode);
		if (fd == -ENXIO && !want_nb && (flags & O_ACCMODE) == O_WRONLY) {
			pfd = open_parent(e, rq->path, &name, &owned);
			if (pfd < 0)
				return pfd;
			fd = fifo_wait(rq, pfd, name, flags, cmode, fd);
		}
		if (fd < 0) {
			close_owned(pfd, owned);
			return fd;
		}
		whole = 1;
	} else {
		pfd = open_parent(e, rq->path, &name, &owned);
		if (pfd < 0)
			return pfd;
		if (!*rq->path) {
			/* file export: its own mount point in our "/" */
			struct open_how how = {
				.flags = (uint64_t)(unsigned)flags,
				.mode = (flags & O_CREAT) ? cmode : 0,
				.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
					   RESOLVE_NO_MAGICLINKS,
			};
			excl_create = 0;
			fd = syscall(SYS_openat2, pfd, name, &how, sizeof how);
			if (fd < 0)
				fd = -errno;
		} else {
			fd = oat2(e, pfd, name, flags, cmode);
			if (!want_nb && (flags & O_ACCMODE) == O_WRONLY)
				fd = fifo_wait(rq, pfd, name, flags, cmode, fd);
		}
		if (fd < 0) {
			close_owned(pfd, owned);
			return fd;
		}
	}
	if (fstat(fd, &st) < 0) {
		r = -errno;
		close(fd);
		if (whole && pfd < 0 && excl_create)
			pfd = open_parent(e, rq->path, &name, &owned);
		if (excl_create && pfd >= 0)
			unlinkat(pfd, name, 0);   /* roll back the create */
		close_owned(pfd, owned);
		return r;
	}
	if (f->ino && (st.st_ino != f->ino || st.st_dev != (dev_t)f->dev)) {
		close(fd);
		close_owned(pfd, owned);
		return -ESTALE;   /* not the object the sentry checked */
	}
	if ((flags & O_ACCMODE) != O_RDONLY && S_ISREG(st.st_mode) && host_files(e) &&
	    (r = drop_privs(fd, &st)) < 0) {
		close(fd);
		close_owned(pfd, owned);
		return r;
	}
	if (trunc && S_ISREG(st.st_mode)) {
		if ((flags & O_ACCMODE) != O_RDONLY) {
			r = ftruncate(fd, 0) < 0 ? -errno : 0;
		} else {
			/* O_RDONLY|O_TRUNC: a writer of the same object */
			struct stat wst;
			if (whole && pfd < 0) {
				pfd = open_parent(e, rq->path, &name, &owned);
				if (pfd < 0) {
					close(fd);
					return pfd;
				}
			}
			int w = (pfd >= 0 && name) ?
				oat2(e, pfd, name, O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0) :
				-EINVAL;
			r = w;
			if (w >= 0) {
				if (fstat(w, &wst) < 0 || wst.st_ino != st.st_ino || wst.st_dev != st.st_dev)
					r = -ESTALE;
				else
					r = ftruncate(w, 0) < 0 ? -errno : 0;
				close(w);
			}
		}
		if (r < 0) {
			close(fd);
			close_owned(pfd, owned);
			return r;
		}
		st.st_size = 0;
	}
	close_owned(pfd, owned);
	if (!(flags & O_PATH) && !want_nb) {
		if (S_ISFIFO(st.st_mode) && (flags & O_ACCMODE) == O_RDONLY &&
		    (r = fifo_wait_writer(rq->sock, fd)) < 0) {
			close(fd);
			return r;
		}
		/* the guest asked for a blocking file: take off the
		 * O_NONBLOCK added above, with the status flags it was opened
		 * with (what F_GETFL would say: F_SETFL changes only O_APPEND,
		 * O_NONBLOCK, O_DIRECT, O_NOATIME and FASYNC), one call */
		if ((flags & O_NONBLOCK) && fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0) {
			r = -errno;
			close(fd);
			return r;
		}
	}
	memcpy(rp->payload, &st, sizeof st);
	rp->len = sizeof st;
	rp->fd = fd;
	return 0;
}

static int h_readlink(struct req *rq, struct rep *rp)
{
	const char *name;
	int owned, pfd;
	ssize_t n;

	if (!*rq->path)
		return -EINVAL;
	pfd = open_parent(rq->e, rq->path, &name, &owned);
	if (pfd < 0)
		return pfd;
	n = readlinkat(pfd, name, rp->payload, PATH_MAX);
	if (n < 0)
		n = -errno;
	close_owned(pfd, owned);
	if (n < 0)
		return n;
	rp->len = n;
	return 0;
}

/* MKDIR, MKNOD and SYMLINK reply with the new node's lstat (nothing when it
 * is gone already): the sentry keys a made entry on it (syscalls/sys_file.c
 * own_new) without a walk of its own */
/* Directory pins (rootless cow exports, with the dentry shrinker). A shrink
 * (copy_up_dirs) makes overlayfs forget every directory inode nothing holds,
 * and one looked up again gets a new st_ino where the layers are two file
 * systems: the sandbox's virtual metadata of it (a made entry, set-id bits,
 * a copy's original owner: keyed by st_dev/st_ino in the sentry) would
 * name nothing. An inotify watch holds the inode (not the dentry): the
 * directory is looked up again with the same overlay inode and number. So
 * every directory that gets such metadata here is watched by srv->pin_fd
 * (IN_DELETE_SELF, events drained now and then): the ones the guest makes,
 * chmods, and the ones copied up by hand. None of those is a lower-only
 * directory (made: upper only; chmod and copy-up: merged), so no pin ever
 * keeps a directory from being copied up. At most srv->pin_max (a quarter
 * of the user's max_user_watches, 65,536 at most; then unpinned, as before:
 * renumbered at a shrink). The watch is by name from the
 * thread's own working directory (no procfs here; unshare of CLONE_FS once
 * per thread, as h_watch's). */
static _Thread_local int tl_own_fs;
static atomic_int pin_top;  /* the highest wd: the kernel's are increasing */

static void pin_dir(const struct gofer_srv_export *e, int dfd, const char *name)
{
	if (!e->cow || srv->pin_fd < 0 || srv->dshrink_fd < 0 || atomic_load(&pin_top) >= srv->pin_max)
		return;
	if (!tl_own_fs) {
		if (syscall(SYS_unshare, CLONE_FS) < 0)
			return;
		tl_own_fs = 1;
	}
	if (fchdir(dfd) < 0)
		return;
	int wd = inotify_add_watch(srv->pin_fd, name, IN_DELETE_SELF | IN_ONLYDIR | IN_DONT_FOLLOW);
	/* a working directory there would hold its dentry (and its parents') */
	(void)!fchdir(srv->basefd);
	int top = atomic_load(&pin_top);
	while (wd > top && !atomic_compare_exchange_weak(&pin_top, &top, wd))
		;
	if (wd > 0 && !(wd & 63)) {
		char buf[4096];  /* the events of removed ones: nothing to do */
		while (read(srv->pin_fd, buf, sizeof buf) > 0)
			;
	}
}

static void made_reply(struct rep *rp, int pfd, const char *name)
{
	struct stat st;

	if (fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		memcpy(rp->payload, &st, sizeof st);
		rp->len = sizeof st;
	}
}

static int h_mkdir(struct req *rq, struct rep *rp)
{
	const struct gofer_req_mode *f = rq->fixed;
	const char *name;
	int owned, pfd, r = 0;

	if (f->mode & ~07777u)
		return -EINVAL;
	if (!*rq->path)
		return -EEXIST;
	pfd = open_checked_parent(rq->e, rq->path, &name, &owned, f->pdev, f->pino);
	if (pfd < 0)
		return pfd;
	if (mkdirat(pfd, name, host_mode(rq->e, f->mode)) < 0)
		r = -errno;
	else {
		made_reply(rp, pfd, name);
		pin_dir(rq->e, pfd, name);
	}
	close_owned(pfd, owned);
	return r;
}

static int h_mknod(struct req *rq, struct rep *rp)
{
	const struct gofer_req_mode *f = rq->fixed;
	mode_t type = f->mode & S_IFMT;
	const char *name;
	int owned, pfd, r = 0;

	if (type == 0)
		type = S_IFREG;
	if (type == S_IFCHR || type == S_IFBLK)
		return -EPERM;
	if ((type != S_IFREG && type != S_IFIFO && type != S_IFSOCK) ||
	    (f->mode & ~(S_IFMT | 07777u)))
		return -EINVAL;
	if (!*rq->path)
		return -EEXIST;
	pfd = open_checked_parent(rq->e, rq->path, &name, &owned, f->pdev, f->pino);
	if (pfd < 0)
		return pfd;
	if (mknodat(pfd, name, type | host_mode(rq->e, f->mode & 07777), 0) < 0)
		r = -errno;
	else
		made_reply(rp, pfd, name);
	close_owned(pfd, owned);
	return r;
}

static int h_unlink(struct req *rq, struct rep *rp)
{
	const struct gofer_req_unlink *f = rq->fixed;
	const char *name;
	int owned, pfd, r = 0;

	if (f->flags & ~AT_REMOVEDIR)
		return -EINVAL;
	if (!*rq->path)
		return -EBUSY;
	pfd = open_parent(rq->e, rq->path, &name, &owned);
	if (pfd < 0)
		return pfd;
	/* only the object the sentry checked, in the directory it checked (a
	 * rename in the sandbox between its check and this would have another
	 * file removed: one in a directory the caller may not write, or in a
	 * sticky one), and relative to that verified directory fd: a swap of
	 * the directory after this check cannot redirect the unlinkat. */
	if ((r = parent_is(pfd, f->pdev, f->pino)) < 0 || (r = name_is(pfd, name, f->dev, f->ino)) < 0)
		;
	else if (unlinkat(pfd, name, f->flags) < 0)
		r = -errno;
	close_owned(pfd, owned);
	return r;
}

static int h_rename(struct req *rq, struct rep *rp)
{
	const struct gofer_req_two *f = rq->fixed;
	const char *oname, *nname;
	int oowned, nowned, opfd, npfd, r = 0;
	unsigned flags = f->flags, noreplace = 0;

	if ((f->flags & ~(RENAME_NOREPLACE | RENAME_EXCHANGE)) ||
	    f->flags == (RENAME_NOREPLACE | RENAME_EXCHANGE))
		return -EINVAL;
	if (!*rq->path || !*rq->str2)
		return -EBUSY;
	opfd = open_parent(rq->e, rq->path, &oname, &oowned);
	if (opfd < 0)
		return opfd;
	npfd = open_parent(rq->e, rq->str2, &nname, &nowned);
	if (npfd < 0) {
		close_owned(opfd, oowned);
		return npfd;
	}
	/* the source object in its directory, the destination's directory and
	 * what the name there was (the object it replaces or exchanges with,
	 * or nothing: then it must still be free, RENAME_NOREPLACE, and a name
	 * made meanwhile is walked and checked afresh, never replaced
	 * unchecked), all as the sentry checked them; the rename is relative
	 * to the two verified directory fds */
	if (f->tpino && !f->tino && !(flags & (RENAME_EXCHANGE | RENAME_NOREPLACE))) {
		flags |= RENAME_NOREPLACE;
		noreplace = 1;
	}
	if ((r = parent_is(opfd, f->pdev, f->pino)) < 0 || (r = parent_is(npfd, f->tpdev, f->tpino)) < 0 ||
	    (r = name_is(opfd, oname, f->dev, f->ino)) < 0 || (r = name_is(npfd, nname, f->tdev, f->tino)) < 0)
		;
	else if (renameat2(opfd, oname, npfd, nname, flags) < 0)
		r = errno == EEXIST && noreplace ? -ESTALE : -errno;
	close_owned(opfd, oowned);
	close_owned(npfd, nowned);
	return r;
}

static int h_symlink(struct req *rq, struct rep *rp)
{
	const char *name;
	int owned, pfd, r = 0;

	if (!*rq->str2)
		return -ENOENT;             /* as symlink(2) with "" */
	if (!*rq->path)
		return -EEXIST;
	const struct gofer_req_two *f = rq->fixed;
	pfd = open_checked_parent(rq->e, rq->path, &name, &owned, f->pdev, f->pino);
	if (pfd < 0)
		return pfd;
	if (symlinkat(rq->str2, pfd, name) < 0)
		r = -errno;
	else
		made_reply(rp, pfd, name);
	close_owned(pfd, owned);
	return r;
}

/* no new name for a set-id file or a device node of the host
 * (protected_hardlinks, without our override) */
static int link_refused(const struct stat *st)
{
	return S_ISCHR(st->st_mode) || S_ISBLK(st->st_mode) || (st->st_mode & S_ISUID) ||
	       ((st->st_mode & (S_ISGID | S_IXGRP)) == (S_ISGID | S_IXGRP));
}

/* path2 names an entry in the directory open_parent just opened for path
 * (cut at its last '/': name points past it): the same leading part, then
 * one '/' and a final component of its own */
static int same_parent(const char *path, const char *name, const char *path2)
{
	size_t plen = (size_t)(name - 1 - path);

	return strncmp(path2, path, plen) == 0 && path2[plen] == '/' && path2[plen + 1] &&
	       !strchr(path2 + plen + 1, '/');
}

static int h_link(struct req *rq, struct rep *rp)
{
	const struct gofer_req_two *f = rq->fixed;
	const char *oname, *nname;
	int oowned, nowned, opfd, npfd, r = 0;

	if (f->flags)
		return -EINVAL;
	if (!*rq->path)
		return -EPERM;
	if (!*rq->str2)
		return -EEXIST;
	opfd = open_parent(rq->e, rq->path, &oname, &oowned);
	if (opfd < 0)
		return opfd;
	if (oowned && same_parent(rq->path, oname, rq->str2)) {
		/* both names in one directory (git's link(objects/XX/tmp_obj_Y,
		 * objects/XX/<hash>)): that directory opened once, one fd for
		 * both, so both checks below are of the very directory the
		 * link is made in (one openat2, fstat and close less) */
		npfd = opfd;
		nowned = 0;
		nname = rq->str2 + (oname - rq->path);
	} else {
		npfd = open_parent(rq->e, rq->str2, &nname, &nowned);
		if (npfd < 0) {
			close_owned(opfd, oowned);
			return npfd;
		}
	}
	if ((r = parent_is(opfd, f->pdev, f->pino)) < 0)
		goto out;
	/* one fd checked once when the sentry named one directory twice */
	if (!(npfd == opfd && f->tpino == f->pino && f->tpdev == f->pdev) &&
	    (r = parent_is(npfd, f->tpdev, f->tpino)) < 0)
		goto out;
	if (f->ino) {
		/* the object the sentry checked, by an fd of it whose identity
		 * was compared: linked as itself (AT_EMPTY_PATH, the opener's
		 * right since Linux 6.10), never by a name that may lead to
		 * another file by then */
		struct stat st;
		int fd = open_checked(rq->e, opfd, oname, f->dev, f->ino, &st);
		if (fd < 0) {
			r = fd;
			goto out;
		}
		if (host_files(rq->e) && link_refused(&st))
			r = -EPERM;
		else if (linkat(fd, "", npfd, nname, AT_EMPTY_PATH) < 0) {
			int err = errno;
			struct stat now;
			if (err != ENOENT || fstat(fd, &now) < 0 || now.st_nlink == 0)
				r = -err;
			else if ((r = name_is(opfd, oname, f->dev, f->ino)) == 0 &&
				 linkat(opfd, oname, npfd, nname, 0) < 0)
				/* a kernel before 6.10 (no flink for the
				 * opener): by its name in the verified directory */
				r = -errno;
		}
		close(fd);
		goto done;
	}
	if (host_files(rq->e)) {
		struct stat st;
		if (fstatat(opfd, oname, &st, AT_SYMLINK_NOFOLLOW) < 0)
			r = -errno;
		else if (link_refused(&st))
			r = -EPERM;
	}
	if (!r && linkat(opfd, oname, npfd, nname, 0) < 0)
		r = -errno;
	if (!r && host_files(rq->e)) {
		/* the source may have been swapped since: check the new name */
		struct stat st;
		if (fstatat(npfd, nname, &st, AT_SYMLINK_NOFOLLOW) == 0 && link_refused(&st)) {
			unlinkat(npfd, nname, 0);
			r = -EPERM;
		}
	}
done:
	if (!r) {
		/* what the names are now, for the sentry's cache (git unlinks
		 * its temporary name right after linking the object's): the new
		 * name's lstat, then the old name's if it is still that file */
		struct stat st[2];
		size_t k = 0;
		if (fstatat(npfd, nname, &st[0], AT_SYMLINK_NOFOLLOW) == 0) {
			k = 1;
			if (fstatat(opfd, oname, &st[1], AT_SYMLINK_NOFOLLOW) == 0 &&
			    st[1].st_ino == st[0].st_ino && st[1].st_dev == st[0].st_dev)
				k = 2;
		}
		memcpy(rp->payload, st, k * sizeof *st);
		rp->len = k * sizeof *st;
	}
out:
	close_owned(opfd, oowned);
	close_owned(npfd, nowned);
	return r;
}

static int h_chmod(struct req *rq, struct rep *rp)
{
	const struct gofer_req_mode *f = rq->fixed;
	const char *name;
	int owned, pfd, r = 0;

	if (f->mode & ~07777u)
		return -EINVAL;
	if (f->ino && *rq->path && !rq->e->is_file) {
		/* the object the sentry checked, by an fd of it (a name
		 * swapped meanwhile is never changed), opened by its whole
		 * path beneath the export root in one openat2 (not its
		 * parent's, then its own: one openat2 and one close less) */
		struct stat st;
		int fd = open_checked(rq->e, rq->e->rootfd, rq->path, f->dev, f->ino, &st);
		if (fd < 0)
			r = fd;
		else if (S_ISLNK(st.st_mode))
			r = -EOPNOTSUPP;
		else if (syscall(__NR_fchmodat2, fd, "", host_mode(rq->e, f->mode), AT_EMPTY_PATH) < 0)
			r = -errno;
		else if (S_ISDIR(st.st_mode))
			pin_dir(rq->e, fd, ".");  /* its set-id bits are the sentry's */
		if (fd >= 0)
			close(fd);
		return r;
	}
	pfd = open_parent(rq->e, rq->path, &name, &owned);
	if (pfd < 0)
		return pfd;
	if (syscall(__NR_fchmodat2, pfd, name, host_mode(rq->e, f->mode),
		    AT_SYMLINK_NOFOLLOW) < 0)
		r = -errno;
	close_owned(pfd, owned);
	return r;
}

static int h_chown(struct req *rq, struct rep *rp)
{
	const struct gofer_req_chown *f = rq->fixed;
	const char *name;
	int owned, pfd, r = 0;

	if (host_files(rq->e))
		return -EPERM;
	pfd = open_parent(rq->e, rq->path, &name, &owned);
	if (pfd < 0)
		return pfd;
	if (fchownat(pfd, name, f->uid, f->gid, AT_SYMLINK_NOFOLLOW) < 0)
		r = -errno;
	close_owned(pfd, owned);
	return r;
}

static int h_truncate(struct req *rq, struct rep *rp)
{
	const struct gofer_req_truncate *f = rq->fixed;
	const char *name;
	int owned, pfd, fd, r = 0;
	struct stat st;

	if (f->size < 0)
		return -EINVAL;
	if (rq->e->is_file || !*rq->path) {
		/* the export root: through its mount point */
		pfd = open_parent(rq->e, rq->path, &name, &owned);
		if (pfd < 0)
			return pfd;
		struct open_how how = {
			.flags = O_WRONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY,
			.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
		};
		fd = syscall(SYS_openat2, pfd, name, &how, sizeof how);
		if (fd < 0)
			fd = -errno;
	} else {
		pfd = open_parent(rq->e, rq->path, &name, &owned);
		if (pfd < 0)
			return pfd;
		fd = oat2(rq->e, pfd, name, O_WRONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0);
	}
	close_owned(pfd, owned);
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0)
		r = -errno;
	else if (f->ino && (st.st_ino != f->ino || st.st_dev != (dev_t)f->dev))
		r = -ESTALE;   /* not the object the sentry checked */
	else if (S_ISDIR(st.st_mode))
		r = -EISDIR;
	else if (!S_ISREG(st.st_mode))
		r = -EINVAL;
	else if (ftruncate(fd, f->size) < 0)
		r = -errno;
	close(fd);
	return r;
}

static int h_utimens(struct req *rq, struct rep *rp)
{
	const struct gofer_req_utimens *f = rq->fixed;
	struct timespec ts[2] = {
		{ .tv_sec = f->sec[0], .tv_nsec = f->nsec[0] },
		{ .tv_sec = f->sec[1], .tv_nsec = f->nsec[1] },
	};
	const char *name;
	int owned, pfd, r = 0;
	struct stat st;

	if (f->flags & ~AT_SYMLINK_NOFOLLOW)
		return -EINVAL;
	if (f->ino && *rq->path && !rq->e->is_file) {
		/* the object the sentry checked, by an fd of it (by its whole
		 * path, as in h_chmod) */
		int fd = open_checked(rq->e, rq->e->rootfd, rq->path, f->dev, f->ino, &st);
		if (fd < 0)
			r = fd;
		else if (S_ISLNK(st.st_mode) && !(f->flags & AT_SYMLINK_NOFOLLOW))
			r = -ELOOP;
		else if (utimensat(fd, "", ts, AT_EMPTY_PATH) < 0)
			r = -errno;
		if (fd >= 0)
			close(fd);
		return r;
	}
	pfd = open_parent(rq->e, rq->path, &name, &owned);
	if (pfd < 0)
		return pfd;
	if (!(f->flags & AT_SYMLINK_NOFOLLOW)) {
		/* the gofer never follows: the sentry resolves symlinks */
		if (fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			r = -errno;
		else if (S_ISLNK(st.st_mode))
			r = -ELOOP;
	}
	if (!r && utimensat(pfd, name, ts, AT_SYMLINK_NOFOLLOW) < 0)
		r = -errno;
	close_owned(pfd, owned);
	return r;
}

static int h_statfs(struct req *rq, struct rep *rp)
{
	struct statfs sf;
	int fd, r = 0;

	if (!*rq->path) {
		if (fstatfs(rq->e->rootfd, &sf) < 0)
			return -errno;
	} else {
		if (rq->e->is_file)
			return -ENOTDIR;
		fd = oat2(rq->e, rq->e->rootfd, rq->path, O_PATH | O_NOFOLLOW | O_CLOEXEC, 0);
		if (fd < 0)
			return fd;
		if (fstatfs(fd, &sf) < 0)
			r = -errno;
		close(fd);
		if (r)
			return r;
	}
	/* A cow export: overlayfs reports its upper layer alone (an empty
	 * scratch: nothing used). The merged view: what the lower layer holds
	 * counts as used, what the upper can still take as free. */
	struct statfs lo;
	struct gofer_srv_export *e = (struct gofer_srv_export *)rq->e;
	if (e->cow && e->lowerfd >= 0 && !__atomic_load_n(&e->lower_used_set, __ATOMIC_ACQUIRE) &&
	    fstatfs(e->lowerfd, &lo) == 0) {
		/* once: the host file system's used space is not the guest's
		 * to watch (another tenant's writes moved it) */
		e->lower_used_bytes = (unsigned long long)(lo.f_blocks - lo.f_bfree) * (unsigned long long)lo.f_bsize;
		e->lower_used_files = lo.f_files > lo.f_ffree ? lo.f_files - lo.f_ffree : 0;
		__atomic_store_n(&e->lower_used_set, 1, __ATOMIC_RELEASE);
	}
	if (e->cow && __atomic_load_n(&e->lower_used_set, __ATOMIC_ACQUIRE) && sf.f_bsize > 0) {
		sf.f_blocks += e->lower_used_bytes / (unsigned long long)sf.f_bsize;
		sf.f_files += e->lower_used_files;
	}
	memcpy(rp->payload, &sf, sizeof sf);
	rp->len = sizeof sf;
	return 0;
}

/* ---- extended attributes: user.* only ----
 *
 * The host kernel's other namespaces are never reached from here: trusted.*
 * and security.* (a file capability, an SELinux label) and system.* (ACLs)
 * are -EOPNOTSUPP whatever the sentry asks, but a GETXATTR of a file's
 * system.posix_acl_access (the sentry's permission check reads it). The file is opened (never
 * following a final symlink) read-only, or write-only when it may not be
 * read, and the f*xattr call acts on that fd: the kernel's own permission
 * checks (read for get/list, write for set/remove) are the gofer's caller's.
 * Symlinks and special files carry no user.* attributes on Linux (get
 * ENODATA, set EPERM); they are never opened. */
#define XATTR_USER "user."
#define XATTR_ACL_ACCESS "system.posix_acl_access"

static int xattr_name_ok(const char *name)
{
	size_t l = strlen(name);

	if (l == 0 || l > XATTR_NAME_MAX)
		return -ERANGE;
	if (strncmp(name, XATTR_USER, sizeof XATTR_USER - 1) || l == sizeof XATTR_USER - 1)
		return -EOPNOTSUPP;
	/* overlayfs's own names (userxattr: opaque, redirect, whiteout...):
	 * a merged view refuses them itself; on a rw bind they would land on
	 * the host file, read as layer metadata wherever that tree is an
	 * overlay's layer (another sandbox's cow bind, an --overlay DIR):
	 * red team 15 */
	if (!strncmp(name, XATTR_USER "overlay.", sizeof XATTR_USER - 1 + 8))
		return -EOPNOTSUPP;
	/* moat's own (user.moat.vdev, the mark of a virtual device node the
	 * sentry sets: xattr_set_name_ok): before red-team round 24 the guest
	 * set, read, listed and removed it on any file, a host file of a rw
	 * bind too, where it stayed */
	if (!strncmp(name, XATTR_USER "moat.", sizeof XATTR_USER - 1 + 5))
		return -EOPNOTSUPP;
	return 0;
}

/* SETXATTR's names: the user.* ones, and the mark of a virtual device node
 * (syscalls/sys_file.c do_mknodat; the sentry refuses it to the guest),
 * which nothing reads back but the export (gofer/export.c vdev_marked) */
static int xattr_set_name_ok(const char *name)
{
	return strcmp(name, XATTR_USER "moat.vdev") ? xattr_name_ok(name) : 0;
}

/* 0 with an fd on rq->path, 1 for a file that has no user.* attributes
 * (symlink, special file), or -errno. */
static int xattr_open(struct req *rq, int *fd)
{
	const char *name;
	int owned, pfd, r;
	struct stat st, st2;

	*fd = -1;
	pfd = open_parent(rq->e, rq->path, &name, &owned);
	if (pfd < 0)
		return pfd;
	if (fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		r = -errno;
		goto out;
	}
	if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
		r = 1;
		goto out;
	}
	/* read-only, or write-only for a file the caller may only write */
	for (int i = 0; i < 2; i++) {
		int fl = (i ? O_WRONLY : O_RDONLY) | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC;
		if (!*rq->path || rq->e->is_file) {
			/* the export root: through its mount point */
			struct open_how how = {
				.flags = (uint64_t)fl,
				.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
			};
			r = (int)syscall(SYS_openat2, pfd, name, &how, sizeof how);
			if (r < 0)
				r = -errno;
		} else {
			r = oat2(rq->e, pfd, name, fl, 0);
		}
		if (r != -EACCES || !S_ISREG(st.st_mode))
			break;
	}
	if (r < 0)
		goto out;
	*fd = r;
	r = 0;
	/* swapped for something else between the stat and the open, or not
	 * the object the sentry checked */
	const struct gofer_req_xattr *xf = rq->fixed;
	if (fstat(*fd, &st2) < 0 || st2.st_dev != st.st_dev || st2.st_ino != st.st_ino ||
	    (xf->ino && (st2.st_ino != xf->ino || st2.st_dev != (dev_t)xf->dev))) {
		close(*fd);
		*fd = -1;
		r = -ESTALE;
	}
out:
	close_owned(pfd, owned);
	return r;
}

/* PATHOF: name the directory infd by walking ".." up to the export's root,
 * finding each step's name by its identity in the parent's listing (getcwd
 * as user space does it). Read-only: O_PATH opens of "..", listings opened
 * through Landlock like any other, fstatat of the entries. A directory that
 * is not beneath this export's root (the walk reaches a root of its own
 * first) is -ESTALE. */
static int h_pathof(struct req *rq, struct rep *rp)
{
	const struct gofer_srv_export *e = rq->e;
	char *buf = rp->payload, *end = buf + VFS_PATH_MAX - 1, *p = end;
	struct stat root, cur, par;
	int fd, r = 0;
	static const struct open_how up = { .flags = O_PATH | O_DIRECTORY | O_CLOEXEC };

	if (rq->infd < 0 || *rq->path || e->is_file)
		return -EINVAL;
	if (fstat(e->rootfd, &root) < 0 || fstat(rq->infd, &cur) < 0)
		return -errno;
	if (!S_ISDIR(cur.st_mode))
		return -ENOTDIR;
	if (cur.st_nlink == 0)
		return -ENOENT;
	fd = fcntl(rq->infd, F_DUPFD_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	for (int depth = 0; !(cur.st_dev == root.st_dev && cur.st_ino == root.st_ino); depth++) {
		long pfd = syscall(SYS_openat2, fd, "..", &up, sizeof up);
		if (pfd < 0) {
			r = -errno;
			break;
		}
		close(fd);
		fd = (int)pfd;
		if (fstat(fd, &par) < 0) {
			r = -errno;
			break;
		}
		if ((par.st_dev == cur.st_dev && par.st_ino == cur.st_ino) || depth > VFS_PATH_MAX / 2) {
			r = -ESTALE;    /* a root that is not the export's */
			break;
		}
		/* the listing: opened read-only through the export rules */
		struct open_how rd = { .flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC };
		long dfd = syscall(SYS_openat2, fd, ".", &rd, sizeof rd);
		if (dfd < 0) {
			r = -errno;
			break;
		}
		char dbuf[4096] __attribute__((aligned(8)));
		int found = 0;
		long n;
		while (!found && (n = syscall(SYS_getdents64, (int)dfd, dbuf, sizeof dbuf)) > 0) {
			for (long off = 0; off < n && !found;) {
				struct { uint64_t ino; int64_t off; unsigned short reclen; unsigned char type; char name[]; }
					*d = (void *)(dbuf + off);
				off += d->reclen;
				struct stat est;
				if ((d->type != DT_DIR && d->type != DT_UNKNOWN) || !strcmp(d->name, ".") ||
				    !strcmp(d->name, "..") ||
				    fstatat(fd, d->name, &est, AT_SYMLINK_NOFOLLOW) < 0 ||
				    est.st_dev != cur.st_dev || est.st_ino != cur.st_ino)
					continue;
				size_t l = strlen(d->name);
				if ((size_t)(p - buf) < l + 1) {
					r = -ENAMETOOLONG;
					break;
				}
				p -= l;
				memcpy(p, d->name, l);
				*--p = '/';
				found = 1;
			}
		}
		close((int)dfd);
		if (!r && !found)
			r = -ENOENT;    /* moved away meanwhile, or removed */
		if (r)
			break;
		cur = par;
	}
	close(fd);
	if (r)
		return r;
	if (p < end)
		p++;            /* no leading '/' */
	size_t l = (size_t)(end - p);
	memmove(buf, p, l);
	if (l && is_hidden(e, buf))
		return -ENOENT;
	rp->len = l;
	return 0;
}

/* LINKFD: give the unnamed file infd (an O_TMPFILE file the gofer made, not
 * O_EXCL: the kernel refuses any other file with no link) the name path. */
static int h_linkfd(struct req *rq, struct rep *rp)
{
	const char *name;
	int owned, pfd, r = 0;
	struct stat st;

	(void)rp;
	if (rq->infd < 0)
		return -EINVAL;
	if (!*rq->path)
		return -EEXIST;
	if (fstat(rq->infd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode) || st.st_nlink != 0 || (st.st_mode & (S_ISUID | S_ISGID)))
		return -ENOENT;
	const struct gofer_req_open *f = rq->fixed;
	pfd = open_checked_parent(rq->e, rq->path, &name, &owned, f->pdev, f->pino);
	if (pfd < 0)
		return pfd;
	if (linkat(rq->infd, "", pfd, name, AT_EMPTY_PATH) < 0)
		r = -errno;
	close_owned(pfd, owned);
	return r;
}

/* WATCH: the sentry asks here for every inotify watch, after its own
 * permission check on the guest's credentials. infd is the
 * guest's inotify instance. The watch is on the object the sentry checked
 * (ino, dev: -ESTALE for another), a directory as itself, anything else by
 * name in its parent with IN_DONT_FOLLOW, from a short-lived thread with a
 * working directory of its own (fchdir to the fd; no procfs here). Since red
 * team 72 every watch comes here (the sentry has no fchdir: sys_file.c
 * add_watch) and the pins of fs/vfs.c park_guest, on the sentry's own
 * inotify instance. */
static int h_watch(struct req *rq, struct rep *rp)
{
	const struct gofer_req_open *f = rq->fixed;
	uint32_t mask = (uint32_t)f->flags & ~IN_ONLYDIR; /* the sentry's walk checked the type */
	const char *name;
	struct stat st;
	int owned, pfd, fd, r;

	if (rq->infd < 0 || !f->ino)
		return -EINVAL;
	/* a directory from the export's root (the root itself as ".": its
	 * slot in the gofer's base is another mount, RESOLVE_NO_XDEV's
	 * EXDEV), anything else by name from its parent */
	fd = open_checked(rq->e, rq->e->rootfd, *rq->path ? rq->path : ".", f->dev, f->ino, &st);
	if (fd < 0)
		return fd;
	if (S_ISDIR(st.st_mode)) {
		r = watch_at(rq->infd, fd, ".", mask);
		close(fd);
	} else {
		close(fd);
		pfd = open_parent(rq->e, rq->path, &name, &owned);
		if (pfd < 0)
			return pfd;
		fd = open_checked(rq->e, pfd, name, f->dev, f->ino, &st);
		if (fd < 0) {
			close_owned(pfd, owned);
			return fd;
		}
		r = S_ISDIR(st.st_mode) ? -ESTALE : watch_at(rq->infd, pfd, name, mask | IN_DONT_FOLLOW);
		close(fd);
		close_owned(pfd, owned);
	}
	if (r < 0)
		return r;
	int32_t wd = r;
	memcpy(rp->payload, &wd, sizeof wd);
	rp->len = sizeof wd;
	return 0;
}

/* CHOWNFD: give the unnamed file infd (an O_TMPFILE file the gofer made in
 * this private export, not yet linked) its creator's ids, as CHOWN does
 * for a named one; anything else (a host file, a named file, another file
 * system's) is refused. */
static int h_chownfd(struct req *rq, struct rep *rp)
{
	const struct gofer_req_chown *f = rq->fixed;
	struct stat st, root;

	(void)rp;
	if (host_files(rq->e))
		return -EPERM;
	if (rq->infd < 0 || *rq->path)
		return -EINVAL;
	if (fstat(rq->infd, &st) < 0 || fstat(rq->e->rootfd, &root) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode) || st.st_nlink != 0 || st.st_dev != root.st_dev)
		return -EPERM;
	return fchown(rq->infd, f->uid, f->gid) < 0 ? -errno : 0;
}

/* infd is a terminal of this DEV export's own devpts instance (its "pts":
 * a master or a slave of the guest's ptys, -t's pair): 0, else -EPERM (a
 * terminal of any other file system: the caller's, the host's ptys) */
static int pts_of_sandbox(struct req *rq)
{
	struct stat st, pts;
	struct statfs sf;

	if (rq->e->kind != GOFER_EXPORT_DEV || rq->infd < 0 || *rq->path)
		return -EINVAL;
	if (fstat(rq->infd, &st) < 0)
		return -errno;
	if (!S_ISCHR(st.st_mode))
		return -ENOTTY;
	if (fstatat(rq->e->rootfd, "pts", &pts, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(pts.st_mode) ||
	    fstatfs(rq->infd, &sf) < 0 || sf.f_type != 0x1cd1 /* DEVPTS_SUPER_MAGIC */ ||
	    st.st_dev != pts.st_dev)
		return -EPERM;
	return 0;
}

/* WINSZ: the window size of infd, a terminal of this DEV export's own
 * devpts instance (its "pts": a master or a slave of the guest's ptys, -t's
 * pair), as TIOCSWINSZ would set it; a terminal of any other file system
 * (the caller's, the host's ptys) is refused. The gofer holds no terminal
 * (its stdio is /dev/null), and the sentry no longer may make the call
 * (red team 71: its filter allowed TIOCSWINSZ on any fd, the caller's
 * terminal on fds 0-2 among them). */
static int h_winsz(struct req *rq, struct rep *rp)
{
	const struct gofer_req_winsz *f = rq->fixed;

	(void)rp;
	int r = pts_of_sandbox(rq);
	if (r < 0)
		return r;
	struct winsize ws = { .ws_row = f->row, .ws_col = f->col, .ws_xpixel = f->xpixel,
			      .ws_ypixel = f->ypixel };
	return ioctl(rq->infd, TIOCSWINSZ, &ws) < 0 ? -errno : 0;
}

/* PTSCTL: a pty master's request on infd, a terminal of the sandbox's own
 * devpts (checked as WINSZ's): the file the sentry pinned and checked, not
 * whatever the guest's fd number holds by the time a native call would run
 * (pts39: a thread's dup2 of the caller's pty master given as stdio onto
 * the number reached the caller's terminal). TIOCSIG's signal goes to the
 * slave's foreground group (the kernel's kill_pgrp, no permission check:
 * the same from here as from the guest); TIOCPKT and TIOCSPTLCK set the
 * pty's state; TIOCGPTPEER opens the slave, O_NOCTTY always (the gofer
 * takes no controlling terminal) and O_CLOEXEC (the sentry installs it
 * with the guest's), replied as rp->fd. */
static int h_ptsctl(struct req *rq, struct rep *rp)
{
	const struct gofer_req_ptsctl *f = rq->fixed;

	int r = pts_of_sandbox(rq);
	if (r < 0)
		return r;
	int v = f->arg;
	switch (f->cmd) {
	case TIOCSIG:
		return ioctl(rq->infd, TIOCSIG, v) < 0 ? -errno : 0;
	case TIOCPKT:
	case TIOCSPTLCK:
		return ioctl(rq->infd, f->cmd, &v) < 0 ? -errno : 0;
	case TIOCGPTPEER:
		rp->fd = ioctl(rq->infd, TIOCGPTPEER, (v & ~O_CLOEXEC) | O_NOCTTY | O_CLOEXEC);
		return rp->fd < 0 ? -errno : 0;
	default:
		return -EINVAL;
	}
}

/* MEMFDATTR: the mode or times of infd, a memfd of the guest's: a regular
 * file of no name on the kernel's internal shmem mount (the st_dev of a
 * memfd the gofer made at start-up, which no mount of a path shares: /tmp
 * and /dev/shm are tmpfs instances of their own). Anything else, a host
 * file of the caller's above all, is refused: the sentry's filter has
 * neither fchmod nor futimens, as rootless a file of the caller's it
 * holds (stdio, an fd from pidfd_getfd) is its uid's. */
static int h_memfdattr(struct req *rq, struct rep *rp)
{
	const struct gofer_req_memfdattr *f = rq->fixed;
	struct stat st;

	(void)rp;
	if (rq->infd < 0 || *rq->path || f->utimes < 0 || f->utimes > 1)
		return -EINVAL;
	if (fstat(rq->infd, &st) < 0)
		return -errno;
	if (!srv->memfd_dev || st.st_dev != srv->memfd_dev || !S_ISREG(st.st_mode) ||
	    st.st_nlink != 0)
		return -EPERM;
	if (!f->utimes)
		return fchmod(rq->infd, f->mode & 07777 & ~(mode_t)(S_ISUID | S_ISGID)) < 0 ? -errno : 0;
	struct timespec ts[2] = { { .tv_sec = f->sec[0], .tv_nsec = f->nsec[0] },
				  { .tv_sec = f->sec[1], .tv_nsec = f->nsec[1] } };
	return futimens(rq->infd, ts) < 0 ? -errno : 0;
}

/* GET and LIST replies: uint32_t length, then (size != 0) the bytes,
 * already in place at rp->payload + 4 (room: GOFER_MAX_REP) */
_Static_assert(GOFER_MAX_REP >= sizeof(struct gofer_rhdr) + 4 + GOFER_XATTR_LIST_MAX,
	       "xattr replies fit");
static int xattr_reply(struct rep *rp, size_t n, size_t size)
{
	uint32_t len = (uint32_t)n;

	memcpy(rp->payload, &len, sizeof len);
	rp->len = sizeof len + (size ? n : 0);
	return 0;
}

static int h_getxattr(struct req *rq, struct rep *rp)
{
	const struct gofer_req_xattr *f = rq->fixed;
	char *val = rp->payload + sizeof(uint32_t);
	ssize_t n;
	int fd, r;

	if (f->size > GOFER_XATTR_MAX || f->flags)
		return -EINVAL;
	/* and a file's access ACL, read only: the sentry's permission check
	 * (fs/vfs.c acl_permission), never the guest's (system.* is
	 * EOPNOTSUPP to it) */
	r = strcmp(rq->str2, XATTR_ACL_ACCESS) ? xattr_name_ok(rq->str2) : 0;
	if (r)
		return r;
	r = xattr_open(rq, &fd);
	if (r)
		return r > 0 ? -ENODATA : r;
	n = fgetxattr(fd, rq->str2, f->size ? val : NULL, f->size);
	r = n < 0 ? -errno : 0;
	close(fd);
	if (r == -ERANGE && f->size == GOFER_XATTR_MAX)
		r = -E2BIG;           /* more than the protocol carries */
	else if (!r && !f->size && n > GOFER_XATTR_MAX)
		r = -E2BIG;
	if (r)
		return r;
	return xattr_reply(rp, (size_t)n, f->size);
}

static int h_listxattr(struct req *rq, struct rep *rp)
{
	const struct gofer_req_xattr *f = rq->fixed;
	char *all = rp->payload + sizeof(uint32_t);
	size_t k = 0;
	ssize_t n;
	int fd, r;

	if (f->size > GOFER_XATTR_LIST_MAX || f->flags)
		return -EINVAL;
	r = xattr_open(rq, &fd);
	if (r)
		return r > 0 ? xattr_reply(rp, 0, 0) : r;
	n = flistxattr(fd, all, GOFER_XATTR_LIST_MAX);
	r = n < 0 ? -errno : 0;
	close(fd);
	if (r)
		return r == -ERANGE ? -E2BIG : r;
	/* user.* names only (xattr_name_ok's: not overlayfs's), compacted in place */
	for (ssize_t i = 0; i < n; ) {
		size_t l = strnlen(all + i, (size_t)(n - i));
		if (l < (size_t)(n - i) && xattr_name_ok(all + i) == 0) {
			memmove(all + k, all + i, l + 1);
			k += l + 1;
		}
		i += (ssize_t)l + 1;
	}
	if (f->size && k > f->size)
		return -ERANGE;
	return xattr_reply(rp, k, f->size);
}

static int h_setxattr(struct req *rq, struct rep *rp)
{
	const struct gofer_req_xattr *f = rq->fixed;
	int fd, r;

	(void)rp;
	if (f->flags & ~(unsigned)(XATTR_CREATE | XATTR_REPLACE))
		return -EINVAL;
	r = xattr_set_name_ok(rq->str2);
	if (r)
		return r;
	r = xattr_open(rq, &fd);
	if (r)
		return r > 0 ? -EPERM : r;
	r = fsetxattr(fd, rq->str2, rq->blob, f->size, (int)f->flags) < 0 ? -errno : 0;
	close(fd);
	return r;
}

static int h_removexattr(struct req *rq, struct rep *rp)
{
	int fd, r;

	(void)rp;
	r = xattr_name_ok(rq->str2);
	if (r)
		return r;
	r = xattr_open(rq, &fd);
	if (r)
		return r > 0 ? -EPERM : r;
	r = fremovexattr(fd, rq->str2) < 0 ? -errno : 0;
	close(fd);
	return r;
}

/* ---- copy-up by hand (COPYUP, and lower files with several links) ---- */

/* The connection threads' stacks are CONN_STACK: the copy-up's buffers are
 * on the heap, not in its frames (a copy-up in a directory copy-up once ran
 * past the stack in the ASan build). */
#define COPY_CHUNK 65536

/* Copy src's user.* attributes to dst. 0, -ENOSPC, -ENOMEM. */
static int copy_user_xattrs(int src, int dst)
{
	char *names = malloc(GOFER_XATTR_LIST_MAX), *val = malloc(GOFER_XATTR_MAX);
	int r = 0;

	if (!names || !val) {
		free(names);
		free(val);
		return -ENOMEM;
	}
	ssize_t nl = flistxattr(src, names, GOFER_XATTR_LIST_MAX);
	for (ssize_t i = 0; nl > 0 && i < nl && !r; i += (ssize_t)strlen(names + i) + 1) {
		if (strncmp(names + i, "user.", 5))
			continue;
		ssize_t vl = fgetxattr(src, names + i, val, GOFER_XATTR_MAX);
		if (vl >= 0 && fsetxattr(dst, names + i, val, (size_t)vl, 0) < 0 && errno == ENOSPC)
			r = -ENOSPC;
	}
	free(names);
	free(val);
	return r;
}

/* Copy the regular file at path (a cow export's, merged view) up by hand:
 * a new file beside it (its directory copied up by overlayfs, as for any
 * create) with the data, mode (no set-id bits), user.* attributes and
 * times, renamed over the name. dev/ino: the object checked (0: any).
 * own: give the copy the original's owner and group (fchown; an id the
 * namespace does not map fails: nothing is changed). st[0]: the file
 * before, st[1]: the copy. 0, -errno (-EOVERFLOW: not a regular file). */
static int copy_up(const struct gofer_srv_export *e, const char *path, uint64_t dev, uint64_t ino,
		   int own, struct stat st[2])
{
	char buf[VFS_PATH_MAX], tmp[64];
	const char *name;
	int owned, pfd, src = -1, dst = -1, r = 0;
	char *data = NULL; /* the read/write fallback's buffer (not on the stack) */

	if (strlen(path) >= sizeof buf)
		return -ENAMETOOLONG;
	strcpy(buf, path);
	pfd = open_parent(e, buf, &name, &owned);
	if (pfd < 0)
		return pfd;
	src = oat2(e, pfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY, 0);
	if (src < 0) {
		r = src;
		src = -1;
		goto out;
	}
	if (fstat(src, &st[0]) < 0) {
		r = -errno;
		goto out;
	}
	if (ino && (st[0].st_ino != ino || st[0].st_dev != (dev_t)dev)) {
		r = -ESTALE;
		goto out;
	}
	if (!S_ISREG(st[0].st_mode)) {
		r = -EOVERFLOW;
		goto out;
	}
	for (int i = 0; i < 16 && dst < 0; i++) {
		uint64_t rnd;
		if (getrandom(&rnd, sizeof rnd, 0) != sizeof rnd)
			rnd = (uint64_t)st[0].st_ino * 2654435761u + (uint64_t)i;
		snprintf(tmp, sizeof tmp, ".moat-copyup.%016llx", (unsigned long long)rnd);
		dst = oat2(e, pfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (dst == -EEXIST)
			dst = -1;
		else if (dst < 0) {
			r = dst;
			dst = -1;
			goto out;
		}
	}
	if (dst < 0) {
		r = -EEXIST;
		goto out;
	}
	if (own && fchown(dst, st[0].st_uid, st[0].st_gid) < 0) {
		r = -errno;
		goto unlink;
	}
	/* the data: copy_file_range, else read and write (across file systems) */
	for (off_t done = 0; done < st[0].st_size;) {
		ssize_t n = syscall(SYS_copy_file_range, src, NULL, dst, NULL,
				    (size_t)(st[0].st_size - done), 0);
		if (n < 0 && (errno == EXDEV || errno == EINVAL || errno == ENOSYS ||
			      errno == EOPNOTSUPP || errno == EPERM)) {
			if (!data && !(data = malloc(COPY_CHUNK))) {
				r = -ENOMEM;
				goto unlink;
			}
			n = read(src, data, COPY_CHUNK);
			if (n > 0 && write(dst, data, (size_t)n) != n)
				n = -1;
		}
		if (n < 0) {
			if (errno == EINTR)
				continue;
			r = -errno;
			goto unlink;
		}
		if (n == 0)
			break;  /* shorter than it was */
		done += n;
	}
	/* user.* attributes (overlayfs's own are not listed to us) */
	r = copy_user_xattrs(src, dst);
	if (r)
		goto unlink;
	struct timespec ts[2] = { st[0].st_atim, st[0].st_mtim };
	if (fchmod(dst, host_mode(e, st[0].st_mode & 07777)) < 0 || futimens(dst, ts) < 0) {
		r = -errno;
		goto unlink;
	}
	if (renameat(pfd, tmp, pfd, name) < 0) {
		r = -errno;
		goto unlink;
	}
	if (fstat(dst, &st[1]) < 0)
		r = -errno;
	goto out;
unlink:
	unlinkat(pfd, tmp, 0);
out:
	free(data);
	if (src >= 0)
		close(src);
	if (dst >= 0)
		close(dst);
	close_owned(pfd, owned);
	return r;
}

/* The names of multi-linked lower files of a cow export: built once per
 * export, when a copy-up first needs it, by a walk of the lower layer
 * (getdents64 only: d_ino), keeping the regular files whose inode number
 * appears under more than one name. Sorted by inode number. */
struct lname {
	ino_t ino;
	char *rel;
};
static struct lindex {
	int state;             /* 0: not built, 1: built, -1: could not be */
	size_t n;
	struct lname *v;
} lindex[GOFER_MAX_EXPORTS];
static pthread_mutex_t lindex_lock = PTHREAD_MUTEX_INITIALIZER;

#define LINDEX_MAX_NAMES (4u << 20)   /* a bigger lower tree keeps no links */

static int lname_cmp(const void *a, const void *b)
{
	const struct lname *x = a, *y = b;

	return x->ino < y->ino ? -1 : x->ino > y->ino;
}

static int lindex_build(const struct gofer_srv_export *e, struct lindex *li)
{
	size_t cap = 1024, n = 0, scap = 64, sn = 0;
	struct lname *v = malloc(cap * sizeof *v);
	char **stack = malloc(scap * sizeof *stack);
	int ok = v && stack;

	if (stack)
		stack[sn++] = strdup("");
	while (ok && sn) {
		char *dir = stack[--sn];
		struct open_how how = { .flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC,
					.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
						   RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV };
		int dfd = !dir ? -1 : (int)syscall(SYS_openat2, e->lowerfd, *dir ? dir : ".", &how, sizeof how);
		if (!dir) {
			ok = 0;
			break;
		}
		char dbuf[8192];
		long nb;
		while (dfd >= 0 && ok && (nb = syscall(SYS_getdents64, dfd, dbuf, sizeof dbuf)) > 0) {
			for (long off = 0; off < nb && ok;) {
				struct dirent64 *d = (struct dirent64 *)(dbuf + off);
				off += d->d_reclen;
				if (!strcmp(d->d_name, ".") || !strcmp(d->d_name, ".."))
					continue;
				if (d->d_type != DT_DIR && d->d_type != DT_REG)
					continue;  /* DT_UNKNOWN: not on the file systems we serve */
				size_t l = strlen(dir) + strlen(d->d_name) + 2;
				char *rel = l < VFS_PATH_MAX ? malloc(l) : NULL;
				if (!rel)
					continue;
				size_t dl = strlen(dir);
				memcpy(rel, dir, dl);
				if (dl)
					rel[dl++] = '/';
				memcpy(rel + dl, d->d_name, strlen(d->d_name) + 1);
				if (d->d_type == DT_DIR) {
					if (sn == scap) {
						char **ns = realloc(stack, (scap *= 2) * sizeof *stack);
						if (!ns) {
							free(rel);
							ok = 0;
							break;
						}
						stack = ns;
					}
					stack[sn++] = rel;
					continue;
				}
				if (n == cap) {
					struct lname *nv = cap >= LINDEX_MAX_NAMES ? NULL :
						realloc(v, (cap *= 2) * sizeof *v);
					if (!nv) {
						free(rel);
						ok = 0;
						break;
					}
					v = nv;
				}
				v[n].ino = d->d_ino;
				v[n++].rel = rel;
			}
		}
		if (dfd >= 0)
			close(dfd);
		free(dir);
	}
	while (stack && sn)
		free(stack[--sn]);
	free(stack);
	if (!ok) {
		for (size_t i = 0; i < n; i++)
			free(v[i].rel);
		free(v);
		return -1;
	}
	qsort(v, n, sizeof *v, lname_cmp);
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		int dup = (i > 0 && v[i - 1].ino == v[i].ino) || (i + 1 < n && v[i + 1].ino == v[i].ino);
		if (dup)
			v[k++] = v[i];
		else
			free(v[i].rel);
	}
	li->v = k ? realloc(v, k * sizeof *v) : (free(v), NULL);
	if (k && !li->v)
		li->v = v;
	li->n = k;
	return 0;
}

/* The lower layer's own number of a lower file the overlay shows as ino:
 * with xino (setup.c mount_cow) the overlay sets the layer in the top bit
 * (one lower layer beside the upper one: fsid 1, two xino bits); an upper
 * file's number and one that did not fit are the file system's own. */
static ino_t lower_ino(ino_t ino)
{
	return ino & ~(1ULL << 63);
}

/* The first entry of ino in export i's index (built if need be), or NULL;
 * *cnt: how many. Entries stay valid for the gofer's life. */
static const struct lname *lindex_find(const struct gofer_srv_export *e, ino_t ino, size_t *cnt)
{
	struct lindex *li = &lindex[e - srv->exp];
	const struct lname *r = NULL;

	pthread_mutex_lock(&lindex_lock);
	if (li->state == 0)
		li->state = lindex_build(e, li) == 0 ? 1 : -1;
	if (li->state == 1 && li->n) {
		size_t lo = 0, hi = li->n;
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;
			if (li->v[mid].ino < ino)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < li->n && li->v[lo].ino == ino) {
			r = &li->v[lo];
			size_t c = 0;
			while (lo + c < li->n && li->v[lo + c].ino == ino)
				c++;
			*cnt = c;
		}
	}
	pthread_mutex_unlock(&lindex_lock);
	return r;
}

/* Is rel present in the cow export's upper layer (copied up, or new)? */
static int in_upper(const struct gofer_srv_export *e, const char *rel)
{
	struct stat st;
	struct open_how how = { .flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
				.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
	int fd = (int)syscall(SYS_openat2, e->upperfd, rel, &how, sizeof how);

	if (fd < 0)
		return errno != ENOENT;  /* when in doubt: overlayfs's own copy-up */
	int r = fstat(fd, &st) == 0;
	close(fd);
	return r;
}

/* lstat of rel beneath the export's root, with its rules (no symlink on
 * the way: a name the guest swapped for one never leads out) */
static int stat_beneath(const struct gofer_srv_export *e, const char *rel, struct stat *st)
{
	int fd = oat2(e, e->rootfd, rel, O_PATH | O_NOFOLLOW | O_CLOEXEC, 0);

	if (fd < 0)
		return fd;
	int r = fstat(fd, st) < 0 ? -errno : 0;
	close(fd);
	return r;
}

/* Copy-on-write hard links (and privileged files: privileged_lower).
 * overlayfs (index=off, see ARCHITECTURE Known
 * gaps) copies up one name of a multi-linked lower file, and the others
 * keep the old content. Before a call overlayfs would copy up for (a write
 * open, chmod, utimes, truncate, xattr change, link, rename) of such a
 * file, the gofer copies it up itself, with its owner, and links every
 * other name of it in the lower layer that still shows that file to the
 * copy (a link beside it, renamed over the name), so the names stay one
 * file. The call then goes on naming the copy: *dev and *ino, the object the
 * sentry checked, become the copy's. Anything it cannot do leaves the call
 * to overlayfs as before. */
static void link_others(const struct gofer_srv_export *e, const char *rel, const struct lname *names,
			size_t cnt, const struct stat st[2]);

/* A lower regular file overlayfs must not copy up itself: its copy keeps
 * the set-id bits and the file capability (security.capability), and the
 * guest then changes the copy's content through a shared mapping of a
 * write fd, which clears neither (only write(2) and truncate do). Under
 * --overlay DIR the copy is a host file: before red-team round 24 guest
 * root opened /usr/bin/passwd for writing, wrote "EVIL" into a mapping of
 * it, and DIR/usr/upper/bin/passwd was a root-owned set-uid host file of
 * that content (a capable one from gst-ptp-helper). The gofer's own
 * copy-up (copy_up) keeps neither. */
static int privileged_lower(const struct gofer_srv_export *e, const char *rel,
			    const struct stat *st)
{
	if (st->st_mode & (S_ISUID | S_ISGID))
		return 1;
	struct open_how how = { .flags = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC,
				.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
	int fd = (int)syscall(SYS_openat2, e->lowerfd, rel, &how, sizeof how);
	if (fd < 0)
		return 0;
	struct stat lst;
	int r = fstat(fd, &lst) == 0 && (lst.st_ino == st->st_ino || lst.st_ino == lower_ino(st->st_ino)) &&
		fgetxattr(fd, "security.capability", NULL, 0) >= 0;
	close(fd);
	return r;
}

static void cow_links_first(const struct gofer_srv_export *e, const char *rel, uint64_t *dev,
			    uint64_t *ino)
{
	struct stat st[2], cur;
	size_t cnt = 0;

	if (!e->cow || e->is_file || !*rel || e->lowerfd < 0 || e->upperfd < 0 ||
	    stat_beneath(e, rel, &cur) < 0 || !S_ISREG(cur.st_mode) || in_upper(e, rel))
		return;
	if (*ino && (cur.st_ino != *ino || cur.st_dev != (dev_t)*dev))
		return;  /* not the object checked: the call says so */
	const struct lname *names = cur.st_nlink > 1 ? lindex_find(e, lower_ino(cur.st_ino), &cnt) : NULL;
	if ((!names || cnt < 2) && !privileged_lower(e, rel, &cur))
		return;
	if (copy_up(e, rel, cur.st_dev, cur.st_ino, 1, st) < 0)
		return;
	if (*ino) {
		*dev = st[1].st_dev;
		*ino = st[1].st_ino;
	}
	if (names && cnt > 1)
		link_others(e, rel, names, cnt, st);
}

/* Link every other lower name of the file st[0] (names: its entries in
 * the link index, cnt of them) that the merged view still shows as that
 * lower file to its copy at rel (st[1]): a link beside the name, renamed
 * over it. */
static void link_others(const struct gofer_srv_export *e, const char *rel, const struct lname *names,
			size_t cnt, const struct stat st[2])
{
	char buf[VFS_PATH_MAX], tmp[64];
	for (size_t i = 0; i < cnt; i++) {
		const char *other = names[i].rel, *bname, *aname;
		struct stat ost;
		int bowned, aowned;
		if (!strcmp(other, rel) || is_hidden(e, other) ||
		    stat_beneath(e, other, &ost) < 0 ||
		    ost.st_dev != st[0].st_dev || ost.st_ino != st[0].st_ino || in_upper(e, other))
			continue;  /* gone, replaced or copied up since: its own file */
		strcpy(buf, other);
		int bpfd = open_parent(e, buf, &bname, &bowned);
		if (bpfd < 0)
			continue;
		char abuf[VFS_PATH_MAX];
		strcpy(abuf, rel);
		int apfd = open_parent(e, abuf, &aname, &aowned);
		if (apfd >= 0) {
			uint64_t rnd = 0;
			(void)!getrandom(&rnd, sizeof rnd, 0);
			snprintf(tmp, sizeof tmp, ".moat-link.%016llx", (unsigned long long)rnd);
			struct stat nst;
			if (fstatat(apfd, aname, &nst, AT_SYMLINK_NOFOLLOW) == 0 &&
			    nst.st_ino == st[1].st_ino && nst.st_dev == st[1].st_dev &&
			    linkat(apfd, aname, bpfd, tmp, 0) == 0 &&
			    renameat(bpfd, tmp, bpfd, bname) < 0)
				unlinkat(bpfd, tmp, 0);
			close_owned(apfd, aowned);
		}
		close_owned(bpfd, bowned);
	}
}

/* Ask the dentry shrinker (setup.c start_dshrink) to make export e's
 * overlay forget its unused dentries. 0, -errno (-ENOSYS: none). */
static int dshrink(const struct gofer_srv_export *e)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	uint32_t i = (uint32_t)(e - srv->exp);
	int32_t r = -ENOSYS;

	if (srv->dshrink_fd < 0)
		return -ENOSYS;
	pthread_mutex_lock(&lock);
	if (send(srv->dshrink_fd, &i, sizeof i, MSG_NOSIGNAL) != sizeof i ||
	    recv(srv->dshrink_fd, &r, sizeof r, 0) != sizeof r)
		r = -EIO;
	pthread_mutex_unlock(&lock);
	return r;
}

/* The directories copied up by hand (their paths), per export: a dentry
 * shrink gives every directory overlayfs looks up again a new inode number
 * (a merged directory's st_ino is not kept where the layers are on two file
 * systems), so each shrink reports their numbers before and after, and the
 * sentry moves its virtual metadata (their original owners) along. At most
 * COPIED_MAX are followed (a later one keeps its metadata only until the
 * next shrink: then shown and checked as the caller's own, the sandbox's
 * copy). */
#define COPIED_MAX (GOFER_COPYUP_MAX - 16)
static struct copied {
	size_t n;
	char *path[COPIED_MAX];
} copied[GOFER_MAX_EXPORTS];
static pthread_mutex_t copied_lock = PTHREAD_MUTEX_INITIALIZER;

/* Copy up by hand the lower directories on the way to path (and path itself
 * if self and it is one) that overlayfs cannot (rootless: an owner or group
 * the gofer's namespace does not map, EOVERFLOW): each is made in the upper
 * layer directly, top down, with its mode (no set-id bits), user.*
 * attributes and times, and is not opaque, so the lower entries still show
 * through it. overlayfs learns of them only when it looks the directory up
 * again: the dentry shrinker makes it forget the unused dentries, and a
 * directory the sandbox holds (a cwd, a dirfd, a file open beneath it) keeps
 * its cached lower-only dentry; then every directory made here is removed
 * again (they are empty: nothing could reach them) and the answer is
 * -EBUSY (the sentry lets go of what it holds there and asks again, or
 * answers the call's own error, EOVERFLOW). pairs[k]: lstat of the merged directory
 * before and after; *np: how many (at most max). 0, -errno. */
static int copy_up_dirs(const struct gofer_srv_export *e, const char *path, int self,
			struct stat (*pairs)[2], size_t max, size_t *np)
{
	size_t made[16];  /* the length of each one's path */
	size_t nm = 0, len = strlen(path), off = 0;
	int r = 0;

	*np = 0;
	if (len >= VFS_PATH_MAX)
		return -ENAMETOOLONG;
	for (size_t end = 0; end <= len && !r; end++) {
		if (end < len && path[end] != '/')
			continue;
		if (end == len && !self)
			break;
		char pre[VFS_PATH_MAX];
		struct stat m;
		memcpy(pre, path, end);
		pre[end] = 0;
		if (!end || is_hidden(e, pre))
			break;
		if (stat_beneath(e, pre, &m) < 0 || !S_ISDIR(m.st_mode))
			break;  /* the call's own error says what */
		if (in_upper(e, pre))
			continue;
		if (nm == max || nm == sizeof made / sizeof made[0] || srv->dshrink_fd < 0) {
			/* too many, or no shrinker (as root overlayfs copies
			 * every directory up itself) */
			r = -EOVERFLOW;
			break;
		}
		/* the parent is in the upper layer: the root, or made above */
		const char *sl = strrchr(pre, '/'), *name = sl ? sl + 1 : pre;
		char par[VFS_PATH_MAX];
		size_t pl = sl ? (size_t)(sl - pre) : 0;
		memcpy(par, pre, pl);
		par[pl] = 0;
		struct open_how how = { .flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
					.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
						   RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV };
		int upfd = (int)syscall(SYS_openat2, e->upperfd, pl ? par : ".", &how, sizeof how);
		if (upfd < 0) {
			r = -errno;
			break;
		}
		if (mkdirat(upfd, name, 0700) < 0) {
			r = -errno;
			close(upfd);
			break;
		}
		made[nm] = end;
		pairs[nm][0] = m;
		nm++;
		struct open_how dh = { .flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC,
				       .resolve = how.resolve };
		int dfd = (int)syscall(SYS_openat2, upfd, name, &dh, sizeof dh);
		int src = oat2(e, e->rootfd, pre, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0);
		close(upfd);
		if (dfd < 0 || src < 0) {
			r = dfd < 0 ? -errno : src;
		} else {
			r = copy_user_xattrs(src, dfd);
			struct timespec ts[2] = { m.st_atim, m.st_mtim };
			if (!r && (fchmod(dfd, host_mode(e, m.st_mode & 07777)) < 0 ||
				   futimens(dfd, ts) < 0))
				r = -errno;
		}
		if (dfd >= 0)
			close(dfd);
		if (src >= 0)
			close(src);
	}
	if (!r && nm) {
		/* the ones copied before: their numbers now, then after */
		struct copied *c = &copied[e - srv->exp];
		struct stat before[COPIED_MAX];
		size_t nb;
		pthread_mutex_lock(&copied_lock);
		nb = c->n;
		for (size_t k = 0; k < nb; k++)
			if (stat_beneath(e, c->path[k], &before[k]) < 0)
				before[k].st_ino = 0;
		r = dshrink(e);
		size_t keep = 0;
		for (size_t k = 0; k < nb && !r; k++) {
			struct stat now;
			if (!before[k].st_ino || stat_beneath(e, c->path[k], &now) < 0 ||
			    !S_ISDIR(now.st_mode)) {
				free(c->path[k]);  /* gone or replaced: not followed */
				continue;
			}
			c->path[keep++] = c->path[k];
			if (now.st_ino != before[k].st_ino && nm + *np < max) {
				/* listed first: path's own pair stays the last */
				memmove(pairs + 1, pairs, (*np + nm) * sizeof *pairs);
				pairs[0][0] = before[k];
				pairs[0][1] = now;
				(*np)++;
			}
		}
		if (!r)
			c->n = keep;
		pthread_mutex_unlock(&copied_lock);
		off = *np;
		for (size_t k = 0; k < nm && !r; k++) {
			/* looked up again: a merged directory (upper and lower),
			 * whose link count overlayfs shows as 1 */
			char pre[VFS_PATH_MAX];
			memcpy(pre, path, made[k]);
			pre[made[k]] = 0;
			if (stat_beneath(e, pre, &pairs[off + k][1]) < 0 || pairs[off + k][1].st_nlink != 1)
				r = -EBUSY;  /* held: the sentry may let go and ask again */
		}
		for (size_t k = 0; k < nm && !r; k++) {
			/* its original owner is the sentry's now */
			char pre[VFS_PATH_MAX];
			memcpy(pre, path, made[k]);
			pre[made[k]] = 0;
			int dfd = oat2(e, e->rootfd, pre, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0);
			if (dfd >= 0) {
				pin_dir(e, dfd, ".");
				close(dfd);
			}
		}
		pthread_mutex_lock(&copied_lock);
		for (size_t k = 0; k < nm && !r && c->n < COPIED_MAX; k++) {
			char *p = malloc(made[k] + 1);
			if (!p)
				break;
			memcpy(p, path, made[k]);
			p[made[k]] = 0;
			c->path[c->n++] = p;
		}
		pthread_mutex_unlock(&copied_lock);
	}
	if (r) {
		/* a directory overlayfs still holds as lower-only shows nothing
		 * made beneath it, nor does any below it: all are still empty */
		while (nm) {
			nm--;
			struct open_how how = { .flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
						.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
							   RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV };
			char pre[VFS_PATH_MAX];
			memcpy(pre, path, made[nm]);
			pre[made[nm]] = 0;
			char *sl = strrchr(pre, '/');
			if (sl)
				*sl = 0;
			int upfd = (int)syscall(SYS_openat2, e->upperfd, sl ? pre : ".",
						&how, sizeof how);
			if (upfd >= 0) {
				unlinkat(upfd, sl ? sl + 1 : pre, AT_REMOVEDIR);
				close(upfd);
			}
		}
		/* the others' new numbers still count (with -EBUSY) */
		*np = r == -EBUSY ? off : 0;
		return r;
	}
	*np += nm;
	return 0;
}

/* COPYUP: overlayfs copies a lower file or directory up with its owner and
 * group, and a gofer in its own user namespace (rootless) cannot give an id
 * the namespace does not map: EOVERFLOW for every write open, chmod, utimes,
 * truncate, xattr set, link or rename of such a file, and for every create,
 * unlink or rename in such a directory. Done here instead, as overlayfs
 * would for root: the lower directories on the way to path (copy_up_dirs),
 * then path itself, a directory (the same) or a regular file (copy_up, the
 * copy the gofer's own; only the object the sentry checked). The sentry
 * keeps the old owners and groups as virtual metadata (fs/vmeta.c
 * vmeta_copied). Reply: a pair of lstats (before, after) per object copied
 * up, path's last. */
static pthread_mutex_t copyup_lock = PTHREAD_MUTEX_INITIALIZER;
static int copyup_locked(struct req *rq, struct rep *rp);

/* One copy-up of directories at a time: another call's must not see a
 * directory it has made in the upper layer (in_upper) before it is merged,
 * or after it is removed again (-EBUSY), and take it as copied (-EAGAIN:
 * the call made again found it lower-only still: make -j2's EOVERFLOW).
 * A file's own copy is made outside it (copyup_locked). */
static int h_copyup(struct req *rq, struct rep *rp)
{
	pthread_mutex_lock(&copyup_lock);
	int r = copyup_locked(rq, rp);
	pthread_mutex_unlock(&copyup_lock);
	dbg("gofer: copy-up of %s: %d (%zu bytes)", rq->path, r, rp->len);
	return r;
}

static int copyup_locked(struct req *rq, struct rep *rp)
{
	const struct gofer_req_open *f = rq->fixed;
	struct stat pairs[GOFER_COPYUP_MAX][2], st[2], cur;
	size_t n = 0;

	if (!rq->e->cow || rq->e->is_file || !*rq->path)
		return -EOVERFLOW;  /* nothing to do here: the caller's error stands */
	int isdir = stat_beneath(rq->e, rq->path, &cur) == 0 && S_ISDIR(cur.st_mode);
	if (isdir && f->ino && (cur.st_ino != f->ino || cur.st_dev != (dev_t)f->dev))
		return -ESTALE;
	int r = copy_up_dirs(rq->e, rq->path, isdir, pairs, GOFER_COPYUP_MAX - 1, &n);
	if (r == -EBUSY && n) {
		/* the others' pairs, then a pair of zeros: busy (gofer_copyup) */
		memset(pairs[n], 0, sizeof pairs[n]);
		rp->len = (n + 1) * sizeof pairs[0];
		memcpy(rp->payload, pairs, rp->len);
		return 0;
	}
	if (r < 0)
		return r;
	if (!isdir) {
		/* a lower file with other names: they are linked to the copy,
		 * as for a mapped owner (cow_links_first) */
		const struct lname *names = NULL;
		size_t cnt = 0;
		if (stat_beneath(rq->e, rq->path, &cur) == 0 && S_ISREG(cur.st_mode) &&
		    cur.st_nlink > 1 && rq->e->lowerfd >= 0 && !in_upper(rq->e, rq->path))
			names = lindex_find(rq->e, lower_ino(cur.st_ino), &cnt);
		/* the file's data (maybe large) is copied outside the lock:
		 * only the directories made by hand need it, and one guest's
		 * big copy-up must not hold every other one back */
		pthread_mutex_unlock(&copyup_lock);
		r = copy_up(rq->e, rq->path, f->dev, f->ino, 0, st);
		if (r == 0 && names && cnt > 1)
			link_others(rq->e, rq->path, names, cnt, st);
		pthread_mutex_lock(&copyup_lock);
		if (r == 0)
			memcpy(pairs[n++], st, sizeof st);
		else if (n && (r == -ENOENT || r == -EOVERFLOW))
			r = 0;  /* the directories were what it needed */
		else if (!n && r == -ENOENT)
			r = 0;  /* a create: its directories may be up now */
	}
	if (r == 0 && !n) {
		/* nothing copied: if every directory on the way is in the upper
		 * layer now (another call copied them since this one failed:
		 * make -j2's two compilers), the call is to be made again */
		char par[VFS_PATH_MAX];
		size_t l = strlen(rq->path);
		memcpy(par, rq->path, l + 1);
		if (!isdir) {
			char *sl = strrchr(par, '/');
			if (sl)
				*sl = 0;
			else
				par[0] = 0;
		}
		struct stat pst;
		r = !*par || in_upper(rq->e, par) ? -EAGAIN :
		    stat_beneath(rq->e, par, &pst) < 0 ? -ENOENT : -EOVERFLOW;
	}
	if (r == 0) {
		rp->len = n * sizeof pairs[0];
		memcpy(rp->payload, pairs, rp->len);
	}
	return r;
}

static void *conn_thread(void *arg);

/* SYNC: nothing to do. A connection's requests are served one at a time and
 * the fd a reply carried is closed before the next request is read, so this
 * reply tells the client that the gofer holds none of the fds it sent on this
 * connection any more (gofer_set_close_barrier). */
static int h_sync(struct req *rq, struct rep *rp)
{
	(void)rq;
	(void)rp;
	return 0;
}

static int h_connect(struct req *rq, struct rep *rp)
{
	pthread_attr_t attr;
	pthread_t th;
	int sv[2], r;

	if (atomic_fetch_add(&nconns, 1) >= MAX_CONNS) {
		atomic_fetch_sub(&nconns, 1);
		return -EMFILE;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		atomic_fetch_sub(&nconns, 1);
		return -errno;
	}
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, CONN_STACK);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	r = pthread_create(&th, &attr, conn_thread, (void *)(intptr_t)sv[0]);
	pthread_attr_destroy(&attr);
	if (r) {
		close(sv[0]);
		close(sv[1]);
		atomic_fetch_sub(&nconns, 1);
		return -r;
	}
	rp->fd = sv[1];
	return 0;
}

/* ---- dispatch ---- */

enum {
	F_PATH2 = 1,        /* second string is a path in the export */
	F_STR2 = 2,         /* second string present (SYMLINK: a target) */
	F_WRITE = 4,        /* needs a writable export */
	F_CTL = 8,          /* control connection only, no export */
	F_OWNHIDE = 16,     /* the handler refuses hidden names itself */
	F_BLOB = 32,        /* fixed.xa.size bytes follow the strings */
	F_FD = 64,          /* the request carries exactly one fd */
	F_NOP = 128,        /* header only, any connection, no export */
};

struct op_desc {
	handler_fn fn;
	size_t fixed;
	int flags;
};

static const struct op_desc ops[GOFER_OP_MAX] = {
	[GOFER_OP_CONNECT]  = { h_connect,  0, F_CTL },
	[GOFER_OP_WALK]     = { h_walk,     sizeof(struct gofer_req_path), F_OWNHIDE },
	[GOFER_OP_LSTAT]    = { h_lstat,    sizeof(struct gofer_req_path), 0 },
	[GOFER_OP_OPEN]     = { h_open,     sizeof(struct gofer_req_open), 0 },
	[GOFER_OP_READLINK] = { h_readlink, sizeof(struct gofer_req_path), 0 },
	[GOFER_OP_MKDIR]    = { h_mkdir,    sizeof(struct gofer_req_mode), F_WRITE },
	[GOFER_OP_MKNOD]    = { h_mknod,    sizeof(struct gofer_req_mode), F_WRITE },
	[GOFER_OP_UNLINK]   = { h_unlink,   sizeof(struct gofer_req_unlink), F_WRITE },
	[GOFER_OP_RENAME]   = { h_rename,   sizeof(struct gofer_req_two), F_WRITE | F_STR2 | F_PATH2 },
	[GOFER_OP_SYMLINK]  = { h_symlink,  sizeof(struct gofer_req_two), F_WRITE | F_STR2 },
	[GOFER_OP_LINK]     = { h_link,     sizeof(struct gofer_req_two), F_WRITE | F_STR2 | F_PATH2 },
	[GOFER_OP_CHMOD]    = { h_chmod,    sizeof(struct gofer_req_mode), F_WRITE },
	[GOFER_OP_CHOWN]    = { h_chown,    sizeof(struct gofer_req_chown), F_WRITE },
	[GOFER_OP_TRUNCATE] = { h_truncate, sizeof(struct gofer_req_truncate), F_WRITE },
	[GOFER_OP_UTIMENS]  = { h_utimens,  sizeof(struct gofer_req_utimens), F_WRITE },
	[GOFER_OP_STATFS]   = { h_statfs,   sizeof(struct gofer_req_path), 0 },
	[GOFER_OP_GETXATTR] = { h_getxattr, sizeof(struct gofer_req_xattr), F_STR2 },
	[GOFER_OP_LISTXATTR] = { h_listxattr, sizeof(struct gofer_req_xattr), 0 },
	[GOFER_OP_SETXATTR] = { h_setxattr, sizeof(struct gofer_req_xattr), F_WRITE | F_STR2 | F_BLOB },
	[GOFER_OP_REMOVEXATTR] = { h_removexattr, sizeof(struct gofer_req_xattr), F_WRITE | F_STR2 },
	[GOFER_OP_PATHOF]   = { h_pathof,   sizeof(struct gofer_req_path), F_OWNHIDE | F_FD },
	[GOFER_OP_LINKFD]   = { h_linkfd,   sizeof(struct gofer_req_open), F_WRITE | F_FD },
	[GOFER_OP_DIRSTAT]  = { h_dirstat,  sizeof(struct gofer_req_dirstat), 0 },
	[GOFER_OP_SYNC]     = { h_sync,     0, F_NOP },
	[GOFER_OP_CHOWNFD]  = { h_chownfd,  sizeof(struct gofer_req_chown), F_WRITE | F_FD },
	[GOFER_OP_WATCH]    = { h_watch,    sizeof(struct gofer_req_open), F_FD },
	[GOFER_OP_COPYUP]   = { h_copyup,   sizeof(struct gofer_req_open), F_WRITE },
	[GOFER_OP_DEVOPEN]  = { h_devopen,  sizeof(struct gofer_req_devopen), 0 },
	[GOFER_OP_WINSZ]    = { h_winsz,    sizeof(struct gofer_req_winsz), F_FD },
	[GOFER_OP_MEMFDATTR] = { h_memfdattr, sizeof(struct gofer_req_memfdattr), F_FD },
	[GOFER_OP_PTSCTL]   = { h_ptsctl,   sizeof(struct gofer_req_ptsctl), F_FD },
};

/* Check one string at buf[*off] of length len: in bounds, NUL-free, NUL
 * terminated. Advances *off past the terminator. */
static int take_string(char *buf, size_t total, size_t *off, uint32_t len, char **out)
{
	if (len >= VFS_PATH_MAX)
		return -ENAMETOOLONG;
	if (*off + len + 1 > total)
		return -EPROTO;
	if (buf[*off + len] != '\0' || memchr(buf + *off, '\0', len))
		return -EINVAL;
	*out = buf + *off;
	*off += len + 1;
	return 0;
}

/* Check one request of n bytes (framing, op, strings, paths) without acting
 * on it. 0 or the reply's err; on 0, *q points into buf. Pure: no export is
 * looked at but its number (nexports), so fuzz/ can run it on any bytes. */
int gofer_parse_request(char *buf, size_t n, int is_ctl, size_t nexports, struct gofer_request *q)
{
	const struct op_desc *d;
	size_t off;
	int r;

	memset(q, 0, sizeof *q);
	if (n < sizeof q->h)
		return -EPROTO;
	memcpy(&q->h, buf, sizeof q->h);
	if (q->h.len != n)
		return -EPROTO;
	if (q->h.op == GOFER_OP_NONE || q->h.op >= GOFER_OP_MAX)
		return -EPROTO;
	if (q->h.flags && !(q->h.flags & GOFER_HDR_CPU))
		return -EINVAL;
	d = &ops[q->h.op];
	q->ctl = !!(d->flags & (F_CTL | F_NOP));
	if (d->flags & F_NOP)
		return n == sizeof q->h ? 0 : -EPROTO;
	if (q->ctl) {
		if (n != sizeof q->h)
			return -EPROTO;
		return is_ctl ? 0 : -EINVAL;
	}
	if (n < sizeof q->h + d->fixed)
		return -EPROTO;
	memcpy(&q->fixed, buf + sizeof q->h, d->fixed);
	off = sizeof q->h + d->fixed;
	r = take_string(buf, n, &off, q->fixed.path.len, &q->path);
	if (r)
		return r;
	if (d->flags & F_STR2) {
		r = take_string(buf, n, &off, q->fixed.two.len2, &q->str2);
		if (r)
			return r;
	}
	if (d->flags & F_BLOB) {
		if (q->fixed.xa.size > GOFER_XATTR_MAX)
			return -EINVAL;
		if (off + q->fixed.xa.size > n)
			return -EPROTO;
		q->blob = buf + off;
		off += q->fixed.xa.size;
	}
	if (off != n)
		return -EPROTO;
	if (q->fixed.path.exp >= nexports)
		return -EINVAL;
	r = gofer_check_path(q->path, q->fixed.path.len);
	if (!r && (d->flags & F_PATH2))
		r = gofer_check_path(q->str2, q->fixed.two.len2);
	return r;
}

/* Validate and run one request of n bytes. Returns the reply's err. */
static int serve_one(char *buf, size_t n, int is_ctl, int sock, int infd, struct rep *rp)
{
	struct gofer_request q;
	const struct op_desc *d;
	struct req rq = { .sock = sock, .infd = infd };
	int r;

	r = gofer_parse_request(buf, n, is_ctl, srv->n, &q);
	if (r)
		return r;
	/* one fd with PATHOF, LINKFD, CHOWNFD, WATCH, WINSZ and MEMFDATTR, none with anything else */
	if (!(ops[q.h.op].flags & F_FD) != (infd < 0))
		return -EPROTO;
	d = &ops[q.h.op];
	if (q.ctl)
		return d->fn(&rq, rp);
	rq.e = &srv->exp[q.fixed.path.exp];
	rq.fixed = &q.fixed;
	rq.path = q.path;
	rq.str2 = q.str2;
	rq.blob = q.blob;
	if ((!(d->flags & F_OWNHIDE) && is_hidden(rq.e, rq.path)) || ((d->flags & F_PATH2) && is_hidden(rq.e, rq.str2)))
		return -ENOENT;
	if ((d->flags & F_WRITE) && !rq.e->writable)
		return -EROFS;
	if (rq.e->cow) {
		/* the calls overlayfs copies a lower file up for: keep its
		 * other names linked (cow_links_first) */
		uint64_t d0 = 0, i0 = 0, *dev = NULL, *ino = NULL;
#define COW_AT(f) (dev = &q.fixed.f.dev, ino = &q.fixed.f.ino)
		switch (q.h.op) {
		case GOFER_OP_OPEN:
			if ((q.fixed.open.flags & O_ACCMODE) != O_RDONLY || (q.fixed.open.flags & O_TRUNC))
				COW_AT(open);
			break;
		case GOFER_OP_CHMOD: COW_AT(mode); break;
		case GOFER_OP_TRUNCATE: COW_AT(trunc); break;
		case GOFER_OP_UTIMENS: COW_AT(ut); break;
		case GOFER_OP_SETXATTR:
		case GOFER_OP_REMOVEXATTR: COW_AT(xa); break;
		case GOFER_OP_LINK: COW_AT(two); break;
		case GOFER_OP_RENAME: dev = &d0, ino = &i0; break;
		default: break;
		}
#undef COW_AT
		if (dev)
			cow_links_first(rq.e, rq.path, dev, ino);
	}
	return d->fn(&rq, rp);
}

/* Serve one connection until EOF or a transport error. */
static void serve_conn(int sock, int is_ctl)
{
	char buf[GOFER_MAX_REQ];
	char rbuf[GOFER_MAX_REP] __attribute__((aligned(8)));
	union {
		char b[CMSG_SPACE(sizeof(int) * 8)];
		struct cmsghdr align;
	} cbuf;
	struct spin_state spin = { 0 };
	int shared_cpu = 0;      /* the last reply woke its sender on this CPU */
	int pinned = -1;         /* the CPU this thread keeps to (GOFER_HDR_CPU) */

	for (;;) {
		struct iovec iov = { .iov_base = buf, .iov_len = sizeof buf };
		struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
				      .msg_control = cbuf.b, .msg_controllen = sizeof cbuf.b };
		struct rep rp = { .payload = rbuf + sizeof(struct gofer_rhdr), .fd = -1 };
		struct gofer_rhdr rh = { 0 };
		int got_fds = 0, infd = -1;
		if (!is_ctl && !shared_cpu) {
			/* the sentry's next request comes soon after a reply
			 * (tar: 20-60 µs): spin for it first, a wake-up of this
			 * thread is an IPI to an idle vCPU on a quiet machine */
			struct pollfd sp = { .fd = sock, .events = POLLIN };
			(void)spin_poll(&sp, 1, &spin);
		}
		shared_cpu = 0;
		ssize_t n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return;            /* the peer is gone */
		/* never keep an fd that came with a request (nor with an empty
		 * one) beyond it: one, for PATHOF, is looked at and closed */
		for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
			if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
				continue;
			int *fds = (int *)CMSG_DATA(c);
			size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
			for (size_t i = 0; i < k; i++) {
				if (got_fds == 0 && i == 0 && k == 1)
					infd = fds[i];
				else
					close(fds[i]);
			}
			got_fds++;
		}
		if (infd >= 0 && got_fds != 1) {
			close(infd);
			infd = -1;
		}
		if (n == 0) {
			if (infd >= 0)
				close(infd);
			return;            /* EOF (or an empty message) */
		}
		uint16_t hflags = 0;
		if ((size_t)n >= sizeof(struct gofer_hdr)) {
			memcpy(&rh.tag, buf + offsetof(struct gofer_hdr, tag), sizeof rh.tag);
			memcpy(&hflags, buf + offsetof(struct gofer_hdr, flags), sizeof hflags);
		}
		if (msg.msg_flags & MSG_TRUNC)
			rh.err = -EMSGSIZE;
		else if ((got_fds && infd < 0) || (msg.msg_flags & MSG_CTRUNC))
			rh.err = -EPROTO;
		else if ((size_t)n < sizeof(struct gofer_hdr))
			rh.err = -EPROTO;
		else
			rh.err = serve_one(buf, n, is_ctl, sock, infd, &rp);
		if (infd >= 0)
			close(infd);
		if (rh.err)
			rp.len = 0;
		rh.len = sizeof rh + rp.len;
		memcpy(rbuf, &rh, sizeof rh);
		int fds[GOFER_DEVOPEN_MAX] = { rp.fd };
		for (int i = 0; i < rp.nx; i++)
			fds[i + 1] = rp.xfd[i];
		long s = send_fds(sock, rbuf, rh.len, fds, rp.fd >= 0 && !rh.err ? 1 + rp.nx : 0);
		for (int i = 0; i <= rp.nx; i++)
			if (fds[i] >= 0)
				close(fds[i]);
		if (hflags & GOFER_HDR_CPU) {
			/* The sentry thread sent this from that CPU and waits
			 * there (spinning, then asleep); the reply just made it
			 * runnable. Keep to that CPU (issue 6, pgit4): asleep on
			 * the other one, this thread is woken by an IPI to a
			 * halted vCPU for every request (~20 µs here), and its
			 * spin for the next request there wakes nothing it
			 * could not wake itself; on the sentry's CPU the request
			 * wakes it where the sentry's spin yields to it, so the
			 * guest, the sentry and this thread share one CPU as
			 * under `taskset -c 1 moat` (ARCHITECTURE.md "The
			 * gofer's round trip: spin, then sleep"). After the
			 * reply, not before the work: the sentry is spinning
			 * for it now. A CPU this thread may not use (a cpuset)
			 * is EINVAL: left as is. */
			int cpu = sched_getcpu();
			int want = (int)(hflags & GOFER_HDR_CPU_MASK);
			if (cpu >= 0 && cpu != want && want != pinned && want < CPU_SETSIZE) {
				cpu_set_t set;
				CPU_ZERO(&set);
				CPU_SET(want, &set);
				if (sched_setaffinity(0, sizeof set, &set) == 0)
					pinned = want;
			}
			shared_cpu = cpu == want || pinned == want;
		}
		if (s < 0)
			return;
	}
}

static void *conn_thread(void *arg)
{
	int sock = (int)(intptr_t)arg;

	serve_conn(sock, 0);
	close(sock);
	atomic_fetch_sub(&nconns, 1);
	text_trim();
	return NULL;
}

noreturn void gofer_serve(const struct gofer_srv *s, int ctl)
{
	srv = s;
	spin_setup();
	serve_conn(ctl, 1);
	/* control socket closed: the sandbox is gone (the sentry shuts it down
	 * once the program has exited, then waits for us); take the changes
	 * out, let the reaper remove the scratch layers, end every thread */
	int st = 0;
	if (s->exportfd >= 0)
		st = gofer_export_run(s);
	gofer_helpers_stop(s);
	_exit(st);
}

void gofer_helpers_stop(const struct gofer_srv *s)
{
	if (s->dshrink_fd >= 0) {
		close(s->dshrink_fd);
		while (waitpid(s->dshrink_pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	if (s->reaper_fd >= 0) {
		close(s->reaper_fd);
		while (waitpid(s->reaper_pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
}
