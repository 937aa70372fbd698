/* fs/directfs.c - direct file access: the sentry opens files of read-only
 * host-directory exports and of cow exports itself, beneath the export's
 * root, without a gofer round trip (gVisor's "directfs").
 *
 * The roots are O_PATH fds of read-only detached clones of the exports
 * (sentry/privilege.c priv_sentry_root; binds in the sentry's own root
 * before Linux 6.15) and, for a cow export, of a
 * read-only recursive clone of the gofer's overlay that the gofer donated
 * at start-up (gofer/setup.c, cow_roots; detached: ".." at its root stays
 * there, an absolute path resolves in the sentry's own root). That mount
 * layer is what confines the sentry, whatever it passes; the RESOLVE_ flags
 * below are defence in depth and give the gofer's semantics (no symlink in
 * any component, no mount crossing: a hidden name's mask is another mount).
 * Only what cannot differ from the gofer's answer is done here; everything
 * else returns -EAGAIN and goes to the gofer as before:
 *   - read-only opens (no O_WRONLY/O_RDWR/O_CREAT/O_TRUNC/O_TMPFILE/O_PATH)
 *     of nodes the walk found to be regular files or directories, on
 *     read-only exports and cow exports, and of regular files on writable
 *     host-directory exports (rw binds: the same inode the gofer would
 *     open; their directories stay the gofer's, see vfs_direct_open). The
 *     fd's mount is read-only where the gofer's is not; the
 *     guest cannot tell: fstatfs, fsetxattr, fchmod... are emulated, and a
 *     read-only fd cannot write whatever its mount. On a cow export the fd
 *     is the overlay's own file, as the gofer's would be (a copy-up made
 *     later is seen through it, as overlayfs does since Linux 4.19);
 *   - opened O_NONBLOCK and checked on the fd (regular file or directory,
 *     the same dev/ino as the walk's node) before anything else, so a name
 *     swapped for a FIFO or device never blocks us; O_NONBLOCK is then
 *     cleared unless the guest asked for it;
 *   - any failure — EACCES/EPERM for our own uid (root-run: the sentry's uid
 *     reads only what its mode grants "others"; guest root may be entitled to
 *     more, and the gofer checks as it always did), ENOENT, ELOOP... — is the
 *     gofer's to answer.
 * The fd carries the gofer's flags: the guest's, plus O_NOFOLLOW, O_NOCTTY
 * and O_CLOEXEC (the guest's own close-on-exec is set when it is installed),
 * O_LARGEFILE as openat2 forces it on 64-bit. Its owner and group in *st are
 * the walk's (the gofer's view: root-run, our user namespace maps only our
 * own uid, so fstat here would say "nobody").
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdint.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "common/util.h"
#include "fs/vfs_priv.h"
#include "kernel/task.h"

#ifndef __O_TMPFILE
#define __O_TMPFILE 020000000
#endif

#define DIRECT_FLAGS (O_NONBLOCK | O_DSYNC | O_SYNC | O_DIRECT | O_LARGEFILE | O_DIRECTORY | \
		      O_NOFOLLOW | O_NOATIME | O_CLOEXEC | O_NOCTTY | FASYNC)

void vfs_enable_direct(struct vfs *v, const int *roots, size_t n)
{
	free(v->droots);
	v->droots = NULL;
	v->ndroots = 0;
	if (!roots || !n)
		return;
	v->droots = xcalloc(n, sizeof *v->droots);
	memcpy(v->droots, roots, n * sizeof *roots);
	v->ndroots = n;
	/* Rootless, the sentry's user namespace and the gofer's map the same
	 * one uid and gid (the caller's: sentry/privilege.c priv_drop,
	 * gofer/setup.c write_maps), each onto itself, and nothing else: a
	 * stat in either shows the caller's ids as themselves and every other
	 * owner as the overflow id, and vfs_map_stat turns both alike into the
	 * guest's view (the caller's ids as the --user ids, the rest 65534).
	 * So the sentry's own lstat of a name is the gofer's, owner included,
	 * and a walk needs no round trip (vfs_direct_absent). Root-run the
	 * gofer's namespace maps every host id onto itself, and so does the
	 * sentry's (idmap.sentry_owners: written by a root helper, the sentry
	 * holding no capability in it; sentry/privilege.c): both see the
	 * host's owners. Without that map (MOAT_NO_ROOT_OWNERS=1, or the
	 * helper failed) the sandbox uid sees none of them and owners come from
	 * the gofer. */
	v->direct_owner = v->sb && ((!v->sb->idmap.full_identity &&
				     getuid() == geteuid() && getgid() == getegid() &&
				     getuid() == v->sb->idmap.host_uid && getgid() == v->sb->idmap.host_gid) ||
				    (v->sb->idmap.full_identity && v->sb->idmap.sentry_owners));
}

