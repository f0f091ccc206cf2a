/* Sample conversion, and MIP pyramids: each level half the size of the one
 * above (rounded down, at least 1), filtered by exact area coverage, so odd
 * sizes are handled without shifting the image: output pixel i of a row of
 * w takes the input interval [i W / w, (i + 1) W / w), partial pixels
 * weighted by overlap. sRGB-encoded data is filtered in linear light and
 * encoded again. */
#include "tex_image.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* 8-bit sRGB both ways by table: building MIP levels converts every sample
 * twice, and powf() per sample was most of a texture's load time.
 * srgb_up[k] is the linear value where the encoded code rounds up to k + 1
 * (the decode of (k + 0.5) / 255); the code of v is the number of those
 * thresholds v reaches, which is exactly tex_linear_to_srgb(v) * 255
 * rounded. srgb_start[i] is that count at i / SRGB_CELLS: the curve's
 * steepest slope (12.92 * 255 codes per unit, near 0) crosses at most one
 * threshold per cell, so encoding is one table read and at most two
 * comparisons. */
enum { SRGB_CELLS = 4096 };
static float          srgb_down[256], srgb_up[256];
static uint8_t        srgb_start[SRGB_CELLS + 1];
static pthread_once_t srgb_once = PTHREAD_ONCE_INIT;

static void
srgb_tables(void)
{
    for (int k = 0; k < 256; k++)
        srgb_down[k] = tex_srgb_to_linear((float)k / 255.0f);
    for (int k = 0; k < 255; k++)
        srgb_up[k] = tex_srgb_to_linear(((float)k + 0.5f) / 255.0f);
    srgb_up[255] = INFINITY; /* a sentinel: no code above 255 */
    int code = 0;
    for (int i = 0; i <= SRGB_CELLS; i++) {
        while ((float)i / SRGB_CELLS >= srgb_up[code])
            code++;
        srgb_start[i] = (uint8_t)code;
    }
}

/* v in [0, 1]. */
static inline uint8_t
srgb_encode_u8(float v)
{
    int code = srgb_start[(int)(v * SRGB_CELLS)];
    while (v >= srgb_up[code])
        code++;
    return (uint8_t)code;
}

/* One channel sample as linear float. */
static float
sample_get(const tex_image *img, size_t i)
{
    float v;
    switch (img->type) {
    case TEX_TYPE_U8: {
        uint8_t b = ((const uint8_t *)img->pixels)[i];
        return img->srgb ? srgb_down[b] : b / 255.0f;
    }
    case TEX_TYPE_U16:
        v = ((const uint16_t *)img->pixels)[i] / 65535.0f;
        break;
    case TEX_TYPE_HALF:
        return tex_half_to_float(((const uint16_t *)img->pixels)[i]);
    default:
        return ((const float *)img->pixels)[i];
    }
    return img->srgb ? tex_srgb_to_linear(v) : v;
}

static void
sample_put(tex_image *img, size_t i, float v)
{
    if (img->type == TEX_TYPE_FLOAT) {
        ((float *)img->pixels)[i] = v;
        return;
    }
    if (img->type == TEX_TYPE_HALF) {
        ((uint16_t *)img->pixels)[i] = tex_float_to_half(v);
        return;
    }
    v = v > 0 ? (v < 1 ? v : 1) : 0; /* NaN reads as 0 */
    if (img->type == TEX_TYPE_U8) {
        ((uint8_t *)img->pixels)[i] = img->srgb ? srgb_encode_u8(v) : (uint8_t)lrintf(v * 255.0f);
        return;
    }
    if (img->srgb)
        v = tex_linear_to_srgb(v);
    ((uint16_t *)img->pixels)[i] = (uint16_t)lrintf(v * 65535.0f);
}

/* Alpha is a coverage, not a colour: it is never sRGB-decoded. */
static bool
is_alpha(uint32_t nchannels, uint32_t c)
{
    return (nchannels == 2 && c == 1) || (nchannels == 4 && c == 3);
}

