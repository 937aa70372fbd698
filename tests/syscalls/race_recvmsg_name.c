/* race_recvmsg_name: recvmsg on an AF_UNIX datagram socket bound to a path,
 * from a sender bound to another path, while a second thread keeps flipping
 * the header's msg_name between NULL and a buffer. In the sandbox a bound
 * path is an abstract name "\0moat/<sandbox>/<dev>:<ino>:<gen>" in the
 * guest's network namespace (sentry/unixsock.c), whose 64-bit generation is
 * what lets a task name the socket natively without connect's permission
 * check; the receive stop maps a received one to its path. A stop that saw
 * no name buffer let the call run natively with the guest's header, and
 * the kernel read it again: a msg_name set meanwhile got the abstract name
 * (rt81). Natively the name is the sender's path.
 * With "mmsg", recvmmsg of one message (its stop read the vector once for
 * a name and let an unnamed one run natively too).
 * usage: race_recvmsg_name SECONDS [mmsg]; prints "ok race_recvmsg_name N calls"
 * or "FAIL race_recvmsg_name ...". Never natively (an isolation probe). */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include "race.h"
#include "unix_pair.h"

static struct sockaddr_un name;
static struct mmsghdr mm;
#define mh (mm.msg_hdr)
static atomic_int stop;

static void *flip(void *arg)
{
	(void)arg;
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		*(void *volatile *)&mh.msg_name = &name;
		*(void *volatile *)&mh.msg_name = NULL;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int secs = argc > 1 ? atoi(argv[1]) : 2;
	int mmsg = argc > 2 && !strcmp(argv[2], "mmsg");
	struct unix_pair up;
	if (unix_pair_open(&up, "race_recvmsg_name", 0) < 0)
		return 1;
	int s = up.s, r = up.r;
	struct sockaddr_un to = up.to;
	char buf[8];
	struct iovec iov = { buf, sizeof buf };
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	pthread_t th;
	if (pthread_create(&th, NULL, flip, NULL))
		return 1;
	double end = race_now() + secs;
	long calls = 0, named = 0, leaked = 0;
	char seen[sizeof name.sun_path + 1] = "";
	while (race_now() < end && calls < 200000) {
		if (sendto(s, "x", 1, 0, (struct sockaddr *)&to, sizeof to) != 1) {
			printf("FAIL race_recvmsg_name sendto: %s\n", strerror(errno));
			break;
		}
		memset(&name, 0, sizeof name);
		mh.msg_namelen = sizeof name;
		calls++;
		if (mmsg ? recvmmsg(r, &mm, 1, 0, NULL) != 1 : recvmsg(r, &mh, 0) != 1) {
			printf("FAIL race_recvmsg_name %s: %s\n", mmsg ? "recvmmsg" : "recvmsg", strerror(errno));
			break;
		}
		if (name.sun_family != AF_UNIX)
			continue;
		named++;
		if (name.sun_path[0] == 0 && name.sun_path[1] != 0) {
			/* an abstract name: the kernel's, not the sender's path */
			for (size_t i = 1; i < sizeof name.sun_path && name.sun_path[i]; i++)
				seen[i - 1] = name.sun_path[i];
			leaked++;
			break;
		}
	}
	atomic_store(&stop, 1);
	pthread_join(th, NULL);
	unix_pair_close(&up);
	if (leaked) {
		printf("FAIL race_recvmsg_name the kernel's abstract name \"@%s\" after %ld calls (%ld named)\n", seen,
		       calls, named);
		return 1;
	}
	printf("ok race_recvmsg_name %ld calls (%ld named)\n", calls, named);
	return 0;
}
