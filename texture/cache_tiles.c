/* The tile cache: tiles load on first touch, from the spill file (untiled
 * sources, decoded once) or from a tiled EXR or TIFF; a clock evicts cold tiles
 * when the cache is over its cap; an evicted tile is freed once no thread's
 * hazard pointer names it. The cap is shared with decodes that hold more
 * than rows (tex__decode_reserve()): the tiles get what they leave.
 *
 * Write-back: a decode whose tiles all fit in what the cache has free
 * puts them straight into it (tex__tiles_keep()) instead of writing them
 * to the spill file to be read back on first touch; a kept tile is written
 * to the spill file only if the clock evicts it, before its slot is
 * cleared, so a miss on it always finds it there. The write is done with
 * the cache lock released (evict_unlock()): the tile, off the ring and
 * marked leaving, still serves lookups from its slot meanwhile.
 *
 * Hazard pointers, why safe (C11 seq_cst total order): a reader stores the
 * tile in its hazard pointer, then loads the slot again and uses the tile
 * only if it is still there; the evictor clears the slot, then scans the
 * hazard pointers. If the reader's second load came before the clear, its
 * hazard store came before the scan, which sees it; if after, it saw the
 * slot cleared and did not use the tile.
 *
 * The reader's fence, made asymmetric (ustr_fence.h). The store-load order
 * above costs a full fence (xchg) at every tile fetch, one to sixteen per
 * lookup. Where membarrier(2) is registered, the reader stores its hazard
 * relaxed behind a compiler barrier, and the reclaimer calls
 * ustr_fence_writer() after the clears and before its scan: every running
 * reader executes a full barrier at some point B during that call. A reader
 * whose second load comes after its B sees the clear (made before the
 * call) and drops the tile; one whose load came before B had its hazard
 * visible by B, so the scan, after the call, sees it and keeps the tile.
 * A reclaim then costs a system call, so retired tiles are scanned in
 * batches: once there are more of them than threads (reclaim_locked()). */
#include "tex_io_internal.h"
#include "texture_internal.h"
#include "ustr_fence.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef __GLIBC__    /* defined by the headers above */
#include <malloc.h> /* malloc_trim() */
#endif
#if defined(__x86_64__)
#include <immintrin.h>
#endif

/* ---- the spill file ---- */

tex_result
tex__cache_init(tex_system *ts, char err[TEX_ERR_LEN])
{
    const char *dir = getenv("TMPDIR");
    char        path[4096];
    snprintf(path, sizeof path, "%s/rt-tiles-XXXXXX", dir && *dir ? dir : "/tmp");
    ustr_fence_init(); /* before any reader announces a hazard */
    ts->spill_fd = mkstemp(path);
    if (ts->spill_fd < 0) {
        if (err)
            snprintf(err, TEX_ERR_LEN, "cannot make the tile spill file in %.150s: %s",
                     dir && *dir ? dir : "/tmp", strerror(errno));
        return TEX_ERR_OPEN;
    }
    unlink(path); /* anonymous: gone with the process, however it ends */
    fcntl(ts->spill_fd, F_SETFD, FD_CLOEXEC); /* not inherited by children */
    return TEX_OK;
}

static void
tile_free(tex_system *ts, tex__tile *t)
{
    /* Relaxed: a count; the hazard scan (or never having been published)
     * ordered the free. */
    atomic_fetch_sub_explicit(&ts->memory, t->bytes, memory_order_relaxed);
    free(t);
}

void
tex__tile_discard(tex_system *ts, tex__tile *t)
{
    if (t)
        tile_free(ts, t);
}

void
tex__cache_free(tex_system *ts)
{
    while (ts->retired) {
        tex__tile *next = ts->retired->retired_next;
        tile_free(ts, ts->retired);
        ts->retired = next;
    }
    tex__tile *t = ts->hand;
    while (t) {
        tex__tile *next = t->ring_next == ts->hand ? NULL : t->ring_next;
        free(t);
        t = next;
    }
    if (ts->spill_fd >= 0)
        close(ts->spill_fd);
    pthread_mutex_destroy(&ts->cache_lock);
    pthread_mutex_destroy(&ts->handles_lock);
}

uint64_t
tex__spill_reserve(tex_system *ts, uint64_t bytes)
{
    /* Relaxed: reserves a range; pwrite to disjoint ranges needs no order. */
    return atomic_fetch_add_explicit(&ts->spill_size, bytes, memory_order_relaxed);
}

