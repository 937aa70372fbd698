/* sentry/pipeline.c - the one pipeline every trapped call goes through:
 *
 *   trap -> copy arguments in once -> ID_VALID -> policy -> handler -> reply -> audit
 *
 * Worker threads block in SECCOMP_IOCTL_NOTIF_RECV on the shared listener;
 * when the last idle worker takes a call, another is started (up to
 * MAX_WORKERS), so a call that blocks (a FIFO open, a slow gofer reply) never
 * stalls the service of other guest tasks. Handlers see only the copies in
 * struct sc_call (syscalls/sc.h); they never read guest inputs twice.
 */
#include "sentry/sentry.h"
#include "sentry/netd.h"
#include "fs/vfs.h"
#include "kernel/task.h"
#include "loader/loader_abi.h"
#include "platform/arch.h"
#include "platform/platform.h"
#include "syscalls/decode.h"
#include "syscalls/sc.h"
#include "common/log.h"
#include "common/util.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <time.h>
#include <string.h>
#include <time.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <linux/seccomp.h>

#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (1UL << 0)
#endif
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS_ SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP_ SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP

#define MAX_WORKERS 64
#define WORKER_STACK (256 * 1024)

static struct sandbox *g_sb;
static int g_nfd;
static const struct platform_ops *plat = &platform_unotify;
static atomic_int idle_workers, nworkers;

/* Step 2: copy every PATH/STR/struct argument once. 0 or -errno. */
static int copy_in(struct sc_call *c)
{
	const struct sysent *e = c->ent;
	int ns = 0, nb = 0;
	for (int i = 0; i < e->nargs && i < SC_MAXARGS; i++) {
		switch (e->args[i]) {
		case A_PATH:
		case A_STR: {
			if (ns >= 3)
				break;
			char *buf = c->strbuf[ns++];
			if (c->args[i] == 0) {
				/* utimensat(fd, NULL, ...) acts on fd: the only PATH
				 * argument Linux lets be NULL */
				if (e->args[i] == A_PATH && e->nr != __NR_utimensat)
					return -EFAULT;
				break;
			}
			long r = guest_read_str(c->tid, c->args[i], buf, SC_STRMAX);
			if (r < 0)
				return (int)r;
			c->str[i] = buf;
			break;
		}
		case A_OPEN_HOW:
		case A_SOCKADDR: {
			if (nb >= 2 || i + 1 >= SC_MAXARGS)
				break;
			size_t want = c->args[i + 1];
			size_t n = want < SC_BUFMAX ? want : SC_BUFMAX;
			if (c->args[i] == 0)
				break;
			void *buf = c->structbuf[nb++];
			if (guest_read(c->tid, c->args[i], buf, n) < 0)
				return -EFAULT;
			c->buf[i] = buf;
			c->buflen[i] = want;
			break;
		}
		default:
			break;
		}
	}
	return 0;
}

static void deny_unknown(struct notif *n, const char *why)
{
	plat->reply(g_nfd, n->id, -ENOSYS);
	__atomic_fetch_add(&g_sb->n_denied, 1, __ATOMIC_RELAXED);
	char name[64], args[256];
	snprintf(name, sizeof name, "syscall_%d", n->nr);
	snprintf(args, sizeof args, "0x%llx, 0x%llx, 0x%llx, 0x%llx, 0x%llx, 0x%llx",
		 (unsigned long long)n->args[0], (unsigned long long)n->args[1],
		 (unsigned long long)n->args[2], (unsigned long long)n->args[3],
		 (unsigned long long)n->args[4], (unsigned long long)n->args[5]);
	struct task *t = task_get(g_sb, n->pid);
	audit_event(g_sb->audit, g_sb, t, n->pid, name, args, DEC_DENY, -ENOSYS, why);
	task_put(t);
}

