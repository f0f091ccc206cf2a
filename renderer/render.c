/* The render loop: Embree for visibility, tiles handed out by an atomic
 * counter, per-pixel seeded sampling (so the image never depends on threads
 * or tile size), and shading that looks every texture slot up by filename
 * in the mode the options ask for. */
#include "render_internal.h"

#if defined(__SSE__)
#include <xmmintrin.h> /* _mm_getcsr, _mm_setcsr */
#endif
#include <embree3/rtcore.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---- cancelling ---- */

/* Lock-free, so storing it is async-signal-safe; relaxed everywhere: it
 * publishes nothing, the workers only need to see it soon, and what they
 * rendered reaches the caller through pthread_join(). */
static atomic_bool cancel_requested;
_Static_assert(ATOMIC_BOOL_LOCK_FREE == 2, "rt_render_cancel() must be async-signal-safe");

void
rt_render_cancel(void)
{
    atomic_store_explicit(&cancel_requested, true, memory_order_relaxed);
}

bool
rt_render_cancelled(void)
{
    return atomic_load_explicit(&cancel_requested, memory_order_relaxed);
}

/* ---- per-pixel random numbers ---- */

static inline uint64_t
mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static inline float
rnd(uint64_t *state)
{
    *state += 0x9E3779B97F4A7C15ULL;
    return (float)(mix64(*state) >> 40) * 0x1p-24f;
}

/* ---- opening the scene's textures ---- */

static int
open_job_cmp(const void *a, const void *b)
{
    const rt__open_job *x = a, *y = b;
    if (x->name != y->name)
        return (uintptr_t)x->name < (uintptr_t)y->name ? -1 : 1;
    return (int)x->raw - (int)y->raw;
}

/* The distinct files the materials name, each once; *out NULL when none. */
static rt_result
open_jobs(const rt_scene *s, rt__open_job **out, uint32_t *n)
{
    *out = NULL, *n = 0;
    size_t        cap = (size_t)s->nmaterials * RT_SLOT_COUNT, k = 0;
    rt__open_job *jobs = cap ? malloc(cap * sizeof *jobs) : NULL;
    if (cap && !jobs)
        return RT_ERR_NOMEM;
    for (uint32_t m = 0; m < s->nmaterials; m++)
        for (int i = 0; i < RT_SLOT_COUNT; i++)
            if (s->materials[m].slots[i].name)
                jobs[k++] =
                    (rt__open_job){s->materials[m].slots[i].name, s->materials[m].slots[i].raw};
    if (k)
        qsort(jobs, k, sizeof *jobs, open_job_cmp);
    size_t unique = 0;
    for (size_t i = 0; i < k; i++)
        if (unique == 0 || open_job_cmp(&jobs[unique - 1], &jobs[i]) != 0)
            jobs[unique++] = jobs[i];
    *out = jobs, *n = (uint32_t)unique;
    return RT_OK;
}

/* Lazy opening: the jobs' files declared to the texture system
 * (tex_files_declare()) instead of handed to the workers; *n becomes 0. */
static bool
files_declare(tex_system *ts, const rt__open_job *jobs, uint32_t *n)
{
    ustr *names = malloc((*n ? *n : 1) * sizeof *names);
    bool *raw = malloc((*n ? *n : 1) * sizeof *raw);
    for (uint32_t i = 0; names && raw && i < *n; i++)
        names[i] = jobs[i].name, raw[i] = jobs[i].raw;
    bool ok = names && raw && tex_files_declare(ts, names, raw, *n) == TEX_OK;
    free(names), free(raw);
    *n = 0;
    return ok;
}

/* ---- shading ---- */

enum { AO_RAYS = 4 }; /* per camera ray, two draws each */

/* The shading of one camera-ray hit by the simple integrators: every slot
 * looked up, then the integrator's colour. */
