/* unotify_floor [N] [WAITERS] [MODE]: the floor of a trapped call on this
 * machine. This thread installs a filter that sends getppid to a seccomp
 * user-notification listener; WAITERS supervisor threads (default 1) answer
 * each with a plain SEND, doing nothing else. Prints "unotify_floor <ns per
 * call>": no supervisor (moat's sentry included) can answer a trapped call
 * faster. MODE: "sync" (default) sets SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
 * (Linux 6.6+) as moat does, "async" leaves it off; "epoll" waits in
 * epoll_wait(EPOLLEXCLUSIVE) before RECV (one waiter woken per call instead of
 * all of them); "addfd" answers as moat answers an open (sync wake-up, the
 * supervisor installs a duplicate of an open fd with ADDFD_FLAG_SEND, closes
 * its copy, and the caller closes the fd it got): the floor of a trapped
 * open+close; "addfd-split" installs with ADDFD and answers with a separate
 * SEND; "addfd-idle" answers as "addfd" does, but the ADDFD (with SEND) is
 * made by a helper thread pinned to the supervisor's CPU and running
 * SCHED_IDLE (one per CPU), the supervisor waiting for it: the woken caller
 * then sees that CPU as idle (the scheduler's sched_idle_cpu), stays on it
 * and preempts the helper, where a plain ADDFD's complete() wakes it on
 * another, idle CPU (pexec4: the question this mode is for; it shows only
 * with a CPU idle, and a loaded machine starves the helpers); "addfd-pin"
 * answers as "addfd" does with the supervisor pinned, just around the ADDFD,
 * to the CPU RECV returned on (sched_getcpu), its affinity restored after;
 * "addfd-self" runs SCHED_IDLE around the ADDFD instead (back to
 * SCHED_OTHER needs RLIMIT_NICE >= 20 or CAP_SYS_NICE); "addfd-pin-idle"
 * does both (paddfd: the woken caller sees the supervisor's CPU as idle and
 * preempts it there, and the caller's wake-up of the supervisor cannot take
 * it to another CPU); any mode with "-child" appended has its caller in a
 * child process, as moat's guest is (the default caller is a thread of this
 * process), and "-work-child" (after an addfd mode) has the supervisor do
 * what moat's does for a direct open before the ADDFD: the path's copy-in
 * and ID_VALID as "stat" does, then an open and fstat of /etc/passwd (the
 * fd it installs) instead of a dup; "stat"
 * answers as moat answers a cached stat, with the caller in
 * another process (a child: process_vm_* on a thread of one's own process
 * skips the ptrace access check): the supervisor reads 256 bytes of the
 * path (process_vm_readv, split at a page boundary as guest_read_str does),
 * checks ID_VALID, writes a 144-byte struct stat back (process_vm_writev)
 * and SENDs: the floor of any supervisor that emulates a stat. Any mode
 * with "-keep" appended (before "-child") starts a keeper per allowed CPU
 * (wake41): a thread pinned there, SCHED_IDLE, that spins (pause) while the
 * last notification is less than UNF_KEEP_US µs old (default 200) and
 * sleeps on a futex otherwise, so that no CPU is halted during a burst and
 * every wake-up lands on a running vCPU; prints the keepers' CPU per call
 * ("unotify_floor_keep_cpu <ns>") on stderr (and every addfd mode but
 * addfd-idle the ADDFD ioctl's mean wall time, the caller's wake-up and
 * install included: "unotify_floor_addfd_ioctl <ns>"). UNF_KEEP_YIELD=1 spins with
 * sched_yield instead of pause; UNF_KEEP_NICE=N runs the keepers at
 * SCHED_OTHER, nice N, instead of SCHED_IDLE (a CPU that runs one is then
 * busy, not idle, to the wake-up's placement). Run it at SCHED_OTHER (chrt
 * -o 0) on every CPU: a runner's SCHED_IDLE makes the keepers its equals.
 * "-apart" (anywhere after the mode) pins the supervisors to the first
 * allowed CPU and the caller to the last: every wake-up crosses (with the
 * other CPU kept awake, what a keeper would leave of a split call). */
#include "bench.h"
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <stddef.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <sys/syscall.h>
#include <linux/futex.h>
#include <sched.h>
#include <unistd.h>

#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (1UL << 0)
#endif

static volatile int g_fd = -1;
static int g_epoll, g_addfd, g_srcfd = -1, g_stat, g_work;
static pid_t g_child;
static cpu_set_t g_all; /* modes addfd-pin*: the affinity restored after the ADDFD */

