/* fs/dcache.c - dentry cache and inode map (see dcache.h for the rules). */
#include "fs/dcache.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "common/brlock.h"
#include "common/log.h"
#include "common/util.h"

/* LeakSanitizer scans the heap, stacks and globals, not an anonymous
 * mapping: the entry table's pointers (the bucket array, names) would be
 * reported as leaks (fuzz_walk) unless the table is a root region. */
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(leak_sanitizer)
#define DCACHE_LSAN 1
#endif
#endif
#if !defined(DCACHE_LSAN) && defined(__SANITIZE_ADDRESS__)
#define DCACHE_LSAN 1
#endif
#ifdef DCACHE_LSAN
#include <sanitizer/lsan_interface.h>
#define lsan_root(p, n) __lsan_register_root_region((p), (n))
#define lsan_unroot(p, n) __lsan_unregister_root_region((p), (n))
#else
#define lsan_root(p, n) ((void)(p), (void)(n))
#define lsan_unroot(p, n) ((void)(p), (void)(n))
#endif

/* The bucket array grows with the entries (doubling from DCACHE_BUCKETS0
 * up to NBUCKETS, at most one entry per bucket on average): a hash spreads
 * even a few entries over every page of a fixed table, and an idle sandbox
 * touched ~100 KiB of a 128 KiB one (PSS). */
#define NBUCKETS (DCACHE_SIZE * 2)
#define DCACHE_BUCKETS0 256
/* The names and link targets the entries hold, at most: a guest's deep
 * tree (entries of every prefix of 10,000-level paths) made the sentry hold
 * ~7 KB a level before, 47 MB at 6,000 levels (red-team finding); past the
 * budget the clock evicts until the new entry fits. */
#define DCACHE_MAX_BYTES (4u << 20)

struct dentry {
	uint64_t hash;
	int mnt;                 /* -1: free slot */
	char *rel;
	char *link;
	struct stat st;
	int neg;
	int complete;            /* a directory the sentry made: every name in
	                          * it is an entry (dcache_mark_complete) */
	atomic_int ref;          /* clock bit, set by readers */
	int next;                /* bucket chain: index + 1, 0 ends */
};

struct dcache {
	struct brlock lock;      /* readers: look-ups; writer: every change */
	struct dentry e[DCACHE_SIZE];
	int *bucket;             /* nbuckets chains: index + 1, 0 = empty */
	unsigned nbuckets;
	unsigned live;           /* entries chained */
	unsigned hiwater;        /* slots at or above it were never used */
	unsigned hand;
	size_t bytes;            /* strlen + 1 of every rel and link held */
	atomic_ulong gen;        /* bumped (under the write lock) by every drop */
};

static uint64_t key_hash(int mnt, const char *rel)
{
	size_t n = strlen(rel);
	char buf[PATH_MAX + sizeof(int)];

	if (n > PATH_MAX)
		n = PATH_MAX;
	memcpy(buf, &mnt, sizeof mnt);
	memcpy(buf + sizeof mnt, rel, n);
	return moat_hash(buf, sizeof mnt + n);
}

