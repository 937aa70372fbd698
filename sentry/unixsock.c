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
 * that inode (gen is 64 random bits per bind, so an inode number the
 * filesystem reuses after an unlink gets a new name, and a task that never
 * passed connect's permission check for the inode cannot name it natively:
 * abstract names run natively untouched; connect looks the inode up among the names bound
 * in this sandbox, and a socket inode nobody bound is ECONNREFUSED, as a stale
 * socket file is on Linux), an abstract name in the guest's own network
 * namespace, written below
 * the stopped thread's red zone. The guest's kernel then binds or connects
 * natively. A thread racing to rewrite that copy could make it a path again,
 * which resolves in the empty native namespace, or an abstract name it
 * already knows.
 *
 * getsockname/getpeername (syscalls/sys_socket.c) show the path the name
 * was bound at (as given to bind). A path on a socket that is not AF_UNIX,
 * runs natively untouched (the kernel
 * answers EAFNOSUPPORT/EINVAL as Linux does); a bind of a socket already
 * bound is EINVAL before any inode is made.
 *
 * sendto with an address and every sendmsg stop here too (sendto without
 * one runs natively; sendmsg's msg_name is in memory, so every sendmsg is a
 * stop): a path on an AF_UNIX datagram socket resolves as for connect and the
 * address (for sendmsg, a copy of the msghdr pointing at it) is rewritten
 * the same way; an inet destination of a datagram socket meets the egress
 * policy (netconn_send_stop, which sees every sendto with an address,
 * sendmsg and sendmmsg first: UDP egress). recvfrom with an address buffer on an AF_UNIX
 * socket runs to its syscall exit (PTRACE_SYSCALL), where a source address
 * that is one of our abstract names is rewritten to its bound path; so is
 * every recvmsg/recvmmsg (a stop each: msg_name is in memory) whose name
 * buffer is set on an AF_UNIX socket once a path was bound here (the call
 * gets a copy of its msghdrs with name buffers below the red zone, whose
 * room stops before a name's generation, UNIX_NAME_SHOWN, and the exit
 * writes the names, lengths and flags back), and on a UDP
 * socket connected through moat-netd's relay the source shown is its
 * destination. sendmmsg to AF_UNIX datagram paths resolves like sendmsg (a
 * copy of at most UNIX_MMSG_MAX messages, the first refused one ending the
 * batch). A rewritten bind runs to its syscall exit too: if the
 * native bind failed (two threads binding one socket), the inode it made is
 * removed, as Linux does.
 */
#include "sentry/sentry.h"
#include "sentry/netd.h"
#include "fs/walk.h"
#include "kernel/cred.h"
#include "kernel/task.h"
#include "platform/arch.h"
#include "platform/platform.h"
#include "syscalls/sc.h"
#include "syscalls/sys_fs.h"
#include "syscalls/sys_socket.h"
#include "common/util.h"
#include "syscalls/decode.h"

#include <errno.h>
#include <stddef.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>

/* Resolve; fill the abstract address. 0, -errno, or 1 = not a path: native. */
static int resolve(struct sandbox *sb, struct task *t, int bind_, int type,
		   const struct sockaddr_un *in, size_t inlen, struct sockaddr_un *out,
		   socklen_t *outlen)
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
	int r = 0, made = 0;
	if (bind_) {
		r = (int)fs_mknodat(c, AT_FDCWD, path, S_IFSOCK | 0777);
		made = r == 0;
		if (r == -EEXIST)
			r = -EADDRINUSE;
		if (r == 0)
			r = fs_walk(c, AT_FDCWD, path, WALK_NOFOLLOW, &node);
	} else {
		r = fs_walk(c, AT_FDCWD, path, 0, &node);
		if (r == 0 && !S_ISSOCK(node->st.st_mode))
			r = -ECONNREFUSED;
		if (r == 0)
			r = vfs_permission_node(t, node, MAY_WRITE);
	}
	uint64_t gen = 0;
	int btype = 0;
	if (r == 0) {
		if (bind_) {
			gen = unix_name_bind(sb, t->vtgid, node->st.st_dev, node->st.st_ino, path, type);
			if (!gen)
				r = -ENOBUFS; /* every name of the table held by a socket */
		} else if (!(gen = unix_name_gen(node->st.st_dev, node->st.st_ino, &btype)))
			r = -ECONNREFUSED;
		else if (type && btype && type != btype)
			r = -EPROTOTYPE; /* as Linux's unix_find_bsd */
	}
	if (r == 0) {
		*outlen = unix_name_addr(sb, node->st.st_dev, node->st.st_ino, gen, out);
		if (bind_) {
			snprintf(t->sock_path, sizeof t->sock_path, "%s", path);
			t->sock_dev = node->st.st_dev;
			t->sock_ino = node->st.st_ino;
		}
	} else if (made) {
		(void)fs_unlinkat(c, AT_FDCWD, path); /* made, then refused */
	}
	free(node);
	free(c);
	return r;
}

/* recvfrom with an address buffer on an AF_UNIX socket: see its exit. The
 * buffer is always swapped for a copy below the red zone with room for a
 * name up to the generation of one of ours (UNIX_NAME_SHOWN), so the exit
 * can map the name and truncate as Linux does, and the generation never is
 * in guest memory. */
/* A stop that lets the call run natively is still a call the sandbox saw:
 * one audit event (the kernel's answer is not known here: 0). */
static void stop_seen(struct sandbox *sb, struct task *t, arch_regs *regs, const char *call,
		      const char *note)
{
	char args[64];
	snprintf(args, sizeof args, "%d", (int)REG_ARG0(*regs));
	audit_event(sb->audit, sb, t, t->tid, call, args, DEC_ALLOW, 0, note);
}

#define UNIX_MMSG_MAX 16 /* messages a rewritten recvmmsg/sendmmsg carries */
#define UNIX_WIPE_MAX 512

static int unix_src_map(struct sandbox *sb, struct sockaddr_un *sa, uint32_t *len);

/* What a received source address on hfd's socket needs: 1 AF_UNIX datagrams
 * (a path may hide behind one of our abstract names, a host path is hidden),
 * 2 a fixed name in t->sock_relay the call is not asked for (a UDP socket
 * connected through the relay: its destination; an AF_UNIX stream or
 * seqpacket socket: its peer's, as recv reports it, mapped and hidden as
 * getpeername's), 0 nothing. For the fixed names the kernel writes none
 * into the guest's memory: a name it wrote there was readable by another
 * thread of the guest before the exit rewrote it (review 35: a thread
 * spinning on recvfrom's buffer read the host path of an inherited
 * socket's peer). */
