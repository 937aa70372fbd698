/* sentry/netbroker.c - moat-broker: the one process that holds --secret values.
 *
 * Forked by the sentry after the privilege drop, before moat-netd and the
 * guest exist, only when --secret is given. The sentry sends it the secrets
 * over a SOCK_SEQPACKET socketpair (one message each, then an empty one) and
 * wipes its own copy (explicit_bzero, then munmap: the table was mapped
 * MADV_WIPEONFORK, so no process forked before, the gofer included, ever held
 * a value, and none forked after: the guest's init is cloned later). The
 * other end of that socketpair goes to moat-netd, which sends one message per
 * brokered connection: the secrets it may carry (mask) and two sockets, the
 * accepted end of a loopback pair whose other end the guest holds, and the
 * upstream connection (maybe still connecting). moat-broker relays between
 * them (brokerhttp.c transforms both directions).
 *
 * Its decisions (a value put in a header block, left out because Host does
 * not name HOST, a stream no longer framed, an upstream that failed) go to
 * the sentry over a second socketpair (fd 4), whose thread makes each an
 * "http" audit event (broker_audit_start).
 *
 * Confinement (seccomp, kill on anything else): recvmsg on its channel,
 * sendto on its event channel,
 * read/write/poll/shutdown/close/fcntl, getsockopt (SO_ERROR of a connect),
 * setsockopt (SO_LINGER: a reset when upstream failed), anonymous mmap,
 * brk/munmap, exit. No socket, no connect, no open: a compromised broker
 * can write the values only to the sockets it was given (the guest's side
 * and the secret's host). Not dumpable (its mm belongs to the user namespace
 * moat started in, where the sentry has no capability: no ptrace,
 * process_vm_readv or pidfd_getfd from a compromised sentry), PDEATHSIG, all
 * fds closed but its channel and stderr.
 */
#include "sentry/broker.h"
#include "sentry/netd.h"
#include "sentry/netpolicy.h"
#include "sentry/sentry.h"
#include "kernel/task.h"
#include "common/log.h"
#include "common/util.h"

#include "common/sanitize.h"
#include "syscalls/decode.h"
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MAX_CONNS 64
#define RDSZ 65536
#define IDLE_MS 50 /* an unframed stream holding a tail (brokerhttp.c scrub); not an HTTP answer read until close */

static int confine_broker(int chan, int evfd)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_KILL_PROCESS);
	if (!ctx)
		return -1;
	static const int plain[] = {
		SCMP_SYS(read), SCMP_SYS(write), SCMP_SYS(poll), SCMP_SYS(shutdown), SCMP_SYS(close),
		SCMP_SYS(fcntl), SCMP_SYS(getsockopt), SCMP_SYS(exit), SCMP_SYS(exit_group),
		SCMP_SYS(rt_sigreturn), SCMP_SYS(brk), SCMP_SYS(munmap), SCMP_SYS(mremap),
		SCMP_SYS(clock_gettime),
	};
	int rc = 0;
	for (size_t i = 0; i < sizeof plain / sizeof plain[0] && !rc; i++)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, plain[i], 0);
	struct scmp_arg_cmp on_chan = { .arg = 0, .op = SCMP_CMP_EQ, .datum_a = (scmp_datum_t)chan };
	if (!rc)
		rc = seccomp_rule_add_array(ctx, SCMP_ACT_ALLOW, SCMP_SYS(recvmsg), 1, &on_chan);
	/* its decisions, to the sentry's audit (only with --audit/--trace) */
	struct scmp_arg_cmp on_ev = { .arg = 0, .op = SCMP_CMP_EQ, .datum_a = (scmp_datum_t)evfd };
	if (!rc && evfd >= 0)
		rc = seccomp_rule_add_array(ctx, SCMP_ACT_ALLOW, SCMP_SYS(sendto), 1, &on_ev);
	struct scmp_arg_cmp linger[2] = {
		{ .arg = 1, .op = SCMP_CMP_EQ, .datum_a = SOL_SOCKET },
		{ .arg = 2, .op = SCMP_CMP_EQ, .datum_a = SO_LINGER },
	};
	if (!rc)
		rc = seccomp_rule_add_array(ctx, SCMP_ACT_ALLOW, SCMP_SYS(setsockopt), 2, linger);
	/* anonymous mmap, sanitizer, no_new_privs, load */
	return moat_filter_finish(ctx, rc);
}

