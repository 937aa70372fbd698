/* /proc and /sys as a machine of its own: the init at pid 1, <pid>/ns,
 * /proc/sys values, per-process files (stat, statm, fd, fdinfo, limits, task)
 * and the global ones (cpuinfo, meminfo, stat, uptime, loadavg, version,
 * filesystems), /sys/devices/system/cpu and transparent_hugepage. The values
 * differ by design between the host and a sandbox: only their structure and
 * invariants are compared (e.g. /proc/self/stat field 1 == getpid()). */
#include "t.h"

#include <sched.h>
#include <sys/mman.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/sysinfo.h>
#include <sys/times.h>
#include <time.h>
#include <sys/utsname.h>

static char buf[65536];

static int rd(const char *path)
{
	return (int)t_read_file(path, buf, sizeof buf);
}

/* "0-3,5" -> 5 */
static int count_range(const char *s)
{
	int n = 0;

	while (*s && *s != '\n') {
		char *e;
		long a = strtol(s, &e, 10), b = a;

		if (e == s)
			return -1;
		if (*e == '-')
			b = strtol(e + 1, &e, 10);
		n += (int)(b - a + 1);
		s = *e == ',' ? e + 1 : e;
	}
	return n;
}

static int count_lines(const char *text, const char *prefix)
{
	int n = 0;
	size_t l = strlen(prefix);

	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, prefix, l))
			n++;
	return n;
}

static int is_uuid(const char *s)
{
	for (int i = 0; i < 36; i++) {
		if (i == 8 || i == 13 || i == 18 || i == 23) {
			if (s[i] != '-')
				return 0;
		} else if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'))) {
			return 0;
		}
	}
	return s[36] == '\n';
}

static void check_ns(void)
{
	static const char *const names[] = { "cgroup", "ipc", "mnt", "net", "pid", "user", "uts" };
	int ok = 1;
	char why[400] = "";

	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		char p1[64], p2[64], l1[128] = "", l2[128] = "", want[64];
		unsigned long ino = 0;
		ssize_t n1, n2;

		snprintf(p1, sizeof p1, "/proc/self/ns/%s", names[i]);
		snprintf(p2, sizeof p2, "/proc/%d/ns/%s", getpid(), names[i]);
		n1 = readlink(p1, l1, sizeof l1 - 1);
		n2 = readlink(p2, l2, sizeof l2 - 1);
		snprintf(want, sizeof want, "%s:[", names[i]);
		if (n1 <= 0 || n2 != n1 || strcmp(l1, l2) || strncmp(l1, want, strlen(want)) ||
		    sscanf(l1 + strlen(want), "%lu]", &ino) != 1 || !ino || l1[n1 - 1] != ']') {
			ok = 0;
			snprintf(why, sizeof why, "%s: '%s' '%s'", names[i], l1, l2);
		}
	}
	CHECK(ok, "ns_links", "%s", why);
	/* a child shares them */
	char l1[128] = "", l2[128] = "";
	int pfd[2];
	ssize_t n = readlink("/proc/self/ns/net", l1, sizeof l1 - 1);
	if (n > 0 && pipe(pfd) == 0) {
		pid_t c = fork();
		if (c == 0) {
			ssize_t m = readlink("/proc/self/ns/net", l2, sizeof l2 - 1);
			write(pfd[1], l2, m > 0 ? (size_t)m : 0);
			_exit(0);
		}
		close(pfd[1]);
		n = read(pfd[0], l2, sizeof l2 - 1);
		l2[n > 0 ? n : 0] = 0;
		close(pfd[0]);
		waitpid(c, NULL, 0);
	}
	CHECK(l1[0] && !strcmp(l1, l2), "ns_child_same", "'%s' '%s'", l1, l2);
	struct stat st;
	CHECK(lstat("/proc/self/ns/uts", &st) == 0 && S_ISLNK(st.st_mode), "ns_lstat_link", "errno %d", errno);
}

