/* syscalls/sys_dir.c - getdents64, getdents, getcwd, chdir, fchdir, umask.
 *
 * Listing a directory (getdents64):
 *  - Synthetic directories (the synthetic root, mount-point ancestors, /proc
 *    directories) are memfds. Entries are ".", "..", then the names from the
 *    mount table (vfs_synth_children) or procfs_readdir. The position of the
 *    next entry is kept as the memfd's own file offset, so the
 *    guest's native lseek(fd, 0, SEEK_SET) (rewinddir) just works. An
 *    entry's position is its index, or for /proc's numbered entries Linux's
 *    stable one (fd/, fdinfo/, task/: number + 2; processes: 258 + pid);
 *    d_off is the entry's position + 1 and a read resumes at the first
 *    entry at or past the offset, so fds closed (processes gone) between
 *    two reads skip none of the rest (Python's close_fds loop).
 *  - Host directories (gofer mounts): getdents64 on our duplicate of the
 *    guest's fd (same open file description, so the offset is shared with
 *    the guest); names on the mount's hidden list are dropped. Mount points
 *    that the host directory does not contain ("extras") are merged in the
 *    batch read at offset 0: the host read is given the buffer minus the
 *    room the extras need, and the extras follow the host entries with the
 *    d_off of the last host entry. Any host read at offset 0 returns at
 *    least "." and so moves the offset past 0, so the extras are emitted
 *    exactly once per pass, again after lseek(fd, 0) / rewinddir, and a
 *    seekdir to an extra's d_off resumes with the next host entry. If the
 *    guest buffer is too small for the extras plus one host entry, the
 *    extras are left out of that pass (glibc's 32 KiB buffer always fits).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fs/procfs.h"
#include "syscalls/sys_fs.h"

#define DENTS_MAX (256 * 1024)

struct kdirent64 {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

static size_t rec_len(size_t namelen)
{
	return (offsetof(struct kdirent64, d_name) + namelen + 1 + 7) & ~(size_t)7;
}

/* Append one record; returns the new length, or 0 if it does not fit. */
static size_t put_ent(char *buf, size_t cap, size_t off, uint64_t ino, int64_t doff,
		      unsigned char type, const char *name)
{
	size_t nl = strlen(name), rl = rec_len(nl);
	struct kdirent64 *d = (struct kdirent64 *)(buf + off);

	if (off + rl > cap)
		return 0;
	memset(d, 0, rl);
	d->d_ino = ino ? ino : 1;
	d->d_off = doff;
	d->d_reclen = rl;
	d->d_type = type;
	memcpy(d->d_name, name, nl);
	return off + rl;
}

static unsigned char dtype_of(mode_t m)
{
	switch (m & S_IFMT) {
	case S_IFDIR: return DT_DIR;
	case S_IFREG: return DT_REG;
	case S_IFLNK: return DT_LNK;
	case S_IFCHR: return DT_CHR;
	case S_IFBLK: return DT_BLK;
	case S_IFIFO: return DT_FIFO;
	case S_IFSOCK: return DT_SOCK;
	default: return DT_UNKNOWN;
	}
}

struct sent {
	char name[NAME_MAX + 1];
	uint64_t ino;
	uint64_t pos;  /* synth_dents: the entry's directory position */
	unsigned char type;
};

static void child_path(char *out, const char *dir, const char *name)
{
	if (!strcmp(dir, "/"))
		snprintf(out, VFS_PATH_MAX, "/%s", name);
	else
		snprintf(out, VFS_PATH_MAX, "%s/%s", dir, name);
}

/* Type and inode of a mount-table child, as a lookup of it shows them. */
static void synth_child(struct sc_call *c, const char *dir, const char *name, struct sent *e)
{
	cleanup_free struct vfs_node *cn = xmalloc(sizeof *cn);
	char p[VFS_PATH_MAX];

	child_path(p, dir, name);
	snprintf(e->name, sizeof e->name, "%s", name);
	e->type = DT_DIR;
	e->ino = 1;
	if (vfs_lookup(VFS_OF(c), c->task, p, NULL, 0, cn) == 0 && cn->exists) {
		e->type = dtype_of(cn->st.st_mode);
		e->ino = cn->st.st_ino;
	}
}

