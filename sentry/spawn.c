/* sentry/spawn.c - the guest's birth.
 *
 *   sentry ──clone(NEWUSER|NEWPID|NEWNS|NEWIPC|NEWUTS|NEWCGROUP)──► init (pid 1)
 *     writes init's uid/gid maps, PTRACE_SEIZEs it (options follow forks)
 *   init: PDEATHSIG; unshare(NEWNET) (in parallel with the sentry); setsid (no controlling terminal); mounts a procfs of the new pid ns (and unshares NEWTIME for its children: guest_timens) and sends its fd to the
 *     sentry; builds an empty tmpfs holding only the loader (MOAT_LOADER_PATH),
 *     pivots into it and makes it read-only; hostname "moat"; lo up; forks the
 *     program and then only reaps children, exiting with the program's status.
 *   program (pid 2): PDEATHSIG; drops every capability; no_new_privs; installs
 *     the seccomp filter (NEW_LISTENER | WAIT_KILLABLE_RECV), sends the
 *     listener to the sentry, closes every fd above 2, execve(argv[0]) — a
 *     traced exec the sentry resolves like any other.
 */
#include "sentry/spawn.h"
#include "kernel/task.h"
#include "loader/loader_abi.h"
#include "common/bpf.h"
#include "common/log.h"
#include "common/util.h"

#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/seccomp.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <net/route.h>
#include <netinet/in.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
#define SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (1UL << 5)
#endif

#include "platform/arch.h"
#include "platform/platform.h"
#include <linux/filter.h>
#include <stddef.h>

/* Child-side failure: one line to the sentry over the sync socket, then exit. */
static void child_fail(int sock, const char *what)
{
	char msg[256];
	int n = snprintf(msg, sizeof msg, "E%s: %s", what, strerror(errno));
	send_fds(sock, msg, n, NULL, 0);
	_exit(127);
}

static void drop_caps(void)
{
	for (int c = 0; c <= 63; c++)
		prctl(PR_CAPBSET_DROP, c, 0, 0, 0);
	prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2];
	memset(d, 0, sizeof d);
	syscall(SYS_capset, &h, d);
}

static void bring_up_lo(void)
{
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return;
	struct ifreq ifr;
	memset(&ifr, 0, sizeof ifr);
	snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "lo");
	if (ioctl(s, SIOCGIFFLAGS, &ifr) == 0) {
		ifr.ifr_flags |= IFF_UP | IFF_RUNNING | IFF_MULTICAST;
		ioctl(s, SIOCSIFFLAGS, &ifr);
	}
	/* the multicast route a test of multicast expects: 224.0.0.0/4 on lo
	 * (without it IP_ADD_MEMBERSHIP/MCAST_JOIN_GROUP on INADDR_ANY is ENODEV) */
	struct rtentry rt;
	memset(&rt, 0, sizeof rt);
	struct sockaddr_in *dst = (struct sockaddr_in *)&rt.rt_dst, *mask = (struct sockaddr_in *)&rt.rt_genmask;
	dst->sin_family = mask->sin_family = AF_INET;
	dst->sin_addr.s_addr = htonl(0xe0000000);
	mask->sin_addr.s_addr = htonl(0xf0000000);
	rt.rt_flags = RTF_UP;
	rt.rt_dev = (char *)"lo";
	ioctl(s, SIOCADDRT, &rt);
	close(s);
	/* and ff00::/8 on lo for IPv6 */
	s = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return;
	struct in6_rtmsg rt6;
	memset(&rt6, 0, sizeof rt6);
	rt6.rtmsg_dst.s6_addr[0] = 0xff;
	rt6.rtmsg_dst_len = 8;
	rt6.rtmsg_metric = 256;
	rt6.rtmsg_flags = RTF_UP;
	rt6.rtmsg_ifindex = (int)if_nametoindex("lo");
	ioctl(s, SIOCADDRT, &rt6);
	close(s);
}

