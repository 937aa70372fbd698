/* syscalls/sys_tty.c - the ioctl requests the filter sends to the sentry.
 *
 * The ioctl row's rules (syscall_table.def) name requests that act on host
 * objects through an inherited tty or a donated host file; the filter traps
 * them whatever the fd. All are denied (EPERM), except FIOSETOWN/SIOCSPGRP
 * (sigio_setown_ioctl), PROCMAP_QUERY, the pidfd namespace requests
 * _IO(0xFF, 1..10) (sc_pidfd_ns_ioctl: Linux's ptrace read check on the
 * virtual ids, then made by the sentry on the pinned pidfd; sentry/policy.c
 * lets them through) and:
 *
 * TIOCSCTTY, and a pty master's TIOCSIG, TIOCPKT, TIOCSPTLCK and TIOCGPTPEER
 * (a master the caller gave as stdio is shared as is: sentry/tty.c
 * stdio_tty), act on a terminal of the sandbox's own devpts instance only
 * (the guest's /dev/pts, /dev/ptmx: a devpts the gofer mounted for this
 * sandbox, whose ptys no host process holds): login_tty(), forkpty(),
 * Python's pty.fork(), script and expect make a new session's pty its
 * controlling terminal that way. The fd is duplicated into the sentry
 * (pidfd_getfd) and its st_dev compared with the sandbox's devpts
 * (vfs_pts_dev). The master's four are then made by the gofer on that
 * pinned file (pty_master_request), not natively on the fd number, which
 * another thread's dup2 of the caller's master could have swapped (pts39).
 *
 * TIOCSCTTY alone runs natively after the check: it sets the calling
 * task's session's terminal, which no other process can do for it. Between
 * this check and the native call another task sharing the caller's fd
 * table could dup2 a different tty over the fd (the only other ttys a
 * guest can hold are the caller's, inherited as stdio without -t), so the
 * call is refused (EPERM) while one does (sc_fdtable_shared, asked before
 * the fd is pinned: a task that swaps the number after the pin and then
 * leaves the table, by exit or unshare(CLONE_FILES), was not seen by a
 * look after the check, cont41): the callers
 * found (login_tty after fork, script, tmux, Go's Setctty, node-pty) make
 * it in a child of their own, the table's one user.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <limits.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <linux/fs.h>
#include <linux/serial.h>
#include <linux/sockios.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <termios.h>
#include <unistd.h>

#include "fs/procfs.h"
#include "fs/vfs.h"
#include "kernel/task.h"
#include "syscalls/handlers.h"
#include "syscalls/sc.h"
#include "syscalls/sys_fs.h"

/* a tty's major: 4 (tty/ttyS), 5 (tty, console, ptmx), 136-143 (pty slaves) */
static int is_tty_major(unsigned maj)
{
	return maj == 4 || maj == 5 || (maj >= 136 && maj <= 143);
}

/* the real one is moat-netd's side (sentry/netconn.c); this weak default,
 * for the table's build-time tools, refuses (fail closed) */
__attribute__((weak)) long netconn_if_ioctl(struct sc_call *c)
{
	(void)c;
	return -EOPNOTSUPP;
}

/* PROCMAP_QUERY on one of procfs' maps memfds (fs/procfs.c open_maps: the
 * names as the guest knows them) is answered from the task's maps now, as
 * Linux's do_procmap_query: the struct's size and flags checked (EINVAL,
 * E2BIG), ENOENT for no mapping, the name (ENAMETOOLONG when it does not
 * fit). The build id is not read: build_id_size 0 (a gap). Any other fd:
 * the host's answer (the kernel's maps files of a guest task only). */
static long procmap_query(struct sc_call *c)
{
	char rel[96];
	struct procfs_procmap_query q;
	uint64_t usize;

	if (procfs_maps_fd(c->task, (int)c->args[0], rel, sizeof rel) != 0) {
		c->cont = 1;
		return 0;
	}
	if (sc_read_guest(c, c->args[2], &usize, sizeof usize) < 0)
		return -EFAULT;
	if (usize < 24 || usize > 4096)
		return usize < 24 ? -EINVAL : -E2BIG;
	memset(&q, 0, sizeof q);
	if (sc_read_guest(c, c->args[2], &q, usize < sizeof q ? usize : sizeof q) < 0)
		return -EFAULT;
	if (usize > sizeof q) {
		int z = sc_guest_tail_zero(c, c->args[2] + sizeof q, usize - sizeof q);
		if (z < 0)
			return z;
	}
	if (q.query_flags & ~0x3fULL)
		return -EINVAL;
	if (!!q.vma_name_size != !!q.vma_name_addr || !!q.build_id_size != !!q.build_id_addr)
		return -EINVAL;
	char name[PATH_MAX + 16];
	long r = procfs_procmap_query(VFS_OF(c), c->task, rel, &q, name, sizeof name);
	if (r < 0)
		return r;
	if (q.build_id_size)
		q.build_id_size = 0;
	if (q.vma_name_size) {
		size_t nl = name[0] ? strlen(name) + 1 : 0;
		if (nl > q.vma_name_size)
			return -ENAMETOOLONG;
		if (nl && sc_write_guest(c, q.vma_name_addr, name, nl) < 0)
			return -EFAULT;
		q.vma_name_size = (uint32_t)nl;
	}
	if (sc_write_guest(c, c->args[2], &q, usize < sizeof q ? usize : sizeof q) < 0)
		return -EFAULT;
	return 0;
}

