/* common/bpf.h - a libseccomp filter as raw classic BPF: exported once
 * (run time: the guest filter's hash, -t; build time: the generators of
 * the guest's, the sentry's and the gofer's prebuilt programs) and written
 * out as the lines of a C array. */
#ifndef MOAT_COMMON_BPF_H
#define MOAT_COMMON_BPF_H

#include <linux/filter.h>
#include <seccomp.h>
#include <stdio.h>

/* ctx's program into out (filter malloc'ed, the caller frees it):
 * 0, -errno (-E2BIG past BPF_MAXINSNS). */
int bpf_export(scmp_filter_ctx ctx, struct sock_fprog *out);

/* one "\t{ code, jt, jf, k },\n" line per instruction of p */
void bpf_write_c_array(FILE *f, const struct sock_fprog *p);

/* A small allow-list program without libseccomp, for the processes that
 * install one with nothing else at hand (moat-init's, the gofer's dshrink
 * helper's): the arch check (another arch: SECCOMP_RET_KILL_PROCESS), then
 * each row's syscall number, the first row that names it deciding. A row
 * with arg >= 0 allows the call only when that argument's low 32 bits are
 * val (the kernel reads the arguments compared so far, fds and commands,
 * as 32-bit ints), else miss (0: the default action; SECCOMP_RET_KILL_THREAD
 * is 0, so a row cannot ask for it). */
struct bpf_allow {
	int nr;
	int arg;       /* -1: any arguments */
	unsigned val;
	unsigned miss; /* the action when arg's value is another; 0: dflt */
};

/* The program for rows[0..n-1] and dflt into out[0..cap-1]: its length,
 * or -E2BIG (cap too small, or a jump past 255 instructions). */
int bpf_allow_build(const struct bpf_allow *rows, size_t n, unsigned dflt, struct sock_filter *out, size_t cap);

/* at most this many instructions for n rows */
#define BPF_ALLOW_LEN(n) (4 + 1 + 4 * (n) + 1)

#endif
