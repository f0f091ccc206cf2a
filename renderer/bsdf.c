/* The metallic-roughness BSDF (see rt_bsdf.h for the model). */
#define _POSIX_C_SOURCE 200809L
#include "rt_bsdf.h"

#include <stdint.h>
#include <stdio.h>

#define DIELECTRIC_F0 0.04f /* glTF: ior 1.5 */
#define ALPHA_MIN     1e-3f

/* ---- GGX ---- */

/* k = sin^2 + a2 cos^2 of h, from h.x and h.y rather than as
 * 1 - (1 - a2) cos^2: near the normal that difference cancels in float,
 * which put errors of tens of percent in D when alpha^2 is near 1e-6. */
static float
ggx_d(float alpha, v3 h)
{
    float a2 = alpha * alpha, k = h.x * h.x + h.y * h.y + a2 * h.z * h.z;
    return a2 / (RT_PI_F * k * k);
}

static float
smith_lambda(float alpha, v3 w)
{
    float t2 = (w.x * w.x + w.y * w.y) / (w.z * w.z); /* tan^2 */
    return 0.5f * (sqrtf(1 + alpha * alpha * t2) - 1);
}

static float
schlick_weight(float c)
{
    float m = 1 - c;
    m = m < 0 ? 0 : m;
    return m * m * m * m * m;
}

/* A visible normal for wo (Heitz, "Sampling the GGX Distribution of
 * Visible Normals", JCGT 2018): a point on the unit disk, warped onto the
 * projected hemisphere seen from the stretched wo, then unstretched. */
static v3
ggx_sample_visible(float alpha, v3 wo, const float u[2])
{
    v3    vh = v3_norm((v3){alpha * wo.x, alpha * wo.y, wo.z});
    float len2 = vh.x * vh.x + vh.y * vh.y;
    v3    t1 = len2 > 0 ? v3_mul((v3){-vh.y, vh.x, 0}, 1 / sqrtf(len2)) : (v3){1, 0, 0};
    v3    t2 = v3_cross(vh, t1);
    float r = sqrtf(u[0]), phi = 2 * RT_PI_F * u[1];
    float p1 = r * cosf(phi), p2 = r * sinf(phi), s = 0.5f * (1 + vh.z);
    p2 = (1 - s) * sqrtf(1 - p1 * p1) + s * p2;
    float pz = 1 - p1 * p1 - p2 * p2;
    v3    nh = v3_add(v3_add(v3_mul(t1, p1), v3_mul(t2, p2)), v3_mul(vh, sqrtf(pz > 0 ? pz : 0)));
    return v3_norm((v3){alpha * nh.x, alpha * nh.y, nh.z > 0 ? nh.z : 0});
}

/* ---- the multiple-scattering tables (Kulla and Conty 2017) ----
 *
 * For F = 1: E(mu, r), the albedo of the single-scattering lobe at
 * cos(wo) = mu and roughness r, split as A + B where B weighs each sample
 * by Schlick's (1 - cos)^5, so that with Schlick's Fresnel the albedo is
 * F0 * A + B; and E_avg(r) = 2 * integral of E(mu) mu dmu. */
enum { TABLE = 32, TABLE_SAMPLES = 64 };
#ifdef RT_BSDF_TABLES_GENERATOR
/* The build's bsdf-tables program integrates them (0.4 s) and writes them
 * out as C; the renderer compiles them in (bsdf_tables.inc), so no render
 * pays for them. */
static float table_a[TABLE][TABLE], table_b[TABLE][TABLE], table_avg[TABLE];
#else
#include "bsdf_tables.inc"
#endif

#ifdef RT_BSDF_TABLES_GENERATOR
/* The single-scattering lobe with F = 1, times cos(wi), over the pdf of
 * visible-normal sampling: G2 / G1(wo). What the tables integrate. */
static float
ggx_weight(float alpha, v3 wo, v3 wi)
{
    float lo = smith_lambda(alpha, wo), li = smith_lambda(alpha, wi);
    return (1 + lo) / (1 + lo + li);
}

static float
table_alpha(int j)
{
    float r = (float)j / (TABLE - 1);
    return r * r > ALPHA_MIN ? r * r : ALPHA_MIN;
}

