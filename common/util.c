#include "common/util.h"
#include "common/log.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <time.h>
#include <stdio.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/auxv.h>
#include <elf.h>
#include <link.h>
#include <sys/prctl.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/resource.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
/* xxHash inlined: one small hash function compiled in, instead of a shared
 * library mapped privately into every sentry and gofer (~60 KiB PSS each). */
#define XXH_INLINE_ALL
#include <xxhash.h>

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		die("out of memory");
	return p;
}

void *xcalloc(size_t n, size_t m)
{
	void *p = calloc(n ? n : 1, m ? m : 1);
	if (!p)
		die("out of memory");
	return p;
}

char *xstrdup(const char *s)
{
	char *p = strdup(s);
	if (!p)
		die("out of memory");
	return p;
}

int grow_array(void *arrp, size_t *cap, size_t n, size_t size, size_t first)
{
	void **p = arrp;

	if (n < *cap)
		return 0;
	size_t nc = *cap ? *cap * 2 : first;
	void *nv = realloc(*p, nc * size);
	if (!nv)
		return -ENOMEM;
	*p = nv;
	*cap = nc;
	return 0;
}

void xgrow_array(void *arrp, size_t *cap, size_t n, size_t size, size_t first)
{
	if (grow_array(arrp, cap, n, size, first))
		die("out of memory");
}

uint64_t moat_hash(const void *data, size_t len)
{
	return XXH3_64bits(data, len);
}

int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	while (len) {
		ssize_t n = write(fd, p, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= n;
	}
	return 0;
}

int write_while(int fd, const void *buf, size_t len, int (*give_up)(void))
{
	const char *p = buf;
	while (len) {
		struct pollfd w = { .fd = fd, .events = POLLOUT };
		int r = poll(&w, 1, 100);
		if (r < 0 && errno != EINTR)
			return -errno;
		if (r <= 0) {
			if (give_up && give_up())
				return -EAGAIN;
			continue;
		}
		/* POLLOUT on a pipe: a free page, so PIPE_BUF bytes do not block */
		ssize_t n = write(fd, p, len < PIPE_BUF ? len : PIPE_BUF);
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return -errno;
		}
		p += n;
		len -= n;
	}
	return 0;
}

int write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int r = write_all(fd, s, strlen(s));
	close(fd);
	return r;
}

long read_long_file(const char *path)
{
	char buf[32] = { 0 };
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	return n > 0 ? strtol(buf, NULL, 10) : -1;
}

int read_all(int fd, void *buf, size_t len)
{
	char *p = buf;
	while (len) {
		ssize_t n = read(fd, p, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EPIPE;
		p += n;
		len -= n;
	}
	return 0;
}

#define MAX_FDS 32 /* gofer/proto.h GOFER_DEVOPEN_MAX */

int send_fd_number(int sock, int fd)
{
	char m[1 + sizeof fd], ack;
	m[0] = 'L';
	memcpy(m + 1, &fd, sizeof fd);
	if (write(sock, m, sizeof m) != (ssize_t)sizeof m)
		return -errno;
	for (;;) {
		ssize_t r = read(sock, &ack, 1);
		if (r == 1)
			return 0;
		if (r == 0)
			return -EPIPE;
		if (errno != EINTR)
			return -errno;
	}
}

int take_fd_number(int sock, pid_t pid, const char *num)
{
	int n;
	memcpy(&n, num, sizeof n);
	int pfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pfd < 0)
		return -errno;
	int fd = (int)syscall(SYS_pidfd_getfd, pfd, n, 0);
	int e = errno;
	close(pfd);
	if (write(sock, "k", 1) != 1 && fd >= 0) {
		close(fd);
		return -EPIPE;
	}
	return fd < 0 ? -e : fd;
}

pid_t moat_fork_helper(const char *name)
{
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(1);
		prctl(PR_SET_NAME, name);
		prctl(PR_SET_DUMPABLE, 0);
	}
	return pid;
}

long send_fds(int sock, const void *buf, size_t len, const int *fds, int nfds)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	union {
		char b[CMSG_SPACE(sizeof(int) * MAX_FDS)];
		struct cmsghdr align;
	} u;
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	if (nfds < 0 || nfds > MAX_FDS)
		return -EINVAL;
	if (nfds > 0) {
		memset(&u, 0, sizeof u);
		msg.msg_control = u.b;
		msg.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
		struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * nfds);
	}
	for (;;) {
		ssize_t n = sendmsg(sock, &msg, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		return n < 0 ? -errno : n;
	}
}

