/*
 * probe_abi: every other way into the kernel on x86_64 (red team 75). Each
 * probe makes one call whose effect would be seen if it ran natively: a
 * file or directory made under DIR (a host path the tier looks at from
 * outside), a socket, a semaphore set, a mapping, a tracer.
 * NOT a differential test: natively every one of these runs.
 *
 *   probe_abi DIR NAME...   NAME: i386_open i386_openat i386_mkdir
 *     i386_execve i386_socketcall i386_ipc i386_mmap i386_ptrace
 *     i386_modify_ldt i386_iopl (int 0x80 from 64-bit code), compat_open
 *     (a far return to the GDT's 32-bit code segment, 0x23, no modify_ldt,
 *     then int 0x80), sysenter_mkdir (sysenter from 64-bit code: on Intel
 *     the kernel's 32-bit fast entry), x32_openat x32_execve x32_ptrace
 *     (__X32_SYSCALL_BIT numbers with x86_64's arch).
 *
 * Prints "ok NAME denied: ..." / "FAIL NAME: ..." per name; exit 0 iff all
 * were denied. Denied = ENOSYS/EPERM, or the child died of a signal having
 * made nothing (sysenter from a 64-bit task returns to a landing pad that is
 * not there: SIGSEGV, the call itself refused first).
 */
#include "t.h"
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>

#ifndef __X32_SYSCALL_BIT
#define __X32_SYSCALL_BIT 0x40000000
#endif

static char *lo;        /* a MAP_32BIT page: strings the 32-bit calls can name */
static const char *dir; /* the host directory the calls would write into */

static char *lo_str(const char *name)
{
	static size_t used;
	char *s = lo + used;
	size_t n = (size_t)snprintf(s, 256, "%s/%s", dir, name) + 1;
	used += (n + 15) & ~(size_t)15;
	return s;
}

static long int80(long nr, long a, long b, long c)
{
	long ret = nr;
	__asm__ volatile("int $0x80" : "+a"(ret) : "b"(a), "c"(b), "d"(c) : "memory");
	return ret;
}

/* 64-bit code that far-returns to the 32-bit user code segment (0x23),
 * there does int 0x80 with eax..edx, and comes back through 0x33 */