static void
tables_build(void)
{
    for (int j = 0; j < TABLE; j++) {
        float alpha = table_alpha(j), avg = 0;
        for (int i = 0; i < TABLE; i++) {
            float  mu = ((float)i + 0.5f) / TABLE;
            v3     wo = {sqrtf(1 - mu * mu), 0, mu};
            double a = 0, b = 0;
            for (int y = 0; y < TABLE_SAMPLES; y++) {
                for (int x = 0; x < TABLE_SAMPLES; x++) {
                    float u[2] = {((float)x + 0.5f) / TABLE_SAMPLES,
                                  ((float)y + 0.5f) / TABLE_SAMPLES};
                    v3    h = ggx_sample_visible(alpha, wo, u);
                    float c = v3_dot(wo, h);
                    v3    wi = v3_sub(v3_mul(h, 2 * c), wo);
                    if (wi.z <= 0)
                        continue;
                    float w = ggx_weight(alpha, wo, wi), s = schlick_weight(c);
                    a += w * (1 - s);
                    b += w * s;
                }
            }
            table_a[j][i] = (float)(a / (TABLE_SAMPLES * TABLE_SAMPLES));
            table_b[j][i] = (float)(b / (TABLE_SAMPLES * TABLE_SAMPLES));
            avg += (table_a[j][i] + table_b[j][i]) * mu;
        }
        table_avg[j] = 2 * avg / TABLE;
    }
}

/* Writes the tables as C definitions of table_a, table_b and table_avg. */
bool
rt__bsdf_tables_write(FILE *f)
{
    tables_build();
    const char *names[2] = {"table_a", "table_b"};
    const float(*tabs[2])[TABLE] = {table_a, table_b};
    fprintf(f, "/* Written by bsdf-tables (renderer/bsdf.c) at build time. */\n");
    for (int t = 0; t < 2; t++) {
        fprintf(f, "static const float %s[%d][%d] = {\n", names[t], TABLE, TABLE);
        for (int j = 0; j < TABLE; j++) {
            fputs("    {", f);
            for (int i = 0; i < TABLE; i++)
                fprintf(f, "%.9ef%s", (double)tabs[t][j][i], i + 1 < TABLE ? ", " : "");
            fputs("},\n", f);
        }
        fputs("};\n", f);
    }
    fprintf(f, "static const float table_avg[%d] = {", TABLE);
    for (int j = 0; j < TABLE; j++)
        fprintf(f, "%.9ef%s", (double)table_avg[j], j + 1 < TABLE ? ", " : "");
    fputs("};\n", f);
    return !ferror(f);
}
#endif

/* Linear interpolation of a table row pair at roughness r, cos mu. */
static float
table_at(const float t[TABLE][TABLE], float r, float mu)
{
    float fj = r * (TABLE - 1), fi = mu * TABLE - 0.5f;
    fj = fj < 0 ? 0 : fj > TABLE - 1 ? TABLE - 1 : fj;
    fi = fi < 0 ? 0 : fi > TABLE - 1 ? TABLE - 1 : fi;
    int   j = (int)fj, i = (int)fi;
    int   j1 = j + 1 < TABLE ? j + 1 : j, i1 = i + 1 < TABLE ? i + 1 : i;
    float wj = fj - (float)j, wi = fi - (float)i;
    float lo = t[j][i] + (t[j][i1] - t[j][i]) * wi, hi = t[j1][i] + (t[j1][i1] - t[j1][i]) * wi;
    return lo + (hi - lo) * wj;
}

static float
avg_at(float r)
{
    float fj = r * (TABLE - 1);
    fj = fj < 0 ? 0 : fj > TABLE - 1 ? TABLE - 1 : fj;
    int j = (int)fj, j1 = j + 1 < TABLE ? j + 1 : j;
    return table_avg[j] + (table_avg[j1] - table_avg[j]) * (fj - (float)j);
}

/* ---- the model ---- */

/* What eval and sample share for one (material, wo). */
typedef struct lobes {
    float alpha;
    float f0_metal[3];    /* F0 of the metal lobe: the base colour */
    float w_metal, w_die; /* weights of the metal and dielectric S lobes */
    float w_diffuse[3];   /* (1 - metallic) (1 - E_d(wo)) base / pi */
    float e_wo, e_avg;    /* E(mu_o) and E_avg for F = 1 */
    float p_spec;         /* probability of sampling visible normals */
} lobes;

