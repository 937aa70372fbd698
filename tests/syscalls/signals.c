/* signals: handlers, masks, EINTR and SA_RESTART (also around trapped calls), sigqueue. */
#include "t.h"
#include <signal.h>
#include <sys/time.h>
#include <time.h>

static volatile sig_atomic_t hits, last_sig, last_val;
static int wake_pipe[2];

static void handler(int s)
{
	hits++;
	last_sig = s;
}

static void info_handler(int s, siginfo_t *si, void *uc)
{
	(void)uc;
	last_sig = s;
	last_val = si->si_value.sival_int;
}

static void writer_handler(int s)
{
	(void)s;
	write(wake_pipe[1], "w", 1);
}

static void arm_timer_ms(int ms)
{
	struct itimerval it = {.it_value = {.tv_sec = 0, .tv_usec = ms * 1000}};
	setitimer(ITIMER_REAL, &it, NULL);
}

int main(int argc, char **argv)
{
	t_setup(argc, argv, "signals");
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handler;
	sigaction(SIGUSR1, &sa, NULL);

	raise(SIGUSR1);
	CHECK(hits == 1 && last_sig == SIGUSR1, "raise_handler", "hits %d", (int)hits);
	kill(getpid(), SIGUSR1);
	CHECK(hits == 2, "kill_self", "hits %d", (int)hits);

	sigset_t set, old, pend;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, &old);
	raise(SIGUSR1);
	sigpending(&pend);
	CHECK(hits == 2 && sigismember(&pend, SIGUSR1), "blocked_is_pending", "hits %d", (int)hits);
	sigprocmask(SIG_SETMASK, &old, NULL);
	CHECK(hits == 3, "unblock_delivers", "hits %d", (int)hits);

	/* sigqueue carries a value to an SA_SIGINFO handler. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = info_handler;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGRTMIN, &sa, NULL);
	sigqueue(getpid(), SIGRTMIN, (union sigval){.sival_int = 1234});
	CHECK(last_sig == SIGRTMIN && last_val == 1234, "sigqueue_value", "val %d", (int)last_val);

	/* A blocking read interrupted by a signal: EINTR without SA_RESTART. */
	int p[2];
	pipe(p);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handler;
	sigaction(SIGALRM, &sa, NULL);
	char c;
	arm_timer_ms(50);
	EXPECT_ERR(read(p[0], &c, 1), EINTR, "read_eintr");

	/* With SA_RESTART, the read restarts and gets the byte the handler wrote. */
	wake_pipe[0] = p[0];
	wake_pipe[1] = p[1];
	sa.sa_handler = writer_handler;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &sa, NULL);
	arm_timer_ms(50);
	CHECK(read(p[0], &c, 1) == 1 && c == 'w', "read_sa_restart", "%s", strerror(errno));

	/* A trapped call that blocks (opening a FIFO) interrupted by a signal: EINTR. */
	mkfifo("fifo", 0644);
	sa.sa_handler = handler;
	sa.sa_flags = 0;
	sigaction(SIGALRM, &sa, NULL);
	arm_timer_ms(100);
	EXPECT_ERR(open("fifo", O_RDONLY), EINTR, "blocking_open_eintr");
	/* ...and with SA_RESTART it is restarted: a child opens the other end later. */
	sa.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &sa, NULL);
	pid_t pid = fork();
	if (pid == 0) {
		usleep(300000);
		int w = open("fifo", O_WRONLY);
		write(w, "k", 1);
		_exit(0);
	}
	arm_timer_ms(100);
	int fd = open("fifo", O_RDONLY);
	CHECK(fd >= 0 && read(fd, &c, 1) == 1 && c == 'k', "blocking_open_restart", "%s", strerror(errno));
	if (fd >= 0)
		close(fd);
	waitpid(pid, NULL, 0);

	/* nanosleep interrupted reports the remaining time. */
	sa.sa_flags = 0;
	sigaction(SIGALRM, &sa, NULL);
	arm_timer_ms(50);
	struct timespec req = {.tv_sec = 5}, rem = {0};
	int r = nanosleep(&req, &rem);
	CHECK(r == -1 && errno == EINTR && rem.tv_sec >= 3, "nanosleep_eintr_remaining", "r %d rem %ld", r,
	      (long)rem.tv_sec);

	/* Default actions: SIGTERM kills a child; ignored signals do not. */
	pid = fork();
	if (pid == 0) {
		pause();
		_exit(0);
	}
	kill(pid, SIGTERM);
	int status;
	waitpid(pid, &status, 0);
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM, "default_term", "status %x", status);
	pid = fork();
	if (pid == 0) {
		signal(SIGTERM, SIG_IGN);
		raise(SIGTERM);
		_exit(4);
	}
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 4, "ignored_term", "status %x", status);
	pid = fork();
	if (pid == 0) {
		raise(SIGSEGV);
		_exit(0);
	}
	waitpid(pid, &status, 0);
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV, "default_segv", "status %x", status);

	/* sigsuspend waits for a signal from a child. */
	sigemptyset(&set);
	sigaddset(&set, SIGUSR2);
	sigprocmask(SIG_BLOCK, &set, &old);
	sa.sa_handler = handler;
	sigaction(SIGUSR2, &sa, NULL);
	pid_t parent = getpid();
	pid = fork();
	if (pid == 0) {
		kill(parent, SIGUSR2);
		_exit(0);
	}
	sigset_t wait_set = old;
	sigdelset(&wait_set, SIGUSR2);
	last_sig = 0;
	sigsuspend(&wait_set);
	CHECK(last_sig == SIGUSR2, "sigsuspend_from_child", "last %d", (int)last_sig);
	sigprocmask(SIG_SETMASK, &old, NULL);
	waitpid(pid, NULL, 0);
	EXPECT_ERR(kill(getpid(), 12345), EINVAL, "kill_bad_signal");
	EXPECT_ERR(sigaction(SIGKILL, &sa, NULL), EINVAL, "sigaction_sigkill");
	return t_done();
}
