/* drop_rules: what Linux takes from a process that dropped root (red team
 * 43, identities):
 *  - sendmsg of SCM_CREDENTIALS it may not claim (net/core/scm.c
 *    scm_check_creds: pid its own unless CAP_SYS_ADMIN, uid/gid its real,
 *    effective or saved one unless CAP_SETUID/CAP_SETGID) is EPERM; moat
 *    let the native check (every guest task one host uid) pass uid 0;
 *  - truncate(path) and an O_TRUNC open by a writer without CAP_FSETID
 *    clear S_ISUID, and S_ISGID when the group may execute or the writer
 *    is not in the file's group (setattr_should_drop_suidgid); root keeps
 *    them; moat kept a host file's virtual bits;
 * Cases in the scratch (under moat an rw bind: host files, virtual set-id
 * bits) and under /tmp (the sandbox's own tmpfs). Needs root (skips
 * otherwise); the dropped process is uid/gid 61243. */
#include "t.h"
#include <grp.h>
#include <stdlib.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>

#define U1 61243

static mode_t mode_of(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 ? st.st_mode & 07777 : (mode_t)-1;
}

static void mk(const char *dir, const char *f, mode_t m, gid_t g)
{
	char p[PATH_MAX + 32];
	snprintf(p, sizeof p, "%s/%s", dir, f);
	if (t_write_file(p, "data", 0666) != 0 || chown(p, 0, g) != 0 || chmod(p, m) != 0)
		DIE("set up %s", p);
}

static int drop(void)
{
	return setgroups(0, NULL) == 0 && setresgid(U1, U1, U1) == 0 && setresuid(U1, U1, U1) == 0 ? 0 : -1;
}

/* room for one SCM_CREDENTIALS message */
union creds_buf {
	char b[CMSG_SPACE(sizeof(struct ucred))];
	struct cmsghdr align;
};

/* mh's control data: cb, holding the claim pid, uid, gid */
static void put_creds(struct msghdr *mh, union creds_buf *cb, pid_t pid, uid_t uid, gid_t gid)
{
	struct ucred u = { pid, uid, gid };
	memset(cb, 0, sizeof *cb);
	mh->msg_control = cb->b;
	mh->msg_controllen = sizeof cb->b;
	struct cmsghdr *cm = CMSG_FIRSTHDR(mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_CREDENTIALS;
	cm->cmsg_len = CMSG_LEN(sizeof u);
	memcpy(CMSG_DATA(cm), &u, sizeof u);
}

static long send_creds(int fd, pid_t pid, uid_t uid, gid_t gid)
{
	union creds_buf cb;
	struct iovec iv = { "x", 1 };
	struct msghdr mh = { .msg_iov = &iv, .msg_iovlen = 1 };
	put_creds(&mh, &cb, pid, uid, gid);
	return sendmsg(fd, &mh, MSG_DONTWAIT);
}

/* the claim after PAD bytes of control data the kernel passes over (a
 * cmsg of another level) */
static long send_creds_after(int fd, size_t pad, uid_t uid, gid_t gid)
{
	size_t tot = pad + CMSG_SPACE(sizeof(struct ucred));
	unsigned char *cb = calloc(1, tot);
	if (!cb)
		DIE("calloc");
	struct iovec iv = { "z", 1 };
	struct msghdr mh = { .msg_iov = &iv, .msg_iovlen = 1, .msg_control = cb, .msg_controllen = tot };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_len = pad;
	cm->cmsg_level = 0;
	cm->cmsg_type = 1;
	cm = CMSG_NXTHDR(&mh, cm);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_CREDENTIALS;
	cm->cmsg_len = CMSG_LEN(sizeof(struct ucred));
	struct ucred u = { getpid(), uid, gid };
	memcpy(CMSG_DATA(cm), &u, sizeof u);
	long r = sendmsg(fd, &mh, MSG_DONTWAIT);
	int e = errno;
	free(cb);
	errno = e;
	return r;
}

/* sendmmsg: scm_send per message (____sys_sendmsg); the batch ends at the
 * first refused one (1 sent, or its error when it is the first) */
static long sendmmsg_creds(int fd, pid_t pid, uid_t uid, gid_t gid, int first_plain)
{
	union creds_buf cb;
	struct iovec iv = { "y", 1 };
	struct mmsghdr mv[2];
	memset(mv, 0, sizeof mv);
	for (int i = 0; i < 2; i++) {
		mv[i].msg_hdr.msg_iov = &iv;
		mv[i].msg_hdr.msg_iovlen = 1;
	}
	put_creds(&mv[first_plain ? 1 : 0].msg_hdr, &cb, pid, uid, gid);
	return sendmmsg(fd, mv, first_plain ? 2 : 1, MSG_DONTWAIT);
}

static void scm_cases(void)
{
	int sp[2];
	if (socketpair(AF_UNIX, SOCK_DGRAM, 0, sp) != 0)
		DIE("socketpair");
	EXPECT_ERR(send_creds(sp[0], getpid(), 0, U1), EPERM, "scm_dropped_claims_uid0");
	EXPECT_ERR(send_creds(sp[0], getpid(), U1, 0), EPERM, "scm_dropped_claims_gid0");
	EXPECT_ERR(send_creds(sp[0], getppid(), U1, U1), EPERM, "scm_dropped_claims_parent_pid");
	/* its own ids and pid it may claim (Linux sends; moat's kernel saw an
	 * id its namespace does not map: EINVAL) */
	CHECK(send_creds(sp[0], getpid(), U1, U1) == 1, "scm_dropped_claims_own", "%s", strerror(errno));
	char x;
	CHECK(recv(sp[1], &x, 1, MSG_DONTWAIT) == 1 && x == 'x', "scm_dropped_own_received", "%s", strerror(errno));
	/* on a stream socket too (unix_stream_sendmsg's scm_send) */
	int ss[2];
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, ss) != 0)
		DIE("socketpair");
	EXPECT_ERR(send_creds(ss[0], getpid(), 0, 0), EPERM, "scm_stream_dropped_claims_root");
	/* after more than 4 KiB of other control data too (red team 48:
	 * only the first 4 KiB were read, the claim went to the kernel) */
	EXPECT_ERR(send_creds_after(sp[0], 8192, 0, 0), EPERM, "scm_dropped_claims_root_after_8k");
	EXPECT_ERR(send_creds_after(sp[0], 64, 0, 0), EPERM, "scm_dropped_claims_root_after_64");
	/* sendmmsg too (red team 48: not checked, the native check let the
	 * claim of uid 0 go) */
	EXPECT_ERR(sendmmsg_creds(sp[0], getpid(), 0, U1, 0), EPERM, "scm_sendmmsg_dropped_claims_uid0");
	EXPECT_ERR(sendmmsg_creds(sp[0], getpid(), U1, 0, 0), EPERM, "scm_sendmmsg_dropped_claims_gid0");
	long k = sendmmsg_creds(sp[0], getpid(), 0, 0, 1);
	CHECK(k == 1, "scm_sendmmsg_second_refused_ends_batch", "%ld %s", k, strerror(errno));
	while (recv(sp[1], &x, 1, MSG_DONTWAIT) == 1)
		;
	k = sendmmsg_creds(sp[0], getpid(), U1, U1, 0);
	CHECK(k == 1, "scm_sendmmsg_dropped_claims_own", "%ld %s", k, strerror(errno));
	CHECK(recv(sp[1], &x, 1, MSG_DONTWAIT) == 1 && x == 'y', "scm_sendmmsg_own_received", "%s", strerror(errno));
	EXPECT_ERR(sendmmsg_creds(ss[0], getpid(), 0, 0, 0), EPERM, "scm_sendmmsg_stream_dropped_claims_root");
	close(sp[0]);
	close(sp[1]);
	close(ss[0]);
	close(ss[1]);
}

