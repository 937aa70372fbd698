/* sentry/limits.c - resource limits, time limits, output caps and the
 * --result summary of one sandbox.
 *
 * Layers (README "Limits" has the table of which holds how in each mode):
 *   1. a cgroup per sandbox, "moat-<sandbox id>", made with the caller's
 *      privilege before the sentry drops it: cgroup v2 where the hierarchy
 *      offers the controllers (as a sibling of moat's own cgroup, so that the
 *      "no internal processes" rule holds, or in the root cgroup), else the v1
 *      memory, pids, cpu and cpuacct hierarchies (as a child of moat's own
 *      cgroup in each). The sentry opens every cgroup file it needs then; once
 *      the guest's init is cloned its pid goes into cgroup.procs (the whole
 *      guest tree follows). A cleanup helper, "moat-cgroup", forked with the
 *      caller's privilege, waits for the end of a pipe the sentry holds; when
 *      the sentry closes it (or dies) it kills what is left in the cgroup
 *      (cgroup.kill, or SIGKILL to each listed pid on v1) and removes it.
 *   2. rlimits set by moat-init before it forks the program: RLIMIT_NPROC =
 *      --pids + 2 (counted per user namespace and uid: each sandbox has its
 *      own; + 2 like pids.max: moat-init and a refused child; root-run + 3:
 *      moat-reopen is that uid in that namespace too, sentry/run.c), RLIMIT_DATA = --memory when no memory controller holds it.
 *   3. the sentry's own accounting: the tracer's task table refuses a fork
 *      past --pids (EAGAIN, like the kernel), a watchdog thread ends the
 *      sandbox at --timeout, --idle-timeout (no trapped call, no output), on
 *      an OOM kill in the cgroup or, without a memory cgroup, when the tree's
 *      PSS (sampled every 50 ms from the guest's procfs) passes --memory, and
 *      a relay thread caps the output.
 * Ending the sandbox: SIGTERM to every guest process, a grace period, then
 * SIGKILL of moat-init, which ends its pid namespace: no process escapes by
 * forking, setsid or ignoring signals.
 */
#include "sentry/sentry.h"
#include "kernel/task.h"
#include "fs/walk.h"
#include "common/log.h"
#include "common/util.h"
#include "gofer/gofer.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CG_ROOT "/sys/fs/cgroup"
#define CG_MAX 4
#define GRACE_MS 500
#define CG_CLEANUP_MS 5000

static const char *const reason_names[] = {
	[REASON_EXITED] = "exited",         [REASON_SIGNALED] = "killed-by-signal",
	[REASON_TIMEOUT] = "timeout",       [REASON_IDLE] = "idle-timeout",
	[REASON_MEMORY] = "memory",         [REASON_PIDS] = "pids",
	[REASON_OUTPUT] = "output-limit",   [REASON_POLICY] = "policy-kill",
	[REASON_SENTRY] = "sentry-error",   [REASON_KILL_AFTER] = "kill-after",
	[REASON_FILES] = "files",
};

struct limits {
	const struct sentry_config *cfg;
	struct sandbox *sb;
	double t0;
	double dog_start;               /* --timeout counts from here (moat_ms_now) */
	/* cgroup */
	int cgv;                        /* 0 none, 1, 2 */
	char dirs[CG_MAX][PATH_MAX];
	int ndirs;
	int procs_fd[CG_MAX];
	int nprocs;
	int mem_procs;                  /* index of the memory controller's cgroup.procs, -1 none */
	int cpu_dir[2];                 /* v1: indexes of the cpu and cpuacct dirs, -1 none */
	char home[CG_MAX][PATH_MAX];    /* moat's own cgroup in each dir's hierarchy */
	int mem_ok, pids_ok, cpu_ok;    /* the cgroup holds this limit */
	int mem_events_fd, mem_peak_fd, pids_events_fd, cpu_stat_fd;
	long clk_tck;
	pid_t helper;
	int helper_fd;                  /* write end: closing it starts the cleanup */
	/* output relay */
	int out_r[2], out_w[2];         /* read ends (ours), write ends (the init's) */
	unsigned long long out_bytes[2];
	int out_cut[2];                 /* past --output-limit */
	int out_dropped;                /* relay_wait gave up on the caller's fd */
	pthread_t relay;
	int relay_started;
	pid_t relay_tid;                /* for RELAY_SIG: a write blocked on the caller's fd */
	int relay_done;                 /* relay_main returned */
	int relay_abandon;              /* stop: the rest of the output is not waited for */
	int drain_stop;                 /* SIGTERM/SIGINT/SIGHUP to moat after the program's end */
	long long relay_progress_ms;    /* the last write to the caller's fd that completed */
	/* watchdog */
	pthread_t dog;
	int dog_started;
	int dog_wake[2];                /* limits_finish wakes the watchdog at once */
	volatile int done;
	int reason;                     /* REASON_* set by whoever ended the sandbox, 0 if none */
	unsigned long long oom_base;    /* oom_kill count when the guest was attached */
	unsigned long long pss_peak;    /* no memory cgroup: the tree's largest PSS sum seen */
	unsigned long long pte_sum;     /* the guest's page tables and threads at the last PTE_EVERY-th sample */
	unsigned long long vma_sum;     /* its VMAs (maps lines) x VMA_BYTES at the last count */
	double maps_next;               /* no VMA count before (moat_ms_now) */
	unsigned pte_round;
	/* the host's file table (files_setup): fs/file-nr held open, the
	 * sandbox's share of fs.file-max, the largest count of its own seen */
	int files_nr_fd;
	unsigned long long files_share, files_held;
	/* fs.file-max; ended while the host's table was low (hostres.c), and
	 * the host's count then */
	unsigned long long files_max, files_low_used;
	int files_low;
	/* the host's memory (hostmem_over): /proc/meminfo held open; ended
	 * while the host was low, and what was held and available then */
	int meminfo_fd;
	double hostmem_next;
	int mem_host_low;
	unsigned long long mem_low_held, mem_low_avail, mem_low_total;
	double files_next;
	/* --kill-after: the first forwarded SIGTERM/SIGINT/SIGHUP and how many */
	int term_sig, term_count;
	long long term_first_ms;        /* when the first came (CLOCK_MONOTONIC) */
	int term_second;                /* killed by a second one, before the grace ended */
	/* result */
	int result_fd;
	int result_written;
	pid_t sentry_pid;
	pid_t relays[3];                /* moat-netd, moat-broker, moat-reopen: join with the sentry */
	/* no memory cgroup: smaps_rollup of moat's own processes that work for
	 * the guest (the sentry, the gofer, the relays), opened while we may */
	int own_pss[6];
	int n_own_pss;
};

/* v2: the gofer shares the sandbox's cgroup (limits_attach_gofer): room in
 * pids.max for it, its scratch reaper and a connection thread per sentry
 * worker (pipeline.c: 64) and the tracer's; plus --pids more for the
 * workers of calls that wait for another task (pipeline_wait_begin: one per
 * waiting guest task at most). The guest itself is held to --pids by the
 * sentry's task table and RLIMIT_NPROC. */
#define GOFER_PIDS_SLACK 80

static struct limits *g_lim; /* for the die hook and the tty hook */

const char *limits_reason_name(int r)
{
	return r > 0 && r < REASON_N ? reason_names[r] : "exited";
}

/* ---- cgroup files ---- */

static int write_at(const char *dir, const char *file, const char *val)
{
	char p[PATH_MAX + 64];
	snprintf(p, sizeof p, "%s/%s", dir, file);
	int fd = open(p, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n = write(fd, val, strlen(val));
	int e = n < 0 ? -errno : 0;
	close(fd);
	return e;
}

static int open_at(const char *dir, const char *file, int flags)
{
	char p[PATH_MAX + 64];
	snprintf(p, sizeof p, "%s/%s", dir, file);
	return open(p, flags | O_CLOEXEC);
}

static ssize_t read_small(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = 0;
	return n;
}

/* pread the whole (small) file behind fd; -1 on failure */
static ssize_t pread_small(int fd, char *buf, size_t len)
{
	if (fd < 0)
		return -1;
	ssize_t n = pread(fd, buf, len - 1, 0);
	if (n < 0)
		return -1;
	buf[n] = 0;
	return n;
}

/* "key value" lines: the value of key, or -1 */
static long long field(const char *text, const char *key)
{
	size_t kl = strlen(key);
	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (strncmp(p, key, kl) == 0 && p[kl] == ' ')
			return strtoll(p + kl + 1, NULL, 10);
	return -1;
}

/* w is a word of list (separated by spaces, newlines or commas) */
static int has_word(const char *list, const char *w)
{
	size_t l = strlen(w);
	for (const char *p = list; (p = strstr(p, w)); p += l)
		if ((p == list || p[-1] == ' ' || p[-1] == '\n' || p[-1] == ',') &&
		    (p[l] == 0 || p[l] == ' ' || p[l] == '\n' || p[l] == ','))
			return 1;
	return 0;
}

/* moat's own cgroup path in the hierarchy whose /proc/self/cgroup line
 * names ctrl ("" for the v2 line) */
static int own_cgroup(const char *ctrl, char *out, size_t len)
{
	char buf[4096];
	if (read_small("/proc/self/cgroup", buf, sizeof buf) < 0)
		return -1;
	for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
		char *c1 = strchr(line, ':');
		char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (!c2)
			continue;
		*c2 = 0;
		int match = *ctrl ? has_word(c1 + 1, ctrl) : c1[1] == 0;
		if (match) {
			snprintf(out, len, "%s", c2 + 1);
			return 0;
		}
	}
	return -1;
}

static void cg_fail_remove(struct limits *l)
{
	for (int i = l->ndirs - 1; i >= 0; i--)
		rmdir(l->dirs[i]);
	l->ndirs = 0;
}

/* The empty cgroups of sandboxes gone before their cleanup helper existed
 * (moat killed between the mkdir and the helper's fork, red team 85: 4 of
 * 200 kills during start-up left `moat-<id>` directories in the v1 pids
 * and cpu hierarchies for good), swept from parent: older than a minute,
 * and rmdir only, which the kernel refuses (EBUSY) while a process is in
 * one (a live sandbox's init is in each of its own from its start). */