tex_result
tex_image_convert(const tex_image *src, tex_type type, bool dst_srgb, tex_image *dst,
                  char err[TEX_ERR_LEN])
{
    pthread_once(&srgb_once, srgb_tables);
    tex_result r = tex_image_alloc(dst, src->width, src->height, src->nchannels, type, err);
    if (r != TEX_OK)
        return r;
    dst->srgb = dst_srgb && (type == TEX_TYPE_U8 || type == TEX_TYPE_U16);
    tex_image src_alpha = *src, dst_alpha = *dst;
    src_alpha.srgb = dst_alpha.srgb = false;
    uint32_t nc = src->nchannels;
    for (size_t i = 0; i < (size_t)src->width * src->height * nc; i++) {
        bool a = is_alpha(nc, (uint32_t)(i % nc));
        sample_put(a ? &dst_alpha : dst, i, sample_get(a ? &src_alpha : src, i));
    }
    return TEX_OK;
}

/* Where each of m outputs of a line resampled from n inputs by area
 * coverage takes its inputs: output i is the sum of weight[start[i] + k] *
 * input[first[i] + k] for k < count[i], over scale (n / m), each weight the
 * input's overlap with the output's interval. With n == 2m (`halve`), it is
 * the float mean of two inputs instead, and there are no arrays. */
typedef struct taps {
    bool      halve;
    double    scale;
    uint32_t *first, *count;
    size_t   *start;
    double   *weight; /* at most n + m: neighbours share at most one input */
} taps;

static void
taps_free(taps *t)
{
    free(t->first), free(t->count), free(t->start), free(t->weight);
}

static bool
taps_make(uint32_t n, uint32_t m, taps *t)
{
    *t = (taps){.halve = n == 2 * m, .scale = (double)n / m};
    if (t->halve)
        return true;
    t->first = malloc(m * sizeof *t->first);
    t->count = malloc(m * sizeof *t->count);
    t->start = malloc(m * sizeof *t->start);
    t->weight = malloc(((size_t)n + m) * sizeof *t->weight);
    if (!t->first || !t->count || !t->start || !t->weight) {
        taps_free(t);
        return false;
    }
    size_t k = 0;
    for (uint32_t i = 0; i < m; i++) {
        double x0 = i * t->scale, x1 = (i + 1) * t->scale;
        t->first[i] = (uint32_t)x0;
        t->start[i] = k;
        for (uint32_t j = (uint32_t)x0; j < n && j < x1; j++) {
            double lo = j > x0 ? j : x0, hi = j + 1 < x1 ? j + 1 : x1;
            t->weight[k++] = hi - lo;
        }
        t->count[i] = (uint32_t)(k - t->start[i]);
    }
    return true;
}

/* One row: n pixels of nc channels in `in` to m in `out`. Inline, and
 * called with nc a constant, so that the sums stay in registers. */
static inline void
taps_row_n(const taps *t, const float *in, float *out, uint32_t m, uint32_t nc)
{
    if (t->halve) {
        for (uint32_t i = 0; i < m; i++)
            for (uint32_t c = 0; c < nc; c++)
                out[i * nc + c] = 0.5f * (in[2 * i * nc + c] + in[(2 * i + 1) * nc + c]);
        return;
    }
    for (uint32_t i = 0; i < m; i++) {
        const float  *p = in + (size_t)t->first[i] * nc;
        const double *w = t->weight + t->start[i];
        double        sum[4] = {0, 0, 0, 0}; /* per channel, in input order */
        for (uint32_t k = 0; k < t->count[i]; k++)
            for (uint32_t c = 0; c < nc; c++)
                sum[c] += w[k] * p[k * nc + c];
        for (uint32_t c = 0; c < nc; c++)
            out[i * nc + c] = (float)(sum[c] / t->scale);
    }
}

static void
taps_row(const taps *t, const float *in, float *out, uint32_t m, uint32_t nc)
{
    switch (nc) {
    case 1:
        taps_row_n(t, in, out, m, 1);
        break;
    case 2:
        taps_row_n(t, in, out, m, 2);
        break;
    case 3:
        taps_row_n(t, in, out, m, 3);
        break;
    default:
        taps_row_n(t, in, out, m, 4);
        break;
    }
}

/* The usual case, 8-bit with even sides: each output the mean of a 2x2
 * block, by table, with no float copies of the image. The arithmetic is the
 * general path's, in its order (rows, then columns), so both give the same
 * bits. */
