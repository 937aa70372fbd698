/* sentry/exec.c - exec through the sentry and the loader (design.md "Exec").
 *
 * At the PTRACE_EVENT_SECCOMP stop of execve/execveat (RET_TRACE), the ptrace
 * thread: reads the path once; resolves it in the VFS (vfs_open_exec: search
 * and execute permissions, ENOENT/EACCES as Linux); reads the header: "#!"
 * scripts are followed (nested, up to 5 levels, argv rewritten like
 * binfmt_script), its x86_64 ELF header is checked and its PT_INTERP opened through the
 * VFS too, anything else is ENOEXEC; stores the fds as the task's pending exec
 * and rewrites the call to execve(MOAT_LOADER_PATH, argv, envp), with the path
 * string written below the stopped thread's red zone. The guest's native mount
 * namespace holds nothing but the loader, so a thread racing to rewrite that
 * string can only make the exec fail. On error the call is skipped and returns
 * -errno. The loader then fetches the pending exec with MOAT_SYS_LOADER.
 *
 * The pending exec lives only as long as that exec: the tracer resumes the
 * rewritten call with PTRACE_SYSCALL, and its syscall exit before
 * PTRACE_EVENT_EXEC means the kernel failed it (exec_drop closes the fds);
 * PTRACE_EVENT_EXEC gives the new image (the loader) the right to take it,
 * once (exec_done, loader_ok). A task that dies drops it too (task_put).
 */
#include "sentry/sentry.h"
#include "sentry/execfmt.h"
#include "fs/vfs.h"
#include "fs/walk.h"
#include "kernel/task.h"
#include "loader/loader_abi.h"
#include "platform/arch.h"
#include "platform/platform.h"
#include "syscalls/sc.h"
#include "common/log.h"
#include "common/util.h"
#include "syscalls/decode.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MAX_SCRIPT_DEPTH 5
#define MAX_PREFIX 16

struct pending_exec {
	int prog_fd;
	int interp_fd;
	/* the host identity of each (prog_id, interp_id: known from the
	 * exec stop's open; else the loader's call fstats the fd) */
	int prog_id, interp_id;
	dev_t prog_dev, interp_dev;
	ino_t prog_ino, interp_ino;
	int unreadable; /* a file of the chain the task may not read: not dumpable */
	uint32_t prefix_count;
	uint32_t skip;
	char exe[PATH_MAX];
	char execfn[PATH_MAX];
	char comm[16];
	size_t strings_len;
	char strings[4 * PATH_MAX]; /* prefix strings */
};

const char *const *exec_initial_path;

void exec_pexec_free(struct pending_exec *p)
{
	if (!p)
		return;
	if (p->prog_fd >= 0)
		close(p->prog_fd);
	if (p->interp_fd >= 0)
		close(p->interp_fd);
	free(p);
}

/* A file's first bytes, read once: the "#!" test, the ELF header, its
 * program headers and PT_INTERP's string are all there for a usual
 * program (one pread where there were four). Reads past it go to the file. */
struct head {
	int fd;
	ssize_t n;
	char b[4096];
};

static int head_load(struct head *h, int fd)
{
	h->fd = fd;
	h->n = pread(fd, h->b, sizeof h->b, 0);
	return h->n < 0 ? -EIO : 0;
}

static ssize_t fd_read(void *ctx, void *buf, size_t len, off_t off)
{
	const struct head *h = ctx;
	if (off < 0)
		return -EINVAL; /* pread's */
	if ((size_t)off + len <= (size_t)h->n) {
		memcpy(buf, h->b + off, len);
		return (ssize_t)len;
	}
	if (h->n < (ssize_t)sizeof h->b && (size_t)off >= (size_t)h->n)
		return 0; /* the file ends before */
	ssize_t n = pread(h->fd, buf, len, off);
	return n < 0 ? -errno : n;
}

/* Check an ELF header; find PT_INTERP: 1 (interp set), 0 (none), -errno. */
static int elf_interp(const struct head *h, char *interp, size_t ilen)
{
	return execfmt_elf_interp(fd_read, (void *)h, interp, ilen);
}

