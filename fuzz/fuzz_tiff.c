/* Fuzz target: the TIFF reader (tex_tiff.h): opening a file and its chain
 * of MIP levels, a few tiles of each level, and level 0 by rows (the path
 * a TIFF in strips, and any TIFF read whole, take). Checks the reader's
 * contract: an info within the limits, tiles only where the levels have
 * them, rows of the announced shape in order, one-line errors. */
#include "fuzz_input.h"
#include "tex_tiff.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Decode by rows only while level 0 is small (the limits allow far more),
 * so each input takes milliseconds. */
#define FUZZ_MAX_WORK_PIXELS (1u << 18)

static void
check_info(const tex_tiff_info *info)
{
    if (info->width == 0 || info->height == 0 || info->width > TEX_MAX_DIM ||
        info->height > TEX_MAX_DIM || (uint64_t)info->width * info->height > TEX_MAX_PIXELS ||
        info->nchannels < 1 || info->nchannels > 4 || info->nlevels < 1 ||
        info->nlevels > TEX_TIFF_MAX_LEVELS || info->type > TEX_TYPE_FLOAT ||
        (!info->tiled && info->nlevels != 1))
        fuzz_fail("TIFF info out of its documented range");
    if (info->tiled && ((uint64_t)info->tile_width * info->tile_height == 0 ||
                        (uint64_t)info->tile_width * info->tile_height > TEX_TIFF_MAX_TILE_PIXELS))
        fuzz_fail("TIFF tile size out of its documented range");
}

typedef struct tile_job {
    tex_tiff *f;
    uint32_t  level;
    void     *buf;
} tile_job;

static int
tile_read(void *ctx, uint32_t tx, uint32_t ty, char *err)
{
    tile_job *j = ctx;
    return tex_tiff_read_tile(j->f, j->level, tx, ty, j->buf, err) != TEX_OK;
}

static void
read_tiles(tex_tiff *f, const tex_tiff_info *info, uint32_t level)
{
    uint32_t w, h;
    if (!tex_tiff_level_size(f, level, &w, &h) || w == 0 || h == 0)
        fuzz_fail("a level without a size");
    size_t tile =
        (size_t)info->tile_width * info->tile_height * info->nchannels * tex_type_size(info->type);
    tile_job j = {.f = f, .level = level, .buf = malloc(tile)};
    if (!j.buf)
        return;
    fuzz_tiles_read((w + info->tile_width - 1) / info->tile_width,
                    (h + info->tile_height - 1) / info->tile_height, tile_read, &j, TEX_ERR_LEN);
    free(j.buf);
}

typedef struct rows_seen {
    tex_tiff_info info;
    uint32_t      next;
} rows_seen;

static tex_result
row_take(void *ctx, const tex_image *shape, uint32_t y, const void *row, char err[TEX_ERR_LEN])
{
    (void)row, (void)err;
    rows_seen *s = ctx;
    if (y != s->next++ || shape->width != s->info.width || shape->height != s->info.height ||
        shape->nchannels != s->info.nchannels || shape->type != s->info.type || y >= shape->height)
        fuzz_fail("rows out of order or of another shape than announced");
    return TEX_OK;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char   *path = fuzz_file(data, size);
    tex_tiff     *f = NULL;
    tex_tiff_info info;
    char          err[TEX_ERR_LEN];
    if (tex_tiff_open(path, &f, &info, err) != TEX_OK) {
        fuzz_check_err(err, sizeof err);
        if (f)
            fuzz_fail("a failed open left a handle");
        return 0;
    }
    check_info(&info);
    for (uint32_t l = 0; info.tiled && l < info.nlevels; l++)
        read_tiles(f, &info, l);
    tex_tiff_close(f);
    if ((uint64_t)info.width * info.height <= FUZZ_MAX_WORK_PIXELS) {
        rows_seen s = {.info = info};
        if (tex_tiff_read_rows(path, row_take, &s, err) != TEX_OK)
            fuzz_check_err(err, sizeof err);
        else if (s.next != info.height)
            fuzz_fail("a read by rows ended early without an error");
    }
    return 0;
}
