/* sig_restart: signals and interrupted calls.
 *  - a signal the process ignores (SIGCHLD by default, SIG_IGN, SIGWINCH)
 *    never interrupts a wait: epoll_wait, poll, select, nanosleep, a pipe's
 *    read, sigtimedwait run to their timeout or data (under moat every task
 *    is traced, and Linux queues even an ignored signal for a traced task);
 *  - a handled signal without SA_RESTART still interrupts them (EINTR);
 *  - the same for calls whose relative timeout is behind a pointer
 *    (sigtimedwait, semtimedop, io_getevents, io_pgetevents, epoll_pwait2):
 *    they time out after their whole timeout (EAGAIN, or 0 events), not
 *    with EINTR early, and not later than the time left (under moat they are
 *    restarted with a copy of what is left, and the register that held the
 *    guest's pointer holds it again after the call);
 *  - calls that never sleep (open, stat, kill) never see EINTR from a storm
 *    of handled signals without SA_RESTART (under moat they are trapped, and
 *    a signal before the sentry took the call interrupted its wait). */
#include "t.h"
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <linux/aio_abi.h>
#include <sys/epoll.h>
#include <sys/ipc.h>
#include <sys/select.h>
#include <sys/sem.h>
#include <time.h>

/* every wait: WAIT_MS (160 ms; 300 before: the tier's time), the child's
 * signal or exit DELAY_MS in, a whole wait at least WAIT_MS - 20 */
#define WAIT_MS 160
#define DELAY_MS 30

static volatile sig_atomic_t hits;

static void on_sig(int s)
{
	(void)s;
	hits++;
}

static void set_handler(int sig, void (*h)(int), int flags)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = h;
	sa.sa_flags = flags;
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* once delay_ms have passed, wait (at most 3 s) until pid sleeps (state S
 * in /proc/PID/stat): on a loaded CPU the parent could still be on its way
 * to the wait 30 ms after the fork, and a signal or exit then came before
 * the wait (no EINTR: the self-check's differential, natively, beside four
 * other scripts and the compile checks) */
static void after_and_asleep(pid_t pid, int delay_ms)
{
	char path[64], buf[256];
	usleep(delay_ms * 1000);
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	for (int i = 0; i < 3000; i++) {
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof buf - 1);
		if (fd >= 0)
			close(fd);
		if (n <= 0)
			return;
		buf[n] = 0;
		const char *rp = strrchr(buf, ')');
		if (!rp || rp[1] != ' ' || rp[2] == 'S')
			return;
		usleep(1000);
	}
}

/* a child that sends sig to the parent (0: none) after delay_ms, once the
 * parent sleeps, and exits (its SIGCHLD); with wfd >= 0 a byte is written
 * write_ms after that exit */
static pid_t child_doing(int delay_ms, int sig, int wfd, int write_ms)
{
	pid_t parent = getpid(), pid = fork();
	if (pid == 0) {
		/* the byte comes from a grandchild: the child's exit (SIGCHLD)
		 * is before it */
		pid_t child = getpid();
		if (wfd >= 0 && fork() == 0) {
			for (int i = 0; i < 5000 && getppid() == child; i++)
				usleep(1000);
			usleep(write_ms * 1000);
			if (wfd == 0) /* sigwaitinfo: the awaited signal */
				_exit(kill(parent, SIGUSR2) != 0);
			_exit(write(wfd, "x", 1) != 1);
		}
		after_and_asleep(parent, delay_ms);
		if (sig)
			kill(parent, sig);
		_exit(0);
	}
	return pid;
}

enum { W_EPOLL, W_POLL, W_SELECT, W_NANOSLEEP, W_READ, W_SIGTIMEDWAIT, W_N };
static const char *wname[W_N] = { "epoll_wait", "poll", "select", "nanosleep", "read_pipe", "sigtimedwait" };

/* one wait of about WAIT_MS (read: until the child's byte at WAIT_MS);
 * 0, or -errno */
