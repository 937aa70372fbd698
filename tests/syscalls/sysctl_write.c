/* /proc/sys values moat itself honours are writable by root, per sandbox:
 * /proc/sys/fs/lease-break-time (the sentry's lease table). A root write
 * open and access(W_OK) succeed and the value reads back; another uid gets
 * EACCES (mode 0644). Natively the value written is the host's own (no
 * change); in the guest the test also sets 1 s and times a lease break
 * (LTP fcntl33 sets 45 s), then puts the value back. */
#include "t.h"
#include <signal.h>
#include <time.h>

#define LBT "/proc/sys/fs/lease-break-time"
#define NRHP "/proc/sys/vm/nr_hugepages"
#define DROPC "/proc/sys/vm/drop_caches"

static long read_path(const char *path)
{
	char b[32] = "";
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t k = read(fd, b, sizeof b - 1);
	close(fd);
	return k > 0 ? strtol(b, NULL, 10) : -1;
}

static long read_val(void) { return read_path(LBT); }

static int write_path(const char *path, long v)
{
	char b[32];
	int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int n = snprintf(b, sizeof b, "%ld\n", v);
	ssize_t k = write(fd, b, (size_t)n);
	int e = errno;
	close(fd);
	return k == n ? 0 : -e;
}

static int write_val(long v) { return write_path(LBT, v); }

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* a read lease broken by an open for writing: the open waits the break time */
static double break_wait(const char *file)
{
	int fd = open(file, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fcntl(fd, F_SETLEASE, F_RDLCK) < 0)
		return -1;
	pid_t p = fork();
	if (p == 0) {
		double t0 = now();
		int w = open(file, O_WRONLY | O_CLOEXEC);
		double d = now() - t0;
		_exit(w < 0 ? 255 : (int)(d * 10 > 250 ? 250 : d * 10));
	}
	int st = 0;
	waitpid(p, &st, 0);
	close(fd);
	return WIFEXITED(st) && WEXITSTATUS(st) != 255 ? WEXITSTATUS(st) / 10.0 : -1;
}

int main(int argc, char **argv)
{
	t_setup(argc, argv, "sysctl_write");
	if (geteuid() != 0) {
		printf("skip: needs root\n");
		return T_SKIP;
	}
	signal(SIGIO, SIG_IGN);
	long v = read_val();
	CHECK(v >= 0, "lease_break_time_read", "read %ld: %s", v, strerror(errno));
	CHECK(access(LBT, W_OK) == 0, "lease_break_time_access_w", "%s", strerror(errno));
	int r = write_val(v);
	CHECK(r == 0 && read_val() == v, "lease_break_time_rewrite", "write %s, reads %ld", strerror(-r), read_val());

	pid_t p = fork();
	if (p == 0) {
		if (setresuid(65534, 65534, 65534) < 0)
			_exit(2);
		int fd = open(LBT, O_WRONLY | O_CLOEXEC);
		_exit(fd < 0 && errno == EACCES ? 0 : 1);
	}
	int st = 0;
	waitpid(p, &st, 0);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "lease_break_time_other_uid_eacces", "status %#x", st);

	/* requests Linux may meet in part, as LTP's hugepage set-up makes them
	 * (memfd_create03, pkey01: drop_caches, then nr_hugepages, read back);
	 * under moat they were ENOENT. Natively the count written is the
	 * host's own (no change) and drop_caches is not written. */
	long hp = read_path(NRHP);
	CHECK(hp >= 0, "nr_hugepages_read", "read %ld: %s", hp, strerror(errno));
	CHECK(access(NRHP, W_OK) == 0, "nr_hugepages_access_w", "%s", strerror(errno));
	r = write_path(NRHP, hp);
	CHECK(r == 0 && read_path(NRHP) == hp, "nr_hugepages_rewrite", "write %s, reads %ld", strerror(-r), read_path(NRHP));
	CHECK(access(DROPC, W_OK) == 0, "drop_caches_access_w", "%s", strerror(errno));
	if (t_in_guest() && t_confined()) {
		/* taken, and nothing changes: no huge page is reserved */
		r = write_path(NRHP, hp + 1);
		CHECK(r == 0 && read_path(NRHP) == hp, "nr_hugepages_more_reads_back", "write %s, reads %ld", strerror(-r), read_path(NRHP));
		r = write_path(DROPC, 3);
		CHECK(r == 0, "drop_caches_write", "%s", strerror(-r));
	} else {
		t_ok("nr_hugepages_more_reads_back");
		t_ok("drop_caches_write");
	}

	if (t_in_guest() && t_confined()) {
		/* the host's value is not ours to change: only the guest sets it */
		char file[PATH_MAX + 8];
		snprintf(file, sizeof file, "%s/f", t_scratch);
		close(open(file, O_CREAT | O_RDWR | O_CLOEXEC, 0644));
		r = write_val(1);
		double d = r == 0 && read_val() == 1 ? break_wait(file) : -1;
		CHECK(d >= 0.5 && d <= 5, "lease_break_time_honoured", "write %d, break took %.1f s", r, d);
		write_val(v);
		CHECK(read_val() == v, "lease_break_time_restored", "reads %ld", read_val());
	} else {
		t_ok("lease_break_time_honoured");
		t_ok("lease_break_time_restored");
	}
	return t_done();
}
