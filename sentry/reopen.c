/* sentry/reopen.c - moat-reopen: the guest's /proc/<pid>/fd/N reopens of
 * objects whose mode denies their owner, without touching the mode.
 *
 * Root-run the sentry holds no capability (privilege.c): the kernel checks
 * its reopen of a guest's memfd or pipe (fs/procfs.c reopen_new, after the
 * guest's own virtual check allowed it) against the object's owner bits
 * alone, so a memfd the guest chmod'ed to 0 is EACCES to it where Linux
 * gives the guest's root a new open file description. The sentry used to
 * lend itself the owner bits for that one open (fchmod, open, fchmod back):
 * a native fstat (of any guest process) saw them meanwhile, and a crash in
 * between left them. moat-reopen instead holds DAC override where it
 * reaches only the sandbox's own objects: forked by the sentry before its
 * capabilities go (single-threaded, so setns may), it enters the guest's
 * user namespace (a child of the sentry's, owned by the sentry's uid: the
 * owner rule lets it; it then holds every capability there, as the guest's
 * root would natively, and capable_wrt_inode_uidgid grants DAC override
 * only on inodes whose owner and group that namespace maps — the sandbox
 * uid's and gid's), keeps CAP_DAC_OVERRIDE and CAP_SYS_PTRACE (the procfs
 * fd/ link of a non-dumpable guest task) and nothing else, and confines
 * itself (a hand-written seccomp program, kill on anything else): recvmsg/sendmsg on its channel,
 * openat on the guest procfd with no write access, no O_CREAT/O_TRUNC/
 * O_TMPFILE, close, exit. It never sees guest input but a pid and an fd
 * number; what it opens the sentry could reach anyway (pidfd_getfd gives
 * the guest's own description; the sentry owns the object and could chmod
 * it). The sentry identifies what comes back (dev, ino) as before.
 */
#include "sentry/sentry.h"
#include "fs/procfs.h"
#include "common/sanitize.h"
#include "common/util.h"
#include "platform/arch.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#define CHAN 3
#define PROCFD 4
#define KEEP_FLAGS (O_APPEND | O_DIRECT | O_SYNC | O_DSYNC)
/* openat's flags that must be clear (O_RDONLY is 0: the access mode too) */
#define DENY_FLAGS (O_ACCMODE | O_CREAT | O_TRUNC | O_TMPFILE | O_PATH)

struct reopen_req {
	int32_t vpid, fd, oflags;
};

static int g_chan = -1;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;

/* The helper writes nothing through stdio (its pages would be its own). */
static void say(const char *m)
{
	ssize_t r = write(2, m, strlen(m));
	(void)r;
}

#define LD_NR BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr))
#define LD_ARG(i) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[i]))
#ifdef MOAT_SANITIZE
#define NSAN (sizeof(int[]){ MOAT_SANITIZER_SYSCALLS } / sizeof(int))
#else
#define NSAN 0
#endif
#define ALLOW BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)
#define KILL BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS)

/* The allowlist, kill on anything else: close, exit, exit_group,
 * rt_sigreturn; recvmsg and sendmsg on the channel; openat on the guest
 * procfd with none of DENY_FLAGS. An fd or flags argument is an int to the
 * kernel: the low word of each is what it uses. A foreign arch (or an x32
 * number: none matches) is killed. Hand-written (no libseccomp at run time:
 * its compiler's heap was most of this helper's pages). */
static int confine_reopen(void)
{
	struct sock_filter f[48] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, MOAT_AUDIT_ARCH, 1, 0),
		KILL,
		LD_NR,
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_openat, 0, 6),
		LD_ARG(0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, PROCFD, 0, 2),
		LD_ARG(2),
		BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, DENY_FLAGS, 0, 1),
		KILL,
		ALLOW,
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_recvmsg, 1, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_sendmsg, 0, 4),
		LD_ARG(0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, CHAN, 0, 1),
		ALLOW,
		KILL,
		/* (17-20) to the final ALLOW, past the sanitizer's NSAN */
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_close, 4 + NSAN, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_exit, 3 + NSAN, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_exit_group, 2 + NSAN, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_rt_sigreturn, 1 + NSAN, 0),
	};
	unsigned short n = 21;
