/* fuzz/fuzz_gofer_reply.c: the sentry's side of the gofer protocol
 * (gofer/client.c) reading any reply a compromised gofer could send: framing,
 * tags, errno range, truncation, donated fds, and the walk/readlink/lstat/
 * open/statfs payload checks. The "gofer" here is this process: the reply is
 * queued on the connection before the client's call, the request drained after.
 * An open's FIFO answer makes the client send a SYNC: its answer is queued
 * as well (the run hung on it for 30 minutes when it was not).
 *
 * op % 6: 0 walk, 1 lstat, 2 readlink, 3 open, 5 link, else statfs.
 * Input: u8 op | u8 how (bit 0: set the expected tag, bit 1: set rh.len to
 * the size, bit 2: attach an fd) | reply bytes. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "gofer/gofer.h"
#include "gofer/proto.h"
#include "common/util.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct gofer_conn *conn;
static int srv, cli; /* our end of the data connection, and a copy of the client's */
static uint32_t tag;

static void reply(const void *buf, size_t n, int with_fd)
{
	int fd = with_fd ? open("/dev/null", O_RDONLY | O_CLOEXEC) : -1;
	if (send_fds(srv, buf, n, &fd, fd >= 0) < 0)
		abort();
	if (fd >= 0)
		close(fd);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	int ctl[2], data[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ctl) ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, data))
		abort();
	struct gofer_rhdr rh = { .len = sizeof rh, .tag = 1 };
	if (send_fds(ctl[1], &rh, sizeof rh, &data[0], 1) < 0)
		abort();
	conn = gofer_connect(ctl[0]);
	if (!conn)
		abort();
	srv = data[1];
	cli = data[0];
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char rep[GOFER_MAX_REP + 64] __attribute__((aligned(8)));
	static struct gofer_walk w;
	char drain[GOFER_MAX_REQ];
	struct stat st;
	struct statfs sf;
	char link[PATH_MAX];
	int fd = -1;
	long r = 0;

	if (size < 2 || size - 2 > sizeof rep)
		return 0;
	uint8_t op = data[0], how = data[1];
	size_t n = size - 2;
	memcpy(rep, data + 2, n);
	tag++;
	if ((how & 1) && n >= offsetof(struct gofer_rhdr, tag) + 4)
		memcpy(rep + offsetof(struct gofer_rhdr, tag), &tag, 4);
	if ((how & 2) && n >= 4) {
		uint32_t l = (uint32_t)n;
		memcpy(rep, &l, 4);
	}
	reply(rep, n, how & 4);
	if (op % 6 == 3) {
		/* an open that answers a FIFO is followed by a SYNC (the close
		 * barrier): its empty answer is queued too, unread otherwise */
		struct gofer_rhdr sync = { .len = sizeof sync, .tag = tag + 1 };
		reply(&sync, sizeof sync, 0);
	}
	switch (op % 6) {
	case 0:
		r = gofer_walk(conn, 0, "a/b", &w);
		if (r == 0 && (w.n < 0 || w.n > GOFER_WALK_MAX || w.err > 0 || strlen(w.link) >= PATH_MAX))
			abort();
		break;
	case 1:
		r = gofer_lstat(conn, 0, "a", &st);
		break;
	case 2:
		r = gofer_readlink(conn, 0, "l", link, (size_t)(how >> 3) + 1);
		if (r > (long)(how >> 3) + 1)
			abort();
		break;
	case 3:
		r = gofer_open(conn, 0, "f", O_RDONLY, 0, &fd, &st);
		if (r == 0 && fd < 0)
			abort();
		if (r != 0 && fd >= 0)
			abort(); /* an fd handed out with an error */
		if (fd >= 0)
			close(fd);
		break;
	case 5: {
		/* LINK: 0, 1 or 2 struct stat, anything else EPROTO */
		struct stat lst[2];
		r = gofer_link_st(conn, 0, "a", "b", lst);
		break;
	}
	default:
		r = gofer_statfs(conn, 0, "", &sf);
		break;
	}
	if (r > 0 && op % 6 != 2)
		abort();
	if (r < -4095)
		abort();
	/* the request the client sent (two: an open's SYNC took a tag), and
	 * any reply it did not read */
	int nreq = 0;
	while (recv(srv, drain, sizeof drain, MSG_DONTWAIT) > 0)
		nreq++;
	if (nreq > 1)
		tag += (uint32_t)nreq - 1;
	for (;;) {
		int fds[8], nfd = 8;
		if (recv(cli, drain, 1, MSG_DONTWAIT | MSG_PEEK) < 0)
			break; /* (0: an empty message, which may carry fds) */
		if (recv_fds(cli, drain, sizeof drain, fds, &nfd) < 0)
			break;
		for (int i = 0; i < nfd; i++)
			close(fds[i]);
	}
	if (gofer_conn_broken(conn))
		abort();
	/* no fd may stay behind in the client (a compromised gofer must not
	 * be able to fill the sentry's fd table) */
	static int base = -1;
	int probe = dup(0);
	if (probe >= 0)
		close(probe);
	if (base < 0)
		base = probe;
	else if (probe > base)
		abort();
	return 0;
}
