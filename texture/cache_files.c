/* Files: the table keyed by ustr pointer, the per-thread microcache in front
 * of it, and opening a file on its first lookup. */
#include "tex_io_internal.h"
#include "texture_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- the table ---- */

static size_t
slot_of(ustr name, bool raw, size_t mask)
{
    /* The stored hash is a good one, and reading it touches the string's
     * header only, never its characters. */
    return (size_t)(ustr_hash(name) + raw) & mask;
}

static tex__file_array *
array_new(size_t cap)
{
    tex__file_array *a = calloc(1, sizeof *a + cap * sizeof a->slots[0]);
    if (a)
        a->mask = cap - 1;
    return a;
}

tex_result
tex__files_init(tex_system *ts)
{
    tex__file_array *a = array_new(256);
    if (!a)
        return TEX_ERR_NOMEM;
    atomic_init(&ts->files, a);
    return TEX_OK;
}

static void
file_free(tex__file *f)
{
    if (f->levels) {
        for (uint32_t l = 0; l < f->info.nlevels; l++)
            free((void *)f->levels[l].tiles);
        free(f->levels);
    }
    tex__tiled_close(&f->handle);
    free(f->udim_prefix);
    free(f->udim_suffix);
    pthread_mutex_destroy(&f->lock);
    free(f);
}

void
tex__files_free(tex_system *ts)
{
    tex__file_array *a = atomic_load_explicit(&ts->files, memory_order_relaxed);
    for (size_t i = 0; a && i <= a->mask; i++) {
        tex__file *f = atomic_load_explicit(&a->slots[i], memory_order_relaxed);
        if (f)
            file_free(f);
    }
    while (a) {
        tex__file_array *older = a->older;
        free(a);
        a = older;
    }
    while (ts->aliases) {
        tex__alias *next = ts->aliases->next;
        free(ts->aliases->path);
        free(ts->aliases);
        ts->aliases = next;
    }
    pthread_mutex_destroy(&ts->files_lock);
}

static tex__file *
array_find(tex__file_array *a, ustr name, bool raw)
{
    for (size_t i = slot_of(name, raw, a->mask);; i = (i + 1) & a->mask) {
        /* Acquire pairs with the release in array_put(): whoever sees the
         * pointer sees the file's initialised fields. */
        tex__file *f = atomic_load_explicit(&a->slots[i], memory_order_acquire);
        if (!f || (f->name == name && f->raw == raw))
            return f;
    }
}

static void
array_put(tex__file_array *a, tex__file *f)
{
    size_t i = slot_of(f->name, f->raw, a->mask);
    /* Relaxed: under files_lock, which every writer holds. */
    while (atomic_load_explicit(&a->slots[i], memory_order_relaxed))
        i = (i + 1) & a->mask;
    /* Release publishes the file to lock-free readers (array_find). */
    atomic_store_explicit(&a->slots[i], f, memory_order_release);
}

/* The alias of `name`, or NULL; files_lock held. */
static const tex__alias *
alias_of(const tex_system *ts, ustr name)
{
    for (const tex__alias *a = ts->aliases; a; a = a->next)
        if (a->name == name)
            return a;
    return NULL;
}

static tex__file *
file_new(const tex_system *ts, ustr name, bool raw)
{
    tex__file *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    f->name = name;
    f->alias = alias_of(ts, name);
    f->path = f->alias && f->alias->path ? f->alias->path : name;
    f->raw = raw;
    pthread_mutex_init(&f->lock, NULL);
    const char *udim = strstr(name, "<UDIM>");
    if (udim) {
        f->udim_prefix = strndup(name, (size_t)(udim - name));
        f->udim_suffix = strdup(udim + strlen("<UDIM>"));
        if (!f->udim_prefix || !f->udim_suffix) {
            file_free(f);
            return NULL;
        }
    }
    return f;
}

