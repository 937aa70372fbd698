/*
 * execve of malformed ELF files (red team 73): the errno Linux gives before
 * its point of no return (ENOEXEC, EIO, EINVAL, ELIBBAD, the interpreter's
 * open's own errno), and a process that dies, not one that runs something
 * else, after it. Each file is built here: a static ELF64 whose only code is
 * exit_group(42), then one field broken. Natively an exec either fails or
 * runs that exit; nothing else ever runs.
 *
 * Under moat the sentry parses the header (sentry/execfmt.c) and the loader
 * maps it: a check only the loader made turned a native ENOEXEC into a
 * process that exits 127 (e_phnum 74..128), a short read was ENOEXEC where
 * Linux says EIO, a PT_INTERP without its NUL was cut and opened, and the
 * interpreter's own errno (ENOTDIR, ELOOP) became ENOENT.
 */
#include "t.h"
#include <elf.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#define BASE 0x400000UL
#define CODE_OFF 69632UL /* past 1170 program headers */
#define STR_OFF 65600UL
#define FILE_SZ (CODE_OFF + 16)

static unsigned char img[FILE_SZ];

static Elf64_Ehdr *eh(void)
{
	return (Elf64_Ehdr *)img;
}

static Elf64_Phdr *ph(int i)
{
	return (Elf64_Phdr *)(img + 64) + i;
}

/* A valid static ELF at base (ET_EXEC) or 0 (ET_DYN): one PT_LOAD of the
 * whole file, entry = exit_group(42). */
static void elf_init(int type, unsigned long base)
{
	static const unsigned char code[] = { 0xbf, 42, 0, 0, 0,      /* mov $42, %edi */
					      0xb8, 231, 0, 0, 0,     /* mov $231, %eax */
					      0x0f, 0x05 };           /* syscall */
	memset(img, 0, sizeof img);
	memcpy(img, ELFMAG, SELFMAG);
	eh()->e_ident[EI_CLASS] = ELFCLASS64;
	eh()->e_ident[EI_DATA] = ELFDATA2LSB;
	eh()->e_ident[EI_VERSION] = EV_CURRENT;
	eh()->e_type = type;
	eh()->e_machine = EM_X86_64;
	eh()->e_version = EV_CURRENT;
	eh()->e_entry = base + CODE_OFF;
	eh()->e_phoff = 64;
	eh()->e_ehsize = 64;
	eh()->e_phentsize = sizeof(Elf64_Phdr);
	eh()->e_phnum = 1;
	*ph(0) = (Elf64_Phdr){ .p_type = PT_LOAD, .p_flags = PF_R | PF_X, .p_offset = 0,
			       .p_vaddr = base, .p_paddr = base, .p_filesz = FILE_SZ,
			       .p_memsz = FILE_SZ, .p_align = 4096 };
	memcpy(img + CODE_OFF, code, sizeof code);
}

/* phdr i (i >= 1): PT_INTERP naming s, len bytes of it (s's NUL included
 * when len is strlen + 1), stored at STR_OFF */
static void add_interp(int i, const char *s, size_t len)
{
	memcpy(img + STR_OFF, s, len);
	*ph(i) = (Elf64_Phdr){ .p_type = PT_INTERP, .p_flags = PF_R, .p_offset = STR_OFF,
			       .p_filesz = len, .p_memsz = len, .p_align = 1 };
	if (eh()->e_phnum <= i)
		eh()->e_phnum = i + 1;
}

