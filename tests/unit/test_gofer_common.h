/* tests/unit/test_gofer_common.h - fixtures shared by the gofer unit tests:
 * a scratch tree under /tmp and a gofer serving it. */
#ifndef MOAT_TEST_GOFER_COMMON_H
#define MOAT_TEST_GOFER_COMMON_H

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gofer/gofer.h"

/* export ids of the standard fixture */
enum { EXP_RW, EXP_RO, EXP_TMP, EXP_DEV, EXP_FILE, EXP_N };

static char tdir[64];
static pid_t gpid = -1;
static int gctl = -1;

static const char *const rw_hidden[] = { "secret", "sub/deep", NULL };
static const char *const ro_hidden[] = { "shadow", "ssh", NULL };

static void put(const char *rel, const char *data, mode_t mode)
{
	char p[256];
	int fd;

	snprintf(p, sizeof p, "%s/%s", tdir, rel);
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, mode);
	cr_assert(fd >= 0, "create %s: %s", p, strerror(errno));
	cr_assert(write(fd, data, strlen(data)) == (ssize_t)strlen(data));
	close(fd);
	chmod(p, mode);
}

static void mk(const char *rel)
{
	char p[256];

	snprintf(p, sizeof p, "%s/%s", tdir, rel);
	cr_assert(mkdir(p, 0755) == 0, "mkdir %s: %s", p, strerror(errno));
}

static void sym(const char *target, const char *rel)
{
	char p[256];

	snprintf(p, sizeof p, "%s/%s", tdir, rel);
	cr_assert(symlink(target, p) == 0);
}

/* Layout:
 *   rw/ file "hello", sub/ (file "sub/f"), secret, sub/deep/, link -> file,
 *       up -> ../../../etc, abs -> /etc
 *   ro/ file "data", dir/, shadow, ssh/key, ldir -> dir
 *   one  (a single-file export) */
static void make_tree(void)
{
	snprintf(tdir, sizeof tdir, "/tmp/moat-gofer-XXXXXX");
	cr_assert(mkdtemp(tdir), "mkdtemp: %s", strerror(errno));
	chmod(tdir, 0755);
	mk("rw");
	put("rw/file", "hello", 0644);
	mk("rw/sub");
	put("rw/sub/f", "f", 0644);
	put("rw/secret", "s", 0600);
	mk("rw/sub/deep");
	sym("file", "rw/link");
	sym("../../../etc", "rw/up");
	sym("/etc", "rw/abs");
	mk("ro");
	put("ro/data", "readonly", 0644);
	mk("ro/dir");
	put("ro/shadow", "root:x", 0600);
	mk("ro/ssh");
	put("ro/ssh/key", "KEY", 0600);
	sym("dir", "ro/ldir");
	put("one", "single", 0644);
}

static int rm_cb(const char *p, const struct stat *st, int flag, struct FTW *f)
{
	(void)st; (void)flag; (void)f;
	remove(p);
	return 0;
}

static void remove_tree(void)
{
	if (tdir[0])
		nftw(tdir, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
	tdir[0] = '\0';
}

static void start_gofer(void)
{
	char rw[128], ro[128], one[128], err[256];
	struct gofer_export ex[EXP_N] = {
		[EXP_RW] = { .kind = GOFER_EXPORT_DIR, .host_path = rw, .writable = 1, .hidden = rw_hidden },
		[EXP_RO] = { .kind = GOFER_EXPORT_DIR, .host_path = ro, .hidden = ro_hidden },
		[EXP_TMP] = { .kind = GOFER_EXPORT_TMPFS, .writable = 1 },
		[EXP_DEV] = { .kind = GOFER_EXPORT_DEV },
		[EXP_FILE] = { .kind = GOFER_EXPORT_DIR, .host_path = one },
	};
	int r;

	snprintf(rw, sizeof rw, "%s/rw", tdir);
	snprintf(ro, sizeof ro, "%s/ro", tdir);
	snprintf(one, sizeof one, "%s/one", tdir);
	r = gofer_start(ex, EXP_N, &gpid, &gctl, err, sizeof err);
	cr_assert(r == 0, "gofer_start: %d %s", r, err);
}

static void stop_gofer(void)
{
	if (gctl >= 0)
		close(gctl);
	if (gpid > 0) {
		int st;
		/* the gofer exits when its control socket closes */
		cr_expect(waitpid(gpid, &st, 0) == gpid);
		cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "gofer status %#x", st);
	}
	gctl = gpid = -1;
}

static void setup_all(void)
{
	make_tree();
	start_gofer();
}

static void teardown_all(void)
{
	stop_gofer();
	remove_tree();
}

#endif