static void cg_clean_stale(const char *parent)
{
	DIR *dir = opendir(parent);
	struct dirent *de;
	time_t now = time(NULL);

	if (!dir)
		return;
	while ((de = readdir(dir))) {
		struct stat st;
		size_t k = 5;

		if (strncmp(de->d_name, "moat-", 5))
			continue;
		while (k < 21 && isxdigit((unsigned char)de->d_name[k]) && !isupper((unsigned char)de->d_name[k]))
			k++;
		if (k != 21 || de->d_name[k])
			continue;
		if (fstatat(dirfd(dir), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode) &&
		    now - st.st_mtime > 60 && unlinkat(dirfd(dir), de->d_name, AT_REMOVEDIR) == 0)
			dbg("cgroup: removed a stale %s/%s", parent, de->d_name);
	}
	closedir(dir);
}

static int setup_v2(struct limits *l, const char *root)
{
	const struct sentry_config *c = l->cfg;
	char own[PATH_MAX], parent[PATH_MAX], buf[PATH_MAX + 64];
	if (own_cgroup("", own, sizeof own) < 0)
		return -1;
	/* a sibling of our own cgroup (our parent has no processes of its
	 * own), or the root cgroup when we are in it */
	if ((size_t)snprintf(l->home[0], sizeof l->home[0], "%s%s", root, strcmp(own, "/") ? own : "") >=
	    sizeof l->home[0])
		l->home[0][0] = 0;
	char *slash = strrchr(own, '/');
	if (slash && slash != own)
		*slash = 0;
	else
		own[0] = 0;
	if (snprintf(parent, sizeof parent, "%s%s", root, own) >= (int)sizeof parent)
		return -1;
	/* we must be able to make the child and to move our init from our
	 * cgroup into it: cgroup.procs of the common ancestor */
	snprintf(buf, sizeof buf, "%s/cgroup.procs", parent);
	if (access(parent, W_OK) < 0 || access(buf, W_OK) < 0)
		return -1;
	snprintf(buf, sizeof buf, "%s/cgroup.controllers", parent);
	char avail[512], enabled[512];
	if (read_small(buf, avail, sizeof avail) < 0)
		return -1;
	snprintf(buf, sizeof buf, "%s/cgroup.subtree_control", parent);
	if (read_small(buf, enabled, sizeof enabled) < 0)
		enabled[0] = 0;
	const char *want[] = { "memory", "pids", "cpu" };
	for (int i = 0; i < 3; i++)
		if (has_word(avail, want[i]) && !has_word(enabled, want[i])) {
			char plus[16];
			snprintf(plus, sizeof plus, "+%s", want[i]);
			write_at(parent, "cgroup.subtree_control", plus); /* may fail: then not held here */
		}
	cg_clean_stale(parent);
	if (snprintf(l->dirs[0], sizeof l->dirs[0], "%s/moat-%s", parent, l->sb->id_str) >=
		    (int)sizeof l->dirs[0] ||
	    mkdir(l->dirs[0], 0755) < 0)
		return -1;
	l->ndirs = 1;
	const char *d = l->dirs[0];
	snprintf(buf, sizeof buf, "%s/cgroup.controllers", d);
	if (read_small(buf, avail, sizeof avail) < 0)
		avail[0] = 0;
	char v[64];
	if (has_word(avail, "memory")) {
		if (c->memory) {
			snprintf(v, sizeof v, "%llu", c->memory);
			l->mem_ok = write_at(d, "memory.max", v) == 0;
			write_at(d, "memory.swap.max", "0");
			/* no memory.oom.group: the gofer shares this cgroup
			 * (limits_attach_gofer) and a group kill would take it
			 * and the export with it; an OOM kill takes a guest
			 * process (oom_score_adj 1000) and the watchdog ends
			 * the rest of the sandbox */
		}
		l->mem_events_fd = open_at(d, "memory.events", O_RDONLY);
		l->mem_peak_fd = open_at(d, "memory.peak", O_RDONLY);
	}
	if (has_word(avail, "pids")) {
		if (c->pids) {
			/* + moat-init, + a refused child, + the gofer's
			 * threads when it is in this cgroup too (with
			 * --memory: limits_attach_gofer; the sentry's task
			 * table holds --pids either way) */
			/* (and the sentry's threads, limits_attach: as many) */
			snprintf(v, sizeof v, "%lu", c->pids + 2 +
				 (c->memory || c->cpus_milli ? 2 * (GOFER_PIDS_SLACK + c->pids) : 0));
			l->pids_ok = write_at(d, "pids.max", v) == 0;
		}
		l->pids_events_fd = open_at(d, "pids.events", O_RDONLY);
	}
	if (has_word(avail, "cpu") && c->cpus_milli) {
		snprintf(v, sizeof v, "%lu 100000", c->cpus_milli * 100);
		l->cpu_ok = write_at(d, "cpu.max", v) == 0;
	}
	l->cpu_stat_fd = open_at(d, "cpu.stat", O_RDONLY);
	l->procs_fd[0] = open_at(d, "cgroup.procs", O_WRONLY);
	if (l->procs_fd[0] < 0) {
		cg_fail_remove(l);
		return -1;
	}
	l->nprocs = 1;
	l->mem_procs = has_word(avail, "memory") ? 0 : -1;
	l->cgv = 2;
	return 0;
}

static int setup_v1(struct limits *l)
{
	const struct sentry_config *c = l->cfg;
	const char *ctrls[] = { "memory", "pids", "cpu", "cpuacct" };
	struct stat seen[CG_MAX];
	int nseen = 0;
	for (int i = 0; i < 4; i++) {
		char mnt[PATH_MAX], own[PATH_MAX], *d = l->dirs[l->ndirs];
		struct stat st;
		snprintf(mnt, sizeof mnt, "%s/%s", CG_ROOT, ctrls[i]);
		if (stat(mnt, &st) < 0 || !S_ISDIR(st.st_mode))
			continue;
		int dup = -1;
		for (int k = 0; k < nseen; k++) /* cpu,cpuacct mounted together */
			if (seen[k].st_dev == st.st_dev && seen[k].st_ino == st.st_ino)
				dup = k;
		if (own_cgroup(ctrls[i], own, sizeof own) < 0)
			continue;
		if (strcmp(own, "/") == 0)
			own[0] = 0;
		if (dup >= 0) {
			d = l->dirs[dup];
		} else {
			char par[PATH_MAX];
			if (snprintf(par, sizeof par, "%s%s", mnt, own) < (int)sizeof par)
				cg_clean_stale(par);
			if (snprintf(d, PATH_MAX, "%s%s/moat-%s", mnt, own, l->sb->id_str) >= PATH_MAX ||
			    mkdir(d, 0755) < 0)
				continue;
			int pfd = open_at(d, "cgroup.procs", O_WRONLY);
			if (pfd < 0) {
				rmdir(d);
				continue;
			}
			seen[nseen++] = st;
			if ((size_t)snprintf(l->home[l->nprocs], PATH_MAX, "%s%s", mnt, own) >= PATH_MAX)
				l->home[l->nprocs][0] = 0; /* (not moved back: the helper skips it) */
			if (i == 0)
				l->mem_procs = l->nprocs;
			if (i >= 2)
				l->cpu_dir[i - 2] = l->nprocs;
			l->procs_fd[l->nprocs++] = pfd;
			l->ndirs++;
		}
		char v[64];
		if (i == 0) {
			if (c->memory) {
				snprintf(v, sizeof v, "%llu", c->memory);
				l->mem_ok = write_at(d, "memory.limit_in_bytes", v) == 0;
				write_at(d, "memory.memsw.limit_in_bytes", v); /* no swap either, where accounted */
				/* socket buffers: v1 charges them (to a counter of their
				 * own) only once this is set; unset, a guest under
				 * --memory 64M queued 422 MB on loopback TCP, all of it
				 * from the host's one tcp_mem budget (red team 23) */
				write_at(d, "memory.kmem.tcp.limit_in_bytes", v);
			}
			l->mem_events_fd = open_at(d, "memory.oom_control", O_RDONLY);
			l->mem_peak_fd = open_at(d, "memory.max_usage_in_bytes", O_RDONLY);
		} else if (i == 1) {
			if (c->pids) {
				snprintf(v, sizeof v, "%lu", c->pids + 2);
				l->pids_ok = write_at(d, "pids.max", v) == 0;
			}
			l->pids_events_fd = open_at(d, "pids.events", O_RDONLY);
		} else if (i == 2) {
			if (c->cpus_milli) {
				l->cpu_ok = write_at(d, "cpu.cfs_period_us", "100000") == 0;
				snprintf(v, sizeof v, "%lu", c->cpus_milli * 100);
				l->cpu_ok = l->cpu_ok && write_at(d, "cpu.cfs_quota_us", v) == 0;
			}
		} else {
			l->cpu_stat_fd = open_at(d, "cpuacct.stat", O_RDONLY);
		}
	}
	if (!l->ndirs)
		return -1;
	l->cgv = 1;
	return 0;
}

/* Does the cgroup of procs fd / dir i take moat's own processes, the gofer
 * and the sentry (limits_attach_gofer, limits_attach)? The memory one with
 * --memory, the cpu (and cpuacct) one with --cpus: the gofer allocates the
 * guest's layers, and the sentry's workers spend CPU and memory on each
 * trapped call. Before red team 17 the sentry stayed in moat's own cgroup:
 * under --cpus 0.1 four guest processes stat()ing a 4000-byte path of
 * "/bin/.." took 0.97 of a CPU in the sentry (the guest's own 0.03), and
 * 824 guest threads waiting in FIFO opens held 58 MB of sentry workers
 * outside --memory 64M. Never the pids one (v1): --pids counts guest
 * tasks. */
static int moat_joins(const struct limits *l, int i)
{
	if (l->cgv == 2)
		return i == 0 && (l->cfg->memory || l->cfg->cpus_milli);
	return (i == l->mem_procs && l->cfg->memory) ||
	       ((i == l->cpu_dir[0] || i == l->cpu_dir[1]) && l->cfg->cpus_milli);
}

