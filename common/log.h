/* common/log.h - messages for people: fatal errors, warnings, debug.
 *
 * Inside the core (handlers, fs, gofer) failures are negative errnos. Where a
 * person reads the failure (CLI, sandbox set-up), use these: every message is
 * one line on stderr prefixed "moat: ".
 */
#ifndef MOAT_COMMON_LOG_H
#define MOAT_COMMON_LOG_H

#include <stdarg.h>
#include <stdnoreturn.h>

/* Print "moat: <msg>" and exit(status). */
noreturn void die_status(int status, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* die_status(1, ...) */
noreturn void die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* die with ": strerror(errno)" appended */
noreturn void pdie(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void warnx_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* after the guest's end: the next message on a terminal first undoes what
 * the guest's output left open there (log.c) */
void moat_term_reset_arm(void);
void moat_term_reset(void);
void pwarn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A warning about something the guest did (a task killed, a call refused):
 * the guest can repeat it at will, and moat's stderr is not under
 * --output-limit, so a process prints at most MOAT_GUEST_WARN_MAX of them
 * and then one line saying the rest are not shown (red team 54: a guest
 * wrote 2.1 MB of such lines in 10 s under --output-limit 1K). */
#define MOAT_GUEST_WARN_MAX 20
void warn_guest(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Called by die*() with the exit status just before the process exits
 * (sentry/limits.c: a --result record of the failure). */
extern void (*moat_die_hook)(int status);
/* run after moat_die_hook by die(), die_status() and pdie(), before the exit:
 * the sentry ends and reaps the processes it started (sentry/run.c) */
extern void (*moat_die_cleanup)(void);

/* Debug output when MOAT_DEBUG is set in moat's own environment. */
extern int moat_debug;
#define dbg(...) do { if (moat_debug) warnx_(__VA_ARGS__); } while (0)

/* Start-up phase marks under MOAT_DEBUG: "moat: <ms> ms: <what>", the time
 * since moat_mark_t0 (set once by sentry_run; its forks, e.g. the gofer,
 * inherit it, so their marks line up with the sentry's). */
extern double moat_mark_t0;
double moat_ms_now(void);
#define dbg_mark(what) do { if (moat_debug) \
	warnx_("%.2f ms: %s", moat_ms_now() - moat_mark_t0, (what)); } while (0)

#endif
