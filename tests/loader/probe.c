/* tests/loader/probe.c - print what a program sees at start, for run.sh.
 *
 * Built as PIE, non-PIE, static, static-pie and with odd layouts. Prints
 * argv, AT_EXECFN, the task name, and "ok"/"BAD" for the checks that the
 * loader set up the process like the kernel would.
 */
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

extern char **environ;
extern char _start[];

static char big_bss[3 * 4096 + 123];
static int data_word = 0x12345678;

static const char *ok(int cond)
{
	return cond ? "ok" : "BAD";
}

static int bss_zero(void)
{
	for (size_t i = 0; i < sizeof(big_bss); i++)
		if (big_bss[i])
			return 0;
	big_bss[sizeof(big_bss) - 1] = 1; /* and writable */
	return data_word == 0x12345678;
}

static int phdr_ok(void)
{
	const ElfW(Phdr) *ph = (const ElfW(Phdr) *)getauxval(AT_PHDR);
	unsigned long n = getauxval(AT_PHNUM);
	int loads = 0;

	if (!ph || getauxval(AT_PHENT) != sizeof(*ph))
		return 0;
	for (unsigned long i = 0; i < n; i++)
		loads += ph[i].p_type == PT_LOAD;
	return loads > 0;
}

static int random_ok(void)
{
	const unsigned char *r = (const unsigned char *)getauxval(AT_RANDOM);
	int nz = 0;

	if (!r)
		return 0;
	for (int i = 0; i < 16; i++)
		nz |= r[i];
	return nz != 0;
}

static int vdso_ok(void)
{
	const unsigned char *v =
		(const unsigned char *)getauxval(AT_SYSINFO_EHDR);
	struct timespec ts;

	if (!v || memcmp(v, ELFMAG, SELFMAG) != 0)
		return 0;
	return clock_gettime(CLOCK_MONOTONIC, &ts) == 0 && ts.tv_sec > 0;
}

/* The kernel's arg_start..arg_end (/proc/self/cmdline) hold our argv. */
static int cmdline_ok(int argc, char **argv)
{
	static char buf[65536];
	size_t len = 0, at = 0;
	int fd = open("/proc/self/cmdline", O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return 0;
	while ((n = read(fd, buf + len, sizeof(buf) - len)) > 0)
		len += (size_t)n;
	close(fd);
	for (int i = 0; i < argc; i++) {
		size_t l = strlen(argv[i]) + 1;

		if (at + l > len || memcmp(buf + at, argv[i], l) != 0)
			return 0;
		at += l;
	}
	return at == len;
}

int main(int argc, char **argv)
{
	char name[17] = "";
	char comm[32] = "";
	const char *execfn = (const char *)getauxval(AT_EXECFN);
	int fd, envc = 0;

	printf("argc=%d\n", argc);
	for (int i = 0; i < argc; i++)
		printf("argv[%d]=[%s]\n", i, argv[i]);
	while (environ[envc])
		envc++;
	printf("envc=%d\n", envc);
	printf("execfn=%s\n", execfn ? execfn : "(null)");
	prctl(PR_GET_NAME, name);
	printf("name=%s\n", name);
	fd = open("/proc/self/comm", O_RDONLY);
	if (fd >= 0) {
		ssize_t n = read(fd, comm, sizeof(comm) - 1);

		if (n > 0 && comm[n - 1] == '\n')
			comm[n - 1] = 0;
		close(fd);
	}
	printf("comm=%s\n", comm);
	printf("entry=%s\n", ok(getauxval(AT_ENTRY) == (uintptr_t)_start));
	printf("phdr=%s\n", ok(phdr_ok()));
	printf("random=%s\n", ok(random_ok()));
	printf("vdso=%s\n", ok(vdso_ok()));
	printf("pagesz=%s\n", ok(getauxval(AT_PAGESZ) == 4096));
	printf("bss=%s\n", ok(bss_zero()));
	printf("cmdline=%s\n", ok(cmdline_ok(argc, argv)));
	/* fds 3.. should not leak the loader's program/interp fds */
	printf("fd3=%s\n", ok(fcntl(3, F_GETFD) < 0));
	return 0;
}
