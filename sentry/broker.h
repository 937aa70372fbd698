/* sentry/broker.h - --secret NAME@HOST[:PORT]: the broker pattern.
 *
 * The guest gets NAME=<placeholder> (random [A-Za-z0-9], the secret's length);
 * a TCP connection of the guest to HOST:PORT is relayed by moat-broker
 * (netbroker.c), which puts the real value in place of the placeholder in
 * the outbound HTTP/1.x request header blocks only, and puts the placeholder
 * in place of every literal occurrence of the value coming back. The value
 * lives in moat-broker alone once set-up is over.
 *
 * This header: the stream transforms (brokerhttp.c, pure functions, no I/O,
 * unit-tested) and the process (netbroker.c). */
#ifndef MOAT_SENTRY_BROKER_H
#define MOAT_SENTRY_BROKER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define BROKER_MAX_SECRETS 16       /* --secret options (a bit each in a mask) */
#define BROKER_MIN_SECRET 16        /* shorter values are refused: too short to hide */
#define BROKER_MAX_SECRET 4096
#define BROKER_HDR_MAX 65536        /* a longer header block is passed on unchanged */

struct broker_secret {
	char name[64];                      /* the environment variable */
	char host[256];                     /* a host name: the request's Host must be it; "" = an address */
	size_t len;
	char value[BROKER_MAX_SECRET];      /* the real value (moat-broker only) */
	char placeholder[BROKER_MAX_SECRET]; /* what the guest sees */
};

/* A growable byte buffer: what a transform hands on. */
struct bk_buf {
	uint8_t *p;
	size_t len, cap;
};
void bk_buf_put(struct bk_buf *b, const void *d, size_t n);
void bk_buf_free(struct bk_buf *b);

/* What the relay decided, for the audit (moat-broker sends each to the
 * sentry, which writes it as an "http" event naming the secrets, never a
 * value). what: the request line as the guest sent it (placeholders, not
 * values), or why the stream went unframed. */
enum { BK_EV_SUBST = 1, BK_EV_NOHOST, BK_EV_UNFRAMED, BK_EV_UPSTREAM };
struct bk_event {
	int32_t kind;
	uint32_t mask;   /* the secrets concerned */
	char what[120];
};
#define BK_MAX_EVENTS 8

/* The guest's requests (guest -> upstream). */
struct bk_out {
	const struct broker_secret *sec; /* the table, BROKER_MAX_SECRETS entries */
	uint32_t mask;                   /* the secrets this connection may carry */
	int mode;                        /* BK_* below */
	uint8_t *hdr;                    /* the header block being gathered (BROKER_HDR_MAX) */
	size_t hlen;
	uint64_t left;                   /* body or chunk bytes still to pass */
	size_t line;                     /* length of the current chunk-size / trailer line */
	uint64_t chunk;                  /* the chunk size being parsed */
	int chunk_ok;                    /* a hex digit was seen */
	/* for the response side: was each request in flight a HEAD (1) / CONNECT (2)? */
	uint8_t q[64];
	unsigned qhead, qtail;
	int qlost;                       /* the queue overflowed, or requests went unframed */
	unsigned substituted;            /* header blocks that got a secret (for tests) */
	/* Expect (broker2): 1 the request at q index expect_idx expects 100
	 * and has none yet, 2 it got its 100 */
	int expect;
	unsigned expect_idx;
	const char *stop;                /* the response side saw the framing lost: pass from now on */
	struct bk_event ev[BK_MAX_EVENTS]; /* decisions since the caller last took them */
	int nev;
	unsigned ev_lost;
};
/* The guest's responses (upstream -> guest). */
struct bk_in {
	const struct broker_secret *sec;
	uint32_t mask;
	struct bk_out *req;              /* the request side (HEAD/CONNECT queue) */
	int mode;
	uint8_t *hdr;                    /* a copy of the response header block (framing only) */
	size_t hlen;
	uint64_t left;
	size_t line;
	uint64_t chunk;
	int chunk_ok;
	uint8_t held[BROKER_MAX_SECRET]; /* a tail that may begin a secret (never sent yet) */
	size_t nheld;
};

enum { BK_HDR = 0, BK_BODY, BK_CHUNK_SIZE, BK_CHUNK_DATA, BK_CHUNK_END, BK_TRAILER, BK_CLOSE, BK_PASS };

void bk_out_init(struct bk_out *o, const struct broker_secret *sec, uint32_t mask);
void bk_out_free(struct bk_out *o);
/* Bytes from the guest: what goes upstream is appended to out (a header
 * block only once it is whole, with the placeholders of the secrets in
 * mask replaced by their values). */
void bk_out_feed(struct bk_out *o, const uint8_t *in, size_t n, struct bk_buf *out);
/* The guest's end of stream: a partial header block goes as it is. */
void bk_out_eof(struct bk_out *o, struct bk_buf *out);

void bk_in_init(struct bk_in *i, const struct broker_secret *sec, uint32_t mask, struct bk_out *req);
void bk_in_free(struct bk_in *i);
/* Bytes from upstream: every whole occurrence of a value in mask becomes its
 * placeholder; a tail that could begin one is held until the next bytes, the
 * end of the HTTP message it is in, or end of stream. */
void bk_in_feed(struct bk_in *i, const uint8_t *in, size_t n, struct bk_buf *out);
/* Upstream's end of stream: the held tail is not a secret (it ended). */
void bk_in_eof(struct bk_in *i, struct bk_buf *out);
/* An unframed stream (not HTTP/1.x, or after an upgrade) went idle with a
 * tail held: it goes out as the placeholder's bytes, never the value's. 1 if
 * something was held. */
int bk_in_idle(struct bk_in *i, struct bk_buf *out);

/* ---- moat-broker (netbroker.c) ---- */
/* Fork moat-broker (after the privilege drop, before moat-netd and the
 * guest): it gets the secrets over the channel, the sentry's copy is wiped.
 * *netd_end: the channel's other end, for moat-netd (which sends it each
 * brokered connection: the guest side and the upstream socket). */
pid_t broker_start(struct broker_secret *sec, int n, int events_wanted, int *netd_end, int *events, char *err,
		   size_t errlen);
/* The sentry's side of moat-broker's events (*events above, only when
 * events_wanted: --audit or --trace; else -1): a thread that
 * writes each as an audit event. Before the sentry confines itself. */
struct sandbox;
int broker_audit_start(struct sandbox *sb, int fd);
/* At the sandbox's end: the events still queued, then no more. */
void broker_audit_drain(void);
/* MOAT_TEST_CONFINEMENT: the confined sentry tries to read moat-broker
 * (process_vm_readv, ptrace, pidfd_getfd): one probe line each. */
void broker_selftest(void);
/* netd -> broker: one brokered connection, two fds (SCM_RIGHTS: the accepted
 * end of the guest's loopback pair, the upstream socket, maybe connecting). */
struct broker_conn_msg {
	uint32_t mask;
};

#endif
