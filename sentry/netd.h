/* sentry/netd.h - moat-netd (netd.c) and the sentry's side of it (netconn.c). */
#ifndef MOAT_SENTRY_NETD_H
#define MOAT_SENTRY_NETD_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct netpolicy;
struct sandbox;
struct task;
struct sc_call;

#define NETD_MAX_OPTS 12

enum { NETD_CONNECT = 0, NETD_RESOLVE = 1 };

struct netd_req {
	int32_t op;               /* NETD_CONNECT or NETD_RESOLVE */
	char name[256];           /* RESOLVE: the host name (NUL-terminated) */
	int32_t qtype;            /* RESOLVE: 1 (A) or 28 (AAAA) */
	int32_t family, type;     /* AF_INET/AF_INET6; SOCK_STREAM/SOCK_DGRAM */
	uint32_t addrlen;
	uint8_t addr[28];         /* sockaddr_in or sockaddr_in6 */
	uint32_t nopts;
	struct {
		int32_t level, name, val;
	} opts[NETD_MAX_OPTS];
};

struct netd_rep {
	int32_t err;              /* 0, EINPROGRESS (socket attached), or an errno */
	int32_t rule;             /* index of the rule that allowed it, -1 */
	/* RESOLVE: the DNS answer code and the addresses netd now allows for
	 * the rule (answers in a denied range are left out and counted) */
	int32_t rcode;
	uint32_t ttl, naddr, nrefused;
	uint8_t addrs[16][16];
};

#define NETDNS_MAX_ADDRS 16

/* Fork moat-netd (after the privilege drop, before the guest exists). Returns
 * its pid and the sentry's end of the channel in *chan, or -1 (err). */
pid_t netd_start(const struct netpolicy *pol, int *chan, char *err, size_t errlen);
/* The sentry's end of netd's DNS channel (RESOLVE requests), or -1. */
int netd_dns_channel(void);
/* --publish (netpub.c): bind the host listeners, fork moat-publish into the
 * guest's network namespace (netns_fd). Its pid, or -1 (err). */
pid_t netpub_start(const int *hostport, const int *guestport, int n, int netns_fd, char *err,
		   size_t errlen);
/* The DNS stub (netdns.c): a thread serving the socket moat-init bound in the
 * guest's netns. */
int netdns_start(struct sandbox *sb, int fd);
/* Remember addresses netd resolved for rule i in the sentry's copy (locked). */
void netconn_remember(int rule, int family, const uint8_t *addr);
/* Ask netd (serialised). 0 or -errno; *sfd: a socket for CONNECT, else -1. */
int netconn_ask(struct netd_req *q, struct netd_rep *rep, int *sfd);
const struct netpolicy *netconn_policy(void);
int netd_option_allowed(int level, int name);
/* A locked socket filter on s: only packets from a:port get in (netd.c). */
struct netpol_addr;
int netd_peer_filter(int s, const struct netpol_addr *a, uint16_t port);

/* ---- the sentry's side (netconn.c) ---- */
/* Set up: the policy and netd's channel (-1: --net none, no netd). */
void netconn_init(const struct netpolicy *pol, int netd_chan);
/* The ptrace stop of connect with an AF_INET/AF_INET6 address (unixsock.c):
 * 1 = let it run natively (the guest's own loopback, or an address the kernel
 * will refuse), 0 = regs rewritten (skipped with an errno, or turned into the
 * net call below). */
struct user_regs_struct;
int netconn_stop(struct sandbox *sb, struct task *t, void *regs, const void *sa, size_t len);
/* sendto/sendmsg with an inet address on a datagram socket (netconn.c): the
 * guest's own loopback stays native (1); anything else is skipped with
 * ENETUNREACH and audited (0): there is no UDP egress. */
int netconn_send_stop(struct sandbox *sb, struct task *t, void *regs, const void *sa, size_t len,
		      const char *call, int flags);
/* sendto/sendmsg/sendmmsg with MSG_FASTOPEN: refused (0, skipped and
 * audited) on a socket moat-netd made, whatever the address (it is in guest
 * memory), else 1. */
int netconn_fastopen_stop(struct sandbox *sb, struct task *t, void *regs, const char *call);
/* connect on a socket moat-netd made: never native with a guest address */
int netconn_host_connect_stop(struct sandbox *sb, struct task *t, void *regs);
/* listen: refused (0, skipped and audited) on a socket moat-netd made (a
 * disconnected one would listen in the host's namespace), else 1. */
int netconn_listen_stop(struct sandbox *sb, struct task *t, void *regs);
/* fd: a socket of the guest's network namespace (the DNS stub's): its
 * netns cookie tells the guest's own sockets from moat-netd's. */
void netconn_set_guest_netns(int fd);
/* The rewritten call (MOAT_SYS_LOADER, MOAT_NET_CONNECT): worker thread. */
long netconn_call(struct sc_call *c);
/* MOAT_TEST_CONFINEMENT: ask netd for denied destinations, print probe lines. */
void netconn_selftest(void);

#define NETDNS_STUB_ADDR "127.0.0.53" /* in the guest netns, port 53/udp */
#define MOAT_NET_CONNECT 0x6e6574 /* "net": arg0 of MOAT_SYS_LOADER for the net call */

#endif
