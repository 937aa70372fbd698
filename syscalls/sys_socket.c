/* syscalls/sys_socket.c - AF_UNIX names: the bind table (sys_socket.h) and
 * getsockname/getpeername, which show a bound path instead of the abstract
 * name it lives under in the guest's network namespace; getpeername of a UDP
 * socket connected through moat-netd's relay shows its destination, and
 * getsockname the relay's host-side address (what the destination sees). */
#include <errno.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include "syscalls/sys_fs.h"
#include "syscalls/sys_socket.h"
#include "common/log.h"
#include "common/util.h"

#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <sys/un.h>

/* The names bound in this sandbox: a table that grows (doubling from
 * NBOUND_MIN) to NBOUND_MAX entries. Entries are not removed at unlink or
 * close (a bound socket outlives its name's unlink, and its path still
 * shows in getsockname): it was a ring of 1024, so 1024 short-lived binds
 * (a test runner's, a client's temporary sockets) made a server bound
 * first unreachable, connect ECONNREFUSED while it listened (red team 20;
 * a guest user could so cut off another's server in the sandbox). The
 * table of 16384 then forgot the oldest bind the same way (red team 22:
 * 16,500 binds of closed sockets, 5 s, and the server was ECONNREFUSED).
 * Now a full table first drops the names no socket holds any more (the
 * guest network namespace's /proc/net/unix, read through the guest procfs;
 * an entry younger than half a second is kept: its bind may not have run
 * yet), and a bind that still finds it full is ENOBUFS: a live name is
 * never forgotten. MOAT_TEST_UNIX_NAMES_MAX lowers the maximum (tests; never
 * raises it). */
#define NBOUND_MIN 64
#define NBOUND_MAX 16384

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct bound {
	dev_t dev;
	ino_t ino;
	uint64_t gen;           /* random, never 0 (sys_socket.h) */
	int type;
	int64_t when;           /* CLOCK_MONOTONIC ms of the bind */
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
} *bound; /* allocated on first bind: a sandbox that binds nothing pays nothing */
static unsigned nbound, nbound_cap, nbound_max;

static int64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

struct live_name {
	unsigned long long dev, ino, gen;
};

static int live_cmp(const void *a, const void *b)
{
	const struct live_name *x = a, *y = b;
	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	if (x->ino != y->ino)
		return x->ino < y->ino ? -1 : 1;
	return x->gen < y->gen ? -1 : x->gen > y->gen;
}

/* The fields of one of our names: s, n bytes from sun_path[1], whose
 * "moat/<sandbox>/" (pl bytes) was checked. The generation is 0 when the
 * name stops before it (a receive's copy: UNIX_NAME_SHOWN). 0, or -1. */
static int name_fields(const char *s, size_t n, int pl, unsigned long long *dev, unsigned long long *ino,
		       unsigned long long *gen)
{
	char f[sizeof(((struct sockaddr_un *)0)->sun_path)];
	if (n >= sizeof f)
		n = sizeof f - 1;
	memcpy(f, s, n);
	f[n] = 0;
	int k = 0;
	if (sscanf(f + pl, "%16llx:%16llx:%n", dev, ino, &k) != 2 || k != 34)
		return -1;
	*gen = n >= UNIX_NAME_GEN_AT - 1 + 16 ? strtoull(f + UNIX_NAME_GEN_AT - 1, NULL, 16) : 0;
	return 0;
}

/* Drop the entries whose abstract name no socket of the guest's network
 * namespace holds (vpid's /proc/net/unix), but those bound in the last
 * half second. Under the lock. Returns how many went, or -1 (unreadable). */
