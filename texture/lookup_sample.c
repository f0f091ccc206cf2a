/* Sampling: MIP level choice from the footprint, wrap modes, texel decoding
 * and the filters. */
#include "tex_io_internal.h" /* tex__cpu_f16c() */
#include "tex_sample_internal.h"
#include "tex_srgb_internal.h"
#include "texture_internal.h"

#include <math.h>
#include <pthread.h>
#include <string.h>

float                 tex__unorm_u8[256]; /* byte -> [0, 1], as decode() computes it */
bool                  tex__have_f16c;     /* the CPU converts halves in hardware */
static pthread_once_t srgb_once = PTHREAD_ONCE_INIT;

static void
srgb_init(void)
{
    tex__srgb_u8_init();
    for (int i = 0; i < 256; i++)
        tex__unorm_u8[i] = (float)i * (1.0f / 255.0f);
    tex__have_f16c = tex__cpu_f16c(); /* a plain flag for the samplers' hot path */
}

/* What one lookup carries between texel fetches: the last tile it used, so
 * the four texels of a bilinear tap mostly cost one tile lookup. */
typedef struct fetch {
    tex_system      *ts;
    tex_thread      *tc;
    tex__file       *f;
    const tex_opts  *o;
    const tex__tile *tile;
    uint32_t         level, index;
    bool             decode_srgb;
    bool             failed; /* a tile could not be read: fill used */
} fetch;

/* v mod p in [0, p), p > 0. A power of two (every level of a power-of-two
 * texture) by a mask, which two's complement makes right for negative v
 * too: textures repeated across a surface wrap most taps, and a 64-bit
 * division on the way to each tap's texels was a cost the profiles saw
 * (figures: docs/render-performance.md). */
static inline int64_t
modulo(int64_t v, int64_t p)
{
    if ((p & (p - 1)) == 0)
        return v & (p - 1);
    v %= p;
    return v < 0 ? v + p : v;
}

/* Wraps integer coordinate x into [0, n); false: outside, under black. */
static bool
wrap_outside(int64_t *x, uint32_t n, tex_wrap mode)
{
    int64_t v = *x;
    switch (mode) {
    case TEX_WRAP_CLAMP:
        *x = v < 0 ? 0 : n - 1;
        return true;
    case TEX_WRAP_BLACK:
        return false;
    case TEX_WRAP_MIRROR: {
        int64_t p = 2 * (int64_t)n;
        v = modulo(v, p);
        *x = v < n ? v : p - 1 - v;
        return true;
    }
    default:
        *x = modulo(v, n);
        return true;
    }
}

static inline bool
wrap(int64_t *x, uint32_t n, tex_wrap mode)
{
    return (uint64_t)*x < n || wrap_outside(x, n, mode);
}

static inline float
decode(const void *texels, size_t i, tex_type type, bool srgb)
{
    switch (type) {
    case TEX_TYPE_U8: {
        uint8_t v = ((const uint8_t *)texels)[i];
        return srgb ? tex__srgb_u8[v] : v * (1.0f / 255.0f);
    }
    case TEX_TYPE_U16: { /* the sRGB table is built as such a file opens (tex__sample_prepare()) */
        uint16_t v = ((const uint16_t *)texels)[i];
        return srgb ? tex__srgb_u16[v] : v * (1.0f / 65535.0f);
    }
    case TEX_TYPE_HALF:
        return tex__half_decode(((const uint16_t *)texels)[i]);
    default:
        return ((const float *)texels)[i];
    }
}

/* A texel's nc channel values as RGBA: grey gives R, G and B; a missing
 * alpha is the fill's. */
static inline void
expand(const fetch *q, uint32_t nc, const float v[4], float rgba[4])
{
    if (nc <= 2) {
        rgba[0] = rgba[1] = rgba[2] = v[0];
        rgba[3] = nc == 2 ? v[1] : q->o->fill[3];
    } else {
        rgba[0] = v[0], rgba[1] = v[1], rgba[2] = v[2];
        rgba[3] = nc == 4 ? v[3] : q->o->fill[3];
    }
}

