/* gofer/client.c - the sentry's side of the gofer protocol (proto.h).
 *
 * One request in flight per connection: send it, block for its reply. The
 * request is gathered with an iovec straight from the caller's strings and
 * the reply scattered straight into the caller's buffers, so a call needs no
 * large stack frame. Transport failures are -EPIPE; a reply that does not
 * fit the protocol is -EPROTO.
 */
#include "gofer/gofer.h"
#include "gofer/proto.h"
#include "common/util.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <poll.h>
#include <unistd.h>

struct gofer_conn {
	int sock;
	uint32_t tag;
	int broken;     /* a reply was abandoned: the stream is out of step */
};

/* Set by the caller around a request that may block for long (a FIFO open):
 * while waiting, poll every WAIT_SLICE_MS and give up when hook() says so. */
static __thread int (*wait_hook)(void *);
static void (*block_hook)(void);
static int (*lead_held)(void);
static int lead_fd = -1;

void gofer_set_block_hook(void (*hook)(void))
{
	block_hook = hook;
}

void gofer_set_lead(int (*held)(void), int notify_fd)
{
	lead_held = held;
	lead_fd = notify_fd;
}

void gofer_before_block(void)
{
	if (block_hook)
		block_hook();
}
static __thread void *wait_arg;
#define WAIT_SLICE_MS 20

static void (*wait_begin_hook)(void), (*wait_end_hook)(void);

void gofer_set_wait_hooks(void (*begin)(void), void (*end)(void))
{
	wait_begin_hook = begin;
	wait_end_hook = end;
}

void gofer_wait_begin(void)
{
	if (wait_begin_hook)
		wait_begin_hook();
}

void gofer_wait_end(void)
{
	if (wait_end_hook)
		wait_end_hook();
}

void gofer_set_wait_hook(int (*hook)(void *), void *arg)
{
	wait_hook = hook;
	wait_arg = arg;
}

int gofer_conn_broken(const struct gofer_conn *c)
{
	return c->broken;
}

_Static_assert(offsetof(struct gofer_walk, link) ==
	       offsetof(struct gofer_walk, st) + sizeof(((struct gofer_walk *)0)->st),
	       "walk reply is scattered into st[] then link[]");

static pthread_mutex_t ctl_lock = PTHREAD_MUTEX_INITIALIZER;
/* this thread's spin-then-sleep state for replies (spin_poll) */
static __thread struct spin_state t_spin;

/* The reply: rhdr into *rh, then the payload into rep[0..nrep-1]. Returns
 * the payload length or -errno; *fd gets a received fd (or stays -1). */
/* Where a reply's fds after the first go (gofer_devopen), else closed. */
static __thread int *x_fds;
static __thread int x_cap, x_n;

static long xfer(int sock, uint32_t tag, struct iovec *req, int nreq,
		 struct iovec *rep, int nrep, int *fd, int allow_trunc, int sfd)
{
	struct gofer_rhdr rh;
	struct iovec riov[6];
	union {
		char b[CMSG_SPACE(sizeof(int) * GOFER_DEVOPEN_MAX)];
		struct cmsghdr align;
	} cbuf;
	struct msghdr msg = { .msg_iov = req, .msg_iovlen = nreq };
	ssize_t n;
	long r = 0;
	int got = -1;
	/* The pipeline's RECV lead is passed on only when another guest call
	 * is waiting while this thread waits for the gofer (the notify fd
	 * polls readable), not before every request: handing it over cost a
	 * futex wake, the new lead's switch into RECV and this thread's futex
	 * wait afterwards, per round trip, for nothing when the guest is one
	 * task (tar, rm). A request that may block for long (wait_hook) passes
	 * it at once, as before. */
	int lazy = block_hook && lead_held && lead_fd >= 0 && !wait_hook && lead_held();

	if (block_hook && !lazy)
		block_hook();