static long synth_dents(struct sc_call *c, const struct vfs_node *n, int hfd, char *out,
			size_t cap)
{
	char *const *kids = vfs_synth_children(VFS_OF(c), n->path);
	struct procfs_dirent *pd = NULL;
	long np = 0, nk = 0;
	struct sent *ents;
	size_t ne = 0, off = 0;

	if (n->kind == VN_PROC) {
		np = procfs_readdir(VFS_OF(c), c->task, n->rel, &pd);
		if (np < 0)
			return np;
	}
	while (kids && kids[nk])
		nk++;
	ents = xcalloc(np + nk + 2, sizeof *ents);
	strcpy(ents[ne].name, ".");
	ents[ne].ino = n->st.st_ino;
	ents[ne++].type = DT_DIR;
	strcpy(ents[ne].name, "..");
	ents[ne].ino = 1;
	ents[ne++].type = DT_DIR;
	ents[0].pos = 0;
	ents[1].pos = 1;
	for (long i = 0; i < np; i++) {
		snprintf(ents[ne].name, sizeof ents[ne].name, "%s", pd[i].name);
		ents[ne].ino = pd[i].ino;
		ents[ne].pos = pd[i].pos > ents[ne - 1].pos ? pd[i].pos : ents[ne - 1].pos + 1;
		ents[ne++].type = pd[i].type;
	}
	for (long i = 0; i < nk; i++) {
		int dup = 0;
		for (size_t j = 2; j < ne && !dup; j++)
			dup = !strcmp(ents[j].name, kids[i]);
		if (!dup) {
			synth_child(c, n->path, kids[i], &ents[ne]);
			ents[ne].pos = ents[ne - 1].pos + 1;
			ne++;
		}
	}
	free(pd);

	/* Resume at the first entry at or past the position (entries gone
	 * since, such as fds closed between two reads of /proc/self/fd, skip
	 * none of the rest); d_off is the position just past the entry. */
	off_t pos = lseek(hfd, 0, SEEK_CUR);
	size_t i = 0;
	uint64_t next = pos < 0 ? 0 : (uint64_t)pos;
	while (i < ne && ents[i].pos < next)
		i++;
	for (; i < ne; i++) {
		size_t no = put_ent(out, cap, off, ents[i].ino, (int64_t)ents[i].pos + 1,
				    ents[i].type, ents[i].name);
		if (!no)
			break;
		off = no;
		next = ents[i].pos + 1;
	}
	free(ents);
	if (!off && i < ne)
		return -EINVAL;
	lseek(hfd, (off_t)next, SEEK_SET);
	return off;
}

/* An overlayfs across two file systems (the root overlay, a cow bind)
 * numbers a directory itself but lists its layer's number, "." and ".."
 * too: the entry gets the st_ino a stat of it gives, by its name beneath
 * the directory fd (a name the host listed, one component; "." the fd
 * itself, and ".." of the mount's root, as a file system's root lists
 * itself on Linux; of a bound subdirectory's root: left).
 * statx in newfstatat's shape (AT_EMPTY_PATH: the only one the confinement
 * allows, sentry/confine_rules.c); a mount's root below keeps the covered
 * entry's number, as on Linux. ~1 µs a directory (realprogs35). */
