/*
 * race_open: the TOCTOU probe.  NOT a differential test: run natively it
 * must FAIL (the forbidden object is there); under moat it must pass.
 *
 *   race_open MODE SCRATCH FORBIDDEN [SECONDS]
 *     MODE       open | openat | openat2 | stat | lstat | statx | access |
 *                readlink | exec | rename | unlink | mkdir | connect
 *     SCRATCH    writable directory in the view (the allowed object is made there)
 *     FORBIDDEN  a host path outside the guest's view: a file holding anything
 *                but ALLOWED_CONTENT (open*, stat*, access, rename, unlink), a
 *                symlink (readlink), an executable that exits 99 (exec), a path
 *                whose parent exists (mkdir), a listening AF_UNIX socket that
 *                answers anything but "GUEST" (connect)
 *
 * One thread flips a shared path buffer (for connect: the sun_path of a shared
 * sockaddr) between the allowed path and FORBIDDEN as fast as it can, while
 * worker threads hand that very buffer to the call.  A sandbox that decides
 * on one read of guest memory and acts on another (a double fetch, e.g.
 * SECCOMP_USER_NOTIF_FLAG_CONTINUE after a check) loses this race; one that
 * acts on its own copy never does.
 *
 * Leak = the call reached FORBIDDEN: open* read other data; stat* another
 * inode; access succeeded (the allowed name does not exist); readlink another
 * target; exec ran the canary (exit 99); rename moved other data; unlink or
 * mkdir succeeded without touching the allowed name (mkdir: checked on the
 * host by the caller, a torn name can be in the view); connect reached a peer
 * that is not our own listener.
 *
 * RACE_DOUBLE_FETCH=1 makes the workers model a broken sandbox in user space:
 * each reads the buffer once, "allows" the call only if that copy is the
 * allowed path, and then makes the call on the buffer (a second fetch).  Run
 * natively this must report leaks: it shows that the race is won within the
 * time given, i.e. that this probe catches a double fetch.
 *
 * Prints "ok race_MODE ..." and exits 0 when there was no leak and the allowed
 * path did succeed; "FAIL race_MODE: ..." and exit 1 otherwise.
 */
#include "t.h"
#include <pthread.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <linux/openat2.h>

#define ALLOWED_CONTENT "ALLOWED-CONTENT\n"
#define ALLOWED_TARGET "allowed-target"
#define NWORKERS 3

static struct sockaddr_un sa;          /* connect: the raced sockaddr */
static char path_store[PATH_MAX];
static char *path_buf = path_store;    /* the raced buffer */
static size_t path_cap = sizeof(path_store);
static char allowed[PATH_MAX], forbidden[PATH_MAX], dst[PATH_MAX];
static volatile int stop;
static volatile long flips;
static long attempts, successes, leaks, strays;
static struct stat allowed_st;
static const char *mode;
static int double_fetch;

static void *flipper(void *arg)
{
	(void)arg;
	size_t la = strlen(allowed) + 1, lf = strlen(forbidden) + 1;
	while (!stop) {
		memcpy(path_buf, forbidden, lf);
		__asm__ volatile("" ::: "memory");
		memcpy(path_buf, allowed, la);
		__asm__ volatile("" ::: "memory");
		flips++;
	}
	return NULL;
}

/* The broken sandbox of RACE_DOUBLE_FETCH: check one read, act on another. */
static int checked(void)
{
	char copy[PATH_MAX];
	if (!double_fetch)
		return 1;
	memcpy(copy, path_buf, path_cap);
	copy[path_cap - 1] = 0;
	if (strcmp(copy, allowed) != 0)
		return 0;
	/* the time a sandbox spends deciding (a notification round trip is
	 * tens of microseconds); lets the flipper run even on one CPU */
	sched_yield();
	return 1;
}

static void count(long *c) { __atomic_add_fetch(c, 1, __ATOMIC_RELAXED); }

static int read_fd(int fd, char *buf, size_t len)
{
	ssize_t n = read(fd, buf, len - 1);
	close(fd);
	buf[n > 0 ? n : 0] = 0;
	return n > 0;
}

static void one_open(void)
{
	char buf[64];
	int fd;
	if (!checked())
		return;
	if (!strcmp(mode, "open"))
		fd = open(path_buf, O_RDONLY);
	else if (!strcmp(mode, "openat"))
		fd = openat(AT_FDCWD, path_buf, O_RDONLY);
	else {
		struct open_how how = {.flags = O_RDONLY};
		fd = (int)syscall(SYS_openat2, AT_FDCWD, path_buf, &how, sizeof(how));
	}
	if (fd < 0)
		return;
	read_fd(fd, buf, sizeof(buf));
	count(strcmp(buf, ALLOWED_CONTENT) == 0 ? &successes : &leaks);
}