/* "-keep": the keepers' clock, their sleep word and their CPU time */
static int g_keep;
static int g_apart; /* "-apart": supervisor on the first allowed CPU, caller on the last */
static long long g_keep_ns = 200000;
static long long g_last_ns; /* the last RECV's time */
static int g_keep_sleep;    /* 1 while a keeper may be asleep */
static long long g_keep_cpu_ns;
static long long g_addfd_ns; /* the ADDFD ioctls' wall time (the caller's wake-up and install included) */
static int g_keep_yield; /* UNF_KEEP_YIELD=1: sched_yield instead of pause */
static int g_keep_nice;  /* UNF_KEEP_NICE=N: SCHED_OTHER at nice N instead of SCHED_IDLE */

/* mode "addfd-idle": a job per CPU for its SCHED_IDLE helper */
enum { MAXCPU = 64 };
static struct job {
	int state; /* 0 idle, 1 posted, 2 done */
	int fd;
	unsigned long long id;
} g_jobs[MAXCPU];

static void fwait(int *w, int v)
{
	syscall(SYS_futex, w, FUTEX_WAIT_PRIVATE, v, NULL, NULL, 0);
}

static void fwake(int *w)
{
	syscall(SYS_futex, w, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static void *idle_helper(void *arg)
{
	int cpu = (int)(long)arg;
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	struct sched_param sp = { 0 };
	if (sched_setaffinity(0, sizeof set, &set) < 0 || sched_setscheduler(0, SCHED_IDLE, &sp) < 0)
		abort();
	struct job *j = &g_jobs[cpu];
	for (;;) {
		while (__atomic_load_n(&j->state, __ATOMIC_ACQUIRE) != 1)
			fwait(&j->state, 0);
		struct seccomp_notif_addfd a = { .id = j->id, .srcfd = (unsigned)j->fd,
						 .newfd_flags = O_CLOEXEC,
						 .flags = SECCOMP_ADDFD_FLAG_SEND };
		ioctl(g_fd, SECCOMP_IOCTL_NOTIF_ADDFD, &a);
		__atomic_store_n(&j->state, 2, __ATOMIC_RELEASE);
		fwake(&j->state);
	}
	return NULL;
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#else
	__asm__ __volatile__("" ::: "memory");
#endif
}

static long long now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static long long thread_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void *keeper(void *arg)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET((int)(long)arg, &set);
	struct sched_param sp = { 0 };
	if (sched_setaffinity(0, sizeof set, &set) < 0 ||
	    (g_keep_nice ? setpriority(PRIO_PROCESS, 0, g_keep_nice) : sched_setscheduler(0, SCHED_IDLE, &sp)) < 0)
		abort();
	long long c0 = thread_cpu_ns();
	for (;;) {
		while (now_ns() - __atomic_load_n(&g_last_ns, __ATOMIC_RELAXED) < g_keep_ns)
			if (g_keep_yield)
				sched_yield();
			else
				for (int i = 0; i < 32; i++)
					cpu_relax();
		__atomic_store_n(&g_keep_sleep, 1, __ATOMIC_SEQ_CST);
		if (now_ns() - __atomic_load_n(&g_last_ns, __ATOMIC_SEQ_CST) >= g_keep_ns) {
			long long c1 = thread_cpu_ns();
			__atomic_add_fetch(&g_keep_cpu_ns, c1 - c0, __ATOMIC_RELAXED);
			syscall(SYS_futex, &g_keep_sleep, FUTEX_WAIT_PRIVATE, 1, NULL, NULL, 0);
			c0 = thread_cpu_ns();
		}
	}
	return NULL;
}

/* the supervisor, after each RECV: the burst goes on */
static void keep_touch(void)
{
	__atomic_store_n(&g_last_ns, now_ns(), __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&g_keep_sleep, __ATOMIC_SEQ_CST) &&
	    __atomic_exchange_n(&g_keep_sleep, 0, __ATOMIC_SEQ_CST))
		syscall(SYS_futex, &g_keep_sleep, FUTEX_WAKE_PRIVATE, 64, NULL, NULL, 0);
}

