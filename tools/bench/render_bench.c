/* render-bench: the renderer measured against itself and against raw
 * Embree, each figure a ratio taken in one run.
 *
 *   render-bench [--repeat K] [render options] SCENE
 *   render-bench --scaling T[,T...] [--repeat K] [render options] SCENE
 *
 * Default: the eyelight integrator against raw Embree on the same camera
 * rays. Raw: every thread takes tiles from a counter and traces the
 * pixel-centre camera rays with rtcIntersect1, nothing else (the plain
 * loop a renderer is measured against). Raw8: the same rays eight at a
 * time, 4x2 pixels per rtcIntersect8 with the coherent flag, as the
 * renderer traces camera rays: what Embree alone can do with them, so
 * eyelight / raw8 is the share of the time that is Embree's. Renderer:
 * rt_render() with the eyelight integrator, 1 spp, the same rays plus
 * shading and texture lookups, on a texture cache warmed by one untimed
 * render (the steady state of a long render). Both report the median of
 * --repeat runs (default 3), timed from the first thread's start to the
 * last one's end. One result line:
 *
 *   render-bench threads=T rays=N raw_mrays=R eyelight_mrays=E ratio=E/R
 *       raw8_mrays=P ratio8=E/P
 *
 * --scaling: rt_render(), in this process, for each thread count T, in
 * each texture mode (full, --bypass-texture, --early-out), --repeat times
 * in rounds that visit every configuration once (so slow spells of a noisy
 * machine spread over all of them). Each render starts with a new texture
 * system (no file open, no tile cached); the scene, its interned names,
 * the heap and the OS's file cache are shared, so it is not a new process's
 * cold start (`study` runs each render as a `render` process of its own,
 * and its figures are the ones to compare with a standalone render's). One
 * line per T, medians:
 *
 *   render-bench threads=T full_secs=F bypass_secs=B early_out_secs=E
 *       intern_pct=P speedup=S workers=W lock=L intern_pct_min=P0 intern_pct_max=P1
 *
 * intern_pct: (B - E) / F in percent, what interning costs the full render;
 * speedup: F at the first T listed over F at this T. Both are medians of
 * the ratios within each round, whose runs were close in time, so a slow
 * spell of the machine shifts both sides of a ratio alike. workers: the
 * fewest worker threads any of T's renders reported running;
 * intern_pct_min, _max: the rounds' smallest and largest intern_pct (the
 * spread the median hides); lock: the
 * strategy the string table reports (--ustring-lock). A render whose
 * counts contradict its texture mode ends the run with an error. */
#define _POSIX_C_SOURCE 200809L

#include "rt_render.h"
#include "tool.h"

#include <embree3/rtcore.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char tool_prog[] = "render-bench";

typedef struct raw {
    const rt_options     *o;
    const rt_camera_rays *cam;
    RTCScene              scene;
    _Atomic uint32_t     *next;
    pthread_barrier_t    *start; /* every thread made before any traces, as the renderer's crew */
    uint32_t              tiles_x, ntiles;
    bool                  packets; /* rtcIntersect8 over 4x2 pixels */
    tool_thread_clock     clock;   /* read by the thread itself */
    uint64_t              hits;
    pthread_t             thread;
} raw;

/* The pixels of tile (x0, y0) in 4x2 blocks (aligned to the image, as the
 * renderer's), traced eight at a time; how many rays hit. */
