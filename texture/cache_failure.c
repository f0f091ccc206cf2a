/* When a file fails: said once, through tex_config.report (or to stderr),
 * and, for a file that opened but whose tiles can no longer be read,
 * broken for good. Opening (cache_files.c) and tile loads (cache_tiles.c)
 * both end here. */
#include "texture_internal.h"

#include <stdio.h>

void
tex__report(tex_system *ts, const char *name, const char *reason)
{
    if (ts->cfg.report)
        ts->cfg.report(ts->cfg.report_ctx, name, reason);
    else
        tex_report_stderr(name, reason);
}

void
tex_report_stderr(const char *name, const char *reason)
{
    char shown[512]; /* a scene's names may hold anything */
    tex_name_printable(shown, sizeof shown, name);
    fprintf(stderr, "texture: %s: %s\n", shown, reason);
}

void
tex__file_break(tex_system *ts, tex_thread *tc, tex__file *f, tex_result r, const char *err)
{
    pthread_mutex_lock(&f->lock);
    /* Relaxed: f->lock orders it; only a READY file can break. */
    bool first = atomic_load_explicit(&f->state, memory_order_relaxed) == TEX__READY;
    if (first) {
        f->error = r;
        /* Release: whoever sees BROKEN sees `error`. The file's fields stay
         * valid for lookups still running on it. */
        atomic_store_explicit(&f->state, TEX__BROKEN, memory_order_release);
    }
    /* Its handle goes now: the cap closes only READY files' handles, so a
     * broken one would hold its descriptor (a scene naming a thousand
     * damaged .tx files would run the process out of them). read_texels()
     * does not reopen a broken file. */
    tex__handle_close(ts, f);
    pthread_mutex_unlock(&f->lock);
    if (first) {
        tex__count(&tc->counters.file_errors, 1);
        tex__report(ts, f->name, err);
    }
}