	if (fd)
		*fd = -1;
	if (sfd >= 0) {         /* PATHOF: one fd goes with the request */
		msg.msg_control = cbuf.b;
		msg.msg_controllen = CMSG_SPACE(sizeof(int));
		struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &sfd, sizeof(int));
	}
	do
		n = sendmsg(sock, &msg, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == EMSGSIZE ? -ENAMETOOLONG : -EPIPE;

	if (lazy) {
		struct pollfd p[2] = { { .fd = sock, .events = POLLIN }, { .fd = lead_fd, .events = POLLIN } };
		/* spin first (spin_poll): a reply seen while polling needs no
		 * wake-up of this thread, which the kernel puts on the other,
		 * idle, CPU of a quiet machine */
		int pr = spin_poll(p, 2, &t_spin);
		if (pr <= 0)
			do
				pr = poll(p, 2, -1);
			while (pr < 0 && errno == EINTR);
		if (pr < 0 || !(p[0].revents & (POLLIN | POLLHUP | POLLERR)))
			block_hook(); /* a guest call is waiting (or the listener is gone) */
	} else if (!wait_hook) {
		struct pollfd p = { .fd = sock, .events = POLLIN };
		(void)spin_poll(&p, 1, &t_spin);
	}
	if (wait_hook) {
		for (;;) {
			struct pollfd p = { .fd = sock, .events = POLLIN };
			int pr = poll(&p, 1, wait_poll_ms(WAIT_SLICE_MS));
			if (pr > 0 || (pr < 0 && errno != EINTR))
				break;
			if (wait_hook(wait_arg))
				return -EINTR; /* the caller marks the connection broken */
		}
	}

	riov[0] = (struct iovec){ .iov_base = &rh, .iov_len = sizeof rh };
	for (int i = 0; i < nrep; i++)
		riov[i + 1] = rep[i];
	memset(&msg, 0, sizeof msg);
	msg.msg_iov = riov;
	msg.msg_iovlen = nrep + 1;
	msg.msg_control = cbuf.b;
	msg.msg_controllen = sizeof cbuf.b;
	do
		n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -EPIPE;
	/* fds first: a message of no bytes (n == 0) may still carry some */
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		int *fds = (int *)CMSG_DATA(c);
		size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < k; i++) {
			if (got < 0 && fd)
				got = fds[i];
			else if (x_fds && x_n < x_cap)
				x_fds[x_n++] = fds[i];  /* DEVOPEN's others */
			else
				close(fds[i]);
		}
	}
	if (n == 0)
		r = -EPIPE;     /* EOF, or an empty message */
	else if ((size_t)n < sizeof rh || rh.tag != tag || (msg.msg_flags & MSG_CTRUNC) ||
	    (!(msg.msg_flags & MSG_TRUNC) && rh.len != (size_t)n) ||
	    ((msg.msg_flags & MSG_TRUNC) && !allow_trunc))
		r = -EPROTO;
	else if (rh.err < -4095 || rh.err > 0)
		r = -EPROTO;
	else if (rh.err)
		r = rh.err;
	else
		r = (long)rh.len - (long)sizeof rh;
	if (r < 0 && got >= 0) {
		close(got);
		got = -1;
	}
	if (r < 0 && x_fds)
		while (x_n)
			close(x_fds[--x_n]);
	if (fd)
		*fd = got;
	return r;
}

/* gofer_profile(1) (MOAT_PROFILE): round trips and their wall time per op,
 * printed by gofer_profile_report. Off: one branch per request. */
static struct {
	unsigned long long n, ns;
} *g_gprof;
/* this thread's round-trip wall time since gofer_profile_take() */
static _Thread_local unsigned long long gprof_thread_ns;

void gofer_profile(int on)
{
	if (on && !g_gprof)
		g_gprof = xcalloc(GOFER_OP_MAX, sizeof *g_gprof);
}

static unsigned long long gprof_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ULL + (unsigned long long)ts.tv_nsec;
}

void gofer_profile_report(FILE *f)
{
	static const char *const names[GOFER_OP_MAX] = {
		[GOFER_OP_WALK] = "walk", [GOFER_OP_LSTAT] = "lstat", [GOFER_OP_OPEN] = "open",
		[GOFER_OP_READLINK] = "readlink", [GOFER_OP_STATFS] = "statfs",
		[GOFER_OP_GETXATTR] = "getxattr", [GOFER_OP_LISTXATTR] = "listxattr",
		[GOFER_OP_PATHOF] = "pathof", [GOFER_OP_DIRSTAT] = "dirstat",
		[GOFER_OP_COPYUP] = "copyup", [GOFER_OP_MKDIR] = "mkdir", [GOFER_OP_MKNOD] = "mknod",
		[GOFER_OP_UNLINK] = "unlink", [GOFER_OP_RENAME] = "rename", [GOFER_OP_SYMLINK] = "symlink",
		[GOFER_OP_LINK] = "link", [GOFER_OP_CHMOD] = "chmod", [GOFER_OP_CHOWN] = "chown",
		[GOFER_OP_TRUNCATE] = "truncate", [GOFER_OP_UTIMENS] = "utimens",
		[GOFER_OP_SETXATTR] = "setxattr", [GOFER_OP_REMOVEXATTR] = "removexattr",
		[GOFER_OP_LINKFD] = "linkfd", [GOFER_OP_SYNC] = "sync", [GOFER_OP_CHOWNFD] = "chownfd",
		[GOFER_OP_WATCH] = "watch", [GOFER_OP_DEVOPEN] = "devopen",
		[GOFER_OP_WINSZ] = "winsz", [GOFER_OP_MEMFDATTR] = "memfdattr",
		[GOFER_OP_PTSCTL] = "ptsctl",
	};
	if (!g_gprof)
		return;
	fprintf(f, "moat profile: gofer round trips (sentry side, wall)\n");
	for (int op = 1; op < GOFER_OP_MAX; op++)
		if (g_gprof[op].n)
			fprintf(f, "  op %-10s %7llu  mean %8llu ns\n", names[op] ? names[op] : "other",
				g_gprof[op].n, g_gprof[op].ns / g_gprof[op].n);
	fprintf(f, "  replies waited for: %lu seen while spinning, %lu after the budget, "
		"%lu spins cut short (descheduled), %lu not spun (backing off)\n",
		spin_stats[0], spin_stats[1], spin_stats[2], spin_stats[3]);
}

