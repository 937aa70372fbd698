/* dirent_ino: getdents64's d_ino of every entry is the st_ino an lstat of
 * it gives (Python's os.scandir DirEntry.inode(), find's -inum without a
 * stat): directories, files and symlinks this program makes, and the
 * entries of a few system directories. An entry on another device (a mount
 * point: its d_ino is the covered entry's, on Linux too) is not compared.
 * argv[1]: the directory to work in (run.sh: a rw bind; isolation_cow.sh
 * also runs it in the root overlay's / and a cow bind, where overlayfs
 * lists a directory's layer number unless moat gives the stat's). */
#include "t.h"

/* The entries of dir whose d_ino differs from their lstat's st_ino, up to
 * three named in bad; their count, or -1 when dir cannot be listed. */
static int mismatches(const char *dir, char *bad, size_t len)
{
	DIR *d = opendir(dir);
	struct stat dst;
	int n = 0;

	bad[0] = 0;
	if (!d || fstat(dirfd(d), &dst) != 0) {
		if (d)
			closedir(d);
		return -1;
	}
	for (struct dirent *e; (e = readdir(d));) {
		struct stat st;
		if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || st.st_dev != dst.st_dev)
			continue;
		if (e->d_ino != st.st_ino) {
			if (n++ < 3) {
				size_t o = strlen(bad);
				snprintf(bad + o, len - o, " %s(d_ino %llu st_ino %llu)", e->d_name,
					 (unsigned long long)e->d_ino, (unsigned long long)st.st_ino);
			}
		}
	}
	closedir(d);
	return n;
}

static void check_dir(const char *dir, const char *name)
{
	char bad[512];
	int n = mismatches(dir, bad, sizeof bad);
	if (n < 0)
		return; /* not here (natively or in the guest alike) */
	CHECK(n == 0, name, "%d entries of %s:%s", n, dir, bad);
}

int main(int argc, char **argv)
{
	t_setup(argc, argv, "dirent_ino");

	/* what the guest makes: directories (nested), a file, a symlink */
	if (mkdir("d1", 0755) || mkdir("d2", 0755) || mkdir("d2/d3", 0755) || mkdir("d2/d3/d4", 0755))
		DIE("mkdir");
	int fd = open("f", O_CREAT | O_WRONLY, 0644);
	if (fd < 0)
		DIE("open f");
	close(fd);
	if (symlink("d1", "l") || symlink("f", "d2/l"))
		DIE("symlink");
	check_dir(".", "scratch");
	check_dir("d2", "scratch_subdir");
	check_dir("d2/d3", "scratch_subsubdir");
	/* the directory the scratch is in: lists it among its entries */
	check_dir("..", "scratch_parent");
	/* a renamed directory keeps its number */
	if (rename("d1", "d5"))
		DIE("rename");
	check_dir(".", "scratch_after_rename");

	/* system directories (the root overlay under moat) */
	check_dir("/", "root");
	check_dir("/usr", "usr");
	check_dir("/usr/lib", "usr_lib");
	check_dir("/etc", "etc");
	return t_done();
}
