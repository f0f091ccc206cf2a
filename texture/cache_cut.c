/* A file decoded whole (PNG, JPEG; an EXR or TIFF without MIP levels), cut
 * into tiles as its rows arrive: every MIP level built from the rows as
 * they come, each level's rows cut into its tiles, the tiles kept in the
 * cache or written to the spill file (tex__cut_file()). */
#include "tex_io_internal.h"
#include "texture_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Spilling a decoded image (PNG, JPEG, scanline EXR) as its rows arrive:
 * level 0's rows and, through a MIP chain, every level's, each row cut into
 * its level's rows of tiles as it comes (tex_mip_chain_new(), bands of one
 * row: no copy of the row before it is cut). No level is ever whole in a
 * buffer of its own: a 16384x16384 16-bit texture took 2 GB when level 0
 * was decoded whole and levels were made from it.
 *
 * Where the tiles go: if all of the file's fit in what the cache has free
 * and it has never had to evict (tex__cache_reserve() reserves the room),
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
    uint64_t       reserved; /* kept: room reserved for tiles not yet made */
    unsigned char *tiles;    /* spilled: each level's rows of tiles being cut, level 0's first */
    tex__tile    **kept; /* kept (or NULL): each level's row of tiles being cut, level 0's first */
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
 * (a tile read back holds its level's rows alone, cache_tiles.c): a level
 * one tile wide, below 64 rows, spills its rows, not 64 of them (nearly
 * half of a 128x128 file's tiles were such padding). Wider levels write
 * their last row of tiles whole, the rows below zeroed, in one write;
 * nothing reads those rows back. */
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
    size_t               px = f->tile_bytes / (TEX__TILE * TEX__TILE);
    uint32_t             w = row->width - x0 < TEX__TILE ? row->width - x0 : TEX__TILE;
    unsigned char       *out = tile + (size_t)ty * TEX__TILE * px;
    const unsigned char *in = (const unsigned char *)row->pixels + x0 * px;
    if (w == TEX__TILE) {
        /* A whole row is px pieces of TEX__TILE bytes: copies of a size
         * the compiler knows, which it makes a move or two each, where a
         * call to memcpy() for every tile's row cost more than the bytes. */
        for (size_t i = 0; i < px; i++)
            memcpy(out + i * TEX__TILE, in + i * TEX__TILE, TEX__TILE);
    } else {
        memcpy(out, in, w * px);
        memset(out + w * px, 0, (TEX__TILE - w) * px);
    }
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
 * the row of tiles put into the cache once complete (a tile of the last
 * row holds the level's rows, none below them: tex__tiles_new()). */
static tex_result
keep_band(spill_job *j, uint32_t l, uint32_t y, const tex_image *row, char err[TEX_ERR_LEN])
{
    tex__level *lv = &j->f->levels[l];
    tex__tile **tiles = j->kept + j->tiles_at[l];
    uint32_t    ty = y % TEX__TILE, first = y / TEX__TILE * lv->tiles_x;
    if (ty == 0) {
        uint64_t bytes = tex__tiles_new(j->ts, j->f, l, first, lv->tiles_x, tiles);
        if (!bytes) {
            snprintf(err, TEX_ERR_LEN, "out of memory for tiles");
            return TEX_ERR_NOMEM;
        }
        j->reserved -= bytes; /* counted in the cache's memory now */
        tex__cache_unreserve(j->ts, bytes);
    }
    for (uint32_t tx = 0; tx < lv->tiles_x; tx++)
        cut_row(j->f, tiles[tx]->texels, row, tx * TEX__TILE, ty);
    if (ty + 1 < TEX__TILE && y + 1 < lv->height)
        return TEX_OK;
    tex__tiles_keep(j->ts, j->tc, tiles, lv->tiles_x);
    memset(tiles, 0, lv->tiles_x * sizeof *tiles); /* the cache's now */
    return TEX_OK;
}

/* The MIP chain's band callback: row y of level l (a band of one row). */
static tex_result
take_band(void *ctx, uint32_t l, uint32_t y, const tex_image *row, char err[TEX_ERR_LEN])
{
    spill_job *j = ctx;
    return j->kept ? keep_band(j, l, y, row, err) : spill_band(j, l, y, row, err);
}

/* Where each level's rows of tiles go while they are cut: kept, a row of
 * tile pointers per level; spilled, a few rows of tiles per level. */
static tex_result
spill_buffers(spill_job *j, char err[TEX_ERR_LEN])
{
    tex__file *f = j->f;
    size_t     at = 0;
    j->reserved = tex__cache_reserve(j->ts, f);
    bool keep = j->reserved > 0;
    for (uint32_t l = 0; l < f->info.nlevels; l++) {
        tex__level *lv = &f->levels[l];
        size_t      row_bytes = (size_t)lv->tiles_x * f->tile_bytes;
        uint32_t    stage = (uint32_t)(SPILL_STAGE_BYTES / row_bytes);
        j->stage[l] = stage < 1 ? 1 : stage < lv->tiles_y ? stage : lv->tiles_y;
        j->tiles_at[l] = at;
        at += keep ? lv->tiles_x : j->stage[l] * row_bytes;
    }
    if (keep)
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
    tex__sample_prepare(f);
    uint32_t   nlevels = tex_mip_levels(s.width, s.height);
    tex_result r = tex__levels_init(f, NULL, nlevels, TEX__TILE, TEX__TILE, err);
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

tex_result
tex__cut_file(tex_system *ts, tex_thread *tc, tex__file *f, tex__format format, int fd,
              const char *path, const tex__tiled_info *info, char err[TEX_ERR_LEN])
{
    spill_job          j = {.ts = ts, .tc = tc, .f = f};
    tex__decode_budget budget = {spill_charge, &j};
    tex_result         r = TEX_OK;
    switch (format) {
    case TEX__FORMAT_PNG:
        r = tex__png_read_rows(fd, spill_rows, &j, &budget, err);
        break;
    case TEX__FORMAT_JPEG:
        r = tex__jpeg_read_rows(fd, spill_rows, &j, &budget, err);
        break;
    default: /* an EXR is read whole, then by rows (tex_image_read_rows()); a TIFF by rows */
        if (format == TEX__FORMAT_EXR)
            r = exr_charge(&j, info, err);
        if (r == TEX_OK)
            r = tex_image_read_rows(path, spill_rows, &j, err);
        break;
    }
    return spill_end(&j, r);
}
