/*
 * probe_sysfuzz: a guest-side fuzzer of the sentry's syscall handlers.  NOT a
 * differential test (its results are random): tests/integration/sysfuzz.sh
 * runs it natively (it must finish) and under moat, where the sandbox must
 * survive it (no sanitizer report, no sentry error, no hang, no fd growth).
 *
 *   probe_sysfuzz SCRATCH [SECONDS [SEED [THREADS]]]
 *     SCRATCH  a writable directory (every call that changes a file is given
 *              a name beneath it, or an invalid one)
 *     SECONDS  how long to run (default 10)
 *     SEED     the first batch's seed (default: from the clock; printed)
 *     THREADS  callers per batch (default 3, plus one thread remapping and
 *              rewriting the argument buffers meanwhile)
 *   SYSFUZZ_ONLY=NAME[,NAME...]  only these rows; SYSFUZZ_BATCH=N  one batch;
 *   SYSFUZZ_VERBOSE=1  each batch that died (signal, fault address, last
 *   calls); SYSFUZZ_CHECKTOP=1  stop a batch at the call after which SCRATCH
 *   cannot be reached (debugging the fuzzer's own confinement)
 *
 * It refuses to run without a seccomp filter (exit 77; SYSFUZZ_NATIVE=1
 * overrides): natively its calls reach the host (IPC objects, priorities,
 * files as root).  Each batch works in SCRATCH/b<N>: every call that changes
 * what it names (chmod, rename, chdir, symlink...) gets a name beneath that
 * directory or an invalid pointer, never a pointer into the middle of another
 * path (whose tail "/" or "/.." would be the guest's root) nor a dirfd
 * outside it.
 *
 * Every batch is a child (a guest crash does not stop the run) seeded with
 * SEED+batch: a failing batch replays with `probe_sysfuzz DIR 5 SEED 1`
 * (one thread: exact replay; more threads interleave differently).  Each caller
 * has a per-thread 50 ms timer (no SA_RESTART) so a blocking call returns
 * EINTR; a batch that has not ended 15 s after its calls stop is a HANG (the
 * last call of each thread is printed).  The calls are the rows the sentry
 * handles (EMULATE, FAST_TRAP, EXEC, the trapped DENY rows), with arguments
 * from adversarial pools: fds (-1, huge, 0x100000003, closed, O_PATH, socket,
 * pipe, epoll, eventfd, the terminal), pointers (NULL, unmapped, kernel,
 * misaligned, read-only, a string ending at a page followed by an unmapped
 * one), lengths (0, -1, huge, a page and one), flags (all bits, each bit),
 * paths (empty, "/", 4095/4096/4097 long, .., trailing /, /proc/self/fd/N,
 * symlink loops), structs with random contents.  Outputs land only in the
 * fuzzer's scratch pages.  Calls that would end the run or reach the host
 * natively are left out or given safe arguments (kill: signal 0 or ignored
 * ones, no pid -1; clock_settime, sethostname, mount...: only with
 * MOAT_GUEST=1, i.e. in the sandbox).
 *
 * Output: "ok sysfuzz seed=S batches=B calls=C crashed=K" and exit 0, or
 * "FAIL sysfuzz HANG ..." and exit 1.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/uio.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PG 4096
#define IN_NONBLOCK_DUMMY 04000
#define MAXT 8

static const char *scratch; /* the batch's own directory beneath top */
static const char *top;
static char batchdir[PATH_MAX];
static int in_guest;
static unsigned nthreads = 3;

/* ---- per-thread random ---- */
static __thread uint64_t rs;
static uint64_t rnd(void)
{
	rs ^= rs << 13;
	rs ^= rs >> 7;
	rs ^= rs << 17;
	return rs;
}
static uint64_t R(uint64_t n) { return n ? rnd() % n : 0; }

/* ---- what each thread is doing (shared with the parent) ---- */
struct slot {
	volatile long nr, a[6];
	volatile unsigned long calls;
	volatile int in_call, tid;
};
static struct slot *slots; /* MAP_SHARED: MAXT of them */
struct shared_ids {
	volatile int shm[64], sem[64], msg[64];
	volatile int nshm, nsem, nmsg;
};
static struct shared_ids *ids;

/* ---- memory pools ---- */
static char *area;          /* RW pages: outputs land here */
#define AREA_PAGES 16
static char *ropage;        /* read-only page */
static char *edge;          /* RW page followed by an unmapped page */
static char *hole;          /* an unmapped page */
static char *vol;           /* pages the remapper thread toggles */
#define VOL_PAGES 2
static char *longpath[4];   /* 4095, 4096, 4097, 8192 long names under scratch */

static int fds[28], nfds;
static int rofds[8], nrofds;
static int dirfds[8], ndirfds;

static uint64_t pick_ptr(void)
{
	switch (R(14)) {
	case 0: return 0;
	case 1: return 1;
	case 2: return (uint64_t)hole + R(PG);
	case 3: return 0xffffffff81000000ull;
	case 4: return 0xffff800000000000ull + R(1 << 20);
	case 5: return (uint64_t)ropage + R(PG);
	case 6: return (uint64_t)edge + PG - 1 - R(64);
	case 7: return (uint64_t)vol + R(VOL_PAGES * PG);
	case 8: return (uint64_t)area + R(AREA_PAGES * PG - 64) + 1; /* misaligned */
	case 9: return -1ull;
	default: return (uint64_t)area + (R(AREA_PAGES * PG - 512) & ~7ull);
	}
}

/* n bytes of random content at p (the struct's fields: zero, all ones,
 * small, a pointer, one bit, anything) */
static void fill(char *p, size_t n)
{
	for (size_t i = 0; i < n; i += 8) {
		uint64_t v;
		switch (R(6)) {
		case 0: v = 0; break;
		case 1: v = -1ull; break;
		case 2: v = R(16); break;
		case 3: v = pick_ptr(); break;
		case 4: v = 1ull << R(64); break;
		default: v = rnd(); break;
		}
		memcpy(p + i, &v, n - i < 8 ? n - i : 8);
	}
}

/* A buffer of random content (a struct of any kind) in the area. */
static uint64_t rand_struct(size_t len)
{
	if (R(4) == 0) return pick_ptr();
	char *p = area + (R(AREA_PAGES * PG - len - 1) & ~7ull);
	fill(p, len);
	return (uint64_t)p;
}

static uint64_t pick_len(void)
{
	switch (R(10)) {
	case 0: return 0;
	case 1: return -1ull;
	case 2: return 0x7fffffff;
	case 3: return PG + 1;
	case 4: return 1ull << R(64);
	case 5: return (uint64_t)INT_MAX + 1;
	default: return R(512);
	}
}

static uint64_t pick_flags(void)
{
	switch (R(6)) {
	case 0: return 0;
	case 1: return -1ull;
	case 2: return 0xffffffff;
	case 3: return 1ull << R(64);
	case 4: return rnd() & rnd();
	default: return R(16);
	}
}

static uint64_t pick_int(void)
{
	static const int64_t v[] = {0, 1, 2, 3, -1, -2, INT_MAX, INT_MIN, 0x100000000ll, 4096, 7, 64, 65, 1000};
	return R(3) ? (uint64_t)v[R(sizeof v / sizeof v[0])] : rnd();
}

static uint64_t pick_fd(int ro)
{
	switch (R(12)) {
	case 0: return (uint64_t)-1;
	case 1: return 0x100000003ull;
	case 2: return 1000000;
	case 3: return (uint64_t)-100; /* AT_FDCWD */
	case 4: return 1023;            /* closed */
	case 5:
		if (ro) return R(3); /* the terminal / stdio for read-only calls */
		/* fallthrough */
	case 6:
		if (ndirfds) return (uint64_t)dirfds[R(ndirfds)];
		/* fallthrough */
	default:
		if (ro && nrofds && R(3) == 0) return rofds[R(nrofds)];
		return nfds ? (uint64_t)fds[R(nfds)] : (uint64_t)-1;
	}
}

/* A path string written into memory from the pools.  w: it may be changed
 * (a name beneath scratch or an invalid one). */
static uint64_t pick_path(int w)
{
	static const char *rel[] = {"f", "d", "d/", "d/sub/..", "loop", "loop/x", "dangle", "sock", "d/../f", "f/", ".", "d/..",
				    "newfile", "newdir/", "d/sub", "lnk", "lnk/", "fifo", "d/sub/../../f", "./././f"};
	static const char *ro_abs[] = {"/", "/proc/self/root", "/proc/self/fd/0", "/proc/self/fd/3", "/proc/self/fd/-1",
				       "/proc/self/exe", "/proc/self/cwd", "/proc/self/fd/1000", "/proc/1/root", "/etc/passwd",
				       "/dev/null", "/proc/self/root/etc", "/..//../", "/proc/self/fd/5/..", "/nonexistent/x",
				       "/proc/self/maps", "/proc/self/status", "/sys", "/tmp/", "/proc/self/task"};
	char *dst;
	switch (R(12)) {
	case 0: /* a name that changes things: no pointer into the middle of
		 * another path (its tail "/" or "/.." would name the root) */
		if (!w) return pick_ptr();
		switch (R(5)) {
		case 0: return 0;
		case 1: return (uint64_t)hole + R(PG);
		case 2: return 0xffffffff81000000ull;
		case 3: return -1ull;
		default: return 1;
		}
	case 1: { /* a name crossing into the unmapped page */
		const char *s = rel[R(sizeof rel / sizeof rel[0])];
		size_t n = strlen(s);
		memcpy(edge + PG - n, s, n);
		return (uint64_t)(edge + PG - n);
	}
	case 2: return (uint64_t)longpath[R(4)];
	case 3: /* the remapper's string (for a name that changes things only
		 * its start: elsewhere its random bytes are mostly '/') */
		return (uint64_t)(vol + (w || R(2) ? 0 : R(VOL_PAGES * PG)));
	default: dst = area + R(AREA_PAGES * PG - 300); break;
	}
	const char *s;
	char tmp[300];
	if (!w && R(3) == 0)
		s = ro_abs[R(sizeof ro_abs / sizeof ro_abs[0])];
	else if (R(4) == 0)
		s = R(2) ? "" : rel[R(sizeof rel / sizeof rel[0])];
	else {
		snprintf(tmp, sizeof tmp, "%s/%s", scratch, rel[R(sizeof rel / sizeof rel[0])]);
		s = tmp;
	}
	size_t n = strlen(s);
	memcpy(dst, s, n + 1);
	return (uint64_t)dst;
}

static uint64_t pick_sig(void)
{
	static const int v[] = {0, SIGURG, SIGWINCH, SIGCHLD, 65, -1, 1000, 0};
	return v[R(8)];
}
static uint64_t pick_pid(void)
{
	switch (R(5)) {
	case 0: return getpid();
	case 1: return syscall(SYS_gettid);
	case 2: return 4194304 + R(1000);
	case 3: return INT_MIN;
	default: return 0x7ffffff0;
	}
}

/* iovec arrays and msghdrs that lie */
static uint64_t pick_iov(void)
{
	if (R(5) == 0) return pick_ptr();
	struct iovec *v = (struct iovec *)(area + (R(AREA_PAGES * PG / 2) & ~15ull));
	for (int i = 0; i < 8; i++) {
		v[i].iov_base = (void *)pick_ptr();
		v[i].iov_len = R(3) ? R(256) : pick_len();
	}
	return (uint64_t)v;
}
static uint64_t pick_msghdr(void)
{
	if (R(5) == 0) return pick_ptr();
	struct msghdr *m = (struct msghdr *)(area + (R(AREA_PAGES * PG / 2) & ~15ull));
	m->msg_name = (void *)(R(2) ? 0 : rand_struct(128));
	m->msg_namelen = R(2) ? R(200) : (unsigned)pick_len();
	m->msg_iov = (void *)pick_iov();
	m->msg_iovlen = R(3) ? R(9) : pick_len();
	struct cmsghdr *c = (struct cmsghdr *)rand_struct(256);
	if ((char *)c >= area && (char *)c < area + AREA_PAGES * PG) {
		c->cmsg_len = R(2) ? R(300) : pick_len();
		c->cmsg_level = R(2) ? SOL_SOCKET : (int)rnd();
		c->cmsg_type = R(4);
		for (int i = 0; i < 8; i++) ((int *)CMSG_DATA(c))[i] = (int)pick_fd(1);
	}
	m->msg_control = c;
	m->msg_controllen = R(2) ? R(300) : pick_len();
	m->msg_flags = (int)pick_flags();
	return (uint64_t)m;
}

