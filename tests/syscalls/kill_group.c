/* kill of a process group and kill(-1) from a process that dropped root:
 * only the processes it may signal get the signal (Linux's rule: the
 * sender's real or effective uid is the target's real or saved uid), the
 * call succeeds when some did, a group of others' processes only is EPERM,
 * kill(-1) ignores EPERM, and SIGCONT within the session is always allowed.
 * Needs root (skipped natively otherwise). The dropped uids are unusual ones
 * (61234, 61235): natively, kill(-1) as them reaches only this test's own. */
#include "t.h"
#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>

#define U1 61234
#define U2 61235

static int report[2];   /* members write their letter when signalled */
static char me_letter;

static void on_sig(int s)
{
	char b[2] = { me_letter, s == SIGUSR1 ? '1' : s == SIGUSR2 ? '2' : 'c' };
	write(report[1], b, 2);
}

/* a member: letter, ids, optionally its own group; waits to be killed */
static pid_t member(char letter, uid_t uid, int own_group, int ready_w)
{
	pid_t p = fork();
	if (p == 0) {
		me_letter = letter;
		if (own_group)
			setpgid(0, 0);
		if (uid != 0 && setresuid(uid, uid, uid) < 0)
			_exit(90);
		write(ready_w, "r", 1);
		for (;;)
			pause();
	}
	return p;
}

/* what arrived on report within ms: sorted "A1B1..." pairs */
static void collect(char *out, size_t cap, int ms)
{
	usleep(ms * 1000);
	char buf[256];
	ssize_t n = read(report[0], buf, sizeof buf - 1);
	if (n < 0)
		n = 0;
	buf[n] = 0;
	/* sort pairs */
	size_t np = (size_t)n / 2;
	for (size_t i = 0; i < np; i++)
		for (size_t j = i + 1; j < np; j++)
			if (memcmp(buf + 2 * j, buf + 2 * i, 2) < 0) {
				char t0 = buf[2 * i], t1 = buf[2 * i + 1];
				buf[2 * i] = buf[2 * j];
				buf[2 * i + 1] = buf[2 * j + 1];
				buf[2 * j] = t0;
				buf[2 * j + 1] = t1;
			}
	buf[cap - 1 < sizeof buf - 1 ? cap - 1 : sizeof buf - 1] = 0;
	memcpy(out, buf, strlen(buf) + 1);
}

static void scenario(void)
{
	char got[256];
	int ready[2];
	if (pipe(ready) < 0 || pipe2(report, O_NONBLOCK) < 0)
		DIE("pipe");
	setpgid(0, 0); /* this coordinator (root) leads the group */
	me_letter = 'C';
	signal(SIGUSR1, on_sig);
	signal(SIGUSR2, on_sig);
	signal(SIGCONT, on_sig);
	pid_t r = member('R', 0, 0, ready[1]);      /* root, in our group */
	pid_t u2 = member('V', U2, 0, ready[1]);    /* another uid, our group */
	pid_t w = member('W', U1, 0, ready[1]);     /* the sender's uid, our group */
	pid_t s = member('S', 0, 1, ready[1]);      /* root, a group of its own */
	char c;
	for (int i = 0; i < 4; i++)
		read(ready[0], &c, 1);

	/* the sender: drops to U1 in our group */
	int res[2];
	if (pipe(res) < 0)
		DIE("pipe");
	pid_t snd = fork();
	if (snd == 0) {
		me_letter = 'U';
		/* pidfds taken while still root: R's (root) and W's (U1) */
		int pr = (int)syscall(SYS_pidfd_open, r, 0), pw = (int)syscall(SYS_pidfd_open, w, 0);
		if (setresuid(U1, U1, U1) < 0)
			_exit(90);
		char out[8];
		/* 1. kill(0): only W (same uid) and the sender itself */
		int k = kill(0, SIGUSR1);
		out[0] = k == 0 ? '0' : errno == EPERM ? 'P' : 'E';
		usleep(200000);
		/* 2. a group of root's only: EPERM */
		k = kill(-s, SIGUSR1);
		out[1] = k == 0 ? '0' : errno == EPERM ? 'P' : 'E';
		/* 3. SIGCONT to that group: same session, allowed */
		k = kill(-s, SIGCONT);
		out[2] = k == 0 ? '0' : errno == EPERM ? 'P' : 'E';
		usleep(200000);
		/* 4. kill(-1, SIGUSR2): W only (never the sender, never root's) */
		k = kill(-1, SIGUSR2);
		out[3] = k == 0 ? '0' : errno == EPERM ? 'P' : 'E';
		/* 5. kill(-pgrp) of a group with nobody in it: ESRCH */
		k = kill(-(getpid() + 100000), SIGUSR1);
		out[4] = k == 0 ? '0' : errno == ESRCH ? 'S' : 'E';
		/* 6. signal 0 to our group: some may be signalled, 0 */
		k = kill(0, 0);
		out[5] = k == 0 ? '0' : 'E';
		/* 7. pidfd_send_signal follows the same rule (signal 0: a probe) */
		k = (int)syscall(SYS_pidfd_send_signal, pr, 0, NULL, 0);
		out[6] = k == 0 ? '0' : errno == EPERM ? 'P' : 'E';
		k = (int)syscall(SYS_pidfd_send_signal, pw, 0, NULL, 0);
		out[7] = k == 0 ? '0' : errno == EPERM ? 'P' : 'E';
		write(res[1], out, 8);
		for (;;)
			pause();
	}
	char out[9] = "";
	read(res[0], out, 8);
	collect(got, sizeof got, 300);
	/* the sender has its handler too (inherited): U1 from itself */
	CHECK(out[0] == '0', "kill0_partial_succeeds", "kill(0) -> %c", out[0]);
	CHECK(out[1] == 'P', "kill_pgrp_of_others_eperm", "kill(-pgrp) -> %c", out[1]);
	CHECK(out[2] == '0', "sigcont_same_session", "kill(-pgrp, SIGCONT) -> %c", out[2]);
	CHECK(out[3] == '0', "kill_minus1_succeeds", "kill(-1) -> %c", out[3]);
	CHECK(out[4] == 'S', "kill_empty_group_esrch", "-> %c", out[4]);
	CHECK(out[5] == '0', "kill0_sig0", "-> %c", out[5]);
	CHECK(out[6] == 'P', "pidfd_of_root_eperm", "-> %c", out[6]);
	CHECK(out[7] == '0', "pidfd_of_same_uid", "-> %c", out[7]);
	CHECK(strcmp(got, "ScU1W1W2") == 0, "who_got_what", "got '%s' (want ScU1W1W2)", got);

	kill(snd, SIGKILL);
	kill(r, SIGKILL);
	kill(u2, SIGKILL);
	kill(w, SIGKILL);
	kill(s, SIGKILL);
	while (wait(NULL) > 0)
		;
}

