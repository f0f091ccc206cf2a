/* render: a scene file to an image, tile by tile, on N threads.
 * Exit status: 0 done; 1 the run could not go on (one line on stderr says
 * why, naming the file); 2 a bad command line; 130 or 143 (128 + the
 * signal) when Ctrl-C or SIGTERM cut it short and the partial image was
 * written. */
#include "rt_dist.h"
#include "rt_options.h"
#include "rt_paths.h"
#include "rt_render.h"
#include "rt_scene.h"
#include "tex_exr.h"
#include "texture.h"

#include <errno.h>
#include <inttypes.h>
#include <libgen.h>
#include <malloc.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Refuses an output that cannot be written before spending a render on it:
 * it is written as a temporary file in its folder renamed over it, so the
 * check makes (and removes) such a file. access() is not enough: as root
 * it passes for /proc and /sys, where no file can be made. */
static bool
output_writable(const char *path, char err[RT_ERR_LEN])
{
    if (strlen(path) > RT_MAX_OUTPUT_PATH) {
        snprintf(err, RT_ERR_LEN, "cannot write: name longer than %d bytes", RT_MAX_OUTPUT_PATH);
        return false;
    }
    char probe[RT_MAX_OUTPUT_PATH + 32], *copy = strdup(path);
    if (!copy) {
        snprintf(err, RT_ERR_LEN, "out of memory");
        return false;
    }
    const char *dir = dirname(copy);
    struct stat st;
    int         e = 0, fd;
    snprintf(probe, sizeof probe, "%s/.rt-probe-XXXXXX", dir);
    if (stat(dir, &st) != 0)
        e = errno;
    else if (!S_ISDIR(st.st_mode))
        e = ENOTDIR;
    else if ((fd = mkstemp(probe)) < 0)
        e = errno;
    else
        close(fd), unlink(probe);
    if (e)
        snprintf(err, RT_ERR_LEN, "cannot write into %.150s: %s", dir, strerror(e));
    else if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        snprintf(err, RT_ERR_LEN, "cannot write: %s", strerror(e = EISDIR));
    free(copy);
    return e == 0;
}

/* Textures embedded in the scene (.glb) are read from the scene's own
 * bytes under their synthetic names, through the texture system and
 * ustring like any other, and never written to a file of their own: one
 * left in $TMPDIR would outlive a killed render. On a failure, one warning,
 * and the texture draws as missing. */
static void
embedded_alias(const rt_scene *s, tex_system *ts, ustr_table *strings)
{
    for (uint32_t i = 0; i < s->nembedded; i++) {
        const struct rt_embedded *e = &s->embedded[i];
        ustr                      u = ustr_table_intern_cstr(strings, e->name);
        if (!u || tex_file_alias_bytes(ts, u, e->data, e->size) != TEX_OK) {
            char shown[512];
            tex_name_printable(shown, sizeof shown, e->name);
            fprintf(stderr, "render: warning: %s: cannot read the embedded texture\n", shown);
        }
    }
}

/* ---- interruption ---- */

static volatile sig_atomic_t signalled; /* the first SIGINT or SIGTERM */

/* How long the render has to stop after the first signal. A tile takes
 * well under a second at sizes people use; a worker stuck in a read that
 * never returns would otherwise keep the process alive for ever. */
#define STOP_GRACE_SECS 5

/* The first signal asks the render to stop at the next tile boundary (the
 * tiles done are written, marked partial); a second, or the render still
 * running STOP_GRACE_SECS later, stops at once, writing nothing (an output
 * is only ever renamed into place whole, so the previous one stays). */
static void
on_signal(int sig)
{
    if (signalled)
        _exit(128 + sig);
    signalled = sig;
    rt_render_cancel();
    alarm(STOP_GRACE_SECS);
}

static void
on_stop_overdue(int sig)
{
    (void)sig;
    static const char msg[] = "render: the render did not stop within 5 s of the signal: ended "
                              "without writing\n";
    _Static_assert(STOP_GRACE_SECS == 5, "the message says 5 s");
    ssize_t n = write(STDERR_FILENO, msg, sizeof msg - 1);
    (void)n; /* nothing to do if stderr is gone */
    _exit(128 + signalled);
}

static void
signals_catch(void)
{
    struct sigaction sa = {.sa_handler = on_signal};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    struct sigaction alarm_sa = {.sa_handler = on_stop_overdue};
    sigemptyset(&alarm_sa.sa_mask);
    sigaction(SIGALRM, &alarm_sa, NULL);
}