#ifdef MOAT_SANITIZE
	/* (sanitizer builds) the runtime's calls, any arguments */
	static const int san[] = { MOAT_SANITIZER_SYSCALLS };
	_Static_assert(NSAN + 23 <= sizeof f / sizeof f[0], "moat-reopen: filter too long");
	for (unsigned short i = 0; i < NSAN; i++)
		f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)san[i],
						      (unsigned char)(NSAN - i), 0);
#endif
	f[n++] = (struct sock_filter)KILL;
	f[n++] = (struct sock_filter)ALLOW;
	struct sock_fprog prog = { .len = n, .filter = f };
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0)
		return -1;
	return 0;
}

/* "<vpid>/fd/<fd>" without stdio; p holds at least 32 bytes */
static void fmt_path(char *p, int32_t vpid, int32_t fd)
{
	int32_t v[2] = { vpid, fd };
	size_t o = 0;
	for (int k = 0; k < 2; k++) {
		uint32_t u = v[k] < 0 ? (uint32_t)0 - (uint32_t)v[k] : (uint32_t)v[k];
		char d[11];
		int nd = 0;
		if (v[k] < 0)
			p[o++] = '-';
		do
			d[nd++] = (char)('0' + u % 10);
		while ((u /= 10) != 0);
		while (nd > 0)
			p[o++] = d[--nd];
		if (k == 0) {
			memcpy(p + o, "/fd/", 4);
			o += 4;
		}
	}
	p[o] = 0;
}

static _Noreturn void serve(void)
{
	for (;;) {
		struct reopen_req q;
		long n = recv_fds(CHAN, &q, sizeof q, NULL, NULL);
		if (n == 0 || (n < 0 && n != -EMSGSIZE))
			_exit(0); /* the sentry is gone */
		if (n != sizeof q)
			continue;
		char p[32];
		fmt_path(p, q.vpid, q.fd);
		int fd = openat(PROCFD, p,
				O_RDONLY | O_LARGEFILE | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | (q.oflags & KEEP_FLAGS));
		int32_t e = fd < 0 ? errno : 0;
		(void)send_fds(CHAN, &e, sizeof e, &fd, fd >= 0);
		if (fd >= 0)
			close(fd);
	}
}

/* The sentry's heap as it is about to be forked: [start_brk (/proc/self/
 * stat field 47), sbrk(0)), or 0 when either cannot be told. Read by the
 * sentry before the fork (the helper may start after the sentry's
 * pivot_root, with no /proc). The helper allocates nothing: it drops these
 * pages, or each one the sentry writes later stays a private copy there. */
static void heap_range(uintptr_t *start_out, uintptr_t *end_out)
{
	char b[1024];
	*start_out = *end_out = 0;
	int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	ssize_t n = read(fd, b, sizeof b - 1);
	close(fd);
	if (n <= 0)
		return;
	b[n] = 0;
	char *p = strrchr(b, ')');
	if (!p || p[1] != ' ')
		return;
	p += 2; /* field 3 */
	for (int field = 3; field < 47; field++) {
		p = strchr(p, ' ');
		if (!p)
			return;
		p++;
	}
	uintptr_t start = 0;
	for (; *p >= '0' && *p <= '9'; p++)
		start = start * 10 + (uintptr_t)(*p - '0');
	uintptr_t end = (uintptr_t)sbrk(0);
	if (*p != ' ' || !start || (start & 4095) || end == (uintptr_t)-1 || end <= start || end - start > (1UL << 30))
		return;
	*start_out = start;
	*end_out = (end + 4095) & ~(uintptr_t)4095;
}

/* The helper from the fork on: single-threaded, stdio unused, nothing
 * allocated. Waits for the guest's user namespace and procfd. */
