/* tests/unit/test_gofer_seccomp.c - the gofer's seccomp program compiled at
 * build time (gofer/gen_seccomp.c) is the one libseccomp builds from
 * gofer_seccomp_rules() now (a stale array would fail here), and installed
 * it refuses what the gofer must not do. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gofer/seccomp_rules.h"

extern const unsigned short gofer_bpf_len;
extern const struct sock_filter gofer_bpf[];

Test(gofer_seccomp, prebuilt_is_libseccomps_program)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ERRNO(EPERM));
	cr_assert(ctx);
	cr_assert_eq(gofer_seccomp_rules(ctx), 0);
	int fd = memfd_create("t", 0);
	struct stat st;
	cr_assert_eq(seccomp_export_bpf(ctx, fd), 0);
	cr_assert_eq(fstat(fd, &st), 0);
	struct sock_filter *a = malloc((size_t)st.st_size);
	cr_assert_eq(pread(fd, a, (size_t)st.st_size, 0), st.st_size);
	size_t n = (size_t)st.st_size / sizeof *a;
	cr_assert_eq(n, gofer_bpf_len, "stale prebuilt program: %zu vs %u instructions", n, gofer_bpf_len);
	cr_assert_eq(memcmp(a, gofer_bpf, n * sizeof *a), 0, "stale prebuilt program");
	free(a);
	close(fd);
	seccomp_release(ctx);
}

Test(gofer_seccomp, prebuilt_refuses)
{
	pid_t c = fork();
	if (c == 0) {
		struct sock_fprog prog = { .len = gofer_bpf_len, .filter = (struct sock_filter *)gofer_bpf };
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog))
			_exit(100);
		int bits = 0;
		bits |= (socket(AF_INET, SOCK_STREAM, 0) < 0 && errno == EPERM) << 0;
		bits |= (unshare(CLONE_NEWUSER) < 0 && errno == EPERM) << 1;
		bits |= (syscall(SYS_openat, AT_FDCWD, "/etc/passwd", O_RDONLY) < 0 && errno == EPERM) << 2;
		bits |= (getpid() > 0) << 3;
		/* its own affinity only (GOFER_HDR_CPU), no other task's */
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(sched_getcpu(), &set);  /* rseq or the vDSO: no system call */
		bits |= (sched_setaffinity(0, sizeof set, &set) == 0) << 4;
		bits |= (sched_setaffinity(getppid(), sizeof set, &set) < 0 && errno == EPERM) << 5;
		_exit(bits);
	}
	int st;
	cr_assert_eq(waitpid(c, &st, 0), c);
	cr_assert(WIFEXITED(st));
	cr_assert_eq(WEXITSTATUS(st), 0x3f, "probes %#x", WEXITSTATUS(st));
}
