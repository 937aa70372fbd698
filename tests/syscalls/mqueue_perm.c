/* mqueue_perm: POSIX message queues (mq_open, mq_unlink) and their
 * permissions: the queue's owner, group and other bits on the opener's
 * fsuid (umask applied at creation), CAP_DAC_OVERRIDE; O_EXCL, ENOENT,
 * EINVAL for access mode 3; unlink by the owner or root (the sticky
 * directory). Under moat every guest task is one host uid, so the host's
 * checks always passed: a process that dropped root opened root's 0600
 * queue and unlinked it (uidclass sweep); now the sentry opens the queues
 * and checks the virtual ids (syscalls/sys_ipc.c).
 * The dropped-process cases need root (skipped otherwise); uid 61239. */
#include "t.h"
#include <mqueue.h>

#define U1 61239

static char qn[3][64];

int main(int argc, char **argv)
{
	t_setup(argc, argv, "mqueue_perm");
	for (int i = 0; i < 3; i++)
		snprintf(qn[i], sizeof qn[i], "/moat_mqp_%d_%d", (int)getpid(), i);
	struct mq_attr a = { 0, 4, 16, 0 };
	umask(022);
	mqd_t q = mq_open(qn[0], O_CREAT | O_EXCL | O_RDWR, 0600, &a);
	CHECK(q != (mqd_t)-1, "create", "%s", strerror(errno));
	errno = 0;
	CHECK(mq_open(qn[0], O_CREAT | O_EXCL | O_RDWR, 0600, &a) == (mqd_t)-1 && errno == EEXIST, "excl",
	      "%s", strerror(errno));
	struct mq_attr g;
	CHECK(mq_getattr(q, &g) == 0 && g.mq_maxmsg == 4 && g.mq_msgsize == 16, "attr", "%s %ld %ld",
	      strerror(errno), g.mq_maxmsg, g.mq_msgsize);
	CHECK(mq_send(q, "secret", 7, 1) == 0, "send", "%s", strerror(errno));
	mqd_t r = mq_open(qn[0], O_RDONLY | O_NONBLOCK);
	char buf[16];
	CHECK(r != (mqd_t)-1 && mq_getattr(r, &g) == 0 && (g.mq_flags & O_NONBLOCK) && g.mq_curmsgs == 1,
	      "reopen_nonblock", "%s", strerror(errno));
	errno = 0;
	CHECK(mq_send(r, "x", 1, 0) == -1 && errno == EBADF, "rdonly_send_ebadf", "%s", strerror(errno));
	mq_close(r);
	CHECK(fcntl(q, F_GETFD) == FD_CLOEXEC, "glibc_cloexec", "%d", fcntl(q, F_GETFD));
	int raw = (int)syscall(SYS_mq_open, qn[0] + 1, O_RDONLY, 0, NULL);
	/* Linux makes every mqueue fd close-on-exec (get_unused_fd_flags(O_CLOEXEC)) */
	CHECK(raw >= 0 && fcntl(raw, F_GETFD) == FD_CLOEXEC, "raw_cloexec", "%s %d", strerror(errno), fcntl(raw, F_GETFD));
	close(raw);
	errno = 0;
	CHECK(mq_open("/moat_mqp_none", O_RDONLY) == (mqd_t)-1 && errno == ENOENT, "enoent", "%s",
	      strerror(errno));
	errno = 0;
	CHECK(syscall(SYS_mq_open, qn[0] + 1, O_RDWR | O_WRONLY, 0, NULL) == -1 && errno == EINVAL,
	      "accmode3_einval", "%s", strerror(errno));
	errno = 0;
	CHECK(mq_unlink("/moat_mqp_none") == -1 && errno == ENOENT, "unlink_enoent", "%s", strerror(errno));
	/* 0666 under umask 022: others read only */
	mqd_t q1 = mq_open(qn[1], O_CREAT | O_RDWR, 0666, &a);
	CHECK(q1 != (mqd_t)-1, "create_umask", "%s", strerror(errno));

	if (geteuid() == 0) {
		int sync[2];
		pipe(sync);
		pid_t c = fork();
		if (c == 0) {
			if (setresgid(U1, U1, U1) || setresuid(U1, U1, U1))
				_exit(3);
			char res[16];
			int i = 0;
#define TRY(expr, want) res[i++] = (errno = 0, (expr)) ? '+' : (errno == (want) ? '-' : '?')
			TRY(mq_open(qn[0], O_RDONLY | O_NONBLOCK) != (mqd_t)-1, EACCES);
			TRY(mq_open(qn[0], O_WRONLY) != (mqd_t)-1, EACCES);
			TRY(mq_open(qn[0], O_CREAT | O_RDWR, 0666, NULL) != (mqd_t)-1, EACCES);
			TRY(mq_unlink(qn[0]) == 0, EACCES);
			TRY(mq_open(qn[1], O_RDONLY) != (mqd_t)-1, 0);   /* + */
			TRY(mq_open(qn[1], O_WRONLY) != (mqd_t)-1, EACCES);
			TRY(mq_unlink(qn[1]) == 0, EACCES);
			TRY(mq_open(qn[2], O_CREAT | O_EXCL | O_RDWR, 0600, &a) != (mqd_t)-1, 0); /* + its own */
			res[i] = 0;
			write(sync[1], res, (size_t)i + 1);
			_exit(0);
		}
		char res[16] = "";
		int st = 0;
		waitpid(c, &st, 0);
		read(sync[0], res, sizeof res);
		close(sync[0]);
		close(sync[1]);
		const char *want = "----+--+";
		CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0 && strcmp(res, want) == 0, "dropped_rules",
		      "status %#x got %s want %s", st, res, want);
		r = mq_open(qn[0], O_RDONLY | O_NONBLOCK);
		unsigned prio = 0;
		CHECK(r != (mqd_t)-1 && mq_receive(r, buf, sizeof buf, &prio) == 7 && strcmp(buf, "secret") == 0,
		      "dropped_root_queue_intact", "%s", strerror(errno));
		mq_close(r);
		/* root opens and removes the user's 0600 queue (CAP_DAC_OVERRIDE; the directory's owner) */
		r = mq_open(qn[2], O_RDWR);
		CHECK(r != (mqd_t)-1, "root_opens_users", "%s", strerror(errno));
		mq_close(r);
		CHECK(mq_unlink(qn[2]) == 0, "root_unlinks_users", "%s", strerror(errno));
	}
	mq_close(q);
	mq_close(q1);
	CHECK(mq_unlink(qn[0]) == 0 && mq_unlink(qn[1]) == 0, "unlink_own", "%s", strerror(errno));
	errno = 0;
	CHECK(mq_open(qn[0], O_RDONLY) == (mqd_t)-1 && errno == ENOENT, "unlinked_gone", "%s", strerror(errno));
	return t_done();
}
