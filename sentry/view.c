/* sentry/view.c - plan the guest's view: which host trees the gofer exports
 * and where the VFS mounts them.
 *
 * System view (no --root): /usr /etc /opt (and /bin /sbin /lib* as the host
 * has them: symlinks stay symlinks, directories are exported) read-only, with
 * /etc's secrets hidden; private in-memory /tmp, home, /dev/shm, /var/tmp
 * and /run (gofer tmpfs exports; add_scratch); /dev device nodes (gofer
 * device export) plus fd/std* symlinks; synthetic /proc. Nothing else of the host exists.
 * --root DIR: DIR read-only at "/", plus the same /tmp, /dev and /proc.
 * --bind SRC:DST[:ro|rw|cow][,shared] mounts go last (they hide what is below
 * them); a shared one is looked up afresh every time (fs/dcache.h).
 */
#include "sentry/sentry.h"
#include "sentry/netpolicy.h"
#include "fs/vfs.h"
#include "fs/procfs.h"
#include "gofer/gofer.h"
#include "common/log.h"
#include "common/util.h"

#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* /etc names that never reach the guest (ENOENT, absent from listings). */
static const char *const etc_secrets_fixed[] = {
	"shadow", "shadow-", "gshadow", "gshadow-", "sudoers", "sudoers.d",
	"security/opasswd", "ssl/private", "krb5.keytab", "docker",
	"NetworkManager/system-connections", "wireguard", "ppp/chap-secrets",
	"ppp/pap-secrets", "libvirt/secrets", "machine-id", ".pwd.lock",
	/* the host's disks by UUID= and LABEL= (one value per host disk, the
	 * same in every sandbox: a fingerprint, and what FS_IOC_GETFSUUID no
	 * longer tells). Hidden, not replaced: an absent fstab is a normal
	 * state (minimal images have none; util-linux's mount and findmnt
	 * read a missing one as an empty table), the guest mounts nothing
	 * from it, and the view's mount table is /proc/self/mounts */
	"fstab", "crypttab",
};

/* /etc/ssh's host private keys by their fixed names, hidden whether or not
 * they exist when the view is built (red team 30: the list was only what a
 * readdir of /etc/ssh found at start, so a key the host made later, as
 * sshd-keygen or cloud-init do at first boot, was the guest's to read):
 * OpenSSH's key types, ssh_host_key its protocol 1 one. Their public halves
 * and certificates (NAME.pub, NAME-cert.pub) are hidden the same way: one
 * value per host, naming it in every sandbox (ssh-keyscan's fingerprint of
 * the machine). Nothing in a sandbox needs the host's own host keys (the
 * client's known_hosts is the user's; host-based authentication, which
 * reads them, runs ssh-keysign, a set-id program moat never runs set-id). */
static const char *const etc_ssh_keys_fixed[] = {
	"ssh/ssh_host_key", "ssh/ssh_host_rsa_key", "ssh/ssh_host_dsa_key",
	"ssh/ssh_host_ecdsa_key", "ssh/ssh_host_ed25519_key", "ssh/ssh_host_ecdsa_sk_key",
	"ssh/ssh_host_ed25519_sk_key", "ssh/ssh_host_xmss_key",
};

static const char **etc_hidden(void)
{
	static const char *const halves[] = { "", ".pub", "-cert.pub" };
	size_t nfixed = ARRAY_SIZE(etc_ssh_keys_fixed) * ARRAY_SIZE(halves);
	size_t n = 0, cap = ARRAY_SIZE(etc_secrets_fixed) + nfixed + 64;
	const char **v = xcalloc(cap + 1, sizeof *v);
	for (size_t i = 0; i < ARRAY_SIZE(etc_secrets_fixed); i++)
		v[n++] = etc_secrets_fixed[i];
	size_t first_key = n;
	for (size_t i = 0; i < ARRAY_SIZE(etc_ssh_keys_fixed); i++)
		for (size_t h = 0; h < ARRAY_SIZE(halves); h++) {
			char *p = xmalloc(strlen(etc_ssh_keys_fixed[i]) + strlen(halves[h]) + 1);
			sprintf(p, "%s%s", etc_ssh_keys_fixed[i], halves[h]);
			v[n++] = p;
		}
	/* and every other host key under /etc/ssh there now (private and
	 * public halves, certificates), whatever the type */
	DIR *d = opendir("/etc/ssh");
	if (d) {
		struct dirent *de;
		while ((de = readdir(d)) && n < cap) {
			if (fnmatch("ssh_host_*key*", de->d_name, 0) == 0) {
				char *p = xmalloc(strlen(de->d_name) + 5);
				sprintf(p, "ssh/%s", de->d_name);
				int dup = 0;
				for (size_t i = first_key; i < first_key + nfixed && !dup; i++)
					dup = !strcmp(p, v[i]);
				if (dup)
					free(p);
				else
					v[n++] = p;
			}
		}
		closedir(d);
	}
	v[n] = NULL;
	return v;
}