/* A msghdr with ancillary data that is well formed or lies a little:
 * SCM_RIGHTS with up to 1000 fds the batch holds (the kernel's limit is
 * 253), SCM_CREDENTIALS with forged ids, both in one buffer, cmsg_len and
 * msg_controllen one byte off, odd or huge. */
static uint64_t pick_cmsg_msghdr(void)
{
	static const unsigned nfd[] = {0, 1, 2, 3, 64, 252, 253, 254, 255, 500, 1000};
	char *base = area + AREA_PAGES * PG / 2 + (R(4) * 8); /* the upper half: the iovec pools use the lower */
	struct msghdr *m = (struct msghdr *)(void *)(area + (R(AREA_PAGES * PG / 4) & ~15ull));
	struct iovec *v = (struct iovec *)(void *)((char *)m + 64);
	v->iov_base = area + R(AREA_PAGES * PG / 4);
	v->iov_len = R(64);
	memset(m, 0, sizeof *m);
	m->msg_iov = v;
	m->msg_iovlen = R(8) ? 1 : pick_len();
	char *c = base;
	size_t used = 0, room = AREA_PAGES * PG / 2 - 64;
	int parts = 1 + (int)R(3);
	for (int i = 0; i < parts; i++) {
		struct cmsghdr *h = (struct cmsghdr *)(void *)(c + used);
		size_t dl;
		h->cmsg_level = R(8) ? SOL_SOCKET : (int)pick_int();
		if (R(2)) { /* SCM_RIGHTS */
			unsigned n = nfd[R(sizeof nfd / sizeof nfd[0])];
			h->cmsg_type = SCM_RIGHTS;
			dl = n * sizeof(int);
			if (CMSG_SPACE(dl) + used > room) break;
			for (unsigned j = 0; j < n; j++) ((int *)(void *)CMSG_DATA(h))[j] = R(16) ? (int)pick_fd(1) : (int)pick_int();
		} else { /* SCM_CREDENTIALS: forged ids */
			struct ucred u = {R(2) ? getpid() : (pid_t)pick_pid(), R(2) ? 0 : (uid_t)pick_int(), R(2) ? 0 : (gid_t)pick_int()};
			h->cmsg_type = SCM_CREDENTIALS;
			dl = sizeof u;
			memcpy(CMSG_DATA(h), &u, sizeof u);
		}
		h->cmsg_len = CMSG_LEN(dl);
		switch (R(10)) {
		case 0: h->cmsg_len += 1; break;
		case 1: h->cmsg_len -= 1; break;
		case 2: h->cmsg_len = R(2) ? 0 : pick_len(); break;
		case 3: h->cmsg_len = sizeof(struct cmsghdr); break;
		default: break;
		}
		used += CMSG_SPACE(dl);
	}
	m->msg_control = c;
	switch (R(8)) {
	case 0: m->msg_controllen = used ? used - 1 : 1; break;
	case 1: m->msg_controllen = R(2) ? R(24) : pick_len(); break;
	case 2: m->msg_controllen = used + 1 + R(64); break;
	case 3: m->msg_control = (void *)pick_ptr(); m->msg_controllen = used; break;
	case 4: m->msg_control = edge + PG - (used < PG ? used : PG) + R(2); m->msg_controllen = used; break; /* the end in the unmapped page */
	default: m->msg_controllen = used;
	}
	if (R(6) == 0) { /* a name whose length lies */
		m->msg_name = (void *)rand_struct(128);
		static const unsigned nl[] = {0, 1, 2, 3, 110, 111, 112, 128, 129, 4096, 0x7fffffff, 0xffffffff};
		m->msg_namelen = nl[R(sizeof nl / sizeof nl[0])];
	}
	return (uint64_t)m;
}

/* Paths of many components: `..` chains from the batch's directory up past
 * the root, `.` runs, slash runs, around PATH_MAX (read-only rows only: they
 * may name anything). */
static uint64_t pick_deep(void)
{
	static const char *unit[] = {"../", "./", "/", "d/sub/../", "d/../", "loop/../", "lnk/../", "d/sub/../../d/"};
	static const size_t lens[] = {100, 1000, 4094, 4095, 4096, 4097, 8000};
	size_t len = lens[R(sizeof lens / sizeof lens[0])];
	char *d = area + (R(AREA_PAGES * PG / 2 - 8200));
	const char *u = unit[R(sizeof unit / sizeof unit[0])];
	size_t ul = strlen(u), n = 0;
	if (R(2)) { n = (size_t)snprintf(d, 300, "%s/", scratch); }
	while (n + ul <= len) { memcpy(d + n, u, ul); n += ul; }
	while (n < len) d[n++] = '/';
	d[n] = 0;
	if (R(4) == 0 && n) d[n - 1] = 'f';
	return (uint64_t)d;
}

/* ---- the rows ---- */
/* arg kinds: p path, w writable path, f fd, r fd (read-only use), d dirfd,
 * b pointer, s struct (random content), v iovec, M msghdr, l length, x flags,
 * i int, k pid, g signal, u uid, m mode, 0 zero, a sockaddr; chdir, fchdir
 * and chroot stay in the batch's directory: "." is a name that changes things */