static int src_kind(struct task *t, int fd)
{
	int hfd = task_getfd(t, fd);
	if (hfd < 0)
		return 0;
	int dom = 0, k = 0;
	socklen_t dl = sizeof dom;
	if (getsockopt(hfd, SOL_SOCKET, SO_DOMAIN, &dom, &dl) < 0)
		dom = 0;
	if (dom == AF_UNIX) {
		int type = 0;
		socklen_t tl = sizeof type;
		k = unix_names_any() || unix_inherited_any() ? 1 : 0;
		if (k && getsockopt(hfd, SOL_SOCKET, SO_TYPE, &type, &tl) == 0 &&
		    (type == SOCK_STREAM || type == SOCK_SEQPACKET)) {
			/* every byte comes from the peer: its name (an unbound
			 * peer's, a hidden host path's, none: a recv reports
			 * an unnamed sender with length 0) */
			struct sockaddr_un sa;
			socklen_t l = sizeof sa;
			memset(&sa, 0, sizeof sa);
			if (getpeername(hfd, (struct sockaddr *)&sa, &l) < 0 || l > sizeof sa)
				l = 0;
			uint32_t len = l;
			(void)unix_src_map(t->sb, &sa, &len);
			if (len <= offsetof(struct sockaddr_un, sun_path) || len > sizeof t->sock_relay)
				len = 0;
			memcpy(t->sock_relay, &sa, len);
			t->sock_relay_len = len;
			t->sock_relay_eof = 1;
			k = 2;
		}
	} else if (dom == AF_INET || dom == AF_INET6) {
		struct sockaddr_storage d;
		socklen_t l;
		if (udp_relay_dest_of(hfd, &d, &l) && l <= sizeof t->sock_relay) {
			memcpy(t->sock_relay, &d, l);
			t->sock_relay_len = l;
			t->sock_relay_eof = 0;
			k = 2;
		}
	}
	close(hfd);
	return k;
}

/* Zero bytes of scratch below the guest's red zone (0: none) at a call's
 * exit: the kernel's copy of a received name stays in the guest's memory
 * otherwise — a host path (red team 63) or one of our abstract names, whose
 * generation is its secret. */
static void scratch_wipe(struct task *t, uint64_t at, size_t bytes)
{
	static const char zero[UNIX_WIPE_MAX];

	if (!at)
		return;
	while (bytes) {
		size_t k = bytes < sizeof zero ? bytes : sizeof zero;
		if (guest_write(t->tid, at, zero, k) < 0)
			return;
		at += k;
		bytes -= k;
	}
}

/* Skip the stopped call with -err (Linux's answer, given here rather
 * than by a native call that would read the header again). */
static void skip_stop(struct task *t, arch_regs *regs, int err)
{
	REG_SYSNO(*regs) = -1;
	REG_RET(*regs) = (uint64_t)(long)-err;
	ptrace(PTRACE_SETREGS, t->tid, 0, regs);
}

/* Write a receive's copy (a header, a full-size name buffer's length)
 * below the red zone. When it cannot be written (the stack pointer at the
 * start of a mapping, or below it read-only) the call is answered EFAULT
 * at the stop: let run natively on the guest's own header or buffer, the
 * kernel wrote the sender's name there unmapped, one of our abstract names
 * with its secret generation or a host path (red team 84,
 * `probe_recv_scratch`). Linux would have run the call. */
static int scratch_put(struct task *t, arch_regs *regs, uint64_t at, const void *src, size_t len)
{
	if (guest_write(t->tid, at, src, len) == 0)
		return 0;
	skip_stop(t, regs, EFAULT);
	return -1;
}

static void recv_stop(struct task *t, arch_regs *regs)
{
	uint64_t addr = REG_ARG4(*regs), lenp = REG_ARG5(*regs);
	uint32_t buflen;
	if (!addr || !lenp)
		return; /* (registers: the kernel writes no name) */
	int k = src_kind(t, (int)REG_ARG0(*regs));
	if (!k)
		return; /* no name of ours can be the source: the kernel's */
	/* an unreadable or negative length: answered here (Linux receives,
	 * then answers so). Native, the kernel read the length again, and a
	 * thread that made it a whole sockaddr_un meanwhile got the whole name
	 * in the guest's buffer (unixgen39: within 726-1,653 calls) */
	if (guest_read(t->tid, lenp, &buflen, sizeof buflen) < 0) {
		skip_stop(t, regs, EFAULT);
		return;
	}
	if ((int)buflen < 0) {
		skip_stop(t, regs, EINVAL);
		return;
	}
	if (k == 2) {
		/* a UDP socket connected through moat-netd's relay (its
		 * datagrams come from the relay's end; the source shown is the
		 * destination it connected to), or an AF_UNIX stream's peer:
		 * the call asks for no name, the exit writes this one */
		t->sock_exit = 3;
		t->sock_addr = addr;
		t->sock_lenp = lenp;
		t->sock_buflen = buflen;
		REG_ARG4(*regs) = 0;
		REG_ARG5(*regs) = 0;
		ptrace(PTRACE_SETREGS, t->tid, 0, regs);
		return;
	}
	/* always a copy with room for no generation (UNIX_NAME_SHOWN): the
	 * guest's own buffer, or a length another thread may raise, got the
	 * whole name (unixgen39, race_recv_name_scan: within 2 calls) */
	uint64_t sc = (REG_SP(*regs) - ARCH_RED_ZONE - sizeof(struct sockaddr_un) - 16) & ~15ULL;
	uint32_t room = UNIX_NAME_SHOWN;
	t->sock_scratch = 0;
	if (scratch_put(t, regs, sc - 16, &room, sizeof room) < 0)
		return;
	t->sock_scratch = sc;
	REG_ARG4(*regs) = sc;
	REG_ARG5(*regs) = sc - 16;
	ptrace(PTRACE_SETREGS, t->tid, 0, regs);
	t->sock_exit = 1;
	t->sock_addr = addr;
	t->sock_lenp = lenp;
	t->sock_buflen = buflen;
}

/* The scratch area below the stopped thread's red zone: n msghdr-sized
 * records of hdr bytes, then n full-size name buffers. */
static uint64_t scratch_base(arch_regs *regs, size_t bytes)
{
	return (REG_SP(*regs) - ARCH_RED_ZONE - bytes - 16) & ~15ULL;
}

/* recvmsg(fd, msg, flags): every one stops. Nothing to do until a path is
 * bound or a relayed connect exists. On a socket whose source needs
 * mapping the call always gets a copy of the header, named or not: the
 * header is the guest's memory, and a native call after a stop that saw
 * no name buffer (or an unreadable header, a negative length) read it
 * again, so a thread that set msg_name meanwhile got the kernel's name, one
 * of our abstract names with its secret generation or an inherited
 * socket's host peer path (rt81, isolation_race recvmsg_name_copy_once). */
