/* sentry/netconn.c - connect() of AF_INET/AF_INET6 sockets: the egress policy.
 *
 * connect is class EXEC (a ptrace stop; AF_UNIX path names need the register
 * rewrite, unixsock.c). At the stop the tracer reads the address once
 * (unixsock_stop) and, for an inet address on an inet socket:
 *   - the guest's own loopback (127/8, ::1) with no rule naming it: native,
 *     untouched (the guest's network namespace has only its own loopback);
 *   - a destination no rule allows: skipped with ENETUNREACH (what the
 *     guest's empty namespace answers), audited with the reason;
 *   - an allowed destination: only with moat-netd, where connect is a user
 *     notification (netconn_connect), never this stop.
 * netconn_connect asks moat-netd (netd.c) for a connected socket of the same
 * family and type, with the guest socket's options copied, waits for the
 * connection if the guest's socket is blocking, and replaces the guest's fd
 * with it (SECCOMP_IOCTL_NOTIF_ADDFD + SETFD, O_CLOEXEC as the guest's fd
 * had it). The guest's kernel then sends and receives natively. A
 * non-blocking socket answers EINPROGRESS at once and the guest polls the
 * replaced fd. netd checks the destination again against its own copy of the
 * policy: the sentry asks, netd decides.
 *
 * With netd running (netconn_strict) nothing the guest does with an inet
 * socket that could reach the host's namespace runs natively after a check
 * made here: every connect, every bind with a non-AF_UNIX address and every
 * listen are made by netd on the file the worker pins (on_pinned: NETD_
 * LOCAL_CONNECT, NETD_BIND, NETD_LISTEN, only on a socket of the guest's
 * netns), and a TCP fast open is refused.
 *
 * UDP egress (netconn_send_stop, netconn_send_call): sendto/sendmsg/sendmmsg
 * with an allowed inet address on the guest's own datagram socket, and every
 * send on a UDP socket moat-netd made, become MOAT_SYS_LOADER(MOAT_NET_SEND,
 * fd, kind) at their stop (the msghdr and address read once); the worker
 * copies the payload and netd sends it (netd.c: the guest's socket is shut
 * for writing, a twin on its port sends). A connected UDP socket is not
 * forwarded by a relay: the guest's own socket is connected (by netd, on
 * the pinned file) to the relay's end on the guest's loopback, and netd
 * carries its datagrams to and from the destination (netd.c udp_relay).
 */
#include "sentry/netd.h"
#include "sentry/netpolicy.h"
#include "sentry/netreuse.h"
#include "sentry/sentry.h"
#include "kernel/task.h"
#include "loader/loader_abi.h"
#include "platform/arch.h"
#include "syscalls/sc.h"
#include "syscalls/handlers.h"
#include "syscalls/filter.h"
#include "syscalls/sys_socket.h"
#include "syscalls/sys_fs.h"
#include "common/util.h"
#include "common/log.h"

_Static_assert(NETD_MAX_RELAYS == UDP_RELAY_SLOTS, "the sentry keeps a destination per relay slot of netd");

#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <linux/filter.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/ptrace.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <net/if.h>
#include <linux/sockios.h>
#include <unistd.h>

static void key_secret_init(void);
static const struct netpolicy *g_pol;
static int g_chan = -1;
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static int g_dchan = -1; /* RESOLVE requests: netd's DNS channel */
static pthread_mutex_t g_dmu = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t g_pol_mu = PTHREAD_MUTEX_INITIALIZER; /* DNS answers change g_pol */

struct net_pending {
	int op;       /* NETD_CONNECT, NETD_LOCAL_CONNECT, NETD_BIND, NETD_LISTEN, NETD_SEND */
	int fd;
	int kind;     /* NETD_SEND: NETSEND_* */
	uint32_t len; /* 0: no address (a send on a moat-netd socket) */
	uint8_t addr[128];
	int rule;
	int backlog;
	int flags;                       /* a send's MSG_* flags */
	uint64_t buf, buflen, iov, iovlen, mmsg; /* where its payload is */
	/* The key (netconn_key): only the private call the stop made takes
	 * the request, never a later call of the thread */
	pid_t tid;        /* the thread */
	uint64_t ip;      /* where it called (the notification's instruction pointer) */
	uint64_t call[6]; /* the private call's arguments; call[5] is a one-time nonce */
	long orig_nr;     /* the guest's own call, put back for a restart */
	uint64_t orig[6];
};

/* MOAT_PROFILE: wall time of the stages of an allowed TCP connect, summed
 * and printed at exit (netconn_profile_report). */
enum { NCP_PIN, NCP_OPTS, NCP_NETD, NCP_NETD_SELF, NCP_WAIT, NCP_PREP, NCP_N };
static const char *const ncp_names[NCP_N] = {
	"pin + policy + checks", "read options", "netd (+ cloexec read)", "  of which netd itself",
	"wait connected", "flags",
};
static int g_ncprof;
static unsigned long long g_ncp_ns[NCP_N], g_ncp_n[NCP_N];

static unsigned long long netconn_prof_now(void)
{
	if (!g_ncprof)
		return 0;
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ULL + (unsigned long long)ts.tv_nsec;
}

static void ncp_add(int st, unsigned long long ns)
{
	__atomic_fetch_add(&g_ncp_ns[st], ns, __ATOMIC_RELAXED);
	__atomic_fetch_add(&g_ncp_n[st], 1, __ATOMIC_RELAXED);
}

/* The stage st ended now (t0: its start, 0 when profiling is off); returns now. */
static unsigned long long ncp_mark(int st, unsigned long long t0)
{
	if (!t0)
		return 0;
	unsigned long long now = netconn_prof_now();
	ncp_add(st, now - t0);
	return now;
}

void netconn_profile_report(void)
{
	if (!g_ncprof || !g_ncp_n[NCP_NETD])
		return;
	fprintf(stderr, "moat profile: allowed TCP connects, mean wall ns per stage\n");
	for (int i = 0; i < NCP_N; i++)
		if (g_ncp_n[i])
			fprintf(stderr, "  %-24s %9llu  (%llu)\n", ncp_names[i], g_ncp_ns[i] / g_ncp_n[i], g_ncp_n[i]);
}

/* The guest's network namespace, by cookie (SO_NETNS_COOKIE; 0 = unknown),
 * and a socket of it (a dup of the DNS stub's) for netconn_if_ioctl. */
static uint64_t g_guest_netns;
static int g_guest_sock = -1;

static int ask_netd_fd(struct netd_req *q, struct netd_rep *rep, int *sfd, int sendfd);

void netconn_set_guest_netns(int fd)
{
	g_guest_netns = sock_netns_cookie(fd);
	if (g_guest_sock < 0)
		g_guest_sock = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	if (g_chan < 0)
		return;
	/* netd learns it too, from the socket itself, once and before the
	 * guest exists: it makes the guest's own connect/bind/listen on the
	 * pinned file only when the file is of this namespace */
	struct netd_req q;
	struct netd_rep rep;
	int sfd;
	memset(&q, 0, sizeof q);
	q.op = NETD_GUESTNS;
	if (ask_netd_fd(&q, &rep, &sfd, fd) < 0 || rep.err)
		warnx_("moat-netd did not take the guest's network namespace: the guest's own inet "
			 "connects, binds and listens will fail");
	if (sfd >= 0)
		close(sfd);
}

void netconn_set_relays(const int ends[2], const int icmp[2])
{
	/* the connected-UDP relay's guest ends (netd.c udp_relay) and its raw
	 * ICMP sockets (netd.c relay_icmp): netd keeps them; the sentry never
	 * needs them. After GUESTNS: netd takes only sockets of the guest's
	 * namespace */
	for (int i = 0; i < 4; i++) {
		int fd = i < 2 ? ends[i] : icmp[i - 2];
		if (fd < 0)
			continue;
		if (g_chan >= 0) {
			struct netd_req q;
			struct netd_rep rep;
			int sfd;
			memset(&q, 0, sizeof q);
			q.op = NETD_RELAY;
			if (ask_netd_fd(&q, &rep, &sfd, fd) < 0 || rep.err)
				warnx_(i < 2 ? "moat-netd did not take the UDP relay's %s socket: connected UDP "
					       "egress over %s is refused" :
					       "moat-netd did not take the UDP relay's %s ICMP socket: ICMP errors "
					       "of connected UDP destinations over %s are not passed on",
				       i % 2 ? "IPv6" : "IPv4", i % 2 ? "IPv6" : "IPv4");
			if (sfd >= 0)
				close(sfd);
		}
		close(fd);
	}
}

/* Skip the stopped call with err, audited. */
static int skip_call(struct sandbox *sb, struct task *t, arch_regs *regs, const char *call,
		     const char *args, int err, const char *note)
{
	REG_SYSNO(*regs) = -1; /* skip */
	REG_RET(*regs) = -err;
	ptrace(PTRACE_SETREGS, t->tid, 0, regs);
	audit_event(sb->audit, sb, t, t->tid, call, args, DEC_DENY, -err, note);
	return 0;
}

static void set_pending(struct task *t, struct net_pending *p)
{
	pthread_mutex_lock(&t->lock);
	free(t->net_pending);
	__atomic_store_n(&t->net_pending, p, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&t->lock);
}

static struct net_pending *take_pending(struct task *t)
{
	if (!__atomic_load_n(&t->net_pending, __ATOMIC_ACQUIRE))
		return NULL; /* the common case: no lock */
	pthread_mutex_lock(&t->lock);
	struct net_pending *p = t->net_pending;
	__atomic_store_n(&t->net_pending, NULL, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&t->lock);
	return p;
}

void netconn_drop_pending(struct task *t)
{
	free(take_pending(t));
}

/* A one-time nonce: a keyed hash of a counter (the secret drawn once). */
static uint64_t g_key_secret[2];
static uint64_t netconn_nonce(void)
{
	static uint64_t ctr;
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, key_secret_init);
	uint64_t in[3] = { g_key_secret[0], __atomic_add_fetch(&ctr, 1, __ATOMIC_RELAXED), g_key_secret[1] };
	uint64_t k = moat_hash(in, sizeof in);
	return k ? k : 1;
}

/* Key the request to the call (ARCHITECTURE "Egress", the private call's
 * key) and turn the stopped call into MOAT_SYS_LOADER(marker, fd, a2, ...,
 * nonce): the request is the thread's, for a call made where this one was
 * (its ip) with exactly these six arguments. The guest's own seccomp
 * filter may refuse that call (ERRNO, TRAP): a seccomp filter is a pure
 * function of (nr, arch, ip, args) and only grows, so the same call of the
 * same thread is refused again, every time; a call the filter lets through
 * is another call (its ip or arguments differ) and is refused here. */
static void to_private(struct task *t, arch_regs *regs, struct net_pending *p, uint64_t marker,
		       uint64_t fd, const uint64_t *a2)
{
	p->tid = t->tid;
	p->orig_nr = (long)REG_SYSNO(*regs);
	p->orig[0] = REG_ARG0(*regs), p->orig[1] = REG_ARG1(*regs), p->orig[2] = REG_ARG2(*regs);
	p->orig[3] = REG_ARG3(*regs), p->orig[4] = REG_ARG4(*regs), p->orig[5] = REG_ARG5(*regs);
	REG_SYSNO(*regs) = MOAT_SYS_LOADER;
	REG_ARG0(*regs) = marker;
	REG_ARG1(*regs) = fd;
	if (a2)
		REG_ARG2(*regs) = *a2;
	REG_ARG5(*regs) = netconn_nonce();
	p->ip = REG_IP(*regs);
	p->call[0] = REG_ARG0(*regs), p->call[1] = REG_ARG1(*regs), p->call[2] = REG_ARG2(*regs);
	p->call[3] = REG_ARG3(*regs), p->call[4] = REG_ARG4(*regs), p->call[5] = REG_ARG5(*regs);
	set_pending(t, p);
	ptrace(PTRACE_SETREGS, t->tid, 0, regs);
}

