/* sentry/reopen.c - moat-reopen: the guest's /proc/<pid>/fd/N reopens of
 * objects whose mode denies their owner, without touching the mode.
 *
 * Root-run the sentry holds no capability (privilege.c): the kernel checks
 * its reopen of a guest's memfd or pipe (fs/procfs.c reopen_new, after the
 * guest's own virtual check allowed it) against the object's owner bits
 * alone, so a memfd the guest chmod'ed to 0 is EACCES to it where Linux
 * gives the guest's root a new open file description. The sentry used to
 * lend itself the owner bits for that one open (fchmod, open, fchmod back):
 * a native fstat (of any guest process) saw them meanwhile, and a crash in
 * between left them. moat-reopen instead holds DAC override where it
 * reaches only the sandbox's own objects: a freestanding program
 * (reopen/reopen_main.c, embedded) the sentry spawns (clone(CLONE_VM):
 * reopen_helper_fork) and execs from a memfd as soon as it runs as the
 * sandbox uid in its own user namespace (priv_drop; a fork that stayed a
 * copy of the sentry cost ~100 KiB PSS per sandbox: data and TLS pages the
 * sentry wrote later, its share of libc's pages; this costs its stack and
 * its own few pages). It waits on its
 * channel for the guest's user namespace and procfd (SCM_RIGHTS, once the
 * guest exists), then (single-threaded, so setns may) enters the guest's
 * user namespace (a child of the sentry's, owned by the sentry's uid: the
 * owner rule lets it; it then holds every capability there, as the guest's
 * root would natively, and capable_wrt_inode_uidgid grants DAC override
 * only on inodes whose owner and group that namespace maps — the sandbox
 * uid's and gid's), keeps CAP_DAC_OVERRIDE and CAP_SYS_PTRACE (the procfs
 * fd/ link of a non-dumpable guest task) and nothing else, and confines
 * itself (a hand-written seccomp program, kill on anything else):
 * recvmsg/sendmsg on its channel, openat on the guest procfd with no write access, no O_CREAT/O_TRUNC/
 * O_TMPFILE, close, exit. It never sees guest input but a pid and an fd
 * number; what it opens the sentry could reach anyway (pidfd_getfd gives
 * the guest's own description; the sentry owns the object and could chmod
 * it). The sentry identifies what comes back (dev, ino) as before.
 */
#include "sentry/sentry.h"
#include "fs/procfs.h"
#include "common/log.h"
#include "common/util.h"
#include "reopen/reopen_blob.h"
#include "loader/freestanding.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef MFD_EXEC
#define MFD_EXEC 0x0010U
#endif

#define KEEP_FLAGS (O_APPEND | O_DIRECT | O_SYNC | O_DSYNC)

/* (the program's side: reopen/reopen_main.c) */
struct reopen_req {
	int32_t vpid, fd, oflags;
};

static int g_chan = -1;
static pid_t g_pid = -1;
static int g_started; /* reopen_helper_start handed it the namespace */
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;