/* The cleanup helper: the caller's privilege, no channel but a pipe whose
 * end is all it waits for. */
static _Noreturn void helper_main(struct limits *l, int rfd)
{
	prctl(PR_SET_NAME, "moat-cgroup");
	/* nothing of the sentry's: above all not the guest's output pipes */
	if (rfd != 3 && dup2(rfd, 3) == 3)
		rfd = 3;
	syscall(SYS_close_range, rfd + 1, ~0U, 0);
	leave_caller_terminal(); /* the caller's ^C must not take it before it has cleaned up */
	for (int s = 1; s < NSIG; s++)
		if (s != SIGKILL && s != SIGSTOP)
			signal(s, SIG_IGN);
	char c;
	ssize_t got;
	while ((got = read(rfd, &c, 1)) < 0 && errno == EINTR)
		;
	/* a byte first: the sentry is ending the run itself (limits_finish,
	 * die); the end of the pipe alone: it was killed (red team 18: an
	 * OOM kill in the sandbox's memory cgroup, which the sentry has been
	 * in since round 17, ended moat with 137 and not a word) */
	int sentry_died = got <= 0;
	for (ssize_t r = 1; !sentry_died && r != 0;) /* then its end, as before */
		if ((r = read(rfd, &c, 1)) < 0 && errno != EINTR)
			break;
	/* the OOM count, while the cgroup is there */
	long long ooms = 0;
	for (int i = 0; sentry_died && i < l->ndirs; i++) {
		char p[PATH_MAX + 32], buf[1024];
		snprintf(p, sizeof p, "%s/memory.events", l->dirs[i]);
		if (read_small(p, buf, sizeof buf) <= 0) {
			snprintf(p, sizeof p, "%s/memory.oom_control", l->dirs[i]);
			if (read_small(p, buf, sizeof buf) <= 0)
				continue;
		}
		long long n = field(buf, "oom_kill");
		if (n > 0)
			ooms += n;
	}
	/* the sentry (limits_attach) back home first: it waits for us (or
	 * is gone; while it is our parent its pid is its own), and a cgroup
	 * it were still in would be neither removed nor killed with it */
	if (getppid() == l->sentry_pid)
		for (int i = 0; i < l->ndirs; i++)
			if (moat_joins(l, i) && l->home[i][0]) {
				char p[PATH_MAX + 32], v[32];
				snprintf(p, sizeof p, "%s/cgroup.procs", l->home[i]);
				snprintf(v, sizeof v, "%d", (int)l->sentry_pid);
				int fd = open(p, O_WRONLY | O_CLOEXEC);
				if (fd >= 0) {
					(void)!write(fd, v, strlen(v));
					close(fd);
				}
			}
	double end = moat_ms_now() + CG_CLEANUP_MS;
	for (int i = 0; i < l->ndirs; i++) {
		const char *d = l->dirs[i];
		if (l->cgv == 2)
			write_at(d, "cgroup.kill", "1");
		for (;;) {
			if (rmdir(d) == 0 || errno == ENOENT || moat_ms_now() > end)
				break;
			{ /* v1 has no cgroup.kill; on v2 it is a second pass */
				char p[PATH_MAX + 32], buf[8192];
				snprintf(p, sizeof p, "%s/cgroup.procs", d);
				if (read_small(p, buf, sizeof buf) > 0)
					for (char *s = strtok(buf, "\n"); s; s = strtok(NULL, "\n"))
						if (atoi(s) > 1)
							kill(atoi(s), SIGKILL);
			}
			struct timespec ts = { 0, 10 * 1000 * 1000 };
			nanosleep(&ts, NULL);
		}
	}
	if (sentry_died) {
		char line[256];
		int n = snprintf(line, sizeof line,
				 "moat: the sandbox ended: moat's sentry was killed%s; its processes "
				 "and cgroup are removed\n",
				 ooms > 0 ? " (out of memory in the sandbox's --memory cgroup)" : "");
		/* not onto a stderr nobody reads: a helper blocked there stayed
		 * forever (red team 28) */
		struct pollfd e2 = { .fd = 2, .events = POLLOUT };
		if (n > 0 && poll(&e2, 1, 1000) > 0)
			(void)!write(2, line, (size_t)n);
	}
	_exit(0);
}

/* ---- the die hook: a --result even when set-up or the sentry fails ---- */
static void write_result(struct limits *l, int status, int raw, int have_raw,
			 const struct rusage *ru);

static void on_die(int status)
{
	struct limits *l = g_lim;
	if (!l || getpid() != l->sentry_pid || l->result_written)
		return;
	if (!l->reason)
		l->reason = REASON_SENTRY;
	write_result(l, status, 0, 0, NULL);
}

/* die(): the cgroup helper told to go (the end of its pipe: it removes
 * the cgroup once it is empty) and its pid returned for the caller to reap
 * (sentry/run.c run_die_cleanup), or -1 */
pid_t limits_die_release(void)
{
	struct limits *l = g_lim;
	if (!l || getpid() != l->sentry_pid || l->helper_fd < 0)
		return -1;
	(void)!write(l->helper_fd, "q", 1); /* our own end, not a kill */
	close(l->helper_fd);
	l->helper_fd = -1;
	pid_t h = l->helper;
	l->helper = -1;
	return h;
}

/* With the output relayed, the program's stdin must not be a way around
 * it: a terminal is usually the caller's stdin, stdout and stderr at once,
 * open read-write, and a guest wrote without end to fd 0 past
 * --output-limit (red team round 10): tty_stdin_read_only (tty.c). */
/* ---- the host's file table ----
 *
 * fs.file-max is one count for the whole host (alloc_empty_file: past it
 * every open, pipe, socket, eventfd... of a process without CAP_SYS_ADMIN
 * in the host's namespace is ENFILE), and no namespace, cgroup or uid
 * scopes it. A guest's files are mostly made by calls that never stop
 * (pipe, socket, eventfd, epoll_create: FAST), each process may hold up to
 * its RLIMIT_NOFILE, and the task bound times that is far past the table
 * (red team 95: 130 rootless processes x 19,000 eventfds would fill this
 * host's 2,466,248, with --memory 64M counting none of it). So a sandbox
 * holds at most an eighth of fs.file-max: the watchdog reads the host's
 * count (one pread of fs/file-nr, held open from set-up) and, only while
 * that is past the share, counts the sandbox's own (the fds of each guest
 * process, /proc/PID/fd: a file shared by forked processes counts once
 * per process, an overcount; a file only mapped or in flight in an
 * SCM_RIGHTS message is not counted) and ends the sandbox past it. */
#define FILES_SHARE_DIV 8
#define FILES_UNBOUNDED (1ULL << 40) /* systemd raises file-max to LONG_MAX */
#define FILES_EVERY_MS 100

static void files_setup(struct limits *l)
{
	char buf[64];
	l->files_nr_fd = -1;
	if (read_small("/proc/sys/fs/file-max", buf, sizeof buf) <= 0)
		return;
	unsigned long long max = strtoull(buf, NULL, 10);
	if (!max || max >= FILES_UNBOUNDED)
		return;
	l->files_share = max / FILES_SHARE_DIV;
	l->files_max = max;
	const char *t = getenv("MOAT_TEST_FILES_SHARE"); /* only ever lower (tests) */
	if (t && strtoull(t, NULL, 10) > 0 && strtoull(t, NULL, 10) < l->files_share)
		l->files_share = strtoull(t, NULL, 10);
	l->files_nr_fd = open("/proc/sys/fs/file-nr", O_RDONLY | O_CLOEXEC);
}

/* the names of an open directory, one getdents64 buffer at a time (the
 * watchdog's stack is 64 KiB) */
struct dir_it {
	int d;
	long n, off;
	char buf[4096];
};

static const char *dir_next(struct dir_it *it)
{
	if (it->off >= it->n) {
		it->n = syscall(SYS_getdents64, it->d, it->buf, sizeof it->buf);
		it->off = 0;
		if (it->n <= 0)
			return NULL;
	}
	unsigned short reclen; /* struct linux_dirent64: d_ino, d_off, d_reclen, d_type, d_name */
	memcpy(&reclen, it->buf + it->off + 16, sizeof reclen);
	const char *name = it->buf + it->off + 19;
	it->off += reclen;
	return name;
}

/* the fds of every process of the guest's pid namespace */
static unsigned long long files_own(struct limits *l)
{
	int pfd = l->sb->guest_procfd;
	unsigned long long n = 0;
	if (pfd < 0)
		return 0;
	struct dir_it procs = { .d = openat(pfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC) };
	if (procs.d < 0)
		return 0;
	char path[64];
	for (const char *name; (name = dir_next(&procs));) {
		if (name[0] < '1' || name[0] > '9')
			continue;
		snprintf(path, sizeof path, "%.20s/fd", name);
		struct dir_it fds = { .d = openat(pfd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC) };
		if (fds.d < 0)
			continue;
		/* Linux 6.2 on: the directory's size is its count
		 * (proc_fd_getattr: a scan of the open-fd bitmap, ~11 us at
		 * 19,000 fds where the entries' walk takes ~140 ms); before,
		 * 0, and the entries are walked */
		struct stat st;
		if (fstat(fds.d, &st) == 0 && st.st_size > 0)
			n += (unsigned long long)st.st_size;
		else
			for (const char *f; (f = dir_next(&fds));)
				n += strcmp(f, ".") && strcmp(f, "..");
		close(fds.d);
	}
	close(procs.d);
	return n;
}

/* The host's memory (the host's reserve, hostres.c): without --memory a
 * sandbox's processes and in-memory layers (seven 512M tmpfs exports and
 * the cow scratch, half the RAM on Linux >= 6.6) are bounded by the host's
 * RAM alone, and tmpfs pages are in no process's RSS: the kernel's OOM
 * killer, once the host is out, kills the largest process it finds, some
 * neighbour, and frees none of them. So every HOSTMEM_EVERY_MS the
 * watchdog reads MemAvailable and SwapFree, and while together they are
 * under a sixteenth of MemTotal, counts the sandbox's own (the guest tree's PSS and its private
 * layers' files, as --memory's sample without a cgroup does) and ends a
 * sandbox holding more than hostres_mem_floor, reason "memory". With
 * --memory too: the values the caller gave several sandboxes may add up
 * past the host. */