tex_result
tex__spill_write(tex_system *ts, const void *data, size_t bytes, uint64_t offset,
                 char err[TEX_ERR_LEN])
{
    if (!tex__pio_all(ts->spill_fd, true, (void *)data, bytes, offset)) {
        snprintf(err, TEX_ERR_LEN, "cannot write the tile spill file: %s",
                 errno ? strerror(errno) : "no space");
        return TEX_ERR_WRITE;
    }
    return TEX_OK;
}

/* ---- a file's levels of tile slots ---- */

tex_result
tex__levels_init(tex__file *f, const tex__tiled *h, uint32_t nlevels, uint32_t tw, uint32_t th,
                 char err[TEX_ERR_LEN])
{
    f->info.nlevels = nlevels;
    f->info.tile_width = tw;
    f->info.tile_height = th;
    f->tile_bytes = (size_t)tw * th * f->info.nchannels * tex_type_size(f->info.type);
    if (tw > 1 && th > 1 && !(tw & (tw - 1)) && !(th & (th - 1))) {
        f->tile_shift_x = (uint8_t)__builtin_ctz(tw);
        f->tile_shift_y = (uint8_t)__builtin_ctz(th);
    }
    f->levels = calloc(nlevels, sizeof *f->levels);
    if (!f->levels)
        goto nomem;
    for (uint32_t l = 0; l < nlevels; l++) {
        tex__level *lv = &f->levels[l];
        lv->width = f->info.width >> l ? f->info.width >> l : 1;
        lv->height = f->info.height >> l ? f->info.height >> l : 1;
        if (h && !tex__tiled_level_size(h, l, &lv->width, &lv->height)) {
            snprintf(err, TEX_ERR_LEN, "no size for MIP level %u", l);
            return TEX_ERR_CORRUPT;
        }
        lv->tiles_x = (lv->width + tw - 1) / tw;
        lv->tiles_y = (lv->height + th - 1) / th;
        lv->slots = calloc((size_t)lv->tiles_x * lv->tiles_y, sizeof lv->slots[0]);
        if (!lv->slots)
            goto nomem;
    }
    return TEX_OK;
nomem:
    snprintf(err, TEX_ERR_LEN, "out of memory for the tile table");
    return TEX_ERR_NOMEM;
}

/* ---- loading ---- */

/* Whether a tiled file reopened (f->handle) has the shape f was sized for,
 * every level's size included (a TIFF's levels may round either way). */
static bool
same_shape(const tex__file *f, const tex__tiled_info *info)
{
    if (info->width != f->info.width || info->height != f->info.height ||
        info->nchannels != f->info.nchannels || info->type != f->info.type ||
        info->tile_width != f->info.tile_width || info->tile_height != f->info.tile_height ||
        info->nlevels != f->info.nlevels)
        return false;
    for (uint32_t l = 0; l < info->nlevels; l++) {
        uint32_t w, h;
        if (!tex__tiled_level_size(&f->handle, l, &w, &h) || w != f->levels[l].width ||
            h != f->levels[l].height)
            return false;
    }
    return true;
}

/* The texel bytes tile `index` of level `level` holds. A tile of a file
 * decoded whole holds only the rows its level covers: no lookup reads
 * below a level's last row (a tap's texels are read in one tile only when
 * all four lie inside the level, in_one_tile() in lookup_sample.c; any
 * other texel is wrapped or clamped into it first), and a small file's
 * levels below a tile's height would each take a whole tile, allocated,
 * zeroed and faulted in for rows nobody reads. A tiled file's readers
 * fill whole tiles: those stay whole. */
static size_t
tile_texel_bytes(const tex__file *f, uint32_t level, uint32_t index)
{
    if (f->source != TEX__SOURCE_SPILL)
        return f->tile_bytes;
    const tex__level *lv = &f->levels[level];
    uint32_t          th = f->info.tile_height, y0 = index / lv->tiles_x * th;
    return (size_t)(lv->height - y0 < th ? lv->height - y0 : th) * (f->tile_bytes / th);
}

/* Where tile `index` of a level lies in the spill file; it is read back
 * and written back (spill_kept()) as its tile_texel_bytes(), the level's
 * rows, whatever tiles_write() in cache_cut.c wrote below them. */
static uint64_t
spill_at(const tex__file *f, uint32_t level, uint32_t index)
{
    return f->levels[level].spill_offset + (uint64_t)index * f->tile_bytes;
}

/* A tile of an untiled file from the spill file, as the cache holds it
 * (colour divided by alpha already). */
