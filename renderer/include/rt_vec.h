/* Small 3-vector math for the renderer's own modules (not a public API):
 * values, not pointers, so the compiler keeps them in registers. */
#ifndef RT_VEC_H
#define RT_VEC_H

#include <math.h>

#define RT_PI_F 3.14159265358979323846f /* M_PI is XSI, not C11 */

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
static inline float
v3_len(v3 a)
{
    return sqrtf(v3_dot(a, a));
}
static inline v3
v3_norm(v3 a)
{
    float l = v3_len(a);
    return l > 0 ? v3_mul(a, 1 / l) : a;
}
static inline v3
v3_load(const float *p)
{
    return (v3){p[0], p[1], p[2]};
}

static inline void
v3_store(float *p, v3 a)
{
    p[0] = a.x, p[1] = a.y, p[2] = a.z;
}

/* An orthonormal frame (t, b, n) around unit n, continuous except at
 * n.z = -1 (the branchless construction of Duff et al., JCGT 2017). */
static inline void
v3_frame(v3 n, v3 *t, v3 *b)
{
    float s = n.z >= 0 ? 1.0f : -1.0f, a = -1 / (s + n.z), c = n.x * n.y * a;
    *t = (v3){1 + s * n.x * n.x * a, s * c, -s * n.x};
    *b = (v3){c, s + n.y * n.y * a, -n.y};
}

/* w in the frame (t, b, n) as local coordinates, and back. */
static inline v3
v3_to_local(v3 w, v3 t, v3 b, v3 n)
{
    return (v3){v3_dot(w, t), v3_dot(w, b), v3_dot(w, n)};
}
static inline v3
v3_from_local(v3 l, v3 t, v3 b, v3 n)
{
    return v3_add(v3_add(v3_mul(t, l.x), v3_mul(b, l.y)), v3_mul(n, l.z));
}

static inline float
rt_luminance(const float c[3])
{
    return 0.2126f * c[0] + 0.7152f * c[1] + 0.0722f * c[2];
}

/* sin and cos of the angle u turns (2 pi u), u in [0, 1), to within 3e-7:
 * the quarter turn by a switch, the rest by polynomials in the square of
 * the angle (Chebyshev coefficients turned into powers). Samplers call it
 * per bounce, where libm's sincosf, a call with its own range reduction,
 * is more than the job needs. */
static inline void
rt_sincos_turn(float u, float *s, float *c)
{
    float x = 4 * u;
    int   q = x > 0 ? (int)x : 0;
    float f = x - (float)q, f2 = f * f;
    float sn = 1.516751178e-04f, cs = 8.581625433e-04f;
    sn = sn * f2 - 4.674150669e-03f, cs = cs * f2 - 2.081057138e-02f;
    sn = sn * f2 + 7.968992260e-02f, cs = cs * f2 + 2.536507096e-01f;
    sn = sn * f2 - 6.459637604e-01f, cs = cs * f2 - 1.233698208e+00f;
    sn = (sn * f2 + 1.570796320e+00f) * f, cs = cs * f2 + 9.999999532e-01f;
    switch (q & 3) {
    case 0:
        *s = sn, *c = cs;
        return;
    case 1:
        *s = cs, *c = -sn;
        return;
    case 2:
        *s = -sn, *c = -cs;
        return;
    default:
        *s = -cs, *c = sn;
    }
}

/* A cosine-weighted direction about +z from u in [0, 1)^2: a uniform point
 * on the unit disk, lifted to the hemisphere. */
static inline v3
rt_cosine_hemisphere(const float u[2])
{
    float r = sqrtf(u[0]), z = 1 - u[0], s, c;
    rt_sincos_turn(u[1], &s, &c);
    return (v3){r * c, r * s, sqrtf(z > 0 ? z : 0)};
}

#endif