#define HOSTMEM_EVERY_MS 250

static void hostmem_setup(struct limits *l)
{
	l->meminfo_fd = open("/proc/meminfo", O_RDONLY | O_CLOEXEC);
}

/* a "Name:   N kB" line of /proc/meminfo (field), in bytes; 0 if missing */
static unsigned long long meminfo_field(const char *buf, const char *name)
{
	long long kb = field(buf, name);
	return kb > 0 ? (unsigned long long)kb * 1024ULL : 0;
}

static unsigned long long tree_pss(struct limits *l, int *cut_out);

static int hostmem_over(struct limits *l, double now)
{
	char buf[4096];
	if (l->meminfo_fd < 0 || now < l->hostmem_next)
		return 0;
	l->hostmem_next = now + HOSTMEM_EVERY_MS;
	if (pread_small(l->meminfo_fd, buf, sizeof buf) <= 0)
		return 0;
	unsigned long long total = meminfo_field(buf, "MemTotal:"), avail = meminfo_field(buf, "MemAvailable:");
	if (avail)
		avail += meminfo_field(buf, "SwapFree:");
	if (!total || !avail || !hostres_mem_low(l->sb, total, avail))
		return 0;
	int cut = 0;
	unsigned long long m = tree_pss(l, &cut) + (l->sb->vfs ? vfs_private_used(l->sb->vfs) : 0);
	double cost = moat_ms_now() - now;
	if (cost * 4 > HOSTMEM_EVERY_MS)
		l->hostmem_next = now + cost * 5; /* at most a fifth of a CPU */
	if (cut || m <= hostres_mem_floor(total))
		return 0; /* (a cut sample: the deadline's, the loop's next round) */
	l->mem_host_low = 1;
	l->mem_low_held = m;
	l->mem_low_avail = avail;
	l->mem_low_total = total;
	return 1;
}

/* 1: the sandbox holds more than its share of the host's file table */
static int files_over(struct limits *l, double now)
{
	char buf[96];
	if (l->files_nr_fd < 0 || now < l->files_next)
		return 0;
	l->files_next = now + FILES_EVERY_MS;
	if (pread_small(l->files_nr_fd, buf, sizeof buf) <= 0)
		return 0;
	unsigned long long used = strtoull(buf, NULL, 10);
	/* the host's last eighth, whoever holds the rest (hostres.c): then
	 * a sandbox holds at most the floor */
	int low = hostres_files_low(l->sb, l->files_max, used);
	if (used <= l->files_share && !low)
		return 0; /* the whole host holds no more than the share */
	unsigned long long own = files_own(l);
	if (own > l->files_held)
		l->files_held = own;
	/* the count walks every fd: at most a fifth of a CPU (as the memory
	 * sample, red team 78) */
	double cost = moat_ms_now() - now;
	if (cost * 4 > FILES_EVERY_MS)
		l->files_next = now + cost * 5;
	if (own > l->files_share)
		return 1;
	if (low && own > hostres_files_floor(l->files_max)) {
		l->files_low = 1;
		l->files_low_used = used;
		return 1;
	}
	return 0;
}

struct limits *limits_setup(const struct sentry_config *cfg, struct sandbox *sb, double t0,
			    char *err, size_t errlen)
{
	struct limits *l = xcalloc(1, sizeof *l);
	l->mem_procs = -1;
	l->cpu_dir[0] = l->cpu_dir[1] = -1;
	l->cfg = cfg;
	l->sb = sb;
	l->t0 = t0;
	l->helper = -1;
	l->helper_fd = -1;
	l->result_fd = -1;
	l->mem_events_fd = l->mem_peak_fd = l->pids_events_fd = l->cpu_stat_fd = -1;
	files_setup(l);
	hostmem_setup(l);
	l->out_r[0] = l->out_r[1] = l->out_w[0] = l->out_w[1] = -1;
	l->dog_wake[0] = l->dog_wake[1] = -1;
	l->sentry_pid = getpid();
	l->clk_tck = sysconf(_SC_CLK_TCK);
	if (l->clk_tck <= 0)
		l->clk_tck = 100;
	g_lim = l;
	if (cfg->result_path) {
		/* never through a final symlink or into a FIFO (audit.c) */
		l->result_fd = open_caller_output(cfg->result_path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
		if (l->result_fd < 0) /* a usage error, like a bad --bind */
			die_status(2, "--result %s: %s", cfg->result_path, caller_output_error(errno));
		if (ftruncate(l->result_fd, 0) < 0 && errno != EINVAL)
			die_status(2, "--result %s: %s", cfg->result_path, strerror(errno));
		moat_die_hook = on_die;
	}
	/* stdout/stderr through the sentry: only when a cap or idle detection
	 * needs to see them (-t: the pty relay counts instead) */
	if ((cfg->output_limit || cfg->idle_ms) && !cfg->tty) {
		for (int i = 0; i < 2; i++) {
			int p[2];
			if (pipe2(p, O_CLOEXEC) < 0) {
				snprintf(err, errlen, "--output-limit: pipe: %s", strerror(errno));
				return NULL;
			}
			l->out_r[i] = p[0];
			l->out_w[i] = p[1];
		}
		tty_stdin_read_only("--output-limit: the program can write to it past the cap");
	}
	if (!(cfg->memory || cfg->pids || cfg->cpus_milli || cfg->result_path))
		return l;
	char buf[512];
	int r = -1;
	if (read_small(CG_ROOT "/cgroup.controllers", buf, sizeof buf) >= 0)
		r = setup_v2(l, CG_ROOT);
	else if (read_small(CG_ROOT "/unified/cgroup.controllers", buf, sizeof buf) > 1 &&
		 (has_word(buf, "memory") || has_word(buf, "pids")))
		r = setup_v2(l, CG_ROOT "/unified");
	if (r < 0 && access(CG_ROOT "/memory", F_OK) == 0)
		r = setup_v1(l);
	/* a limit asked for and not held is said (red team 40: rootless
	 * without a delegated cgroup --cpus changed nothing, without a word;
	 * only --result's cpus_by said "none") */
	if (cfg->cpus_milli && (r < 0 || !l->cpu_ok))
		warnx_("--cpus %.3g is not held: no cpu cgroup moat may use (rootless without a "
		       "delegated one)", cfg->cpus_milli / 1000.0);
	if (r < 0) {
		dbg("no cgroup: rlimits and the sentry's accounting only");
		return l;
	}
	int pfd[2];
	if (pipe2(pfd, O_CLOEXEC) < 0) {
		cg_fail_remove(l);
		snprintf(err, errlen, "cgroup helper: pipe: %s", strerror(errno));
		return NULL;
	}
	pid_t h = fork();
	if (h < 0) {
		int e = errno;
		char why[128];
		cg_fail_remove(l);
		snprintf(err, errlen, SPAWN_FAILED_FMT, "the cgroup helper", spawn_error(e, why, sizeof why));
		return NULL;
	}
	if (h == 0) {
		close(pfd[1]);
		helper_main(l, pfd[0]);
	}
	close(pfd[0]);
	l->helper = h;
	l->helper_fd = pfd[1];
	dbg("cgroup v%d: %s (memory %d, pids %d, cpu %d)", l->cgv, l->dirs[0], l->mem_ok,
	    l->pids_ok, l->cpu_ok);
	return l;
}

void limits_spawn_args(const struct limits *l, int *out_fd, int *err_fd, unsigned long *nproc,
		       unsigned long long *data)
{
	*out_fd = l->out_w[0];
	*err_fd = l->out_w[1];
	/* the sentry's task table refuses first (and counts); the kernel's
	 * limits are the backstop: + moat-init, + its act thread (a task of
	 * the uid, which RLIMIT_NPROC counts: sentry/spawn.c init_act), + the
	 * refused child that lives until the tracer has killed it */
	*nproc = l->cfg->pids ? l->cfg->pids + 3 : 0;
	/* RLIMIT_DATA only where no cgroup holds the memory: with one, the OOM
	 * kill (and its report) comes first */
	*data = l->mem_ok ? 0 : l->cfg->memory;
}

static unsigned long long oom_kills(struct limits *l)
{
	char buf[1024];
	if (pread_small(l->mem_events_fd, buf, sizeof buf) < 0)
		return 0;
	long long n = field(buf, "oom_kill");
	return n > 0 ? (unsigned long long)n : 0;
}

int limits_memory_by_cgroup(const void *limits)
{
	const struct limits *l = limits;
	return l && l->mem_ok;
}

/* Without a memory cgroup the watchdog's sample is the guest tree's PSS
 * (its procfs), which holds none of moat's own processes: the sentry's
 * workers (one per guest call that waits: ~70 KiB of stack and heap each),
 * the gofer's connection threads, moat-netd's and moat-broker's sockets
 * grew for the guest outside --memory (red team 20: 500 guest threads
 * waiting in FIFO opens held 38 MB of sentry and 12 MB of gofer RSS under
 * rootless --memory 32M; peak_memory_bytes said 4.4 MB). Their
 * smaps_rollup is opened now, while we are still theirs to read (before
 * the Landlock scope for the gofer, the parent of the relays), and read
 * at each sample with pread (mm_access is checked at open only). */
static void own_pss_note(struct limits *l, pid_t pid)
{
	if (!l || !l->cfg->memory || l->mem_ok || pid <= 0 ||
	    l->n_own_pss >= (int)(sizeof l->own_pss / sizeof l->own_pss[0]))
		return;
	char p[64];
	snprintf(p, sizeof p, "/proc/%d/smaps_rollup", (int)pid);
	int fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		dbg("%s: %s (not counted against --memory)", p, strerror(errno));
		return;
	}
	l->own_pss[l->n_own_pss++] = fd;
}

