/* tex_tiff.h's functions, through the TIFF module loaded on first use
 * (tiff_module.h says why, module_internal.h how and where). */
#include "module_internal.h"
#include "tiff_module.h"

static tex__module module = TEX__MODULE_INIT("TIFF", "RT_TIFF_MODULE", TEX_TIFF_MODULE_PATH,
                                             TEX_TIFF_MODULE_SYMBOL, tex_tiff_module);

tex_result
tex_tiff_open(const char *path, tex_tiff **out, tex_tiff_info *info, char err[TEX_ERR_LEN])
{
    const tex_tiff_module *m = tex__module_get(&module, err);
    if (!m) {
        *out = NULL;
        return TEX_ERR_UNSUPPORTED;
    }
    return m->open(path, out, info, err);
}

/* A handle (a file or a writer) comes only from the module, so the module
 * is loaded; NULL is taken as io_tiff.c takes it: close ignores it, the others
 * dereference it. */
void
tex_tiff_close(tex_tiff *f)
{
    if (!f) /* NULL loads nothing */
        return;
    const tex_tiff_module *m = tex__module_get(&module, NULL); /* f came from it */
    m->close(f);
}

bool
tex_tiff_level_size(const tex_tiff *f, uint32_t level, uint32_t *width, uint32_t *height)
{
    const tex_tiff_module *m = tex__module_get(&module, NULL);
    return m->level_size(f, level, width, height);
}

tex_result
tex_tiff_read_tile(tex_tiff *f, uint32_t level, uint32_t tx, uint32_t ty, void *out,
                   char err[TEX_ERR_LEN])
{
    const tex_tiff_module *m = tex__module_get(&module, NULL);
    return m->read_tile(f, level, tx, ty, out, err);
}

tex_result
tex_tiff_read_rows(const char *path, tex_rows_fn fn, void *ctx, char err[TEX_ERR_LEN])
{
    const tex_tiff_module *m = tex__module_get(&module, err);
    return m ? m->read_rows(path, fn, ctx, err) : TEX_ERR_UNSUPPORTED;
}

tex_result
tex_tiff_tiled_begin(const char *path, const tex_image *shape, uint32_t nlevels, uint32_t tile_size,
                     const char *software, tex_tiff_writer **w, char err[TEX_ERR_LEN])
{
    const tex_tiff_module *m = tex__module_get(&module, err);
    *w = NULL;
    return m ? m->tiled_begin(path, shape, nlevels, tile_size, software, w, err)
             : TEX_ERR_UNSUPPORTED;
}

tex_result
tex_tiff_tiled_put(tex_tiff_writer *w, uint32_t level, uint32_t y0, const tex_image *band,
                   char err[TEX_ERR_LEN])
{
    const tex_tiff_module *m = tex__module_get(&module, NULL);
    return m->tiled_put(w, level, y0, band, err);
}

tex_result
tex_tiff_tiled_end(tex_tiff_writer *w, bool ok, char err[TEX_ERR_LEN])
{
    const tex_tiff_module *m = tex__module_get(&module, NULL);
    return m->tiled_end(w, ok, err);
}