static void save(const char *name, size_t len)
{
	unlink(name);
	int fd = open(name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	if (fd < 0 || write(fd, img, len) != (ssize_t)len || close(fd) < 0)
		DIE("write %s", name);
}

/* "ran" (the exit of 42), "died" (anything else after the exec), or the
 * exec's errno name */
static rlim_t stack_limit; /* RLIMIT_STACK of the exec, 0: as it is */

static const char *run_at(int dirfd, const char *path, int flags, char *buf, size_t cap)
{
	int e[2];
	if (pipe2(e, O_CLOEXEC))
		DIE("pipe");
	pid_t pid = fork();
	if (pid < 0)
		DIE("fork");
	if (pid == 0) {
		close(e[0]);
		char *av[] = { (char *)path, "--exit42", NULL }, *ev[] = { NULL };
		struct rlimit rl = { stack_limit, stack_limit };
		if (stack_limit && setrlimit(RLIMIT_STACK, &rl))
			_exit(124);
		if (dirfd == AT_FDCWD && !flags)
			execve(path, av, ev);
		else
			syscall(SYS_execveat, dirfd, path, av, ev, flags);
		int err = errno;
		if (write(e[1], &err, sizeof err) < 0)
			_exit(126);
		_exit(125);
	}
	close(e[1]);
	int err = 0, st;
	ssize_t got = read(e[0], &err, sizeof err);
	close(e[0]);
	waitpid(pid, &st, 0);
	if (got == sizeof err)
		snprintf(buf, cap, "%s", strerrorname_np(err) ? strerrorname_np(err) : "?");
	else
		snprintf(buf, cap, "%s", WIFEXITED(st) && WEXITSTATUS(st) == 42 ? "ran" : "died");
	return buf;
}

static const char *run(const char *path, char *buf, size_t cap)
{
	return run_at(AT_FDCWD, path, 0, buf, cap);
}

static void expect_at(const char *name, int dirfd, const char *path, int flags, const char *want)
{
	char buf[64];
	const char *got = run_at(dirfd, path, flags, buf, sizeof buf);
	printf("%s: %s\n", name, got);
	CHECK(!strcmp(got, want), name, "got %s, want %s", got, want);
}

static void expect(const char *name, const char *path, const char *want)
{
	char buf[64];
	const char *got = run(path, buf, sizeof buf);
	printf("%s: %s\n", name, got);
	CHECK(!strcmp(got, want), name, "got %s, want %s", got, want);
}

/* save the image as file (len bytes) and exec ./file: want */
static void save_run(const char *file, size_t len, const char *name, const char *want)
{
	char path[64];
	save(file, len);
	snprintf(path, sizeof path, "./%s", file);
	expect(name, path, want);
}

/* execveat(flip_at, "", AT_EMPTY_PATH) while another thread dup2's
 * flip_a and flip_b there in turn */
static int flip_a, flip_b, flip_at;

static void *flipper(void *arg)
{
	(void)arg;
	for (;;) {
		dup2(flip_a, flip_at);
		dup2(flip_b, flip_at);
	}
	return NULL;
}

/* a child that retries the exec until one runs: its exit status */
static int flip_exec(void)
{
	pid_t pid = fork();
	if (pid < 0)
		DIE("fork");
	if (pid == 0) {
		pthread_t th;
		if (pthread_create(&th, NULL, flipper, NULL))
			_exit(120);
		char *av[] = { "flip", NULL }, *ev[] = { NULL };
		for (int i = 0; i < 2000; i++)
			syscall(SYS_execveat, flip_at, "", av, ev, AT_EMPTY_PATH);
		_exit(121);
	}
	int st;
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--exit42"))
		return 42; /* this program exec'd by its /proc/PID/exe */
	t_setup(argc, argv, "exec_elf");

	elf_init(ET_EXEC, BASE);
	save_run("ok", FILE_SZ, "valid_static", "ran");

	elf_init(ET_DYN, 0);
	save_run("pie0", FILE_SZ, "et_dyn_at_0", "ran");

	elf_init(ET_EXEC, BASE);
	eh()->e_phnum = 0;
	save_run("phnum0", FILE_SZ, "phnum_0", "ENOEXEC");

	/* Linux (6.x) reads at most 65536 bytes of program headers: 1170 of
	 * them (the loader took 73, the sentry 128) */
	elf_init(ET_EXEC, BASE);
	eh()->e_phnum = 73;
	save_run("phnum73", FILE_SZ, "phnum_73_runs", "ran");
	eh()->e_phnum = 74;
	save_run("phnum74", FILE_SZ, "phnum_74_runs", "ran");
	eh()->e_phnum = 1170;
	save_run("phnum1170", FILE_SZ, "phnum_1170_runs", "ran");
	eh()->e_phnum = 1171;
	save_run("phnum1171", FILE_SZ, "phnum_1171_enoexec", "ENOEXEC");
	eh()->e_phnum = 0xffff;
	save_run("phnumffff", FILE_SZ, "phnum_65535_enoexec", "ENOEXEC");
	/* program headers with no PT_PHDR and outside every PT_LOAD: AT_PHDR
	 * points at a copy (all 1170 of them) */
	eh()->e_phnum = 1170;
	ph(0)->p_offset = CODE_OFF & ~4095UL;
	ph(0)->p_vaddr = ph(0)->p_paddr = BASE + ph(0)->p_offset;
	ph(0)->p_filesz = ph(0)->p_memsz = FILE_SZ - ph(0)->p_offset;
	save_run("phnotloaded", FILE_SZ, "phnum_1170_not_loaded_runs", "ran");

	elf_init(ET_EXEC, BASE);
	eh()->e_phentsize = 32;
	save_run("phent32", FILE_SZ, "phentsize_wrong", "ENOEXEC");

	/* program headers not (all) in the file: ENOEXEC (Linux's
	 * load_elf_phdrs fails, whatever the read's error) */
	elf_init(ET_EXEC, BASE);
	eh()->e_phoff = FILE_SZ + 4096;
	save_run("phoffeof", FILE_SZ, "phoff_past_eof", "ENOEXEC");
	eh()->e_phoff = FILE_SZ - 20;
	save_run("phoffcut", FILE_SZ, "phdrs_cut_by_eof", "ENOEXEC");
	eh()->e_phoff = 1UL << 63;
	save_run("phoffneg", FILE_SZ, "phoff_negative", "ENOEXEC");

	elf_init(ET_EXEC, BASE);
	save_run("tiny", 4, "four_bytes", "ENOEXEC");
	save_run("hdronly", 64, "header_only", "ENOEXEC");

	elf_init(ET_REL, BASE);
	save_run("rel", FILE_SZ, "et_rel", "ENOEXEC");
	elf_init(ET_EXEC, BASE);
	eh()->e_machine = EM_386;
	save_run("i386", FILE_SZ, "em_386", "ENOEXEC");

	/* PT_GNU_STACK executable: runs */
	elf_init(ET_EXEC, BASE);
	*ph(1) = (Elf64_Phdr){ .p_type = PT_GNU_STACK, .p_flags = PF_R | PF_W | PF_X };
	eh()->e_phnum = 2;
	save_run("xstack", FILE_SZ, "gnu_stack_x", "ran");

	/* after Linux's point of no return: the process dies, nothing runs */
	elf_init(ET_EXEC, BASE);
	ph(0)->p_memsz = ~0UL - 100;
	save_run("wrap", FILE_SZ, "pt_load_wraps_dies", "died");
	elf_init(ET_EXEC, BASE);
	ph(0)->p_memsz = 4096;
	save_run("fszgt", FILE_SZ, "filesz_gt_memsz_dies", "died");

	/* PT_INTERP */
	elf_init(ET_EXEC, BASE);
	add_interp(1, "/nonexistent-interpX", 20); /* no NUL */
	save_run("inonul", FILE_SZ, "interp_not_nul_enoexec", "ENOEXEC");
	add_interp(1, "/", 1);
	save_run("ione", FILE_SZ, "interp_one_byte_enoexec", "ENOEXEC");
	add_interp(1, "\0", 2);
	save_run("iempty", FILE_SZ, "interp_empty_eacces", "EACCES");
	add_interp(1, "/", 2);
	save_run("idir", FILE_SZ, "interp_directory_eacces", "EACCES");
	t_write_file("f", "", 0755);
	add_interp(1, "f/x", 4);
	save_run("inotdir", FILE_SZ, "interp_enotdir", "ENOTDIR");
	unlink("loop");
	if (symlink("loop", "loop"))
		DIE("symlink");
	add_interp(1, "loop", 5);
	save_run("iloop", FILE_SZ, "interp_eloop", "ELOOP");
	/* a script as the interpreter: not ELF, ELIBBAD; shorter than an ELF
	 * header, the header's short read: EIO */
	t_write_file("script", "#!/bin/sh\nexit 42\n# a script longer than an ELF header, 64 bytes\n", 0755);
	add_interp(1, "script", 7);
	save_run("iscript", FILE_SZ, "interp_script_elibbad", "ELIBBAD");
	t_write_file("sscript", "#!/bin/sh\nexit 42\n", 0755);
	add_interp(1, "sscript", 8);
	save_run("isscript", FILE_SZ, "interp_short_script_eio", "EIO");
	t_write_file("noxi", "", 0644);
	add_interp(1, "noxi", 5);
	save_run("inox", FILE_SZ, "interp_no_x_eacces", "EACCES");
	ph(1)->p_offset = FILE_SZ + 100;
	save_run("ioffeof", FILE_SZ, "interp_string_past_eof_eio", "EIO");

	/* the interpreter itself: a short one is EIO, no program headers ELIBBAD */
	elf_init(ET_EXEC, 0x500000);
	save("ishort", 10);
	eh()->e_phnum = 0;
	save("iphnum0", FILE_SZ);
	elf_init(ET_EXEC, BASE);
	add_interp(1, "ishort", 7);
	save_run("p_ishort", FILE_SZ, "interp_short_eio", "EIO");
	add_interp(1, "iphnum0", 8);
	save_run("p_iphnum0", FILE_SZ, "interp_phnum_0_elibbad", "ELIBBAD");

	/* a static interpreter runs (the program's entry is never reached);
	 * the interpreter's own PT_INTERP is not looked at */
	elf_init(ET_EXEC, 0x500000);
	save("istatic", FILE_SZ);
	add_interp(1, "/nonexistent/interpreter/of/the/interpreter", 44);
	save("iwithinterp", FILE_SZ);
	elf_init(ET_EXEC, BASE);
	memset(img + CODE_OFF, 0xcc, 16); /* int3: the program never runs */
	add_interp(1, "istatic", 8);
	save_run("p_istatic", FILE_SZ, "static_interp_runs", "ran");
	add_interp(1, "iwithinterp", 12);
	save_run("p_iwithinterp", FILE_SZ, "interp_own_pt_interp_ignored", "ran");
	/* the first PT_INTERP counts */
	add_interp(1, "istatic", 8);
	*ph(2) = (Elf64_Phdr){ .p_type = PT_INTERP, .p_offset = STR_OFF + 4, .p_filesz = 4 };
	eh()->e_phnum = 3;
	save_run("p_twointerp", FILE_SZ, "first_pt_interp_counts", "ran");

	/* a small stack limit: the program runs (the loader's 64 KiB of exec
	 * info on its stack was a SIGSEGV below 64 KiB + its frame) */
	stack_limit = 16384;
	expect("rlimit_stack_16k_runs", "./ok", "ran");
	stack_limit = 65536;
	expect("rlimit_stack_64k_runs", "./ok", "ran");
	expect("rlimit_stack_64k_interp_runs", "./p_istatic", "ran");
	stack_limit = 0;

	/* this program by /proc/self/exe, and by its parent's (this
	 * process's) /proc/PID/exe from the child */
	expect("exec_proc_self_exe", "/proc/self/exe", "ran");
	char pe[64];
	snprintf(pe, sizeof pe, "/proc/%d/exe", (int)getpid());
	expect("exec_proc_parent_exe", pe, "ran");

	/* execveat and fexecve on fds of an ELF */
	int fd = open("ok", O_PATH | O_CLOEXEC);
	expect_at("execveat_o_path_fd", fd, "", AT_EMPTY_PATH, "ran");
	close(fd);
	fd = open("ok", O_RDWR | O_CLOEXEC);
	expect_at("execveat_fd_open_for_writing_etxtbsy", fd, "", AT_EMPTY_PATH, "ETXTBSY");
	close(fd);
	fd = open("noxi", O_RDONLY | O_CLOEXEC);
	expect_at("execveat_fd_no_x_eacces", fd, "", AT_EMPTY_PATH, "EACCES");
	close(fd);
	fd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	expect_at("execveat_dir_fd_eacces", fd, "", AT_EMPTY_PATH, "EACCES");
	close(fd);
	unlink("oklink");
	if (symlink("ok", "oklink"))
		DIE("symlink");
	expect_at("execveat_nofollow_symlink_eloop", AT_FDCWD, "oklink", AT_SYMLINK_NOFOLLOW, "ELOOP");
	expect_at("execveat_empty_path_no_flag_enoent", AT_FDCWD, "", 0, "ENOENT");
	elf_init(ET_EXEC, BASE);
	fd = memfd_create("elf", MFD_CLOEXEC);
	if (fd < 0 || write(fd, img, FILE_SZ) != (ssize_t)FILE_SZ)
		DIE("memfd");
	expect_at("execveat_memfd", fd, "", AT_EMPTY_PATH, "ran");
	char pp[64];
	snprintf(pp, sizeof pp, "/proc/self/fd/%d", fd);
	expect("exec_proc_self_fd_memfd", pp, "ran");
	/* the dirfd's number names another file from one moment to the
	 * next: what runs is what passed the checks (Linux resolves the fd
	 * once): the 0755 memfd's program (42), never the 0644 one's (43;
	 * the sentry checked the file its walk fetched and ran the one a
	 * second fetch of the number gave) */
	flip_a = fd;
	img[CODE_OFF + 1] = 43;
	flip_b = memfd_create("elf43", MFD_CLOEXEC);
	if (flip_b < 0 || write(flip_b, img, FILE_SZ) != (ssize_t)FILE_SZ || fchmod(flip_b, 0644))
		DIE("memfd");
	img[CODE_OFF + 1] = 42;
	flip_at = dup(fd);
	int n43 = 0;
	for (int i = 0; i < 40; i++)
		n43 += flip_exec() == 43; /* (121: 2000 EACCES, the flipper's luck) */
	printf("dirfd_swapped_during_exec: %s\n", n43 ? "ran the unchecked file" : "ok");
	CHECK(!n43, "dirfd_swapped_during_exec", "%d of 40 ran the 0644 file", n43);
	close(flip_at);
	close(flip_b);

	/* a memfd still open for writing runs (its creation counts no writer) */
	int wfd = memfd_create("elfw", MFD_CLOEXEC);
	if (wfd < 0 || write(wfd, img, FILE_SZ) != (ssize_t)FILE_SZ)
		DIE("memfd");
	expect_at("execveat_writable_memfd_runs", wfd, "", AT_EMPTY_PATH, "ran");
	close(wfd);
	close(fd);

	return t_done();
}
