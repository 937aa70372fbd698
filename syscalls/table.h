/* syscalls/table.h - the declarative syscall table (single source of truth).
 *
 * syscalls/syscall_table.def has one row per x86_64 syscall:
 *
 *   SYSCALL(nr, name, ARGS(kind, ...), class, handler, status, "note")
 *
 * and is #included by: the seccomp filter generator (sentry/filter.c), the
 * dispatcher (sentry/pipeline.c), the trace/audit decoder (syscalls/decode.c),
 * `moat syscalls` (the compatibility listing) and the tests.
 *
 *  class    what the seccomp filter does                      who answers
 *  FAST     SECCOMP_RET_ALLOW (runs natively)                 host kernel
 *  EMULATE  SECCOMP_RET_USER_NOTIF                            handler in the sentry
 *  EXEC     SECCOMP_RET_TRACE                                 sentry ptrace thread
 *  DENY     SECCOMP_RET_USER_NOTIF (so it is audited)         -errno from the row
 *  KILL     SECCOMP_RET_KILL_PROCESS                          -
 *
 * A FAST row may carry argument rules that send some calls to the sentry to
 * be denied with the row's errno: a deny list (`deny`: the calls matching a
 * rule, e.g. ioctl(TIOCSTI)) or an allow list (`allow`: every call that
 * matches none of its entries, e.g. socket families other than AF_UNIX,
 * AF_INET, AF_INET6 and NETLINK_ROUTE). With `argtrap` set
 * (FAST_TRAP) the calls matching `deny` go to the row's handler instead,
 * e.g. the lock commands of fcntl.
 * Unknown numbers are denied with ENOSYS and audited by the sentry; 32-bit
 * (int 0x80) and x32 entry points are answered ENOSYS by the filter itself,
 * so they never reach the sentry and are not audited.
 */
#ifndef MOAT_SYSCALLS_TABLE_H
#define MOAT_SYSCALLS_TABLE_H

#include <stdint.h>
#include <stddef.h>
#include <stdio.h>

struct sc_call;
typedef long (*sc_handler_fn)(struct sc_call *c);

enum sc_class { SC_FAST = 1, SC_EMULATE, SC_EXEC, SC_DENY, SC_KILL };

/* Support status, as in gVisor's table. */
enum sc_status { ST_FULL = 1, ST_PARTIAL, ST_NONE };

/* Argument kinds: drive copy-in (PATH, STR, OPEN_HOW, ...: the pipeline copies
 * these ONCE before policy and handler) and decoding for --trace/--audit. */
enum sc_argkind {
	A_NONE = 0,
	A_INT,      /* signed decimal */
	A_UINT,     /* unsigned decimal */
	A_HEX,      /* 0x... */
	A_PTR,      /* guest pointer, printed 0x..., not dereferenced */
	A_FD,       /* file descriptor; AT_FDCWD decoded */
	A_DIRFD,    /* same as FD but names AT_FDCWD */
	A_PATH,     /* NUL-terminated path, copied in (max PATH_MAX) */
	A_STR,      /* other NUL-terminated string, copied in (max 4096) */
	A_OFLAGS,   /* O_* flags */
	A_MODE,     /* octal mode */
	A_ATFLAGS,  /* AT_* flags */
	A_PROT,     /* PROT_* */
	A_MMAPFLAGS,/* MAP_* */
	A_SIGNUM,   /* SIGxxx */
	A_CLONEFLAGS,
	A_OPEN_HOW, /* struct open_how *, size in next arg; copied in */
	A_SIZE,     /* size_t */
	A_OFF,      /* off_t */
	A_IOCTL,    /* ioctl request */
	A_FCNTL,    /* fcntl command */
	A_SOCKADDR, /* struct sockaddr *, len in next arg; copied in */
	A_ARGV,     /* char *const[]: decoded as ["a", "b", ...] (exec only) */
	A_RENAMEFLAGS,
	A_STATXMASK,
	A_WHENCE,
	A_FAMILY,   /* AF_* address family */
	A_SOCKTYPE, /* SOCK_* type | SOCK_NONBLOCK | SOCK_CLOEXEC */
	A_SOCKPROTO,/* protocol, named after the family in arg 0 (NETLINK_*, IPPROTO_*) */
	A_PERSONA,  /* personality(2) value */
};

#define SC_MAXARGS 6

/* A FAST syscall may have a few (arg index, value) pairs that must not run
 * natively: these calls are sent to the sentry and denied with `errno`
 * (FAST_EXCEPT), or handled by the row's handler (FAST_TRAP). */