static void handle(struct notif *n, struct sc_call *c)
{
	/* counters for --result, activity for --idle-timeout */
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	__atomic_store_n(&g_sb->last_activity_ms, (long long)now.tv_sec * 1000 + now.tv_nsec / 1000000,
			 __ATOMIC_RELAXED);
	__atomic_fetch_add(&g_sb->n_trapped, 1, __ATOMIC_RELAXED);
	if (n->arch != MOAT_AUDIT_ARCH) {
		deny_unknown(n, "foreign architecture");
		return;
	}
	const struct sysent *e = sc_lookup(n->nr);
	if (!e && n->nr != MOAT_SYS_LOADER) {
		deny_unknown(n, "unknown syscall");
		return;
	}
	struct task *t = task_get(g_sb, n->pid);
	if (!t) {
		/* Cannot happen: the tracer registers every task before it runs
		 * and kills one it cannot register. Fail closed: never serve it
		 * (as anyone), kill it while its notification proves it is ours. */
		if (plat->id_valid(g_nfd, n->id) == 0)
			kill(n->pid, SIGKILL);
		deny_unknown(n, "unknown task: killed");
		return;
	}
	memset(c, 0, offsetof(struct sc_call, strbuf));
	c->id = n->id;
	c->notify_fd = g_nfd;
	c->tid = n->pid;
	c->nr = n->nr;
	memcpy(c->args, n->args, sizeof c->args);
	c->task = t;
	c->sb = g_sb;
	c->out_fd = -1;
	c->out_newfd_at = -1;

	long ret;
	int decision = DEC_ALLOW, err = 0;
	const char *name;
	if (!e) { /* the loader asking for its pending exec */
		static const struct sysent loader_ent = { .nr = MOAT_SYS_LOADER, .name = "moat_loader",
							  .nargs = 3, .args = { A_INT, A_PTR, A_SIZE },
							  .cls = SC_EMULATE };
		static const struct sysent net_ent = { .nr = MOAT_SYS_LOADER, .name = "connect",
						       .nargs = 2, .args = { A_HEX, A_FD },
						       .cls = SC_EMULATE };
		if (c->args[0] == MOAT_NET_CONNECT) { /* a connect rewritten at its stop */
			c->ent = &net_ent;
			name = net_ent.name;
			ret = netconn_call(c);
			if (ret == -ENOSYS)
				decision = DEC_DENY;
			goto reply;
		}
		c->ent = &loader_ent;
		name = loader_ent.name;
		ret = exec_loader_call(c);
		if (ret == -ENOSYS)
			decision = DEC_DENY;
		plat->reply(g_nfd, c->id, ret);
		goto audit;
	}
	c->ent = e;
	name = e->name;
	ret = copy_in(c);
	if (ret < 0 && e->cls != SC_DENY) {
		plat->reply(g_nfd, c->id, ret);
		goto audit;
	}
	ret = 0;
	if (plat->id_valid(g_nfd, c->id) < 0) {
		task_put(t);
		return; /* the caller is gone (or was interrupted by a fatal signal) */
	}
	decision = policy_check(g_sb->policy, c, &err);
	__atomic_fetch_add(decision == DEC_KILL ? &g_sb->n_killed :
			   decision == DEC_DENY ? &g_sb->n_denied : &g_sb->n_emulated, 1, __ATOMIC_RELAXED);
	if (decision == DEC_KILL) {
		kill(t->tgid, SIGKILL);
		ret = -ENOSYS;
		goto audit;
	}
	if (decision == DEC_DENY)
		ret = -err;
	else
		ret = e->handler(c);
reply:
	if (c->out_fd >= 0 && c->out_fd_value) {
		/* install at c->out_newfd_at, answer ret (connect: 0 or EINPROGRESS) */
		long r = plat->addfd(g_nfd, c->id, c->out_fd, c->out_fd_flags, c->out_newfd_at, 0);
		close(c->out_fd);
		c->out_fd = -1;
		if (r == -ENOENT)
			goto audit;
		if (r < 0)
			ret = r;
		plat->reply(g_nfd, c->id, ret);
	} else if (ret >= 0 && c->out_fd >= 0) {
		ret = plat->addfd(g_nfd, c->id, c->out_fd, c->out_fd_flags, c->out_newfd_at, 1);
		close(c->out_fd);
		c->out_fd = -1;
		if (ret == -ENOENT)
			goto audit; /* the caller went away: nothing to answer */
		if (ret < 0)
			plat->reply(g_nfd, c->id, ret);
	} else if (ret >= 0 && c->cont) {
		plat->cont(g_nfd, c->id); /* checked: the kernel answers */
	} else {
		if (c->out_fd >= 0)
			close(c->out_fd);
		plat->reply(g_nfd, c->id, ret);
	}
audit:
	if (audit_wants_args(g_sb->audit)) {
		char args[4096];
		args[0] = 0;
		if (c->ent)
			sc_decode_args(c, args, sizeof args);
		audit_event(g_sb->audit, g_sb, t, c->tid, name, args, decision, ret, c->note);
	}
	task_put(t);
}

