/* reopen/reopen_main.c - moat-reopen's program: freestanding (no libc),
 * exec'd by the sentry from a memfd (sentry/reopen.c says what it is for and
 * why it is safe). Inherited: its channel (3), PDEATHSIG, stderr (2) under
 * MOAT_DEBUG only (out of the caller's terminal: sentry/reopen.c). It names
 * itself, stops being dumpable, waits for the guest's user namespace
 * and procfd (one message, two fds), enters the one (the owner rule: the
 * guest's namespace is a child of ours, owned by our euid), keeps the other
 * as fd 4 and nothing else, keeps CAP_DAC_OVERRIDE and CAP_SYS_PTRACE there
 * (securebits locked, bounding set cut), confines itself (seccomp, kill on
 * anything else) and serves: a request is {vpid, fd, oflags}, the answer
 * an errno and, on success, the fd of a read-only openat(4, "vpid/fd/N").
 */
#include <stddef.h>
#include <stdint.h>

#include "loader/freestanding.h"
#include <asm/unistd.h>
#include <linux/audit.h>
#include <linux/fcntl.h>
#include <linux/filter.h>
#include <linux/prctl.h>
#include <linux/sched.h>
#include <linux/seccomp.h>

#if !defined(__x86_64__)
#error "moat-reopen: x86_64 only (see platform/arch.h)"
#endif
#define ARCH AUDIT_ARCH_X86_64

#define CHAN 3
#define PROCFD 4
#define KEEP_FLAGS (O_APPEND | O_DIRECT | O_SYNC | O_DSYNC)
#define DENY_FLAGS (O_ACCMODE | O_CREAT | O_TRUNC | O_TMPFILE | O_PATH)
#define O_LARGEFILE_X86_64 0100000
#define SOL_SOCKET_ 1
#define SCM_RIGHTS_ 1
#define MSG_CMSG_CLOEXEC_ 0x40000000
#define EINTR_ 4
#define EINVAL_ 22

struct iov {
	void *base;
	size_t len;
};
struct msg {
	void *name;
	uint32_t namelen;
	struct iov *iov;
	size_t iovlen;
	void *control;
	size_t controllen;
	int flags;
};
struct cmsg {
	size_t len;
	int level, type;
	int fds[2];
};

#define S(nr, a, b, c, d, e) sys6(nr, (long)(a), (long)(b), (long)(c), (long)(d), (long)(e), 0)

/* (the compiler may call these for struct copies and clears) */
void *memset(void *d, int c, size_t n);
void *memcpy(void *d, const void *s, size_t n);
void *memset(void *d, int c, size_t n)
{
	unsigned char *p = d;
	while (n--)
		*p++ = (unsigned char)c;
	return d;
}
void *memcpy(void *d, const void *s, size_t n)
{
	unsigned char *p = d;
	const unsigned char *q = s;
	while (n--)
		*p++ = *q++;
	return d;
}

static __attribute__((noreturn)) void die(const char *m, size_t n, int code)
{
	if (n)
		S(__NR_write, 2, m, n, 0, 0);
	for (;;)
		S(__NR_exit_group, code, 0, 0, 0, 0);
}
#define DIE(lit, code) die(lit, sizeof(lit) - 1, code)

static long recv1(void *buf, size_t len, int *fds, int cap)
{
	struct iov v = { buf, len };
	struct cmsg c;
	struct msg m = { 0, 0, &v, 1, &c, sizeof c, 0 };
	long n;
	memset(&c, 0, sizeof c);
	do
		n = S(__NR_recvmsg, CHAN, &m, MSG_CMSG_CLOEXEC_, 0, 0);
	while (n == -EINTR_);
	if (n < 0)
		return n;
	int k = 0;
	if (m.controllen >= sizeof(size_t) + 2 * sizeof(int) && c.level == SOL_SOCKET_ && c.type == SCM_RIGHTS_)
		k = (int)((c.len - (sizeof(size_t) + 2 * sizeof(int))) / sizeof(int));
	for (int i = 0; i < k && i < 2; i++) {
		if (i < cap)
			fds[i] = c.fds[i];
		else
			S(__NR_close, c.fds[i], 0, 0, 0, 0); /* never keep a surplus fd */
	}
	if (cap > 0 && k < cap)
		return -EINVAL_;
	return n;
}

static void reply(int32_t e, int fd)
{
	struct iov v = { &e, sizeof e };
	struct cmsg c;
	struct msg m = { 0, 0, &v, 1, 0, 0, 0 };
	if (fd >= 0) {
		memset(&c, 0, sizeof c);
		c.len = sizeof(size_t) + 2 * sizeof(int) + sizeof(int);
		c.level = SOL_SOCKET_;
		c.type = SCM_RIGHTS_;
		c.fds[0] = fd;
		m.control = &c;
		m.controllen = sizeof c; /* CMSG_SPACE(4) == 24 == sizeof c */
	}
	S(__NR_sendmsg, CHAN, &m, 0, 0, 0);
}

/* "<vpid>/fd/<fd>" */
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
			p[o++] = '/';
			p[o++] = 'f';
			p[o++] = 'd';
			p[o++] = '/';
		}
	}
	p[o] = 0;
}

#define LD_NR BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr))
#define LD_ARG(i) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[i]))
#define ALLOW BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)
#define KILL BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS)

