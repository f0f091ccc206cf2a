/* Private to texture/: the file table, the tile cache, the samplers. */
#ifndef TEXTURE_INTERNAL_H
#define TEXTURE_INTERNAL_H

#include "tex_exr.h"
#include "tex_tiff.h"
#include "texture.h"
#include "ustr_fence.h"

#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>

#define TEX__TILE 64 /* tile edge for files that are not tiled on disk */
/* The longest path, its NUL included: Linux's PATH_MAX, which not every
 * file including this one may see (it needs a POSIX feature macro). */
#define TEX__PATH_MAX   4096
#define TEX__MICROCACHE 32 /* files a thread remembers; a power of two */
#define TEX__CACHE_LINE 64

/* ---- tiles ---- */

typedef struct tex__file tex__file;

/* A tile in memory. Readers reach it through its level's slot and protect
 * it with their hazard pointer while they read it; the evictor clears the
 * slot, retires it, and frees it once no hazard pointer names it. */
typedef struct tex__tile {
    struct tex__tile *retired_next; /* the retired list; guarded by the cache lock */
    tex__file        *file;
    uint32_t          level, index;          /* its slot */
    size_t            bytes;                 /* all of it, header included */
    struct tex__tile *ring_next, *ring_prev; /* the clock ring; guarded by the cache lock */
    /* Kept in the cache by its decode and not yet in the spill file: written
     * there when evicted. Set before it is published, read-only after. */
    bool unspilled;
    /* Chosen by the clock and being written back, off the ring but still in
     * its slot (cache_tiles.c, evict_unlock()). Guarded by the cache lock. */
    bool leaving;
    /* tile_w * nchannels samples a row, tile_h rows; a decoded file's
     * last row of tiles in a level holds only the level's rows. */
    alignas(16) unsigned char texels[];
} tex__tile;

/* A tile's place in its level: the tile, and beside it the clock's
 * reference bit, on the line a lookup reads anyway (in the tile's header
 * it cost a random lookup a cache miss of its own). */
typedef struct tex__slot {
    _Atomic(tex__tile *) tile; /* NULL: not in memory */
    _Atomic bool         used; /* readers set it only when clear; the clock clears it */
} tex__slot;

typedef struct tex__level {
    uint32_t   width, height, tiles_x, tiles_y;
    uint64_t   spill_offset; /* untiled files: where this level's tiles start */
    tex__slot *slots;        /* tiles_x * tiles_y */
} tex__level;

/* ---- files ---- */

enum { TEX__UNOPENED = 0, TEX__READY, TEX__BROKEN };

typedef enum tex__source {
    TEX__SOURCE_SPILL, /* decoded once, MIP levels built, tiles in the spill file */
    TEX__SOURCE_EXR,   /* a tiled EXR, read one tile at a time */
    TEX__SOURCE_TIFF,  /* a tiled TIFF (OpenImageIO's .tx), read one tile at a time */
} tex__source;

/* An open tiled file on disk (cache_tiled.c): one of the two is set, by source. */
typedef struct tex__tiled {
    tex_exr  *exr;
    tex_tiff *tiff;
} tex__tiled;

/* What a tiled file is, whatever its format. */
typedef struct tex__tiled_info {
    uint32_t width, height, nchannels, nlevels;
    uint32_t tile_width, tile_height; /* 0: not tiled */
    tex_type type;
    bool     srgb;
    bool     associated; /* premultiplied alpha (tex_image.associated) */
} tex__tiled_info;

/* Divides the colour of n pixels of nchannels samples of `type` by their
 * alpha (the last of 2 or 4; others: nothing to do), where alpha is above
 * 0; integers rounded and capped at their largest value (cache_tiles.c). */
void tex__unpremultiply(void *pixels, size_t n, uint32_t nchannels, tex_type type);

/* Opens `path` as `source` (EXR or TIFF). On TEX_OK *h holds the handle
 * (tex__tiled_close()); otherwise it is empty and err says why. */