static _Noreturn void program_main(const struct spawn_args *a, int sock)
{
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
		child_fail(sock, "pdeathsig");
	drop_caps();
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		child_fail(sock, "no_new_privs");
	/* the program starts as a native exec by the caller would: the
	 * caller's ignored signals ignored, its mask (set below, once the
	 * tracer holds the listener); every other disposition the default */
	sigset_t mask;
	sigemptyset(&mask);
	if (a->prog_blocked)
		mask = *a->prog_blocked;
	sigdelset(&mask, SIGKILL);
	sigdelset(&mask, SIGSTOP);
	for (int s = 1; s < NSIG; s++)
		signal(s, a->prog_ignored && sigismember(a->prog_ignored, s) == 1 &&
				  s != SIGKILL && s != SIGSTOP ? SIG_IGN : SIG_DFL);
	/* the caller's closed stdio (/dev/null in moat, cli/main.c) closed
	 * again, unless -t's pty took its place (before the filter: the
	 * listener may take one of the numbers, closed with it below) */
	for (int fd = 0; fd < 3; fd++)
		if ((a->stdio_closed & (1 << fd)) && !(a->tty_fd >= 0 && (a->tty_fds & (1 << fd))))
			close(fd);
	/* and the caller's soft open-file limit (moat raised its own) */
	struct rlimit nf;
	if (a->nofile_cur && getrlimit(RLIMIT_NOFILE, &nf) == 0 && a->nofile_cur < nf.rlim_cur) {
		nf.rlim_cur = a->nofile_cur;
		(void)setrlimit(RLIMIT_NOFILE, &nf);
	}
	/* (tests: widen the window before the listener is sent, where a
	 * signal once held the program and the tracer until --kill-after) */
	const char *dl = getenv("MOAT_TEST_LISTENER_DELAY_MS");
	if (dl) {
		struct timespec ts = { atoi(dl) / 1000, (atoi(dl) % 1000) * 1000000L };
		nanosleep(&ts, NULL);
	}
	int lfd = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
			       SECCOMP_FILTER_FLAG_NEW_LISTENER |
				       SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV,
			       a->filter);
	if (lfd < 0)
		child_fail(sock, "seccomp filter");
	/* From here on every syscall is filtered: only FAST calls and the exec.
	 * Every send*msg is a ptrace stop (their addresses are in memory), and
	 * the tracer is waiting here: it takes the listener with pidfd_getfd,
	 * told its number, and says when (write and read run natively). */
	if (send_fd_number(sock, lfd) < 0)
		_exit(127);
	/* the tracer has it and waits for stops again: a pending signal
	 * (blocked since before the fork) is delivered now, through it */
	sigprocmask(SIG_SETMASK, &mask, NULL);
	close(lfd);
	syscall(SYS_close_range, 3, ~0U, 0);
	execve(a->argv[0], a->argv, a->envp);
	/* The sentry already explained why (not found / permission denied). */
	_exit(errno == ENOENT ? 127 : 126);
}

#define INIT_ACT_FD 4 /* the init's act channel (init_act) */
#define INIT_ACT_SOCK 3 /* where a bind request's socket lands (init_act) */

/* wait4, exit, exit_group, rt_sigreturn, restart_syscall, close, and the
 * act thread's calls (init_act): read, write and recvmsg of fd INIT_ACT_FD,
 * the owner rows it makes for the sentry (setpriority and ioprio_set of one
 * task, the normal scheduling classes, affinity, limits), and bind and
 * getsockopt of the socket a bind request sent (fd INIT_ACT_SOCK only);
 * anything else kills it. Built into f (INIT_FILTER_LEN instructions) before
 * the init's text_trim, installed after it (init_filter_install): the rows
 * are moat's rodata and the builder its text, which a build after the trim
 * mapped again for good (a 64 KiB rodata folio and a text folio only the
 * init maps: its PSS 265 -> 345 KiB). */
#define INIT_FILTER_ROWS 18
#define INIT_FILTER_LEN BPF_ALLOW_LEN(INIT_FILTER_ROWS)
static int init_filter_build(struct sock_filter *f)
{
	static const struct bpf_allow rows[] = {
		{ .nr = __NR_wait4, .arg = -1 },
		{ .nr = __NR_exit_group, .arg = -1 },
		{ .nr = __NR_exit, .arg = -1 },
		{ .nr = __NR_rt_sigreturn, .arg = -1 },
		{ .nr = __NR_restart_syscall, .arg = -1 },
		{ .nr = __NR_close, .arg = -1 },
		{ .nr = __NR_read, .arg = 0, .val = INIT_ACT_FD },
		{ .nr = __NR_write, .arg = 0, .val = INIT_ACT_FD },
		{ .nr = __NR_recvmsg, .arg = 0, .val = INIT_ACT_FD },
		{ .nr = __NR_bind, .arg = 0, .val = INIT_ACT_SOCK },
		{ .nr = __NR_getsockopt, .arg = 0, .val = INIT_ACT_SOCK },
		{ .nr = __NR_prlimit64, .arg = -1 },
		{ .nr = __NR_setpriority, .arg = 0, .val = PRIO_PROCESS },
		{ .nr = __NR_ioprio_set, .arg = 0, .val = 1 /* IOPRIO_WHO_PROCESS */ },
		{ .nr = __NR_sched_setscheduler, .arg = -1 },
		{ .nr = __NR_sched_setparam, .arg = -1 },
		{ .nr = __NR_sched_setattr, .arg = -1 },
		{ .nr = __NR_sched_setaffinity, .arg = -1 },
	};
	_Static_assert(sizeof rows / sizeof rows[0] == INIT_FILTER_ROWS, "INIT_FILTER_ROWS");
	return bpf_allow_build(rows, INIT_FILTER_ROWS, SECCOMP_RET_KILL_PROCESS, f, INIT_FILTER_LEN);
}

