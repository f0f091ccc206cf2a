/* renderer/include/rt_lights.h: light selection by power and sampling. Each case
 * builds a small rt_scene by hand (only what lights.c reads) and checks the
 * header's contract: the lat-long mapping, the environment's density against
 * the samples it gives and against the sphere, an emissive triangle's points
 * and solid-angle density, the choice of a light in proportion to its power,
 * punctual radiance, the default light, a scene with nothing to sample,
 * and the environment's grid read from a map through the texture system.
 * Random numbers come from a fixed xorshift, so every run is the same. */
#include "check.h"
#include "rt_lights.h"
#include "rt_scene.h"
#include "rt_vec.h"
#include "tex_exr.h"
#include "tex_file_testing.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define PI 3.14159265358979323846

/* --- deterministic random numbers ----------------------------------------- */

typedef struct rng {
    uint64_t s;
} rng;

static float
rng_float(rng *r) /* [0, 1), 24 bits */
{
    r->s ^= r->s << 13;
    r->s ^= r->s >> 7;
    r->s ^= r->s << 17;
    return (float)(r->s >> 40) * 0x1p-24f;
}

/* --- a scene built by hand ------------------------------------------------ */

enum { MAX_VERTS = 12, MAX_TRIS = 4, MAX_MATS = 4, MAX_LIGHTS = 4 };

typedef struct test_scene {
    rt_scene    s;
    float       pos[3 * MAX_VERTS];
    uint32_t    idx[3 * MAX_TRIS];
    uint32_t    mat[MAX_TRIS];
    rt_material mats[MAX_MATS];
    rt_light    lights[MAX_LIGHTS];
} test_scene;

/* Empty, with bounds [-1, 1]^3 until a triangle widens them. Not copyable:
 * the scene points into the struct. */
static void
scene_init(test_scene *t)
{
    memset(t, 0, sizeof *t);
    t->s.positions = t->pos;
    t->s.indices = t->idx;
    t->s.material = t->mat;
    t->s.materials = t->mats;
    t->s.lights = t->lights;
    for (int k = 0; k < 3; k++)
        t->s.bounds_min[k] = -1, t->s.bounds_max[k] = 1;
}

static uint32_t
scene_material(test_scene *t, float e0, float e1, float e2, bool double_sided)
{
    REQUIRE(t->s.nmaterials < MAX_MATS);
    rt_material *m = &t->mats[t->s.nmaterials];
    m->base_color[0] = m->base_color[1] = m->base_color[2] = m->base_color[3] = 0.8f;
    m->roughness = 0.5f;
    m->emissive[0] = e0, m->emissive[1] = e1, m->emissive[2] = e2;
    m->alpha_cutoff = -1;
    m->double_sided = double_sided;
    return t->s.nmaterials++;
}

/* Triangle a, b, c (counter-clockwise seen from its front); its index. */
static uint32_t
scene_tri(test_scene *t, v3 a, v3 b, v3 c, uint32_t material)
{
    REQUIRE(t->s.ntris < MAX_TRIS && t->s.nverts + 3 <= MAX_VERTS);
    v3 v[3] = {a, b, c};
    for (int k = 0; k < 3; k++) {
        float *p = &t->pos[3 * t->s.nverts];
        p[0] = v[k].x, p[1] = v[k].y, p[2] = v[k].z;
        for (int c2 = 0; c2 < 3; c2++) {
            t->s.bounds_min[c2] = fminf(t->s.bounds_min[c2], p[c2]);
            t->s.bounds_max[c2] = fmaxf(t->s.bounds_max[c2], p[c2]);
        }
        t->idx[3 * t->s.ntris + k] = t->s.nverts++;
    }
    t->mat[t->s.ntris] = material;
    return t->s.ntris++;
}

static rt_light *
scene_light(test_scene *t, rt_light_kind kind, float r, float g, float b)
{
    REQUIRE(t->s.nlights < MAX_LIGHTS);
    rt_light *l = &t->lights[t->s.nlights++];
    l->kind = kind;
    l->color[0] = r, l->color[1] = g, l->color[2] = b;
    l->direction[1] = -1;
    return l;
}

static rt_lights *
lights_make(const test_scene *t, const rt_env_grid *env)
{
    rt_lights *l = NULL;
    rt_result  r = rt_lights_create(&t->s, env, &l);
    CHECK_EQ_INT(r, RT_OK);
    REQUIRE(r == RT_OK && l);
    return l;
}

/* --- geometry in double, independent of lights.c --------------------------- */

static v3
tri_vertex(const test_scene *t, uint32_t prim, int k)
{
    return v3_load(&t->pos[3 * t->idx[3 * prim + k]]);
}

static double
tri_area(const test_scene *t, uint32_t prim)
{
    v3 a = tri_vertex(t, prim, 0);
    v3 n = v3_cross(v3_sub(tri_vertex(t, prim, 1), a), v3_sub(tri_vertex(t, prim, 2), a));
    return 0.5 * sqrt((double)n.x * n.x + (double)n.y * n.y + (double)n.z * n.z);
}

/* The point at barycentrics (b1, b2): weights 1 - b1 - b2, b1, b2 on the
 * corners (Embree's u, v). */
static v3
tri_at(const test_scene *t, uint32_t prim, float b1, float b2)
{
    v3 a = tri_vertex(t, prim, 0), b = tri_vertex(t, prim, 1), c = tri_vertex(t, prim, 2);
    return v3_add(v3_mul(a, 1 - b1 - b2), v3_add(v3_mul(b, b1), v3_mul(c, b2)));
}

/* Solid-angle density of q when the triangle is picked with probability
 * `prob` and a point on it uniformly: prob / area * d^2 / |cos| at q. */
static double
tri_pdf_expected(const test_scene *t, uint32_t prim, v3 p, v3 q, double prob)
{
    v3 a = tri_vertex(t, prim, 0);
    v3 n = v3_norm(v3_cross(v3_sub(tri_vertex(t, prim, 1), a), v3_sub(tri_vertex(t, prim, 2), a)));
    v3 d = v3_sub(p, q);
    double d2 = (double)d.x * d.x + (double)d.y * d.y + (double)d.z * d.z;
    double c = fabs(((double)n.x * d.x + (double)n.y * d.y + (double)n.z * d.z) / sqrt(d2));
    return prob / tri_area(t, prim) * d2 / c;
}

