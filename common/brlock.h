/* common/brlock.h - a reader-writer lock whose readers share no cache line.
 *
 * A pthread_rwlock's readers all move one counter: with the sentry's fast
 * calls served on several CPUs at once (issue 6, one lead per CPU), every
 * dentry-cache look-up bounced that line between the CPUs (two lock and
 * two unlock RMWs per walked component). Here each reader thread counts
 * itself in a slot of its own (BRLOCK_SLOTS cache lines, a thread's slot
 * given round-robin at its first use; threads beyond that share slots,
 * which is still correct), and a writer raises `writer` and waits until
 * every slot is zero. Both sides use sequentially consistent operations
 * (the reader's increment before its load of `writer`, the writer's store
 * of `writer` before its loads of the slots: Dekker's pattern), so a
 * reader either sees the writer and backs off or is seen by it.
 *
 * A reader that finds a writer undoes its count and waits on the writers'
 * mutex (a futex sleep for as long as the writer holds it), then tries
 * again; writers are serialized by that mutex and wait for the readers
 * already inside (short, non-blocking sections) by spinning, then
 * yielding. Writers are preferred: a stream of readers cannot starve one.
 * Not recursive; a reader must not take the write lock.
 */
#ifndef MOAT_COMMON_BRLOCK_H
#define MOAT_COMMON_BRLOCK_H

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

#define BRLOCK_SLOTS 16

struct brlock_slot {
	_Alignas(64) atomic_long readers;
};

struct brlock {
	struct brlock_slot slot[BRLOCK_SLOTS];
	_Alignas(64) atomic_int writer;
	pthread_mutex_t wmu;
};

/* a static lock's initializer (the counters start at zero) */
#define BRLOCK_INITIALIZER { .wmu = PTHREAD_MUTEX_INITIALIZER }

void brlock_init(struct brlock *l);
void brlock_destroy(struct brlock *l);
/* this thread's slot (round-robin at its first call) */
unsigned brlock_my_slot(void);
void brlock_rdlock_slow(struct brlock *l, unsigned s);
void brlock_wrlock(struct brlock *l);
void brlock_wrunlock(struct brlock *l);

/* returns the slot to pass to brlock_rdunlock */
static inline unsigned brlock_rdlock(struct brlock *l)
{
	unsigned s = brlock_my_slot();

	atomic_fetch_add(&l->slot[s].readers, 1);
	if (atomic_load(&l->writer))
		brlock_rdlock_slow(l, s);
	return s;
}

static inline void brlock_rdunlock(struct brlock *l, unsigned s)
{
	atomic_fetch_sub_explicit(&l->slot[s].readers, 1, memory_order_release);
}

#endif
