/* fs/procfs.h - the synthetic /proc, built from the task table.
 *
 * The VFS (fs/vfs.c) calls these for a VFS_MNT_PROC mount with `rel`, the
 * path relative to the mount root ("" is /proc itself, "self", "42/status",
 * "self/fd/3"). `t` is the calling task: "self" and "thread-self" resolve
 * against it, and only the guest's own processes exist (the pid namespace of
 * the sandbox; pids are guest pids).
 *
 * Contents:
 *  - /proc/self -> "<vtgid>", /proc/thread-self -> "<vtgid>/task/<vtid>"
 *  - /proc/<pid>/ for every live guest thread-group leader:
 *      exe -> the task's guest exe path (symlink)
 *      cwd -> the task's guest cwd (symlink)
 *      root -> "/" (symlink)
 *      fd/ (directory of the task's open fds) and fd/<n> (magic links: their
 *      readlink text is the guest path of the open file, or "pipe:[ino]",
 *      "socket:[ino]", "anon_inode:[eventfd]"...; with " (deleted)" once a
 *      served file has lost its last link; opening one does NOT follow the
 *      text: open(2) reopens the file when the VFS can name it (a new open
 *      file description, as on Linux), else procfs_open_magic() checks the
 *      reopen with the opener's credentials and reopens a regular file or
 *      FIFO read-only through the guest procfs, or duplicates the guest's
 *      file (write reopens, devices, anon inodes; sockets: ENXIO))
 *      cmdline, comm, stat, statm, status, environ, limits, maps, io, task/
 *      (served from the procfs mounted in the guest's pid namespace,
 *      sb->guest_procfd, which renders guest pids; whitelisted names only:
 *      never mem, pagemap, syscall, stack, ...)
 *      mounts, mountinfo (synthesised from the VFS mount table)
 *      ns/<name> (links "<name>:[<ino>]", stable values), fdinfo/<n>, cgroup
 *  - /proc/1: the guest's init (moat-init), listed, owned by root, with no
 *    handle on it (no fd, fdinfo, maps, io; cmdline/environ synthesised)
 *  - /proc/cpuinfo, meminfo, uptime, loadavg, version, stat, filesystems
 *    (from sb->guest_procfd; meminfo, cpuinfo, stat and uptime cut to the
 *    sandbox's --memory, CPUs and start)
 *  - a static read-only tree: /proc/sys/{kernel,fs,vm,net/core}/... with
 *    sandbox values, and beneath PROCFS_SYSFS the guest's /sys
 *    (devices/system/cpu, fs/cgroup with the limits, transparent_hugepage)
 *  - /proc/mounts -> "self/mounts"
 *  - PROCFS_ETC_HOSTS (not listed): the guest's /etc/hosts (localhost and the
 *    sandbox's host name), served at /etc/hosts by a PROC file mount
 *    (sentry/view.c; /etc/hostname is one of sys/kernel/hostname)
 * Anything else: -ENOENT.
 */
#ifndef MOAT_FS_PROCFS_H
#define MOAT_FS_PROCFS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/types.h>

/* The semaphores of all the sandbox's SysV sets together (syscalls/sys_ipc.c,
 * Linux's SEMMNS): the guest's /proc/sys/kernel/sem says it. */
#define IPC_SEM_TOTAL 262144u

#define PROCFS_ETC_HOSTS ".moat-etc-hosts"
/* The guest's /sys: a directory PROC mount whose target is this prefix
 * (fs/vfs.c passes "<PROCFS_SYSFS>/<rel>"); not listed in /proc. */
#define PROCFS_SYSFS ".moat-sys"

/* st_dev of every synthetic /proc node: a device number no file system
 * the sandbox can reach has (fs/vfs.c vfs_reserve_devs), so a host file is
 * never taken for one of ours; set once before the guest runs */
extern dev_t procfs_dev;
#define PROCFS_DEV procfs_dev

struct task;
struct vfs;
struct sandbox;

#define PROCFS_MAGIC_LINK 0x1 /* set in *flags by procfs_lstat for fd/<n> */

/* lstat of rel (a symlink is reported as S_IFLNK). flags may be NULL. */
int procfs_lstat(struct vfs *v, struct task *t, const char *rel, struct stat *st, int *flags);

/* Is rel one of the links Linux treats as magic (<pid>/exe, cwd, root: it
 * jumps to the object rather than reading text) although the VFS follows
 * their text? RESOLVE_NO_MAGICLINKS refuses them. 1 or 0. */
int procfs_is_magic_text(struct task *t, const char *rel);