static long xfer_prof(int sock, uint16_t op, uint32_t tag, struct iovec *iov, int k,
		      struct iovec *rep, int nrep, int *fd, int allow_trunc, int sfd)
{
	if (!g_gprof || op >= GOFER_OP_MAX)
		return xfer(sock, tag, iov, k, rep, nrep, fd, allow_trunc, sfd);
	unsigned long long t0 = gprof_now();
	long r = xfer(sock, tag, iov, k, rep, nrep, fd, allow_trunc, sfd);
	unsigned long long dt = gprof_now() - t0;
	__atomic_fetch_add(&g_gprof[op].n, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&g_gprof[op].ns, dt, __ATOMIC_RELAXED);
	gprof_thread_ns += dt;
	return r;
}

unsigned long long gofer_profile_take(void)
{
	unsigned long long ns = gprof_thread_ns;
	gprof_thread_ns = 0;
	return ns;
}

/* A path request: hdr | fixed | s1 NUL [| s2 NUL] [| blob], with one fd
 * (sfd >= 0: PATHOF, LINKFD) */
static long call_full(struct gofer_conn *c, uint16_t op, void *fixed, size_t flen,
		      const char *s1, const char *s2, const void *blob, size_t bloblen,
		      struct iovec *rep, int nrep, int *fd, int allow_trunc, int sfd)
{
	static const char nul;
	struct gofer_hdr h = { .op = op, .tag = ++c->tag };
	/* the CPU this thread sends from and will wait on (GOFER_HDR_CPU):
	 * glibc reads it from rseq (or the vDSO), no system call */
	int cpu = sched_getcpu();
	if (cpu >= 0 && (unsigned)cpu <= GOFER_HDR_CPU_MASK)
		h.flags = (uint16_t)(GOFER_HDR_CPU | (unsigned)cpu);
	size_t l1 = strnlen(s1, VFS_PATH_MAX), l2 = s2 ? strnlen(s2, VFS_PATH_MAX) : 0;
	struct iovec iov[7];
	int k = 0;

	if (l1 >= VFS_PATH_MAX || l2 >= VFS_PATH_MAX)
		return -ENAMETOOLONG;
	/* every fixed struct starts with exp, len; two-string ones add len2 */
	((uint32_t *)fixed)[1] = l1;
	if (s2)
		((uint32_t *)fixed)[2] = l2;
	h.len = sizeof h + flen + l1 + 1 + (s2 ? l2 + 1 : 0) + bloblen;
	iov[k++] = (struct iovec){ &h, sizeof h };
	iov[k++] = (struct iovec){ fixed, flen };
	iov[k++] = (struct iovec){ (void *)s1, l1 };
	iov[k++] = (struct iovec){ (void *)&nul, 1 };
	if (s2) {
		iov[k++] = (struct iovec){ (void *)s2, l2 };
		iov[k++] = (struct iovec){ (void *)&nul, 1 };
	}
	if (bloblen)
		iov[k++] = (struct iovec){ (void *)blob, bloblen };
	if (c->broken)
		return -EPIPE;
	long r = xfer_prof(c->sock, op, h.tag, iov, k, rep, nrep, fd, allow_trunc, sfd);
	if (r == -EINTR && wait_hook) {
		/* hang up now: the gofer ends its wait when it sees that */
		c->broken = 1;
		close(c->sock);
		c->sock = -1;
	}
	return r;
}

static long call(struct gofer_conn *c, uint16_t op, void *fixed, size_t flen,
		 const char *s1, const char *s2, struct iovec *rep, int nrep,
		 int *fd, int allow_trunc)
{
	return call_full(c, op, fixed, flen, s1, s2, NULL, 0, rep, nrep, fd, allow_trunc, -1);
}