/* hfd (the sentry's pinned copy of a guest fd) is a terminal that is not
 * of the sandbox's own devpts instance (vfs_pts_dev): the caller's own
 * terminal (a fresh description of it: tty_stdio_fresh), -t's host pty
 * fallback; any line discipline's device (isatty), not only the majors
 * is_tty_major names. Not knowing the instance (the gofer's transport)
 * counts as the host's. */
int tty_of_host(struct sc_call *c, int hfd)
{
	struct stat st;
	if (fstat(hfd, &st) < 0 || !S_ISCHR(st.st_mode) || !isatty(hfd))
		return 0;
	dev_t pts = vfs_pts_dev(c->sb->vfs);
	return !pts || st.st_dev != pts;
}

/* TIOCSWINSZ: a terminal's window size is the terminal's, not the
 * description's, and it outlives the sandbox. Without -t the guest's stdio
 * may be the caller's own terminal (a fresh description of it: tty_stdio_fresh),
 * and a native TIOCSWINSZ there resized the caller's terminal until the
 * terminal emulator next reported a size, and signalled the caller's
 * foreground job with SIGWINCH (red team 62). So the request is the
 * sentry's: the fd is pinned (pidfd_getfd) and, if it is a terminal of the
 * sandbox's own devpts instance (vfs_pts_dev: the guest's ptys, their
 * masters, -t's pts/0), the size read from the guest is set on that pinned
 * file, never on whatever the fd number holds by then (no check then
 * continue); any other terminal is EPERM, anything else ENOTTY as Linux.
 * The gofer sets it (vfs_pts_winsize: GOFER_OP_WINSZ, which checks the
 * file's devpts again): the sentry's own filter allows no TIOCSWINSZ since
 * red team 71, so a compromised sentry cannot resize the caller's terminal
 * it holds. */
static long tty_set_winsize(struct sc_call *c)
{
	int fd = task_getfd(c->task, (int)c->args[0]);
	if (fd < 0)
		return fd;
	struct stat st;
	struct winsize ws;
	long r = fstat(fd, &st) < 0 ? -errno : 0;
	if (!r && (!S_ISCHR(st.st_mode) || !is_tty_major(major(st.st_rdev))))
		r = -ENOTTY;
	dev_t pts = vfs_pts_dev(c->sb->vfs);
	if (!r && (!pts || st.st_dev != pts)) {
		snprintf(c->note, sizeof c->note, "TIOCSWINSZ: not a terminal of the sandbox");
		r = -EPERM;
	}
	if (!r && sc_read_guest(c, c->args[2], &ws, sizeof ws) < 0)
		r = -EFAULT;
	if (!r)
		r = vfs_pts_winsize(c->sb->vfs, fd, &ws);
	close(fd);
	return r;
}

/* A pty master's TIOCSIG, TIOCPKT, TIOCSPTLCK or TIOCGPTPEER on hfd, the
 * pinned copy of the guest's fd, a terminal of the sandbox's devpts
 * (checked): made by the gofer on that file (vfs_pts_ctl: GOFER_OP_PTSCTL,
 * the sentry's filter has none of the four), never natively on the guest's
 * fd number after the check: a thread's dup2 of the caller's pty master
 * given as stdio onto the number meanwhile reached the caller's terminal
 * (pts39: its slave's foreground job signalled, its slave opened with
 * TIOCGPTPEER). TIOCPKT's and TIOCSPTLCK's int is read once here;
 * TIOCGPTPEER's slave is installed with the guest's O_CLOEXEC (opened
 * O_NOCTTY always: it does not become the opener's controlling terminal,
 * as glibc's openpty asks anyway). */
