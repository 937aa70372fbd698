/* kernel/cred.c - virtual credentials and Linux's set*id transition rules
 * (kernel/sys.c, security/commoncap.c). See cred.h. */
#include "kernel/cred.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define NOID ((uid_t)-1)

void cred_init(struct cred *c, uid_t uid, gid_t gid)
{
	memset(c, 0, sizeof *c);
	c->ruid = c->euid = c->suid = c->fsuid = uid;
	c->rgid = c->egid = c->sgid = c->fsgid = gid;
	c->cap_bnd = CRED_CAPS_GRANTED;
	if (uid == 0)
		c->cap_prm = c->cap_eff = CRED_CAPS_GRANTED;
}

void cred_copy(struct cred *dst, const struct cred *src)
{
	*dst = *src;
	if (dst->groups)
		atomic_fetch_add(&dst->groups->refs, 1);
}

static void groups_put(struct cred_groups *g)
{
	if (g && atomic_fetch_sub(&g->refs, 1) == 1)
		free(g);
}

void cred_free(struct cred *c)
{
	groups_put(c->groups);
	c->groups = NULL;
}

int cred_capable(const struct cred *c, int cap)
{
	return cap >= 0 && cap <= CRED_CAP_LAST && (c->cap_eff & CRED_BIT(cap));
}