static long call_blob(struct gofer_conn *c, uint16_t op, void *fixed, size_t flen,
		      const char *s1, const char *s2, const void *blob, size_t bloblen,
		      struct iovec *rep, int nrep, int *fd, int allow_trunc)
{
	return call_full(c, op, fixed, flen, s1, s2, blob, bloblen, rep, nrep, fd, allow_trunc, -1);
}

static long call_fd(struct gofer_conn *c, uint16_t op, void *fixed, size_t flen,
		    const char *s1, const char *s2, struct iovec *rep, int nrep,
		    int *fd, int allow_trunc, int sfd)
{
	return call_full(c, op, fixed, flen, s1, s2, NULL, 0, rep, nrep, fd, allow_trunc, sfd);
}

static int expect(long r, size_t want)
{
	if (r < 0)
		return r;
	return (size_t)r == want ? 0 : -EPROTO;
}

struct gofer_conn *gofer_connect(int ctl_sock)
{
	struct gofer_hdr h = { .len = sizeof h, .op = GOFER_OP_CONNECT };
	struct iovec iov = { &h, sizeof h };
	struct gofer_conn *c;
	static uint32_t ctl_tag;
	long r;
	int fd;

	/* never abandoned half-way: the control stream must stay in step */
	int (*hook)(void *) = wait_hook;
	wait_hook = NULL;
	pthread_mutex_lock(&ctl_lock);
	h.tag = ++ctl_tag;
	r = xfer(ctl_sock, h.tag, &iov, 1, NULL, 0, &fd, 0, -1);
	pthread_mutex_unlock(&ctl_lock);
	wait_hook = hook;
	if (r == 0 && fd < 0)
		r = -EPROTO;
	if (r > 0) {
		close(fd);
		r = -EPROTO;
	}
	if (r < 0) {
		errno = (int)-r;
		return NULL;
	}
	c = calloc(1, sizeof *c);
	if (!c) {
		close(fd);
		errno = ENOMEM;
		return NULL;
	}
	c->sock = fd;
	return c;
}

void gofer_disconnect(struct gofer_conn *c)
{
	if (!c)
		return;
	if (c->sock >= 0)
		close(c->sock);
	free(c);
}

int gofer_walk(struct gofer_conn *c, int exp, const char *rel, struct gofer_walk *out)
{
	struct gofer_req_path f = { .exp = exp };
	struct gofer_rep_walk w;
	struct iovec rep[2] = {
		{ &w, sizeof w },
		{ out->st, sizeof out->st + sizeof out->link },
	};
	long r = call(c, GOFER_OP_WALK, &f, sizeof f, rel, NULL, rep, 2, NULL, 0);

	if (r < 0)
		return r;
	if ((size_t)r < sizeof w || w.n < 0 || w.n > GOFER_WALK_MAX ||
	    w.linklen >= PATH_MAX || w.err > 0 || w.err < -4095 ||
	    (size_t)r != sizeof w + w.n * sizeof(struct stat) + w.linklen)
		return -EPROTO;
	out->n = w.n;
	out->err = w.err;
	memmove(out->link, (char *)out->st + w.n * sizeof(struct stat), w.linklen);
	out->link[w.linklen] = '\0';
	return 0;
}

int gofer_lstat(struct gofer_conn *c, int exp, const char *rel, struct stat *st)
{
	struct gofer_req_path f = { .exp = exp };
	struct iovec rep = { st, sizeof *st };

	return expect(call(c, GOFER_OP_LSTAT, &f, sizeof f, rel, NULL, &rep, 1, NULL, 0),
		      sizeof *st);
}

/* The identities the next request of this thread names (see proto.h):
 * the object checked, its directory, and a rename's or link's destination
 * (its directory and the object there, 0 if the name was free); each
 * consumed by the request that takes it. */
static __thread struct gofer_expect g_exp;

void gofer_expect_parent(dev_t dev, ino_t ino)
{
	g_exp.pdev = (uint64_t)dev;
	g_exp.pino = (uint64_t)ino;
}

void gofer_expect_identity(dev_t dev, ino_t ino)
{
	g_exp.dev = (uint64_t)dev;
	g_exp.ino = (uint64_t)ino;
}

void gofer_expect_target(dev_t pdev, ino_t pino, dev_t dev, ino_t ino)
{
	g_exp.tpdev = (uint64_t)pdev;
	g_exp.tpino = (uint64_t)pino;
	g_exp.tdev = (uint64_t)dev;
	g_exp.tino = (uint64_t)ino;
}

