/* common/util.h - small helpers shared by every folder. No side effects on
 * global state; anything that touches the system lives in the folder that
 * owns it. */
#ifndef MOAT_COMMON_UTIL_H
#define MOAT_COMMON_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

/* Canonical guest paths inside the sentry and on the gofer protocol. A guest
 * passes at most PATH_MAX bytes per call, but relative walks (from a dirfd or
 * the cwd) reach deeper: Linux has no bound there, moat this one (longer is
 * ENAMETOOLONG). The gofer opens such paths in PATH_MAX-sized steps. */
#define VFS_PATH_MAX (4 * 4096)

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define UNUSED __attribute__((unused))
#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

/* cleanup idiom (bubblewrap/crun): `cleanup_fd int fd = -1;` */
static inline void cleanup_fdp(int *fd) { if (*fd >= 0) close(*fd); }
static inline void cleanup_freep(void *p) { free(*(void **)p); }
#define cleanup_fd __attribute__((cleanup(cleanup_fdp)))
#define cleanup_free __attribute__((cleanup(cleanup_freep)))
static inline int steal_fd(int *fd) { int r = *fd; *fd = -1; return r; }
static inline void *steal_ptr(void *pp) { void **p = pp; void *r = *p; *p = NULL; return r; }

void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t m);
char *xstrdup(const char *s);
/* Room for one more element in the array *arrp (a T **) of *cap elements
 * of size bytes, n of them in use: doubles it when full (first elements
 * the first time). 0, or -ENOMEM with the array as it was. */
int grow_array(void *arrp, size_t *cap, size_t n, size_t size, size_t first);
/* grow_array that dies when memory runs out */
void xgrow_array(void *arrp, size_t *cap, size_t n, size_t size, size_t first);

/* 64-bit hash (xxHash XXH3) - ids, caches, policy versions. */
uint64_t moat_hash(const void *data, size_t len);

/* Write/read everything, retrying on EINTR/short counts. 0 or -errno. */
int write_all(int fd, const void *buf, size_t len);
/* write_all that, while fd takes nothing (a full pipe nobody reads), asks
 * give_up every 100 ms: -EAGAIN once it says so */
int write_while(int fd, const void *buf, size_t len, int (*give_up)(void));
/* inotify_add_watch(ifd, name, mask) with name relative to directory fd dfd
 * (an O_PATH fd will do): from a short-lived thread with a working directory
 * of its own (unshare(CLONE_FS), fchdir), for a process without a procfs
 * for /proc/self/fd/N whose other threads keep theirs. The watch descriptor
 * or -errno. (The sentry's inotify_add_watch and the gofer's WATCH.) */
int watch_at(int ifd, int dfd, const char *name, uint32_t mask);
/* Write the string s to an existing file (procfs id maps, cgroup knobs): 0 or -errno. */
int write_file(const char *path, const char *s);
/* The number a file (a /proc/sys value) starts with; -1 when it cannot be read. */
long read_long_file(const char *path);
struct stat;
struct statx;
/* statx's basic fields as a struct stat (the rest zero) */
void statx_to_stat(const struct statx *sx, struct stat *st);
/* the host mount fd is on (statx STATX_MNT_ID, Linux >= 5.8), 0 when unknown */
uint64_t fd_mount_id(int fd);
/* fstat and fd_mount_id in one statx (*mnt 0 when unknown): 0 or -errno */
int fd_stat_mount(int fd, struct stat *st, uint64_t *mnt);
/* Field n (1-based, as proc(5) numbers them; n >= 3) of a /proc/<pid>/stat
 * text: a pointer into text at its first character, or NULL. The command
 * (field 2) may hold spaces and ')': fields are counted after its last ')'. */
char *proc_stat_field(char *text, int n);
/* open(2) of a file moat writes as the caller at a path the caller named
 * (--audit, --result): a final symlink or a non-regular file there is
 * refused (ELOOP / EINVAL, errno set, -1), since a sandbox with a rw bind
 * of that directory may have made it for the caller's next run; a path
 * under /dev/ or /proc/ (/dev/stderr, /dev/fd/N of a process
 * substitution) opens as before. */
