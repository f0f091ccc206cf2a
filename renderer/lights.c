/* Light selection and sampling (see rt_lights.h). */
#include "rt_lights.h"

#include <math.h>

#include <stdlib.h>
#include <string.h>

struct rt_lights {
    const rt_scene *s;
    uint32_t        npunctual, ntris; /* lights 0..np-1, then triangles, then the environment */
    uint32_t       *tris;             /* emissive triangles' prims */
    float          *area;             /* their areas */
    int32_t        *light_of_prim;    /* prim -> light index, -1: not emissive (NULL: none) */
    bool            env;
    /* Every cell of the environment's grid as bright as every other (a
     * uniform sky): from a surface, its light is then sampled by the cosine
     * lobe alone, which is what the integrand is; the grid would spend half
     * its samples behind the surface. */
    bool     env_uniform;
    uint32_t n;   /* lights in all */
    float   *cdf; /* n + 1 entries: choosing a light by power */
    float    radius;
    /* The environment: rows by their total, then cells within a row. */
    uint32_t ew, eh;
    float   *row_cdf;  /* eh + 1 */
    float   *cell_cdf; /* eh rows of ew + 1 */
};

v3
rt_env_direction(float s, float t)
{
    float phi = 2 * RT_PI_F * s, theta = RT_PI_F * t;
    return (v3){sinf(theta) * sinf(phi), cosf(theta), -sinf(theta) * cosf(phi)};
}

/* atan2(y, x) to within 1e-7 radians: a degree-15 odd polynomial on
 * [0, 1] (Chebyshev coefficients of atan(x) / x in x^2, turned into
 * powers), folded into the other octants: libm's atan2f and acosf were
 * a path tracer's largest cost under an environment map, after Embree
 * (docs/render-performance.md). */
static float
atan2_fast(float y, float x)
{
    float ax = fabsf(x), ay = fabsf(y), hi = ax > ay ? ax : ay, lo = ax > ay ? ay : ax;
    float a = hi > 0 ? lo / hi : 0, u = a * a;
    float p = -4.668773308e-03f;
    p = p * u + 2.416618952e-02f;
    p = p * u - 5.936710079e-02f;
    p = p * u + 9.906096896e-02f;
    p = p * u - 1.401658504e-01f;
    p = p * u + 1.996923539e-01f;
    p = p * u - 3.333195972e-01f;
    p = p * u + 9.999998978e-01f;
    float r = a * p;
    r = ay > ax ? RT_PI_F / 2 - r : r;
    r = x < 0 ? RT_PI_F - r : r;
    return y < 0 ? -r : r;
}

void
rt_env_coords(v3 d, float *s, float *t)
{
    /* theta from the polar distance and height: the same as acos(y) for a
     * unit d, and accurate near the poles, where acos is not. */
    float phi = atan2_fast(d.x, -d.z), theta = atan2_fast(sqrtf(d.x * d.x + d.z * d.z), d.y);
    *s = phi < 0 ? phi / (2 * RT_PI_F) + 1 : phi / (2 * RT_PI_F);
    *s = *s >= 1 ? 0 : *s;
    *t = theta / RT_PI_F;
}

/* ---- discrete distributions ---- */

/* Turns w[0..n) into a CDF of n + 1 entries; false if the total is 0. */
static bool
cdf_build(const float *w, uint32_t n, float *cdf)
{
    double sum = 0;
    cdf[0] = 0;
    for (uint32_t i = 0; i < n; i++) {
        sum += w[i] > 0 ? w[i] : 0;
        cdf[i + 1] = (float)sum;
    }
    if (!(sum > 0))
        return false;
    for (uint32_t i = 1; i <= n; i++)
        cdf[i] = (float)(cdf[i] / sum);
    cdf[n] = 1;
    return true;
}

/* The entry u falls in, and u's position within it, in [0, 1). */
static uint32_t
cdf_pick(const float *cdf, uint32_t n, float u, float *frac)
{
    uint32_t lo = 0, hi = n; /* the first i with cdf[i + 1] > u */
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (cdf[mid + 1] > u)
            hi = mid;
        else
            lo = mid + 1;
    }
    lo = lo < n ? lo : n - 1;
    while (lo > 0 && cdf[lo + 1] <= cdf[lo]) /* skip empty entries (never chosen) */
        lo--;
    float width = cdf[lo + 1] - cdf[lo];
    if (frac) {
        float f = width > 0 ? (u - cdf[lo]) / width : 0;
        *frac = f < 0 ? 0 : f >= 1 ? 0x1.fffffep-1f : f;
    }
    return lo;
}

