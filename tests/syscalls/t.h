/*
 * t.h - the tiny harness shared by the per-syscall test programs.
 *
 * Each program in tests/syscalls/ is a plain libc program, named after the
 * syscall family it exercises (as gVisor's test/syscalls/linux and strace's
 * tests/ do).  It:
 *   - works in a scratch directory: argv[1], else $TMPDIR, else /tmp; it makes
 *     its own subdirectory there and removes it at the end;
 *   - prints one line per case: "ok <case>" or "FAIL <case>: <why>";
 *   - exits 0 when every case passed, 1 otherwise, 77 to skip entirely.
 * The same binary is run natively and under `moat run`; the harness
 * (tests/syscalls/run.sh) compares the two outputs and exit codes.  Print
 * nothing that differs between native and guest runs (pids, paths, times) on
 * success: details belong in FAIL lines only.
 *
 * A deviation of moat from Linux that cannot be avoided is marked in place:
 *     if (t_in_guest()) { ... why ... }
 * (MOAT_GUEST=1 is set by the harness for guest runs only.)
 */
#ifndef MOAT_TESTS_SYSCALLS_T_H
#define MOAT_TESTS_SYSCALLS_T_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdarg.h>
#include <grp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#define T_SKIP 77

static int t_failures;
static char t_scratch[PATH_MAX]; /* absolute path of our private subdir */
static char t_self[PATH_MAX];    /* absolute path of this program */

static inline bool t_in_guest(void)
{
	const char *g = getenv("MOAT_GUEST");
	return g && strcmp(g, "1") == 0;
}

/* A thread body that waits until the pipe whose read end *arg is gets
 * closed at its other end: a task sharing the caller's fd table (and
 * memory) for as long as a case needs one. */
static inline void *t_wait_gate(void *arg)
{
	char ch;
	while (read(*(int *)arg, &ch, 1) < 0 && errno == EINTR)
		;
	return NULL;
}

/* A guest run that is really confined: a seccomp filter on this task. The
 * harness self-check (tests/run-all.sh selfcheck) runs the guest runs natively
 * through tests/integration/fake-moat, where a guest-only case that expects a
 * privileged call to be refused would act on the host as root (an adjtimex
 * change, a huge page reserved): such cases ask this too. */
static inline bool t_confined(void)
{
	char buf[4096];
	FILE *f = fopen("/proc/self/status", "re");
	bool yes = false;

	if (!f)
		return false;
	while (fgets(buf, sizeof buf, f))
		if (!strncmp(buf, "Seccomp:", 8)) {
			yes = strtol(buf + 8, NULL, 10) == 2;
			break;
		}
	fclose(f);
	return yes;
}

static inline void t_ok(const char *name)
{
	printf("ok %s\n", name);
	fflush(stdout);
}

