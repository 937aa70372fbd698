/* sentry/netconn.c - connect() of AF_INET/AF_INET6 sockets: the egress policy.
 *
 * connect is class EXEC (a ptrace stop; AF_UNIX path names need the register
 * rewrite, unixsock.c). At the stop the tracer reads the address once
 * (unixsock_stop) and, for an inet address on an inet socket:
 *   - the guest's own loopback (127/8, ::1) with no rule naming it: native,
 *     untouched (the guest's network namespace has only its own loopback);
 *   - a destination no rule allows: skipped with ENETUNREACH (what the
 *     guest's empty namespace answers), audited with the reason;
 *   - an allowed destination: the address is kept as the thread's pending
 *     connect and the call is rewritten to MOAT_SYS_LOADER(MOAT_NET_CONNECT,
 *     fd), which the guest's filter (re-run by the kernel after the tracer
 *     changed the call) sends to a worker: netconn_call. The address is never
 *     read from guest memory again.
 * netconn_call asks moat-netd (netd.c) for a connected socket of the same
 * family and type, with the guest socket's options copied, waits for the
 * connection if the guest's socket is blocking, and replaces the guest's fd
 * with it (SECCOMP_IOCTL_NOTIF_ADDFD + SETFD, O_CLOEXEC as the guest's fd
 * had it). The guest's kernel then sends and receives natively. A
 * non-blocking socket answers EINPROGRESS at once and the guest polls the
 * replaced fd. netd checks the destination again against its own copy of the
 * policy: the sentry asks, netd decides.
 */
#include "sentry/netd.h"
#include "sentry/netpolicy.h"
#include "sentry/sentry.h"
#include "kernel/task.h"
#include "loader/loader_abi.h"
#include "platform/arch.h"
#include "syscalls/sc.h"
#include "common/util.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

static const struct netpolicy *g_pol;
static int g_chan = -1;
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static int g_dchan = -1; /* RESOLVE requests: netd's DNS channel */
static pthread_mutex_t g_dmu = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t g_pol_mu = PTHREAD_MUTEX_INITIALIZER; /* DNS answers change g_pol */

struct net_pending {
	int fd;
	uint32_t len;
	uint8_t addr[28];
	int rule;
};

/* The guest's network namespace, by cookie (SO_NETNS_COOKIE; 0 = unknown). */
static uint64_t g_guest_netns;

#ifndef SO_NETNS_COOKIE
#define SO_NETNS_COOKIE 71
#endif

static uint64_t netns_cookie(int fd)
{
	uint64_t c = 0;
	socklen_t l = sizeof c;
	return getsockopt(fd, SOL_SOCKET, SO_NETNS_COOKIE, &c, &l) == 0 ? c : 0;
}

void netconn_set_guest_netns(int fd)
{
	g_guest_netns = netns_cookie(fd);
}

/* A socket moat-netd made (the host's network namespace), which the guest
 * holds after an allowed connect: its "loopback" is the host's. With netd
 * running and the guest's namespace unknown, every socket counts as one. */
static int host_socket(int hfd)
{
	if (g_chan < 0)
		return 0; /* no netd: every socket is the guest's */
	uint64_t c = netns_cookie(hfd);
	return !g_guest_netns || !c || c != g_guest_netns;
}