struct row {
	const char *name;
	long nr;
	const char *k;
	int host; /* 1: only in the sandbox (affects the host natively) */
	int t;    /* a targeted generator (targeted()) fills the arguments */
};
enum { T_AFF = 1, T_SETATTR, T_GETATTR, T_RLIM, T_FOWN, T_PTY, T_PIDFD, T_PEER, T_STATX, T_OPENAT2, T_CLONE3, T_PMQ };
static const struct row rows[] = {
	{"open", SYS_open, "wxm", 0}, {"open_ro", SYS_open, "p0m", 0}, {"stat", SYS_stat, "pb", 0},
	{"lstat", SYS_lstat, "pb", 0}, {"ioctl", SYS_ioctl, "fxb", 0}, {"access", SYS_access, "pi", 0},
	{"shmget", SYS_shmget, "0lx", 0}, {"shmat", SYS_shmat, "i0x", 0}, {"shmctl", SYS_shmctl, "iib", 0},
	{"connect", SYS_connect, "fal", 0}, {"sendto", SYS_sendto, "fblxal", 0},
	{"recvfrom", SYS_recvfrom, "fblxbb", 0}, {"sendmsg", SYS_sendmsg, "fMx", 0}, {"recvmsg", SYS_recvmsg, "fMx", 0},
	{"bind", SYS_bind, "fal", 0}, {"listen", SYS_listen, "fi", 0}, {"getsockname", SYS_getsockname, "fbb", 0},
	{"getpeername", SYS_getpeername, "fbb", 0}, {"setsockopt", SYS_setsockopt, "fiisl", 0},
	{"getsockopt", SYS_getsockopt, "fiibb", 0}, {"execve", SYS_execve, "Ebb", 0},
	{"kill", SYS_kill, "kg", 0}, {"uname", SYS_uname, "b", 0}, {"semget", SYS_semget, "0ix", 0},
	{"semop", SYS_semop, "isl", 0}, {"semctl", SYS_semctl, "iiib", 0}, {"msgget", SYS_msgget, "0x", 0},
	{"msgsnd", SYS_msgsnd, "isli", 0}, {"msgrcv", SYS_msgrcv, "ibliX", 0}, {"msgctl", SYS_msgctl, "iib", 0},
	{"fcntl", SYS_fcntl, "fFs", 0}, {"flock", SYS_flock, "fx", 0}, {"truncate", SYS_truncate, "wL", 0},
	{"getdents", SYS_getdents, "rbl", 0}, {"getdents64", SYS_getdents64, "rbl", 0}, {"getcwd", SYS_getcwd, "bl", 0},
	{"chdir", SYS_chdir, "w", 0}, {"fchdir", SYS_fchdir, "f", 0}, {"rename", SYS_rename, "ww", 0},
	{"mkdir", SYS_mkdir, "wm", 0}, {"rmdir", SYS_rmdir, "w", 0}, {"creat", SYS_creat, "wm", 0},
	{"link", SYS_link, "ww", 0}, {"unlink", SYS_unlink, "w", 0}, {"symlink", SYS_symlink, "Tw", 0},
	{"readlink", SYS_readlink, "pbl", 0}, {"chmod", SYS_chmod, "wm", 0}, {"fchmod", SYS_fchmod, "fm", 0},
	{"chown", SYS_chown, "wuu", 0}, {"fchown", SYS_fchown, "fuu", 0}, {"lchown", SYS_lchown, "wuu", 0},
	{"umask", SYS_umask, "m", 0}, {"getrlimit", SYS_getrlimit, "ib", 0}, {"sysinfo", SYS_sysinfo, "b", 0},
	{"times", SYS_times, "b", 0}, {"getuid", SYS_getuid, "", 0}, {"setuid", SYS_setuid, "u", 0},
	{"setgid", SYS_setgid, "u", 0}, {"setreuid", SYS_setreuid, "uu", 0}, {"setregid", SYS_setregid, "uu", 0},
	{"getgroups", SYS_getgroups, "ib", 0}, {"setgroups", SYS_setgroups, "is", 0},
	{"setresuid", SYS_setresuid, "uuu", 0}, {"getresuid", SYS_getresuid, "bbb", 0},
	{"setresgid", SYS_setresgid, "uuu", 0}, {"getresgid", SYS_getresgid, "bbb", 0},
	{"setfsuid", SYS_setfsuid, "u", 0}, {"setfsgid", SYS_setfsgid, "u", 0}, {"capget", SYS_capget, "sb", 0},
	{"capset", SYS_capset, "ss", 0}, {"rt_sigqueueinfo", SYS_rt_sigqueueinfo, "kgs", 0},
	{"utime", SYS_utime, "ws", 0}, {"mknod", SYS_mknod, "wmx", 1}, {"statfs", SYS_statfs, "pb", 0},
	{"fstatfs", SYS_fstatfs, "rb", 0}, {"sysfs", SYS_sysfs, "ibb", 0}, {"setpriority", SYS_setpriority, "i0i", 0},
	{"sched_setparam", SYS_sched_setparam, "0s", 0}, {"sched_getparam", SYS_sched_getparam, "kb", 0},
	{"sched_setscheduler", SYS_sched_setscheduler, "0is", 0}, {"sched_getscheduler", SYS_sched_getscheduler, "k", 0},
	{"sched_rr_get_interval", SYS_sched_rr_get_interval, "kb", 0}, {"prctl", SYS_prctl, "Pxxxx", 0},
	{"adjtimex", SYS_adjtimex, "s", 1}, {"setrlimit", SYS_setrlimit, "Qs", 0}, {"chroot", SYS_chroot, "w", 1},
	{"mount", SYS_mount, "wwMxs", 1}, {"umount2", SYS_umount2, "wx", 1}, {"sethostname", SYS_sethostname, "bl", 1},
	{"setdomainname", SYS_setdomainname, "bl", 1}, {"setxattr", SYS_setxattr, "wpblx", 0},
	{"lsetxattr", SYS_lsetxattr, "wpblx", 0}, {"fsetxattr", SYS_fsetxattr, "fpblx", 0},
	{"getxattr", SYS_getxattr, "ppbl", 0}, {"lgetxattr", SYS_lgetxattr, "ppbl", 0},
	{"fgetxattr", SYS_fgetxattr, "rpbl", 0}, {"listxattr", SYS_listxattr, "pbl", 0},
	{"llistxattr", SYS_llistxattr, "pbl", 0}, {"flistxattr", SYS_flistxattr, "rbl", 0},
	{"removexattr", SYS_removexattr, "wp", 0}, {"lremovexattr", SYS_lremovexattr, "wp", 0},
	{"fremovexattr", SYS_fremovexattr, "fp", 0}, {"tkill", SYS_tkill, "kg", 0},
	{"sched_setaffinity", SYS_sched_setaffinity, "0ls", 0}, {"io_setup", SYS_io_setup, "ib", 0},
	{"io_destroy", SYS_io_destroy, "x", 0}, {"semtimedop", SYS_semtimedop, "isls", 0},
	{"clock_settime", SYS_clock_settime, "is", 1}, {"tgkill", SYS_tgkill, "kkg", 0}, {"utimes", SYS_utimes, "ws", 0},
	{"mq_open", SYS_mq_open, "Oxms", 0}, {"mq_unlink", SYS_mq_unlink, "O", 0},
	{"ioprio_set", SYS_ioprio_set, "iii", 0}, {"inotify_add_watch", SYS_inotify_add_watch, "fpx", 0},
	{"openat", SYS_openat, "dwxm", 0}, {"openat_ro", SYS_openat, "dp0m", 0}, {"mkdirat", SYS_mkdirat, "dwm", 0},
	{"mknodat", SYS_mknodat, "dwmx", 1}, {"fchownat", SYS_fchownat, "dwuux", 0},
	{"futimesat", SYS_futimesat, "dws", 0}, {"newfstatat", SYS_newfstatat, "dpbx", 0},
	{"unlinkat", SYS_unlinkat, "dwx", 0}, {"renameat", SYS_renameat, "dwdw", 0},
	{"linkat", SYS_linkat, "dwdwx", 0}, {"symlinkat", SYS_symlinkat, "Tdw", 0},
	{"readlinkat", SYS_readlinkat, "dpbl", 0}, {"fchmodat", SYS_fchmodat, "dwm", 0},
	{"faccessat", SYS_faccessat, "dpi", 0}, {"unshare", SYS_unshare, "x", 1},
	{"get_robust_list", SYS_get_robust_list, "kbb", 0}, {"utimensat", SYS_utimensat, "dwsx", 0},
	{"rt_tgsigqueueinfo", SYS_rt_tgsigqueueinfo, "kkgs", 0}, {"recvmmsg", SYS_recvmmsg, "fMlxs", 0},
	{"prlimit64", SYS_prlimit64, "kQsb", 0}, {"name_to_handle_at", SYS_name_to_handle_at, "dpsbx", 0},
	{"open_by_handle_at", SYS_open_by_handle_at, "rs0", 0}, {"clock_adjtime", SYS_clock_adjtime, "is", 1},
	{"sendmmsg", SYS_sendmmsg, "fMlx", 0}, {"process_vm_readv", SYS_process_vm_readv, "kvlvlx", 0},
	{"process_vm_writev", SYS_process_vm_writev, "kvlVlx", 0}, {"kcmp", SYS_kcmp, "kkirr", 0},
	{"sched_setattr", SYS_sched_setattr, "0sx", 0}, {"sched_getattr", SYS_sched_getattr, "kblx", 0},
	{"renameat2", SYS_renameat2, "dwdwx", 0}, {"seccomp", SYS_seccomp, "Sxs", 0},
	{"memfd_create", SYS_memfd_create, "px", 0}, {"execveat", SYS_execveat, "dEbbx", 0},
	{"statx", SYS_statx, "dpxxb", 0}, {"pidfd_send_signal", SYS_pidfd_send_signal, "rgs0", 0},
	{"openat2", SYS_openat2, "dwHl", 0}, {"pidfd_getfd", SYS_pidfd_getfd, "rix", 0},
	{"faccessat2", SYS_faccessat2, "dpix", 0}, {"fchmodat2", 452, "dwmx", 0},
	{"setxattrat", 463, "dwxpsl", 0}, {"getxattrat", 464, "dpxpsl", 0}, {"listxattrat", 465, "dpxbl", 0},
	{"removexattrat", 466, "dwxp", 0}, {"socket", SYS_socket, "iii", 0}, {"socketpair", SYS_socketpair, "iiib", 0},
	{"personality", SYS_personality, "Y", 0}, {"getdents_vol", SYS_getdents64, "rVl", 0},
	/* targeted (red team 84): the trapped ioctl, fcntl and sockopt values
	 * of the table, messages carrying many or forged ancillary data, the
	 * size-versioned structs with sizes around theirs and nonzero tails */
	{"ioctl_table", SYS_ioctl, "fIb", 0}, {"fcntl_lock", SYS_fcntl, "fGs", 0},
	{"setsockopt_table", SYS_setsockopt, "fZZsl", 0}, {"getsockopt_table", SYS_getsockopt, "fZZbb", 0},
	{"sendmsg_cmsg", SYS_sendmsg, "fCx", 0}, {"recvmsg_cmsg", SYS_recvmsg, "fCx", 0},
	{"sendmmsg_cmsg", SYS_sendmmsg, "fClx", 0}, {"recvmmsg_cmsg", SYS_recvmmsg, "fClxs", 0},
	{"openat2_size", SYS_openat2, "dwHh", 0}, {"sched_setattr_size", SYS_sched_setattr, "0Ax", 0},
	{"sched_getattr_size", SYS_sched_getattr, "kbhx", 0}, {"statx_deep", SYS_statx, "dDxxb", 0},
	{"open_deep", SYS_openat, "dD0m", 0}, {"readlink_deep", SYS_readlink, "Dbl", 0},
	{"fadvise64", SYS_fadvise64, "fiiJ", 0}, {"getgid", SYS_getgid, "", 0}, {"geteuid", SYS_geteuid, "", 0},
	{"getegid", SYS_getegid, "", 0}, {"madvise_ksm", SYS_madvise, "Kll", 0}, {"clone_ns", SYS_clone, "N0000", 1},
	/* the trapped DENY rows: only their decoders (--trace, --audit) and the
	 * audit read their arguments */
	{"syslog", SYS_syslog, "ibl", 1}, {"ustat", SYS_ustat, "xb", 1}, {"pivot_root", SYS_pivot_root, "pp", 1},
	{"acct", SYS_acct, "p", 1}, {"settimeofday", SYS_settimeofday, "ss", 1}, {"swapon", SYS_swapon, "px", 1},
	{"quotactl", SYS_quotactl, "xpib", 1}, {"add_key", SYS_add_key, "ppsli", 1},
	{"request_key", SYS_request_key, "ppsi", 1}, {"keyctl", SYS_keyctl, "ixxxx", 1},
	{"perf_event_open", SYS_perf_event_open, "siifx", 1}, {"fanotify_mark", SYS_fanotify_mark, "fxxdp", 1},
	{"setns", SYS_setns, "fx", 1}, {"bpf", SYS_bpf, "isl", 1}, {"open_tree", SYS_open_tree, "dpx", 1},
	{"move_mount", SYS_move_mount, "dpdpx", 1}, {"fsopen", SYS_fsopen, "px", 1},
	{"fsconfig", SYS_fsconfig, "fipbi", 1}, {"fspick", SYS_fspick, "dpx", 1}, {"clone3", SYS_clone3, "sh", 1},
	{"mount_setattr", SYS_mount_setattr, "dpxsh", 1}, {"landlock_create_ruleset", 444, "shx", 1},
	{"statmount", 457, "sblx", 1}, {"listmount", 458, "sblx", 1}, {"lsm_get_self_attr", 459, "ibbx", 1},
	{"open_tree_attr", 467, "dpxsh", 1}, {"file_getattr", 468, "dpbhx", 1}, {"file_setattr", 469, "dpshx", 1},
	{"init_module", SYS_init_module, "blp", 1}, {"finit_module", SYS_finit_module, "fpx", 1},
	{"process_madvise", SYS_process_madvise, "fvlix", 1}, {"uselib", SYS_uselib, "p", 1},
	/* targeted (fuzz87): the newest handlers, their sizes and structs at a
	 * page's end (the rest unmapped), every policy, flag and resource, the
	 * sandbox's ptys, pidfds and peers (targeted()) */
	{"sched_setaffinity_sz", SYS_sched_setaffinity, "000", 0, T_AFF},
	{"sched_setattr_all", SYS_sched_setattr, "000", 0, T_SETATTR},
	{"sched_getattr_all", SYS_sched_getattr, "0000", 0, T_GETATTR},
	{"prlimit64_all", SYS_prlimit64, "0000", 0, T_RLIM}, {"fcntl_owner", SYS_fcntl, "000", 0, T_FOWN},
	{"ioctl_pty", SYS_ioctl, "000", 0, T_PTY}, {"ioctl_pidfd", SYS_ioctl, "000", 0, T_PIDFD},
	{"getsockopt_peer", SYS_getsockopt, "00000", 0, T_PEER}, {"statx_edge", SYS_statx, "dp000", 0, T_STATX},
	{"openat2_edge", SYS_openat2, "dw00", 0, T_OPENAT2}, {"clone3_edge", SYS_clone3, "00", 1, T_CLONE3},
	{"ioctl_procmap", SYS_ioctl, "000", 0, T_PMQ},
};
#define NROWS (sizeof rows / sizeof rows[0])
static unsigned char enabled[NROWS];