static float
cdf_prob(const float *cdf, uint32_t i)
{
    return cdf[i + 1] - cdf[i];
}

/* ---- building ---- */

static float
power_of(const rt_light *l, float radius)
{
    float lum = rt_luminance(l->color);
    switch (l->kind) {
    case RT_LIGHT_POINT:
        return 4 * RT_PI_F * lum;
    case RT_LIGHT_SPOT:
        return 2 * RT_PI_F * (1 - cosf(0.5f * (l->inner_cone + l->outer_cone))) * lum;
    default: /* directional: what crosses the scene's disk */
        return RT_PI_F * radius * radius * lum;
    }
}

static v3
tri_point(const rt_scene *s, uint32_t prim, int k)
{
    return v3_load(&s->positions[3 * s->indices[3 * prim + k]]);
}

static bool
env_build(rt_lights *l, const rt_env_grid *g, double *avg)
{
    l->ew = g->w, l->eh = g->h;
    l->row_cdf = malloc((g->h + 1) * sizeof *l->row_cdf);
    l->cell_cdf = malloc((size_t)g->h * (g->w + 1) * sizeof *l->cell_cdf);
    float *rows = malloc(g->h * sizeof *rows), *cells = malloc(g->w * sizeof *cells);
    bool   ok = l->row_cdf && l->cell_cdf && rows && cells;
    double sum = 0, solid = 0;
    l->env_uniform = g->lum[0] > 0;
    for (size_t k = 1; k < (size_t)g->w * g->h && l->env_uniform; k++)
        l->env_uniform = g->lum[k] == g->lum[0];
    for (uint32_t j = 0; ok && j < g->h; j++) {
        float sin_t = sinf(RT_PI_F * ((float)j + 0.5f) / (float)g->h);
        rows[j] = 0;
        for (uint32_t i = 0; i < g->w; i++) {
            float v = g->lum[(size_t)j * g->w + i];
            cells[i] = v > 0 ? v * sin_t : 0;
            rows[j] += cells[i];
        }
        if (!cdf_build(cells, g->w, &l->cell_cdf[(size_t)j * (g->w + 1)]))
            for (uint32_t i = 0; i <= g->w; i++) /* a black row: never chosen anyway */
                l->cell_cdf[(size_t)j * (g->w + 1) + i] = (float)i / (float)g->w;
        sum += rows[j];
        solid += sin_t * g->w;
    }
    /* A black environment (every cell 0) is a light with no power: weight 0,
     * so never chosen, and density 0; only an allocation fails here. */
    if (ok && !cdf_build(rows, g->h, l->row_cdf))
        memset(l->row_cdf, 0, (g->h + 1) * sizeof *l->row_cdf);
    *avg = ok ? sum / solid : 0;
    free(rows), free(cells);
    return ok;
}

