/* The floor of a texture lookup (texture_floor.h). The texels come out of
 * the texture system through tex__tile_get(), the read its cache does, so
 * they are the bytes its lookups filter, level by level; every piece of
 * arithmetic that decides a result's bits comes from
 * tex_sample_internal.h, which texture/lookup_sample.c uses too. */
#include "texture_floor.h"

#include "tex_sample_internal.h"
#include "texture_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct floor_level {
    uint32_t       width, height;
    unsigned char *texels; /* width * height texels, rows top to bottom */
} floor_level;

typedef struct floor_file {
    tex_file_info info;
    size_t        texel_bytes;
    float         constant_rgba[4]; /* info.constant: its one texel, as the system decoded it */
    floor_level  *levels;           /* info.nlevels; none for a constant file */
} floor_file;

struct texture_floor {
    floor_file *files;
    unsigned    nfiles;
    size_t      bytes;
};

/* ---- building: the texels out of the texture system ---- */

/* Level l of f whole, tile by tile, into out: tiles keep rows of
 * tile_width texels even where the level's edge cuts them short. */
static tex_result
level_read(tex_system *ts, tex_thread *tc, tex__file *f, uint32_t l, floor_level *out,
           char err[TEX_ERR_LEN])
{
    const tex__level *lv = &f->levels[l];
    size_t            px = (size_t)f->info.nchannels * tex_type_size(f->info.type);
    uint32_t          tw = f->info.tile_width, th = f->info.tile_height;
    out->width = lv->width, out->height = lv->height;
    out->texels = malloc((size_t)lv->width * lv->height * px);
    if (!out->texels) {
        snprintf(err, TEX_ERR_LEN, "out of memory");
        return TEX_ERR_NOMEM;
    }
    for (uint32_t ty = 0; ty < lv->tiles_y; ty++)
        for (uint32_t tx = 0; tx < lv->tiles_x; tx++) {
            const tex__tile *tile = tex__tile_get(ts, tc, f, l, ty * lv->tiles_x + tx);
            if (!tile) {
                snprintf(err, TEX_ERR_LEN, "MIP level %u tile %u cannot be read", l,
                         ty * lv->tiles_x + tx);
                return TEX_ERR_OPEN;
            }
            uint32_t w = lv->width - tx * tw < tw ? lv->width - tx * tw : tw;
            uint32_t h = lv->height - ty * th < th ? lv->height - ty * th : th;
            for (uint32_t r = 0; r < h; r++)
                memcpy(out->texels + ((size_t)(ty * th + r) * lv->width + (size_t)tx * tw) * px,
                       tile->texels + (size_t)r * tw * px, (size_t)w * px);
        }
    return TEX_OK;
}

/* One file, its levels read whole (a constant file needs none: lookups of
 * it, ours and the floor's, return its texel). */
static tex_result
file_read(tex_system *ts, tex_thread *tc, ustr name, bool raw, floor_file *out,
          char err[TEX_ERR_LEN])
{
    tex__file *f = tex__file_find(ts, tc, name, raw);
    if (!f) {
        snprintf(err, TEX_ERR_LEN, "out of memory");
        return TEX_ERR_NOMEM;
    }
    if (f->udim_prefix) {
        snprintf(err, TEX_ERR_LEN, "a <UDIM> pattern, not one file");
        return TEX_ERR_INVALID;
    }
    tex_result r = tex__file_ready(ts, tc, f);
    if (r != TEX_OK) {
        snprintf(err, TEX_ERR_LEN, "%s", tex_result_str(r));
        return r;
    }
    out->info = f->info;
    out->texel_bytes = (size_t)f->info.nchannels * tex_type_size(f->info.type);
    memcpy(out->constant_rgba, f->constant_rgba, sizeof out->constant_rgba);
    if (f->info.constant)
        return TEX_OK;
    out->levels = calloc(f->info.nlevels, sizeof *out->levels);
    if (!out->levels) {
        snprintf(err, TEX_ERR_LEN, "out of memory");
        return TEX_ERR_NOMEM;
    }
    for (uint32_t l = 0; l < f->info.nlevels && r == TEX_OK; l++)
        r = level_read(ts, tc, f, l, &out->levels[l], err);
    return r;
}

