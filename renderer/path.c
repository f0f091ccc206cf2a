/* The path tracer: unidirectional, with next-event estimation toward one
 * light per bounce and multiple importance sampling (power heuristic)
 * between that and the BSDF's own direction (one ray for both where the
 * two draw from one density: see one_ray_at), Russian roulette after three
 * bounces, and ray cones for texture footprints past the first hit. */
#include "render_internal.h"
#include "rt_bsdf.h"

#include <string.h>

/* The power heuristic (beta = 2) for a sample of density a against b. */
static float
mis(float a, float b)
{
    float a2 = a * a, b2 = b * b;
    return a2 + b2 > 0 ? a2 / (a2 + b2) : 0;
}

/* The weight of a light sample (density pdf_l, the BSDF's pdf_b for the
 * same direction), and of a BSDF-sampled hit of a light (densities the
 * other way round), under the options' --light-sampling. A light the
 * sampler cannot choose (pdf_l = 0) counts fully when the BSDF finds it. */
static float
light_weight(const rt__worker *w, float pdf_l, float pdf_b)
{
    rt_light_sampling m = w->o->light_sampling;
    return m == RT_SAMPLING_MIS ? mis(pdf_l, pdf_b) : m == RT_SAMPLING_LIGHT ? 1 : 0;
}

static float
bsdf_weight(const rt__worker *w, float pdf_b, float pdf_l)
{
    rt_light_sampling m = w->o->light_sampling;
    return m == RT_SAMPLING_MIS ? mis(pdf_b, pdf_l) : m == RT_SAMPLING_BSDF || pdf_l <= 0 ? 1 : 0;
}

/* A ray from org along dir over [tnear, tfar], every geometry in its mask.
 * Set field by field: a whole RTCRayHit built and copied was stored in
 * pieces and read back whole, which the store buffer cannot forward: a
 * stall before every ray. */
static void
ray_set(struct RTCRay *r, v3 org, v3 dir, float tnear, float tfar)
{
    r->org_x = org.x, r->org_y = org.y, r->org_z = org.z, r->tnear = tnear;
    r->dir_x = dir.x, r->dir_y = dir.y, r->dir_z = dir.z, r->time = 0;
    r->tfar = tfar, r->mask = UINT32_MAX, r->id = 0, r->flags = 0;
}

static bool
trace(rt__worker *w, v3 org, v3 dir, float tnear, struct RTCRayHit *rh)
{
    rt__ray_ctx ctx;
    rt__ray_ctx_init(&ctx, w);
    ray_set(&rh->ray, org, dir, tnear, INFINITY);
    rh->hit.geomID = RTC_INVALID_GEOMETRY_ID;
    rh->hit.instID[0] = RTC_INVALID_GEOMETRY_ID;
    rtcIntersect1(w->rtc, &ctx.rtc, rh);
    w->st->rays++;
    return rh->hit.geomID != RTC_INVALID_GEOMETRY_ID;
}

/* Whether the segment from org along dir, up to tfar, is blocked. */
static bool
occluded(rt__worker *w, v3 org, v3 dir, float tnear, float tfar)
{
    rt__ray_ctx ctx;
    rt__ray_ctx_init(&ctx, w);
    struct RTCRay ray;
    ray_set(&ray, org, dir, tnear, tfar);
    rtcOccluded1(w->rtc, &ctx.rtc, &ray);
    w->st->rays++;
    return ray.tfar < 0;
}

/* An emissive triangle's radiance at barycentrics (b1, b2): its factor
 * times its emission texture, looked up like any slot. */
static void
triangle_emission(rt__worker *w, uint32_t prim, float b1, float b2, float le[3])
{
    const rt_material *m = &w->s->materials[w->s->material[prim]];
    rt__hit            h;
    rt__hit_fill(w->s, prim, b1, b2, RT__NEED_UV0 | RT__NEED_UV1, &h);
    float emissive[4] = {m->emissive[0], m->emissive[1], m->emissive[2], 1}, out[4];
    int   set = m->slots[RT_SLOT_EMISSIVE].uv & 1;
    rt__slot_eval(w, &m->slots[RT_SLOT_EMISSIVE], h.uv[set], &(tex_derivs){0, 0, 0, 0}, emissive,
                  out);
    memcpy(le, out, 3 * sizeof(float));
}

