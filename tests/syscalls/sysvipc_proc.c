/* /proc/sysvipc/{shm,sem,msg} list the IPC namespace's objects: a segment,
 * a semaphore set and a queue made here are listed by id (LTP semget05 and
 * shmget03 count the existing ones there), and the kernel.shmmni/sem/msgmni
 * limits read. Under moat the sentry reads them in the guest's IPC
 * namespace (before: ENOENT, and the limits were the host namespace's). */
#include "t.h"
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/shm.h>

/* is id listed in /proc/sysvipc/<f> (second column)? */
static int listed(const char *f, int id)
{
	char path[64], line[512];
	snprintf(path, sizeof path, "/proc/sysvipc/%s", f);
	FILE *fp = fopen(path, "r");
	if (!fp)
		return -errno;
	int found = 0;
	if (!fgets(line, sizeof line, fp)) /* the header */
		found = -EIO;
	while (!found && fgets(line, sizeof line, fp)) {
		long key, lid;
		if (sscanf(line, "%ld %ld", &key, &lid) == 2 && lid == id)
			found = 1;
	}
	fclose(fp);
	return found;
}

static long first_num(const char *path)
{
	char b[128] = "";
	if (t_read_file(path, b, sizeof b) <= 0)
		return -1;
	return strtol(b, NULL, 10);
}

int main(int argc, char **argv)
{
	t_setup(argc, argv, "sysvipc_proc");
	int shm = shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600);
	int sem = semget(IPC_PRIVATE, 1, IPC_CREAT | 0600);
	int msg = msgget(IPC_PRIVATE, IPC_CREAT | 0600);
	if (shm < 0 || sem < 0 || msg < 0) {
		t_fail("ipc_create", "shm %d sem %d msg %d: %s", shm, sem, msg, strerror(errno));
		return t_done();
	}
	int r = listed("shm", shm);
	CHECK(r == 1, "proc_sysvipc_shm_lists_segment", "%d (%s)", r, r < 0 ? strerror(-r) : "not listed");
	r = listed("sem", sem);
	CHECK(r == 1, "proc_sysvipc_sem_lists_set", "%d (%s)", r, r < 0 ? strerror(-r) : "not listed");
	r = listed("msg", msg);
	CHECK(r == 1, "proc_sysvipc_msg_lists_queue", "%d (%s)", r, r < 0 ? strerror(-r) : "not listed");
	shmctl(shm, IPC_RMID, NULL);
	semctl(sem, 0, IPC_RMID);
	msgctl(msg, IPC_RMID, NULL);
	r = listed("shm", shm);
	CHECK(r == 0, "proc_sysvipc_shm_removed", "%d", r);
	CHECK(first_num("/proc/sys/kernel/shmmni") > 0 && first_num("/proc/sys/kernel/sem") > 0 &&
		      first_num("/proc/sys/kernel/msgmni") > 0,
	      "ipc_limits_read", "shmmni %ld sem %ld msgmni %ld", first_num("/proc/sys/kernel/shmmni"),
	      first_num("/proc/sys/kernel/sem"), first_num("/proc/sys/kernel/msgmni"));
	return t_done();
}
