/* sysv_ipc: SysV shared memory, semaphores and message queues, and their
 * permissions (ipcperms: owner/creator, group, other bits; IPC_SET and
 * IPC_RMID for the owner or creator). Under moat every guest task is one
 * host uid, so the host's checks always passed: a process that dropped root
 * attached root's 0600 segment, read root's queue, set root's semaphores
 * and removed them (uidclass sweep); now the sentry checks the virtual ids
 * (syscalls/sys_ipc.c) and IPC_STAT shows them.
 * The dropped-process cases need root (skipped otherwise); uid 61238. */
#include "t.h"
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/shm.h>

#define U1 61238

union semun {
	int val;
	struct semid_ds *buf;
	unsigned short *array;
};

struct m8 {
	long t;
	char b[8];
};

/* the whitespace-separated columns of id's line in /proc/sysvipc/<f>:
 * their count, or -1 */
static int sysvipc_cols(const char *f, int id, long long *col, int max)
{
	char path[64], line[512];
	snprintf(path, sizeof path, "/proc/sysvipc/%s", f);
	FILE *fp = fopen(path, "r");
	if (!fp)
		return -1;
	int n = -1;
	if (fgets(line, sizeof line, fp)) {
		while (n < 0 && fgets(line, sizeof line, fp)) {
			int k = 0;
			for (char *tok = strtok(line, " \n"); tok && k < max; tok = strtok(NULL, " \n"))
			{
				col[k] = strtoll(tok, NULL, k == 2 ? 8 : 10);
				k++;
			}
			if (k > 1 && col[1] == id)
				n = k;
		}
	}
	fclose(fp);
	return n;
}

