/* Calls a kernel can lack, answered as a kernel that lacks them: where
 * /proc/config.gz says "# CONFIG_FANOTIFY is not set", fanotify_init and
 * fanotify_mark are ENOSYS (moat's config is its own: a denied call's option
 * is unset, so they must be ENOSYS, not EPERM: LTP's fanotify tests TCONF on
 * ENOSYS and broke on EPERM); listmount and statmount of one's own mount
 * namespace need no privilege, so they work or are ENOSYS, never EPERM (LTP
 * listmount04 broke on moat's EPERM). */
#include "t.h"

#ifndef SYS_listmount
#define SYS_listmount 458
#endif
#ifndef SYS_statmount
#define SYS_statmount 457
#endif

struct id_req {
	uint32_t size, spare;
	uint64_t mnt_id, param, mnt_ns_id;
};

/* 1: "CONFIG_<opt>=y" or =m, 0: "# CONFIG_<opt> is not set", -1: unknown */
static int kconfig(const char *opt)
{
	FILE *p = popen("zcat /proc/config.gz 2>/dev/null", "r");
	char line[256], set[128], unset[128];
	int r = -1;

	if (!p)
		return -1;
	snprintf(set, sizeof set, "CONFIG_%s=", opt);
	snprintf(unset, sizeof unset, "# CONFIG_%s is not set", opt);
	while (fgets(line, sizeof line, p)) {
		if (!strncmp(line, set, strlen(set)))
			r = 1;
		else if (!strncmp(line, unset, strlen(unset)))
			r = 0;
	}
	pclose(p);
	return r;
}

int main(int argc, char **argv)
{
	t_setup(argc, argv, "kconfig_calls");

	if (kconfig("FANOTIFY") == 0) {
		errno = 0;
		long r = syscall(SYS_fanotify_init, 0, O_RDONLY);
		CHECK(r < 0 && errno == ENOSYS, "fanotify_init_unset", "r %ld: %s", r, strerror(errno));
		errno = 0;
		r = syscall(SYS_fanotify_mark, -1, 1, 1, AT_FDCWD, ".");
		CHECK(r < 0 && errno == ENOSYS, "fanotify_mark_unset", "r %ld: %s", r, strerror(errno));
	} else {
		t_ok("fanotify_init_unset");
		t_ok("fanotify_mark_unset");
	}

	struct id_req req = { .size = 24, .mnt_id = ~0ULL };
	uint64_t ids[64];
	errno = 0;
	long n = syscall(SYS_listmount, &req, ids, 64, 0);
	CHECK(n > 0 || (n < 0 && errno == ENOSYS), "listmount_own", "r %ld: %s", n, strerror(errno));

	struct id_req sreq = { .size = 24, .mnt_id = n > 0 ? ids[0] : 1, .param = 1 /* STATMOUNT_SB_BASIC */ };
	char sbuf[4096];
	errno = 0;
	long r = syscall(SYS_statmount, &sreq, sbuf, sizeof sbuf, 0);
	CHECK(r == 0 || (r < 0 && errno == ENOSYS), "statmount_own", "r %ld: %s", r, strerror(errno));
	return t_done();
}
