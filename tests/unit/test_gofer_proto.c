/* tests/unit/test_gofer_proto.c - the gofer against malformed messages on a
 * raw connection: each gets an error reply or closes that connection, and
 * the gofer keeps serving the others. */
#include "test_gofer_common.h"
#include "gofer/proto.h"
#include "common/util.h"

#include <stdint.h>
#include <sys/socket.h>

TestSuite(gofer_proto, .init = setup_all, .fini = teardown_all);

/* A raw connection (CONNECT by hand on the control socket). */
static int raw_connect(void)
{
	struct gofer_hdr h = { .len = sizeof h, .op = GOFER_OP_CONNECT, .tag = 7 };
	char rep[64];
	int fd = -1, nfd = 1;
	long n;

	cr_assert_eq(send_fds(gctl, &h, sizeof h, NULL, 0), (long)sizeof h);
	n = recv_fds(gctl, rep, sizeof rep, &fd, &nfd);
	cr_assert_eq(n, (long)sizeof(struct gofer_rhdr));
	cr_assert_eq(nfd, 1);
	return fd;
}

/* Send raw bytes; return the reply's err, or 1 if the connection closed. */
static int raw_call(int sock, const void *msg, size_t len, struct gofer_rhdr *out)
{
	char rep[GOFER_MAX_REP];
	struct gofer_rhdr rh;
	int fds[4], nfd = 4;
	long n;

	if (send(sock, msg, len, MSG_NOSIGNAL) < 0)
		return 1;
	n = recv_fds(sock, rep, sizeof rep, fds, &nfd);
	for (int i = 0; i < nfd; i++)
		close(fds[i]);
	if (n <= 0)
		return 1;
	cr_assert(n >= (long)sizeof rh, "short reply");
	memcpy(&rh, rep, sizeof rh);
	cr_assert_eq(rh.len, (uint32_t)n);
	if (out)
		*out = rh;
	return rh.err;
}

/* Build hdr | fixed | strings into buf; returns the length. */
static size_t build(char *buf, uint16_t op, const void *fixed, size_t flen,
		    const char *s1, size_t l1, const char *s2, size_t l2)
{
	struct gofer_hdr h = { .op = op, .tag = 42 };
	size_t off = sizeof h;

	memcpy(buf + off, fixed, flen);
	off += flen;
	if (s1) {
		memcpy(buf + off, s1, l1);
		off += l1;
		buf[off++] = '\0';
	}
	if (s2) {
		memcpy(buf + off, s2, l2);
		off += l2;
		buf[off++] = '\0';
	}
	h.len = off;
	memcpy(buf, &h, sizeof h);
	return off;
}

static void still_serving(void)
{
	struct gofer_conn *c = gofer_connect(gctl);
	struct stat st;

	cr_assert(c, "gofer_connect after abuse: %s", strerror(errno));
	cr_assert_eq(gofer_lstat(c, EXP_RW, "file", &st), 0);
	cr_assert_eq(st.st_size, 5);
	gofer_disconnect(c);
	cr_assert_eq(kill(gpid, 0), 0);
}

Test(gofer_proto, valid_raw_request)
{
	char buf[256];
	struct gofer_req_path f = { .exp = EXP_RW, .len = 4 };
	struct gofer_rhdr rh;
	int s = raw_connect();
	size_t n = build(buf, GOFER_OP_LSTAT, &f, sizeof f, "file", 4, NULL, 0);

	cr_assert_eq(raw_call(s, buf, n, &rh), 0);
	cr_assert_eq(rh.tag, 42);
	cr_assert_eq(rh.len, sizeof rh + sizeof(struct stat));
	/* ops work on the control connection too */
	cr_assert_eq(raw_call(gctl, buf, n, &rh), 0);
	close(s);
}