tex_result tex__tiled_open(tex__source source, const char *path, tex__tiled *h,
                           tex__tiled_info *info, char err[TEX_ERR_LEN]);
void       tex__tiled_close(tex__tiled *h); /* an empty one is a no-op */
bool       tex__tiled_is_open(const tex__tiled *h);
/* As tex_exr_level_size() and tex_exr_read_tile() (tex_tiff's are alike). */
bool tex__tiled_level_size(const tex__tiled *h, uint32_t level, uint32_t *width, uint32_t *height);
tex_result tex__tiled_read_tile(tex__tiled *h, uint32_t level, uint32_t tx, uint32_t ty, void *out,
                                char err[TEX_ERR_LEN]);

struct tex__file {
    ustr        name;
    const char *path; /* what to open: the name, or its alias's path */
    /* Its alias (tex_file_alias*()), the caller's own and so not checked;
     * NULL: none. Set at creation, read-only after. */
    const struct tex__alias *alias;
    /* Opened for data lookups (tex_opts.raw): its MIP levels average the
     * stored values, not linear light, and lookups do not decode sRGB. A
     * file used both ways has two entries. */
    bool raw;
    /* UNOPENED -> READY or BROKEN, once, under `lock`. Release when set,
     * acquire when read: whoever sees READY sees everything below. */
    _Atomic int state;
    tex_result  error; /* when BROKEN */

    /* Guards opening, and the tiled-file handle below. Never held during a
     * lookup that hits; taken before the cache lock, never after it. */
    pthread_mutex_t lock;

    /* Set before READY, read-only after. */
    tex_file_info info;
    bool          associated; /* premultiplied alpha, divided out as tiles are cut or loaded */
    tex__source   source;
    tex__level   *levels;
    size_t        tile_bytes; /* texel bytes of a full tile */
    /* Power-of-two tile sizes (the usual case) index by shifts, not
     * divisions; tile_shift_x is 0 when a size is not a power of two. */
    uint8_t tile_shift_x, tile_shift_y;
    char   *udim_prefix, *udim_suffix; /* a "<UDIM>" name: the parts around it */
    /* A "<UDIM>" name whose tiles' names would be longer than a path may
     * be: no prefix or suffix, so it opens as a file would, reporting this
     * (once), and its lookups draw the fill. */
    bool udim_too_long;
    /* info.constant: the one texel, as stored (at most 4 floats), and as
     * linear RGBA (tex__constant_decode(); alpha 1 where the image has
     * none, which a lookup replaces with its fill's). */
    alignas(16) unsigned char constant_texel[16];
    float constant_rgba[4];

    /* TEX__SOURCE_EXR and _TIFF only; guarded by `lock`. Closed and
     * reopened under the system's open-file cap. */
    tex__tiled handle;
    /* TEX__SOURCE_SPILL: 0, or the errno of a kept tile's write to the
     * spill file when it was evicted; the file breaks at its next read
     * from the spill file, which could not give that tile back. */
    _Atomic int spill_errno;
    /* The system's tick at its last tile read, for closing the least
     * recently used handle; relaxed (an approximate order is all the cap
     * needs): written under `lock`, or by a thread that found the lock busy
     * (to count the file as used now), read by others. */
    _Atomic uint64_t handle_last_use;
};

/* A table of files keyed by the ustr pointer: lookups take no lock (the
 * array pointer and slots are atomic; files are never removed before the
 * system dies); inserts and growth happen under `lock`. Old arrays are kept
 * until the system is destroyed, so a reader never sees one freed. */
typedef struct tex__file_array {
    size_t                  mask;
    struct tex__file_array *older; /* kept for readers still in it */
    _Atomic(tex__file *)    slots[];
} tex__file_array;

/* ---- the system ---- */

struct tex_system {
    tex_config  cfg;
    ustr_table *strings;
    size_t      max_memory; /* bytes */

