#include "common/log.h"
#include "common/util.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int moat_debug;
double moat_mark_t0;

double moat_ms_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* moat's last lines (after the program's end: an export's refusals or
 * failure, a kill's reason, a lost audit) must show on a terminal the
 * guest left in any state: its last bytes written straight to the
 * caller's terminal may open an OSC or DCS string that swallows every
 * later byte up to a BEL or ST (red-team round 64: `printf '\033]0;'` and
 * "moat: --export: some changes were refused", and the caller's next
 * lines, were never seen), or leave the text concealed (SGR 8) or in
 * another character set. Once armed (sentry/run.c, the guest gone), the
 * first such line on a terminal is preceded by ST (ends any string), CAN
 * (cancels any sequence), SGR 0, G0 = ASCII and SI; nothing is written
 * when stderr is no terminal or moat says nothing. */
static atomic_int term_armed;

void moat_term_reset_arm(void)
{
	atomic_store(&term_armed, 1);
}

void moat_term_reset(void)
{
	static const char seq[] = "\033\\\030\033[0m\033(B\017";
	if (atomic_exchange(&term_armed, 0) && isatty(2)) {
		ssize_t w = write(2, seq, sizeof seq - 1);
		(void)w;
	}
}

/* Messages carry guest bytes (paths in MOAT_DEBUG lines, names in
 * warnings): every byte outside printable ASCII is written as \ooo, so a
 * guest can neither forge a line of ours nor send escapes to the caller's
 * terminal through moat's stderr. Our own formats hold no newline or tab. */
static void vmsg(const char *fmt, va_list ap, int err)
{
	char raw[768], buf[1024];
	int r = vsnprintf(raw, sizeof raw, fmt, ap);
	size_t rn = r < 0 ? 0 : (size_t)r < sizeof raw ? (size_t)r : sizeof raw - 1;
	int cut = r > 0 && (size_t)r >= sizeof raw;
	size_t n = (size_t)snprintf(buf, sizeof buf, "moat: ");
	/* a cut shows ("..."): red team 86, a guest path of a few KiB hid
	 * the end of the message that named it (the reason, "killed") */
	n = moat_escape_text(buf, sizeof buf - 4, n, raw, rn, 1, &cut);
	if (cut) {
		memcpy(buf + n, "...", 3);
		n += 3;
	}
	if (err && n < sizeof buf - 2) {
		int k = snprintf(buf + n, sizeof buf - 1 - n, ": %s", strerror(err));
		n += k < 0 ? 0 : (size_t)k;
	}
	if (n > sizeof buf - 2)
		n = sizeof buf - 2;
	buf[n++] = '\n';
	moat_term_reset();
	/* one write: lines from several threads never interleave */
	ssize_t w = write(2, buf, n);
	(void)w;
}

void (*moat_die_hook)(int status);
void (*moat_die_cleanup)(void);

/* the hook, the cleanup, then _exit(status) */
static noreturn void die_exit(int status)
{
	if (moat_die_hook)
		moat_die_hook(status);
	if (moat_die_cleanup)
		moat_die_cleanup();
	_exit(status);
}

void die_status(int status, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg(fmt, ap, 0);
	va_end(ap);
	die_exit(status);
}

void die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg(fmt, ap, 0);
	va_end(ap);
	die_exit(1);
}

void pdie(const char *fmt, ...)
{
	int e = errno;
	va_list ap;
	va_start(ap, fmt);
	vmsg(fmt, ap, e);
	va_end(ap);
	die_exit(1);
}

void warnx_(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg(fmt, ap, 0);
	va_end(ap);
}

void pwarn(const char *fmt, ...)
{
	int e = errno;
	va_list ap;
	va_start(ap, fmt);
	vmsg(fmt, ap, e);
	va_end(ap);
}

static atomic_uint guest_warns;

void warn_guest(const char *fmt, ...)
{
	if (atomic_load(&guest_warns) > MOAT_GUEST_WARN_MAX)
		return; /* past the cap nothing counts: the counter never wraps */
	unsigned n = atomic_fetch_add(&guest_warns, 1);
	if (n > MOAT_GUEST_WARN_MAX)
		return;
	if (n == MOAT_GUEST_WARN_MAX) {
		warnx_("more warnings about the program's actions are not shown (at most %d)",
		       MOAT_GUEST_WARN_MAX);
		return;
	}
	va_list ap;
	va_start(ap, fmt);
	vmsg(fmt, ap, 0);
	va_end(ap);
}
