/* fs/dcache.h - dentry cache and inode map (private to fs/).
 *
 * Dentry cache: (mount index, rel) -> guest-view lstat, symlink target, or a
 * negative entry. Bounded (DCACHE_SIZE entries, clock eviction), xxHash keys,
 * one reader-writer lock (look-ups run concurrently on the sentry's worker
 * threads): a common/brlock.h, whose readers move no shared cache line.
 *
 * Rules (enforced by the callers in fs/vfs.c and the handlers):
 *  - shared mounts (--bind ...:ro,shared / rw,shared: the host may change them
 *    while the sandbox runs): nothing is cached, positive, negative or link
 *    target (mnt_dc_get, mnt_dc_neg, be_put); only what the same walk's gofer
 *    walk stat'ed a moment before is reused, until that walk ends
 *    (struct vfs_shared_scratch);
 *  - exclusive read-only mounts: everything is cached (the guest cannot
 *    change them; what the host changes may be seen late or never);
  *  - exclusive writable mounts (rw binds, cow binds, the root overlay,
  *    tmpfs exports): everything is cached too. Every change to such a mount
  *    goes through the sentry, except what the guest does natively through
  *    an fd it holds: a mutation the sentry performs invalidates the names
  *    it touches (rename: both names and their subtrees) and their parent
  *    directories, after the host operation — on a cow export by dropping
  *    the parent, elsewhere by putting a cached parent's inode in the
  *    written set (vfs_invalidate: its mode and owner did not change, its
  *    times and link count did); a file the guest may write
  *    natively (a writable fd was handed out: write, ftruncate, mmap change
  *    its size and times) is in the written set (below), and the final
  *    component of a stat-like call (WALK_FRESH) that is in it is re-stat'ed
  *    (the sentry's own fstat of the cached inode with the cached owner,
  *    vfs_direct_restat, else the gofer), as is a non-directory with several
  *    links (a change through one name changes the others' nlink and ctime);
 *  - a lookup in flight never caches an answer older than an invalidation:
 *    it takes dcache_gen() before asking the backend and passes it to
 *    dcache_put(), which stores nothing if a dcache_drop() ran since (else a
 *    lookup that saw "absent" just before another task's create lands its
 *    negative entry after that create's invalidation, and the name stays
 *    "absent" for everyone: unlink answers ENOENT without asking the host).
 *
 * Written set: (st_dev, st_ino) of every file the guest got a writable fd of
 * (and the sentry's own stdio files, which the guest inherits), and of every
 * cached directory the sentry changed an entry of. Entries are
 * never removed (the sentry cannot see a close); past WSET_MAX entries the
 * set answers "written" for everything (every stat of a writable mount is
 * fresh again, as before the set existed). Allocated on the first add.
 *
 * Inode map: (st_dev, st_ino, host mount id) of every directory fd handed to
 * the guest (host dirs and synthetic memfds) -> canonical guest path. Bounded
 * (FIFO); the last path recorded for an inode in one host mount wins. The
 * mount id is the host's (statx STATX_MNT_ID of the fd): every export is a
 * clone of its own in the gofer and in the sentry's root, so one host mount
 * belongs to one sandbox mount, and two binds of the same directory (ro and
 * rw) keep apart what was opened through each (red team 36: a dirfd opened
 * through the ro bind was named by the rw one's path and written through).
 * Maps that do not need it (placeholders, handles, O_TMPFILE) pass 0.
 */
#ifndef MOAT_FS_DCACHE_H
#define MOAT_FS_DCACHE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#define DCACHE_SIZE 16384
#define INOMAP_SIZE 8192

struct dcache;
struct inomap;

struct dcache *dcache_new(void);
void dcache_free(struct dcache *d);
/* 1 hit (neg set for a negative entry; link copied if linklen), 0 miss */
int dcache_get(struct dcache *d, int mnt, const char *rel, struct stat *st, int *neg,
	       char *link, size_t linklen);
/* the invalidation generation (bumped by every dcache_drop) */
unsigned long dcache_gen(struct dcache *d);
/* store, unless a drop ran since the caller took gen with dcache_gen();
 * 1 stored, 0 not */
int dcache_put(struct dcache *d, unsigned long gen, int mnt, const char *rel,
	       const struct stat *st, int neg, const char *link);
