/* cli/main.c - the moat command line.
 *
 *   moat run [options] -- PROGRAM [ARGS...]
 *   moat syscalls [--format table|csv|json]
 *
 * Parsing only builds a struct sentry_config (data); sentry_run() acts on it. */
#include "sentry/sentry.h"
#include "sentry/netpolicy.h"
#include "sentry/broker.h"
#include "syscalls/table.h"
#include "common/log.h"
#include "common/util.h"
#include "cli/apply.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static const char usage_text[] =
	"usage: moat run [options] -- PROGRAM [ARGS...]\n"
	"       moat syscalls [--format table|csv|json]\n"
	"       moat diff DIR            summary of an --export DIR\n"
	"       moat apply PATCH TREE    git apply an export's changes.patch in TREE, with\n"
	"                                no .gitattributes, filters or repository config;\n"
	"                                all or nothing (a failed write is undone)\n"
	"\n"
	"run options:\n"
	"  --root DIR               root filesystem tree (copy-on-write, see --overlay);\n"
	"                           default: the host's\n"
	"                           system view (/usr /etc /opt ..., no secrets)\n"
	"  --bind SRC:DST[:ro|rw|cow][,shared|,exclusive]  make host SRC visible at\n"
	"                           DST (default ro; repeatable); cow: the guest may\n"
	"                           change it freely, the changes land in a scratch\n"
	"                           layer, SRC is never written (take them out with\n"
	"                           --export). shared (ro/rw): the guest sees the\n"
	"                           host's changes at once (no cached lookups);\n"
	"                           exclusive (the default): lookups are cached, host\n"
	"                           changes during the run may be seen late or never\n"
	"  --tmpfs DST[:size=N]     an empty in-memory file system at DST (mode 1777;\n"
	"                           size default 512M; repeatable, ordered with --bind)\n"
	"  --disk N                 cap the writable layer (/tmp, home, /dev/shm,\n"
	"                           --tmpfs without size=, cow and overlay changes)\n"
	"                           at N bytes and N/1024 inodes, together: ENOSPC\n"
	"  --overlay memory|DIR|none  the root is writable (default memory): writes to\n"
	"                           /usr /etc /opt ... and new entries in / land in a\n"
	"                           scratch layer gone at exit (memory) or in the host\n"
	"                           directory DIR (kept for the next run), never in the\n"
	"                           root; none: a read-only root (EROFS)\n"
	"  --export DIR             after the program: DIR/<mount>/changes.patch (git\n"
	"                           apply) and manifest.json for each cow mount and the\n"
	"                           root overlay (\"root\")\n"
	"  --export-max-files N     refuse changes past N files (default 10000)\n"
	"  --export-max-bytes N     refuse changes past N bytes (default 256M)\n"
	"  --workdir DIR            working directory inside the sandbox (absolute;\n"
	"                           default /)\n"
	"  --env K=V                set an environment variable (repeatable); the default\n"
	"                           environment is PATH, HOME, TERM, LANG only\n"
	"  --user UID[:GID]         the program's ids inside (default 0:0 run as root, the\n"
	"                           caller's ids rootless); root inside has the virtual\n"
	"                           capabilities listed in kernel/cred.h\n"
	"  --hostname NAME          the sandbox's host name (default moat; 1-64 printable\n"
	"                           ASCII characters, as --kernel-release)\n"
	"  --kernel-release STR     what uname -r says inside (default: the host's major.minor, .0-moat)\n"
	"  --trace                  print one line per trapped syscall on stderr\n"
	"  -t, --tty                give the program a private pseudo-terminal (its\n"
	"                           controlling terminal; without -t it has none)\n"
	"  --tty-controls MODE      what of the program's output reaches your terminal\n"
	"                           (-t's, or a terminal stdout/stderr's): screen\n"
	"                           (default) passes text and the controls that draw,\n"
	"                           drops queries, OSC/DCS strings (clipboard, titles,\n"
	"                           links, colours), resets and 8-bit C1, and undoes at\n"
	"                           the end the modes the program left on (alternate\n"
	"                           screen, hidden cursor, mouse, bracketed paste);\n"
	"                           all passes every byte as it comes\n"
	"  --audit FILE             append one JSON line per trapped syscall to FILE\n"
	"  --audit-max-bytes N      write at most N bytes (suffix K, M, G) to the --audit\n"
	"                           file and to the --trace lines each (default 64M, 0 = no\n"
	"                           cap); then a {\"dropped\": N} record ends the stream\n"
	"  --audit-rate N           at most N events per second (burst 2N) in each stream\n"
	"                           (default 5000, 0 = no cap); a {\"dropped\": N} record\n"
	"                           says how many were lost (and how many denied)\n"
	"  --net none               loopback only, inside the sandbox (the default)\n"
	"  --net allow=RULE[,RULE]  allow outbound connections to these destinations\n"
	"                           (repeatable). RULE: NAME, *.SUFFIX, ADDRESS or CIDR\n"
	"                           (IPv6 in [] before a port), then optional :PORT or\n"
	"                           :LO-HI and /tcp or /udp (no protocol: both). TCP:\n"
	"                           connect; UDP: sendto/sendmsg/sendmmsg with the\n"
	"                           address, or connected (through a relay). Host\n"
	"                           loopback, link-local (169.254.169.254), private,\n"
	"                           multicast and unspecified addresses stay denied\n"
	"                           unless a rule names them; the host's own addresses\n"
	"                           (any interface's) unless a rule names that one\n"
	"                           address. TCP fast open is refused\n"
	"  --secret NAME@HOST[:PORT]  broker a secret (repeatable): the value of NAME\n"
	"                           in moat's environment never enters the sandbox; the\n"
	"                           guest gets NAME=<placeholder> (random, same length).\n"
	"                           Its TCP connections to HOST:PORT (default 80; implies\n"
	"                           the allow rule HOST:PORT/tcp) are relayed by moat,\n"
	"                           which puts the value in place of the placeholder in\n"
	"                           HTTP/1.x request headers (plain HTTP; with a name as\n"
	"                           HOST, only when the Host header names it) and the\n"
	"                           placeholder in place of the value in what comes\n"
	"                           back. The value: 16 to 4096 bytes, no CR or LF\n"
	"  --publish HOST:GUEST     forward the host's 127.0.0.1:HOST (tcp) to the guest's\n"
	"                           127.0.0.1:GUEST (repeatable)\n"
	"  --deny SYSCALL           deny this syscall too (EPERM, audited; repeatable;\n"
	"                           names as in `moat syscalls`), with the calls that do\n"
	"                           the same through another entry point (open: openat,\n"
	"                           openat2, creat; kill: tkill, tgkill...)\n"
	"\n"
	"limits (a limit that ends the sandbox ends its whole process tree):\n"
	"  --memory N               memory of the whole sandbox, bytes (suffix K, M, G)\n"
	"  --pids N                 at most N tasks (processes and threads); past it\n"
	"                           fork/clone fail with EAGAIN\n"
	"  --cpus X                 CPU time as a fraction of CPUs (e.g. 0.5, 2)\n"
	"  --timeout D              wall-clock limit (D: 500ms, 2s, 1m, 1h; plain = s)\n"
	"  --idle-timeout D         end the sandbox after D with no trapped syscall and\n"
	"                           no output\n"
	"  --output-limit N         at most N bytes on each of stdout and stderr; past it\n"
	"                           the guest's writes fail (EPIPE/SIGPIPE)\n"
	"  --kill-after D           SIGTERM/SIGINT/SIGHUP to moat go to the program; if the\n"
	"                           sandbox still runs D later (default 10s; 0: at once),\n"
	"                           or a second one comes (200 ms or more after), it is\n"
	"                           SIGKILLed\n"
	"  --result FILE            write a JSON summary of the run to FILE\n";