static bool
spill_read(tex_system *ts, const tex__file *f, uint32_t level, uint32_t index, unsigned char *out,
           char err[TEX_ERR_LEN])
{
    size_t   bytes = tile_texel_bytes(f, level, index);
    uint64_t at = spill_at(f, level, index);
    /* Relaxed: spill_kept() stored it before the seq_cst clear of the slot
     * this miss found empty by an acquire load (protect()), and every clear
     * since came later under the cache lock. */
    int lost = atomic_load_explicit(&f->spill_errno, memory_order_relaxed);
    if (lost) {
        snprintf(err, TEX_ERR_LEN, "cannot write the tile spill file: %s", strerror(lost));
        return false;
    }
    if (!tex__pio_all(ts->spill_fd, false, out, bytes, at)) {
        snprintf(err, TEX_ERR_LEN, "cannot read the tile spill file: %s",
                 errno ? strerror(errno) : "unexpected end");
        return false;
    }
    return true;
}

/* A kept tile into the spill file as it leaves the cache, before its slot
 * is cleared: a miss on it then reads it back. Outside the cache lock (a
 * batch of evictions may write tens of megabytes); the tile is off the
 * clock ring and marked leaving, so nobody else touches it but readers.
 * If the write fails the tile goes all the same, so that the cap holds,
 * and its file breaks at its next miss, reported then (spill_read()), as
 * a failed write at decode breaks the file being decoded. */
static void
spill_kept(tex_system *ts, tex_thread *tc, tex__tile *t)
{
    tex__file *f = t->file;
    size_t     bytes = tile_texel_bytes(f, t->level, t->index);
    uint64_t   at = spill_at(f, t->level, t->index);
    errno = 0;
    if (!tex__pio_all(ts->spill_fd, true, t->texels, bytes, at))
        /* Relaxed: published by the slot's clear (spill_read() says how). */
        atomic_store_explicit(&f->spill_errno, errno ? errno : ENOSPC, memory_order_relaxed);
    tex__count(&tc->counters.tiles_spilled, 1);
}

static bool
read_texels(tex_system *ts, tex_thread *tc, tex__file *f, uint32_t level, uint32_t index, void *out,
            char err[TEX_ERR_LEN])
{
    const tex__level *lv = &f->levels[level];
    if (f->source == TEX__SOURCE_SPILL) {
        if (!spill_read(ts, f, level, index, out, err))
            return false;
    } else {
        pthread_mutex_lock(&f->lock);
        tex_result r = TEX_OK;
        /* Relaxed: f->lock orders it (tex__file_break() sets it under the
         * lock). A broken file is not opened again: its handle was closed. */
        if (atomic_load_explicit(&f->state, memory_order_relaxed) == TEX__BROKEN) {
            snprintf(err, TEX_ERR_LEN, "broken since an earlier read");
            r = TEX_ERR_CORRUPT;
        } else if (!tex__tiled_is_open(&f->handle)) {
            tex__tiled_info info;
            tex__read_from  src;
            r = tex__read_open(ts, f, &src, err);
            if (r == TEX_OK)
                r = tex__tiled_open(f->source, src.path, &f->handle, &info, err);
            tex__read_close(&src);
            /* The file may have been replaced (maketx renames over it):
             * its tiles must still fit what we sized for. */
            if (r == TEX_OK && !same_shape(f, &info)) {
                tex__tiled_close(&f->handle);
                snprintf(err, TEX_ERR_LEN, "changed on disk since it was opened");
                r = TEX_ERR_CORRUPT;
            }
            if (r == TEX_OK) {
                tex__count(&tc->counters.files_opened, 1);
                tex__handle_opened(ts, f);
            }
        }
        if (r == TEX_OK) {
            tex__handle_touch(ts, f);
            r = tex__tiled_read_tile(&f->handle, level, index % lv->tiles_x, index / lv->tiles_x,
                                     out, err);
        }
        pthread_mutex_unlock(&f->lock);
        if (r != TEX_OK)
            return false;
    }
    tex__count(&tc->counters.bytes_read, tile_texel_bytes(f, level, index));
    return true;
}

/* What the tiles may take: the cap less what decodes hold. */
static size_t
tiles_cap(tex_system *ts)
{
    /* Relaxed: written under decode_lock, read here under the cache lock.
     * A decode that charges more takes the cache lock after its store and
     * evicts to the new value itself (tex__decode_reserve()), so the
     * lock's release and acquire order the store before every eviction
     * that follows; one that ran before it was evicting for the old
     * charge anyway. A stale value after a release only evicts early. */
    size_t held = atomic_load_explicit(&ts->decode_reserved, memory_order_relaxed);
    return held < ts->max_memory ? ts->max_memory - held : 0;
}

/* The clock ring, under the cache lock: a tile joins just behind the hand
 * (the last the hand reaches), and leaves from anywhere. */
