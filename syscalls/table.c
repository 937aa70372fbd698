/* syscalls/table.c - sc_table[], built from syscall_table.def, and the
 * compatibility listing (`moat syscalls`).
 *
 * The .def is included twice: first for the ARGDENY/ARGALLOW rule arrays
 * (FAST rows point at them), then for the rows themselves, as designated initializers
 * indexed by number. A number that appears twice is an -Woverride-init error;
 * check_table.sh compares the rows with <asm/unistd.h> before this file is
 * compiled.
 */
#include <errno.h>
#include <linux/fs.h>
#include <linux/netlink.h>
#include <sched.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/personality.h>
#include <sys/mman.h>
#include <linux/memfd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include "syscalls/decode.h"
#include "syscalls/handlers.h"
#include "syscalls/table.h"
#include "syscalls/table_def.h"

/* pass 1: argument rule arrays */
#define SYSCALL(...)
#define ARGDENY(r, ...) SC_ARGDENY_ARRAY(r, __VA_ARGS__)
#define ARGALLOW(r, ...) SC_ARGALLOW_ARRAY(r, __VA_ARGS__)
#define ARGTRAP(r, ...) SC_ARGDENY_ARRAY(r, __VA_ARGS__)
#include "syscalls/syscall_table.def"

/* pass 2: the rows */
const struct sysent sc_table[SC_NR_MAX] = {
#define SYSCALL(nr, name, args, cls, h, st, note) \
	SC_ROW(nr, name, args, cls, h, st, note),
#include "syscalls/syscall_table.def"
};

const struct sysent *sc_lookup(long nr)
{
	if (nr < 0 || nr >= SC_NR_MAX || !sc_table[nr].name)
		return NULL;
	return &sc_table[nr];
}

const struct sysent *sc_lookup_name(const char *name)
{
	if (!name)
		return NULL;
	for (int i = 0; i < SC_NR_MAX; i++)
		if (sc_table[i].name && !strcmp(sc_table[i].name, name))
			return &sc_table[i];
	return NULL;
}

/* Rows of calls that do the same work through different entry points: a
 * --deny of any member denies its whole row (and every row it is in), so a
 * program cannot step around `--deny openat` with open or openat2, or around
 * `--deny kill` with tgkill (red-team round 5). Not every way to reach an
 * effect: `--deny write` leaves sendfile and splice, `--deny connect`
 * leaves sendto with MSG_FASTOPEN (the egress policy still holds there). */
static const char *const deny_rows[][8] = {
	{ "open", "openat", "openat2", "creat", "open_by_handle_at" },
	{ "execve", "execveat" },
	{ "kill", "tkill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo", "pidfd_send_signal" },
	{ "fork", "vfork", "clone", "clone3" },
	{ "wait4", "waitid" },
	{ "unlink", "unlinkat" },
	{ "rmdir", "unlinkat" },
	{ "rename", "renameat", "renameat2" },
	{ "link", "linkat" },
	{ "symlink", "symlinkat" },
	{ "readlink", "readlinkat" },
	{ "mkdir", "mkdirat" },
	{ "mknod", "mknodat" },
	{ "chmod", "fchmod", "fchmodat", "fchmodat2" },
	{ "chown", "fchown", "lchown", "fchownat" },
	{ "access", "faccessat", "faccessat2" },
	{ "stat", "lstat", "fstat", "newfstatat", "statx" },
	{ "utime", "utimes", "futimesat", "utimensat" },
	{ "truncate", "ftruncate" },
	{ "chdir", "fchdir" },
	{ "getdents", "getdents64" },
	{ "setxattr", "lsetxattr", "fsetxattr", "setxattrat" },
	{ "getxattr", "lgetxattr", "fgetxattr", "getxattrat" },
	{ "listxattr", "llistxattr", "flistxattr", "listxattrat" },
	{ "removexattr", "lremovexattr", "fremovexattr", "removexattrat" },
	{ "read", "readv", "pread64", "preadv", "preadv2" },
	{ "write", "writev", "pwrite64", "pwritev", "pwritev2" },
	{ "sendto", "sendmsg", "sendmmsg" },
	{ "recvfrom", "recvmsg", "recvmmsg" },
	{ "accept", "accept4" },
	{ "dup", "dup2", "dup3" },
	{ "pipe", "pipe2" },
	{ "poll", "ppoll" },
	{ "select", "pselect6" },
	{ "epoll_create", "epoll_create1" },
	{ "epoll_wait", "epoll_pwait", "epoll_pwait2" },
	{ "eventfd", "eventfd2" },
	{ "signalfd", "signalfd4" },
	{ "inotify_init", "inotify_init1" },
	{ "setuid", "setreuid", "setresuid" },
	{ "setgid", "setregid", "setresgid" },
};

