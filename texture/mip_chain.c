/* A MIP chain built from a stream of rows (tex_image.h): one downsampler
 * between each level and the next, and one band of rows per level. */
#include "tex_image.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct chain_level {
    tex_image        band; /* band_rows rows of the level's width */
    uint32_t         rows; /* the level's rows taken so far */
    uint32_t         height;
    tex_downsampler *down; /* to the next level; NULL on the last */
} chain_level;

struct tex_mip_chain {
    uint32_t    nlevels, band_rows;
    tex_band_fn band;
    void       *ctx;
    chain_level levels[];
};

void
tex_mip_chain_free(tex_mip_chain *c)
{
    if (!c)
        return;
    for (uint32_t l = 0; l < c->nlevels; l++) {
        tex_image_free(&c->levels[l].band);
        tex_downsampler_free(c->levels[l].down);
    }
    free(c);
}

tex_result
tex_mip_chain_new(const tex_image *shape, uint32_t nlevels, uint32_t band_rows, tex_band_fn band,
                  void *ctx, tex_mip_chain **out, char err[TEX_ERR_LEN])
{
    *out = NULL;
    if (nlevels < 1 || nlevels > tex_mip_levels(shape->width, shape->height) || band_rows < 1 ||
        !band) {
        snprintf(err, TEX_ERR_LEN, "a MIP chain of %u levels in bands of %u rows", nlevels,
                 band_rows);
        return TEX_ERR_INVALID;
    }
    tex_mip_chain *c = calloc(1, sizeof *c + nlevels * sizeof c->levels[0]);
    if (!c) {
        snprintf(err, TEX_ERR_LEN, "out of memory building MIP levels");
        return TEX_ERR_NOMEM;
    }
    *c = (tex_mip_chain){.nlevels = nlevels, .band_rows = band_rows, .band = band, .ctx = ctx};
    tex_image  level = *shape;
    tex_result r = TEX_OK;
    for (uint32_t l = 0; l < nlevels && r == TEX_OK; l++) {
        chain_level *cl = &c->levels[l];
        cl->height = level.height;
        uint32_t rows = band_rows < level.height ? band_rows : level.height;
        r = tex_image_alloc(&cl->band, level.width, rows, level.nchannels, level.type, err);
        cl->band.srgb = level.srgb;
        if (r == TEX_OK && l + 1 < nlevels)
            r = tex_downsampler_new(&level, &cl->down, err);
        level.width = level.width > 1 ? level.width / 2 : 1;
        level.height = level.height > 1 ? level.height / 2 : 1;
    }
    if (r != TEX_OK) {
        tex_mip_chain_free(c);
        return r;
    }
    *out = c;
    return TEX_OK;
}

/* Level l's next row into its band, and the band handed over once full.
 * A band of one row is the row as given: copying it would only move it
 * (and a caller that cuts tiles from it, as the texture system does,
 * copies it once, not twice). */
static tex_result
band_take(tex_mip_chain *c, chain_level *cl, uint32_t l, const void *row, char err[TEX_ERR_LEN])
{
    tex_image view = cl->band;
    uint32_t  in_band = cl->rows % c->band_rows;
    if (c->band_rows == 1) {
        view.pixels = (void *)row;
    } else {
        size_t row_bytes = (size_t)view.width * view.nchannels * tex_type_size(view.type);
        memcpy((char *)view.pixels + in_band * row_bytes, row, row_bytes);
    }
    cl->rows++;
    if (in_band + 1 < c->band_rows && cl->rows < cl->height)
        return TEX_OK;
    view.height = in_band + 1;
    return c->band(c->ctx, l, cl->rows - view.height, &view, err);
}

tex_result
tex_mip_chain_push(tex_mip_chain *c, const void *row, char err[TEX_ERR_LEN])
{
    /* Each level's row goes into its band, then down: at most one row of
     * the next level comes of it. */
    for (uint32_t l = 0; row && l < c->nlevels; l++) {
        chain_level *cl = &c->levels[l];
        if (cl->rows >= cl->height)
            return TEX_OK;
        tex_result r = band_take(c, cl, l, row, err);
        if (r != TEX_OK)
            return r;
        row = cl->down ? tex_downsampler_push(cl->down, row) : NULL;
    }
    return TEX_OK;
}