tex_result
texture_floor_create(tex_system *ts, const ustr *names, unsigned n, bool raw, texture_floor **out,
                     char err[TEX_ERR_LEN])
{
    *out = NULL;
    texture_floor *fl = calloc(1, sizeof *fl);
    tex_thread    *tc = NULL;
    if (!fl || !(fl->files = calloc(n ? n : 1, sizeof *fl->files)) ||
        tex_thread_create(ts, &tc) != TEX_OK) {
        texture_floor_destroy(fl);
        snprintf(err, TEX_ERR_LEN, "out of memory");
        return TEX_ERR_NOMEM;
    }
    tex_result r = TEX_OK;
    /* A file that fails is counted too: destroy() frees what it got. */
    for (unsigned i = 0; r == TEX_OK && i < n; i++, fl->nfiles++) {
        char why[TEX_ERR_LEN], shown[200];
        r = file_read(ts, tc, names[i], raw, &fl->files[i], why);
        if (r != TEX_OK) {
            tex_name_printable(shown, sizeof shown, names[i]);
            snprintf(err, TEX_ERR_LEN, "%.100s: %.150s", shown, why);
        }
    }
    tex__tile_release(tc);
    tex_thread_destroy(tc);
    if (r != TEX_OK) {
        texture_floor_destroy(fl);
        return r;
    }
    for (unsigned i = 0; i < n; i++) {
        const floor_file *f = &fl->files[i];
        for (uint32_t l = 0; f->levels && l < f->info.nlevels; l++)
            fl->bytes += (size_t)f->levels[l].width * f->levels[l].height * f->texel_bytes;
    }
    *out = fl;
    return TEX_OK;
}

void
texture_floor_destroy(texture_floor *fl)
{
    if (!fl)
        return;
    for (unsigned i = 0; fl->files && i < fl->nfiles; i++) {
        for (uint32_t l = 0; fl->files[i].levels && l < fl->files[i].info.nlevels; l++)
            free(fl->files[i].levels[l].texels);
        free(fl->files[i].levels);
    }
    free(fl->files);
    free(fl);
}

size_t
texture_floor_bytes(const texture_floor *fl)
{
    return fl->bytes;
}

/* ---- lookups: the filters over whole arrays ---- */

/* v mod n in [0, n): periodic wrap, by a mask where n is a power of two. */
static inline uint32_t
wrap(int64_t v, uint32_t n)
{
    int64_t r = (n & (n - 1)) == 0 ? v & (n - 1) : v % n;
    return (uint32_t)(r < 0 ? r + n : r);
}

static inline float
lerp(float a, float b, float w)
{
    return a + (b - a) * w; /* the sampler's blend, term for term */
}

/* The texel at sample i of `texels` as RGBA: a grey file's value in R, G
 * and B, a missing alpha fill_a; sRGB colour decoded, alpha never. The
 * general decoding, for closest and for taps the sampler's fast ones
 * below do not take. */
static void
texel(const floor_file *f, const unsigned char *texels, size_t i, float fill_a, float rgba[4])
{
    uint32_t nc = f->info.nchannels;
    uint32_t colour = !f->info.srgb ? 0 : nc == 2 || nc == 4 ? nc - 1 : nc; /* sRGB channels */
    float    v[4] = {0, 0, 0, 0};
    switch (f->info.type) {
    case TEX_TYPE_U8:
        for (uint32_t c = 0; c < nc; c++)
            v[c] = (c < colour ? tex__srgb_u8 : tex__unorm_u8)[texels[i + c]];
        break;
    case TEX_TYPE_U16:
        for (uint32_t c = 0; c < nc; c++) {
            uint16_t code = ((const uint16_t *)(const void *)texels)[i + c];
            v[c] = c < colour ? tex__srgb_u16[code] : code * (1.0f / 65535.0f);
        }
        break;
    case TEX_TYPE_HALF:
        tex__halves((const uint16_t *)(const void *)texels + i, nc, v);
        break;
    default:
        memcpy(v, (const float *)(const void *)texels + i, nc * sizeof(float));
    }
    rgba[0] = v[0];
    rgba[1] = nc <= 2 ? v[0] : v[1];
    rgba[2] = nc <= 2 ? v[0] : v[2];
    rgba[3] = nc == 2 ? v[1] : nc == 4 ? v[3] : fill_a;
}

/* The bilinear tap whose first texel is sample i of `texels`, rows `row`
 * samples apart: the sampler's own 8-bit and wide taps, else texel by
 * texel, blended as the sampler blends. */
static inline void
tap(const floor_file *f, const unsigned char *texels, size_t i, size_t row, float fx, float fy,
    float fill_a, float rgba[4])
{
    uint32_t nc = f->info.nchannels;
    if (f->info.type == TEX_TYPE_U8) {
        const float *colour = f->info.srgb ? tex__srgb_u8 : tex__unorm_u8;
        tex__bilerp_u8(colour, nc, fill_a, texels + i, row, fx, fy, rgba);
        return;
    }
#if defined(__x86_64__)
    if (tex__bilerp_wide(f->info.type, nc, f->info.srgb, fill_a, texels, i, row, fx, fy, rgba))
        return;
#endif
    float a[4], b[4], c[4], d[4];
    texel(f, texels, i, fill_a, a);
    texel(f, texels, i + nc, fill_a, b);
    texel(f, texels, i + row, fill_a, c);
    texel(f, texels, i + row + nc, fill_a, d);
    for (int k = 0; k < 4; k++)
        rgba[k] = lerp(lerp(a[k], b[k], fx), lerp(c[k], d[k], fx), fy);
}

/* Bilinear in one level: the tap read in place where its four texels lie
 * inside the level, the usual case; else (an edge, wrapped) its texels
 * gathered into a 2x2 block first. */