rt_result
rt_lights_create(const rt_scene *s, const rt_env_grid *env, rt_lights **out)
{
    *out = NULL;
    rt_lights *l = calloc(1, sizeof *l);
    if (!l)
        return RT_ERR_NOMEM;
    l->s = s;
    v3 ext = v3_sub(v3_load(s->bounds_max), v3_load(s->bounds_min));
    l->radius = 0.5f * v3_len(ext);
    l->radius = l->radius > 0 ? l->radius : 1;
    /* The default light stands in for missing lights; an environment is
     * one, so it replaces the default. */
    bool env_given = env && env->lum && env->w && env->h;
    l->npunctual = s->default_light && env_given ? s->nlights - 1 : s->nlights; /* it is last */
    for (uint32_t t = 0; t < s->ntris; t++) {
        const float *e = s->materials[s->material[t]].emissive;
        l->ntris += e[0] > 0 || e[1] > 0 || e[2] > 0;
    }
    double avg = 0;
    l->env = env && env->lum && env->w && env->h;
    l->n = l->npunctual + l->ntris + l->env;
    float *w = malloc((l->n + 1) * sizeof *w);
    l->cdf = malloc((l->n + 1) * sizeof *l->cdf);
    if (l->ntris) {
        l->tris = malloc(l->ntris * sizeof *l->tris);
        l->area = malloc(l->ntris * sizeof *l->area);
        l->light_of_prim = malloc(s->ntris * sizeof *l->light_of_prim);
    }
    bool ok = w && l->cdf && (!l->ntris || (l->tris && l->area && l->light_of_prim));
    if (ok && l->env)
        ok = env_build(l, env, &avg);
    if (!ok) {
        free(w);
        rt_lights_destroy(l);
        return RT_ERR_NOMEM;
    }
    for (uint32_t i = 0; i < l->npunctual; i++)
        w[i] = power_of(&s->lights[i], l->radius);
    uint32_t k = 0;
    for (uint32_t t = 0; t < s->ntris && l->ntris; t++) {
        const rt_material *m = &s->materials[s->material[t]];
        if (!(m->emissive[0] > 0 || m->emissive[1] > 0 || m->emissive[2] > 0)) {
            l->light_of_prim[t] = -1;
            continue;
        }
        v3    e1 = v3_sub(tri_point(s, t, 1), tri_point(s, t, 0));
        v3    e2 = v3_sub(tri_point(s, t, 2), tri_point(s, t, 0));
        float area = 0.5f * v3_len(v3_cross(e1, e2));
        l->tris[k] = t;
        l->area[k] = area;
        l->light_of_prim[t] = (int32_t)(l->npunctual + k);
        w[l->npunctual + k] =
            RT_PI_F * area * rt_luminance(m->emissive) * (m->double_sided ? 2 : 1);
        k++;
    }
    if (l->env)
        w[l->n - 1] = (float)(RT_PI_F * l->radius * l->radius * RT_PI_F * avg);
    if (!cdf_build(w, l->n, l->cdf))
        l->n = 0; /* nothing emits */
    free(w);
    *out = l;
    return RT_OK;
}

void
rt_lights_destroy(rt_lights *l)
{
    if (!l)
        return;
    free(l->tris), free(l->area), free(l->light_of_prim), free(l->cdf);
    free(l->row_cdf), free(l->cell_cdf);
    free(l);
}

bool
rt_lights_empty(const rt_lights *l)
{
    return l->n == 0;
}

bool
rt_lights_sky_only(const rt_lights *l)
{
    return l->n == 1 && l->env && l->env_uniform;
}

/* ---- sampling ---- */

static bool
sample_punctual(const rt_light *lt, v3 p, rt_light_sample *o)
{
    o->kind = RT_SAMPLE_DELTA;
    if (lt->kind == RT_LIGHT_DIRECTIONAL) {
        o->wi = v3_mul(v3_load(lt->direction), -1);
        o->dist = INFINITY;
        memcpy(o->li, lt->color, sizeof o->li);
        return true;
    }
    v3    d = v3_sub(v3_load(lt->position), p);
    float d2 = v3_dot(d, d);
    if (!(d2 > 0))
        return false;
    o->dist = sqrtf(d2);
    o->wi = v3_mul(d, 1 / o->dist);
    float k = 1 / d2;
    if (lt->kind == RT_LIGHT_SPOT) {
        /* glTF's falloff: squared, linear in cos between the cones. */
        float cd = -v3_dot(v3_load(lt->direction), o->wi);
        float ci = cosf(lt->inner_cone), co = cosf(lt->outer_cone);
        float a = (cd - co) / (ci - co > 1e-3f ? ci - co : 1e-3f);
        a = a < 0 ? 0 : a > 1 ? 1 : a;
        k *= a * a;
    }
    for (int c = 0; c < 3; c++)
        o->li[c] = lt->color[c] * k;
    return k > 0;
}

/* Solid-angle density of point q of triangle light `i` (area density
 * times d^2 over the cosine at the light), with the choice of it. */
