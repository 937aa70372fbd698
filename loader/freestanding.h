/* loader/freestanding.h - what the freestanding programs (the loader,
 * reopen/reopen_main.c: no libc) share: the raw x86-64 system call. */
#ifndef MOAT_LOADER_FREESTANDING_H
#define MOAT_LOADER_FREESTANDING_H

static inline long sys6(long nr, long a, long b, long c, long d, long e, long f)
{
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	register long r9 __asm__("r9") = f;
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(nr), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	return ret;
}

#endif
