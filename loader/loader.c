// SPDX-License-Identifier: MIT
/* loader/loader.c - moat's userland ELF loader (see loader_abi.h).
 *
 * A freestanding static-pie executable: no libc, no TLS, no globals that
 * need relocating (a tiny RELATIVE relocator runs first anyway). The only
 * syscalls used are mmap, munmap, mprotect, pread64, close, prctl, write,
 * exit_group and MOAT_SYS_LOADER.
 *
 * Flow: read our own initial stack (argc, argv, envp, auxv), ask the sentry
 * for the pending exec (MOAT_SYS_LOADER), map the program and its
 * interpreter like fs/binfmt_elf.c does (file-backed MAP_PRIVATE|MAP_FIXED
 * mappings, bss zeroed, permissions applied), build the program's initial
 * stack in a scratch mapping, then copy it to the top of our stack, unmap
 * the scratch, zero the registers and jump (moat_jump, assembly below).
 *
 * Compiled with -mgeneral-regs-only so the FPU/SSE state the kernel set up
 * at exec reaches the program untouched.
 */
#include <stddef.h>
#include <stdint.h>
#include <elf.h>
#include <asm/unistd.h>
#include <linux/errno.h>
#include <linux/mman.h>
#include <linux/prctl.h>

#include "loader/loader_abi.h"
#include "loader/freestanding.h"

