/* sentry/execfmt.c - "#!" and ELF header parsing for exec (execfmt.h). */
#include "sentry/execfmt.h"

#include <elf.h>
#include <errno.h>
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

int execfmt_elf_interp(execfmt_read_fn rd, void *ctx, char *interp, size_t ilen)
{
	Elf64_Ehdr eh;
	interp[0] = 0;
	if (rd(ctx, &eh, sizeof eh, 0) != sizeof eh)
		return -ENOEXEC;
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_machine != EM_X86_64 || (eh.e_type != ET_EXEC && eh.e_type != ET_DYN) ||
	    eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum == 0 || eh.e_phnum > 128)
		return -ENOEXEC;
	Elf64_Phdr ph[128];
	size_t sz = eh.e_phnum * sizeof(Elf64_Phdr);
	if (rd(ctx, ph, sz, (off_t)eh.e_phoff) != (ssize_t)sz)
		return -ENOEXEC;
	for (int i = 0; i < eh.e_phnum; i++) {
		if (ph[i].p_type != PT_INTERP)
			continue;
		if (ph[i].p_filesz < 2 || ph[i].p_filesz >= ilen)
			return -ENOEXEC;
		if (rd(ctx, interp, ph[i].p_filesz, (off_t)ph[i].p_offset) != (ssize_t)ph[i].p_filesz)
			return -ENOEXEC;
		interp[ph[i].p_filesz - 1] = 0;
		if (strlen(interp) == 0)
			return -ENOEXEC;
		return 0;
	}
	return 0;
}