struct conn {
	int g, u;          /* the guest's side (loopback pair), upstream */
	int connecting;    /* upstream's connect not yet done */
	int g_eof, u_eof;  /* read side ended */
	int gw_shut, uw_shut;
	struct bk_out out; /* guest -> upstream */
	struct bk_in in;   /* upstream -> guest */
	struct bk_buf to_u, to_g;
	size_t off_u, off_g;
	long long idle_at; /* ms: unframed with a held tail since */
};

static struct broker_secret *g_sec; /* BROKER_MAX_SECRETS, this process only */
static pid_t g_broker_pid;          /* the sentry's: MOAT_TEST_CONFINEMENT probes it */
static struct conn *g_conns[MAX_CONNS];
static int g_nconns;
static int g_evfd = -1; /* events to the sentry (SOCK_SEQPACKET) */

/* Hand the sentry what the relay decided (dropped when it is behind). */
static void send_events(struct bk_out *o)
{
	for (int k = 0; g_evfd >= 0 && k < o->nev; k++)
		(void)send(g_evfd, &o->ev[k], sizeof o->ev[k], MSG_DONTWAIT | MSG_NOSIGNAL);
	o->nev = 0;
}

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void conn_free(int k, int reset)
{
	struct conn *c = g_conns[k];
	if (reset) {
		/* the guest sees a reset, not a clean end: upstream failed */
		struct linger l = { 1, 0 };
		(void)setsockopt(c->g, SOL_SOCKET, SO_LINGER, &l, sizeof l);
	}
	close(c->g);
	close(c->u);
	bk_out_free(&c->out);
	bk_in_free(&c->in);
	/* the bytes relayed may hold a value: wipe them */
	if (c->to_u.p)
		memset(c->to_u.p, 0, c->to_u.cap);
	if (c->to_g.p)
		memset(c->to_g.p, 0, c->to_g.cap);
	bk_buf_free(&c->to_u);
	bk_buf_free(&c->to_g);
	free(c);
	g_conns[k] = g_conns[--g_nconns];
}

