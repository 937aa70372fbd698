/* pty: the guest's own terminals. posix_openpt/grantpt/unlockpt/ptsname,
 * openpty, TIOCGPTPEER, ttyname, the line discipline (canonical and raw,
 * tcsetattr), TIOCSWINSZ/TIOCGWINSZ and SIGWINCH, a child that makes the
 * slave its controlling terminal (setsid + TIOCSCTTY), /dev/tty, ^C to the
 * foreground process group, forkpty, and EIO on the master after the last
 * slave closes. */
#include "t.h"
#include <dirent.h>
#include <poll.h>
#include <pthread.h>
#include <pty.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <utmp.h>

#ifndef TIOCGPTPEER
#define TIOCGPTPEER _IO('T', 0x41)
#endif

/* read what is there within ms into buf (NUL-terminated); bytes read */
static ssize_t read_for(int fd, char *buf, size_t cap, int ms)
{
	size_t off = 0;
	while (off + 1 < cap) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		if (poll(&p, 1, ms) <= 0)
			break;
		ssize_t r = read(fd, buf + off, cap - 1 - off);
		if (r <= 0)
			break;
		off += (size_t)r;
		ms = 100; /* the rest comes quickly */
	}
	buf[off] = 0;
	return (ssize_t)off;
}

/* a process sharing the caller's fd table (clone(CLONE_FILES) without
 * CLONE_THREAD) until the gate closes */
static int gate_proc(void *arg)
{
	t_wait_gate(arg);
	return 0;
}
static char gate_stack[65536];

/* 5a. TIOCSCTTY on the slave `name`, in a new session, while another task
 * shares the fd table (proc 0: a thread; 1: a process of its own,
 * clone(CLONE_FILES), found by the same kcmp look: red team 87): natively
 * made; under moat refused (EPERM), as the sentry checks the file the
 * number holds and the kernel looks at the number again, which the sharer
 * could dup2 another terminal onto; made once it is gone. The child's
 * wait status (exit 0: as expected). */
static int sctty_shared(const char *name, int proc)
{
	int st = -1;
	pid_t pid = fork();
	if (pid == 0) {
		setsid();
		int ss = open(name, O_RDWR | O_NOCTTY);
		int gate[2];
		pthread_t th;
		pid_t d = -1;
		if (ss < 0 || pipe(gate) < 0)
			_exit(2);
		if (proc ? (d = clone(gate_proc, gate_stack + sizeof gate_stack, CLONE_FILES | SIGCHLD, &gate[0])) < 0
			 : pthread_create(&th, NULL, t_wait_gate, &gate[0]) != 0)
			_exit(2);
		int r = ioctl(ss, TIOCSCTTY, 0), e = errno;
		close(gate[1]);
		if (proc)
			waitpid(d, NULL, 0);
		else
			pthread_join(th, NULL);
		if (t_confined() ? !(r == -1 && e == EPERM) : r != 0)
			_exit(3);
		/* the thread's exit lets go of the table a moment after the join */
		for (int i = 0; r != 0 && i < 200; i++) {
			r = ioctl(ss, TIOCSCTTY, 0);
			if (r != 0)
				usleep(5000);
		}
		_exit(r == 0 && tcgetsid(ss) == getpid() ? 0 : 4);
	}
	waitpid(pid, &st, 0);
	return st;
}

static volatile sig_atomic_t got_winch, got_int;
static void on_winch(int s) { (void)s; got_winch = 1; }
static void on_int(int s) { (void)s; got_int = 1; }

/* The child: a new session whose controlling terminal is the slave. It
 * reports over the pty itself, one word per check, then waits for ^C. */
static void ctty_child(const char *slave_name, int sync_w)
{
	char msg[256] = "";
	signal(SIGWINCH, on_winch);
	signal(SIGINT, on_int);
	if (setsid() < 0)
		_exit(10);
	int s = open(slave_name, O_RDWR | O_NOCTTY);
	if (s < 0)
		_exit(11);
	strcat(msg, ioctl(s, TIOCSCTTY, 0) == 0 ? "sctty " : "SCTTY-FAIL ");
	strcat(msg, tcgetsid(s) == getpid() ? "sid " : "SID-FAIL ");
	strcat(msg, tcgetpgrp(s) == getpgrp() ? "fg " : "FG-FAIL ");
	int t = open("/dev/tty", O_RDWR);
	if (t >= 0) {
		/* the caller's controlling terminal (its fstat shows 5,0
		 * natively, the pty under moat: not compared) */
		strcat(msg, tcgetsid(t) == getpid() ? "devtty " : "DEVTTY-OTHER ");
		close(t);
	} else {
		strcat(msg, "DEVTTY-FAIL ");
	}
	char tn[64];
	strcat(msg, ttyname_r(s, tn, sizeof tn) == 0 && strcmp(tn, slave_name) == 0 ?
	       "ttyname\n" : "TTYNAME-FAIL\n");
	write(s, msg, strlen(msg));
	write(sync_w, "r", 1);
	for (int i = 0; i < 500 && !got_winch; i++)
		usleep(10000);
	write(s, got_winch ? "winch\n" : "NO-WINCH\n", got_winch ? 6 : 9);
	write(sync_w, "w", 1);
	for (int i = 0; i < 500 && !got_int; i++)
		usleep(10000);
	write(s, got_int ? "sigint\n" : "NO-SIGINT\n", got_int ? 7 : 10);
	_exit(0);
}