struct dcache *dcache_new(void)
{
	/* All-zero is the empty cache (a free slot has rel == NULL), so the
	 * table's pages stay untouched until entries land in them: an idle
	 * sandbox does not pay for a full cache. mmap, not calloc: once malloc
	 * has raised its mmap threshold (it does when a large block is freed)
	 * calloc would take the 3 MiB from the heap and clear every page. */
	struct dcache *d = mmap(NULL, sizeof *d, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (d == MAP_FAILED)
		die("out of memory");
	lsan_root(d, sizeof *d);
	d->nbuckets = DCACHE_BUCKETS0;
	d->bucket = xcalloc(d->nbuckets, sizeof *d->bucket);
	brlock_init(&d->lock);
	return d;
}

/* Double the bucket array and rechain every entry (write lock held); on
 * ENOMEM the chains just stay longer. */
static void grow_locked(struct dcache *d)
{
	unsigned n = d->nbuckets * 2;
	int *b = calloc(n, sizeof *b);

	if (!b)
		return;
	for (unsigned i = 0; i < d->hiwater; i++) {
		struct dentry *e = &d->e[i];
		if (!e->rel)
			continue;
		e->next = b[e->hash % n];
		b[e->hash % n] = (int)i + 1;
	}
	free(d->bucket);
	d->bucket = b;
	d->nbuckets = n;
}

static size_t entry_bytes(const struct dentry *e)
{
	return (e->rel ? strlen(e->rel) + 1 : 0) + (e->link ? strlen(e->link) + 1 : 0);
}

static void entry_clear(struct dentry *e)
{
	free(e->rel);
	free(e->link);
	e->rel = e->link = NULL;
	e->mnt = -1;
	e->complete = 0;
}

void dcache_free(struct dcache *d)
{
	if (!d)
		return;
	for (unsigned i = 0; i < d->hiwater; i++)
		entry_clear(&d->e[i]);
	brlock_destroy(&d->lock);
	free(d->bucket);
	lsan_unroot(d, sizeof *d);
	munmap(d, sizeof *d);
}

static int find_locked(struct dcache *d, uint64_t h, int mnt, const char *rel)
{
	for (int i = d->bucket[h % d->nbuckets] - 1; i >= 0; i = d->e[i].next - 1)
		if (d->e[i].hash == h && d->e[i].mnt == mnt && !strcmp(d->e[i].rel, rel))
			return i;
	return -1;
}

int dcache_get(struct dcache *d, int mnt, const char *rel, struct stat *st, int *neg,
	       char *link, size_t linklen)
{
	uint64_t h = key_hash(mnt, rel);
	int hit = 0;

	unsigned rs = brlock_rdlock(&d->lock);
	int i = find_locked(d, h, mnt, rel);
	if (i >= 0) {
		struct dentry *e = &d->e[i];
		/* A symlink entry without its target cannot answer a caller
		 * that needs the target. */
		if (!link || e->neg || !S_ISLNK(e->st.st_mode) || e->link) {
			hit = 1;
			*neg = e->neg;
			if (st)
				*st = e->st;
			if (link && linklen && e->link) {
				strncpy(link, e->link, linklen - 1);
				link[linklen - 1] = 0;
			}
			/* (a store only when clear: a hit writes nothing of
			 * the shared entry, whose line the other CPUs read) */
			if (!atomic_load_explicit(&e->ref, memory_order_relaxed))
				atomic_store_explicit(&e->ref, 1, memory_order_relaxed);
		}
	}
	brlock_rdunlock(&d->lock, rs);
	return hit;
}

/* rel's parent's name ("" for a name at the mount's root): 0, or -1 for
 * the root itself and a parent too long to be marked complete */
static int parent_of(const char *rel, char parent[PATH_MAX])
{
	const char *sl = strrchr(rel, '/');
	size_t pl = sl ? (size_t)(sl - rel) : 0;

	if (!*rel || pl >= PATH_MAX)
		return -1;
	memcpy(parent, rel, pl);
	parent[pl] = 0;
	return 0;
}

/* rel's parent no longer knows all its names: an entry beneath it is
 * gone (dropped, evicted) or a name in it was dropped uncached */
static void parent_incomplete_locked(struct dcache *d, int mnt, const char *rel)
{
	char parent[PATH_MAX];

	if (parent_of(rel, parent) < 0)
		return;
	int i = find_locked(d, key_hash(mnt, parent), mnt, parent);
	if (i >= 0)
		d->e[i].complete = 0;
}

static void unchain_locked(struct dcache *d, int i)
{
	parent_incomplete_locked(d, d->e[i].mnt, d->e[i].rel);
	int *pp = &d->bucket[d->e[i].hash % d->nbuckets];

	while (*pp > 0 && *pp != i + 1)
		pp = &d->e[*pp - 1].next;
	if (*pp == i + 1)
		*pp = d->e[i].next;
	d->e[i].next = 0;
	d->live--;
	d->bytes -= entry_bytes(&d->e[i]);
	entry_clear(&d->e[i]);
}

size_t dcache_bytes(struct dcache *d)
{
	unsigned rs = brlock_rdlock(&d->lock);
	size_t b = d->bytes;
	brlock_rdunlock(&d->lock, rs);
	return b;
}

unsigned long dcache_gen(struct dcache *d)
{
	return atomic_load(&d->gen);
}

static int put_common(struct dcache *d, unsigned long gen, int mnt, const char *rel,
		      const struct stat *st, int neg, const char *link, int bump);

int dcache_put(struct dcache *d, unsigned long gen, int mnt, const char *rel,
	       const struct stat *st, int neg, const char *link)
{
	return put_common(d, gen, mnt, rel, st, neg, link, 0);
}

/* a store that also invalidates every look-up in flight (the generation is
 * bumped under the same lock): see dcache_put_bump */
static int dcache_put_locked_bump(struct dcache *d, unsigned long gen, int mnt, const char *rel,
				  const struct stat *st)
{
	return put_common(d, gen, mnt, rel, st, 0, NULL, 1);
}

static int put_common(struct dcache *d, unsigned long gen, int mnt, const char *rel,
		      const struct stat *st, int neg, const char *link, int bump)
{
	uint64_t h = key_hash(mnt, rel);

	brlock_wrlock(&d->lock);
	if (atomic_load(&d->gen) != gen) {
		/* a mutation was invalidated while the caller asked the
		 * backend: its answer may predate it */
		brlock_wrunlock(&d->lock);
		return 0;
	}
	int i = find_locked(d, h, mnt, rel);
	if (i < 0) {
		/* clock: take the first free slot or the first unreferenced one */
		for (;;) {
			struct dentry *e = &d->e[d->hand];
			i = d->hand;
			d->hand = (d->hand + 1) % DCACHE_SIZE;
			if (!e->rel)
				break;
			if (!atomic_exchange_explicit(&e->ref, 0, memory_order_relaxed)) {
				unchain_locked(d, i);
				break;
			}
		}
		if ((unsigned)i >= d->hiwater)
			d->hiwater = (unsigned)i + 1;
		if (d->live >= d->nbuckets && d->nbuckets < NBUCKETS)
			grow_locked(d);
		struct dentry *e = &d->e[i];
		e->hash = h;
		e->mnt = mnt;
		e->rel = xstrdup(rel);
		d->bytes += strlen(rel) + 1;
		e->next = d->bucket[h % d->nbuckets];
		d->bucket[h % d->nbuckets] = i + 1;
		d->live++;
	}
	struct dentry *e = &d->e[i];
	if (e->link)
		d->bytes -= strlen(e->link) + 1;
	free(e->link);
	e->link = link ? xstrdup(link) : NULL;
	if (e->link)
		d->bytes += strlen(e->link) + 1;
	/* over the byte budget: evict others (the clock's order, referenced
	 * or not) until this one fits */
	for (unsigned k = 0; d->bytes > DCACHE_MAX_BYTES && k < DCACHE_SIZE; k++) {
		int j = (int)d->hand;
		d->hand = (d->hand + 1) % DCACHE_SIZE;
		if (j != i && d->e[j].rel)
			unchain_locked(d, j);
	}
	e->neg = neg;
	e->complete = 0;
	if (st)
		e->st = *st;
	else
		memset(&e->st, 0, sizeof e->st);
	atomic_store_explicit(&e->ref, 1, memory_order_relaxed);
	if (bump)
		atomic_fetch_add(&d->gen, 1);
	brlock_wrunlock(&d->lock);
	return 1;
}

int dcache_put_bump(struct dcache *d, unsigned long *gen, int mnt, const char *rel,
		    const struct stat *st)
{
	if (!dcache_put_locked_bump(d, *gen, mnt, rel, st)) {
		dcache_drop(d, mnt, rel, 0);
		return 0;
	}
	*gen += 1;
	return 1;
}

int dcache_put_neg_bump(struct dcache *d, unsigned long *gen, int mnt, const char *rel)
{
	if (!put_common(d, *gen, mnt, rel, NULL, 1, NULL, 1)) {
		dcache_drop(d, mnt, rel, 0);
		return 0;
	}
	*gen += 1;
	return 1;
}

void dcache_drop(struct dcache *d, int mnt, const char *rel, int subtree)
{
	size_t n = strlen(rel);

	brlock_wrlock(&d->lock);
	atomic_fetch_add(&d->gen, 1);
	int i = find_locked(d, key_hash(mnt, rel), mnt, rel);
	if (i >= 0)
		unchain_locked(d, i);
	else
		parent_incomplete_locked(d, mnt, rel);
	if (subtree) {
		for (i = 0; i < (int)d->hiwater; i++) {
			struct dentry *e = &d->e[i];
			if (!e->rel || e->mnt != mnt)
				continue;
			/* rel "" (the mount root): everything beneath */
			if (n == 0 || (!strncmp(e->rel, rel, n) && e->rel[n] == '/'))
				unchain_locked(d, i);
		}
	}
	brlock_wrunlock(&d->lock);
}

int dcache_mark_complete(struct dcache *d, unsigned long gen, int mnt, const char *rel)
{
	int r = 0;

	brlock_wrlock(&d->lock);
	/* (a parent's name is copied to a PATH_MAX buffer to be found:
	 * parent_incomplete_locked, dcache_parent_complete) */
	int i = atomic_load(&d->gen) == gen && strlen(rel) < PATH_MAX - 1 ?
		find_locked(d, key_hash(mnt, rel), mnt, rel) : -1;
	if (i >= 0 && !d->e[i].neg && S_ISDIR(d->e[i].st.st_mode))
		r = d->e[i].complete = 1;
	brlock_wrunlock(&d->lock);
	return r;
}

int dcache_parent_complete(struct dcache *d, int mnt, const char *rel)
{
	char parent[PATH_MAX];
	int r = 0;

	if (parent_of(rel, parent) < 0)
		return 0;
	/* one look at both under the lock: a name stored meanwhile is not
	 * taken for absent (the caller took its generation before this) */
	unsigned rs = brlock_rdlock(&d->lock);
	int i = find_locked(d, key_hash(mnt, parent), mnt, parent);
	if (i >= 0 && d->e[i].complete)
		r = find_locked(d, key_hash(mnt, rel), mnt, rel) < 0;
	brlock_rdunlock(&d->lock, rs);
	return r;
}

void dcache_drop_inode(struct dcache *d, dev_t dev, ino_t ino)
{
	brlock_wrlock(&d->lock);
	atomic_fetch_add(&d->gen, 1);
	for (int i = 0; i < (int)d->hiwater; i++) {
		struct dentry *e = &d->e[i];
		if (e->rel && !e->neg && e->st.st_ino == ino && e->st.st_dev == dev)
			unchain_locked(d, i);
	}
	brlock_wrunlock(&d->lock);
}

/* ---- written set ---- */

struct wkey {
	uint64_t dev, ino;       /* ino 0: free (no file has inode 0 here) */
};

struct wset {
	struct brlock lock;
	struct wkey *e;          /* WSET_SIZE slots, open addressing; NULL until the first add */
	unsigned count;
	atomic_int any;          /* an entry exists (lock-free fast path) */
	atomic_int full;         /* overflowed: everything counts as written */
};

struct wset *wset_new(void)
{
	/* (aligned: the lock's reader slots are a cache line each) */
	struct wset *w = aligned_alloc(64, (sizeof *w + 63) & ~(size_t)63);

