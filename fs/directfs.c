/* fs/directfs.c - direct file access: the sentry opens files of read-only
 * host-directory exports and of cow exports itself, beneath the export's
 * root, without a gofer round trip (gVisor's "directfs").
 *
 * The roots are O_PATH fds of read-only binds in the sentry's own root
 * (sentry/privilege.c priv_sentry_root) and, for a cow export, of a
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
 *     read-only exports and cow exports (an rw bind's files stay the
 *     gofer's). The fd's mount is read-only where the gofer's is not; the
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
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/util.h"
#include "fs/vfs_priv.h"

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
}

int vfs_direct_open(struct vfs *v, const struct vfs_node *n, int flags, int *fd, struct stat *st)
{
	const struct vfs_mount *m = n->mnt;
	struct stat fst;

	if ((m->writable && !m->cow) || m->dev || m->export < 0 || (size_t)m->export >= v->ndroots ||
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
	if (fstat(f, &fst) < 0 || !(S_ISREG(fst.st_mode) || S_ISDIR(fst.st_mode)) ||
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
	return -EAGAIN;
}

/* Is rel absent from the read-only (or cow) export m? 1 when the sentry's own lookup
 * beneath the export root says ENOENT, else 0 (present, or anything it cannot
 * decide: EACCES for its uid, a symlink or mount on the way, no root fd).
 * An absent name has no owner, so this answer is the gofer's: a first stat
 * or open of a missing path (header and module searches, $PATH probes) costs
 * one openat2 instead of a gofer round trip. The caller has checked the
 * hidden names (masked in our view, absent in the gofer's). */
int vfs_direct_absent(struct vfs *v, const struct vfs_mount *m, const char *rel)
{
	if ((m->writable && !m->cow) || m->dev || m->export < 0 || (size_t)m->export >= v->ndroots ||
	    v->droots[m->export] < 0 || !*rel)
		return 0;
	struct open_how how = {
		.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV,
	};
	int f = (int)syscall(SYS_openat2, v->droots[m->export], rel, &how, sizeof how);
	if (f >= 0) {
		close(f);
		return 0;
	}
	return errno == ENOENT;
}
