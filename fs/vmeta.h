/* fs/vmeta.h - virtual metadata of host files (private to fs/; see vmeta.c). */
#ifndef MOAT_FS_VMETA_H
#define MOAT_FS_VMETA_H

#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

#define VMETA_MAX 65536
/* made entries that hold nothing virtual stop here (see vmeta.c) */
#define VMETA_MADE_MAX (VMETA_MAX - VMETA_MAX / 4)

struct vmeta;

struct vmeta *vmeta_new(void);
void vmeta_free(struct vmeta *m);
/* Show st (a real file's guest-view stat) as the guest set it. */
void vmeta_apply(struct vmeta *m, struct stat *st);
/* Only the type and device number of a device node the guest made (files
 * of private exports, whose ids and modes are real). */
void vmeta_apply_dev(struct vmeta *m, struct stat *st);
/* Record an owner/group ((uid_t)-1 / (gid_t)-1: unchanged) and, if set_mode,
 * the set-id bits of the file whose real guest-view stat is real. 0, -ENOSPC
 * (table full) or -ENOMEM. */
int vmeta_update(struct vmeta *m, const struct stat *real, uid_t uid, gid_t gid,
		 mode_t setid, int set_mode);
/* As vmeta_update, for a file the sandbox just created as uid/gid: the entry
 * is kept (and marked) even when those are the real ids. */
int vmeta_make(struct vmeta *m, const struct stat *real, uid_t uid, gid_t gid, mode_t setid, int set_mode);
/* Whether real is a file the sandbox created (and still the same file);
 * then *view (if not NULL) is real as the guest sees it (vmeta_apply). */
int vmeta_made(struct vmeta *m, const struct stat *real, struct stat *view);
void vmeta_forget(struct vmeta *m, dev_t dev, ino_t ino);
/* copy (a real file the gofer just made by hand from old, a lower file of a
 * cow export overlayfs could not copy up: gofer COPYUP) is old as the guest
 * sees it and is checked as old was: old's owner and group (and whatever
 * old's entry held) are shown, and permission checks take old's real ids
 * for copy's (vmeta_checked). 0, -ENOSPC or -ENOMEM. */
int vmeta_copied(struct vmeta *m, const struct stat *old, const struct stat *copy);
/* Whether real is such a copy (and still the same file); then *chk is real
 * with the ids checks use. */
int vmeta_checked(struct vmeta *m, const struct stat *real, struct stat *chk);
/* real (an empty regular file the sandbox just made) is a device node of
 * the guest's: type S_IFCHR or S_IFBLK, rdev (a made entry). 0 or -ENOSPC. */
int vmeta_set_dev(struct vmeta *m, const struct stat *real, mode_t type, dev_t rdev);
size_t vmeta_count(struct vmeta *m);

#endif