/* The private call's request, if this call is the one its stop made
 * (thread, ip, the six arguments with the nonce); any other call drops it. */
static struct net_pending *take_keyed(struct sc_call *c)
{
	struct net_pending *p = take_pending(c->task);
	if (p && (p->tid != c->tid || p->ip != c->ip || memcmp(p->call, c->args, sizeof p->call))) {
		snprintf(c->note, sizeof c->note, "not the call its stop made (thread, ip or key): request dropped");
		free(p);
		return NULL;
	}
	if (!p)
		snprintf(c->note, sizeof c->note, "no request left by a stop of this thread");
	return p;
}

#define NC_ERESTARTSYS 512
#define NC_ERESTARTNOINTR 513
#define NC_ERESTARTNOHAND 514
int netconn_signal_stop(struct task *t, void *regsp)
{
	struct net_pending *p = take_pending(t);
	if (!p)
		return 0;
	arch_regs *regs = regsp;
	long rax = (long)REG_RET(*regs);
	uint64_t now[6] = { REG_ARG0(*regs), REG_ARG1(*regs), REG_ARG2(*regs),
			    REG_ARG3(*regs), REG_ARG4(*regs), REG_ARG5(*regs) };
	if (REG_SYSNO(*regs) != MOAT_SYS_LOADER || REG_IP(*regs) != p->ip || memcmp(now, p->call, sizeof now) ||
	    (rax != -NC_ERESTARTSYS && rax != -NC_ERESTARTNOINTR && rax != -NC_ERESTARTNOHAND)) {
		free(p);
		return 0;
	}
	/* the private call's wait ended before a worker took it
	 * (WAIT_KILLABLE_RECV: never after), nothing was made. The same
	 * private call again, at once, with the request kept and every
	 * signal blocked to its syscall exit (the tracer's PTRACE_SYSCALL,
	 * netconn_hold_stop): the kernel queues this signal again, blocked,
	 * with its siginfo (ptrace_signal), and delivers it after the call,
	 * as natively after a send the kernel made at once. Before, the
	 * guest's own call was put back through its stop, and a signal
	 * faster than the stop's own cost made no call ever end. */
	uint64_t mask = 0, all = ~(uint64_t)0;
	if (!t->net_hold && ptrace(PTRACE_GETSIGMASK, t->tid, sizeof mask, &mask) < 0) {
		free(p);
		return 0;
	}
	REG_RET(*regs) = (unsigned long long)-NC_ERESTARTNOINTR;
	if ((!t->net_hold && ptrace(PTRACE_SETSIGMASK, t->tid, sizeof all, &all) < 0) ||
	    ptrace(PTRACE_SETREGS, t->tid, 0, regs) < 0) {
		free(p);
		return 0; /* (gone) */
	}
	if (!t->net_hold) {
		__atomic_store_n(&t->net_held_mask, mask, __ATOMIC_RELAXED);
		__atomic_store_n(&t->net_hold, 1, __ATOMIC_RELEASE);
	}
	set_pending(t, p);
	return 1;
}

/* A syscall stop of a thread netconn_signal_stop holds: at the private
 * call's exit its own signal mask goes back (a signal held meanwhile is
 * delivered on its way out). Returns the ptrace request to resume with. */
int netconn_hold_stop(struct task *t)
{
	struct __ptrace_syscall_info si;
	if (ptrace(PTRACE_GET_SYSCALL_INFO, t->tid, sizeof si, &si) > 0 && si.op != PTRACE_SYSCALL_INFO_EXIT)
		return PTRACE_SYSCALL; /* the restarted call's entry (or its seccomp stop) */
	uint64_t mask = __atomic_load_n(&t->net_held_mask, __ATOMIC_RELAXED);
	ptrace(PTRACE_SETSIGMASK, t->tid, sizeof mask, &mask);
	__atomic_store_n(&t->net_hold, 0, __ATOMIC_RELEASE);
	return PTRACE_CONT;
}

/* Turn the stopped call into MOAT_SYS_LOADER(marker, fd): a worker runs it
 * on the file it pins (netconn_call), never the kernel on the fd number. */
static int to_worker(struct task *t, arch_regs *regs, uint64_t marker, int op, int fd, const void *sa,
		     size_t len, int rule, int backlog)
{
	struct net_pending *p = xcalloc(1, sizeof *p);
	p->op = op;
	p->fd = fd;
	p->len = (uint32_t)len;
	if (len)
		memcpy(p->addr, sa, len);
	p->rule = rule;
	p->backlog = backlog;
	to_private(t, regs, p, marker, (uint64_t)fd, NULL);
	return 0;
}

/* A socket moat-netd made (the host's network namespace), which the guest
 * holds after an allowed connect: its "loopback" is the host's. With netd
 * running and the guest's namespace unknown, every socket counts as one. */
static int host_socket(int hfd)
{
	if (g_chan < 0)
		return 0; /* no netd: every socket is the guest's */
	uint64_t c = sock_netns_cookie(hfd);
	return !g_guest_netns || !c || c != g_guest_netns;
}

static void key_secret_init(void)
{
	if (getrandom(g_key_secret, sizeof g_key_secret, 0) != (ssize_t)sizeof g_key_secret) {
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		g_key_secret[0] ^= (uint64_t)ts.tv_nsec * 0x9e3779b97f4a7c15ULL ^ (uint64_t)getpid();
		g_key_secret[1] ^= (uint64_t)ts.tv_sec ^ (uint64_t)(uintptr_t)&ts;
	}
}

void netconn_init(const struct netpolicy *pol, int chan)
{
	g_pol = pol;
	g_chan = chan;
	const char *pe = getenv("MOAT_PROFILE");
	g_ncprof = pe && *pe && strcmp(pe, "0");
	g_dchan = chan >= 0 ? netd_dns_channel() : -1;
}

static void describe(const struct netpol_addr *a, uint16_t port, int type, char *buf, size_t n)
{
	char ip[64];
	netpol_format(a, ip, sizeof ip);
	snprintf(buf, n, a->family == AF_INET6 ? "[%s]:%u/%s" : "%s:%u/%s", ip, port,
		 type == SOCK_STREAM ? "tcp" : "udp");
}

static int sock_kind(int hfd, int *domain, int *type)
{
	socklen_t l = sizeof *domain;
	if (getsockopt(hfd, SOL_SOCKET, SO_DOMAIN, domain, &l) < 0)
		return -errno;
	l = sizeof *type;
	if (getsockopt(hfd, SOL_SOCKET, SO_TYPE, type, &l) < 0)
		return -errno;
	return 0;
}

int netconn_strict(void)
{
	return g_chan >= 0;
}

/* At a stop: the family and type of the socket fd holds and whether it is
 * of the host's namespace (a hint only: the number may name another file by
 * the time anything acts on it, so nothing native may follow on its word).
 * 0, -EBADF (no such fd), or sock_kind's -errno (not a socket). */
static int stop_sock_kind(struct task *t, int fd, int *domain, int *type, int *host)
{
	int hfd = task_getfd(t, fd);
	if (hfd < 0)
		return -EBADF;
	int r = sock_kind(hfd, domain, type);
	*host = r == 0 && host_socket(hfd);
	close(hfd);
	return r;
}

enum { NCV_LOCAL, NCV_DENY, NCV_ALLOW };

/* The egress verdict on an inet connect of a socket of this type (host: of
 * the host's namespace): NCV_LOCAL (the guest's own loopback, no rule naming
 * it: the guest's namespace answers), NCV_DENY (*why), NCV_ALLOW (*rule).
 * No allocation; the policy's lock only (DNS answers change it). */
static int connect_verdict(const struct netpol_addr *a, uint16_t port, int type, int host, int *rule,
			   const char **why)
{
	*why = NULL;
	pthread_mutex_lock(&g_pol_mu);
	*rule = g_pol ? netpolicy_match(g_pol, a, port, type == SOCK_STREAM ? NP_TCP : NP_UDP, why) : -1;
	pthread_mutex_unlock(&g_pol_mu);
	const char *special = netpolicy_special(a);
	static const uint8_t zero[16];
	/* the guest's own loopback (0.0.0.0 and :: mean the local host); a
	 * socket moat-netd made (disconnected with connect(AF_UNSPEC)) is of
	 * the host's namespace: its loopback is the host's, never the guest's */
	if (*rule < 0 && special && !host && (!strcmp(special, "host loopback") || !memcmp(a->a, zero, sizeof zero)))
		return NCV_LOCAL;
	if (*rule >= 0 && type != SOCK_STREAM && host) {
		/* a socket moat-netd made (the guest's datagrams went out with
		 * sendto before): it is of the host's namespace and shut for
		 * writing; the relay connects only the guest's own sockets */
		*rule = -1;
		*why = "connect of a moat-netd UDP socket (one that sent with sendto before) is not forwarded";
	}
	return *rule < 0 || g_chan < 0 ? NCV_DENY : NCV_ALLOW;
}

/* connect of an inet address at its ptrace stop: only without moat-netd
 * (--net none; with netd, connect is a user notification: netconn_connect).
 * No socket of the host's namespace is then in the guest's hands: the
 * guest's own loopback runs natively (1), anything else is skipped with
 * ENETUNREACH, audited (0). */
int netconn_stop(struct sandbox *sb, struct task *t, void *regsp, const void *sa, size_t len)
{
	arch_regs *regs = regsp;
	struct netpol_addr a;
	uint16_t port;
	if (netpol_from_sockaddr(sa, len, &a, &port) < 0)
		return 1; /* short address: the kernel answers EINVAL */
	int fd = (int)REG_ARG0(*regs);
	int domain = 0, type = 0, host = 0;
	int r = stop_sock_kind(t, fd, &domain, &type, &host);
	if (r == -EBADF)
		return 1; /* the kernel answers EBADF */
	sa_family_t fam;
	memcpy(&fam, sa, sizeof fam);
	if (r < 0 || domain != fam || (type != SOCK_STREAM && type != SOCK_DGRAM))
		return 1; /* not a socket, mismatched family...: the kernel answers */
	const char *why;
	int rule;
	if (connect_verdict(&a, port, type, host, &rule, &why) == NCV_LOCAL)
		return 1;
	char dest[96], args[200], note[128];
	describe(&a, port, type, dest, sizeof dest);
	snprintf(args, sizeof args, "%d, %s", fd, dest);
	snprintf(note, sizeof note, "egress denied: %s", why ? why : "--net none");
	return skip_call(sb, t, regs, "connect", args, ENETUNREACH, note);
}

static const char *const send_names[] = { "connect", "sendto", "sendmsg", "sendmmsg" };
/* net_pending.rule of a send the worker decides whole (pinned_send_stop) */
enum { NETSEND_PINNED = -3 };

/* What a send's kernel call would read from its registers and msghdr, read
 * once at its stop. 1: sendmmsg of no message (nothing is read or sent). */
struct send_regs {
	uint64_t aptr, alen, buf, buflen, iov, iovlen, mmsg, ctl;
	int flags, readok;
};

static int send_regs_read(struct task *t, const arch_regs *regs, int kind, struct send_regs *o)
{
	memset(o, 0, sizeof *o);
	o->readok = 1;
	if (kind == NETSEND_TO) {
		o->buf = REG_ARG1(*regs), o->buflen = REG_ARG2(*regs), o->flags = (int)REG_ARG3(*regs);
		o->aptr = REG_ARG4(*regs), o->alen = (uint64_t)(int)REG_ARG5(*regs); /* the kernel's int */
		return 0;
	}
	o->flags = (int)(kind == NETSEND_MSG ? REG_ARG2(*regs) : REG_ARG3(*regs));
	if (kind == NETSEND_MMSG && (unsigned)REG_ARG2(*regs) == 0)
		return 1;
	o->mmsg = REG_ARG1(*regs);
	struct msghdr mh;
	o->readok = guest_read(t->tid, REG_ARG1(*regs), &mh, sizeof mh) == 0;
	if (o->readok) {
		o->aptr = (uint64_t)(uintptr_t)mh.msg_name, o->alen = mh.msg_namelen;
		o->iov = (uint64_t)(uintptr_t)mh.msg_iov, o->iovlen = mh.msg_iovlen;
		o->ctl = mh.msg_controllen;
		if (!o->aptr)
			o->alen = 0; /* the kernel ignores a length without a name */
	}
	return 0;
}

