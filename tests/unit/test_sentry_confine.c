/* tests/unit/test_sentry_confine.c - the sentry's filter compiled at build
 * time (sentry/gen_confine.c) with its placeholder fds patched is the
 * program libseccomp builds from confine_rules() for the same fds now, and
 * installed for real it allows exactly the calls on the fds it names. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sentry/confine_rules.h"

/* where a jump to t ends: a return's action (the same allow, wherever
 * libseccomp put a copy of it), else t */
static long jump_end(const struct sock_fprog *p, unsigned t)
{
	return t < p->len && p->filter[t].code == (BPF_RET | BPF_K) ? -1 - (long)p->filter[t].k : (long)t;
}

/* the next test of a chain after u: u + 1, or past the return a long jump
 * put after u (libseccomp's "jt 0 -> ret, jf 1 -> go on" when the chain's
 * shared target is more than 255 instructions away); 0: the chain ends */
static unsigned chain_next(const struct sock_fprog *p, unsigned u)
{
	struct sock_filter x = p->filter[u];
	if (x.jf == 0)
		return u + 1;
	if (x.jf == 1 && x.jt == 0 && u + 1 < p->len && p->filter[u + 1].code == (BPF_RET | BPF_K))
		return u + 2;
	return 0;
}

static void libseccomp_prog(int pfd, const int *roots, size_t nroots, struct sock_fprog *out)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ERRNO(EPERM));
	cr_assert(ctx);
	cr_assert_eq(confine_rules(ctx, pfd, roots, nroots, -1), 0);
	int fd = memfd_create("t", 0);
	struct stat st;
	cr_assert_eq(seccomp_export_bpf(ctx, fd), 0);
	cr_assert_eq(fstat(fd, &st), 0);
	out->filter = malloc((size_t)st.st_size);
	cr_assert_eq(pread(fd, out->filter, (size_t)st.st_size, 0), st.st_size);
	out->len = (unsigned short)(st.st_size / sizeof(struct sock_filter));
	close(fd);
	seccomp_release(ctx);
}

Test(sentry_confine, prebuilt_is_libseccomps_program)
{
	/* a sandbox's shapes: roots of some exports, not of others */
	const int roots[] = { 9, -1, 11, 12, -1, 14 };
	int padded[CONFINE_PH_NROOTS];
	for (int i = 0; i < CONFINE_PH_NROOTS; i++)
		padded[i] = i < 6 && roots[i] >= 0 ? roots[i] : (int)(CONFINE_PH_NONE - (unsigned)i);
	struct sock_fprog a, b;
	libseccomp_prog(7, padded, CONFINE_PH_NROOTS, &a);
	cr_assert_eq(confine_prebuilt_patch(7, roots, 6, &b), 0);
	cr_assert_eq(a.len, b.len, "stale prebuilt program: %u vs %u instructions", a.len, b.len);
	/* libseccomp orders the tests of one argument by value: a chain of
	 * "jeq k -> the same allow" is compared as a set of k, the rest as is
	 * (a chain may be cut by long-jump returns, at the same places in both:
	 * the values on either side of a cut differ with the fds' order) */
	const unsigned JEQ = BPF_JMP | BPF_JEQ | BPF_K;
	for (unsigned i = 0; i < a.len;) {
		struct sock_filter x = a.filter[i], y = b.filter[i];
		cr_assert_eq(x.code, y.code, "insn %u", i);
		long end = x.code == JEQ ? jump_end(&a, i + 1 + x.jt) : 0;
		unsigned j = i, last = i, n = 0;
		while (x.code == JEQ && j < a.len && a.filter[j].code == JEQ && b.filter[j].code == JEQ &&
		       a.filter[j].jt == b.filter[j].jt && a.filter[j].jf == b.filter[j].jf &&
		       jump_end(&a, j + 1 + a.filter[j].jt) == end && jump_end(&b, j + 1 + b.filter[j].jt) == end &&
		       chain_next(&a, j)) {
			last = j;
			n++;
			j = chain_next(&a, j);
		}
		if (n < 2) {
			cr_assert_eq(memcmp(&x, &y, sizeof x), 0, "insn %u: %#x vs %#x", i, x.k, y.k);
			i++;
			continue;
		}
		for (unsigned u = i; u <= last; u++) {
			if (a.filter[u].code != JEQ) { /* a long jump's return */
				cr_assert_eq(memcmp(&a.filter[u], &b.filter[u], sizeof x), 0, "insn %u", u);
				continue;
			}
			int found = 0;
			for (unsigned w = i; w <= last && !found; w++)
				found = b.filter[w].code == JEQ && b.filter[w].k == a.filter[u].k;
			cr_assert(found, "insn %u: %#x not in the prebuilt chain", u, a.filter[u].k);
		}
		i = last + 1;
	}
	free(a.filter);
	free(b.filter);
	/* more roots than the build's slots, or no procfs: the run-time path */
	int many[CONFINE_PH_NROOTS + 1];
	for (int i = 0; i <= CONFINE_PH_NROOTS; i++)
		many[i] = 20 + i;
	cr_assert_eq(confine_prebuilt_patch(7, many, CONFINE_PH_NROOTS + 1, &b), -1);
	cr_assert_eq(confine_prebuilt_patch(-1, roots, 6, &b), -1);
}