static void
ring_insert(tex_system *ts, tex__tile *t)
{
    if (ts->hand) {
        t->ring_next = ts->hand;
        t->ring_prev = ts->hand->ring_prev;
        t->ring_prev->ring_next = t;
        ts->hand->ring_prev = t;
    } else {
        t->ring_next = t->ring_prev = ts->hand = t;
    }
}

static void
ring_remove(tex_system *ts, tex__tile *t)
{
    if (t->ring_next == t) {
        ts->hand = NULL;
        return;
    }
    t->ring_prev->ring_next = t->ring_next;
    t->ring_next->ring_prev = t->ring_prev;
    if (ts->hand == t)
        ts->hand = t->ring_next;
}

/* Where a tile in the cache sits. */
static tex__slot *
slot_of(const tex__tile *t)
{
    return &t->file->levels[t->level].slots[t->index];
}

/* A tile out of its slot and onto the retired list; cache lock held. */
static void
retire_locked(tex_system *ts, tex__tile *t)
{
    /* seq_cst: the clear of the proof at the top. */
    atomic_store_explicit(&slot_of(t)->tile, NULL, memory_order_seq_cst);
    t->retired_next = ts->retired;
    ts->retired = t;
}

/* Evicts cold tiles until resident memory is under the cap; cache lock
 * held. A kept tile not yet in the spill file is not retired here but
 * marked leaving and put on *leaving, still in its slot, for
 * evict_unlock() to write back outside the lock. */
static void
evict_locked(tex_system *ts, tex_thread *tc, tex__tile **leaving)
{
    size_t cap = tiles_cap(ts);
    /* Relaxed: counts; the cache lock orders the ring. */
    while (ts->hand && atomic_load_explicit(&ts->resident, memory_order_relaxed) > cap) {
        tex__tile *t = ts->hand;
        ts->hand = t->ring_next;
        /* Relaxed: the reference bit is a hint; a reader racing with us at
         * worst keeps a tile one more round or loses it one round early. */
        _Atomic bool *used = &slot_of(t)->used;
        if (atomic_load_explicit(used, memory_order_relaxed)) {
            atomic_store_explicit(used, false, memory_order_relaxed);
            continue;
        }
        ring_remove(ts, t);
        atomic_fetch_sub_explicit(&ts->resident, t->bytes, memory_order_relaxed);
        tex__count(&tc->counters.tiles_evicted, 1);
        /* Relaxed: a hint for tex__cache_reserve(), set once. */
        atomic_store_explicit(&ts->evicting, true, memory_order_relaxed);
        if (t->unspilled) {
            t->leaving = true;
            t->retired_next = *leaving; /* its link until it is retired */
            *leaving = t;
        } else {
            retire_locked(ts, t);
        }
    }
}

/* Frees the retired tiles no hazard pointer names; cache lock held. Scans
 * (unless `every`) only once more tiles are retired than there are
 * threads, so that each scan's fence (a system call where it is
 * asymmetric) pays for several tiles; each thread's hazard holds at most
 * one, so at most twice as many tiles as threads stay retired, beyond the
 * cap. */
static void
reclaim_locked(tex_system *ts, bool every)
{
    if (!ts->retired)
        return;
    pthread_mutex_lock(&ts->threads_lock);
    size_t nretired = 0, nthreads = 0;
    for (tex__tile *t = ts->retired; t; t = t->retired_next)
        nretired++;
    for (tex_thread *tc = ts->threads; tc; tc = tc->next)
        nthreads++;
    /* The readers' half of the fence (see the top); if it fails, nothing
     * is proved free this time. */
    if ((nretired <= nthreads && !every) || !ustr_fence_writer()) {
        pthread_mutex_unlock(&ts->threads_lock);
        return;
    }
    for (tex__tile **link = &ts->retired; *link;) {
        tex__tile *t = *link;
        bool       held = false;
        for (tex_thread *tc = ts->threads; tc && !held; tc = tc->next)
            /* seq_cst: the scan of the proof at the top. */
            held = atomic_load_explicit(&tc->hazard, memory_order_seq_cst) == t;
        if (held) {
            link = &t->retired_next;
        } else {
            *link = t->retired_next;
            tile_free(ts, t);
        }
    }
    pthread_mutex_unlock(&ts->threads_lock);
}

/* Evicts down to the cap and reclaims (every retired tile if `every`),
 * then unlocks the cache lock the caller holds; kept tiles the clock chose
 * are written back with the lock released, then retired under it again. */