static void init_filter_install(struct sock_filter *f, int len)
{
	struct sock_fprog prog = { .len = (unsigned short)len, .filter = f };
	/* every thread: the act thread too */
	if (len < 0 || syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog) != 0)
		_exit(127);
}

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

static long long ts_ns(const struct timespec *t) { return (long long)t->tv_sec * 1000000000LL + t->tv_nsec; }

/* The guest's clocks count from the sandbox's boot, not the host's: a time
 * namespace (Linux 5.6+) for the init's children, which the program and
 * every guest task live in (the init itself stays in the host's: its
 * clocks are nobody's). Owned by our user namespace, where we hold
 * CAP_SYS_ADMIN and CAP_SYS_TIME, root-run or not. The sandbox's boot is
 * our own starttime (clock ticks since the host booted, as our procfs
 * shows it: the sentry's procfs counts uptime, btime and every starttime
 * from the same tick), less the host's CLOCK_MONOTONIC_RAW lag behind
 * CLOCK_MONOTONIC (the namespace moves RAW by monotonic's offset: without
 * that margin RAW would start below 0). CLOCK_BOOTTIME and
 * CLOCK_MONOTONIC then read the sandbox's uptime (MONOTONIC less the
 * host's suspended time since). Returns that boot in host ticks, or
 * -errno (no time namespace: the host's clocks, as before). */
static long long guest_timens(int procfd)
{
	char buf[512], *p;
	long hz = sysconf(_SC_CLK_TCK);
	if (hz <= 0 || 1000000000L % hz)
		return -EINVAL;
	long long tick = 1000000000LL / hz;
	if (unshare(CLONE_NEWTIME) < 0)
		return -errno;
	int fd = openat(procfd, "self/stat", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return -EIO;
	buf[n] = 0;
	if (!(p = proc_stat_field(buf, 22))) /* starttime */
		return -EIO;
	long long start = strtoll(p, NULL, 10);
	struct timespec mono, raw, bt;
	if (clock_gettime(CLOCK_MONOTONIC_RAW, &raw) < 0 || clock_gettime(CLOCK_MONOTONIC, &mono) < 0 ||
	    clock_gettime(CLOCK_BOOTTIME, &bt) < 0)
		return -errno;
	long long lag = ts_ns(&mono) - ts_ns(&raw);
	long long boot = start - (lag > 0 ? (lag + tick - 1) / tick : 0);
	if (boot < 0)
		boot = 0;
	/* boottime: minus the boot; monotonic: what makes it read as
	 * boottime does now (the two differ by the host's suspended time) */
	long long boff = -boot * tick, moff = ts_ns(&bt) + boff - ts_ns(&mono);
	char off[128];
	int len = snprintf(off, sizeof off, "monotonic %lld %lld\nboottime %lld %lld\n",
			   moff / 1000000000LL - (moff % 1000000000LL < 0), (moff % 1000000000LL + 1000000000LL) % 1000000000LL,
			   boff / 1000000000LL - (boff % 1000000000LL < 0), (boff % 1000000000LL + 1000000000LL) % 1000000000LL);
	fd = openat(procfd, "self/timens_offsets", O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, off, (size_t)len);
	int e = errno;
	close(fd);
	if (n != len)
		return n < 0 ? -e : -EIO;
	return boot;
}

/* The init's act channel (fd INIT_ACT_FD; the sentry's end is
 * spawn_result.act_fd, sandbox.init_act_fd): calls the sentry has the
 * guest's init make, by a number of the guest's pid namespace, where a
 * number can only name a guest task (the sentry's own filter refuses
 * them on another process: rootless a number there could name any of the
 * caller's processes). The sentry checks the target and holds its number
 * (syscalls/sys_signal.c pin_act: the reap gate) around the one request;
 * a thread of the init answers each, made before the init's filter (which
 * lets it read and write only this fd, and make the calls below). Since
 * initrows: prlimit64 setting a limit the kernel enforces with a signal
 * (RLIMIT_CPU, RLIMIT_FSIZE, RLIMIT_STACK, RLIMIT_RTTIME) of another
 * process; since initrows2 every owner row the sentry made on another task
 * (kernel/task.h init_act_req: prlimit64's sets, setpriority, ioprio_set,
 * sched_setscheduler/setparam/setattr, sched_setaffinity) and the
 * tracer's own sets of a guest task's affinity and RLIMIT_CORE; since
 * netbind a guest socket's bind where no moat-netd runs (below). */
static long init_act_make(struct init_act_req *q, struct init_act_rep *p)
{
	switch (q->nr) {
	case SYS_prlimit64:
		return syscall(SYS_prlimit64, q->pid, (unsigned)q->a, (q->flags & INIT_ACT_NEW) ? q->buf : NULL,
			       (q->flags & INIT_ACT_OLD) ? p->old : NULL);
	case SYS_setpriority:
		return syscall(SYS_setpriority, PRIO_PROCESS, q->pid, (int)q->a);
	case SYS_ioprio_set:
		return syscall(SYS_ioprio_set, 1 /* IOPRIO_WHO_PROCESS */, q->pid, (int)q->a);
	case SYS_sched_setscheduler:
		return syscall(SYS_sched_setscheduler, q->pid, (int)q->a, q->buf);
	case SYS_sched_setparam:
		return syscall(SYS_sched_setparam, q->pid, q->buf);
	case SYS_sched_setattr:
		return syscall(SYS_sched_setattr, q->pid, q->buf, 0);
	case SYS_sched_setaffinity:
		return syscall(SYS_sched_setaffinity, q->pid, (unsigned long)q->len, q->buf);
	default:
		errno = ENOSYS;
		return -1;
	}
}

static uint64_t act_netns; /* the init's network namespace's cookie, the guest's (0: unknown) */

/* bind (kernel/task.h init_act_req) on the socket sent with it (at INIT_ACT_SOCK): a socket of
 * the guest's network namespace (not the host's, where the caller's stdio
 * lives: its abstract names and ports are the host's; there only an
 * AF_UNIX autobind, a name the kernel picks, as the guest's own bind of
 * its stdio was), and never an AF_UNIX path (the sentry maps a path to an
 * abstract name; one here would land in the init's root) */
static long init_act_bind(const struct init_act_req *q, int fd)
{
	uint64_t ns = 0;
	int dom = 0;
	socklen_t l = sizeof dom;
	if (fd != INIT_ACT_SOCK || q->len > sizeof(struct sockaddr_storage))
		return -EINVAL;
	if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &dom, &l) < 0)
		return -errno; /* ENOTSOCK: not a socket */
	const struct sockaddr_un *un = (const void *)q->buf;
	int autobind = dom == AF_UNIX && q->len == sizeof(sa_family_t) && un->sun_family == AF_UNIX;
	l = sizeof ns;
	if (!autobind && (getsockopt(fd, SOL_SOCKET, SO_NETNS_COOKIE, &ns, &l) < 0 || !act_netns || ns != act_netns))
		return -EPERM;
	if (dom == AF_UNIX && q->len > offsetof(struct sockaddr_un, sun_path) && un->sun_family == AF_UNIX &&
	    un->sun_path[0])
		return -EPERM;
	return bind(fd, (const struct sockaddr *)q->buf, q->len) < 0 ? -errno : 0;
}