static void
shade(rt__worker *w, const rt__hit *h, v3 dir, uint64_t *rng, float rgb[3])
{
    rt__surface sf;
    rt__surface_eval(w, h, &sf);
    const float *base = sf.base, *em = sf.emissive;
    float        occlusion = sf.occlusion;
    v3           n = v3_dot(sf.n, dir) > 0 ? v3_mul(sf.n, -1) : sf.n; /* facing the eye */

    switch (w->o->integrator) {
    case RT_INTEGRATOR_NORMAL:
        rgb[0] = n.x * 0.5f + 0.5f, rgb[1] = n.y * 0.5f + 0.5f, rgb[2] = n.z * 0.5f + 0.5f;
        return;
    case RT_INTEGRATOR_UV:
        rgb[0] = h->uv[0][0], rgb[1] = h->uv[0][1], rgb[2] = 0;
        return;
    case RT_INTEGRATOR_ALBEDO:
        memcpy(rgb, base, 3 * sizeof(float));
        return;
    case RT_INTEGRATOR_AO: {
        v3  ng = v3_dot(h->ng, dir) > 0 ? v3_mul(v3_norm(h->ng), -1) : v3_norm(h->ng);
        v3  t = v3_norm(v3_cross(fabsf(ng.x) > 0.5f ? (v3){0, 1, 0} : (v3){1, 0, 0}, ng));
        v3  b = v3_cross(ng, t);
        int open = 0;
        for (int i = 0; i < AO_RAYS; i++) {
            float       u[2] = {rnd(rng), rnd(rng)};
            v3          d3 = v3_from_local(rt_cosine_hemisphere(u), t, b, ng);
            rt__ray_ctx ctx;
            rt__ray_ctx_init(&ctx, w);
            struct RTCRay ray = {.org_x = h->p.x,
                                 .org_y = h->p.y,
                                 .org_z = h->p.z,
                                 .dir_x = d3.x,
                                 .dir_y = d3.y,
                                 .dir_z = d3.z,
                                 .tnear = 0.5e-4f * w->scene_radius,
                                 .tfar = 0.5f * w->scene_radius,
                                 .mask = UINT32_MAX};
            rtcOccluded1(w->rtc, &ctx.rtc, &ray);
            w->st->rays++;
            open += ray.tfar >= 0;
        }
        float k = (float)open / AO_RAYS * occlusion;
        rgb[0] = base[0] * k, rgb[1] = base[1] * k, rgb[2] = base[2] * k;
        return;
    }
    default: { /* eyelight */
        float k = fabsf(v3_dot(n, dir)) * occlusion;
        for (int c = 0; c < 3; c++)
            rgb[c] = base[c] * k + em[c];
    }
    }
}

/* ---- tiles ---- */

/* The pixels of one tile, clipped to the image. */
typedef struct rect {
    uint32_t x0, y0, x1, y1; /* [x0, x1) x [y0, y1) */
} rect;

/* One block's lanes: lane l is pixel (x[l], y[l]); it is traced when the
 * pixel is in the image, and shaded and written when it is in the tile
 * too. sum[l] gathers its samples; key[l] seeds its streams (the simple
 * integrators'). */
typedef struct block {
    uint32_t x[RT__PACKET], y[RT__PACKET];
    bool     traced[RT__PACKET], shaded[RT__PACKET];
    float    sum[RT__PACKET][4];
    uint64_t key[RT__PACKET];
} block;

/* Also asks for the block's pixels in the image, to be written: they are
 * written once the block is shaded, and a write that missed the cache held
 * up every store after it (the 1024x1024 image is 16 MiB; perf put a
 * twentieth of an eyelight render in the stores that followed). */
static void
block_init(block *b, rt__worker *w, const rect *tile, uint32_t bx, uint32_t by)
{
    const rt_options *o = w->o;
    for (int l = 0; l < RT__PACKET; l++) {
        uint32_t x = bx + l % RT__BLOCK_W, y = by + l / RT__BLOCK_W;
        b->x[l] = x, b->y[l] = y;
        b->traced[l] = x < o->width && y < o->height;
        b->shaded[l] = x >= tile->x0 && x < tile->x1 && y >= tile->y0 && y < tile->y1;
        b->sum[l][0] = b->sum[l][1] = b->sum[l][2] = b->sum[l][3] = 0;
        if (b->shaded[l])
            __builtin_prefetch(&w->img->rgba[((size_t)y * o->width + x) * 4], 1);
    }
}

/* The shaded lanes' pixels: the mean of their samples. */
static void
block_write(const block *b, rt__worker *w)
{
    const rt_options *o = w->o;
    float             inv_spp = 1 / (float)o->spp;
    for (int l = 0; l < RT__PACKET; l++) {
        if (!b->shaded[l])
            continue;
        float *out = &w->img->rgba[((size_t)b->y[l] * o->width + b->x[l]) * 4];
        for (int c = 0; c < 4; c++)
            out[c] = b->sum[l][c] * inv_spp;
    }
}

/* One sample of a block's pixels by the simple integrators: traced, and
 * waiting to be shaded. Each sample draws from its own stream, seeded by
 * the pixel and the sample's number (so a pixel's samples do not depend on
 * which other pixels a packet holds), and only where something draws. */
