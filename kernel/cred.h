/* kernel/cred.h - virtual credentials: ids, supplementary groups,
 * capabilities, and Linux's transition rules for the set*id family.
 *
 * Pure functions on a struct cred (no locking: the caller holds the task's
 * lock). Every transition follows kernel/sys.c and capabilities(7):
 *  - ruid/euid/suid/fsuid (and the gid four) with Linux's EPERM rules; an
 *    unprivileged caller may only move between its real, effective and saved
 *    ids; CAP_SETUID / CAP_SETGID in the effective set lift that;
 *  - every change of euid sets fsuid = euid (setfsuid changes fsuid only);
 *  - cap_emulate_setxuid: when ruid, euid or suid was 0 and none of them is 0
 *    any more, the permitted, effective and ambient sets are cleared unless
 *    SECBIT_KEEP_CAPS (prctl PR_SET_KEEPCAPS) is set (then only effective and
 *    ambient are); euid 0 -> nonzero clears the effective set; euid nonzero ->
 *    0 sets effective = permitted; fsuid 0 -> nonzero drops the file-system
 *    capabilities from the effective set, nonzero -> 0 raises them from the
 *    permitted set;
 *  - exec (cred_exec): suid = euid, fsuid = euid; root (ruid or euid 0) gets
 *    permitted = bounding, effective = permitted if euid is 0; anyone else
 *    keeps only its ambient set; KEEP_CAPS is cleared.
 *
 * Which capabilities a root guest has inside is defined here, once:
 * CRED_CAPS_GRANTED (Docker's default set and CAP_SYS_NICE). Every other capability is out of
 * the bounding set from the start, so no guest can ever hold it.
 */
#ifndef MOAT_KERNEL_CRED_H
#define MOAT_KERNEL_CRED_H

#include <stdint.h>
#include <sys/types.h>

#define CRED_NGROUPS_MAX 65536
#define CRED_CAP_LAST 40          /* CAP_CHECKPOINT_RESTORE, Linux 5.9+ */
#define CRED_CAP_ALL ((1ULL << (CRED_CAP_LAST + 1)) - 1)
#define CRED_BIT(n) (1ULL << (n))

/* The capabilities of root inside the sandbox (what capget shows, what the
 * sentry honours): Docker's default set and CAP_SYS_NICE. What each one does here:
 *   CAP_CHOWN, CAP_DAC_OVERRIDE, CAP_FOWNER, CAP_FSETID: the VFS's root
 *     override on the sandbox's own (private) files; never on host files
 *     (ARCHITECTURE.md, "Permission model");
 *   CAP_SETUID, CAP_SETGID, CAP_SETPCAP: the set*id family, setgroups, capset;
 *   CAP_SYS_NICE: the virtual real-time and deadline classes
 *     (syscalls/sys_sched.c) and the owner rule of sched_*, setpriority and
 *     ioprio_set on other guest tasks; the host's nice floor stays (a
 *     negative nice is still the host's EACCES, as without it);
 *   CAP_KILL, CAP_NET_BIND_SERVICE, CAP_NET_RAW, CAP_MKNOD, CAP_SYS_CHROOT,
 *   CAP_AUDIT_WRITE, CAP_SETFCAP: listed for programs that check them;
 *     the calls they guard are native (own namespaces), emulated or denied
 *     whatever the set says.
 * Never granted (out of the bounding set): CAP_DAC_READ_SEARCH (no host-wide
 * read), CAP_LINUX_IMMUTABLE, CAP_NET_BROADCAST, CAP_NET_ADMIN, CAP_IPC_LOCK,
 * CAP_IPC_OWNER, CAP_SYS_MODULE, CAP_SYS_RAWIO, CAP_SYS_PTRACE, CAP_SYS_PACCT,
 * CAP_SYS_ADMIN, CAP_SYS_BOOT, CAP_SYS_RESOURCE, CAP_SYS_TIME,
 * CAP_SYS_TTY_CONFIG, CAP_LEASE, CAP_AUDIT_CONTROL, CAP_MAC_OVERRIDE,
 * CAP_MAC_ADMIN, CAP_SYSLOG, CAP_WAKE_ALARM, CAP_BLOCK_SUSPEND,
 * CAP_AUDIT_READ, CAP_PERFMON, CAP_BPF, CAP_CHECKPOINT_RESTORE.
 * (sethostname/setdomainname are allowed to a guest with euid 0 without
 * CAP_SYS_ADMIN: the sandbox's uts names are its own.) */
#define CRED_CAPS_GRANTED (CRED_BIT(0) /* CHOWN */ | CRED_BIT(1) /* DAC_OVERRIDE */ | \
	CRED_BIT(3) /* FOWNER */ | CRED_BIT(4) /* FSETID */ | CRED_BIT(5) /* KILL */ | \
	CRED_BIT(6) /* SETGID */ | CRED_BIT(7) /* SETUID */ | CRED_BIT(8) /* SETPCAP */ | \
	CRED_BIT(10) /* NET_BIND_SERVICE */ | CRED_BIT(13) /* NET_RAW */ | \
	CRED_BIT(18) /* SYS_CHROOT */ | CRED_BIT(23) /* SYS_NICE */ | CRED_BIT(27) /* MKNOD */ | \
	CRED_BIT(29) /* AUDIT_WRITE */ | CRED_BIT(31) /* SETFCAP */)

