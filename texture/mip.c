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

uint32_t
tex_mip_levels(uint32_t width, uint32_t height)
{
    uint32_t n = 1;
    while (width > 1 || height > 1) {
        width = width > 1 ? width / 2 : 1;
        height = height > 1 ? height / 2 : 1;
        n++;
    }
    return n;
}

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

/* Resamples n inputs (stride `in_step`) to m outputs by area coverage. */
static void
resample_line(const float *in, size_t in_step, uint32_t n, float *out, size_t out_step, uint32_t m)
{
    if (n == 2 * m) { /* the usual case: each output is the mean of two inputs */
        for (uint32_t i = 0; i < m; i++)
            out[i * out_step] = 0.5f * (in[2 * i * in_step] + in[(2 * i + 1) * in_step]);
        return;
    }
    double scale = (double)n / m;
    for (uint32_t i = 0; i < m; i++) {
        double x0 = i * scale, x1 = (i + 1) * scale, sum = 0;
        for (uint32_t j = (uint32_t)x0; j < n && j < x1; j++) {
            double lo = j > x0 ? j : x0, hi = j + 1 < x1 ? j + 1 : x1;
            sum += (hi - lo) * in[j * in_step];
        }
        out[i * out_step] = (float)(sum / scale);
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
    /* Linear floats: the whole source, then rows resampled, then columns. */
    float *lin = malloc((size_t)W * H * nc * sizeof *lin);
    float *rows = malloc((size_t)w * H * nc * sizeof *rows);
    float *out = malloc((size_t)w * h * nc * sizeof *out);
    if (!lin || !rows || !out) {
        free(lin), free(rows), free(out);
        tex_image_free(dst);
        snprintf(err, TEX_ERR_LEN, "out of memory building MIP levels");
        return TEX_ERR_NOMEM;
    }
    tex_image alpha_view = *src;
    alpha_view.srgb = false;
    for (size_t i = 0; i < (size_t)W * H * nc; i++)
        lin[i] = sample_get(is_alpha(nc, (uint32_t)(i % nc)) ? &alpha_view : src, i);
    for (uint32_t y = 0; y < H; y++)
        for (uint32_t c = 0; c < nc; c++)
            resample_line(lin + ((size_t)y * W * nc + c), nc, W, rows + ((size_t)y * w * nc + c),
                          nc, w);
    for (uint32_t x = 0; x < w; x++)
        for (uint32_t c = 0; c < nc; c++)
            resample_line(rows + ((size_t)x * nc + c), (size_t)w * nc, H,
                          out + ((size_t)x * nc + c), (size_t)w * nc, h);
    tex_image alpha_dst = *dst;
    alpha_dst.srgb = false;
    for (size_t i = 0; i < (size_t)w * h * nc; i++)
        sample_put(is_alpha(nc, (uint32_t)(i % nc)) ? &alpha_dst : dst, i, out[i]);
    free(lin), free(rows), free(out);
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