int sc_deny_family(const char *name, unsigned char *deny)
{
	const struct sysent *e = sc_lookup_name(name);
	int n = 0;

	if (!e)
		return -1;
	if (!deny[e->nr])
		n++;
	deny[e->nr] = 1;
	for (size_t r = 0; r < sizeof deny_rows / sizeof deny_rows[0]; r++) {
		int in = 0;
		for (int k = 0; k < 8 && deny_rows[r][k]; k++)
			if (!strcmp(deny_rows[r][k], e->name))
				in = 1;
		for (int k = 0; in && k < 8 && deny_rows[r][k]; k++) {
			const struct sysent *m = sc_lookup_name(deny_rows[r][k]);
			if (!m)
				return -1; /* a row naming no call (tests/unit: deny_family) */
			if (!deny[m->nr]) {
				deny[m->nr] = 1;
				n++;
			}
		}
	}
	return n;
}

/* ---- The TOCTOU rule (ARCHITECTURE.md "Decided once: what the kernel reads
 * after the sentry") ----
 * The sentry never lets the kernel read guest memory after deciding on it:
 * another thread of the guest (or a process sharing the memory: CLONE_VM, a
 * MAP_SHARED page, a memfd mapped twice, a sibling's process_vm_writev) may
 * change it between the check and the kernel's own read. A trapped call the
 * kernel runs after the sentry's decision is one of
 *
 *  - a user notification answered CONTINUE (c->cont): only the rows below,
 *    each decided on registers (a pid, a signal, an id, a command); the
 *    pointers they carry are the kernel's to read, never read by the
 *    sentry first. The pipeline enforces both halves (sc_cont_allowed):
 *    a row not listed, or a call that read the caller's memory (copy_in,
 *    sc_read_guest: c->mem_read), is refused ENOSYS, not let run;
 *  - a ptrace stop (class EXEC) resumed with the original call or a
 *    rewritten one: the rows of sc_toctou_exceptions, each with why the
 *    kernel's second read cannot undo the decision;
 *  - a seccomp filter row (FAST_EXCEPT, FAST_ONLY, FAST_TRAP, EXEC_UNLESS):
 *    the filter sees registers only, so nothing to re-read.
 *
 * tests/unit/test_syscalls_table.c: a row that may be resumed (a CONTINUE row
 * or class EXEC) with an argument the pipeline copies in for the policy
 * (PATH, STR, OPEN_HOW, SOCKADDR, ARGV) fails unless it is an exception. */