/* A usage error: one line naming it (the option list is `moat --help`'s,
 * not dumped on stderr after every typo); no arguments at all: the list. */
static void usage(const char *why)
{
	if (why)
		die_status(2, "%s (moat --help lists the options)", why);
	fputs(usage_text, stderr);
	exit(2);
}

/* The end of a command that prints on stdout (--help, syscalls, diff): what
 * could not be written (/dev/full, a closed pipe with SIGPIPE ignored) is
 * said, exit 1, not lost at exit 0 */
static int stdout_done(void)
{
	errno = 0;
	int r = fflush(stdout), e = errno;
	if (r != 0 && e)
		die("stdout: write error: %s", strerror(e));
	if (r != 0 || ferror(stdout))
		die("stdout: write error");
	return 0;
}

/* A decimal number as people write one: digits, then optionally '.' and
 * digits; *unit is what follows. strtod alone took "0x10", "1e3", "inf",
 * " 2" and "+2" too. -1 if v does not start so. */
static int parse_decimal(const char *v, double *out, const char **unit)
{
	static const char digits[] = "0123456789";
	size_t n = strspn(v, digits);
	if (!n)
		return -1;
	if (v[n] == '.')
		n += 1 + strspn(v + n + 1, digits);
	char buf[64];
	if (n >= sizeof buf)
		return -1;
	memcpy(buf, v, n);
	buf[n] = 0;
	*out = strtod(buf, NULL);
	*unit = v + n;
	return 0;
}

/* A name shown to programs that print it (a prompt, uname -r): printable
 * ASCII, 1 to 64 bytes; exit 2 on anything else */
static const char *parse_label(const char *opt, const char *v)
{
	size_t l = strlen(v);
	if (!l || l > 64)
		die_status(2, "%s: 1 to 64 characters", opt);
	for (size_t k = 0; k < l; k++)
		if ((unsigned char)v[k] < 0x20 || (unsigned char)v[k] >= 0x7f)
			die_status(2, "%s: printable ASCII only (byte %zu is 0x%02x)", opt, k + 1,
				   (unsigned char)v[k]);
	return v;
}

/* "--opt=value" or "--opt value" */
static const char *optval(int argc, char **argv, int *i, const char *name)
{
	size_t l = strlen(name);
	if (strncmp(argv[*i], name, l) == 0 && argv[*i][l] == '=')
		return argv[*i] + l + 1;
	if (*i + 1 >= argc) {
		char m[128];
		snprintf(m, sizeof m, "%s needs a value", name);
		usage(m);
	}
	return argv[++*i];
}

static int is_opt(const char *a, const char *name)
{
	size_t l = strlen(name);
	return strncmp(a, name, l) == 0 && (a[l] == 0 || a[l] == '=');
}

static void parse_bind(struct sentry_config *c, const char *spec)
{
	if (c->nbinds >= MAX_BINDS)
		die_status(2, "too many --bind options (max %d)", MAX_BINDS);
	char *s = xstrdup(spec);
	char *src = s, *dst = strchr(s, ':'), *opts = NULL;
	if (!dst)
		die_status(2, "--bind %s: expected SRC:DST[:ro|rw|cow][,shared|,exclusive]", spec);
	*dst++ = 0;
	opts = strchr(dst, ':');
	if (opts)
		*opts++ = 0;
	if (src[0] != '/')
		die_status(2, "--bind %s: SRC must be an absolute path", spec);
	if (dst[0] != '/') /* (a ':' in SRC's name splits it: no such SRC can be bound) */
		die_status(2, "--bind %s: DST %s must be an absolute path (SRC cannot hold a ':')",
			   spec, dst);
	/* OPTS: a comma list of at most one mode (ro, rw, cow) and at most one
	 * cache policy (shared, exclusive) */
	const char *mode = NULL, *policy = NULL;
	for (char *o = opts, *next; o; o = next) {
		next = strchr(o, ',');
		if (next)
			*next++ = 0;
		const char **slot = !strcmp(o, "ro") || !strcmp(o, "rw") || !strcmp(o, "cow") ? &mode :
				    !strcmp(o, "shared") || !strcmp(o, "exclusive") ? &policy : NULL;
		if (!slot)
			die_status(2, "--bind %s: unknown option '%s' (expected ro, rw or cow, "
				   "and shared or exclusive)", spec, o);
		if (*slot)
			die_status(2, "--bind %s: '%s' and '%s' both given", spec, *slot, o);
		*slot = o;
	}
	int shared = policy && !strcmp(policy, "shared");
	if (shared && mode && !strcmp(mode, "cow"))
		die_status(2, "--bind %s: a cow mount cannot be shared (overlayfs does not "
			   "follow host changes to its lower layer)", spec);
	struct bind_spec *b = &c->binds[c->nbinds++];
	b->src = src;
	b->dst = dst;
	b->writable = mode && strcmp(mode, "rw") == 0;
	b->cow = mode && strcmp(mode, "cow") == 0;
	b->shared = shared;
}

#define SIZE_ARG_MAX (1ULL << 62)