/* Möller-Trumbore in double, both sides: the distance along unit dir, or -1. */
static double
ray_tri(const test_scene *t, uint32_t prim, v3 o, const double dir[3])
{
    v3     va = tri_vertex(t, prim, 0), vb = tri_vertex(t, prim, 1), vc = tri_vertex(t, prim, 2);
    double a[3] = {va.x, va.y, va.z}, e1[3] = {vb.x - va.x, vb.y - va.y, vb.z - va.z},
           e2[3] = {vc.x - va.x, vc.y - va.y, vc.z - va.z};
    double pv[3] = {dir[1] * e2[2] - dir[2] * e2[1], dir[2] * e2[0] - dir[0] * e2[2],
                    dir[0] * e2[1] - dir[1] * e2[0]};
    double det = e1[0] * pv[0] + e1[1] * pv[1] + e1[2] * pv[2];
    if (fabs(det) < 1e-12)
        return -1;
    double tv[3] = {o.x - a[0], o.y - a[1], o.z - a[2]};
    double u = (tv[0] * pv[0] + tv[1] * pv[1] + tv[2] * pv[2]) / det;
    if (u < 0 || u > 1)
        return -1;
    double qv[3] = {tv[1] * e1[2] - tv[2] * e1[1], tv[2] * e1[0] - tv[0] * e1[2],
                    tv[0] * e1[1] - tv[1] * e1[0]};
    double v = (dir[0] * qv[0] + dir[1] * qv[1] + dir[2] * qv[2]) / det;
    if (v < 0 || u + v > 1)
        return -1;
    double d = (e2[0] * qv[0] + e2[1] * qv[1] + e2[2] * qv[2]) / det;
    return d > 0 ? d : -1;
}

/* Direction number (a, b) of a jittered NA x NB grid that covers the sphere
 * uniformly (uniform in z and in phi). */
static void
sphere_dir(int a, int b, int na, int nb, rng *r, double out[3])
{
    double z = 1 - 2 * (a + (double)rng_float(r)) / na;
    double phi = 2 * PI * (b + (double)rng_float(r)) / nb;
    double s = sqrt(fmax(0, 1 - z * z));
    out[0] = s * cos(phi), out[1] = z, out[2] = s * sin(phi);
}

/* The Monte Carlo integral over the sphere of the density that
 * rt_lights_pdf_triangle() gives to directions from p that hit `prim`. */
static double
tri_pdf_integral(const rt_lights *l, const test_scene *t, uint32_t prim, v3 p)
{
    enum { NA = 512, NB = 512 };
    rng    r = {0x9e3779b97f4a7c15u};
    double sum = 0;
    for (int a = 0; a < NA; a++)
        for (int b = 0; b < NB; b++) {
            double d[3];
            sphere_dir(a, b, NA, NB, &r, d);
            double h = ray_tri(t, prim, p, d);
            if (h < 0)
                continue;
            v3 q = {(float)(p.x + h * d[0]), (float)(p.y + h * d[1]), (float)(p.z + h * d[2])};
            sum += rt_lights_pdf_triangle(l, prim, p, q);
        }
    return 4 * PI * sum / ((double)NA * NB);
}

/* --- the environment grid ------------------------------------------------- */

enum { ENV_W = 16, ENV_H = 8, BRIGHT_I = 5, BRIGHT_J = 2 };

/* Dim but > 0 everywhere, uneven, and one bright cell (BRIGHT_I, BRIGHT_J). */
static void
env_fill(float lum[ENV_W * ENV_H])
{
    for (int j = 0; j < ENV_H; j++)
        for (int i = 0; i < ENV_W; i++)
            lum[j * ENV_W + i] = 0.05f * (float)(1 + (i + 2 * j) % 5);
    lum[BRIGHT_J * ENV_W + BRIGHT_I] = 40;
}

/* Each cell's share of sum(lum * sin(theta at the row's middle)): its share
 * of luminance times solid angle, since a row's solid angle is proportional
 * to that sine. */
static void
env_shares(const float *lum, double share[ENV_W * ENV_H])
{
    double sum = 0;
    for (int j = 0; j < ENV_H; j++)
        for (int i = 0; i < ENV_W; i++)
            sum += share[j * ENV_W + i] = lum[j * ENV_W + i] * sin(PI * (j + 0.5) / ENV_H);
    for (int k = 0; k < ENV_W * ENV_H; k++)
        share[k] /= sum;
}

/* The grid cell (i, j) that direction wi falls in, its t, and where in the
 * cell it lies: (fs, ft) in [0, 1)^2. */
static void
env_cell(v3 wi, int *i, int *j, float *t_out, double *fs, double *ft)
{
    float s, t;
    rt_env_coords(wi, &s, &t);
    *i = (int)(s * ENV_W), *j = (int)(t * ENV_H);
    *i = *i < ENV_W ? *i : ENV_W - 1, *j = *j < ENV_H ? *j : ENV_H - 1;
    *t_out = t;
    *fs = (double)s * ENV_W - *i, *ft = (double)t * ENV_H - *j;
}

/* 4 pi times the mean of rt_lights_pdf_env() over a jittered grid of the
 * sphere: the integral of the density. */
static double
env_pdf_integral(const rt_lights *l)
{
    enum { NA = 512, NB = 512 };
    rng    r = {0x2545f4914f6cdd1du};
    double sum = 0;
    for (int a = 0; a < NA; a++)
        for (int b = 0; b < NB; b++) {
            double d[3];
            sphere_dir(a, b, NA, NB, &r, d);
            sum += rt_lights_pdf_env(l, (v3){(float)d[0], (float)d[1], (float)d[2]});
        }
    return 4 * PI * sum / ((double)NA * NB);
}

/* --- cases ----------------------------------------------------------------- */

