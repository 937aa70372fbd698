/* probe_made_race DIR VICTIM KIND SECONDS: in DIR (an rw bind), VICTIM is
 * another user's 0600 file or 0700 directory this process may not read.
 * One thread renames VICTIM onto DIR/x and back, again and again; the main
 * thread makes x (KIND: symlink, fifo or dir), removes it, and tries to open
 * VICTIM (or, for a directory, VICTIM/inner). A new host file the guest makes
 * gets a "made" entry in moat's virtual metadata naming its creator; the
 * entry must key on what the gofer made, never on a file renamed onto the
 * name meanwhile (a red-team finding: the victim became the guest's own).
 * Prints "held N" (never opened: exit 0) or "OPENED ..." (exit 1). Run as
 * a non-root guest id (--user 1000) or as guest root (--user 0). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "race.h"

static char vic[512], tmp[512], target[600];
static volatile int stop;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

static void *renamer(void *a)
{
	(void)a;
	while (!stop) {
		pthread_mutex_lock(&mu);
		rename(vic, tmp);
		rename(tmp, vic);
		pthread_mutex_unlock(&mu);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 5)
		return 2;
	snprintf(vic, sizeof vic, "%s/%s", argv[1], argv[2]);
	snprintf(tmp, sizeof tmp, "%s/x", argv[1]);
	const char *kind = argv[3];
	int dir = !strcmp(kind, "dir");
	snprintf(target, sizeof target, dir ? "%s/inner" : "%s", vic);
	int fd = open(target, O_RDONLY);
	if (fd >= 0) {
		printf("OPENED at once (the victim is readable: a broken set-up)\n");
		return 1;
	}
	pthread_t th;
	pthread_create(&th, NULL, renamer, NULL);
	double end = race_now() + atoi(argv[4]);
	long it = 0;
	while (race_now() < end) {
		it++;
		if (!strcmp(kind, "symlink"))
			(void)symlink("zz", tmp);
		else if (!strcmp(kind, "fifo"))
			(void)mknod(tmp, S_IFIFO | 0600, 0);
		else
			(void)mkdir(tmp, 0700);
		struct stat st;
		pthread_mutex_lock(&mu);
		if (lstat(tmp, &st) == 0 && !S_ISREG(st.st_mode)) {
			if (S_ISDIR(st.st_mode))
				rmdir(tmp); /* only an empty one: ours */
			else
				unlink(tmp);
		}
		pthread_mutex_unlock(&mu);
		int f = open(target, O_RDONLY | O_NONBLOCK);
		if (f >= 0) {
			stop = 1;
			pthread_join(th, NULL);
			printf("OPENED the victim after %ld rounds\n", it);
			rename(tmp, vic);
			return 1;
		}
	}
	stop = 1;
	pthread_join(th, NULL);
	rename(tmp, vic);
	printf("held %ld\n", it > 0 ? 1L : 0L);
	return 0;
}
