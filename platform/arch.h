/* platform/arch.h - everything architecture-specific in one place (x86_64).
 * An aarch64 port adds the same macros under #elif. */
#ifndef MOAT_PLATFORM_ARCH_H
#define MOAT_PLATFORM_ARCH_H

#include <linux/audit.h>
#include <sys/user.h>

#if defined(__x86_64__)
#define MOAT_AUDIT_ARCH AUDIT_ARCH_X86_64
typedef struct user_regs_struct arch_regs;
#define REG_SYSNO(r) ((r).orig_rax)
/* The number as the kernel's entry takes it: do_syscall_64 uses the low 32
 * bits (an int; entry_64.S's movslq), as does seccomp_data.nr, but orig_rax
 * keeps all 64 bits of the guest's rax. Every read of the number at a ptrace
 * stop goes through this (red team 55: clone with bit 32 set ran as clone,
 * and the tracer, comparing all 64 bits, read no flags and took a thread
 * for a process). REG_SYSNO stays for writes and the raw value. */
#define REG_NR(r) ((long)(int)(r).orig_rax)
#define REG_RET(r) ((r).rax)
#define REG_ARG0(r) ((r).rdi)
#define REG_ARG1(r) ((r).rsi)
#define REG_ARG2(r) ((r).rdx)
#define REG_ARG3(r) ((r).r10)
#define REG_ARG4(r) ((r).r8)
#define REG_ARG5(r) ((r).r9)
#define REG_SP(r) ((r).rsp)
#define REG_IP(r) ((r).rip)
#define ARCH_RED_ZONE 128
#else
#error "moat supports x86_64 only for now (see platform/arch.h)"
#endif

#endif