static void own_objects(void)
{
	uid_t me = geteuid();
	char n[64];
	/* shm */
	int shm = shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600);
	CHECK(shm >= 0, "shm_create", "%s", strerror(errno));
	struct shmid_ds sd;
	memset(&sd, 0, sizeof sd);
	CHECK(shmctl(shm, IPC_STAT, &sd) == 0 && sd.shm_perm.uid == me && sd.shm_perm.cuid == me &&
	      sd.shm_perm.gid == getegid() && (sd.shm_perm.mode & 0777) == 0600 && sd.shm_segsz == 4096 &&
	      sd.shm_cpid == getpid() && sd.shm_nattch == 0,
	      "shm_stat_own", "%s uid %d cuid %d mode %o cpid %d (%d)", strerror(errno), (int)sd.shm_perm.uid,
	      (int)sd.shm_perm.cuid, (unsigned)sd.shm_perm.mode, (int)sd.shm_cpid, (int)getpid());
	char *p = shmat(shm, NULL, 0);
	CHECK(p != (void *)-1, "shmat_own", "%s", strerror(errno));
	if (p != (void *)-1) {
		strcpy(p, "shared");
		memset(&sd, 0, sizeof sd);
		shmctl(shm, IPC_STAT, &sd);
		CHECK(sd.shm_nattch == 1 && sd.shm_lpid == getpid(), "shm_lpid", "nattch %d lpid %d",
		      (int)sd.shm_nattch, (int)sd.shm_lpid);
	}
	{
		/* /proc/sysvipc/shm: perms, cpid, lpid, uid, gid, cuid, cgid */
		long long col[16];
		int k = sysvipc_cols("shm", shm, col, 16);
		CHECK(k == 16 && (col[2] & 0777) == 0600 && col[4] == getpid() && col[5] == getpid() && col[7] == me &&
		      col[8] == getegid() && col[9] == me && col[10] == getegid(),
		      "shm_proc_sysvipc", "k %d perms %llo cpid %lld lpid %lld uid %lld gid %lld", k, col[2], col[4],
		      col[5], col[7], col[8]);
	}
	sd.shm_perm.mode = 0640;
	CHECK(shmctl(shm, IPC_SET, &sd) == 0, "shm_set_own", "%s", strerror(errno));
	memset(&sd, 0, sizeof sd);
	shmctl(shm, IPC_STAT, &sd);
	CHECK((sd.shm_perm.mode & 0777) == 0640, "shm_set_mode", "%o", (unsigned)sd.shm_perm.mode);
	CHECK(shmctl(shm, IPC_RMID, NULL) == 0, "shm_rmid_own", "%s", strerror(errno));
	if (p != (void *)-1) {
		/* removed while attached: still there by id, SHM_DEST set */
		memset(&sd, 0, sizeof sd);
		CHECK(shmctl(shm, IPC_STAT, &sd) == 0 && (sd.shm_perm.mode & SHM_DEST) &&
		      strcmp(p, "shared") == 0,
		      "shm_removed_attached", "%s mode %o", strerror(errno), (unsigned)sd.shm_perm.mode);
		shmdt(p);
	}
	errno = 0;
	CHECK(shmctl(shm, IPC_STAT, &sd) == -1 && (errno == EINVAL || errno == EIDRM), "shm_gone", "%s",
	      strerror(errno));
	errno = 0;
	CHECK(shmat(0x7ffff0, NULL, 0) == (void *)-1 && errno == EINVAL, "shmat_bad_id", "%s", strerror(errno));
	errno = 0;
	CHECK(shmctl(shm, 999, NULL) == -1 && errno == EINVAL, "shmctl_bad_cmd", "%s", strerror(errno));

	/* a key: EXCL, size, lookup */
	key_t key = 0x6d6f0000 | (getpid() & 0xffff);
	int k = shmget(key, 4096, IPC_CREAT | IPC_EXCL | 0600);
	CHECK(k >= 0, "shm_key_create", "%s", strerror(errno));
	errno = 0;
	CHECK(shmget(key, 4096, IPC_CREAT | IPC_EXCL | 0600) == -1 && errno == EEXIST, "shm_key_excl", "%s",
	      strerror(errno));
	errno = 0;
	CHECK(shmget(key, 8192, 0) == -1 && errno == EINVAL, "shm_key_too_big", "%s", strerror(errno));
	CHECK(shmget(key, 0, 0600) == k && shmget(key, 4096, IPC_CREAT | 0600) == k, "shm_key_lookup", "%s",
	      strerror(errno));
	shmctl(k, IPC_RMID, NULL);
	errno = 0;
	CHECK(shmget(key, 0, 0) == -1 && errno == ENOENT, "shm_key_gone", "%s", strerror(errno));

	/* sem */
	int sem = semget(IPC_PRIVATE, 2, IPC_CREAT | 0600);
	CHECK(sem >= 0, "sem_create", "%s", strerror(errno));
	struct sembuf sb = { 1, 2, 0 };
	CHECK(semop(sem, &sb, 1) == 0, "semop_own", "%s", strerror(errno));
	union semun su = { 0 };
	CHECK(semctl(sem, 1, GETVAL, su) == 2, "semctl_getval_own", "%s", strerror(errno));
	su.val = 5;
	CHECK(semctl(sem, 0, SETVAL, su) == 0 && semctl(sem, 0, GETVAL) == 5, "semctl_setval_own", "%s",
	      strerror(errno));
	struct semid_ds ss;
	memset(&ss, 0, sizeof ss);
	su.buf = &ss;
	CHECK(semctl(sem, 0, IPC_STAT, su) == 0 && ss.sem_perm.uid == me && ss.sem_perm.cuid == me &&
	      (ss.sem_perm.mode & 0777) == 0600 && ss.sem_nsems == 2,
	      "sem_stat_own", "%s uid %d mode %o", strerror(errno), (int)ss.sem_perm.uid,
	      (unsigned)ss.sem_perm.mode);
	{
		long long col[16];
		int nc = sysvipc_cols("sem", sem, col, 16);
		CHECK(nc == 10 && (col[2] & 0777) == 0600 && col[3] == 2 && col[4] == me && col[6] == me,
		      "sem_proc_sysvipc", "k %d perms %llo uid %lld", nc, col[2], col[4]);
	}
	CHECK(semctl(sem, 0, IPC_RMID) == 0, "sem_rmid_own", "%s", strerror(errno));
	errno = 0;
	CHECK(semop(sem, &sb, 1) == -1 && (errno == EINVAL || errno == EIDRM), "sem_gone", "%s",
	      strerror(errno));

	/* msg */
	int msg = msgget(IPC_PRIVATE, IPC_CREAT | 0600);
	CHECK(msg >= 0, "msg_create", "%s", strerror(errno));
	struct m8 m = { 3, "hello" }, r = { 0, "" };
	CHECK(msgsnd(msg, &m, 8, 0) == 0, "msgsnd_own", "%s", strerror(errno));
	struct msqid_ds qd;
	memset(&qd, 0, sizeof qd);
	CHECK(msgctl(msg, IPC_STAT, &qd) == 0 && qd.msg_perm.uid == me && qd.msg_qnum == 1 &&
	      qd.msg_lspid == getpid(),
	      "msg_stat_own", "%s uid %d qnum %d lspid %d", strerror(errno), (int)qd.msg_perm.uid,
	      (int)qd.msg_qnum, (int)qd.msg_lspid);
	{
		long long col[16];
		int nc = sysvipc_cols("msg", msg, col, 16);
		CHECK(nc == 14 && (col[2] & 0777) == 0600 && col[4] == 1 && col[5] == getpid() && col[7] == me &&
		      col[9] == me,
		      "msg_proc_sysvipc", "k %d perms %llo qnum %lld lspid %lld uid %lld", nc, col[2], col[4], col[5],
		      col[7]);
	}
	CHECK(msgrcv(msg, &r, 8, 0, IPC_NOWAIT) == 8 && r.t == 3 && strcmp(r.b, "hello") == 0, "msgrcv_own",
	      "%s", strerror(errno));
	qd.msg_qbytes = qd.msg_qbytes / 2;
	CHECK(msgctl(msg, IPC_SET, &qd) == 0, "msg_set_qbytes_lower", "%s", strerror(errno));
	CHECK(msgctl(msg, IPC_RMID, NULL) == 0, "msg_rmid_own", "%s", strerror(errno));
	snprintf(n, sizeof n, "msg_gone");
	errno = 0;
	CHECK(msgsnd(msg, &m, 8, IPC_NOWAIT) == -1 && (errno == EINVAL || errno == EIDRM), n, "%s",
	      strerror(errno));
}

