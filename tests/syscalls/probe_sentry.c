/* probe_sentry.c - guest side of tests/integration/isolation_sentry.sh: tries to
 * stall, exhaust or confuse the sentry (issue 5, finding 7). Not differential.
 *
 *   execfifo DIR SECS   one process swaps an executable with a FIFO
 *                       (RENAME_EXCHANGE) while another execs it in a loop;
 *                       prints "ok execfifo N" when SECS are over
 *   fifointr DIR N      N blocking FIFO opens (no writer) interrupted by
 *                       SIGALRM: each must be EINTR; then ordinary file calls;
 *                       prints "phase1"/"phase2" and waits for DIR/go1, DIR/go2
 *                       so the host can count the gofer's threads in between
 *   loader [failexec]   calls the loader's private syscall itself (after a
 *                       failed exec with "failexec"): must fail, no fd appears
 *   failexec N          N execs that the sentry resolves but the kernel fails
 *                       (bad argv pointer); prints "phase1"/"phase2" around
 *                       them, waiting for go1/go2 in the cwd
 *   forkstorm N         N children that each stay alive until released; forks
 *                       may fail with EAGAIN; prints "ok forkstorm made=..."
 *   threadstorm N       the same with threads: a refused clone is EAGAIN and
 *                       the process lives on; prints "ok threadstorm made=..."
 *   execstat SELF N MS  N threads (the leader among them) stat()/fstat() into
 *                       a zone mapped at a fixed address while another thread
 *                       execs SELF "execcheck" after MS ms (red team 29)
 *   execstathi SELF N MS  the same with the exec'ing thread made by a clone
 *                       whose number has bits above the low 32 set (red team
 *                       55: the kernel runs clone, the tracer read the flags
 *                       only when orig_rax was exactly __NR_clone and took
 *                       the thread for a process: its exec fenced no sibling)
 *   execcheck MS        (the new image) maps the same zone first thing, fills
 *                       it with 0xa5 and watches it for MS ms: a late
 *                       copy-out of the old image's calls would land there;
 *                       prints "intact" or "corrupt N bytes"
 *   tracerexec SELF     the leader and a child process wait in
 *                       rt_sigtimedwait (SIGUSR1 ignored); a thread interrupts
 *                       the child, then the leader (each a signal stop where
 *                       the tracer restarts the wait: it writes a timeout
 *                       below the stack and sets the registers), then execs
 *                       SELF "execcheck 50 env" (tracerw: the tracer's own writes
 *                       at a ptrace stop of the leader, whose pid the exec
 *                       takes, must not reach the new image)
 *   tracerexec SELF fail  the same with an exec the kernel fails (EFAULT):
 *                       the leader runs on; prints "ok tracerexec fail ..."
 *   lockrefs NP NS      NP processes hold NS unix sockets each (socketpairs,
 *                       nothing queued); a child flocks ./lockrefs.file and
 *                       closes it (Linux: unlocked); then a non-blocking
 *                       flock of another description: prints "lockrefs
 *                       granted|EAGAIN fast|slow S" (review 55: moat's look
 *                       for references no fd shows read every socket)
 *   lockrefs NP NS ND L the same, each process with ND dups of stdin too;
 *                       "fast" under L seconds (hyg33: the fd search of the
 *                       holder scan had no budget)
 */
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <time.h>
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <time.h>
#include <unistd.h>

#define MOAT_SYS_LOADER 0x6d6f /* loader/loader_abi.h */
#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE 2
#endif

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void wait_for(const char *dir, const char *name)
{
	char p[4096];
	struct stat st;
	snprintf(p, sizeof p, "%s/%s", dir, name);
	for (int i = 0; i < 6000 && stat(p, &st) != 0; i++)
		usleep(10000);
}

static int copy(const char *from, const char *to)
{
	char buf[65536];
	int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0755);
	ssize_t n;
	if (in < 0 || out < 0)
		return -1;
	while ((n = read(in, buf, sizeof buf)) > 0)
		if (write(out, buf, n) != n)
			return -1;
	close(in);
	close(out);
	return 0;
}

