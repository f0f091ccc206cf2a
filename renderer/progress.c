/* What a render shows while it runs (render_internal.h): the status line
 * and the progress bar on a terminal, and --progress lines for logs. */
#include "render_internal.h"
#include "tex_image.h" /* tex_name_printable() */

#include <math.h>
#include <stdio.h>
#include <unistd.h>

/* Seconds as a person reads them: "8.2 s", "3 min 05 s", "2 h 01 min". */
static void
secs_text(double t, char *buf, size_t n)
{
    if (t < 60)
        snprintf(buf, n, "%.1f s", t);
    else if (t < 3600)
        snprintf(buf, n, "%d min %02d s", (int)(t / 60), (int)fmod(t, 60));
    else
        snprintf(buf, n, "%d h %02d min", (int)(t / 3600), (int)fmod(t / 60, 60));
}

static bool
status_shown(const rt_options *o)
{
    return !o->quiet && isatty(STDERR_FILENO);
}

void
rt_status_show(const rt_options *o, const char *what, const char *name)
{
    if (!status_shown(o))
        return;
    char shown[256] = "";
    if (name)
        tex_name_printable(shown, sizeof shown, name);
    fprintf(stderr, "\rrender: %s%s%s ...\033[K", what, name ? " " : "", shown);
}

void
rt_status_clear(const rt_options *o)
{
    if (status_shown(o))
        fputs("\r\033[K", stderr);
}

/* The progress bar, on a terminal: tiles done, time so far, and the time
 * left at the rate so far (once a tile is done). */
void
rt__progress_bar(const rt_options *o, uint32_t d, uint32_t total, double t0, bool final)
{
    if (!status_shown(o))
        return;
    int    bar = (int)(40.0 * d / total);
    double elapsed = rt_now() - t0;
    char   so_far[32], left[48] = "";
    secs_text(elapsed, so_far, sizeof so_far);
    if (d > 0 && d < total) {
        char t[32];
        secs_text(elapsed * (total - d) / d, t, sizeof t);
        snprintf(left, sizeof left, ", about %s left", t);
    }
    fprintf(stderr, "\rrender: [%.*s%*s] %3u%%  %s%s\033[K", bar,
            "########################################", 40 - bar, "", (unsigned)(100.0 * d / total),
            so_far, left);
    if (final)
        fputc('\n', stderr);
}

void
rt__progress_line(const rt_options *o, rt__progress_log *pl, uint32_t d, uint32_t total,
                  double start, const rt_tile_source *src, bool first, bool final)
{
    if (!o->progress)
        return;
    double now = rt_now();
    if (!first && (d == pl->shown || (!final && pl->shown > 0 && now - pl->at < 1.0)))
        return;
    char so_far[32], left[48] = "";
    secs_text(now - start, so_far, sizeof so_far);
    if (src) {
        fprintf(stderr, "render: rank %u: %u tile%s rendered here, %s\n", src->rank, d,
                d == 1 ? "" : "s", so_far);
    } else {
        if (d > 0 && d < total) {
            char t[32];
            secs_text((now - start) * (total - d) / d, t, sizeof t);
            snprintf(left, sizeof left, ", about %s left", t);
        }
        fprintf(stderr, "render: %u of %u tiles, %s%s\n", d, total, so_far, left);
    }
    pl->shown = d, pl->at = now;
}
