/*
 * probe_deny: tries one dangerous syscall with harmless arguments (in a child,
 * so a kill by the sandbox is observed too) and says whether it was denied.
 * NOT a differential test: natively most of these are allowed.
 *
 *   probe_deny NAME...     NAME: ptrace io_uring_setup mount fsopen bpf kexec_load
 *     init_module finit_module open_by_handle_at unshare_user clone3
 *     userfaultfd perf_event_open int80 x32 tiocsti vm_write_init vm_read_init
 *     vsock packet netlink_audit netlink_uevent alg socketpair_tipc chattr
 *     inet_sctp inet6_l2tp inet_dccp socketpair_sctp (module-loading pairs)
 *     personality fsetxattr (ENOTSUP counts as denied for it; ESTALE for
 *     open_by_handle_at: moat's handles are its own, a forged one names nothing)
 *     ksm (madvise MADV_MERGEABLE; EINVAL counts as denied: no KSM)
 *     landlock (denied: no Landlock, or a domain that refuses the read it
 *     handles, as natively; allowed: a domain that restricts nothing)
 * Prints "ok NAME denied: ERRNO" / "FAIL NAME: allowed (...)" per name; exit 0 iff all denied.
 * Denied = the call failed with EPERM, ENOSYS, EAFNOSUPPORT (or, for a
 * socket's protocol, EPROTONOSUPPORT, ESOCKTNOSUPPORT), or the task was
 * killed by SIGSYS.
 */
#include "t.h"
#include <linux/fs.h>
#include <linux/landlock.h>
#include <linux/netlink.h>
#include <linux/perf_event.h>
#include <linux/vm_sockets.h>
#include <pty.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/xattr.h>

#ifndef __X32_SYSCALL_BIT
#define __X32_SYSCALL_BIT 0x40000000
#endif

static long int80_getpid(void)
{
	long ret = 20; /* __NR_getpid on i386 */
	__asm__ volatile("int $0x80" : "+a"(ret) : : "memory");
	return ret;
}

