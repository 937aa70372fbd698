/*
 * race_netfd: the fd-number TOCTOU probe of the egress policy.
 * NOT a differential test: run by tests/integration/isolation_net.sh.
 *
 *   race_netfd ALLOWED_IP ALLOWED_PORT TARGET_IP TARGET_PORT [SECONDS]
 *
 * Under `moat run --net allow=ALLOWED_IP:ALLOWED_PORT`, a connect to the
 * allowed destination gives the guest a socket moat-netd made in the host's
 * network namespace; connect(AF_UNSPEC) disconnects it. TARGET (a listener
 * on the host's loopback, which no rule names) must then stay out of reach.
 * The connect stop (sentry/netconn.c netconn_stop) checked which socket the
 * fd number holds (pidfd_getfd + SO_NETNS_COOKIE) and let a loopback
 * connect of the guest's own socket run natively; the kernel looked the fd
 * number up again when the thread resumed. (With moat-netd, connect is now
 * made on the file the worker pins, netconn_connect; this probes that.) One thread here swaps fd T
 * between a fresh socket of the guest's own and moat-netd's socket (dup2)
 * while the main thread connects T to TARGET: when the swap lands between
 * the check and the native connect, the connect runs on moat-netd's socket
 * in the host's namespace. That race is not closed (ARCHITECTURE.md,
 * "Egress"); what holds is netd's locked peer filter on the socket: the
 * host's listener's SYN-ACK never gets in, so no handshake completes.
 * SO_SNDTIMEO bounds each such connect (natively it would take minutes).
 *
 * Prints "REACHED" and exits 1 if a connect to TARGET succeeded (the guest's
 * own loopback has no listener there, so success means the host's), else
 * "not reached" and exits 0, with how many connects timed out (those ran
 * on moat-netd's socket: the race was won, the filter held). Exit 2: set-up
 * failed (the allowed connect).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include "race.h"

enum { T = 50 };
static int hostfd;
static atomic_int stop;

static void *flipper(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		int own = socket(AF_INET, SOCK_STREAM, 0);
		if (own >= 0) {
			dup2(own, T);
			close(own);
		}
		dup2(hostfd, T);
	}
	return NULL;
}

static int addr(struct sockaddr_in *a, const char *ip, const char *port)
{
	memset(a, 0, sizeof *a);
	a->sin_family = AF_INET;
	a->sin_port = htons((unsigned short)atoi(port));
	return inet_pton(AF_INET, ip, &a->sin_addr) == 1 ? 0 : -1;
}

int main(int argc, char **argv)
{
	if (argc < 5) {
		fprintf(stderr, "usage: race_netfd ALLOWED_IP ALLOWED_PORT TARGET_IP TARGET_PORT [SECONDS]\n");
		return 2;
	}
	int secs = argc > 5 ? atoi(argv[5]) : 5;
	struct sockaddr_in allowed, target;
	if (addr(&allowed, argv[1], argv[2]) < 0 || addr(&target, argv[3], argv[4]) < 0)
		return 2;
	hostfd = socket(AF_INET, SOCK_STREAM, 0);
	if (hostfd < 0 || connect(hostfd, (struct sockaddr *)&allowed, sizeof allowed) < 0) {
		perror("race_netfd: allowed connect");
		return 2;
	}
	struct timeval tv = { .tv_sec = 0, .tv_usec = 300000 };
	(void)setsockopt(hostfd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
	struct sockaddr unspec = { .sa_family = AF_UNSPEC };
	(void)connect(hostfd, &unspec, sizeof unspec); /* disconnect moat-netd's socket */
	pthread_t th;
	if (pthread_create(&th, NULL, flipper, NULL) != 0)
		return 2;
	double end = race_now() + secs;
	long tries = 0, denied = 0, timedout = 0;
	int reached = 0;
	while (!reached && race_now() < end) {
		tries++;
		if (connect(T, (struct sockaddr *)&target, sizeof target) == 0)
			reached = 1;
		else if (errno == ENETUNREACH)
			denied++;
		else if (errno == EINPROGRESS || errno == EALREADY || errno == ETIMEDOUT)
			timedout++;
	}
	atomic_store(&stop, 1);
	pthread_join(th, NULL);
	printf("%s after %ld connects (%ld denied at the stop, %ld on moat-netd's socket without an answer)\n",
	       reached ? "REACHED" : "not reached", tries, denied, timedout);
	return reached;
}