/* rt_env_direction() and rt_env_coords() are inverses; t = 0 is +y; unit. */
static void
case_env_mapping(const char *arg)
{
    (void)arg;
    int bad_unit = 0, bad_trip = 0;
    for (int a = 0; a < 64; a++)
        for (int b = 1; b < 32; b++) { /* t in (0, 1), clear of the poles */
            float s = (a + 0.25f) / 64, t = b / 32.0f;
            v3    d = rt_env_direction(s, t);
            if (fabsf(v3_len(d) - 1) > 1e-5f)
                bad_unit++;
            float s2, t2;
            rt_env_coords(d, &s2, &t2);
            float ds = fabsf(s2 - s);
            ds = fminf(ds, 1 - ds); /* s wraps around */
            if (!(ds < 1e-5f && fabsf(t2 - t) < 1e-5f && s2 >= 0 && s2 < 1)) {
                if (bad_trip++ < 5)
                    fprintf(stderr, "(s, t) = (%g, %g) -> (%g, %g)\n", s, t, s2, t2);
            }
            /* the polar angle is t * pi from +y */
            CHECK_ABS(d.y, cos(PI * t), 1e-5);
        }
    CHECK_EQ_INT(bad_unit, 0);
    CHECK_EQ_INT(bad_trip, 0);

    for (int a = 0; a < 8; a++) {
        v3 up = rt_env_direction(a / 8.0f, 0);
        CHECK_ABS(up.y, 1, 1e-6);
        CHECK_ABS(up.x, 0, 1e-6);
        CHECK_ABS(up.z, 0, 1e-6);
        v3 h = rt_env_direction(a / 8.0f, 0.5f); /* the horizon */
        CHECK_ABS(h.y, 0, 1e-6);
        /* half a turn of s is the opposite direction */
        v3 o = rt_env_direction(a / 8.0f + 0.5f, 0.5f);
        CHECK_ABS(o.x, -h.x, 1e-5);
        CHECK_ABS(o.z, -h.z, 1e-5);
    }
    float s, t;
    rt_env_coords((v3){0, 1, 0}, &s, &t);
    CHECK_ABS(t, 0, 1e-6);
    rt_env_coords((v3){0, -1, 0}, &s, &t);
    CHECK_ABS(t, 1, 1e-6);
    rt_env_coords((v3){1, 0, 0}, &s, &t);
    CHECK_ABS(t, 0.5, 1e-6);
    CHECK(s >= 0 && s < 1);
    /* s at +x and at -x are half a turn apart */
    float s_minus;
    rt_env_coords((v3){-1, 0, 0}, &s_minus, &t);
    CHECK_ABS(fabsf(s - s_minus), 0.5, 1e-6);

    /* Against libm in double, over the whole sphere, poles and axes too
     * (rt_env_coords() computes its arc tangents with a polynomial). */
    rng    r = {0x51af8e2c3d1b7e95u};
    double worst = 0;
    for (int k = 0; k < 200000; k++) {
        double z = 2 * rng_float(&r) - 1, phi = 2 * PI * rng_float(&r), rad = sqrt(1 - z * z);
        v3     d = {(float)(rad * cos(phi)), (float)z, (float)(rad * sin(phi))};
        if (k < 6) /* the axes */
            d = (v3){k == 0   ? 1.0f
                     : k == 1 ? -1.0f
                              : 0,
                     k == 2   ? 1.0f
                     : k == 3 ? -1.0f
                              : 0,
                     k == 4   ? 1.0f
                     : k == 5 ? -1.0f
                              : 0};
        double want_s = atan2(d.x, -d.z) / (2 * PI), want_t = acos(d.y) / PI;
        want_s += want_s < 0 ? 1 : 0;
        rt_env_coords(d, &s, &t);
        double ds = fabs(s - want_s);
        ds = d.x == 0 && d.z == 0 ? 0 : fmin(ds, 1 - ds); /* at a pole, any s */
        worst = fmax(worst, fmax(ds, fabs(t - want_t)));
    }
    if (!(worst < 1e-6))
        fprintf(stderr, "worst %g\n", worst);
    CHECK(worst < 1e-6);
}

/* The environment alone: samples' pdf agrees with rt_lights_pdf_env() and
 * with the density the grid implies; the density integrates to 1; the
 * samples fall in each cell in proportion to its luminance * solid angle. */
static void
case_env_pdf(const char *arg)
{
    (void)arg;
    float lum[ENV_W * ENV_H];
    env_fill(lum);
    double share[ENV_W * ENV_H];
    env_shares(lum, share);
    rt_env_grid env = {lum, ENV_W, ENV_H};
    test_scene  t;
    scene_init(&t);
    rt_lights *l = lights_make(&t, &env);
    CHECK(!rt_lights_empty(l));

    enum { N = 200000 };
    static int count[ENV_W * ENV_H];
    memset(count, 0, sizeof count);
    int sub[4][4] = {{0}}; /* where in its cell each sample falls */
    rng r = {88172645463325252u};
    int ok = 0, bad_kind = 0, bad_pdf = 0, bad_dist = 0;
    for (int n = 0; n < N; n++) {
        float           u[2] = {rng_float(&r), rng_float(&r)};
        rt_light_sample o;
        if (!rt_lights_sample(l, (v3){0.1f, 0.2f, 0.3f}, rng_float(&r), u, &o))
            continue; /* only at a pole, where the density is 0 */
        ok++;
        bad_kind += o.kind != RT_SAMPLE_ENV;
        bad_dist += !(isinf(o.dist) && o.dist > 0) || fabsf(v3_len(o.wi) - 1) > 1e-5f;
        int    i, j;
        float  tt;
        double fs, ft;
        env_cell(o.wi, &i, &j, &tt, &fs, &ft);
        count[j * ENV_W + i]++;
        sub[(int)fmin(3, fmax(0, fs * 4))][(int)fmin(3, fmax(0, ft * 4))]++;
        /* (a) the same density as rt_lights_pdf_env(), and as the grid says:
         * the cell's share spread uniformly over its (s, t) area, over the
         * Jacobian 2 pi^2 sin(theta) of the lat-long map */
        float  pe = rt_lights_pdf_env(l, o.wi);
        double expect = share[j * ENV_W + i] * ENV_W * ENV_H / (2 * PI * PI * sin(PI * tt));
        if (!(fabs(o.pdf - pe) <= 1e-3 * pe && fabs(o.pdf - expect) <= 1e-3 * expect)) {
            if (bad_pdf++ < 5)
                fprintf(stderr, "sample pdf %g, rt_lights_pdf_env %g, expected %g (cell %d,%d)\n",
                        o.pdf, pe, expect, i, j);
        }
    }
    CHECK(ok > N - 10);
    CHECK_EQ_INT(bad_kind, 0);
    CHECK_EQ_INT(bad_dist, 0);
    CHECK_EQ_INT(bad_pdf, 0);

    /* (b) the only light: its density over the sphere integrates to 1 */
    CHECK_REL(env_pdf_integral(l), 1.0, 0.02);

    /* (c) the bright cell gets its share of luminance * sin(theta), and every
     * cell is within 5 sigma of its expected count */
    double bright = share[BRIGHT_J * ENV_W + BRIGHT_I];
    CHECK(bright > 0.3 && bright < 0.9); /* the grid is as meant */
    CHECK_REL((double)count[BRIGHT_J * ENV_W + BRIGHT_I] / ok, bright, 0.02);
    int bad_cells = 0;
    for (int k = 0; k < ENV_W * ENV_H; k++) {
        double e = share[k] * ok;
        if (fabs(count[k] - e) > 5 * sqrt(e) + 2) {
            if (bad_cells++ < 5)
                fprintf(stderr, "cell %d,%d: %d samples, expected %.1f\n", k % ENV_W, k / ENV_W,
                        count[k], e);
        }
    }
    CHECK_EQ_INT(bad_cells, 0);
    /* within its cell a sample is uniform in (s, t), as the density says:
     * each sixteenth of a cell gets 1/16 of the samples (within 5 sigma) */
    for (int a = 0; a < 4; a++)
        for (int b = 0; b < 4; b++) {
            double e = ok / 16.0;
            if (fabs(sub[a][b] - e) > 5 * sqrt(e)) {
                fprintf(stderr, "part %d,%d of the cells: %d samples, expected %.1f\n", a, b,
                        sub[a][b], e);
                CHECK(false);
            }
        }
    rt_lights_destroy(l);
}