/* The texel at sample offset i of `texels` as RGBA. The type switch sits
 * outside the channel loop: this runs four to eight times per lookup. */
static inline void
decode_texel(const fetch *q, const unsigned char *texels, size_t i, float rgba[4])
{
    const tex_file_info *in = &q->f->info;
    uint32_t             nc = in->nchannels;
    float                v[4] = {0, 0, 0, 0};
    switch (in->type) {
    case TEX_TYPE_HALF:
        tex__halves((const uint16_t *)(const void *)texels + i, nc, v);
        break;
    case TEX_TYPE_FLOAT:
        memcpy(v, (const float *)(const void *)texels + i, nc * sizeof(float));
        break;
    case TEX_TYPE_U8: { /* by table, each channel once; alpha is never sRGB */
        const uint8_t *p = texels + i;
        const float   *colour = q->decode_srgb ? tex__srgb_u8 : tex__unorm_u8;
        uint32_t       ncolour = nc == 2 || nc == 4 ? nc - 1 : nc;
        for (uint32_t c = 0; c < nc; c++)
            v[c] = (c < ncolour ? colour : tex__unorm_u8)[p[c]];
        break;
    }
    default:
        for (uint32_t c = 0; c < nc; c++) {
            bool alpha = (nc == 2 && c == 1) || (nc == 4 && c == 3);
            v[c] = decode(texels, i + c, in->type, q->decode_srgb && !alpha);
        }
    }
    expand(q, nc, v, rgba);
}

/* The fast bilinear tap on 8-bit texels (tex__bilerp_u8()), for a tap
 * inside one tile. */
static inline __attribute__((always_inline)) void
bilerp_u8(const fetch *q, const uint8_t *p, size_t row, float fx, float fy, float rgba[4])
{
    const float *colour = q->decode_srgb ? tex__srgb_u8 : tex__unorm_u8; /* alpha is never sRGB */
    tex__bilerp_u8(colour, q->f->info.nchannels, q->o->fill[3], p, row, fx, fy, rgba);
}

/* Where texel (x, y) lives: its tile's index in the level, and its sample
 * offset inside the tile. Returns whether (x + 1, y + 1) is in the tile too. */
static inline bool
locate(const tex__file *f, const tex__level *lv, uint32_t x, uint32_t y, uint32_t *index,
       size_t *offset)
{
    uint32_t tw = f->info.tile_width, tx, ty, ix, iy;
    if (f->tile_shift_x) {
        tx = x >> f->tile_shift_x, ix = x & (tw - 1);
        ty = y >> f->tile_shift_y, iy = y & (f->info.tile_height - 1);
    } else {
        tx = x / tw, ix = x % tw;
        ty = y / f->info.tile_height, iy = y % f->info.tile_height;
    }
    *index = ty * lv->tiles_x + tx;
    *offset = ((size_t)iy * tw + ix) * f->info.nchannels;
    return ix + 1 < tw && iy + 1 < f->info.tile_height;
}

/* The tile `index` of a level, through the lookup's one-tile cache.
 * Always inline: with the tile's hit inline in it, the compiler took it out
 * of line in the renderer's build, a call at every tap. */
static inline __attribute__((always_inline)) const tex__tile *
tile_at(fetch *q, uint32_t level, uint32_t index)
{
    if (!q->tile || q->level != level || q->index != index) {
        q->tile = tex__tile_get(q->ts, q->tc, q->f, level, index);
        q->level = level;
        q->index = index;
    }
    return q->tile;
}

/* Texel (x, y) of a level as linear RGBA, wrap applied. */
static void
texel(fetch *q, uint32_t level, int64_t x, int64_t y, float rgba[4])
{
    const tex__level *lv = &q->f->levels[level];
    if (!wrap(&x, lv->width, q->o->swrap) || !wrap(&y, lv->height, q->o->twrap)) {
        rgba[0] = rgba[1] = rgba[2] = rgba[3] = 0;
        return;
    }
    uint32_t index;
    size_t   offset;
    locate(q->f, lv, (uint32_t)x, (uint32_t)y, &index, &offset);
    const tex__tile *tile = tile_at(q, level, index);
    if (!tile) {
        for (int c = 0; c < 4; c++)
            rgba[c] = q->o->fill[c];
        q->failed = true;
        return;
    }
    decode_texel(q, tile->texels, offset, rgba);
}