static int wait_once(int kind, int rfd)
{
	int r;
	switch (kind) {
	case W_EPOLL: {
		int ep = epoll_create1(EPOLL_CLOEXEC);
		struct epoll_event ev;
		r = epoll_wait(ep, &ev, 1, WAIT_MS);
		int e = errno;
		close(ep);
		return r < 0 ? -e : 0;
	}
	case W_POLL:
		r = poll(NULL, 0, WAIT_MS);
		return r < 0 ? -errno : 0;
	case W_SELECT: {
		struct timeval tv = { 0, WAIT_MS * 1000 };
		r = select(0, NULL, NULL, NULL, &tv);
		return r < 0 ? -errno : 0;
	}
	case W_NANOSLEEP: {
		struct timespec ts = { 0, WAIT_MS * 1000000L };
		r = nanosleep(&ts, NULL);
		return r < 0 ? -errno : 0;
	}
	case W_READ: {
		char c;
		r = (int)read(rfd, &c, 1);
		return r < 0 ? -errno : 0;
	}
	case W_SIGTIMEDWAIT: {
		/* without a timeout (with one: ptr_cases), until the
		 * grandchild's SIGUSR2 */
		sigset_t set;
		sigemptyset(&set);
		sigaddset(&set, SIGUSR2);
		r = sigwaitinfo(&set, NULL);
		return r < 0 ? -errno : 0;
	}
	default:
		return 0;
	}
}

/* A wait while a child exits DELAY_MS in (and with sig, sends it first). */
static int wait_with_child(int kind, int sig)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		DIE("pipe");
	sigset_t u2, old;
	sigemptyset(&u2);
	sigaddset(&u2, SIGUSR2);
	sigprocmask(SIG_BLOCK, &u2, &old);
	pid_t ch = child_doing(DELAY_MS, sig, kind == W_READ ? p[1] : kind == W_SIGTIMEDWAIT ? 0 : -1,
				 WAIT_MS - DELAY_MS);
	int r = wait_once(kind, p[0]);
	waitpid(ch, NULL, 0); /* ECHILD when SIGCHLD is SIG_IGN */
	if (kind == W_READ && r < 0) {
		char c; /* the grandchild's byte: it is gone before the next case */
		while (read(p[0], &c, 1) < 0 && errno == EINTR)
			;
	}
	if (kind == W_SIGTIMEDWAIT && r < 0)
		while (sigwaitinfo(&u2, NULL) < 0 && errno == EINTR)
			;
	sigprocmask(SIG_SETMASK, &old, NULL);
	close(p[0]);
	close(p[1]);
	return r;
}

static void ignored_cases(void)
{
	char name[96];
	for (int k = 0; k < W_N; k++) {
		/* SIGCHLD by default: ignored */
		set_handler(SIGCHLD, SIG_DFL, 0);
		int r = wait_with_child(k, 0);
		snprintf(name, sizeof name, "sigchld_default_%s", wname[k]);
		CHECK(r == 0, name, "%s", strerror(-r));
		/* SIGCHLD SIG_IGN (children reaped by the kernel) */
		set_handler(SIGCHLD, SIG_IGN, 0);
		r = wait_with_child(k, 0);
		snprintf(name, sizeof name, "sigchld_ign_%s", wname[k]);
		CHECK(r == 0, name, "%s", strerror(-r));
		set_handler(SIGCHLD, SIG_DFL, 0);
		/* SIGWINCH from another process, ignored by default */
		r = wait_with_child(k, SIGWINCH);
		snprintf(name, sizeof name, "sigwinch_default_%s", wname[k]);
		CHECK(r == 0, name, "%s", strerror(-r));
		/* SIGUSR1 SIG_IGN */
		set_handler(SIGUSR1, SIG_IGN, 0);
		r = wait_with_child(k, SIGUSR1);
		snprintf(name, sizeof name, "sigusr1_ign_%s", wname[k]);
		CHECK(r == 0, name, "%s", strerror(-r));
		set_handler(SIGUSR1, SIG_DFL, 0);
	}
}

