/* A name looked up by one process while another creates and removes it:
 * the creator always sees its own create and its own unlink. Linux's dcache
 * never lets a lookup that raced a create hide the new file (access ENOENT,
 * unlink ENOENT), nor one that raced an unlink bring the old file back
 * (access 0). moat's dentry cache once did: a lookup in flight cached its
 * "absent" after the create's invalidation, and SQLite's unlink of its
 * journal failed (IOERR_DELETE), leaving a journal that another process then
 * rolled back as hot (lost transactions). */
#include "t.h"
#include <signal.h>

int main(int argc, char **argv)
{
	t_setup(argc, argv, "lookup_race");
	int n = 2000, hidden = 0, unl = 0, back = 0, other = 0;
	pid_t kid = fork();
	if (kid < 0)
		return 1;
	if (kid == 0) {
		/* the looker: access() and stat() the name, as fast as it can */
		struct stat st;
		for (;;) {
			access("j", F_OK);
			stat("j", &st);
		}
	}
	for (int i = 0; i < n; i++) {
		int fd = open("j", O_CREAT | O_RDWR, 0644);
		if (fd < 0) {
			other++;
			continue;
		}
		close(fd);
		if (access("j", F_OK) < 0)
			hidden++;
		if (unlink("j") < 0) {
			if (errno == ENOENT)
				unl++;
			else
				other++;
			unlink("j");
		}
		if (access("j", F_OK) == 0)
			back++;
	}
	kill(kid, SIGKILL);
	waitpid(kid, NULL, 0);
	unlink("j");
	CHECK(hidden == 0, "lookup_race_create_seen", "%d of %d creates hidden from access()", hidden, n);
	CHECK(unl == 0, "lookup_race_unlink_own_file", "%d of %d unlinks of a file just made: ENOENT", unl,
	      n);
	CHECK(back == 0, "lookup_race_unlink_seen", "%d of %d unlinked names still there", back, n);
	CHECK(other == 0, "lookup_race_no_other_errors", "%d other errors", other);
	return t_done();
}
