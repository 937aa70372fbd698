/* syscalls/sys_peercred.c - getsockopt(SO_PEERCRED, SO_PEERGROUPS) with the
 * virtual ids.
 *
 * Every guest task is one host uid, so the kernel's SO_PEERCRED showed the
 * same native ids for every peer: root-run uid 0 (the guest's native uid in
 * its namespace), rootless the caller's. A daemon of guest root that trusts
 * peers of uid 0 trusted a process that had dropped root (uidclass sweep).
 * The filter traps getsockopt(fd, any level, SO_PEERCRED (17)); here, at
 * SOL_SOCKET, the sentry asks the kernel about the guest's socket itself
 * (a duplicate of it): the peer's process (SO_PEERPIDFD pins it, and it
 * must still run before and after the lookup) is found in the task table
 * and its virtual effective ids and guest pid (SO_PEERGROUPS: its virtual
 * supplementary groups) are the answer. Linux
 * reports the ids the peer had at connect (or listen, socketpair); moat
 * the ones it has now (a process can only drop to ids it could have
 * claimed anyway). A peer of the sandbox's uid that is gone, or that is no
 * guest task (moat's own), shows pid 0 and the overflow ids 65534, never
 * the native ones; a socket with no peer or a peer of another host uid
 * (an inherited socket) gets the kernel's answer on the sentry's pinned
 * copy, in the guest's namespaces (peer_host; never CONTINUE'd: pin40).
 */
#include "syscalls/handlers.h"
#include "syscalls/sc.h"
#include "kernel/cred.h"
#include "kernel/task.h"
#include "common/util.h"
#include "common/log.h"
#include "platform/platform.h"

#include <dirent.h>
#include <fcntl.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77
#endif

static int pidfd_alive(int pfd)
{
	return syscall(SYS_pidfd_send_signal, pfd, 0, NULL, 0) == 0;
}

/* the peer of a guest socket (a duplicate, sfd): 1 found (a guest task,
 * its ids in *cr, guest pid in *pid; cred_free it), 0 gone or moat's
 * (overflow ids), -1 no peer or a host peer (the kernel's answer) */
static int peer_of(struct sc_call *c, int sfd, struct cred *cr, pid_t *pid)
{
	struct ucred uc;
	socklen_t ul = sizeof uc;
	if (getsockopt(sfd, SOL_SOCKET, SO_PEERCRED, &uc, &ul) < 0 || uc.pid <= 0)
		return -1;
	cleanup_fd int pfd = -1;
	ul = sizeof pfd;
	if (getsockopt(sfd, SOL_SOCKET, SO_PEERPIDFD, &pfd, &ul) < 0)
		pfd = -1;
	struct task *t = pfd >= 0 && pidfd_alive(pfd) ? task_get(c->sb, uc.pid) : NULL;
	if (!t)
		return uc.uid != getuid() ? -1 : 0; /* another host uid: a host peer */
	pthread_mutex_lock(&t->lock);
	cred_copy(cr, &t->cred);
	pthread_mutex_unlock(&t->lock);
	*pid = t->vtgid;
	int gone = atomic_load(&t->exited);
	task_put(t);
	/* still running after the lookup: uc.pid was its number throughout
	 * (the pidfd pins the pid; a number is freed only once reaped) */
	if (gone || !pidfd_alive(pfd)) {
		cred_free(cr);
		return 0;
	}
	return 1;
}

/* SO_PEERPIDFD: the kernel's pidfd of the peer, taken by the sentry on its
 * duplicate of the socket, is installed in the guest only when the peer is a
 * guest task (peer_of's test: the pidfd pins the pid, alive before and after
 * the lookup). With --net rules moat-netd makes the guest's AF_UNIX connects
 * (netconn_connect), so the peer of a socket a guest server accepted is
 * moat-netd: the native call gave the guest a pidfd of it (fdinfo "Pid: 0",
 * outside its pid namespace; red team 67). A peer that is gone, moat's own or
 * another host uid's (an inherited socket) is ENODATA, Linux's answer for a
 * socket without a peer pid (Linux ≥ 6.9 would give a stale pidfd of a gone
 * AF_UNIX peer). Never the native call after a check of the fd number: a
 * thread's dup2 in between would give the moat-netd pidfd again. As Linux,
 * optval and optlen are written before the install (EFAULT installs
 * nothing), then the number, at most len bytes of it. */