void gofer_expect_get(struct gofer_expect *e)
{
	*e = g_exp;
}

void gofer_expect_set(const struct gofer_expect *e)
{
	g_exp = *e;
}

void gofer_expect_clear(void)
{
	memset(&g_exp, 0, sizeof g_exp);
}

void gofer_peek_identity(dev_t *dev, ino_t *ino)
{
	*dev = (dev_t)g_exp.dev;
	*ino = (ino_t)g_exp.ino;
}

static void take_expect(uint64_t *ino, uint64_t *dev)
{
	*ino = g_exp.ino;
	*dev = g_exp.dev;
	g_exp.ino = g_exp.dev = 0;
}

static void take_parent(uint64_t *ino, uint64_t *dev)
{
	*ino = g_exp.pino;
	*dev = g_exp.pdev;
	g_exp.pino = g_exp.pdev = 0;
}

/* RENAME, LINK: all four (the target's two consumed too) */
static void take_two(struct gofer_req_two *f)
{
	take_expect(&f->ino, &f->dev);
	take_parent(&f->pino, &f->pdev);
	f->tino = g_exp.tino;
	f->tdev = g_exp.tdev;
	f->tpino = g_exp.tpino;
	f->tpdev = g_exp.tpdev;
	g_exp.tino = g_exp.tdev = g_exp.tpino = g_exp.tpdev = 0;
}

static int g_close_barrier;

void gofer_set_close_barrier(void)
{
	__atomic_store_n(&g_close_barrier, 1, __ATOMIC_RELEASE);
}

/* The gofer answers SYNC after it closed every fd it sent on this connection. */
static void close_barrier(struct gofer_conn *c)
{
	struct gofer_hdr h = { .len = sizeof h, .op = GOFER_OP_SYNC };
	struct iovec iov = { &h, sizeof h };

	if (c->broken)
		return;
	h.tag = ++c->tag;
	if (xfer(c->sock, h.tag, &iov, 1, NULL, 0, NULL, 0, -1) == -EINTR && wait_hook) {
		c->broken = 1; /* out of step: hung up, as call_full does */
		close(c->sock);
		c->sock = -1;
	}
}

int gofer_open(struct gofer_conn *c, int exp, const char *rel, int flags,
	       mode_t mode, int *fd, struct stat *st)
{
	struct gofer_req_open f = { .exp = exp, .flags = flags, .mode = mode };
	take_expect(&f.ino, &f.dev);
	take_parent(&f.pino, &f.pdev);
	struct stat tmp;
	struct iovec rep = { st ? st : &tmp, sizeof tmp };
	int nfd = -1;
	long r = call(c, GOFER_OP_OPEN, &f, sizeof f, rel, NULL, &rep, 1, &nfd, 0);

	r = expect(r, sizeof tmp);
	if (!r && nfd < 0)
		r = -EPROTO;
	if (r) {
		if (nfd >= 0)
			close(nfd);
		return r;
	}
	/* a FIFO's ends are counted: the gofer's copy gone before the guest
	 * runs on (with the sentry's, sentry/pipeline.c out_fd_close_first) */
	if (__atomic_load_n(&g_close_barrier, __ATOMIC_ACQUIRE) || S_ISFIFO((st ? st : &tmp)->st_mode))
		close_barrier(c);
	*fd = nfd;
	return 0;
}

long gofer_readlink(struct gofer_conn *c, int exp, const char *rel, char *buf, size_t len)
{
	struct gofer_req_path f = { .exp = exp };
	struct iovec rep = { buf, len };
	long r = call(c, GOFER_OP_READLINK, &f, sizeof f, rel, NULL, &rep, 1, NULL, 1);

	if (r < 0)
		return r;
	return (size_t)r < len ? r : (long)len;
}

int gofer_devopen(struct gofer_conn *c, int exp, const char *name, int flags, int count,
		  int *fds, struct stat *st)
{
	struct gofer_req_devopen f = { .exp = exp, .flags = flags, .count = (uint32_t)count };
	struct iovec rep = { st, sizeof *st };
	int first = -1, more[GOFER_DEVOPEN_MAX];

	if (count < 1 || count > GOFER_DEVOPEN_MAX)
		return -EINVAL;
	x_fds = more;
	x_cap = count - 1;
	x_n = 0;
	long r = call(c, GOFER_OP_DEVOPEN, &f, sizeof f, name, NULL, &rep, 1, &first, 0);
	int n = x_n;
	x_fds = NULL;
	x_cap = x_n = 0;
	r = expect(r, sizeof *st);
	if (!r && first < 0)
		r = -EPROTO;
	if (r) {
		if (first >= 0)
			close(first);
		while (n)
			close(more[--n]);
		return (int)r;
	}
	if (__atomic_load_n(&g_close_barrier, __ATOMIC_ACQUIRE))
		close_barrier(c); /* as gofer_open: the gofer's copies closed first */
	fds[0] = first;
	memcpy(fds + 1, more, n * sizeof *more);
	return 1 + n;
}