static __thread int row_writes, row_mount; /* the row changes what it names: no dirfd outside the batch's */
static uint64_t gen(char k)
{
	switch (k) {
	case 'p': return pick_path(0);
	case 'w': return pick_path(1);
	case 'f': return pick_fd(0);
	case 'r': return pick_fd(1);
	case 'd': return R(3) ? (uint64_t)-100 : pick_fd(!row_writes);
	case 'b': return pick_ptr();
	case 's': return rand_struct(R(2) ? 32 : 128);
	case 'v': return pick_iov();
	case 'V': { /* remote iovecs: only into the area or invalid */
		struct iovec *v = (struct iovec *)(area + (R(AREA_PAGES * PG / 2) & ~15ull));
		for (int i = 0; i < 8; i++) {
			v[i].iov_base = R(2) ? area + R(AREA_PAGES * PG / 2) : (void *)(uint64_t)(R(2) ? 0 : 0xffffffff81000000ull);
			v[i].iov_len = R(256);
		}
		return (uint64_t)v;
	}
	case 'M': /* mount: a file system type (the msghdr kind is 'M' only outside mount) */
		if (row_mount) {
			static const char *fs[] = {"tmpfs", "proc", "sysfs", "none", "overlay", "bind", "", "mqueue"};
			char *d = area + R(AREA_PAGES * PG - 16);
			strcpy(d, fs[R(sizeof fs / sizeof fs[0])]);
			return R(5) ? (uint64_t)d : pick_ptr();
		}
		return pick_msghdr();
	case 'l': return pick_len();
	case 'L': return R(2) ? R(100000) : pick_len();
	case 'x': return pick_flags();
	case 'X': return pick_flags() | IPC_NOWAIT;
	case 'i': return pick_int();
	case 'k': return pick_pid();
	case 'g': return pick_sig();
	case 'u': return R(2) ? (uint64_t)(int)pick_int() : R(70000);
	case 'm': return R(2) ? R(010000) : rnd();
	case '0': return 0;
	case 'a': { /* a sockaddr */
		if (R(4) == 0) return pick_ptr();
		struct sockaddr_un *u = (struct sockaddr_un *)rand_struct(128);
		if ((char *)u >= area && (char *)u < area + AREA_PAGES * PG && R(3) == 0) { /* inet: the guest's loopback, any, the one allowed */
			static const uint32_t ad[] = {0x7f000001, 0, 0xc0000201, 0xffffffff, 0x0a000001};
			struct sockaddr_in *in = (struct sockaddr_in *)(void *)u;
			in->sin_family = R(4) ? AF_INET : AF_INET6;
			in->sin_port = htons(R(2) ? 9 : (uint16_t)R(65536));
			in->sin_addr.s_addr = htonl(ad[R(5)]);
			return (uint64_t)u;
		}
		if ((char *)u >= area && (char *)u < area + AREA_PAGES * PG) {
			u->sun_family = R(2) ? AF_UNIX : (sa_family_t)R(50);
			if (R(2)) snprintf(u->sun_path, sizeof u->sun_path, "%s/sock", scratch);
		}
		return (uint64_t)u;
	}
	case 'E': { /* execve: never a real program */
		static const char *bad[] = {"/nonexistent", "", "/proc/self/fd/1000", "/dev/null", "/"};
		if (R(3) == 0) return pick_ptr();
		char *d = area + R(AREA_PAGES * PG - 64);
		strcpy(d, bad[R(5)]);
		return (uint64_t)d;
	}
	case 'F': { /* fcntl commands, no F_SETOWN games on stdio */
		static const int v[] = {F_GETFD, F_SETFD, F_GETFL, F_SETFL, F_GETLK, F_SETLK, F_OFD_GETLK, F_OFD_SETLK,
					F_DUPFD, F_DUPFD_CLOEXEC, F_GETOWN_EX, F_GETSIG, F_SETSIG, F_GETPIPE_SZ, F_ADD_SEALS,
					F_GET_SEALS, F_SETLEASE, F_GETLEASE, F_NOTIFY, F_GET_RW_HINT, F_SET_RW_HINT, 1030, 5000};
		return R(8) ? (uint64_t)v[R(sizeof v / sizeof v[0])] : pick_int();
	}
	case 'P': { /* prctl: not PR_SET_SECCOMP (22), PR_SET_PDEATHSIG fine */
		uint64_t o;
		do o = R(3) ? R(80) : pick_int();
		/* not seccomp, TSC (a SIGSEGV on rdtsc), MM, syscall user dispatch, shadow stacks */
		while (o == 22 || o == 26 || o == 35 || o == 59 || o == 74 || o == 75 || o == 76);
		return o;
	}
	case 'Q': return R(3) ? (uint64_t)RLIMIT_STACK : pick_int(); /* setrlimit: mostly harmless ones */
	case 'S': return 1 + R(4); /* seccomp: never SECCOMP_SET_MODE_STRICT (0) */
	case 'O': {
		char *d = area + R(AREA_PAGES * PG - 64);
		snprintf(d, 64, R(4) ? "/sysfuzz-%d" : "%d/x/", (int)R(4));
		return R(4) ? (uint64_t)d : pick_ptr();
	}
	case 'H': { /* open_how */
		uint64_t *h = (uint64_t *)rand_struct(64);
		if ((char *)h >= area && (char *)h < area + AREA_PAGES * PG && R(2)) {
			h[0] = R(2) ? O_RDONLY : pick_flags();
			h[1] = R(2) ? 0 : R(010000);
			h[2] = R(2) ? R(64) : pick_flags();
		}
		return (uint64_t)h;
	}
	case 'T': { /* a symlink's target: the batch's own names (a link to "/"
		   * would make a later chmod of the link the root's) */
		static const char *t[] = {"f", "d", "loop", "nowhere", "d/sub", "", "lnk/..", "fifo", "x/../../f"};
		if (R(6) == 0) return pick_path(1);
		char *d = area + R(AREA_PAGES * PG - 64);
		strcpy(d, t[R(sizeof t / sizeof t[0])]);
		return (uint64_t)d;
	}
	case 'Y': return R(2) ? 0 : (pick_flags() & ~0x0100000ull); /* personality: no MMAP_PAGE_ZERO */
	case 'I': { /* the ioctl requests the table traps and the sentry answers */
		static const uint32_t v[] = {0x5412 /* TIOCSTI */, 0x541C /* TIOCLINUX */, 0x5423 /* TIOCSETD */,
			0x541D /* TIOCCONS */, 0x5437 /* TIOCVHANGUP */, 0x540C /* TIOCEXCL */, 0x540D /* TIOCNXCL */,
			0x540E /* TIOCSCTTY */, 0x5422 /* TIOCNOTTY */, 0x5416, 0x5417, 0x5418 /* TIOCM* */, 0x5415,
			0x5427, 0x5428 /* TIOCSBRK/CBRK */, 0x541F /* TIOCSSERIAL */, 0x542F /* TIOCSRS485 */,
			0x40285443 /* TIOCSISO7816 */, 0x5453 /* TIOCSERCONFIG */, 0x545B, 0x4b00 + 0x2f, 0x5600 + 3,
			0x4c00 + 1, 0x40086602 /* FS_IOC_SETFLAGS */, 0x800c6613, 0x400c6613 /* FS_IOC_SET_ENCRYPTION_POLICY */,
			0x40087601, 0x5401 /* TCGETS */, 0x5402, 0x5403, 0x5404 /* TCSETS* */, 0x5405, 0x5406, 0x5407,
			0x5408, 0x5409 /* TCSBRK */, 0x540F /* TIOCGPGRP */, 0x5410 /* TIOCSPGRP */, 0x5411 /* TIOCOUTQ */,
			0x5413 /* TIOCGWINSZ */, 0x5414 /* TIOCSWINSZ */, 0x5424 /* TIOCGETD */, 0x5429 /* TIOCGSID */,
			0x5456, 0x5457 /* TIOC?LCKTRMIOS */, 0x80045430 /* TIOCGPTN */, 0x40045431 /* TIOCSPTLCK */,
			0x5441 /* TIOCGPTPEER */, 0x5419, 0x541A /* TIOC?SOFTCAR */, 0x541B /* FIONREAD */,
			0x5421 /* FIONBIO */, 0x5451, 0x5450 /* FIOCLEX */, 0x5452 /* FIOASYNC */, 0x8901 /* FIOSETOWN */,
			0x8902 /* SIOCSPGRP */, 0x8903, 0x8904, 0x5460 /* FIOQSIZE */, 0x80086601 /* FS_IOC_GETFLAGS */,
			0x80047601, 0x81009431 /* GETFSLABEL */, 0x80111500 /* GETFSUUID */, 0x80811501 /* GETFSSYSFSPATH */,
			0xb704 /* NS_GET_PID_IN_PIDNS */, 0xb701, 0xb702, 0xff0b /* PIDFD_GET_INFO */, 0xc050ff0b,
			0xff01, 0xff02, 0xff03, 0xff04, 0xff05, 0xff06, 0xff07, 0xff08, 0xff09, 0xff0a /* PIDFD_GET_* */,
			0x890B /* SIOCADDRT */, 0x8946 /* SIOCETHTOOL */, 0x8954 /* SIOCGARP */, 0x8912 /* SIOCGIFCONF */,
			0x8910, 0x8913, 0x8914, 0x8915, 0x8917, 0x8919, 0x891b, 0x891d, 0x8921, 0x8927, 0x8933, 0x8942,
			0x8970 /* SIOCG* */, 0x94009409 /* BTRFS */, 0xc0189436};
		uint64_t c = R(6) ? v[R(sizeof v / sizeof v[0])] : pick_flags();
		return R(8) ? c : c | (1ull << (32 + R(32))); /* the upper half set: the kernel reads an unsigned int */
	}
	case 'G': { /* fcntl: the trapped commands (locks, leases, owners, signals, O_ASYNC) */
		static const int v[] = {F_GETLK, F_SETLK, F_SETLKW, F_OFD_GETLK, F_OFD_SETLK, F_OFD_SETLKW, F_SETLEASE,
					F_GETLEASE, F_NOTIFY, F_SETOWN, F_SETOWN_EX, F_GETOWN_EX, F_SETSIG, F_SETFL, F_DUPFD};
		return v[R(sizeof v / sizeof v[0])];
	}
	case 'Z': return 0; /* setsockopt/getsockopt level and name: fixup() */
	case 'C': return pick_cmsg_msghdr();
	case 'h': { /* the size of a size-versioned struct */
		static const uint64_t v[] = {0, 1, 7, 8, 12, 16, 23, 24, 32, 40, 48, 56, 64, 88, 104, 4095, 4096, 4097,
					     65536, 0x7fffffff, 0x80000000, -1ull};
		return R(8) ? v[R(sizeof v / sizeof v[0])] : pick_len();
	}
	case 'A': { /* a sched_attr whose own size field lies */
		uint32_t *s = (uint32_t *)rand_struct(128);
		if ((char *)s >= area && (char *)s < area + AREA_PAGES * PG - 128) {
			static const uint32_t sz[] = {0, 1, 47, 48, 56, 64, 128, 4096, 4097, 0xffffffff};
			s[0] = sz[R(sizeof sz / sizeof sz[0])];
			if (R(2)) { s[1] = 0; s[2] = 0; s[3] = 0; } /* SCHED_OTHER, no flags: the tail decides */
		}
		return (uint64_t)s;
	}
	case 'D': return pick_deep();
	case 'J': return R(2) ? 4 /* POSIX_FADV_NOREUSE: trapped */ : pick_int();
	case 'K': return (uint64_t)vol; /* madvise: only the remapper's pages */
	case 'N': { /* clone: only denied namespace and untraced flags, with SIGCHLD */
		static const uint64_t v[] = {CLONE_NEWUSER, CLONE_UNTRACED, CLONE_NEWUSER | CLONE_NEWNS, CLONE_NEWUSER | CLONE_NEWNET};
		return v[R(4)] | SIGCHLD;
	}
	default: return 0;
	}
}

/* ---- targeted rows (fuzz87) ---- */
static int ptyfds[2] = {-1, -1};  /* a pty master of the sandbox's devpts and its slave */
static int pidfds[4], npidfds;    /* the batch's, its parent's, a thread's (PIDFD_THREAD) */
static int peerfds[8], npeerfds;  /* unix sockets with a peer: socketpairs, an accepted one */
static volatile pid_t ttid[MAXT]; /* the callers' tids */
static int mapsfds[4], nmapsfds;  /* maps files: its own, a thread's, its parent's, the guest init's */

/* a buffer for a struct of n bytes: ending exactly at the page before the
 * unmapped one, crossing into it (fewer bytes left), in the area, read-only,
 * or a bad pointer; *room the bytes mapped from it (0: none known) */
static char *sized_buf(size_t n, size_t *room)
{
	size_t m = n < PG ? n : PG;
	char *p;
	switch (R(8)) {
	case 0: case 1: p = edge + PG - m; *room = m; break;
	case 2: case 3: { size_t k = m ? R(m) : 0; p = edge + PG - k; *room = k; break; }
	case 4: *room = 0; return (char *)ropage + R(64);
	case 5: *room = 0; return (char *)pick_ptr();
	default:
		p = area + AREA_PAGES * PG / 2 + (R(AREA_PAGES * PG / 2 - PG - 8) & ~7ull);
		*room = m;
		break;
	}
	return p;
}

/* a pid for a targeted call: its own (0, pid, a thread's), one no task
 * holds, a negative one; for a call that only reads (!set) also its
 * parent (the fuzzer: its limits and class are the run's) and the guest's
 * init */
static uint64_t tpid(int set)
{
	switch (R(9)) {
	case 0: return 0;
	case 1: return (uint64_t)getpid();
	case 2: return (uint64_t)syscall(SYS_gettid);
	case 3: { pid_t t = ttid[R(nthreads)]; return t ? (uint64_t)t : 0; }
	case 4: return set ? 0 : (uint64_t)getppid();
	case 5: return set ? (uint64_t)getpid() : 1;
	case 6: return 4194304 + R(1000);
	case 7: return (uint64_t)(int64_t)-1;
	default: return R(2) ? (uint64_t)(uint32_t)INT_MIN : (uint64_t)getpid() | (1ull << 32);
	}
}

/* a size: every small one, the struct's and its neighbours, a page and
 * around, huge, with the upper half set */
static uint64_t tsize(const uint32_t *v, size_t nv)
{
	switch (R(6)) {
	case 0: return R(130);
	case 1: return R(4100);
	case 2: return R(4) ? pick_len() : (uint64_t)v[R(nv)] | (1ull << (32 + R(32)));
	default: return v[R(nv)];
	}
}
#define TSIZE(v) tsize(v, sizeof v / sizeof v[0])

/* an fd's owner (F_SETOWN, F_SETOWN_EX): the batch's own tasks, one no
 * task holds, INT_MIN, and a process group only the batch's own (a
 * session of its own): a negative pid of tpid's is the guest's init's
 * group, where the fuzzer's parent and its shell are (SIGIO killed it) */
static int owner_pid(int pgrp)
{
	int own = getpgrp() == getpid();
	if (pgrp) return own ? getpid() : 0;
	switch (R(6)) {
	case 0: return 0;
	case 1: return own && R(2) ? -getpid() : getpid();
	case 2: { pid_t t = ttid[R(nthreads)]; return t ? t : 0; }
	case 3: return INT_MIN;
	default: return (int)(4194304 + R(1000));
	}
}