static void
evict_unlock(tex_system *ts, tex_thread *tc, bool every)
{
    tex__tile *leaving = NULL;
    evict_locked(ts, tc, &leaving);
    reclaim_locked(ts, every && !leaving);
    pthread_mutex_unlock(&ts->cache_lock);
    if (!leaving)
        return;
    for (tex__tile *t = leaving; t; t = t->retired_next)
        spill_kept(ts, tc, t);
    pthread_mutex_lock(&ts->cache_lock);
    while (leaving) {
        tex__tile *next = leaving->retired_next;
        retire_locked(ts, leaving);
        leaving = next;
    }
    reclaim_locked(ts, every);
    pthread_mutex_unlock(&ts->cache_lock);
}

static void
account(tex_system *ts, size_t bytes)
{
    /* Relaxed: counters; the peak is a max taken racily but never lost. */
    size_t now = atomic_fetch_add_explicit(&ts->memory, bytes, memory_order_relaxed) + bytes;
    size_t peak = atomic_load_explicit(&ts->peak_memory, memory_order_relaxed);
    while (now > peak &&
           !atomic_compare_exchange_weak_explicit(&ts->peak_memory, &peak, now,
                                                  memory_order_relaxed, memory_order_relaxed))
        ;
}

/* Bytes of tile `index` of a level, header included, as allocated. */
static size_t
tile_size(const tex__file *f, uint32_t level, uint32_t index)
{
    return (sizeof(tex__tile) + tile_texel_bytes(f, level, index) + 15) & ~(size_t)15;
}

uint64_t
tex__tiles_new(tex_system *ts, tex__file *f, uint32_t level, uint32_t first, uint32_t n,
               tex__tile **tiles)
{
    uint64_t bytes = 0;
    for (uint32_t i = 0; i < n; i++) {
        size_t size = tile_size(f, level, first + i);
        if (!(tiles[i] = aligned_alloc(16, size))) {
            while (i > 0) /* not counted yet: freed as they came */
                free(tiles[--i]);
            memset(tiles, 0, n * sizeof *tiles);
            return 0;
        }
        *tiles[i] = (tex__tile){.file = f, .level = level, .index = first + i, .bytes = size};
        bytes += size;
    }
    /* Counted once for the row: each count is a locked instruction, which
     * waits for every store before it, here the tiles' stores to fresh
     * memory. */
    account(ts, bytes);
    return bytes;
}

tex__tile *
tex__tile_new(tex_system *ts, tex__file *f, uint32_t level, uint32_t index)
{
    tex__tile *t;
    return tex__tiles_new(ts, f, level, index, 1, &t) ? t : NULL;
}

uint64_t
tex__cache_reserve(tex_system *ts, const tex__file *f)
{
    uint64_t need = 0; /* every row of tiles but the last alike, then the last */
    for (uint32_t l = 0; l < f->info.nlevels; l++) {
        const tex__level *lv = &f->levels[l];
        uint32_t          last = (lv->tiles_y - 1) * lv->tiles_x;
        need += (uint64_t)last * tile_size(f, l, 0) + (uint64_t)lv->tiles_x * tile_size(f, l, last);
    }
    size_t cap = tiles_cap(ts);
    /* Once the clock has had to evict, the cache is full of tiles lookups
     * want: a new file's tiles, most of which no lookup may touch (its MIP
     * levels, the parts out of view), would only push those out and be
     * written back themselves, so from then on decodes spill (a render of
     * the many-textures scene under --max-memory-mb 16 wrote back nine in
     * ten of the tiles it kept, and ran 8% slower than spilling them). A
     * hint, read relaxed: a decode that misses the store keeps, as before. */
    if (atomic_load_explicit(&ts->evicting, memory_order_relaxed))
        return 0;
    /* Relaxed: the reservation needs only the add's atomicity, so that two
     * decodes cannot both claim the same room; `memory` is a count, read
     * without the cache lock. Tiles loaded meanwhile may still fill the
     * room: keeping then evicts back under the cap (tex__tiles_keep()). */
    size_t held = atomic_load_explicit(&ts->kept_reserved, memory_order_relaxed);
    do {
        size_t used = atomic_load_explicit(&ts->memory, memory_order_relaxed) + held;
        if (used > cap || need > cap - used)
            return 0;
    } while (!atomic_compare_exchange_weak_explicit(&ts->kept_reserved, &held, held + need,
                                                    memory_order_relaxed, memory_order_relaxed));
    return need;
}

void
tex__cache_unreserve(tex_system *ts, uint64_t bytes)
{
    /* Relaxed: as in tex__cache_reserve(). */
    atomic_fetch_sub_explicit(&ts->kept_reserved, bytes, memory_order_relaxed);
}

