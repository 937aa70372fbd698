/* Isolation probe (tests/integration/isolation_race.sh fs_unshare_vs_proc_cwd):
 * unshare(CLONE_FS) against a reader of another thread's /proc cwd.
 * A thread C takes an fs_ctx of its own, enters a directory and renames it
 * away (the reader's slow path: the cwd's name no longer leads to it), then
 * a thread D sharing C's fs_ctx unshares after a random delay and C exits:
 * the fs_ctx the reader found on D is freed. Meanwhile the main process
 * reads /proc/<pid>/task/<tid>/cwd of every thread. The sentry must stay up
 * (with an ASan moat: no report; before red-team round 8 a heap-use-after-
 * free in vfs_cwd_node).
 * usage: race_fs_unshare DIR SECONDS; prints "ok race_fs_unshare reads N". */
#include <dirent.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "race.h"

static const char *dir;

static void *thr_d(void *a)
{
	usleep((unsigned)(long)a);
	unshare(CLONE_FS);
	return NULL;
}

static void *thr_c(void *a)
{
	long i = (long)a;
	char x[4096], y[4096];
	pthread_t d;

	unshare(CLONE_FS);
	snprintf(x, sizeof x, "%s/x%ld", dir, i);
	snprintf(y, sizeof y, "%s/y%ld", dir, i);
	mkdir(x, 0755);
	if (chdir(x) == 0)
		rename(x, y);
	pthread_create(&d, NULL, thr_d, (void *)(long)(rand() % 400));
	pthread_join(d, NULL);
	rmdir(y);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: race_fs_unshare DIR SECONDS\n");
		return 2;
	}
	dir = argv[1];
	int secs = atoi(argv[2]);
	pid_t p = fork();
	if (p == 0) {
		for (long i = 0;; i++) {
			pthread_t c;
			pthread_create(&c, NULL, thr_c, (void *)i);
			pthread_join(c, NULL);
		}
	}
	double end = race_now() + secs;
	long n = 0;
	char path[64], buf[4096];
	while (race_now() < end) {
		snprintf(path, sizeof path, "/proc/%d/task", (int)p);
		DIR *d = opendir(path);
		if (!d) {
			printf("FAIL race_fs_unshare: opendir %s\n", path);
			return 1;
		}
		struct dirent *e;
		while ((e = readdir(d))) {
			if (e->d_name[0] == '.')
				continue;
			snprintf(path, sizeof path, "/proc/%d/task/%.20s/cwd", (int)p, e->d_name);
			for (int k = 0; k < 20; k++, n++)
				if (readlink(path, buf, sizeof buf) < 0)
					break;
		}
		closedir(d);
	}
	kill(p, SIGKILL);
	waitpid(p, NULL, 0);
	printf("ok race_fs_unshare reads %ld\n", n);
	return 0;
}