/* Symlink text; returns length (no NUL added) or -errno (-EINVAL: not a link). */
long procfs_readlink(struct vfs *v, struct task *t, const char *rel, char *buf, size_t len);

/* Open a regular file of /proc read-only (write access: -EACCES). Returns 0
 * and a host fd the guest may read natively (a fd opened beneath
 * sb->guest_procfd, or a sealed memfd holding the synthesised content). */
int procfs_open(struct vfs *v, struct task *t, const char *rel, int flags, int *fd);
/* /proc/sysvipc/{shm,sem,msg} as the guest sees them: the sentry's reading
 * (its uids and pids) rewritten with the objects' virtual owners and guest
 * pids (syscalls/sys_ipc.c sets it; NULL: the text as read). Returns a
 * malloc'ed text and its length in *outlen, or NULL. */
extern char *(*procfs_sysvipc_hook)(struct sandbox *sb, const char *which, const char *text, size_t *outlen);

/* Open the target of a magic link (fd/<n>). O_PATH: a host fd for the same
 * open file (task_getfd on the owning task). Otherwise (v non-NULL) a
 * regular file or FIFO is checked with t's virtual credentials against the
 * object (-EACCES), a socket is -ENXIO, and a read-only open is a new open
 * file description (fs/procfs.c reopen_new); what that cannot reopen gets
 * the same open file, never with more access than it has. */
int procfs_open_magic(struct vfs *v, struct task *t, const char *rel, int flags, int *fd);

/* A read-only reopen of an object the sentry's uid owns whose mode denies
 * that uid (root-run: a memfd the guest chmod'ed to 0; the guest's own check
 * has allowed it): fn opens <vpid>/fd/<fd> of the guest procfs with oflags
 * (read-only) and DAC override over the sandbox's own objects only
 * (sentry/reopen.c, moat-reopen); an fd or -errno. Unset (rootless: the
 * sentry's own namespace gives it that), such an open fails as the kernel
 * says and the guest's description is shared. */
void procfs_set_reopen_helper(int (*fn)(pid_t vpid, int fd, int oflags));

/* The guest pid a /proc/<pid> directory names (what pidfd_send_signal
 * accepts as a pidfd), or 0 if rel is no such directory. */
pid_t procfs_dir_pid(struct task *t, const char *rel);

/* -EROFS for the read-only trees (/proc/sys, /sys: a write open or
 * access(W_OK) fails as on a read-only mount, even for root), else 0. */
int procfs_write_err(struct task *t, const char *rel);

/* /proc/sys/fs/lease-break-time of the sandbox (seconds; 45 until a guest
 * root writes it): the lease table's break timeout (syscalls/sys_lock.c). */
struct sandbox;
long procfs_lease_break_time(struct sandbox *sb);

/* sysinfo(2) as the sandbox shows it: the host's figures with totalram
 * (and free/shared/buffer) capped at --memory and no swap then, uptime since
 * the sandbox's boot, procs the guest's tasks. Returns 0 or -errno. */
struct sysinfo;
int procfs_sysinfo(struct task *t, struct sysinfo *si);
/* times(2): the caller's process cpu times and the clock ticks since the
 * sandbox's boot (its return value), or -errno. */
struct tms;
long procfs_times(struct task *t, struct tms *out);
/* the sandbox's boot (its init's start) on CLOCK_REALTIME; 0 if unknown */
struct timespec procfs_boot_realtime(struct sandbox *sb);

/* /proc/config.gz is the gzip of what fn writes (at most len bytes into buf,
 * returning the full length): the sentry passes the syscall table's
 * sc_kconfig_text. Without it the file does not exist. */
void procfs_set_kconfig(size_t (*fn)(char *buf, size_t len));
/* tests: MOAT_TEST_PTRACE_CHECK_DELAY=MS (set by the pipeline): a gated
 * open of another process's file (maps, environ, io...) sleeps MS between
 * its ptrace check and the open, inside the target's exec guard (0: off) */
extern int procfs_test_check_delay_ms;
extern void (*procfs_test_block)(void); /* the pipeline's: another worker takes the lead */

struct procfs_dirent {
	char name[64];
	unsigned char type;      /* DT_DIR, DT_REG, DT_LNK */
	ino_t ino;
	/* 0, or the entry's directory position as Linux keys it, stable while
	 * entries come and go: fd/, fdinfo/ and task/ number + 2, a process
	 * of /proc 258 + pid; such entries come in ascending order (a listing
	 * resumes at the first position at or past where it stopped, so
	 * closing fds while reading fd/ skips none) */
	uint64_t pos;
};
/* List a directory of /proc. *out is malloc'ed (caller frees). Returns the
 * count or -errno (-ENOTDIR). */
