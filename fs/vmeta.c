/* fs/vmeta.c - virtual metadata of host files.
 *
 * The gofer never sets a set-id bit on a host file and never changes a host
 * file's owner (gofer/server.c enforces it). What the guest set instead lives
 * here, keyed by the file's identity (st_dev, st_ino): an owner, a group
 * (guest-view ids; -1 = the file's own) and the set-id bits. Stats shown to
 * the guest (stat, lstat, newfstatat, statx) go through vmeta_apply; nothing
 * of it reaches the host, and permission checks use the file's real owner
 * and mode (fs/vfs.c).
 *
 * An entry equal to the real file is dropped. The table is bounded
 * (VMETA_MAX entries): past that a change that needs a new entry is -ENOSPC.
 * Entries of a file the sentry removes (its last link) are dropped; a host
 * file deleted behind the sandbox's back whose inode number is reused would
 * inherit an entry (known gap).
 *
 * A file the sandbox created (vmeta_make: the gofer made it as itself) has a
 * "made" entry naming its creator's guest ids: permission checks treat it as
 * one of the sandbox's own files (fs/vfs.c), so a guest of any ids can use
 * what it made, as on Linux, and guest root has its DAC override there. A
 * made entry with nothing virtual in it (the creator's ids are the file's
 * real ones: guest root's files root-run, the caller's rootless) is
 * recorded only while the table holds fewer than VMETA_MADE_MAX entries:
 * the rest stays for owners and set-id bits the guest sets. That entry also keeps the real owner and group
 * the file had then: a reused inode number of a file of other ids is not
 * taken for it (one of the same ids made by the host meanwhile would be:
 * known gap).
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "common/util.h"
#include "fs/vmeta.h"

#define VMETA_BUCKETS 1024

struct vment {
	struct vment *next;
	dev_t dev;
	ino_t ino;
	uid_t uid;              /* (uid_t)-1: the real owner */
	gid_t gid;              /* (gid_t)-1: the real group */
	mode_t setid;           /* S_ISUID | S_ISGID as the guest set them */
	int made;               /* the sandbox created the file (vmeta_make) */
	uid_t ruid;             /* ... and its real owner and group then */
	gid_t rgid;
	int copied;             /* copied up by hand (vmeta_copied): checks take */
	uid_t cuid;             /* these real ids of the original (guest view) */
	gid_t cgid;
	mode_t vtype;           /* a device node the guest made (S_IFCHR, S_IFBLK;
				 * the host file is an empty regular one), or 0 */
	dev_t vrdev;
};

/* the type and device number of a virtual device node */
static void apply_dev(const struct vment *e, struct stat *st)
{
	if (!e->vtype)
		return;
	st->st_mode = (st->st_mode & ~(mode_t)S_IFMT) | e->vtype;
	st->st_rdev = e->vrdev;
	st->st_size = 0;
	st->st_blocks = 0;
}

struct vmeta {
	pthread_mutex_t lock;
	size_t n;
	struct vment *b[VMETA_BUCKETS];
};

struct vmeta *vmeta_new(void)
{
	struct vmeta *m = xcalloc(1, sizeof *m);

	pthread_mutex_init(&m->lock, NULL);
	return m;
}

void vmeta_free(struct vmeta *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < VMETA_BUCKETS; i++) {
		for (struct vment *e = m->b[i], *nx; e; e = nx) {
			nx = e->next;
			free(e);
		}
	}
	pthread_mutex_destroy(&m->lock);
	free(m);
}

static struct vment **slot(struct vmeta *m, dev_t dev, ino_t ino)
{
	uint64_t k[2] = { (uint64_t)dev, (uint64_t)ino };
	struct vment **p = &m->b[moat_hash(k, sizeof k) % VMETA_BUCKETS];

	while (*p && ((*p)->dev != dev || (*p)->ino != ino))
		p = &(*p)->next;
	return p;
}

