/* sentry/audit.c - one event per trapped call: a trace line (--trace, on
 * stderr, strace-like) and/or a JSON line (--audit FILE).
 *
 * JSON fields: time, sandbox, pid (guest), host_pid, syscall, args, decision,
 * result (value, or -1 with errno name), policy (version hash), note.
 *
 * A guest decides how many calls it traps, so each stream (the JSON file and
 * the trace lines) has two caps (struct limiter): a token bucket of
 * `rate` events per second with a burst of 2 x rate, and `max_bytes` written
 * by this sandbox (AUDIT_RESERVE of it kept for the last record). An event
 * over the rate is dropped and counted; the next event that passes is
 * preceded by {"dropped":N,"reason":"rate",...}. Once an event would pass the
 * byte cap the stream is full: everything after it is dropped, and
 * audit_flush() (at the end of the sandbox) writes the last
 * {"dropped":N,"reason":"bytes",...} into the reserve. */
#include "sentry/sentry.h"
#include "kernel/task.h"
#include "common/log.h"
#include "common/util.h"
#include "syscalls/decode.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define AUDIT_RESERVE 512 /* bytes kept for the final dropped record */

struct limiter {
	uint64_t bytes;          /* written so far */
	double tokens;           /* token bucket (rate cap) */
	uint64_t last_ns;
	uint64_t dropped;        /* events dropped since the last record */
	uint64_t dropped_deny;   /* of them, denials (deny or kill): never hidden uncounted */
	int full;                /* the byte cap was reached */
	int stuck;               /* the sandbox ended while nobody read fd */
	int werr;                /* a write failed (errno): every later event is lost */
	uint64_t lost;           /* events lost to it */
};

struct audit {
	int fd;          /* JSON lines, or -1 */
	int trace;       /* trace lines on stderr */
	uint64_t max_bytes;      /* per stream; 0 = no cap */
	double rate, burst;      /* events per second; 0 = no cap */
	struct limiter json, tr;
	struct sandbox *sb;      /* for the dropped records */
	char *path;              /* --audit's, for the lost-events line */
	pthread_mutex_t lock;    /* the limiters and the writes */
};

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* "2024-01-01T00:00:00.000000Z" (not strftime: it may load time-zone files,
 * which the confined sentry cannot open) */
static void utc_now(char *buf, size_t len)
{
	struct timespec ts;
	struct tm tm;
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d.%06ldZ", tm.tm_year + 1900,
		 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000);
}

/* The record that says how many events a stream lost. */
static int dropped_line(struct audit *a, struct limiter *l, int json, char *buf, size_t len)
{
	const char *why = l->full ? "bytes" : "rate";
	if (json) {
		char t[64];
		utc_now(t, sizeof t);
		return snprintf(buf, len, "{\"time\":\"%s\",\"sandbox\":\"%s\",\"dropped\":%llu,"
				"\"denied\":%llu,\"reason\":\"%s\"}\n", t, a->sb ? a->sb->id_str : "",
				(unsigned long long)l->dropped, (unsigned long long)l->dropped_deny, why);
	}
	return snprintf(buf, len, "[moat] dropped %llu events (%s limit), %llu denied\n",
			(unsigned long long)l->dropped, why, (unsigned long long)l->dropped_deny);
}

static void put(int fd, struct limiter *l, const char *buf, int n)
{
	if (n <= 0 || l->stuck || l->werr)
		return;
	/* a stream nobody reads blocks the calls it records, as strace's
	 * would; once the sandbox is ending it is given up (red team 28: moat
	 * ran past --timeout with --trace into a full stderr pipe) */
	int r = write_while(fd, buf, (size_t)n, limits_ending);
	if (r == -EAGAIN) {
		l->stuck = l->full = 1;
		return;
	}
	/* a write error (ENOSPC, EIO, EFBIG): the stream ends there, and the
	 * events it loses are counted for audit_flush's line (red team 40:
	 * an --audit file on a full disk lost them, and moat said 0) */
	if (r < 0) {
		l->werr = -r;
		l->lost++;
		return;
	}
	l->bytes += (uint64_t)n;
}

/* Write one event line of n bytes to fd through the limiter l, with a->lock
 * held: first the pending dropped record if writing resumes after a rate
 * drop; or count the event as dropped. */