/* "123", "64K", "64M", "1G"; exit 2 on anything else */
static unsigned long long parse_size(const char *opt, const char *v)
{
	char *end;
	errno = 0;
	unsigned long long n = strtoull(v, &end, 10);
	unsigned shift = 0;
	if (*end == 'K' || *end == 'k')
		shift = 10, end++;
	else if (*end == 'M' || *end == 'm')
		shift = 20, end++;
	else if (*end == 'G' || *end == 'g')
		shift = 30, end++;
	/* digits first: strtoull takes " 1G", "+1G" and "-1" (as 2^64 - 1) */
	if (errno || end == v || *end || !(v[0] >= '0' && v[0] <= '9') || (shift && n > (~0ULL >> shift)))
		die_status(2, "%s %s: expected a number (suffix K, M or G)", opt, v);
	/* above 2^62 a size is no limit at all where it goes: the kernel's
	 * tmpfs rounds size= up to pages, so --disk 18446744073709551615
	 * wrapped to an unlimited scratch (red team 40) */
	if ((n << shift) > SIZE_ARG_MAX)
		die_status(2, "%s %s: too large (at most %llu)", opt, v, SIZE_ARG_MAX);
	return n << shift;
}

static void parse_tmpfs(struct sentry_config *c, const char *spec)
{
	if (c->nbinds >= MAX_BINDS)
		die_status(2, "too many --bind/--tmpfs options (max %d)", MAX_BINDS);
	char *s = xstrdup(spec), *opt = strchr(s, ':');
	if (opt)
		*opt++ = 0;
	if (s[0] != '/')
		die_status(2, "--tmpfs %s: DST must be an absolute path", spec);
	struct bind_spec *b = &c->binds[c->nbinds++];
	b->dst = s;
	b->tmpfs = 1;
	b->writable = 1;
	if (opt) {
		if (strncmp(opt, "size=", 5))
			die_status(2, "--tmpfs %s: expected DST[:size=N]", spec);
		b->size = parse_size("--tmpfs size", opt + 5);
		if (b->size < 4096)
			die_status(2, "--tmpfs %s: size below 4K", spec);
	}
}

/* "500ms", "2s", "1.5s", "1m", "1h", "3" (seconds); > 0; exit 2 on anything else */
static unsigned long long parse_duration(const char *opt, const char *v)
{
	const char *end;
	double d = 0;
	double mul = 1000;
	if (parse_decimal(v, &d, &end) < 0)
		end = NULL;
	else if (strcmp(end, "ms") == 0)
		mul = 1;
	else if (strcmp(end, "s") == 0 || *end == 0)
		mul = 1000;
	else if (strcmp(end, "m") == 0)
		mul = 60000;
	else if (strcmp(end, "h") == 0)
		mul = 3600000;
	else
		end = NULL;
	if (!end || !(d * mul >= 1) || d * mul > 1e12)
		die_status(2, "%s %s: expected a duration (e.g. 500ms, 2s, 1m)", opt, v);
	return (unsigned long long)(d * mul);
}

/* --secret NAME@HOST[:PORT]: the value is taken from our own environment
 * (the guest's is built by moat and never inherits it) into a table no
 * forked process inherits (MADV_WIPEONFORK), and wiped from the environment
 * block (so /proc/<moat>/environ no longer shows it either). Each spec gets
 * the rule HOST:PORT/tcp, ahead of the --net rules (so a DNS answer for HOST
 * is remembered for it: netpolicy_remember). No message names the value. */
