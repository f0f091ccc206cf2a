/* Sample conversion, and MIP pyramids: each level half the size of the one
 * above (rounded down, at least 1), filtered by exact area coverage, so odd
 * sizes are handled without shifting the image: output pixel i of a row of
 * w takes the input interval [i W / w, (i + 1) W / w), partial pixels
 * weighted by overlap. sRGB-encoded data is filtered in linear light and
 * encoded again. */
#include "tex_io_internal.h" /* tex__cpu_f16c() */
#include "tex_mip_internal.h"
#include "tex_srgb_internal.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

static bool           f16c;
static pthread_once_t f16c_once = PTHREAD_ONCE_INIT;

static void
f16c_detect(void)
{
#if defined(__x86_64__)
    /* CPUID leaf 1, ECX bit 29 (bit_F16C); __builtin_cpu_supports("f16c")
     * says the same, but clang before 16 does not know the name. */
    unsigned eax, ebx, ecx, edx;
    f16c = __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_F16C);
#endif
}

bool
tex__cpu_f16c(void)
{
    pthread_once(&f16c_once, f16c_detect);
    return f16c;
}

/* One channel sample as linear float. */
static float
sample_get(const tex_image *img, size_t i)
{
    switch (img->type) {
    case TEX_TYPE_U8: {
        uint8_t b = ((const uint8_t *)img->pixels)[i];
        return img->srgb ? tex__srgb_u8[b] : b / 255.0f;
    }
    case TEX_TYPE_U16: {
        uint16_t b = ((const uint16_t *)img->pixels)[i];
        return img->srgb ? tex__srgb_u16[b] : b / 65535.0f;
    }
    case TEX_TYPE_HALF:
        return tex_half_to_float(((const uint16_t *)img->pixels)[i]);
    default:
        return ((const float *)img->pixels)[i];
    }
}

/* A linear value as an 8- or 16-bit code, clamped to [0, 1]; NaN reads
 * as 0. */
static inline uint8_t
code_u8(float v, bool srgb)
{
    v = v > 0 ? (v < 1 ? v : 1) : 0;
    return srgb ? tex__srgb_encode_u8(v) : (uint8_t)lrintf(v * 255.0f);
}

static inline uint16_t
code_u16(float v, bool srgb)
{
    v = v > 0 ? (v < 1 ? v : 1) : 0;
    return srgb ? tex__srgb_encode_u16(v) : (uint16_t)lrintf(v * 65535.0f);
}

static void
sample_put(tex_image *img, size_t i, float v)
{
    if (img->type == TEX_TYPE_FLOAT)
        ((float *)img->pixels)[i] = v;
    else if (img->type == TEX_TYPE_HALF)
        ((uint16_t *)img->pixels)[i] = tex_float_to_half(v);
    else if (img->type == TEX_TYPE_U8)
        ((uint8_t *)img->pixels)[i] = code_u8(v, img->srgb);
    else
        ((uint16_t *)img->pixels)[i] = code_u16(v, img->srgb);
}

/* Builds the sRGB tables an image of this type and encoding uses: the
 * 16-bit ones only where such an image appears. */
