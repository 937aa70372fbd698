/* syscalls/sys_mount.c - mount(2) and umount2 for a root guest, on the
 * sandbox's own VFS mount table (fs/vfs.c vfs_mount_*), never the host's.
 *
 * What a test suite needs to set up a read-only file system (the Linux Test
 * Project's .needs_rofs: mount a tmpfs, fill it, remount it MS_RDONLY,
 * umount it at the end) and a little more:
 *   - a new tmpfs: one of the sandbox's spare private exports (two, made by
 *     the gofer at start; ENOMEM when they are used up), mode 1777, empty;
 *   - MS_BIND of a directory of a gofer mount (the whole mount, or a
 *     subdirectory: a mount of the same export whose root is that
 *     directory, struct vfs_mount.sub; directories only; other flags
 *     ignored, as Linux does: read-only takes a remount); EINVAL when
 *     one of the sandbox's own mounts lies beneath it (they are locked, as
 *     a container's inherited mounts: the bind would show what they cover;
 *     MS_REC makes no copies of them);
 *   - MS_REMOUNT [| MS_BIND] [| MS_RDONLY]: writes under a read-only mount
 *     are EROFS from the next call on (fds already open for writing keep
 *     writing, as after a forced remount); rw again only where the gofer
 *     serves the export writable (EPERM: a --bind :ro never becomes rw);
 *   - propagation changes (MS_SHARED, MS_PRIVATE, MS_SLAVE, MS_UNBINDABLE):
 *     accepted, nothing to change (one mount namespace per sandbox);
 *   - umount2 of the guest's own mounts (the sandbox's: EBUSY);
 *   - MS_NOEXEC or MS_NOSYMFOLLOW on a new tmpfs or a remount: EPERM
 *     (not enforced, so never pretended; red team 39);
 *   - a new tmpfs's data options (tmpfs_options): mode=, uid=, gid= set its
 *     root as Linux's; size=, nr_blocks=, nr_inodes=, huge=, mpol=,
 *     inode32/64, noswap accepted (the files are the sandbox's disk, bounded
 *     by --disk, not the option); anything else EINVAL as Linux's tmpfs
 *     (ramfs: mode= only, the rest ignored, as Linux). Before red team 44
 *     all were ignored: `-o mode=0700` made a 1777 directory.
 * Needs euid 0 or the virtual CAP_SYS_ADMIN (EPERM otherwise; root inside
 * has Docker's capabilities, without CAP_SYS_ADMIN, but the mount table is
 * the sandbox's own, as sethostname's names are). Other file system
 * types: ENODEV; MS_MOVE: EINVAL. The table is the sandbox's: every task
 * sees every mount (no per-task mount namespaces).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>

#include "kernel/cred.h"
#include "syscalls/sys_fs.h"

#define CAP_SYS_ADMIN_ 21
#ifndef MS_NOSYMFOLLOW
#define MS_NOSYMFOLLOW 256
#endif
static int may_mount(const struct task *t)
{
	return t->cred.euid == 0 || cred_capable(&t->cred, CAP_SYS_ADMIN_);
}

#define MS_PROPAGATION (MS_SHARED | MS_PRIVATE | MS_SLAVE | MS_UNBINDABLE)

struct tmpfs_opts {
	mode_t mode;
	uid_t uid;   /* host ids; -1: not given */
	gid_t gid;
	int has_mode;
};

static int octal_or_dec(const char *v, int base, unsigned long max, unsigned long *out)
{
	char *end;
	if (!*v || !((v[0] >= '0' && v[0] <= '9')))
		return -EINVAL;
	errno = 0;
	unsigned long x = strtoul(v, &end, base);
	if (errno || *end || x > max)
		return -EINVAL;
	*out = x;
	return 0;
}

