/* sentry/netpub.c - --publish HOSTPORT:GUESTPORT: moat-publish.
 *
 * The sentry binds each 127.0.0.1:HOSTPORT listener in the host's network
 * namespace at set-up (a port in use fails the sandbox before the program
 * exists), opens the guest's network namespace (its init's ns/net through
 * the guest procfs), and forks moat-publish: it keeps the listeners and its
 * inherited stderr only, setns()es into the guest's network namespace (the
 * sentry's user namespace is an ancestor of the guest's, so it may), so
 * every socket it creates afterwards lives there, confines itself (seccomp:
 * accept4 on the listeners, socket(AF_INET, SOCK_STREAM), connect, poll,
 * read/write, shutdown, close, exit; kill on anything else) and relays: each
 * accepted host connection gets a connection to 127.0.0.1:GUESTPORT inside
 * the guest, bytes copied both ways (64 KiB buffers, half-closes passed on);
 * every socket non-blocking, the guest connect waited for in the loop.
 * It can reach only the guest's loopback and the listeners it was given.
 */
#include "sentry/netd.h"
#include "sentry/sentry.h"
#include "common/log.h"

#include "common/sanitize.h"
#include "common/util.h"
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MAX_CONNS 128
#define BUFSZ 65536

struct half {
	int from, to;
	char *buf;
	size_t len, off;
	int eof;
	int pending; /* the pair's guest connect is still in progress */
};

static int confine_pub(void)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_KILL_PROCESS);
	if (!ctx)
		return -1;
	static const int plain[] = {
		SCMP_SYS(accept4), SCMP_SYS(connect), SCMP_SYS(poll), SCMP_SYS(read), SCMP_SYS(write),
		SCMP_SYS(shutdown), SCMP_SYS(close), SCMP_SYS(exit), SCMP_SYS(exit_group),
		SCMP_SYS(rt_sigreturn), SCMP_SYS(brk), SCMP_SYS(munmap), SCMP_SYS(fcntl),
		SCMP_SYS(getsockopt),
	};
	int rc = 0;
	for (size_t i = 0; i < sizeof plain / sizeof plain[0] && !rc; i++)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, plain[i], 0);
	struct scmp_arg_cmp c[2] = {
		{ .arg = 0, .op = SCMP_CMP_EQ, .datum_a = AF_INET },
		{ .arg = 1, .op = SCMP_CMP_MASKED_EQ, .datum_a = 0xf, .datum_b = SOCK_STREAM },
	};
	if (!rc)
		rc = seccomp_rule_add_array(ctx, SCMP_ACT_ALLOW, SCMP_SYS(socket), 2, c);
	/* anonymous mmap, sanitizer, no_new_privs, load */
	return moat_filter_finish(ctx, rc);
}

static int dial_guest(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	/* never a blocking connect: a guest listener whose accept queue is
	 * full drops the SYN, and a blocking connect then held the one loop,
	 * every pair of every published port, for the SYN retries (~2 min a
	 * connection; red team 61, isolation_net publish_stuck_guest_port) */
	int s = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (s < 0)
		return -1;
	if (connect(s, (struct sockaddr *)&a, sizeof a) < 0 && errno != EINPROGRESS) {
		close(s);
		return -1;
	}
	return s;
}

