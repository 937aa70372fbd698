/* sentry/unixsock.c - AF_UNIX path names live in the VFS.
 *
 * The guest's native mount namespace is empty, so a socket bound natively to
 * "/tmp/x.sock" would go nowhere. bind and connect are SECCOMP_RET_TRACE
 * (class EXEC: they need register rewriting). At the stop the ptrace thread
 * reads the address once; anything but a pathname AF_UNIX address runs
 * natively untouched (the guest's network namespace holds only its own
 * loopback). A pathname is resolved in the VFS:
 *
 *   bind     creates the socket inode (mknod S_IFSOCK through the gofer, umask
 *            applied; an existing name is EADDRINUSE)
 *   connect  needs an existing socket inode (ENOENT, ECONNREFUSED for another
 *            type, EACCES without write permission)
 *
 * and the call is rewritten to use "\0moat/<sandbox>/<dev>:<ino>:<gen>" of
 * that inode (gen counts binds, so an inode number the filesystem reuses after
 * an unlink gets a new name; connect looks the inode up among the names bound
 * in this sandbox, and a socket inode nobody bound is ECONNREFUSED, as a stale
 * socket file is on Linux), an abstract name in the guest's own network
 * namespace, written below
 * the stopped thread's red zone. The guest's kernel then binds or connects
 * natively. A thread racing to rewrite that copy could only make it a path
 * again, which resolves in the empty native namespace.
 *
 * getsockname/getpeername (syscalls/sys_socket.c) show the path the name
 * was bound at (as given to bind). A path on a socket that is not AF_UNIX,
 * runs natively untouched (the kernel
 * answers EAFNOSUPPORT/EINVAL as Linux does); a bind of a socket already
 * bound is EINVAL before any inode is made. Gaps:
 * sendto/sendmsg to a datagram socket path resolve natively (ENOENT); a
 * datagram's source address shows the abstract name.
 */
#include "sentry/sentry.h"
#include "sentry/netd.h"
#include "fs/walk.h"
#include "kernel/task.h"
#include "platform/arch.h"
#include "platform/platform.h"
#include "syscalls/sc.h"
#include "syscalls/sys_fs.h"
#include "syscalls/sys_socket.h"
#include "common/util.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>

/* Resolve; fill the abstract address. 0, -errno, or 1 = not a path: native. */
static int resolve(struct sandbox *sb, struct task *t, int bind_, const struct sockaddr_un *in,
		   size_t inlen, struct sockaddr_un *out, socklen_t *outlen)
{
	char path[sizeof in->sun_path + 1];
	if (inlen < offsetof(struct sockaddr_un, sun_path) + 1 || in->sun_family != AF_UNIX ||
	    in->sun_path[0] == 0)
		return 1;
	size_t n = strnlen(in->sun_path, inlen - offsetof(struct sockaddr_un, sun_path));
	memcpy(path, in->sun_path, n);
	path[n] = 0;

	struct sc_call *c = xcalloc(1, sizeof *c); /* the VFS helpers' context */
	c->task = t;
	c->sb = sb;
	c->tid = t->tid;
	c->out_fd = -1;
	struct vfs_node *node = NULL;
	int r = 0;
	if (bind_) {
		r = (int)fs_mknodat(c, AT_FDCWD, path, S_IFSOCK | 0777);
		if (r == -EEXIST)
			r = -EADDRINUSE;
		if (r == 0)
			r = fs_walk(c, AT_FDCWD, path, WALK_NOFOLLOW, &node);
	} else {
		r = fs_walk(c, AT_FDCWD, path, 0, &node);
		if (r == 0 && !S_ISSOCK(node->st.st_mode))
			r = -ECONNREFUSED;
		if (r == 0)
			r = vfs_permission(t, &node->st, MAY_WRITE);
	}
	unsigned gen = 0;
	if (r == 0) {
		if (bind_)
			gen = unix_name_bind(node->st.st_dev, node->st.st_ino, path);
		else if (!(gen = unix_name_gen(node->st.st_dev, node->st.st_ino)))
			r = -ECONNREFUSED;
	}
	if (r == 0)
		*outlen = unix_name_addr(sb, node->st.st_dev, node->st.st_ino, gen, out);
	free(node);
	free(c);
	return r;
}

