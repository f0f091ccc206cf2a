/* The OpenEXR shim as a module, loaded on first use (module_internal.h
 * says how, and where it is looked for: $RT_EXR_MODULE if set, else the
 * build tree's lib/librt_exr.so; nothing is searched for). The TIFF codec
 * is loaded the same way (tiff_module.h).
 *
 * OpenEXR, Imath and their threads are a start-up cost (mapping and
 * relocating them) that every process would pay, a good share of a small
 * render's whole run (docs/render-performance.md, "Start-up"), and a
 * render that reads no EXR texture and writes a PNG never calls them. So
 * by default (CMake's RT_LAZY_MODULES) io_exr.cpp is built as a module of its
 * own, librt_exr.so, which exports one symbol: a table of the tex_exr.h
 * functions. io_exr_lazy.c defines those functions for everyone else: the
 * first call loads the module (dlopen), every call goes through the table.
 * With RT_LAZY_MODULES off (the fuzz preset: libFuzzer counts coverage only
 * in code present at start-up) io_exr.cpp is linked in directly and neither
 * this table nor io_exr_lazy.c is built. */
#ifndef TEX_EXR_MODULE_H
#define TEX_EXR_MODULE_H

#include "tex_exr.h"

#define TEX_EXR_MODULE_SYMBOL "tex_exr_module_table"

/* What the module exports under TEX_EXR_MODULE_SYMBOL. size is
 * sizeof(tex_exr_module) when it was built: a module from another build of
 * this code is refused rather than called through a different table. */
typedef struct tex_exr_module {
    size_t size;
    tex_result (*open)(const char *path, tex_exr **out, tex_exr_info *info, char err[TEX_ERR_LEN]);
    void (*close)(tex_exr *f);
    bool (*level_size)(const tex_exr *f, uint32_t level, uint32_t *width, uint32_t *height);
    tex_result (*read_tile)(tex_exr *f, uint32_t level, uint32_t tx, uint32_t ty, void *out,
                            char err[TEX_ERR_LEN]);
    tex_result (*read_image)(tex_exr *f, uint32_t level, tex_image *out, char err[TEX_ERR_LEN]);
    bool (*attr_string)(const tex_exr *f, const char *name, const char **value);
    bool (*attr_float)(const tex_exr *f, const char *name, float *value);
    tex_result (*write_scanline_opts)(const char *path, const tex_image *img,
                                      const tex_exr_attr *attrs, size_t nattrs,
                                      const tex_exr_write_opts *opts, char err[TEX_ERR_LEN]);
    tex_result (*write_tiled)(const char *path, const tex_image *levels, uint32_t nlevels,
                              uint32_t tile_size, const tex_exr_attr *attrs, size_t nattrs,
                              char err[TEX_ERR_LEN]);
    tex_result (*tiled_begin)(const char *path, const tex_image *shape, uint32_t nlevels,
                              uint32_t tile_size, const tex_exr_attr *attrs, size_t nattrs,
                              tex_exr_tiled_writer **w, char err[TEX_ERR_LEN]);
    tex_result (*tiled_put)(tex_exr_tiled_writer *w, uint32_t level, uint32_t y0,
                            const tex_image *band, char err[TEX_ERR_LEN]);
    tex_result (*tiled_end)(tex_exr_tiled_writer *w, bool ok, char err[TEX_ERR_LEN]);
    bool (*attr_number)(const tex_exr *f, const char *name, double *value);
    uint64_t (*fast_chunks)(const tex_exr *f);
} tex_exr_module;

#endif
