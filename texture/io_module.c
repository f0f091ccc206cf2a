/* Modules of the texture library loaded on first use (module_internal.h). */
#include "module_internal.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The module load() is to load. pthread_once() passes its routine nothing,
 * and runs it on the thread that calls it, which sets this just before. */
static _Thread_local tex__module *loading;

/* The table at `path`, or NULL with m->why saying why. */
static const void *
try_path(tex__module *m, const char *path)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(m->why, sizeof m->why, "%s", dlerror());
        return NULL;
    }
    const size_t *table = dlsym(h, m->symbol); /* its first member: its size */
    if (!table || *table != m->size) {
        snprintf(m->why, sizeof m->why, "%.200s: not this build's %s module", path, m->name);
        dlclose(h);
        return NULL;
    }
    return table;
}

static void
load(void)
{
    tex__module *m = loading;
    const char  *env = getenv(m->env);
    if (env && *env) {
        m->table = try_path(m, env);
        return;
    }
    m->table = try_path(m, m->path);
    if (!m->table) { /* a build tree moved, or the module deleted */
        size_t n = strlen(m->why);
        snprintf(m->why + n, sizeof m->why - n, " (%s may name where it is now)", m->env);
    }
}

const void *
tex__module_get(tex__module *m, char err[TEX_ERR_LEN])
{
    loading = m;
    pthread_once(&m->once, load);
    if (!m->table && err)
        snprintf(err, TEX_ERR_LEN, "%s support did not load: %.220s", m->name, m->why);
    return m->table;
}