static uint64_t
raw_tile_packets(const raw *r, uint32_t x0, uint32_t y0)
{
    uint64_t hits = 0;
    for (uint32_t by = y0 / 2 * 2; by < y0 + r->o->tile && by < r->o->height; by += 2) {
        for (uint32_t bx = x0 / 4 * 4; bx < x0 + r->o->tile && bx < r->o->width; bx += 4) {
            struct RTCRayHit8 rh;
            int               valid[8];
            for (int l = 0; l < 8; l++) {
                uint32_t x = bx + l % 4, y = by + l / 4;
                float    org[3], dir[3];
                valid[l] = x < r->o->width && y < r->o->height ? -1 : 0;
                rt_camera_ray(r->cam, (float)x + 0.5f, (float)y + 0.5f, org, dir);
                rh.ray.org_x[l] = org[0], rh.ray.org_y[l] = org[1], rh.ray.org_z[l] = org[2];
                rh.ray.dir_x[l] = dir[0], rh.ray.dir_y[l] = dir[1], rh.ray.dir_z[l] = dir[2];
                rh.ray.tnear[l] = 0, rh.ray.tfar[l] = INFINITY, rh.ray.time[l] = 0;
                rh.ray.mask[l] = UINT32_MAX, rh.ray.id[l] = 0, rh.ray.flags[l] = 0;
                rh.hit.geomID[l] = RTC_INVALID_GEOMETRY_ID;
            }
            struct RTCIntersectContext ctx;
            rtcInitIntersectContext(&ctx);
            ctx.flags = RTC_INTERSECT_CONTEXT_FLAG_COHERENT;
            rtcIntersect8(valid, r->scene, &ctx, &rh);
            for (int l = 0; l < 8; l++)
                hits += valid[l] && rh.hit.geomID[l] != RTC_INVALID_GEOMETRY_ID;
        }
    }
    return hits;
}

static void *
raw_main(void *arg)
{
    raw *r = arg;
    /* Counted on this thread's stack: the raw structs sit side by side,
     * and a per-ray write there would share a cache line between threads. */
    uint64_t hits = 0;
    rt_thread_fp_setup(); /* as the renderer's workers trace */
    pthread_barrier_wait(r->start);
    tool_thread_clock_start(&r->clock);
    for (;;) {
        /* Relaxed: hands each tile to one thread; the join orders the rest. */
        uint32_t i = atomic_fetch_add_explicit(r->next, 1, memory_order_relaxed);
        if (i >= r->ntiles)
            break;
        uint32_t x0 = (i % r->tiles_x) * r->o->tile, y0 = (i / r->tiles_x) * r->o->tile;
        if (r->packets) {
            hits += raw_tile_packets(r, x0, y0);
            continue;
        }
        for (uint32_t y = y0; y < y0 + r->o->tile && y < r->o->height; y++) {
            for (uint32_t x = x0; x < x0 + r->o->tile && x < r->o->width; x++) {
                float org[3], dir[3];
                rt_camera_ray(r->cam, (float)x + 0.5f, (float)y + 0.5f, org, dir);
                struct RTCIntersectContext ctx;
                rtcInitIntersectContext(&ctx);
                struct RTCRayHit rh = {.ray = {.org_x = org[0],
                                               .org_y = org[1],
                                               .org_z = org[2],
                                               .dir_x = dir[0],
                                               .dir_y = dir[1],
                                               .dir_z = dir[2],
                                               .tfar = INFINITY,
                                               .mask = UINT32_MAX},
                                       .hit = {.geomID = RTC_INVALID_GEOMETRY_ID}};
                rtcIntersect1(r->scene, &ctx, &rh);
                hits += rh.hit.geomID != RTC_INVALID_GEOMETRY_ID;
            }
        }
    }
    tool_thread_clock_stop(&r->clock);
    r->hits = hits;
    return NULL;
}

static double
raw_run(const rt_options *o, const rt_camera_rays *cam, RTCScene scene, bool packets)
{
    _Atomic uint32_t  next = 0;
    uint32_t          tiles_x = rt_options_tiles_x(o), ntiles = rt_options_tiles(o);
    raw              *r = calloc(o->threads, sizeof *r);
    pthread_barrier_t start;
    if (!r || pthread_barrier_init(&start, NULL, o->threads) != 0)
        tool_die("out of memory");
    for (unsigned t = 0; t < o->threads; t++) {
        r[t] = (raw){.o = o,
                     .cam = cam,
                     .scene = scene,
                     .next = &next,
                     .start = &start,
                     .tiles_x = tiles_x,
                     .ntiles = ntiles,
                     .packets = packets};
        if (pthread_create(&r[t].thread, NULL, raw_main, &r[t]) != 0)
            tool_die("cannot start a thread");
    }
    tool_late run = {0};
    for (unsigned t = 0; t < o->threads; t++) {
        pthread_join(r[t].thread, NULL);
        tool_late_add(&run, &r[t].clock);
    }
    pthread_barrier_destroy(&start);
    free(r);
    return tool_late_secs(&run);
}

