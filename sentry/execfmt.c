/* sentry/execfmt.c - "#!" and ELF header parsing for exec (execfmt.h). */
#include "sentry/execfmt.h"

#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int spacetab(char c)
{
	return c == ' ' || c == '\t';
}

static char *next_non_spacetab(char *first, char *last)
{
	for (; first <= last; first++)
		if (!spacetab(*first))
			return first;
	return NULL;
}

static char *next_terminator(char *first, char *last)
{
	for (; first <= last; first++)
		if (spacetab(*first) || !*first)
			return first;
	return NULL;
}

/* Linux's fs/binfmt_script.c load_script on the file's first 256 bytes
 * (zero-filled past its end): the line ends at the first newline (a NUL
 * before it ends the search); with none in the buffer the line is its
 * first 255 bytes, and ENOEXEC when no blank or NUL follows the name (it
 * would be cut); trailing blanks go; the name ends at a blank or NUL, the
 * rest (leading blanks skipped) is one argument, as a C string. */
int execfmt_shebang(const char *buf, size_t n, char *interp, size_t ilen, char *arg, size_t alen)
{
	char b[256] = { 0 };

	if (n < 2 || buf[0] != '#' || buf[1] != '!')
		return -ENOEXEC;
	memcpy(b, buf, n < sizeof b ? n : sizeof b);
	char *buf_end = b + sizeof b - 1, *i_end = NULL;
	for (char *q = b; q < b + sizeof b && *q; q++)
		if (*q == '\n') {
			i_end = q;
			break;
		}
	if (!i_end) {
		i_end = next_non_spacetab(b + 2, buf_end);
		if (!i_end)
			return -ENOEXEC; /* all blanks */
		if (!next_terminator(i_end, buf_end))
			return -ENOEXEC; /* the name would be cut */
		i_end = buf_end;
	}
	while (spacetab(i_end[-1]))
		i_end--;
	char *i_name = next_non_spacetab(b + 2, i_end);
	if (!i_name || i_name == i_end)
		return -ENOEXEC; /* no interpreter name */
	char *i_arg = NULL, *i_sep = next_terminator(i_name, i_end);
	if (i_sep && *i_sep)
		i_arg = next_non_spacetab(i_sep, i_end);
	*i_end = 0;
	if (i_sep)
		*i_sep = 0;
	size_t il = strlen(i_name);
	if (!il)
		return -EACCES; /* a NUL first: Linux opens "" as the cwd, a directory */
	if (il >= ilen)
		return -ENAMETOOLONG;
	memcpy(interp, i_name, il + 1);
	size_t al = i_arg ? strlen(i_arg) : 0;
	if (al >= alen)
		return -ENAMETOOLONG;
	memcpy(arg, i_arg ? i_arg : "", al + 1);
	return 0;
}

/* Linux's elf_read: a short read is EIO, a failed one its errno */
static int read_exact(execfmt_read_fn rd, void *ctx, void *buf, size_t len, off_t off)
{
	ssize_t n = rd(ctx, buf, len, off);
	if (n == (ssize_t)len)
		return 0;
	return n < 0 && n >= -4095 ? (int)n : -EIO;
}

/* Linux's load_elf_phdrs: e_phentsize one Elf64_Phdr, 1 to 65536 bytes of
 * them (6.x; the 4096 of older kernels is gone), all read. Returns the
 * table (buf when it fits, else malloc'd: the caller frees it unless it is
 * buf) or NULL. */
static Elf64_Phdr *load_phdrs(execfmt_read_fn rd, void *ctx, const Elf64_Ehdr *eh, Elf64_Phdr *buf,
			      size_t nbuf)
{
	size_t sz = (size_t)eh->e_phnum * sizeof(Elf64_Phdr);
	if (eh->e_phentsize != sizeof(Elf64_Phdr) || sz == 0 || sz > EXECFMT_PHDRS_MAX)
		return NULL;
	Elf64_Phdr *ph = eh->e_phnum <= nbuf ? buf : malloc(sz);
	if (ph && read_exact(rd, ctx, ph, sz, (off_t)eh->e_phoff) < 0) {
		if (ph != buf)
			free(ph);
		ph = NULL;
	}
	return ph;
}

int execfmt_elf_interp(execfmt_read_fn rd, void *ctx, char *interp, size_t ilen)
{
	Elf64_Ehdr eh;
	interp[0] = 0;
	if (rd(ctx, &eh, sizeof eh, 0) != sizeof eh)
		return -ENOEXEC;
	/* Linux's checks (load_elf_binary): the magic, e_type, e_machine
	 * (x86-64's elf_check_arch: nothing of e_ident's class, byte order,
	 * version or OS ABI, nor e_version: such a program runs natively;
	 * ltp35: a class other than ELFCLASS64 was ENOEXEC here) */
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_machine != EM_X86_64 ||
	    (eh.e_type != ET_EXEC && eh.e_type != ET_DYN))
		return -ENOEXEC;
	Elf64_Phdr small[32];
	Elf64_Phdr *ph = load_phdrs(rd, ctx, &eh, small, sizeof small / sizeof *small);
	if (!ph)
		return -ENOEXEC; /* whatever the read's error: Linux's too */
	int r = 0;
	for (int i = 0; i < eh.e_phnum; i++) {
		if (ph[i].p_type != PT_INTERP)
			continue;
		/* Linux: 2 to PATH_MAX bytes, read exactly, the last a NUL
		 * (before: any last byte was overwritten with one, so a name
		 * Linux refuses was cut short and opened) */
		if (ph[i].p_filesz < 2 || ph[i].p_filesz > ilen) {
			r = -ENOEXEC;
			break;
		}
		if ((r = read_exact(rd, ctx, interp, ph[i].p_filesz, (off_t)ph[i].p_offset)) < 0)
			break;
		if (interp[ph[i].p_filesz - 1]) {
			r = -ENOEXEC;
			break;
		}
		r = 1; /* the first one counts; "" is the open's to refuse */
		break;
	}
	if (r < 0)
		interp[0] = 0;
	if (ph != small)
		free(ph);
	return r;
}

int execfmt_elf_interp_check(execfmt_read_fn rd, void *ctx)
{
	Elf64_Ehdr eh;
	int r = read_exact(rd, ctx, &eh, sizeof eh, 0);
	if (r < 0)
		return r;
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_machine != EM_X86_64)
		return -ELIBBAD;
	Elf64_Phdr small[32];
	Elf64_Phdr *ph = load_phdrs(rd, ctx, &eh, small, sizeof small / sizeof *small);
	if (!ph)
		return -ELIBBAD;
	if (ph != small)
		free(ph);
	return 0;
}