static long attempt(const char *n)
{
	if (!strcmp(n, "ptrace"))
		return ptrace(PTRACE_TRACEME, 0, 0, 0);
	if (!strcmp(n, "io_uring_setup")) {
		char params[120] = {0};
		return syscall(SYS_io_uring_setup, 1, params);
	}
	if (!strcmp(n, "mount"))
		return mount("none", "/nonexistent-moat-probe", "tmpfs", 0, NULL);
	/* (mount(2) itself is emulated on the sandbox's own table for root
	 * inside: the host's mount API is what stays denied) */
	if (!strcmp(n, "fsopen"))
		return syscall(SYS_fsopen, "tmpfs", 0);
	if (!strcmp(n, "bpf")) {
		char attr[128] = {0};
		return syscall(SYS_bpf, 0 /* BPF_MAP_CREATE */, attr, sizeof(attr));
	}
	if (!strcmp(n, "kexec_load"))
		return syscall(SYS_kexec_load, 0, 0, NULL, 0xdead0000UL);
	if (!strcmp(n, "init_module"))
		return syscall(SYS_init_module, NULL, 0, "");
	if (!strcmp(n, "finit_module"))
		return syscall(SYS_finit_module, -1, "", 0);
	if (!strcmp(n, "open_by_handle_at")) {
		struct {
			unsigned int bytes;
			int type;
			unsigned char h[8];
		} fh = {.bytes = 8, .type = 1};
		return syscall(SYS_open_by_handle_at, AT_FDCWD, &fh, O_RDONLY);
	}
	if (!strcmp(n, "unshare_user"))
		return unshare(CLONE_NEWUSER);
	if (!strcmp(n, "clone3"))
		return syscall(SYS_clone3, NULL, 0);
	if (!strcmp(n, "userfaultfd"))
		return syscall(SYS_userfaultfd, 0);
	if (!strcmp(n, "perf_event_open")) {
		struct perf_event_attr a = {.size = sizeof(a), .type = PERF_TYPE_SOFTWARE,
					    .config = PERF_COUNT_SW_CPU_CLOCK, .exclude_kernel = 1};
		return syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
	}
	if (!strcmp(n, "int80")) {
		long r = int80_getpid();
		if (r < 0 && r > -4096) {
			errno = (int)-r;
			return -1;
		}
		return r;
	}
	if (!strcmp(n, "x32"))
		return syscall(__X32_SYSCALL_BIT | SYS_getpid);
	if (!strcmp(n, "vm_write_init")) {
		/* The pid namespace's init (moat-init) shares the guest's uid: it
		 * must still be out of reach. The permission check comes before any
		 * copy, so EPERM means refused and EFAULT means access was granted. */
		/* Never a change, even when run natively (the selfcheck runs this
		 * against a moat that isolates nothing, as root): write back the
		 * bytes a read just found there; if the read fails, write to the
		 * same unmapped address (EFAULT: nothing is written). */
		char buf[8] = {0};
		struct iovec l = {buf, sizeof(buf)}, r = {(void *)0x10000, sizeof(buf)};
		if (process_vm_readv(1, &l, 1, &r, 1, 0) < 0 && errno != EFAULT)
			return -1; /* refused already (EPERM): the write would be too */
		return process_vm_writev(1, &l, 1, &r, 1, 0);
	}
	if (!strcmp(n, "vm_read_init")) {
		/* the harmless twin of vm_write_init, for native pre-checks */
		char buf[8];
		struct iovec l = {buf, sizeof(buf)}, r = {(void *)0x10000, sizeof(buf)};
		return process_vm_readv(1, &l, 1, &r, 1, 0);
	}
	if (!strcmp(n, "tiocsti")) {
		/* The filter denies TIOCSTI by its request number, whatever the fd.
		 * On /dev/null Linux answers ENOTTY (so a moat that let it through
		 * fails this probe) and nothing can be injected anywhere. */
		int fd = open("/dev/null", O_RDONLY);
		char c = '#';
		return ioctl(fd, TIOCSTI, &c);
	}
	if (!strcmp(n, "vsock")) {
		/* AF_VSOCK is not confined by network namespaces: a listener
		 * here would be on the VM's own vsock port. Each step counts. */
		struct sockaddr_vm a = {.svm_family = AF_VSOCK, .svm_cid = VMADDR_CID_ANY,
					.svm_port = 45000 + (unsigned)getpid() % 1000};
		int fd = socket(AF_VSOCK, SOCK_STREAM, 0);
		if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0)
			return -1;
		return listen(fd, 1);
	}
	if (!strcmp(n, "packet"))
		return socket(AF_PACKET, SOCK_RAW, 0);
	if (!strcmp(n, "netlink_audit"))
		return socket(AF_NETLINK, SOCK_RAW, NETLINK_AUDIT);
	if (!strcmp(n, "netlink_uevent"))
		return socket(AF_NETLINK, SOCK_DGRAM, NETLINK_KOBJECT_UEVENT);
	if (!strcmp(n, "alg"))
		return socket(AF_ALG, SOCK_SEQPACKET, 0);
	/* (type, protocol) pairs no built-in protosw holds: Linux asks
	 * request_module("net-pf-F-proto-P-type-T") for them (red team 67).
	 * Not made unconfined on a kernel that loads modules (it would load
	 * them, as root): ENOPKG, not a denial. */
	if (!strncmp(n, "inet_", 5) || !strncmp(n, "inet6_", 6) || !strcmp(n, "socketpair_sctp")) {
		if (!t_confined() && access("/proc/modules", F_OK) == 0) {
			errno = ENOPKG;
			return -1;
		}
		int sv[2];
		if (!strcmp(n, "inet_sctp"))
			return socket(AF_INET, SOCK_STREAM, 132);
		if (!strcmp(n, "inet6_l2tp"))
			return socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 115);
		if (!strcmp(n, "inet_dccp"))
			return socket(AF_INET, 6 /* SOCK_DCCP */, 33);
		if (!strcmp(n, "socketpair_sctp"))
			return socketpair(AF_INET, SOCK_SEQPACKET, 132, sv);
	}
	if (!strcmp(n, "socketpair_tipc")) {
		int sv[2];
		return socketpair(AF_TIPC, SOCK_SEQPACKET, 0, sv);
	}
	if (!strcmp(n, "chattr")) {
		/* chattr +i is denied by its request class, whatever the fd: on
		 * /dev/null Linux answers ENOTTY, so a moat that let it through
		 * fails this probe. */
		int fd = open("/dev/null", O_RDONLY);
		int flags = FS_IMMUTABLE_FL;
		return ioctl(fd, FS_IOC_SETFLAGS, &flags);
	}
	if (!strcmp(n, "personality"))
		return personality(PER_LINUX | MMAP_PAGE_ZERO) == -1 ? -1 : 0;
	if (!strcmp(n, "fsetxattr")) {
		/* a file of the guest's private /tmp: natively a user attribute
		 * is set; under moat fsetxattr never reaches the host file */
		char path[] = "/tmp/probe-xattr-XXXXXX";
		int fd = mkstemp(path);
		long r;
		if (fd < 0)
			return -2;
		unlink(path);
		r = fsetxattr(fd, "user.moat", "1", 1, 0);
		if (r < 0 && errno == ENOTSUP)
			errno = EPERM;
		return r;
	}
	if (!strcmp(n, "ksm")) {
		/* an anonymous page put under the host's KSM: natively (CONFIG_KSM)
		 * it is registered with the one merger of the host, whose merges
		 * across processes time a neighbour's page contents (red team
		 * 76); under moat EINVAL, as a kernel without KSM. Harmless
		 * natively: a private page of this child, nothing merged unless
		 * the host runs ksmd, and then only with an identical page. */
		void *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		long r;
		if (m == MAP_FAILED)
			return -2;
		r = madvise(m, 4096, MADV_MERGEABLE);
		if (r < 0 && errno == EINVAL)
			errno = ENOSYS; /* no KSM */
		return r;
	}
	if (!strcmp(n, "landlock")) {
		/* a domain handling file reads with no rule: natively every
		 * later read open is EACCES. Under moat the opens are the
		 * sentry's, where the guest's domain never applied (red team
		 * 39): the call must be refused, not pretend to confine. */
		struct landlock_ruleset_attr a = { .handled_access_fs = LANDLOCK_ACCESS_FS_READ_FILE };
		long rs = syscall(SYS_landlock_create_ruleset, &a, sizeof a, 0);
		if (rs < 0)
			return -1;
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || syscall(SYS_landlock_restrict_self, (int)rs, 0) < 0)
			return -1;
		int fd = open("/etc/passwd", O_RDONLY);
		if (fd < 0 && errno == EACCES) {
			errno = EPERM; /* confined as it asked */
			return -1;
		}
		return fd < 0 ? -2 : 0;
	}
	fprintf(stderr, "probe_deny: unknown probe %s\n", n);
	_exit(3);
}