void netconn_init(const struct netpolicy *pol, int chan)
{
	g_pol = pol;
	g_chan = chan;
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

int netconn_stop(struct sandbox *sb, struct task *t, void *regsp, const void *sa, size_t len)
{
	arch_regs *regs = regsp;
	struct netpol_addr a;
	uint16_t port;
	if (netpol_from_sockaddr(sa, len, &a, &port) < 0)
		return 1; /* short address: the kernel answers EINVAL */
	int fd = (int)REG_ARG0(*regs);
	int hfd = task_getfd(t, fd);
	if (hfd < 0)
		return 1; /* the kernel answers EBADF */
	int domain = 0, type = 0;
	int r = sock_kind(hfd, &domain, &type);
	int host = r == 0 && host_socket(hfd);
	close(hfd);
	sa_family_t fam;
	memcpy(&fam, sa, sizeof fam);
	if (r < 0 || domain != fam || (type != SOCK_STREAM && type != SOCK_DGRAM))
		return 1; /* not a socket, mismatched family...: the kernel answers */
	const char *why = NULL;
	pthread_mutex_lock(&g_pol_mu);
	int rule = g_pol ? netpolicy_match(g_pol, &a, port, type == SOCK_STREAM ? NP_TCP : NP_UDP,
					   &why) :
			   -1;
	pthread_mutex_unlock(&g_pol_mu);
	const char *special = netpolicy_special(&a);
	static const uint8_t zero[16];
	if (rule < 0 && special && !host &&
	    (!strcmp(special, "host loopback") || !memcmp(a.a, zero, sizeof zero)))
		return 1; /* the guest's own loopback (0.0.0.0 and :: mean the local host) */
	/* a socket moat-netd made (disconnected with connect(AF_UNSPEC)) is
	 * in the host's namespace: its loopback is the host's, never native */
	char dest[96], args[200], note[128];
	describe(&a, port, type, dest, sizeof dest);
	snprintf(args, sizeof args, "%d, %s", fd, dest);
	if (rule >= 0 && type != SOCK_STREAM) {
		/* no UDP egress (netd.c): a connected host UDP socket could be
		 * re-aimed anywhere with sendto/sendmsg */
		rule = -1;
		why = "UDP egress is not forwarded (DNS: the stub)";
	}
	if (rule < 0 || g_chan < 0) {
		REG_SYSNO(*regs) = -1; /* skip */
		REG_RET(*regs) = -ENETUNREACH;
		ptrace(PTRACE_SETREGS, t->tid, 0, regs);
		snprintf(note, sizeof note, "egress denied: %s", why ? why : "--net none");
		audit_event(sb->audit, sb, t, t->tid, "connect", args, DEC_DENY, -ENETUNREACH, note);
		return 0;
	}
	/* the kernel ignores bytes past the family's sockaddr: keep only those */
	size_t keep = fam == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6);
	if (len < keep || keep > sizeof ((struct net_pending *)0)->addr)
		return 1;
	struct net_pending *p = xcalloc(1, sizeof *p);
	p->fd = fd;
	p->len = (uint32_t)keep;
	memcpy(p->addr, sa, keep);
	p->rule = rule;
	pthread_mutex_lock(&t->lock);
	free(t->net_pending);
	t->net_pending = p;
	pthread_mutex_unlock(&t->lock);
	REG_SYSNO(*regs) = MOAT_SYS_LOADER;
	REG_ARG0(*regs) = MOAT_NET_CONNECT;
	REG_ARG1(*regs) = (uint64_t)fd;
	ptrace(PTRACE_SETREGS, t->tid, 0, regs);
	return 0;
}

int netconn_send_stop(struct sandbox *sb, struct task *t, void *regsp, const void *sa, size_t len,
		      const char *call, int flags)
{
	arch_regs *regs = regsp;
	struct netpol_addr a;
	uint16_t port;
	if (netpol_from_sockaddr(sa, len, &a, &port) < 0)
		return 1; /* short address: the kernel answers EINVAL */
	int fd = (int)REG_ARG0(*regs);
	int hfd = task_getfd(t, fd);
	if (hfd < 0)
		return 1;
	int domain = 0, type = 0;
	int r = sock_kind(hfd, &domain, &type);
	int host = r == 0 && host_socket(hfd);
	close(hfd);
	sa_family_t fam;
	memcpy(&fam, sa, sizeof fam);
	if (r < 0 || domain != fam)
		return 1; /* the kernel answers */
	/* A stream socket ignores the address, except with MSG_FASTOPEN on an
	 * unconnected one, which connects to it: on the guest's own sockets that
	 * stays in its namespace, on moat-netd's it would be an unchecked
	 * connect from the host's. */
	if (type != SOCK_DGRAM && !(host && (flags & MSG_FASTOPEN)))
		return 1;
	const char *why = NULL;
	pthread_mutex_lock(&g_pol_mu);
	int rule = g_pol ? netpolicy_match(g_pol, &a, port, NP_UDP, &why) : -1;
	pthread_mutex_unlock(&g_pol_mu);
	const char *special = netpolicy_special(&a);
	static const uint8_t zero[16];
	if (rule < 0 && special && !host &&
	    (!strcmp(special, "host loopback") || !strcmp(special, "multicast") ||
	     !memcmp(a.a, zero, sizeof zero)))
		return 1; /* the guest's own loopback (the DNS stub is there; its
			   * multicast routes lead only to lo) */
	if (type != SOCK_DGRAM)
		why = "TCP fast open on a moat-netd socket";
	else if (rule >= 0)
		why = "UDP egress is not forwarded (DNS: the stub)";
	char dest[96], args[200], note[128];
	describe(&a, port, type, dest, sizeof dest);
	snprintf(args, sizeof args, "%d, %s", fd, dest);
	REG_SYSNO(*regs) = -1; /* skip */
	REG_RET(*regs) = -ENETUNREACH;
	ptrace(PTRACE_SETREGS, t->tid, 0, regs);
	snprintf(note, sizeof note, "egress denied: %s", why ? why : "--net none");
	audit_event(sb->audit, sb, t, t->tid, call, args, DEC_DENY, -ENETUNREACH, note);
	return 0;
}

