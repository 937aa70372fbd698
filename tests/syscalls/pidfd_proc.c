/* pidfd_send_signal on a /proc/<pid> directory fd (as LTP's
 * pidfd_send_signal01 uses it): with a siginfo the handler gets the
 * caller's si_value; a kernel-made code (SI_USER) to another
 * process is EPERM; a siginfo whose si_signo is not the signal is EINVAL;
 * flags are EINVAL (only their low 32 bits count: the kernel's unsigned
 * int). */
#include <signal.h>
#include <sys/wait.h>

#include "t.h"

static volatile sig_atomic_t got_val, got_pid;

static void handler(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	got_val = si->si_value.sival_int;
	got_pid = si->si_pid;
}

int main(int argc, char **argv)
{
	t_setup(argc, argv, "pidfd_proc");
	struct sigaction sa = { .sa_sigaction = handler, .sa_flags = SA_SIGINFO };
	siginfo_t info;
	int fd = open("/proc/self", O_DIRECTORY | O_CLOEXEC);

	sigaction(SIGUSR1, &sa, NULL);
	memset(&info, 0, sizeof info);
	info.si_signo = SIGUSR1;
	info.si_code = SI_QUEUE;
	info.si_pid = getpid();
	info.si_uid = getuid();
	info.si_value.sival_int = 4242;
	EXPECT_OK(syscall(SYS_pidfd_send_signal, fd, SIGUSR1, &info, 0), "self_siginfo");
	/* (si_pid is not compared: under moat the sentry sends it from an
	 * ancestor pid namespace, where Linux zeroes it) */
	CHECK(got_val == 4242, "self_siginfo_delivered", "val %d pid %d", (int)got_val, (int)got_pid);
	EXPECT_ERR(syscall(SYS_pidfd_send_signal, fd, SIGUSR2, &info, 0), EINVAL, "signo_mismatch_einval");
	EXPECT_ERR(syscall(SYS_pidfd_send_signal, fd, SIGUSR1, &info, 0x80), EINVAL, "flags_einval");

	pid_t child = fork();
	if (child == 0) {
		pause();
		_exit(0);
	}
	char path[64];
	snprintf(path, sizeof path, "/proc/%d", (int)child);
	int cfd = open(path, O_DIRECTORY | O_CLOEXEC);
	info.si_code = SI_USER;
	EXPECT_ERR(syscall(SYS_pidfd_send_signal, cfd, SIGUSR1, &info, 0), EPERM, "si_user_other_eperm");
	EXPECT_OK(syscall(SYS_pidfd_send_signal, cfd, SIGKILL, NULL, 0), "kill_child");
	int st = 0;
	waitpid(child, &st, 0);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "child_killed", "status %#x", st);
	close(cfd);
	close(fd);

	/* pidfd_getfd: a child's fd, close-on-exec; bad flags EINVAL; a reaped
	 * child's pidfd ESRCH */
	t_write_file("shared", "from-child", 0644);
	int sync[2];
	if (pipe(sync) < 0)
		return 1;
	child = fork();
	if (child == 0) {
		int f = open("shared", O_RDONLY);
		dup2(f, 40);
		char x = 1;
		if (write(sync[1], &x, 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	char x;
	if (read(sync[0], &x, 1) != 1)
		return 1;
	int pfd = (int)syscall(SYS_pidfd_open, child, 0);
	CHECK(pfd >= 0, "pidfd_open", "%s", strerror(errno));
	int got = (int)syscall(SYS_pidfd_getfd, pfd, 40, 0);
	char rb[32] = "";
	CHECK(got >= 0 && pread(got, rb, sizeof rb - 1, 0) == 10 && !strcmp(rb, "from-child"),
	      "getfd_reads_childs_file", "%d %s", got, strerror(errno));
	CHECK(got >= 0 && (fcntl(got, F_GETFD) & FD_CLOEXEC), "getfd_cloexec", "%s", strerror(errno));
	if (got >= 0)
		close(got);
	EXPECT_ERR(syscall(SYS_pidfd_getfd, pfd, 40, 1), EINVAL, "getfd_flags_einval");
	/* flags is the kernel's unsigned int: bit 32 alone is no flag */
	got = (int)syscall(SYS_pidfd_getfd, pfd, 40, 1ULL << 32);
	CHECK(got >= 0, "getfd_flags_high_bits_ignored", "%s", strerror(errno));
	if (got >= 0)
		close(got);
	/* pidfd_send_signal's flags likewise (signal 0: a probe) */
	EXPECT_OK(syscall(SYS_pidfd_send_signal, pfd, 0, NULL, 1ULL << 32), "send_flags_high_bits_ignored");
	EXPECT_ERR(syscall(SYS_pidfd_getfd, pfd, 999, 0), EBADF, "getfd_no_such_fd_ebadf");
	EXPECT_ERR(syscall(SYS_pidfd_getfd, -1, 0, 0), EBADF, "getfd_bad_pidfd_ebadf");
	kill(child, SIGKILL);
	waitpid(child, &st, 0);
	EXPECT_ERR(syscall(SYS_pidfd_getfd, pfd, 40, 0), ESRCH, "getfd_reaped_esrch");
	/* pidfd_send_signal on what is no live pidfd: the sentry answers (the
	 * kernel did, on a number another thread could have swapped for a
	 * pidfd meanwhile: isolation_race race_pidfd) */
	EXPECT_ERR(syscall(SYS_pidfd_send_signal, pfd, SIGUSR1, NULL, 0), ESRCH, "send_reaped_esrch");
	int rf = open("shared", O_RDONLY);
	EXPECT_ERR(syscall(SYS_pidfd_send_signal, rf, SIGUSR1, NULL, 0), EBADF, "send_not_pidfd_ebadf");
	EXPECT_ERR(syscall(SYS_pidfd_send_signal, rf, SIGUSR1, NULL, 0x80), EINVAL, "send_not_pidfd_flags_einval");
	EXPECT_ERR(syscall(SYS_pidfd_send_signal, 999, SIGUSR1, NULL, 0), EBADF, "send_no_such_fd_ebadf");
	close(rf);
	close(pfd);
	return t_done();
}