static int path_search(struct task *t, const char *name, int *fd, struct stat *st,
		       char *canon, size_t clen, char *found, size_t flen, int *unreadable,
		       int *host_id)
{
	int best = -ENOENT;
	for (const char *const *d = exec_initial_path; d && *d; d++) {
		char p[PATH_MAX];
		if (snprintf(p, sizeof p, "%s/%s", *d, name) >= (int)sizeof p)
			continue;
		int r = vfs_open_exec_id(t, AT_FDCWD, p, 0, fd, st, canon, clen, unreadable, host_id);
		if (r == 0) {
			snprintf(found, flen, "%s", p);
			return 0;
		}
		if (r == -EACCES)
			best = r;
	}
	return best;
}

/* Resolve everything for an exec. Returns the pending exec or -errno;
 * failed_interp (PATH_MAX bytes) gets the interpreter (#! or PT_INTERP) it
 * could not open, "" if none: the program's first exec names it (a script
 * whose interpreter is missing was "SCRIPT: not found", of a file that is
 * there). The caller's buffer, not a thread's (pss38: 4 KiB of TLS that
 * every thread of every moat process wrote at its start). */
static long prepare(struct task *t, int dirfd, const char *path, int atflags,
		    struct pending_exec **out, char *failed_interp)
{
	failed_interp[0] = 0;
	/* ~25 KiB, mostly the prefix strings' room: not zeroed (a calloc
	 * was ~3% of the tracer's CPU in a fork+exec loop, pexec4); every
	 * field is set here or before it is read */
	struct pending_exec *p = xmalloc(sizeof *p);
	p->prog_fd = p->interp_fd = -1;
	p->prog_id = p->interp_id = 0;
	p->unreadable = 0;
	p->prefix_count = p->skip = 0;
	p->exe[0] = p->execfn[0] = p->comm[0] = 0;
	p->strings_len = 0;
	char cur[PATH_MAX], canon[PATH_MAX];
	struct stat st;
	int fd = -1, r;
	char *prefix[MAX_PREFIX];
	int np = 0, hid = 0; /* hid: st's dev and ino are fd's on the host */
	long ret;
	struct head *h = NULL;