/* The scene, its names and the options: what every timed run shares. */
typedef struct bench {
    rt_options  o;
    ustr_table *strings;
    rt_scene   *scene;
} bench;

/* One rt_render() of b's scene with options o; its render_secs. `ts` NULL:
 * a new texture system for this run alone (a cold cache). */
static double
render_once(const bench *b, const rt_options *o, tex_system *ts, rt_render_stats *stats)
{
    tex_system *own = NULL;
    if (!ts &&
        tex_system_create(&(tex_config){.max_memory_mb = o->max_memory_mb, .strings = b->strings},
                          &own, NULL) != TEX_OK)
        tool_die("cannot start the texture system");
    char     err[RT_ERR_LEN];
    rt_image img = {0};
    memset(stats, 0, sizeof *stats);
    if (rt_render(o, b->scene, ts ? ts : own, b->strings, &img, stats, err) != RT_OK)
        tool_die("%s: %s", o->scene, err);
    rt_image_free(&img);
    tex_system_destroy(own);
    return stats->render_secs;
}

static void
against_embree(const bench *b, int repeat, rt_render_stats *stats)
{
    const rt_options *o = &b->o;
    char              err[RT_ERR_LEN];
    tex_system       *ts;
    if (tex_system_create(&(tex_config){.max_memory_mb = o->max_memory_mb, .strings = b->strings},
                          &ts, NULL) != TEX_OK)
        tool_die("cannot start the texture system");
    rt_bvh         *bvh;
    rt_camera_rays *cam;
    if (rt_bvh_create(b->scene, &bvh, err) != RT_OK || rt_camera_rays_create(o, b->scene, &cam))
        tool_die("%s: %s", o->scene, err);
    double raw_secs[64], raw8_secs[64], ren_secs[64];
    render_once(b, o, ts, stats); /* warm-up, untimed: textures loaded, caches filled */
    for (int k = 0; k < repeat; k++) {
        raw_secs[k] = raw_run(o, cam, rt_bvh_embree_scene(bvh), false);
        ren_secs[k] = render_once(b, o, ts, stats);
        raw8_secs[k] = raw_run(o, cam, rt_bvh_embree_scene(bvh), true);
    }
    uint64_t rays = (uint64_t)o->width * o->height;
    double   raw_m = (double)rays / tool_median(raw_secs, repeat) / 1e6;
    double   raw8_m = (double)rays / tool_median(raw8_secs, repeat) / 1e6;
    double   ren_m = (double)rays / tool_median(ren_secs, repeat) / 1e6;
    printf("render-bench threads=%u rays=%" PRIu64 " raw_mrays=%.3f eyelight_mrays=%.3f "
           "ratio=%.3f raw8_mrays=%.3f ratio8=%.3f\n",
           o->threads, rays, raw_m, ren_m, ren_m / raw_m, raw8_m, ren_m / raw8_m);
    fprintf(stderr, "  texture mode %s; %" PRIu64 " lookups per render\n",
            rt_texture_mode_name(o->texture_mode), stats->total.lookups);
    rt_camera_rays_destroy(cam);
    rt_bvh_destroy(bvh);
    tex_system_destroy(ts);
}

enum { MAX_THREAD_COUNTS = 32, MODES = 3 };

static void
usage(FILE *f)
{
    fputs("usage: render-bench [--repeat K] [render options] SCENE\n"
          "       render-bench --scaling T[,T...] [--repeat K] [render options] SCENE\n"
          "  (default)         eyelight against raw Embree on the same camera rays: one\n"
          "                    line of Mrays/s and their ratios\n"
          "  --scaling LIST    the render as render runs it, in each texture mode, at each\n"
          "                    thread count: times, interning's share, speed-up\n"
          "  --repeat K        runs per figure, in rounds; medians reported (default 3)\n"
          "  --version         print the version and exit\n"
          "Any other option is render's (render --help): the view, resolution, lock, ...\n",
          f);
}

