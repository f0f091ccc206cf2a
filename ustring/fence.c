/* The asymmetric fence (ustr_fence.h): membarrier(2) registration and the
 * writer's barrier. */
#define _GNU_SOURCE /* syscall() */
#include "ustr_fence.h"

#include <linux/membarrier.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

/* ThreadSanitizer models C11's fences, not membarrier: it would report the
 * relaxed announcements as races (a reader's hazard store that a scan need
 * not see, in C11 alone). Under it the symmetric fence runs, which is what
 * it can check; the asymmetric one runs in every other build, where
 * AddressSanitizer would catch a tile or an index freed under a reader. */
#if defined(__SANITIZE_THREAD__)
#define FENCE_UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define FENCE_UNDER_TSAN 1
#endif
#endif
#ifndef FENCE_UNDER_TSAN
#define FENCE_UNDER_TSAN 0
#endif

_Atomic bool          ustr__fence_asymmetric;
static pthread_once_t fence_once = PTHREAD_ONCE_INIT;

static int
membarrier(int cmd)
{
    return (int)syscall(SYS_membarrier, cmd, 0, 0);
}

static void
fence_register(void)
{
    bool ok = !FENCE_UNDER_TSAN && !getenv("USTR_NO_MEMBARRIER") &&
              membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0;
    /* Relaxed: pthread_once() orders this before every caller's return,
     * and a reader announces only after its domain's init. */
    atomic_store_explicit(&ustr__fence_asymmetric, ok, memory_order_relaxed);
}

void
ustr_fence_init(void)
{
    pthread_once(&fence_once, fence_register);
}

/* Registering costs the kernel an RCU grace period once the process has a
 * second thread: 13-17 ms here (against 4 us with one), which every rank
 * paid under mpirun, since MPI_Init() starts threads before the first
 * table is made. Before main() the process has one thread (unless another
 * library's constructor started one, and then this is merely no earlier). */
__attribute__((constructor)) static void
fence_register_early(void)
{
    ustr_fence_init();
}

bool
ustr_fence_writer(void)
{
    return !ustr_fence_asymmetric() || membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0;
}