    pthread_mutex_t files_lock; /* guards file inserts and growth, and aliases; alone */
    struct tex__alias {
        ustr               name;
        char              *path; /* NULL: the bytes below are the file */
        const void        *data; /* tex_file_alias_bytes(): the caller's */
        size_t             size;
        struct tex__alias *next;
    } * aliases;
    _Atomic(tex__file_array *) files;
    size_t                     nfiles; /* guarded by files_lock */

    /* The tile cache. Memory counts tiles from allocation to free. */
    /* Guards the ring, the hand and the retired list. Taken after any file
     * lock, before threads_lock. */
    pthread_mutex_t cache_lock;
    tex__tile      *hand;    /* the clock hand: the next tile to look at */
    tex__tile      *retired; /* evicted, maybe still read under a hazard pointer */
    _Atomic size_t  memory, peak_memory, resident; /* resident: tiles in slots, not leaving */
    _Atomic size_t  kept_reserved; /* room decodes have claimed for tiles they keep */
    _Atomic bool    evicting;      /* the clock has evicted: decodes no longer keep */

    /* One anonymous file holding the tiles of every untiled texture. */
    int              spill_fd;
    _Atomic uint64_t spill_size;

    /* Images being decoded and spilled (a PNG, a JPEG, a scanline EXR):
     * each holds a few rows of tiles per level outside the tile cache's
     * cap, so at most max_decoding at once, the CPUs the process may run
     * on, not one per worker: peak memory does not grow with -t. Guarded,
     * with peak_decoding and decode_reserved, by decode_lock, taken under a
     * file lock or alone. */
    pthread_mutex_t decode_lock;
    pthread_cond_t  decode_free;
    unsigned        decoding, max_decoding, peak_decoding;
    /* What those decodes hold beyond their rows (an interlaced PNG's
     * image, a multi-scan JPEG's coefficients, an EXR read whole):
     * charged against max_memory with the tiles, which the evictor keeps
     * under max_memory - decode_reserved (tex__decode_reserve()). Written
     * under decode_lock; budget_free is signalled when it falls. */
    _Atomic size_t decode_reserved;
    pthread_cond_t budget_free;

    /* Files named by tex_files_declare(), which a thread whose file is
     * being opened by another opens instead of sleeping (cache_files.c,
     * file_lock_helping()). Written before the threads that look up
     * start, read-only while they run; declared_next hands each to one
     * helper. */
    tex__file    **declared;
    size_t         ndeclared;
    _Atomic size_t declared_next;

    /* The open-file cap for tiled files (EXR, TIFF). */
    pthread_mutex_t  handles_lock; /* guards the count; alone */
    unsigned         open_handles;
    _Atomic uint64_t tick;
    _Atomic uint64_t files_closed; /* handles closed by the cap; relaxed: stats */

    pthread_mutex_t    threads_lock; /* guards threads; innermost */
    struct tex_thread *threads;
    tex_stats          dead_stats; /* of destroyed threads; guarded by threads_lock */
};

/* Counters written only by their owner, read by tex_system_stats(). */
typedef struct tex__counters {
#define TEX__COUNTER_FIELD_(name, what) _Atomic uint64_t name;
    TEX_THREAD_COUNTS(TEX__COUNTER_FIELD_)
#undef TEX__COUNTER_FIELD_
} tex__counters;

static inline void
tex__count(_Atomic uint64_t *c, uint64_t n)
{
    /* Relaxed: only the owner writes; readers want a snapshot. A load and a
     * store, not a locked add. */
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + n,
                          memory_order_relaxed);
}

typedef struct tex__micro {
    ustr       name;
    bool       raw;
    tex__file *file;
} tex__micro;

struct tex_thread {
    /* The tile this thread may be reading: the evictor does not free it.
     * Written by the owner at each tile it reads, read by the evictor. */
    alignas(TEX__CACHE_LINE) _Atomic(tex__tile *) hazard;
    tex_system        *ts;
    tex__counters      counters;
    tex__micro         micro[TEX__MICROCACHE];
    struct tex_thread *next, *prev;              /* the system's list; guarded by threads_lock */
    char               udim_name[TEX__PATH_MAX]; /* a UDIM tile's name; the longest path there is */
};