static void send_regs_keep(struct net_pending *p, const struct send_regs *sr)
{
	p->flags = sr->flags;
	p->buf = sr->buf, p->buflen = sr->buflen, p->iov = sr->iov, p->iovlen = sr->iovlen, p->mmsg = sr->mmsg;
}

/* A socket of the host's the caller handed over that can address a send
 * (host_send_pinned, red team 97): it cannot be shut for writing as
 * moat-netd's UDP sockets are (its replies are addressed sends), so a
 * thread's dup2 of it onto the number between any "native" answer of this
 * stop and the kernel's look-up sent from it wherever the guest's memory
 * said by then (the host's loopback). Here no send that names an address,
 * nor any sendmsg/sendmmsg (msg_name is in memory), runs natively on any
 * file but an AF_UNIX socket at the stop (left: unixsock.c's paths): the
 * registers, msghdr and address are copied once, and the worker decides
 * on the file it pins and makes the send there (pinned_send). */
static int pinned_send_stop(struct sandbox *sb, struct task *t, arch_regs *regs, int kind)
{
	const char *call = send_names[kind];
	int fd = (int)REG_ARG0(*regs);
	struct send_regs sr;
	if (send_regs_read(t, regs, kind, &sr) > 0)
		return 1; /* vlen 0: nothing is read or sent, on any file */
	if (kind == NETSEND_TO && (!sr.aptr || !sr.alen))
		return 1; /* registers the kernel reads once: no address (or EINVAL) on any file */
	char args[64];
	snprintf(args, sizeof args, "%d", fd);
	if (!sr.readok)
		return skip_call(sb, t, regs, call, args, EFAULT, "unreadable msghdr");
	if (sr.ctl)
		return skip_call(sb, t, regs, call, args, EOPNOTSUPP,
				 "control messages are not forwarded while a host socket is inherited");
	struct net_pending *p = xcalloc(1, sizeof *p);
	if (sr.aptr && sr.alen) {
		if (sr.alen > sizeof p->addr || guest_read(t->tid, sr.aptr, p->addr, sr.alen) < 0) {
			int e = sr.alen > sizeof p->addr ? EINVAL : EFAULT;
			free(p);
			return skip_call(sb, t, regs, call, args, e, "bad address");
		}
		p->len = (uint32_t)sr.alen;
	}
	p->op = NETD_SEND;
	p->fd = fd;
	p->kind = kind;
	p->rule = NETSEND_PINNED;
	send_regs_keep(p, &sr);
	uint64_t k = (uint64_t)kind;
	to_private(t, regs, p, MOAT_NET_SEND, (uint64_t)fd, &k);
	return 0;
}

/* The "native" answers below (1) are decisions about an fd number and an
 * address in guest memory, and with netd running another thread can dup2 a
 * socket of the host's namespace onto that number, or rewrite the address or
 * msghdr, between this stop and the kernel's lookup. That is safe here, and
 * unlike connect/bind/listen (unixsock.c strict_connect, on_pinned) needs no
 * netd call, because no native send on a socket netd made can reach the
 * host's network with an address the guest chose:
 *   - a moat-netd UDP socket is shut for writing (netd.c udp_guest_socket):
 *     every native send on it is EPIPE, whatever address and flags;
 *   - a moat-netd TCP socket is connected by netd to an allowed destination
 *     (or not connected at all): TCP ignores a send's address except with
 *     MSG_FASTOPEN, which is refused whenever netd runs, on any socket
 *     (netconn_fastopen_stop runs before this; the flags are a register,
 *     read once). An unconnected one answers EPIPE/ENOTCONN.
 * On the guest's own sockets a native send stays in its namespace (loopback
 * only). A socket of the host's the caller handed over as stdio makes netd
 * run too (run.c netd_on, red team 93): an addressed send on it is checked
 * here as on a netd socket, but it is not shut for writing, so a thread's
 * dup2 of it onto a guest socket's number after a "native" answer below
 * (the guest's own loopback) sent from it: with such a socket (one that
 * can address a send) nothing here is native (pinned_send_stop, red team
 * 97) but on an AF_UNIX socket (ARCHITECTURE "Known gaps"). */
int netconn_send_stop(struct sandbox *sb, struct task *t, void *regsp, int kind)
{
	arch_regs *regs = regsp;
	const char *call = send_names[kind];
	int fd = (int)REG_ARG0(*regs);
	int domain = 0, type = 0, host = 0;
	int r = stop_sock_kind(t, fd, &domain, &type, &host);
	if (host_send_pinned() && !(r == 0 && domain == AF_UNIX))
		return pinned_send_stop(sb, t, regs, kind);
	if (r == -EBADF)
		return 1; /* the kernel answers EBADF */
	if (r < 0 || (domain != AF_INET && domain != AF_INET6) || type != SOCK_DGRAM)
		return 1; /* not an inet datagram socket: the caller goes on */
	struct send_regs sr;
	if (send_regs_read(t, regs, kind, &sr) > 0)
		return 1; /* vlen 0: nothing is read or sent */
	uint64_t aptr = sr.aptr, alen = sr.alen, ctl = sr.ctl;
	int readok = sr.readok;
	char args[200], dest[96], note[160];
	snprintf(args, sizeof args, "%d", fd);
	if (!readok) {
		if (!host)
			return 1; /* the guest's own socket: the kernel answers EFAULT */
		return skip_call(sb, t, regs, call, args, EFAULT, "moat-netd UDP socket: unreadable msghdr");
	}
	if (!host && (!aptr || !alen))
		return 1; /* the guest's own socket, no address: native */
	union {
		struct sockaddr_storage ss;
		uint8_t b[sizeof(struct sockaddr_storage)];
	} sa;
	memset(&sa, 0, sizeof sa);
	struct netpol_addr a;
	uint16_t port = 0;
	int parsed = -1;
	if (aptr && alen) {
		if (alen > sizeof sa || guest_read(t->tid, aptr, &sa, alen) < 0) {
			if (!host)
				return 1; /* the kernel answers (EINVAL, EFAULT) */
			return skip_call(sb, t, regs, call, args, alen > sizeof sa ? EINVAL : EFAULT,
					 "moat-netd UDP socket: bad address");
		}
		parsed = netpol_from_sockaddr(&sa, alen, &a, &port);
		if (parsed < 0) {
			if (!host)
				return 1; /* the guest's own socket: the kernel answers */
			/* a socket of the host's namespace: nothing but a checked
			 * inet address goes on (AF_UNSPEC would be read as AF_INET) */
			return skip_call(sb, t, regs, call, args,
					 sa.ss.ss_family == AF_INET || sa.ss.ss_family == AF_INET6 ? EINVAL :
												       EAFNOSUPPORT,
					 "moat-netd UDP socket: not an inet address");
		}
		if (!host && sa.ss.ss_family != domain)
			return 1; /* the guest's own socket, mismatched family: the kernel answers */
	}
	int rule = -1;
	const char *why = NULL;
	if (parsed == 0) {
		pthread_mutex_lock(&g_pol_mu);
		rule = g_pol ? netpolicy_match(g_pol, &a, port, NP_UDP, &why) : -1;
		pthread_mutex_unlock(&g_pol_mu);
		const char *special = netpolicy_special(&a);
		static const uint8_t zero[16];
		if (rule < 0 && special && !host &&
		    (!strcmp(special, "host loopback") || !strcmp(special, "multicast") ||
		     !memcmp(a.a, zero, sizeof zero)))
			return 1; /* the guest's own loopback (the DNS stub is there; its
				   * multicast routes lead only to lo) */
		describe(&a, port, SOCK_DGRAM, dest, sizeof dest);
		snprintf(args, sizeof args, "%d, %s", fd, dest);
		if (rule < 0 || g_chan < 0) {
			snprintf(note, sizeof note, "egress denied: %s", why ? why : "--net none");
			return skip_call(sb, t, regs, call, args, ENETUNREACH, note);
		}
	}
	if (ctl)
		return skip_call(sb, t, regs, call, args, EOPNOTSUPP,
				 "egress: control messages are not forwarded on UDP egress");
	/* an allowed destination, or any send on a moat-netd UDP socket: the
	 * net send call (a worker) sends a copy, through moat-netd when there
	 * is an address */
	struct net_pending *p = xcalloc(1, sizeof *p);
	p->op = NETD_SEND;
	p->fd = fd;
	p->kind = kind;
	p->rule = rule;
	send_regs_keep(p, &sr);
	if (parsed == 0) {
		size_t keep = sa.ss.ss_family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6);
		p->len = (uint32_t)keep;
		memcpy(p->addr, &sa, keep);
	}
	uint64_t k = (uint64_t)kind;
	to_private(t, regs, p, MOAT_NET_SEND, (uint64_t)fd, &k);
	return 0;
}

int netconn_listen_stop(struct sandbox *sb, struct task *t, void *regsp)
{
	(void)sb;
	arch_regs *regs = regsp;
	if (g_chan < 0)
		return 1; /* no netd: no socket of the host's namespace to listen on */
	return to_worker(t, regs, MOAT_NET_LISTEN, NETD_LISTEN, (int)REG_ARG0(*regs), NULL, 0, -1,
			 (int)REG_ARG1(*regs));
}

int netconn_bind_stop(struct sandbox *sb, struct task *t, void *regsp, const void *sa, size_t len)
{
	if (g_chan < 0)
		return 1; /* no netd: no socket of the host's namespace to bind */
	return netconn_copy_bind_stop(sb, t, regsp, sa, len);
}

/* Without netd too, once the caller handed over an AF_UNIX socket
 * (unix_inherited_any): the worker binds the pinned file with this copy
 * (netconn_call: host_abstract_bind refuses an abstract name on a socket
 * of the host's namespace). */
int netconn_copy_bind_stop(struct sandbox *sb, struct task *t, void *regsp, const void *sa, size_t len)
{
	(void)sb;
	arch_regs *regs = regsp;
	/* with netd, never native (any family, any length: unixsock.c copied
	 * the address once); an inet address is cut to its family's sockaddr
	 * (the kernel ignores the rest), anything else goes as given and the
	 * kernel answers on the pinned file */
	sa_family_t fam = 0;
	if (len >= sizeof fam)
		memcpy(&fam, sa, sizeof fam);
	size_t keep = fam == AF_INET ? sizeof(struct sockaddr_in) : fam == AF_INET6 ? sizeof(struct sockaddr_in6) : len;
	if (len < keep)
		keep = len;
	if (keep > sizeof ((struct net_pending *)0)->addr)
		keep = sizeof ((struct net_pending *)0)->addr;
	return to_worker(t, regs, MOAT_NET_BIND, NETD_BIND, (int)REG_ARG0(*regs), sa, keep, -1, 0);
}

int netconn_fastopen_stop(struct sandbox *sb, struct task *t, void *regsp, const char *call)
{
	arch_regs *regs = regsp;
	if (g_chan < 0)
		return 1; /* no netd: every socket is the guest's own */
	/* With netd, never native: the address is in guest memory, and the fd
	 * number may name a netd socket by the time the kernel looks (a fast
	 * open connects it). The check only picks the errno. */
	int fd = (int)REG_ARG0(*regs);
	int hfd = task_getfd(t, fd);
	int host = hfd >= 0 && host_socket(hfd);
	if (hfd >= 0)
		close(hfd);
	int err = host ? ENETUNREACH : EOPNOTSUPP;
	char args[64];
	snprintf(args, sizeof args, "%d, MSG_FASTOPEN", fd);
	REG_SYSNO(*regs) = -1; /* skip */
	REG_RET(*regs) = -err;
	ptrace(PTRACE_SETREGS, t->tid, 0, regs);
	audit_event(sb->audit, sb, t, t->tid, call, args, DEC_DENY, -err,
		    host ? "egress denied: TCP fast open on a moat-netd socket"
			 : "TCP fast open is not offered with --net rules (EOPNOTSUPP, as with it off)");
	return 0;
}

