/* gofer/probe.c - the test hook (MOAT_TEST_GOFER_CONFINEMENT=1, moat's own
 * environment: no guest sets it): once the gofer has confined itself
 * (Landlock, seccomp) and before it serves, it tries what a compromised
 * gofer would (a memory-corruption bug reached through the sentry's
 * protocol) and prints one "gofer-probe NAME: ALLOWED|refused (why)" line
 * each on its stderr, which it keeps under the knob (red team 90). The
 * gofer is host root root-run (the caller rootless), in a user namespace
 * of its own that maps every host id onto itself, with every capability
 * there: what holds is the mount layer (its root holds the exports only),
 * Landlock (by path, beneath the exports) and its filter.
 *
 *   MOAT_TEST_CONFINEMENT_PID=PID     a host process to reach
 *   MOAT_TEST_GOFER_CONFINEMENT_SECRET=PATH   a host file outside every
 *                                     export, by absolute path and by ".."
 *   MOAT_TEST_GOFER_CONFINEMENT_ABSTRACT=NAME a host abstract datagram
 *                                     socket ("\0NAME"), from a socketpair */
#include "gofer/server.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stddef.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/xattr.h>
#include <unistd.h>

#ifndef __NR_fchmodat2
#define __NR_fchmodat2 452
#endif

static int nprobes;

static void gprobe(const char *name, long r)
{
	nprobes++;
	if (r >= 0)
		fprintf(stderr, "gofer-probe %s: ALLOWED\n", name);
	else
		fprintf(stderr, "gofer-probe %s: refused (%s)\n", name, strerror(errno));
}

/* an open: ALLOWED only if it reads something (a mask over a hidden name
 * is an empty file or directory) */
static void gprobe_open(const char *name, long fd)
{
	if (fd >= 0) {
		char b[64];
		long n = read((int)fd, b, sizeof b);
		if (n < 0 && errno == EISDIR)
			n = syscall(SYS_getdents64, (int)fd, b, sizeof b) > 48 ? 1 : 0;
		close((int)fd);
		if (n <= 0) {
			nprobes++;
			fprintf(stderr, "gofer-probe %s: refused (empty mask)\n", name);
			return;
		}
	}
	gprobe(name, fd);
}

/* The claim fd (setup.c gofer_keep_fd, root-run: the host's
 * /run/moat-uids/<slot>, root's): its metadata written back as it is. The
 * gofer is its owner (uid 0) and holds CAP_CHOWN and CAP_FOWNER over
 * every host id in its namespace; Landlock has no hook for these calls. */
static void claim_fd_probes(int fd)
{
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		fprintf(stderr, "gofer-probe-info claim fd %d: none\n", fd);
		return;
	}
	struct timespec ts[2] = { st.st_atim, st.st_mtim };
	gprobe("claim_fchmod", fchmod(fd, st.st_mode & 07777));
	gprobe("claim_fchown", fchown(fd, st.st_uid, st.st_gid));
	gprobe("claim_futimens", futimens(fd, ts));
	gprobe("claim_utimensat_empty", utimensat(fd, "", ts, AT_EMPTY_PATH));
	gprobe("claim_fchownat_empty", fchownat(fd, "", st.st_uid, st.st_gid, AT_EMPTY_PATH));
	gprobe("claim_fchmodat2_empty", syscall(__NR_fchmodat2, fd, "", st.st_mode & 07777, AT_EMPTY_PATH));
	long x = fsetxattr(fd, "user.moat-probe", "x", 1, 0);
	if (x == 0)
		fremovexattr(fd, "user.moat-probe");
	gprobe("claim_fsetxattr", x);
	gprobe("claim_fchdir", fchdir(fd));
	struct open_how how = { .flags = O_RDONLY | O_CLOEXEC };
	gprobe("claim_openat2_dotdot", syscall(SYS_openat2, fd, "..", &how, sizeof how));
}