typedef struct in_flight {
    block     *b;
    bool       last; /* the block's last sample: the block is written once it is shaded */
    rt__packet pk;
    uint64_t   rng[RT__PACKET]; /* each lane's stream, past the pixel's jitter */
} in_flight;

static bool
draws_random(const rt_options *o)
{
    return o->spp > 1 || o->integrator == RT_INTEGRATOR_AO;
}

static void
block_keys(block *b, const rt_options *o)
{
    for (int l = 0; l < RT__PACKET; l++)
        b->key[l] =
            draws_random(o) ? mix64(o->seed ^ mix64(((uint64_t)b->y[l] << 32) | b->x[l])) : 0;
}

static void
sample_trace(rt__worker *w, block *b, unsigned s, in_flight *f)
{
    const rt_options *o = w->o;
    /* Sample s's stream starts where sample s - 1's would end if it drew
     * all it can: two for the pixel, two per AO ray. */
    uint64_t draws = 2 + (o->integrator == RT_INTEGRATOR_AO ? 2 * AO_RAYS : 0);
    float    px[RT__PACKET] = {0}, py[RT__PACKET] = {0};
    for (int l = 0; l < RT__PACKET; l++) {
        if (!b->traced[l])
            continue;
        f->rng[l] = b->key[l] + (uint64_t)s * draws * 0x9E3779B97F4A7C15ULL;
        float sx = o->spp > 1 ? rnd(&f->rng[l]) : 0.5f, sy = o->spp > 1 ? rnd(&f->rng[l]) : 0.5f;
        px[l] = (float)b->x[l] + sx, py[l] = (float)b->y[l] + sy;
    }
    rt__packet_fill(&f->pk, w->v, px, py, b->traced);
    rt__packet_trace(w, &f->pk);
    rt__packet_prefetch_prims(w, &f->pk);
    f->b = b, f->last = s + 1 == o->spp;
}

/* Eyelight at the lanes whose material names no texture, eight at a time.
 * For such a lane rt__hit_fill(), rt__surface_eval() and shade() come down
 * to the interpolated normal and the material's constants; here that is
 * the same arithmetic in the same order, lane by lane over arrays, so the
 * compiler makes it four lanes wide and each pixel gets the same bits
 * (test render.eyelight_flat). On a large untextured mesh those calls, a
 * lane at a time, were a quarter of the render (perf). Sets flat[l] for
 * the lanes it shaded. */
static void
eyelight_flat(rt__worker *w, in_flight *f, bool flat[RT__PACKET])
{
    const rt_scene          *s = w->s;
    const struct RTCRayHit8 *rh = &f->pk.rh;
    const rt_material       *m[RT__PACKET];
    float                    nx[RT__PACKET], ny[RT__PACKET], nz[RT__PACKET], k[RT__PACKET];
    bool                     any = false;
    for (int l = 0; l < RT__PACKET; l++) {
        uint32_t prim = 0, mat = 0;
        flat[l] = f->b->shaded[l] && rt__packet_lane_hit(&f->pk, l);
        if (flat[l]) {
            prim = rh->hit.primID[l], mat = rt_scene_material_of(s, prim);
            flat[l] = !(w->needs[mat] & RT__NEED_LOOKUP);
        }
        nx[l] = ny[l] = nz[l] = 0;
        if (!flat[l])
            continue;
        const uint32_t *ix = &s->indices[3 * prim];
        const float    *n0 = &s->normals[3 * ix[0]], *n1 = &s->normals[3 * ix[1]],
                    *n2 = &s->normals[3 * ix[2]];
        float b1 = rh->hit.u[l], b2 = rh->hit.v[l], b0 = 1 - b1 - b2;
        nx[l] = n0[0] * b0 + n1[0] * b1 + n2[0] * b2;
        ny[l] = n0[1] * b0 + n1[1] * b1 + n2[1] * b2;
        nz[l] = n0[2] * b0 + n1[2] * b1 + n2[2] * b2;
        m[l] = &s->materials[mat];
        any = true;
    }
    if (!any)
        return;
    /* v3_norm(), then |n . dir|: facing the eye flips n, not the cosine. */
    for (int l = 0; l < RT__PACKET; l++) {
        float len = sqrtf(nx[l] * nx[l] + ny[l] * ny[l] + nz[l] * nz[l]), inv = 1 / len;
        float x = len > 0 ? nx[l] * inv : nx[l], y = len > 0 ? ny[l] * inv : ny[l],
              z = len > 0 ? nz[l] * inv : nz[l];
        k[l] = fabsf(x * rh->ray.dir_x[l] + y * rh->ray.dir_y[l] + z * rh->ray.dir_z[l]);
    }
    for (int l = 0; l < RT__PACKET; l++) {
        if (!flat[l])
            continue;
        /* No occlusion factor: with no map, rt__surface_eval()'s is
         * 1 + strength * (1 - 1), exactly 1 as the scene keeps strengths
         * finite (mat_float()), and k * 1 is k. */
        float v[3];
        for (int c = 0; c < 3; c++)
            v[c] = m[l]->base_color[c] * k[l] + m[l]->emissive[c];
        w->st->shading_points++;
        if (!isfinite(v[0] + v[1] + v[2])) { /* as sample_shade(): counted, left out */
            w->st->bad_samples++;
            continue;
        }
        for (int c = 0; c < 3; c++)
            f->b->sum[l][c] += v[c];
        f->b->sum[l][3] += 1;
    }
}

