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
 * flags bits allowed), connect, setsockopt/getsockopt, recvmsg/sendmsg
 * on the channel, close, fcntl, exit. No file opens, no exec, no bind/listen.
 *
 * One request: {family, type, protocol, destination, options}. Stream sockets
 * only: a connected UDP socket of the host's namespace in the guest's hands
 * could be re-aimed anywhere (sendto/sendmsg with another address, or a
 * connect(AF_UNSPEC) then sendto), so datagram requests are refused whatever
 * the rules say (DNS goes through the stub, netdns.c). netd checks the
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
#include "sentry/netpolicy.h"
#include "common/log.h"

#include "common/sanitize.h"
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <linux/filter.h>
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

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#endif

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
		return name == IPV6_V6ONLY;
	return 0;
}

static int confine_netd(int chan, int dchan)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_KILL_PROCESS);
	if (!ctx)
		return -1;
	static const int plain[] = {
		SCMP_SYS(connect), SCMP_SYS(setsockopt), SCMP_SYS(getsockopt), SCMP_SYS(close),
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
	/* malloc's arenas (anonymous memory only) */
	struct scmp_arg_cmp anon = { .arg = 4, .op = SCMP_CMP_EQ, .datum_a = (scmp_datum_t)-1 };
	if (!rc)
		rc = seccomp_rule_add_array(ctx, SCMP_ACT_ALLOW, SCMP_SYS(mmap), 1, &anon);
	if (!rc) /* ASan builds: the sanitizer runtime's own calls */
		rc = moat_sanitizer_allow(ctx);
	if (!rc)
		rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 1);
	if (!rc)
		rc = seccomp_load(ctx);
	seccomp_release(ctx);
	return rc ? -1 : 0;
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