/* Adds a file for `name` unless another thread just did; under files_lock. */
static tex__file *
insert_locked(tex_system *ts, ustr name, bool raw)
{
    /* Relaxed: files_lock orders everything writers do. */
    tex__file_array *a = atomic_load_explicit(&ts->files, memory_order_relaxed);
    tex__file       *f = array_find(a, name, raw);
    if (f)
        return f;
    if ((ts->nfiles + 1) * 2 > a->mask + 1) {
        tex__file_array *bigger = array_new((a->mask + 1) * 2);
        if (!bigger)
            return NULL;
        for (size_t i = 0; i <= a->mask; i++) {
            tex__file *g = atomic_load_explicit(&a->slots[i], memory_order_relaxed);
            if (g)
                array_put(bigger, g);
        }
        bigger->older = a;
        /* Release: readers that load the new array see its slots filled. */
        atomic_store_explicit(&ts->files, bigger, memory_order_release);
        a = bigger;
    }
    f = file_new(ts, name, raw);
    if (!f)
        return NULL;
    array_put(a, f);
    ts->nfiles++;
    return f;
}

tex__file *
tex__file_find_slow(tex_system *ts, tex_thread *tc, ustr name, bool raw)
{
    /* Two-way: the pair of entries the name's hash picks, the last used
     * first. Direct-mapped, two files a shading point alternates between
     * (a material's slots, an environment map) can share an entry and evict
     * each other at every lookup. The first way was checked inline
     * (tex__file_find()). */
    tex__micro *m = tex__micro_pair(tc, name, raw);
    if (m[1].name == name && m[1].raw == raw) {
        tex__micro hit = m[1];
        m[1] = m[0], m[0] = hit;
        tex__count(&tc->counters.microcache_hits, 1);
        return hit.file;
    }
    /* Acquire pairs with the release in insert_locked(). */
    tex__file *f = array_find(atomic_load_explicit(&ts->files, memory_order_acquire), name, raw);
    if (!f) {
        pthread_mutex_lock(&ts->files_lock);
        f = insert_locked(ts, name, raw);
        pthread_mutex_unlock(&ts->files_lock);
        if (!f)
            return NULL;
    }
    m[1] = m[0];
    m[0] = (tex__micro){name, raw, f};
    return f;
}

/* Adds the alias `al` (its path the caller's to free on failure). */
static tex_result
alias_add(tex_system *ts, const tex__alias *al)
{
    pthread_mutex_lock(&ts->files_lock);
    /* Relaxed: files_lock orders every writer. */
    tex__file_array *a = atomic_load_explicit(&ts->files, memory_order_relaxed);
    tex__alias      *copy = NULL;
    tex_result       r = TEX_ERR_INVALID; /* too late: the name was looked up already */
    if (!array_find(a, al->name, false) && !array_find(a, al->name, true))
        r = (copy = malloc(sizeof *copy)) ? TEX_OK : TEX_ERR_NOMEM;
    if (copy) {
        *copy = *al;
        copy->next = ts->aliases;
        ts->aliases = copy;
    }
    pthread_mutex_unlock(&ts->files_lock);
    return r;
}

tex_result
tex_file_alias(tex_system *ts, ustr name, const char *path)
{
    if (!name || !path)
        return TEX_ERR_INVALID;
    tex__alias al = {.name = name, .path = strdup(path)};
    tex_result r = al.path ? alias_add(ts, &al) : TEX_ERR_NOMEM;
    if (r != TEX_OK)
        free(al.path);
    return r;
}

tex_result
tex_file_alias_bytes(tex_system *ts, ustr name, const void *data, size_t size)
{
    if (!name || (!data && size))
        return TEX_ERR_INVALID;
    return alias_add(ts, &(tex__alias){.name = name, .data = data, .size = size});
}

/* ---- UDIM ---- */

const char *
tex__udim_resolve(tex_thread *tc, const tex__file *f, float *s, float *t)
{
    float u = floorf(*s), v = floorf(*t);
    if (!(u >= 0 && u < 10 && v >= 0 && v < 100))
        return NULL; /* no UDIM tile there (or NaN) */
    int n = snprintf(tc->udim_name, sizeof tc->udim_name, "%s%d%s", f->udim_prefix,
                     1001 + (int)u + 10 * (int)v, f->udim_suffix);
    if (n < 0 || (size_t)n >= sizeof tc->udim_name)
        return NULL;
    *s -= u;
    *t -= v;
    return tc->udim_name;
}

/* ---- opening ---- */

/* The level table; sizes from the tiled file when given (its rounding may
 * be up), else halved and rounded down as tex_mip_levels() counts them. */