/* The gofer holds the guest's writable layers (tmpfs exports, the cow
 * scratch: copy-ups, symlinks, files it writes) and the kernel charges
 * those pages to the memory cgroup of the writer: the gofer goes into the
 * sandbox's memory cgroup, so --memory counts them (v1: the memory
 * hierarchy only, the pids and cpu ones stay the guest's; v2: the one
 * cgroup, pids.max has room for its threads). It moves itself, through
 * these fds (gofer_join_cgroups), once its set-up has forked the cow
 * scratch reaper, which must stay out: the cgroup's kill when moat is
 * killed took it before it removed a host scratch directory (red team 85;
 * our write right after its clone raced the reaper's fork). The guest's
 * oom_score_adj is 1000 (moat-init sets it, sentry/spawn.c) and the gofer
 * tries the minimum (gofer/setup.c; it needs CAP_SYS_RESOURCE): an OOM kill
 * in the cgroup takes a guest process, not the gofer, which still has the
 * layers to export; v2 sets no memory.oom.group for that reason. */
void limits_gofer_cgroups(void *limits)
{
	struct limits *l = limits;
	int fds[GOFER_JOIN_MAX];
	size_t n = 0;

	for (int i = 0; l && l->cgv && i < l->nprocs && n < GOFER_JOIN_MAX; i++)
		if (moat_joins(l, i))
			fds[n++] = l->procs_fd[i];
	gofer_join_cgroups(fds, n);
}

/* After the gofer's clone: its PSS is ours to report. */
void limits_attach_gofer(void *limits, pid_t gofer_pid)
{
	struct limits *l = limits;
	if (l && !l->n_own_pss)
		own_pss_note(l, getpid()); /* (the sentry: still the caller's, no scope yet) */
	own_pss_note(l, gofer_pid);
}

/* moat-netd, moat-broker and moat-reopen, forked before moat-init: they
 * relay the guest's traffic or open for it, so they join the sandbox's cgroups with the sentry
 * (limits_attach; killed with the cgroup at the end, after the audit
 * drain, as helpers_reap would) */
void limits_note_relay(void *limits, pid_t pid)
{
	struct limits *l = limits;
	own_pss_note(l, pid);
	for (int i = 0; l && pid > 0 && i < 3; i++)
		if (l->relays[i] <= 0) {
			l->relays[i] = pid;
			return;
		}
}

int limits_attach(void *limits, pid_t init_pid, char *err, size_t errlen)
{
	struct limits *l = limits;
	for (int i = 0; i < 2; i++)
		if (l->out_w[i] >= 0) {
			close(l->out_w[i]); /* the init has them */
			l->out_w[i] = -1;
		}
	if (!l->cgv)
		return 0;
	l->oom_base = oom_kills(l);
	char v[32];
	int n = snprintf(v, sizeof v, "%d", (int)init_pid);
	int e = 0;
	for (int i = 0; i < l->nprocs; i++) {
		if (!e && write(l->procs_fd[i], v, n) != n) {
			e = errno ? errno : EIO;
			snprintf(err, errlen, "cannot move the sandbox into its cgroup: %s", strerror(e));
		}
		/* the sentry too, where it works for the guest (moat_joins;
		 * the helper moves it back before it removes the cgroup) */
		char sv[32];
		int sn = snprintf(sv, sizeof sv, "%d", (int)getpid());
		if (!e && moat_joins(l, i) && write(l->procs_fd[i], sv, sn) != sn) {
			e = errno ? errno : EIO;
			snprintf(err, errlen, "cannot move the sentry into the sandbox's cgroup: %s",
				 strerror(e));
		}
		for (int k = 0; !e && k < 3; k++) {
			if (l->relays[k] <= 0 || !moat_joins(l, i))
				continue;
			sn = snprintf(sv, sizeof sv, "%d", (int)l->relays[k]);
			if (write(l->procs_fd[i], sv, sn) != sn)
				warnx_("cannot move moat-netd/moat-broker/moat-reopen into the sandbox's cgroup (%s)",
				       strerror(errno));
		}
		/* These fds were opened with the caller's privilege, which the
		 * kernel checks at write time (v1 and v2 use the opener's
		 * credentials): kept, they would let a compromised sentry move
		 * any host process into the sandbox's limits. Once is all we need. */
		close(l->procs_fd[i]);
		l->procs_fd[i] = -1;
	}
	l->nprocs = 0;
	return -e;
}

/* ---- ending the sandbox ---- */

static int term_one(struct task *t, void *arg)
{
	(void)arg;
	/* by pidfd where we have one: a task reaped meanwhile cannot be
	 * confused with a process that reuses its pid */
	if (t->pidfd >= 0)
		syscall(SYS_pidfd_send_signal, t->pidfd, SIGTERM, NULL, 0);
	else
		kill(t->tgid, SIGTERM);
	return 0;
}

static void sleep_ms(double ms)
{
	struct timespec ts = { (time_t)(ms / 1000), (long)((ms - (time_t)(ms / 1000) * 1000) * 1e6) };
	nanosleep(&ts, NULL);
}

/* SIGTERM to every guest process, a grace period, SIGKILL of the init (its
 * pid namespace goes with it). From the watchdog thread. */
void limits_end(struct limits *l, int reason)
{
	int expected = 0;
	if (!__atomic_compare_exchange_n(&l->reason, &expected, reason, 0, __ATOMIC_SEQ_CST,
					 __ATOMIC_SEQ_CST))
		return;
	task_for_each_leader(l->sb, term_one, NULL);
	double end = moat_ms_now() + GRACE_MS;
	while (!l->done && moat_ms_now() < end)
		sleep_ms(20);
	/* (not once the tracer has reaped it: the pid may be another's) */
	if (l->sb->init_pid > 0 && !__atomic_load_n(&l->sb->init_gone, __ATOMIC_SEQ_CST))
		kill(l->sb->init_pid, SIGKILL);
	/* a writer of moat's blocked on a terminal the guest stopped goes on */
	tty_guard_restore();
}

/* --kill-after: the sandbox is killed at once (the init's SIGKILL takes its
 * pid namespace, ptraced tasks and tasks in a call the sentry never answers
 * included). From a signal handler: atomics, kill(2). */
static void kill_now(struct limits *l)
{
	int expected = 0;
	/* a limit that ended the sandbox first keeps its reason */
	__atomic_compare_exchange_n(&l->reason, &expected, REASON_KILL_AFTER, 0, __ATOMIC_SEQ_CST,
				    __ATOMIC_SEQ_CST);
	if (l->sb->init_pid > 0 && !__atomic_load_n(&l->sb->init_gone, __ATOMIC_SEQ_CST))
		kill(l->sb->init_pid, SIGKILL);
}

#define TERM_REPEAT_MS 200

void limits_term_signal(int sig)
{
	struct limits *l = g_lim;
	if (!l || l->done)
		return;
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts); /* async-signal-safe */
	long long now = (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
	/* one request sent twice is not a second request: timeout(1) sends
	 * its SIGTERM to moat and then to its own process group, moat
	 * included, microseconds apart (a loaded machine runs the handler in
	 * between). A second one counts from TERM_REPEAT_MS on: a person's
	 * second ^C, a supervisor's escalation. */
	if (__atomic_load_n(&l->term_count, __ATOMIC_SEQ_CST) >= 1 &&
	    now - __atomic_load_n(&l->term_first_ms, __ATOMIC_SEQ_CST) < TERM_REPEAT_MS)
		return;
	int n = __atomic_add_fetch(&l->term_count, 1, __ATOMIC_SEQ_CST);
	if (n == 1) {
		__atomic_store_n(&l->term_first_ms, now, __ATOMIC_SEQ_CST);
		__atomic_store_n(&l->term_sig, sig, __ATOMIC_SEQ_CST);
	}
	if (n >= 2 || l->cfg->kill_after_ms == 0) {
		if (n >= 2)
			__atomic_store_n(&l->term_second, 1, __ATOMIC_SEQ_CST);
		kill_now(l);
	} else if (n == 1) {
		/* no thread of ours waits for it: the timer's SIGALRM ends it */
		unsigned long long ms = l->cfg->kill_after_ms;
		struct itimerval it = { .it_value = { (time_t)(ms / 1000), (suseconds_t)(ms % 1000) * 1000 } };
		if (setitimer(ITIMER_REAL, &it, NULL) < 0)
			kill_now(l); /* cannot wait: do not wait forever */
	}
}

void limits_kill_after(void)
{
	struct limits *l = g_lim;
	if (l && !l->done && __atomic_load_n(&l->term_count, __ATOMIC_SEQ_CST) > 0)
		kill_now(l);
}

/* No memory cgroup: the guest tree's memory as the sum of each process's
 * proportional set size (shared pages split between their users) and page
 * tables, threads and VMAs (status_kern, maps_lines), read from
 * the guest's procfs (the one path the confined sentry may open). Coarse:
 * sampled every 50 ms. */
static unsigned long long pss_at(int fd, off_t off)
{
	char txt[2048];
	ssize_t r = pread(fd, txt, sizeof txt - 1, off);
	if (r <= 0)
		return 0;
	txt[r] = 0;
	char *p = strstr(txt, "\nPss:");
	return p ? strtoull(p + 5, NULL, 10) * 1024 : 0;
}

/* Kernel memory each guest process holds outside any PSS and outside
 * RLIMIT_DATA, charged by estimate: its page tables (VmPTE), each thread's
 * kernel stack and task (16 KiB of stack, ~8 KiB of task_struct and the
 * rest: red team 68 measured +22 MB KernelStack and +11 MB slab for 1,365
 * threads) and each mapping's VMA (vm_area_struct, its share of the maple
 * tree, anon_vma chains: red team 68 measured ~217 B per VMA, +300 MB for
 * 1.38 M VMAs). */
#define THREAD_BYTES (24 * 1024ULL)
#define VMA_BYTES 256ULL

/* From a /proc/<pid>/status: "VmPTE:" in bytes plus "Threads:" times
 * THREAD_BYTES. Read as a stream of lines: the Groups line before them
 * has no fixed length (a line longer than the buffer is skipped). Red
 * team 68: one page of a memfd mapped read-only at 32,000 addresses 2 MiB
 * apart held 128 MiB of page tables per process under rootless --memory
 * 32M, PSS ~3 MB, RLIMIT_DATA untouched. */