static void *init_act(void *arg)
{
	/* the guest's network namespace (ours), and any hole below
	 * INIT_ACT_SOCK filled (a copy of the channel), so that a request's
	 * socket lands there, the one number the filter lets bind */
	int s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s >= 0) {
		act_netns = sock_netns_cookie(s);
		close(s);
	}
	while ((s = fcntl(INIT_ACT_FD, F_DUPFD_CLOEXEC, 0)) >= 0 && s < INIT_ACT_SOCK)
		;
	if (s >= 0)
		close(s);
	/* started (glibc's thread start-up calls are behind it: the init's
	 * filter, installed once this is set, allows none of them) */
	atomic_store((atomic_int *)arg, 1);
	static struct init_act_req q;
	struct init_act_rep p;
	for (;;) {
		int fd = -1, nfd = 1;
		memset(&q, 0, sizeof q); /* the part of buf not sent reads as zeros */
		long n = recv_fds(INIT_ACT_FD, &q, sizeof q, &fd, &nfd);
		if (n < (long)offsetof(struct init_act_req, buf)) {
			if (nfd)
				close(fd);
			break; /* the sentry's end closed */
		}
		q.len = (uint32_t)(n - (long)offsetof(struct init_act_req, buf));
		memset(&p, 0, sizeof p);
		if (q.nr == SYS_bind) {
			p.r = nfd ? init_act_bind(&q, fd) : -EINVAL;
		} else if (nfd) {
			p.r = -EINVAL;
		} else {
			long r = init_act_make(&q, &p);
			p.r = r < 0 ? -errno : r;
		}
		if (nfd)
			close(fd);
		if (write(INIT_ACT_FD, &p, sizeof p) != (ssize_t)sizeof p)
			break;
	}
	syscall(SYS_exit, 0); /* this thread only: the init reaps on */
	return NULL;
}