static tex_result
levels_init(tex__file *f, const tex__tiled *h, uint32_t nlevels, uint32_t tw, uint32_t th,
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
        lv->tiles = calloc((size_t)lv->tiles_x * lv->tiles_y, sizeof lv->tiles[0]);
        if (!lv->tiles)
            goto nomem;
    }
    return TEX_OK;
nomem:
    snprintf(err, TEX_ERR_LEN, "out of memory for the tile table");
    return TEX_ERR_NOMEM;
}

/* Spilling a decoded image (PNG, JPEG, scanline EXR) as its rows arrive:
 * level 0's rows and, through a MIP chain, every level's, each row cut into
 * its level's rows of tiles as it comes (tex_mip_chain_new(), bands of one
 * row: no copy of the row before it is cut). No level is ever whole in a
 * buffer of its own: a 16384x16384 16-bit texture took 2 GB when level 0
 * was decoded whole and levels were made from it.
 *
 * Where the tiles go: if all of the file's fit in what the cache has free,
 * straight into it, each row of tiles as it is complete (write-back,
 * cache_tiles.c): nothing is written to the spill file or read back on
 * first touch, which was a third of a cold JPEG's first touch. Otherwise
 * into the spill file, a few rows of tiles at a time (SPILL_STAGE_BYTES, or
 * one row where a row is larger), to load on demand. Either way the tiles
 * are cut as the cache holds them: colour divided by alpha where the file
 * is premultiplied. */
typedef struct spill_job {
    tex_system    *ts;
    tex_thread    *tc;
    tex__file     *f;
    tex_mip_chain *chain;
    bool           keep;     /* the tiles go into the cache, not the spill file */
    uint64_t       reserved; /* kept: room reserved for tiles not yet made */
    unsigned char *tiles;    /* spilled: each level's rows of tiles being cut, level 0's first */
    tex__tile    **kept;     /* kept: each level's row of tiles being cut, level 0's first */
    size_t         tiles_at[32]; /* where level l's start in either (17 levels at TEX_MAX_DIM) */
    uint32_t       stage[32];    /* spilled: rows of tiles level l holds before writing them */
    bool           constant;     /* every pixel so far is f->constant_texel */
    uint64_t       charged;      /* what the decode holds beyond its rows (tex__decode_reserve()) */
} spill_job;

/* Rows of tiles a level gathers to write at once, up to this many bytes:
 * the spill file's writes cost per page, and about half as much per byte
 * in writes of 200 KB as in writes of 12 KB (a small level's tile), which
 * also read back faster. */
#define SPILL_STAGE_BYTES ((size_t)256 << 10)

/* Writes rows of tiles first .. first + n - 1 of level l, cut into
 * `tiles`, the last of them `rows` rows deep, to the level's range of the
 * spill file. Rows below the image are not written where they need not be
 * (tile_load() zeroes them as it reads): a level one tile wide, below 64
 * rows, spills its rows, not 64 of them (nearly half of a 128x128 file's
 * tiles were such padding). */
static tex_result
tiles_write(spill_job *j, const tex__level *lv, unsigned char *tiles, uint32_t first, uint32_t n,
            uint32_t rows, char err[TEX_ERR_LEN])
{
    size_t tile_bytes = j->f->tile_bytes, row_bytes = (size_t)lv->tiles_x * tile_bytes;
    size_t bytes = (size_t)n * row_bytes, tile_row = tile_bytes / TEX__TILE;
    if (rows < TEX__TILE && lv->tiles_x == 1) {
        bytes -= (TEX__TILE - rows) * tile_row;
    } else if (rows < TEX__TILE) { /* tiles side by side: their padding goes too, zeroed */
        unsigned char *last = tiles + (size_t)(n - 1) * row_bytes;
        for (uint32_t tx = 0; tx < lv->tiles_x; tx++)
            memset(last + tx * tile_bytes + rows * tile_row, 0, (TEX__TILE - rows) * tile_row);
    }
    return tex__spill_write(j->ts, tiles, bytes, lv->spill_offset + (uint64_t)first * row_bytes,
                            err);
}

/* Columns x0 .. x0 + 63 of a row into row ty of a tile: the columns right
 * of the image zeroed, colour divided by alpha as the cache holds it (the
 * row itself stays as decoded: the MIP chain averages it next). */