static long peer_pidfd(struct sc_call *c, int sfd, socklen_t len)
{
	int pfd = -1;
	socklen_t pl = sizeof pfd;
	if (getsockopt(sfd, SOL_SOCKET, SO_PEERPIDFD, &pfd, &pl) < 0)
		return -errno; /* ENODATA: no peer; ENOPROTOOPT: an old kernel */
	struct cred cr;
	pid_t vpid = 0;
	int st = peer_of(c, sfd, &cr, &vpid);
	if (st > 0)
		cred_free(&cr);
	if (st <= 0) {
		close(pfd);
		snprintf(c->note, sizeof c->note, "peer gone or not a guest task: no pidfd");
		return -ENODATA;
	}
	int none = -1;
	if (len > sizeof none)
		len = sizeof none;
	if (sc_write_guest(c, c->args[3], &none, len) < 0 || sc_write_guest(c, c->args[4], &len, sizeof len) < 0) {
		close(pfd);
		return -EFAULT;
	}
	int gfd = unotify_addfd(c->notify_fd, c->id, pfd, O_CLOEXEC, -1, 0);
	close(pfd);
	if (gfd < 0)
		return gfd == -ENOENT ? -EINTR : gfd; /* (the caller went away) */
	/* written a moment ago: a failure now is the guest's own unmap, and
	 * the pidfd stays installed */
	if (sc_write_guest(c, c->args[3], &gfd, len) < 0)
		return -EFAULT;
	return 0;
}

/* SO_PEERCRED or SO_PEERGROUPS of a socket with no peer or a host peer
 * (peer_of -1): the kernel's answer on the sentry's pinned copy, in the
 * guest's namespaces (the peer is in no guest pid namespace: pid 0; its
 * ids as the guest's user namespace shows them, -1 for none), never the
 * native call on the guest's fd number after that check: a thread's dup2
 * of a socket with a guest peer onto the number in between got the peer's
 * native ids, not its virtual ones (pin40, race_peercred). As Linux: the
 * credentials cut to len, then the length; groups that do not fit ERANGE
 * with the size needed; none ENODATA. */
static long peer_host(struct sc_call *c, int sfd, int name, socklen_t len)
{
	const struct idmap *m = &c->sb->idmap;
	if (name == SO_PEERCRED) {
		struct ucred uc;
		socklen_t ul = sizeof uc;
		if (getsockopt(sfd, SOL_SOCKET, SO_PEERCRED, &uc, &ul) < 0)
			return -errno;
		struct ucred out = { 0, uc.uid == (uid_t)-1 ? (uid_t)-1 : idmap_uid_to_guest(m, uc.uid),
				     uc.gid == (gid_t)-1 ? (gid_t)-1 : idmap_gid_to_guest(m, uc.gid) };
		if (len > sizeof out)
			len = sizeof out;
		if (sc_write_guest(c, c->args[3], &out, len) < 0 || sc_write_guest(c, c->args[4], &len, sizeof len) < 0)
			return -EFAULT;
		return 0;
	}
	socklen_t gl = len > 65536 * sizeof(gid_t) ? 65536 * sizeof(gid_t) : len;
	cleanup_free gid_t *g = xmalloc(gl ? gl : 1);
	long r = getsockopt(sfd, SOL_SOCKET, SO_PEERGROUPS, g, &gl) < 0 ? -errno : 0;
	if (r < 0 && r != -ERANGE)
		return r; /* ENODATA: no peer credentials */
	for (socklen_t i = 0; r == 0 && i < gl / sizeof(gid_t); i++)
		g[i] = idmap_gid_to_guest(m, g[i]);
	if (r == 0 && gl && sc_write_guest(c, c->args[3], g, gl) < 0)
		return -EFAULT;
	if (sc_write_guest(c, c->args[4], &gl, sizeof gl) < 0)
		return -EFAULT;
	return r;
}

