/* sentry/netd.c - moat-netd: the one sandbox process that makes outbound
 * connections.
 *
 * The sentry has no socket/connect on its allowlist, and a compromised sentry
 * must not be a way to reach arbitrary destinations. So outbound sockets are
 * made by moat-netd, forked by the sentry right after it gave up host
 * privilege (the sandbox's unprivileged host uid, the sentry's user and mount
 * namespaces, the host's network namespace), before the guest exists. It
 * keeps only its end of a SOCK_SEQPACKET socketpair (every other fd closed),
 * holds its own copy of the compiled egress policy, dies with the sentry
 * (PDEATHSIG, and EOF on the channel), and confines itself with a seccomp
 * allowlist: socket(AF_INET|AF_INET6, SOCK_STREAM|SOCK_DGRAM) (the type's
 * flags bits allowed), connect, bind/listen, setsockopt/getsockopt,
 * shutdown/getsockname (UDP), recvmsg/sendmsg on the channels, sendto, close,
 * fcntl, exit; epoll_ctl(ADD) and pread on its count of live sockets
 * (live_room). No file opens after set-up, no exec, no accept (with --secret: accept4 for
 * a brokered connection's loopback pair, and sendmsg on moat-broker's
 * channel).
 *
 * --secret (broker_pair): a TCP connect to a destination a secret rule holds
 * is connected upstream here as any other, but the guest gets one end of a
 * loopback pair netd makes, and moat-broker (netbroker.c) gets the other end
 * and the upstream socket; it relays, swapping the placeholder for the value
 * in request headers. netd never holds a value.
 *
 * It also makes the guest's own connect (to its loopback), bind and listen
 * of inet sockets, on the exact file the sentry pinned, after checking
 * itself that the file is a socket of the guest's network namespace
 * (on_guest_socket). The sentry cannot let those run natively after a check
 * at its ptrace stop: the kernel looks the fd number up again, and another
 * guest thread may have dup2()ed a socket netd made onto it meanwhile.
 *
 * UDP (NETD_SEND): one datagram, checked here against netd's own policy and
 * sent from netd's copy of the address. The socket the guest gets is bound
 * to an ephemeral port (SO_REUSEPORT, a reuseport program that picks it for
 * every datagram) and shut for writing, so no native send on it goes
 * anywhere, whatever address a racing thread writes or whichever fd number
 * it dup2()s it to; datagrams leave from a twin bound to the same port and
 * closed right after. A connected UDP socket would have to be writable
 * (write/send run natively): CONNECT of a datagram socket is refused, and
 * UDP_CONNECT connects the guest's own socket to the relay instead
 * (udp_relay_connect, below); the relay passes its destinations' ICMP errors
 * on with two raw ICMP sockets of the guest's namespace that moat-init made
 * (relay_icmp: sendto only).
 *
 * CONNECT: {family, type, protocol, destination, options}. netd checks the
 * destination against its policy (a compromised sentry can only ask for
 * destinations the policy allows), makes a non-blocking socket, applies the
 * allowlisted socket options, connects, and answers {err, rule} with the
 * socket (SCM_RIGHTS) when err is 0 or EINPROGRESS. Waiting for a blocking
 * guest's connection is the sentry worker's job (poll on the socket), so netd
 * never blocks. DNS questions come on a second channel: one may be in flight
 * (its own UDP socket, 2 s deadline) while connects are answered, so a slow
 * upstream no longer stalls them.
 */
#include "sentry/netd.h"
#include "sentry/sentry.h"
#include "sentry/broker.h"
#include "sentry/netpolicy.h"
#include "sentry/dnswire.h"
#include "common/log.h"
#include "common/util.h"

#include "common/sanitize.h"
#include <errno.h>
#include <fcntl.h>
#include <sys/epoll.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <poll.h>
#include <sys/random.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SO_NETNS_COOKIE
#define SO_NETNS_COOKIE 71
#endif
#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#endif

/* Options that act on the whole host whatever the socket's namespace (a
 * host-wide static key turned on for good: UDP_ENCAP's udp_encap_needed_key,
 * TCP_TX_DELAY's tcp_tx_delay_enabled), which the sentry refuses to the
 * guest on every socket (netconn.c sys_setsockopt) and never asks for: EPERM
 * here too, so that a compromised sentry cannot have them set on a socket
 * of the guest's namespace (red team 79; its own filter allows setsockopt
 * only at SOL_SOCKET). */
static int option_hostwide(int level, int name)
{
	return ((level == IPPROTO_UDP || level == IPPROTO_UDPLITE) && name == 100 /* UDP_ENCAP */) ||
	       (level == IPPROTO_TCP && name == 37 /* TCP_TX_DELAY */);
}

/* Options a guest may have set before connect that netd copies. */
int netd_option_allowed(int level, int name)
{
	if (level == SOL_SOCKET)
		return name == SO_REUSEADDR || name == SO_KEEPALIVE || name == SO_RCVBUF ||
		       name == SO_SNDBUF || name == SO_REUSEPORT;
	if (level == IPPROTO_TCP)
		return name == TCP_NODELAY || name == TCP_KEEPIDLE || name == TCP_KEEPINTVL ||
		       name == TCP_KEEPCNT;
	if (level == IPPROTO_IPV6)
		return name == IPV6_V6ONLY || name == IPV6_TCLASS;
	if (level == IPPROTO_IP)
		return name == IP_TOS;
	return 0;
}

/* The sockets of the host's network namespace the guest holds (TCP connects,
 * brokered ends, UDP egress sockets) take ports of the host's one ephemeral
 * range, which the host's own programs and every other sandbox share: bounded
 * only by RLIMIT_NOFILE times the guest's processes, a guest took them all
 * (red team 41: 100 UDP sockets each sending once, or 100 connects, against a
 * range of 100 ports; the host's bind(0) was EADDRINUSE, its UDP connect
 * EAGAIN, another sandbox's datagram EADDRINUSE). Each socket netd hands out
 * is added to an epoll instance of netd's (events 0: never waited on), whose
 * entry the kernel drops when the last reference to the file goes — the
 * guest closed it everywhere — and netd holds no reference of its own. Its
 * fdinfo, re-read when the count of hand-outs reaches the maximum, lists
 * the live ones ("tfd:" lines). At the maximum a connect is EADDRNOTAVAIL (Linux's
 * answer for an exhausted range) and a datagram needing a new socket ENOBUFS
 * (Linux's autobind says EAGAIN, which the sentry waits on for a blocking
 * socket). Without that fdinfo (or epoll) nothing is bounded. */
#define NETD_LIVE_MAX 4096
static int g_live_ep = -1, g_live_info = -1;
static int g_live_max = NETD_LIVE_MAX, g_live_n;

/* procdir: the sentry's /proc, opened before the guest's init exists (the
 * init mounts its own over /proc in this mount namespace, where netd has no
 * pid: /proc/self was ENOENT when that came first) */
static void live_init(int procdir)
{
	const char *e = getenv("MOAT_TEST_NETD_SOCKETS_MAX");
	/* lower only (red team 91: a test knob in moat's environment never
	 * lifts a bound; before, any positive value) */
	if (e && atoi(e) > 0 && atoi(e) < NETD_LIVE_MAX)
		g_live_max = atoi(e);
	if (procdir < 0)
		return;
	g_live_ep = epoll_create1(EPOLL_CLOEXEC);
	if (g_live_ep < 0)
		return;
	char path[64];
	snprintf(path, sizeof path, "%d/fdinfo/%d", (int)getpid(), g_live_ep);
	g_live_info = openat(procdir, path, O_RDONLY | O_CLOEXEC);
	if (g_live_info < 0) {
		close(g_live_ep);
		g_live_ep = -1;
	}
}

/* A TCP socket's port outlives the guest's last reference to it: the side
 * that closes first keeps it in TIME_WAIT for 60 s, an orphan with data in
 * flight in FIN_WAIT1/2, CLOSING or LAST_ACK (red team 49: with at most 16
 * in the guest's hands at a time, 150 connect+close loops against a range of
 * 100 ports left all 100 in TIME_WAIT, the host's bind(0) EADDRINUSE for a
 * minute). So each TCP hand-out's local address is kept (its epoll entry's
 * data is its slot + 1); one whose entry is gone still counts while a bind
 * of a fresh socket to that address (no SO_REUSEADDR: any owner conflicts)
 * is EADDRINUSE, asked at most once a second per slot, only at the maximum. */
struct live_tcp {
	union {
		struct sockaddr sa;
		struct sockaddr_in in;
		struct sockaddr_in6 in6;
	} a;
	socklen_t len;
	unsigned char used, held;   /* a slot; its port held at the last probe */
	unsigned gen;               /* the last fdinfo read that listed it */
	struct timespec probed;
};
static struct live_tcp g_ltcp[NETD_LIVE_MAX];
static unsigned g_live_gen;

/* the port of a released TCP socket still held? (a bind probe, cached 1 s) */
static int live_tcp_held(struct live_tcp *t, const struct timespec *now)
{
	if (t->probed.tv_sec && (now->tv_sec - t->probed.tv_sec) * 1000000000L + (now->tv_nsec - t->probed.tv_nsec) <
					1000000000L)
		return t->held;
	t->probed = *now;
	int p = socket(t->a.sa.sa_family, SOCK_STREAM | SOCK_CLOEXEC, IPPROTO_TCP);
	if (p < 0)
		return t->held = 1; /* cannot tell: keep counting it */
	t->held = bind(p, &t->a.sa, t->len) < 0 && errno == EADDRINUSE;
	close(p);
	return t->held;
}

/* one "tfd:" line of the epoll's fdinfo: mark its TCP slot seen */
static void live_line(const char *l)
{
	const char *d = strstr(l, " data:");
	if (!d)
		return;
	unsigned long long v = strtoull(d + 6, NULL, 16);
	if (v >= 1 && v <= NETD_LIVE_MAX && g_ltcp[v - 1].used)
		g_ltcp[v - 1].gen = g_live_gen;
}

/* the live sockets (the "tfd:" lines of the epoll's fdinfo) and the TCP
 * ports released sockets still hold, or -1 */