static void cow_dir_ino(int hfd, int root, struct kdirent64 *d)
{
	const char *name = d->d_name;
	int dotdot = name[0] == '.' && name[1] == '.' && !name[2];
	int dot = (name[0] == '.' && !name[1]) || (dotdot && root == 1);
	struct statx sx;

	/* xino (gofer/setup.c mount_cow): a lower layer's entry carries its
	 * layer in the top bits and the overlay's stat gives the same number:
	 * no look-up (a directory the overlay had not looked up yet cost ~4
	 * µs here). A number without them is an upper entry's, or a lower
	 * one that did not fit (xino overflow: the overlay made up the
	 * directory's number again), or a kernel without xino: looked up */
	if (d->d_ino >> 62)
		return;
	if (dotdot && root == 2)
		return;
	if (statx(hfd, dot ? "" : name, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT | AT_EMPTY_PATH,
		  STATX_TYPE | STATX_INO, &sx) == 0 &&
	    (sx.stx_mask & (STATX_TYPE | STATX_INO)) == (STATX_TYPE | STATX_INO) && S_ISDIR(sx.stx_mode) &&
	    (dot || dotdot || !(sx.stx_attributes & STATX_ATTR_MOUNT_ROOT)))
		d->d_ino = sx.stx_ino;
}

static long host_dents(struct sc_call *c, const struct vfs_node *n, int hfd, char *out,
		       size_t cap)
{
	const struct vfs_mount *m = n->kind == VN_BACKEND ? n->mnt : NULL;
	char *const *kids = m ? vfs_synth_children(VFS_OF(c), n->path) : NULL;
	/* the mount's root: 1, a bound subdirectory's: 2 */
	int root = !m || !n->mroot ? 0 : m->sub ? 2 : 1;
	struct sent *extra = NULL;
	size_t nextra = 0, xsize = 0, off = 0;
	long r;

	/* (the stream's position only where synthetic children are added:
	 * a system call less per listing elsewhere) */
	if (kids && lseek(hfd, 0, SEEK_CUR) == 0) {
		size_t nk = 0;
		while (kids[nk])
			nk++;
		extra = xcalloc(nk, sizeof *extra);
		for (size_t i = 0; i < nk; i++) {
			char rel[VFS_PATH_MAX];
			struct stat st;
			if (*n->rel)
				snprintf(rel, sizeof rel, "%s/%s", n->rel, kids[i]);
			else
				snprintf(rel, sizeof rel, "%s", kids[i]);
			if (!vfs_is_hidden(m, rel) &&
			    VFS_BE(VFS_OF(c), lstat, m->export, rel, &st) == 0)
				continue;  /* the host directory lists it */
			synth_child(c, n->path, kids[i], &extra[nextra]);
			xsize += rec_len(strlen(kids[i]));
			nextra++;
		}
		if (cap < xsize + rec_len(NAME_MAX)) {
			nextra = 0;  /* no room: see the comment at the top */
			xsize = 0;
		}
	}

	char *hb = xmalloc(cap);
	int64_t last_off = 0;
	do {
		r = syscall(SYS_getdents64, hfd, hb, cap - xsize - off);
		if (r < 0) {
			r = -errno;
			break;
		}
		for (long p = 0; p < r; ) {
			struct kdirent64 *d = (struct kdirent64 *)(hb + p);
			p += d->d_reclen;
			last_off = d->d_off;
			/* every name but "." and "..", dot names too (/etc's
			 * .pwd.lock); built only where the mount hides any */
			if (m && m->hidden && *m->hidden &&
			    !(d->d_name[0] == '.' && (!d->d_name[1] ||
						      (d->d_name[1] == '.' && !d->d_name[2])))) {
				char rel[VFS_PATH_MAX];
				if (*n->rel)
					snprintf(rel, sizeof rel, "%s/%s", n->rel, d->d_name);
				else
					snprintf(rel, sizeof rel, "%s", d->d_name);
				if (vfs_is_hidden(m, rel))
					continue;
			}
			memcpy(out + off, d, d->d_reclen);
			if (m && m->cow && d->d_type == DT_DIR)
				cow_dir_ino(hfd, root, (struct kdirent64 *)(out + off));
			off += d->d_reclen;
		}
		/* everything read was hidden: read on rather than report EOF */
	} while (r > 0 && off == 0);
	free(hb);
	if (r < 0 && off == 0) {
		free(extra);
		return r;
	}
	for (size_t i = 0; i < nextra && last_off; i++)
		off = put_ent(out, cap, off, extra[i].ino, last_off, extra[i].type, extra[i].name);
	free(extra);
	return off;
}

