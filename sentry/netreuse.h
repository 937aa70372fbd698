/* sentry/netreuse.h - SO_REUSEPORT groups kept per virtual owner (netreuse.c). */
#ifndef MOAT_SENTRY_NETREUSE_H
#define MOAT_SENTRY_NETREUSE_H

#include <stddef.h>

struct sc_call;

/* bind(hfd, sa, len) on the pinned file, by the sentry or moat-netd: 0 or -errno */
typedef long (*netreuse_bind_fn)(struct sc_call *c, int hfd, const void *sa, size_t len);

/* Some socket wants SO_REUSEPORT (a bind stop then looks at the socket). */
int netreuse_active(void);
/* The socket hfd (pinned) wants SO_REUSEPORT: its bind goes to netreuse_bind. */
int netreuse_wanted(int hfd);
/* setsockopt(SOL_SOCKET, SO_REUSEPORT or SO_REUSEADDR, val) of the guest, on the
 * pinned file of a socket of the guest's namespace. 0 or -errno. */
long netreuse_setsockopt(struct sc_call *c, int hfd, int name, int val);
/* The bind of a socket that wants SO_REUSEPORT, with the address copied once. */
long netreuse_bind(struct sc_call *c, int hfd, const void *sa, size_t len, netreuse_bind_fn dobind);

#endif
