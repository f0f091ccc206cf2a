/* The glTF metallic-roughness BSDF (reflection only), in a shading
 * point's local frame: z is the shading normal, directions are unit and
 * point away from the surface; wo toward the viewer, wi toward the light.
 *
 *   f = metallic * S(F0 = base)
 *     + (1 - metallic) * (specular * S(F0 = 0.04) + (1 - E_d(wo)) * base / pi)
 *
 * S is GGX (alpha = roughness^2, Smith height-correlated shadowing, Schlick
 * Fresnel) plus Kulla and Conty's multiple-scattering term, so rough metal
 * loses no energy; E_d(wo) is the albedo of the dielectric specular layer,
 * and the diffuse base gets only what that layer leaves. So a white
 * material (base 1) reflects all the light at every roughness and
 * metallic, and with specular 0 the base is plain Lambertian.
 *
 * Sampling: GGX visible normals (Heitz 2018) or the cosine lobe, chosen by
 * their estimated albedos; pdf is the mixture's. Pure functions: any thread.
 * The tables of the multiple-scattering term are integrated at build time
 * (bsdf-tables), to within 0.5% in albedo. */
#ifndef RT_BSDF_H
#define RT_BSDF_H

#include "rt_vec.h"

#include <stdbool.h>

typedef struct rt_bsdf {
    float base[3];   /* linear base colour, [0, 1] */
    float metallic;  /* [0, 1] */
    float roughness; /* [0, 1], perceptual; alpha = roughness^2, at least 1e-3 */
    float specular;  /* weight of the dielectric specular layer, [0, 1]; 1 for glTF */
} rt_bsdf;

/* f(wo, wi) (no cosine) into f, and the pdf with which rt_bsdf_sample()
 * picks wi. Zero, and false, below either horizon. */
bool rt_bsdf_eval(const rt_bsdf *b, v3 wo, v3 wi, float f[3], float *pdf);

/* Draws wi for wo from u_lobe and u (all in [0, 1)); f and pdf as eval's.
 * False when the draw leaves the hemisphere (no contribution). */
bool rt_bsdf_sample(const rt_bsdf *b, v3 wo, float u_lobe, const float u[2], v3 *wi, float f[3],
                    float *pdf);

/* True when b is plain Lambert (no metal, no specular layer, a base that
 * reflects): f = base / pi, and rt_bsdf_sample() draws the cosine lobe
 * alone, with pdf cos / pi, and reads no u_lobe. */
bool rt_bsdf_is_lambert(const rt_bsdf *b);

/* The directional albedo, the integral of f cos over wi, as the tables
 * give it (what the diffuse weighting relies on); for tests. */
void rt_bsdf_albedo(const rt_bsdf *b, float cos_o, float out[3]);

#ifdef RT_BSDF_TABLES_GENERATOR
#include <stdio.h>
/* For the build's bsdf-tables program only: integrates the multiple-
 * scattering tables and writes them as C; false when writing fails. */
bool rt__bsdf_tables_write(FILE *f);
#endif

#endif