#define VIEW_SPARE_TMPFS 2

struct builder {
	struct view *v;
	size_t ecap, mcap;
	char desc[16384];
	size_t dlen;
};

static int add_export(struct builder *b, int kind, const char *host, int writable,
		      const char *const *hidden)
{
	struct view *v = b->v;
	xgrow_array(&v->exports, &b->ecap, v->nexports, sizeof *v->exports, 16);
	struct gofer_export *e = &v->exports[v->nexports];
	memset(e, 0, sizeof *e);
	e->kind = kind;
	e->host_path = host ? xstrdup(host) : NULL;
	e->writable = writable;
	e->hidden = hidden;
	return (int)v->nexports++;
}

static void add_mount(struct builder *b, const char *path, int kind, int exp,
		      int writable, int dev, const char *const *hidden, const char *target)
{
	struct view *v = b->v;
	xgrow_array(&v->mounts, &b->mcap, v->nmounts, sizeof *v->mounts, 32);
	struct vfs_mount_spec *m = &v->mounts[v->nmounts++];
	memset(m, 0, sizeof *m);
	m->path = xstrdup(path);
	m->kind = kind;
	m->export = exp;
	m->writable = writable;
	m->dev = dev;
	m->private_fs = kind == VFS_MNT_GOFER && exp >= 0 &&
			v->exports[exp].kind == GOFER_EXPORT_TMPFS;
	m->cow = kind == VFS_MNT_GOFER && exp >= 0 && v->exports[exp].cow;
	m->hidden = hidden;
	m->target = target ? xstrdup(target) : NULL;
	int n = snprintf(b->desc + b->dlen, sizeof b->desc - b->dlen, "%s %d %d %d %d %s %s;",
			 path, kind, writable, dev, exp >= 0 && v->exports[exp].cow,
			 exp >= 0 && v->exports[exp].host_path ? v->exports[exp].host_path : "-",
			 target ? target : "-");
	if (n > 0 && b->dlen + n < sizeof b->desc)
		b->dlen += n;
}

/* Two mounts of host-directory exports (not cow: an overlay's changes are its
 * own) where one's host path is the other's or beneath it serve the same
 * inodes under different dentry-cache keys: both are "aliased" (a change
 * through one drops the inode's names everywhere, fs/vfs.c). */
static int path_within(const char *a, const char *b)
{
	size_t n = strlen(b);
	return !strncmp(a, b, n) && (a[n] == 0 || a[n] == '/' || (n == 1 && b[0] == '/'));
}

static void mark_aliases(struct view *v)
{
	for (size_t i = 0; i < v->nmounts; i++) {
		struct vfs_mount_spec *a = &v->mounts[i];
		if (a->kind != VFS_MNT_GOFER || a->export < 0 || a->cow || a->dev)
			continue;
		const char *pa = v->exports[a->export].host_path;
		for (size_t j = i + 1; pa && j < v->nmounts; j++) {
			struct vfs_mount_spec *b = &v->mounts[j];
			if (b->kind != VFS_MNT_GOFER || b->export < 0 || b->cow || b->dev)
				continue;
			const char *pb = v->exports[b->export].host_path;
			if (pb && (path_within(pa, pb) || path_within(pb, pa)))
				a->aliased = b->aliased = 1;
		}
	}
}

/* --overlay: the root's host directories become cow exports of one export
 * group, "root", their paths prefixed with their place ("usr/"). */
static const char *root_overlay;

/* A unique --export name for a cow mount at dst: "work", "home_me_repo" */
static const char *cow_name(struct builder *b, const char *dst)
{
	char n[256];
	size_t o = 0;

	for (const char *p = dst; *p && o + 12 < sizeof n; p++) {
		if (*p == '/' && (!o || !p[1]))
			continue;
		char ch = *p == '/' || (*p == '.' && !o) ? '_' : *p;
		n[o++] = ch;
	}
	n[o] = 0;
	if (!o)
		snprintf(n, sizeof n, "root");
	for (size_t i = 0; i < b->v->nexports; i++) {
		const char *m = b->v->exports[i].cow_name;
		if (m && !strcmp(m, n)) {
			snprintf(n + o, sizeof n - o, "-%zu", b->v->nexports);
			break;
		}
	}
	return xstrdup(n);
}

