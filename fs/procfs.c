/* fs/procfs.c - the synthetic /proc (contract: fs/procfs.h).
 *
 * Every entry point first resolves `rel` into a node (pn_walk): a small
 * state machine over the components, with the task table as the source of
 * truth for which pids exist. A node is one of
 *  - a directory (root, sys, sys/kernel, <pid>, <pid>/task/<tid>, fd, task),
 *  - a symlink whose text we compute (self, thread-self, mounts, exe, cwd,
 *    root) or a magic link (fd/<n>),
 *  - a regular file served from the guest's own procfs (sb->guest_procfd,
 *    mounted in the guest pid namespace, so it renders guest pids), opened
 *    read-only with openat(O_NOFOLLOW) on a path we build from whitelisted
 *    names and decimal numbers only,
 *  - or a regular file we synthesise into a sealed memfd.
 *
 * The guest never gets a fd for a procfs directory from us, and never one for
 * a name outside the whitelist (mem, pagemap, syscall, stack, root, cwd, exe,
 * fd of the host procfs are never opened).
 */
#include "fs/procfs.h"
#include "fs/walk.h"
#include "common/util.h"
#include "kernel/task.h"
#include "loader/loader_abi.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/statfs.h>
#include <sys/sysinfo.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/times.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#ifndef PID_FS_MAGIC
#define PID_FS_MAGIC 0x50494446
#endif
#ifndef ANON_INODE_FS_MAGIC
#define ANON_INODE_FS_MAGIC 0x09041934
#endif

#define PROCFS_ROOT_INO 1
#define PROC_MAX_FILE (4u << 20) /* cap on content we copy (status, mounts) */

/* ---- weak fallbacks for what the VFS provides ---- */

__attribute__((weak)) long vfs_render_mounts(struct vfs *v, char *buf, size_t len, int mountinfo)
{
	const char *s = mountinfo ? "1 1 0:77 / / ro - moatfs none ro\n" : "none / moatfs ro 0 0\n";
	size_t n = strlen(s);

	if (n < len)
		memcpy(buf, s, n + 1);
	return (long)n;
}

__attribute__((weak)) int vfs_path_of_inode(struct vfs *v, dev_t dev, ino_t ino, char *buf, size_t len)
{
	return -ENOENT;
}

__attribute__((weak)) int vfs_path_of_file(struct vfs *v, const struct stat *st, char *buf, size_t len)
{
	return vfs_path_of_inode(v, st->st_dev, st->st_ino, buf, len);
}

__attribute__((weak)) int vfs_path_of_dirfd(struct vfs *v, struct task *t, int fd, char *buf, size_t len)
{
	return -ENOENT;
}

__attribute__((weak)) int vfs_cwd_path(struct vfs *v, struct task *t, char *buf, size_t len)
{
	int r = 0;

	(void)v;
	struct fs_ctx *fs = task_fs_get(t);
	if (!fs)
		return -ENOENT;
	pthread_mutex_lock(&fs->lock);
	if (strlen(fs->cwd) >= len)
		r = -ENAMETOOLONG;
	else
		strcpy(buf, fs->cwd);
	pthread_mutex_unlock(&fs->lock);
	fs_ctx_put(fs);
	return r;
}

__attribute__((weak)) void vfs_root_refresh(struct vfs *v, struct task *t)
{
	(void)v;
	(void)t;
}

/* (reopen_new: without the VFS, no reopen; the old rules) */
__attribute__((weak)) int vfs_host_fd_node(struct vfs *v, struct task *t, int fd, struct vfs_node *n)
{
	(void)v;
	(void)t;
	(void)fd;
	(void)n;
	return -ENOSYS;
}

__attribute__((weak)) int vfs_is_memfd(struct vfs *v, const struct stat *st)
{
	(void)v;
	(void)st;
	return 0;
}

__attribute__((weak)) int vfs_caller_stdio_access(struct vfs *v, const struct stat *st)
{
	(void)v;
	(void)st;
	return -1;
}

__attribute__((weak)) int vfs_fd_on_export(struct vfs *v, int fd)
{
	(void)v;
	(void)fd;
	return 1;
}

__attribute__((weak)) int vfs_permission(struct task *t, const struct stat *st, int mask)
{
	(void)t;
	(void)st;
	(void)mask;
	return -EACCES;
}

__attribute__((weak)) int vfs_permission_obj(struct task *t, const struct stat *st, int mask)
{
	return vfs_permission(t, st, mask);
}

__attribute__((weak)) int vfs_fd_mnt_id(struct vfs *v, struct task *t, int hostfd)
{
	(void)v;
	(void)t;
	(void)hostfd;
	return -1;
}

__attribute__((weak)) long vfs_kernel_names(struct vfs *v, struct vfs_kname **out)
{
	(void)v;
	*out = NULL;
	return 0;
}

/* ---- nodes ---- */

enum pkind {
	/* directories */
	N_ROOT, N_TDIR, N_PID, N_TID, N_FDDIR, N_FDINFODIR, N_NSDIR,
	N_MAPFILESDIR, /* <pid>/map_files: empty (Linux's links are CAP_SYS_ADMIN's) */
	N_TASKDIR,
	/* regular files */
	N_GUEST,      /* served from sb->guest_procfd at gpath */
	N_STATUS,     /* guest status with the virtual ids patched in */
	N_MOUNTS, N_MOUNTINFO, N_HOSTNAME, N_RESOLV, N_OSTYPE, N_OSRELEASE,
	N_VERSION, N_DOMAINNAME, N_ETC_HOSTS,
	N_TFILE,      /* a file of the static tree (sys/..., .moat-sys/...) */
	N_MEMINFO, N_CPUINFO, N_PSTAT, N_UPTIME, N_LOADAVG, /* guest's, cut to the sandbox */
	N_CGROUP,     /* <pid>/cgroup: "0::/" */
	N_PIDSTAT,    /* <pid>/stat, starttime from the sandbox's boot */
	N_INIT_CMDLINE, N_EMPTY, /* pid 1's cmdline and environ */
	N_KCONFIG,    /* config.gz: moat's kernel configuration */
	/* symlinks */
	N_SELF, N_THREAD_SELF, N_MOUNTS_LINK, N_EXE, N_CWD, N_ROOTLINK,
	N_NS,         /* <pid>/ns/<name>: "<name>:[<ino>]" */
	N_FD,         /* magic link */
};

struct pnode {
	enum pkind kind;
	mode_t perm;
	struct task *task;  /* for nodes under /proc/<pid> (a reference) */
	int fdnum;          /* N_FD; N_NS: index in ns_ents */
	int init;           /* under /proc/1, the guest's init (moat-init: task NULL) */
	int zombie;         /* under /proc/<pid> of a process that exited and is not
			     * reaped yet (task NULL): the kernel's stat, status,
			     * comm (zombie_ent) */
	pid_t pid;          /* the <pid> of per-task nodes */
	char base[48];      /* "<pid>" or "<pid>/task/<tid>" for per-task nodes */
	char gpath[96];     /* path beneath guest_procfd; also the canonical rel */
};

struct pent {
	const char *name;
	enum pkind kind;
	mode_t perm;
};

static const struct pent root_ents[] = {
	{ "self", N_SELF, 0777 },
	{ "thread-self", N_THREAD_SELF, 0777 },
	{ "mounts", N_MOUNTS_LINK, 0777 },
	{ "sys", N_TDIR, 0555 },
	{ "cpuinfo", N_CPUINFO, 0444 },
	{ "meminfo", N_MEMINFO, 0444 },
	{ "uptime", N_UPTIME, 0444 },
	{ "loadavg", N_LOADAVG, 0444 },
	{ "version", N_VERSION, 0444 },
	{ "stat", N_PSTAT, 0444 },
	{ "filesystems", N_GUEST, 0444 },
	{ "sysvipc", N_TDIR, 0555 },
	{ "net", N_TDIR, 0555 },
	{ "cgroups", N_TFILE, 0444 },
	{ "vmstat", N_TFILE, 0444 },
	{ "config.gz", N_KCONFIG, 0444 },
};

static const struct pent etc_hosts_ent = { PROCFS_ETC_HOSTS, N_ETC_HOSTS, 0444 };
static const struct pent sysfs_ent = { PROCFS_SYSFS, N_TDIR, 0555 };
/* /etc/resolv.conf with --net allow= (a symlink to it; not listed) */
static const struct pent resolv_ent = { "moat-resolv.conf", N_RESOLV, 0444 };

/* The static tree: /proc/sys (sysctls, read-only) and, beneath the hidden
 * PROCFS_SYSFS, the guest's /sys. N_TFILE: the sandbox's value (a NULL text
 * is computed by tree_text); N_GUEST: a limit the host kernel enforces on the
 * guest too (pipe-max-size, nr_open, max_map_count...), read from the guest
 * procfs, so what the guest reads is what holds. Nothing that names the host. */
struct tent {
	const char *path;
	enum pkind kind;
	mode_t perm;
	const char *text;
};

#define SYSFS PROCFS_SYSFS "/"
static const struct tent tree[] = {
	{ "cgroups", N_TFILE, 0444, /* cgroup v2 only (hierarchy 0): the JVM's probe */
	  "#subsys_name\thierarchy\tnum_cgroups\tenabled\ncpuset\t0\t1\t1\ncpu\t0\t1\t1\n"
	  "memory\t0\t1\t1\npids\t0\t1\t1\n" },
	/* the paging and swapping counters vmstat(8) needs to start (procps:
	 * "Unable to create vmstat structure" without the file), counted from
	 * the sandbox's boot: none kept, 0 (the host's are its other tenants'
	 * paging, as loadavg's load) */
	{ "vmstat", N_TFILE, 0444,
	  "pgpgin 0\npgpgout 0\npswpin 0\npswpout 0\npgfault 0\npgmajfault 0\n" },
	{ "sys", N_TDIR, 0555, NULL },
	/* the guest's IPC namespace's objects (the sentry reads them in it) */
	{ "sysvipc", N_TDIR, 0555, NULL },
	{ "sysvipc/msg", N_GUEST, 0444, NULL },
	{ "sysvipc/sem", N_GUEST, 0444, NULL },
	{ "sysvipc/shm", N_GUEST, 0444, NULL },
	/* the guest's network namespace (its loopback, its sockets), read in
	 * the guest's init's (open_net): interfaces and their counters, routes,
	 * addresses, inet sockets with the owner as the guest sees it. Not
	 * unix: a path's socket is bound natively under an abstract name whose
	 * generation is its secret ("AF_UNIX path names"); nor the global
	 * counts (sockstat, snmp: some are the host's) */
	{ "net", N_TDIR, 0555, NULL },
	{ "net/dev", N_GUEST, 0444, NULL },
	{ "net/if_inet6", N_GUEST, 0444, NULL },
	{ "net/route", N_GUEST, 0444, NULL },
	{ "net/tcp", N_GUEST, 0444, NULL },
	{ "net/tcp6", N_GUEST, 0444, NULL },
	{ "net/udp", N_GUEST, 0444, NULL },
	{ "net/udp6", N_GUEST, 0444, NULL },
	{ "sys/kernel", N_TDIR, 0555, NULL },
	{ "sys/kernel/hostname", N_HOSTNAME, 0644, NULL },
	{ "sys/kernel/domainname", N_DOMAINNAME, 0644, NULL },
	{ "sys/kernel/ostype", N_OSTYPE, 0444, NULL },
	{ "sys/kernel/osrelease", N_OSRELEASE, 0444, NULL },
	{ "sys/kernel/version", N_TFILE, 0444, "#1 SMP PREEMPT_DYNAMIC\n" },
	{ "sys/kernel/pid_max", N_GUEST, 0644, NULL },
	/* IPC limits (test suites read them): per IPC namespace, and the
	 * kernel answers for the reader's, the sentry's, whose values are the
	 * defaults the guest's has too (nothing in the sandbox can set them).
	 * /proc/sysvipc is not offered: it would list the sentry's namespace
	 * (empty), and ipcs without it asks msgctl/semctl/shmctl instead. */
	{ "sys/kernel/msgmax", N_GUEST, 0644, NULL },
	{ "sys/kernel/msgmnb", N_GUEST, 0644, NULL },
	{ "sys/kernel/msgmni", N_GUEST, 0644, NULL },
	{ "sys/kernel/sem", N_TFILE, 0644, NULL }, /* SEMMNS: the sentry's bound */
	{ "sys/kernel/shmall", N_GUEST, 0644, NULL },
	{ "sys/kernel/shmmax", N_GUEST, 0644, NULL },
	{ "sys/kernel/shmmni", N_GUEST, 0644, NULL },
	{ "sys/kernel/threads-max", N_TFILE, 0644, NULL },
	{ "sys/kernel/ngroups_max", N_GUEST, 0444, NULL },
	{ "sys/kernel/tainted", N_TFILE, 0644, "0\n" },
	{ "sys/kernel/cap_last_cap", N_GUEST, 0444, NULL },
	{ "sys/kernel/overflowuid", N_TFILE, 0644, "65534\n" },
	{ "sys/kernel/overflowgid", N_TFILE, 0644, "65534\n" },
	{ "sys/kernel/randomize_va_space", N_GUEST, 0644, NULL },
	{ "sys/kernel/yama", N_TDIR, 0555, NULL },
	{ "sys/kernel/yama/ptrace_scope", N_TFILE, 0644, "1\n" },
	{ "sys/user", N_TDIR, 0555, NULL },
	{ "sys/user/max_user_namespaces", N_TFILE, 0644, "0\n" }, /* clone(CLONE_NEWUSER) is denied */
	{ "sys/kernel/random", N_TDIR, 0555, NULL },
	{ "sys/kernel/random/boot_id", N_TFILE, 0444, NULL },
	{ "sys/kernel/random/uuid", N_TFILE, 0444, NULL },
	{ "sys/kernel/random/entropy_avail", N_TFILE, 0444, "256\n" },
	{ "sys/kernel/random/poolsize", N_TFILE, 0444, "256\n" },
	{ "sys/fs", N_TDIR, 0555, NULL },
	{ "sys/fs/pipe-max-size", N_GUEST, 0644, NULL },
	{ "sys/fs/nr_open", N_GUEST, 0644, NULL },
	{ "sys/fs/file-max", N_GUEST, 0644, NULL },
	{ "sys/fs/pipe-user-pages-soft", N_GUEST, 0644, NULL },
	{ "sys/fs/pipe-user-pages-hard", N_GUEST, 0644, NULL },
	{ "sys/fs/lease-break-time", N_TFILE, 0644, NULL }, /* writable: procfs_lease_break_time */
	{ "sys/fs/leases-enable", N_TFILE, 0644, "1\n" },
	/* Linux AIO: the sandbox's share of the host's fs.aio-max-nr and what
	 * it holds of it (sentry/aio.c), not the host-wide count */
	{ "sys/fs/aio-max-nr", N_TFILE, 0644, NULL },
	{ "sys/fs/aio-nr", N_TFILE, 0444, NULL },
	{ "sys/fs/inotify", N_TDIR, 0555, NULL },
	{ "sys/fs/inotify/max_user_watches", N_GUEST, 0644, NULL },
	{ "sys/fs/inotify/max_user_instances", N_GUEST, 0644, NULL },
	{ "sys/fs/inotify/max_queued_events", N_GUEST, 0644, NULL },
	{ "sys/vm", N_TDIR, 0555, NULL },
	{ "sys/vm/overcommit_memory", N_GUEST, 0644, NULL },
	{ "sys/vm/max_map_count", N_GUEST, 0644, NULL },
	{ "sys/vm/mmap_min_addr", N_GUEST, 0644, NULL },
	/* requests the kernel may meet in part (sysctl_sink): a write is taken
	 * and changes nothing, as a host with no memory to spare for it */
	{ "sys/vm/drop_caches", N_TFILE, 0200, "" },
	{ "sys/vm/nr_hugepages", N_GUEST, 0644, NULL },
	{ "sys/net", N_TDIR, 0555, NULL },
	{ "sys/net/core", N_TDIR, 0555, NULL },
	{ "sys/net/core/somaxconn", N_TFILE, 0644, "4096\n" },
	{ PROCFS_SYSFS, N_TDIR, 0555, NULL },
	{ SYSFS "devices", N_TDIR, 0555, NULL },
	{ SYSFS "devices/system", N_TDIR, 0555, NULL },
	{ SYSFS "devices/system/cpu", N_TDIR, 0555, NULL },
	{ SYSFS "devices/system/cpu/online", N_TFILE, 0444, NULL },
	{ SYSFS "devices/system/cpu/possible", N_TFILE, 0444, NULL },
	{ SYSFS "devices/system/cpu/present", N_TFILE, 0444, NULL },
	{ SYSFS "fs", N_TDIR, 0555, NULL },
	{ SYSFS "fs/cgroup", N_TDIR, 0555, NULL },
	{ SYSFS "fs/cgroup/cgroup.controllers", N_TFILE, 0444, "cpu memory pids\n" },
	{ SYSFS "fs/cgroup/cgroup.subtree_control", N_TFILE, 0644, "\n" },
	{ SYSFS "fs/cgroup/cgroup.type", N_TFILE, 0644, "domain\n" },
	{ SYSFS "fs/cgroup/cpu.max", N_TFILE, 0644, NULL },
	{ SYSFS "fs/cgroup/cpu.weight", N_TFILE, 0644, "100\n" },
	{ SYSFS "fs/cgroup/cpuset.cpus.effective", N_TFILE, 0444, NULL },
	{ SYSFS "fs/cgroup/memory.max", N_TFILE, 0644, NULL },
	{ SYSFS "fs/cgroup/memory.high", N_TFILE, 0644, "max\n" },
	{ SYSFS "fs/cgroup/memory.swap.max", N_TFILE, 0644, NULL },
	{ SYSFS "fs/cgroup/pids.max", N_TFILE, 0644, NULL },
	{ SYSFS "kernel", N_TDIR, 0555, NULL },
	{ SYSFS "kernel/mm", N_TDIR, 0555, NULL },
	{ SYSFS "kernel/mm/hugepages", N_TDIR, 0555, NULL },
	{ SYSFS "kernel/mm/transparent_hugepage", N_TDIR, 0555, NULL },
	{ SYSFS "kernel/mm/transparent_hugepage/enabled", N_TFILE, 0644,
	  "always [madvise] never\n" },
	{ SYSFS "kernel/mm/transparent_hugepage/defrag", N_TFILE, 0644,
	  "always defer defer+madvise [madvise] never\n" },
	{ SYSFS "kernel/mm/transparent_hugepage/hpage_pmd_size", N_TFILE, 0444, "2097152\n" },
	/* no kernel/mm/ksm: MADV_MERGEABLE is EINVAL, as without CONFIG_KSM
	 * (the host's KSM merges pages across sandboxes; red team 76) */
};

static const struct tent *find_tent(const char *path)
{
	for (size_t i = 0; i < ARRAY_SIZE(tree); i++)
		if (!strcmp(tree[i].path, path))
			return &tree[i];
	return NULL;
}

