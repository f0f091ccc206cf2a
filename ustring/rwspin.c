#include "ustr_rwspin.h"
#include "ustr_spin.h"

bool
ustr_rwspin_read_lock__slow(ustr_rwspin *l)
{
    /* The fast path announced us while a writer held or waited: withdraw.
     * Relaxed: we read nothing under the lock, so there is nothing to order. */
    atomic_fetch_sub_explicit(&l->state, USTR_RWSPIN_READER, memory_order_relaxed);
    ustr_backoff b = USTR_BACKOFF_INIT;
    for (;;) {
        /* Relaxed: just waiting for writers to be gone; the add below is
         * the acquire that counts. */
        while (atomic_load_explicit(&l->state, memory_order_relaxed) & USTR_RWSPIN_WRITER_BITS)
            ustr_backoff_wait(&b);
        /* Acquire pairs with the writer's release in write_unlock(). */
        uint64_t s = atomic_fetch_add_explicit(&l->state, USTR_RWSPIN_READER, memory_order_acquire);
        if ((s & USTR_RWSPIN_WRITER_BITS) == 0)
            return true;
        /* Relaxed: withdrawing again; we read nothing under the lock. */
        atomic_fetch_sub_explicit(&l->state, USTR_RWSPIN_READER, memory_order_relaxed);
    }
}

bool
ustr_rwspin_write_lock__slow(ustr_rwspin *l)
{
    /* Announce the wait first: from now on arriving readers stay out, so the
     * readers inside drain and we get in. Relaxed: the announcement orders
     * nothing; the compare-exchange below acquires. */
    atomic_fetch_add_explicit(&l->state, USTR_RWSPIN_WAITING, memory_order_relaxed);
    ustr_backoff b = USTR_BACKOFF_INIT;
    for (;;) {
        /* Relaxed: only looking; the compare-exchange below acquires. */
        uint64_t s = atomic_load_explicit(&l->state, memory_order_relaxed);
        if ((s & (USTR_RWSPIN_WRITER | ~USTR_RWSPIN_WRITER_BITS)) == 0) {
            /* No holder: trade our waiting mark for the writer bit. Acquire
             * pairs with the releases of the readers and writer before us. */
            uint64_t held = s - USTR_RWSPIN_WAITING + USTR_RWSPIN_WRITER;
            if (atomic_compare_exchange_weak_explicit(&l->state, &s, held, memory_order_acquire,
                                                      memory_order_relaxed))
                return true;
            continue;
        }
        ustr_backoff_wait(&b);
    }
}