static void
closest(fetch *q, uint32_t level, float s, float t, float rgba[4])
{
    const tex__level *lv = &q->f->levels[level];
    texel(q, level, tex__floor_to_int(s * lv->width), tex__floor_to_int(t * lv->height), rgba);
}

/* An 8-bit tap whose texels are not all in one tile (it crosses a tile's
 * edge, or wraps at the image's): each texel's bytes are gathered into a
 * 2x2 block and blended by bilerp_u8(), so the tap costs a few tile
 * fetches more than the usual case, not four generic texel reads. The
 * same bits as texel() and the blend below: the same decoding tables and
 * arithmetic. False, and nothing done, where a texel lies under a black
 * wrap or its tile cannot be read: the general path handles those. */
static bool
bilerp_u8_gathered(fetch *q, uint32_t level, int64_t x0, int64_t y0, float fx, float fy,
                   float rgba[4])
{
    const tex__level *lv = &q->f->levels[level];
    if (q->o->swrap == TEX_WRAP_BLACK || q->o->twrap == TEX_WRAP_BLACK)
        return false;
    size_t  nc = q->f->info.nchannels;
    uint8_t block[2 * 2 * 4]; /* rows of two texels */
    int64_t xs[2] = {x0, x0 + 1}, ys[2] = {y0, y0 + 1};
    for (int i = 0; i < 2; i++) {
        wrap(&xs[i], lv->width, q->o->swrap);
        wrap(&ys[i], lv->height, q->o->twrap);
    }
    for (int i = 0; i < 2; i++)       /* column by column: a tap across a side */
        for (int j = 0; j < 2; j++) { /* edge fetches each tile once */
            uint32_t index;
            size_t   offset;
            locate(q->f, lv, (uint32_t)xs[i], (uint32_t)ys[j], &index, &offset);
            const tex__tile *tile = tile_at(q, level, index);
            if (!tile)
                return false;
            memcpy(block + (2 * (size_t)j + (size_t)i) * nc, tile->texels + offset, nc);
        }
    bilerp_u8(q, block, 2 * nc, fx, fy, rgba);
    return true;
}

/* Samples in one row of a tile. */
static inline size_t
tile_row(const tex__file *f)
{
    return (size_t)f->info.tile_width * f->info.nchannels;
}

/* Whether texels (x0, y0) to (x0 + 1, y0 + 1) all lie inside the level and
 * in one tile; if so, the tile's index and (x0, y0)'s offset in it. */
static inline bool
in_one_tile(const tex__file *f, const tex__level *lv, int64_t x0, int64_t y0, uint32_t *index,
            size_t *offset)
{
    /* 0 <= x0 < width - 1 as one unsigned comparison: a negative x0 is huge. */
    if (!((uint64_t)x0 < lv->width - 1u && (uint64_t)y0 < lv->height - 1u))
        return false;
    uint32_t x = (uint32_t)x0, y = (uint32_t)y0;
    if (!f->tile_shift_x)
        return locate(f, lv, x, y, index, offset);
    /* Power-of-two tiles, every warm lookup's case: the tile's last column
     * or row tested by mask before locate() computes the index and offset,
     * which a tap across the edge does not need (fewer values live at once:
     * the lookup's stay off the stack; docs/benchmarks.md). */
    uint32_t mx = f->info.tile_width - 1, my = f->info.tile_height - 1;
    if ((x & mx) == mx || (y & my) == my)
        return false;
    locate(f, lv, x, y, index, offset);
    return true;
}

/* A tap other than the usual ones inside a tile (8-bit, 16-bit; half or
 * float RGB or RGBA): grey half and float, halves without F16C, taps whose
 * texels are not in one tile or cross the image's edge, and a tap in one
 * tile that cannot be read. Out of line, so that the usual taps stay short
 * where trilinear() inlines them. */
