#include "common/log.h"

#include <errno.h>
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

static void vmsg(const char *fmt, va_list ap, int err)
{
	char buf[1024];
	int n = snprintf(buf, sizeof buf, "moat: ");
	n += vsnprintf(buf + n, sizeof buf - n, fmt, ap);
	if (n >= (int)sizeof buf - 2)
		n = sizeof buf - 2;
	if (err)
		n += snprintf(buf + n, sizeof buf - n, ": %s", strerror(err));
	if (n >= (int)sizeof buf - 1)
		n = sizeof buf - 2;
	buf[n++] = '\n';
	/* one write: lines from several threads never interleave */
	ssize_t r = write(2, buf, n);
	(void)r;
}

void (*moat_die_hook)(int status);
void (*moat_die_cleanup)(void);

void die_status(int status, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg(fmt, ap, 0);
	va_end(ap);
	if (moat_die_hook)
		moat_die_hook(status);
	if (moat_die_cleanup)
		moat_die_cleanup();
	_exit(status);
}

void die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg(fmt, ap, 0);
	va_end(ap);
	if (moat_die_hook)
		moat_die_hook(1);
	if (moat_die_cleanup)
		moat_die_cleanup();
	_exit(1);
}

void pdie(const char *fmt, ...)
{
	int e = errno;
	va_list ap;
	va_start(ap, fmt);
	vmsg(fmt, ap, e);
	va_end(ap);
	if (moat_die_hook)
		moat_die_hook(1);
	if (moat_die_cleanup)
		moat_die_cleanup();
	_exit(1);
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
