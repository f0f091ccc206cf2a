/* The render loop: Embree for visibility, tiles handed out by an atomic
 * counter, per-pixel seeded sampling (so the image never depends on threads
 * or tile size), and shading that looks every texture slot up by filename
 * in the mode the options ask for. */
#include "rt_render.h"

#include <embree3/rtcore.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct v3 {
    float x, y, z;
} v3;

static inline v3
v3_add(v3 a, v3 b)
{
    return (v3){a.x + b.x, a.y + b.y, a.z + b.z};
}
static inline v3
v3_sub(v3 a, v3 b)
{
    return (v3){a.x - b.x, a.y - b.y, a.z - b.z};
}
static inline v3
v3_mul(v3 a, float k)
{
    return (v3){a.x * k, a.y * k, a.z * k};
}
static inline float
v3_dot(v3 a, v3 b)
{
    return a.x * b.x + a.y * b.y + a.z * b.z;
}
static inline v3
v3_cross(v3 a, v3 b)
{
    return (v3){a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}
static inline v3
v3_norm(v3 a)
{
    float l = sqrtf(v3_dot(a, a));
    return l > 0 ? v3_mul(a, 1 / l) : a;
}
static inline v3
v3_load(const float *p)
{
    return (v3){p[0], p[1], p[2]};
}

static double
clock_secs(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double
now(void)
{
    return clock_secs(CLOCK_MONOTONIC);
}

/* ---- camera ---- */

typedef struct view {
    v3    origin, forward, right, up;
    float tan_y, aspect;
    v3    step_x, step_y; /* how view_ray() changes one pixel right, one down */
} view;

static void
view_setup(const rt_options *o, const rt_scene *s, view *v)
{
    v->origin = o->has_camera_pos ? v3_load(o->camera_pos) : v3_load(s->camera.position);
    v->forward = o->has_look_at ? v3_norm(v3_sub(v3_load(o->look_at), v->origin))
                                : v3_load(s->camera.forward);
    v3 up = v3_load(s->camera.up);
    v->right = v3_norm(v3_cross(v->forward, up));
    if (v3_dot(v->right, v->right) < 0.5f) /* looking along up: pick another */
        v->right = v3_norm(v3_cross(v->forward, (v3){0, 0, 1}));
    v->up = v3_cross(v->right, v->forward);
    float yfov = o->has_fov ? o->fov_degrees * (float)M_PI / 180 : s->camera.yfov;
    v->tan_y = tanf(yfov / 2);
    v->aspect = (float)o->width / (float)o->height;
    v->step_x = v3_mul(v->right, 2 * v->aspect * v->tan_y / (float)o->width);
    v->step_y = v3_mul(v->up, -2 * v->tan_y / (float)o->height);
}

/* A direction (not normalised) through image point (x, y), in pixels from
 * the top left; it moves by step_x and step_y per pixel. */
static v3
view_ray(const view *v, const rt_options *o, float x, float y)
{
    float nx = (2 * x / (float)o->width - 1) * v->aspect * v->tan_y;
    float ny = (1 - 2 * y / (float)o->height) * v->tan_y;
    return v3_add(v->forward, v3_add(v3_mul(v->right, nx), v3_mul(v->up, ny)));
}

/* The unit direction through image point (x, y). */
static v3
view_dir(const view *v, const rt_options *o, float x, float y)
{
    return v3_norm(view_ray(v, o, x, y));
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

/* ---- Embree ---- */

typedef struct bvh {
    RTCDevice device;
    RTCScene  scene;
} bvh;

static rt_result
bvh_build(const rt_scene *s, bvh *b, char err[RT_ERR_LEN])
{
    b->device = rtcNewDevice("verbose=0");
    if (!b->device) {
        snprintf(err, RT_ERR_LEN, "cannot start Embree");
        return RT_ERR_NOMEM;
    }
    b->scene = rtcNewScene(b->device);
    RTCGeometry g = rtcNewGeometry(b->device, RTC_GEOMETRY_TYPE_TRIANGLE);
    float      *vb = rtcSetNewGeometryBuffer(g, RTC_BUFFER_TYPE_VERTEX, 0, RTC_FORMAT_FLOAT3,
                                             3 * sizeof(float), s->nverts);
    unsigned   *ib = rtcSetNewGeometryBuffer(g, RTC_BUFFER_TYPE_INDEX, 0, RTC_FORMAT_UINT3,
                                             3 * sizeof(unsigned), s->ntris);
    if (!vb || !ib) {
        rtcReleaseGeometry(g);
        snprintf(err, RT_ERR_LEN, "out of memory for the BVH");
        return RT_ERR_NOMEM;
    }
    memcpy(vb, s->positions, (size_t)s->nverts * 3 * sizeof(float));
    memcpy(ib, s->indices, (size_t)s->ntris * 3 * sizeof(unsigned));
    rtcCommitGeometry(g);
    rtcAttachGeometry(b->scene, g);
    rtcReleaseGeometry(g);
    rtcCommitScene(b->scene);
    if (rtcGetDeviceError(b->device) != RTC_ERROR_NONE) {
        snprintf(err, RT_ERR_LEN, "Embree could not build the BVH");
        return RT_ERR_NOMEM;
    }
    return RT_OK;
}

static void
bvh_free(bvh *b)
{
    if (b->scene)
        rtcReleaseScene(b->scene);
    if (b->device)
        rtcReleaseDevice(b->device);
}

/* ---- the camera and the BVH, for benchmarks ---- */

struct rt_camera_rays {
    const rt_options *o;
    view              v;
};

rt_result
rt_camera_rays_create(const rt_options *o, const rt_scene *s, rt_camera_rays **out)
{
    *out = malloc(sizeof **out);
    if (!*out)
        return RT_ERR_NOMEM;
    (*out)->o = o;
    view_setup(o, s, &(*out)->v);
    return RT_OK;
}

void
rt_camera_rays_destroy(rt_camera_rays *c)
{
    free(c);
}

void
rt_camera_ray(const rt_camera_rays *c, float x, float y, float org[3], float dir[3])
{
    v3 d = view_dir(&c->v, c->o, x, y);
    org[0] = c->v.origin.x, org[1] = c->v.origin.y, org[2] = c->v.origin.z;
    dir[0] = d.x, dir[1] = d.y, dir[2] = d.z;
}

struct rt_bvh {
    bvh b;
};

rt_result
rt_bvh_create(const rt_scene *s, rt_bvh **out, char err[RT_ERR_LEN])
{
    *out = calloc(1, sizeof **out);
    if (!*out) {
        snprintf(err, RT_ERR_LEN, "out of memory");
        return RT_ERR_NOMEM;
    }
    rt_result r = bvh_build(s, &(*out)->b, err);
    if (r != RT_OK) {
        rt_bvh_destroy(*out);
        *out = NULL;
    }
    return r;
}

void *
rt_bvh_embree_scene(const rt_bvh *b)
{
    return b->b.scene;
}

void
rt_bvh_destroy(rt_bvh *b)
{
    if (b) {
        bvh_free(&b->b);
        free(b);
    }
}

/* ---- opening the scene's textures ---- */

/* A texture file to open before the first tile (--open-textures upfront):
 * a name as a slot interns it, and whether lookups read it as data. */
typedef struct open_job {
    ustr name;
    bool raw;
} open_job;

static int
open_job_cmp(const void *a, const void *b)
{
    const open_job *x = a, *y = b;
    if (x->name != y->name)
        return (uintptr_t)x->name < (uintptr_t)y->name ? -1 : 1;
    return (int)x->raw - (int)y->raw;
}

/* The distinct files the materials name, each once; *out NULL when none. */
static rt_result
open_jobs(const rt_scene *s, open_job **out, uint32_t *n)
{
    *out = NULL, *n = 0;
    size_t    cap = (size_t)s->nmaterials * RT_SLOT_COUNT, k = 0;
    open_job *jobs = cap ? malloc(cap * sizeof *jobs) : NULL;
    if (cap && !jobs)
        return RT_ERR_NOMEM;
    for (uint32_t m = 0; m < s->nmaterials; m++)
        for (int i = 0; i < RT_SLOT_COUNT; i++)
            if (s->materials[m].slots[i].name)
                jobs[k++] = (open_job){s->materials[m].slots[i].name, s->materials[m].slots[i].raw};
    if (k)
        qsort(jobs, k, sizeof *jobs, open_job_cmp);
    size_t unique = 0;
    for (size_t i = 0; i < k; i++)
        if (unique == 0 || open_job_cmp(&jobs[unique - 1], &jobs[i]) != 0)
            jobs[unique++] = jobs[i];
    *out = jobs, *n = (uint32_t)unique;
    return RT_OK;
}

/* ---- shading ---- */

typedef struct worker {
    const rt_options *o;
    const rt_scene   *s;
    const view       *v;
    RTCScene          rtc;
    tex_system       *ts;
    ustr_table       *strings;
    rt_image         *img;
    _Atomic uint32_t *next_job, *tiles_done, *running;
    const open_job   *opens; /* jobs 0..nopens-1; then the tiles */
    const uint8_t    *needs; /* material_needs() per material */
    uint32_t          nopens, tiles_x, ntiles;
    float             ao_distance;
    rt_thread_stats  *st;
    tex_thread       *tc;
    pthread_t         thread;
    double            start, end; /* the worker's own clock readings */
} worker;

/* One texture slot at a shading point, in the options' mode: `constant` is
 * the material's value, returned when the slot is empty or the lookup is
 * short-circuited, and the factor the texture is multiplied by otherwise. */
static void
slot_eval(worker *w, const rt_texture_slot *slot, const float uv[2], const tex_derivs *d,
          const float constant[4], float out[4])
{
    memcpy(out, constant, 4 * sizeof(float));
    if (!slot->filename)
        return;
    if (w->o->texture_mode == RT_TEXTURE_EARLY_OUT) {
        w->st->early_outs++;
        return;
    }
    ustr name = slot->name;
    if (w->o->intern == RT_INTERN_PER_LOOKUP) {
        name = ustr_table_intern(w->strings, slot->filename, slot->filename_len);
        w->st->interns++;
    }
    if (w->o->texture_mode == RT_TEXTURE_BYPASS) {
        w->st->bypasses++;
        return;
    }
    tex_opts o = {.filter = TEX_FILTER_TRILINEAR, .raw = slot->raw, .fill = {1, 1, 1, 1}};
    float    t[4];
    w->st->lookups++;
    if (tex_lookup(w->ts, w->tc, name, uv[0], uv[1], d, &o, t) != TEX_OK)
        w->st->lookup_errors++;
    for (int c = 0; c < 4; c++)
        out[c] = constant[c] * t[c];
}

typedef struct hit {
    v3                 p, ng, n, tangent;
    float              tangent_w;
    float              uv[2][2];  /* per UV set */
    float              duv[2][4]; /* du/dx, dv/dx, du/dy, dv/dy per set */
    const rt_material *m;
} hit;

/* What shading a hit on a material reads beyond its normal: interpolating
 * only that keeps a hit's cost to what the integrator and texture mode use
 * (--early-out, --bypass-texture and most integrators read no UVs). */
enum { NEED_UV0 = 1, NEED_UV1 = 2, NEED_TANGENT = 4 };

static uint8_t
material_needs(const rt_options *o, const rt_material *m)
{
    uint8_t n = o->integrator == RT_INTEGRATOR_UV ? NEED_UV0 : 0;
    if (o->texture_mode != RT_TEXTURE_FULL)
        return n;                                                 /* no lookup reads a coordinate */
    for (int k = RT_SLOT_BASE_COLOR; k <= RT_SLOT_OCCLUSION; k++) /* the slots shade() reads */
        if (m->slots[k].filename)
            n |= m->slots[k].uv == 1 ? NEED_UV1 : NEED_UV0;
    if (m->slots[RT_SLOT_NORMAL].filename)
        n |= NEED_TANGENT;
    return n;
}

/* Interpolates the triangle's attributes at barycentrics (b1, b2): the
 * normal, and what `needs` asks for (the rest stays zero). */
static void
hit_fill(const rt_scene *s, uint32_t prim, float b1, float b2, const uint8_t *needs, hit *h)
{
    const uint32_t *ix = &s->indices[3 * prim];
    float           w[3] = {1 - b1 - b2, b1, b2};
    uint32_t        mat = s->material[prim];
    h->m = &s->materials[mat];
    h->n = h->tangent = (v3){0, 0, 0};
    h->tangent_w = 1;
    memset(h->uv, 0, sizeof h->uv);
    for (int k = 0; k < 3; k++)
        h->n = v3_add(h->n, v3_mul(v3_load(&s->normals[3 * ix[k]]), w[k]));
    h->n = v3_norm(h->n);
    for (int set = 0; set < 2; set++) {
        const float *uvs = set == 0 ? s->uvs : s->uvs1;
        if (!uvs || !(needs[mat] & (set == 0 ? NEED_UV0 : NEED_UV1)))
            continue;
        for (int k = 0; k < 3; k++)
            for (int c = 0; c < 2; c++)
                h->uv[set][c] += uvs[2 * ix[k] + c] * w[k];
    }
    if (needs[mat] & NEED_TANGENT) {
        for (int k = 0; k < 3; k++)
            h->tangent = v3_add(h->tangent, v3_mul(v3_load(&s->tangents[4 * ix[k]]), w[k]));
        h->tangent_w = s->tangents[4 * ix[0] + 3] < 0 ? -1.0f : 1.0f;
    }
}

/* Texture-coordinate derivatives from the rays one pixel right and one
 * down (ray differentials, as a renderer picks MIP levels): where each meets
 * the hit's plane, in barycentrics, mapped through the triangle's UVs. `ray`
 * is the camera ray's direction before normalising; its neighbours are
 * ray + step_x and ray + step_y. */
static void
hit_derivatives(worker *w, uint32_t prim, hit *h, v3 ray)
{
    memset(h->duv, 0, sizeof h->duv);
    /* Only lookups that read textures need a footprint. */
    if (w->o->texture_mode != RT_TEXTURE_FULL || v3_dot(h->ng, h->ng) == 0)
        return;
    const rt_scene *s = w->s;
    const uint32_t *ix = &s->indices[3 * prim];
    v3              a = v3_load(&s->positions[3 * ix[0]]);
    v3              e1 = v3_sub(v3_load(&s->positions[3 * ix[1]]), a);
    v3              e2 = v3_sub(v3_load(&s->positions[3 * ix[2]]), a);
    float           d11 = v3_dot(e1, e1), d12 = v3_dot(e1, e2), d22 = v3_dot(e2, e2);
    float           det = d11 * d22 - d12 * d12;
    if (det == 0)
        return; /* a degenerate triangle: no footprint, the finest level */
    float reach = v3_dot(v3_sub(h->p, w->v->origin), h->ng);
    for (int axis = 0; axis < 2; axis++) {
        v3    dir = v3_add(ray, axis == 0 ? w->v->step_x : w->v->step_y);
        float dn = v3_dot(dir, h->ng);
        if (fabsf(dn) < 1e-8f)
            continue; /* the neighbour ray runs along the plane */
        /* Where it meets the plane, from the hit; then in barycentrics. */
        v3    r = v3_sub(v3_add(w->v->origin, v3_mul(dir, reach / dn)), h->p);
        float r1 = v3_dot(r, e1), r2 = v3_dot(r, e2);
        float db1 = (d22 * r1 - d12 * r2) / det, db2 = (d11 * r2 - d12 * r1) / det;
        for (int set = 0; set < 2; set++) {
            const float *uvs = set == 0 ? s->uvs : s->uvs1;
            for (int c = 0; uvs && c < 2; c++) {
                float uv0 = uvs[2 * ix[0] + c];
                h->duv[set][2 * axis + c] =
                    db1 * (uvs[2 * ix[1] + c] - uv0) + db2 * (uvs[2 * ix[2] + c] - uv0);
            }
        }
    }
}

static const float one[4] = {1, 1, 1, 1};

/* The shading of one camera-ray hit: every slot looked up, then the
 * integrator's colour. */
static void
shade(worker *w, const hit *h, v3 dir, uint64_t *rng, float rgb[3])
{
    const rt_material *m = h->m;
    float              base[4], mr[4], nm[4], em[4], occ[4];
    float              emissive[4] = {m->emissive[0], m->emissive[1], m->emissive[2], 1};
    float              mr_const[4] = {1, m->roughness, m->metallic, 1};
    tex_derivs         d[2];
    for (int set = 0; set < 2; set++)
        d[set] = (tex_derivs){h->duv[set][0], h->duv[set][1], h->duv[set][2], h->duv[set][3]};
#define SLOT(k, constant, out)                                                                     \
    slot_eval(w, &m->slots[k], h->uv[m->slots[k].uv & 1], &d[m->slots[k].uv & 1], constant, out)
    SLOT(RT_SLOT_BASE_COLOR, m->base_color, base);
    SLOT(RT_SLOT_METALLIC_ROUGHNESS, mr_const, mr);
    SLOT(RT_SLOT_NORMAL, one, nm);
    SLOT(RT_SLOT_EMISSIVE, emissive, em);
    SLOT(RT_SLOT_OCCLUSION, one, occ);
#undef SLOT
    w->st->shading_points++;

    /* Shading normal: the normal map in the tangent frame (when it was
     * read: the other modes' constant is no direction), facing the eye. */
    v3 n = h->n;
    if (w->o->texture_mode == RT_TEXTURE_FULL && m->slots[RT_SLOT_NORMAL].filename &&
        v3_dot(h->tangent, h->tangent) > 0) {
        v3    t = v3_norm(v3_sub(h->tangent, v3_mul(n, v3_dot(n, h->tangent))));
        v3    b = v3_mul(v3_cross(n, t), h->tangent_w);
        float x = (2 * nm[0] - 1) * m->normal_scale, y = (2 * nm[1] - 1) * m->normal_scale;
        n = v3_norm(v3_add(v3_add(v3_mul(t, x), v3_mul(b, y)), v3_mul(n, 2 * nm[2] - 1)));
    }
    if (v3_dot(n, dir) > 0)
        n = v3_mul(n, -1);
    float occlusion = 1 + m->occlusion_strength * (occ[0] - 1);

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
        enum { AO_RAYS = 4 };
        v3  ng = v3_dot(h->ng, dir) > 0 ? v3_mul(v3_norm(h->ng), -1) : v3_norm(h->ng);
        v3  t = v3_norm(v3_cross(fabsf(ng.x) > 0.5f ? (v3){0, 1, 0} : (v3){1, 0, 0}, ng));
        v3  b = v3_cross(ng, t);
        int open = 0;
        for (int i = 0; i < AO_RAYS; i++) {
            float r1 = rnd(rng), r2 = rnd(rng), r = sqrtf(r1), phi = 2 * (float)M_PI * r2;
            v3    d3 = v3_add(v3_add(v3_mul(t, r * cosf(phi)), v3_mul(b, r * sinf(phi))),
                              v3_mul(ng, sqrtf(1 - r1)));
            struct RTCIntersectContext ctx;
            rtcInitIntersectContext(&ctx);
            struct RTCRay ray = {.org_x = h->p.x,
                                 .org_y = h->p.y,
                                 .org_z = h->p.z,
                                 .dir_x = d3.x,
                                 .dir_y = d3.y,
                                 .dir_z = d3.z,
                                 .tnear = 1e-4f * w->ao_distance,
                                 .tfar = w->ao_distance,
                                 .mask = UINT32_MAX};
            rtcOccluded1(w->rtc, &ctx, &ray);
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

static void
render_pixel(worker *w, uint32_t px, uint32_t py)
{
    const rt_options *o = w->o;
    /* Seeded per pixel (so no thread or tile order shows), and only where
     * something draws from it. */
    bool     random = o->spp > 1 || o->integrator == RT_INTEGRATOR_AO;
    uint64_t rng = random ? mix64(o->seed ^ mix64(((uint64_t)py << 32) | px)) : 0;
    float    sum[4] = {0, 0, 0, 0};
    for (unsigned s = 0; s < o->spp; s++) {
        float sx = o->spp > 1 ? rnd(&rng) : 0.5f, sy = o->spp > 1 ? rnd(&rng) : 0.5f;
        v3    ray = view_ray(w->v, o, (float)px + sx, (float)py + sy), dir = v3_norm(ray);
        struct RTCIntersectContext ctx;
        rtcInitIntersectContext(&ctx);
        struct RTCRayHit rh = {.ray = {.org_x = w->v->origin.x,
                                       .org_y = w->v->origin.y,
                                       .org_z = w->v->origin.z,
                                       .dir_x = dir.x,
                                       .dir_y = dir.y,
                                       .dir_z = dir.z,
                                       .tfar = INFINITY,
                                       .mask = UINT32_MAX},
                               .hit = {.geomID = RTC_INVALID_GEOMETRY_ID}};
        rtcIntersect1(w->rtc, &ctx, &rh);
        w->st->rays++;
        if (rh.hit.geomID == RTC_INVALID_GEOMETRY_ID)
            continue;
        hit h;
        hit_fill(w->s, rh.hit.primID, rh.hit.u, rh.hit.v, w->needs, &h);
        h.p = v3_add(w->v->origin, v3_mul(dir, rh.ray.tfar));
        h.ng = (v3){rh.hit.Ng_x, rh.hit.Ng_y, rh.hit.Ng_z};
        hit_derivatives(w, rh.hit.primID, &h, ray);
        float rgb[3];
        shade(w, &h, dir, &rng, rgb);
        for (int c = 0; c < 3; c++)
            sum[c] += rgb[c];
        sum[3] += 1;
    }
    float *out = &w->img->rgba[((size_t)py * o->width + px) * 4];
    for (int c = 0; c < 4; c++)
        out[c] = sum[c] / (float)o->spp;
}

static void *
worker_main(void *arg)
{
    worker *w = arg;
    w->start = w->end = now();
    double cpu_start = clock_secs(CLOCK_THREAD_CPUTIME_ID);
    /* Counted on this thread's own stack, copied out at the end: the
     * workers' slots in rt_render_stats sit side by side, and counting there
     * would bounce one cache line between them at every ray. */
    rt_thread_stats mine = {0}, *out = w->st;
    w->st = &mine;
    if (tex_thread_create(w->ts, &w->tc) != TEX_OK) {
        /* Release: pairs with the main thread's acquire; it stops waiting. */
        atomic_fetch_sub_explicit(w->running, 1, memory_order_release);
        return NULL;
    }
    for (;;) {
        /* Relaxed: the counter only hands each job to one worker; pixels
         * reach the writer through pthread_join(), which orders everything,
         * and an opened file is published by the texture system itself. */
        uint32_t i = atomic_fetch_add_explicit(w->next_job, 1, memory_order_relaxed);
        if (i < w->nopens) {
            /* A file that fails is reported once here; its lookups count. */
            (void)tex_file_open(w->ts, w->tc, w->opens[i].name, w->opens[i].raw);
            continue;
        }
        i -= w->nopens;
        if (i >= w->ntiles)
            break;
        uint32_t x0 = (i % w->tiles_x) * w->o->tile, y0 = (i / w->tiles_x) * w->o->tile;
        for (uint32_t y = y0; y < y0 + w->o->tile && y < w->o->height; y++)
            for (uint32_t x = x0; x < x0 + w->o->tile && x < w->o->width; x++)
                render_pixel(w, x, y);
        w->st->tiles++;
        /* Relaxed: progress display only. */
        atomic_fetch_add_explicit(w->tiles_done, 1, memory_order_relaxed);
    }
    tex_thread_destroy(w->tc);
    w->end = now();
    mine.busy_secs = w->end - w->start;
    mine.cpu_secs = clock_secs(CLOCK_THREAD_CPUTIME_ID) - cpu_start;
    *out = mine;
    w->st = out;
    /* Release: as above. */
    atomic_fetch_sub_explicit(w->running, 1, memory_order_release);
    return NULL;
}

static void
progress(const rt_options *o, _Atomic uint32_t *done, uint32_t total, bool final)
{
    if (o->quiet || !isatty(STDERR_FILENO))
        return;
    /* Relaxed: display only. */
    uint32_t d = atomic_load_explicit(done, memory_order_relaxed);
    int      bar = (int)(40.0 * d / total);
    fprintf(stderr, "\rrender: [%.*s%*s] %3u%%", bar, "########################################",
            40 - bar, "", (unsigned)(100.0 * d / total));
    if (final)
        fputc('\n', stderr);
}

/* Everything one render's workers share. */
typedef struct job_board {
    _Atomic uint32_t next, done, running;
    const open_job  *opens;
    const uint8_t   *needs;
    uint32_t         nopens, tiles_x, ntiles;
} job_board;

/* Starts o->threads workers on the board, shows progress while they run,
 * joins them and sums their statistics. */
static rt_result
run_workers(const rt_options *o, const rt_scene *scene, const view *v, RTCScene rtc, tex_system *ts,
            ustr_table *strings, rt_image *img, job_board *jb, rt_render_stats *stats,
            char err[RT_ERR_LEN])
{
    worker *w = calloc(o->threads, sizeof *w);
    if (!w) {
        snprintf(err, RT_ERR_LEN, "out of memory");
        return RT_ERR_NOMEM;
    }
    v3       diag = v3_sub(v3_load(scene->bounds_max), v3_load(scene->bounds_min));
    unsigned started = 0;
    for (unsigned i = 0; i < o->threads; i++) {
        w[i] = (worker){.o = o,
                        .s = scene,
                        .v = v,
                        .rtc = rtc,
                        .ts = ts,
                        .strings = strings,
                        .img = img,
                        .next_job = &jb->next,
                        .tiles_done = &jb->done,
                        .running = &jb->running,
                        .opens = jb->opens,
                        .needs = jb->needs,
                        .nopens = jb->nopens,
                        .tiles_x = jb->tiles_x,
                        .ntiles = jb->ntiles,
                        .ao_distance = 0.25f * sqrtf(v3_dot(diag, diag)),
                        .st = &stats->per_thread[i]};
        if (pthread_create(&w[i].thread, NULL, worker_main, &w[i]) != 0)
            break;
        started++;
    }
    /* Relaxed: threads that never started never run. */
    atomic_fetch_sub_explicit(&jb->running, o->threads - started, memory_order_relaxed);
    if (started == 0) {
        free(w);
        snprintf(err, RT_ERR_LEN, "cannot start a thread");
        return RT_ERR_NOMEM;
    }
    /* Relaxed on `done`: display only; the join below is what waits. Acquire
     * on `running`: pairs with the workers' release as they leave. */
    while (atomic_load_explicit(&jb->done, memory_order_relaxed) < jb->ntiles &&
           atomic_load_explicit(&jb->running, memory_order_acquire) > 0) {
        progress(o, &jb->done, jb->ntiles, false);
        nanosleep(&(struct timespec){0, 20 * 1000 * 1000}, NULL);
    }
    for (unsigned i = 0; i < started; i++)
        pthread_join(w[i].thread, NULL);
    progress(o, &jb->done, jb->ntiles, true);
    /* From the first worker's start to the last one's end, as the workers
     * read the clock: the main thread's polling does not count. */
    double first = w[0].start, last = w[0].end;
    for (unsigned i = 0; i < started; i++) {
        first = w[i].start < first ? w[i].start : first;
        last = w[i].end > last ? w[i].end : last;
        rt_thread_stats *s = &stats->per_thread[i], *t = &stats->total;
        t->tiles += s->tiles, t->rays += s->rays, t->shading_points += s->shading_points;
        t->lookups += s->lookups, t->interns += s->interns, t->early_outs += s->early_outs;
        t->bypasses += s->bypasses, t->lookup_errors += s->lookup_errors;
        t->busy_secs += s->busy_secs, t->cpu_secs += s->cpu_secs;
    }
    stats->render_secs = last - first;
    free(w);
    /* Relaxed: after the joins. */
    if (atomic_load_explicit(&jb->done, memory_order_relaxed) < jb->ntiles) {
        snprintf(err, RT_ERR_LEN, "out of memory: workers could not start");
        return RT_ERR_NOMEM;
    }
    return RT_OK;
}

rt_result
rt_render(const rt_options *o, const rt_scene *scene, tex_system *ts, ustr_table *strings,
          rt_image *img, rt_render_stats *stats, char err[RT_ERR_LEN])
{
    bvh       b = {0};
    double    t0 = now();
    rt_result r = bvh_build(scene, &b, err);
    stats->bvh_secs = now() - t0;
    job_board jb = {.tiles_x = (o->width + o->tile - 1) / o->tile};
    jb.ntiles = jb.tiles_x * ((o->height + o->tile - 1) / o->tile);
    atomic_init(&jb.next, 0), atomic_init(&jb.done, 0), atomic_init(&jb.running, o->threads);
    stats->threads = o->threads;
    stats->ntiles = jb.ntiles;
    img->width = o->width, img->height = o->height;
    img->rgba = NULL;
    open_job *opens = NULL;
    uint8_t  *needs = NULL;
    if (r == RT_OK) {
        img->rgba = calloc((size_t)o->width * o->height * 4, sizeof(float));
        needs = malloc(scene->nmaterials ? scene->nmaterials : 1);
        for (uint32_t m = 0; needs && m < scene->nmaterials; m++)
            needs[m] = material_needs(o, &scene->materials[m]);
        /* Only full texturing reads files; the other modes must not open any. */
        bool upfront = o->texture_mode == RT_TEXTURE_FULL && o->open == RT_OPEN_UPFRONT;
        if (!img->rgba || !needs || (upfront && open_jobs(scene, &opens, &jb.nopens) != RT_OK)) {
            snprintf(err, RT_ERR_LEN, "out of memory for a %ux%u image", o->width, o->height);
            r = RT_ERR_NOMEM;
        }
    }
    if (r == RT_OK) {
        view v;
        view_setup(o, scene, &v);
        jb.opens = opens, jb.needs = needs;
        r = run_workers(o, scene, &v, b.scene, ts, strings, img, &jb, stats, err);
    }
    if (r != RT_OK) {
        free(img->rgba);
        img->rgba = NULL;
    }
    free(opens);
    free(needs);
    bvh_free(&b);
    return r;
}