static void
sample_shade(rt__worker *w, in_flight *f)
{
    const struct RTCRayHit8 *rh = &f->pk.rh; /* read in place: no lane copied out */
    block                   *b = f->b;
    bool                     flat[RT__PACKET] = {false};
    if (w->o->integrator == RT_INTEGRATOR_EYELIGHT)
        eyelight_flat(w, f, flat);
    for (int l = 0; l < RT__PACKET; l++) {
        if (!b->shaded[l])
            continue;
        w->st->rays++;
        if (!rt__packet_lane_hit(&f->pk, l) || flat[l])
            continue;
        uint32_t prim = rh->hit.primID[l];
        v3       ray = f->pk.ray[l], dir = {rh->ray.dir_x[l], rh->ray.dir_y[l], rh->ray.dir_z[l]};
        uint8_t  needs = w->needs[rt_scene_material_of(w->s, prim)];
        rt__hit  h;
        rt__hit_fill(w->s, prim, rh->hit.u[l], rh->hit.v[l], needs, &h);
        h.p = v3_add(w->v->origin, v3_mul(dir, rh->ray.tfar[l]));
        h.ng = (v3){rh->hit.Ng_x[l], rh->hit.Ng_y[l], rh->hit.Ng_z[l]};
        rt__hit_derivatives(w, prim, needs, &h, ray);
        float rgb[3];
        shade(w, &h, dir, &f->rng[l], rgb);
        if (!isfinite(rgb[0] + rgb[1] + rgb[2])) { /* as the path tracer: counted, left out */
            w->st->bad_samples++;
            continue;
        }
        for (int c = 0; c < 3; c++)
            b->sum[l][c] += rgb[c];
        b->sum[l][3] += 1;
    }
    if (f->last)
        block_write(b, w);
}

/* A tile's pixels by the simple integrators, block by block and sample by
 * sample, shaded one packet behind the tracing: a packet's indices are
 * asked for after its trace and its vertices before the next trace, so
 * they are on their way while Embree works (shaded right after its trace,
 * a packet waited on its indices, which on a large mesh miss the cache:
 * docs/render-performance.md). Two
 * blocks are live at most, the one being traced and the one being shaded;
 * each block's samples are shaded in order, so the image is the same. */
static void
render_tile_simple(rt__worker *w, const rect *t)
{
    block     blocks[2];
    in_flight f[2];
    unsigned  nb = 0, nf = 0;
    for (uint32_t by = t->y0 / RT__BLOCK_H * RT__BLOCK_H; by < t->y1; by += RT__BLOCK_H)
        for (uint32_t bx = t->x0 / RT__BLOCK_W * RT__BLOCK_W; bx < t->x1; bx += RT__BLOCK_W) {
            block *b = &blocks[nb++ % 2];
            block_init(b, w, t, bx, by);
            block_keys(b, w->o);
            for (unsigned s = 0; s < w->o->spp; s++, nf++) {
                in_flight *prev = &f[(nf + 1) % 2];
                if (nf)
                    rt__packet_prefetch_vertices(w, &prev->pk);
                sample_trace(w, b, s, &f[nf % 2]);
                if (nf)
                    sample_shade(w, prev);
            }
        }
    if (nf) {
        in_flight *last = &f[(nf + 1) % 2];
        rt__packet_prefetch_vertices(w, &last->pk);
        sample_shade(w, last);
    }
}

/* A block's pixels by the path tracer: each sample its own sequences,
 * jittered over the pixel when there are several; a sample that is not
 * finite is counted and dropped (it adds nothing), never written. Alpha:
 * the share of camera rays that hit the scene, or 1 with an environment
 * map. */