/* /proc/<pid>/ns/<name> (stable values: those of Linux's initial namespaces). */
static const struct {
	const char *name;
	unsigned long ino;
} ns_ents[] = {
	{ "cgroup", 4026531835UL }, { "ipc", 4026531839UL }, { "mnt", 4026531841UL },
	{ "net", 4026531840UL }, { "pid", 4026531836UL }, { "pid_for_children", 4026531836UL },
	{ "time", 4026531834UL }, { "time_for_children", 4026531834UL },
	{ "user", 4026531837UL }, { "uts", 4026531838UL },
};

/* /proc/<pid>/ and /proc/<pid>/task/<tid>/ ("task" only in the former). */
static const struct pent pid_ents[] = {
	{ "task", N_TASKDIR, 0555 },
	{ "fd", N_FDDIR, 0500 },
	{ "fdinfo", N_FDINFODIR, 0500 },
	{ "ns", N_NSDIR, 0511 },
	{ "map_files", N_MAPFILESDIR, 0500 },
	{ "exe", N_EXE, 0777 },
	{ "cwd", N_CWD, 0777 },
	{ "root", N_ROOTLINK, 0777 },
	{ "cmdline", N_GUEST, 0444 },
	{ "comm", N_GUEST, 0644 },
	{ "stat", N_PIDSTAT, 0444 },
	{ "statm", N_GUEST, 0444 },
	{ "status", N_STATUS, 0444 },
	{ "environ", N_GUEST, 0400 },
	{ "limits", N_GUEST, 0444 },
	{ "maps", N_GUEST, 0444 },
	{ "smaps", N_GUEST, 0444 },
	{ "smaps_rollup", N_GUEST, 0444 },
	{ "pagemap", N_GUEST, 0400 },
	{ "numa_maps", N_GUEST, 0444 },
	{ "oom_score", N_GUEST, 0444 },
	{ "oom_adj", N_GUEST, 0644 },
	{ "personality", N_GUEST, 0400 },
	{ "wchan", N_GUEST, 0444 },
	{ "io", N_GUEST, 0400 },
	{ "mounts", N_MOUNTS, 0444 },
	{ "mountinfo", N_MOUNTINFO, 0444 },
	{ "cgroup", N_CGROUP, 0444 },
	{ "coredump_filter", N_GUEST, 0644 },
	{ "oom_score_adj", N_GUEST, 0644 },
};

/* What /proc/1 (the guest's init, moat-init, which is no task of ours) has:
 * no handle on it (no fd, fdinfo, maps, io; exe unreadable, as for a process
 * whose image the reader may not see), cmdline and environ synthesised (the
 * real ones are the sentry's), the rest the kernel's own text for it. */
static int init_has(const struct pent *e)
{
	return e->kind != N_FDDIR && e->kind != N_FDINFODIR && e->kind != N_MAPFILESDIR &&
	       strcmp(e->name, "maps") &&
	       strcmp(e->name, "io") && strncmp(e->name, "smaps", 5) && strcmp(e->name, "pagemap") &&
	       strcmp(e->name, "numa_maps");
}

static const struct pent *init_ent(const struct pent *e)
{
	static const struct pent cmdline = { "cmdline", N_INIT_CMDLINE, 0444 };
	static const struct pent environ = { "environ", N_EMPTY, 0400 };

	if (!e || !init_has(e))
		return NULL;
	if (!strcmp(e->name, "cmdline"))
		return &cmdline;
	if (!strcmp(e->name, "environ"))
		return &environ;
	return e;
}

/* What /proc/<pid> of a zombie has: no task of ours any more (the tracer
 * forgets it at its exit), but Linux lists it, state Z, until its parent
 * reaps it (ps's <defunct>; test suites wait for state Z): the kernel's own
 * stat and comm of it from the guest's procfs, its status with the ids it
 * exited with patched in (open_status: the kernel's names the sandbox's
 * host uid, root-run), an empty cmdline. */
static const struct pent *zombie_ent(const struct pent *e)
{
	static const struct pent ents[] = {
		{ "stat", N_GUEST, 0444 }, { "status", N_STATUS, 0444 },
		{ "comm", N_GUEST, 0444 }, { "cmdline", N_EMPTY, 0444 },
	};

	for (size_t i = 0; e && i < ARRAY_SIZE(ents); i++)
		if (!strcmp(e->name, ents[i].name))
			return &ents[i];
	return NULL;
}

static int kind_is_dir(enum pkind k)
{
	return k <= N_TASKDIR;
}

static int kind_is_link(enum pkind k)
{
	return k >= N_SELF;
}

static unsigned char kind_dtype(enum pkind k)
{
	if (kind_is_dir(k))
		return DT_DIR;
	return kind_is_link(k) ? DT_LNK : DT_REG;
}

static void pn_release(struct pnode *n)
{
	if (n->task)
		task_put(n->task);
	n->task = NULL;
}

static ino_t pn_ino(const char *canon)
{
	uint64_t h;

	if (!*canon)
		return PROCFS_ROOT_INO;
	h = moat_hash(canon, strlen(canon));
	return (ino_t)(h < 16 ? h + 16 : h);
}

/* A number as Linux spells it in /proc names: decimal, no sign, no
 * leading zero, at most INT_MAX; -1 when not. */
static int parse_dec(const char *s)
{
	long v = 0;

	if (!*s || (s[0] == '0' && s[1]) || strlen(s) > 10)
		return -1;
	for (const char *p = s; *p; p++) {
		if (*p < '0' || *p > '9')
			return -1;
		v = v * 10 + (*p - '0');
	}
	return v > INT_MAX ? -1 : (int)v;
}

/* A guest pid: such a number, not 0. */
static pid_t parse_pid(const char *s)
{
	int v = parse_dec(s);

	return v <= 0 ? -1 : (pid_t)v;
}

static const struct pent *find_ent(const struct pent *tab, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(tab[i].name, name))
			return &tab[i];
	return NULL;
}

/* dst = a + "/" + b (just b if a is empty); -ENAMETOOLONG if it does not fit. */
static int join(char *dst, size_t size, const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), off = 0;

	if (la + lb + 2 > size)
		return -ENAMETOOLONG;
	if (la) {
		memmove(dst, a, la);
		dst[la] = '/';
		off = la + 1;
	}
	memcpy(dst + off, b, lb + 1);
	return 0;
}

static int pn_set_child(struct pnode *n, const struct pent *e)
{
	n->kind = e->kind;
	n->perm = e->perm;
	return join(n->gpath, sizeof n->gpath, n->gpath, e->name);
}

/* The caller's own guest ids, for "self" and "thread-self". A vfork child
 * runs before its guest pid is known (the tracer learns it from the parent's
 * vfork return, which comes only once the child has exec'd), so a program
 * that reads /proc/self/exe right after exec (ld.so for $ORIGIN: java's
 * libjli.so) would find no "self". The parent returns as soon as the tracer
 * sees its syscall exit: wait for that, up to 5 s, instead of ENOENT. */
static void wait_known_ids(struct task *self)
{
	for (int i = 0; i < 5000 && (self->vtgid <= 0 || self->vtid <= 0) && !self->exited; i++)
		nanosleep(&(struct timespec){ .tv_nsec = 1000000 }, NULL);
}

/* Enter /proc/<pid>. */
static long guest_slurp(struct sandbox *sb, const char *gpath, char **out);

/* Is pid a zombie in the guest's pid namespace (its state in the kernel's
 * own stat, after the command's closing parenthesis)? */
static int is_zombie(struct sandbox *sb, pid_t pid)
{
	char gp[32];
	cleanup_free char *text = NULL;

	snprintf(gp, sizeof gp, "%d/stat", (int)pid);
	if (guest_slurp(sb, gp, &text) < 0)
		return 0;
	const char *p = strrchr(text, ')');
	return p && (p[1] == ' ') && (p[2] == 'Z' || p[2] == 'X');
}

static int enter_pid(struct task *self, struct pnode *n, pid_t pid)
{
	struct task *t = task_get_vpid(self->sb, pid);

	if (!t && pid == 1) {
		/* the guest's init: moat-init, never a task of ours */
		n->init = 1;
	} else if (!t || t->exited) {
		if (t)
			task_put(t);
		t = NULL;
		if (!is_zombie(self->sb, pid))
			return -ENOENT;
		n->zombie = 1;
	}
	n->task = t;
	n->kind = N_PID;
	n->perm = 0555;
	n->pid = pid;
	snprintf(n->base, sizeof n->base, "%d", (int)pid);
	snprintf(n->gpath, sizeof n->gpath, "%s", n->base);
	return 0;
}

/* Enter <pid>/task/<tid> from a N_TASKDIR node. */
static int enter_tid(struct task *self, struct pnode *n, pid_t tid)
{
	struct task *t;

	if (n->init) {
		if (tid != 1)
			return -ENOENT;
		n->kind = N_TID;
		n->perm = 0555;
		snprintf(n->base, sizeof n->base, "1/task/1");
		snprintf(n->gpath, sizeof n->gpath, "%s", n->base);
		return 0;
	}
	t = task_get_vpid(self->sb, tid);
	if (!t)
		return -ENOENT;
	if (t->exited || t->vtgid != n->task->vtgid) {
		task_put(t);
		return -ENOENT;
	}
	task_put(n->task);
	n->task = t;
	n->kind = N_TID;
	n->perm = 0555;
	snprintf(n->base, sizeof n->base, "%d/task/%d", (int)n->pid, (int)tid);
	snprintf(n->gpath, sizeof n->gpath, "%s", n->base);
	return 0;
}

static int fd_exists(struct task *t, int fdnum)
{
	int fd = task_getfd(t, fdnum);

	if (fd < 0)
		return 0;
	close(fd);
	return 1;
}

static int pn_step(struct task *self, struct pnode *n, const char *name, int more)
{
	const struct pent *e;
	pid_t pid;
	int r;

	switch (n->kind) {
	case N_ROOT:
		if ((!strcmp(name, "self") || !strcmp(name, "thread-self")) && more)
			wait_known_ids(self);
		if (!strcmp(name, "self") && more)
			return enter_pid(self, n, self->vtgid);
		if (!strcmp(name, "thread-self") && more) {
			r = enter_pid(self, n, self->vtgid);
			if (r)
				return r;
			n->kind = N_TASKDIR;
			return enter_tid(self, n, self->vtid);
		}
		pid = parse_pid(name);
		if (pid > 0)
			return enter_pid(self, n, pid);
		e = find_ent(root_ents, ARRAY_SIZE(root_ents), name);
		if (!e && !strcmp(name, PROCFS_ETC_HOSTS))
			e = &etc_hosts_ent;
		if (!e && !strcmp(name, PROCFS_SYSFS))
			e = &sysfs_ent;
		if (!e && !strcmp(name, resolv_ent.name))
			e = &resolv_ent;
		break;
	case N_TDIR: {
		char child[sizeof n->gpath];
		const struct tent *te;

		if (join(child, sizeof child, n->gpath, name) || !(te = find_tent(child)))
			return -ENOENT;
		n->kind = te->kind;
		n->perm = te->perm;
		memcpy(n->gpath, child, sizeof child);
		return 0;
	}
	case N_PID:
	case N_TID:
		e = find_ent(pid_ents, ARRAY_SIZE(pid_ents), name);
		if (e && (e->kind == N_TASKDIR || e->kind == N_MAPFILESDIR) && n->kind == N_TID)
			e = NULL;
		if (n->init)
			e = init_ent(e);
		if (n->zombie)
			e = zombie_ent(e);
		break;
	case N_NSDIR:
		for (size_t i = 0; i < ARRAY_SIZE(ns_ents); i++)
			if (!strcmp(ns_ents[i].name, name)) {
				n->kind = N_NS;
				n->perm = 0777;
				n->fdnum = (int)i;
				return join(n->gpath, sizeof n->gpath, n->gpath, name);
			}
		return -ENOENT;
	case N_MAPFILESDIR:
		return -ENOENT;
	case N_FDINFODIR: {
		int fdnum = parse_dec(name);

		if (fdnum < 0 || !fd_exists(n->task, fdnum))
			return -ENOENT;
		n->kind = N_GUEST;
		n->perm = 0400;
		n->fdnum = fdnum; /* open_fdinfo rewrites its mnt_id */
		snprintf(n->gpath, sizeof n->gpath, "%s/fdinfo/%d", n->base, fdnum);
		return 0;
	}
	case N_TASKDIR:
		pid = parse_pid(name);
		if (pid <= 0)
			return -ENOENT;
		return enter_tid(self, n, pid);
	case N_FDDIR: {
		int fdnum = parse_dec(name);

		if (fdnum < 0 || !fd_exists(n->task, fdnum))
			return -ENOENT;
		n->kind = N_FD;
		n->perm = 0700;
		n->fdnum = fdnum;
		snprintf(n->gpath, sizeof n->gpath, "%s/fd/%d", n->base, fdnum);
		return 0;
	}
	default:
		/* a file or a link with components after it */
		return -ENOTDIR;
	}
	if (!e)
		return -ENOENT;
	return pn_set_child(n, e);
}

/* Resolve rel into *n. On success the caller must pn_release(n). */
static int pn_walk(struct task *self, const char *rel, struct pnode *n)
{
	const char *p = rel ? rel : "";
	char comp[NAME_MAX + 1];

	memset(n, 0, sizeof *n);
	n->kind = N_ROOT;
	n->perm = 0555;
	n->fdnum = -1;
	if (!self || !self->sb)
		return -ENOENT;
	if (*p == '/')
		return -ENOENT;
	while (*p) {
		const char *end = strchr(p, '/');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		const char *next = end ? end + 1 : p + len;
		int more, r;

		if (len == 0) {
			p = next;
			continue;
		}
		if (len > NAME_MAX) {
			pn_release(n);
			return -ENAMETOOLONG;
		}
		memcpy(comp, p, len);
		comp[len] = 0;
		if (!strcmp(comp, ".") || !strcmp(comp, "..")) {
			/* the VFS resolves these; never take them from rel */
			pn_release(n);
			return -ENOENT;
		}
		while (*next == '/')
			next++;
		more = *next != 0;
		r = pn_step(self, n, comp, more);
		if (r) {
			pn_release(n);
			return r;
		}
		p = next;
	}
	return 0;
}

/* /proc's device number (procfs.h): set by fs/vfs.c vfs_reserve_devs and
 * vfs_set_proc_dev before the guest runs */
dev_t procfs_dev = 0x4d; /* makedev(0, 0x4d) until then (unit tests) */

/* ---- the guest procfs ---- */

static int guest_open(struct sandbox *sb, const char *gpath, int flags)
{
	long fd;

	/* gpath is built from whitelisted names and decimal ids only (never
	 * "self", never a link in the middle), so plain openat with O_NOFOLLOW
	 * stays beneath guest_procfd. The sentry's own filter allows only
	 * read-only openat there (no openat2: its flags live in memory). */
	if (!sb || sb->guest_procfd < 0)
		return -ENOENT;
	if ((flags & O_ACCMODE) != O_RDONLY)
		return -EACCES;
	fd = openat(sb->guest_procfd, gpath, flags | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
	if (fd < 0)
		return -errno;
	return (int)fd;
}

/* Read a whole (small) file from a fd into a malloc'ed NUL-terminated buffer. */
static long slurp_max(int fd, char **out, size_t max)
{
	size_t cap = 4096, len = 0;
	char *buf = malloc(cap);

	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t r;

		if (len + 1 >= cap) {
			char *nb;

			if (cap >= max) {
				free(buf);
				return -EFBIG;
			}
			nb = realloc(buf, cap * 2);
			if (!nb) {
				free(buf);
				return -ENOMEM;
			}
			buf = nb;
			cap *= 2;
		}
		r = read(fd, buf + len, cap - len - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;

			free(buf);
			return -e;
		}
		if (r == 0)
			break;
		len += (size_t)r;
	}
	buf[len] = 0;
	*out = buf;
	return (long)len;
}

static long slurp(int fd, char **out)
{
	return slurp_max(fd, out, PROC_MAX_FILE);
}

/* A whole file of the guest procfs (gpath as for guest_open) in *out
 * (malloc'ed, NUL-terminated): its length, or -errno. */
static long guest_slurp(struct sandbox *sb, const char *gpath, char **out)
{
	cleanup_fd int fd = guest_open(sb, gpath, O_RDONLY);

	*out = NULL;
	if (fd < 0)
		return fd;
	return slurp(fd, out);
}

struct dlist {
	struct procfs_dirent *v;
	size_t n, cap;
};

static int dl_add(struct dlist *d, const char *name, unsigned char type, const char *canon)
{
	struct procfs_dirent *e;

	if (grow_array(&d->v, &d->cap, d->n, sizeof *d->v, 32))
		return -ENOMEM;
	e = &d->v[d->n++];
	memset(e, 0, sizeof *e);
	snprintf(e->name, sizeof e->name, "%s", name);
	e->type = type;
	e->ino = pn_ino(canon);
	return 0;
}

static int cmp_dirent_pos(const void *a, const void *b)
{
	uint64_t x = ((const struct procfs_dirent *)a)->pos, y = ((const struct procfs_dirent *)b)->pos;

	return (x > y) - (x < y);
}

/* List decimal names of a directory of the guest procfs (fd/, task/), in
 * ascending order, each at its position number + 2 (Linux's). */
static int guest_list_numeric(struct sandbox *sb, const char *dir, const char *prefix,
			      unsigned char type, struct dlist *d)
{
	cleanup_fd int fd = guest_open(sb, dir, O_RDONLY | O_DIRECTORY);
	size_t first = d->n;
	char buf[4096];

	if (fd < 0)
		return fd;
	for (;;) {
		ssize_t n = getdents64(fd, buf, sizeof buf);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		for (ssize_t off = 0; off < n;) {
			struct dirent64 *de = (struct dirent64 *)(buf + off);
			char canon[400];

			off += de->d_reclen;
			int num = parse_dec(de->d_name);

			if (num < 0)
				continue;
			if (join(canon, sizeof canon, prefix, de->d_name))
				return -ENAMETOOLONG;
			if (dl_add(d, de->d_name, type, canon))
				return -ENOMEM;
			d->v[d->n - 1].pos = (uint64_t)num + 2;
		}
	}
	qsort(d->v + first, d->n - first, sizeof *d->v, cmp_dirent_pos);
	return 0;
}

/* Count the entries guest_list_numeric would return (for nlink). */
static long guest_count_numeric(struct sandbox *sb, const char *dir)
{
	struct dlist d = { 0 };
	int r = guest_list_numeric(sb, dir, dir, DT_DIR, &d);

	free(d.v);
	return r < 0 ? r : (long)d.n;
}

/* ---- synthesised content ---- */

/* memfd names: "moat-proc:<rel>" (fd/<n> links show these as /proc/<rel>). */
#define MEMFD_PREFIX "moat-proc:"

static int memfd_with(const char *canon, const char *data, size_t len, int *out)
{
	char name[sizeof MEMFD_PREFIX + 96];
	int fd, r;

	snprintf(name, sizeof name, MEMFD_PREFIX "%.95s", canon);
	fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);

	if (fd < 0)
		return -errno;
	r = write_all(fd, data, len);
	if (!r && lseek(fd, 0, SEEK_SET) < 0)
		r = -errno;
	if (!r && fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL) < 0)
		r = -errno;
	if (r) {
		close(fd);
		return r;
	}
	*out = fd;
	return 0;
}

