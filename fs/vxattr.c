/* fs/vxattr.c - virtual extended attributes: the trusted.* and security.*
 * names a guest sets on files of gofer mounts.
 *
 * They never reach the host: a security.* or trusted.* attribute on a host
 * file (file capabilities, LSM labels) means something to the host kernel,
 * and the gofer serves user.* only. Root inside may still set and read them
 * (test suites and `cp -a`/`rsync -X` as root do), so the sentry keeps them,
 * in memory, per sandbox, keyed by the file's (st_dev, st_ino), for the
 * sandbox's life: forgotten with the file's last name (vfs_meta_forget),
 * not carried across a copy-up (a new inode) nor exported. Bounded:
 * VXATTR_BYTES in all (ENOSPC past it), an attribute counting its name,
 * value and VX_OVERHEAD for its allocations (before red-team round 8 only
 * name and value: 75,687 empty ones fit, ~8 MiB of heap); a file whose
 * last attribute is removed is dropped.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>

#include "common/util.h"
#include "fs/vxattr.h"

#define VXATTR_BYTES (1u << 20)
#define VXATTR_BUCKETS 256
/* struct vx_attr, its three allocations' headers and a share of its file's */
#define VX_OVERHEAD 96u

struct vx_attr {
	struct vx_attr *next;
	char *name;
	void *val;
	size_t len;
};

struct vx_file {
	struct vx_file *next;
	dev_t dev;
	ino_t ino;
	struct vx_attr *attrs;
};

struct vxattr {
	pthread_mutex_t lock;
	size_t bytes;
	struct vx_file *b[VXATTR_BUCKETS];
};

struct vxattr *vxattr_new(void)
{
	struct vxattr *x = xcalloc(1, sizeof *x);
	pthread_mutex_init(&x->lock, NULL);
	return x;
}

static void attr_free(struct vx_attr *a)
{
	free(a->name);
	free(a->val);
	free(a);
}

void vxattr_free(struct vxattr *x)
{
	if (!x)
		return;
	for (size_t i = 0; i < VXATTR_BUCKETS; i++)
		for (struct vx_file *f = x->b[i], *fn; f; f = fn) {
			fn = f->next;
			for (struct vx_attr *a = f->attrs, *an; a; a = an) {
				an = a->next;
				attr_free(a);
			}
			free(f);
		}
	pthread_mutex_destroy(&x->lock);
	free(x);
}

static struct vx_file **slot(struct vxattr *x, dev_t dev, ino_t ino)
{
	size_t h = ((size_t)ino * 0x9e3779b97f4a7c15ull ^ (size_t)dev) % VXATTR_BUCKETS;
	struct vx_file **p = &x->b[h];

	while (*p && ((*p)->dev != dev || (*p)->ino != ino))
		p = &(*p)->next;
	return p;
}

static struct vx_attr **find(struct vx_file *f, const char *name)
{
	struct vx_attr **p = &f->attrs;

	while (*p && strcmp((*p)->name, name))
		p = &(*p)->next;
	return p;
}

long vxattr_get(struct vxattr *x, dev_t dev, ino_t ino, const char *name, void *buf, size_t size)
{
	long r = -ENODATA;

	pthread_mutex_lock(&x->lock);
	struct vx_file *f = *slot(x, dev, ino);
	struct vx_attr *a = f ? *find(f, name) : NULL;
	if (a) {
		r = (long)a->len;
		if (size && a->len > size)
			r = -ERANGE;
		else if (size)
			memcpy(buf, a->val, a->len);
	}
	pthread_mutex_unlock(&x->lock);
	return r;
}

long vxattr_list(struct vxattr *x, dev_t dev, ino_t ino, int (*want)(const char *, void *),
		 void *arg, char *buf, size_t size)
{
	size_t n = 0;
	long r = 0;

	pthread_mutex_lock(&x->lock);
	struct vx_file *f = *slot(x, dev, ino);
	for (struct vx_attr *a = f ? f->attrs : NULL; a; a = a->next) {
		if (want && !want(a->name, arg))
			continue;
		size_t l = strlen(a->name) + 1;
		if (size && n + l > size) {
			r = -ERANGE;
			break;
		}
		if (size)
			memcpy(buf + n, a->name, l);
		n += l;
	}
	pthread_mutex_unlock(&x->lock);
	return r < 0 ? r : (long)n;
}

int vxattr_set(struct vxattr *x, dev_t dev, ino_t ino, const char *name, const void *val,
	       size_t len, int flags)
{
	int r = 0;

	pthread_mutex_lock(&x->lock);
	struct vx_file **fp = slot(x, dev, ino);
	struct vx_attr **ap = *fp ? find(*fp, name) : NULL;
	struct vx_attr *a = ap ? *ap : NULL;
	size_t add = len + (a ? 0 : strlen(name) + 1 + VX_OVERHEAD), sub = a ? a->len : 0;
	if (a && (flags & XATTR_CREATE)) {
		r = -EEXIST;
	} else if (!a && (flags & XATTR_REPLACE)) {
		r = -ENODATA;
	} else if (x->bytes - sub + add > VXATTR_BYTES) {
		r = -ENOSPC;
	} else {
		void *v = xmalloc(len ? len : 1);
		if (len)
			memcpy(v, val, len); /* (an empty value may come with no buffer) */
		if (!*fp) {
			*fp = xcalloc(1, sizeof **fp);
			(*fp)->dev = dev;
			(*fp)->ino = ino;
		}
		if (!a) {
			a = xcalloc(1, sizeof *a);
			a->name = xstrdup(name);
			a->next = (*fp)->attrs;
			(*fp)->attrs = a;
		} else {
			free(a->val);
		}
		a->val = v;
		a->len = len;
		x->bytes = x->bytes - sub + add;
	}
	pthread_mutex_unlock(&x->lock);
	return r;
}

int vxattr_remove(struct vxattr *x, dev_t dev, ino_t ino, const char *name)
{
	int r = -ENODATA;

	pthread_mutex_lock(&x->lock);
	struct vx_file *f = *slot(x, dev, ino);
	struct vx_attr **ap = f ? find(f, name) : NULL;
	if (ap && *ap) {
		struct vx_attr *a = *ap;
		*ap = a->next;
		x->bytes -= a->len + strlen(a->name) + 1 + VX_OVERHEAD;
		attr_free(a);
		r = 0;
		if (!f->attrs) {
			struct vx_file **fp = slot(x, dev, ino);
			*fp = f->next; /* slot finds f itself: it is the file's */
			free(f);
		}
	}
	pthread_mutex_unlock(&x->lock);
	return r;
}

void vxattr_forget(struct vxattr *x, dev_t dev, ino_t ino)
{
	if (!x)
		return;
	pthread_mutex_lock(&x->lock);
	struct vx_file **fp = slot(x, dev, ino), *f = *fp;
	if (f) {
		*fp = f->next;
		for (struct vx_attr *a = f->attrs, *an; a; a = an) {
			an = a->next;
			x->bytes -= a->len + strlen(a->name) + 1 + VX_OVERHEAD;
			attr_free(a);
		}
		free(f);
	}
	pthread_mutex_unlock(&x->lock);
}