static void
render_block_path(rt__worker *w, const rect *tile, uint32_t bx, uint32_t by)
{
    const rt_options *o = w->o;
    block             b;
    rt_sampler_pixel  kept[RT__PACKET]; /* each pixel's pair seeds, made once */
    block_init(&b, w, tile, bx, by);
    for (int l = 0; l < RT__PACKET; l++)
        if (b.traced[l])
            rt_sampler_pixel_init(&kept[l], o->seed, b.x[l], b.y[l]);
    for (unsigned s = 0; s < o->spp; s++) {
        rt__packet pk;
        rt_sampler smp[RT__PACKET];
        float      px[RT__PACKET] = {0}, py[RT__PACKET] = {0};
        for (int l = 0; l < RT__PACKET; l++) {
            if (!b.traced[l])
                continue;
            float u[2];
            rt_sampler_start_kept(&smp[l], &kept[l], s);
            rt_sampler_2d(&smp[l], u);
            if (o->spp == 1)
                u[0] = u[1] = 0.5f;
            px[l] = (float)b.x[l] + u[0], py[l] = (float)b.y[l] + u[1];
        }
        rt__packet_fill(&pk, w->v, px, py, b.traced);
        rt__packet_trace(w, &pk);
        rt__packet_prefetch(w, &pk);
        for (int l = 0; l < RT__PACKET; l++) {
            if (!b.shaded[l])
                continue;
            struct RTCRayHit first;
            float            rgb[3];
            w->st->rays++;
            bool hit = rt__packet_hit(&pk, l, &first);
            hit = rt__path_sample(w, &smp[l], pk.ray[l], hit ? &first : NULL, rgb);
            if (!isfinite(rgb[0]) || !isfinite(rgb[1]) || !isfinite(rgb[2])) {
                w->st->bad_samples++;
                continue;
            }
            for (int c = 0; c < 3; c++)
                b.sum[l][c] += rgb[c];
            b.sum[l][3] += hit || w->env->filename; /* an environment is part of the picture */
        }
    }
    block_write(&b, w);
}

/* Tile i: the blocks that overlap it, whole. */
static void
render_tile(rt__worker *w, uint32_t i)
{
    const rt_options *o = w->o;
    uint32_t          x0 = (i % w->tiles_x) * o->tile, y0 = (i / w->tiles_x) * o->tile;
    rect              t = {x0, y0, x0 + o->tile < o->width ? x0 + o->tile : o->width,
              y0 + o->tile < o->height ? y0 + o->tile : o->height};
    if (o->integrator != RT_INTEGRATOR_PATH) {
        render_tile_simple(w, &t);
        return;
    }
    for (uint32_t by = t.y0 / RT__BLOCK_H * RT__BLOCK_H; by < t.y1; by += RT__BLOCK_H)
        for (uint32_t bx = t.x0 / RT__BLOCK_W * RT__BLOCK_W; bx < t.x1; bx += RT__BLOCK_W)
            render_block_path(w, &t, bx, by);
}

/* The worker's last act: the main thread may stop waiting. */
static void
worker_leave(rt__worker *w)
{
    pthread_mutex_lock(&w->crew->lock);
    w->crew->running--;
    pthread_cond_signal(&w->crew->left);
    pthread_mutex_unlock(&w->crew->lock);
}

void
rt_thread_fp_setup(void)
{
#if defined(__SSE__)
    _mm_setcsr(_mm_getcsr() | 0x8040); /* FTZ (bit 15) and DAZ (bit 6) */
#endif
}

/* Waits until the main thread has started every worker, so that all of
 * them take their first job together: otherwise the first ones render
 * while the last are still being made, and -t N is not N workers
 * throughout. */
static void
worker_wait_for_crew(rt__worker *w)
{
    pthread_mutex_lock(&w->crew->lock);
    while (!w->crew->open)
        pthread_cond_wait(&w->crew->gate, &w->crew->lock);
    pthread_mutex_unlock(&w->crew->lock);
}

