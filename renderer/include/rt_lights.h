/* The lights of a scene, ready to sample from a shading point: the file's
 * punctual lights (point, spot, directional; or the default light), its
 * emissive triangles, and an environment given as a luminance grid. One
 * light is chosen in proportion to its estimated power, then a point or
 * direction on it.
 *
 * Radiance that needs a texture lookup (an emissive triangle's emission
 * texture, the environment map) is not read here: a sample says where, and
 * the caller looks it up by filename like every other texture, so those
 * lookups go through ustring and the texture statistics too. Only the
 * environment's grid is read here, once, by rt_env_grid_read().
 *
 * Built once before a render; read-only afterwards, so any number of
 * threads may sample it. */
#ifndef RT_LIGHTS_H
#define RT_LIGHTS_H

#include "rt_scene.h"
#include "rt_vec.h"
#include "texture.h"

#include <stdbool.h>

typedef struct rt_lights rt_lights; /* opaque */

/* The environment's luminance on a lat-long grid of w x h cells (row 0 at
 * the top, +y up: cell (i, j) covers s in [i/w, (i+1)/w), t likewise, with
 * direction(s, t) as rt_env_direction() gives); any non-negative values, and
 * every cell must be > 0 where the map's radiance can be (take the maximum
 * of its corners). NULL: no environment. */
typedef struct rt_env_grid {
    const float *lum;
    uint32_t     w, h;
} rt_env_grid;

/* Reads the environment map `name` through `ts` into *g: at most 1024x512
 * cells (the map's size when smaller), each the largest luminance of the
 * map at the cell's corners and centre, filtered at the cell's size, and
 * never below 0. Returns the cells (g->lum; free() it), or NULL when the
 * map cannot be read (the texture system reports it; lookups then give the
 * fill) or memory runs out. */
float *rt_env_grid_read(tex_system *ts, ustr name, rt_env_grid *g);

/* Lat-long mapping, +y up: (s, t) in [0, 1)^2, t = 0 straight up. */
v3   rt_env_direction(float s, float t);
void rt_env_coords(v3 dir, float *s, float *t);

/* Builds the lights of `s`; `env` may be NULL. The scene's default light
 * (rt_scene.default_light) is left out when an environment is given: it
 * stands in for missing lights, and the environment is a light. RT_OK or
 * RT_ERR_NOMEM. */
rt_result rt_lights_create(const rt_scene *s, const rt_env_grid *env, rt_lights **out);
void      rt_lights_destroy(rt_lights *l); /* NULL is a no-op */

bool rt_lights_empty(const rt_lights *l); /* nothing to sample */

/* True when the one light is an environment of one radiance everywhere (a
 * uniform sky): rt_lights_sample_at() then draws the cosine lobe about the
 * normal, the density with which a Lambertian BSDF draws its own rays. */
bool rt_lights_sky_only(const rt_lights *l);

typedef enum rt_light_sample_kind {
    RT_SAMPLE_DELTA,    /* point, spot, directional: li holds the radiance */
    RT_SAMPLE_TRIANGLE, /* a point on emissive triangle `prim` at (b1, b2) */
    RT_SAMPLE_ENV,      /* a direction toward the environment */
} rt_light_sample_kind;

typedef struct rt_light_sample {
    rt_light_sample_kind kind;
    v3                   wi;   /* unit, from the shading point toward the light */
    float                dist; /* to the light's point; INFINITY: directional, environment */
    /* Solid-angle density of this direction, the choice of light included;
     * for a delta light, the probability of choosing it. */
    float    pdf;
    float    li[3];  /* RT_SAMPLE_DELTA: incident radiance (intensity over d^2, falloff) */
    uint32_t prim;   /* RT_SAMPLE_TRIANGLE */
    float    b1, b2; /* RT_SAMPLE_TRIANGLE: barycentrics of the point */
} rt_light_sample;

/* One sample seen from point p, from u_pick and u in [0, 1). False: no
 * light, or the point is behind the chosen emitter (no contribution). */
bool rt_lights_sample(const rt_lights *l, v3 p, float u_pick, const float u[2],
                      rt_light_sample *out);

/* The solid-angle density with which rt_lights_sample() from p picks the
 * point q on emissive triangle `prim` (0 if it is not a light, or q is
 * behind it); and the density of direction wi toward the environment. For
 * weighing a BSDF-sampled hit of a light (multiple importance sampling). */
float rt_lights_pdf_triangle(const rt_lights *l, uint32_t prim, v3 p, v3 q);
float rt_lights_pdf_env(const rt_lights *l, v3 wi);

/* As rt_lights_sample() and rt_lights_pdf_env(), from a point whose unit
 * normal is n: an environment sample is then drawn half from the luminance
 * grid and half from a cosine lobe about n (u_pick's place within the
 * environment's share decides), and its density is that mixture's; from
 * the cosine lobe alone when every cell of the grid is equal (a uniform
 * sky, where the lobe is the integrand). What a path tracer wants at a
 * surface: a dim, even sky is mostly noise when half of its samples land
 * behind the surface. n = 0: as without. */
bool  rt_lights_sample_at(const rt_lights *l, v3 p, v3 n, float u_pick, const float u[2],
                          rt_light_sample *out);
float rt_lights_pdf_env_at(const rt_lights *l, v3 wi, v3 n);

#endif
