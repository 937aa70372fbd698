/* probe_vmexec: a ptrace-mode access check made at one time and acted on
 * later, while the target execs a program the caller may run but not read
 * (root's 0711 copy of this program: not dumpable). Isolation probe
 * (tests/integration/isolation_identity.sh), run as root inside with
 * MOAT_TEST_PTRACE_CHECK_DELAY (the sentry sleeps between its check and
 * its access):
 *
 *   probe_vmexec vm one|mixed    process_vm_readv of a child that execs the
 *                                exec-only copy just after the call began;
 *                                "one": every process drops to uid 1000 (a
 *                                one-identity sandbox), "mixed": a root
 *                                process stays. Prints what the call read
 *                                (OLD-IMAGE before the exec, the SECRET of
 *                                the new image) or its error, then the same
 *                                read made after the exec.
 *   probe_vmexec proc FILE       open /proc/<child>/FILE while the child is
 *                                this program, the child execs the copy, then
 *                                read: what the read shows of the new image
 *                                (SECRET: its maps name /vmexec-secret, its
 *                                io's wchar is past 16 MiB) or its error.
 *   probe_vmexec procrace FILE   the child execs the copy just after the
 *                                open began (the sentry's check; with the
 *                                delay its open comes after the exec): what
 *                                the open gave shows of the new image.
 *   probe_vmexec robust          get_robust_list of the child that execs
 *                                just after the call began: old-image (the
 *                                head it set), SECRET (the new image's) or
 *                                the error.
 *   probe_vmexec kcmp            kcmp(KCMP_FILE) of an fd only the new image
 *                                has, the child execing just after the call
 *                                began: old-image (EBADF), SECRET (0) or the
 *                                error.
 *   probe_vmexec getfd           pidfd_getfd of that fd, the same way:
 *                                old-image (EBADF), SECRET (an fd) or the
 *                                error.
 *   probe_vmexec marker          (the exec-only image) maps MARK_ADDR with the
 *                                secret, names a mapping /vmexec-secret
 *                                (a memfd), writes 17 MiB to /dev/null,
 *                                sleeps.
 */

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define MARK_ADDR 0x3e7000000000UL
#define COPY "/tmp/vmexec"