void dcache_drop(struct dcache *d, int mnt, const char *rel, int subtree);
/* What the sentry itself just made or changed (st: what the gofer or its
 * own fstat saw of rel after the host operation), stored in place of the
 * old entry unless a drop ran since *gen was taken (before the operation);
 * then the generation is bumped under the same lock, as a drop would: a
 * look-up that started before the change (and may have seen the name
 * absent) cannot land its older answer over this one. *gen follows the
 * bump, so a second name of the same change can be stored with it. 1
 * stored; 0 not, and rel dropped instead. */
int dcache_put_bump(struct dcache *d, unsigned long *gen, int mnt, const char *rel,
		    const struct stat *st);
/* The same for a name the sentry itself just removed: stored as absent
 * (an entry stays in its directory, which stays complete), or dropped */
int dcache_put_neg_bump(struct dcache *d, unsigned long *gen, int mnt, const char *rel);
/* Complete directories: rel, a directory the sentry itself just made (an
 * empty one), is marked as holding every name in it as an entry, unless a
 * drop ran since gen (taken after the store of rel's entry). A miss beneath
 * it is then an absent name (dcache_parent_complete: 1 if rel's parent is
 * so marked). The mark goes with any store of the directory's own entry,
 * any entry beneath it leaving the cache (a drop, an eviction) and any drop
 * of a name in it that was not cached: every change to a name goes through
 * a store or a drop, so a name made in it since is an entry or unmarks it.
 * 1 marked, 0 not. dcache_parent_complete: 1 if rel has no entry and its
 * parent is marked (one look under the lock: take the generation for the
 * negative entry before it). */
int dcache_mark_complete(struct dcache *d, unsigned long gen, int mnt, const char *rel);
int dcache_parent_complete(struct dcache *d, int mnt, const char *rel);
/* every name of inode (dev, ino), in every mount: its other hard links'
 * entries after a change of the inode through one name (mode, owner, times
 * are the inode's; the permission checks of open/exec/access use the
 * cached entry) */
void dcache_drop_inode(struct dcache *d, dev_t dev, ino_t ino);
/* bytes of names and link targets held (at most 4 MiB) */
size_t dcache_bytes(struct dcache *d);

#define WSET_SIZE 16384
#define WSET_MAX (WSET_SIZE * 3 / 4)

struct wset;

struct wset *wset_new(void);
void wset_free(struct wset *w);
void wset_add(struct wset *w, dev_t dev, ino_t ino);
/* 1 if (dev, ino) was added (or the set overflowed), else 0 */
int wset_has(struct wset *w, dev_t dev, ino_t ino);

struct inomap *inomap_new(void);
void inomap_free(struct inomap *m);
void inomap_put(struct inomap *m, dev_t dev, ino_t ino, const char *path);
int inomap_get(struct inomap *m, dev_t dev, ino_t ino, char *path, size_t len);
/* Keyed by the host mount too (put_m/get_m); get_any: an entry of the inode
 * in any mount (a name to show, never one to act on). */
void inomap_put_m(struct inomap *m, dev_t dev, ino_t ino, uint64_t mnt, const char *path);
int inomap_get_m(struct inomap *m, dev_t dev, ino_t ino, uint64_t mnt, char *path, size_t len);
int inomap_get_any(struct inomap *m, dev_t dev, ino_t ino, char *path, size_t len);
/* The same, with the identity (odev, oino) of the object the key stands for
 * (a placeholder fd for an object that cannot be handed out itself). */
void inomap_put_obj(struct inomap *m, dev_t dev, ino_t ino, const char *path, dev_t odev,
		    ino_t oino);
int inomap_get_obj(struct inomap *m, dev_t dev, ino_t ino, char *path, size_t len,
		   dev_t *odev, ino_t *oino);
void inomap_put_mobj(struct inomap *m, dev_t dev, ino_t ino, uint64_t mnt, const char *path,
		     dev_t odev, ino_t oino);
/* A rename by the sentry: every recorded name equal to from or beneath it
 * now starts with to instead (O(INOMAP_SIZE)). */
void inomap_renamed(struct inomap *m, const char *from, const char *to);
/* The same for one non-directory: its entries (in any host mount) named
 * exactly from now name to (O(probe run)). */
void inomap_renamed_exact(struct inomap *m, dev_t dev, ino_t ino, const char *from,
			  const char *to);
/* bytes of paths held (at most 4 MiB) */
size_t inomap_bytes(struct inomap *m);

#endif
