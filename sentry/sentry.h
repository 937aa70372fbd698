/* sentry/sentry.h - one sandbox: set-up, the ptrace thread, the notification
 * workers, exec, policy and audit.
 *
 * Lifecycle of `moat run` (sentry_run):
 *   1. plan the guest's view (view.c): gofer exports + VFS mounts
 *   2. start the gofer (gofer/) with the caller's privilege, then give it up
 *      (privilege.c: own host uid when root, own user + mount namespace),
 *      build the VFS (fs/)
 *   3. spawn the guest (spawn.c): init (pid 1 of new user/pid/mount/net/ipc/
 *      uts/cgroup namespaces, an empty read-only tmpfs root holding only the
 *      loader) which forks the program; the program drops capabilities, sets
 *      no_new_privs, installs the seccomp filter generated from the syscall
 *      table and hands its listener to the sentry, then execs (a traced exec)
 *   4. pivot into its own root (privilege.c: read-only binds of the exports), confine the sentry itself
 *      (confine.c; a failure ends the sandbox) and serve: the main thread is the
 *      ptrace tracer (tracer.c, exec.c); worker threads answer notifications
 *      (pipeline.c)
 *   5. when the program exits: kill the pid namespace, reap, stop the gofer,
 *      exit with the program's status (128+N for signal N).
 * Limits (limits.c) hook in: the cgroup, its cleanup helper, the --result
 * file and the output pipes before step 2; the cgroup move in step 3; the
 * watchdog and relay threads after step 4; --result and the cgroup's removal
 * after step 5.
 */
#ifndef MOAT_SENTRY_SENTRY_H
#define MOAT_SENTRY_SENTRY_H

#include <stdint.h>
#include <stdio.h>
#include <signal.h>
#include <sys/types.h>

struct sandbox;
struct rusage;
struct sc_call;
struct task;
struct netpolicy;
struct broker_secret;

struct bind_spec {
	char *src;     /* absolute host path */
	char *dst;     /* absolute guest path */
	int writable;
	int cow;       /* :cow, a copy-on-write view (gofer overlayfs) */
	int shared;    /* ,shared: no cached lookups (host changes seen at once) */
	int tmpfs;     /* --tmpfs DST[:size=N]: src is NULL */
	unsigned long long size; /* tmpfs: bytes, 0 = the default */
};

/* the signal that interrupts the output relay's blocked write (limits.c) */
#define MOAT_RELAY_SIG (SIGRTMIN + 2)

#define MAX_BINDS 64
#define MAX_ENV 256

struct sentry_config {
	/* the caller's blocked signals and ignored dispositions when moat
	 * started: the program gets them, as across a native exec (nohup,
	 * a shell's background job: SIGINT and SIGQUIT ignored) */
	sigset_t caller_blocked, caller_ignored;
	/* bit N: the caller started moat with fd N (0-2) closed (the CLI put
	 * /dev/null there); the program gets it closed */
	int caller_closed;
	/* the caller's soft RLIMIT_NOFILE (moat runs at the hard one), the
	 * program's; 0: leave it */
	unsigned long long caller_nofile_cur;
	/* the caller's umask + 1 (0: unknown, 022), the program's */
	mode_t caller_umask;
	const char *root;                 /* --root, or NULL for the system view */
	struct bind_spec binds[MAX_BINDS];
	int nbinds;
	const char *workdir;              /* --workdir, or NULL ("/") */
	char *env[MAX_ENV];               /* --env K=V */
	int nenv;
	int user_set;                     /* --user UID[:GID] given */
	uid_t user_uid;
	gid_t user_gid;
	const char *hostname;             /* --hostname, or NULL ("moat") */
	const char *kernel_release;       /* --kernel-release, or NULL (MOAT_KERNEL_RELEASE) */
	int trace;                        /* --trace */
	int tty;                          /* -t: a private pty */
	int tty_controls_all;             /* --tty-controls=all: -t's output unfiltered */
	const char *audit_path;           /* --audit */
	unsigned long long audit_max_bytes; /* --audit-max-bytes: per stream, 0 = no cap */
	unsigned long audit_rate;         /* --audit-rate: events/s (burst 2x), 0 = no cap */
	unsigned char deny[512];          /* --deny SYSCALL: deny[nr] = 1 (SC_NR_MAX) */
	char *const *argv;                /* program and arguments */
	struct netpolicy *net;            /* --net allow=...: egress rules (NULL: none) */
	/* --secret NAME@HOST[:PORT] (broker.h): a table mapped MADV_WIPEONFORK
	 * (no forked process inherits it), wiped and unmapped once moat-broker
	 * has it; its rules are in net (netpol_rule.secret) */
	struct broker_secret *secrets;
	int nsecrets;
	int pub_host[16], pub_guest[16];  /* --publish HOSTPORT:GUESTPORT */
	int npub;
	/* limits (limits.c); 0 = none */
	unsigned long long memory;        /* --memory: bytes */
	unsigned long long disk;          /* --disk: bytes of the writable layer, 0 = none */
	unsigned long pids;               /* --pids: tasks (threads count) */
	unsigned long cpus_milli;         /* --cpus X: X * 1000 */
	unsigned long long timeout_ms;    /* --timeout */
	unsigned long long idle_ms;       /* --idle-timeout */
	unsigned long long kill_after_ms; /* --kill-after: SIGKILL this long after a forwarded
					   * SIGTERM/SIGINT/SIGHUP (0: at once) */
	unsigned long long output_limit;  /* --output-limit: bytes per stream */
	const char *result_path;          /* --result FILE */
	const char *overlay;              /* --overlay memory|DIR|none (NULL: memory) */
	const char *export_dir;           /* --export DIR */
	unsigned long long export_max_files, export_max_bytes;
};

