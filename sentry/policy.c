/* sentry/policy.c - the compiled policy and its one check point.
 *
 * This first policy is what the syscall table and the mount table say: DENY
 * rows are denied with their errno, FAST rows whose arguments match a deny
 * rule (ioctl TIOCSTI...) or match no entry of their allow list (socket
 * families) are denied with the row's errno (FAST_TRAP rows' matching calls,
 * e.g. fcntl's lock commands, go to their handler), writes to read-only mounts
 * are EROFS (enforced in the VFS, which is part of the compiled policy via
 * the mount table text). The version is an xxHash of everything that defines
 * behaviour: the guest's BPF program and the mount table. Later policies
 * (paths, network destinations, exec targets) plug in here. */
#include "sentry/sentry.h"
#include "syscalls/sc.h"
#include "syscalls/filter.h"
#include "common/util.h"

#include <errno.h>
#include <sys/ioctl.h>
#include <linux/sockios.h>
#include <sys/syscall.h>
#include <stdio.h>
#include <string.h>

struct policy {
	uint64_t version;
	unsigned char deny[SC_NR_MAX];   /* --deny */
	unsigned char *blob;
	size_t len;
};

struct policy *policy_new(void)
{
	return xcalloc(1, sizeof(struct policy));
}

void policy_add(struct policy *p, const void *data, size_t len)
{
	unsigned char *n = realloc(p->blob, p->len + len);
	if (!n)
		return;
	memcpy(n + p->len, data, len);
	p->blob = n;
	p->len += len;
	p->version = moat_hash(p->blob, p->len);
}

uint64_t policy_version(struct policy *p)
{
	return p ? p->version : 0;
}

void policy_deny_syscall(struct policy *p, int nr)
{
	if (nr >= 0 && nr < SC_NR_MAX && !p->deny[nr]) {
		char rule[48];
		int n = snprintf(rule, sizeof rule, "deny %d;", nr);
		p->deny[nr] = 1;
		policy_add(p, rule, (size_t)n); /* part of the version */
	}
}

int policy_check(struct policy *p, struct sc_call *c, int *err)
{
	const struct sysent *e = c->ent;
	if (c->nr >= 0 && c->nr < SC_NR_MAX && p->deny[c->nr]) {
		*err = EPERM;
		return DEC_DENY;
	}
	switch (e->cls) {
	case SC_DENY:
		*err = e->err > 0 ? e->err : ENOSYS;
		return DEC_DENY;
	case SC_KILL:
		*err = ENOSYS;
		return DEC_KILL;
	case SC_FAST:
		/* A FAST call reaches the sentry only when a deny rule matched
		 * or no allow-list entry did (the filter and this check share
		 * the compare: sc_args_native). FAST_TRAP rows hand the calls
		 * matching their rules to their handler. */
		if (e->argtrap && e->handler && sc_argtrap_match(e, c->args)) {
			/* ioctl's rules are deny rules but for TIOCSCTTY and a
			 * pty master's requests (sc_ioctl_pts_only),
			 * FIOSETOWN/SIOCSPGRP, which its handler checks,
			 * PROCMAP_QUERY and the pidfd namespace requests
			 * _IO(0xFF, 1..10) (syscalls/sys_tty.c), and the
			 * socket interface/wireless classes 0x89xx/0x8Bxx
			 * (netconn_if_ioctl: a moat-netd socket is the host's),
			 * and the file-information reads sc_ioctl_fileinfo
			 * names (EBADF on an O_PATH stand-in, else native),
			 * and a file system's identity reads
			 * (sc_ioctl_fsidentity: ENOTTY, red team 30), and
			 * PIDFD_GET_INFO (sc_ioctl_pidfd_info: ENOTTY on a
			 * pidfd, red team 31), and the termios writes
			 * (sc_ioctl_termios_set: noted, then native), and
			 * TIOCSWINSZ (the sentry's on the sandbox's own ptys),
			 * FIOASYNC (SIGIO for the owner: the sentry's after
			 * its owner check, red team 82) and TCXONC (TCIOFF/TCION
			 * refused by the handler) */
			unsigned cmd = (unsigned)c->args[1];
			int pidfd_ns = (cmd & 0xffffff00u) == 0xff00u && (cmd & 0xff) >= 1 && (cmd & 0xff) <= 10;
			int sock_if = (cmd & 0xffffff00u) == 0x8900u || (cmd & 0xffffff00u) == 0x8b00u;
			if (c->nr == SYS_ioctl && !sc_ioctl_pts_only(cmd) && cmd != TIOCSWINSZ && cmd != TCXONC &&
			    cmd != FIOSETOWN && cmd != SIOCSPGRP && cmd != FIOASYNC &&
			    cmd != SC_IOCTL_PROCMAP_QUERY && !pidfd_ns && !sock_if &&
			    !sc_ioctl_fileinfo(cmd) && !sc_ioctl_fsidentity(cmd) && !sc_ioctl_pidfd_info(cmd) &&
			    !sc_ioctl_termios_set(cmd)) {
				*err = EPERM;
				snprintf(c->note, sizeof c->note, "matches a deny rule");
				return DEC_DENY;
			}
			return DEC_ALLOW;
		}
		if (!sc_args_native(e, c->args) && e->err > 0) {
			*err = sc_deny_errno(e, c->args);
			snprintf(c->note, sizeof c->note, "%s", e->allow ?
				 "not in the row's allow list" : "matches a deny rule");
		} else {
			*err = EPERM;
		}
		return DEC_DENY;
	case SC_EMULATE:
		if (!e->handler) {
			*err = ENOSYS;
			return DEC_DENY;
		}
		return DEC_ALLOW;
	case SC_EXEC:
	default:
		*err = ENOSYS;
		return DEC_DENY;
	}
}

int policy_check_exec(struct policy *p, struct task *t, const char *canon, int *err)
{
	(void)p; (void)t; (void)canon; (void)err;
	return DEC_ALLOW;
}
