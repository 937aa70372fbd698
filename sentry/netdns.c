/* sentry/netdns.c - the guest's DNS stub.
 *
 * With --net allow=, the guest's /etc/resolv.conf (a symlink mount to the
 * synthetic /proc/moat-resolv.conf) names 127.0.0.53, and moat-init bound a
 * UDP socket there in the guest's network namespace before the program
 * existed; the sentry holds it and one thread serves it. A question
 * (one, class IN) for a name no rule covers is NXDOMAIN; for a covered name,
 * A and AAAA are asked of moat-netd, which queries the host's nameserver (its
 * own UDP socket), keeps only answers outside the special ranges (loopback,
 * link-local, private...: DNS rebinding is refused), remembers them for the
 * rule in its policy, and returns them; the sentry remembers them in its copy
 * and answers. Other types of a covered name: no data. A rule by name
 * therefore allows exactly the addresses resolved for it. Every question is
 * an audit event ("dns").
 */
#include "sentry/dnswire.h"
#include "sentry/netd.h"
#include "sentry/netpolicy.h"
#include "sentry/sentry.h"
#include "kernel/task.h"
#include "common/util.h"
#include "syscalls/decode.h"

#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

static struct sandbox *g_sb;
static int g_fd = -1;

static void serve(const uint8_t *q, int n, struct sockaddr_storage *from, socklen_t fromlen)
{
	uint8_t out[1024];
	char name[256];
	int qtype = 0, qclass = 0;
	if (n < 12 || (q[2] & 0x80) || (q[2] & 0x78) || (q[4] << 8 | q[5]) != 1)
		return; /* not a standard query with one question: drop */
	int qend = dns_parse_question(q, n, name, sizeof name, &qtype, &qclass);
	if (qend < 0)
		return;
	memcpy(out, q, (size_t)qend);
	out[2] = (uint8_t)(0x80 | (q[2] & 0x01)); /* QR, RD copied */
	out[3] = 0x80;                           /* RA */
	memset(out + 6, 0, 6);                    /* AN, NS, AR = 0 */
	int len = qend, rcode = 0, rule;
	char note[160];
	rule = netpolicy_match_name(netconn_policy(), name);
	if (rule < 0) {
		rcode = 3; /* NXDOMAIN */
		snprintf(note, sizeof note, "no rule names it"); /* (the name: args, quoted) */
	} else if (qclass != 1 || (qtype != 1 && qtype != 28)) {
		snprintf(note, sizeof note, "rule %d: type %d, no data", rule, qtype);
	} else {
		struct netd_req rq;
		struct netd_rep rep;
		memset(&rq, 0, sizeof rq);
		rq.op = NETD_RESOLVE;
		snprintf(rq.name, sizeof rq.name, "%s", name);
		rq.qtype = qtype;
		int sfd = -1;
		if (netconn_ask(&rq, &rep, &sfd) < 0) {
			rcode = 2;
		} else {
			rcode = rep.rcode == 0 || rep.rcode == 3 ? rep.rcode : 2;
			int alen = qtype == 1 ? 4 : 16;
			unsigned k;
			for (k = 0; k < rep.naddr && k < NETDNS_MAX_ADDRS && len + 12 + alen <= (int)sizeof out; k++) {
				netconn_remember(name, qtype == 1 ? AF_INET : AF_INET6, rep.addrs[k]);
				uint8_t *a = out + len;
				a[0] = 0xc0, a[1] = 12;                   /* the question's name */
				a[2] = 0, a[3] = (uint8_t)qtype, a[4] = 0, a[5] = 1;
				uint32_t ttl = rep.ttl > 300 ? 300 : rep.ttl;
				a[6] = (uint8_t)(ttl >> 24), a[7] = (uint8_t)(ttl >> 16);
				a[8] = (uint8_t)(ttl >> 8), a[9] = (uint8_t)ttl;
				a[10] = 0, a[11] = (uint8_t)alen;
				memcpy(a + 12, rep.addrs[k], (size_t)alen);
				len += 12 + alen;
			}
			out[6] = (uint8_t)(k >> 8), out[7] = (uint8_t)k;
			/* rep.rule is moat-netd's word: an index into the
			 * sentry's policy only when it is one (fuzzdns) */
			const struct netpolicy *pol = netconn_policy();
			snprintf(note, sizeof note, "rule %d (%.60s): %u address(es), %u refused (denied range)",
				 rep.rule, rep.rule >= 0 && rep.rule < pol->nrules ? pol->rules[rep.rule].text : "",
				 k, rep.nrefused);
		}
		if (rcode == 2)
			snprintf(note, sizeof note, "rule %d: upstream failed", rule);
	}
	out[3] = (uint8_t)(0x80 | rcode);
	sendto(g_fd, out, (size_t)len, MSG_NOSIGNAL, (struct sockaddr *)from, fromlen);
	char args[1100];
	size_t an = sc_quote_str(args, sizeof args - 16, name, 200);
	snprintf(args + an, sizeof args - an, ", type %d", qtype);
	/* the result is the DNS rcode: 0 NOERROR, 2 SERVFAIL, 3 NXDOMAIN */
	audit_event(g_sb->audit, g_sb, NULL, 0, "dns", args, rcode == 3 ? DEC_DENY : DEC_ALLOW,
		    rcode, note);
}

static void *loop(void *arg)
{
	(void)arg;
	uint8_t buf[1500];
	for (;;) {
		struct sockaddr_storage from;
		socklen_t fl = sizeof from;
		ssize_t n = recvfrom(g_fd, buf, sizeof buf, 0, (struct sockaddr *)&from, &fl);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return NULL;
		}
		serve(buf, (int)n, &from, fl);
	}
}

int netdns_start(struct sandbox *sb, int fd)
{
	g_sb = sb;
	g_fd = fd;
	netconn_set_guest_netns(fd); /* bound in the guest's network namespace */
	pthread_t th;
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	int r = pthread_create(&th, NULL, loop, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r)
		return -r;
	pthread_detach(th);
	return 0;
}