/* The environment with a point light: the density still includes the
 * choice, so it integrates to the environment's selection probability. */
static void
case_env_mixed(const char *arg)
{
    (void)arg;
    float lum[ENV_W * ENV_H];
    env_fill(lum);
    rt_env_grid env = {lum, ENV_W, ENV_H};
    test_scene  t;
    scene_init(&t);
    rt_light *pl = scene_light(&t, RT_LIGHT_POINT, 20, 20, 20);
    pl->position[1] = 3;
    rt_lights *l = lights_make(&t, &env);

    /* the environment's selection probability, from the choices made over
     * a fine grid of u_pick */
    enum { N = 100000 };
    rng    r = {1234567};
    int    nenv = 0, ndelta = 0;
    double p_env = -1, p_delta = -1;
    for (int n = 0; n < N; n++) {
        float           u[2] = {rng_float(&r), rng_float(&r)};
        rt_light_sample o;
        if (!rt_lights_sample(l, (v3){0, 0, 0}, (n + 0.5f) / N, u, &o))
            continue;
        if (o.kind == RT_SAMPLE_ENV) {
            nenv++;
        } else {
            CHECK_EQ_INT(o.kind, RT_SAMPLE_DELTA);
            ndelta++;
            if (p_delta < 0)
                p_delta = o.pdf;
            CHECK_REL(o.pdf, p_delta, 1e-6);
        }
    }
    REQUIRE(nenv > 0 && ndelta > 0);
    p_env = (double)nenv / N;
    CHECK_REL(p_delta, 1 - p_env, 1e-3); /* the two probabilities sum to 1 */
    CHECK_REL(env_pdf_integral(l), p_env, 0.02);
    rt_lights_destroy(l);
}

/* One single-sided emissive triangle (prim 1; prim 0 does not emit). */
static void
case_triangle(const char *arg)
{
    (void)arg;
    test_scene t;
    scene_init(&t);
    uint32_t dull = scene_material(&t, 0, 0, 0, false);
    uint32_t glow = scene_material(&t, 1, 2, 3, false);
    scene_tri(&t, (v3){-3, -3, -2}, (v3){3, -3, -2}, (v3){0, 3, -2}, dull);
    /* normal +z: its front faces z > 0 */
    uint32_t   prim = scene_tri(&t, (v3){0, 0, 0}, (v3){1, 0, 0}, (v3){0, 1, 0}, glow);
    rt_lights *l = lights_make(&t, NULL);
    CHECK(!rt_lights_empty(l));

    v3 front = {0.3f, 0.2f, 1}, back = {0.3f, 0.2f, -1};
    enum { N = 100000 };
    rng    r = {42};
    int    ok = 0, bad = 0, above_half = 0;
    double sum_b1 = 0, sum_b2 = 0;
    for (int n = 0; n < N; n++) {
        float           u[2] = {rng_float(&r), rng_float(&r)};
        rt_light_sample o;
        if (!rt_lights_sample(l, front, rng_float(&r), u, &o)) {
            bad++;
            continue;
        }
        ok++;
        CHECK_EQ_INT(o.kind, RT_SAMPLE_TRIANGLE);
        CHECK_EQ_INT(o.prim, prim);
        CHECK(o.b1 >= 0 && o.b2 >= 0 && o.b1 + o.b2 <= 1 + 1e-6f);
        v3    q = tri_at(&t, prim, o.b1, o.b2);
        v3    d = v3_sub(q, front);
        float dl = v3_len(d);
        CHECK_REL(o.dist, dl, 1e-4);
        CHECK_ABS(v3_dot(o.wi, v3_mul(d, 1 / dl)), 1, 1e-5);
        CHECK_ABS(v3_len(o.wi), 1, 1e-5);
        CHECK_REL(o.pdf, rt_lights_pdf_triangle(l, prim, front, q), 1e-4);
        CHECK_REL(o.pdf, tri_pdf_expected(&t, prim, front, q, 1), 1e-3);
        sum_b1 += o.b1, sum_b2 += o.b2;
        above_half += o.b1 > 0.5f;
        if (rt_test_failures > 20)
            break;
    }
    CHECK_EQ_INT(bad, 0);
    /* uniform over the triangle: both barycentrics average 1/3, and the
     * corner b1 > 1/2 holds a quarter of the area */
    CHECK_ABS(sum_b1 / ok, 1 / 3.0, 0.005);
    CHECK_ABS(sum_b2 / ok, 1 / 3.0, 0.005);
    CHECK_ABS((double)above_half / ok, 0.25, 0.01);

    /* the solid-angle density integrates to 1 over the directions that hit it */
    CHECK_REL(tri_pdf_integral(l, &t, prim, front), 1.0, 0.03);
    CHECK_REL(tri_pdf_integral(l, &t, prim, (v3){-0.5f, 1.5f, 0.4f}), 1.0, 0.03);

    /* from behind, a one-sided emitter gives nothing */
    int lit = 0;
    for (int n = 0; n < 1000; n++) {
        float           u[2] = {rng_float(&r), rng_float(&r)};
        rt_light_sample o;
        if (rt_lights_sample(l, back, rng_float(&r), u, &o) && o.pdf > 0)
            lit++;
    }
    CHECK_EQ_INT(lit, 0);
    CHECK_EQ_INT(rt_lights_pdf_triangle(l, prim, back, tri_at(&t, prim, 0.3f, 0.3f)) == 0, 1);
    CHECK_EQ_INT(tri_pdf_integral(l, &t, prim, back) == 0, 1);
    /* a triangle that does not emit has no density, from either side */
    v3 q0 = tri_at(&t, 0, 0.3f, 0.3f);
    CHECK_EQ_INT(rt_lights_pdf_triangle(l, 0, (v3){0, 0, 5}, q0) == 0, 1);
    CHECK_EQ_INT(rt_lights_pdf_env(l, (v3){0, 1, 0}) == 0, 1);
    rt_lights_destroy(l);

    /* double-sided: the back works the same way */
    t.mats[glow].double_sided = true;
    l = lights_make(&t, NULL);
    ok = bad = 0;
    for (int n = 0; n < N / 4; n++) {
        float           u[2] = {rng_float(&r), rng_float(&r)};
        rt_light_sample o;
        if (!rt_lights_sample(l, back, rng_float(&r), u, &o)) {
            bad++;
            continue;
        }
        CHECK_EQ_INT(o.kind, RT_SAMPLE_TRIANGLE);
        v3 q = tri_at(&t, prim, o.b1, o.b2);
        CHECK_REL(o.dist, v3_len(v3_sub(q, back)), 1e-4);
        CHECK(o.wi.z > 0); /* up toward the triangle */
        CHECK_REL(o.pdf, rt_lights_pdf_triangle(l, prim, back, q), 1e-4);
        CHECK_REL(o.pdf, tri_pdf_expected(&t, prim, back, q, 1), 1e-3);
        if (rt_test_failures > 20)
            break;
    }
    CHECK_EQ_INT(bad, 0);
    CHECK_REL(tri_pdf_integral(l, &t, prim, back), 1.0, 0.03);
    CHECK_REL(tri_pdf_integral(l, &t, prim, front), 1.0, 0.03);
    rt_lights_destroy(l);
}