/* capabilities cleared/raised with fsuid (CAP_FS_MASK in Linux) */
#define CRED_CAPS_FS (CRED_BIT(0) | CRED_BIT(1) | CRED_BIT(2) | CRED_BIT(3) | \
	CRED_BIT(4) | CRED_BIT(9) | CRED_BIT(27) | CRED_BIT(32))

#define CRED_CAP_CHOWN 0
#define CRED_CAP_DAC_OVERRIDE 1
#define CRED_CAP_FOWNER 3
#define CRED_CAP_FSETID 4
#define CRED_CAP_KILL 5
#define CRED_CAP_MKNOD 27
#define CRED_CAP_SYS_NICE 23
#define CRED_CAP_SYS_RESOURCE 24
#define CRED_CAP_SETGID 6
#define CRED_CAP_SETUID 7
#define CRED_CAP_SETPCAP 8
#define CRED_CAP_SYS_CHROOT 18
#define CRED_CAP_SYS_ADMIN 21

/* securebits (linux/securebits.h): the ones modelled, with their locks
 * (SECBIT_NOROOT and SECBIT_NO_SETUID_FIXUP are refused) */
#define CRED_SECBIT_KEEP_CAPS (1u << 4)               /* SECURE_KEEP_CAPS */
#define CRED_SECBIT_KEEP_CAPS_LOCKED (1u << 5)
#define CRED_SECBIT_NO_CAP_AMBIENT_RAISE (1u << 6)
#define CRED_SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED (1u << 7)
#define CRED_SECBIT_MODELLED 0xf0u
#define CRED_SECBIT_LOCKS (CRED_SECBIT_KEEP_CAPS_LOCKED | CRED_SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED)

struct cred {
	uid_t ruid, euid, suid, fsuid;
	gid_t rgid, egid, sgid, fsgid;
	uint64_t cap_inh, cap_prm, cap_eff, cap_bnd, cap_amb;
	unsigned securebits;
	/* Linux's mm dumpable flag, kept with the virtual ids (the host's never
	 * changes with them): set by a change of euid/egid/fsuid/fsgid or a
	 * gain of permitted capabilities (commit_creds, suid_dumpable 0), by
	 * PR_SET_DUMPABLE 0; cleared by exec when ruid==euid and rgid==egid;
	 * copied at fork. The ptrace access check refuses a non-dumpable
	 * target (pidfd_getfd, process_vm_*, kcmp, get_robust_list). */
	unsigned char nondump;
	/* no_new_privs as the guest set it (PR_SET_NO_NEW_PRIVS: for good,
	 * copied at fork, kept by exec); the host's is always set (moat's
	 * filter needs it): PR_GET_NO_NEW_PRIVS and the seccomp filter rule
	 * (no_new_privs or CAP_SYS_ADMIN, else EACCES) read this one */
	unsigned char nnp;
	struct cred_groups *groups; /* NULL: none; shared, immutable, counted */
};

/* Supplementary groups: immutable once made, shared by copies (refcount). */
struct cred_groups {
	_Atomic int refs;
	int n;
	gid_t g[];                /* sorted */
};

/* Start: all ids uid/gid, no supplementary groups; root gets the granted set. */
void cred_init(struct cred *c, uid_t uid, gid_t gid);
/* Copy (takes a reference on the groups); cred_free drops it. */
void cred_copy(struct cred *dst, const struct cred *src);
void cred_free(struct cred *c);
static inline int cred_ngroups(const struct cred *c) { return c->groups ? c->groups->n : 0; }

int cred_capable(const struct cred *c, int cap);
/* Is gid the fsgid or one of the supplementary groups? */
int cred_in_group(const struct cred *c, gid_t gid);

/* Transitions: 0 or -errno (c unchanged on error). -1 means "unchanged". */
/* commit_creds's rule: old -> new changes the euid, egid, fsuid or fsgid or
 * gains permitted capabilities (Linux then makes the process non-dumpable
 * and clears the parent-death signal) */
int cred_commit_resets(const struct cred *old, const struct cred *c);
int cred_setuid(struct cred *c, uid_t uid);
int cred_setgid(struct cred *c, gid_t gid);
int cred_setreuid(struct cred *c, uid_t r, uid_t e);
int cred_setregid(struct cred *c, gid_t r, gid_t e);
int cred_setresuid(struct cred *c, uid_t r, uid_t e, uid_t s);
int cred_setresgid(struct cred *c, gid_t r, gid_t e, gid_t s);
/* setfsuid/setfsgid return the old value whatever happens (Linux). */
uid_t cred_setfsuid(struct cred *c, uid_t fsuid);
gid_t cred_setfsgid(struct cred *c, gid_t fsgid);
/* groups: n entries, copied and sorted. */
int cred_setgroups(struct cred *c, int n, const gid_t *groups);
/* capset for the caller itself (capabilities(7) rules). */
int cred_capset(struct cred *c, uint64_t eff, uint64_t prm, uint64_t inh);
void cred_exec(struct cred *c);

#endif