/* A new tmpfs's (or ramfs's) comma-separated data options, Linux's
 * shmem_parse_one: mode= (octal, 07777), uid=/gid= (the guest's ids,
 * EINVAL when unmapped) are honoured on the root; the size and memory
 * policy options are accepted (not enforced: the sandbox's disk bounds
 * the files); any other is EINVAL for tmpfs (red team 44: `-o mode=0700`
 * was a 1777 directory, `-o noexec` was taken), ignored for ramfs. */
static int tmpfs_options(struct sc_call *c, const char *data, int ramfs, struct tmpfs_opts *o)
{
	static const char *const accepted[] = { "size", "nr_blocks", "nr_inodes", "huge", "mpol",
						"inode32", "inode64", "noswap", "quota", "usrquota",
						"grpquota", NULL };
	char buf[1024];
	o->mode = 01777;
	o->has_mode = 0;
	o->uid = (uid_t)-1;
	o->gid = (gid_t)-1;
	if (!data || !*data)
		return 0;
	if (strlen(data) >= sizeof buf)
		return -EINVAL;
	strcpy(buf, data);
	for (char *save = NULL, *opt = strtok_r(buf, ",", &save); opt; opt = strtok_r(NULL, ",", &save)) {
		char *val = strchr(opt, '=');
		unsigned long x;
		if (val)
			*val++ = 0;
		if (!strcmp(opt, "mode") && val) {
			if (octal_or_dec(val, 8, 07777, &x) < 0)
				return -EINVAL;
			o->mode = (mode_t)x;
			o->has_mode = 1;
			continue;
		}
		if (ramfs)
			continue; /* Linux's ramfs ignores every other option */
		if ((!strcmp(opt, "uid") || !strcmp(opt, "gid")) && val) {
			if (octal_or_dec(val, 10, 0xfffffffeUL, &x) < 0)
				return -EINVAL;
			uint32_t h;
			if (fs_id_to_host(&c->sb->idmap, (uint32_t)x, opt[0] == 'g', &h) < 0)
				return -EINVAL;
			if (opt[0] == 'u')
				o->uid = h;
			else
				o->gid = h;
			continue;
		}
		int ok = 0;
		for (int i = 0; accepted[i] && !ok; i++)
			ok = !strcmp(opt, accepted[i]);
		if (!ok)
			return -EINVAL;
	}
	return 0;
}

static long mount_target(struct sc_call *c, const char *path, unsigned wf,
			 struct vfs_node **n)
{
	long r = fs_walk(c, AT_FDCWD, path, wf, n);

	if (r < 0)
		return r;
	/* the walk follows every link; one it ends on was reached through a
	 * magic link (/proc/<pid>/fd/<n> of an O_PATH fd of a link): Linux
	 * says ENOENT (d80b065b, LTP mount08) */
	if (S_ISLNK((*n)->st.st_mode))
		return -ENOENT;
	if (!S_ISDIR((*n)->st.st_mode))
		return -ENOTDIR;
	return 0;
}