long gofer_dirstat(struct gofer_conn *c, int exp, const char *rel, uint64_t pos, void *buf, size_t len)
{
	struct gofer_req_dirstat f = { .exp = exp, .pos = pos };
	struct iovec rep = { buf, len };
	long r = call(c, GOFER_OP_DIRSTAT, &f, sizeof f, rel, NULL, &rep, 1, NULL, 0);

	return r >= 0 && (size_t)r < sizeof(struct gofer_rep_dirstat) ? -EPROTO : r;
}

long gofer_pathof(struct gofer_conn *c, int exp, int dirfd, char *buf, size_t len)
{
	struct gofer_req_path f = { .exp = exp };
	struct iovec rep = { buf, len };
	long r = call_fd(c, GOFER_OP_PATHOF, &f, sizeof f, "", NULL, &rep, 1, NULL, 0, dirfd);

	return r;
}

int gofer_linkfd(struct gofer_conn *c, int exp, int fd, const char *rel)
{
	struct gofer_req_open f = { .exp = exp };

	take_parent(&f.pino, &f.pdev);

	return expect(call_fd(c, GOFER_OP_LINKFD, &f, sizeof f, rel, NULL, NULL, 0, NULL, 0, fd), 0);
}

int gofer_watch(struct gofer_conn *c, int exp, const char *rel, int ifd, uint32_t mask,
		dev_t dev, ino_t ino)
{
	struct gofer_req_open f = { .exp = exp, .flags = (int32_t)mask, .ino = ino, .dev = dev };
	int32_t wd = -1;
	struct iovec rep = { &wd, sizeof wd };
	long r = call_fd(c, GOFER_OP_WATCH, &f, sizeof f, rel, NULL, &rep, 1, NULL, 0, ifd);

	r = expect(r, sizeof wd);
	return r < 0 ? (int)r : wd < 0 ? -EPROTO : wd;
}

int gofer_winsz(struct gofer_conn *c, int exp, int fd, const struct winsize *ws)
{
	struct gofer_req_winsz f = { .exp = exp, .row = ws->ws_row, .col = ws->ws_col,
				     .xpixel = ws->ws_xpixel, .ypixel = ws->ws_ypixel };

	return expect(call_fd(c, GOFER_OP_WINSZ, &f, sizeof f, "", NULL, NULL, 0, NULL, 0, fd), 0);
}

int gofer_ptsctl(struct gofer_conn *c, int exp, int fd, unsigned cmd, int arg, int *peer)
{
	struct gofer_req_ptsctl f = { .exp = exp, .cmd = cmd, .arg = arg };
	int got = -1;
	int r = expect(call_fd(c, GOFER_OP_PTSCTL, &f, sizeof f, "", NULL, NULL, 0, &got, 0, fd), 0);

	if (r == 0 && peer && got < 0)
		r = -EPROTO;
	if (r < 0 || !peer) {
		if (got >= 0)
			close(got);
		return r;
	}
	*peer = got;
	return 0;
}

int gofer_memfdattr(struct gofer_conn *c, int exp, int fd, mode_t mode,
		    const struct timespec *ts)
{
	struct gofer_req_memfdattr f = { .exp = exp, .mode = mode, .utimes = ts != NULL };

	if (ts) {
		f.sec[0] = ts[0].tv_sec;
		f.nsec[0] = ts[0].tv_nsec;
		f.sec[1] = ts[1].tv_sec;
		f.nsec[1] = ts[1].tv_nsec;
	}
	return expect(call_fd(c, GOFER_OP_MEMFDATTR, &f, sizeof f, "", NULL, NULL, 0, NULL, 0, fd), 0);
}

int gofer_chownfd(struct gofer_conn *c, int exp, int fd, uid_t uid, gid_t gid)
{
	struct gofer_req_chown f = { .exp = exp, .uid = uid, .gid = gid };

	return expect(call_fd(c, GOFER_OP_CHOWNFD, &f, sizeof f, "", NULL, NULL, 0, NULL, 0, fd), 0);
}

static int simple(struct gofer_conn *c, uint16_t op, void *fixed, size_t flen,
		  const char *s1, const char *s2)
{
	return expect(call(c, op, fixed, flen, s1, s2, NULL, 0, NULL, 0), 0);
}

