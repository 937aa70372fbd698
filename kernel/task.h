/* kernel/task.h - the virtual kernel state handlers work on: tasks, their
 * shared fs context, credentials, and the sandbox-wide state.
 *
 * Lock and refcount model (ARCHITECTURE.md "Tasks: owners and locks"):
 *
 *  - The task table (kernel/tasks.c) has one mutex. Only the tracer thread
 *    (sentry/tracer.c, the ptrace thread) inserts, removes and re-keys
 *    tasks. Lookups (task_get, task_get_vpid, task_for_each_leader) take a
 *    counted reference under the table lock; the holder calls task_put().
 *    The table holds one reference from task_create to task_remove; a task
 *    is freed by the last task_put (its fs_ctx reference, pidfd and pending
 *    exec with its fds are released then).
 *  - Identity: tgid is fixed at creation; tid (re-keyed under the table
 *    lock when a non-leader thread execs), vtid/vtgid/vppid and exited are
 *    atomics: only the tracer writes them (create, fork return, exec re-key,
 *    exit), workers read them anywhere.
 *  - t->lock guards cred, exe, comm, vsched, pexec, loader_ok and loader_pin*. Workers change
 *    their own task's cred/exe/comm; the tracer sets pexec (exec stop) and
 *    loader_ok (PTRACE_EVENT_EXEC); the worker serving the loader's call
 *    takes both. Never hold t->lock while taking the table lock.
 *  - fs_ctx (cwd, umask) is shared by CLONE_FS threads: its own lock and
 *    refcount.
 *  - The "tracer" fields below are owned by the tracer thread: no other
 *    thread reads or writes them, so they need no lock.
 */
#ifndef MOAT_KERNEL_TASK_H
#define MOAT_KERNEL_TASK_H

#include <limits.h>

#include "common/util.h"
#include <sched.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>

#include "kernel/cred.h"

struct vfs;
struct policy;
struct audit;
struct pending_exec;

/* Shared by threads (CLONE_FS), copied on fork. */
struct fs_ctx {
	atomic_int refs;
	pthread_mutex_t lock;
	char cwd[VFS_PATH_MAX];  /* canonical absolute guest path, no trailing '/' except "/" */
	int cwd_fd;              /* the cwd's object (host O_PATH fd, directories of
				  * writable mounts: fs/vfs.c vfs_cwd_node) or -1 */
	dev_t cwd_dev;           /* its identity */
	ino_t cwd_ino;
	mode_t umask;
	char *root;              /* chroot(2): canonical guest path of the root
				  * (heap, under lock), NULL: the sandbox's "/" */
	int root_fd;             /* the root's object, held as the cwd's is
				  * (fs/vfs.c vfs_root_refresh), or -1 */
	dev_t root_dev;          /* its identity */
	ino_t root_ino;
	_Atomic int rooted;      /* root != NULL (read without the lock) */
	/* a sequence lock over cwd, cwd_fd, cwd_dev, cwd_ino: odd while a
	 * writer (who also holds lock) changes them, so that every walk of a
	 * relative path reads them without the lock, which the threads of a
	 * process share (git status's lstat threads: fs/vfs.c cwd_node) */
	atomic_uint cwd_seq;
	struct fs_ctx *reg_prev, *reg_next; /* every live one (fs_ctx_for_each) */
};