static _Noreturn void init_main(const struct spawn_args *a, int sock, int act, pid_t sentry)
{
	char c;
	/* the act channel out of the way of the dup2s below (to fd
	 * INIT_ACT_FD after the set-up socket's move to 3) */
	int act_hi = fcntl(act, F_DUPFD_CLOEXEC, INIT_ACT_FD + 1);
	if (act_hi < 0)
		_exit(127);
	close(act);
	/* our parent lives in another pid namespace: getppid() is 0 there, and
	 * 0 also means it already died; PDEATHSIG covers the rest */
	(void)sentry;
	/* the sentry's set-up handler (run.c setup_signal) is no init's: with
	 * the default action the guest's signals to pid 1 are dropped, as
	 * natively (with it, a guest's kill -TERM 1 ran it under the init's
	 * filter and ended the sandbox) */
	static const int setup_sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
	for (unsigned i = 0; i < sizeof setup_sigs / sizeof setup_sigs[0]; i++)
		signal(setup_sigs[i], SIG_DFL);
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
		_exit(127);
	/* The guest is the OOM killer's first choice (inherited by the whole
	 * tree; raising needs no privilege). In the sandbox's memory cgroup
	 * the gofer is too (its layers count: limits_attach_gofer), and an OOM
	 * kill must take the guest, not the gofer that holds what --export
	 * writes. The guest cannot lower it: its /proc/<pid>/oom_score_adj is
	 * the sentry's read-only view of the real file. */
	int ofd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
	if (ofd >= 0) {
		(void)!write(ofd, "1000", 4);
		close(ofd);
	}
	/* The network namespace is ours to make (we have every capability in
	 * our new user namespace, which then owns it, as with CLONE_NEWNET):
	 * its set-up (~0.5 ms of the kernel's) runs here, beside the sentry's,
	 * instead of inside the sentry's clone call. Nothing before this line
	 * touches the network. */
	if (unshare(CLONE_NEWNET) < 0)
		child_fail(sock, "network namespace");
	/* A session of our own: no controlling terminal (the caller's /dev/tty
	 * is ENXIO inside), and kill(0, ...) in the guest reaches only its own
	 * process group, never the caller's shell. */
	if (setsid() < 0)
		_exit(127);
	if (a->tty_fd >= 0) {
		/* -t: a private pty is our controlling terminal and the program's
		 * stdio; without -t (tty_relay_plan) the stdio that was the
		 * caller's terminal, no controlling terminal */
		if (a->tty_ctty && ioctl(a->tty_fd, TIOCSCTTY, 0) < 0)
			_exit(127);
		for (int i = 0; i < 3; i++)
			if ((a->tty_fds & (1 << i)) && dup2(a->tty_fd, i) < 0)
				_exit(127);
		if (a->tty_fd > 2 && a->tty_fd != sock)
			close(a->tty_fd);
	}
	/* --output-limit / --idle-timeout: stdout and stderr go through the sentry */
	if (a->out_fd >= 0 && (dup2(a->out_fd, 1) < 0 || dup2(a->err_fd, 2) < 0))
		_exit(127);
	/* Keep only stdio and the set-up socket. */
	if (sock != 3) {
		if (dup2(sock, 3) < 0)
			_exit(127);
		sock = 3;
	}
	if (dup2(act_hi, INIT_ACT_FD) < 0)
		_exit(127);
	syscall(SYS_close_range, INIT_ACT_FD + 1, ~0U, 0);
	if (read(sock, &c, 1) != 1) /* the sentry wrote our id maps */
		_exit(127);
	if (setresgid(a->gid, a->gid, a->gid) < 0 || setresuid(a->uid, a->uid, a->uid) < 0) {
		/* ids are mapped identically; nothing to do if this fails */
	}
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		child_fail(sock, "make / private");
	/* A procfs of our pid namespace, for the sentry's synthetic /proc. */
	if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
		child_fail(sock, "mount proc");
	int procfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (procfd < 0)
		child_fail(sock, "open proc");
	long long boot = guest_timens(procfd); /* before the program exists */
	/* The guest's native root: an empty tmpfs with the loader only. */
	const char *nr = "/tmp";
	if (mount("moat", nr, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,mode=0755,nr_inodes=16") < 0)
		child_fail(sock, "mount tmpfs");
	char lp[64];
	snprintf(lp, sizeof lp, "%s%s", nr, MOAT_LOADER_PATH);
	int lf = open(lp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0555);
	if (lf < 0 || write_all(lf, a->loader, a->loader_len) < 0)
		child_fail(sock, "write loader");
	close(lf);
	if (chdir(nr) < 0 || syscall(SYS_pivot_root, ".", ".") < 0)
		child_fail(sock, "pivot_root");
	if (umount2(".", MNT_DETACH) < 0 || chdir("/") < 0)
		child_fail(sock, "detach old root");
	if (mount(NULL, "/", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL) < 0)
		child_fail(sock, "read-only root");
	sethostname("moat", 4);
	bring_up_lo();
	/* The DNS stub's socket, in the guest's network namespace: the sentry
	 * serves it (sentry/netdns.c). Bound before the program exists, so
	 * the guest can never take the address. */
	int setup_fds[6] = { procfd, -1, -1, -1, -1, -1 }, nsetup = 1;
	char tag[6] = "P";
	if (a->dns_stub) {
		struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(53) };
		inet_pton(AF_INET, "127.0.0.53", &sin.sin_addr);
		setup_fds[1] = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (setup_fds[1] < 0 || bind(setup_fds[1], (struct sockaddr *)&sin, sizeof sin) < 0)
			child_fail(sock, "DNS stub socket");
		nsetup = 2;
		/* The connected-UDP relay's ends (moat-netd keeps them,
		 * netd.c udp_relay): 127.0.0.53 and ::1 on ephemeral ports.
		 * Bound now, so the guest can never take their ports; ::1 may
		 * be missing (IPv6 off), then v6 connected UDP is refused */
		sin.sin_port = 0;
		int r4 = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (r4 >= 0 && bind(r4, (struct sockaddr *)&sin, sizeof sin) == 0) {
			setup_fds[nsetup++] = r4;
			tag[1] = '4';
		} else if (r4 >= 0)
			close(r4);
		struct sockaddr_in6 s6 = { .sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT };
		int r6 = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0), one = 1;
		if (r6 >= 0 && setsockopt(r6, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one) == 0 &&
		    bind(r6, (struct sockaddr *)&s6, sizeof s6) == 0) {
			setup_fds[nsetup++] = r6;
			tag[tag[1] ? 2 : 1] = '6';
		} else if (r6 >= 0)
			close(r6);
		/* The relay passes its destinations' ICMP errors on (netd.c
		 * relay_icmp): a raw ICMP socket per family in the guest's
		 * namespace, bound to the relay's end, send-only (a filter that
		 * takes no packet). netd keeps them; the guest never sees
		 * them. None (IPv6 off...): those errors are not passed on */
		struct sock_filter none = BPF_STMT(BPF_RET | BPF_K, 0);
		struct sock_fprog nonep = { 1, &none };
		s6.sin6_port = 0;
		const struct {
			int family, proto;
			const void *addr;
			socklen_t len;
			char tag;
		} ic[2] = { { AF_INET, IPPROTO_ICMP, &sin, sizeof sin, 'i' },
			    { AF_INET6, IPPROTO_ICMPV6, &s6, sizeof s6, 'j' } };
		for (int i = 0; i < 2; i++) {
			int q = socket(ic[i].family, SOCK_RAW | SOCK_CLOEXEC, ic[i].proto);
			if (q >= 0 && setsockopt(q, SOL_SOCKET, SO_ATTACH_FILTER, &nonep, sizeof nonep) == 0 &&
			    bind(q, ic[i].addr, ic[i].len) == 0) {
				setup_fds[nsetup++] = q;
				tag[strlen(tag)] = ic[i].tag;
			} else if (q >= 0) {
				close(q);
			}
		}
	}
	/* then "/B<the sandbox's boot, host ticks>" or "/E<errno>" (guest_timens) */
	char msg[64];
	int mlen = snprintf(msg, sizeof msg, "%s/%c%lld", tag, boot >= 0 ? 'B' : 'E', boot >= 0 ? boot : -boot);
	if (send_fds(sock, msg, (size_t)mlen, setup_fds, nsetup) < 0)
		_exit(127);
	for (int i = 0; i < nsetup; i++)
		close(setup_fds[i]);
	prctl(PR_SET_NAME, "moat-init");
	/* rlimits, a second layer under the cgroup (sentry/limits.c); the
	 * program and everything it starts inherit them */
	if (a->nproc) {
		struct rlimit rl = { a->nproc, a->nproc };
		setrlimit(RLIMIT_NPROC, &rl);
	}
	if (a->data) {
		struct rlimit rl = { a->data, a->data };
		setrlimit(RLIMIT_DATA, &rl);
	}
	/* no core dump ever (sentry/tracer.c init_stop checks the program's:
	 * 1 byte, too small for a core file and no pipe dump; the guest's own
	 * limit is virtual) */
	{
		struct rlimit rl = { 1, 1 }, zero = { 0, 0 };
		if (setrlimit(RLIMIT_CORE, &rl) < 0 && (!a->core_zero || setrlimit(RLIMIT_CORE, &zero) < 0))
			_exit(127);
	}
	/* --cpus: nproc and sched_getaffinity show the sandbox's CPUs (the
	 * cgroup's cpu.max, not this, is the limit) */
	if (a->ncpus) {
		cpu_set_t set, keep;
		unsigned n = 0;
		CPU_ZERO(&keep);
		if (sched_getaffinity(0, sizeof set, &set) == 0) {
			for (int i = 0; i < CPU_SETSIZE && n < a->ncpus; i++)
				if (CPU_ISSET(i, &set)) {
					CPU_SET(i, &keep);
					n++;
				}
			if (n)
				sched_setaffinity(0, sizeof keep, &keep);
		}
	}

	/* The program starts with every signal blocked, until the tracer has
	 * its listener: a signal-delivery-stop while the tracer waits on the
	 * sync socket for it (event_stop) held both until --kill-after (a
	 * SIGTERM forwarded 5-30 ms after start: 1-2 runs in 60) */
	sigset_t all, old;
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, &old);
	pid_t prog = fork();
	if (prog < 0) {
		/* (the sentry reads it when it finds the init gone: run.c) */
		char fmsg[256], why[128];
		int n = snprintf(fmsg, sizeof fmsg, "E" SPAWN_FAILED_FMT, "the guest's program",
				 spawn_error(errno, why, sizeof why));
		send_fds(sock, fmsg, (size_t)n, NULL, 0);
		_exit(127);
	}
	if (prog == 0)
		program_main(a, sock);
	sigprocmask(SIG_SETMASK, &old, NULL);
	close(sock);
	/* The tracer detached us at the program's fork event (tracer.c), before
	 * this fork returned: the act thread is no guest task. Made after the
	 * init drops its capabilities and sets no-new-privileges (a thread
	 * copies them); the filter below reaches it too (TSYNC). */
	prctl(PR_SET_DUMPABLE, 0);
	drop_caps();
	prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
	pthread_attr_t attr;
	pthread_t act_thread;
	static atomic_int act_started;
	if (pthread_attr_init(&attr) != 0 || pthread_attr_setstacksize(&attr, 64 * 1024) != 0 ||
	    pthread_create(&act_thread, &attr, init_act, &act_started) != 0)
		close(INIT_ACT_FD); /* the sentry's requests get EPIPE: refused */
	else
		while (!atomic_load(&act_started))
			sched_yield();
	/* The init shares the guest's pid namespace and uid: make it out of the
	 * guest's reach (not dumpable: no process_vm_writev/ptrace into it) and
	 * harmless if reached (no capabilities, no new privileges, and a filter
	 * that lets it do nothing but reap and exit), the filter built before
	 * the trims and installed after them. */
	struct sock_filter filter[INIT_FILTER_LEN];
	int filter_len = init_filter_build(filter);
	malloc_trim(0); /* the sentry's set-up heap, copied at clone time */
	stack_trim();   /* and the stack pages its set-up dirtied */
	text_trim();    /* and moat's text it mapped */
	init_filter_install(filter, filter_len);
	/* pid 1: reap everything; leave when the program does. */
	for (;;) {
		int st;
		pid_t p = waitpid(-1, &st, __WALL);
		if (p < 0 && errno == EINTR)
			continue;
		if (p < 0)
			_exit(0);
		if (p == prog)
			_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
	}
}