static void *
worker_main(void *arg)
{
    rt__worker *w = arg;
    rt_thread_fp_setup();
    /* Counted on this thread's own stack, copied out at the end: the
     * workers' slots in rt_render_stats sit side by side, and counting there
     * would bounce one cache line between them at every ray. */
    rt_thread_stats mine = {0}, *out = w->st;
    w->st = &mine;
    bool ready = tex_thread_create(w->ts, &w->tc) == TEX_OK;
    worker_wait_for_crew(w);
    w->start = w->end = rt_now();
    if (!ready) {
        worker_leave(w);
        return NULL;
    }
    double cpu_start = rt__thread_cpu_secs();
    for (;;) {
        /* Relaxed: the counter only hands each job to one rt__worker; pixels
         * reach the writer through pthread_join(), which orders everything,
         * and an opened file is published by the texture system itself. */
        uint32_t i = atomic_fetch_add_explicit(w->next_job, 1, memory_order_relaxed);
        if (i < w->nopens) {
            /* A file that fails is reported once here; its lookups count. */
            (void)tex_file_open(w->ts, w->tc, w->opens[i].name, w->opens[i].raw);
            continue;
        }
        /* Past the opens, the counter numbers the tiles, unless a tile
         * source hands them out. */
        i -= w->nopens;
        if (rt_render_cancelled() || (w->src ? !w->src->next(w->src->ctx, &i) : i >= w->ntiles))
            break;
        if (w->done[i]) { /* resumed: rendered before */
            /* Relaxed: progress display only. */
            atomic_fetch_add_explicit(w->tiles_done, 1, memory_order_relaxed);
            continue;
        }
        render_tile(w, i);
        w->st->tiles++;
        w->done[i] = 1; /* this worker's alone: each tile is handed out once */
        /* Relaxed: progress display only. */
        atomic_fetch_add_explicit(w->tiles_done, 1, memory_order_relaxed);
    }
    tex_thread_destroy(w->tc);
    w->end = rt_now();
    mine.busy_secs = w->end - w->start;
    mine.cpu_secs = rt__thread_cpu_secs() - cpu_start;
    *out = mine;
    w->st = out;
    worker_leave(w);
    return NULL;
}

/* Everything one render's workers share. */
typedef struct job_board {
    _Atomic uint32_t      next, done;
    rt__crew              crew;
    const rt__open_job   *opens;
    const uint8_t        *needs;
    uint8_t              *done_map; /* rt_image.done */
    const rt_lights      *lights;
    const rt__env        *env;
    const rt_tile_source *src;
    uint32_t              nopens, tiles_x, ntiles;
    double                start; /* rt_now() when the workers started */
} job_board;

/* Tiles done so far. Relaxed: for display only. */
static uint32_t
tiles_done(const job_board *jb)
{
    return atomic_load_explicit(&jb->done, memory_order_relaxed);
}

/* A --progress line (progress.c) for the board. */
static void
progress_line(const rt_options *o, const job_board *jb, rt__progress_log *pl, bool first,
              bool final)
{
    rt__progress_line(o, pl, tiles_done(jb), jb->ntiles, jb->start, jb->src, first, final);
}

/* Waits until every worker has left: showing progress every 20 ms, or,
 * with a tile source, polling it every millisecond (a tile source talks to
 * other processes; this process's share of the tiles is no measure of the
 * job's progress). */
static void
wait_workers(const rt_options *o, job_board *jb)
{
    long             step_ns = jb->src ? 1000 * 1000 : 20 * 1000 * 1000;
    rt__progress_log pl = {0};
    progress_line(o, jb, &pl, true, false);
    pthread_mutex_lock(&jb->crew.lock);
    while (jb->crew.running > 0) {
        pthread_mutex_unlock(&jb->crew.lock);
        if (jb->src)
            jb->src->poll(jb->src->ctx);
        else
            rt__progress_bar(o, tiles_done(jb), jb->ntiles, jb->start, false);
        progress_line(o, jb, &pl, false, false);
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += step_ns;
        until.tv_sec += until.tv_nsec / 1000000000;
        until.tv_nsec %= 1000000000;
        pthread_mutex_lock(&jb->crew.lock);
        if (jb->crew.running > 0)
            pthread_cond_timedwait(&jb->crew.left, &jb->crew.lock, &until);
    }
    pthread_mutex_unlock(&jb->crew.lock);
    progress_line(o, jb, &pl, false, true);
}

void
rt_thread_stats_add(rt_thread_stats *to, const rt_thread_stats *from)
{
    to->busy_secs += from->busy_secs, to->cpu_secs += from->cpu_secs;
    to->tiles += from->tiles;
#define ADD(name, label) to->name += from->name;
    RT_WORK_COUNTS(ADD)
#undef ADD
}

/* Starts o->threads workers on the board, shows progress while they run,
 * joins them and sums their statistics. */