int vfs_direct_open(struct vfs *v, const struct vfs_node *n, int flags, int *fd, struct stat *st,
		    uint64_t *mnt)
{
	const struct vfs_mount *m = n->mnt;
	struct stat fst;

	/* a writable host-directory export (an rw bind): regular files only.
	 * A directory fd of a writable mount is an object the gofer may be
	 * asked to find again by walking ".." from it (vfs_refind_dir), which
	 * it does only for fds of its own export */
	if ((m->writable && !m->cow && !S_ISREG(n->st.st_mode)) || m->dev || m->export < 0 ||
	    (size_t)m->export >= v->ndroots ||
	    v->droots[m->export] < 0 || !n->exists ||
	    !(S_ISREG(n->st.st_mode) || S_ISDIR(n->st.st_mode)) ||
	    (flags & ~DIRECT_FLAGS) /* an access mode other than O_RDONLY, a create, ... */)
		return -EAGAIN;
	struct open_how how = {
		.flags = (uint64_t)(unsigned)(flags | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC | O_NONBLOCK),
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV,
	};
	int f = (int)syscall(SYS_openat2, v->droots[m->export], *n->rel ? n->rel : ".", &how, sizeof how);
	if (f < 0)
		return -EAGAIN;
	/* (its host mount too, in the same call: the inode maps' key) */
	if (fd_stat_mount(f, &fst, mnt) < 0 || !(S_ISREG(fst.st_mode) || S_ISDIR(fst.st_mode)) ||
	    fst.st_dev != n->st.st_dev || fst.st_ino != n->st.st_ino)
		goto fallback;
	/* F_SETFL changes only O_APPEND/O_ASYNC/O_DIRECT/O_NOATIME/O_NONBLOCK:
	 * given the open's own flags without O_NONBLOCK it clears just that
	 * (O_ASYNC unchanged, so no fasync is set up), one call instead of
	 * F_GETFL + F_SETFL */
	if (!(flags & O_NONBLOCK) && fcntl(f, F_SETFL, flags & ~O_NONBLOCK) < 0)
		goto fallback;
	fst.st_uid = n->st.st_uid; /* already in the guest's view */
	fst.st_gid = n->st.st_gid;
	*st = fst;
	*fd = f;
	return 0;
fallback:
	close(f);
	*mnt = 0; /* (the gofer's fd, opened next, says its own) */
	return -EAGAIN;
}

long vfs_direct_acl(struct vfs *v, const struct vfs_mount *m, const char *rel,
		    const struct stat *st, void *buf, size_t size)
{
	if (!v->direct_owner || m->dev || m->export < 0 || (size_t)m->export >= v->ndroots ||
	    v->droots[m->export] < 0 || !(S_ISREG(st->st_mode) || S_ISDIR(st->st_mode)))
		return -EAGAIN;
	struct open_how how = {
		.flags = O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV,
	};
	struct stat fst;
	int f = (int)syscall(SYS_openat2, v->droots[m->export], *rel ? rel : ".", &how, sizeof how);
	if (f < 0)
		return -EAGAIN;
	ssize_t n = -1;
	int e = EAGAIN;
	if (fstat(f, &fst) == 0 && fst.st_dev == st->st_dev && fst.st_ino == st->st_ino) {
		n = fgetxattr(f, VFS_ACL_XATTR, buf, size);
		e = errno;
	}
	close(f);
	if (n >= 0)
		return n;
	return e == ENODATA || e == EOPNOTSUPP ? 0 : -EAGAIN;
}

/* A fresh stat of rel on a writable (or read-only) host-directory export m
 * whose dentry-cache entry *cst (the guest's view) is a regular file or a
 * directory: the sentry's own fstat through its read-only bind of the export
 * (the same inode the gofer would stat: size, times, mode, links are the
 * file's now), with the cached owner and group, which its user namespace
 * cannot map (they came from the gofer; a chown drops the entry). 0 with
 * *st, or -EAGAIN: ask the gofer (no bind, another object or type by now, a
 * symlink, hidden name or mount on the way, ENOENT). */