long recv_fds(int sock, void *buf, size_t len, int *fds, int *nfds_inout)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	union {
		char b[CMSG_SPACE(sizeof(int) * MAX_FDS)];
		struct cmsghdr align;
	} u;
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
			      .msg_control = u.b, .msg_controllen = sizeof u.b };
	int cap = nfds_inout ? *nfds_inout : 0;
	ssize_t n;
	if (nfds_inout)
		*nfds_inout = 0;
	do
		n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		int k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		int *in = (int *)CMSG_DATA(c);
		for (int i = 0; i < k; i++) {
			if (nfds_inout && *nfds_inout < cap)
				fds[(*nfds_inout)++] = in[i];
			else
				close(in[i]); /* never leak surplus fds */
		}
	}
	if (msg.msg_flags & MSG_CTRUNC)
		return -EMSGSIZE;
	return n;
}

int sockaddr_same_inet(const void *a, const void *b)
{
	const struct sockaddr_storage *x = a, *y = b;
	if (x->ss_family != y->ss_family)
		return 0;
	if (x->ss_family == AF_INET) {
		const struct sockaddr_in *p = a, *q = b;
		return p->sin_port == q->sin_port && p->sin_addr.s_addr == q->sin_addr.s_addr;
	}
	if (x->ss_family == AF_INET6) {
		const struct sockaddr_in6 *p = a, *q = b;
		return p->sin6_port == q->sin6_port && p->sin6_scope_id == q->sin6_scope_id &&
		       memcmp(&p->sin6_addr, &q->sin6_addr, sizeof p->sin6_addr) == 0;
	}
	return 0;
}

struct watch_job {
	int ifd, dfd;
	const char *name;
	uint32_t mask;
	int r;
};

static void *watch_job_run(void *arg)
{
	struct watch_job *w = arg;

	if (syscall(SYS_unshare, CLONE_FS) < 0 || fchdir(w->dfd) < 0)
		w->r = -errno;
	else if ((w->r = inotify_add_watch(w->ifd, w->name, w->mask)) < 0)
		w->r = -errno;
	return NULL;
}

int watch_at(int ifd, int dfd, const char *name, uint32_t mask)
{
	struct watch_job w = { .ifd = ifd, .dfd = dfd, .name = name, .mask = mask };
	pthread_t th;
	int r = pthread_create(&th, NULL, watch_job_run, &w);

	if (r)
		return -r;
	pthread_join(th, NULL);
	return w.r;
}

int moat_identity_map(const char *self, char *out, size_t len)
{
	FILE *f = fopen(self, "re");
	unsigned long a, b, c;
	size_t used = 0;

	if (!f)
		return -errno;
	out[0] = '\0';
	while (fscanf(f, "%lu %lu %lu", &a, &b, &c) == 3) {
		int k = snprintf(out + used, len - used, "%lu %lu %lu\n", a, a, c);
		if (k < 0 || (size_t)k >= len - used)
			break;
		used += (size_t)k;
	}
	fclose(f);
	return used ? 0 : -EINVAL;
}

static unsigned long long spin_ns;
/* MOAT_PROFILE (gofer_profile_report): waits that saw the message while
 * spinning, that spent the budget, that saw themselves descheduled, that
 * did not spin (backing off) */
unsigned long spin_stats[4];

void spin_setup(void)
{
	const char *e = getenv("MOAT_SPIN_US"); /* (a knob: 0 to compare without) */
	long us = SPIN_DEFAULT_US;

	if (e && *e) {
		char *end;
		long v = strtol(e, &end, 10);
		if (!*end && v >= 0 && v <= 10000)
			us = v;
	}
	spin_ns = (unsigned long long)us * 1000;
}

static unsigned long long spin_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ULL + (unsigned long long)ts.tv_nsec;
}

static int g_wait_pollers;

void wait_poll_note(int delta)
{
	__atomic_add_fetch(&g_wait_pollers, delta, __ATOMIC_RELAXED);
}

int wait_pollers(void)
{
	return __atomic_load_n(&g_wait_pollers, __ATOMIC_RELAXED);
}