void gofer_confine_selftest(const struct gofer_srv *s, int claim_fd, pid_t sentry)
{
	const char *e = getenv("MOAT_TEST_CONFINEMENT_PID");
	pid_t host = e ? (pid_t)atoi(e) : 0;
	const char *secret = getenv("MOAT_TEST_GOFER_CONFINEMENT_SECRET");
	const char *abstract = getenv("MOAT_TEST_GOFER_CONFINEMENT_ABSTRACT");
	struct open_how bare = { .flags = O_RDONLY | O_CLOEXEC };
	char lbl[64], p[512];

	if (claim_fd >= 0)
		claim_fd_probes(claim_fd);
	/* host paths: absolute (our root holds the exports only), and from
	 * each export root with no RESOLVE flag, "..", /proc */
	gprobe_open("open_abs_secret", secret ? syscall(SYS_openat2, AT_FDCWD, secret, &bare, sizeof bare) :
						(errno = ENOENT, -1));
	gprobe_open("open_proc_self_root", syscall(SYS_openat2, AT_FDCWD, "/proc/self/root/etc/shadow", &bare,
						   sizeof bare));
	for (size_t i = 0; i < s->n; i++) {
		int r = s->exp[i].rootfd;
		if (r < 0 || s->exp[i].is_file)
			continue;
		snprintf(p, sizeof p, "../../../..%s", secret ? secret : "/etc/shadow");
		snprintf(lbl, sizeof lbl, "export%zu_dotdot_secret", i);
		gprobe_open(lbl, syscall(SYS_openat2, r, p, &bare, sizeof bare));
		snprintf(lbl, sizeof lbl, "export%zu_dotdot_listing", i);
		gprobe_open(lbl, syscall(SYS_openat2, r, "../../..", &bare, sizeof bare));
		/* a character device made in the export (Landlock: MAKE_CHAR
		 * nowhere; the mounts are nodev) */
		snprintf(lbl, sizeof lbl, "export%zu_mknod_char", i);
		long m = mknodat(r, "moat-probe-null", S_IFCHR | 0666, makedev(1, 3));
		if (m == 0)
			unlinkat(r, "moat-probe-null", 0);
		gprobe(lbl, m);
	}
	/* the network: no socket of its own (socketpair only); a datagram
	 * from a socketpair to a host abstract name (Landlock's scope) */
	gprobe("socket_inet", socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
	gprobe("socket_unix", socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0));
	int sv[2];
	if (abstract && socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv) == 0) {
		struct sockaddr_un su = { .sun_family = AF_UNIX };
		int l = snprintf(su.sun_path + 1, sizeof su.sun_path - 1, "%s", abstract);
		gprobe("sendto_abstract", sendto(sv[0], "gofer-probe", 11, MSG_DONTWAIT, (struct sockaddr *)&su,
						 (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + l)));
		close(sv[0]);
		close(sv[1]);
	}
	/* processes: the host's, the sentry (our parent) */
	pid_t targets[2] = { host, sentry };
	const char *tn[2] = { "host_pid", "sentry" };
	for (int t = 0; t < 2; t++) {
		if (targets[t] <= 0)
			continue;
		char b[8];
		struct iovec lv = { b, sizeof b }, rv = { (void *)0x400000, sizeof b };
		snprintf(lbl, sizeof lbl, "kill_%s", tn[t]);
		gprobe(lbl, kill(targets[t], 0));
		snprintf(lbl, sizeof lbl, "ptrace_%s", tn[t]);
		gprobe(lbl, ptrace(PTRACE_ATTACH, targets[t], 0, 0));
		snprintf(lbl, sizeof lbl, "vm_writev_%s", tn[t]);
		gprobe(lbl, process_vm_writev(targets[t], &lv, 1, &rv, 1, 0));
		snprintf(lbl, sizeof lbl, "pidfd_open_%s", tn[t]);
		gprobe(lbl, syscall(SYS_pidfd_open, targets[t], 0));
		snprintf(lbl, sizeof lbl, "prlimit_%s", tn[t]);
		gprobe(lbl, syscall(SYS_prlimit64, targets[t], 0 /* RLIMIT_CPU */, NULL, NULL));
		snprintf(lbl, sizeof lbl, "sched_setaffinity_%s", tn[t]);
		cpu_set_t cs;
		CPU_ZERO(&cs);
		CPU_SET(0, &cs);
		gprobe(lbl, sched_setaffinity(targets[t], sizeof cs, &cs));
	}
	/* the kernel's wider surfaces: none in the filter */
	gprobe("mount", mount("none", "/", "tmpfs", 0, NULL));
	gprobe("unshare_user", unshare(CLONE_NEWUSER));
	gprobe("unshare_ns", unshare(CLONE_NEWNS));
	gprobe("setns", setns(0, 0));
	gprobe("clone_newuser", syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, NULL, NULL, 0));
	gprobe("bpf", syscall(SYS_bpf, 0 /* BPF_MAP_CREATE */, NULL, 0));
	gprobe("perf_event_open", syscall(SYS_perf_event_open, NULL, 0, -1, -1, 0));
	gprobe("io_uring_setup", syscall(SYS_io_uring_setup, 1, NULL));
	gprobe("keyctl", syscall(SYS_keyctl, 0 /* KEYCTL_GET_KEYRING_ID */, -3, 0));
	gprobe("add_key", syscall(SYS_add_key, "user", "moat-probe", "x", 1, -3));
	gprobe("userfaultfd", syscall(SYS_userfaultfd, O_CLOEXEC));
	gprobe("name_to_handle_at", syscall(SYS_name_to_handle_at, AT_FDCWD, "/", NULL, NULL, 0));
	gprobe("open_by_handle_at", syscall(SYS_open_by_handle_at, AT_FDCWD, NULL, O_RDONLY));
	gprobe("memfd_create", syscall(SYS_memfd_create, "moat-probe", 0));
	gprobe("ioctl_tiocsti_fd2", ioctl(2, 0x5412 /* TIOCSTI */, "x"));
	char *argv[] = { "/bin/true", NULL };
	gprobe("execve", execve("/bin/true", argv, argv + 1));
	fprintf(stderr, "gofer-probe done: %d\n", nprobes);
}