static void recvmsg_stop(struct sandbox *sb, struct task *t, arch_regs *regs)
{
	if (!unix_names_any() && !udp_relay_any() && !unix_inherited_any())
		return;
	int k = src_kind(t, (int)REG_ARG0(*regs));
	if (!k)
		return;
	struct msghdr mh;
	uint64_t gmh = REG_ARG1(*regs);
	if (guest_read(t->tid, gmh, &mh, sizeof mh) < 0) {
		skip_stop(t, regs, EFAULT); /* ___sys_recvmsg's copy of the header */
		return;
	}
	if (mh.msg_name && (int)mh.msg_namelen < 0) {
		skip_stop(t, regs, EINVAL); /* __copy_msghdr's */
		return;
	}
	t->sock_addr = (uint64_t)(uintptr_t)mh.msg_name;
	t->sock_lenp = gmh;
	t->sock_buflen = mh.msg_namelen;
	if (k == 2 || !mh.msg_name) {
		/* a copy of the msghdr that asks for no name (src_kind, or
		 * none asked: the exit writes none) */
		uint64_t sc = scratch_base(regs, sizeof(struct msghdr));
		mh.msg_name = NULL;
		mh.msg_namelen = 0;
		if (scratch_put(t, regs, sc, &mh, sizeof mh) < 0)
			return;
		t->sock_scratch = sc;
		REG_ARG1(*regs) = sc;
		ptrace(PTRACE_SETREGS, t->tid, 0, regs);
		t->sock_exit = 5;
		stop_seen(sb, t, regs, "recvmsg", "source address: the relayed destination or the peer's");
		return;
	}
	/* a copy of the msghdr whose name buffer holds a whole name but for
	 * the generation of one of ours (UNIX_NAME_SHOWN) */
	uint64_t sc = scratch_base(regs, sizeof(struct msghdr) + 16 + sizeof(struct sockaddr_un));
	uint64_t name = sc + ((sizeof(struct msghdr) + 15) & ~15UL);
	mh.msg_name = (void *)(uintptr_t)name;
	mh.msg_namelen = UNIX_NAME_SHOWN;
	if (scratch_put(t, regs, sc, &mh, sizeof mh) < 0)
		return;
	t->sock_scratch = sc;
	REG_ARG1(*regs) = sc;
	ptrace(PTRACE_SETREGS, t->tid, 0, regs);
	t->sock_exit = 4;
	stop_seen(sb, t, regs, "recvmsg", "source address from the VFS (AF_UNIX)");
}


/* recvmmsg(fd, msgvec, vlen, flags, timeout): as recvmsg, per message: the
 * call gets copies of at most UNIX_MMSG_MAX messages (recvmmsg may return
 * fewer than asked), whose results the exit writes back. */
static void recvmmsg_stop(struct sandbox *sb, struct task *t, arch_regs *regs)
{
	if (!unix_names_any() && !udp_relay_any() && !unix_inherited_any())
		return;
	uint64_t gv = REG_ARG1(*regs);
	unsigned vlen = (unsigned)REG_ARG2(*regs);
	if (!vlen)
		return;
	unsigned n = vlen < UNIX_MMSG_MAX ? vlen : UNIX_MMSG_MAX;
	struct mmsghdr mv[UNIX_MMSG_MAX];
	/* the headers that can be read, each once: the call gets copies of
	 * those (Linux receives into each as it reads it and ends at the first
	 * it cannot: EFAULT if none). Before, one unreadable header of n let
	 * the call run natively on the guest's vector: the kernel wrote the
	 * first message's name there unmapped (red team 84). */
	unsigned got = 0;
	while (got < n && guest_read(t->tid, gv + got * sizeof mv[0], &mv[got], sizeof mv[0]) == 0)
		got++;
	if (!got) {
		skip_stop(t, regs, EFAULT);
		return;
	}
	n = got;
	/* (named or not: a copy, as recvmsg's; the guest's headers are read
	 * once, here) */
	int k = src_kind(t, (int)REG_ARG0(*regs));
	if (!k)
		return;
	t->sock_lenp = gv;
	t->sock_buflen = vlen;
	t->sock_ncopy = n;
	t->sock_relay_kind = k == 2;
	size_t hdrs = (n * sizeof mv[0] + 15) & ~15UL;
	uint64_t sc = scratch_base(regs, hdrs + n * sizeof(struct sockaddr_un));
	for (unsigned i = 0; i < n; i++) {
		if (!mv[i].msg_hdr.msg_name)
			continue;
		/* (a fixed name: none asked for, src_kind) */
		mv[i].msg_hdr.msg_name = k == 2 ? NULL : (void *)(uintptr_t)(sc + hdrs + i * sizeof(struct sockaddr_un));
		mv[i].msg_hdr.msg_namelen = k == 2 ? 0 : UNIX_NAME_SHOWN;
	}
	if (scratch_put(t, regs, sc, mv, n * sizeof mv[0]) < 0)
		return;
	t->sock_scratch = sc;
	REG_ARG1(*regs) = sc;
	REG_ARG2(*regs) = n;
	ptrace(PTRACE_SETREGS, t->tid, 0, regs);
	t->sock_exit = 6;
	stop_seen(sb, t, regs, "recvmmsg",
		  k == 2 ? "source addresses: the relayed destination" : "source addresses from the VFS (AF_UNIX)");
}

/* A received AF_UNIX name (*len, the kernel's length, at sa; of one of our
 * names only the bytes before its generation, UNIX_NAME_SHOWN, the rest
 * zero): one of our abstract names becomes its bound path and *len its
 * length, a host path is hidden. 1 when it was either. */
static int unix_src_map(struct sandbox *sb, struct sockaddr_un *sa, uint32_t *len)
{
	char path[sizeof sa->sun_path];
	if (*len > sizeof *sa || *len <= offsetof(struct sockaddr_un, sun_path) + 1 || sa->sun_family != AF_UNIX)
		return 0;
	if (unix_name_path(sb, sa, (socklen_t)*len, path, sizeof path) != 0) {
		/* a host path (a sender or peer of an inherited socket) */
		socklen_t l = (socklen_t)*len;
		int hid = unix_name_hide_host(sa, &l);
		*len = l;
		return hid;
	}
	memset(sa->sun_path, 0, sizeof sa->sun_path);
	size_t pl = strnlen(path, sizeof sa->sun_path - 1);
	memcpy(sa->sun_path, path, pl);
	*len = (uint32_t)(offsetof(struct sockaddr_un, sun_path) + pl + 1);
	return 1;
}

/* One received message back into the guest's msghdr at gmh. cp: the copy
 * the call filled (its msg_controllen and msg_flags are copied back), or
 * NULL (the call had the guest's own header). The name: the relay's
 * destination (relay), else the one read from the copy's full-size buffer,
 * our abstract names mapped to their paths; written into the guest's buffer
 * (name, cap bytes: truncated as Linux does) with its whole length. */
static void msg_back(struct sandbox *sb, struct task *t, uint64_t gmh, uint64_t name, uint32_t cap,
		     const struct msghdr *cp, int relay)
{
	if (cp) {
		(void)guest_write(t->tid, gmh + offsetof(struct msghdr, msg_controllen), &cp->msg_controllen,
				  sizeof cp->msg_controllen);
		(void)guest_write(t->tid, gmh + offsetof(struct msghdr, msg_flags), &cp->msg_flags,
				  sizeof cp->msg_flags);
	}
	if (!name)
		return;
	struct sockaddr_un sa;
	uint32_t len;
	memset(&sa, 0, sizeof sa);
	if (relay == 2) {
		len = 0; /* an AF_UNIX stream's end: no sender */
	} else if (relay) {
		len = t->sock_relay_len;
		memcpy(&sa, t->sock_relay, len);
	} else {
		/* the kernel's length, unless a thread of the guest rewrote
		 * the copy meanwhile: never more than the buffer it had, and
		 * never more read than the room the kernel had */
		len = cp->msg_namelen < sizeof sa ? cp->msg_namelen : (uint32_t)sizeof sa;
		uint32_t got = len < UNIX_NAME_SHOWN ? len : (uint32_t)UNIX_NAME_SHOWN;
		if (got && guest_read(t->tid, (uint64_t)(uintptr_t)cp->msg_name, &sa, got) < 0)
			return;
		(void)unix_src_map(sb, &sa, &len);
	}
	if (cap)
		(void)guest_write(t->tid, name, &sa, len < cap ? len : cap);
	(void)guest_write(t->tid, gmh + offsetof(struct msghdr, msg_namelen), &len, sizeof len);
}

