/* sentry/tty.c - `moat run -t`: a private pseudo-terminal for the guest.
 *
 * The guest never gets the caller's terminal: without -t it has no
 * controlling terminal at all (moat-init calls setsid()). With -t the sentry
 * opens a new pty pair of the sandbox's own devpts instance through the
 * gofer (the guest's /dev/pts/0; a host pty only if the sandbox has no
 * devpts), before the guest exists; moat-init makes the
 * slave its controlling terminal and the program's stdio, and a relay thread
 * of the sentry copies the caller's stdin to the master and the master to the
 * caller's stdout. The caller's terminal is put in raw mode meanwhile (the
 * guest's line discipline does the editing) and restored at exit; window size
 * changes (SIGWINCH) are passed on. Job control, ^C and ^Z then act inside
 * the sandbox only. Without -t a stdout or stderr that is the caller's
 * terminal is such a pty's slave too (not the guest's controlling
 * terminal), relayed the same way through the terminal-controls filter
 * (tty_relay_plan).
 */
#include "sentry/sentry.h"
#include "common/log.h"
#include "common/termfilter.h"
#include "common/util.h"
#include "gofer/gofer.h"
#include "kernel/task.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <termios.h>
#include <unistd.h>

static int write_all_fd(int fd, const char *b, ssize_t n);
static void relay_mode(int on);
static int master = -1;
static int wake[2] = { -1, -1 };
static int raw_set;
static struct termios saved;
static pthread_t relay;
static int relay_started;
static int relay_finishing; /* tty_finish: the guest is gone (atomic) */
size_t (*tty_out_hook)(size_t n);
/* --tty-controls=screen (the default): the output goes through the filter
 * (common/termfilter.c), and the modes it saw turned on are undone at the
 * end (restore); only the relay thread uses it until it is joined */
static int filter_on;
static struct term_filter filt;
/* where the relay writes and reads the caller's terminal: moat's fds 1 and 0
 * under -t; without -t (tty_relay_plan) the caller's terminal among fds 1-2,
 * and fd 0 only when it is relayed too (relay_in) */
static int relay_out = 1;
static int relay_in = 1;
static int relay_cbreak; /* without -t: the caller's terminal keeps ISIG (^C, ^Z are moat's) */
static int relay_slave = -1; /* without -t: moat's own copy of the slave (--output-limit's writes) */
static int relay_no_t;    /* without -t: tty_relay_plan chose the relay */
static int relay_keep_slave; /* ...and --output-limit's relay writes to the slave */

int tty_master(void)
{
	return master;
}

static void restore(void)
{
	/* the modes the guest left on (alternate screen, hidden cursor, mouse
	 * reporting...), once no output of the relay can follow */
	if (filter_on && !relay_started) {
		char r[512];
		size_t n = term_filter_restore(&filt, r, sizeof r);
		filter_on = 0;
		dbg("-t: %llu terminal controls dropped, %zu bytes of modes undone", filt.dropped, n);
		if (n && isatty(relay_out) && write_all_fd(relay_out, r, (ssize_t)n) < 0) {
			/* the caller's terminal is gone */
		}
	}
	if (raw_set) {
		tcsetattr(0, TCSADRAIN, &saved);
		raw_set = 0;
	}
}

static void on_winch(int sig)
{
	(void)sig;
	int e = errno;
	if (write(wake[1], "w", 1) < 0) {
		/* the relay is behind: it reads the size anyway */
	}
	errno = e;
}

/* The master's window size is set by the gofer (GOFER_OP_WINSZ on the
 * sandbox's devpts, checked there): the sentry's filter has no TIOCSWINSZ
 * since red team 71 (it allowed one on any fd, the caller's terminal among
 * them). One connection, made at the first use and kept until tty_finish;
 * only the relay thread (and tty_open before it) uses it. With a host pty
 * (no devpts) the size is set directly, which works only before the sentry
 * confines itself: later resizes are not passed on (Known gaps). */
static int win_ctl = -1, win_exp = -1;
static struct gofer_conn *win_conn;

static void copy_winsize(void)
{
	struct winsize ws;
	if (ioctl(relay_no_t ? relay_out : 0, TIOCGWINSZ, &ws) != 0 && ioctl(relay_out, TIOCGWINSZ, &ws) != 0)
		return;
	if (win_exp < 0) {
		(void)ioctl(master, TIOCSWINSZ, &ws);
		return;
	}
	if (!win_conn)
		win_conn = gofer_connect(win_ctl);
	if (win_conn && gofer_winsz(win_conn, win_exp, master, &ws) == -EIO) {
		gofer_disconnect(win_conn); /* the transport: a new one next time */
		win_conn = NULL;
	}
}

/* A pty of the sandbox's own devpts (the gofer's "pts" on the device export
 * `exp`): the guest then finds its terminal as /dev/pts/0 (ttyname, tty,
 * /dev/tty). 0, or -errno (no devpts instance). */