/* O_CLOEXEC of the guest's fd, from its fdinfo in the guest's procfs. */
static int guest_fd_cloexec(struct task *t, int fd)
{
	char path[64], buf[256];
	snprintf(path, sizeof path, "%d/fdinfo/%d", (int)t->vtgid, fd);
	int f = openat(t->sb->guest_procfd, path, O_RDONLY | O_CLOEXEC);
	if (f < 0)
		return 0;
	ssize_t n = read(f, buf, sizeof buf - 1);
	close(f);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	char *p = strstr(buf, "flags:");
	return p ? (strtoul(p + 6, NULL, 8) & O_CLOEXEC) != 0 : 0;
}

static const struct {
	int level, name;
} copied_opts[] = {
	{ SOL_SOCKET, SO_REUSEADDR },   { SOL_SOCKET, SO_REUSEPORT }, { SOL_SOCKET, SO_KEEPALIVE },
	{ SOL_SOCKET, SO_RCVBUF },      { SOL_SOCKET, SO_SNDBUF },    { IPPROTO_TCP, TCP_NODELAY },
	{ IPPROTO_TCP, TCP_KEEPIDLE },  { IPPROTO_TCP, TCP_KEEPINTVL }, { IPPROTO_TCP, TCP_KEEPCNT },
	{ IPPROTO_IPV6, IPV6_V6ONLY },  { IPPROTO_IP, IP_TOS },       { IPPROTO_IPV6, IPV6_TCLASS },
};

/* Work a worker does between sending a request and reading the reply. */
struct overlap {
	struct task *t;
	int fd;
	int *cloexec; /* the guest fd's O_CLOEXEC (guest_fd_cloexec) */
};

/* One request to moat-netd: q, then payload (NETD_SEND), with fd attached
 * (SCM_RIGHTS) when fd >= 0; the reply and a socket it attached (*sfd).
 * ov (or NULL): done while netd works. */
static int ask_netd_with_(struct netd_req *q, const void *payload, size_t plen, int fd,
			  struct netd_rep *rep, int *sfd, const struct overlap *ov)
{
	*sfd = -1;
	struct iovec iov[2] = { { q, sizeof *q }, { (void *)payload, plen } };
	struct msghdr m = { .msg_iov = iov, .msg_iovlen = plen ? 2 : 1 };
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u, v;
	if (fd >= 0) {
		memset(&v, 0, sizeof v);
		m.msg_control = v.buf;
		m.msg_controllen = sizeof v.buf;
		struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &fd, sizeof fd);
	}
	int dns = q->op == NETD_RESOLVE;
	int chan = dns ? g_dchan : g_chan;
	pthread_mutex_t *mu = dns ? &g_dmu : &g_mu;
	pthread_mutex_lock(mu);
	ssize_t n = sendmsg(chan, &m, MSG_NOSIGNAL);
	if (ov)
		*ov->cloexec = guest_fd_cloexec(ov->t, ov->fd);
	if (n == (ssize_t)(sizeof *q + plen)) {
		struct iovec ri = { rep, sizeof *rep };
		memset(&m, 0, sizeof m);
		m.msg_iov = &ri;
		m.msg_iovlen = 1;
		m.msg_control = u.buf;
		m.msg_controllen = sizeof u.buf;
		n = recvmsg(chan, &m, MSG_CMSG_CLOEXEC);
	} else {
		n = -1;
	}
	pthread_mutex_unlock(mu);
	if (n != (ssize_t)sizeof *rep)
		return -ENETUNREACH; /* netd is gone: nothing leaves the sandbox */
	struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
	if (cm && cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS)
		memcpy(sfd, CMSG_DATA(cm), sizeof *sfd);
	return 0;
}

static int ask_netd_with(struct netd_req *q, const void *payload, size_t plen, int fd,
			 struct netd_rep *rep, int *sfd)
{
	return ask_netd_with_(q, payload, plen, fd, rep, sfd, NULL);
}

/* The guest socket's options netd carries over to the socket it makes. */
static void fill_opts(int hfd, int domain, int type, struct netd_req *q)
{
	for (size_t i = 0; i < sizeof copied_opts / sizeof copied_opts[0]; i++) {
		int v = 0;
		socklen_t l = sizeof v;
		if ((copied_opts[i].level == IPPROTO_TCP && type != SOCK_STREAM) ||
		    (copied_opts[i].level == IPPROTO_IPV6 && domain != AF_INET6))
			continue;
		if (getsockopt(hfd, copied_opts[i].level, copied_opts[i].name, &v, &l) < 0)
			continue;
		q->opts[q->nopts].level = copied_opts[i].level;
		q->opts[q->nopts].name = copied_opts[i].name;
		q->opts[q->nopts].val = v;
		q->nopts++;
	}
	for (int k = 0; k < 2; k++) {
		struct timeval tv;
		socklen_t l = sizeof tv;
		if (getsockopt(hfd, SOL_SOCKET, k ? SO_SNDTIMEO : SO_RCVTIMEO, &tv, &l) == 0) {
			q->tmo[k][0] = tv.tv_sec;
			q->tmo[k][1] = tv.tv_usec;
		}
	}
	struct linger lg;
	socklen_t ll = sizeof lg;
	if (getsockopt(hfd, SOL_SOCKET, SO_LINGER, &lg, &ll) == 0 && lg.l_onoff) {
		q->linger[0] = 1;
		q->linger[1] = lg.l_linger;
	}
}

static int ask_netd_fd(struct netd_req *q, struct netd_rep *rep, int *sfd, int sendfd)
{
	return ask_netd_with(q, NULL, 0, sendfd, rep, sfd);
}

static int ask_netd(struct netd_req *q, struct netd_rep *rep, int *sfd)
{
	return ask_netd_with(q, NULL, 0, -1, rep, sfd);
}

/* netd refused the host's own address (netd.c host_local): audited as a
 * denial, as the sentry's own verdict (it makes no socket to ask the
 * routing) had allowed it */
static void host_local_denied(struct sc_call *c, const struct netd_rep *rep)
{
	if (!rep->host_local)
		return;
	snprintf(c->note, sizeof c->note, "egress denied: the host's own address (moat-netd; no rule names it alone)");
	c->deny = 1;
}

/* ask_netd, and while netd works on it, the guest fd's O_CLOEXEC into
 * *cloexec (a procfs read that would otherwise follow netd's answer). */
static int ask_netd_cloexec(struct netd_req *q, struct netd_rep *rep, int *sfd, struct task *t, int fd,
			    int *cloexec)
{
	struct overlap ov = { t, fd, cloexec };
	return ask_netd_with_(q, NULL, 0, -1, rep, sfd, &ov);
}

int netconn_ask(struct netd_req *q, struct netd_rep *rep, int *sfd)
{
	if (g_chan < 0)
		return -ENETUNREACH;
	return ask_netd(q, rep, sfd);
}

void netconn_remember(const char *name, int family, const uint8_t *addr)
{
	struct netpol_addr a;
	memset(&a, 0, sizeof a);
	a.family = family;
	memcpy(a.a, addr, family == AF_INET ? 4 : 16);
	pthread_mutex_lock(&g_pol_mu);
	if (g_pol)
		netpolicy_remember((struct netpolicy *)g_pol, name, &a);
	pthread_mutex_unlock(&g_pol_mu);
}

const struct netpolicy *netconn_policy(void)
{
	return g_pol;
}

void netconn_secret_names(uint32_t mask, char *names, size_t len)
{
	size_t o = 0;
	names[0] = 0;
	for (int i = 0; g_pol && i < g_pol->nrules && o < len - 1; i++) {
		const struct netpol_rule *sr = &g_pol->rules[i];
		if (sr->secret <= 0 || sr->secret > 32 || !(mask & (1u << (sr->secret - 1))))
			continue;
		int seen = 0; /* one NAME may have several rules */
		for (int j = 0; j < i; j++)
			seen |= g_pol->rules[j].secret > 0 && g_pol->rules[j].secret <= 32 &&
				(mask & (1u << (g_pol->rules[j].secret - 1))) &&
				!strcmp(g_pol->rules[j].secret_name, sr->secret_name);
		if (!seen)
			o += (size_t)snprintf(names + o, len - o, "%s%s", o ? "," : "", sr->secret_name);
	}
	if (o >= len)
		names[len - 1] = '\0';
}

/* Wait for a blocking guest's connect on sfd (a worker only; a signal
 * meant for the guest interrupts it as it would the kernel's): 0 or -errno.
 * The worker gives up the lead (pipeline_may_block) only when it must
 * wait: on a loopback or a near destination the handshake is done already. */
static long wait_connected(struct task *t, int sfd)
{
	int waiting = 0;
	long ret = 0;
	for (int first = 1;; first = 0) {
		struct pollfd pf = { sfd, POLLOUT, 0 };
		int pr = poll(&pf, 1, first ? 0 : wait_poll_ms(50));
		if (pr > 0)
			break;
		if (pr < 0 && errno != EINTR) {
			ret = -errno;
			break;
		}
		if (first) {
			/* a wait for a peer: outside the pool's cap */
			pipeline_wait_begin();
			waiting = 1;
			continue;
		}
		if (task_signal_pending(t) > 0) {
			ret = -EINTR;
			break;
		}
	}
	if (waiting)
		pipeline_wait_end();
	if (ret)
		return ret;
	int e = 0;
	socklen_t l = sizeof e;
	if (getsockopt(sfd, SOL_SOCKET, SO_ERROR, &e, &l) < 0)
		e = errno;
	return -e;
}

/* The guest's own connect (to its loopback, an AF_UNIX name...), bind or
 * listen, made by netd on the file pinned here (hfd; netd checks that it is
 * a socket of the guest's namespace), and a disconnect (AF_UNSPEC), which
 * netd makes on any socket (it reaches nothing). A file of the host's
 * namespace under that number (one netd made, or the caller's stdio) gets
 * what the guest's namespace would never give it: ENETUNREACH, EINVAL,
 * EOPNOTSUPP. */
static long on_pinned(struct sc_call *c, const struct net_pending *pc, int hfd)
{
	const char *what = pc->op == NETD_LISTEN ? "listen" : pc->op == NETD_BIND ? "bind" :
			   pc->op == NETD_DISCONNECT ? "disconnect" : "connect";
	int fl = fcntl(hfd, F_GETFL);
	struct netd_req q;
	memset(&q, 0, sizeof q);
	q.op = pc->op;
	q.backlog = pc->backlog;
	q.addrlen = pc->len;
	memcpy(q.addr, pc->addr, pc->len);
	struct netd_rep rep;
	int sfd;
	long r;
	int waiting = 0;
	for (;;) {
		r = ask_netd_fd(&q, &rep, &sfd, hfd);
		if (sfd >= 0)
			close(sfd);
		/* an AF_UNIX listener's backlog is full: netd's call does not
		 * wait (EAGAIN), a blocking guest does, as on Linux */
		if (r < 0 || pc->op != NETD_LOCAL_CONNECT || rep.err != EAGAIN || fl < 0 || (fl & O_NONBLOCK))
			break;
		if (task_signal_pending(c->task) > 0) {
			r = -EINTR;
			break;
		}
		if (!waiting) {
			/* a wait for the listener's accept: outside the
			 * pool's cap */
			pipeline_wait_begin();
			waiting = 1;
		}
		usleep((useconds_t)wait_poll_ms(1) * 1000);
	}
	if (waiting)
		pipeline_wait_end();
	if (r < 0)
		return r;
	if (pc->op == NETD_DISCONNECT)
		return rep.err ? -rep.err : 0;
	if (rep.err == EPERM) {
		/* not a socket of the guest's namespace (netd said so) */
		int domain = 0, type = 0;
		int sock = sock_kind(hfd, &domain, &type) == 0;
		snprintf(c->note, sizeof c->note, "%s refused: a socket of the host's network namespace", what);
		if (!sock)
			return -ENOTSOCK;
		return pc->op == NETD_LISTEN ? -EOPNOTSUPP : pc->op == NETD_BIND ? -EINVAL : -ENETUNREACH;
	}
	snprintf(c->note, sizeof c->note, "%s on the guest's own socket (made by moat-netd on the pinned file)",
		 what);
	if (pc->op == NETD_LOCAL_CONNECT && rep.err == EINPROGRESS && fl >= 0 && !(fl & O_NONBLOCK)) {
		r = wait_connected(c->task, hfd);
		if (r == 0) {
			/* once more, now that it is done: the socket becomes
			 * connected for the kernel (a later connect: EISCONN) */
			if (ask_netd_fd(&q, &rep, &sfd, hfd) == 0 && sfd >= 0)
				close(sfd);
		}
		return r;
	}
	return rep.err ? -rep.err : 0;
}