/* Skip a (possibly compressed) name at off; the offset after it, or -1. */
static int skip_name(const uint8_t *p, int n, int off)
{
	for (int hops = 0; off < n && hops < 128; hops++) {
		uint8_t l = p[off];
		if (l == 0)
			return off + 1;
		if ((l & 0xc0) == 0xc0)
			return off + 2 <= n ? off + 2 : -1;
		if (l & 0xc0)
			return -1;
		off += 1 + l;
	}
	return -1;
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
	uint8_t *pkt = d->pkt;
	uint16_t id;
	if (getrandom(&id, sizeof id, 0) != sizeof id)
		return 0;
	int n = 0;
	pkt[n++] = (uint8_t)(id >> 8);
	pkt[n++] = (uint8_t)id;
	pkt[n++] = 0x01; /* RD */
	pkt[n++] = 0;
	pkt[n++] = 0, pkt[n++] = 1; /* QDCOUNT */
	memset(pkt + n, 0, 6);
	n += 6;
	for (const char *l = name; *l;) {
		const char *dot = strchr(l, '.');
		size_t len = dot ? (size_t)(dot - l) : strlen(l);
		if (len == 0 || len > 63 || n + (int)len + 6 > (int)sizeof d->pkt)
			return 0;
		pkt[n++] = (uint8_t)len;
		memcpy(pkt + n, l, len);
		n += (int)len;
		l += len + (dot ? 1 : 0);
		if (!dot)
			break;
	}
	pkt[n++] = 0;
	pkt[n++] = 0, pkt[n++] = (uint8_t)q->qtype;
	pkt[n++] = 0, pkt[n++] = 1;
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

/* d->sock is readable: 1 = answered (d->rep filled, socket closed), 0 = not
 * our answer yet. netd remembers the allowed addresses for the rule in its
 * own policy. */
static int resolve_read(struct netpolicy *pol, struct dns_q *d)
{
	uint8_t ans[1500];
	const uint8_t *pkt = d->pkt;
	int n = d->n;
	struct netd_rep *rep = &d->rep;
	int got = (int)recvfrom(d->sock, ans, sizeof ans, 0, NULL, NULL);
	if (got < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	if (got >= 0 && !(got >= 12 && ans[0] == pkt[0] && ans[1] == pkt[1] && (ans[2] & 0x80) && got >= n &&
			  memcmp(ans + 12, pkt + 12, (size_t)(n - 12)) == 0)) {
		if (++d->tries < 8)
			return 0; /* not our question: keep waiting */
		got = -1;
	}
	close(d->sock);
	d->sock = -1;
	if (got < 0)
		return 1; /* SERVFAIL */
	rep->rcode = ans[3] & 0x0f;
	int an = ans[6] << 8 | ans[7], off = n;
	rep->ttl = 300;
	for (int i = 0; i < an && off >= 0; i++) {
		off = skip_name(ans, got, off);
		if (off < 0 || off + 10 > got)
			break;
		int type = ans[off] << 8 | ans[off + 1], cls = ans[off + 2] << 8 | ans[off + 3];
		uint32_t ttl = (uint32_t)ans[off + 4] << 24 | (uint32_t)ans[off + 5] << 16 |
			       (uint32_t)ans[off + 6] << 8 | ans[off + 7];
		int rdlen = ans[off + 8] << 8 | ans[off + 9];
		off += 10;
		if (off + rdlen > got)
			break;
		struct netpol_addr a;
		memset(&a, 0, sizeof a);
		if (cls == 1 && type == d->q.qtype && ((type == 1 && rdlen == 4) || (type == 28 && rdlen == 16))) {
			a.family = type == 1 ? AF_INET : AF_INET6;
			memcpy(a.a, ans + off, (size_t)rdlen);
			if (netpolicy_remember(pol, rep->rule, &a) < 0) {
				rep->nrefused++; /* a denied range: DNS rebinding */
			} else if (rep->naddr < NETDNS_MAX_ADDRS) {
				memcpy(rep->addrs[rep->naddr++], a.a, 16);
				if (ttl < rep->ttl)
					rep->ttl = ttl;
			}
		}
		off += rdlen;
	}
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

/* A socket netd hands over stays a socket of the host's namespace in the
 * guest's hands: the sentry checks every later connect of it at its stop,
 * but a check and a native call are two moments (another thread can swap
 * the fd number or rewrite the address in between) and any path the stop
 * misses runs natively. So the kernel holds the line as well: a locked
 * classic BPF socket filter lets in only packets whose source is the
 * destination netd connected to (address and port). Aimed anywhere else
 * the socket never completes a handshake (the SYN-ACK is dropped, so no
 * host listener accepts a connection) and receives nothing; SO_LOCK_FILTER
 * makes the filter permanent (detach or replace: EPERM). TCP: the filter
 * runs on the segment at its TCP header (source port at offset 0), the IP
 * header at SKF_NET_OFF. */
int netd_peer_filter(int s, const struct netpol_addr *a, uint16_t port)
{
	struct sock_filter f[16];
	unsigned n = 0, drop;
	uint32_t w;
	int v4 = a->family == AF_INET;

	/* the jumps to the drop are patched once its index is known */
	f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_B | BPF_ABS, (uint32_t)SKF_NET_OFF);
	f[n++] = (struct sock_filter)BPF_STMT(BPF_ALU | BPF_AND | BPF_K, 0xf0);
	f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, v4 ? 0x40 : 0x60, 0, 0);
	for (int k = 0; k < (v4 ? 1 : 4); k++) {
		memcpy(&w, a->a + 4 * k, 4);
		f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
						      (uint32_t)SKF_NET_OFF + (v4 ? 12 : 8) + 4 * (uint32_t)k);
		f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ntohl(w), 0, 0);
	}
	f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_H | BPF_ABS, 0);
	f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, port, 0, 0);
	f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, 0xffffffffu);
	drop = n;
	f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, 0);
	for (unsigned i = 0; i < drop; i++)
		if (BPF_CLASS(f[i].code) == BPF_JMP)
			f[i].jf = (uint8_t)(drop - i - 1);
	struct sock_fprog prog = { .len = (unsigned short)n, .filter = f };
	int one = 1;
	if (setsockopt(s, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof prog) < 0 ||
	    setsockopt(s, SOL_SOCKET, SO_LOCK_FILTER, &one, sizeof one) < 0)
		return -errno;
	return 0;
}