static unsigned long long status_kern(int fd)
{
	char txt[4096 + 1];
	size_t keep = 0;
	int skipping = 0, found = 0;
	unsigned long long bytes = 0;
	for (int chunk = 0; chunk < 256 && found < 2; chunk++) { /* 1 MiB at most */
		ssize_t r = read(fd, txt + keep, sizeof txt - 1 - keep);
		if (r <= 0)
			break;
		size_t n = keep + (size_t)r, at = 0;
		txt[n] = 0;
		for (;;) {
			char *nl = memchr(txt + at, '\n', n - at);
			if (!nl)
				break;
			*nl = 0;
			if (!skipping) {
				const char *ln = txt + at;
				if (!strncmp(ln, "VmPTE:", 6)) {
					bytes += strtoull(ln + 6, NULL, 10) * 1024;
					found++;
				} else if (!strncmp(ln, "Threads:", 8)) {
					bytes += strtoull(ln + 8, NULL, 10) * THREAD_BYTES;
					found++;
				}
			}
			skipping = 0;
			at = (size_t)(nl - txt) + 1;
		}
		keep = n - at;
		if (keep == sizeof txt - 1) { /* one line fills the buffer: skip it */
			keep = 0;
			skipping = 1;
		} else {
			memmove(txt, txt + at, keep);
		}
	}
	return bytes;
}

/* The number of mappings of a /proc/<pid>/maps (one line each): no procfs
 * file gives the count, and maps costs ~0.4 us a line to produce (27 ms for
 * 65,532), so tree_pss reads it at a rate its own cost sets (maps_next). */
static unsigned long long maps_lines(int fd)
{
	static char buf[65536];
	unsigned long long n = 0;
	ssize_t r;
	while ((r = read(fd, buf, sizeof buf)) > 0)
		for (char *p = buf, *e = buf + r; (p = memchr(p, '\n', (size_t)(e - p))); p++)
			n++;
	return n;
}

/* Page tables and threads grow no faster than the mappings that need them,
 * so every fourth sample reads them (a status read per process: +25-45% of
 * the sample's cost at 1,000 guest processes when every sample did); the
 * VMA count (maps) then too, unless the last count took more than a tenth
 * of the time since: its cost is bounded to ~10% of a CPU, its delay grows
 * with what an attacker built (at --pids 64 x 65,530 VMAs, ~1.7 s a count,
 * one every ~17 s). */
#define PTE_EVERY 4

/* count(f) of the guest procfs's PID/name (0 when it cannot be opened) */
static unsigned long long pid_file_count(int pfd, const char *pid, const char *name,
					 unsigned long long (*count)(int fd))
{
	char path[64];
	snprintf(path, sizeof path, "%.20s/%s", pid, name);
	int f = openat(pfd, path, O_RDONLY | O_CLOEXEC);
	if (f < 0)
		return 0;
	unsigned long long n = count(f);
	close(f);
	return n;
}

/* When a sample must stop short (moat_ms_now): --timeout, or
 * --idle-timeout from the guest's latest activity, read now (review 37: a
 * deadline taken once at the sample's start cut every sample of a guest
 * that stayed busy when one cost more than --idle-timeout, and the
 * processes past the cut were never counted: 800 MB held under --memory
 * 512M --idle-timeout 60ms) */
static double sample_deadline(const struct limits *l)
{
	const struct sentry_config *c = l->cfg;
	double d = 1e300;
	if (c->timeout_ms)
		d = l->dog_start + (double)c->timeout_ms;
	if (c->idle_ms) {
		long long last = __atomic_load_n(&l->sb->last_activity_ms, __ATOMIC_RELAXED);
		if ((double)last + (double)c->idle_ms < d)
			d = (double)last + (double)c->idle_ms;
	}
	return d;
}

/* The sample stops short at sample_deadline, so that a limit's check is
 * not late behind it; *cut says so, and the caller then ends the run with
 * that limit's reason (a partial sum is never the one compared: the
 * processes not read would go uncounted). */
