/* setuid family: setuid, setgid, setreuid, setregid, setresuid, setresgid,
 * setfsuid, setfsgid, setgroups/getgroups, capget/capset, the capability
 * prctls. Each case runs in a child of the root test process (a dropped
 * process cannot come back). Needs root: skipped natively otherwise.
 * Capability values differ on purpose between a host root (every capability)
 * and a guest root (kernel/cred.h's set), so cases compare capability sets
 * with each other (empty, equal, a bit set) and never print them. */
#include "t.h"

#include <grp.h>
#include <linux/capability.h>
#include <pthread.h>
#include <sys/fsuid.h>
#include <sys/prctl.h>
#include <sys/uio.h>
#include <signal.h>

struct caps {
	uint64_t eff, prm, inh;
};

static struct caps caps_of(pid_t pid)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, pid };
	struct __user_cap_data_struct d[2];
	struct caps c = { ~0ULL, ~0ULL, ~0ULL };
	if (syscall(SYS_capget, &h, d) == 0) {
		c.eff = d[0].effective | (uint64_t)d[1].effective << 32;
		c.prm = d[0].permitted | (uint64_t)d[1].permitted << 32;
		c.inh = d[0].inheritable | (uint64_t)d[1].inheritable << 32;
	}
	return c;
}

static int caps_set(uint64_t eff, uint64_t prm, uint64_t inh)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2] = {
		{ (uint32_t)eff, (uint32_t)prm, (uint32_t)inh },
		{ (uint32_t)(eff >> 32), (uint32_t)(prm >> 32), (uint32_t)(inh >> 32) },
	};
	return (int)syscall(SYS_capset, &h, d);
}

static int res_is(uid_t r, uid_t e, uid_t s)
{
	uid_t a, b, c;
	return getresuid(&a, &b, &c) == 0 && a == r && b == e && c == s;
}

static int gres_is(gid_t r, gid_t e, gid_t s)
{
	gid_t a, b, c;
	return getresgid(&a, &b, &c) == 0 && a == r && b == e && c == s;
}

static uid_t fsuid_now(void) { return (uid_t)setfsuid((uid_t)-1); }
static gid_t fsgid_now(void) { return (gid_t)setfsgid((gid_t)-1); }

#define CAPBIT(n) (1ULL << (n))

static void c_setuid(void)
{
	EXPECT_ERR(setuid((uid_t)-1), EINVAL, "setuid_minus1_einval");
	EXPECT_OK(setuid(65534), "setuid_root_drops");
	CHECK(res_is(65534, 65534, 65534) && fsuid_now() == 65534, "setuid_root_sets_all", "ids");
	struct caps c = caps_of(0);
	CHECK(c.eff == 0 && c.prm == 0, "setuid_caps_cleared", "eff %llx prm %llx",
	      (unsigned long long)c.eff, (unsigned long long)c.prm);
	EXPECT_ERR(setuid(0), EPERM, "setuid_no_way_back");
	EXPECT_ERR(seteuid(0), EPERM, "seteuid_no_way_back");
	EXPECT_ERR(setresuid(0, 0, 0), EPERM, "setresuid_no_way_back");
	EXPECT_ERR(setreuid(0, (uid_t)-1), EPERM, "setreuid_no_way_back");
	EXPECT_ERR(setgroups(0, NULL), EPERM, "setgroups_needs_cap");
	EXPECT_OK(setgid(0), "setgid_own_rgid_ok");
	EXPECT_ERR(setgid(1), EPERM, "setgid_needs_cap");
	struct caps full = { CAPBIT(7), CAPBIT(7), 0 };
	CHECK(caps_set(full.eff, full.prm, 0) == -1 && errno == EPERM, "capset_cannot_raise", "capset");
	EXPECT_OK(setuid(65534), "setuid_same_ok");
}

