/* race_recv_name_scan: receives on an AF_UNIX datagram socket bound to a
 * path, from a sender bound to another path, made by a thread whose stack
 * (pthread_attr_setstack) is memory another thread keeps scanning for the
 * kernel's name of the sender. In the sandbox a bound path is an abstract
 * name in the guest's network namespace whose secret part lets a task name
 * the socket natively without connect's permission check
 * (sentry/unixsock.c); the receive stops give the call copies below the red
 * zone, guest memory, and map the name at the exit. Until unixgen39 the
 * kernel wrote the whole name there (and recvfrom with a full-size buffer
 * into the guest's own buffer), and a spinning reader had it before the
 * exit wiped it (red team 84: 1-1,843 calls). Each "moat/" name the scanner
 * sees is tried as an abstract address of a native sendto: one that
 * reaches a socket is the leak. The receiver alternates recvmsg, recvfrom
 * (its name buffer in the scanned memory), recvmmsg, and a recvfrom whose
 * length word a fourth thread flips between -1 and a whole sockaddr_un (a
 * stop that saw -1 let the call run natively: the kernel read 110 and
 * wrote the whole name); each of the first three must show the sender's
 * path (the mapping works). Then a name read there, completed
 * with a made-up generation, is bound by a socket of the probe's own and
 * sends to the receiver: the receiver must not see the sender's path (the
 * sentry maps a received name by its inode, the generation unseen, so a
 * guest's bind of the sandbox's prefix is refused). Natively no name is
 * abstract.
 * usage: race_recv_name_scan SECONDS; prints "ok race_recv_name_scan N
 * calls M tried" or "FAIL race_recv_name_scan ...". Never natively outside
 * the shield (an isolation probe). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include "race.h"
#include "unix_pair.h"

#define STK (256 * 1024)
static char *stk;          /* the receiver's stack, scanned */
static atomic_int stop;
static struct unix_pair up;
static double end;
static long calls, tried, wrong;
static char leak[200], bad[200];
static char shown[110]; /* the longest "moat/" name read (no generation) */

static void printable(char *out, size_t cap, const char *s, size_t n)
{
	size_t k = 0;
	for (size_t i = 0; i < n && k + 1 < cap; i++)
		out[k++] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '.';
	out[k] = 0;
}

static void *scan(void *arg)
{
	(void)arg;
	int probe = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	char last[110] = "";
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		const char *p = stk + 1;
		size_t left = STK - 1;
		const char *h;
		while ((h = memmem(p, left, "moat/", 5)) != NULL) {
			size_t at = (size_t)(h - stk);
			struct sockaddr_un a = { .sun_family = AF_UNIX };
			size_t n = STK - at < sizeof a.sun_path - 1 ? STK - at : sizeof a.sun_path - 1;
			memcpy(a.sun_path + 1, h, n); /* (racing the kernel: a torn copy just misses) */
			n = strnlen(a.sun_path + 1, n);
			if (h[-1] == 0 && n > 5 && memcmp(last, a.sun_path + 1, n + 1) != 0) {
				memcpy(last, a.sun_path + 1, n + 1);
				if (n > strlen(shown))
					memcpy(shown, a.sun_path + 1, n + 1);
				tried++;
				socklen_t al = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
				if (sendto(probe, "p", 1, MSG_DONTWAIT, (struct sockaddr *)&a, al) == 1) {
					printable(leak, sizeof leak, a.sun_path + 1, n);
					atomic_store(&stop, 1);
					break;
				}
			}
			left -= (size_t)(h + 1 - p);
			p = h + 1;
		}
	}
	close(probe);
	return NULL;
}

/* the flipped recvfrom's name buffer and length word, in the scanned stack's
 * lowest bytes (the receiver's frames are at its top) */
#define FLIP_NAME (stk + 1024)
#define FLIP_LEN ((volatile int *)(stk + 1024 + 128))

static void *flipper(void *arg)
{
	(void)arg;
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		*FLIP_LEN = -1;
		*FLIP_LEN = (int)sizeof(struct sockaddr_un);
	}
	return NULL;
}

static void *sender(void *arg)
{
	(void)arg;
	while (!atomic_load_explicit(&stop, memory_order_relaxed))
		if (sendto(up.s, "d", 1, MSG_DONTWAIT, (struct sockaddr *)&up.to, sizeof up.to) < 0)
			usleep(100);
	return NULL;
}

/* one received name: the sender's path, else noted */
static void check(const struct sockaddr_un *n, socklen_t len, const char *how)
{
	if (len > offsetof(struct sockaddr_un, sun_path) && n->sun_path[0] && !strcmp(n->sun_path, up.sp))
		return;
	if (!wrong++)
		snprintf(bad, sizeof bad, "%s: length %u, \"%.40s\"", how, (unsigned)len, n->sun_path[0] ? n->sun_path : "(abstract)");
}

