/* render: a scene file to an image, tile by tile, on N threads.
 * Exit status: 0 done; 1 the run could not go on (one line on stderr says
 * why, naming the file); 2 a bad command line. */
#include "rt_options.h"
#include "rt_render.h"
#include "rt_scene.h"
#include "texture.h"

#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double
now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Refuses an output that cannot be written before spending a render on it. */
static bool
output_writable(const char *path, char err[RT_ERR_LEN])
{
    char *copy = strdup(path);
    if (!copy) {
        snprintf(err, RT_ERR_LEN, "out of memory");
        return false;
    }
    const char *dir = dirname(copy);
    bool        ok = access(dir, W_OK | X_OK) == 0;
    if (!ok)
        snprintf(err, RT_ERR_LEN, "cannot write into %s: %s", dir, strerror(errno));
    free(copy);
    return ok;
}

/* Textures embedded in the scene become files the texture system can open:
 * written into a private folder, then looked up under their synthetic
 * names through aliases would need texture-system support; until then they
 * are reported once as missing by the texture system and drawn with the
 * fill colour. */

int
main(int argc, char **argv)
{
    rt_options o;
    int        rc = rt_options_parse(argc, argv, &o);
    if (rc >= 0)
        return rc;
    const char *out = o.output ? o.output : "render.exr";
    char        err[RT_ERR_LEN];
    if (!output_writable(out, err)) {
        fprintf(stderr, "render: %s: %s\n", out, err);
        return 1;
    }

    ustr_table *strings;
    if (ustr_table_create(&(ustr_config){.lock = o.lock}, &strings) != USTR_OK) {
        fputs("render: out of memory\n", stderr);
        return 1;
    }
    rt_render_stats *stats = calloc(1, sizeof *stats);
    rt_scene        *scene = NULL;
    double           t0 = now();
    rt_result        r = stats ? rt_scene_load(o.scene, strings, &scene, err) : RT_ERR_NOMEM;
    if (!stats)
        snprintf(err, sizeof err, "out of memory");
    if (r != RT_OK) {
        fprintf(stderr, "render: %s: %s\n", o.scene, err);
        ustr_table_destroy(strings);
        free(stats);
        return 1;
    }
    stats->load_secs = now() - t0;

    tex_system *ts;
    tex_config  tcfg = {.max_memory_mb = o.max_memory_mb, .strings = strings};
    if (tex_system_create(&tcfg, &ts) != TEX_OK) {
        fputs("render: cannot start the texture system\n", stderr);
        rt_scene_free(scene);
        ustr_table_destroy(strings);
        free(stats);
        return 1;
    }
    rt_image img = {0};
    r = rt_render(&o, scene, ts, strings, &img, stats, err);
    if (r == RT_OK)
        r = rt_image_write(&o, &img, stats, err);
    if (r != RT_OK)
        fprintf(stderr, "render: %s: %s\n", out, err);
    if (r == RT_OK && o.stats)
        rt_report_print(&o, stats, ts, strings, stderr);
    if (r == RT_OK && o.stats_json && rt_report_json(&o, stats, ts, strings, o.stats_json, err))
        fprintf(stderr, "render: %s: %s\n", o.stats_json, err), r = RT_ERR_OPEN;
    free(img.rgba);
    tex_system_destroy(ts);
    rt_scene_free(scene);
    ustr_table_destroy(strings);
    free(stats);
    return r == RT_OK ? 0 : 1;
}
