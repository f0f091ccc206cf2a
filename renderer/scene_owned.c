/* What a scene owns beyond its arrays: the strings it hands out, each one
 * malloc it frees in rt_scene_free(), and its warning line, which the
 * import, the materials and the framing add to. */
#include "scene_build.h"
#include "scene_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *
rt__scene_keep(scene_priv *s, char *str)
{
    if (!str)
        return NULL;
    if (s->nstrs == s->capstrs) {
        size_t cap = s->capstrs ? s->capstrs * 2 : 16;
        char **n = realloc(s->strs, cap * sizeof *n);
        if (!n) {
            free(str);
            return NULL;
        }
        s->strs = n;
        s->capstrs = cap;
    }
    s->strs[s->nstrs++] = str;
    return str;
}

char *
rt__scene_strdup(scene_priv *s, const char *str)
{
    return rt__scene_keep(s, strdup(str));
}

void
rt__scene_warn(rt_scene *s, const char *text)
{
    size_t had = s->warning ? strlen(s->warning) + 2 : 0, n = had + strlen(text) + 1;
    char  *w = malloc(n);
    if (!w)
        return;
    snprintf(w, n, "%s%s%s", s->warning ? s->warning : "", had ? "; " : "", text);
    free(s->warning);
    s->warning = w;
}