int main(int argc, char **argv)
{
	int failed = 0;
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (int i = 1; i < argc; i++) {
		int p[2];
		pipe(p);
		pid_t pid = fork();
		if (pid == 0) {
			close(p[0]);
			errno = 0;
			long r = attempt(argv[i]);
			int res[2] = {(int)r, r == -1 ? errno : 0};
			write(p[1], res, sizeof(res));
			_exit(0);
		}
		close(p[1]);
		int res[2] = {0, 0}, status = 0;
		ssize_t got = read(p[0], res, sizeof(res));
		close(p[0]);
		waitpid(pid, &status, 0);
		if (WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS)
			printf("ok %s denied: killed by SIGSYS\n", argv[i]);
		else if (!strcmp(argv[i], "int80") && WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV)
			/* The host kernel has no ia32 emulation: int 0x80 faults everywhere. */
			printf("ok %s denied: SIGSEGV (no ia32 emulation)\n", argv[i]);
		else if (got == sizeof(res) && res[0] == -1 &&
			 (res[1] == EPERM || res[1] == ENOSYS || res[1] == EAFNOSUPPORT ||
			  res[1] == EPROTONOSUPPORT || res[1] == ESOCKTNOSUPPORT))
			printf("ok %s denied: %s\n", argv[i], res[1] == EPERM ? "EPERM" :
			       res[1] == ENOSYS ? "ENOSYS" : res[1] == EAFNOSUPPORT ? "EAFNOSUPPORT" :
			       res[1] == EPROTONOSUPPORT ? "EPROTONOSUPPORT" : "ESOCKTNOSUPPORT");
		else if (got == sizeof(res) && res[0] == -1 && res[1] == ESTALE &&
			 !strcmp(argv[i], "open_by_handle_at"))
			/* moat's handles are its own: a made-up (or host) one names nothing */
			printf("ok %s denied: ESTALE\n", argv[i]);
		else {
			failed++;
			if (got == sizeof(res))
				printf("FAIL %s: not denied (returned %d, errno %d %s)\n", argv[i], res[0], res[1],
				       strerror(res[1]));
			else
				printf("FAIL %s: child status %#x\n", argv[i], status);
		}
	}
	return failed ? 1 : 0;
}