static float
triangle_pdf(const rt_lights *l, uint32_t i, v3 p, v3 q)
{
    uint32_t           prim = l->tris[i - l->npunctual];
    const rt_material *m = &l->s->materials[l->s->material[prim]];
    v3                 n = v3_cross(v3_sub(tri_point(l->s, prim, 1), tri_point(l->s, prim, 0)),
                                    v3_sub(tri_point(l->s, prim, 2), tri_point(l->s, prim, 0)));
    v3                 d = v3_sub(p, q);
    float d2 = v3_dot(d, d), nl = v3_len(n), cos_l = nl > 0 ? v3_dot(n, d) / (nl * sqrtf(d2)) : 0;
    if (!m->double_sided && cos_l <= 0)
        return 0; /* the back of a one-sided emitter */
    cos_l = fabsf(cos_l);
    if (!(cos_l > 1e-6f) || !(d2 > 0))
        return 0;
    return cdf_prob(l->cdf, i) / l->area[i - l->npunctual] * d2 / cos_l;
}

/* The density of direction wi under the luminance grid alone. */
static float
env_grid_pdf(const rt_lights *l, v3 wi)
{
    float s, t;
    rt_env_coords(wi, &s, &t);
    uint32_t i = (uint32_t)(s * (float)l->ew), j = (uint32_t)(t * (float)l->eh);
    i = i < l->ew ? i : l->ew - 1, j = j < l->eh ? j : l->eh - 1;
    /* sin(pi t) from the nearer pole: pi t near pi would lose the few
     * bits left of sin near the south pole. */
    float sin_t = sinf(RT_PI_F * (t > 0.5f ? 1 - t : t));
    if (!(sin_t > 1e-6f))
        return 0;
    float p_st = cdf_prob(l->row_cdf, j) * cdf_prob(&l->cell_cdf[(size_t)j * (l->ew + 1)], i) *
                 (float)l->ew * (float)l->eh;
    return p_st / (2 * RT_PI_F * RT_PI_F * sin_t);
}

/* The environment's density for direction wi from a point with normal n,
 * its choice included: half the luminance grid, half a cosine lobe about n
 * (n = 0: the grid alone; a uniform grid: the lobe alone). The grid finds
 * what is bright; the lobe keeps the half of the sphere behind the surface
 * from taking half the samples, which for a dim, even sky is most of the
 * noise. */
static float
env_pdf(const rt_lights *l, v3 wi, v3 n)
{
    float sel = cdf_prob(l->cdf, l->n - 1);
    if (v3_dot(n, n) == 0)
        return sel * env_grid_pdf(l, wi);
    float c = v3_dot(n, wi), cosine = c > 0 ? c / RT_PI_F : 0;
    return sel * (l->env_uniform ? cosine : 0.5f * (env_grid_pdf(l, wi) + cosine));
}

bool
rt_lights_sample(const rt_lights *l, v3 p, float u_pick, const float u[2], rt_light_sample *o)
{
    return rt_lights_sample_at(l, p, (v3){0, 0, 0}, u_pick, u, o);
}

bool
rt_lights_sample_at(const rt_lights *l, v3 p, v3 n, float u_pick, const float u[2],
                    rt_light_sample *o)
{
    if (l->n == 0)
        return false;
    float    mix; /* where u_pick fell within the chosen light's share */
    uint32_t i = cdf_pick(l->cdf, l->n, u_pick, &mix);
    if (i < l->npunctual) {
        o->pdf = cdf_prob(l->cdf, i);
        return sample_punctual(&l->s->lights[i], p, o);
    }
    if (i < l->npunctual + l->ntris) {
        uint32_t prim = l->tris[i - l->npunctual];
        float    r = sqrtf(u[0]);
        o->kind = RT_SAMPLE_TRIANGLE;
        o->prim = prim;
        o->b1 = 1 - r; /* uniform over the triangle */
        o->b2 = u[1] * r;
        v3 a = tri_point(l->s, prim, 0);
        v3 q = v3_add(a, v3_add(v3_mul(v3_sub(tri_point(l->s, prim, 1), a), o->b1),
                                v3_mul(v3_sub(tri_point(l->s, prim, 2), a), o->b2)));
        v3 d = v3_sub(q, p);
        o->dist = v3_len(d);
        if (!(o->dist > 0))
            return false;
        o->wi = v3_mul(d, 1 / o->dist);
        o->pdf = triangle_pdf(l, i, p, q);
        return o->pdf > 0;
    }
    /* The environment: a row, a cell in it, a point in the cell. */
    o->kind = RT_SAMPLE_ENV;
    o->dist = INFINITY;
    if (v3_dot(n, n) > 0 && (mix < 0.5f || l->env_uniform)) {
        /* The cosine lobe about n (half the samples; all of them under a
         * uniform sky). */
        v3 t, b;
        v3_frame(n, &t, &b);
        o->wi = v3_from_local(rt_cosine_hemisphere(u), t, b, n);
    } else {
        /* The grid: a row, a cell in it, a point in the cell. */
        float    fr, fc;
        uint32_t j = cdf_pick(l->row_cdf, l->eh, u[1], &fr);
        uint32_t c = cdf_pick(&l->cell_cdf[(size_t)j * (l->ew + 1)], l->ew, u[0], &fc);
        o->wi = rt_env_direction(((float)c + fc) / (float)l->ew, ((float)j + fr) / (float)l->eh);
    }
    o->pdf = env_pdf(l, o->wi, n);
    return o->pdf > 0;
}

