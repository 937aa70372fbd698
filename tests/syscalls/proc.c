/* /proc: self, [pid]/{exe,cwd,fd,cmdline,status,stat}, cpuinfo, meminfo, mounts. */
#include <sys/wait.h>

#include "t.h"
#include <sys/ioctl.h>

static char *field(char *buf, const char *key)
{
	char *p = strstr(buf, key);
	return p ? p + strlen(key) : NULL;
}

/* ioctl PROCMAP_QUERY (Linux 6.11) on /proc/self/maps: the mapping that
 * holds a stack address (ENOTTY on an older kernel, natively too) */
struct pmq {
	uint64_t size, query_flags, query_addr, vma_start, vma_end, vma_flags, vma_page_size,
		vma_offset, inode;
	uint32_t dev_major, dev_minor, vma_name_size, build_id_size;
	uint64_t vma_name_addr, build_id_addr;
};

static void procmap_query(void)
{
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	struct pmq q = { .size = sizeof q };
	uint64_t here = (uint64_t)(uintptr_t)&q;
	q.query_addr = here;
	errno = 0;
	int r = ioctl(fd, 0xc0686611u, &q);
	CHECK((r == 0 && q.vma_start <= here && here < q.vma_end && (q.vma_flags & 3) == 3) ||
		      (r < 0 && errno == ENOTTY),
	      "procmap_query", "r %d (%s) %llx-%llx flags %llx", r, strerror(errno),
	      (unsigned long long)q.vma_start, (unsigned long long)q.vma_end,
	      (unsigned long long)q.vma_flags);
	close(fd);
}

