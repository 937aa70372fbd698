/* syscalls/filter_prebuilt.c - the guest's seccomp program without libseccomp
 * at run time: the array gen_filter.c wrote at build time, with the numbers
 * --deny names sent to the sentry by a prefix (two arrays: without
 * moat-netd and with it, sc_build_guest_filter_net):
 *
 *   ld arch; jeq AUDIT_ARCH ? next : ja base   (the base answers a foreign arch)
 *   ld nr;   jeq d1 ? ret USER_NOTIF : next; ... (one pair per denied number)
 *   base program
 *
 * which is what sc_build_guest_filter_deny() does for the same deny set: the
 * default action (USER_NOTIF) for those numbers, whatever their row says. */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <linux/audit.h>
#include <linux/seccomp.h>

#include "platform/arch.h"
#include "syscalls/filter.h"

extern const uint32_t sc_guest_bpf_extra;
extern const unsigned short sc_guest_bpf_len;
extern const struct sock_filter sc_guest_bpf[];
extern const unsigned short sc_guest_bpf_net_len;
extern const struct sock_filter sc_guest_bpf_net[];

int sc_guest_filter_prebuilt(uint32_t notify_nr_extra, const unsigned char *force,
			     struct sock_fprog *out)
{
	return sc_guest_filter_prebuilt_net(notify_nr_extra, force, false, out);
}

int sc_guest_filter_prebuilt_net(uint32_t notify_nr_extra, const unsigned char *force, bool netd,
				 struct sock_fprog *out)
{
	const struct sock_filter *base = netd ? sc_guest_bpf_net : sc_guest_bpf;
	size_t base_len = netd ? sc_guest_bpf_net_len : sc_guest_bpf_len;
	size_t nd = 0, n = 0;
	struct sock_filter *p;

	out->len = 0;
	out->filter = NULL;
	if (notify_nr_extra != sc_guest_bpf_extra)
		return -EINVAL;
	for (int nr = 0; force && nr < SC_NR_MAX; nr++)
		nd += force[nr] != 0;
	size_t len = base_len + (nd ? 4 + 2 * nd : 0);
	if (len > BPF_MAXINSNS)
		return -E2BIG;
	p = malloc(len * sizeof *p);
	if (!p)
		return -ENOMEM;
	if (nd) {
		p[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
						      offsetof(struct seccomp_data, arch));
		p[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, MOAT_AUDIT_ARCH, 1, 0);
		p[n++] = (struct sock_filter)BPF_STMT(BPF_JMP | BPF_JA, (uint32_t)(1 + 2 * nd));
		p[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
						      offsetof(struct seccomp_data, nr));
		for (int nr = 0; nr < SC_NR_MAX; nr++) {
			if (!force[nr])
				continue;
			p[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)nr, 0, 1);
			p[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
							      force[nr] == SC_FORCE_TRACE ? SECCOMP_RET_TRACE :
							      SECCOMP_RET_USER_NOTIF);
		}
	}
	memcpy(p + n, base, base_len * sizeof *p);
	out->filter = p;
	out->len = (unsigned short)len;
	return 0;
}