/* Run a sandbox to completion; returns moat's exit status. */
int sentry_run(const struct sentry_config *cfg);

/* ---- audit (audit.c) ---- */
enum decision { DEC_ALLOW = 0, DEC_DENY, DEC_KILL };
struct audit;
#define AUDIT_DEFAULT_MAX_BYTES (64ULL << 20)
#define AUDIT_DEFAULT_RATE 5000
/* Caps of each stream (JSON file, trace lines): see audit.c. */
struct audit_limits {
	unsigned long long max_bytes;   /* 0: no cap */
	unsigned long rate;             /* events per second, burst 2x; 0: no cap */
};
struct audit *audit_open(const char *path, int trace, const struct audit_limits *lim,
			 char *err, size_t errlen);
/* Write the pending "dropped" records (the end of the sandbox); 1 when a
 * write to the --audit file failed and events were lost (said on stderr) */
int audit_flush(struct audit *a);
/* One event per trapped call. args: decoded text; ret: value or -errno. */
void audit_event(struct audit *a, struct sandbox *sb, struct task *t, pid_t host_tid,
		 const char *syscall, const char *args, int decision, long ret,
		 const char *note);
int audit_wants_args(struct audit *a);

/* ---- policy (policy.c) ---- */
struct policy;
struct policy *policy_new(void);
/* Add the parts that define behaviour (filter program, mount table text). */
void policy_add(struct policy *p, const void *data, size_t len);
uint64_t policy_version(struct policy *p);
/* Deny a syscall beyond the defaults (EPERM, audited), whatever its class. */
void policy_deny_syscall(struct policy *p, int nr);
/* The one check point every trapped call passes. Returns DEC_* and an errno
 * for denials in *err. */
int policy_check(struct policy *p, struct sc_call *c, int *err);
int policy_check_exec(struct policy *p, struct task *t, const char *canon, int *err);

/* ---- exec (exec.c) ---- */
/* At a PTRACE_EVENT_SECCOMP stop of an execve/execveat (ptrace thread),
 * with the registers the tracer read there (struct user_regs_struct).
 * Returns 1 when the call was rewritten to the loader with a pending exec. */
struct user_regs_struct;
int exec_stop(struct sandbox *sb, struct task *t, const struct user_regs_struct *regs);
/* The rewritten exec failed (its syscall exit) / happened (PTRACE_EVENT_EXEC). */
void exec_drop(struct task *t);
void exec_done(struct task *t);
/* the loader's pin (tracer.c): its own mask back, once, from any thread */
void task_loader_unpin(struct task *t);
struct pending_exec;
void exec_pexec_free(struct pending_exec *p);
/* Start-up: the program's first exec resolved once ahead (its look-ups cached). */
void exec_prewarm(struct sandbox *sb, const char *path, const char *cwd);
/* A worker connecting an AF_UNIX socket (stype: its SO_TYPE, 0 unknown) to
 * in (inlen bytes, copied once): the path resolved in the VFS to its
 * abstract name in *out (*outlen bytes). 0, -errno, or 1 (not a path: as given). */