int vfs_direct_restat(struct vfs *v, const struct vfs_mount *m, const char *rel,
		      const struct stat *cst, struct stat *st)
{
	if (m->dev || m->private_fs || m->export < 0 || (size_t)m->export >= v->ndroots ||
	    v->droots[m->export] < 0 || !*rel ||
	    !(S_ISREG(cst->st_mode) || S_ISDIR(cst->st_mode)))
		return -EAGAIN;
	struct open_how how = {
		.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV,
	};
	struct stat fst;
	int f = (int)syscall(SYS_openat2, v->droots[m->export], rel, &how, sizeof how);
	if (f < 0)
		return -EAGAIN;
	int r = fstat(f, &fst);
	close(f);
	if (r < 0 || (fst.st_mode & S_IFMT) != (cst->st_mode & S_IFMT) ||
	    fst.st_dev != cst->st_dev || fst.st_ino != cst->st_ino)
		return -EAGAIN;
	fst.st_uid = cst->st_uid;
	fst.st_gid = cst->st_gid;
	*st = fst;
	return 0;
}

/* Is rel absent from the host-directory export m (read-only or writable: the
 * sentry's bind is of the same tree, and a create through the gofer shows in
 * it at once)? 1 when the sentry's own lookup
 * beneath the export root says ENOENT, VFS_ABSENT_DENIED when its uid may not
 * search a directory on the way (EACCES: root-run, a 0700 directory of host
 * root), else 0 (present, or anything else it cannot decide: a symlink or
 * mount on the way, no root fd).
 * An absent name has no owner, so this answer is the gofer's: a first stat
 * or open of a missing path (header and module searches, $PATH probes) costs
 * one openat2 instead of a gofer round trip. The caller has checked the
 * hidden names (masked in our view, absent in the gofer's).
 * With st, where the sentry's own stat shows the gofer's owners
 * (v->direct_owner: rootless, and root-run with the sentry's map of every
 * host id), a present regular file or directory is
 * VFS_PRESENT_STAT with its lstat in *st (host ids, as the gofer's lstat
 * gives them: the caller maps them): the name's first look-up needs no
 * gofer round trip either. The fd is the name itself (O_PATH|O_NOFOLLOW,
 * every component beneath the root, no symlink, no mount crossed: what the
 * gofer's lstat would have stat'ed); a symlink, any other type, or an
 * inode of another device is 0 (the gofer's, as before). With link
 * (linklen bytes), a symlink is VFS_PRESENT_LINK with its lstat in *st and
 * its target in link, read from that same fd (readlinkat(fd, "")): the
 * shared libraries' and python's symlinks needed a gofer walk each. An
 * empty rel is the export's root, the root fd itself (fstat). */
int vfs_direct_absent(struct vfs *v, const struct vfs_mount *m, const char *rel,
		      struct stat *st, char *link, size_t linklen)
{
	if (m->dev || m->export < 0 || (size_t)m->export >= v->ndroots ||
	    v->droots[m->export] < 0)
		return 0;
	if (!*rel) {
		/* the export's root: the root fd is it (start39: the program's
		 * first exec walked the roots of /, /usr and /etc with a gofer
		 * lstat each, on the start-up's critical path) */
		struct stat fst;
		if (!st || !v->direct_owner || m->private_fs || fstat(v->droots[m->export], &fst) < 0 ||
		    (!S_ISDIR(fst.st_mode) && !S_ISREG(fst.st_mode)))
			return 0;
		*st = fst;
		return VFS_PRESENT_STAT;
	}
	struct open_how how = {
		.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV,
	};
	int f = (int)syscall(SYS_openat2, v->droots[m->export], rel, &how, sizeof how);
	if (f >= 0) {
		int r = 0;
		struct stat fst;
		int known = st && v->direct_owner && !m->private_fs && fstat(f, &fst) == 0;
		if (known && (S_ISREG(fst.st_mode) || S_ISDIR(fst.st_mode))) {
			*st = fst;
			r = VFS_PRESENT_STAT;
		} else if (known && link && S_ISLNK(fst.st_mode) && fst.st_size > 0 &&
			   (size_t)fst.st_size < linklen) {
			/* the symlink itself (the fd is it: O_NOFOLLOW, nothing
			 * followed on the way): its target, as the gofer's
			 * readlink would read it; a target that changed length
			 * meanwhile is the gofer's */
			ssize_t n = readlinkat(f, "", link, linklen);
			if (n == fst.st_size) {
				link[n] = 0;
				*st = fst;
				r = VFS_PRESENT_LINK;
			}
		}
		close(f);
		return r;
	}
	if (errno == ENOENT)
		return 1;
	return errno == EACCES ? VFS_ABSENT_DENIED : 0;
}

