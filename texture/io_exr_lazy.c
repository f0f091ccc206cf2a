/* tex_exr.h's functions, through the OpenEXR module loaded on first use
 * (exr_module.h says why, module_internal.h how and where). */
#include "exr_module.h"
#include "module_internal.h"

static tex__module module = TEX__MODULE_INIT("OpenEXR", "RT_EXR_MODULE", TEX_EXR_MODULE_PATH,
                                             TEX_EXR_MODULE_SYMBOL, tex_exr_module);

bool
tex_exr_available(char err[TEX_ERR_LEN])
{
    return tex__module_get(&module, err) != NULL;
}

tex_result
tex_exr_open(const char *path, tex_exr **out, tex_exr_info *info, char err[TEX_ERR_LEN])
{
    const tex_exr_module *m = tex__module_get(&module, err);
    if (!m) {
        if (out)
            *out = NULL;
        return TEX_ERR_UNSUPPORTED;
    }
    return m->open(path, out, info, err);
}

void
tex_exr_close(tex_exr *f)
{
    if (!f) /* NULL loads nothing */
        return;
    const tex_exr_module *m = tex__module_get(&module, NULL); /* f came from it */
    m->close(f);
}

/* A file (or NULL, which each function refuses as the module does) needs
 * the module; without it there can be no open file, only NULL. */
bool
tex_exr_level_size(const tex_exr *f, uint32_t level, uint32_t *width, uint32_t *height)
{
    const tex_exr_module *m = tex__module_get(&module, NULL);
    return m && m->level_size(f, level, width, height);
}

tex_result
tex_exr_read_tile(tex_exr *f, uint32_t level, uint32_t tx, uint32_t ty, void *out,
                  char err[TEX_ERR_LEN])
{
    const tex_exr_module *m = tex__module_get(&module, err);
    return m ? m->read_tile(f, level, tx, ty, out, err) : TEX_ERR_UNSUPPORTED;
}

uint64_t
tex_exr_fast_chunks(const tex_exr *f)
{
    const tex_exr_module *m = tex__module_get(&module, NULL);
    return m ? m->fast_chunks(f) : 0;
}

tex_result
tex_exr_read_image(tex_exr *f, uint32_t level, tex_image *out, char err[TEX_ERR_LEN])
{
    const tex_exr_module *m = tex__module_get(&module, err);
    if (!m && out)
        out->pixels = NULL;
    return m ? m->read_image(f, level, out, err) : TEX_ERR_UNSUPPORTED;
}

bool
tex_exr_attr_string(const tex_exr *f, const char *name, const char **value)
{
    const tex_exr_module *m = tex__module_get(&module, NULL);
    return m && m->attr_string(f, name, value);
}

bool
tex_exr_attr_float(const tex_exr *f, const char *name, float *value)
{
    const tex_exr_module *m = tex__module_get(&module, NULL);
    return m && m->attr_float(f, name, value);
}

bool
tex_exr_attr_number(const tex_exr *f, const char *name, double *value)
{
    const tex_exr_module *m = tex__module_get(&module, NULL);
    return m && m->attr_number(f, name, value);
}

tex_result
tex_exr_write_scanline_opts(const char *path, const tex_image *img, const tex_exr_attr *attrs,
                            size_t nattrs, const tex_exr_write_opts *opts, char err[TEX_ERR_LEN])
{
    const tex_exr_module *m = tex__module_get(&module, err);
    return m ? m->write_scanline_opts(path, img, attrs, nattrs, opts, err) : TEX_ERR_UNSUPPORTED;
}

tex_result
tex_exr_write_scanline(const char *path, const tex_image *img, const tex_exr_attr *attrs,
                       size_t nattrs, char err[TEX_ERR_LEN])
{
    return tex_exr_write_scanline_opts(path, img, attrs, nattrs, NULL, err);
}

tex_result
tex_exr_write_tiled(const char *path, const tex_image *levels, uint32_t nlevels, uint32_t tile_size,
                    const tex_exr_attr *attrs, size_t nattrs, char err[TEX_ERR_LEN])
{
    const tex_exr_module *m = tex__module_get(&module, err);
    return m ? m->write_tiled(path, levels, nlevels, tile_size, attrs, nattrs, err)
             : TEX_ERR_UNSUPPORTED;
}

tex_result
tex_exr_tiled_begin(const char *path, const tex_image *shape, uint32_t nlevels, uint32_t tile_size,
                    const tex_exr_attr *attrs, size_t nattrs, tex_exr_tiled_writer **w,
                    char err[TEX_ERR_LEN])
{
    const tex_exr_module *m = tex__module_get(&module, err);
    *w = NULL;
    return m ? m->tiled_begin(path, shape, nlevels, tile_size, attrs, nattrs, w, err)
             : TEX_ERR_UNSUPPORTED;
}

/* A writer exists only once begin has loaded the module. */
tex_result
tex_exr_tiled_put(tex_exr_tiled_writer *w, uint32_t level, uint32_t y0, const tex_image *band,
                  char err[TEX_ERR_LEN])
{
    const tex_exr_module *m = tex__module_get(&module, NULL);
    return m->tiled_put(w, level, y0, band, err);
}

tex_result
tex_exr_tiled_end(tex_exr_tiled_writer *w, bool ok, char err[TEX_ERR_LEN])
{
    const tex_exr_module *m = tex__module_get(&module, NULL);
    return m->tiled_end(w, ok, err);
}
