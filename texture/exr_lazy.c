/* tex_exr.h's functions, through the OpenEXR module loaded on first use
 * (exr_module.h says why and where it is looked for). */
#include "exr_module.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const tex_exr_module *module;           /* set once by load(); NULL: failed */
static char                  why[TEX_ERR_LEN]; /* load()'s reason when it failed */
static pthread_once_t        load_once = PTHREAD_ONCE_INIT;

/* The module at `path`, or NULL with why saying so. Never unloaded: OpenEXR
 * keeps process-wide state (its thread pool, its attribute registry). */
static const tex_exr_module *
try_path(const char *path)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(why, sizeof why, "%s", dlerror());
        return NULL;
    }
    const tex_exr_module *m = dlsym(h, TEX_EXR_MODULE_SYMBOL);
    if (!m || m->size != sizeof *m) {
        snprintf(why, sizeof why, "%.200s: not this build's OpenEXR module", path);
        dlclose(h);
        return NULL;
    }
    return m;
}

static void
load(void)
{
    const char *env = getenv("RT_EXR_MODULE");
    if (env && *env) {
        module = try_path(env);
        return;
    }
    module = try_path(TEX_EXR_MODULE_PATH);
    if (!module) { /* a build tree moved, or the module deleted */
        size_t n = strlen(why);
        snprintf(why + n, sizeof why - n, " (RT_EXR_MODULE may name where it is now)");
    }
}

/* The module, or NULL with err saying why it could not be loaded. Safe
 * from any thread: pthread_once orders load()'s writes before every
 * caller's reads. */
static const tex_exr_module *
get(char err[TEX_ERR_LEN])
{
    pthread_once(&load_once, load);
    if (!module && err)
        snprintf(err, TEX_ERR_LEN, "OpenEXR support did not load: %.220s", why);
    return module;
}

bool
tex_exr_available(char err[TEX_ERR_LEN])
{
    return get(err) != NULL;
}

tex_result
tex_exr_open(const char *path, tex_exr **out, tex_exr_info *info, char err[TEX_ERR_LEN])
{
    const tex_exr_module *m = get(err);
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
    if (f) /* an open file means the module is loaded */
        get(NULL)->close(f);
}

/* A file (or NULL, which each function refuses as the module does) needs
 * the module; without it there can be no open file, only NULL. */
bool
tex_exr_level_size(const tex_exr *f, uint32_t level, uint32_t *width, uint32_t *height)
{
    const tex_exr_module *m = get(NULL);
    return m && m->level_size(f, level, width, height);
}

tex_result
tex_exr_read_tile(tex_exr *f, uint32_t level, uint32_t tx, uint32_t ty, void *out,
                  char err[TEX_ERR_LEN])
{
    const tex_exr_module *m = get(err);
    return m ? m->read_tile(f, level, tx, ty, out, err) : TEX_ERR_UNSUPPORTED;
}

tex_result
tex_exr_read_image(tex_exr *f, uint32_t level, tex_image *out, char err[TEX_ERR_LEN])
{
    const tex_exr_module *m = get(err);
    if (!m && out)
        out->pixels = NULL;
    return m ? m->read_image(f, level, out, err) : TEX_ERR_UNSUPPORTED;
}

bool
tex_exr_attr_string(const tex_exr *f, const char *name, const char **value)
{
    const tex_exr_module *m = get(NULL);
    return m && m->attr_string(f, name, value);
}

bool
tex_exr_attr_float(const tex_exr *f, const char *name, float *value)
{
    const tex_exr_module *m = get(NULL);
    return m && m->attr_float(f, name, value);
}

bool
tex_exr_attr_number(const tex_exr *f, const char *name, double *value)
{
    const tex_exr_module *m = get(NULL);
    return m && m->attr_number(f, name, value);
}

tex_result
tex_exr_write_scanline_opts(const char *path, const tex_image *img, const tex_exr_attr *attrs,
                            size_t nattrs, const tex_exr_write_opts *opts, char err[TEX_ERR_LEN])
{
    const tex_exr_module *m = get(err);
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
    const tex_exr_module *m = get(err);
    return m ? m->write_tiled(path, levels, nlevels, tile_size, attrs, nattrs, err)
             : TEX_ERR_UNSUPPORTED;
}

tex_result
tex_exr_tiled_begin(const char *path, const tex_image *shape, uint32_t nlevels, uint32_t tile_size,
                    const tex_exr_attr *attrs, size_t nattrs, tex_exr_tiled_writer **w,
                    char err[TEX_ERR_LEN])
{
    const tex_exr_module *m = get(err);
    *w = NULL;
    return m ? m->tiled_begin(path, shape, nlevels, tile_size, attrs, nattrs, w, err)
             : TEX_ERR_UNSUPPORTED;
}

/* A writer exists only once begin has loaded the module. */
tex_result
tex_exr_tiled_put(tex_exr_tiled_writer *w, uint32_t level, uint32_t y0, const tex_image *band,
                  char err[TEX_ERR_LEN])
{
    return get(NULL)->tiled_put(w, level, y0, band, err);
}

tex_result
tex_exr_tiled_end(tex_exr_tiled_writer *w, bool ok, char err[TEX_ERR_LEN])
{
    return get(NULL)->tiled_end(w, ok, err);
}
