/* sentry/netreuse.c - SO_REUSEPORT groups across virtual users.
 *
 * Linux lets a socket join a reuseport group (TCP listeners, UDP sockets on
 * one address and port, sharing its connections or datagrams) only when its
 * owner is the group's (inet_bind_conflict compares sk_uid; no capability
 * is an exception). Every guest socket is the sandbox's one host uid, so
 * the kernel would let a process that dropped root join root's group. The
 * sentry keeps the owners itself:
 *
 *  - The kernel's SO_REUSEPORT flag is set only by the sentry, and only on a
 *    socket it bound itself to an explicit port (Linux then never unbinds
 *    it: SOCK_BINDPORT_LOCK; a port-0 or auto-bound socket would be unhashed
 *    again by a disconnect or a close and could then be bound natively with
 *    the flag). The guest's setsockopt(SO_REUSEPORT) is trapped (the table's
 *    ARGTRAP on the option number) and on an inet socket of the guest's own
 *    namespace only *recorded* (want[]: the socket's cookie and the caller's
 *    fsuid, the owner Linux would take from the socket's creator); any bind
 *    the kernel makes natively is a bind without the flag, whatever a thread
 *    swaps or rewrites: nothing native can join a group.
 *  - A bind of a socket that wants the flag is made here on the pinned file
 *    with the address copied once (by moat-netd with --net rules, on the
 *    same file): under one lock, first without SO_REUSEADDR and
 *    SO_REUSEPORT (a probe: it succeeds only when no socket at all holds a
 *    conflicting address and port, which proves every conflicting entry of
 *    ents[] gone), else — the port is held — with the flag, only when a
 *    conflicting entry is the caller's and none is another user's
 *    (EADDRINUSE otherwise, as Linux). Then the flag is set and the socket
 *    is an entry (owner, protocol, address, v6only, port, cookie).
 *    SO_REUSEADDR is trapped too and set here under the same lock, so the
 *    guest cannot turn it on between the probe's clear and its bind.
 *  - A bind to port 0 takes a random free port of the guest namespace's
 *    ephemeral range by explicit binds (the probe at each), so the socket
 *    stays bound.
 * Entries are dropped when a probe proves them gone or when the table is
 * full (the oldest: an entry lost while its socket lives only makes its own
 * owner's next bind to that port EADDRINUSE, since joining needs an entry
 * of the caller's).
 */
#include "sentry/netreuse.h"
#include "kernel/task.h"
#include "syscalls/sc.h"

#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <sys/socket.h>
#include <unistd.h>

#define WANT_MAX 256
#define ENT_MAX 1024
#define EPH_LO 32768 /* a new network namespace's ip_local_port_range; the guest */
#define EPH_HI 60999 /* cannot change it (no CAP_NET_ADMIN there) */

struct want {
	uint64_t cookie;
	uid_t uid;
};

struct ent {
	uint64_t cookie;
	uid_t uid;
	int proto;
	int family;
	int v6only;
	uint16_t port;
	uint8_t addr[16];
};

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static struct want g_want[WANT_MAX];
static int g_nwant;
static atomic_int g_active;
static struct ent g_ent[ENT_MAX];
static int g_nent;

static uint64_t sock_cookie(int fd)
{
	uint64_t c = 0;
	socklen_t l = sizeof c;
	return getsockopt(fd, SOL_SOCKET, SO_COOKIE, &c, &l) == 0 ? c : 0;
}

static int sock_int(int fd, int level, int name)
{
	int v = 0;
	socklen_t l = sizeof v;
	return getsockopt(fd, level, name, &v, &l) == 0 ? v : -1;
}

int netreuse_active(void)
{
	return atomic_load_explicit(&g_active, memory_order_relaxed) > 0;
}

static int want_find(uint64_t cookie)
{
	for (int i = 0; i < g_nwant; i++)
		if (g_want[i].cookie == cookie)
			return i;
	return -1;
}

static void want_del(int i)
{
	memmove(&g_want[i], &g_want[i + 1], (size_t)(g_nwant - i - 1) * sizeof g_want[0]);
	g_nwant--;
	atomic_store(&g_active, g_nwant);
}

static void want_add(uint64_t cookie, uid_t uid)
{
	if (want_find(cookie) >= 0)
		return; /* the first setter stays the owner */
	if (g_nwant == WANT_MAX)
		want_del(0); /* the oldest: its bind goes without the flag */
	g_want[g_nwant].cookie = cookie;
	g_want[g_nwant].uid = uid;
	g_nwant++;
	atomic_store(&g_active, g_nwant);
}

static int ent_find(uint64_t cookie)
{
	for (int i = 0; i < g_nent; i++)
		if (g_ent[i].cookie == cookie)
			return i;
	return -1;
}

static void ent_del(int i)
{
	memmove(&g_ent[i], &g_ent[i + 1], (size_t)(g_nent - i - 1) * sizeof g_ent[0]);
	g_nent--;
}

static int is_inet(int fd)
{
	int d = sock_int(fd, SOL_SOCKET, SO_DOMAIN);
	return d == AF_INET || d == AF_INET6;
}