/* The state a native kernel would show for guest task t (the node's base
 * "<pid>" or "<pid>/task/<tid>"), whose own kernel shows native. A task in
 * a trapped call waits in the seccomp notification, asleep ('S', or 'D' once
 * a worker took it) to its kernel, where natively it would be running the
 * call: 'R', unless the worker serving it waits for another task for it (a
 * FIFO's peer, a lock: call_state 2), where the native call would sleep: 'S'.
 * A notification no worker has taken yet is running too (LTP semctl01 and
 * semop03 wait for a child's 'S' to mean it sleeps in semop: before, the
 * child's semop still on its way to the sentry passed for it). Which wait
 * it is, is the kernel's wchan of the task (one read of the guest procfs,
 * only for a sleeping task); a native sleep (a native semop, a pipe's read)
 * keeps its 'S'. */
static int in_seccomp_wait(struct sandbox *sb, const char *base)
{
	char path[112], buf[64];
	ssize_t k;

	snprintf(path, sizeof path, "%s/wchan", base);
	int fd = guest_open(sb, path, O_RDONLY);
	if (fd < 0)
		return 0;
	k = read(fd, buf, sizeof buf - 1);
	close(fd);
	buf[k > 0 ? k : 0] = 0;
	return !strncmp(buf, "seccomp_", 8);
}

/* pre: the task was in a seccomp wait just before its stat was read (the
 * wchan is read again after: a call answered in between, or one that came
 * to the sentry in between, was one all the same; an 'R' shown for a moment
 * too long is harmless to a program that polls for 'S', an 'S' too early
 * is not) */
static char state_shown(struct sandbox *sb, struct task *t, const char *base, char native, int pre,
			unsigned calls)
{
	/* a ptrace stop: the guest has no tracer (ptrace is EPERM), so it is
	 * a job-control stop (SIGSTOP, ^Z) the tracer let go with
	 * PTRACE_LISTEN, 'T' natively, or one of the tracer's own stops
	 * (an exec, a fork, a signal on its way), where natively it runs.
	 * Before, `ps` showed a stopped job as 't' and a program waiting for
	 * its child's 'T' (LTP's TST_PROCESS_STATE_WAIT) waited for good. */
	if (t && native == 't')
		return atomic_load(&t->jobstop) ? 'T' : 'R';
	if (!t || (native != 'S' && native != 'D'))
		return native;
	/* a call taken and answered wholly between the two wchan reads (the
	 * native state read in its middle) was one too: with one lead per CPU
	 * (pipeline.c lead_spread) another worker answers the task's calls
	 * while this one reads its state (syscalls proc_state: a stat loop's
	 * child showed 'S' in 49 of 400 reads) */
	if (!pre && !in_seccomp_wait(sb, base) &&
	    __atomic_load_n(&t->calls_taken, __ATOMIC_ACQUIRE) == calls)
		return native;
	return __atomic_load_n(&t->call_state, __ATOMIC_ACQUIRE) == 2 ? 'S' : 'R';
}

/* the wchan before a task's stat or status is read (state_shown), and in
 * *calls its count of trapped calls taken by a worker */
static int state_pre(struct task *self, struct pnode *n, unsigned *calls)
{
	*calls = n->task ? __atomic_load_n(&n->task->calls_taken, __ATOMIC_ACQUIRE) : 0;
	return n->task && n->task != self && !n->init && in_seccomp_wait(self->sb, n->base);
}

/* Replace the Uid:/Gid: lines of a status text with the virtual credentials
 * (the guest procfs renders ids in the opener's - the sentry's - user
 * namespace, and setuid is emulated anyway), and the Umask: line with the
 * task's virtual umask (umask(2) is emulated: the native one never changes). */
static char *status_patch(const char *in, const struct cred *c, mode_t umask, char state)
{
	size_t len = strlen(in);
	int ng = cred_ngroups(c);
	char *out = malloc(len + 512 + (size_t)ng * 11);
	char *o = out;
	const char *p = in;

	if (!out)
		return NULL;
	while (*p) {
		const char *eol = strchr(p, '\n');
		size_t l = eol ? (size_t)(eol - p + 1) : strlen(p);

		if (state == 'R' && !strncmp(p, "State:", 6))
			o += sprintf(o, "State:\tR (running)\n");
		else if (state == 'S' && !strncmp(p, "State:", 6))
			o += sprintf(o, "State:\tS (sleeping)\n");
		else if (state == 'T' && !strncmp(p, "State:", 6))
			o += sprintf(o, "State:\tT (stopped)\n");
		else if (!strncmp(p, "Uid:", 4))
			o += sprintf(o, "Uid:\t%u\t%u\t%u\t%u\n", c->ruid, c->euid, c->suid, c->fsuid);
		else if (!strncmp(p, "Gid:", 4))
			o += sprintf(o, "Gid:\t%u\t%u\t%u\t%u\n", c->rgid, c->egid, c->sgid, c->fsgid);
		else if (!strncmp(p, "Umask:", 6))
			o += sprintf(o, "Umask:\t%04o\n", (unsigned)(umask & 0777));
		else if (!strncmp(p, "Groups:", 7)) {
			o += sprintf(o, "Groups:\t");
			for (int i = 0; i < ng; i++)
				o += sprintf(o, "%u ", c->groups->g[i]);
			*o++ = '\n';
		} else if (!strncmp(p, "CapInh:", 7))
			o += sprintf(o, "CapInh:\t%016llx\n", (unsigned long long)c->cap_inh);
		else if (!strncmp(p, "CapPrm:", 7))
			o += sprintf(o, "CapPrm:\t%016llx\n", (unsigned long long)c->cap_prm);
		else if (!strncmp(p, "CapEff:", 7))
			o += sprintf(o, "CapEff:\t%016llx\n", (unsigned long long)c->cap_eff);
		else if (!strncmp(p, "CapBnd:", 7))
			o += sprintf(o, "CapBnd:\t%016llx\n", (unsigned long long)c->cap_bnd);
		else if (!strncmp(p, "CapAmb:", 7))
			o += sprintf(o, "CapAmb:\t%016llx\n", (unsigned long long)c->cap_amb);
		else {
			memcpy(o, p, l);
			o += l;
		}
		p += l;
	}
	*o = 0;
	return out;
}

static int open_status(struct task *self, struct pnode *n, int *out)
{
	struct sandbox *sb = self->sb;
	cleanup_free char *text = NULL;
	cleanup_free char *patched = NULL;
	struct cred c;
	mode_t um;
	unsigned calls;
	int pre = state_pre(self, n, &calls);
	long len = guest_slurp(sb, n->gpath, &text);

	if (len < 0)
		return (int)len;
	um = 022;
	if (n->init) {
		/* the guest's init: root inside, no capabilities (it dropped them) */
		memset(&c, 0, sizeof c);
	} else if (!n->task) {
		/* a zombie (no task of ours any more): the ids it exited with,
		 * never the kernel's text, whose ids are the sentry's view of
		 * the native ones (root-run: the sandbox's host uid; red team
		 * 63); past the table (task_zombie_cred), the ids the program
		 * started with and no capabilities */
		if (!task_zombie_cred(sb, n->pid, &c)) {
			memset(&c, 0, sizeof c);
			c.ruid = c.euid = c.suid = c.fsuid = sb->start_uid;
			c.rgid = c.egid = c.sgid = c.fsgid = sb->start_gid;
		}
	} else {
		pthread_mutex_lock(&n->task->lock);
		cred_copy(&c, &n->task->cred);
		pthread_mutex_unlock(&n->task->lock);
	}
	struct fs_ctx *fs = n->task ? task_fs_get(n->task) : NULL;
	if (fs) {
		pthread_mutex_lock(&fs->lock);
		um = fs->umask;
		pthread_mutex_unlock(&fs->lock);
		fs_ctx_put(fs);
	}
	/* read while the caller waits for us: it is running, as a native read
	 * shows; another task in a trapped call: state_shown */
	char state = 0;
	const char *sp = strstr(text, "\nState:\t");
	if (n->task == self)
		state = 'R';
	else if (sp && !n->init)
		state = state_shown(sb, n->task, n->base, sp[8], pre, calls);
	patched = status_patch(text, &c, um, state);
	cred_free(&c);
	if (!patched)
		return -ENOMEM;
	return memfd_with(n->gpath, patched, strlen(patched), out);
}

static int open_mounts(struct vfs *v, struct pnode *n, int mountinfo, int *out)
{
	size_t cap = 16384;

	for (;;) {
		cleanup_free char *buf = malloc(cap);
		long r;

		if (!buf)
			return -ENOMEM;
		r = vfs_render_mounts(v, buf, cap, mountinfo);
		if (r < 0)
			return (int)r;
		if ((size_t)r < cap)
			return memfd_with(n->gpath, buf, (size_t)r, out);
		if (cap >= PROC_MAX_FILE)
			return -EFBIG;
		cap *= 2;
	}
}

/* "0-<n-1>" (or "0") */
static void cpu_range(unsigned n, char *buf, size_t len)
{
	if (n <= 1)
		snprintf(buf, len, "0\n");
	else
		snprintf(buf, len, "0-%u\n", n - 1);
}

static unsigned sb_ncpus(struct sandbox *sb)
{
	return sb->ncpus ? sb->ncpus : 1;
}

/* Content of a N_TFILE without a fixed text. */
static void tree_text(struct sandbox *sb, const char *path, char *buf, size_t len)
{
	const char *p = path;

	if (!strncmp(p, SYSFS, strlen(SYSFS)))
		p += strlen(SYSFS);
	if (!strcmp(p, "devices/system/cpu/online") || !strcmp(p, "devices/system/cpu/possible") ||
	    !strcmp(p, "devices/system/cpu/present") || !strcmp(p, "fs/cgroup/cpuset.cpus.effective")) {
		cpu_range(sb_ncpus(sb), buf, len);
	} else if (!strcmp(p, "fs/cgroup/cpu.max")) {
		if (sb->cpus_milli)
			snprintf(buf, len, "%lu 100000\n", sb->cpus_milli * 100);
		else
			snprintf(buf, len, "max 100000\n");
	} else if (!strcmp(p, "fs/cgroup/memory.max")) {
		if (sb->mem_limit)
			snprintf(buf, len, "%llu\n", sb->mem_limit);
		else
			snprintf(buf, len, "max\n");
	} else if (!strcmp(p, "fs/cgroup/memory.swap.max")) {
		snprintf(buf, len, sb->mem_limit ? "0\n" : "max\n");
	} else if (!strcmp(p, "fs/cgroup/pids.max")) {
		if (sb->pids_limit)
			snprintf(buf, len, "%lu\n", sb->pids_limit);
		else
			snprintf(buf, len, "max\n");
	} else if (!strcmp(p, "sys/fs/lease-break-time")) {
		snprintf(buf, len, "%ld\n", procfs_lease_break_time(sb));
	} else if (!strcmp(p, "sys/fs/aio-max-nr")) {
		snprintf(buf, len, "%lu\n", sb->aio_share ? sb->aio_share : 65536UL);
	} else if (!strcmp(p, "sys/fs/aio-nr")) {
		snprintf(buf, len, "%lu\n", __atomic_load_n(&sb->aio_held, __ATOMIC_RELAXED));
	} else if (!strcmp(p, "sys/kernel/sem")) {
		/* SEMMSL SEMMNS SEMOPM SEMMNI of the guest's IPC namespace, the
		 * total replaced by what the sentry lets the sandbox hold
		 * (IPC_SEM_TOTAL; the namespace's own, 1,024,000,000, only its
		 * uid 0 may lower: red team 58 left the native line) */
		cleanup_free char *text = NULL;
		unsigned long msl = 32000, mns = IPC_SEM_TOTAL, opm = 500, mni = 32000;

		if (guest_slurp(sb, "sys/kernel/sem", &text) >= 0 && text)
			(void)sscanf(text, "%lu %lu %lu %lu", &msl, &mns, &opm, &mni);
		if (mns > IPC_SEM_TOTAL)
			mns = IPC_SEM_TOTAL;
		snprintf(buf, len, "%lu\t%lu\t%lu\t%lu\n", msl, mns, opm, mni);
	} else if (!strcmp(p, "sys/kernel/threads-max")) {
		snprintf(buf, len, "%lu\n", sb->pids_limit ? sb->pids_limit : 4194304UL);
	} else if (!strcmp(p, "sys/kernel/random/boot_id")) {
		snprintf(buf, len, "%s\n", sb->boot_id[0] ? sb->boot_id : "00000000-0000-4000-8000-000000000000");
	} else if (!strcmp(p, "sys/kernel/random/uuid")) {
		unsigned char b[16] = { 0 };

		if (getrandom(b, sizeof b, 0) != sizeof b)
			memset(b, 0x5a, sizeof b);
		b[6] = (b[6] & 0x0f) | 0x40;
		b[8] = (b[8] & 0x3f) | 0x80;
		snprintf(buf, len,
			 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x\n",
			 b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11],
			 b[12], b[13], b[14], b[15]);
	} else {
		snprintf(buf, len, "\n");
	}
}

/* A "Key:   <n> kB" line of meminfo with a new value. */
static char *mi_set(char *o, const char *key, unsigned long long kb)
{
	return o + sprintf(o, "%-16s%8llu kB\n", key, kb);
}

static unsigned long long clk_tck(void)
{
	long hz = sysconf(_SC_CLK_TCK);

	return hz > 0 ? (unsigned long long)hz : 100;
}

/* Where field n (proc(5)'s numbers: 22 is starttime) of a stat text
 * begins, or NULL. */
static char *stat_starttime(char *text) { return proc_stat_field(text, 22); }

/* text (freed) with field n replaced by the number v: a new string, or NULL */
static char *stat_set(char *text, int n, long long v)
{
	char *p = proc_stat_field(text, n), *r = NULL;
	size_t len = strlen(text) + 24;

	if (p && (r = malloc(len)))
		snprintf(r, len, "%.*s%lld%s", (int)(p - text), text, v, p + strcspn(p, " \n"));
	free(text);
	return r;
}

/* The start of the guest's init, in clock ticks since the host booted: the
 * sandbox's boot. uptime, btime and every starttime are counted from it. */
static unsigned long long boot_ticks(struct sandbox *sb)
{
	unsigned long long v = __atomic_load_n(&sb->boot_ticks, __ATOMIC_RELAXED);
	cleanup_free char *st = NULL;
	char *p;

	if (v)
		return v;
	if (guest_slurp(sb, "1/stat", &st) < 0 || !(p = stat_starttime(st)))
		return 0;
	v = strtoull(p, NULL, 10);
	__atomic_store_n(&sb->boot_ticks, v, __ATOMIC_RELAXED);
	return v;
}

static int count_task(struct task *t, void *arg)
{
	if (!t->exited)
		(*(unsigned long *)arg)++;
	return 0;
}

static int max_pid(struct task *t, void *arg)
{
	if (!t->exited && (unsigned long)t->vtgid > *(unsigned long *)arg)
		*(unsigned long *)arg = (unsigned long)t->vtgid;
	return 0;
}

struct timespec procfs_boot_realtime(struct sandbox *sb)
{
	struct timespec rt, bt, r = { 0, 0 };
	unsigned long long b = boot_ticks(sb);

	if (!b || clock_gettime(CLOCK_REALTIME, &rt) < 0 || clock_gettime(CLOCK_BOOTTIME, &bt) < 0)
		return r;
	long double t = (long double)rt.tv_sec + rt.tv_nsec / 1e9L -
			((long double)bt.tv_sec + bt.tv_nsec / 1e9L - (long double)b / (long double)clk_tck());
	r.tv_sec = (time_t)t;
	r.tv_nsec = (long)((t - (long double)r.tv_sec) * 1e9L) / 10000000 * 10000000; /* (a tick: steady) */
	return r;
}

/* The sandbox's own memory, in kB: its processes' resident sets (statm
 * of each guest process, read through the guest procfs). */
#define USAGE_MAX_PIDS 4096
struct pids_acc { pid_t v[USAGE_MAX_PIDS]; size_t n; };

static int collect_pid(struct task *t, void *arg)
{
	struct pids_acc *a = arg;
	pid_t v = atomic_load(&t->vtgid);

	if (!t->exited && v > 0 && a->n < USAGE_MAX_PIDS)
		a->v[a->n++] = v;
	return 0;
}

static unsigned long long sandbox_rss_kb(struct sandbox *sb)
{
	cleanup_free struct pids_acc *a = calloc(1, sizeof *a);
	unsigned long long kb = 0, page = (unsigned long long)sysconf(_SC_PAGESIZE) / 1024;

	if (!a)
		return 0;
	task_for_each_leader(sb, collect_pid, a);
	for (size_t i = 0; i < a->n; i++) {
		cleanup_free char *txt = NULL;
		char name[32];
		unsigned long long size, res;

		snprintf(name, sizeof name, "%d/statm", (int)a->v[i]);
		if (guest_slurp(sb, name, &txt) > 0 && sscanf(txt, "%llu %llu", &size, &res) == 2)
			kb += res * (page ? page : 4);
	}
	return kb;
}

/* times(2) for the guest: its process's cpu times as its kernel's own
 * /proc/<pid>/stat shows them (utime, stime, cutime, cstime: fields 14-17,
 * the same thread-group sums times() takes), and the elapsed clock ticks
 * counted from the sandbox's boot as a freshly booted Linux counts them
 * (jiffies start 300 s below 2^32: 2^32 - 30000 at 100 Hz). Natively the
 * value is the host's jiffies: its uptime to the tick, which the guest's
 * time namespace does not move. The value, or -errno. */
long procfs_times(struct task *t, struct tms *out)
{
	struct sandbox *sb = t->sb;
	char path[32];
	cleanup_free char *st = NULL;
	unsigned long long boot = boot_ticks(sb), hz = clk_tck();
	struct timespec bt;
	char *p;

	snprintf(path, sizeof path, "%d/stat", (int)t->vtgid);
	if (guest_slurp(sb, path, &st) < 0 || !(p = proc_stat_field(st, 14)))
		return -ESRCH;
	long long v[4];
	if (sscanf(p, "%lld %lld %lld %lld", &v[0], &v[1], &v[2], &v[3]) != 4)
		return -ESRCH;
	out->tms_utime = (clock_t)v[0];
	out->tms_stime = (clock_t)v[1];
	out->tms_cutime = (clock_t)v[2];
	out->tms_cstime = (clock_t)v[3];
	if (clock_gettime(CLOCK_BOOTTIME, &bt) < 0)
		return -errno;
	unsigned long long now = (unsigned long long)bt.tv_sec * hz + (unsigned long long)bt.tv_nsec / (1000000000ULL / hz);
	return (long)(4294937296ULL + (now > boot ? now - boot : 0));
}