int open_caller_output(const char *path, int flags, mode_t mode);
/* stat(2) of a host path the caller named for moat to serve or write in
 * (--bind SRC, --root, --overlay, --export DIR): its last component is not
 * followed, and a symlink there is refused (ELOOP, -1): a sandbox with a rw
 * bind of the directory may have planted it for the caller's next run
 * (red team 92). The caller's own links in the directory part are still
 * followed. */
struct stat;
int stat_caller_source(const char *path, struct stat *st);
/* getenv(name) in a -DMOAT_DEV_KNOBS build, else NULL: the knobs that
 * weaken confinement or isolation */
const char *moat_dev_knob(const char *name);
/* Why open_caller_output or stat_caller_source failed, for a one-line
 * error (errno e). */
const char *caller_output_error(int e);
/* Why a fork, clone or pthread_create of moat's failed with errno e, for a
 * one-line start-up error: with EAGAIN under a finite RLIMIT_NPROC, "the
 * caller's process limit (ulimit -u N) is reached" (a rootless sandbox may
 * use three quarters of it: sentry/privilege.c); else strerror(e). The
 * text is in buf (len >= 96). */
const char *spawn_error(int e, char *buf, size_t len);
/* Read a small text file (path relative to dfd, or AT_FDCWD; O_NOFOLLOW)
 * into buf with one read, NUL-terminated: its length (> 0), or -1 when it
 * cannot be opened or read or is empty. */
ssize_t read_text_at(int dfd, const char *path, char *buf, size_t size);
/* The network namespace cookie of socket fd (SO_NETNS_COOKIE), 0 when it
 * cannot be read: names the namespace the kernel looks names up in. */
uint64_t sock_netns_cookie(int fd);
/* "cannot create the sandbox's processes (" what "): " spawn_error(e) */
#define SPAWN_FAILED_FMT "cannot create the sandbox's processes (%s): %s"
int read_all(int fd, void *buf, size_t len);

/* Send/receive a message with up to nfds fds (SCM_RIGHTS). Return bytes or -errno.
 * recv_fds: *nfds_inout is capacity in, count received out; fds get O_CLOEXEC. */
long send_fds(int sock, const void *buf, size_t len, const int *fds, int nfds);
/* Two AF_INET/AF_INET6 addresses (struct sockaddr_storage, passed as void *
 * so callers need no socket header here) of one family with the same port
 * and address (and IPv6 scope): 1, else 0. */
int sockaddr_same_inet(const void *a, const void *b);
/* The same with sendmmsg: for a process under the guest's filter, where
 * every sendmsg is a ptrace stop (the listener fd goes to the sentry before
 * its tracer runs). */
/* A filtered child hands fd to its tracer (who may pidfd_getfd it) without
 * a send*msg: writes "L" and the number on sock, waits for one byte back.
 * 0 or -errno. */
int send_fd_number(int sock, int fd);
/* The other side: num (the int after "L"), taken from pid with
 * pidfd_getfd, then the byte the child waits for. The fd or -errno. */
int take_fd_number(int sock, pid_t pid, const char *num);
long recv_fds(int sock, void *buf, size_t len, int *fds, int *nfds_inout);

/* fork() for a moat helper process (moat-netd, moat-broker, moat-publish,
 * moat-reopen): in the child (0) it is killed when the forking thread ends
 * (PDEATHSIG; it exits at once if that already happened), named name, and
 * not dumpable. The child's pid, 0 in the child, or -1. */
pid_t moat_fork_helper(const char *name);

/* The identity map of the ids we have ourselves: each line "a b c" of self
 * (/proc/self/uid_map or gid_map) as "a a c", into out. 0, -errno, -EINVAL
 * when nothing was read (the gofer's and the root-run sentry's maps). */
int moat_identity_map(const char *self, char *out, size_t len);