int main(int argc, char **argv)
{
	t_setup(argc, argv, "sysv_ipc");
	own_objects();
	if (geteuid() != 0)
		return t_done();

	/* root's objects; a process that dropped root tries them */
	int shm = shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600);
	int shmr = shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0644);
	key_t key = 0x6d700000 | (getpid() & 0xffff);
	int shmk = shmget(key, 4096, IPC_CREAT | IPC_EXCL | 0600);
	int sem = semget(IPC_PRIVATE, 1, IPC_CREAT | 0600);
	int semr = semget(IPC_PRIVATE, 1, IPC_CREAT | 0644);
	int msg = msgget(IPC_PRIVATE, IPC_CREAT | 0600);
	struct m8 m = { 1, "secret" };
	msgsnd(msg, &m, 8, 0);
	char *rp = shmat(shm, NULL, 0);
	if (rp != (void *)-1)
		strcpy(rp, "root's");
	int sync[2], go[2];
	pipe(sync);
	pipe(go);
	pid_t c = fork();
	if (c == 0) {
		if (setresgid(U1, U1, U1) || setresuid(U1, U1, U1))
			_exit(3);
		char res[64];
		int i = 0;
		memset(res, 0, sizeof res);
#define TRY(expr, want) res[i++] = (errno = 0, (expr)) ? '+' : (errno == (want) ? '-' : '?')
		TRY(shmat(shm, NULL, 0) != (void *)-1, EACCES);
		TRY(shmat(shm, NULL, SHM_RDONLY) != (void *)-1, EACCES);
		TRY(shmat(shmr, NULL, SHM_RDONLY) != (void *)-1, 0);   /* + : 0644 read */
		TRY(shmat(shmr, NULL, 0) != (void *)-1, EACCES);
		TRY(shmat(shmr, NULL, SHM_RDONLY | SHM_EXEC) != (void *)-1, EACCES); /* 0644: no x */
		TRY(shmget(key, 0, 0600) >= 0, EACCES);
		TRY(shmget(key, 0, 0) == shmk, 0);                     /* + : no bits asked */
		struct shmid_ds sd;
		TRY(shmctl(shm, IPC_STAT, &sd) == 0, EACCES);
		TRY(shmctl(shmr, IPC_STAT, &sd) == 0 && sd.shm_perm.uid == 0, 0); /* + */
		memset(&sd, 0, sizeof sd);
		sd.shm_perm.uid = U1;
		sd.shm_perm.mode = 0666;
		TRY(shmctl(shm, IPC_SET, &sd) == 0, EPERM);
		TRY(shmctl(shm, SHM_LOCK, NULL) == 0, EPERM);
		TRY(shmctl(shmk, IPC_RMID, NULL) == 0, EPERM);
		struct sembuf up = { 0, 1, IPC_NOWAIT }, zero = { 0, 0, IPC_NOWAIT };
		TRY(semop(sem, &up, 1) == 0, EACCES);
		TRY(semop(sem, &zero, 1) == 0, EACCES);
		TRY(semctl(sem, 0, GETVAL) >= 0, EACCES);
		union semun su = { .val = 7 };
		TRY(semctl(sem, 0, SETVAL, su) == 0, EACCES);
		TRY(semctl(sem, 0, IPC_RMID) == 0, EPERM);
		TRY(semop(semr, &zero, 1) == 0, 0);                   /* + : read only */
		TRY(semop(semr, &up, 1) == 0, EACCES);
		TRY(semctl(semr, 0, GETVAL) == 0, 0);                 /* + */
		TRY(semctl(semr, 0, SETVAL, su) == 0, EACCES);
		struct m8 r = { 0, "" };
		TRY(msgrcv(msg, &r, 8, 0, IPC_NOWAIT) >= 0, EACCES);
		TRY(msgsnd(msg, &m, 8, IPC_NOWAIT) == 0, EACCES);
		struct msqid_ds qd;
		TRY(msgctl(msg, IPC_STAT, &qd) == 0, EACCES);
		TRY(msgctl(msg, IPC_RMID, NULL) == 0, EPERM);
		/* its own segment shows its ids */
		int own = shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600);
		memset(&sd, 0, sizeof sd);
		TRY(own >= 0 && shmctl(own, IPC_STAT, &sd) == 0 && sd.shm_perm.uid == U1 && sd.shm_perm.cuid == U1 &&
			    sd.shm_perm.gid == U1 && sd.shm_cpid == getpid(),
		    0);
		res[i] = 0;
		write(sync[1], res, sizeof res);
		write(sync[1], &own, sizeof own);
		char g;
		read(go[0], &g, 1); /* root looks at it (root may not remove it: CAP_SYS_ADMIN) */
		shmctl(own, IPC_RMID, NULL);
		_exit(0);
	}
	char res[64] = "";
	int st = 0, own = -1;
	read(sync[0], res, sizeof res);
	read(sync[0], &own, sizeof own);
	{
		long long col[16];
		int k = sysvipc_cols("shm", own, col, 16);
		CHECK(k == 16 && col[4] == c && col[7] == U1 && col[8] == U1 && col[9] == U1,
		      "dropped_proc_sysvipc", "k %d cpid %lld (%d) uid %lld gid %lld cuid %lld", k, col[4], (int)c,
		      col[7], col[8], col[9]);
	}
	write(go[1], "g", 1);
	waitpid(c, &st, 0);
	close(sync[0]);
	close(sync[1]);
	close(go[0]);
	close(go[1]);
	const char *want = "--+---+-+--------+-+-----+";
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0 && strcmp(res, want) == 0, "dropped_rules",
	      "status %#x got %s want %s", st, res, want);
	/* nothing of root's changed */
	struct shmid_ds sd;
	memset(&sd, 0, sizeof sd);
	CHECK(shmctl(shm, IPC_STAT, &sd) == 0 && sd.shm_perm.uid == 0 && (sd.shm_perm.mode & 0777) == 0600 &&
	      sd.shm_nattch == 1 && rp != (void *)-1 && strcmp(rp, "root's") == 0,
	      "dropped_root_shm_intact", "%s uid %d mode %o nattch %d", strerror(errno), (int)sd.shm_perm.uid,
	      (unsigned)sd.shm_perm.mode, (int)sd.shm_nattch);
	CHECK(shmget(key, 0, 0) == shmk, "dropped_root_key_intact", "%s", strerror(errno));
	CHECK(semctl(sem, 0, GETVAL) == 0 && semctl(semr, 0, GETVAL) == 0, "dropped_root_sem_intact", "%s",
	      strerror(errno));
	struct msqid_ds qd;
	memset(&qd, 0, sizeof qd);
	CHECK(msgctl(msg, IPC_STAT, &qd) == 0 && qd.msg_qnum == 1, "dropped_root_msg_intact", "%s qnum %d",
	      strerror(errno), (int)qd.msg_qnum);
	/* root opens its segment to others with IPC_SET: now the dropped one may */
	sd.shm_perm.mode = 0666;
	shmctl(shm, IPC_SET, &sd);
	c = fork();
	if (c == 0) {
		if (setresgid(U1, U1, U1) || setresuid(U1, U1, U1))
			_exit(3);
		char *q = shmat(shm, NULL, 0);
		_exit(q != (void *)-1 && strcmp(q, "root's") == 0 ? 0 : 4);
	}
	waitpid(c, &st, 0);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "dropped_after_ipc_set", "status %#x", st);
	if (rp != (void *)-1)
		shmdt(rp);
	shmctl(shm, IPC_RMID, NULL);
	shmctl(shmr, IPC_RMID, NULL);
	shmctl(shmk, IPC_RMID, NULL);
	semctl(sem, 0, IPC_RMID);
	semctl(semr, 0, IPC_RMID);
	msgctl(msg, IPC_RMID, NULL);
	return t_done();
}
