/* pdeathsig: the parent-death signal (prctl PR_SET/GET_PDEATHSIG) as Linux
 * keeps it (red team 43, item 6):
 *  - a new process starts with 0 (the program too), an exec keeps it, values past _NSIG are
 *    EINVAL, a bad pointer for PR_GET_PDEATHSIG EFAULT;
 *  - commit_creds clears it when the euid, egid, fsuid or fsgid changes
 *    (setresuid, setfsuid, setegid...), not on a set*id that changes none
 *    of them nor on setgroups; moat kept it (the ids are virtual, the
 *    signal was native) and the signal still came after a drop;
 *  - it is sent when the thread that forked the child exits (a thread of a
 *    process that lives on too), and again when the thread it was
 *    reparented to exits;
 *  - not when the thread that forked it execs (it lives on under the
 *    leader's number), but when that image exits.
 * Needs root for the drops (skips otherwise); the dropped ids are 61244. */
#include "t.h"
#include <grp.h>
#include <pthread.h>
#include <signal.h>
#include <sys/fsuid.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#define U1 61244

static volatile sig_atomic_t got_usr1;
static void on_usr1(int s) { (void)s; got_usr1++; }

/* a child's SIGUSR1 counted (on_usr1) and set as its pdeath signal */
static void pd_arm(void)
{
	signal(SIGUSR1, on_usr1);
	prctl(PR_SET_PDEATHSIG, SIGUSR1);
}

/* wait (10 ms at a time, up to ms) until n SIGUSR1s came: whether they did */
static bool usr1_count_within(int n, int ms)
{
	for (int i = 0; i < ms / 10 && got_usr1 < n; i++)
		usleep(10000);
	return got_usr1 >= n;
}

static int pd_get(void)
{
	int v = -1;
	if (prctl(PR_GET_PDEATHSIG, &v) != 0)
		return -2;
	return v;
}

/* in a child: run fn (which sets and changes ids), report pd_get() as a byte */
static int in_child(int (*fn)(void))
{
	int fd = -1;
	pid_t p = t_fork_piped(&fd);
	if (p < 0)
		DIE("fork");
	if (p == 0) {
		unsigned char b = (unsigned char)fn();
		write(fd, &b, 1);
		_exit(0);
	}
	unsigned char b = 0xff;
	if (read(fd, &b, 1) != 1)
		b = 0xfe;
	close(fd);
	waitpid(p, NULL, 0);
	return b;
}

/* the id changes (0 when made): commit_creds's rule clears the pdeath
 * signal when the credentials change, not when they stay */
static int ch_setresuid_drop(void) { return setresuid(U1, U1, U1); }
static int ch_seteuid(void) { return seteuid(U1); }
static int ch_setegid(void) { return setegid(U1); }
static int ch_setfsuid(void) { setfsuid(U1); return setfsuid(-1) != U1; }
static int ch_setfsgid(void) { setfsgid(U1); return setfsgid(-1) != U1; }
/* the real uid only (root's saved and effective stay): no clear */
static int ch_ruid_only(void) { return setresuid(U1, -1, -1); }
static int ch_same_ids(void) { return setresuid(0, 0, 0) != 0 || setuid(0) != 0; }
static int ch_setgroups(void)
{
	gid_t g = U1;
	return setgroups(1, &g);
}

/* in_child's fn: the pdeath signal set, then id_change: pd_get(), 200
 * when the change failed */
static int (*id_change)(void);
static int c_ids(void)
{
	prctl(PR_SET_PDEATHSIG, SIGUSR1);
	if (id_change() != 0)
		return 200;
	return pd_get();
}
static int c_fork_zero(void)
{
	prctl(PR_SET_PDEATHSIG, SIGUSR1);
	int fd = -1;
	pid_t p = t_fork_piped(&fd);
	if (p == 0) {
		unsigned char b = (unsigned char)pd_get();
		write(fd, &b, 1);
		_exit(0);
	}
	unsigned char b = 0xff;
	read(fd, &b, 1);
	close(fd);
	waitpid(p, NULL, 0);
	return b;
}

/* wait up to ms for a byte on fd: the byte, or 0 */
static char wait_byte(int fd, int ms)
{
	struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };
	fd_set rf;
	FD_ZERO(&rf);
	FD_SET(fd, &rf);
	char c = 0;
	if (select(fd + 1, &rf, NULL, NULL, &tv) > 0 && read(fd, &c, 1) != 1)
		c = 0;
	return c;
}

/* A middle process forks a grandchild that sets SIGUSR1, drops (or not:
 * drop 0 makes a no-op setresuid(0,0,0)), says 'r'; then the middle one
 * exits. The grandchild writes 'd' when the signal comes, 'n' after 1.5 s
 * without it. Returns what it wrote. */