static int pty_from_gofer(int ctl, int exp, int *m, int *s)
{
	struct gofer_conn *c = gofer_connect(ctl);
	char rel[32];
	int r;

	if (!c)
		return -EIO;
	r = gofer_open(c, exp, "pts/ptmx", O_RDWR | O_NOCTTY, 0, m, NULL);
	if (r == 0) {
		int unlock = 0;
		unsigned n;
		if (ioctl(*m, TIOCSPTLCK, &unlock) < 0 || ioctl(*m, TIOCGPTN, &n) < 0) {
			r = -errno;
		} else {
			snprintf(rel, sizeof rel, "pts/%u", n);
			r = gofer_open(c, exp, rel, O_RDWR | O_NOCTTY, 0, s, NULL);
		}
		if (r < 0)
			close(*m);
	}
	gofer_disconnect(c);
	return r;
}

int tty_open(int gofer_ctl, int dev_export, int *slave_out, char *err, size_t errlen)
{
	char name[64];
	int slave = -1;
	if (dev_export >= 0 && pty_from_gofer(gofer_ctl, dev_export, &master, &slave) == 0) {
		win_ctl = gofer_ctl;
		win_exp = dev_export;
	} else {
		/* no devpts of the sandbox's own: a pty of the host's */
		master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
		if (master < 0 || grantpt(master) < 0 || unlockpt(master) < 0 ||
		    ptsname_r(master, name, sizeof name) != 0) {
			snprintf(err, errlen, "-t: cannot allocate a pseudo-terminal: %s",
				 strerror(errno));
			return -errno;
		}
		slave = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
		if (slave < 0) {
			snprintf(err, errlen, "-t: %s: %s", name, strerror(errno));
			return -errno;
		}
	}
	if (pipe2(wake, O_CLOEXEC | O_NONBLOCK) < 0) {
		snprintf(err, errlen, "-t: pipe: %s", strerror(errno));
		close(slave);
		return -errno;
	}
	copy_winsize();
	/* without -t the guest's terminal starts with the caller's settings
	 * (erase key, IUTF8, ...), as the terminal it stands for */
	struct termios ct;
	if (relay_no_t && tcgetattr(relay_out, &ct) == 0)
		(void)tcsetattr(slave, TCSANOW, &ct);
	if (relay_keep_slave && (relay_slave = fcntl(slave, F_DUPFD_CLOEXEC, 3)) < 0) {
		snprintf(err, errlen, "the terminal's relay: %s", strerror(errno));
		close(slave);
		return -errno;
	}
	*slave_out = slave;
	return 0;
}

static int write_all_fd(int fd, const char *b, ssize_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, b, (size_t)n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		b += w;
		n -= w;
	}
	return 0;
}

/* The relay never blocks (red team 71): the master is non-blocking, and
 * the caller's input the master does not take at once (the guest's pty
 * input queue is full: a program that does not read its stdin while the
 * caller types, pastes or pipes more than ~12 KB) waits in `in`, at most
 * one read's worth, while the caller's stdin is not read meanwhile (the
 * caller's writer waits, as for a native program's full input). Before, a
 * blocking write to the master stopped the relay: the guest's output was
 * no longer read, so the guest blocked at its next write, and moat never
 * ended (`yes | moat run -t -- sh -c 'sleep 1; echo done'` hung for good
 * with the caller's terminal raw; natively it prints done). What is still
 * pending once the guest is gone is dropped. */
