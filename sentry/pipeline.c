/* sentry/pipeline.c - the one pipeline every trapped call goes through:
 *
 *   trap -> copy arguments in once -> ID_VALID -> policy -> handler -> reply -> audit
 *
 * Worker threads block in SECCOMP_IOCTL_NOTIF_RECV on the shared listener;
 * when the last idle worker takes a call, another is started (up to
 * MAX_WORKERS), so a call that blocks (a slow gofer reply) never stalls the
 * service of other guest tasks. One worker at a time waits in RECV (the
 * lead), one per CPU while the fast calls of several guest tasks overlap
 * (lead_spread). A call that waits for another guest task (a
 * FIFO open, a lock, a lease break, a connect's handshake) does not count
 * against MAX_WORKERS while it waits (pipeline_wait_begin): each such wait
 * holds a distinct guest task, so those workers are bounded by the task table
 * (--pids), not by the pool. Handlers see only the copies in
 * struct sc_call (syscalls/sc.h); they never read guest inputs twice.
 */
#include "sentry/sentry.h"
#include "sentry/netd.h"
#include "fs/vfs.h"
#include "common/sanitize.h"
#include "fs/procfs.h"
#include "syscalls/table.h"
#include "gofer/gofer.h"
#include "kernel/task.h"
#include "loader/loader_abi.h"
#include "platform/arch.h"
#include "platform/platform.h"
#include "syscalls/decode.h"
#include "syscalls/sc.h"
#include "common/log.h"
#include "common/util.h"

#include <errno.h>
#include <malloc.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <time.h>
#include <string.h>
#include <time.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <linux/futex.h>
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
/* A worker left waiting for the lead this long ends while another remains
 * (an idle sandbox's PSS: each worker holds ~40 KiB of stack touched by its
 * handlers, its call buffer, and a gofer connection with the gofer's thread
 * for it; start-up's look-ups had left three). */
#define WORKER_IDLE_MS 1000
#define MIN_WORKERS 1
#define WORKER_STACK (256 * 1024 * MOAT_STACK_SCALE)

static struct sandbox *g_sb;
static int g_nfd;
static const struct platform_ops *plat = &platform_unotify;
static atomic_int idle_workers, nworkers;
/* Set when RECV has failed for good (every guest task gone: ENOENT with
 * POLLHUP, or another error): no worker is started after that. Before, each
 * ending worker's lead_pass started another, which failed and started the
 * next, until the sentry exited — 15-45 thread creations in the teardown of
 * `python3 -c pass`, each competing with the gofer's and the init's reaping
 * for the two CPUs. */
static atomic_int recv_closed;
static atomic_int workers_started; /* MOAT_PROFILE: threads created */
static int g_spread_tg = 1; /* MOAT_SPREAD=2: any two tasks' overlap raises it */
static int g_spread = 1; /* lead_spread; MOAT_SPREAD=0 turns it off (comparisons) */
/* MOAT_PROFILE: lead_spread's polls, its raises of the target, and the most
 * fast calls served at once */
static atomic_uint n_spread_polls, n_spread_on, fast_busy_max;
/* workers inside a wait for another guest task (pipeline_wait_begin): the
 * pool may grow past MAX_WORKERS by that many, at most wait_cap */
static atomic_int nwaiting;
static int wait_cap = 64;
static __thread int t_waiting;
/* the task whose call this worker serves (handle_), whose call_state a wait
 * for another task makes 2 (sleeping) */
static __thread struct task *t_serving;

/* handle_ is done with t's call (before its task_put) */
static void serving_end(struct task *t)
{
	t_serving = NULL;
	__atomic_store_n(&t->call_state, 0, __ATOMIC_RELEASE);
}

/* MOAT_PROFILE=1: per-stage time of every trapped call, summed per syscall
 * number and printed at exit (pipeline_profile_report). Off: one branch per
 * stage. What the sentry cannot see (the trap, the wake-up of the worker, the
 * return to the guest) is the guest-measured time per call minus the total. */
enum { ST_LOOKUP, ST_COPYIN, ST_IDVALID, ST_POLICY, ST_HANDLER, ST_GOFER, ST_OUTCOPY, ST_REPLY,
       ST_AUDIT, ST_N };
/* handler: the handler's wall time less its gofer round trips (gofer) and
 * its writes of results to guest memory (out-copy) */
static const char *const st_names[ST_N] = { "lookup", "copy-in", "id-valid", "policy", "handler",
					    "gofer",  "out-copy", "reply", "audit" };
#define PROF_NR 512
struct prof_row {
	unsigned long long n, ns[ST_N];
};
static struct prof_row *g_prof;

static inline unsigned long long prof_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ULL + (unsigned long long)ts.tv_nsec;
}
static inline unsigned long long prof_cpu(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ULL + (unsigned long long)ts.tv_nsec;
}
#define PROF_MARK(st)                                                                      \
	do {                                                                               \
		if (g_prof) {                                                              \
			unsigned long long now_ = prof_now();                              \
			pt[st] += now_ - plast;                                            \
			plast = now_;                                                      \
		}                                                                          \
	} while (0)

static void prof_add(int nr, const unsigned long long *pt)
{
	struct prof_row *row = &g_prof[nr >= 0 && nr < PROF_NR ? nr : PROF_NR];
	__atomic_fetch_add(&row->n, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < ST_N; i++)
		__atomic_fetch_add(&row->ns[i], pt[i], __ATOMIC_RELAXED);
}