static void c_saved(void)
{
	/* euid only: saved id keeps root, the way back is open */
	EXPECT_OK(setresuid(0, 1000, 0), "setresuid_euid_only");
	CHECK(res_is(0, 1000, 0) && fsuid_now() == 1000, "fsuid_follows_euid", "ids");
	struct caps c = caps_of(0);
	CHECK(c.eff == 0 && c.prm != 0, "euid_drop_clears_eff_only", "eff %llx prm %llx",
	      (unsigned long long)c.eff, (unsigned long long)c.prm);
	EXPECT_ERR(setuid(2000), EPERM, "setuid_unpriv_other_eperm");
	EXPECT_OK(setuid(0), "setuid_back_via_ruid");
	CHECK(res_is(0, 0, 0), "setuid_back_ids", "ids");
	c = caps_of(0);
	CHECK(c.eff == c.prm && c.eff != 0, "euid_back_restores_eff", "eff %llx prm %llx",
	      (unsigned long long)c.eff, (unsigned long long)c.prm);
	/* setreuid: saved follows when ruid is set or euid != old ruid */
	EXPECT_OK(setreuid(1000, 2000), "setreuid_both");
	CHECK(res_is(1000, 2000, 2000), "setreuid_saved_follows", "ids");
	c = caps_of(0);
	CHECK(c.eff == 0 && c.prm == 0, "setreuid_caps_cleared", "caps");
	EXPECT_OK(setreuid((uid_t)-1, 1000), "setreuid_euid_to_ruid");
	CHECK(res_is(1000, 1000, 2000), "setreuid_saved_kept", "ids");
	EXPECT_OK(setreuid((uid_t)-1, 2000), "setreuid_euid_to_saved");
	EXPECT_ERR(setreuid((uid_t)-1, 3000), EPERM, "setreuid_other_eperm");
	EXPECT_ERR(setreuid(3000, (uid_t)-1), EPERM, "setreuid_ruid_other_eperm");
	EXPECT_OK(setreuid(2000, (uid_t)-1), "setreuid_ruid_to_euid");
	CHECK(res_is(2000, 2000, 2000), "setreuid_ruid_sets_saved", "ids");
	EXPECT_OK(setresuid((uid_t)-1, (uid_t)-1, (uid_t)-1), "setresuid_all_minus1");
	EXPECT_ERR(setresuid(1000, (uid_t)-1, (uid_t)-1), EPERM, "setresuid_gone_eperm");
}

static void c_gid(void)
{
	EXPECT_ERR(setgid((gid_t)-1), EINVAL, "setgid_minus1_einval");
	EXPECT_OK(setresgid(10, 20, 30), "setresgid_root");
	CHECK(gres_is(10, 20, 30) && fsgid_now() == 20, "setresgid_ids", "ids");
	EXPECT_OK(setregid(40, (gid_t)-1), "setregid_ruid_root");
	CHECK(gres_is(40, 20, 20), "setregid_saved_follows", "ids");
	EXPECT_OK(setgid(50), "setgid_root_sets_all");
	CHECK(gres_is(50, 50, 50), "setgid_ids", "ids");
	gid_t g[] = { 7, 3, 5 }, out[8];
	EXPECT_OK(setgroups(3, g), "setgroups_root");
	CHECK(getgroups(0, NULL) == 3, "getgroups_count", "count");
	EXPECT_ERR(getgroups(2, out), EINVAL, "getgroups_small_einval");
	int n = getgroups(8, out);
	int has[3] = { 0 };
	for (int i = 0; i < n; i++)
		for (int j = 0; j < 3; j++)
			has[j] |= out[i] == g[j];
	CHECK(n == 3 && has[0] && has[1] && has[2], "getgroups_after_setgroups", "n %d", n);
	char buf[4096];
	int ok = t_read_file("/proc/self/status", buf, sizeof buf) > 0 && strstr(buf, "\nGroups:\t3 5 7 \n");
	CHECK(ok, "proc_status_groups", "no Groups:\\t3 5 7 line");
	/* gids do not touch capabilities; dropping uid then gid fails */
	EXPECT_OK(setuid(1000), "setuid_then");
	EXPECT_ERR(setgid(60), EPERM, "setgid_after_drop_eperm");
	EXPECT_OK(setgid(50), "setgid_same_ok");
	EXPECT_ERR(setgroups(0, NULL), EPERM, "setgroups_after_drop_eperm");
	CHECK(getgroups(0, NULL) == 3, "groups_kept_after_setuid", "count");
}