int procfs_sysinfo(struct task *t, struct sysinfo *si)
{
	struct sandbox *sb = t->sb;
	unsigned long long unit, lim, boot;
	unsigned long procs = 1; /* the init */

	if (sysinfo(si) < 0)
		return -errno;
	/* the host's load figures are none of the guest's (/proc/loadavg) */
	si->loads[0] = si->loads[1] = si->loads[2] = 0;
	unit = si->mem_unit ? si->mem_unit : 1;
	if (sb->mem_limit) {
		lim = sb->mem_limit / unit;
		if (si->totalram > lim)
			si->totalram = (unsigned long)lim;
		si->totalswap = si->freeswap = 0;
	}
	/* free memory is the total less the sandbox's own, never the host's
	 * live figure (red team 18: it showed the other tenants' allocations,
	 * as meminfo did); no shared or buffer memory of the host's */
	unsigned long long used = sandbox_rss_kb(sb) * 1024 / unit;
	si->freeram = si->totalram > used ? (unsigned long)(si->totalram - used) : 0;
	si->sharedram = si->bufferram = 0;
	si->freeswap = si->totalswap;
	/* the boot clock since the sandbox's boot, rounded up as Linux does:
	 * what the guest's own CLOCK_BOOTTIME reads (its time namespace) */
	boot = boot_ticks(sb);
	struct timespec bt;
	if (boot && clock_gettime(CLOCK_BOOTTIME, &bt) == 0) {
		long long up = (long long)bt.tv_sec * 1000000000LL + bt.tv_nsec -
			       (long long)(boot * (1000000000ULL / (unsigned long long)clk_tck()));
		si->uptime = up > 0 ? (long)((up + 999999999LL) / 1000000000LL) : 0;
	} else {
		boot /= clk_tck();
		si->uptime = (long)((unsigned long long)si->uptime > boot ? (unsigned long long)si->uptime - boot : 0);
	}
	task_for_each_leader(sb, count_task, &procs);
	si->procs = (unsigned short)(procs > 65535 ? 65535 : procs);
	return 0;
}

/* <pid>/stat: the guest procfs' text with starttime counted from the
 * sandbox's boot (as uptime and btime are). */
/*
 * Linux's ptrace access check for reading another process's /proc files
 * (PTRACE_MODE_READ_FSCREDS, __ptrace_may_access) on the virtual ids: the
 * same thread group, or the reader's fsuid/fsgid are the target's real,
 * effective and saved ids (CAP_SYS_PTRACE is never granted). Every guest
 * task is one host uid, so the guest procfs the sentry reads answers every
 * reader alike: before red team round 7 a process that dropped root read a
 * root process's maps (its address space layout), the code and stack
 * addresses in its stat, and where its cwd, root and exe links lead. The
 * target NULL is the guest's init (root's ids). A non-dumpable target
 * refuses (cred.nondump). Gated: maps, smaps,
 * smaps_rollup, numa_maps, pagemap, environ, io, personality (EACCES), the
 * cwd, root and exe links, stat's addresses.
 */
static int ptrace_read_ok(struct task *self, struct task *target)
{
	if (target && target->tgid == self->tgid)
		return 1;
	pthread_mutex_lock(&self->lock);
	uid_t fu = self->cred.fsuid;
	gid_t fg = self->cred.fsgid;
	pthread_mutex_unlock(&self->lock);
	if (!target)
		return fu == 0 && fg == 0;
	pthread_mutex_lock(&target->lock);
	struct cred d = target->cred;
	pthread_mutex_unlock(&target->lock);
	/* a non-dumpable target (its ids changed, PR_SET_DUMPABLE 0: the
	 * virtual flag, kernel/cred.h): never (red-team round 8); the
	 * process's flag, not the thread's (red team 38: a thread that had
	 * not made the prctl gave its process's fds, maps and environ) */
	return !task_nondump(target->sb, target) && fu == d.ruid && fu == d.euid && fu == d.suid &&
	       fg == d.rgid && fg == d.egid && fg == d.sgid;
}

/*
 * vmexec: the ptrace read check of another process and the host access it
 * allows (an open that binds the file to the target's mm, a read of its
 * stat, a fetch of one of its fds) made in one exec guard of the target's
 * group (kernel/task.h task_io_begin): no exec of the group runs between
 * them, and one that ran before has set the new image's nondump (the tracer
 * sets it before the exec fence comes down) and retired the leader it
 * replaced (exited at the re-key: refused here). Else a process that execs
 * a program the reader may run but not read (not dumpable) between the
 * check and the open gave the reader the new image's maps, environ, fds...
 * 1: in the guard (pguard_end), 0: no guard needed (the caller's own group,
 * the init: never execs), -EAGAIN (an exec held it off past 3 s) or -ESRCH.
 */
int procfs_test_check_delay_ms;
void (*procfs_test_block)(void);

static int pguard_begin(struct task *self, struct task *target)
{
	if (!target || target->tgid == self->tgid)
		return 0;
	if (task_io_begin(target, -1, 0) < 0)
		return -EAGAIN;
	if (atomic_load(&target->exited)) {
		task_io_end(target);
		return -ESRCH;
	}
	return 1;
}

static void pguard_end(struct task *target, int g)
{
	if (g > 0)
		task_io_end(target);
}

static int ends_with(const char *s, const char *suffix)
{
	size_t l = strlen(s), k = strlen(suffix);
	return l >= k && !strcmp(s + l - k, suffix);
}

/* Linux's /proc/<pid>/stat for a reader without ptrace access (do_task_stat):
 * start_code and end_code (fields 26, 27) are 1, the stack, esp, eip and
 * data addresses (28-30, 45-51) 0. In place; the text only gets shorter. */
static void stat_hide_addresses(char *text)
{
	char *p = strrchr(text, ')');
	if (!p)
		return;
	char *o = ++p;
	int field = 2;
	while (*p) {
		if (*p == ' ') {
			*o++ = *p++;
			field++;
			int hide = (field >= 26 && field <= 30) || (field >= 45 && field <= 51);
			if (hide && *p >= '0' && *p <= '9') {
				int zero = *p == '0' && (p[1] == ' ' || !p[1]);
				while (*p >= '0' && *p <= '9')
					p++;
				/* start_code and end_code show 1 (0: no mm) */
				*o++ = field <= 27 && !zero ? '1' : '0';
			}
			continue;
		}
		*o++ = *p++;
	}
	*o = 0;
}

static int open_pid_stat(struct task *self, struct pnode *n, int *out)
{
	struct sandbox *sb = self->sb;
	cleanup_free char *text = NULL;
	cleanup_free char *res = NULL;
	unsigned long long boot = boot_ticks(sb), st;
	char *p;
	unsigned calls;
	int pre = state_pre(self, n, &calls);
	int g = pguard_begin(self, n->init ? NULL : n->task);
	if (g < 0)
		return g == -ESRCH ? -ENOENT : g;
	long len = guest_slurp(sb, n->gpath, &text);
	int hide = len >= 0 && !ptrace_read_ok(self, n->init ? NULL : n->task);
	pguard_end(n->task, g);

	if (len < 0)
		return (int)len;
	/* read while the caller waits for us: it is running, as a native read shows */
	if ((p = strrchr(text, ')')) && p[1] == ' ' && p[2]) {
		if (n->task == self)
			p[2] = 'R';
		else if (!n->init)
			p[2] = state_shown(sb, n->task, n->base, p[2], pre, calls);
	}
	if (hide) {
		stat_hide_addresses(text);
		len = (long)strlen(text);
	}
	p = stat_starttime(text);
	if (!p)
		return memfd_with(n->gpath, text, (size_t)len, out);
	st = strtoull(p, NULL, 10);
	res = stat_set(text, 22, (long long)(st > boot ? st - boot : 0));
	text = NULL;
	/* a virtual real-time or deadline class (syscalls/sys_sched.c):
	 * priority, rt_priority and policy as Linux shows them, not the
	 * host's normal class */
	struct vsched v = { 0 };
	if (n->task) {
		pthread_mutex_lock(&n->task->lock);
		v = n->task->vsched;
		pthread_mutex_unlock(&n->task->lock);
	}
	if (v.policy && res) {
		res = stat_set(res, 18, v.policy == SCHED_DEADLINE ? -101 : -1 - v.prio);
		res = res ? stat_set(res, 40, v.prio) : NULL;
		res = res ? stat_set(res, 41, v.policy) : NULL;
	}
	if (!res)
		return -ENOMEM;
	return memfd_with(n->gpath, res, strlen(res), out);
}

/* The guest procfs' text of a global file (it is the host's), cut to the
 * sandbox: meminfo's totals to --memory, cpuinfo and stat to the guest's CPUs,
 * uptime to the sandbox's own (since its init started). */
char *(*procfs_sysvipc_hook)(struct sandbox *sb, const char *which, const char *text, size_t *outlen);

/* /proc/sysvipc/<which>: read in the guest's IPC namespace (the sentry's
 * threads joined it), ids and pids as the sentry sees them, so rewritten
 * (fail closed: no hook, no text) */
static int open_sysvipc(struct sandbox *sb, struct pnode *n, int *out)
{
	cleanup_free char *text = NULL;
	long len = guest_slurp(sb, n->gpath, &text);
	if (len < 0)
		return (int)len;
	size_t ol = 0;
	cleanup_free char *res = procfs_sysvipc_hook ? procfs_sysvipc_hook(sb, n->gpath + 8, text, &ol) : NULL;
	if (!res)
		return -ENOMEM;
	return memfd_with(n->gpath, res, ol, out);
}

/* /proc/net/NAME: the guest's network namespace's, read through its init
 * (pid 1 of the guest's pid namespace, which never leaves it). In the inet
 * socket tables (tcp, tcp6, udp, udp6: the 8th field is the owner, the 12th
 * the socket's kernel address) the owner is the guest's (net_owner) and the
 * address 0, as Linux shows it to a reader without CAP_SYSLOG. */
struct net_owner {
	uid_t u;
	int set, mixed;
};

static int net_owner_visit(struct task *t, void *arg)
{
	struct net_owner *a = arg;
	if (t->exited)
		return 0;
	pthread_mutex_lock(&t->lock);
	uid_t u = t->cred.fsuid;
	pthread_mutex_unlock(&t->lock);
	if (!a->set) {
		a->u = u;
		a->set = 1;
	} else if (a->u != u) {
		a->mixed = 1;
		return 1;
	}
	return 0;
}

/* the owner of a guest socket as the guest is shown it: every guest task
 * is one host uid (the sandbox's), so the kernel's column says only that;
 * while every task has one fsuid (--user 1000, a program that never
 * changes ids), that one is the creator's, else as stat shows the
 * sandbox's own uid */
static uid_t net_owner(struct sandbox *sb, const struct net_owner *one, uid_t host)
{
	const struct idmap *m = &sb->idmap;
	int own = m->full_identity ? host == m->native_uid && host != (uid_t)-1 : host == m->host_uid;
	if (own && one->set && !one->mixed)
		return one->u;
	return idmap_uid_to_guest(m, host);
}

static int open_net(struct sandbox *sb, struct pnode *n, int *out)
{
	char gp[sizeof n->gpath + 8];
	cleanup_free char *text = NULL;
	snprintf(gp, sizeof gp, "1/%s", n->gpath);
	long len = guest_slurp(sb, gp, &text);
	if (len < 0)
		return (int)len;
	const char *name = n->gpath + 4;
	int sockets = !strncmp(name, "tcp", 3) || !strncmp(name, "udp", 3);
	if (!sockets)
		return memfd_with(n->gpath, text, (size_t)len, out);
	/* a uid grows from at most 5 to at most 10 digits: 8 bytes a line more */
	size_t lines = 1;
	for (const char *p = text; *p; p++)
		lines += *p == '\n';
	struct net_owner one = { 0 };
	task_for_each_thread(sb, net_owner_visit, &one);
	cleanup_free char *res = malloc((size_t)len + lines * 8 + 1);
	if (!res)
		return -ENOMEM;
	char *o = res;
	int first = 1;
	for (const char *p = text; *p;) {
		const char *eol = strchr(p, '\n');
		size_t l = eol ? (size_t)(eol - p + 1) : strlen(p);
		if (first) { /* the header */
			memcpy(o, p, l);
			o += l;
			first = 0;
			p += l;
			continue;
		}
		const char *q = p, *end = p + l;
		for (int f = 0; q < end;) {
			const char *ws = q;
			while (q < end && (*q == ' ' || *q == '\t'))
				q++;
			memcpy(o, ws, (size_t)(q - ws));
			o += q - ws;
			if (q >= end || *q == '\n')
				break;
			const char *tok = q;
			while (q < end && *q != ' ' && *q != '\t' && *q != '\n')
				q++;
			size_t tl = (size_t)(q - tok);
			if (f == 7) {
				char num[16];
				uid_t u = (uid_t)strtoul(tok, NULL, 10);
				int k = snprintf(num, sizeof num, "%u", (unsigned)net_owner(sb, &one, u));
				if (k < 5) { /* right-aligned as Linux's %5u */
					memset(o, ' ', (size_t)(5 - k));
					o += 5 - k;
				}
				memcpy(o, num, (size_t)k);
				o += k;
			} else if (f == 11) {
				memset(o, '0', tl);
				o += tl;
			} else {
				memcpy(o, tok, tl);
				o += tl;
			}
			f++;
		}
		if (eol)
			*o++ = '\n';
		p += l;
	}
	return memfd_with(n->gpath, res, (size_t)(o - res), out);
}

/* /proc/stat's counters since the host booted (cpu times, interrupts,
 * context switches, softirqs) told the guest the host's uptime — their cpu
 * sum is it times the CPUs, ~24,500 s here against the sandbox's 0.04 s
 * uptime — and the host's load since boot (red team 13). They are counted
 * from the sandbox's first read of the file instead: line key by line key,
 * each number less the one read then. */
static pthread_mutex_t pstat_lock = PTHREAD_MUTEX_INITIALIZER;

static const char *pstat_base_line(const char *base, const char *key, size_t kl)
{
	for (const char *b = base; b && *b;) {
		if (!strncmp(b, key, kl) && b[kl] == ' ')
			return b + kl;
		b = strchr(b, '\n');
		b = b ? b + 1 : NULL;
	}
	return NULL;
}

static int pstat_counted(const char *p)
{
	return !strncmp(p, "cpu", 3) || !strncmp(p, "intr ", 5) || !strncmp(p, "ctxt ", 5) ||
	       !strncmp(p, "softirq ", 8);
}

/* the next number on a line at *q (spaces skipped, never past the line's
 * end): 1 and *v, or 0 at the end of the line */
static int pstat_num(const char **q, unsigned long long *v)
{
	const char *s = *q;
	char *e;

	while (*s == ' ')
		s++;
	if (*s < '0' || *s > '9')
		return 0;
	*v = strtoull(s, &e, 10);
	*q = e;
	return 1;
}

/* The base, made at the first read: each counter times boot/now (the share
 * of it the host had counted when the sandbox started, as if at an even
 * rate), so the cpu times sum to the sandbox's uptime times its CPUs from
 * the first read on, and later reads differ from it by exactly what the
 * host counted meanwhile. */
static char *pstat_make_base(const char *text, long double frac)
{
	char *b = malloc(strlen(text) + 1), *o = b;

	if (!b)
		return NULL;
	for (const char *p = text; *p;) {
		const char *eol = strchr(p, '\n');
		size_t l = eol ? (size_t)(eol - p + 1) : strlen(p);
		if (pstat_counted(p)) {
			size_t kl = strcspn(p, " \n");
			const char *q = p + kl;
			unsigned long long v;
			memcpy(o, p, kl);
			o += kl;
			while (pstat_num(&q, &v))
				o += sprintf(o, " %llu", (unsigned long long)((long double)v * frac));
			*o++ = '\n';
		}
		p += l;
	}
	*o = 0;
	return b;
}

/* line p (key then numbers) less sb->pstat_base's line of that key, into o
 * (never longer than p); returns the new o */
static char *pstat_rebase(struct sandbox *sb, const char *p, char *o)
{
	size_t kl = strcspn(p, " \n");
	const char *b = pstat_base_line(sb->pstat_base, p, kl);
	const char *q = p + kl;
	unsigned long long v, bv;

	memcpy(o, p, kl);
	o += kl;
	if (kl == 3)
		*o++ = ' '; /* "cpu  " as Linux writes it */
	while (pstat_num(&q, &v)) {
		if (!b || !pstat_num(&b, &bv))
			b = NULL, bv = 0;
		o += sprintf(o, " %llu", v > bv ? v - bv : 0);
	}
	*o++ = '\n';
	return o;
}

