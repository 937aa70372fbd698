/* sentry/run.c - sentry_run(): set-up, then the main thread becomes the
 * ptrace tracer of every guest task (ptrace requests must come from the
 * thread that attached) while worker threads answer notifications. */
#include "sentry/sentry.h"
#include "sentry/spawn.h"
#include "fs/vfs.h"
#include "gofer/gofer.h"
#include "kernel/task.h"
#include "loader/loader_abi.h"
#include "loader/loader_blob.h"
#include "platform/arch.h"
#include "platform/platform.h"
#include "syscalls/filter.h"
#include "syscalls/sc.h"
#include "common/log.h"
#include "common/util.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <malloc.h>
#include <seccomp.h>
#include <unistd.h>

static volatile pid_t forward_to, forward_group;

/* A signal for moat goes to the program. One the caller's terminal generated
 * (^C, ^\, hang-up: si_code SI_KERNEL) goes to the program's process group,
 * as it would natively: the sandbox has a session of its own, so the
 * terminal no longer reaches it. */
static void forward_signal(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	if (forward_to <= 0)
		return;
	if (si && si->si_code == SI_KERNEL && forward_group > 0)
		kill(-forward_group, sig);
	else
		kill(forward_to, sig);
}

/* new tasks whose first ptrace stop came before their parent's event */
#define MAX_EARLY 256
static pid_t early[MAX_EARLY];
static int nearly;

static int take_early(pid_t tid)
{
	for (int i = 0; i < nearly; i++)
		if (early[i] == tid) {
			early[i] = early[--nearly];
			return 1;
		}
	return 0;
}

/* forks and clones whose parent we run to its syscall exit */
#define MAX_PENDING 256
static struct {
	pid_t parent, child;
	int thread;
} pending[MAX_PENDING];
static int npending;

static void drop_pending(pid_t parent)
{
	for (int i = 0; i < npending; i++)
		if (pending[i].parent == parent)
			pending[i--] = pending[--npending];
}

/* Give a child its guest ids (vid < 0: unknown) and let it run if it is held. */
static void release_child(struct sandbox *sb, pid_t child, pid_t vid, int thread)
{
	struct task *c = task_get(sb, child);
	if (!c)
		return;
	c->vtid = vid;
	if (!thread)
		c->vtgid = vid;
	if (c->held) {
		c->held = 0;
		c->pt_state = 1;
		ptrace(PTRACE_CONT, child, 0, 0);
	} else if (c->pt_state == 0) {
		c->pt_state = 2; /* resume at its first stop */
	}
	task_put(c);
}

static void fork_exit(struct sandbox *sb, pid_t parent)
{
	arch_regs regs;
	long ret = -1;
	if (ptrace(PTRACE_GETREGS, parent, 0, &regs) == 0)
		ret = (long)REG_RET(regs);
	for (int i = 0; i < npending; i++) {
		if (pending[i].parent != parent)
			continue;
		release_child(sb, pending[i].child, ret > 0 ? (pid_t)ret : -1, pending[i].thread);
		pending[i] = pending[--npending];
		break;
	}
}

