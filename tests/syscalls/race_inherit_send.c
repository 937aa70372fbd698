/*
 * race_inherit_send: the fd-number TOCTOU probe of addressed sends in a
 * sandbox the caller handed a socket of the host's network stack (fd 0, a
 * UDP socket: inetd-style). NOT a differential test: run by
 * tests/integration/isolation_host.sh (inherited_send_fd_swap_race).
 *
 *   race_inherit_send MODE TARGET_PORT SECONDS
 *
 * A thread keeps putting a file of the guest's own on number T, then the
 * inherited socket (dup2 of fd 0), while the main thread sends "LEAK" to
 * 127.0.0.1:TARGET_PORT on T. A send the stop decided on the guest's own
 * file ("the guest's own loopback: native", "not an inet datagram socket:
 * native") that the kernel then looks up as the inherited socket leaves
 * the host's namespace: the host's listener on TARGET_PORT gets it (the
 * caller counts; this prints only how many calls it made). MODE, the call
 * and the guest's own file on T:
 *   sendto          sendto with an address, a UDP socket of the guest's
 *   sendmsg         sendmsg with msg_name, the same
 *   sendmsg_noname  sendmsg, the thread also flips msg_name between NULL
 *                   (the guest's own socket) and the target (inherited)
 *   sendmmsg        sendmmsg of one message with msg_name
 *   tcp             sendto with an address, a TCP socket of the guest's
 *   unix            sendto with an address, an AF_UNIX datagram socket
 *   pipe            sendto with an address, a pipe's write end
 *   connect         connect then send, a UDP socket of the guest's
 * Exit 2: set-up failed.
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
#include <unistd.h>
#include "race.h"

enum { T = 50 };
static atomic_int stop;
static const char *mode;
static struct sockaddr_in target;
static struct msghdr mh;
static struct iovec iov = { (void *)"LEAK", 4 };
static int pipefd[2];

static int own_file(void)
{
	if (!strcmp(mode, "tcp"))
		return socket(AF_INET, SOCK_STREAM, 0);
	if (!strcmp(mode, "unix"))
		return socket(AF_UNIX, SOCK_DGRAM, 0);
	if (!strcmp(mode, "pipe"))
		return dup(pipefd[1]);
	return socket(AF_INET, SOCK_DGRAM, 0);
}

static void *flipper(void *arg)
{
	(void)arg;
	int noname = !strcmp(mode, "sendmsg_noname");
	while (!atomic_load(&stop)) {
		int own = own_file();
		if (own >= 0) {
			dup2(own, T);
			close(own);
		}
		if (noname)
			mh.msg_name = NULL, mh.msg_namelen = 0;
		for (volatile int i = 0; i < 50; i++)
			;
		if (noname)
			mh.msg_name = &target, mh.msg_namelen = sizeof target;
		dup2(0, T);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: race_inherit_send MODE TARGET_PORT SECONDS\n");
		return 2;
	}
	mode = argv[1];
	int secs = atoi(argv[3]);
	memset(&target, 0, sizeof target);
	target.sin_family = AF_INET;
	target.sin_port = htons((unsigned short)atoi(argv[2]));
	target.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (pipe(pipefd) < 0)
		return 2;
	mh.msg_name = &target, mh.msg_namelen = sizeof target;
	mh.msg_iov = &iov, mh.msg_iovlen = 1;
	pthread_t th;
	if (pthread_create(&th, NULL, flipper, NULL) != 0)
		return 2;
	double end = race_now() + secs;
	long tries = 0;
	while (race_now() < end) {
		tries++;
		if (!strcmp(mode, "sendmsg") || !strcmp(mode, "sendmsg_noname")) {
			(void)sendmsg(T, &mh, MSG_DONTWAIT);
		} else if (!strcmp(mode, "sendmmsg")) {
			struct mmsghdr m = { .msg_hdr = mh };
			(void)sendmmsg(T, &m, 1, MSG_DONTWAIT);
		} else if (!strcmp(mode, "connect")) {
			if (connect(T, (struct sockaddr *)&target, sizeof target) == 0)
				(void)send(T, "LEAK", 4, MSG_DONTWAIT);
		} else {
			(void)sendto(T, "LEAK", 4, MSG_DONTWAIT | MSG_NOSIGNAL, (struct sockaddr *)&target,
				     sizeof target);
		}
	}
	atomic_store(&stop, 1);
	pthread_join(th, NULL);
	printf("%s %ld calls\n", mode, tries);
	return 0;
}