static void *receiver(void *arg)
{
	(void)arg;
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	while (!atomic_load_explicit(&stop, memory_order_relaxed) && race_now() < end) {
		struct sockaddr_un name;
		char buf[8];
		struct iovec iov = { buf, sizeof buf };
		struct mmsghdr mm = { .msg_hdr = { .msg_name = &name, .msg_namelen = sizeof name, .msg_iov = &iov, .msg_iovlen = 1 } };
		socklen_t len = sizeof name;
		long r;
		int kind = (int)(calls++ % 4);
		memset(&name, 0, sizeof name);
		switch (kind) {
		case 0:
			r = recvmsg(up.r, &mm.msg_hdr, 0);
			len = mm.msg_hdr.msg_namelen;
			break;
		case 1:
			r = recvfrom(up.r, buf, sizeof buf, 0, (struct sockaddr *)&name, &len);
			break;
		case 2:
			r = recvmmsg(up.r, &mm, 1, 0, NULL) == 1 ? 1 : -1;
			len = mm.msg_hdr.msg_namelen;
			break;
		default:
			r = recvfrom(up.r, buf, sizeof buf, MSG_DONTWAIT, (struct sockaddr *)FLIP_NAME, (socklen_t *)FLIP_LEN);
			if (r < 0 && (errno == EINVAL || errno == EAGAIN))
				continue;
			/* the leak only: the length read back is mostly the
			 * flipper's (once in ~40,000 rootless a 35 with a
			 * name not yet the path was read: not understood) */
			continue;
		}
		if (r < 0) {
			if (!wrong++)
				snprintf(bad, sizeof bad, "receive: %s", strerror(errno));
			continue;
		}
		check(&name, len, kind == 0 ? "recvmsg" : kind == 1 ? "recvfrom" : kind == 2 ? "recvmmsg" : "recvfrom (flipped length)");
	}
	atomic_store(&stop, 1);
	return NULL;
}

int main(int argc, char **argv)
{
	int secs = argc > 1 ? atoi(argv[1]) : 2;
	if (unix_pair_open(&up, "race_recv_name_scan", 0) < 0)
		return 1;
	stk = mmap(NULL, STK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (stk == MAP_FAILED)
		return 1;
	end = race_now() + secs;
	pthread_attr_t at;
	pthread_attr_init(&at);
	pthread_attr_setstack(&at, stk, STK);
	pthread_t ts, tr, tv, tf;
	if (pthread_create(&ts, NULL, scan, NULL) || pthread_create(&tr, NULL, sender, NULL) ||
	    pthread_create(&tf, NULL, flipper, NULL) ||
	    pthread_create(&tv, &at, receiver, NULL)) {
		printf("FAIL race_recv_name_scan pthread_create\n");
		return 1;
	}
	pthread_join(tv, NULL);
	pthread_join(ts, NULL);
	pthread_join(tr, NULL);
	pthread_join(tf, NULL);
	/* a made-up generation after the bytes read (one of our names fills
	 * sun_path: its last 16 bytes) */
	int forged = 0;
	size_t sl = strlen(shown);
	if (!leak[0] && sl > 5 && sl < sizeof up.to.sun_path - 1) {
		struct sockaddr_un f = { .sun_family = AF_UNIX }, got;
		memcpy(f.sun_path + 1, shown, sl);
		memset(f.sun_path + 1 + sl, '0', sizeof f.sun_path - 1 - sl);
		f.sun_path[sizeof f.sun_path - 1] = '1';
		int fs = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		char b[8];
		while (recv(up.r, b, sizeof b, MSG_DONTWAIT) >= 0)
			;
		if (bind(fs, (struct sockaddr *)&f, sizeof f) == 0) {
			socklen_t gl = sizeof got;
			memset(&got, 0, sizeof got);
			if (sendto(fs, "f", 1, 0, (struct sockaddr *)&up.to, sizeof up.to) == 1 &&
			    recvfrom(up.r, b, sizeof b, 0, (struct sockaddr *)&got, &gl) == 1 && gl > 2 &&
			    !strcmp(got.sun_path, up.sp))
				forged = 1;
		}
		close(fs);
	}
	unix_pair_close(&up);
	if (forged) {
		printf("FAIL race_recv_name_scan a socket bound at \"@%.60s...\" (a made-up generation) sent as %s\n",
		       shown, up.sp);
		return 1;
	}
	if (leak[0]) {
		printf("FAIL race_recv_name_scan a native send reached \"@%s\" read off the receiver's stack after %ld calls\n",
		       leak, calls);
		return 1;
	}
	if (wrong) {
		printf("FAIL race_recv_name_scan %ld of %ld names not the sender's path (first %s)\n", wrong, calls, bad);
		return 1;
	}
	printf("ok race_recv_name_scan %ld calls %ld tried\n", calls, tried);
	return 0;
}
