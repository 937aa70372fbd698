/* sentry/spawn.h - creating the guest (see spawn.c). */
#ifndef MOAT_SENTRY_SPAWN_H
#define MOAT_SENTRY_SPAWN_H

#include <linux/filter.h>
#include <signal.h>
#include <sys/types.h>

struct spawn_args {
	struct sock_fprog *filter;   /* the guest's seccomp program */
	char *const *argv;           /* program + args (argv[0] is the path to exec) */
	char *const *envp;
	uid_t uid;                   /* caller's ids: the guest keeps them */
	gid_t gid;
	int tty_fd;                  /* -t: the pty slave (the init's controlling terminal and the program's stdio), else -1 */
	int tty_fds;                 /* the program's fds 0-2 (bits) that are tty_fd */
	int tty_ctty;                /* -t: tty_fd is the init's controlling terminal */
	int out_fd, err_fd;          /* --output-limit: the program's stdout/stderr pipes, else -1 */
	unsigned long nproc;         /* RLIMIT_NPROC of the guest (0: unchanged) */
	unsigned long long data;     /* RLIMIT_DATA of the guest (0: unchanged) */
	unsigned ncpus;              /* --cpus: the guest's affinity, its first ncpus CPUs (0: unchanged) */
	/* called with the init's pid before it is let go (it has not forked
	 * yet): the cgroup move; < 0 fails the spawn */
	int (*attach)(void *arg, pid_t init_pid, char *err, size_t errlen);
	void *attach_arg;
	const unsigned char *loader;  /* loader image */
	size_t loader_len;
	int dns_stub;                /* --net allow=: the init binds 127.0.0.53:53/udp in the guest netns */
	const sigset_t *prog_blocked;  /* the program's signal mask and ignored signals at exec */
	const sigset_t *prog_ignored;  /* (the caller's: sentry_config), or NULL: none */
	int stdio_closed;              /* bit N: fd N (0-2) closed at exec (the caller's was: sentry_config) */
	unsigned long long nofile_cur; /* the program's soft RLIMIT_NOFILE (the caller's), 0: as it is */
	int core_zero;                 /* the real RLIMIT_CORE may be {0, 0} (sandbox core_zero) */
};

struct spawn_result {
	pid_t init_pid;              /* host pid of the guest's pid 1 */
	int sync_sock;               /* sentry end of the set-up socket */
	int act_fd;                  /* sentry end of the init's act channel (init_act) */
	int guest_procfd;            /* procfs of the guest pid namespace */
	unsigned long long init_start_ticks; /* the init's starttime (host boot clock
				      * ticks, as its /proc stat shows it), or 0: unknown;
				      * after spawn_guest_finish, with a time namespace,
				      * the sandbox's boot its clocks count from */
	int timens_errno;            /* 0, or why the guest has no time namespace of its own */
	int dns_fd;                  /* the DNS stub's socket in the guest netns, or -1 */
	int relay_fd[2];             /* the UDP relay's sockets in the guest netns (127.0.0.53
				      * and ::1, ephemeral ports; with dns_stub), or -1 */
	int icmp_fd[2];              /* its raw ICMP and ICMPv6 sockets (bound to 127.0.0.53 and
				      * ::1, taking no packet: netd.c relay_icmp), or -1 */
};

/* Clone the guest init, write its id maps, seize it with ptrace and let it
 * build its namespaces (it works while the caller starts the gofer).
 * Returns 0 or -errno with a reason in err. */
int spawn_guest(const struct spawn_args *a, struct spawn_result *r, char *err, size_t errlen);
/* Receive the init's procfs fd (or its set-up error). The init then forks the
 * program (the caller sees the fork as a ptrace event). */
int spawn_guest_finish(struct spawn_result *r, char *err, size_t errlen);

#endif