/* The scratch of a rewritten recvmsg (4) or recvmmsg (6), headers and
 * names, zeroed (scratch_wipe) */
static void recvmsg_wipe(struct task *t)
{
	if (t->sock_exit == 5)
		scratch_wipe(t, t->sock_scratch, sizeof(struct msghdr));
	else if (t->sock_exit == 4)
		scratch_wipe(t, t->sock_scratch, ((sizeof(struct msghdr) + 15) & ~15UL) + sizeof(struct sockaddr_un));
	else if (t->sock_exit == 6) {
		unsigned n = t->sock_ncopy < UNIX_MMSG_MAX ? t->sock_ncopy : UNIX_MMSG_MAX;
		scratch_wipe(t, t->sock_scratch,
			     ((n * sizeof(struct mmsghdr) + 15) & ~15UL) + n * sizeof(struct sockaddr_un));
	}
}

static void recvmsg_exit(struct sandbox *sb, struct task *t, arch_regs *regs)
{
	long ret = (long)REG_RET(*regs);
	/* the guest's own pointers back (a restarted call re-reads them) */
	REG_ARG1(*regs) = t->sock_lenp;
	if (t->sock_exit == 6)
		REG_ARG2(*regs) = t->sock_buflen;
	ptrace(PTRACE_SETREGS, t->tid, 0, regs);
	if (ret < 0) {
		recvmsg_wipe(t);
		return;
	}
	if (t->sock_exit == 4 || t->sock_exit == 5) {
		struct msghdr cp;
		if (guest_read(t->tid, t->sock_scratch, &cp, sizeof cp) < 0)
			return;
		msg_back(sb, t, t->sock_lenp, t->sock_addr, t->sock_buflen, &cp,
			 t->sock_exit == 5 ? (ret == 0 && t->sock_relay_eof ? 2 : 1) : 0);
		recvmsg_wipe(t);
		return;
	}
	/* recvmmsg: ret messages were received into the copies */
	unsigned n = (unsigned)ret;
	if (n > UNIX_MMSG_MAX)
		return;
	for (unsigned i = 0; i < n; i++) {
		struct mmsghdr g, cp;
		uint64_t gi = t->sock_lenp + i * sizeof g;
		if (guest_read(t->tid, gi, &g, sizeof g) < 0 ||
		    guest_read(t->tid, t->sock_scratch + i * sizeof cp, &cp, sizeof cp) < 0)
			return;
		(void)guest_write(t->tid, gi + offsetof(struct mmsghdr, msg_len), &cp.msg_len, sizeof cp.msg_len);
		/* (a fixed name: the copy asked for none, the guest's header
		 * for one) */
		int named = t->sock_relay_kind ? g.msg_hdr.msg_name != NULL : cp.msg_hdr.msg_name != NULL;
		msg_back(sb, t, gi, named ? (uint64_t)(uintptr_t)g.msg_hdr.msg_name : 0, g.msg_hdr.msg_namelen,
			 &cp.msg_hdr,
			 t->sock_relay_kind ? (cp.msg_len == 0 && t->sock_relay_eof ? 2 : 1) : 0);
	}
	recvmsg_wipe(t);
}

/* sendmmsg on an AF_UNIX datagram socket with a path among its messages'
 * names: the call gets copies of at most UNIX_MMSG_MAX messages, each path
 * resolved as for sendmsg (an abstract name below the red zone); a refused
 * one ends the batch before it (sendmmsg returns what it sent), or the call
 * when it is the first. The exit copies each sent message's msg_len back.
 * 0: rewritten or refused here; 1: native. */
static int sendmmsg_paths(struct sandbox *sb, struct task *t, arch_regs *regs, unsigned strip)
{
	uint64_t gv = REG_ARG1(*regs);
	unsigned vlen = (unsigned)REG_ARG2(*regs);
	if (!vlen || REG_ARG3(*regs) & MSG_FASTOPEN)
		return 1;
	int hfd = task_getfd(t, (int)REG_ARG0(*regs));
	if (hfd < 0)
		return 1;
	int dom = 0, type = 0;
	socklen_t dl = sizeof dom, tl = sizeof type;
	int unix_dgram = getsockopt(hfd, SOL_SOCKET, SO_DOMAIN, &dom, &dl) == 0 && dom == AF_UNIX &&
			 getsockopt(hfd, SOL_SOCKET, SO_TYPE, &type, &tl) == 0 && type == SOCK_DGRAM;
	close(hfd);
	if (!unix_dgram && !strip)
		return 1;
	unsigned n = vlen < UNIX_MMSG_MAX ? vlen : UNIX_MMSG_MAX;
	struct mmsghdr mv[UNIX_MMSG_MAX];
	struct sockaddr_un names[UNIX_MMSG_MAX];
	int mapped[UNIX_MMSG_MAX] = { 0 };
	if (guest_read(t->tid, gv, mv, n * sizeof mv[0]) < 0)
		return 1; /* the kernel answers EFAULT */
	int paths = 0, r = 0;
	unsigned i;
	char first[sizeof names[0].sun_path + 1] = "";
	for (i = 0; i < n; i++) {
		if (strip & (1u << i)) {
			/* an allowed SCM_CREDENTIALS alone: sent without it
			 * (sendmmsg_scm) */
			mv[i].msg_hdr.msg_control = NULL;
			mv[i].msg_hdr.msg_controllen = 0;
		}
		if (!unix_dgram)
			continue;
		struct sockaddr_un in;
		size_t len = mv[i].msg_hdr.msg_namelen;
		if (!mv[i].msg_hdr.msg_name || len <= offsetof(struct sockaddr_un, sun_path) || len > sizeof in)
			continue; /* no name, or none we map: the kernel reads it */
		memset(&in, 0, sizeof in);
		if (guest_read(t->tid, (uint64_t)(uintptr_t)mv[i].msg_hdr.msg_name, &in, len) < 0)
			continue; /* the kernel answers EFAULT */
		if (in.sun_family != AF_UNIX || !in.sun_path[0])
			continue; /* abstract or another family: native */
		socklen_t olen = 0;
		r = resolve(sb, t, 0, SOCK_DGRAM, &in, len, &names[i], &olen);
		if (r == -EINTR)
			r = -EIO;
		if (r < 0) {
			snprintf(first, sizeof first, "%.100s", in.sun_path);
			break;
		}
		if (r == 0) {
			mapped[i] = 1; /* its name: the copy below */
			mv[i].msg_hdr.msg_namelen = olen;
			paths++;
			if (!*first)
				snprintf(first, sizeof first, "%.100s", in.sun_path);
		}
	}
	char args[600], qp[480];
	sc_quote_str(qp, sizeof qp, first, 100);
	snprintf(args, sizeof args, "%d, [{AF_UNIX, %s}...], %u", (int)REG_ARG0(*regs), qp, vlen);
	if (r < 0 && i == 0) {
		REG_SYSNO(*regs) = -1;
		REG_RET(*regs) = (uint64_t)(long)r;
		ptrace(PTRACE_SETREGS, t->tid, 0, regs);
		audit_event(sb->audit, sb, t, t->tid, "sendmmsg", args, DEC_DENY, r, "");
		return 0;
	}
	if (r < 0)
		n = i; /* the messages before the refused one */
	if (!paths && !strip && vlen <= n)
		return 1; /* no path among them: native untouched */
	size_t hdrs = (n * sizeof mv[0] + 15) & ~15UL;
	uint64_t sc = scratch_base(regs, hdrs + n * sizeof names[0]);
	for (unsigned j = 0; j < n; j++) {
		if (!mapped[j])
			continue;
		uint64_t a = sc + hdrs + j * sizeof names[0];
		if (guest_write(t->tid, a, &names[j], mv[j].msg_hdr.msg_namelen) < 0)
			return 1;
		mv[j].msg_hdr.msg_name = (void *)(uintptr_t)a;
	}
	if (guest_write(t->tid, sc, mv, n * sizeof mv[0]) < 0)
		return 1;
	t->sock_scratch = sc;
	t->sock_lenp = gv;
	t->sock_buflen = vlen;
	REG_ARG1(*regs) = sc;
	REG_ARG2(*regs) = n;
	ptrace(PTRACE_SETREGS, t->tid, 0, regs);
	t->sock_exit = 8;
	audit_event(sb->audit, sb, t, t->tid, "sendmmsg", args, DEC_ALLOW, 0,
		    paths ? "abstract names in the guest netns" : "SCM_CREDENTIALS the namespace cannot map left out");
	return 0;
}