/* Two point lights of luminance 1 and 3 and an emissive triangle: each is
 * chosen in proportion to its power; a delta sample's pdf is its choice
 * probability; a point light's radiance is color / d^2. */
static void
case_selection(const char *arg)
{
    (void)arg;
    test_scene t;
    scene_init(&t);
    rt_light *a = scene_light(&t, RT_LIGHT_POINT, 1, 1, 1); /* luminance 1 */
    a->position[0] = 5;
    rt_light *b = scene_light(&t, RT_LIGHT_POINT, 3, 3, 3); /* luminance 3 */
    b->position[0] = -4;
    uint32_t glow = scene_material(&t, 2, 2, 2, false); /* luminance 2 */
    /* area 1/2, normal -z: faces the origin */
    uint32_t   prim = scene_tri(&t, (v3){0, 0, 3}, (v3){0, 1, 3}, (v3){1, 0, 3}, glow);
    rt_lights *l = lights_make(&t, NULL);

    /* powers: 4 pi * 1, 4 pi * 3, pi * area * luminance = pi */
    double pw[3] = {4 * PI, 12 * PI, PI * 0.5 * 2}, total = pw[0] + pw[1] + pw[2];
    enum { N = 200000 };
    rng r = {777};
    int n_of[3] = {0, 0, 0}, failed = 0;
    v3  p = {0, 0, 0};
    for (int n = 0; n < N; n++) {
        float           u[2] = {rng_float(&r), rng_float(&r)};
        rt_light_sample o;
        if (!rt_lights_sample(l, p, (n + rng_float(&r)) / N, u, &o)) {
            failed++;
            continue;
        }
        if (o.kind == RT_SAMPLE_DELTA) {
            int    k = o.wi.x > 0 ? 0 : 1;
            double d = k == 0 ? 5 : 4;
            n_of[k]++;
            CHECK_REL(o.pdf, pw[k] / total, 1e-4);
            CHECK_REL(o.dist, d, 1e-5);
            CHECK_ABS(fabsf(o.wi.x), 1, 1e-6);
            for (int c = 0; c < 3; c++)
                CHECK_REL(o.li[c], t.lights[k].color[c] / (d * d), 1e-5);
        } else {
            CHECK_EQ_INT(o.kind, RT_SAMPLE_TRIANGLE);
            CHECK_EQ_INT(o.prim, prim);
            n_of[2]++;
            v3 q = tri_at(&t, prim, o.b1, o.b2);
            CHECK_REL(o.pdf, rt_lights_pdf_triangle(l, prim, p, q), 1e-4);
            CHECK_REL(o.pdf, tri_pdf_expected(&t, prim, p, q, pw[2] / total), 1e-3);
        }
        if (rt_test_failures > 20)
            break;
    }
    CHECK_EQ_INT(failed, 0);
    for (int k = 0; k < 3; k++) {
        CHECK_REL((double)n_of[k] / N, pw[k] / total, 0.01);
    }
    /* the triangle's density, choice included, integrates to its share */
    CHECK_REL(tri_pdf_integral(l, &t, prim, p), pw[2] / total, 0.03);
    rt_lights_destroy(l);
}

/* A spot light: full radiance inside the inner cone, none outside the
 * outer one, in between less and falling. */
static void
case_spot(const char *arg)
{
    (void)arg;
    test_scene t;
    scene_init(&t);
    rt_light *sp = scene_light(&t, RT_LIGHT_SPOT, 2, 4, 6);
    sp->position[1] = 1; /* at (0, 1, 0), pointing down -y */
    sp->inner_cone = 0.2f, sp->outer_cone = 0.4f;
    rt_lights *l = lights_make(&t, NULL);
    CHECK(!rt_lights_empty(l));

    const float u[2] = {0.5f, 0.5f};
    const float d = 2;
    float       prev = INFINITY;
    for (int k = 0; k <= 60; k++) {
        float           ang = 0.6f * k / 60; /* from the axis */
        v3              p = {d * sinf(ang), 1 - d * cosf(ang), 0};
        rt_light_sample o;
        memset(&o, 0, sizeof o);
        bool got = rt_lights_sample(l, p, 0.5f, u, &o);
        if (ang < 0.2f - 1e-3f) {
            CHECK(got);
            CHECK_EQ_INT(o.kind, RT_SAMPLE_DELTA);
            CHECK_REL(o.pdf, 1, 1e-6);
            CHECK_REL(o.dist, d, 1e-5);
            for (int c = 0; c < 3; c++)
                CHECK_REL(o.li[c], sp->color[c] / (d * d), 1e-4);
        } else if (ang > 0.4f + 1e-3f) {
            /* outside: no sample, or one with no radiance */
            CHECK(!got || (o.li[0] == 0 && o.li[1] == 0 && o.li[2] == 0));
        } else if (ang > 0.2f + 1e-3f && ang < 0.4f - 1e-3f) {
            CHECK(got);
            CHECK(o.li[1] > 0 && o.li[1] < sp->color[1] / (d * d));
            CHECK(o.li[1] <= prev);
            CHECK_REL(o.li[0] / o.li[1], 0.5, 1e-5); /* the colour is kept */
        }
        if (got)
            prev = o.li[1];
        /* wi points from p up to the light */
        if (got)
            CHECK_ABS(v3_dot(o.wi, v3_norm(v3_sub((v3){0, 1, 0}, p))), 1, 1e-5);
    }
    rt_lights_destroy(l);
}