void pipeline_profile_report(void)
{
	if (!g_prof)
		return;
	fprintf(stderr, "moat profile: workers started %d, spread polls %u, spread on %u, "
			"fast calls at once %u\n",
		atomic_load(&workers_started), atomic_load(&n_spread_polls),
		atomic_load(&n_spread_on), atomic_load(&fast_busy_max));
	fprintf(stderr, "moat profile: mean ns per trapped call, by stage (in the sentry, from RECV's "
			"return; reply: its thread CPU time)\n");
	fprintf(stderr, "%-16s %9s", "syscall", "calls");
	for (int i = 0; i < ST_N; i++)
		fprintf(stderr, " %9s", st_names[i]);
	fprintf(stderr, " %9s\n", "total");
	for (int nr = 0; nr <= PROF_NR; nr++) {
		const struct prof_row *row = &g_prof[nr];
		if (!row->n)
			continue;
		const struct sysent *e = nr < PROF_NR ? sc_lookup(nr) : NULL;
		unsigned long long tot = 0;
		fprintf(stderr, "%-16s %9llu", e ? e->name : "other", row->n);
		for (int i = 0; i < ST_N; i++) {
			fprintf(stderr, " %9llu", row->ns[i] / row->n);
			tot += row->ns[i];
		}
		fprintf(stderr, " %9llu\n", tot / row->n);
	}
	gofer_profile_report(stderr);
	vfs_profile_report(stderr);
	netconn_profile_report();
}

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
			c->mem_read++;
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
			/* a socket address's length is the kernel's int (the
			 * low 32 bits; negative: its EINVAL, nothing read),
			 * open_how's a size_t */
			size_t want = c->args[i + 1];
			if (e->args[i] == A_SOCKADDR)
				want = (size_t)(int)want;
			size_t n = want < SC_BUFMAX ? want : SC_BUFMAX;
			if (c->args[i] == 0 || (e->args[i] == A_SOCKADDR && (int)c->args[i + 1] < 0))
				break;
			void *buf = c->structbuf[nb++];
			c->mem_read++;
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

static int no_guest_io(int nr)
{
	return nr == __NR_getuid || nr == __NR_geteuid || nr == __NR_getgid || nr == __NR_getegid;
}

static void deny_unknown(struct notif *n, const char *why)
{
	plat->reply(g_nfd, n->id, -ENOSYS);
	__atomic_fetch_add(&g_sb->n_denied, 1, __ATOMIC_RELAXED);
	char name[64], args[256];
	/* a foreign number space is named as such: an i386 5 is open, not
	 * x86_64's fstat (red team 75) */
	if (n->arch != MOAT_AUDIT_ARCH)
		snprintf(name, sizeof name, "%s_syscall_%d", n->arch == AUDIT_ARCH_I386 ? "i386" : "foreign",
			 n->nr);
	else if ((unsigned)n->nr & 0x40000000u) /* __X32_SYSCALL_BIT */
		snprintf(name, sizeof name, "x32_syscall_%u", (unsigned)n->nr & ~0x40000000u);
	else
		snprintf(name, sizeof name, "syscall_%d", n->nr);
	snprintf(args, sizeof args, "0x%llx, 0x%llx, 0x%llx, 0x%llx, 0x%llx, 0x%llx",
		 (unsigned long long)n->args[0], (unsigned long long)n->args[1],
		 (unsigned long long)n->args[2], (unsigned long long)n->args[3],
		 (unsigned long long)n->args[4], (unsigned long long)n->args[5]);
	struct task *t = task_get(g_sb, n->pid);
	audit_event(g_sb->audit, g_sb, t, n->pid, name, args, DEC_DENY, -ENOSYS, why);
	task_put(t);
}

static void handle_(struct notif *n, struct sc_call *c, unsigned long long *pt,
		    unsigned long long plast);

static void handle(struct notif *n, struct sc_call *c)
{
	unsigned long long pt[ST_N] = { 0 };
	if (g_prof) { /* what this thread did outside a handler is no stage's */
		gofer_profile_take();
		guest_io_take();
	}
	handle_(n, c, pt, g_prof ? prof_now() : 0);
	task_io_caller(NULL, -1, 0);
	if (g_prof)
		prof_add(n->arch == MOAT_AUDIT_ARCH ? n->nr : -1, pt);
}

/* After ADDFD with SEND the guest may run before this worker closes its copy
 * of the installed fd, so the guest's own close is not the last one: its
 * IN_CLOSE_WRITE (and an unlinked file's IN_DELETE_SELF) would come only with
 * ours, possibly after the events of the task's next calls. So the copy is
 * closed before the task's next trapped call is served, by whichever comes
 * first: this worker once its ADDFD returns, or the worker that takes that
 * next call (closing_take). Until the pexec4 round the next call waited for
 * this worker's close (a futex): after the loader's answer that was ~4.5 us
 * of ld.so's first call (access) per exec, this worker having to be
 * scheduled again first. The fd is marked with a sequence number, so a
 * worker whose mark was taken (and whose fd number may since have been
 * reused for the next answer's copy) never closes another's fd. The next
 * call exists only once the guest has left this notification: installed
 * (the ADDFD holds its own reference to the file by then) or interrupted
 * (the notification gone, the ADDFD finds no id: ENOENT). */
static int g_close_delay_ms; /* tests: MOAT_TEST_ADDFD_CLOSE_DELAY_MS */
static void lead_pass(void);

static unsigned long long closing_begin(struct task *t, int fd)
{
	static unsigned long long seq;
	unsigned long long v = (__atomic_add_fetch(&seq, 1, __ATOMIC_RELAXED) << 32) |
			       (unsigned)(fd + 1);
	__atomic_store_n(&t->fd_closing, v, __ATOMIC_RELEASE);
	return v;
}