/* An inet connect's audit: "FD, DEST" for its arguments (as a denial at a
 * stop shows them) and the note "DEST rule N (TEXT)SUFFIX". */
static void connect_note(struct sc_call *c, int fd, const char *dest, int rule, const char *suffix)
{
	snprintf(c->audit_args, sizeof c->audit_args, "%d, %s", fd, dest);
	if (snprintf(c->note, sizeof c->note, "%s rule %d (%.60s)%s", dest, rule,
		     g_pol && rule >= 0 ? g_pol->rules[rule].text : "", suffix) >= (int)sizeof c->note)
		c->note[sizeof c->note - 1] = '\0'; /* cut: fine for an audit note (and using
						       * the result keeps gcc -O0's
						       * -Wformat-truncation quiet) */
}

/* Connected UDP to an allowed destination: moat-netd connects the exact
 * file pinned here (hfd) to the relay's address on the guest's loopback and
 * makes the relay's host-side socket for the destination (netd.c
 * udp_relay). The guest keeps its own socket: write/send/recv on it run
 * natively and stay in its namespace. */
static long udp_connect(struct sc_call *c, const struct net_pending *pc, int hfd, int domain)
{
	struct netd_req q;
	memset(&q, 0, sizeof q);
	q.op = NETD_UDP_CONNECT;
	q.family = domain;
	q.type = SOCK_DGRAM;
	q.addrlen = pc->len;
	memcpy(q.addr, pc->addr, pc->len);
	fill_opts(hfd, domain, SOCK_DGRAM, &q);
	struct netd_rep rep;
	int sfd;
	long r = ask_netd_fd(&q, &rep, &sfd, hfd);
	if (sfd >= 0)
		close(sfd);
	if (r < 0)
		return r;
	host_local_denied(c, &rep);
	if (rep.err == EPERM) {
		/* swapped for a socket of the host's namespace since the check */
		snprintf(c->note, sizeof c->note, "connect refused: a socket of the host's network namespace");
		return -ENETUNREACH;
	}
	if (rep.err == 0) {
		/* getpeername shows the destination, not the relay's end, and
		 * getsockname the host-side socket's address (what the
		 * destination sees), not the guest's loopback */
		struct sockaddr_storage local, peer;
		socklen_t ll = sizeof local, pl = sizeof peer;
		if (getsockname(hfd, (struct sockaddr *)&local, &ll) == 0 &&
		    getpeername(hfd, (struct sockaddr *)&peer, &pl) == 0)
			udp_relay_peer(rep.slot, &local, &peer, pc->addr, pc->len, rep.name,
				       rep.namelen <= sizeof rep.name ? rep.namelen : 0);
	}
	return rep.err ? -rep.err : 0;
}

/* TCP to an allowed destination: moat-netd makes a socket of the host's
 * namespace with the options of the guest's (hfd), connects it without
 * blocking and sends it back; a blocking guest waits here; the socket
 * replaces the guest's fd (ADDFD + SETFD, pipeline.c) and the call answers
 * 0 or EINPROGRESS. pt: the MOAT_PROFILE clock (0: off). */
static long tcp_connect(struct sc_call *c, const struct net_pending *pc, int hfd, int domain, const char *dest,
			unsigned long long pt)
{
	struct task *t = c->task;
	/* What Linux answers on a socket that is connecting or connected
	 * (__inet_stream_connect): EALREADY in SYN_SENT, EISCONN in any state
	 * but CLOSE (a listener too). One getsockopt: its first byte. */
	struct tcp_info ti;
	socklen_t tl = sizeof ti;
	if (getsockopt(hfd, IPPROTO_TCP, TCP_INFO, &ti, &tl) == 0 && tl >= 1) {
		if (ti.tcpi_state == 2 /* SYN_SENT */)
			return -EALREADY;
		if (ti.tcpi_state != 7 /* CLOSE */)
			return -EISCONN;
	}
	int fl = fcntl(hfd, F_GETFL);
	struct netd_req q;
	memset(&q, 0, sizeof q);
	q.family = domain;
	q.type = SOCK_STREAM;
	q.addrlen = pc->len;
	memcpy(q.addr, pc->addr, pc->len);
	pt = ncp_mark(NCP_PIN, pt);
	fill_opts(hfd, domain, SOCK_STREAM, &q);
	pt = ncp_mark(NCP_OPTS, pt);
	struct netd_rep rep;
	int sfd, cloexec = 0;
	/* while netd connects, this worker reads the guest fd's O_CLOEXEC */
	long r = ask_netd_cloexec(&q, &rep, &sfd, t, pc->fd, &cloexec);
	if (r < 0)
		return r;
	pt = ncp_mark(NCP_NETD, pt);
	if (pt)
		ncp_add(NCP_NETD_SELF, (unsigned long long)rep.netd_ns);
	if (rep.err != 0 && rep.err != EINPROGRESS) {
		if (sfd >= 0)
			close(sfd);
		host_local_denied(c, &rep);
		return -rep.err;
	}
	if (sfd < 0)
		return -ENETUNREACH;
	if (rep.secrets && g_pol) {
		/* brokered (--secret): name the secrets, never their values */
		char names[96];
		netconn_secret_names(rep.secrets, names, sizeof names);
		if (snprintf(c->note, sizeof c->note, "%s rule %d brokered (moat-broker): secret %s", dest,
			     pc->rule, names) >= (int)sizeof c->note)
			c->note[sizeof c->note - 1] = '\0';
	}
	int nonblock = fl >= 0 && (fl & O_NONBLOCK);
	if (rep.err == EINPROGRESS && !nonblock) {
		/* a blocking connect: wait here (this worker only) */
		long e = wait_connected(t, sfd);
		if (e) {
			close(sfd);
			return e;
		}
		rep.err = 0;
	}
	pt = ncp_mark(NCP_WAIT, pt);
	/* netd's socket is non-blocking, with no other status flag: the
	 * guest's O_NONBLOCK/O_ASYNC go on as they were */
	if (fl >= 0 && (fl & (O_NONBLOCK | O_ASYNC)) != O_NONBLOCK)
		fcntl(sfd, F_SETFL, (fcntl(sfd, F_GETFL) & ~O_NONBLOCK) | (fl & (O_NONBLOCK | O_ASYNC)));
	c->out_fd = sfd;
	c->out_newfd_at = pc->fd;
	c->out_fd_flags = cloexec ? O_CLOEXEC : 0;
	c->out_fd_value = 1;
	ncp_mark(NCP_PREP, pt);
	return rep.err ? -rep.err : 0;
}

/* An inet address on the pinned socket hfd: the egress policy. */
static long inet_connect(struct sc_call *c, struct net_pending *pc, int hfd, const struct sockaddr_storage *ss,
			 size_t len, unsigned long long pt)
{
	struct netpol_addr a;
	uint16_t port;
	int domain = 0, type = 0;
	size_t keep = ss->ss_family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6);
	if (netpol_from_sockaddr(ss, len, &a, &port) < 0 || len < keep || sock_kind(hfd, &domain, &type) < 0 ||
	    domain != ss->ss_family || (type != SOCK_STREAM && type != SOCK_DGRAM))
		return 1; /* a short address, not a socket, another family...: the kernel answers */
	const char *why;
	int rule;
	int v = connect_verdict(&a, port, type, host_socket(hfd), &rule, &why);
	/* the kernel ignores bytes past the family's sockaddr: keep only those */
	pc->len = (uint32_t)keep;
	memcpy(pc->addr, ss, keep);
	if (v == NCV_LOCAL)
		return 1; /* the guest's own loopback: netd connects the pinned file */
	char dest[96];
	describe(&a, port, type, dest, sizeof dest);
	pc->rule = rule;
	if (v == NCV_DENY) {
		snprintf(c->audit_args, sizeof c->audit_args, "%d, %s", pc->fd, dest);
		snprintf(c->note, sizeof c->note, "egress denied: %s", why ? why : "--net none");
		c->deny = 1;
		return -ENETUNREACH;
	}
	if (type == SOCK_DGRAM) {
		/* connected UDP: the guest's own socket is connected through
		 * the relay on its loopback (netd.c udp_relay) */
		connect_note(c, pc->fd, dest, rule, " via the UDP relay");
		return udp_connect(c, pc, hfd, domain);
	}
	connect_note(c, pc->fd, dest, rule, "");
	return tcp_connect(c, pc, hfd, domain, dest, pt);
}

/* setsockopt, trapped only for the socket-filter options (the table's
 * ARGTRAP rules match the option number at any level). At another level than
 * SOL_SOCKET those numbers are ordinary options (IPV6_V6ONLY is 26): the
 * decision reads only registers, so the call runs natively. At SOL_SOCKET
 * the call is made here, on the pinned file, with the program copied once:
 * on a socket of the host's namespace (moat-netd's UDP socket, whose filter
 * keeps out datagrams from hosts it did not send to, netd.c infilter_allow;
 * or a TCP one) it is EPERM. eBPF programs (SO_ATTACH_BPF and the reuseport
 * eBPF option) need a bpf fd the guest cannot make: EPERM. */
/* ioctl requests of the socket interface (0x8910-0x89ff) and wireless
 * (0x8Bxx) classes. They act on the network namespace of the socket they
 * are made on, and a socket moat-netd connected is of the host's: through
 * one a guest listed the host's interfaces, addresses and MAC addresses
 * (SIOCGIFCONF, SIOCGIFNAME by index, SIOCGIFHWADDR; red team 20). Without
 * moat-netd no socket of the guest's is the host's: native. With it, the
 * read-only requests are made here on a socket of the guest's namespace
 * (the DNS stub's), whatever the fd holds — a check of the fd followed by
 * the native call would be undone by a thread's dup2 —, after the fd is
 * seen to be a socket; the other requests (sets: the guest has no
 * CAP_NET_ADMIN; SIOCETHTOOL, SIOCGARP, wireless...: loopback answers
 * none) are EOPNOTSUPP. The sentry's own filter allows these reads alone
 * (confine_rules.c). */
static int if_read_request(unsigned cmd)
{
	switch (cmd) {
	case SIOCGIFNAME: case SIOCGIFFLAGS: case SIOCGIFADDR: case SIOCGIFDSTADDR:
	case SIOCGIFBRDADDR: case SIOCGIFNETMASK: case SIOCGIFMETRIC: case SIOCGIFMTU:
	case SIOCGIFHWADDR: case SIOCGIFINDEX: case SIOCGIFTXQLEN: case SIOCGIFMAP:
		return 1;
	default:
		return 0;
	}
}