static void setup_secrets(struct sentry_config *c, const char *const *specs, int n)
{
	size_t tsz = BROKER_MAX_SECRETS * sizeof(struct broker_secret);
	struct broker_secret *t = mmap(NULL, tsz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (t == MAP_FAILED)
		die("--secret: mmap: %s", strerror(errno));
	if (madvise(t, tsz, MADV_WIPEONFORK) < 0)
		die("--secret: MADV_WIPEONFORK: %s", strerror(errno));
	(void)madvise(t, tsz, MADV_DONTDUMP);
	struct netpolicy *pol = xcalloc(1, sizeof *pol);
	for (int k = 0; k < n; k++) {
		const char *spec = specs[k];
		struct broker_secret *s = &t[k];
		const char *at = strchr(spec, '@');
		size_t nl = at ? (size_t)(at - spec) : 0;
		if (!at || !nl || nl >= sizeof s->name)
			die_status(2, "--secret %s: expected NAME@HOST[:PORT]", spec);
		memcpy(s->name, spec, nl);
		for (size_t j = 0; j < nl; j++)
			if (!(s->name[j] == '_' || (s->name[j] >= 'A' && s->name[j] <= 'Z') ||
			      (s->name[j] >= 'a' && s->name[j] <= 'z') || (j && s->name[j] >= '0' && s->name[j] <= '9')))
				die_status(2, "--secret %s: NAME must be letters, digits and _", spec);
		/* HOST[:PORT]: a name, an IPv4 address, [IPv6] */
		const char *h = at + 1, *port = NULL;
		char host[256];
		size_t hl;
		if (*h == '[') {
			const char *cl = strchr(h, ']');
			if (!cl || (cl[1] && cl[1] != ':'))
				die_status(2, "--secret %s: HOST: expected [IPV6] or [IPV6]:PORT", spec);
			hl = (size_t)(cl - h - 1);
			h++;
			port = cl[1] ? cl + 2 : NULL;
		} else {
			const char *col = strchr(h, ':');
			hl = col ? (size_t)(col - h) : strlen(h);
			port = col ? col + 1 : NULL;
		}
		if (!hl || hl >= sizeof host)
			die_status(2, "--secret %s: no HOST", spec);
		memcpy(host, h, hl);
		host[hl] = 0;
		char *end = NULL;
		long pn = port ? strtol(port, &end, 10) : 80;
		if (port && (!*port || *end || port[0] < '0' || port[0] > '9' || pn < 1 || pn > 65535))
			die_status(2, "--secret %s: PORT: expected 1-65535", spec);
		char text[300], e2[400];
		snprintf(text, sizeof text, strchr(host, ':') ? "[%s]:%ld/tcp" : "%s:%ld/tcp", host, pn);
		struct netpol_rule *r = &pol->rules[pol->nrules];
		if (netpolicy_parse_rule(r, text, e2, sizeof e2) < 0)
			die_status(2, "--secret %s: %s", spec, e2);
		if (r->wildcard || (!r->is_name && r->prefix != (r->addr.family == AF_INET ? 32 : 128)))
			die_status(2, "--secret %s: HOST must be one host name or address (no *. or CIDR)", spec);
		r->secret = k + 1;
		snprintf(r->secret_name, sizeof r->secret_name, "%s", s->name);
		pol->nrules++;
		if (r->is_name)
			snprintf(s->host, sizeof s->host, "%s", r->name);
		for (int j = 0; j < c->nenv; j++)
			if (!strncmp(c->env[j], s->name, nl) && c->env[j][nl] == '=')
				die_status(2, "--secret %s: --env %s is given too", spec, s->name);
		/* the value: ours, taken out of the environment block */
		char *v = getenv(s->name);
		if (!v)
			die_status(2, "--secret %s: %s is not set in moat's environment", spec, s->name);
		size_t vl = strlen(v);
		if (vl < BROKER_MIN_SECRET)
			die_status(2, "--secret %s: the value of %s is shorter than %d bytes (too short to hide)",
				   spec, s->name, BROKER_MIN_SECRET);
		if (vl > BROKER_MAX_SECRET)
			die_status(2, "--secret %s: the value of %s is longer than %d bytes", spec, s->name,
				   BROKER_MAX_SECRET);
		if (strpbrk(v, "\r\n"))
			die_status(2, "--secret %s: the value of %s holds CR or LF (it goes in a header)", spec,
				   s->name);
		memcpy(s->value, v, vl);
		s->len = vl;
		/* the placeholder: fresh per run; one per name */
		int same = -1;
		for (int j = 0; j < k; j++)
			if (!strcmp(t[j].name, s->name))
				same = j;
		if (same >= 0) {
			memcpy(s->placeholder, t[same].placeholder, vl);
			continue;
		}
		static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
		for (size_t j = 0; j < vl;) {
			unsigned char rb[64];
			if (getrandom(rb, sizeof rb, 0) != (ssize_t)sizeof rb)
				die("--secret: getrandom: %s", strerror(errno));
			for (size_t q = 0; q < sizeof rb && j < vl; q++)
				if (rb[q] < 248) /* 62 * 4: no modulo bias */
					s->placeholder[j++] = abc[rb[q] % 62];
		}
	}
	/* out of the environment block, after every spec read it (two specs
	 * may name one variable) */
	for (int k = 0; k < n; k++) {
		char *v = getenv(t[k].name);
		if (v) {
			explicit_bzero(v, strlen(v));
			unsetenv(t[k].name);
		}
	}
	/* the secret rules first, then --net's */
	if (c->net)
		for (int j = 0; j < c->net->nrules; j++) {
			if (pol->nrules >= NETPOL_MAX_RULES)
				die_status(2, "--net: too many rules (max %d)", NETPOL_MAX_RULES);
			pol->rules[pol->nrules++] = c->net->rules[j];
		}
	free(c->net);
	c->net = pol;
	c->secrets = t;
	c->nsecrets = n;
}

static sigset_t caller_blocked, caller_ignored;
static int caller_closed;
static mode_t caller_umask;
static struct rlimit caller_nofile; /* rlim_max 0: unknown */
#define MOAT_MIN_NOFILE 256 /* below: moat-netd's sockets, then the gofer's, fail */

static int cmd_run(int argc, char **argv)
{
	struct sentry_config c;
	memset(&c, 0, sizeof c);
	c.caller_blocked = caller_blocked;
	c.caller_ignored = caller_ignored;
	c.caller_closed = caller_closed;
	c.caller_umask = caller_umask + 1;
	c.caller_nofile_cur = caller_nofile.rlim_cur;
	c.audit_max_bytes = AUDIT_DEFAULT_MAX_BYTES;
	c.audit_rate = AUDIT_DEFAULT_RATE;
	c.export_max_files = 10000;
	c.export_max_bytes = 256ULL << 20;
	c.kill_after_ms = 10000;
	const char *secret_specs[BROKER_MAX_SECRETS];
	int nsecret = 0, net_none = 0;
	int i;
	for (i = 0; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--") == 0) {
			i++;
			break;
		}
		if (is_opt(a, "--root")) {
			c.root = optval(argc, argv, &i, "--root");
		} else if (is_opt(a, "--bind")) {
			parse_bind(&c, optval(argc, argv, &i, "--bind"));
		} else if (is_opt(a, "--disk")) {
			c.disk = parse_size("--disk", optval(argc, argv, &i, "--disk"));
			if (c.disk < (1 << 20))
				die_status(2, "--disk %llu: at least 1M", c.disk);
		} else if (is_opt(a, "--tmpfs")) {
			parse_tmpfs(&c, optval(argc, argv, &i, "--tmpfs"));
		} else if (is_opt(a, "--overlay")) {
			c.overlay = optval(argc, argv, &i, "--overlay");
			if (strcmp(c.overlay, "memory") && strcmp(c.overlay, "none") &&
			    c.overlay[0] != '/')
				die_status(2, "--overlay %s: expected memory, none or an absolute DIR",
					   c.overlay);
		} else if (is_opt(a, "--export-max-files")) {
			c.export_max_files = parse_size("--export-max-files",
							optval(argc, argv, &i, "--export-max-files"));
		} else if (is_opt(a, "--export-max-bytes")) {
			c.export_max_bytes = parse_size("--export-max-bytes",
							optval(argc, argv, &i, "--export-max-bytes"));
		} else if (is_opt(a, "--export")) {
			c.export_dir = optval(argc, argv, &i, "--export");
			if (!c.export_dir[0])
				die_status(2, "--export: expected a directory");
		} else if (is_opt(a, "--workdir")) {
			c.workdir = optval(argc, argv, &i, "--workdir");
			/* (a relative one was taken from /, not from the caller's
			 * directory it looks like) */
			if (c.workdir[0] != '/')
				die_status(2, "--workdir %s: must be an absolute path (inside the sandbox)",
					   c.workdir);
		} else if (is_opt(a, "--env")) {
			const char *kv = optval(argc, argv, &i, "--env");
			const char *eq = strchr(kv, '=');
			if (!eq || eq == kv)
				die_status(2, "--env %s: expected K=V", kv);
			if (c.nenv >= MAX_ENV)
				die_status(2, "too many --env options");
			c.env[c.nenv++] = (char *)kv;
		} else if (is_opt(a, "--user")) {
			const char *v = optval(argc, argv, &i, "--user");
			char *end;
			errno = 0;
			unsigned long u = strtoul(v, &end, 10), g = u;
			/* digits only (strtoul would take " 1", "+1" and an empty GID as 0) */
			int bad = !(v[0] >= '0' && v[0] <= '9');
			if (*end == ':') {
				bad |= !(end[1] >= '0' && end[1] <= '9');
				g = strtoul(end + 1, &end, 10);
			}
			if (bad || errno || end == v || *end || u >= 0xffffffffUL || g >= 0xffffffffUL)
				die_status(2, "--user %s: expected UID[:GID] (numbers below 4294967295)", v);
			c.user_set = 1;
			c.user_uid = (uid_t)u;
			c.user_gid = (gid_t)g;
		} else if (is_opt(a, "--hostname")) {
			c.hostname = parse_label("--hostname", optval(argc, argv, &i, "--hostname"));
		} else if (is_opt(a, "--kernel-release")) {
			c.kernel_release = parse_label("--kernel-release",
						       optval(argc, argv, &i, "--kernel-release"));
		} else if (strcmp(a, "--trace") == 0) {
			c.trace = 1;
		} else if (strcmp(a, "-t") == 0 || strcmp(a, "--tty") == 0) {
			c.tty = 1;
		} else if (is_opt(a, "--tty-controls")) {
			const char *v = optval(argc, argv, &i, "--tty-controls");
			if (strcmp(v, "all") == 0)
				c.tty_controls_all = 1;
			else if (strcmp(v, "screen") == 0)
				c.tty_controls_all = 0;
			else
				die_status(2, "--tty-controls: screen or all, not %s", v);
		} else if (is_opt(a, "--audit-max-bytes")) {
			c.audit_max_bytes = parse_size("--audit-max-bytes",
						       optval(argc, argv, &i, "--audit-max-bytes"));
		} else if (is_opt(a, "--audit-rate")) {
			unsigned long long r = parse_size("--audit-rate",
							  optval(argc, argv, &i, "--audit-rate"));
			if (r > 100000000ULL)
				die_status(2, "--audit-rate: at most 100000000");
			c.audit_rate = (unsigned long)r;
		} else if (is_opt(a, "--memory")) {
			const char *v = optval(argc, argv, &i, "--memory");
			c.memory = parse_size("--memory", v);
			if (c.memory < (1ULL << 20))
				die_status(2, "--memory %s: at least 1M", v);
		} else if (is_opt(a, "--pids")) {
			const char *v = optval(argc, argv, &i, "--pids");
			unsigned long long n = parse_size("--pids", v);
			if (n < 2 || n > 4194304)
				die_status(2, "--pids %s: expected 2 to 4194304", v);
			c.pids = (unsigned long)n;
		} else if (is_opt(a, "--cpus")) {
			const char *v = optval(argc, argv, &i, "--cpus");
			const char *end;
			double x = 0;
			if (parse_decimal(v, &x, &end) < 0 || *end || !(x >= 0.01) || x > 4096)
				die_status(2, "--cpus %s: expected a fraction of CPUs (0.01 to 4096)", v);
			c.cpus_milli = (unsigned long)(x * 1000 + 0.5);
		} else if (is_opt(a, "--timeout")) {
			c.timeout_ms = parse_duration("--timeout", optval(argc, argv, &i, "--timeout"));
		} else if (is_opt(a, "--kill-after")) {
			const char *v = optval(argc, argv, &i, "--kill-after");
			c.kill_after_ms = strcmp(v, "0") ? parse_duration("--kill-after", v) : 0;
		} else if (is_opt(a, "--idle-timeout")) {
			c.idle_ms = parse_duration("--idle-timeout", optval(argc, argv, &i, "--idle-timeout"));
		} else if (is_opt(a, "--output-limit")) {
			const char *v = optval(argc, argv, &i, "--output-limit");
			c.output_limit = parse_size("--output-limit", v);
			if (c.output_limit == 0)
				die_status(2, "--output-limit %s: at least 1", v);
		} else if (is_opt(a, "--result")) {
			c.result_path = optval(argc, argv, &i, "--result");
		} else if (is_opt(a, "--audit")) {
			c.audit_path = optval(argc, argv, &i, "--audit");
		} else if (is_opt(a, "--net")) {
			const char *v = optval(argc, argv, &i, "--net");
			net_none |= !strcmp(v, "none");
			if (!c.net)
				c.net = xcalloc(1, sizeof *c.net);
			char err[512];
			if (netpolicy_parse(c.net, v, err, sizeof err) < 0)
				die_status(2, "%s", err);
		} else if (is_opt(a, "--secret")) {
			const char *v = optval(argc, argv, &i, "--secret");
			if (nsecret >= BROKER_MAX_SECRETS)
				die_status(2, "too many --secret options (max %d)", BROKER_MAX_SECRETS);
			secret_specs[nsecret++] = v;
		} else if (is_opt(a, "--publish")) {
			const char *v = optval(argc, argv, &i, "--publish");
			int hp, gp, used = 0;
			const char *gs = strchr(v, ':');
			/* digits only (%d takes " 80", "+80") */
			if (strspn(v, "0123456789:") != strlen(v) || !gs || gs == v || !gs[1] ||
			    sscanf(v, "%d:%d%n", &hp, &gp, &used) != 2 || v[used] || hp < 1 || hp > 65535 ||
			    gp < 1 || gp > 65535)
				die_status(2, "--publish %s: expected HOSTPORT:GUESTPORT (1-65535)", v);
			if (c.npub >= 16)
				die_status(2, "too many --publish options (max 16)");
			c.pub_host[c.npub] = hp;
			c.pub_guest[c.npub++] = gp;
		} else if (is_opt(a, "--deny")) {
			const char *name = optval(argc, argv, &i, "--deny");
			/* the call and its other entry points (sc_deny_family) */
			if (sc_deny_family(name, c.deny) < 0)
				die_status(2, "--deny %s: no such syscall (see moat syscalls)", name);
		} else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			fputs(usage_text, stdout);
			return stdout_done();
		} else if (a[0] == '-') {
			char m[256];
			snprintf(m, sizeof m, "unknown option %s", a);
			usage(m);
		} else {
			usage("the program must follow --");
		}
	}
	/* (red team 40: a wrapper's --net none after the user's --net allow=
	 * left the allowed destinations reachable) */
	if (net_none && c.net && c.net->nrules > 0)
		die_status(2, "--net none and --net allow= both given");
	if (i >= argc)
		usage("missing PROGRAM after --");
	if (argv[i][0] == 0)
		die_status(127, ": not found");
	if (caller_nofile.rlim_max && caller_nofile.rlim_max < MOAT_MIN_NOFILE)
		die("the open-file limit (ulimit -Hn) is %llu: moat needs at least %d",
		    (unsigned long long)caller_nofile.rlim_max, MOAT_MIN_NOFILE);
	if (nsecret)
		setup_secrets(&c, secret_specs, nsecret);
	c.argv = argv + i;
	return sentry_run(&c);
}