/* Fill buf (malloc'ed, cap bytes) with getdents64 records for guest fd.
 * *hfdp: the directory's fd (the caller closes it) and *pos its position
 * before the read, for dents_out. */
static long dents(struct sc_call *c, int guestfd, size_t count, char **buf, int *hfdp, off_t *pos)
{
	cleanup_free struct vfs_node *n = xmalloc(sizeof *n);
	cleanup_fd int hfd = -1;
	int r;

	*buf = NULL;
	*pos = -1;
	r = vfs_fd_node(VFS_OF(c), c->task, guestfd, n, &hfd);
	if (r < 0)
		return r;
	/* An O_PATH open of a directory is a read-only directory fd (ADDFD
	 * takes no O_PATH file); on a sealed one (fs/vfs.c) that is all it
	 * can be, and Linux answers EBADF: its names are not listed
	 * (red-team round 4). */
	int fl = hfd >= 0 ? fcntl(hfd, F_GETFL) : -1;
	/* (O_DSYNC: an O_PATH open's directory fd, fs/vfs.c vfs_node_open:
	 * never listed, whoever holds it now — red team 13) */
	if (n->opath || vfs_sealed(c->task, &n->st) || (fl >= 0 && S_ISDIR(n->st.st_mode) && (fl & O_DSYNC)))
		return -EBADF;
	if (!S_ISDIR(n->st.st_mode))
		return -ENOTDIR;
	/* A directory the VFS cannot name (VN_FD: one the caller gave as
	 * stdio, outside every mount) is a removed one to the walk (fs/walk.c:
	 * lookups in it are ENOENT), and Linux's readdir of a dead directory
	 * is ENOENT: its host names are not listed (red team 83: the caller's
	 * `< /` listed the host's root) */
	if (n->kind == VN_FD)
		return -ENOENT;
	/* Linux keeps the count in an int (fs/readdir.c): one past INT_MAX
	 * is negative, every record is "too large" (EINVAL; 0 at the end),
	 * which is what a count of 0 answers here (review 34) */
	if (count > INT_MAX)
		count = 0;
	if (count > DENTS_MAX)
		count = DENTS_MAX;
	*buf = xmalloc(count ? count : 1);
	*pos = lseek(hfd, 0, SEEK_CUR);
	*hfdp = hfd;
	hfd = -1;
	if (n->kind == VN_SYNTH || n->kind == VN_PROC)
		return synth_dents(c, n, *hfdp, *buf, count);
	return host_dents(c, n, *hfdp, *buf, count);
}

/* The records to the guest's buffer. A fault consumes nothing, as in Linux
 * (filldir64 stops before the entry it could not write, and the position
 * stays at it): the directory goes back to where the read began (review
 * 34: the entries read were lost to the next call). */
static long dents_out(struct sc_call *c, int hfd, off_t pos, const char *buf, long r)
{
	int w = sc_write_guest(c, c->args[1], buf, (size_t)r);
	if (w < 0 && hfd >= 0 && pos >= 0)
		lseek(hfd, pos, SEEK_SET);
	return w < 0 ? w : r;
}

/* getdents64, or (old) getdents: the old layout is d_ino, d_off,
 * d_reclen, name, NUL, pad, d_type in the last byte. Records have exactly
 * the size of their dirent64 twins, so the conversion is done in place. */