	snprintf(cur, sizeof cur, "%s", path);
	/* the name the kernel gives the new image (bprm->filename) */
	if (dirfd != AT_FDCWD && path[0] != '/') {
		if (path[0] == 0)
			snprintf(p->execfn, sizeof p->execfn, "/dev/fd/%d", dirfd);
		else
			snprintf(p->execfn, sizeof p->execfn, "/dev/fd/%d/%.4000s", dirfd, path);
	} else {
		snprintf(p->execfn, sizeof p->execfn, "%s", path);
	}
	if (t->initial && !strchr(path, '/')) {
		r = path_search(t, path, &fd, &st, canon, sizeof canon, cur, sizeof cur, &p->unreadable, &hid);
		snprintf(p->execfn, sizeof p->execfn, "%s", cur);
	} else {
		r = vfs_open_exec_id(t, dirfd, path, atflags, &fd, &st, canon, sizeof canon,
				     &p->unreadable, &hid);
	}
	if (r < 0) {
		ret = r;
		goto fail;
	}
	{
		/* a program some process of the sandbox holds open for writing
		 * does not run (Linux's deny_write_access: ETXTBSY; LTP execve04).
		 * The host file's identity: the fds scanned are the host's */
		struct stat hst;
		if (hid)
			hst = st; /* the open's own fstat of fd (issue 6: one fstat less) */
		/* (not a memfd: memfd_create's description counts no writer
		 * on Linux, which runs one still open for writing; red team 73:
		 * ETXTBSY through /proc/self/fd/N) */
		if (S_ISREG(st.st_mode) && (hid || fstat(fd, &hst) == 0) &&
		    !vfs_is_memfd(t->sb->vfs, &hst) &&
		    sc_exec_write_busy(t->sb, hst.st_dev, hst.st_ino)) {
			ret = -ETXTBSY;
			goto fail;
		}
	}
	{
		/* comm: basename of the name the kernel would use (the script, not
		 * its interpreter); for an fd-relative exec, of the file's own name */
		if (dirfd != AT_FDCWD && path[0] == 0)
			snprintf(cur, sizeof cur, "%s", canon);
		const char *b = strrchr(cur, '/');
		snprintf(p->comm, sizeof p->comm, "%.15s", b ? b + 1 : cur);
	}
	h = xmalloc(sizeof *h);
	for (int depth = 0;; depth++) {
		if (head_load(h, fd) < 0) {
			ret = -EIO;
			goto fail;
		}
		const char *hdr = h->b;
		ssize_t n = h->n < 256 ? h->n : 256; /* what binfmt_script looks at */
		char interp[PATH_MAX], arg[256];
		if (n >= 2 && hdr[0] == '#' && hdr[1] == '!') {
			if (depth >= MAX_SCRIPT_DEPTH) {
				ret = -ELOOP;
				goto fail;
			}
			if ((r = execfmt_shebang(hdr, n, interp, sizeof interp, arg, sizeof arg)) < 0) {
				ret = r;
				goto fail;
			}
			/* new argv = interp [arg] filename argv[1..] */
			char *np_[MAX_PREFIX];
			int k = 0;
			if (np + 3 > MAX_PREFIX) {
				ret = -E2BIG;
				goto fail;
			}
			np_[k++] = xstrdup(interp);
			if (arg[0])
				np_[k++] = xstrdup(arg);
			np_[k++] = xstrdup(depth == 0 ? p->execfn : cur);
			/* drop the previous argv[0] (first level: the loader's own argv[0]) */
			if (depth == 0)
				p->skip = 1;
			else {
				free(prefix[0]);
				memmove(prefix, prefix + 1, (np - 1) * sizeof *prefix);
				np--;
			}
			memmove(prefix + k, prefix, np * sizeof *prefix);
			memcpy(prefix, np_, k * sizeof *prefix);
			np += k;
			close(fd);
			fd = -1;
			snprintf(cur, sizeof cur, "%s", interp);
			r = vfs_open_exec_id(t, AT_FDCWD, interp, 0, &fd, &st, canon, sizeof canon,
					     &p->unreadable, &hid);
			if (r < 0) {
				snprintf(failed_interp, PATH_MAX, "%s", interp);
				ret = r;
				goto fail;
			}
			continue;
		}
		r = elf_interp(h, interp, sizeof interp);
		if (r < 0) {
			ret = r;
			goto fail;
		}
		p->prog_fd = fd;
		p->prog_id = hid;
		p->prog_dev = st.st_dev;
		p->prog_ino = st.st_ino;
		fd = -1;
		snprintf(p->exe, sizeof p->exe, "%s", canon);
		if (r > 0) {
			char ic[PATH_MAX];
			struct stat ist;
			int ifd, ihid;
			/* the open's errno as Linux's open_exec gives it (before:
			 * anything but EACCES was ENOENT); "" opens the cwd, a
			 * directory: EACCES */
			r = interp[0] ? vfs_open_exec_id(t, AT_FDCWD, interp, 0, &ifd, &ist, ic, sizeof ic,
							 &p->unreadable, &ihid)
				      : -EACCES;
			if (r < 0) {
				snprintf(failed_interp, PATH_MAX, "%s", interp);
				ret = r;
				goto fail;
			}
			/* Linux's checks before its point of no return: the
			 * header read (EIO when short), ELF x86_64, its program
			 * headers; its own PT_INTERP is not looked at (before:
			 * one of 8 bytes or more was ELIBBAD) */
			r = head_load(h, ifd) < 0 ? -EIO : execfmt_elf_interp_check(fd_read, h);
			if (r < 0) {
				close(ifd);
				ret = r;
				goto fail;
			}
			p->interp_fd = ifd;
			p->interp_id = ihid;
			p->interp_dev = ist.st_dev;
			p->interp_ino = ist.st_ino;
		}
		break;
	}
	free(h);
	h = NULL;
	/* pack the prefix strings */
	p->prefix_count = np;
	for (int i = 0; i < np; i++) {
		size_t l = strlen(prefix[i]) + 1;
		if (p->strings_len + l > sizeof p->strings) {
			ret = -E2BIG;
			goto fail;
		}
		memcpy(p->strings + p->strings_len, prefix[i], l);
		p->strings_len += l;
	}
	for (int i = 0; i < np; i++)
		free(prefix[i]);
	*out = p;
	return 0;
fail:
	free(h);
	for (int i = 0; i < np; i++)
		free(prefix[i]);
	if (fd >= 0)
		close(fd);
	exec_pexec_free(p);
	return ret;
}

