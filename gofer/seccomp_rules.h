/* gofer/seccomp_rules.h - the gofer's seccomp allowlist (seccomp_rules.c). */
#ifndef MOAT_GOFER_SECCOMP_RULES_H
#define MOAT_GOFER_SECCOMP_RULES_H

#include <seccomp.h>

/* Add the gofer's rules to ctx (default action: EPERM). 0 or a libseccomp error. */
int gofer_seccomp_rules(scmp_filter_ctx ctx);

#endif