/* io_read.c: which format the file open as fd is, by its first bytes (read
 * where they lie: its offset is left as it was). TEX__FORMAT_UNKNOWN with
 * *r and err set when it cannot be read or is none of them. */
typedef enum {
    TEX__FORMAT_UNKNOWN,
    TEX__FORMAT_PNG,
    TEX__FORMAT_JPEG,
    TEX__FORMAT_EXR,
    TEX__FORMAT_TIFF
} tex__format;
tex__format tex__sniff(int fd, char err[TEX_ERR_LEN], tex_result *r);

/* Where a file's bytes are read from, for one open of it by a decoder.
 * Under cfg.allow the file is opened here once and judged by its
 * descriptor: a PNG or JPEG is read from fd itself, an EXR or TIFF through
 * `path`, that descriptor's /proc/self/fd name, which its library's open
 * reopens: the very file judged, whatever f->path points to by then.
 * Otherwise `path` is f->path (fd -1). */
typedef struct tex__read_from {
    const char *path;
    int         fd;
    char        proc[32];
} tex__read_from;
/* TEX_OK, or TEX_ERR_OPEN with err: under tex_config.allow, TEX_NOT_ALLOWED
 * for a file that cannot be opened or is refused alike. Close it with
 * tex__read_close() once the decoder is done with fd, or has opened `path`
 * (or failed). */
tex_result tex__read_open(tex_system *ts, const tex__file *f, tex__read_from *src,
                          char err[TEX_ERR_LEN]);
void       tex__read_close(tex__read_from *src);

typedef struct tex__alias tex__alias;

/* cache_files.c */
tex_result tex__files_init(tex_system *ts);
void       tex__files_free(tex_system *ts);
/* The entry for (name, raw), made if new; NULL: out of memory.
 * tex__file_find() is its inline front: a hit in the thread's microcache,
 * every lookup's usual case, costs no call. */
tex__file *tex__file_find_slow(tex_system *ts, tex_thread *tc, ustr name, bool raw);
/* Opens f on first use; TEX_OK once it is READY, else why not.
 * tex__file_ready() is its inline front for a READY file. */
tex_result  tex__file_ready_slow(tex_system *ts, tex_thread *tc, tex__file *f);
const char *tex__udim_resolve(tex_thread *tc, const tex__file *f, float *s, float *t);

/* cache_cut.c: f, whose format is `format`, decoded whole and cut into
 * tiles, its MIP levels built as the rows come (the tiles kept in the
 * cache where they fit, else spilled). A PNG or JPEG is read from fd (the
 * caller's, open), an EXR or TIFF from `path`, `info` as it was opened.
 * Under f's lock, as f opens. */
tex_result tex__cut_file(tex_system *ts, tex_thread *tc, tex__file *f, tex__format format, int fd,
                         const char *path, const tex__tiled_info *info, char err[TEX_ERR_LEN]);

/* cache_tiles.c */
tex_result tex__cache_init(tex_system *ts, char err[TEX_ERR_LEN]);
/* f's level table and tile slots (all empty): sizes from the tiled file h
 * when given (its rounding may be up), else halved and rounded down as
 * tex_mip_levels() counts them. */
tex_result tex__levels_init(tex__file *f, const tex__tiled *h, uint32_t nlevels, uint32_t tw,
                            uint32_t th, char err[TEX_ERR_LEN]);
void       tex__cache_free(tex_system *ts);
/* Tile `index` of a level (row by row: ty * tiles_x + tx, below
 * tiles_x * tiles_y), loaded if needed, and protected by the thread's
 * hazard pointer until its next call or tex__tile_release(). NULL: it could
 * not be read (counted, reported). tex__tile_get() is its inline front for
 * a tile in memory (below). */
const tex__tile *tex__tile_get_slow(tex_system *ts, tex_thread *tc, tex__file *f, uint32_t level,
                                    uint32_t index);