static long pty_master_request(struct sc_call *c, int hfd, unsigned cmd)
{
	int arg = (int)c->args[2];
	if ((cmd == TIOCPKT || cmd == TIOCSPTLCK) && sc_read_guest(c, c->args[2], &arg, sizeof arg) < 0)
		return -EFAULT;
	if (cmd != TIOCGPTPEER)
		return vfs_pts_ctl(c->sb->vfs, hfd, cmd, arg, NULL);
	int peer = -1;
	long r = vfs_pts_ctl(c->sb->vfs, hfd, cmd, arg, &peer);
	return r < 0 ? r : sc_return_fd(c, peer, arg & O_CLOEXEC);
}

long sys_ioctl(struct sc_call *c)
{
	unsigned cmd = (unsigned)c->args[1];

	/* an O_PATH fd (here a placeholder's stand-in): EBADF whatever the
	 * request, as Linux's ioctl (fdget) gives before looking at it */
	int pfd = task_getfd(c->task, (int)c->args[0]);
	if (pfd == -EBADF)
		return pfd;
	if (pfd >= 0) { /* (another failure: no stand-in known, as before) */
		int ph = vfs_fd_is_placeholder(VFS_OF(c), pfd);
		close(pfd);
		if (ph)
			return -EBADF;
	}
	_Static_assert(TCSETS == 0x5402 && TCSETSF == 0x5404 && TCSETA == 0x5406 && TCSETAF == 0x5408 &&
			       TIOCSSOFTCAR == 0x541a && SC_IOCTL_TCSETS2 == (unsigned)_IOW('T', 0x2B, char[44]) &&
			       SC_IOCTL_TCSETSF2 == (unsigned)_IOW('T', 0x2D, char[44]),
		       "sc_ioctl_termios_set's numbers");
	_Static_assert(SC_IOCTL_TIOCSISO7816 == (unsigned)TIOCSISO7816 && TIOCMBIC == (TIOCMBIS | 1),
		       "the serial line rules' numbers");
	_Static_assert(FIGETBSZ == 2 && FIOQSIZE == 0x5460 && FS_IOC_GETFLAGS == 0x80086601u,
		       "sc_ioctl_fileinfo's numbers");
	_Static_assert(FS_IOC_GETFSLABEL == 0x81009431u && FS_IOC_GETVERSION == 0x80087601u &&
			       SC_IOCTL_EXT4_GETVERSION == (unsigned)_IOR('f', 3, long) &&
			       SC_IOCTL_EXT4_GETFSUUID == (unsigned)_IOR('f', 44, uint64_t) &&
			       SC_IOCTL_FAT_GET_VOLUME_ID == (unsigned)_IOR('r', 0x13, uint32_t),
		       "sc_ioctl_fsidentity's numbers");
#ifdef FS_IOC_GETFSSYSFSPATH /* (Linux 6.10's headers) */
	_Static_assert(FS_IOC_GETFSUUID == 0x80111500u && FS_IOC_GETFSSYSFSPATH == 0x80811501u,
		       "sc_ioctl_fsidentity's numbers");
#endif
	if (sc_ioctl_fsidentity(cmd)) {
		/* the file system's identity (UUID, label, block device name)
		 * or an inode's (its generation): the host's on a host file;
		 * none here, as on a file system without these requests */
		snprintf(c->note, sizeof c->note, "file system or inode identity");
		return -ENOTTY;
	}
	if (cmd == TCXONC) {
		/* tcflow: TCIOFF and TCION send the STOP or START character
		 * (the guest's to set) to the terminal's other side, on the
		 * caller's terminal its emulator, past the terminal-controls
		 * filter (ttyout38): refused whatever the fd (no fd check to
		 * race); stopping and restarting the output stay native */
		if (c->args[2] == TCIOFF || c->args[2] == TCION) {
			snprintf(c->note, sizeof c->note, "TCXONC: TCIOFF/TCION send a character to the terminal");
			return -EPERM;
		}
		c->cont = 1;
		return 0;
	}
	if (sc_ioctl_termios_set(cmd)) {
		/* noted (a background sandbox's end puts the caller's terminal
		 * back only if the guest set a terminal's modes: sentry/tty.c
		 * tty_guard_restore), then the host's: whatever the fd, no
		 * argument read */
		__atomic_store_n(&c->sb->termios_set, 1, __ATOMIC_SEQ_CST);
		c->cont = 1;
		return 0;
	}
	if (sc_ioctl_fileinfo(cmd)) {
		/* trapped for the check above only: the host answers (the
		 * argument is the guest's pointer, never read here) */
		c->cont = 1;
		return 0;
	}
	if (cmd == FIOSETOWN || cmd == SIOCSPGRP)
		return sigio_setown_ioctl(c);
	if (cmd == FIOASYNC)
		return sigio_fioasync_ioctl(c);
	if ((cmd & 0xffffff00u) == 0x8900u || (cmd & 0xffffff00u) == 0x8b00u)
		return netconn_if_ioctl(c); /* socket interface requests (sentry/netconn.c) */
	if ((cmd & 0xffffff00u) == 0xff00u && (cmd & 0xff) >= 1 && (cmd & 0xff) <= 10)
		return sc_pidfd_ns_ioctl(c); /* PIDFD_GET_*_NAMESPACE */
	/* PROCMAP_QUERY (_IOWR('f', 17, struct procmap_query), Linux 6.11) has
	 * the 'f' write bit but changes nothing: a query of the mappings of a
	 * /proc/<pid>/maps file's task, which only a guest task's can be
	 * (procfs gives no maps of pid 1); no other file takes this number */
	if (cmd == SC_IOCTL_PROCMAP_QUERY)
		return procmap_query(c);
	/* PIDFD_GET_INFO, whatever its size (pidfs reads it from the
	 * number: an extensible struct) */
	if (sc_ioctl_pidfd_info(cmd))
		return sc_pidfd_info_ioctl(c);
	if (cmd == TIOCSWINSZ)
		return tty_set_winsize(c);
	_Static_assert(TIOCSCTTY == 0x540e && TIOCPKT == 0x5420 && TIOCSPTLCK == 0x40045431u &&
			       TIOCSIG == 0x40045436u && TIOCGPTPEER == 0x5441,
		       "sc_ioctl_pts_only's numbers");
	if (!sc_ioctl_pts_only(cmd)) {
		snprintf(c->note, sizeof c->note, "matches a deny rule");
		return -EPERM;
	}
	/* TIOCSCTTY: the table's other users looked for before the pin (a
	 * task that dup2s after the pin and then leaves the table, by exit
	 * or unshare(CLONE_FILES), is not seen by a look after it) */
	int shared = cmd == TIOCSCTTY && sc_fdtable_shared(c);
	int fd = task_getfd(c->task, (int)c->args[0]);
	if (fd < 0)
		return fd;
	struct stat st;
	int r = fstat(fd, &st) < 0 ? -errno : 0;
	if (!r && (!S_ISCHR(st.st_mode) || !is_tty_major(major(st.st_rdev))))
		r = -ENOTTY;
	dev_t pts = vfs_pts_dev(c->sb->vfs);
	if (!r && (!pts || st.st_dev != pts)) {
		snprintf(c->note, sizeof c->note, "%s: not a terminal of the sandbox",
			 cmd == TIOCSCTTY ? "TIOCSCTTY" : "a pty master's request");
		r = -EPERM;
	}
	if (cmd == TIOCSCTTY)
		sc_fdtable_test_delay();
	if (!r && shared) {
		/* the calling task's session: only the task can make it,
		 * natively on the number checked; a task sharing the fd table
		 * could dup2 another terminal there (one the caller gave as
		 * stdio) before the kernel looks: refused while one does */
		snprintf(c->note, sizeof c->note, "TIOCSCTTY: the fd table has other users");
		r = -EPERM;
	} else if (!r && cmd == TIOCSCTTY) {
		/* the calling task's session: only the task can make it, and
		 * no other task can move the number meanwhile */
		c->cont = 1;
	} else if (!r) {
		r = pty_master_request(c, fd, cmd);
	}
	close(fd);
	return r;
}