static _Noreturn void helper_main(int chan, uintptr_t heap_start, uintptr_t heap_end)
{
	/* keep stderr and the channel (3) only; cwd / (the sentry's
	 * pivot_root moves it, and our root, to the sentry's root) */
	if (chan != CHAN && dup3(chan, CHAN, O_CLOEXEC) < 0)
		_exit(1);
	if (syscall(SYS_close_range, CHAN + 1, ~0U, 0) < 0 || chdir("/") < 0)
		_exit(1);
	close(0);
	close(1);
	sigset_t all;
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);
	if (heap_end > heap_start)
		(void)madvise((void *)heap_start, heap_end - heap_start, MADV_DONTNEED);
	/* the sentry's stack below ours is garbage here: drop it, or the
	 * sentry's next deep call copies it into our pages */
	{
		uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
		uintptr_t top = (sp & ~(uintptr_t)4095) - 2 * 4096;
		(void)madvise((void *)(top - 128 * 4096), 128 * 4096, MADV_DONTNEED);
	}
	struct { char b[1]; } msg;
	int fds[2] = { -1, -1 }, k = 2;
	long n = recv_fds(CHAN, &msg, sizeof msg, fds, &k);
	if (n != (long)sizeof msg || k != 2 || fds[0] < 0 || fds[1] < 0)
		_exit(0); /* the sentry is gone (or needs us not) */
	/* (the owner rule: the guest's namespace is our euid's, a child
	 * of ours) every capability there, none here */
	if (setns(fds[0], CLONE_NEWUSER) < 0) {
		say("moat-reopen: setns into the guest's user namespace failed\n");
		_exit(1);
	}
	if (dup3(fds[1], PROCFD, O_CLOEXEC) < 0 || syscall(SYS_close_range, PROCFD + 1, ~0U, 0) < 0 ||
	    chdir("/") < 0)
		_exit(1);
	if (prctl(PR_SET_SECUREBITS, 0x2f /* NOROOT, NO_SETUID_FIXUP, KEEP_CAPS_LOCKED, locked */ | 0xc0, 0, 0,
		  0) < 0 ||
	    priv_caps_limit((1ULL << 1 /* CAP_DAC_OVERRIDE */) | (1ULL << 19 /* CAP_SYS_PTRACE */)) < 0 ||
	    confine_reopen() < 0) {
		say("moat-reopen: cannot confine itself\n");
		_exit(1);
	}
	serve();
}

/* procfs_set_reopen_helper's fn: one request at a time (rare: only a
 * reopen the kernel refused the sentry's uid on an object it owns). The
 * helper's errno, or EACCES when it cannot answer (the caller then shares
 * the guest's description, as for any refused reopen). */
static int reopen_via_helper(pid_t vpid, int fd, int oflags)
{
	struct reopen_req q = { (int32_t)vpid, (int32_t)fd, (int32_t)(oflags & KEEP_FLAGS) };
	int32_t e = EACCES; /* no answer (the helper gone): the old rules */
	int nfd = -1, k = 1;
	if ((oflags & O_ACCMODE) != O_RDONLY || (oflags & O_TRUNC))
		return -EACCES;
	pthread_mutex_lock(&g_lock);
	if (g_chan >= 0 && send_fds(g_chan, &q, sizeof q, NULL, 0) == (long)sizeof q &&
	    recv_fds(g_chan, &e, sizeof e, &nfd, &k) != (long)sizeof e)
		e = EACCES;
	pthread_mutex_unlock(&g_lock);
	if (k == 1 && nfd >= 0 && e == 0)
		return nfd;
	if (k == 1 && nfd >= 0)
		close(nfd);
	return -(e ? e : EACCES);
}

int reopen_helper_fork(char *err, size_t errlen)
{
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		snprintf(err, errlen, "moat-reopen: socketpair: %s", strerror(errno));
		return -1;
	}
	uintptr_t hs, he;
	heap_range(&hs, &he); /* (nothing allocated from here to the fork) */
	pid_t pid = moat_fork_helper("moat-reopen");
	if (pid < 0) {
		snprintf(err, errlen, "moat-reopen: fork: %s", strerror(errno));
		close(sv[0]);
		close(sv[1]);
		return -1;
	}
	if (pid == 0)
		helper_main(sv[1], hs, he);
	close(sv[1]);
	g_chan = sv[0];
	return 0;
}

int reopen_helper_start(int procfd, int userns_fd, char *err, size_t errlen)
{
	char b = 0;
	int fds[2] = { userns_fd, procfd };
	if (g_chan < 0 || send_fds(g_chan, &b, 1, fds, 2) != 1) {
		snprintf(err, errlen, "moat-reopen: cannot hand it the guest's namespace");
		return -1;
	}
	procfs_set_reopen_helper(reopen_via_helper);
	return 0;
}
