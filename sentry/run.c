/* sentry/run.c - sentry_run(): set-up, then the main thread becomes the
 * ptrace tracer of every guest task (tracer.c; ptrace requests must come
 * from the thread that attached) while worker threads answer notifications. */
#include "sentry/sentry.h"
#include "sentry/spawn.h"
#include "sentry/netd.h"
#include "sentry/broker.h"
#include "sentry/netpolicy.h"
#include "fs/vfs.h"
#include "gofer/gofer.h"
#include "kernel/task.h"
#include "loader/loader_abi.h"
#include "loader/loader_blob.h"
#include "platform/arch.h"
#include "platform/platform.h"
#include "syscalls/filter.h"
#include "syscalls/sc.h"
#include "syscalls/sys_socket.h"
#include "common/log.h"
#include "common/util.h"

#include <errno.h>
#include <sched.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/random.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <malloc.h>
#include <seccomp.h>
#include <unistd.h>

static volatile pid_t forward_to, forward_group;

/* moat-broker, moat-netd and moat-publish: forked by the sentry, ended by
 * PDEATHSIG when it exits, so until red team 15 each was left a zombie for
 * the host's init (a container's pid 1 that reaps nothing piles them up):
 * killed and reaped at the end of the run instead, when PDEATHSIG would
 * have ended them (every guest task gone, the audit drained; lifecycle
 * helpers_reaped_net). moat-reopen and the gofer are reaped on their own. */
static pid_t helper_pids[4];

static void helper_note(pid_t pid)
{
	for (size_t i = 0; pid > 0 && i < sizeof helper_pids / sizeof *helper_pids; i++)
		if (helper_pids[i] <= 0) {
			helper_pids[i] = pid;
			return;
		}
}

static void helpers_reap(void)
{
	for (size_t i = 0; i < sizeof helper_pids / sizeof *helper_pids; i++) {
		if (helper_pids[i] <= 0)
			continue;
		kill(helper_pids[i], SIGKILL); /* our own child, not reaped yet: its pid is its own */
		while (waitpid(helper_pids[i], NULL, 0) < 0 && errno == EINTR)
			;
		helper_pids[i] = 0;
	}
}

/* A die() of the sentry (a set-up step that failed after processes were
 * started: a --publish port in use, the guest's namespaces, confinement)
 * exited with the gofer, the guest's init, moat-reopen and the helpers
 * still its children: PDEATHSIG ended them, nobody reaped them, each a
 * zombie for the host's init (red team 16: '--publish' of a busy port left
 * moat-gofer, moat-init, moat-reopen, moat-netd and moat-broker; lifecycle
 * die_after_helpers_reaped). Killed and reaped here instead, in the
 * sentry's own process only (a forked child that dies has none of these);
 * a bounded wait: a guest task stopped for a tracer thread that no longer
 * runs never holds up the exit. */
static pid_t gofer_pid = -1; /* -1 once reaped (here, or by the tracer) */
static pid_t init_pid = -1;  /* -1 once the tracer returned (it reaped it) */
static pid_t run_main_pid;

static int gofer_ctl = -1;

/* Reap what has ended: every child or tracee (a guest task the init's
 * death killed is a zombie only its tracer, this process, can reap, and
 * the init's own exit waits for it); the pids of all[] seen become 0. */
static size_t die_reap(pid_t *all, size_t n)
{
	pid_t r;
	while ((r = waitpid(-1, NULL, WNOHANG | __WALL)) > 0)
		for (size_t i = 0; i < n; i++)
			if (all[i] == r)
				all[i] = 0;
	size_t left = 0;
	for (size_t i = 0; i < n; i++)
		if (all[i] > 0 && waitpid(all[i], NULL, WNOHANG | __WALL) < 0 && errno == ECHILD)
			all[i] = 0;
		else if (all[i] > 0)
			left++;
	return left;
}

/* DIR made (as the caller) if it is not there, and what is there: a
 * symlink a sandbox planted at the name the caller gave is refused, exit 2
 * (red team 92: --export and --overlay wrote through it, anywhere on the
 * host); lock_dir's open must find the same object */
static void made_caller_dir(const char *opt, const char *dir, mode_t mode, struct stat *st)
{
	if (mkdir(dir, mode) < 0 && errno != EEXIST)
		die_status(2, "%s %s: %s", opt, dir, strerror(errno));
	if (stat_caller_source(dir, st) < 0)
		die_status(2, "%s %s: %s", opt, dir, caller_output_error(errno));
}

/* An exclusive flock on DIR for the rest of our life, or exit 2 when
 * another sandbox holds it. "same": our lock of another option's DIR
 * (the same directory for both takes one lock). A file system without
 * flock runs unlocked, as before. "checked": what made_caller_dir found
 * at DIR's name, which the open must be. */
static int lock_dir(const char *opt, const char *dir, int same, const struct stat *checked)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		die_status(2, "%s %s: %s", opt, dir, strerror(errno));
	struct stat a, b;
	if (fstat(fd, &a) < 0 || a.st_dev != checked->st_dev || a.st_ino != checked->st_ino)
		die_status(2, "%s %s: replaced since moat checked it (refused: a sandbox may have "
			   "made it)", opt, dir);
	if (same >= 0 && fstat(same, &b) == 0 && a.st_dev == b.st_dev &&
	    a.st_ino == b.st_ino) {
		close(fd);
		return same;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		if (errno == EWOULDBLOCK)
			die_status(2, "%s %s: in use by another sandbox", opt, dir);
		warnx_("%s %s: cannot lock it (%s): another sandbox could use it at once", opt, dir,
		       strerror(errno));
	}
	return fd;
}

/* The rw sources' O_PATH fds refuse_overlaps checked, held until the gofer
 * has cloned them (review 36), then closed (refuse_overlaps_done). */
static int checked_fds[GOFER_MAX_EXPORTS];
static size_t n_checked;

static void refuse_overlaps_done(void)
{
	while (n_checked > 0)
		close(checked_fds[--n_checked]);
}

/* Refuse, exit 2, a layer or export directory that a guest-writable host
 * path (an rw bind's source) overlaps, and an export directory that
 * overlaps the layer (red team 64: an --overlay DIR inside an rw source let
 * the guest rename or replace its own layer's upper and work while mounted;
 * a symlinked upper made the next run's root read-only). The check is made
 * on the objects (the locked --overlay and --export fds, an O_PATH open of
 * each rw source, walked up by ".."), and their (dev, ino) go to the gofer,
 * which fails the start when what it opens by name is another object (red
 * team 71: the names were resolved for the check and again for the use, and
 * a host process that swapped a directory for a symlink in between gave the
 * guest its own layer through its rw bind: isolation_cow
 * overlay_overlap_check_not_raced). */
