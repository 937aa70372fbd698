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

#endif
