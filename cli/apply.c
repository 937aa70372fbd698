/* cli/apply.c - moat apply's all or nothing around git apply.
 *
 * git apply checks a whole patch before it writes, but then writes in two
 * passes: it removes every file it deletes, renames or modifies, then
 * creates each new version in the patch's order, and stops at the first
 * failure. A write that fails there (ENOSPC, EDQUOT, EFBIG, EACCES in a
 * directory of TREE) left the tree half applied and, worse, lost the
 * caller's files whose removal came before it and whose new version came
 * after (red team 94: a guest's export modifying a, b, c and adding a
 * 3 MB big.bin, applied in a 2 MB tmpfs: a and b new, big.bin cut, c
 * gone). Here each path the patch names that TREE holds is first
 * hard-linked into an undo directory in TREE (no data copied: git apply
 * unlinks and makes files anew, never writes into them), and if git apply
 * fails the tree is put back: what it made is removed, what it removed is
 * linked back, with its directories. Every name in TREE is reached one
 * component at a time, never through a symlink.
 */
#include "cli/apply.h"
#include "common/log.h"
#include "common/util.h"
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

struct apply_ent {
	char *path;     /* relative to TREE, as git apply names it */
	int present;    /* number of leading components TREE had as directories */
	int ncomp;      /* components of path */
	int saved;      /* a non-directory was there: linked into the undo dir as "<index>" */
	int wasdir;     /* a directory was there */
	mode_t dirmode; /* ... with this mode */
	uid_t diruid;   /* ... and owner */
	gid_t dirgid;
	mode_t *modes;  /* the modes of the present leading directories */
	uid_t *uids;    /* ... and their owners */
	gid_t *gids;
	dev_t dev;
	ino_t ino;
};

struct apply_state {
	int treefd, undofd;
	char undoname[32];
	struct apply_ent *e;
	size_t n, cap;
};

/* Run git with args in the current directory (TREE); its stdout into *out
 * when out is not NULL. The caller's SIGINT/SIGTERM/SIGHUP/SIGQUIT reach
 * git (same process group) but not us while it runs: we still put the
 * tree back after a git killed mid-write. Returns a wait status. */
static int run_git(const char *git, char *const args[], char **out, size_t *outlen)
{
	int p[2] = { -1, -1 };
	if (out && pipe2(p, O_CLOEXEC) < 0)
		pdie("apply: pipe");
	pid_t pid = fork();
	if (pid < 0)
		pdie("apply: fork");
	if (pid == 0) {
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		signal(SIGQUIT, SIG_DFL);
		if (out && dup2(p[1], 1) < 0)
			_exit(127);
		execv(git, args);
		_exit(127);
	}
	if (out) {
		close(p[1]);
		size_t cap = 4096, len = 0;
		char *buf = xmalloc(cap);
		for (;;) {
			if (len + 1 >= cap) {
				cap *= 2;
				char *nb = realloc(buf, cap);
				if (!nb)
					die("apply: out of memory");
				buf = nb;
			}
			ssize_t r = read(p[0], buf + len, cap - len - 1);
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0)
				break;
			len += (size_t)r;
		}
		buf[len] = 0;
		close(p[0]);
		*out = buf;
		*outlen = len;
	}
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			pdie("apply: waitpid");
	return st;
}

/* Whether PATCH has a rename header ("rename from", or git's older "rename
 * old"): only then do old names differ from what --numstat lists (a
 * deletion's is its old one), and the -R pass, a second parse of the whole
 * patch, is needed. A hunk's lines start with ' ', '+', '-' or '\\', and a
 * binary literal's base85 lines hold no space: such a line is a header. */
