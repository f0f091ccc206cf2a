/* The asymmetric fence: readers that announce what they are about to read
 * (an epoch, a hazard pointer) and then load shared state again need a full
 * fence between the store and the load, or the load may be satisfied before
 * the store is visible. A seq_cst store is that fence (xchg on x86, some 20
 * cycles), paid at every announcement. Where Linux offers membarrier(2),
 * ustr_fence_announce() instead stores relaxed behind a compiler barrier,
 * and the rare writer that must see the announcements (a reclaimer, before
 * it scans them) calls ustr_fence_writer(): during that call every running
 * thread of the process executes a full barrier at some point B (a sleeping
 * one has passed one). A reader whose load comes after its B sees what the
 * writer did before the call; one whose load came before B had made its
 * announcement visible by B, so the writer's later scan sees it. Readers pay
 * nothing; a writer pays a system call.
 *
 * Without membarrier (an old kernel, a seccomp filter), with
 * USTR_NO_MEMBARRIER in the environment (tests run both), or under
 * ThreadSanitizer (which cannot model membarrier; fence.c), announcements
 * are seq_cst stores and ustr_fence_writer() does nothing. ustr_epoch.h and the
 * texture cache's hazard pointers (texture/cache_tiles.c) use it; each argues its
 * own protocol on top. */
#ifndef USTR_FENCE_H
#define USTR_FENCE_H

#include <stdatomic.h>
#include <stdbool.h>

/* Registers for expedited membarriers, once per process; later calls do
 * nothing. Call it before the first announcement that relies on it (every
 * domain's init does). Thread-safe. A constructor in fence.c calls it
 * before main(), while the process normally has one thread: registering
 * with a second thread alive waits out an RCU grace period (13-17 ms
 * measured). So USTR_NO_MEMBARRIER must be in the environment at exec;
 * setting it from inside the program comes too late. */
void ustr_fence_init(void);

/* Whether announcements are relaxed (membarrier registered). Written once,
 * inside the first ustr_fence_init(); false until then, and the symmetric
 * fence is always safe. */
extern _Atomic bool ustr__fence_asymmetric;

static inline bool
ustr_fence_asymmetric(void)
{
    /* Relaxed: written once, before any announcement that depends on it
     * (ustr_fence_init() happens before the reader's domain exists). */
    return atomic_load_explicit(&ustr__fence_asymmetric, memory_order_relaxed);
}

/* Stores `value` into the atomic object at `obj`, ordered before the
 * caller's later loads as the protocol above needs: relaxed behind a
 * compiler barrier where the writer supplies the fence, seq_cst elsewhere. */
#define ustr_fence_announce(obj, value)                                                            \
    do {                                                                                           \
        if (ustr_fence_asymmetric()) {                                                             \
            atomic_store_explicit((obj), (value), memory_order_relaxed);                           \
            atomic_signal_fence(memory_order_seq_cst);                                             \
        } else {                                                                                   \
            atomic_store_explicit((obj), (value), memory_order_seq_cst);                           \
        }                                                                                          \
    } while (0)

/* The writer's half: after making what readers must not reach unreachable,
 * before scanning their announcements. False: the system call failed and
 * the scan proves nothing this time (try later). True and a no-op where
 * announcements are seq_cst. */
bool ustr_fence_writer(void);

#endif