long netconn_if_ioctl(struct sc_call *c)
{
	unsigned cmd = (unsigned)c->args[1];
	if (!netconn_strict() || ((cmd & 0xffffff00u) == 0x8900u && (cmd & 0xff) < 0x10)) {
		c->cont = 1; /* no socket of the host's namespace / per-socket requests */
		return 0;
	}
	cleanup_fd int hfd = sc_getfd_socket(c, (int)c->args[0], ENOTTY);
	if (hfd < 0)
		return hfd;
	if (g_guest_sock < 0 || (cmd != SIOCGIFCONF && !if_read_request(cmd))) {
		snprintf(c->note, sizeof c->note, "interface request not available with --net rules");
		return -EOPNOTSUPP;
	}
	if (cmd == SIOCGIFCONF) {
		struct ifconf ifc;
		if (sc_read_guest(c, c->args[2], &ifc, sizeof ifc) < 0)
			return -EFAULT;
		uint64_t gbuf = (uint64_t)(uintptr_t)ifc.ifc_buf;
		char *buf = NULL;
		if (gbuf) {
			if (ifc.ifc_len < 0)
				return -EINVAL;
			if (ifc.ifc_len > 65536)
				ifc.ifc_len = 65536;
			buf = xcalloc(1, (size_t)ifc.ifc_len + 1);
		}
		ifc.ifc_buf = buf;
		long r = ioctl(g_guest_sock, SIOCGIFCONF, &ifc) < 0 ? -errno : 0;
		if (!r && gbuf && ifc.ifc_len > 0 && sc_write_guest(c, gbuf, buf, (size_t)ifc.ifc_len) < 0)
			r = -EFAULT;
		free(buf);
		ifc.ifc_buf = (char *)(uintptr_t)gbuf;
		if (!r && sc_write_guest(c, c->args[2], &ifc, sizeof ifc) < 0)
			r = -EFAULT;
		return r;
	}
	struct ifreq ifr;
	if (sc_read_guest(c, c->args[2], &ifr, sizeof ifr) < 0)
		return -EFAULT;
	if (ioctl(g_guest_sock, cmd, &ifr) < 0)
		return -errno;
	return sc_write_guest(c, c->args[2], &ifr, sizeof ifr) < 0 ? -EFAULT : 0;
}

/* Any other option (the filter's allow list, the outbound-connection
 * options, runs natively: syscall_table.def). Without moat-netd no socket
 * of the guest's is the host's: native. With it, a socket the guest holds
 * may be one of the host's network namespace (moat-netd's TCP and UDP
 * sockets), where an option runs against the host's stack: TCP_TX_DELAY
 * and the busy-poll options turn host-wide static keys on, TCP_ULP loads
 * and attaches kernel ULPs, IP_TTL/IPV6_UNICAST_HOPS and IP_OPTIONS (a
 * source route) reshape what leaves the host, TCP_MD5SIG/TCP_AO keys,
 * SO_ZEROCOPY, SO_INCOMING_CPU, SO_TXREHASH...; multicast membership and
 * interface options look the host's devices up and a join sends an
 * IGMP/MLD report on its links (red team 26). A check of the fd followed by
 * the native call would be undone by a thread's dup2, so moat-netd makes
 * the call on the file pinned here with the value copied once, and only on
 * a socket of the guest's namespace; on one of the host's it is EPERM
 * (hyg33: an allow list where there was a list of refused options). */
static long setsockopt_other(struct sc_call *c, int level, int name, socklen_t optlen)
{
	if ((!netconn_strict() && !host_sock_inherited_any()) || sc_argallow_match(c->ent, c->args)) {
		c->cont = 1; /* decided on the registers alone: the kernel's */
		return 0;
	}
	if ((int)optlen < 0)
		return -EINVAL;
	if (optlen > NETD_OPTVAL_MAX)
		return -ENOBUFS;
	uint8_t val[NETD_OPTVAL_MAX];
	if (optlen && sc_read_guest(c, c->args[3], val, optlen) < 0)
		return -EFAULT;
	cleanup_fd int hfd = sc_getfd_socket(c, (int)c->args[0], ENOTSOCK);
	if (hfd < 0)
		return hfd;
	if (!netconn_strict()) {
		/* no moat-netd, but the caller handed over a socket of the
		 * host's (inetd-style stdio, hyg35): an option outside the
		 * allow list on a socket of the host's side (an inherited
		 * socket's namespace or the sentry's own) is EPERM, as with
		 * netd. On the guest's own socket it is EPERM too: moat-netd
		 * makes those, no process does here (the sentry's own filter
		 * allows it only the SOL_SOCKET options it sets itself), and a
		 * native run after the check would be undone by a dup2 */
		snprintf(c->note, sizeof c->note,
			 host_sock_ns(hfd) ? "socket option %d/%d refused: a socket of the host's network namespace"
					   : "socket option %d/%d refused: a host socket was handed over and no moat-netd runs",
			 level, name);
		return -EPERM;
	}
	struct netd_req q;
	memset(&q, 0, sizeof q);
	q.op = NETD_SETSOCKOPT;
	q.nopts = 1;
	q.opts[0].level = level;
	q.opts[0].name = name;
	struct netd_rep rep;
	int sfd;
	long r = ask_netd_with(&q, val, optlen, hfd, &rep, &sfd);
	if (sfd >= 0)
		close(sfd);
	if (r < 0)
		return r;
	if (rep.err == EPERM)
		snprintf(c->note, sizeof c->note, "socket option %d/%d refused: a socket of the host's network namespace",
			 level, name);
	return rep.err ? -rep.err : 0;
}

long sys_setsockopt(struct sc_call *c)
{
	int level = (int)c->args[1], name = (int)c->args[2];
	socklen_t optlen = (socklen_t)c->args[4];
	if (level == IPPROTO_IPV6 && (name == IPV6_RTHDR || name == IPV6_2292PKTOPTIONS)) {
		/* A routing header (type 4, segment routing, is open to any
		 * user) re-aims every segment of a socket moat-netd connected:
		 * the payload goes to the first address in it, whatever the
		 * egress policy allowed (red-team finding). Refused on every
		 * socket (on the guest's own, loopback only, it means nothing),
		 * so no fd is checked that a thread could swap meanwhile. */
		snprintf(c->note, sizeof c->note, "IPv6 routing headers are not available");
		return -EPERM;
	}
	if ((level == IPPROTO_UDP || level == IPPROTO_UDPLITE) && name == 100 /* UDP_ENCAP */) {
		/* UDP encapsulation hands a socket's datagrams to a tunnel's
		 * input before its socket filter runs: on a UDP socket
		 * moat-netd sent from (0.0.0.0:PORT of the host's namespace)
		 * ESP-in-UDP from any sender went to the host's IPsec input,
		 * past the inbound filter that admits only replies (red team
		 * 60), and the call turns a host-wide static key on. Refused
		 * on every socket (the guest has no NETLINK_XFRM or AF_KEY to
		 * configure IPsec with), so no fd is checked that a thread
		 * could swap meanwhile. */
		snprintf(c->note, sizeof c->note, "UDP encapsulation is not available");
		return -EPERM;
	}
	if (level == SOL_SOCKET && name == 76 /* SO_PASSPIDFD */) {
		/* SCM_PIDFD: the kernel attaches a pidfd of each message's
		 * sender, whoever it is. On a socket the caller handed over the
		 * sender is a host process: the guest got a pidfd of it (red
		 * team 70), which SO_PEERPIDFD refuses (sys_peercred.c: a pidfd
		 * only of a guest peer). A received message's sender cannot be
		 * checked before recvmsg (FAST) installs the pidfd, so the
		 * option is a kernel's before 6.5 on every socket: no fd is
		 * checked that a thread could swap meanwhile. */
		snprintf(c->note, sizeof c->note, "SO_PASSPIDFD is not available");
		return -ENOPROTOOPT;
	}
	if (level == IPPROTO_TCP && name == 37 /* TCP_TX_DELAY */) {
		/* a delay on every packet a socket sends (fq's EDT): the first
		 * one turns the host-wide static key tcp_tx_delay_enabled on
		 * for good, whatever the socket's namespace, and no client sets
		 * it (a test tool's option). Refused on every socket, so no fd
		 * is checked that a thread could swap meanwhile (hyg33). */
		snprintf(c->note, sizeof c->note, "TCP_TX_DELAY is not available");
		return -EPERM;
	}
	if (level == SOL_SOCKET && (name == SO_BINDTODEVICE || name == SO_BINDTOIFINDEX) &&
	    (netconn_strict() || host_sock_inherited_any())) {
		/* on a socket moat-netd connected (the host's namespace) a
		 * device name or index that exists binds (Linux >= 5.7 lets a
		 * socket bind once without CAP_NET_RAW) and one that does not
		 * is ENODEV: the host's interfaces, one probe each (red team
		 * 20). Refused on every socket, as a kernel before 5.7 refuses
		 * it without CAP_NET_RAW, so no fd is checked that a thread
		 * could swap meanwhile; the guest's own netns has only lo. */
		snprintf(c->note, sizeof c->note, "binding to a device is not available with --net rules");
		return -EPERM;
	}
	if (level == SOL_SOCKET && name == SO_PASSCRED) {
		/* SCM_CREDENTIALS the kernel attaches carry the native ids (one
		 * host uid for every guest user: root-run uid 0), and a sender's
		 * claim is checked on them (a dropped process claimed uid 0):
		 * set natively only while every task's ids are the native ones,
		 * never after (sys_peercred.c passcred_set; ENOPROTOOPT, until
		 * the end of stop 19, stopped Chromium's crashpad at start-up) */
		int v;
		if (optlen < sizeof v)
			return -EINVAL;
		if (sc_read_guest(c, c->args[3], &v, sizeof v) < 0)
			return -EFAULT;
		return passcred_set(c, (int)c->args[0], v != 0);
	}
	if (level == SOL_SOCKET && (name == SO_REUSEPORT || name == SO_REUSEADDR)) {
		/* netreuse.c: SO_REUSEPORT is the sentry's to set (groups are
		 * kept per virtual owner), SO_REUSEADDR is set under its lock */
		int v;
		if (optlen < sizeof v)
			return -EINVAL;
		if (sc_read_guest(c, c->args[3], &v, sizeof v) < 0)
			return -EFAULT;
		cleanup_fd int rfd = sc_getfd(c, (int)c->args[0]);
		if (rfd < 0)
			return rfd;
		if (host_socket(rfd)) /* moat-netd's: as natively before */
			return setsockopt(rfd, SOL_SOCKET, name, &v, sizeof v) < 0 ? -errno : 0;
		return netreuse_setsockopt(c, rfd, name, v);
	}
	if (level != SOL_SOCKET ||
	    !(name == SO_ATTACH_FILTER || name == SO_DETACH_FILTER || name == SO_LOCK_FILTER ||
	      name == SO_ATTACH_BPF || name == SO_ATTACH_REUSEPORT_CBPF || name == SO_ATTACH_REUSEPORT_EBPF ||
	      name == SO_DETACH_REUSEPORT_BPF))
		return setsockopt_other(c, level, name, optlen);
	if (name == SO_ATTACH_BPF || name == SO_ATTACH_REUSEPORT_EBPF) {
		snprintf(c->note, sizeof c->note, "eBPF socket programs are not available");
		return -EPERM;
	}
	cleanup_fd int hfd = sc_getfd_socket(c, (int)c->args[0], ENOTSOCK);
	if (hfd < 0)
		return hfd;
	if (host_socket(hfd)) {
		snprintf(c->note, sizeof c->note, "the filter of a socket of the host's network namespace is moat's");
		return -EPERM;
	}
	if (name == SO_ATTACH_FILTER || name == SO_ATTACH_REUSEPORT_CBPF) {
		struct sock_fprog fp;
		if (optlen != sizeof fp)
			return -EINVAL; /* as Linux: exactly a struct sock_fprog */
		if (sc_read_guest(c, c->args[3], &fp, sizeof fp) < 0)
			return -EFAULT;
		if (fp.len == 0 || fp.len > BPF_MAXINSNS)
			return -EINVAL;
		struct sock_filter *ins = malloc(fp.len * sizeof *ins);
		if (!ins)
			return -ENOMEM;
		long r = 0;
		if (sc_read_guest(c, (uint64_t)(uintptr_t)fp.filter, ins, fp.len * sizeof *ins) < 0)
			r = -EFAULT;
		else {
			struct sock_fprog copy = { fp.len, ins };
			r = setsockopt(hfd, SOL_SOCKET, name, &copy, sizeof copy) < 0 ? -errno : 0;
		}
		free(ins);
		return r;
	}
	/* SO_DETACH_FILTER, SO_DETACH_REUSEPORT_BPF (no value), SO_LOCK_FILTER (an int) */
	int v = 0;
	if (name == SO_LOCK_FILTER) {
		if (optlen < sizeof v)
			return -EINVAL;
		if (sc_read_guest(c, c->args[3], &v, sizeof v) < 0)
			return -EFAULT;
	}
	return setsockopt(hfd, SOL_SOCKET, name, &v, sizeof v) < 0 ? -errno : 0;
}