long sys_getsockopt(struct sc_call *c)
{
	int level = (int)c->args[1], name = (int)c->args[2];
	if (level != SOL_SOCKET || (name != SO_PEERCRED && name != SO_PEERGROUPS && name != SO_PEERPIDFD)) {
		c->cont = 1; /* another level's option 17, 59 or 77: the kernel's */
		return 0;
	}
	cleanup_fd int sfd = sc_getfd(c, (int)c->args[0]);
	if (sfd < 0)
		return sfd;
	int st = 0;
	{
		int ty;
		socklen_t tl = sizeof ty;
		if (getsockopt(sfd, SOL_SOCKET, SO_TYPE, &ty, &tl) < 0)
			return -errno; /* ENOTSOCK */
	}
	struct cred cr;
	pid_t vpid = 0;
	if (name != SO_PEERPIDFD)
		st = peer_of(c, sfd, &cr, &vpid);
	/* as Linux's sk_getsockopt, after the socket's look-up */
	socklen_t len;
	long lr = sc_read_guest(c, c->args[4], &len, sizeof len) < 0 ? -EFAULT : (int)len < 0 ? -EINVAL : 0;
	if (lr < 0) {
		if (st > 0)
			cred_free(&cr);
		return lr;
	}
	if (name == SO_PEERPIDFD)
		return peer_pidfd(c, sfd, len);
	if (st < 0)
		return peer_host(c, sfd, name, len);
	if (!st)
		snprintf(c->note, sizeof c->note, "peer gone or not a guest task: overflow ids");
	long r = 0;
	if (name == SO_PEERCRED) {
		struct ucred out = { 0, 65534, 65534 };
		if (st) {
			out.pid = vpid;
			out.uid = cr.euid;
			out.gid = cr.egid;
		}
		if (len > sizeof out)
			len = sizeof out;
		if (sc_write_guest(c, c->args[3], &out, len) < 0 ||
		    sc_write_guest(c, c->args[4], &len, sizeof len) < 0)
			r = -EFAULT;
	} else {
		/* SO_PEERGROUPS: the supplementary groups; ERANGE and the size
		 * needed when they do not fit (Linux) */
		int n = st && cr.groups ? cr.groups->n : 0;
		socklen_t need = (socklen_t)(n * sizeof(gid_t));
		if (len < need)
			r = -ERANGE;
		else if (n && sc_write_guest(c, c->args[3], cr.groups->g, need) < 0)
			r = -EFAULT;
		if ((r == 0 || r == -ERANGE) && sc_write_guest(c, c->args[4], &need, sizeof need) < 0)
			r = -EFAULT;
	}
	if (st)
		cred_free(&cr);
	return r;
}

/* ---- SO_PASSCRED ----
 *
 * The credentials the kernel attaches to a message (SCM_CREDENTIALS) are
 * the sender's native ones, mapped into the receiver's namespaces: its guest
 * pid (the guest's pid namespace), and for every guest task the same ids,
 * moat's own uid and gid as the guest's user namespace shows them (root-run
 * 0:0, rootless the caller's). While every task's virtual ids are those,
 * what a receiver gets is true, and the flag is set natively (Chromium's
 * crashpad needs credentials to run). Once any task's ids differ (a
 * set*id to other ids, or --user other than the native ones), a receiver
 * would take a process that dropped root for root: the flag is cleared on
 * every socket of every guest process and is never set again
 * (sb->passcred_off; setsockopt succeeds and does nothing, and messages
 * carry no credentials: a receiver that needs them fails closed).
 * passcred_lock orders a set against the sweep. The sweep reads every
 * thread's table; a socket in none of them then (in flight in SCM_RIGHTS,
 * a connection not yet accepted) has its flag cleared at its first
 * recvmsg/recvmmsg (passcred_recv_check, from the call's ptrace stop). */

static int ids_native(const struct sandbox *sb, const struct cred *cr)
{
	uid_t u = sb->idmap.host_uid;
	gid_t g = sb->idmap.host_gid;
	return cr->ruid == u && cr->euid == u && cr->suid == u && cr->fsuid == u && cr->rgid == g &&
	       cr->egid == g && cr->sgid == g && cr->fsgid == g;
}

long passcred_set(struct sc_call *c, int fd, int on)
{
	struct sandbox *sb = c->sb;
	cleanup_fd int sfd = sc_getfd(c, fd);
	if (sfd < 0)
		return sfd;
	pthread_mutex_lock(&sb->passcred_lock);
	long r = 0;
	if (!on || !sb->passcred_off)
		r = setsockopt(sfd, SOL_SOCKET, SO_PASSCRED, &on, sizeof on) < 0 ? -errno : 0;
	else
		snprintf(c->note, sizeof c->note,
			 "SO_PASSCRED: accepted, no credentials delivered (guest ids differ from the native ones)");
	pthread_mutex_unlock(&sb->passcred_lock);
	return r;
}

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL
#endif

/* A guest fd as the thread t sees it (its own fd table: unshare(CLONE_FILES),
 * or the only one left once the leader exited, where the tgid's pidfd finds
 * none). -errno on failure. */
