/* syscalls/decode.c - strace-like decoding of a trapped call.
 *
 * Driven by the argument kinds of the table row (table.h enum sc_argkind):
 * one printer per kind, flag-name tables below (the xlat idea of strace,
 * kept small: only what a trace of real programs shows). Only copies made by
 * the pipeline are read, never guest memory.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/netlink.h>
#include <linux/openat2.h>
#include <linux/stat.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <termios.h>

#include "syscalls/decode.h"
#include "common/util.h"

/* ---- output buffer: appends truncate silently, never split an escape ---- */

struct obuf {
	char *p;
	size_t len;   /* characters written */
	size_t cap;   /* bytes available including the NUL */
	bool full;
};

static void ob_init(struct obuf *b, char *p, size_t cap)
{
	b->p = p;
	b->len = 0;
	b->cap = cap;
	b->full = cap == 0;
	if (cap)
		p[0] = '\0';
}

/* append n bytes as a unit: all of them or none */
static void ob_putn(struct obuf *b, const char *s, size_t n)
{
	if (b->full || b->len + n + 1 > b->cap) {
		b->full = true;
		return;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

static void ob_puts(struct obuf *b, const char *s)
{
	ob_putn(b, s, strlen(s));
}

/* A cut shows: ob_init_cut keeps 3 bytes of cap back (when there are more
 * than 8), and ob_end_cut writes "..." there if something did not fit.
 * Red team 86: a guest string longer than the buffer ended the args (or
 * the JSON args) without a sign, its tail, the part that mattered, gone. */
#define OB_CUT_MARK "..."
static void ob_init_cut(struct obuf *b, char *p, size_t cap)
{
	ob_init(b, p, cap > 8 ? cap - (sizeof OB_CUT_MARK - 1) : cap);
}

static size_t ob_end_cut(struct obuf *b, size_t cap)
{
	if (b->full && cap > 8) {
		b->cap = cap;
		b->full = false;
		ob_puts(b, OB_CUT_MARK);
	}
	return b->len;
}

static void ob_printf(struct obuf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void ob_printf(struct obuf *b, const char *fmt, ...)
{
	char tmp[128];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	ob_putn(b, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

/* ---- flag tables ---- */

struct xlat {
	uint64_t val;
	const char *name;
};

#define X(v) { (uint64_t)(v), #v }
#define XEND { 0, NULL }

/* Print set bits by name, "|"-joined, the rest as hex; "0" if none. */
static void print_flags(struct obuf *b, const struct xlat *x, uint64_t v,
			bool any)
{
	bool first = !any;

	for (; x->name; x++) {
		if (x->val && (v & x->val) == x->val) {
			ob_printf(b, "%s%s", first ? "" : "|", x->name);
			v &= ~x->val;
			first = false;
		}
	}
	if (v || first)
		ob_printf(b, "%s%#" PRIx64, first ? "" : "|", v);
}

static const char *xlookup(const struct xlat *x, uint64_t v)
{
	for (; x->name; x++)
		if (x->val == v)
			return x->name;
	return NULL;
}

static const struct xlat open_flags[] = {
	X(O_CREAT), X(O_EXCL), X(O_NOCTTY), X(O_TRUNC), X(O_APPEND),
	X(O_NONBLOCK), X(O_DSYNC), X(O_SYNC), X(O_DIRECT), X(O_LARGEFILE),
	X(O_DIRECTORY), X(O_NOFOLLOW), X(O_NOATIME), X(O_CLOEXEC), X(O_PATH),
	X(FASYNC), XEND
};

static void print_oflags(struct obuf *b, uint64_t v)
{
	static const char *const acc[] = { "O_RDONLY", "O_WRONLY", "O_RDWR",
					   "O_ACCMODE" };

	v &= 0xffffffff;
	ob_puts(b, acc[v & O_ACCMODE]);
	v &= ~(uint64_t)O_ACCMODE;
	if ((v & O_TMPFILE) == O_TMPFILE) {
		ob_puts(b, "|O_TMPFILE");
		v &= ~(uint64_t)O_TMPFILE;
	}
	if (v) {
		ob_puts(b, "|");
		print_flags(b, open_flags, v, false);
	}
}

static const struct xlat at_flags[] = {
	X(AT_SYMLINK_NOFOLLOW), X(AT_SYMLINK_FOLLOW), X(AT_NO_AUTOMOUNT),
	X(AT_EMPTY_PATH), X(AT_STATX_FORCE_SYNC), X(AT_STATX_DONT_SYNC),
	X(AT_RECURSIVE), XEND
};

static void print_atflags(struct obuf *b, int nr, uint64_t v)
{
	bool any = false;

	v &= 0xffffffff;
	if (v & 0x200) { /* AT_REMOVEDIR and AT_EACCESS share the bit */
		ob_puts(b, nr == SYS_unlinkat ? "AT_REMOVEDIR" : "AT_EACCESS");
		v &= ~(uint64_t)0x200;
		any = true;
		if (!v)
			return;
	}
	if (any)
		ob_puts(b, "|");
	print_flags(b, at_flags, v, false);
}

static const struct xlat prot_flags[] = {
	X(PROT_READ), X(PROT_WRITE), X(PROT_EXEC), { 0x8, "PROT_SEM" },
	X(PROT_GROWSDOWN), X(PROT_GROWSUP), XEND
};

static const struct xlat mmap_flags[] = {
	X(MAP_FIXED), X(MAP_ANONYMOUS), X(MAP_32BIT), X(MAP_GROWSDOWN),
	X(MAP_DENYWRITE), X(MAP_EXECUTABLE), X(MAP_LOCKED), X(MAP_NORESERVE),
	X(MAP_POPULATE), X(MAP_NONBLOCK), X(MAP_STACK), X(MAP_HUGETLB),
#ifdef MAP_SYNC
	X(MAP_SYNC),
#endif
#ifdef MAP_FIXED_NOREPLACE
	X(MAP_FIXED_NOREPLACE),
#endif
	XEND
};

static void print_mmapflags(struct obuf *b, uint64_t v)
{
	static const char *const type[] = { "0", "MAP_SHARED", "MAP_PRIVATE",
					    "MAP_SHARED_VALIDATE" };

	v &= 0xffffffff;
	if ((v & 0xf) < 4)
		ob_puts(b, type[v & 0xf]);
	else
		ob_printf(b, "%#" PRIx64, v & 0xf);
	v &= ~(uint64_t)0xf;
	if (v) {
		ob_puts(b, "|");
		print_flags(b, mmap_flags, v, false);
	}
}

static const struct xlat clone_flags[] = {
	X(CLONE_VM), X(CLONE_FS), X(CLONE_FILES), X(CLONE_SIGHAND),
	X(CLONE_PIDFD), X(CLONE_PTRACE), X(CLONE_VFORK), X(CLONE_PARENT),
	X(CLONE_THREAD), X(CLONE_NEWNS), X(CLONE_SYSVSEM), X(CLONE_SETTLS),
	X(CLONE_PARENT_SETTID), X(CLONE_CHILD_CLEARTID), X(CLONE_DETACHED),
	X(CLONE_UNTRACED), X(CLONE_CHILD_SETTID), X(CLONE_NEWCGROUP),
	X(CLONE_NEWUTS), X(CLONE_NEWIPC), X(CLONE_NEWUSER), X(CLONE_NEWPID),
	X(CLONE_NEWNET), X(CLONE_IO), XEND
};

static void print_signame(struct obuf *b, uint64_t v);

static void print_cloneflags(struct obuf *b, int nr, uint64_t v)
{
	uint64_t sig = 0;

	if (nr == SYS_clone) {
		/* the low byte is the exit signal */
		sig = v & 0xff;
		v &= ~(uint64_t)0xff;
	} else if (v & CLONE_NEWTIME) {
		ob_puts(b, "CLONE_NEWTIME");
		v &= ~(uint64_t)CLONE_NEWTIME;
		if (!v)
			return;
		ob_puts(b, "|");
	}
	if (v || !sig)
		print_flags(b, clone_flags, v, false);
	if (sig) {
		if (v)
			ob_puts(b, "|");
		print_signame(b, sig);
	}
}

static const struct xlat rename_flags[] = {
	X(RENAME_NOREPLACE), X(RENAME_EXCHANGE), X(RENAME_WHITEOUT), XEND
};

static const struct xlat statx_mask[] = {
	X(STATX_TYPE), X(STATX_MODE), X(STATX_NLINK), X(STATX_UID),
	X(STATX_GID), X(STATX_ATIME), X(STATX_MTIME), X(STATX_CTIME),
	X(STATX_INO), X(STATX_SIZE), X(STATX_BLOCKS), X(STATX_BTIME),
#ifdef STATX_MNT_ID
	X(STATX_MNT_ID),
#endif
#ifdef STATX_DIOALIGN
	X(STATX_DIOALIGN),
#endif
	XEND
};

static void print_statxmask(struct obuf *b, uint64_t v)
{
	v &= 0xffffffff;
	if ((v & STATX_BASIC_STATS) == STATX_BASIC_STATS) {
		ob_puts(b, "STATX_BASIC_STATS");
		v &= ~(uint64_t)STATX_BASIC_STATS;
		if (!v)
			return;
		ob_puts(b, "|");
	}
	print_flags(b, statx_mask, v, false);
}

static const struct xlat whence[] = {
	X(SEEK_SET), X(SEEK_CUR), X(SEEK_END), X(SEEK_DATA), X(SEEK_HOLE),
	XEND
};

static const struct xlat resolve_flags[] = {
	X(RESOLVE_NO_XDEV), X(RESOLVE_NO_MAGICLINKS), X(RESOLVE_NO_SYMLINKS),
	X(RESOLVE_BENEATH), X(RESOLVE_IN_ROOT), X(RESOLVE_CACHED), XEND
};

static const struct xlat ioctls[] = {
	X(TCGETS), X(TCSETS), X(TCSETSW), X(TCSETSF), X(TCGETA), X(TCSETA),
	X(TCSBRK), X(TCXONC), X(TCFLSH), X(TIOCEXCL), X(TIOCNXCL),
	X(TIOCSCTTY), X(TIOCGPGRP), X(TIOCSPGRP), X(TIOCOUTQ), X(TIOCSTI),
	X(TIOCGWINSZ), X(TIOCSWINSZ), X(TIOCMGET), X(TIOCMSET), X(FIONREAD),
	X(TIOCLINUX), X(TIOCCONS), X(FIONBIO), X(TIOCNOTTY), X(TIOCSETD),
	X(TIOCGETD), X(TIOCSBRK), X(TIOCCBRK), X(TIOCGSID), X(TIOCGPTN),
	X(TIOCSPTLCK), X(TIOCGPTPEER), X(FIONCLEX), X(FIOCLEX), X(FIOASYNC),
	X(TIOCGLCKTRMIOS), X(TIOCSLCKTRMIOS), XEND
};

static const struct xlat fcntls[] = {
	X(F_DUPFD), X(F_GETFD), X(F_SETFD), X(F_GETFL), X(F_SETFL),
	X(F_GETLK), X(F_SETLK), X(F_SETLKW), X(F_SETOWN), X(F_GETOWN),
	X(F_SETSIG), X(F_GETSIG), X(F_SETOWN_EX), X(F_GETOWN_EX),
	X(F_OFD_GETLK), X(F_OFD_SETLK), X(F_OFD_SETLKW), X(F_SETLEASE),
	X(F_GETLEASE), X(F_NOTIFY), X(F_DUPFD_CLOEXEC), X(F_SETPIPE_SZ),
	X(F_GETPIPE_SZ), X(F_ADD_SEALS), X(F_GET_SEALS), XEND
};

static const struct xlat families[] = {
	X(AF_UNSPEC), X(AF_UNIX), X(AF_INET), X(AF_AX25), X(AF_IPX),
	X(AF_APPLETALK), X(AF_NETROM), X(AF_BRIDGE), X(AF_ATMPVC), X(AF_X25),
	X(AF_INET6), X(AF_ROSE), X(AF_DECnet), X(AF_NETBEUI), X(AF_SECURITY),
	X(AF_KEY), X(AF_NETLINK), X(AF_PACKET), X(AF_ASH), X(AF_ECONET),
	X(AF_ATMSVC), X(AF_RDS), X(AF_SNA), X(AF_IRDA), X(AF_PPPOX),
	X(AF_WANPIPE), X(AF_LLC), X(AF_IB), X(AF_MPLS), X(AF_CAN), X(AF_TIPC),
	X(AF_BLUETOOTH), X(AF_IUCV), X(AF_RXRPC), X(AF_ISDN), X(AF_PHONET),
	X(AF_IEEE802154), X(AF_CAIF), X(AF_ALG), X(AF_NFC), X(AF_VSOCK),
	X(AF_KCM), X(AF_QIPCRTR), X(AF_SMC), X(AF_XDP), { 45, "AF_MCTP" },
	XEND
};

static const struct xlat sock_types[] = {
	X(SOCK_STREAM), X(SOCK_DGRAM), X(SOCK_RAW), X(SOCK_RDM),
	X(SOCK_SEQPACKET), X(SOCK_DCCP), X(SOCK_PACKET), XEND
};

static const struct xlat sock_type_flags[] = {
	X(SOCK_NONBLOCK), X(SOCK_CLOEXEC), XEND
};

static const struct xlat netlink_protos[] = {
	X(NETLINK_ROUTE), X(NETLINK_UNUSED), X(NETLINK_USERSOCK),
	X(NETLINK_FIREWALL), X(NETLINK_SOCK_DIAG), X(NETLINK_NFLOG),
	X(NETLINK_XFRM), X(NETLINK_SELINUX), X(NETLINK_ISCSI), X(NETLINK_AUDIT),
	X(NETLINK_FIB_LOOKUP), X(NETLINK_CONNECTOR), X(NETLINK_NETFILTER),
	X(NETLINK_IP6_FW), X(NETLINK_DNRTMSG), X(NETLINK_KOBJECT_UEVENT),
	X(NETLINK_GENERIC), X(NETLINK_SCSITRANSPORT), X(NETLINK_ECRYPTFS),
	X(NETLINK_RDMA), X(NETLINK_CRYPTO), X(NETLINK_SMC), XEND
};

static const struct xlat ip_protos[] = {
	X(IPPROTO_IP), X(IPPROTO_ICMP), X(IPPROTO_TCP), X(IPPROTO_UDP),
	X(IPPROTO_IPV6), X(IPPROTO_ICMPV6), X(IPPROTO_SCTP), X(IPPROTO_UDPLITE),
	X(IPPROTO_RAW), X(IPPROTO_MPTCP), XEND
};

static const struct xlat persona_flags[] = {
	X(UNAME26), X(ADDR_NO_RANDOMIZE), X(FDPIC_FUNCPTRS), X(MMAP_PAGE_ZERO),
	X(ADDR_COMPAT_LAYOUT), X(READ_IMPLIES_EXEC), X(ADDR_LIMIT_32BIT),
	X(SHORT_INODE), X(WHOLE_SECONDS), X(STICKY_TIMEOUTS), X(ADDR_LIMIT_3GB),
	XEND
};

static void print_xlat_or_int(struct obuf *b, const struct xlat *x, uint64_t v)
{
	const char *name = xlookup(x, v & 0xffffffff);

	if (name)
		ob_puts(b, name);
	else
		ob_printf(b, "%d", (int)v);
}

static void print_socktype(struct obuf *b, uint64_t v)
{
	uint64_t flags = v & 0xffffffff & ~(uint64_t)0xf;

	print_xlat_or_int(b, sock_types, v & 0xf);
	if (flags) {
		ob_puts(b, "|");
		print_flags(b, sock_type_flags, flags, false);
	}
}

/* the protocol's names depend on the family in arg 0 */
static void print_sockproto(struct obuf *b, const struct sc_call *c, uint64_t v)
{
	int fam = (int)c->args[0];

	if (fam == AF_NETLINK)
		print_xlat_or_int(b, netlink_protos, v);
	else if (fam == AF_INET || fam == AF_INET6)
		print_xlat_or_int(b, ip_protos, v);
	else
		ob_printf(b, "%d", (int)v);
}

static void print_persona(struct obuf *b, uint64_t v)
{
	uint64_t flags = v & 0xffffffff & ~(uint64_t)PER_MASK;

	v &= 0xffffffff;
	if (v == 0xffffffff) {
		ob_puts(b, "0xffffffff");
		return;
	}
	if ((v & PER_MASK) == PER_LINUX)
		ob_puts(b, "PER_LINUX");
	else if ((v & PER_MASK) == PER_LINUX32)
		ob_puts(b, "PER_LINUX32");
	else
		ob_printf(b, "%#" PRIx64, v & PER_MASK);
	if (flags) {
		ob_puts(b, "|");
		print_flags(b, persona_flags, flags, false);
	}
}

static const char *const signames[] = {
	[SIGHUP] = "SIGHUP", [SIGINT] = "SIGINT", [SIGQUIT] = "SIGQUIT",
	[SIGILL] = "SIGILL", [SIGTRAP] = "SIGTRAP", [SIGABRT] = "SIGABRT",
	[SIGBUS] = "SIGBUS", [SIGFPE] = "SIGFPE", [SIGKILL] = "SIGKILL",
	[SIGUSR1] = "SIGUSR1", [SIGSEGV] = "SIGSEGV", [SIGUSR2] = "SIGUSR2",
	[SIGPIPE] = "SIGPIPE", [SIGALRM] = "SIGALRM", [SIGTERM] = "SIGTERM",
	[SIGSTKFLT] = "SIGSTKFLT", [SIGCHLD] = "SIGCHLD", [SIGCONT] = "SIGCONT",
	[SIGSTOP] = "SIGSTOP", [SIGTSTP] = "SIGTSTP", [SIGTTIN] = "SIGTTIN",
	[SIGTTOU] = "SIGTTOU", [SIGURG] = "SIGURG", [SIGXCPU] = "SIGXCPU",
	[SIGXFSZ] = "SIGXFSZ", [SIGVTALRM] = "SIGVTALRM", [SIGPROF] = "SIGPROF",
	[SIGWINCH] = "SIGWINCH", [SIGIO] = "SIGIO", [SIGPWR] = "SIGPWR",
	[SIGSYS] = "SIGSYS",
};

static void print_signame(struct obuf *b, uint64_t v)
{
	int sig = (int)(v & 0xffffffff);

	if (sig > 0 && sig < (int)(sizeof(signames) / sizeof(signames[0])) &&
	    signames[sig])
		ob_puts(b, signames[sig]);
	else if (sig == 32)
		ob_puts(b, "SIGRTMIN");
	else if (sig > 32 && sig <= 64)
		ob_printf(b, "SIGRT_%d", sig - 32);
	else
		ob_printf(b, "%d", sig);
}

/* ---- strings ---- */

static size_t quote_into(struct obuf *b, const char *s, size_t n, bool more)
{
	ob_puts(b, "\"");
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];
		char esc[8];

		switch (ch) {
		case '"':
			ob_puts(b, "\\\"");
			continue;
		case '\\':
			ob_puts(b, "\\\\");
			continue;
		case '\n':
			ob_puts(b, "\\n");
			continue;
		case '\t':
			ob_puts(b, "\\t");
			continue;
		case '\r':
			ob_puts(b, "\\r");
			continue;
		case '\v':
			ob_puts(b, "\\v");
			continue;
		case '\f':
			ob_puts(b, "\\f");
			continue;
		default:
			break;
		}
		if (ch >= 0x20 && ch < 0x7f) {
			ob_putn(b, (const char *)&ch, 1);
			continue;
		}
		/* shortest octal, unless a digit follows (strace's rule) */
		if (i + 1 < n && s[i + 1] >= '0' && s[i + 1] <= '7')
			snprintf(esc, sizeof(esc), "\\%03o", ch);
		else
			snprintf(esc, sizeof(esc), "\\%o", ch);
		ob_puts(b, esc);
	}
	ob_puts(b, "\"");
	if (more)
		ob_puts(b, "...");
	return b->len;
}

size_t sc_quote_str(char *out, size_t outlen, const char *s, size_t max)
{
	struct obuf b;
	size_t n = max ? strnlen(s, max + 1) : strlen(s); /* s need not end within max */

	ob_init_cut(&b, out, outlen);
	quote_into(&b, s, max && n > max ? max : n, max && n > max);
	return ob_end_cut(&b, outlen);
}

static void print_str(struct obuf *b, const char *s, size_t max)
{
	size_t n = strlen(s);

	quote_into(b, s, max && n > max ? max : n, max && n > max);
}

/* ---- structs copied in by the pipeline ---- */

static void print_sockaddr(struct obuf *b, const void *p, size_t len)
{
	sa_family_t fam;
	char ip[INET6_ADDRSTRLEN];

	if (len < sizeof(fam)) {
		ob_puts(b, "{}");
		return;
	}
	memcpy(&fam, p, sizeof(fam));
	if (fam == AF_INET && len >= sizeof(struct sockaddr_in)) {
		struct sockaddr_in in;

		memcpy(&in, p, sizeof(in));
		inet_ntop(AF_INET, &in.sin_addr, ip, sizeof(ip));
		ob_printf(b, "{sa_family=AF_INET, sin_port=htons(%u), "
			  "sin_addr=inet_addr(\"%s\")}", ntohs(in.sin_port), ip);
	} else if (fam == AF_INET6 && len >= sizeof(struct sockaddr_in6)) {
		struct sockaddr_in6 in6;

		memcpy(&in6, p, sizeof(in6));
		inet_ntop(AF_INET6, &in6.sin6_addr, ip, sizeof(ip));
		ob_printf(b, "{sa_family=AF_INET6, sin6_port=htons(%u), "
			  "sin6_addr=\"%s\"}", ntohs(in6.sin6_port), ip);
	} else if (fam == AF_UNIX) {
		struct sockaddr_un un;
		size_t plen = len - offsetof(struct sockaddr_un, sun_path);
		char path[sizeof(un.sun_path) + 1];

		memset(&un, 0, sizeof(un));
		memcpy(&un, p, len < sizeof(un) ? len : sizeof(un));
		if (plen > sizeof(un.sun_path))
			plen = sizeof(un.sun_path);
		ob_puts(b, "{sa_family=AF_UNIX, sun_path=");
		if (plen && un.sun_path[0] == '\0') {
			/* abstract: @name, may hold NULs, every one of them
			 * shown (\0): red team 86, "@a\0b" read "@a", another
			 * socket's name */
			memcpy(path, un.sun_path + 1, plen - 1);
			ob_puts(b, "@");
			quote_into(b, path, plen - 1, false);
		} else {
			memcpy(path, un.sun_path, plen);
			path[plen] = '\0';
			print_str(b, path, 0);
		}
		ob_puts(b, "}");
	} else {
		ob_printf(b, "{sa_family=%u, ...}", fam);
	}
}

static void print_open_how(struct obuf *b, const void *p, size_t len)
{
	struct open_how how;

	memset(&how, 0, sizeof(how));
	memcpy(&how, p, len < sizeof(how) ? len : sizeof(how));
	ob_puts(b, "{flags=");
	print_oflags(b, how.flags);
	ob_printf(b, ", mode=%#" PRIo64 ", resolve=", (uint64_t)how.mode);
	print_flags(b, resolve_flags, how.resolve, false);
	ob_puts(b, "}");
}

static void print_argv(struct obuf *b, const char *p, size_t len)
{
	size_t i = 0;
	int n = 0;

	ob_puts(b, "[");
	while (i < len && p[i]) {
		size_t l = strnlen(p + i, len - i);
		char s[SC_DECODE_STRMAX + 1];
		size_t k = l > SC_DECODE_STRMAX ? SC_DECODE_STRMAX : l;

		if (n == 32) {
			ob_puts(b, ", ...");
			break;
		}
		memcpy(s, p + i, k);
		s[k] = '\0';
		ob_puts(b, n ? ", " : "");
		quote_into(b, s, k, l > k);
		i += l + 1;
		n++;
	}
	ob_puts(b, "]");
}

static void print_mode(struct obuf *b, uint64_t v)
{
	static const struct xlat types[] = {
		X(S_IFREG), X(S_IFCHR), X(S_IFBLK), X(S_IFIFO), X(S_IFSOCK),
		X(S_IFDIR), X(S_IFLNK), XEND
	};
	const char *t = xlookup(types, v & S_IFMT);

	v &= 0xffffffff;
	if (t && (v & S_IFMT)) {
		ob_printf(b, "%s|%#" PRIo64, t, v & ~(uint64_t)S_IFMT);
		return;
	}
	ob_printf(b, "%#" PRIo64, v);
}

/* ---- one argument ---- */

static void print_ptr(struct obuf *b, uint64_t v)
{
	if (!v)
		ob_puts(b, "NULL");
	else
		ob_printf(b, "%#" PRIx64, v);
}

static void print_arg(struct obuf *b, const struct sc_call *c, int i)
{
	const struct sysent *e = c->ent;
	uint64_t v = c->args[i];
	const char *name;

	switch (e->args[i]) {
	case A_INT:
		ob_printf(b, "%d", (int)v);
		break;
	case A_UINT:
		ob_printf(b, "%u", (unsigned)v);
		break;
	case A_SIZE:
		ob_printf(b, "%" PRIu64, v);
		break;
	case A_OFF:
		ob_printf(b, "%" PRId64, (int64_t)v);
		break;
	case A_FD:
		ob_printf(b, "%d", (int)v);
		break;
	case A_DIRFD:
		if ((int)v == AT_FDCWD)
			ob_puts(b, "AT_FDCWD");
		else
			ob_printf(b, "%d", (int)v);
		break;
	case A_PATH:
	case A_STR:
		if (c->str[i])
			print_str(b, c->str[i], e->args[i] == A_STR ?
				  SC_DECODE_STRMAX : 0);
		else
			print_ptr(b, v);
		break;
	case A_OFLAGS:
		print_oflags(b, v);
		break;
	case A_MODE:
		print_mode(b, v);
		break;
	case A_ATFLAGS:
		print_atflags(b, c->nr, v);
		break;
	case A_PROT:
		if ((v & 0xffffffff) == 0)
			ob_puts(b, "PROT_NONE");
		else
			print_flags(b, prot_flags, v & 0xffffffff, false);
		break;
	case A_MMAPFLAGS:
		print_mmapflags(b, v);
		break;
	case A_SIGNUM:
		print_signame(b, v);
		break;
	case A_CLONEFLAGS:
		print_cloneflags(b, c->nr, v);
		break;
	case A_OPEN_HOW:
		if (c->buf[i] && c->buflen[i])
			print_open_how(b, c->buf[i], c->buflen[i]);
		else
			print_ptr(b, v);
		break;
	case A_SOCKADDR:
		if (c->buf[i] && c->buflen[i])
			print_sockaddr(b, c->buf[i], c->buflen[i]);
		else
			print_ptr(b, v);
		break;
	case A_ARGV:
		if (c->buf[i])
			print_argv(b, c->buf[i], c->buflen[i]);
		else
			print_ptr(b, v);
		break;
	case A_IOCTL:
		name = xlookup(ioctls, v & 0xffffffff);
		if (name)
			ob_puts(b, name);
		else
			ob_printf(b, "%#" PRIx64, v & 0xffffffff);
		break;
	case A_FCNTL:
		name = xlookup(fcntls, v & 0xffffffff);
		if (name)
			ob_puts(b, name);
		else
			ob_printf(b, "%d", (int)v);
		break;
	case A_RENAMEFLAGS:
		print_flags(b, rename_flags, v & 0xffffffff, false);
		break;
	case A_STATXMASK:
		print_statxmask(b, v);
		break;
	case A_WHENCE:
		name = xlookup(whence, v & 0xffffffff);
		if (name)
			ob_puts(b, name);
		else
			ob_printf(b, "%d", (int)v);
		break;
	case A_FAMILY:
		name = xlookup(families, v & 0xffffffff);
		if (name)
			ob_puts(b, name);
		else
			ob_printf(b, "%d", (int)v);
		break;
	case A_SOCKTYPE:
		print_socktype(b, v);
		break;
	case A_SOCKPROTO:
		print_sockproto(b, c, v);
		break;
	case A_PERSONA:
		print_persona(b, v);
		break;
	case A_PTR:
		print_ptr(b, v);
		break;
	case A_HEX:
		ob_printf(b, "%#" PRIx64, v);
		break;
	case A_NONE:
	default:
		ob_printf(b, "%#" PRIx64, v);
		break;
	}
}

/* fcntl's third argument depends on the command */
static bool print_fcntl_arg(struct obuf *b, const struct sc_call *c, int i)
{
	uint64_t v = c->args[i];

	if (c->nr != SYS_fcntl || i != 2)
		return false;
	switch ((int)c->args[1]) {
	case F_SETFL:
		print_oflags(b, v);
		return true;
	case F_SETFD:
		ob_puts(b, (v & 0xffffffff) == FD_CLOEXEC ? "FD_CLOEXEC" : "0");
		if ((v & 0xffffffff) & ~(uint64_t)FD_CLOEXEC)
			ob_printf(b, "|%#" PRIx64, v & ~(uint64_t)FD_CLOEXEC);
		return true;
	case F_DUPFD:
	case F_DUPFD_CLOEXEC:
	case F_SETOWN:
	case F_SETSIG:
	case F_SETPIPE_SZ:
		ob_printf(b, "%d", (int)v);
		return true;
	default:
		return false;
	}
}

size_t sc_decode_args(const struct sc_call *c, char *out, size_t outlen)
{
	struct obuf b;
	const struct sysent *e = c->ent;

	ob_init_cut(&b, out, outlen);
	if (!e) {
		/* unknown number: the raw registers */
		for (int i = 0; i < SC_MAXARGS; i++)
			ob_printf(&b, "%s%#" PRIx64, i ? ", " : "", c->args[i]);
		return ob_end_cut(&b, outlen);
	}
	for (int i = 0; i < e->nargs && i < SC_MAXARGS; i++) {
		if (i)
			ob_puts(&b, ", ");
		if (!print_fcntl_arg(&b, c, i))
			print_arg(&b, c, i);
	}
	return ob_end_cut(&b, outlen);
}

static bool returns_address(const struct sysent *e)
{
	return e && (e->nr == SYS_mmap || e->nr == SYS_mremap ||
		     e->nr == SYS_brk || e->nr == SYS_shmat);
}

size_t sc_decode_ret(const struct sysent *e, long ret, char *out, size_t len)
{
	struct obuf b;

	ob_init(&b, out, len);
	if (ret < 0 && ret >= -4095) {
		const char *name = sc_errno_name((int)-ret);

		if (name)
			ob_printf(&b, "-1 %s (%s)", name,
				  strerrordesc_np((int)-ret));
		else
			ob_printf(&b, "-1 errno %ld", -ret);
	} else if (returns_address(e)) {
		ob_printf(&b, "%#lx", (unsigned long)ret);
	} else {
		ob_printf(&b, "%ld", ret);
	}
	return b.len;
}

size_t sc_decode_call(const struct sc_call *c, long ret, char *out, size_t len)
{
	char args[1024], r[128];
	size_t n;

	sc_decode_args(c, args, sizeof(args));
	sc_decode_ret(c->ent, ret, r, sizeof(r));
	if (c->ent)
		n = (size_t)snprintf(out, len, "%s(%s) = %s", c->ent->name,
				     args, r);
	else
		n = (size_t)snprintf(out, len, "syscall_%d(%s) = %s", c->nr,
				     args, r);
	if (len == 0)
		return 0;
	return n < len ? n : len - 1;
}

/* ---- errno names ---- */

const char *sc_errno_name(int err)
{
	/* kernel-internal restart codes, which a trace may show */
	switch (err) {
	case 512:
		return "ERESTARTSYS";
	case 513:
		return "ERESTARTNOINTR";
	case 514:
		return "ERESTARTNOHAND";
	case 515:
		return "ENOIOCTLCMD";
	case 516:
		return "ERESTART_RESTARTBLOCK";
	default:
		break;
	}
	if (err <= 0 || err > 4095)
		return NULL;
	return strerrorname_np(err);
}

const char *sc_argkind_name(int kind)
{
	static const char *const names[] = {
		[A_NONE] = "NONE", [A_INT] = "INT", [A_UINT] = "UINT",
		[A_HEX] = "HEX", [A_PTR] = "PTR", [A_FD] = "FD",
		[A_DIRFD] = "DIRFD", [A_PATH] = "PATH", [A_STR] = "STR",
		[A_OFLAGS] = "OFLAGS", [A_MODE] = "MODE",
		[A_ATFLAGS] = "ATFLAGS", [A_PROT] = "PROT",
		[A_MMAPFLAGS] = "MMAPFLAGS", [A_SIGNUM] = "SIGNUM",
		[A_CLONEFLAGS] = "CLONEFLAGS", [A_OPEN_HOW] = "OPEN_HOW",
		[A_SIZE] = "SIZE", [A_OFF] = "OFF", [A_IOCTL] = "IOCTL",
		[A_FCNTL] = "FCNTL", [A_SOCKADDR] = "SOCKADDR",
		[A_ARGV] = "ARGV", [A_RENAMEFLAGS] = "RENAMEFLAGS",
		[A_STATXMASK] = "STATXMASK", [A_WHENCE] = "WHENCE",
		[A_FAMILY] = "FAMILY", [A_SOCKTYPE] = "SOCKTYPE",
		[A_SOCKPROTO] = "SOCKPROTO", [A_PERSONA] = "PERSONA",
	};

	if (kind < 0 || kind >= (int)(sizeof(names) / sizeof(names[0])) ||
	    !names[kind])
		return "?";
	return names[kind];
}

/* ---- JSON ---- */

/* length of the valid UTF-8 sequence at s, or 0 */
static size_t utf8_len(const unsigned char *s)
{
	size_t n;
	uint32_t cp;

	if (s[0] < 0x80)
		return 1;
	if ((s[0] & 0xe0) == 0xc0)
		n = 2, cp = s[0] & 0x1f;
	else if ((s[0] & 0xf0) == 0xe0)
		n = 3, cp = s[0] & 0x0f;
	else if ((s[0] & 0xf8) == 0xf0)
		n = 4, cp = s[0] & 0x07;
	else
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	/* overlong forms, surrogates, beyond U+10FFFF */
	if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) ||
	    (n == 4 && cp < 0x10000) || cp > 0x10ffff ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

/* the code point of the valid n-byte UTF-8 sequence at s */
static uint32_t utf8_cp(const unsigned char *s, size_t n)
{
	uint32_t cp = s[0] & (n == 2 ? 0x1f : n == 3 ? 0x0f : 0x07);

	for (size_t i = 1; i < n; i++)
		cp = cp << 6 | (s[i] & 0x3f);
	return cp;
}

/* Code points a reader of the log never sees as themselves: the C1
 * controls (U+0080-U+009F: a terminal that takes them as such runs U+009B
 * as CSI, U+009D as OSC, as it runs ESC [ and ESC ]), the line and
 * paragraph separators (a line break to some JSON-lines readers) and the
 * bidirectional formatting marks, which reorder what a terminal or an
 * editor shows of the rest of the line (red team 25: a guest path carried
 * them into the caller's `cat audit.jsonl` raw, where ESC itself is
 * escaped). Escaped as \uXXXX: the JSON decodes to the same string. */
static int json_cp_hidden(uint32_t cp)
{
	return moat_cp_hidden(cp);     /* common/util.c: one list for all */
}

size_t json_escape(char *out, size_t outlen, const char *s)
{
	struct obuf b;
	const unsigned char *p = (const unsigned char *)s;

	ob_init_cut(&b, out, outlen);
	while (*p && !b.full) {
		size_t n;

		switch (*p) {
		case '"':
			ob_puts(&b, "\\\"");
			p++;
			continue;
		case '\\':
			ob_puts(&b, "\\\\");
			p++;
			continue;
		case '\n':
			ob_puts(&b, "\\n");
			p++;
			continue;
		case '\t':
			ob_puts(&b, "\\t");
			p++;
			continue;
		case '\r':
			ob_puts(&b, "\\r");
			p++;
			continue;
		case '\b':
			ob_puts(&b, "\\b");
			p++;
			continue;
		case '\f':
			ob_puts(&b, "\\f");
			p++;
			continue;
		default:
			break;
		}
		if (*p < 0x20 || *p == 0x7f) {
			ob_printf(&b, "\\u%04x", *p);
			p++;
			continue;
		}
		n = utf8_len(p);
		if (!n) {
			ob_puts(&b, "\\ufffd");
			p++;
			continue;
		}
		if (n > 1 && n < 4) {
			uint32_t cp = utf8_cp(p, n);
			if (json_cp_hidden(cp)) {
				ob_printf(&b, "\\u%04x", (unsigned)cp);
				p += n;
				continue;
			}
		}
		ob_putn(&b, (const char *)p, n);
		p += n;
	}
	return ob_end_cut(&b, outlen);
}