static void
cut_row(const tex__file *f, unsigned char *tile, const tex_image *row, uint32_t x0, uint32_t ty)
{
    size_t         px = f->tile_bytes / (TEX__TILE * TEX__TILE);
    uint32_t       w = row->width - x0 < TEX__TILE ? row->width - x0 : TEX__TILE;
    unsigned char *out = tile + (size_t)ty * TEX__TILE * px;
    memcpy(out, (const unsigned char *)row->pixels + x0 * px, w * px);
    memset(out + w * px, 0, (TEX__TILE - w) * px);
    if (f->associated && !f->raw)
        tex__unpremultiply(out, w, f->info.nchannels, f->info.type);
}

/* Row y of level l into the level's staged rows of tiles; written out once
 * the level's stage is full, or with its last row. */
static tex_result
spill_band(spill_job *j, uint32_t l, uint32_t y, const tex_image *row, char err[TEX_ERR_LEN])
{
    tex__level    *lv = &j->f->levels[l];
    size_t         tile_bytes = j->f->tile_bytes;
    uint32_t       band = y / TEX__TILE, slot = band % j->stage[l], ty = y % TEX__TILE;
    unsigned char *staged = j->tiles + j->tiles_at[l];
    unsigned char *tiles = staged + (size_t)slot * lv->tiles_x * tile_bytes;
    for (uint32_t tx = 0; tx < lv->tiles_x; tx++)
        cut_row(j->f, tiles + tx * tile_bytes, row, tx * TEX__TILE, ty);
    bool last = y + 1 == lv->height;
    if (!last && (ty + 1 < TEX__TILE || slot + 1 < j->stage[l]))
        return TEX_OK;
    return tiles_write(j, lv, staged, band - slot, slot + 1, ty + 1, err);
}

/* Row y of level l into the level's row of tiles, made at its first row;
 * the row of tiles put into the cache once complete, the rows below the
 * image zeroed. */
static tex_result
keep_band(spill_job *j, uint32_t l, uint32_t y, const tex_image *row, char err[TEX_ERR_LEN])
{
    tex__level *lv = &j->f->levels[l];
    tex__tile **tiles = j->kept + j->tiles_at[l];
    uint32_t    ty = y % TEX__TILE, first = y / TEX__TILE * lv->tiles_x;
    for (uint32_t tx = 0; ty == 0 && tx < lv->tiles_x; tx++) {
        if (!(tiles[tx] = tex__tile_new(j->ts, j->f, l, first + tx))) {
            snprintf(err, TEX_ERR_LEN, "out of memory for tiles");
            return TEX_ERR_NOMEM;
        }
        j->reserved -= tiles[tx]->bytes; /* counted in the cache's memory now */
        tex__cache_unreserve(j->ts, tiles[tx]->bytes);
    }
    for (uint32_t tx = 0; tx < lv->tiles_x; tx++)
        cut_row(j->f, tiles[tx]->texels, row, tx * TEX__TILE, ty);
    if (ty + 1 < TEX__TILE && y + 1 < lv->height)
        return TEX_OK;
    size_t tile_row = j->f->tile_bytes / TEX__TILE;
    for (uint32_t tx = 0; tx < lv->tiles_x; tx++)
        memset(tiles[tx]->texels + (ty + 1) * tile_row, 0, (TEX__TILE - ty - 1) * tile_row);
    tex__tiles_keep(j->ts, j->tc, tiles, lv->tiles_x);
    memset(tiles, 0, lv->tiles_x * sizeof *tiles); /* the cache's now */
    return TEX_OK;
}

/* The MIP chain's band callback: row y of level l (a band of one row). */
static tex_result
take_band(void *ctx, uint32_t l, uint32_t y, const tex_image *row, char err[TEX_ERR_LEN])
{
    spill_job *j = ctx;
    return j->keep ? keep_band(j, l, y, row, err) : spill_band(j, l, y, row, err);
}

/* Where each level's rows of tiles go while they are cut: kept, a row of
 * tile pointers per level; spilled, a few rows of tiles per level. */
