/* syscalls/sys_machine.c - the machine the guest sees: sysinfo(2) with the
 * sandbox's memory, uptime and task count (fs/procfs.c computes it, as it
 * does /proc/meminfo and /proc/uptime). */
#include <errno.h>
#include <string.h>
#include <sys/sysinfo.h>

#include "fs/procfs.h"
#include "kernel/task.h"
#include "syscalls/handlers.h"
#include "syscalls/sc.h"

long sys_sysinfo(struct sc_call *c)
{
	struct sysinfo si;
	int r;

	memset(&si, 0, sizeof si);
	r = procfs_sysinfo(c->task, &si);
	if (r < 0)
		return r;
	return sc_write_guest(c, c->args[0], &si, sizeof si) < 0 ? -EFAULT : 0;
}