static __attribute__((noinline)) void
bilinear_other(fetch *q, uint32_t level, int64_t x0, int64_t y0, float fx, float fy, float rgba[4])
{
    const tex__level *lv = &q->f->levels[level];
    float             a[4], b[4], c[4], d[4];
    uint32_t          index;
    size_t            i;
    if (q->f->info.type != TEX_TYPE_U8 && in_one_tile(q->f, lv, x0, y0, &index, &i)) {
        const tex__tile *tile = tile_at(q, level, index);
        if (tile) {
            size_t nc = q->f->info.nchannels, row = tile_row(q->f);
            decode_texel(q, tile->texels, i, a);
            decode_texel(q, tile->texels, i + nc, b);
            decode_texel(q, tile->texels, i + row, c);
            decode_texel(q, tile->texels, i + row + nc, d);
            goto blend;
        }
    }
    if (q->f->info.type == TEX_TYPE_U8 && bilerp_u8_gathered(q, level, x0, y0, fx, fy, rgba))
        return;
    texel(q, level, x0, y0, a);
    texel(q, level, x0, y0 + 1, c); /* down first: a tap across a tile's side edge */
    texel(q, level, x0 + 1, y0, b); /* fetches each tile once */
    texel(q, level, x0 + 1, y0 + 1, d);
blend:
    for (int k = 0; k < 4; k++) {
        float top = a[k] + (b[k] - a[k]) * fx, bottom = c[k] + (d[k] - c[k]) * fx;
        rgba[k] = top + (bottom - top) * fy;
    }
}

/* A repeating texture read beyond its first copy (UVs scaled past 1): the
 * tap's origin moved into the first copy, once, rather than each of its
 * texels wrapped; (x0 + 1) mod n is still the right neighbour. Before the
 * tap is placed, not only once it is found outside: most of a real scene's
 * taps are (docs/benchmarks.md, "The machinery cut"). */
static inline __attribute__((always_inline)) void
periodic_origin(const tex_opts *o, const tex__level *lv, int64_t *x0, int64_t *y0)
{
    if (o->swrap == TEX_WRAP_PERIODIC && (uint64_t)*x0 >= lv->width)
        wrap_outside(x0, lv->width, TEX_WRAP_PERIODIC);
    if (o->twrap == TEX_WRAP_PERIODIC && (uint64_t)*y0 >= lv->height)
        wrap_outside(y0, lv->height, TEX_WRAP_PERIODIC);
}

static inline __attribute__((always_inline)) void
bilinear(fetch *q, uint32_t level, float s, float t, float rgba[4])
{
    const tex__level *lv = &q->f->levels[level];
    float             fx, fy;
    int64_t x0 = tex__tap_origin(s, lv->width, &fx), y0 = tex__tap_origin(t, lv->height, &fy);
    periodic_origin(q->o, lv, &x0, &y0);
    uint32_t index;
    size_t   i;
    /* The usual case: all four texels inside the image and in one tile,
     * 8-bit, or 16-bit, half or float RGB or RGBA (the wide tap here too, not
     * behind bilinear_other()'s call and frame, which a half-float lookup
     * paid for nothing: docs/benchmarks.md, "Lookups against the floor").
     * A tile that cannot be read goes the long way, as the others. */
    if (in_one_tile(q->f, lv, x0, y0, &index, &i)) {
        const tex__tile *tile = tile_at(q, level, index);
        if (tile && q->f->info.type == TEX_TYPE_U8) {
            bilerp_u8(q, tile->texels + i, tile_row(q->f), fx, fy, rgba);
            return;
        }
#if defined(__x86_64__)
        if (tile && tex__bilerp_wide(q->f->info.type, q->f->info.nchannels, q->decode_srgb,
                                     q->o->fill[3], tile->texels, i, tile_row(q->f), fx, fy, rgba))
            return;
#endif
    }
    bilinear_other(q, level, x0, y0, fx, fy, rgba);
}

/* Bilinear at a fractional level: the two levels around it, blended. */
static void
trilinear(fetch *q, float lod, float s, float t, float rgba[4])
{
    uint32_t last = q->f->info.nlevels - 1;
    float    w;
    uint32_t l0 = tex__trilinear_level(q->f->info.nlevels, lod, &w);
    bilinear(q, l0, s, t, rgba);
    if (w > 0 && l0 < last) {
        float up[4];
        bilinear(q, l0 + 1, s, t, up);
        for (int k = 0; k < 4; k++)
            rgba[k] += (up[k] - rgba[k]) * w;
    }
}