static const struct sc_cont sc_cont_rows[] = {
	{ __NR_ioctl, 0, "the fd and the request (the filter's rules), never its argument: a termios set, "
			 "FIGETBSZ/FIOQSIZE/FS_IOC_GETFLAGS, TIOCSCTTY on a pty of the sandbox (the caller "
			 "its fd table's one user, seen before the pin: no dup2 can move the number), "
			 "a maps-less PROCMAP_QUERY, a per-socket SIOC*" },
	{ __NR_fcntl, 0, "F_NOTIFY (fd, command, mask; the caller its fd table's one user, as TIOCSCTTY), "
			 "F_SETOWN (a pid) and any command but F_SETFL the O_ASYNC rule caught (its third "
			 "argument): registers" },
	{ __NR_getsockopt, 0, "another level's option 17, 59 or 77 (SO_PEER* at SOL_SOCKET are the sentry's): "
			      "the kernel reads optlen itself" },
	{ __NR_setsockopt, 0, "the options the allow list names, or no socket of the host's (registers)" },
	{ __NR_shmat, 0, "the id and SHM_RDONLY/SHM_EXEC: registers" },
	{ __NR_shmctl, 0, "IPC_INFO/SHM_INFO, SHM_LOCK/UNLOCK: the id and command" },
	{ __NR_msgsnd, 0, "the id: the message is the kernel's to read" },
	{ __NR_msgrcv, 0, "the id" },
	{ __NR_msgctl, 0, "IPC_INFO/MSG_INFO" },
	{ __NR_semctl, 0, "the id and command (GETVAL ... SETALL: the array is the kernel's)" },
	{ __NR_semop, 0, "the id, when the caller may both read and alter: whatever the operations" },
	{ __NR_semtimedop, 0, "as semop" },
	{ __NR_sched_setscheduler, 0, "a normal class (policy, a register) on a task the owner check passes" },
	{ __NR_sched_setparam, 0, "a task with no virtual class: its normal class takes priority 0" },
	{ __NR_sched_setattr, 0, "the kernel's EINVAL (NULL attr, pid < 0, flags), the guest's init: "
				 "registers; an attr read is made by the sentry from its copy" },
	{ __NR_sched_getscheduler, 0, "no virtual class: the kernel answers" },
	{ __NR_sched_getparam, 0, "no virtual class (an output)" },
	{ __NR_sched_getattr, 0, "no virtual class (an output)" },
	{ __NR_sched_rr_get_interval, 0, "no virtual class (an output; sysfuzz found it missing here)" },
	{ __NR_seccomp, 1, "SET_MODE_FILTER on the virtual no_new_privs/CAP_SYS_ADMIN and a program read "
			   "once for a RET_TRACE (refused): a swap after the read weakens only the filter "
			   "being installed, which the swapping thread is not yet under (rt88)" },
	{ __NR_prctl, 1, "PR_SET_DUMPABLE, PR_SCHED_CORE after its owner check: registers; PR_SET_SECCOMP "
			 "as seccomp's SET_MODE_FILTER (its program read once)" },
	{ __NR_kill, 0, "pid and signal" },
	{ __NR_tkill, 0, "tid and signal" },
	{ __NR_tgkill, 0, "tgid, tid and signal" },
	{ __NR_rt_sigqueueinfo, 0, "pid and signal; the siginfo is the kernel's (its si_code rule)" },
	{ __NR_rt_tgsigqueueinfo, 0, "as rt_sigqueueinfo" },
	{ __NR_setpriority, 0, "which, who, prio" },
	{ __NR_ioprio_set, 0, "which, who, ioprio" },
	{ __NR_getrlimit, 0, "a resource other than RLIMIT_CORE (an output)" },
	{ __NR_setrlimit, 0, "a resource other than RLIMIT_CORE: the caller's own limit" },
	{ __NR_prlimit64, 0, "pid and resource (the owner check, reuse harmless): the new limit is the "
			     "kernel's to read and check" },
	{ __NR_process_vm_readv, 0, "the caller's own process (pid)" },
	{ __NR_process_vm_writev, 0, "the caller's own process (pid)" },
	{ __NR_get_robust_list, 0, "pid (an output)" },
	{ __NR_kcmp, 0, "pids, type, the fds (registers)" },
	{ __NR_sched_setaffinity, 0, "pid (the owner check): the mask is the kernel's" },
	{ __NR_unshare, 0, "the flags" },
};

const struct sc_cont *sc_cont_row(int nr)
{
	for (size_t i = 0; i < sizeof sc_cont_rows / sizeof sc_cont_rows[0]; i++)
		if (sc_cont_rows[i].nr == nr)
			return &sc_cont_rows[i];
	return NULL;
}

size_t sc_cont_rows_get(const struct sc_cont **rows)
{
	*rows = sc_cont_rows;
	return sizeof sc_cont_rows / sizeof sc_cont_rows[0];
}

int sc_cont_allowed(int nr, int mem_read)
{
	const struct sc_cont *r = sc_cont_row(nr);
	return r && (!mem_read || r->reads);
}

/* Rows the kernel runs after a decision on memory it then reads again, and
 * why that second read cannot undo the decision. */