static int thread_getfd(struct task *t, int guestfd)
{
	int pfd = (int)syscall(SYS_pidfd_open, (pid_t)t->tid, PIDFD_THREAD);
	if (pfd < 0 && errno == EINVAL)
		return task_getfd(t, guestfd); /* before Linux 6.9: the tgid's table */
	if (pfd < 0)
		return -errno;
	int g = task_io_begin_caller(t); /* the caller's group: in the guard */
	if (g < 0) {
		close(pfd);
		return g;
	}
	int fd = (int)syscall(SYS_pidfd_getfd, pfd, guestfd, 0);
	int e = errno;
	if (g)
		task_io_end(t);
	close(pfd);
	return fd < 0 ? -e : fd;
}

/* 1 when the socket sfd had the flag (now cleared), 0 when not, -errno */
static int clear_flag(int sfd)
{
	int v = 0;
	socklen_t vl = sizeof v;
	if (getsockopt(sfd, SOL_SOCKET, SO_PASSCRED, &v, &vl) < 0)
		return -errno;
	if (!v)
		return 0;
	v = 0;
	return setsockopt(sfd, SOL_SOCKET, SO_PASSCRED, &v, sizeof v) < 0 ? -errno : 1;
}

struct pc_sweep {
	struct sandbox *sb;
	int *fds;
	int cleared;
};

/* Every thread's table: a leader that exited has none left (/proc/<tgid>/fd
 * is empty while its threads hold the process's fds), and a thread that
 * unshared CLONE_FILES has its own (red-team 12). */
static int sweep_task(struct task *t, void *arg)
{
	struct pc_sweep *w = arg;
	char dir[48], buf[2048];
	int n = 0;
	snprintf(dir, sizeof dir, "%d/task/%d/fd", (int)t->vtgid, (int)t->vtid);
	int dfd = openat(w->sb->guest_procfd, dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return 0;
	for (long r; n < 65536 && (r = syscall(SYS_getdents64, dfd, buf, sizeof buf)) > 0;)
		for (long off = 0; off < r && n < 65536;) {
			struct dirent64 *d = (struct dirent64 *)(buf + off);
			off += d->d_reclen;
			if (d->d_name[0] >= '0' && d->d_name[0] <= '9')
				w->fds[n++] = atoi(d->d_name);
		}
	for (int i = 0; i < n; i++) {
		char path[80], l[64];
		snprintf(path, sizeof path, "%s/%d", dir, w->fds[i]);
		ssize_t k = readlinkat(w->sb->guest_procfd, path, l, sizeof l - 1);
		if (k < 8 || memcmp(l, "socket:[", 8))
			continue; /* only sockets are duplicated (a file's dup's close
				   * would drop the sentry's own POSIX locks on it) */
		int sfd = thread_getfd(t, w->fds[i]);
		if (sfd < 0)
			continue;
		if (clear_flag(sfd) == 1)
			w->cleared++;
		close(sfd);
	}
	close(dfd);
	return 0;
}

/* recvmsg/recvmmsg's stop (sentry/unixsock.c), once ids changed: the
 * sweep cannot reach a socket that was in no task's table at the time (in
 * flight in an SCM_RIGHTS message, or a connection waiting in a listener's
 * queue, which took the listener's flag at connect): its flag is cleared
 * before the first receive on it. An fd the thread does not have: -EBADF
 * (as the kernel would answer). 0: go on natively. */
long passcred_recv_check(struct sandbox *sb, struct task *t, int guestfd)
{
	if (!__atomic_load_n(&sb->passcred_off, __ATOMIC_ACQUIRE))
		return 0;
	int sfd = thread_getfd(t, guestfd);
	if (sfd == -EBADF)
		return -EBADF;
	if (sfd < 0)
		return 0; /* the thread is gone or exiting: no receive */
	int r = clear_flag(sfd);
	close(sfd);
	return r < 0 && r != -ENOTSOCK ? r : 0;
}

void passcred_ids_changed(struct sc_call *c)
{
	struct sandbox *sb = c->sb;
	if (__atomic_load_n(&sb->passcred_off, __ATOMIC_ACQUIRE))
		return;
	pthread_mutex_lock(&c->task->lock);
	int same = ids_native(sb, &c->task->cred);
	pthread_mutex_unlock(&c->task->lock);
	if (same)
		return;
	pthread_mutex_lock(&sb->passcred_lock);
	if (!sb->passcred_off) {
		__atomic_store_n(&sb->passcred_off, 1, __ATOMIC_RELEASE);
		struct pc_sweep w = { .sb = sb, .fds = malloc(65536 * sizeof(int)) };
		if (w.fds && sb->guest_procfd >= 0)
			task_for_each_thread(sb, sweep_task, &w);
		free(w.fds);
		dbg("SO_PASSCRED: ids changed, cleared on %d sockets", w.cleared);
	}
	pthread_mutex_unlock(&sb->passcred_lock);
}