/* around a change of the cwd fields, lock held */
static inline void fs_cwd_write_begin(struct fs_ctx *fs)
{
	unsigned s = atomic_load_explicit(&fs->cwd_seq, memory_order_relaxed);
	atomic_store_explicit(&fs->cwd_seq, s + 1, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
}

static inline void fs_cwd_write_end(struct fs_ctx *fs)
{
	unsigned s = atomic_load_explicit(&fs->cwd_seq, memory_order_relaxed);
	atomic_store_explicit(&fs->cwd_seq, s + 1, memory_order_release);
}



struct aio_acct;

struct task {
	atomic_int refs;
	/* identity */
	_Atomic pid_t tid;       /* host id (what notifications carry); re-keyed at exec */
	pid_t tgid;              /* host thread-group id */
	_Atomic pid_t vtid, vtgid; /* ids inside the guest pid namespace */
	_Atomic pid_t vppid;
	int pidfd;               /* pidfd of tgid (for pidfd_getfd), -1 if none */

	/* shared or private depending on CLONE_FS */
	struct fs_ctx *fs;

	/* protected by lock */
	pthread_mutex_t lock;
	struct cred cred;        /* per task (thread), as in Linux; copied at clone */
	char exe[PATH_MAX];      /* guest path of the running ELF (/proc/self/exe) */
	dev_t exe_dev, interp_dev; /* the running program and its ELF interpreter */
	ino_t exe_ino, interp_ino; /* (0: none): ETXTBSY for writers, task_text_busy */
	char comm[16];
	uint64_t vcore_cur, vcore_max; /* the process's RLIMIT_CORE as the guest sees it
				  * (the real one stays 1 byte); every thread holds a
				  * copy, set together (syscalls/sys_signal.c) */
	struct vsched {          /* the guest's real-time or deadline class (syscalls/sys_sched.c):
				  * policy 0 (SCHED_OTHER): none, the host's class is the
				  * task's own; else SCHED_FIFO/RR (prio 1..99) or
				  * SCHED_DEADLINE (runtime, deadline, period), which
				  * the host never runs it in. Per thread, copied at
				  * clone unless reset (SCHED_RESET_ON_FORK) */
		int policy, prio, reset;
		uint64_t runtime, deadline, period;
	} vsched;
	_Atomic int pdeathsig;   /* the parent-death signal (prctl PR_SET_PDEATHSIG), virtual:
				  * never set natively; 0 in a new task, kept by exec,
				  * cleared by commit_creds's rule (cred_commit_resets); the
				  * tracer sends it when pd_parent is reaped (tracer.c
				  * pdeath_send) */
	struct pending_exec *pexec; /* set at an exec stop, consumed by the loader */
	void *net_pending;       /* per thread: set at a connect stop, consumed by the net call */
	int loader_ok;           /* PTRACE_EVENT_EXEC happened: the loader may take pexec (once) */
	int loader_confirm;      /* the loader took an exec of a file the task may not read:
				  * its MOAT_LOADER_CLOSED call is checked (once) */
	int loader_pin;          /* pinned from PTRACE_EVENT_EXEC to the loader's call (or its
				  * next stop), whichever thread takes this first gives it
				  * back its own mask (task_loader_unpin, sentry/tracer.c) */
	int loader_pin_cpu;
	cpu_set_t loader_pin_mask;
	atomic_int exited;
	/* set by the tracer the moment a wait4 reaped it, inside the reap gate
	 * (kernel/task.h task_reap_*), before its number can be given again:
	 * exited comes a few stops later (task_remove) */
	atomic_int reaped;

	/* in a group-stop (SIGSTOP, SIGTSTP...) the tracer let go with
	 * PTRACE_LISTEN, until its next ptrace stop: the kernel shows any
	 * ptrace stop as 't', which procfs shows as 'T' for these and as the
	 * running task it is natively for the tracer's own (state_shown) */
	atomic_int jobstop;

	/* tracer: owned by the tracer thread (sentry/tracer.c), nobody else */
	int pt_state;            /* 0 = waiting for its first ptrace stop, 1 = running,
				  * 2 = resume at its first stop */
	int held;                /* stopped at its first stop until its guest ids are known */
	int initial;             /* the main program before its first exec */
	pid_t pd_parent;         /* host tid of the thread that is its parent (Linux's
				  * real_parent: the thread that forked its process, or
				  * that one's parent for CLONE_THREAD/CLONE_PARENT; moved
				  * to a live thread of that group, else 0, when it is
				  * reaped), 0: the init or unknown. Not the tracer's
				  * alone: read and written under the task table's lock
				  * (written under its write lock: task_pd_parent_set,
				  * task_pdeath_reparent), which also keeps the index of
				  * tasks by it (pd_next, pd_pprev: kernel/tasks.c) */
	struct task *pd_next, **pd_pprev;
	pid_t fork_child;        /* fork/clone event seen, syscall exit not yet: the child */
	int fork_thread;         /* ... which is a CLONE_THREAD */
	int sighand_shared;      /* made by, or made a task with, CLONE_SIGHAND (every
				  * thread): another task may change its signal
				  * dispositions while it is stopped (no_core_dump);
				  * cleared at its exec, which unshares them */
	int fork_refused;        /* ... which was refused: the call returns -EAGAIN */
	int parked;              /* held at that syscall exit until the refused child is gone */
	int pinned;              /* on the tracer's CPU until its next stop (exec_pin, tracer.c):
				  * pin_cpu; pin_mask its own affinity, restored then */
	int pin_cpu;
	cpu_set_t pin_mask;
	unsigned long long fd_closing; /* a worker answered this task with ADDFD+SEND and has
				  * not closed its copy yet: a sequence number << 32 | the
				  * fd + 1 (pipeline.c closing_begin), else 0 */
	pid_t doomed_parent;     /* refused: killed at its first stop; its exit releases this parent */
	int doomed_exit;         /* a refused thread sent to exit(0) by one step (kill_doomed):
				  * any stop but a group-stop kills its process */
	int sock_exit;           /* a socket call runs to its exit (PTRACE_SYSCALL): 1/3
				  * recvfrom, 2 bind, 4/5 recvmsg, 6 recvmmsg, 8 sendmmsg
				  * (unixsock.c) */
	uint64_t sock_addr, sock_lenp; /* ... the guest's address buffer and length pointer */
	uint32_t sock_buflen;    /* ... and the length it gave */
	char sock_path[112];     /* a rewritten bind of this path runs: if it fails, its
				  * inode (sock_dev/sock_ino) is removed at the exit */
	uint64_t sock_dev, sock_ino;
	uint64_t sock_scratch;   /* a short buffer: the call got this full-size one
				  * below the red zone (length word 16 bytes below) */
	uint8_t sock_relay[112]; /* sock_exit 3/5 (and 6 with sock_relay_kind): the source
				  * shown is this name, the call asked for none (a UDP
				  * socket connected through moat-netd's relay: its
				  * destination; an AF_UNIX stream or seqpacket socket: its
				  * peer's, mapped as getpeername's; unixsock.c src_kind) */
	uint32_t sock_relay_len;
	int sock_relay_eof;      /* ... an AF_UNIX peer's: a read of 0 bytes (the end) has none */
	int sock_relay_kind;     /* sock_exit 6 (recvmmsg copies): names from sock_relay */
	uint32_t sock_ncopy;     /* ... and how many headers were copied (the readable ones) */
	struct aio_acct *aio;    /* the Linux AIO events its address space holds (sentry/aio.c):
				  * one account per mm, shared by the tasks of that mm
				  * (threads, CLONE_VM, a vfork child until its exec) */
	long aio_exit;           /* io_setup/io_destroy runs to its exit (PTRACE_SYSCALL):
				  * 1 io_destroy, 2 + n an io_setup of n events */
	int exec_pending;        /* the rewritten execve runs (PTRACE_SYSCALL): its syscall
				  * exit before PTRACE_EVENT_EXEC means it failed */
	int exec_fenced;         /* ... and its thread group's copies are fenced off
				  * (task_fence_close) until that exit, PTRACE_EVENT_EXEC
				  * or its death (task_fence_open) */
	long restart_answered;   /* nr + 1 of a trapped call a worker answered with
				  * -ERESTART* or -EINTR (a signal was pending: FIFO open,
				  * lock wait); taken by the tracer at the signal stop that
				  * follows, which then leaves the answer alone (tracer.c
				  * sig_restart) */
	long intr_before;        /* nr + 1 of a trapped call the tracer restarted because a
				  * signal interrupted it before a worker took it (for
				  * the restarted call's RECV) */
	int intr_now;            /* the call a worker serves is that restarted one: a
				  * wait of its (FIFO open, lock) ends at once with EINTR,
				  * as the native call would have (task_signal_pending) */
	long intr_ep_nr;         /* tracer only: an epoll_wait/epoll_pwait it restarted (nr + 1), */
	unsigned long long intr_ep_fd; /* ... its epoll fd, */
	int intr_ep_orig, intr_ep_written; /* ... its timeout and the one last written, */
	long long intr_ep_t0;    /* ... the time of its first restart (ms, monotonic) */
	long intr_restarted;     /* tracer only: nr + 1 of a call whose -EINTR the tracer
				  * made a restart at an ignored signal's stop */
	int call_state;          /* a worker serves a trapped call of its: 1, and waits
				  * for another task for it (pipeline_wait_begin: a FIFO's
				  * peer, a lock): 2; else 0. /proc/<pid>/stat and status
				  * show R or S for a task in a trapped call (fs/procfs.c) */
	unsigned calls_taken;    /* trapped calls a worker has taken (as call_state is
				  * set to 1): procfs sees one answered while it read */
	long intr_tp_nr;         /* tracer only: nr + 1 of a call whose relative timeout is
				  * behind a pointer (sigtimedwait, semtimedop, io_[p]getevents,
				  * epoll_pwait2) restarted at an ignored signal's stop, */
	uint64_t intr_tp_ptr;    /* ... its own timeout pointer, */
	long long intr_tp_ns, intr_tp_t0; /* ... its timeout and the time of its first
				  * restart (ns, monotonic), */
	int intr_tp_stage;       /* ... 1: the restarted call's syscall entry is to come,
				  * 2: its exit (PTRACE_SYSCALL); until the exit its pointer
				  * register names a copy with the time left, below the red
				  * zone, and the exit puts the guest's own pointer back; */
	int intr_tp_cont;        /* ... that exit was -EINTR again: the next stop of an
				  * ignored signal goes on with the same call's time */
	int net_hold;            /* tracer (read by workers): a bind/listen/send private
				  * call a signal interrupted before a worker took it runs
				  * again with every signal blocked (netconn_signal_stop)
				  * until its syscall exit, which puts back */
	uint64_t net_held_mask;  /* ... the thread's own mask (PTRACE_SETSIGMASK) */

	struct sandbox *sb;
};

/* How the guest sees host ids: host id -> guest id.
 * Rootless: one id, the caller's (host_uid <-> guest_uid, the --user id:
 * the caller's own by default), others 65534.
 * Root-run (full_identity): the view shows host files with their host
 * owners; the guest's own native objects (memfds, pipes, sockets) belong to
 * the sandbox's unprivileged host uid native_uid, shown as guest_uid.
 * The sentry's native fstat sees ids through its own user namespace, where
 * only native_uid is mapped: owners of view files come from the gofer. */
struct idmap {
	uid_t host_uid, guest_uid; /* single mapping (rootless), or identity when full */
	gid_t host_gid, guest_gid;
	int full_identity;         /* root: 0..2^32-2 mapped to itself */
	int sentry_owners;         /* root-run: the sentry's own user namespace maps
				    * every host id too (sentry/privilege.c), so its
				    * fstat shows the owners the gofer's lstat does */
	uid_t native_uid;          /* root-run: the sandbox's host uid (or (uid_t)-1) */
	gid_t native_gid;
	/* the one uid/gid a credential may act as on host files (the --user
	 * ids, default 0 root-run): a guest that changes its ids (setuid,
	 * setgroups) acts as no host id, so switching ids never reaches another
	 * host user's files (guest root has no DAC override on host files the
	 * sandbox did not make). Rootless they are guest_uid/guest_gid. */
	uid_t act_uid;
	gid_t act_gid;
};

/* uname -r inside, unless --kernel-release says otherwise */
#define MOAT_KERNEL_RELEASE "6.1.0-moat"

/* A request on the init's act channel (sentry/spawn.c init_act) and its
 * answer: a call on another task the sentry has the guest's init make, by
 * pid, a number of the guest's pid namespace (where a number can only name
 * a guest task; the sentry's own filter refuses these calls on any task but
 * itself: rootless a host number could name any of the caller's
 * processes). nr and what the init makes of the rest:
 *   prlimit64           (pid, a, INIT_ACT_NEW ? buf : NULL, INIT_ACT_OLD ? rep.old : NULL)
 *   setpriority         (PRIO_PROCESS, pid, a)
 *   ioprio_set          (IOPRIO_WHO_PROCESS, pid, a)
 *   sched_setscheduler  (pid, a, buf)
 *   sched_setparam      (pid, buf)
 *   sched_setattr       (pid, buf, 0)
 *   sched_setaffinity   (pid, len, buf)
 *   bind                (the socket sent with the request (SCM_RIGHTS),
 *                        buf, len): pid unused; made only on a socket of
 *                        the guest's network namespace and never to an
 *                        AF_UNIX path (sentry/spawn.c init_act_bind; the
 *                        sentry's filter has no bind: netbind)
 * Only the first len bytes of buf are sent (the rest reads as zeros). */
#define INIT_ACT_NEW 1
#define INIT_ACT_OLD 2
#define INIT_ACT_BUF 4096 /* sched_setattr's largest attr (a page); a cpumask's 1 KiB */
struct init_act_req {
	int32_t nr;
	int32_t pid;
	int64_t a;
	uint32_t flags;
	uint32_t len;
	unsigned char buf[INIT_ACT_BUF];
};
struct init_act_rep {
	int64_t r; /* the call's result or -errno */
	uint64_t old[2];
};

/* A host pid no task can hold (past PID_MAX_LIMIT, 4,194,304): a call
 * made on it gets the kernel's own argument checks, then its ESRCH */
#define NO_TASK_PID ((pid_t)0x3fffffff)

/* q made by the guest's init (q->len bytes of buf sent; one request at a
 * time): its answer, p->old filled for INIT_ACT_OLD; -ESRCH when the init
 * is gone (the sandbox ends) */
long init_act_call(struct sandbox *sb, const struct init_act_req *q, struct init_act_rep *p);
/* the same with fd (>= 0) sent along (bind's socket) */
long init_act_call_fd(struct sandbox *sb, const struct init_act_req *q, int fd, struct init_act_rep *p);

struct sandbox {
	uint64_t id;             /* random sandbox id (printed as 16 hex digits) */
	int termios_set;         /* a guest set a terminal's modes (TCSETS...: sys_ioctl; tty_guard_restore) */
	/* the caller's own open file descriptions of its stdio: moat's fds 0-2
	 * as the caller gave them, or a CLOEXEC dup of one that
	 * tty_stdio_fresh replaced by a fresh description for the guest
	 * (compared by kcmp: caller_ofd in syscalls/sys_signal.c) */
	int caller_stdio[3];
	int caller_shared;       /* bit i: the guest's fd i is still the caller's own (a file, a socket...) */
	char id_str[17];
	struct vfs *vfs;
	struct policy *policy;
	struct audit *audit;
	struct idmap idmap;
	int guest_procfd;        /* procfs mounted in the guest pid ns (O_DIRECTORY) */
	int init_act_fd;         /* the guest's init's act channel (sentry/spawn.c init_act):
				  * calls made by a process of the guest's pid namespace, or -1 */
	/* set once every live task was seen to have one non-root uid and gid
	 * and no CAP_SETUID/CAP_SETGID: no task can change its ids then and a
	 * new one copies its parent's, so it stays set (sc_pid_reuse_harmless) */
	atomic_int one_identity;
	pid_t init_pid;          /* host pid of the guest's pid-1 */
	pid_t main_pid;          /* host pid of the main guest program */
	/* uts names (--hostname, --kernel-release), changed by sethostname/
	 * setdomainname of a guest root; under uts_lock */
	pthread_mutex_t uts_lock;
	char hostname[65];
	mode_t umask0;           /* the first guest task's umask: the caller's (+1; 0: 022) */
	int core0_set;           /* core0_*: the caller's RLIMIT_CORE, the first guest task's virtual one */
	unsigned long long core0_cur, core0_max;
	int core_zero;           /* the real RLIMIT_CORE is {0, 0}, not {1, 1}: a caller's hard 0
				  * we could not raise, and a core_pattern that is no pipe (run.c) */
	char domainname[65];
	char release[65];
	/* /proc/sys values moat itself honours, writable by a guest root
	 * (fs/procfs.c procfs_lease_break_time): a write open gets an empty
	 * memfd whose dup is kept here (fd + 1, 0: none); the value is parsed
	 * from it when read or used. Under sysctl_lock. */
	pthread_mutex_t sysctl_lock;
	int lease_break_wfd;
	int lease_break_set;
	long lease_break_s;      /* /proc/sys/fs/lease-break-time, default 45 */
	/* SO_PASSCRED (syscalls/sys_peercred.c): native while every task's ids
	 * are the ones the kernel shows for all of them (the sandbox's native
	 * view: moat's own uid/gid); passcred_off once any task's differ, and
	 * from then on no guest socket has the kernel's flag. Under passcred_lock. */
	pthread_mutex_t passcred_lock;
	int passcred_off;
	uid_t start_uid;         /* --user: the ids the program started with */
	gid_t start_gid;
	const char *resolv_conf; /* the guest's /etc/resolv.conf text (DNS stub), or NULL */
	/* counters for --result (atomic adds; pipeline.c, tracer.c) */
	unsigned long n_trapped, n_denied, n_emulated, n_killed;
	unsigned long n_fork_refused, n_tasks_peak; /* the tracer's (one thread) */
	int init_gone;           /* the tracer reaped init_pid: never signal that pid again */
	long long last_activity_ms; /* CLOCK_MONOTONIC ms of the last trapped call or output (--idle-timeout) */
	/* the sandbox's own machine, as /proc and /sys show it (fs/procfs.c) */
	unsigned long long mem_limit; /* --memory bytes, 0: none */
	unsigned long pids_limit;     /* --pids, 0: none */
	unsigned long cpus_milli;     /* --cpus * 1000, 0: none */
	unsigned ncpus;               /* CPUs the guest sees (online/possible, cpuinfo, affinity) */
	cpu_set_t host_cpus;          /* the host's online CPUs, read at start: a SCHED_DEADLINE
				       * task's affinity must cover them (syscalls/sys_sched.c) */
	char boot_id[37];             /* /proc/sys/kernel/random/boot_id: random per sandbox */
	unsigned long long boot_ticks; /* the init's start (host boot clock ticks; from its clone, sentry/spawn.c, else procfs lazily; atomic) */
	/* Linux AIO (sentry/aio.c): fs.aio-nr is one host-wide count that no
	 * namespace or cgroup scopes; the sandbox's share of it and what its
	 * live contexts hold. The tracer's (one thread). */
	unsigned long aio_share, aio_held;
	long host_pid_max;            /* kernel.pid_max, read at start (sentry/tracer.c's task bound) */
	/* The host's reserve (sentry/hostres.c): what every sandbox together
	 * leaves the host of its one-per-host tables. Set up before the sentry
	 * confines itself; the tracer's (one thread). */
	int host_loadavg_fd;          /* /proc/loadavg (the host's task count), or -1 */
	long host_tasks_max;          /* the smaller of kernel.pid_max and kernel.threads-max */
	int host_aionr_fd;            /* /proc/sys/fs/aio-nr, or -1 */
	unsigned long host_aio_max;   /* fs.aio-max-nr */
	int host_test_low;            /* MOAT_TEST_HOST_LOW: every table taken as nearly full */
	unsigned long n_fork_host_low; /* forks refused by the pid reserve (also in n_fork_refused) */
	char *pstat_base;             /* /proc/stat's counters at the sandbox's first read of it (fs/procfs.c; never freed) */
};

/* Task table (kernel/tasks.c, driven by sentry/ptrace events). */
struct task *task_get(struct sandbox *sb, pid_t host_tid);   /* NULL if unknown */
struct task *task_get_vpid(struct sandbox *sb, pid_t vtid);  /* by guest pid */
/* The task a call names by guest pid: the caller (self) for 0 or its own
 * number, another by task_get_vpid. A reference either way, to task_put
 * whatever it is (a put skipped when it was the caller kept every thread
 * that named itself: its pidfd, fs and memory, fuzz87); NULL if none. */
struct task *task_get_named(struct sandbox *sb, struct task *self, pid_t vtid);
/* Linux's dumpable flag is the process's (its mm's): a thread's own
 * cred.nondump or its process's (the leader's, which every writer of a
 * thread's flag marks too: task_mark_nondump). The ptrace-mode checks read
 * this, never a thread's flag alone (red team 38). */
int task_nondump(struct sandbox *sb, struct task *t);
/* t's process became non-dumpable (a change of a thread's ids, PR_SET_DUMPABLE 0):
 * mark its leader too (t->lock not held) */
void task_mark_nondump(struct sandbox *sb, struct task *t);
void task_put(struct task *t);
/* Calls fn for each live thread-group leader; stops when fn returns nonzero. */
int task_for_each_leader(struct sandbox *sb, int (*fn)(struct task *, void *), void *arg);
/* Every task, threads included (a thread may have an fd table of its own,
 * unshare(CLONE_FILES), or the only one left once its leader exited). */
int task_for_each_thread(struct sandbox *sb, int (*fn)(struct task *, void *), void *arg);
/* The tracer reaped thread dead of group tgid: every task whose pd_parent it
 * was gets heir, or (heir < 0) a live thread of that group (not exited, not
 * reaped; none when dead is the leader: a leader is reaped after its
 * threads), else 0; with out, those of them with a parent-death signal set
 * are put in *out (a malloc'd array, counted references: the caller puts
 * them and frees it; no cap). The number put. The tasks are found through an
 * index by pd_parent: a dead thread no task names costs one bucket's look
 * under the read lock, no scan; the moves are made under the write lock. */
int task_pdeath_reparent(struct sandbox *sb, pid_t dead, pid_t tgid, pid_t heir, struct task ***out);
/* n, just made by parent's fork: its pd_parent is parent's tid, or (same:
 * CLONE_THREAD, CLONE_PARENT) parent's own pd_parent */
void task_pd_parent_set(struct sandbox *sb, struct task *n, struct task *parent, int same);
/* Is dev/ino the program (or ELF interpreter) a live process of the
 * sandbox runs? Linux's deny_write_access: opening it for writing or
 * truncating it is ETXTBSY. */
int task_text_busy(struct sandbox *sb, dev_t dev, ino_t ino);

/* Map a host id as seen by the sentry to what the guest's kernel would show. */
uid_t idmap_uid_to_guest(const struct idmap *m, uid_t host);
gid_t idmap_gid_to_guest(const struct idmap *m, gid_t host);
/* The permission model on host files (fs/vfs.c) goes through these two pairs
 * only, so a change of how sandboxes map ids only has to change them:
 *  - the host id a guest credential (fsuid/fsgid) acts as on host files,
 *    (uid_t)-1 if it acts as no host id;
 *  - the host id behind an owner shown to the guest (the inverse of
 *    idmap_*_to_guest), (uid_t)-1 for the overflow id of unmapped owners. */
uid_t idmap_cred_uid_to_host(const struct idmap *m, uid_t guest);
gid_t idmap_cred_gid_to_host(const struct idmap *m, gid_t guest);
uid_t idmap_view_uid_to_host(const struct idmap *m, uid_t view);
gid_t idmap_view_gid_to_host(const struct idmap *m, gid_t view);

/* Process group, session and tty_nr of guest process vpid, from its
 * /proc/<vpid>/stat in the guest's procfs (sb->guest_procfd). 0 or -errno
 * (-ESRCH: no such process). Any out pointer may be NULL. */
int task_proc_ids(struct sandbox *sb, pid_t vpid, pid_t *pgrp, pid_t *sid, int *tty_nr);
/* vtid is the guest's init's (moat-init, no task of the table: pid 1 or
 * its act thread, by its number in the guest's pid namespace) */
int task_is_init(struct sandbox *sb, pid_t vtid);

/* Duplicate guest fd `guestfd` of task t into the sentry (pidfd_getfd on
 * t->pidfd). Returns a host fd (caller closes) or -EBADF. On a worker serving
 * a call of t's thread group (task_io_caller), inside the copy guard below
 * (-ESRCH: the call is gone; -EAGAIN: held off by an exec past 3 s). */
int task_getfd(struct task *t, int guestfd);

/* ---- the copy guard and the exec fence (red team 29) ----
 * Every guest-memory access and fd fetch a worker makes for a trapped call
 * runs between task_io_begin and task_io_end: the thread group's in-flight
 * count goes up (one atomic) and its fence is checked; with nfd >= 0 the
 * call's notification must be valid (ID_VALID) after the guard is entered,
 * so the access happens while the caller is provably still in its trapped
 * call, in its image. The proof is made again (an ioctl) only when the
 * group's gen moved since this worker last made it for this call inside the
 * guard (the pipeline's ID_VALID after the copy-in is one: task_io_proved):
 * gen moves when an exec is fenced and when a task of the group is reaped,
 * the only ways the pid the copy names can stop being the caller's image
 * (an exec replaces the mm under it; a reaped tid may be reused). The tracer
 * raises the group's fence at an exec stop before it lets the exec run
 * (task_fence_close: gen moves, new copies wait, in-flight ones drain, up to
 * a bound) and lowers it at PTRACE_EVENT_EXEC, the failed exec's exit or
 * the task's death (task_fence_open). A copy never lands in the image an
 * exec put under the caller's pid. Groups share slots by tgid modulo a
 * table size: a collision only makes one group wait for another's exec, or
 * check again. */
#define TASK_IO_WAIT_MS 3000
/* 0: inside (call task_io_end); -EAGAIN: fenced past TASK_IO_WAIT_MS;
 * -ESRCH: the notification (nfd, id) is no longer valid */
int task_io_begin(const struct task *t, int nfd, uint64_t id);
void task_io_end(const struct task *t);
/* task_io_begin(t, -1, 0) that never waits: -EAGAIN while t's group is
 * fenced (taking a second group's guard while one is held) */
int task_io_try(const struct task *t);
/* This worker thread serves call id (on nfd) of task t (NULL: none): its
 * task_getfd of t's group are guarded with that call's ID_VALID. */
void task_io_caller(const struct task *t, int nfd, uint64_t id);
/* The pipeline, inside a guard entered with nfd -1: the call's ID_VALID just
 * succeeded; it stands for this call's accesses until the group's gen moves */
void task_io_proved(void);
/* The guard for an access to t's group on this worker: 1 entered (the
 * call's proof checked; call task_io_end), 0 not this thread's caller's
 * group (no guard), or -errno as task_io_begin. */
int task_io_begin_caller(const struct task *t);
/* The tracer: raise tgid's fence and wait (up to timeout_ms) until no copy
 * of the group is in flight. 0 (fenced), or -EAGAIN (timed out: the fence is
 * lowered again). */
int task_fence_close(pid_t tgid, int timeout_ms);
void task_fence_open(pid_t tgid);
/* The execs of t's group that are over (counted at task_fence_open, before
 * the fence comes down), read inside a guard of t (task_io_begin). A check
 * of the target made inside a guard and an access made inside a later guard
 * see the same image iff the count did not move between them: no exec of
 * the group can run while a guard is held, and one that ran between the
 * two was counted before the second guard could enter. (Slots are shared by
 * tgid modulo a table size: another group's exec can move it too, so a
 * move means "maybe".) The ptrace-mode checks made at one time and acted on
 * later (process_vm_*, procfs, pidfd_getfd: ARCHITECTURE.md "Exec") use it. */
unsigned task_io_execs(const struct task *t);
/* The calling thread (the tracer, which lowers the fences) never waits in
 * task_io_begin: a fence up is -EAGAIN at once (waiting would hold the
 * exec's own PTRACE_EVENT_EXEC, 3 s) */
void task_io_no_wait(void);
/* The tracer: a task of tgid was reaped (its tid may be reused) */
void task_io_gone(pid_t tgid);

/* ---- the reap gate (gaps31) ----
 * A worker that acts on another task by its host pid (process_vm_* for a
 * guest call naming another process: syscalls/sys_signal.c) holds the
 * gate; the tracer reaps (every wait4 that may consume an exit) only with
 * it closed, after the holds drain (it waits for a task's exit with
 * waitid WNOWAIT, then closes the gate, then wait4s). Every pid number is
 * freed by a reap, and only a task that has exited (its pidfd readable) is
 * reaped: a task a holder finds alive through its pidfd keeps its numbers
 * until the holder lets go. task_reap_hold: 0, or -EAGAIN when the tracer
 * kept it closed past TASK_IO_WAIT_MS. */
int task_reap_hold(void);
void task_reap_release(void);
void task_reap_close(void);
void task_reap_open(void);
int task_fence_up(pid_t tgid);


/* ---- for the sentry (task lifecycle, driven by ptrace events) ---- */

/* Create and register a task for host tid/tgid. parent: the task that cloned
 * it (NULL for the first guest task). share_fs: CLONE_FS. Its guest ids start
 * as the host ids; the sentry sets the real ones (the parent's fork return).
 * Returns a reference. */
struct task *task_create(struct sandbox *sb, pid_t tid, pid_t tgid,
			 struct task *parent, int share_fs);
/* Unregister (the task exited); drops the table's reference. */
void task_remove(struct sandbox *sb, pid_t tid);
/* The virtual ids a process exited with (its leader's at task_remove),
 * kept by guest pid until the slot is taken by another (a small table,
 * ZCRED_SLOTS entries keyed by pid): /proc/<pid>/status of a zombie
 * (fs/procfs.c) shows them, where the kernel's own text names the ids in
 * the sentry's user namespace (root-run, the sandbox's host uid: red team
 * 63). 1 and *out filled (cred_free it) when vpid's entry is there, else 0. */
int task_zombie_cred(struct sandbox *sb, pid_t vpid, struct cred *out);
/* Re-key a task after a non-leader thread exec'd (it takes the leader's tid). */
void task_rekey(struct sandbox *sb, pid_t old_tid, pid_t new_tid);
int task_count(struct sandbox *sb);
/* Up to max tids of entries of thread group tgid other than its leader's
 * (tid != tgid), into out; returns how many. Once the leader's number is
 * reaped the group is empty, and any such entry is stale: a thread whose
 * death was reported under another number (an exec that took the
 * leader's pid, killed before its PTRACE_EVENT_EXEC was handled). */
int task_group_others(struct sandbox *sb, pid_t tgid, pid_t *out, int max);
/* The same without the table's lock: a hint that may be a call late (the
 * pipeline's check whether more than one guest task could be trapping). */
int task_count_hint(void);

/* Releases a pending exec (closes its fds); set by the sentry (exec.c). */
void task_set_pexec_free(void (*fn)(struct pending_exec *));

/* The task's root (chroot) into buf: 1 when it has one, 0 for the
 * sandbox's "/" (buf = "/"). */
int task_root(const struct task *t, char *buf, size_t len);
/* path with the task's root taken off, in place: 0, or -1 when path is not
 * beneath the root (left whole) */
int task_root_strip(const struct task *t, char *path);
struct fs_ctx *fs_ctx_new(const char *cwd, mode_t umask);
/* unshare(CLONE_FS): give t a copy of the fs_ctx it shares with others
 * (the pointer swapped under t->lock) */
void task_unshare_fs(struct task *t);
/* A counted reference to t's fs_ctx (NULL: none), for a reader of another
 * task's (its cwd, root, umask): that task may unshare meanwhile and the
 * old fs_ctx's last sharer exit. Put with fs_ctx_put. A task's own calls
 * may use t->fs directly (only the task itself swaps it). */
struct fs_ctx *task_fs_get(struct task *t);
/* 1 if t's fs_ctx has a root of its own (chroot): read under t's lock,
 * without a reference (every walk asks, twice; the fs_ctx of a
 * process's threads is one, and its count one cache line for them all) */
int task_fs_rooted(struct task *t);
void fs_ctx_put(struct fs_ctx *fs);
/* fn on every live fs_ctx of the sentry (each held by a counted reference
 * for the call, no lock held: fn takes fs->lock itself) */
void fs_ctx_for_each(void (*fn)(struct fs_ctx *fs, void *arg), void *arg);

/* Does the task have a signal pending that it neither blocks nor ignores?
 * (Read from the guest procfs' <vtid>/status: SigPnd|ShdPnd & ~SigBlk & ~SigIgn.) */
int task_signal_pending(struct task *t);
/* The tracer's mark of a task in a group-stop (jobstop: 'T' in its stat),
 * counted. */
void task_jobstop_set(struct task *t, int on);
/* 1 when another thread of t's process is in a group-stop: a wait the
 * sentry makes for t (a FIFO open, a lock) must end (-ERESTARTSYS) for t
 * to take its part, as a native interruptible wait does. The SIGSTOP that
 * began it was taken by that thread, so t's pending signals do not show
 * it, and t waits killably only (WAIT_KILLABLE_RECV): before red team 88
 * the group-stop never completed (no WUNTRACED for the parent, ^Z of such
 * a process hung) until the wait ended. */
int task_stop_pending(struct task *t);
/* A wait the sentry makes for t (a FIFO open, a lock) must end and restart
 * (-ERESTARTSYS): a signal pending for it, or its process stopping. */
int task_wait_must_end(struct task *t);


#endif
