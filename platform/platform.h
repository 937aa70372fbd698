/* platform/platform.h - how the sentry reaches guest tasks.
 *
 * Two channels: seccomp user notification (trapped syscalls answered by the
 * sentry) and ptrace (exec, clone/fork/exit events, signal re-injection).
 * Guest memory is accessed with process_vm_readv/writev (bounded copies).
 * A full-trap ptrace backend could implement the same unotify-shaped calls
 * later (platform_ops below is the seam).
 */
#ifndef MOAT_PLATFORM_PLATFORM_H
#define MOAT_PLATFORM_PLATFORM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/seccomp.h>

/* ---- guest memory ---- */
/* 0 or -EFAULT (short copies are faults). */
int guest_read(pid_t tid, uint64_t addr, void *buf, size_t len);
int guest_write(pid_t tid, uint64_t addr, const void *buf, size_t len);
/* MOAT_PROFILE: set guestmem_profile, then guest_io_take() gives the calling
 * thread's wall ns in guest_write since its last call */
extern int guestmem_profile;
unsigned long long guest_io_take(void);
/* tests: MOAT_TEST_COPYOUT_DELAY (guestmem.c); a branch when off */
extern int guestmem_test_delay_ms, guestmem_test_delay_in;
extern uint64_t guestmem_test_delay_addr;
extern void (*guestmem_test_block)(void);
void guestmem_test_delay(uint64_t addr, int in);
/* tests: MOAT_TEST_TRACER_WRITE_DELAY=MS (set by the tracer on its own
 * thread): each guest_write of that thread (its writes at ptrace stops)
 * sleeps MS first, as a tracer preempted between reading a stopped task's
 * registers and writing below its stack (tracerw); 0 (off) elsewhere */
extern _Thread_local int guestmem_test_tracer_delay_ms;
/* Copy a NUL-terminated string of at most max bytes including the NUL.
 * Returns its length, -EFAULT, or -ENAMETOOLONG if no NUL within max. */
long guest_read_str(pid_t tid, uint64_t addr, char *buf, size_t max);

/* ---- seccomp user notification ---- */
struct notif {
	uint64_t id;
	pid_t pid;
	int nr;
	uint32_t arch;
	uint64_t ip;
	uint64_t args[6];
};
/* Blocks. 0, or -errno (-ENOENT: the task died before we got it; retry). */
int unotify_recv(int nfd, struct notif *n);
/* 0 = still valid, -ENOENT = task gone / call interrupted */
int unotify_id_valid(int nfd, uint64_t id);
/* Reply with a value (>= 0) or an error (< 0 is -errno). 0 or -errno; -ENOENT
 * means the guest is gone or was interrupted: not a failure. */
int unotify_reply(int nfd, uint64_t id, long val);
/* Let the call run natively. Only for calls whose effect does not depend on
 * guest memory we checked (design.md, TOCTOU). */
int unotify_continue(int nfd, uint64_t id);
/* Install srcfd in the guest. send: atomically reply with the new fd number.
 * newfd >= 0: at that number (SECCOMP_ADDFD_FLAG_SETFD). Returns the guest fd
 * number or -errno. */
int unotify_addfd(int nfd, uint64_t id, int srcfd, unsigned fdflags, int newfd, int send);

/* ---- the seam between the pipeline and a platform ----
 * The pipeline (sentry/pipeline.c) reaches trapped calls only through these
 * operations. platform_unotify implements them with seccomp user
 * notification; a full-trap ptrace backend (PTRACE_SYSEMU) would implement the
 * same five calls with the tracer answering from the task's registers. */
struct platform_ops {
	const char *name;
	int (*recv)(int chan, struct notif *n);
	int (*id_valid)(int chan, uint64_t id);
	int (*reply)(int chan, uint64_t id, long val);
	int (*addfd)(int chan, uint64_t id, int srcfd, unsigned fdflags, int newfd, int send);
	int (*cont)(int chan, uint64_t id);
};
extern const struct platform_ops platform_unotify;

/* ---- ptrace ---- */
int ptrace_seize(pid_t pid);
unsigned long ptrace_options(void);

#endif