static int sweep_locked(struct sandbox *sb, pid_t vpid)
{
	char path[48], prefix[64];
	if (!sb || sb->guest_procfd < 0 || vpid <= 0)
		return -1;
	snprintf(path, sizeof path, "%d/net/unix", (int)vpid);
	int fd = openat(sb->guest_procfd, path, O_RDONLY | O_CLOEXEC);
	FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
	if (!f) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	int pl = snprintf(prefix, sizeof prefix, "@moat/%s/", sb->id_str);
	struct live_name *live = NULL;
	size_t n = 0, cap = 0;
	char line[512];
	while (fgets(line, sizeof line, f)) {
		char *p = strstr(line, prefix);
		struct live_name l;
		if (!p || name_fields(p + 1, strcspn(p + 1, " \n"), pl - 1, &l.dev, &l.ino, &l.gen) < 0)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 1024;
			struct live_name *nl = realloc(live, cap * sizeof *live);
			if (!nl) {
				free(live);
				fclose(f);
				return -1;
			}
			live = nl;
		}
		live[n++] = l;
	}
	fclose(f);
	if (n)
		qsort(live, n, sizeof *live, live_cmp);
	int64_t young = mono_ms() - 500;
	unsigned k = 0;
	for (unsigned i = 0; i < nbound && i < nbound_cap; i++) {
		struct live_name key = { bound[i].dev, bound[i].ino, bound[i].gen };
		if (bound[i].when > young || (n && bsearch(&key, live, n, sizeof *live, live_cmp)))
			bound[k++] = bound[i];
	}
	int gone = (int)(nbound - k);
	memset(bound + k, 0, (nbound_cap - k) * sizeof *bound);
	nbound = k;
	free(live);
	return gone;
}

static struct bound *find_locked(dev_t dev, ino_t ino)
{
	for (unsigned i = 0; bound && i < nbound && i < nbound_cap; i++)
		if (bound[i].dev == dev && bound[i].ino == ino && bound[i].gen)
			return &bound[i];
	return NULL;
}

/* 64 random bits, never 0. The counter it replaced was the only part of a
 * name a guest could not read off a stat: a dropped process learnt the
 * sandbox's prefix from a native accept (the peer's name), the dev and
 * inode from stat, counted the generation up from 1 and connected to a
 * root-only (0600) socket natively by its abstract name, past connect's
 * permission check (red team round 7). */
static uint64_t new_gen(void)
{
	uint64_t g = 0;
	while (!g)
		if (getrandom(&g, sizeof g, 0) != (ssize_t)sizeof g)
			die("getrandom: %s", strerror(errno));
	return g;
}

uint64_t unix_name_bind(struct sandbox *sb, pid_t vpid, dev_t dev, ino_t ino, const char *path, int type)
{
	uint64_t gen = new_gen();
	pthread_mutex_lock(&lock);
	if (!bound) {
		const char *e = getenv("MOAT_TEST_UNIX_NAMES_MAX");
		/* lower only (red team 91: a test knob in moat's environment
		 * never lifts a bound; before, any value above NBOUND_MIN) */
		nbound_max = e && atoi(e) >= NBOUND_MIN && atoi(e) < NBOUND_MAX ? (unsigned)atoi(e) : NBOUND_MAX;
		nbound_cap = NBOUND_MIN;
		__atomic_store_n(&bound, xcalloc(nbound_cap, sizeof *bound), __ATOMIC_RELEASE);
	}
	struct bound *b = find_locked(dev, ino);
	if (!b && nbound >= nbound_cap && nbound_cap >= nbound_max && sweep_locked(sb, vpid) <= 0) {
		/* full of live names: refused, none forgotten */
		pthread_mutex_unlock(&lock);
		return 0;
	}
	if (!b && nbound == nbound_cap && nbound_cap < nbound_max) {
		/* (every other reader holds the lock; unix_names_any only
		 * asks whether there is a table) */
		struct bound *nb = xcalloc(nbound_cap * 2, sizeof *nb);
		memcpy(nb, bound, nbound_cap * sizeof *nb);
		struct bound *old = bound;
		nbound_cap *= 2;
		__atomic_store_n(&bound, nb, __ATOMIC_RELEASE);
		free(old);
	}
	if (!b) {
		b = &bound[nbound++];
		b->dev = dev;
		b->ino = ino;
	}
	b->gen = gen;
	b->type = type;
	b->when = mono_ms();
	snprintf(b->path, sizeof b->path, "%s", path);
	uint64_t g = b->gen;
	pthread_mutex_unlock(&lock);
	return g;
}

static int unix_inherited;
/* the network namespaces of the inherited AF_UNIX sockets (0: unreadable),
 * written once before the guest exists */
static uint64_t unix_inherited_ns[3];
static int unix_inherited_nns;

/* Any other socket handed over (inet, netlink...: a socket of the host's
 * network stack) and the namespaces of every inherited socket and of the
 * sentry's own (the caller's): the cookies host_sock_ns compares with. */