/* The JSON string at p (after its opening quote), decoded, into out as
 * moat_quote_path writes it (strict for a path: red team 50, a name's
 * U+061C, U+2028, zero-width space or trailing space showed raw or not at
 * all, and "x -> y" looked like a rename): nothing a terminal acts on or
 * shows as another name reaches it, whoever wrote the file. Returns where
 * it stopped (its closing quote). */
static const char *jcopy(const char *p, char *out, size_t len, int strict)
{
	/* (decoded, a string is never longer than its JSON form) */
	char *raw = xmalloc(strlen(p) + 1);
	size_t o = 0;
	for (; *p && *p != '"'; p++) {
		char u[4];
		size_t n = 1;
		u[0] = *p;
		if (*p == '\\' && p[1]) {
			p++;
			switch (*p) {
			case 'n': u[0] = '\n'; break;
			case 't': u[0] = '\t'; break;
			case 'r': u[0] = '\r'; break;
			case 'b': u[0] = '\b'; break;
			case 'f': u[0] = '\f'; break;
			case 'u': {
				unsigned cp = 0;
				int k;
				for (k = 1; k <= 4; k++) {
					char h = p[k];
					int d = h >= '0' && h <= '9' ? h - '0' : h >= 'a' && h <= 'f' ? h - 'a' + 10 :
						h >= 'A' && h <= 'F' ? h - 'A' + 10 : -1;
					if (d < 0)
						break;
					cp = cp << 4 | (unsigned)d;
				}
				if (k <= 4) {   /* (not JSON: kept as it is) */
					u[0] = 'u';
					break;
				}
				p += 4;
				if (!cp || (cp >= 0xd800 && cp <= 0xdfff))
					cp = '?';
				if (cp < 0x80) {
					u[0] = (char)cp;
				} else if (cp < 0x800) {
					u[0] = (char)(0xc0 | cp >> 6), u[1] = (char)(0x80 | (cp & 0x3f)), n = 2;
				} else {
					u[0] = (char)(0xe0 | cp >> 12), u[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
					u[2] = (char)(0x80 | (cp & 0x3f)), n = 3;
				}
				break;
			}
			default: u[0] = *p; break;  /* \" \\ \/ */
			}
		}
		memcpy(raw + o, u, n);
		o += n;
	}
	raw[o] = 0;
	moat_quote_path(out, len, "", raw, strict);
	free(raw);
	return p;
}

/* The raw JSON string after "key": on one manifest line ("" if absent). */
static void jstr(const char *line, const char *key, char *out, size_t len)
{
	int strict = !strcmp(key, "path") || !strcmp(key, "from") || !strcmp(key, "target");
	char k[32];
	snprintf(k, sizeof k, "\"%s\": \"", key);
	const char *p = strstr(line, k);
	out[0] = 0;
	if (p)
		jcopy(p + strlen(k), out, len, strict);
}

/* A change's "xattrs": {name: sha256 | null, ...} as ", xattrs +set -removed" */
static void jxattrs(const char *line, char *out, size_t len)
{
	const char *p = strstr(line, "\"xattrs\": {");
	size_t o = 0;
	out[0] = 0;
	if (!p)
		return;
	o = (size_t)snprintf(out, len, ", xattrs");
	/* (len: 4 times the line and more, every name's quoted form fits) */
	char *nm = xmalloc(len);
	for (p += 11; *p == '"' && o < len; ) {
		p = jcopy(p + 1, nm, len, 1);
		if (*p != '"' || strncmp(p + 1, ": ", 2))
			break;
		p += 3;
		int removed = !strncmp(p, "null", 4);
		o += (size_t)snprintf(out + o, len - o, " %c%s", removed ? '-' : '+', nm);
		p += strcspn(p, ",}");
		if (p[0] != ',' || p[1] != ' ')
			break;
		p += 2;
	}
	free(nm);
	if (o >= len)
		out[len - 1] = 0;
}

/* The JSON string after "key": on a line, raw (NULL if absent) */
static const char *jraw(const char *line, const char *key)
{
	char k[32];
	snprintf(k, sizeof k, "\"%s\": \"", key);
	const char *p = strstr(line, k);
	return p ? p + strlen(k) : NULL;
}

/* A raw JSON path with a component git reads as its own metadata (a
 * .gitattributes' filters run programs at git apply, a .gitmodules names
 * URLs, .git is a repository); any case, as a case-insensitive file system
 * would take it. ('/' and '.' are never escaped in moat's JSON.) */
static int git_meta(const char *p)
{
	static const char *const names[] = { ".git", ".gitattributes", ".gitmodules" };
	while (p && *p && *p != '"') {
		size_t n = 0;
		while (p[n] && p[n] != '/' && p[n] != '"')
			n += p[n] == '\\' && p[n + 1] ? 2 : 1;
		for (size_t i = 0; i < ARRAY_SIZE(names); i++)
			if (n == strlen(names[i]) && !strncasecmp(p, names[i], n))
				return 1;
		p += n;
		if (*p == '/')
			p++;
	}
	return 0;
}

/* A symlink's raw JSON target at path (raw JSON too): 1 when it is
 * absolute, 2 when its ".." lead above the mount's root, read as names
 * (the link's directory is path without its last name) */
static int link_leaves(const char *path, const char *t)
{
	long depth = 0;
	if (*t == '/')
		return 1;
	for (const char *q = path; *q && *q != '"'; q++)
		if (*q == '\\' && q[1])
			q++;
		else if (*q == '/')
			depth++;
	while (*t && *t != '"') {
		size_t n = 0;
		while (t[n] && t[n] != '/' && t[n] != '"')
			n += t[n] == '\\' && t[n + 1] ? 2 : 1;
		if (n == 2 && !strncmp(t, "..", 2)) {
			if (--depth < 0)
				return 2;
		} else if (n && !(n == 1 && *t == '.')) {
			depth++;
		}
		t += n;
		if (*t == '/')
			t++;
	}
	return 0;
}

/* moat diff DIR: one line per change of each DIR/<mount>/manifest.json */
static int cmd_diff(int argc, char **argv)
{
	if (argc != 1)
		usage("diff needs one --export DIR");
	DIR *d = opendir(argv[0]);
	if (!d)
		die_status(2, "%s: %s", argv[0], strerror(errno));
	struct dirent *de;
	int found = 0;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		/* a line of any length: a path of PATH_MAX bytes escaped, its
		 * rename's source and a hundred attributes' names are more
		 * than any fixed buffer (red team 64: a 16 KB line was cut
		 * and its tail lost) */
		char *line = NULL;
		size_t linecap = 0;
		ssize_t ll;
		/* DIR is whatever the caller was handed: a manifest.json (or
		 * its directory) that is a symlink to /dev/zero or a fifo hung
		 * the summary. Only a directory and a regular file in it, not
		 * followed through a symlink; never blocking on the open. */
		int sub = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub < 0)
			continue;
		int mfd = openat(sub, "manifest.json", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		close(sub);
		struct stat mst;
		if (mfd >= 0 && (fstat(mfd, &mst) < 0 || !S_ISREG(mst.st_mode))) {
			close(mfd);
			mfd = -1;
		}
		FILE *f = mfd >= 0 ? fdopen(mfd, "r") : NULL;
		if (!f) {
			if (mfd >= 0)
				close(mfd);
			continue;
		}
		found = 1;
		char mname[4 * sizeof de->d_name + 3];
		moat_quote_path(mname, sizeof mname, "", de->d_name, 1);
		printf("%s:\n", mname); /* (a directory anyone who could write DIR named) */
		int refused = 0;
		unsigned long n = 0;
		char *p = NULL, *from = NULL, *xa = NULL, *tg = NULL;
		while ((ll = getline(&line, &linecap, f)) >= 0) {
			char op[16], type[16], why[256], bytes[160] = "";
			/* each decoded, quoted string fits 4 * the line + 3 */
			size_t big = 4 * (size_t)ll + 64;
			free(p);
			free(from);
			free(xa);
			free(tg);
			p = xmalloc(big), from = xmalloc(big), xa = xmalloc(2 * big), tg = xmalloc(big);
			xa[0] = 0;
			if (strstr(line, "\"refused\": ["))
				refused = 1;
			if (strstr(line, "\"skipped\": ["))
				refused = 2;
			const char *ru = strstr(line, "\"refused_unlisted\": ");
			const char *su = strstr(line, "\"skipped_unlisted\": ");
			if (ru && strtoul(ru + 20, NULL, 10))
				printf("  ! %lu more refused, not listed\n", strtoul(ru + 20, NULL, 10));
			if (su && strtoul(su + 20, NULL, 10))
				printf("  - %lu more skipped, not listed\n", strtoul(su + 20, NULL, 10));
			if (!strstr(line, "{\"path\": "))
				continue;
			jstr(line, "path", p, big);
			const char *ph = jraw(line, "path_hex");
			if (ph) {
				/* a name that is no UTF-8: its bytes (red team 86) */
				char *raw = xmalloc(strlen(ph) / 2 + 1);
				size_t k = 0;
				while (isxdigit((unsigned char)ph[2 * k]) && isxdigit((unsigned char)ph[2 * k + 1])) {
					char h[3] = { ph[2 * k], ph[2 * k + 1], 0 };
					raw[k++] = (char)strtoul(h, NULL, 16);
				}
				raw[k] = 0;
				moat_quote_path(p, big, "", raw, 1);
				free(raw);
			}
			if (refused) {
				jstr(line, "reason", why, sizeof why);
				printf("  %s %s: %s\n", refused == 1 ? "!" : "-", p, why);
				continue;
			}
			jstr(line, "op", op, sizeof op);
			jstr(line, "type", type, sizeof type);
			jstr(line, "from", from, big);
			const char *b = strstr(line, "\"bytes\": ");
			if (b)
				snprintf(bytes, sizeof bytes, ", %lu bytes", strtoul(b + 9, NULL, 10));
			jxattrs(line, xa, 2 * big);
			char md[8], om[8];
			jstr(line, "mode", md, sizeof md);
			jstr(line, "old_mode", om, sizeof om);
			if (op[0] == 'm' && !strcmp(type, "dir")) {
				/* a directory's mode (a patch carries none) */
				snprintf(bytes, sizeof bytes, ", mode %s", md);
			} else if (!strcmp(type, "file") && md[0] &&
				   (om[0] || (op[0] == 'a' && strcmp(md, "0644") && strcmp(md, "0755")))) {
				/* a file's mode a patch cannot carry (it has 100644
				 * and 100755 only): a changed one, an added file's
				 * other than those two (red-team round 64: a chmod
				 * 0666 of a host file was "M f (file, 2 bytes)") */
				size_t bl = strlen(bytes);
				snprintf(bytes + bl, sizeof bytes - bl, ", mode %s", md);
			}
			const char *sim = strstr(line, "\"similarity\": ");
			if (sim && strtoul(sim + 14, NULL, 10) < 100) {
				/* a rename that changed the content too (git's
				 * summary says "(51%)"; before red-team round 64 a
				 * file half rewritten read as a rename only) */
				size_t bl = strlen(bytes);
				snprintf(bytes + bl, sizeof bytes - bl, ", %lu%% similar",
					 strtoul(sim + 14, NULL, 10));
			}
			if (strstr(line, "\"controls\": true")) {
				/* its text holds what a terminal acts on: read the
				 * patch with cat -v (red-team round 64) */
				size_t bl = strlen(bytes);
				snprintf(bytes + bl, sizeof bytes - bl, ", terminal controls");
			}
			if (git_meta(jraw(line, "path")) || git_meta(jraw(line, "from")) ||
			    git_meta(jraw(line, "target"))) {
				/* git reads it as its own: a .gitattributes' filter
				 * runs a program at the next git apply (red team 64);
				 * a symlink into .git (hk -> .git/hooks) is a way in
				 * for whatever writes through it later (red team 94) */
				size_t bl = strlen(bytes);
				snprintf(bytes + bl, sizeof bytes - bl, ", git metadata");
			}
			char *tgt = tg;
			const char *rt = jraw(line, "target");
			tgt[0] = 0;
			if (rt) {
				/* where a symlink points, quoted always (a target
				 * "x, mode 0644" must not read as this line's
				 * flags), flagged when it leaves the tree (red team
				 * 64: moat diff showed no target) */
				jstr(line, "target", tgt + 4, big - 8);
				memcpy(tgt, " to ", 4);
				if (tgt[4] != '"') {
					size_t tl = strlen(tgt);
					memmove(tgt + 5, tgt + 4, tl - 4 + 1);
					tgt[4] = '"';
					strcpy(tgt + tl + 1, "\"");
				}
				int lv = link_leaves(jraw(line, "path"), rt);
				if (lv) {
					size_t bl = strlen(bytes);
					snprintf(bytes + bl, sizeof bytes - bl, lv == 1 ? ", absolute target" :
						 ", target leaves the tree");
				}
			}
			char tag = op[0] == 'a' ? 'A' : op[0] == 'm' ? 'M' : op[0] == 'd' ? 'D' : 'R';
			if (from[0])
				printf("  %c %s -> %s (%s%s%s%s)\n", tag, from, p, type, tgt, bytes, xa);
			else
				printf("  %c %s (%s%s%s%s)\n", tag, p, type, tgt, bytes, xa);
			n++;
		}
		free(line);
		free(p);
		free(from);
		free(xa);
		free(tg);
		fclose(f);
		printf("  %lu change%s (A add, M modify, D delete, R rename; ! refused, - skipped)\n",
		       n, n == 1 ? "" : "s");
	}
	closedir(d);
	if (!found)
		die_status(1, "%s: no */manifest.json (not an --export DIR?)", argv[0]);
	return stdout_done();
}