static void
bilinear(const floor_file *f, uint32_t level, float s, float t, float fill_a, float rgba[4])
{
    const floor_level *lv = &f->levels[level];
    uint32_t           nc = f->info.nchannels;
    float              fx, fy;
    int64_t x0 = tex__tap_origin(s, lv->width, &fx), y0 = tex__tap_origin(t, lv->height, &fy);
    if (x0 >= 0 && y0 >= 0 && x0 + 1 < lv->width && y0 + 1 < lv->height) {
        size_t i = ((size_t)y0 * lv->width + (size_t)x0) * nc;
        tap(f, lv->texels, i, (size_t)lv->width * nc, fx, fy, fill_a, rgba);
        return;
    }
    unsigned char block[2 * 2 * 4 * sizeof(float)]; /* rows of two texels */
    for (int j = 0; j < 2; j++)
        for (int k = 0; k < 2; k++)
            memcpy(block + (2 * j + k) * f->texel_bytes,
                   lv->texels +
                       ((size_t)wrap(y0 + j, lv->height) * lv->width + wrap(x0 + k, lv->width)) *
                           f->texel_bytes,
                   f->texel_bytes);
    tap(f, block, 0, 2 * (size_t)nc, fx, fy, fill_a, rgba);
}

static void
trilinear(const floor_file *f, float lod, float s, float t, float fill_a, float rgba[4])
{
    float    w;
    uint32_t l0 = tex__trilinear_level(f->info.nlevels, lod, &w);
    bilinear(f, l0, s, t, fill_a, rgba);
    if (w > 0 && l0 + 1 < f->info.nlevels) {
        float up[4];
        bilinear(f, l0 + 1, s, t, fill_a, up);
        for (int k = 0; k < 4; k++)
            rgba[k] = lerp(rgba[k], up[k], w);
    }
}

/* Trilinear probes spread evenly along the footprint's major axis, at the
 * level of its width across it, averaged: lookup_sample.c's anisotropic filter,
 * with its probe count and spacing. */
static void
anisotropic(const floor_file *f, const tex_opts *o, const tex_derivs *d, float major, float minor,
            bool a_major, float s, float t, float rgba[4])
{
    unsigned max = !o->max_anisotropy ? 8 : o->max_anisotropy > 64 ? 64 : o->max_anisotropy;
    float    ratio = minor > 0 ? major / minor : (major > 0 ? (float)max : 1);
    unsigned n = !(ratio < (float)max) ? max : (unsigned)ceilf(ratio);
    if (n <= 1) {
        trilinear(f, tex__log2_fast(major), s, t, o->fill[3], rgba);
        return;
    }
    float lod = tex__log2_fast(major / (float)n), sum[4] = {0, 0, 0, 0};
    float ds = a_major ? d->dsdx : d->dsdy, dt = a_major ? d->dtdx : d->dtdy;
    for (unsigned i = 0; i < n; i++) {
        float probe[4], k = ((float)i + 0.5f) / (float)n - 0.5f;
        trilinear(f, lod, s + ds * k, t + dt * k, o->fill[3], probe);
        for (int c = 0; c < 4; c++)
            sum[c] += probe[c];
    }
    for (int c = 0; c < 4; c++)
        rgba[c] = sum[c] / (float)n;
}

/* Out of line, as tex_lookup() is to the bench (link-time optimisation
 * would inline it into the bench's loop): both sides pay one call. */
__attribute__((noinline)) void
texture_floor_lookup(const texture_floor *fl, unsigned file, float s, float t, const tex_derivs *d,
                     const tex_opts *o, float rgba[4])
{
    const floor_file *f = &fl->files[file];
    if (f->info.constant) { /* the system's shortcut, so that both give its bits */
        memcpy(rgba, f->constant_rgba, sizeof f->constant_rgba);
        if (f->info.nchannels == 1 || f->info.nchannels == 3)
            rgba[3] = o->fill[3];
        return;
    }
    float major, minor;
    bool  a_major = tex__footprint((float)f->info.width, (float)f->info.height, d, &major, &minor);
    switch (o->filter) {
    case TEX_FILTER_CLOSEST: {
        const floor_level *lv =
            &f->levels[tex__nearest_level(f->info.nlevels, tex__log2_fast(major))];
        uint32_t x = wrap(tex__floor_to_int(s * (float)lv->width), lv->width);
        uint32_t y = wrap(tex__floor_to_int(t * (float)lv->height), lv->height);
        texel(f, lv->texels, ((size_t)y * lv->width + x) * f->info.nchannels, o->fill[3], rgba);
        return;
    }
    case TEX_FILTER_TRILINEAR:
        trilinear(f, tex__log2_fast(major), s, t, o->fill[3], rgba);
        return;
    case TEX_FILTER_ANISOTROPIC:
        anisotropic(f, o, d, major, minor, a_major, s, t, rgba);
        return;
    default:
        bilinear(f, tex__nearest_level(f->info.nlevels, tex__log2_fast(major)), s, t, o->fill[3],
                 rgba);
    }
}