static tex_result
spill_buffers(spill_job *j, char err[TEX_ERR_LEN])
{
    tex__file *f = j->f;
    size_t     at = 0;
    j->reserved = tex__cache_reserve(j->ts, f);
    j->keep = j->reserved > 0;
    for (uint32_t l = 0; l < f->info.nlevels; l++) {
        tex__level *lv = &f->levels[l];
        size_t      row_bytes = (size_t)lv->tiles_x * f->tile_bytes;
        uint32_t    stage = (uint32_t)(SPILL_STAGE_BYTES / row_bytes);
        j->stage[l] = stage < 1 ? 1 : stage < lv->tiles_y ? stage : lv->tiles_y;
        j->tiles_at[l] = at;
        at += j->keep ? lv->tiles_x : j->stage[l] * row_bytes;
    }
    if (j->keep)
        j->kept = calloc(at, sizeof *j->kept);
    else
        j->tiles = malloc(at);
    if (!j->kept && !j->tiles) {
        snprintf(err, TEX_ERR_LEN, "out of memory cutting tiles");
        return TEX_ERR_NOMEM;
    }
    return TEX_OK;
}

/* At the first row: the file's shape, its level table, each level's range
 * of the spill file (a kept tile is written there if evicted), where the
 * tiles are cut, and the chain. */
static tex_result
spill_begin(spill_job *j, const tex_image *shape, char err[TEX_ERR_LEN])
{
    tex__file *f = j->f;
    tex_image  s = *shape;
    if (f->raw)
        s.srgb = false; /* data: filter and return the stored values */
    f->source = TEX__SOURCE_SPILL;
    f->info.width = s.width;
    f->info.height = s.height;
    f->info.nchannels = s.nchannels;
    f->info.type = s.type;
    f->info.srgb = s.srgb;
    f->associated = s.associated;
    uint32_t   nlevels = tex_mip_levels(s.width, s.height);
    tex_result r = levels_init(f, NULL, nlevels, TEX__TILE, TEX__TILE, err);
    if (r != TEX_OK)
        return r;
    for (uint32_t l = 0; l < nlevels; l++) {
        tex__level *lv = &f->levels[l];
        lv->spill_offset =
            tex__spill_reserve(j->ts, (uint64_t)lv->tiles_y * lv->tiles_x * f->tile_bytes);
    }
    r = spill_buffers(j, err);
    return r == TEX_OK ? tex_mip_chain_new(&s, nlevels, 1, take_band, j, &j->chain, err) : r;
}

/* Whether every pixel of a row has the bytes of the image's first: a pass
 * over rows just decoded, cheap beside the decoding. */
static void
constant_row(spill_job *j, const tex_image *shape, uint32_t y, const unsigned char *row)
{
    size_t px = (size_t)shape->nchannels * tex_type_size(shape->type);
    if (y == 0) {
        j->constant = px <= sizeof j->f->constant_texel;
        if (j->constant)
            memcpy(j->f->constant_texel, row, px);
    }
    for (uint32_t x = 0; j->constant && x < shape->width; x++)
        j->constant = memcmp(row + x * px, j->f->constant_texel, px) == 0;
}

static tex_result
spill_rows(void *ctx, const tex_image *shape, uint32_t y, const void *row, char err[TEX_ERR_LEN])
{
    spill_job *j = ctx;
    if (y == 0) {
        tex_result r = spill_begin(j, shape, err);
        if (r != TEX_OK)
            return r;
    }
    constant_row(j, shape, y, row);
    return tex_mip_chain_push(j->chain, row, err);
}

/* A tex__decode_budget's reserve, for the decode a spill_job takes rows from. */
static tex_result
spill_charge(void *ctx, uint64_t bytes, const char *what, char err[TEX_ERR_LEN])
{
    spill_job *j = ctx;
    tex_result r = tex__decode_reserve(j->ts, j->tc, bytes, what, err);
    if (r == TEX_OK)
        j->charged += bytes;
    return r;
}