static void handled_cases(void)
{
	char name[96];
	for (int k = 0; k < W_N; k++) {
		/* a handled SIGCHLD without SA_RESTART interrupts, as natively
		 * (nanosleep and sigtimedwait: EINTR whatever SA_RESTART says) */
		set_handler(SIGCHLD, on_sig, 0);
		int r = wait_with_child(k, 0);
		snprintf(name, sizeof name, "sigchld_handled_%s", wname[k]);
		CHECK(r == -EINTR, name, "%s", r ? strerror(-r) : "no EINTR");
		set_handler(SIGCHLD, SIG_DFL, 0);
	}
}

/* a child that sends this process SIGWINCH every 40 ms for 1.2 s (the
 * caller kills and reaps it) */
static pid_t winch_every_40ms(void)
{
	pid_t parent = getpid(), ch = fork();
	if (ch == 0) {
		for (int i = 0; i < 30; i++) {
			usleep(40000);
			kill(parent, SIGWINCH);
		}
		_exit(0);
	}
	return ch;
}

/* ignored signals every 40 ms for 1.2 s: a WAIT_MS epoll_wait still ends
 * (restarted with what is left of its timeout, not the whole) */
static void epoll_timeout_kept(void)
{
	pid_t ch = winch_every_40ms();
	int ep = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event ev;
	double t0 = now_ms();
	int r = epoll_wait(ep, &ev, 1, WAIT_MS);
	int e = errno;
	double took = now_ms() - t0;
	close(ep);
	kill(ch, SIGKILL);
	waitpid(ch, NULL, 0);
	CHECK(r == 0 && took < 1000, "epoll_timeout_kept", "r %d %s after %.0f ms", r, r < 0 ? strerror(e) : "", took);
}

/* an ignored and a handled signal delivered at one call's exit: EINTR, as
 * natively (both blocked, then let in by epoll_pwait's mask) */
static void ignored_and_handled(void)
{
	sigset_t both, old, none;
	sigemptyset(&both);
	sigaddset(&both, SIGWINCH);
	sigaddset(&both, SIGRTMIN + 1);
	sigemptyset(&none);
	set_handler(SIGRTMIN + 1, on_sig, 0);
	sigprocmask(SIG_BLOCK, &both, &old);
	kill(getpid(), SIGWINCH);
	kill(getpid(), SIGRTMIN + 1);
	int ep = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event ev;
	hits = 0;
	int r = epoll_pwait(ep, &ev, 1, 300, &none);
	int e = errno;
	close(ep);
	sigprocmask(SIG_SETMASK, &old, NULL);
	CHECK(r < 0 && e == EINTR && hits == 1, "ignored_and_handled_epoll_pwait", "r %d %s hits %d",
	      r, strerror(e), (int)hits);
	set_handler(SIGRTMIN + 1, SIG_DFL, 0);
}

/* Calls with a relative timeout behind a pointer. */
enum { P_SIGTIMEDWAIT, P_SEMTIMEDOP, P_IO_GETEVENTS, P_IO_PGETEVENTS, P_EPOLL_PWAIT2, P_N };
static const char *pname[P_N] = { "sigtimedwait", "semtimedop", "io_getevents", "io_pgetevents", "epoll_pwait2" };
static int p_sem = -1, p_ep = -1;
static aio_context_t p_ctx;

/* one wait of ms through a raw syscall whose timeout-pointer register is
 * checked afterwards (a syscall keeps every register but rax, rcx, r11):
 * 0 when it timed out (EAGAIN / no events), else -errno (-1000: another
 * result, -1001: the pointer register changed) */
