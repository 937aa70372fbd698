/* loader/loader_abi.h - the contract between the sentry and the loader.
 *
 * Exec flow (design.md "Exec"): the guest calls execve(path, argv, envp).
 * The filter returns SECCOMP_RET_TRACE; the sentry (ptrace tracer) reads the
 * path once, resolves it through the VFS (following #! chains), gets host fds
 * for the final ELF and its PT_INTERP from the gofer, stores them as the
 * task's *pending exec*, and rewrites the call to execve(MOAT_LOADER_PATH,
 * argv, envp) with argv/envp pointers untouched. The kernel therefore copies
 * the guest's argv and envp exactly as the guest passed them.
 *
 * The loader (freestanding static-pie, no libc) then calls
 *     syscall(MOAT_SYS_LOADER, MOAT_LOADER_GET, buf, buflen)
 * The seccomp filter sends this unknown syscall number to the sentry, which
 * fills buf with a struct moat_exec_info, installs the pending fds into the
 * loader (SECCOMP_IOCTL_NOTIF_ADDFD) and returns the number of the last fd
 * it installed, with that install (ADDFD_FLAG_SEND: one wake-up of the
 * loader fewer than an install and a separate answer); the info names that
 * fd MOAT_EXEC_FD_RET (the interpreter's, or a static program's own)
 * (or -errno; -ENOSYS unless the task has a pending exec and this is the
 * first such call since its PTRACE_EVENT_EXEC: the sentry serves it once,
 * to the image the exec just started; a failed exec drops the pending
 * exec). The loader retries on -EINTR (the guest's filter waits killably
 * once the sentry has received the call, so only a fatal signal interrupts
 * it then).
 *
 * The loader then:
 *  - maps the PT_LOAD segments of prog_fd (ET_EXEC at its addresses, which
 *    must be free - MAP_FIXED_NOREPLACE; ET_DYN at a base the kernel picks,
 *    aligned to the largest PT_LOAD p_align) and, if interp_fd >= 0, of the
 *    interpreter. Segments are file-backed MAP_PRIVATE|MAP_FIXED mappings
 *    (shared with the page cache); bss is zeroed to the end of its first
 *    page and mapped anonymous beyond; a segment that cannot be mapped
 *    (offset not congruent with its address, fd without mmap, noexec host
 *    mount) is copied with pread64 instead; two segments sharing a page
 *    get both contents and the union of their permissions;
 *  - builds the program's initial stack: argc/argv = the prefix strings from
 *    the info followed by its own argv[skip..] (for plain ELF: prefix_count=0,
 *    skip=0, i.e. argv exactly as the kernel copied it), envp = its own envp,
 *    auxv = its own auxv with AT_PHDR, AT_PHENT, AT_PHNUM, AT_ENTRY, AT_BASE
 *    (0 without an interpreter), AT_EXECFN (-> a copy of info's execfn
 *    string) replaced, and AT_UID, AT_EUID, AT_GID, AT_EGID, AT_SECURE set
 *    from the info's (the virtual ids; red team 25: the kernel's were the
 *    host ids of its exec of the loader, and AT_SECURE never 1, so ld.so
 *    honoured LD_PRELOAD in an exec with ruid != euid); AT_RANDOM (the
 *    same 16 bytes), AT_SYSINFO_EHDR, AT_HWCAP*, AT_PAGESZ, AT_CLKTCK, AT_PLATFORM,
 *    AT_MINSIGSTKSZ and any other entry kept. The new stack replaces the old
 *    one in place; the argv and envp strings end where the kernel put them,
 *    so for a plain exec they stay at the kernel's arg_start..env_end
 *    (host /proc/pid/cmdline and environ remain right); a rebuilt argv
 *    shorter than the kernel's starts at arg_start instead, zeros after
 *    it up to env_start (cmdline never shows the vectors below it);
 *  - sets its name with prctl(PR_SET_NAME, info comm) so ps shows the program;
 *  - closes prog_fd and interp_fd; when the info says `confirm` (a file of
 *    the chain the task may not read: an exec-only program or interpreter)
 *    it then calls syscall(MOAT_SYS_LOADER, MOAT_LOADER_CLOSED, prog_fd,
 *    interp_fd) and runs the program only when the answer is
 *    MOAT_LOADER_CLOSED_OK: the guest's own seccomp filters outlive the exec
 *    and apply to the loader's calls, and one that answers close() with
 *    RET_ERRNO(0) kept the fds open into the program, which then read the
 *    whole file it may not read (red team 38). The sentry looks at the
 *    loader's fd table itself (pidfd_getfd of those numbers) and kills the
 *    task when one is still open. A filter can fake any answer, but only as
 *    0 or -errno: the positive MOAT_LOADER_CLOSED_OK comes from the sentry
 *    alone;
 *  - jumps to the interpreter's entry (or the program's) with rsp at argc,
 *    every other general register zero (rdx = 0: no atexit function),
 *    rflags clear, and the FPU/SSE state as the kernel left it at exec (the
 *    loader is built -mgeneral-regs-only).
 * On any error it writes "moat-loader: <reason>[ (errno N)]\n" to fd 2 and
 * exits 127. (Late errors are unavoidable: the old image is gone, like a
 * kernel SIGSEGV.)
 *
 * The loader makes no syscall but mmap, munmap, mprotect, pread64, read,
 * close, prctl(PR_SET_NAME), write (fd 2, errors), exit_group and
 * MOAT_SYS_LOADER; the guest filter must allow these for it natively.
 * The loader's own image (< 16 KiB, text and .dynamic) stays mapped.
 */
