/* gofer/proto.h - the wire format between the sentry (client.c) and the
 * gofer (server.c). Private to gofer/.
 *
 * Transport: AF_UNIX SOCK_SEQPACKET, so one send is one message. Both sides
 * run on the same host, so integers are native-endian and struct stat /
 * struct statfs travel as the kernel gives them.
 *
 * Request:  struct gofer_hdr | fixed struct of the op | strings
 * Reply:    struct gofer_rhdr | op payload            [+ one fd, SCM_RIGHTS]
 *
 * Strings: every request names an export and a path; rename, link and
 * symlink carry a second string. The fixed part holds their lengths (len,
 * len2, not counting the NUL); each string follows as len bytes plus one NUL
 * terminator, and the total must equal hdr.len exactly. A string may not
 * contain NUL. Anything else is -EPROTO (framing) or -EINVAL (content).
 *
 * Message ids index the handler table in server.c (lisafs handlers.go,
 * bubblewrap PrivSepOp). Ids are never reused: add new ones at the end.
 */
#ifndef MOAT_GOFER_PROTO_H
#define MOAT_GOFER_PROTO_H

#include <limits.h>
#include <stdint.h>
#include <sys/stat.h>

#include "common/util.h"
#include "gofer/gofer.h"

enum gofer_op {
	GOFER_OP_NONE = 0,   /* never valid */
	GOFER_OP_CONNECT,    /* control connection only: reply carries a new socket */
	GOFER_OP_WALK,
	GOFER_OP_LSTAT,
	GOFER_OP_OPEN,
	GOFER_OP_READLINK,
	GOFER_OP_MKDIR,
	GOFER_OP_MKNOD,
	GOFER_OP_UNLINK,
	GOFER_OP_RENAME,
	GOFER_OP_SYMLINK,
	GOFER_OP_LINK,
	GOFER_OP_CHMOD,
	GOFER_OP_CHOWN,
	GOFER_OP_TRUNCATE,
	GOFER_OP_UTIMENS,
	GOFER_OP_STATFS,
	GOFER_OP_GETXATTR,
	GOFER_OP_LISTXATTR,
	GOFER_OP_SETXATTR,
	GOFER_OP_REMOVEXATTR,
	GOFER_OP_PATHOF,     /* the request carries one directory fd (SCM_RIGHTS):
			      * reply = its current path beneath the export */
	GOFER_OP_LINKFD,     /* the request carries one fd, an O_TMPFILE file:
			      * link it at path (linkat AT_EMPTY_PATH) */
	GOFER_OP_DIRSTAT,    /* a directory's entries with their lstat, a page at a time */
	GOFER_OP_SYNC,       /* header only, any connection: an empty reply once the
			      * connection's earlier requests are done (their fds closed) */
	GOFER_OP_CHOWNFD,    /* the request carries one fd, an unnamed O_TMPFILE file
			      * of a private (TMPFS) export: fchown it */
	GOFER_OP_WATCH,      /* the request carries one fd, an inotify instance: add a
			      * watch on the object at path (struct gofer_req_open:
			      * flags = the mask, ino/dev = the object checked);
			      * reply = the watch descriptor (int32) */
	GOFER_OP_COPYUP,     /* a cow export's lower regular file or directory whose
			      * owner or group the gofer's user namespace does not map
			      * (overlayfs: EOVERFLOW), or a lower directory on the way
			      * to it: copy them up by hand (struct gofer_req_open:
			      * ino/dev = the object checked); reply = per object
			      * copied up, its lstat before, then after (pairs of
			      * struct stat, at most GOFER_COPYUP_MAX, path's last) */
	GOFER_OP_DEVOPEN,    /* count opens of one memory device of a DEV export
			      * (null, zero, full, random, urandom) with the same
			      * flags (struct gofer_req_devopen); reply = its
			      * struct stat, and count fds (SCM_RIGHTS), each an
			      * open file description of its own */
	GOFER_OP_WINSZ,      /* the request carries one fd, a terminal of the DEV
			      * export's own devpts instance ("pts"): set its
			      * window size (struct gofer_req_winsz); anything
			      * else is refused (red team 71: the sentry itself
			      * may no longer make TIOCSWINSZ) */
	GOFER_OP_MEMFDATTR,  /* the request carries one fd, a memfd (an unnamed file
			      * of the kernel's internal shmem mount): fchmod or
			      * futimens it (struct gofer_req_memfdattr); anything
			      * else is refused (the sentry's filter has neither
			      * call: a caller's file it holds is its uid's rootless) */
	GOFER_OP_PTSCTL,     /* the request carries one fd, a terminal of the DEV
			      * export's own devpts instance (as WINSZ): make a pty
			      * master's TIOCSIG, TIOCPKT, TIOCSPTLCK or TIOCGPTPEER
			      * on that file (struct gofer_req_ptsctl); reply for
			      * TIOCGPTPEER: the slave's fd (SCM_RIGHTS); anything
			      * else is refused (pts39: the sentry's check then a
			      * native call on the guest's fd number raced a dup2) */
	GOFER_OP_MAX,
};

