/* tests/loader/harness.c - play the sentry's part of exec for the loader.
 *
 * usage: loader-harness LOADER PROGRAM [options] -- ARGV...
 *   --prefix STR   argv string to put first (repeatable; #! interpreters)
 *   --skip N       how many of the loader's own argv to drop (default 0)
 *   --execfn STR   AT_EXECFN (default PROGRAM)
 *   --comm STR     task name (default basename of PROGRAM)
 *   --interp PATH  interpreter to install (default PROGRAM's PT_INTERP;
 *                  "none" for no interpreter)
 *
 * The child installs a seccomp filter that sends MOAT_SYS_LOADER to user
 * notification, hands the listener to the parent and execs LOADER with ARGV
 * and our environment. The parent answers the first MOAT_LOADER_GET like
 * the sentry does (ADDFD of the program and interpreter, exec info written
 * with process_vm_writev) and every later one with -ENOENT, then exits with
 * the child's status (128+N if killed by signal N).
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/util.h"
#include "loader/loader_abi.h"

extern char **environ;

#define MAX_PREFIX 16

static void fail(const char *what)
{
	fprintf(stderr, "loader-harness: %s: %s\n", what, strerror(errno));
	exit(125);
}

static void usage(void)
{
	fprintf(stderr, "usage: loader-harness LOADER PROGRAM [--prefix S]... "
			"[--skip N] [--execfn S] [--comm S] [--interp P] "
			"-- ARGV...\n");
	exit(125);
}

/* PT_INTERP of the ELF at fd, or NULL. */
static char *elf_interp(int fd)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph;

	if (pread(fd, &eh, sizeof(eh), 0) != sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0)
		return NULL;
	for (int i = 0; i < eh.e_phnum; i++) {
		off_t off = (off_t)(eh.e_phoff + (uint64_t)i * eh.e_phentsize);
		char *path;

		if (pread(fd, &ph, sizeof(ph), off) != sizeof(ph))
			return NULL;
		if (ph.p_type != PT_INTERP || ph.p_filesz == 0 ||
		    ph.p_filesz > 4096)
			continue;
		path = calloc(1, ph.p_filesz + 1);
		if (!path ||
		    pread(fd, path, ph.p_filesz, (off_t)ph.p_offset) !=
			    (ssize_t)ph.p_filesz)
			return NULL;
		return path;
	}
	return NULL;
}

static int install_filter(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, MOAT_SYS_LOADER, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]),
				   .filter = f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		fail("PR_SET_NO_NEW_PRIVS");
	return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
			    SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
}

struct pending {
	int prog_fd, interp_fd;
	const char *prefix[MAX_PREFIX];
	unsigned nprefix, skip;
	const char *execfn, *comm;
	int used;
};

static int add_fd(int listener, uint64_t id, int fd, int send)
{
	struct seccomp_notif_addfd add = {
		.id = id,
		.flags = send ? SECCOMP_ADDFD_FLAG_SEND : 0,
		.srcfd = (uint32_t)fd,
		.newfd = 0,
		.newfd_flags = O_CLOEXEC,
	};

	return ioctl(listener, SECCOMP_IOCTL_NOTIF_ADDFD, &add);
}

/* Serve one notification; the reply's value or -errno. As the sentry
 * (exec_loader_call): the last fd (the interpreter's, or a static
 * program's own) is installed with the answer (ADDFD_FLAG_SEND), after the
 * info is written, and the info names it MOAT_EXEC_FD_RET; *sent is then
 * set (the answer is given: no SEND after). */
static int64_t serve(int listener, struct pending *p,
		     const struct seccomp_notif *req, int *sent)
{
	static char buf[MOAT_EXEC_INFO_MAX];
	struct moat_exec_info *info = (struct moat_exec_info *)buf;
	size_t off = 0, len;
	int pfd, ifd = -1;

	if (req->data.nr != MOAT_SYS_LOADER ||
	    req->data.args[0] != MOAT_LOADER_GET)
		return -ENOSYS;
	if (p->used)
		return -ENOENT;

	pfd = MOAT_EXEC_FD_RET;
	if (p->interp_fd >= 0) {
		pfd = add_fd(listener, req->id, p->prog_fd, 0);
		if (pfd < 0)
			return -errno;
		ifd = MOAT_EXEC_FD_RET;
	}
	memset(buf, 0, sizeof(*info));
	info->magic = MOAT_EXEC_MAGIC;
	info->version = MOAT_EXEC_VERSION;
	info->prog_fd = pfd;
	info->interp_fd = ifd;
	info->prefix_count = p->nprefix;
	info->skip = p->skip;
	info->uid = getuid();
	info->euid = geteuid();
	info->gid = getgid();
	info->egid = getegid();
	info->secure = info->uid != info->euid || info->gid != info->egid;

#define PUT(s)                                                              \
	do {                                                                \
		size_t l_ = strlen(s) + 1;                                  \
		if (sizeof(*info) + off + l_ > sizeof(buf))                 \
			return -E2BIG;                                      \
		memcpy(info->strings + off, (s), l_);                       \
		off += l_;                                                  \
	} while (0)

	info->prefix_off = 0;
	for (unsigned i = 0; i < p->nprefix; i++)
		PUT(p->prefix[i]);
	info->execfn_off = (uint32_t)off;
	PUT(p->execfn);
	info->comm_off = (uint32_t)off;
	{
		char comm[16];

		snprintf(comm, sizeof(comm), "%s", p->comm);
		PUT(comm);
	}
#undef PUT
	info->strings_len = (uint32_t)off;
	len = sizeof(*info) + off;
	if (len > req->data.args[2])
		return -E2BIG;
	info->len = (uint32_t)len;

	struct iovec local = { .iov_base = buf, .iov_len = len };
	struct iovec remote = { .iov_base = (void *)req->data.args[1],
				.iov_len = len };

	if (process_vm_writev(req->pid, &local, 1, &remote, 1, 0) !=
	    (ssize_t)len)
		return -EFAULT;
	*sent = 1;
	int last = add_fd(listener, req->id,
			  p->interp_fd >= 0 ? p->interp_fd : p->prog_fd, 1);
	return last < 0 ? -errno : last;
}