static const struct sc_cont sc_toctou_exceptions[] = {
	{ __NR_connect, 1, "ptrace stop (sentry/unixsock.c): a path becomes a sentry-written abstract name "
			   "below the red zone; anything else runs natively untouched: a rewrite resolves a "
			   "path in the empty native mount namespace, an inet address in the guest netns of "
			   "loopback alone; with --net rules made by moat-netd from one copy, never native" },
	{ __NR_bind, 1, "as connect (with --net rules or SO_REUSEPORT made on the pinned file from one copy)" },
	{ __NR_sendto, 1, "as connect for the destination (UDP egress: sent by moat-netd from a copy)" },
	{ __NR_sendmsg, 1, "as sendto; SCM_CREDENTIALS checked on a copy, then the kernel's own stricter "
			   "check on the native ids, and no receiver sees a claim once ids changed "
			   "(passcred_off): Linux's answer, not the boundary" },
	{ __NR_sendmmsg, 1, "as sendmsg per message (a rewritten call carries sentry-written copies)" },
	{ __NR_recvfrom, 1, "ptrace stop with an address buffer (a register): the buffer is an output, the "
			    "exit writes the mapped name over every byte the kernel wrote (a datagram's name "
			    "is readable by a spinning thread until then: Known gaps)" },
	{ __NR_recvmsg, 1, "ptrace stop: decided on the fd and the sandbox (src_kind) before the header is "
			   "read; read, the call always gets a copy (rt81: a stop that saw no name buffer "
			   "ran natively and a name set meanwhile got the kernel's abstract name)" },
	{ __NR_recvmmsg, 1, "as recvmsg, a copy of at most 16 headers" },
	{ __NR_io_setup, 1, "ptrace stop on nr_events (a register); ctxp is an output" },
	{ __NR_execve, 1, "ptrace stop (sentry/exec.c): the path read once and resolved in the VFS, the call "
			  "rewritten to the loader's path below the red zone (the native mount namespace "
			  "holds nothing else: a rewrite only fails the exec); the loader gets the copy "
			  "(MOAT_SYS_LOADER); argv and envp are the kernel's, never inspected" },
	{ __NR_execveat, 1, "as execve" },
};

size_t sc_toctou_exceptions_get(const struct sc_cont **rows)
{
	*rows = sc_toctou_exceptions;
	return sizeof sc_toctou_exceptions / sizeof sc_toctou_exceptions[0];
}

const char *sc_class_name(int cls)
{
	switch (cls) {
	case SC_FAST:
		return "FAST";
	case SC_EMULATE:
		return "EMULATE";
	case SC_EXEC:
		return "EXEC";
	case SC_DENY:
		return "DENY";
	case SC_KILL:
		return "KILL";
	default:
		return "?";
	}
}

const char *sc_status_name(int status)
{
	switch (status) {
	case ST_FULL:
		return "FULL";
	case ST_PARTIAL:
		return "PARTIAL";
	case ST_NONE:
		return "NONE";
	default:
		return "?";
	}
}

int sc_effective_status(const struct sysent *e)
{
	if ((e->cls == SC_EMULATE || e->argtrap) && sc_handler_is_stub(e->handler))
		return ST_NONE;
	return e->status;
}

/* "DENY(EPERM)", "FAST", "FAST!" (argument rules deny: a deny or an allow
 * list) or "FAST+" (argument rules send calls to the handler) */
static void class_text(const struct sysent *e, char *buf, size_t len)
{
	const char *en;

	if (e->cls == SC_DENY) {
		en = sc_errno_name(e->err);
		if (en)
			snprintf(buf, len, "DENY(%s)", en);
		else
			snprintf(buf, len, "DENY(%d)", e->err);
	} else if (e->cls == SC_FAST && (e->deny || e->allow)) {
		snprintf(buf, len, e->argtrap ? "FAST+" : "FAST!");
	} else {
		snprintf(buf, len, "%s", sc_class_name(e->cls));
	}
}

static const char *note_text(const struct sysent *e)
{
	if ((e->cls == SC_EMULATE || e->argtrap) && sc_handler_is_stub(e->handler))
		return "handler not written yet: ENOSYS";
	return e->note;
}

static void print_csv_field(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', out);
		fputc(*s, out);
	}
	fputc('"', out);
}

static void print_json_str(FILE *out, const char *s)
{
	char buf[1024];

	json_escape(buf, sizeof(buf), s);
	fprintf(out, "\"%s\"", buf);
}

static void print_json_row(FILE *out, const struct sysent *e)
{
	const char *en = e->err ? sc_errno_name(e->err) : NULL;

	fprintf(out, "{\"nr\":%d,\"name\":", e->nr);
	print_json_str(out, e->name);
	fprintf(out, ",\"class\":\"%s\",\"status\":\"%s\",\"errno\":",
		sc_class_name(e->cls), sc_status_name(sc_effective_status(e)));
	if (en)
		fprintf(out, "\"%s\"", en);
	else
		fputs("null", out);
	fputs(",\"handler\":", out);
	if (e->handler_name[0])
		print_json_str(out, e->handler_name);
	else
		fputs("null", out);
	fputs(",\"args\":[", out);
	for (int i = 0; i < e->nargs; i++)
		fprintf(out, "%s\"%s\"", i ? "," : "",
			sc_argkind_name(e->args[i]));
	fputs("],\"note\":", out);
	print_json_str(out, note_text(e));
	fputc('}', out);
}