Test(gofer_proto, truncated_and_lying_lengths)
{
	char buf[512];
	struct gofer_req_path f = { .exp = EXP_RW, .len = 4 };
	int s = raw_connect();
	size_t n = build(buf, GOFER_OP_LSTAT, &f, sizeof f, "file", 4, NULL, 0);
	struct gofer_hdr *h = (struct gofer_hdr *)buf;

	/* shorter than a header */
	for (size_t k = 1; k < sizeof(struct gofer_hdr); k++)
		cr_assert_eq(raw_call(s, buf, k, NULL), -EPROTO, "%zu bytes", k);
	/* every truncation of a valid request */
	for (size_t k = sizeof(struct gofer_hdr); k < n; k++) {
		h->len = k;
		int r = raw_call(s, buf, k, NULL);
		cr_assert(r == -EPROTO || r == -EINVAL, "%zu bytes: %d", k, r);
	}
	/* header length lying either way */
	h->len = n + 1;
	cr_assert_eq(raw_call(s, buf, n, NULL), -EPROTO);
	h->len = n - 1;
	cr_assert_eq(raw_call(s, buf, n, NULL), -EPROTO);
	h->len = 0xffffffff;
	cr_assert_eq(raw_call(s, buf, n, NULL), -EPROTO);
	h->len = n;
	/* string length lying */
	struct gofer_req_path *fp = (struct gofer_req_path *)(buf + sizeof *h);
	fp->len = 5;
	cr_assert_eq(raw_call(s, buf, n, NULL), -EPROTO);
	fp->len = 3;
	int r = raw_call(s, buf, n, NULL);
	cr_assert(r == -EINVAL || r == -EPROTO, "%d", r);
	fp->len = 0xffffffff;
	cr_assert_eq(raw_call(s, buf, n, NULL), -ENAMETOOLONG);
	fp->len = PATH_MAX - 1;
	cr_assert_eq(raw_call(s, buf, n, NULL), -EPROTO);
	fp->len = 4;
	/* trailing garbage */
	buf[n] = 'x';
	h->len = n + 1;
	cr_assert_eq(raw_call(s, buf, n + 1, NULL), -EPROTO);
	h->len = n;
	cr_assert_eq(raw_call(s, buf, n, NULL), 0);
	close(s);
	still_serving();
}

Test(gofer_proto, bad_strings)
{
	char buf[512];
	struct gofer_req_path f = { .exp = EXP_RW, .len = 4 };
	int s = raw_connect();
	size_t n;

	/* not NUL-terminated */
	n = build(buf, GOFER_OP_LSTAT, &f, sizeof f, "file", 4, NULL, 0);
	buf[n - 1] = 'x';
	cr_assert_eq(raw_call(s, buf, n, NULL), -EINVAL);
	/* NUL inside */
	n = build(buf, GOFER_OP_LSTAT, &f, sizeof f, "fi\0e", 4, NULL, 0);
	cr_assert_eq(raw_call(s, buf, n, NULL), -EINVAL);
	/* unsafe paths */
	static const char *const bad[] = { "..", ".", "/etc", "a//b", "a/", "../../x" };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		f.len = strlen(bad[i]);
		n = build(buf, GOFER_OP_LSTAT, &f, sizeof f, bad[i], f.len, NULL, 0);
		cr_assert_eq(raw_call(s, buf, n, NULL), -EINVAL, "%s", bad[i]);
	}
	/* second string missing / lying (rename) */
	struct gofer_req_two t = { .exp = EXP_RW, .len = 4, .len2 = 3 };
	n = build(buf, GOFER_OP_RENAME, &t, sizeof t, "file", 4, NULL, 0);
	cr_assert_eq(raw_call(s, buf, n, NULL), -EPROTO);
	n = build(buf, GOFER_OP_RENAME, &t, sizeof t, "file", 4, "new", 3);
	buf[n - 1] = '!';
	cr_assert_eq(raw_call(s, buf, n, NULL), -EINVAL);
	t.len2 = 2;
	n = build(buf, GOFER_OP_RENAME, &t, sizeof t, "file", 4, "new", 3);
	cr_assert_eq(raw_call(s, buf, n, NULL), -EINVAL);
	close(s);
	still_serving();
}

