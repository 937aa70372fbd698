/*
 * race_core: an isolation probe (not differential: natively the core dump
 * happens). A process whose SIGQUIT handler a second thread keeps flipping
 * to SIG_DFL and back sends itself SIGQUIT in a loop. The sentry's tracer
 * lowers RLIMIT_CORE to 1 at the delivery stop of a core signal that will
 * kill; it must do so even when it saw a handler, because the kernel reads
 * the disposition again after the stop (red team 19). Each child is looked
 * at as a zombie (waitid WNOWAIT, then prlimit): killed by SIGQUIT's default
 * action (a core dump) with RLIMIT_CORE above 1 is the break.
 *
 *   race_core [MS]   try for MS milliseconds (default 1500)
 * Prints "deaths N escaped M"; exit 0 iff M is 0 (and some child died).
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

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

int main(int argc, char **argv)
{
	double end = now_ms() + (argc > 1 ? atof(argv[1]) : 1500);
	int deaths = 0, escaped = 0;
	while (now_ms() < end && !escaped) {
		pid_t p = fork();
		if (p == 0) {
			struct rlimit r;
			getrlimit(RLIMIT_CORE, &r);
			r.rlim_cur = r.rlim_max;
			setrlimit(RLIMIT_CORE, &r);
			struct sigaction hd = { .sa_handler = on_quit };
			sigaction(SIGQUIT, &hd, NULL);
			pthread_t th;
			pthread_create(&th, NULL, flip, NULL);
			for (int i = 0; i < 2000; i++)
				syscall(SYS_tgkill, getpid(), syscall(SYS_gettid), SIGQUIT);
			_exit(0);
		}
		if (p < 0)
			break;
		siginfo_t si = { 0 };
		if (waitid(P_PID, p, &si, WEXITED | WNOWAIT) == 0 &&
		    (si.si_code == CLD_KILLED || si.si_code == CLD_DUMPED) && si.si_status == SIGQUIT) {
			struct rlimit rl = { 0, 0 };
			deaths++;
			if (prlimit(p, RLIMIT_CORE, NULL, &rl) == 0 && rl.rlim_cur > 1) {
				escaped++;
				printf("killed by SIGQUIT's default action with RLIMIT_CORE %llu\n",
				       (unsigned long long)rl.rlim_cur);
			}
		}
		waitpid(p, NULL, 0);
	}
	printf("deaths %d escaped %d\n", deaths, escaped);
	return escaped == 0 && deaths > 0 ? 0 : 1;
}
