/* platform/ptrace.c - the ptrace channel (the sentry's main thread is the
 * tracer of every guest task). */
#include "platform/platform.h"

#include <errno.h>
#include <sys/ptrace.h>

unsigned long ptrace_options(void)
{
	/* TRACESYSGOOD: the parent's fork/clone exit stop (SIGTRAP|0x80), where
	 * the return value is the child's id in the guest's pid namespace */
	return PTRACE_O_TRACESECCOMP | PTRACE_O_TRACECLONE | PTRACE_O_TRACEFORK |
	       PTRACE_O_TRACEVFORK | PTRACE_O_TRACEEXEC | PTRACE_O_EXITKILL |
	       PTRACE_O_TRACESYSGOOD;
}

int ptrace_seize(pid_t pid)
{
	return ptrace(PTRACE_SEIZE, pid, 0, ptrace_options()) < 0 ? -errno : 0;
}