struct sc_argdeny {
	int8_t arg;      /* argument index, -1 terminates */
	uint8_t and_next;/* 1: holds only together with the next entry (a
			  * conjunction, RULE_AND): a chain of entries matches
			  * when all of them do; the chain's last has 0 */
	uint64_t value;  /* argument equal to this is denied */
	uint64_t mask;   /* compare (arg & mask) == value; 0 means full compare */
};

/* An allow-list entry of a FAST row: the call runs natively when every
 * comparison of one entry holds ((arg & mask) == value, mask 0 = all 64
 * bits); a list ends with ncmp == 0. Calls matching no entry go to the
 * sentry and are denied with the row's errno. */
#define SC_ALLOW_MAXCMP 3
struct sc_argallow {
	uint8_t ncmp;
	struct sc_argdeny cmp[SC_ALLOW_MAXCMP];
};

struct sysent {
	int nr;                       /* x86_64 number */
	const char *name;
	uint8_t nargs;
	uint8_t args[SC_MAXARGS];     /* enum sc_argkind */
	uint8_t cls;                  /* enum sc_class */
	uint8_t status;               /* enum sc_status */
	int16_t err;                  /* DENY: positive errno to return */
	sc_handler_fn handler;        /* EMULATE: the handler, else NULL */
	const char *handler_name;     /* "sys_openat" or "" */
	const char *note;
	const struct sc_argdeny *deny;/* FAST only: deny rules, or NULL */
	const struct sc_argallow *allow;/* FAST only: allow list, or NULL */
	uint8_t argtrap;              /* FAST_TRAP: calls matching `deny` go to
				       * `handler` (not denied with `err`) */
	const struct sc_argallow *trap_nonet;/* FAST_TRAP_UNLESS_NET: the
				       * allow list is moat-netd's; without it
				       * native but for these entries, or NULL */
};

/* Highest x86_64 number in the table + 1. */
#define SC_NR_MAX 512

/* Rows indexed by number; a hole (unknown number) has name == NULL. */
extern const struct sysent sc_table[SC_NR_MAX];

/* Row for nr, or NULL if unknown/out of range. */
const struct sysent *sc_lookup(long nr);
/* Row for a name, or NULL. */
const struct sysent *sc_lookup_name(const char *name);
/* --deny NAME: NAME and the calls that do its work through another entry
 * point (open: openat, openat2, creat; kill: tkill, tgkill,
 * pidfd_send_signal...). Sets deny[nr] = 1 for each (deny has SC_NR_MAX
 * entries); returns how many it set, or -1 for an unknown name. */
int sc_deny_family(const char *name, unsigned char *deny);

/* The TOCTOU rule (syscalls/table.c): the rows a user notification may
 * answer CONTINUE (the kernel runs the call), each decided on registers;
 * reads: 1 when its handler may read the caller's memory before (an
 * exception, with why). Also the rows resumed after a ptrace stop that read
 * memory the kernel reads again (sc_toctou_exceptions_get). */
struct sc_cont {
	int nr;
	uint8_t reads;
	const char *why;
};
const struct sc_cont *sc_cont_row(int nr);
size_t sc_cont_rows_get(const struct sc_cont **rows);
size_t sc_toctou_exceptions_get(const struct sc_cont **rows);
/* 1: a call of row nr that made mem_read reads of the caller's memory may be
 * answered CONTINUE; 0: the pipeline refuses it */
int sc_cont_allowed(int nr, int mem_read);

const char *sc_class_name(int cls);
const char *sc_status_name(int status);

/* Print the compatibility listing (`moat syscalls`): format "table" or "csv"
 * or "json". Returns 0 or -EINVAL for an unknown format. */
int sc_print_listing(FILE *out, const char *format);

/* The configuration of the kernel the guest runs on, as /proc/config.gz
 * shows it (LTP and other test suites read it to skip what a kernel lacks):
 * moat's own, never the host's. An option that stands for a system call is
 * "y" when the table lets that call do its work (FAST, EMULATE, EXEC) and
 * "is not set" when it denies it; the rest are fixed. Writes at most len
 * bytes of text into buf; returns the text's full length. */
size_t sc_kconfig_text(char *buf, size_t len);
/* Probe the host for the options native calls reach (KSM, THP): once,
 * before the sentry gives up the host's view. */
void sc_kconfig_probe_host(void);

#endif