int cred_in_group(const struct cred *c, gid_t gid)
{
	if (gid == c->fsgid)
		return 1;
	const struct cred_groups *g = c->groups;
	if (!g)
		return 0;
	int lo = 0, hi = g->n - 1;
	while (lo <= hi) {
		int mid = lo + (hi - lo) / 2;
		if (g->g[mid] == gid)
			return 1;
		if (g->g[mid] < gid)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return 0;
}

/* cap_emulate_setxuid (security/commoncap.c) */
static void fix_setuid(struct cred *new, const struct cred *old)
{
	if ((old->ruid == 0 || old->euid == 0 || old->suid == 0) &&
	    new->ruid != 0 && new->euid != 0 && new->suid != 0) {
		if (!(new->securebits & CRED_SECBIT_KEEP_CAPS)) {
			new->cap_prm = 0;
			new->cap_eff = 0;
		}
		new->cap_amb = 0;
	}
	if (old->euid == 0 && new->euid != 0)
		new->cap_eff = 0;
	if (old->euid != 0 && new->euid == 0)
		new->cap_eff = new->cap_prm;
}

/* commit_creds: a changed euid/egid/fsuid/fsgid or gained permitted
 * capabilities make the process non-dumpable (suid_dumpable 0) */
int cred_commit_resets(const struct cred *old, const struct cred *c)
{
	return old->euid != c->euid || old->egid != c->egid || old->fsuid != c->fsuid ||
	       old->fsgid != c->fsgid || (c->cap_prm & ~old->cap_prm);
}

static void dump_note(const struct cred *old, struct cred *c)
{
	if (cred_commit_resets(old, c))
		c->nondump = 1;
}

#define CAP_SETGID_ CRED_CAP_SETGID
#define CAP_SETUID_ CRED_CAP_SETUID
#define CAP_SETPCAP_ CRED_CAP_SETPCAP

int cred_setuid(struct cred *c, uid_t uid)
{
	struct cred old = *c;
	if (uid == NOID)
		return -EINVAL;
	if (cred_capable(c, CAP_SETUID_)) {
		c->ruid = c->suid = uid;
	} else if (uid != old.ruid && uid != old.suid) {
		return -EPERM;
	}
	c->euid = c->fsuid = uid;
	fix_setuid(c, &old);
	dump_note(&old, c);
	return 0;
}

int cred_setgid(struct cred *c, gid_t gid)
{
	struct cred old = *c;
	if (gid == NOID)
		return -EINVAL;
	if (cred_capable(c, CAP_SETGID_))
		c->rgid = c->sgid = gid;
	else if (gid != c->rgid && gid != c->sgid)
		return -EPERM;
	c->egid = c->fsgid = gid;
	dump_note(&old, c);
	return 0;
}

int cred_setreuid(struct cred *c, uid_t r, uid_t e)
{
	struct cred old = *c;
	int cap = cred_capable(c, CAP_SETUID_);
	if (r != NOID && r != old.ruid && r != old.euid && !cap)
		return -EPERM;
	if (e != NOID && e != old.ruid && e != old.euid && e != old.suid && !cap)
		return -EPERM;
	if (r != NOID)
		c->ruid = r;
	if (e != NOID)
		c->euid = e;
	if (r != NOID || (e != NOID && e != old.ruid))
		c->suid = c->euid;
	c->fsuid = c->euid;
	fix_setuid(c, &old);
	dump_note(&old, c);
	return 0;
}

int cred_setregid(struct cred *c, gid_t r, gid_t e)
{
	struct cred old = *c;
	int cap = cred_capable(c, CAP_SETGID_);
	if (r != NOID && r != old.rgid && r != old.egid && !cap)
		return -EPERM;
	if (e != NOID && e != old.rgid && e != old.egid && e != old.sgid && !cap)
		return -EPERM;
	if (r != NOID)
		c->rgid = r;
	if (e != NOID)
		c->egid = e;
	if (r != NOID || (e != NOID && e != old.rgid))
		c->sgid = c->egid;
	c->fsgid = c->egid;
	dump_note(&old, c);
	return 0;
}

static int is_new(uid_t v, uid_t a, uid_t b, uid_t d)
{
	return v != NOID && v != a && v != b && v != d;
}

int cred_setresuid(struct cred *c, uid_t r, uid_t e, uid_t s)
{
	struct cred old = *c;
	if ((r == NOID || r == old.ruid) && (e == NOID || (e == old.euid && e == old.fsuid)) &&
	    (s == NOID || s == old.suid))
		return 0;
	if ((is_new(r, old.ruid, old.euid, old.suid) || is_new(e, old.ruid, old.euid, old.suid) ||
	     is_new(s, old.ruid, old.euid, old.suid)) && !cred_capable(c, CAP_SETUID_))
		return -EPERM;
	if (r != NOID)
		c->ruid = r;
	if (e != NOID)
		c->euid = e;
	if (s != NOID)
		c->suid = s;
	c->fsuid = c->euid;
	fix_setuid(c, &old);
	dump_note(&old, c);
	return 0;
}

int cred_setresgid(struct cred *c, gid_t r, gid_t e, gid_t s)
{
	struct cred old = *c;
	if ((r == NOID || r == old.rgid) && (e == NOID || (e == old.egid && e == old.fsgid)) &&
	    (s == NOID || s == old.sgid))
		return 0;
	if ((is_new(r, old.rgid, old.egid, old.sgid) || is_new(e, old.rgid, old.egid, old.sgid) ||
	     is_new(s, old.rgid, old.egid, old.sgid)) && !cred_capable(c, CAP_SETGID_))
		return -EPERM;
	if (r != NOID)
		c->rgid = r;
	if (e != NOID)
		c->egid = e;
	if (s != NOID)
		c->sgid = s;
	c->fsgid = c->egid;
	dump_note(&old, c);
	return 0;
}

uid_t cred_setfsuid(struct cred *c, uid_t fsuid)
{
	uid_t old = c->fsuid;
	if (fsuid == NOID)
		return old;
	if ((fsuid == c->ruid || fsuid == c->euid || fsuid == c->suid || fsuid == c->fsuid ||
	     cred_capable(c, CAP_SETUID_)) && fsuid != old) {
		c->fsuid = fsuid;
		c->nondump = 1;
		if (old == 0 && fsuid != 0)
			c->cap_eff &= ~CRED_CAPS_FS;
		if (old != 0 && fsuid == 0)
			c->cap_eff |= c->cap_prm & CRED_CAPS_FS;
	}
	return old;
}

gid_t cred_setfsgid(struct cred *c, gid_t fsgid)
{
	gid_t old = c->fsgid;
	if (fsgid == NOID)
		return old;
	if (fsgid == c->rgid || fsgid == c->egid || fsgid == c->sgid || fsgid == c->fsgid ||
	    cred_capable(c, CAP_SETGID_)) {
		if (fsgid != old)
			c->nondump = 1;
		c->fsgid = fsgid;
	}
	return old;
}

static int gid_cmp(const void *a, const void *b)
{
	gid_t x = *(const gid_t *)a, y = *(const gid_t *)b;
	return x < y ? -1 : x > y;
}

int cred_setgroups(struct cred *c, int n, const gid_t *groups)
{
	if (n < 0 || n > CRED_NGROUPS_MAX)
		return -EINVAL;
	if (!cred_capable(c, CAP_SETGID_))
		return -EPERM;
	struct cred_groups *g = NULL;
	if (n > 0) {
		g = malloc(sizeof *g + (size_t)n * sizeof(gid_t));
		if (!g)
			return -ENOMEM;
		atomic_init(&g->refs, 1);
		g->n = n;
		memcpy(g->g, groups, (size_t)n * sizeof(gid_t));
		qsort(g->g, (size_t)n, sizeof(gid_t), gid_cmp);
	}
	groups_put(c->groups);
	c->groups = g;
	return 0;
}

int cred_capset(struct cred *c, uint64_t eff, uint64_t prm, uint64_t inh)
{
	if (!cred_capable(c, CAP_SETPCAP_) && (inh & ~(c->cap_inh | c->cap_prm)))
		return -EPERM;
	if (inh & ~(c->cap_inh | c->cap_bnd))
		return -EPERM;
	if (prm & ~c->cap_prm)
		return -EPERM;
	if (eff & ~prm)
		return -EPERM;
	c->cap_eff = eff;
	c->cap_inh = inh;
	c->cap_prm = prm;
	c->cap_amb &= prm & inh;
	return 0;
}

void cred_exec(struct cred *c)
{
	c->suid = c->fsuid = c->euid;
	c->sgid = c->fsgid = c->egid;
	if (c->ruid == 0 || c->euid == 0) {
		c->cap_prm = c->cap_bnd | c->cap_inh;
		c->cap_eff = c->euid == 0 ? c->cap_prm : c->cap_amb;
	} else {
		c->cap_prm = c->cap_eff = c->cap_amb;
	}
	c->securebits &= ~CRED_SECBIT_KEEP_CAPS;
	c->nondump = !(c->ruid == c->euid && c->rgid == c->egid);
}