static void trunc_cases(const char *where, const char *dir)
{
	char p[PATH_MAX + 32], name[128];
#define AT(f) (snprintf(p, sizeof p, "%s/%s", dir, f), p)
#define NAME(x) (snprintf(name, sizeof name, "%s_%s", where, x), name)
	EXPECT_OK(truncate(AT("t_suid"), 1), NAME("truncate_suid"));
	CHECK(mode_of(AT("t_suid")) == 0777, NAME("truncate_clears_suid_sgidx"), "mode %o", mode_of(p));
	EXPECT_OK(truncate(AT("t_sgid"), 1), NAME("truncate_sgid"));
	CHECK(mode_of(AT("t_sgid")) == 0666, NAME("truncate_nonmember_clears_sgid"), "mode %o", mode_of(p));
	EXPECT_OK(truncate(AT("t_sgid_member"), 1), NAME("truncate_sgid_member"));
	CHECK(mode_of(AT("t_sgid_member")) == 02666, NAME("truncate_member_keeps_sgid"), "mode %o", mode_of(p));
	int fd = open(AT("o_suid"), O_WRONLY | O_TRUNC);
	CHECK(fd >= 0, NAME("otrunc_open"), "%s", strerror(errno));
	if (fd >= 0)
		close(fd);
	CHECK(mode_of(AT("o_suid")) == 0777, NAME("otrunc_clears_suid_sgidx"), "mode %o", mode_of(p));
	fd = open(AT("o_plain_w"), O_WRONLY);
	if (fd >= 0)
		close(fd);
	CHECK(mode_of(AT("o_plain_w")) == 06777, NAME("open_no_trunc_keeps"), "mode %o", mode_of(p));
#undef AT
#undef NAME
}

static void root_trunc_cases(const char *where, const char *dir)
{
	char p[PATH_MAX + 32], name[128];
	snprintf(p, sizeof p, "%s/r_suid", dir);
	snprintf(name, sizeof name, "%s_root_truncate_keeps", where);
	CHECK(truncate(p, 1) == 0 && mode_of(p) == 06777, name, "%s mode %o", strerror(errno), mode_of(p));
}

static void set_up(const char *dir)
{
	mk(dir, "t_suid", 06777, 0);
	mk(dir, "t_sgid", 02666, 0);
	mk(dir, "t_sgid_member", 02666, U1);
	mk(dir, "o_suid", 06777, 0);
	mk(dir, "o_plain_w", 06777, 0);
	mk(dir, "r_suid", 06777, 0);
}

int main(int argc, char **argv)
{
	t_setup(argc, argv, "drop_rules");
	if (geteuid() != 0) {
		printf("skip: needs root\n");
		return T_SKIP;
	}
	char tmp[] = "/tmp/drop_rules.XXXXXX";
	if (!mkdtemp(tmp) || chmod(tmp, 0755) != 0 || chmod(t_scratch, 0755) != 0)
		DIE("mkdtemp");
	set_up(t_scratch);
	set_up(tmp);
	root_trunc_cases("scratch", t_scratch);
	root_trunc_cases("tmp", tmp);
	pid_t c = fork();
	if (c < 0)
		DIE("fork");
	if (c == 0) {
		if (drop() != 0)
			DIE("drop to %d", U1);
		scm_cases();
		trunc_cases("scratch", t_scratch);
		trunc_cases("tmp", tmp);
		t_child_exit();
	}
	t_child_wait(c);
	t_rmrf(tmp);
	return t_done();
}
