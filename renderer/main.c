/* render: a scene file to an image, tile by tile, on N threads.
 * Exit status: 0 done; 1 the run could not go on (one line on stderr says
 * why, naming the file); 2 a bad command line. */
#include "rt_options.h"
#include "rt_paths.h"
#include "rt_render.h"
#include "rt_scene.h"
#include "tex_exr.h"
#include "texture.h"

#include <errno.h>
#include <inttypes.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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
    struct stat st;
    int         e = 0;
    if (stat(dir, &st) != 0)
        e = errno;
    else if (!S_ISDIR(st.st_mode))
        e = ENOTDIR; /* access() would say EACCES of a plain file */
    else if (access(dir, W_OK | X_OK) != 0)
        e = errno;
    if (e)
        snprintf(err, RT_ERR_LEN, "cannot write into %s: %s", dir, strerror(e));
    else if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        snprintf(err, RT_ERR_LEN, "cannot write: %s", strerror(e = EISDIR));
    free(copy);
    return e == 0;
}

/* Textures embedded in the scene (.glb) become files in a private folder,
 * and their synthetic names aliases of those files, so they go through the
 * texture system and ustring like any other. Returns the folder to remove,
 * or NULL; on a failure, one warning, and the textures draw as missing. */
static char *
embedded_extract(const rt_scene *s, tex_system *ts, ustr_table *strings)
{
    if (!s->nembedded)
        return NULL;
    const char *tmp = getenv("TMPDIR");
    char       *dir = malloc(4096);
    if (!dir)
        return NULL;
    snprintf(dir, 4096, "%s/rt-embedded-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        fprintf(stderr, "render: warning: cannot write embedded textures: %s\n", strerror(errno));
        free(dir);
        return NULL;
    }
    for (uint32_t i = 0; i < s->nembedded; i++) {
        /* No extension needed: the texture system reads a file's format
         * from its first bytes. */
        const char *name = s->embedded[i].name;
        char        path[4200];
        snprintf(path, sizeof path, "%s/embedded%u", dir, i);
        FILE *f = fopen(path, "wb");
        bool  ok =
            f && fwrite(s->embedded[i].data, 1, s->embedded[i].size, f) == s->embedded[i].size;
        if (f && fclose(f) != 0)
            ok = false;
        ustr u = ok ? ustr_table_intern_cstr(strings, name) : NULL;
        if (!u || tex_file_alias(ts, u, path) != TEX_OK)
            fprintf(stderr, "render: warning: %s: cannot extract the embedded texture\n", name);
    }
    return dir;
}

static void
embedded_remove(char *dir, uint32_t n)
{
    if (!dir)
        return;
    for (uint32_t i = 0; i < n; i++) {
        char path[4200];
        snprintf(path, sizeof path, "%s/embedded%u", dir, i);
        unlink(path);
    }
    rmdir(dir);
    free(dir);
}

/* ---- interruption ---- */

static volatile sig_atomic_t signalled; /* the first SIGINT or SIGTERM */

/* The first signal asks the render to stop at the next tile boundary (the
 * tiles done are written, marked partial); a second stops at once, writing
 * nothing (an output is only ever renamed into place whole). */
static void
on_signal(int sig)
{
    if (signalled)
        _exit(128 + sig);
    signalled = sig;
    rt_render_cancel();
}