static void c_fsuid(void)
{
	CHECK(setfsuid(1234) == 0, "setfsuid_returns_old", "old");
	CHECK(fsuid_now() == 1234, "setfsuid_sets", "fsuid");
	struct caps c = caps_of(0);
	CHECK(!(c.eff & CAPBIT(0)) && (c.eff & CAPBIT(7)), "setfsuid_drops_fs_caps", "eff %llx",
	      (unsigned long long)c.eff);
	CHECK(setfsuid(0) == 1234 && (caps_of(0).eff & CAPBIT(0)), "setfsuid_root_raises_fs_caps", "eff");
	CHECK(setfsgid(99) == 0 && fsgid_now() == 99, "setfsgid_sets", "fsgid");
	EXPECT_OK(seteuid(1000), "seteuid_then");
	CHECK(fsuid_now() == 1000, "fsuid_follows_seteuid", "fsuid %u", fsuid_now());
	CHECK(setfsuid(4321) == 1000 && fsuid_now() == 1000, "setfsuid_unpriv_refused", "fsuid");
	CHECK(setfsuid(0) == 1000 && fsuid_now() == 0, "setfsuid_to_saved_ok", "fsuid");
}

static void c_keepcaps(void)
{
	CHECK(prctl(PR_GET_KEEPCAPS) == 0, "keepcaps_default_off", "on");
	EXPECT_ERR(prctl(PR_SET_KEEPCAPS, 2), EINVAL, "keepcaps_einval");
	EXPECT_OK(prctl(PR_SET_KEEPCAPS, 1), "keepcaps_set");
	CHECK(prctl(PR_GET_KEEPCAPS) == 1, "keepcaps_get", "off");
	uint64_t before = caps_of(0).prm;
	EXPECT_OK(setresuid(1000, 1000, 1000), "keepcaps_drop");
	struct caps c = caps_of(0);
	CHECK(c.eff == 0 && c.prm == before, "keepcaps_keeps_permitted", "eff %llx prm %llx",
	      (unsigned long long)c.eff, (unsigned long long)c.prm);
	EXPECT_ERR(caps_set(CAPBIT(7), 0, 0), EPERM, "capset_eff_beyond_prm");
	EXPECT_OK(caps_set(CAPBIT(7), c.prm, 0), "capset_raise_from_permitted");
	EXPECT_OK(setuid(0), "setuid_with_cap_setuid");
	c = caps_of(0);
	CHECK(res_is(0, 0, 0) && c.eff == c.prm, "root_again_eff_is_prm", "ids/caps");
	EXPECT_OK(caps_set(0, 0, 0), "capset_drop_all");
	EXPECT_ERR(setuid(1234), EPERM, "root_without_caps_cannot_setuid");
	EXPECT_ERR(setgroups(0, NULL), EPERM, "root_without_caps_cannot_setgroups");
}

/* securebits (LTP prctl07): SECBIT_KEEP_CAPS is bit 4 (PR_SET_KEEPCAPS
 * shows there), a lock keeps its bit, SECBIT_NO_CAP_AMBIENT_RAISE refuses
 * an ambient raise that would otherwise be allowed */
static void c_securebits(void)
{
	CHECK(prctl(PR_GET_SECUREBITS) == 0, "securebits_default", "%d", prctl(PR_GET_SECUREBITS));
	EXPECT_OK(prctl(PR_SET_KEEPCAPS, 1), "securebits_keepcaps_set");
	CHECK(prctl(PR_GET_SECUREBITS) == 0x10, "securebits_keepcaps_is_bit4", "%#x", prctl(PR_GET_SECUREBITS));
	EXPECT_OK(prctl(PR_SET_SECUREBITS, 0x30), "securebits_lock_keepcaps");
	EXPECT_ERR(prctl(PR_SET_KEEPCAPS, 0), EPERM, "securebits_keepcaps_locked");
	EXPECT_ERR(prctl(PR_SET_SECUREBITS, 0x10), EPERM, "securebits_lock_cannot_drop");
	EXPECT_ERR(prctl(PR_SET_SECUREBITS, 0x20), EPERM, "securebits_locked_bit_cannot_change");
	struct caps c = caps_of(0);
	EXPECT_OK(caps_set(c.eff, c.prm, CAPBIT(10)), "securebits_inheritable_net_bind");
	EXPECT_OK(prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, 10, 0, 0), "securebits_ambient_raise");
	EXPECT_OK(prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_LOWER, 10, 0, 0), "securebits_ambient_lower");
	EXPECT_OK(prctl(PR_SET_SECUREBITS, 0x70), "securebits_no_ambient_raise");
	EXPECT_ERR(prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, 10, 0, 0), EPERM,
		   "securebits_ambient_raise_refused");
	CHECK(prctl(PR_GET_SECUREBITS) == 0x70, "securebits_get", "%#x", prctl(PR_GET_SECUREBITS));
}