int main(int argc, char **argv)
{
	t_setup(argc, argv, "pty");

	/* 1. the POSIX way */
	int m = posix_openpt(O_RDWR | O_NOCTTY);
	if (m < 0)
		DIE("posix_openpt");
	t_ok("posix_openpt");
	EXPECT_OK(grantpt(m), "grantpt");
	EXPECT_OK(unlockpt(m), "unlockpt");
	char name[64];
	CHECK(ptsname_r(m, name, sizeof name) == 0 && strncmp(name, "/dev/pts/", 9) == 0,
	      "ptsname", "ptsname_r: %s", name);
	int s = open(name, O_RDWR | O_NOCTTY);
	CHECK(s >= 0 && isatty(s), "open_slave", "%s: %s", name, strerror(errno));
	char tn[64] = "";
	CHECK(ttyname_r(s, tn, sizeof tn) == 0 && strcmp(tn, name) == 0, "ttyname",
	      "ttyname %s, ptsname %s", tn, name);
	struct stat a, b;
	CHECK(stat(name, &a) == 0 && fstat(s, &b) == 0 && a.st_rdev == b.st_rdev &&
	      a.st_ino == b.st_ino && S_ISCHR(a.st_mode), "stat_slave", "rdev differs");
	/* the slave is listed in /dev/pts */
	DIR *d = opendir("/dev/pts");
	int listed = 0;
	struct dirent *de;
	while (d && (de = readdir(d)))
		if (strcmp(de->d_name, name + 9) == 0)
			listed = 1;
	if (d)
		closedir(d);
	CHECK(listed, "dev_pts_listing", "%s not in /dev/pts", name);

	/* 2. canonical mode: a line passes when it is complete */
	char buf[256];
	write(m, "hello\n", 6);
	ssize_t n = read_for(s, buf, sizeof buf, 2000);
	CHECK(n == 6 && memcmp(buf, "hello\n", 6) == 0, "canonical_line", "got %zd '%s'", n, buf);
	n = read_for(m, buf, sizeof buf, 500); /* the echo, with ONLCR */
	CHECK(n == 7 && memcmp(buf, "hello\r\n", 7) == 0, "echo_onlcr", "got %zd", n);
	write(s, "out\n", 4);
	n = read_for(m, buf, sizeof buf, 2000);
	CHECK(n == 5 && memcmp(buf, "out\r\n", 5) == 0, "slave_to_master", "got %zd", n);

	/* 3. raw mode with tcsetattr: one byte passes, no echo */
	struct termios tio, back;
	EXPECT_OK(tcgetattr(s, &tio), "tcgetattr");
	cfmakeraw(&tio);
	EXPECT_OK(tcsetattr(s, TCSANOW, &tio), "tcsetattr_raw");
	CHECK(tcgetattr(s, &back) == 0 && !(back.c_lflag & (ICANON | ECHO)), "tcgetattr_raw",
	      "lflag %#x", back.c_lflag);
	write(m, "x", 1);
	n = read_for(s, buf, sizeof buf, 2000);
	CHECK(n == 1 && buf[0] == 'x', "raw_byte", "got %zd", n);
	n = read_for(m, buf, sizeof buf, 200);
	CHECK(n == 0, "raw_no_echo", "echoed %zd bytes", n);

	/* 4. window size, set on the master, seen on the slave */
	struct winsize ws = { .ws_row = 33, .ws_col = 101 }, ws2;
	EXPECT_OK(ioctl(m, TIOCSWINSZ, &ws), "tiocswinsz");
	CHECK(ioctl(s, TIOCGWINSZ, &ws2) == 0 && ws2.ws_row == 33 && ws2.ws_col == 101,
	      "tiocgwinsz", "%dx%d", ws2.ws_row, ws2.ws_col);

	/* 5. TIOCSCTTY refusals: not a terminal, not a session leader */
	int pp[2];
	if (pipe(pp) < 0)
		DIE("pipe");
	EXPECT_ERR(ioctl(pp[0], TIOCSCTTY, 0), ENOTTY, "sctty_pipe");
	pid_t pid = fork();
	if (pid == 0) {
		setpgid(0, 0); /* a group leader is never a session leader's peer: */
		_exit(ioctl(s, TIOCSCTTY, 0) == -1 && errno == EPERM ? 0 : 1);
	}
	int st;
	waitpid(pid, &st, 0);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "sctty_not_session_leader", "status %#x", st);

	/* 5a. TIOCSCTTY while another task shares the fd table */
	st = sctty_shared(name, 0);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "sctty_shared_fd_table", "status %#x", st);
	st = sctty_shared(name, 1);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "sctty_shared_fd_table_process", "status %#x", st);

	/* 5b. another uid may not open the slave (0620, the opener's) */
	int other_ok = 1;
	if (geteuid() == 0) {
		pid = fork();
		if (pid == 0) {
			if (setresuid(61234, 61234, 61234) < 0)
				_exit(2);
			int fd = open(name, O_RDWR | O_NOCTTY);
			_exit(fd < 0 && errno == EACCES ? 0 : 1);
		}
		waitpid(pid, &st, 0);
		other_ok = WIFEXITED(st) && WEXITSTATUS(st) == 0;
	}
	CHECK(other_ok, "slave_other_uid_eacces", "status %#x", st);
	close(s);
	close(m);

	/* 6. openpty and TIOCGPTPEER */
	int m2, s2;
	EXPECT_OK(openpty(&m2, &s2, NULL, NULL, NULL), "openpty");
	int peer = ioctl(m2, TIOCGPTPEER, O_RDWR | O_NOCTTY);
	CHECK(peer >= 0 && fstat(peer, &a) == 0 && fstat(s2, &b) == 0 && a.st_rdev == b.st_rdev,
	      "tiocgptpeer", "%s", strerror(errno));
	if (peer >= 0)
		close(peer);
	CHECK(ptsname_r(m2, name, sizeof name) == 0, "ptsname_openpty", "%s", strerror(errno));
	close(s2);

	/* 7. a child's controlling terminal: setsid + TIOCSCTTY, /dev/tty,
	 * SIGWINCH on a resize, ^C to the foreground group */
	int sync[2];
	if (pipe(sync) < 0)
		DIE("pipe");
	pid = fork();
	if (pid == 0) {
		close(sync[0]);
		ctty_child(name, sync[1]);
	}
	close(sync[1]);
	char c;
	read(sync[0], &c, 1);
	n = read_for(m2, buf, sizeof buf, 3000);
	CHECK(n > 0 && strstr(buf, "sctty sid fg devtty ttyname"), "child_ctty", "child said '%s'", buf);
	ws.ws_row = 40;
	ioctl(m2, TIOCSWINSZ, &ws);
	read(sync[0], &c, 1);
	n = read_for(m2, buf, sizeof buf, 3000);
	CHECK(strstr(buf, "winch") && !strstr(buf, "NO-"), "sigwinch", "child said '%s'", buf);
	write(m2, "\x03", 1); /* VINTR */
	waitpid(pid, &st, 0);
	n = read_for(m2, buf, sizeof buf, 1000);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0 && strstr(buf, "sigint") && !strstr(buf, "NO-"),
	      "ctrl_c", "child said '%s' status %#x", buf, st);
	/* the last slave is gone: the master reads EIO */
	errno = 0;
	n = read(m2, buf, sizeof buf);
	CHECK(n == -1 && errno == EIO, "master_eio", "read %zd errno %d", n, errno);
	close(m2);
	close(sync[0]);

	/* 8. forkpty: the child's stdio and controlling terminal */
	int m3;
	pid = forkpty(&m3, NULL, NULL, NULL);
	if (pid == 0) {
		char t[64] = "";
		int ok = ttyname_r(0, t, sizeof t) == 0 && strncmp(t, "/dev/pts/", 9) == 0 &&
			 tcgetsid(0) == getpid() && isatty(1) && isatty(2);
		printf("%s\n", ok ? "forkpty-child-ok" : "forkpty-child-bad");
		fflush(stdout);
		_exit(0);
	}
	if (pid < 0)
		DIE("forkpty");
	n = read_for(m3, buf, sizeof buf, 3000);
	waitpid(pid, &st, 0);
	CHECK(strstr(buf, "forkpty-child-ok") != NULL, "forkpty", "child said '%s'", buf);
	close(m3);

	return t_done();
}
