/* sentry/reopen.c - moat-reopen: the guest's /proc/<pid>/fd/N reopens of
 * objects whose mode denies their owner, without touching the mode.
 *
 * Root-run the sentry holds no capability (privilege.c): the kernel checks
 * its reopen of a guest's memfd or pipe (fs/procfs.c reopen_new, after the
 * guest's own virtual check allowed it) against the object's owner bits
 * alone, so a memfd the guest chmod'ed to 0 is EACCES to it where Linux
 * gives the guest's root a new open file description. The sentry used to
 * lend itself the owner bits for that one open (fchmod, open, fchmod back):
 * a native fstat (of any guest process) saw them meanwhile, and a crash in
 * between left them. moat-reopen instead holds DAC override where it
 * reaches only the sandbox's own objects: forked by the sentry before its
 * capabilities go (single-threaded, so setns may), it enters the guest's
 * user namespace (a child of the sentry's, owned by the sentry's uid: the
 * owner rule lets it; it then holds every capability there, as the guest's
 * root would natively, and capable_wrt_inode_uidgid grants DAC override
 * only on inodes whose owner and group that namespace maps — the sandbox
 * uid's and gid's), keeps CAP_DAC_OVERRIDE and CAP_SYS_PTRACE (the procfs
 * fd/ link of a non-dumpable guest task) and nothing else, and confines
 * itself (seccomp, kill on anything else): recvmsg/sendmsg on its channel,
 * openat on the guest procfd with no write access, no O_CREAT/O_TRUNC/
 * O_TMPFILE, close, exit. It never sees guest input but a pid and an fd
 * number; what it opens the sentry could reach anyway (pidfd_getfd gives
 * the guest's own description; the sentry owns the object and could chmod
 * it). The sentry identifies what comes back (dev, ino) as before.
 */
#include "sentry/sentry.h"
#include "fs/procfs.h"
#include "common/sanitize.h"
#include "common/util.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#define CHAN 3
#define PROCFD 4
#define KEEP_FLAGS (O_APPEND | O_DIRECT | O_SYNC | O_DSYNC)

struct reopen_req {
	int32_t vpid, fd, oflags;
};

static int g_chan = -1;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;

static int confine_reopen(void)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_KILL_PROCESS);
	if (!ctx)
		return -1;
	static const int plain[] = { SCMP_SYS(close), SCMP_SYS(exit), SCMP_SYS(exit_group),
				     SCMP_SYS(rt_sigreturn) };
	int rc = 0;
	for (size_t i = 0; i < sizeof plain / sizeof plain[0] && !rc; i++)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, plain[i], 0);
	struct scmp_arg_cmp chan = { .arg = 0, .op = SCMP_CMP_EQ, .datum_a = CHAN };
	if (!rc)
		rc = seccomp_rule_add_array(ctx, SCMP_ACT_ALLOW, SCMP_SYS(recvmsg), 1, &chan);
	if (!rc)
		rc = seccomp_rule_add_array(ctx, SCMP_ACT_ALLOW, SCMP_SYS(sendmsg), 1, &chan);
	struct scmp_arg_cmp op[2] = {
		{ .arg = 0, .op = SCMP_CMP_EQ, .datum_a = PROCFD },
		{ .arg = 2, .op = SCMP_CMP_MASKED_EQ,
		  .datum_a = O_ACCMODE | O_CREAT | O_TRUNC | O_TMPFILE | O_PATH, .datum_b = O_RDONLY },
	};
	if (!rc)
		rc = seccomp_rule_add_array(ctx, SCMP_ACT_ALLOW, SCMP_SYS(openat), 2, op);
	return moat_filter_finish(ctx, rc);
}

