/* unix_pair.h: two AF_UNIX datagram sockets bound to paths in a fresh
 * directory under /tmp (a sender and a receiver), for the probes of the
 * received source name (race_recvmsg_name.c, probe_recv_scratch.c). */
#ifndef UNIX_PAIR_H
#define UNIX_PAIR_H
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

struct unix_pair {
	char dir[64], sp[80], rp[80];
	int s, r;                 /* the sender (bound to sp), the receiver (rp) */
	struct sockaddr_un to;    /* the receiver's address */
};

static inline int unix_pair_bound(const char *path, int flags)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int s = socket(AF_UNIX, SOCK_DGRAM | flags, 0);
	snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
	unlink(path);
	if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof a) < 0)
		return -1;
	return s;
}

/* 0, or -1 with "FAIL NAME ..." printed; flags: socket(2)'s type flags */
static inline int unix_pair_open(struct unix_pair *p, const char *name, int flags)
{
	snprintf(p->dir, sizeof p->dir, "/tmp/%sXXXXXX", name);
	if (!mkdtemp(p->dir)) {
		printf("FAIL %s mkdtemp: %s\n", name, strerror(errno));
		return -1;
	}
	snprintf(p->sp, sizeof p->sp, "%s/s", p->dir);
	snprintf(p->rp, sizeof p->rp, "%s/r", p->dir);
	p->s = unix_pair_bound(p->sp, flags);
	p->r = unix_pair_bound(p->rp, flags);
	if (p->s < 0 || p->r < 0) {
		printf("FAIL %s bind: %s\n", name, strerror(errno));
		return -1;
	}
	memset(&p->to, 0, sizeof p->to);
	p->to.sun_family = AF_UNIX;
	snprintf(p->to.sun_path, sizeof p->to.sun_path, "%s", p->rp);
	return 0;
}

static inline void unix_pair_close(struct unix_pair *p)
{
	unlink(p->sp);
	unlink(p->rp);
	rmdir(p->dir);
}
#endif