int sc_print_listing(FILE *out, const char *format)
{
	enum { TABLE, CSV, JSON } fmt;
	bool first = true;
	char cls[32];
	int namew = 4;

	if (!format || !strcmp(format, "table"))
		fmt = TABLE;
	else if (!strcmp(format, "csv"))
		fmt = CSV;
	else if (!strcmp(format, "json"))
		fmt = JSON;
	else
		return -EINVAL;

	for (int i = 0; i < SC_NR_MAX; i++)
		if (sc_table[i].name && (int)strlen(sc_table[i].name) > namew)
			namew = (int)strlen(sc_table[i].name);

	if (fmt == TABLE)
		fprintf(out, "%-4s %-*s %-14s %-7s  %s\n", "NR", namew, "NAME",
			"CLASS", "STATUS", "NOTE");
	else if (fmt == CSV)
		fputs("nr,name,class,errno,status,handler,note\n", out);
	else
		fputc('[', out);

	for (int i = 0; i < SC_NR_MAX; i++) {
		const struct sysent *e = &sc_table[i];
		const char *en;

		if (!e->name)
			continue;
		switch (fmt) {
		case TABLE:
			class_text(e, cls, sizeof(cls));
			fprintf(out, "%-4d %-*s %-14s %-7s%s%s\n", e->nr,
				namew, e->name, cls,
				sc_status_name(sc_effective_status(e)),
				note_text(e)[0] ? "  " : "", note_text(e));
			break;
		case CSV:
			en = e->err ? sc_errno_name(e->err) : NULL;
			fprintf(out, "%d,%s,%s,%s,%s,%s,", e->nr, e->name,
				sc_class_name(e->cls), en ? en : "",
				sc_status_name(sc_effective_status(e)),
				e->handler_name);
			print_csv_field(out, note_text(e));
			fputc('\n', out);
			break;
		case JSON:
			fputs(first ? "\n" : ",\n", out);
			print_json_row(out, e);
			break;
		default:
			break;
		}
		first = false;
	}
	if (fmt == JSON)
		fputs("\n]\n", out);
	return ferror(out) ? -EIO : 0;
}

/* ---- the guest's kernel configuration (/proc/config.gz) ---- */

/* Options of what native calls reach in the host kernel (transparent huge
 * pages): probed on the host by sc_kconfig_probe_host before the sentry
 * leaves the host's view (-1: not probed, not set). KSM is not one: the
 * table refuses MADV_MERGEABLE whatever the host has (a side channel
 * between sandboxes, red team 76), so CONFIG_KSM is fixed "not set". */
static int kconfig_host[1] = { -1 };
static const char *const kconfig_host_path[1] = { "/sys/kernel/mm/transparent_hugepage" };

void sc_kconfig_probe_host(void)
{
	for (size_t i = 0; i < ARRAY_SIZE(kconfig_host); i++)
		kconfig_host[i] = access(kconfig_host_path[i], F_OK) == 0;
}