#ifndef MOAT_LOADER_ABI_H
#define MOAT_LOADER_ABI_H

#include <stdint.h>

/* Path of the loader inside the guest's native mount namespace, which is an
 * empty read-only tmpfs holding only this file. Short, so it fits below the
 * red zone of any stack. */
#define MOAT_LOADER_PATH "/l"

/* Syscall number the filter routes to the sentry (not a Linux syscall). */
#define MOAT_SYS_LOADER 0x6d6f /* 28015, "mo" */
#define MOAT_LOADER_GET 1
/* the loader's fds are closed (args: prog_fd, interp_fd or -1); only after a
 * GET whose info said confirm, once. The sentry's answer when it found them
 * closed: positive, which no seccomp RET_ERRNO (0 or -errno) can fake */
#define MOAT_LOADER_CLOSED 2
#define MOAT_LOADER_CLOSED_OK 0x6d6f6174L

#define MOAT_EXEC_MAGIC 0x6d6f6174u /* "moat" */
#define MOAT_EXEC_VERSION 4
#define MOAT_EXEC_INFO_MAX 65536
/* prog_fd or interp_fd: the fd is the call's return value (installed with
 * the answer, after the info was written) */
#define MOAT_EXEC_FD_RET (-2)

/* Filled by the sentry into the loader's buffer (the loader passes
 * MOAT_EXEC_INFO_MAX bytes; a sentry whose info does not fit returns
 * -E2BIG). Every *_off must point inside strings[0..strings_len) at a
 * NUL-terminated string (prefix_off at prefix_count consecutive ones), and
 * skip must not exceed the loader's argc, or the loader fails with
 * "bad exec info". comm is truncated to 15 bytes by PR_SET_NAME. */
struct moat_exec_info {
	uint32_t magic;        /* MOAT_EXEC_MAGIC */
	uint32_t version;      /* MOAT_EXEC_VERSION */
	uint32_t len;          /* bytes of the info written (this header and strings[]) */
	int32_t prog_fd;       /* ELF to run, installed in the loader (cloexec), or
				* MOAT_EXEC_FD_RET */
	int32_t interp_fd;     /* its PT_INTERP (or MOAT_EXEC_FD_RET), or -1 for a
				* static binary */
	uint32_t prefix_count; /* argv strings to put first (#! interpreters) */
	uint32_t skip;         /* how many of the loader's own argv to drop */
	uint32_t prefix_off;   /* offset in strings[] of prefix_count NUL-terminated strings */
	uint32_t execfn_off;   /* offset in strings[] of AT_EXECFN (path as passed to execve) */
	uint32_t comm_off;     /* offset in strings[] of the task name (<= 15 chars) */
	/* the task's virtual ids after the exec and Linux's secureexec (the
	 * kernel's AT_UID, AT_EUID, AT_GID, AT_EGID, AT_SECURE are those of
	 * its native exec of the loader: the same host ids for every task,
	 * never secure); version 3 */
	uint32_t uid, euid, gid, egid, secure;
	/* version 4: 1 when a file of the chain is one the task may not read
	 * (the task is not dumpable): confirm the fds closed (MOAT_LOADER_CLOSED) */
	uint32_t confirm;
	uint32_t strings_len;  /* bytes in strings[] */
	char strings[];
};

#endif