#define PAGE 4096UL
#define PAGE_DOWN(x) ((uintptr_t)(x) & ~(PAGE - 1))
#define PAGE_UP(x) (((uintptr_t)(x) + PAGE - 1) & ~(PAGE - 1))
#define PHDRS_MAX 65536 /* the kernel's own limit on the program headers
			  * (6.x: 1170 of them; the sentry's check is the same) */
#define PHDRS_STACK 1024 /* read on the stack up to this, else in a mapping */
#define MAX_ERRNO 4095

/* ---- raw syscalls ---- */


#define sys3(nr, a, b, c) sys6(nr, (long)(a), (long)(b), (long)(c), 0, 0, 0)

static int is_err(long ret)
{
	return (unsigned long)ret > -(unsigned long)(MAX_ERRNO + 1);
}

static long sys_mmap(uintptr_t addr, size_t len, int prot, int flags, int fd,
		     uint64_t off)
{
	return sys6(__NR_mmap, (long)addr, (long)len, prot, flags, fd,
		    (long)off);
}

/* ---- freestanding helpers (the compiler may emit calls to these) ---- */

void *memcpy(void *dst, const void *src, size_t n);
void *memset(void *dst, int c, size_t n);
void *memmove(void *dst, const void *src, size_t n);

void *memcpy(void *dst, const void *src, size_t n)
{
	void *d = dst;

	__asm__ volatile("rep movsb"
			 : "+D"(d), "+S"(src), "+c"(n)
			 :
			 : "memory");
	return dst;
}

void *memmove(void *dst, const void *src, size_t n)
{
	unsigned char *d = dst;
	const unsigned char *s = src;

	if (d <= s || d >= s + n)
		return memcpy(dst, src, n);
	while (n--)
		d[n] = s[n];
	return dst;
}

void *memset(void *dst, int c, size_t n)
{
	void *d = dst;

	__asm__ volatile("rep stosb" : "+D"(d), "+c"(n) : "a"(c) : "memory");
	return dst;
}

static size_t slen(const char *s)
{
	size_t n = 0;

	while (s[n])
		n++;
	return n;
}

/* ---- errors ---- */

static void put(const char *s)
{
	sys3(__NR_write, 2, s, slen(s));
}

__attribute__((noreturn)) static void die(const char *what, long err)
{
	char num[24];
	int i = sizeof(num);

	put("moat-loader: ");
	put(what);
	if (err < 0) {
		unsigned long v = (unsigned long)-err;

		num[--i] = 0;
		num[--i] = ')';
		do
			num[--i] = (char)('0' + v % 10);
		while ((v /= 10) && i > 8);
		put(" (errno ");
		put(num + i);
	}
	put("\n");
	for (;;)
		sys3(__NR_exit_group, 127, 0, 0);
}

/* len bytes of fresh private read-write memory, or die(what) */
static void *anon_rw(size_t len, const char *what)
{
	long r = sys_mmap(0, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (is_err(r))
		die(what, r);
	return (void *)r;
}

/* ---- self relocation (static-pie without a libc start file) ---- */

extern const Elf64_Ehdr __ehdr_start __attribute__((visibility("hidden")));
extern Elf64_Dyn _DYNAMIC[] __attribute__((visibility("hidden")));

static void self_relocate(void)
{
	uintptr_t base = (uintptr_t)&__ehdr_start;
	const Elf64_Rela *rela = NULL;
	size_t relasz = 0;

	for (const Elf64_Dyn *d = _DYNAMIC; d->d_tag != DT_NULL; d++) {
		if (d->d_tag == DT_RELA)
			rela = (const Elf64_Rela *)(base + d->d_un.d_ptr);
		else if (d->d_tag == DT_RELASZ)
			relasz = d->d_un.d_val;
	}
	for (size_t i = 0; rela && i < relasz / sizeof(*rela); i++) {
		/* Only RELATIVE can appear in a static-pie with no symbols. */
		if (ELF64_R_TYPE(rela[i].r_info) == R_X86_64_RELATIVE)
			*(uint64_t *)(base + rela[i].r_offset) =
				base + (uint64_t)rela[i].r_addend;
	}
}

/* ---- ELF mapping ---- */

struct image {
	uintptr_t bias;  /* load address minus linked address */
	uintptr_t entry; /* absolute entry point */
	uintptr_t phdr;  /* absolute address of the program headers */
	uint64_t phnum;
	int has_interp;
};

static void read_full(int fd, void *buf, size_t len, uint64_t off,
		      const char *what)
{
	unsigned char *p = buf;

	while (len) {
		long n = sys6(__NR_pread64, fd, (long)p, (long)len, (long)off, 0,
			      0);

		if (n <= 0)
			die(what, n < 0 ? n : -ENOEXEC);
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
}

static int prot_of(uint32_t flags)
{
	return ((flags & PF_R) ? PROT_READ : 0) |
	       ((flags & PF_W) ? PROT_WRITE : 0) |
	       ((flags & PF_X) ? PROT_EXEC : 0);
}

static void protect(uintptr_t addr, size_t len, int prot)
{
	long r = sys3(__NR_mprotect, addr, len, prot);

	if (is_err(r))
		die("cannot protect segment", r);
}

/* The last page mapped so far, to handle segments sharing a page. */
struct seg_state {
	uintptr_t last_page; /* 0: none yet */
	int last_prot;
};

/* Map one PT_LOAD at bias, like binfmt_elf's elf_map + padzero + bss, but
 * also correct when a segment starts in the page where the previous one
 * ended (that page gets both contents and the union of the permissions;
 * the kernel would instead map the second segment over the first) and when
 * the file offset is not congruent with the address (copied, not mapped). */
static void map_segment(int fd, const Elf64_Phdr *ph, uintptr_t bias,
			struct seg_state *st)
{
	int prot = prot_of(ph->p_flags);
	uintptr_t start = bias + ph->p_vaddr;
	uintptr_t file_end = start + ph->p_filesz;
	uintptr_t mem_end = start + ph->p_memsz;
	uint64_t off = ph->p_offset;
	uintptr_t page, bss;
	long r;

	if (!ph->p_memsz)
		return;
	if (st->last_page && PAGE_DOWN(start) <= st->last_page) {
		uintptr_t edge = PAGE_UP(start);
		uintptr_t fe = file_end < edge ? file_end : edge;
		int uprot = st->last_prot | prot;

		if (PAGE_DOWN(start) != st->last_page || edge == start)
			die("overlapping segments", -ENOEXEC);
		protect(st->last_page, PAGE, uprot | PROT_READ | PROT_WRITE);
		if (fe > start)
			read_full(fd, (void *)start, fe - start, off,
				  "cannot read segment");
		if (mem_end > fe)
			memset((void *)fe, 0, edge - fe);
		protect(st->last_page, PAGE, uprot);
		st->last_prot = uprot;
		if (mem_end <= edge)
			return;
		off += edge - start;
		start = edge;
		if (file_end < start)
			file_end = start;
	}
	st->last_page = PAGE_DOWN(mem_end - 1);
	st->last_prot = prot;
	page = PAGE_DOWN(start);
	bss = PAGE_UP(file_end); /* first page without file bytes */

	if (file_end > start) {
		/* bss starting inside a page: zero the rest of that page by
		 * hand, like the kernel's padzero (ld.so's minimal malloc
		 * relies on the tail of its last page being zero) */
		int partial = mem_end > file_end && (file_end & (PAGE - 1));
		int wprot = prot | (partial ? PROT_READ | PROT_WRITE : 0);
		size_t head = start - page;

		r = -EINVAL;
		if ((off & (PAGE - 1)) == head)
			r = sys_mmap(page, file_end - page, wprot,
				     MAP_PRIVATE | MAP_FIXED, fd, off - head);
		if (is_err(r)) {
			/* Not mappable (offset not congruent, fd on a
			 * filesystem without mmap, noexec host mount):
			 * copy instead. */
			r = sys_mmap(page, bss - page, PROT_READ | PROT_WRITE,
				     MAP_PRIVATE | MAP_FIXED | MAP_ANONYMOUS, -1,
				     0);
			if (is_err(r))
				die("cannot map segment", r);
			read_full(fd, (void *)start, file_end - start, off,
				  "cannot read segment");
			wprot = -1; /* force the mprotect below */
		}
		if (partial)
			memset((void *)file_end, 0, bss - file_end);
		if (wprot != prot)
			protect(page, bss - page, prot);
	} else {
		bss = page;
	}
	if (PAGE_UP(mem_end) > bss) {
		r = sys_mmap(bss, PAGE_UP(mem_end) - bss, prot,
			     MAP_PRIVATE | MAP_FIXED | MAP_ANONYMOUS, -1, 0);
		if (is_err(r))
			die("cannot map bss", r);
	}
}

static void load_elf(int fd, struct image *img, const char *what)
{
	Elf64_Ehdr eh;
	Elf64_Phdr phs[PHDRS_STACK / sizeof(Elf64_Phdr)], *ph = phs;
	uintptr_t lo = UINTPTR_MAX, hi = 0, align = PAGE, span, base;
	struct seg_state st = { 0, 0 };
	size_t n, phsz;
	long r;

	read_full(fd, &eh, sizeof(eh), 0, what);
	if (eh.e_ident[EI_MAG0] != ELFMAG0 || eh.e_ident[EI_MAG1] != ELFMAG1 ||
	    eh.e_ident[EI_MAG2] != ELFMAG2 || eh.e_ident[EI_MAG3] != ELFMAG3 ||
	    /* as Linux: e_ident's class and byte order are not looked at
	     * (x86-64's elf_check_arch is e_machine's), nor are they in the
	     * sentry's checks before the exec (sentry/execfmt.c; ltp35: a
	     * big-endian or ELFCLASS32 one died here after the exec) */
	    eh.e_machine != EM_X86_64 ||
	    (eh.e_type != ET_EXEC && eh.e_type != ET_DYN) ||
	    eh.e_phentsize != sizeof(Elf64_Phdr))
		die(what, -ENOEXEC);
	n = eh.e_phnum;
	phsz = n * sizeof(Elf64_Phdr);
	if (!n || phsz > PHDRS_MAX)
		die(what, -ENOEXEC);
	if (phsz > sizeof(phs)) {
		/* more than 73 (before: a death here, where Linux runs the
		 * program; 64 KiB more on the stack is not ours to take) */
		ph = anon_rw(PAGE_UP(phsz), "cannot map program headers");
	}
	read_full(fd, ph, phsz, eh.e_phoff, what);

	img->has_interp = 0;
	img->phdr = 0;
	for (size_t i = 0; i < n; i++) {
		if (ph[i].p_type == PT_INTERP)
			img->has_interp = 1;
		if (ph[i].p_type != PT_LOAD)
			continue;
		if (ph[i].p_filesz > ph[i].p_memsz ||
		    ph[i].p_vaddr + ph[i].p_memsz < ph[i].p_vaddr ||
		    ph[i].p_vaddr + ph[i].p_memsz > (1UL << 47))
			die(what, -ENOEXEC);
		if (PAGE_DOWN(ph[i].p_vaddr) < lo)
			lo = PAGE_DOWN(ph[i].p_vaddr);
		if (PAGE_UP(ph[i].p_vaddr + ph[i].p_memsz) > hi)
			hi = PAGE_UP(ph[i].p_vaddr + ph[i].p_memsz);
		/* honour PT_LOAD alignment for ET_DYN, like the kernel */
		if (eh.e_type == ET_DYN && ph[i].p_align > align &&
		    !(ph[i].p_align & (ph[i].p_align - 1)) &&
		    ph[i].p_align <= (1UL << 30))
			align = ph[i].p_align;
	}
	if (hi <= lo)
		die(what, -ENOEXEC);
	span = hi - lo;

	/* Reserve the whole span PROT_NONE, then map segments over it. */
	if (eh.e_type == ET_DYN) {
		r = sys_mmap(0, span + align - PAGE, PROT_NONE,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (is_err(r))
			die("cannot reserve address space", r);
		base = ((uintptr_t)r + align - 1) & ~(align - 1);
		if (base > (uintptr_t)r)
			sys3(__NR_munmap, r, base - (uintptr_t)r, 0);
		if ((uintptr_t)r + span + align - PAGE > base + span)
			sys3(__NR_munmap, base + span,
			     (uintptr_t)r + span + align - PAGE - (base + span),
			     0);
		img->bias = base - lo;
	} else {
		r = sys_mmap(lo, span, PROT_NONE,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE |
				     MAP_FIXED_NOREPLACE,
			     -1, 0);
		if (is_err(r) || (uintptr_t)r != lo)
			die("ET_EXEC address range unavailable",
			    is_err(r) ? r : -EEXIST);
		img->bias = 0;
	}

	for (size_t i = 0; i < n; i++) {
		if (ph[i].p_type == PT_LOAD)
			map_segment(fd, &ph[i], img->bias, &st);
		else if (ph[i].p_type == PT_PHDR)
			img->phdr = img->bias + ph[i].p_vaddr;
	}
	/* No PT_PHDR: find the headers in a loaded segment's file image. */
	for (size_t i = 0; !img->phdr && i < n; i++) {
		if (ph[i].p_type == PT_LOAD && ph[i].p_offset <= eh.e_phoff &&
		    eh.e_phoff + phsz <= ph[i].p_offset + ph[i].p_filesz)
			img->phdr = img->bias + ph[i].p_vaddr +
				    (eh.e_phoff - ph[i].p_offset);
	}
	if (!img->phdr) {
		/* Not loaded at all: give the program a private copy. */
		void *copy = anon_rw(PAGE_UP(phsz), "cannot map program headers");
		memcpy(copy, ph, phsz);
		sys3(__NR_mprotect, copy, PAGE_UP(phsz), PROT_READ);
		img->phdr = (uintptr_t)copy;
	}
	if (ph != phs)
		sys3(__NR_munmap, ph, PAGE_UP(phsz), 0);
	img->phnum = n;
	img->entry = img->bias + eh.e_entry;
}

/* ---- the new initial stack ---- */

struct stack_in {
	long argc;
	char **argv;
	char **envp;
	Elf64_auxv_t *auxv;
};

__attribute__((noreturn)) void moat_jump(uintptr_t dst, const void *src,
					 size_t len, uintptr_t entry,
					 size_t maplen);

/* Copy a string to the string area and return its final address. */
static uintptr_t push_str(char *scratch, size_t *off, uintptr_t final_base,
			  const char *s)
{
	size_t n = slen(s) + 1;
	uintptr_t at = final_base + *off;

	memcpy(scratch + *off, s, n);
	*off += n;
	return at;
}

static size_t auxv_count(const Elf64_auxv_t *a)
{
	size_t n = 0;

	while (a[n].a_type != AT_NULL)
		n++;
	return n;
}

static void str_top(uintptr_t *top, const char *s)
{
	uintptr_t end = (uintptr_t)s + slen(s) + 1;

	if (end > *top)
		*top = end;
}

/* The auxv entries the loader replaces (values: see start_program). */
static const uint64_t mine[6] = { AT_PHDR, AT_PHENT, AT_PHNUM,
				  AT_ENTRY, AT_BASE, AT_EXECFN };

__attribute__((noreturn)) static void
start_program(const struct stack_in *in, const struct moat_exec_info *info,
	      const struct image *prog, const struct image *interp)
{
	const char *strs = info->strings;
	const char *pfx = strs + info->prefix_off;
	const char *execfn = strs + info->execfn_off;
	const char *platform = NULL, *base_platform = NULL;
	const unsigned char *random = NULL;
	size_t nargs = info->prefix_count + (size_t)(in->argc - info->skip);
	size_t nenv = 0, naux = auxv_count(in->auxv), strsz = 0, ptrsz, total;
	size_t argsz = 0, envsz = 0, pad = 0;
	uintptr_t top = 0, strs_at, dst;
	uintptr_t random_at, platform_at = 0, base_platform_at = 0, execfn_at;
	char *scratch;
	uint64_t *w, vals[6];
	unsigned seen = 0;
	size_t off, k;
	long r;

	while (in->envp[nenv])
		nenv++;

	/* Layout, top down, as the kernel's: the argv and envp strings end
	 * exactly where ours end, so for a plain exec (no prefix, no skip)
	 * they land at the very addresses the kernel recorded as
	 * arg_start..env_end (host /proc/pid/cmdline and environ stay
	 * right); below them execfn, the platform strings and the AT_RANDOM
	 * bytes; then the vectors. Our execfn ("/l") above is left alone. */
	for (long i = 0; i < in->argc; i++)
		str_top(&top, in->argv[i]);
	for (size_t i = 0; i < nenv; i++)
		str_top(&top, in->envp[i]);
	for (size_t i = 0; i < naux; i++) {
		uintptr_t v = in->auxv[i].a_un.a_val;

		switch (in->auxv[i].a_type) {
		case AT_EXECFN:
			if (!top)
				top = v;
			break;
		case AT_PLATFORM:
			platform = (const char *)v;
			break;
		case AT_BASE_PLATFORM:
			base_platform = (const char *)v;
			break;
		case AT_RANDOM:
			random = (const unsigned char *)v;
			break;
		default:
			break;
		}
	}
	if (!top)
		die("empty initial stack", -EINVAL);

	for (uint32_t i = 0, o = 0; i < info->prefix_count; i++) {
		size_t l = slen(pfx + o) + 1;

		argsz += l;
		o += (uint32_t)l;
	}
	for (long i = info->skip; i < in->argc; i++)
		argsz += slen(in->argv[i]) + 1;
	for (size_t i = 0; i < nenv; i++)
		envsz += slen(in->envp[i]) + 1;
	/* The kernel's argv area (arg_start..arg_end, what anyone reads in
	 * /proc/<pid>/cmdline) is the argv of its exec of us. A script's argv
	 * (interpreter, script, args) is rebuilt over it; when it is shorter
	 * (a long argv[0]) it starts where the old one did and the rest of
	 * the area is zeros, so the area never holds the strings and vectors
	 * below it (red team 38: AT_RANDOM's bytes and the auxv's addresses
	 * were read there). Longer, it ends where the old one did (the area
	 * holds its tail), as a plain exec's does exactly. */
	if (in->argc > 0) {
		uintptr_t ka = (uintptr_t)in->argv[0];
		uintptr_t ke = (uintptr_t)in->argv[in->argc - 1] +
			       slen(in->argv[in->argc - 1]) + 1;

		if (ke > ka && argsz <= ke - ka && ke + envsz == top)
			pad = (ke - ka) - argsz;
	}
	strsz = argsz + pad + envsz + slen(execfn) + 1 + 16;
	if (platform)
		strsz += slen(platform) + 1;
	if (base_platform)
		strsz += slen(base_platform) + 1;
	/* argc, argv + NULL, envp + NULL, auxv (+6 possibly added) + AT_NULL */
	ptrsz = 8 * (1 + nargs + 1 + nenv + 1) + 16 * (naux + 6 + 1);
	strs_at = top - strsz;
	dst = (strs_at - ptrsz) & ~15UL;
	total = top - dst;

	scratch = anon_rw(PAGE_UP(total), "cannot allocate the stack image");

	/* Strings upwards from strs_at (offsets relative to dst). */
	off = strs_at - dst;
	random_at = dst + off;

	if (random)
		memcpy(scratch + off, random, 16);
	off += 16;
	if (platform)
		platform_at = push_str(scratch, &off, dst, platform);
	if (base_platform)
		base_platform_at = push_str(scratch, &off, dst, base_platform);
	execfn_at = push_str(scratch, &off, dst, execfn);

	w = (uint64_t *)scratch;
	k = 0;
	w[k++] = nargs;
	for (uint32_t i = 0, o = 0; i < info->prefix_count; i++) {
		w[k++] = push_str(scratch, &off, dst, pfx + o);
		o += (uint32_t)slen(pfx + o) + 1;
	}
	for (long i = info->skip; i < in->argc; i++)
		w[k++] = push_str(scratch, &off, dst, in->argv[i]);
	w[k++] = 0;
	memset(scratch + off, 0, pad);
	off += pad;
	for (size_t i = 0; i < nenv; i++)
		w[k++] = push_str(scratch, &off, dst, in->envp[i]);
	w[k++] = 0;

	/* auxv: ours, with the image-dependent entries replaced. */
	vals[0] = prog->phdr;
	vals[1] = sizeof(Elf64_Phdr);
	vals[2] = prog->phnum;
	vals[3] = prog->entry;
	vals[4] = interp ? interp->bias : 0;
	vals[5] = execfn_at;
	for (size_t i = 0; i < naux; i++) {
		uint64_t t = in->auxv[i].a_type, v = in->auxv[i].a_un.a_val;

		for (unsigned j = 0; j < 6; j++) {
			if (t == mine[j]) {
				v = vals[j];
				seen |= 1u << j;
			}
		}
		if (t == AT_UID)
			v = info->uid;
		else if (t == AT_EUID)
			v = info->euid;
		else if (t == AT_GID)
			v = info->gid;
		else if (t == AT_EGID)
			v = info->egid;
		else if (t == AT_SECURE)
			v = info->secure;
		else if (t == AT_RANDOM)
			v = random_at;
		else if (t == AT_PLATFORM)
			v = platform_at;
		else if (t == AT_BASE_PLATFORM)
			v = base_platform_at;
		w[k++] = t;
		w[k++] = v;
	}
	for (unsigned j = 0; j < 6; j++) {
		if (!(seen & (1u << j))) {
			w[k++] = mine[j];
			w[k++] = vals[j];
		}
	}
	w[k++] = AT_NULL;
	w[k++] = 0;

	sys6(__NR_prctl, PR_SET_NAME, (long)(strs + info->comm_off), 0, 0, 0,
	     0);
	int prog_fd = info->prog_fd, interp_fd = info->interp_fd;
	int confirm = info->confirm != 0;

	sys3(__NR_close, info->prog_fd, 0, 0);
	if (info->interp_fd >= 0)
		sys3(__NR_close, info->interp_fd, 0, 0);
	/* the info's mapping (loader_main): nothing of it is read after this */
	sys3(__NR_munmap, (uintptr_t)info, MOAT_EXEC_INFO_MAX, 0);
	if (confirm) {
		/* a file the task may not read: the guest's own seccomp filter
		 * may have answered those closes 0 without closing; the sentry
		 * checks, and only its positive answer lets the program run */
		do
			r = sys3(MOAT_SYS_LOADER, MOAT_LOADER_CLOSED, prog_fd,
				 interp_fd);
		while (r == -EINTR);
		if (r != MOAT_LOADER_CLOSED_OK)
			die("cannot close the program", is_err(r) ? r : -EBADF);
	}

	moat_jump(dst, scratch, total, interp ? interp->entry : prog->entry,
		  PAGE_UP(total));
}

/* moat_jump(dst, src, len, entry, maplen): copy the stack image over our
 * own stack, unmap the image, and enter the program with every register
 * zero except rsp (rdx = 0: no atexit function) and rflags clean. Nothing
 * here touches memory above dst through rsp. */
__asm__(".text\n"
	".type moat_jump,@function\n"
	"moat_jump:\n"
	"	mov %rdi, %r12\n"
	"	mov %rsi, %r13\n"
	"	mov %rcx, %r14\n"
	"	mov %r8, %r15\n"
	"	mov %rdx, %rcx\n"
	"	cld\n"
	"	rep movsb\n"
	"	mov $11, %eax\n" /* munmap(src, maplen) */
	"	mov %r13, %rdi\n"
	"	mov %r15, %rsi\n"
	"	syscall\n"
	"	mov %r12, %rsp\n"
	"	pushq $0\n"
	"	popfq\n"
	"	mov %r14, -8(%rsp)\n"
	"	mov $0, %eax\n"
	"	mov $0, %ebx\n"
	"	mov $0, %ecx\n"
	"	mov $0, %edx\n"
	"	mov $0, %esi\n"
	"	mov $0, %edi\n"
	"	mov $0, %ebp\n"
	"	mov $0, %r8d\n"
	"	mov $0, %r9d\n"
	"	mov $0, %r10d\n"
	"	mov $0, %r11d\n"
	"	mov $0, %r12d\n"
	"	mov $0, %r13d\n"
	"	mov $0, %r14d\n"
	"	mov $0, %r15d\n"
	"	jmp *-8(%rsp)\n"
	".size moat_jump, .-moat_jump\n");

/* ---- entry ---- */

__attribute__((noreturn)) void loader_main(uintptr_t *sp);

static const char *info_str(const struct moat_exec_info *info, uint32_t off,
			    uint32_t count)
{
	const char *s = info->strings + off;
	uint32_t left;

	if (off >= info->strings_len)
		die("bad exec info string", -EINVAL);
	left = info->strings_len - off;
	while (count--) {
		size_t i = 0;

		while (i < left && s[i])
			i++;
		if (i == left)
			die("bad exec info string", -EINVAL);
		s += i + 1;
		left -= (uint32_t)(i + 1);
		if (count && !left)
			die("bad exec info string", -EINVAL);
	}
	return info->strings + off;
}

void loader_main(uintptr_t *sp)
{
	struct moat_exec_info *info;
	char *buf;
	struct stack_in in;
	struct image prog, interp;
	long r;

	self_relocate();
	in.argc = (long)sp[0];
	in.argv = (char **)(sp + 1);
	in.envp = in.argv + in.argc + 1;
	{
		char **e = in.envp;

		while (*e)
			e++;
		in.auxv = (Elf64_auxv_t *)(e + 1);
	}

	/* the info in a mapping, not on the stack: 64 KiB there made a
	 * program started with RLIMIT_STACK of 16-64 KiB die of SIGSEGV in
	 * here, where Linux runs it (red team 73); unmapped before the jump */
	buf = anon_rw(MOAT_EXEC_INFO_MAX, "cannot map the exec info");
	do
		r = sys3(MOAT_SYS_LOADER, MOAT_LOADER_GET, buf, MOAT_EXEC_INFO_MAX);
	while (r == -EINTR);
	if (r == -ENOSYS)
		die("not started by moat", r);
	if (is_err(r))
		die("cannot get the exec info", r);
	info = (struct moat_exec_info *)buf;
	if (info->magic != MOAT_EXEC_MAGIC ||
	    info->version != MOAT_EXEC_VERSION ||
	    info->len < sizeof(*info) || info->len > MOAT_EXEC_INFO_MAX ||
	    info->strings_len > info->len - sizeof(*info))
		die("bad exec info", -EINVAL);
	/* the fd installed with the answer: the call's return value */
	if (info->interp_fd == MOAT_EXEC_FD_RET)
		info->interp_fd = (int32_t)r;
	else if (info->prog_fd == MOAT_EXEC_FD_RET)
		info->prog_fd = (int32_t)r;
	if (info->prog_fd < 0)
		die("bad exec info", -EINVAL);
	if (info->prefix_count)
		info_str(info, info->prefix_off, info->prefix_count);
	info_str(info, info->execfn_off, 1);
	info_str(info, info->comm_off, 1);
	if (info->skip > (uint64_t)in.argc || info->prefix_count > 4096)
		die("bad exec info argv", -EINVAL);

	load_elf(info->prog_fd, &prog, "cannot load the program");
	if (info->interp_fd >= 0) {
		load_elf(info->interp_fd, &interp, "cannot load the interpreter");
		start_program(&in, info, &prog, &interp);
	}
	if (prog.has_interp)
		die("program needs an interpreter", -ENOEXEC);
	start_program(&in, info, &prog, NULL);
}

/* _start: rsp points at argc; keep it, align, call loader_main. */
__asm__(".text\n"
	".globl _start\n"
	".type _start,@function\n"
	"_start:\n"
	"	xor %ebp, %ebp\n"
	"	mov %rsp, %rdi\n"
	"	and $-16, %rsp\n"
	"	call loader_main\n"
	"	hlt\n"
	".size _start, .-_start\n");
