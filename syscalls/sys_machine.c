/* syscalls/sys_machine.c - the machine the guest sees: sysinfo(2) with the
 * sandbox's memory, uptime and task count (fs/procfs.c computes it, as it
 * does /proc/meminfo and /proc/uptime). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>
#include <string.h>
#include <sys/sysinfo.h>
#include <sys/times.h>

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

/* times(2): cpu times from the caller's /proc stat, the elapsed ticks
 * from the sandbox's boot (natively the host's jiffies: its uptime) */
long sys_times(struct sc_call *c)
{
	struct tms tms;
	long r = procfs_times(c->task, &tms);

	if (r < 0)
		return r;
	if (c->args[0] && sc_write_guest(c, c->args[0], &tms, sizeof tms) < 0)
		return -EFAULT;
	return r;
}

/* sysfs(2), the obsolete query of the file system types the kernel knows
 * (option 1: a name's index; 2: an index's name; 3: how many): /proc/
 * filesystems's list, the host kernel's as the guest's own procfs shows it
 * (the guest reads the same list there). */
static int fs_types(struct sc_call *c, char names[][32], int max)
{
	char buf[4096];
	int n = 0;

	if (c->sb->guest_procfd < 0)
		return 0;
	int fd = openat(c->sb->guest_procfd, "filesystems", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t len = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (len <= 0)
		return 0;
	buf[len] = 0;
	for (char *l = strtok(buf, "\n"); l && n < max; l = strtok(NULL, "\n")) {
		char *name = strchr(l, '\t');
		name = name ? name + 1 : l;
		snprintf(names[n++], 32, "%s", name);
	}
	return n;
}

long sys_sysfs(struct sc_call *c)
{
	char names[96][32];
	int opt = (int)c->args[0], n;

	switch (opt) {
	case 1: {
		char name[64];
		long l = sc_read_guest_str(c, c->args[1], name, sizeof name);
		if (l == -EFAULT || l == -ESRCH || l == -EAGAIN)
			return l;
		if (l < 0)
			return -EINVAL; /* longer than any type */
		n = fs_types(c, names, 96);
		for (int i = 0; i < n; i++)
			if (!strcmp(names[i], name))
				return i;
		return -EINVAL;
	}
	case 2: {
		n = fs_types(c, names, 96);
		unsigned idx = (unsigned)c->args[1];
		if (idx >= (unsigned)n)
			return -EINVAL;
		if (sc_write_guest(c, c->args[2], names[idx], strlen(names[idx]) + 1) < 0)
			return -EFAULT;
		return 0;
	}
	case 3:
		return fs_types(c, names, 96);
	default:
		return -EINVAL;
	}
}