static rt_result
run_workers(const rt_options *o, const rt_scene *scene, const rt__view *v, RTCScene rtc,
            tex_system *ts, ustr_table *strings, rt_image *img, job_board *jb,
            rt_render_stats *stats, char err[RT_ERR_LEN])
{
    rt__worker *w = calloc(o->threads, sizeof *w);
    if (!w) {
        snprintf(err, RT_ERR_LEN, "out of memory");
        return RT_ERR_NOMEM;
    }
    v3        diag = v3_sub(v3_load(scene->bounds_max), v3_load(scene->bounds_min));
    unsigned  started = 0;
    tex_stats before, after; /* open_us: the workers' share alone */
    tex_system_stats(ts, &before);
    jb->start = rt_now();
    for (unsigned i = 0; i < o->threads; i++) {
        w[i] = (rt__worker){.o = o,
                            .s = scene,
                            .v = v,
                            .rtc = rtc,
                            .ts = ts,
                            .strings = strings,
                            .img = img,
                            .next_job = &jb->next,
                            .tiles_done = &jb->done,
                            .crew = &jb->crew,
                            .opens = jb->opens,
                            .needs = jb->needs,
                            .done = jb->done_map,
                            .lights = jb->lights,
                            .env = jb->env,
                            .src = jb->src,
                            .nopens = jb->nopens,
                            .tiles_x = jb->tiles_x,
                            .ntiles = jb->ntiles,
                            .scene_radius = 0.5f * sqrtf(v3_dot(diag, diag)),
                            .cutouts = rt__scene_has_cutouts(scene),
                            .st = &stats->per_thread[i]};
        if (pthread_create(&w[i].thread, NULL, worker_main, &w[i]) != 0)
            break;
        started++;
    }
    pthread_mutex_lock(&jb->crew.lock);
    jb->crew.running -= o->threads - started; /* threads that never started never run */
    jb->crew.open = true;
    pthread_cond_broadcast(&jb->crew.gate);
    pthread_mutex_unlock(&jb->crew.lock);
    stats->threads = started;
    if (started == 0) {
        free(w);
        snprintf(err, RT_ERR_LEN, "cannot start a thread");
        return RT_ERR_NOMEM;
    }
    wait_workers(o, jb);
    for (unsigned i = 0; i < started; i++)
        pthread_join(w[i].thread, NULL);
    if (!jb->src)
        rt__progress_bar(o, tiles_done(jb), jb->ntiles, jb->start, true);
    /* From the first rt__worker's start to the last one's end, as the workers
     * read the clock: the main thread's polling does not count. */
    double first = w[0].start, last = w[0].end;
    for (unsigned i = 0; i < started; i++) {
        first = w[i].start < first ? w[i].start : first;
        last = w[i].end > last ? w[i].end : last;
        rt_thread_stats_add(&stats->total, &stats->per_thread[i]);
    }
    stats->render_secs = last - first;
    stats->started = first;
    tex_system_stats(ts, &after); /* their texture contexts, destroyed, are counted */
    stats->open_secs = (double)(after.open_us - before.open_us) / 1e6;
    free(w);
    /* Relaxed: after the joins. Short of the tiles and not cancelled: the
     * workers that did start could not make their texture contexts. (A
     * tile source's process renders only its share.) */
    if (!jb->src && atomic_load_explicit(&jb->done, memory_order_relaxed) < jb->ntiles &&
        !rt_render_cancelled()) {
        snprintf(err, RT_ERR_LEN, "out of memory: workers could not start");
        return RT_ERR_NOMEM;
    }
    return RT_OK;
}

/* The path tracer's lights and environment; nothing for the others. */
static rt_result
path_setup(const rt_options *o, const rt_scene *scene, tex_system *ts, ustr_table *strings,
           rt__env *env, rt_lights **lights, float **grid)
{
    *lights = NULL, *grid = NULL;
    if (o->integrator != RT_INTEGRATOR_PATH)
        return RT_OK;
    rt_env_grid g = {0};
    if (o->envmap) {
        env->filename = o->envmap;
        env->filename_len = strlen(o->envmap);
        env->name = ustr_table_intern(strings, env->filename, env->filename_len);
        if (!env->name)
            return RT_ERR_NOMEM;
        /* Only full texturing reads the map; the other modes see white. */
        tex_file_info info;
        if (o->texture_mode == RT_TEXTURE_FULL) {
            *grid = rt_env_grid_read(ts, env->name, &g);
            env->constant = tex_file_info_get(ts, env->name, &info) == TEX_OK && info.constant;
        }
    }
    return rt_lights_create(scene, *grid ? &g : NULL, lights);
}

/* The view as the statistics report it. */
static void
view_report(const rt_options *o, const rt_scene *s, const rt__view *v, rt_camera *c)
{
    v3_store(c->position, v->origin);
    v3_store(c->forward, v->forward);
    v3_store(c->up, v->up);
    c->yfov = 2 * atanf(v->tan_y);
    c->from_file = s->camera.from_file && !o->has_camera_pos && !o->has_look_at && !o->has_fov;
}

