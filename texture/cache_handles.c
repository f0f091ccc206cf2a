/* Open tiled-file handles (EXR, TIFF): each file read tile by tile keeps
 * its handle open between reads, and the least recently used ones are
 * closed to stay under tex_config.max_open_files. A closed handle is
 * reopened by the next tile read (cache_tiles.c); spilled files hold none. */
#include "texture_internal.h"

#include <stdint.h>

void
tex__handle_touch(tex_system *ts, tex__file *f)
{
    /* Relaxed: an approximate order of uses is all the cap needs. */
    uint64_t now = atomic_fetch_add_explicit(&ts->tick, 1, memory_order_relaxed);
    atomic_store_explicit(&f->handle_last_use, now, memory_order_relaxed);
}

/* The open tiled file used longest ago, other than `keep`; NULL if none. */
static tex__file *
lru_handle(tex_system *ts, const tex__file *keep)
{
    tex__file *best = NULL;
    uint64_t   best_use = UINT64_MAX;
    /* Acquire pairs with the releases in cache_files.c that publish arrays. */
    tex__file_array *a = atomic_load_explicit(&ts->files, memory_order_acquire);
    for (size_t i = 0; i <= a->mask; i++) {
        tex__file *f = atomic_load_explicit(&a->slots[i], memory_order_acquire);
        /* Relaxed: see tex__handle_touch(); a stale value only picks a worse
         * victim. Files with no handle have stopped being touched. */
        uint64_t use = f ? atomic_load_explicit(&f->handle_last_use, memory_order_relaxed) : 0;
        if (f && f != keep && use < best_use &&
            atomic_load_explicit(&f->state, memory_order_acquire) == TEX__READY &&
            f->source != TEX__SOURCE_SPILL) {
            best = f;
            best_use = use;
        }
    }
    return best;
}

void
tex__handle_close(tex_system *ts, tex__file *f)
{
    if (!tex__tiled_is_open(&f->handle))
        return;
    tex__tiled_close(&f->handle);
    /* Relaxed: as in tex__handle_touch(); parks it behind every open handle. */
    atomic_store_explicit(&f->handle_last_use, UINT64_MAX, memory_order_relaxed);
    /* Relaxed: stats only. */
    atomic_fetch_add_explicit(&ts->files_closed, 1, memory_order_relaxed);
    pthread_mutex_lock(&ts->handles_lock);
    ts->open_handles--;
    pthread_mutex_unlock(&ts->handles_lock);
}

void
tex__handle_opened(tex_system *ts, tex__file *f)
{
    pthread_mutex_lock(&ts->handles_lock);
    unsigned open = ++ts->open_handles;
    pthread_mutex_unlock(&ts->handles_lock);
    tex__handle_touch(ts, f);
    for (int tries = 0; open > ts->cfg.max_open_files && tries < 8; tries++) {
        tex__file *victim = lru_handle(ts, f);
        if (!victim)
            break;
        /* Try only: we hold f->lock, and waiting for another file's lock
         * while holding ours could deadlock with a thread doing the same.
         * A busy victim is in use: count it as used now, and look on. */
        if (pthread_mutex_trylock(&victim->lock) != 0) {
            tex__handle_touch(ts, victim);
            continue;
        }
        tex__handle_close(ts, victim);
        pthread_mutex_unlock(&victim->lock);
        pthread_mutex_lock(&ts->handles_lock);
        open = ts->open_handles;
        pthread_mutex_unlock(&ts->handles_lock);
    }
}
