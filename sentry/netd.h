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

#define NETD_MAX_OPTS 14

/* CONNECT: a new socket of the host's namespace, connected (policy).
 * RESOLVE: a DNS question. GUESTNS: the one socket (SCM_RIGHTS) that names
 * the guest's network namespace, sent once before the guest exists.
 * LOCAL_CONNECT, BIND, LISTEN: that call on the socket sent with the
 * request (the exact file the sentry pinned), done only when it belongs to
 * the guest's network namespace (netd checks its cookie itself).
 * SEND: one UDP datagram, the payload after the request in the same
 * SEQPACKET message. With a socket attached (SCM_RIGHTS: one moat-netd made
 * earlier, held by the guest; netd checks it is of its own namespace) netd
 * sends from a twin on its port; without one it makes the guest's socket
 * (q.family, q.opts applied, bound, shut for writing), sends from a twin,
 * and hands it back. */
/* RELAY: one end of the connected-UDP relay (a UDP socket of the guest's
 * namespace moat-init bound on its loopback; SCM_RIGHTS), sent once per
 * family after GUESTNS, before the guest exists; netd keeps it. The same
 * for the relay's raw ICMP (IPv4) and ICMPv6 sockets of that namespace: netd
 * sends its destinations' errors on with them (netd.c relay_icmp).
 * UDP_CONNECT: connect the guest's UDP socket sent with the request (the
 * pinned file, of the guest's namespace) to the relay, for q.addr (policy):
 * netd makes the host-side socket connected to q.addr and relays. */
/* DISCONNECT: connect(AF_UNSPEC) on the socket sent with the request (any
 * namespace: a disconnect reaches nothing). SETSOCKOPT: a socket option
 * outside the filter's allow list (opts[0]; the value is the payload) on
 * the socket sent with the request, only of the guest's namespace (EPERM
 * otherwise: netconn.c setsockopt_other). */
enum { NETD_CONNECT = 0, NETD_RESOLVE = 1, NETD_GUESTNS = 2, NETD_LOCAL_CONNECT = 3, NETD_BIND = 4,
       NETD_LISTEN = 5, NETD_SEND = 6, NETD_RELAY = 7, NETD_UDP_CONNECT = 8, NETD_DISCONNECT = 9,
       NETD_SETSOCKOPT = 10 };
/* connected UDP sockets relayed at once per sandbox (the least recently
 * used is dropped beyond) */
#define NETD_MAX_RELAYS 128
#define NETD_MAX_DGRAM 65536

struct netd_req {
	int32_t op;               /* NETD_* */
	int32_t backlog;          /* LISTEN */
	char name[256];           /* RESOLVE: the host name (NUL-terminated) */
	int32_t qtype;            /* RESOLVE: 1 (A) or 28 (AAAA) */
	int32_t family, type;     /* AF_INET/AF_INET6; SOCK_STREAM/SOCK_DGRAM */
	int32_t flags;            /* SEND: the guest's MSG_* flags (netd keeps a safe few) */
	uint32_t addrlen;
	uint8_t addr[128];        /* sockaddr_in or sockaddr_in6 (LOCAL_CONNECT: any, as the guest gave it) */
	uint32_t nopts;
	struct {
		int32_t level, name, val;
	} opts[NETD_MAX_OPTS];
	int64_t tmo[2][2];        /* the guest socket's SO_RCVTIMEO, SO_SNDTIMEO: s, us (0, 0: none) */
	int32_t linger[2];        /* its SO_LINGER: l_onoff, l_linger */
};