/* --resume: where the partial image is: beside the output
 * (rt_partial_path()), or at the output path itself, where earlier builds
 * wrote it. Neither there: the one beside, for the message. */
static void
resume_path(const rt_options *o, char *buf, size_t size)
{
    rt_partial_path(o->output, buf, size);
    if (access(buf, F_OK) != 0 && access(o->output, F_OK) == 0)
        snprintf(buf, size, "%s", o->output);
}

/* Whether the image in f, at `file`, is not one of this render's (its
 * size, or its line of image options, differs); if so, err says exactly
 * which values differ, theirs and this render's. */
static bool
resume_differs(const rt_options *o, tex_exr *f, const tex_exr_info *info, const char *file,
               char err[RT_ERR_LEN])
{
    char        theirs[RT_IMAGE_OPTIONS_LEN + 32], mine[RT_IMAGE_OPTIONS_LEN + 32];
    const char *v;
    if (!tex_exr_attr_string(f, "rt:image_options", &v)) {
        snprintf(err, RT_ERR_LEN, "--resume: %.100s: records no image options", file);
        return true;
    }
    /* The size leads both lines, so that it is compared as one option. */
    int n = snprintf(mine, sizeof mine, "size %ux%u; ", o->width, o->height);
    rt_image_options_format(o, mine + n, sizeof mine - (size_t)n);
    if (info->width == o->width && info->height == o->height && strcmp(v, mine + n) == 0)
        return false;
    snprintf(theirs, sizeof theirs, "size %ux%u; %s", info->width, info->height, v);
    n = snprintf(err, RT_ERR_LEN, "--resume: %.100s: rendered with other options: ", file);
    if (!rt_image_options_diff(theirs, mine, err + n, RT_ERR_LEN - (size_t)n))
        /* the same items, but not in this render's order or form */
        snprintf(err, RT_ERR_LEN, "--resume: %.100s: rendered with options recorded otherwise: %s",
                 file, v);
    return true;
}

/* Whether the EXR open as f, at `file`, is a partial image of this
 * render, its map of tiles then in done[rt_options_tiles(o)]; else err
 * says why. */
static bool
resume_check(const rt_options *o, tex_exr *f, const tex_exr_info *info, const char *file,
             uint8_t *done, char err[RT_ERR_LEN])
{
    const char *v;
    if (!tex_exr_attr_string(f, "rt:partial", &v) || strcmp(v, "1") != 0) {
        snprintf(err, RT_ERR_LEN, "--resume: %.100s: not a partial render", file);
        return false;
    }
    if (resume_differs(o, f, info, file, err))
        return false;
    if (!tex_exr_attr_string(f, "rt:missing_tiles", &v) ||
        !rt_tiles_missing_parse(v, done, rt_options_tiles(o))) {
        snprintf(err, RT_ERR_LEN, "--resume: %.100s: its list of missing tiles is damaged", file);
        return false;
    }
    return true;
}

/* The pixels of the EXR open as f, at `file`, as float RGBA in *rgba;
 * else err says why. */
static bool
resume_pixels(tex_exr *f, const char *file, tex_image *rgba, char err[RT_ERR_LEN])
{
    tex_image pix = {0};
    char      terr[TEX_ERR_LEN];
    bool      ok = tex_exr_read_image(f, 0, &pix, terr) == TEX_OK &&
              tex_image_convert(&pix, TEX_TYPE_FLOAT, false, rgba, terr) == TEX_OK;
    if (ok && rgba->nchannels != 4)
        ok = false, snprintf(terr, sizeof terr, "not RGBA");
    if (!ok)
        snprintf(err, RT_ERR_LEN, "--resume: %.100s: %.130s", file, terr);
    tex_image_free(&pix);
    return ok;
}

/* --resume: the partial image (resume_path()), if it is one of a render
 * with these options, as pixels and a map of the tiles it has. False with
 * err ("--resume: FILE: why", naming the file read) otherwise. */