int netconn_listen_stop(struct sandbox *sb, struct task *t, void *regsp)
{
	arch_regs *regs = regsp;
	int fd = (int)REG_ARG0(*regs);
	int hfd = task_getfd(t, fd);
	if (hfd < 0)
		return 1;
	int domain = 0, type = 0;
	int host = sock_kind(hfd, &domain, &type) == 0 && (domain == AF_INET || domain == AF_INET6) &&
		   host_socket(hfd);
	close(hfd);
	if (!host)
		return 1;
	char args[64];
	snprintf(args, sizeof args, "%d, %d", fd, (int)REG_ARG1(*regs));
	REG_SYSNO(*regs) = -1; /* skip */
	REG_RET(*regs) = -EOPNOTSUPP;
	ptrace(PTRACE_SETREGS, t->tid, 0, regs);
	audit_event(sb->audit, sb, t, t->tid, "listen", args, DEC_DENY, -EOPNOTSUPP,
		    "ingress denied: listen on a moat-netd socket (the host's network namespace)");
	return 0;
}

int netconn_fastopen_stop(struct sandbox *sb, struct task *t, void *regsp, const char *call)
{
	arch_regs *regs = regsp;
	int fd = (int)REG_ARG0(*regs);
	int hfd = task_getfd(t, fd);
	if (hfd < 0)
		return 1;
	int host = host_socket(hfd);
	close(hfd);
	if (!host)
		return 1; /* the guest's own socket: its own namespace */
	char args[64];
	snprintf(args, sizeof args, "%d, MSG_FASTOPEN", fd);
	REG_SYSNO(*regs) = -1; /* skip */
	REG_RET(*regs) = -ENETUNREACH;
	ptrace(PTRACE_SETREGS, t->tid, 0, regs);
	audit_event(sb->audit, sb, t, t->tid, call, args, DEC_DENY, -ENETUNREACH,
		    "egress denied: TCP fast open on a moat-netd socket");
	return 0;
}

/* connect on a socket moat-netd made, before anything else looks at the
 * address: nothing of it runs natively with an address the kernel would
 * read again from guest memory (another thread may rewrite it after this
 * stop, and lengths or families the other stops pass through untouched,
 * e.g. a sockaddr_in in a 128-byte buffer, would connect from the host's
 * namespace unchecked). AF_UNSPEC (disconnect) runs natively with the length
 * cut to the family alone, so whatever the memory holds by then is either a
 * disconnect or EINVAL; AF_INET/AF_INET6 go through the policy with the copy
 * read here (netconn_stop: moat-netd or ENETUNREACH); anything else is
 * answered here. 1: not such a socket (the caller goes on), 0: decided. */
