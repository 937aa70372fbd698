/* open(O_CREAT) while another thread unlinks the same name: Linux's open
 * never fails with ENOENT then (the name is made again); nor may moat's
 * (a walk that saw the file, then an open that finds it gone). Also the
 * reverse: O_CREAT|O_EXCL racing with unlink gives only EEXIST or success. */
#include "t.h"
#include <pthread.h>

static volatile int stop;

static void *unlinker(void *arg)
{
	(void)arg;
	while (!stop)
		unlink("f");
	return NULL;
}

int main(int argc, char **argv)
{
	t_setup(argc, argv, "creat_race");
	pthread_t th;
	int enoent = 0, other = 0, excl_bad = 0, n = 3000;
	pthread_create(&th, NULL, unlinker, NULL);
	for (int i = 0; i < n; i++) {
		int fd = open("f", O_CREAT | O_WRONLY, 0644);
		if (fd >= 0)
			close(fd);
		else if (errno == ENOENT)
			enoent++;
		else
			other++;
		fd = open("f", O_CREAT | O_EXCL | O_WRONLY, 0644);
		if (fd >= 0)
			close(fd);
		else if (errno != EEXIST)
			excl_bad++;
	}
	stop = 1;
	pthread_join(th, NULL);
	unlink("f");
	CHECK(enoent == 0 && other == 0, "creat_while_unlinked", "%d ENOENT, %d other errors of %d opens",
	      enoent, other, n);
	CHECK(excl_bad == 0, "creat_excl_while_unlinked", "%d errors other than EEXIST", excl_bad);
	return t_done();
}