int wait_poll_ms(int base)
{
	long n = wait_pollers();
	long ms = n > 0 ? n * 1000 / WAIT_POLLS_PER_S : 0;
	if (ms > WAIT_POLL_MAX_MS)
		ms = WAIT_POLL_MAX_MS;
	return ms > base ? (int)ms : base;
}

int spin_poll(struct pollfd *p, int n, struct spin_state *s)
{
	if (!spin_ns)
		return 0;
	if (s->skip) {
		s->skip--;
		__atomic_fetch_add(&spin_stats[3], 1, __ATOMIC_RELAXED);
		return 0;
	}
	unsigned long long t0 = spin_now(), last = t0;
	for (;;) {
		int r = poll(p, (nfds_t)n, 0);
		if (r != 0) {
			if (r > 0) {
				s->fails = 0;
				__atomic_fetch_add(&spin_stats[0], 1, __ATOMIC_RELAXED);
			}
			return r < 0 && errno == EINTR ? 0 : r;
		}
		unsigned long long t = spin_now();
		if (t - last > SPIN_PREEMPT_US * 1000ULL) {
			s->skip = SPIN_SKIP_BUSY;   /* the CPU is wanted */
			s->fails = 0;
			__atomic_fetch_add(&spin_stats[2], 1, __ATOMIC_RELAXED);
			return 0;
		}
		if (t - t0 > spin_ns) {
			__atomic_fetch_add(&spin_stats[1], 1, __ATOMIC_RELAXED);
			if (++s->fails >= SPIN_FAILS_MAX) {
				s->skip = SPIN_SKIP_FAIL;
				s->fails = 0;
			}
			return 0;
		}
		last = t;
		/* a thread woken on this CPU (the gofer, the guest) runs now
		 * rather than at the next tick: a spinner must never hold up
		 * the very reply it waits for */
		sched_yield();
	}
}

static uintptr_t stack_lo, stack_hi;  /* the [stack] mapping when noted */

void stack_trim_note(void)
{
	char line[512];
	FILE *f = fopen("/proc/self/maps", "re");

	if (!f)
		return;
	/* "lo-hi perms offset dev inode [stack]": the mapping named exactly
	 * so (a long line is read in pieces: only a whole one counts) */
	int whole = 1;
	while (fgets(line, sizeof line, f)) {
		size_t l = strlen(line);
		int start = whole;
		whole = l && line[l - 1] == '\n';
		if (!start || !whole || l < 9 || strcmp(line + l - 9, " [stack]\n"))
			continue;
		char *end;
		unsigned long lo = strtoul(line, &end, 16), hi = 0;
		if (*end == '-')
			hi = strtoul(end + 1, NULL, 16);
		if (lo && hi > lo) {
			stack_lo = (uintptr_t)lo;
			stack_hi = (uintptr_t)hi;
		}
	}
	fclose(f);
}

void stack_trim(void)
{
	volatile char here = 0;
	uintptr_t pg = 4096, sp = (uintptr_t)&here;
	uintptr_t hi = (sp - 16384) & ~(pg - 1);

	/* only on the noted mapping's own thread (sp inside it) */
	if (!stack_lo || sp >= stack_hi || hi <= stack_lo || sp - stack_lo > (64u << 20))
		return;
	(void)madvise((void *)stack_lo, hi - stack_lo, MADV_DONTNEED);
}

int leave_caller_terminal(void)
{
	int tty = open("/dev/tty", O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);

	if (tty >= 0 || errno != ENXIO) {
		/* TIOCNOTTY by a process that leads no session: only it (its
		 * thread group) lets go, the session keeps its terminal. When
		 * /dev/tty cannot be opened (the terminal exclusive, TIOCEXCL:
		 * EBUSY; hung up; no /dev in this mount namespace), on one of
		 * fds 0-2 that is that terminal (ENOTTY on any other) */
		int r = tty >= 0 ? ioctl(tty, TIOCNOTTY) : -1;
		for (int fd = 0; r < 0 && fd < 3; fd++)
			r = ioctl(fd, TIOCNOTTY);
		if (tty >= 0)
			close(tty);
		/* else a session of its own: no terminal, a group of its own
		 * (before its setpgid, which would make it a group leader, and
		 * a group leader's setsid is EPERM: red team 89, the gofer's
		 * start failed on an exclusive terminal) */
		if (r < 0)
			return setsid() < 0 ? -errno : 0;
	}
	if (setpgid(0, 0) < 0 && getpgrp() != getpid())
		return -errno;
	return 0;
}