static void map_text(const char *text)
{
	void *p = mmap((void *)MARK_ADDR, 4096, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (p == MAP_FAILED) {
		perror("mmap");
		_exit(3);
	}
	strcpy(p, text);
}

static void drop(void)
{
	if (setresgid(1000, 1000, 1000) || setresuid(1000, 1000, 1000)) {
		perror("drop");
		exit(2);
	}
}

static void make_copy(void)
{
	char buf[65536];
	int in = open("/proc/self/exe", O_RDONLY), out = open(COPY, O_WRONLY | O_CREAT | O_TRUNC, 0700);
	ssize_t n;
	if (in < 0 || out < 0) {
		perror("copy");
		exit(2);
	}
	while ((n = read(in, buf, sizeof buf)) > 0)
		if (write(out, buf, (size_t)n) != n)
			exit(2);
	close(in);
	close(out);
	if (chmod(COPY, 0711)) {
		perror("chmod");
		exit(2);
	}
}

/* a child (this program, dumpable) that execs the exec-only copy when told:
 * *go is the pipe to tell it */
static pid_t target(int *go)
{
	int p[2];
	if (pipe(p))
		exit(2);
	pid_t pid = fork();
	if (pid == 0) {
		char c;
		close(p[1]);
		/* dumpable again (the ids changed in its parent: Linux's
		 * commit_creds made it not dumpable, and fork copies that) */
		prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
		map_text("OLD-IMAGE");
		syscall(SYS_set_robust_list, (void *)MARK_ADDR, 24); /* (robust) */
		if (read(p[0], &c, 1) != 1)
			_exit(1);
		usleep(50 * 1000);
		execl(COPY, "vmexec", "marker", (char *)NULL);
		_exit(4);
	}
	close(p[0]);
	*go = p[1];
	return pid;
}

/* the copy made, the ids dropped, the target forked and settled: its pid,
 * *go the pipe that sets it off */
static pid_t dropped_target(int *go)
{
	make_copy();
	drop();
	pid_t t = target(go);
	usleep(100 * 1000);
	return t;
}

/* the output out, the target killed and reaped: 0 */
static int target_done(pid_t t)
{
	fflush(stdout);
	kill(t, SIGKILL);
	waitpid(t, NULL, 0);
	return 0;
}

/* a call on the target's fd 77 (only the new image has it): r, -1 with errno */
static void say_fd77(long r)
{
	if (r < 0)
		printf("%s\n", errno == EBADF ? "old-image" : strerror(errno));
	else
		printf("%s\n", "SECRET");
}

static void vm_read(pid_t pid, char *out, size_t outlen)
{
	char buf[64] = { 0 };
	struct iovec l = { buf, 32 }, r = { (void *)MARK_ADDR, 32 };
	ssize_t n = process_vm_readv(pid, &l, 1, &r, 1, 0);
	if (n < 0)
		snprintf(out, outlen, "%s", strerror(errno));
	else
		snprintf(out, outlen, "%.32s", buf[0] ? buf : "(zeros)");
}

static int vm(const char *mode)
{
	pid_t root = -1;
	int hold[2] = { -1, -1 };
	make_copy();
	if (!strcmp(mode, "mixed")) {
		if (pipe2(hold, O_CLOEXEC))
			return 2;
		root = fork(); /* a root process stays (until the pipe closes): two identities */
		if (root == 0) {
			char c;
			close(hold[1]);
			while (read(hold[0], &c, 1) > 0)
				;
			_exit(0);
		}
		close(hold[0]);
	}
	drop();
	int go;
	pid_t t = target(&go);
	usleep(100 * 1000);
	char during[80], after[80];
	if (write(go, "x", 1) != 1)
		return 2;
	vm_read(t, during, sizeof during); /* the check now, the copy after the delay */
	usleep(300 * 1000);
	vm_read(t, after, sizeof after);
	printf("%s %s\n", during, after);
	fflush(stdout);
	kill(t, SIGKILL);
	waitpid(t, NULL, 0);
	if (root > 0) {
		close(hold[1]);
		waitpid(root, NULL, 0);
	}
	return 0;
}

/* get_robust_list of a child that set its head to MARK_ADDR and execs the
 * copy just after the call began: MARK_ADDR is the old image's, any other
 * head the new image's (SECRET: an address of it) */
static int robust(void)
{
	int go;
	pid_t t = dropped_target(&go);
	if (write(go, "x", 1) != 1)
		return 2;
	void *head = NULL;
	size_t len = 0;
	long r = syscall(SYS_get_robust_list, (int)t, &head, &len);
	if (r < 0)
		printf("%s\n", strerror(errno));
	else
		printf("%s\n", (unsigned long)head == MARK_ADDR ? "old-image" : "SECRET");
	return target_done(t);
}

/* kcmp(child, child, KCMP_FILE, 77, 77) of the child that execs the copy
 * just after the call began: fd 77 is only the new image's (EBADF before
 * the exec, 0 after: SECRET) */
static int kcmp_probe(void)
{
	int go;
	pid_t t = dropped_target(&go);
	if (write(go, "x", 1) != 1)
		return 2;
	long r = syscall(SYS_kcmp, (int)t, (int)t, 0 /* KCMP_FILE */, 77, 77);
	say_fd77(r);
	return target_done(t);
}

/* pidfd_getfd(child, 77) of the child that execs the copy just after the
 * call began: fd 77 is only the new image's (EBADF: old-image; an fd:
 * SECRET) */
static int getfd_probe(void)
{
	int go;
	pid_t t = dropped_target(&go);
	int pfd = (int)syscall(SYS_pidfd_open, (int)t, 0);
	if (pfd < 0 || write(go, "x", 1) != 1)
		return 2;
	long r = syscall(SYS_pidfd_getfd, pfd, 77, 0);
	say_fd77(r);
	return target_done(t);
}

static int proc(const char *file, int race)
{
	char path[64], buf[65536];
	int go;
	pid_t t = dropped_target(&go);
	snprintf(path, sizeof path, "/proc/%d/%s", (int)t, file);
	if (race && write(go, "x", 1) != 1) /* the check now, the open after the delay */
		return 2;
	int fd = open(path, O_RDONLY);
	if (fd < 0) {
		printf("open:%s\n", strerror(errno));
	} else {
		if (!race && write(go, "x", 1) != 1)
			return 2;
		usleep(400 * 1000); /* the child has exec'd the copy */
		ssize_t n = read(fd, buf, sizeof buf - 1);
		if (n < 0)
			printf("read:%s\n", strerror(errno));
		else {
			buf[n] = 0;
			const char *w = strstr(buf, "wchar: ");
			int secret = strstr(buf, "vmexec-secret") || (w && strtoull(w + 7, NULL, 10) >= 16u << 20);
			printf("%s\n", secret ? "SECRET" : n ? "old-image" : "empty");
			if (getenv("PROBE_DEBUG"))
				fputs(buf, stdout);
		}
		close(fd);
	}
	kill(t, SIGKILL);
	waitpid(t, NULL, 0);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "marker")) {
		map_text("SECRET-OF-THE-EXEC-ONLY-IMAGE");
		/* its I/O: /proc/<pid>/io's wchar past 16 MiB */
		static char zero[1 << 20];
		int dn = open("/dev/null", O_WRONLY);
		for (int i = 0; dn >= 0 && i < 17; i++)
			if (write(dn, zero, sizeof zero) < 0)
				break;
		int m = memfd_create("vmexec-secret", 0);
		if (m >= 0 && ftruncate(m, 4096) == 0)
			mmap(NULL, 4096, PROT_READ, MAP_SHARED, m, 0);
		if (m >= 0)
			dup2(m, 77); /* (kcmp: an fd only the new image has) */
		sleep(20);
		return 0;
	}
	if (argc >= 3 && !strcmp(argv[1], "vm"))
		return vm(argv[2]);
	if (argc >= 3 && !strcmp(argv[1], "proc"))
		return proc(argv[2], 0);
	if (argc >= 2 && !strcmp(argv[1], "getfd"))
		return getfd_probe();
	if (argc >= 2 && !strcmp(argv[1], "kcmp"))
		return kcmp_probe();
	if (argc >= 2 && !strcmp(argv[1], "robust"))
		return robust();
	if (argc >= 3 && !strcmp(argv[1], "procrace"))
		return proc(argv[2], 1);
	fprintf(stderr, "usage: probe_vmexec vm one|mixed | proc FILE | procrace FILE | robust | kcmp | getfd\n");
	return 2;
}
