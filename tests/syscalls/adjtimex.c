/* adjtimex and clock_adjtime: reads work, a bad mode is EINVAL before any
 * privilege check, a change without CAP_SYS_TIME is EPERM (LTP adjtimex03:
 * moat denied every call with EPERM). Nothing here changes a clock: the
 * change case runs only where it must fail (not native root). */
#include "t.h"
#include <sys/time.h>
#include <sys/timex.h>
#include <time.h>

#ifndef CLOCK_TAI
#define CLOCK_TAI 11
#endif

static long adjtimex_raw(struct timex *tx) { return syscall(SYS_adjtimex, tx); }

int main(int argc, char **argv)
{
	t_setup(argc, argv, "adjtimex");
	struct timex tx;
	struct timeval tv;

	memset(&tx, 0, sizeof tx);
	errno = 0;
	long r = adjtimex_raw(&tx);
	gettimeofday(&tv, NULL);
	CHECK(r >= TIME_OK && r <= TIME_ERROR && tx.tick >= 9000 && tx.tick <= 11000 &&
		      llabs((long long)tx.time.tv_sec - (long long)tv.tv_sec) <= 2,
	      "read", "r %ld (%s) tick %ld time %ld now %ld", r, strerror(errno), (long)tx.tick,
	      (long)tx.time.tv_sec, (long)tv.tv_sec);

	memset(&tx, 0, sizeof tx);
	tx.modes = ADJ_OFFSET_SS_READ;
	errno = 0;
	r = adjtimex_raw(&tx);
	CHECK(r >= TIME_OK && r <= TIME_ERROR, "read_adjtime_offset", "r %ld: %s", r, strerror(errno));

	/* the kernel's ADJ_ADJTIME (0x8000) without ADJ_OFFSET_SINGLESHOT: EINVAL
	 * whoever asks (LTP adjtimex03) */
	memset(&tx, 0, sizeof tx);
	tx.modes = 0x8000;
	errno = 0;
	r = adjtimex_raw(&tx);
	CHECK(r < 0 && errno == EINVAL, "bad_mode_einval", "r %ld: %s", r, strerror(errno));

	errno = 0;
	r = syscall(SYS_adjtimex, (void *)8);
	CHECK(r < 0 && errno == EFAULT, "efault", "r %ld: %s", r, strerror(errno));

	if (geteuid() != 0 || (t_in_guest() && t_confined())) {
		memset(&tx, 0, sizeof tx);
		adjtimex_raw(&tx);
		long tick = tx.tick;
		memset(&tx, 0, sizeof tx);
		tx.modes = ADJ_TICK;
		tx.tick = tick;
		errno = 0;
		r = adjtimex_raw(&tx);
		CHECK(r < 0 && errno == EPERM, "change_eperm", "r %ld: %s", r, strerror(errno));
	} else {
		t_ok("change_eperm");
	}

	memset(&tx, 0, sizeof tx);
	errno = 0;
	r = syscall(SYS_clock_adjtime, CLOCK_REALTIME, &tx);
	CHECK(r >= TIME_OK && r <= TIME_ERROR && tx.tick >= 9000 && tx.tick <= 11000, "clock_adjtime_realtime",
	      "r %ld: %s", r, strerror(errno));
	memset(&tx, 0, sizeof tx);
	errno = 0;
	r = syscall(SYS_clock_adjtime, CLOCK_MONOTONIC, &tx);
	CHECK(r < 0 && errno == EOPNOTSUPP, "clock_adjtime_monotonic", "r %ld: %s", r, strerror(errno));
	errno = 0;
	r = syscall(SYS_clock_adjtime, 100, &tx);
	CHECK(r < 0 && errno == EINVAL, "clock_adjtime_bad_id", "r %ld: %s", r, strerror(errno));
	return t_done();
}