static int host_inherited;
/* one of them can address a send (anything but a TCP stream socket: UDP,
 * raw, ping, packet, netlink...): host_send_pinned */
static int host_addr_inherited;
static uint64_t host_ns[4];
static int host_nns;

void unix_inherited_note(const int fds[3])
{
	for (int i = 0; i < 3; i++) {
		int dom = 0;
		socklen_t dl = sizeof dom;
		if (fds[i] < 0 || getsockopt(fds[i], SOL_SOCKET, SO_DOMAIN, &dom, &dl) != 0)
			continue;
		host_ns[host_nns++] = sock_netns_cookie(fds[i]);
		if (dom == AF_UNIX) {
			unix_inherited_ns[unix_inherited_nns++] = host_ns[host_nns - 1];
			__atomic_store_n(&unix_inherited, 1, __ATOMIC_RELEASE);
		} else {
			int type = 0, proto = 0;
			socklen_t tl = sizeof type, pl = sizeof proto;
			if (getsockopt(fds[i], SOL_SOCKET, SO_TYPE, &type, &tl) != 0 ||
			    getsockopt(fds[i], SOL_SOCKET, SO_PROTOCOL, &proto, &pl) != 0 || type != SOCK_STREAM ||
			    proto != IPPROTO_TCP || (dom != AF_INET && dom != AF_INET6))
				__atomic_store_n(&host_addr_inherited, 1, __ATOMIC_RELEASE);
			__atomic_store_n(&host_inherited, 1, __ATOMIC_RELEASE);
		}
	}
	int own = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	host_ns[host_nns++] = own < 0 ? 0 : sock_netns_cookie(own);
	if (own >= 0)
		close(own);
}

int host_sock_inherited_any(void)
{
	return __atomic_load_n(&host_inherited, __ATOMIC_ACQUIRE);
}

int host_send_pinned(void)
{
	return __atomic_load_n(&host_addr_inherited, __ATOMIC_ACQUIRE);
}

/* 1 when fd's namespace is one of ns[0..n) (an unknown cookie on either
 * side counts as one: fail closed) */
static int sock_ns_among(int fd, const uint64_t *ns, int n)
{
	uint64_t c = sock_netns_cookie(fd);
	if (!c)
		return 1;
	for (int i = 0; i < n; i++)
		if (!ns[i] || ns[i] == c)
			return 1;
	return 0;
}

int host_sock_ns(int fd)
{
	return sock_ns_among(fd, host_ns, host_nns);
}

int unix_inherited_host_ns(int fd)
{
	return sock_ns_among(fd, unix_inherited_ns, unix_inherited_nns);
}

int unix_inherited_any(void)
{
	return __atomic_load_n(&unix_inherited, __ATOMIC_ACQUIRE);
}

int unix_name_hide_host(struct sockaddr_un *sa, socklen_t *len)
{
	if (sa->sun_family != AF_UNIX || *len <= offsetof(struct sockaddr_un, sun_path) ||
	    sa->sun_path[0] == 0)
		return 0;
	memset(sa->sun_path, 0, sizeof sa->sun_path);
	*len = offsetof(struct sockaddr_un, sun_path);
	return 1;
}

int unix_names_any(void)
{
	return __atomic_load_n(&bound, __ATOMIC_ACQUIRE) != NULL;
}

uint64_t unix_name_gen(dev_t dev, ino_t ino, int *type)
{
	pthread_mutex_lock(&lock);
	struct bound *b = find_locked(dev, ino);
	uint64_t g = b ? b->gen : 0;
	if (b && type)
		*type = b->type;
	pthread_mutex_unlock(&lock);
	return g;
}

socklen_t unix_name_addr(struct sandbox *sb, dev_t dev, ino_t ino, uint64_t gen,
			 struct sockaddr_un *out)
{
	memset(out, 0, sizeof *out);
	out->sun_family = AF_UNIX;
	/* fixed-width fields, dots up to the generation: the whole sun_path */
	int k = snprintf(out->sun_path + 1, sizeof out->sun_path - 1, "moat/%s/%016llx:%016llx:", sb->id_str,
			 (unsigned long long)dev, (unsigned long long)ino);
	memset(out->sun_path + 1 + k, '.', UNIX_NAME_GEN_AT - 1 - (size_t)k);
	char g[17];
	snprintf(g, sizeof g, "%016llx", (unsigned long long)gen);
	memcpy(out->sun_path + UNIX_NAME_GEN_AT, g, 16);
	return (socklen_t)sizeof *out;
}