void             tex__tile_release(tex_thread *tc);
/* Write-back (cache_tiles.c says how), under f's lock, before f is READY:
 * - tex__cache_reserve(): the bytes of every tile of f, whose levels are
 *   sized, reserved if they fit in what the cache has free and no other
 *   decode has reserved; 0 if not (spill them). Give back what the tiles
 *   made do not take with tex__cache_unreserve().
 * - tex__tiles_new(): tiles first .. first + n - 1 of a level of f, for
 *   its decode to cut rows into, counted in the cache's memory; their
 *   bytes, or 0 (out of memory: none made, tiles all NULL).
 *   tex__tile_new() makes one. tex__tile_discard() frees one never kept
 *   (NULL: a no-op).
 * - tex__tiles_keep(): complete tiles put into their slots and the clock
 *   ring, written to the spill file only if evicted.
 * - tex__tiles_release(): f's kept tiles taken out of the cache and freed,
 *   written to the spill file first if `spill` (a constant file, whose
 *   lookups rarely read a tile) or not (a failed decode). */
uint64_t   tex__cache_reserve(tex_system *ts, const tex__file *f);
void       tex__cache_unreserve(tex_system *ts, uint64_t bytes);
uint64_t   tex__tiles_new(tex_system *ts, tex__file *f, uint32_t level, uint32_t first, uint32_t n,
                          tex__tile **tiles);
tex__tile *tex__tile_new(tex_system *ts, tex__file *f, uint32_t level, uint32_t index);
void       tex__tile_discard(tex_system *ts, tex__tile *t);
void       tex__tiles_keep(tex_system *ts, tex_thread *tc, tex__tile *const *tiles, uint32_t n);
void       tex__tiles_release(tex_system *ts, tex_thread *tc, tex__file *f, bool spill);
/* The spill file: a range of `bytes` of its own (any thread), then bytes
 * written at an offset inside a range reserved. */
uint64_t   tex__spill_reserve(tex_system *ts, uint64_t bytes);
tex_result tex__spill_write(tex_system *ts, const void *data, size_t bytes, uint64_t offset,
                            char err[TEX_ERR_LEN]);
/* Charges `bytes` that a decode will hold beyond its rows (`what` needs
 * them: "interlaced PNG 16384x16384") against max_memory, shared with the
 * tiles and every other decode: TEX_ERR_TOO_LARGE with err "... needs
 * 2048 MiB to decode, over the texture memory budget of 1024 MiB
 * (--max-memory-mb)" when they could never fit; otherwise waits until the
 * other decodes' charges leave room (so whether a file is refused depends
 * on it alone, not on what else is opening), then evicts tiles to make
 * room and returns TEX_OK. Give them back with tex__decode_release() once
 * the decode has freed them. Under a file's lock; takes decode_lock, then
 * the cache lock, never both. */
tex_result tex__decode_reserve(tex_system *ts, tex_thread *tc, uint64_t bytes, const char *what,
                               char err[TEX_ERR_LEN]);
void       tex__decode_release(tex_system *ts, uint64_t bytes);

/* cache_handles.c */
/* Under f->lock, after opening f->handle: counts the handle and closes the
 * least recently used other one when over the cap. */
void tex__handle_opened(tex_system *ts, tex__file *f);
void tex__handle_touch(tex_system *ts, tex__file *f); /* under f->lock, at each tile read */
void tex__handle_close(tex_system *ts, tex__file *f); /* under f->lock: close and uncount */

/* cache_failure.c */
/* Says that `name` failed and why: tex_config.report, or stderr. */
void tex__report(tex_system *ts, const char *name, const char *reason);
/* A READY file turned out unreadable (a tile failed): BROKEN from now on,
 * reported once, counted. Lookups already running on it finish safely. */
void tex__file_break(tex_system *ts, tex_thread *tc, tex__file *f, tex_result r, const char *err);

/* lookup_sample.c */
/* The sampler's decoding tables, once per process: before the first
 * tex__sample() (tex_system_create() calls it). */