int helper_leave_caller_stdio(void)
{
	int p[4] = { -1, -1, -1, -1 }; /* stdin's pipe, then stdout's and stderr's */

	if (leave_caller_terminal() < 0)
		return -1;
	int err = -1;
	if (pipe2(p, O_CLOEXEC) == 0 && pipe2(p + 2, O_CLOEXEC) == 0)
		err = moat_debug ? 2 : fcntl(2, F_DUPFD_CLOEXEC, 64);
	int r = err < 0 || dup2(p[0], 0) < 0 || dup2(p[3], 1) < 0 || (!moat_debug && dup2(p[3], 2) < 0) ? -1 : err;
	for (int i = 0; i < 4; i++)
		if (p[i] >= 0)
			close(p[i]);
	if (r < 0 && err > 2)
		close(err);
	return r;
}

struct trim_ranges {
	uintptr_t r[16][2];
	int n;
};

static int text_trim_one(struct dl_phdr_info *o, size_t size, void *arg)
{
	const ElfW(Phdr) *ph = o->dlpi_phdr;
	uintptr_t pg = 4096, base = o->dlpi_addr, self = (uintptr_t)text_trim_one;
	struct trim_ranges *later = arg, own = { .n = 0 };
	int mine = 0;

	(void)size;
	/* not the vDSO (no file behind it) */
	for (size_t i = 0; i < o->dlpi_phnum; i++)
		if (ph[i].p_type == PT_LOAD) {
			if (((base + ph[i].p_vaddr) & ~(pg - 1)) == (uintptr_t)getauxval(AT_SYSINFO_EHDR))
				return 0;
			break;
		}
	/* nor an object with text relocations (its text has private copies) */
	for (size_t i = 0; i < o->dlpi_phnum; i++) {
		if (ph[i].p_type != PT_DYNAMIC)
			continue;
		for (const ElfW(Dyn) *d = (const ElfW(Dyn) *)(base + ph[i].p_vaddr); d->d_tag != DT_NULL; d++)
			if (d->d_tag == DT_TEXTREL || (d->d_tag == DT_FLAGS && (d->d_un.d_val & DF_TEXTREL)))
				return 0;
	}
	for (size_t i = 0; i < o->dlpi_phnum; i++) {
		if (ph[i].p_type != PT_LOAD || (ph[i].p_flags & PF_W))
			continue;
		uintptr_t lo = (base + ph[i].p_vaddr) & ~(pg - 1);
		uintptr_t hi = (base + ph[i].p_vaddr + ph[i].p_memsz + pg - 1) & ~(pg - 1);
		/* clip off any page a writable segment or RELRO shares */
		for (size_t j = 0; j < o->dlpi_phnum; j++) {
			if (!(ph[j].p_type == PT_GNU_RELRO || (ph[j].p_type == PT_LOAD && (ph[j].p_flags & PF_W))))
				continue;
			uintptr_t wlo = (base + ph[j].p_vaddr) & ~(pg - 1);
			uintptr_t whi = (base + ph[j].p_vaddr + ph[j].p_memsz + pg - 1) & ~(pg - 1);
			if (whi <= lo || wlo >= hi)
				continue;
			if (wlo <= lo)
				lo = whi < hi ? whi : hi;
			else
				hi = wlo;
		}
		if (hi > lo && own.n < 16) {
			own.r[own.n][0] = lo;
			own.r[own.n++][1] = hi - lo;
		}
		mine |= self >= lo && self < hi;
	}
	/* this code's own object last: running it for the objects after it
	 * would map its pages again */
	if (mine) {
		*later = own;
		return 0;
	}
	/* the object's program headers lie in its first range: all read
	 * before any is dropped */
	for (int i = 0; i < own.n; i++)
		(void)madvise((void *)own.r[i][0], own.r[i][1], MADV_DONTNEED);
	return 0;
}

void text_trim(void)
{
	struct trim_ranges later = { .n = 0 };

	dl_iterate_phdr(text_trim_one, &later);
	for (int i = 0; i < later.n; i++)
		(void)madvise((void *)later.r[i][0], later.r[i][1], MADV_DONTNEED);
}