static int live_count(void)
{
	static char buf[16384], line[256];
	int n = 0;
	size_t ll = 0;
	off_t off = 0;
	g_live_gen++;
	for (;;) {
		ssize_t r = pread(g_live_info, buf, sizeof buf, off);
		if (r < 0)
			return -1;
		if (r == 0)
			break;
		off += r;
		for (ssize_t i = 0; i < r; i++) {
			if (buf[i] != '\n') {
				if (ll < sizeof line - 1)
					line[ll++] = buf[i];
				continue;
			}
			line[ll] = 0;
			if (!strncmp(line, "tfd:", 4)) {
				n++;
				live_line(line);
			}
			ll = 0;
		}
	}
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	for (int i = 0; i < NETD_LIVE_MAX; i++) {
		struct live_tcp *t = &g_ltcp[i];
		if (!t->used || t->gen == g_live_gen)
			continue;
		if (live_tcp_held(t, &now))
			n++;
		else
			t->used = 0;
	}
	return n;
}

/* room for one more host-namespace socket in the guest's hands? */
static int live_room(void)
{
	if (g_live_ep < 0)
		return 1;
	if (g_live_n < g_live_max)
		return 1;
	int n = live_count();
	if (n < 0)
		return 1;
	g_live_n = n;
	return n < g_live_max;
}

/* tcp: a TCP socket (its local address kept, live_tcp) */
static void live_add(int s, int tcp)
{
	if (g_live_ep < 0)
		return;
	struct epoll_event ev = { .events = 0 };
	if (tcp) {
		static int hint;
		for (int k = 0; k < NETD_LIVE_MAX; k++) {
			int i = (hint + k) % NETD_LIVE_MAX;
			struct live_tcp *t = &g_ltcp[i];
			if (t->used)
				continue;
			t->len = sizeof t->a;
			if (getsockname(s, &t->a.sa, &t->len) < 0 || t->len > sizeof t->a)
				break;
			t->used = 1;
			t->held = 0;
			t->probed = (struct timespec){ 0, 0 };
			t->gen = g_live_gen;
			ev.data.u64 = (uint64_t)i + 1;
			hint = i + 1;
			break;
		}
	}
	if (epoll_ctl(g_live_ep, EPOLL_CTL_ADD, s, &ev) == 0)
		g_live_n++;
	else if (ev.data.u64)
		g_ltcp[ev.data.u64 - 1].used = 0;
}

static int confine_netd(int chan, int dchan, int bchan)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_KILL_PROCESS);
	if (!ctx)
		return -1;
	static const int plain[] = {
		SCMP_SYS(connect), SCMP_SYS(setsockopt), SCMP_SYS(getsockopt), SCMP_SYS(close),
		/* bind/listen: on a guest socket the sentry pinned, after the
		 * cookie check. UDP egress: its sockets are bound (an ephemeral
		 * port), shut for writing, and sent from by a transient twin on
		 * the same port */
		SCMP_SYS(bind), SCMP_SYS(listen), SCMP_SYS(shutdown), SCMP_SYS(getsockname),
		SCMP_SYS(fcntl), SCMP_SYS(exit), SCMP_SYS(exit_group), SCMP_SYS(rt_sigreturn),
		SCMP_SYS(brk), SCMP_SYS(munmap), SCMP_SYS(write), /* diagnostics on stderr */
		/* DNS: its own UDP socket to the host's nameserver */
		SCMP_SYS(sendto), SCMP_SYS(recvfrom), SCMP_SYS(poll), SCMP_SYS(getrandom),
		SCMP_SYS(clock_gettime),
	};
	int rc = 0;
	for (size_t i = 0; i < ARRAY_SIZE(plain) && !rc; i++)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, plain[i], 0);
	const int fams[] = { AF_INET, AF_INET6 }, types[] = { SOCK_STREAM, SOCK_DGRAM };
	for (int f = 0; f < 2 && !rc; f++)
		for (int ty = 0; ty < 2 && !rc; ty++) {
			struct scmp_arg_cmp c[2] = {
				{ .arg = 0, .op = SCMP_CMP_EQ, .datum_a = (scmp_datum_t)fams[f] },
				{ .arg = 1, .op = SCMP_CMP_MASKED_EQ, .datum_a = 0xf,
				  .datum_b = (scmp_datum_t)types[ty] },
			};
			rc = seccomp_rule_add_array(ctx, SCMP_ACT_ALLOW, SCMP_SYS(socket), 2, c);
		}
	/* the channel only */
	struct scmp_arg_cmp on_chan = { .arg = 0, .op = SCMP_CMP_EQ, .datum_a = (scmp_datum_t)chan };
	if (!rc)
		rc = seccomp_rule_add_array(ctx, SCMP_ACT_ALLOW, SCMP_SYS(recvmsg), 1, &on_chan);
	if (!rc)
		rc = seccomp_rule_add_array(ctx, SCMP_ACT_ALLOW, SCMP_SYS(sendmsg), 1, &on_chan);
	struct scmp_arg_cmp on_dchan = { .arg = 0, .op = SCMP_CMP_EQ, .datum_a = (scmp_datum_t)dchan };
	if (!rc)
		rc = seccomp_rule_add_array(ctx, SCMP_ACT_ALLOW, SCMP_SYS(recvmsg), 1, &on_dchan);
	if (!rc)
		rc = seccomp_rule_add_array(ctx, SCMP_ACT_ALLOW, SCMP_SYS(sendmsg), 1, &on_dchan);
	if (bchan >= 0) {
		/* --secret: a brokered connection's loopback pair (its own
		 * listener on 127.0.0.1:0, closed once the one connection it
		 * made is accepted) and the message that hands it, with the
		 * upstream socket, to moat-broker */
		struct scmp_arg_cmp on_bchan = { .arg = 0, .op = SCMP_CMP_EQ, .datum_a = (scmp_datum_t)bchan };
		if (!rc)
			rc = seccomp_rule_add_array(ctx, SCMP_ACT_ALLOW, SCMP_SYS(sendmsg), 1, &on_bchan);
		if (!rc)
			rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(accept4), 0);
	}
	if (g_live_ep >= 0 && g_live_info >= 0) {
		/* the count of the host-namespace sockets the guest holds
		 * (live_room): ADD on its own epoll, a re-read of its fdinfo */
		struct scmp_arg_cmp on_ep[2] = {
			{ .arg = 0, .op = SCMP_CMP_EQ, .datum_a = (scmp_datum_t)g_live_ep },
			{ .arg = 1, .op = SCMP_CMP_EQ, .datum_a = EPOLL_CTL_ADD },
		};
		struct scmp_arg_cmp on_info = { .arg = 0, .op = SCMP_CMP_EQ, .datum_a = (scmp_datum_t)g_live_info };
		if (!rc)
			rc = seccomp_rule_add_array(ctx, SCMP_ACT_ALLOW, SCMP_SYS(epoll_ctl), 2, on_ep);
		if (!rc)
			rc = seccomp_rule_add_array(ctx, SCMP_ACT_ALLOW, SCMP_SYS(pread64), 1, &on_info);
	}
	/* anonymous mmap, sanitizer, no_new_privs, load */
	return moat_filter_finish(ctx, rc);
}

/* The host's first nameserver, read from /etc/resolv.conf at set-up. */
static struct sockaddr_storage g_ns;
static socklen_t g_nslen;

static void load_nameserver(void)
{
	FILE *f = fopen("/etc/resolv.conf", "re");
	char line[512];
	while (f && fgets(line, sizeof line, f)) {
		char ip[256];
		if (sscanf(line, " nameserver %255s", ip) != 1)
			continue;
		struct sockaddr_in *in = (struct sockaddr_in *)&g_ns;
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&g_ns;
		memset(&g_ns, 0, sizeof g_ns);
		if (inet_pton(AF_INET, ip, &in->sin_addr) == 1) {
			in->sin_family = AF_INET;
			in->sin_port = htons(53);
			g_nslen = sizeof *in;
			break;
		}
		if (inet_pton(AF_INET6, ip, &in6->sin6_addr) == 1) {
			in6->sin6_family = AF_INET6;
			in6->sin6_port = htons(53);
			g_nslen = sizeof *in6;
			break;
		}
	}
	if (f)
		fclose(f);
}

/* One DNS question in flight (the DNS channel serves one at a time; the
 * connect channel is served meanwhile). */
struct dns_q {
	int sock;                 /* -1: none in flight */
	struct netd_req q;
	struct netd_rep rep;
	uint8_t pkt[512];
	int n;
	int tries;
	long long deadline_ms;
};

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Start asking the host's nameserver for q->name (A or AAAA): 1 = in flight
 * (d->sock), 0 = answered already in d->rep (not covered, or failed). */