static void
halve_u8(const tex_image *src, tex_image *dst)
{
    uint32_t       nc = src->nchannels;
    size_t         in_row = (size_t)src->width * nc;
    const uint8_t *in = src->pixels;
    uint8_t       *out = dst->pixels;
    float          unorm[256];
    for (int k = 0; k < 256; k++)
        unorm[k] = (float)k / 255.0f;
    for (uint32_t y = 0; y < dst->height; y++) {
        for (uint32_t x = 0; x < dst->width; x++) {
            const uint8_t *p = in + 2 * (y * in_row + (size_t)x * nc);
            for (uint32_t c = 0; c < nc; c++, p++) {
                bool         srgb = src->srgb && !is_alpha(nc, c);
                const float *lut = srgb ? srgb_down : unorm;
                float        top = 0.5f * (lut[p[0]] + lut[p[nc]]);
                float        bottom = 0.5f * (lut[p[in_row]] + lut[p[in_row + nc]]);
                float        v = 0.5f * (top + bottom);
                *out++ = srgb ? srgb_encode_u8(v) : (uint8_t)lrintf(v * 255.0f);
            }
        }
    }
}

/* Row y of src as linear floats (alpha as stored). */
static void
row_linear(const tex_image *src, const tex_image *alpha_view, const float *unorm, uint32_t y,
           float *line)
{
    uint32_t nc = src->nchannels, n = src->width * nc;
    size_t   at = (size_t)y * n;
    for (uint32_t c = 0; c < nc; c++) {
        const tex_image *img = is_alpha(nc, c) ? alpha_view : src;
        if (img->type == TEX_TYPE_U8) { /* sample_get() by table */
            const uint8_t *in = (const uint8_t *)src->pixels + at;
            const float   *lut = img->srgb ? srgb_down : unorm;
            for (uint32_t i = c; i < n; i += nc)
                line[i] = lut[in[i]];
        } else {
            for (uint32_t i = c; i < n; i += nc)
                line[i] = sample_get(img, at + i);
        }
    }
}

/* Row y of dst from linear floats: sample_put(), with 8-bit rows inline. */
static void
row_put(tex_image *dst, tex_image *alpha_dst, uint32_t y, const float *line)
{
    uint32_t nc = dst->nchannels, n = dst->width * nc;
    size_t   at = (size_t)y * n;
    for (uint32_t c = 0; c < nc; c++) {
        tex_image *img = is_alpha(nc, c) ? alpha_dst : dst;
        if (img->type != TEX_TYPE_U8) {
            for (uint32_t i = c; i < n; i += nc)
                sample_put(img, at + i, line[i]);
            continue;
        }
        uint8_t *out = (uint8_t *)dst->pixels + at;
        for (uint32_t i = c; i < n; i += nc) {
            float v = line[i];
            v = v > 0 ? (v < 1 ? v : 1) : 0; /* NaN reads as 0 */
            out[i] = img->srgb ? srgb_encode_u8(v) : (uint8_t)lrintf(v * 255.0f);
        }
    }
}

/* Rows, then columns, in float lines: each output row is made from the
 * source rows it covers, each resampled along x (kept for the next output
 * row, which may share it) and summed down in doubles, input row by input
 * row. Every output is the same sum, in the same order, as resampling the
 * whole image by rows and then by columns, so the same bits; but nothing
 * image-sized is allocated, and the column pass reads along rows. */