rt_result
rt_render(const rt_options *o, const rt_scene *scene, tex_system *ts, ustr_table *strings,
          rt_image *img, rt_render_stats *stats, char err[RT_ERR_LEN])
{
    return rt_render_from(o, scene, ts, strings, NULL, img, stats, err);
}

rt_result
rt_render_from(const rt_options *o, const rt_scene *scene, tex_system *ts, ustr_table *strings,
               const rt_tile_source *src, rt_image *img, rt_render_stats *stats,
               char err[RT_ERR_LEN])
{
    rt__bvh b = {0};
    double  t0 = rt_now();
    rt_status_show(o, "building the BVH", NULL);
    rt_result r = rt__bvh_build(scene, &b, err);
    rt_status_clear(o);
    stats->bvh_secs = rt_now() - t0;
    job_board jb = {.tiles_x = rt_options_tiles_x(o), .ntiles = rt_options_tiles(o)};
    atomic_init(&jb.next, 0), atomic_init(&jb.done, 0);
    pthread_mutex_init(&jb.crew.lock, NULL);
    pthread_cond_init(&jb.crew.left, NULL);
    pthread_cond_init(&jb.crew.gate, NULL);
    jb.crew.running = o->threads;
    stats->threads = o->threads; /* until run_workers() knows how many started */
    stats->ntiles = jb.ntiles;
    /* Resuming: the pixels and the map of rendered tiles are given. */
    bool resume = img->rgba && img->done;
    stats->resumed = resume;
    if (img->rgba && (!resume || img->width != o->width || img->height != o->height)) {
        snprintf(err, RT_ERR_LEN, "cannot resume: not the image these options make");
        r = RT_ERR_INVALID;
        goto out;
    }
    img->width = o->width, img->height = o->height;
    rt__open_job *opens = NULL;
    uint8_t      *needs = NULL;
    rt__env       env = {0};
    rt_lights    *lights = NULL;
    float        *grid = NULL;
    if (r == RT_OK && (r = path_setup(o, scene, ts, strings, &env, &lights, &grid)) != RT_OK)
        snprintf(err, RT_ERR_LEN, "out of memory for the lights");
    if (r == RT_OK) {
        if (!resume) {
            img->rgba = calloc((size_t)o->width * o->height * 4, sizeof(float));
            img->done = calloc(jb.ntiles, 1);
        }
        needs = malloc(scene->nmaterials ? scene->nmaterials : 1);
        for (uint32_t m = 0; needs && m < scene->nmaterials; m++)
            needs[m] = rt__material_needs(o, &scene->materials[m]);
        /* Only full texturing reads files; the other modes must not open
         * any. Upfront: the files are the workers' first jobs; lazy: they
         * open on first lookup, declared so that a worker whose file
         * another is opening opens one nobody has begun, not sleep. */
        bool full = o->texture_mode == RT_TEXTURE_FULL;
        if (!img->rgba || !img->done || !needs ||
            (full && open_jobs(scene, &opens, &jb.nopens) != RT_OK) ||
            (full && o->open == RT_OPEN_LAZY && !files_declare(ts, opens, &jb.nopens))) {
            snprintf(err, RT_ERR_LEN, "out of memory for a %ux%u image", o->width, o->height);
            r = RT_ERR_NOMEM;
        }
    }
    if (r == RT_OK) {
        rt__view v;
        rt__view_setup(o, scene, &v);
        view_report(o, scene, &v, &stats->camera);
        stats->ntris = scene->ntris, stats->nmeshes = scene->nmeshes;
        stats->ninstances = scene->ninstances, stats->nlights = scene->nlights;
        jb.opens = opens, jb.needs = needs, jb.lights = lights, jb.env = &env;
        jb.done_map = img->done;
        jb.src = src;
        r = run_workers(o, scene, &v, b.scene, ts, strings, img, &jb, stats, err);
    }
    if (r != RT_OK) {
        free(img->rgba), free(img->done);
        img->rgba = NULL, img->done = NULL;
    } else {
        bool all = true;
        for (uint32_t i = 0; i < jb.ntiles && all; i++)
            all = img->done[i];
        if (all && !src) { /* a whole image: no map */
            free(img->done);
            img->done = NULL;
        }
        stats->partial = img->done != NULL;
    }
    free(opens);
    free(needs);
    free(grid);
    rt_lights_destroy(lights);
out:
    pthread_cond_destroy(&jb.crew.left);
    pthread_cond_destroy(&jb.crew.gate);
    pthread_mutex_destroy(&jb.crew.lock);
    rt__bvh_free(&b);
    return r;
}
