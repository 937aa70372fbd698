/* tests/unit/test_gofer_ops.c - gofer operations through the client API. */
#include "test_gofer_common.h"

TestSuite(gofer_ops, .init = setup_all, .fini = teardown_all);

Test(gofer_ops, starts_and_stats_root)
{
	struct gofer_conn *c = gofer_connect(gctl);
	struct stat st;

	cr_assert(c, "connect: %s", strerror(errno));
	cr_assert_eq(gofer_lstat(c, EXP_RW, "", &st), 0);
	cr_assert(S_ISDIR(st.st_mode));
	cr_assert_eq(gofer_lstat(c, EXP_RW, "file", &st), 0);
	cr_assert_eq(st.st_size, 5);
	gofer_disconnect(c);
}