static char parent_death(int drop)
{
	int p[2];
	if (pipe(p) < 0)
		DIE("pipe");
	pid_t mid = fork();
	if (mid == 0) {
		pid_t g = fork();
		if (g == 0) {
			pd_arm();
			if (drop ? setresuid(U1, U1, U1) != 0 : setresuid(0, 0, 0) != 0)
				_exit(1);
			write(p[1], "r", 1);
			write(p[1], usr1_count_within(1, 1500) ? "d" : "n", 1);
			_exit(0);
		}
		char r;
		read(p[0], &r, 1);
		_exit(0);
	}
	close(p[1]);
	waitpid(mid, NULL, 0);
	char c = wait_byte(p[0], 5000);
	close(p[0]);
	return c;
}

/* A thread forks a child that sets SIGUSR1; the thread exits, the process
 * lives: the child counts one signal; then the process exits (the child's
 * parent now: its main thread) and the child counts a second. */
static int th_pipe[2];
static pid_t th_child;
static void *forker(void *arg)
{
	(void)arg;
	th_child = fork();
	if (th_child == 0) {
		pd_arm();
		write(th_pipe[1], "r", 1);
		usr1_count_within(1, 3000);
		write(th_pipe[1], got_usr1 == 1 ? "1" : "0", 1);
		usr1_count_within(2, 3000);
		write(th_pipe[1], got_usr1 == 2 ? "2" : "x", 1);
		_exit(0);
	}
	char r;
	read(th_pipe[0], &r, 1); /* the child set it */
	return NULL;
}

static void thread_cases(void)
{
	if (pipe(th_pipe) < 0)
		DIE("pipe");
	int rp[2];
	if (pipe(rp) < 0)
		DIE("pipe");
	pid_t mid = fork();
	if (mid == 0) {
		close(rp[0]);
		pthread_t th;
		if (pthread_create(&th, NULL, forker, NULL) != 0)
			_exit(1);
		pthread_join(th, NULL);
		char c = wait_byte(th_pipe[0], 5000); /* '1': told at the thread's exit */
		write(rp[1], &c, 1);
		_exit(0); /* the process: the second */
	}
	close(rp[1]);
	char c1 = wait_byte(rp[0], 8000);
	close(rp[0]);
	waitpid(mid, NULL, 0);
	char c2 = wait_byte(th_pipe[0], 5000);
	close(th_pipe[0]);
	close(th_pipe[1]);
	CHECK(c1 == '1', "thread_exit_sends", "got '%c'", c1 ? c1 : '-');
	CHECK(c2 == '2', "reparented_parent_exit_sends_again", "got '%c'", c2 ? c2 : '-');
}

/* A process's leader forks a child that sets SIGUSR1; another thread of
 * the process execs (the leader dies in de_thread): the child is told once
 * then (not yet at the exec'd image's exit, 1.5 s later) */
static void *exec_thread(void *arg)
{
	(void)arg;
	execl(t_self, t_self, "--sleep", (char *)NULL);
	return NULL;
}

static void exec_case(void)
{
	int p[2], rdy[2];
	if (pipe(p) < 0 || pipe(rdy) < 0)
		DIE("pipe");
	pid_t mid = fork();
	if (mid == 0) {
		pid_t g = fork();
		if (g == 0) {
			pd_arm();
			write(rdy[1], "r", 1);
			write(p[1], usr1_count_within(1, 1000) ? "d" : "n", 1);
			_exit(0);
		}
		char r;
		read(rdy[0], &r, 1);
		pthread_t th;
		pthread_create(&th, NULL, exec_thread, NULL);
		pause();
		_exit(1);
	}
	close(p[1]);
	close(rdy[0]);
	close(rdy[1]);
	char c = wait_byte(p[0], 5000);
	close(p[0]);
	waitpid(mid, NULL, 0);
	CHECK(c == 'd', "leader_dies_in_thread_exec_sends", "got '%c'", c ? c : '-');
}

/* A thread (not the leader) forks a child that sets SIGUSR1, then execs:
 * the thread lives on under the leader's number (de_thread), so the child
 * is not told at the exec, and is told once the exec'd image (its parent
 * still) exits, 2.5 s later. The child writes '-' (no signal in the first
 * second) or 'e', then 'd' (signalled within 6 s more) or 'n'. */
static int tx_pipe[2], tx_rdy[2];
static void *fork_exec_thread(void *arg)
{
	(void)arg;
	pid_t g = fork();
	if (g == 0) {
		pd_arm();
		write(tx_rdy[1], "r", 1);
		write(tx_pipe[1], usr1_count_within(1, 1000) ? "e" : "-", 1);
		write(tx_pipe[1], usr1_count_within(1, 6000) ? "d" : "n", 1);
		_exit(0);
	}
	char r;
	read(tx_rdy[0], &r, 1); /* the child set it */
	execl(t_self, t_self, "--sleep-ms", "2500", (char *)NULL);
	return NULL;
}

