/* tests/unit/test_sentry_hostres.c - the host's reserve (sentry/hostres.c)
 * against this host's real counts: /proc/loadavg's task count and
 * fs/aio-nr, read through the fds hostres_setup holds, with a pid_max and
 * an aio-max-nr made up around them so that the reserve is or is not
 * reached; the floors; the file table's arithmetic. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernel/task.h"
#include "sentry/sentry.h"

static struct sandbox sb;

static long long host_tasks(void)
{
	FILE *f = fopen("/proc/loadavg", "r");
	double a, b, c;
	long long run, all;
	cr_assert(f);
	cr_assert_eq(fscanf(f, "%lf %lf %lf %lld/%lld", &a, &b, &c, &run, &all), 5);
	fclose(f);
	return all;
}

static long long aio_nr(void)
{
	FILE *f = fopen("/proc/sys/fs/aio-nr", "r");
	long long v = -1;
	if (f) {
		if (fscanf(f, "%lld", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

static void setup(void)
{
	memset(&sb, 0, sizeof sb);
	unsetenv("MOAT_TEST_HOST_LOW");
	hostres_setup(&sb);
	cr_assert_geq(sb.host_loadavg_fd, 0);
}

static void teardown(void)
{
	if (sb.host_loadavg_fd >= 0)
		close(sb.host_loadavg_fd);
	if (sb.host_aionr_fd >= 0)
		close(sb.host_aionr_fd);
}

TestSuite(sentry_hostres, .init = setup, .fini = teardown);

Test(sentry_hostres, tasks_table_is_the_smaller_of_pid_max_and_threads_max)
{
	long pm = 0, tm = 0;
	FILE *f = fopen("/proc/sys/kernel/pid_max", "r");
	cr_assert(f && fscanf(f, "%ld", &pm) == 1);
	fclose(f);
	f = fopen("/proc/sys/kernel/threads-max", "r");
	cr_assert(f && fscanf(f, "%ld", &tm) == 1);
	fclose(f);
	teardown();
	memset(&sb, 0, sizeof sb);
	sb.host_pid_max = pm;
	hostres_setup(&sb);
	cr_assert_eq(sb.host_tasks_max, pm < tm ? pm : tm);
	teardown();
	memset(&sb, 0, sizeof sb);
	sb.host_pid_max = tm + 1000; /* a pid_max above threads-max (systemd's 4,194,304) */
	hostres_setup(&sb);
	cr_assert_eq(sb.host_tasks_max, tm);
}

Test(sentry_hostres, pids_low_only_in_the_last_eighth)
{
	long long all = host_tasks();
	/* free: ten pids of all + 10 (under an eighth): refused */
	sb.host_tasks_max = all + 10;
	cr_assert_eq(hostres_pids_low(&sb, HOST_PIDS_FLOOR), 1);
	cr_assert_eq(hostres_pids_low(&sb, 500), 1);
	/* under the floor: never refused, nor read */
	cr_assert_eq(hostres_pids_low(&sb, HOST_PIDS_FLOOR - 1), 0);
	/* three quarters free (a margin for tasks started meanwhile): not low */
	sb.host_tasks_max = 4 * all + 4000;
	cr_assert_eq(hostres_pids_low(&sb, 500), 0);
	/* no table size known: never */
	sb.host_tasks_max = 0;
	cr_assert_eq(hostres_pids_low(&sb, 500), 0);
}

Test(sentry_hostres, aio_low_when_the_call_leaves_under_an_eighth)
{
	long long used = aio_nr();
	if (used < 0 || sb.host_aionr_fd < 0)
		cr_skip_test("no /proc/sys/fs/aio-nr here");
	/* (aio-nr moves only with io_setup/io_destroy: one tolerates what
	 * another process does meanwhile up to the margins below) */
	sb.host_aio_max = used + 8000;
	cr_assert_eq(hostres_aio_low(&sb, 16), 0);          /* ~7,984 of 8,000+ free after */
	cr_assert_eq(hostres_aio_low(&sb, 7500), 1);        /* under an eighth after */
	cr_assert_eq(hostres_aio_low(&sb, 9000), 1);        /* past the maximum */
	sb.host_aio_max = 0;                                /* unknown: never */
	cr_assert_eq(hostres_aio_low(&sb, 9000), 0);
}

Test(sentry_hostres, files_floor_and_reserve)
{
	cr_assert_eq(hostres_files_floor(2466248), 2408);
	cr_assert_eq(hostres_files_floor(100000), HOST_FILES_FLOOR);
	cr_assert_eq(hostres_files_low(&sb, 800000, 100000), 0);
	cr_assert_eq(hostres_files_low(&sb, 800000, 700000), 0);  /* exactly an eighth free */
	cr_assert_eq(hostres_files_low(&sb, 800000, 700001), 1);
	cr_assert_eq(hostres_files_low(&sb, 800000, 900000), 1);  /* past it (another's CAP_SYS_ADMIN) */
}

Test(sentry_hostres, memory_floor_and_reserve)
{
	cr_assert_eq(hostres_mem_floor(24ULL << 30), 384ULL << 20);    /* a 24 GiB host: 1/64 */
	cr_assert_eq(hostres_mem_floor(1ULL << 30), HOST_MEM_FLOOR_MIN); /* 16 MiB: raised to 64 */
	cr_assert_eq(hostres_mem_floor(1ULL << 40), HOST_MEM_FLOOR_MAX); /* 16 GiB: cut to 1 */
	cr_assert_eq(hostres_mem_low(&sb, 16000, 1000), 0);            /* exactly a sixteenth */
	cr_assert_eq(hostres_mem_low(&sb, 16000, 999), 1);
	cr_assert_eq(hostres_mem_low(&sb, 16000, 2000), 0);
}

Test(sentry_hostres, test_knob_only_refuses_more)
{
	setenv("MOAT_TEST_HOST_LOW", "1", 1);
	teardown();
	memset(&sb, 0, sizeof sb);
	hostres_setup(&sb);
	unsetenv("MOAT_TEST_HOST_LOW");
	sb.host_tasks_max = 1 << 22;
	cr_assert_eq(hostres_pids_low(&sb, HOST_PIDS_FLOOR), 1);
	cr_assert_eq(hostres_pids_low(&sb, HOST_PIDS_FLOOR - 1), 0); /* the floor holds */
	cr_assert_eq(hostres_aio_low(&sb, 1), 1);
	cr_assert_eq(hostres_files_low(&sb, 800000, 1), 1);
	cr_assert_eq(hostres_mem_low(&sb, 8000, 7999), 1);
	/* any other value: off */
	setenv("MOAT_TEST_HOST_LOW", "yes", 1);
	teardown();
	memset(&sb, 0, sizeof sb);
	hostres_setup(&sb);
	unsetenv("MOAT_TEST_HOST_LOW");
	cr_assert_eq(sb.host_test_low, 0);
}