struct gofer_hdr {
	uint32_t len;        /* whole message, header included */
	uint16_t op;         /* enum gofer_op */
	uint16_t flags;      /* 0, or GOFER_HDR_CPU | the CPU the sender ran on */
	uint32_t tag;        /* echoed in the reply */
};

/* hdr.flags: a scheduling hint, nothing the gofer decides anything else by.
 * A sentry thread sends a path request from one CPU and waits for the reply
 * there (spin_poll); the gofer's thread for that connection keeps itself on
 * that CPU (sched_setaffinity of itself, serve_conn), so that the next
 * request wakes it there, without an IPI to the other, idle, vCPU, and goes
 * back to sleep after a reply it made there instead of spinning on the CPU
 * the woken sentry needs. Any other non-zero value is -EINVAL. */
#define GOFER_HDR_CPU 0x8000u
#define GOFER_HDR_CPU_MASK 0x7fffu

/* The fixed part of every path request starts with these two fields. */
struct gofer_req_path {      /* WALK, LSTAT, READLINK, STATFS */
	uint32_t exp;
	uint32_t len;
};

/* OPEN, CHMOD, TRUNCATE, UTIMENS and the xattr requests may name the object the sentry checked:
 * (ino, dev) of what its walk found, ino 0 for none. The gofer acts only on
 * that object (-ESTALE when the name leads elsewhere by then): the sentry's
 * permission check was made on it, and the guest can swap names between the
 * check and the request (rename, RENAME_EXCHANGE in a writable export). */
struct gofer_req_open {
	uint32_t exp;
	uint32_t len;
	int32_t flags;       /* open(2) flags */
	uint32_t mode;
	uint64_t ino;        /* the object checked (0: none, e.g. a create) */
	uint64_t dev;
	uint64_t pino, pdev; /* OPEN with O_CREAT, LINKFD: the directory checked
			      * (0: any); the name is made only in it (-ESTALE) */
};

struct gofer_req_mode {      /* MKDIR, MKNOD, CHMOD */
	uint32_t exp;
	uint32_t len;
	uint32_t mode;
	uint32_t pad;
	uint64_t ino;        /* CHMOD: the object checked (0: none) */
	uint64_t dev;
	uint64_t pino, pdev; /* MKDIR, MKNOD: the directory checked (0: any):
			      * the name is made only in it (-ESTALE) */
};

struct gofer_req_unlink {
	uint32_t exp;
	uint32_t len;
	int32_t flags;       /* 0 or AT_REMOVEDIR */
	uint32_t pad;
	uint64_t ino, dev;   /* the object checked (0: any): -ESTALE if the
			      * name is another's now */
	uint64_t pino, pdev; /* its directory checked (0: any): the same */
};