int netconn_host_connect_stop(struct sandbox *sb, struct task *t, void *regsp)
{
	arch_regs *regs = regsp;
	int fd = (int)REG_ARG0(*regs);
	int hfd = task_getfd(t, fd);
	if (hfd < 0)
		return 1; /* the kernel answers EBADF */
	int domain = 0, type = 0;
	int host = sock_kind(hfd, &domain, &type) == 0 && (domain == AF_INET || domain == AF_INET6) &&
		   host_socket(hfd);
	close(hfd);
	if (!host)
		return 1;
	uint64_t aptr = REG_ARG1(*regs);
	uint64_t len = REG_ARG2(*regs);
	long err;
	union {
		struct sockaddr_in6 in6;
		struct sockaddr_in in;
		sa_family_t fam;
	} a;
	memset(&a, 0, sizeof a);
	size_t want = len < sizeof a ? (size_t)len : sizeof a;
	if (len > sizeof(struct sockaddr_storage) || len < sizeof(sa_family_t)) {
		err = -EINVAL;
	} else if (guest_read(t->tid, aptr, &a, want) < 0) {
		err = -EFAULT;
	} else if (a.fam == AF_UNSPEC) {
		REG_ARG2(*regs) = sizeof(sa_family_t);
		ptrace(PTRACE_SETREGS, t->tid, 0, regs);
		return 0; /* native disconnect */
	} else if (a.fam == domain) {
		if (netconn_stop(sb, t, regs, &a, want) == 0)
			return 0;
		err = -EINVAL; /* short for its family */
	} else {
		err = -EAFNOSUPPORT;
	}
	REG_SYSNO(*regs) = -1; /* skip */
	REG_RET(*regs) = (uint64_t)err;
	ptrace(PTRACE_SETREGS, t->tid, 0, regs);
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
	{ IPPROTO_IPV6, IPV6_V6ONLY },
};