static void
signals_catch(void)
{
    struct sigaction sa = {.sa_handler = on_signal};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

/* --resume: the partial EXR at the output path, if it is one of a render
 * with these options, as pixels and a map of the tiles it has. */
static bool
resume_load(const rt_options *o, const char *out, rt_image *img, char err[RT_ERR_LEN])
{
    tex_exr     *f = NULL;
    tex_exr_info info;
    tex_image    pix = {0}, rgba = {0};
    char         terr[TEX_ERR_LEN], mine[RT_IMAGE_OPTIONS_LEN];
    const char  *v;
    bool         ok = false;
    uint32_t     ntiles = rt_options_tiles(o);
    if (tex_exr_open(out, &f, &info, terr) != TEX_OK) {
        snprintf(err, RT_ERR_LEN, "--resume: %.200s", terr);
        return false;
    }
    rt_image_options_format(o, mine, sizeof mine);
    if (!tex_exr_attr_string(f, "rt:partial", &v) || strcmp(v, "1") != 0)
        snprintf(err, RT_ERR_LEN, "--resume: not a partial render");
    else if (info.width != o->width || info.height != o->height ||
             !tex_exr_attr_string(f, "rt:image_options", &v) || strcmp(v, mine) != 0)
        snprintf(err, RT_ERR_LEN, "--resume: rendered with other options (its: %.160s)",
                 tex_exr_attr_string(f, "rt:image_options", &v) ? v : "none recorded");
    else if (!(img->done = malloc(ntiles)) || !tex_exr_attr_string(f, "rt:missing_tiles", &v) ||
             !rt_tiles_missing_parse(v, img->done, ntiles))
        snprintf(err, RT_ERR_LEN, "--resume: its list of missing tiles is damaged");
    else if (tex_exr_read_image(f, 0, &pix, terr) != TEX_OK ||
             tex_image_convert(&pix, TEX_TYPE_FLOAT, false, &rgba, terr) != TEX_OK ||
             rgba.nchannels != 4)
        snprintf(err, RT_ERR_LEN, "--resume: %.200s", rgba.pixels ? "not RGBA" : terr);
    else
        ok = true;
    tex_exr_close(f);
    tex_image_free(&pix);
    if (ok) {
        img->width = o->width, img->height = o->height;
        img->rgba = rgba.pixels; /* handed over */
    } else {
        tex_image_free(&rgba);
        free(img->done);
        img->done = NULL;
    }
    return ok;
}

/* --restrict-paths: the scene's own folder and the --search-path ones. */
static rt_result
paths_make(const rt_options *o, rt_paths **out)
{
    char *copy = strdup(o->scene);
    if (!copy)
        return RT_ERR_NOMEM;
    const char *dirs[RT_MAX_SEARCH_PATHS + 1] = {dirname(copy)};
    for (unsigned i = 0; i < o->nsearch_paths; i++)
        dirs[i + 1] = o->search_paths[i];
    rt_result r = rt_paths_create(dirs, o->nsearch_paths + 1, out);
    free(copy);
    return r;
}

static bool
allow_path(void *ctx, const char *path)
{
    return rt_paths_allow(ctx, path);
}

int
main(int argc, char **argv)
{
    rt_options o;
    int        rc = rt_options_parse(argc, argv, &o);
    if (rc >= 0)
        return rc;
    const char *out = o.output;
    char        err[RT_ERR_LEN];
    if (!output_writable(out, err)) {
        fprintf(stderr, "render: %s: %s\n", out, err);
        return 1;
    }
    /* A map named on the command line that is not there is a mistake to
     * report now, not a texture to draw with the fill colour. */
    if (o.envmap && access(o.envmap, R_OK) != 0) {
        fprintf(stderr, "render: --envmap %s: cannot open: %s\n", o.envmap, strerror(errno));
        return 1;
    }
    /* --resume: the partial image is checked before the scene's load. */
    rt_image img = {0};
    if (o.resume && !resume_load(&o, out, &img, err)) {
        fprintf(stderr, "render: %s: %s\n", out, err);
        return 1;
    }

    ustr_table *strings;
    if (ustr_table_create(&(ustr_config){.lock = o.lock}, &strings) != USTR_OK) {
        fputs("render: out of memory\n", stderr);
        rt_image_free(&img);
        return 1;
    }
    rt_render_stats *stats = calloc(1, sizeof *stats);
    rt_scene        *scene = NULL;
    rt_paths        *paths = NULL;
    double           t0 = now();
    rt_result        r =
        stats && (!o.restrict_paths || paths_make(&o, &paths) == RT_OK) ? RT_OK : RT_ERR_NOMEM;
    if (r == RT_OK)
        r = rt_scene_load_restricted(o.scene, strings, paths, &scene, err);
    else
        snprintf(err, sizeof err, "out of memory");
    if (r != RT_OK) {
        fprintf(stderr, "render: %s: %s\n", o.scene, err);
        rt_paths_destroy(paths);
        ustr_table_destroy(strings);
        free(stats);
        rt_image_free(&img);
        return 1;
    }
    stats->load_secs = now() - t0;
    if (scene->refused && !o.quiet)
        fprintf(stderr, "render: %s: refused %s: outside the allowed folders\n", o.scene,
                scene->refused);

    tex_system *ts;
    tex_config  tcfg = {.max_memory_mb = o.max_memory_mb,
                        .strings = strings,
                        .allow = paths ? allow_path : NULL,
                        .allow_ctx = paths};
    if (tex_system_create(&tcfg, &ts) != TEX_OK) {
        fputs("render: cannot start the texture system\n", stderr);
        rt_scene_free(scene);
        rt_paths_destroy(paths);
        ustr_table_destroy(strings);
        free(stats);
        rt_image_free(&img);
        return 1;
    }
    char *embedded = embedded_extract(scene, ts, strings);
    signals_catch();
    r = rt_render(&o, scene, ts, strings, &img, stats, err);
    if (r == RT_OK)
        r = rt_image_write(&o, &img, stats, err);
    if (r != RT_OK)
        fprintf(stderr, "render: %s: %s\n", out, err);
    if (r == RT_OK && img.done) {
        uint32_t ntiles = rt_options_tiles(&o), have = 0;
        for (uint32_t i = 0; i < ntiles; i++)
            have += img.done[i];
        fprintf(stderr,
                "render: %s: interrupted (%s) with %u of %u tiles rendered: wrote a partial "
                "image%s\n",
                out, signalled == SIGTERM ? "SIGTERM" : "SIGINT", have, ntiles,
                rt_output_is_png(out) ? " (PNG: cannot be resumed)"
                                      : "; render --resume finishes it");
    }
    if (r == RT_OK && o.stats)
        rt_report_print(&o, stats, ts, strings, stderr);
    if (r == RT_OK && o.stats_json && rt_report_json(&o, stats, ts, strings, o.stats_json, err))
        fprintf(stderr, "render: %s: %s\n", o.stats_json, err), r = RT_ERR_OPEN;
    bool partial = img.done != NULL;
    rt_image_free(&img);
    tex_system_destroy(ts);
    embedded_remove(embedded, scene->nembedded);
    rt_scene_free(scene);
    rt_paths_destroy(paths);
    ustr_table_destroy(strings);
    free(stats);
    if (r == RT_OK && partial)
        return 128 + (signalled ? signalled : SIGINT); /* 130 or 143, as a shell reports it */
    return r == RT_OK ? 0 : 1;
}