static void spawn_worker(void);

static void *worker(void *arg)
{
	(void)arg;
	struct sc_call *c = xmalloc(sizeof *c);
	vfs_thread_warmup(g_sb->vfs);
	for (;;) {
		struct notif n;
		/* Every waiter in RECV is woken by each notification; serialising
		 * RECV with a mutex measured slower (30 vs 25 us per stat), so
		 * idle workers simply all wait here. */
		int r = plat->recv(g_nfd, &n);
		if (r == -EINTR)
			continue;
		if (r == -ENOENT) {
			/* Another waiter took it (back to RECV), or the filter has
			 * no task left: RECV then fails at once, forever (every
			 * guest task is gone), and spinning on it took both CPUs
			 * from the tracer's teardown (5-20 ms of a `true` run).
			 * POLLHUP says which; it ends the worker. */
			struct pollfd pf = { .fd = g_nfd, .events = POLLIN };
			if (poll(&pf, 1, 0) > 0 && (pf.revents & (POLLHUP | POLLERR | POLLNVAL)) &&
			    !(pf.revents & POLLIN))
				break;
			continue;
		}
		if (r < 0)
			break;
		if (atomic_fetch_sub(&idle_workers, 1) == 1 &&
		    atomic_load(&nworkers) < MAX_WORKERS)
			spawn_worker();
		handle(&n, c);
		atomic_fetch_add(&idle_workers, 1);
	}
	free(c);
	atomic_fetch_sub(&idle_workers, 1);
	atomic_fetch_sub(&nworkers, 1);
	return NULL;
}

static void spawn_worker(void)
{
	pthread_attr_t at;
	pthread_t th;
	pthread_attr_init(&at);
	pthread_attr_setstacksize(&at, WORKER_STACK);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	atomic_fetch_add(&nworkers, 1);
	atomic_fetch_add(&idle_workers, 1);
	/* workers never take moat's own signals: the main thread forwards them */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	if (pthread_create(&th, &at, worker, NULL) != 0) {
		atomic_fetch_sub(&nworkers, 1);
		atomic_fetch_sub(&idle_workers, 1);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&at);
}

void pipeline_drain(int timeout_ms)
{
	/* the guest is gone: wait for calls still being answered, so their audit
	 * events are written before moat exits (a worker audits after its reply) */
	for (int i = 0; i < timeout_ms; i++) {
		if (atomic_load(&idle_workers) >= atomic_load(&nworkers))
			return;
		struct timespec ts = { 0, 1000000 };
		nanosleep(&ts, NULL);
	}
}

int pipeline_start(struct sandbox *sb, int notify_fd)
{
	g_sb = sb;
	g_nfd = notify_fd;
	/* Linux 6.6+: wake the worker on the trapping task's CPU and switch to it
	 * directly. On these VMs a cross-CPU wake-up dominates a trapped call. */
	if (ioctl(notify_fd, SECCOMP_IOCTL_NOTIF_SET_FLAGS_, SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP_) < 0)
		dbg("seccomp sync wake-up unavailable: %s", strerror(errno));
	spawn_worker();
	spawn_worker();
	return 0;
}