void
tex__tiles_keep(tex_system *ts, tex_thread *tc, tex__tile *const *tiles, uint32_t n)
{
    size_t bytes = 0;
    pthread_mutex_lock(&ts->cache_lock);
    for (uint32_t i = 0; i < n; i++) {
        tex__tile *t = tiles[i];
        tex__slot *slot = slot_of(t);
        t->unspilled = true;
        ring_insert(ts, t);
        /* Relaxed: a hint; cold until a lookup uses it. Release publishes
         * the texels, as in tile_load(); no lookup can reach the slot
         * before the file is READY anyway. */
        atomic_store_explicit(&slot->used, false, memory_order_relaxed);
        atomic_store_explicit(&slot->tile, t, memory_order_release);
        bytes += t->bytes;
    }
    /* Relaxed, as everywhere it is counted; once for the row, as
     * tex__tiles_new() counts memory. */
    atomic_fetch_add_explicit(&ts->resident, bytes, memory_order_relaxed);
    tex__count(&tc->counters.tiles_kept, n);
    evict_unlock(ts, tc, false);
}

void
tex__tiles_release(tex_system *ts, tex_thread *tc, tex__file *f, bool spill)
{
    tex__tile *mine = NULL;
    pthread_mutex_lock(&ts->cache_lock);
    for (uint32_t l = 0; f->levels && l < f->info.nlevels; l++) {
        tex__level *lv = &f->levels[l];
        for (size_t i = 0; lv->slots && i < (size_t)lv->tiles_x * lv->tiles_y; i++) {
            /* Relaxed: the cache lock orders every write of a slot, and no
             * lookup reads the slots of a file that is not READY. */
            tex__tile *t = atomic_load_explicit(&lv->slots[i].tile, memory_order_relaxed);
            if (!t || t->leaving) /* a leaving one is its evictor's to retire */
                continue;
            atomic_store_explicit(&lv->slots[i].tile, NULL, memory_order_relaxed);
            ring_remove(ts, t);
            atomic_fetch_sub_explicit(&ts->resident, t->bytes, memory_order_relaxed);
            t->retired_next = mine;
            mine = t;
        }
    }
    pthread_mutex_unlock(&ts->cache_lock);
    while (mine) { /* off the ring and out of their slots: ours alone */
        tex__tile *next = mine->retired_next;
        if (spill && mine->unspilled)
            spill_kept(ts, tc, mine);
        tile_free(ts, mine);
        mine = next;
    }
}

static tex__tile *
tile_load(tex_system *ts, tex_thread *tc, tex__file *f, uint32_t level, uint32_t index)
{
    char       err[TEX_ERR_LEN];
    tex__tile *t = tex__tile_new(ts, f, level, index);
    if (!t)
        return NULL;
    if (!read_texels(ts, tc, f, level, index, t->texels, err)) {
        tile_free(ts, t);
        tex__file_break(ts, tc, f, TEX_ERR_CORRUPT, err); /* reported once */
        return NULL;
    }
    /* Lookups filter straight colour; a raw (data) texture is as stored.
     * The spill file holds tiles divided already (cache_cut.c). */
    if (f->associated && !f->raw && f->source != TEX__SOURCE_SPILL)
        tex__unpremultiply(t->texels,
                           tile_texel_bytes(f, level, index) /
                               (f->info.nchannels * tex_type_size(f->info.type)),
                           f->info.nchannels, f->info.type);

    pthread_mutex_lock(&ts->cache_lock);
    tex__slot *slot = &f->levels[level].slots[index];
    tex__tile *other = atomic_load_explicit(&slot->tile, memory_order_relaxed);
    if (other) { /* another thread loaded it meanwhile */
        /* Under the cache lock nobody can evict it before the hazard is
         * up, and the lock orders the store before any later scan; seq_cst
         * is only the plainest choice on this rare path. */
        atomic_store_explicit(&tc->hazard, other, memory_order_seq_cst);
        pthread_mutex_unlock(&ts->cache_lock);
        tile_free(ts, t);
        return other;
    }
    ring_insert(ts, t);
    /* Protected before anyone else can reach it; as above. */
    atomic_store_explicit(&tc->hazard, t, memory_order_seq_cst);
    /* Relaxed: a hint, as below; the load is a use. Release publishes the
     * texels to readers (the acquire in tex__tile_get() and protect()). */
    atomic_store_explicit(&slot->used, true, memory_order_relaxed);
    atomic_store_explicit(&slot->tile, t, memory_order_release);
    atomic_fetch_add_explicit(&ts->resident, t->bytes, memory_order_relaxed);
    tex__count(&tc->counters.tiles_loaded, 1);
    evict_unlock(ts, tc, false);
    return t;
}

/* ---- decodes' memory, charged with the tiles ---- */

/* Evicts tiles down to what a new charge leaves them, frees every one no
 * reader holds, and hands the pages back: freed tiles leave holes in the
 * heap that stay resident, and the decode's buffer (a mapping of its own)
 * would sit beside them instead of in their place. */