struct netd_rep {
	int32_t err;              /* 0, EINPROGRESS (socket attached), or an errno */
	int32_t rule;             /* index of the rule that allowed it, -1 */
	/* RESOLVE: the DNS answer code and the addresses netd now allows for
	 * the rule (answers in a denied range are left out and counted) */
	int32_t rcode;
	uint32_t ttl, naddr, nrefused;
	uint8_t addrs[16][16];
	int64_t sent;             /* SEND: bytes sent */
	uint32_t secrets;         /* CONNECT: brokered for these --secret slots (0: a plain socket) */
	uint32_t namelen;         /* UDP_CONNECT: the host-side socket's own address (0: none) */
	uint8_t name[28];         /* (a sockaddr_in or sockaddr_in6, of the guest socket's family) */
	int32_t slot;             /* UDP_CONNECT: the relay's slot (0..NETD_MAX_RELAYS-1): the sentry
				   * keeps the destination in the same one, so its table is netd's */
	int64_t netd_ns;          /* netd's own time on the request, ns (MOAT_PROFILE) */
	int32_t host_local;       /* CONNECT/SEND/UDP_CONNECT: refused as one of the host's own
				   * addresses no rule names alone (ENETUNREACH; netd.c host_local) */
};

#define NETDNS_MAX_ADDRS 16

/* Fork moat-netd (after the privilege drop, before the guest exists). Returns
 * its pid and the sentry's end of the channel in *chan, or -1 (err).
 * broker: moat-broker's channel (--secret; -1 without): netd keeps it and
 * the caller closes its copy. */
pid_t netd_start(const struct netpolicy *pol, int broker, int *chan, char *err, size_t errlen);
/* The sentry's end of netd's DNS channel (RESOLVE requests), or -1. */
int netd_dns_channel(void);
/* --publish (netpub.c): bind the host listeners, fork moat-publish into the
 * guest's network namespace (netns_fd). Its pid, or -1 (err). */
pid_t netpub_start(const int *hostport, const int *guestport, int n, int netns_fd, char *err,
		   size_t errlen);
/* The DNS stub (netdns.c): a thread serving the socket moat-init bound in the
 * guest's netns. */
int netdns_start(struct sandbox *sb, int fd);
/* Remember addresses netd resolved for a name in the sentry's copy, for
 * every rule covering it (locked). */
void netconn_remember(const char *name, int family, const uint8_t *addr);
/* Ask netd (serialised). 0 or -errno; *sfd: a socket for CONNECT, else -1. */
int netconn_ask(struct netd_req *q, struct netd_rep *rep, int *sfd);
const struct netpolicy *netconn_policy(void);
/* The --secret NAMEs of a mask of slots ("K1,K2"), for audit notes. */
void netconn_secret_names(uint32_t mask, char *buf, size_t len);
int netd_option_allowed(int level, int name);
/* the most bytes of a NETD_SETSOCKOPT value */
#define NETD_OPTVAL_MAX 4096

/* ---- the sentry's side (netconn.c) ---- */
/* The relay's guest-side sockets and its raw ICMP/ICMPv6 sockets (spawn.c;
 * -1 where none): handed to moat-netd and closed here. After
 * netconn_set_guest_netns. */
void netconn_set_relays(const int ends[2], const int icmp[2]);
/* Set up: the policy and netd's channel (-1: --net none, no netd). */
void netconn_init(const struct netpolicy *pol, int netd_chan);
/* The ptrace stop of connect with an AF_INET/AF_INET6 address (unixsock.c),
 * without moat-netd only (with it, connect is netconn_connect's):
 * 1 = let it run natively (the guest's own loopback, or an address the kernel
 * will refuse), 0 = regs rewritten (skipped with ENETUNREACH, audited). */
struct user_regs_struct;
int netconn_stop(struct sandbox *sb, struct task *t, void *regs, const void *sa, size_t len);
/* sendto/sendmsg/sendmmsg at their stop (unixsock.c), before anything else
 * looks at the address. kind: NETSEND_TO/MSG/MMSG. 1 = not a datagram send
 * moat-netd is concerned with (the caller goes on), 0 = decided (regs
 * rewritten: skipped with an errno, or turned into the net send call).
 *   - a socket moat-netd made (the host's netns), UDP: never native (the
 *     msghdr and the address are in guest memory); every such send becomes
 *     the net send call, the address copied here once;
 *   - the guest's own inet datagram socket with an inet address: the guest's
 *     loopback stays native (1), an allowed destination becomes the net send
 *     call (a netd socket, shut for writing, replaces the guest's), anything
 *     else ENETUNREACH. */