static void refuse_overlaps(struct view *view, struct gofer_cow_config *cow, int overlay_fd,
			    int export_fd)
{
	struct stat st;
	if (overlay_fd >= 0 && fstat(overlay_fd, &st) == 0) {
		cow->upper_dev = st.st_dev;
		cow->upper_ino = st.st_ino;
	}
	if (export_fd >= 0 && fstat(export_fd, &st) == 0) {
		cow->export_dev = st.st_dev;
		cow->export_ino = st.st_ino;
	}
	for (size_t i = 0; i < view->nexports; i++) {
		struct gofer_export *e = &view->exports[i];
		if (e->kind != GOFER_EXPORT_DIR || !e->writable || e->cow || !e->host_path)
			continue;
		/* an object no open can be (review 36: a source missing or
		 * unreadable here was not checked at all, so a host process
		 * that took the name away for the check and put an overlapping
		 * directory there for the gofer's open passed): the gofer
		 * refuses whatever it finds then, or says why it found none */
		unsigned long long vdev = e->chk_dev, vino = e->chk_ino; /* the view's */
		e->chk_dev = ~0ULL;
		e->chk_ino = ~0ULL;
		int fd = open(e->host_path, O_PATH | O_CLOEXEC);
		if (fd < 0)
			continue; /* the gofer's open says why */
		if (fstat(fd, &st) < 0) {
			close(fd);
			continue;
		}
		if (vino && ((unsigned long long)st.st_dev != vdev || (unsigned long long)st.st_ino != vino))
			die_status(2, "--bind %s: replaced since moat checked it (refused: a sandbox may "
				   "have made it)", e->host_path);
		e->chk_dev = st.st_dev;
		e->chk_ino = st.st_ino;
		if (overlay_fd >= 0 && moat_fds_overlap(overlay_fd, fd))
			die_status(2, "--overlay %s and --bind %s (rw) overlap: the guest could "
				   "change its own layer (use directories apart)", cow->upper_dir, e->host_path);
		if (export_fd >= 0 && moat_fds_overlap(export_fd, fd))
			die_status(2, "--export %s and --bind %s (rw) overlap: the guest could "
				   "write the export (use directories apart)", cow->export_dir, e->host_path);
		/* held until the gofer has opened the source (refuse_overlaps_done):
		 * closed, the checked directory could be removed and its inode
		 * number given to a new directory, in the layer say, which a
		 * symlink at the name then passed off as the checked object */
		if (n_checked < ARRAY_SIZE(checked_fds))
			checked_fds[n_checked++] = fd;
		else
			close(fd);
	}
	if (overlay_fd >= 0 && export_fd >= 0 && moat_fds_overlap(overlay_fd, export_fd))
		die_status(2, "--overlay %s and --export %s overlap (use directories apart)", cow->upper_dir,
			   cow->export_dir);
}

static void run_die_cleanup(void)
{
	pid_t all[ARRAY_SIZE(helper_pids) + 3];
	size_t n = 0;
	if (getpid() != run_main_pid)
		return;
	for (size_t i = 0; i < ARRAY_SIZE(helper_pids); i++)
		if (helper_pids[i] > 0)
			all[n++] = helper_pids[i];
	if (init_pid > 0)
		all[n++] = init_pid;
	for (size_t i = 0; i < n; i++)
		kill(all[i], SIGKILL); /* our own children, not reaped yet */
	reopen_helper_kill();
	/* the gofer keeps the caller's uid (a kill is EPERM root-run): it
	 * leaves when its control socket closes */
	if (gofer_ctl >= 0)
		shutdown(gofer_ctl, SHUT_RDWR);
	if (gofer_pid > 0)
		all[n++] = gofer_pid;
	struct timespec ms = { 0, 1000000 };
	int round = 0;
	for (; round < 2000 && die_reap(all, n); round++)
		nanosleep(&ms, NULL);
	/* the cgroup helper last: it removes the cgroup once it is empty */
	all[0] = limits_die_release();
	for (n = 1; all[0] > 0 && round < 2000 && die_reap(all, n); round++)
		nanosleep(&ms, NULL);
}

/* A SIGTERM, SIGINT, SIGHUP or SIGQUIT for moat during set-up, before
 * forward_signal takes over: moat ends by it as before, but the processes
 * it started so far are ended and reaped first (red team 16: a SIGTERM in
 * the first ~15 ms left moat-gofer, moat-broker, moat-netd, moat-reopen and
 * the not yet exec'd init as zombies; lifecycle setup_signal_reaps). A
 * forked child inherits the handler until its exec: there it is the
 * default action (run_die_cleanup does nothing outside the sentry). */
static volatile sig_atomic_t starting, pending_sig;

static void setup_signal(int sig)
{
	/* a child forked or cloned meanwhile (the init, the program before
	 * its reset, a helper): the default action, as if never caught (its
	 * copy of starting may be 1: the signal must not wait there) */
	if (getpid() != run_main_pid) {
		syscall(SYS_tgkill, getpid(), (pid_t)syscall(SYS_gettid), sig);
		return;
	}
	if (starting) { /* a child forked, its pid not yet noted: at start_end */
		pending_sig = sig;
		return;
	}
	run_die_cleanup();
	/* SA_RESETHAND: the default action now; the signal, blocked in its
	 * handler, ends the process once this returns */
	syscall(SYS_tgkill, getpid(), (pid_t)syscall(SYS_gettid), sig);
}

static void setup_signals_install(void)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
	struct sigaction sa, old;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = setup_signal;
	sa.sa_flags = SA_RESETHAND | SA_RESTART;
	sigfillset(&sa.sa_mask);
	for (unsigned i = 0; i < ARRAY_SIZE(sigs); i++)
		if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN)
			sigaction(sigs[i], &sa, NULL);
}

/* Around each start of a process: a set-up signal waits for its pid to be
 * noted (one that came between the fork and the note left it behind) */
static void start_begin(void)
{
	starting = 1;
}

static void start_end(void)
{
	starting = 0;
	if (pending_sig)
		setup_signal(pending_sig);
}

/* A signal for moat goes to the program. One the caller's terminal generated
 * (^C, ^\, hang-up: si_code SI_KERNEL) goes to the program's process group,
 * as it would natively: the sandbox has a session of its own, so the
 * terminal no longer reaches it. */
static void forward_signal(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	int e = errno;
	if (forward_to > 0) {
		if (si && si->si_code == SI_KERNEL && forward_group > 0)
			kill(-forward_group, sig);
		else
			kill(forward_to, sig);
		tty_jobctl_kick();
	}
	/* a request to end: if the sandbox does not, --kill-after ends it
	 * (once the program has exited, the sandbox is ending already) */
	if ((sig == SIGTERM || sig == SIGINT || sig == SIGHUP) && forward_to >= 0)
		limits_term_signal(sig);
	else if (sig == SIGTERM || sig == SIGINT || sig == SIGHUP)
		limits_drain_stop(); /* the program is gone: its output's wait ends */
	errno = e;
}

static void kill_after_alarm(int sig)
{
	(void)sig;
	int e = errno;
	if (forward_to >= 0) /* (-1: the program exited in the grace: its own end) */
		limits_kill_after();
	errno = e;
}