static int ask_netd(struct netd_req *q, struct netd_rep *rep, int *sfd)
{
	*sfd = -1;
	struct iovec iov = { q, sizeof *q };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	int dns = q->op == NETD_RESOLVE;
	int chan = dns ? g_dchan : g_chan;
	pthread_mutex_t *mu = dns ? &g_dmu : &g_mu;
	pthread_mutex_lock(mu);
	ssize_t n = sendmsg(chan, &m, MSG_NOSIGNAL);
	if (n == (ssize_t)sizeof *q) {
		iov.iov_base = rep;
		iov.iov_len = sizeof *rep;
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

int netconn_ask(struct netd_req *q, struct netd_rep *rep, int *sfd)
{
	if (g_chan < 0)
		return -ENETUNREACH;
	return ask_netd(q, rep, sfd);
}

void netconn_remember(int rule, int family, const uint8_t *addr)
{
	struct netpol_addr a;
	memset(&a, 0, sizeof a);
	a.family = family;
	memcpy(a.a, addr, family == AF_INET ? 4 : 16);
	pthread_mutex_lock(&g_pol_mu);
	if (g_pol)
		netpolicy_remember((struct netpolicy *)g_pol, rule, &a);
	pthread_mutex_unlock(&g_pol_mu);
}

const struct netpolicy *netconn_policy(void)
{
	return g_pol;
}

long netconn_call(struct sc_call *c)
{
	struct task *t = c->task;
	pthread_mutex_lock(&t->lock);
	struct net_pending *p = t->net_pending;
	t->net_pending = NULL;
	pthread_mutex_unlock(&t->lock);
	if (!p || c->args[1] != (uint64_t)p->fd) {
		free(p);
		return -ENOSYS; /* not from a connect stop: an unknown call */
	}
	struct net_pending pc = *p;
	free(p);
	struct netpol_addr a;
	uint16_t port = 0;
	netpol_from_sockaddr(pc.addr, pc.len, &a, &port);
	int hfd = sc_getfd(c, pc.fd);
	if (hfd < 0)
		return -EBADF;
	int domain = 0, type = 0;
	long r = sock_kind(hfd, &domain, &type);
	char dest[96];
	describe(&a, port, type, dest, sizeof dest);
	if (snprintf(c->note, sizeof c->note, "%s rule %d (%.60s)", dest, pc.rule,
		     g_pol && pc.rule >= 0 ? g_pol->rules[pc.rule].text : "") >= (int)sizeof c->note)
		c->note[sizeof c->note - 1] = '\0'; /* cut: fine for an audit note (and using
						       * the result keeps gcc -O0's
						       * -Wformat-truncation quiet) */
	if (r < 0 || (type != SOCK_STREAM && type != SOCK_DGRAM) ||
	    (domain != AF_INET && domain != AF_INET6)) {
		close(hfd);
		return r < 0 ? r : -EAFNOSUPPORT; /* the fd changed since the stop */
	}
	if (type == SOCK_STREAM) {
		struct sockaddr_storage ss;
		socklen_t sl = sizeof ss;
		struct tcp_info ti;
		socklen_t tl = sizeof ti;
		if (getpeername(hfd, (struct sockaddr *)&ss, &sl) == 0) {
			close(hfd);
			return -EISCONN;
		}
		if (getsockopt(hfd, IPPROTO_TCP, TCP_INFO, &ti, &tl) == 0 && ti.tcpi_state == 2 /* SYN_SENT */) {
			close(hfd);
			return -EALREADY;
		}
	}
	int fl = fcntl(hfd, F_GETFL);
	struct netd_req q;
	memset(&q, 0, sizeof q);
	q.family = domain;
	q.type = type;
	q.addrlen = pc.len;
	memcpy(q.addr, pc.addr, pc.len);
	for (size_t i = 0; i < sizeof copied_opts / sizeof copied_opts[0]; i++) {
		int v = 0;
		socklen_t l = sizeof v;
		if ((copied_opts[i].level == IPPROTO_TCP && type != SOCK_STREAM) ||
		    (copied_opts[i].level == IPPROTO_IPV6 && domain != AF_INET6))
			continue;
		if (getsockopt(hfd, copied_opts[i].level, copied_opts[i].name, &v, &l) < 0)
			continue;
		q.opts[q.nopts].level = copied_opts[i].level;
		q.opts[q.nopts].name = copied_opts[i].name;
		q.opts[q.nopts].val = v;
		q.nopts++;
	}
	close(hfd);
	struct netd_rep rep;
	int sfd;
	r = ask_netd(&q, &rep, &sfd);
	if (r < 0)
		return r;
	if (rep.err != 0 && rep.err != EINPROGRESS) {
		if (sfd >= 0)
			close(sfd);
		return -rep.err;
	}
	if (sfd < 0)
		return -ENETUNREACH;
	int nonblock = fl >= 0 && (fl & O_NONBLOCK);
	if (rep.err == EINPROGRESS && !nonblock) {
		/* a blocking connect: wait here (this worker only), a signal
		 * meant for the guest interrupts it as it would the kernel's */
		for (;;) {
			struct pollfd pf = { sfd, POLLOUT, 0 };
			int pr = poll(&pf, 1, 50);
			if (pr > 0)
				break;
			if (pr < 0 && errno != EINTR) {
				close(sfd);
				return -errno;
			}
			if (task_signal_pending(t) > 0) {
				close(sfd);
				return -EINTR;
			}
		}
		int e = 0;
		socklen_t l = sizeof e;
		if (getsockopt(sfd, SOL_SOCKET, SO_ERROR, &e, &l) < 0)
			e = errno;
		if (e) {
			close(sfd);
			return -e;
		}
		rep.err = 0;
	}
	if (fl >= 0)
		fcntl(sfd, F_SETFL, (fcntl(sfd, F_GETFL) & ~O_NONBLOCK) | (fl & (O_NONBLOCK | O_ASYNC)));
	c->out_fd = sfd;
	c->out_newfd_at = pc.fd;
	c->out_fd_flags = guest_fd_cloexec(t, pc.fd) ? O_CLOEXEC : 0;
	c->out_fd_value = 1;
	return rep.err ? -rep.err : 0;
}

/* MOAT_TEST_CONFINEMENT: what a compromised sentry would ask moat-netd for.
 * netd decides on its own copy of the policy, so these must be refused. */
void netconn_selftest(void)
{
	if (g_chan < 0)
		return;
	static const char *const dests[] = { "169.254.169.254", "10.0.0.1", "127.0.0.1" };
	for (size_t i = 0; i < sizeof dests / sizeof dests[0]; i++) {
		struct netd_req q;
		memset(&q, 0, sizeof q);
		struct sockaddr_in in = { .sin_family = AF_INET, .sin_port = htons(80) };
		inet_pton(AF_INET, dests[i], &in.sin_addr);
		q.family = AF_INET;
		q.type = SOCK_STREAM;
		q.addrlen = sizeof in;
		memcpy(q.addr, &in, sizeof in);
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
}