/* vfs_direct_absent for a name directly in the directory a relative walk
 * started from: dfd is the sentry's copy of the guest's own dirfd
 * (fstatat(dirfd, name), openat(dirfd, name): du, find, rm -r, grep -r and
 * every fts walk), which vfs_host_fd_node found to be the directory its
 * path names in m. One statx of the one component relative to that fd,
 * where the look-up by path costs three calls (an openat2 of the whole path
 * from the export root, fstat, close). The same answers, under the same
 * conditions: 1 absent (ENOENT), VFS_PRESENT_STAT with the lstat (host ids)
 * of a regular file or directory where the sentry's own stat shows the
 * gofer's owners; anything else is -EAGAIN, and the caller asks
 * vfs_direct_absent as before: a symlink (its target is read there), any
 * other type, another error (EACCES: VFS_ABSENT_DENIED there), a
 * kernel that cannot say whether the name is a mount's root, and a name
 * that is one — what openat2's RESOLVE_NO_XDEV refuses: a mount on the
 * name in the fd's tree (the gofer's, for a directory it opened), whose
 * files are not the export's. (st_dev cannot tell: on an overlay a file's
 * st_dev is its layer's, not the directory's.) Nothing is resolved but the
 * one name: no "/", no "." or "..", AT_SYMLINK_NOFOLLOW. The statx is
 * allowed in this shape only (sentry/confine_rules.c, AT_EMPTY_PATH as for
 * newfstatat) and tells no more than that newfstatat could. */
int vfs_direct_absent_at(struct vfs *v, const struct vfs_mount *m, int dfd, const char *name,
			 struct stat *st)
{
	if (dfd < 0 || m->dev || m->export < 0 || (size_t)m->export >= v->ndroots ||
	    v->droots[m->export] < 0 || !*name || strchr(name, '/') ||
	    (name[0] == '.' && (!name[1] || (name[1] == '.' && !name[2]))))
		return -EAGAIN;
	struct statx sx;
	if (statx(dfd, name, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT | AT_EMPTY_PATH,
		  STATX_BASIC_STATS, &sx) < 0)
		return errno == ENOENT ? 1 : -EAGAIN;
	if (!(sx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) ||
	    (sx.stx_attributes & STATX_ATTR_MOUNT_ROOT) ||
	    (sx.stx_mask & STATX_BASIC_STATS) != STATX_BASIC_STATS ||
	    !(S_ISREG(sx.stx_mode) || S_ISDIR(sx.stx_mode)) ||
	    !st || !v->direct_owner || m->private_fs)
		return -EAGAIN;
	statx_to_stat(&sx, st);
	return VFS_PRESENT_STAT;
}

/* Directory prefetch without the gofer (vfs.c dir_prefetch): where the
 * sentry's own lstat of a name is the gofer's (v->direct_owner, not a
 * private file system: what vfs_direct_absent's VFS_PRESENT_STAT needs),
 * the directory is opened beneath the export root as every direct open is
 * (no symlink, no mount crossed on the way), read with getdents64, and each
 * name stat'ed by statx(dfd, name, AT_SYMLINK_NOFOLLOW) — one call per
 * name where a name's own look-up costs three (openat2 of the whole path,
 * fstat, close), and what the gofer's DIRSTAT does in its tree (gofer/
 * server.c h_dirstat). AT_EMPTY_PATH rides along: the confinement allows
 * statx in newfstatat's shape only (sentry/confine_rules.c; with a name it
 * is a plain lstat). A mount's root (a mount point, a hidden name's mask:
 * what the RESOLVE_NO_XDEV of a name's own look-up refuses) is left to its
 * own look-up, as are symlinks and every other type (put: regular files
 * and directories only), the rule of vfs_direct_absent_at (list_stat_at).
 * Until issue 6's perfwalk round the test was a name's st_dev against the
 * directory's, and on an overlay (a cow bind) a file's st_dev is its
 * layer's: every file was left out (40 of 40 in a cow bind's directory). */
int vfs_direct_can_list(struct vfs *v, const struct vfs_mount *m)
{
	return v->direct_owner && !m->private_fs && !m->dev && m->export >= 0 &&
	       (size_t)m->export < v->ndroots && v->droots[m->export] >= 0;
}

/* A name of a listing, as vfs_direct_absent_at would take it: its lstat
 * (host ids) when it is a regular file or directory and not a mount's root
 * (the overlay's files have their layer's st_dev, so st_dev cannot tell). */