static int resolve_start(struct netpolicy *pol, struct dns_q *d)
{
	const struct netd_req *q = &d->q;
	struct netd_rep *rep = &d->rep;
	memset(rep, 0, sizeof *rep);
	d->sock = -1;
	rep->rcode = 2; /* SERVFAIL unless we get an answer */
	char name[256];
	memcpy(name, q->name, sizeof name);
	name[255] = 0;
	rep->rule = netpolicy_match_name(pol, name);
	if (rep->rule < 0) {
		rep->rcode = 3;
		return 0;
	}
	if (!g_nslen || (q->qtype != 1 && q->qtype != 28))
		return 0;
	uint16_t id;
	if (getrandom(&id, sizeof id, 0) != sizeof id)
		return 0;
	int n = dns_build_query(d->pkt, (int)sizeof d->pkt, id, name, q->qtype);
	if (!n)
		return 0;
	const uint8_t *pkt = d->pkt;
	d->n = n;
	int s = socket(g_ns.ss_family, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (s < 0)
		return 0;
	if (connect(s, (struct sockaddr *)&g_ns, g_nslen) < 0 || sendto(s, pkt, (size_t)n, 0, NULL, 0) != n) {
		close(s);
		return 0;
	}
	d->sock = s;
	d->tries = 0;
	d->deadline_ms = now_ms() + 2000;
	return 1;
}

/* An address of the answer: netd remembers it for the rule (or refuses it:
 * a denied range) and returns it. */
struct remember_ctx {
	struct netpolicy *pol;
	const char *name;
	struct netd_rep *rep;
};

static void remember_addr(void *arg, const struct netpol_addr *a, uint32_t ttl)
{
	struct remember_ctx *c = arg;
	struct netd_rep *rep = c->rep;
	if (netpolicy_remember(c->pol, c->name, a) < 0) {
		rep->nrefused++; /* a denied range: DNS rebinding */
	} else if (rep->naddr < NETDNS_MAX_ADDRS) {
		memcpy(rep->addrs[rep->naddr++], a->a, 16);
		if (ttl < rep->ttl)
			rep->ttl = ttl;
	}
}

/* d->sock is readable: 1 = answered (d->rep filled, socket closed), 0 = not
 * our answer yet. netd remembers the allowed addresses for the rule in its
 * own policy. */
static int resolve_read(struct netpolicy *pol, struct dns_q *d)
{
	uint8_t ans[1500];
	const uint8_t *pkt = d->pkt;
	int n = d->n;
	struct netd_rep *rep = &d->rep;
	char name[256];
	memcpy(name, d->q.name, sizeof name);
	name[255] = 0;
	int got = (int)recvfrom(d->sock, ans, sizeof ans, 0, NULL, NULL);
	if (got < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	if (got >= 0 && !dns_answers_query(ans, got, pkt, n)) {
		if (++d->tries < 8)
			return 0; /* not our question: keep waiting */
		got = -1;
	}
	close(d->sock);
	d->sock = -1;
	if (got < 0)
		return 1; /* SERVFAIL */
	rep->rcode = ans[3] & 0x0f;
	rep->ttl = 300;
	struct remember_ctx c = { pol, name, rep };
	dns_answer_addrs(ans, got, n, d->q.qtype, remember_addr, &c);
	return 1;
}

static int send_rep(int chan, struct netd_rep *rep)
{
	struct iovec iov = { rep, sizeof *rep };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
	return sendmsg(chan, &m, MSG_NOSIGNAL) < 0 ? -1 : 0;
}

/* The DNS channel has a request: answer it now, or start it (d->sock). */
static int dns_request(int dchan, struct netpolicy *pol, struct dns_q *d)
{
	struct iovec qi = { &d->q, sizeof d->q };
	struct msghdr qm = { .msg_iov = &qi, .msg_iovlen = 1 };
	ssize_t n = recvmsg(dchan, &qm, MSG_CMSG_CLOEXEC);
	if (n == 0)
		return -1;
	if (n < 0)
		return errno == EINTR ? 0 : -1;
	if (n != (ssize_t)sizeof d->q || d->q.op != NETD_RESOLVE) {
		struct netd_rep bad = { .err = EINVAL, .rule = -1 };
		return send_rep(dchan, &bad);
	}
	if (resolve_start(pol, d))
		return 0;
	return send_rep(dchan, &d->rep);
}

/* Network namespace cookies: the host's (netd's own) and the guest's (from
 * the one GUESTNS request, before the guest exists; 0 = not yet). */
static uint64_t g_host_ns, g_guest_ns;

static uint64_t ns_cookie(int fd)
{
	uint64_t c = 0;
	socklen_t l = sizeof c;
	return getsockopt(fd, SOL_SOCKET, SO_NETNS_COOKIE, &c, &l) == 0 ? c : 0;
}

/* GUESTNS, LOCAL_CONNECT, BIND, LISTEN: an errno for the reply. The call is
 * made on the very file the sentry pinned (fd), and only on a socket of the
 * guest's own network namespace: there nothing leaves the guest's loopback,
 * whatever the address. A socket of the host's namespace (one netd made, or
 * one the caller handed the guest as stdio) is never touched here. */
static int on_guest_socket(const struct netd_req *q, ssize_t n, int fd)
{
	if (n != (ssize_t)sizeof *q || fd < 0)
		return EINVAL;
	uint64_t c = ns_cookie(fd);
	if (q->op == NETD_GUESTNS) {
		if (g_guest_ns || !c || c == g_host_ns)
			return EPERM; /* once, and never the host's */
		g_guest_ns = c;
		return 0;
	}
	if (!g_guest_ns || !c || c != g_guest_ns)
		return EPERM;
	if (q->op == NETD_LISTEN)
		return listen(fd, q->backlog) < 0 ? errno : 0;
	if (q->addrlen > sizeof q->addr)
		return EINVAL;
	if (q->op == NETD_BIND)
		return bind(fd, (const struct sockaddr *)q->addr, q->addrlen) < 0 ? errno : 0;
	/* LOCAL_CONNECT: never block here (the sentry's worker waits for a
	 * blocking guest); the file's status flags are put back at once */
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0)
		return errno;
	if (!(fl & O_NONBLOCK) && fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return errno;
	int e = connect(fd, (const struct sockaddr *)q->addr, q->addrlen) < 0 ? errno : 0;
	if (e == EINPROGRESS && !(fl & O_NONBLOCK)) {
		/* a blocking guest: on its loopback the handshake is usually
		 * done already; a second connect then answers it and makes
		 * the socket connected for the kernel too (a later connect is
		 * EISCONN, as after a blocking one) */
		struct pollfd pf = { fd, POLLOUT, 0 };
		if (poll(&pf, 1, 0) == 1)
			e = connect(fd, (const struct sockaddr *)q->addr, q->addrlen) < 0 ? errno : 0;
	}
	if (!(fl & O_NONBLOCK))
		(void)fcntl(fd, F_SETFL, fl);
	return e;
}

/* Is fd a UDP socket (of either inet family)? */
static int udp_socket(int fd)
{
	int v = 0;
	socklen_t l = sizeof v;
	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &v, &l) < 0 || v != SOCK_DGRAM)
		return 0;
	l = sizeof v;
	if (getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &v, &l) < 0 || v != IPPROTO_UDP)
		return 0;
	l = sizeof v;
	return getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &v, &l) == 0 && (v == AF_INET || v == AF_INET6);
}

/* A fresh socket's value of each option the sentry may send, per family and
 * type, read once (the first socket of its kind): an option the guest's
 * socket holds at that value is not set again (a connect's critical path
 * had one setsockopt per copied option, ~10, each taking the socket lock).
 * A host sysctl changed during the sandbox's life (tcp_keepalive_time...)
 * is not seen: a guest value equal to the old default then stays the new
 * one. */
#define NETD_DEF_MAX 16
static struct optdef {
	int family, type, n;
	struct { int level, name, val, known; } o[NETD_DEF_MAX];
} g_optdef[4];

static int opt_default(int s, int family, int type, int level, int name, int *val)
{
	socklen_t l;
	struct optdef *d = &g_optdef[(family == AF_INET6) * 2 + (type == SOCK_DGRAM)];
	d->family = family, d->type = type;
	for (int i = 0; i < d->n; i++)
		if (d->o[i].level == level && d->o[i].name == name) {
			*val = d->o[i].val;
			return d->o[i].known ? 0 : -1;
		}
	int v = 0;
	l = sizeof v;
	int known = getsockopt(s, level, name, &v, &l) == 0;
	if (d->n < NETD_DEF_MAX) {
		d->o[d->n].level = level, d->o[d->n].name = name, d->o[d->n].val = v, d->o[d->n].known = known;
		d->n++;
	}
	*val = v;
	return known ? 0 : -1;
}

/* fresh: s is a new socket, of q's family and type (its defaults are
 * those of opt_default); else (a connected one) only SO_RCVBUF/SO_SNDBUF
 * equal to its own value are skipped. */
static void apply_opts_(int s, const struct netd_req *q, int fresh)
{
	/* timeouts and linger (not int-valued): a blocking recv on the new
	 * socket must time out as it would have on the guest's */
	for (int k = 0; k < 2; k++) {
		struct timeval tv = { (time_t)q->tmo[k][0], (suseconds_t)q->tmo[k][1] };
		if ((tv.tv_sec || tv.tv_usec) && tv.tv_sec >= 0 && tv.tv_usec >= 0 && tv.tv_usec < 1000000)
			(void)setsockopt(s, SOL_SOCKET, k ? SO_SNDTIMEO : SO_RCVTIMEO, &tv, sizeof tv);
	}
	if (q->linger[0]) {
		struct linger lg = { 1, q->linger[1] };
		(void)setsockopt(s, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
	}
	for (uint32_t i = 0; i < q->nopts; i++) {
		if (!netd_option_allowed(q->opts[i].level, q->opts[i].name))
			continue;
		int val = q->opts[i].val, def = 0;
		int buf = q->opts[i].level == SOL_SOCKET && (q->opts[i].name == SO_RCVBUF || q->opts[i].name == SO_SNDBUF);
		socklen_t dl = sizeof def;
		if (fresh ? opt_default(s, q->family, q->type, q->opts[i].level, q->opts[i].name, &def) == 0 && def == val :
			    buf && getsockopt(s, SOL_SOCKET, q->opts[i].name, &def, &dl) == 0 && def == val)
			continue; /* as the socket has it already. SO_RCVBUF/SO_SNDBUF:
				   * setting a buffer size turns TCP's autotuning off, so
				   * one equal to the default was never set by the guest */
		if (buf)
			val /= 2; /* getsockopt shows twice what was set (the kernel
				   * doubles it for overhead) */
		(void)setsockopt(s, q->opts[i].level, q->opts[i].name, &val, sizeof val);
	}
}

static void apply_opts(int s, const struct netd_req *q)
{
	apply_opts_(s, q, 1);
}

static uint8_t g_dgram[NETD_MAX_DGRAM];

#include <linux/filter.h>

/* The UDP socket the guest holds: bound to an ephemeral port of the host's
 * namespace, then shut for writing; its twins share the port (SO_REUSEPORT,
 * udp_twin_send). It is bound *without* SO_REUSEPORT, which is set only
 * afterwards: Linux's ephemeral port search skips every port in use except
 * those of SO_REUSEPORT sockets of the same uid, so a socket bound to port
 * 0 with SO_REUSEPORT could land in the group of another guest socket of
 * this netd (or of another sandbox of the same user) — and the group's
 * program hands every datagram to that other socket: the reply was lost
 * (`probe_udp loss ... keep`: 17-24 of 1000 sockets). The socket or
 * -errno. */
static int udp_guest_socket(int family, const struct netd_req *q)
{
	int s = socket(family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_UDP);
	if (s < 0)
		return -errno;
	apply_opts(s, q);
	int zero = 0, one = 1;
	struct sockaddr_storage any;
	memset(&any, 0, sizeof any);
	any.ss_family = (sa_family_t)family;
	/* ENOTCONN (it is not connected), but the send side is shut all the
	 * same; anything else: never hand it out */
	if (shutdown(s, SHUT_WR) < 0 && errno != ENOTCONN) {
		int e = errno;
		close(s);
		return -e;
	}
	/* a port of its own (the guest's SO_REUSEPORT, copied above, off for
	 * the bind), then open to its twins */
	if (setsockopt(s, SOL_SOCKET, SO_REUSEPORT, &zero, sizeof zero) < 0 ||
	    bind(s, (struct sockaddr *)&any, family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6)) < 0 ||
	    setsockopt(s, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one) < 0) {
		int e = errno;
		close(s);
		return -e;
	}
	return s;
}