static void keep_start(void)
{
	pthread_t th;
	const char *e = getenv("UNF_KEEP_US");
	if (e)
		g_keep_ns = atoll(e) * 1000;
	if (CPU_COUNT(&g_all) < 2)
		return; /* one CPU: nothing to keep awake */
	g_keep_yield = getenv("UNF_KEEP_YIELD") && atoi(getenv("UNF_KEEP_YIELD"));
	g_keep_nice = getenv("UNF_KEEP_NICE") ? atoi(getenv("UNF_KEEP_NICE")) : 0;
	for (int c = 0; c < CPU_SETSIZE && c < MAXCPU; c++)
		if (CPU_ISSET(c, &g_all) && pthread_create(&th, NULL, keeper, (void *)(long)c) != 0)
			abort();
}

static void keep_report(long n)
{
	if (g_addfd && g_addfd != 3)
		fprintf(stderr, "unotify_floor_addfd_ioctl %.1f\n",
			(double)__atomic_load_n(&g_addfd_ns, __ATOMIC_RELAXED) / (double)n);
	if (g_keep)
		fprintf(stderr, "unotify_floor_keep_cpu %.1f\n",
			(double)__atomic_load_n(&g_keep_cpu_ns, __ATOMIC_RELAXED) / (double)n);
}

/* The ADDFD with SEND through this CPU's helper; 0, or -1 when the CPU has
 * none (the caller makes it itself). */
static int addfd_idle(unsigned long long id, int d)
{
	int cpu = sched_getcpu();
	if (cpu < 0 || cpu >= MAXCPU)
		return -1;
	struct job *j = &g_jobs[cpu];
	j->id = id;
	j->fd = d;
	__atomic_store_n(&j->state, 1, __ATOMIC_RELEASE);
	fwake(&j->state);
	int v;
	while ((v = __atomic_load_n(&j->state, __ATOMIC_ACQUIRE)) != 2)
		fwait(&j->state, v);
	__atomic_store_n(&j->state, 0, __ATOMIC_RELEASE);
	return 0;
}

/* the addfd-pin/-self modes: a refused scheduling call ends the run */
static void sched_fail(const char *what)
{
	fprintf(stderr, "unotify_floor: %s: %s\n", what, strerror(errno));
	fflush(stderr);
	_exit(2);
}

/* mode "stat": the copies an emulated stat makes */
static void stat_copies(const struct seccomp_notif *req)
{
	char path[256];
	struct stat st;
	unsigned long a = req->data.args[0];
	size_t chunk = 4096 - (a & 4095);
	struct iovec l = { path, sizeof path }, r[2] = { { (void *)a, sizeof path } };
	int nr = 1;
	if (chunk < sizeof path) {
		r[0].iov_len = chunk;
		r[1] = (struct iovec){ (void *)(a + chunk), sizeof path - chunk };
		nr = 2;
	}
	if (process_vm_readv(req->pid, &l, 1, r, nr, 0) <= 0)
		abort();
	if (ioctl(g_fd, SECCOMP_IOCTL_NOTIF_ID_VALID, &req->id) < 0 || g_work)
		return;
	memset(&st, 0, sizeof st);
	st.st_size = (off_t)strnlen(path, sizeof path);
	struct iovec lw = { &st, sizeof st }, rw = { (void *)req->data.args[1], sizeof st };
	if (process_vm_writev(req->pid, &lw, 1, &rw, 1, 0) != (ssize_t)sizeof st)
		abort();
}

/* "-apart": this thread onto the first (0) or the last (1) allowed CPU */
static void apart_pin(int last)
{
	int pick = -1;
	cpu_set_t one;
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &g_all) && (pick < 0 || last))
			pick = c;
	CPU_ZERO(&one);
	CPU_SET(pick, &one);
	if (sched_setaffinity(0, sizeof one, &one) < 0)
		sched_fail("sched_setaffinity");
}