tex_result
tex_image_downsample(const tex_image *src, tex_image *dst, char err[TEX_ERR_LEN])
{
    pthread_once(&srgb_once, srgb_tables);
    uint32_t   w = src->width > 1 ? src->width / 2 : 1, h = src->height > 1 ? src->height / 2 : 1;
    uint32_t   nc = src->nchannels, W = src->width, H = src->height;
    tex_result r = tex_image_alloc(dst, w, h, nc, src->type, err);
    if (r != TEX_OK)
        return r;
    dst->srgb = src->srgb;
    if (src->type == TEX_TYPE_U8 && W == 2 * w && H == 2 * h) {
        halve_u8(src, dst);
        return TEX_OK;
    }
    size_t  nout = (size_t)w * nc;
    taps    tx, ty;
    bool    tx_ok = taps_make(W, w, &tx), ty_ok = taps_make(H, h, &ty);
    float  *line = malloc((size_t)W * nc * sizeof *line);
    float  *row = malloc(2 * nout * sizeof *row); /* two source rows, resampled along x */
    float  *out = malloc(nout * sizeof *out);
    double *acc = malloc(nout * sizeof *acc);
    if (!tx_ok || !ty_ok || !line || !row || !out || !acc) {
        if (tx_ok)
            taps_free(&tx);
        if (ty_ok)
            taps_free(&ty);
        free(line), free(row), free(out), free(acc);
        tex_image_free(dst);
        snprintf(err, TEX_ERR_LEN, "out of memory building MIP levels");
        return TEX_ERR_NOMEM;
    }
    float unorm[256];
    for (int k = 0; k < 256; k++)
        unorm[k] = (float)k / 255.0f;
    tex_image alpha_view = *src, alpha_dst = *dst;
    alpha_view.srgb = alpha_dst.srgb = false;
    uint32_t held = UINT32_MAX; /* the source row in row[0 .. nout) */
    for (uint32_t i = 0; i < h; i++) {
        if (ty.halve) {
            float *a = row, *b = row + nout;
            row_linear(src, &alpha_view, unorm, 2 * i, line);
            taps_row(&tx, line, a, w, nc);
            row_linear(src, &alpha_view, unorm, 2 * i + 1, line);
            taps_row(&tx, line, b, w, nc);
            for (size_t k = 0; k < nout; k++)
                out[k] = 0.5f * (a[k] + b[k]);
        } else {
            const double *wt = ty.weight + ty.start[i];
            for (size_t k = 0; k < nout; k++)
                acc[k] = 0;
            for (uint32_t t = 0; t < ty.count[i]; t++) {
                uint32_t y = ty.first[i] + t;
                if (y != held) {
                    row_linear(src, &alpha_view, unorm, y, line);
                    taps_row(&tx, line, row, w, nc);
                    held = y;
                }
                for (size_t k = 0; k < nout; k++)
                    acc[k] += wt[t] * row[k];
            }
            for (size_t k = 0; k < nout; k++)
                out[k] = (float)(acc[k] / ty.scale);
        }
        row_put(dst, &alpha_dst, i, out);
    }
    taps_free(&tx), taps_free(&ty);
    free(line), free(row), free(out), free(acc);
    return TEX_OK;
}

float
tex_half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
    uint32_t bits;
    if (exp == 0x1f) {
        bits = sign | 0x7f800000u | mant << 13; /* inf, NaN */
    } else if (exp) {
        bits = sign | (exp + 112) << 23 | mant << 13;
    } else if (mant) { /* subnormal: normalise */
        int e = -1;
        do {
            e++;
            mant <<= 1;
        } while (!(mant & 0x400));
        bits = sign | (uint32_t)(112 - e) << 23 | (mant & 0x3ff) << 13;
    } else {
        bits = sign;
    }
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

uint16_t
tex_float_to_half(float f)
{
    uint32_t bits;
    memcpy(&bits, &f, sizeof bits);
    uint32_t sign = (bits >> 16) & 0x8000, exp = (bits >> 23) & 0xff, mant = bits & 0x7fffff;
    if (exp == 0xff)
        return (uint16_t)(sign | 0x7c00 | (mant ? 0x200 : 0));
    int e = (int)exp - 127 + 15;
    if (e >= 0x1f)
        return (uint16_t)(sign | 0x7c00);
    if (e <= 0) { /* subnormal or zero, rounded to nearest even */
        if (e < -10)
            return (uint16_t)sign;
        mant |= 0x800000;
        uint32_t shift = (uint32_t)(14 - e), half = 1u << (shift - 1);
        uint32_t m = mant >> shift, rest = mant & ((1u << shift) - 1);
        if (rest > half || (rest == half && (m & 1)))
            m++;
        return (uint16_t)(sign | m);
    }
    uint32_t m = mant >> 13, rest = mant & 0x1fff;
    uint32_t h = sign | (uint32_t)e << 10 | m;
    if (rest > 0x1000 || (rest == 0x1000 && (m & 1)))
        h++; /* may carry into the exponent, which is right */
    return (uint16_t)h;
}
