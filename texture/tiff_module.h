/* The TIFF codec as a module, loaded on first use (module_internal.h says
 * how, and where it is looked for: $RT_TIFF_MODULE if set, else the build
 * tree's lib/librt_tiff.so; nothing is searched for).
 *
 * libtiff brings libwebp, libzstd, liblzma, libLerc, libjbig and
 * libdeflate; mapping them is a start-up cost every process would pay
 * (docs/render-performance.md, "Start-up"), and most renders never read a
 * TIFF. So by default (CMake's RT_LAZY_MODULES) io_tiff.c
 * is built as librt_tiff.so, the only thing linked to libtiff, which
 * exports one symbol: a table of the tex_tiff.h functions. io_tiff_lazy.c
 * defines those functions for everyone else: the first call that needs
 * the module loads it, every call goes through the table. With
 * RT_LAZY_MODULES off (the fuzz preset: libFuzzer counts coverage only in
 * code present at start-up) io_tiff.c is linked in directly and neither this
 * table nor io_tiff_lazy.c is built. */
#ifndef TEX_TIFF_MODULE_H
#define TEX_TIFF_MODULE_H

#include "tex_tiff.h"

#define TEX_TIFF_MODULE_SYMBOL "tex_tiff_module_table"

/* What the module exports under TEX_TIFF_MODULE_SYMBOL. size is
 * sizeof(tex_tiff_module) when it was built: a module from another build
 * of this code is refused rather than called through a different table. */
typedef struct tex_tiff_module {
    size_t size;
    tex_result (*open)(const char *path, tex_tiff **out, tex_tiff_info *info,
                       char err[TEX_ERR_LEN]);
    void (*close)(tex_tiff *f);
    bool (*level_size)(const tex_tiff *f, uint32_t level, uint32_t *width, uint32_t *height);
    tex_result (*read_tile)(tex_tiff *f, uint32_t level, uint32_t tx, uint32_t ty, void *out,
                            char err[TEX_ERR_LEN]);
    tex_result (*read_rows)(const char *path, tex_rows_fn fn, void *ctx, char err[TEX_ERR_LEN]);
    tex_result (*tiled_begin)(const char *path, const tex_image *shape, uint32_t nlevels,
                              uint32_t tile_size, const char *software, tex_tiff_writer **w,
                              char err[TEX_ERR_LEN]);
    tex_result (*tiled_put)(tex_tiff_writer *w, uint32_t level, uint32_t y0, const tex_image *band,
                            char err[TEX_ERR_LEN]);
    tex_result (*tiled_end)(tex_tiff_writer *w, bool ok, char err[TEX_ERR_LEN]);
} tex_tiff_module;

#endif