int open_caller_output(const char *path, int flags, mode_t mode)
{
	if (!strncmp(path, "/dev/", 5) || !strncmp(path, "/proc/", 6))
		return open(path, flags, mode);
	/* O_NONBLOCK: a FIFO without a reader is ENXIO, not a start that
	 * hangs; refused anyway below */
	int fd = open(path, flags | O_NOFOLLOW | O_NONBLOCK, mode);
	if (fd < 0)
		return -1;
	struct stat st = { 0 };
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    ((flags & O_NONBLOCK) == 0 && fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) < 0)) {
		int e = errno;
		close(fd);
		errno = S_ISREG(st.st_mode) ? e : EINVAL;
		return -1;
	}
	return fd;
}

/* A knob that undoes confinement or isolation: read only in a
 * -DMOAT_DEV_KNOBS build (red team 92: honoured in every build,
 * MOAT_SENTRY_FILTER_LEARN in moat's environment turned the sentry's filter
 * into a log, and a compromised sentry's bpf, clone(CLONE_NEWUSER), add_key
 * and setuid fchmod ran; an agent framework may pass a guest-chosen
 * environment through to moat) */
const char *moat_dev_knob(const char *name)
{
#ifdef MOAT_DEV_KNOBS
	return getenv(name);
#else
	(void)name;
	return NULL;
#endif
}

int stat_caller_source(const char *path, struct stat *st)
{
	if (lstat(path, st) < 0)
		return -1;
	if (S_ISLNK(st->st_mode)) {
		errno = ELOOP;
		return -1;
	}
	return 0;
}

const char *spawn_error(int e, char *buf, size_t len)
{
	struct rlimit rl;

	if (e == EAGAIN && getrlimit(RLIMIT_NPROC, &rl) == 0 &&
	    rl.rlim_cur != RLIM_INFINITY) {
		snprintf(buf, len, "the caller's process limit (ulimit -u %llu) is reached",
			 (unsigned long long)rl.rlim_cur);
		return buf;
	}
	if (e == EAGAIN)
		snprintf(buf, len, "the host's process or thread limit is reached (%s)", strerror(e));
	else
		snprintf(buf, len, "%s", strerror(e));
	return buf;
}

const char *caller_output_error(int e)
{
	return e == ELOOP ? "a symlink (refused: a sandbox may have made it)"
	       : e == EINVAL ? "not a regular file" : strerror(e);
}

char *proc_stat_field(char *text, int n)
{
	char *rp = strrchr(text, ')');
	int f = 2; /* field 3 is the first after ')' */

	for (char *q = rp ? rp + 1 : NULL; q && *q; q++)
		if (*q == ' ' && ++f == n)
			return q + 1;
	return NULL;
}

#ifndef STATX_MNT_ID
#define STATX_MNT_ID 0x1000U
#endif

void statx_to_stat(const struct statx *sx, struct stat *st)
{
	memset(st, 0, sizeof *st);
	st->st_dev = makedev(sx->stx_dev_major, sx->stx_dev_minor);
	st->st_ino = sx->stx_ino;
	st->st_mode = sx->stx_mode;
	st->st_nlink = sx->stx_nlink;
	st->st_uid = sx->stx_uid;
	st->st_gid = sx->stx_gid;
	st->st_rdev = makedev(sx->stx_rdev_major, sx->stx_rdev_minor);
	st->st_size = (off_t)sx->stx_size;
	st->st_blksize = (blksize_t)sx->stx_blksize;
	st->st_blocks = (blkcnt_t)sx->stx_blocks;
	st->st_atim.tv_sec = sx->stx_atime.tv_sec;
	st->st_atim.tv_nsec = sx->stx_atime.tv_nsec;
	st->st_mtim.tv_sec = sx->stx_mtime.tv_sec;
	st->st_mtim.tv_nsec = sx->stx_mtime.tv_nsec;
	st->st_ctim.tv_sec = sx->stx_ctime.tv_sec;
	st->st_ctim.tv_nsec = sx->stx_ctime.tv_nsec;
}

uint64_t fd_mount_id(int fd)
{
	struct statx sx;

	if (statx(fd, "", AT_EMPTY_PATH, STATX_MNT_ID, &sx) < 0 || !(sx.stx_mask & STATX_MNT_ID))
		return 0;
	return sx.stx_mnt_id;
}