/* close, exit, exit_group, rt_sigreturn; recvmsg and sendmsg on the
 * channel; openat on the guest procfd with none of DENY_FLAGS (an fd or
 * flags argument is an int to the kernel: its low word). A foreign arch or
 * an x32 number (none matches) is killed. */
static long confine(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ARCH, 1, 0),
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
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_close, 4, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_exit, 3, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_exit_group, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_rt_sigreturn, 1, 0),
		KILL,
		ALLOW,
	};
	struct sock_fprog prog = { (unsigned short)(sizeof f / sizeof f[0]), f };
	long r = S(__NR_prctl, PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
	return r < 0 ? r : S(__NR_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog, 0, 0);
}

struct caps_hdr {
	uint32_t version;
	int pid;
};
struct caps_data {
	uint32_t effective, permitted, inheritable;
};

__attribute__((used, noreturn)) void reopen_main(void);
__attribute__((used, noreturn)) void reopen_main(void)
{
	static const char name[16] = "moat-reopen";
	uint64_t all = ~0ULL;
	S(__NR_rt_sigprocmask, 2 /* SIG_SETMASK */, &all, 0, 8, 0);
	if (S(__NR_prctl, PR_SET_NAME, name, 0, 0, 0) < 0 || S(__NR_prctl, PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		DIE("moat-reopen: prctl\n", 1);
	long parent = S(__NR_getppid, 0, 0, 0, 0, 0);
	char b;
	int fds[2] = { -1, -1 };
	if (recv1(&b, 1, fds, 2) != 1)
		DIE("", 0); /* the sentry is gone, or needs us not */
	if (S(__NR_setns, fds[0], CLONE_NEWUSER, 0, 0, 0) < 0)
		DIE("moat-reopen: setns into the guest's user namespace failed\n", 1);
	/* setns raised our capabilities (none since the exec, every one in
	 * the guest's namespace now): the kernel cleared PDEATHSIG. Again,
	 * and the sentry must still be our parent. */
	if (S(__NR_prctl, PR_SET_PDEATHSIG, 9 /* SIGKILL */, 0, 0, 0) < 0 || S(__NR_getppid, 0, 0, 0, 0, 0) != parent)
		DIE("", 0);
	/* the procfd as 4; the two received (0 and 1: closed before the
	 * exec) closed; nothing above 4 */
	if (S(__NR_close, fds[0], 0, 0, 0, 0) < 0 ||
	    (fds[1] != PROCFD && S(__NR_dup3, fds[1], PROCFD, O_CLOEXEC, 0, 0) < 0) ||
	    (fds[1] != PROCFD && S(__NR_close, fds[1], 0, 0, 0, 0) < 0) ||
	    S(__NR_close_range, PROCFD + 1, ~0U, 0, 0, 0) < 0 || S(__NR_chdir, "/", 0, 0, 0, 0) < 0)
		DIE("moat-reopen: fds\n", 1);
	/* every capability in the guest's namespace: keep two */
	const uint64_t keep = (1ULL << 1 /* CAP_DAC_OVERRIDE */) | (1ULL << 19 /* CAP_SYS_PTRACE */);
	if (S(__NR_prctl, PR_SET_SECUREBITS, 0x2f /* NOROOT, NO_SETUID_FIXUP, KEEP_CAPS_LOCKED, locked */ | 0xc0, 0, 0,
	      0) < 0 ||
	    S(__NR_prctl, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0)
		DIE("moat-reopen: securebits\n", 1);
	for (int cap = 0; cap < 64; cap++) {
		if (keep & (1ULL << cap))
			continue;
		long r = S(__NR_prctl, PR_CAPBSET_DROP, cap, 0, 0, 0);
		if (r == -EINVAL_)
			break; /* past CAP_LAST_CAP */
		if (r < 0)
			DIE("moat-reopen: bounding set\n", 1);
	}
	struct caps_hdr h = { 0x20080522 /* _LINUX_CAPABILITY_VERSION_3 */, 0 };
	struct caps_data d[2] = { { (uint32_t)keep, (uint32_t)keep, 0 }, { (uint32_t)(keep >> 32), (uint32_t)(keep >> 32), 0 } };
	if (S(__NR_capset, &h, d, 0, 0, 0) < 0 || confine() < 0)
		DIE("moat-reopen: cannot confine itself\n", 1);
	for (;;) {
		int32_t q[3];
		long n = recv1(q, sizeof q, 0, 0);
		if (n == 0 || (n < 0 && n != -EINVAL_))
			DIE("", 0); /* the sentry is gone */
		if (n != (long)sizeof q)
			continue;
		char p[32];
		fmt_path(p, q[0], q[1]);
		long fd = S(__NR_openat, PROCFD, p,
			    O_RDONLY | O_LARGEFILE_X86_64 | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | (q[2] & KEEP_FLAGS), 0, 0);
		reply(fd < 0 ? (int32_t)-fd : 0, fd < 0 ? -1 : (int)fd);
		if (fd >= 0)
			S(__NR_close, fd, 0, 0, 0, 0);
	}
}

/* _start: rsp points at argc; align, call reopen_main. */
__asm__(".text\n"
	".globl _start\n"
	".type _start,@function\n"
	"_start:\n"
	"	xor %ebp, %ebp\n"
	"	and $-16, %rsp\n"
	"	call reopen_main\n"
	"	hlt\n"
	".size _start, .-_start\n");