	if (!w)
		die("out of memory");
	memset(w, 0, sizeof *w);
	brlock_init(&w->lock);
	return w;
}

void wset_free(struct wset *w)
{
	if (!w)
		return;
	brlock_destroy(&w->lock);
	free(w->e);
	free(w);
}

static unsigned wslot(dev_t dev, ino_t ino)
{
	uint64_t k[2] = { dev, ino };

	return moat_hash(k, sizeof k) % WSET_SIZE;
}

/* slot of (dev, ino), or of the free slot where it would go */
static unsigned wfind_locked(struct wset *w, dev_t dev, ino_t ino)
{
	unsigned s = wslot(dev, ino);

	while (w->e[s].ino && (w->e[s].dev != dev || w->e[s].ino != ino))
		s = (s + 1) % WSET_SIZE;   /* never full: count <= WSET_MAX */
	return s;
}

void wset_add(struct wset *w, dev_t dev, ino_t ino)
{
	if (!ino || atomic_load(&w->full) || wset_has(w, dev, ino))
		return;
	brlock_wrlock(&w->lock);
	if (!w->e)
		w->e = xcalloc(WSET_SIZE, sizeof *w->e);
	unsigned s = wfind_locked(w, dev, ino);
	if (!w->e[s].ino) {
		if (w->count >= WSET_MAX) {
			atomic_store(&w->full, 1);
		} else {
			w->e[s].dev = dev;
			w->e[s].ino = ino;
			w->count++;
			atomic_store(&w->any, 1);
		}
	}
	brlock_wrunlock(&w->lock);
}

int wset_has(struct wset *w, dev_t dev, ino_t ino)
{
	if (atomic_load(&w->full))
		return 1;
	if (!atomic_load(&w->any))
		return 0;
	unsigned rs = brlock_rdlock(&w->lock);
	int r = w->e[wfind_locked(w, dev, ino)].ino != 0;
	brlock_rdunlock(&w->lock, rs);
	return r;
}

/* ---- inode map ---- */

struct ino_ent {
	dev_t dev;
	ino_t ino;
	uint64_t mnt;            /* the host mount the fd was opened in (0: any) */
	char *path;              /* NULL: free */
	dev_t odev;              /* inomap_put_obj: the object it stands for */
	ino_t oino;
};

/* The table grows with its entries (doubling from INOMAP_CAP0 up to
 * INOMAP_SIZE, at most 3/4 full), for the dcache's reason: four maps of a
 * fixed 320 KiB had ~35 of their pages touched in an idle sandbox. */
#define INOMAP_CAP0 64

struct inomap {
	pthread_mutex_t lock;
	struct ino_ent *e;       /* cap slots: open addressing, linear probing */
	unsigned cap;
	/* FIFO of insertions (a ring of cap) for eviction when the table is
	 * 3/4 full */
	struct ino_key { dev_t dev; ino_t ino; uint64_t mnt; } *fifo;
	unsigned head, count;
	size_t bytes;            /* strlen + 1 of every path held */
};

/* The paths one map holds, at most (deep trees: see DCACHE_MAX_BYTES); past
 * it the oldest insertions go first, as when the table is 3/4 full (a
 * directory fd whose entry went is named again through the gofer). */
#define INOMAP_MAX_BYTES (4u << 20)

struct inomap *inomap_new(void)
{
	struct inomap *m = xcalloc(1, sizeof *m);