static void *supervisor(void *arg)
{
	int ep = -1;
	(void)arg;
	if (g_apart)
		apart_pin(0);
	while (g_fd < 0)
		usleep(100);
	if (g_epoll) {
		struct epoll_event ev = { .events = EPOLLIN | EPOLLEXCLUSIVE };
		ep = epoll_create1(EPOLL_CLOEXEC);
		if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, g_fd, &ev) < 0)
			return NULL;
	}
	for (;;) {
		struct seccomp_notif req;
		struct seccomp_notif_resp resp;
		if (ep >= 0) {
			struct epoll_event ev;
			if (epoll_wait(ep, &ev, 1, -1) < 0 && errno != EINTR)
				return NULL;
		}
		memset(&req, 0, sizeof req);
		if (ioctl(g_fd, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0) {
			if (errno == EINTR || errno == ENOENT)
				continue;
			return NULL;
		}
		if (g_keep)
			keep_touch();
		if (g_stat || g_work)
			stat_copies(&req);
		if (g_addfd) {
			int d = g_work ? open("/etc/passwd", O_RDONLY | O_CLOEXEC) : dup(g_srcfd);
			if (g_work) {
				struct stat st;
				if (d < 0 || fstat(d, &st) < 0)
					abort();
			}
			if (g_addfd == 3 && addfd_idle(req.id, d) == 0) {
				close(d);
				continue;
			}
			int cpu = g_addfd >= 4 ? sched_getcpu() : -1;
			struct sched_param sp0 = { 0 };
			cpu_set_t one;
			CPU_ZERO(&one);
			if (cpu >= 0)
				CPU_SET(cpu, &one);
			if (cpu >= 0 && g_addfd != 6 && sched_setaffinity(0, sizeof one, &one) < 0)
				sched_fail("sched_setaffinity");
			if (g_addfd >= 5 && sched_setscheduler(0, SCHED_IDLE, &sp0) < 0)
				sched_fail("sched_setscheduler(SCHED_IDLE)");
			struct seccomp_notif_addfd a = {
				.id = req.id,
				.srcfd = (unsigned)d,
				.newfd_flags = O_CLOEXEC,
				.flags = g_addfd != 2 ? SECCOMP_ADDFD_FLAG_SEND : 0,
			};
			long long ta = now_ns();
			int r = ioctl(g_fd, SECCOMP_IOCTL_NOTIF_ADDFD, &a);
			__atomic_add_fetch(&g_addfd_ns, now_ns() - ta, __ATOMIC_RELAXED);
			if (g_addfd >= 5 && sched_setscheduler(0, SCHED_OTHER, &sp0) < 0)
				sched_fail("sched_setscheduler back to SCHED_OTHER (needs CAP_SYS_NICE or RLIMIT_NICE >= 20 - nice)");
			if (cpu >= 0 && g_addfd != 6 && sched_setaffinity(0, sizeof g_all, &g_all) < 0)
				sched_fail("sched_setaffinity");
			close(d);
			if (g_addfd != 2)
				continue;
			memset(&resp, 0, sizeof resp);
			resp.id = req.id;
			resp.val = r;
			ioctl(g_fd, SECCOMP_IOCTL_NOTIF_SEND, &resp);
			continue;
		}
		memset(&resp, 0, sizeof resp);
		resp.id = req.id;
		resp.val = 1;
		ioctl(g_fd, SECCOMP_IOCTL_NOTIF_SEND, &resp);
	}
}

static void sync_flag(int fd)
{
	ioctl(fd, SECCOMP_IOCTL_NOTIF_SET_FLAGS, SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP);
}

/* mode "stat" and the "-child" modes: the caller is a child process; its
 * listener comes back over a socketpair; the child prints the result. */
static int stat_floor(long n, int waiters)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_getppid, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof f / sizeof f[0], .filter = f };
	int sp[2];
	char c = 0;
	pthread_t th;
	union {
		struct cmsghdr h;
		char b[CMSG_SPACE(sizeof(int))];
	} cm;
	struct iovec io = { &c, 1 };
	struct msghdr mh = { .msg_iov = &io, .msg_iovlen = 1, .msg_control = cm.b,
			     .msg_controllen = sizeof cm.b };

	if (socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sp) < 0)
		return 1;
	g_child = fork();
	if (g_child < 0)
		return 1;
	if (g_child == 0) {
		static char path[] = "/usr/bin/env";
		struct stat st;
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
			_exit(1);
		if (g_apart)
			apart_pin(1);
		int fd = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
				      SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
		if (fd < 0)
			_exit(1);
		sync_flag(fd);
		struct cmsghdr *h = CMSG_FIRSTHDR(&mh);
		h->cmsg_level = SOL_SOCKET;
		h->cmsg_type = SCM_RIGHTS;
		h->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(h), &fd, sizeof fd);
		if (sendmsg(sp[1], &mh, 0) < 0)
			_exit(1);
		close(fd);
		syscall(SYS_getppid, path, &st); /* the supervisors are up */
		double t0 = bench_now_ns();
		for (long i = 0; i < n; i++) {
			long r = syscall(SYS_getppid, path, &st);
			if (r < 0)
				_exit(1); /* the supervisor is gone: no result */
			if (g_addfd && r > 2)
				close((int)r);
		}
		double t1 = bench_now_ns();
		bench_report(g_stat ? "unotify_floor_stat" : "unotify_floor", t0, t1, n);
		fflush(stdout);
		_exit(!g_stat || st.st_size == (off_t)strlen(path) ? 0 : 1);
	}
	if (recvmsg(sp[0], &mh, 0) <= 0 || !CMSG_FIRSTHDR(&mh))
		return 1;
	int fd;
	memcpy(&fd, CMSG_DATA(CMSG_FIRSTHDR(&mh)), sizeof fd);
	for (int i = 0; i < waiters; i++)
		if (pthread_create(&th, NULL, supervisor, NULL) != 0)
			return 1;
	g_fd = fd;
	int ws;
	if (waitpid(g_child, &ws, 0) < 0)
		return 1;
	__atomic_store_n(&g_last_ns, 0, __ATOMIC_SEQ_CST);
	usleep(2000);
	keep_report(n);
	fflush(stdout);
	_exit(WIFEXITED(ws) ? WEXITSTATUS(ws) : 1);
}