long sys_mount(struct sc_call *c)
{
	const char *src = c->str[0], *target = c->str[1], *type = c->str[2];
	unsigned long flags = c->args[3];
	cleanup_free struct vfs_node *n = NULL, *s = NULL;
	struct vfs *v = VFS_OF(c);
	long r;

	if (!may_mount(c->task))
		return -EPERM;
	if ((flags & MS_MGC_MSK) == MS_MGC_VAL)
		flags &= ~MS_MGC_MSK;
	r = mount_target(c, target, 0, &n);
	if (r < 0)
		return r;
	/* noexec is refused, never accepted and ignored (red team 39: a guest
	 * root's `mount -o remount,noexec /tmp` succeeded and programs there
	 * still ran). The sentry's exec could refuse such a file, but the
	 * loader's and ld.so's mmap(PROT_EXEC) of it run natively on the
	 * gofer's fd, whose host mount is not noexec: enforced at exec only,
	 * `ld.so /tmp/prog` and dlopen would still run it. A new bind ignores
	 * the flag, as Linux ignores every flag of a new bind. (nosuid and
	 * nodev hold on every mount of the sandbox already: no set-id bit is
	 * honoured, device nodes are virtual.) MS_NOSYMFOLLOW likewise: the
	 * walk would follow the mount's links. */
	if ((flags & (MS_NOEXEC | MS_NOSYMFOLLOW)) && !((flags & MS_BIND) && !(flags & MS_REMOUNT)) &&
	    !(flags & MS_PROPAGATION)) {
		snprintf(c->note, sizeof c->note, "mount: MS_NOEXEC/MS_NOSYMFOLLOW not enforced by moat: refused");
		return -EPERM;
	}
	if (flags & MS_REMOUNT)
		return vfs_remount(v, n->path, !!(flags & MS_RDONLY));
	if (flags & MS_PROPAGATION) {
		if (flags & ~(MS_PROPAGATION | MS_REC | MS_SILENT))
			return -EINVAL;
		return 0;
	}
	if (flags & MS_MOVE)
		return -EINVAL;
	if (flags & MS_BIND) {
		if (!src)
			return -EFAULT;
		r = fs_walk(c, AT_FDCWD, src, 0, &s);
		if (r < 0)
			return r;
		/* Linux ignores every flag of a new bind but MS_REC: read-only
		 * takes a remount */
		if (!S_ISDIR(s->st.st_mode))
			return -ENOTDIR; /* the target is a directory */
		return vfs_mount_bind(v, s, n->path, 0);
	}
	if (!type)
		return -EFAULT;
	if (strcmp(type, "tmpfs") && strcmp(type, "ramfs"))
		return -ENODEV;
	char data[1024];
	struct tmpfs_opts o;
	if (c->args[4]) {
		r = sc_read_guest_str(c, c->args[4], data, sizeof data);
		if (r < 0)
			return r == -ENAMETOOLONG ? -EINVAL : r;
	} else {
		data[0] = 0;
	}
	r = tmpfs_options(c, data, !strcmp(type, "ramfs"), &o);
	if (r < 0)
		return r;
	r = vfs_mount_tmpfs(v, n->path, !!(flags & MS_RDONLY), src);
	if (r < 0 || (!o.has_mode && o.uid == (uid_t)-1 && o.gid == (gid_t)-1))
		return r;
	/* the options on the new root, as the kernel sets them at mount:
	 * no permission check, the mount's own (the spare export's root) */
	cleanup_free struct vfs_node *root = NULL;
	r = fs_walk(c, AT_FDCWD, n->path, WALK_CANON, &root);
	if (r == 0 && (root->kind != VN_BACKEND || *root->rel))
		r = -EIO;
	if (r == 0 && o.has_mode)
		r = VFS_BE(v, chmod, root->mnt->export, root->rel, o.mode);
	if (r == 0 && (o.uid != (uid_t)-1 || o.gid != (gid_t)-1))
		r = VFS_BE(v, chown, root->mnt->export, root->rel, o.uid, o.gid);
	if (root)
		vfs_refresh(v, root->mnt, root->rel, &root->st);
	if (r < 0)
		vfs_umount(v, n->path, 0); /* never a mount without its options */
	return r;
}

long sys_umount2(struct sc_call *c)
{
	int flags = ARG_INT(c, 1);
	cleanup_free struct vfs_node *n = NULL;
	long r;

	if (flags & ~(MNT_FORCE | MNT_DETACH | MNT_EXPIRE | UMOUNT_NOFOLLOW))
		return -EINVAL;
	if ((flags & MNT_EXPIRE) && (flags & (MNT_FORCE | MNT_DETACH)))
		return -EINVAL;
	if (!may_mount(c->task))
		return -EPERM;
	r = fs_walk(c, AT_FDCWD, c->str[0], (flags & UMOUNT_NOFOLLOW) ? WALK_NOFOLLOW : 0, &n);
	if (r < 0)
		return r;
	if (flags & MNT_EXPIRE)
		return -EAGAIN;
	return vfs_umount(VFS_OF(c), n->path, !!(flags & MNT_DETACH));
}