/* connect, with moat-netd running: a user notification (run.c routes it
 * there; without netd it is a ptrace stop, unixsock.c). The guest holds, or
 * can get, sockets of the host's network namespace, and a thread can dup2
 * one onto the fd number or rewrite the address after any check, so
 * nothing here lets the kernel look at the number or the address again: the
 * address is the pipeline's copy, read once, and the call is made on the
 * file pinned here — by netd, which makes the guest's own connects (its
 * loopback, an AF_UNIX path as its abstract name, any other family) only
 * on a socket of the guest's namespace, and a disconnect (AF_UNSPEC) on
 * any; an inet address meets the egress policy (inet_connect). */
long netconn_connect(struct sc_call *c)
{
	unsigned long long pt = netconn_prof_now();
	int fd = (int)c->args[0];
	uint64_t len = (uint64_t)(int)c->args[2]; /* the kernel's int addrlen (negative: EINVAL) */
	cleanup_fd int hfd = sc_getfd(c, fd);
	if (hfd < 0)
		return -EBADF;
	union {
		struct sockaddr_storage ss;
		struct sockaddr_un un;
	} sa;
	if (len < sizeof(sa_family_t) || len > sizeof sa.ss)
		return -EINVAL; /* as move_addr_to_kernel */
	if (!c->buf[1])
		return -EFAULT;
	memset(&sa, 0, sizeof sa);
	memcpy(&sa, c->buf[1], len);
	struct net_pending pc;
	memset(&pc, 0, sizeof pc);
	pc.fd = fd;
	pc.rule = -1;
	pc.op = NETD_LOCAL_CONNECT;
	pc.len = (uint32_t)len;
	memcpy(pc.addr, &sa, len);
	if (sa.ss.ss_family == AF_UNSPEC) {
		pc.op = NETD_DISCONNECT;
		pc.len = 0;
	} else if (sa.ss.ss_family == AF_INET || sa.ss.ss_family == AF_INET6) {
		long r = inet_connect(c, &pc, hfd, &sa.ss, len, pt);
		if (r != 1)
			return r;
	} else if (sa.ss.ss_family == AF_UNIX && len <= sizeof(struct sockaddr_un)) {
		/* a path resolves in the VFS to its abstract name (the
		 * socket's type picks the name's kind); the kernel checks the
		 * rest on the pinned file */
		int stype = 0;
		socklen_t tl = sizeof stype;
		(void)getsockopt(hfd, SOL_SOCKET, SO_TYPE, &stype, &tl);
		struct sockaddr_un out;
		socklen_t olen = 0;
		int r = unixsock_resolve_connect(c->sb, c->task, stype, &sa.un, (size_t)len, &out, &olen);
		if (r < 0) {
			snprintf(c->note, sizeof c->note, "AF_UNIX path");
			return r;
		}
		if (r == 0) {
			pc.len = olen;
			memcpy(pc.addr, &out, olen);
			snprintf(c->note, sizeof c->note, "abstract name in the guest netns");
		}
	}
	return on_pinned(c, &pc, hfd);
}

/* A bind on the pinned file with a copied address: by moat-netd when it
 * runs, else by the guest's init (init_act_bind); each checks the file is
 * of the guest's namespace. The sentry's allowlist has no bind: a socket
 * it can take from the guest may be the caller's (stdio), of the host's
 * namespace, whose abstract names are the host's. */
static long reuse_dobind(struct sc_call *c, int hfd, const void *sa, size_t len)
{
	if (g_chan < 0)
		return init_act_bind(c->sb, hfd, sa, len);
	struct net_pending pc;
	memset(&pc, 0, sizeof pc);
	pc.op = NETD_BIND;
	pc.rule = -1;
	pc.len = (uint32_t)(len < sizeof pc.addr ? len : sizeof pc.addr);
	memcpy(pc.addr, sa, pc.len);
	return on_pinned(c, &pc, hfd);
}

/* Without moat-netd, a bind stop of a socket that wants SO_REUSEPORT
 * (netreuse.c): the worker binds the pinned file with this copy. Another
 * socket (or one a thread swaps in meanwhile) binds natively: the kernel's
 * flag is never set on an unbound socket, so that bind joins no group. */
int netconn_reuse_bind_stop(struct sandbox *sb, struct task *t, void *regsp, const void *sa, size_t len)
{
	(void)sb;
	arch_regs *regs = regsp;
	if (g_chan >= 0 || !netreuse_active())
		return 1;
	int hfd = task_getfd(t, (int)REG_ARG0(*regs));
	if (hfd < 0)
		return 1;
	int want = netreuse_wanted(hfd);
	close(hfd);
	if (!want || len > sizeof ((struct net_pending *)0)->addr)
		return 1;
	return to_worker(t, regs, MOAT_NET_BIND, NETD_BIND, (int)REG_ARG0(*regs), sa, len, -1, 0);
}

/* An abstract AF_UNIX name bound on a socket of the host's namespace: a
 * name the caller's own programs would connect to (red team 66). Checked
 * and bound on the same pinned file: a thread's dup2 of another socket
 * onto the number meanwhile changes nothing. */
static int host_abstract_bind(int hfd, const struct net_pending *p)
{
	const struct sockaddr_un *un = (const void *)p->addr;
	return unix_inherited_any() && p->len > offsetof(struct sockaddr_un, sun_path) &&
	       un->sun_family == AF_UNIX && !un->sun_path[0] && unix_inherited_host_ns(hfd);
}

/* bind/listen rewritten at their stop (MOAT_SYS_LOADER(MOAT_NET_BIND or
 * MOAT_NET_LISTEN, fd)): made by netd on the file pinned here. */
long netconn_call(struct sc_call *c)
{
	struct net_pending *p = take_keyed(c);
	if (!p || c->args[1] != (uint64_t)p->fd || (p->op != NETD_BIND && p->op != NETD_LISTEN)) {
		free(p);
		return -ENOSYS; /* not from a bind/listen stop: an unknown call */
	}
	struct net_pending pc = *p;
	free(p);
	cleanup_fd int hfd = sc_getfd(c, pc.fd);
	if (hfd < 0)
		return -EBADF;
	if (pc.op == NETD_BIND && g_chan < 0 && host_abstract_bind(hfd, &pc)) {
		snprintf(c->note, sizeof c->note, "abstract name on a socket of the host's network namespace");
		return -EPERM;
	}
	if (pc.op == NETD_BIND && netreuse_wanted(hfd))
		return netreuse_bind(c, hfd, pc.addr, pc.len, reuse_dobind);
	if (pc.op == NETD_BIND && g_chan < 0)
		return reuse_dobind(c, hfd, pc.addr, pc.len); /* wanted no more: plain */
	return on_pinned(c, &pc, hfd);
}

/* The payload of a send, copied once: sendto's buffer, or the iovecs of
 * sendmsg's msghdr / sendmmsg's first one (the iovec array read once). */
static long gather(struct sc_call *c, const struct net_pending *p, uint8_t *out, size_t cap, int partial)
{
	if (p->kind == NETSEND_TO) {
		if (p->buflen > cap && partial)
			return p->buflen && sc_read_guest(c, p->buf, out, cap) < 0 ? -EFAULT : (long)cap;
		if (p->buflen > cap)
			return -EMSGSIZE;
		if (p->buflen && sc_read_guest(c, p->buf, out, p->buflen) < 0)
			return -EFAULT;
		return (long)p->buflen;
	}
	if (p->iovlen > 1024)
		return -EMSGSIZE; /* UIO_MAXIOV */
	if (!p->iovlen)
		return 0;
	struct iovec *v = xcalloc(p->iovlen, sizeof *v);
	long n = 0;
	if (sc_read_guest(c, p->iov, v, p->iovlen * sizeof *v) < 0)
		n = -EFAULT;
	for (uint64_t i = 0; n >= 0 && i < p->iovlen; i++) {
		size_t l = v[i].iov_len;
		if (l > cap - (size_t)n && !partial) {
			n = -EMSGSIZE;
			break;
		}
		if (l > cap - (size_t)n)
			l = cap - (size_t)n; /* a stream takes the first cap bytes */
		if (l && sc_read_guest(c, (uint64_t)(uintptr_t)v[i].iov_base, out + n, l) < 0)
			n = -EFAULT;
		else
			n += (long)l;
	}
	free(v);
	return n;
}

static long netconn_send_call_pc(struct sc_call *c, struct net_pending *pcp);

/* sendmmsg's answer for its first message only, n bytes sent (sendmmsg may
 * send fewer than asked) */
static long mmsg_first_sent(struct sc_call *c, const struct net_pending *pc, long n)
{
	uint32_t ml = (uint32_t)n;
	if (sc_write_guest(c, pc->mmsg + offsetof(struct mmsghdr, msg_len), &ml, sizeof ml) < 0)
		return -EFAULT;
	return 1;
}

/* A blocking socket's send found no room: wait for it (this worker only,
 * outside the pool's cap; *waiting: pipeline_wait_begin made, the caller
 * ends it). 0: try again; -EINTR (a signal for t) or poll's error. */
static long wait_room(struct task *t, int fd, int *waiting)
{
	if (!*waiting) {
		pipeline_wait_begin();
		*waiting = 1;
	}
	struct pollfd pf = { fd, POLLOUT, 0 };
	if (poll(&pf, 1, wait_poll_ms(50)) < 0 && errno != EINTR)
		return -errno;
	return task_signal_pending(t) > 0 ? -EINTR : 0;
}

/* A send on the pinned file hfd, the guest's flags for a datagram (the rest
 * dropped), waiting for room as the guest's blocking socket would (this
 * worker only, outside the pool's cap) */
static long send_blocking(struct sc_call *c, int hfd, const uint8_t *buf, size_t n, int gflags, const void *addr,
			  socklen_t alen)
{
	int fl = fcntl(hfd, F_GETFL);
	int nonblock = (fl >= 0 && (fl & O_NONBLOCK)) || (gflags & MSG_DONTWAIT);
	int sflags = MSG_DONTWAIT | MSG_NOSIGNAL | (gflags & (MSG_CONFIRM | MSG_MORE | MSG_EOR | MSG_OOB));
	int waiting = 0;
	long r;
	for (;;) {
		r = sendto(hfd, buf, n, sflags, addr, alen);
		r = r < 0 ? -errno : r;
		if (r != -EAGAIN || nonblock)
			break;
		if ((r = wait_room(c->task, hfd, &waiting)) < 0)
			break;
	}
	if (waiting)
		pipeline_wait_end();
	return r;
}

/* 1 when the datagram socket fd has a peer (connect) */
static int connected_dgram(int fd)
{
	struct sockaddr_storage ss;
	socklen_t l = sizeof ss;
	return getpeername(fd, (struct sockaddr *)&ss, &l) == 0;
}

