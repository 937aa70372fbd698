/* syscalls/sc.h - what a handler sees: one trapped call.
 *
 * Pipeline (sentry/pipeline.c), for every SECCOMP_RET_USER_NOTIF:
 *   1. trap:     receive the notification (tid, nr, args)
 *   2. copy-in:  for each argument whose kind (syscalls/table.h) is PATH, STR,
 *                OPEN_HOW or SOCKADDR, copy it from guest memory ONCE into
 *                c->str[i] / c->buf[i]; EFAULT/ENAMETOOLONG end the call here
 *   3. check SECCOMP_IOCTL_NOTIF_ID_VALID (the task may be gone); 2 and 3
 *                run inside the copy guard (kernel/task.h), as does every
 *                handler access through the sc_* helpers below
 *   4. policy:   policy_check(c) -> allow / deny(errno) / kill
 *   5. handler:  sysent->handler(c) returns a value >= 0 or -errno. It reads
 *                only the copies in c, never guest memory again for inputs.
 *                Output buffers (stat, getdents, readlink...) are written with
 *                sc_write_guest().
 *   6. reply:    value/-errno; or if the handler set c->out_fd, the fd is
 *                installed with SECCOMP_IOCTL_NOTIF_ADDFD + ADDFD_FLAG_SEND
 *                (atomically installs and answers with the new fd number)
 *   7. audit:    one event (trace line and/or JSON line).
 *
 * Handler contract: long sys_x(struct sc_call *c). Return value >= 0 or -errno.
 * Do not block forever on the guest's behalf without need; a blocking handler
 * only stalls its own worker thread.
 */
#ifndef MOAT_SYSCALLS_SC_H
#define MOAT_SYSCALLS_SC_H

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <sys/types.h>

#include "kernel/task.h"
#include "platform/platform.h"
#include "syscalls/table.h"
#include "syscalls/table_def.h" /* SC_IOCTL_* */

struct sandbox;

#define SC_STRMAX PATH_MAX        /* path and string copy-in bound */
#define SC_BUFMAX 256             /* struct copy-in bound (open_how, sockaddr) */

struct sc_call {
	/* from the notification */
	uint64_t id;              /* seccomp notification id */
	int notify_fd;            /* the listener */
	pid_t tid;                /* host tid of the caller */
	int nr;
	uint64_t args[SC_MAXARGS];
	uint64_t ip;              /* the notification's instruction pointer */
	const struct sysent *ent; /* row (never NULL inside a handler) */

	struct task *task;        /* caller (a reference held by the pipeline) */
	struct sandbox *sb;

	/* copy-in (step 2): str[i] set for PATH/STR args, buf[i] for structs */
	char *str[SC_MAXARGS];
	void *buf[SC_MAXARGS];
	size_t buflen[SC_MAXARGS];

	/* outputs */
	int out_fd;               /* >= 0: install this host fd (pipeline closes it) */
	unsigned out_fd_flags;    /* O_CLOEXEC or 0 */
	int out_newfd_at;         /* -1, or install at this exact guest fd number (dup2-like) */
	int out_fd_close_first;   /* install out_fd, close our copy, then answer (a FIFO: its
				   * peer count is the guest's to see at once, e.g. a
				   * non-blocking writer's ENXIO once the reader closed) */
	int out_fd_value;         /* install out_fd even when the handler returns -errno, and
				   * answer with the handler's value, not the fd number */
	int out_fd_rdonly;        /* 1: out_fd was opened O_RDONLY by this handler (no O_PATH
				   * stand-in, no reopen), so the pipeline skips its F_GETFL
				   * for the write note (sc_note_write_fd): set only where
				   * the open's own flags say so (do_open of a backend
				   * file); left 0, the pipeline asks the fd */
	int cont;                 /* 1 (with a return >= 0): let the call run natively
				   * (SECCOMP_USER_NOTIF_FLAG_CONTINUE). Only for calls
				   * whose arguments the handler checked are plain
				   * values in registers (a kill's pid and signal),
				   * never a pointer it read: the pipeline refuses a
				   * CONTINUE on a row sc_cont_row does not list, or
				   * after a read of guest memory (mem_read), but
				   * for the reads that row declares harmless
				   * (sc_cont_allowed, syscalls/table.c) */
	int mem_read;             /* reads of the caller's memory this call made (copy_in's
				   * and sc_read_guest's): what a CONTINUE must not follow */
	char note[128];           /* free text added to the trace/audit event */
	char audit_args[160];     /* non-empty: the event's arguments instead of the decoded ones */
	int deny;                 /* the handler refused the call by policy: audited as a denial */

	/* storage for copies (pipeline-owned) */
	char strbuf[3][SC_STRMAX];
	unsigned char structbuf[2][SC_BUFMAX];
};