Test(gofer_proto, bad_op_flags_export)
{
	char buf[512];
	struct gofer_req_path f = { .exp = EXP_RW, .len = 4 };
	struct gofer_hdr *h = (struct gofer_hdr *)buf;
	int s = raw_connect();
	size_t n = build(buf, GOFER_OP_LSTAT, &f, sizeof f, "file", 4, NULL, 0);

	static const uint16_t ops[] = { 0, GOFER_OP_MAX, GOFER_OP_MAX + 1, 255, 0xffff };
	for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
		h->op = ops[i];
		cr_assert_eq(raw_call(s, buf, n, NULL), -EPROTO, "op %u", ops[i]);
	}
	h->op = GOFER_OP_LSTAT;
	h->flags = 1;
	cr_assert_eq(raw_call(s, buf, n, NULL), -EINVAL);
	h->flags = GOFER_HDR_CPU_MASK;   /* a CPU number without the hint bit */
	cr_assert_eq(raw_call(s, buf, n, NULL), -EINVAL);
	/* the sender's CPU (GOFER_HDR_CPU): a hint only, the request is
	 * served as without it, whatever the number (one the thread may not
	 * run on, one no machine has) */
	static const uint16_t cpus[] = { 0, 1, 1023, 1024, GOFER_HDR_CPU_MASK, 0 };
	for (size_t i = 0; i < sizeof cpus / sizeof cpus[0]; i++) {
		h->flags = (uint16_t)(GOFER_HDR_CPU | cpus[i]);
		cr_assert_eq(raw_call(s, buf, n, NULL), 0, "cpu %u", cpus[i]);
	}
	h->flags = 0;
	static const uint32_t exps[] = { EXP_N, 63, 64, 0x7fffffff, 0xffffffff };
	for (size_t i = 0; i < sizeof exps / sizeof exps[0]; i++) {
		f.exp = exps[i];
		n = build(buf, GOFER_OP_LSTAT, &f, sizeof f, "file", 4, NULL, 0);
		cr_assert_eq(raw_call(s, buf, n, NULL), -EINVAL, "export %u", exps[i]);
	}
	/* CONNECT only on the control connection, and exactly a header */
	struct gofer_hdr c = { .len = sizeof c, .op = GOFER_OP_CONNECT };
	cr_assert_eq(raw_call(s, &c, sizeof c, NULL), -EINVAL);
	char big[sizeof c + 4] = { 0 };
	c.len = sizeof big;
	memcpy(big, &c, sizeof c);
	cr_assert_eq(raw_call(gctl, big, sizeof big, NULL), -EPROTO);
	/* SYNC: exactly a header, on any connection, an empty reply */
	struct gofer_hdr y = { .len = sizeof y, .op = GOFER_OP_SYNC, .tag = 9 };
	struct gofer_rhdr yr;
	cr_assert_eq(raw_call(s, &y, sizeof y, &yr), 0);
	cr_assert_eq(yr.len, sizeof yr);
	cr_assert_eq(yr.tag, 9);
	char ybig[sizeof y + 2] = { 0 };
	y.len = sizeof ybig;
	memcpy(ybig, &y, sizeof y);
	cr_assert_eq(raw_call(s, ybig, sizeof ybig, NULL), -EPROTO);
	/* every op with the wrong fixed size */
	for (uint16_t op = GOFER_OP_WALK; op < GOFER_OP_MAX; op++) {
		char m[64] = { 0 };
		struct gofer_hdr mh = { .len = sizeof mh + 6, .op = op };
		memcpy(m, &mh, sizeof mh);
		cr_assert_eq(raw_call(s, m, mh.len, NULL), -EPROTO, "op %u", op);
	}
	close(s);
	still_serving();
}

Test(gofer_proto, oversized)
{
	size_t len = GOFER_MAX_REQ + 4096;
	char *buf = calloc(1, len);
	struct gofer_hdr h = { .len = len, .op = GOFER_OP_LSTAT };
	int s = raw_connect();

	memcpy(buf, &h, sizeof h);
	cr_assert_eq(raw_call(s, buf, len, NULL), -EMSGSIZE);
	/* just over the limit, header telling the truth */
	h.len = GOFER_MAX_REQ + 1;
	memcpy(buf, &h, sizeof h);
	cr_assert_eq(raw_call(s, buf, h.len, NULL), -EMSGSIZE);
	/* a path of PATH_MAX bytes */
	struct gofer_req_path f = { .exp = EXP_RW, .len = PATH_MAX };
	static char longpath[PATH_MAX];
	memset(longpath, 'a', PATH_MAX);
	size_t n = build(buf, GOFER_OP_LSTAT, &f, sizeof f, longpath, PATH_MAX, NULL, 0);
	cr_assert_eq(raw_call(s, buf, n, NULL), -ENAMETOOLONG);
	free(buf);
	close(s);
	still_serving();
}