void vmeta_apply(struct vmeta *m, struct stat *st)
{
	struct vment *e;

	if (!m || !m->n)
		return;
	pthread_mutex_lock(&m->lock);
	e = *slot(m, st->st_dev, st->st_ino);
	if (e) {
		if (e->uid != (uid_t)-1)
			st->st_uid = e->uid;
		if (e->gid != (gid_t)-1)
			st->st_gid = e->gid;
		st->st_mode = (st->st_mode & ~(mode_t)(S_ISUID | S_ISGID)) | e->setid;
		apply_dev(e, st);
	}
	pthread_mutex_unlock(&m->lock);
}

void vmeta_apply_dev(struct vmeta *m, struct stat *st)
{
	if (!m || !m->n)
		return;
	pthread_mutex_lock(&m->lock);
	struct vment *e = *slot(m, st->st_dev, st->st_ino);
	if (e)
		apply_dev(e, st);
	pthread_mutex_unlock(&m->lock);
}

/* vmeta_update, and with make vmeta_make: one pass under the lock */
static int update(struct vmeta *m, const struct stat *real, uid_t uid, gid_t gid, mode_t setid, int set_mode,
		  int make)
{
	struct vment **p, *e, cur;
	int r = 0;

	pthread_mutex_lock(&m->lock);
	p = slot(m, real->st_dev, real->st_ino);
	cur = *p ? **p : (struct vment){ .uid = (uid_t)-1, .gid = (gid_t)-1,
					 .setid = real->st_mode & (S_ISUID | S_ISGID) };
	if (make) {
		cur.made = 1;
		cur.ruid = real->st_uid;
		cur.rgid = real->st_gid;
	}
	if (uid != (uid_t)-1)
		cur.uid = uid == real->st_uid ? (uid_t)-1 : uid;
	if (gid != (gid_t)-1)
		cur.gid = gid == real->st_gid ? (gid_t)-1 : gid;
	if (set_mode)
		cur.setid = setid & (S_ISUID | S_ISGID);
	if (cur.uid == (uid_t)-1 && cur.gid == (gid_t)-1 && !cur.made && !cur.vtype && !cur.copied &&
	    cur.setid == (real->st_mode & (S_ISUID | S_ISGID))) {
		if (*p) {                       /* back to the real file's */
			e = *p;
			*p = e->next;
			free(e);
			m->n--;
		}
	} else if (*p) {
		cur.next = (*p)->next;
		**p = cur;
	} else if (m->n >= VMETA_MAX ||
		   (make && cur.uid == (uid_t)-1 && cur.gid == (gid_t)-1 &&
		    cur.setid == (real->st_mode & (S_ISUID | S_ISGID)) && m->n >= VMETA_MADE_MAX)) {
		/* a made entry that holds nothing virtual (guest root's 0:0
		 * files) leaves room for what only the table can hold */
		r = -ENOSPC;
	} else {
		e = malloc(sizeof *e);
		if (!e) {
			r = -ENOMEM;
		} else {
			*e = cur;
			e->dev = real->st_dev;
			e->ino = real->st_ino;
			e->next = NULL;
			*p = e;
			m->n++;
		}
	}
	pthread_mutex_unlock(&m->lock);
	return r;
}

int vmeta_update(struct vmeta *m, const struct stat *real, uid_t uid, gid_t gid, mode_t setid, int set_mode)
{
	return update(m, real, uid, gid, setid, set_mode, 0);
}

int vmeta_make(struct vmeta *m, const struct stat *real, uid_t uid, gid_t gid, mode_t setid, int set_mode)
{
	return update(m, real, uid, gid, setid, set_mode, 1);
}

int vmeta_made(struct vmeta *m, const struct stat *real, struct stat *view)
{
	struct vment *e;
	int made = 0;

	if (!m || !m->n)
		return 0;
	pthread_mutex_lock(&m->lock);
	e = *slot(m, real->st_dev, real->st_ino);
	/* the real ids only (an inode number reused by a file of other ids is
	 * not ours; never the virtual ids a guest root may set) */
	made = e && e->made && real->st_uid == e->ruid && real->st_gid == e->rgid;
	if (made && view) {
		*view = *real;
		if (e->uid != (uid_t)-1)
			view->st_uid = e->uid;
		if (e->gid != (gid_t)-1)
			view->st_gid = e->gid;
		view->st_mode = (view->st_mode & ~(mode_t)(S_ISUID | S_ISGID)) | e->setid;
		apply_dev(e, view);
	}
	pthread_mutex_unlock(&m->lock);
	return made;
}