static unsigned long long tree_pss(struct limits *l, int *cut_out)
{
	unsigned long long sum = 0, kern = 0, vmas = 0;
	int pte_now = l->pte_round++ % PTE_EVERY == 0;
	double t_maps = moat_ms_now();
	int maps_now = pte_now && t_maps >= l->maps_next;
	for (int i = 0; i < l->n_own_pss; i++) /* moat's own (own_pss_note) */
		sum += pss_at(l->own_pss[i], 0);
	int pfd = l->sb->guest_procfd;
	if (pfd < 0)
		return sum;
	int d = openat(pfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (d < 0)
		return sum;
	char buf[4096], path[64];
	for (int cut = 0; !cut;) {
		long n = syscall(SYS_getdents64, d, buf, sizeof buf);
		if (n <= 0)
			break;
		for (long off = 0; off < n;) {
			struct {
				unsigned long long ino;
				long long off;
				unsigned short reclen;
				unsigned char type;
				char name[];
			} *e = (void *)(buf + off);
			off += e->reclen;
			if (e->name[0] < '1' || e->name[0] > '9')
				continue;
			if (moat_ms_now() >= sample_deadline(l)) {
				maps_now = pte_now = 0; /* keep the last full sums */
				cut = *cut_out = 1;
				break;
			}
			snprintf(path, sizeof path, "%.20s/smaps_rollup", e->name);
			int f = openat(pfd, path, O_RDONLY | O_CLOEXEC);
			if (f < 0)
				continue;
			sum += pss_at(f, 0);
			close(f);
			if (!pte_now)
				continue;
			kern += pid_file_count(pfd, e->name, "status", status_kern);
			if (maps_now)
				vmas += pid_file_count(pfd, e->name, "maps", maps_lines);
		}
	}
	close(d);
	if (maps_now) {
		double now = moat_ms_now();
		l->maps_next = now + 10 * (now - t_maps);
		l->vma_sum = vmas * VMA_BYTES;
	}
	if (pte_now)
		l->pte_sum = kern;
	return sum + l->pte_sum + l->vma_sum;
}

static void *dog_main(void *arg)
{
	struct limits *l = arg;
	const struct sentry_config *c = l->cfg;
	double start = l->dog_start, next_pss = 0;
	__atomic_store_n(&l->sb->last_activity_ms, (long long)start, __ATOMIC_RELAXED);
	while (!l->done) {
		double now = moat_ms_now();
		if (c->timeout_ms && now - start >= (double)c->timeout_ms) {
			limits_end(l, REASON_TIMEOUT);
			break;
		}
		long long last = __atomic_load_n(&l->sb->last_activity_ms, __ATOMIC_RELAXED);
		if (c->idle_ms && now - (double)last >= (double)c->idle_ms) {
			limits_end(l, REASON_IDLE);
			break;
		}
		if (l->mem_ok && oom_kills(l) > l->oom_base) {
			limits_end(l, REASON_MEMORY);
			break;
		}
		if (c->memory && !l->mem_ok && now >= next_pss) {
			/* the processes, and the files of the in-memory layers
			 * (the gofer's tmpfs pages are in nobody's PSS) */
			int cut = 0;
			unsigned long long m = tree_pss(l, &cut) +
					       (l->sb->vfs ? vfs_private_used(l->sb->vfs) : 0);
			if (cut) { /* the deadline came during the sample: it ends the run */
				int to = c->timeout_ms && moat_ms_now() - start >= (double)c->timeout_ms;
				limits_end(l, to ? REASON_TIMEOUT : REASON_IDLE);
				break;
			}
			if (m > l->pss_peak)
				l->pss_peak = m;
			if (m > c->memory) {
				limits_end(l, REASON_MEMORY);
				break;
			}
			/* every 50 ms, or less often when a sample costs more
			 * than a fifth of that: smaps_rollup walks each
			 * process's mappings (~6 ms at 65,530 VMAs), and
			 * before red team 78 eight guest processes that only
			 * slept with 60,000 VMAs each kept 0.64 of a CPU busy
			 * in this thread rootless, outside any cgroup */
			double cost = moat_ms_now() - now;
			next_pss = now + cost + (cost * 4 > 50 ? cost * 4 : 50);
		}
		if (c->output_limit && c->tty && (l->out_cut[0])) {
			limits_end(l, REASON_OUTPUT);
			break;
		}
		if (files_over(l, now)) {
			limits_end(l, REASON_FILES);
			break;
		}
		if (hostmem_over(l, now)) {
			limits_end(l, REASON_MEMORY);
			break;
		}
		/* until the next check, or limits_finish */
		struct pollfd w = { .fd = l->dog_wake[0], .events = POLLIN };
		poll(&w, 1, c->timeout_ms || c->idle_ms || (c->memory && !l->mem_ok) ? 20 : 100);
	}
	return NULL;
}

/* ---- the output relay ---- */

static void activity(struct limits *l)
{
	__atomic_store_n(&l->sb->last_activity_ms, (long long)moat_ms_now(), __ATOMIC_RELAXED);
}

/* abandon: the relay's flag (NULL elsewhere); a write interrupted by
 * RELAY_SIG once it is set fails */
static int write_all_fd_(int fd, const char *b, size_t n, const int *abandon)
{
	while (n > 0) {
		ssize_t w = write(fd, b, n);
		if (w < 0 && errno == EINTR && !(abandon && __atomic_load_n(abandon, __ATOMIC_SEQ_CST)))
			continue;
		if (w <= 0)
			return -1;
		b += w;
		n -= (size_t)w;
	}
	return 0;
}

static int write_all_fd(int fd, const char *b, size_t n)
{
	return write_all_fd_(fd, b, n, NULL);
}

/* The relay's writes to the caller's fds block while nobody reads them (a
 * full pipe, a terminal stopped with ^S), as the program's own would
 * natively. Once the program has ended, limits_finish waits for the rest
 * of its output only as long as the program itself would have been let
 * block on it: a limit that ends the sandbox meanwhile (--timeout,
 * --idle-timeout: the watchdog runs on until the relay is done), or a
 * SIGTERM/SIGINT/SIGHUP to moat (before the program's end or after), stops the wait once the relay has made no
 * progress for GRACE_MS; RELAY_SIG (no SA_RESTART, sent to the relay thread
 * alone) interrupts the blocked write. Before red team 28 `--output-limit 1G
 * --timeout 2s` with a stdout reader that stopped reading kept moat running
 * until the reader died, and moat ignored SIGTERM meanwhile. */
#define RELAY_SIG MOAT_RELAY_SIG

static void relay_sig_handler(int sig)
{
	(void)sig; /* only to interrupt a write */
}

static void relay_wait(struct limits *l)
{
	while (!__atomic_load_n(&l->relay_done, __ATOMIC_SEQ_CST)) {
		double now = moat_ms_now();
		int stop = __atomic_load_n(&l->reason, __ATOMIC_SEQ_CST) ||
			   __atomic_load_n(&l->term_count, __ATOMIC_SEQ_CST) ||
			   __atomic_load_n(&l->drain_stop, __ATOMIC_SEQ_CST);
		long long last = __atomic_load_n(&l->relay_progress_ms, __ATOMIC_SEQ_CST);
		if (stop && now - last >= GRACE_MS) {
			__atomic_store_n(&l->relay_abandon, 1, __ATOMIC_SEQ_CST);
			pid_t tid = __atomic_load_n(&l->relay_tid, __ATOMIC_SEQ_CST);
			if (tid > 0)
				syscall(SYS_tgkill, getpid(), tid, RELAY_SIG);
		}
		sleep_ms(10); /* (again: the signal may land between writes) */
	}
}

int limits_ending(void)
{
	struct limits *l = g_lim;
	return l && (__atomic_load_n(&l->reason, __ATOMIC_SEQ_CST) ||
		     __atomic_load_n(&l->term_count, __ATOMIC_SEQ_CST) ||
		     __atomic_load_n(&l->drain_stop, __ATOMIC_SEQ_CST) || l->done ||
		     (l->sb && __atomic_load_n(&l->sb->init_gone, __ATOMIC_SEQ_CST)));
}

void limits_drain_stop(void)
{
	if (g_lim)
		__atomic_store_n(&g_lim->drain_stop, 1, __ATOMIC_SEQ_CST);
}

static void *relay_main(void *arg)
{
	struct limits *l = arg;
	unsigned long long cap = l->cfg->output_limit;
	static char buf[65536];
	__atomic_store_n(&l->relay_tid, (pid_t)syscall(SYS_gettid), __ATOMIC_SEQ_CST);
	for (;;) {
		struct pollfd p[2] = { { .fd = l->out_r[0], .events = POLLIN },
				       { .fd = l->out_r[1], .events = POLLIN } };
		if (p[0].fd < 0 && p[1].fd < 0)
			break;
		if (__atomic_load_n(&l->relay_abandon, __ATOMIC_SEQ_CST)) {
			for (int i = 0; i < 2; i++) {
				if (l->out_r[i] >= 0) {
					close(l->out_r[i]);
					l->out_r[i] = -1;
					l->out_dropped = 1;
				}
			}
			break;
		}
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		for (int i = 0; i < 2; i++) {
			if (!p[i].revents)
				continue;
			ssize_t n = read(l->out_r[i], buf, sizeof buf);
			if (n < 0 && errno == EINTR)
				continue;
			int stop = n <= 0;
			if (n > 0) {
				activity(l);
				size_t give = (size_t)n;
				if (cap && l->out_bytes[i] + give > cap) {
					give = (size_t)(cap - l->out_bytes[i]);
					l->out_cut[i] = 1;
					stop = 1;
				}
				l->out_bytes[i] += give;
				if (give && write_all_fd_(tty_stdio_out(i + 1), buf, give, &l->relay_abandon) < 0) {
					stop = 1; /* nobody reads ours: the guest gets EPIPE, as natively */
					if (__atomic_load_n(&l->relay_abandon, __ATOMIC_SEQ_CST))
						l->out_dropped = 1;
				}
				__atomic_store_n(&l->relay_progress_ms, (long long)moat_ms_now(), __ATOMIC_SEQ_CST);
			}
			if (stop) {
				/* the guest's next write fails: EPIPE / SIGPIPE */
				close(l->out_r[i]);
				l->out_r[i] = -1;
			}
		}
	}
	__atomic_store_n(&l->relay_done, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

/* -t: the pty relay asks how much of n bytes it may pass on */
static size_t tty_allow(size_t n)
{
	struct limits *l = g_lim;
	activity(l);
	unsigned long long cap = l->cfg->output_limit;
	if (cap && l->out_bytes[0] + n > cap) {
		n = (size_t)(cap - l->out_bytes[0]);
		l->out_cut[0] = 1;
	}
	l->out_bytes[0] += n;
	return n;
}

int limits_start(struct limits *l, char *err, size_t errlen)
{
	const struct sentry_config *c = l->cfg;
	pthread_attr_t at;
	pthread_attr_init(&at);
	pthread_attr_setstacksize(&at, 64 * 1024);
	int r = 0;
	if (c->tty && (c->output_limit || c->idle_ms))
		tty_out_hook = tty_allow;
	if (l->out_r[0] >= 0) {
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = relay_sig_handler; /* no SA_RESTART: see relay_wait */
		sigaction(RELAY_SIG, &sa, NULL);
		l->relay_progress_ms = (long long)moat_ms_now();
		r = pthread_create(&l->relay, &at, relay_main, l);
		l->relay_started = r == 0;
	}
	if (!r && (c->timeout_ms || c->idle_ms || c->memory || (c->tty && c->output_limit) || l->files_nr_fd >= 0)) {
		l->dog_start = moat_ms_now();
		if (pipe2(l->dog_wake, O_CLOEXEC) < 0)
			r = errno;
		else
			r = pthread_create(&l->dog, &at, dog_main, l);
		l->dog_started = r == 0;
	}
	pthread_attr_destroy(&at);
	if (r) {
		char why[128];
		snprintf(err, errlen, SPAWN_FAILED_FMT, "the limits' thread", spawn_error(r, why, sizeof why));
	}
	return r ? -1 : 0;
}

/* ---- the end: stats, --result, the line on stderr ---- */

double limits_timeout_at(const struct limits *l)
{
	return l && l->dog_started && l->cfg->timeout_ms ? l->dog_start + (double)l->cfg->timeout_ms : 0;
}

static void json_str(char *b, size_t len, size_t *o, const char *s)
{
	if (*o + 1 < len)
		b[(*o)++] = '"';
	for (; *s && *o + 8 < len; s++) {
		unsigned char ch = (unsigned char)*s;
		if (ch == '"' || ch == '\\')
			*o += (size_t)snprintf(b + *o, len - *o, "\\%c", ch);
		else if (ch < 0x20)
			*o += (size_t)snprintf(b + *o, len - *o, "\\u%04x", ch);
		else
			b[(*o)++] = (char)ch;
	}
	if (*o + 1 < len)
		b[(*o)++] = '"';
	b[*o] = 0;
}

#define OUT(...)                                                                  \
	do {                                                                      \
		if (o < sizeof b)                                                 \
			o += (size_t)snprintf(b + o, sizeof b - o, __VA_ARGS__);  \
	} while (0)

static void fmt_dur(char *b, size_t len, unsigned long long ms)
{
	if (ms % 3600000 == 0)
		snprintf(b, len, "%lluh", ms / 3600000);
	else if (ms % 60000 == 0)
		snprintf(b, len, "%llum", ms / 60000);
	else if (ms % 1000 == 0)
		snprintf(b, len, "%llus", ms / 1000);
	else
		snprintf(b, len, "%llums", ms);
}

static void fmt_size(char *b, size_t len, unsigned long long n)
{
	if (n && n % (1ULL << 30) == 0)
		snprintf(b, len, "%lluG", n >> 30);
	else if (n && n % (1ULL << 20) == 0)
		snprintf(b, len, "%lluM", n >> 20);
	else if (n && n % (1ULL << 10) == 0)
		snprintf(b, len, "%lluK", n >> 10);
	else
		snprintf(b, len, "%llu", n);
}

static void write_result(struct limits *l, int status, int raw, int have_raw,
			 const struct rusage *ru)
{
	const struct sentry_config *c = l->cfg;
	struct sandbox *sb = l->sb;
	char b[4096], tmp[1024];
	size_t o = 0;
	l->result_written = 1;
	double wall = moat_ms_now() - l->t0;
	long long user_us = -1, sys_us = -1, peak = -1, pids_max_events = -1;
	const char *cpu_src = "none", *peak_src = "none";
	if (pread_small(l->cpu_stat_fd, tmp, sizeof tmp) > 0) {
		if (l->cgv == 2) {
			user_us = field(tmp, "user_usec");
			sys_us = field(tmp, "system_usec");
		} else {
			long long u = field(tmp, "user"), s = field(tmp, "system");
			user_us = u >= 0 ? u * 1000000 / l->clk_tck : -1;
			sys_us = s >= 0 ? s * 1000000 / l->clk_tck : -1;
		}
		cpu_src = "cgroup";
	}
	if ((user_us < 0 || sys_us < 0) && ru) {
		user_us = ru->ru_utime.tv_sec * 1000000LL + ru->ru_utime.tv_usec;
		sys_us = ru->ru_stime.tv_sec * 1000000LL + ru->ru_stime.tv_usec;
		cpu_src = "program-rusage";
	}
	if (pread_small(l->mem_peak_fd, tmp, sizeof tmp) > 0) {
		peak = strtoll(tmp, NULL, 10);
		peak_src = "cgroup";
	} else if (l->pss_peak) {
		peak = (long long)l->pss_peak;
		peak_src = "sentry-pss-sample";
	} else if (ru) {
		peak = ru->ru_maxrss * 1024LL;
		peak_src = "program-maxrss";
	}
	if (pread_small(l->pids_events_fd, tmp, sizeof tmp) > 0)
		pids_max_events = field(tmp, "max");
	unsigned long long ooms = oom_kills(l) - l->oom_base;
	if (oom_kills(l) < l->oom_base)
		ooms = 0;
	int reason = l->reason;
	if (!reason) {
		if (ooms)
			reason = REASON_MEMORY;
		else if (sb->n_fork_refused || pids_max_events > 0)
			reason = REASON_PIDS;
		else if (l->out_cut[0] || l->out_cut[1])
			reason = REASON_OUTPUT;
		else if (sb->n_killed && have_raw && WIFSIGNALED(raw))
			reason = REASON_POLICY;
		else if (have_raw && WIFSIGNALED(raw))
			reason = REASON_SIGNALED;
		else if (have_raw)
			reason = REASON_EXITED;
		else
			reason = REASON_SENTRY;
		l->reason = reason;
	}
	OUT("{\"sandbox\": \"%s\", \"reason\": \"%s\", \"status\": %d, ", sb->id_str,
	    reason_names[reason], status);
	if (have_raw && WIFSIGNALED(raw))
		OUT("\"exit_code\": null, \"signal\": %d, ", WTERMSIG(raw));
	else if (have_raw)
		OUT("\"exit_code\": %d, \"signal\": null, ", WEXITSTATUS(raw));
	else
		OUT("\"exit_code\": null, \"signal\": null, ");
	if (l->term_count > 0)
		OUT("\"forwarded_signal\": %d, ", l->term_sig);
	else
		OUT("\"forwarded_signal\": null, ");
	OUT("\"wall_ms\": %.0f, ", wall);
	if (user_us >= 0)
		OUT("\"user_ms\": %.3f, \"sys_ms\": %.3f, ", user_us / 1000.0, sys_us / 1000.0);
	else
		OUT("\"user_ms\": null, \"sys_ms\": null, ");
	OUT("\"cpu_source\": \"%s\", ", cpu_src);
	if (peak >= 0)
		OUT("\"peak_memory_bytes\": %lld, ", peak);
	else
		OUT("\"peak_memory_bytes\": null, ");
	OUT("\"peak_memory_source\": \"%s\", ", peak_src);
	OUT("\"oom_kills\": %llu, \"pids_peak\": %lu, \"forks_refused\": %lu, ", ooms,
	    sb->n_tasks_peak, sb->n_fork_refused + (pids_max_events > 0 ? (unsigned long)pids_max_events : 0));
	OUT("\"stdout_bytes\": %llu, \"stderr_bytes\": %llu, \"output_cut\": %s, ", l->out_bytes[0],
	    l->out_bytes[1], l->out_cut[0] || l->out_cut[1] || l->out_dropped ? "true" : "false");
	OUT("\"syscalls\": {\"trapped\": %lu, \"denied\": %lu, \"emulated\": %lu, \"killed\": %lu}, ",
	    __atomic_load_n(&sb->n_trapped, __ATOMIC_RELAXED),
	    __atomic_load_n(&sb->n_denied, __ATOMIC_RELAXED),
	    __atomic_load_n(&sb->n_emulated, __ATOMIC_RELAXED),
	    __atomic_load_n(&sb->n_killed, __ATOMIC_RELAXED));
	OUT("\"cgroup\": ");
	if (l->cgv) {
		json_str(b, sizeof b, &o, l->dirs[0]);
		OUT(", \"cgroup_version\": %d, ", l->cgv);
	} else {
		OUT("null, \"cgroup_version\": null, ");
	}
	OUT("\"limits\": {\"memory\": %llu, \"memory_by\": \"%s\", \"pids\": %lu, \"pids_by\": \"%s\", "
	    "\"cpus\": %.3f, \"cpus_by\": \"%s\", \"timeout_ms\": %llu, \"idle_timeout_ms\": %llu, "
	    "\"output_limit\": %llu}}\n",
	    c->memory, !c->memory ? "none" : l->mem_ok ? "cgroup" : "sentry-pss+rlimit-data", c->pids,
	    !c->pids ? "none" : l->pids_ok ? "cgroup+sentry+rlimit-nproc" : "sentry+rlimit-nproc",
	    c->cpus_milli / 1000.0, !c->cpus_milli ? "none" : l->cpu_ok ? "cgroup" : "none",
	    c->timeout_ms, c->idle_ms, c->output_limit);
	if (l->result_fd >= 0) {
		if (write_all_fd(l->result_fd, b, strlen(b)) < 0)
			warnx_("--result: %s", strerror(errno));
		close(l->result_fd);
		l->result_fd = -1;
	}
}

/* the guest is gone: the rest of its output relayed (before tty_finish,
 * whose relay carries it on when the caller's terminal is its stdout:
 * tty_stdio_out) */
void limits_output_wait(struct limits *l)
{
	if (l->relay_started)
		relay_wait(l);
}

int limits_finish(struct limits *l, int status, int raw, int have_raw, const struct rusage *ru)
{
	const struct sentry_config *c = l->cfg;
	/* the rest of the output first, the watchdog still running */
	if (l->relay_started)
		relay_wait(l);
	l->done = 1;
	if (l->dog_started) {
		if (write(l->dog_wake[1], "x", 1) < 0) {
			/* it wakes within 100 ms anyway */
		}
		pthread_join(l->dog, NULL);
	}
	if (l->relay_started)
		pthread_join(l->relay, NULL); /* relay_wait: it returned */
	/* A limit ended the sandbox (its reason is set before the result: a
	 * timeout, the idle timeout, memory, -t's output cut, --kill-after):
	 * the run did not complete, so moat never exits 0 for it. A program
	 * that exits 0 at the SIGTERM round (a shell's `trap "exit 0" TERM`,
	 * a server's clean shutdown) made `moat run --timeout` exit 0 like a
	 * success (red team 21); it is 128+SIGTERM now, what the SIGTERM
	 * would have given without the handler. `exit_code` in --result is
	 * still the program's; `status` is moat's. */
	if (status == 0 && __atomic_load_n(&l->reason, __ATOMIC_SEQ_CST))
		status = 128 + SIGTERM;
	write_result(l, status, raw, have_raw, ru);
	char d[32], line[384] = "";
	switch (l->reason) {
	case REASON_TIMEOUT:
		fmt_dur(d, sizeof d, c->timeout_ms);
		snprintf(line, sizeof line, "killed: --timeout %s reached", d);
		break;
	case REASON_IDLE:
		fmt_dur(d, sizeof d, c->idle_ms);
		snprintf(line, sizeof line, "killed: --idle-timeout %s reached (no syscall, no output)", d);
		break;
	case REASON_MEMORY:
		if (l->mem_host_low) {
			snprintf(line, sizeof line,
				 "killed: %llu MiB held (processes and in-memory files) while the host's memory was nearly "
				 "exhausted (%llu MiB available with free swap, of %llu: the last sixteenth is kept for the "
				 "host, a sandbox may hold %llu MiB then)", l->mem_low_held >> 20, l->mem_low_avail >> 20,
				 l->mem_low_total >> 20, hostres_mem_floor(l->mem_low_total) >> 20);
			break;
		}
		fmt_size(d, sizeof d, c->memory);
		snprintf(line, sizeof line, "killed: --memory %s reached (out of memory)", d);
		break;
	case REASON_PIDS:
		if (l->sb->n_fork_host_low)
			snprintf(line, sizeof line,
				 "forks failed with EAGAIN: the host's pids nearly all taken (less than 1/%d of kernel.pid_max "
				 "or threads-max free, kept for the host, past the sandbox's %d tasks)", HOST_RESERVE_DIV, HOST_PIDS_FLOOR);
		else if (c->pids)
			snprintf(line, sizeof line, "--pids %lu reached: forks failed with EAGAIN", c->pids);
		else /* no --pids: the task table's own bound (tracer.c max_tasks: the
		      * sandbox's share of the host's pid_max, or the fd budget) */
			snprintf(line, sizeof line,
				 "the sandbox's task limit reached (no --pids: its share of the host's pid_max): forks failed with EAGAIN");
		break;
	case REASON_OUTPUT:
		fmt_size(d, sizeof d, c->output_limit);
		snprintf(line, sizeof line, "--output-limit %s reached: output cut", d);
		break;
	case REASON_POLICY:
		snprintf(line, sizeof line, "killed by policy (a forbidden syscall)");
		break;
	case REASON_FILES:
		if (l->files_low)
			snprintf(line, sizeof line,
				 "killed: %llu open files held while the host's file table was nearly full (%llu of %llu: "
				 "the last eighth is kept for the host, a sandbox may hold %llu then)",
				 l->files_held, l->files_low_used, l->files_max, hostres_files_floor(l->files_max));
		else
			snprintf(line, sizeof line,
				 "killed: %llu open files held, past the sandbox's share of the host's (%llu: fs.file-max / %d)",
				 l->files_held, l->files_share, FILES_SHARE_DIV);
		break;
	case REASON_KILL_AFTER: {
		const char *sn = sigabbrev_np(l->term_sig) ? sigabbrev_np(l->term_sig) : "?";
		if (l->term_second) {
			snprintf(line, sizeof line, "killed: a second SIG%s during the --kill-after grace", sn);
		} else if (!c->kill_after_ms) {
			snprintf(line, sizeof line, "killed: SIG%s forwarded, --kill-after 0", sn);
		} else {
			fmt_dur(d, sizeof d, c->kill_after_ms);
			snprintf(line, sizeof line, "killed: still running --kill-after %s after SIG%s", d, sn);
		}
		break;
	}
	default:
		break;
	}
	/* moat's own last lines: not onto a stderr nobody reads (the pipe is
	 * full, moat would never end) */
	struct pollfd e2 = { .fd = 2, .events = POLLOUT };
	if (poll(&e2, 1, 1000) <= 0)
		line[0] = 0, l->out_dropped = 0;
	if (line[0])
		warnx_("%s", line);
	if (l->out_dropped)
		warnx_("the rest of the program's output was dropped: moat's stdout or stderr was not being read");
	/* the cgroup goes once the helper sees the end of its pipe (after a
	 * byte that says we end it, not a kill) */
	if (l->helper_fd >= 0) {
		(void)!write(l->helper_fd, "q", 1);
		close(l->helper_fd);
		l->helper_fd = -1;
		while (l->helper > 0 && waitpid(l->helper, NULL, 0) < 0 && errno == EINTR)
			;
	}
	return status;
}
