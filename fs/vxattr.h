/* fs/vxattr.h - virtual extended attributes (trusted.*, security.*): see vxattr.c. */
#ifndef MOAT_FS_VXATTR_H
#define MOAT_FS_VXATTR_H

#include <stddef.h>
#include <sys/types.h>

struct vxattr;

struct vxattr *vxattr_new(void);
void vxattr_free(struct vxattr *x);
/* the value's length (copied when size), -ENODATA, -ERANGE (size too small) */
long vxattr_get(struct vxattr *x, dev_t dev, ino_t ino, const char *name, void *buf, size_t size);
/* the NUL-separated names want() accepts (all when want is NULL), as
 * listxattr writes them: total length, or -ERANGE */
long vxattr_list(struct vxattr *x, dev_t dev, ino_t ino, int (*want)(const char *, void *),
		 void *arg, char *buf, size_t size);
/* XATTR_CREATE / XATTR_REPLACE as setxattr: 0, -EEXIST, -ENODATA, -ENOSPC */
int vxattr_set(struct vxattr *x, dev_t dev, ino_t ino, const char *name, const void *val,
	       size_t len, int flags);
int vxattr_remove(struct vxattr *x, dev_t dev, ino_t ino, const char *name);
void vxattr_forget(struct vxattr *x, dev_t dev, ino_t ino);

#endif
