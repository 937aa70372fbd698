/* pdeathsig_many: a parent with many children that set the parent-death
 * signal tells every one of them when it exits (review 55: moat's tracer
 * took at most 64 children per dead thread, the others never heard).
 * A middle process forks N children; each sets PR_SET_PDEATHSIG(SIGUSR1),
 * checks its parent is still the middle one, says 'r' and waits up to 5 s
 * for the signal, then writes 'd' (came) or 'n' (not). The middle one exits
 * once all are ready (status 0: N forked, N ready); this process (a subreaper, so it reaps them) counts.
 * Needs no privilege. */
#include "t.h"
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>

#define N 100

static volatile sig_atomic_t got;
static void on_usr1(int s) { (void)s; got = 1; }

/* read exactly want bytes within ms; the count read */
static int read_n(int fd, char *buf, int want, int ms)
{
	int have = 0;
	while (have < want) {
		struct pollfd p = { fd, POLLIN, 0 };
		if (poll(&p, 1, ms) <= 0)
			break;
		ssize_t r = read(fd, buf + have, (size_t)(want - have));
		if (r <= 0)
			break;
		have += (int)r;
	}
	return have;
}

int main(int argc, char **argv)
{
	t_setup(argc, argv, "pdeathsig_many");
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	int rdy[2], res[2];
	if (pipe(rdy) < 0 || pipe(res) < 0)
		DIE("pipe");
	pid_t mid = fork();
	if (mid < 0)
		DIE("fork");
	if (mid == 0) {
		close(res[0]);
		pid_t me = getpid();
		int started = 0;
		for (int i = 0; i < N; i++) {
			pid_t c = fork();
			if (c < 0)
				break;
			if (c == 0) {
				close(rdy[0]);
				signal(SIGUSR1, on_usr1);
				prctl(PR_SET_PDEATHSIG, SIGUSR1);
				if (getppid() != me)
					_exit(2); /* the middle one is gone already: cannot be */
				write(rdy[1], "r", 1);
				close(rdy[1]);
				for (int k = 0; k < 500 && !got; k++)
					usleep(10000);
				write(res[1], got ? "d" : "n", 1);
				_exit(0);
			}
			started++;
		}
		close(rdy[1]);
		/* exit once every child is ready (set the signal), so none is
		 * orphaned before it asked */
		char b[N];
		int ready = read_n(rdy[0], b, started, 10000);
		_exit(started == N && ready == N ? 0 : 1);
	}
	close(res[1]);
	close(rdy[1]);
	close(rdy[0]);
	int st = 0;
	waitpid(mid, &st, 0);
	char out[N];
	int got_n = read_n(res[0], out, N, 10000);
	int d = 0;
	for (int i = 0; i < got_n; i++)
		d += out[i] == 'd';
	close(res[0]);
	while (waitpid(-1, NULL, 0) > 0)
		;
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "forked_all", "status %#x", st);
	CHECK(got_n == N && d == N, "every_child_signalled", "%d of %d answered, %d signalled", got_n, N, d);
	return t_done();
}