/* ---- the inbound filter of the guest's UDP sockets ----
 * A moat-netd UDP socket is bound to a port of the host's namespace: any host
 * that can reach that port could send the guest datagrams. A classic BPF
 * socket filter on it keeps only datagrams whose source is a destination the
 * socket sent to (address and port; the last NETD_MAX_PEERS of them), kept
 * per socket (SO_COOKIE) for the last NETD_MAX_FILTERED sockets: a socket
 * that falls out of the table starts again from its next destination. The
 * sentry refuses the guest's own SO_ATTACH/DETACH/LOCK_FILTER on a socket of
 * the host's namespace (netconn.c sys_setsockopt). */
#define NETD_MAX_PEERS 64
#define NETD_MAX_FILTERED 256
struct inpeer {
	int v6;        /* 0: IPv4 (or v4-mapped), 1: IPv6 */
	uint32_t a[4]; /* the address, host order words */
	uint16_t port; /* host order */
};
static struct infilter {
	uint64_t cookie; /* 0: free */
	int n, next;
	struct inpeer p[NETD_MAX_PEERS];
	long long used;
	int rprog; /* its reuseport group has its program (udp_twin_send) */
	int twin;  /* the socket that sends for it (udp_twin_send), or -1 */
	uint16_t twin_port;
} g_infilter[NETD_MAX_FILTERED];

/* A twin leaves its group for good. A plain close loses a datagram now and
 * then: udp_lib_unhash takes the socket out of the reuseport group first and
 * out of the hash chain after, and a lookup that finds it in between (it is
 * first in the chain: the last bound) gets no group, so the socket itself
 * receives the datagram as it closes (the lost reply of `bench/net.sh udp`,
 * about one in 30,000 round trips; `probe_udp burst`). Bound first to an
 * interface no datagram comes in on, it scores below the guest's socket
 * for every lookup (compute_score: a device mismatch is -1), so the guest's
 * socket, and through it the group, is chosen whatever the twin's state. */
static void twin_retire(int t)
{
	int nowhere = 0x7fffffff; /* no such interface: no check made, none matches */
	(void)setsockopt(t, SOL_SOCKET, SO_BINDTOIFINDEX, &nowhere, sizeof nowhere);
	close(t);
}

static int inpeer_of(const void *addr, socklen_t len, struct inpeer *o)
{
	memset(o, 0, sizeof *o);
	const struct sockaddr *sa = addr;
	if (sa->sa_family == AF_INET && len >= sizeof(struct sockaddr_in)) {
		const struct sockaddr_in *s4 = addr;
		o->a[0] = ntohl(s4->sin_addr.s_addr);
		o->port = ntohs(s4->sin_port);
		return 0;
	}
	if (sa->sa_family == AF_INET6 && len >= sizeof(struct sockaddr_in6)) {
		const struct sockaddr_in6 *s6 = addr;
		o->port = ntohs(s6->sin6_port);
		if (IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr)) {
			uint32_t w;
			memcpy(&w, &s6->sin6_addr.s6_addr[12], 4);
			o->a[0] = ntohl(w);
			return 0;
		}
		o->v6 = 1;
		for (int i = 0; i < 4; i++) {
			uint32_t w;
			memcpy(&w, &s6->sin6_addr.s6_addr[4 * i], 4);
			o->a[i] = ntohl(w);
		}
		return 0;
	}
	return -1;
}

/* The program: X = the IP version; per peer a block that falls through to
 * the next one on a mismatch and accepts on a match; at the end, drop. The
 * filter sees the datagram from its UDP header (source port at 0) and the
 * IP header at SKF_NET_OFF. */
static int infilter_attach(int s, const struct infilter *f)
{
	static struct sock_filter prog[3 + NETD_MAX_PEERS * 13 + 1];
	unsigned n = 0;
	/* one instruction; a jump's false branch goes to the next block, which
	 * starts at nextb */
#define INS(code, k) (prog[n] = (struct sock_filter)BPF_STMT(code, k), n++)
#define MISS(k, nextb) (prog[n] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, k, 0, (uint8_t)((nextb) - n - 1)), n++)
	INS(BPF_LD | BPF_B | BPF_ABS, (uint32_t)SKF_NET_OFF);
	INS(BPF_ALU | BPF_RSH | BPF_K, 4);
	INS(BPF_MISC | BPF_TAX, 0);
	for (int i = 0; i < f->n; i++) {
		const struct inpeer *p = &f->p[i];
		int words = p->v6 ? 4 : 1;
		unsigned nextb = n + 2 + 2 * (unsigned)words + 3;
		INS(BPF_MISC | BPF_TXA, 0);
		MISS(p->v6 ? 6u : 4u, nextb);
		for (int w = 0; w < words; w++) {
			INS(BPF_LD | BPF_W | BPF_ABS, (uint32_t)SKF_NET_OFF + (p->v6 ? 8u + 4u * (unsigned)w : 12u));
			MISS(p->a[w], nextb);
		}
		INS(BPF_LD | BPF_H | BPF_ABS, 0);
		MISS(p->port, nextb);
		INS(BPF_RET | BPF_K, 0x40000);
	}
	INS(BPF_RET | BPF_K, 0);
#undef INS
#undef MISS
	struct sock_fprog fp = { (unsigned short)n, prog };
	return setsockopt(s, SOL_SOCKET, SO_ATTACH_FILTER, &fp, sizeof fp) < 0 ? -errno : 0;
}

/* Let the replies of addr through s's filter. 0 or -errno; *out: s's entry. */
static int infilter_allow(int s, const void *addr, socklen_t len, struct infilter **out)
{
	struct inpeer pe;
	uint64_t cookie = 0;
	socklen_t cl = sizeof cookie;
	if (inpeer_of(addr, len, &pe) < 0)
		return -EINVAL;
	if (getsockopt(s, SOL_SOCKET, SO_COOKIE, &cookie, &cl) < 0)
		return -errno;
	if (!cookie)
		return -EINVAL;
	struct infilter *f = NULL, *pick = NULL; /* a free slot, else the least recently used */
	for (int i = 0; i < NETD_MAX_FILTERED && !f; i++) {
		struct infilter *g = &g_infilter[i];
		if (g->cookie == cookie)
			f = g;
		else if (!pick || (pick->cookie && (!g->cookie || g->used < pick->used)))
			pick = g;
	}
	if (!f) {
		f = pick;
		if (f->cookie && f->twin >= 0)
			twin_retire(f->twin); /* (an entry pushed out, its socket maybe still alive) */
		memset(f, 0, sizeof *f);
		f->cookie = cookie;
		f->twin = -1;
	}
	f->used = now_ms();
	*out = f;
	for (int i = 0; i < f->n; i++)
		if (!memcmp(&f->p[i], &pe, sizeof pe))
			return 0; /* already let through */
	if (f->n < NETD_MAX_PEERS)
		f->p[f->n++] = pe;
	else
		f->p[f->next++ % NETD_MAX_PEERS] = pe; /* over the oldest */
	return infilter_attach(s, f);
}

/* Send from the twin of g (the same family and local port), made on g's
 * first datagram and kept in g's entry (f) for the next ones: a twin is
 * closed only when the entry is pushed out or g's port changed
 * (twin_retire). It is never handed out, receives nothing while g lives
 * (the group's program picks g, its first socket) and has the smallest
 * receive buffer: once g is closed it is the group's only socket and gets
 * what still comes to the port, until its entry goes. Bytes or -errno. */
static ssize_t udp_twin_send(int g, const void *buf, size_t len, int flags, const void *addr, socklen_t alen,
			     struct infilter *f)
{
	struct sockaddr_storage local;
	socklen_t ll = sizeof local;
	if (getsockname(g, (struct sockaddr *)&local, &ll) < 0)
		return -errno;
	uint16_t port = ntohs(local.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&local)->sin6_port :
							     ((struct sockaddr_in *)&local)->sin_port);
	if (f->twin >= 0 && f->twin_port != port) {
		twin_retire(f->twin); /* g lost its port (a disconnect unhashes it) */
		f->twin = -1;
	}
	int t = f->twin;
	if (t < 0) {
		t = socket(local.ss_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_UDP);
		if (t < 0)
			return -errno;
		int one = 1, small = 1;
		if (local.ss_family == AF_INET6) {
			int v6only = 0;
			socklen_t vl = sizeof v6only;
			if (getsockopt(g, IPPROTO_IPV6, IPV6_V6ONLY, &v6only, &vl) == 0)
				(void)setsockopt(t, IPPROTO_IPV6, IPV6_V6ONLY, &v6only, sizeof v6only);
		}
		(void)setsockopt(t, SOL_SOCKET, SO_RCVBUF, &small, sizeof small); /* (the kernel's least) */
		/* g has been in a reuseport group since its twin joined it (g
		 * was bound without SO_REUSEPORT: the group is made when the
		 * twin binds, with g first); the group's program, which hands
		 * every datagram to its first socket, g, never to the twin, is
		 * put on it before the twin sends, once (an attach compiles the
		 * program and frees the old one through a workqueue) */
		if (setsockopt(t, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one) < 0 ||
		    bind(t, (struct sockaddr *)&local, ll) < 0) {
			int e = errno;
			close(t); /* (never in the group) */
			return -e;
		}
		f->twin = t;
		f->twin_port = port;
	}
	struct sock_filter first = BPF_STMT(BPF_RET | BPF_K, 0);
	struct sock_fprog prog = { 1, &first };
	if (!f->rprog && setsockopt(g, SOL_SOCKET, SO_ATTACH_REUSEPORT_CBPF, &prog, sizeof prog) < 0)
		return -errno;
	f->rprog = 1;
	return sendto(t, buf, len, MSG_DONTWAIT | MSG_NOSIGNAL | (flags & MSG_CONFIRM), addr, alen) < 0 ? -errno :
													   (ssize_t)len;
}