	m->cap = INOMAP_CAP0;
	m->e = xcalloc(m->cap, sizeof *m->e);
	m->fifo = xcalloc(m->cap, sizeof *m->fifo);
	pthread_mutex_init(&m->lock, NULL);
	return m;
}

void inomap_free(struct inomap *m)
{
	if (!m)
		return;
	for (unsigned i = 0; i < m->cap; i++)
		free(m->e[i].path);
	pthread_mutex_destroy(&m->lock);
	free(m->e);
	free(m->fifo);
	free(m);
}

static unsigned ino_slot(dev_t dev, ino_t ino, unsigned cap)
{
	uint64_t k[2] = { dev, ino };

	return moat_hash(k, sizeof k) % cap;
}

/* Double the table and re-insert every entry (lock held); on ENOMEM the
 * table stays as it is (eviction keeps it at most 3/4 full). */
static void ino_grow_locked(struct inomap *m)
{
	unsigned n = m->cap * 2;
	struct ino_ent *e = calloc(n, sizeof *e);
	struct ino_key *q = calloc(n, sizeof *q);

	if (!e || !q) {
		free(e);
		free(q);
		return;
	}
	for (unsigned i = 0; i < m->count; i++)   /* the ring, oldest first */
		q[i] = m->fifo[(m->head + i) % m->cap];
	free(m->fifo);
	m->fifo = q;
	m->head = 0;
	for (unsigned i = 0; i < m->cap; i++) {
		if (!m->e[i].path)
			continue;
		unsigned k = ino_slot(m->e[i].dev, m->e[i].ino, n);
		while (e[k].path)
			k = (k + 1) % n;
		e[k] = m->e[i];
	}
	free(m->e);
	m->e = e;
	m->cap = n;
}

/* The slot hashes (dev, ino) only: the entries of one inode in several
 * mounts share a probe run, which inomap_get_any walks. */
static int ino_find_locked(struct inomap *m, dev_t dev, ino_t ino, uint64_t mnt, int any)
{
	unsigned s = ino_slot(dev, ino, m->cap);

	for (unsigned n = 0; n < m->cap; n++, s = (s + 1) % m->cap) {
		if (!m->e[s].path)
			return -1;
		if (m->e[s].dev == dev && m->e[s].ino == ino && (any || m->e[s].mnt == mnt))
			return s;
	}
	return -1;
}

/* Remove slot s and re-insert the rest of its probe run (linear probing). */
static void ino_remove_locked(struct inomap *m, unsigned s)
{
	m->bytes -= strlen(m->e[s].path) + 1;
	free(m->e[s].path);
	m->e[s].path = NULL;
	for (unsigned j = (s + 1) % m->cap; m->e[j].path; j = (j + 1) % m->cap) {
		struct ino_ent tmp = m->e[j];
		m->e[j].path = NULL;
		unsigned k = ino_slot(tmp.dev, tmp.ino, m->cap);
		while (m->e[k].path)
			k = (k + 1) % m->cap;
		m->e[k] = tmp;
	}
}

void inomap_put_mobj(struct inomap *m, dev_t dev, ino_t ino, uint64_t mnt, const char *path,
		     dev_t odev, ino_t oino)
{
	pthread_mutex_lock(&m->lock);
	int s = ino_find_locked(m, dev, ino, mnt, 0);
	if (s >= 0) {
		m->bytes += strlen(path) - strlen(m->e[s].path);
		free(m->e[s].path);
		m->e[s].path = xstrdup(path);
		m->e[s].odev = odev;
		m->e[s].oino = oino;
		pthread_mutex_unlock(&m->lock);
		return;
	}
	while (m->count && (m->count >= INOMAP_SIZE * 3 / 4 || m->bytes + strlen(path) + 1 > INOMAP_MAX_BYTES)) {
		/* evict the oldest insertion still present */
		int slot = ino_find_locked(m, m->fifo[m->head].dev, m->fifo[m->head].ino,
					   m->fifo[m->head].mnt, 0);
		m->head = (m->head + 1) % m->cap;
		m->count--;
		if (slot >= 0)
			ino_remove_locked(m, slot);
	}
	if (m->count + 1 > m->cap * 3 / 4 && m->cap < INOMAP_SIZE)
		ino_grow_locked(m);
	unsigned k = ino_slot(dev, ino, m->cap);
	while (m->e[k].path)
		k = (k + 1) % m->cap;
	m->e[k].dev = dev;
	m->e[k].ino = ino;
	m->e[k].mnt = mnt;
	m->e[k].path = xstrdup(path);
	m->bytes += strlen(path) + 1;
	m->e[k].odev = odev;
	m->e[k].oino = oino;
	m->fifo[(m->head + m->count) % m->cap].dev = dev;
	m->fifo[(m->head + m->count) % m->cap].ino = ino;
	m->fifo[(m->head + m->count) % m->cap].mnt = mnt;
	m->count++;
	pthread_mutex_unlock(&m->lock);
}

void inomap_put_obj(struct inomap *m, dev_t dev, ino_t ino, const char *path, dev_t odev,
		    ino_t oino)
{
	inomap_put_mobj(m, dev, ino, 0, path, odev, oino);
}

void inomap_put(struct inomap *m, dev_t dev, ino_t ino, const char *path)
{
	inomap_put_mobj(m, dev, ino, 0, path, 0, 0);
}

void inomap_put_m(struct inomap *m, dev_t dev, ino_t ino, uint64_t mnt, const char *path)
{
	inomap_put_mobj(m, dev, ino, mnt, path, 0, 0);
}

static int ino_get(struct inomap *m, dev_t dev, ino_t ino, uint64_t mnt, int any, char *path,
		   size_t len, dev_t *odev, ino_t *oino)
{
	int r = -ENOENT;

	pthread_mutex_lock(&m->lock);
	int s = ino_find_locked(m, dev, ino, mnt, any);
	if (s >= 0 && strlen(m->e[s].path) < len) {
		strcpy(path, m->e[s].path);
		if (odev)
			*odev = m->e[s].odev;
		if (oino)
			*oino = m->e[s].oino;
		r = 0;
	}
	pthread_mutex_unlock(&m->lock);
	return r;
}

void inomap_renamed(struct inomap *m, const char *from, const char *to)
{
	size_t fl = strlen(from), tl = strlen(to);

	pthread_mutex_lock(&m->lock);
	for (unsigned i = 0; i < m->cap; i++) {
		char *p = m->e[i].path;
		if (!p || strncmp(p, from, fl) || (p[fl] && p[fl] != '/'))
			continue;
		size_t rest = strlen(p + fl);
		char *np = malloc(tl + rest + 1);
		if (!np)
			continue;   /* the entry stays stale: the object is found again */
		memcpy(np, to, tl);
		memcpy(np + tl, p + fl, rest + 1);
		m->bytes += tl + rest - strlen(p);
		free(p);
		m->e[i].path = np;
	}
	pthread_mutex_unlock(&m->lock);
}

int inomap_get_obj(struct inomap *m, dev_t dev, ino_t ino, char *path, size_t len,
		   dev_t *odev, ino_t *oino)
{
	return ino_get(m, dev, ino, 0, 0, path, len, odev, oino);
}

int inomap_get_m(struct inomap *m, dev_t dev, ino_t ino, uint64_t mnt, char *path, size_t len)
{
	return ino_get(m, dev, ino, mnt, 0, path, len, NULL, NULL);
}

int inomap_get_any(struct inomap *m, dev_t dev, ino_t ino, char *path, size_t len)
{
	return ino_get(m, dev, ino, 0, 1, path, len, NULL, NULL);
}

void inomap_renamed_exact(struct inomap *m, dev_t dev, ino_t ino, const char *from,
			  const char *to)
{
	pthread_mutex_lock(&m->lock);
	unsigned s = ino_slot(dev, ino, m->cap);
	for (unsigned n = 0; n < m->cap && m->e[s].path; n++, s = (s + 1) % m->cap) {
		if (m->e[s].dev != dev || m->e[s].ino != ino || strcmp(m->e[s].path, from))
			continue;
		char *np = strdup(to);
		if (!np)
			continue;
		m->bytes += strlen(to) - strlen(m->e[s].path);
		free(m->e[s].path);
		m->e[s].path = np;
	}
	pthread_mutex_unlock(&m->lock);
}

size_t inomap_bytes(struct inomap *m)
{
	pthread_mutex_lock(&m->lock);
	size_t b = m->bytes;
	pthread_mutex_unlock(&m->lock);
	return b;
}

int inomap_get(struct inomap *m, dev_t dev, ino_t ino, char *path, size_t len)
{
	return inomap_get_obj(m, dev, ino, path, len, NULL, NULL);
}