static void trace_exec(struct sandbox *sb, struct task *t, const char *name, const char *path,
		       int decision, long ret, const char *note)
{
	char args[4096], qnote[512];
	if (!audit_wants_args(sb->audit))
		return;
	/* quoted as decode.c quotes every guest string (red team 86: raw
	 * here, a path holding `", ...) = 0 <allow>` forged the result of
	 * its own line) */
	size_t n = sc_quote_str(args, sizeof args - 8, path, 0);
	snprintf(args + n, sizeof args - n, ", ...");
	if (note && *note)
		sc_quote_str(qnote, sizeof qnote, note, 120);
	audit_event(sb->audit, sb, t, t->tid, name, args, decision, ret, note && *note ? qnote : note);
}

/* Drop the task's pending exec (its fds closed) and the loader's right. */
void exec_drop(struct task *t)
{
	pthread_mutex_lock(&t->lock);
	struct pending_exec *p = t->pexec;
	t->pexec = NULL;
	t->loader_ok = 0;
	t->loader_confirm = 0;
	pthread_mutex_unlock(&t->lock);
	exec_pexec_free(p);
}

void exec_done(struct task *t)
{
	pthread_mutex_lock(&t->lock);
	t->loader_ok = t->pexec != NULL;
	/* not dumpable from the new image's first instruction (Linux's
	 * begin_new_exec), not only from the loader call: until then another
	 * process of the same ids could write into the loader and have it
	 * hand over the program it maps */
	if (t->pexec && t->pexec->unreadable)
		t->cred.nondump = 1;
	pthread_mutex_unlock(&t->lock);
}