struct sockaddr_un;
int unixsock_resolve_connect(struct sandbox *sb, struct task *t, int stype, const struct sockaddr_un *in,
			     size_t inlen, struct sockaddr_un *out, unsigned *outlen);
/* A worker about to wait (not in a gofer round trip, which does this
 * itself): another worker takes RECV over (pipeline.c). */
void pipeline_may_block(void);
/* Around a wait for another guest task (a FIFO's peer, a lock, a lease break,
 * a connect's handshake): the worker passes the lead on and counts outside
 * MAX_WORKERS meanwhile (at most `cap` such workers, pipeline_set_wait_cap:
 * the tracer's task bound). */
void pipeline_wait_begin(void);
void pipeline_wait_end(void);
void pipeline_set_wait_cap(int cap);
/* At a PTRACE_EVENT_SECCOMP stop of bind/connect (unixsock.c), with the
 * registers the tracer read there. */
void unixsock_stop(struct sandbox *sb, struct task *t, const struct user_regs_struct *regs);
/* The syscall exit of a recvfrom the stop asked to see (t->sock_exit). */
void unixsock_exit(struct sandbox *sb, struct task *t);
/* Linux AIO's host-wide count (aio.c): the sandbox's share of
 * fs.aio-max-nr, read before confinement. */
unsigned long aio_share(void);
/* The host's reserve of its one-per-host tables (hostres.c): while less
 * than 1/HOST_RESERVE_DIV of one is free, a sandbox gets no more of it past
 * a floor. hostres_setup opens the counts before confinement. */
#define HOST_RESERVE_DIV 8
#define HOST_PIDS_FLOOR 16    /* tasks: a shell pipeline still forks */
#define HOST_FILES_FLOOR 1024 /* files (or fs.file-max / 1024, the larger) */
void hostres_setup(struct sandbox *sb);
/* 1: a fork of a sandbox of tasks tasks is refused (the host's pids) */
int hostres_pids_low(struct sandbox *sb, int tasks);
/* 1: an io_setup of v events is refused (the host's AIO events) */
int hostres_aio_low(struct sandbox *sb, unsigned long v);
/* the files a sandbox may hold while the host's file table is low, and
 * whether it is (used of file_max, from fs/file-nr: limits.c) */
unsigned long long hostres_files_floor(unsigned long long file_max);
int hostres_files_low(struct sandbox *sb, unsigned long long file_max, unsigned long long used);
/* the bytes a sandbox may hold (processes and in-memory files) while the
 * host's memory is low: MemTotal / 64 within [64 MiB, 1 GiB]; and whether
 * it is (MemAvailable + SwapFree under a sixteenth of MemTotal: limits.c) */
#define HOST_MEM_RESERVE_DIV 16
#define HOST_MEM_FLOOR_MIN (64ULL << 20)
#define HOST_MEM_FLOOR_MAX (1ULL << 30)
unsigned long long hostres_mem_floor(unsigned long long mem_total);
int hostres_mem_low(struct sandbox *sb, unsigned long long mem_total, unsigned long long mem_avail);
/* At a PTRACE_EVENT_SECCOMP stop (any call; acts on io_setup/io_destroy):
 * an io_setup past the share, or into the host's reserve (hostres.c), is
 * skipped with -EAGAIN; t->aio_exit is set
 * when the call must be seen at its syscall exit (aio_exit). */
void aio_stop(struct sandbox *sb, struct task *t, const struct user_regs_struct *regs);
void aio_exit(struct sandbox *sb, struct task *t);
/* A new task: share_vm (CLONE_VM) shares its parent's account, else none. */
void aio_fork(struct task *parent, struct task *child, int share_vm);
/* The task leaves its address space (exec, exit): an account whose last
 * task left frees its events (the kernel's exit_aio). */
void aio_leave(struct sandbox *sb, struct task *t);

/* The loader's MOAT_SYS_LOADER call (worker thread). */
long exec_loader_call(struct sc_call *c);
extern const char *const *exec_initial_path; /* PATH dirs for the first exec */