static void closing_end(struct task *t, unsigned long long v, int fd)
{
	if (__atomic_compare_exchange_n(&t->fd_closing, &v, 0, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		close(fd);
	/* else the task's next call has closed it */
}

static void closing_take(struct task *t)
{
	unsigned long long v = __atomic_exchange_n(&t->fd_closing, 0, __ATOMIC_ACQ_REL);
	if (v)
		close((int)(unsigned)(v & 0xffffffffu) - 1);
}

/* connect's row as moat-netd's sandboxes route it: EMULATE, netconn_connect */
static struct sysent connect_ent;
static void connect_row(void)
{
	connect_ent = *sc_lookup(__NR_connect);
	connect_ent.cls = SC_EMULATE;
	connect_ent.handler = netconn_connect;
	connect_ent.handler_name = "netconn_connect";
}

static void handle_(struct notif *n, struct sc_call *c, unsigned long long *pt,
		    unsigned long long plast)
{
	unsigned long long rcpu = 0;
	/* counters for --result, activity for --idle-timeout */
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	__atomic_store_n(&g_sb->last_activity_ms, (long long)now.tv_sec * 1000 + now.tv_nsec / 1000000,
			 __ATOMIC_RELAXED);
	__atomic_fetch_add(&g_sb->n_trapped, 1, __ATOMIC_RELAXED);
	if (n->arch != MOAT_AUDIT_ARCH) { /* int 0x80, sysenter: never the x86_64 table */
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
	closing_take(t);
	/* its state in the guest's /proc: running while a worker serves it,
	 * sleeping while the worker waits for another task (fs/procfs.c) */
	__atomic_add_fetch(&t->calls_taken, 1, __ATOMIC_RELEASE);
	__atomic_store_n(&t->call_state, 1, __ATOMIC_RELEASE);
	t_serving = t;
	/* the call the tracer restarted after a signal came before RECV
	 * (tracer.c sig_restart): if it would wait, it ends with EINTR */
	t->intr_now = __atomic_exchange_n(&t->intr_before, 0, __ATOMIC_ACQUIRE) == (long)n->nr + 1;
	/* a mark an earlier answer left with no signal stop after it (a wait
	 * ended for a group-stop: the kernel restarted the call itself) */
	__atomic_store_n(&t->restart_answered, 0, __ATOMIC_RELAXED);
	memset(c, 0, offsetof(struct sc_call, strbuf));
	c->id = n->id;
	c->notify_fd = g_nfd;
	c->tid = n->pid;
	c->nr = n->nr;
	memcpy(c->args, n->args, sizeof c->args);
	c->ip = n->ip;
	c->task = t;
	c->sb = g_sb;
	c->out_fd = -1;
	c->out_newfd_at = -1;
	/* this thread's task_getfd of the caller's group: in the copy guard */
	task_io_caller(t, g_nfd, n->id);

	long ret;
	int decision = DEC_ALLOW, err = 0;
	const char *name;
	if (e || (n->args[0] != MOAT_NET_BIND && n->args[0] != MOAT_NET_LISTEN && n->args[0] != MOAT_NET_SEND))
		netconn_drop_pending(t); /* any call but a private one: a request
					  * a stop left is stale (netconn.c) */
	if (!e) { /* the loader asking for its pending exec */
		static const struct sysent loader_ent = { .nr = MOAT_SYS_LOADER, .name = "moat_loader",
							  .nargs = 3, .args = { A_INT, A_PTR, A_SIZE },
							  .cls = SC_EMULATE };
		static const struct sysent net_ent = { .nr = MOAT_SYS_LOADER, .name = "moat_net",
						       .nargs = 2, .args = { A_HEX, A_FD },
						       .cls = SC_EMULATE };
		static const struct sysent bind_ent = { .nr = MOAT_SYS_LOADER, .name = "bind",
							.nargs = 2, .args = { A_HEX, A_FD },
							.cls = SC_EMULATE };
		static const struct sysent listen_ent = { .nr = MOAT_SYS_LOADER, .name = "listen",
							  .nargs = 2, .args = { A_HEX, A_FD },
							  .cls = SC_EMULATE };
		static const struct sysent send_ents[3] = {
			{ .nr = MOAT_SYS_LOADER, .name = "sendto", .nargs = 3, .args = { A_HEX, A_FD, A_INT },
			  .cls = SC_EMULATE },
			{ .nr = MOAT_SYS_LOADER, .name = "sendmsg", .nargs = 3, .args = { A_HEX, A_FD, A_INT },
			  .cls = SC_EMULATE },
			{ .nr = MOAT_SYS_LOADER, .name = "sendmmsg", .nargs = 3, .args = { A_HEX, A_FD, A_INT },
			  .cls = SC_EMULATE },
		};
		if (c->args[0] == MOAT_NET_BIND || c->args[0] == MOAT_NET_LISTEN) {
			/* a socket call rewritten at its stop */
			c->ent = c->args[0] == MOAT_NET_BIND ? &bind_ent : &listen_ent;
			name = c->ent->name;
			ret = netconn_call(c);
			if (ret == -ENOSYS)
				decision = DEC_DENY;
			goto reply;
		}
		if (c->args[0] == MOAT_NET_SEND) { /* a UDP send rewritten at its stop */
			c->ent = c->args[2] >= NETSEND_TO && c->args[2] <= NETSEND_MMSG ?
					 &send_ents[c->args[2] - NETSEND_TO] :
					 &net_ent;
			name = c->ent->name;
			ret = netconn_send_call(c);
			if (ret == -ENOSYS)
				decision = DEC_DENY;
			goto reply;
		}
		c->ent = &loader_ent;
		name = loader_ent.name;
		ret = exec_loader_call(c);
		if (ret == -ENOSYS)
			decision = DEC_DENY;
		goto reply; /* its last fd goes in with the answer (c->out_fd) */
	}
	if (e->cls == SC_EXEC && n->nr == __NR_connect && netconn_strict()) {
		/* with moat-netd, connect is a user notification (run.c),
		 * answered by netconn_connect */
		static pthread_once_t once = PTHREAD_ONCE_INIT;
		pthread_once(&once, connect_row);
		e = &connect_ent;
	}
	c->ent = e;
	name = e->name;
	PROF_MARK(ST_LOOKUP);
	/* The copy-in and the ID_VALID below run inside the copy guard
	 * (kernel/task.h): no exec of the caller's group can complete
	 * between them, so what ID_VALID proves (the bytes are the caller's)
	 * holds for the image they came from; the handler's own accesses
	 * take the guard again (sc.h), standing on this ID_VALID until an
	 * exec or a reap in the group moves its gen (then an ioctl again) */
	int io = no_guest_io(c->nr) ? 1 : task_io_begin(t, -1, 0);
	if (io < 0) {
		/* an exec of its group held it off for TASK_IO_WAIT_MS: the
		 * caller is gone as a rule (the answer finds no one), else it
		 * gets EAGAIN rather than wait on */
		plat->reply(g_nfd, c->id, -EAGAIN);
		serving_end(t);
		task_put(t);
		return;
	}
	ret = copy_in(c);
	PROF_MARK(ST_COPYIN);
	/* An argument that cannot be copied (EFAULT, ENAMETOOLONG) is the
	 * call's answer only when the policy would let it run: a call the
	 * policy denies (--deny NAME, a FAST row's rules) is denied whatever
	 * its arguments. Before red team 21 a --deny'd mkdir with a
	 * 5000-byte path or a bad pointer was answered ENAMETOOLONG/EFAULT,
	 * audited "allow" and not counted in --result's denied calls. The
	 * check reads registers only (no copied argument). */
	if (ret < 0 && io == 0) {
		task_io_end(t); /* nothing read: nothing to prove */
		io = 1;
	}
	if (ret < 0 && e->cls != SC_DENY) {
		int perr = 0;
		if (policy_check(g_sb->policy, c, &perr) == DEC_ALLOW) {
			plat->reply(g_nfd, c->id, ret);
			goto audit;
		}
		c->note[0] = 0; /* (written again by the check below) */
	}
	ret = 0;
	/* ID_VALID proves that what copy_in read came from the caller (its pid
	 * may have been reused); the get*id calls read no guest memory and act
	 * on nothing but the answer, which the kernel refuses for a stale id */
	if (!no_guest_io(c->nr) && plat->id_valid(g_nfd, c->id) < 0) {
		if (io == 0)
			task_io_end(t);
		serving_end(t);
		task_put(t);
		return; /* the caller is gone (or was interrupted by a fatal signal) */
	}
	if (io == 0) {
		if (!no_guest_io(c->nr))
			task_io_proved(); /* the handler's accesses need no ioctl of their own */
		task_io_end(t);
	}
	PROF_MARK(ST_IDVALID);
	decision = policy_check(g_sb->policy, c, &err);
	PROF_MARK(ST_POLICY);
	if (decision == DEC_KILL) {
		__atomic_fetch_add(&g_sb->n_killed, 1, __ATOMIC_RELAXED);
		kill(t->tgid, SIGKILL);
		ret = -ENOSYS;
		goto audit;
	}
	if (decision == DEC_DENY)
		ret = -err;
	else {
		vfs_caller_set(t, g_nfd, c->id);
		(void)vfs_copyup_busy_take();
		ret = e->handler(c);
		/* a rootless copy-up by hand of a directory another process
		 * holds (a file open beneath it: make -j2's other compiler):
		 * nothing was changed; the holder usually lets go soon, so the
		 * call is made again after 5, 10, ... 160 ms (315 ms in all),
		 * then EOVERFLOW as before. Outside every lock the handler
		 * takes (ns_lock is held around a create's gofer call). */
		for (int k = 0; ret == -EOVERFLOW && k < 6 && vfs_copyup_busy_take(); k++) {
			if (c->out_fd >= 0) {
				close(c->out_fd);
				c->out_fd = -1;
			}
			usleep(5000u << k);
			if (plat->id_valid(g_nfd, c->id) < 0)
				break;  /* gone meanwhile: the reply finds no one */
			ret = e->handler(c);
		}
		vfs_caller_set(NULL, -1, 0);
	}
	if (ret >= 0 && c->cont && c->out_fd < 0 && !sc_cont_allowed(c->nr, c->mem_read)) {
		/* the TOCTOU rule (syscalls/table.c sc_cont_rows): the kernel
		 * would read again memory the decision read, or a row not
		 * declared to be decided on registers: refused, not let run */
		warn_guest("%s: a CONTINUE %s refused (the TOCTOU rule)", name,
		       sc_cont_row(c->nr) ? "after a read of guest memory" : "of a row not in sc_cont_rows");
		snprintf(c->note, sizeof c->note, "CONTINUE %s refused (TOCTOU rule)",
			 sc_cont_row(c->nr) ? "after a read of guest memory" : "of an undeclared row");
		c->cont = 0;
		ret = -ENOSYS;
		decision = DEC_DENY;
	}
	if (c->deny)
		decision = DEC_DENY; /* the handler's policy (the egress rules) refused it */
	__atomic_fetch_add(decision == DEC_DENY ? &g_sb->n_denied : &g_sb->n_emulated, 1, __ATOMIC_RELAXED);
reply:
	PROF_MARK(ST_HANDLER);
	if (g_prof) {
		unsigned long long g = gofer_profile_take(), o = guest_io_take();
		pt[ST_GOFER] += g;
		pt[ST_OUTCOPY] += o;
		pt[ST_HANDLER] -= g + o < pt[ST_HANDLER] ? g + o : pt[ST_HANDLER];
	}
	/* the reply's own CPU time: with the sync wake-up the SEND switches to
	 * the guest, and this thread runs again only after the guest's next trap */
	rcpu = g_prof ? prof_cpu() : 0;
	/* a file the guest gets open for writing does not run while it is
	 * (sc_exec_write_busy): noted whichever handler opened it */
	if (c->out_fd >= 0 && ret >= 0 && !c->out_fd_rdonly)
		sc_note_write_fd(c->out_fd);
	if (c->out_fd >= 0 && (c->out_fd_value || (ret >= 0 && (c->out_fd_close_first || sc_inotify_watched())))) {
		/* ADDFD without SEND, the sentry's copy closed, then the reply:
		 * ret (an fd installed at c->out_newfd_at: connect's 0 or
		 * EINPROGRESS), or the new fd's number when inotify watches
		 * exist, so that the guest's own close is the last one and its
		 * IN_CLOSE_WRITE/NOWRITE comes then, not after its next calls
		 * (LTP inotify01; two more switches, only in such sandboxes);
		 * and a FIFO's end (out_fd_close_first): another task's
		 * non-blocking open must not count our copy (syscalls pipe
		 * fifo_nonblock_writer_no_reader failed when this worker was
		 * preempted between the answer and its close) */
		long r = plat->addfd(g_nfd, c->id, c->out_fd, c->out_fd_flags, c->out_newfd_at, 0);
		close(c->out_fd);
		c->out_fd = -1;
		if (r == -ENOENT)
			goto audit;
		if (r < 0 || !c->out_fd_value)
			ret = r;
		plat->reply(g_nfd, c->id, ret);
	} else if (ret >= 0 && c->out_fd >= 0) {
		unsigned long long mark = closing_begin(t, c->out_fd);
		ret = plat->addfd(g_nfd, c->id, c->out_fd, c->out_fd_flags, c->out_newfd_at, 1);
		if (g_close_delay_ms) {
			/* tests: this worker slow to close its copy, the next
			 * call already another's (as after the loader's answer) */
			lead_pass();
			usleep((useconds_t)g_close_delay_ms * 1000);
		}
		closing_end(t, mark, c->out_fd);
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
		if (ret == -512 && t->intr_now)
			ret = -EINTR; /* no signal is pending any more: the kernel would not convert it */
		if (ret == -EINTR || (ret <= -512 && ret >= -516))
			__atomic_store_n(&t->restart_answered, c->nr + 1, __ATOMIC_RELEASE);
		plat->reply(g_nfd, c->id, ret);
	}
audit:
	if (g_prof) {
		if (rcpu)
			pt[ST_REPLY] += prof_cpu() - rcpu;
		plast = prof_now();
	}
	if (audit_wants_args(g_sb->audit)) {
		char args[4096];
		args[0] = 0;
		if (c->audit_args[0])
			snprintf(args, sizeof args, "%s", c->audit_args);
		else if (c->ent)
			sc_decode_args(c, args, sizeof args);
		audit_event(g_sb->audit, g_sb, t, c->tid, name, args, decision, ret, c->note);
	}
	serving_end(t);
	task_put(t);
	PROF_MARK(ST_AUDIT);
}

static int spawn_worker(void);

/* Leads: the workers that wait in RECV. Linux wakes every thread waiting in
 * SECCOMP_IOCTL_NOTIF_RECV for each notification (a non-exclusive wait: a
 * second waiter cost 2.3 us per call, bench/unotify_floor 1 vs 2), so as a
 * rule one worker at a time holds the lead and the others wait on a futex.
 * The lead handles what it received itself and goes straight back to RECV;
 * it passes the lead on (one futex wake, or a new worker when none is free)
 * before anything that may wait: before the handler of a call not in
 * fast_call(), and, inside those that are, before any gofer round trip
 * (gofer_set_block_hook). So a call that blocks never stalls the service of
 * other guest tasks, and a cached stat or direct open costs no thread switch
 * beyond the trap's own.
 *
 * While the fast calls of several guest tasks overlap (lead_spread), up to
 * spread_leads workers (one per CPU) hold a lead at once, so each CPU's
 * trapping task wakes a waiter on its own CPU (the sync wake-up) and those
 * calls are served in parallel; lead_target falls back to 1 once SPREAD_HOLD
 * looks in a row saw no overlap or a lead waited WORKER_IDLE_MS for a call,
 * and the extra lead gives its lead up after its call (lead_drop). */
static atomic_int leads;           /* workers holding a lead (t_lead) */
static atomic_int lead_target = 1; /* 1, or spread_leads while calls overlap */
static atomic_uint lead_seq;       /* futex word: moved by each lead_signal */
static atomic_int lead_waiters;
static __thread int t_lead;

/* While lead_target > 1 each lead holds a CPU slot and runs pinned to that
 * CPU: Linux wakes every RECV waiter on the trapping CPU (the sync wake-up),
 * and an unpinned second waiter woken there stayed runnable behind the
 * first, the call of a task trapping meanwhile on the other CPU finding no
 * one asleep in RECV (two stat loops: no gain with two unpinned leads). */
#define SPREAD_MAX 4
static int spread_cpus[SPREAD_MAX];
static atomic_int slots_used;   /* bit i: spread_cpus[i] has its lead */
static __thread int t_slot = -1, t_pinned = -1;
static cpu_set_t all_cpus;
static atomic_int ever_pinned; /* spawn_worker: a new thread inherits its creator's pin */

static void pin_to(int cpu)
{
	if (t_pinned == cpu)
		return;
	cpu_set_t cs;
	if (cpu >= 0) {
		CPU_ZERO(&cs);
		CPU_SET(cpu, &cs);
	} else
		cs = all_cpus;
	if (sched_setaffinity(0, sizeof cs, &cs) == 0) {
		t_pinned = cpu;
		atomic_store_explicit(&ever_pinned, 1, memory_order_relaxed);
	}
}

static void slot_release(void)
{
	if (t_slot >= 0)
		atomic_fetch_and(&slots_used, ~(1 << t_slot));
	t_slot = -1;
}

/* a lead while lead_target > 1: the slot of the CPU it runs on if free, else
 * another; pinned there. Unpinned again once the target is 1. */
static int spread_leads; /* the CPUs the sentry may run on, at most SPREAD_MAX */
static void slot_settle(void)
{
	if (atomic_load(&lead_target) <= 1) {
		slot_release();
		if (t_pinned >= 0)
			pin_to(-1);
		return;
	}
	if (t_slot >= 0)
		return;
	int cur = sched_getcpu(), pref = -1;
	for (int i = 0; i < spread_leads; i++)
		if (spread_cpus[i] == cur)
			pref = i;
	int used = atomic_load(&slots_used);
	for (;;) {
		int i = pref >= 0 && !(used & (1 << pref)) ? pref :
							     __builtin_ffs(~used & ((1 << spread_leads) - 1)) - 1;
		if (i < 0)
			return; /* every slot has its lead: this one is beyond the target */
		if (atomic_compare_exchange_weak(&slots_used, &used, used | (1 << i))) {
			t_slot = i;
			pin_to(spread_cpus[i]);
			return;
		}
	}
}
static int lead_open(void)
{
	return atomic_load(&leads) < atomic_load(&lead_target);
}

static int lead_try(void)
{
	int n = atomic_load(&leads);
	while (n < atomic_load(&lead_target))
		if (atomic_compare_exchange_weak(&leads, &n, n + 1)) {
			t_lead = 1;
			return 1;
		}
	return 0;
}

/* 0: this thread holds a lead; -1: it was idle for WORKER_IDLE_MS and has
 * left the count of workers (it must end). */
static int lead_take(void)
{
	for (;;) {
		unsigned seq = atomic_load(&lead_seq);
		if (lead_try()) {
			slot_settle();
			return 0;
		}
		struct timespec idle = { WORKER_IDLE_MS / 1000, (WORKER_IDLE_MS % 1000) * 1000000L };
		atomic_fetch_add(&lead_waiters, 1);
		long r = syscall(SYS_futex, &lead_seq, FUTEX_WAIT_PRIVATE, seq, &idle, NULL, 0);
		int timed_out = r < 0 && errno == ETIMEDOUT;
		atomic_fetch_sub(&lead_waiters, 1);
		/* Out of the waiters' count first, then the lead looked at: a
		 * lead_signal after this sees us gone (it wakes another waiter
		 * or spawns one); one before it left a lead free, and we
		 * take it instead of ending. */
		if (!timed_out || lead_open())
			continue;
		int n = atomic_load(&nworkers);
		while (n > MIN_WORKERS)
			if (atomic_compare_exchange_weak(&nworkers, &n, n - 1))
				return -1;
	}
}

/* How many workers there may be: MAX_WORKERS, plus one per worker that waits
 * for another guest task (each such wait holds a distinct guest task: bounded
 * by the task table, and by wait_cap). */
static int workers_cap(void)
{
	int w = atomic_load(&nwaiting);
	return MAX_WORKERS + (w < wait_cap ? w : wait_cap);
}

/* A lead is free: a waiter takes it, or a new worker when none waits. */
static void lead_signal(void)
{
	atomic_fetch_add(&lead_seq, 1);
	if (!lead_open())
		return; /* the target fell meanwhile: the lead is not given again */
	if (atomic_load(&lead_waiters) > 0)
		syscall(SYS_futex, &lead_seq, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	else if (!atomic_load(&recv_closed) && atomic_load(&nworkers) < workers_cap())
		spawn_worker();
}

static void lead_pass(void)
{
	if (!t_lead)
		return;
	t_lead = 0;
	slot_release();
	atomic_fetch_sub(&leads, 1);
	lead_signal();
}

/* After its call: a lead beyond the target (it fell while the call was
 * served) gives its lead up without handing it on. */
static void lead_drop(void)
{
	int n = atomic_load(&leads);
	while (n > atomic_load(&lead_target))
		if (atomic_compare_exchange_weak(&leads, &n, n - 1)) {
			t_lead = 0;
			slot_release();
			return;
		}
	slot_settle();
}

/* The calling worker is about to wait for another guest task (a FIFO's peer,
 * a lock's holder, a lease's break, a peer's accept), for as long as that
 * takes: it gives up the lead, and it stops counting against MAX_WORKERS
 * until pipeline_wait_end, so a new worker may be started in its place
 * (before, 64 threads opening a FIFO for reading stalled every other trapped
 * call of the sandbox: red team round 10). Nests. (The tracer never waits
 * so: its opens are O_NONBLOCK; if it did, it would count as a worker does.) */
void pipeline_wait_begin(void)
{
	if (!g_sb || t_waiting++)
		return;
	if (t_serving)
		__atomic_store_n(&t_serving->call_state, 2, __ATOMIC_RELEASE);
	atomic_fetch_add(&nwaiting, 1);
	wait_poll_note(1);
	if (t_lead) {
		lead_pass();
	} else if (lead_open() && atomic_load(&lead_waiters) == 0 &&
		   !atomic_load(&recv_closed) && atomic_load(&nworkers) < workers_cap()) {
		/* the lead was passed before this call's handler with the
		 * pool full: nobody may be in RECV */
		spawn_worker();
	}
}

void pipeline_wait_end(void)
{
	if (!g_sb || !t_waiting || --t_waiting)
		return;
	if (t_serving)
		__atomic_store_n(&t_serving->call_state, 1, __ATOMIC_RELEASE);
	atomic_fetch_sub(&nwaiting, 1);
	wait_poll_note(-1);
}

void pipeline_set_wait_cap(int cap)
{
	wait_cap = cap > 0 ? cap : 0;
}

/* Spreading calls over CPUs (issue 6, "one waiter per CPU"). With one lead,
 * the calls of other tasks queue while it serves one: two stat loops in one
 * sandbox ran at half speed each, a CPU idle. A lead that is about to serve
 * a fast call, when more than one guest task exists (a single-threaded guest
 * pays one load and no more), looks for an overlap: another fast call being
 * served now (fast_busy), or else a notification already queued (a poll of
 * the notify fd, on one call in SPREAD_SAMPLE). One raises lead_target to
 * spread_leads and wakes (or starts) a worker for the new lead, which RECVs
 * the queued call at once; SPREAD_HOLD looks in a row without one bring the
 * target back to 1. */
#define SPREAD_HOLD 64 /* looks without an overlap before the target falls to 1 */
#define SPREAD_SAMPLE 8
static __thread unsigned t_spread_n;
static atomic_int fast_busy;  /* fast calls being served by leads */
static atomic_int spread_score;

static atomic_int spread_last_tid, spread_last_tgid;

/* Are the calls served now those of several threads of one process (git's
 * preload threads), rather than of separate processes with work between
 * their calls (two compilers of a make -j2: a second lead on cost them 10%,
 * every call then also waking the other CPU's lead for nothing)? The last
 * fast call's thread and process against this one's. */
static int spread_same_process(pid_t tid)
{
	struct task *t = task_get(g_sb, tid);
	if (!t)
		return 0;
	pid_t tgid = t->tgid;
	task_put(t);
	int last = atomic_exchange_explicit(&spread_last_tid, tid, memory_order_relaxed);
	int lastg = atomic_exchange_explicit(&spread_last_tgid, tgid, memory_order_relaxed);
	return lastg == tgid && last != tid;
}

/* before a fast call's handler, holding a lead; 1 if counted in fast_busy */
static int lead_spread(pid_t tid)
{
	if (task_count_hint() <= 1)
		return 0;
	int busy = atomic_fetch_add(&fast_busy, 1), overlap = busy > 0;
	if (g_prof && (unsigned)busy + 1 > atomic_load(&fast_busy_max))
		atomic_store(&fast_busy_max, (unsigned)busy + 1);
	if (!overlap) {
		/* the poll costs ~0.7 us: one call in SPREAD_SAMPLE looks */
		if (++t_spread_n % SPREAD_SAMPLE)
			return 1;
		struct pollfd pf = { .fd = g_nfd, .events = POLLIN };
		if (g_prof)
			atomic_fetch_add(&n_spread_polls, 1);
		overlap = poll(&pf, 1, 0) > 0 && (pf.revents & POLLIN);
	}
	if (overlap && g_spread_tg && atomic_load(&lead_target) == 1)
		overlap = spread_same_process(tid);
	if (overlap) {
		if (atomic_load_explicit(&spread_score, memory_order_relaxed) != SPREAD_HOLD)
			atomic_store_explicit(&spread_score, SPREAD_HOLD, memory_order_relaxed);
		int one = 1;
		if (atomic_load(&lead_target) == 1 &&
		    atomic_compare_exchange_strong(&lead_target, &one, spread_leads)) {
			if (g_prof)
				atomic_fetch_add(&n_spread_on, 1);
			lead_signal();
		}
	} else if (atomic_load(&lead_target) > 1 &&
		   atomic_fetch_sub_explicit(&spread_score, 1, memory_order_relaxed) <= 1) {
		atomic_store(&lead_target, 1);
	}
	return 1;
}

static int lead_held(void)
{
	return t_lead;
}

void pipeline_may_block(void)
{
	lead_pass();
}

/* Handlers that wait only in a gofer round trip (the block hook passes the
 * lead first) or not at all: answered by the lead without a hand-off. */
static int fast_call(int nr)
{
	switch (nr) {
	case __NR_stat: case __NR_lstat: case __NR_newfstatat: case __NR_statx:
	case __NR_access: case __NR_faccessat: case __NR_faccessat2:
	case __NR_open: case __NR_openat: case __NR_openat2:
	case __NR_readlink: case __NR_readlinkat: case __NR_getcwd:
	case __NR_chdir: case __NR_fchdir: case __NR_uname:
	case __NR_getuid: case __NR_geteuid: case __NR_getgid: case __NR_getegid:
	case __NR_getgroups: case __NR_getresuid: case __NR_getresgid:
	/* a walk, then a fixed answer (sys_xattr.c) or a synthetic/host statfs */
	case __NR_getxattr: case __NR_lgetxattr: case __NR_listxattr: case __NR_llistxattr:
	case __NR_setxattr: case __NR_lsetxattr: case __NR_removexattr: case __NR_lremovexattr:
	case __NR_statfs: case __NR_fstatfs:
	/* the create/unlink path of tar, rm, git: a walk and one gofer
	 * request (or none: a virtual chown), which waits with the lead
	 * only until another guest call arrives (gofer_set_lead) */
	case __NR_unlink: case __NR_unlinkat: case __NR_rmdir:
	case __NR_mkdir: case __NR_mkdirat:
	case __NR_chmod: case __NR_fchmod: case __NR_fchmodat:
	case __NR_chown: case __NR_lchown: case __NR_fchown: case __NR_fchownat:
	case __NR_utimensat:
	/* with moat-netd (netconn_connect): a netd round trip, which never
	 * blocks; a wait for a blocking guest's handshake passes the lead */
	case __NR_connect:
		return 1;
	default:
		return 0;
	}
}

static void *worker(void *arg)
{
	/* its creator's pin undone by itself (sched_setaffinity of pid 0:
	 * glibc's pthread_attr_setaffinity_np names the new thread's tid,
	 * which the sentry's filter refuses, initrows2, and pthread_create
	 * then fails) */
	if (arg)
		sched_setaffinity(0, sizeof all_cpus, &all_cpus);
	struct sc_call *c = xmalloc(sizeof *c);
	vfs_thread_warmup(g_sb->vfs);
	for (;;) {
		struct notif n;
		if (!t_lead && lead_take() < 0) {
		idle_end:
			/* idle: end (nworkers already counts us out), and
			 * give back what the heap holds free: the program's
			 * start-up calls dirtied it again after the trim at
			 * its first exec (an idle sandbox's PSS; an idle
			 * path: this worker waited a second for the lead) */
			free(c);
			vfs_thread_release();
			malloc_trim(0);
			text_trim();
			atomic_fetch_sub(&idle_workers, 1);
			return NULL;
		}
		if (atomic_load(&lead_target) > 1) {
			/* A lead of several waits in poll first, which
			 * times out: with nothing to do for WORKER_IDLE_MS
			 * the target falls back to 1 and this lead goes (an
			 * idle sandbox keeps one worker, lifecycle.sh
			 * idle_workers_end); RECV cannot time out. */
			struct pollfd pf = { .fd = g_nfd, .events = POLLIN };
			int pr = poll(&pf, 1, WORKER_IDLE_MS);
			if (pr == 0) {
				atomic_store(&lead_target, 1);
				lead_drop();
				/* idle for WORKER_IDLE_MS already: ends now
				 * while another worker remains */
				int nw = atomic_load(&nworkers);
				while (!t_lead && nw > MIN_WORKERS)
					if (atomic_compare_exchange_weak(&nworkers, &nw, nw - 1))
						goto idle_end;
				continue;
			}
		}
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
			    !(pf.revents & POLLIN)) {
				atomic_store(&recv_closed, 1);
				break;
			}
			continue;
		}
		if (r < 0) {
			atomic_store(&recv_closed, 1);
			break;
		}
		atomic_fetch_sub(&idle_workers, 1);
		int counted = 0;
		if (!fast_call(n.nr))
			lead_pass();
		else if (g_spread && spread_leads > 1)
			counted = lead_spread(n.pid);
		handle(&n, c);
		if (counted)
			atomic_fetch_sub(&fast_busy, 1);
		if (t_lead)
			lead_drop();
		atomic_fetch_add(&idle_workers, 1);
	}
	lead_pass();
	free(c);
	atomic_fetch_sub(&idle_workers, 1);
	atomic_fetch_sub(&nworkers, 1);
	return NULL;
}

/* 0, or the errno of its pthread_create */
static int spawn_worker(void)
{
	int r;
	pthread_attr_t at;
	pthread_t th;
	pthread_attr_init(&at);
	pthread_attr_setstacksize(&at, WORKER_STACK);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	/* (the new worker gives up its creator's pin itself: worker) */
	int unpin = t_pinned >= 0 || atomic_load_explicit(&ever_pinned, memory_order_relaxed);
	atomic_fetch_add(&nworkers, 1);
	atomic_fetch_add(&idle_workers, 1);
	atomic_fetch_add(&workers_started, 1);
	/* workers never take moat's own signals: the main thread forwards them */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	r = pthread_create(&th, &at, worker, unpin ? (void *)1 : NULL);
	if (r != 0) {
		atomic_fetch_sub(&nworkers, 1);
		atomic_fetch_sub(&idle_workers, 1);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&at);
	return r;
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
	const char *pe = getenv("MOAT_PROFILE");
	if (pe && *pe && strcmp(pe, "0")) {
		g_prof = xcalloc(PROF_NR + 1, sizeof *g_prof);
		gofer_profile(1);
		guestmem_profile = 1;
	}
	/* Linux 6.6+: wake the worker on the trapping task's CPU and switch to it
	 * directly. On these VMs a cross-CPU wake-up dominates a trapped call. */
	if (ioctl(notify_fd, SECCOMP_IOCTL_NOTIF_SET_FLAGS_, SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP_) < 0)
		dbg("seccomp sync wake-up unavailable: %s", strerror(errno));
	const char *sp = getenv("MOAT_SPREAD"); /* 0: one lead only (comparisons) */
	if (sp && !strcmp(sp, "0"))
		g_spread = 0;
	if (sp && !strcmp(sp, "2")) /* any two tasks' calls (comparisons) */
		g_spread_tg = 0;
	CPU_ZERO(&all_cpus);
	spread_leads = 0;
	if (sched_getaffinity(0, sizeof all_cpus, &all_cpus) == 0)
		for (int cpu = 0; cpu < CPU_SETSIZE && spread_leads < SPREAD_MAX; cpu++)
			if (CPU_ISSET(cpu, &all_cpus))
				spread_cpus[spread_leads++] = cpu;
	spin_setup(); /* the gofer waits' spin budget (gofer/client.c) */
	gofer_set_block_hook(lead_pass);
	gofer_set_wait_hooks(pipeline_wait_begin, pipeline_wait_end);
	if (!getenv("MOAT_EAGER_LEAD"))
		gofer_set_lead(lead_held, notify_fd);
	const char *cd = getenv("MOAT_TEST_ADDFD_CLOSE_DELAY_MS");
	if (cd && atoi(cd) > 0 && atoi(cd) <= 5000)
		g_close_delay_ms = atoi(cd);
	const char *vcd = getenv("MOAT_TEST_PTRACE_CHECK_DELAY"); /* MS */
	if (vcd && atoi(vcd) > 0 && atoi(vcd) <= 5000) {
		sc_test_vm_check_delay_ms = procfs_test_check_delay_ms = atoi(vcd);
		guestmem_test_block = procfs_test_block = lead_pass;
	}
	const char *cod = getenv("MOAT_TEST_COPYOUT_DELAY"); /* MS:ADDR[:in] */
	if (cod) {
		char *end = NULL;
		long ms = strtol(cod, &end, 10);
		if (ms > 0 && ms <= 5000 && end && *end == ':') {
			guestmem_test_delay_addr = strtoull(end + 1, &end, 0);
			guestmem_test_delay_in = end && !strcmp(end, ":in");
			guestmem_test_delay_ms = (int)ms;
			guestmem_test_block = lead_pass;
		}
	}
	procfs_set_kconfig(sc_kconfig_text);
	/* the first worker: without it nothing answers the guest's first
	 * trapped call, and the start-up waited until killed (red team 58) */
	return -spawn_worker();
}
