/* sentry/confine.c - once set-up is over the sentry confines itself: it opens
 * no host path by name (the gofer resolves every host path), execs nothing,
 * and makes only the calls it needs.
 *
 * An allowlist with TSYNC (every sentry thread; threads started later inherit
 * it). Anything else fails with EPERM. Path-taking calls are allowed only in
 * the shapes the sentry uses:
 *   openat      dirfd == the guest pid namespace's procfs fd, O_RDONLY, or
 *               access mode 3 (no read, no write: an O_PATH open's stand-in,
 *               syscalls/sys_file.c return_reopened)
 *   readlinkat  any dirfd: link text only (fs/directfs.c reads a
 *               symlink's target from its own O_PATH|O_NOFOLLOW fd,
 *               readlinkat(fd, "")); see confine_rules.c for where a
 *               path from other fds resolves
 *   newfstatat  AT_EMPTY_PATH (fstat of a held fd)
 *   statx       AT_EMPTY_PATH (the same; fs/directfs.c looks a name up
 *               relative to the guest's dirfd: vfs_direct_absent_at)
 *   openat2     dirfd == an export root fd (direct file access,
 *               fs/directfs.c; what confines it is the mount layer, below:
 *               read-only detached clones of the exports (binds in our
 *               root before Linux 6.15), and for cow exports the gofer's
 *               read-only clones of its overlays)
 *   kcmp        any type (the lock table: is this the same open file
 *               description?; and a guest's kcmp naming another process)
 *   get_robust_list  an owner row made at the check (syscalls/sys_signal.c,
 *               pid reuse); the others (setpriority, ioprio_set,
 *               sched_setscheduler/setparam/setattr, sched_setaffinity,
 *               prlimit64's sets) are the guest's init's (sentry/spawn.c
 *               init_act): our own affinity and limits only, any
 *               process's limits read
 * No fchown/fchmod/futimens/fsetxattr on held fds: the gofer makes every
 * change to a file of the view, and a guest memfd's mode and times
 * (GOFER_OP_MEMFDATTR, which refuses any other file): rootless a file of the
 * caller's the sentry holds is its uid's.
 * The seccomp rule on openat sees the dirfd, not the path: an absolute path
 * would ignore the dirfd. What makes that harmless is the sentry's root, an
 * empty read-only tmpfs in a mount namespace of its own holding nothing but
 * /.empty (the exports are detached clones; before Linux 6.15 read-only
 * binds in it, hidden names masked: privilege.c).
 * ioctl is limited to the seccomp notification requests and TCGETS (isatty),
 * TCSETS and TCXONC on fds 0-2 (tty.c tty_guard_restore: the caller's
 * terminal back; MOAT_TEST_CONFINEMENT probes fd 3).
 * openat2's flags live in memory: allowed only on the export root fds, where
 * every write/create is EROFS by the mount layer. No socket (connections to
 * the gofer arrive over the control socket), no bind (a guest socket's is
 * moat-netd's or the guest's init's: a socket taken from the guest may be
 * the caller's stdio, of the host's network namespace), no exec, no mount,
 * no namespace.
 *
 * The rules are confine_rules.c's. The build compiles them once with
 * placeholder fds (gen_confine.c); start-up patches the sandbox's fds into a
 * copy and loads it (confine_prebuilt.c: ~0.05 ms instead of libseccomp's
 * ~0.5 ms on the program's critical path). -t, learn mode and more export
 * roots than the build's slots take libseccomp at run time.
 *
 * MOAT_SENTRY_FILTER_LEARN=1 logs (SECCOMP_RET_LOG, see dmesg) instead of
 * refusing, to find a call the list misses. */
#include "sentry/sentry.h"
#include "sentry/confine_rules.h"
#include "sentry/broker.h"
#include "sentry/netd.h"
#include "syscalls/sc.h"
#include "kernel/task.h"
#include "common/log.h"
#include "common/util.h"

#include <errno.h>
#include <pthread.h>
#include <sys/mman.h>
#include <time.h>
#include <fcntl.h>
#include <linux/kcmp.h>
#include <linux/seccomp.h>
#include <seccomp.h>

#include "common/sanitize.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/openat2.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <sys/wait.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)
#endif

/* MOAT_TEST_CONFINEMENT_DOTDOT: an unnamed AF_UNIX socket made before the
 * filter (as the caller's stdio or a guest's may be), for the path binds */
static int probe_sock = -1;

/* The fds the rules name: the guest procfs, the export roots, the tty. */
int confine_sentry(struct sandbox *sb, char *err, size_t errlen)
{
	int learn = moat_dev_knob("MOAT_SENTRY_FILTER_LEARN") != NULL;
	int pfd = sb->guest_procfd;
	if (pfd < 0) {
		snprintf(err, errlen, "sentry confinement: no guest procfs");
		return -EINVAL;
	}
	size_t nroots;
	const int *roots = priv_export_roots(&nroots);
	int rc;
	if (getenv("MOAT_TEST_CONFINEMENT_DOTDOT") || getenv("MOAT_TEST_CONFINEMENT_DGRAM"))
		probe_sock = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0); /* (the probe's: unnamed) */
	/* the program compiled at build time, its placeholder fds patched
	 * (learn mode and -t take libseccomp's run-time path) */
	if (!learn && tty_master() < 0 && confine_prebuilt_load(pfd, roots, nroots) == 0)
		return 0;
	scmp_filter_ctx ctx = seccomp_init(learn ? SCMP_ACT_LOG : SCMP_ACT_ERRNO(EPERM));
	if (!ctx) {
		snprintf(err, errlen, "sentry confinement: seccomp_init failed");
		return -ENOMEM;
	}
	rc = confine_rules(ctx, pfd, roots, nroots, tty_master());
	if (!rc)
		rc = seccomp_load(ctx);
	seccomp_release(ctx);
	if (rc) {
		snprintf(err, errlen, "sentry confinement: %s", strerror(-rc));
		return rc;
	}
	return 0;
}