static void *relay_main(void *arg)
{
	(void)arg;
	char buf[4096];
	unsigned char fbuf[sizeof buf + TERM_FILTER_SEQ_MAX + 8];
	char in[4096];
	size_t in_len = 0, in_off = 0;
	int in_open = relay_in, fin = 0;
	for (;;) {
		struct pollfd p[3] = {
			{ .fd = master, .events = POLLIN | (in_len ? POLLOUT : 0) },
			{ .fd = wake[0], .events = POLLIN },
			{ .fd = in_open && !in_len ? 0 : -1, .events = POLLIN },
		};
		/* once the guest is gone the master's EIO is not waited for: a
		 * slave may still be open in the sentry (red team 62: the file
		 * of a guest's flock or fcntl lock on its terminal, kept until
		 * the sandbox is freed; moat hung here with the caller's
		 * terminal raw). The output already written is drained until
		 * none comes for 100 ms (a pty passes it on from a work queue),
		 * and the caller's input is left to the caller. */
		int np = poll(p, 3, fin ? 100 : -1);
		if (np < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (np == 0)
			break;
		if (p[1].revents) {
			while (read(wake[0], buf, sizeof buf) > 0)
				;
			if (__atomic_load_n(&relay_finishing, __ATOMIC_SEQ_CST)) {
				fin = 1;
				in_open = 0;
				in_len = 0;
			}
			copy_winsize();
		}
		if (in_len && (p[0].revents & POLLOUT)) {
			ssize_t w = write(master, in + in_off, in_len);
			if (w > 0) {
				in_off += (size_t)w;
				in_len -= (size_t)w;
			} else if (w < 0 && errno != EAGAIN && errno != EINTR) {
				in_len = 0;
				in_open = 0;
			}
		}
		if (p[0].revents & (POLLIN | POLLHUP | POLLERR)) {
			ssize_t n = read(master, buf, sizeof buf);
			if (n < 0 && (errno == EINTR || errno == EAGAIN))
				continue;
			if (n <= 0) /* EIO: every slave fd is closed, the guest is gone */
				break;
			size_t give = tty_out_hook ? tty_out_hook((size_t)n) : (size_t)n;
			/* past --output-limit the output is dropped (and the sandbox ended) */
			const char *out = buf;
			if (give && filter_on) {
				give = term_filter(&filt, (const unsigned char *)buf, give, fbuf);
				out = (const char *)fbuf;
			}
			if (give && write_all_fd(relay_out, out, (ssize_t)give) < 0) {
				/* nobody reads our output: keep draining the guest's */
			}
		}
		if (in_open && !in_len && p[2].fd == 0 && p[2].revents) {
			ssize_t n = read(0, in, sizeof in);
			if (n < 0 && (errno == EINTR || errno == EAGAIN))
				continue;
			in_off = 0;
			if (n <= 0) {
				/* end of the caller's input: end of file for the guest
				 * (a raw terminal's reader gets its VEOF key instead) */
				if (!raw_set)
					in[in_len++] = 4;
				in_open = 0;
			} else {
				in_len = (size_t)n;
			}
		}
	}
	return NULL;
}

/* Without -t the guest's stdio may be the caller's own terminal (a shell's
 * is its stdin, stdout and stderr). termios, isatty and reads work on it as
 * on the host, but what the guest sets there outlived the sandbox (red team
 * round 11): echo, canonical mode and ISIG off, O_NONBLOCK on the shell's
 * own open file description, and tcflow(TCOOFF), which
 * stopped the terminal's output for good: the caller's shell hung at its
 * next prompt, and moat itself in its last "killed: --timeout" line (the
 * sandbox gone, its cgroup kept until the write returned). So the settings
 * each terminal among fds 0-2 had before the guest existed are kept here,
 * and tty_guard_restore() puts them back and restarts the output (TCOON):
 * once the guest is gone (run.c, before anything more is written), at a
 * limit's kill (limits_end: a writer of moat's blocked on the stopped
 * terminal is let go) and at exit. The sentry's filter allows TCSETS and
 * TCXONC on fds 0-2 only (confine_rules.c). The window size is not
 * put back (the user may have resized meanwhile): ARCHITECTURE Known gaps. */
/* the kernel's struct termios as TCGETS writes it (36 bytes on x86-64;
 * glibc's own is larger and converted by tcgetattr), kept as bytes: the
 * restore is the same raw TCSETS, whatever glibc's tcsetattr would call */
static unsigned char guard_saved[3][64];
static int guard_shared[3] = { 1, 1, 1 }; /* the guest's fd i is the caller's description */
static int guard_orig[3] = { 0, 1, 2 };   /* the caller's description of fd i */
static int guard_set[3];
/* and the file status flags (O_NONBLOCK, O_APPEND, O_ASYNC...): the open
 * file description is the caller's shell's own, so a guest's F_SETFL
 * O_NONBLOCK on it left the shell's next programs reading EAGAIN */
static int guard_fl[3];
static int guard_flset[3];

static void guard_atexit(void)
{
	tty_guard_restore();
}

static struct sandbox *guard_sb;

void tty_guard_start(struct sandbox *sb)
{
	guard_sb = sb;
	int any = 0;
	for (int fd = 0; fd < 3; fd++) {
		if (isatty(fd) && ioctl(fd, TCGETS, guard_saved[fd]) == 0) {
			guard_set[fd] = 1;
			any = 1;
		}
		/* the flags of a description the guest still shares with the
		 * caller (tty_stdio_fresh kept it: any type) */
		if (guard_shared[fd] && (guard_fl[fd] = fcntl(guard_orig[fd], F_GETFL)) >= 0) {
			guard_flset[fd] = 1;
			any = 1;
		}
	}
	if (any)
		atexit(guard_atexit);
}

static pid_t moat_pgrp = -1;

/* SIGTTOU blocked meanwhile: moat run in the background of the caller's
 * shell would otherwise be stopped by its own restore (tty_check_change).
 * The settings are put back only when a guest task set a terminal's modes
 * (sandbox termios_set, any fd: sys_ioctl traps every termios write to
 * note it, no fd check to race; moat's own raw mode is its relay's to
 * undo, restore()): what else changed them is another program of the
 * caller's, whatever job is in the foreground. A sandbox that ends in the
 * background must not undo what the foreground program set meanwhile (red
 * team 36: `moat run -- sleep 2 &`, then `read -s` or vim turned echo off,
 * and the sandbox's end turned it back on under them, a password typed
 * then on the screen; the guest picks that moment by exiting), nor one in
 * the foreground what its pipeline's pager set (red team 89: `moat run
 * prog | less`, less's raw mode taken back to echo and canonical mode when
 * prog ended, less still running).
 * Output is restarted and the file status flags put back either way (moat's
 * own last writes need the first; the second are the descriptions moat
 * holds). */
void tty_guard_restore(void)
{
	int e = errno;
	sigset_t tt, old;
	sigemptyset(&tt);
	sigaddset(&tt, SIGTTOU);
	pthread_sigmask(SIG_BLOCK, &tt, &old);
	for (int fd = 0; fd < 3; fd++) {
		unsigned char now[64];
		if (guard_flset[fd]) {
			int fl = fcntl(guard_orig[fd], F_GETFL);
			if (fl >= 0 && fl != guard_fl[fd])
				(void)fcntl(guard_orig[fd], F_SETFL, guard_fl[fd]);
		}
		if (!guard_set[fd])
			continue;
		(void)ioctl(fd, TCXONC, TCOON);
		if (guard_sb && !__atomic_load_n(&guard_sb->termios_set, __ATOMIC_SEQ_CST))
			continue; /* the guest never set it: another program's settings */
		memset(now, 0, sizeof now);
		if (ioctl(fd, TCGETS, now) == 0 && memcmp(now, guard_saved[fd], sizeof now) != 0)
			(void)ioctl(fd, TCSETS, guard_saved[fd]);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	errno = e;
}

static int jc_fd = -1; /* the caller's terminal among fds 0-2 (moat's controlling one) */

/* fd is a pty master (TIOCGPTN answers on a master only) */
static int pty_master(int fd)
{
	unsigned ptn;
	struct stat st;
	return fstat(fd, &st) == 0 && S_ISCHR(st.st_mode) && ioctl(fd, TIOCGPTN, &ptn) == 0;
}

/* fd is a terminal the caller reads and writes as one (its own, or
 * another's slave), not a pty master: a master given as stdio is the other
 * side of a terminal, whose reader is a program (what the guest writes is
 * its slave's input, what it reads is its slave's output), never a terminal
 * emulator to filter for, nor moat's controlling terminal (tcgetpgrp
 * answers the slave's foreground group there); its reopen through
 * /proc/self/fd/N (ptmx) would be a new pty pair, no read-only or
 * write-only description of it (red team 82: the guest's stdin master
 * became /dev/null, moat taking itself for a background job, and what it
 * wrote to a stdout master went to a new pair nobody read). It is shared
 * with the guest as a socket is (tty_guard, caller_ofd; its pty requests
 * TIOCSIG, TIOCPKT, TIOCSPTLCK, TIOCGPTPEER are the sandbox's own ptys'
 * only: syscalls/sys_tty.c). */
static int stdio_tty(int fd)
{
	return isatty(fd) && !pty_master(fd);
}

/* Without -t, started as a background job of the caller's shell (`moat run
 * ... &`) with the caller's terminal as stdin (or stdout, stderr: one
 * read-write description): the guest is in a session of
 * its own, so the kernel's job control (SIGTTIN for a background reader of
 * its controlling terminal) never stops it, and it read what the user typed
 * to the foreground program (red team round 11: a password for `read -s`
 * went to the sandbox; natively the background job is stopped). Such a
 * sandbox gets /dev/null as stdin instead, as a shell without job control
 * gives its background commands. Only when the terminal is moat's
 * controlling terminal and its foreground group is not moat's (tcgetpgrp
 * fails for a terminal that is no one's or another session's: no job
 * control applies there natively either). One put in the background later
 * (^Z) is stopped with moat: tty_jobctl_start. */
/* The first of fds 0-2 that is a terminal with a foreground group (moat's
 * controlling terminal: tcgetpgrp fails for one that is no one's or another
 * session's), and that group in *fg; -1 if none. */
static int stdio_ctty(pid_t *fg)
{
	for (int fd = 0; fd < 3; fd++) {
		pid_t g;
		if (stdio_tty(fd) && (g = tcgetpgrp(fd)) >= 0) {
			*fg = g;
			return fd;
		}
	}
	return -1;
}

/* sig's handler fn, SA_RESTART */
static void catch_signal(int sig, void (*fn)(int))
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = fn;
	sa.sa_flags = SA_RESTART;
	sigaction(sig, &sa, NULL);
}

/* /dev/null as fd 0, in place of the caller's terminal: 0 or -errno */
static int stdin_null(void)
{
	int nul = open("/dev/null", O_RDONLY | O_CLOEXEC);
	int r = nul < 0 || dup2(nul, 0) < 0 ? -errno : 0;
	if (nul >= 0)
		close(nul);
	return r;
}

void tty_background_stdin(void)
{
	pid_t fg = -1;
	moat_pgrp = getpgrp(); /* the confined sentry may not ask (jobctl) */
	stdio_ctty(&fg);
	if (fg < 0 || fg == moat_pgrp)
		return;
	int e;
	if (stdio_tty(0) && (e = stdin_null()) < 0)
		warnx_("stdin: the caller's terminal stays the background sandbox's (%s)", strerror(-e));
	tty_stdio_write_only();
	dbg("started in the background: stdin is /dev/null, the terminal write-only");
}

/* Job control for the guest (without -t, the caller's terminal moat's
 * controlling terminal): ^Z stops moat (SIGTSTP from the terminal), but the
 * guest, in a session of its own, ran on and read what the user typed at
 * the shell's prompt meanwhile (red team round 11). Now SIGTSTP, SIGTTIN
 * and SIGTTOU to moat stop every guest process first (SIGSTOP by pidfd,
 * twice over the task table for children forked meanwhile; the tracer
 * makes them group-stops), then moat itself; at SIGCONT the guest is
 * continued only once moat is the terminal's foreground again (`fg`): a
 * sandbox sent on with `bg` stays stopped until then (natively it would run
 * until it read the terminal, which moat cannot tell), and one a signal is
 * forwarded to (SIGTERM of `kill %1`...) is continued to receive it. A thread does the
 * work: the task table's lock is no signal handler's. */
static int jc_pipe[2] = { -1, -1 };
static struct sandbox *jc_sb;
static pthread_t jc_thread;

static void jc_on_signal(int sig)
{
	int e = errno;
	/* T: ^Z (or a kill -TSTP); O: a read or write of moat's own in the
	 * background (restarted until stopped: only acted on while it still is) */
	char c = sig == SIGCONT ? 'C' : sig == SIGTSTP ? 'T' : 'O';
	if (write(jc_pipe[1], &c, 1) < 0) {
		/* a byte is pending already */
	}
	errno = e;
}

static int jc_send(struct task *t, void *arg)
{
	int sig = *(int *)arg;
	if (t->pidfd >= 0)
		syscall(SYS_pidfd_send_signal, t->pidfd, sig, NULL, 0);
	else
		kill(t->tgid, sig);
	return 0;
}

static void *jc_main(void *arg)
{
	(void)arg;
	int stopped = 0;
	for (;;) {
		char c = 'C';
		/* stopped and sent on with bg: fg gives moat the terminal without
		 * a SIGCONT (the job runs), so the foreground is looked at too */
		struct pollfd p = { .fd = jc_pipe[0], .events = POLLIN };
		int k = poll(&p, 1, stopped ? 200 : -1);
		if (k < 0 && errno != EINTR)
			return NULL;
		if (k > 0) {
			ssize_t n = read(jc_pipe[0], &c, 1);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				return NULL;
		} else if (k < 0) {
			continue;
		}
		if (c == 'T' || (c == 'O' && tcgetpgrp(jc_fd) != moat_pgrp)) {
			if (!stopped) {
				int sig = SIGSTOP;
				struct timespec ts = { 0, 20 * 1000 * 1000 };
				task_for_each_leader(jc_sb, jc_send, &sig);
				nanosleep(&ts, NULL); /* the tracer makes them group-stops */
				task_for_each_leader(jc_sb, jc_send, &sig);
				nanosleep(&ts, NULL);
				stopped = 1;
			}
			relay_mode(0);
			kill(getpid(), SIGSTOP); /* the shell sees the job stop */
		} else if (stopped && (c == 'K' || c == 'C') && (c == 'K' || tcgetpgrp(jc_fd) == moat_pgrp)) {
			int sig = SIGCONT;
			stopped = 0;
			if (tcgetpgrp(jc_fd) == moat_pgrp)
				relay_mode(1);
			task_for_each_leader(jc_sb, jc_send, &sig);
		}
	}
}

/* a signal forwarded to the guest (run.c forward_signal: `kill %1` sends
 * SIGTERM and SIGCONT to a stopped job) continues a guest stopped here, or
 * it would never see it. Async-signal-safe. */
void tty_jobctl_kick(void)
{
	if (jc_pipe[1] >= 0) {
		int e = errno;
		char c = 'K';
		if (write(jc_pipe[1], &c, 1) < 0) {
			/* a byte is pending already */
		}
		errno = e;
	}
}

/* Without -t the guest's fds 0-2 were the caller's own open file
 * descriptions, and what a guest sets on a description reached the
 * caller's: O_NONBLOCK, O_APPEND, O_ASYNC by F_SETFL (a guest that left
 * O_NONBLOCK on the shell's terminal made its next program read EAGAIN;
 * node does), the SIGIO owner and signal (red team 47: refused on the
 * caller's descriptions, with a check-then-run race on a native
 * F_SETOWN), OFD locks, leases. Now, before anything is spawned, each of
 * fds 0-2 that is a terminal (not a pty master: its reopen is a new pty),
 * a pipe or a FIFO is replaced by a fresh open of the same object through
 * /proc/self/fd/N (O_NOCTTY, the same access mode, O_NONBLOCK so that a
 * FIFO with no peer does not block, then the caller's flags but O_ASYNC;
 * the same inode and device checked), one fresh description for fds that
 * shared one (kcmp: a shell's terminal is one read-write description on
 * 0-2). The caller's own are kept (CLOEXEC dups, sb->caller_stdio) for
 * tty_guard and caller_ofd. Any error keeps the original. A regular file
 * keeps it too (a reopen would not share the caller's offset: `(moat run
 * prog; echo after) >file` appends after prog's output), and a socket (it
 * cannot be reopened): caller_ofd still refuses the SIGIO calls on those. */
static int same_ofd(int a, int b)
{
	pid_t me = getpid();
	return syscall(SYS_kcmp, me, me, 0 /* KCMP_FILE */, a, b) == 0;
}

/* moat's fd reopened through /proc/self/fd/N with access mode acc: a new
 * open file description of the same file (device, inode and rdev checked
 * against st, fd's), its status flags set to fl. The new fd (O_CLOEXEC);
 * -1 when the open failed (errno), -2 when the check or the flags did. The
 * one reopen of fresh_open, tty_stdio_write_only and tty_stdin_read_only. */
static int reopen_same(int fd, int acc, int fl, const struct stat *st)
{
	char p[32];
	struct stat rst;
	snprintf(p, sizeof p, "/proc/self/fd/%d", fd);
	int nfd = open(p, acc | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	if (nfd < 0)
		return -1;
	if (fstat(nfd, &rst) < 0 || rst.st_dev != st->st_dev || rst.st_ino != st->st_ino ||
	    rst.st_rdev != st->st_rdev || fcntl(nfd, F_SETFL, fl) < 0) {
		close(nfd);
		return -2;
	}
	return nfd;
}

static int fresh_open(int fd, int fl, const struct stat *st)
{
	if (pty_master(fd))
		return -1; /* /dev/ptmx opens a new pair (stdio_tty) */
	int nfd = reopen_same(fd, fl & O_ACCMODE, fl & ~(O_ACCMODE | O_ASYNC), st);
	if (nfd >= 0 && S_ISCHR(st->st_mode) && !isatty(nfd)) {
		close(nfd);
		return -1;
	}
	return nfd < 0 ? -1 : nfd;
}

/* A fresh terminal description gets a SIGIO owner that is a task gone
 * (moat_sigio_dead_owner): a terminal's F_SETFL O_ASYNC makes the tty's
 * foreground group the owner of a description that has none (the kernel's
 * tty_fasync), with the setter's ids: the guest, in a session of its own,
 * is never that group, moat's job is, and on main a guest's O_ASYNC on its
 * terminal stdin killed moat with SIGIO at the next key typed (before its
 * tty_guard_restore); with F_SETSIG on its own description, now allowed,
 * it would be SIGKILL. The guest's own F_SETOWN (checked) still sets one,
 * and its F_SETOWN 0 sets such a task again (sigio_set, red team 82). */
static void dead_owner(const int *fds, int n)
{
	int r = moat_sigio_dead_owner(fds, n, F_OWNER_PID);
	if (r < 0)
		warnx_("stdio: a terminal's SIGIO owner not set (%s): a guest's O_ASYNC signals moat's job",
		       strerror(-r));
}

void tty_stdio_fresh(struct sandbox *sb, int closed)
{
	int ttys[3], nt = 0;
	double t0 = moat_ms_now();
	int fresh[3] = { -1, -1, -1 };
	int orig[3] = { -1, -1, -1 };
	for (int fd = 0; fd < 3; fd++) {
		struct stat st;
		int fl = fcntl(fd, F_GETFL);
		if ((closed & (1 << fd)) || fl < 0 || fstat(fd, &st) < 0)
			continue;
		if (!S_ISFIFO(st.st_mode) && !(S_ISCHR(st.st_mode) && isatty(fd)))
			continue; /* a file, a socket, /dev/null...: shared as before */
		int j;
		for (j = 0; j < fd; j++)
			if (orig[j] >= 0 && same_ofd(orig[j], fd))
				break;
		int keep = fcntl(fd, F_DUPFD_CLOEXEC, 3);
		int nfd = j < fd ? fcntl(fresh[j], F_DUPFD_CLOEXEC, 3) : fresh_open(fd, fl, &st);
		if (keep < 0 || nfd < 0 || dup2(nfd, fd) < 0) {
			if (keep >= 0)
				close(keep);
			if (nfd >= 0)
				close(nfd);
			dbg("stdio: fd %d stays the caller's own description", fd);
			continue;
		}
		orig[fd] = keep;
		fresh[fd] = nfd;
		if (j == fd && S_ISCHR(st.st_mode))
			ttys[nt++] = nfd;
		sb->caller_stdio[fd] = guard_orig[fd] = keep;
		guard_shared[fd] = 0;
	}
	for (int fd = 0; fd < 3; fd++)
		if (guard_shared[fd] && !(closed & (1 << fd)))
			sb->caller_shared |= 1 << fd;
	dead_owner(ttys, nt);
	for (int fd = 0; fd < 3; fd++)
		if (fresh[fd] >= 0)
			close(fresh[fd]);
	dbg("stdio: fresh descriptions for fds %s%s%s(%.3f ms)", guard_shared[0] ? "" : "0 ",
	    guard_shared[1] ? "" : "1 ", guard_shared[2] ? "" : "2 ", moat_ms_now() - t0);
}

/* A shell's terminal is one read-write open file description on its fds
 * 0, 1 and 2: with stdin a pipe or /dev/null (`echo | moat run ... &`,
 * tty_background_stdin) the guest still read the caller's keystrokes
 * through its stdout (red team round 11). A read-write terminal as stdout
 * or stderr is replaced, before anything is spawned, by a write-only open
 * of the same terminal (a new open file description through
 * /proc/self/fd/N, checked to be the same inode; isatty, termios and
 * writes as before, reads EBADF), as tty_stdin_read_only does for
 * stdin under --output-limit. Only for a sandbox started in the
 * background (tty_background_stdin): in the foreground a pager reads its
 * keys from stderr (more; less without /dev/tty, which the guest has not),
 * as natively. */
void tty_stdio_write_only(void)
{
	for (int fd = 1; fd < 3; fd++) {
		struct stat st;
		int fl = fcntl(fd, F_GETFL);
		if (fl < 0 || (fl & O_ACCMODE) != O_RDWR || !stdio_tty(fd) || fstat(fd, &st) < 0)
			continue;
		int wo = reopen_same(fd, O_WRONLY, fl & ~O_ACCMODE, &st);
		if (wo < 0 || dup2(wo, fd) < 0)
			warnx_("fd %d (the caller's terminal) stays readable by the program (%s)", fd,
			       wo == -1 ? strerror(errno) : "not reopened");
		if (wo >= 0)
			close(wo);
	}
}

void tty_jobctl_start(struct sandbox *sb)
{
	pid_t fg;
	if (jc_fd < 0)
		jc_fd = stdio_ctty(&fg);
	if (jc_fd < 0 || pipe2(jc_pipe, O_CLOEXEC | O_NONBLOCK) < 0)
		return;
	int fl = fcntl(jc_pipe[0], F_GETFL);
	if (fl >= 0)
		fcntl(jc_pipe[0], F_SETFL, fl & ~O_NONBLOCK);
	jc_sb = sb;
	if (pthread_create(&jc_thread, NULL, jc_main, NULL) != 0)
		return;
	pthread_detach(jc_thread);
	catch_signal(SIGTSTP, jc_on_signal);
	catch_signal(SIGTTIN, jc_on_signal);
	catch_signal(SIGTTOU, jc_on_signal);
	catch_signal(SIGCONT, jc_on_signal);
}

/* What the caller typed before its terminal goes raw sits in the line
 * discipline's canonical buffer, and an end of file typed there (VEOF: script
 * writes it into its pty at once when its own stdin is /dev/null) is kept as
 * a NUL byte that marks the line's end: made raw, the terminal hands that
 * marker to the relay as a literal NUL, which the guest's pty echoed as "^@"
 * (`script -qec 'moat run -t ...' /dev/null </dev/null`). The complete lines
 * and end-of-file marks already there are passed on now, while canonical
 * reads still tell them apart: a line as it is, an end of file as the VEOF
 * key the user typed (what the relay reads once the terminal is raw). A
 * partial line stays and is relayed raw, as typed. */
static void pass_canonical_input(const struct termios *t)
{
	char buf[4097]; /* a read of 4096 and the VEOF key */
	for (int i = 0; i < 64; i++) {
		struct pollfd p = { .fd = 0, .events = POLLIN };
		if (poll(&p, 1, 0) != 1 || (p.revents & (POLLHUP | POLLERR | POLLNVAL)) || !(p.revents & POLLIN))
			return;
		ssize_t n = read(0, buf, sizeof buf - 1);
		if (n < 0)
			return;
		/* a line that ends in no end-of-line character was ended by
		 * the VEOF key (typed after a partial line, "abc^D": the read
		 * returns the text without it, and a native reader its text
		 * at once): the key goes on with the text, or the guest's
		 * canonical read waited for the rest of a line (review 35).
		 * A read that filled buf is a longer line's first part. */
		unsigned char last = n > 0 ? (unsigned char)buf[n - 1] : 0;
		if (n == 0 || (n < (ssize_t)sizeof buf - 1 && last != '\n' &&
			       !(t->c_cc[VEOL] && last == t->c_cc[VEOL]) &&
			       !(t->c_cc[VEOL2] && last == t->c_cc[VEOL2])))
			buf[n++] = (char)t->c_cc[VEOF];
		if (write_all_fd(master, buf, n) < 0)
			return;
	}
}

int tty_start(int controls_all, char *err, size_t errlen)
{
	if (!controls_all) {
		filter_on = 1;
		term_filter_init(&filt, term_filter_locale_utf8(getenv("LC_ALL"), getenv("LC_CTYPE"),
								getenv("LANG")));
	}
	if (relay_in && isatty(0) && tcgetattr(0, &saved) == 0) {
		struct termios raw = saved;
		if (saved.c_lflag & ICANON)
			pass_canonical_input(&saved);
		cfmakeraw(&raw);
		if (relay_no_t) /* ^C, ^Z, ^\ stay moat's: forwarded, job control */
			raw.c_lflag |= ISIG;
		relay_cbreak = relay_no_t;
		if (tcsetattr(0, TCSADRAIN, &raw) == 0) {
			raw_set = 1;
			atexit(restore);
		}
	}
	catch_signal(SIGWINCH, on_winch);
	/* the relay's writes to the master must not block (relay_main) */
	int mfl = fcntl(master, F_GETFL);
	if (mfl < 0 || fcntl(master, F_SETFL, mfl | O_NONBLOCK) < 0) {
		restore();
		snprintf(err, errlen, "-t: the pseudo-terminal's master: %s", strerror(errno));
		return -errno;
	}
	pthread_attr_t at;
	pthread_attr_init(&at);
	pthread_attr_setstacksize(&at, 64 * 1024);
	int r = pthread_create(&relay, &at, relay_main, NULL);
	pthread_attr_destroy(&at);
	if (r) {
		restore();
		char why[128];
		snprintf(err, errlen, SPAWN_FAILED_FMT, "-t's relay thread", spawn_error(r, why, sizeof why));
		return -r;
	}
	relay_started = 1;
	return 0;
}

/* Without -t a stdout or stderr that is the caller's terminal was a
 * description of it (tty_stdio_fresh), and what the guest wrote there
 * reached the terminal as written: red team 71's OSC 52 clipboard writes,
 * titles, modes left on, and a query written last (DA, DSR) whose answer
 * the terminal typed into the caller's shell after moat exited. Now the
 * guest's terminal stdio is the slave of a pty of the sandbox's own devpts
 * (as -t's, but not its controlling terminal), whose master the relay
 * copies to the caller's terminal through the terminal-controls filter
 * (`--tty-controls`); fds 1-2 that are that terminal get the slave. fd 0,
 * when it is the terminal: the slave too, the caller's typing relayed, when
 * fd 1 is the terminal and moat in its foreground (a pager reads keys from
 * stderr: `moat run less file`), the terminal then in raw mode but for ISIG
 * (the line editing and echo are the guest pty's; ^C, ^Z and ^\ stay
 * moat's, forwarded as before); else a read-only description (the guest's
 * reads and termios as before, no writes: `moat run prog | less` keeps its
 * keys for less). With --output-limit or --idle-timeout the guest's
 * stdout and stderr are pipes and limits.c's relay writes into the slave
 * (tty_stdio_out). Returns the mask of the guest's fds 0-2 that get the
 * slave (0: no relay; the pipe or file stdio costs nothing). After
 * tty_stdio_fresh and tty_background_stdin, in moat. */
int tty_relay_plan(int limits_pipes)
{
	struct stat so, s0;
	int out = -1;
	for (int fd = 1; fd < 3 && out < 0; fd++)
		if (stdio_tty(fd))
			out = fd;
	if (out < 0) {
		if (stdio_tty(0))
			tty_stdin_read_only("the program can write to the caller's terminal");
		return 0;
	}
	if (fstat(out, &so) < 0)
		return 0;
	relay_no_t = 1;
	relay_out = out;
	int mask = 0;
	for (int fd = 1; fd < 3; fd++)
		if (stdio_tty(fd))
			mask |= 1 << fd;
	pid_t fg = -1;
	relay_in = !limits_pipes && out == 1 && stdio_tty(0) && fstat(0, &s0) == 0 &&
		   s0.st_rdev == so.st_rdev && (fg = tcgetpgrp(0)) >= 0 && fg == getpgrp();
	if (relay_in)
		mask |= 1;
	else if (stdio_tty(0))
		tty_stdin_read_only("the program can write to the caller's terminal");
	if (limits_pipes) {
		relay_keep_slave = 1;
		mask = 0; /* the guest's 1-2 are limits.c's pipes */
	}
	dbg("stdio: the terminal on fd %d relayed through the filter (guest fds mask %d, input %s)", out,
	    mask, relay_in ? "relayed" : "not relayed");
	return mask | 8;
}

/* where moat writes what the guest wrote to its fd (limits.c's relay) */
int tty_stdio_out(int fd)
{
	return relay_slave >= 0 && (fd == 1 || fd == 2) && stdio_tty(fd) ? relay_slave : fd;
}

/* A writable terminal or FIFO stdin replaced, in moat before anything is
 * spawned, by a read-only open of the same file (a new open file
 * description: isatty, termios, job control ioctls work as before; a tty
 * or FIFO has no offset to share). Not a socket or a regular file opened
 * read-write (ARCHITECTURE Known gaps). */
void tty_stdin_read_only(const char *why)
{
	struct stat st;
	int fl = fcntl(0, F_GETFL);

	if (fl < 0 || (fl & O_ACCMODE) == O_RDONLY || fstat(0, &st) < 0 ||
	    !(S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) || pty_master(0))
		return; /* (a master: stdio_tty) */
	int ro = reopen_same(0, O_RDONLY, fl & ~O_ACCMODE, &st);
	if (ro < 0 || dup2(ro, 0) < 0) {
		const char *e = ro == -1 ? strerror(errno) : "not reopened";
		/* a terminal the caller may not open (`su user -c 'moat run
		 * ...'` from another user's terminal, util-linux su's own
		 * session: no job control; one made exclusive, TIOCEXCL): the
		 * program is not given it writable, which reached the caller's
		 * terminal past the terminal-controls filter (red team 89: an
		 * OSC 52 written to fd 0 reached the terminal as written) */
		if (isatty(0) && stdin_null() == 0)
			warnx_("stdin is /dev/null: the caller's terminal could not be reopened read-only (%s), "
			       "and the program is not given it writable (-t relays it)", e);
		else
			warnx_("stdin (%s) stays writable: %s", e, why);
	} else if (isatty(0))
		dead_owner(&ro, 1); /* a new description: a guest's O_ASYNC must not signal moat's job */
	if (ro >= 0)
		close(ro);
}

/* job control (jc_main): the caller's terminal as the caller had it while
 * moat is stopped, the relay's mode again once it is continued */
static void relay_mode(int on)
{
	if (!raw_set || !relay_cbreak)
		return;
	struct termios t = saved;
	if (on) {
		cfmakeraw(&t);
		t.c_lflag |= ISIG;
	}
	sigset_t tt, old;
	sigemptyset(&tt);
	sigaddset(&tt, SIGTTOU);
	pthread_sigmask(SIG_BLOCK, &tt, &old);
	(void)tcsetattr(0, TCSADRAIN, &t);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

void tty_finish(void)
{
	if (relay_started) {
		/* the guest is gone: the master reads EIO once its output is
		 * drained and every slave closed; the relay stops anyway once no
		 * output comes for 100 ms (relay_main) */
		__atomic_store_n(&relay_finishing, 1, __ATOMIC_SEQ_CST);
		if (write(wake[1], "f", 1) < 0) {
			/* full: the relay wakes for what is there */
		}
		pthread_join(relay, NULL);
		relay_started = 0;
	}
	if (win_conn) {
		gofer_disconnect(win_conn);
		win_conn = NULL;
	}
	restore();
}