/* The end of a spill that came to r, its decode's memory freed. */
static tex_result
spill_end(spill_job *j, tex_result r)
{
    tex__decode_release(j->ts, j->charged);
    if (r == TEX_OK && j->constant) {
        j->f->info.constant = true;
        if (j->f->associated && !j->f->raw) /* as the tiles will be */
            tex__unpremultiply(j->f->constant_texel, 1, j->f->info.nchannels, j->f->info.type);
        tex__constant_decode(j->f);
    }
    tex_mip_chain_free(j->chain);
    free(j->tiles);
    tex__cache_unreserve(j->ts, j->reserved); /* what no tile took: a decode cut short */
    if (j->kept) { /* tiles cut but not yet put into the cache, then any put in */
        for (uint32_t l = 0; l < j->f->info.nlevels; l++)
            for (uint32_t tx = 0; tx < j->f->levels[l].tiles_x; tx++)
                tex__tile_discard(j->ts, j->kept[j->tiles_at[l] + tx]);
        free(j->kept);
        /* A failed decode's tiles go; a constant file's go to the spill
         * file, since only a black wrap's lookups read its tiles. */
        if (r != TEX_OK || j->constant)
            tex__tiles_release(j->ts, j->tc, j->f, r == TEX_OK);
    }
    return r;
}

/* An EXR that is not MIP-mapped is decoded whole before its rows are
 * spilled: its image is charged like an interlaced PNG's. */
static tex_result
exr_charge(spill_job *spill, const tex__tiled_info *info, char err[TEX_ERR_LEN])
{
    char what[64];
    snprintf(what, sizeof what, "%s EXR %ux%u", info->tile_width ? "one-level tiled" : "scanline",
             info->width, info->height);
    uint64_t bytes =
        (uint64_t)info->width * info->height * info->nchannels * tex_type_size(info->type);
    return spill_charge(spill, bytes, what, err);
}

/* A tiled file with MIP levels (EXR or TIFF) is read tile by tile; any
 * other EXR or TIFF is decoded once, by rows, like a PNG. */
static tex_result
open_tiled(tex_system *ts, tex__file *f, tex__source source, const char *path, spill_job *spill,
           char err[TEX_ERR_LEN])
{
    tex__tiled_info info;
    tex_result      r = tex__tiled_open(source, path, &f->handle, &info, err);
    if (r != TEX_OK)
        return r;
    if (!info.tile_width || (info.nlevels == 1 && (info.width > 1 || info.height > 1))) {
        tex__tiled_close(&f->handle);
        if (source == TEX__SOURCE_EXR) /* read whole, then by rows (tex_image_read_rows()) */
            r = exr_charge(spill, &info, err);
        return r == TEX_OK ? tex_image_read_rows(path, spill_rows, spill, err) : r;
    }
    f->source = source;
    f->info.width = info.width;
    f->info.height = info.height;
    f->info.nchannels = info.nchannels;
    f->info.type = info.type;
    f->info.srgb = info.srgb && !f->raw;
    f->associated = info.associated;
    f->info.tiled_on_disk = true;
    tex__handle_opened(ts, f);
    r = levels_init(f, &f->handle, info.nlevels, info.tile_width, info.tile_height, err);
    if (r != TEX_OK)
        tex__handle_close(ts, f);
    return r;
}

static tex_result
open_file_gated(tex_system *ts, tex_thread *tc, tex__file *f, char err[TEX_ERR_LEN])
{
    tex__read_from     src;
    tex_result         r = tex__read_open(ts, f, &src, err);
    spill_job          spill = {.ts = ts, .tc = tc, .f = f};
    tex__decode_budget budget = {spill_charge, &spill};
    if (r != TEX_OK)
        return r;
    switch (tex__sniff(src.path, err, &r)) {
    case TEX__FORMAT_EXR:
        r = open_tiled(ts, f, TEX__SOURCE_EXR, src.path, &spill, err);
        break;
    case TEX__FORMAT_TIFF:
        r = open_tiled(ts, f, TEX__SOURCE_TIFF, src.path, &spill, err);
        break;
    case TEX__FORMAT_PNG:
        r = tex__png_read_rows(src.path, spill_rows, &spill, &budget, err);
        break;
    case TEX__FORMAT_JPEG:
        r = tex__jpeg_read_rows(src.path, spill_rows, &spill, &budget, err);
        break;
    default:
        break; /* sniffing said why */
    }
    tex__read_close(&src);
    return spill_end(&spill, r);
}

/* A place among the max_decoding whole-image decodes, and giving it back. */
static void
decode_enter(tex_system *ts)
{
    pthread_mutex_lock(&ts->decode_lock);
    while (ts->decoding >= ts->max_decoding)
        pthread_cond_wait(&ts->decode_free, &ts->decode_lock);
    ts->decoding++;
    pthread_mutex_unlock(&ts->decode_lock);
}