float
rt_lights_pdf_triangle(const rt_lights *l, uint32_t prim, v3 p, v3 q)
{
    if (l->n == 0 || !l->light_of_prim || l->light_of_prim[prim] < 0)
        return 0;
    return triangle_pdf(l, (uint32_t)l->light_of_prim[prim], p, q);
}

float
rt_lights_pdf_env(const rt_lights *l, v3 wi)
{
    return rt_lights_pdf_env_at(l, wi, (v3){0, 0, 0});
}

float
rt_lights_pdf_env_at(const rt_lights *l, v3 wi, v3 n)
{
    return l->n && l->env ? env_pdf(l, wi, n) : 0;
}

/* ---- the environment's grid, read through the texture system ---- */

/* The environment's luminance at (s, t), filtered over one grid cell. */
static float
env_luminance(tex_system *ts, tex_thread *tc, ustr name, const tex_derivs *d, float s, float t)
{
    tex_opts o = {.filter = TEX_FILTER_TRILINEAR, .twrap = TEX_WRAP_CLAMP, .fill = {1, 1, 1, 1}};
    float    rgba[4];
    tex_lookup(ts, tc, name, s, t, d, &o, rgba);
    return rt_luminance(rgba);
}

/* Neighbouring cells share corners, so each corner is read once, a row of
 * them at a time. */
float *
rt_env_grid_read(tex_system *ts, ustr name, rt_env_grid *g)
{
    tex_file_info info;
    tex_thread   *tc;
    if (tex_file_info_get(ts, name, &info) != TEX_OK || tex_thread_create(ts, &tc) != TEX_OK)
        return NULL;
    g->w = info.width < 1024 ? info.width : 1024;
    g->h = info.height < 512 ? info.height : 512;
    float *lum = malloc(((size_t)g->w * g->h + 2 * ((size_t)g->w + 1)) * sizeof *lum);
    if (!lum) {
        tex_thread_destroy(tc);
        return NULL;
    }
    float     *top = lum + (size_t)g->w * g->h, *bottom = top + g->w + 1;
    float      fw = (float)g->w, fh = (float)g->h;
    tex_derivs d = {1.0f / fw, 0, 0, 1.0f / fh};
    for (uint32_t i = 0; i <= g->w; i++)
        bottom[i] = env_luminance(ts, tc, name, &d, (float)i / fw, 0);
    for (uint32_t j = 0; j < g->h; j++) {
        float *swap = top;
        top = bottom, bottom = swap;
        for (uint32_t i = 0; i <= g->w; i++)
            bottom[i] = env_luminance(ts, tc, name, &d, (float)i / fw, (float)(j + 1) / fh);
        for (uint32_t i = 0; i < g->w; i++) {
            float most =
                env_luminance(ts, tc, name, &d, ((float)i + 0.5f) / fw, ((float)j + 0.5f) / fh);
            most = fmaxf(most, fmaxf(fmaxf(top[i], top[i + 1]), fmaxf(bottom[i], bottom[i + 1])));
            lum[(size_t)j * g->w + i] = rt_radiance(most, RT_MAX_RADIANCE); /* as its texels */
        }
    }
    tex_thread_destroy(tc);
    g->lum = lum;
    return lum;
}