/* ---- the tracer (tracer.c): the ptrace loop on the main thread ---- */
struct tracer_args {
	struct sandbox *sb;
	pid_t *gofer_pid;           /* set to -1 when the gofer dies */
	int *gofer_status;          /* its wait status, once reaped here */
	int gofer_export;           /* --export: the gofer stays until every task is
				     * gone (its export needs the layers at rest) */
	int gofer_ctl;              /* shut down when the program exits: the gofer leaves */
	int sync_sock;              /* the program sends its listener here (closed) */
	uid_t uid;
	gid_t gid;
	const char *workdir;        /* the program's cwd */
	int crash_test;             /* MOAT_TEST_CRASH: fault once the guest runs */
	volatile pid_t *forward_to; /* signals to moat go to the program (-1: it has exited) */
	double t0;                  /* for dbg timings */
	int pids_max;               /* --pids: the task table's bound (0: none) */
	int guest_pidns;            /* the guest's pid namespace (-1: unknown) */
	/* called once, right after the program is released from its first
	 * stop (it then drops its capabilities and installs its filter, on
	 * another CPU) and before the tracer waits for its listener; set to
	 * NULL when called (run.c: the rest of the sentry's set-up) */
	void (*on_release)(void *);
	void *on_release_arg;
	/* out: the program's wait status and rusage (it and the children it waited for) */
	int main_raw, main_seen;
	struct rusage *main_ru;
};
/* Trace every guest task until the program and the init are gone; returns
 * the program's status (128+N for signal N). */
int tracer_run(struct tracer_args *a);

/* ---- limits (limits.c): cgroup, rlimits, timeouts, output cap, --result ---- */
enum {
	REASON_NONE = 0, REASON_EXITED, REASON_SIGNALED, REASON_TIMEOUT, REASON_IDLE,
	REASON_MEMORY, REASON_PIDS, REASON_OUTPUT, REASON_POLICY, REASON_SENTRY, REASON_KILL_AFTER,
	REASON_FILES, REASON_N
};
struct limits;
struct rusage;
/* With the caller's privilege, before the gofer and the privilege drop:
 * opens the --result file, makes the sandbox's cgroup (and its cleanup
 * helper) and the output pipes. NULL with a reason in err. */
struct limits *limits_setup(const struct sentry_config *cfg, struct sandbox *sb, double t0,
			    char *err, size_t errlen);
/* What moat-init needs: the program's stdout/stderr (-1: the caller's own),
 * RLIMIT_NPROC and RLIMIT_DATA (0: unchanged). */
void limits_spawn_args(const struct limits *l, int *out_fd, int *err_fd, unsigned long *nproc,
		       unsigned long long *data);
/* Right after the init's clone, before it is let go: put it in the cgroup (-errno). */
int limits_attach(void *limits, pid_t init_pid, char *err, size_t errlen);
/* Whether a memory cgroup holds --memory (else the watchdog samples). */
int limits_memory_by_cgroup(const void *limits);
/* Before the gofer's clone: the cgroups it moves itself into once set up
 * (gofer_join_cgroups). After it: its PSS is ours to report. */
void limits_gofer_cgroups(void *limits);
void limits_attach_gofer(void *limits, pid_t gofer_pid);
void limits_note_relay(void *limits, pid_t pid);
/* Once confined, before the tracer: the watchdog and output relay threads. */
int limits_start(struct limits *l, char *err, size_t errlen);
/* End the sandbox for a reason (SIGTERM to all, grace, SIGKILL of the init). */
void limits_end(struct limits *l, int reason);
/* When --timeout ends the run (CLOCK_MONOTONIC ms, as the watchdog counts
 * it); 0: no --timeout. The export after the program is bounded by it too
 * (run.c: EXPORT_GRACE_MS). */
double limits_timeout_at(const struct limits *l);
/* moat got SIGTERM, SIGINT or SIGHUP (forwarded to the program): the first
 * arms a --kill-after timer (SIGALRM), a second one, or --kill-after 0, kills
 * the sandbox at once. Async-signal-safe (moat's signal handler). */
void limits_term_signal(int sig);
/* moat got SIGTERM, SIGINT or SIGHUP after the program's end: the rest of
 * its output is not waited for past a grace (limits.c relay_wait).
 * Async-signal-safe. */