static void c_capget(void)
{
	struct __user_cap_header_struct h = { 0x1234, 0 };
	struct __user_cap_data_struct d[2];
	errno = 0;
	int r = (int)syscall(SYS_capget, &h, d);
	CHECK(r == -1 && errno == EINVAL && h.version == _LINUX_CAPABILITY_VERSION_3, "capget_bad_version",
	      "r %d errno %d version %x", r, errno, h.version);
	h.version = _LINUX_CAPABILITY_VERSION_3;
	CHECK(syscall(SYS_capget, &h, NULL) == 0, "capget_probe", "probe");
	struct caps c = caps_of(0);
	CHECK(c.eff == c.prm && (c.eff & CAPBIT(7)) && c.inh == 0, "root_caps", "eff %llx prm %llx",
	      (unsigned long long)c.eff, (unsigned long long)c.prm);
	CHECK(prctl(PR_CAPBSET_READ, 7) == 1, "capbset_read_setuid", "not set");
	EXPECT_ERR(prctl(PR_CAPBSET_READ, 200), EINVAL, "capbset_read_einval");
	CHECK(prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, 7, 0, 0) == 0, "ambient_empty", "set");
	EXPECT_ERR(prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, 7, 0, 0), EPERM, "ambient_raise_needs_inh");
	EXPECT_OK(prctl(PR_CAPBSET_DROP, 7), "capbset_drop");
	CHECK(prctl(PR_CAPBSET_READ, 7) == 0, "capbset_dropped", "still set");
	/* what a guest root lacks (CAP_SYS_MODULE...) is checked by
	 * tests/integration/isolation_identity.sh: natively root has it */
	EXPECT_ERR(syscall(SYS_capset, &(struct __user_cap_header_struct){ _LINUX_CAPABILITY_VERSION_3, 1 },
			   d), EPERM, "capset_other_pid_eperm");
}

static char tmpdir[64];

static void c_files(void)
{
	char p[128];
	snprintf(p, sizeof p, "%s/rootonly", tmpdir);
	int fd = open(p, O_CREAT | O_WRONLY, 0600);
	close(fd);
	snprintf(p, sizeof p, "%s/grp", tmpdir);
	fd = open(p, O_CREAT | O_WRONLY, 0060);
	close(fd);
	chown(p, 0, 4242);
	chmod(p, 0060);
	gid_t g = 4242;
	EXPECT_OK(setgroups(1, &g), "files_setgroups");
	EXPECT_OK(setresgid(100, 100, 100), "files_setgid");
	EXPECT_OK(setresuid(65534, 65534, 65534), "files_drop");
	snprintf(p, sizeof p, "%s/rootonly", tmpdir);
	EXPECT_ERR(open(p, O_RDONLY), EACCES, "dropped_no_dac_override");
	EXPECT_ERR(chown(p, 65534, 65534), EPERM, "dropped_no_chown");
	snprintf(p, sizeof p, "%s/grp", tmpdir);
	fd = open(p, O_RDWR);
	CHECK(fd >= 0, "supplementary_group_counts", "open: %s", strerror(errno));
	close(fd);
}