/* PROG in PATH's absolute directories (PATH unset: /usr/bin:/bin), before
 * moat apply's chdir to TREE: an empty or relative entry (":/usr/bin",
 * ".", "node_modules/.bin") named TREE's own files there, and a "git" an
 * earlier sandbox left in its changes ran as the caller (red team 92) */
static char *path_lookup_absolute(const char *prog)
{
	const char *p = getenv("PATH");
	if (!p)
		p = "/usr/bin:/bin";
	for (;;) {
		const char *end = strchrnul(p, ':');
		size_t n = (size_t)(end - p);
		if (n && p[0] == '/') {
			char *f = xmalloc(n + strlen(prog) + 2);
			struct stat st;
			sprintf(f, "%.*s/%s", (int)n, p, prog);
			if (stat(f, &st) == 0 && S_ISREG(st.st_mode) && access(f, X_OK) == 0)
				return f;
			free(f);
		}
		if (!*end)
			return NULL;
		p = end + 1;
	}
}

/* moat apply PATCH TREE: git apply in TREE as no repository sees it. A
 * .gitattributes an earlier patch left (or the tree's .git/config, the
 * system's or the caller's attributes) would make git apply run a filter
 * driver's program (git-lfs reaches the network) or convert line ends
 * (red team 64). GIT_DIR=/dev/null: no repository, so no in-tree
 * .gitattributes, .git/info/attributes, .git/config or hooks are read;
 * no system attributes, core.attributesFile /dev/null. */