/* the embedded program in a sealed memfd */
static int program_fd(void)
{
	int fd = memfd_create("moat-reopen", MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_EXEC);
	if (fd < 0 && errno == EINVAL) /* (before Linux 6.3: no MFD_EXEC, executable anyway) */
		fd = memfd_create("moat-reopen", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -1;
	size_t n = (size_t)(moat_reopen_end - moat_reopen_start);
	if (write_all(fd, moat_reopen_start, n) < 0 ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* procfs_set_reopen_helper's fn: one request at a time (rare: only a
 * reopen the kernel refused the sentry's uid on an object it owns). The
 * helper's errno, or EACCES when it cannot answer (the caller then shares
 * the guest's description, as for any refused reopen). */
static int reopen_via_helper(pid_t vpid, int fd, int oflags)
{
	struct reopen_req q = { (int32_t)vpid, (int32_t)fd, (int32_t)(oflags & KEEP_FLAGS) };
	int32_t e = EACCES; /* no answer (the helper gone): the old rules */
	int nfd = -1, k = 1;
	if ((oflags & O_ACCMODE) != O_RDONLY || (oflags & O_TRUNC))
		return -EACCES;
	pthread_mutex_lock(&g_lock);
	if (g_chan >= 0 && send_fds(g_chan, &q, sizeof q, NULL, 0) == (long)sizeof q &&
	    recv_fds(g_chan, &e, sizeof e, &nfd, &k) != (long)sizeof e)
		e = EACCES;
	pthread_mutex_unlock(&g_lock);
	if (k == 1 && nfd >= 0 && e == 0)
		return nfd;
	if (k == 1 && nfd >= 0)
		close(nfd);
	return -(e ? e : EACCES);
}

/* The child of reopen_helper_fork's clone, from the clone to its exec. It
 * shares the sentry's memory (CLONE_VM) and runs beside it: it reads only
 * its argument and writes only its own stack (both static, never used
 * again), calls no libc function (the raw system call: glibc's wrappers
 * would write errno, the sentry's thread's), allocates nothing, takes no
 * lock, with every signal blocked (no handler of the sentry's can run on
 * its memory here) from before the clone through the exec; the program
 * blocks them all again first thing. Its fd table, signal handlers and
 * mask, name and parent-death signal are its own. Any failure exits
 * before the exec (the sentry's first message to it then fails). */
struct spawn_arg {
	int chan, prog;
	pid_t parent;
};
static struct spawn_arg spawn_a;
static _Alignas(16) char spawn_stack[8192];

#define RS(nr, a, b, c, d, e) sys6(nr, (long)(a), (long)(b), (long)(c), (long)(d), (long)(e), 0)

static __attribute__((__noreturn__)) void child_exit(void)
{
	for (;;)
		RS(SYS_exit_group, 1, 0, 0, 0, 0);
}

static int reopen_child(void *p)
{
	const struct spawn_arg *a = p;
	if (RS(SYS_prctl, PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || RS(SYS_getppid, 0, 0, 0, 0, 0) != a->parent)
		child_exit();
	RS(SYS_prctl, PR_SET_NAME, "moat-reopen", 0, 0, 0);
	/* (not PR_SET_DUMPABLE: that is the mm's, the sentry's own here,
	 * which the sentry needs; the program sets it on its own mm) */
	/* the channel (3, kept over the exec), the program (4,
	 * close-on-exec) and stderr (below) only */
	long c = RS(SYS_fcntl, a->chan, F_DUPFD_CLOEXEC, 64, 0, 0);
	long pf = RS(SYS_fcntl, a->prog, F_DUPFD_CLOEXEC, 65, 0, 0);
	if (c < 0 || pf < 0 || RS(SYS_dup3, c, 3, 0, 0, 0) < 0 || RS(SYS_dup3, pf, 4, O_CLOEXEC, 0, 0) < 0 ||
	    RS(SYS_close_range, 5, ~0U, 0, 0, 0) < 0)
		child_exit();
	/* out of the caller's terminal and its job, as the other helpers
	 * (red team 91: it was in moat's process group, the terminal's
	 * foreground one, with the terminal its controlling one and as its
	 * fd 2): a group of its own, then TIOCNOTTY on whichever of fds 0-2
	 * is that terminal (not a session leader: only it lets go; no
	 * /dev/tty in the sentry's mount namespace; not setsid, a new
	 * autogroup: leave_caller_terminal); fd 2 kept only under MOAT_DEBUG
	 * (its set-up's messages; confined, it cannot write), else a
	 * close-on-exec copy for the exec's failure */
	RS(SYS_setpgid, 0, 0, 0, 0, 0);
	for (int fd = 0; fd < 3 && RS(SYS_ioctl, fd, TIOCNOTTY, 0, 0, 0) < 0; fd++)
		;
	long err = moat_debug ? 2 : RS(SYS_fcntl, 2, F_DUPFD_CLOEXEC, 5, 0, 0);
	RS(SYS_close, 0, 0, 0, 0, 0);
	RS(SYS_close, 1, 0, 0, 0, 0);
	if (!moat_debug)
		RS(SYS_close, 2, 0, 0, 0, 0);
	static const char name[] = "moat-reopen", msg[] = "moat-reopen: exec failed\n";
	char *argv[] = { (char *)name, NULL }, *envp[] = { NULL };
	RS(SYS_execveat, 4, "", argv, envp, AT_EMPTY_PATH);
	RS(SYS_write, err, msg, sizeof msg - 1, 0, 0);
	child_exit();
}

/* clone(CLONE_VM) rather than fork: no copy of the sentry's page tables,
 * and none of the copy-on-write faults a fork leaves the sentry with for
 * every page it writes after (the child's exec then finds its pages
 * shared: ARCHITECTURE.md "Start-up"); not CLONE_VFORK either: the
 * sentry's thread goes on while the child execs (on the other CPU as a
 * rule). Once per sentry (the static argument and stack). */
pid_t reopen_helper_pid(void)
{
	return g_pid;
}

int reopen_helper_fork(char *err, size_t errlen)
{
	int sv[2], prog;
	if (g_pid > 0) {
		snprintf(err, errlen, "moat-reopen: already started");
		return -1;
	}
	prog = program_fd();
	if (prog < 0) {
		snprintf(err, errlen, "moat-reopen: its program's memfd: %s", strerror(errno));
		return -1;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		snprintf(err, errlen, "moat-reopen: socketpair: %s", strerror(errno));
		close(prog);
		return -1;
	}
	spawn_a = (struct spawn_arg){ .chan = sv[1], .prog = prog, .parent = getpid() };
	/* every signal, glibc's own two included (pthread_sigmask leaves
	 * those): the raw call */
	uint64_t all = ~0ULL, old;
	int pid = -1, e = 0;
	if (syscall(SYS_rt_sigprocmask, SIG_SETMASK, &all, &old, 8) < 0) {
		e = errno;
	} else {
		pid = clone(reopen_child, spawn_stack + sizeof spawn_stack, CLONE_VM | SIGCHLD, &spawn_a);
		e = pid < 0 ? errno : 0;
		syscall(SYS_rt_sigprocmask, SIG_SETMASK, &old, NULL, 8);
	}
	/* (the child's fd table is its own copy: these close ours) */
	close(prog);
	close(sv[1]);
	if (pid < 0) {
		char why[128];
		snprintf(err, errlen, SPAWN_FAILED_FMT, "moat-reopen", spawn_error(e, why, sizeof why));
		close(sv[0]);
		return -1;
	}
	g_chan = sv[0];
	g_pid = pid;
	return 0;
}

void reopen_helper_stop(void)
{
	pthread_mutex_lock(&g_lock);
	if (g_chan >= 0) {
		shutdown(g_chan, SHUT_RDWR); /* it exits at EOF */
		close(g_chan);
		g_chan = -1;
	}
	pthread_mutex_unlock(&g_lock);
	if (g_pid > 0) /* reaped: no zombie for the host's init to collect */
		waitpid(g_pid, NULL, 0);
	g_pid = -1;
}

/* die(): killed and reaped at once (sentry/run.c run_die_cleanup) */
void reopen_helper_kill(void)
{
	if (g_pid <= 0)
		return;
	kill(g_pid, SIGKILL);
	while (waitpid(g_pid, NULL, 0) < 0 && errno == EINTR)
		;
	g_pid = -1;
}

int reopen_helper_start(int procfd, int userns_fd, char *err, size_t errlen)
{
	char b = 0;
	int fds[2] = { userns_fd, procfd };
	if (g_chan < 0 || send_fds(g_chan, &b, 1, fds, 2) != 1) {
		snprintf(err, errlen, "moat-reopen: cannot hand it the guest's namespace");
		return -1;
	}
	procfs_set_reopen_helper(reopen_via_helper);
	g_started = 1;
	return 0;
}

/* The program has exited (the tracer, beside the init's kill and the
 * gofer's shutdown): the channel shut, so the helper's exit runs beside
 * the init's end instead of after it; a reopen still in flight for a dying
 * task fails (its EOF), as after reopen_helper_stop. Only once it serves:
 * before that, reopen_helper_start still hands it the namespace. The fd
 * stays ours until reopen_helper_stop (this thread's), so no lock. */
void reopen_helper_shutdown(void)
{
	if (g_started && g_chan >= 0)
		shutdown(g_chan, SHUT_RDWR);
}

/* the tracer reaped tid: 1 when it was the helper (then no one waits for
 * it again) */
int reopen_helper_reaped(pid_t tid)
{
	if (tid <= 0 || tid != g_pid)
		return 0;
	g_pid = -1;
	return 1;
}
