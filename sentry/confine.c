/* sentry/confine.c - after set-up the sentry confines itself: it opens no
 * host path by name (the gofer resolves every host path) and execs nothing.
 *
 * A deny-list filter with TSYNC (every sentry thread): exec, the path-taking
 * file calls, mount and namespace calls fail with EPERM. openat (read-only)
 * and readlinkat stay open only beneath the guest pid namespace's procfs;
 * openat2 is refused. Sockets: AF_UNIX only.
 * TODO: turn this into an allowlist once the syscall set of the sentry is
 * stable (noted in ARCHITECTURE.md). */
#include "sentry/sentry.h"
#include "kernel/task.h"
#include "common/log.h"

#include <errno.h>
#include <fcntl.h>
#include <seccomp.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

int confine_sentry(struct sandbox *sb, char *err, size_t errlen)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	if (!ctx) {
		snprintf(err, errlen, "sentry confinement: seccomp_init failed");
		return -ENOMEM;
	}
	int rc = 0;
	const int deny[] = {
		SCMP_SYS(open), SCMP_SYS(creat), SCMP_SYS(execve), SCMP_SYS(execveat),
		SCMP_SYS(mkdir), SCMP_SYS(mkdirat), SCMP_SYS(rmdir), SCMP_SYS(unlink),
		SCMP_SYS(unlinkat), SCMP_SYS(rename), SCMP_SYS(renameat), SCMP_SYS(renameat2),
		SCMP_SYS(link), SCMP_SYS(linkat), SCMP_SYS(symlink), SCMP_SYS(symlinkat),
		SCMP_SYS(chmod), SCMP_SYS(fchmodat), SCMP_SYS(chown), SCMP_SYS(lchown),
		SCMP_SYS(fchownat), SCMP_SYS(truncate), SCMP_SYS(mknod), SCMP_SYS(mknodat),
		SCMP_SYS(chroot), SCMP_SYS(pivot_root), SCMP_SYS(mount), SCMP_SYS(umount2),
		SCMP_SYS(unshare), SCMP_SYS(setns), SCMP_SYS(chdir), SCMP_SYS(fchdir),
		SCMP_SYS(stat), SCMP_SYS(lstat), SCMP_SYS(access), SCMP_SYS(faccessat),
		SCMP_SYS(faccessat2), SCMP_SYS(readlink),
		SCMP_SYS(utimes), SCMP_SYS(utime), SCMP_SYS(futimesat),
		SCMP_SYS(open_by_handle_at), SCMP_SYS(name_to_handle_at),
		SCMP_SYS(bind), SCMP_SYS(connect), SCMP_SYS(io_uring_setup), SCMP_SYS(bpf),
		SCMP_SYS(init_module), SCMP_SYS(finit_module), SCMP_SYS(kexec_load),
	};
	for (size_t i = 0; i < sizeof deny / sizeof deny[0] && rc == 0; i++)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), deny[i], 0);
	/* The only directory the sentry opens beneath is the guest pid
	 * namespace's procfs, read-only: openat needs dirfd == guest_procfd and
	 * O_ACCMODE == O_RDONLY (both are registers, so the filter can check
	 * them); openat2 is refused (its flags live in memory). Magic links
	 * there lead only to the guest's own objects (its root is the empty
	 * loader tmpfs). */
	int pfd = sb->guest_procfd;
	if (pfd < 0) {
		seccomp_release(ctx);
		snprintf(err, errlen, "sentry confinement: no guest procfs");
		return -EINVAL;
	}
	if (!rc) {
		struct scmp_arg_cmp c = { .arg = 0, .op = SCMP_CMP_NE, .datum_a = (scmp_datum_t)pfd, .datum_b = 0 };
		rc = seccomp_rule_add_array(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(openat), 1, &c);
	}
	if (!rc) {
		struct scmp_arg_cmp c = { .arg = 2, .op = SCMP_CMP_MASKED_EQ, .datum_a = O_ACCMODE, .datum_b = O_WRONLY };
		rc = seccomp_rule_add_array(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(openat), 1, &c);
	}
	if (!rc) {
		struct scmp_arg_cmp c = { .arg = 2, .op = SCMP_CMP_MASKED_EQ, .datum_a = O_ACCMODE, .datum_b = O_RDWR };
		rc = seccomp_rule_add_array(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(openat), 1, &c);
	}
	if (!rc)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(openat2), 0);
	if (!rc) {
		struct scmp_arg_cmp c = { .arg = 0, .op = SCMP_CMP_NE, .datum_a = (scmp_datum_t)pfd, .datum_b = 0 };
		rc = seccomp_rule_add_array(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(readlinkat), 1, &c);
	}
	/* newfstatat with a path: only AT_EMPTY_PATH on fds (fstat) */
	if (!rc) {
		struct scmp_arg_cmp c = { .arg = 3, .op = SCMP_CMP_MASKED_EQ, .datum_a = AT_EMPTY_PATH, .datum_b = 0 };
		rc = seccomp_rule_add_array(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(newfstatat), 1, &c);
	}
	if (!rc) {
		struct scmp_arg_cmp c = { .arg = 0, .op = SCMP_CMP_NE, .datum_a = AF_UNIX, .datum_b = 0 };
		rc = seccomp_rule_add_array(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(socket), 1, &c);
	}
	if (!rc)
		rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_TSYNC, 1);
	if (!rc)
		rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 1);
	if (!rc)
		rc = seccomp_load(ctx);
	seccomp_release(ctx);
	if (rc) {
		snprintf(err, errlen, "sentry confinement: %s", strerror(-rc));
		return rc;
	}
	return 0;
}