/* open("/dev/tty"): the caller's controlling terminal. The gofer's /dev/tty
 * would be the gofer's own (it has none: ENXIO), so the sentry opens the
 * terminal named by the caller's tty_nr (field 7 of its /proc/<pid>/stat in
 * the guest's procfs) when it is a pty of the sandbox's devpts; anything
 * else (no controlling terminal) is ENXIO, as on Linux. */
int tty_open_ctty(struct sc_call *c, int flags, int *fd)
{
	struct sandbox *sb = c->sb;
	int tty_nr = 0;

	if (task_proc_ids(sb, c->task->vtgid, NULL, NULL, &tty_nr) < 0 || tty_nr == 0)
		return -ENXIO;
	unsigned maj = ((unsigned)tty_nr >> 8) & 0xfff;
	unsigned min = ((unsigned)tty_nr & 0xff) | (((unsigned)tty_nr >> 12) & 0xfff00);
	if (maj < 136 || maj > 143)
		return -ENXIO; /* not one of the sandbox's ptys */
	struct stat st;
	int r = vfs_pts_open(sb->vfs, (maj - 136) * 256 + min, flags, fd, &st);
	if (r < 0)
		return r;
	if (st.st_rdev != makedev(maj, min)) {
		close(*fd);
		return -ENXIO;
	}
	return 0;
}
