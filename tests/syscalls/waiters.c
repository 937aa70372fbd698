/* Many threads blocked in calls that wait (a FIFO open without a peer, a
 * blocking flock, F_OFD_SETLKW) do not stall the other threads' calls: with
 * NW of them waiting, an open of /etc/hostname by another thread returns at
 * once (Linux blocks only the waiters). Then the peer comes or the lock goes,
 * and every waiter completes. Under moat each waiting call is a trapped call
 * answered by a sentry worker; before, the worker pool (64) was exhausted by
 * 64 waiters and every other trapped call of the sandbox hung. */
#include "t.h"
#include <pthread.h>
#include <signal.h>
#include <sys/file.h>
#include <time.h>

#define NW 100

static const char *phase = "setup";
static void on_alarm(int s)
{
	(void)s;
	char b[160];
	int n = snprintf(b, sizeof b, "FAIL %s: timed out (a trapped call never returned)\n", phase);
	if (write(1, b, (size_t)n) < 0) {
	}
	_exit(1);
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1000 + (double)ts.tv_nsec / 1e6;
}

enum { K_FIFO, K_FLOCK, K_OFD };
static int kind;
static int done_ok, done_bad, started;

static void *waiter(void *arg)
{
	(void)arg;
	__atomic_add_fetch(&started, 1, __ATOMIC_RELAXED);
	int ok = 0;
	if (kind == K_FIFO) {
		int fd = open("fifo", O_RDONLY);
		if (fd >= 0) {
			ok = 1;
			close(fd);
		}
	} else {
		int fd = open("lockfile", O_RDWR);
		if (fd >= 0) {
			if (kind == K_FLOCK) {
				ok = flock(fd, LOCK_EX) == 0 && flock(fd, LOCK_UN) == 0;
			} else {
				struct flock l = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
				ok = fcntl(fd, F_OFD_SETLKW, &l) == 0;
				l.l_type = F_UNLCK;
				ok = ok && fcntl(fd, F_OFD_SETLK, &l) == 0;
			}
			close(fd);
		}
	}
	__atomic_add_fetch(ok ? &done_ok : &done_bad, 1, __ATOMIC_RELAXED);
	return NULL;
}

/* NW threads wait in `k`; another call must return within a second; then
 * release() lets them go and all must complete. */
static void run(int k, const char *name, void (*release)(void))
{
	char cname[96];
	pthread_t th[NW];
	pthread_attr_t at;
	kind = k;
	done_ok = done_bad = started = 0;
	pthread_attr_init(&at);
	pthread_attr_setstacksize(&at, 64 * 1024);
	snprintf(cname, sizeof cname, "%s_start", name);
	phase = cname;
	alarm(20);
	int n = 0;
	for (; n < NW; n++)
		if (pthread_create(&th[n], &at, waiter, NULL) != 0)
			break;
	CHECK(n == NW, cname, "%d of %d threads started", n, NW);
	while (__atomic_load_n(&started, __ATOMIC_RELAXED) < n)
		usleep(10000);
	usleep(500000); /* let them reach their wait */
	static char cname2[96];
	snprintf(cname2, sizeof cname2, "%s_other_call_served", name);
	phase = cname2;
	double t0 = now_ms();
	int fd = open("/etc/hostname", O_RDONLY);
	double dt = now_ms() - t0;
	if (fd >= 0)
		close(fd);
	CHECK(fd >= 0 && dt < 1000, cname2, "open took %.0f ms (fd %d)", dt, fd);
	static char cname3[96];
	snprintf(cname3, sizeof cname3, "%s_waiters_complete", name);
	phase = cname3;
	release();
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	alarm(0);
	CHECK(done_ok == n && done_bad == 0, cname3, "%d ok, %d failed of %d", done_ok, done_bad, n);
	pthread_attr_destroy(&at);
}

static void fifo_release(void)
{
	/* a writer: every reader's open returns (moat's: at the first write) */
	int w = open("fifo", O_WRONLY);
	/* (natively the readers may have closed already: EPIPE) */
	if (w < 0 || (write(w, "x", 1) != 1 && errno != EPIPE))
		t_fail("fifo_writer", "%s", strerror(errno));
	/* the readers close their ends; keep ours until they are all done */
	while (__atomic_load_n(&done_ok, __ATOMIC_RELAXED) + __atomic_load_n(&done_bad, __ATOMIC_RELAXED) < NW)
		usleep(10000);
	close(w);
}

static int holder = -1;
static void lock_release(void)
{
	if (kind == K_FLOCK)
		flock(holder, LOCK_UN);
	else {
		struct flock l = { .l_type = F_UNLCK, .l_whence = SEEK_SET };
		fcntl(holder, F_OFD_SETLK, &l);
	}
	close(holder);
	holder = -1;
}

int main(int argc, char **argv)
{
	t_setup(argc, argv, "waiters");
	signal(SIGALRM, on_alarm);
	signal(SIGPIPE, SIG_IGN);
	if (mkfifo("fifo", 0644) != 0)
		DIE("mkfifo");
	if (t_write_file("lockfile", "data\n", 0644) != 0)
		DIE("lockfile");

	/* WAITERS_ONLY=fifo|flock|ofd: one kind (to see each fail alone) */
	const char *only = getenv("WAITERS_ONLY");
	if (!only || !strcmp(only, "fifo"))
		run(K_FIFO, "fifo_readers", fifo_release);
	if (only && strcmp(only, "flock"))
		goto ofd;

	holder = open("lockfile", O_RDWR);
	if (holder < 0 || flock(holder, LOCK_EX) != 0)
		DIE("flock holder");
	run(K_FLOCK, "flock_waiters", lock_release);
ofd:
	if (only && strcmp(only, "ofd"))
		return t_done();

	holder = open("lockfile", O_RDWR);
	struct flock l = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	if (holder < 0 || fcntl(holder, F_OFD_SETLK, &l) != 0)
		DIE("ofd holder");
	run(K_OFD, "ofd_lock_waiters", lock_release);
	return t_done();
}
