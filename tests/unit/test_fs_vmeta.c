/* Unit tests for the virtual metadata table (fs/vmeta.c): made entries of
 * files guest root makes (nothing virtual in them) stop at VMETA_MADE_MAX and
 * leave the rest of the table to owners and set-id bits the guest sets; a
 * made entry keys on the real ids it was made with. */
#include <criterion/criterion.h>
#include <errno.h>
#include <sys/stat.h>

#include "fs/vmeta.h"

static struct stat file(ino_t ino)
{
	return (struct stat){ .st_dev = 7, .st_ino = ino, .st_mode = S_IFREG | 0600 };
}

Test(fs_vmeta, made_entries_leave_room)
{
	struct vmeta *m = vmeta_new();
	ino_t ino = 1;
	for (; ino <= VMETA_MADE_MAX; ino++) {
		struct stat st = file(ino);
		cr_assert_eq(vmeta_make(m, &st, 0, 0, 0, 0), 0, "made entry %lu", (unsigned long)ino);
	}
	struct stat st = file(ino);
	cr_assert_eq(vmeta_make(m, &st, 0, 0, 0, 0), -ENOSPC, "past VMETA_MADE_MAX");
	cr_assert(!vmeta_made(m, &st, NULL));
	/* a made entry with a virtual owner (a creator of other ids) still fits */
	cr_assert_eq(vmeta_make(m, &st, 1000, 1000, 0, 0), 0);
	cr_assert(vmeta_made(m, &st, NULL));
	/* and so does a chown of another file, up to VMETA_MAX */
	for (ino++; vmeta_count(m) < VMETA_MAX; ino++) {
		struct stat o = file(ino);
		cr_assert_eq(vmeta_update(m, &o, 5, (gid_t)-1, 0, 0), 0);
	}
	struct stat o = file(ino);
	cr_assert_eq(vmeta_update(m, &o, 5, (gid_t)-1, 0, 0), -ENOSPC);
	/* a chown of a made file changes its entry in place */
	struct stat first = file(1), view;
	cr_assert_eq(vmeta_update(m, &first, 1000, (gid_t)-1, 0, 0), 0);
	cr_assert(vmeta_made(m, &first, &view));
	cr_assert_eq(view.st_uid, 1000);
	/* another real owner on the same inode number is not the made file */
	first.st_uid = 65534;
	cr_assert(!vmeta_made(m, &first, NULL));
	vmeta_free(m);
}

/* A lower file copied up by hand (gofer COPYUP): the copy shows the
 * original's owner and group (and a virtual owner the original had), is
 * checked with the original's real ids, is not a made file, and keeps its
 * entry when the guest's chown gives it the copy's real ids. */
Test(fs_vmeta, copied_shows_and_checks_the_original)
{
	struct vmeta *m = vmeta_new();
	struct stat old = file(10), copy = file(11), view, chk;
	old.st_uid = 1000;
	old.st_gid = 65534;                 /* unmapped group */
	copy.st_uid = 1000;
	copy.st_gid = 1000;                 /* the gofer's */
	cr_assert_eq(vmeta_copied(m, &old, &copy), 0);
	view = copy;
	vmeta_apply(m, &view);
	cr_assert_eq(view.st_uid, 1000);
	cr_assert_eq(view.st_gid, 65534);
	cr_assert(vmeta_checked(m, &copy, &chk));
	cr_assert_eq(chk.st_uid, 1000);
	cr_assert_eq(chk.st_gid, 65534);
	cr_assert(!vmeta_made(m, &copy, NULL));
	cr_assert(!vmeta_checked(m, &old, &chk), "the original itself is not a copy");
	/* a chown to the copy's real ids keeps the entry: still checked as the original */
	cr_assert_eq(vmeta_update(m, &copy, 1000, 1000, 0, 0), 0);
	cr_assert(vmeta_checked(m, &copy, &chk));
	cr_assert_eq(chk.st_gid, 65534);
	/* another file on the same inode number (other real ids) is not it */
	struct stat reused = copy;
	reused.st_uid = 4242;
	cr_assert(!vmeta_checked(m, &reused, &chk));
	/* a virtual owner the original had (guest root's chown) carries over */
	struct stat o2 = file(20), c2 = file(21);
	o2.st_uid = 65534;
	c2.st_uid = 1000;
	cr_assert_eq(vmeta_update(m, &o2, 0, (gid_t)-1, 0, 0), 0);
	cr_assert_eq(vmeta_copied(m, &o2, &c2), 0);
	view = c2;
	vmeta_apply(m, &view);
	cr_assert_eq(view.st_uid, 0);
	cr_assert(vmeta_checked(m, &c2, &chk));
	cr_assert_eq(chk.st_uid, 65534);
	vmeta_free(m);
}
