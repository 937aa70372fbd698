/*
 * race_core: an isolation probe (not differential: natively the core dump
 * happens). No core dump ever leaves a sandbox: whatever way a guest process
 * dies of a core signal's default action, the kernel must find its real
 * RLIMIT_CORE at 1 byte (red team 19). A child that dies counts as escaped
 * when the kernel says it dumped (CLD_DUMPED); it sends the limit its
 * /proc/self/limits shows (the real one natively; under moat the virtual
 * one since procfid, so only for the message) up a pipe. The real limit
 * under moat is read from the host: mode "hold [S]" sets its limits (soft 0), prints "held" and sleeps S seconds (default 20), and
 * tests/integration/isolation_procfs.sh reads /proc/<its host pid>/limits.
 * Modes:
 *   race [MS]  a thread keeps flipping the SIGQUIT handler to SIG_DFL and back
 *              while the process sends itself SIGQUIT, for MS ms (default
 *              1500): the tracer read the disposition at the delivery stop,
 *              the kernel reads it again after
 *   seccomp    the child's own filter kills it (SECCOMP_RET_KILL_PROCESS:
 *              SIGSYS with no ptrace stop)
 *   sud        syscall user dispatch with an unreadable selector (a forced
 *              SIGSEGV with no ptrace stop)
 * Every child first sets RLIMIT_CORE to its hard limit, then (so a native
 * run dumps, with a file core_pattern too) the same again, "hold" soft 0
 * (a pipe core_pattern ignores 0: the real one must be 1 still), with the resource's
 * upper 32 bits set too (the kernel ignores them).
 * Prints "deaths N escaped M"; exit 0 iff M is 0 and some child died.
 */
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef PR_SET_SYSCALL_USER_DISPATCH
#define PR_SET_SYSCALL_USER_DISPATCH 59
#define PR_SYS_DISPATCH_ON 1
#endif

static void on_quit(int s) { (void)s; }

static void *flip(void *arg)
{
	(void)arg;
	struct sigaction dfl = { .sa_handler = SIG_DFL }, hd = { .sa_handler = on_quit };
	for (;;) {
		sigaction(SIGQUIT, &hd, NULL);
		for (volatile int i = 0; i < 200; i++)
			;
		sigaction(SIGQUIT, &dfl, NULL);
		for (volatile int i = 0; i < 200; i++)
			;
	}
	return NULL;
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* the soft RLIMIT_CORE the kernel holds for pid (a zombie), or -1 */
static long long real_core(pid_t pid)
{
	char path[64], buf[4096];
	snprintf(path, sizeof path, "/proc/%d/limits", (int)pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = 0;
	char *p = strstr(buf, "Max core file size");
	if (!p)
		return -1;
	p += strlen("Max core file size");
	while (*p == ' ')
		p++;
	return strncmp(p, "unlimited", 9) == 0 ? (long long)INT64_MAX : atoll(p);
}

static void set_limits(const char *mode)
{
	struct rlimit r;
	getrlimit(RLIMIT_CORE, &r);
	r.rlim_cur = r.rlim_max;
	setrlimit(RLIMIT_CORE, &r);
	if (!strcmp(mode, "hold"))
		r.rlim_cur = 0;
	/* the resource is an unsigned int: the kernel ignores the upper bits */
	syscall(SYS_setrlimit, (1UL << 32) | RLIMIT_CORE, &r);
	syscall(SYS_prlimit64, 0, (1UL << 32) | RLIMIT_CORE, &r, NULL);
}

static void child(const char *mode, int out)
{
	set_limits(mode);
	long long lim = real_core(getpid());
	write(out, &lim, sizeof lim);
	if (!strcmp(mode, "race")) {
		struct sigaction hd = { .sa_handler = on_quit };
		sigaction(SIGQUIT, &hd, NULL);
		pthread_t th;
		pthread_create(&th, NULL, flip, NULL);
		for (int i = 0; i < 2000; i++)
			syscall(SYS_tgkill, getpid(), syscall(SYS_gettid), SIGQUIT);
		_exit(0);
	}
	if (!strcmp(mode, "seccomp")) {
		struct sock_filter f[] = {
			BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
			BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_getppid, 0, 1),
			BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
			BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		};
		struct sock_fprog fp = { 4, f };
		prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
		syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &fp);
		syscall(SYS_getppid);
	} else if (!strcmp(mode, "sud")) {
		/* the selector is read at the next syscall outside [0, 1) */
		prctl(PR_SET_SYSCALL_USER_DISPATCH, PR_SYS_DISPATCH_ON, 0, 1, (char *)8);
		syscall(SYS_getppid);
	}
	_exit(0);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "race";
	double end = now_ms() + (argc > 2 ? atof(argv[2]) : 1500);
	int deaths = 0, escaped = 0, once = strcmp(mode, "race") != 0;
	if (!strcmp(mode, "hold")) {
		set_limits("hold");
		printf("held\n");
		fflush(stdout);
		sleep(argc > 2 ? atoi(argv[2]) : 20);
		return 0;
	}
	do {
		int pfd[2];
		if (pipe(pfd) < 0)
			break;
		pid_t p = fork();
		if (p == 0)
			child(mode, pfd[1]);
		close(pfd[1]);
		if (p < 0)
			break;
		long long lim = -1;
		if (read(pfd[0], &lim, sizeof lim) != sizeof lim)
			lim = -1;
		close(pfd[0]);
		siginfo_t si = { 0 };
		if (waitid(P_PID, p, &si, WEXITED) == 0 &&
		    (si.si_code == CLD_KILLED || si.si_code == CLD_DUMPED)) {
			deaths++;
			if (si.si_code == CLD_DUMPED) {
				escaped++;
				printf("killed by signal %d with RLIMIT_CORE %lld\n", si.si_status, lim);
			}
		}
	} while (!once && now_ms() < end && !escaped);
	printf("deaths %d escaped %d\n", deaths, escaped);
	return escaped == 0 && deaths > 0 ? 0 : 1;
}
