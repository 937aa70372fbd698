/* Guest-triggered warnings of moat's own on the caller's stderr (red team
 * 54): N children each drop root (if root), install a seccomp filter answering
 * close() with RET_ERRNO(0) and exec an exec-only copy of /bin/true, which
 * the sentry kills (the loader's fd left open, red team 38) with a line on
 * moat's stderr. Prints "killed K of N". Run only under moat. */
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 10;
	const char *dst = argc > 2 ? argv[2] : "/tmp/wf_exec_only";
	int in = open("/bin/true", O_RDONLY), out = open(dst, O_CREAT | O_TRUNC | O_WRONLY, 0700);
	if (in < 0 || out < 0) {
		perror("copy");
		return 2;
	}
	char buf[65536];
	ssize_t r;
	while ((r = read(in, buf, sizeof buf)) > 0)
		if (write(out, buf, (size_t)r) != r)
			return 2;
	close(in);
	close(out);
	if (chmod(dst, 0111) < 0)
		return 2;
	int killed = 0;
	for (int i = 0; i < n; i++) {
		pid_t p = fork();
		if (p == 0) {
			if (getuid() == 0 && (setgid(65534) || setuid(65534))) /* root reads 0111 */
				_exit(3);
			struct sock_filter f[] = {
				BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
				BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_close, 0, 1),
				BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | 0),
				BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
			};
			struct sock_fprog prog = { sizeof f / sizeof f[0], f };
			if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog))
				_exit(4);
			char *av[] = { (char *)dst, NULL };
			execv(dst, av);
			_exit(5);
		}
		int st;
		if (p < 0 || waitpid(p, &st, 0) < 0)
			break;
		if (WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL)
			killed++;
		else if (i == 0)
			fprintf(stderr, "child status %#x\n", st);
	}
	printf("killed %d of %d\n", killed, n);
	return 0;
}