/* A host directory, read-only, as-is (symlink stays a symlink). */
static void add_host(struct builder *b, const char *path, const char *const *hidden)
{
	struct stat st;
	if (lstat(path, &st) < 0)
		return;
	if (S_ISLNK(st.st_mode)) {
		char t[4096];
		ssize_t n = readlink(path, t, sizeof t - 1);
		if (n <= 0)
			return;
		t[n] = 0;
		add_mount(b, path, VFS_MNT_SYMLINK, -1, 0, 0, NULL, t);
	} else if (S_ISDIR(st.st_mode)) {
		int e = add_export(b, GOFER_EXPORT_DIR, path, 0, hidden);
		if (root_overlay) {
			char *pre = xmalloc(strlen(path) + 2);
			sprintf(pre, "%s/", path + 1);
			b->v->exports[e].cow = 1;
			b->v->exports[e].cow_name = "root";
			b->v->exports[e].cow_prefix = pre;
			b->v->exports[e].cow_persist = root_overlay[0] == '/';
			b->v->exports[e].sealed = 1;
		}
		add_mount(b, path, VFS_MNT_GOFER, e, root_overlay != NULL, 0, hidden, NULL);
		b->v->mounts[b->v->nmounts - 1].system = 1;
		b->v->mounts[b->v->nmounts - 1].host_view = 1;
	}
}

/* Is guest path p at or beneath a mount point other than "/"? */
static int under_mount(const struct view *v, const char *p)
{
	for (size_t i = 0; i < v->nmounts; i++) {
		const char *m = v->mounts[i].path;
		size_t l = strlen(m);
		if (v->mounts[i].kind == VFS_MNT_SPARE || !strcmp(m, "/"))
			continue;
		if (!strncmp(p, m, l) && (p[l] == 0 || p[l] == '/'))
			return 1;
	}
	return 0;
}

/* --overlay with the system view: "/" itself is a cow export too, so the
 * guest can make top-level entries (mkdir /work); they land in the upper
 * layer and in the "root" export with their own paths. Its lower layer is
 * the gofer's empty tmpfs holding only the directories the mount table
 * needs there (the ancestors of mount points that no other mount covers:
 * "home" for /home/user), so nothing of the host's root shows; the mounts
 * (/usr, /tmp, /proc, ...) stay on top (longest prefix). */
static void add_root_layer(struct builder *b)
{
	struct view *v = b->v;
	size_t cap = 16, n = 0;
	const char **skel = xcalloc(cap + 1, sizeof *skel);

	for (size_t i = 0; i < v->nmounts; i++) {
		const char *p = v->mounts[i].path;
		if (v->mounts[i].kind == VFS_MNT_SPARE)
			continue;
		/* each proper ancestor of p but "/", shallowest first */
		for (const char *s = strchr(p + 1, '/'); s; s = strchr(s + 1, '/')) {
			char *a = xmalloc((size_t)(s - p) + 1);
			memcpy(a, p, (size_t)(s - p));
			a[s - p] = 0;
			int seen = under_mount(v, a);
			for (size_t k = 0; k < n && !seen; k++)
				seen = !strcmp(skel[k], a + 1);
			if (seen) {
				free(a);
				continue;
			}
			if (n == cap) {
				cap *= 2;
				skel = realloc(skel, (cap + 1) * sizeof *skel);
				if (!skel)
					die("out of memory");
			}
			skel[n++] = xstrdup(a + 1);
			skel[n] = NULL;
			free(a);
		}
	}
	int e = add_export(b, GOFER_EXPORT_DIR, "/", 0, NULL);
	v->exports[e].cow = 1;
	v->exports[e].cow_name = "root";
	v->exports[e].cow_prefix = "";
	v->exports[e].cow_persist = root_overlay[0] == '/';
	v->exports[e].skeleton = skel;
	add_mount(b, "/", VFS_MNT_GOFER, e, 1, 0, NULL, NULL);
	b->v->mounts[b->v->nmounts - 1].system = 1;
}

