/* sentry/audit.c - one event per trapped call: a trace line (--trace, on
 * stderr, strace-like) and/or a JSON line (--audit FILE).
 *
 * JSON fields: time, sandbox, pid (guest), host_pid, syscall, args, decision,
 * result (value, or -1 with errno name), policy (version hash), note. */
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

struct audit {
	int fd;          /* JSON lines, or -1 */
	int trace;       /* trace lines on stderr */
	pthread_mutex_t lock;
};

struct audit *audit_open(const char *path, int trace, char *err, size_t errlen)
{
	struct audit *a = xcalloc(1, sizeof *a);
	tzset(); /* gmtime_r loads time-zone data once: now, while we may still open files */
	a->fd = -1;
	a->trace = trace;
	pthread_mutex_init(&a->lock, NULL);
	if (path) {
		a->fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
		if (a->fd < 0) {
			snprintf(err, errlen, "--audit %s: %s", path, strerror(errno));
			free(a);
			return NULL;
		}
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
	if (a->trace) {
		char line[8192];
		int n = snprintf(line, sizeof line, "[moat %d] %s(%s) = %s <%s>%s%s\n", vpid,
				 syscall, args ? args : "", rbuf, decision_name(decision),
				 note && *note ? " " : "", note ? note : "");
		if (n >= (int)sizeof line) {
			n = sizeof line;
			line[n - 1] = '\n';
		}
		ssize_t w = write(2, line, n);
		(void)w;
	}
	if (a->fd >= 0) {
		struct timespec ts;
		struct tm tm;
		char tbuf[64], eargs[6144], enote[512], esys[96];
		clock_gettime(CLOCK_REALTIME, &ts);
		gmtime_r(&ts.tv_sec, &tm);
		/* not strftime: it may load time-zone files, which the confined
		 * sentry cannot open */
		snprintf(tbuf, sizeof tbuf, "%04d-%02d-%02dT%02d:%02d:%02d", tm.tm_year + 1900,
			 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
		json_escape(eargs, sizeof eargs, args ? args : "");
		json_escape(enote, sizeof enote, note ? note : "");
		json_escape(esys, sizeof esys, syscall);
		char line[8192];
		int n;
		if (ret < 0)
			n = snprintf(line, sizeof line,
				     "{\"time\":\"%s.%06ldZ\",\"sandbox\":\"%s\",\"pid\":%d,\"host_pid\":%d,"
				     "\"syscall\":\"%s\",\"args\":\"%s\",\"decision\":\"%s\",\"result\":-1,"
				     "\"errno\":\"%s\",\"policy\":\"%016llx\",\"note\":\"%s\"}\n",
				     tbuf, ts.tv_nsec / 1000, sb->id_str, vpid, host_tid, esys, eargs,
				     decision_name(decision), sc_errno_name((int)-ret),
				     (unsigned long long)policy_version(sb->policy), enote);
		else
			n = snprintf(line, sizeof line,
				     "{\"time\":\"%s.%06ldZ\",\"sandbox\":\"%s\",\"pid\":%d,\"host_pid\":%d,"
				     "\"syscall\":\"%s\",\"args\":\"%s\",\"decision\":\"%s\",\"result\":%ld,"
				     "\"errno\":null,\"policy\":\"%016llx\",\"note\":\"%s\"}\n",
				     tbuf, ts.tv_nsec / 1000, sb->id_str, vpid, host_tid, esys, eargs,
				     decision_name(decision), ret,
				     (unsigned long long)policy_version(sb->policy), enote);
		if (n >= (int)sizeof line) {
			/* never emit a broken JSON line: drop the args instead */
			n = snprintf(line, sizeof line,
				     "{\"time\":\"%s.%06ldZ\",\"sandbox\":\"%s\",\"pid\":%d,\"host_pid\":%d,"
				     "\"syscall\":\"%s\",\"args\":\"(truncated)\",\"decision\":\"%s\",\"result\":%ld,"
				     "\"policy\":\"%016llx\"}\n",
				     tbuf, ts.tv_nsec / 1000, sb->id_str, vpid, host_tid, esys,
				     decision_name(decision), ret,
				     (unsigned long long)policy_version(sb->policy));
		}
		pthread_mutex_lock(&a->lock);
		write_all(a->fd, line, n);
		pthread_mutex_unlock(&a->lock);
	}
}