int exec_stop(struct sandbox *sb, struct task *t, const arch_regs *in)
{
	arch_regs regs = *in;
	exec_drop(t); /* whatever an earlier exec left */
	char failed_interp[PATH_MAX];
	failed_interp[0] = 0; /* (no prepare() below may set it) */
	long nr = REG_NR(regs);
	int dirfd = AT_FDCWD, atflags = 0;
	uint64_t paddr, argv, envp;
	const char *name = "execve";
	if (nr == 59) {
		paddr = REG_ARG0(regs);
		argv = REG_ARG1(regs);
		envp = REG_ARG2(regs);
	} else if (nr == 322) {
		name = "execveat";
		dirfd = (int)REG_ARG0(regs);
		paddr = REG_ARG1(regs);
		argv = REG_ARG2(regs);
		envp = REG_ARG3(regs);
		atflags = (int)REG_ARG4(regs);
	} else {
		return 0; /* not ours: let it run (the filter only traces exec) */
	}
	char path[PATH_MAX];
	long r = guest_read_str(t->tid, paddr, path, sizeof path);
	struct pending_exec *pe = NULL;
	int decision = DEC_ALLOW, perr = 0;
	if (atflags & ~(AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW))
		r = -EINVAL; /* as Linux's execveat, before it looks at the path */
	else if (r >= 0 && path[0] == 0 && !(atflags & AT_EMPTY_PATH))
		r = -ENOENT;
	if (r >= 0)
		r = prepare(t, dirfd, path, atflags, &pe, failed_interp);
	if (r == 0 && policy_check_exec(sb->policy, t, pe->exe, &perr) != DEC_ALLOW) {
		decision = DEC_DENY;
		r = -(perr ? perr : EACCES);
		exec_pexec_free(pe);
		pe = NULL;
	}
	if (r == 0) {
		/* write MOAT_LOADER_PATH below the red zone and point the call at it */
		static const char lp[] = MOAT_LOADER_PATH;
		uint64_t addr = (REG_SP(regs) - ARCH_RED_ZONE - sizeof lp - 16) & ~15ULL;
		if (guest_write(t->tid, addr, lp, sizeof lp) < 0) {
			r = -EFAULT;
			exec_pexec_free(pe);
			pe = NULL;
		} else {
			REG_SYSNO(regs) = 59;
			REG_ARG0(regs) = addr;
			REG_ARG1(regs) = argv;
			REG_ARG2(regs) = envp;
			pthread_mutex_lock(&t->lock);
			t->pexec = pe; /* exec_drop above emptied it */
			t->loader_ok = 0;
			pthread_mutex_unlock(&t->lock);
		}
	}
	if (r == -EINTR)
		r = -EIO; /* a gofer call abandoned at the tracer's deadline */
	if (r < 0) {
		if (t->initial) {
			const char *what = r == -ENOENT ? "not found" : strerror((int)-r);
			/* any open error of the interpreter names it (ENOTDIR,
			 * ELOOP… too: ltp35, they named the program alone);
			 * 200 bytes of names (up to 800 escaped) keep the
			 * reason in the line (red team 86: a path of 3,000
			 * bytes of \001 filled it, "not found" was lost) */
			if (failed_interp[0])
				warnx_("%.100s: its interpreter %.100s: %s", path, failed_interp, what);
			else
				warnx_("%.200s: %s", path, what);
		}
		REG_SYSNO(regs) = -1; /* skip the call */
		REG_RET(regs) = r;
	}
	ptrace(PTRACE_SETREGS, t->tid, 0, &regs);
	trace_exec(sb, t, name, path, decision, r, r == 0 && pe ? pe->exe : "");
	t->initial = 0;
	return r == 0;
}

/* Start-up: resolve the program's first exec once before the guest's init
 * has finished its set-up (run.c calls this while the init builds its root,
 * on another CPU), and drop the result. What it leaves is the dentry cache's
 * entries of every name that exec and the interpreter's first look-up walk:
 * the $PATH search (absent names included, as negative entries), the
 * program, its interpreter, the export roots on the way and
 * /etc/ld.so.cache, each a gofer round trip on the program's critical path
 * before (`true`: 10 of its 11). The real exec stop resolves all of it again,
 * permissions and all, against the cache (its direct opens are the sentry's
 * own calls); a failure here changes nothing (the exec reports it). The
 * cache is the guest's view, not the probe's: entries carry no caller. */
void exec_prewarm(struct sandbox *sb, const char *path, const char *cwd)
{
	struct task *probe = xcalloc(1, sizeof *probe);
	struct pending_exec *pe = NULL;
	char failed_interp[PATH_MAX];

	if (!path || !*path)
		goto out;
	probe->sb = sb;
	probe->pidfd = -1;
	probe->initial = 1;
	probe->fs = fs_ctx_new(cwd ? cwd : "/", 022);
	cred_init(&probe->cred, sb->start_uid, sb->start_gid);
	if (prepare(probe, AT_FDCWD, path, 0, &pe, failed_interp) == 0 && pe->interp_fd >= 0) {
		/* a dynamic program's interpreter looks these up first: the
		 * preload list (absent as a rule: a negative entry, else its
		 * first look-up, a host openat2 beneath the export root, cost
		 * 12-27 us of the guest's first trapped call) and the cache */
		struct vfs_node *n = xmalloc(sizeof *n);
		(void)vfs_walk(sb->vfs, probe, AT_FDCWD, "/etc/ld.so.preload", 0, n);
		(void)vfs_walk(sb->vfs, probe, AT_FDCWD, "/etc/ld.so.cache", 0, n);
		free(n);
	}
	exec_pexec_free(pe);
	fs_ctx_put(probe->fs);
out:
	free(probe);
}

static long loader_call(struct sc_call *c);