/* Canonical absolute guest path: collapse "//", "/./", reject "..". */
static int canon_guest(const char *in, char *out, size_t len)
{
	if (in[0] != '/')
		return -EINVAL;
	size_t o = 0;
	const char *p = in;
	while (*p) {
		while (*p == '/')
			p++;
		if (!*p)
			break;
		const char *s = p;
		while (*p && *p != '/')
			p++;
		size_t l = p - s;
		if (l == 1 && s[0] == '.')
			continue;
		if (l == 2 && s[0] == '.' && s[1] == '.')
			return -EINVAL;
		if (o + 1 + l + 1 > len)
			return -ENAMETOOLONG;
		out[o++] = '/';
		memcpy(out + o, s, l);
		o += l;
	}
	if (o == 0)
		out[o++] = '/';
	out[o] = 0;
	return 0;
}

/* The object stat_caller_source found at a --bind SRC or --root (not a
 * symlink a sandbox planted there): the gofer's clone of the resolved path
 * must be it (checked_object), or the start fails (red team 92: a host
 * process that swapped the checked directory for a symlink to / before the
 * gofer's open gave the guest the host's root) */
static void checked_source(struct gofer_export *e, const struct stat *st)
{
	e->chk_dev = st->st_dev;
	e->chk_ino = st->st_ino;
}

/* a --bind or --tmpfs of the caller's at PATH or above it: theirs, whole */
static int user_mount_covers(const struct sentry_config *cfg, const char *path)
{
	for (int i = 0; i < cfg->nbinds; i++) {
		char dst[4096];
		if (canon_guest(cfg->binds[i].dst, dst, sizeof dst) < 0)
			continue;
		size_t n = strlen(dst);
		if (!strcmp(dst, "/") || (!strncmp(path, dst, n) && (path[n] == 0 || path[n] == '/')))
			return 1;
	}
	return 0;
}

/* The system view's scratch places every Linux system has and programs
 * write without asking (FHS): /var/tmp (mktemp -p /var/tmp, vim's and gcc's
 * fallbacks; rootless too, where / is not the guest's to mkdir in) and /run
 * (/var/run; screen's /run/screen), private, empty and gone at exit as /tmp
 * is, in the --disk pool as /tmp is: none of the host's /var or /run shows
 * (the skeleton of the root layer holds an empty "var"). A mount of the
 * caller's there or above keeps the place whole. */
static void add_scratch(struct builder *b, const struct sentry_config *cfg)
{
	static const struct { const char *path; mode_t mode; } places[] = {
		{ "/var/tmp", 01777 }, { "/run", 0755 },
	};
	for (size_t i = 0; i < ARRAY_SIZE(places); i++) {
		if (user_mount_covers(cfg, places[i].path))
			continue;
		int e = add_export(b, GOFER_EXPORT_TMPFS, NULL, 1, NULL);
		b->v->exports[e].mode = places[i].mode;
		add_mount(b, places[i].path, VFS_MNT_GOFER, e, 1, 0, NULL, NULL);
	}
	if (!user_mount_covers(cfg, "/var/run"))
		add_mount(b, "/var/run", VFS_MNT_SYMLINK, -1, 0, 0, NULL, "/run");
}