static float
lobe_albedo(float f0, float a, float b, float e_wo, float e_avg)
{
    float f_avg = f0 + (1 - f0) / 21;
    float f_ms = e_avg < 1 ? f_avg * f_avg * e_avg / (1 - f_avg * (1 - e_avg)) : 0;
    return f0 * a + b + (1 - e_wo) * f_ms; /* Schlick: F = F0 (1 - s) + s */
}

static void
lobes_setup(const rt_bsdf *m, v3 wo, lobes *l)
{
    float r = m->roughness < 0 ? 0 : m->roughness > 1 ? 1 : m->roughness;
    l->alpha = r * r > ALPHA_MIN ? r * r : ALPHA_MIN;
    float a = table_at(table_a, r, wo.z), b = table_at(table_b, r, wo.z);
    l->e_wo = a + b;
    l->e_avg = avg_at(r);
    float metallic = m->metallic < 0 ? 0 : m->metallic > 1 ? 1 : m->metallic;
    float specular = m->specular < 0 ? 0 : m->specular > 1 ? 1 : m->specular;
    l->w_metal = metallic;
    l->w_die = (1 - metallic) * specular;
    float e_die = specular * lobe_albedo(DIELECTRIC_F0, a, b, l->e_wo, l->e_avg);
    float e_metal[3], spec = 0, diffuse = 0;
    for (int c = 0; c < 3; c++) {
        l->f0_metal[c] = m->base[c];
        e_metal[c] = lobe_albedo(m->base[c], a, b, l->e_wo, l->e_avg);
        l->w_diffuse[c] = (1 - metallic) * (1 - e_die) * m->base[c] / RT_PI_F;
    }
    spec = metallic * rt_luminance(e_metal) + (1 - metallic) * e_die;
    diffuse = (1 - metallic) * (1 - e_die) * rt_luminance(m->base);
    l->p_spec = spec + diffuse > 0 ? spec / (spec + diffuse) : 0.5f;
}

/* The single-scattering part of S(F0) at (wo, wi), half vector h, added
 * to f scaled by w; `grey`: f0[0] for every channel. */
static void
add_specular(const lobes *l, const float f0[3], bool grey, float w, v3 wo, v3 wi, v3 h, float f[3])
{
    if (w <= 0)
        return;
    float s = schlick_weight(v3_dot(wo, h));
    float lo = smith_lambda(l->alpha, wo), li = smith_lambda(l->alpha, wi);
    float ss = ggx_d(l->alpha, h) / (4 * wo.z * wi.z * (1 + lo + li));
    for (int c = 0; c < 3; c++) {
        float fc = grey ? f0[0] : f0[c];
        f[c] += w * (fc + (1 - fc) * s) * ss;
    }
}

/* The multiple-scattering term of S(F0), whose shape does not depend on
 * the half vector: (1 - E(wo)) (1 - E(wi)) / (pi (1 - E_avg)) * F_ms. */
static void
add_multiple(const lobes *l, const float f0[3], bool grey, float w, float e_wi, float f[3])
{
    if (w <= 0 || l->e_avg >= 1)
        return;
    float shape = (1 - l->e_wo) * (1 - e_wi) / (RT_PI_F * (1 - l->e_avg));
    for (int c = 0; c < 3; c++) {
        float fc = grey ? f0[0] : f0[c], f_avg = fc + (1 - fc) / 21;
        float f_ms = f_avg * f_avg * l->e_avg / (1 - f_avg * (1 - l->e_avg));
        f[c] += w * shape * f_ms;
    }
}

static float
pdf_of(const lobes *l, v3 wo, v3 wi, v3 h)
{
    float lo = smith_lambda(l->alpha, wo);
    float visible = ggx_d(l->alpha, h) / (4 * wo.z * (1 + lo)); /* G1 D / (4 cos_o) */
    return l->p_spec * visible + (1 - l->p_spec) * wi.z / RT_PI_F;
}