static void emit(struct audit *a, struct limiter *l, int fd, int json, const char *line, int n, int deny)
{
	uint64_t now = now_ns();
	if (l->werr) {
		l->lost++;
		return;
	}
	/* a dropped denial is counted apart ("denied" in the record): red
	 * team 56 burst allowed calls until the rate cap dropped the denied
	 * one it wanted hidden, and the record said only "dropped N" */
	if (l->full) {
		l->dropped++;
		l->dropped_deny += (uint64_t)deny;
		return;
	}
	if (a->rate > 0) {
		if (l->last_ns)
			l->tokens += (double)(now - l->last_ns) * a->rate / 1e9;
		else
			l->tokens = a->burst;
		if (l->tokens > a->burst)
			l->tokens = a->burst;
		l->last_ns = now;
		if (l->tokens < 1) {
			l->dropped++;
			l->dropped_deny += (uint64_t)deny;
			return;
		}
	}
	char rec[256];
	int rn = l->dropped ? dropped_line(a, l, json, rec, sizeof rec) : 0;
	if (a->max_bytes && l->bytes + (uint64_t)rn + (uint64_t)n + AUDIT_RESERVE > a->max_bytes) {
		l->full = 1; /* the reserve takes the last record (audit_flush) */
		l->dropped++;
		l->dropped_deny += (uint64_t)deny;
		return;
	}
	if (a->rate > 0)
		l->tokens -= 1;
	if (rn > 0) {
		put(fd, l, rec, rn);
		l->dropped = l->dropped_deny = 0;
	}
	put(fd, l, line, n);
}

int audit_flush(struct audit *a)
{
	char rec[256];
	int lost = 0;
	if (!a)
		return 0;
	pthread_mutex_lock(&a->lock);
	if (a->fd >= 0 && a->json.dropped) {
		put(a->fd, &a->json, rec, dropped_line(a, &a->json, 1, rec, sizeof rec));
		a->json.dropped = a->json.dropped_deny = 0;
	}
	if (a->trace && a->tr.dropped) {
		put(2, &a->tr, rec, dropped_line(a, &a->tr, 0, rec, sizeof rec));
		a->tr.dropped = a->tr.dropped_deny = 0;
	}
	if (a->fd >= 0 && a->json.werr) {
		warnx_("--audit %s: %s: %llu event%s not written", a->path,
			strerror(a->json.werr), (unsigned long long)a->json.lost,
			a->json.lost == 1 ? "" : "s");
		lost = 1;
	}
	pthread_mutex_unlock(&a->lock);
	return lost;
}