static void check_init(void)
{
	struct stat st;
	int n = rd("/proc/1/stat");
	int pid = -1, ppid = -1;
	char state = 0, *rp = n > 0 ? strrchr(buf, ')') : NULL;

	if (n > 0)
		pid = atoi(buf);
	if (rp)
		sscanf(rp + 1, " %c %d", &state, &ppid);
	CHECK(pid == 1 && rp && buf[strlen(buf) > 2 ? 1 : 0] == ' ' && state && ppid == 0, "init_stat",
	      "'%.80s'", n > 0 ? buf : "(none)");
	n = rd("/proc/1/status");
	CHECK(n > 0 && strstr(buf, "\nPid:\t1\n") && strstr(buf, "\nPPid:\t0\n") &&
	      strstr(buf, "\nUid:\t0\t0\t0\t0\n"), "init_status", "'%.200s'", n > 0 ? buf : "(none)");
	CHECK(stat("/proc/1", &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == 0 && st.st_gid == 0,
	      "init_dir_root_owned", "errno %d uid %d", errno, (int)st.st_uid);
	n = rd("/proc/1/cmdline");
	CHECK(n > 0 && buf[n - 1] == 0, "init_cmdline", "n %d", n);
	int found = 0;
	DIR *d = opendir("/proc");
	struct dirent *de;
	while (d && (de = readdir(d)))
		if (!strcmp(de->d_name, "1"))
			found = 1;
	if (d)
		closedir(d);
	CHECK(found, "init_listed", "no 1 in /proc");
}

static void check_sysctl(void)
{
	struct utsname u;
	char b2[128];
	int n;

	uname(&u);
	n = rd("/proc/sys/kernel/tainted");
	CHECK(n > 0 && buf[0] >= '0' && buf[0] <= '9', "tainted", "'%s'", buf);
	n = rd("/proc/sys/fs/pipe-max-size");
	CHECK(n > 0 && atol(buf) >= 4096, "pipe_max_size", "'%s'", buf);
	/* the per-user pipe page limits (LTP pipe15 reads the soft one) */
	n = rd("/proc/sys/fs/pipe-user-pages-soft");
	CHECK(n > 0 && buf[0] >= '0' && buf[0] <= '9', "pipe_user_pages_soft", "'%s'", buf);
	n = rd("/proc/sys/fs/pipe-user-pages-hard");
	CHECK(n > 0 && buf[0] >= '0' && buf[0] <= '9', "pipe_user_pages_hard", "'%s'", buf);
	/* it is the limit that holds: an unprivileged process may go up to it */
	int pp[2];
	long mx = atol(buf);
	CHECK(pipe(pp) == 0 && fcntl(pp[1], F_SETPIPE_SZ, (int)mx) >= mx, "pipe_max_size_holds", "%ld: errno %d", mx, errno);
	close(pp[0]);
	close(pp[1]);
	n = rd("/proc/sys/kernel/pid_max");
	CHECK(n > 0 && atol(buf) > 300, "pid_max", "'%s'", buf);
	n = rd("/proc/sys/kernel/cap_last_cap");
	CHECK(n > 0 && atoi(buf) >= 30 && atoi(buf) < 64, "cap_last_cap", "'%s'", buf);
	n = rd("/proc/sys/kernel/osrelease");
	CHECK(n > 0 && buf[n - 1] == '\n' && !strncmp(buf, u.release, strlen(u.release)) &&
	      (size_t)n == strlen(u.release) + 1, "osrelease_is_uname", "'%s' vs '%s'", buf, u.release);
	n = rd("/proc/sys/kernel/hostname");
	CHECK(n > 0 && (size_t)n == strlen(u.nodename) + 1 && !strncmp(buf, u.nodename, strlen(u.nodename)),
	      "hostname_is_uname", "'%s' vs '%s'", buf, u.nodename);
	n = rd("/proc/sys/kernel/ostype");
	CHECK(n > 0 && !strcmp(buf, "Linux\n"), "ostype", "'%s'", buf);
	n = rd("/proc/sys/kernel/random/boot_id");
	snprintf(b2, sizeof b2, "%.100s", buf);
	CHECK(n == 37 && is_uuid(buf) && rd("/proc/sys/kernel/random/boot_id") == 37 && !strcmp(b2, buf),
	      "boot_id_stable", "'%s' '%s'", b2, buf);
	n = rd("/proc/sys/kernel/random/uuid");
	snprintf(b2, sizeof b2, "%.100s", buf);
	CHECK(n == 37 && is_uuid(buf) && rd("/proc/sys/kernel/random/uuid") == 37 && strcmp(b2, buf),
	      "uuid_fresh", "'%s' '%s'", b2, buf);
	struct stat st;
	CHECK(stat("/proc/sys/kernel", &st) == 0 && S_ISDIR(st.st_mode), "sys_kernel_dir", "errno %d", errno);
}

static void check_self(void)
{
	char path[64];
	int n = rd("/proc/self/stat");
	char *rp = n > 0 ? strrchr(buf, ')') : NULL;
	int pid = atoi(buf), ppid = -1, pgrp = -1, sid = -1;
	char state = 0;

	if (rp)
		sscanf(rp + 1, " %c %d %d %d", &state, &ppid, &pgrp, &sid);
	CHECK(pid == getpid() && ppid == getppid() && pgrp == getpgrp() && sid == getsid(0) && state == 'R' &&
	      !strncmp(strchr(buf, '('), "(proc_machine)", 14),
	      "self_stat_fields", "'%.100s' pid %d ppid %d", buf, getpid(), getppid());
	unsigned long v[7];
	n = rd("/proc/self/statm");
	CHECK(n > 0 && sscanf(buf, "%lu %lu %lu %lu %lu %lu %lu", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6]) == 7 &&
	      v[0] >= v[1] && v[1] > 0, "statm", "'%s'", buf);

	/* fd and fdinfo */
	int fd = open("/proc/self/stat", O_RDONLY);
	char name[16];
	int listed = 0;
	snprintf(name, sizeof name, "%d", fd);
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	while (d && (de = readdir(d)))
		if (!strcmp(de->d_name, name))
			listed = 1;
	if (d)
		closedir(d);
	CHECK(fd >= 0 && listed, "fd_listed", "fd %d", fd);
	lseek(fd, 5, SEEK_SET);
	snprintf(path, sizeof path, "/proc/self/fdinfo/%d", fd);
	n = rd(path);
	CHECK(n > 0 && strstr(buf, "pos:\t5\n") && strstr(buf, "flags:\t"), "fdinfo_pos", "'%.100s'", buf);
	listed = 0;
	d = opendir("/proc/self/fdinfo");
	while (d && (de = readdir(d)))
		if (!strcmp(de->d_name, name))
			listed = 1;
	if (d)
		closedir(d);
	CHECK(listed, "fdinfo_listed", "fd %d", fd);
	close(fd);

	/* limits */
	struct rlimit rl;
	getrlimit(RLIMIT_NOFILE, &rl);
	n = rd("/proc/self/limits");
	char *l = n > 0 ? strstr(buf, "Max open files") : NULL;
	CHECK(l && strtoul(l + strlen("Max open files"), NULL, 10) == rl.rlim_cur, "limits_nofile", "'%.60s'",
	      l ? l : "(none)");

	/* task */
	snprintf(name, sizeof name, "%d", (int)syscall(SYS_gettid));
	listed = 0;
	d = opendir("/proc/self/task");
	while (d && (de = readdir(d)))
		if (!strcmp(de->d_name, name))
			listed = 1;
	if (d)
		closedir(d);
	CHECK(listed, "task_listed", "tid %s", name);
	n = rd("/proc/self/cgroup");
	CHECK(n > 0 && (!strncmp(buf, "0::", 3) || strstr(buf, "\n0::")), "cgroup_v2_line", "'%.100s'", buf);
}