static void
srgb_tables_for(tex_type type, bool srgb)
{
    tex__srgb_u8_init();
    if (type == TEX_TYPE_U16 && srgb)
        tex__srgb_u16_init();
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
    srgb_tables_for(src->type, src->srgb);
    srgb_tables_for(type, dst_srgb);
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

/* One channel of one output texel of the 8-bit halving: the mean of
 * p[0], p[nc] (top) and q[0], q[nc] (bottom), rows first, decoded by
 * `lut` and encoded again. The general path's 0.5 (0.5 (p0 + p1) + 0.5
 * (q0 + q1)) is a quarter of the sum below to the bit (halving a normal
 * float changes its exponent alone), for one multiplication, not three. */
static inline __attribute__((always_inline)) uint8_t
halve_u8_one(const float *lut, bool srgb, const uint8_t *p, const uint8_t *q, uint32_t nc)
{
    float v = 0.25f * ((lut[p[0]] + lut[p[nc]]) + (lut[q[0]] + lut[q[nc]]));
    return srgb ? tex__srgb_encode_u8(v) : (uint8_t)lrintf(v * 255.0f);
}

/* halve_u8_row() for nc channels, sRGB colour or not: inlined with both
 * constant, so that which table and which encoding each channel takes is
 * settled at compile time, not per texel (a quarter of a MIP build's
 * instructions were these choices, callgrind). Alpha, the last of 2 or 4,
 * is never sRGB. */
static inline __attribute__((always_inline)) void
halve_u8_nc(const uint8_t *top, const uint8_t *bottom, uint8_t *out, uint32_t w, uint32_t nc,
            bool srgb, const float *unorm)
{
    uint32_t     ncolour = nc == 2 || nc == 4 ? nc - 1 : nc;
    const float *colour = srgb ? tex__srgb_u8 : unorm;
    for (uint32_t x = 0; x < w; x++, out += nc) {
        const uint8_t *p = top + 2 * (size_t)x * nc, *q = bottom + 2 * (size_t)x * nc;
        for (uint32_t c = 0; c < nc; c++)
            out[c] = c < ncolour ? halve_u8_one(colour, srgb, p + c, q + c, nc)
                                 : halve_u8_one(unorm, false, p + c, q + c, nc);
    }
}

/* The usual case, 8-bit with even sides: each output the mean of a 2x2
 * block of rows `top` and `bottom`, by table, with no float lines. The
 * arithmetic is the general path's, in its order (rows, then columns), so
 * both give the same bits. */
static void
halve_u8_row(const tex_image *src, const float *unorm, const uint8_t *top, const uint8_t *bottom,
             uint8_t *out)
{
    uint32_t w = src->width / 2;
    switch (src->nchannels * 2 + src->srgb) {
    case 2:
        halve_u8_nc(top, bottom, out, w, 1, false, unorm);
        break;
    case 3:
        halve_u8_nc(top, bottom, out, w, 1, true, unorm);
        break;
    case 4:
        halve_u8_nc(top, bottom, out, w, 2, false, unorm);
        break;
    case 5:
        halve_u8_nc(top, bottom, out, w, 2, true, unorm);
        break;
    case 6:
        halve_u8_nc(top, bottom, out, w, 3, false, unorm);
        break;
    case 7:
        halve_u8_nc(top, bottom, out, w, 3, true, unorm);
        break;
    case 8:
        halve_u8_nc(top, bottom, out, w, 4, false, unorm);
        break;
    default:
        halve_u8_nc(top, bottom, out, w, 4, true, unorm);
        break;
    }
}

/* Rows of halves to floats and back, eight at a time by F16C where the CPU
 * has it: half of a half-float texture's MIP build was these conversions
 * one call a sample (an 8192x4096 environment map, perf). F16C gives the
 * bits tex_half_to_float() and tex_float_to_half() give for every value but
 * NaN (checked for all 65,536 halves and all 2^32 floats; the test
 * tex_system.half_rows checks a sweep), and a block of eight holding an infinity
 * or a NaN takes the functions, so NaNs stay theirs. */
#if defined(__x86_64__)
__attribute__((target("f16c"))) static void
halves_to_floats_f16c(const uint16_t *in, float *out, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m128i h = _mm_loadu_si128((const __m128i *)(in + i));
        __m128i exp = _mm_and_si128(h, _mm_set1_epi16(0x7c00));
        if (_mm_movemask_epi8(_mm_cmpeq_epi16(exp, _mm_set1_epi16(0x7c00)))) {
            for (size_t k = i; k < i + 8; k++)
                out[k] = tex_half_to_float(in[k]);
        } else {
            _mm256_storeu_ps(out + i, _mm256_cvtph_ps(h));
        }
    }
    for (; i < n; i++)
        out[i] = tex_half_to_float(in[i]);
}