static void one_stat(void)
{
	struct stat st;
	int r;
	if (!checked())
		return;
	if (!strcmp(mode, "stat"))
		r = stat(path_buf, &st);
	else if (!strcmp(mode, "lstat"))
		r = lstat(path_buf, &st);
	else {
		struct statx sx;
		r = statx(AT_FDCWD, path_buf, 0, STATX_INO, &sx);
		st.st_ino = sx.stx_ino;
		st.st_dev = makedev(sx.stx_dev_major, sx.stx_dev_minor);
	}
	if (r != 0)
		return;
	count(st.st_ino == allowed_st.st_ino && st.st_dev == allowed_st.st_dev ? &successes : &leaks);
}

/* access: the allowed name does not exist, so ENOENT is the right answer and
 * any success reached the forbidden file. */
static void one_access(void)
{
	if (!checked())
		return;
	if (access(path_buf, F_OK) == 0)
		count(&leaks);
	else if (errno == ENOENT)
		count(&successes);
}

static void one_readlink(void)
{
	char buf[PATH_MAX];
	if (!checked())
		return;
	ssize_t n = readlink(path_buf, buf, sizeof(buf) - 1);
	if (n < 0)
		return;
	buf[n] = 0;
	count(strcmp(buf, ALLOWED_TARGET) == 0 ? &successes : &leaks);
}

/* Mutating modes run one worker: the allowed object is re-made each round. */
static void one_mutate(void)
{
	char buf[64];
	struct stat st;
	if (!strcmp(mode, "unlink")) {
		if (t_write_file(allowed, ALLOWED_CONTENT, 0644) != 0 || !checked())
			return;
		if (unlink(path_buf) == 0)
			count(lstat(allowed, &st) != 0 ? &successes : &leaks);
	} else if (!strcmp(mode, "mkdir")) {
		if (!checked())
			return;
		/* A torn buffer (part of each name) may name a directory in the
		 * view: a stray, not a leak. A leak is FORBIDDEN made (visible
		 * natively); the host checks it too (isolation_race.sh). */
		if (mkdir(path_buf, 0755) != 0)
			return;
		if (rmdir(allowed) == 0)
			count(&successes);
		else if (lstat(forbidden, &st) == 0)
			count(&leaks); /* made where the guest cannot see (left for the host's check) */
		else
			count(&strays);
	} else { /* rename */
		if (t_write_file(allowed, ALLOWED_CONTENT, 0644) != 0 || !checked())
			return;
		if (rename(path_buf, dst) != 0)
			return;
		int fd = open(dst, O_RDONLY);
		buf[0] = 0;
		if (fd >= 0)
			read_fd(fd, buf, sizeof(buf));
		count(strcmp(buf, ALLOWED_CONTENT) == 0 ? &successes : &leaks);
		unlink(dst);
	}
}

static void one_connect(void)
{
	char buf[64];
	int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return;
	if (checked() && connect(s, (struct sockaddr *)&sa, sizeof(sa)) == 0 && read_fd(s, buf, sizeof(buf))) {
		count(strcmp(buf, "GUEST") == 0 ? &successes : &leaks);
		return;
	}
	close(s);
}

/* connect: our own listener at the allowed path answers "GUEST". */
static void *listener(void *arg)
{
	int l = *(int *)arg;
	for (;;) { /* until exit: a worker may still be connecting */
		int c = accept4(l, NULL, NULL, SOCK_CLOEXEC);
		if (c < 0)
			continue;
		write(c, "GUEST", 5);
		close(c);
	}
	return NULL;
}

static void *worker(void *arg)
{
	void (*one)(void) = (void (*)(void))arg;
	while (!stop) {
		count(&attempts);
		one();
	}
	return NULL;
}

