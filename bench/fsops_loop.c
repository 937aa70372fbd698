/* fsops_loop N DIR [PHASES]: the file calls of git and tar in DIR (an rw bind under
 * moat), N names each, one phase at a time, each printed as "<phase> <ns per
 * call>":
 *   creat    creat(DIR/fN, 0644) + close   (a new name)
 *   tarfile  what GNU tar -x does for each file, on names tN: open
 *            O_WRONLY|O_CREAT|O_EXCL 0600, write 100 bytes, futimens (mtime),
 *            fchown to the caller's ids, fchmod 0644, close
 *   tarunlink unlink(DIR/tN) (as rm -rf)   (these two: only when named)
 *   gitobj   what git add does for each loose object (object_file.c), on
 *            names in 256 subdirectories DIR/XX: access(DIR/XX/oN) (absent),
 *            open O_RDWR|O_CREAT|O_EXCL 0444 of DIR/XX/tmp_N (ENOENT while
 *            DIR/XX is missing: mkdir(DIR/XX, 0777), then again), write 100
 *            bytes, close, link(tmp_N, oN), unlink(tmp_N)   (only when named)
 *   lstat1   lstat(DIR/fN), first time     (after the creats: cached)
 *   lstat    lstat(DIR/fN) again           (cached)
 *   lstatneg lstat(DIR/missingN)           (a name that does not exist)
 *   open     open(DIR/fN, O_RDONLY) + close
 *   unlink   unlink(DIR/fN)
 *   lstatcold lstat(DIR/fN) of names made before, by another process
 *            (not in moat's cache: run only when named)
 * PHASES: a comma-separated list of the phases to run, in the order above
 * (default: all but lstatcold), e.g. "creat,unlink" so that MOAT_PROFILE's
 * per-syscall means are one phase's. */
#include "bench.h"
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char path[4096];

static const char *name(const char *dir, const char *pre, long i)
{
	snprintf(path, sizeof path, "%s/%s%ld", dir, pre, i);
	return path;
}

static const char *phases;

/* git's write_loose_object + finalize_object_file for object i */
static int gitobj(const char *dir, long i)
{
	static const char data[100];
	char obj[4200], tmp[4200], sub[4096];
	int fd;

	snprintf(sub, sizeof sub, "%s/%02lx", dir, i & 255);
	snprintf(obj, sizeof obj, "%s/o%ld", sub, i);
	snprintf(tmp, sizeof tmp, "%s/tmp_%ld", sub, i);
	snprintf(path, sizeof path, "%.4000s", tmp);
	if (access(obj, F_OK) == 0)
		return errno = EEXIST, -1;
	fd = open(tmp, O_RDWR | O_CREAT | O_EXCL, 0444);
	if (fd < 0 && errno == ENOENT) {
		if (mkdir(sub, 0777))
			return -1;
		fd = open(tmp, O_RDWR | O_CREAT | O_EXCL, 0444);
	}
	if (fd < 0 || write(fd, data, sizeof data) != sizeof data || close(fd))
		return -1;
	if (link(tmp, obj) || unlink(tmp))
		return -1;
	return 0;
}

static int want(const char *p)
{
	size_t l = strlen(p);
	if (!phases)
		return strcmp(p, "lstatcold") != 0;
	for (const char *s = phases; (s = strstr(s, p)); s += l)
		if ((s == phases || s[-1] == ',') && (s[l] == 0 || s[l] == ','))
			return 1;
	return 0;
}

#define PHASE(label, body)                                                 \
	do {                                                               \
		if (!want(label))                                          \
			break;                                             \
		double t0_ = bench_now_ns();                               \
		for (long i = 0; i < n; i++) {                             \
			body;                                              \
		}                                                          \
		bench_report(label, t0_, bench_now_ns(), n);               \
	} while (0)

int main(int argc, char **argv)
{
	long n = bench_iters(argc, argv, 1000);
	const char *dir = argc > 2 ? argv[2] : ".";
	struct stat st;
	int fd;

	phases = argc > 3 ? argv[3] : NULL;
	static const char data[100];
	struct timespec ts[2] = { { .tv_nsec = UTIME_OMIT }, { .tv_sec = 1700000000 } };
	if (phases) {
		PHASE("tarfile",
		      if ((fd = open(name(dir, "t", i), O_WRONLY | O_CREAT | O_EXCL | O_NOCTTY | O_NONBLOCK | O_CLOEXEC,
				     0600)) < 0 || write(fd, data, sizeof data) != sizeof data || futimens(fd, ts) ||
			  fchown(fd, getuid(), getgid()) || fchmod(fd, 0644)) { perror(path); return 1; }
		      close(fd));
		PHASE("tarunlink", if (unlink(name(dir, "t", i))) { perror(path); return 1; });
		PHASE("gitobj", if (gitobj(dir, i)) { perror(path); return 1; });
	}
	PHASE("creat", if ((fd = creat(name(dir, "f", i), 0644)) < 0) { perror(path); return 1; } close(fd));
	PHASE("lstat1", if (lstat(name(dir, "f", i), &st)) { perror(path); return 1; });
	PHASE("lstat", if (lstat(name(dir, "f", i), &st)) { perror(path); return 1; });
	PHASE("lstatneg", if (lstat(name(dir, "missing", i), &st) == 0) return 1);
	PHASE("open", if ((fd = open(name(dir, "f", i), O_RDONLY)) < 0) { perror(path); return 1; } close(fd));
	PHASE("unlink", if (unlink(name(dir, "f", i))) { perror(path); return 1; });
	PHASE("lstatcold", if (lstat(name(dir, "f", i), &st)) { perror(path); return 1; });
	return 0;
}
