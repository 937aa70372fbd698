/*
 * race_watch: inotify_add_watch of a file by name while another thread
 * renames a file the caller may not read onto that name and back. NOT a
 * differential test: an isolation probe (tests/integration/isolation_race.sh).
 *
 *   race_watch DIR [SECONDS]   (run as root: DIR is made 0777 and holds
 *                               root's 0600 "secret"; the work runs as
 *                               1000:1000)
 *
 * The dropped process watches DIR/mine (its own file) over and over while a
 * thread swaps DIR/secret in: mine -> tmp, secret -> mine, mine -> secret,
 * tmp -> mine. Linux checks permission and takes the inode in one lookup,
 * so every watch is on "mine" (one wd) or EACCES. A sandbox that checks one
 * object and then watches the name again (red team round 7) hands out a
 * second wd: a watch on root's 0600 file, whose opens and writes it then
 * sees. Prints "ok race_watch ..." (exit 0) or "FAIL race_watch: ..."
 * (exit 1).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "race.h"

static volatile int stop;
static char p_mine[4096], p_tmp[4096], p_secret[4096];

static void *swapper(void *a)
{
	(void)a;
	while (!stop) {
		rename(p_mine, p_tmp);
		rename(p_secret, p_mine);
		rename(p_mine, p_secret);
		rename(p_tmp, p_mine);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: race_watch DIR [SECONDS]\n");
		return 2;
	}
	int secs = argc > 2 ? atoi(argv[2]) : 2;
	setvbuf(stdout, NULL, _IONBF, 0); /* the child ends with _exit */
	snprintf(p_mine, sizeof p_mine, "%s/mine", argv[1]);
	snprintf(p_tmp, sizeof p_tmp, "%s/tmp", argv[1]);
	snprintf(p_secret, sizeof p_secret, "%s/secret", argv[1]);
	mkdir(argv[1], 0777);
	chmod(argv[1], 0777);
	int fd = open(p_secret, O_CREAT | O_WRONLY | O_TRUNC, 0600);
	if (fd < 0 || fchmod(fd, 0600) < 0) {
		printf("FAIL race_watch: setup %s: %s\n", p_secret, strerror(errno));
		return 1;
	}
	close(fd);
	pid_t p = fork();
	if (p == 0) {
		if (setresgid(1000, 1000, 1000) || setresuid(1000, 1000, 1000)) {
			printf("FAIL race_watch: setresuid: %s\n", strerror(errno));
			_exit(1);
		}
		fd = open(p_mine, O_CREAT | O_WRONLY, 0644);
		if (fd < 0) {
			printf("FAIL race_watch: create %s: %s\n", p_mine, strerror(errno));
			_exit(1);
		}
		close(fd);
		int in = inotify_init1(0);
		if (inotify_add_watch(in, p_secret, IN_ALL_EVENTS) >= 0) {
			printf("FAIL race_watch: root's 0600 file watched by name (no race needed)\n");
			_exit(1);
		}
		pthread_t th;
		pthread_create(&th, NULL, swapper, NULL);
		int first = -1, other = -1, ok = 0;
		double end = race_now() + secs;
		while (race_now() < end && other < 0) {
			int w = inotify_add_watch(in, p_mine, IN_OPEN | IN_MODIFY);
			if (w < 0)
				continue;
			ok++;
			if (first < 0)
				first = w;
			else if (w != first)
				other = w;
		}
		stop = 1;
		pthread_join(th, NULL);
		if (other >= 0) {
			printf("FAIL race_watch: a second watch (wd %d besides %d): root's 0600 file\n", other, first);
			_exit(1);
		}
		if (!ok) {
			printf("FAIL race_watch: no watch of its own file succeeded\n");
			_exit(1);
		}
		printf("ok race_watch %d watches, one object\n", ok);
		_exit(0);
	}
	int st;
	waitpid(p, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}
