/* stat_cache: what a stat by path shows after changes made in every way a
 * guest can make them, each right after a stat of the same name (which moat
 * answers from its dentry cache on exclusive mounts, writable ones included:
 * fs/dcache.h). Natively, the stat shows the change; so must moat's:
 *   - writes, ftruncate and O_TRUNC through fds, in this process, in a child,
 *     through an fd inherited across fork;
 *   - a hard link's nlink and mode seen through the other name;
 *   - a directory's nlink and mtime after entries come and go in it;
 *   - renames, truncate(2), utimensat, chmod, symlink swaps.
 * argv[1]: the directory to work in (run.sh: a rw bind; the integration test
 * isolation_cow.sh also runs it in the root overlay and a cow bind). */
#include "t.h"

#include <sys/mman.h>

static long size_of(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 ? (long)st.st_size : -1;
}

static long nlink_of(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 ? (long)st.st_nlink : -1;
}

int main(int argc, char **argv)
{
	t_setup(argc, argv, "stat_cache");
	struct stat st, st2;
	int fd;

	/* 1. writes through an fd opened by this process */
	fd = open("w", O_CREAT | O_WRONLY, 0644);
	CHECK(size_of("w") == 0, "created_empty", "size %ld", size_of("w"));
	write(fd, "0123456789", 10);
	CHECK(size_of("w") == 10, "write_open_fd", "size %ld", size_of("w"));
	ftruncate(fd, 3);
	CHECK(size_of("w") == 3, "ftruncate_open_fd", "size %ld", size_of("w"));
	close(fd);
	CHECK(size_of("w") == 3, "after_close", "size %ld", size_of("w"));

	/* 2. a file made and closed, stat'ed (cached), then appended to */
	t_write_file("a", "abc", 0644);
	CHECK(size_of("a") == 3, "made_closed", "size %ld", size_of("a"));
	fd = open("a", O_WRONLY | O_APPEND);
	write(fd, "def", 3);
	CHECK(size_of("a") == 6, "append", "size %ld", size_of("a"));
	close(fd);
	fd = open("a", O_WRONLY | O_TRUNC);
	CHECK(size_of("a") == 0, "o_trunc", "size %ld", size_of("a"));
	close(fd);

	/* 3. a child writes through its own fd; through an fd it inherited */
	t_write_file("c", "", 0644);
	CHECK(size_of("c") == 0, "child_before", "size %ld", size_of("c"));
	pid_t pid = fork();
	if (pid == 0) {
		int f = open("c", O_WRONLY);
		_exit(write(f, "12345", 5) == 5 ? 0 : 1);
	}
	waitpid(pid, NULL, 0);
	CHECK(size_of("c") == 5, "child_write", "size %ld", size_of("c"));
	fd = open("c", O_RDWR);
	CHECK(size_of("c") == 5, "inherited_before", "size %ld", size_of("c"));
	pid = fork();
	if (pid == 0)
		_exit(pwrite(fd, "abcdefgh", 8, 5) == 8 ? 0 : 1);
	waitpid(pid, NULL, 0);
	CHECK(size_of("c") == 13, "inherited_write", "size %ld", size_of("c"));
	/* mmap: the size is ftruncate's; the data through the mapping */
	ftruncate(fd, 4096);
	char *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m != MAP_FAILED) {
		memcpy(m, "mapped", 6);
		msync(m, 4096, MS_SYNC);
		munmap(m, 4096);
	}
	char buf[16] = "";
	CHECK(size_of("c") == 4096 && t_read_file("c", buf, 7) == 6 && !memcmp(buf, "mapped", 6),
	      "mmap_write", "size %ld", size_of("c"));
	close(fd);

	/* 4. hard links: nlink and mode through the other name (made by mknod:
	 * no fd of it was ever open for writing) */
	mknod("h1", S_IFREG | 0644, 0);
	CHECK(nlink_of("h1") == 1, "link_before", "nlink %ld", nlink_of("h1"));
	link("h1", "h2");
	CHECK(nlink_of("h1") == 2 && nlink_of("h2") == 2, "link_nlink", "nlink %ld %ld",
	      nlink_of("h1"), nlink_of("h2"));
	chmod("h2", 0600);
	CHECK(stat("h1", &st) == 0 && (st.st_mode & 07777) == 0600, "chmod_other_name", "mode %o",
	      st.st_mode & 07777);
	fd = open("h2", O_WRONLY | O_APPEND);
	write(fd, "yz", 2);
	close(fd);
	CHECK(size_of("h1") == 2, "write_other_name", "size %ld", size_of("h1"));
	unlink("h2");
	CHECK(nlink_of("h1") == 1, "unlink_other_name", "nlink %ld", nlink_of("h1"));

	/* 5. a directory's nlink and mtime as entries come and go in it */
	mkdir("d", 0755);
	struct timespec old[2] = { { 1000000000, 0 }, { 1000000000, 0 } };
	utimensat(AT_FDCWD, "d", old, 0);
	CHECK(stat("d", &st) == 0 && st.st_mtime == 1000000000, "dir_utimens", "mtime %ld",
	      (long)st.st_mtime);
	mkdir("d/sub", 0755);
	CHECK(stat("d", &st2) == 0 && st2.st_nlink == st.st_nlink + 1 && st2.st_mtime > 1000000000,
	      "dir_mkdir", "nlink %ld -> %ld, mtime %ld", (long)st.st_nlink, (long)st2.st_nlink,
	      (long)st2.st_mtime);
	utimensat(AT_FDCWD, "d", old, 0);
	t_write_file("d/f", "", 0644);
	CHECK(stat("d", &st) == 0 && st.st_mtime > 1000000000, "dir_create", "mtime %ld",
	      (long)st.st_mtime);
	utimensat(AT_FDCWD, "d", old, 0);
	stat("d", &st);
	rename("d/f", "d/g");
	CHECK(stat("d", &st) == 0 && st.st_mtime > 1000000000, "dir_rename", "mtime %ld",
	      (long)st.st_mtime);
	utimensat(AT_FDCWD, "d", old, 0);
	stat("d", &st);
	rmdir("d/sub");
	CHECK(stat("d", &st2) == 0 && st2.st_nlink == st.st_nlink - 1 && st2.st_mtime > 1000000000,
	      "dir_rmdir", "nlink %ld -> %ld", (long)st.st_nlink, (long)st2.st_nlink);
	utimensat(AT_FDCWD, "d", old, 0);
	stat("d", &st);
	unlink("d/g");
	CHECK(stat("d", &st) == 0 && st.st_mtime > 1000000000, "dir_unlink", "mtime %ld",
	      (long)st.st_mtime);

	/* 6. names: rename over, truncate(2), a symlink swapped */
	t_write_file("r1", "1", 0644);
	t_write_file("r2", "22", 0644);
	size_of("r1");
	size_of("r2");
	rename("r1", "r2");
	CHECK(size_of("r2") == 1 && size_of("r1") == -1 && errno == ENOENT, "rename_over",
	      "sizes %ld %ld", size_of("r1"), size_of("r2"));
	truncate("r2", 7);
	CHECK(size_of("r2") == 7, "truncate_path", "size %ld", size_of("r2"));
	t_write_file("t1", "1", 0644);
	t_write_file("t2", "22", 0644);
	symlink("t1", "ln");
	CHECK(size_of("ln") == 1, "symlink_first", "size %ld", size_of("ln"));
	symlink("t2", "ln2");
	rename("ln2", "ln");
	CHECK(size_of("ln") == 2, "symlink_swapped", "size %ld", size_of("ln"));
	return t_done();
}