/* Spin-then-sleep waits between the sentry and the gofer (gofer/client.c,
 * gofer/server.c). A round trip to the gofer is two wake-ups of a sleeping
 * thread, and on an otherwise idle 2-vCPU VM the kernel puts each on the
 * other, idle, CPU (a sync wake-up prefers an idle previous CPU): an IPI
 * and a halted vCPU woken by the host, 30-60 µs each. A waiter that polls
 * without sleeping (poll with no timeout, then sched_yield, so that a thread
 * woken on its own CPU runs at once) for a little while is never woken at
 * all. The budget is
 * MOAT_SPIN_US (microseconds, default SPIN_DEFAULT_US, 0: never spin), read
 * once by spin_setup in each process. spin_poll backs off when it is of no
 * use: after SPIN_FAILS_MAX waits in a row that outlasted the budget it
 * sleeps at once for the next SPIN_SKIP_FAIL waits, and when it sees itself
 * descheduled (a gap of SPIN_PREEMPT_US between two polls: another thread
 * wants this CPU) for the next SPIN_SKIP_BUSY. ARCHITECTURE.md "The
 * gofer's round trip: spin, then sleep". */
#define SPIN_DEFAULT_US 50
#define SPIN_FAILS_MAX 4
#define SPIN_SKIP_FAIL 16
#define SPIN_SKIP_BUSY 32
#define SPIN_PREEMPT_US 40
struct spin_state {
	unsigned skip;          /* waits left that do not spin */
	unsigned fails;         /* waits in a row that outlasted the budget */
};
void spin_setup(void);
/* poll(p, n, 0) until one is ready or the budget is spent: poll's result
 * (> 0: ready; < 0: its error), 0 when nothing came (or no spin now). */
struct pollfd;
int spin_poll(struct pollfd *p, int n, struct spin_state *s);
/* this process's waits: seen while spinning, budget spent, descheduled
 * (backing off), not spun (backing off) */
extern unsigned long spin_stats[4];

/* Workers that wait for another guest task (a FIFO's peer, a lock's holder,
 * a lease's break, a listener's accept, room in a peer's socket) look every
 * so often whether their guest task has a signal to take
 * (task_signal_pending: an open and read of its /proc status, ~25 µs).
 * wait_poll_ms(base): how long one of them waits between two looks — base
 * ms while few wait, longer as more do, so that all of them together look
 * about WAIT_POLLS_PER_S times a second (never less often than every
 * WAIT_POLL_MAX_MS, nor more often than base). wait_poll_note(+1/-1): a
 * worker starts or ends such a wait (pipeline_wait_begin/end). Before red
 * team 65 each looked every 20 ms whatever their number: 1000 guest
 * threads asleep in FIFO opens or flock waits kept the sentry busy at
 * 1.1-1.3 CPUs (50,000 status reads a second) while the guest used none,
 * and another thread's stat took 2 s. ARCHITECTURE.md "Workers, blocking
 * calls and signals". */
#define WAIT_POLLS_PER_S 2000
#define WAIT_POLL_MAX_MS 1000
void wait_poll_note(int delta);
int wait_poll_ms(int base);
int wait_pollers(void);

/* The main thread's stack pages below the caller's frame that set-up's
 * deep calls dirtied, given back (an idle sandbox's PSS). stack_trim_note
 * reads where the [stack] mapping begins (/proc/self/maps: before any
 * confinement), stack_trim (later, madvise only) drops the pages between
 * that and 16 KiB below its caller's frame; nothing outside the mapping
 * (it only grows down). Main thread only. */
void stack_trim_note(void);
void stack_trim(void);
/* A helper of moat's (the gofer, moat-cgroup) out of the caller's terminal:
 * a process group of its own (the terminal's ^C, ^Z and hang-up go to the
 * foreground group, moat's, never to it) and no controlling terminal
 * (/dev/tty is ENXIO; a terminal it opens never becomes one: only a session
 * leader acquires one). setsid() would do both, but under
 * sched_autogroup_enabled it also makes a new autogroup, whose first slice
 * the gofer waited for on the start-up's critical path (0.05-4.7 ms under
 * load: ARCHITECTURE "Issue 6, start39", "start40"). setsid() still when the
 * terminal cannot be let go of otherwise (/dev/tty not openable: hung up,
 * exclusive, no /dev here; and none of fds 0-2 is the terminal).
 * Single-threaded callers, before they confine themselves. 0 or -errno. */
int leave_caller_terminal(void);