static void
make_room(tex_system *ts, tex_thread *tc)
{
    pthread_mutex_lock(&ts->cache_lock);
    /* Relaxed: counts, read as hints of whether anything was freed. */
    size_t before = atomic_load_explicit(&ts->memory, memory_order_relaxed);
    evict_unlock(ts, tc, true);
    bool freed = atomic_load_explicit(&ts->memory, memory_order_relaxed) < before;
#ifdef __GLIBC__
    if (freed)
        malloc_trim(0);
#else
    (void)freed;
#endif
}

tex_result
tex__decode_reserve(tex_system *ts, tex_thread *tc, uint64_t bytes, const char *what,
                    char err[TEX_ERR_LEN])
{
    if (bytes > ts->max_memory) {
        snprintf(err, TEX_ERR_LEN,
                 "%.100s needs %" PRIu64 " MiB to decode, over the texture memory budget of %zu "
                 "MiB (--max-memory-mb)",
                 what, (bytes + (1u << 20) - 1) >> 20, ts->max_memory >> 20);
        return TEX_ERR_TOO_LARGE;
    }
    pthread_mutex_lock(&ts->decode_lock);
    /* Relaxed: decode_lock orders every write of it. */
    size_t held = atomic_load_explicit(&ts->decode_reserved, memory_order_relaxed);
    while (held + bytes > ts->max_memory) {
        pthread_cond_wait(&ts->budget_free, &ts->decode_lock);
        held = atomic_load_explicit(&ts->decode_reserved, memory_order_relaxed);
    }
    atomic_store_explicit(&ts->decode_reserved, held + bytes, memory_order_relaxed);
    pthread_mutex_unlock(&ts->decode_lock);
    make_room(ts, tc);
    return TEX_OK;
}

void
tex__decode_release(tex_system *ts, uint64_t bytes)
{
    if (!bytes)
        return;
    pthread_mutex_lock(&ts->decode_lock);
    /* Relaxed: as in tex__decode_reserve(). */
    size_t held = atomic_load_explicit(&ts->decode_reserved, memory_order_relaxed);
    atomic_store_explicit(&ts->decode_reserved, held - bytes, memory_order_relaxed);
    pthread_cond_broadcast(&ts->budget_free); /* several may fit now */
    pthread_mutex_unlock(&ts->decode_lock);
}

/* Loads a slot's tile and protects it with the thread's hazard pointer;
 * NULL if the slot is empty. */
static tex__tile *
protect(tex_thread *tc, _Atomic(tex__tile *) *slot)
{
    /* Acquire: pairs with the release in tile_load(); we see the texels. */
    tex__tile *t = atomic_load_explicit(slot, memory_order_acquire);
    while (t) {
        /* The hazard protocol at the top: the store ordered before the
         * load (seq_cst, or relaxed where the reclaimer's membarrier is
         * the fence), and the load seq_cst. */
        ustr_fence_announce(&tc->hazard, t);
        tex__tile *again = atomic_load_explicit(slot, memory_order_seq_cst);
        if (again == t)
            return t;
        t = again;
    }
    return NULL;
}

void
tex__tile_release(tex_thread *tc)
{
    /* Release: our reads of the tile happen before an evictor that sees the
     * hazard gone frees it. */
    atomic_store_explicit(&tc->hazard, NULL, memory_order_release);
}

const tex__tile *
tex__tile_get_slow(tex_system *ts, tex_thread *tc, tex__file *f, uint32_t level, uint32_t index)
{
    /* By index, which the caller has already found from the texel's
     * position (by shifts for power-of-two tiles), so no tap divides here. */
    tex__slot *slot = &f->levels[level].slots[index];
    tex__tile *t = protect(tc, &slot->tile);
    if (t) {
        tex__count(&tc->counters.tile_hits, 1);
        /* Relaxed: a hint for the clock. Written only when clear, so a hot
         * slot's line is not written by every lookup. A tile evicted and
         * replaced meanwhile marks its successor: a hint still. */
        if (!atomic_load_explicit(&slot->used, memory_order_relaxed))
            atomic_store_explicit(&slot->used, true, memory_order_relaxed);
        return t;
    }
    tex__count(&tc->counters.tile_misses, 1);
    /* Acquire: as in tex__file_ready(). A file that broke since this lookup
     * began gives no more tiles: its failure is not retried per texel. */
    if (atomic_load_explicit(&f->state, memory_order_acquire) == TEX__BROKEN)
        return NULL;
    return tile_load(ts, tc, f, level, index); /* protected by tile_load() */
}