int unix_name_is_ours(struct sandbox *sb, const struct sockaddr_un *sa, socklen_t len)
{
	char prefix[64];
	int n = snprintf(prefix, sizeof prefix, "moat/%s/", sb->id_str);
	return len > offsetof(struct sockaddr_un, sun_path) + 1 && sa->sun_family == AF_UNIX && sa->sun_path[0] == 0 &&
	       len - offsetof(struct sockaddr_un, sun_path) - 1 >= (size_t)n && strncmp(sa->sun_path + 1, prefix, n) == 0;
}

/* The path of one of our abstract names, or -1. */
int unix_name_path(struct sandbox *sb, const struct sockaddr_un *sa, socklen_t len, char *out,
		   size_t outlen)
{
	unsigned long long dev, ino, gen;
	int n = (int)strlen("moat/") + (int)strlen(sb->id_str) + 1;
	/* a whole name's length (the kernel's, whatever of it was copied) */
	if (len != sizeof *sa || !unix_name_is_ours(sb, sa, len) ||
	    name_fields(sa->sun_path + 1, UNIX_NAME_GEN_AT - 1, n, &dev, &ino, &gen) < 0)
		return -1;
	int r = -1;
	pthread_mutex_lock(&lock);
	struct bound *b = find_locked((dev_t)dev, (ino_t)ino);
	if (b) {
		snprintf(out, outlen, "%s", b->path);
		r = 0;
	}
	pthread_mutex_unlock(&lock);
	return r;
}

#define NPEERS UDP_RELAY_SLOTS

static pthread_mutex_t peer_lock = PTHREAD_MUTEX_INITIALIZER;
static struct relay_peer {
	struct sockaddr_storage local, peer, dest, name;
	socklen_t destlen, namelen;
	int used;
} *peers; /* allocated on first use; slot i is netd's relay slot i */

void udp_relay_peer(int slot, const struct sockaddr_storage *local, const struct sockaddr_storage *peer,
		    const void *dest, socklen_t destlen, const void *name, socklen_t namelen)
{
	if (destlen > sizeof(struct sockaddr_storage) || namelen > sizeof(struct sockaddr_storage))
		return;
	pthread_mutex_lock(&peer_lock);
	if (!peers)
		__atomic_store_n(&peers, calloc(NPEERS, sizeof *peers), __ATOMIC_RELEASE);
	if (peers) {
		/* the same pair in another slot (netd compares the source in
		 * its own form) is no longer relayed there */
		for (unsigned i = 0; i < NPEERS; i++)
			if (peers[i].used && sockaddr_same_inet(&peers[i].local, local) &&
			    sockaddr_same_inet(&peers[i].peer, peer))
				peers[i].used = 0;
	}
	if (peers && slot >= 0 && slot < NPEERS) {
		struct relay_peer *p = &peers[slot];
		p->used = 1;
		p->local = *local;
		p->peer = *peer;
		memset(&p->dest, 0, sizeof p->dest);
		memcpy(&p->dest, dest, destlen);
		p->destlen = destlen;
		memset(&p->name, 0, sizeof p->name);
		memcpy(&p->name, name, namelen);
		p->namelen = namelen;
	}
	pthread_mutex_unlock(&peer_lock);
}

/* The destination of hfd, connected to peer through the relay: 1 and *ss,
 * *len replaced, or 0. */
static int relay_dest(int hfd, struct sockaddr_storage *ss, socklen_t *len)
{
	if (ss->ss_family != AF_INET && ss->ss_family != AF_INET6)
		return 0;
	struct sockaddr_storage local;
	socklen_t ll = sizeof local;
	int found = 0;
	pthread_mutex_lock(&peer_lock);
	if (peers && getsockname(hfd, (struct sockaddr *)&local, &ll) == 0) {
		for (unsigned i = 0; i < NPEERS && !found; i++)
			if (peers[i].used && sockaddr_same_inet(&peers[i].local, &local) &&
			    sockaddr_same_inet(&peers[i].peer, ss)) {
				*ss = peers[i].dest;
				*len = peers[i].destlen;
				found = 1;
			}
	}
	pthread_mutex_unlock(&peer_lock);
	return found;
}

