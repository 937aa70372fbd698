/* inotify_init1, inotify_add_watch, inotify_rm_watch: events for create,
 * modify, attrib, move, delete in a watched directory and on a watched file,
 * and the error cases.
 * tests/integration/isolation_mounts.sh runs it again in a cow bind, the
 * overlay and /tmp. */
#include "t.h"

#include <pthread.h>
#include <sys/inotify.h>

static char evbuf[65536] __attribute__((aligned(8)));

/* Read what is queued and describe it: "CREATE a,MODIFY a,..." (names only
 * for directory watches). */
static void events(int fd, char *out, size_t len)
{
	size_t o = 0;
	out[0] = 0;
	for (;;) {
		ssize_t n = read(fd, evbuf, sizeof evbuf);
		if (n <= 0)
			break;
		for (char *c = evbuf; c < evbuf + n; ) {
			struct inotify_event *e = (struct inotify_event *)c;
			static const struct { uint32_t m; const char *s; } k[] = {
				{ IN_CREATE, "CREATE" }, { IN_MODIFY, "MODIFY" }, { IN_ATTRIB, "ATTRIB" },
				{ IN_MOVED_FROM, "MOVED_FROM" }, { IN_MOVED_TO, "MOVED_TO" },
				{ IN_DELETE, "DELETE" }, { IN_DELETE_SELF, "DELETE_SELF" },
				{ IN_IGNORED, "IGNORED" }, { IN_CLOSE_WRITE, "CLOSE_WRITE" },
			};
			for (size_t i = 0; i < sizeof k / sizeof k[0]; i++)
				if (e->mask & k[i].m)
					o += (size_t)snprintf(out + o, len - o, "%s%s%s%s", o ? "," : "",
							      k[i].s, e->len ? " " : "", e->len ? e->name : "");
			c += sizeof *e + e->len;
		}
	}
}

