/* sentry/execfmt.c - "#!" and ELF header parsing for exec (execfmt.h). */
#include "sentry/execfmt.h"

#include <elf.h>
#include <errno.h>
#include <string.h>

int execfmt_shebang(const char *buf, size_t n, char *interp, size_t ilen, char *arg, size_t alen)
{
	if (n < 2 || buf[0] != '#' || buf[1] != '!')
		return -ENOEXEC;
	char line[256];
	size_t l = 0;
	for (size_t i = 2; i < n && buf[i] != '\n' && l < sizeof line - 1; i++)
		line[l++] = buf[i];
	line[l] = 0;
	char *p = line;
	while (*p == ' ' || *p == '\t')
		p++;
	if (!*p)
		return -ENOEXEC;
	char *e = p;
	while (*e && *e != ' ' && *e != '\t')
		e++;
	size_t il = e - p;
	if (il >= ilen)
		return -ENAMETOOLONG;
	memcpy(interp, p, il);
	interp[il] = 0;
	while (*e == ' ' || *e == '\t')
		e++;
	/* the rest of the line, trailing blanks removed, is one argument */
	size_t al = strlen(e);
	while (al && (e[al - 1] == ' ' || e[al - 1] == '\t' || e[al - 1] == '\r'))
		al--;
	if (al >= alen)
		return -ENAMETOOLONG;
	memcpy(arg, e, al);
	arg[al] = 0;
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