static int execfifo(const char *dir, int secs)
{
	char a[4096], b[4096];
	snprintf(a, sizeof a, "%s/target", dir);
	snprintf(b, sizeof b, "%s/other", dir);
	unlink(a);
	unlink(b);
	if (copy("/bin/true", a) < 0 || mkfifo(b, 0755) < 0) {
		printf("FAIL execfifo setup: %s\n", strerror(errno));
		return 1;
	}
	pid_t swapper = fork();
	if (swapper == 0) {
		for (;;)
			syscall(SYS_renameat2, AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE);
	}
	double end = now() + secs;
	int n = 0;
	while (now() < end) {
		pid_t p = fork();
		if (p == 0) {
			char *argv[] = { "target", NULL };
			execv(a, argv);
			_exit(errno == EACCES ? 0 : 3);
		}
		int st;
		waitpid(p, &st, 0);
		n++;
	}
	kill(swapper, SIGKILL);
	waitpid(swapper, NULL, 0);
	unlink(a);
	unlink(b);
	printf("ok execfifo %s\n", n > 10 ? "many" : "few");
	return 0;
}

/* The 1 ms one-shot SIGALRM of each fifointr open. Under load the timer can
 * fire before the open has entered the kernel (the task preempted between
 * setitimer's return and the open's syscall instruction, natively as under
 * moat: handler frames at setitimer+7 and inside open() were seen), and the
 * open would then wait for good. So the handler looks at what it
 * interrupted (the frame's rip and rax):
 *  - the open ending with EINTR: the expected case;
 *  - the open being restarted (rip at a syscall instruction, rax openat's
 *    number: the -ERESTARTNOINTR rewind the sentry uses for a signal that
 *    came before a worker took the call, tracer.c sig_restart): the
 *    restarted open must end with EINTR at once by itself; a 2 s backstop
 *    is armed, and an open that took over 1.5 s is counted (slow);
 *  - anything else (user mode before the open): the timer is re-armed.
 * A user-mode signal exactly at the open's syscall instruction looks like a
 * restart (and is slow), and a machine under extreme load can make a few
 * restarted opens slow: it fails when at least two and at least half of the
 * restarted opens were slow (with the restart's EINTR broken, all are). */
static volatile sig_atomic_t alarm_rearmed, alarm_restarts;
static void on_alarm(int sig, siginfo_t *si, void *ucv)
{
	(void)sig;
	(void)si;
	int saved = errno;
#if defined(__x86_64__)
	const ucontext_t *uc = ucv;
	long rax = (long)uc->uc_mcontext.gregs[REG_RAX];
	const unsigned char *rip = (const unsigned char *)uc->uc_mcontext.gregs[REG_RIP];
	if (rax != -EINTR) {
		int restart = rax == SYS_openat && rip[0] == 0x0f && rip[1] == 0x05;
		struct itimerval it = { .it_value = { .tv_sec = restart ? 2 : 0, .tv_usec = restart ? 0 : 1000 } };
		if (restart)
			alarm_restarts++;
		else
			alarm_rearmed++;
		setitimer(ITIMER_REAL, &it, NULL);
	}
#else
	(void)ucv;
#endif
	errno = saved;
}

