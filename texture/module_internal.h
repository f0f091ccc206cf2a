/* A part of the texture library built as a module of its own and loaded on
 * its first use: the OpenEXR shim (exr_module.h) and the TIFF codec
 * (tiff_module.h). Private to texture/.
 *
 * Why: a library linked into `render` is mapped and relocated by every
 * run, before main, whether or not the run calls it (OpenEXR with Imath,
 * libtiff with its codecs: what each cost is in docs/render-performance.md,
 * "Start-up"). A module exports one
 * symbol, a table of its header's functions whose first member is the
 * table's size. The library's own definitions of those functions (io_exr_lazy.c,
 * io_tiff_lazy.c) call tex__module_get(), which loads the module on the first
 * call, and call through the table.
 *
 * Where a module is: the path in its environment variable if that is set
 * and not empty, else the path it was built at (the build tree's lib/).
 * Nothing is searched for: a search path near the program (/tmp/lib/...
 * for a program in /tmp/x/) would let whoever can write there run code in
 * every render. A module is never unloaded: its libraries may keep
 * process-wide state (OpenEXR's thread pool), and handles from it may be
 * open until exit. */
#ifndef TEX_MODULE_INTERNAL_H
#define TEX_MODULE_INTERNAL_H

#include "tex_image.h"

#include <pthread.h>
#include <stddef.h>

typedef struct tex__module {
    const char *name;   /* what messages call it: "OpenEXR", "TIFF" */
    const char *env;    /* the variable that may name another path */
    const char *path;   /* where it was built */
    const char *symbol; /* its table */
    size_t      size;   /* the table's size in this build */
    /* Written once, by the first tex__module_get(), under `once`: */
    pthread_once_t once;
    const void    *table;            /* NULL: it did not load */
    char           why[TEX_ERR_LEN]; /* then the reason */
} tex__module;

/* A static tex__module's initialiser: `table_type` is the table's type,
 * whose first member is a size_t holding its sizeof. */
#define TEX__MODULE_INIT(name, env, path, symbol, table_type)                                      \
    {                                                                                              \
        (name), (env), (path), (symbol), sizeof(table_type), PTHREAD_ONCE_INIT, NULL, ""           \
    }

/* The module's table, loading it on the first call (dlopen, RTLD_NOW |
 * RTLD_LOCAL: its libraries' symbols stay its own). NULL when it cannot be
 * loaded: no file there, a file that is not a module, or a module of
 * another build (its table's size differs); then err, unless NULL, says
 * "TIFF support did not load: REASON" in one line, and every later call
 * says the same without trying again. Safe from any thread: pthread_once
 * orders the load's writes before every caller's reads. */
const void *tex__module_get(tex__module *m, char err[TEX_ERR_LEN]);

#endif