static void build_env(const struct sentry_config *cfg, const char *home, char ***envp_out,
		      const char *const **path_out)
{
	char **env = xcalloc(MAX_ENV + 8 + BROKER_MAX_SECRETS, sizeof *env);
	int n = 0;
	const char *term = getenv("TERM"), *lang = getenv("LANG");
	char *b;
	env[n++] = xstrdup("PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
	b = xmalloc(strlen(home) + 6);
	sprintf(b, "HOME=%s", home);
	env[n++] = b;
	b = xmalloc(strlen(term ? term : "xterm") + 6);
	sprintf(b, "TERM=%s", term ? term : "xterm");
	env[n++] = b;
	b = xmalloc(strlen(lang ? lang : "C.UTF-8") + 6);
	sprintf(b, "LANG=%s", lang ? lang : "C.UTF-8");
	env[n++] = b;
	for (int i = 0; i < cfg->nenv; i++) {
		size_t kl = strchr(cfg->env[i], '=') - cfg->env[i];
		int j;
		for (j = 0; j < n; j++)
			if (strncmp(env[j], cfg->env[i], kl + 1) == 0)
				break;
		env[j] = cfg->env[i];
		if (j == n)
			n++;
	}
	/* --secret: NAME=<placeholder> (never the value; cli/main.c refused an
	 * --env of the same name) */
	for (int i = 0; i < cfg->nsecrets; i++) {
		const struct broker_secret *s = &cfg->secrets[i];
		int dup = 0;
		for (int k = 0; k < i; k++)
			dup |= !strcmp(cfg->secrets[k].name, s->name);
		if (dup)
			continue; /* one name, several hosts: one placeholder */
		b = xmalloc(strlen(s->name) + s->len + 2);
		sprintf(b, "%s=%.*s", s->name, (int)s->len, s->placeholder);
		env[n++] = b;
	}
	env[n] = NULL;
	*envp_out = env;
	/* PATH for the first exec's search */
	const char *path = env[0] + 5;
	for (int j = 0; j < n; j++)
		if (strncmp(env[j], "PATH=", 5) == 0)
			path = env[j] + 5;
	char *dup = xstrdup(path);
	const char **dirs = xcalloc(strlen(dup) + 2, sizeof *dirs);
	int k = 0;
	for (char *s = strtok(dup, ":"); s; s = strtok(NULL, ":"))
		dirs[k++] = s;
	*path_out = dirs;
}

/* CPUs the guest sees: those it may run on, at most ceil(--cpus). */
static unsigned sandbox_ncpus(unsigned long cpus_milli)
{
	cpu_set_t set;
	unsigned n = 0;

	if (sched_getaffinity(0, sizeof set, &set) == 0)
		n = (unsigned)CPU_COUNT(&set);
	if (!n)
		n = 1;
	if (cpus_milli && (cpus_milli + 999) / 1000 < n)
		n = (unsigned)((cpus_milli + 999) / 1000);
	return n;
}

/* The host's online CPUs (/sys/devices/system/cpu/online: "0-3,6"), read
 * before the sentry is confined; the sentry's own affinity if unreadable;
 * with --cpus (ncpus) the CPUs the guest's affinity keeps, its machine.
 * Linux admits SCHED_DEADLINE only for a task whose affinity covers its
 * root domain (all online CPUs but in a partitioned cpuset): a task in a
 * one-CPU cpuset of a larger machine is refused (EPERM), and so is a
 * guest's (syscalls/sys_sched.c). */
static void host_online_cpus(cpu_set_t *set, unsigned ncpus)
{
	char buf[512];
	CPU_ZERO(set);
	if (ncpus) {
		/* --cpus: the guest's machine is the CPUs its affinity keeps
		 * (sentry/spawn.c: the first ncpus of the caller's) */
		cpu_set_t aff;
		if (sched_getaffinity(0, sizeof aff, &aff) == 0)
			for (int i = 0, n = 0; i < CPU_SETSIZE && n < (int)ncpus; i++)
				if (CPU_ISSET(i, &aff)) {
					CPU_SET(i, set);
					n++;
				}
		if (CPU_COUNT(set))
			return;
	}
	FILE *f = fopen("/sys/devices/system/cpu/online", "re");
	size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
	if (f)
		fclose(f);
	buf[n] = 0;
	for (char *p = buf; *p >= '0' && *p <= '9';) {
		char *e;
		long a = strtol(p, &e, 10), b = a;
		if (*e == '-')
			b = strtol(e + 1, &e, 10);
		for (long i = a; i <= b && i < CPU_SETSIZE; i++)
			CPU_SET((int)i, set);
		p = *e == ',' ? e + 1 : e;
	}
	if (!CPU_COUNT(set) && sched_getaffinity(0, sizeof *set, set) < 0)
		CPU_SET(0, set);
}

/* --timeout bounds the whole run, the export after the program included
 * (red team 68: a guest that left the gofer seconds of diffing and hashing
 * kept moat running 6 s past `--timeout 1s`, 25 s under `--cpus 0.1`): the
 * gofer gives the export up EXPORT_GRACE_MS past the timeout, and ends
 * itself GOFER_EXPORT_KILL_MS later if one file's diff or hashing held it
 * (gofer/export.c; the sentry may not signal it). No patch is left. */
#define EXPORT_GRACE_MS 2000

/* uname -r inside without --kernel-release: the host kernel's major.minor
 * (the guest's native calls are answered by it, and test suites gate on the
 * version: LTP's min_kver) with ".0-moat", never its patch level, local
 * version or build string; MOAT_KERNEL_RELEASE if uname fails */
static void default_release(char *buf, size_t n)
{
	struct utsname u;
	unsigned maj, min;
	if (uname(&u) == 0 && sscanf(u.release, "%u.%u", &maj, &min) == 2)
		snprintf(buf, n, "%u.%u.0-moat", maj, min);
	else
		snprintf(buf, n, "%s", MOAT_KERNEL_RELEASE);
}

/* The sentry's set-up after the guest's init is ready: helpers, its
 * capabilities dropped, its own confinement, the signal handlers. Run by the
 * tracer right after it releases the program from its first stop (the
 * tracer's on_release hook), so that the program's own set-up (its
 * capabilities, and the kernel's compilation of its ~1,300-instruction
 * filter: 0.4-1 ms) runs on the other CPU meanwhile instead of after it.
 * The program runs only moat's code (program_main) until its exec, which
 * waits for the tracer: the sentry is confined before any guest code runs,
 * as before. Run after the tracer returns if the program never stopped. */
struct late_setup {
	const struct sentry_config *cfg;
	struct sandbox *sb;
	struct spawn_result *sr;
	struct limits *lim;
	int broker_events;
	int pub_nsfd, reopen_usfd; /* the guest's net and user namespaces */
	double t0;
	char err[512];
};

/* The first byte of the host's core_pattern ('|' a pipe, '@' a socket,
 * else a file name), 0 when it cannot be read. MOAT_TEST_CORE_PATTERN=FILE
 * (tests: the host's own pattern is not a test's to change) names a file
 * whose first byte is taken instead when it is a pipe's or a socket's: it
 * can only add a refusal below, never take one away. */
static char core_pattern_kind(void)
{
	char k = 0, t = 0;
	int fd = open("/proc/sys/kernel/core_pattern", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (read(fd, &k, 1) != 1)
			k = 0;
		close(fd);
	}
	const char *test = getenv("MOAT_TEST_CORE_PATTERN");
	if (test && (fd = open(test, O_RDONLY | O_CLOEXEC)) >= 0) {
		if (read(fd, &t, 1) == 1 && (t == '|' || t == '@'))
			k = t;
		close(fd);
	}
	return k;
}

/* The guest's real RLIMIT_CORE is pinned to {1, 1} by moat-init (spawn.c),
 * which, in its user namespace, cannot raise a hard limit: a caller's hard 0
 * (a runner's LimitCORE=0, docker --ulimit core=0) failed every start ("the
 * guest's init ended during start-up", ci-env). The caller's limit is the
 * guest's first virtual one (kernel/tasks.c); the real hard limit is raised
 * to 1 here while we may (root: CAP_SYS_RESOURCE). Rootless it stays 0, and
 * {0, 0} is the pin: no core file either way (0 and 1 are below any
 * format's minimum), but a pipe core_pattern ignores 0 (only 1 means "no
 * pipe dump"), so then moat refuses to start. A socket core_pattern
 * ('@PATH', '@@PATH': Linux 6.16 and later) ignores every limit, 1 too
 * (fs/coredump.c coredump_sock_connect sets the dump's limit to
 * RLIM_INFINITY; the socket is looked up from the initial task's root): a
 * guest's crash would hand its image to the host's coredump server, so moat
 * refuses to start with one whatever the limits, and with a pattern it
 * cannot read (red team 87). */
static void core_limit(struct sandbox *sb)
{
	struct rlimit rl = { 0, 0 };
	char kind = core_pattern_kind();

	if (kind == '@' || !kind)
		die_status(2, "the host's core_pattern is a socket (@; or unreadable), which ignores RLIMIT_CORE: "
			      "a guest's core image would reach the host's coredump server (set a pipe or a file name)");
	if (getrlimit(RLIMIT_CORE, &rl) < 0)
		return;
	sb->core0_set = 1;
	sb->core0_cur = rl.rlim_cur;
	sb->core0_max = rl.rlim_max;
	if (rl.rlim_max >= 1)
		return;
	rl.rlim_max = 1;
	if (setrlimit(RLIMIT_CORE, &rl) == 0)
		return;
	if (kind == '|')
		die_status(2, "RLIMIT_CORE: the hard limit is 0 and cannot be raised, and the host's "
			      "core_pattern is a pipe, which ignores a limit of 0: "
			      "a guest's core image would reach it (raise the hard limit to 1)");
	sb->core_zero = 1;
}

static void late_setup(void *arg)
{
	struct late_setup *x = arg;

	/* (moat-publish before our capabilities go: its setns into the
	 * guest's network namespace needs CAP_SYS_ADMIN in ours) */
	if (x->cfg->npub > 0) {
		int nsfd = x->pub_nsfd;
		start_begin();
		pid_t pp = netpub_start(x->cfg->pub_host, x->cfg->pub_guest, x->cfg->npub, nsfd, x->err, sizeof x->err);
		if (pp < 0)
			die_status(2, "%s", x->err);
		helper_note(pp);
		start_end();
		close(nsfd);
	}
	/* moat-reopen (forked above) enters the guest's user namespace */
	{
		int usfd = x->reopen_usfd;
		if (reopen_helper_start(x->sr->guest_procfd, usfd, x->err, sizeof x->err) < 0)
			die("%s", x->err);
		close(usfd);
	}
	/* From here on no capability in our user namespace, before the
	 * first thread or guest call (threads inherit this thread's sets).
	 * Root-run it maps every host id (privilege.c); rootless only the
	 * caller's, which owns the rw binds' files, the --overlay DIR and the
	 * gofer's own tree (red team 45: through a guest task's fd/N of a
	 * gofer directory, "PID/fd/N/.." reached the gofer's "/", which DAC
	 * override passed though its mode is 0; moat-reopen, now started
	 * rootless too, does the reopens that needed it) */
	if (priv_drop_caps() < 0)
		die("sentry: cannot drop its capabilities: %s", strerror(errno));
	if (x->sr->dns_fd >= 0 && netdns_start(x->sb, x->sr->dns_fd) < 0)
		die("DNS stub: cannot start its thread");
	netconn_set_relays(x->sr->relay_fd, x->sr->icmp_fd); /* after the DNS stub named the guest's netns */
	/* (threads only once the guest's init is cloned: a clone of a
	 * process with another thread inside a lock would inherit it held) */
	if (x->broker_events >= 0 && broker_audit_start(x->sb, x->broker_events) < 0)
		die("moat-broker: cannot start its audit thread");
	/* Set-up is over: no more opening of host paths. Confining here, before
	 * the guest's program execs (it waits for the tracer, busy here),
	 * keeps the filter's compilation off the program's first exec (its
	 * threads inherit the filter; TSYNC covers any that exist). */
	dbg("%.2f ms: confining", moat_ms_now() - x->t0);
	stack_trim_note(); /* (no /proc/self after the filter) */
	/* Fail closed: a sentry that cannot confine itself ends the sandbox
	 * before the guest's program runs (the init dies with us). */
	if (confine_sentry(x->sb, x->err, sizeof x->err) < 0)
		die("%s", x->err);
	prctl(PR_SET_DUMPABLE, 0); /* set-up wrote the init's maps; nothing else needs it */
	if (getenv("MOAT_TEST_CONFINEMENT"))
		confine_selftest(x->sb, gofer_pid);
	malloc_trim(0); /* give set-up's heap back */
	dbg("%.2f ms: confined", moat_ms_now() - x->t0);
	crash_install(x->sr->init_pid);
	if (!x->cfg->tty) {
		/* before the guest's program runs, and before the relay's
		 * mode (the caller's settings are kept, not the relay's) */
		tty_guard_start(x->sb);
		tty_jobctl_start(x->sb);
	}
	if (tty_master() >= 0 && tty_start(x->cfg->tty_controls_all, x->err, sizeof x->err) < 0)
		die("%s", x->err);
	if (limits_start(x->lim, x->err, sizeof x->err) < 0)
		die("%s", x->err);

	struct sigaction fwd;
	memset(&fwd, 0, sizeof fwd);
	fwd.sa_sigaction = forward_signal;
	fwd.sa_flags = SA_RESTART | SA_SIGINFO;
	forward_group = x->sr->init_pid; /* the init leads the sandbox's session and group */
	int fsigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 };
	for (unsigned i = 0; i < ARRAY_SIZE(fsigs); i++)
		sigaction(fsigs[i], &fwd, NULL);
	struct sigaction alrm;
	memset(&alrm, 0, sizeof alrm);
	alrm.sa_handler = kill_after_alarm; /* --kill-after's timer (limits.c) */
	alrm.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &alrm, NULL);
	signal(SIGPIPE, SIG_IGN);
}

