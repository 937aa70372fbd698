/* gofer/server.h - what setup.c hands to server.c. Private to gofer/. */
#ifndef MOAT_GOFER_SERVER_H
#define MOAT_GOFER_SERVER_H

#include <stdnoreturn.h>

#include "gofer/gofer.h"
#include "gofer/proto.h"

struct gofer_srv_export {
	int kind;               /* enum gofer_export_kind */
	int writable;           /* namespace ops allowed (rw DIR, TMPFS) */
	int is_file;            /* a DIR export of a single file */
	int rootfd;             /* O_PATH: the export's root (dir or file) */
	unsigned resolve;       /* openat2 RESOLVE_* flags beneath rootfd */
	char slot[8];           /* its mount point's name in the gofer's "/" */
	char **hidden;          /* relative paths refused with -ENOENT */
	size_t nhidden;
	unsigned char *by_layer; /* per hidden name, 1: a cow export's overlay
				  * hides it itself (a whiteout: gofer_root),
				  * not refused (the export's diff still
				  * leaves it out) */
	/* cow exports (an overlayfs at the slot): O_PATH roots of its read-only
	 * lower clone and of its upper layer, for the export; else -1 */
	int cow;
	int lowerfd, upperfd;
	/* statfs: the lower file system's used blocks and inodes, read once
	 * (red team 18: read live, they showed every other tenant's writes) */
	unsigned long long lower_used_bytes, lower_used_files;
	int lower_used_set;
	const char *host_path, *cow_name, *cow_prefix;
	int sealed;             /* gofer_export.sealed */
};

struct gofer_srv {
	int basefd;             /* O_PATH "/" of the gofer (read-only tmpfs) */
	size_t n;
	struct gofer_srv_export exp[GOFER_MAX_EXPORTS];
	int exportfd;           /* O_PATH --export DIR, or -1 */
	unsigned long long max_bytes, max_files;
	int reaper_fd;          /* write end of the scratch reaper's pipe, or -1 */
	pid_t reaper_pid;
	int dshrink_fd;         /* the dentry shrinker's socket (setup.c), or -1 */
	pid_t dshrink_pid;
	int pin_fd;             /* inotify instance pinning directories of cow
				 * exports (setup.c, with the shrinker), or -1 */
	int pin_max;            /* how many pins at most (server.c pin_dir) */
	dev_t memfd_dev;        /* st_dev of a memfd (MEMFDATTR), 0 unknown */
};

/* A name of the gofer's own copy-up temporaries (".moat-copyup." or
 * ".moat-link." and 16 hex digits, server.c): never exported, removed from
 * a kept upper layer (--overlay DIR) at start-up, where a gofer killed
 * between making one and renaming it over left it. */
int gofer_temp_name(const char *name);

/* --export: write <name>/changes.patch and manifest.json for every cow
 * export (gofer/export.c). Returns 0, GOFER_EXIT_REFUSED or
 * GOFER_EXIT_EXPORT_FAILED. */
int gofer_export_run(const struct gofer_srv *srv);

/* Serve the control connection ctl in this thread, each CONNECTed one in its
 * own thread; exit_group when ctl reaches EOF. */
noreturn void gofer_serve(const struct gofer_srv *srv, int ctl);
/* MOAT_TEST_GOFER_CONFINEMENT (probe.c): once confined, try what a
 * compromised gofer would; one "gofer-probe" line each on stderr. claim_fd:
 * the uid claim it holds (setup.c gofer_keep_fd), or -1; sentry: its pid. */
void gofer_confine_selftest(const struct gofer_srv *srv, int claim_fd, pid_t sentry);
/* moat-dshrink and the scratch reaper told to go (their channels closed)
 * and reaped: at the serve loop's end, or when the sentry went away before
 * "ready" (setup.c ready_failed) */
void gofer_helpers_stop(const struct gofer_srv *srv);

/* A request whose framing, op, strings and paths were checked. */
struct gofer_request {
	struct gofer_hdr h;
	int ctl;                /* a control-connection op (no export, no strings) */
	union {
		struct gofer_req_path path;     /* every op's fixed part starts so */
		struct gofer_req_open open;
		struct gofer_req_mode mode;
		struct gofer_req_unlink unlink;
		struct gofer_req_two two;
		struct gofer_req_chown chown;
		struct gofer_req_winsz winsz;
		struct gofer_req_ptsctl ptsctl;
		struct gofer_req_memfdattr mattr;
		struct gofer_req_truncate trunc;
		struct gofer_req_utimens ut;
		struct gofer_req_xattr xa;
		struct gofer_req_dirstat ds;
		struct gofer_req_devopen dev;
	} fixed;                /* an aligned copy */
	char *path;             /* first string (in the message buffer) */
	char *str2;             /* second string or NULL */
	char *blob;             /* SETXATTR: the value (fixed.xa.size bytes) */
};

/* Check one request of n bytes against the wire format (proto.h) and the
 * path rules, without acting on it: 0 or -errno (the reply's err). */
int gofer_parse_request(char *buf, size_t n, int is_ctl, size_t nexports, struct gofer_request *q);

/* Path rules shared by server and start-up (hidden names): 0 or -errno. */
int gofer_check_path(const char *p, size_t len);

#endif