/* Guest memory and fds belong to the layers below (platform/guestmem.c,
 * kernel/tasks.c): these are the calls' views of them, nothing more. */

/* Write len bytes to guest address addr of the caller. 0 or -EFAULT. */
/* Whether the guest holds any inotify watch (syscalls/sys_file.c): then an
 * fd is installed and the sentry's copy closed before the guest resumes. */
int sc_inotify_watched(void);

/* Every access below runs inside the copy guard (kernel/task.h
 * task_io_begin: the thread group's in-flight count, the exec fence, the
 * call's ID_VALID, made again when an exec or a reap in the group came
 * after the pipeline's): never into an image an exec put under the caller's
 * pid (red team 29). -ESRCH: the call is gone; -EAGAIN: an exec of the group
 * held it off too long. */
static inline int sc_write_guest(struct sc_call *c, uint64_t addr, const void *src, size_t len)
{
	if (len == 0)
		return 0;
	if (guestmem_test_delay_ms)
		guestmem_test_delay(addr, 0);
	int g = task_io_begin(c->task, c->notify_fd, c->id);
	if (g < 0)
		return g;
	if (guestmem_test_delay_ms)
		guestmem_test_delay(addr, 1);
	int r = guest_write(c->tid, addr, src, len);
	task_io_end(c->task);
	return r;
}
/* Read a plain value the table does not copy (rare; e.g. a flags struct that
 * only selects an output size). Inputs that steer a decision must come from
 * the table-driven copy-in instead. 0 or -EFAULT. */
static inline int sc_read_guest(struct sc_call *c, uint64_t addr, void *dst, size_t len)
{
	if (len == 0)
		return 0;
	c->mem_read++;
	int g = task_io_begin(c->task, c->notify_fd, c->id);
	if (g < 0)
		return g;
	int r = guest_read(c->tid, addr, dst, len);
	task_io_end(c->task);
	return r;
}
/* A NUL-terminated string (guest_read_str's answer) read in the guard. */
static inline long sc_read_guest_str(struct sc_call *c, uint64_t addr, char *dst, size_t max)
{
	c->mem_read++;
	int g = task_io_begin(c->task, c->notify_fd, c->id);
	if (g < 0)
		return g;
	long r = guest_read_str(c->tid, addr, dst, max);
	task_io_end(c->task);
	return r;
}

/* The tail of an extensible struct (openat2's open_how, the *xattrat
 * calls' xattr_args, PROCMAP_QUERY's struct, sched_attr): Linux's
 * copy_struct_from_user takes a guest size up to PAGE_SIZE (each caller
 * refuses a larger one first, E2BIG) and answers E2BIG only when a byte past
 * the struct it knows is not zero (check_zeroed_user). The len bytes at addr
 * read in the guard, in pieces: 0 (all zero), -E2BIG, or -EFAULT. */
#define SC_STRUCT_USIZE_MAX 4096u
static inline int sc_guest_tail_zero(struct sc_call *c, uint64_t addr, size_t len)
{
	unsigned char b[512];
	for (size_t off = 0; off < len;) {
		size_t n = len - off < sizeof b ? len - off : sizeof b;
		if (sc_read_guest(c, addr + off, b, n) < 0)
			return -EFAULT;
		for (size_t i = 0; i < n; i++)
			if (b[i])
				return -E2BIG;
		off += n;
	}
	return 0;
}

/* Duplicate the caller's guest fd into the sentry (pidfd_getfd, in the
 * guard: task_getfd on a worker serving the call). Returns a host fd (caller
 * closes) or -EBADF (-ESRCH/-EAGAIN as above). */
static inline int sc_getfd(struct sc_call *c, int guestfd)
{
	return task_getfd(c->task, guestfd);
}

/* The caller's guest fd pinned (sc_getfd) when it holds a socket: the host
 * fd (caller closes); sc_getfd's error, fstat's -errno, or -notsock when
 * the file is no socket (ENOTSOCK for a socket call, ENOTTY for an ioctl).
 * The handler then acts on this file, never on the number again: a
 * thread's dup2 after the check changes nothing (syscalls/sys_socket.c). */
int sc_getfd_socket(struct sc_call *c, int guestfd, int notsock);

/* Hand a host fd to the guest as the call's result (the pipeline installs it
 * and closes our copy). Returns 0; the handler should `return sc_return_fd(...)`. */
static inline long sc_return_fd(struct sc_call *c, int hostfd, int cloexec)
{
	c->out_fd = hostfd;
	c->out_fd_flags = cloexec ? 02000000 /* O_CLOEXEC */ : 0;
	return 0;
}

/* ioctl PROCMAP_QUERY (_IOWR('f', 17, struct procmap_query), Linux 6.11):
 * the 'f' write rule traps it, but it changes nothing (a query of a
 * /proc/<pid>/maps file's task's mappings): sys_ioctl lets it run */
