/*
 * race_setown: fcntl(N, F_SETOWN, -getpgrp()) on an fd number another
 * thread keeps swapping between fd 0 (the caller's socket, a description
 * the guest shares) and a socket of the guest's own. NOT a differential
 * test: an isolation probe (tests/integration/isolation_race.sh, which
 * checks the caller's owner of its socket afterwards).
 *
 *   race_setown [SECONDS]
 *
 * The sentry refuses the caller's own descriptions (EPERM, red team 47),
 * checked on the pinned file; where it let the call run natively after
 * that check (guest root, or a one-identity sandbox: pts39's gap), a
 * thread's dup2 of fd 0 onto the number in between made the program's
 * group the SIGIO owner of the caller's socket. Prints "ok race_setown
 * (...)"; the caller's check is the test.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>
#include "race.h"

#define N 50

int main(int argc, char **argv)
{
	int secs = argc > 1 ? atoi(argv[1]) : 2;
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return 1;
	struct race_flip fl;
	race_flip_start(&fl, 0, sv[0], N);
	long ok = 0, eperm = 0;
	double end = race_now() + secs;
	while (race_now() < end) {
		if (fcntl(N, F_SETOWN, -getpgrp()) == 0)
			ok++;
		else if (errno == EPERM)
			eperm++;
	}
	race_flip_end(&fl);
	printf("ok race_setown (%ld set, %ld EPERM)\n", ok, eperm);
	return 0;
}
