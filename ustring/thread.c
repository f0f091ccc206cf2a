/* Per-thread state: each thread that uses a table gets its own counters,
 * arena and epoch record, found through a small thread-local cache keyed by
 * the table's id (ids are never reused, so an entry for a destroyed table can
 * never match a new one). */
#include "ustring_internal.h"

_Thread_local ustr__tls_entry ustr__tls[USTR__TLS_ENTRIES];
static _Thread_local unsigned tls_victim;
static _Thread_local char     tls_owner; /* its address names this thread */

static ustr__thread *
find_owned(ustr_table *t)
{
    for (ustr__thread *th = t->threads; th; th = th->next) {
        if (th->owner == &tls_owner) {
            /* Acquire pairs with the release that ends every intern call:
             * a record taken over from an exited thread comes with all
             * that thread wrote to its arena and counters. */
            (void)atomic_load_explicit(&th->counters.lookups, memory_order_acquire);
            return th;
        }
    }
    return NULL;
}

static ustr__thread *
thread_new(ustr_table *t)
{
    void         *raw;
    ustr__thread *th = ustr__lines_alloc(t, sizeof *th, &raw);
    if (!th)
        return NULL;
    th->raw = raw;
    th->owner = &tls_owner;
    if (t->lock == USTR_LOCK_LOCKFREE)
        ustr_epoch_register(&t->lf.epochs, &th->rec);
    th->next = t->threads;
    t->threads = th;
    return th;
}

ustr__thread *
ustr__thread_register(ustr_table *t)
{
    pthread_mutex_lock(&t->registry_lock);
    /* A thread whose cache evicted this table has a state here already; a
     * new thread may also inherit the state of an exited one whose
     * thread-local lived at the same address, which is harmless: the dead
     * thread writes it no more. */
    ustr__thread *th = find_owned(t);
    if (!th)
        th = thread_new(t);
    pthread_mutex_unlock(&t->registry_lock);
    if (th) {
        ustr__tls[tls_victim] = (ustr__tls_entry){t->id, th};
        tls_victim = (tls_victim + 1) % USTR__TLS_ENTRIES;
    }
    return th;
}

void
ustr__threads_free(ustr_table *t)
{
    ustr__thread *th = t->threads;
    while (th) {
        ustr__thread *next = th->next;
        ustr__arena_free(t, &th->arena);
        ustr__lines_free(t, th->raw, sizeof *th);
        th = next;
    }
    t->threads = NULL;
}