static int cmd_apply(int argc, char **argv)
{
	if (argc != 2)
		usage("apply needs PATCH and TREE");
	char *patch = realpath(argv[0], NULL);
	if (!patch)
		die_status(2, "%s: %s", argv[0], strerror(errno));
	char *git = path_lookup_absolute("git");
	if (!git)
		die_status(127, "git: not found in PATH's absolute directories");
	if (chdir(argv[1]) < 0)
		die_status(2, "%s: %s", argv[1], strerror(errno));
	static const char *const drop[] = { "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR",
					     "GIT_OBJECT_DIRECTORY", "GIT_ATTR_SOURCE",
					     "GIT_CONFIG_PARAMETERS", "GIT_EXTERNAL_DIFF" };
	for (size_t i = 0; i < ARRAY_SIZE(drop); i++)
		unsetenv(drop[i]);
	if (setenv("GIT_DIR", "/dev/null", 1) || setenv("GIT_ATTR_NOSYSTEM", "1", 1) ||
	    setenv("GIT_CONFIG_NOSYSTEM", "1", 1))
		die("setenv: %s", strerror(errno));
	return moat_apply(git, patch);
}

static int cmd_syscalls(int argc, char **argv)
{
	const char *fmt = "table";
	for (int i = 0; i < argc; i++) {
		if (is_opt(argv[i], "--format"))
			fmt = optval(argc, argv, &i, "--format");
		else {
			char m[256];
			snprintf(m, sizeof m, "unknown option %s", argv[i]);
			usage(m);
		}
	}
	errno = 0;
	int r = sc_print_listing(stdout, fmt);
	if (r == -EINVAL) /* (a write error was said as this one) */
		die_status(2, "--format %s: expected table, csv or json", fmt);
	return stdout_done();
}

