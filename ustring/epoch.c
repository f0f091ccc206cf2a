#include "ustr_epoch.h"

#include <stddef.h>
#include <stdlib.h>

void
ustr_epoch_init(ustr_epoch *d)
{
    ustr_fence_init();
    atomic_init(&d->epoch, 2);
    pthread_mutex_init(&d->lock, NULL);
    d->recs = NULL;
    d->retired = NULL;
    atomic_init(&d->pending, 0);
}

static void
free_list(ustr_epoch_node *n)
{
    while (n) {
        ustr_epoch_node *next = n->next;
        n->free_fn(n, n->ctx);
        n = next;
    }
}

void
ustr_epoch_destroy(ustr_epoch *d)
{
    free_list(d->retired);
    d->retired = NULL;
    pthread_mutex_destroy(&d->lock);
}

void
ustr_epoch_register(ustr_epoch *d, ustr_epoch_rec *r)
{
    atomic_init(&r->active, 0);
    pthread_mutex_lock(&d->lock);
    r->next = d->recs;
    d->recs = r;
    pthread_mutex_unlock(&d->lock);
}

void
ustr_epoch_unregister(ustr_epoch *d, ustr_epoch_rec *r)
{
    pthread_mutex_lock(&d->lock);
    for (ustr_epoch_rec **link = &d->recs; *link; link = &(*link)->next) {
        if (*link == r) {
            *link = r->next;
            break;
        }
    }
    pthread_mutex_unlock(&d->lock);
}

/* Detaches the retired nodes no reader can hold; called with d->lock held.
 * Returns them as a list, for the caller to free outside the lock. */
static ustr_epoch_node *
detach_safe(ustr_epoch *d, size_t *count)
{
    *count = 0;
    /* The writer's half of the asymmetric fence (the top of ustr_epoch.h,
     * ustr_fence.h); if it fails, nothing is proved free this time. */
    if (!ustr_fence_writer())
        return NULL;
    uint64_t oldest = UINT64_MAX;
    for (ustr_epoch_rec *r = d->recs; r; r = r->next) {
        /* seq_cst: the scan of the proof in ustr_epoch.h; its acquire part
         * pairs with the release in ustr_epoch_leave(). */
        uint64_t e = atomic_load_explicit(&r->active, memory_order_seq_cst);
        if (e && e < oldest)
            oldest = e;
    }
    ustr_epoch_node *safe = NULL;
    for (ustr_epoch_node **link = &d->retired; *link;) {
        ustr_epoch_node *n = *link;
        if (n->epoch <= oldest) {
            *link = n->next;
            n->next = safe;
            safe = n;
            ++*count;
        } else {
            link = &n->next;
        }
    }
    return safe;
}

void
ustr_epoch_retire(ustr_epoch *d, ustr_epoch_node                          *node,
                  void (*free_fn)(ustr_epoch_node *node, void *ctx), void *ctx)
{
    node->free_fn = free_fn;
    node->ctx = ctx;
    pthread_mutex_lock(&d->lock);
    /* seq_cst: after the caller's unlink and before any later scan, in the
     * total order of the proof. */
    node->epoch = atomic_fetch_add_explicit(&d->epoch, 2, memory_order_seq_cst) + 2;
    node->next = d->retired;
    d->retired = node;
    pthread_mutex_unlock(&d->lock);
    /* Relaxed: a count for stats and hints only. */
    atomic_fetch_add_explicit(&d->pending, 1, memory_order_relaxed);
}

/* Frees what detach_safe() gives, releasing d->lock (the caller took it). */
static size_t
reclaim_locked(ustr_epoch *d)
{
    size_t           n;
    ustr_epoch_node *safe = detach_safe(d, &n);
    pthread_mutex_unlock(&d->lock);
    free_list(safe);
    /* Relaxed: as in retire. */
    if (n)
        atomic_fetch_sub_explicit(&d->pending, n, memory_order_relaxed);
    return n;
}

size_t
ustr_epoch_reclaim(ustr_epoch *d)
{
    pthread_mutex_lock(&d->lock);
    return reclaim_locked(d);
}

size_t
ustr_epoch_try_reclaim(ustr_epoch *d)
{
    return pthread_mutex_trylock(&d->lock) == 0 ? reclaim_locked(d) : 0;
}