static void targeted(const struct row *r, uint64_t *a)
{
	size_t room;
	char *p;
	switch (r->t) {
	case T_AFF: { /* sched_setaffinity(pid, cpusetsize, mask) */
		static const uint32_t sz[] = {0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 64, 127, 128, 129,
					      512, 1023, 1024, 4095, 4096, 4097, 8192, 0x7fffffff, 0x80000000, 0xffffffff};
		a[1] = TSIZE(sz);
		p = sized_buf((size_t)a[1], &room);
		if (room) {
			switch (R(5)) {
			case 0: memset(p, 0, room); break;
			case 1: memset(p, 0xff, room); break;
			case 2: memset(p, 0, room); if (room) p[0] = (char)(1 << R(2)); break; /* CPU 0 or 1 */
			case 3: memset(p, 0, room); if (room) p[room - 1] = (char)0x80; break; /* only a CPU past the host's */
			default: fill(p, room);
			}
		}
		a[0] = tpid(1);
		a[2] = (uint64_t)p;
		break;
	}
	case T_SETATTR: { /* sched_setattr(pid, attr, flags): every policy and flag */
		static const uint32_t sz[] = {0, 1, 47, 48, 49, 55, 56, 57, 64, 4095, 4096, 4097, 0xffffffff};
		uint32_t size = (uint32_t)TSIZE(sz);
		size_t want = size == 0 ? 48 : size > PG ? PG : size;
		p = sized_buf(want + (R(3) == 0 ? 8 : 0), &room);
		if (room >= 8) {
			char st[PG];
			memset(st, 0, sizeof st);
			static const int32_t pol[] = {0, 1, 2, 3, 4, 5, 6, 7, -1, INT_MIN, 0x10001};
			uint32_t u32[2] = {size, (uint32_t)(R(4) ? pol[R(7)] : pol[R(sizeof pol / sizeof pol[0])])};
			uint64_t fl = R(3) ? (R(2) ? 0 : 1ull << R(7)) : R(2) ? R(0x80) : pick_flags();
			int32_t nice = R(2) ? (int32_t)R(40) - 20 : (int32_t)pick_int();
			uint32_t prio = R(2) ? (uint32_t)R(101) : (uint32_t)pick_int();
			uint64_t dl[3] = {10000000, 30000000, 100000000};
			if (R(3) == 0) fill((char *)dl, sizeof dl);
			else if (R(3) == 0) { dl[0] = 1024; dl[1] = 1024; dl[2] = 0; }
			uint32_t ut[2] = {(uint32_t)R(1025), R(2) ? 1024u : (uint32_t)rnd()};
			memcpy(st, u32, 8); memcpy(st + 8, &fl, 8); memcpy(st + 16, &nice, 4); memcpy(st + 20, &prio, 4);
			memcpy(st + 24, dl, 24); memcpy(st + 48, ut, 8);
			if (R(4) == 0 && want > 56) st[56 + R(want - 56)] = (char)(1 + R(255)); /* a nonzero tail */
			memcpy(p, st, room < sizeof st ? room : sizeof st);
		}
		a[0] = tpid(1);
		a[1] = (uint64_t)p;
		a[2] = R(6) ? 0 : pick_flags();
		break;
	}
	case T_GETATTR: { /* sched_getattr(pid, attr, size, flags) */
		static const uint32_t sz[] = {0, 1, 47, 48, 49, 56, 57, 64, 4095, 4096, 4097, 0xffffffff};
		a[2] = TSIZE(sz);
		p = sized_buf((size_t)(uint32_t)a[2], &room);
		a[0] = tpid(0);
		a[1] = (uint64_t)p;
		a[3] = R(6) ? 0 : pick_flags();
		break;
	}
	case T_RLIM: { /* prlimit64(pid, resource, new, old): every resource */
		a[1] = R(3) == 0 ? 4 /* RLIMIT_CORE: virtual */ : R(6) ? R(17) : pick_int();
		if (R(6) == 0) a[1] |= 1ull << (32 + R(32)); /* an unsigned int: the upper half ignored */
		if (R(3)) {
			p = sized_buf(16, &room);
			if (room >= 16) {
				static const uint64_t lim[] = {0, 1, 4096, 1 << 20, -1ull, -2ull, 0x7fffffffffffffffull};
				uint64_t l[2] = {lim[R(7)], lim[R(7)]};
				if (R(3) == 0) fill((char *)l, sizeof l);
				memcpy(p, l, 16);
			}
			a[2] = (uint64_t)p;
		}
		if (R(2)) a[3] = (uint64_t)sized_buf(16, &room);
		a[0] = tpid(a[2] != 0);
		break;
	}
	case T_FOWN: { /* fcntl F_NOTIFY, F_SETOWN(_EX), F_SETSIG and their getters */
		static const int cmd[] = {F_NOTIFY, F_SETOWN_EX, F_GETOWN_EX, F_SETSIG, F_GETSIG, F_SETOWN, F_GETOWN, F_SETFL};
		int c = cmd[R(sizeof cmd / sizeof cmd[0])];
		a[0] = R(3) == 0 && ndirfds ? (uint64_t)dirfds[R(ndirfds)] : pick_fd(0);
		a[1] = (uint64_t)c | (R(8) ? 0 : 1ull << (32 + R(32)));
		switch (c) {
		case F_NOTIFY: /* DN_ACCESS..DN_ATTRIB, DN_MULTISHOT */
			a[2] = R(4) ? (R(0x40) | (R(2) ? 0x80000000u : 0)) : pick_flags();
			break;
		case F_SETOWN_EX: case F_GETOWN_EX: {
			p = sized_buf(8, &room);
			if (room >= 8 && c == F_SETOWN_EX) {
				/* F_OWNER_TID, _PID, _PGRP and beyond; a process group only the batch's own */
				int o[2] = {(int)R(4) - (R(8) ? 0 : 5), 0};
				o[1] = owner_pid(o[0] == 2);
				if (o[1] < 0) o[1] = -o[1];
				memcpy(p, o, 8);
			}
			a[2] = (uint64_t)p;
			break;
		}
		case F_SETSIG: { /* what the batch ignores, or out of range */
			static const int sg[] = {0, SIGURG, SIGWINCH, SIGIO, 64, 65, -1, 1000};
			a[2] = (uint64_t)(int64_t)sg[R(8)];
			break;
		}
		case F_SETOWN: a[2] = (uint64_t)(int64_t)owner_pid(0) | (R(8) ? 0 : 1ull << (32 + R(32))); break;
		case F_SETFL: a[2] = R(2) ? O_ASYNC | O_NONBLOCK : pick_flags(); break;
		default: a[2] = pick_int();
		}
		break;
	}
	case T_PTY: { /* a pty's requests: TIOCSCTTY, TIOCSIG, TIOCGPTPEER... */
		static const uint32_t cmd[] = {0x540E /* TIOCSCTTY */, 0x40045436 /* TIOCSIG */, 0x5441 /* TIOCGPTPEER */,
			0x5420 /* TIOCPKT */, 0x40045431 /* TIOCSPTLCK */, 0x80045430 /* TIOCGPTN */, 0x5422 /* TIOCNOTTY */,
			0x5414 /* TIOCSWINSZ */, 0x5413 /* TIOCGWINSZ */, 0x540F /* TIOCGPGRP */, 0x5410 /* TIOCSPGRP */,
			0x5429 /* TIOCGSID */, 0x80045438 /* TIOCGPKT */, 0x80045439 /* TIOCGPTLCK */, 0x5436 /* TIOCSIG, _IO */};
		uint32_t c = cmd[R(sizeof cmd / sizeof cmd[0])];
		int k = (int)R(6);
		a[0] = k < 3 && ptyfds[0] >= 0 ? (uint64_t)ptyfds[0] : k < 5 && ptyfds[1] >= 0 ? (uint64_t)ptyfds[1] : pick_fd(0);
		if (a[0] < 3) a[0] = ptyfds[0] >= 0 ? (uint64_t)ptyfds[0] : (uint64_t)-1; /* never stdio */
		a[1] = (uint64_t)c | (R(8) ? 0 : 1ull << (32 + R(32)));
		switch (c) {
		case 0x40045436: case 0x5436: { /* a signal the batch ignores, or none that exists */
			static const int sg[] = {0, SIGURG, SIGWINCH, SIGINT, SIGQUIT, SIGTSTP, 65, -1, 1000};
			a[2] = (uint64_t)(int64_t)sg[R(9)];
			break;
		}
		case 0x5441: /* TIOCGPTPEER: the slave's open flags */
			a[2] = R(3) ? (uint64_t)(O_RDWR | O_NOCTTY | (R(2) ? O_CLOEXEC : 0) | (R(2) ? O_NONBLOCK : 0)) : pick_flags();
			break;
		case 0x540E: a[2] = R(3) ? R(2) : pick_int(); break;
		default: {
			p = sized_buf(8, &room);
			if (room >= 4) { int v = R(2) ? (int)R(2) : (int)pick_int(); memcpy(p, &v, 4); }
			a[2] = (uint64_t)p;
		}
		}
		break;
	}
	case T_PIDFD: { /* PIDFD_GET_*_NAMESPACE, PIDFD_GET_INFO of every size */
		a[0] = npidfds && R(6) ? (uint64_t)pidfds[R(npidfds)] : pick_fd(1);
		if (a[0] < 3) a[0] = npidfds ? (uint64_t)pidfds[0] : (uint64_t)-1;
		if (R(2)) {
			a[1] = 0xff00 | (1 + R(10));
			if (R(6) == 0) a[1] |= (uint64_t)R(4) << 30 | (uint64_t)R(64) << 16; /* a size and direction besides */
			a[2] = R(2) ? 0 : pick_ptr();
		} else {
			static const uint32_t sz[] = {0, 1, 8, 63, 64, 72, 80, 88, 96, 4096, 0x3fff};
			uint32_t size = (uint32_t)(R(4) ? sz[R(sizeof sz / sizeof sz[0])] : R(0x4000));
			a[1] = (uint64_t)(R(4) ? 3u : R(4)) << 30 | (uint64_t)(size & 0x3fff) << 16 | 0xff0b;
			p = sized_buf(size, &room);
			if (room >= 8) { /* request_mask: every bit */
				uint64_t m = R(2) ? R(0x80) : rnd();
				memcpy(p, &m, 8);
				if (room > 8 && R(2)) fill(p + 8, room - 8);
			}
			a[2] = (uint64_t)p;
		}
		break;
	}
	case T_PEER: { /* getsockopt SO_PEERCRED, SO_PEERGROUPS, SO_PEERPIDFD */
		static const int nm[] = {17, 59, 77};
		static const int64_t ln[] = {0, 1, 3, 4, 5, 8, 11, 12, 13, 16, 64, 65536, 0x7fffffff, -1, -2, INT_MIN};
		a[0] = npeerfds && R(5) ? (uint64_t)peerfds[R(npeerfds)] : pick_fd(1);
		a[1] = R(10) ? SOL_SOCKET : (uint64_t)SOL_SOCKET | (1ull << (32 + R(32)));
		a[2] = (uint64_t)nm[R(3)] | (R(10) ? 0 : 1ull << (32 + R(32)));
		int64_t l = ln[R(sizeof ln / sizeof ln[0])];
		a[3] = (uint64_t)sized_buf(l >= 0 && l < 4096 ? (size_t)l : 64, &room);
		char *lp = sized_buf(4, &room);
		if (room >= 4) memcpy(lp, &(int){(int)l}, 4);
		a[4] = R(10) ? (uint64_t)lp : 0;
		break;
	}
	case T_STATX: { /* statx(dirfd, path, flags, mask, buf): buf at a page end */
		a[2] = R(3) ? (uint64_t)(R(2) ? 0x100 /* AT_SYMLINK_NOFOLLOW */ : R(2) ? 0x1000 /* AT_EMPTY_PATH */ : 0) | (R(4) << 13) : pick_flags();
		a[3] = R(2) ? 0xfff : pick_flags();
		a[4] = (uint64_t)sized_buf(256, &room);
		break;
	}
	case T_OPENAT2: { /* openat2(dirfd, path, how, size): how at a page end */
		static const uint32_t sz[] = {0, 8, 16, 23, 24, 25, 32, 4095, 4096, 4097};
		a[3] = TSIZE(sz);
		p = sized_buf((size_t)(uint32_t)a[3], &room);
		if (room) {
			fill(p, room);
			if (room >= 24 && R(2)) {
				uint64_t h[3] = {R(2) ? O_RDONLY : O_RDWR | O_CREAT, R(2) ? 0644 : 0, R(2) ? R(0x20) : 0};
				memcpy(p, h, 24);
				if (room > 24 && R(2)) memset(p + 24, 0, room - 24);
			}
		}
		a[2] = (uint64_t)p;
		break;
	}
	case T_PMQ: { /* ioctl(maps, PROCMAP_QUERY, struct procmap_query of any size) */
		static const uint32_t sz[] = {0, 8, 23, 24, 25, 96, 103, 104, 105, 112, 4095, 4096, 4097};
		uint64_t size = TSIZE(sz);
		a[0] = nmapsfds && R(8) ? (uint64_t)mapsfds[R(nmapsfds)] : pick_fd(1);
		if (a[0] < 3) a[0] = (uint64_t)-1;
		a[1] = R(8) ? 0xc0686611u : (uint64_t)R(4) << 30 | (uint64_t)R(0x4000) << 16 | 0x6611;
		p = sized_buf(size > PG ? PG : (size_t)size, &room);
		if (room >= 8) {
			uint64_t q[13] = {size, R(3) ? R(0x40) : pick_flags(), 0};
			static const uint64_t qa[] = {0, 4096, -1ull, 0x7ffffffff000ull, 0xffffffffff600000ull};
			q[2] = R(2) ? qa[R(5)] : R(2) ? (uint64_t)area + R(AREA_PAGES * PG) : (uint64_t)vol + R(PG);
			uint32_t nm[4] = {(uint32_t)(R(2) ? R(300) : pick_len()), 0, 0, 0};
			nm[2] = R(3) ? (uint32_t)R(256) : (uint32_t)pick_len(); /* vma_name_size */
			nm[3] = R(3) ? 0 : (uint32_t)R(64);                     /* build_id_size */
			size_t nr;
			uint64_t na = (uint64_t)sized_buf(nm[2], &nr);
			uint64_t ba = nm[3] ? (uint64_t)sized_buf(nm[3], &nr) : R(2) ? 0 : pick_ptr();
			if (R(6) == 0) { na = 0; }
			char st[128];
			memset(st, 0, sizeof st);
			memcpy(st, q, 72); memcpy(st + 72, nm, 16); memcpy(st + 88, &na, 8); memcpy(st + 96, &ba, 8);
			if (R(4) == 0) st[104 + R(24)] = 1; /* a nonzero tail */
			memcpy(p, st, room < sizeof st ? room : sizeof st);
		}
		a[2] = (uint64_t)p;
		break;
	}
	case T_CLONE3: { /* clone3(args, size): denied (ENOSYS), the decoders read it */
		static const uint32_t sz[] = {0, 8, 63, 64, 72, 80, 88, 96, 4096, 4097};
		a[1] = TSIZE(sz);
		p = sized_buf((size_t)(uint32_t)a[1], &room);
		if (room) fill(p, room);
		a[0] = (uint64_t)p;
		break;
	}
	default: break;
	}
}

