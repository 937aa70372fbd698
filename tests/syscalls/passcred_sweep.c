/* passcred_sweep: a receiver whose socket had SO_PASSCRED before another
 * process dropped root never takes that dropped sender for root, wherever
 * the socket was when the ids changed. Under moat every guest task has one
 * native uid (root-run 0), so credentials the kernel attaches say uid 0;
 * moat clears the flag on every guest socket at the first change of ids.
 * Red-team 12: three sockets the sweep missed (main: uid 0 for each):
 *   in_flight:     the receiver was in flight in an SCM_RIGHTS message;
 *   accept_queue:  a connection not yet accepted (it took the listener's
 *                  flag at connect);
 *   leader_exited: the receiver held by a process whose leader thread had
 *                  exited (/proc/<tgid>/fd is empty then), blocked in
 *                  recvmsg before the drop.
 * Each passes when the receiver gets no credentials or the dropped uid.
 * Needs root (skipped otherwise); uid 61241. */
#include "t.h"
#include <pthread.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>

#define U1 61241

/* the uid of the credentials a message on fd came with, -1 for none, -2 on error */
static long recv_uid(int fd)
{
	char b[4], cb[CMSG_SPACE(sizeof(struct ucred))];
	struct iovec io = { b, sizeof b };
	struct msghdr m = { .msg_iov = &io, .msg_iovlen = 1, .msg_control = cb, .msg_controllen = sizeof cb };
	if (recvmsg(fd, &m, 0) < 0)
		return -2;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS) {
			struct ucred u;
			memcpy(&u, CMSG_DATA(c), sizeof u);
			return u.uid;
		}
	return -1;
}

static int one = 1, zd0, zrep;

static void *zthread(void *a)
{
	(void)a;
	usleep(100000); /* the leader has exited */
	(void)write(zrep, "r", 1);
	long u = recv_uid(zd0); /* blocked before the drop */
	(void)write(zrep, &u, sizeof u);
	_exit(0);
}

static int ok_uid(long u) { return u == -1 || u == U1; }

int main(int argc, char **argv)
{
	t_setup(argc, argv, "passcred_sweep");
	if (geteuid() != 0) {
		printf("skip: needs root\n");
		t_done();
		return T_SKIP;
	}
	/* in_flight: the receiver sent over a carrier pair, closed here */
	int a[2], car[2];
	socketpair(AF_UNIX, SOCK_DGRAM, 0, a);
	socketpair(AF_UNIX, SOCK_DGRAM, 0, car);
	setsockopt(a[0], SOL_SOCKET, SO_PASSCRED, &one, sizeof one);
	{
		char cb[CMSG_SPACE(sizeof(int))], x = 'f';
		struct iovec io = { &x, 1 };
		struct msghdr m = { .msg_iov = &io, .msg_iovlen = 1, .msg_control = cb, .msg_controllen = sizeof cb };
		struct cmsghdr *c = CMSG_FIRSTHDR(&m);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &a[0], sizeof(int));
		if (sendmsg(car[0], &m, 0) < 0)
			t_fail("in_flight", "sendmsg: %s", strerror(errno));
		close(a[0]);
	}
	/* accept_queue: a listener with the flag, a connection waiting */
	int l = socket(AF_UNIX, SOCK_STREAM, 0), k = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	snprintf(sa.sun_path + 1, sizeof sa.sun_path - 1, "passcred-sweep-%d", getpid());
	socklen_t sl = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(sa.sun_path + 1));
	setsockopt(l, SOL_SOCKET, SO_PASSCRED, &one, sizeof one);
	if (bind(l, (struct sockaddr *)&sa, sl) || listen(l, 4) || connect(k, (struct sockaddr *)&sa, sl))
		t_fail("accept_queue", "listen/connect: %s", strerror(errno));
	/* leader_exited: a process whose only thread left receives */
	int z[2], rep[2];
	socketpair(AF_UNIX, SOCK_DGRAM, 0, z);
	if (pipe(rep))
		return 1;
	pid_t zp = fork();
	if (zp == 0) {
		close(z[1]);
		close(rep[0]);
		zd0 = z[0];
		zrep = rep[1];
		setsockopt(zd0, SOL_SOCKET, SO_PASSCRED, &one, sizeof one);
		pthread_t th;
		pthread_create(&th, NULL, zthread, NULL);
		syscall(SYS_exit, 0);
	}
	close(z[0]);
	close(rep[1]);
	char r;
	(void)read(rep[0], &r, 1);
	usleep(200000); /* the thread waits in recvmsg */
	/* the dropped sender: its first change of ids is the sandbox's */
	pid_t d = fork();
	if (d == 0) {
		close(l);
		close(car[1]);
		if (setresgid(U1, U1, U1) || setresuid(U1, U1, U1))
			_exit(2);
		usleep(100000);
		(void)send(a[1], "x", 1, 0);
		(void)send(k, "x", 1, 0);
		(void)send(z[1], "x", 1, 0);
		_exit(0);
	}
	int st;
	waitpid(d, &st, 0);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "dropped", "status %#x", st);
	{
		char x, cb[CMSG_SPACE(sizeof(int))];
		struct iovec io = { &x, 1 };
		struct msghdr m = { .msg_iov = &io, .msg_iovlen = 1, .msg_control = cb, .msg_controllen = sizeof cb };
		int fd = -1;
		if (recvmsg(car[1], &m, 0) == 1 && CMSG_FIRSTHDR(&m))
			memcpy(&fd, CMSG_DATA(CMSG_FIRSTHDR(&m)), sizeof fd);
		long u = fd >= 0 ? recv_uid(fd) : -2;
		CHECK(ok_uid(u), "in_flight", "the dropped sender's credentials said uid %ld", u);
	}
	{
		int s = accept(l, NULL, NULL);
		long u = s >= 0 ? recv_uid(s) : -2;
		CHECK(ok_uid(u), "accept_queue", "the dropped sender's credentials said uid %ld", u);
	}
	{
		long u = -2;
		if (read(rep[0], &u, sizeof u) != sizeof u)
			u = -2;
		CHECK(ok_uid(u), "leader_exited", "the dropped sender's credentials said uid %ld", u);
		waitpid(zp, &st, 0);
	}
	return t_done();
}