/* MKDIR, MKNOD, SYMLINK: the reply is the new node's lstat, or empty when
 * the gofer found it gone at once (then *st is zeroed: st_ino 0) */
static int made_call(struct gofer_conn *c, uint16_t op, void *fixed, size_t flen, const char *s1,
		     const char *s2, struct stat *st)
{
	struct stat buf;
	struct iovec rep = { &buf, sizeof buf };
	long r = call(c, op, fixed, flen, s1, s2, &rep, 1, NULL, 0);

	if (r < 0)
		return (int)r;
	if (r != 0 && r != (long)sizeof buf)
		return -EPROTO;
	if (r == 0)
		memset(&buf, 0, sizeof buf);
	if (st)
		*st = buf;
	return 0;
}

/* MKDIR or MKNOD (op) of rel, made in the parent the sentry checked */
static int mode_made(struct gofer_conn *c, uint16_t op, int exp, const char *rel, mode_t mode,
		     struct stat *st)
{
	struct gofer_req_mode f = { .exp = exp, .mode = mode };

	take_parent(&f.pino, &f.pdev);

	return made_call(c, op, &f, sizeof f, rel, NULL, st);
}

int gofer_mkdir_st(struct gofer_conn *c, int exp, const char *rel, mode_t mode, struct stat *st)
{
	return mode_made(c, GOFER_OP_MKDIR, exp, rel, mode, st);
}

int gofer_mkdir(struct gofer_conn *c, int exp, const char *rel, mode_t mode)
{
	return gofer_mkdir_st(c, exp, rel, mode, NULL);
}

int gofer_mknod_st(struct gofer_conn *c, int exp, const char *rel, mode_t mode, struct stat *st)
{
	return mode_made(c, GOFER_OP_MKNOD, exp, rel, mode, st);
}

int gofer_mknod(struct gofer_conn *c, int exp, const char *rel, mode_t mode)
{
	return gofer_mknod_st(c, exp, rel, mode, NULL);
}

int gofer_unlink(struct gofer_conn *c, int exp, const char *rel, int flags)
{
	struct gofer_req_unlink f = { .exp = exp, .flags = flags };

	take_expect(&f.ino, &f.dev);
	take_parent(&f.pino, &f.pdev);
	return simple(c, GOFER_OP_UNLINK, &f, sizeof f, rel, NULL);
}

int gofer_rename(struct gofer_conn *c, int exp, const char *oldrel, const char *newrel,
		 unsigned flags)
{
	struct gofer_req_two f = { .exp = exp, .flags = flags };

	take_two(&f);
	return simple(c, GOFER_OP_RENAME, &f, sizeof f, oldrel, newrel);
}

int gofer_symlink_st(struct gofer_conn *c, int exp, const char *target, const char *rel, struct stat *st)
{
	struct gofer_req_two f = { .exp = exp };

	take_parent(&f.pino, &f.pdev);
	return made_call(c, GOFER_OP_SYMLINK, &f, sizeof f, rel, target, st);
}

int gofer_symlink(struct gofer_conn *c, int exp, const char *target, const char *rel)
{
	return gofer_symlink_st(c, exp, target, rel, NULL);
}

int gofer_link_st(struct gofer_conn *c, int exp, const char *oldrel, const char *newrel,
		  struct stat st[2])
{
	struct gofer_req_two f = { .exp = exp };
	struct stat buf[2];
	struct iovec rep = { buf, sizeof buf };

	take_two(&f);
	long r = call(c, GOFER_OP_LINK, &f, sizeof f, oldrel, newrel, &rep, 1, NULL, 0);
	if (r < 0)
		return (int)r;
	if (r % (long)sizeof *buf)
		return -EPROTO;
	for (long i = r / (long)sizeof *buf; i < 2; i++)
		memset(&buf[i], 0, sizeof buf[i]);
	if (st)
		memcpy(st, buf, sizeof buf);
	return 0;
}

int gofer_link(struct gofer_conn *c, int exp, const char *oldrel, const char *newrel)
{
	return gofer_link_st(c, exp, oldrel, newrel, NULL);
}

int gofer_copyup(struct gofer_conn *c, int exp, const char *rel, dev_t dev, ino_t ino,
		 struct stat (*pairs)[2], int *busy)
{
	struct gofer_req_open f = { .exp = exp, .ino = (uint64_t)ino, .dev = (uint64_t)dev };
	struct iovec rep = { pairs, GOFER_COPYUP_MAX * sizeof pairs[0] };
	long r = call(c, GOFER_OP_COPYUP, &f, sizeof f, rel, NULL, &rep, 1, NULL, 0);