Test(gofer_proto, fds_sent_with_a_request_are_closed)
{
	char buf[256], c;
	struct gofer_req_path f = { .exp = EXP_RW, .len = 4 };
	size_t n = build(buf, GOFER_OP_LSTAT, &f, sizeof f, "file", 4, NULL, 0);
	int s = raw_connect(), p[2], fds[4], nfd = 4;
	char rep[GOFER_MAX_REP];
	struct gofer_rhdr rh;

	cr_assert_eq(pipe(p), 0);
	cr_assert_eq(send_fds(s, buf, n, &p[1], 1), (long)n);
	close(p[1]);
	cr_assert(recv_fds(s, rep, sizeof rep, fds, &nfd) >= (long)sizeof rh);
	memcpy(&rh, rep, sizeof rh);
	cr_assert_eq(rh.err, -EPROTO);
	cr_assert_eq(nfd, 0);
	/* the gofer kept no copy of the write end: EOF */
	cr_assert_eq(read(p[0], &c, 1), 0);
	close(p[0]);
	close(s);
	still_serving();
}

Test(gofer_proto, empty_message_closes_connection)
{
	int s = raw_connect();
	char c;

	cr_assert_eq(send(s, "", 0, 0), 0);
	cr_assert_eq(recv(s, &c, 1, 0), 0);
	close(s);
	still_serving();
}

Test(gofer_proto, fuzz)
{
	char buf[1024];
	unsigned seed = 12345;
	int s = raw_connect();

	for (int i = 0; i < 3000; i++) {
		size_t len = sizeof(struct gofer_hdr) + rand_r(&seed) % 200;
		for (size_t k = 0; k < len; k++)
			buf[k] = rand_r(&seed);
		struct gofer_hdr h;
		memcpy(&h, buf, sizeof h);
		/* mostly plausible headers, so the fixed parts get exercised */
		if (i % 4) {
			h.len = len;
			h.op = 1 + rand_r(&seed) % (GOFER_OP_MAX + 1);
			h.flags = 0;
			if (h.op == GOFER_OP_CONNECT)
				h.op = GOFER_OP_LSTAT;
		}
		memcpy(buf, &h, sizeof h);
		int r = raw_call(s, buf, len, NULL);
		if (r == 1) {
			close(s);
			s = raw_connect();
			continue;
		}
		cr_assert(r <= 0 && r >= -4095);
	}
	close(s);
	still_serving();
}

/* SETXATTR's value: exactly fixed.size bytes after the strings, at most
 * GOFER_XATTR_MAX; anything else is refused before any file is touched. */
Test(gofer_proto, xattr_value_framing)
{
	static char buf[GOFER_MAX_REQ + 8192];
	struct gofer_req_xattr f = { .exp = 0, .len = 4, .len2 = 6, .size = 3 };
	int s = raw_connect();
	size_t n;

	/* value shorter than size: framing */
	n = build(buf, GOFER_OP_SETXATTR, &f, sizeof f, "file", 4, "user.a", 6);
	((struct gofer_hdr *)buf)->len = (uint32_t)(n + 2);
	memcpy(buf + n, "ab", 2);
	cr_assert_eq(raw_call(s, buf, n + 2, NULL), -EPROTO);
	/* value longer than size: framing */
	((struct gofer_hdr *)buf)->len = (uint32_t)(n + 4);
	memcpy(buf + n, "abcd", 4);
	cr_assert_eq(raw_call(s, buf, n + 4, NULL), -EPROTO);
	/* over the protocol's maximum: refused whatever follows */
	f.size = GOFER_XATTR_MAX + 1;
	n = build(buf, GOFER_OP_SETXATTR, &f, sizeof f, "file", 4, "user.a", 6);
	memset(buf + n, 'v', GOFER_XATTR_MAX + 1);
	((struct gofer_hdr *)buf)->len = (uint32_t)(n + GOFER_XATTR_MAX + 1);
	cr_assert_neq(raw_call(s, buf, n + GOFER_XATTR_MAX + 1, NULL), 0);
	/* a name outside user.* never reaches the file */
	f.size = 1;
	n = build(buf, GOFER_OP_SETXATTR, &f, sizeof f, "file", 4, "trusted", 7);
	((struct gofer_req_xattr *)(buf + sizeof(struct gofer_hdr)))->len2 = 7;
	buf[n] = 'v';
	((struct gofer_hdr *)buf)->len = (uint32_t)(n + 1);
	cr_assert_eq(raw_call(s, buf, n + 1, NULL), -EOPNOTSUPP);
	close(s);
	still_serving();
}