int spawn_guest(const struct spawn_args *a, struct spawn_result *r, char *err, size_t errlen)
{
	int sv[2], act[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		snprintf(err, errlen, "socketpair: %s", strerror(errno));
		return -errno;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, act) < 0) {
		int e = errno;
		snprintf(err, errlen, "socketpair: %s", strerror(e));
		close(sv[0]);
		close(sv[1]);
		return -e;
	}
	pid_t me = getpid();
	/* CLONE_NEWNET: the init unshares it itself (init_main) */
	long flags = CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWIPC |
		     CLONE_NEWUTS | CLONE_NEWCGROUP | SIGCHLD;
	/* The init's start (copy_process's start_boottime, which its /proc
	 * stat shows in clock ticks, rounded down) lies between these two
	 * reads of the same clock: when both fall in one tick, that tick is
	 * its starttime, and the sandbox's boot (fs/procfs.c boot_ticks) is
	 * known without reading the guest's 1/stat (25-30 us on the first
	 * sysinfo or /proc/uptime; else it is read then, as before). */
	struct timespec b0, b1 = { 0, 0 };
	clock_gettime(CLOCK_BOOTTIME, &b0);
	pid_t pid = (pid_t)syscall(SYS_clone, flags, 0, NULL, NULL, 0);
	if (pid > 0)
		clock_gettime(CLOCK_BOOTTIME, &b1);
	if (pid < 0) {
		int e = errno;
		char why[128];
		if (e == EAGAIN) {
			snprintf(err, errlen, SPAWN_FAILED_FMT, "the guest's init", spawn_error(e, why, sizeof why));
			close(sv[0]);
			close(sv[1]);
			close(act[0]);
			close(act[1]);
			return -e;
		}
		snprintf(err, errlen, "cannot create namespaces: %s%s", strerror(e),
			 e == EPERM || e == ENOSPC ? " (are unprivileged user namespaces enabled?)" :
			 e == EAGAIN ? " (the caller's process limit, ulimit -u, reached?)" : "");
		close(sv[0]);
		close(sv[1]);
		close(act[0]);
		close(act[1]);
		return -e;
	}
	if (pid == 0) {
		close(sv[0]);
		close(act[0]);
		init_main(a, sv[1], act[1], me);
	}
	close(sv[1]);
	close(act[1]);
	r->init_pid = pid;
	r->sync_sock = sv[0];
	r->act_fd = act[0];
	r->guest_procfd = -1;
	r->init_start_ticks = 0;
	long hz = sysconf(_SC_CLK_TCK);
	if (hz > 0 && 1000000000L % hz == 0) {
		unsigned long long per = 1000000000ULL / (unsigned long long)hz;
		unsigned long long t0 = ((unsigned long long)b0.tv_sec * 1000000000ULL + (unsigned long long)b0.tv_nsec) / per;
		unsigned long long t1 = ((unsigned long long)b1.tv_sec * 1000000000ULL + (unsigned long long)b1.tv_nsec) / per;
		if (t0 == t1)
			r->init_start_ticks = t0;
	}
	r->dns_fd = -1;

	char path[64], map[64];
	int e;
	/* We are the sandbox's unprivileged host uid in a user namespace of our
	 * own (privilege.c): the guest's ids map to ours, one each. */
	snprintf(path, sizeof path, "/proc/%d/setgroups", pid);
	write_file(path, "deny");
	snprintf(map, sizeof map, "%u %u 1\n", a->uid, getuid());
	snprintf(path, sizeof path, "/proc/%d/uid_map", pid);
	e = write_file(path, map);
	snprintf(map, sizeof map, "%u %u 1\n", a->gid, getgid());
	snprintf(path, sizeof path, "/proc/%d/gid_map", pid);
	if (!e)
		e = write_file(path, map);
	if (e) {
		snprintf(err, errlen, "cannot write the guest's id map: %s", strerror(-e));
		goto fail;
	}
	if ((e = ptrace_seize(pid)) < 0) {
		snprintf(err, errlen, "ptrace: %s", strerror(-e));
		goto fail;
	}
	if (a->attach && (e = a->attach(a->attach_arg, pid, err, errlen)) < 0)
		goto fail;
	if (write(sv[0], "G", 1) != 1) {
		e = -errno;
		snprintf(err, errlen, "guest set-up: %s", strerror(errno));
		goto fail;
	}
	return 0;
