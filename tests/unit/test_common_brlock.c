/* tests/unit/test_common_brlock.c - the reader-writer lock of the dentry
 * cache, the written set and the task table (common/brlock.h): writers
 * exclude readers and each other under contention, readers share, a writer
 * waits for a reader inside, and threads read through slots of their own. */
#include "common/brlock.h"

#include <criterion/criterion.h>
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>

static struct brlock lk = BRLOCK_INITIALIZER;
/* written by writers only under the lock, in two steps: a reader that
 * ever sees them differ ran beside a writer */
static volatile long va, vb;
static atomic_int stop;
static atomic_long torn, reads, writes;

static void *reader(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		unsigned s = brlock_rdlock(&lk);
		long a = va;
		for (volatile int k = 0; k < 50; k++)
			;
		long b = vb;
		brlock_rdunlock(&lk, s);
		if (a != b)
			atomic_fetch_add(&torn, 1);
		atomic_fetch_add(&reads, 1);
	}
	return NULL;
}

static void *writer(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		brlock_wrlock(&lk);
		long n = va + 1;
		va = n;
		for (volatile int k = 0; k < 50; k++)
			;
		if (vb != n - 1)
			atomic_fetch_add(&torn, 1); /* another writer inside */
		vb = n;
		brlock_wrunlock(&lk);
		atomic_fetch_add(&writes, 1);
	}
	return NULL;
}

Test(common_brlock, writers_exclude)
{
	pthread_t r[4], w[2];
	for (int i = 0; i < 4; i++)
		cr_assert_eq(pthread_create(&r[i], NULL, reader, NULL), 0);
	for (int i = 0; i < 2; i++)
		cr_assert_eq(pthread_create(&w[i], NULL, writer, NULL), 0);
	usleep(400 * 1000);
	atomic_store(&stop, 1);
	for (int i = 0; i < 4; i++)
		pthread_join(r[i], NULL);
	for (int i = 0; i < 2; i++)
		pthread_join(w[i], NULL);
	cr_assert_gt(atomic_load(&reads), 100, "%ld reads", atomic_load(&reads));
	cr_assert_gt(atomic_load(&writes), 100, "%ld writes", atomic_load(&writes));
	cr_assert_eq(atomic_load(&torn), 0, "%ld torn reads or overlapping writers (%ld reads, %ld writes)",
		     atomic_load(&torn), atomic_load(&reads), atomic_load(&writes));
	cr_assert_eq(va, vb);
}

static struct brlock lk2 = BRLOCK_INITIALIZER;
static atomic_int phase;

static void *second_reader(void *arg)
{
	(void)arg;
	unsigned s = brlock_rdlock(&lk2);   /* while main holds it for reading */
	atomic_store(&phase, 1);
	brlock_rdunlock(&lk2, s);
	return (void *)(unsigned long)brlock_my_slot();
}

static void *late_writer(void *arg)
{
	(void)arg;
	brlock_wrlock(&lk2);
	atomic_store(&phase, 2);
	brlock_wrunlock(&lk2);
	return NULL;
}

Test(common_brlock, readers_share_writer_waits)
{
	pthread_t t;
	void *slot;
	unsigned s = brlock_rdlock(&lk2);
	cr_assert_eq(pthread_create(&t, NULL, second_reader, NULL), 0);
	pthread_join(t, &slot);
	cr_assert_eq(atomic_load(&phase), 1, "a second reader waited for the first");
	cr_assert_neq((unsigned)(unsigned long)slot, brlock_my_slot(), "two threads, one slot");
	cr_assert_eq(pthread_create(&t, NULL, late_writer, NULL), 0);
	usleep(100 * 1000);
	cr_assert_eq(atomic_load(&phase), 1, "the writer went in beside a reader");
	brlock_rdunlock(&lk2, s);
	pthread_join(t, NULL);
	cr_assert_eq(atomic_load(&phase), 2);
	/* and readers come back once it is gone */
	s = brlock_rdlock(&lk2);
	brlock_rdunlock(&lk2, s);
}