/* A directional light: wi = -direction, dist = INFINITY, li = color. */
static void
case_directional(const char *arg)
{
    (void)arg;
    test_scene t;
    scene_init(&t);
    rt_light *dl = scene_light(&t, RT_LIGHT_DIRECTIONAL, 1, 0.5f, 0.25f);
    dl->direction[0] = 0.6f, dl->direction[1] = -0.8f, dl->direction[2] = 0;
    rt_lights *l = lights_make(&t, NULL);
    rng        r = {99};
    for (int n = 0; n < 100; n++) {
        float           u[2] = {rng_float(&r), rng_float(&r)};
        v3              p = {rng_float(&r) * 10 - 5, rng_float(&r) * 10 - 5, 0};
        rt_light_sample o;
        REQUIRE(rt_lights_sample(l, p, rng_float(&r), u, &o));
        CHECK_EQ_INT(o.kind, RT_SAMPLE_DELTA);
        CHECK(isinf(o.dist) && o.dist > 0);
        CHECK_ABS(o.wi.x, -0.6, 1e-6);
        CHECK_ABS(o.wi.y, 0.8, 1e-6);
        CHECK_ABS(o.wi.z, 0, 1e-6);
        CHECK_REL(o.pdf, 1, 1e-6);
        CHECK_REL(o.li[0], 1, 1e-6);
        CHECK_REL(o.li[1], 0.5, 1e-6);
        CHECK_REL(o.li[2], 0.25, 1e-6);
    }
    rt_lights_destroy(l);
}

/* Every kind of light chosen in proportion to its power, by formulas
 * written here from the definitions: a point light 4 pi L; a spot the
 * solid angle of its mean cone, 2 pi (1 - cos((inner + outer) / 2)) L; a
 * directional light what crosses the scene's bounding disk, pi r^2 L; an
 * emissive triangle pi A L, twice that when double-sided (it emits from
 * both faces); an environment of mean radiance L what crosses that disk
 * from every direction, pi r^2 pi L. Each delta sample's pdf is its
 * light's share, and over many samples each light is chosen its share of
 * the time. */
static void
case_weights(const char *arg)
{
    (void)arg;
    test_scene t;
    scene_init(&t);
    rt_light *pt = scene_light(&t, RT_LIGHT_POINT, 1, 1, 1);
    pt->position[0] = 5;
    rt_light *sp = scene_light(&t, RT_LIGHT_SPOT, 2, 2, 2); /* at (0, 5, 0), down -y */
    sp->position[1] = 5;
    sp->inner_cone = 0.2f, sp->outer_cone = 0.6f;
    rt_light *dl = scene_light(&t, RT_LIGHT_DIRECTIONAL, 0.5f, 0.5f, 0.5f);
    dl->direction[0] = 0, dl->direction[1] = 0, dl->direction[2] = -1; /* wi = +z */
    /* Two triangles of area 1/2 at z = -3, facing the origin (+z), luminance 1. */
    uint32_t one = scene_material(&t, 1, 1, 1, false), two = scene_material(&t, 1, 1, 1, true);
    uint32_t single = scene_tri(&t, (v3){0, 0, -3}, (v3){1, 0, -3}, (v3){0, 1, -3}, one);
    uint32_t both = scene_tri(&t, (v3){0, 0, -3}, (v3){-1, 0, -3}, (v3){0, -1, -3}, two);
    float    sky[ENV_W * ENV_H];
    for (int i = 0; i < ENV_W * ENV_H; i++)
        sky[i] = 0.25f;
    rt_env_grid env = {sky, ENV_W, ENV_H};
    rt_lights  *l = lights_make(&t, &env);

    double ext[3], r2 = 0;
    for (int c = 0; c < 3; c++) {
        ext[c] = (double)t.s.bounds_max[c] - t.s.bounds_min[c];
        r2 += 0.25 * ext[c] * ext[c];
    }
    enum { POINT, SPOT, DIRECTIONAL, SINGLE, BOTH, SKY, KINDS };
    double pw[KINDS] = {4 * PI,       2 * PI * (1 - cos(0.4)) * 2, PI * r2 * 0.5, PI * 0.5,
                        2 * PI * 0.5, PI * r2 * PI * 0.25};
    double total = 0;
    for (int k = 0; k < KINDS; k++)
        total += pw[k];
    enum { N = 200000 };
    rng r = {4242};
    int n_of[KINDS] = {0}, failed = 0;
    for (int n = 0; n < N && rt_test_failures <= 20; n++) {
        float           u[2] = {rng_float(&r), rng_float(&r)};
        rt_light_sample o;
        if (!rt_lights_sample(l, (v3){0, 0, 0}, (n + rng_float(&r)) / N, u, &o)) {
            failed++;
            continue;
        }
        int k;
        if (o.kind == RT_SAMPLE_ENV)
            k = SKY;
        else if (o.kind == RT_SAMPLE_TRIANGLE)
            k = o.prim == single ? SINGLE : o.prim == both ? BOTH : -1;
        else
            k = isinf(o.dist) ? DIRECTIONAL : o.wi.x > 0.99f ? POINT : o.wi.y > 0.99f ? SPOT : -1;
        REQUIRE(k >= 0);
        n_of[k]++;
        if (o.kind == RT_SAMPLE_DELTA)
            CHECK_REL(o.pdf, pw[k] / total, 1e-4);
    }
    CHECK_EQ_INT(failed, 0);
    for (int k = 0; k < KINDS; k++)
        CHECK_REL((double)n_of[k] / N, pw[k] / total, 0.02);
    rt_lights_destroy(l);
}

/* The default light stands in for missing lights: an environment replaces
 * it; without one it is used. A directional light from the file (not the
 * default) is kept next to an environment. */