int main(int argc, char **argv)
{
	struct pending p = { .interp_fd = -1 };
	const char *loader, *program, *interp = NULL;
	char *interp_buf = NULL;
	int i, sv[2], listener, pidfd, status;
	char **cargv;
	pid_t pid;

	if (argc < 4)
		usage();
	loader = argv[1];
	program = argv[2];
	p.execfn = program;
	p.comm = strrchr(program, '/') ? strrchr(program, '/') + 1 : program;
	for (i = 3; i < argc && strcmp(argv[i], "--") != 0; i++) {
		if (i + 1 >= argc)
			usage();
		if (!strcmp(argv[i], "--prefix") ||
		    !strcmp(argv[i], "--script-prefix")) {
			if (p.nprefix == MAX_PREFIX)
				usage();
			p.prefix[p.nprefix++] = argv[++i];
		} else if (!strcmp(argv[i], "--skip")) {
			p.skip = (unsigned)atoi(argv[++i]);
		} else if (!strcmp(argv[i], "--execfn")) {
			p.execfn = argv[++i];
		} else if (!strcmp(argv[i], "--comm")) {
			p.comm = argv[++i];
		} else if (!strcmp(argv[i], "--interp")) {
			interp = argv[++i];
		} else {
			usage();
		}
	}
	if (i >= argc)
		usage();
	cargv = argv + i + 1;

	p.prog_fd = open(program, O_RDONLY | O_CLOEXEC);
	if (p.prog_fd < 0)
		fail(program);
	if (!interp)
		interp = interp_buf = elf_interp(p.prog_fd);
	if (interp && strcmp(interp, "none") != 0) {
		p.interp_fd = open(interp, O_RDONLY | O_CLOEXEC);
		if (p.interp_fd < 0)
			fail(interp);
	}
	if (interp_buf)
		free(interp_buf);

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		fail("socketpair");
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		fail("fork");
	if (pid == 0) {
		close(sv[0]);
		listener = install_filter();
		if (listener < 0)
			fail("seccomp");
		if (send_fds(sv[1], "", 1, &listener, 1) != 1)
			fail("sendmsg");
		close(listener);
		close(sv[1]);
		execve(loader, cargv, environ);
		fail(loader);
	}
	close(sv[1]);
	int nfd = 1;
	if (recv_fds(sv[0], &(char){ 0 }, 1, &listener, &nfd) != 1 || nfd != 1)
		listener = -1;
	close(sv[0]);
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (listener < 0 || pidfd < 0) {
		waitpid(pid, &status, 0);
		fprintf(stderr, "loader-harness: no listener\n");
		return 125;
	}

	for (;;) {
		struct pollfd pfd[2] = { { .fd = listener, .events = POLLIN },
					 { .fd = pidfd, .events = POLLIN } };

		if (poll(pfd, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			fail("poll");
		}
		if (pfd[1].revents)
			break;
		if (pfd[0].revents & POLLIN) {
			struct seccomp_notif req;
			struct seccomp_notif_resp resp;

			memset(&req, 0, sizeof(req));
			if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, &req))
				continue; /* the task died meanwhile */
			memset(&resp, 0, sizeof(resp));
			resp.id = req.id;
			int sent = 0;
			int64_t r = serve(listener, &p, &req, &sent);

			if (r < 0)
				resp.error = (int32_t)r;
			else
				resp.val = r;
			/* the pending exec is consumed only by a reply that
			 * reached the task (an interrupted call comes back) */
			if (sent && r >= 0)
				p.used = 1;
			else if (!(sent && r == -ENOENT) &&
				 ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &resp) == 0 &&
				 r >= 0)
				p.used = 1;
		} else if (pfd[0].revents) {
			/* POLLHUP: no task left in the filter. */
			break;
		}
	}
	if (waitpid(pid, &status, 0) < 0)
		fail("waitpid");
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}