void tex__sample_init(void);
/* What the samplers need for f's type beyond those, built once per process:
 * the 16-bit sRGB table. Call it once f->info is set, before f is
 * published. */
void tex__sample_prepare(const tex__file *f);
/* Fills f->constant_rgba from f->constant_texel (the tables set up by
 * tex_system_create()). */
void tex__constant_decode(tex__file *f);
/* Filters a lookup into rgba; false when a tile could not be read (its
 * texels are the fill). */
bool tex__sample(tex_system *ts, tex_thread *tc, tex__file *f, float s, float t,
                 const tex_derivs *d, const tex_opts *o, float rgba[4]);

/* ---- the inline fronts of cache_files.c (declared above) ---- */

/* The pair of microcache entries a name picks: two-way, the last used
 * first (cache_files.c says why two). */
static inline tex__micro *
tex__micro_pair(tex_thread *tc, ustr name, bool raw)
{
    return &tc->micro[((ustr_hash(name) >> 7) * 2 + raw * 2) & (TEX__MICROCACHE - 2)];
}

static inline tex__file *
tex__file_find(tex_system *ts, tex_thread *tc, ustr name, bool raw)
{
    tex__micro *m = tex__micro_pair(tc, name, raw);
    if (m[0].name == name && m[0].raw == raw) {
        tex__count(&tc->counters.microcache_hits, 1);
        return m[0].file;
    }
    /* The second way here too: two files that share a pair, looked up in
     * turn, would go out of line every other lookup (docs/benchmarks.md,
     * "Lookups against the floor"). Moved to the first way, so that of
     * three names sharing a pair the one used longest ago leaves (a UDIM
     * pattern and two of its tiles: the pattern, used by every lookup,
     * stays); the pair is this thread's alone. */
    if (m[1].name == name && m[1].raw == raw) {
        tex__micro hit = m[1];
        m[1] = m[0], m[0] = hit;
        tex__count(&tc->counters.microcache_hits, 1);
        return hit.file;
    }
    return tex__file_find_slow(ts, tc, name, raw);
}

static inline tex_result
tex__file_ready(tex_system *ts, tex_thread *tc, tex__file *f)
{
    /* Acquire pairs with the release in tex__file_ready_slow() that made
     * it READY: we see its fields. */
    if (atomic_load_explicit(&f->state, memory_order_acquire) == TEX__READY)
        return TEX_OK;
    return tex__file_ready_slow(ts, tc, f);
}

/* ---- the inline front of cache_tiles.c (declared above) ---- */

static inline const tex__tile *
tex__tile_get(tex_system *ts, tex_thread *tc, tex__file *f, uint32_t level, uint32_t index)
{
    /* A warm lookup's every tap comes here: inline, so a hit costs no
     * call (docs/benchmarks.md, "Lookups against the floor"). The hazard
     * protocol is cache_tiles.c's protect(), its first pass; a slot empty
     * or changing under us goes the slow way, which starts it again. */
    tex__slot *slot = &f->levels[level].slots[index];
    /* Acquire: pairs with the release in tile_load(); we see the texels. */
    tex__tile *t = atomic_load_explicit(&slot->tile, memory_order_acquire);
    if (t) {
        ustr_fence_announce(&tc->hazard, t);
        /* Seq_cst, after the announcement: in the single order with the
         * evictor's seq_cst clear of the slot and its scan of the hazards
         * (the proof at the top of cache_tiles.c), so either it sees the
         * slot cleared or the evictor sees our hazard. */
        if (atomic_load_explicit(&slot->tile, memory_order_seq_cst) == t) {
            tex__count(&tc->counters.tile_hits, 1);
            /* Relaxed: a hint for the clock (tex__tile_get_slow() says
             * why it is written only when clear). */
            if (!atomic_load_explicit(&slot->used, memory_order_relaxed))
                atomic_store_explicit(&slot->used, true, memory_order_relaxed);
            return t;
        }
    }
    return tex__tile_get_slow(ts, tc, f, level, index);
}

#endif
