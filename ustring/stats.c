#include "ustring_internal.h"

#include <inttypes.h>

void
ustr_table_stats(ustr_table *t, ustr_stats *out)
{
    *out = (ustr_stats){.lock = t->lock};
    pthread_mutex_lock(&t->registry_lock);
    for (ustr__thread *th = t->threads; th; th = th->next) {
        /* Relaxed: a snapshot of counters their owners keep writing. */
#define ADD(name, what) out->name += atomic_load_explicit(&th->counters.name, memory_order_relaxed);
        USTR_THREAD_COUNTS(ADD)
#undef ADD
        out->threads++;
    }
    pthread_mutex_unlock(&t->registry_lock);
    if (t->lock == USTR_LOCK_LOCKFREE)
        ustr__lockfree_reclaim(t); /* a cheap moment to free retired arrays */
    /* Every insert added one distinct string, and nothing is ever removed. */
    out->strings = out->inserts;
    /* Relaxed: stats only. */
    out->capacity = atomic_load_explicit(&t->capacity, memory_order_relaxed);
    out->index_bytes = atomic_load_explicit(&t->index_bytes, memory_order_relaxed);
    out->grows = atomic_load_explicit(&t->grows, memory_order_relaxed);
}

void
ustr_stats_print(const ustr_stats *s, const char *prefix, FILE *f)
{
    double load = s->capacity ? (double)s->strings / (double)s->capacity : 0.0;
    double contended = s->lookups ? 100.0 * (double)s->contended / (double)s->lookups : 0.0;
    fprintf(f, "%slock %s, %" PRIu64 " thread(s)\n", prefix, ustr_lock_name(s->lock), s->threads);
    fprintf(f, "%slookups %" PRIu64 ", inserts %" PRIu64 ", contended %" PRIu64 " (%.2f%%)\n",
            prefix, s->lookups, s->inserts, s->contended, contended);
    fprintf(f,
            "%sstrings %" PRIu64 " in %" PRIu64 " slots (load %.2f, %" PRIu64 " grows), "
            "%.1f KiB strings, %.1f KiB index\n",
            prefix, s->strings, s->capacity, load, s->grows, (double)s->string_bytes / 1024.0,
            (double)s->index_bytes / 1024.0);
}