int main(int argc, char **argv)
{
	t_setup(argc, argv, "inotify");
	char got[4096];
	int fd, wd, wd2, f;

	/* dnotify (F_NOTIFY) while another task shares the fd table:
	 * natively set; under moat refused (EPERM), as the sentry checks the
	 * directory the number holds and the kernel looks at the number
	 * again, which the sharer could dup2 a refused directory onto; set
	 * once it is gone */
	{
		mkdir("dn", 0755);
		int dfd = open("dn", O_RDONLY | O_DIRECTORY), gate[2];
		pthread_t th;
		if (dfd < 0 || pipe(gate) < 0 || pthread_create(&th, NULL, t_wait_gate, &gate[0]))
			DIE("dnotify setup");
		int r = fcntl(dfd, F_NOTIFY, DN_CREATE), e = errno;
		CHECK(t_confined() ? r == -1 && e == EPERM : r == 0, "dnotify_shared_fd_table",
		      "= %d %s", r, strerror(e));
		/* no event: nothing any directory refuses, native */
		r = fcntl(dfd, F_NOTIFY, DN_MULTISHOT);
		CHECK(r == 0, "dnotify_shared_no_event", "%s", strerror(errno));
		r = fcntl(dfd, F_NOTIFY, 0);
		CHECK(r == 0, "dnotify_shared_remove", "%s", strerror(errno));
		close(gate[1]);
		pthread_join(th, NULL);
		for (int i = 0; i < 200; i++) {
			r = fcntl(dfd, F_NOTIFY, DN_CREATE);
			if (!r)
				break;
			usleep(5000);
		}
		CHECK(r == 0, "dnotify_table_alone", "%s", strerror(errno));
		close(dfd);
		close(gate[0]);
	}
	fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	CHECK(fd >= 0, "init1", "%s", strerror(errno));
	mkdir("d", 0755);

	/* a directory */
	wd = inotify_add_watch(fd, "d", IN_CREATE | IN_MODIFY | IN_ATTRIB | IN_MOVED_FROM |
			       IN_MOVED_TO | IN_DELETE | IN_CLOSE_WRITE);
	CHECK(wd >= 0, "watch_dir", "%s", strerror(errno));
	f = open("d/a", O_CREAT | O_WRONLY, 0644);
	write(f, "x", 1);
	close(f);
	chmod("d/a", 0600);
	rename("d/a", "d/b");
	unlink("d/b");
	mkdir("d/sub", 0755);
	rmdir("d/sub");
	events(fd, got, sizeof got);
	CHECK(!strcmp(got, "CREATE a,MODIFY a,CLOSE_WRITE a,ATTRIB a,MOVED_FROM a,MOVED_TO b,DELETE b,"
		      "CREATE sub,DELETE sub"), "dir_events", "%s", got);
	wd2 = inotify_add_watch(fd, "d/", IN_CREATE);
	CHECK(wd2 == wd, "same_inode_same_wd", "wd %d, %d", wd, wd2);
	EXPECT_OK(inotify_rm_watch(fd, wd), "rm_watch");
	events(fd, got, sizeof got);
	CHECK(!strcmp(got, "IGNORED"), "rm_watch_ignored", "%s", got);
	EXPECT_ERR(inotify_rm_watch(fd, wd), EINVAL, "rm_watch_twice_einval");

	/* a file */
	t_write_file("d/file", "1", 0644);
	wd = inotify_add_watch(fd, "d/file", IN_MODIFY | IN_ATTRIB | IN_DELETE_SELF);
	CHECK(wd >= 0, "watch_file", "%s", strerror(errno));
	f = open("d/file", O_WRONLY | O_APPEND);
	write(f, "2", 1);
	close(f);
	chmod("d/file", 0640);
	unlink("d/file");
	events(fd, got, sizeof got);
	CHECK(!strcmp(got, "MODIFY,ATTRIB,DELETE_SELF,IGNORED"), "file_events", "%s", got);

	/* a symlink: followed unless IN_DONT_FOLLOW */
	t_write_file("d/target", "t", 0644);
	symlink("target", "d/lnk");
	wd = inotify_add_watch(fd, "d/lnk", IN_MODIFY);
	wd2 = inotify_add_watch(fd, "d/target", IN_MODIFY);
	CHECK(wd >= 0 && wd == wd2, "symlink_followed", "wd %d, %d: %s", wd, wd2, strerror(errno));
	wd2 = inotify_add_watch(fd, "d/lnk", IN_MODIFY | IN_DONT_FOLLOW);
	CHECK(wd2 >= 0 && wd2 != wd, "symlink_dont_follow", "wd %d, %d: %s", wd, wd2, strerror(errno));

	/* errors */
	EXPECT_ERR(inotify_add_watch(fd, "missing", IN_MODIFY), ENOENT, "enoent");
	EXPECT_ERR(inotify_add_watch(fd, "d/target/x", IN_MODIFY), ENOTDIR, "enotdir");
	EXPECT_ERR(inotify_add_watch(fd, "d/target", IN_MODIFY | IN_ONLYDIR), ENOTDIR, "onlydir_enotdir");
	EXPECT_ERR(inotify_add_watch(9999, "d", IN_MODIFY), EBADF, "ebadf");
	f = open("d/target", O_RDONLY);
	EXPECT_ERR(inotify_add_watch(f, "d", IN_MODIFY), EINVAL, "not_inotify_einval");
	close(f);
	EXPECT_ERR(inotify_add_watch(fd, "d", 0), EINVAL, "empty_mask_einval");
	if (geteuid() != 0) {
		mkdir("closed", 0);
		EXPECT_ERR(inotify_add_watch(fd, "closed", IN_CREATE), EACCES, "unreadable_eacces");
		chmod("closed", 0755);
	} else {
		t_ok("unreadable_eacces");
	}
	close(fd);
	/* watching a directory queues nothing by itself (the watch's own open
	 * and close of it are not events: LTP inotify02) */
	{
		int ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
		mkdir("quiet", 0755);
		int qw = inotify_add_watch(ifd, "quiet", IN_ALL_EVENTS);
		ssize_t n = read(ifd, evbuf, sizeof evbuf);
		CHECK(qw >= 0 && n < 0 && errno == EAGAIN, "watch_dir_queues_nothing", "wd %d read %zd mask %#x", qw,
		      n, n > 0 ? ((struct inotify_event *)evbuf)->mask : 0);
		close(ifd);
		rmdir("quiet");
	}
	/* a private (0700) directory and a 0600 file of one's own are watched
	 * and report events (LTP inotify04: under moat run as root, guest root's
	 * 0700 directory is host root's, which the sentry's uid may not read) */
	{
		int ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
		mkdir("priv", 0700);
		t_write_file("priv/f", "x", 0600);
		int pw = inotify_add_watch(ifd, "priv", IN_CREATE | IN_DELETE);
		int fw = inotify_add_watch(ifd, "priv/f", IN_ATTRIB);
		CHECK(pw >= 0 && fw >= 0, "private_dir_watched", "wd %d %d: %s", pw, fw, strerror(errno));
		t_write_file("priv/g", "y", 0600);
		chmod("priv/f", 0640);
		events(ifd, got, sizeof got);
		CHECK(!strcmp(got, "CREATE g,ATTRIB"), "private_dir_events", "%s", got);
		if (geteuid() == 0) {
			/* another user may not: EACCES natively and under moat */
			pid_t pid = fork();
			if (pid == 0) {
				if (setgid(65534) || setuid(65534))
					_exit(3);
				_exit(inotify_add_watch(ifd, "priv", IN_CREATE) < 0 && errno == EACCES ? 0 : 1);
			}
			int st = -1;
			waitpid(pid, &st, 0);
			CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "private_dir_other_user_eacces", "status %#x", st);
		} else {
			t_ok("private_dir_other_user_eacces");
		}
		close(ifd);
		unlink("priv/f");
		unlink("priv/g");
		rmdir("priv");
	}
	return t_done();
}