void unixsock_stop(struct sandbox *sb, struct task *t)
{
	arch_regs regs;
	if (ptrace(PTRACE_GETREGS, t->tid, 0, &regs) < 0)
		return;
	long nr = (long)REG_SYSNO(regs);
	if (nr != __NR_bind && nr != __NR_connect)
		return;
	struct sockaddr_un in, out;
	size_t len = REG_ARG2(regs);
	memset(&in, 0, sizeof in);
	if (len > sizeof in)
		return; /* not an AF_UNIX address we map; the kernel answers */
	if (guest_read(t->tid, REG_ARG1(regs), &in, len) < 0)
		return; /* native: the kernel gives EFAULT */
	if (nr == __NR_connect && len >= sizeof(sa_family_t) &&
	    (in.sun_family == AF_INET || in.sun_family == AF_INET6) &&
	    netconn_stop(sb, t, &regs, &in, len) == 0)
		return; /* the egress policy decided (netconn.c) */
	if (in.sun_family == AF_UNIX && len > offsetof(struct sockaddr_un, sun_path) && in.sun_path[0]) {
		/* A path name for a socket that is not AF_UNIX: the kernel
		 * answers (EAFNOSUPPORT/EINVAL) before it looks at a path. A bind
		 * of a socket already bound: EINVAL, as Linux (which removes the
		 * inode it made); here none is made. */
		int hfd = task_getfd(t, (int)REG_ARG0(regs));
		if (hfd < 0)
			return;
		int dom = 0;
		socklen_t dl = sizeof dom;
		struct sockaddr_un cur;
		socklen_t cl = sizeof cur;
		int native = getsockopt(hfd, SOL_SOCKET, SO_DOMAIN, &dom, &dl) < 0 || dom != AF_UNIX;
		int bound = !native && nr == __NR_bind &&
			    getsockname(hfd, (struct sockaddr *)&cur, &cl) == 0 && cl > sizeof(sa_family_t);
		close(hfd);
		if (native)
			return;
		if (bound) {
			REG_SYSNO(regs) = -1;
			REG_RET(regs) = -EINVAL;
			ptrace(PTRACE_SETREGS, t->tid, 0, &regs);
			return;
		}
	}
	socklen_t olen = 0;
	int r = resolve(sb, t, nr == __NR_bind, &in, len, &out, &olen);
	if (r == -EINTR)
		r = -EIO; /* a gofer call abandoned at the tracer's deadline */
	if (r == 1)
		return; /* not a path: runs natively */
	char args[160];
	snprintf(args, sizeof args, "%d, {AF_UNIX, \"%.100s\"}, %zu", (int)REG_ARG0(regs),
		 in.sun_path, len);
	if (r == 0) {
		uint64_t addr = (REG_SP(regs) - ARCH_RED_ZONE - sizeof out - 16) & ~15ULL;
		if (guest_write(t->tid, addr, &out, olen) < 0) {
			r = -EFAULT;
		} else {
			REG_ARG1(regs) = addr;
			REG_ARG2(regs) = olen;
		}
	}
	if (r < 0) {
		REG_SYSNO(regs) = -1; /* skip the call */
		REG_RET(regs) = r;
	}
	ptrace(PTRACE_SETREGS, t->tid, 0, &regs);
	audit_event(sb->audit, sb, t, t->tid, nr == __NR_bind ? "bind" : "connect", args,
		    r < 0 ? DEC_DENY : DEC_ALLOW, r, r == 0 ? "abstract name in the guest netns" : "");
}