/* RENAME (old, new), LINK (old, new), SYMLINK (path, target): the first
 * string is always a path in the export, the second a path (RENAME, LINK)
 * or the link's target (SYMLINK, any bytes but NUL).
 *
 * The objects the sentry checked (0: any, unchecked): the gofer opens the
 * directories, compares their fstat with these, and acts relative to those
 * fds (-ESTALE otherwise: the sentry walks and checks again). LINK links
 * only the source object checked, by an fd of it. LINK's reply: the new
 * name's lstat, then the old name's, both after the link (0, 1 or 2 struct
 * stat): the sentry caches both names without a walk (git unlinks its
 * temporary name right after linking the object's). */
struct gofer_req_two {
	uint32_t exp;
	uint32_t len;
	uint32_t len2;
	uint32_t flags;      /* RENAME: RENAME_NOREPLACE | RENAME_EXCHANGE */
	uint64_t ino, dev;   /* RENAME, LINK: the source object */
	uint64_t pino, pdev; /* RENAME: the source's directory; SYMLINK: path's */
	uint64_t tino, tdev; /* RENAME: the object at the destination, which it
			      * replaces or exchanges with; 0 with tpino set: the
			      * name was free and must still be (else -ESTALE) */
	uint64_t tpino, tpdev; /* RENAME, LINK: the destination's directory */
};

struct gofer_req_chown {
	uint32_t exp;
	uint32_t len;
	uint32_t uid;
	uint32_t gid;
};

struct gofer_req_winsz {     /* WINSZ: struct winsize's fields */
	uint32_t exp;
	uint32_t len;
	uint16_t row, col, xpixel, ypixel;
};

struct gofer_req_ptsctl {    /* PTSCTL */
	uint32_t exp;
	uint32_t len;
	uint32_t cmd;        /* TIOCSIG, TIOCPKT, TIOCSPTLCK, TIOCGPTPEER */
	int32_t arg;         /* the signal, the int pointed to, the open flags */
};

struct gofer_req_memfdattr { /* MEMFDATTR */
	uint32_t exp;
	uint32_t len;
	uint32_t mode;       /* utimes 0: fchmod's mode (no set-id bit) */
	int32_t utimes;      /* 1: futimens with sec/nsec */
	int64_t sec[2];      /* atime, mtime */
	int64_t nsec[2];     /* may be UTIME_NOW / UTIME_OMIT */
};

struct gofer_req_truncate {
	uint32_t exp;
	uint32_t len;
	int64_t size;
	uint64_t ino;        /* the object checked (0: none) */
	uint64_t dev;
};

struct gofer_req_utimens {
	uint32_t exp;
	uint32_t len;
	int32_t flags;       /* 0 or AT_SYMLINK_NOFOLLOW */
	uint32_t pad;
	int64_t sec[2];      /* atime, mtime */
	int64_t nsec[2];     /* may be UTIME_NOW / UTIME_OMIT */
	uint64_t ino;        /* the object checked (0: none) */
	uint64_t dev;
};

/* GETXATTR, SETXATTR, REMOVEXATTR (path, attribute name), LISTXATTR (path
 * only). SETXATTR's value follows the strings: exactly size bytes, at most
 * GOFER_XATTR_MAX. GET/LIST reply: uint32_t length of the whole value or
 * list, then (size != 0) the bytes themselves. Only user.* names exist. */
struct gofer_req_xattr {
	uint32_t exp;
	uint32_t len;
	uint32_t len2;       /* the name (GET, SET, REMOVE) */
	uint32_t flags;      /* SET: 0, XATTR_CREATE or XATTR_REPLACE */
	uint32_t size;       /* GET/LIST: the caller's buffer (0: the length only,
			      * else at most GOFER_XATTR_MAX); SET: value bytes */
	uint32_t pad;
	uint64_t ino;        /* the object checked (0: none) */
	uint64_t dev;
};