int vmeta_set_dev(struct vmeta *m, const struct stat *real, mode_t type, dev_t rdev)
{
	int r = update(m, real, (uid_t)-1, (gid_t)-1, 0, 0, 1);

	if (r < 0)
		return r;
	pthread_mutex_lock(&m->lock);
	struct vment *e = *slot(m, real->st_dev, real->st_ino);
	if (e) {
		e->vtype = type & S_IFMT;
		e->vrdev = rdev;
	} else {
		r = -ENOSPC;
	}
	pthread_mutex_unlock(&m->lock);
	return r;
}

int vmeta_copied(struct vmeta *m, const struct stat *old, const struct stat *copy)
{
	struct vment *e, cur;
	int r = 0;

	pthread_mutex_lock(&m->lock);
	e = *slot(m, old->st_dev, old->st_ino);
	cur = e ? *e : (struct vment){ .uid = (uid_t)-1, .gid = (gid_t)-1,
				       .setid = old->st_mode & (S_ISUID | S_ISGID) };
	/* shown: what the guest saw of old; checked: old's real ids */
	if (cur.uid == (uid_t)-1)
		cur.uid = old->st_uid;
	if (cur.gid == (gid_t)-1)
		cur.gid = old->st_gid;
	if (!cur.copied) {
		cur.cuid = old->st_uid;
		cur.cgid = old->st_gid;
	}
	cur.copied = 1;
	cur.made = 0; /* a made entry of old named its real ids, not the copy's */
	cur.ruid = copy->st_uid;
	cur.rgid = copy->st_gid;
	if (cur.uid == copy->st_uid)
		cur.uid = (uid_t)-1;
	if (cur.gid == copy->st_gid)
		cur.gid = (gid_t)-1;
	struct vment **p = slot(m, copy->st_dev, copy->st_ino);
	if (*p) {
		cur.next = (*p)->next;
		cur.dev = copy->st_dev;
		cur.ino = copy->st_ino;
		**p = cur;
	} else if (m->n >= VMETA_MAX) {
		r = -ENOSPC;
	} else if (!(e = malloc(sizeof *e))) {
		r = -ENOMEM;
	} else {
		*e = cur;
		e->dev = copy->st_dev;
		e->ino = copy->st_ino;
		e->next = NULL;
		*p = e;
		m->n++;
	}
	pthread_mutex_unlock(&m->lock);
	return r;
}

int vmeta_checked(struct vmeta *m, const struct stat *real, struct stat *chk)
{
	int hit = 0;

	if (!m || !m->n)
		return 0;
	pthread_mutex_lock(&m->lock);
	struct vment *e = *slot(m, real->st_dev, real->st_ino);
	hit = e && e->copied && real->st_uid == e->ruid && real->st_gid == e->rgid;
	if (hit) {
		*chk = *real;
		chk->st_uid = e->cuid;
		chk->st_gid = e->cgid;
	}
	pthread_mutex_unlock(&m->lock);
	return hit;
}

void vmeta_forget(struct vmeta *m, dev_t dev, ino_t ino)
{
	struct vment **p, *e;

	if (!m || !m->n)
		return;
	pthread_mutex_lock(&m->lock);
	p = slot(m, dev, ino);
	if ((e = *p)) {
		*p = e->next;
		free(e);
		m->n--;
	}
	pthread_mutex_unlock(&m->lock);
}

size_t vmeta_count(struct vmeta *m)
{
	size_t n;

	pthread_mutex_lock(&m->lock);
	n = m->n;
	pthread_mutex_unlock(&m->lock);
	return n;
}