/* The worker's half of pinned_send_stop: everything decided on the file it
 * pinned and the copies the stop made, and the send made there. On a socket
 * of the guest's own namespace the sentry sends the copy itself (its
 * loopback; a netlink request); an inet destination a rule allows goes
 * the usual way (netconn_send_call, through moat-netd); a TCP socket
 * ignores the address (MSG_FASTOPEN is refused at the stop) and gets the
 * payload; any other socket of the host's side is refused. */
static long pinned_send(struct sc_call *c, struct net_pending *pc)
{
	cleanup_fd int hfd = sc_getfd(c, pc->fd);
	if (hfd < 0)
		return -EBADF;
	int domain = 0, type = 0;
	long r = sock_kind(hfd, &domain, &type);
	if (r < 0)
		return r; /* ENOTSOCK: a pipe, a file */
	int host = host_socket(hfd) || host_sock_ns(hfd);
	int inet = domain == AF_INET || domain == AF_INET6;
	const void *addr = pc->len ? pc->addr : NULL;
	socklen_t alen = pc->len;
	if (domain == AF_UNIX) {
		snprintf(c->note, sizeof c->note, "the number held another file at the stop");
		return -EAGAIN; /* the stop saw another file there: a guest racing its own call */
	}
	if (inet && type == SOCK_STREAM) {
		addr = NULL, alen = 0; /* TCP ignores it (no fast open here) */
	} else if (inet && type == SOCK_DGRAM && pc->len) {
		struct netpol_addr a;
		uint16_t port;
		sa_family_t fam;
		memcpy(&fam, pc->addr, sizeof fam);
		if (netpol_from_sockaddr(pc->addr, pc->len, &a, &port) < 0) {
			if (host)
				return fam == AF_INET || fam == AF_INET6 ? -EINVAL : -EAFNOSUPPORT;
		} else {
			const char *why = NULL;
			pthread_mutex_lock(&g_pol_mu);
			int rule = g_pol ? netpolicy_match(g_pol, &a, port, NP_UDP, &why) : -1;
			pthread_mutex_unlock(&g_pol_mu);
			const char *special = netpolicy_special(&a);
			static const uint8_t zero[16];
			int local = rule < 0 && special && !host &&
				    (!strcmp(special, "host loopback") || !strcmp(special, "multicast") ||
				     !memcmp(a.a, zero, sizeof zero));
			char dest[96];
			describe(&a, port, SOCK_DGRAM, dest, sizeof dest);
			if (rule >= 0 && g_chan >= 0) {
				/* allowed: moat-netd's way, as from the plain stop */
				pc->rule = rule;
				pc->len = fam == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6);
				return netconn_send_call_pc(c, pc);
			}
			if (!local) {
				snprintf(c->note, sizeof c->note, "egress denied: %.50s: %.50s", dest,
					 why ? why : "--net none");
				return -ENETUNREACH;
			}
			snprintf(c->note, sizeof c->note, "%.60s: the guest's own loopback, sent on the pinned file", dest);
		}
	} else if (host && inet && type == SOCK_DGRAM && !pc->len && connected_dgram(hfd)) {
		/* a sendmsg without a name on a connected datagram socket the
		 * caller handed over: to its peer, the connection as handed over
		 * (as send and write, native); it was EDESTADDRREQ */
		snprintf(c->note, sizeof c->note, "to the inherited socket's own peer, on the pinned file");
	} else if (host) {
		snprintf(c->note, sizeof c->note, "a socket of the host's namespace: no addressed send");
		return inet && type == SOCK_DGRAM ? -EDESTADDRREQ : -EPERM;
	}
	if (host && !(inet && type == SOCK_STREAM) && !(inet && type == SOCK_DGRAM && !pc->len))
		return -ENETUNREACH; /* (cannot happen: decided above) */
	uint8_t *buf = xcalloc(1, NETD_MAX_DGRAM);
	long n = gather(c, pc, buf, NETD_MAX_DGRAM, inet && type == SOCK_STREAM);
	if (n >= 0)
		n = send_blocking(c, hfd, buf, (size_t)n, pc->flags, addr, alen);
	free(buf);
	if (pc->kind == NETSEND_MMSG && n >= 0)
		return mmsg_first_sent(c, pc, n);
	return n;
}

long netconn_send_call(struct sc_call *c)
{
	struct net_pending *p = take_keyed(c);
	if (!p || p->op != NETD_SEND || c->args[1] != (uint64_t)p->fd || c->args[2] != (uint64_t)p->kind ||
	    p->kind < NETSEND_TO || p->kind > NETSEND_MMSG) {
		free(p);
		return -ENOSYS; /* not from a send stop: an unknown call */
	}
	struct net_pending pc = *p;
	free(p);
	if (pc.rule == NETSEND_PINNED)
		return pinned_send(c, &pc);
	return netconn_send_call_pc(c, &pc);
}

/* An inet datagram send the stop decided on: an allowed destination (through
 * moat-netd) or a send on a moat-netd UDP socket (netconn_send_stop) */
static long netconn_send_call_pc(struct sc_call *c, struct net_pending *pcp)
{
	struct task *t = c->task;
	struct net_pending pc = *pcp;
	struct netpol_addr a;
	uint16_t port = 0;
	char dest[96];
	if (pc.len) {
		netpol_from_sockaddr(pc.addr, pc.len, &a, &port);
		describe(&a, port, SOCK_DGRAM, dest, sizeof dest);
		if (snprintf(c->note, sizeof c->note, "%s rule %d (%.60s)", dest, pc.rule,
			     g_pol && pc.rule >= 0 ? g_pol->rules[pc.rule].text : "") >= (int)sizeof c->note)
			c->note[sizeof c->note - 1] = '\0';
	} else {
		snprintf(c->note, sizeof c->note, "moat-netd UDP socket, no address: never connected by moat (EDESTADDRREQ)");
	}
	int hfd = sc_getfd(c, pc.fd);
	if (hfd < 0)
		return -EBADF;
	int domain = 0, type = 0;
	long r = sock_kind(hfd, &domain, &type);
	if (r < 0 || type != SOCK_DGRAM || (domain != AF_INET && domain != AF_INET6)) {
		close(hfd);
		return r < 0 ? r : -EOPNOTSUPP; /* the fd changed since the stop */
	}
	int host = host_socket(hfd);
	uint8_t *buf = xcalloc(1, NETD_MAX_DGRAM);
	long n = gather(c, &pc, buf, NETD_MAX_DGRAM, 0);
	if (n < 0) {
		free(buf);
		close(hfd);
		return n;
	}
	int fl = fcntl(hfd, F_GETFL);
	int nonblock = (fl >= 0 && (fl & O_NONBLOCK)) || (pc.flags & MSG_DONTWAIT);
	/* a few flags mean something for a datagram; the rest are dropped */
	int sflags = MSG_DONTWAIT | MSG_NOSIGNAL | (pc.flags & MSG_CONFIRM);
	int sfd = -1, wait_fd = hfd, waiting = 0;
	for (;;) {
		if (!pc.len) {
			/* no address on a moat-netd UDP socket: it is never
			 * connected by moat (and shut for writing) */
			r = host ? -EDESTADDRREQ : -EOPNOTSUPP;
			break;
		} else {
			struct netd_req q;
			memset(&q, 0, sizeof q);
			q.op = NETD_SEND;
			q.family = domain;
			q.type = SOCK_DGRAM;
			q.flags = sflags;
			q.addrlen = pc.len;
			memcpy(q.addr, pc.addr, pc.len);
			if (!host && sfd < 0)
				fill_opts(hfd, domain, SOCK_DGRAM, &q); /* netd makes one */
			struct netd_rep rep;
			int got = -1;
			r = ask_netd_with(&q, buf, (size_t)n, host ? hfd : sfd, &rep, &got);
			if (r == 0) {
				if (got >= 0 && sfd < 0 && !host) {
					sfd = got; /* the guest's new socket */
					wait_fd = sfd;
				} else if (got >= 0) {
					close(got);
				}
				r = rep.err ? -rep.err : rep.sent;
				host_local_denied(c, &rep);
			}
		}
		if (r != -EAGAIN || nonblock)
			break;
		if ((r = wait_room(t, wait_fd, &waiting)) < 0)
			break;
	}
	if (waiting)
		pipeline_wait_end();
	free(buf);
	if (sfd >= 0) {
		/* the guest's socket becomes moat-netd's, whatever the send said */
		if (fl >= 0)
			fcntl(sfd, F_SETFL, (fcntl(sfd, F_GETFL) & ~O_NONBLOCK) | (fl & (O_NONBLOCK | O_ASYNC)));
		c->out_fd = sfd;
		c->out_newfd_at = pc.fd;
		c->out_fd_flags = guest_fd_cloexec(t, pc.fd) ? O_CLOEXEC : 0;
		c->out_fd_value = 1;
	}
	close(hfd);
	if (pc.kind == NETSEND_MMSG && r >= 0)
		return mmsg_first_sent(c, &pc, r);
	return r;
}

/* MOAT_TEST_CONFINEMENT: what a compromised sentry would ask moat-netd for.
 * netd decides on its own copy of the policy, so these must be refused. */
void netconn_selftest(void)
{
	if (g_chan < 0)
		return;
	/* 0.0.0.0 and :: are the host's loopback for netd's sockets (red
	 * team 79): refused under a rule naming them (allow=0.0.0.0:80) too */
	static const char *const dests[] = { "169.254.169.254", "10.0.0.1", "127.0.0.1", "0.0.0.0", "::" };
	for (size_t i = 0; i < sizeof dests / sizeof dests[0]; i++) {
		struct netd_req q;
		memset(&q, 0, sizeof q);
		struct sockaddr_in in = { .sin_family = AF_INET, .sin_port = htons(80) };
		struct sockaddr_in6 in6 = { .sin6_family = AF_INET6, .sin6_port = htons(80) };
		if (inet_pton(AF_INET, dests[i], &in.sin_addr) == 1) {
			q.family = AF_INET;
			q.addrlen = sizeof in;
			memcpy(q.addr, &in, sizeof in);
		} else {
			inet_pton(AF_INET6, dests[i], &in6.sin6_addr);
			q.family = AF_INET6;
			q.addrlen = sizeof in6;
			memcpy(q.addr, &in6, sizeof in6);
		}
		q.type = SOCK_STREAM;
		struct netd_rep rep;
		int sfd = -1;
		int r = ask_netd(&q, &rep, &sfd);
		/* netd's policy decision, whatever the network then answered */
		int allowed = r == 0 && (sfd >= 0 || rep.rule >= 0);
		fprintf(stderr, "confinement-probe netd_%s: %s (%s)\n", dests[i], allowed ? "ALLOWED" : "refused",
			strerror(r < 0 ? -r : rep.err));
		if (sfd >= 0)
			close(sfd);
	}
	/* an option with a host-wide effect (UDP_ENCAP 0: a pass-through
	 * encapsulation, which still turns the host's static key on), on the
	 * guest's own socket that netd would otherwise set it on (red team 79) */
	if (g_guest_sock >= 0) {
		struct netd_req q;
		memset(&q, 0, sizeof q);
		q.op = NETD_SETSOCKOPT;
		q.nopts = 1;
		q.opts[0].level = IPPROTO_UDP;
		q.opts[0].name = 100; /* UDP_ENCAP */
		int val = 0, sfd = -1;
		struct netd_rep rep;
		long r = ask_netd_with(&q, &val, sizeof val, g_guest_sock, &rep, &sfd);
		fprintf(stderr, "confinement-probe netd_setsockopt_udp_encap: %s (%s)\n",
			r == 0 && !rep.err ? "ALLOWED" : "refused", strerror(r < 0 ? (int)-r : rep.err));
		if (sfd >= 0)
			close(sfd);
	}
}
