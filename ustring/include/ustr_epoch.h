/* Epoch-based reclamation: free shared memory only once no reader can hold
 * a pointer to it, without readers ever taking a lock or writing a line that
 * other threads write.
 *
 * A reader brackets each access with ustr_epoch_enter() / _leave() on its
 * own record (one per thread, registered with the domain). A writer first
 * unlinks an object, so no new reader can reach it, then retires it; the
 * object is freed by a later ustr_epoch_reclaim() once every record is
 * outside or entered after the retirement.
 *
 * Why it is safe (all in C11's seq_cst total order): retire() bumps the
 * global epoch after the unlink; reclaim() scans the records after that. A
 * reader whose enter() came before the scan is seen with an old epoch and
 * protects the object; one whose enter() came after it loads the shared
 * pointer after the unlink, so it cannot reach the object. For that order
 * to exist, readers must load the first shared pointer they follow after
 * enter() with seq_cst (an acquire load may move before the seq_cst store
 * of enter(), on Arm with LDAPR), and writers must unlink with a seq_cst
 * store or exchange.
 *
 * The reader's fence, made asymmetric. A seq_cst store is a full fence
 * (xchg on x86, some 20 cycles: a third of a string lookup), paid at every
 * enter(). Where Linux offers membarrier(2) (ustr_fence.h; registered
 * before main()), enter() instead stores relaxed behind a compiler
 * barrier, and reclaim() calls membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)
 * before its scan: every running thread of the process executes a full
 * barrier at some point B during the call (a sleeping one has passed one).
 * A reader whose load of the shared pointer comes after its B sees the
 * unlink, made before the call; one whose load came before B made its
 * announcement visible by B, so the scan sees it. Readers pay nothing; a
 * reclaim pays a system call, and reclaims are rare (the lock-free index
 * tries one only once its retired arrays come to 1/8 of it: lockfree.c,
 * reclaim_due()). Without membarrier, or with USTR_NO_MEMBARRIER set in the
 * environment (tests run both), the symmetric fences above are used. */
#ifndef USTR_EPOCH_H
#define USTR_EPOCH_H

#include "ustr_fence.h"

#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/* One per reading thread; embed it at the start of the thread's own
 * state, which must be 64-byte aligned (aligned_alloc) and padded to whole
 * lines, so no other thread's writes share its cache line. Not padded
 * itself: the thread's own hot fields (its counters) may share the line. */
typedef struct ustr_epoch_rec {
    _Atomic uint64_t       active; /* 0 outside; else the epoch entered */
    struct ustr_epoch_rec *next;   /* the domain's list; guarded by its lock */
} ustr_epoch_rec;

/* Embed one in every object that will be retired. */
typedef struct ustr_epoch_node {
    struct ustr_epoch_node *next;
    uint64_t                epoch; /* retired at */
    void (*free_fn)(struct ustr_epoch_node *node, void *ctx);
    void *ctx;
} ustr_epoch_node;

typedef struct ustr_epoch {
    _Atomic uint64_t epoch; /* even, >= 2; bumped by each retire */
    pthread_mutex_t  lock;  /* guards recs and retired; take no lock inside */
    ustr_epoch_rec  *recs;
    ustr_epoch_node *retired; /* newest first */
    _Atomic uint64_t pending; /* retired, not yet freed (relaxed: stats and hints) */
} ustr_epoch;

void ustr_epoch_init(ustr_epoch *d);
/* Frees everything still retired. No reader may be inside. */
void ustr_epoch_destroy(ustr_epoch *d);

/* Adds or removes a thread's record. Its thread must be outside. */
void ustr_epoch_register(ustr_epoch *d, ustr_epoch_rec *r);
void ustr_epoch_unregister(ustr_epoch *d, ustr_epoch_rec *r);

static inline void
ustr_epoch_enter(ustr_epoch *d, ustr_epoch_rec *r)
{
    /* Acquire pairs with the seq_cst bump in ustr_epoch_retire(): a reader
     * that sees the new epoch also sees the unlink made before it. */
    uint64_t e = atomic_load_explicit(&d->epoch, memory_order_acquire);
    /* The announcement must come before the reader's loads of shared
     * pointers (see the top of this file): seq_cst, or relaxed where
     * reclaim()'s membarrier is the fence (ustr_fence.h). */
    ustr_fence_announce(&r->active, e);
}

static inline void
ustr_epoch_leave(ustr_epoch_rec *r)
{
    /* Release: the reader's accesses happen before a reclaimer that sees
     * this 0 frees what they touched. */
    atomic_store_explicit(&r->active, 0, memory_order_release);
}

/* Hands over an unlinked object; free_fn(node, ctx) runs once no reader can
 * hold it. The caller may be inside or outside its own epoch. */
void ustr_epoch_retire(ustr_epoch *d, ustr_epoch_node                          *node,
                       void (*free_fn)(ustr_epoch_node *node, void *ctx), void *ctx);

/* Frees what can be freed now; returns how many objects it freed. Never
 * waits for a reader. */
size_t ustr_epoch_reclaim(ustr_epoch *d);

/* ustr_epoch_reclaim(), unless another thread holds the domain (most
 * likely reclaiming, through its system call): that pass frees what is
 * due, and queueing behind it would line every inserter up behind one
 * membarrier. 0 then. */
size_t ustr_epoch_try_reclaim(ustr_epoch *d);

#endif
