/* Private to texture/ and to texture-bench's floor (tools/bench/texture_floor.c):
 * the sampler's arithmetic that anything giving the same bits as a lookup
 * must repeat exactly. The floor filters the same texels from whole arrays
 * and is checked bit for bit against tex_lookup(), so it takes the level
 * choice, the footprint, the tap's coordinates and the decoding from here,
 * not from copies that could drift. Kept apart from texture_internal.h so
 * that the floor needs none of the cache's structures for it. */
#ifndef TEX_SAMPLE_INTERNAL_H
#define TEX_SAMPLE_INTERNAL_H

#include "tex_srgb_internal.h"
#include "texture.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

/* An 8-bit sample as linear light, as stored / 255 (alpha, and data); from
 * sRGB (colour channels of sRGB files) it is tex__srgb_u8
 * (tex_srgb_internal.h). Set by tex__sample_init(), which
 * tex_system_create() calls; read-only after. */
extern float tex__unorm_u8[256];
/* The CPU converts halves in hardware (F16C); set with the tables. */
extern bool tex__have_f16c;

/* A float coordinate as a safe integer: huge and NaN values stay finite. */
static inline int64_t
tex__floor_to_int(float v)
{
    if (!(v > -1e12f))
        return v != v ? 0 : (int64_t)-1e12;
    if (v > 1e12f)
        return (int64_t)1e12;
    /* floorf() without the call (x86-64's baseline has no rounding
     * instruction): truncate, then step down where that rounded up. */
    int64_t i = (int64_t)v;
    return i - ((float)i > v);
}

/* A bilinear tap's first texel along an axis of n texels at coordinate s
 * (texel centres at half-integers), and in *frac the weight of the next. */
static inline int64_t
tex__tap_origin(float s, uint32_t n, float *frac)
{
    float   x = s * (float)n - 0.5f;
    int64_t x0 = tex__floor_to_int(x);
    *frac = x - (float)x0;
    if (!(*frac >= 0 && *frac <= 1))
        *frac = 0; /* far outside the image, where float has no fraction left */
    return x0;
}

/* log2(x) to within 1e-5 for normal x: the exponent from the bits, and
 * for the mantissa m in [1, 2), (m - 1) q(m - 1) with q of degree 6
 * (Chebyshev coefficients of log2(1 + t) / t turned into powers), so a
 * power of two comes out exact and a footprint of 2^k texels picks level k
 * alone. Anything else (zero, subnormal, infinite, NaN, negative) goes to
 * libm, whose log2f showed in the profile of every textured render. */
static inline float
tex__log2_fast(float x)
{
    if (!(x >= 0x1p-126f && x <= 0x1.fffffep127f))
        return log2f(x);
    uint32_t b;
    float    m;
    memcpy(&b, &x, sizeof b);
    int e = (int)(b >> 23) - 127;
    b = (b & 0x7fffffu) | 0x3f800000u;
    memcpy(&m, &b, sizeof m);
    /* q in Estrin's order, pairs of terms then powers of t^2: the level
     * waits on this, and Horner's chain of six dependent multiply-adds was
     * half of a lookup's own time outside the taps (perf). Same error:
     * 5.2e-6 at most, checked against double log2 on every 97th float. */
    float t = m - 1, t2 = t * t, t4 = t2 * t2;
    float p01 = 1.442693257e+00f - 7.211627342e-01f * t,
          p23 = 4.777059309e-01f - 3.392477733e-01f * t,
          p45 = 2.155885329e-01f - 9.606624955e-02f * t;
    float q = (p01 + t2 * p23) + t4 * (p45 + t2 * 2.049034613e-02f);
    return (float)e + t * q;
}

/* The footprint's axes in level-0 texels of a width x height image: the
 * longer in *major, the shorter in *minor. True when the x derivatives are
 * the longer. No derivatives: a point. */
static inline bool
tex__footprint(float width, float height, const tex_derivs *d, float *major, float *minor)
{
    float ax = d ? d->dsdx * width : 0, ay = d ? d->dtdx * height : 0;
    float bx = d ? d->dsdy * width : 0, by = d ? d->dtdy * height : 0;
    float la = sqrtf(ax * ax + ay * ay), lb = sqrtf(bx * bx + by * by);
    *major = la > lb ? la : lb, *minor = la > lb ? lb : la;
    return la > lb;
}

/* The level nearest `lod` among nlevels (closest and bilinear). */
static inline uint32_t
tex__nearest_level(uint32_t nlevels, float lod)
{
    if (!(lod > 0))
        return 0;
    float l = floorf(lod + 0.5f);
    return l >= (float)(nlevels - 1) ? nlevels - 1 : (uint32_t)l;
}

/* Trilinear's finer level for `lod` among nlevels, and in *w the weight of
 * the next one up (0: that level alone). */