static int open_limited(struct sandbox *sb, struct pnode *n, int *out)
{
	cleanup_free char *text = NULL;
	cleanup_free char *res = NULL;
	unsigned ncpu = sb_ncpus(sb);
	unsigned long long lim = sb->mem_limit / 1024;
	unsigned long long mi_total = 0, mi_swap = 0, mi_huge = 0, mi_used = 0;
	char *o;
	long len = guest_slurp(sb, n->kind == N_UPTIME ? "uptime" :
			       n->kind == N_LOADAVG ? "loadavg" :
			       n->kind == N_MEMINFO ? "meminfo" :
			       n->kind == N_CPUINFO ? "cpuinfo" : "stat", &text);

	if (len < 0)
		return (int)len;
	res = malloc((size_t)len + 256);
	if (!res)
		return -ENOMEM;
	o = res;
	if (n->kind == N_UPTIME) {
		/* host uptime minus the start of the guest's init */
		double up = strtod(text, NULL), idle;
		double start = (double)boot_ticks(sb) / (double)clk_tck();

		up = up > start ? up - start : 0.01;
		idle = up * ncpu * 0.9;
		o += sprintf(o, "%.2f %.2f\n", up, idle);
		return memfd_with(n->gpath, res, (size_t)(o - res), out);
	}
	if (n->kind == N_PSTAT) {
		pthread_mutex_lock(&pstat_lock);
		if (!sb->pstat_base) {
			struct timespec bt;
			long double now = 0, boot = (long double)boot_ticks(sb);
			if (clock_gettime(CLOCK_BOOTTIME, &bt) == 0)
				now = ((long double)bt.tv_sec + bt.tv_nsec / 1e9L) * (long double)clk_tck();
			sb->pstat_base = pstat_make_base(text, now > boot && boot > 0 ? boot / now : 0);
		}
		pthread_mutex_unlock(&pstat_lock);
		if (!sb->pstat_base)
			return -ENOMEM;
	}
	if (n->kind == N_LOADAVG || n->kind == N_PSTAT) {
		/* the sandbox's task counts, not the host's */
		unsigned long tasks = 1;

		task_for_each_leader(sb, count_task, &tasks);
		if (n->kind == N_LOADAVG) {
			unsigned long last = 1;

			/* (read here, its last pid would be the sentry's namespace's).
			 * The load figures are not the host's: they told the guest
			 * how busy the host (its other tenants) is. The sandbox keeps
			 * no run-queue average of its own: 0.00, as gVisor's. */
			task_for_each_leader(sb, max_pid, &last);
			o += sprintf(o, "0.00 0.00 0.00 1/%lu %lu\n", tasks, last);
			return memfd_with(n->gpath, res, (size_t)(o - res), out);
		}
	}
	for (const char *p = text; *p;) {
		const char *eol = strchr(p, '\n');
		size_t l = eol ? (size_t)(eol - p + 1) : strlen(p);
		unsigned long long v;
		int keep = 1;

		if (n->kind == N_MEMINFO) {
			/* (red team 18) the host's live counters — MemFree, Cached,
			 * Dirty, Active... — showed the other tenants' allocations and
			 * writes as they happened: only the sizes stay the host's
			 * (MemTotal, SwapTotal, the huge page size and count, the
			 * vmalloc space, the direct map); free is the total less the
			 * sandbox's own resident memory, which is also its anon and
			 * active memory; every other counter is 0 */
			char key[40];
			size_t kl = strcspn(p, ":");

			snprintf(key, sizeof key, "%.*s", (int)(kl < 38 ? kl + 1 : 38), p);
			v = strtoull(p + strcspn(p, "0123456789"), NULL, 10);
			if (!mi_total) {
				const char *mt = strstr(text, "MemTotal:");
				const char *st = strstr(text, "SwapTotal:");
				const char *ht = strstr(text, "HugePages_Total:");
				mi_total = mt ? strtoull(mt + 9 + strspn(mt + 9, " "), NULL, 10) : 0;
				if (lim && (!mi_total || mi_total > lim))
					mi_total = lim;
				mi_swap = lim || !st ? 0 : strtoull(st + 10 + strspn(st + 10, " "), NULL, 10);
				mi_huge = ht ? strtoull(ht + 16 + strspn(ht + 16, " "), NULL, 10) : 0;
				mi_used = sandbox_rss_kb(sb);
				if (mi_used > mi_total)
					mi_used = mi_total;
			}
			keep = 0;
			if (!strcmp(key, "MemTotal:"))
				o = mi_set(o, key, mi_total);
			else if (!strcmp(key, "MemFree:") || !strcmp(key, "MemAvailable:"))
				o = mi_set(o, key, mi_total - mi_used);
			else if (!strcmp(key, "SwapTotal:") || !strcmp(key, "SwapFree:"))
				o = mi_set(o, key, mi_swap);
			else if (!strcmp(key, "Active:") || !strcmp(key, "Active(anon):") ||
				 !strcmp(key, "AnonPages:"))
				o = mi_set(o, key, mi_used);
			else if (!strcmp(key, "HugePages_Total:") || !strcmp(key, "HugePages_Free:"))
				o += sprintf(o, "%-16s%8llu\n", key, mi_huge);
			else if (!strncmp(key, "HugePages_", 10))
				o += sprintf(o, "%-16s%8d\n", key, 0);
			else if (!strcmp(key, "Hugepagesize:") || !strcmp(key, "VmallocTotal:") ||
				 !strncmp(key, "DirectMap", 9) || !strcmp(key, "CommitLimit:") ||
				 !strcmp(key, "Hugetlb:"))
				keep = 1;
			else
				o = mi_set(o, key, 0);
			(void)v;
		} else if (n->kind == N_CPUINFO) {
			/* blocks start with "processor\t: N" */
			if (!strncmp(p, "processor", 9)) {
				const char *c = strchr(p, ':');

				v = c ? strtoull(c + 1, NULL, 10) : 0;
				n->fdnum = v >= ncpu; /* drop this block */
			}
			keep = n->fdnum != 1;
		} else if (n->kind == N_PSTAT) {
			if (!strncmp(p, "cpu", 3) && p[3] >= '0' && p[3] <= '9' &&
			    strtoull(p + 3, NULL, 10) >= ncpu)
				keep = 0;
			if (!strncmp(p, "processes ", 10) || !strncmp(p, "procs_running ", 14) ||
			    !strncmp(p, "procs_blocked ", 14)) {
				/* forks since boot: the highest live guest pid is the best we know */
				if (p[4] == 'e') { /* processes */
					unsigned long last = 1;

					task_for_each_leader(sb, max_pid, &last);
					o += sprintf(o, "processes %lu\n", last);
				} else {
					o += sprintf(o, "%.*s %d\n", (int)strcspn(p, " "), p,
						     p[6] == 'r' ? 1 : 0);
				}
				keep = 0;
			} else if (!strncmp(p, "btime ", 6)) {
				/* the sandbox's boot: its init's start */
				o += sprintf(o, "btime %llu\n", strtoull(p + 6, NULL, 10) +
					     boot_ticks(sb) / clk_tck());
				keep = 0;
			} else if (keep && pstat_counted(p)) {
				o = pstat_rebase(sb, p, o);
				keep = 0;
			}
		}
		if (keep) {
			memcpy(o, p, l);
			o += l;
		}
		p += l;
	}
	return memfd_with(n->gpath, res, (size_t)(o - res), out);
}

/* ---- config.gz ---- */

static size_t (*kconfig_fn)(char *buf, size_t len);

void procfs_set_kconfig(size_t (*fn)(char *buf, size_t len))
{
	kconfig_fn = fn;
}

static uint32_t gz_crc32(const unsigned char *p, size_t n)
{
	uint32_t c = 0xffffffffu;

	for (size_t i = 0; i < n; i++) {
		c ^= p[i];
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1)));
	}
	return ~c;
}