static void
decode_leave(tex_system *ts)
{
    pthread_mutex_lock(&ts->decode_lock);
    ts->decoding--;
    pthread_cond_signal(&ts->decode_free);
    pthread_mutex_unlock(&ts->decode_lock);
}

static tex_result
open_file(tex_system *ts, tex_thread *tc, tex__file *f, char err[TEX_ERR_LEN])
{
    decode_enter(ts); /* a tiled file decodes nothing, but opening it is brief */
    tex_result r = open_file_gated(ts, tc, f, err);
    decode_leave(ts);
    return r;
}

static tex_result open_locked(tex_system *ts, tex_thread *tc, tex__file *f);

/* One declared file (tex_files_declare()) that nobody has begun, opened by
 * a thread that would otherwise wait; false when none is left to try. */
static bool
help_open(tex_system *ts, tex_thread *tc)
{
    /* Relaxed: the index only hands each declared file to one helper; the
     * file's lock and state order its opening. */
    size_t i = atomic_fetch_add_explicit(&ts->declared_next, 1, memory_order_relaxed);
    if (i >= ts->ndeclared)
        return false;
    tex__file *g = ts->declared[i];
    /* Relaxed: a hint; the state is read again under g's lock. */
    if (atomic_load_explicit(&g->state, memory_order_relaxed) == TEX__UNOPENED &&
        pthread_mutex_trylock(&g->lock) == 0)
        (void)open_locked(ts, tc, g); /* its error is reported; its own lookups return it */
    return true;
}

/* Takes f's lock; while another thread holds it (opening f, mostly), opens
 * declared files nobody has begun instead of sleeping. False if f became
 * READY or BROKEN meanwhile (its lock not taken). Holds no other file's
 * lock while it waits, so opening one under it keeps the lock order. */
static bool
file_lock_helping(tex_system *ts, tex_thread *tc, tex__file *f)
{
    while (pthread_mutex_trylock(&f->lock) != 0) {
        if (!help_open(ts, tc)) {
            pthread_mutex_lock(&f->lock);
            return true;
        }
        /* Acquire: as in tex__file_ready_slow(). */
        if (atomic_load_explicit(&f->state, memory_order_acquire) != TEX__UNOPENED)
            return false;
    }
    return true;
}

tex_result
tex__file_ready_slow(tex_system *ts, tex_thread *tc, tex__file *f)
{
    /* Acquire pairs with the releases in open_locked() and
     * tex__file_break(): READY means the fields are set, BROKEN that
     * `error` is. */
    int state = atomic_load_explicit(&f->state, memory_order_acquire);
    if (state == TEX__READY)
        return TEX_OK;
    if (state == TEX__BROKEN)
        return f->error;
    if (!file_lock_helping(ts, tc, f))
        return tex__file_ready_slow(ts, tc, f); /* settled while this thread helped */
    return open_locked(ts, tc, f);
}

/* Opens f if nobody has (its lock held by the caller), unlocks it and
 * reports a failure, once; f's result. */
static tex_result
open_locked(tex_system *ts, tex_thread *tc, tex__file *f)
{
    char err[TEX_ERR_LEN] = "";
    bool report = false;
    /* Relaxed: f->lock orders everything written under it. */
    if (atomic_load_explicit(&f->state, memory_order_relaxed) == TEX__UNOPENED) {
        if (f->udim_prefix) {
            snprintf(err, sizeof err, "a <UDIM> name is a pattern, not a file");
            f->error = TEX_ERR_INVALID;
        } else {
            f->error = open_file(ts, tc, f, err);
        }
        report = f->error != TEX_OK;
        tex__count(report ? &tc->counters.file_errors : &tc->counters.files_opened, 1);
        /* Release publishes the file's fields with its state. */
        atomic_store_explicit(&f->state, report ? TEX__BROKEN : TEX__READY, memory_order_release);
    }
    tex_result r = f->error;
    pthread_mutex_unlock(&f->lock);
    if (report) /* outside the lock: the callback may call back into us */
        tex__report(ts, f->name, err);
    return r;
}