static inline uint32_t
tex__trilinear_level(uint32_t nlevels, float lod, float *w)
{
    uint32_t last = nlevels - 1;
    lod = !(lod > 0) ? 0 : lod > (float)last ? (float)last : lod; /* NaN: 0 */
    uint32_t l0 = (uint32_t)lod;
    *w = lod - (float)l0;
    return l0;
}

/* binary16 to float without branches for normal and subnormal values: the
 * exponent is rebiased by a multiply, which also normalises subnormals. */
static inline float
tex__half_decode(uint16_t h)
{
    uint32_t bits = (uint32_t)(h & 0x7fff) << 13, sign = (uint32_t)(h & 0x8000) << 16;
    float    f;
    memcpy(&f, &bits, sizeof f);
    f *= 0x1p112f;
    if ((h & 0x7c00) == 0x7c00) /* inf, NaN */
        return tex_half_to_float(h);
    memcpy(&bits, &f, sizeof bits);
    bits |= sign;
    memcpy(&f, &bits, sizeof f);
    return f;
}

#if defined(__x86_64__)
/* The four halves at p to floats (out of line where the caller is not
 * built for F16C, which not every x86-64 has; call it only where
 * tex__have_f16c). */
__attribute__((target("f16c"))) static inline __m128
tex__halves4(const uint16_t *p)
{
    uint64_t bits;
    memcpy(&bits, p, sizeof bits);
    return _mm_cvtph_ps(_mm_cvtsi64_si128((long long)bits));
}

/* Up to four halves to floats. */
__attribute__((target("f16c"))) static inline void
tex__halves_f16c(const uint16_t *p, uint32_t n, float v[4])
{
    uint16_t h[4] = {0}; /* a copy: reading 4 past a tile's last texel could overrun */
    memcpy(h, p, n * sizeof *p);
    _mm_storeu_ps(v, tex__halves4(h));
}
#endif

/* n (up to four) halves at p to floats in v, in hardware where it can:
 * F16C converts exactly, as tex__half_decode() does. */
static inline void
tex__halves(const uint16_t *p, uint32_t n, float v[4])
{
#if defined(__x86_64__)
    if (tex__have_f16c) {
        tex__halves_f16c(p, n, v);
        return;
    }
#endif
    for (uint32_t c = 0; c < n; c++)
        v[c] = tex__half_decode(p[c]);
}

/* One channel's bilinear blend of 8-bit texels p[0], p[nc] (right), p[row]
 * (below) and p[row + nc], decoded by `lut`. */
static inline float
tex__blend_u8(const float *lut, const uint8_t *p, size_t nc, size_t row, float fx, float fy)
{
    float a = lut[p[0]], b = lut[p[nc]], d = lut[p[row]], e = lut[p[row + nc]];
    float top = a + (b - a) * fx, bottom = d + (e - d) * fx;
    return top + (bottom - top) * fy;
}

/* The fast bilinear tap on 8-bit texels, the usual texture: per channel,
 * four bytes decoded by table and blended, with no RGBA temporaries, one
 * case per channel count so that nothing is decided per channel. Its
 * arithmetic is the general path's (blending a channel before expanding
 * grey to RGB gives the same bits as after), so both agree exactly.
 * Texel (x0, y0) at p, its right neighbour nc samples on, the row below
 * `row` samples on. colour: the table of colour channels (tex__srgb_u8
 * for sRGB files, else tex__unorm_u8; alpha is never sRGB); fill_a: the
 * alpha of a file without one. */
static inline __attribute__((always_inline)) void
tex__bilerp_u8(const float *colour, uint32_t nc, float fill_a, const uint8_t *p, size_t row,
               float fx, float fy, float rgba[4])
{
    switch (nc) {
    case 1:
        rgba[0] = rgba[1] = rgba[2] = tex__blend_u8(colour, p, 1, row, fx, fy);
        rgba[3] = fill_a;
        return;
    case 2:
        rgba[0] = rgba[1] = rgba[2] = tex__blend_u8(colour, p, 2, row, fx, fy);
        rgba[3] = tex__blend_u8(tex__unorm_u8, p + 1, 2, row, fx, fy);
        return;
    case 3:
        for (int c = 0; c < 3; c++)
            rgba[c] = tex__blend_u8(colour, p + c, 3, row, fx, fy);
        rgba[3] = fill_a;
        return;
    default:
        for (int c = 0; c < 3; c++)
            rgba[c] = tex__blend_u8(colour, p + c, 4, row, fx, fy);
        rgba[3] = tex__blend_u8(tex__unorm_u8, p + 3, 4, row, fx, fy);
    }
}