static void
case_default_light(const char *arg)
{
    (void)arg;
    float lum[ENV_W * ENV_H];
    env_fill(lum);
    rt_env_grid env = {lum, ENV_W, ENV_H};
    test_scene  t;
    scene_init(&t);
    uint32_t dull = scene_material(&t, 0, 0, 0, false);
    scene_tri(&t, (v3){-1, 0, -1}, (v3){1, 0, -1}, (v3){0, 0, 1}, dull);
    rt_light *dl = scene_light(&t, RT_LIGHT_DIRECTIONAL, 3, 3, 3);
    dl->direction[0] = 0, dl->direction[1] = -1, dl->direction[2] = 0;
    t.s.default_light = true;

    enum { N = 20000 };
    rng r = {5};
    /* with the environment: only environment samples */
    rt_lights *l = lights_make(&t, &env);
    int        n_env = 0, n_delta = 0;
    for (int n = 0; n < N; n++) {
        float           u[2] = {rng_float(&r), rng_float(&r)};
        rt_light_sample o;
        if (!rt_lights_sample(l, (v3){0, 1, 0}, (n + 0.5f) / N, u, &o))
            continue;
        n_env += o.kind == RT_SAMPLE_ENV;
        n_delta += o.kind == RT_SAMPLE_DELTA;
    }
    CHECK_EQ_INT(n_delta, 0);
    CHECK(n_env > N - 10);
    CHECK_REL(env_pdf_integral(l), 1.0, 0.02); /* the environment is chosen always */
    rt_lights_destroy(l);

    /* without: the default light */
    l = lights_make(&t, NULL);
    CHECK(!rt_lights_empty(l));
    n_env = n_delta = 0;
    for (int n = 0; n < N; n++) {
        float           u[2] = {rng_float(&r), rng_float(&r)};
        rt_light_sample o;
        if (!rt_lights_sample(l, (v3){0, 1, 0}, (n + 0.5f) / N, u, &o))
            continue;
        n_delta += o.kind == RT_SAMPLE_DELTA && isinf(o.dist) && o.wi.y > 0.999f;
        n_env += o.kind == RT_SAMPLE_ENV;
    }
    CHECK_EQ_INT(n_delta, N);
    CHECK_EQ_INT(n_env, 0);
    CHECK_EQ_INT(rt_lights_pdf_env(l, (v3){0, 1, 0}) == 0, 1);
    rt_lights_destroy(l);

    /* the same light from the file, next to the environment: both used */
    t.s.default_light = false;
    l = lights_make(&t, &env);
    n_env = n_delta = 0;
    for (int n = 0; n < N; n++) {
        float           u[2] = {rng_float(&r), rng_float(&r)};
        rt_light_sample o;
        if (!rt_lights_sample(l, (v3){0, 1, 0}, (n + 0.5f) / N, u, &o))
            continue;
        n_env += o.kind == RT_SAMPLE_ENV;
        n_delta += o.kind == RT_SAMPLE_DELTA;
    }
    CHECK(n_env > 0);
    CHECK(n_delta > 0);
    rt_lights_destroy(l);
}

/* Nothing to sample: no lights, no emission, no environment. */
static void
case_empty(const char *arg)
{
    (void)arg;
    test_scene t;
    scene_init(&t);
    uint32_t dull = scene_material(&t, 0, 0, 0, true);
    scene_tri(&t, (v3){0, 0, 0}, (v3){1, 0, 0}, (v3){0, 1, 0}, dull);
    const float     u[2] = {0.5f, 0.5f};
    rt_light_sample o;

    rt_lights *l = lights_make(&t, NULL);
    CHECK(rt_lights_empty(l));
    for (int k = 0; k < 8; k++)
        CHECK(!rt_lights_sample(l, (v3){0.2f, 0.2f, 1}, k / 8.0f, u, &o));
    CHECK_EQ_INT(rt_lights_pdf_triangle(l, 0, (v3){0.2f, 0.2f, 1}, (v3){0.2f, 0.2f, 0}) == 0, 1);
    CHECK_EQ_INT(rt_lights_pdf_env(l, (v3){0, 1, 0}) == 0, 1);
    rt_lights_destroy(l);

    /* a grid with no cells is no environment */
    rt_env_grid none = {u, 0, 0};
    l = lights_make(&t, &none);
    CHECK(rt_lights_empty(l));
    CHECK(!rt_lights_sample(l, (v3){0.2f, 0.2f, 1}, 0.5f, u, &o));
    rt_lights_destroy(l);

    /* no triangles at all */
    test_scene bare;
    scene_init(&bare);
    l = lights_make(&bare, NULL);
    CHECK(rt_lights_empty(l));
    CHECK(!rt_lights_sample(l, (v3){0, 0, 0}, 0.5f, u, &o));
    rt_lights_destroy(l);
    rt_lights_destroy(NULL);
}

/* A black environment (every cell 0, "any non-negative values") is a light
 * with no power: created fine, never chosen, density 0. */
static void
case_env_black(const char *arg)
{
    (void)arg;
    float       lum[ENV_W * ENV_H] = {0};
    rt_env_grid env = {lum, ENV_W, ENV_H};
    test_scene  t;
    scene_init(&t);
    const float     u[2] = {0.5f, 0.5f};
    rt_light_sample o;

    rt_lights *l = lights_make(&t, &env); /* alone: nothing to sample */
    CHECK(rt_lights_empty(l));
    CHECK(!rt_lights_sample(l, (v3){0, 0, 0}, 0.5f, u, &o));
    CHECK_EQ_INT(rt_lights_pdf_env(l, (v3){0, 1, 0}) == 0, 1);
    rt_lights_destroy(l);

    /* next to a point light: only the point light */
    rt_light *pl = scene_light(&t, RT_LIGHT_POINT, 1, 1, 1);
    pl->position[1] = 2;
    l = lights_make(&t, &env);
    CHECK(!rt_lights_empty(l));
    for (int k = 0; k < 16; k++) {
        REQUIRE(rt_lights_sample(l, (v3){0, 0, 0}, k / 16.0f, u, &o));
        CHECK_EQ_INT(o.kind, RT_SAMPLE_DELTA);
        CHECK_REL(o.pdf, 1, 1e-6);
    }
    CHECK_EQ_INT(rt_lights_pdf_env(l, (v3){1, 0, 0}) == 0, 1);
    rt_lights_destroy(l);
}

/* From a surface (rt_lights_sample_at): an environment sample comes half
 * from the grid, half from a cosine lobe about the normal; from the lobe
 * alone when the grid is uniform. Each sample's pdf is the mixture's
 * (rt_lights_pdf_env_at), it integrates to 1, and under a nearly even sky
 * a quarter of the samples (half the grid's) fall behind the surface
 * instead of a half; under a uniform one, none. And the draws follow that
 * density: the share of them in each band of cos(wi, n) is the density's
 * integral over the band (a sampler that drew otherwise, but said the
 * mixture's pdf, would pass every other check here). */
enum { ENV_BANDS = 10 };