int fd_stat_mount(int fd, struct stat *st, uint64_t *mnt)
{
	struct statx sx;

	if (statx(fd, "", AT_EMPTY_PATH, STATX_BASIC_STATS | STATX_MNT_ID, &sx) < 0 ||
	    (sx.stx_mask & STATX_BASIC_STATS) != STATX_BASIC_STATS) {
		*mnt = 0;
		return fstat(fd, st) < 0 ? -errno : 0;
	}
	statx_to_stat(&sx, st);
	*mnt = (sx.stx_mask & STATX_MNT_ID) ? sx.stx_mnt_id : 0;
	return 0;
}

int moat_cp_hidden(uint32_t cp)
{
	return (cp >= 0x80 && cp <= 0x9f) || cp == 0x61c || cp == 0x200e || cp == 0x200f ||
	       (cp >= 0x2028 && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

size_t moat_escape_text(char *out, size_t cap, size_t o, const char *s, size_t n, int esc_bs,
			int *cut)
{
	size_t i = 0;
	for (; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		int esc = c < 0x20 || c >= 0x7f || (esc_bs && c == '\\');
		if (o + (esc ? 4 : 1) + 1 > cap)
			break;
		if (!esc) {
			out[o++] = (char)c;
		} else {
			out[o++] = '\\';
			out[o++] = (char)('0' + (c >> 6));
			out[o++] = (char)('0' + ((c >> 3) & 7));
			out[o++] = (char)('0' + (c & 7));
		}
	}
	if (cap > o)
		out[o] = 0;
	if (i < n)
		*cut = 1;
	return o;
}

static int quote_byte(unsigned char c)
{
	return c < 0x20 || c == '"' || c == '\\' || c >= 0x7f;
}

size_t moat_quote_path(char *out, size_t cap, const char *prefix, const char *s, int strict)
{
	int q = 0;
	size_t o = 0, pl = strlen(prefix), sl = strlen(s);

	for (const char *t = prefix; *t && !q; t++)
		q = quote_byte((unsigned char)*t);
	for (const char *t = s; *t && !q; t++)
		q = quote_byte((unsigned char)*t);
	if (!q && strict && pl + sl &&
	    ((pl ? prefix[0] : s[0]) == ' ' || (sl ? s[sl - 1] : prefix[pl - 1]) == ' ' ||
	     strstr(prefix, " -> ") || strstr(s, " -> ") || strstr(prefix, ": ") || strstr(s, ": ") ||
	     (pl ? prefix[0] : s[0]) == '"'))
		q = 1;
	if (!cap)
		return 0;
	if (q && o + 1 < cap)
		out[o++] = '"';
	for (int part = 0; part < 2; part++) {
		for (const unsigned char *p = (const unsigned char *)(part ? s : prefix); *p; p++) {
			char e[5];
			size_t n = 0;
			static const char named[] = "abtnvfr";
			if (!q || !quote_byte(*p)) {
				e[n++] = (char)*p;
			} else if (*p == '"' || *p == '\\') {
				e[n++] = '\\';
				e[n++] = (char)*p;
			} else if (*p >= 7 && *p <= 13) {
				e[n++] = '\\';
				e[n++] = named[*p - 7];
			} else {
				e[n++] = '\\';
				e[n++] = (char)('0' + (*p >> 6));
				e[n++] = (char)('0' + ((*p >> 3) & 7));
				e[n++] = (char)('0' + (*p & 7));
			}
			if (o + n + 1 > cap) {
				out[o] = 0;
				return o;
			}
			memcpy(out + o, e, n);
			o += n;
		}
	}
	if (q && o + 2 <= cap)
		out[o++] = '"';
	out[o] = 0;
	return o;
}

#ifndef SO_NETNS_COOKIE
#define SO_NETNS_COOKIE 71
#endif

uint64_t sock_netns_cookie(int fd)
{
	uint64_t c = 0;
	socklen_t l = sizeof c;
	return getsockopt(fd, SOL_SOCKET, SO_NETNS_COOKIE, &c, &l) == 0 ? c : 0;
}

ssize_t read_text_at(int dfd, const char *path, char *buf, size_t size)
{
	if (size < 2)
		return -1;
	int fd = openat(dfd, path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, size - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	return n;
}

/* (util.h) */
int moat_path_inside(const char *a, const char *b)
{
	char *ra = realpath(a, NULL), *rb = realpath(b, NULL);
	struct stat sb;
	int r = -1;
	if (!ra || !rb || stat(rb, &sb) < 0)
		goto out;
	r = 0;
	for (size_t len = strlen(ra); len > 0; ) {
		struct stat st;
		ra[len] = 0;
		if (stat(len ? ra : "/", &st) == 0 && st.st_dev == sb.st_dev && st.st_ino == sb.st_ino) {
			r = 1;
			break;
		}
		if (len == 1)
			break;
		char *slash = strrchr(ra, '/');
		len = slash == ra ? 1 : (size_t)(slash - ra);
	}
out:
	free(ra);
	free(rb);
	return r;
}

int moat_paths_overlap(const char *a, const char *b)
{
	return moat_path_inside(a, b) == 1 || moat_path_inside(b, a) == 1;
}

/* (util.h) */
int moat_fd_inside(int a, int b)
{
	struct stat sb, st;
	if (fstat(b, &sb) < 0 || fstat(a, &st) < 0)
		return -1;
	if (st.st_dev == sb.st_dev && st.st_ino == sb.st_ino)
		return 1;
	int cur;
	if (S_ISDIR(st.st_mode)) {
		cur = openat(a, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	} else {
		/* a file: its directory by its current name (its link) */
		char lp[32], path[PATH_MAX];
		snprintf(lp, sizeof lp, "/proc/self/fd/%d", a);
		ssize_t n = readlink(lp, path, sizeof path - 1);
		if (n <= 0 || path[0] != '/')
			return -1;
		path[n] = 0;
		char *sl = strrchr(path, '/');
		if (sl == path)
			sl[1] = 0;
		else
			*sl = 0;
		cur = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	}
	if (cur < 0)
		return -1;
	int r = -1;
	for (int depth = 0; depth < 4096; depth++) {
		if (fstat(cur, &st) < 0)
			break;
		if (st.st_dev == sb.st_dev && st.st_ino == sb.st_ino) {
			r = 1;
			break;
		}
		int up = openat(cur, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
		struct stat ust;
		if (up < 0 || fstat(up, &ust) < 0) {
			if (up >= 0)
				close(up);
			break;
		}
		close(cur);
		cur = up;
		if (ust.st_dev == st.st_dev && ust.st_ino == st.st_ino) {
			r = 0; /* "/" (of our root) */
			break;
		}
	}
	close(cur);
	return r;
}

int moat_fds_overlap(int a, int b)
{
	return moat_fd_inside(a, b) == 1 || moat_fd_inside(b, a) == 1;
}

/* ---- a SIGIO owner that no signal reaches ----
 *
 * A thread parked until its tid is the owner of each of fds, then ended:
 * the owner is a struct pid with no task (F_GETOWN 0), which no signal
 * reaches, and, unlike no owner at all, one a terminal's O_ASYNC keeps
 * (the kernel's tty_fasync makes the tty's foreground process group the
 * owner of a description that has none). Named as a process (F_OWNER_PID,
 * the kernel's PIDTYPE_TGID) or a group, never as the thread itself: a
 * thread that leads no thread group or process group is neither, so no
 * signal reaches the parked thread either while it lives (an F_SETSIG
 * SIGKILL on the file would end the sentry). */
struct park {
	pthread_barrier_t bar;
	pid_t tid;
};

static void *park_main(void *arg)
{
	struct park *p = arg;
	p->tid = (pid_t)syscall(SYS_gettid);
	pthread_barrier_wait(&p->bar);
	pthread_barrier_wait(&p->bar);
	return NULL;
}

int moat_sigio_dead_owner(const int *fds, int n, int type)
{
	struct park p;
	pthread_t t;
	int r = 0;
	if (n == 0)
		return 0;
	if (type != F_OWNER_PGRP)
		type = F_OWNER_PID;
	if ((r = pthread_barrier_init(&p.bar, NULL, 2)) != 0)
		return -r;
	if ((r = pthread_create(&t, NULL, park_main, &p)) != 0) {
		pthread_barrier_destroy(&p.bar);
		return -r;
	}
	pthread_barrier_wait(&p.bar);
	struct f_owner_ex o = { .type = type, .pid = p.tid };
	for (int i = 0; i < n; i++)
		if (fcntl(fds[i], F_SETOWN_EX, &o) < 0 && r == 0)
			r = -errno;
	pthread_barrier_wait(&p.bar);
	pthread_join(t, NULL);
	pthread_barrier_destroy(&p.bar);
	return r;
}