/* Groups whose number no member holds (pgwalk): the group's creator gone
 * (L: exited and reaped; its members M, of the sender's uid, and Q, root's,
 * stay) or moved to another group of the session (L2, root: its group keeps
 * N, of the sender's uid). kill(-group) from the dropped uid reaches M and N
 * only, and succeeds. */
static void creator_gone(void)
{
	char got[256];
	int ready[2], pids[2];
	if (pipe(ready) < 0 || pipe2(report, O_NONBLOCK) < 0 || pipe(pids) < 0)
		DIE("pipe");
	setpgid(0, 0);
	me_letter = 'C';
	signal(SIGUSR1, on_sig);
	pid_t l = fork();
	if (l == 0) {
		setpgid(0, 0);
		pid_t m = member('M', U1, 0, ready[1]), q = member('Q', 0, 0, ready[1]);
		pid_t two[2] = { m, q };
		write(pids[1], two, sizeof two);
		_exit(0);
	}
	pid_t mq[2] = { 0, 0 };
	read(pids[0], mq, sizeof mq);
	waitpid(l, NULL, 0);
	int moved[2];
	if (pipe(moved) < 0)
		DIE("pipe");
	pid_t c = getpgrp();
	pid_t l2 = fork();
	if (l2 == 0) {
		me_letter = 'L';
		setpgid(0, 0);
		member('N', U1, 0, ready[1]);
		setpgid(0, c); /* back to the coordinator's group: its own keeps N */
		write(moved[1], "m", 1);
		for (;;)
			pause();
	}
	char x;
	for (int i = 0; i < 3; i++)
		read(ready[0], &x, 1);
	read(moved[0], &x, 1);
	int res[2];
	if (pipe(res) < 0)
		DIE("pipe");
	pid_t snd = fork();
	if (snd == 0) {
		if (setresuid(U1, U1, U1) < 0)
			_exit(90);
		char out[2];
		int k = kill(-l, SIGUSR1);
		out[0] = k == 0 ? '0' : errno == EPERM ? 'P' : errno == ESRCH ? 'S' : 'E';
		k = kill(-l2, SIGUSR1);
		out[1] = k == 0 ? '0' : errno == EPERM ? 'P' : errno == ESRCH ? 'S' : 'E';
		write(res[1], out, 2);
		for (;;)
			pause();
	}
	char out[3] = "";
	read(res[0], out, 2);
	collect(got, sizeof got, 300);
	CHECK(out[0] == '0', "kill_group_creator_exited", "kill(-pgrp) -> %c", out[0]);
	CHECK(out[1] == '0', "kill_group_creator_moved", "kill(-pgrp) -> %c", out[1]);
	CHECK(strcmp(got, "M1N1") == 0, "creator_gone_who_got_what", "got '%s' (want M1N1)", got);
	kill(snd, SIGKILL);
	kill(l2, SIGKILL);
	kill(mq[0], SIGKILL);
	kill(mq[1], SIGKILL);
	kill(-l2, SIGKILL);
	while (wait(NULL) > 0)
		;
}

int main(int argc, char **argv)
{
	t_setup(argc, argv, "kill_group");
	if (geteuid() != 0) {
		printf("skip: needs root\n");
		t_done();
		return T_SKIP;
	}
	t_in_child(scenario);
	t_in_child(creator_gone);
	return t_done();
}