/* A render that did not do what its texture mode says measured something
 * else: full reads textures, bypass interns (per lookup) and reads none,
 * early-out neither. (A scene without textures does none of it in any
 * mode.) */
static void
mode_check(const rt_options *o, const rt_render_stats *st)
{
    const rt_thread_stats *t = &st->total;
    bool                   textured = t->lookups + t->bypasses + t->early_outs > 0;
    bool                   per_lookup = o->intern == RT_INTERN_PER_LOOKUP;
    bool                   ok;
    if (o->texture_mode == RT_TEXTURE_FULL)
        ok = t->lookups > 0 && t->bypasses == 0 && t->early_outs == 0 &&
             t->interns == (per_lookup ? t->lookups : 0);
    else if (o->texture_mode == RT_TEXTURE_BYPASS)
        ok = t->bypasses > 0 && t->lookups == 0 && t->early_outs == 0 &&
             t->interns == (per_lookup ? t->bypasses : 0);
    else
        ok = t->early_outs > 0 && t->lookups == 0 && t->bypasses == 0 && t->interns == 0;
    if (textured && !ok)
        tool_die("-t %u, %s: %" PRIu64 " lookups, %" PRIu64 " interns, %" PRIu64
                 " bypasses, %" PRIu64 " early-outs: not what the mode does",
                 o->threads, rt_texture_mode_name(o->texture_mode), t->lookups, t->interns,
                 t->bypasses, t->early_outs);
}

static void
scaling(const bench *b, const char *list, int repeat, rt_render_stats *stats)
{
    unsigned  counts[MAX_THREAD_COUNTS], n = 0;
    tool_list l;
    for (const char *it = tool_list_first(&l, list); it; it = tool_list_next(&l)) {
        if (n == MAX_THREAD_COUNTS)
            tool_bad_usage("--scaling: at most %d thread counts", MAX_THREAD_COUNTS);
        counts[n++] = (unsigned)tool_parse_u64(it, "--scaling", RT_MAX_THREADS);
    }
    tool_list_free(&l);
    if (n == 0)
        tool_bad_usage("--scaling: no thread counts");
    static const rt_texture_mode modes[MODES] = {RT_TEXTURE_FULL, RT_TEXTURE_BYPASS,
                                                 RT_TEXTURE_EARLY_OUT};
    static double                secs[MAX_THREAD_COUNTS][MODES][64];
    unsigned                     workers[MAX_THREAD_COUNTS]; /* the fewest any render ran */
    rt_options                   o = b->o;
    bool                         progress = isatty(STDERR_FILENO);
    o.threads = counts[0];
    render_once(b, &o, NULL, stats); /* untimed: names interned, files in the OS cache */
    for (int k = 0; k < repeat; k++) {
        for (unsigned i = 0; i < n; i++) {
            for (int m = 0; m < MODES; m++) {
                o.threads = counts[i], o.texture_mode = modes[m];
                if (progress)
                    fprintf(stderr, "\rrender-bench: round %d of %d, -t %u, %s      ", k + 1,
                            repeat, counts[i], rt_texture_mode_name(modes[m]));
                secs[i][m][k] = render_once(b, &o, NULL, stats);
                mode_check(&o, stats);
                if ((k == 0 && m == 0) || stats->threads < workers[i])
                    workers[i] = stats->threads;
            }
        }
    }
    if (progress)
        fputc('\n', stderr);
    /* Per round, then the median: runs of one round ran close in time. */
    static double pct[MAX_THREAD_COUNTS][64], speedup[MAX_THREAD_COUNTS][64];
    for (unsigned i = 0; i < n; i++) {
        for (int k = 0; k < repeat; k++) {
            pct[i][k] = 100 * (secs[i][1][k] - secs[i][2][k]) / secs[i][0][k];
            speedup[i][k] = secs[0][0][k] / secs[i][0][k];
        }
    }
    ustr_stats us;
    ustr_table_stats(b->strings, &us);
    for (unsigned i = 0; i < n; i++) {
        double med[MODES];
        for (int m = 0; m < MODES; m++)
            med[m] = tool_median(secs[i][m], repeat);
        double lo = pct[i][0], hi = pct[i][0];
        for (int k = 1; k < repeat; k++)
            lo = pct[i][k] < lo ? pct[i][k] : lo, hi = pct[i][k] > hi ? pct[i][k] : hi;
        printf("render-bench threads=%u full_secs=%.4f bypass_secs=%.4f early_out_secs=%.4f "
               "intern_pct=%.2f speedup=%.3f workers=%u lock=%s intern_pct_min=%.2f "
               "intern_pct_max=%.2f\n",
               counts[i], med[0], med[1], med[2], tool_median(pct[i], repeat),
               tool_median(speedup[i], repeat), workers[i], ustr_lock_name(us.lock), lo, hi);
    }
}