static void sendmmsg_exit(struct task *t, arch_regs *regs)
{
	long ret = (long)REG_RET(*regs);
	REG_ARG1(*regs) = t->sock_lenp;
	REG_ARG2(*regs) = t->sock_buflen;
	ptrace(PTRACE_SETREGS, t->tid, 0, regs);
	for (long i = 0; i < ret && i < UNIX_MMSG_MAX; i++) {
		unsigned ml;
		if (guest_read(t->tid, t->sock_scratch + i * sizeof(struct mmsghdr) + offsetof(struct mmsghdr, msg_len),
			       &ml, sizeof ml) < 0 ||
		    guest_write(t->tid, t->sock_lenp + i * sizeof(struct mmsghdr) + offsetof(struct mmsghdr, msg_len),
				&ml, sizeof ml) < 0)
			return;
	}
}

/* A rewritten bind failed natively: remove the inode it made, if it is
 * still that one (Linux removes it too). */
static void bind_failed(struct sandbox *sb, struct task *t)
{
	struct sc_call *c = xcalloc(1, sizeof *c);
	c->task = t;
	c->sb = sb;
	c->tid = t->tid;
	c->out_fd = -1;
	struct vfs_node *node = NULL;
	if (fs_walk(c, AT_FDCWD, t->sock_path, WALK_NOFOLLOW, &node) == 0 && S_ISSOCK(node->st.st_mode) &&
	    (uint64_t)node->st.st_dev == t->sock_dev && (uint64_t)node->st.st_ino == t->sock_ino)
		(void)fs_unlinkat(c, AT_FDCWD, t->sock_path);
	free(node);
	free(c);
}

void unixsock_exit(struct sandbox *sb, struct task *t)
{
	arch_regs regs;
	if (ptrace(PTRACE_GETREGS, t->tid, 0, &regs) < 0)
		return;
	if (t->sock_exit == 2) {
		if ((long)REG_RET(regs) < 0 && (long)REG_RET(regs) > -4096)
			bind_failed(sb, t);
		return;
	}
	if (t->sock_exit >= 4 && t->sock_exit <= 6) {
		recvmsg_exit(sb, t, &regs);
		return;
	}
	if (t->sock_exit == 8) {
		sendmmsg_exit(t, &regs);
		return;
	}
	if (t->sock_exit == 3) {
		/* the guest's own pointers back (the call had none) */
		REG_ARG4(regs) = t->sock_addr;
		REG_ARG5(regs) = t->sock_lenp;
		ptrace(PTRACE_SETREGS, t->tid, 0, &regs);
		uint32_t len = (long)REG_RET(regs) == 0 && t->sock_relay_eof ? 0 : t->sock_relay_len;
		if ((long)REG_RET(regs) >= 0) {
			(void)guest_write(t->tid, t->sock_addr, t->sock_relay, len < t->sock_buflen ? len : t->sock_buflen);
			(void)guest_write(t->tid, t->sock_lenp, &len, sizeof len);
		}
		return;
	}
	/* the call had the copy (recv_stop) */
	uint64_t from = t->sock_scratch, fromlenp = t->sock_scratch - 16;
	/* the guest's own pointers back (a restarted call re-reads them) */
	REG_ARG4(regs) = t->sock_addr;
	REG_ARG5(regs) = t->sock_lenp;
	ptrace(PTRACE_SETREGS, t->tid, 0, &regs);
	if ((long)REG_RET(regs) < 0) {
		scratch_wipe(t, t->sock_scratch, sizeof(struct sockaddr_un));
		return;
	}
	uint32_t len;
	struct sockaddr_un sa;
	memset(&sa, 0, sizeof sa);
	if (guest_read(t->tid, fromlenp, &len, sizeof len) < 0)
		return;
	/* the length is the kernel's unless a guest thread rewrote it: what
	 * is read never passes the room the kernel had */
	uint32_t got = len < UNIX_NAME_SHOWN ? len : (uint32_t)UNIX_NAME_SHOWN;
	if (got && guest_read(t->tid, from, &sa, got) < 0)
		return;
	scratch_wipe(t, t->sock_scratch, sizeof(struct sockaddr_un));
	(void)unix_src_map(sb, &sa, &len);
	uint32_t put = len < t->sock_buflen ? len : t->sock_buflen;
	(void)guest_write(t->tid, t->sock_addr, &sa, put < sizeof sa ? put : (uint32_t)sizeof sa);
	(void)guest_write(t->tid, t->sock_lenp, &len, sizeof len);
}

/* SCM_CREDENTIALS in a sendmsg's control data, checked against the caller's
 * virtual credentials with Linux's rule (net/core/scm.c scm_check_creds):
 * the pid must be the caller's own (its guest tgid) unless CAP_SYS_ADMIN,
 * the uid its real, effective or saved one unless CAP_SETUID, the gid
 * likewise unless CAP_SETGID. The kernel checks the native ids (every guest
 * task is the one host uid, no native capability), which took a dropped
 * process's claim of uid 0 (red team 43). -EPERM, or 0: the kernel decides.
 * Only AF_UNIX and AF_NETLINK sockets take the message (scm_send; another
 * family says EINVAL); a cmsg before it that the kernel would refuse first
 * (not SCM_RIGHTS) leaves the answer to the kernel. The control data is
 * read once here, all of it (at most SCM_CHECK_MAX, past the kernel's
 * optmem_max: ENOBUFS); a thread rewriting it before the kernel reads it gets the
 * kernel's native check, stricter than this one but for a claim of a pid
 * of its own or an id of the one native uid, and no receiver sees a claim
 * once ids changed (SO_PASSCRED is off, syscalls/sys_peercred.c): this is
 * Linux's answer, not the boundary. 1: allowed, and the message's control
 * data is that one SCM_CREDENTIALS while no receiver gets credentials
 * (passcred_off): the call may go without it (the kernel would refuse an
 * id its namespace does not map, EINVAL, where Linux sends). */
