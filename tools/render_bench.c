/* render-bench: the renderer's eyelight integrator against raw Embree, on
 * the same camera rays of the same scene, measured in one run.
 *
 *   render-bench [-t N] [-r W H] [--repeat K] [--texture full|bypass|early-out] SCENE
 *
 * Raw: every thread takes tiles from a counter and traces the pixel-centre
 * camera rays with rtcIntersect1, nothing else. Renderer: rt_render() with
 * the eyelight integrator, 1 spp, the same rays plus shading and texture
 * lookups, on a texture cache warmed by one untimed render (the steady
 * state of a long render). Both report the median of --repeat runs, timed
 * from the first thread's start to the last one's end. One result line:
 *
 *   render-bench threads=T rays=N raw_mrays=R eyelight_mrays=E ratio=E/R */
#define _POSIX_C_SOURCE 200809L

#include "bench_util.h"
#include "rt_render.h"

#include <embree3/rtcore.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char bench_prog[] = "render-bench";

typedef struct raw {
    const rt_options     *o;
    const rt_camera_rays *cam;
    RTCScene              scene;
    _Atomic uint32_t     *next;
    uint32_t              tiles_x, ntiles;
    double                start, end;
    uint64_t              hits;
    pthread_t             thread;
} raw;

static void *
raw_main(void *arg)
{
    raw *r = arg;
    r->start = bench_now();
    for (;;) {
        /* Relaxed: hands each tile to one thread; the join orders the rest. */
        uint32_t i = atomic_fetch_add_explicit(r->next, 1, memory_order_relaxed);
        if (i >= r->ntiles)
            break;
        uint32_t x0 = (i % r->tiles_x) * r->o->tile, y0 = (i / r->tiles_x) * r->o->tile;
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
                r->hits += rh.hit.geomID != RTC_INVALID_GEOMETRY_ID;
            }
        }
    }
    r->end = bench_now();
    return NULL;
}

static double
raw_run(const rt_options *o, const rt_camera_rays *cam, RTCScene scene)
{
    _Atomic uint32_t next = 0;
    uint32_t         tiles_x = (o->width + o->tile - 1) / o->tile;
    uint32_t         ntiles = tiles_x * ((o->height + o->tile - 1) / o->tile);
    raw             *r = calloc(o->threads, sizeof *r);
    if (!r)
        bench_die("out of memory");
    for (unsigned t = 0; t < o->threads; t++) {
        r[t] = (raw){.o = o,
                     .cam = cam,
                     .scene = scene,
                     .next = &next,
                     .tiles_x = tiles_x,
                     .ntiles = ntiles};
        if (pthread_create(&r[t].thread, NULL, raw_main, &r[t]) != 0)
            bench_die("cannot start a thread");
    }
    double first = 0, last = 0;
    for (unsigned t = 0; t < o->threads; t++) {
        pthread_join(r[t].thread, NULL);
        first = t == 0 || r[t].start < first ? r[t].start : first;
        last = r[t].end > last ? r[t].end : last;
    }
    free(r);
    return last - first;
}

int
main(int argc, char **argv)
{
    /* The renderer's own parser gives the options their defaults and
     * checks; the bench adds --repeat. */
    int repeat = 3;
    for (int i = 1; i + 1 < argc; i++) {
        if (strcmp(argv[i], "--repeat") == 0) {
            repeat = (int)bench_parse_u64(argv[i + 1], "--repeat", 63);
            memmove(&argv[i], &argv[i + 2], (size_t)(argc - i - 1) * sizeof *argv);
            argc -= 2;
            break;
        }
    }
    char **args = calloc((size_t)argc + 4, sizeof *args);
    if (!args)
        bench_die("out of memory");
    int n = 0;
    args[n++] = "render";
    args[n++] = "--quiet";
    args[n++] = "--integrator=eyelight";
    args[n++] = "--spp=1";
    for (int i = 1; i < argc; i++)
        args[n++] = argv[i];
    rt_options o;
    int        rc = rt_options_parse(n, args, &o);
    if (rc >= 0)
        return rc;

    char        err[RT_ERR_LEN];
    ustr_table *strings;
    rt_scene   *scene;
    tex_system *ts;
    if (ustr_table_create(&(ustr_config){.lock = o.lock}, &strings) != USTR_OK)
        bench_die("out of memory");
    if (rt_scene_load(o.scene, strings, &scene, err) != RT_OK)
        bench_die("%s: %s", o.scene, err);
    if (tex_system_create(&(tex_config){.max_memory_mb = o.max_memory_mb, .strings = strings},
                          &ts) != TEX_OK)
        bench_die("cannot start the texture system");
    rt_bvh         *bvh;
    rt_camera_rays *cam;
    if (rt_bvh_create(scene, &bvh, err) != RT_OK || rt_camera_rays_create(&o, scene, &cam))
        bench_die("%s: %s", o.scene, err);

    double           raw_secs[64], ren_secs[64];
    rt_render_stats *stats = calloc(1, sizeof *stats);
    rt_image         img = {0};
    if (!stats)
        bench_die("out of memory");
    /* Warm-up, untimed: textures loaded, caches filled. */
    if (rt_render(&o, scene, ts, strings, &img, stats, err) != RT_OK)
        bench_die("%s: %s", o.scene, err);
    free(img.rgba);
    for (int k = 0; k < repeat; k++) {
        raw_secs[k] = raw_run(&o, cam, rt_bvh_embree_scene(bvh));
        memset(stats, 0, sizeof *stats);
        if (rt_render(&o, scene, ts, strings, &img, stats, err) != RT_OK)
            bench_die("%s: %s", o.scene, err);
        free(img.rgba);
        ren_secs[k] = stats->render_secs;
    }
    uint64_t rays = (uint64_t)o.width * o.height;
    double   raw_med = bench_median(raw_secs, repeat);
    double   ren_med = bench_median(ren_secs, repeat);
    double   raw_m = (double)rays / raw_med / 1e6, ren_m = (double)rays / ren_med / 1e6;
    printf("render-bench threads=%u rays=%" PRIu64 " raw_mrays=%.3f eyelight_mrays=%.3f "
           "ratio=%.3f\n",
           o.threads, rays, raw_m, ren_m, ren_m / raw_m);
    fprintf(stderr, "  texture mode %s; %" PRIu64 " lookups per render\n",
            rt_texture_mode_name(o.texture_mode), stats->total.lookups);
    rt_camera_rays_destroy(cam);
    rt_bvh_destroy(bvh);
    tex_system_destroy(ts);
    rt_scene_free(scene);
    ustr_table_destroy(strings);
    free(stats);
    free(args);
    return 0;
}