static int list_stat_at(int dfd, const char *name, struct stat *st)
{
	struct statx sx;
	if (statx(dfd, name, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT | AT_EMPTY_PATH,
		  STATX_BASIC_STATS, &sx) < 0 ||
	    !(sx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) ||
	    (sx.stx_attributes & STATX_ATTR_MOUNT_ROOT) ||
	    (sx.stx_mask & STATX_BASIC_STATS) != STATX_BASIC_STATS ||
	    !(S_ISREG(sx.stx_mode) || S_ISDIR(sx.stx_mode)))
		return -1;
	statx_to_stat(&sx, st);
	return 0;
}

int vfs_direct_dirstat(struct vfs *v, const struct vfs_mount *m, const char *dir,
		       void (*put)(void *, const char *, size_t, struct stat *), void *arg, int max)
{
	if (!vfs_direct_can_list(v, m))
		return -EAGAIN;
	struct open_how how = {
		.flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV,
	};
	int dfd = (int)syscall(SYS_openat2, v->droots[m->export], *dir ? dir : ".", &how, sizeof how);
	if (dfd < 0)
		return -EAGAIN;
	struct stat dst;
	if (fstat(dfd, &dst) < 0 || !S_ISDIR(dst.st_mode)) {
		close(dfd);
		return -EAGAIN;
	}
	enum { BUFSZ = 32768 };
	char *buf = xmalloc(BUFSZ);
	int total = 0;
	long n;
	while (total < max && (n = syscall(SYS_getdents64, dfd, buf, BUFSZ)) > 0) {
		for (long off = 0; off < n && total < max;) {
			struct { uint64_t ino; int64_t off; unsigned short reclen; unsigned char type; char name[]; }
				*d = (void *)(buf + off);
			off += d->reclen;
			size_t nl = strnlen(d->name, NAME_MAX + 1);
			struct stat st;
			if ((d->type != DT_REG && d->type != DT_DIR && d->type != DT_UNKNOWN) ||
			    !nl || nl > NAME_MAX || !strcmp(d->name, ".") || !strcmp(d->name, ".."))
				continue;
			if (list_stat_at(dfd, d->name, &st) < 0)
				continue;
			put(arg, d->name, nl, &st);
			total++;
		}
	}
	free(buf);
	close(dfd);
	return total;
}

/* How many hidden names directly in the directory dir of m are directories
 * (the guest's listing leaves them out, so its st_nlink must not count
 * them: issue 7). In the sentry's view each hidden directory is masked by
 * an empty tmpfs (priv_sentry_root's mask_hidden), a hidden file by an
 * empty file, an absent name not at all: an O_PATH open of the name from
 * the export root (into the mask's mount: no RESOLVE_NO_XDEV, never a
 * symlink) and its fstat say which. The masks are made once, before the
 * guest runs: looked at once per mount (m->hidden_dirs), then a stat of
 * such a directory costs no system call. 0 when it cannot tell. */
unsigned vfs_hidden_subdirs(struct vfs *v, const struct vfs_mount *m, const char *dir)
{
	if (m->dev || m->private_fs || m->export < 0 || (size_t)m->export >= v->ndroots ||
	    v->droots[m->export] < 0 || !m->hidden)
		return 0;
	unsigned char *isdir = atomic_load(&m->hidden_dirs);
	if (!isdir) {
		size_t n = 0;
		while (m->hidden[n])
			n++;
		isdir = xcalloc(n + 1, 1);
		for (size_t i = 0; i < n; i++) {
			struct open_how how = {
				.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
				.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
			};
			struct stat st;
			int f = (int)syscall(SYS_openat2, v->droots[m->export], m->hidden[i], &how,
					     sizeof how);
			isdir[i] = 1;
			if (f >= 0) {
				if (fstat(f, &st) == 0 && S_ISDIR(st.st_mode))
					isdir[i] = 2;
				close(f);
			}
		}
		unsigned char *none = NULL;
		/* (a lazily filled cache of a mount entry the walk hands out
		 * as const: entries are never freed or moved) */
		if (!atomic_compare_exchange_strong(&((struct vfs_mount *)m)->hidden_dirs, &none,
						    isdir)) {
			free(isdir);
			isdir = none;
		}
	}
	size_t dl = strlen(dir);
	unsigned k = 0;
	for (size_t i = 0; m->hidden[i]; i++)
		if (isdir[i] == 2 && vfs_hidden_in_dir(m->hidden[i], dir, dl))
			k++;
	return k;
}