long exec_loader_call(struct sc_call *c)
{
	long r = loader_call(c);
	task_loader_unpin(c->task); /* before the answer: the program runs unpinned */
	return r;
}

/* MOAT_LOADER_CLOSED: the loader of an exec of a file the task may not
 * read says it closed its fds (args 1 and 2, the numbers GET gave it; -1:
 * none). The guest's seccomp filters outlive its exec and apply to the
 * loader's calls: one answering close() with RET_ERRNO(0) kept the
 * program's fd open into the program, which read the whole file (red team
 * 38: an exec-only program's bytes past its segments; Linux's exec holds
 * the file in the kernel, never in the fd table). So the fd table is
 * looked at here, not taken on the loader's word: an fd still at such a
 * number (nothing else opens one in the loader, which runs alone in its
 * new table) kills the task before the program's first instruction. Only
 * this positive answer lets the loader jump: a filter fakes 0 or -errno. */
static long loader_closed(struct sc_call *c)
{
	struct task *t = c->task;
	pthread_mutex_lock(&t->lock);
	int want = t->loader_confirm;
	t->loader_confirm = 0;
	pthread_mutex_unlock(&t->lock);
	if (!want)
		return -ENOSYS; /* not a loader that was asked to */
	for (int i = 1; i <= 2; i++) {
		int n = (int)c->args[i];
		if (n < 0 && i == 2)
			continue;
		int fd = n < 0 ? -EINVAL : task_getfd(t, n);
		if (fd == -EBADF)
			continue;
		if (fd == -ESRCH) {
			/* the caller is gone or going (its notification no
			 * longer valid, or no process: a SIGKILL of the group
			 * during the call): killed, nothing to say about it
			 * (CI: a test's kill of its child in its loader printed
			 * the "still open" line) */
			kill(t->tgid, SIGKILL);
			return -ESRCH;
		}
		if (fd >= 0)
			close(fd);
		/* still open (or the table could not be read): fail closed */
		char exe[256];
		pthread_mutex_lock(&t->lock);
		snprintf(exe, sizeof exe, "%.200s", t->exe);
		pthread_mutex_unlock(&t->lock);
		warn_guest("exec of %s: the loader's fd %d is still open (a seccomp filter of the guest's?): killed",
		       exe, n);
		snprintf(c->note, sizeof c->note, "loader fd %d left open: killed", n);
		kill(t->tgid, SIGKILL);
		return -EBADF;
	}
	return MOAT_LOADER_CLOSED_OK;
}