int main(int argc, char **argv)
{
	/* Fds 0-2 the caller left closed (`moat run ... <&- >&- 2>&-`, a
	 * daemon's wrapper): /dev/null holds each number before we open
	 * anything, or our own fds land there — the gofer's channel on fd 2
	 * took every message and --trace line into its protocol, and the
	 * guest's init inherited it (red team 40). The program gets them
	 * closed, as a native exec would (spawn.c program_main). */
	for (int fd = 0; fd < 3; fd++)
		if (fcntl(fd, F_GETFD) < 0 && errno == EBADF) {
			if (open("/dev/null", O_RDWR) != fd) /* (the lowest free number) */
				_exit(2);
			caller_closed |= 1 << fd;
		}
	/* what a native exec would hand the program, before anything of
	 * ours changes it */
	sigprocmask(SIG_SETMASK, NULL, &caller_blocked);
	sigemptyset(&caller_ignored);
	for (int s = 1; s < NSIG; s++) {
		struct sigaction sa;
		if (sigaction(s, NULL, &sa) == 0 && sa.sa_handler == SIG_IGN)
			sigaddset(&caller_ignored, s);
	}
	/* ... but not moat's own (red team 40): SIGCHLD ignored made the
	 * kernel reap our children, and a wait for one helper waited for all
	 * of them (with --export the sentry for the gofer, which waited for
	 * the sentry: hung); the signals moat itself uses blocked held them
	 * (SIGALRM: --kill-after's timer never fired; the relay's interrupt;
	 * -t's SIGWINCH). The signals moat forwards stay as the caller had
	 * them: the program has the same mask. */
	signal(SIGCHLD, SIG_DFL);
	sigset_t own;
	sigemptyset(&own);
	sigaddset(&own, SIGCHLD);
	sigaddset(&own, SIGALRM);
	sigaddset(&own, SIGWINCH);
	sigaddset(&own, MOAT_RELAY_SIG);
	sigprocmask(SIG_UNBLOCK, &own, NULL);
	/* The caller's soft open-file limit is the program's (spawn.c), not
	 * ours: ours is the hard one (a soft 16 failed the start) */
	if (getrlimit(RLIMIT_NOFILE, &caller_nofile) == 0 && caller_nofile.rlim_cur < caller_nofile.rlim_max) {
		struct rlimit up = { caller_nofile.rlim_max, caller_nofile.rlim_max };
		(void)setrlimit(RLIMIT_NOFILE, &up);
	}
	/* The caller's umask is the program's (its first task's, kernel/
	 * tasks.c): before red team 40 it was 022, and under a caller's 077
	 * the files it wrote into a rw bind were 0644. Ours keeps its group
	 * and other bits (what moat makes for the caller: --export, --result)
	 * but never the owner's: with 0700 or 0777 moat's own set-up files
	 * were unusable (exit 126) */
	caller_umask = umask(0);
	umask(caller_umask & 077);
	if (getenv("MOAT_DEBUG"))
		moat_debug = 1;
	/* Nothing the caller left open beyond stdio stays with us: the sentry
	 * (and the guest) must hold no host file it was not meant to. */
	syscall(SYS_close_range, 3, ~0U, 0);
	if (argc < 2)
		usage(NULL);
	if (strcmp(argv[1], "run") == 0)
		return cmd_run(argc - 2, argv + 2);
	if (strcmp(argv[1], "syscalls") == 0)
		return cmd_syscalls(argc - 2, argv + 2);
	if (strcmp(argv[1], "diff") == 0)
		return cmd_diff(argc - 2, argv + 2);
	if (strcmp(argv[1], "apply") == 0)
		return cmd_apply(argc - 2, argv + 2);
	if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		fputs(usage_text, stdout);
		return stdout_done();
	}
	char m[256];
	snprintf(m, sizeof m, "unknown command %s", argv[1]);
	usage(m);
	return 2;
}
