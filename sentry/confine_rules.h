/* sentry/confine_rules.h - the sentry's allowlist (confine_rules.c), and its
 * build-time compilation with placeholder fds (gen_confine.c,
 * confine_prebuilt.c). */
#ifndef MOAT_SENTRY_CONFINE_RULES_H
#define MOAT_SENTRY_CONFINE_RULES_H

#include <linux/filter.h>
#include <seccomp.h>
#include <stddef.h>
#include <stdint.h>

/* Add the sentry's rules to ctx (and its attributes: the binary tree, TSYNC,
 * no_new_privs): openat/readlinkat on pfd, openat2/readlinkat on each
 * roots[i] >= 0, the -t ioctls on tty when tty >= 0. 0 or a libseccomp error. */
int confine_rules(scmp_filter_ctx ctx, int pfd, const int *roots, size_t nroots, int tty);

/* The placeholders the build compiles in (no fd reaches them: an fd is below
 * the sentry's RLIMIT_NOFILE); an unused root slot r becomes
 * CONFINE_PH_NONE - r (no fd either), which is what libseccomp would build
 * from roots padded with those values. */
#define CONFINE_PH_PFD      0x5e7f0100u
#define CONFINE_PH_ROOT0    0x5e7f0200u
#define CONFINE_PH_NROOTS   32
#define CONFINE_PH_NONE     0x7fffffffu
#define CONFINE_PH_LO       0x5e7f0000u
#define CONFINE_PH_HI       0x5e7fffffu

/* The prebuilt program with the fds patched in: 0 with *out (malloc'd), or
 * -1 when it cannot stand for confine_rules (more roots than slots, a
 * placeholder count that differs from the build's). */
int confine_prebuilt_patch(int pfd, const int *roots, size_t nroots, struct sock_fprog *out);
/* Patch and load it (no_new_privs, then the filter with TSYNC): 0, or -1
 * with nothing loaded (the caller takes libseccomp's run-time path). */
int confine_prebuilt_load(int pfd, const int *roots, size_t nroots);

#endif
