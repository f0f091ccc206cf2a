/* Spin locks that behave when threads outnumber cores.
 *
 * A waiter spins a short, growing number of pause instructions, then yields
 * its time slice: at -t 32 on 2 cores the lock holder may be preempted, and a
 * waiter that kept spinning would burn the very slice the holder needs.
 *
 * Every lock call returns whether it had to wait, so callers can count
 * contended acquisitions without a second atomic. */
#ifndef USTR_SPIN_H
#define USTR_SPIN_H

#include <stdatomic.h>
#include <stdbool.h>

/* Waiting: call ustr_backoff_wait() once per failed look at the lock. */
typedef struct ustr_backoff {
    unsigned spins; /* pauses in the next round; past the limit, yield */
} ustr_backoff;

#define USTR_BACKOFF_INIT                                                                          \
    {                                                                                              \
        1                                                                                          \
    }

/* Pauses 1, 2, 4 ... 64 times, then yields on every later call. */
void ustr_backoff_wait(ustr_backoff *b);

/* A test-and-test-and-set lock: one word, no fairness. */
typedef struct ustr_spin {
    atomic_uint held; /* 1 while held */
} ustr_spin;

#define USTR_SPIN_INIT                                                                             \
    {                                                                                              \
        0                                                                                          \
    }

bool ustr_spin_lock__slow(ustr_spin *l);

/* Takes the lock; returns true when it had to wait. */
static inline bool
ustr_spin_lock(ustr_spin *l)
{
    /* Acquire pairs with the release in ustr_spin_unlock(): the new holder
     * sees everything the previous holder wrote. */
    if (!atomic_exchange_explicit(&l->held, 1, memory_order_acquire))
        return false;
    return ustr_spin_lock__slow(l);
}

static inline void
ustr_spin_unlock(ustr_spin *l)
{
    /* Release publishes the critical section to the next acquirer. */
    atomic_store_explicit(&l->held, 0, memory_order_release);
}

#endif
