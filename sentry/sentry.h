/* sentry/sentry.h - one sandbox: set-up, the ptrace thread, the notification
 * workers, exec, policy and audit.
 *
 * Lifecycle of `moat run` (sentry_run):
 *   1. plan the guest's view (view.c): gofer exports + VFS mounts
 *   2. start the gofer (gofer/), build the VFS (fs/)
 *   3. spawn the guest (spawn.c): init (pid 1 of new user/pid/mount/net/ipc/
 *      uts/cgroup namespaces, an empty read-only tmpfs root holding only the
 *      loader) which forks the program; the program drops capabilities, sets
 *      no_new_privs, installs the seccomp filter generated from the syscall
 *      table and hands its listener to the sentry, then execs (a traced exec)
 *   4. confine the sentry itself (confine.c) and serve: the main thread is the
 *      ptrace tracer (tracer.c, exec.c); worker threads answer notifications
 *      (pipeline.c)
 *   5. when the program exits: kill the pid namespace, reap, stop the gofer,
 *      exit with the program's status (128+N for signal N).
 */
#ifndef MOAT_SENTRY_SENTRY_H
#define MOAT_SENTRY_SENTRY_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

struct sandbox;
struct sc_call;
struct task;

struct bind_spec {
	char *src;     /* absolute host path */
	char *dst;     /* absolute guest path */
	int writable;
};

#define MAX_BINDS 64
#define MAX_ENV 256

struct sentry_config {
	const char *root;                 /* --root, or NULL for the system view */
	struct bind_spec binds[MAX_BINDS];
	int nbinds;
	const char *workdir;              /* --workdir, or NULL ("/") */
	char *env[MAX_ENV];               /* --env K=V */
	int nenv;
	int trace;                        /* --trace */
	const char *audit_path;           /* --audit */
	unsigned char deny[512];          /* --deny SYSCALL: deny[nr] = 1 (SC_NR_MAX) */
	char *const *argv;                /* program and arguments */
};

/* Run a sandbox to completion; returns moat's exit status. */
int sentry_run(const struct sentry_config *cfg);

/* ---- audit (audit.c) ---- */
enum decision { DEC_ALLOW = 0, DEC_DENY, DEC_KILL };
struct audit;
struct audit *audit_open(const char *path, int trace, char *err, size_t errlen);
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
/* At a PTRACE_EVENT_SECCOMP stop of an execve/execveat (ptrace thread).
 * Returns 1 when the call was rewritten to the loader with a pending exec. */
int exec_stop(struct sandbox *sb, struct task *t);
/* The rewritten exec failed (its syscall exit) / happened (PTRACE_EVENT_EXEC). */
void exec_drop(struct task *t);
void exec_done(struct task *t);
struct pending_exec;
void exec_pexec_free(struct pending_exec *p);
/* At a PTRACE_EVENT_SECCOMP stop of bind/connect (unixsock.c). */
void unixsock_stop(struct sandbox *sb, struct task *t);
/* The loader's MOAT_SYS_LOADER call (worker thread). */
long exec_loader_call(struct sc_call *c);
extern const char *const *exec_initial_path; /* PATH dirs for the first exec */

/* ---- the tracer (tracer.c): the ptrace loop on the main thread ---- */
struct tracer_args {
	struct sandbox *sb;
	pid_t *gofer_pid;           /* set to -1 when the gofer dies */
	int sync_sock;              /* the program sends its listener here (closed) */
	uid_t uid;
	gid_t gid;
	const char *workdir;        /* the program's cwd */
	int crash_test;             /* MOAT_TEST_CRASH: fault once the guest runs */
	volatile pid_t *forward_to; /* signals to moat go to the program */
	double t0;                  /* for dbg timings */
};
/* Trace every guest task until the program and the init are gone; returns
 * the program's status (128+N for signal N). */
int tracer_run(struct tracer_args *a);

/* ---- pipeline (pipeline.c) ---- */
int pipeline_start(struct sandbox *sb, int notify_fd);

/* ---- crash (crash.c) ---- */
void crash_install(pid_t kill_on_crash);

/* ---- confinement of the sentry itself (confine.c) ---- */
int confine_sentry(struct sandbox *sb, char *err, size_t errlen);

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
