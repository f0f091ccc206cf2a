#include "ustr_spin.h"

#include <sched.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define cpu_pause() _mm_pause()
#elif defined(__aarch64__)
#define cpu_pause() __asm__ __volatile__("yield")
#else
#define cpu_pause() ((void)0)
#endif

#define BACKOFF_MAX_SPINS 64

void
ustr_backoff_wait(ustr_backoff *b)
{
    if (b->spins > BACKOFF_MAX_SPINS) {
        /* The holder may be preempted: give it our time slice. */
        sched_yield();
        return;
    }
    for (unsigned i = 0; i < b->spins; i++)
        cpu_pause();
    b->spins *= 2;
}

bool
ustr_spin_lock__slow(ustr_spin *l)
{
    ustr_backoff b = USTR_BACKOFF_INIT;
    for (;;) {
        /* Relaxed: only watching for the lock to look free; the exchange
         * below is what acquires. Reading, not writing, keeps the line
         * shared among waiters. */
        while (atomic_load_explicit(&l->held, memory_order_relaxed))
            ustr_backoff_wait(&b);
        /* Acquire pairs with the release in ustr_spin_unlock(). */
        if (!atomic_exchange_explicit(&l->held, 1, memory_order_acquire))
            return true;
    }
}
