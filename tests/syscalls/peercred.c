/* peercred: SO_PEERCRED of AF_UNIX sockets (socketpair, a listener and its
 * accepted connection) shows the peer's pid and effective ids, and no
 * receiver takes SCM_CREDENTIALS a process that dropped root forged as
 * uid 0. Under moat every guest task is one host uid: SO_PEERCRED showed
 * the native ids (root-run uid 0 for every peer: a root daemon trusted a
 * dropped process as root) and a dropped sender's claim of uid 0 passed
 * the native check (uidclass sweep). moat answers SO_PEERCRED with the
 * virtual ids (syscalls/sys_peercred.c) and refuses SO_PASSCRED
 * (ENOPROTOOPT), so no guest receiver gets native credentials.
 * The dropped-process cases need root (skipped otherwise); uid 61240. */
#include "t.h"
#include <stddef.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <grp.h>

#define U1 61240

static int peer(int fd, struct ucred *u)
{
	socklen_t l = sizeof *u;
	memset(u, 0, sizeof *u);
	return getsockopt(fd, SOL_SOCKET, SO_PEERCRED, u, &l);
}

int main(int argc, char **argv)
{
	t_setup(argc, argv, "peercred");
	int sp[2];
	struct ucred u;
	socketpair(AF_UNIX, SOCK_STREAM, 0, sp);
	CHECK(peer(sp[0], &u) == 0 && u.pid == getpid() && u.uid == geteuid() && u.gid == getegid(),
	      "socketpair_self", "%s pid %d uid %d gid %d", strerror(errno), (int)u.pid, (int)u.uid, (int)u.gid);
	{
		char small[4];
		socklen_t l = sizeof small;
		CHECK(getsockopt(sp[0], SOL_SOCKET, SO_PEERCRED, small, &l) == 0 && l == 4, "short_buffer",
		      "%s len %u", strerror(errno), (unsigned)l);
	}
	{
		/* SO_PEERGROUPS: the peer's supplementary groups (here the caller's) */
		gid_t g[256], mine[256];
		socklen_t l = sizeof g;
		int n = getgroups(256, mine);
		int r = getsockopt(sp[0], SOL_SOCKET, SO_PEERGROUPS, g, &l);
		int same = r == 0 && n >= 0 && l == n * sizeof(gid_t);
		for (int i = 0; same && i < n; i++) {
			int f = 0;
			for (int j = 0; j < n; j++)
				f |= g[j] == mine[i];
			same = f;
		}
		CHECK(same, "peergroups_self", "%s r %d len %u n %d", strerror(errno), r, (unsigned)l, n);
	}
	int one = 1;
	errno = 0;
	int pc = setsockopt(sp[0], SOL_SOCKET, SO_PASSCRED, &one, sizeof one);
	/* (moat accepts it and delivers no credentials, which would carry
	 * native ids: isolation_identity passcred_no_native_ids) */
	CHECK(pc == 0, "passcred", "%s", strerror(errno));
	int zero = 0;
	CHECK(setsockopt(sp[0], SOL_SOCKET, SO_PASSCRED, &zero, sizeof zero) == 0, "passcred_off", "%s",
	      strerror(errno));
	close(sp[0]);
	close(sp[1]);
	int ip = socket(AF_INET, SOCK_STREAM, 0);
	CHECK(peer(ip, &u) == 0 && u.pid == 0, "inet_no_peer", "%s pid %d", strerror(errno), (int)u.pid);
	close(ip);
	/* no peer: Linux's answers, made on the sentry's pinned copy since
	 * pin40 (not the native call on the number): pid 0, ids -1, cut to
	 * the buffer; SO_PEERGROUPS ENODATA; a negative length EINVAL */
	int un = socket(AF_UNIX, SOCK_STREAM, 0);
	CHECK(peer(un, &u) == 0 && u.pid == 0 && u.uid == (uid_t)-1 && u.gid == (gid_t)-1, "unix_no_peer",
	      "%s %d %d %d", strerror(errno), (int)u.pid, (int)u.uid, (int)u.gid);
	{
		char small[6] = { 1, 1, 1, 1, 1, 1 };
		socklen_t l = 5;
		CHECK(getsockopt(un, SOL_SOCKET, SO_PEERCRED, small, &l) == 0 && l == 5 && small[0] == 0 && small[4] == -1 &&
			      small[5] == 1,
		      "no_peer_short_buffer", "%s len %u", strerror(errno), (unsigned)l);
		gid_t g[4];
		l = sizeof g;
		errno = 0;
		CHECK(getsockopt(un, SOL_SOCKET, SO_PEERGROUPS, g, &l) == -1 && errno == ENODATA, "no_peer_groups_enodata",
		      "%s", strerror(errno));
		l = (socklen_t)-1;
		errno = 0;
		CHECK(getsockopt(un, SOL_SOCKET, SO_PEERCRED, &u, &l) == -1 && errno == EINVAL, "no_peer_negative_len",
		      "%s", strerror(errno));
	}
	close(un);
	errno = 0;
	CHECK(peer(0x3ff0, &u) == -1 && errno == EBADF, "ebadf", "%s", strerror(errno));
	if (geteuid() != 0)
		return t_done();

	/* root's listener; a dropped process connects and stays */
	int ls = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	snprintf(sa.sun_path + 1, sizeof sa.sun_path - 1, "moat-peercred-%d", (int)getpid());
	socklen_t sl = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(sa.sun_path + 1));
	CHECK(bind(ls, (struct sockaddr *)&sa, sl) == 0 && listen(ls, 4) == 0, "listen", "%s", strerror(errno));
	int dg = socket(AF_UNIX, SOCK_DGRAM, 0);
	struct sockaddr_un da = sa;
	da.sun_path[1] = 'D';
	bind(dg, (struct sockaddr *)&da, sl);
	(void)setsockopt(dg, SOL_SOCKET, SO_PASSCRED, &one, sizeof one); /* moat: refused */
	int sync[2], go[2];
	pipe(sync);
	pipe(go);
	pid_t c = fork();
	if (c == 0) {
		gid_t sg[2] = { 4242, 4243 };
		if (setgroups(2, sg) || setresgid(U1, U1, U1) || setresuid(U1, U1, U1))
			_exit(3);
		int s = socket(AF_UNIX, SOCK_STREAM, 0);
		if (connect(s, (struct sockaddr *)&sa, sl) < 0)
			_exit(4);
		struct ucred lu;
		int ok = peer(s, &lu) == 0 && lu.uid == 0 && lu.gid == 0 && lu.pid == getppid();
		/* a forged SCM_CREDENTIALS claiming root */
		int d = socket(AF_UNIX, SOCK_DGRAM, 0);
		char cb[CMSG_SPACE(sizeof(struct ucred))];
		memset(cb, 0, sizeof cb);
		struct ucred f = { getpid(), 0, 0 };
		struct iovec iv = { "x", 1 };
		struct msghdr mh = { &da, sl, &iv, 1, cb, sizeof cb, 0 };
		struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_CREDENTIALS;
		cm->cmsg_len = CMSG_LEN(sizeof f);
		memcpy(CMSG_DATA(cm), &f, sizeof f);
		(void)sendmsg(d, &mh, MSG_DONTWAIT); /* Linux: EPERM */
		char r = ok ? 'y' : 'n';
		write(sync[1], &r, 1);
		read(go[0], &r, 1); /* stay until root has asked */
		_exit(0);
	}
	char r = 0;
	read(sync[0], &r, 1);
	CHECK(r == 'y', "dropped_sees_root_listener", "got %c", r);
	int as = accept(ls, NULL, NULL);
	CHECK(as >= 0 && peer(as, &u) == 0 && u.uid == U1 && u.gid == U1 && u.pid == c, "root_sees_dropped_peer",
	      "%s pid %d (%d) uid %d gid %d", strerror(errno), (int)u.pid, (int)c, (int)u.uid, (int)u.gid);
	{
		gid_t g[8];
		socklen_t l = sizeof(gid_t);
		errno = 0;
		int r1 = getsockopt(as, SOL_SOCKET, SO_PEERGROUPS, g, &l);
		CHECK(r1 == -1 && errno == ERANGE && l == 2 * sizeof(gid_t), "peergroups_erange", "%d %s len %u", r1,
		      strerror(errno), (unsigned)l);
		l = sizeof g;
		int r2 = getsockopt(as, SOL_SOCKET, SO_PEERGROUPS, g, &l);
		CHECK(r2 == 0 && l == 2 * sizeof(gid_t) && ((g[0] == 4242 && g[1] == 4243) || (g[0] == 4243 && g[1] == 4242)),
		      "root_sees_dropped_groups", "%s len %u %d %d", strerror(errno), (unsigned)l, (int)g[0], (int)g[1]);
	}
	/* no credential of uid 0 from the dropped process reached root */
	int forged = 0;
	for (;;) {
		char cb[CMSG_SPACE(sizeof(struct ucred))], x;
		struct iovec iv = { &x, 1 };
		struct msghdr mh = { NULL, 0, &iv, 1, cb, sizeof cb, 0 };
		if (recvmsg(dg, &mh, MSG_DONTWAIT) < 0)
			break;
		for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
			struct ucred g;
			if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_CREDENTIALS) {
				memcpy(&g, CMSG_DATA(cm), sizeof g);
				if (g.uid == 0)
					forged++;
			}
		}
	}
	CHECK(forged == 0, "dropped_cannot_forge_root_creds", "%d datagrams claimed uid 0", forged);
	write(go[1], "g", 1);
	waitpid(c, NULL, 0);
	close(as);
	close(ls);
	close(dg);
	return t_done();
}