static int ptr_wait_once(int kind, int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	sigset_t set;
	struct sembuf sb = { 0, -1, 0 };
	struct io_event ev[1];
	struct epoll_event eev;
	long nr, a0 = 0, a1 = 0, a2 = 0, a3 = 0, a4 = 0, a5 = 0, ret;
	unsigned long ptr = (unsigned long)&ts, after;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR2);
	switch (kind) {
	case P_SIGTIMEDWAIT: /* (set, info, ts, 8): ts in rdx */
		nr = SYS_rt_sigtimedwait, a0 = (long)&set, a2 = (long)ptr, a3 = 8;
		break;
	case P_SEMTIMEDOP: /* (id, sops, n, ts): ts in r10 */
		nr = SYS_semtimedop, a0 = p_sem, a1 = (long)&sb, a2 = 1, a3 = (long)ptr;
		break;
	case P_IO_GETEVENTS: /* (ctx, min, nr, events, ts): ts in r8 */
		nr = SYS_io_getevents, a0 = (long)p_ctx, a1 = 1, a2 = 1, a3 = (long)ev, a4 = (long)ptr;
		break;
	case P_IO_PGETEVENTS:
		nr = SYS_io_pgetevents, a0 = (long)p_ctx, a1 = 1, a2 = 1, a3 = (long)ev, a4 = (long)ptr, a5 = 0;
		break;
	default: /* epoll_pwait2 (epfd, events, max, ts, sigmask, size): ts in r10 */
		nr = SYS_epoll_pwait2, a0 = p_ep, a1 = (long)&eev, a2 = 1, a3 = (long)ptr;
		break;
	}
	register long r10 __asm__("r10") = a3;
	register long r8 __asm__("r8") = a4;
	register long r9 __asm__("r9") = a5;
	long rdx = a2;
	__asm__ volatile("syscall"
			 : "=a"(ret), "+d"(rdx), "+r"(r10), "+r"(r8), "+r"(r9)
			 : "a"(nr), "D"(a0), "S"(a1)
			 : "rcx", "r11", "memory");
	after = kind == P_SIGTIMEDWAIT ? (unsigned long)rdx : kind == P_IO_GETEVENTS || kind == P_IO_PGETEVENTS ?
		(unsigned long)r8 : (unsigned long)r10;
	if (after != ptr || ts.tv_sec != ms / 1000 || ts.tv_nsec != (ms % 1000) * 1000000L)
		return -1001;
	if (ret == -EAGAIN && (kind == P_SIGTIMEDWAIT || kind == P_SEMTIMEDOP))
		return 0;
	if (ret == 0 && kind != P_SIGTIMEDWAIT && kind != P_SEMTIMEDOP)
		return 0;
	return ret < 0 ? (int)ret : -1000;
}

static const char *ptr_err(int r)
{
	return r == -1001 ? "the timeout pointer's register or the timespec changed" :
	       r == -1000 ? "an unexpected result" : r ? strerror(-r) : "no EINTR";
}

/* a WAIT_MS wait while a child exits DELAY_MS in (and with sig, sends it
 * first); took: its ms */
static int ptr_wait_with_child(int kind, int sig, double *took)
{
	pid_t ch = child_doing(DELAY_MS, sig, -1, 0);
	double t0 = now_ms();
	int r = ptr_wait_once(kind, WAIT_MS);
	*took = now_ms() - t0;
	waitpid(ch, NULL, 0);
	return r;
}