static int serve_one(int chan, struct netpolicy *pol)
{
	struct netd_req q;
	struct iovec qi = { &q, sizeof q };
	struct msghdr qm = { .msg_iov = &qi, .msg_iovlen = 1 };
	ssize_t n = recvmsg(chan, &qm, MSG_CMSG_CLOEXEC);
	if (n == 0)
		return -1; /* the sentry is gone */
	if (n < 0)
		return errno == EINTR ? 0 : -1;
	struct netd_rep rep = { .err = ENETUNREACH, .rule = -1 };
	int s = -1;
	struct netpol_addr a;
	uint16_t port;
	int proto = q.type == SOCK_STREAM ? NP_TCP : q.type == SOCK_DGRAM ? NP_UDP : -1;
	if (n != (ssize_t)sizeof q || q.op != NETD_CONNECT || q.addrlen > sizeof q.addr || q.nopts > NETD_MAX_OPTS ||
	    (q.family != AF_INET && q.family != AF_INET6) || proto < 0 ||
	    netpol_from_sockaddr(q.addr, q.addrlen, &a, &port) < 0) {
		rep.err = EINVAL;
		goto reply;
	}
	const char *why;
	rep.rule = netpolicy_match(pol, &a, port, proto, &why);
	if (rep.rule >= 0 && proto != NP_TCP)
		rep.rule = -1; /* no UDP egress: a host UDP socket could be aimed anywhere */
	if (rep.rule < 0) {
		rep.err = ENETUNREACH; /* what the guest's own namespace answers */
		goto reply;
	}
	s = socket(q.family, q.type | SOCK_NONBLOCK | SOCK_CLOEXEC,
		   proto == NP_TCP ? IPPROTO_TCP : IPPROTO_UDP);
	if (s < 0) {
		rep.err = errno;
		goto reply;
	}
	/* before anything can arrive: only the destination's packets get in
	 * (where the kernel lets an unprivileged process attach a classic
	 * filter; some refuse it with EPERM, and the sentry's stops are then
	 * the only check: ARCHITECTURE.md, known gaps) */
	(void)netd_peer_filter(s, &a, port);
	for (uint32_t i = 0; i < q.nopts; i++) {
		if (!netd_option_allowed(q.opts[i].level, q.opts[i].name))
			continue;
		int val = q.opts[i].val;
		if (q.opts[i].level == SOL_SOCKET &&
		    (q.opts[i].name == SO_RCVBUF || q.opts[i].name == SO_SNDBUF)) {
			/* getsockopt shows twice what was set (the kernel doubles
			 * it for overhead), and setting a buffer size turns TCP's
			 * autotuning off: a size equal to a fresh socket's default
			 * was never set by the guest */
			int cur = 0;
			socklen_t cl = sizeof cur;
			if (getsockopt(s, SOL_SOCKET, q.opts[i].name, &cur, &cl) == 0 && cur == val)
				continue;
			val /= 2;
		}
		(void)setsockopt(s, q.opts[i].level, q.opts[i].name, &val, sizeof val);
	}
	rep.err = connect(s, (const struct sockaddr *)q.addr, q.addrlen) < 0 ? errno : 0;
reply:;
	struct iovec iov = { &rep, sizeof rep };
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
	if (s >= 0 && (rep.err == 0 || rep.err == EINPROGRESS)) {
		memset(&u, 0, sizeof u);
		m.msg_control = u.buf;
		m.msg_controllen = sizeof u.buf;
		struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &s, sizeof s);
	}
	ssize_t w = sendmsg(chan, &m, MSG_NOSIGNAL);
	if (s >= 0)
		close(s);
	return w < 0 ? -1 : 0;
}

static int g_dns_chan = -1; /* the sentry's end of the DNS channel */

int netd_dns_channel(void)
{
	return g_dns_chan;
}

pid_t netd_start(const struct netpolicy *pol, int *chan_out, char *err, size_t errlen)
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
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid < 0) {
		snprintf(err, errlen, "moat-netd: fork: %s", strerror(errno));
		close(sv[0]);
		close(sv[1]);
		close(dv[0]);
		close(dv[1]);
		return -1;
	}
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(1);
		prctl(PR_SET_NAME, "moat-netd");
		prctl(PR_SET_DUMPABLE, 0);
		/* keep stderr and the channel only */
		int chan = dup2(sv[1], 3), dchan = dup2(dv[1], 4);
		if (chan < 0 || dchan < 0 || syscall(SYS_close_range, 5, ~0U, 0) < 0)
			_exit(1);
		sigset_t all;
		sigfillset(&all);
		sigprocmask(SIG_SETMASK, &all, NULL); /* the sentry's signals are not ours */
		if (confine_netd(chan, dchan) < 0) {
			fprintf(stderr, "moat-netd: cannot confine itself\n");
			_exit(1);
		}
		/* this process's own copy: DNS answers are remembered in it */
		struct netpolicy *mine = (struct netpolicy *)pol;
		struct dns_q d = { .sock = -1 };
		for (;;) {
			/* connects are answered at once; one DNS question may
			 * be in flight meanwhile (its channel waits for it) */
			struct pollfd pf[3] = { { chan, POLLIN, 0 }, { d.sock < 0 ? dchan : -1, POLLIN, 0 },
						{ d.sock, POLLIN, 0 } };
			int wait = -1;
			if (d.sock >= 0) {
				long long left = d.deadline_ms - now_ms();
				wait = left > 0 ? (int)left : 0;
			}
			int r = poll(pf, 3, wait);
			if (r < 0 && errno != EINTR)
				break;
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
