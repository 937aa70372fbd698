/* getrlimit/setrlimit/prlimit64 of RLIMIT_CORE: what a process sets it reads
 * back, its threads share it, a child inherits it, exec keeps it, another
 * process reads and sets it with prlimit. (Under moat the value is the
 * process's virtual one: the real one stays 1 byte, so no core dump leaves
 * the sandbox; tests/syscalls/race_core.c checks that side.) */
#include "t.h"
#include <pthread.h>
#include <sys/resource.h>

static struct rlimit thread_saw;
static void *reader(void *arg)
{
	(void)arg;
	getrlimit(RLIMIT_CORE, &thread_saw);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc > 2 && !strcmp(argv[1], "--exec-check")) {
		struct rlimit r;
		getrlimit(RLIMIT_CORE, &r);
		return r.rlim_cur == 4096 && r.rlim_max == (rlim_t)strtoull(argv[2], NULL, 10) ? 0 : 1;
	}
	t_setup(argc, argv, "rlimit_core");
	struct rlimit orig, r;
	EXPECT_OK(getrlimit(RLIMIT_CORE, &orig), "getrlimit");
	if (orig.rlim_max < 8192) {
		printf("ok skipped: hard RLIMIT_CORE below 8192\n");
		return t_done();
	}
	r.rlim_cur = 4096;
	r.rlim_max = orig.rlim_max;
	EXPECT_OK(setrlimit(RLIMIT_CORE, &r), "setrlimit_soft");
	getrlimit(RLIMIT_CORE, &r);
	CHECK(r.rlim_cur == 4096 && r.rlim_max == orig.rlim_max, "read_back", "%llu %llu",
	      (unsigned long long)r.rlim_cur, (unsigned long long)r.rlim_max);
	struct rlimit bad = { 8192, 4096 };
	EXPECT_ERR(setrlimit(RLIMIT_CORE, &bad), EINVAL, "soft_above_hard");
	EXPECT_ERR(setrlimit(RLIMIT_CORE, (struct rlimit *)8), EFAULT, "setrlimit_efault");
	EXPECT_ERR(getrlimit(RLIMIT_CORE, (struct rlimit *)8), EFAULT, "getrlimit_efault");

	pthread_t th;
	pthread_create(&th, NULL, reader, NULL);
	pthread_join(th, NULL);
	CHECK(thread_saw.rlim_cur == 4096, "thread_shares", "%llu", (unsigned long long)thread_saw.rlim_cur);

	struct rlimit old, nw = { 0, orig.rlim_max };
	EXPECT_OK(prlimit(0, RLIMIT_CORE, &nw, &old), "prlimit_self");
	CHECK(old.rlim_cur == 4096, "prlimit_self_old", "%llu", (unsigned long long)old.rlim_cur);
	getrlimit(RLIMIT_CORE, &r);
	CHECK(r.rlim_cur == 0, "prlimit_self_set", "%llu", (unsigned long long)r.rlim_cur);
	r.rlim_cur = 4096;
	setrlimit(RLIMIT_CORE, &r);

	/* a child inherits it; its parent reads and changes it */
	int go[2], done[2];
	pipe(go);
	pipe(done);
	pid_t pid = fork();
	if (pid == 0) {
		char c;
		struct rlimit cr;
		getrlimit(RLIMIT_CORE, &cr);
		int inherited = cr.rlim_cur == 4096;
		write(done[1], "x", 1);
		read(go[0], &c, 1);
		getrlimit(RLIMIT_CORE, &cr);
		_exit(!inherited ? 1 : cr.rlim_cur != 2048 ? 2 : 0);
	}
	char c;
	read(done[0], &c, 1);
	EXPECT_OK(prlimit(pid, RLIMIT_CORE, NULL, &old), "prlimit_other_read");
	CHECK(old.rlim_cur == 4096, "prlimit_other_old", "%llu", (unsigned long long)old.rlim_cur);
	nw.rlim_cur = 2048;
	EXPECT_OK(prlimit(pid, RLIMIT_CORE, &nw, NULL), "prlimit_other_set");
	write(go[1], "x", 1);
	int st;
	waitpid(pid, &st, 0);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child_inherits_and_sees_set", "status %x", st);

	/* exec keeps it */
	pid = fork();
	if (pid == 0) {
		char mx[32];
		snprintf(mx, sizeof mx, "%llu", (unsigned long long)orig.rlim_max);
		execl(t_self, t_self, "--exec-check", mx, (char *)NULL);
		_exit(3);
	}
	waitpid(pid, &st, 0);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "exec_keeps", "status %x", st);
	setrlimit(RLIMIT_CORE, &orig);
	return t_done();
}
