/* /proc/self/maps, smaps, numa_maps name each mapped file by the path the
 * process knows it by (Linux escapes a newline in it as "\012"; numa_maps
 * also a space, tab and '='), " (deleted)" once unlinked; the program's own
 * lines by /proc/self/exe's path; every named line's path stat()s to the
 * inode the line shows. /proc/self/limits' core line is what getrlimit
 * says. /proc/self/map_files is a directory. (Under moat the kernel's text
 * names files in the gofer's namespace: fs/procfs.c open_maps rewrites it.) */
#include "t.h"
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>

static char maps[1 << 20];

/* a maps header line's range and inode; the name's offset in *n */
static int header(const char *p, unsigned long *s, unsigned long *e, unsigned long *in, int *n)
{
	unsigned long off;
	unsigned maj, min;
	char perms[8];
	*n = 0;
	return sscanf(p, "%lx-%lx %7s %lx %x:%x %lu %n", s, e, perms, &off, &maj, &min, in, n) >= 7 && *n;
}

/* the name on maps' line for address a ("" if none), unescaped as given */
static int line_of(const char *text, void *a, char *name, size_t len, unsigned long *ino)
{
	unsigned long want = (unsigned long)a;
	for (const char *p = text; *p;) {
		const char *eol = strchrnul(p, '\n');
		unsigned long s, e, in;
		int n;
		if (header(p, &s, &e, &in, &n) && want >= s && want < e) {
			const char *q = p + n;
			snprintf(name, len, "%.*s", (int)(eol - q), q);
			if (ino)
				*ino = in;
			return 1;
		}
		p = *eol ? eol + 1 : eol;
	}
	return 0;
}

/* path as seq_file_path prints it with esc */
static void escaped(const char *path, const char *esc, char *out, size_t len)
{
	size_t o = 0;
	for (const char *p = path; *p && o + 5 < len; p++)
		if (strchr(esc, *p))
			o += (size_t)snprintf(out + o, len - o, "\\%03o", (unsigned char)*p);
		else
			out[o++] = *p;
	out[o] = 0;
}

static void *map_file(const char *path)
{
	t_write_file(path, "hello", 0644);
	int fd = open(path, O_RDONLY);
	void *m = fd >= 0 ? mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
	if (fd >= 0)
		close(fd);
	return m;
}