static void c_files_capdrop(void)
{
	char p[128];
	snprintf(p, sizeof p, "%s/other", tmpdir);
	int fd = open(p, O_CREAT | O_WRONLY, 0600);
	close(fd);
	chown(p, 12345, 12345);
	fd = open(p, O_RDONLY);
	CHECK(fd >= 0, "root_dac_override", "%s", strerror(errno));
	close(fd);
	EXPECT_OK(caps_set(0, 0, 0), "root_drops_caps");
	EXPECT_ERR(open(p, O_RDONLY), EACCES, "root_without_caps_no_override");
	EXPECT_ERR(chown(p, 0, 0), EPERM, "root_without_caps_no_chown");
}

static pid_t spawn_sleeper(uid_t uid)
{
	pid_t p = fork();
	if (p == 0) {
		if (uid && setresuid(uid, uid, uid) < 0)
			_exit(1);
		for (;;)
			pause();
	}
	return p;
}

static pid_t rootp; /* a root sleeper of the main process's */

static void c_signals(void)
{
	pid_t nob = spawn_sleeper(65534);
	usleep(100000); /* let the second one drop */
	EXPECT_OK(setresuid(65534, 65534, 65534), "signals_drop");
	EXPECT_ERR(kill(rootp, SIGTERM), EPERM, "dropped_cannot_kill_root");
	EXPECT_ERR(kill(rootp, 0), EPERM, "dropped_cannot_probe_root");
	EXPECT_ERR(syscall(SYS_tgkill, rootp, rootp, SIGTERM), EPERM, "dropped_cannot_tgkill_root");
	EXPECT_ERR(syscall(SYS_tkill, rootp, SIGTERM), EPERM, "dropped_cannot_tkill_root");
	char buf[8];
	struct iovec l = { buf, sizeof buf }, r = { buf, sizeof buf };
	EXPECT_ERR(process_vm_readv(rootp, &l, 1, &r, 1, 0), EPERM, "dropped_cannot_read_root_memory");
	EXPECT_ERR(process_vm_writev(rootp, &l, 1, &r, 1, 0), EPERM, "dropped_cannot_write_root_memory");
	EXPECT_OK(kill(nob, 0), "same_uid_probe");
	EXPECT_OK(kill(nob, SIGKILL), "same_uid_kill");
	EXPECT_ERR(kill(999999, 0), ESRCH, "no_such_pid_esrch");
	waitpid(nob, NULL, 0);
}

#define NT 3
static pthread_barrier_t bar;
static uid_t seen[NT];
static void *thr(void *arg)
{
	long i = (long)arg;
	pthread_barrier_wait(&bar); /* started */
	pthread_barrier_wait(&bar); /* main has called setuid */
	seen[i] = (uid_t)syscall(SYS_geteuid);
	return NULL;
}

static void c_threads(void)
{
	pthread_t th[NT];
	pthread_barrier_init(&bar, NULL, NT + 1);
	for (long i = 0; i < NT; i++)
		pthread_create(&th[i], NULL, thr, (void *)i);
	pthread_barrier_wait(&bar);
	EXPECT_OK(setresuid(4000, 4000, 4000), "threads_setuid");
	pthread_barrier_wait(&bar);
	int all = 1;
	for (int i = 0; i < NT; i++) {
		pthread_join(th[i], NULL);
		all &= seen[i] == 4000;
	}
	CHECK(all, "setuid_reaches_every_thread", "%u %u %u", seen[0], seen[1], seen[2]);
}

int main(int argc, char **argv)
{
	if (geteuid() != 0) {
		printf("needs root (set-id transitions from root)\n");
		return T_SKIP;
	}
	t_setup(argc, argv, "setid");
	snprintf(tmpdir, sizeof tmpdir, "/tmp/setid.XXXXXX");
	if (!mkdtemp(tmpdir))
		DIE("mkdtemp");
	chmod(tmpdir, 0755);
	t_in_child(c_setuid);
	t_in_child(c_saved);
	t_in_child(c_gid);
	t_in_child(c_fsuid);
	t_in_child(c_keepcaps);
	t_in_child(c_capget);
	t_in_child(c_securebits);
	t_in_child(c_files);
	t_in_child(c_files_capdrop);
	t_in_child(c_threads);
	rootp = spawn_sleeper(0);
	t_in_child(c_signals);
	kill(rootp, SIGKILL);
	waitpid(rootp, NULL, 0);
	t_rmrf(tmpdir);
	return t_done();
}