	if (r < 0)
		return (int)r;
	if (r == 0 || (size_t)r % sizeof pairs[0])
		return -EPROTO;
	int n = (int)((size_t)r / sizeof pairs[0]);
	/* a last pair of zeros: -EBUSY, with the pairs before it */
	*busy = pairs[n - 1][0].st_ino == 0 && pairs[n - 1][0].st_mode == 0;
	if (*busy && n == 1)
		return -EPROTO;
	return n - *busy;
}

int gofer_chmod(struct gofer_conn *c, int exp, const char *rel, mode_t mode)
{
	struct gofer_req_mode f = { .exp = exp, .mode = mode };

	take_expect(&f.ino, &f.dev);
	return simple(c, GOFER_OP_CHMOD, &f, sizeof f, rel, NULL);
}

int gofer_chown(struct gofer_conn *c, int exp, const char *rel, uid_t uid, gid_t gid)
{
	struct gofer_req_chown f = { .exp = exp, .uid = uid, .gid = gid };

	return simple(c, GOFER_OP_CHOWN, &f, sizeof f, rel, NULL);
}

int gofer_truncate(struct gofer_conn *c, int exp, const char *rel, off_t len)
{
	struct gofer_req_truncate f = { .exp = exp, .size = len };

	take_expect(&f.ino, &f.dev);
	return simple(c, GOFER_OP_TRUNCATE, &f, sizeof f, rel, NULL);
}

int gofer_utimens(struct gofer_conn *c, int exp, const char *rel,
		  const struct timespec ts[2], int flags)
{
	struct gofer_req_utimens f = { .exp = exp, .flags = flags };

	take_expect(&f.ino, &f.dev);
	for (int i = 0; i < 2; i++) {
		f.sec[i] = ts ? ts[i].tv_sec : 0;
		f.nsec[i] = ts ? ts[i].tv_nsec : UTIME_NOW;
	}
	return simple(c, GOFER_OP_UTIMENS, &f, sizeof f, rel, NULL);
}

int gofer_statfs(struct gofer_conn *c, int exp, const char *rel, struct statfs *st)
{
	struct gofer_req_path f = { .exp = exp };
	struct iovec rep = { st, sizeof *st };

	return expect(call(c, GOFER_OP_STATFS, &f, sizeof f, rel, NULL, &rep, 1, NULL, 0),
		      sizeof *st);
}

/* GET, LIST: uint32_t length [| bytes] */
static long xattr_get(struct gofer_conn *c, uint16_t op, int exp, const char *rel,
		      const char *name, void *buf, size_t size, size_t max)
{
	struct gofer_req_xattr f = { .exp = exp };
	take_expect(&f.ino, &f.dev);
	uint32_t len;
	struct iovec rep[2] = { { &len, sizeof len }, { buf, 0 } };
	long r;

	if (size > max)
		size = max;
	f.size = (uint32_t)size;
	rep[1].iov_len = size;
	r = call(c, op, &f, sizeof f, rel, name, rep, size ? 2 : 1, NULL, 0);
	if (r < 0)
		return r;
	if ((size_t)r < sizeof len || len > (size ? size : max) ||
	    (size_t)r != sizeof len + (size ? len : 0))
		return -EPROTO;
	return len;
}

long gofer_getxattr(struct gofer_conn *c, int exp, const char *rel, const char *name,
		    void *buf, size_t size)
{
	return xattr_get(c, GOFER_OP_GETXATTR, exp, rel, name, buf, size, GOFER_XATTR_MAX);
}

long gofer_listxattr(struct gofer_conn *c, int exp, const char *rel, char *buf, size_t size)
{
	return xattr_get(c, GOFER_OP_LISTXATTR, exp, rel, NULL, buf, size, GOFER_XATTR_LIST_MAX);
}

int gofer_setxattr(struct gofer_conn *c, int exp, const char *rel, const char *name,
		   const void *val, size_t size, int flags)
{
	struct gofer_req_xattr f = { .exp = exp, .flags = (uint32_t)flags };
	take_expect(&f.ino, &f.dev);

	if (size > GOFER_XATTR_MAX)
		return -ENOSPC;
	f.size = (uint32_t)size;
	return expect(call_blob(c, GOFER_OP_SETXATTR, &f, sizeof f, rel, name, val, size,
				NULL, 0, NULL, 0), 0);
}

int gofer_removexattr(struct gofer_conn *c, int exp, const char *rel, const char *name)
{
	struct gofer_req_xattr f = { .exp = exp };
	take_expect(&f.ino, &f.dev);

	return simple(c, GOFER_OP_REMOVEXATTR, &f, sizeof f, rel, name);
}