/* A helper the guest talks to (moat-netd, moat-broker, moat-publish: each
 * parses or relays guest bytes, and its filter allows read, write and fcntl
 * on any fd) keeps nothing of the caller's terminal or stdio: out of its
 * terminal (leave_caller_terminal), fds 0-2 pipes with no other end (a read
 * is the end of file, a write EPIPE); fd 2 stays under MOAT_DEBUG. Red team
 * 89: they held the caller's terminal as fds 1-2, read-write, in its
 * foreground group, so a compromised one wrote past the terminal-controls
 * filter (a query the terminal answers into the caller's shell) or read its
 * keys. Returns the old stderr (a CLOEXEC copy above 63, 2 under
 * MOAT_DEBUG) for the set-up's last message, to be closed once confined;
 * -1 on failure. */
int helper_leave_caller_stdio(void);
/* moat's own read-only file pages (text, rodata, the ELF headers and
 * dynamic symbols: the PT_LOAD segments without PF_W, less any page of
 * PT_GNU_RELRO or of a writable segment) unmapped from this process
 * (MADV_DONTNEED: they stay in the page cache, and a later access maps
 * them again from it). An idle sandbox's PSS: one fault maps a whole
 * large folio, so set-up left nearly all of moat's text mapped in each
 * process. Never the relocated pages (they are private copies). */
void text_trim(void);

/* Guest names in moat's output for people (red team 50: one rule for all).
 * moat_cp_hidden: a code point a reader does not see as itself: the C1
 * controls U+0080-U+009F (CSI, OSC to a terminal that takes them), the
 * Arabic letter mark U+061C, U+200E/F, the line and paragraph separators
 * U+2028/9 and the bidirectional embeddings and overrides U+202A-E and
 * isolates U+2066-9, which reorder what a terminal or an editor shows of
 * the rest of the line. Every JSON string moat writes (the --audit
 * records, the export's manifest) has them as \uXXXX. */
int moat_cp_hidden(uint32_t cp);
/* Text moat writes to the caller's stderr (its messages, common/log.c; its
 * --trace lines, sentry/audit.c): appends the n bytes of s to out at o,
 * every byte outside printable ASCII (and '\\' when esc_bs) as \ooo, as
 * much as fits before cap (one byte kept for the NUL, an escape never cut);
 * returns the new length, *cut set when s did not fit whole. */
size_t moat_escape_text(char *out, size_t cap, size_t o, const char *s, size_t n, int esc_bs,
			int *cut);
/* A path as git writes it with core.quotePath (its default): as it is when
 * every byte is printable ASCII other than '"' and '\\', else the whole of
 * prefix+s between double quotes with \" \\ \a \b \t \n \v \f \r and
 * every other byte below 0x20, DEL and every byte from 0x80 as \ooo (git
 * apply reads both forms back). strict (moat diff's lines) quotes too a
 * name a line would show ambiguously: a leading or trailing space, " -> ",
 * ": ". Written into out (cap > 0), cut at an escape's boundary, never
 * within one (then no closing quote); returns the length written. cap of
 * 4 * (strlen(prefix) + strlen(s)) + 3 always holds it. */
size_t moat_quote_path(char *out, size_t cap, const char *prefix, const char *s, int strict);

/* 1 when host path a is b or lies inside it (each one's realpath, then the
 * st_dev/st_ino of every ancestor of a against b's: a directory reached by
 * two names, a bind mount of it elsewhere, is still one); 0 when not; -1
 * when either cannot be resolved. moat_paths_overlap: either way. */
int moat_path_inside(const char *a, const char *b);
int moat_paths_overlap(const char *a, const char *b);
/* The same for two open objects (O_PATH fds will do): 1 when a is b or
 * beneath it, walked up by ".." from the object itself (a directory; a
 * file's own directory is named by its /proc/self/fd link), 0 if not, -1
 * on error. The objects checked are the ones later used (red team 71: the
 * names were resolved once for the check and again for the use). */
int moat_fd_inside(int a, int b);
int moat_fds_overlap(int a, int b);

/* Makes a task that then ends the SIGIO owner of each of fds (F_GETOWN 0
 * after, no signal reaches it), where no owner at all would let a
 * terminal's O_ASYNC make its foreground process group the owner (the
 * kernel's tty_fasync). type F_OWNER_PGRP, else F_OWNER_PID (what
 * F_GETOWN_EX shows). 0, or the first -errno. */
int moat_sigio_dead_owner(const int *fds, int n, int type);

#endif