int main(int argc, char **argv)
{
	long n = bench_iters(argc, argv, 100000);
	int waiters = argc > 2 ? atoi(argv[2]) : 1;
	char mode[64];
	snprintf(mode, sizeof mode, "%s", argc > 3 ? argv[3] : "sync");
	size_t ml = strlen(mode);
	char *a = strstr(mode, "-apart");
	if (a) {
		g_apart = 1;
		memmove(a, a + 6, strlen(a + 6) + 1);
	}
	char *k = strstr(mode, "-keep");
	if (k) {
		g_keep = 1; /* a keeper per CPU */
		memmove(k, k + 5, strlen(k + 5) + 1);
		ml = strlen(mode);
	}
	int child = ml > 6 && !strcmp(mode + ml - 6, "-child");
	if (child)
		mode[ml - 6] = 0; /* the mode with the caller in a child process */
	ml = strlen(mode);
	g_work = child && ml > 5 && !strcmp(mode + ml - 5, "-work");
	if (g_work)
		mode[ml - 5] = 0; /* and a supervisor that works as moat's does */
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_getppid, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof f / sizeof f[0], .filter = f };
	pthread_t th;

	g_epoll = !strcmp(mode, "epoll");
	g_addfd = !strcmp(mode, "addfd") ? 1 : !strcmp(mode, "addfd-split") ? 2 :
		  !strcmp(mode, "addfd-idle") ? 3 : !strcmp(mode, "addfd-pin") ? 4 :
		  !strcmp(mode, "addfd-pin-idle") ? 5 : !strcmp(mode, "addfd-self") ? 6 : 0;
	if (sched_getaffinity(0, sizeof g_all, &g_all) < 0)
		return 1;
	if (g_addfd == 3) {
		long nc = sysconf(_SC_NPROCESSORS_CONF);
		for (long c = 0; c < nc && c < MAXCPU; c++)
			if (pthread_create(&th, NULL, idle_helper, (void *)c) != 0)
				return 1;
	}
	if (g_keep)
		keep_start();
	if (g_addfd && (g_srcfd = open("/etc/passwd", O_RDONLY | O_CLOEXEC)) < 0)
		return 1;
	g_stat = !strcmp(mode, "stat");
	if (g_stat || child)
		return stat_floor(n, waiters);
	for (int i = 0; i < waiters; i++)
		if (pthread_create(&th, NULL, supervisor, NULL) != 0)
			return 1;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return 1;
	if (g_apart)
		apart_pin(1);
	int fd = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
	if (fd < 0) {
		perror("seccomp");
		return 1;
	}
	if (strcmp(mode, "async"))
		ioctl(fd, SECCOMP_IOCTL_NOTIF_SET_FLAGS, SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP);
	g_fd = fd;
	syscall(SYS_getppid); /* the supervisors are up */
	double t0 = bench_now_ns();
	for (long i = 0; i < n; i++) {
		long r = syscall(SYS_getppid);
		if (r < 0)
			_exit(1);
		if (g_addfd && r > 2)
			close((int)r);
	}
	double t1 = bench_now_ns();
	bench_report("unotify_floor", t0, t1, n);
	__atomic_store_n(&g_last_ns, 0, __ATOMIC_SEQ_CST);
	usleep(2000);
	keep_report(n);
	fflush(stdout);
	_exit(0);
}