static long compat_int80(long nr, long a, long b, long c)
{
	unsigned char *code = mmap(NULL, 8192, PROT_READ | PROT_WRITE | PROT_EXEC,
				   MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
	if (code == MAP_FAILED)
		return -1000;
	unsigned char *p = code;
	uint32_t stack_top = (uint32_t)(uintptr_t)(code + 8192 - 64);
#define B(x) (*p++ = (unsigned char)(x))
#define D(x) do { uint32_t v_ = (uint32_t)(x); memcpy(p, &v_, 4); p += 4; } while (0)
	B(0x53);                         /* push rbx */
	B(0x41); B(0x54);                /* push r12 */
	B(0x49); B(0x89); B(0xe4);       /* mov r12, rsp */
	B(0xbc); D(stack_top);           /* mov esp, stack_top (zero-extends) */
	B(0xb8); D(nr);                  /* mov eax, nr */
	B(0xbb); D(a);                   /* mov ebx, a */
	B(0xb9); D(b);                   /* mov ecx, b */
	B(0xba); D(c);                   /* mov edx, c */
	B(0x6a); B(0x23);                /* push 0x23 */
	unsigned char *fix1 = p + 1;
	B(0x68); D(0);                   /* push compat */
	B(0x48); B(0xcb);                /* retfq */
	uint32_t compat = (uint32_t)(uintptr_t)p;
	memcpy(fix1, &compat, 4);
	B(0xcd); B(0x80);                /* int 0x80 (32-bit code) */
	B(0x6a); B(0x33);                /* push 0x33 */
	unsigned char *fix2 = p + 1;
	B(0x68); D(0);                   /* push back */
	B(0xcb);                         /* retf */
	uint32_t back = (uint32_t)(uintptr_t)p;
	memcpy(fix2, &back, 4);
	B(0x48); B(0x63); B(0xc0);       /* movsxd rax, eax */
	B(0x4c); B(0x89); B(0xe4);       /* mov rsp, r12 */
	B(0x41); B(0x5c);                /* pop r12 */
	B(0x5b);                         /* pop rbx */
	B(0xc3);                         /* ret */
#undef B
#undef D
	long (*fn)(void) = (long (*)(void))(void *)code;
	return fn();
}

/* sysenter from 64-bit code, as the 32-bit vDSO does it: the user stack in
 * ebp (a readable 32-bit address: the kernel fetches the sixth argument
 * there, or fails the call with EFAULT before the filter sees it); it comes
 * back to a landing pad a 64-bit task does not have (SIGSEGV) */
static long sysenter_call(long nr, long a, long b, long c)
{
	uint32_t sp = (uint32_t)(uintptr_t)(lo + 4096 - 64);
	long ret = nr;
	__asm__ volatile("mov %%rbp, %%r12\n\tmov %5, %%ebp\n\tsysenter\n\tmov %%r12, %%rbp"
			 : "+a"(ret) : "b"(a), "c"(b), "d"(c), "S"(0L), "r"(sp) : "r12", "memory");
	return ret;
}

static long attempt(const char *n)
{
	if (!strcmp(n, "i386_open"))
		return int80(5, (long)lo_str("i386_open"), O_CREAT | O_WRONLY, 0600);
	if (!strcmp(n, "i386_openat"))
		return int80(295, AT_FDCWD, (long)lo_str("i386_openat"), O_CREAT | O_WRONLY);
	if (!strcmp(n, "i386_mkdir"))
		return int80(39, (long)lo_str("i386_mkdir"), 0700, 0);
	if (!strcmp(n, "i386_execve")) {
		char *path = lo_str("x");
		strcpy(path, "/bin/true");
		return int80(11, (long)path, 0, 0);
	}
	if (!strcmp(n, "i386_socketcall")) {
		uint32_t *args = (uint32_t *)(void *)lo_str("sockargs");
		args[0] = AF_INET;
		args[1] = SOCK_DGRAM;
		args[2] = 0;
		return int80(102, 1 /* SYS_SOCKET */, (long)args, 0);
	}
	if (!strcmp(n, "i386_ipc")) {
		long r = int80(117, 2 /* SEMGET */, 0 /* IPC_PRIVATE */, 1);
		if (r >= 0)
			syscall(SYS_semctl, r, 0, 0 /* IPC_RMID */);
		return r;
	}
	if (!strcmp(n, "i386_mmap")) {
		uint32_t *a = (uint32_t *)(void *)lo_str("mmapargs");
		a[0] = 0;
		a[1] = 4096;
		a[2] = PROT_READ;
		a[3] = MAP_PRIVATE | MAP_ANONYMOUS;
		a[4] = (uint32_t)-1;
		a[5] = 0;
		return int80(90, (long)a, 0, 0);
	}
	if (!strcmp(n, "i386_ptrace"))
		return int80(26, 0 /* PTRACE_TRACEME */, 0, 0);
	if (!strcmp(n, "i386_modify_ldt"))
		return int80(123, 0 /* read */, (long)lo_str("ldt"), 16);
	if (!strcmp(n, "i386_iopl"))
		return int80(110, 0, 0, 0); /* iopl(0): allowed to anyone natively */
	if (!strcmp(n, "compat_open"))
		return compat_int80(5, (long)lo_str("compat_open"), O_CREAT | O_WRONLY, 0600);
	if (!strcmp(n, "sysenter_mkdir"))
		return sysenter_call(39, (long)lo_str("sysenter_mkdir"), 0700, 0);
	if (!strcmp(n, "x32_openat")) {
		long r = syscall(__X32_SYSCALL_BIT | 257, AT_FDCWD, lo_str("x32_openat"), O_CREAT | O_WRONLY, 0600);
		return r < 0 ? -errno : r;
	}
	if (!strcmp(n, "x32_execve")) {
		long r = syscall(__X32_SYSCALL_BIT | 520, "/bin/true", NULL, NULL);
		return r < 0 ? -errno : r;
	}
	if (!strcmp(n, "x32_ptrace")) {
		long r = syscall(__X32_SYSCALL_BIT | 521, 0 /* PTRACE_TRACEME */, 0, 0, 0);
		return r < 0 ? -errno : r;
	}
	return -EINVAL;
}

int main(int argc, char **argv)
{
	int failed = 0;

	if (argc < 3)
		return fprintf(stderr, "usage: probe_abi DIR NAME...\n"), 2;
	dir = argv[1];
	lo = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
	if (lo == MAP_FAILED)
		return perror("mmap MAP_32BIT"), 2;
	for (int i = 2; i < argc; i++) {
		int p[2], status = 0;
		long res = 0;
		if (pipe(p))
			return 2;
		fflush(stdout);
		pid_t pid = fork();
		if (pid == 0) {
			close(p[0]);
			res = attempt(argv[i]);
			write(p[1], &res, sizeof res);
			_exit(0);
		}
		close(p[1]);
		ssize_t got = read(p[0], &res, sizeof res);
		close(p[0]);
		waitpid(pid, &status, 0);
		if (got == sizeof res && (res == -ENOSYS || res == -EPERM))
			printf("ok %s denied: %s\n", argv[i], res == -ENOSYS ? "ENOSYS" : "EPERM");
		else if (got != sizeof res && WIFSIGNALED(status))
			printf("ok %s denied: killed by signal %d\n", argv[i], WTERMSIG(status));
		else {
			failed++;
			printf("FAIL %s: %s %ld status %#x\n", argv[i], got == sizeof res ? "returned" : "no result",
			       res, status);
		}
	}
	return failed ? 1 : 0;
}