static bool
eval_with(const rt_bsdf *m, const lobes *l, v3 wo, v3 wi, float f[3], float *pdf)
{
    f[0] = f[1] = f[2] = 0;
    *pdf = 0;
    if (wo.z <= 0 || wi.z <= 0)
        return false;
    v3                 h = v3_norm(v3_add(wo, wi));
    static const float die_f0[3] = {DIELECTRIC_F0, DIELECTRIC_F0, DIELECTRIC_F0};
    add_specular(l, l->f0_metal, false, l->w_metal, wo, wi, h, f);
    add_specular(l, die_f0, true, l->w_die, wo, wi, h, f);
    float r = m->roughness < 0 ? 0 : m->roughness > 1 ? 1 : m->roughness;
    float e_wi = table_at(table_a, r, wi.z) + table_at(table_b, r, wi.z);
    add_multiple(l, l->f0_metal, false, l->w_metal, e_wi, f);
    add_multiple(l, die_f0, true, l->w_die, e_wi, f);
    for (int c = 0; c < 3; c++)
        f[c] += l->w_diffuse[c];
    *pdf = pdf_of(l, wo, wi, h);
    return *pdf > 0;
}

/* No metal and no specular layer: plain Lambert, f = base / pi, sampled
 * by the cosine lobe alone. The general path gives the same bits for such
 * a material (its other lobes weigh 0); this one skips their set-up, the
 * most common material of OBJ scenes. A black base is left to the general
 * path, whose lobe choice differs there. */
bool
rt_bsdf_is_lambert(const rt_bsdf *b)
{
    return b->metallic <= 0 && b->specular <= 0 && rt_luminance(b->base) > 0;
}

static bool
lambert_eval(const rt_bsdf *b, v3 wi, float f[3], float *pdf)
{
    for (int c = 0; c < 3; c++)
        f[c] = b->base[c] / RT_PI_F;
    *pdf = wi.z / RT_PI_F;
    return *pdf > 0;
}

bool
rt_bsdf_eval(const rt_bsdf *b, v3 wo, v3 wi, float f[3], float *pdf)
{
    if (wo.z <= 0 || (rt_bsdf_is_lambert(b) && wi.z <= 0)) {
        f[0] = f[1] = f[2] = 0;
        *pdf = 0;
        return false;
    }
    if (rt_bsdf_is_lambert(b))
        return lambert_eval(b, wi, f, pdf);
    lobes l;
    lobes_setup(b, wo, &l);
    return eval_with(b, &l, wo, wi, f, pdf);
}

bool
rt_bsdf_sample(const rt_bsdf *b, v3 wo, float u_lobe, const float u[2], v3 *wi, float f[3],
               float *pdf)
{
    f[0] = f[1] = f[2] = 0;
    *pdf = 0;
    if (wo.z <= 0)
        return false;
    if (rt_bsdf_is_lambert(b)) {
        *wi = rt_cosine_hemisphere(u);
        return wi->z > 0 && lambert_eval(b, *wi, f, pdf);
    }
    lobes l;
    lobes_setup(b, wo, &l);
    if (u_lobe < l.p_spec) {
        v3 h = ggx_sample_visible(l.alpha, wo, u);
        *wi = v3_sub(v3_mul(h, 2 * v3_dot(wo, h)), wo);
    } else {
        *wi = rt_cosine_hemisphere(u);
    }
    return eval_with(b, &l, wo, *wi, f, pdf);
}

void
rt_bsdf_albedo(const rt_bsdf *b, float cos_o, float out[3])
{
    v3    wo = {sqrtf(1 - cos_o * cos_o), 0, cos_o};
    lobes l;
    lobes_setup(b, wo, &l);
    float r = b->roughness < 0 ? 0 : b->roughness > 1 ? 1 : b->roughness;
    float a = table_at(table_a, r, cos_o), bb = table_at(table_b, r, cos_o);
    for (int c = 0; c < 3; c++) {
        float metal = lobe_albedo(b->base[c], a, bb, l.e_wo, l.e_avg);
        float die = lobe_albedo(DIELECTRIC_F0, a, bb, l.e_wo, l.e_avg);
        out[c] = l.w_metal * metal + l.w_die * die + l.w_diffuse[c] * RT_PI_F;
    }
}