#define SCM_CHECK_STACK 4096
#define SCM_CHECK_MAX (1u << 20) /* past net.core.optmem_max (128 KiB): ENOBUFS */
static int scm_unix_or_netlink(struct task *t, int fd)
{
	int hfd = task_getfd(t, fd);
	if (hfd < 0)
		return 0;
	int dom = 0;
	socklen_t dl = sizeof dom;
	int ours = getsockopt(hfd, SOL_SOCKET, SO_DOMAIN, &dom, &dl) == 0 && (dom == AF_UNIX || dom == AF_NETLINK);
	close(hfd);
	return ours;
}

static int scm_creds_refused(struct sandbox *sb, struct task *t, int fd, const struct msghdr *mh)
{
	if (!mh->msg_control || mh->msg_controllen < sizeof(struct cmsghdr))
		return 0;
	/* all of it (red team 48: only the first 4 KiB were read, and a
	 * claim after 4 KiB of other control data met the kernel's native
	 * check: a dropped process's uid 0 was sent); the kernel takes at
	 * most optmem_max (sock_kmalloc, else ENOBUFS) */
	size_t len = mh->msg_controllen;
	if (len > SCM_CHECK_MAX)
		return scm_unix_or_netlink(t, fd) ? -ENOBUFS : 0;
	_Alignas(struct cmsghdr) unsigned char stack[SCM_CHECK_STACK];
	cleanup_free unsigned char *heap = len > sizeof stack ? malloc(len) : NULL; /* (malloc: aligned) */
	unsigned char *buf = len > sizeof stack ? heap : stack;
	if (!buf)
		return -ENOBUFS;
	if (guest_read(t->tid, (uint64_t)(uintptr_t)mh->msg_control, buf, len) < 0)
		return 0; /* the kernel answers EFAULT */
	struct msghdr m = { .msg_control = buf, .msg_controllen = len };
	struct ucred uc;
	int found = 0, sole = 0;
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(&m); cm; cm = CMSG_NXTHDR(&m, cm)) {
		if (cm->cmsg_len < sizeof *cm || cm->cmsg_len > (size_t)(buf + len - (unsigned char *)cm))
			return 0; /* the kernel's EINVAL */
		if (cm->cmsg_level != SOL_SOCKET)
			continue;
		if (cm->cmsg_type == SCM_CREDENTIALS) {
			if (cm->cmsg_len != CMSG_LEN(sizeof uc))
				return 0; /* EINVAL */
			memcpy(&uc, CMSG_DATA(cm), sizeof uc);
			found = 1;
			sole = cm == CMSG_FIRSTHDR(&m) && !CMSG_NXTHDR(&m, cm);
			break;
		}
		if (cm->cmsg_type != SCM_RIGHTS)
			return 0;
	}
	if (!found || uc.uid == (uid_t)-1 || uc.gid == (gid_t)-1)
		return 0; /* nothing to check, or the kernel's EINVAL */
	if (!scm_unix_or_netlink(t, fd))
		return 0;
	pthread_mutex_lock(&t->lock);
	const struct cred *cr = &t->cred;
	int ok = (uc.pid == t->vtgid || cred_capable(cr, 21 /* SYS_ADMIN */)) &&
		 (uc.uid == cr->ruid || uc.uid == cr->euid || uc.uid == cr->suid || cred_capable(cr, 7 /* SETUID */)) &&
		 (uc.gid == cr->rgid || uc.gid == cr->egid || uc.gid == cr->sgid || cred_capable(cr, 6 /* SETGID */));
	pthread_mutex_unlock(&t->lock);
	if (!ok)
		return -EPERM;
	return sole && __atomic_load_n(&sb->passcred_off, __ATOMIC_ACQUIRE) ? 1 : 0;
}

/* sendmmsg: scm_creds_refused per message, as ____sys_sendmsg's scm_send
 * is (red team 48: unchecked, the native check let a dropped process claim
 * uid 0). The kernel stops at UIO_MAXIOV messages; a refused one ends the
 * batch before it (sendmmsg returns what it sent), or the call (-EPERM)
 * when it is the first. An allowed claim alone in its control data while
 * passcred_off (1) is left out of the copy sendmmsg_paths makes: its bit
 * in *strip, for the first UNIX_MMSG_MAX messages; a later one ends the
 * batch before it. A message unreadable here is the kernel's (EFAULT
 * there, after the ones before it). -EPERM, or 0 (regs may be rewritten:
 * a shorter vlen). */
static int sendmmsg_scm(struct sandbox *sb, struct task *t, arch_regs *regs, unsigned *strip)
{
	uint64_t gv = REG_ARG1(*regs);
	unsigned vlen = (unsigned)REG_ARG2(*regs), n = vlen < 1024 ? vlen : 1024; /* UIO_MAXIOV */
	*strip = 0;
	struct mmsghdr mv[64]; /* read 64 at a time (a UDP batch: one read) */
	unsigned have = 0, base = 0;
	for (unsigned i = 0; i < n; i++) {
		if (i - base >= have) {
			base = i;
			have = n - i < 64 ? n - i : 64;
			if (guest_read(t->tid, gv + (uint64_t)i * sizeof mv[0], mv, have * sizeof mv[0]) < 0)
				have = 1; /* one at a time up to the unreadable one */
			if (have == 1 && guest_read(t->tid, gv + (uint64_t)i * sizeof mv[0], mv, sizeof mv[0]) < 0)
				return 0;
		}
		struct mmsghdr m = mv[i - base];
		int e = scm_creds_refused(sb, t, (int)REG_ARG0(*regs), &m.msg_hdr);
		if (e == 0)
			continue;
		if (e == 1 && i < UNIX_MMSG_MAX) {
			*strip |= 1u << i;
			continue;
		}
		if (i == 0)
			return e;
		REG_ARG2(*regs) = i;
		ptrace(PTRACE_SETREGS, t->tid, 0, regs);
		return 0;
	}
	return 0;
}

int unixsock_resolve_connect(struct sandbox *sb, struct task *t, int stype, const struct sockaddr_un *in,
			     size_t inlen, struct sockaddr_un *out, unsigned *outlen)
{
	socklen_t ol = 0;
	int r = resolve(sb, t, 0, stype, in, inlen, out, &ol);
	*outlen = ol;
	return r;
}

/* A sendmsg/sendmmsg whose SCM_CREDENTIALS the caller may not claim: the
 * call is skipped with the error, and audited */
static void scm_deny(struct sandbox *sb, struct task *t, arch_regs *regs, const char *call, int e)
{
	REG_SYSNO(*regs) = -1;
	REG_RET(*regs) = (uint64_t)(long)e;
	ptrace(PTRACE_SETREGS, t->tid, 0, regs);
	audit_event(sb->audit, sb, t, t->tid, call, "SCM_CREDENTIALS", DEC_DENY, e,
		    "credentials the caller may not claim");
}

