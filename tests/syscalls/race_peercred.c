/*
 * race_peercred: getsockopt(N, SOL_SOCKET, SO_PEERCRED) on an fd number
 * another thread keeps swapping between a socket with no peer and one end
 * of a socketpair, as a process that set its ids to 2000. NOT a
 * differential test: an isolation probe (tests/integration/isolation_race.sh).
 *
 *   race_peercred [SECONDS]   (run as root: the work runs as 2000:2000)
 *
 * Linux looks the socket up once: no peer is uid -1, the pair's peer (the
 * process itself) uid 2000. A sandbox that found no guest peer on what the
 * number held and then let the kernel run the call on the number (pts39's
 * gap: sys_getsockopt CONTINUE'd) gives the pair's peer's native ids (root-run
 * 0, rootless the caller's), not its virtual ones. Prints "ok race_peercred
 * ..." (exit 0) or "FAIL race_peercred: ..." (exit 1).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include "race.h"

#define N 50

int main(int argc, char **argv)
{
	int secs = argc > 1 ? atoi(argv[1]) : 2;
	if (geteuid() != 0) {
		printf("ok race_peercred (skipped: not root)\n");
		return 0;
	}
	if (setresgid(2000, 2000, 2000) || setresuid(2000, 2000, 2000)) {
		printf("FAIL race_peercred: setresuid: %s\n", strerror(errno));
		return 1;
	}
	int sv[2];
	int none = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (none < 0 || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return 1;
	int pair = sv[0];
	struct ucred u;
	socklen_t ul = sizeof u;
	if (getsockopt(pair, SOL_SOCKET, SO_PEERCRED, &u, &ul) < 0 || u.uid != 2000 || u.gid != 2000) {
		printf("FAIL race_peercred: the pair's own peer is %d:%d, not 2000:2000\n", (int)u.uid, (int)u.gid);
		return 1;
	}
	struct race_flip fl;
	race_flip_start(&fl, none, pair, N);
	long calls = 0, nopeer = 0, peer = 0, other = 0;
	uid_t seen = 0;
	double end = race_now() + secs;
	while (race_now() < end) {
		ul = sizeof u;
		if (getsockopt(N, SOL_SOCKET, SO_PEERCRED, &u, &ul) < 0)
			continue; /* (EBADF while the number is being replaced) */
		calls++;
		if (u.uid == (uid_t)-1)
			nopeer++;
		else if (u.uid == 2000 && u.gid == 2000)
			peer++;
		else
			other++, seen = u.uid;
	}
	race_flip_end(&fl);
	if (other) {
		printf("FAIL race_peercred: %ld of %ld answers showed other ids (uid %d), not the peer's 2000 (%ld none, %ld peer)\n",
		       other, calls, (int)seen, nopeer, peer);
		return 1;
	}
	printf("ok race_peercred (%ld no peer, %ld the peer's 2000)\n", nopeer, peer);
	return 0;
}
