/* A reader/writer spin lock that prefers writers.
 *
 * Many readers may hold it together; a writer holds it alone. Once a writer
 * waits, arriving readers wait too, so a steady stream of readers cannot
 * starve an insert. Waiting spins briefly and then yields (see ustr_spin.h),
 * so 32 threads on 2 cores still make progress when a holder is preempted.
 *
 * One 64-bit word:
 *   bit 0        a writer holds the lock
 *   bits 1..31   writers waiting
 *   bits 32..63  readers holding the lock (or briefly announcing themselves)
 * A reader costs one atomic add to take it and one to release it. */
#ifndef USTR_RWSPIN_H
#define USTR_RWSPIN_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct ustr_rwspin {
    _Atomic uint64_t state;
} ustr_rwspin;

#define USTR_RWSPIN_INIT                                                                           \
    {                                                                                              \
        0                                                                                          \
    }

#define USTR_RWSPIN_WRITER      ((uint64_t)1)
#define USTR_RWSPIN_WAITING     ((uint64_t)2)
#define USTR_RWSPIN_WRITER_BITS ((uint64_t)0xffffffffu) /* held or waiting */
#define USTR_RWSPIN_READER      ((uint64_t)1 << 32)

bool ustr_rwspin_read_lock__slow(ustr_rwspin *l);
bool ustr_rwspin_write_lock__slow(ustr_rwspin *l);

/* Takes the lock shared; returns true when it had to wait. */
static inline bool
ustr_rwspin_read_lock(ustr_rwspin *l)
{
    /* Acquire pairs with the release in ustr_rwspin_write_unlock(): a reader
     * that gets in sees everything the last writer published. */
    uint64_t s = atomic_fetch_add_explicit(&l->state, USTR_RWSPIN_READER, memory_order_acquire);
    if ((s & USTR_RWSPIN_WRITER_BITS) == 0)
        return false;
    return ustr_rwspin_read_lock__slow(l);
}

static inline void
ustr_rwspin_read_unlock(ustr_rwspin *l)
{
    /* Release: the reader's loads are done before a writer can get in. */
    atomic_fetch_sub_explicit(&l->state, USTR_RWSPIN_READER, memory_order_release);
}

/* Takes the lock exclusive; returns true when it had to wait. */
static inline bool
ustr_rwspin_write_lock(ustr_rwspin *l)
{
    uint64_t idle = 0;
    /* Acquire pairs with the releases of the previous holders (readers'
     * unlocks and the last writer's unlock). */
    if (atomic_compare_exchange_strong_explicit(&l->state, &idle, USTR_RWSPIN_WRITER,
                                                memory_order_acquire, memory_order_relaxed))
        return false;
    return ustr_rwspin_write_lock__slow(l);
}

static inline void
ustr_rwspin_write_unlock(ustr_rwspin *l)
{
    /* Release publishes the writer's changes to the next reader or writer. */
    atomic_fetch_sub_explicit(&l->state, USTR_RWSPIN_WRITER, memory_order_release);
}

#endif