static long loader_call(struct sc_call *c)
{
	struct task *t = c->task;
	if (c->args[0] == MOAT_LOADER_CLOSED)
		return loader_closed(c);
	if (c->args[0] != MOAT_LOADER_GET)
		return -ENOSYS;
	/* Only the image PTRACE_EVENT_EXEC just started (the loader), once. */
	pthread_mutex_lock(&t->lock);
	struct pending_exec *p = t->loader_ok ? t->pexec : NULL;
	if (p)
		t->pexec = NULL;
	t->loader_ok = 0;
	pthread_mutex_unlock(&t->lock);
	if (!p)
		return -ENOSYS; /* not a loader: an unknown syscall like any other */
	size_t execfn_len = strlen(p->execfn) + 1, comm_len = strlen(p->comm) + 1;
	size_t total = sizeof(struct moat_exec_info) + p->strings_len + execfn_len + comm_len;
	long ret;
	if (total > MOAT_EXEC_INFO_MAX || total > c->args[2]) {
		ret = -E2BIG;
		goto out;
	}
	struct moat_exec_info *info = xcalloc(1, total);
	info->magic = MOAT_EXEC_MAGIC;
	info->version = MOAT_EXEC_VERSION;
	info->prefix_count = p->prefix_count;
	info->skip = p->skip;
	/* the auxv's ids and AT_SECURE: the kernel's are those of its exec of
	 * the loader (the host ids, never secure), so ld.so and glibc took an
	 * exec with ruid != euid for an ordinary one (LD_PRELOAD, GCONV_PATH,
	 * MALLOC_* honoured). Linux's secureexec: the effective ids differ
	 * from the real ones (no set-id bit is ever honoured: cred_exec) */
	pthread_mutex_lock(&t->lock);
	info->uid = t->cred.ruid;
	info->euid = t->cred.euid;
	info->gid = t->cred.rgid;
	info->egid = t->cred.egid;
	pthread_mutex_unlock(&t->lock);
	info->secure = info->uid != info->euid || info->gid != info->egid;
	info->confirm = p->unreadable != 0;
	info->prefix_off = 0;
	memcpy(info->strings, p->strings, p->strings_len);
	info->execfn_off = p->strings_len;
	memcpy(info->strings + info->execfn_off, p->execfn, execfn_len);
	info->comm_off = info->execfn_off + execfn_len;
	memcpy(info->strings + info->comm_off, p->comm, comm_len);
	info->strings_len = p->strings_len + execfn_len + comm_len;
	info->len = (uint32_t)total;
	/* The last fd goes in with the answer (the pipeline's ADDFD_FLAG_SEND:
	 * c->out_fd), so the info names it MOAT_EXEC_FD_RET: the loader's call
	 * returns its number. Before, both fds were installed without SEND and
	 * the answer sent after (each install a wake-up of the loader and one
	 * back: five switches on the exec's path where there are now three,
	 * one for a static program). */
	int pfd = MOAT_EXEC_FD_RET, *last = &p->prog_fd;
	if (p->interp_fd >= 0) {
		pfd = platform_unotify.addfd(c->notify_fd, c->id, p->prog_fd, O_CLOEXEC, -1, 0);
		if (pfd < 0) {
			ret = pfd;
			free(info);
			goto out;
		}
		last = &p->interp_fd;
	}
	info->prog_fd = pfd;
	info->interp_fd = p->interp_fd >= 0 ? MOAT_EXEC_FD_RET : -1;
	ret = sc_write_guest(c, c->args[1], info, total);
	free(info);
	if (ret == 0) {
		struct stat pst;
		pthread_mutex_lock(&t->lock);
		snprintf(t->exe, sizeof t->exe, "%s", p->exe);
		snprintf(t->comm, sizeof t->comm, "%s", p->comm);
		t->exe_ino = t->interp_ino = 0;
		/* the host identities the exec stop's opens saw (the same
		 * fds, held since: an open file's inode never changes), or
		 * an fstat of a guest's own fd's */
		if (p->prog_id) {
			t->exe_dev = p->prog_dev;
			t->exe_ino = p->prog_ino;
		} else if (fstat(p->prog_fd, &pst) == 0) {
			t->exe_dev = pst.st_dev;
			t->exe_ino = pst.st_ino;
		}
		if (p->interp_fd >= 0 && p->interp_id) {
			t->interp_dev = p->interp_dev;
			t->interp_ino = p->interp_ino;
		} else if (p->interp_fd >= 0 && fstat(p->interp_fd, &pst) == 0) {
			t->interp_dev = pst.st_dev;
			t->interp_ino = pst.st_ino;
		}
		struct cred before = t->cred;
		cred_exec(&t->cred); /* saved ids, fsuid and capabilities after execve */
		/* commit_creds's rule, and a secure exec's (begin_new_exec:
		 * euid or egid not the real one) clear the parent-death signal */
		if (cred_commit_resets(&before, &t->cred) || t->cred.euid != t->cred.ruid ||
		    t->cred.egid != t->cred.rgid)
			atomic_store(&t->pdeathsig, 0);
		if (p->unreadable)
			t->cred.nondump = 1; /* Linux's would_dump */
		t->loader_confirm = p->unreadable != 0;
		pthread_mutex_unlock(&t->lock);
		sc_quote_str(c->note, sizeof c->note, p->exe, 120);
		/* the pipeline installs it (ADDFD_FLAG_SEND) and closes it */
		c->out_fd = *last;
		c->out_fd_flags = O_CLOEXEC;
		*last = -1;
	}
out:
	exec_pexec_free(p);
	return ret;
}
