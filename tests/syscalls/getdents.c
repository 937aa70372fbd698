/* getdents64 (and readdir on top of it). */
#include "t.h"

struct linux_dirent64 {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

#define NFILES 300

/* Reads the whole directory with a small buffer; counts names; checks types. */
static int scan(int fd, int *seen, int *dots, int *bad_type, int *calls)
{
	char buf[512]; /* small: forces many calls */
	for (;;) {
		long n = syscall(SYS_getdents64, fd, buf, sizeof(buf));
		if (n < 0)
			return -1;
		if (n == 0)
			return 0;
		(*calls)++;
		for (long off = 0; off < n;) {
			struct linux_dirent64 *d = (void *)(buf + off);
			if (!strcmp(d->d_name, ".") || !strcmp(d->d_name, ".."))
				(*dots)++;
			else if (!strncmp(d->d_name, "file", 4)) {
				int i = atoi(d->d_name + 4);
				if (i >= 0 && i < NFILES)
					seen[i]++;
				if (d->d_type != DT_REG && d->d_type != DT_UNKNOWN)
					(*bad_type)++;
			} else if (!strcmp(d->d_name, "subdir")) {
				if (d->d_type != DT_DIR && d->d_type != DT_UNKNOWN)
					(*bad_type)++;
			} else if (!strcmp(d->d_name, "link")) {
				if (d->d_type != DT_LNK && d->d_type != DT_UNKNOWN)
					(*bad_type)++;
			}
			off += d->d_reclen;
		}
	}
}

int main(int argc, char **argv)
{
	t_setup(argc, argv, "getdents");
	mkdir("dir", 0755);
	char name[64];
	for (int i = 0; i < NFILES; i++) {
		snprintf(name, sizeof(name), "dir/file%d", i);
		t_write_file(name, "", 0644);
	}
	mkdir("dir/subdir", 0755);
	symlink("file0", "dir/link");

	int seen[NFILES] = {0}, dots = 0, bad_type = 0, calls = 0;
	int fd = open("dir", O_RDONLY | O_DIRECTORY);
	int r = scan(fd, seen, &dots, &bad_type, &calls);
	int missing = 0, dup = 0;
	for (int i = 0; i < NFILES; i++) {
		missing += seen[i] == 0;
		dup += seen[i] > 1;
	}
	CHECK(r == 0 && missing == 0 && dup == 0, "all_names_once", "r=%d missing %d dup %d", r, missing, dup);
	CHECK(dots == 2, "dot_and_dotdot", "dots %d", dots);
	CHECK(bad_type == 0, "d_type", "%d wrong", bad_type);
	CHECK(calls > 1, "multiple_calls", "calls %d", calls);

	/* Rewind gives the same listing again. */
	memset(seen, 0, sizeof(seen));
	dots = bad_type = calls = 0;
	lseek(fd, 0, SEEK_SET);
	r = scan(fd, seen, &dots, &bad_type, &calls);
	missing = 0;
	for (int i = 0; i < NFILES; i++)
		missing += seen[i] != 1;
	CHECK(r == 0 && missing == 0 && dots == 2, "rewind", "missing %d", missing);
	close(fd);

	/* Unlinked entries disappear from a fresh listing. */
	unlink("dir/file7");
	memset(seen, 0, sizeof(seen));
	dots = bad_type = calls = 0;
	fd = open("dir", O_RDONLY | O_DIRECTORY);
	scan(fd, seen, &dots, &bad_type, &calls);
	close(fd);
	CHECK(seen[7] == 0 && seen[8] == 1, "after_unlink", "seen7 %d", seen[7]);

	/* Errors. */
	char buf[256];
	fd = open("dir/file1", O_RDONLY);
	EXPECT_ERR(syscall(SYS_getdents64, fd, buf, sizeof(buf)), ENOTDIR, "on_file");
	close(fd);
	EXPECT_ERR(syscall(SYS_getdents64, 9999, buf, sizeof(buf)), EBADF, "ebadf");
	fd = open("dir", O_RDONLY | O_DIRECTORY);
	EXPECT_ERR(syscall(SYS_getdents64, fd, buf, 8), EINVAL, "buffer_too_small");
	EXPECT_ERR(syscall(SYS_getdents64, fd, (void *)1, sizeof(buf)), EFAULT, "efault");
	close(fd);

	/* Empty directory: only . and .. */
	mkdir("empty", 0755);
	DIR *d = opendir("empty");
	int count = 0;
	struct dirent *e;
	while (d && (e = readdir(d)))
		count++;
	if (d)
		closedir(d);
	CHECK(count == 2, "empty_dir_readdir", "count %d", count);

	/* A system directory lists the same entries as natively (count > 0). */
	d = opendir("/etc");
	count = 0;
	bool saw_passwd = false;
	while (d && (e = readdir(d))) {
		count++;
		saw_passwd |= !strcmp(e->d_name, "passwd");
	}
	if (d)
		closedir(d);
	CHECK(count > 2 && saw_passwd, "etc_listing", "count %d", count);
	return t_done();
}
