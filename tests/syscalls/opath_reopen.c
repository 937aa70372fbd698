/* Reopening an O_PATH fd through /proc/self/fd/N opens its object as by
 * its name, for every file type (Linux: do_open on the inode the link
 * names). Under moat the guest's O_PATH fd is a stand-in memfd; before,
 * only regular files and directories were reopened through the VFS and
 * every other type got the stand-in or EACCES: a FIFO's write end opened
 * with no reader (and carried nothing), /dev/null was EACCES, a socket
 * node EACCES (Linux ENXIO), a symlink's fd was followed (Linux ELOOP). */
#include "t.h"
#include <sys/socket.h>
#include <sys/un.h>

static int via(int p, int flags)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/self/fd/%d", p);
	int r = open(path, flags | O_CLOEXEC);
	return r < 0 ? -errno : r;
}

int main(int argc, char **argv)
{
	struct stat st;
	t_setup(argc, argv, "opath_reopen");
	if (mkfifo("fifo", 0644) < 0 || symlink("fifo", "link") < 0) {
		t_fail("setup", "%s", strerror(errno));
		return t_done();
	}
	int p = open("fifo", O_PATH | O_CLOEXEC);
	int r = via(p, O_WRONLY | O_NONBLOCK);
	CHECK(r == -ENXIO, "fifo_writer_no_reader_enxio", "%s", r < 0 ? strerror(-r) : "opened");
	if (r >= 0)
		close(r);
	int rd = via(p, O_RDONLY | O_NONBLOCK);
	CHECK(rd >= 0 && fstat(rd, &st) == 0 && S_ISFIFO(st.st_mode), "fifo_reader_is_the_fifo", "%s",
	      rd < 0 ? strerror(-rd) : "not a FIFO");
	int w = via(p, O_WRONLY | O_NONBLOCK);
	char c = 0;
	CHECK(w >= 0 && write(w, "x", 1) == 1 && rd >= 0 && read(rd, &c, 1) == 1 && c == 'x',
	      "fifo_carries_bytes", "writer %s, read '%c'", w < 0 ? strerror(-w) : "open", c);
	if (w >= 0)
		close(w);
	if (rd >= 0)
		close(rd);
	/* a blocking reopen waits for its peer, as an open by name */
	pid_t k = fork();
	if (k == 0) {
		int ww = open("fifo", O_WRONLY);
		_exit(ww >= 0 && write(ww, "y", 1) == 1 ? 0 : 1);
	}
	rd = via(p, O_RDONLY);
	c = 0;
	CHECK(rd >= 0 && read(rd, &c, 1) == 1 && c == 'y', "fifo_blocking_reopen", "%s, read '%c'",
	      rd < 0 ? strerror(-rd) : "open", c);
	int status = 0;
	waitpid(k, &status, 0);
	if (rd >= 0)
		close(rd);
	close(p);

	int d = open("/dev/null", O_PATH | O_CLOEXEC);
	r = via(d, O_RDWR);
	CHECK(r >= 0 && fstat(r, &st) == 0 && S_ISCHR(st.st_mode) && write(r, "z", 1) == 1, "devnull_reopen",
	      "%s", r < 0 ? strerror(-r) : "not the device");
	if (r >= 0)
		close(r);
	close(d);

	int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	strcpy(a.sun_path, "sock"); /* relative: the scratch dir is the cwd */
	if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof a) < 0) {
		t_fail("socket_setup", "%s", strerror(errno));
	} else {
		int sp = open("sock", O_PATH | O_CLOEXEC);
		r = via(sp, O_RDWR);
		CHECK(r == -ENXIO, "socket_node_enxio", "%s", r < 0 ? strerror(-r) : "opened");
		if (r >= 0)
			close(r);
		close(sp);
	}
	if (s >= 0)
		close(s);

	int l = open("link", O_PATH | O_NOFOLLOW | O_CLOEXEC);
	r = via(l, O_RDONLY | O_NONBLOCK);
	CHECK(r == -ELOOP, "symlink_fd_eloop", "%s", r < 0 ? strerror(-r) : "opened");
	if (r >= 0)
		close(r);
	close(l);
	return t_done();
}