int
main(int argc, char **argv)
{
    /* The renderer's own parser gives the options their defaults and
     * checks; the bench adds --repeat and --scaling. */
    int         repeat = 3;
    const char *thread_counts = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            usage(stdout);
            return 0;
        }
        if (strcmp(argv[i], "--") == 0)
            break;
    }
    /* Ours out of argv, as "--name value" or "--name=value" (as render's). */
    for (int i = 1; i < argc && strcmp(argv[i], "--") != 0;) {
        const char *names[] = {"--repeat", "--scaling"}, *v = NULL;
        int         which = -1, take = 1;
        for (int k = 0; k < 2 && which < 0; k++) {
            size_t len = strlen(names[k]);
            if (strncmp(argv[i], names[k], len) == 0 && argv[i][len] == '=')
                which = k, v = argv[i] + len + 1;
            else if (strcmp(argv[i], names[k]) == 0)
                which = k, v = i + 1 < argc ? argv[i + 1] : NULL, take = 2;
        }
        if (which < 0) {
            i++;
            continue;
        }
        if (!v)
            tool_bad_usage("%s needs a value", names[which]);
        if (which == 0)
            repeat = (int)tool_parse_u64(v, "--repeat", 63);
        else
            thread_counts = v;
        memmove(&argv[i], &argv[i + take], (size_t)(argc - i - take + 1) * sizeof *argv);
        argc -= take;
    }
    char **args = calloc((size_t)argc + 4, sizeof *args);
    if (!args)
        tool_die("out of memory");
    int n = 0;
    args[n++] = "render-bench"; /* the name its messages and --version give */
    args[n++] = "--quiet";
    args[n++] = "--integrator=eyelight";
    args[n++] = "--spp=1";
    for (int i = 1; i < argc; i++)
        args[n++] = argv[i];
    bench b;
    int   rc = rt_options_parse(n, args, &b.o);
    if (rc >= 0) { /* --version, or a usage error said */
        free(args);
        return rc;
    }
    /* Embree's loops trace one camera ray a pixel: the comparison holds for
     * eyelight at 1 spp alone (its line would call another integrator's
     * samples eyelight's rays). */
    if (!thread_counts && (b.o.integrator != RT_INTEGRATOR_EYELIGHT || b.o.spp != 1))
        tool_bad_usage("against Embree's loops, the render is eyelight at --spp 1, which trace "
                       "the same rays (--scaling times any integrator)");

    char err[RT_ERR_LEN];
    if (ustr_table_create(&(ustr_config){.lock = b.o.lock}, &b.strings) != USTR_OK)
        tool_die("out of memory");
    if (rt_scene_load(b.o.scene, b.strings, &b.scene, err) != RT_OK)
        tool_die("%s: %s", b.o.scene, err);
    rt_scene_frame(b.scene, b.o.up, b.o.view);
    rt_render_stats *stats = calloc(1, sizeof *stats);
    if (!stats)
        tool_die("out of memory");
    if (thread_counts)
        scaling(&b, thread_counts, repeat, stats);
    else
        against_embree(&b, repeat, stats);
    rt_scene_free(b.scene);
    ustr_table_destroy(b.strings);
    free(stats);
    free(args);
    return 0;
}