int sentry_run(const struct sentry_config *cfg)
{
	double t0 = moat_ms_now();
	moat_mark_t0 = t0; /* (the gofer's marks, dbg_mark) */
	/* MOAT_TEST_CRASH=1: fault on purpose once the guest runs (tests/integration/lifecycle.sh) */
	int crash_test = getenv("MOAT_TEST_CRASH") != NULL;
	/* one malloc arena: per-thread arenas cost ~64 KiB each per worker */
	mallopt(M_ARENA_MAX, 1);
	char err[512] = "";
	struct sandbox *sb = xcalloc(1, sizeof *sb);
	sb->guest_procfd = -1;
	sb->init_act_fd = -1;
	for (int i = 0; i < 3; i++)
		sb->caller_stdio[i] = i;
	unix_inherited_note(sb->caller_stdio);
	if (getrandom(&sb->id, sizeof sb->id, 0) != sizeof sb->id)
		sb->id = moat_hash(&sb, sizeof sb) ^ (uint64_t)getpid();
	snprintf(sb->id_str, sizeof sb->id_str, "%016llx", (unsigned long long)sb->id);
	pthread_mutex_init(&sb->uts_lock, NULL);
	pthread_mutex_init(&sb->passcred_lock, NULL);
	pthread_mutex_init(&sb->sysctl_lock, NULL);
	snprintf(sb->hostname, sizeof sb->hostname, "%s", cfg->hostname ? cfg->hostname : "moat");
	sb->umask0 = cfg->caller_umask;
	core_limit(sb);
	snprintf(sb->domainname, sizeof sb->domainname, "(none)");
	if (cfg->kernel_release)
		snprintf(sb->release, sizeof sb->release, "%s", cfg->kernel_release);
	else
		default_release(sb->release, sizeof sb->release);
	sb->mem_limit = cfg->memory;
	sb->pids_limit = cfg->pids;
	sb->cpus_milli = cfg->cpus_milli;
	sb->ncpus = sandbox_ncpus(cfg->cpus_milli);
	host_online_cpus(&sb->host_cpus, cfg->cpus_milli ? sb->ncpus : 0);
	sb->aio_share = aio_share(); /* read now: the confined sentry opens no /proc/sys */
	sb->host_pid_max = read_long_file("/proc/sys/kernel/pid_max");
	hostres_setup(sb); /* the host's counts, held open: the confined sentry opens no /proc */
	{
		unsigned char b[16];
		if (getrandom(b, sizeof b, 0) != sizeof b)
			memcpy(b, &sb->id, 8), memcpy(b + 8, &sb->id, 8);
		b[6] = (b[6] & 0x0f) | 0x40;
		b[8] = (b[8] & 0x3f) | 0x80;
		snprintf(sb->boot_id, sizeof sb->boot_id,
			 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
			 b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11],
			 b[12], b[13], b[14], b[15]);
	}
	uid_t uid = getuid();
	gid_t gid = getgid();
	/* the program's virtual ids (--user); the native ids stay uid/gid */
	sb->start_uid = cfg->user_set ? cfg->user_uid : uid;
	sb->start_gid = cfg->user_set ? cfg->user_gid : gid;
	sb->idmap.host_uid = sb->idmap.guest_uid = uid;
	sb->idmap.host_gid = sb->idmap.guest_gid = gid;
	if (uid != 0) {
		/* rootless: the caller's ids are the --user ids inside, as in a
		 * user namespace that maps them (unshare -r for --user 0): the
		 * caller's files show as theirs, and they act as the caller */
		sb->idmap.guest_uid = sb->start_uid;
		sb->idmap.guest_gid = sb->start_gid;
	}
	sb->idmap.full_identity = uid == 0;
	sb->idmap.native_uid = (uid_t)-1;
	sb->idmap.native_gid = (gid_t)-1;
	/* a program started with other ids than the native view's: SCM_CREDENTIALS
	 * would show the native ones from the start */
	sb->passcred_off = sb->start_uid != uid || sb->start_gid != gid;
	sb->idmap.act_uid = sb->start_uid;
	sb->idmap.act_gid = sb->start_gid;
	dbg("%.2f ms: start", moat_ms_now() - t0);

	/* 1. the view */
	struct view view;
	if (view_plan(cfg, &view, err, sizeof err) < 0)
		die_status(2, "%s", err);

	dbg("%.2f ms: view planned", moat_ms_now() - t0);
	/* 2. policy, audit, filter */
	struct audit_limits alim = { .max_bytes = cfg->audit_max_bytes, .rate = cfg->audit_rate };
	sb->audit = audit_open(cfg->audit_path, cfg->trace, &alim, err, sizeof err);
	if (!sb->audit)
		die_status(2, "%s", err);
	sc_kconfig_probe_host(); /* /proc/config.gz: what native calls reach */
	/* compiled at build time (syscalls/gen_filter.c); --deny prepends */
	unsigned char force[SC_NR_MAX];
	memcpy(force, cfg->deny, sizeof force);
	/* with --net rules moat-netd runs and makes every connect on the file
	 * a worker pins (netconn_connect): a user notification, no ptrace stop
	 * (netd is started below on the same condition, or moat exits). So it
	 * does, with no rule at all, when the caller handed over a socket of
	 * the host's network stack as stdio (inet, netlink...: socket
	 * activation, inetd-style, socat EXEC): red team 93, without netd the
	 * guest disconnected it (connect AF_UNSPEC, native) and connected it
	 * natively anywhere the host reaches, its loopback services and the
	 * cloud metadata address included, past --net none; now that socket
	 * is checked as a moat-netd one (host_socket: not of the guest's
	 * namespace), against an empty policy */
	int netd_on = (cfg->net && cfg->net->nrules > 0) || host_sock_inherited_any();
	static struct netpolicy no_rules; /* --net none: nothing allowed */
	const struct netpolicy *netpol = cfg->net ? cfg->net : &no_rules;
	if (netd_on && !force[__NR_connect])
		force[__NR_connect] = SC_FORCE_NOTIFY;
	/* the DENY rows the filter answers itself reach the sentry only when
	 * a record of them is asked for (audit and trace records, --result's
	 * counts) */
	if (cfg->audit_path || cfg->trace || cfg->result_path)
		for (int nr = 0; nr < SC_NR_MAX; nr++)
			if (sc_deny_in_filter(nr) && !force[nr])
				force[nr] = SC_FORCE_NOTIFY;
	struct sock_fprog prog;
	/* with moat-netd a socket the guest holds may be the host's, and so
	 * it may when the caller handed over an inet (or netlink...) socket
	 * as stdio (hyg35): the program whose setsockopt allow list applies
	 * (the row's FAST_TRAP_UNLESS_NET) */
	if (sc_guest_filter_prebuilt_net(MOAT_SYS_LOADER, force,
					 netd_on, &prog) < 0)
		die("cannot build the seccomp filter");
	sb->policy = policy_new();
	for (int nr = 0; nr < SC_NR_MAX; nr++)
		if (cfg->deny[nr])
			policy_deny_syscall(sb->policy, nr);
	policy_add(sb->policy, prog.filter, prog.len * sizeof prog.filter[0]);
	policy_add(sb->policy, view.desc, strlen(view.desc));
	for (int i = 0; cfg->net && i < cfg->net->nrules; i++)
		policy_add(sb->policy, cfg->net->rules[i].text, strlen(cfg->net->rules[i].text) + 1);

	dbg("%.2f ms: view and filter built", moat_ms_now() - t0);
	/* 3. the guest's init builds its namespaces while we start the gofer */
	char **envp;
	build_env(cfg, view.home, &envp, &exec_initial_path);
	int tty_slave = -1;
	/* limits: the --result file, the cgroup (with the caller's privilege),
	 * the output pipes */
	if (!cfg->tty) /* before any other reopen: the caller's originals kept */
		tty_stdio_fresh(sb, cfg->caller_closed);
	struct limits *lim = limits_setup(cfg, sb, t0, err, sizeof err);
	if (!lim)
		die("%s", err);
	if (!cfg->tty)
		tty_background_stdin(); /* moat run ... &: no reads of the caller's terminal */
	/* the guest's fds 0-2 that are a pty relayed to the caller's terminal
	 * through the filter (bit 3: the relay runs) */
	int tty_fds = cfg->tty ? 7 | 8 : tty_relay_plan((cfg->output_limit || cfg->idle_ms) != 0);
	struct spawn_args sa = {
		.filter = &prog, .argv = cfg->argv, .envp = envp, .uid = uid, .gid = gid,
		.tty_fd = tty_slave,
		.loader = moat_loader_start,
		.loader_len = (size_t)(moat_loader_end - moat_loader_start),
		.dns_stub = netd_on, /* (also the guest's namespace, by cookie, for netd) */
		.prog_blocked = &cfg->caller_blocked, .prog_ignored = &cfg->caller_ignored,
		.stdio_closed = cfg->caller_closed,
		.nofile_cur = cfg->caller_nofile_cur,
		.core_zero = sb->core_zero,
	};
	/* 3. the gofer is the one sandbox process that keeps the caller's
	 * privilege: fork it now, then give ours up before the guest exists
	 * (its init is created inside our new user namespace) */
	struct priv priv;
	run_main_pid = getpid();
	moat_die_cleanup = run_die_cleanup;
	setup_signals_install();
	dbg("%.2f ms: limits set up", moat_ms_now() - t0);
	if (priv_claim(&priv, err, sizeof err) < 0)
		die("%s", err);
	dbg("%.2f ms: uid claimed", moat_ms_now() - t0);
	gofer_keep_fd(priv.lockfd, priv.locktree);
	struct gofer_cow_config cow = {
		.upper_dir = cfg->overlay && cfg->overlay[0] == '/' ? cfg->overlay : NULL,
		.max_files = cfg->export_max_files, .max_bytes = cfg->export_max_bytes,
		.disk_bytes = cfg->disk,
	};
	if (cfg->memory && !cfg->disk && !limits_memory_by_cgroup(lim)) {
		/* no memory cgroup charges the gofer's pages to the sandbox:
		 * its in-memory layers are one pool of --memory bytes, and
		 * the watchdog adds what is used there to the tree's PSS */
		cow.disk_bytes = cfg->memory;
		cow.disk_implicit = 1;
	}
	char *export_dir = NULL;
	struct stat export_st, overlay_st;
	if (cfg->export_dir) { /* made (as the caller) before the gofer opens it */
		made_caller_dir("--export", cfg->export_dir, 0755, &export_st);
		export_dir = realpath(cfg->export_dir, NULL);
		if (!export_dir)
			die_status(2, "--export %s: %s", cfg->export_dir, strerror(errno));
		cow.export_dir = export_dir;
	}
	/* one sandbox at a time in an --overlay DIR and an --export DIR (red
	 * team 18): two overlayfs mounts on one upper/work directory are
	 * undefined behaviour (the kernel only warns), each gofer's start
	 * removes the other's copy-up temporaries (rm_temps) and mounting
	 * clears the shared workdir under the other's copy-ups; two exports
	 * to one DIR rename each other's half-written files into place. The
	 * lock is ours until exit (close-on-exec; the gofer, reaped before we
	 * exit, has finished its export by then). */
	int overlay_lock = -1;
	if (cow.upper_dir) {
		made_caller_dir("--overlay", cow.upper_dir, 0700, &overlay_st);
		overlay_lock = lock_dir("--overlay", cow.upper_dir, -1, &overlay_st);
	}
	int export_lock = -1;
	if (export_dir)
		export_lock = lock_dir("--export", export_dir, overlay_lock, &export_st);
	refuse_overlaps(&view, &cow, overlay_lock, export_lock);
	gofer_set_cow(&cow);
	for (size_t i = 0; i < view.nexports; i++)
		if (view.exports[i].cow && !view.exports[i].cow_persist) {
			gofer_clean_stale_scratch();
			break;
		}
	/* Under --cpus the guest has a CPU quota, and the gofer shares its
	 * cgroup (with --memory): a spinning wait for the sentry's next
	 * request (spin_poll) would spend the guest's time. No spin then, in
	 * the gofer or the sentry (both read this at their start). */
	if (cfg->cpus_milli)
		setenv("MOAT_SPIN_US", "0", 1);
	limits_gofer_cgroups(lim); /* (it joins them once set up) */
	start_begin();
	if (gofer_start_begin(view.exports, view.nexports, &gofer_pid, &gofer_ctl, err, sizeof err) < 0)
		die("%s", err);
	start_end();
	limits_attach_gofer(lim, gofer_pid);
	dbg("%.2f ms: gofer forked", moat_ms_now() - t0);
	if (cfg->memory && limits_memory_by_cgroup(lim)) {
		/* we join the sandbox's memory cgroup (limits_attach, red team
		 * 17): an OOM kill there takes the guest (moat-init's 1000),
		 * then the gofer, never us, who write --result and remove the
		 * cgroup (a 96M copy-up under --memory 32M, the guest already
		 * killed, once took the sentry: limits memory_copyup_refused).
		 * Only with the host's CAP_SYS_RESOURCE, while we have it
		 * (moat-reopen inherits it, moat-init raises its own); without
		 * it the gofer goes first (500: gofer/setup.c) */
		int ofd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
		if (ofd >= 0) {
			if (write(ofd, "-1000", 5) < 0)
				dbg("sentry: oom_score_adj: %s", strerror(errno));
			close(ofd);
		}
	}
	start_begin(); /* (root-run its map helper is forked and reaped inside) */
	if (priv_drop(&priv, err, sizeof err) < 0)
		die("%s", err); /* the gofer leaves when its control socket closes */
	start_end();
	if (confine_scope(err, sizeof err) < 0)
		die("%s", err); /* fail closed */
	if (priv_stdio_dirs(err, sizeof err) < 0)
		die("%s", err); /* (a directory as stdio: red team 90) */
	dbg("%.2f ms: privilege dropped", moat_ms_now() - t0);
	/* moat-reopen (the guest's reopens of objects whose mode denies the
	 * sandbox uid, sentry/reopen.c; rootless too since red team 45: the
	 * sentry drops its capabilities either way, DAC override over the
	 * caller's one mapped id passed the gofer's mode-0 "/"): forked now,
	 * with few of our pages yet to copy; it waits for the guest */
	start_begin();
	if (reopen_helper_fork(err, sizeof err) < 0)
		die("%s", err);
	/* (its opens are the guest's work: in the sandbox's cgroups, as the
	 * sentry; moat-publish, forked later, is in them from its start) */
	limits_note_relay(lim, reopen_helper_pid());
	start_end();
	dbg("%.2f ms: running as host uid %u", moat_ms_now() - t0, (unsigned)priv.host_uid);
	if (sb->idmap.full_identity) {
		sb->idmap.native_uid = priv.host_uid;
		sb->idmap.native_gid = priv.host_gid;
		sb->idmap.sentry_owners = priv.owner_map;
	}
	/* moat-netd: outbound connections, as this unprivileged uid in the
	 * host's network namespace, before the guest exists (netd.c) */
	int netd_chan = -1, broker_chan = -1, broker_events = -1;
	if (cfg->nsecrets > 0) {
		/* --secret: moat-broker takes the values; ours are wiped now,
		 * before netd and the guest's init are forked */
		start_begin();
		pid_t bp = broker_start(cfg->secrets, cfg->nsecrets, audit_wants_args(sb->audit), &broker_chan,
					&broker_events, err, sizeof err);
		if (bp < 0)
			die("%s", err);
		helper_note(bp);
		limits_note_relay(lim, bp); /* (joins the sandbox's cgroups with the sentry) */
		start_end();
		explicit_bzero(cfg->secrets, BROKER_MAX_SECRETS * sizeof *cfg->secrets);
		munmap(cfg->secrets, BROKER_MAX_SECRETS * sizeof *cfg->secrets);
	}
	if (netd_on) {
		start_begin();
		pid_t np = netd_start(netpol, broker_chan, &netd_chan, err, sizeof err);
		if (np < 0)
			die("%s", err);
		helper_note(np);
		limits_note_relay(lim, np);
		start_end();
	}
	if (broker_chan >= 0)
		close(broker_chan); /* moat-netd's alone */
	netconn_init(netd_on ? netpol : cfg->net, netd_chan);
	if (netd_chan >= 0)
		sb->resolv_conf = "nameserver " NETDNS_STUB_ADDR "\noptions ndots:0\n";
	limits_spawn_args(lim, &sa.out_fd, &sa.err_fd, &sa.nproc, &sa.data);
	/* (moat-reopen runs as the sandbox uid in the guest's user
	 * namespace: one more of that uid's processes there, which
	 * RLIMIT_NPROC counts) */
	if (sa.nproc)
		sa.nproc++;
	sa.ncpus = cfg->cpus_milli ? sb->ncpus : 0;
	/* the init waits for our word before it does anything: it goes into
	 * the cgroup first, so the whole guest tree is born there */
	sa.attach = limits_attach;
	sa.attach_arg = lim;
	int gofer_ready = 0;
	if (tty_fds) {
		/* -t, or a terminal stdio: the guest's terminal is a pty of its
		 * own devpts, which the gofer holds: wait for the gofer here (no
		 * overlap with the init's set-up; an interactive start can
		 * afford it) */
		if (gofer_start_finish(gofer_pid, gofer_ctl, err, sizeof err) < 0)
			die("%s", err);
		gofer_ready = 1;
		int dev_export = -1;
		for (size_t i = 0; i < view.nmounts; i++)
			if (view.mounts[i].kind == VFS_MNT_GOFER && view.mounts[i].dev &&
			    !strcmp(view.mounts[i].path, "/dev"))
				dev_export = view.mounts[i].export;
		if (tty_open(gofer_ctl, dev_export, &tty_slave, err, sizeof err) < 0)
			die("%s", err);
		if (tty_fds & 7) {
			sa.tty_fd = tty_slave;
			sa.tty_fds = tty_fds & 7;
			sa.tty_ctty = cfg->tty;
		}
	}
	struct spawn_result sr;
	stack_trim_note(); /* (the init, a clone, inherits it: stack_trim there) */
	start_begin();
	if (spawn_guest(&sa, &sr, err, sizeof err) < 0)
		die("%s", err);
	init_pid = sr.init_pid;
	start_end();
	dbg("%.2f ms: init cloned", moat_ms_now() - t0);
	/* Our own root (exports only) now, while the init builds its own (it
	 * has its copy of our mount namespace since the clone): nothing from
	 * here on opens a host path (the gofer, the VFS and the init's
	 * messages are fds). Fail closed: the init dies with us. */
	if (priv_sentry_root(view.exports, view.nexports, err, sizeof err) < 0)
		die("%s", err);
	dbg("%.2f ms: sentry root", moat_ms_now() - t0);
	if (tty_slave >= 0)
		close(tty_slave); /* the init has it: the master reads EIO once the guest is gone */

	/* 4. gofer and VFS (the init's set-up overlaps with the gofer's) */
	if (!gofer_ready && gofer_start_finish(gofer_pid, gofer_ctl, err, sizeof err) < 0)
		die("%s", err); /* the init dies with us (PDEATHSIG) */
	refuse_overlaps_done(); /* the gofer holds its sources now */
	dbg("%.2f ms: gofer ready", moat_ms_now() - t0);
	if (priv_sentry_root_finish(err, sizeof err) < 0)
		die("%s", err);
	dbg("%.2f ms: sentry's old root detached", moat_ms_now() - t0);
	for (size_t i = 0; i < view.nexports; i++) {
		int fd = gofer_take_cow_root(i);
		if (fd >= 0)
			priv_add_export_root(i, fd);
	}
	/* a cow mount's hidden names its overlay hides itself (whiteouts)
	 * are absent names like any other there: the guest may create them
	 * (useradd's /etc/.pwd.lock); only the others stay refused by name */
	for (size_t j = 0; j < view.nmounts; j++) {
		struct vfs_mount_spec *m = &view.mounts[j];
		size_t n = 0, kept = 0;
		if (!m->cow || !m->hidden || m->export < 0)
			continue;
		while (m->hidden[n])
			n++;
		const char **h = xcalloc(n + 1, sizeof *h);
		for (size_t k = 0; k < n; k++)
			if (!gofer_layer_hides((size_t)m->export, k))
				h[kept++] = m->hidden[k];
		m->hidden = kept ? h : NULL;
		if (!kept)
			free(h);
	}
	if (vfs_create(sb, view.mounts, view.nmounts, gofer_ctl, &sb->vfs, err, sizeof err) < 0)
		die("%s", err);
	if (!getenv("MOAT_NO_DIRECTFS")) { /* (a knob for benchmarks: every open via the gofer) */
		size_t nroots;
		const int *roots = priv_export_roots(&nroots);
		vfs_enable_direct(sb->vfs, roots, nroots);
	}
	dbg("%.2f ms: gofer started, VFS built", moat_ms_now() - t0);

	/* --workdir must be an existing directory in the guest's view */
	char workdir[PATH_MAX] = "/";
	if (cfg->workdir) {
		struct task probe;
		memset(&probe, 0, sizeof probe);
		probe.sb = sb;
		probe.pidfd = -1;
		probe.fs = fs_ctx_new("/", 022);
		cred_init(&probe.cred, sb->start_uid, sb->start_gid);
		int r = vfs_check_dir(&probe, cfg->workdir, workdir, sizeof workdir);
		fs_ctx_put(probe.fs);
		if (r < 0)
			die_status(2, "--workdir %s: %s", cfg->workdir, strerror(-r));
	}
	/* while the init builds its root and forks the program (another
	 * CPU): the program's first exec resolved once, its names cached */
	if (!getenv("MOAT_NO_PREWARM")) /* (a knob for benchmarks) */
		exec_prewarm(sb, cfg->argv[0], workdir);
	dbg("%.2f ms: first exec's names cached", moat_ms_now() - t0);
	if (spawn_guest_finish(&sr, err, sizeof err) < 0) {
		kill(gofer_pid, SIGKILL);
		die("%s", err);
	}
	/* (no gofer connection made here for the exec stops this thread
	 * serves: the prewarm cached what the first one needs, and since the
	 * export roots are the sentry's own it makes no round trip at all;
	 * a later exec connects at its first gofer request, conn() in
	 * fs/vfs.c. The CONNECT cost 0.08-0.16 ms here: start39) */
	sb->init_pid = sr.init_pid;
	sb->boot_ticks = sr.init_start_ticks; /* 0: procfs reads it when first needed */
	if (sr.timens_errno)
		dbg("no time namespace (%s): the guest's CLOCK_BOOTTIME and CLOCK_MONOTONIC are the host's",
		    strerror(sr.timens_errno));
	dbg("%.2f ms: guest spawned", moat_ms_now() - t0);
	sb->guest_procfd = sr.guest_procfd;
	sb->init_act_fd = sr.act_fd;
	{
		/* The sentry joins the guest's IPC namespace (this thread, before
		 * any other exists: the workers inherit it). Linux reads
		 * /proc/sysvipc/{msg,sem,shm} and the kernel.msg*, sem, shm*
		 * sysctls in the reader's namespace, not the procfs mount's: read
		 * by the sentry for the guest, they showed the host's. */
		int ipcfd = openat(sr.guest_procfd, "1/ns/ipc", O_RDONLY | O_CLOEXEC);
		if (ipcfd < 0 && errno == ENOENT) {
			/* the init is gone: its fork of the program failed
			 * (spawn.c: an "E" line on the sync socket) */
			char msg[256];
			ssize_t n = recv(sr.sync_sock, msg, sizeof msg - 1, MSG_DONTWAIT);
			kill(gofer_pid, SIGKILL);
			if (n > 1 && msg[0] == 'E') {
				msg[n] = 0;
				die("%s", msg + 1);
			}
			die("the guest's init ended during start-up");
		}
		if (ipcfd < 0 || setns(ipcfd, CLONE_NEWIPC) < 0)
			die("the guest's IPC namespace: %s", strerror(errno));
		close(ipcfd);
	}
	vfs_set_proc_dev(sb->guest_procfd); /* before the guest's first call */
	/* The guest's pid namespace: the tracer names a new task's guest pid
	 * at its fork event (NS_GET_PID_IN_PIDNS, Linux 6.9), not at the
	 * parent's syscall exit. -1: the old way (the syscall-exit stop). */
	int guest_pidns = openat(sr.guest_procfd, "1/ns/pid", O_RDONLY | O_CLOEXEC);
	if (guest_pidns >= 0 && getenv("MOAT_TEST_NO_PIDNS")) { /* tests: the fallback */
		close(guest_pidns);
		guest_pidns = -1;
	}
	struct late_setup late = { .cfg = cfg, .sb = sb, .sr = &sr, .lim = lim,
				   .broker_events = broker_events,
				   .t0 = t0, .pub_nsfd = -1, .reopen_usfd = -1 };
	/* The init's namespaces, opened while it cannot yet have made itself
	 * undumpable (that follows its fork, whose event stop holds it until
	 * the tracer's first round: late_setup runs after that) */
	if (cfg->npub > 0) {
		late.pub_nsfd = openat(sr.guest_procfd, "1/ns/net", O_RDONLY | O_CLOEXEC);
		if (late.pub_nsfd < 0)
			die("--publish: the guest's network namespace: %s", strerror(errno));
	}
	{
		late.reopen_usfd = openat(sr.guest_procfd, "1/ns/user", O_RDONLY | O_CLOEXEC);
		if (late.reopen_usfd < 0)
			die("moat-reopen: the guest's user namespace: %s", strerror(errno));
	}

	/* 5. the ptrace loop (tracer.c) */
	int gofer_status = 0;
	struct tracer_args ta = {
		.sb = sb, .gofer_pid = &gofer_pid, .gofer_status = &gofer_status,
		.gofer_export = export_dir != NULL, .gofer_ctl = gofer_ctl, .sync_sock = sr.sync_sock, .uid = uid,
		.gid = gid, .workdir = workdir, .crash_test = crash_test,
		.forward_to = &forward_to, .t0 = t0, .pids_max = (int)cfg->pids,
		.guest_pidns = guest_pidns,
		.on_release = late_setup, .on_release_arg = &late,
	};
	struct rusage main_ru;
	memset(&main_ru, 0, sizeof main_ru);
	ta.main_ru = &main_ru;
	int status_out = tracer_run(&ta);
	if (ta.on_release) /* the program never reached its first stop */
		late_setup(&late);
	int export_failed = 0;
	init_pid = -1; /* reaped by the tracer */
	dbg("%.2f ms: guest gone", moat_ms_now() - t0);
	/* the caller's terminal as it was (the guest may have stopped its
	 * output: every write below, and a blocked trace writer, would hang) */
	tty_guard_restore();
	limits_output_wait(lim); /* (into the pty of tty_relay_plan, if any) */
	/* -t: the guest's last output drained, the modes it left on undone,
	 * before any line of moat's (on the alternate screen it was lost) */
	tty_finish();
	moat_term_reset_arm();  /* (the guest's last bytes may have left a string open) */
	/* everything in the guest is gone: stop the gofer (it writes --export
	 * first: the layers are at rest now) */
	double timeout_at = limits_timeout_at(lim);
	if (timeout_at > 0) /* the export gives up past it (gofer/export.c late) */
		gofer_export_deadline_set(timeout_at + EXPORT_GRACE_MS);
	shutdown(gofer_ctl, SHUT_RDWR);
	close(gofer_ctl);
	gofer_ctl = -1;
	if (gofer_pid > 0) { /* reap it (it exits on EOF, after --export): a zombie must not outlive the sandbox */
		while (waitpid(gofer_pid, &gofer_status, 0) < 0 && errno == EINTR)
			;
	}
	gofer_pid = -1;
	int export_late = WIFEXITED(gofer_status) && WEXITSTATUS(gofer_status) == GOFER_EXIT_EXPORT_LATE;
	reopen_helper_stop();
	if (export_dir && gofer_status)
		moat_term_reset();
	if (export_dir && export_late) {
		fprintf(stderr, "moat: --export %s: not written: --timeout %gs reached during the export "
			"(it is given %d s past it; no patch was left)\n", export_dir,
			(double)cfg->timeout_ms / 1000, EXPORT_GRACE_MS / 1000);
		export_failed = 1;
	} else if (export_dir && WIFEXITED(gofer_status) && WEXITSTATUS(gofer_status) == GOFER_EXIT_REFUSED)
		fprintf(stderr, "moat: --export: some changes were refused (listed in %s/*/manifest.json)\n",
			export_dir);
	else if (export_dir && (!WIFEXITED(gofer_status) || WEXITSTATUS(gofer_status))) {
		fprintf(stderr, "moat: --export %s: the export could not be written\n", export_dir);
		export_failed = 1;
	}
	pipeline_drain(1000);
	pipeline_profile_report();
	broker_audit_drain();
	int audit_lost = audit_flush(sb->audit);
	status_out = limits_finish(lim, status_out, ta.main_raw, ta.main_seen, &main_ru);
	/* a failed export is never a success (red team 18: the gofer OOM-killed
	 * in the sandbox's memory cgroup, and moat said 0), nor a lost audit
	 * (red team 40) */
	if ((export_failed || audit_lost) && status_out == 0)
		status_out = 1;
	helpers_reap();
	dbg("%.2f ms: done", moat_ms_now() - t0);
	return status_out;
}