#define SC_IOCTL_PROCMAP_QUERY 0xc0686611u

/* TIOCSISO7816, _IOWR('T', 0x43, struct serial_iso7816: 40 bytes), a serial
 * port's setting denied with the line's other controls (syscall_table.def) */
#define SC_IOCTL_TIOCSISO7816 0xc0285443u

/* ioctl termios writes (TCSETS, TCSETSW, TCSETSF; the old termio TCSETA,
 * TCSETAW, TCSETAF; termios2's TCSETS2, TCSETSW2, TCSETSF2, _IOW('T',
 * 0x2B..0x2D, 44 bytes); TIOCSSOFTCAR, CLOCAL): trapped to be seen, then
 * native (sys_ioctl: sentry/tty.c tty_guard_restore puts the caller's
 * terminal back from a background sandbox only if the guest set one) */
#define SC_IOCTL_TCSETS2 0x402c542bu
#define SC_IOCTL_TCSETSW2 0x402c542cu
#define SC_IOCTL_TCSETSF2 0x402c542du
static inline int sc_ioctl_termios_set(unsigned cmd)
{
	return (cmd >= 0x5402u && cmd <= 0x5404u) || (cmd >= 0x5406u && cmd <= 0x5408u) ||
	       (cmd >= SC_IOCTL_TCSETS2 && cmd <= SC_IOCTL_TCSETSF2) || cmd == 0x541au;
}

/* ioctl requests that act on a terminal of the sandbox's own devpts only
 * (sys_ioctl; EPERM on any other): TIOCSCTTY (0x540e), and a pty master's
 * TIOCPKT (0x5420), TIOCSPTLCK (_IOW('T', 0x31, int)), TIOCSIG
 * (_IOW('T', 0x36, int)) and TIOCGPTPEER (_IO('T', 0x41)): a master the
 * caller gave as stdio is shared as is (sentry/tty.c stdio_tty). Numbers
 * checked in sys_ioctl. */
static inline int sc_ioctl_pts_only(unsigned cmd)
{
	return cmd == 0x540eu || cmd == 0x5420u || cmd == 0x40045431u || cmd == 0x40045436u || cmd == 0x5441u;
}

/* ioctl file-information reads a memfd answers (FIGETBSZ, FIOQSIZE,
 * FS_IOC_GETFLAGS): trapped only so that an O_PATH placeholder's stand-in is
 * EBADF (sys_ioctl); on any other fd they run natively. Numbers checked
 * against <linux/fs.h> in syscalls/sys_tty.c. */
static inline int sc_ioctl_fileinfo(unsigned cmd)
{
	return cmd == 2u /* FIGETBSZ */ || cmd == 0x5460u /* FIOQSIZE */ ||
	       cmd == 0x80086601u /* FS_IOC_GETFLAGS */;
}

/* ioctl reads of a host file system's or inode's identity (red team 30: a
 * guest read the host disk's UUID and block device name through a file of
 * the host view; red team 31: an inode's generation, the random 32-bit value
 * ext4 gives it at creation and keeps for its life, the same in every
 * sandbox and run): the whole 0x15 class (FS_IOC_GETFSUUID,
 * FS_IOC_GETFSSYSFSPATH), EXT4_IOC_GETFSUUID (_IOR('f', 44, struct
 * fsuuid)), FS_IOC_GETFSLABEL (_IOR(0x94, 49, char[256]), in the btrfs class
 * the table traps anyway), FAT_IOCTL_GET_VOLUME_ID (_IOR('r', 0x13, __u32): a
 * vfat volume serial), FS_IOC_GETVERSION (_IOR('v', 1, long): ext4, xfs,
 * btrfs...) and EXT4_IOC_GETVERSION (_IOR('f', 3, long), ext4's second number
 * for it). sys_ioctl answers ENOTTY whatever the fd (EBADF first on an O_PATH
 * stand-in), as a file system without them does (the default view's overlay,
 * tmpfs). Numbers checked against the kernel headers in syscalls/sys_tty.c. */
static inline int sc_ioctl_fsidentity(unsigned cmd)
{
	return ((cmd >> 8) & 0xffu) == 0x15u || cmd == SC_IOCTL_EXT4_GETFSUUID ||
	       cmd == 0x81009431u /* FS_IOC_GETFSLABEL */ || cmd == SC_IOCTL_FAT_GET_VOLUME_ID ||
	       cmd == 0x80087601u /* FS_IOC_GETVERSION */ || cmd == SC_IOCTL_EXT4_GETVERSION;
}

/* ioctl PIDFD_GET_INFO (Linux 6.13, _IOWR(0xFF, 11, struct pidfd_info)) at
 * any size (an extensible struct: pidfs reads the size from the number and
 * takes only the read-write direction): a process's native ids and cgroup,
 * not the virtual ones; sys_ioctl answers ENOTTY on a pidfd (red team 31) */