static void thread_exec_case(void)
{
	if (pipe(tx_pipe) < 0 || pipe(tx_rdy) < 0)
		DIE("pipe");
	pid_t mid = fork();
	if (mid == 0) {
		pthread_t th;
		pthread_create(&th, NULL, fork_exec_thread, NULL);
		pause();
		_exit(1);
	}
	close(tx_pipe[1]);
	close(tx_rdy[0]);
	close(tx_rdy[1]);
	char c1 = wait_byte(tx_pipe[0], 5000);
	char c2 = wait_byte(tx_pipe[0], 10000);
	close(tx_pipe[0]);
	waitpid(mid, NULL, 0);
	CHECK(c1 == '-', "thread_exec_keeps_own_child_untold", "got '%c'", c1 ? c1 : '?');
	CHECK(c2 == 'd', "thread_exec_then_exit_sends", "got '%c'", c2 ? c2 : '?');
}

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "--sleep") == 0) {
		usleep(1500000);
		return 0;
	}
	if (argc == 3 && strcmp(argv[1], "--sleep-ms") == 0) {
		usleep((useconds_t)atoi(argv[2]) * 1000);
		return 0;
	}
	if (argc == 3 && strcmp(argv[1], "--exec-get") == 0) {
		int w = atoi(argv[2]);
		unsigned char b = (unsigned char)pd_get();
		write(w, &b, 1);
		return 0;
	}
	t_setup(argc, argv, "pdeathsig");
	if (!t_need_root())
		return T_SKIP;

	/* the program too (moat-init's child: moat kept its own SIGKILL
	 * there natively, which PR_GET_PDEATHSIG showed) */
	CHECK(pd_get() == 0, "program_starts_zero", "got %d", pd_get());
	/* a forked process starts with 0 */
	CHECK(in_child(pd_get) == 0, "new_process_zero", "got %d", in_child(pd_get));
	CHECK(in_child(c_fork_zero) == 0, "fork_child_zero", "got %d", in_child(c_fork_zero));
	errno = 0;
	CHECK(prctl(PR_SET_PDEATHSIG, 65) == -1 && errno == EINVAL, "set_past_nsig_einval", "errno %d", errno);
	errno = 0;
	CHECK(prctl(PR_GET_PDEATHSIG, (void *)8) == -1 && errno == EFAULT, "get_bad_pointer_efault", "errno %d",
	      errno);
	int save = pd_get();
	CHECK(prctl(PR_SET_PDEATHSIG, 64) == 0 && pd_get() == 64, "set_64", "got %d", pd_get());
	prctl(PR_SET_PDEATHSIG, save > 0 ? save : 0);

	/* an exec keeps it */
	{
		int fd = -1;
		pid_t p = t_fork_piped(&fd);
		if (p == 0) {
			prctl(PR_SET_PDEATHSIG, SIGUSR2);
			char a[16];
			snprintf(a, sizeof a, "%d", fd);
			execl(t_self, t_self, "--exec-get", a, (char *)NULL);
			_exit(1);
		}
		unsigned char b = 0xff;
		read(fd, &b, 1);
		close(fd);
		waitpid(p, NULL, 0);
		CHECK(b == SIGUSR2, "exec_keeps", "got %d", b);
	}

	/* commit_creds's rule */
	static const struct {
		int (*change)(void);
		int want; /* the pdeath signal the child reads after: 0 cleared */
		const char *name;
	} ids[] = {
		{ ch_setresuid_drop, 0, "setresuid_drop_clears" },
		{ ch_seteuid, 0, "seteuid_clears" },
		{ ch_setegid, 0, "setegid_clears" },
		{ ch_setfsuid, 0, "setfsuid_clears" },
		{ ch_setfsgid, 0, "setfsgid_clears" },
		{ ch_ruid_only, SIGUSR1, "real_uid_only_keeps" },
		{ ch_same_ids, SIGUSR1, "same_ids_keeps" },
		{ ch_setgroups, SIGUSR1, "setgroups_keeps" },
	};
	for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
		id_change = ids[i].change;
		int v = in_child(c_ids);
		CHECK(v == ids[i].want, ids[i].name, "got %d", v);
	}

	/* and the signal itself */
	char c = parent_death(1);
	CHECK(c == 'n', "dropped_not_signalled", "got '%c'", c ? c : '-');
	c = parent_death(0);
	CHECK(c == 'd', "kept_signalled", "got '%c'", c ? c : '-');
	thread_cases();
	exec_case();
	thread_exec_case();
	return t_done();
}