static void fixup(const struct row *r, uint64_t *a)
{
	/* natively nothing may change outside the child: open_by_handle_at
	 * read-only, ioctl not on stdio, no socket to anything but AF_UNIX. */
	if (r->nr == SYS_open_by_handle_at) a[2] &= ~(uint64_t)(O_WRONLY | O_RDWR | O_TRUNC | O_CREAT | O_APPEND);
	if (r->nr == SYS_ioctl && a[0] < 3) a[0] = nfds ? (uint64_t)fds[0] : (uint64_t)-1;
	if (r->nr == SYS_socket || r->nr == SYS_socketpair) a[0] = R(2) ? AF_UNIX : pick_int();
	if (r->nr == SYS_kill && (int)a[0] == -1) a[0] = getpid();
	if (r->nr == SYS_prctl && (a[0] == PR_SET_SECCOMP || a[0] == PR_SET_MM)) a[0] = PR_GET_DUMPABLE;
	/* shmat only where nothing is mapped */
	if (r->nr == SYS_shmat) { a[1] = R(2) ? 0 : (uint64_t)hole; a[2] &= ~(uint64_t)SHM_REMAP; }
	/* unshare: never CLONE_NEWUSER|NEWPID games natively (only in the guest) */
	if (!in_guest) {
		/* natively the host's objects are a call away: only the
		 * batch's own IPC ids, its own process for priorities and
		 * scheduling, no real-time class */
		if (r->nr == SYS_shmctl || r->nr == SYS_semctl || r->nr == SYS_msgctl || r->nr == SYS_shmat ||
		    r->nr == SYS_semop || r->nr == SYS_semtimedop || r->nr == SYS_msgsnd || r->nr == SYS_msgrcv)
			a[0] = R(2) ? (uint64_t)-1 : (uint64_t)(R(2) ? ids->shm[R(4)] : R(2) ? ids->sem[R(4)] : ids->msg[R(4)]);
		if (r->nr == SYS_setpriority || r->nr == SYS_ioprio_set) { a[0] = 1; a[1] = 0; }
		if (r->nr == SYS_sched_setscheduler) a[1] = R(2) ? SCHED_OTHER : SCHED_IDLE;
		if (r->nr == SYS_sched_setattr) a[1] = 0;
		if (r->nr == SYS_sched_setparam) a[1] = 0;
	}
	/* the I/O signal: one the batch ignores */
	if (r->nr == SYS_fcntl && a[1] == F_SETSIG && !r->t) a[2] = R(2) ? SIGURG : 0;
	/* no CPU-time or address-space limit that kills the batch at once */
	if (r->nr == SYS_setrlimit && ((uint32_t)a[0] == RLIMIT_CPU || (uint32_t)a[0] == RLIMIT_AS)) a[0] = RLIMIT_STACK;
	if (r->nr == SYS_prlimit64 && ((uint32_t)a[1] == RLIMIT_CPU || (uint32_t)a[1] == RLIMIT_AS)) a[1] = RLIMIT_STACK;
	if (r->nr == SYS_memfd_create) a[1] &= 0x1f;
	if (r->nr == SYS_madvise) { a[1] = VOL_PAGES * PG; a[2] = R(2) ? 12 /* MADV_MERGEABLE */ : 13; }
	if (r->k[1] == 'Z') { /* the (level, name) pairs the table lets through or traps, and their neighbours */
		static const int so[][2] = {{1, 2}, {1, 7}, {1, 8}, {1, 9}, {1, 10}, {1, 13}, {1, 15}, {1, 16}, {1, 17},
					    {1, 18}, {1, 20}, {1, 21}, {1, 26}, {1, 27}, {1, 44}, {1, 50}, {1, 51},
					    {1, 52}, {1, 59}, {1, 66}, {1, 67}, {1, 68}, {1, 76}, {1, 77}, {1, 31},
					    {6, 1}, {6, 3}, {6, 4}, {6, 5}, {6, 6}, {6, 12}, {6, 18}, {6, 25}, {6, 37},
					    {0, 1}, {0, 10}, {0, 11}, {0, 32}, {0, 35}, {41, 6}, {41, 26}, {41, 57},
					    {41, 67}, {17, 100}, {136, 100}, {263, 1}, {1, 53}, {1, 62}, {1, 25}};
		unsigned i = (unsigned)R(sizeof so / sizeof so[0]);
		a[1] = R(10) ? (uint64_t)so[i][0] : pick_int();
		a[2] = R(10) ? (uint64_t)so[i][1] : pick_int();
		if (r->nr == SYS_getsockopt && R(2)) { /* a length that lies */
			socklen_t *l = (socklen_t *)(void *)(area + (R(AREA_PAGES * PG - 8) & ~3ull));
			*l = (socklen_t)(R(2) ? R(300) : pick_len());
			a[4] = (uint64_t)l;
		}
	}
}

/* every IPC object a batch makes is removed: at once when the table of
 * them is full, else by the parent after the batch (natively they would
 * outlive the run in the host's IPC namespace) */
static void record_ipc(const struct row *r, long ret)
{
	if (ret < 0) return;
	volatile int *tab = r->nr == SYS_shmget ? ids->shm : r->nr == SYS_semget ? ids->sem : r->nr == SYS_msgget ? ids->msg : NULL;
	volatile int *cnt = r->nr == SYS_shmget ? &ids->nshm : r->nr == SYS_semget ? &ids->nsem : &ids->nmsg;
	if (!tab) return;
	int i = __atomic_fetch_add(cnt, 1, __ATOMIC_SEQ_CST);
	if (i < 64) { tab[i] = (int)ret; return; }
	if (r->nr == SYS_shmget) shmctl((int)ret, IPC_RMID, NULL);
	else if (r->nr == SYS_semget) semctl((int)ret, 0, IPC_RMID);
	else msgctl((int)ret, IPC_RMID, NULL);
}

static volatile int stop_calls;
static volatile int vol_lost; /* the shuffler could not map a page of vol back */
static int vol_lock;          /* the remapper's writes and the shuffler's unmapping, one at a time */
static int check_top;
static mode_t root_mode;
static double batch_secs = 1.0;

static void nop(int s) { (void)s; }
#include <ucontext.h>
static void segv(int s, siginfo_t *si, void *uc)
{
	slots[MAXT].a[0] = (long)si->si_addr;
	slots[MAXT].a[1] = (long)((ucontext_t *)uc)->uc_mcontext.gregs[REG_RIP];
	slots[MAXT].a[2] = s;
	Dl_info di;
	if (dladdr((void *)slots[MAXT].a[1], &di) && di.dli_sname)
		dprintf(2, "  fault in %s+%#lx (%s)\n", di.dli_sname, (unsigned long)((char *)slots[MAXT].a[1] - (char *)di.dli_saddr), di.dli_fname);
	_exit(128 + s);
}

/* SYSFUZZ_HOLD=FILE: a hung batch is held, not killed, until the host has
 * looked at it: FILE is written (the batch's pid and its stuck threads' tids,
 * as this pid namespace numbers them), then the batch is killed once
 * FILE.done exists or after 600 s (sysfuzz.sh dumps the sentry's and the
 * guest's threads meanwhile: what a hang was stuck in, before it is gone) */
static void hang_hold(pid_t c)
{
	const char *h = getenv("SYSFUZZ_HOLD");
	if (!h || !*h) return;
	char tmp[PATH_MAX], done[PATH_MAX];
	snprintf(tmp, sizeof tmp, "%s.tmp", h);
	snprintf(done, sizeof done, "%s.done", h);
	FILE *f = fopen(tmp, "w");
	if (!f) return;
	fprintf(f, "%d", (int)c);
	for (unsigned i = 0; i < nthreads; i++)
		if (slots[i].in_call) fprintf(f, " %d", slots[i].tid);
	fprintf(f, "\n");
	fclose(f);
	rename(tmp, h);
	for (int w = 0; w < 6000 && access(done, F_OK) != 0; w++) usleep(100000);
}

struct targ { unsigned idx; uint64_t seed; };
static void *caller(void *p)
{
	struct targ *t = p;
	rs = t->seed * 2654435761u + t->idx * 97 + 1;
	for (int i = 0; i < 4; i++) rnd();
	struct slot *sl = &slots[t->idx];
	ttid[t->idx] = (pid_t)syscall(SYS_gettid);
	sl->tid = ttid[t->idx];
	/* a 50 ms timer at this thread: blocking calls end with EINTR */
	timer_t tm;
	struct sigevent ev = {.sigev_notify = SIGEV_THREAD_ID, .sigev_signo = SIGALRM};
	ev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
	if (timer_create(CLOCK_MONOTONIC, &ev, &tm) == 0) {
		struct itimerspec its = {{0, 50000000}, {0, 50000000}};
		timer_settime(tm, 0, &its, NULL);
	}
	while (!stop_calls) {
		const struct row *r;
		unsigned n;
		do n = R(NROWS);
		while (!enabled[n]);
		r = &rows[n];
		uint64_t a[6] = {0};
		row_writes = strchr(r->k, 'w') != NULL;
		row_mount = r->nr == SYS_mount; /* its source too beneath the batch's directory: a bind of "/" there would make it the root */
		for (int i = 0; r->k[i] && i < 6; i++) a[i] = gen(r->k[i]);
		if (r->t) targeted(r, a);
		fixup(r, a);
		sl->nr = n;
		for (int i = 0; i < 6; i++) sl->a[i] = (long)a[i];
		sl->in_call = 1;
		long ret = syscall(r->nr, a[0], a[1], a[2], a[3], a[4], a[5]);
		sl->in_call = 0;
		sl->calls++;
		record_ipc(r, ret);
		if (r->nr == SYS_chroot && ret == 0) check_top = 0; /* the batch's own view now */
		if (check_top) { /* debugging the fuzzer: which call took the top directory away */
			struct stat sb, rb;
			if (stat(top, &sb) != 0 || (stat("/", &rb) == 0 && rb.st_mode != root_mode)) {
				for (unsigned i = 0; i < nthreads; i++)
					printf("  thread %u at %s(%#lx, %#lx, %#lx, %#lx, %#lx)\n", i, rows[slots[i].nr].name, slots[i].a[0],
					       slots[i].a[1], slots[i].a[2], slots[i].a[3], slots[i].a[4]);
				char s0[80] = "";
				struct iovec l = {s0, 79}, rv = {(void *)a[0], 79};
				process_vm_readv(getpid(), &l, 1, &rv, 1, 0);
				printf("top gone after %s(%#lx, %#lx, %#lx, %#lx, %#lx) = %ld [%s]\n", r->name, (long)a[0], (long)a[1],
				       (long)a[2], (long)a[3], (long)a[4], ret, s0);
				fflush(stdout);
				_exit(9);
			}
		}
		/* a new fd: keep a few, close the rest (no fd exhaustion) */
		if (ret > 2 && (r->nr == SYS_open || r->nr == SYS_openat || r->nr == SYS_openat2 || r->nr == SYS_creat ||
				r->nr == SYS_open_by_handle_at || r->nr == SYS_memfd_create || r->nr == SYS_socket ||
				r->nr == SYS_pidfd_getfd || r->nr == SYS_mq_open || (r->nr == SYS_fcntl && (a[1] == F_DUPFD || a[1] == F_DUPFD_CLOEXEC)) ||
				r->t == T_PTY || r->t == T_PIDFD))
			close((int)ret); /* (TIOCGPTPEER's slave, a pidfd's namespace) */
		if (ret == 0 && r->t == T_PEER && (int)a[2] == 77 && a[4] && a[3]) { /* SO_PEERPIDFD's pidfd */
			int pf = -1;
			struct iovec l = {&pf, sizeof pf}, rv = {(void *)a[3], sizeof pf};
			if (process_vm_readv(getpid(), &l, 1, &rv, 1, 0) == sizeof pf && pf > 2 && pf < 1024) close(pf);
		}
		if (getpid() != (pid_t)slots[MAXT].nr) _exit(0); /* a clone that returned in a child */
	}
	return NULL;
}

