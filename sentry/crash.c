/* sentry/crash.c - if the sentry crashes it prints a backtrace (libunwind)
 * and takes its guests with it (kill the guest's init: the whole pid namespace
 * dies; the gofer and the guest also have PR_SET_PDEATHSIG). */
#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "sentry/sentry.h"
#include "common/log.h"

#include <dlfcn.h>

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static pid_t victim;

static void say(const char *s)
{
	ssize_t r = write(2, s, strlen(s));
	(void)r;
}

static void on_crash(int sig)
{
	char line[256];
	if (victim > 0)
		kill(victim, SIGKILL);
	snprintf(line, sizeof line, "moat: sentry crashed (signal %d); backtrace:\n", sig);
	say(line);
	unw_context_t ctx;
	unw_cursor_t cur;
	unw_getcontext(&ctx);
	unw_init_local(&cur, &ctx);
	for (int i = 0; i < 64 && unw_step(&cur) > 0; i++) {
		unw_word_t ip = 0, off = 0;
		char name[128] = "?";
		unw_get_reg(&cur, UNW_REG_IP, &ip);
		/* The confined sentry cannot open its own ELF file, so libunwind
		 * may not name the frame: fall back to the in-memory dynamic
		 * symbols (moat is linked with -rdynamic) and print the module
		 * offset for addr2line either way. */
		Dl_info di;
		int have_dl = dladdr((void *)ip, &di) != 0;
		if (unw_get_proc_name(&cur, name, sizeof name, &off) != 0 || !name[0]) {
			snprintf(name, sizeof name, "%s", have_dl && di.dli_sname ? di.dli_sname : "?");
			off = have_dl && di.dli_sname ? ip - (unw_word_t)di.dli_saddr : 0;
		}
		snprintf(line, sizeof line, "  #%d %s+0x%lx (%s+0x%lx)\n", i, name, (unsigned long)off,
			 have_dl && di.dli_fname ? di.dli_fname : "?",
			 have_dl ? (unsigned long)(ip - (unw_word_t)di.dli_fbase) : (unsigned long)ip);
		say(line);
	}
	if (moat_die_hook) /* --result: a sentry-error record (limits.c) */
		moat_die_hook(128 + sig);
	/* the gofer, the helpers and the guest ended and reaped, as after a
	 * die() (sentry/run.c run_die_cleanup: async-signal-safe calls only,
	 * each wait bounded); before red team 16 all were left zombies for
	 * the host's init (lifecycle crash_reaps_children) */
	if (moat_die_cleanup)
		moat_die_cleanup();
	/* raw calls: a sanitizer's signal()/raise()/_exit() interceptors may
	 * need files the confined sentry cannot open (ASan: /proc/self/maps) */
	struct { void *handler; unsigned long flags; void *restorer; uint64_t mask; } dfl = { 0 };
	syscall(SYS_rt_sigaction, sig, &dfl, NULL, sizeof dfl.mask);
	syscall(SYS_tgkill, getpid(), (pid_t)syscall(SYS_gettid), sig);
	syscall(SYS_exit_group, 128 + sig);
	_exit(128 + sig);
}

void crash_install(pid_t kill_on_crash)
{
	static char altstack[64 * 1024];
	stack_t ss = { .ss_sp = altstack, .ss_size = sizeof altstack };
	sigaltstack(&ss, NULL);
	victim = kill_on_crash;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_crash;
	sa.sa_flags = SA_ONSTACK | SA_RESETHAND;
	int sigs[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT };
	for (unsigned i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
		sigaction(sigs[i], &sa, NULL);
}
