/* sentry/confine_prebuilt.c - the sentry's filter without libseccomp at run
 * time: the program gen_confine.c compiled at build time, its placeholder
 * fds replaced by the sandbox's (confine_rules.h). */
#include "sentry/confine_rules.h"

#include <errno.h>
#include <linux/seccomp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

extern const unsigned confine_bpf_nph; /* placeholders in it (gen_confine.c) */
extern const unsigned short confine_bpf_len;
extern const struct sock_filter confine_bpf[];

int confine_prebuilt_patch(int pfd, const int *roots, size_t nroots, struct sock_fprog *out)
{
	out->len = 0;
	out->filter = NULL;
	if (pfd < 0 || nroots > CONFINE_PH_NROOTS)
		return -1;
	struct sock_filter *p = malloc(confine_bpf_len * sizeof *p);
	if (!p)
		return -1;
	memcpy(p, confine_bpf, confine_bpf_len * sizeof *p);
	int n = 0;
	for (size_t i = 0; i < confine_bpf_len; i++) {
		uint32_t k = p[i].k;
		if (p[i].code != (BPF_JMP | BPF_JEQ | BPF_K) || k < CONFINE_PH_LO || k > CONFINE_PH_HI)
			continue;
		if (k == CONFINE_PH_PFD) {
			p[i].k = (uint32_t)pfd;
		} else if (k >= CONFINE_PH_ROOT0 && k < CONFINE_PH_ROOT0 + CONFINE_PH_NROOTS) {
			size_t r = k - CONFINE_PH_ROOT0;
			p[i].k = r < nroots && roots[r] >= 0 ? (uint32_t)roots[r] : CONFINE_PH_NONE - (uint32_t)r;
		} else {
			free(p);
			return -1;
		}
		n++;
	}
	if ((unsigned)n != confine_bpf_nph) {
		free(p);
		return -1;
	}
	out->filter = p;
	out->len = confine_bpf_len;
	return 0;
}

int confine_prebuilt_load(int pfd, const int *roots, size_t nroots)
{
	struct sock_fprog prog;
	if (confine_prebuilt_patch(pfd, roots, nroots, &prog) < 0)
		return -1;
	long r = -1;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0)
		r = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog);
	free(prog.filter);
	return r == 0 ? 0 : -1;
}