static int
cos_band(v3 wi, v3 n)
{
    int b = (int)((v3_dot(wi, n) + 1) * 0.5f * ENV_BANDS);
    return b < 0 ? 0 : b < ENV_BANDS ? b : ENV_BANDS - 1;
}

static void
env_surface(float corner, double behind_share)
{
    float lum[ENV_W * ENV_H];
    for (int i = 0; i < ENV_W * ENV_H; i++)
        lum[i] = 1;
    lum[0] = corner;
    rt_env_grid env = {lum, ENV_W, ENV_H};
    test_scene  t;
    scene_init(&t);
    rt_lights *l = lights_make(&t, &env);
    v3         n = v3_norm((v3){0.3f, 0.8f, -0.5f});
    enum { N = 200000 };
    rng r = {0x9e3779b97f4a7c15u};
    int ok = 0, behind = 0, bad_pdf = 0, drawn[ENV_BANDS] = {0};
    for (int k = 0; k < N; k++) {
        float           u[2] = {rng_float(&r), rng_float(&r)};
        rt_light_sample o;
        if (!rt_lights_sample_at(l, (v3){0, 0, 0}, n, rng_float(&r), u, &o))
            continue;
        ok++;
        behind += v3_dot(o.wi, n) <= 0;
        drawn[cos_band(o.wi, n)]++;
        float want = rt_lights_pdf_env_at(l, o.wi, n);
        bad_pdf += fabsf(o.pdf - want) > 1e-3f * want;
    }
    CHECK(ok > N * 0.99);
    CHECK_EQ_INT(bad_pdf, 0);
    double frac = (double)behind / ok;
    CHECK_ABS(frac, behind_share, 0.01); /* the share of samples behind the surface */
    /* The mixture's density over the sphere: 1. */
    enum { NA = 512, NB = 512 };
    rng    q = {0x2545f4914f6cdd1du};
    double sum = 0, band[ENV_BANDS] = {0};
    for (int a = 0; a < NA; a++)
        for (int b = 0; b < NB; b++) {
            double d[3];
            sphere_dir(a, b, NA, NB, &q, d);
            v3     wi = {(float)d[0], (float)d[1], (float)d[2]};
            double pdf = rt_lights_pdf_env_at(l, wi, n);
            sum += pdf;
            band[cos_band(wi, n)] += pdf;
        }
    double integral = 4 * PI * sum / ((double)NA * NB);
    CHECK_ABS(integral, 1.0, 0.02);
    for (int b = 0; b < ENV_BANDS; b++)
        CHECK_ABS((double)drawn[b] / ok, 4 * PI * band[b] / ((double)NA * NB), 0.006);
    rt_lights_destroy(l);
}

static void
case_env_surface(const char *arg)
{
    (void)arg;
    env_surface(1.01f, 0.25); /* not uniform: the mixture */
    env_surface(1, 0);        /* uniform: the lobe alone */
}

/* rt_env_grid_read: a 64x32 map, dim but for one bright texel, read into a
 * grid of the map's size. Each cell must be the largest of the map's
 * luminance at its corners and centre, filtered at the cell's size (looked
 * up here one by one, five per cell, as the contract says), so the bright
 * texel's cell and the cells sharing its corners are bright, and a far cell
 * is dim. A missing map gives NULL. */
static void
case_env_grid(const char *arg)
{
    (void)arg;
    enum { W = 64, H = 32, BX = 40, BY = 10 };
    tex_image img;
    char      err[TEX_ERR_LEN];
    REQUIRE(tex_image_alloc(&img, W, H, 3, TEX_TYPE_FLOAT, err) == TEX_OK);
    float *px = img.pixels;
    for (size_t i = 0; i < (size_t)W * H * 3; i++)
        px[i] = 0.1f;
    for (int c = 0; c < 3; c++)
        px[((size_t)BY * W + BX) * 3 + c] = 50;
    const char *path = tex_test_path("env.exr");
    REQUIRE(tex_exr_write_scanline(path, &img, NULL, 0, err) == TEX_OK);
    tex_image_free(&img);

    tex_system *ts;
    tex_thread *tc;
    REQUIRE(tex_system_create(NULL, &ts, NULL) == TEX_OK);
    REQUIRE(tex_thread_create(ts, &tc) == TEX_OK);
    rt_env_grid g = {0};
    float      *lum = rt_env_grid_read(ts, ustr_intern_cstr(path), &g);
    REQUIRE(lum && g.lum == lum);
    CHECK_EQ_INT(g.w, W);
    CHECK_EQ_INT(g.h, H);
    tex_opts           o = {.filter = TEX_FILTER_TRILINEAR, .twrap = TEX_WRAP_CLAMP};
    tex_derivs         d = {1.0f / W, 0, 0, 1.0f / H};
    static const float at[5][2] = {{0, 0}, {1, 0}, {0, 1}, {1, 1}, {0.5f, 0.5f}};
    int                bad = 0;
    for (int j = 0; j < H; j++) {
        for (int i = 0; i < W; i++) {
            float most = 0, rgba[4];
            for (int k = 0; k < 5; k++) {
                tex_lookup(ts, tc, ustr_intern_cstr(path), (i + at[k][0]) / W, (j + at[k][1]) / H,
                           &d, &o, rgba);
                most = fmaxf(most, rt_luminance(rgba));
            }
            bad += lum[j * W + i] != most;
        }
    }
    CHECK_EQ_INT(bad, 0);
    float bright = lum[BY * W + BX];
    CHECK(bright > 1);
    CHECK(lum[(BY - 1) * W + BX - 1] > 1 && lum[(BY + 1) * W + BX + 1] > 1);
    CHECK_ABS(lum[25 * W + 5], 0.1, 1e-3);
    free(lum);

    tex_test_stderr_capture(); /* the missing map is reported */
    CHECK(rt_env_grid_read(ts, ustr_intern_cstr(tex_test_path("none.exr")), &g) == NULL);
    CHECK(tex_test_stderr_release() > 0);
    tex_thread_destroy(tc);
    tex_system_destroy(ts);
}

static const rt_test_case cases[] = {
    {"env_mapping", case_env_mapping},     {"env_pdf", case_env_pdf},
    {"env_surface", case_env_surface},     {"env_mixed", case_env_mixed},
    {"env_black", case_env_black},         {"triangle", case_triangle},
    {"selection", case_selection},         {"spot", case_spot},
    {"directional", case_directional},     {"weights", case_weights},
    {"default_light", case_default_light}, {"empty", case_empty},
    {"env_grid", case_env_grid},           {NULL, NULL},
};

int
main(int argc, char **argv)
{
    return rt_test_main(cases, argc, argv);
}