static int has_renames(const char *patch)
{
	int fd = open(patch, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size == 0) {
		if (fd >= 0)
			close(fd);
		return 1; /* not known: take the second pass */
	}
	size_t n = (size_t)st.st_size;
	char *m = mmap(NULL, n, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return 1;
	int found = 0;
	static const char *const keys[] = { "rename from ", "rename old " };
	for (size_t k = 0; k < 2 && !found; k++) {
		size_t kl = strlen(keys[k]);
		for (const char *p = m; p && (size_t)(p - m) + kl <= n;) {
			if ((p == m || p[-1] == '\n') && memcmp(p, keys[k], kl) == 0) {
				found = 1;
				break;
			}
			const char *nl = memchr(p, '\n', n - (size_t)(p - m));
			p = nl ? nl + 1 : NULL;
		}
	}
	munmap(m, n);
	return found;
}

static int cmp_ent(const void *a, const void *b)
{
	return strcmp(((const struct apply_ent *)a)->path, ((const struct apply_ent *)b)->path);
}

static int status_code(int st)
{
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Append the names of `git apply --numstat -z` output (ADDED\tDELETED\tNAME\0
 * records) to s. */
static void add_names(struct apply_state *s, const char *buf, size_t len)
{
	size_t i = 0;
	while (i < len) {
		const char *rec = buf + i;
		size_t rl = strnlen(rec, len - i);
		i += rl + 1;
		const char *t1 = memchr(rec, '\t', rl);
		const char *t2 = t1 ? memchr(t1 + 1, '\t', rl - (size_t)(t1 + 1 - rec)) : NULL;
		if (!t2)
			die("apply: git apply --numstat: unexpected output");
		const char *name = t2 + 1;
		if (s->n == s->cap) {
			s->cap = s->cap ? 2 * s->cap : 64;
			s->e = realloc(s->e, s->cap * sizeof *s->e);
			if (!s->e)
				die("apply: out of memory");
		}
		memset(&s->e[s->n], 0, sizeof s->e[s->n]);
		s->e[s->n++].path = xstrdup(name);
	}
}

/* The I-th component of PATH (0-based) into buf. */
static void component(const char *path, int i, char *buf, size_t size)
{
	const char *p = path;
	for (; i > 0; i--)
		p = strchr(p, '/') + 1;
	size_t n = strcspn(p, "/");
	if (n >= size)
		n = size - 1;
	memcpy(buf, p, n);
	buf[n] = 0;
}

static int count_components(const char *path)
{
	int n = 1;
	for (const char *p = path; *p; p++)
		n += *p == '/';
	return n;
}

/* Make directory COMP in FD again as TREE had it: its mode and owner (root
 * applying a user's tree made it root's, the user shut out of it). The mode
 * and owner are set through an fd of the directory made, opened without
 * following a symlink: fchmodat(..., 0) by name would follow one the
 * tree's owner swapped in between the mkdir and the chmod, and root give a
 * host file that mode (red team 96). */
static int remake_dir(int fd, const char *comp, mode_t mode, uid_t uid, gid_t gid)
{
	if (mkdirat(fd, comp, 0700) < 0)
		return -1;
	int dfd = openat(fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return -1;
	struct stat st;
	int r = fstat(dfd, &st);
	if (r == 0 && (st.st_uid != uid || st.st_gid != gid) && fchown(dfd, uid, gid) < 0 && errno != EPERM)
		r = -1; /* EPERM: not root, another owner's group; the mode still put back */
	if (r == 0)
		r = fchmod(dfd, mode);
	close(dfd);
	return r;
}

/* An O_PATH fd of E's first UPTO components beneath TREE, each a real
 * directory (never a symlink), or -errno. With mk, a missing one that TREE
 * had is made again with its mode. */
static int open_leading(struct apply_state *s, struct apply_ent *e, int upto, int mk)
{
	int fd = openat(s->treefd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	char comp[4096];
	for (int i = 0; i < upto; i++) {
		component(e->path, i, comp, sizeof comp);
		int nfd = openat(fd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (nfd < 0 && errno == ENOENT && mk && i < e->present) {
			remake_dir(fd, comp, e->modes[i], e->uids[i], e->gids[i]);
			nfd = openat(fd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		}
		int err = errno;
		close(fd);
		if (nfd < 0)
			return -err;
		fd = nfd;
	}
	return fd;
}

/* Remove the undo directory (its links only: what was saved is in TREE). */
static void undo_remove(struct apply_state *s)
{
	char name[32];
	for (size_t i = 0; i < s->n; i++) {
		snprintf(name, sizeof name, "%zu", i);
		unlinkat(s->undofd, name, 0);
	}
	close(s->undofd);
	unlinkat(s->treefd, s->undoname, AT_REMOVEDIR);
}

/* What TREE has at e->path before git apply runs; a non-directory there is
 * linked into the undo directory. Dies (nothing changed but the undo
 * directory, which it removes) on what it cannot keep. */
static void save_one(struct apply_state *s, size_t idx)
{
	struct apply_ent *e = &s->e[idx];
	e->ncomp = count_components(e->path);
	char comp[4096];
	for (int i = 0; i < e->ncomp; i++) {
		component(e->path, i, comp, sizeof comp);
		if (!comp[0] || strcmp(comp, ".") == 0 || strcmp(comp, "..") == 0 ||
		    (i == 0 && strcmp(comp, s->undoname) == 0)) {
			undo_remove(s);
			die("apply: %s: a name git apply should not take; nothing applied", e->path);
		}
	}
	e->modes = xmalloc((size_t)e->ncomp * sizeof *e->modes);
	e->uids = xmalloc((size_t)e->ncomp * sizeof *e->uids);
	e->gids = xmalloc((size_t)e->ncomp * sizeof *e->gids);
	int fd = openat(s->treefd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		pdie("apply: %s", e->path);
	e->present = 0;
	for (int i = 0; i < e->ncomp; i++) {
		component(e->path, i, comp, sizeof comp);
		struct stat st;
		if (fstatat(fd, comp, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			if (errno == ENOENT || errno == ENOTDIR)
				break;
			int err = errno;
			close(fd);
			undo_remove(s);
			die("apply: %s: %s; nothing applied", e->path, strerror(err));
		}
		if (i + 1 == e->ncomp) {
			if (S_ISDIR(st.st_mode)) {
				e->wasdir = 1;
				e->dirmode = st.st_mode & 07777;
				e->diruid = st.st_uid;
				e->dirgid = st.st_gid;
			} else {
				char name[32];
				snprintf(name, sizeof name, "%zu", idx);
				if (linkat(fd, comp, s->undofd, name, 0) < 0) {
					int err = errno;
					close(fd);
					undo_remove(s);
					die("apply: %s: cannot keep it to undo a failed apply: %s; nothing applied",
					    e->path, strerror(err));
				}
				e->saved = 1;
				e->dev = st.st_dev;
				e->ino = st.st_ino;
			}
			break;
		}
		if (S_ISLNK(st.st_mode)) {
			close(fd);
			undo_remove(s);
			die("apply: %s: beyond a symbolic link in the tree; nothing applied", e->path);
		}
		if (!S_ISDIR(st.st_mode))
			break;
		e->modes[i] = st.st_mode & 07777;
		e->uids[i] = st.st_uid;
		e->gids[i] = st.st_gid;
		int nfd = openat(fd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		int err = errno;
		close(fd);
		if (nfd < 0) {
			undo_remove(s);
			die("apply: %s: %s; nothing applied", e->path, strerror(err));
		}
		fd = nfd;
		e->present = i + 1;
	}
	close(fd);
}

/* Remove the leaf of e->path if it is not what was saved, and the
 * directories leading to it that TREE did not have. One walk down, then up
 * by "..", each parent checked to be the directory the walk down passed
 * (a directory the tree's owner moves out of TREE meanwhile: its ".." is
 * not, and nothing outside TREE is removed) and to hold the one left under
 * its name, stopping at the first that is not empty (its parents hold it): opening
 * each level from TREE again cost depth^2 openat per path (red team 96: 20
 * files 1,500 directories deep took 4 min to undo). Returns changes made. */
static int rollback_new(struct apply_state *s, struct apply_ent *e)
{
	int changed = 0;
	char comp[4096];
	int fd = openat(s->treefd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	/* the directories passed: dir[k] is e->path's first k components */
	struct stat *dir = xmalloc((size_t)e->ncomp * sizeof *dir);
	int upto = 0; /* fd is e->path's first upto components */
	if (fstat(fd, &dir[0]) < 0) {
		close(fd);
		free(dir);
		return 0;
	}
	for (; upto < e->ncomp - 1; upto++) {
		component(e->path, upto, comp, sizeof comp);
		int nfd = openat(fd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (nfd < 0)
			break;
		close(fd);
		fd = nfd;
		if (fstat(fd, &dir[upto + 1]) < 0)
			memset(&dir[upto + 1], 0, sizeof dir[upto + 1]); /* no walk up past it */
	}
	for (; upto >= e->present; upto--) {
		component(e->path, upto, comp, sizeof comp);
		struct stat st;
		if (fstatat(fd, comp, &st, AT_SYMLINK_NOFOLLOW) == 0) {
			if (upto == e->ncomp - 1 && !S_ISDIR(st.st_mode)) {
				if (!(e->saved && st.st_dev == e->dev && st.st_ino == e->ino) &&
				    unlinkat(fd, comp, 0) == 0)
					changed++;
			} else if (S_ISDIR(st.st_mode) && !(upto == e->ncomp - 1 && e->wasdir)) {
				if (unlinkat(fd, comp, AT_REMOVEDIR) == 0)
					changed++;
				else if (errno == ENOTEMPTY || errno == EEXIST)
					break;
			}
		}
		if (upto <= e->present)
			break;
		struct stat cst, pst, ust;
		int pfd = openat(fd, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
		component(e->path, upto - 1, comp, sizeof comp);
		if (pfd < 0 || fstat(pfd, &ust) < 0 || ust.st_dev != dir[upto - 1].st_dev ||
		    ust.st_ino != dir[upto - 1].st_ino || fstat(fd, &cst) < 0 ||
		    fstatat(pfd, comp, &pst, AT_SYMLINK_NOFOLLOW) < 0 || pst.st_dev != cst.st_dev ||
		    pst.st_ino != cst.st_ino) {
			if (pfd >= 0)
				close(pfd);
			break;
		}
		close(fd);
		fd = pfd;
	}
	close(fd);
	free(dir);
	return changed;
}

/* Link a saved path back (its directories made again), or make a directory
 * that was there again. Returns changes made, or -1 when it could not. */
static int rollback_old(struct apply_state *s, size_t idx)
{
	struct apply_ent *e = &s->e[idx];
	if (!e->saved && !e->wasdir)
		return 0;
	int fd = open_leading(s, e, e->ncomp - 1, 1);
	if (fd < 0)
		return -1;
	char comp[4096], name[32];
	component(e->path, e->ncomp - 1, comp, sizeof comp);
	struct stat st;
	int r = 0;
	if (fstatat(fd, comp, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		if (e->wasdir && S_ISDIR(st.st_mode))
			goto out;
		if (e->saved && st.st_dev == e->dev && st.st_ino == e->ino)
			goto out;
		if (unlinkat(fd, comp, S_ISDIR(st.st_mode) ? AT_REMOVEDIR : 0) < 0) {
			r = -1;
			goto out;
		}
	}
	snprintf(name, sizeof name, "%zu", idx);
	if (e->wasdir ? remake_dir(fd, comp, e->dirmode, e->diruid, e->dirgid) < 0
		      : linkat(s->undofd, name, fd, comp, 0) < 0)
		r = -1;
	else
		r = 1;
out:
	close(fd);
	return r;
}

int moat_apply(const char *git, const char *patch)
{
	struct apply_state s = { .treefd = -1, .undofd = -1 };
	char *const names[] = { "git", "-c", "core.attributesFile=/dev/null", "apply", "--numstat", "-z",
				"--", (char *)patch, NULL };
	char *const rnames[] = { "git", "-c", "core.attributesFile=/dev/null", "apply", "-R", "--numstat",
				 "-z", "--", (char *)patch, NULL };
	char *const args[] = { "git", "-c", "core.attributesFile=/dev/null", "apply", "--", (char *)patch, NULL };

	/* the paths the patch names: new names, then (reversed) old names */
	char *out;
	size_t len;
	int st = run_git(git, names, &out, &len);
	if (st != 0)
		return status_code(st); /* git said why; nothing changed */
	add_names(&s, out, len);
	free(out);
	if (has_renames(patch)) {
		st = run_git(git, rnames, &out, &len);
		if (st != 0)
			return status_code(st);
		add_names(&s, out, len);
		free(out);
	}
	qsort(s.e, s.n, sizeof *s.e, cmp_ent);
	size_t u = 0;
	for (size_t i = 0; i < s.n; i++) {
		if (u && strcmp(s.e[u - 1].path, s.e[i].path) == 0) {
			free(s.e[i].path);
			continue;
		}
		s.e[u++] = s.e[i];
	}
	s.n = u;

	s.treefd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (s.treefd < 0)
		pdie("apply: the tree");
	for (int tries = 0;; tries++) {
		unsigned char rnd[6] = { 0 };
		if (getrandom(rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd)
			rnd[0] = (unsigned char)tries;
		snprintf(s.undoname, sizeof s.undoname, ".moat-apply.%02x%02x%02x%02x%02x%02x", rnd[0], rnd[1],
			 rnd[2], rnd[3], rnd[4], rnd[5]);
		if (mkdirat(s.treefd, s.undoname, 0700) == 0)
			break;
		if (errno != EEXIST || tries > 100)
			pdie("apply: cannot make the directory that undoes a failed apply in the tree; "
			     "nothing applied");
	}
	s.undofd = openat(s.treefd, s.undoname, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (s.undofd < 0) {
		int err = errno;
		unlinkat(s.treefd, s.undoname, AT_REMOVEDIR);
		die("apply: %s: %s; nothing applied", s.undoname, strerror(err));
	}
	for (size_t i = 0; i < s.n; i++)
		save_one(&s, i);

	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	st = run_git(git, args, NULL, NULL);
	if (st == 0) {
		undo_remove(&s);
		return 0;
	}

	/* put the tree back: what git made first, then what it removed */
	int changed = 0, lost = 0;
	for (int pass = 0; pass < 64; pass++) {
		int c = 0;
		for (size_t i = s.n; i-- > 0;)
			c += rollback_new(&s, &s.e[i]);
		changed += c;
		if (!c)
			break;
	}
	for (size_t i = 0; i < s.n; i++) {
		int r = rollback_old(&s, i);
		if (r < 0) {
			warnx_("apply: %s: could not be put back (kept in %s as %zu)", s.e[i].path, s.undoname, i);
			lost++;
		} else {
			changed += r;
		}
	}
	if (lost) {
		close(s.undofd);
		die("apply: git apply failed and %d path(s) could not be put back: the tree is half applied", lost);
	}
	undo_remove(&s);
	if (changed)
		warnx_("apply: git apply failed after it changed the tree; %d change(s) undone: the tree is as "
		       "it was, nothing applied",
		       changed);
	return status_code(st) ? status_code(st) : 1;
}