static int fifointr(const char *dir, int n)
{
	char f[4096], reg[4096];
	snprintf(f, sizeof f, "%s/fifo", dir);
	snprintf(reg, sizeof reg, "%s/reg", dir);
	unlink(f);
	if (mkfifo(f, 0644) < 0 || copy("/bin/true", reg) < 0) {
		printf("FAIL fifointr setup: %s\n", strerror(errno));
		return 1;
	}
	struct sigaction sa = { .sa_sigaction = on_alarm, .sa_flags = SA_SIGINFO }; /* no SA_RESTART */
	sigaction(SIGALRM, &sa, NULL);
	printf("phase1\n");
	fflush(stdout);
	wait_for(dir, "go1");
	int eintr = 0, other = 0, last_errno = 0, slow = 0;
	for (int i = 0; i < n; i++) {
		struct itimerval it = { .it_value = { .tv_usec = 1000 } };
		setitimer(ITIMER_REAL, &it, NULL);
		struct timespec t0, t1;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		int fd = open(f, O_RDONLY);
		int e = errno;
		clock_gettime(CLOCK_MONOTONIC, &t1);
		struct itimerval off = { 0 };
		setitimer(ITIMER_REAL, &off, NULL); /* a backstop not needed */
		if ((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000 > 1500)
			slow++;
		errno = e;
		if (fd < 0 && errno == EINTR)
			eintr++;
		else {
			other++;
			last_errno = fd < 0 ? errno : 0;
		}
		if (fd >= 0)
			close(fd);
	}
	/* ordinary file calls still work */
	int ok = 1, ferr = 0;
	for (int i = 0; i < 50; i++) {
		struct stat st;
		int fd = open(reg, O_RDONLY);
		if (!(fd >= 0 && fstat(fd, &st) == 0 && stat(reg, &st) == 0)) {
			ok = 0;
			ferr = errno;
		}
		if (fd >= 0)
			close(fd);
	}
	int restarts_ok = slow < 2 || slow * 2 < (int)alarm_restarts;
	printf("%s fifointr eintr=%s files=%s%s\n", eintr == n && ok && restarts_ok ? "ok" : "FAIL",
	       eintr == n ? "all" : "some", ok ? "work" : "fail", restarts_ok ? "" : " slow");
	if (eintr != n || !ok || !restarts_ok)
		printf("# eintr %d other %d (last: %s), files: %s\n", eintr, other,
		       strerror(last_errno), strerror(ferr));
	printf("# timer re-armed %d times (fired before the open), %d opens restarted, %d of them slow (> 1.5 s)\n",
	       (int)alarm_rearmed, (int)alarm_restarts, slow);
	printf("phase2\n");
	fflush(stdout);
	wait_for(dir, "go2");
	unlink(f);
	unlink(reg);
	return 0;
}

static int count_fds(void)
{
	int n = 0;
	DIR *d = opendir("/proc/self/fd");
	if (!d)
		return -1;
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

static int failed_exec(void)
{
	/* the path resolves (the sentry prepares the exec), the kernel fails */
	return syscall(SYS_execve, "/bin/true", (char **)8, NULL);
}

static int loader(int with_failexec)
{
	if (with_failexec) {
		int r = failed_exec();
		if (r == 0 || errno != EFAULT) {
			printf("FAIL loader failexec: %d %s\n", r, strerror(errno));
			return 1;
		}
	}
	int before = count_fds();
	char buf[65536];
	long r = syscall(MOAT_SYS_LOADER, 1, buf, sizeof buf);
	int e = errno;
	int after = count_fds();
	char exe[4096] = "";
	ssize_t l = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (l > 0)
		exe[l] = 0;
	if (r < 0 && after == before)
		printf("ok loader refused\n");
	else
		printf("FAIL loader: r=%ld (%s) fds %d -> %d exe %s\n", r, strerror(e), before, after, exe);
	return 0;
}

static int failexec(int n)
{
	printf("phase1\n");
	fflush(stdout);
	wait_for(".", "go1");
	int bad = 0;
	for (int i = 0; i < n; i++) {
		/* each in its own process: the pending exec dies with its task */
		pid_t p = fork();
		if (p == 0)
			_exit(failed_exec() == 0 || errno != EFAULT);
		int st;
		if (p < 0 || waitpid(p, &st, 0) != p || !WIFEXITED(st) || WEXITSTATUS(st))
			bad++;
	}
	printf("%s failexec\n", bad ? "FAIL" : "ok");
	printf("phase2\n");
	fflush(stdout);
	wait_for(".", "go2");
	return 0;
}

static int forkstorm(int n)
{
	int p[2];
	if (pipe(p) < 0)
		return 1;
	int made = 0, eagain = 0, other = 0;
	pid_t *kids = calloc(n, sizeof *kids);
	for (int i = 0; i < n; i++) {
		pid_t c = fork();
		if (c == 0) {
			char ch;
			close(p[1]);
			read(p[0], &ch, 1); /* hold until released (EOF) */
			/* a trapped call: an unregistered task would not be served */
			_exit(access("/", F_OK) == 0 ? 0 : 1);
		}
		if (c > 0)
			kids[made++] = c;
		else if (errno == EAGAIN)
			eagain++;
		else
			other++;
	}
	close(p[1]);
	int reaped = 0, bad = 0;
	for (int i = 0; i < made; i++) {
		int st;
		if (waitpid(kids[i], &st, 0) == kids[i]) {
			reaped++;
			bad += !(WIFEXITED(st) && WEXITSTATUS(st) == 0);
		}
	}
	/* anything else (a refused fork's killed child) */
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
	printf("%s forkstorm made=%d eagain=%d other=%d reaped=%d bad=%d\n",
	       made + eagain == n && !other && reaped == made && !bad ? "ok" : "FAIL", made, eagain,
	       other, reaped, bad);
	return 0;
}

static int tpipe[2];

static void *holder(void *a)
{
	char ch;
	read(tpipe[0], &ch, 1);
	/* a trapped call: an unregistered thread would not be served */
	return access("/", F_OK) == 0 ? a : (void *)1;
}

static int threadstorm(int n)
{
	if (pipe(tpipe) < 0)
		return 1;
	pthread_t *th = calloc(n, sizeof *th);
	pthread_attr_t at;
	pthread_attr_init(&at);
	pthread_attr_setstacksize(&at, 64 * 1024);
	int made = 0, eagain = 0, other = 0, bad = 0;
	for (int i = 0; i < n; i++) {
		int r = pthread_create(&th[made], &at, holder, NULL);
		if (r == 0)
			made++;
		else if (r == EAGAIN)
			eagain++;
		else
			other++;
	}
	close(tpipe[1]);
	for (int i = 0; i < made; i++) {
		void *ret;
		pthread_join(th[i], &ret);
		bad += ret != NULL;
	}
	/* the process still makes threads once the storm is over */
	pthread_t t;
	int again = pthread_create(&t, NULL, holder, NULL) == 0 && pthread_join(t, NULL) == 0;
	printf("%s threadstorm made=%d eagain=%d other=%d bad=%d again=%d\n",
	       made + eagain == n && !other && !bad && again ? "ok" : "FAIL", made, eagain, other,
	       bad, again);
	return 0;
}

/* tracerfair ATTACKERS CALLS: ATTACKERS children connect in a loop to an
 * AF_UNIX path through 40 symlinks of ~4,000-byte targets (a costly walk at
 * the sentry's ptrace thread, ~10-15 ms a stop); meanwhile this process
 * makes CALLS sendmsg round trips (each a ptrace stop) and prints
 * "ok tracerfair N calls, worst W ms". Before the tracer served its stops a
 * round at a time, two attackers kept every older process waiting forever. */
static int tracerfair(int nattack, int calls)
{
	static char tgt[4200], t2[4300];
	char name[64];
	int p = 0;
	mkdir("/tmp/tf", 0755);
	mkdir("/tmp/tf/a", 0755);
	while (p < 4000) {
		memcpy(tgt + p, "a/../", 5);
		p += 5;
	}
	tgt[p] = 0;
	for (int i = 0; i < 40; i++) {
		snprintf(name, sizeof name, "/tmp/tf/s%d", i);
		if (i < 39)
			snprintf(t2, sizeof t2, "%ss%d", tgt, i + 1);
		else
			snprintf(t2, sizeof t2, "%sx.sock", tgt);
		if (symlink(t2, name) < 0 && errno != EEXIST)
			return printf("FAIL tracerfair: symlink: %s\n", strerror(errno)), 1;
	}
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	strcpy(sa.sun_path, "/tmp/tf/s0");
	pid_t kids[8];
	int nk = 0;
	for (int k = 0; k < nattack && k < 8; k++) {
		pid_t c = fork();
		if (c == 0)
			for (;;) {
				int s = socket(AF_UNIX, SOCK_STREAM, 0);
				connect(s, (struct sockaddr *)&sa, sizeof sa);
				close(s);
			}
		if (c > 0)
			kids[nk++] = c;
	}
	usleep(300 * 1000);
	int sv[2];
	socketpair(AF_UNIX, SOCK_DGRAM, 0, sv);
	char b[8] = "x";
	struct iovec iov = { b, 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	double worst = 0;
	int done = 0;
	for (; done < calls; done++) {
		struct timespec t0, t1;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		if (sendmsg(sv[0], &mh, 0) != 1 || recv(sv[1], b, sizeof b, 0) != 1)
			break;
		clock_gettime(CLOCK_MONOTONIC, &t1);
		double d = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6;
		if (d > worst)
			worst = d;
	}
	for (int k = 0; k < nk; k++) {
		kill(kids[k], SIGKILL);
		waitpid(kids[k], NULL, 0);
	}
	printf("%s tracerfair %d calls, worst %.0f ms\n", done == calls ? "ok" : "FAIL", done, worst);
	return done == calls ? 0 : 1;
}

/* recvfromlen ROUNDS: recvfrom with a 4 KiB address buffer on an AF_UNIX
 * datagram socket bound to a path (so its exit is rewritten) while another
 * thread keeps writing 4096 into the length word: the sentry reads the
 * name back at the exit with that length, and must never read more than a
 * sockaddr_un (before: 4 KiB of guest bytes over the tracer's stack).
 * Prints "ok recvfromlen N". */
static volatile socklen_t rl_len;
static volatile int rl_stop;
static void *rl_writer(void *a)
{
	(void)a;
	while (!rl_stop)
		rl_len = 4096;
	return NULL;
}

static int recvfromlen(int rounds)
{
	int s = socket(AF_UNIX, SOCK_DGRAM, 0);
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	snprintf(sa.sun_path, sizeof sa.sun_path, "/tmp/rl.%d", (int)getpid());
	unlink(sa.sun_path);
	if (bind(s, (struct sockaddr *)&sa, sizeof sa) < 0)
		return printf("FAIL recvfromlen: bind: %s\n", strerror(errno)), 1;
	pthread_t th;
	pthread_create(&th, NULL, rl_writer, NULL);
	static char from[4096], buf[16];
	int i;
	for (i = 0; i < rounds; i++) {
		if (sendto(s, "x", 1, 0, (struct sockaddr *)&sa, sizeof sa) != 1)
			break;
		rl_len = 4096;
		if (recvfrom(s, buf, sizeof buf, 0, (struct sockaddr *)from, (socklen_t *)&rl_len) != 1)
			break;
	}
	rl_stop = 1;
	pthread_join(th, NULL);
	unlink(sa.sun_path);
	printf("%s recvfromlen %d\n", i == rounds ? "ok" : "FAIL", i);
	return i == rounds ? 0 : 1;
}

/* red team 29: a late copy-out lands in a new exec image */
#define ES_ZONE ((void *)0x3e0000000000UL)
#define ES_SIZE (64 << 10)
#define ES_SLOT 512
static char *es_zone;
static const char *es_self;
static int es_ms;

static int es_map(void)
{
	es_zone = mmap(ES_ZONE, ES_SIZE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	return es_zone == ES_ZONE ? 0 : -1;
}

static void es_loop(int i)
{
	struct stat *st = (struct stat *)(es_zone + (size_t)(i % (ES_SIZE / ES_SLOT)) * ES_SLOT);
	int fd = open(es_self, O_RDONLY);
	for (unsigned k = 0;; k++) {
		if (k & 1)
			fstat(fd, st);
		else
			stat(es_self, st);
	}
}

static void *es_thread(void *a)
{
	es_loop((int)(long)a);
	return NULL;
}

static void *es_execer(void *a)
{
	/* the others start once the leader (whose pid the exec takes: its
	 * calls' late copy-outs are the ones that find an image) is in its
	 * loop */
	usleep(2000);
	pthread_t th;
	for (long i = 1; i < (long)a; i++)
		pthread_create(&th, NULL, es_thread, (void *)i);
	usleep((useconds_t)es_ms * 1000);
	char ms[16];
	snprintf(ms, sizeof ms, "%d", 400);
	execl(es_self, es_self, "execcheck", ms, (char *)NULL);
	printf("FAIL execstat: exec: %s\n", strerror(errno));
	exit(1);
}

static int execstat(const char *self, int n, int ms)
{
	es_self = self;
	es_ms = ms;
	if (es_map() < 0)
		return printf("FAIL execstat: mmap: %s\n", strerror(errno)), 1;
	pthread_t th;
	pthread_create(&th, NULL, es_execer, (void *)(long)n);
	es_loop(0); /* the leader too: the exec'ing thread takes its pid */
	return 1;
}

extern char **environ;

/* execstathi: a thread made by raw clone (number | 1 << 32), running only
 * raw system calls (it shares the leader's TLS), that execs SELF after MS */
static char esh_stack[64 << 10] __attribute__((aligned(16)));
static char *esh_argv[4];
static char esh_ms[16];

static long raw3(long nr, long a, long b, long c)
{
	long ret;
	__asm__ volatile("syscall" : "=a"(ret) : "a"(nr), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
	return ret;
}

static void __attribute__((noreturn, used)) esh_child(void)
{
	struct timespec ts = { es_ms / 1000, (long)(es_ms % 1000) * 1000000L };
	raw3(SYS_nanosleep, (long)&ts, 0, 0);
	raw3(SYS_execve, (long)es_self, (long)esh_argv, (long)environ);
	raw3(SYS_exit_group, 3, 0, 0);
	__builtin_unreachable();
}

static int execstathi(const char *self, int n, int ms)
{
	es_self = self;
	es_ms = ms;
	if (es_map() < 0)
		return printf("FAIL execstat: mmap: %s\n", strerror(errno)), 1;
	snprintf(esh_ms, sizeof esh_ms, "%d", 400);
	esh_argv[0] = (char *)self;
	esh_argv[1] = "execcheck";
	esh_argv[2] = esh_ms;
	pthread_t th;
	for (long i = 1; i < n; i++)
		pthread_create(&th, NULL, es_thread, (void *)i);
	unsigned long fl = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD |
			   CLONE_SYSVSEM;
	long ret;
	register long r10 __asm__("r10") = 0;
	register long r8 __asm__("r8") = 0;
	__asm__ volatile("syscall\n\t"
			 "test %%rax, %%rax\n\t"
			 "jnz 1f\n\t"
			 "call esh_child\n"
			 "1:"
			 : "=a"(ret)
			 : "a"((long)SYS_clone | (1L << 32)), "D"(fl), "S"(esh_stack + sizeof esh_stack - 64),
			   "d"(0), "r"(r10), "r"(r8)
			 : "rcx", "r11", "memory");
	if (ret < 0)
		return printf("FAIL execstathi: clone: %s\n", strerror((int)-ret)), 1;
	es_loop(0);
	return 1;
}

#define TE_PADS 40 /* tracerexec's 128 KiB environment strings */

/* tracerexec's exec: its PAD= strings as they were sent */
static int envcheck(void)
{
	int n = 0;
	for (char **e = environ; *e; e++) {
		if (strncmp(*e, "PAD=", 4))
			continue;
		size_t len = strlen(*e), x = 4;
		while (x < len && (*e)[x] == 'x')
			x++;
		if (len != (128 << 10) - 1 || x != len)
			return printf("corrupt env: PAD %d: length %zu, first other byte at %zu\n", n, len, x), 1;
		n++;
	}
	if (n != TE_PADS)
		return printf("corrupt env: %d PAD strings\n", n), 1;
	return 0;
}

static int execcheck(int ms)
{
	struct timespec t0, now;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		size_t bad = 0, first = 0;
		for (size_t i = 0; i < ES_SIZE; i++)
			if ((unsigned char)es_zone[i] != 0xa5 && !bad++)
				first = i;
		if (bad)
			return printf("corrupt %zu bytes at +%zu\n", bad, first), 1;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if ((now.tv_sec - t0.tv_sec) * 1000 + (now.tv_nsec - t0.tv_nsec) / 1000000 >= ms)
			break;
		usleep(500);
	}
	return printf("intact\n"), 0;
}

/* tracerw: a ptrace stop of the leader pending while a sibling's exec runs */
static const char *te_self;
static pid_t te_leader, te_child;
static int te_fail, te_errno;

/* until SIGUSR2 (blocked) comes */
static void te_wait(void)
{
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, SIGUSR2);
	for (;;) {
		struct timespec ts = { 5, 0 };
		if (syscall(SYS_rt_sigtimedwait, &s, NULL, &ts, 8) == SIGUSR2)
			return;
	}
}

static void *te_execer(void *a)
{
	(void)a;
	usleep(100000); /* the leader and the child in their wait */
	/* the child's stop first: with MOAT_TEST_TRACER_WRITE_DELAY the tracer
	 * is held in it while the leader's stop and this exec's come (a
	 * process, not a thread: de_thread waits for the tracer to reap every
	 * other thread, the leader excepted) */
	kill(te_child, SIGUSR1);
	usleep(50000);
	syscall(SYS_tgkill, getpid(), te_leader, SIGUSR1);
	usleep(50000);
	/* 5 MiB of environment (a 32 MiB stack limit lets the kernel take up
	 * to 6): the kernel copies it before de_thread, so the tracer gets to
	 * the leader's stop (its registers read) while the exec is still on its
	 * way, as a guest can arrange at will */
	static char *env[TE_PADS + 1];
	for (int i = 0; i < TE_PADS; i++) {
		env[i] = malloc(128 << 10);
		memset(env[i], 'x', (128 << 10) - 1);
		memcpy(env[i], "PAD=", 4);
		env[i][(128 << 10) - 1] = 0;
	}
	char *argv[] = { (char *)te_self, "execcheck", "50", "env", NULL };
	/* "fail": an argv the kernel cannot read, so the exec the sentry let
	 * go fails (EFAULT) before de_thread: the leader's stop, held for it,
	 * must be handled then (it gets SIGUSR2 next and returns) */
	execve(te_self, te_fail ? (char **)8 : argv, env);
	__atomic_store_n(&te_errno, errno, __ATOMIC_RELEASE);
	if (!te_fail) {
		printf("FAIL tracerexec: exec: %s\n", strerror(errno));
		exit(1);
	}
	syscall(SYS_tgkill, getpid(), te_leader, SIGUSR2);
	return NULL;
}

static int tracerexec(const char *self, int fail)
{
	/* no address randomisation (inherited by the exec below): the new
	 * image's stack, its 5 MiB of environment strings at the top, then
	 * covers the addresses just below the top where the leader's stack
	 * pointer is now, where the tracer writes a restarted wait's timeout */
	struct rlimit rl = { 32 << 20, 32 << 20 };
	getrlimit(RLIMIT_STACK, &rl);
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < (32 << 20)) {
		rl.rlim_cur = 32 << 20;
		if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < rl.rlim_cur)
			rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_STACK, &rl);
	}
	int pers = personality(0xffffffff);
	if (pers >= 0 && !(pers & ADDR_NO_RANDOMIZE)) {
		if (personality((unsigned long)pers | ADDR_NO_RANDOMIZE) < 0)
			return printf("FAIL tracerexec: personality: %s\n", strerror(errno)), 1;
		execl(self, self, "tracerexec", self, fail ? "fail" : NULL, (char *)NULL);
		return printf("FAIL tracerexec: exec: %s\n", strerror(errno)), 1;
	}
	te_self = self;
	te_fail = fail;
	te_leader = (pid_t)syscall(SYS_gettid);
	signal(SIGUSR1, SIG_IGN);
	sigset_t u2;
	sigemptyset(&u2);
	sigaddset(&u2, SIGUSR2);
	sigprocmask(SIG_BLOCK, &u2, NULL);
	te_child = fork();
	if (te_child == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		te_wait();
	}
	pthread_t th;
	pthread_create(&th, NULL, te_execer, NULL);
	te_wait();
	pthread_join(th, NULL);
	int e = __atomic_load_n(&te_errno, __ATOMIC_ACQUIRE);
	printf("%s tracerexec fail %s\n", e == EFAULT ? "ok" : "FAIL", strerror(e));
	kill(te_child, SIGKILL);
	return e == EFAULT ? 0 : 1;
}