/* The state of one path between bounces. */
typedef struct path {
    float beta[3];       /* throughput */
    float l[3];          /* radiance gathered */
    float bsdf_pdf;      /* of the direction just taken, for MIS at what it hits */
    v3    from;          /* the point it left */
    v3    normal;        /* the shading normal there (the lights' density depends on it) */
    float width, spread; /* the ray cone: width at `from`, growth per unit length */
    bool  one_ray;       /* the ray just drawn is the light sample too (see one_ray_at) */
    bool  roulette_due;  /* Russian roulette waits for that ray's light */
} path;

static void
add(path *p, const float k[3], float scale)
{
    for (int c = 0; c < 3; c++)
        p->l[c] += p->beta[c] * k[c] * scale;
}

/* Russian roulette: false when the path ends here. A survivor carries the
 * throughput of those that ended, so the estimate keeps its mean. */
static bool
roulette(rt_sampler *smp, path *p)
{
    float q = p->beta[0] > p->beta[1] ? p->beta[0] : p->beta[1];
    q = q > p->beta[2] ? q : p->beta[2];
    q = q < 0.95f ? q : 0.95f;
    if (rt_sampler_1d(smp) >= q)
        return false;
    float survive = 1 / q;
    for (int c = 0; c < 3; c++)
        p->beta[c] *= survive;
    return true;
}

/* Under a uniform sky as the only light, a Lambertian surface's light
 * sample and its BSDF sample are drawn from one density, the cosine lobe:
 * two rays for one strategy, which MIS would weigh a half each. One ray
 * then serves as both. What it finds when it escapes counts fully, and the
 * roulette waits until its light is in, as it waited for the light sample.
 * The expectation is the same; a bounce costs one ray and one lookup of
 * the sky instead of two. */
static bool
one_ray_at(const rt__worker *w, bool sky_only, const rt_bsdf *b)
{
    return sky_only && w->o->light_sampling == RT_SAMPLING_MIS && rt_bsdf_is_lambert(b);
}

/* Next-event estimation from a shading point: one light sample, weighed
 * against the BSDF's density for its direction. */
static void
sample_light(rt__worker *w, rt_sampler *smp, path *p, const rt_bsdf *b, v3 pos, v3 ng, v3 t, v3 bt,
             v3 n, v3 wo)
{
    float           pick = rt_sampler_1d(smp), u[2];
    rt_light_sample ls;
    rt_sampler_2d(smp, u);
    if (!rt_lights_sample_at(w->lights, pos, n, pick, u, &ls) || v3_dot(ls.wi, ng) <= 0)
        return;
    v3    wi = v3_to_local(ls.wi, t, bt, n);
    float f[3], pdf_b;
    if (!rt_bsdf_eval(b, wo, wi, f, &pdf_b))
        return;
    /* The shadow ray before the light's radiance: a ray costs less than a
     * lookup by filename, and a blocked sample needs neither. */
    float eps = 1e-4f * w->scene_radius;
    float reach = isinf(ls.dist) ? INFINITY : ls.dist * (1 - 1e-4f) - eps;
    if (occluded(w, pos, ls.wi, eps, reach))
        return;
    float li[3];
    if (ls.kind == RT_SAMPLE_DELTA)
        memcpy(li, ls.li, sizeof li);
    else if (ls.kind == RT_SAMPLE_TRIANGLE)
        triangle_emission(w, ls.prim, ls.b1, ls.b2, li);
    else
        rt__env_radiance(w, ls.wi, 0, li);
    if (li[0] <= 0 && li[1] <= 0 && li[2] <= 0)
        return;
    float weight = ls.kind == RT_SAMPLE_DELTA ? 1 : light_weight(w, ls.pdf, pdf_b);
    float k[3];
    for (int c = 0; c < 3; c++)
        k[c] = f[c] * li[c];
    add(p, k, wi.z * weight / ls.pdf);
}

