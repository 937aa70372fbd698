/*
 * execve of an ELF whose header Linux accepts or refuses on fields other
 * than the magic, e_type and e_machine (load_elf_binary, load_elf_phdrs):
 * x86-64's elf_check_arch looks at e_machine only, so e_ident's class, data
 * (byte order), version and OS ABI bytes and e_version are not checked and
 * the program runs; program headers of more than 65536 bytes (1171 of
 * them) are ENOEXEC from the execve itself, before the point of no return.
 *
 * The interpreter's cases: interp_cases.
 *
 * Each case is a copy of this program with one field changed, run with
 * "--elfchild" (exit 42); the result (ran with its status, or the execve's
 * errno) is printed and must be native's.
 */
#include "t.h"
#include <elf.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/wait.h>

/* 42: the child ran; 100 + errno: its execve failed */
static int run_copy(const char *path)
{
	pid_t p = fork();
	if (p == 0) {
		char *av[] = { (char *)path, "--elfchild", NULL };
		execv(path, av);
		_exit(100 + errno);
	}
	int st = 0;
	if (p < 0 || waitpid(p, &st, 0) != p)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1000 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

/* The interpreter (PT_INTERP) of a copy of this program replaced by a name
 * of the same length in the cwd: Linux passes open_exec's error through
 * (ENOENT, EACCES, ENOTDIR, ELOOP), reads the interpreter's 64-byte header
 * (a shorter file: EIO), then checks its magic, e_machine and program
 * headers (ELIBBAD), not its class byte, nor its own PT_INTERP. */
static void interp_cases(const char *img, size_t n)
{
	static char copy[8 << 20], lib[8 << 20];
	const Elf64_Ehdr *eh = (const void *)img;
	const char *ip = NULL;
	for (int i = 0; i < eh->e_phnum; i++) {
		const Elf64_Phdr *ph = (const void *)(img + eh->e_phoff + (size_t)i * sizeof *ph);
		if (ph->p_type == PT_INTERP)
			ip = img + ph->p_offset;
	}
	if (!ip) {
		printf("interp: none (static)\n");
		return;
	}
	size_t il = strlen(ip);
	int lf = open(ip, O_RDONLY);
	ssize_t ln = lf >= 0 ? read(lf, lib, sizeof lib) : -1;
	if (lf >= 0)
		close(lf);
	CHECK(ln > 64 && il > 12 && il < 60, "interp_read", "ln %zd il %zu errno %d", ln, il, errno);
	if (ln <= 64 || il <= 12 || il >= 60)
		return;
	static const struct {
		const char *name;
		int want;
	} cs[] = {
		{ "ok", 42 },          { "class32", 42 },           { "own_interp", 42 },
		{ "short", 100 + EIO }, { "empty", 100 + EIO },      { "text", 100 + ELIBBAD },
		{ "arm", 100 + ELIBBAD }, { "phent", 100 + ELIBBAD }, { "missing", 100 + ENOENT },
		{ "dir", 100 + EACCES }, { "noexec", 100 + EACCES }, { "notdir", 100 + ENOTDIR },
		{ "loop", 100 + ELOOP },
	};
	for (size_t k = 0; k < sizeof cs / sizeof cs[0]; k++) {
		char path[64], file[64], prog[64], name[96];
		/* "./i_NAME" padded with x to the original's length; "notdir"
		 * names a path beneath the regular file ./i_notdir */
		snprintf(path, sizeof path, "./i_%s", cs[k].name);
		if (!strcmp(cs[k].name, "notdir"))
			strcat(path, "/");
		while (strlen(path) < il)
			strcat(path, "x");
		snprintf(file, sizeof file, "./i_%s", cs[k].name);
		if (strcmp(cs[k].name, "notdir"))
			snprintf(file, sizeof file, "%s", path);
		memcpy(copy, lib, (size_t)ln);
		Elf64_Ehdr *e = (void *)copy;
		size_t len = (size_t)ln;
		mode_t mode = 0755;
		if (!strcmp(cs[k].name, "class32"))
			e->e_ident[EI_CLASS] = ELFCLASS32;
		else if (!strcmp(cs[k].name, "arm"))
			e->e_machine = EM_AARCH64;
		else if (!strcmp(cs[k].name, "phent"))
			e->e_phentsize = 10;
		else if (!strcmp(cs[k].name, "short"))
			len = 40;
		else if (!strcmp(cs[k].name, "empty"))
			len = 0;
		else if (!strcmp(cs[k].name, "text")) {
			memset(copy, 'x', 200);
			len = 200;
		} else if (!strcmp(cs[k].name, "noexec"))
			mode = 0644;
		if (!strcmp(cs[k].name, "own_interp")) {
			/* the interpreter is a copy of ld.so given a PT_INTERP of
			 * its own (its PT_DYNAMIC's first bytes relabelled would
			 * break it: a PT_NOTE becomes PT_INTERP of 1 byte, which
			 * a program's check refuses); Linux never looks */
			for (int i = 0; i < e->e_phnum; i++) {
				Elf64_Phdr *ph = (void *)(copy + e->e_phoff + (size_t)i * sizeof *ph);
				if (ph->p_type == PT_NOTE || ph->p_type == PT_GNU_PROPERTY) {
					ph->p_type = PT_INTERP;
					ph->p_filesz = 1;
					break;
				}
			}
		}
		if (!strcmp(cs[k].name, "dir"))
			mkdir(file, 0755);
		else if (!strcmp(cs[k].name, "loop"))
			symlink(file + 2, file);
		else if (strcmp(cs[k].name, "missing")) {
			int w = open(file, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, mode);
			ssize_t wn = w >= 0 ? write(w, copy, len) : -1;
			if (w >= 0)
				close(w);
			CHECK(wn == (ssize_t)len, cs[k].name, "write: errno %d", errno);
		}
		memcpy(copy, img, n);
		char *cip = copy + (ip - img);
		memcpy(cip, path, il);
		snprintf(prog, sizeof prog, "./p_%s", cs[k].name);
		int w = open(prog, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0755);
		ssize_t wn = w >= 0 ? write(w, copy, n) : -1;
		if (w >= 0)
			close(w);
		CHECK(wn == (ssize_t)n, prog, "write: errno %d", errno);
		int r = run_copy(prog);
		printf("interp_%s: %d\n", cs[k].name, r);
		snprintf(name, sizeof name, "interp_%s_result", cs[k].name);
		CHECK(r == cs[k].want, name, "got %d, want %d", r, cs[k].want);
	}
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--elfchild"))
		return 42;
	t_setup(argc, argv, "exec_elf_ident");
	static char img[8 << 20];
	int fd = open(t_self, O_RDONLY);
	ssize_t n = fd >= 0 ? read(fd, img, sizeof img) : -1;
	if (fd >= 0)
		close(fd);
	CHECK(n > (ssize_t)sizeof(Elf64_Ehdr) && n < (ssize_t)sizeof img, "self_read", "n %zd errno %d", n, errno);
	if (n <= (ssize_t)sizeof(Elf64_Ehdr) || n >= (ssize_t)sizeof img)
		return t_done();
	static const struct {
		const char *name;
		size_t off, width;
		unsigned long val;
		int want; /* 42: runs, else 100 + errno */
	} cases[] = {
		{ "unchanged", 0, 0, 0, 42 },
		{ "class32", EI_CLASS, 1, ELFCLASS32, 42 },
		{ "classnone", EI_CLASS, 1, ELFCLASSNONE, 42 },
		{ "data_msb", EI_DATA, 1, ELFDATA2MSB, 42 },
		{ "data_none", EI_DATA, 1, ELFDATANONE, 42 },
		{ "ident_version0", EI_VERSION, 1, 0, 42 },
		{ "osabi99", EI_OSABI, 1, 99, 42 },
		{ "e_version7", offsetof(Elf64_Ehdr, e_version), 4, 7, 42 },
		{ "machine_aarch64", offsetof(Elf64_Ehdr, e_machine), 2, EM_AARCH64, 100 + ENOEXEC },
		{ "type_rel", offsetof(Elf64_Ehdr, e_type), 2, ET_REL, 100 + ENOEXEC },
		{ "phentsize_10", offsetof(Elf64_Ehdr, e_phentsize), 2, 10, 100 + ENOEXEC },
		{ "phnum_0", offsetof(Elf64_Ehdr, e_phnum), 2, 0, 100 + ENOEXEC },
		/* 1171 * 56 > 65536 */
		{ "phnum_1171", offsetof(Elf64_Ehdr, e_phnum), 2, 1171, 100 + ENOEXEC },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		static char copy[8 << 20];
		memcpy(copy, img, (size_t)n);
		unsigned long v = cases[i].val;
		for (size_t b = 0; b < cases[i].width; b++)
			copy[cases[i].off + b] = (char)(v >> (8 * b)); /* little-endian */
		char path[64];
		snprintf(path, sizeof path, "./elf_%s", cases[i].name);
		int w = open(path, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0755);
		ssize_t wn = w >= 0 ? write(w, copy, (size_t)n) : -1;
		if (w >= 0)
			close(w);
		CHECK(wn == n, cases[i].name, "write: errno %d", errno);
		int r = run_copy(path);
		printf("%s: %d\n", cases[i].name, r);
		char name[96];
		snprintf(name, sizeof name, "%s_result", cases[i].name);
		CHECK(r == cases[i].want, name, "got %d, want %d", r, cases[i].want);
	}
	interp_cases(img, (size_t)n);
	return t_done();
}