__attribute__((format(printf, 2, 3)))
static inline void t_fail(const char *name, const char *fmt, ...)
{
	va_list ap;
	printf("FAIL %s: ", name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	t_failures++;
}

/* CHECK(cond, name, fmt, ...): ok when cond holds, FAIL with the message otherwise. */
#define CHECK(cond, name, ...)                                                 \
	do {                                                                   \
		if (cond)                                                      \
			t_ok(name);                                            \
		else                                                           \
			t_fail(name, __VA_ARGS__);                             \
	} while (0)

/* EXPECT_ERR(expr, ERRNO, name): expr must return -1 with errno == ERRNO. */
#define EXPECT_ERR(expr, err, name)                                            \
	do {                                                                   \
		errno = 0;                                                     \
		long t_r_ = (long)(expr);                                      \
		int t_e_ = errno;                                              \
		if (t_r_ == -1 && t_e_ == (err))                               \
			t_ok(name);                                            \
		else                                                           \
			t_fail(name, "%s = %ld errno %d (%s), want %s",        \
			       #expr, t_r_, t_e_, strerror(t_e_), #err);       \
	} while (0)

/* EXPECT_OK(expr, name): expr must not return -1; evaluates to its value. */
#define EXPECT_OK(expr, name)                                                  \
	({                                                                     \
		errno = 0;                                                     \
		long t_r_ = (long)(expr);                                      \
		if (t_r_ != -1)                                                \
			t_ok(name);                                            \
		else                                                           \
			t_fail(name, "%s failed: %s", #expr, strerror(errno)); \
		t_r_;                                                          \
	})

/* Fatal set-up error: not a test result, the program cannot go on. */
#define DIE(...)                                                               \
	do {                                                                   \
		printf("FAIL setup: ");                                        \
		printf(__VA_ARGS__);                                           \
		printf(" (%s)\n", strerror(errno));                            \
		exit(1);                                                       \
	} while (0)

static inline int t_rm_one(const char *p, const struct stat *sb, int flag,
			   struct FTW *ftw)
{
	(void)sb; (void)flag; (void)ftw;
	if (remove(p) != 0) {
		chmod(p, 0700); /* a case may have left a 000 directory */
		remove(p);
	}
	return 0;
}

static inline void t_rmrf(const char *path)
{
	nftw(path, t_rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/*
 * t_setup: record our own path, make and enter a private scratch subdir.
 * Returns nothing; dies on set-up failure.
 */
static inline void t_setup(int argc, char **argv, const char *name)
{
	const char *base = argc > 1 ? argv[1] : getenv("TMPDIR");
	if (!base || !*base)
		base = "/tmp";
	if (!realpath(argv[0], t_self))
		DIE("realpath(%s)", argv[0]);
	snprintf(t_scratch, sizeof(t_scratch), "%s/%s.%d", base, name, (int)getpid());
	t_rmrf(t_scratch);
	if (mkdir(t_scratch, 0755) != 0)
		DIE("mkdir %s", t_scratch);
	if (chdir(t_scratch) != 0)
		DIE("chdir %s", t_scratch);
	umask(022);
	setvbuf(stdout, NULL, _IOLBF, 0);
}

/* t_done: remove the scratch dir, return the exit status for main. */
static inline int t_done(void)
{
	if (chdir("/") == 0)
		t_rmrf(t_scratch);
	return t_failures ? 1 : 0;
}

/* struct sched_attr, SCHED_ATTR_SIZE_VER0 (<linux/sched/types.h> clashes
 * with glibc's <sched.h>) */
struct t_sched_attr {
	uint32_t size, policy;
	uint64_t flags;
	int32_t nice;
	uint32_t prio;
	uint64_t runtime, deadline, period;
};

/* t_need_root: true for root; otherwise prints the skip line and cleans
 * up: `if (!t_need_root()) return T_SKIP;` */
static inline bool t_need_root(void)
{
	if (geteuid() == 0)
		return true;
	printf("skip: needs root\n");
	t_done();
	return false;
}

/* Helpers. */
static inline int t_write_file(const char *path, const char *content, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	if (fd < 0)
		return -1;
	size_t n = strlen(content);
	ssize_t w = write(fd, content, n);
	close(fd);
	if (w != (ssize_t)n)
		return -1;
	return chmod(path, mode);
}

/* A case's child (its CHECK lines print there) ends: 1 when any failed. */
static inline void __attribute__((noreturn)) t_child_exit(void)
{
	fflush(stdout);
	_exit(t_failures ? 1 : 0);
}

/* Wait for such a child: one more failure here when it failed or died. */
static inline void t_child_wait(pid_t pid)
{
	int st;
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		t_failures++;
}

/* this process becomes id (uid and gid, no supplementary groups), or dies */
static inline void t_become(unsigned id)
{
	if (setgroups(0, NULL) != 0 || setgid(id) != 0 || setuid(id) != 0)
		DIE("setuid %u", id);
}

/* fn in a child (t_child_exit, t_child_wait) */
static inline void t_in_child(void (*fn)(void))
{
	fflush(stdout);
	pid_t p = fork();
	if (p < 0)
		DIE("fork");
	if (p == 0) {
		fn();
		t_child_exit();
	}
	t_child_wait(p);
}

/* fork with a pipe from the child to the parent: in the child (0 returned)
 * *fd is the write end, in the parent (the child's pid) the read end; -1 if
 * either call fails */
static inline pid_t t_fork_piped(int *fd)
{
	int p[2];
	if (pipe(p))
		return -1;
	pid_t pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return -1;
	}
	close(p[pid == 0 ? 0 : 1]);
	*fd = p[pid == 0 ? 1 : 0];
	return pid;
}

/* read fd to its end into out (NUL-terminated, at most cap - 1 bytes), close
 * it; the bytes read */
static inline size_t t_read_to_end(int fd, char *out, size_t cap)
{
	size_t n = 0;
	ssize_t r;
	while (n + 1 < cap && (r = read(fd, out + n, cap - 1 - n)) > 0)
		n += (size_t)r;
	out[n] = 0;
	close(fd);
	return n;
}

/* Read up to cap-1 bytes of path into buf, NUL-terminate; returns length or -1. */
static inline ssize_t t_read_file(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	size_t off = 0;
	while (off + 1 < cap) {
		ssize_t r = read(fd, buf + off, cap - 1 - off);
		if (r < 0) {
			int e = errno;
			close(fd);
			errno = e;
			return -1;
		}
		if (r == 0)
			break;
		off += (size_t)r;
	}
	buf[off] = 0;
	close(fd);
	return (ssize_t)off;
}

#endif