#if defined(__x86_64__)
/* The wide tap: a bilinear tap on 16-bit, half or float RGB or RGBA
 * texels whose four lie in one block of memory (a tile; the floor's whole
 * level), a texel's four channels in one register. Each texel is
 * decoded to the values the general path's decoding gives (F16C converts
 * halves exactly, as the scalar decoder does) and blended by the same
 * arithmetic, lane by lane, so the bits are the general path's. An
 * environment map is such a texture, looked up at every path's end and
 * every light sample, and a 16-bit normal or displacement map another; the
 * general path spent a call and a copy on each texel. Grey half and float
 * textures, rarer, take the general path. */

/* A texel's samples as RGBA, read as four samples: what follows a texel in
 * its tile is still the tile's, except after the tap's last texel (k = 3),
 * which an RGB texture reads from one sample early (`early`: its samples
 * in lanes 1-3) so as never to read past a tile's (or a block's) end. */
static inline __attribute__((always_inline)) __m128
tex__texel_lanes(__m128 v, uint32_t nc, bool early, float fill_a)
{
    if (nc == 4)
        return v;
    if (early)
        v = _mm_shuffle_ps(v, v, _MM_SHUFFLE(0, 3, 2, 1)); /* v1 v2 v3 v0 */
    __m128 fill = _mm_set1_ps(fill_a);
    return _mm_shuffle_ps(v, _mm_unpackhi_ps(v, fill), _MM_SHUFFLE(1, 0, 1, 0)); /* v0 v1 v2 a */
}

/* The general path's blend of texels t: (x0, y0), right, below, below right. */
static inline __attribute__((always_inline)) void
tex__blend_lanes(const __m128 t[4], float fx, float fy, float rgba[4])
{
    __m128 x = _mm_set1_ps(fx), y = _mm_set1_ps(fy);
    __m128 top = _mm_add_ps(t[0], _mm_mul_ps(_mm_sub_ps(t[1], t[0]), x));
    __m128 bottom = _mm_add_ps(t[2], _mm_mul_ps(_mm_sub_ps(t[3], t[2]), x));
    _mm_storeu_ps(rgba, _mm_add_ps(top, _mm_mul_ps(_mm_sub_ps(bottom, top), y)));
}

/* A 16-bit texel as RGBA lanes, decoded as the general path decodes it:
 * colour by tex__srgb_u16 where `srgb`, else as stored / 65535, as alpha
 * always is; grey in R, G and B, a missing alpha fill_a. */
static inline __attribute__((always_inline)) __m128
tex__u16_lanes(const uint16_t *p, uint32_t nc, bool srgb, float fill_a)
{
    const float scale = 1.0f / 65535.0f;
    float       a = nc == 2 || nc == 4 ? p[nc - 1] * scale : fill_a;
    uint16_t    r = p[0], g = p[nc <= 2 ? 0 : 1], b = p[nc <= 2 ? 0 : 2];
    if (srgb)
        return _mm_setr_ps(tex__srgb_u16[r], tex__srgb_u16[g], tex__srgb_u16[b], a);
    return _mm_setr_ps(r * scale, g * scale, b * scale, a);
}

/* The wide tap on texels of `type` with nc channels whose first texel is
 * sample i of `texels`, rows `row` samples apart, if there is one (a
 * missing alpha fill_a; srgb: 16-bit colour is sRGB); false, nothing done:
 * the caller's general path. 16-bit texels, grey ones too, are read a
 * sample at a time (a table read each where sRGB); half and float RGB or
 * RGBA ones four samples at a time. */
static inline __attribute__((always_inline)) bool
tex__bilerp_wide(tex_type type, uint32_t nc, bool srgb, float fill_a, const unsigned char *texels,
                 size_t i, size_t row, float fx, float fy, float rgba[4])
{
    bool four = type == TEX_TYPE_FLOAT || (type == TEX_TYPE_HALF && tex__have_f16c);
    if (!(type == TEX_TYPE_U16 || (four && (nc == 3 || nc == 4))))
        return false;
    size_t at[4] = {i, i + nc, i + row, i + row + nc};
    __m128 t[4];
    for (int k = 0; k < 4; k++) {
        if (type == TEX_TYPE_U16) {
            t[k] = tex__u16_lanes((const uint16_t *)(const void *)texels + at[k], nc, srgb, fill_a);
            continue;
        }
        bool   early = nc == 3 && k == 3;
        size_t from = at[k] - early;
        __m128 v = type == TEX_TYPE_FLOAT
                       ? _mm_loadu_ps((const float *)(const void *)texels + from)
                       : tex__halves4((const uint16_t *)(const void *)texels + from);
        t[k] = tex__texel_lanes(v, nc, early, fill_a);
    }
    tex__blend_lanes(t, fx, fy, rgba);
    return true;
}
#endif

#endif