bool
rt__path_sample(rt__worker *w, rt_sampler *smp, v3 ray, const struct RTCRayHit *first, float rgb[3])
{
    v3    org = w->v->origin, dir = v3_norm(ray);
    path  p = {.beta = {1, 1, 1}, .from = org, .spread = 2 * w->v->tan_y / (float)w->o->height};
    float eps = 1e-4f * w->scene_radius;
    bool  sky_only = rt_lights_sky_only(w->lights);
    for (unsigned depth = 0;; depth++) {
        struct RTCRayHit rh;
        /* A last ray that is its bounce's light sample: nothing it hits
         * would be shaded or emit (the sky is the only light), so whether
         * it escapes is all there is to know. */
        bool last_light = depth > 0 && p.one_ray && depth >= w->o->max_depth;
        if (last_light   ? !occluded(w, org, dir, eps, INFINITY)
            : depth == 0 ? !first
                         : !trace(w, org, dir, eps, &rh)) {
            float le[3];
            rt__env_radiance(w, dir, p.spread, le);
            add(&p, le,
                depth == 0 || p.one_ray
                    ? 1
                    : bsdf_weight(w, p.bsdf_pdf, rt_lights_pdf_env_at(w->lights, dir, p.normal)));
            break;
        }
        if (last_light || (p.roulette_due && !roulette(smp, &p)))
            break;
        if (depth == 0)
            rh = *first;
        uint32_t prim = rh.hit.primID;
        uint8_t  needs = w->needs[rt_scene_material_of(w->s, prim)];
        rt__hit  h;
        rt__hit_fill(w->s, prim, rh.hit.u, rh.hit.v, needs, &h);
        h.p = v3_add(org, v3_mul(dir, rh.ray.tfar));
        /* Embree's geometric normal points out of the front face, the side
         * a counter-clockwise winding faces (rtcore's triangle contract),
         * as glTF's and the lights'; it spares reading the triangle's
         * vertices again. */
        h.ng = v3_norm((v3){rh.hit.Ng_x, rh.hit.Ng_y, rh.hit.Ng_z});
        p.width += p.spread * rh.ray.tfar;
        if (depth == 0)
            rt__hit_derivatives(w, prim, needs, &h, ray);
        else
            rt__hit_footprint(w, prim, needs, &h, p.width);
        rt__surface sf;
        rt__surface_eval(w, &h, &sf);

        /* Emission seen along the path: weighed against having sampled
         * this triangle as a light from the previous point. */
        bool front = v3_dot(h.ng, dir) < 0;
        if ((sf.emissive[0] > 0 || sf.emissive[1] > 0 || sf.emissive[2] > 0) &&
            (front || h.m->double_sided)) {
            float weight = depth == 0
                               ? 1
                               : bsdf_weight(w, p.bsdf_pdf,
                                             rt_lights_pdf_triangle(w->lights, prim, p.from, h.p));
            add(&p, sf.emissive, weight);
        }
        if (depth >= w->o->max_depth)
            break;

        /* The frame: the geometric normal toward the viewer, the shading
         * normal on its side. */
        v3 ng = front ? h.ng : v3_mul(h.ng, -1), n = sf.n;
        if (v3_dot(n, ng) < 0)
            n = v3_mul(n, -1);
        v3 wo_w = v3_mul(dir, -1), t, bt;
        if (v3_dot(n, wo_w) <= 0)
            n = ng; /* a normal map that faces away from the eye: fall back */
        v3_frame(n, &t, &bt);
        v3      wo = v3_to_local(wo_w, t, bt, n);
        rt_bsdf b = {{sf.base[0], sf.base[1], sf.base[2]}, sf.metallic, sf.roughness, sf.specular};

        bool one_ray = one_ray_at(w, sky_only, &b);
        if (!one_ray && !rt_lights_empty(w->lights))
            sample_light(w, smp, &p, &b, h.p, ng, t, bt, n, wo);

        /* A Lambertian BSDF reads no u_lobe (there is one lobe). */
        float u_lobe = one_ray ? 0 : rt_sampler_1d(smp), u[2], f[3], pdf;
        rt_sampler_2d(smp, u);
        v3 wi;
        if (!rt_bsdf_sample(&b, wo, u_lobe, u, &wi, f, &pdf))
            break;
        v3 wi_w = v3_from_local(wi, t, bt, n);
        if (v3_dot(wi_w, ng) <= 0)
            break; /* below the true surface: would leak light */
        float cos_over_pdf = wi.z / pdf;
        for (int c = 0; c < 3; c++)
            p.beta[c] *= f[c] * cos_over_pdf;
        p.bsdf_pdf = pdf;
        p.from = h.p;
        p.normal = n;
        /* Rougher surfaces spread the cone faster. */
        p.spread += sf.roughness * sf.roughness;

        p.one_ray = one_ray;
        p.roulette_due = depth >= 3 && one_ray;
        if (depth >= 3 && !one_ray && !roulette(smp, &p))
            break;
        org = h.p;
        dir = wi_w;
    }
    for (int c = 0; c < 3; c++)
        rgb[c] = p.l[c];
    return first != NULL;
}