static void *remapper(void *p)
{
	(void)p;
	rs ^= 0x9e3779b97f4a7c15ull;
	while (!stop_calls && !vol_lost) {
		/* one step at a time with the shuffler's unmapping (a write
		 * into its unmapped page killed the batch) */
		while (__atomic_exchange_n(&vol_lock, 1, __ATOMIC_ACQUIRE)) sched_yield();
		switch (R(4)) {
		case 0: mprotect(vol, VOL_PAGES * PG, PROT_NONE); break;
		case 1: mprotect(vol, VOL_PAGES * PG, PROT_READ | PROT_WRITE); break;
		case 2:
			/* replaced in one step: an munmap would let another thread's
			 * mapping take the range and MAP_FIXED then clobber it */
			if (R(2)) madvise(vol, VOL_PAGES * PG, MADV_DONTNEED);
			else mmap(vol, VOL_PAGES * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
			break;
		default: /* rewrite the strings in place */
			if (mprotect(vol, VOL_PAGES * PG, PROT_READ | PROT_WRITE) == 0)
				for (int i = 0; i < 64; i++) /* not in the path at vol[0] */
					vol[512 + R(VOL_PAGES * PG - 512)] = R(3) ? '/' : (char)rnd();
			if (R(2) && mprotect(vol, VOL_PAGES * PG, PROT_READ | PROT_WRITE) == 0)
				snprintf(vol, 300, "%s/%s", R(2) ? scratch : "/proc/self/cwd", R(2) ? "f" : "d/sub/..");
		}
		__atomic_store_n(&vol_lock, 0, __ATOMIC_RELEASE);
		sched_yield();
	}
	return NULL;
}

/* a fifth thread (fuzz87): the fd numbers the callers use moved under
 * their trapped calls (dup2 of one pool fd onto another, close and the
 * number given back), and a page of the volatile buffers unmapped and
 * mapped again (MAP_FIXED_NOREPLACE: never over a mapping that took the
 * range meanwhile; then the buffers are left alone) */
static void *shuffler(void *p)
{
	(void)p;
	rs ^= 0x2545f4914f6cdd1dull;
	int all[40], n = 0;
	for (int i = 0; i < nfds; i++) all[n++] = fds[i];
	for (int i = 0; i < ndirfds; i++) all[n++] = dirfds[i];
	for (int i = 0; i < npeerfds && n < 40; i++) all[n++] = peerfds[i];
	if (ptyfds[0] >= 0 && n < 40) all[n++] = ptyfds[0];
	/* the pool's own duplicates: what a number is given back from (never
	 * the read-only pool's, which name things outside the batch) */
	int keep[40];
	for (int i = 0; i < n; i++) keep[i] = all[i] > 2 ? fcntl(all[i], F_DUPFD_CLOEXEC, 100) : -1;
	while (!stop_calls) {
		int i = (int)R(n), j = (int)R(n);
		if (all[j] <= 2) continue;
		switch (R(6)) {
		case 0: case 1: if (keep[i] >= 0) dup2(keep[i], all[j]); break; /* another object on the number */
		case 2: close(all[j]); sched_yield(); if (keep[j] >= 0) dup2(keep[j], all[j]); break;
		case 3: if (keep[j] >= 0) dup2(keep[j], all[j]); break; /* its own back */
		case 4:
			if (__atomic_exchange_n(&vol_lock, 1, __ATOMIC_ACQUIRE)) break;
			if (!vol_lost && munmap(vol + PG, PG) == 0) {
				sched_yield();
				if (mmap(vol + PG, PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0) !=
				    vol + PG)
					vol_lost = 1;
			}
			__atomic_store_n(&vol_lock, 0, __ATOMIC_RELEASE);
			break;
		default: break;
		}
		sched_yield();
	}
	return NULL;
}

static void setup_objects(void)
{
	char p[4200];
	snprintf(p, sizeof p, "%s/d/sub", scratch); mkdir(p, 0755);
	snprintf(p, sizeof p, "%s/d", scratch); mkdir(p, 0755);
	snprintf(p, sizeof p, "%s/d/sub", scratch); mkdir(p, 0755);
	/* (a regular f again: a batch of an earlier run in the same SCRATCH
	 * may have left a FIFO there, whose O_WRONLY open waits for a reader
	 * natively too: the fuzzer hung itself in set-up) */
	snprintf(p, sizeof p, "%s/f", scratch); unlink(p); close(open(p, O_CREAT | O_WRONLY | O_NONBLOCK, 0644));
	snprintf(p, sizeof p, "%s/loop", scratch); symlink("loop", p);
	snprintf(p, sizeof p, "%s/dangle", scratch); symlink("nowhere", p);
	snprintf(p, sizeof p, "%s/lnk", scratch); symlink("d", p);
	snprintf(p, sizeof p, "%s/fifo", scratch); mkfifo(p, 0644);
}

static void open_fds(void)
{
	char p[4200];
	int sv[2], pp[2];
	nfds = nrofds = ndirfds = 0;
	snprintf(p, sizeof p, "%s/f", scratch);
	fds[nfds++] = open(p, O_RDWR | O_CREAT, 0644);
	fds[nfds++] = open(p, O_PATH);
	fds[nfds++] = open(p, O_RDONLY);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv) == 0) { fds[nfds++] = sv[0]; fds[nfds++] = sv[1]; }
	if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK, 0, sv) == 0) { fds[nfds++] = sv[0]; fds[nfds++] = sv[1]; }
	if (pipe2(pp, O_NONBLOCK) == 0) { fds[nfds++] = pp[0]; fds[nfds++] = pp[1]; }
	fds[nfds++] = epoll_create1(0);
	fds[nfds++] = eventfd(0, EFD_NONBLOCK);
	fds[nfds++] = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);
	fds[nfds++] = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
	fds[nfds++] = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0); /* with --net: moat-netd's */
	fds[nfds++] = socket(AF_INET6, SOCK_DGRAM | SOCK_NONBLOCK, 0);
	fds[nfds++] = (int)syscall(SYS_pidfd_open, getpid(), 0);
	fds[nfds++] = (int)syscall(SYS_memfd_create, "sysfuzz", 0);
	fds[nfds++] = (int)syscall(SYS_inotify_init1, IN_NONBLOCK_DUMMY);
	int c = open(p, O_RDONLY); close(c); fds[nfds++] = c; /* closed */
	dirfds[ndirfds++] = open(scratch, O_RDONLY | O_DIRECTORY);
	dirfds[ndirfds++] = open(scratch, O_PATH | O_DIRECTORY);
	snprintf(p, sizeof p, "%s/d", scratch);
	dirfds[ndirfds++] = open(p, O_RDONLY | O_DIRECTORY);
	rofds[nrofds++] = open("/proc/self", O_RDONLY | O_DIRECTORY);
	rofds[nrofds++] = open("/", O_PATH);
	rofds[nrofds++] = open("/dev/null", O_RDONLY);
	rofds[nrofds++] = open("/proc/self/status", O_RDONLY);
	rofds[nrofds++] = open("/dev/tty", O_RDONLY | O_NONBLOCK); /* -1 when there is none */
	/* the targeted rows' (fuzz87): a pty pair of the sandbox's devpts,
	 * pidfds (the batch's, its parent's, a thread's), unix sockets with a
	 * peer (socketpairs, a named listener's accepted connection) */
	ptyfds[0] = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_NONBLOCK);
	ptyfds[1] = -1;
	if (ptyfds[0] >= 0) {
		int n = 0, u = 0;
		if (ioctl(ptyfds[0], TIOCSPTLCK, &u) == 0 && ioctl(ptyfds[0], TIOCGPTN, &n) == 0) {
			char sp[64];
			snprintf(sp, sizeof sp, "/dev/pts/%d", n);
			ptyfds[1] = open(sp, O_RDWR | O_NOCTTY | O_NONBLOCK);
		}
	}
	nmapsfds = 0;
	{
		char mp[64];
		snprintf(mp, sizeof mp, "/proc/%d/maps", getppid());
		mapsfds[nmapsfds++] = open("/proc/self/maps", O_RDONLY);
		mapsfds[nmapsfds++] = open("/proc/thread-self/maps", O_RDONLY);
		mapsfds[nmapsfds++] = open(mp, O_RDONLY);
		mapsfds[nmapsfds++] = open("/proc/1/maps", O_RDONLY);
	}
	npidfds = npeerfds = 0;
	pidfds[npidfds++] = (int)syscall(SYS_pidfd_open, getpid(), 0);
	pidfds[npidfds++] = (int)syscall(SYS_pidfd_open, getppid(), 0);
	pidfds[npidfds++] = (int)syscall(SYS_pidfd_open, (pid_t)syscall(SYS_gettid), 0x80 /* PIDFD_THREAD */);
	pidfds[npidfds++] = (int)syscall(SYS_pidfd_open, 1, 0);
	for (int i = 3; i <= 6 && i < nfds; i++) peerfds[npeerfds++] = fds[i];
	{
		struct sockaddr_un un = {.sun_family = AF_UNIX};
		snprintf(un.sun_path, sizeof un.sun_path, "%s/psock", scratch);
		int l = socket(AF_UNIX, SOCK_STREAM, 0), cl = socket(AF_UNIX, SOCK_STREAM, 0);
		if (l >= 0 && cl >= 0 && bind(l, (struct sockaddr *)&un, sizeof un) == 0 && listen(l, 4) == 0 &&
		    connect(cl, (struct sockaddr *)&un, sizeof un) == 0) {
			int ac = accept(l, NULL, NULL);
			peerfds[npeerfds++] = cl;
			if (ac >= 0) peerfds[npeerfds++] = ac;
		}
		if (l >= 0) peerfds[npeerfds++] = l; /* a listener: no peer */
	}
}

/* pages with an unmapped page on each side: a call given a length longer
 * than what is left of its buffer faults there instead of writing into the
 * fuzzer's own memory */
static char *guarded(size_t pages)
{
	char *p = mmap(NULL, (pages + 2) * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) { perror("mmap"); exit(1); }
	munmap(p, PG);
	munmap(p + (pages + 1) * PG, PG);
	return p + PG;
}

static void make_pools(void)
{
	area = guarded(AREA_PAGES);
	ropage = guarded(1);
	memcpy(ropage, "/proc/self/root", 16);
	mprotect(ropage, PG, PROT_READ);
	edge = guarded(1);
	hole = edge + PG;
	vol = guarded(VOL_PAGES);
}

/* the long names, beneath the batch's directory */
static void make_longpaths(void)
{
	static const size_t lens[4] = {4095, 4096, 4097, 8192};
	for (int i = 0; i < 4; i++) {
		free(longpath[i]);
		longpath[i] = malloc(lens[i] + 1);
		size_t n = (size_t)snprintf(longpath[i], lens[i] + 1, "%s/", scratch);
		for (size_t j = n; j < lens[i]; j++) longpath[i][j] = (j % 200 == 0) ? '/' : 'a';
		longpath[i][lens[i]] = 0;
	}
}