static void check_global(void)
{
	cpu_set_t set;
	/* The views of the machine agree with one another and hold at least the
	 * CPUs this process may run on: natively a runner pinned to fewer CPUs
	 * than are online (CI's machine was, stop 34) still sees them all, and
	 * moat shows the sandbox's CPUs (its affinity, or --cpus). */
	int naff = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : -1;
	int n = rd("/sys/devices/system/cpu/online");
	int ncpu = n > 0 ? count_range(buf) : -1;

	CHECK(n > 0 && ncpu >= naff && naff > 0, "sys_cpu_online", "'%s' vs %d", buf, naff);
	n = rd("/sys/devices/system/cpu/possible");
	CHECK(n > 0 && count_range(buf) >= ncpu, "sys_cpu_possible", "'%s' vs %d", buf, ncpu);
	CHECK(sysconf(_SC_NPROCESSORS_ONLN) == ncpu, "nprocessors_onln", "%ld vs %d",
	      sysconf(_SC_NPROCESSORS_ONLN), ncpu);
	n = rd("/proc/cpuinfo");
	CHECK(n > 0 && count_lines(buf, "processor") == ncpu, "cpuinfo_processors", "%d vs %d",
	      count_lines(buf, "processor"), ncpu);
	n = rd("/proc/stat");
	CHECK(n > 0 && !strncmp(buf, "cpu ", 4) && count_lines(buf, "cpu") == ncpu + 1 && strstr(buf, "\nbtime "),
	      "stat_cpus", "%d cpu lines vs %d", count_lines(buf, "cpu"), ncpu);
	unsigned long long tot = 0, fr = 0, av = 0;
	n = rd("/proc/meminfo");
	char *p;
	if (n > 0 && (p = strstr(buf, "MemTotal:")))
		tot = strtoull(p + 9, NULL, 10);
	if (n > 0 && (p = strstr(buf, "MemFree:")))
		fr = strtoull(p + 8, NULL, 10);
	if (n > 0 && (p = strstr(buf, "MemAvailable:")))
		av = strtoull(p + 13, NULL, 10);
	CHECK(tot > 0 && fr <= tot && av <= tot && strstr(buf, " kB\n"), "meminfo", "%llu %llu %llu", tot, fr, av);
	struct sysinfo si;
	CHECK(sysinfo(&si) == 0 && (unsigned long long)si.totalram * si.mem_unit / 1024 == tot,
	      "sysinfo_totalram_is_meminfo", "%lu * %u vs %llu kB", si.totalram, si.mem_unit, tot);
	double up = 0, idle = -1;
	n = rd("/proc/uptime");
	CHECK(n > 0 && sscanf(buf, "%lf %lf", &up, &idle) == 2 && up > 0 && idle >= 0, "uptime", "'%s'", buf);
	/* a process started after boot: its starttime (ticks since boot) is
	 * within uptime (ps computes ELAPSED from the two) */
	char sbuf[1024];
	unsigned long long start = 0;
	n = (int)t_read_file("/proc/self/stat", sbuf, sizeof sbuf);
	char *q = n > 0 ? strrchr(sbuf, ')') : NULL;
	for (int f = 2; q && *q; q++)
		if (*q == ' ' && ++f == 22) {
			start = strtoull(q + 1, NULL, 10);
			break;
		}
	CHECK(q && (double)start / (double)sysconf(_SC_CLK_TCK) <= up + 1.0, "starttime_within_uptime",
	      "start %llu ticks, uptime %.2f", start, up);
	CHECK(sysinfo(&si) == 0 && si.uptime >= (long)up - 1 && si.uptime <= (long)up + 2, "sysinfo_uptime",
	      "%ld vs %.2f", si.uptime, up);
	/* times(2): the process's cpu times are its /proc stat's (fields
	 * 14-17), and the elapsed ticks go at the boot clock's pace */
	struct tms tm;
	struct timespec t0, t1, nap = { 0, 60000000 };
	clock_gettime(CLOCK_BOOTTIME, &t0);
	clock_t e0 = times(&tm);
	n = (int)t_read_file("/proc/self/stat", sbuf, sizeof sbuf);
	long long ut = -1, stt = -1;
	q = n > 0 ? strrchr(sbuf, ')') : NULL;
	for (int f = 2; q && *q; q++)
		if (*q == ' ' && ++f == 14) {
			sscanf(q + 1, "%lld %lld", &ut, &stt);
			break;
		}
	CHECK(e0 != (clock_t)-1 && tm.tms_utime >= 0 && tm.tms_stime >= 0 && tm.tms_cutime >= 0 &&
		      tm.tms_cstime >= 0 && tm.tms_utime + tm.tms_stime <= ut + stt &&
		      tm.tms_utime + tm.tms_stime + 2 >= ut + stt,
	      "times_cpu_is_stat", "%ld %ld %ld %ld, stat %lld %lld", (long)tm.tms_utime, (long)tm.tms_stime,
	      (long)tm.tms_cutime, (long)tm.tms_cstime, ut, stt);
	nanosleep(&nap, NULL);
	clock_t e1 = times(NULL);
	clock_gettime(CLOCK_BOOTTIME, &t1);
	double el = (double)(e1 - e0) / (double)sysconf(_SC_CLK_TCK),
	       bel = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	CHECK(e1 != (clock_t)-1 && el >= 0.04 && el <= bel + 0.02, "times_elapsed", "%.3f s, boot clock %.3f s", el,
	      bel);
	double a, b, c;
	int r1, r2, last;
	n = rd("/proc/loadavg");
	CHECK(n > 0 && sscanf(buf, "%lf %lf %lf %d/%d %d", &a, &b, &c, &r1, &r2, &last) == 6, "loadavg", "'%s'", buf);
	struct utsname u;
	uname(&u);
	n = rd("/proc/version");
	CHECK(n > 0 && !strncmp(buf, "Linux version ", 14) && !strncmp(buf + 14, u.release, strlen(u.release)),
	      "version_is_uname", "'%.80s'", buf);
	n = rd("/proc/filesystems");
	CHECK(n > 0 && strstr(buf, "\tproc\n"), "filesystems", "'%.80s'", buf);
	n = rd("/sys/kernel/mm/transparent_hugepage/enabled");
	CHECK(n > 0 && strchr(buf, '[') && strstr(buf, "never"), "thp_enabled", "'%s'", buf);
	n = rd("/sys/kernel/mm/transparent_hugepage/defrag");
	CHECK(n > 0 && strchr(buf, '['), "thp_defrag", "'%s'", buf);
	/* the IPC limits of the guest's own IPC namespace (the defaults) */
	n = rd("/proc/sys/kernel/sem");
	{
		long s1, s2, s3, s4;
		CHECK(n > 0 && sscanf(buf, "%ld %ld %ld %ld", &s1, &s2, &s3, &s4) == 4 && s1 > 0 && s4 > 0, "ipc_sem",
		      "'%s'", buf);
	}
	n = rd("/proc/sys/kernel/msgmni");
	CHECK(n > 0 && atol(buf) > 0, "ipc_msgmni", "'%s'", buf);
	n = rd("/proc/sys/kernel/shmmni");
	CHECK(n > 0 && atol(buf) > 0, "ipc_shmmni", "'%s'", buf);
	/* KSM: where /sys/kernel/mm/ksm is (test suites probe the directory,
	 * as /proc/config.gz's CONFIG_KSM), its run file reads 0-2 and
	 * MADV_MERGEABLE works; where it is not (moat: the host's KSM merges
	 * pages across sandboxes), MADV_MERGEABLE is EINVAL */
	{
		void *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		int have = access("/sys/kernel/mm/ksm", F_OK) == 0;
		int r = m == MAP_FAILED ? -2 : madvise(m, 4096, MADV_MERGEABLE);
		int e = errno;

		n = have ? rd("/sys/kernel/mm/ksm/run") : 1;
		CHECK(n > 0 && (!have || (buf[0] >= '0' && buf[0] <= '2')), "ksm_run", "'%s'", buf);
		CHECK(have ? r == 0 : (r == -1 && e == EINVAL), "ksm_madvise_agrees",
		      "dir %d madvise %d errno %d", have, r, e);
		if (m != MAP_FAILED)
			munmap(m, 4096);
	}
	struct stat st;
	CHECK(stat("/sys/fs/cgroup", &st) == 0 && S_ISDIR(st.st_mode), "sys_fs_cgroup_dir", "errno %d", errno);
}

static void check_pidfd(void)
{
	/* Python's test_signal: a /proc/<pid> directory fd is a pidfd for
	 * pidfd_send_signal */
	char path[64];
	snprintf(path, sizeof path, "/proc/%d", getpid());
	int fd = open(path, O_DIRECTORY | O_RDONLY | O_CLOEXEC);
	long r = fd >= 0 ? syscall(SYS_pidfd_send_signal, fd, 0, NULL, 0) : -1;
	CHECK(fd >= 0 && r == 0, "proc_dir_pidfd_signal0", "fd %d r %ld errno %d", fd, r, errno);
	if (fd >= 0)
		close(fd);
	fd = open("/proc", O_DIRECTORY | O_RDONLY | O_CLOEXEC);
	r = fd >= 0 ? syscall(SYS_pidfd_send_signal, fd, 0, NULL, 0) : 0;
	CHECK(fd >= 0 && r == -1 && errno == EBADF, "proc_root_not_pidfd", "r %ld errno %d", r, errno);
	if (fd >= 0)
		close(fd);
}

int main(int argc, char **argv)
{
	t_setup(argc, argv, "proc_machine");
	check_init();
	check_ns();
	check_sysctl();
	check_self();
	check_global();
	check_pidfd();
	return t_done();
}