static _Noreturn void relay(const int *lfd, const int *gport, int n)
{
	static struct half h[2 * MAX_CONNS];
	int nh = 0;
	for (;;) {
		struct pollfd pf[16 + 2 * MAX_CONNS * 2];
		int np = 0;
		for (int i = 0; i < n; i++)
			pf[np++] = (struct pollfd){ lfd[i], nh < 2 * MAX_CONNS ? POLLIN : 0, 0 };
		for (int i = 0; i < nh; i++) {
			if (h[i].pending) {
				/* connecting: wait for the guest's answer only (the
				 * host side unread: a half-close passed on now would
				 * abort the connect) */
				pf[np++] = (struct pollfd){ h[i].from, 0, 0 };
				pf[np++] = (struct pollfd){ h[i].to, (i % 2 == 0) ? POLLOUT : 0, 0 };
				continue;
			}
			/* read when the buffer is empty, write while it holds data */
			pf[np++] = (struct pollfd){ h[i].from, (!h[i].eof && h[i].len == 0) ? POLLIN : 0, 0 };
			pf[np++] = (struct pollfd){ h[i].to, h[i].len > h[i].off ? POLLOUT : 0, 0 };
		}
		int polled = nh; /* halves added by accept below have no pollfd yet */
		if (poll(pf, (nfds_t)np, -1) < 0)
			continue;
		for (int i = 0; i < n; i++) {
			/* room checked at each accept, not only at the poll:
			 * two listeners ready in one poll at 127 connections
			 * took h[] past its end and the next poll's pf[] past
			 * its own (red team 15: a host client's 129th
			 * connection, published on two ports) */
			if (!(pf[i].revents & POLLIN) || nh + 2 > 2 * MAX_CONNS)
				continue;
			int c = accept4(lfd[i], NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
			if (c < 0)
				continue;
			int g = dial_guest(gport[i]);
			if (g < 0) {
				close(c); /* nothing listens in the guest: the client sees a reset/EOF */
				continue;
			}
			/* never block the loop on one connection: both non-blocking */
			h[nh++] = (struct half){ c, g, malloc(BUFSZ), 0, 0, 0, 1 };
			h[nh++] = (struct half){ g, c, malloc(BUFSZ), 0, 0, 0, 1 };
		}
		for (int i = 0; i < polled; i++) {
			struct pollfd *r = &pf[n + 2 * i], *w = &pf[n + 2 * i + 1];
			if (h[i].pending) {
				/* the host → guest half (even) holds the connect's answer */
				if (i % 2 || !w->revents)
					continue;
				int err = 0;
				socklen_t el = sizeof err;
				if (getsockopt(h[i].to, SOL_SOCKET, SO_ERROR, &err, &el) < 0)
					err = errno;
				h[i].pending = h[i + 1].pending = 0;
				if (err) /* nothing listens in the guest: both closed below */
					h[i].eof = h[i + 1].eof = 1;
				continue;
			}
			/* POLLHUP/POLLERR come even when not asked for: read only
			 * into an empty buffer, write only what is pending */
			if (!h[i].eof && h[i].len == 0 && (r->revents & (POLLIN | POLLHUP | POLLERR))) {
				ssize_t k = read(h[i].from, h[i].buf, BUFSZ);
				if (k < 0 && errno == EAGAIN) {
					/* nothing yet */
				} else if (k <= 0) {
					h[i].eof = 1;
					shutdown(h[i].to, SHUT_WR);
				} else {
					h[i].len = (size_t)k;
					h[i].off = 0;
				}
			}
			if (h[i].len > h[i].off && (w->revents & (POLLOUT | POLLERR | POLLHUP))) {
				ssize_t k = write(h[i].to, h[i].buf + h[i].off, h[i].len - h[i].off);
				if (k < 0 && errno == EAGAIN) {
					/* full: wait for POLLOUT */
				} else if (k < 0) {
					h[i].eof = 1;
					h[i].len = h[i].off = 0;
				} else if ((h[i].off += (size_t)k) == h[i].len) {
					h[i].len = h[i].off = 0;
				}
			}
		}
		/* a pair is done when both directions reached EOF with nothing pending */
		for (int i = 0; i + 1 < nh;) {
			if (h[i].eof && h[i + 1].eof && !h[i].len && !h[i + 1].len) {
				close(h[i].from);
				close(h[i].to);
				free(h[i].buf);
				free(h[i + 1].buf);
				h[i] = h[nh - 2];
				h[i + 1] = h[nh - 1];
				nh -= 2;
			} else {
				i += 2;
			}
		}
	}
}

pid_t netpub_start(const int *hostport, const int *guestport, int n, int netns_fd, char *err,
		   size_t errlen)
{
	int lfd[16];
	if (n > 16)
		n = 16;
	for (int i = 0; i < n; i++) {
		struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)hostport[i]) };
		a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		int one = 1;
		lfd[i] = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (lfd[i] < 0 || setsockopt(lfd[i], SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 ||
		    bind(lfd[i], (struct sockaddr *)&a, sizeof a) < 0 || listen(lfd[i], 64) < 0) {
			snprintf(err, errlen, "--publish %d:%d: 127.0.0.1:%d: %s", hostport[i], guestport[i],
				 hostport[i], strerror(errno));
			return -1;
		}
	}
	pid_t pid = moat_fork_helper("moat-publish");
	if (pid < 0) {
		snprintf(err, errlen, "moat-publish: fork: %s", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		if (setns(netns_fd, CLONE_NEWNET) < 0) {
			fprintf(stderr, "moat-publish: setns: %s\n", strerror(errno));
			_exit(1);
		}
		/* keep stderr and the listeners (moved to 3..) */
		for (int i = 0; i < n; i++) {
			int f = fcntl(lfd[i], F_DUPFD_CLOEXEC, 64 + i);
			lfd[i] = f;
		}
		for (int i = 0; i < n; i++) {
			if (dup3(lfd[i], 3 + i, O_CLOEXEC) < 0)
				_exit(1);
			lfd[i] = 3 + i;
		}
		if (syscall(SYS_close_range, 3 + n, ~0U, 0) < 0)
			_exit(1);
		sigset_t all;
		sigfillset(&all);
		sigprocmask(SIG_SETMASK, &all, NULL);
		signal(SIGPIPE, SIG_IGN);
		if (priv_drop_caps() < 0 || confine_pub() < 0) {
			fprintf(stderr, "moat-publish: cannot confine itself\n");
			_exit(1);
		}
		relay(lfd, guestport, n);
	}
	for (int i = 0; i < n; i++)
		close(lfd[i]);
	return pid;
}