static long getdents_as(struct sc_call *c, int old)
{
	cleanup_free char *buf = NULL;
	cleanup_fd int hfd = -1;
	off_t pos;
	long r = dents(c, ARG_INT(c, 0), ARG_UINT(c, 2), &buf, &hfd, &pos);

	if (r <= 0)
		return r;
	for (long p = 0; old && p < r; ) {
		struct kdirent64 *d = (struct kdirent64 *)(buf + p);
		unsigned short rl = d->d_reclen;
		unsigned char type = d->d_type;
		/* name moves from offset 19 to 18 */
		memmove(buf + p + 18, d->d_name, strlen(d->d_name) + 1);
		buf[p + rl - 1] = type;
		p += rl;
	}
	return dents_out(c, hfd, pos, buf, r);
}

long sys_getdents64(struct sc_call *c)
{
	return getdents_as(c, 0);
}

long sys_getdents(struct sc_call *c)
{
	return getdents_as(c, 1);
}

/* getcwd: the working directory is held as an object (fs/vfs.c,
 * vfs_cwd_node): its name now, ENOENT once it has been removed. */
long sys_getcwd(struct sc_call *c)
{
	cleanup_free struct vfs_node *n = xmalloc(sizeof *n);
	struct task *t = c->task;
	int r;

	r = vfs_cwd_node(VFS_OF(c), t, n);
	if (r == 0 && (!n->exists || !S_ISDIR(n->st.st_mode)))
		r = -ENOENT;
	if (r < 0)
		return r;
	/* relative to the task's root (chroot); a cwd outside it is
	 * "(unreachable)" + its path, as Linux's getcwd writes it */
	char *p = n->path;
	vfs_root_refresh(VFS_OF(c), t);
	if (task_root_strip(t, n->path) < 0) {
		if (strlen(n->path) + 14 >= sizeof n->path)
			return -ENAMETOOLONG;
		memmove(n->path + 13, n->path, strlen(n->path) + 1);
		memcpy(n->path, "(unreachable)", 13);
	}
	size_t len = strlen(p) + 1;
	if (len > PATH_MAX)
		return -ENAMETOOLONG; /* as Linux's getcwd: the path is longer than a page */
	if (c->args[1] < len)
		return -ERANGE;
	r = sc_write_guest(c, c->args[0], p, len);
	return r < 0 ? r : (long)len;
}

/* May t enter directory n (chdir, chroot)? ENOTDIR, EACCES or 0. */
static long dir_enter_ok(struct task *t, const struct vfs_node *n)
{
	if (n->kind == VN_FD || !S_ISDIR(n->st.st_mode))
		return -ENOTDIR;
	return vfs_permission_node(t, n, MAY_EXEC);
}

static long set_cwd(struct sc_call *c, const struct vfs_node *n, int hostfd)
{
	long r = dir_enter_ok(c->task, n);

	return r < 0 ? r : vfs_cwd_set(VFS_OF(c), c->task, n, hostfd);
}

/* The directory chdir and chroot name: a trailing fd/<n> link of /proc
 * is its object, walked as "fd/<n>/." (the link's text, as a magic link
 * met mid-path; red team 48: ENOTDIR, the link node the walk hands back for
 * procfs_open_magic, where Linux enters N's directory); a pipe's or a
 * socket's is ENOTDIR. */
static int walk_dir(struct sc_call *c, struct vfs_node **np)
{
	int r = fs_walk(c, AT_FDCWD, c->str[0], WALK_DIRECTORY, np);

	if (r < 0 || (*np)->kind != VN_PROC || !(*np)->magic)
		return r;
	char text[8];
	long k = vfs_node_readlink(VFS_OF(c), c->task, *np, text, sizeof text);
	free(*np);
	*np = NULL;
	if (k < 0)
		return (int)k;
	if (k == 0 || text[0] != '/')
		return -ENOTDIR; /* a pipe, a socket: no directory */
	size_t l = strlen(c->str[0]);
	cleanup_free char *p = xmalloc(l + 3);
	memcpy(p, c->str[0], l);
	memcpy(p + l, "/.", 3);
	return fs_walk(c, AT_FDCWD, p, WALK_DIRECTORY, np);
}