__attribute__((target("f16c"))) static void
floats_to_halves_f16c(const float *in, uint16_t *out, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 f = _mm256_loadu_ps(in + i);
        if (_mm256_movemask_ps(_mm256_cmp_ps(f, f, _CMP_UNORD_Q))) {
            for (size_t k = i; k < i + 8; k++)
                out[k] = tex_float_to_half(in[k]);
        } else {
            _mm_storeu_si128((__m128i *)(out + i),
                             _mm256_cvtps_ph(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
        }
    }
    for (; i < n; i++)
        out[i] = tex_float_to_half(in[i]);
}
#endif

static void
halves_to_floats(const uint16_t *in, float *out, size_t n)
{
#if defined(__x86_64__)
    if (tex__cpu_f16c()) {
        halves_to_floats_f16c(in, out, n);
        return;
    }
#endif
    for (size_t i = 0; i < n; i++)
        out[i] = tex_half_to_float(in[i]);
}

static void
floats_to_halves(const float *in, uint16_t *out, size_t n)
{
#if defined(__x86_64__)
    if (tex__cpu_f16c()) {
        floats_to_halves_f16c(in, out, n);
        return;
    }
#endif
    for (size_t i = 0; i < n; i++)
        out[i] = tex_float_to_half(in[i]);
}

/* A row of an image of `shape` as linear floats (alpha as stored). */
static void
row_linear(const tex_image *shape, const void *row, const float *unorm, float *line)
{
    uint32_t nc = shape->nchannels, n = shape->width * nc;
    if (shape->type == TEX_TYPE_HALF) { /* never sRGB: every channel alike */
        halves_to_floats(row, line, n);
        return;
    }
    for (uint32_t c = 0; c < nc; c++) {
        tex_image view = *shape; /* sample_get() reads pixels, type and srgb */
        view.pixels = (void *)row;
        view.srgb = shape->srgb && !is_alpha(nc, c);
        if (view.type == TEX_TYPE_U8) { /* sample_get() by table */
            const uint8_t *in = row;
            const float   *lut = view.srgb ? tex__srgb_u8 : unorm;
            for (uint32_t i = c; i < n; i += nc)
                line[i] = lut[in[i]];
        } else if (view.type == TEX_TYPE_U16 && view.srgb) { /* sample_get(), inline */
            const uint16_t *in = row;
            for (uint32_t i = c; i < n; i += nc)
                line[i] = tex__srgb_u16[in[i]];
        } else {
            for (uint32_t i = c; i < n; i += nc)
                line[i] = sample_get(&view, i);
        }
    }
}

/* A row of an image of `shape` from linear floats: sample_put(), with
 * 8- and 16-bit rows inline. */
static void
row_put(const tex_image *shape, void *row, const float *line)
{
    uint32_t nc = shape->nchannels, n = shape->width * nc;
    if (shape->type == TEX_TYPE_HALF) {
        floats_to_halves(line, row, n);
        return;
    }
    for (uint32_t c = 0; c < nc; c++) {
        tex_image view = *shape;
        view.pixels = row;
        view.srgb = shape->srgb && !is_alpha(nc, c);
        if (view.type == TEX_TYPE_U8) {
            for (uint32_t i = c; i < n; i += nc)
                ((uint8_t *)row)[i] = code_u8(line[i], view.srgb);
        } else if (view.type == TEX_TYPE_U16) {
            for (uint32_t i = c; i < n; i += nc)
                ((uint16_t *)row)[i] = code_u16(line[i], view.srgb);
        } else {
            for (uint32_t i = c; i < n; i += nc)
                sample_put(&view, i, line[i]);
        }
    }
}

/* Rows, then columns, in float lines: each source row is resampled along x
 * as it arrives and added, in doubles, to the one or two output rows it
 * covers (neighbours share at most one source row, since each output
 * covers at least two, or the one of a single row); an output row is done
 * with the last source row it covers. Every output is the same sum, in the
 * same order, as resampling the whole image by rows and then by columns,
 * so the same bits; but nothing image-sized is held, and the column pass
 * reads along rows. */
struct tex_downsampler {
    tex_image src, dst; /* shapes; dst.pixels is the output row */
    taps      tx, ty;
    bool      fast_u8;   /* 8-bit, even sides: halve_u8_row() */
    bool      simd;      /* ... by tex__halve_u8_simd() */
    uint32_t  simd_rows; /* output rows it made (tests: the path is taken) */
    uint32_t  y;         /* source rows taken */
    uint32_t  next;      /* the first output row not yet done */
    float    *line;      /* a source row as linear floats */
    float    *row;       /* ... resampled along x */
    float    *held;      /* ty.halve: the even source row, resampled */
    float    *out;
    double   *acc[2]; /* outputs next and next + 1 */
    uint8_t  *raw;    /* fast_u8: the even source row as given */
};

/* k / 255 for each byte, the unorm decode both paths share (a quotient,
 * not a product by 1/255: mip_simd.c's table has the same bits). Built
 * once for all downsamplers, not by each (a file makes one a level). */
static float          unorm_u8[256];
static pthread_once_t unorm_once = PTHREAD_ONCE_INIT;

static void
unorm_build(void)
{
    for (int k = 0; k < 256; k++)
        unorm_u8[k] = (float)k / 255.0f;
}

void
tex_downsampler_free(tex_downsampler *d)
{
    if (!d)
        return;
    taps_free(&d->tx), taps_free(&d->ty);
    free(d->line), free(d->row), free(d->held), free(d->out);
    free(d->acc[0]), free(d->acc[1]), free(d->raw), free(d->dst.pixels);
    free(d);
}

tex_result
tex_downsampler_new(const tex_image *shape, tex_downsampler **out, char err[TEX_ERR_LEN])
{
    srgb_tables_for(shape->type, shape->srgb);
    *out = NULL;
    uint32_t W = shape->width, H = shape->height, nc = shape->nchannels;
    if (W == 0 || H == 0 || nc < 1 || nc > 4 || (unsigned)shape->type > TEX_TYPE_FLOAT) {
        snprintf(err, TEX_ERR_LEN, "no image to downsample (%ux%u, %u channels)", W, H, nc);
        return TEX_ERR_INVALID;
    }
    tex_downsampler *d = calloc(1, sizeof *d);
    if (!d)
        goto nomem;
    d->src = *shape;
    d->src.pixels = NULL;
    d->dst = d->src;
    d->dst.width = W > 1 ? W / 2 : 1;
    d->dst.height = H > 1 ? H / 2 : 1;
    d->dst.pixels = malloc((size_t)d->dst.width * nc * tex_type_size(shape->type));
    d->fast_u8 = shape->type == TEX_TYPE_U8 && W == 2 * d->dst.width && H == 2 * d->dst.height;
    d->simd = d->fast_u8 && tex__halve_u8_simd_ready();
    pthread_once(&unorm_once, unorm_build);
    size_t nout = (size_t)d->dst.width * nc;
    if (!d->dst.pixels || !taps_make(W, d->dst.width, &d->tx) ||
        !taps_make(H, d->dst.height, &d->ty))
        goto nomem;
    if (d->fast_u8) {
        d->raw = malloc((size_t)W * nc);
        if (!d->raw)
            goto nomem;
    } else {
        d->line = malloc((size_t)W * nc * sizeof *d->line);
        d->row = malloc(nout * sizeof *d->row);
        d->held = malloc(nout * sizeof *d->held);
        d->out = malloc(nout * sizeof *d->out);
        d->acc[0] = calloc(nout, sizeof *d->acc[0]);
        d->acc[1] = calloc(nout, sizeof *d->acc[1]);
        if (!d->line || !d->row || !d->held || !d->out || !d->acc[0] || !d->acc[1])
            goto nomem;
    }
    *out = d;
    return TEX_OK;
nomem:
    tex_downsampler_free(d);
    snprintf(err, TEX_ERR_LEN, "out of memory building MIP levels");
    return TEX_ERR_NOMEM;
}

/* The general path's push: adds source row y to the outputs it covers;
 * true when it completes output d->next (in d->out). */
static bool
push_general(tex_downsampler *d, uint32_t y)
{
    size_t nout = (size_t)d->dst.width * d->dst.nchannels;
    if (d->ty.halve) {
        if (y % 2 == 0) {
            memcpy(d->held, d->row, nout * sizeof *d->row);
            return false;
        }
        for (size_t k = 0; k < nout; k++)
            d->out[k] = 0.5f * (d->held[k] + d->row[k]);
        return true;
    }
    for (uint32_t i = d->next, j = 0; i < d->dst.height && j < 2; i++, j++) {
        if (y < d->ty.first[i] || y >= d->ty.first[i] + d->ty.count[i])
            continue;
        double  wt = d->ty.weight[d->ty.start[i] + (y - d->ty.first[i])];
        double *acc = d->acc[j];
        for (size_t k = 0; k < nout; k++)
            acc[k] += wt * d->row[k];
    }
    if (y + 1 != d->ty.first[d->next] + d->ty.count[d->next])
        return false;
    double *done = d->acc[0];
    for (size_t k = 0; k < nout; k++)
        d->out[k] = (float)(done[k] / d->ty.scale);
    memset(done, 0, nout * sizeof *done); /* it becomes output next + 2's */
    d->acc[0] = d->acc[1];
    d->acc[1] = done;
    return true;
}

uint32_t
tex__downsampler_simd_rows(const tex_downsampler *d)
{
    return d->simd_rows;
}

const void *
tex_downsampler_push(tex_downsampler *d, const void *row)
{
    if (d->y >= d->src.height)
        return NULL; /* more rows than the image has: ignored */
    uint32_t y = d->y++;
    bool     done;
    if (d->fast_u8) {
        done = y % 2 == 1;
        if (done && d->simd) {
            tex__halve_u8_simd(d->raw, row, d->dst.pixels, d->dst.width, d->src.nchannels,
                               d->src.srgb);
            d->simd_rows++;
        } else if (done)
            halve_u8_row(&d->src, unorm_u8, d->raw, row, d->dst.pixels);
        else
            memcpy(d->raw, row, (size_t)d->src.width * d->src.nchannels);
    } else {
        row_linear(&d->src, row, unorm_u8, d->line);
        taps_row(&d->tx, d->line, d->row, d->dst.width, d->src.nchannels);
        done = push_general(d, y);
        if (done)
            row_put(&d->dst, d->dst.pixels, d->out);
    }
    if (!done)
        return NULL;
    d->next++;
    return d->dst.pixels;
}

tex_result
tex_image_downsample(const tex_image *src, tex_image *dst, char err[TEX_ERR_LEN])
{
    tex_downsampler *d;
    dst->pixels = NULL;
    tex_result r = tex_downsampler_new(src, &d, err);
    if (r == TEX_OK)
        r = tex_image_alloc(dst, d->dst.width, d->dst.height, src->nchannels, src->type, err);
    if (r != TEX_OK) {
        tex_downsampler_free(d);
        return r;
    }
    dst->srgb = src->srgb;
    size_t in_row = (size_t)src->width * src->nchannels * tex_type_size(src->type);
    size_t out_row = (size_t)dst->width * dst->nchannels * tex_type_size(dst->type);
    for (uint32_t y = 0, i = 0; y < src->height; y++) {
        const void *done = tex_downsampler_push(d, (const char *)src->pixels + y * in_row);
        if (done)
            memcpy((char *)dst->pixels + (size_t)i++ * out_row, done, out_row);
    }
    tex_downsampler_free(d);
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