/* exec: each round forks a child that races its own flipper against execve. */
static int exec_round(void)
{
	pid_t pid = fork();
	if (pid == 0) {
		pthread_t f;
		pthread_create(&f, NULL, flipper, NULL);
		/* race a running flipper, not its start-up */
		for (int spin = 0; flips < 2 && spin < 1000000; spin++)
			__asm__ volatile("pause" ::: "memory");
		char *av[] = {"race", NULL}, *ev[] = {NULL};
		for (int i = 0; i < 20; i++)
			if (checked())
				execve(path_buf, av, ev);
		_exit(127);
	}
	int status;
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int setup(const char *scratch, void (**one)(void), int *nworkers)
{
	int pid = (int)getpid();
	*nworkers = NWORKERS;
	snprintf(allowed, sizeof(allowed), "%s/race_allowed.%d", scratch, pid);
	if (!strcmp(mode, "open") || !strcmp(mode, "openat") || !strcmp(mode, "openat2") ||
	    !strcmp(mode, "stat") || !strcmp(mode, "lstat") || !strcmp(mode, "statx")) {
		if (t_write_file(allowed, ALLOWED_CONTENT, 0644) != 0 || stat(allowed, &allowed_st) != 0)
			return -1;
		*one = mode[0] == 'o' ? one_open : one_stat;
	} else if (!strcmp(mode, "access")) {
		snprintf(allowed, sizeof(allowed), "%s/race_absent.%d", scratch, pid);
		*one = one_access;
	} else if (!strcmp(mode, "readlink")) {
		if (symlink(ALLOWED_TARGET, allowed) != 0)
			return -1;
		*one = one_readlink;
	} else if (!strcmp(mode, "unlink") || !strcmp(mode, "mkdir") || !strcmp(mode, "rename")) {
		snprintf(dst, sizeof(dst), "%s/race_dst.%d", scratch, pid);
		*one = one_mutate;
		*nworkers = 1;
	} else if (!strcmp(mode, "connect")) {
		snprintf(allowed, sizeof(allowed), "%s/rs.%d", scratch, pid);
		if (strlen(allowed) >= sizeof(sa.sun_path) || strlen(forbidden) >= sizeof(sa.sun_path)) {
			errno = ENAMETOOLONG;
			return -1;
		}
		sa.sun_family = AF_UNIX;
		path_buf = sa.sun_path;
		path_cap = sizeof(sa.sun_path);
		struct sockaddr_un me = {.sun_family = AF_UNIX};
		strcpy(me.sun_path, allowed);
		static int l;
		static pthread_t lt;
		l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (l < 0 || bind(l, (struct sockaddr *)&me, sizeof(me)) != 0 || listen(l, 64) != 0)
			return -1;
		pthread_create(&lt, NULL, listener, &l);
		pthread_detach(lt);
		*one = one_connect;
	} else {
		errno = EINVAL;
		return -1;
	}
	memcpy(path_buf, allowed, strlen(allowed) + 1);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: race_open MODE SCRATCH FORBIDDEN [SECONDS]\n");
		return 2;
	}
	mode = argv[1];
	double seconds = argc > 4 ? atof(argv[4]) : 5.0;
	const char *df = getenv("RACE_DOUBLE_FETCH");
	double_fetch = df && !strcmp(df, "1");
	snprintf(forbidden, sizeof(forbidden), "%s", argv[3]);
	setvbuf(stdout, NULL, _IOLBF, 0);

	if (!strcmp(mode, "exec")) {
		snprintf(allowed, sizeof(allowed), "/bin/true");
		memcpy(path_buf, allowed, strlen(allowed) + 1);
		double end = now() + seconds;
		long rounds = 0, ok0 = 0, canary = 0;
		while (now() < end && rounds < 20000 && !canary) {
			int r = exec_round();
			rounds++;
			if (r == 0)
				ok0++;
			else if (r == 99)
				canary++;
		}
		if (canary || !ok0) {
			printf("FAIL race_exec: %ld rounds, %ld ran the allowed binary, %ld ran the forbidden one\n",
			       rounds, ok0, canary);
			return 1;
		}
		printf("ok race_exec (%ld rounds, %ld allowed, 0 leaks)\n", rounds, ok0);
		return 0;
	}

	void (*one)(void) = NULL;
	int nw;
	if (setup(argv[2], &one, &nw) != 0) {
		printf("FAIL race_%s: set-up of %s: %s\n", mode, allowed, strerror(errno));
		unlink(allowed);
		return 1;
	}
	pthread_t f, w[NWORKERS];
	pthread_create(&f, NULL, flipper, NULL);
	for (int i = 0; i < nw; i++)
		pthread_create(&w[i], NULL, worker, (void *)one);
	/* Run for SECONDS, but at least until 20000 attempts (capped at 6x SECONDS),
	 * and stop early once a leak is seen. */
	double start = now();
	while (!(now() - start >= seconds && __atomic_load_n(&attempts, __ATOMIC_RELAXED) >= 20000) &&
	       now() - start < seconds * 6 && !__atomic_load_n(&leaks, __ATOMIC_RELAXED))
		usleep(10000);
	stop = 1;
	pthread_join(f, NULL);
	for (int i = 0; i < nw; i++)
		pthread_join(w[i], NULL);
	unlink(allowed);
	rmdir(allowed);
	if (dst[0])
		unlink(dst);
	if (leaks || !successes) {
		printf("FAIL race_%s: %ld attempts, %ld allowed, %ld reached the forbidden path\n", mode, attempts,
		       successes, leaks);
		return 1;
	}
	printf("ok race_%s (%ld attempts, %ld allowed, 0 leaks", mode, attempts, successes);
	printf(strays ? ", %ld strays)\n" : ")\n", strays);
	return 0;
}