/* ---- the connected-UDP relay ----
 * A UDP socket of the host's namespace must never be writable in the guest's
 * hands (a native send goes wherever its address says), yet a connected one
 * sends with write()/send(), which run natively. So the guest keeps its own
 * socket (of its namespace, loopback only), connected by netd to one of the
 * relay's two ends moat-init bound on the guest's loopback (127.0.0.53 and
 * ::1, ephemeral ports; RELAY). netd keeps a table: the guest socket's local
 * address (the source of what arrives at the relay's end) -> a socket of the
 * host's namespace connected to the allowed destination, which only netd
 * holds. A datagram from a source not in the table is dropped; replies from
 * the destination go back from the relay's end to that source, the only peer
 * the guest's connected socket accepts. */
struct relay {
	int h;                       /* netd's socket, connected to the destination; -1: free */
	int end;                     /* 0: the 127.0.0.53 end, 1: ::1 */
	struct sockaddr_storage src; /* the guest socket's address, as its end sees it */
	socklen_t srclen;
	long long used;
};
static int g_rend[2] = { -1, -1 };
static struct sockaddr_storage g_rend_addr[2]; /* the ends' addresses */
static int g_ricmp[2] = { -1, -1 };          /* raw ICMP, ICMPv6 sockets of the guest's namespace */
static struct relay g_relays[NETD_MAX_RELAYS];
static uint8_t g_rbuf[NETD_MAX_DGRAM];

static void relays_init(void)
{
	for (int i = 0; i < NETD_MAX_RELAYS; i++)
		g_relays[i].h = -1;
}

/* The address the end e sees for a peer whose getsockname is sa: an
 * IPv4-mapped IPv6 address seen by the IPv4 end is its plain IPv4 form. */
static socklen_t relay_src(const struct sockaddr_storage *sa, struct sockaddr_storage *out)
{
	const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)sa;
	memset(out, 0, sizeof *out);
	if (sa->ss_family == AF_INET6 && IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr)) {
		struct sockaddr_in *o = (struct sockaddr_in *)out;
		o->sin_family = AF_INET;
		o->sin_port = s6->sin6_port;
		memcpy(&o->sin_addr, &s6->sin6_addr.s6_addr[12], 4);
		return sizeof *o;
	}
	if (sa->ss_family == AF_INET) {
		memcpy(out, sa, sizeof(struct sockaddr_in));
		return sizeof(struct sockaddr_in);
	}
	struct sockaddr_in6 *o = (struct sockaddr_in6 *)out;
	o->sin6_family = AF_INET6;
	o->sin6_port = s6->sin6_port;
	o->sin6_addr = s6->sin6_addr;
	return sizeof *o;
}

/* A raw ICMP (0) or ICMPv6 (1) socket? -1 otherwise. */
static int icmp_socket(int fd)
{
	int t = 0, p = 0, d = 0;
	socklen_t l = sizeof t;
	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &t, &l) < 0 || t != SOCK_RAW)
		return -1;
	l = sizeof p;
	if (getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &p, &l) < 0)
		return -1;
	l = sizeof d;
	if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &d, &l) < 0)
		return -1;
	return d == AF_INET && p == IPPROTO_ICMP ? 0 : d == AF_INET6 && p == IPPROTO_ICMPV6 ? 1 : -1;
}