static void put_le(unsigned char *p, uint32_t v, int n)
{
	for (int i = 0; i < n; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

enum { KCONFIG_TEXT_MAX = 16384, GZ_BLK = 65535 };
static unsigned char kconfig_gz[10 + KCONFIG_TEXT_MAX + 5 * (KCONFIG_TEXT_MAX / GZ_BLK + 1) + 8];
static size_t kconfig_gzlen;
static pthread_once_t kconfig_once = PTHREAD_ONCE_INIT;

/* A gzip member (RFC 1952) of the text in stored deflate blocks (RFC 1951
 * 3.2.4): what zcat and gzip -d read, with no compression library. Built
 * once: the text depends only on the table. */
static void kconfig_build(void)
{
	static char text[KCONFIG_TEXT_MAX];
	size_t n = kconfig_fn(text, sizeof text), o = 0, at = 0;
	unsigned char *g = kconfig_gz;

	if (n >= sizeof text)
		return; /* cut: no file rather than a wrong one */
	static const unsigned char hdr[10] = { 0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3 };
	memcpy(g, hdr, sizeof hdr);
	o = sizeof hdr;
	do {
		size_t k = n - at > GZ_BLK ? GZ_BLK : n - at;

		g[o++] = at + k == n; /* BFINAL, BTYPE 00 (stored) */
		put_le(g + o, (uint32_t)k, 2);
		put_le(g + o + 2, (uint32_t)~k & 0xffff, 2);
		o += 4;
		memcpy(g + o, text + at, k);
		o += k;
		at += k;
	} while (at < n);
	put_le(g + o, gz_crc32((const unsigned char *)text, n), 4);
	put_le(g + o + 4, (uint32_t)n, 4);
	kconfig_gzlen = o + 8;
}

static int open_kconfig(const char *canon, int *out)
{
	if (!kconfig_fn)
		return -ENOENT;
	pthread_once(&kconfig_once, kconfig_build);
	return kconfig_gzlen ? memfd_with(canon, (const char *)kconfig_gz, kconfig_gzlen, out) : -EIO;
}

static int open_synth(struct task *self, struct pnode *n, int *out)
{
	char buf[256];

	switch (n->kind) {
	case N_TFILE: {
		const struct tent *te = find_tent(n->gpath);

		if (!te)
			return -ENOENT;
		if (te->text)
			snprintf(buf, sizeof buf, "%s", te->text);
		else
			tree_text(self->sb, n->gpath, buf, sizeof buf);
		break;
	}
	case N_CGROUP:
		snprintf(buf, sizeof buf, "0::/\n");
		break;
	case N_INIT_CMDLINE:
		return memfd_with(n->gpath, "/sbin/init", sizeof "/sbin/init", out);
	case N_KCONFIG:
		return open_kconfig(n->gpath, out);
	case N_EMPTY:
		buf[0] = 0;
		break;
	case N_HOSTNAME:
		pthread_mutex_lock(&self->sb->uts_lock);
		snprintf(buf, sizeof buf, "%s\n", self->sb->hostname[0] ? self->sb->hostname : "moat");
		pthread_mutex_unlock(&self->sb->uts_lock);
		break;
	case N_DOMAINNAME:
		pthread_mutex_lock(&self->sb->uts_lock);
		snprintf(buf, sizeof buf, "%s\n", self->sb->domainname[0] ? self->sb->domainname : "(none)");
		pthread_mutex_unlock(&self->sb->uts_lock);
		break;
	case N_VERSION: /* never the host's build string */
		pthread_mutex_lock(&self->sb->uts_lock);
		snprintf(buf, sizeof buf, "Linux version %s (moat@moat) #1 SMP PREEMPT_DYNAMIC\n",
			 self->sb->release[0] ? self->sb->release : MOAT_KERNEL_RELEASE);
		pthread_mutex_unlock(&self->sb->uts_lock);
		break;
	case N_RESOLV:
		snprintf(buf, sizeof buf, "%s", self->sb->resolv_conf ? self->sb->resolv_conf :
					  "# moat: no DNS in this sandbox (--net none)\n");
		break;
	case N_OSTYPE:
		snprintf(buf, sizeof buf, "Linux\n");
		break;
	case N_OSRELEASE:
		pthread_mutex_lock(&self->sb->uts_lock);
		snprintf(buf, sizeof buf, "%s\n", self->sb->release[0] ? self->sb->release : MOAT_KERNEL_RELEASE);
		pthread_mutex_unlock(&self->sb->uts_lock);
		break;
	case N_ETC_HOSTS: /* the sandbox's own names, never the host's */
		pthread_mutex_lock(&self->sb->uts_lock);
		snprintf(buf, sizeof buf,
			 "127.0.0.1\tlocalhost\n"
			 "127.0.1.1\t%s\n"
			 "::1\tlocalhost ip6-localhost ip6-loopback\n"
			 "ff02::1\tip6-allnodes\n"
			 "ff02::2\tip6-allrouters\n",
			 self->sb->hostname[0] ? self->sb->hostname : "moat");
		pthread_mutex_unlock(&self->sb->uts_lock);
		break;
	default:
		return -ENOENT;
	}
	return memfd_with(n->gpath, buf, strlen(buf), out);
}

/* ---- fd/<n> link text ---- */

/* readlink of the guest procfs' own magic link, accepted only if the text
 * names no file (it starts with one of the prefixes): the fd number may have
 * been reused since we looked at it. */
static long guest_fd_text(struct sandbox *sb, const char *gpath, const char *const *prefixes,
			  char *out, size_t outlen)
{
	char buf[PATH_MAX];
	ssize_t r;

	if (sb->guest_procfd < 0)
		return -ENOENT;
	r = readlinkat(sb->guest_procfd, gpath, buf, sizeof buf - 1);
	if (r < 0)
		return -errno;
	buf[r] = 0;
	for (; *prefixes; prefixes++)
		if (!strncmp(buf, *prefixes, strlen(*prefixes)))
			return snprintf(out, outlen, "%s", buf);
	return -ENOENT;
}

static const char *chrdev_name(dev_t rdev, char *buf, size_t len)
{
	static const struct {
		unsigned maj, min;
		const char *name;
	} devs[] = {
		{ 1, 3, "/dev/null" }, { 1, 5, "/dev/zero" }, { 1, 7, "/dev/full" },
		{ 1, 8, "/dev/random" }, { 1, 9, "/dev/urandom" }, { 5, 0, "/dev/tty" },
		{ 5, 1, "/dev/console" }, { 5, 2, "/dev/ptmx" },
	};
	unsigned maj = major(rdev), min = minor(rdev);

	for (size_t i = 0; i < ARRAY_SIZE(devs); i++)
		if (devs[i].maj == maj && devs[i].min == min)
			return devs[i].name;
	if (maj >= 136 && maj <= 143) {
		snprintf(buf, len, "/dev/pts/%u", (maj - 136) * 256 + min);
		return buf;
	}
	return NULL;
}

/* A file of the guest procfs that we opened for the guest (N_GUEST): the
 * kernel's text for it depends on where that procfs is mounted relative to
 * the sentry's root, so take the longest suffix of it that names a served
 * file of ours and show it under /proc. Never shows anything else. */
static long proc_fd_text(struct pnode *n, int memfd, char *out, size_t outlen)
{
	static const char deleted[] = " (deleted)";
	char buf[PATH_MAX];
	size_t pl = strlen("/memfd:" MEMFD_PREFIX);
	ssize_t r;

	if (n->task->sb->guest_procfd < 0)
		return -ENOENT;
	r = readlinkat(n->task->sb->guest_procfd, n->gpath, buf, sizeof buf - 1);
	if (r <= 0)
		return -ENOENT;
	buf[r] = 0;
	if (memfd) {
		/* one of our sealed memfds: "/memfd:moat-proc:<rel> (deleted)" */
		if (strncmp(buf, "/memfd:" MEMFD_PREFIX, pl) ||
		    (size_t)r < pl + sizeof deleted - 1 ||
		    strcmp(buf + r - (sizeof deleted - 1), deleted))
			return -ENOENT;
		buf[r - (sizeof deleted - 1)] = 0;
		buf[pl - 1] = '/';
		memmove(buf, buf + pl - 1, strlen(buf + pl - 1) + 1);
	}
	for (char *p = buf; p; p = strchr(p + 1, '/')) {
		struct pnode f;
		const char *rel = p + (*p == '/');
		int ok;

		if (!*rel || pn_walk(n->task, rel, &f))
			continue;
		ok = memfd ? (f.kind > N_GUEST && !kind_is_link(f.kind)) : f.kind == N_GUEST;
		pn_release(&f);
		if (ok && !strncmp(rel, SYSFS, strlen(SYSFS)))
			return snprintf(out, outlen, "/sys/%s", rel + strlen(SYSFS));
		if (ok)
			return snprintf(out, outlen, "/proc/%s", rel);
		if (memfd)
			break;
	}
	return -ENOENT;
}

/* Name an anon inode without readlinkat (which the sentry's confinement may
 * refuse): the keys of its fdinfo in the guest procfs, then an epoll probe. */
static long anon_fd_text(struct pnode *n, int fd, char *out, size_t outlen)
{
	static const struct {
		const char *key, *name;
	} keys[] = {
		{ "\neventfd-count:", "[eventfd]" }, { "\nsigmask:", "[signalfd]" },
		{ "\nclockid:", "[timerfd]" }, { "\ntfd:", "[eventpoll]" },
		{ "\ninotify ", "inotify" }, { "\nfanotify ", "[fanotify]" },
		{ "\nPid:", "[pidfd]" },
	};
	char path[sizeof n->base + 24];
	cleanup_free char *text = NULL;
	int probe;

	snprintf(path, sizeof path, "%s/fdinfo/%d", n->base, n->fdnum);
	{
		if (guest_slurp(n->task->sb, path, &text) >= 0) {
			for (size_t i = 0; i < ARRAY_SIZE(keys); i++)
				if (strstr(text, keys[i].key))
					return snprintf(out, outlen, "anon_inode:%s", keys[i].name);
		}
	}
	/* an epoll fd with nothing registered: DEL of a pollable fd says ENOENT */
	probe = eventfd(0, EFD_CLOEXEC);
	if (probe >= 0) {
		int r = epoll_ctl(fd, EPOLL_CTL_DEL, probe, NULL);
		int e = errno;

		close(probe);
		if (r < 0 && e == ENOENT)
			return snprintf(out, outlen, "anon_inode:[eventpoll]");
	}
	return snprintf(out, outlen, "anon_inode:[unknown]");
}

static long fd_link_text(struct vfs *v, struct pnode *n, char *out, size_t outlen)
{
	static const char *const anon[] = { "anon_inode:", NULL };
	static const char *const nsfs[] = { "cgroup:[", "ipc:[", "mnt:[", "net:[", "pid:[",
					    "time:[", "user:[", "uts:[", "pid_for_children:[",
					    "time_for_children:[", NULL };
	static const char *const memfd[] = { "/memfd:", NULL };
	cleanup_fd int fd = task_getfd(n->task, n->fdnum);
	struct stat st;
	struct statfs sfs;
	char tmp[PATH_MAX];
	const char *name;
	long r;

	if (fd < 0)
		return -ENOENT;
	if (fstat(fd, &st) < 0 || fstatfs(fd, &sfs) < 0)
		return -errno;
	switch ((unsigned long)sfs.f_type) {
	case SOCKFS_MAGIC:
		return snprintf(out, outlen, "socket:[%lu]", (unsigned long)st.st_ino);
	case PIPEFS_MAGIC:
		return snprintf(out, outlen, "pipe:[%lu]", (unsigned long)st.st_ino);
	case ANON_INODE_FS_MAGIC:
	case PID_FS_MAGIC:
		r = guest_fd_text(n->task->sb, n->gpath, anon, out, outlen);
		return r >= 0 ? r : anon_fd_text(n, fd, out, outlen);
	case NSFS_MAGIC:
		r = guest_fd_text(n->task->sb, n->gpath, nsfs, out, outlen);
		return r >= 0 ? r : snprintf(out, outlen, "anon_inode:[unknown]");
	case PROC_SUPER_MAGIC:
		r = proc_fd_text(n, 0, out, outlen);
		if (r >= 0)
			return r;
		break;
	default:
		break;
	}
	/* a directory: its name now (it may have been renamed since) */
	r = S_ISDIR(st.st_mode) ? vfs_path_of_dirfd(v, n->task, fd, tmp, sizeof tmp) : -ENOENT;
	if (r < 0)
		r = vfs_path_of_file(v, &st, tmp, sizeof tmp);
	if (r >= 0)
		return snprintf(out, outlen, "%s", tmp);
	if (S_ISCHR(st.st_mode)) {
		name = chrdev_name(st.st_rdev, tmp, sizeof tmp);
		if (name)
			return snprintf(out, outlen, "%s", name);
	}
	if (st.st_nlink == 0 && (sfs.f_type == TMPFS_MAGIC || sfs.f_type == HUGETLBFS_MAGIC)) {
		r = proc_fd_text(n, 1, out, outlen);
		if (r >= 0)
			return r;
		r = guest_fd_text(n->task->sb, n->gpath, memfd, out, outlen);
		if (r >= 0)
			return r;
	}
	return snprintf(out, outlen, "anon_inode:[unknown]");
}

/* ---- entry points ---- */

struct count_arg {
	long n;
};

static int count_leader(struct task *t, void *arg)
{
	struct count_arg *c = arg;

	if (!t->exited)
		c->n++;
	return 0;
}

int procfs_lstat(struct vfs *v, struct task *t, const char *rel, struct stat *st, int *flags)
{
	struct pnode n;
	struct timespec now;
	int r = pn_walk(t, rel, &n);

	if (r)
		return r;
	if (flags)
		*flags = 0;
	memset(st, 0, sizeof *st);
	clock_gettime(CLOCK_REALTIME, &now);
	st->st_dev = PROCFS_DEV;
	st->st_ino = pn_ino(n.gpath);
	st->st_blksize = 1024;
	st->st_atim = st->st_mtim = st->st_ctim = now;
	st->st_nlink = 1;
	if (n.task) {
		/* Linux's task_dump_owner: a non-dumpable process's files are
		 * root's, so its 0500 fd directory is closed to the uid it
		 * dropped to (red team 13) */
		int self_fds = (n.kind == N_FDDIR || n.kind == N_FDINFODIR || n.kind == N_FD ||
				(n.kind == N_GUEST && n.fdnum >= 0 && strstr(n.gpath, "/fdinfo/"))) &&
			       n.task->tgid == t->tgid; /* (proc_fd_permission lets its own group in) */
		int nd = !self_fds && task_nondump(n.task->sb, n.task);
		pthread_mutex_lock(&n.task->lock);
		st->st_uid = nd ? 0 : n.task->cred.euid;
		st->st_gid = nd ? 0 : n.task->cred.egid;
		pthread_mutex_unlock(&n.task->lock);
	}
	if (kind_is_dir(n.kind)) {
		st->st_mode = S_IFDIR | n.perm;
		switch (n.kind) {
		case N_ROOT: {
			struct count_arg c = { 0 };

			task_for_each_leader(t->sb, count_leader, &c);
			st->st_nlink = 4 + c.n; /* ., .., sys, init, one per pid */
			break;
		}
		case N_TDIR:
		case N_TID:
			st->st_nlink = 3;
			break;
		case N_PID:
			st->st_nlink = 4; /* fd, task */
			break;
		case N_TASKDIR: {
			long c = guest_count_numeric(t->sb, n.gpath);

			st->st_nlink = 2 + (c > 0 ? c : 1);
			break;
		}
		default:
			st->st_nlink = 2;
			break;
		}
	} else if (kind_is_link(n.kind)) {
		st->st_mode = S_IFLNK | n.perm;
		if (n.kind == N_FD) {
			int fd = task_getfd(n.task, n.fdnum);
			int fl = fd >= 0 ? fcntl(fd, F_GETFL) : -1;

			if (fd >= 0)
				close(fd);
			if (fl < 0) {
				pn_release(&n);
				return -ENOENT;
			}
			switch (fl & O_ACCMODE) {
			case O_RDONLY:
				st->st_mode = S_IFLNK | 0500;
				break;
			case O_WRONLY:
				st->st_mode = S_IFLNK | 0300;
				break;
			default:
				st->st_mode = S_IFLNK | 0700;
				break;
			}
			st->st_size = 64;
			if (flags)
				*flags |= PROCFS_MAGIC_LINK;
		}
	} else {
		st->st_mode = S_IFREG | n.perm;
	}
	pn_release(&n);
	return 0;
}

int procfs_is_magic_text(struct task *t, const char *rel)
{
	struct pnode n;
	int magic;

	if (pn_walk(t, rel, &n))
		return 0;
	magic = n.kind == N_EXE || n.kind == N_CWD || n.kind == N_ROOTLINK || n.kind == N_NS;
	pn_release(&n);
	return magic;
}

static int tree_kind(enum pkind k)
{
	return k == N_TDIR || k == N_TFILE || k == N_HOSTNAME || k == N_DOMAINNAME ||
	       k == N_OSTYPE || k == N_OSRELEASE;
}

static long procfs_lease_break_time_locked(struct sandbox *sb)
{
	if (sb->lease_break_wfd > 0) {
		char b[32], *e;
		ssize_t k = pread(sb->lease_break_wfd - 1, b, sizeof b - 1, 0);

		if (k > 0) {
			b[k] = 0;
			errno = 0;
			long x = strtol(b, &e, 10);
			while (*e == ' ' || *e == '\t' || *e == '\n')
				e++;
			if (e != b && !*e && !errno && x >= 0 && x <= INT_MAX) {
				sb->lease_break_s = x;
				sb->lease_break_set = 1;
			}
		}
	}
	return sb->lease_break_set ? sb->lease_break_s : 45;
}

long procfs_lease_break_time(struct sandbox *sb)
{
	long v;

	if (!sb)
		return 45;
	pthread_mutex_lock(&sb->sysctl_lock);
	v = procfs_lease_break_time_locked(sb);
	pthread_mutex_unlock(&sb->sysctl_lock);
	return v;
}

/* The /proc/sys files a write open may change (guest root: the file's
 * 0644 mode, checked by the caller): values moat itself honours, per
 * sandbox. Everything else under /proc/sys and /sys stays EROFS. */
static int sysctl_writable(const struct pnode *n)
{
	return n->kind == N_TFILE && !strcmp(n->gpath, "sys/fs/lease-break-time");
}

/* The /proc/sys files whose write is a request Linux itself may meet in
 * part or not at all, taken and dropped: drop_caches (a hint; the page
 * cache is the host's, shared with its other tenants) and nr_hugepages
 * (Linux reserves what it can and the file reads back the count it got:
 * here always the host's, none added). A write open (guest root: the
 * file's mode, checked by the caller) gets an empty memfd nothing reads.
 * LTP's hugepage set-up writes both and then reads the count back:
 * TCONF, "not enough hugepages", where it broke on ENOENT (memfd_create03,
 * pkey01), and shmget02, which asks for none, runs. */
static int sysctl_sink(const struct pnode *n)
{
	return (n->kind == N_TFILE && !strcmp(n->gpath, "sys/vm/drop_caches")) ||
	       (n->kind == N_GUEST && !strcmp(n->gpath, "sys/vm/nr_hugepages"));
}

/* A write open of a writable sysctl: an empty memfd (Linux's write at
 * offset 0 replaces the value), its dup kept by the sandbox, the last one
 * opened replacing the one before. */
static int open_sysctl_write(struct sandbox *sb, int *out)
{
	int fd = memfd_create("moat-sysctl", MFD_CLOEXEC);
	int keep;

	if (fd < 0)
		return -errno;
	keep = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (keep < 0) {
		int e = -errno;
		close(fd);
		return e;
	}
	pthread_mutex_lock(&sb->sysctl_lock);
	(void)procfs_lease_break_time_locked(sb); /* what the last one says, first */
	if (sb->lease_break_wfd > 0)
		close(sb->lease_break_wfd - 1);
	sb->lease_break_wfd = keep + 1;
	pthread_mutex_unlock(&sb->sysctl_lock);
	*out = fd;
	return 0;
}

int procfs_write_err(struct task *t, const char *rel)
{
	struct pnode n;
	int r;

	if (pn_walk(t, rel, &n))
		return 0;
	r = !sysctl_sink(&n) && ((tree_kind(n.kind) && !sysctl_writable(&n)) ||
				 (n.kind == N_GUEST && !strncmp(n.gpath, "sys/", 4)))
		    ? -EROFS
		    : 0;
	pn_release(&n);
	return r;
}

pid_t procfs_dir_pid(struct task *t, const char *rel)
{
	struct pnode n;
	pid_t pid;

	if (pn_walk(t, rel, &n))
		return 0;
	pid = n.kind == N_PID ? n.pid : 0;
	pn_release(&n);
	return pid;
}

static long copy_text(const char *s, char *buf, size_t len)
{
	size_t l = strlen(s);

	if (l > len)
		l = len;
	memcpy(buf, s, l);
	return (long)l;
}

long procfs_readlink(struct vfs *v, struct task *t, const char *rel, char *buf, size_t len)
{
	struct pnode n;
	char text[PATH_MAX];
	long r = pn_walk(t, rel, &n);

	if (r)
		return r;
	text[0] = 0;
	/* what an exec changes (the exe, the fd table) is read in the
	 * target's exec guard with the check (pguard_begin) */
	int g = n.kind == N_EXE || n.kind == N_FD ? pguard_begin(t, n.init ? NULL : n.task) : 0;
	if (g < 0) {
		pn_release(&n);
		return g == -ESRCH ? -ENOENT : g;
	}
	if ((n.kind == N_EXE || n.kind == N_CWD || n.kind == N_ROOTLINK || n.kind == N_FD) &&
	    !ptrace_read_ok(t, n.init ? NULL : n.task)) {
		pguard_end(n.task, g);
		pn_release(&n);
		return -EACCES; /* Linux: proc_fd_access_allowed */
	}
	switch (n.kind) {
	case N_SELF:
		wait_known_ids(t);
		snprintf(text, sizeof text, "%d", (int)t->vtgid);
		break;
	case N_THREAD_SELF:
		wait_known_ids(t);
		snprintf(text, sizeof text, "%d/task/%d", (int)t->vtgid, (int)t->vtid);
		break;
	case N_MOUNTS_LINK:
		snprintf(text, sizeof text, "self/mounts");
		break;
	case N_ROOTLINK:
		/* the task's root (chroot), stripped below as the others */
		if (n.init || !n.task->fs)
			snprintf(text, sizeof text, "/");
		else {
			vfs_root_refresh(v, n.task);
			task_root(n.task, text, sizeof text);
		}
		break;
	case N_NS:
		snprintf(text, sizeof text, "%s:[%lu]", ns_ents[n.fdnum].name, ns_ents[n.fdnum].ino);
		break;
	case N_EXE:
		if (n.init) {
			r = -ENOENT; /* as for a process whose image the reader may not see */
			break;
		}
		pthread_mutex_lock(&n.task->lock);
		memcpy(text, n.task->exe, sizeof text);
		pthread_mutex_unlock(&n.task->lock);
		text[sizeof text - 1] = 0;
		if (!text[0])
			r = -ENOENT;
		break;
	case N_CWD:
		if (n.init) {
			snprintf(text, sizeof text, "/");
			break;
		}
		if (!n.task->fs) {
			r = -ENOENT;
			break;
		}
		/* the cwd's name now (it is held as an object); deeper than a
		 * page: ENAMETOOLONG, as d_path fails so */
		r = vfs_cwd_path(v, n.task, text, sizeof text);
		if (r >= 0)
			r = 0;
		break;
	case N_FD:
		r = fd_link_text(v, &n, text, sizeof text);
		if (r >= (long)sizeof text)
			r = -ENAMETOOLONG;
		break;
	default:
		r = -EINVAL;
		break;
	}
	pguard_end(n.task, g);
	pn_release(&n);
	if (r < 0)
		return r;
	/* names as the reader sees them from its root (chroot); a name
	 * outside it stays whole, as d_path writes it */
	if (text[0] == '/') {
		vfs_root_refresh(v, t);
		(void)task_root_strip(t, text);
	}
	return copy_text(text, buf, len);
}

/* /proc/<pid>/fdinfo/<n>: the kernel's text, with mnt_id the id of the
 * mount the VFS names the file on (mountinfo's first field), not the host
 * mount behind it (the gofer's or the sentry's). */
/* guard: as open_maps's (ended once the text and the fd are taken) */
static int open_fdinfo(struct vfs *v, struct task *self, struct pnode *n, struct task *guard, int *out)
{
	cleanup_free char *text = NULL;
	long len = guest_slurp(self->sb, n->gpath, &text);
	char *m = len >= 0 ? strstr(text, "\nmnt_id:") : NULL;
	int hf = m && v ? task_getfd(n->task, n->fdnum) : -1;
	if (guard)
		task_io_end(guard);

	if (len < 0)
		return (int)len;
	int id = hf >= 0 ? vfs_fd_mnt_id(v, self, hf) : -1;
	if (hf >= 0)
		close(hf);
	if (id >= 0) {
		{
			char *eol = strchr(m + 1, '\n');
			size_t tail = eol ? strlen(eol) : 0;
			char *res = malloc((size_t)len + 32);
			if (res) {
				int k = snprintf(res, (size_t)len + 32, "%.*s\nmnt_id:\t%d", (int)(m - text), text, id);
				memcpy(res + k, eol ? eol : "", tail + 1);
				free(text);
				text = res;
				len = (long)strlen(text);
			}
		}
	}
	return memfd_with(n->gpath, text, (size_t)len, out);
}

/* ---- maps, smaps, numa_maps: files named as the guest names them ----
 * The kernel names a mapped file by its path in the namespace it was
 * opened in: a gofer's or the sentry's "/<export>/<rel>", a cow export's
 * detached clone "/<rel>", the loader "/l" of the guest's native root. The
 * text is read by the sentry and each name rewritten through the mount
 * table's prefixes (vfs_kernel_names): one pass, a look-up per named line. */
#define PROC_MAX_MAPS (64u << 20) /* smaps of a process of many mappings */

struct obuf {
	char *p;
	size_t n, cap;
	int err;
};

static void ob_put(struct obuf *o, const char *s, size_t l)
{
	if (o->err)
		return;
	if (o->n + l + 1 > o->cap) {
		size_t cap = o->cap ? o->cap : 4096;
		while (o->n + l + 1 > cap)
			cap *= 2;
		char *np = realloc(o->p, cap);
		if (!np) {
			o->err = -ENOMEM;
			return;
		}
		o->p = np;
		o->cap = cap;
	}
	memcpy(o->p + o->n, s, l);
	o->n += l;
	o->p[o->n] = 0;
}

/* s as seq_file_path prints it: each byte of esc as "\ooo" */
static void ob_put_esc(struct obuf *o, const char *s, size_t l, const char *esc)
{
	size_t run = 0;
	for (size_t i = 0; i < l; i++) {
		if (!strchr(esc, s[i]) || !s[i])
			continue;
		char e[5];
		ob_put(o, s + run, i - run);
		snprintf(e, sizeof e, "\\%03o", (unsigned char)s[i]);
		ob_put(o, e, 4);
		run = i + 1;
	}
	ob_put(o, s + run, l - run);
}

struct knames {
	struct vfs_kname *t;
	long n;
	char **kp;  /* each t[i].kp escaped as the file escapes names */
	const char *esc;
	const char *del; /* " (deleted)" as the file escapes it */
};

static void knames_free(struct knames *k)
{
	for (long i = 0; k->kp && i < k->n; i++)
		free(k->kp[i]);
	free(k->kp);
	free(k->t);
}

static int knames_get(struct vfs *v, const char *esc, struct knames *k)
{
	memset(k, 0, sizeof *k);
	k->esc = esc;
	k->del = strchr(esc, ' ') ? "\\040(deleted)" : " (deleted)";
	k->n = vfs_kernel_names(v, &k->t);
	if (k->n < 0)
		return (int)k->n;
	k->kp = calloc((size_t)k->n + 1, sizeof *k->kp);
	if (!k->kp)
		return -ENOMEM;
	for (long i = 0; i < k->n; i++) {
		struct obuf o = { 0 };
		ob_put(&o, "", 0);
		ob_put_esc(&o, k->t[i].kp, k->t[i].kl, esc);
		if (o.err)
			return o.err;
		k->kp[i] = o.p;
		k->t[i].kl = o.n;
	}
	return 0;
}

/* Names the kernel gives files of its internal mounts, the same natively
 * (memfds, SysV and shared anonymous memory, aio rings, dma-bufs) */
static int kernel_internal_name(const char *name, size_t nl)
{
	static const char *const pre[] = { "/memfd:", "/SYSV", "/dev/zero",
					   "/anon_hugepage", "/[aio]", "/dmabuf:" };
	for (size_t i = 0; i < ARRAY_SIZE(pre); i++)
		if (nl >= strlen(pre[i]) && !memcmp(name, pre[i], strlen(pre[i])))
			return 1;
	return 0;
}

/* Put the guest's name for the kernel's name (nl bytes, escaped) of a file
 * on device dev: 1, or 0 when no mount of the guest's holds it. */
static int kname_put(struct obuf *o, const struct knames *k, const char *name, size_t nl, dev_t dev)
{
	long best = -1;

	for (long i = 0; i < k->n; i++) {
		const struct vfs_kname *e = &k->t[i];
		size_t kl = e->kl;
		if ((e->dev && e->dev != dev) || nl < kl || memcmp(name, k->kp[i], kl))
			continue;
		const char *r = name + kl;
		size_t rl = nl - kl;
		if (rl && *r != '/' && !(rl == strlen(k->del) && !memcmp(r, k->del, rl)))
			continue;
		if (best < 0 || kl > k->t[best].kl || (kl == k->t[best].kl && e->dev && !k->t[best].dev))
			best = i;
	}
	if (best < 0)
		return 0;
	const struct vfs_kname *e = &k->t[best];
	const char *r = name + e->kl;
	size_t rl = nl - e->kl;
	ob_put_esc(o, e->gp, e->gl, k->esc);
	if (!e->gl && (!rl || *r != '/'))
		ob_put(o, "/", 1);
	ob_put(o, r, rl);
	return 1;
}

static int hexnum(const char **p, unsigned long long *v)
{
	const char *s = *p;
	*v = 0;
	while ((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f'))
		*v = *v * 16 + (unsigned)(*s <= '9' ? *s - '0' : *s - 'a' + 10), s++;
	if (s == *p)
		return 0;
	*p = s;
	return 1;
}

/* A maps (smaps) header line "start-end perms offset MM:mm inode   name":
 * its start, device, where the field after the inode begins (*tail, past
 * its one space) and the name (up to eol; empty: none). 0 if p is no such
 * line (an smaps field line). */
static int maps_header(const char *p, const char *eol, unsigned long long *start, dev_t *dev,
		       const char **perms_end, const char **tail, const char **name)
{
	unsigned long long v, maj, min;
	const char *s = p;

	if (!hexnum(&s, start) || *s++ != '-' || !hexnum(&s, &v) || *s++ != ' ')
		return 0;
	s += strnlen(s, 4) == 4 ? 4 : 0;
	*perms_end = s;
	if (*s++ != ' ' || !hexnum(&s, &v) || *s++ != ' ' || !hexnum(&s, &maj) || *s++ != ':' ||
	    !hexnum(&s, &min) || *s++ != ' ')
		return 0;
	while (*s >= '0' && *s <= '9')
		s++;
	if (s >= eol || *s != ' ')
		return 0;
	*tail = ++s;
	while (s < eol && *s == ' ')
		s++;
	*name = s;
	*dev = makedev((unsigned)maj, (unsigned)min);
	return 1;
}

/* maps or smaps text with every file named as the guest names it; the
 * loader's mapping shown anonymous (a process exec'd natively has none);
 * a name no guest mount holds (none of the sandbox's: its namespaces hold
 * only exports) printed with no name, never the kernel's */
static void maps_rewrite(struct obuf *o, const char *text, const struct knames *k)
{
	for (const char *p = text; *p;) {
		const char *eol = strchrnul(p, '\n'), *pe, *tail, *name;
		unsigned long long start;
		dev_t dev;
		size_t nl = (size_t)(eol - p);

		if (!maps_header(p, eol, &start, &dev, &pe, &tail, &name) || name == eol || *name != '/') {
			ob_put(o, p, nl);
		} else {
			size_t mark = o->n;
			ob_put(o, p, (size_t)(name - p));
			if (!kname_put(o, k, name, (size_t)(eol - name), dev)) {
				o->n = mark;
				if (kernel_internal_name(name, (size_t)(eol - name)))
					ob_put(o, p, nl);
				else if ((size_t)(eol - name) == strlen(MOAT_LOADER_PATH) &&
					 !memcmp(name, MOAT_LOADER_PATH, strlen(MOAT_LOADER_PATH))) {
					ob_put(o, p, (size_t)(pe - p));
					ob_put(o, " 00000000 00:00 0 ", 18);
				} else {
					ob_put(o, p, (size_t)(tail - p));
				}
			}
		}
		if (*eol)
			ob_put(o, "\n", 1);
		p = *eol ? eol + 1 : eol;
	}
}

struct mapdev {
	unsigned long long start;
	dev_t dev;
};

static int mapdev_cmp(const void *a, const void *b)
{
	unsigned long long x = ((const struct mapdev *)a)->start, y = ((const struct mapdev *)b)->start;
	return x < y ? -1 : x > y;
}

/* numa_maps ("start policy file=<name> ..."): its names have no device
 * beside them; the one of maps' line at the same start is taken */
static int numa_rewrite(struct obuf *o, const char *text, const char *maps, const struct knames *k)
{
	size_t nd = 0, cap = 0;
	struct mapdev *d = NULL;

	for (const char *p = maps; *p;) {
		const char *eol = strchrnul(p, '\n'), *pe, *tail, *name;
		struct mapdev m;
		if (maps_header(p, eol, &m.start, &m.dev, &pe, &tail, &name)) {
			if (nd == cap) {
				struct mapdev *nw = realloc(d, (cap = cap ? cap * 2 : 64) * sizeof *d);
				if (!nw) {
					free(d);
					return -ENOMEM;
				}
				d = nw;
			}
			d[nd++] = m;
		}
		p = *eol ? eol + 1 : eol;
	}
	for (const char *p = text; *p;) {
		const char *eol = strchrnul(p, '\n'), *s = p, *f, *fe;
		unsigned long long start;
		f = memmem(p, (size_t)(eol - p), " file=/", 7);
		if (!f || !hexnum(&s, &start) || *s != ' ') {
			ob_put(o, p, (size_t)(eol - p));
		} else {
			f += 6;
			fe = memchr(f, ' ', (size_t)(eol - f));
			fe = fe ? fe : eol;
			struct mapdev key = { .start = start }, *hit =
				nd ? bsearch(&key, d, nd, sizeof *d, mapdev_cmp) : NULL;
			ob_put(o, p, (size_t)(f - p));
			if (hit && kname_put(o, k, f, (size_t)(fe - f), hit->dev))
				;
			else if (kernel_internal_name(f, (size_t)(fe - f)))
				ob_put(o, f, (size_t)(fe - f));
			else if (o->n >= 6)
				o->n -= 6; /* the loader, a name of no guest mount: no "file=" */
			ob_put(o, fe, (size_t)(eol - fe));
		}
		if (*eol)
			ob_put(o, "\n", 1);
		p = *eol ? eol + 1 : eol;
	}
	free(d);
	return 0;
}

/* How many times each page is mapped, host-wide (red team 63): the
 * kernel's smaps and smaps_rollup divide a page's size by its map count
 * (Pss*) and call it shared past one (Shared_*), numa_maps prints the
 * highest count (mapmax=); a file the host's processes map too (the libc of
 * the default view is the host's, its page cache one) then tells how many of
 * them map it, live: the host's process count and activity, which loadavg
 * and /proc/stat no longer show. Shown as if every page were mapped by this
 * process alone: Pss = Rss, Pss_Dirty = the dirty pages, Pss_Anon =
 * Anonymous, Pss_File = the rest but Pss_Shmem (kept: shmem is the
 * sandbox's own), Shared_* 0 and the Private_* their sums; mapmax= dropped
 * (Linux prints it only past 1). One block of "Key:  N kB" lines at a time
 * (a mapping's, or the rollup's). */
static int smaps_key(const char *p, const char *eol, const char *key)
{
	size_t kl = strlen(key);
	return (size_t)(eol - p) > kl && !memcmp(p, key, kl) && p[kl] == ':';
}

static unsigned long long smaps_val(const char *p, const char *eol)
{
	const char *c = memchr(p, ':', (size_t)(eol - p));
	return c ? strtoull(c + 1, NULL, 10) : 0;
}

static void smaps_put(struct obuf *o, const char *p, const char *eol, unsigned long long v)
{
	/* the kernel's "%-16s%8lu kB": the padded key kept */
	const char *c = memchr(p, ':', (size_t)(eol - p));
	size_t kl = c ? (size_t)(c - p) + 1 : 0;
	char num[48];

	while (kl < 16 && p + kl < eol && p[kl] == ' ')
		kl++;
	int k = snprintf(num, sizeof num, "%8llu kB", v);
	ob_put(o, p, kl);
	ob_put(o, num, (size_t)k);
}

static void smaps_own_view(struct obuf *o, const char *text)
{
	for (const char *p = text; *p;) {
		/* one block: the field lines up to the next header */
		const char *b = p, *e = p;
		unsigned long long rss = 0, sc = 0, sd = 0, pc = 0, pd = 0, anon = 0, shmem = 0;
		int fields = 0;
		while (*e) {
			const char *eol = strchrnul(e, '\n');
			int field = e[0] >= 'A' && e[0] <= 'Z' && memchr(e, ':', (size_t)(eol - e));
			if (!field && fields)
				break;
			if (field) {
				fields++;
				if (smaps_key(e, eol, "Rss"))
					rss = smaps_val(e, eol);
				else if (smaps_key(e, eol, "Shared_Clean"))
					sc = smaps_val(e, eol);
				else if (smaps_key(e, eol, "Shared_Dirty"))
					sd = smaps_val(e, eol);
				else if (smaps_key(e, eol, "Private_Clean"))
					pc = smaps_val(e, eol);
				else if (smaps_key(e, eol, "Private_Dirty"))
					pd = smaps_val(e, eol);
				else if (smaps_key(e, eol, "Anonymous"))
					anon = smaps_val(e, eol);
				else if (smaps_key(e, eol, "Pss_Shmem"))
					shmem = smaps_val(e, eol);
			}
			e = *eol ? eol + 1 : eol;
		}
		for (const char *q = b; q < e;) {
			const char *eol = strchrnul(q, '\n');
			if (smaps_key(q, eol, "Pss"))
				smaps_put(o, q, eol, rss);
			else if (smaps_key(q, eol, "Pss_Dirty"))
				smaps_put(o, q, eol, sd + pd);
			else if (smaps_key(q, eol, "Pss_Anon"))
				smaps_put(o, q, eol, anon);
			else if (smaps_key(q, eol, "Pss_File"))
				smaps_put(o, q, eol, rss > anon + shmem ? rss - anon - shmem : 0);
			else if (smaps_key(q, eol, "Shared_Clean") || smaps_key(q, eol, "Shared_Dirty"))
				smaps_put(o, q, eol, 0);
			else if (smaps_key(q, eol, "Private_Clean"))
				smaps_put(o, q, eol, sc + pc);
			else if (smaps_key(q, eol, "Private_Dirty"))
				smaps_put(o, q, eol, sd + pd);
			else
				ob_put(o, q, (size_t)(eol - q));
			if (*eol)
				ob_put(o, "\n", 1);
			q = *eol ? eol + 1 : eol;
		}
		p = e;
	}
}

/* numa_maps' " mapmax=N" taken out of a line (smaps_own_view) */
static void numa_own_view(char *text)
{
	char *m;
	while ((m = strstr(text, " mapmax=")) != NULL) {
		char *end = m + 8;
		while (*end >= '0' && *end <= '9')
			end++;
		memmove(m, end, strlen(end) + 1);
	}
}

/* guard: the target whose exec guard the caller entered (pguard_begin),
 * ended here once the files are open (bound to the mm checked), or NULL */
static int open_maps(struct vfs *v, struct task *self, struct pnode *n, struct task *guard, int *out)
{
	int numa = ends_with(n->gpath, "/numa_maps");
	int smaps = ends_with(n->gpath, "/smaps"), rollup = ends_with(n->gpath, "/smaps_rollup");
	cleanup_free char *text = NULL;
	cleanup_free char *maps = NULL;
	struct knames k;
	struct obuf o = { 0 };
	char mp[sizeof n->base + 8];
	long r;
	cleanup_fd int fd = guest_open(self->sb, n->gpath, O_RDONLY);
	cleanup_fd int mfd = -1;
	if (numa && fd >= 0) {
		snprintf(mp, sizeof mp, "%s/maps", n->base);
		mfd = guest_open(self->sb, mp, O_RDONLY);
	}
	if (guard)
		task_io_end(guard);

	if (fd < 0)
		return fd;
	r = slurp_max(fd, &text, PROC_MAX_MAPS);
	if (r < 0)
		return (int)r;
	if (numa && (mfd < 0 || slurp_max(mfd, &maps, PROC_MAX_MAPS) < 0))
		maps = NULL;
	if (numa)
		numa_own_view(text);
	if (rollup) {
		/* no names: the map counts only */
		ob_put(&o, "", 0);
		smaps_own_view(&o, text);
		r = o.err;
		if (r >= 0)
			r = memfd_with(n->gpath, o.p, o.n, out);
		free(o.p);
		return (int)r;
	}
	r = knames_get(v, numa ? "\n\t= " : "\n", &k);
	if (r >= 0) {
		ob_put(&o, "", 0);
		if (numa)
			r = numa_rewrite(&o, text, maps ? maps : "", &k);
		else
			maps_rewrite(&o, text, &k);
	}
	knames_free(&k);
	if (r >= 0)
		r = o.err;
	if (r >= 0 && smaps) {
		struct obuf v2 = { 0 };
		ob_put(&v2, "", 0);
		if (!o.err) /* (o.p is NUL-terminated: ob_put) */
			smaps_own_view(&v2, o.p);
		r = o.err ? o.err : v2.err;
		free(o.p);
		o = v2;
	}
	if (r >= 0)
		r = memfd_with(n->gpath, o.p, o.n, out);
	free(o.p);
	return (int)r;
}

/* <pid>/limits: "Max core file size" is the process's virtual RLIMIT_CORE
 * (the real one is 1 byte: "Core dumps never happen") */
static int open_limits(struct task *self, struct pnode *n, int *out)
{
	cleanup_free char *text = NULL;
	struct obuf o = { 0 };
	uint64_t lim[2];
	long r = guest_slurp(self->sb, n->gpath, &text);

	if (r < 0)
		return (int)r;
	pthread_mutex_lock(&n->task->lock);
	lim[0] = n->task->vcore_cur;
	lim[1] = n->task->vcore_max;
	pthread_mutex_unlock(&n->task->lock);
	ob_put(&o, "", 0);
	for (const char *p = text; *p;) {
		const char *eol = strchrnul(p, '\n');
		if (!strncmp(p, "Max core file size ", 19)) {
			char line[128], v[2][24];
			for (int i = 0; i < 2; i++)
				if (lim[i] == (uint64_t)RLIM_INFINITY)
					snprintf(v[i], sizeof v[i], "unlimited");
				else
					snprintf(v[i], sizeof v[i], "%llu", (unsigned long long)lim[i]);
			int l = snprintf(line, sizeof line, "%-25s %-20s %-20s %-10s", "Max core file size",
					 v[0], v[1], "bytes");
			ob_put(&o, line, (size_t)l);
		} else {
			ob_put(&o, p, (size_t)(eol - p));
		}
		if (*eol)
			ob_put(&o, "\n", 1);
		p = *eol ? eol + 1 : eol;
	}
	r = o.err ? o.err : memfd_with(n->gpath, o.p, o.n, out);
	free(o.p);
	return (int)r;
}

int procfs_maps_fd(struct task *t, int guest_fd, char *rel, size_t len)
{
	static const char *const pre[] = { "/memfd:" MEMFD_PREFIX, NULL };
	char gp[64], text[PATH_MAX];
	const char *s;

	if (!t || !t->sb || guest_fd < 0)
		return 1;
	snprintf(gp, sizeof gp, "%d/fd/%d", (int)t->vtgid, guest_fd);
	if (guest_fd_text(t->sb, gp, pre, text, sizeof text) < 0)
		return 1;
	/* "<pid>/maps" or "<pid>/task/<tid>/maps", then " (deleted)" (a
	 * guest's own memfd may have this name too: the query checks the
	 * caller's access again) */
	s = text + strlen("/memfd:" MEMFD_PREFIX);
	size_t l = strlen(s);
	if (l < 10 || strcmp(s + l - 10, " (deleted)"))
		return 1;
	l -= 10;
	if (l < 6 || memcmp(s + l - 5, "/maps", 5) || l >= len)
		return 1;
	for (size_t i = 0; i < l - 5; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || s[i] == '/' || (s[i] >= 'a' && s[i] <= 'z')))
			return 1;
	memcpy(rel, s, l);
	rel[l] = 0;
	return 0;
}

#define PMQ_R 0x01
#define PMQ_W 0x02
#define PMQ_X 0x04
#define PMQ_S 0x08
#define PMQ_NEXT 0x10
#define PMQ_FILE 0x20

int procfs_procmap_query(struct vfs *v, struct task *t, const char *rel, struct procfs_procmap_query *q,
			 char *name, size_t namelen)
{
	struct pnode n;
	int r = pn_walk(t, rel, &n);
	if (r)
		return r;
	if (n.kind != N_GUEST || !n.task || !ends_with(n.gpath, "/maps")) {
		pn_release(&n);
		return -ENOTTY;
	}
	int g = pguard_begin(t, n.task);
	if (g < 0 || !ptrace_read_ok(t, n.task)) {
		pguard_end(n.task, g);
		pn_release(&n);
		return g == -ESRCH ? -ENOENT : g < 0 ? g : -EACCES;
	}
	int fd = -1;
	r = open_maps(v, t, &n, g > 0 ? n.task : NULL, &fd);
	pn_release(&n);
	if (r < 0)
		return r;
	cleanup_free char *text = NULL;
	long len = slurp_max(fd, &text, PROC_MAX_MAPS);
	close(fd);
	if (len < 0)
		return (int)len;
	if (q->query_flags & ~0x3fULL)
		return -EINVAL;
	r = -ENOENT;
	for (const char *p = text; *p;) {
		const char *eol = strchrnul(p, '\n'), *pe, *tail, *nm, *s = p;
		unsigned long long start, end, off, ino;
		dev_t dev;
		p = *eol ? eol + 1 : eol;
		if (!maps_header(s, eol, &start, &dev, &pe, &tail, &nm))
			continue;
		s = strchr(s, '-') + 1;
		hexnum(&s, &end);
		if (end <= q->query_addr)
			continue;
		uint64_t fl = (pe[-4] == 'r' ? PMQ_R : 0) | (pe[-3] == 'w' ? PMQ_W : 0) |
			      (pe[-2] == 'x' ? PMQ_X : 0) | (pe[-1] == 's' ? PMQ_S : 0);
		s = pe + 1;
		hexnum(&s, &off);
		/* the inode: the number before tail's one space */
		const char *ib = tail - 1;
		while (ib > pe && ib[-1] >= '0' && ib[-1] <= '9')
			ib--;
		ino = strtoull(ib, NULL, 10);
		int file = ino || dev;
		if ((q->query_flags & PMQ_FILE) && !file)
			continue;
		if ((q->query_flags & (PMQ_R | PMQ_W | PMQ_X | PMQ_S)) & ~fl)
			continue;
		if (start > q->query_addr && !(q->query_flags & PMQ_NEXT))
			break;
		q->vma_start = start;
		q->vma_end = end;
		q->vma_flags = fl;
		q->vma_page_size = (uint64_t)sysconf(_SC_PAGESIZE);
		q->vma_offset = file ? off : 0;
		q->inode = file ? ino : 0;
		q->dev_major = file ? major(dev) : 0;
		q->dev_minor = file ? minor(dev) : 0;
		/* the name, "\012" back to a newline */
		size_t o = 0;
		for (const char *c = nm; c < eol && o + 1 < namelen; c++) {
			if (!strncmp(c, "\\012", 4) && c + 4 <= eol) {
				name[o++] = '\n';
				c += 3;
			} else {
				name[o++] = *c;
			}
		}
		name[o] = 0;
		r = 0;
		break;
	}
	return r;
}

int procfs_open(struct vfs *v, struct task *t, const char *rel, int flags, int *fd)
{
	struct pnode n;
	int g = 0; /* 1: in the target's exec guard (pguard_begin) */
	int r = pn_walk(t, rel, &n);

	if (r)
		return r;
	if (kind_is_dir(n.kind))
		r = -EISDIR;
	else if (kind_is_link(n.kind))
		r = -ELOOP; /* the VFS follows links; fd/<n>: procfs_open_magic */
	else if (((flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC)) && sysctl_writable(&n)) {
		r = (flags & O_DIRECTORY) ? -ENOTDIR : open_sysctl_write(t->sb, fd);
		goto out;
	} else if (((flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC)) && sysctl_sink(&n)) {
		r = (flags & O_DIRECTORY) ? -ENOTDIR : (*fd = memfd_create("moat-sysctl", MFD_CLOEXEC)) < 0 ? -errno : 0;
		goto out;
	} else if (((flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC)) &&
		 (tree_kind(n.kind) || (n.kind == N_GUEST && !strncmp(n.gpath, "sys/", 4))))
		r = -EROFS;
	else if ((flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC))
		r = -EACCES;
	else if (flags & O_DIRECTORY)
		r = -ENOTDIR;
	if (r)
		goto out;
	if (n.kind == N_GUEST && (n.task || n.init) &&
	    (ends_with(n.gpath, "/maps") || ends_with(n.gpath, "/environ") || ends_with(n.gpath, "/io") ||
	     ends_with(n.gpath, "/smaps") || ends_with(n.gpath, "/smaps_rollup") ||
	     ends_with(n.gpath, "/pagemap") || ends_with(n.gpath, "/numa_maps") ||
	     ends_with(n.gpath, "/personality"))) {
		/* the check and the open it allows in the target's exec
		 * guard (pguard_begin); ended once the file is open */
		g = pguard_begin(t, n.init ? NULL : n.task);
		if (g < 0) {
			r = g == -ESRCH ? -ENOENT : g;
			goto out;
		}
		if (!ptrace_read_ok(t, n.init ? NULL : n.task)) {
			r = -EACCES; /* Linux: mm_access, PTRACE_MODE_READ_FSCREDS */
			goto out;
		}
		if (ends_with(n.gpath, "/pagemap")) {
			/* refused (hyg35): the kernel's entries carry bit 56,
			 * PM_MMAP_EXCLUSIVE, whether any other process of the
			 * host maps a file page; the file is binary and read
			 * live at offsets, so there is no text to rewrite, and
			 * reads of a guest fd are not trapped. EACCES is what
			 * Linux answers a reader without ptrace access. */
			r = -EACCES;
			goto out;
		}
		if (procfs_test_check_delay_ms && g > 0) {
			if (procfs_test_block)
				procfs_test_block();
			usleep((useconds_t)procfs_test_check_delay_ms * 1000);
		}
	}
	switch (n.kind) {
	case N_GUEST:
		if (n.task && n.fdnum >= 0 && strstr(n.gpath, "/fdinfo/")) {
			/* Linux: proc_fdinfo_permission, a ptrace read check */
			g = pguard_begin(t, n.task);
			if (g < 0)
				r = g == -ESRCH ? -ENOENT : g;
			else if (!ptrace_read_ok(t, n.task))
				r = -EACCES;
			else {
				r = open_fdinfo(v, t, &n, g > 0 ? n.task : NULL, fd);
				g = 0; /* (ended there) */
			}
			break;
		}
		if (!strncmp(n.gpath, "sysvipc/", 8)) {
			r = open_sysvipc(t->sb, &n, fd);
			break;
		}
		if (!strncmp(n.gpath, "net/", 4)) {
			r = open_net(t->sb, &n, fd);
			break;
		}
		if (n.task && (ends_with(n.gpath, "/maps") || ends_with(n.gpath, "/smaps") ||
			       ends_with(n.gpath, "/smaps_rollup") || ends_with(n.gpath, "/numa_maps"))) {
			r = open_maps(v, t, &n, g > 0 ? n.task : NULL, fd);
			g = 0; /* (ended there) */
			break;
		}
		if (n.task && ends_with(n.gpath, "/limits")) {
			r = open_limits(t, &n, fd);
			break;
		}
		if (g > 0 && (ends_with(n.gpath, "/io") || ends_with(n.gpath, "/personality"))) {
			/* another process's: the kernel checks these at each
			 * read, as the sentry's uid (one for every guest task,
			 * the host's flag dumpable): a descriptor kept past an
			 * exec of a program the reader may not read would show
			 * the new image's. The text as it is now (Linux's
			 * read after such an exec: EACCES; vmexec) */
			cleanup_free char *text = NULL;
			long len = guest_slurp(t->sb, n.gpath, &text);
			pguard_end(n.task, g);
			g = 0;
			r = len < 0 ? (int)len : memfd_with(n.gpath, text, (size_t)len, fd);
			break;
		}
		r = guest_open(t->sb, n.gpath, O_RDONLY | (flags & O_NONBLOCK));
		if (r >= 0) {
			*fd = r;
			r = 0;
		}
		break;
	case N_STATUS:
		r = open_status(t, &n, fd);
		break;
	case N_MOUNTS:
		r = open_mounts(v, &n, 0, fd);
		break;
	case N_MOUNTINFO:
		r = open_mounts(v, &n, 1, fd);
		break;
	case N_MEMINFO:
	case N_CPUINFO:
	case N_PSTAT:
	case N_UPTIME:
	case N_LOADAVG:
		r = open_limited(t->sb, &n, fd);
		break;
	case N_PIDSTAT:
		r = open_pid_stat(t, &n, fd);
		break;
	default:
		r = open_synth(t, &n, fd);
		break;
	}
out:
	pguard_end(n.task, g);
	pn_release(&n);
	return r;
}

/*
 * Opening fd/<n> of a regular file or a FIFO the VFS cannot name (a memfd, a
 * pipe, a deleted file) is Linux's reopen: may_open on the object with the
 * opener's credentials, then a NEW open file description (its own offset
 * and status flags; a pipe's other end too). dup is the guest's file (the
 * sentry's copy, task_getfd), owner_vpid/owner_fd its guest pid and number.
 * The check is the guest task's (virtual credentials and capabilities: a
 * root guest's CAP_DAC_OVERRIDE opens a mode-0 memfd, uid 1000 does not)
 * against the object's guest-view owner and mode; the reopen goes through
 * the guest procfs, so the kernel checks it as the sentry's uid and the
 * result is identified (dev, ino) as the object checked (the guest may put
 * another file at that number meanwhile). An object the sentry's uid owns
 * whose owner bits deny the sentry (it holds no DAC override: a memfd the
 * guest chmod'ed to 0) is opened by moat-reopen (procfs_set_reopen_helper:
 * a process in the guest's user namespace holding DAC override there, which
 * reaches only the sandbox's own objects); its mode is never touched (the
 * sentry used to lend itself the owner bits for the open: a racing fstat
 * saw them). Without the helper such an object keeps the old rules.
 * Returns 0 and *fd, -errno, or 1: not handled here (the caller shares the
 * guest's description under the old rules: directories, terminals and
 * other devices, anon inodes, a host file the sentry cannot open, a FIFO
 * without a reader opened O_WRONLY, which Linux would block on). A socket
 * is ENXIO (Linux: sockets have no open).
 */
static int (*reopen_helper)(pid_t vpid, int fd, int flags);

void procfs_set_reopen_helper(int (*fn)(pid_t vpid, int fd, int flags))
{
	reopen_helper = fn;
}

/* the guest's own kernel objects: a memfd, an anonymous pipe (fd's, st its fstat) */
static int own_object(struct vfs *v, int fd, const struct stat *st)
{
	struct statfs sfs;
	return vfs_is_memfd(v, st) || (S_ISFIFO(st->st_mode) && fstatfs(fd, &sfs) == 0 && sfs.f_type == PIPEFS_MAGIC);
}

static int reopen_new(struct vfs *v, struct task *t, int dup, int procfd, pid_t owner_vpid, int owner_fd,
		      int flags, int *fd)
{
	struct stat st, rst;
	int acc = flags & O_ACCMODE, mask = 0, own, r, nfd, e;
	char p[48];

	if (fstat(dup, &st) < 0)
		return -errno;
	if (S_ISSOCK(st.st_mode))
		return -ENXIO;
	if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode))
		return 1;
	int fl = fcntl(dup, F_GETFL);
	if (fl < 0 || (fl & O_PATH) || (flags & O_DIRECTORY))
		return 1;
	if (acc != O_WRONLY)
		mask |= MAY_READ;
	if (acc != O_RDONLY || (flags & O_TRUNC))
		mask |= MAY_WRITE;
	struct vfs_node *n = malloc(sizeof *n);
	if (!n)
		return -ENOMEM;
	r = vfs_host_fd_node(v, t, dup, n);
	if (r < 0) {
		free(n);
		return 1;
	}
	own = n->kind == VN_FD && own_object(v, dup, &st);
	r = own ? vfs_permission_obj(t, &n->st, mask) : vfs_permission(t, &n->st, mask);
	/* one of the caller's stdio objects: no more access than the
	 * caller's descriptions of it have (red team 83: `moat run prog
	 * >>FILE`, a write-only stdout, was read whole through
	 * /proc/self/fd/1; rootless any file of the caller's) */
	int ca = n->kind == VN_FD ? vfs_caller_stdio_access(v, &st) : -1;
	/* any other host object the VFS cannot name, on no mount of the
	 * sandbox's exports (a file or named FIFO a host peer passed over an
	 * inherited socket, SCM_RIGHTS): no more than the guest's own
	 * description of it has (stdio39: rootless, a write-only fd of the
	 * caller's 0600 file so passed was read whole); a file of its own
	 * binds or tmpfs unlinked since keeps Linux's rule (the mode) */
	if (n->kind == VN_FD && !own && ca < 0 && !vfs_fd_on_export(v, dup))
		ca = ((fl & O_ACCMODE) != O_WRONLY ? MAY_READ : 0) | ((fl & O_ACCMODE) != O_RDONLY ? MAY_WRITE : 0);
	if (r == 0 && ca >= 0 && (mask & ~ca))
		r = -EACCES;
	free(n);
	if (r < 0)
		return r;
	/* the sentry's confinement lets it open the guest procfs read-only
	 * only (sentry/confine_rules.c; confine.c probes openat_procfd_write):
	 * a write reopen keeps the old rules (the guest's own description,
	 * never more access than its fd has) */
	if (acc != O_RDONLY)
		return 1;
	/* nor O_TRUNC (red team 45: through a gofer file's fd/N it would
	 * empty a host file): a regular file is truncated by the guest's own
	 * description once the reopen is the same file, if that description
	 * may write; else the old rules (EACCES) */
	if ((flags & O_TRUNC) && S_ISREG(st.st_mode) && (fl & O_ACCMODE) == O_RDONLY)
		return 1;
	snprintf(p, sizeof p, "%d/fd/%d", (int)owner_vpid, owner_fd);
	int oflags = (flags & (O_ACCMODE | O_APPEND | O_DIRECT | O_SYNC | O_DSYNC)) | O_LARGEFILE |
		     O_CLOEXEC | O_NONBLOCK | O_NOCTTY;
	nfd = openat(procfd, p, oflags);
	e = errno;
	if (nfd < 0 && e == EACCES && (S_ISREG(st.st_mode) || S_ISFIFO(st.st_mode)) && st.st_uid == geteuid() &&
	    reopen_helper) {
		/* the object is the sandbox uid's, its mode denies the owner
		 * (the guest's own check allowed the open): moat-reopen opens
		 * it with DAC override over the sandbox's own objects, no
		 * mode lent (sentry/reopen.c) */
		nfd = reopen_helper(owner_vpid, owner_fd, oflags);
		e = nfd < 0 ? -nfd : 0;
	}
	if (nfd < 0)
		return (e == EACCES || e == EPERM || e == ENXIO || e == EROFS) ? 1 : -e;
	if (fstat(nfd, &rst) < 0 || rst.st_dev != st.st_dev || rst.st_ino != st.st_ino ||
	    fcntl(nfd, F_SETFL, flags & (O_APPEND | O_NONBLOCK | O_DIRECT)) < 0) {
		close(nfd);
		return 1; /* another file at that number meanwhile */
	}
	if ((flags & O_TRUNC) && S_ISREG(st.st_mode) && ftruncate(dup, 0) < 0) {
		e = errno;
		close(nfd);
		return -e;
	}
	*fd = nfd;
	return 0;
}

int procfs_open_magic(struct vfs *v, struct task *t, const char *rel, int flags, int *fd)
{
	struct pnode n;
	int r = pn_walk(t, rel, &n);
	int dup, fl, want;
	struct stat st;

	if (r)
		return r;
	if (n.kind != N_FD) {
		pn_release(&n);
		return -EINVAL;
	}
	/* Linux: proc_fd_access_allowed, a ptrace read check on the virtual
	 * ids (non-dumpable: never). Before red team 13 only the object's
	 * mode was checked: root made a memfd (mode 0777), dropped to uid
	 * 1000, and another uid-1000 process read it through this link */
	int g = pguard_begin(t, n.task); /* the check and the fetch: one image */
	if (g < 0 || !ptrace_read_ok(t, n.task)) {
		pguard_end(n.task, g);
		pn_release(&n);
		return g == -ESRCH ? -ENOENT : g < 0 ? g : -EACCES;
	}
	dup = task_getfd(n.task, n.fdnum);
	pguard_end(n.task, g);
	pid_t owner_vpid = n.task->vtgid;
	struct sandbox *psb = n.task->sb;
	int owner_fd = n.fdnum;
	pn_release(&n);
	if (dup < 0)
		return -ENOENT;
	if (!(flags & O_PATH) && v && psb && psb->guest_procfd >= 0 && owner_vpid > 0) {
		r = reopen_new(v, t, dup, psb->guest_procfd, owner_vpid, owner_fd, flags, fd);
		if (r <= 0) {
			close(dup);
			return r;
		}
		r = 0;
	}
	/* A read-only reopen of a regular file held read-write (a memfd, an
	 * unlinked file: what the VFS cannot name) is a new open file
	 * description with read access only, as on Linux: programs hand such
	 * an fd to a less trusted process. Through the guest procfs, so the
	 * kernel checks the reopen. */
	if (!(flags & O_PATH) && (flags & O_ACCMODE) == O_RDONLY && !(flags & O_TRUNC) &&
	    psb && psb->guest_procfd >= 0 && owner_vpid > 0 &&
	    fstat(dup, &st) == 0 && S_ISREG(st.st_mode) &&
	    (fl = fcntl(dup, F_GETFL)) >= 0 && (fl & O_ACCMODE) == O_RDWR) {
		char p[48];
		snprintf(p, sizeof p, "%d/fd/%d", (int)owner_vpid, owner_fd);
		int ro = openat(psb->guest_procfd, p, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
		struct stat rst;
		if (ro >= 0 && fstat(ro, &rst) == 0 && rst.st_dev == st.st_dev && rst.st_ino == st.st_ino) {
			fcntl(ro, F_SETFL, flags & O_NONBLOCK);
			close(dup);
			*fd = ro;
			return 0;
		}
		if (ro >= 0)
			close(ro);
	}
	/* The dup shares the guest's open file description (offset, flags):
	 * never hand out more access than the guest already has; and for
	 * the guest's own kernel objects (a memfd, a pipe) never more than
	 * the open asked for either: an O_WRONLY reopen of a read-write
	 * memfd gave the read-write description (red team 22: a "write-only"
	 * fd, handed to a less trusted process, that reads). Linux makes a
	 * new write-only description; the sentry cannot (it opens the guest
	 * procfs read-only): EACCES. A file keeps the old rule (a caller's
	 * read-write stdout, Python's TemporaryFile, opened as "/dev/stdout"
	 * O_WRONLY; ARCHITECTURE.md known gaps), as do terminals. */
	if (!(flags & O_PATH)) {
		fl = fcntl(dup, F_GETFL);
		want = flags & O_ACCMODE;
		int own = fstat(dup, &st) == 0 && own_object(v, dup, &st);
		if (fl < 0) {
			r = -errno;
		} else if ((fl & O_PATH) ||
			   (own && (fl & O_ACCMODE) != want) ||
			   (want == O_RDONLY && (fl & O_ACCMODE) == O_WRONLY) ||
			   (want == O_WRONLY && (fl & O_ACCMODE) == O_RDONLY) ||
			   (want == O_RDWR && (fl & O_ACCMODE) != O_RDWR) ||
			   ((flags & O_TRUNC) && (fl & O_ACCMODE) == O_RDONLY)) {
			r = -EACCES;
		}
	}
	if (!r && (flags & O_DIRECTORY)) {
		if (fstat(dup, &st) < 0)
			r = -errno;
		else if (!S_ISDIR(st.st_mode))
			r = -ENOTDIR;
	}
	/* O_TRUNC on a file held for writing (a memfd reopened by its /proc
	 * name: LTP memfd_create01) truncates it, as the open would */
	if (!r && !(flags & O_PATH) && (flags & O_TRUNC) && fstat(dup, &st) == 0 && S_ISREG(st.st_mode) &&
	    ftruncate(dup, 0) < 0)
		r = -errno;
	if (r) {
		close(dup);
		return r;
	}
	*fd = dup;
	return 0;
}

static int add_table(struct dlist *d, const struct pent *tab, size_t n, const char *parent,
		     int skip_task)
{
	char canon[400];

	for (size_t i = 0; i < n; i++) {
		if (skip_task && (tab[i].kind == N_TASKDIR || tab[i].kind == N_MAPFILESDIR))
			continue;
		if (join(canon, sizeof canon, parent, tab[i].name))
			return -ENAMETOOLONG;
		if (dl_add(d, tab[i].name, kind_dtype(tab[i].kind), canon))
			return -ENOMEM;
	}
	return 0;
}

struct pids_arg {
	pid_t *v;
	size_t n, cap;
	int err;
};

static int collect_leader(struct task *t, void *arg)
{
	struct pids_arg *a = arg;

	if (t->exited || t->vtgid <= 0)
		return 0;
	if (grow_array(&a->v, &a->cap, a->n, sizeof *a->v, 64)) {
		a->err = -ENOMEM;
		return 1;
	}
	a->v[a->n++] = t->vtgid;
	return 0;
}

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

/* Where the processes of /proc start (Linux: FIRST_PROCESS_ENTRY + 2) */
#define PROC_TGID_POS 258

long procfs_readdir(struct vfs *v, struct task *t, const char *rel, struct procfs_dirent **out)
{
	struct pnode n;
	struct dlist d = { 0 };
	int r = pn_walk(t, rel, &n);

	if (r)
		return r;
	switch (n.kind) {
	case N_ROOT: {
		struct pids_arg a = { 0 };

		r = add_table(&d, root_ents, ARRAY_SIZE(root_ents), "", 0);
		if (r)
			break;
		task_for_each_leader(t->sb, collect_leader, &a);
		r = a.err;
		if (!r) {
			/* the guest's init (moat-init) is listed too */
			struct task *it = task_get_vpid(t->sb, 1);

			if (it)
				task_put(it);
			else
				collect_leader(&(struct task){ .vtgid = 1 }, &a);
			r = a.err;
		}
		if (a.n)
			qsort(a.v, a.n, sizeof *a.v, cmp_pid);
		for (size_t i = 0; !r && i < a.n; i++) {
			char name[16];

			if (i && a.v[i] == a.v[i - 1])
				continue;
			snprintf(name, sizeof name, "%d", (int)a.v[i]);
			r = dl_add(&d, name, DT_DIR, name);
			if (!r)  /* Linux's TGID_OFFSET: past the named entries */
				d.v[d.n - 1].pos = PROC_TGID_POS + (uint64_t)a.v[i];
		}
		free(a.v);
		break;
	}
	case N_TDIR: {
		size_t pl = strlen(n.gpath);

		for (size_t i = 0; !r && i < ARRAY_SIZE(tree); i++) {
			const char *tp = tree[i].path;

			if (!strncmp(tp, n.gpath, pl) && tp[pl] == '/' && !strchr(tp + pl + 1, '/'))
				r = dl_add(&d, tp + pl + 1, kind_dtype(tree[i].kind), tp);
		}
		break;
	}
	case N_NSDIR: {
		char canon[sizeof n.gpath + 32];

		for (size_t i = 0; !r && i < ARRAY_SIZE(ns_ents); i++) {
			snprintf(canon, sizeof canon, "%s/%s", n.gpath, ns_ents[i].name);
			r = dl_add(&d, ns_ents[i].name, DT_LNK, canon);
		}
		break;
	}
	case N_PID:
	case N_TID:
		if (n.init) {
			char canon[400];

			for (size_t i = 0; !r && i < ARRAY_SIZE(pid_ents); i++) {
				if (!init_has(&pid_ents[i]) || (n.kind == N_TID && pid_ents[i].kind == N_TASKDIR))
					continue;
				if (join(canon, sizeof canon, n.gpath, pid_ents[i].name))
					r = -ENAMETOOLONG;
				else
					r = dl_add(&d, pid_ents[i].name, kind_dtype(pid_ents[i].kind), canon);
			}
			break;
		}
		if (n.zombie) {
			static const char *const zn[] = { "cmdline", "comm", "stat", "status" };
			char canon[400];
			for (size_t i = 0; !r && i < ARRAY_SIZE(zn); i++)
				r = join(canon, sizeof canon, n.gpath, zn[i]) ? -ENAMETOOLONG :
				    dl_add(&d, zn[i], DT_REG, canon);
			break;
		}
		r = add_table(&d, pid_ents, ARRAY_SIZE(pid_ents), n.gpath, n.kind == N_TID);
		break;
	case N_FDDIR:
		r = guest_list_numeric(t->sb, n.gpath, n.gpath, DT_LNK, &d);
		break;
	case N_MAPFILESDIR:
		/* no magic link to a mapped file: Linux gives them to
		 * CAP_SYS_ADMIN only, which no guest task holds */
		break;
	case N_FDINFODIR:
		r = guest_list_numeric(t->sb, n.gpath, n.gpath, DT_REG, &d);
		break;
	case N_TASKDIR:
		r = guest_list_numeric(t->sb, n.gpath, n.gpath, DT_DIR, &d);
		break;
	default:
		r = -ENOTDIR;
		break;
	}
	pn_release(&n);
	if (r) {
		free(d.v);
		return r;
	}
	*out = d.v;
	return (long)d.n;
}