static void batch(uint64_t seed)
{
	struct sigaction sa = {.sa_handler = nop}; /* no SA_RESTART */
	sigaction(SIGALRM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (getenv("SYSFUZZ_VERBOSE")) {
		struct sigaction sv = {.sa_sigaction = segv, .sa_flags = SA_SIGINFO};
		sigaction(SIGSEGV, &sv, NULL);
		sigaction(SIGBUS, &sv, NULL);
	}
	signal(SIGURG, SIG_IGN);
	signal(SIGWINCH, SIG_IGN);
	signal(SIGXFSZ, SIG_IGN);
	signal(SIGIO, SIG_IGN);
	signal(SIGTTOU, SIG_IGN);
	signal(SIGTTIN, SIG_IGN);
	/* the targeted rows' signals (TIOCSIG, F_SETSIG), and a pty's hang-up */
	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	signal(SIGTSTP, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGRTMAX, SIG_IGN);
	/* every other batch a session of its own (a pty may become its
	 * controlling terminal; F_SETOWN of its own process group) */
	if (seed & 1) setsid();
	slots[MAXT].nr = getpid();
	rs = seed | 1;
	if (chdir(scratch) != 0) { if (getenv("SYSFUZZ_VERBOSE")) { printf("chdir %s: %s (uid %d euid %d pid %d; parent uid %ld)\n", scratch, strerror(errno), (int)getuid(), (int)geteuid(), (int)getpid(), slots[MAXT].a[5]); fflush(stdout); } _exit(3); }
	open_fds();
	pthread_t th[MAXT], rm;
	struct targ ta[MAXT];
	for (unsigned i = 0; i < nthreads; i++) {
		ta[i] = (struct targ){i, seed};
		if (nthreads == 1) { /* exact replay: the caller runs here */
			struct timespec t0, t1;
			clock_gettime(CLOCK_MONOTONIC, &t0);
			pthread_t w;
			pthread_create(&w, NULL, caller, &ta[0]);
			do { usleep(10000); clock_gettime(CLOCK_MONOTONIC, &t1); }
			while ((t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9 < batch_secs);
			stop_calls = 1;
			pthread_join(w, NULL);
			_exit(0);
		}
		pthread_create(&th[i], NULL, caller, &ta[i]);
	}
	pthread_create(&rm, NULL, remapper, NULL);
	pthread_t sh;
	int shuf = !getenv("SYSFUZZ_NOSHUFFLE") && pthread_create(&sh, NULL, shuffler, NULL) == 0;
	usleep((useconds_t)(batch_secs * 1e6));
	stop_calls = 1;
	for (unsigned i = 0; i < nthreads; i++) pthread_join(th[i], NULL);
	pthread_join(rm, NULL);
	if (shuf) pthread_join(sh, NULL);
	_exit(0);
}

static void cleanup_ipc(void)
{
	for (int i = 0; i < ids->nshm && i < 64; i++) shmctl(ids->shm[i], IPC_RMID, NULL);
	for (int i = 0; i < ids->nsem && i < 64; i++) semctl(ids->sem[i], 0, IPC_RMID);
	for (int i = 0; i < ids->nmsg && i < 64; i++) msgctl(ids->msg[i], IPC_RMID, NULL);
	ids->nshm = ids->nsem = ids->nmsg = 0;
	char n[32];
	for (int i = 0; i < 4; i++) { snprintf(n, sizeof n, "/sysfuzz-%d", i); syscall(SYS_mq_unlink, n); }
}

int main(int argc, char **argv)
{
	if (argc < 2) { fprintf(stderr, "usage: probe_sysfuzz SCRATCH [SECONDS [SEED [THREADS]]]\n"); return 2; }
	static char sbuf[PATH_MAX];
	if (!realpath(argv[1], sbuf)) { perror(argv[1]); return 2; }
	top = sbuf;
	scratch = batchdir;
	double secs = argc > 2 ? atof(argv[2]) : 10;
	uint64_t seed = argc > 3 ? strtoull(argv[3], NULL, 0) : (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 20);
	if (argc > 4) nthreads = (unsigned)atoi(argv[4]);
	if (nthreads < 1 || nthreads > MAXT) nthreads = 3;
	in_guest = getenv("MOAT_GUEST") && strcmp(getenv("MOAT_GUEST"), "1") == 0;
	/* Natively its calls reach the host (IPC objects, priorities, files as
	 * root): it runs only under a seccomp filter (moat) unless told to. */
	{
		FILE *st = fopen("/proc/self/status", "r");
		char l[256];
		int filtered = 0;
		while (st && fgets(l, sizeof l, st))
			if (strncmp(l, "Seccomp:", 8) == 0) filtered = atoi(l + 8) == 2;
		if (st) fclose(st);
		if (!filtered && !(getenv("SYSFUZZ_NATIVE") && strcmp(getenv("SYSFUZZ_NATIVE"), "1") == 0)) {
			fprintf(stderr, "probe_sysfuzz: not under a seccomp filter: runs only in the sandbox (SYSFUZZ_NATIVE=1 to run it here anyway, never as root on a shared host)\n");
			return 77;
		}
	}
	const char *only = getenv("SYSFUZZ_ONLY");
	for (unsigned i = 0; i < NROWS; i++) {
		enabled[i] = (!rows[i].host || in_guest);
		if (only) {
			char pat[64];
			snprintf(pat, sizeof pat, ",%s,", rows[i].name);
			char o[4096];
			snprintf(o, sizeof o, ",%s,", only);
			enabled[i] = enabled[i] && strstr(o, pat) != NULL;
		}
	}
	int any = 0;
	for (unsigned i = 0; i < NROWS; i++) any |= enabled[i];
	if (!any) { fprintf(stderr, "probe_sysfuzz: no row enabled\n"); return 2; }
	/* a batch may make this process the owner of one of its descriptions
	 * (F_SETOWN, FIOSETOWN with a small pid read from a random struct,
	 * F_SETSIG of any signal): Linux lets it, and the run is not to end
	 * of it (SIGIO, exit 157, ended a targeted run after 270 s) */
	signal(SIGIO, SIG_IGN);
	signal(SIGURG, SIG_IGN);
	signal(SIGRTMAX, SIG_IGN);
	printf("sysfuzz seed=%llu threads=%u seconds=%g guest=%d\n", (unsigned long long)seed, nthreads, secs, in_guest);
	fflush(stdout);
	slots = mmap(NULL, sizeof(struct slot) * (MAXT + 1), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ids = mmap(NULL, sizeof *ids, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	make_pools();
	const char *bs = getenv("SYSFUZZ_BATCH");
	check_top = getenv("SYSFUZZ_CHECKTOP") != NULL;
	{
		struct stat rb;
		root_mode = stat("/", &rb) == 0 ? rb.st_mode : 0;
	}
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	unsigned long batches = 0, calls = 0, crashed = 0;
	int fail = 0;
	for (uint64_t b = bs ? strtoull(bs, NULL, 0) : 0;; b++) {
		clock_gettime(CLOCK_MONOTONIC, &t1);
		double el = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
		if (batches && (el >= secs || bs)) break;
		batch_secs = secs - el < 1.0 ? (secs - el > 0.2 ? secs - el : 0.2) : 1.0;
		memset((void *)slots, 0, sizeof(struct slot) * MAXT);
		/* each batch in a directory of its own: what a batch did to its
		 * directory (chmod 0, chown away, rename) is not the next one's */
		snprintf(batchdir, sizeof batchdir, "%s/b%llu", top, (unsigned long long)b);
		{ /* a batch that reached the guest's root anyway: put its mode back */
			struct stat rb;
			if (root_mode && stat("/", &rb) == 0 && rb.st_mode != root_mode) {
				if (getenv("SYSFUZZ_VERBOSE")) printf("batch %llu changed / to %o\n", (unsigned long long)(seed + b - 1), rb.st_mode);
				chmod("/", root_mode & 07777);
			}
		}
		if (chmod(top, 0777) != 0 && getenv("SYSFUZZ_VERBOSE")) { int ce = errno; struct stat sb, rb; int sr = stat(top, &sb); int se = errno; int rr = stat("/", &rb);
				char cwd[256] = "";
				if (!getcwd(cwd, sizeof cwd)) snprintf(cwd, sizeof cwd, "(getcwd: %s)", strerror(errno));
				printf("chmod %s: %s (stat %d %s; / %d mode %o uid %d; cwd %s; me %d/%d)\n", top, strerror(ce), sr, strerror(se), rr, rb.st_mode, (int)rb.st_uid, cwd, (int)geteuid(), (int)getegid());
				fflush(stdout); if (getenv("SYSFUZZ_STOP")) exit(5); }
		if (mkdir(batchdir, 0777) != 0 && getenv("SYSFUZZ_VERBOSE")) printf("mkdir %s: %s\n", batchdir, strerror(errno));
		chmod(batchdir, 0777);
		make_longpaths();
		setup_objects();
		slots[MAXT].a[5] = (long)geteuid();
		pid_t c = fork();
		if (c < 0) { perror("fork"); return 1; }
		if (c == 0) batch(seed + b);
		/* wait: the calls run batch_secs; then 15 s grace for the last ones */
		int st = 0, done = 0;
		for (int w = 0; w < (int)(batch_secs * 100) + 1500; w++) {
			pid_t r = waitpid(c, &st, WNOHANG);
			if (r == c) { done = 1; break; }
			usleep(10000);
		}
		batches++;
		for (unsigned i = 0; i < nthreads; i++) calls += slots[i].calls;
		if (!done) {
			printf("FAIL sysfuzz HANG batch seed=%llu (replay: probe_sysfuzz DIR 2 %llu 1; SYSFUZZ_BATCH=0)\n",
			       (unsigned long long)(seed + b), (unsigned long long)(seed + b));
			for (unsigned i = 0; i < nthreads; i++)
				if (slots[i].in_call)
					printf("  thread %u (tid %d) in %s(%#lx, %#lx, %#lx, %#lx, %#lx, %#lx) after %lu calls\n", i,
					       slots[i].tid, rows[slots[i].nr].name, slots[i].a[0], slots[i].a[1], slots[i].a[2],
					       slots[i].a[3], slots[i].a[4], slots[i].a[5], slots[i].calls);
			fflush(stdout);
			hang_hold(c);
			kill(c, SIGKILL);
			waitpid(c, &st, 0);
			fail = 1;
		} else if (WIFSIGNALED(st) || (WIFEXITED(st) && WEXITSTATUS(st) != 0)) {
			crashed++; /* the guest's own business (a call it was given hurt it) */
			if (getenv("SYSFUZZ_VERBOSE"))
			{
				printf("batch seed=%llu ended with %s %d\n", (unsigned long long)(seed + b),
				       WIFSIGNALED(st) ? "signal" : "status", WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
				if (slots[MAXT].a[2])
					printf("  fault %ld at %#lx, ip %#lx\n", slots[MAXT].a[2], slots[MAXT].a[0], slots[MAXT].a[1]);
				for (unsigned i = 0; i < nthreads; i++)
					printf("  thread %u last %s(%#lx, %#lx, %#lx, %#lx, %#lx, %#lx)\n", i, rows[slots[i].nr].name,
					       slots[i].a[0], slots[i].a[1], slots[i].a[2], slots[i].a[3], slots[i].a[4], slots[i].a[5]);
			}
		}
		cleanup_ipc();
		if (fail) break;
	}
	/* the last batch's reach of the guest's root undone too: the caller
	 * goes on in the same sandbox (sysfuzz.sh's `: >/m/1` was EACCES after
	 * a batch made / 05052: rootless, / is the guest's own) */
	{
		struct stat rb;
		if (root_mode && stat("/", &rb) == 0 && rb.st_mode != root_mode) {
			if (getenv("SYSFUZZ_VERBOSE")) printf("the last batch changed / to %o\n", rb.st_mode);
			chmod("/", root_mode & 07777);
		}
	}
	/* and the scratch itself, as before each batch: the caller uses it
	 * next (sysfuzz.sh's traced run: `--workdir /work` was EACCES after
	 * a batch left the rw bind's root without search permission) */
	chmod(top, 0777);
	/* the scratch's litter */
	char cmd[PATH_MAX + 64];
	snprintf(cmd, sizeof cmd, "%s", scratch);
	(void)cmd;
	printf("%s sysfuzz seed=%llu batches=%lu calls=%lu crashed=%lu\n", fail ? "FAIL" : "ok", (unsigned long long)seed,
	       batches, calls, crashed);
	return fail;
}
