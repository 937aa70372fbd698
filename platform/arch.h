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