static void take_conn(int chan)
{
	struct broker_conn_msg m;
	struct iovec iov = { &m, sizeof m };
	union {
		char buf[CMSG_SPACE(2 * sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			     .msg_controllen = sizeof u.buf };
	ssize_t n = recvmsg(chan, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
	if (n == 0)
		_exit(0); /* moat-netd is gone: so is the sandbox */
	if (n < 0)
		return;
	int fds[2] = { -1, -1 };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
	if (cm && cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS &&
	    cm->cmsg_len == CMSG_LEN(2 * sizeof(int)))
		memcpy(fds, CMSG_DATA(cm), sizeof fds);
	else if (cm && cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS &&
		 cm->cmsg_len == CMSG_LEN(sizeof(int)))
		memcpy(fds, CMSG_DATA(cm), sizeof(int));
	if (n != (ssize_t)sizeof m || fds[0] < 0 || fds[1] < 0 || g_nconns >= MAX_CONNS) {
		if (fds[0] >= 0)
			close(fds[0]);
		if (fds[1] >= 0)
			close(fds[1]);
		return;
	}
	struct conn *c = xcalloc(1, sizeof *c);
	c->g = fds[0];
	c->u = fds[1];
	fcntl(c->g, F_SETFL, O_NONBLOCK);
	fcntl(c->u, F_SETFL, O_NONBLOCK);
	c->connecting = 1;
	uint32_t mask = m.mask & ((1u << BROKER_MAX_SECRETS) - 1);
	bk_out_init(&c->out, g_sec, mask);
	bk_in_init(&c->in, g_sec, mask, &c->out);
	g_conns[g_nconns++] = c;
}

/* Write what is pending in b to fd: 0, or -1 when the peer is gone. */
static int drain(int fd, struct bk_buf *b, size_t *off)
{
	while (*off < b->len) {
		ssize_t w = write(fd, b->p + *off, b->len - *off);
		if (w < 0)
			return errno == EAGAIN || errno == EINTR ? 0 : -1;
		*off += (size_t)w;
	}
	memset(b->p, 0, b->len);
	b->len = 0;
	*off = 0;
	return 0;
}

/* One connection's turn after poll. 1 = done (freed by the caller), 2 = reset. */
static int step(struct conn *c, short gre, short ure)
{
	static uint8_t buf[RDSZ];
	if (c->connecting) {
		if (!(ure & (POLLOUT | POLLERR | POLLHUP)))
			return 0;
		int e = 0;
		socklen_t l = sizeof e;
		if (getsockopt(c->u, SOL_SOCKET, SO_ERROR, &e, &l) < 0 || e) {
			struct bk_event ev = { .kind = BK_EV_UPSTREAM, .mask = c->out.mask };
			snprintf(ev.what, sizeof ev.what, "%s", strerror(e ? e : errno));
			if (g_evfd >= 0)
				(void)send(g_evfd, &ev, sizeof ev, MSG_DONTWAIT | MSG_NOSIGNAL);
			return 2;
		}
		c->connecting = 0;
	}
	/* guest -> upstream: read only when nothing is pending */
	if (!c->g_eof && c->to_u.len == 0 && (gre & (POLLIN | POLLHUP | POLLERR))) {
		ssize_t k = read(c->g, buf, sizeof buf);
		if (k > 0)
			bk_out_feed(&c->out, buf, (size_t)k, &c->to_u);
		else if (k == 0 || (errno != EAGAIN && errno != EINTR)) {
			c->g_eof = 1;
			bk_out_eof(&c->out, &c->to_u);
		}
		send_events(&c->out);
	}
	if (c->to_u.len && drain(c->u, &c->to_u, &c->off_u) < 0)
		return 1;
	if (c->g_eof && !c->to_u.len && !c->uw_shut) {
		shutdown(c->u, SHUT_WR);
		c->uw_shut = 1;
	}
	/* upstream -> guest */
	if (!c->u_eof && c->to_g.len == 0 && (ure & (POLLIN | POLLHUP | POLLERR))) {
		ssize_t k = read(c->u, buf, sizeof buf);
		if (k > 0) {
			bk_in_feed(&c->in, buf, (size_t)k, &c->to_g);
			c->idle_at = c->in.nheld && c->in.mode == BK_PASS ? now_ms() + IDLE_MS : 0;
		} else if (k == 0 || (errno != EAGAIN && errno != EINTR)) {
			c->u_eof = 1;
			bk_in_eof(&c->in, &c->to_g);
			c->idle_at = 0;
		}
		memset(buf, 0, sizeof buf);
	}
	/* idle: upstream had nothing more for IDLE_MS while moat-broker was
	 * waiting for it — never while the guest's side was full and nothing
	 * was read. Timed from the read before, a guest that stopped reading
	 * got the tail of a 64 KiB read that ended inside a value as it came,
	 * and the rest of the value with the next read (red team 56: a
	 * pipelined echo of the credential header read slowly; the value in
	 * 5 s). The clock starts again when the guest's side is empty. */
	if (c->idle_at && !c->to_g.len && now_ms() >= c->idle_at) {
		bk_in_idle(&c->in, &c->to_g);
		c->idle_at = 0;
	}
	if (c->to_g.len) {
		if (drain(c->g, &c->to_g, &c->off_g) < 0)
			return 1;
		if (!c->to_g.len && c->idle_at)
			c->idle_at = now_ms() + IDLE_MS;
	}
	if (c->u_eof && !c->to_g.len && !c->gw_shut) {
		shutdown(c->g, SHUT_WR);
		c->gw_shut = 1;
	}
	return c->gw_shut && c->uw_shut;
}

static _Noreturn void serve(int chan)
{
	for (;;) {
		struct pollfd pf[1 + 2 * MAX_CONNS];
		int np = 0, wait = -1;
		long long now = now_ms();
		pf[np++] = (struct pollfd){ chan, g_nconns < MAX_CONNS ? POLLIN : 0, 0 };
		for (int k = 0; k < g_nconns; k++) {
			struct conn *c = g_conns[k];
			short ge = 0, ue = 0;
			if (c->connecting) {
				ue = POLLOUT;
			} else {
				if (!c->g_eof && !c->to_u.len)
					ge |= POLLIN;
				if (c->to_u.len)
					ue |= POLLOUT;
				if (!c->u_eof && !c->to_g.len)
					ue |= POLLIN;
				if (c->to_g.len)
					ge |= POLLOUT;
			}
			pf[np++] = (struct pollfd){ c->g, ge, 0 };
			pf[np++] = (struct pollfd){ c->u, ue, 0 };
			if (c->idle_at && !c->to_g.len) {
				long long left = c->idle_at - now;
				int w = left > 0 ? (int)left : 0;
				if (wait < 0 || w < wait)
					wait = w;
			}
		}
		int polled = g_nconns;
		if (poll(pf, (nfds_t)np, wait) < 0)
			continue;
		/* from the last: conn_free moves the last one into the slot */
		for (int k = polled - 1; k >= 0; k--) {
			int r = step(g_conns[k], pf[1 + 2 * k].revents, pf[2 + 2 * k].revents);
			if (r)
				conn_free(k, r == 2);
		}
		if (pf[0].revents & (POLLHUP | POLLERR) && !(pf[0].revents & POLLIN))
			_exit(0);
		if (pf[0].revents & POLLIN)
			take_conn(chan);
	}
}

pid_t broker_start(struct broker_secret *sec, int n, int events_wanted, int *netd_end, int *events, char *err,
		   size_t errlen)
{
	int sv[2], ev[2] = { -1, -1 };
	*events = -1;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		snprintf(err, errlen, "moat-broker: socketpair: %s", strerror(errno));
		return -1;
	}
	if (events_wanted && socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ev) < 0) {
		snprintf(err, errlen, "moat-broker: socketpair: %s", strerror(errno));
		close(sv[0]);
		close(sv[1]);
		return -1;
	}
	pid_t pid = moat_fork_helper("moat-broker");
	if (pid < 0) {
		snprintf(err, errlen, "moat-broker: fork: %s", strerror(errno));
		close(sv[0]);
		close(sv[1]);
		if (ev[0] >= 0) {
			close(ev[0]);
			close(ev[1]);
		}
		return -1;
	}
	if (pid == 0) {
		int hs = fcntl(sv[1], F_DUPFD_CLOEXEC, 64);
		int he = ev[1] >= 0 ? fcntl(ev[1], F_DUPFD_CLOEXEC, 64) : -1;
		int chan = hs < 0 ? -1 : dup2(hs, 3);
		g_evfd = he < 0 ? -1 : dup2(he, 4);
		if (chan < 0 || (ev[1] >= 0 && g_evfd < 0) || syscall(SYS_close_range, g_evfd >= 0 ? 5 : 4, ~0U, 0) < 0)
			_exit(1);
		sigset_t all;
		sigfillset(&all);
		sigprocmask(SIG_SETMASK, &all, NULL);
		signal(SIGPIPE, SIG_IGN);
		/* its own copy of the table (the sentry's is wiped on fork) */
		g_sec = mmap(NULL, BROKER_MAX_SECRETS * sizeof *g_sec, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (g_sec == MAP_FAILED)
			_exit(1);
		(void)madvise(g_sec, BROKER_MAX_SECRETS * sizeof *g_sec, MADV_DONTDUMP);
		for (int k = 0;; k++) {
			struct broker_secret s;
			ssize_t r = recv(chan, &s, sizeof s, 0);
			if (r == 0 || (r > 0 && r != (ssize_t)sizeof s) || (r < 0 && errno != EINTR))
				_exit(1);
			if (r < 0) {
				k--;
				continue;
			}
			if (!s.len)
				break; /* the end of the table */
			if (k >= BROKER_MAX_SECRETS || s.len > BROKER_MAX_SECRET)
				_exit(1);
			g_sec[k] = s;
			explicit_bzero(&s, sizeof s);
		}
		if (priv_drop_caps() < 0 || confine_broker(chan, g_evfd) < 0) {
			fprintf(stderr, "moat-broker: cannot confine itself\n");
			_exit(1);
		}
		serve(chan);
	}
	close(sv[1]);
	if (ev[1] >= 0)
		close(ev[1]);
	int ok = 1;
	for (int k = 0; k < n && ok; k++)
		ok = send(sv[0], &sec[k], sizeof sec[k], MSG_NOSIGNAL) == (ssize_t)sizeof sec[k];
	if (ok) {
		static struct broker_secret end; /* len 0 */
		ok = send(sv[0], &end, sizeof end, MSG_NOSIGNAL) == (ssize_t)sizeof end;
	}
	if (!ok) {
		snprintf(err, errlen, "moat-broker: cannot hand it the secrets: %s", strerror(errno));
		close(sv[0]);
		if (ev[0] >= 0)
			close(ev[0]);
		return -1;
	}
	*netd_end = sv[0];
	*events = ev[0];
	g_broker_pid = pid;
	return pid;
}

#include <sys/ptrace.h>
#include <sys/uio.h>

/* ---- the sentry's side: moat-broker's decisions become audit events ---- */
static struct sandbox *g_asb;
static int g_afd = -1;

static pthread_mutex_t g_amu = PTHREAD_MUTEX_INITIALIZER;
static int g_astop;

/* One queued event as an audit event: 1, 0 when none is queued, -1 when
 * moat-broker is gone. Under g_amu. */
static int take_event(void)
{
	struct bk_event e;
	ssize_t n = recvfrom(g_afd, &e, sizeof e, MSG_DONTWAIT, NULL, NULL);
	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
		return -1; /* moat-broker is gone */
	if (n < 0)
		return 0;
	if (n != (ssize_t)sizeof e)
		return 1;
	e.what[sizeof e.what - 1] = 0;
	char names[96], args[600], note[224];
	netconn_secret_names(e.mask, names, sizeof names);
	int dec = DEC_ALLOW;
	long ret = 0;
	sc_quote_str(args, sizeof args, e.what, 120);
	switch (e.kind) {
	case BK_EV_SUBST:
		snprintf(note, sizeof note, "moat-broker: secret %s put in the header block", names);
		break;
	case BK_EV_NOHOST:
		dec = DEC_DENY;
		snprintf(note, sizeof note, "moat-broker: secret %s left out: the Host header does not name its HOST",
			 names);
		break;
	case BK_EV_UNFRAMED:
		snprintf(note, sizeof note, "moat-broker (secret %s): bytes pass unchanged from here on", names);
		break;
	case BK_EV_UPSTREAM:
		ret = -ECONNRESET;
		snprintf(note, sizeof note, "moat-broker (secret %s): upstream failed, the guest's end reset",
			 names);
		break;
	default:
		return 1;
	}
	audit_event(g_asb->audit, g_asb, NULL, 0, "http", args, dec, ret, note);
	return 1;
}

/* The events come in order and before the bytes they are about go on, so
 * at the sandbox's end every one of them is queued: broker_audit_drain takes
 * what this thread has not. */
static void *audit_loop(void *arg)
{
	(void)arg;
	for (;;) {
		struct pollfd p = { .fd = g_afd, .events = POLLIN };
		if (poll(&p, 1, -1) < 0 && errno != EINTR)
			return NULL;
		pthread_mutex_lock(&g_amu);
		int r = g_astop ? -1 : take_event();
		pthread_mutex_unlock(&g_amu);
		if (r < 0)
			return NULL;
	}
}

void broker_audit_drain(void)
{
	if (g_afd < 0)
		return;
	pthread_mutex_lock(&g_amu);
	while (!g_astop && take_event() > 0)
		;
	g_astop = 1;
	pthread_mutex_unlock(&g_amu);
}

int broker_audit_start(struct sandbox *sb, int fd)
{
	g_asb = sb;
	g_afd = fd;
	pthread_t th;
	pthread_attr_t at;
	pthread_attr_init(&at);
	pthread_attr_setstacksize(&at, 64 * 1024);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	int r = pthread_create(&th, &at, audit_loop, NULL);
	pthread_attr_destroy(&at);
	return r ? -1 : 0;
}

/* MOAT_TEST_CONFINEMENT (the confined sentry): what a compromised sentry
 * would try to get a value out of moat-broker. Each must be refused. */
void broker_selftest(void)
{
	if (g_broker_pid <= 0)
		return;
	static const char mark[] = "same address in the fork";
	char b[sizeof mark];
	struct iovec l = { b, sizeof b }, r = { (void *)mark, sizeof b };
	long v = process_vm_readv(g_broker_pid, &l, 1, &r, 1, 0);
	fprintf(stderr, "confinement-probe broker_vm_readv: %s\n", v >= 0 ? "ALLOWED" : "refused");
	long p = ptrace(PTRACE_ATTACH, g_broker_pid, 0, 0);
	fprintf(stderr, "confinement-probe broker_ptrace: %s\n", p >= 0 ? "ALLOWED" : "refused");
	long pfd = syscall(SYS_pidfd_open, g_broker_pid, 0);
	long g = pfd < 0 ? -1 : syscall(SYS_pidfd_getfd, (int)pfd, 3, 0);
	fprintf(stderr, "confinement-probe broker_pidfd_getfd: %s\n", g >= 0 ? "ALLOWED" : "refused");
	if (g >= 0)
		close((int)g);
	if (pfd >= 0)
		close((int)pfd);
}