static const struct {
	const char *opt;
	const char *sys;    /* the call that stands for it; NULL: fixed */
	int on;             /* fixed: y or not set; -1 - i: kconfig_host[i] */
} kconfig_rows[] = {
	{ "CONFIG_KSM", NULL, 0 },
	{ "CONFIG_TRANSPARENT_HUGEPAGE", NULL, -1 },
	{ "CONFIG_64BIT", NULL, 1 },
	{ "CONFIG_X86_64", NULL, 1 },
	{ "CONFIG_X86", NULL, 1 },
	{ "CONFIG_MMU", NULL, 1 },
	{ "CONFIG_SMP", NULL, 1 },
	{ "CONFIG_MULTIUSER", NULL, 1 },
	{ "CONFIG_PROC_FS", NULL, 1 },
	{ "CONFIG_SYSFS", NULL, 1 },
	{ "CONFIG_TMPFS", NULL, 1 },
	{ "CONFIG_SHMEM", NULL, 1 },
	{ "CONFIG_NET", NULL, 1 },
	{ "CONFIG_INET", NULL, 1 },
	{ "CONFIG_IPV6", NULL, 1 },
	{ "CONFIG_UNIX", NULL, 1 },
	{ "CONFIG_HIGH_RES_TIMERS", NULL, 1 },
	{ "CONFIG_FILE_LOCKING", "flock", 0 },
	{ "CONFIG_FUTEX", "futex", 0 },
	{ "CONFIG_POSIX_TIMERS", "timer_create", 0 },
	{ "CONFIG_EPOLL", "epoll_create1", 0 },
	{ "CONFIG_SIGNALFD", "signalfd4", 0 },
	{ "CONFIG_TIMERFD", "timerfd_create", 0 },
	{ "CONFIG_EVENTFD", "eventfd2", 0 },
	{ "CONFIG_AIO", "io_setup", 0 },
	{ "CONFIG_IO_URING", "io_uring_setup", 0 },
	{ "CONFIG_INOTIFY_USER", "inotify_init1", 0 },
	{ "CONFIG_FANOTIFY", "fanotify_init", 0 },
	{ "CONFIG_DNOTIFY", "fcntl", 0 },         /* F_NOTIFY runs natively */
	{ "CONFIG_SYSVIPC", "shmget", 0 },
	{ "CONFIG_POSIX_MQUEUE", "mq_open", 0 },
	{ "CONFIG_MEMFD_CREATE", "memfd_create", 0 },
	{ "CONFIG_CROSS_MEMORY_ATTACH", "process_vm_readv", 0 },
	{ "CONFIG_SECCOMP", "seccomp", 0 },
	{ "CONFIG_SECCOMP_FILTER", "seccomp", 0 },
	{ "CONFIG_SECURITY_LANDLOCK", "landlock_create_ruleset", 0 },
	{ "CONFIG_MEMBARRIER", "membarrier", 0 },
	{ "CONFIG_USERFAULTFD", "userfaultfd", 0 },
	{ "CONFIG_FHANDLE", "open_by_handle_at", 0 },
	{ "CONFIG_KEYS", "keyctl", 0 },
	{ "CONFIG_BSD_PROCESS_ACCT", "acct", 0 },
	{ "CONFIG_SWAP", "swapon", 0 },
	{ "CONFIG_QUOTACTL", "quotactl", 0 },
	{ "CONFIG_BPF_SYSCALL", "bpf", 0 },
	{ "CONFIG_PERF_EVENTS", "perf_event_open", 0 },
	{ "CONFIG_MODULES", "init_module", 0 },
	{ "CONFIG_KEXEC", "kexec_load", 0 },
	/* the guest has its namespaces but cannot make more (unshare is
	 * emulated for CLONE_FS/FILES/SYSVSEM only: sys_unshare) */
	{ "CONFIG_NAMESPACES", NULL, 0 },
	{ "CONFIG_USER_NS", NULL, 0 },
	{ "CONFIG_PID_NS", NULL, 0 },
	{ "CONFIG_NET_NS", NULL, 0 },
	{ "CONFIG_UTS_NS", NULL, 0 },
	{ "CONFIG_IPC_NS", NULL, 0 },
	{ "CONFIG_TIME_NS", NULL, 0 },
	{ "CONFIG_CGROUPS", NULL, 0 },
	/* not offered whatever the table says */
	{ "CONFIG_CHECKPOINT_RESTORE", NULL, 0 },   /* no map_files, PR_SET_MM */
	{ "CONFIG_IA32_EMULATION", NULL, 0 },       /* int 0x80 is ENOSYS */
	{ "CONFIG_X86_X32_ABI", NULL, 0 },
	{ "CONFIG_NUMA", NULL, 0 },
	{ "CONFIG_BLK_DEV_LOOP", NULL, 0 },
	{ "CONFIG_FS_VERITY", NULL, 0 },
	{ "CONFIG_POSIX_AUX_CLOCKS", NULL, 0 },
};

size_t sc_kconfig_text(char *buf, size_t len)
{
	size_t o = 0;
	int r = snprintf(buf, len, "#\n# Linux kernel configuration of moat's guest (moat's own, not the host's)\n#\n");

	if (r > 0)
		o = (size_t)r;
	for (size_t i = 0; i < sizeof kconfig_rows / sizeof kconfig_rows[0]; i++) {
		int on = kconfig_rows[i].on;

		if (on < 0)
			on = kconfig_host[-on - 1] > 0;
		if (kconfig_rows[i].sys) {
			const struct sysent *e = sc_lookup_name(kconfig_rows[i].sys);

			on = e && e->cls != SC_DENY && e->cls != SC_KILL;
		}
		r = on ? snprintf(o < len ? buf + o : NULL, o < len ? len - o : 0, "%s=y\n", kconfig_rows[i].opt)
		       : snprintf(o < len ? buf + o : NULL, o < len ? len - o : 0, "# %s is not set\n", kconfig_rows[i].opt);
		if (r > 0)
			o += (size_t)r;
	}
	return o;
}
