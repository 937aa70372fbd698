/* sentry/hostres.c - the host's reserve of its one-per-host tables.
 *
 * Host tasks (kernel.pid_max and kernel.threads-max), the file table (fs.file-max) and Linux AIO's
 * events (fs.aio-max-nr) are each one count for the whole host that no
 * namespace, cgroup or uid scopes: past it a fork, an open, an io_setup
 * fails for everyone, the host's root and its daemons included. A sandbox
 * holds at most its share of each (an eighth: tracer.c max_tasks, limits.c
 * files_over, aio.c aio_share), but shares do not compose: eight sandboxes
 * at their share take all of it, and a dense host runs many more than
 * eight. So whoever holds the rest, while the host as a whole has less
 * than an eighth of a table free (HOST_RESERVE_DIV), a sandbox is given no
 * more of it past a small floor: a fork of a sandbox of HOST_PIDS_FLOOR
 * tasks or more is EAGAIN (tracer.c fork_event: refused as at the task
 * bound), an io_setup that would leave less than the eighth is EAGAIN (the
 * kernel's own answer at its limit), and a sandbox that holds more than
 * hostres_files_floor() files ends, reason "files" (its files are made by
 * calls that never stop: limits.c files_over). The last eighth stays the
 * host's. Memory likewise (limits.c hostmem_over: a sandbox holding more
 * than hostres_mem_floor ends, reason "memory", while MemAvailable and the
 * free swap together are under a sixteenth of MemTotal: MemAvailable
 * already leaves out what the kernel can reclaim, and a desktop's swap is
 * room too). The counts are the kernel's (/proc/loadavg's task count, fs/aio-nr,
 * fs/file-nr), read through fds opened here, before the sentry confines
 * itself, and only past the floor, so a small sandbox pays nothing.
 *
 * MOAT_TEST_HOST_LOW=1 (tests) takes every table as nearly full: it only
 * ever refuses more.
 */
#include "sentry/sentry.h"
#include "kernel/task.h"
#include "common/util.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void hostres_setup(struct sandbox *sb)
{
	const char *t = getenv("MOAT_TEST_HOST_LOW");
	sb->host_test_low = t && !strcmp(t, "1");
	sb->host_loadavg_fd = open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
	sb->host_aionr_fd = open("/proc/sys/fs/aio-nr", O_RDONLY | O_CLOEXEC);
	long max = read_long_file("/proc/sys/fs/aio-max-nr");
	sb->host_aio_max = max > 0 ? (unsigned long)max : 0;
	/* tasks: pid_max bounds the numbers, threads-max the tasks (fork's
	 * EAGAIN at nr_threads >= max_threads); the smaller is the table
	 * (systemd raises pid_max to 4,194,304; threads-max follows RAM:
	 * 192,735 on this 24 GB host, ~7,700 on a 1 GB one) */
	long tmax = read_long_file("/proc/sys/kernel/threads-max");
	sb->host_tasks_max = sb->host_pid_max;
	if (tmax > 0 && (sb->host_tasks_max <= 0 || tmax < sb->host_tasks_max))
		sb->host_tasks_max = tmax;
}

/* the first unsigned number of fd's text after skip fields separated by
 * spaces or a slash (pread at 0), or -1 */
static long long read_field(int fd, int skip)
{
	char buf[128];
	if (fd < 0)
		return -1;
	ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	char *p = buf;
	for (int i = 0; i < skip; i++) {
		p += strcspn(p, " /\t");
		if (!*p)
			return -1;
		p++;
	}
	char *e;
	long long v = strtoll(p, &e, 10);
	return e == p ? -1 : v;
}

int hostres_pids_low(struct sandbox *sb, int tasks)
{
	if (tasks < HOST_PIDS_FLOOR || sb->host_tasks_max <= 0)
		return 0;
	if (sb->host_test_low)
		return 1;
	/* "0.20 0.31 0.40 2/187 4242": the fifth field, every task of the
	 * host (nr_threads: zombies too, each holding its pid) */
	long long all = read_field(sb->host_loadavg_fd, 4);
	return all >= 0 && sb->host_tasks_max - all < sb->host_tasks_max / HOST_RESERVE_DIV;
}

int hostres_aio_low(struct sandbox *sb, unsigned long v)
{
	if (sb->host_test_low)
		return 1;
	if (!sb->host_aio_max)
		return 0;
	/* the kernel counts an io_setup's own nr_events (ioctx_alloc's max_reqs) */
	long long used = read_field(sb->host_aionr_fd, 0);
	if (used < 0)
		return 0;
	unsigned long long after = (unsigned long long)used + v;
	return after > sb->host_aio_max || sb->host_aio_max - after < sb->host_aio_max / HOST_RESERVE_DIV;
}

unsigned long long hostres_files_floor(unsigned long long file_max)
{
	unsigned long long f = file_max / 1024;
	return f > HOST_FILES_FLOOR ? f : HOST_FILES_FLOOR;
}

int hostres_files_low(struct sandbox *sb, unsigned long long file_max, unsigned long long used)
{
	if (sb->host_test_low)
		return 1;
	return used > file_max || file_max - used < file_max / HOST_RESERVE_DIV;
}

unsigned long long hostres_mem_floor(unsigned long long mem_total)
{
	unsigned long long f = mem_total / 64;
	if (f < HOST_MEM_FLOOR_MIN)
		f = HOST_MEM_FLOOR_MIN;
	return f > HOST_MEM_FLOOR_MAX ? HOST_MEM_FLOOR_MAX : f;
}

int hostres_mem_low(struct sandbox *sb, unsigned long long mem_total, unsigned long long mem_avail)
{
	if (sb->host_test_low)
		return 1;
	return mem_avail < mem_total / HOST_MEM_RESERVE_DIV;
}
