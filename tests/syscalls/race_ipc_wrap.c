/* race_ipc_wrap: a process that dropped root makes and removes message
 * queues until Linux's ids wrap (4,194,304 creates with few in use: the
 * index cycles through 64, the sequence through 65,536), then root makes
 * one. Natively ids are reused and root's msgget works. moat hands out no
 * id on which a call was let run within the last seconds (sys_ipc.c
 * ipc_get); before red-team 12 it handed out no id twice at all, and every
 * msgget of the sandbox was ENOSPC from the wrap on (a dropped process
 * denied root its SysV objects in under 3 minutes).
 * usage: race_ipc_wrap [MAX_CREATES]; prints "wrapped N root ok ID" or
 * "root ENOSPC..." (uid 61242 for the dropped process; needs root inside). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long max = argc > 1 ? atol(argv[1]) : 4500000;
	int p[2];
	if (pipe(p))
		return 1;
	pid_t c = fork();
	if (c == 0) {
		if (setgid(61242) || setuid(61242))
			_exit(2);
		long i;
		int first = msgget(IPC_PRIVATE, 0600), wrapped = 0;
		msgctl(first, IPC_RMID, NULL);
		for (i = 0; i < max; i++) {
			int id = msgget(IPC_PRIVATE, 0600);
			if (id < 0)
				break;
			msgctl(id, IPC_RMID, NULL);
			if (id <= first) {
				wrapped = 1;
				break;
			}
		}
		dprintf(p[1], "%s %ld", wrapped ? "wrapped" : i < max ? "failed" : "not-wrapped", i);
		_exit(0);
	}
	close(p[1]);
	char buf[64] = "";
	ssize_t n = read(p[0], buf, sizeof buf - 1);
	buf[n > 0 ? n : 0] = 0;
	waitpid(c, NULL, 0);
	/* the dropped loop ends at the first reused id or at the first error */
	int id = msgget(IPC_PRIVATE, 0600);
	if (id >= 0) {
		msgctl(id, IPC_RMID, NULL);
		printf("%s root ok\n", buf);
	} else {
		printf("%s root %s\n", buf, strerror(errno));
	}
	return 0;
}