static long r4(long nr, long a, long b, long c, long d)
{
	long r = syscall(nr, a, b, c, d);
	return r < 0 ? -errno : r;
}

/* Installed: openat on the procfs fd only (read-only), openat2 on the roots
 * only, absolute paths and other dirfds refused. */
Test(sentry_confine, prebuilt_allows_only_named_fds)
{
	int pfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int root = open("/", O_PATH | O_CLOEXEC);
	int other = open("/", O_PATH | O_CLOEXEC);
	cr_assert(pfd >= 0 && root >= 0 && other >= 0);
	const int roots[] = { -1, root };
	pid_t c = fork();
	if (c == 0) {
		if (confine_prebuilt_load(pfd, roots, 2) < 0)
			_exit(100);
		struct open_how how = { .flags = O_RDONLY | O_CLOEXEC };
		int bits = 0;
		bits |= (r4(SYS_openat, pfd, (long)"self/stat", O_RDONLY, 0) >= 0) << 0;
		bits |= (r4(SYS_openat, pfd, (long)"self/stat", O_WRONLY, 0) == -EPERM) << 1;
		bits |= (r4(SYS_openat, AT_FDCWD, (long)"/etc/hostname", O_RDONLY, 0) == -EPERM) << 2;
		bits |= (r4(SYS_openat2, root, (long)"etc", (long)&how, sizeof how) >= 0) << 3;
		bits |= (r4(SYS_openat2, other, (long)"etc", (long)&how, sizeof how) == -EPERM) << 4;
		bits |= (r4(SYS_openat2, (long)(CONFINE_PH_NONE - 1), (long)"etc", (long)&how, sizeof how) == -EPERM) << 5;
		bits |= (r4(SYS_socket, 2, 1, 0, 0) == -EPERM) << 6;
		_exit(bits);
	}
	int st;
	cr_assert_eq(waitpid(c, &st, 0), c);
	cr_assert(WIFEXITED(st));
	cr_assert_eq(WEXITSTATUS(st), 0x7f, "probes %#x", WEXITSTATUS(st));
}

/* Installed: no fchmod (it never set a set-id bit, red team 45: rootless the
 * sentry's uid owns a rw bind's files; since sentryfs37 none at all) nor
 * futimens, and
 * the guest procfs is opened without O_CREAT, O_TRUNC or O_TMPFILE
 * (red team 45: the access mode alone was checked, and PID/fd/N/.. reached
 * the gofer's tree). */
Test(sentry_confine, prebuilt_refuses_setid_and_create)
{
	int pfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int mfd = memfd_create("m", MFD_CLOEXEC);
	cr_assert(pfd >= 0 && mfd >= 0);
	const int roots[] = { -1 };
	pid_t c = fork();
	if (c == 0) {
		if (confine_prebuilt_load(pfd, roots, 1) < 0)
			_exit(100);
		int bits = 0;
		/* no fchmod, no futimens at all (sentryfs37: rootless a file of
		 * the caller's it holds is the sentry's uid's; the gofer sets a
		 * memfd's mode and times) */
		bits |= (r4(SYS_fchmod, mfd, 0644, 0, 0) == -EPERM) << 0;
		bits |= (r4(SYS_fchmod, mfd, 04755, 0, 0) == -EPERM) << 1;
		bits |= (r4(SYS_fchmod, mfd, 02755, 0, 0) == -EPERM) << 2;
		bits |= (r4(SYS_openat, pfd, (long)"self/stat", O_RDONLY | O_CREAT, 0644) == -EPERM) << 3;
		bits |= (r4(SYS_openat, pfd, (long)"self/stat", O_RDONLY | O_TRUNC, 0) == -EPERM) << 4;
		bits |= (r4(SYS_openat, pfd, (long)"self", O_RDONLY | O_TMPFILE, 0600) == -EPERM) << 5;
		bits |= (r4(SYS_openat, pfd, (long)"self", O_RDONLY | O_DIRECTORY, 0) >= 0) << 6;
		bits |= (r4(SYS_utimensat, mfd, 0, 0, 0) == -EPERM) << 7;
		_exit(bits);
	}
	int st;
	cr_assert_eq(waitpid(c, &st, 0), c);
	cr_assert(WIFEXITED(st));
	cr_assert_eq(WEXITSTATUS(st), 0xff, "probes %#x", WEXITSTATUS(st));
}