/* The address hfd (bound at *ss) shows when it is connected through the
 * relay: that of the relay's host-side socket. 1 and *ss, *len replaced, or
 * 0. */
static int relay_name(int hfd, struct sockaddr_storage *ss, socklen_t *len)
{
	if ((ss->ss_family != AF_INET && ss->ss_family != AF_INET6) || !__atomic_load_n(&peers, __ATOMIC_ACQUIRE))
		return 0;
	struct sockaddr_storage peer;
	socklen_t pl = sizeof peer;
	if (getpeername(hfd, (struct sockaddr *)&peer, &pl) < 0)
		return 0;
	int found = 0;
	pthread_mutex_lock(&peer_lock);
	for (unsigned i = 0; i < NPEERS && !found; i++)
		if (peers[i].used && peers[i].namelen && sockaddr_same_inet(&peers[i].local, ss) &&
		    sockaddr_same_inet(&peers[i].peer, &peer)) {
			*ss = peers[i].name;
			*len = peers[i].namelen;
			found = 1;
		}
	pthread_mutex_unlock(&peer_lock);
	return found;
}

int udp_relay_any(void)
{
	return __atomic_load_n(&peers, __ATOMIC_ACQUIRE) != NULL;
}

int udp_relay_dest_of(int hfd, struct sockaddr_storage *ss, socklen_t *len)
{
	if (!__atomic_load_n(&peers, __ATOMIC_ACQUIRE))
		return 0; /* no relayed connect yet: no getpeername on every recvfrom stop */
	*len = sizeof *ss;
	if (getpeername(hfd, (struct sockaddr *)ss, len) < 0)
		return 0;
	return relay_dest(hfd, ss, len);
}

static long sockname(struct sc_call *c, int peer)
{
	socklen_t glen;
	if (sc_read_guest(c, c->args[2], &glen, sizeof glen) < 0)
		return -EFAULT;
	if ((int)glen < 0)
		return -EINVAL;
	cleanup_fd int hfd = task_getfd(c->task, ARG_INT(c, 0));
	if (hfd < 0)
		return hfd;
	struct sockaddr_storage ss;
	socklen_t len = sizeof ss;
	if ((peer ? getpeername(hfd, (struct sockaddr *)&ss, &len)
		  : getsockname(hfd, (struct sockaddr *)&ss, &len)) < 0) {
		/* an O_PATH fd (here a placeholder's stand-in): EBADF */
		if (errno == ENOTSOCK && vfs_fd_is_placeholder(c->sb->vfs, hfd))
			return -EBADF;
		return -errno;
	}
	if (peer)
		relay_dest(hfd, &ss, &len);
	else
		relay_name(hfd, &ss, &len);
	struct sockaddr_un *sa = (struct sockaddr_un *)&ss;
	char path[sizeof sa->sun_path];
	if (ss.ss_family == AF_UNIX && unix_name_path(c->sb, sa, len, path, sizeof path) == 0) {
		memset(sa->sun_path, 0, sizeof sa->sun_path);
		memcpy(sa->sun_path, path, strlen(path));
		len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(path) + 1);
	} else if (ss.ss_family == AF_UNIX) {
		/* a host path (an inherited socket's, or its peer's) */
		(void)unix_name_hide_host(sa, &len);
	}
	socklen_t copy = len < glen ? len : glen;
	if (sc_write_guest(c, c->args[1], &ss, copy) < 0 ||
	    sc_write_guest(c, c->args[2], &len, sizeof len) < 0)
		return -EFAULT;
	return 0;
}

int sc_getfd_socket(struct sc_call *c, int guestfd, int notsock)
{
	int hfd = sc_getfd(c, guestfd);
	if (hfd < 0)
		return hfd;
	struct stat st;
	int r = fstat(hfd, &st) < 0 ? -errno : S_ISSOCK(st.st_mode) ? 0 : -notsock;
	if (r < 0) {
		close(hfd);
		return r;
	}
	return hfd;
}

long sys_getsockname(struct sc_call *c)
{
	return sockname(c, 0);
}

long sys_getpeername(struct sc_call *c)
{
	return sockname(c, 1);
}