int netreuse_wanted(int hfd)
{
	if (!netreuse_active())
		return 0;
	uint64_t ck = sock_cookie(hfd);
	if (!ck)
		return 0;
	pthread_mutex_lock(&g_mu);
	int r = want_find(ck) >= 0;
	pthread_mutex_unlock(&g_mu);
	return r;
}

long netreuse_setsockopt(struct sc_call *c, int hfd, int name, int val)
{
	if (name == SO_REUSEADDR) {
		/* under the lock: never between a bind probe's clear and bind */
		pthread_mutex_lock(&g_mu);
		long r = setsockopt(hfd, SOL_SOCKET, SO_REUSEADDR, &val, sizeof val) < 0 ? -errno : 0;
		pthread_mutex_unlock(&g_mu);
		return r;
	}
	if (!is_inet(hfd)) /* the kernel answers (EOPNOTSUPP for a set on AF_UNIX) */
		return setsockopt(hfd, SOL_SOCKET, SO_REUSEPORT, &val, sizeof val) < 0 ? -errno : 0;
	uint64_t ck = sock_cookie(hfd);
	if (!ck)
		return -ENOTSOCK;
	uid_t uid = c->task->cred.fsuid;
	long r = 0;
	pthread_mutex_lock(&g_mu);
	int e = ent_find(ck);
	if (e >= 0) {
		/* bound here with the flag: only clearing it changes anything */
		if (!val) {
			int z = 0;
			r = setsockopt(hfd, SOL_SOCKET, SO_REUSEPORT, &z, sizeof z) < 0 ? -errno : 0;
			if (!r)
				ent_del(e);
		}
	} else if (val) {
		want_add(ck, uid);
	} else {
		int w = want_find(ck);
		if (w >= 0)
			want_del(w);
	}
	pthread_mutex_unlock(&g_mu);
	snprintf(c->note, sizeof c->note, "SO_REUSEPORT kept by the sentry (owner uid %u)", (unsigned)uid);
	return r;
}

/* Linux's inet_rcv_saddr_equal(binder, holder, match_wildcard=true): does
 * a bind of b conflict with a socket bound as e? */
static uint32_t v4_of(const struct ent *x)
{
	uint32_t a;
	if (x->family == AF_INET) {
		memcpy(&a, x->addr, 4);
		return a;
	}
	static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	static const uint8_t any[16];
	if (!memcmp(x->addr, mapped, 12)) {
		memcpy(&a, x->addr + 12, 4);
		return a;
	}
	if (!memcmp(x->addr, any, 16))
		return 0;
	return htonl(0x7f000006); /* LOOPBACK4_IPV6: a v6 address's sk_rcv_saddr */
}

enum { T_ANY, T_MAPPED, T_OTHER };

static int v6_type(const struct ent *x)
{
	static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	static const uint8_t any[16];
	if (x->family == AF_INET)
		return T_MAPPED;
	if (!memcmp(x->addr, any, 16))
		return T_ANY;
	if (!memcmp(x->addr, mapped, 12))
		return T_MAPPED;
	return T_OTHER;
}

static int conflicts(const struct ent *b, const struct ent *e)
{
	if (b->proto != e->proto || b->port != e->port)
		return 0;
	uint32_t b4 = v4_of(b), e4 = v4_of(e);
	if (b->family == AF_INET) {
		if (e->v6only)
			return 0;
		return b4 == e4 || !b4 || !e4;
	}
	int t1 = v6_type(b), t2 = v6_type(e);
	if (t1 == T_MAPPED && t2 == T_MAPPED) {
		if (e->v6only)
			return 0;
		return b4 == e4 || !b4 || !e4;
	}
	if (t1 == T_ANY && t2 == T_ANY)
		return 1;
	if (t2 == T_ANY && !(e->v6only && t1 == T_MAPPED))
		return 1;
	if (t1 == T_ANY && !(b->v6only && t2 == T_MAPPED))
		return 1;
	return e->family == AF_INET6 && !memcmp(b->addr, e->addr, 16);
}

static void set_port(void *sa, int family, uint16_t port)
{
	if (family == AF_INET)
		((struct sockaddr_in *)sa)->sin_port = htons(port);
	else
		((struct sockaddr_in6 *)sa)->sin6_port = htons(port);
}

static uint32_t rnd(void)
{
	uint32_t v = 0;
	if (getrandom(&v, sizeof v, GRND_NONBLOCK) != sizeof v)
		v = (uint32_t)time(NULL) * 2654435761u;
	return v;
}

/* Drop every entry a successful probe at b proved gone; add b. */
static void settle(const struct ent *b)
{
	for (int i = 0; i < g_nent;) {
		if (conflicts(b, &g_ent[i]))
			ent_del(i);
		else
			i++;
	}
	if (g_nent == ENT_MAX)
		ent_del(0);
	g_ent[g_nent++] = *b;
}

