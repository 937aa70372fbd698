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
 * One request: {family, type, protocol, destination, options}. netd checks the
 * destination against its policy (a compromised sentry can only ask for
 * destinations the policy allows), makes a non-blocking socket, applies the
 * allowlisted socket options, connects, and answers {err, rule} with the
 * socket (SCM_RIGHTS) when err is 0 or EINPROGRESS. Waiting for a blocking
 * guest's connection is the sentry worker's job (poll on the socket), so netd
 * never blocks and serves requests one at a time.
 */
#include "sentry/netd.h"
#include "sentry/netpolicy.h"
#include "common/log.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

static int confine_netd(int chan)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_KILL_PROCESS);
	if (!ctx)
		return -1;
	static const int plain[] = {
		SCMP_SYS(connect), SCMP_SYS(setsockopt), SCMP_SYS(getsockopt), SCMP_SYS(close),
		SCMP_SYS(fcntl), SCMP_SYS(exit), SCMP_SYS(exit_group), SCMP_SYS(rt_sigreturn),
		SCMP_SYS(brk), SCMP_SYS(munmap), SCMP_SYS(write), /* diagnostics on stderr */
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
	/* malloc's arenas (anonymous memory only) */
	struct scmp_arg_cmp anon = { .arg = 4, .op = SCMP_CMP_EQ, .datum_a = (scmp_datum_t)-1 };
	if (!rc)
		rc = seccomp_rule_add_array(ctx, SCMP_ACT_ALLOW, SCMP_SYS(mmap), 1, &anon);
	if (!rc)
		rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 1);
	if (!rc)
		rc = seccomp_load(ctx);
	seccomp_release(ctx);
	return rc ? -1 : 0;
}

static int serve_one(int chan, const struct netpolicy *pol)
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
	if (n != (ssize_t)sizeof q || q.addrlen > sizeof q.addr || q.nopts > NETD_MAX_OPTS ||
	    (q.family != AF_INET && q.family != AF_INET6) || proto < 0 ||
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
	s = socket(q.family, q.type | SOCK_NONBLOCK | SOCK_CLOEXEC,
		   proto == NP_TCP ? IPPROTO_TCP : IPPROTO_UDP);
	if (s < 0) {
		rep.err = errno;
		goto reply;
	}
	for (uint32_t i = 0; i < q.nopts; i++)
		if (netd_option_allowed(q.opts[i].level, q.opts[i].name))
			(void)setsockopt(s, q.opts[i].level, q.opts[i].name, &q.opts[i].val,
					 sizeof q.opts[i].val);
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

pid_t netd_start(const struct netpolicy *pol, int *chan_out, char *err, size_t errlen)
{
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		snprintf(err, errlen, "moat-netd: socketpair: %s", strerror(errno));
		return -1;
	}
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid < 0) {
		snprintf(err, errlen, "moat-netd: fork: %s", strerror(errno));
		close(sv[0]);
		close(sv[1]);
		return -1;
	}
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(1);
		prctl(PR_SET_NAME, "moat-netd");
		prctl(PR_SET_DUMPABLE, 0);
		/* keep stderr and the channel only */
		int chan = dup2(sv[1], 3);
		if (chan < 0 || syscall(SYS_close_range, 4, ~0U, 0) < 0)
			_exit(1);
		sigset_t all;
		sigfillset(&all);
		sigprocmask(SIG_SETMASK, &all, NULL); /* the sentry's signals are not ours */
		if (confine_netd(chan) < 0) {
			fprintf(stderr, "moat-netd: cannot confine itself\n");
			_exit(1);
		}
		while (serve_one(chan, pol) == 0)
			;
		_exit(0);
	}
	close(sv[1]);
	*chan_out = sv[0];
	return pid;
}