struct audit *audit_open(const char *path, int trace, const struct audit_limits *lim,
			 char *err, size_t errlen)
{
	struct audit *a = xcalloc(1, sizeof *a);
	tzset(); /* gmtime_r loads time-zone data once: now, while we may still open files */
	a->fd = -1;
	a->trace = trace;
	if (lim) {
		a->max_bytes = lim->max_bytes;
		a->rate = (double)lim->rate;
		a->burst = 2.0 * (double)lim->rate;
		if (a->max_bytes && a->max_bytes < 2 * AUDIT_RESERVE)
			a->max_bytes = 2 * AUDIT_RESERVE;
	}
	pthread_mutex_init(&a->lock, NULL);
	if (path) {
		/* red team 18: a guest with a rw bind of its directory made it
		 * a symlink to the caller's ~/.bashrc, and the next run appended
		 * the guest's "$(...)" paths to it */
		a->fd = open_caller_output(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
		if (a->fd < 0) {
			snprintf(err, errlen, "--audit %s: %s", path, caller_output_error(errno));
			free(a);
			return NULL;
		}
		a->path = xstrdup(path);
	}
	return a;
}

int audit_wants_args(struct audit *a)
{
	return a && (a->fd >= 0 || a->trace);
}

static const char *decision_name(int d)
{
	switch (d) {
	case DEC_ALLOW: return "allow";
	case DEC_DENY: return "deny";
	case DEC_KILL: return "kill";
	default: return "?";
	}
}

/* The lines go to the caller's stderr, usually a terminal, and some of
 * their text is the guest's own: every byte but printable ASCII as \ooo
 * (moat_escape_text). Before red team 15 an escape sequence there (ESC, C1
 * CSI 0x9b, OSC 52...) reached the terminal raw, and a newline forged a
 * line of its own. What decode.c quotes (sc_quote_str: the args of every
 * event, the guest's strings in them quoted) is printable ASCII already
 * and passes unchanged. */
static size_t trace_clean(char *out, size_t cap, size_t o, const char *raw, int *cut)
{
	return moat_escape_text(out, cap, o, raw, strlen(raw), 0, cut);
}

/* One --trace line. Its end (result, decision, note) is written whatever
 * the args' length, and args that do not fit end in "...": red team 86, an
 * exec of "/x\", ...) = 0 <allow> " and 3,000 bytes of \001 printed four
 * times as many escapes, the line was cut at 8 KiB, and what it showed
 * ended "= 0 <allow>" where the call failed (or was denied).
 * (its own frame: the JSON record's buffers are not on the stack with it;
 * moat-broker's thread has 64 KiB) */
static __attribute__((noinline)) void trace_line(struct audit *a, pid_t vpid, const char *syscall,
						 const char *args, const char *rbuf, int decision,
						 const char *note)
{
	char line[8192], end[2048], raw[1024];
	int cut = 0, ecut = 0;
	snprintf(raw, sizeof raw, ") = %s <%s>%s%.900s", rbuf, decision_name(decision),
		 note && *note ? " " : "", note ? note : "");
	size_t en = trace_clean(end, sizeof end - 3, 0, raw, &ecut);
	if (ecut) { /* a note's tail: the decision is before it */
		memcpy(end + en, "...", 4);
		en += 3;
	}
	snprintf(raw, sizeof raw, "[moat %d] %.64s(", vpid, syscall);
	size_t o = trace_clean(line, sizeof line, 0, raw, &cut);
	o = trace_clean(line, sizeof line - en - 8, o, args ? args : "", &cut);
	if (cut) {
		memcpy(line + o, "...", 3);
		o += 3;
	}
	memcpy(line + o, end, en);
	o += en;
	line[o++] = '\n';
	line[o] = 0;
	pthread_mutex_lock(&a->lock);
	emit(a, &a->tr, 2, 0, line, (int)o, decision != DEC_ALLOW);
	pthread_mutex_unlock(&a->lock);
}

void audit_event(struct audit *a, struct sandbox *sb, struct task *t, pid_t host_tid,
		 const char *syscall, const char *args, int decision, long ret,
		 const char *note)
{
	if (!audit_wants_args(a))
		return;
	pid_t vpid = t ? t->vtid : -1;
	char rbuf[96];
	if (ret < 0)
		snprintf(rbuf, sizeof rbuf, "-1 %s (%s)", sc_errno_name((int)-ret), strerror((int)-ret));
	else
		snprintf(rbuf, sizeof rbuf, "%ld", ret);
	if (!a->sb)
		a->sb = sb;
	if (a->trace)
		trace_line(a, vpid, syscall, args, rbuf, decision, note);
	if (a->fd >= 0) {
		char tbuf[64], eargs[6144], enote[512], esys[96];
		utc_now(tbuf, sizeof tbuf);
		json_escape(eargs, sizeof eargs, args ? args : "");
		json_escape(enote, sizeof enote, note ? note : "");
		json_escape(esys, sizeof esys, syscall);
		char line[8192];
		int n;
		if (ret < 0)
			n = snprintf(line, sizeof line,
				     "{\"time\":\"%s\",\"sandbox\":\"%s\",\"pid\":%d,\"host_pid\":%d,"
				     "\"syscall\":\"%s\",\"args\":\"%s\",\"decision\":\"%s\",\"result\":-1,"
				     "\"errno\":\"%s\",\"policy\":\"%016llx\",\"note\":\"%s\"}\n",
				     tbuf, sb->id_str, vpid, host_tid, esys, eargs,
				     decision_name(decision), sc_errno_name((int)-ret),
				     (unsigned long long)policy_version(sb->policy), enote);
		else
			n = snprintf(line, sizeof line,
				     "{\"time\":\"%s\",\"sandbox\":\"%s\",\"pid\":%d,\"host_pid\":%d,"
				     "\"syscall\":\"%s\",\"args\":\"%s\",\"decision\":\"%s\",\"result\":%ld,"
				     "\"errno\":null,\"policy\":\"%016llx\",\"note\":\"%s\"}\n",
				     tbuf, sb->id_str, vpid, host_tid, esys, eargs,
				     decision_name(decision), ret,
				     (unsigned long long)policy_version(sb->policy), enote);
		if (n >= (int)sizeof line) {
			/* never emit a broken JSON line: drop the args instead */
			n = snprintf(line, sizeof line,
				     "{\"time\":\"%s\",\"sandbox\":\"%s\",\"pid\":%d,\"host_pid\":%d,"
				     "\"syscall\":\"%s\",\"args\":\"(truncated)\",\"decision\":\"%s\",\"result\":%ld,"
				     "\"policy\":\"%016llx\"}\n",
				     tbuf, sb->id_str, vpid, host_tid, esys,
				     decision_name(decision), ret,
				     (unsigned long long)policy_version(sb->policy));
		}
		pthread_mutex_lock(&a->lock);
		emit(a, &a->json, a->fd, 1, line, n, decision != DEC_ALLOW);
		pthread_mutex_unlock(&a->lock);
	}
}