enum { NETSEND_TO = 1, NETSEND_MSG = 2, NETSEND_MMSG = 3 };
int netconn_send_stop(struct sandbox *sb, struct task *t, void *regs, int kind);
/* sendto/sendmsg/sendmmsg with MSG_FASTOPEN: refused (0, skipped and
 * audited) on a socket moat-netd made, whatever the address (it is in guest
 * memory), else 1. */
int netconn_fastopen_stop(struct sandbox *sb, struct task *t, void *regs, const char *call);
/* listen: without netd, native (1). With netd, always turned into the net
 * call (0): moat-netd listens on the exact file if it is the guest's, else
 * EOPNOTSUPP (a disconnected netd socket would listen in the host's
 * namespace; a check here and a native listen would race an fd swap). */
int netconn_listen_stop(struct sandbox *sb, struct task *t, void *regs);
/* With netd running, no connect, bind or listen of the guest runs natively
 * after a check (1 = strict). */
int netconn_strict(void);
/* connect with netd running: a user notification whatever the address
 * (run.c routes it so), answered here from the pipeline's copy of the
 * address; the calls are made on the pinned file (worker thread). */
long netconn_connect(struct sc_call *c);
/* bind with an inet address: as listen (0 = turned into the net call). */
int netconn_bind_stop(struct sandbox *sb, struct task *t, void *regs, const void *sa, size_t len);
/* Without netd: a bind of a socket that wants SO_REUSEPORT goes to a worker
 * (netreuse.c). 0 = rewritten, 1 = native. */
int netconn_reuse_bind_stop(struct sandbox *sb, struct task *t, void *regs, const void *sa, size_t len);
/* A bind stop made by a worker on the pinned file with the stop's copy of
 * the address, with netd or without it (the caller's stdio holds an AF_UNIX
 * socket: an abstract name on a socket of the host's namespace is EPERM,
 * red teams 66 and 70). 0: taken. */
int netconn_copy_bind_stop(struct sandbox *sb, struct task *t, void *regs, const void *sa, size_t len);
/* fd: a socket of the guest's network namespace (the DNS stub's): its
 * netns cookie tells the guest's own sockets from moat-netd's. */
void netconn_set_guest_netns(int fd);
/* The request a bind/listen/send stop left for the thread's private call
 * goes: the thread made another trapped call (pipeline.c, tracer.c). */
void netconn_drop_pending(struct task *t);
/* At a signal-delivery stop (tracer.c, regs just read): if the stop is the
 * thread's private call's wait, interrupted before a worker took it, the
 * request stays and the private call is made again at once with every
 * signal blocked (t->net_hold; the signal is queued again, blocked, and
 * delivered after the call); else the request goes. 1 = held (regs set:
 * resume with PTRACE_SYSCALL), 0 = not. */
int netconn_signal_stop(struct task *t, void *regs);
/* A syscall stop of a held thread: at its exit its own mask goes back.
 * Returns the ptrace request to resume with. */
int netconn_hold_stop(struct task *t);
/* The rewritten bind/listen (MOAT_SYS_LOADER, MOAT_NET_BIND/LISTEN): worker thread. */
long netconn_call(struct sc_call *c);
/* MOAT_PROFILE: the connect path's stages, mean wall time (at exit). */
void netconn_profile_report(void);
/* MOAT_TEST_CONFINEMENT: ask netd for denied destinations, print probe lines. */
void netconn_selftest(void);

#define NETDNS_STUB_ADDR "127.0.0.53" /* in the guest netns, port 53/udp */
#define MOAT_NET_BIND 0x6e6562    /* "neb": arg0 of MOAT_SYS_LOADER for a bind made by netd */
#define MOAT_NET_LISTEN 0x6e656c  /* the same for a listen */
#define MOAT_NET_SEND 0x6e6575    /* the same for a UDP send (arg2: kind) */
/* The rewritten send (MOAT_SYS_LOADER, MOAT_NET_SEND, fd, kind): worker. */
long netconn_send_call(struct sc_call *c);

#endif