static void ptr_cases(void)
{
	char name[96];
	double took;
	sigset_t u2, old;

	p_sem = semget(IPC_PRIVATE, 1, 0600 | IPC_CREAT);
	p_ep = epoll_create1(EPOLL_CLOEXEC);
	p_ctx = 0;
	if (p_sem < 0 || p_ep < 0 || syscall(SYS_io_setup, 4, &p_ctx) < 0)
		DIE("semget/epoll_create1/io_setup");
	sigemptyset(&u2);
	sigaddset(&u2, SIGUSR2);
	sigprocmask(SIG_BLOCK, &u2, &old);
	for (int k = 0; k < P_N; k++) {
		/* SIGCHLD by default, SIGWINCH, SIGUSR1 SIG_IGN: the whole WAIT_MS */
		set_handler(SIGCHLD, SIG_DFL, 0);
		int r = ptr_wait_with_child(k, 0, &took);
		snprintf(name, sizeof name, "sigchld_default_%s_times_out", pname[k]);
		CHECK(r == 0 && took >= WAIT_MS - 20, name, "%s after %.0f ms", ptr_err(r), took);
		r = ptr_wait_with_child(k, SIGWINCH, &took);
		snprintf(name, sizeof name, "sigwinch_default_%s_times_out", pname[k]);
		CHECK(r == 0 && took >= WAIT_MS - 20, name, "%s after %.0f ms", ptr_err(r), took);
		set_handler(SIGUSR1, SIG_IGN, 0);
		r = ptr_wait_with_child(k, SIGUSR1, &took);
		snprintf(name, sizeof name, "sigusr1_ign_%s_times_out", pname[k]);
		CHECK(r == 0 && took >= WAIT_MS - 20, name, "%s after %.0f ms", ptr_err(r), took);
		set_handler(SIGUSR1, SIG_DFL, 0);
		/* a handled signal still interrupts */
		set_handler(SIGCHLD, on_sig, 0);
		r = ptr_wait_with_child(k, 0, &took);
		snprintf(name, sizeof name, "sigchld_handled_%s_eintr", pname[k]);
		CHECK(r == -EINTR && took < WAIT_MS - 20, name, "%s after %.0f ms", ptr_err(r), took);
		set_handler(SIGCHLD, SIG_DFL, 0);
		/* ignored signals every 40 ms for 1.2 s: the WAIT_MS wait ends
		 * with what was left of it, not a new 300 ms at each */
		pid_t ch = winch_every_40ms();
		double t0 = now_ms();
		r = ptr_wait_once(k, WAIT_MS);
		took = now_ms() - t0;
		kill(ch, SIGKILL);
		waitpid(ch, NULL, 0);
		snprintf(name, sizeof name, "%s_timeout_kept", pname[k]);
		CHECK(r == 0 && took >= WAIT_MS - 20 && took < 1000, name, "%s after %.0f ms", ptr_err(r), took);
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	semctl(p_sem, 0, IPC_RMID);
	close(p_ep);
	syscall(SYS_io_destroy, p_ctx);
}

/* A storm of handled signals without SA_RESTART while the process opens,
 * stats and kills: none of them may fail with EINTR. */
static void storm(void)
{
	char path[PATH_MAX + 16];
	snprintf(path, sizeof path, "%s/f", t_scratch);
	if (t_write_file(path, "x", 0644) < 0)
		DIE("write %s", path);
	set_handler(SIGUSR1, on_sig, 0);
	hits = 0;
	int go[2];
	if (pipe2(go, O_CLOEXEC) < 0)
		DIE("pipe");
	pid_t parent = getpid(), ch = fork();
	if (ch == 0) {
		close(go[1]);
		char c;
		if (read(go[0], &c, 1) != 1)
			_exit(1);
		for (int i = 0; i < 3000; i++) {
			kill(parent, SIGUSR1);
			if (i % 8 == 7)
				sched_yield();
		}
		_exit(0);
	}
	close(go[0]);
	if (write(go[1], "g", 1) != 1)
		DIE("write");
	close(go[1]);
	long n = 0, eintr_open = 0, eintr_stat = 0, eintr_kill = 0, other = 0;
	int st;
	double end = now_ms() + 20000;
	for (;;) {
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0)
			close(fd);
		else if (errno == EINTR)
			eintr_open++;
		else
			other++;
		struct stat sb;
		if (stat(path, &sb) < 0) {
			if (errno == EINTR)
				eintr_stat++;
			else
				other++;
		}
		if (kill(parent, 0) < 0) {
			if (errno == EINTR)
				eintr_kill++;
			else
				other++;
		}
		n++;
		if (waitpid(ch, &st, WNOHANG) == ch || now_ms() > end)
			break;
	}
	if (now_ms() > end) {
		kill(ch, SIGKILL);
		waitpid(ch, &st, 0);
	}
	CHECK(eintr_open == 0 && eintr_stat == 0 && eintr_kill == 0 && other == 0,
	      "storm_no_eintr", "EINTR open %ld stat %ld kill %ld, other errors %ld in %ld rounds, %d signals",
	      eintr_open, eintr_stat, eintr_kill, other, n, (int)hits);
	set_handler(SIGUSR1, SIG_DFL, 0);
	unlink(path);
}

int main(int argc, char **argv)
{
	t_setup(argc, argv, "sig_restart");
	ignored_cases();
	handled_cases();
	epoll_timeout_kept();
	ptr_cases();
	ignored_and_handled();
	storm();
	return t_done();
}