static bool
resume_load(const rt_options *o, rt_image *img, char err[RT_ERR_LEN])
{
    char         file[RT_MAX_OUTPUT_PATH + 16], terr[TEX_ERR_LEN];
    tex_exr     *f = NULL;
    tex_exr_info info;
    tex_image    rgba = {0};
    bool         ok = false;
    resume_path(o, file, sizeof file);
    if (tex_exr_open(file, &f, &info, terr) != TEX_OK) {
        snprintf(err, RT_ERR_LEN, "--resume: %.100s: %.130s", file, terr);
        return false;
    }
    if (!(img->done = malloc(rt_options_tiles(o))))
        snprintf(err, RT_ERR_LEN, "out of memory");
    else
        ok = resume_check(o, f, &info, file, img->done, err) && resume_pixels(f, file, &rgba, err);
    tex_exr_close(f);
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

/* Every --search-path names a folder that is there: one that is not
 * would otherwise be dropped in silence, and a texture meant to come from
 * it refused as if the scene had asked for something else. */
static bool
search_paths_check(const rt_options *o, char err[RT_ERR_LEN])
{
    for (unsigned i = 0; i < o->nsearch_paths; i++) {
        struct stat st;
        const char *why = stat(o->search_paths[i], &st) != 0 ? strerror(errno)
                          : !S_ISDIR(st.st_mode)             ? "not a folder"
                                                             : NULL;
        if (why) {
            snprintf(err, RT_ERR_LEN, "--search-path %.150s: %s", o->search_paths[i], why);
            return false;
        }
    }
    return true;
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
allow_fd(void *ctx, int fd)
{
    return rt_paths_allow_fd(ctx, fd);
}

/* What a run holds between its steps; freed by run_free(). */
typedef struct run {
    rt_options       o;
    rt_dist         *dist; /* NULL: one process */
    unsigned         rank;
    rt_image         img;
    ustr_table      *strings;
    rt_render_stats *stats;
    rt_scene        *scene;
    rt_paths        *paths;
    tex_system      *ts;
    /* While textures_start() checks the --envmap: that file's problem, which
     * is the run's error, not a texture's warning. */
    ustr   envmap_checking;
    char   envmap_error[TEX_ERR_LEN];
    double start; /* rt_now() at the start of main() */
} run;

/* The texture system's report of a file it cannot use: "texture: NAME:
 * REASON", but the --envmap's, while it is checked, is kept for the error.
 * envmap_checking is set and cleared before any worker starts, so workers
 * only ever read NULL. */
static void
texture_report(void *ctx, const char *name, const char *reason)
{
    run *u = ctx;
    if (u->envmap_checking && name == u->envmap_checking)
        snprintf(u->envmap_error, sizeof u->envmap_error, "%s", reason);
    else
        tex_report_stderr(name, reason);
}

/* The texture system, and the --envmap in it. The map is the user's own
 * file, so it is read even under --restrict-paths (tex_file_alias(): the
 * caller's files are not checked), and one that cannot be used (missing,
 * a folder, empty, damaged) is the run's error, not a white sky. */
static bool
textures_start(run *u, char err[RT_ERR_LEN])
{
    const rt_options *o = &u->o;
    char              why[TEX_ERR_LEN] = "";
    tex_config        tcfg = {.max_memory_mb = o->max_memory_mb,
                              .strings = u->strings,
                              .report = texture_report,
                              .report_ctx = u,
                              .allow = u->paths ? allow_fd : NULL,
                              .allow_ctx = u->paths};
    if (tex_system_create(&tcfg, &u->ts, why) != TEX_OK) {
        snprintf(err, RT_ERR_LEN, "cannot start the texture system: %.200s", why);
        return false;
    }
    if (!o->envmap)
        return true;
    ustr          name = ustr_table_intern_cstr(u->strings, o->envmap);
    tex_file_info info;
    if (!name || tex_file_alias(u->ts, name, o->envmap) != TEX_OK) {
        snprintf(err, RT_ERR_LEN, "out of memory");
        return false;
    }
    u->envmap_checking = name;
    tex_result r = tex_file_info_get(u->ts, name, &info);
    u->envmap_checking = NULL;
    if (r != TEX_OK) {
        snprintf(err, RT_ERR_LEN, "--envmap %.90s: %.150s", o->envmap, u->envmap_error);
        return false;
    }
    return true;
}

/* A note when most of the scene's triangles are metal or glass (a blend
 * that lets most light through) and nothing is around it: they show their
 * surroundings, and with no --envmap those are black (a sphere grid of
 * metals rendered black, with no hint). */
static void
surroundings_note(const rt_options *o, const rt_scene *s)
{
    if (o->integrator != RT_INTEGRATOR_PATH || o->envmap || o->quiet)
        return; /* before the count: a pass over every triangle at start-up */
    uint64_t metal = 0, glass = 0;
    for (uint32_t t = 0; t < s->ntris; t++) {
        const rt_material *m = &s->materials[rt_scene_material_of(s, t)];
        metal += m->metallic >= 0.5f;
        glass += m->metallic < 0.5f && m->alpha_blend && m->base_color[3] < 0.5f;
    }
    if (2 * (metal + glass) > s->ntris)
        fprintf(stderr,
                "render: note: %s is mostly %s, which shows its surroundings: with no "
                "--envmap they are black (--envmap FILE.exr gives it some)\n",
                o->scene,
                !glass   ? "metal"
                : !metal ? "glass"
                         : "metal and glass");
}

/* Everything before the render: the checks that need no scene, the scene,
 * the texture system. False with err ("FILE: why") when the run cannot go
 * on. */
static bool
run_setup(run *u, char err[RT_ERR_LEN])
{
    const rt_options *o = &u->o;
    char              why[RT_ERR_LEN];
    if (u->rank == 0 && !output_writable(o->output, why)) {
        snprintf(err, RT_ERR_LEN, "%.100s: %.150s", o->output, why);
        return false;
    }
    if (u->rank == 0 && !rt_output_is_png(o->output) && !tex_exr_available(why)) {
        snprintf(err, RT_ERR_LEN, "%.100s: %.150s", o->output, why);
        return false;
    }
    if (u->rank == 0 && o->stats_json && !output_writable(o->stats_json, why)) {
        snprintf(err, RT_ERR_LEN, "--stats-json %.90s: %.150s", o->stats_json, why);
        return false;
    }
    if (o->resume && u->dist) {
        snprintf(err, RT_ERR_LEN, "--resume: not under mpirun (resume with one process)");
        return false;
    }
    if (!search_paths_check(o, err))
        return false;
    /* --resume: the partial image is checked before the scene's load. */
    if (o->resume && !resume_load(o, &u->img, err))
        return false;
    u->stats = calloc(1, sizeof *u->stats);
    if (!u->stats || ustr_table_create(&(ustr_config){.lock = o->lock}, &u->strings) != USTR_OK ||
        (o->restrict_paths && paths_make(o, &u->paths) != RT_OK)) {
        snprintf(err, RT_ERR_LEN, "out of memory");
        return false;
    }
    if (!textures_start(u, err))
        return false;
    double t0 = rt_now();
    rt_status_show(o, "loading", o->scene);
    rt_scene_load_opts lo = {.allowed = u->paths, .max_file_bytes = o->max_scene_mb << 20};
    rt_result          loaded = rt_scene_load_with(o->scene, u->strings, &lo, &u->scene, why);
    rt_status_clear(o);
    if (loaded != RT_OK) {
        snprintf(err, RT_ERR_LEN, "%.100s: %.150s", o->scene, why);
        return false;
    }
    if (!o->up_given && u->scene->up_guessed) {
        u->o.up = u->scene->up; /* the run's own copy of the options */
        if (!o->quiet && (!u->scene->camera.from_file || o->view != RT_VIEW_AUTO))
            fprintf(stderr, "render: note: %s is flat along z: taken as z-up (--up y: y-up)\n",
                    o->scene);
    }
    /* --up, --view: the automatic camera anew. The import framed it for
     * the scene's own up and the automatic view already; a level's view
     * costs a few passes over its triangles, not to be paid twice. */
    if (o->view != RT_VIEW_AUTO || o->up != u->scene->up)
        rt_scene_frame(u->scene, o->up, o->view);
    if (u->rank == 0)
        surroundings_note(o, u->scene);
    u->stats->load_secs = rt_now() - t0;
    /* From here on, decoded images (megabytes each, freed once their tiles
     * are cut) go straight back to the system. glibc's default raises its
     * mmap threshold after the first such free, after which they come from
     * the heap of the decoding thread's arena and stay there: 25 MB more
     * for every worker at -t 8 on 2048x2048 textures (docs/reliability.md).
     * Not before the import: its OBJ line buffer relies on the dynamic
     * threshold (scene_io.c, rt__obj_heap_prepare()), which also raised the trim
     * threshold to twice its own; that goes back to glibc's default, or
     * every worker's arena would keep up to 40 MB of freed MIP levels. */
    mallopt(M_MMAP_THRESHOLD, 4 << 20);
    mallopt(M_TRIM_THRESHOLD, 128 << 10);
    if (u->scene->warning && !o->quiet)
        fprintf(stderr, "render: %s: %s\n", o->scene, u->scene->warning);
    embedded_alias(u->scene, u->ts, u->strings);
    return true;
}

static void
run_free(run *u)
{
    rt_image_free(&u->img);
    tex_system_destroy(u->ts); /* before the scene: it reads the embedded bytes */
    rt_scene_free(u->scene);
    rt_paths_destroy(u->paths);
    ustr_table_destroy(u->strings);
    free(u->stats);
}

/* A dim PNG is exposed up to where a user can see it: unless --exposure
 * gives the stops, a PNG whose lit pixels (weighted by coverage, the
 * alpha channel) have a mean luminance under RT_DIM is exposed so that
 * their mean is RT_KEY, middle grey, at most RT_MAX_AUTO_STOPS. A brighter
 * image is left as it is, and an EXR always: it stays linear, unscaled. */
#define RT_DIM            0.05
#define RT_KEY            0.18
#define RT_MAX_AUTO_STOPS 20

static float
auto_exposure(const rt_image *img)
{
    double lum = 0, cover = 0;
    for (size_t i = 0, n = (size_t)img->width * img->height; i < n; i++) {
        const float *p = &img->rgba[4 * i];
        lum += 0.2126 * p[0] + 0.7152 * p[1] + 0.0722 * p[2];
        cover += p[3];
    }
    double mean = cover > 0 ? lum / cover : 0;
    if (!(mean > 0 && mean < RT_DIM))
        return 0;
    double stops = round(10 * log2(RT_KEY / mean)) / 10;
    return (float)(stops < RT_MAX_AUTO_STOPS ? stops : RT_MAX_AUTO_STOPS);
}

/* A warning when the image came out nearly black (mean luminance under
 * 1e-3, after --exposure for a PNG), naming the likely cause: a user judges
 * a renderer by its first image, and a black one says nothing. */
static void
dark_warn(const rt_options *o, const rt_image *img, const rt_render_stats *st)
{
    size_t n = (size_t)img->width * img->height;
    double sum = 0;
    for (size_t i = 0; i < n; i++) {
        const float *p = &img->rgba[4 * i];
        sum += 0.2126 * p[0] + 0.7152 * p[1] + 0.0722 * p[2];
    }
    double linear = n ? sum / (double)n : 0;
    double mean = linear * (rt_output_is_png(o->output) ? exp2(o->exposure) : 1);
    if (!(mean < 1e-3))
        return;
    if (linear >= 1e-3)
        fprintf(stderr,
                "render: warning: %s is nearly black (mean luminance %.2g): --exposure %g\n",
                o->output, mean, (double)o->exposure);
    else if (st->total.shading_points == 0)
        fprintf(stderr,
                "render: warning: %s is black: the camera sees no geometry (try --view, or "
                "--camera-pos and --look-at)\n",
                o->output);
    else
        fprintf(stderr, "render: warning: %s is nearly black (mean luminance %.2g): %s\n",
                o->output, mean,
                o->integrator == RT_INTEGRATOR_PATH
                    ? "the scene's lights hardly reach what the camera sees, or its surfaces "
                      "are black (try --exposure, or an --envmap to light it)"
                    : "the surfaces in view are black");
}

/* A warning when samples were left out as not finite (NaN or infinite):
 * each counts as black in its pixel (a pixel is its samples' sum over
 * spp), and a user should know, not find it in --stats. The scene's
 * values are brought into range as they load (rt_radiance()), so none is
 * expected: one means a value that loading did not catch. */
static void
bad_samples_warn(const rt_options *o, const rt_render_stats *st)
{
    uint64_t bad = st->total.bad_samples, all = (uint64_t)o->width * o->height * o->spp;
    if (bad)
        fprintf(stderr,
                "render: warning: %s: %" PRIu64 " of the image's %" PRIu64
                " samples were not finite (NaN or infinite): left out, their pixels darker for "
                "it (a value the scene's loading did not bring into range)\n",
                o->output, bad, all);
}

/* The last line of a run that wrote its image, on a terminal or not: what
 * was written, how large, and how long the whole run took. */
static void
done_say(const run *u)
{
    const rt_options *o = &u->o;
    struct stat       st;
    char              size[32] = "";
    if (stat(o->output, &st) == 0) {
        double b = (double)st.st_size;
        if (b < 1024)
            snprintf(size, sizeof size, ", %.0f bytes", b);
        else if (b < 1 << 20)
            snprintf(size, sizeof size, ", %.1f KB", b / 1024);
        else
            snprintf(size, sizeof size, ", %.1f MB", b / (1 << 20));
    }
    char exposed[96] = "";
    if (!o->exposure_given && o->exposure > 0)
        snprintf(exposed, sizeof exposed, ", exposed %+.1f stops (dim; --exposure 0: as rendered)",
                 (double)o->exposure);
    fprintf(stderr, "render: wrote %s: %ux%u, %u spp%s%s%s%s, in %.2f s (render %.2f s)\n",
            o->output, o->width, o->height, o->spp, size, exposed, o->stats_json ? "; and " : "",
            o->stats_json ? o->stats_json : "", rt_now() - u->start, u->stats->render_secs);
}

/* The render, and on rank 0 (or the one process) the image and reports.
 * Returns the exit status. */
static int
run_render(run *u)
{
    const rt_options *o = &u->o;
    const char       *out = o->output;
    char              err[RT_ERR_LEN];
    signals_catch();
    rt_result r =
        u->dist ? rt_dist_render(u->dist, o, u->scene, u->ts, u->strings, &u->img, u->stats, err)
                : rt_render(o, u->scene, u->ts, u->strings, &u->img, u->stats, err);
    alarm(0);         /* stopped: the tiles rendered are written, however long that takes */
    if (u->rank != 0) /* rank 0 reports for the job */
        return r == RT_OK ? 0 : 1;
    if (r == RT_OK && !o->exposure_given && rt_output_is_png(out))
        u->o.exposure = auto_exposure(&u->img); /* the run's own copy */
    if (r == RT_OK)
        r = rt_image_write(o, &u->img, u->stats, err);
    if (r != RT_OK)
        fprintf(stderr, "render: %s: %s\n", out, err);
    else if (!u->img.done && !o->quiet) {
        dark_warn(o, &u->img, u->stats);
        bad_samples_warn(o, u->stats);
    }
    char partial[RT_MAX_OUTPUT_PATH + 16];
    rt_partial_path(out, partial, sizeof partial);
    if (r == RT_OK && u->img.done) {
        uint32_t ntiles = rt_options_tiles(o), have = 0;
        for (uint32_t i = 0; i < ntiles; i++)
            have += u->img.done[i];
        fprintf(stderr,
                "render: %s: interrupted (%s) with %u of %u tiles rendered: wrote the partial "
                "image %s%s\n",
                out, signalled == SIGTERM ? "SIGTERM" : "SIGINT", have, ntiles, partial,
                rt_output_is_png(out) ? " (PNG: cannot be resumed)"
                                      : "; render --resume finishes it");
    } else if (r == RT_OK && o->resume) {
        unlink(partial); /* finished: the partial image has served */
    }
    if (r == RT_OK && o->stats)
        rt_report_print(o, u->stats, u->ts, u->strings, stderr);
    if (r == RT_OK && o->stats_json &&
        rt_report_json(o, u->stats, u->ts, u->strings, o->stats_json, err))
        fprintf(stderr, "render: %s: %s\n", o->stats_json, err), r = RT_ERR_OPEN;
    if (r == RT_OK && !u->img.done && !o->quiet)
        done_say(u);
    if (r == RT_OK && u->img.done)
        return 128 + (signalled ? signalled : SIGINT); /* 130 or 143, as a shell reports it */
    return r == RT_OK ? 0 : 1;
}

int
main(int argc, char **argv)
{
    run u = {.start = rt_now()};
    int rc = rt_options_parse(argc, argv, &u.o);
    if (rc >= 0)
        return rc;
    char err[RT_ERR_LEN];
    if (!rt_dist_start(&argc, &argv, &u.dist, err)) {
        fprintf(stderr, "render: %s\n", err);
        return 1;
    }
    u.rank = u.dist ? rt_dist_rank(u.dist) : 0;
    if (u.rank != 0)
        u.o.quiet = true; /* rank 0 warns for the job */
    bool ready = run_setup(&u, err);
    /* Under mpirun every rank must be ready; rank 0 names one that is not. */
    char why[RT_ERR_LEN];
    if (u.dist && !rt_dist_agree(u.dist, &u.o, ready ? NULL : err, why)) {
        snprintf(err, sizeof err, "%s", why);
        ready = false;
    }
    rc = 1;
    if (!ready && u.rank == 0)
        fprintf(stderr, "render: %s\n", err);
    else if (ready)
        rc = run_render(&u);
    run_free(&u);
    rt_dist_finish(u.dist);
    return rc;
}