long sys_chdir(struct sc_call *c)
{
	cleanup_free struct vfs_node *n = NULL;
	int r = walk_dir(c, &n);

	if (r < 0)
		return r;
	return set_cwd(c, n, -1);
}

/* chroot: checked in Linux's order — the walk (ENOENT, ENOTDIR, ELOOP,
 * ENAMETOOLONG; EFAULT at copy-in), search permission on the directory
 * (EACCES), CAP_SYS_CHROOT (EPERM) — so a program probing it sees Linux's
 * errors. The root is the process's (struct fs_ctx, shared by CLONE_FS
 * threads, copied at fork), kept as the directory's canonical guest path
 * and, as the cwd, its object (vfs_root_set: renamed, it is found again):
 * absolute paths and absolute symlink targets start there and ".." stops
 * there (fs/walk.c); getcwd and the /proc links are written relative to
 * it. The cwd is left where it is, as Linux does. It only narrows what
 * the task sees of the sandbox's own view. */
long sys_chroot(struct sc_call *c)
{
	cleanup_free struct vfs_node *n = NULL;
	struct task *t = c->task;
	int r = walk_dir(c, &n);

	if (r < 0)
		return r;
	r = dir_enter_ok(t, n);
	if (r < 0)
		return r;
	if (!cred_capable(&t->cred, CRED_CAP_SYS_CHROOT))
		return -EPERM;
	if (n->kind != VN_BACKEND && n->kind != VN_SYNTH && strcmp(n->path, "/"))
		return -EPERM;   /* /proc and its kind: not a root a walk can start from */
	vfs_root_set(VFS_OF(c), t, n);
	return 0;
}

long sys_fchdir(struct sc_call *c)
{
	cleanup_free struct vfs_node *n = xmalloc(sizeof *n);
	int hostfd = -1;
	int r = vfs_fd_node(VFS_OF(c), c->task, ARG_INT(c, 0), n, &hostfd);

	if (r < 0)
		return r;
	r = set_cwd(c, n, hostfd);
	if (hostfd >= 0)
		close(hostfd);
	return r;
}

long sys_umask(struct sc_call *c)
{
	struct task *t = c->task;
	mode_t old;

	pthread_mutex_lock(&t->fs->lock);
	old = t->fs->umask;
	t->fs->umask = (mode_t)c->args[0] & 0777;
	pthread_mutex_unlock(&t->fs->lock);
	return old;
}

/* unshare: the parts of a process that are its own anyway run natively
 * (CLONE_FILES, CLONE_SYSVSEM; CLONE_THREAD, CLONE_SIGHAND and CLONE_VM,
 * which Linux allows a single-threaded caller and the kernel checks);
 * CLONE_FS also splits the task's fs_ctx (cwd, umask, root), which the
 * sentry keeps. New namespaces stay EPERM (the guest has its own already;
 * one mount table per sandbox). Unknown flags are EINVAL first, as Linux's
 * check_unshare_flags. The flags are a register: the native call does
 * what was checked. */
#define UNSHARE_VALID (CLONE_THREAD | CLONE_FS | CLONE_NEWNS | CLONE_SIGHAND | CLONE_VM | \
		       CLONE_FILES | CLONE_SYSVSEM | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWNET | \
		       CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWCGROUP | 0x80 /* CLONE_NEWTIME */)
#define UNSHARE_NS (CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWNET | CLONE_NEWUSER | \
		    CLONE_NEWPID | CLONE_NEWCGROUP | 0x80)

long sys_unshare(struct sc_call *c)
{
	unsigned long flags = c->args[0];

	if (flags & ~(unsigned long)UNSHARE_VALID)
		return -EINVAL;
	if (flags & UNSHARE_NS) {
		snprintf(c->note, sizeof c->note, "new namespaces are not emulated");
		return -EPERM;
	}
	if (flags & CLONE_FS)
		task_unshare_fs(c->task);
	c->cont = 1;
	return 0;
}