/* tex__log2_fast(), by the name the filters below use. */
static inline float
log2_fast(float x)
{
    return tex__log2_fast(x);
}

static uint32_t
nearest_level(const tex__file *f, float lod)
{
    return tex__nearest_level(f->info.nlevels, lod);
}

/* The filter itself: footprint axes major/minor in level-0 texels; a_major
 * says whether the x derivatives are the major axis. */
static void
sample(fetch *q, float major, float minor, bool a_major, float s, float t, const tex_derivs *d,
       float rgba[4])
{
    const tex__file *f = q->f;
    const tex_opts  *o = q->o;
    switch (o->filter) {
    case TEX_FILTER_CLOSEST:
        closest(q, nearest_level(f, log2_fast(major)), s, t, rgba);
        return;
    case TEX_FILTER_TRILINEAR:
        trilinear(q, log2_fast(major), s, t, rgba);
        return;
    case TEX_FILTER_ANISOTROPIC: {
        unsigned max = !o->max_anisotropy ? 8 : o->max_anisotropy > 64 ? 64 : o->max_anisotropy;
        float    ratio = minor > 0 ? major / minor : (major > 0 ? (float)max : 1);
        unsigned n = !(ratio < (float)max) ? max : (unsigned)ceilf(ratio); /* NaN: max */
        if (n <= 1) {
            trilinear(q, log2_fast(major), s, t, rgba);
            return;
        }
        /* n trilinear probes spread along the major axis, at the level of
         * the footprint's width across it. */
        float ds = a_major ? (d->dsdx) : (d->dsdy), dt = a_major ? (d->dtdx) : (d->dtdy);
        float sum[4] = {0, 0, 0, 0}, probe[4];
        for (unsigned i = 0; i < n; i++) {
            float k = ((float)i + 0.5f) / (float)n - 0.5f;
            trilinear(q, log2_fast(major / (float)n), s + ds * k, t + dt * k, probe);
            for (int c = 0; c < 4; c++)
                sum[c] += probe[c];
        }
        for (int c = 0; c < 4; c++)
            rgba[c] = sum[c] / (float)n;
        return;
    }
    default:
        bilinear(q, nearest_level(f, log2_fast(major)), s, t, rgba);
    }
}

void
tex__sample_init(void)
{
    pthread_once(&srgb_once, srgb_init);
}

void
tex__sample_prepare(const tex__file *f)
{
    if (f->info.type == TEX_TYPE_U16 && f->info.srgb)
        tex__srgb_u16_init();
}

void
tex__constant_decode(tex__file *f)
{
    fetch q = {.f = f, .o = &(tex_opts){.fill = {0, 0, 0, 1}}, .decode_srgb = f->info.srgb};
    decode_texel(&q, f->constant_texel, 0, f->constant_rgba);
}

bool
tex__sample(tex_system *ts, tex_thread *tc, tex__file *f, float s, float t, const tex_derivs *d,
            const tex_opts *o, float rgba[4])
{
    /* A constant image filters to its texel under every filter, unless a
     * wrap mode reads black beyond the edge: decoded once, when it was
     * opened; only a missing alpha is the lookup's fill. */
    if (f->info.constant && o->swrap != TEX_WRAP_BLACK && o->twrap != TEX_WRAP_BLACK) {
        memcpy(rgba, f->constant_rgba, 4 * sizeof(float));
        if (f->info.nchannels == 1 || f->info.nchannels == 3)
            rgba[3] = o->fill[3];
        return true;
    }
    fetch q = {.ts = ts, .tc = tc, .f = f, .o = o, .decode_srgb = f->info.srgb};

    float major, minor;
    bool  a_major = tex__footprint((float)f->info.width, (float)f->info.height, d, &major, &minor);
    sample(&q, major, minor, a_major, s, t, d, rgba);
    return !q.failed;
}