static uint16_t csum16(const uint8_t *p, size_t n)
{
	uint32_t sum = 0;
	for (size_t i = 0; i + 1 < n; i += 2)
		sum += (uint32_t)(p[i] << 8 | p[i + 1]);
	if (n & 1)
		sum += (uint32_t)p[n - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/* The ICMP error of r's destination, seen as err on its host-side socket,
 * passed on to the guest's socket as its own namespace would have given it.
 * netd sends, with the raw socket of r's end (in the guest's namespace,
 * bound to the end's address), the ICMP message that gives err to a
 * connected UDP socket, quoting a datagram from the guest socket's address
 * to the relay's end: the guest's kernel finds that connected socket by the
 * quote and sets its error (a blocked recv wakes with it, the next send or
 * recv answers it, poll shows POLLERR), exactly as for an ICMP of its own
 * network. A socket without IP_RECVERR (netd's) sees only the hard errors:
 * those are the ones mapped; others are dropped. Nothing here reaches
 * anything but the guest's namespace, and only a socket the relay table
 * holds (its address and the end) can match the quote. */
static void relay_icmp(const struct relay *r, int err)
{
	static const struct {
		int err;
		uint8_t type, code;
	} map4[] = { /* type 3, destination unreachable: Linux's icmp_err_convert */
		     { ECONNREFUSED, 3, 3 }, { ENOPROTOOPT, 3, 2 }, { ENETUNREACH, 3, 6 },
		     { EHOSTDOWN, 3, 7 },    { ENONET, 3, 8 },      { EHOSTUNREACH, 3, 13 } },
	  map6[] = { /* icmpv6_err_convert: destination unreachable, parameter problem */
		     { ECONNREFUSED, 1, 4 }, { EACCES, 1, 1 }, { EPROTO, 4, 0 } };
	int e = r->end;
	if (g_ricmp[e] < 0 || g_rend_addr[e].ss_family != (e ? AF_INET6 : AF_INET) ||
	    r->src.ss_family != g_rend_addr[e].ss_family)
		return;
	uint8_t pkt[8 + 40 + 8];
	memset(pkt, 0, sizeof pkt);
	size_t n = 0;
	for (size_t i = 0; i < (e ? ARRAY_SIZE(map6) : ARRAY_SIZE(map4)); i++)
		if ((e ? map6[i].err : map4[i].err) == err) {
			pkt[0] = e ? map6[i].type : map4[i].type;
			pkt[1] = e ? map6[i].code : map4[i].code;
			n = 1;
		}
	if (!n)
		return;
	if (e == 0) {
		const struct sockaddr_in *src = (const struct sockaddr_in *)&r->src;
		const struct sockaddr_in *end = (const struct sockaddr_in *)&g_rend_addr[0];
		uint8_t *ip = pkt + 8, *u = ip + 20;
		ip[0] = 0x45;   /* version 4, 20 bytes */
		ip[3] = 28;     /* total length: the header and UDP's */
		ip[8] = 64;     /* TTL */
		ip[9] = IPPROTO_UDP;
		memcpy(ip + 12, &src->sin_addr, 4);
		memcpy(ip + 16, &end->sin_addr, 4);
		uint16_t c = htons(csum16(ip, 20));
		memcpy(ip + 10, &c, 2);
		memcpy(u, &src->sin_port, 2);
		memcpy(u + 2, &end->sin_port, 2);
		u[5] = 8;
		n = 8 + 20 + 8;
		c = htons(csum16(pkt, n)); /* ICMPv4: the sender's checksum */
		memcpy(pkt + 2, &c, 2);
		struct sockaddr_in to = { .sin_family = AF_INET, .sin_addr = src->sin_addr };
		(void)sendto(g_ricmp[0], pkt, n, MSG_DONTWAIT | MSG_NOSIGNAL, (struct sockaddr *)&to, sizeof to);
	} else {
		const struct sockaddr_in6 *src = (const struct sockaddr_in6 *)&r->src;
		const struct sockaddr_in6 *end = (const struct sockaddr_in6 *)&g_rend_addr[1];
		uint8_t *ip = pkt + 8, *u = ip + 40;
		ip[0] = 0x60;   /* version 6 */
		ip[5] = 8;      /* payload length: UDP's header */
		ip[6] = IPPROTO_UDP;
		ip[7] = 64;     /* hop limit */
		memcpy(ip + 8, &src->sin6_addr, 16);
		memcpy(ip + 24, &end->sin6_addr, 16);
		memcpy(u, &src->sin6_port, 2);
		memcpy(u + 2, &end->sin6_port, 2);
		u[5] = 8;
		n = 8 + 40 + 8; /* ICMPv6: the kernel makes the checksum */
		struct sockaddr_in6 to = { .sin6_family = AF_INET6, .sin6_addr = src->sin6_addr,
					   .sin6_scope_id = src->sin6_scope_id };
		(void)sendto(g_ricmp[1], pkt, n, MSG_DONTWAIT | MSG_NOSIGNAL, (struct sockaddr *)&to, sizeof to);
	}
}

/* UDP_CONNECT on the guest's socket g (of the guest's namespace, checked by
 * the caller) for q->addr (checked against the policy by the caller): an
 * errno, 0 when g is connected to the relay and the table holds its source;
 * *name, *namelen: the host-side socket's own address (what the destination
 * sees; getsockname shows it), as g's family gives it. */
static int udp_relay_connect(int g, const struct netd_req *q, struct sockaddr_storage *name, socklen_t *namelen,
			     int *slotp)
{
	int gfam = q->family, dfam = q->family, end = q->family == AF_INET6;
	struct sockaddr_storage dst;
	socklen_t dlen = q->addrlen;
	memset(&dst, 0, sizeof dst);
	memcpy(&dst, q->addr, q->addrlen);
	const struct sockaddr_in6 *d6 = (const struct sockaddr_in6 *)&dst;
	if (gfam == AF_INET6 && IN6_IS_ADDR_V4MAPPED(&d6->sin6_addr)) {
		/* a dual-stack socket to an IPv4 destination: the IPv4 end,
		 * reached as ::ffff:127.0.0.53 */
		struct sockaddr_in v4 = { .sin_family = AF_INET, .sin_port = d6->sin6_port };
		memcpy(&v4.sin_addr, &d6->sin6_addr.s6_addr[12], 4);
		memset(&dst, 0, sizeof dst);
		memcpy(&dst, &v4, sizeof v4);
		dlen = sizeof v4;
		dfam = AF_INET;
		end = 0;
	}
	if (g_rend[end] < 0)
		return ENETUNREACH;
	struct sockaddr_storage ra;
	socklen_t rl = sizeof ra;
	if (getsockname(g_rend[end], (struct sockaddr *)&ra, &rl) < 0)
		return errno;
	if (gfam == AF_INET6 && end == 0) {
		const struct sockaddr_in *r4 = (const struct sockaddr_in *)&ra;
		struct sockaddr_in6 m = { .sin6_family = AF_INET6, .sin6_port = r4->sin_port };
		m.sin6_addr.s6_addr[10] = m.sin6_addr.s6_addr[11] = 0xff;
		memcpy(&m.sin6_addr.s6_addr[12], &r4->sin_addr, 4);
		memcpy(&ra, &m, sizeof m);
		rl = sizeof m;
	}
	int h = socket(dfam, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_UDP);
	if (h < 0)
		return errno;
	if (dfam == gfam)
		apply_opts(h, q);
	/* its connect binds it to an ephemeral port: without SO_REUSEPORT (a
	 * guest's, copied above), so that it never joins the reuseport group
	 * of another netd socket of this uid (udp_guest_socket) */
	int zero = 0;
	(void)setsockopt(h, SOL_SOCKET, SO_REUSEPORT, &zero, sizeof zero);
	if (connect(h, (struct sockaddr *)&dst, dlen) < 0 || connect(g, (struct sockaddr *)&ra, rl) < 0) {
		int e = errno;
		close(h);
		return e;
	}
	struct sockaddr_storage ga, src;
	socklen_t gl = sizeof ga;
	*namelen = sizeof *name;
	if (getsockname(g, (struct sockaddr *)&ga, &gl) < 0 || getsockname(h, (struct sockaddr *)name, namelen) < 0) {
		int e = errno;
		close(h);
		return e;
	}
	if (gfam == AF_INET6 && dfam == AF_INET) {
		/* a dual-stack socket shows its IPv4 address v4-mapped */
		struct sockaddr_in h4;
		memcpy(&h4, name, sizeof h4);
		struct sockaddr_in6 *m = (struct sockaddr_in6 *)name;
		memset(name, 0, sizeof *name);
		m->sin6_family = AF_INET6;
		m->sin6_port = h4.sin_port;
		m->sin6_addr.s6_addr[10] = m->sin6_addr.s6_addr[11] = 0xff;
		memcpy(&m->sin6_addr.s6_addr[12], &h4.sin_addr, 4);
		*namelen = sizeof *m;
	}
	socklen_t sl = relay_src(&ga, &src);
	/* the same source again (a reconnect), else a free slot, else the
	 * least recently used */
	int slot = -1, lru = 0;
	for (int i = 0; i < NETD_MAX_RELAYS; i++) {
		struct relay *r = &g_relays[i];
		if (r->h >= 0 && r->end == end && sockaddr_same_inet(&r->src, &src)) {
			slot = i;
			break;
		}
		if (r->h < 0 && (slot < 0 || g_relays[slot].h >= 0))
			slot = i;
		if (g_relays[lru].h >= 0 && (r->h < 0 || r->used < g_relays[lru].used))
			lru = i;
	}
	if (slot < 0)
		slot = lru;
	struct relay *r = &g_relays[slot];
	if (r->h >= 0)
		close(r->h);
	r->h = h;
	r->end = end;
	r->src = src;
	r->srclen = sl;
	r->used = now_ms();
	*slotp = slot; /* the sentry keeps the pair's destination in the same slot */
	return 0;
}

/* Datagrams waiting at the relay's end e: each to its source's destination;
 * from an unknown source, dropped. At most 64 per call (the loop polls
 * again). */
static void relay_from_guest(int e)
{
	for (int k = 0; k < 64; k++) {
		struct sockaddr_storage from;
		socklen_t fl = sizeof from;
		ssize_t n = recvfrom(g_rend[e], g_rbuf, sizeof g_rbuf, MSG_DONTWAIT, (struct sockaddr *)&from, &fl);
		if (n < 0)
			return;
		for (int i = 0; i < NETD_MAX_RELAYS; i++) {
			struct relay *r = &g_relays[i];
			if (r->h >= 0 && r->end == e && sockaddr_same_inet(&r->src, &from)) {
				/* an error the host socket holds from an earlier
				 * datagram's ICMP (or no route now) goes on too */
				if (send(r->h, g_rbuf, (size_t)n, MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
					relay_icmp(r, errno);
				r->used = now_ms();
				break;
			}
		}
	}
}

/* Replies waiting on relay i: to its guest socket, from the relay's end. */
static void relay_to_guest(int i)
{
	struct relay *r = &g_relays[i];
	for (int k = 0; k < 64; k++) {
		ssize_t n = recv(r->h, g_rbuf, sizeof g_rbuf, MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return;
			relay_icmp(r, errno); /* an ICMP error (ECONNREFUSED...): to the guest's socket */
			continue;
		}
		(void)sendto(g_rend[r->end], g_rbuf, (size_t)n, MSG_DONTWAIT | MSG_NOSIGNAL,
			     (struct sockaddr *)&r->src, r->srclen);
		r->used = now_ms();
	}
}

static int g_broker = -1; /* moat-broker's channel (--secret), -1 */

/* The same address and port (a v4-mapped IPv6 address is its IPv4 one)? */
static int same_endpoint(const void *x, socklen_t xl, const void *y, socklen_t yl)
{
	struct netpol_addr a, b;
	uint16_t pa, pb;
	return netpol_from_sockaddr(x, xl, &a, &pa) == 0 && netpol_from_sockaddr(y, yl, &b, &pb) == 0 &&
	       pa == pb && a.family == b.family && !memcmp(a.a, b.a, sizeof a.a);
}

/* A brokered connection (--secret): moat-broker gets the upstream socket u
 * (connected or connecting) and the accepted end of a new loopback pair of
 * the host's namespace; the guest gets the other end, a socket netd made like
 * any other (every check on netd sockets holds for it). The listener is
 * netd's own on 127.0.0.1:0 and lives until the one connection it made is
 * accepted; a connection from anyone else (a host process that raced to the
 * port) is closed. The guest's end, or -errno. */
static int broker_pair(int family, int u, uint32_t mask, const struct netd_req *q)
{
	struct sockaddr_in la = { .sin_family = AF_INET };
	la.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	socklen_t ll = sizeof la;
	int c = -1, acc = -1, e = 0;
	int l = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_TCP);
	if (l < 0)
		return -errno;
	if (bind(l, (struct sockaddr *)&la, sizeof la) < 0 || listen(l, 4) < 0 ||
	    getsockname(l, (struct sockaddr *)&la, &ll) < 0) {
		e = errno;
		goto out;
	}
	c = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_TCP);
	if (c < 0) {
		e = errno;
		goto out;
	}
	struct sockaddr_in6 l6 = { .sin6_family = AF_INET6, .sin6_port = la.sin_port };
	const void *to = &la;
	socklen_t tl = sizeof la;
	if (family == AF_INET6) {
		/* the guest's socket stays AF_INET6: the pair meets at the
		 * v4-mapped 127.0.0.1 */
		int off = 0;
		(void)setsockopt(c, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof off);
		l6.sin6_addr.s6_addr[10] = l6.sin6_addr.s6_addr[11] = 0xff;
		memcpy(&l6.sin6_addr.s6_addr[12], &la.sin_addr, 4);
		to = &l6;
		tl = sizeof l6;
	}
	if (connect(c, to, tl) < 0 && errno != EINPROGRESS) {
		e = errno;
		goto out;
	}
	struct sockaddr_storage me;
	socklen_t ml = sizeof me;
	if (getsockname(c, (struct sockaddr *)&me, &ml) < 0) {
		e = errno;
		goto out;
	}
	for (int tries = 0; tries < 8 && acc < 0; tries++) {
		struct pollfd pf = { l, POLLIN, 0 };
		if (poll(&pf, 1, 1000) <= 0)
			break;
		struct sockaddr_storage pa;
		socklen_t pl = sizeof pa;
		int a = accept4(l, (struct sockaddr *)&pa, &pl, SOCK_CLOEXEC);
		if (a >= 0 && same_endpoint(&pa, pl, &me, ml))
			acc = a;
		else if (a >= 0)
			close(a); /* not ours */
	}
	if (acc < 0) {
		e = ECONNREFUSED;
		goto out;
	}
	apply_opts_(c, q, 0); /* after connect: IPV6_V6ONLY then changes nothing */
	struct broker_conn_msg m = { .mask = mask };
	struct iovec iov = { &m, sizeof m };
	union {
		char buf[CMSG_SPACE(2 * sizeof(int))];
		struct cmsghdr align;
	} cu;
	memset(&cu, 0, sizeof cu);
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cu.buf,
			     .msg_controllen = sizeof cu.buf };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(2 * sizeof(int));
	int fds[2] = { acc, u };
	memcpy(CMSG_DATA(cm), fds, sizeof fds);
	if (sendmsg(g_broker, &mh, MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
		e = ECONNREFUSED; /* moat-broker is gone, or its channel is full */
out:
	close(l);
	if (acc >= 0)
		close(acc);
	if (e) {
		if (c >= 0)
			close(c);
		return -e;
	}
	return c;
}

/* A fresh non-blocking TCP socket per family for the next CONNECT, made
 * once the last one was answered (-1: none yet). */
static int g_spare[2] = { -1, -1 };

/* Is the destination one of the host's own addresses (any interface's, not
 * only loopback's)? netd's sockets live in the host's network namespace, so
 * a connect or datagram to such an address reaches the host's own services
 * bound to the wildcard address, as 127.0.0.1 would (red team 33: under
 * allow=0.0.0.0/0 or ::/0 the guest read a host service on [::]:port through
 * the host's public address; the special ranges cover loopback, private and
 * link-local addresses only). Asked of the host's routing without sending
 * anything: a UDP socket connected to the address (a route look-up and a
 * source choice) takes the destination itself as its source only when the
 * route is local (Linux: RTN_LOCAL's prefsrc is the address; IPv6's source
 * selection prefers the destination when it is the host's). An IPv6 address
 * that carries an IPv4 one (NAT64, 6to4, Teredo...: a translator on the host
 * would deliver it there) is asked for both. 1 local, 0 not (or no route:
 * the real connect fails on its own). */
static int addr_local(const struct netpol_addr *a)
{
	struct sockaddr_storage d, src;
	socklen_t dl, sl = sizeof src;
	memset(&d, 0, sizeof d);
	if (a->family == AF_INET) {
		struct sockaddr_in *in = (struct sockaddr_in *)&d;
		in->sin_family = AF_INET;
		in->sin_port = htons(9);
		memcpy(&in->sin_addr, a->a, 4);
		dl = sizeof *in;
	} else {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&d;
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(9);
		memcpy(&in6->sin6_addr, a->a, 16);
		dl = sizeof *in6;
	}
	/* one probe socket per family, kept: connect(AF_UNSPEC) first, as a
	 * connected UDP socket keeps the source it chose at its first connect
	 * (a second connect alone would answer with the old one); half the
	 * cost of a socket and a close per question (~7 against ~10-20 µs on
	 * the loaded 2-vCPU machine) */
	static int probe[2] = { -1, -1 };
	int *u = &probe[a->family == AF_INET6];
	if (*u < 0 && (*u = socket(a->family, SOCK_DGRAM | SOCK_CLOEXEC, 0)) < 0)
		return a->family == AF_INET || errno != EAFNOSUPPORT; /* cannot tell: refuse (no IPv6: none of it is local) */
	struct sockaddr unspec = { .sa_family = AF_UNSPEC };
	int local = 0;
	if (connect(*u, &unspec, sizeof unspec) == 0 && connect(*u, (struct sockaddr *)&d, dl) == 0 &&
	    getsockname(*u, (struct sockaddr *)&src, &sl) == 0) {
		struct netpol_addr y;
		uint16_t py;
		local = netpol_from_sockaddr(&src, sl, &y, &py) == 0 && y.family == a->family &&
			!memcmp(y.a, a->a, sizeof y.a);
	}
	return local;
}

/* The host's routing's own word (red team 79): the source compare above
 * misses a local route whose source is another address — an AnyIP prefix
 * (`ip route add local 203.0.114.0/24 dev lo src 198.51.100.1`; IPv6's
 * `ip -6 route add local 2001:db8:99::/64 dev lo`, whose source is an
 * interface's address) —, through which the guest reached the host's
 * wildcard services under allow=0.0.0.0/0,::/0. An RTM_GETROUTE for the
 * destination on netd's NETLINK_ROUTE socket (made before it confines
 * itself; a query, no capability) answers the route's type: local,
 * broadcast (delivered to the host too) and anycast (IPv6's subnet-router
 * anycast on a forwarding host) are the host. 1 such, 0 not, -1 no answer
 * (no socket, an error reply): the source compare decides then. */
static int g_rtnl = -1;

static int route_local(const struct netpol_addr *a)
{
	if (g_rtnl < 0)
		return -1;
	static uint32_t seq;
	size_t alen = a->family == AF_INET ? 4 : 16;
	struct {
		struct nlmsghdr n;
		struct rtmsg r;
		struct rtattr ra;
		uint8_t addr[16];
	} q;
	memset(&q, 0, sizeof q);
	q.n.nlmsg_len = (uint32_t)(NLMSG_LENGTH(sizeof q.r) + RTA_LENGTH(alen));
	q.n.nlmsg_type = RTM_GETROUTE;
	q.n.nlmsg_flags = NLM_F_REQUEST;
	q.n.nlmsg_seq = ++seq;
	q.r.rtm_family = (uint8_t)a->family;
	q.r.rtm_dst_len = (uint8_t)(alen * 8);
	q.ra.rta_type = RTA_DST;
	q.ra.rta_len = (unsigned short)RTA_LENGTH(alen);
	memcpy(q.addr, a->a, alen);
	if (sendto(g_rtnl, &q, q.n.nlmsg_len, 0, NULL, 0) != (ssize_t)q.n.nlmsg_len)
		return -1;
	union {
		struct nlmsghdr n;
		uint8_t b[4096];
	} rep;
	for (;;) {
		ssize_t n = recvfrom(g_rtnl, &rep, sizeof rep, 0, NULL, NULL);
		if (n < (ssize_t)sizeof(struct nlmsghdr) || !NLMSG_OK(&rep.n, (size_t)n))
			return -1;
		if (rep.n.nlmsg_seq != seq)
			continue; /* an answer to an earlier, abandoned question */
		if (rep.n.nlmsg_type != RTM_NEWROUTE || rep.n.nlmsg_len < NLMSG_LENGTH(sizeof(struct rtmsg)))
			return -1; /* NLMSG_ERROR: no route (ENETUNREACH), or refused */
		uint8_t t = ((struct rtmsg *)NLMSG_DATA(&rep.n))->rtm_type;
		return t == RTN_LOCAL || t == RTN_BROADCAST || t == RTN_ANYCAST;
	}
}

/* the routing's answer when there is one (it covers the host's own
 * addresses too: RTN_LOCAL), else the source compare */
static int one_local(const struct netpol_addr *a)
{
	int r = route_local(a);
	return r >= 0 ? r : addr_local(a);
}

static int host_local(const struct netpol_addr *a)
{
	struct netpol_addr v4;
	return one_local(a) || (netpolicy_embedded_v4(a, &v4) && one_local(&v4));
}

static int serve_one(int chan, struct netpolicy *pol)
{
	struct netd_req q;
	struct iovec qi[2] = { { &q, sizeof q }, { g_dgram, sizeof g_dgram } };
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} in;
	struct msghdr qm = { .msg_iov = qi, .msg_iovlen = 2, .msg_control = in.buf,
			     .msg_controllen = sizeof in.buf };
	ssize_t n = recvmsg(chan, &qm, MSG_CMSG_CLOEXEC);
	if (n == 0)
		return -1; /* the sentry is gone */
	if (n < 0)
		return errno == EINTR ? 0 : -1;
	struct timespec t_in;
	clock_gettime(CLOCK_MONOTONIC, &t_in);
	int given = -1; /* a socket sent with the request (the pinned file, SEND) */
	struct cmsghdr *icm = CMSG_FIRSTHDR(&qm);
	if (icm && icm->cmsg_level == SOL_SOCKET && icm->cmsg_type == SCM_RIGHTS &&
	    icm->cmsg_len == CMSG_LEN(sizeof(int)))
		memcpy(&given, CMSG_DATA(icm), sizeof given);
	struct netd_rep rep = { .err = ENETUNREACH, .rule = -1 };
	int s = -1;
	struct netpol_addr a;
	uint16_t port;
	int proto = q.type == SOCK_STREAM ? NP_TCP : q.type == SOCK_DGRAM ? NP_UDP : -1;
	size_t plen = n > (ssize_t)sizeof q ? (size_t)n - sizeof q : 0;
	if (n < (ssize_t)sizeof q || (qm.msg_flags & (MSG_TRUNC | MSG_CTRUNC))) {
		rep.err = EINVAL;
		goto reply;
	}
	if (q.op == NETD_RELAY) {
		/* a relay end: once per family, a UDP socket of the guest's
		 * namespace (after GUESTNS) */
		struct sockaddr_storage ra;
		socklen_t rl = sizeof ra;
		int ic = given < 0 ? -1 : icmp_socket(given);
		if (plen || given < 0 || !g_guest_ns || ns_cookie(given) != g_guest_ns) {
			rep.err = EPERM;
		} else if (ic >= 0) {
			/* or its raw ICMP/ICMPv6 socket (relay_icmp) */
			if (g_ricmp[ic] >= 0) {
				rep.err = EEXIST;
			} else {
				g_ricmp[ic] = given;
				given = -1;
				rep.err = 0;
			}
		} else if (!udp_socket(given) || getsockname(given, (struct sockaddr *)&ra, &rl) < 0) {
			rep.err = EPERM;
		} else if (g_rend[ra.ss_family == AF_INET6] >= 0) {
			rep.err = EEXIST;
		} else {
			g_rend[ra.ss_family == AF_INET6] = given;
			g_rend_addr[ra.ss_family == AF_INET6] = ra;
			given = -1;
			rep.err = 0;
		}
		goto reply;
	}
	if (q.op == NETD_DISCONNECT) {
		/* connect(AF_UNSPEC) on the pinned file, whatever its namespace:
		 * it dissolves an association, it reaches nothing */
		sa_family_t unspec = AF_UNSPEC;
		rep.err = plen || given < 0 ? EINVAL :
			  connect(given, (const struct sockaddr *)&unspec, sizeof unspec) < 0 ? errno : 0;
		goto reply;
	}
	if (q.op == NETD_SETSOCKOPT) {
		/* an option outside the guest filter's allow list (netconn.c
		 * setsockopt_other), on the guest's own socket only: on one of
		 * the host's namespace it runs against the host's stack (a
		 * multicast join reports on the host's links, red team 26; a
		 * flow label lands in the host's table, red team 49;
		 * TCP_TX_DELAY and busy polling turn host-wide static keys on,
		 * TCP_ULP attaches kernel ULPs, IP_TTL/IP_OPTIONS reshape what
		 * leaves the host, hyg33) */
		uint64_t ck = given < 0 ? 0 : ns_cookie(given);
		if (given < 0 || q.nopts != 1 || plen > NETD_OPTVAL_MAX)
			rep.err = EINVAL;
		else if (option_hostwide(q.opts[0].level, q.opts[0].name))
			rep.err = EPERM;
		else if (!g_guest_ns || !ck || ck != g_guest_ns)
			rep.err = EPERM;
		else
			rep.err = setsockopt(given, q.opts[0].level, q.opts[0].name, g_dgram, (socklen_t)plen) < 0 ?
					  errno : 0;
		goto reply;
	}
	if (q.op >= NETD_GUESTNS && q.op <= NETD_LISTEN) {
		/* the guest's own socket (cookie checked there), no payload */
		rep.err = plen ? EINVAL : on_guest_socket(&q, (ssize_t)sizeof q, given);
		goto reply;
	}
	if ((q.op != NETD_CONNECT && q.op != NETD_SEND && q.op != NETD_UDP_CONNECT) || q.addrlen > sizeof q.addr ||
	    q.nopts > NETD_MAX_OPTS || (q.family != AF_INET && q.family != AF_INET6) || proto < 0 ||
	    (q.op == NETD_CONNECT && (plen || given >= 0)) || (q.op == NETD_SEND && proto != NP_UDP) ||
	    (q.op == NETD_UDP_CONNECT && (plen || given < 0 || proto != NP_UDP)) ||
	    netpol_from_sockaddr(q.addr, q.addrlen, &a, &port) < 0) {
		rep.err = EINVAL;
		goto reply;
	}
	const char *why;
	rep.rule = netpolicy_match(pol, &a, port, proto, &why);
	if (rep.rule < 0) {
		rep.err = ENETUNREACH; /* what the guest's own namespace answers */
		goto reply;
	}
	/* the host itself by one of its own addresses: only a rule naming that
	 * address (a /32 or /128); not a wider CIDR (0.0.0.0/0, ::/0, the
	 * host's subnet, a private range it lies in) or a name (a DNS answer
	 * that is the host's address). Host loopback is a special range a
	 * rule already had to name (127.0.0.0/8, ::1): left to that rule */
	const char *sp = netpolicy_special(&a);
	if (!(sp && !strcmp(sp, "host loopback")) && host_local(&a) &&
	    (rep.rule = netpolicy_match_exact(pol, &a, port, proto)) < 0) {
		rep.err = ENETUNREACH;
		rep.host_local = 1;
		goto reply;
	}
	if (q.op == NETD_UDP_CONNECT) {
		/* the guest's own socket (of its namespace: checked here), of
		 * the family asked for */
		int fam = 0;
		socklen_t fl = sizeof fam;
		if (!g_guest_ns || ns_cookie(given) != g_guest_ns || !udp_socket(given) ||
		    getsockopt(given, SOL_SOCKET, SO_DOMAIN, &fam, &fl) < 0 || fam != q.family)
			rep.err = EPERM;
		else {
			struct sockaddr_storage name;
			socklen_t nl = 0;
			int slot = -1;
			rep.err = udp_relay_connect(given, &q, &name, &nl, &slot);
			rep.slot = slot;
			if (!rep.err && nl <= sizeof rep.name) {
				memcpy(rep.name, &name, nl);
				rep.namelen = nl;
			}
		}
		goto reply;
	}
	if (q.op == NETD_SEND) {
		/* A datagram to the address checked here, from netd's copy. The
		 * guest's socket (given, or made now) is shut for writing: no
		 * native send on it goes anywhere, whatever address a racing
		 * thread writes (EPIPE). The datagram leaves from a twin bound to
		 * the same port, closed right after. */
		if (given < 0) {
			if (!live_room()) {
				rep.err = ENOBUFS; /* not EAGAIN: the sentry waits on that */
				goto reply;
			}
			s = udp_guest_socket(q.family, &q);
			if (s < 0) {
				rep.err = -s;
				s = -1;
				goto reply;
			}
		} else if (!udp_socket(given) || ns_cookie(given) != g_host_ns) {
			/* only a socket of netd's own namespace (one it made) */
			rep.err = EOPNOTSUPP;
			goto reply;
		}
		/* replies from this destination (and no other host) reach it */
		struct infilter *inf = NULL;
		int fe = infilter_allow(s >= 0 ? s : given, q.addr, q.addrlen, &inf);
		if (fe < 0) {
			rep.err = -fe;
			goto reply;
		}
		ssize_t w = udp_twin_send(s >= 0 ? s : given, g_dgram, plen, q.flags, q.addr, q.addrlen, inf);
		rep.err = w < 0 ? (int)-w : 0;
		rep.sent = w < 0 ? 0 : w;
		goto reply;
	}
	if (proto == NP_UDP) {
		rep.err = ENETUNREACH; /* connected UDP: not forwarded (sendto is) */
		rep.rule = -1;
		goto reply;
	}
	if (!live_room()) {
		rep.err = EADDRNOTAVAIL; /* Linux's connect with no port left */
		goto reply;
	}
	/* the socket made after the last reply (off the critical path), or a new one */
	s = g_spare[q.family == AF_INET6];
	g_spare[q.family == AF_INET6] = -1;
	if (s < 0)
		s = socket(q.family, q.type | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_TCP);
	if (s < 0) {
		rep.err = errno;
		goto reply;
	}
	apply_opts(s, &q);
	rep.err = connect(s, (const struct sockaddr *)q.addr, q.addrlen) < 0 ? errno : 0;
	uint32_t mask = g_broker >= 0 ? netpolicy_secrets(pol, &a, port) : 0;
	if (mask && (rep.err == 0 || rep.err == EINPROGRESS)) {
		/* --secret: the guest gets its end of a loopback pair, moat-broker
		 * the rest (it waits for a connect still in progress) */
		int g = broker_pair(q.family, s, mask, &q);
		close(s);
		s = g < 0 ? -1 : g;
		rep.err = g < 0 ? -g : 0;
		rep.secrets = g < 0 ? 0 : mask;
	}
reply:;
	if (given >= 0)
		close(given);
	struct timespec t_out;
	clock_gettime(CLOCK_MONOTONIC, &t_out);
	rep.netd_ns = (int64_t)(t_out.tv_sec - t_in.tv_sec) * 1000000000 + (t_out.tv_nsec - t_in.tv_nsec);
	struct iovec iov = { &rep, sizeof rep };
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
	/* a socket made here goes back when it connected (or is connecting),
	 * and always for a send (the guest's fd becomes it, whatever the
	 * datagram's fate) */
	if (s >= 0 && (q.op == NETD_SEND || rep.err == 0 || rep.err == EINPROGRESS)) {
		memset(&u, 0, sizeof u);
		m.msg_control = u.buf;
		m.msg_controllen = sizeof u.buf;
		struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &s, sizeof s);
		live_add(s, q.op != NETD_SEND);
	}
	ssize_t w = sendmsg(chan, &m, MSG_NOSIGNAL);
	if (s >= 0)
		close(s);
	if (q.op == NETD_CONNECT && rep.rule >= 0 && (q.family == AF_INET || q.family == AF_INET6) &&
	    g_spare[q.family == AF_INET6] < 0)
		g_spare[q.family == AF_INET6] = socket(q.family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_TCP);
	return w < 0 ? -1 : 0;
}

static int g_dns_chan = -1; /* the sentry's end of the DNS channel */

int netd_dns_channel(void)
{
	return g_dns_chan;
}

pid_t netd_start(const struct netpolicy *pol, int broker, int *chan_out, char *err, size_t errlen)
{
	load_nameserver();
	int sv[2], dv[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		snprintf(err, errlen, "moat-netd: socketpair: %s", strerror(errno));
		return -1;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, dv) < 0) {
		snprintf(err, errlen, "moat-netd: socketpair: %s", strerror(errno));
		close(sv[0]);
		close(sv[1]);
		return -1;
	}
	/* the sentry's /proc, for netd's count of its sockets (live_init) */
	int procdir = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
	pid_t pid = moat_fork_helper("moat-netd");
	if (pid > 0 && procdir >= 0)
		close(procdir);
	if (pid < 0) {
		if (procdir >= 0)
			close(procdir);
		snprintf(err, errlen, "moat-netd: fork: %s", strerror(errno));
		close(sv[0]);
		close(sv[1]);
		close(dv[0]);
		close(dv[1]);
		return -1;
	}
	if (pid == 0) {
		/* keep the channels only (stdio: helper_leave_caller_stdio) */
		int hs = fcntl(sv[1], F_DUPFD_CLOEXEC, 64), hd = fcntl(dv[1], F_DUPFD_CLOEXEC, 64);
		int hb = broker >= 0 ? fcntl(broker, F_DUPFD_CLOEXEC, 64) : -1;
		int hp = procdir >= 0 ? fcntl(procdir, F_DUPFD_CLOEXEC, 64) : -1;
		int chan = hs < 0 ? -1 : dup2(hs, 3), dchan = hd < 0 ? -1 : dup2(hd, 4);
		if (hb >= 0)
			g_broker = dup2(hb, 5);
		int pd = hp >= 0 ? dup2(hp, broker >= 0 ? 6 : 5) : -1;
		if (chan < 0 || dchan < 0 || (broker >= 0 && g_broker < 0) ||
		    syscall(SYS_close_range, (broker >= 0 ? 6 : 5) + (pd >= 0), ~0U, 0) < 0)
			_exit(1);
		sigset_t all;
		sigfillset(&all);
		sigprocmask(SIG_SETMASK, &all, NULL); /* the sentry's signals are not ours */
		int probe = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		g_host_ns = probe >= 0 ? ns_cookie(probe) : 0;
		if (probe >= 0)
			close(probe);
		if (!g_host_ns) {
			fprintf(stderr, "moat-netd: no network namespace cookie (SO_NETNS_COOKIE)\n");
			_exit(1);
		}
		live_init(pd);
		if (pd >= 0)
			close(pd);
		/* the host's routing, asked for the route's type (route_local) */
		g_rtnl = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
		/* none of the caller's terminal or stdio (red team 89) */
		int olderr = helper_leave_caller_stdio();
		if (olderr < 0 || priv_drop_caps() < 0 || confine_netd(chan, dchan, g_broker) < 0) {
			dprintf(olderr < 0 ? 2 : olderr, "moat-netd: cannot confine itself\n");
			_exit(1);
		}
		if (olderr > 2)
			close(olderr);
		/* this process's own copy: DNS answers are remembered in it */
		struct netpolicy *mine = (struct netpolicy *)pol;
		struct dns_q d = { .sock = -1 };
		relays_init();
		for (;;) {
			/* connects are answered at once; one DNS question may
			 * be in flight meanwhile (its channel waits for it); the
			 * UDP relay's two ends and its host-side sockets */
			struct pollfd pf[5 + NETD_MAX_RELAYS] = {
				{ chan, POLLIN, 0 }, { d.sock < 0 ? dchan : -1, POLLIN, 0 }, { d.sock, POLLIN, 0 },
				{ g_rend[0], POLLIN, 0 }, { g_rend[1], POLLIN, 0 },
			};
			for (int i = 0; i < NETD_MAX_RELAYS; i++)
				pf[5 + i] = (struct pollfd){ g_relays[i].h, POLLIN, 0 };
			int wait = -1;
			if (d.sock >= 0) {
				long long left = d.deadline_ms - now_ms();
				wait = left > 0 ? (int)left : 0;
			}
			int r = poll(pf, 5 + NETD_MAX_RELAYS, wait);
			if (r < 0 && errno != EINTR)
				break;
			for (int e = 0; e < 2 && r > 0; e++)
				if (pf[3 + e].revents)
					relay_from_guest(e);
			for (int i = 0; i < NETD_MAX_RELAYS && r > 0; i++)
				if (pf[5 + i].revents && g_relays[i].h == pf[5 + i].fd)
					relay_to_guest(i);
			if (pf[0].revents && serve_one(chan, mine) < 0)
				break;
			if (pf[1].revents && dns_request(dchan, mine, &d) < 0)
				break;
			if (d.sock >= 0 && (pf[2].revents || now_ms() >= d.deadline_ms)) {
				int done = pf[2].revents ? resolve_read(mine, &d) : 1;
				if (done && d.sock >= 0) { /* timed out: SERVFAIL */
					close(d.sock);
					d.sock = -1;
				}
				if (done && send_rep(dchan, &d.rep) < 0)
					break;
			}
		}
		_exit(0);
	}
	close(sv[1]);
	close(dv[1]);
	g_dns_chan = dv[0];
	*chan_out = sv[0];
	return pid;
}