struct gofer_rhdr {
	uint32_t len;        /* whole reply, header included */
	int32_t err;         /* 0 or -errno */
	uint32_t tag;
	uint32_t pad;
};

/* WALK reply payload: this, then st[n], then link[linklen] (no NUL). */
struct gofer_rep_walk {
	int32_t n;
	int32_t err;
	uint32_t linklen;
	uint32_t pad;
};

/* DIRSTAT: the regular files and directories in directory path with their
 * lstat, one page per request, to fill the sentry's dentry cache in one round
 * trip instead of one per name. Request: struct gofer_req_dirstat (pos 0 to
 * start, then the reply's next). Reply: struct gofer_rep_dirstat, then n
 * records (struct gofer_dirent, the name's namelen bytes, zeros up to a
 * multiple of 8). Hidden names, ".", "..", symlinks and every other type are
 * left out. done 1: nothing after this page. */
/* DEVOPEN: flags is O_RDONLY, O_WRONLY or O_RDWR and nothing else; path
 * one name in a DEV export; count 1..GOFER_DEVOPEN_MAX. */
#define GOFER_DEVOPEN_MAX 32 /* common/util.c send_fds: MAX_FDS */
struct gofer_req_devopen {
	uint32_t exp;
	uint32_t len;
	int32_t flags;
	uint32_t count;
};

struct gofer_req_dirstat {
	uint32_t exp;
	uint32_t len;
	uint64_t pos;        /* a directory offset (getdents64 d_off) */
};

struct gofer_rep_dirstat {
	uint32_t n;
	uint32_t done;
	uint64_t next;       /* pos of the next request */
};

struct gofer_dirent {
	struct stat st;
	uint32_t namelen;    /* 1..NAME_MAX */
	uint32_t pad;
};

/* PATHOF: fixed part struct gofer_req_path with an empty path, plus one
 * fd, a directory; the reply is the directory's path relative to export
 * exp's root as the directory stands now (no NUL; "" for the root), or
 * -ENOENT (removed), -ESTALE (not beneath that export), -ENAMETOOLONG.
 * Every other request carrying an fd is -EPROTO. */

/* LSTAT, OPEN: struct stat. READLINK: the target bytes. STATFS: struct
 * statfs. OPEN and CONNECT pass their fd with SCM_RIGHTS. */

#define GOFER_MAX_REQ (2 * VFS_PATH_MAX + GOFER_XATTR_MAX + 512)
#define GOFER_MAX_REP (sizeof(struct gofer_rhdr) + sizeof(struct gofer_rep_walk) + \
		       GOFER_WALK_MAX * sizeof(struct stat) + VFS_PATH_MAX)

/* Start-up report from the child: one message of this form, err 0 = ready. */
struct gofer_hello {
	int32_t err;
	char msg[252];
	/* "ready": nroots struct gofer_root messages follow, each with one fd
	 * (SCM_RIGHTS): an O_PATH fd of the root of a read-only clone of a cow
	 * export's overlay (the sentry's direct read-only opens there,
	 * fs/directfs.c) */
	uint32_t nroots;
	/* "ready": 0, or the -errno of its move into the sandbox's cgroups
	 * (gofer_join_cgroups) */
	int32_t join_err;
};

/* Hidden names a cow export's overlay hides itself: bit k set for its
 * hidden[k] (k < GOFER_LAYER_HIDES_MAX), a whiteout (or the guest's own
 * entry of an earlier run, in a persistent layer) in its upper layer made
 * before the overlay was mounted (gofer/setup.c hide_in_upper). Such a
 * name is an absent name of the overlay like any other: neither the gofer
 * nor the sentry refuses it by name, so the guest may create it (its own
 * file then, never the host's). The others stay refused by name. */
#define GOFER_LAYER_HIDES_MAX 256

struct gofer_root {
	uint32_t export;
	uint8_t layer_hides[GOFER_LAYER_HIDES_MAX / 8];
};

#endif