fail:
	kill(pid, SIGKILL);
	waitpid(pid, NULL, __WALL);
	close(sv[0]);
	close(act[0]);
	r->act_fd = -1;
	return e ? e : -EIO;
}

int spawn_guest_finish(struct spawn_result *r, char *err, size_t errlen)
{
	int e;
	pid_t pid = r->init_pid;
	/* Wait for the procfs fd (or an error line). The init may stop for
	 * ptrace meanwhile only at its fork, which comes after this message. */
	char msg[256];
	int fds[6] = { -1, -1, -1, -1, -1, -1 }, nfd = 6;
	long n = recv_fds(r->sync_sock, msg, sizeof msg - 1, fds, &nfd);
	if (n <= 0) {
		e = n < 0 ? (int)n : -EPIPE;
		snprintf(err, errlen, "guest set-up failed");
		goto fail;
	}
	msg[n] = 0;
	if (msg[0] == 'E' || nfd < 1) {
		for (int i = 0; i < nfd; i++)
			close(fds[i]);
		snprintf(err, errlen, "guest set-up: %s", msg + 1);
		e = -EIO;
		goto fail;
	}
	r->guest_procfd = fds[0];
	r->dns_fd = nfd > 1 ? fds[1] : -1;
	/* the guest's time namespace (init_main, guest_timens): its clocks
	 * count from this boot, which procfs then counts from too */
	char *slash = strchr(msg, '/');
	r->timens_errno = 0;
	if (slash) {
		*slash = 0;
		unsigned long long v = strtoull(slash + 2, NULL, 10);
		if (slash[1] == 'B')
			r->init_start_ticks = v;
		else
			r->timens_errno = v ? (int)v : EIO;
	}
	/* "P", then '4' and/or '6' for the relay sockets that follow, 'i'
	 * and/or 'j' for its raw ICMP and ICMPv6 sockets */
	r->relay_fd[0] = r->relay_fd[1] = r->icmp_fd[0] = r->icmp_fd[1] = -1;
	for (int i = 1, k = 2; msg[i] && k < nfd; i++, k++) {
		if (msg[i] == '4' || msg[i] == '6')
			r->relay_fd[msg[i] == '6'] = fds[k];
		else if (msg[i] == 'i' || msg[i] == 'j')
			r->icmp_fd[msg[i] == 'j'] = fds[k];
		else
			close(fds[k]);
	}
	return 0;
fail:
	kill(pid, SIGKILL);
	waitpid(pid, NULL, __WALL);
	close(r->sync_sock);
	r->sync_sock = -1;
	return e;
}
