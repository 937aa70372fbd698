/* tests/unit/test_vfs_gofer.h - a real gofer behind the VFS of a unit test:
 * the walk and the file handlers are tested against the code moat runs
 * (gofer/server.c), not a copy of it. Each export is a host directory. */
#ifndef MOAT_TEST_VFS_GOFER_H
#define MOAT_TEST_VFS_GOFER_H

#include <criterion/criterion.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gofer/gofer.h"

static pid_t tg_pid = -1;
static int tg_ctl = -1;

/* Start the gofer serving ex[0..n-1]; returns its control socket (for
 * vfs_create, whose default backend is then the gofer). */
static int tg_start(const struct gofer_export *ex, size_t n)
{
	char err[256];
	int r = gofer_start(ex, n, &tg_pid, &tg_ctl, err, sizeof err);

	cr_assert_eq(r, 0, "gofer_start: %d %s", r, err);
	return tg_ctl;
}

/* The gofer for export 0: ro (read-only, hidden names hidden), export 1:
 * rw (read-write); its control socket. */
static int tg_start_ro_rw(const char *ro, const char *rw, const char *const *hidden)
{
	struct gofer_export ex[2] = {
		{ .kind = GOFER_EXPORT_DIR, .host_path = ro, .hidden = hidden },
		{ .kind = GOFER_EXPORT_DIR, .host_path = rw, .writable = 1 },
	};
	return tg_start(ex, 2);
}

/* After vfs_destroy (which drops this thread's connection). */
static void tg_stop(void)
{
	if (tg_ctl >= 0)
		close(tg_ctl);
	if (tg_pid > 0)
		waitpid(tg_pid, NULL, 0);   /* it exits when its control socket closes */
	tg_ctl = tg_pid = -1;
}

#endif
