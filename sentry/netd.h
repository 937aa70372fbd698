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

struct netd_req {
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
};

/* Fork moat-netd (after the privilege drop, before the guest exists). Returns
 * its pid and the sentry's end of the channel in *chan, or -1 (err). */
pid_t netd_start(const struct netpolicy *pol, int *chan, char *err, size_t errlen);
int netd_option_allowed(int level, int name);

/* ---- the sentry's side (netconn.c) ---- */
/* Set up: the policy and netd's channel (-1: --net none, no netd). */
void netconn_init(const struct netpolicy *pol, int netd_chan);
/* The ptrace stop of connect with an AF_INET/AF_INET6 address (unixsock.c):
 * 1 = let it run natively (the guest's own loopback, or an address the kernel
 * will refuse), 0 = regs rewritten (skipped with an errno, or turned into the
 * net call below). */
struct user_regs_struct;
int netconn_stop(struct sandbox *sb, struct task *t, void *regs, const void *sa, size_t len);
/* The rewritten call (MOAT_SYS_LOADER, MOAT_NET_CONNECT): worker thread. */
long netconn_call(struct sc_call *c);
/* MOAT_TEST_CONFINEMENT: ask netd for denied destinations, print probe lines. */
void netconn_selftest(void);

#define MOAT_NET_CONNECT 0x6e6574 /* "net": arg0 of MOAT_SYS_LOADER for the net call */

#endif