long netreuse_bind(struct sc_call *c, int hfd, const void *sa, size_t len, netreuse_bind_fn dobind)
{
	struct sockaddr_in6 addr; /* the copy, as large as either family's */
	int dom = sock_int(hfd, SOL_SOCKET, SO_DOMAIN);
	sa_family_t fam = 0;
	if (len >= sizeof fam)
		memcpy(&fam, sa, sizeof fam);
	uint64_t ck = sock_cookie(hfd);
	struct sockaddr_storage cur;
	socklen_t cl = sizeof cur;
	int bound = getsockname(hfd, (struct sockaddr *)&cur, &cl) == 0 &&
		    ((cur.ss_family == AF_INET && ((struct sockaddr_in *)&cur)->sin_port) ||
		     (cur.ss_family == AF_INET6 && ((struct sockaddr_in6 *)&cur)->sin6_port));
	size_t need = fam == AF_INET ? sizeof(struct sockaddr_in) : 24; /* SIN6_LEN_RFC2133 */
	if (!ck || bound || (dom != AF_INET && dom != AF_INET6) || fam != dom || len < need)
		return dobind(c, hfd, sa, len); /* without the flag; the kernel answers */
	memset(&addr, 0, sizeof addr);
	memcpy(&addr, sa, len < sizeof addr ? len : sizeof addr);
	struct ent b;
	memset(&b, 0, sizeof b);
	b.cookie = ck;
	b.family = dom;
	b.proto = sock_int(hfd, SOL_SOCKET, SO_PROTOCOL);
	if (b.proto == 262) /* IPPROTO_MPTCP: TCP's ports */
		b.proto = IPPROTO_TCP;
	if (dom == AF_INET) {
		const struct sockaddr_in *s4 = (const struct sockaddr_in *)&addr;
		memcpy(b.addr, &s4->sin_addr, 4);
		b.port = ntohs(s4->sin_port);
	} else {
		memcpy(b.addr, &addr.sin6_addr, 16);
		b.port = ntohs(addr.sin6_port);
		b.v6only = sock_int(hfd, IPPROTO_IPV6, IPV6_V6ONLY) == 1;
	}
	size_t alen = dom == AF_INET ? sizeof(struct sockaddr_in) : len < sizeof addr ? len : sizeof addr;
	int one = 1, zero = 0;
	long r;
	pthread_mutex_lock(&g_mu);
	int w = want_find(ck);
	if (w < 0) { /* cleared meanwhile: a plain bind */
		pthread_mutex_unlock(&g_mu);
		return dobind(c, hfd, sa, len);
	}
	b.uid = g_want[w].uid;
	int reuseaddr = sock_int(hfd, SOL_SOCKET, SO_REUSEADDR) > 0;
	if (reuseaddr)
		(void)setsockopt(hfd, SOL_SOCKET, SO_REUSEADDR, &zero, sizeof zero);
	if (b.port == 0) {
		/* an explicit port, so that the socket stays bound */
		r = -EADDRINUSE;
		uint32_t span = EPH_HI - EPH_LO + 1, start = rnd() % span;
		for (uint32_t k = 0; k < span && r == -EADDRINUSE; k++) {
			uint16_t p = (uint16_t)(EPH_LO + (start + k * 7919u) % span);
			int taken = 0;
			for (int i = 0; i < g_nent && !taken; i++)
				taken = g_ent[i].port == p && g_ent[i].proto == b.proto;
			if (taken)
				continue;
			set_port(&addr, dom, p);
			r = dobind(c, hfd, &addr, alen);
			if (r == 0)
				b.port = p;
		}
	} else {
		r = dobind(c, hfd, &addr, alen);
	}
	if (r == 0) {
		/* nothing held a conflicting address: every conflicting entry is gone */
		(void)setsockopt(hfd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one);
		settle(&b);
		snprintf(c->note, sizeof c->note, "SO_REUSEPORT bind by the sentry: a new group of uid %u",
			 (unsigned)b.uid);
	} else if (r == -EADDRINUSE && b.port) {
		int mine = 0, other = 0;
		uid_t ou = 0;
		for (int i = 0; i < g_nent; i++) {
			if (!conflicts(&b, &g_ent[i]))
				continue;
			if (g_ent[i].uid == b.uid)
				mine = 1;
			else
				other = 1, ou = g_ent[i].uid;
		}
		if (reuseaddr)
			(void)setsockopt(hfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
		if (other) {
			snprintf(c->note, sizeof c->note,
				 "SO_REUSEPORT: the port's group belongs to uid %u (caller uid %u)", (unsigned)ou,
				 (unsigned)b.uid);
		} else if (mine) {
			(void)setsockopt(hfd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one);
			r = dobind(c, hfd, &addr, alen);
			if (r == 0) {
				if (g_nent == ENT_MAX)
					ent_del(0);
				g_ent[g_nent++] = b;
				snprintf(c->note, sizeof c->note, "SO_REUSEPORT bind by the sentry: joins uid %u's group",
					 (unsigned)b.uid);
			} else {
				(void)setsockopt(hfd, SOL_SOCKET, SO_REUSEPORT, &zero, sizeof zero);
			}
		}
		reuseaddr = 0; /* put back already */
	}
	if (reuseaddr)
		(void)setsockopt(hfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (r == 0 && (w = want_find(ck)) >= 0)
		want_del(w); /* an entry now: the kernel's flag is set */
	pthread_mutex_unlock(&g_mu);
	return r;
}
