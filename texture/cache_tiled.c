/* Tiled files on disk, EXR or TIFF: the one handle the tile cache reads
 * through (texture_internal.h). */
#include "texture_internal.h"

tex_result
tex__tiled_open(tex__source source, const char *path, tex__tiled *h, tex__tiled_info *info,
                char err[TEX_ERR_LEN])
{
    *h = (tex__tiled){0};
    if (source == TEX__SOURCE_TIFF) {
        tex_tiff_info t;
        tex_result    r = tex_tiff_open(path, &h->tiff, &t, err);
        if (r == TEX_OK)
            *info = (tex__tiled_info){.width = t.width,
                                      .height = t.height,
                                      .nchannels = t.nchannels,
                                      .nlevels = t.nlevels,
                                      .tile_width = t.tile_width,
                                      .tile_height = t.tile_height,
                                      .type = t.type,
                                      .srgb = t.srgb,
                                      .associated = t.associated};
        return r;
    }
    tex_exr_info e;
    tex_result   r = tex_exr_open(path, &h->exr, &e, err);
    if (r == TEX_OK)
        *info = (tex__tiled_info){.width = e.width,
                                  .height = e.height,
                                  .nchannels = e.nchannels,
                                  .nlevels = e.nlevels,
                                  .tile_width = e.tiled ? e.tile_width : 0,
                                  .tile_height = e.tiled ? e.tile_height : 0,
                                  .type = e.type,
                                  .srgb = false,
                                  .associated = e.nchannels == 2 || e.nchannels == 4};
    return r;
}

void
tex__tiled_close(tex__tiled *h)
{
    tex_exr_close(h->exr);
    tex_tiff_close(h->tiff);
    *h = (tex__tiled){0};
}

bool
tex__tiled_is_open(const tex__tiled *h)
{
    return h->exr || h->tiff;
}

bool
tex__tiled_level_size(const tex__tiled *h, uint32_t level, uint32_t *width, uint32_t *height)
{
    return h->tiff ? tex_tiff_level_size(h->tiff, level, width, height)
                   : tex_exr_level_size(h->exr, level, width, height);
}

tex_result
tex__tiled_read_tile(tex__tiled *h, uint32_t level, uint32_t tx, uint32_t ty, void *out,
                     char err[TEX_ERR_LEN])
{
    return h->tiff ? tex_tiff_read_tile(h->tiff, level, tx, ty, out, err)
                   : tex_exr_read_tile(h->exr, level, tx, ty, out, err);
}