void limits_drain_stop(void);
/* The sandbox is ending (a limit, a signal to moat, the init's end):
 * audit.c's writes stop waiting for a stream nobody reads. */
int limits_ending(void);
/* SIGALRM: the --kill-after grace is over. Async-signal-safe. */
void limits_kill_after(void);
/* After the tracer: join, write --result, say why on stderr when the end
 * was not a normal exit, remove the cgroup. raw: the program's wait status. */
void limits_output_wait(struct limits *l); /* the guest gone: its output relayed (before tty_finish) */
int limits_finish(struct limits *l, int status, int raw, int have_raw, const struct rusage *ru);
const char *limits_reason_name(int r);

/* ---- pipeline (pipeline.c) ---- */
int pipeline_start(struct sandbox *sb, int notify_fd);
/* After the guest is gone: wait (up to timeout_ms) for calls in flight. */
void pipeline_drain(int timeout_ms);
/* MOAT_PROFILE=1: print the per-stage means (stderr) */
void pipeline_profile_report(void);

/* ---- crash (crash.c) ---- */
void crash_install(pid_t kill_on_crash);

/* ---- confinement of the sentry itself (confine.c) ---- */
int confine_sentry(struct sandbox *sb, char *err, size_t errlen);
/* a Landlock domain scoping the sentry's tree's signals and ptrace to
 * itself; before netd and the guest exist (confine.c) */
int confine_scope(char *err, size_t errlen);
/* MOAT_TEST_CONFINEMENT=1: once confined, try what a compromised sentry
 * would (open host paths, openat2, socket, exec, kill of
 * MOAT_TEST_CONFINEMENT_PID) and print one "confinement-probe" line each. */
void confine_selftest(struct sandbox *sb, pid_t gofer);

/* ---- -t, a private pty (tty.c) ---- */
/* before the guest exists, the gofer started: a pty of the device export
 * dev_export's "pts" (or of the host's if -1 or that fails) */
int tty_open(int gofer_ctl, int dev_export, int *slave_out, char *err, size_t errlen);
int tty_start(int controls_all, char *err, size_t errlen);            /* raw mode, relay thread */
void tty_finish(void);                                  /* drain, restore the caller's terminal */
int tty_master(void);                                   /* -1 without -t */
void tty_guard_start(struct sandbox *sb); /* without -t: the caller's terminal settings (fds 0-2) kept */
void tty_guard_restore(void); /* ...put back, output restarted (guest gone, a limit's kill, exit) */
void tty_stdio_fresh(struct sandbox *sb, int closed); /* without -t: a fresh description of a terminal or pipe stdio */
void tty_background_stdin(void); /* without -t, started in the background: stdin /dev/null */
int tty_relay_plan(int limits_pipes); /* without -t: a terminal stdout/stderr relayed through the filter */
int tty_stdio_out(int fd); /* (limits.c) the fd moat writes the guest's fd 1-2 output to */
void tty_stdin_read_only(const char *why); /* a writable terminal or FIFO stdin reopened read-only */
void tty_stdio_write_only(void); /* (tty_background_stdin) a read-write terminal stdout/stderr reopened write-only */
struct sandbox;
void tty_jobctl_start(struct sandbox *sb); /* without -t: ^Z stops the guest too */
void tty_jobctl_kick(void); /* a forwarded signal: a guest stopped by it continues */
/* limits.c: how many of n bytes of the guest's output the relay passes on */
extern size_t (*tty_out_hook)(size_t n);

/* ---- host privilege (privilege.c) ---- */
/* Run as root, each sandbox's sentry and guest get a block of host ids of
 * their own: MOAT_UID_BASE + slot * MOAT_UID_BLOCK, the slot claimed with a
 * flock on MOAT_UID_LOCK_DIR/<slot>, held by the gofer. */