static _Noreturn void serve(void)
{
	for (;;) {
		struct reopen_req q;
		long n = recv_fds(CHAN, &q, sizeof q, NULL, NULL);
		if (n == 0 || (n < 0 && n != -EMSGSIZE))
			_exit(0); /* the sentry is gone */
		if (n != sizeof q)
			continue;
		char p[48];
		snprintf(p, sizeof p, "%d/fd/%d", (int)q.vpid, (int)q.fd);
		int fd = openat(PROCFD, p,
				O_RDONLY | O_LARGEFILE | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | (q.oflags & KEEP_FLAGS));
		int32_t e = fd < 0 ? errno : 0;
		(void)send_fds(CHAN, &e, sizeof e, &fd, fd >= 0);
		if (fd >= 0)
			close(fd);
	}
}

/* procfs_set_reopen_helper's fn: one request at a time (rare: only a
 * reopen the kernel refused the sentry's uid on an object it owns). The
 * helper's errno, or EACCES when it cannot answer (the caller then shares
 * the guest's description, as for any refused reopen). */
static int reopen_via_helper(pid_t vpid, int fd, int oflags)
{
	struct reopen_req q = { (int32_t)vpid, (int32_t)fd, (int32_t)(oflags & KEEP_FLAGS) };
	int32_t e = EACCES; /* no answer (the helper gone): the old rules */
	int nfd = -1, k = 1;
	if ((oflags & O_ACCMODE) != O_RDONLY || (oflags & O_TRUNC))
		return -EACCES;
	pthread_mutex_lock(&g_lock);
	if (g_chan >= 0 && send_fds(g_chan, &q, sizeof q, NULL, 0) == (long)sizeof q &&
	    recv_fds(g_chan, &e, sizeof e, &nfd, &k) != (long)sizeof e)
		e = EACCES;
	pthread_mutex_unlock(&g_lock);
	if (k == 1 && nfd >= 0 && e == 0)
		return nfd;
	if (k == 1 && nfd >= 0)
		close(nfd);
	return -(e ? e : EACCES);
}

int reopen_helper_start(int procfd, int userns_fd, char *err, size_t errlen)
{
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		snprintf(err, errlen, "moat-reopen: socketpair: %s", strerror(errno));
		return -1;
	}
	pid_t pid = moat_fork_helper("moat-reopen");
	if (pid < 0) {
		snprintf(err, errlen, "moat-reopen: fork: %s", strerror(errno));
		close(sv[0]);
		close(sv[1]);
		return -1;
	}
	if (pid == 0) {
		/* (the owner rule: the guest's namespace is our euid's, a child
		 * of ours) every capability there, none here */
		if (setns(userns_fd, CLONE_NEWUSER) < 0) {
			fprintf(stderr, "moat-reopen: setns: %s\n", strerror(errno));
			_exit(1);
		}
		/* keep stderr, the channel (3) and the guest procfd (4) only */
		int c = fcntl(sv[1], F_DUPFD_CLOEXEC, 64), pf = fcntl(procfd, F_DUPFD_CLOEXEC, 65);
		if (c < 0 || pf < 0 || dup3(c, CHAN, O_CLOEXEC) < 0 || dup3(pf, PROCFD, O_CLOEXEC) < 0 ||
		    syscall(SYS_close_range, PROCFD + 1, ~0U, 0) < 0)
			_exit(1);
		close(0);
		close(1);
		sigset_t all;
		sigfillset(&all);
		sigprocmask(SIG_SETMASK, &all, NULL);
		if (prctl(PR_SET_SECUREBITS, 0x2f /* NOROOT, NO_SETUID_FIXUP, KEEP_CAPS_LOCKED, locked */ | 0xc0,
			  0, 0, 0) < 0 ||
		    priv_caps_limit((1ULL << 1 /* CAP_DAC_OVERRIDE */) | (1ULL << 19 /* CAP_SYS_PTRACE */)) < 0 ||
		    confine_reopen() < 0) {
			fprintf(stderr, "moat-reopen: cannot confine itself\n");
			_exit(1);
		}
		serve();
	}
	close(sv[1]);
	g_chan = sv[0];
	procfs_set_reopen_helper(reopen_via_helper);
	return 0;
}