long procfs_readdir(struct vfs *v, struct task *t, const char *rel, struct procfs_dirent **out);

/* Render mounts/mountinfo text for a task (used by procfs; provided by the VFS). */
long vfs_render_mounts(struct vfs *v, char *buf, size_t len, int mountinfo);

/* The guest path of an open file, identified by the (st_dev, st_ino) of a
 * host fd for it (provided by the VFS; used for the text of fd/<n> links).
 * Writes a NUL-terminated absolute guest path into buf and returns its length,
 * or -ENOENT if the VFS does not know the inode (-ENAMETOOLONG if len is too
 * small). Until the VFS defines it, a weak fallback in procfs.c says -ENOENT. */
int vfs_path_of_inode(struct vfs *v, dev_t dev, ino_t ino, char *buf, size_t len);

/* The same for an open file with host stat st, with " (deleted)" appended
 * when the file (a served file or directory, not one of the sentry's memfds)
 * has no link left (st_nlink == 0), as Linux's d_path shows an unlinked
 * dentry. A weak fallback in procfs.c calls vfs_path_of_inode. */
int vfs_path_of_file(struct vfs *v, const struct stat *st, char *buf, size_t len);
/* The path a directory held by host fd has now (a rename since it was opened
 * is followed: fs/vfs.c vfs_refind_dir); -ENOENT if it has none. */
struct task;
int vfs_path_of_dirfd(struct vfs *v, struct task *t, int fd, char *buf, size_t len);
/* The task's working directory as it is named now (fs/vfs.c vfs_cwd_node);
 * -ENOENT if removed, -ENAMETOOLONG if it does not fit. */
int vfs_cwd_path(struct vfs *v, struct task *t, char *buf, size_t len);
/* A chrooted task's root renamed since: its name now (fs/vfs.c; a weak
 * stand-in in procfs.c does nothing) */
void vfs_root_refresh(struct vfs *v, struct task *t);

/* How the kernel names the files of the gofer mounts in /proc/<pid>/maps
 * (smaps, numa_maps), read by the sentry: each export i is attached at "/<i>"
 * in the gofer's and in the sentry's mount namespace; the sentry's direct
 * opens in a cow export come from a detached clone of its overlay, named
 * from that clone's root ("/<rel>") with the overlay's device. One entry per
 * mount: kp (kl bytes) is that prefix (a guest bind of a subdirectory adds
 * "/<sub>"), dev the device a line must show (0: any), gp the mount's guest
 * path ("" for "/"). Fills *out (malloc'ed; kp strings in it too) and
 * returns the count, or -errno (fs/vfs.c; the weak stand-in in procfs.c: 0). */
struct vfs_kname {
	const char *kp;
	size_t kl;
	dev_t dev;
	const char *gp;
	size_t gl;
};
long vfs_kernel_names(struct vfs *v, struct vfs_kname **out);

/* PROCMAP_QUERY (Linux 6.11 ioctl on a /proc/<pid>/maps fd), whose maps
 * are the sentry's memfds: struct procmap_query of <linux/fs.h> */
struct procfs_procmap_query {
	uint64_t size, query_flags, query_addr;
	uint64_t vma_start, vma_end, vma_flags, vma_page_size, vma_offset, inode;
	uint32_t dev_major, dev_minor, vma_name_size, build_id_size;
	uint64_t vma_name_addr, build_id_addr;
};
/* Is the guest's fd of t one of procfs' maps memfds? 0 and its rel
 * ("<pid>/maps", "<pid>/task/<tid>/maps") in rel, 1 if not, -errno. */
int procfs_maps_fd(struct task *t, int guest_fd, char *rel, size_t len);
/* The query on rel's task's mappings now (after a ptrace read check of t
 * on it, as an open of rel): q's out fields and the mapping's name (as the
 * guest names it, unescaped; "" for none) in name. 0 or -errno (ENOENT:
 * no such mapping, EINVAL: bad flags). */
int procfs_procmap_query(struct vfs *v, struct task *t, const char *rel, struct procfs_procmap_query *q,
			 char *name, size_t namelen);

/* mountinfo's id of the mount the VFS names host fd hostfd on, or -1 (fs/vfs.c;
 * a weak stand-in in procfs.c answers -1) */
int vfs_fd_mnt_id(struct vfs *v, struct task *t, int hostfd);

#endif