/* One sample of colour at c divided by the alpha at a, both of `type`. */
static void
unpremultiply_one(void *c, const void *a, tex_type type)
{
    switch (type) {
    case TEX_TYPE_U8: {
        unsigned v = *(uint8_t *)c, al = *(const uint8_t *)a, o = (v * 255 + al / 2) / al;
        *(uint8_t *)c = (uint8_t)(o > 255 ? 255 : o);
        break;
    }
    case TEX_TYPE_U16: {
        uint64_t v = *(uint16_t *)c, al = *(const uint16_t *)a, o = (v * 65535 + al / 2) / al;
        *(uint16_t *)c = (uint16_t)(o > 65535 ? 65535 : o);
        break;
    }
    case TEX_TYPE_HALF:
        *(uint16_t *)c = tex_float_to_half(tex_half_to_float(*(uint16_t *)c) /
                                           tex_half_to_float(*(const uint16_t *)a));
        break;
    case TEX_TYPE_FLOAT:
        *(float *)c /= *(const float *)a;
        break;
    }
}

/* Whether alpha at a, of `type`, is above 0 (a colour to divide). */
static bool
alpha_positive(const void *a, tex_type type)
{
    switch (type) {
    case TEX_TYPE_U8:
        return *(const uint8_t *)a > 0;
    case TEX_TYPE_U16:
        return *(const uint16_t *)a > 0;
    case TEX_TYPE_HALF:
        return tex_half_to_float(*(const uint16_t *)a) > 0;
    case TEX_TYPE_FLOAT:
        return *(const float *)a > 0;
    }
    return false;
}

#if defined(__x86_64__)
/* Half RGBA, two pixels at a time by F16C: a tile of premultiplied half
 * RGBA converted four halves a sample, one call each, was 40% of a cold
 * random lookup on such EXRs (perf). Division and conversions are IEEE's
 * either way, so the bits are unpremultiply_one()'s; a pair holding a NaN
 * (before or after) takes it, since the functions make NaNs canonical
 * only where they convert, and halves left as they are keep their bits.
 * Returns how many pixels it did: all but fewer than 2, or up to a pair
 * holding a NaN (the rest are the caller's). */
__attribute__((target("f16c"))) static size_t
unpremultiply_rgba_half_f16c(uint16_t *p, size_t n)
{
    const __m256 rgb = _mm256_castsi256_ps(_mm256_set_epi32(0, -1, -1, -1, 0, -1, -1, -1));
    size_t       i = 0;
    for (; i + 2 <= n; i += 2, p += 8) {
        __m256 x = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)p));
        __m256 a = _mm256_shuffle_ps(x, x, _MM_SHUFFLE(3, 3, 3, 3)); /* each pixel's alpha */
        __m256 q = _mm256_div_ps(x, a);
        __m256 divide = _mm256_and_ps(rgb, _mm256_cmp_ps(a, _mm256_setzero_ps(), _CMP_GT_OQ));
        __m256 y = _mm256_blendv_ps(x, q, divide);
        if (_mm256_movemask_ps(
                _mm256_or_ps(_mm256_cmp_ps(x, x, _CMP_UNORD_Q), _mm256_cmp_ps(y, y, _CMP_UNORD_Q))))
            break; /* a NaN: the caller's */
        _mm_storeu_si128((__m128i *)p,
                         _mm256_cvtps_ph(y, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    }
    return i;
}
#endif

/* Pixel i of `pixels`, its colour divided by its alpha where that is above 0. */
static void
unpremultiply_pixel(void *pixels, size_t i, uint32_t nchannels, tex_type type)
{
    size_t size = tex_type_size(type);
    char  *p = (char *)pixels + i * nchannels * size, *a = p + (nchannels - 1) * size;
    if (alpha_positive(a, type))
        for (uint32_t k = 0; k + 1 < nchannels; k++)
            unpremultiply_one(p + k * size, a, type);
}

void
tex__unpremultiply(void *pixels, size_t n, uint32_t nchannels, tex_type type)
{
    if (nchannels != 2 && nchannels != 4)
        return;
    size_t i = 0;
#if defined(__x86_64__)
    /* Runs of pairs by F16C; a pair holding a NaN, one pixel at a time. */
    if (nchannels == 4 && type == TEX_TYPE_HALF && tex__cpu_f16c())
        while ((i += unpremultiply_rgba_half_f16c((uint16_t *)pixels + i * 4, n - i)) + 2 <= n)
            for (size_t end = i + 2; i < end; i++)
                unpremultiply_pixel(pixels, i, nchannels, type);
#endif
    for (; i < n; i++)
        unpremultiply_pixel(pixels, i, nchannels, type);
}