static inline int sc_ioctl_pidfd_info(unsigned cmd)
{
	return (cmd & 0xc000ffffu) == 0xc000ff0bu;
}

/* The guest fd numbers of process vpid (read from the guest's procfs), into
 * fds[] (up to max): their count, -1 if gone, -2 if it has more than max.
 * (syscalls/sys_lock.c) */
int sc_list_fds(struct sandbox *sb, pid_t vpid, int *fds, int max);

/* ETXTBSY at exec (Linux's deny_write_access: no exec of a file open for
 * writing). The kernel execs only the loader, so the sentry checks: every
 * regular file the sentry hands the guest open for writing is noted (the
 * pipeline calls sc_note_write_fd on each fd it installs: an open of an
 * existing file, a create, O_TMPFILE, a handle...; a hash set of at most
 * SC_WRITERS_MAX distinct files), and an exec of a noted file scans the
 * guest's fds for one open for writing (sc_exec_write_busy: 1 if found; not
 * found, the note goes). A note dropped by a full table makes every exec
 * scan, collecting every file open for writing, until such a scan has put
 * them all back in the table. (syscalls/sys_lock.c) */
#define SC_WRITERS_MAX 65536
void sc_note_write_fd(int hostfd);
int sc_exec_write_busy(struct sandbox *sb, dev_t dev, ino_t ino);

/* SO_PASSCRED (syscalls/sys_peercred.c). passcred_set: the guest's
 * setsockopt(SOL_SOCKET, SO_PASSCRED, on) of fd; 0 or -errno.
 * passcred_ids_changed: after a change of the caller's virtual ids. */
/* Linux's set_one_prio_perm on the virtual ids for a call naming another
 * task (syscalls/sys_signal.c): 0 (c->cont set: native), or -EPERM */
/* 1 when a guest pid the sentry checks names, whenever the kernel looks it
 * up again (a CONTINUE'd call), a task that passes the same check: every
 * live task has the caller's one uid and gid and cannot change them
 * (syscalls/sys_signal.c, pid reuse) */
int sc_pid_reuse_harmless(struct sc_call *c);
/* tests: MOAT_TEST_PTRACE_CHECK_DELAY=MS, process_vm_* sleeps between its check
 * and its copy (syscalls/sys_signal.c; 0 off) */
extern int sc_test_vm_check_delay_ms;
long sc_owner_nice(struct sc_call *c, pid_t target);
/* The same check when the call may have to be made by the sentry (pid
 * reuse not harmless: syscalls/sys_signal.c "the owner rows made by the
 * sentry"): 1 with *tp the task checked (a reference; c->cont cleared),
 * then sc_owner_make; else 0 (native) or -EPERM. */
long sc_owner_nice_pin(struct sc_call *c, pid_t target, struct task **tp);
/* fn(host ids: [0] the tid, [2] its number in the guest's pid namespace,
 * arg) made on t with its number held (its group's copy guard and the reap
 * gate), t put: fn's answer (-errno), or -ESRCH (gone) / -EAGAIN */
long sc_owner_make(struct sc_call *c, struct task *t, long (*fn)(const pid_t *host, void *arg), void *arg);
/* a guest socket's bind made by the guest's init (sys_signal.c): 0 or -errno */
long init_act_bind(struct sandbox *sb, int hfd, const void *sa, size_t len);
/* inside such an fn: q made by the guest's init on that task (its number,
 * h[2]), p its answer (kernel/task.h init_act_req) */
long sc_init_make(struct sandbox *sb, const pid_t *h, struct init_act_req *q, struct init_act_rep *p);
/* prctl(PR_SCHED_CORE) on another task: its owner check (sys_signal.c) */
long sc_sched_core_owner(struct sc_call *c);
/* syscalls/sys_signal.c: whether another guest task shares the caller's
 * fd table (a check on a number's file, then native, is sound without;
 * asked before the file is pinned) */
int sc_fdtable_shared(struct sc_call *c);
/* tests: MOAT_TEST_PIDCALL_DELAY_MS between such a check and the CONTINUE */
void sc_fdtable_test_delay(void);
/* syscalls/sys_sched.c: a task's virtual SCHED_DEADLINE class, and whether
 * a cpumask covers the host's CPUs (the class's affinity rule) */
struct task *sc_sched_deadline_task(struct sc_call *c, pid_t pid);
int sc_sched_covers_host(struct sandbox *sb, const void *mask, size_t len);

long passcred_set(struct sc_call *c, int fd, int on);
void passcred_ids_changed(struct sc_call *c);
/* recvmsg/recvmmsg's ptrace stop: clears the flag of the socket received
 * on once ids changed; 0, or -errno to answer the call with. */
long passcred_recv_check(struct sandbox *sb, struct task *t, int guestfd);

#endif