static void build_env(const struct sentry_config *cfg, const char *home, char ***envp_out,
		      const char *const **path_out)
{
	char **env = xcalloc(MAX_ENV + 8, sizeof *env);
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

static double ms_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int sentry_run(const struct sentry_config *cfg)
{
	double t0 = ms_now();
	/* MOAT_TEST_CRASH=1: fault on purpose once the guest runs (tests/integration/lifecycle.sh) */
	int crash_test = getenv("MOAT_TEST_CRASH") != NULL;
	volatile uintptr_t crash_test_addr = 0;
	/* one malloc arena: per-thread arenas cost ~64 KiB each per worker */
	mallopt(M_ARENA_MAX, 1);
	char err[512] = "";
	struct sandbox *sb = xcalloc(1, sizeof *sb);
	sb->guest_procfd = -1;
	if (getrandom(&sb->id, sizeof sb->id, 0) != sizeof sb->id)
		sb->id = moat_hash(&sb, sizeof sb) ^ (uint64_t)getpid();
	snprintf(sb->id_str, sizeof sb->id_str, "%016llx", (unsigned long long)sb->id);
	pthread_mutex_init(&sb->uts_lock, NULL);
	snprintf(sb->hostname, sizeof sb->hostname, "%s", cfg->hostname ? cfg->hostname : "moat");
	snprintf(sb->domainname, sizeof sb->domainname, "(none)");
	snprintf(sb->release, sizeof sb->release, "%s",
		 cfg->kernel_release ? cfg->kernel_release : MOAT_KERNEL_RELEASE);
	uid_t uid = getuid();
	gid_t gid = getgid();
	/* the program's virtual ids (--user); the native ids stay uid/gid */
	sb->start_uid = cfg->user_set ? cfg->user_uid : uid;
	sb->start_gid = cfg->user_set ? cfg->user_gid : gid;
	sb->idmap.host_uid = sb->idmap.guest_uid = uid;
	sb->idmap.host_gid = sb->idmap.guest_gid = gid;
	sb->idmap.full_identity = uid == 0;
	sb->idmap.native_uid = (uid_t)-1;
	sb->idmap.native_gid = (gid_t)-1;
	sb->idmap.act_uid = sb->start_uid;
	sb->idmap.act_gid = sb->start_gid;
	dbg("%.2f ms: start", ms_now() - t0);

	/* 1. the view */
	struct view view;
	if (view_plan(cfg, &view, err, sizeof err) < 0)
		die_status(2, "%s", err);

	dbg("%.2f ms: view planned", ms_now() - t0);
	/* 2. policy, audit, filter */
	struct audit_limits alim = { .max_bytes = cfg->audit_max_bytes, .rate = cfg->audit_rate };
	sb->audit = audit_open(cfg->audit_path, cfg->trace, &alim, err, sizeof err);
	if (!sb->audit)
		die_status(2, "%s", err);
	scmp_filter_ctx fctx;
	struct sock_fprog prog;
	if (sc_build_guest_filter_deny(&fctx, MOAT_SYS_LOADER, cfg->deny) < 0 ||
	    sc_filter_export(fctx, &prog) < 0)
		die("cannot build the seccomp filter");
	seccomp_release(fctx);
	sb->policy = policy_new();
	for (int nr = 0; nr < SC_NR_MAX; nr++)
		if (cfg->deny[nr])
			policy_deny_syscall(sb->policy, nr);
	policy_add(sb->policy, prog.filter, prog.len * sizeof prog.filter[0]);
	policy_add(sb->policy, view.desc, strlen(view.desc));

	dbg("%.2f ms: view and filter built", ms_now() - t0);
	/* 3. the guest's init builds its namespaces while we start the gofer */
	char **envp;
	build_env(cfg, view.home, &envp, &exec_initial_path);
	int tty_slave = -1;
	if (cfg->tty && tty_open(&tty_slave, err, sizeof err) < 0)
		die("%s", err);
	struct spawn_args sa = {
		.filter = &prog, .argv = cfg->argv, .envp = envp, .uid = uid, .gid = gid,
		.tty_fd = tty_slave,
		.loader = moat_loader_start,
		.loader_len = (size_t)(moat_loader_end - moat_loader_start),
	};
	/* 3. the gofer is the one sandbox process that keeps the caller's
	 * privilege: fork it now, then give ours up before the guest exists
	 * (its init is created inside our new user namespace) */
	pid_t gofer_pid;
	int gofer_ctl;
	struct priv priv;
	if (priv_claim(&priv, err, sizeof err) < 0)
		die("%s", err);
	gofer_keep_fd(priv.lockfd);
	if (gofer_start_begin(view.exports, view.nexports, &gofer_pid, &gofer_ctl, err, sizeof err) < 0)
		die("%s", err);
	if (priv_drop(&priv, err, sizeof err) < 0)
		die("%s", err); /* the gofer leaves when its control socket closes */
	dbg("%.2f ms: running as host uid %u", ms_now() - t0, (unsigned)priv.host_uid);
	if (sb->idmap.full_identity) {
		sb->idmap.native_uid = priv.host_uid;
		sb->idmap.native_gid = priv.host_gid;
	}
	struct spawn_result sr;
	if (spawn_guest(&sa, &sr, err, sizeof err) < 0)
		die("%s", err);
	if (tty_slave >= 0)
		close(tty_slave); /* the init has it: the master reads EIO once the guest is gone */

	/* 4. gofer and VFS (the init's set-up overlaps with the gofer's) */
	if (gofer_start_finish(gofer_pid, gofer_ctl, err, sizeof err) < 0)
		die("%s", err); /* the init dies with us (PDEATHSIG) */
	if (vfs_create(sb, view.mounts, view.nmounts, gofer_ctl, &sb->vfs, err, sizeof err) < 0)
		die("%s", err);
	dbg("%.2f ms: gofer started, VFS built", ms_now() - t0);

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
	if (spawn_guest_finish(&sr, err, sizeof err) < 0) {
		kill(gofer_pid, SIGKILL);
		die("%s", err);
	}
	vfs_thread_warmup(sb->vfs); /* the exec stops are served on this thread */
	sb->init_pid = sr.init_pid;
	dbg("%.2f ms: guest spawned", ms_now() - t0);
	sb->guest_procfd = sr.guest_procfd;
	/* Set-up is over: no more opening of host paths. Confining here, before
	 * the guest's program exists, keeps the filter's compilation off the
	 * program's first exec (its threads inherit the filter; TSYNC covers
	 * any that exist). */
	dbg("%.2f ms: confining", ms_now() - t0);
	/* Fail closed: a sentry that cannot confine itself ends the sandbox
	 * before the guest's program exists (the init dies with us). */
	if (priv_empty_root(err, sizeof err) < 0 || confine_sentry(sb, err, sizeof err) < 0)
		die("%s", err);
	prctl(PR_SET_DUMPABLE, 0); /* set-up wrote the init's maps; nothing else needs it */
	if (getenv("MOAT_TEST_CONFINEMENT"))
		confine_selftest(sb);
	malloc_trim(0); /* give set-up's heap back */
	dbg("%.2f ms: confined", ms_now() - t0);
	crash_install(sr.init_pid);
	if (cfg->tty && tty_start(err, sizeof err) < 0)
		die("%s", err);

	struct sigaction fwd;
	memset(&fwd, 0, sizeof fwd);
	fwd.sa_sigaction = forward_signal;
	fwd.sa_flags = SA_RESTART | SA_SIGINFO;
	forward_group = sr.init_pid; /* the init leads the sandbox's session and group */
	int fsigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 };
	for (unsigned i = 0; i < ARRAY_SIZE(fsigs); i++)
		sigaction(fsigs[i], &fwd, NULL);
	signal(SIGPIPE, SIG_IGN);

	/* 5. the ptrace loop */
	int status_out = 1, main_done = 0, listener = -1, init_reaped = 0;
	pid_t main_pid = 0;
	for (;;) {
		int st;
		pid_t tid = waitpid(-1, &st, __WALL);
		if (tid < 0) {
			if (errno == EINTR)
				continue;
			break; /* ECHILD: every guest task and the init are gone */
		}
		if (WIFEXITED(st) || WIFSIGNALED(st)) {
			if (tid == gofer_pid) {
				gofer_pid = -1; /* handlers now fail with EPIPE; the guest sees EIO */
				if (main_done && init_reaped)
					break;
				continue;
			}
			if (tid == sb->init_pid)
				init_reaped = 1;
			if (tid == main_pid && !main_done) {
				main_done = 1;
				status_out = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
				forward_to = 0;
				dbg("%.2f ms: program exited", ms_now() - t0);
				kill(sb->init_pid, SIGKILL);
				/* the gofer's namespaces tear down meanwhile */
				/* the gofer runs with the caller's ids, which we cannot
				 * signal: it leaves when its control socket closes */
				if (gofer_pid > 0)
					shutdown(gofer_ctl, SHUT_RDWR);
			}
			if (tid == sb->init_pid && !main_done) {
				/* init died first (set-up failure or killed) */
				main_done = 1;
				status_out = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
			}
			for (int i = 0; i < npending; i++)
				if (pending[i].parent == tid) /* it died inside fork */
					release_child(sb, pending[i].child, -1, pending[i].thread);
			drop_pending(tid);
			task_remove(sb, tid);
			/* init is reaped only after every task of its pid ns */
			if (main_done && init_reaped)
				break;
			continue;
		}
		if (!WIFSTOPPED(st))
			continue;
		int sig = WSTOPSIG(st), ev = (unsigned)st >> 16;
		struct task *t = task_get(sb, tid);
		if (tid == sb->init_pid) {
			if (ev == PTRACE_EVENT_FORK || ev == PTRACE_EVENT_VFORK || ev == PTRACE_EVENT_CLONE) {
				unsigned long child = 0;
				ptrace(PTRACE_GETEVENTMSG, tid, 0, &child);
				main_pid = (pid_t)child;
				sb->main_pid = main_pid;
				struct task *m = task_create(sb, main_pid, main_pid, NULL, 0);
				cred_init(&m->cred, sb->start_uid, sb->start_gid);
				snprintf(m->fs->cwd, sizeof m->fs->cwd, "%s", workdir);
				m->initial = 1;
				m->vtid = m->vtgid = 2; /* the init's first child */
				m->vppid = 1;
				if (take_early(main_pid)) {
					m->pt_state = 1;
					ptrace(PTRACE_CONT, main_pid, 0, 0);
				}
				task_put(m);
				forward_to = main_pid;
				/* the init is done with: it only reaps from now on */
				ptrace(PTRACE_DETACH, tid, 0, 0);
			} else if (ev == PTRACE_EVENT_STOP) {
				ptrace(PTRACE_CONT, tid, 0, 0);
			} else {
				ptrace(PTRACE_CONT, tid, 0, ev ? 0 : sig);
			}
			task_put(t);
			continue;
		}
		if (!t) {
			/* a new task's first stop before its parent's event */
			if (nearly < MAX_EARLY)
				early[nearly++] = tid;
			else
				ptrace(PTRACE_CONT, tid, 0, 0);
			continue;
		}
		switch (ev) {
		case 0:
			if (sig == (SIGTRAP | 0x80)) {
				/* the exit of a fork/clone we asked to see */
				fork_exit(sb, tid);
				ptrace(PTRACE_CONT, tid, 0, 0);
				break;
			}
			/* signal-delivery-stop: re-inject */
			ptrace(PTRACE_CONT, tid, 0, sig);
			break;
		case PTRACE_EVENT_SECCOMP:
			dbg("%.2f ms: exec stop", ms_now() - t0);
			exec_stop(sb, t);      /* execve, execveat */
			unixsock_stop(sb, t);  /* bind, connect */
			dbg("%.2f ms: exec resolved", ms_now() - t0);
			ptrace(PTRACE_CONT, tid, 0, 0);
			break;
		case PTRACE_EVENT_FORK:
		case PTRACE_EVENT_VFORK:
		case PTRACE_EVENT_CLONE: {
			unsigned long child = 0;
			ptrace(PTRACE_GETEVENTMSG, tid, 0, &child);
			int thread = 0, share_fs = 0;
			if (ev == PTRACE_EVENT_CLONE) {
				arch_regs regs;
				ptrace(PTRACE_GETREGS, tid, 0, &regs);
				unsigned long fl = REG_ARG0(regs);
				thread = !!(fl & CLONE_THREAD);
				share_fs = !!(fl & CLONE_FS);
			}
			struct task *n = task_create(sb, (pid_t)child, thread ? t->tgid : (pid_t)child,
						     t, share_fs);
			/* Its guest ids come from the parent's return value: run the
			 * parent to its syscall exit (PTRACE_SYSCALL) and hold the
			 * child at its first stop until then. A vfork parent returns
			 * only after its child execs or exits, so that child runs
			 * with its ids unknown (-1) meanwhile. */
			n->vtid = -1;
			n->vtgid = thread ? t->vtgid : -1;
			n->vppid = thread ? t->vppid : t->vtgid;
			if (npending < MAX_PENDING) {
				pending[npending].parent = tid;
				pending[npending].child = (pid_t)child;
				pending[npending].thread = thread;
				npending++;
			}
			if (take_early((pid_t)child))
				n->held = 1;
			if (ev == PTRACE_EVENT_VFORK || npending >= MAX_PENDING) {
				if (n->held) {
					n->held = 0;
					n->pt_state = 1;
					ptrace(PTRACE_CONT, (pid_t)child, 0, 0);
				} else {
					n->pt_state = 2; /* resume at its first stop */
				}
			}
			task_put(n);
			ptrace(PTRACE_SYSCALL, tid, 0, 0);
			break;
		}
		case PTRACE_EVENT_EXEC: {
			unsigned long former = 0;
			ptrace(PTRACE_GETEVENTMSG, tid, 0, &former);
			if ((pid_t)former != tid)
				task_rekey(sb, (pid_t)former, tid);
			ptrace(PTRACE_CONT, tid, 0, 0);
			break;
		}
		case PTRACE_EVENT_STOP:
			if (t->pt_state == 0 && t->vtid < 0) {
				t->held = 1; /* until its parent's fork returns */
			} else if (t->pt_state == 0 || t->pt_state == 2) {
				t->pt_state = 1;
				if (tid == main_pid && listener < 0) {
					/* the program installs its filter next and sends the listener */
					ptrace(PTRACE_CONT, tid, 0, 0);
					int fds[1], nfd = 1;
					char buf[256];
					long n = recv_fds(sr.sync_sock, buf, sizeof buf - 1, fds, &nfd);
					if (n > 0 && buf[0] == 'L' && nfd == 1) {
						listener = fds[0];
						dbg("%.2f ms: listener received", ms_now() - t0);
						pipeline_start(sb, listener);
						/* test hook: the crash path (backtrace, guests die) */
						if (crash_test)
							*(volatile int *)crash_test_addr = 1;
					} else if (n > 0 && buf[0] == 'E') {
						buf[n] = 0;
						warnx_("guest set-up: %s", buf + 1);
					}
					close(sr.sync_sock);
					sr.sync_sock = -1;
				} else {
					ptrace(PTRACE_CONT, tid, 0, 0);
				}
			} else if (sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU) {
				ptrace(PTRACE_LISTEN, tid, 0, 0); /* group-stop */
			} else {
				ptrace(PTRACE_CONT, tid, 0, 0);
			}
			break;
		default:
			ptrace(PTRACE_CONT, tid, 0, 0);
			break;
		}
		task_put(t);
	}
	dbg("%.2f ms: guest gone", ms_now() - t0);
	/* everything in the guest is gone: stop the gofer */
	close(gofer_ctl);
	if (gofer_pid > 0) /* reap it (it exits on EOF): a zombie must not outlive the sandbox */
		waitpid(gofer_pid, NULL, 0);
	tty_finish();
	pipeline_drain(200);
	audit_flush(sb->audit);
	dbg("%.2f ms: done", ms_now() - t0);
	return status_out;
}