/* ---- Landlock scope: who the sentry's tree may signal and trace ----
 *
 * Applied right after the sentry takes its host uid, before moat-netd and
 * the guest's init are forked, so they are in the same domain. A Landlock
 * domain limits ptrace (and process_vm_*, pidfd_getfd: the same access
 * check) to processes of the same or a nested domain, and with
 * LANDLOCK_SCOPE_SIGNAL (ABI 6, Linux 6.12) signals too (kill, tgkill,
 * pidfd_send_signal, F_SETOWN). Run rootless, the sentry shares the caller's
 * uid: this is what keeps a compromised sentry (or guest) from signalling or
 * tracing the caller's other processes. LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
 * (the same ABI) keeps connect and sendto to an abstract AF_UNIX name inside
 * the tree too (red team 66): the guest's own sockets live in its network
 * namespace, whose abstract names are its own, but a socket the caller hands
 * over as stdio is of the host's, and on it a guest's native connect or
 * sendto to "\0name" reached every abstract listener of the host (a D-Bus
 * or X11 socket of the caller's session; root-run, root's too: abstract
 * names have no permission check). Only a socket made by a process outside
 * the domain is refused (EPERM), so the guest's own abstract names, and the
 * "\0moat/..." names its path binds become, work as before. The domain handles no file or
 * network access (a domain that handles file access may not mount, and the
 * sentry and the init still build their roots). Before ABI 6 a domain needs
 * a handled access, so none is made. Returns the ABI used, 0 if none. */
static int scope_abi;

int confine_scope(char *err, size_t errlen)
{
	struct {
		uint64_t handled_access_fs, handled_access_net, scoped;
	} ra = { .scoped = 1ULL << 0 /* LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET */ |
			  1ULL << 1 /* LANDLOCK_SCOPE_SIGNAL */ };
	long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, 1U /* _VERSION */);
	if (abi < 6 || moat_dev_knob("MOAT_NO_LANDLOCK_SCOPE")) /* (the knob: to watch the test fail) */
		return 0;
	long rs = syscall(SYS_landlock_create_ruleset, &ra, sizeof ra, 0);
	if (rs < 0) {
		snprintf(err, errlen, "sentry confinement: landlock_create_ruleset: %s", strerror(errno));
		return -1;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    syscall(SYS_landlock_restrict_self, (int)rs, 0) < 0) {
		snprintf(err, errlen, "sentry confinement: landlock_restrict_self: %s", strerror(errno));
		close((int)rs);
		return -1;
	}
	close((int)rs);
	scope_abi = (int)abi;
	return scope_abi;
}

/* ---- the test hook: what a compromised sentry would try ---- */

static void probe(const char *name, long r)
{
	if (r >= 0) {
		fprintf(stderr, "confinement-probe %s: ALLOWED\n", name);
		if (r > 2)
			close((int)r);
	} else {
		fprintf(stderr, "confinement-probe %s: refused (%s)\n", name, strerror(errno));
	}
}

/* An open that succeeded on a mask (the empty file or tmpfs over a hidden
 * name) reveals nothing: ALLOWED only if there is something to read. */
static void probe_content(const char *name, long r)
{
	if (r >= 0) {
		char b[4096];
		long n = read((int)r, b, 1);
		if (n < 0 && errno == EISDIR) {
			n = syscall(SYS_getdents64, (int)r, b, sizeof b);
			/* "." and ".." alone: an empty mask */
			long k = 0, off = 0;
			while (n > 0 && off < n) {
				unsigned short reclen = *(unsigned short *)(b + off + 16);
				const char *nm = b + off + 19;
				if (strcmp(nm, ".") && strcmp(nm, ".."))
					k++;
				off += reclen;
			}
			n = k;
		}
		close((int)r);
		if (n <= 0) {
			fprintf(stderr, "confinement-probe %s: refused (empty mask)\n", name);
			return;
		}
		fprintf(stderr, "confinement-probe %s: ALLOWED\n", name);
		return;
	}
	probe(name, r);
}

/* MOAT_TEST_CONFINEMENT_DOTDOT: the guest's directory fds, as a compromised
 * sentry would climb from them: PID/fd/N/.. and beyond through the guest
 * procfs (red team 45: from a gofer fd the sentry put into a guest task,
 * ".." reached the gofer's "/": every export's layers, the cow scratch, the
 * whole --overlay DIR). A thread, while the guest's program runs (it holds
 * its fds open a few seconds); one line per climb that lists a directory
 * above the fd's own, ALLOWED if it is the gofer's root (its .empty). */
static int dotdot_pfd;

static int dotdot_names(int fd, char *out, size_t len, int *gofer_root)
{
	char b[4096];
	size_t o = 0;
	long n;

	out[0] = 0;
	while ((n = syscall(SYS_getdents64, fd, b, sizeof b)) > 0) {
		for (long off = 0; off < n;) {
			unsigned short reclen = *(unsigned short *)(b + off + 16);
			const char *nm = b + off + 19;
			if (!strcmp(nm, ".empty") || !strcmp(nm, ".ovl") || !strcmp(nm, ".cow"))
				*gofer_root = 1;
			if (strcmp(nm, ".") && strcmp(nm, "..") && o + strlen(nm) + 2 < len)
				o += (size_t)snprintf(out + o, len - o, "%s ", nm);
			off += reclen;
		}
	}
	return 0;
}

