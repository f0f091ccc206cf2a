/* Allowed folders (see rt_paths.h). */
#define _XOPEN_SOURCE 700 /* realpath() */
#include "rt_paths.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
rt_paths_allow_fd(const rt_paths *p, int fd)
{
    if (!p)
        return true;
    /* A hard link has no one folder: its other names may lie anywhere, so
     * one made inside a folder would read a file from outside it. A file
     * with no name is in no folder, whatever its old name says: through
     * /proc/self/fd a scene could otherwise read the process's own
     * unlinked files (the tile spill file, made in $TMPDIR, holds every
     * texture's texels, --envmap's too; an embedded image's memory file). */
    struct stat st;
    if (fstat(fd, &st) != 0 || (S_ISREG(st.st_mode) && st.st_nlink != 1))
        return false;
    char link[64], real[PATH_MAX];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t len = readlink(link, real, sizeof real - 1);
    if (len <= 0 || real[0] != '/')
        return false;
    real[len] = '\0';
    bool ok = false;
    for (size_t i = 0; i < p->n && !ok; i++) {
        size_t n = strlen(p->dirs[i]);
        ok = strncmp(real, p->dirs[i], n) == 0 &&
             (real[n] == '/' || real[n] == '\0' || (n == 1 && p->dirs[i][0] == '/'));
    }
    return ok;
}
