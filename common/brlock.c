/* common/brlock.c - see brlock.h */
#include "common/brlock.h"

#include <string.h>

void brlock_init(struct brlock *l)
{
	for (unsigned i = 0; i < BRLOCK_SLOTS; i++)
		atomic_init(&l->slot[i].readers, 0);
	atomic_init(&l->writer, 0);
	pthread_mutex_init(&l->wmu, NULL);
}

void brlock_destroy(struct brlock *l)
{
	pthread_mutex_destroy(&l->wmu);
}

unsigned brlock_my_slot(void)
{
	static atomic_uint next;
	static _Thread_local unsigned mine; /* slot + 1; 0: none yet */

	if (!mine)
		mine = atomic_fetch_add_explicit(&next, 1, memory_order_relaxed) % BRLOCK_SLOTS + 1;
	return mine - 1;
}

void brlock_rdlock_slow(struct brlock *l, unsigned s)
{
	for (;;) {
		/* a writer is in or coming: out of its way until it is done */
		atomic_fetch_sub(&l->slot[s].readers, 1);
		pthread_mutex_lock(&l->wmu);
		pthread_mutex_unlock(&l->wmu);
		atomic_fetch_add(&l->slot[s].readers, 1);
		if (!atomic_load(&l->writer))
			return;
	}
}

void brlock_wrlock(struct brlock *l)
{
	pthread_mutex_lock(&l->wmu);
	atomic_store(&l->writer, 1);
	for (unsigned i = 0; i < BRLOCK_SLOTS; i++)
		for (unsigned spin = 0; atomic_load(&l->slot[i].readers) != 0; spin++)
			if (spin >= 100)
				sched_yield(); /* a reader preempted inside */
}

void brlock_wrunlock(struct brlock *l)
{
	atomic_store(&l->writer, 0);
	pthread_mutex_unlock(&l->wmu);
}