static void *dotdot_probe(void *arg)
{
	int pfd = dotdot_pfd, tried = 0, reached = 0;
	char b[4096], path[256], names[512];
	(void)arg;
	/* and a socket bound by a path through them (red team 72): bind
	 * resolves a relative path from our working directory, this thread's
	 * own (CLONE_FS), moved to the guest procfs: "PID/fd/N/name" made a
	 * socket inode wherever fd N is, a host directory the caller gave as
	 * stdio included; or moved to the directory itself (an fd of it from
	 * "PID/fd/N"). The socket: an unnamed one made before the filter, as
	 * the caller's stdio or a guest's may be (probe_sock). The filter has
	 * no unshare and no fchdir now: the working directory stays our
	 * root's "/" (read-only, nothing of the guest's beneath) */
	int bound = 0, bind_err = 0;
	/* and a directory the caller gave as stdio (red team 90), which the
	 * guest's tasks hold as fds 0-2: a file beneath it
	 * (MOAT_TEST_CONFINEMENT_STDIO_FILE, relative) read, and a listing of
	 * its parent that names anything, through "PID/fd/N"; it was the
	 * host's tree, rootless with the caller's access
	 * (privilege.c priv_stdio_dirs) */
	const char *stdio_file = getenv("MOAT_TEST_CONFINEMENT_STDIO_FILE");
	int sd_tried = 0, sd_read = 0, sd_listed = 0, sd_err = 0;
	probe("unshare_fs", unshare(CLONE_FS));
	probe("fchdir_procfd", fchdir(pfd));
	fprintf(stderr, "confinement-probe-info dotdot unnamed socket: %d\n", probe_sock);
	/* until a round finds a directory past fds 0-2, the program's own: a
	 * round that came while only the caller's stdio directory was there
	 * (the guest's sh not yet at its `exec 3</rw ...`) ended the probe
	 * with 1 (a loaded machine, or the watchdog's start since red team
	 * 95, made that more likely) */
	int past_stdio = 0;
	for (int round = 0; round < 100 && !past_stdio; round++) {
		struct timespec ts = { 0, 50 * 1000 * 1000 };
		nanosleep(&ts, NULL);
		int d = openat(pfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		long n;
		while (d >= 0 && (n = syscall(SYS_getdents64, d, b, sizeof b)) > 0) {
			for (long off = 0; off < n; off += *(unsigned short *)(b + off + 16)) {
				const char *pid = b + off + 19;
				if (*pid < '1' || *pid > '9')
					continue;
				for (int fdn = 0; fdn < 16; fdn++) {
					snprintf(path, sizeof path, "%s/fd/%d", pid, fdn);
					int f = openat(pfd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
					if (f < 0 && errno == ENOTDIR && fdn > 0 && fdn < 3 && stdio_file) {
						/* the caller's stdout or stderr, a file
						 * given write-only (`>> FILE`), reopened
						 * for reading: left (red team 90), said */
						char c[16];
						int rf = openat(pfd, path, O_RDONLY | O_CLOEXEC);
						long got = rf >= 0 ? read(rf, c, sizeof c) : -1;
						fprintf(stderr, "confinement-probe-info stdio %s reopened for reading: %s\n", path,
							got >= 0 ? "read" : strerror(errno));
						if (rf >= 0)
							close(rf);
					}
					if (f < 0)
						continue;
					close(f);
					tried++;
					past_stdio |= fdn >= 3;
					if (stdio_file && fdn < 3) {
						char np[512];
						int root = 0;
						snprintf(np, sizeof np, "%s/%.200s", path, stdio_file);
						int sf = openat(pfd, np, O_RDONLY | O_CLOEXEC);
						char c;
						sd_err = sf < 0 ? errno : sd_err;
						sd_read += sf >= 0 && read(sf, &c, 1) == 1;
						if (sf >= 0)
							close(sf);
						snprintf(np, sizeof np, "%s/..", path);
						int up = openat(pfd, np, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
						if (up >= 0) {
							dotdot_names(up, names, sizeof names, &root);
							sd_listed += names[0] != 0;
							fprintf(stderr, "confinement-probe-info stdio dir %s: %s\n", np, names);
							close(up);
						}
						sd_tried++;
					}
					if (probe_sock >= 0 && !bound) {
						struct sockaddr_un su = { .sun_family = AF_UNIX };
						snprintf(su.sun_path, sizeof su.sun_path, "%.80s/moat-probe-sock", path);
						int bd = bind(probe_sock, (struct sockaddr *)&su, sizeof su);
						if (bd < 0)
							bind_err = errno;
						fprintf(stderr, "confinement-probe-info dotdot bind %s: %s\n", su.sun_path,
							bd == 0 ? "bound" : strerror(errno));
						int df = openat(pfd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
						if (bd < 0 && df >= 0 && fchdir(df) == 0) {
							snprintf(su.sun_path, sizeof su.sun_path, "moat-probe-sock");
							bd = bind(probe_sock, (struct sockaddr *)&su, sizeof su);
							fprintf(stderr, "confinement-probe-info dotdot bind (fchdir %s) %s: %s\n",
								path, su.sun_path, bd == 0 ? "bound" : strerror(errno));
						}
						if (df >= 0)
							close(df);
						bound = bd == 0;
					}
					/* by name too, O_PATH (no read of the
					 * directory: a search of it only) */
					static const char *const names_above[] = { ".ovl", ".cow", ".low0", ".empty", "0" };
					for (size_t k = 0; k < sizeof names_above / sizeof *names_above; k++) {
						char np[300];
						snprintf(np, sizeof np, "%s/../%s", path, names_above[k]);
						f = openat(pfd, np, O_PATH | O_CLOEXEC);
						if (f >= 0) {
							reached++;
							fprintf(stderr, "confinement-probe dotdot_gofer_name %s: ALLOWED\n",
								np);
							close(f);
						}
					}
					for (int up = 1; up <= 4; up++) {
						size_t l = strlen(path);
						snprintf(path + l, sizeof path - l, "/..");
						int root = 0;
						f = openat(pfd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
						if (f < 0) {
							fprintf(stderr, "confinement-probe-info dotdot %s: %s\n", path,
								strerror(errno));
							break;
						}
						dotdot_names(f, names, sizeof names, &root);
						close(f);
						fprintf(stderr, "confinement-probe-info dotdot %s: %s\n", path, names);
						if (root) {
							reached++;
							fprintf(stderr, "confinement-probe dotdot_gofer_root %s: ALLOWED\n",
								path);
							break;
						}
					}
				}
			}
		}
		if (d >= 0)
			close(d);
	}
	if (sd_tried) {
		fprintf(stderr, "confinement-probe stdio_dir_file: %s%s%s\n", sd_read ? "ALLOWED" : "refused (",
			sd_read ? "" : strerror(sd_err), sd_read ? "" : ")");
		fprintf(stderr, "confinement-probe stdio_dir_dotdot: %s\n", sd_listed ? "ALLOWED" : "refused (empty)");
	}
	if (bound)
		fprintf(stderr, "confinement-probe dotdot_bind: ALLOWED\n");
	else if (tried && probe_sock >= 0)
		fprintf(stderr, "confinement-probe dotdot_bind: refused (%s)\n", strerror(bind_err));
	fprintf(stderr, "confinement-probe-info dotdot dirs: %d, gofer root reached: %d\n", tried, reached);
	fprintf(stderr, "confinement-probe dotdot done: %d\n", tried);
	return NULL;
}

static void dotdot_probe_start(int pfd)
{
	pthread_t th;
	dotdot_pfd = pfd;
	if (pthread_create(&th, NULL, dotdot_probe, NULL) == 0)
		pthread_detach(th);
	else
		fprintf(stderr, "confinement-probe-info dotdot: no thread\n");
}

void confine_selftest(struct sandbox *sb, pid_t gofer)
{
	int pfd = sb->guest_procfd;
	const char *e = getenv("MOAT_TEST_CONFINEMENT_PID");
	pid_t host = e ? (pid_t)atoi(e) : 0;
	struct open_how how = { .flags = O_RDONLY };

	probe("open_abs", open("/etc/passwd", O_RDONLY | O_CLOEXEC));
	probe("openat_cwd", openat(AT_FDCWD, "etc/passwd", O_RDONLY | O_CLOEXEC));
	/* the allowed dirfd with an absolute path: the rule cannot see the path */
	probe("openat_procfd_abs", openat(pfd, "/etc/passwd", O_RDONLY | O_CLOEXEC));
	probe("openat_procfd_dotdot", openat(pfd, "../../../etc/passwd", O_RDONLY | O_CLOEXEC));
	probe("openat_procfd_root_link", openat(pfd, "1/root/etc/passwd", O_RDONLY | O_CLOEXEC));
	probe("openat_procfd_write", openat(pfd, "1/comm", O_WRONLY | O_CLOEXEC));
	probe("openat2", syscall(SYS_openat2, AT_FDCWD, "/etc/passwd", &how, sizeof how));
	/* red team 45: the access mode alone was checked; only the filter's
	 * EPERM is a refusal (procfs itself says EACCES or ENOENT) */
	probe("openat_procfd_creat", openat(pfd, "moat-probe-created", O_RDONLY | O_CREAT | O_CLOEXEC, 0644) < 0 &&
					     errno == EPERM ? -1 : 0);
	probe("openat_procfd_trunc", openat(pfd, "1/comm", O_RDONLY | O_TRUNC | O_CLOEXEC) < 0 &&
					     errno == EPERM ? -1 : 0);
	{
		/* no fchmod at all, so never a set-id bit (rootless our uid
		 * owns a rw bind's files) */
		int m = memfd_create("moat-probe", MFD_CLOEXEC);
		probe("fchmod_setuid", fchmod(m, 04755) < 0 && errno == EPERM ? -1 : 0);
		probe("fchmod_setgid", fchmod(m, 02755) < 0 && errno == EPERM ? -1 : 0);
		if (m >= 0)
			close(m);
	}
	if (getenv("MOAT_TEST_CONFINEMENT_DOTDOT"))
		dotdot_probe_start(pfd);
	/* namespaces: a user namespace of its own would hold every capability
	 * (a child that got made exits at once) */
	{
		long c = syscall(SYS_clone, CLONE_NEWUSER | CLONE_NEWNS | SIGCHLD, 0, NULL, NULL, 0);
		if (c == 0)
			_exit(0);
		if (c > 0)
			waitpid((pid_t)c, NULL, 0);
		probe("clone_newuser", c > 0 ? 0 : -1);
		struct { uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack,
			 stack_size, tls; } ca = { .flags = CLONE_NEWUSER, .exit_signal = SIGCHLD };
		c = syscall(SYS_clone3, &ca, sizeof ca);
		if (c == 0)
			_exit(0);
		if (c > 0)
			waitpid((pid_t)c, NULL, 0);
		probe("clone3_newuser", c > 0 ? 0 : -1);
	}
	/* direct file access: from the export root fds the filter allows, try
	 * to leave the exports or write them (privilege.c's mount layer) */
	size_t nroots;
	const int *roots = priv_export_roots(&nroots);
	int nr = 0;
	for (size_t i = 0; i < nroots; i++) {
		if (roots[i] < 0)
			continue;
		char lbl[64];
		struct open_how bare = { .flags = O_RDONLY | O_CLOEXEC };
		struct open_how wr = { .flags = O_WRONLY | O_CLOEXEC };
		struct open_how cr = { .flags = O_RDWR | O_CREAT | O_CLOEXEC, .mode = 0644 };
		struct open_how tmp = { .flags = O_TMPFILE | O_RDWR | O_CLOEXEC, .mode = 0600 };
#define P2(what, fd, path, h) do { snprintf(lbl, sizeof lbl, "export%zu_%s", i, what); \
	probe_content(lbl, syscall(SYS_openat2, fd, path, h, sizeof *(h))); } while (0)
		P2("abs_shadow", roots[i], "/etc/shadow", &bare);
		P2("abs_passwd", roots[i], "/etc/passwd", &bare);
		P2("dotdot_shadow", roots[i], "../etc/shadow", &bare);
		P2("dotdot_root", roots[i], "../../root", &bare);
		P2("dotdot3_passwd", roots[i], "../../../etc/passwd", &bare);
		P2("hidden_shadow", roots[i], "shadow", &bare);
		P2("hidden_etc_shadow", roots[i], "etc/shadow", &bare);
		P2("hidden_machine_id", roots[i], "machine-id", &bare); /* world-readable: only the mask stops it */
		P2("rel_etc_passwd", roots[i], "etc/passwd", &bare);
		P2("proc_self", roots[i], "/proc/self/root/etc/shadow", &bare);
		P2("write_passwd", roots[i], "passwd", &wr);
		/* symlinks that lead out of the export (/etc/mtab -> ../proc/self/mounts,
		 * /etc/os-release -> ../usr/lib/os-release): followed, they resolve in
		 * our root, where neither exists */
		P2("symlink_mtab", roots[i], "mtab", &bare);
		P2("symlink_os_release", roots[i], "os-release", &bare);
		P2("create", roots[i], "moat-probe-created", &cr);
		P2("tmpfile", roots[i], ".", &tmp);
		/* O_PATH (the direct negative lookup's open) and stat: success
		 * alone would reveal a host file's existence and metadata */
		struct open_how op = { .flags = O_PATH | O_NOFOLLOW | O_CLOEXEC };
#define PS(what, fd, path, h) do { snprintf(lbl, sizeof lbl, "export%zu_%s", i, what); \
	probe(lbl, syscall(SYS_openat2, fd, path, h, sizeof *(h))); } while (0)
		PS("opath_abs_shadow", roots[i], "/etc/shadow", &op);
		PS("opath_dotdot_shadow", roots[i], "../etc/shadow", &op);
		PS("opath_dotdot3_passwd", roots[i], "../../../etc/passwd", &op);
#undef PS
		/* a file of another host user (0600) inside the export: root-run
		 * our user namespace maps every host id (privilege.c), and with
		 * no capability in it the mapping changes what stat says, never
		 * what we may open (tests name one: MOAT_TEST_CONFINEMENT_SECRET) */
		const char *secret = getenv("MOAT_TEST_CONFINEMENT_SECRET");
		if (secret) {
			P2("secret", roots[i], secret, &bare);
			snprintf(lbl, sizeof lbl, "export%zu_secret_mapped_owner", i);
			struct stat ost;
			int of = (int)syscall(SYS_openat2, roots[i], secret, &op, sizeof op);
			if (of >= 0 && fstat(of, &ost) == 0)
				fprintf(stderr, "confinement-probe-info %s: %u:%u\n", lbl, (unsigned)ost.st_uid,
					(unsigned)ost.st_gid);
			if (of >= 0)
				close(of);
		}
		struct stat sst;
		snprintf(lbl, sizeof lbl, "export%zu_stat_dotdot_shadow", i);
		probe(lbl, fstatat(roots[i], "../etc/shadow", &sst, AT_EMPTY_PATH) < 0 ? -1 : 0);
		snprintf(lbl, sizeof lbl, "export%zu_stat_abs_shadow", i);
		probe(lbl, fstatat(roots[i], "/etc/shadow", &sst, AT_EMPTY_PATH) < 0 ? -1 : 0);
		/* statx in the same shape (fs/directfs.c vfs_direct_absent_at) */
		struct statx ssx;
		snprintf(lbl, sizeof lbl, "export%zu_statx_dotdot_shadow", i);
		probe(lbl, statx(roots[i], "../etc/shadow", AT_EMPTY_PATH, STATX_BASIC_STATS, &ssx) < 0 ? -1 : 0);
		snprintf(lbl, sizeof lbl, "export%zu_statx_abs_shadow", i);
		probe(lbl, statx(roots[i], "/etc/shadow", AT_EMPTY_PATH, STATX_BASIC_STATS, &ssx) < 0 ? -1 : 0);
		snprintf(lbl, sizeof lbl, "export%zu_readlink_abs", i);
		char lb[64];
		probe(lbl, readlinkat(roots[i], "/proc/self/exe", lb, sizeof lb) < 0 ? -1 : 3);
#undef P2
		nr++;
	}
	fprintf(stderr, "confinement-probe export_roots: %d\n", nr);
	/* no capability in our namespace: root-run it maps every host id (one
	 * would reach every host file our mounts show), rootless the caller's
	 * (DAC override over the gofer's mode-0 "/", red team 45) */
	probe("capabilities_held", priv_caps_verified_none() ? (errno = EPERM, -1) : 0);
	fprintf(stderr, "confinement-probe-info owner_map: %d\n", sb->idmap.sentry_owners);
	probe("socket_inet", socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
	probe("socket_unix", socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
	char *argv[] = { "/bin/true", NULL };
	probe("execve", execve("/bin/true", argv, argv + 1));
	probe("mkdir", mkdirat(pfd, "x", 0700));
	probe("fchown_held_fd", fchown(pfd, 0, 0));
	probe("unshare_user", unshare(CLONE_NEWUSER));
	probe("mount", mount("none", "/", "tmpfs", 0, NULL));
	/* the kernel's wider surfaces (red team 90): none in the filter (a
	 * kernel's own error would mean the call got past it: only the
	 * filter's EPERM is a refusal); file handles would open any inode of
	 * a mount we hold by number, past every path rule */
#define PF(name, call) probe(name, (call) < 0 && errno == EPERM ? -1 : 0)
	PF("setns", setns(pfd, 0));
	PF("bpf", syscall(SYS_bpf, 0 /* BPF_MAP_CREATE */, NULL, 0));
	PF("perf_event_open", syscall(SYS_perf_event_open, NULL, 0, -1, -1, 0));
	PF("io_uring_setup", syscall(SYS_io_uring_setup, 1, NULL));
	PF("keyctl", syscall(SYS_keyctl, 0 /* KEYCTL_GET_KEYRING_ID */, -3, 0));
	PF("add_key", syscall(SYS_add_key, "user", "moat-probe", NULL, 0, -3));
	PF("userfaultfd", syscall(SYS_userfaultfd, -1));
	PF("name_to_handle_at", syscall(SYS_name_to_handle_at, pfd, "", NULL, NULL, AT_EMPTY_PATH));
	PF("open_by_handle_at", syscall(SYS_open_by_handle_at, pfd, NULL, O_RDONLY));
	PF("socketpair", syscall(SYS_socketpair, AF_UNIX, SOCK_DGRAM, 0, NULL));
	PF("pivot_root", syscall(SYS_pivot_root, NULL, NULL));
#undef PF
	/* the owner rows it makes for the guest (pid reuse) are one task each:
	 * a process group or a user's every process is the filter's EPERM (a
	 * group no process has: the kernel's ESRCH, were it let through) */
	probe("setpriority_pgrp", setpriority(PRIO_PGRP, 0x3ffffff0, 19) < 0 && errno == EPERM ? -1 : 0);
	probe("ioprio_set_pgrp", syscall(SYS_ioprio_set, 2 /* IOPRIO_WHO_PGRP */, 0x3ffffff0, (2 << 13) | 4) < 0 &&
					 errno == EPERM ? -1 : 0);
	{
		/* setting a terminal: the caller's stdio (fds 0-2, tty.c
		 * tty_guard_restore) only. On a non-terminal the kernel says
		 * ENOTTY: only the filter's EPERM is a refusal */
		int hi = fcntl(pfd, F_DUPFD_CLOEXEC, 3);
		unsigned char tio[64];
		memset(tio, 0, sizeof tio);
		probe("tcsets_fd3", ioctl(hi, TCSETS, tio) < 0 && errno == EPERM ? -1 : 0);
		probe("tcsetsw_fd3", ioctl(hi, TCSETSW, tio) < 0 && errno == EPERM ? -1 : 0);
		probe("tcxonc_fd3", ioctl(hi, TCXONC, TCOON) < 0 && errno == EPERM ? -1 : 0);
		if (hi >= 0)
			close(hi);
	}
	{
		/* fcntl: never a lock, a lease, F_NOTIFY or a pipe's size (red
		 * team 72: rootless a read lease on a caller's file in an export
		 * held the caller's own opens of it for writing). On a memfd,
		 * the guest procfs and a pipe of our own; the kernel's answers
		 * differ by object: only the filter's EPERM is a refusal */
		int m = memfd_create("moat-probe", MFD_CLOEXEC);
		struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
		probe("fcntl_setlease", fcntl(m, F_SETLEASE, F_WRLCK) < 0 && errno == EPERM ? -1 : 0);
		probe("fcntl_setlk", fcntl(m, F_SETLK, &fl) < 0 && errno == EPERM ? -1 : 0);
		probe("fcntl_ofd_setlk", fcntl(m, F_OFD_SETLK, &fl) < 0 && errno == EPERM ? -1 : 0);
		if (m >= 0)
			close(m);
		int d = fcntl(pfd, F_DUPFD_CLOEXEC, 3); /* (a dup: closing it drops the watch) */
		probe("fcntl_notify", fcntl(d, F_NOTIFY, DN_CREATE) < 0 && errno == EPERM ? -1 : 0);
		if (d >= 0)
			close(d);
		int pp[2];
		if (pipe2(pp, O_CLOEXEC) == 0) {
			probe("fcntl_setpipe_sz", fcntl(pp[0], F_SETPIPE_SZ, 1 << 20) < 0 && errno == EPERM ? -1 : 0);
			close(pp[0]);
			close(pp[1]);
		}
	}
	/* an AF_UNIX socket we hold (the gofer's, ours: of the host's
	 * network namespace) bound to an abstract name: a squat on a name a
	 * host service would take, and its datagrams ours (red team 72). The
	 * filter has no bind (moat-netd or the guest's init binds a guest
	 * socket). Every one we hold is tried but the probe's own unnamed
	 * socket (probe_sock: the dotdot probe's); and the caller's stdio, the
	 * guest's fds 0-2 too (which we could take with pidfd_getfd): an
	 * unnamed AF_UNIX socket there (a service's stdout to journald) was
	 * ours to name until the filter dropped bind */
	{
		int nunix = 0, bound = 0, err = 0, nstd = 0, bstd = 0, estd = 0;
		for (int f = 0; f < 1024; f++) {
			struct sockaddr_un su;
			socklen_t sl = sizeof su;
			if (f == probe_sock || getsockname(f, (struct sockaddr *)&su, &sl) < 0 || su.sun_family != AF_UNIX)
				continue;
			if (f < 3 && sl > offsetof(struct sockaddr_un, sun_path))
				continue; /* a named socket of the caller's: binds once */
			memset(&su, 0, sizeof su);
			su.sun_family = AF_UNIX;
			int l = snprintf(su.sun_path + 1, sizeof su.sun_path - 1, "moat-probe-%d-%d", (int)getpid(), f);
			socklen_t al = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + l);
			long r = bind(f, (struct sockaddr *)&su, al);
			int be = r == 0 ? 0 : errno;
			if (f < 3 && r < 0) {
				/* and asked of the guest's init, which binds for us
				 * (INIT_ACT_BIND): a socket of its namespace only */
				long ir = init_act_bind(sb, f, &su, al);
				if (ir == 0)
					fprintf(stderr, "confinement-probe init_bind_stdio_fd%d: ALLOWED\n", f);
				else
					fprintf(stderr, "confinement-probe init_bind_stdio_fd%d: refused (%s)\n", f,
						strerror((int)-ir));
			}
			if (f < 3)
				nstd++, bstd += r == 0, estd = be ? be : estd;
			else
				nunix++, bound += r == 0, err = be ? be : err;
			fprintf(stderr, "confinement-probe-info bind_abstract fd %d: %s\n", f, r == 0 ? "bound" : strerror(be));
		}
		if (bound)
			fprintf(stderr, "confinement-probe bind_abstract: ALLOWED\n");
		else if (nunix)
			fprintf(stderr, "confinement-probe bind_abstract: refused (%s)\n", strerror(err));
		if (bstd)
			fprintf(stderr, "confinement-probe bind_abstract_stdio: ALLOWED\n");
		else if (nstd)
			fprintf(stderr, "confinement-probe bind_abstract_stdio: refused (%s)\n", strerror(estd));
	}
	if (host > 0) {
		/* its limits (red team 72: RLIMIT_CPU killed a caller's process
		 * rootless, past the Landlock signal scope): the value it has,
		 * written back */
		struct rlimit rl;
		probe("prlimit_host_pid", prlimit(host, RLIMIT_CPU, NULL, &rl) < 0 ? -1 : prlimit(host, RLIMIT_CPU, &rl, NULL));
		probe("prlimit_host_pid_fsize", prlimit(host, RLIMIT_FSIZE, NULL, &rl) < 0 ? -1 : prlimit(host, RLIMIT_FSIZE, &rl, NULL));
		probe("prlimit_host_pid_stack", prlimit(host, RLIMIT_STACK, NULL, &rl) < 0 ? -1 : prlimit(host, RLIMIT_STACK, &rl, NULL));
		/* and those it enforces without one (initrows2: rootless a
		 * lowered RLIMIT_NOFILE, RLIMIT_AS or RLIMIT_NPROC refused a
		 * caller's process its next open, allocation or fork; the
		 * guest's init makes a guest's sets now) */
		probe("prlimit_host_pid_nofile", prlimit(host, RLIMIT_NOFILE, NULL, &rl) < 0 ? -1 : prlimit(host, RLIMIT_NOFILE, &rl, NULL));
		probe("prlimit_host_pid_as", prlimit(host, RLIMIT_AS, NULL, &rl) < 0 ? -1 : prlimit(host, RLIMIT_AS, &rl, NULL));
		probe("prlimit_host_pid_nproc", prlimit(host, RLIMIT_NPROC, NULL, &rl) < 0 ? -1 : prlimit(host, RLIMIT_NPROC, &rl, NULL));
		/* SIGIO to it: F_SETOWN succeeds, the delivery is what Landlock
		 * scopes (the tier checks the process lives) */
		int sp[2];
		if (pipe2(sp, O_CLOEXEC | O_NONBLOCK) == 0) {
			if (fcntl(sp[0], F_SETOWN, host) == 0 && fcntl(sp[0], F_SETSIG, SIGTERM) == 0 &&
			    fcntl(sp[0], F_SETFL, O_ASYNC | O_NONBLOCK) == 0 && write(sp[1], "x", 1) == 1)
				fprintf(stderr, "confinement-probe-info sigio_host_pid: sent\n");
			close(sp[0]);
			close(sp[1]);
		}
		probe("kcmp_host_pid", syscall(SYS_kcmp, getpid(), host, KCMP_VM, 0, 0));
		long hp = syscall(SYS_pidfd_open, host, 0);
		probe("pidfd_send_signal_host_pid", hp < 0 ? -1 : syscall(SYS_pidfd_send_signal, (int)hp, 0, NULL, 0));
		if (hp >= 0)
			close((int)hp);
		char hpath[64];
		snprintf(hpath, sizeof hpath, "%d/environ", (int)host);
		probe("procfs_host_pid", openat(pfd, hpath, O_RDONLY | O_CLOEXEC));
		/* its scheduling (initrows2: rootless nice 19, the idle I/O
		 * class, SCHED_IDLE or one CPU slowed down any of the caller's
		 * processes; the guest's init makes a guest's now). Values any
		 * owner may set (our filter refuses the reads of most): nice
		 * 19 (the tier's idle process), the best-effort I/O class's
		 * default level, SCHED_OTHER, its affinity as read */
		probe("setpriority_host_pid", setpriority(PRIO_PROCESS, (id_t)host, 19));
		probe("ioprio_set_host_pid", syscall(SYS_ioprio_set, 1 /* IOPRIO_WHO_PROCESS */, host, (2 << 13) | 4));
		cpu_set_t cs;
		probe("sched_setaffinity_host_pid", sched_getaffinity(host, sizeof cs, &cs) < 0 ? -1 :
			sched_setaffinity(host, sizeof cs, &cs));
		struct sched_param sp0 = { 0 };
		probe("sched_setparam_host_pid", sched_setparam(host, &sp0));
		probe("sched_setscheduler_host_pid", sched_setscheduler(host, SCHED_OTHER, &sp0));
		struct { uint32_t size, policy; uint64_t flags; int32_t nice; uint32_t prio; uint64_t rt, dl, per; } sa = {
			.size = sizeof sa, .policy = SCHED_OTHER, .nice = 19 };
		probe("sched_setattr_host_pid", syscall(SYS_sched_setattr, host, &sa, 0));
	}
	/* resizing a terminal: never, the caller's on fds 0-2 least of all
	 * (red team 71: the filter allowed TIOCSWINSZ on any fd; the gofer
	 * makes the sandbox's own resizes now). The size set is the one read,
	 * so a hole changes nothing; on a non-terminal the kernel says ENOTTY:
	 * only the filter's EPERM is a refusal */
	for (int fd = 0; fd < 3; fd++) {
		char lbl[32];
		struct winsize ws;
		memset(&ws, 0, sizeof ws);
		(void)ioctl(fd, TIOCGWINSZ, &ws);
		snprintf(lbl, sizeof lbl, "tiocswinsz_fd%d", fd);
		probe(lbl, ioctl(fd, TIOCSWINSZ, &ws) < 0 && errno == EPERM ? -1 : 0);
	}
	if (host > 0) {
		probe("kill_host_pid", kill(host, 0));
		probe("kill_host_pid_term", kill(host, SIGTERM));
		probe("ptrace_host_pid", ptrace(PTRACE_ATTACH, host, 0, 0));
		char b[8];
		struct iovec l = { b, sizeof b }, r = { (void *)0x400000, sizeof b };
		probe("vm_readv_host_pid", process_vm_readv(host, &l, 1, &r, 1, 0));
		long pid_fd = syscall(SYS_pidfd_open, host, 0);
		probe("pidfd_getfd_host_pid", pid_fd < 0 ? pid_fd : syscall(SYS_pidfd_getfd, (int)pid_fd, 0, 0));
		if (pid_fd >= 0)
			close((int)pid_fd);
	}
	if (gofer > 0) {
		/* the gofer (red team 72): rootless it shares our uid; it is
		 * outside our Landlock domain (forked before it), root-run it is
		 * host root's. Signal 0, an attach, a read of its memory, its fd
		 * 0, its limits (the value it has, written back) */
		probe("kill_gofer", kill(gofer, 0));
		probe("ptrace_gofer", ptrace(PTRACE_ATTACH, gofer, 0, 0));
		char gb[8];
		struct iovec gl = { gb, sizeof gb }, gr = { (void *)0x400000, sizeof gb };
		probe("vm_readv_gofer", process_vm_readv(gofer, &gl, 1, &gr, 1, 0));
		long gpf = syscall(SYS_pidfd_open, gofer, 0);
		probe("pidfd_getfd_gofer", gpf < 0 ? -1 : syscall(SYS_pidfd_getfd, (int)gpf, 0, 0));
		probe("pidfd_send_signal_gofer", gpf < 0 ? -1 : syscall(SYS_pidfd_send_signal, (int)gpf, 0, NULL, 0));
		if (gpf >= 0)
			close((int)gpf);
		struct rlimit grl;
		probe("prlimit_gofer", prlimit(gofer, RLIMIT_CPU, NULL, &grl) < 0 ? -1 : prlimit(gofer, RLIMIT_CPU, &grl, NULL));
		probe("kcmp_gofer", syscall(SYS_kcmp, getpid(), gofer, KCMP_FILES, 0, 0));
	}
	{
		/* a datagram to a host socket by path, from an unnamed socket
		 * (probe_sock: as a guest's, which we could take with
		 * pidfd_getfd): a path resolves in our root, which held the
		 * exports as read-only binds at "/<index>" (a read-only mount
		 * does not stop a send to a socket inode; sendmsg's address is
		 * in memory, where no seccomp rule reads it). They are
		 * in a detached box now (privilege.c box_export): no path
		 * reaches them. The root's only other name, /.empty, and the
		 * guest procfs (no mount of it in our root: its magic links
		 * are no path a sun_path can name) */
		const char *dg = getenv("MOAT_TEST_CONFINEMENT_DGRAM");
		for (size_t i = 0; dg && probe_sock >= 0 && i <= nroots; i++) {
			struct sockaddr_un su = { .sun_family = AF_UNIX };
			char lbl[48];
			if (i < nroots)
				snprintf(su.sun_path, sizeof su.sun_path, "/%zu/%.80s", i, dg);
			else
				snprintf(su.sun_path, sizeof su.sun_path, "/proc/self/root/%.80s", dg);
			snprintf(lbl, sizeof lbl, i < nroots ? "dgram_export_path_%zu" : "dgram_proc_path", i);
			probe(lbl, sendto(probe_sock, "moat-probe", 10, MSG_DONTWAIT, (struct sockaddr *)&su,
					  sizeof su) < 0 ? -1 : 0);
		}
	}
	/* the caller's stdio (the guest's fds 0-2 too), its mode and times
	 * written back as they are: rootless the caller's files are our
	 * uid's, so only the filter refuses (no fchmod, no futimens: the
	 * gofer sets a memfd's, GOFER_OP_MEMFDATTR); root-run the kernel
	 * does too (the sentry's uid owns nothing of the caller's) */
	for (int fd = 0; fd < 3; fd++) {
		struct stat st;
		if (fstat(fd, &st) < 0)
			continue;
		struct timespec ts[2] = { st.st_atim, st.st_mtim };
		char lbl[32];
		snprintf(lbl, sizeof lbl, "fchmod_stdio_fd%d", fd);
		probe(lbl, fchmod(fd, st.st_mode & 0777));
		snprintf(lbl, sizeof lbl, "futimens_stdio_fd%d", fd);
		probe(lbl, futimens(fd, ts));
	}
	netconn_selftest();
	broker_selftest();
	fprintf(stderr, "confinement-probe landlock_abi: %d\n", scope_abi);
	fprintf(stderr, "confinement-probe done\n");
}