#define MOAT_UID_BASE 0x40000000u
#define MOAT_UID_BLOCK 65536u
#define MOAT_UID_SLOTS 4096u
#define MOAT_UID_LOCK_DIR "/run/moat-uids"
struct priv {
	uid_t host_uid;          /* the sentry's (and the guest's) uid on the host */
	gid_t host_gid;
	unsigned slot;
	int lockfd;              /* the claim (root-run) until the gofer has it, else -1 */
	int locktree;            /* the read-only tree lockfd was opened through, or -1 */
	int owner_map;           /* root-run: our user namespace maps every host id
				  * onto itself (our fstat shows real owners) */
};
/* Root-run: claim a free slot (before the gofer starts: it keeps the claim). */
int priv_claim(struct priv *p, char *err, size_t errlen);
/* Become the sandbox's host uid (root-run) and enter a user + mount namespace
 * of the sentry's own. After this nothing of the sentry is privileged on the
 * host. */
int priv_drop(struct priv *p, char *err, size_t errlen);
/* Give up every capability (all sets, bounding and ambient; securebits
 * locked) in the sentry's user namespace: this thread only (threads and
 * children made after inherit it). 0 or -errno. */
int priv_drop_caps(void);
/* moat-reopen (sentry/reopen.c), root-run with every host id mapped:
 * reopen_helper_fork spawns it (clone(CLONE_VM): no copy of our memory) as
 * soon as the sentry runs as the sandbox uid in its own user namespace, and
 * it execs its program (reopen/reopen_main.c, from a memfd: none of our
 * pages); it waits.
 * reopen_helper_start hands it the guest's user namespace (userns_fd) and
 * procfd: it enters the one, confines itself and serves
 * procfs_set_reopen_helper's read-only reopens under the other. Each 0 or
 * -1 with err set. */
int reopen_helper_fork(char *err, size_t errlen);
int reopen_helper_start(int procfd, int userns_fd, char *err, size_t errlen);
/* at teardown: its channel closed, the helper reaped (nothing when none) */
void reopen_helper_stop(void);
void reopen_helper_shutdown(void); /* the program exited: its channel shut, no wait */
int reopen_helper_reaped(pid_t tid); /* 1: tid was the helper, reaped by the tracer */
void reopen_helper_kill(void); /* die(): SIGKILL and reap */
pid_t reopen_helper_pid(void); /* -1: not started */
pid_t limits_die_release(void); /* die(): the cgroup helper told to go; its pid */
/* 1 if this thread holds any capability (or bounding-set entry), 0 if
 * none, -1 if it cannot tell */
int priv_caps_held(void);
/* 1 once priv_drop_caps has seen this thread hold none (for the test hook:
 * the confined sentry may not capget) */
int priv_caps_verified_none(void);
struct gofer_export;
/* Pivot the sentry into an empty read-only tmpfs holding read-only binds of
 * the host-directory exports (hidden names masked) at "/<export index>". */
int priv_sentry_root(const struct gofer_export *ex, size_t n, char *err, size_t errlen);
/* Its end (joins the old root's detach, which runs in a thread beside the
 * wait for the gofer; makes the root read-only, opens the export roots):
 * before anything else reads a path or the guest runs. */
int priv_sentry_root_finish(char *err, size_t errlen);
/* After priv_drop, before any helper or the guest's init inherits them: a
 * directory among fds 0-2 (`moat run ... < DIR`) becomes an empty read-only
 * tmpfs of its own (red team 90). 0, or -errno with err set. */
int priv_stdio_dirs(char *err, size_t errlen);
/* After priv_sentry_root: an O_PATH root fd per export index, -1 for an
 * export without a bind (not a host directory, or unreachable for our uid). */
const int *priv_export_roots(size_t *n);
/* Export i's root is fd from now on (the gofer's read-only clone of a cow
 * export's overlay): allowed to openat2/readlinkat by confine_sentry like
 * the others. */
void priv_add_export_root(size_t i, int fd);
/* The program has exited (its init killed, the gofer shut down): the cow
 * roots (detached clones) are dropped by a detached thread, their fd
 * numbers left on /.empty (MOAT_DEBUG: "export roots releasing: N", N the
 * cow roots, then ", the exports' box" when the detached box goes too). */
void priv_export_roots_release(void);

/* ---- the guest's view (view.c) ---- */
struct vfs_mount_spec;
struct gofer_export;
struct view {
	struct gofer_export *exports;
	size_t nexports;
	struct vfs_mount_spec *mounts;
	size_t nmounts;
	char home[4096];
	char *desc;          /* text form, hashed into the policy version */
};
int view_plan(const struct sentry_config *cfg, struct view *v, char *err, size_t errlen);

#endif