int main(int argc, char **argv)
{
	t_setup(argc, argv, "proc_maps");
	char plain[PATH_MAX + 16], spaced[PATH_MAX + 16], nl[PATH_MAX + 16], name[PATH_MAX], want[PATH_MAX * 4];
	snprintf(plain, sizeof plain, "%s/mapped", t_scratch);
	snprintf(spaced, sizeof spaced, "%s/a b", t_scratch);
	snprintf(nl, sizeof nl, "%s/n\nl", t_scratch);
	void *mp = map_file(plain), *ms = map_file(spaced), *mn = map_file(nl);
	if (mp == MAP_FAILED || ms == MAP_FAILED || mn == MAP_FAILED)
		DIE("mmap");

	t_read_file("/proc/self/maps", maps, sizeof maps);
	unsigned long ino;
	struct stat st;
	CHECK(line_of(maps, mp, name, sizeof name, &ino) && !strcmp(name, plain), "maps_names_file",
	      "%s for %s", name, plain);
	CHECK(!stat(plain, &st) && st.st_ino == ino, "maps_inode_is_stat", "%lu", ino);
	CHECK(line_of(maps, ms, name, sizeof name, NULL) && !strcmp(name, spaced), "maps_space_kept",
	      "%s", name);
	escaped(nl, "\n", want, sizeof want);
	CHECK(line_of(maps, mn, name, sizeof name, NULL) && !strcmp(name, want), "maps_newline_escaped",
	      "%s", name);

	/* the program's own text, by /proc/self/exe's path */
	char exe[PATH_MAX + 16] = "";
	ssize_t el = readlink("/proc/self/exe", exe, sizeof exe - 1);
	exe[el > 0 ? el : 0] = 0;
	CHECK(line_of(maps, (void *)main, name, sizeof name, NULL) && !strcmp(name, exe), "maps_exe_path",
	      "%s for %s", name, exe);

	/* every named file's line: its path is the file (libc, ld.so too) */
	int named = 0, bad = 0, libc = 0;
	char badname[PATH_MAX] = "";
	for (const char *p = maps; *p;) {
		const char *eol = strchrnul(p, '\n');
		unsigned long s, e, in;
		int n;
		if (header(p, &s, &e, &in, &n) && p[n] == '/' && in) {
			snprintf(name, sizeof name, "%.*s", (int)(eol - p - n), p + n);
			size_t l = strlen(name);
			int gone = l > 10 && !strcmp(name + l - 10, " (deleted)");
			if (!gone && strncmp(name, "/memfd:", 7) && !strstr(name, "\\012")) {
				named++;
				if (stat(name, &st) || st.st_ino != in) {
					bad++;
					snprintf(badname, sizeof badname, "%s", name);
				}
				libc += strstr(name, "/libc.so") != NULL;
			}
		}
		p = *eol ? eol + 1 : eol;
	}
	CHECK(named >= 3 && !bad, "maps_every_path_is_the_file", "%d of %d, e.g. %s", bad, named, badname);
	CHECK(libc > 0, "maps_libc_named", "no libc line");

	/* PROCMAP_QUERY (Linux 6.11) on a maps fd names it the same */
	struct {
		uint64_t size, query_flags, query_addr;
		uint64_t vma_start, vma_end, vma_flags, vma_page_size, vma_offset, inode;
		uint32_t dev_major, dev_minor, vma_name_size, build_id_size;
		uint64_t vma_name_addr, build_id_addr;
	} q = { .size = sizeof q, .query_addr = (uint64_t)(uintptr_t)ms };
	char qname[PATH_MAX];
	q.vma_name_size = sizeof qname;
	q.vma_name_addr = (uint64_t)(uintptr_t)qname;
	int mfd = open("/proc/self/maps", O_RDONLY);
	int qr = ioctl(mfd, _IOWR('f', 17, q), &q);
	if (qr < 0 && errno == ENOTTY)
		t_ok("procmap_query_names_file"); /* before Linux 6.11 */
	else
		CHECK(qr == 0 && q.vma_start == (uint64_t)(uintptr_t)ms && !strcmp(qname, spaced) &&
		      q.vma_name_size == strlen(spaced) + 1, "procmap_query_names_file", "%d %s %s", qr,
		      qr ? strerror(errno) : "", qname);
	q.query_addr = 0;
	q.query_flags = 0x20 | 0x10; /* FILE_BACKED_VMA, COVERING_OR_NEXT_VMA */
	q.vma_name_size = 4;
	qr = ioctl(mfd, _IOWR('f', 17, q), &q);
	CHECK(qr < 0 && (errno == ENAMETOOLONG || errno == ENOTTY), "procmap_query_name_too_long", "%d %s", qr,
	      strerror(errno));
	close(mfd);

	/* smaps' header lines are maps' */
	static char smaps[4 << 20];
	t_read_file("/proc/self/smaps", smaps, sizeof smaps);
	CHECK(line_of(smaps, mp, name, sizeof name, NULL) && !strcmp(name, plain), "smaps_names_file",
	      "%s", name);

	/* numa_maps: "file=<name>", a space escaped too */
	static char numa[1 << 20];
	char key[64];
	if (t_read_file("/proc/self/numa_maps", numa, sizeof numa) > 0) {
		int ok = 1;
		const void *addrs[2] = { mp, ms };
		const char *paths[2] = { plain, spaced };
		for (int i = 0; i < 2; i++) {
			snprintf(key, sizeof key, "%lx ", (unsigned long)addrs[i]);
			escaped(paths[i], "\n\t= ", want, sizeof want);
			char *l = strstr(numa, key), *f = l ? strstr(l, " file=") : NULL, *eol = l ? strchrnul(l, '\n') : NULL;
			size_t wl = strlen(want);
			if (!f || f > eol || strncmp(f + 6, want, wl) || (f[6 + wl] != ' ' && f[6 + wl] != '\n'))
				ok = 0;
		}
		CHECK(ok, "numa_maps_names_file", "no file=%s", want);
	} else {
		t_ok("numa_maps_names_file");
	}

	/* unlinked: " (deleted)" */
	unlink(plain);
	t_read_file("/proc/self/maps", maps, sizeof maps);
	snprintf(want, sizeof want, "%s (deleted)", plain);
	CHECK(line_of(maps, mp, name, sizeof name, NULL) && !strcmp(name, want), "maps_deleted",
	      "%s", name);

	/* limits' core line is getrlimit's */
	struct rlimit r;
	getrlimit(RLIMIT_CORE, &r);
	r.rlim_cur = r.rlim_max == RLIM_INFINITY || r.rlim_max > 8192 ? 8192 : r.rlim_max;
	EXPECT_OK(setrlimit(RLIMIT_CORE, &r), "setrlimit_core");
	getrlimit(RLIMIT_CORE, &r);
	char lim[8192], soft[32] = "", hard[32] = "", ws[32], wh[32];
	t_read_file("/proc/self/limits", lim, sizeof lim);
	char *c = strstr(lim, "Max core file size");
	if (c)
		sscanf(c + 18, "%31s %31s", soft, hard);
	snprintf(ws, sizeof ws, "%llu", (unsigned long long)r.rlim_cur);
	if (r.rlim_max == RLIM_INFINITY)
		snprintf(wh, sizeof wh, "unlimited");
	else
		snprintf(wh, sizeof wh, "%llu", (unsigned long long)r.rlim_max);
	CHECK(!strcmp(soft, ws) && !strcmp(hard, wh), "limits_core_is_getrlimit", "%s %s, getrlimit %s %s",
	      soft, hard, ws, wh);

	/* map_files exists (a directory) */
	DIR *d = opendir("/proc/self/map_files");
	CHECK(d != NULL, "map_files_is_a_directory", "%s", strerror(errno));
	if (d)
		closedir(d);
	return t_done();
}
