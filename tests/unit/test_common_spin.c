/* tests/unit/test_common_spin.c - spin_poll (common/util.c), the
 * spin-then-sleep wait of the sentry for the gofer's reply and of the gofer
 * for the sentry's next request: ready at once, the budget spent, the
 * back-off after failed spins, MOAT_SPIN_US (0: off; bad values: the
 * default), a message that arrives while spinning. A spinner that was
 * descheduled (a loaded CI machine) backs off with SPIN_SKIP_BUSY instead:
 * the timing tests accept that outcome too. */
#include "common/util.h"

#include <criterion/criterion.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static unsigned long long now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ULL + (unsigned long long)ts.tv_nsec;
}

static void pair(int sv[2])
{
	cr_assert_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
}

static void budget(const char *us)
{
	if (us)
		setenv("MOAT_SPIN_US", us, 1);
	else
		unsetenv("MOAT_SPIN_US");
	spin_setup();
}

/* a socket pair (sv) and the budget us: the poll of its read end */
static struct pollfd ready_pair(int sv[2], const char *us)
{
	pair(sv);
	budget(us);
	return (struct pollfd){ .fd = sv[0], .events = POLLIN };
}

Test(common_spin, ready_at_once)
{
	int sv[2];
	struct spin_state s = { .fails = 2 };
	struct pollfd p = ready_pair(sv, "10000");
	cr_assert_eq(write(sv[1], "x", 1), 1);
	unsigned long long t0 = now_ns();
	cr_assert_eq(spin_poll(&p, 1, &s), 1);
	cr_assert(p.revents & POLLIN);
	cr_assert_lt(now_ns() - t0, 50000000ULL, "returned at once, not after the 10 ms budget");
	cr_assert_eq(s.fails, 0, "a success clears the failures");
}

Test(common_spin, budget_spent)
{
	int sv[2];
	struct spin_state s = { 0 };
	struct pollfd p = ready_pair(sv, "2000");
	unsigned long long t0 = now_ns();
	cr_assert_eq(spin_poll(&p, 1, &s), 0);
	unsigned long long dt = now_ns() - t0;
	if (s.skip == SPIN_SKIP_BUSY)
		return; /* descheduled meanwhile: backed off, as meant */
	cr_assert_geq(dt, 2000000ULL, "spun for the budget (%llu ns)", dt);
	cr_assert_eq(s.fails, 1);
	cr_assert_eq(s.skip, 0);
}

Test(common_spin, backs_off_after_failures)
{
	int sv[2];
	struct spin_state s = { 0 };
	struct pollfd p = ready_pair(sv, "200");
	for (int i = 0; i < SPIN_FAILS_MAX && !s.skip; i++)
		cr_assert_eq(spin_poll(&p, 1, &s), 0);
	cr_assert(s.skip == SPIN_SKIP_FAIL || s.skip == SPIN_SKIP_BUSY, "skip %u", s.skip);
	unsigned skip = s.skip;
	/* the waits that follow do not spin, even with a message ready: the
	 * caller sleeps in its own poll/recv, which returns at once then */
	cr_assert_eq(write(sv[1], "x", 1), 1);
	for (unsigned i = 0; i < skip; i++) {
		unsigned long long t0 = now_ns();
		cr_assert_eq(spin_poll(&p, 1, &s), 0);
		cr_assert_lt(now_ns() - t0, 1000000ULL);
	}
	cr_assert_eq(s.skip, 0);
	cr_assert_eq(spin_poll(&p, 1, &s), 1, "spins again after the back-off");
}

Test(common_spin, knob)
{
	int sv[2];
	struct spin_state s = { 0 };
	struct pollfd p = { .events = POLLIN };

	pair(sv);
	p.fd = sv[0];
	cr_assert_eq(write(sv[1], "x", 1), 1);
	budget("0");
	cr_assert_eq(spin_poll(&p, 1, &s), 0, "MOAT_SPIN_US=0: never spins");
	cr_assert_eq(s.fails, 0);
	cr_assert_eq(s.skip, 0);
	static const char *const bad[] = { "", "abc", "-1", "12x", "99999", NULL };
	for (int i = 0; i < 6; i++) {
		budget(bad[i]);
		cr_assert_eq(spin_poll(&p, 1, &s), 1, "MOAT_SPIN_US '%s': the default budget",
			     bad[i] ? bad[i] : "(unset)");
	}
}

static void *late_writer(void *arg)
{
	struct timespec ts = { 0, 200000 };
	nanosleep(&ts, NULL);
	if (write(*(int *)arg, "y", 1) != 1)
		abort();
	return NULL;
}

Test(common_spin, message_while_spinning)
{
	int sv[2];
	pthread_t th;
	struct spin_state s = { 0 };
	struct pollfd p = ready_pair(sv, "10000");
	unsigned long long t0 = now_ns();
	cr_assert_eq(pthread_create(&th, NULL, late_writer, &sv[1]), 0);
	int r = spin_poll(&p, 1, &s);
	unsigned long long dt = now_ns() - t0;
	pthread_join(th, NULL);
	if (r == 0 && s.skip == SPIN_SKIP_BUSY)
		return; /* the writer ran on this CPU: the spinner saw itself descheduled */
	cr_assert_eq(r, 1);
	cr_assert(p.revents & POLLIN);
	cr_assert_lt(dt, 9000000ULL, "seen when it came, not at the end of the 10 ms budget");
}