int view_plan(const struct sentry_config *cfg, struct view *v, char *err, size_t errlen)
{
	struct builder b = { .v = v };
	memset(v, 0, sizeof *v);

	struct passwd *pw = getpwuid(getuid());
	snprintf(v->home, sizeof v->home, "%s",
		 pw && pw->pw_dir && pw->pw_dir[0] == '/' ? pw->pw_dir : "/home/user");
	if (strcmp(v->home, "/") == 0 || strncmp(v->home, "/nonexistent", 12) == 0)
		snprintf(v->home, sizeof v->home, "/home/user");
	/* --overlay: memory unless the caller said otherwise */
	root_overlay = !cfg->overlay ? "memory" : strcmp(cfg->overlay, "none") ? cfg->overlay : NULL;

	if (cfg->root) {
		struct stat st;
		errno = 0;
		if (stat_caller_source(cfg->root, &st) < 0 || !S_ISDIR(st.st_mode)) {
			snprintf(err, errlen, "--root %s: %s", cfg->root,
				 errno ? caller_output_error(errno) : "Not a directory");
			return -ENOENT;
		}
		char *rp = realpath(cfg->root, NULL);
		int e = add_export(&b, GOFER_EXPORT_DIR, rp, 0, NULL);
		checked_source(&v->exports[e], &st);
		if (root_overlay) {
			v->exports[e].cow = 1;
			v->exports[e].cow_name = "root";
			v->exports[e].cow_prefix = "";
			v->exports[e].cow_persist = root_overlay[0] == '/';
		}
		add_mount(&b, "/", VFS_MNT_GOFER, e, root_overlay != NULL, 0, NULL, NULL);
		v->mounts[v->nmounts - 1].system = 1;
		free(rp);
	} else {
		static const char *const *hidden_etc;
		if (!hidden_etc)
			hidden_etc = etc_hidden();
		const char *tops[] = { "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64",
				       "/libx32", "/opt" };
		for (size_t i = 0; i < ARRAY_SIZE(tops); i++)
			add_host(&b, tops[i], NULL);
		add_host(&b, "/etc", hidden_etc);
		int h = add_export(&b, GOFER_EXPORT_TMPFS, NULL, 1, NULL);
		if (cfg->user_set && geteuid() == 0) {
			/* --user: the home belongs to the program's ids (run as
			 * root, guest ids are host ids on private files) */
			v->exports[h].owner_set = 1;
			v->exports[h].owner_uid = cfg->user_uid;
			v->exports[h].owner_gid = cfg->user_gid;
		}
		add_mount(&b, v->home, VFS_MNT_GOFER, h, 1, 0, NULL, NULL);
		add_scratch(&b, cfg);
	}
	int t = add_export(&b, GOFER_EXPORT_TMPFS, NULL, 1, NULL);
	v->exports[t].mode = 01777; /* /tmp: world-writable, sticky */
	add_mount(&b, "/tmp", VFS_MNT_GOFER, t, 1, 0, NULL, NULL);
	int d = add_export(&b, GOFER_EXPORT_DEV, NULL, 1, NULL);
	if (cfg->user_set && geteuid() == 0) {
		/* --user: the guest's ptys (its devpts) belong to those ids */
		v->exports[d].owner_set = 1;
		v->exports[d].owner_uid = cfg->user_uid;
		v->exports[d].owner_gid = cfg->user_gid;
	}
	add_mount(&b, "/dev", VFS_MNT_GOFER, d, 1, 1, NULL, NULL);
	int shm = add_export(&b, GOFER_EXPORT_TMPFS, NULL, 1, NULL);
	v->exports[shm].mode = 01777;
	add_mount(&b, "/dev/shm", VFS_MNT_GOFER, shm, 1, 0, NULL, NULL);
	/* the sandbox's own devpts instance is /dev/pts (gofer/setup.c) */
	add_mount(&b, "/dev/ptmx", VFS_MNT_SYMLINK, -1, 0, 0, NULL, "pts/ptmx");
	add_mount(&b, "/dev/fd", VFS_MNT_SYMLINK, -1, 0, 0, NULL, "/proc/self/fd");
	add_mount(&b, "/dev/stdin", VFS_MNT_SYMLINK, -1, 0, 0, NULL, "/proc/self/fd/0");
	add_mount(&b, "/dev/stdout", VFS_MNT_SYMLINK, -1, 0, 0, NULL, "/proc/self/fd/1");
	add_mount(&b, "/dev/stderr", VFS_MNT_SYMLINK, -1, 0, 0, NULL, "/proc/self/fd/2");
	add_mount(&b, "/proc", VFS_MNT_PROC, -1, 0, 0, NULL, NULL);
	/* a minimal read-only /sys of the sandbox's own (fs/procfs.c) */
	add_mount(&b, "/sys", VFS_MNT_PROC, -1, 0, 0, NULL, PROCFS_SYSFS "/");
	/* --net allow=: the guest's resolver asks the DNS stub (sentry/netdns.c) */
	if (cfg->net && cfg->net->nrules > 0)
		add_mount(&b, "/etc/resolv.conf", VFS_MNT_SYMLINK, -1, 0, 0, NULL,
			  "/proc/moat-resolv.conf");
	/* the sandbox's own names, never the host's: /etc/hosts (localhost and
	 * the --hostname) and /etc/hostname are procfs files (fs/procfs.c) */
	add_mount(&b, "/etc/hosts", VFS_MNT_PROC, -1, 0, 0, NULL, PROCFS_ETC_HOSTS);
	add_mount(&b, "/etc/hostname", VFS_MNT_PROC, -1, 0, 0, NULL, "sys/kernel/hostname");

	/* one mount per destination: a second --bind or --tmpfs at the same
	 * place hid the first one silently, the last one won (red team 40:
	 * a wrapper's `--bind SRC:/x:ro` after the user's `--bind SRC:/x:rw`
	 * made nothing read-only) */
	for (int i = 0; i < cfg->nbinds; i++) {
		char di[4096], dj[4096];
		if (canon_guest(cfg->binds[i].dst, di, sizeof di) < 0)
			continue; /* (said below) */
		for (int j = 0; j < i; j++)
			if (canon_guest(cfg->binds[j].dst, dj, sizeof dj) == 0 && !strcmp(di, dj)) {
				snprintf(err, errlen, "%s %s: %s is the destination of an earlier %s too",
					 cfg->binds[i].tmpfs ? "--tmpfs" : "--bind", cfg->binds[i].dst, di,
					 cfg->binds[j].tmpfs ? "--tmpfs" : "--bind");
				return -EINVAL;
			}
	}
	for (int i = 0; i < cfg->nbinds; i++) {
		const struct bind_spec *bs = &cfg->binds[i];
		char dst[4096];
		struct stat st;
		if (bs->tmpfs) {
			if (canon_guest(bs->dst, dst, sizeof dst) < 0) {
				snprintf(err, errlen, "--tmpfs %s: must be an absolute path without ..",
					 bs->dst);
				return -EINVAL;
			}
			if (!strcmp(dst, "/")) { /* (the root mount won: silently ignored before) */
				snprintf(err, errlen, "--tmpfs %s: the root cannot be a --tmpfs "
					 "(--root DIR, --overlay memory)", bs->dst);
				return -EINVAL;
			}
			int e = add_export(&b, GOFER_EXPORT_TMPFS, NULL, 1, NULL);
			v->exports[e].mode = 01777;
			v->exports[e].size = bs->size;
			add_mount(&b, dst, VFS_MNT_GOFER, e, 1, 0, NULL, NULL);
			continue;
		}
		if (stat_caller_source(bs->src, &st) < 0) {
			snprintf(err, errlen, "--bind %s: %s", bs->src, caller_output_error(errno));
			return -ENOENT;
		}
		/* (the gofer refuses these too, at exit 1 with "gofer:"; this is
		 * the caller's mistake: said as one, exit 2) */
		if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode)) {
			snprintf(err, errlen, "--bind %s: not a directory or regular file (a socket, "
				 "fifo or device cannot be bound)", bs->src);
			return -EINVAL;
		}
		if (canon_guest(bs->dst, dst, sizeof dst) < 0) {
			snprintf(err, errlen, "--bind destination %s: must be an absolute path without ..",
				 bs->dst);
			return -EINVAL;
		}
		if (!strcmp(dst, "/")) {
			snprintf(err, errlen, "--bind %s:%s: the root cannot be a --bind (--root %s)",
				 bs->src, bs->dst, bs->src);
			return -EINVAL;
		}
		char *rp = realpath(bs->src, NULL);
		if (bs->cow && !S_ISDIR(st.st_mode)) {
			snprintf(err, errlen, "--bind %s: cow needs a directory", bs->src);
			return -EINVAL;
		}
		int e = add_export(&b, GOFER_EXPORT_DIR, rp, bs->writable || bs->cow, NULL);
		checked_source(&v->exports[e], &st);
		if (bs->cow) {
			v->exports[e].cow = 1;
			v->exports[e].cow_name = cow_name(&b, dst);
			v->exports[e].cow_prefix = "";
		}
		add_mount(&b, dst, VFS_MNT_GOFER, e, bs->writable || bs->cow, 0, NULL, NULL);
		if (bs->shared) {
			/* no cached lookups: see fs/dcache.h */
			v->mounts[v->nmounts - 1].shared = 1;
			int n = snprintf(b.desc + b.dlen, sizeof b.desc - b.dlen, "shared;");
			if (n > 0 && b.dlen + n < sizeof b.desc)
				b.dlen += n;
		}
		free(rp);
	}
	if (root_overlay && !cfg->root)
		add_root_layer(&b);
	/* spare private tmpfs exports for the guest's own mount(2) of a
	 * tmpfs (test suites mount one and remount it read-only) */
	for (int i = 0; i < VIEW_SPARE_TMPFS; i++) {
		int e = add_export(&b, GOFER_EXPORT_TMPFS, NULL, 1, NULL);
		v->exports[e].mode = 01777;
		add_mount(&b, "/", VFS_MNT_SPARE, e, 1, 0, NULL, NULL);
	}
	mark_aliases(v);
	v->desc = xstrdup(b.desc);
	return 0;
}