static int lockrefs(int np, int ns, int nd, double limit)
{
	struct rlimit rl = { (rlim_t)ns + (rlim_t)nd + 64, (rlim_t)ns + (rlim_t)nd + 64 };
	setrlimit(RLIMIT_NOFILE, &rl);
	int rdy[2], stop[2];
	if (pipe(rdy) || pipe(stop))
		return printf("FAIL lockrefs: pipe\n"), 1;
	pid_t *kids = calloc((size_t)np + 1, sizeof *kids);
	int made = 0;
	for (int i = 0; i < np; i++) {
		pid_t p = fork();
		if (p < 0)
			break;
		if (p == 0) {
			for (int j = 0; j < ns / 2; j++) {
				int sv[2];
				if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
					break;
			}
			for (int j = 0; j < nd; j++)
				if (dup(0) < 0)
					break;
			write(rdy[1], "r", 1);
			char b;
			read(stop[0], &b, 1);
			_exit(0);
		}
		kids[made++] = p;
	}
	for (int i = 0; i < made; i++) {
		char b;
		read(rdy[0], &b, 1);
	}
	int fd = open("lockrefs.file", O_RDWR | O_CREAT, 0600);
	pid_t a = fork();
	if (a == 0) {
		int g = open("lockrefs.file", O_RDWR);
		flock(g, LOCK_EX);
		close(g);
		write(rdy[1], "l", 1);
		char b;
		read(stop[0], &b, 1);
		_exit(0);
	}
	kids[made++] = a;
	char b;
	read(rdy[0], &b, 1);
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	int r = flock(fd, LOCK_EX | LOCK_NB), e = errno;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	for (int i = 0; i < made; i++)
		kill(kids[i], SIGKILL);
	while (wait(NULL) > 0)
		;
	unlink("lockrefs.file");
	free(kids);
	printf("lockrefs %s %s %.2f\n", r == 0 ? "granted" : e == EWOULDBLOCK ? "EAGAIN" : strerror(e),
	       s < limit ? "fast" : "slow", s);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "execcheck")) {
		/* first thing: the zone the old image's copy-outs would hit */
		if (es_map() < 0)
			return printf("FAIL execcheck: mmap: %s\n", strerror(errno)), 1;
		memset(es_zone, 0xa5, ES_SIZE);
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc >= 4 && !strcmp(argv[1], "execcheck") && !strcmp(argv[3], "env") && envcheck())
		return 1;
	if (argc >= 3 && !strcmp(argv[1], "execcheck"))
		return execcheck(atoi(argv[2]));
	if (argc >= 5 && !strcmp(argv[1], "execstat"))
		return execstat(argv[2], atoi(argv[3]), atoi(argv[4]));
	if (argc >= 5 && !strcmp(argv[1], "execstathi"))
		return execstathi(argv[2], atoi(argv[3]), atoi(argv[4]));
	if (argc >= 3 && !strcmp(argv[1], "tracerexec"))
		return tracerexec(argv[2], argc >= 4 && !strcmp(argv[3], "fail"));
	if (argc >= 3 && !strcmp(argv[1], "recvfromlen"))
		return recvfromlen(atoi(argv[2]));
	if (argc >= 4 && !strcmp(argv[1], "tracerfair"))
		return tracerfair(atoi(argv[2]), atoi(argv[3]));
	if (argc >= 4 && !strcmp(argv[1], "execfifo"))
		return execfifo(argv[2], atoi(argv[3]));
	if (argc >= 4 && !strcmp(argv[1], "fifointr"))
		return fifointr(argv[2], atoi(argv[3]));
	if (argc >= 2 && !strcmp(argv[1], "loader"))
		return loader(argc >= 3);
	if (argc >= 3 && !strcmp(argv[1], "failexec"))
		return failexec(atoi(argv[2]));
	if (argc >= 3 && !strcmp(argv[1], "threadstorm"))
		return threadstorm(atoi(argv[2]));
	if (argc >= 4 && !strcmp(argv[1], "lockrefs"))
		return lockrefs(atoi(argv[2]), atoi(argv[3]), argc >= 5 ? atoi(argv[4]) : 0,
				argc >= 6 ? atof(argv[5]) : 5);
	if (argc >= 3 && !strcmp(argv[1], "forkstorm"))
		return forkstorm(atoi(argv[2]));
	fprintf(stderr, "usage: see the source\n");
	return 2;
}
