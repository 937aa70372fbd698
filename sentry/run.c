/* sentry/run.c - sentry_run(): set-up, then the main thread becomes the
 * ptrace tracer of every guest task (tracer.c; ptrace requests must come
 * from the thread that attached) while worker threads answer notifications. */
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
#include <sys/wait.h>
#include <time.h>
#include <malloc.h>
#include <seccomp.h>
#include <unistd.h>

static volatile pid_t forward_to;

static void forward_signal(int sig)
{
	if (forward_to > 0)
		kill(forward_to, sig);
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
	/* one malloc arena: per-thread arenas cost ~64 KiB each per worker */
	mallopt(M_ARENA_MAX, 1);
	char err[512] = "";
	struct sandbox *sb = xcalloc(1, sizeof *sb);
	sb->guest_procfd = -1;
	if (getrandom(&sb->id, sizeof sb->id, 0) != sizeof sb->id)
		sb->id = moat_hash(&sb, sizeof sb) ^ (uint64_t)getpid();
	snprintf(sb->id_str, sizeof sb->id_str, "%016llx", (unsigned long long)sb->id);
	sb->hostname = "moat";
	uid_t uid = getuid();
	gid_t gid = getgid();
	sb->idmap.host_uid = sb->idmap.guest_uid = uid;
	sb->idmap.host_gid = sb->idmap.guest_gid = gid;
	sb->idmap.full_identity = uid == 0;
	dbg("%.2f ms: start", ms_now() - t0);

	/* 1. the view */
	struct view view;
	if (view_plan(cfg, &view, err, sizeof err) < 0)
		die_status(2, "%s", err);

	dbg("%.2f ms: view planned", ms_now() - t0);
	/* 2. policy, audit, filter */
	sb->audit = audit_open(cfg->audit_path, cfg->trace, err, sizeof err);
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
	struct spawn_args sa = {
		.filter = &prog, .argv = cfg->argv, .envp = envp, .uid = uid, .gid = gid,
		.loader = moat_loader_start,
		.loader_len = (size_t)(moat_loader_end - moat_loader_start),
	};
	struct spawn_result sr;
	if (spawn_guest(&sa, &sr, err, sizeof err) < 0)
		die("%s", err);

	/* 4. gofer and VFS (measured: starting the gofer before the filter is
	 * built is slower on 2 CPUs; the init's set-up overlaps with it here) */
	pid_t gofer_pid;
	int gofer_ctl;
	if (gofer_start(view.exports, view.nexports, &gofer_pid, &gofer_ctl, err, sizeof err) < 0)
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
		probe.cred.ruid = probe.cred.euid = probe.cred.fsuid = uid;
		probe.cred.rgid = probe.cred.egid = probe.cred.fsgid = gid;
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
	if (confine_sentry(sb, err, sizeof err) < 0)
		warnx_("%s", err);
	malloc_trim(0); /* give set-up's heap back */
	dbg("%.2f ms: confined", ms_now() - t0);
	crash_install(sr.init_pid);

	struct sigaction fwd;
	memset(&fwd, 0, sizeof fwd);
	fwd.sa_handler = forward_signal;
	fwd.sa_flags = SA_RESTART;
	int fsigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 };
	for (unsigned i = 0; i < ARRAY_SIZE(fsigs); i++)
		sigaction(fsigs[i], &fwd, NULL);
	signal(SIGPIPE, SIG_IGN);

	/* 5. the ptrace loop (tracer.c) */
	struct tracer_args ta = {
		.sb = sb, .gofer_pid = &gofer_pid, .sync_sock = sr.sync_sock, .uid = uid,
		.gid = gid, .workdir = workdir, .crash_test = crash_test,
		.forward_to = &forward_to, .t0 = t0,
	};
	int status_out = tracer_run(&ta);
	dbg("%.2f ms: guest gone", ms_now() - t0);
	/* everything in the guest is gone: stop the gofer */
	close(gofer_ctl);
	if (gofer_pid > 0) {
		/* reap it: a zombie must not outlive the sandbox */
		kill(gofer_pid, SIGKILL);
		waitpid(gofer_pid, NULL, 0);
	}
	dbg("%.2f ms: done", ms_now() - t0);
	return status_out;
}
