/* syscalls/sys_signal.c - the permission check of kill, tkill, tgkill,
 * rt_sigqueueinfo, rt_tgsigqueueinfo (and of process_vm_readv/writev)
 * against the virtual credentials.
 *
 * Every guest task runs as the same host uid, so the host kernel would let
 * any of them signal any other: a process that dropped root could still kill
 * root's. These calls are trapped; for a target that is one task (pid > 0)
 * the sentry applies Linux's rule (the caller's own thread group, CAP_KILL,
 * or the sender's real or effective uid is the target's real or saved uid) and
 * answers EPERM, or lets the call run natively (SECCOMP_USER_NOTIF_FLAG_
 * CONTINUE: the arguments checked are plain register values; a siginfo
 * pointer is never read here). Process-group and broadcast kills (pid <= 0),
 * an unknown target (the kernel answers ESRCH) and pidfd_send_signal run
 * natively unchecked (ARCHITECTURE.md, known gaps).
 *
 * process_vm_readv/writev get Linux's ptrace access check
 * (PTRACE_MODE_ATTACH_REALCREDS): the caller's real uid and gid must equal
 * the target's real, effective and saved ones (CAP_SYS_PTRACE is never
 * granted), else EPERM; without it a process that dropped root could write
 * into a root process's memory. The iovec pointers are never read here.
 */
#include <errno.h>
#include <pthread.h>

#include <signal.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fs/procfs.h"
#include "fs/walk.h"
#include "kernel/cred.h"
#include "kernel/task.h"
#include "syscalls/handlers.h"
#include "syscalls/sc.h"
#include "syscalls/sys_fs.h"

struct ids {
	uid_t ruid, euid, suid;
	gid_t rgid, egid, sgid;
	int cap_kill;
};

static struct ids ids_of(struct task *t)
{
	struct ids i;
	pthread_mutex_lock(&t->lock);
	i.ruid = t->cred.ruid;
	i.euid = t->cred.euid;
	i.suid = t->cred.suid;
	i.rgid = t->cred.rgid;
	i.egid = t->cred.egid;
	i.sgid = t->cred.sgid;
	i.cap_kill = cred_capable(&t->cred, CRED_CAP_KILL);
	pthread_mutex_unlock(&t->lock);
	return i;
}

/* target: guest tid (or pid); tgid: its thread group, or 0 for any */
static long check(struct sc_call *c, pid_t target, pid_t tgid)
{
	c->cont = 1;
	if (target <= 0)
		return 0;        /* groups and broadcasts: native (a known gap) */
	struct ids s = ids_of(c->task);
	if (s.cap_kill)
		return 0;
	struct task *t = task_get_vpid(c->sb, target);
	if (!t && target == 1 && s.euid != 0 && s.ruid != 0) {
		c->cont = 0;     /* the guest's init is root's (/proc/1/status) */
		return -EPERM;
	}
	if (!t)
		return 0;        /* the kernel answers (ESRCH, or the guest's init) */
	int other_group = tgid > 0 && t->vtgid != tgid;
	int same_process = t->vtgid == c->task->vtgid;
	struct ids d = ids_of(t);
	task_put(t);
	if (other_group || same_process)
		return 0;        /* native: ESRCH; own threads always (as Linux) */
	if (s.euid == d.suid || s.euid == d.ruid || s.ruid == d.suid || s.ruid == d.ruid)
		return 0;
	c->cont = 0;
	return -EPERM;
}

long sys_kill(struct sc_call *c) { return check(c, (pid_t)c->args[0], 0); }
long sys_tkill(struct sc_call *c) { return check(c, (pid_t)c->args[0], 0); }
long sys_tgkill(struct sc_call *c) { return check(c, (pid_t)c->args[1], (pid_t)c->args[0]); }
long sys_rt_sigqueueinfo(struct sc_call *c) { return check(c, (pid_t)c->args[0], 0); }
long sys_rt_tgsigqueueinfo(struct sc_call *c) { return check(c, (pid_t)c->args[1], (pid_t)c->args[0]); }

/* pidfd_send_signal: a real pidfd runs natively; a /proc/<pid> directory fd
 * (which Linux also accepts) is the VFS's, so the sentry sends the signal
 * through its own pidfd of the task, after the kill check. siginfo on such
 * an fd is not supported (EINVAL). */
long sys_pidfd_send_signal(struct sc_call *c)
{
	cleanup_free struct vfs_node *n = xmalloc(sizeof *n);
	int sig = (int)c->args[1];
	pid_t pid = 0;
	long r;

	if (vfs_fd_node(VFS_OF(c), c->task, (int)c->args[0], n, NULL) == 0 && n->kind == VN_PROC &&
	    S_ISDIR(n->st.st_mode))
		pid = procfs_dir_pid(c->task, n->rel);
	if (pid <= 0) {
		c->cont = 1; /* a pidfd, or not one: the kernel answers (EBADF) */
		return 0;
	}
	if (c->args[3] || c->args[2] || sig < 0 || sig >= 65)
		return -EINVAL;
	r = check(c, pid, 0);
	if (!c->cont)
		return r;
	c->cont = 0;
	struct task *t = task_get_vpid(c->sb, pid);
	if (!t)
		return pid == 1 ? 0 : -ESRCH; /* the guest's init: ignored, as Linux's init does */
	if (t->exited || t->pidfd < 0) {
		task_put(t);
		return -ESRCH;
	}
	r = syscall(SYS_pidfd_send_signal, t->pidfd, sig, NULL, 0);
	r = r < 0 ? -errno : 0;
	task_put(t);
	return r;
}

static long check_vm(struct sc_call *c)
{
	pid_t target = (pid_t)c->args[0];
	c->cont = 1;
	if (target <= 0)
		return 0;        /* the kernel answers */
	struct task *t = task_get_vpid(c->sb, target);
	if (!t)
		return 0;
	struct ids d = ids_of(t);
	task_put(t);
	struct ids s = ids_of(c->task);
	if (s.ruid == d.ruid && s.ruid == d.euid && s.ruid == d.suid &&
	    s.rgid == d.rgid && s.rgid == d.egid && s.rgid == d.sgid)
		return 0;
	c->cont = 0;
	return -EPERM;
}

long sys_process_vm_readv(struct sc_call *c) { return check_vm(c); }
long sys_process_vm_writev(struct sc_call *c) { return check_vm(c); }