void unixsock_stop(struct sandbox *sb, struct task *t, const arch_regs *stop_regs)
{
	arch_regs regs = *stop_regs;
	long nr = REG_NR(regs);
	if (nr == __NR_connect && netconn_strict()) {
		/* cannot happen: with moat-netd the filter sends connect to a
		 * worker (netconn_connect); never native */
		REG_SYSNO(regs) = -1;
		REG_RET(regs) = (uint64_t)-ENETUNREACH;
		ptrace(PTRACE_SETREGS, t->tid, 0, &regs);
		return;
	}
	uint64_t aptr;
	size_t len;
	struct msghdr mh;
	int mh_ok = 1;
	unsigned mmsg_strip = 0; /* sendmmsg_scm */
	const char *call;
	switch (nr) {
	case __NR_bind:
	case __NR_connect:
		/* the kernel's addrlen is an int (the register's low 32 bits;
		 * negative: its EINVAL): red team 55, a length with bit 32 set
		 * was "too long to be a path" here and ran natively, and the
		 * host kernel looked the path up in the guest's native root */
		aptr = REG_ARG1(regs), len = (size_t)(int)REG_ARG2(regs);
		call = nr == __NR_bind ? "bind" : "connect";
		break;
	case __NR_sendto:
		aptr = REG_ARG4(regs), len = (size_t)(int)REG_ARG5(regs), call = "sendto"; /* int, as bind's */
		break;
	case __NR_sendmsg:
		mh_ok = guest_read(t->tid, REG_ARG1(regs), &mh, sizeof mh) == 0;
		aptr = mh_ok ? (uint64_t)(uintptr_t)mh.msg_name : 0, len = mh_ok ? mh.msg_namelen : 0;
		call = "sendmsg";
		if (mh_ok) {
			int e = scm_creds_refused(sb, t, (int)REG_ARG0(regs), &mh);
			if (e < 0) {
				scm_deny(sb, t, &regs, call, e);
				return;
			}
			if (e == 1) {
				/* a copy of the msghdr without its control data,
				 * where a path's rewrite below puts its copy */
				uint64_t addr = (REG_SP(regs) - ARCH_RED_ZONE - sizeof(struct sockaddr_un) - 16) & ~15ULL;
				uint64_t maddr = (addr - sizeof mh - 16) & ~15ULL;
				mh.msg_control = NULL;
				mh.msg_controllen = 0;
				if (guest_write(t->tid, maddr, &mh, sizeof mh) == 0) {
					REG_ARG1(regs) = maddr;
					ptrace(PTRACE_SETREGS, t->tid, 0, &regs);
				}
			}
		}
		break;
	case __NR_sendmmsg: {
		aptr = 0, len = 0, call = "sendmmsg"; /* UDP egress and MSG_FASTOPEN only */
		int e = sendmmsg_scm(sb, t, &regs, &mmsg_strip);
		if (e < 0) {
			scm_deny(sb, t, &regs, call, e);
			return;
		}
		break;
	}
	case __NR_recvmsg:
	case __NR_recvmmsg: {
		/* once ids changed, no socket received on keeps SO_PASSCRED
		 * (syscalls/sys_peercred.c). A recvmsg without a control
		 * buffer gets no credentials (a thread of the receiver could
		 * add one meanwhile: its own process, not a boundary) */
		struct msghdr rm;
		long e = 0;
		if (nr == __NR_recvmmsg ||
		    (guest_read(t->tid, REG_ARG1(regs), &rm, sizeof rm) == 0 && rm.msg_control && rm.msg_controllen))
			e = passcred_recv_check(sb, t, (int)REG_ARG0(regs));
		if (e < 0) {
			REG_SYSNO(regs) = -1;
			REG_RET(regs) = (uint64_t)e;
			ptrace(PTRACE_SETREGS, t->tid, 0, &regs);
			return;
		}
		if (nr == __NR_recvmsg)
			recvmsg_stop(sb, t, &regs);
		else
			recvmmsg_stop(sb, t, &regs);
		return;
	}
	case __NR_recvfrom:
		recv_stop(t, &regs);
		stop_seen(sb, t, &regs, "recvfrom", "source address from the VFS (AF_UNIX)");
		return;
	case __NR_listen:
		if (netconn_listen_stop(sb, t, &regs) != 0)
			stop_seen(sb, t, &regs, "listen", "native: the guest's own network namespace");
		return;
	default:
		return;
	}
	int send_ = nr == __NR_sendto || nr == __NR_sendmsg;
	uint64_t sflags = nr == __NR_sendto ? REG_ARG3(regs) : nr == __NR_sendmmsg ? REG_ARG3(regs) : REG_ARG2(regs);
	if ((send_ || nr == __NR_sendmmsg) && (sflags & MSG_FASTOPEN) &&
	    netconn_fastopen_stop(sb, t, &regs, call) == 0)
		return; /* a fast-open connect from moat-netd's socket */
	/* inet datagrams: the egress policy, and every send on a UDP socket
	 * moat-netd made (its msghdr and address are in guest memory) */
	if ((send_ || nr == __NR_sendmmsg) &&
	    netconn_send_stop(sb, t, &regs,
			      nr == __NR_sendto ? NETSEND_TO : nr == __NR_sendmsg ? NETSEND_MSG : NETSEND_MMSG) == 0)
		return;
	if (nr == __NR_sendmmsg) {
		(void)sendmmsg_paths(sb, t, &regs, mmsg_strip); /* AF_UNIX datagram paths */
		return;
	}
	if (!mh_ok)
		return; /* native (an unreadable msghdr: the kernel gives EFAULT) */
	/* bind with netd running (the guest can hold sockets of the host's
	 * namespace): the address is copied once, and everything but an
	 * AF_UNIX path on an AF_UNIX socket is bound by netd on the pinned
	 * file (netconn_bind_stop). Not only inet: Linux binds an AF_INET
	 * socket to {AF_UNSPEC, INADDR_ANY, port}, and a native bind would read
	 * the address and look the fd up again after any check made here. */
	/* and without netd once the caller handed over an AF_UNIX socket (one
	 * of the host's network namespace, unix_inherited_any): a native
	 * bind read the address again from guest memory, where a thread
	 * rewrote it after this stop's copy (an AF_INET address, an
	 * unreadable one, or the rewritten path's copy below the red zone
	 * turned into "\0name") or dup2()ed the inherited socket onto the
	 * number, and the guest took an abstract name of the host's (red
	 * team 70). The worker binds the pinned file with this copy and
	 * refuses an abstract name on a socket of the host's namespace
	 * (netconn_call's host_abstract_bind) */
	/* since unixgen39 every bind: a name of the sandbox's prefix bound by
	 * the guest itself passes for one of ours, whose generation no receive
	 * copy shows (a forged source path: refused below, on the copy) */
	int strict_bind = nr == __NR_bind;
	struct sockaddr_un in, out;
	memset(&in, 0, sizeof in);
	if (strict_bind) {
		struct sockaddr_storage ss;
		memset(&ss, 0, sizeof ss);
		long err = len > sizeof ss ? -EINVAL : len && guest_read(t->tid, aptr, &ss, len) < 0 ? -EFAULT : 0;
		if (err) {
			REG_SYSNO(regs) = -1;
			REG_RET(regs) = (uint64_t)err;
			ptrace(PTRACE_SETREGS, t->tid, 0, &regs);
			return;
		}
		if (ss.ss_family == AF_UNIX && unix_name_is_ours(sb, (struct sockaddr_un *)&ss, (socklen_t)len)) {
			REG_SYSNO(regs) = -1;
			REG_RET(regs) = (uint64_t)-EADDRINUSE;
			ptrace(PTRACE_SETREGS, t->tid, 0, &regs);
			audit_event(sb->audit, sb, t, t->tid, "bind", "{AF_UNIX, @moat/...}", DEC_DENY, -EADDRINUSE,
				    "the sandbox's own abstract name prefix");
			return;
		}
		if (!(ss.ss_family == AF_UNIX && len > offsetof(struct sockaddr_un, sun_path) && len <= sizeof in &&
		      ((struct sockaddr_un *)&ss)->sun_path[0])) {
			(void)netconn_copy_bind_stop(sb, t, &regs, &ss, len);
			return;
		}
		memcpy(&in, &ss, len); /* an AF_UNIX path: mapped below, from this copy */
	} else {
		if (!aptr || (send_ && !len))
			return; /* no address: native */
		if (len > sizeof in)
			return; /* not an AF_UNIX address we map; the kernel answers */
		if (guest_read(t->tid, aptr, &in, len) < 0)
			return; /* native: the kernel gives EFAULT */
		/* without netd (with it, connect is a user notification,
		 * netconn_connect, and bind is strict_bind): every socket is
		 * the guest's own */
		if (nr == __NR_connect && len >= sizeof(sa_family_t) &&
		    (in.sun_family == AF_INET || in.sun_family == AF_INET6) &&
		    netconn_stop(sb, t, &regs, &in, len) == 0)
			return; /* the egress policy decided (netconn.c) */
	}
	/* without netd: a bind of a socket that wants SO_REUSEPORT is made by
	 * a worker on the pinned file (netreuse.c); any other runs natively,
	 * without the kernel's flag */
	if (nr == __NR_bind && !strict_bind &&
	    !(in.sun_family == AF_UNIX && len > offsetof(struct sockaddr_un, sun_path) && in.sun_path[0]) &&
	    netconn_reuse_bind_stop(sb, t, &regs, &in, len) == 0)
		return;
	int stype = 0;
	if (nr == __NR_connect || nr == __NR_bind || send_) {
		if (!(in.sun_family == AF_UNIX && len > offsetof(struct sockaddr_un, sun_path) &&
		      in.sun_path[0]))
			return; /* not a path: native */
		/* A path name for a socket that is not AF_UNIX: the kernel
		 * answers (EAFNOSUPPORT/EINVAL) before it looks at a path. A bind
		 * of a socket already bound: EINVAL, as Linux (which removes the
		 * inode it made); here none is made. A send with an address on a
		 * stream or seqpacket socket: the kernel answers (EISCONN/
		 * EOPNOTSUPP) without looking at it. */
		int hfd = task_getfd(t, (int)REG_ARG0(regs));
		if (hfd < 0 && strict_bind) {
			(void)netconn_copy_bind_stop(sb, t, &regs, &in, len); /* EBADF there */
			return;
		}
		if (hfd < 0)
			return;
		int dom = 0, type = 0;
		socklen_t dl = sizeof dom, tl = sizeof type;
		struct sockaddr_un cur;
		socklen_t cl = sizeof cur;
		int native = getsockopt(hfd, SOL_SOCKET, SO_DOMAIN, &dom, &dl) < 0 || dom != AF_UNIX ||
			     getsockopt(hfd, SOL_SOCKET, SO_TYPE, &type, &tl) < 0 ||
			     (send_ && type != SOCK_DGRAM);
		int bound = !native && nr == __NR_bind &&
			    getsockname(hfd, (struct sockaddr *)&cur, &cl) == 0 && cl > sizeof(sa_family_t);
		close(hfd);
		if (native && strict_bind) {
			/* not an AF_UNIX socket (or not one now): netd binds
			 * the pinned file with the copy, the kernel answers */
			(void)netconn_copy_bind_stop(sb, t, &regs, &in, len);
			return;
		}
		if (native)
			return;
		stype = type;
		if (bound) {
			REG_SYSNO(regs) = -1;
			REG_RET(regs) = -EINVAL;
			ptrace(PTRACE_SETREGS, t->tid, 0, &regs);
			return;
		}
	}
	socklen_t olen = 0;
	int r = resolve(sb, t, nr == __NR_bind, stype, &in, len, &out, &olen);
	if (r == -EINTR)
		r = -EIO; /* a gofer call abandoned at the tracer's deadline */
	if (r == 1 && strict_bind) {
		(void)netconn_copy_bind_stop(sb, t, &regs, &in, len);
		return;
	}
	if (r == 1)
		return; /* not a path: runs natively */
	char args[600], qp[480];
	sc_quote_str(qp, sizeof qp, in.sun_path, 100);
	snprintf(args, sizeof args, "%d, {AF_UNIX, %s}, %zu", (int)REG_ARG0(regs), qp, len);
	if (r == 0 && strict_bind) {
		/* with netd, never native either: a copy below the red zone is
		 * guest memory, and a thread that dup2()ed a disconnected netd
		 * TCP socket onto the number and rewrote the copy into
		 * {AF_INET, INADDR_ANY, PORT} after this check bound a port of
		 * the host's namespace (red team 60: won within ~250 tries,
		 * root-run and rootless). netd binds the pinned file with the
		 * abstract name (its cookie check: only a socket of the guest's
		 * namespace), and the exit still removes the inode when the
		 * bind failed. */
		(void)netconn_copy_bind_stop(sb, t, &regs, &out, olen);
		t->sock_exit = 2;
		audit_event(sb->audit, sb, t, t->tid, call, args, DEC_ALLOW, 0,
			    netconn_strict() ? "abstract name in the guest netns (moat-netd)" : "abstract name in the guest netns (pinned)");
		return;
	}
	if (r == 0) {
		uint64_t addr = (REG_SP(regs) - ARCH_RED_ZONE - sizeof out - 16) & ~15ULL;
		uint64_t maddr = (addr - sizeof mh - 16) & ~15ULL;
		if (guest_write(t->tid, addr, &out, olen) < 0) {
			r = -EFAULT;
		} else if (nr == __NR_sendmsg) {
			/* the guest's msghdr with msg_name pointing at the copy */
			mh.msg_name = (void *)(uintptr_t)addr;
			mh.msg_namelen = olen;
			if (guest_write(t->tid, maddr, &mh, sizeof mh) < 0)
				r = -EFAULT;
			else
				REG_ARG1(regs) = maddr;
		} else if (nr == __NR_sendto) {
			REG_ARG4(regs) = addr;
			REG_ARG5(regs) = olen;
		} else {
			REG_ARG1(regs) = addr;
			REG_ARG2(regs) = olen;
		}
	}
	if (r < 0) {
		REG_SYSNO(regs) = -1; /* skip the call */
		REG_RET(regs) = r;
	} else if (nr == __NR_bind) {
		t->sock_exit = 2; /* see the exit: a native failure removes the inode */
	}
	ptrace(PTRACE_SETREGS, t->tid, 0, &regs);
	audit_event(sb->audit, sb, t, t->tid, call, args, r < 0 ? DEC_DENY : DEC_ALLOW, r,
		    r == 0 ? "abstract name in the guest netns" : "");
}
