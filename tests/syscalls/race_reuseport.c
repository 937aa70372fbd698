/* race_reuseport: a process that dropped root tries to join root's
 * SO_REUSEPORT TCP group while racing the sentry's bind (isolation_race.sh).
 * Root binds 127.0.0.1:P with SO_REUSEADDR and SO_REUSEPORT and does not
 * listen yet; the dropped process binds sockets with SO_REUSEPORT to P
 * while another of its threads flips SO_REUSEADDR on the socket being bound
 * (the sentry's bind first probes without SO_REUSEADDR: a flip between the
 * probe's clear and its bind would let the probe pass beside root's socket)
 * and dup2()s a fresh socket onto the number. Under moat no bind leaves the
 * dropped process a socket at P with the kernel's flag (sentry/netreuse.c).
 * Natively Linux lets some through (both SO_REUSEADDR, root's socket not
 * listening) and refuses the listen of the second one: not a sanity probe.
 * One bind with both options set, before the race, makes that deterministic:
 * natively it always joins (FAIL every run); moat refuses it.
 * A bind counts when the socket is then bound there with the kernel's flag
 * (it would join root's group at listen).
 * Prints "ok race_reuseport" or "FAIL race_reuseport: ...". argv[1]: seconds. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "race.h"

static volatile int fdn = -1, stop;

static void *flip(void *a)
{
	(void)a;
	int v = 0, one = 1;
	unsigned n = 0;
	while (!stop) {
		int f = fdn;
		if (f < 0)
			continue;
		v ^= 1;
		setsockopt(f, SOL_SOCKET, SO_REUSEADDR, &v, sizeof v);
		if (++n % 64 == 0) { /* and a fresh socket under the number */
			int s = socket(AF_INET, SOCK_STREAM, 0);
			setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
			if (s >= 0 && fdn == f)
				dup2(s, f);
			close(s);
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int secs = argc > 1 ? atoi(argv[1]) : 2, one = 1;
	if (geteuid() != 0) {
		printf("ok race_reuseport (skipped: not root)\n");
		return 0;
	}
	int r = socket(AF_INET, SOCK_STREAM, 0);
	setsockopt(r, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	setsockopt(r, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one);
	struct sockaddr_in a = { .sin_family = AF_INET };
	inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
	socklen_t l = sizeof a;
	if (bind(r, (struct sockaddr *)&a, sizeof a) < 0 || getsockname(r, (struct sockaddr *)&a, &l) < 0) {
		printf("FAIL race_reuseport: root's bind: %s\n", strerror(errno));
		return 1;
	}
	int p[2];
	if (pipe(p) < 0)
		return 1;
	pid_t c = fork();
	if (c == 0) {
		if (setresgid(61239, 61239, 61239) || setresuid(61239, 61239, 61239))
			_exit(2);
		/* First one bind without the race, both options on: natively
		 * Linux lets it through (both SO_REUSEADDR, root's socket not
		 * listening), so natively this program FAILs every run, not
		 * only when the flip thread happens to win; moat refuses it
		 * (EADDRINUSE: root's entry is another user's). */
		int joined = 0, tries = 1, v0 = 0;
		socklen_t vl0 = sizeof v0;
		int s0 = socket(AF_INET, SOCK_STREAM, 0);
		setsockopt(s0, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
		setsockopt(s0, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one);
		if (bind(s0, (struct sockaddr *)&a, sizeof a) == 0 &&
		    getsockopt(s0, SOL_SOCKET, SO_REUSEPORT, &v0, &vl0) == 0 && v0 == 1)
			joined++;
		close(s0);
		pthread_t th;
		pthread_create(&th, NULL, flip, NULL);
		double end = race_now() + secs;
		while (race_now() < end) {
			int s = socket(AF_INET, SOCK_STREAM, 0);
			setsockopt(s, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one);
			fdn = s;
			int v = 0;
			socklen_t vl = sizeof v;
			/* bound there with the flag: in root's group once both listen
			 * (a plain socket that a swap bound beside root's, both with
			 * SO_REUSEADDR and neither listening, is Linux's too) */
			if (bind(s, (struct sockaddr *)&a, sizeof a) == 0 &&
			    getsockopt(s, SOL_SOCKET, SO_REUSEPORT, &v, &vl) == 0 && v == 1)
				joined++;
			fdn = -1;
			close(s);
			tries++;
		}
		stop = 1;
		pthread_join(th, NULL);
		(void)!write(p[1], &joined, sizeof joined);
		(void)!write(p[1], &tries, sizeof tries);
		_exit(0);
	}
	int joined = -1, tries = 0;
	(void)!read(p[0], &joined, sizeof joined);
	(void)!read(p[0], &tries, sizeof tries);
	waitpid(c, NULL, 0);
	int lr = listen(r, 4);
	if (joined == 0 && lr == 0)
		printf("ok race_reuseport (%d tries)\n", tries);
	else
		printf("FAIL race_reuseport: the dropped process bound root's port with SO_REUSEPORT %d times of %d; root's listen %s\n",
		       joined, tries, lr == 0 ? "ok" : strerror(errno));
	return joined == 0 && lr == 0 ? 0 : 1;
}