int main(int argc, char **argv)
{
	t_setup(argc, argv, "proc");
	static char buf[65536];
	char path[64], link[PATH_MAX];
	ssize_t n;

	n = readlink("/proc/self", link, sizeof(link) - 1);
	link[n > 0 ? n : 0] = 0;
	CHECK(n > 0 && atoi(link) == getpid(), "self_link_is_pid", "'%s' pid %d", link, getpid());
	n = readlink("/proc/self/exe", link, sizeof(link) - 1);
	link[n > 0 ? n : 0] = 0;
	CHECK(n > 0 && !strcmp(link, t_self), "exe", "'%s' want '%s'", link, t_self);
	n = readlink("/proc/self/cwd", link, sizeof(link) - 1);
	link[n > 0 ? n : 0] = 0;
	CHECK(n > 0 && !strcmp(link, t_scratch), "cwd", "'%s'", link);
	snprintf(path, sizeof(path), "/proc/%d/exe", getpid());
	n = readlink(path, link, sizeof(link) - 1);
	link[n > 0 ? n : 0] = 0;
	CHECK(n > 0 && !strcmp(link, t_self), "pid_exe", "'%s'", link);

	/* cmdline: argv joined by NULs. */
	n = t_read_file("/proc/self/cmdline", buf, sizeof(buf));
	size_t want = 0;
	for (int i = 0; i < argc; i++)
		want += strlen(argv[i]) + 1;
	CHECK(n == (ssize_t)want && !strcmp(buf, argv[0]) && (argc < 2 || !strcmp(buf + strlen(argv[0]) + 1, argv[1])),
	      "cmdline", "n %zd want %zu", n, want);

	/* status. */
	n = t_read_file("/proc/self/status", buf, sizeof(buf));
	char *name = field(buf, "Name:\t"), *pid = field(buf, "\nPid:\t"), *ppid = field(buf, "\nPPid:\t");
	CHECK(n > 0 && name && !strncmp(name, "proc\n", 5), "status_name", "%.20s", name ? name : "(none)");
	CHECK(pid && atoi(pid) == getpid(), "status_pid", "%d", pid ? atoi(pid) : -1);
	CHECK(ppid && atoi(ppid) == getppid(), "status_ppid", "%d vs %d", ppid ? atoi(ppid) : -1, getppid());
	CHECK(field(buf, "\nUid:\t") && field(buf, "\nState:\t") && field(buf, "\nThreads:\t"),
	      "status_fields", "missing Uid/State/Threads");

	/* stat: "pid (comm) state ppid ...". */
	n = t_read_file("/proc/self/stat", buf, sizeof(buf));
	int spid = -1, sppid = -1;
	char comm[64] = "", state = 0;
	CHECK(n > 0 && sscanf(buf, "%d (%63[^)]) %c %d", &spid, comm, &state, &sppid) == 4 && spid == getpid() &&
		      !strcmp(comm, "proc") && sppid == getppid(),
	      "stat", "'%.80s'", buf);
	snprintf(path, sizeof(path), "/proc/%d/stat", getpid());
	CHECK(t_read_file(path, buf, sizeof(buf)) > 0 && atoi(buf) == getpid(), "pid_stat", "%s", strerror(errno));

	/* fd: lists open descriptors; links name the files. */
	t_write_file("f", "x", 0644);
	int fd = open("f", O_RDONLY);
	DIR *d = opendir("/proc/self/fd");
	int saw0 = 0, sawfd = 0;
	struct dirent *e;
	while (d && (e = readdir(d))) {
		saw0 |= !strcmp(e->d_name, "0");
		sawfd |= atoi(e->d_name) == fd && e->d_name[0] != '.';
	}
	if (d)
		closedir(d);
	CHECK(saw0 && sawfd, "fd_dir", "saw0 %d sawfd %d", saw0, sawfd);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, link, sizeof(link) - 1);
	link[n > 0 ? n : 0] = 0;
	char wantp[PATH_MAX + 8];
	snprintf(wantp, sizeof(wantp), "%s/f", t_scratch);
	CHECK(n > 0 && !strcmp(link, wantp), "fd_link", "'%s'", link);
	close(fd);
	int p[2];
	pipe(p);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", p[0]);
	n = readlink(path, link, sizeof(link) - 1);
	link[n > 0 ? n : 0] = 0;
	CHECK(n > 0 && !strncmp(link, "pipe:[", 6), "fd_link_pipe", "'%s'", link);
	close(p[0]);
	close(p[1]);

	/* A child is visible as /proc/<pid>; after it is reaped, it is gone. */
	pid_t c = fork();
	if (c == 0) {
		pause();
		_exit(0);
	}
	snprintf(path, sizeof(path), "/proc/%d/stat", c);
	usleep(20000);
	n = t_read_file(path, buf, sizeof(buf));
	CHECK(n > 0 && atoi(buf) == c, "child_visible", "%s", strerror(errno));
	snprintf(path, sizeof(path), "/proc/%d/status", c);
	n = t_read_file(path, buf, sizeof(buf));
	ppid = n > 0 ? field(buf, "\nPPid:\t") : NULL;
	CHECK(ppid && atoi(ppid) == getpid(), "child_ppid", "%s", ppid ? ppid : "(none)");
	kill(c, SIGKILL);
	waitpid(c, NULL, 0);
	snprintf(path, sizeof(path), "/proc/%d", c);
	struct stat st;
	EXPECT_ERR(stat(path, &st), ENOENT, "reaped_child_gone");

	/* /proc listing contains self and our pid. */
	d = opendir("/proc");
	int saw_self = 0, saw_pid = 0;
	while (d && (e = readdir(d))) {
		saw_self |= !strcmp(e->d_name, "self");
		saw_pid |= atoi(e->d_name) == getpid();
	}
	if (d)
		closedir(d);
	CHECK(saw_self && saw_pid, "proc_listing", "self %d pid %d", saw_self, saw_pid);

	/* System files. */
	n = t_read_file("/proc/cpuinfo", buf, sizeof(buf));
	CHECK(n > 0 && strstr(buf, "processor\t:"), "cpuinfo", "%s", strerror(errno));
	n = t_read_file("/proc/meminfo", buf, sizeof(buf));
	CHECK(n > 0 && !strncmp(buf, "MemTotal:", 9) && strstr(buf, "\nMemFree:"), "meminfo", "%.40s", buf);
	n = t_read_file("/proc/self/mounts", buf, sizeof(buf));
	CHECK(n > 0 && strstr(buf, " / "), "self_mounts", "%.80s", buf);
	n = t_read_file("/proc/mounts", buf, sizeof(buf));
	CHECK(n > 0 && strstr(buf, " / ") && strstr(buf, " /proc proc "), "mounts", "%.80s", buf);
	EXPECT_ERR(open("/proc/self/nonexistent", O_RDONLY), ENOENT, "enoent");
	EXPECT_ERR(open("/proc/999999999/stat", O_RDONLY), ENOENT, "no_such_pid");
	CHECK(stat("/proc/self/status", &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0777) == 0444,
	      "status_mode_0444", "mode %o", st.st_mode);
		/* memory views programs and test suites read (mlock05, mmap12) */
	n = t_read_file("/proc/self/smaps", buf, sizeof buf);
	CHECK(n > 0 && strstr(buf, "Rss:") && strstr(buf, "[stack]"), "smaps", "%zd", n);
	n = t_read_file("/proc/self/smaps_rollup", buf, sizeof buf);
	CHECK(n > 0 && strstr(buf, "Pss:"), "smaps_rollup", "%zd", n);
		/* pagemap is refused (hyg35): its bit 56 tells whether any
		 * other process of the host maps a file page */
	{
		int pfd = open("/proc/self/pagemap", O_RDONLY), pe = errno;
		CHECK(t_in_guest() && t_confined() ? pfd < 0 && pe == EACCES : pfd >= 0, "pagemap_refused", "fd %d (%s)",
		      pfd, strerror(pe));
		if (pfd >= 0)
			close(pfd);
	}
	n = t_read_file("/proc/self/personality", buf, sizeof buf);
	CHECK(n == 9 && !strcmp(buf, "00000000\n"), "personality", "%zd [%s]", n, buf);
		/* a zombie is listed, state Z, until its parent reaps it */
	{
		pid_t z = fork();
		if (z == 0)
			_exit(3);
		char zp[64], zs[512] = "";
		int zstate = 0;
		snprintf(zp, sizeof zp, "/proc/%d/stat", (int)z);
		for (int i = 0; i < 200 && zstate != 'Z'; i++) {
			if (t_read_file(zp, zs, sizeof zs) > 0 && strrchr(zs, ')'))
				zstate = strrchr(zs, ')')[2];
			if (zstate != 'Z')
				usleep(10000);
		}
		CHECK(zstate == 'Z', "zombie_state_z", "[%s]", zs);
		snprintf(zp, sizeof zp, "/proc/%d/status", (int)z);
		n = t_read_file(zp, buf, sizeof buf);
		CHECK(n > 0 && strstr(buf, "State:\tZ"), "zombie_status", "%zd", n);
		int zst;
		waitpid(z, &zst, 0);
		snprintf(zp, sizeof zp, "/proc/%d", (int)z);
		CHECK(access(zp, F_OK) < 0 && errno == ENOENT, "reaped_gone", "%s", strerror(errno));
	}
	procmap_query();
	return t_done();
}
