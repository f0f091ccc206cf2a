/* Allowed folders (see rt_paths.h). */
#define _XOPEN_SOURCE 700 /* realpath() */
#include "rt_paths.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct rt_paths {
    size_t n;
    char  *dirs[]; /* realpath()'d */
};

rt_result
rt_paths_create(const char *const *dirs, size_t n, rt_paths **out)
{
    rt_paths *p = calloc(1, sizeof *p + n * sizeof p->dirs[0]);
    *out = NULL;
    if (!p)
        return RT_ERR_NOMEM;
    for (size_t i = 0; i < n; i++) {
        char *real = realpath(dirs[i], NULL);
        if (real)
            p->dirs[p->n++] = real;
        else if (errno == ENOMEM) {
            rt_paths_destroy(p);
            return RT_ERR_NOMEM;
        }
    }
    *out = p;
    return RT_OK;
}

void
rt_paths_destroy(rt_paths *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->n; i++)
        free(p->dirs[i]);
    free(p);
}

bool
rt_paths_allow(const rt_paths *p, const char *path)
{
    if (!p)
        return true;
    char *real = realpath(path, NULL);
    if (!real)
        return true;
    bool ok = false;
    for (size_t i = 0; i < p->n && !ok; i++) {
        size_t n = strlen(p->dirs[i]);
        ok = strncmp(real, p->dirs[i], n) == 0 &&
             (real[n] == '/' || real[n] == '\0' || (n == 1 && p->dirs[i][0] == '/'));
    }
    free(real);
    return ok;
}
