/* scenegen: writes the project's scenes (issue 4) as glTF 2.0: DIR/NAME.gltf,
 * DIR/NAME.bin and their textures under DIR/textures/ (PNG, and EXR for
 * some emissive maps). Everything is painted procedurally and is the same
 * byte for byte for a given --seed, so only this recipe is committed and
 * the build writes the files (scenes/CMakeLists.txt).
 *
 *   default        a ground plane and 8 objects (boxes, UV spheres,
 *                  cylinders), 6 materials with 512x512 base colour textures,
 *                  one with a normal map, one with an emissive EXR; a camera
 *                  and a directional light (KHR_lights_punctual); and
 *                  DIR/sky.exr, its environment (render --envmap).
 *   many-textures  48 objects and a ground, 49 materials with all five PBR
 *                  slots textured by their own files (245 textures,
 *                  128..256 pixels a side): every shading point makes five
 *                  lookups. For timing studies.
 *   udim           a wall of six quads and a sphere whose UVs span
 *                  u in [0, 3), v in [0, 2); base colour
 *                  textures/udim.<UDIM>.png, tiles 1001-1003 and 1011-1013.
 */
#define _POSIX_C_SOURCE 200809L

#include "procgen.h"
#include "tex_exr.h"
#include "tex_image.h"
#include "tool.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

const char tool_prog[] = "scenegen"; /* tool.h: its messages' prefix */

#define PI 3.14159265358979323846f

static const char usage_text[] =
    "usage: scenegen [--seed K] default|many-textures|udim DIR\n"
    "Writes DIR/NAME.gltf, DIR/NAME.bin and DIR/textures/ for scene NAME.\n"
    "  --seed K    variant (default 1); the same seed gives the same files\n";

static void *
xrealloc(void *p, size_t n)
{
    p = realloc(p, n ? n : 1);
    if (!p)
        tool_die("out of memory");
    return p;
}

/* ---- growing byte buffers: the .bin and pieces of JSON ---- */

typedef struct buf {
    char  *p;
    size_t n, cap;
} buf;

static void
buf_add(buf *b, const void *data, size_t n)
{
    if (b->n + n + 1 > b->cap) {
        b->cap = (b->n + n + 1) * 2;
        b->p = xrealloc(b->p, b->cap);
    }
    memcpy(b->p + b->n, data, n);
    b->n += n;
    b->p[b->n] = '\0';
}

static void buf_printf(buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
buf_printf(buf *b, const char *fmt, ...)
{
    char    small[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        tool_die("vsnprintf failed");
    if ((size_t)n < sizeof small) {
        buf_add(b, small, (size_t)n);
        return;
    }
    char *big = xrealloc(NULL, (size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    buf_add(b, big, (size_t)n);
    free(big);
}

/* A JSON string literal: quotes, backslashes and control characters
 * escaped; other bytes (UTF-8 included) as they are. */
static void
buf_json_str(buf *b, const char *s)
{
    buf_add(b, "\"", 1);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            buf_printf(b, "\\%c", c);
        else if (c < 0x20)
            buf_printf(b, "\\u%04x", c);
        else
            buf_add(b, s, 1);
    }
    buf_add(b, "\"", 1);
}

/* A comma before every element of a JSON array but the first. */
static void
buf_sep(buf *b, uint32_t index)
{
    if (index)
        buf_add(b, ",\n", 2);
}

/* ---- meshes ---- */

typedef struct mesh {
    float    *pos, *nrm, *uv; /* 3, 3, 2 per vertex */
    uint32_t *idx;
    uint32_t  nv, ni, capv, capi;
} mesh;

static uint32_t
mesh_vertex(mesh *m, const float p[3], const float n[3], float u, float v)
{
    if (m->nv == m->capv) {
        m->capv = m->capv ? m->capv * 2 : 64;
        m->pos = xrealloc(m->pos, sizeof(float) * 3 * m->capv);
        m->nrm = xrealloc(m->nrm, sizeof(float) * 3 * m->capv);
        m->uv = xrealloc(m->uv, sizeof(float) * 2 * m->capv);
    }
    float len = sqrtf(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
    for (int i = 0; i < 3; i++) {
        m->pos[m->nv * 3 + i] = p[i];
        m->nrm[m->nv * 3 + i] = n[i] / len;
    }
    m->uv[m->nv * 2] = u;
    m->uv[m->nv * 2 + 1] = v;
    return m->nv++;
}

/* Adds triangle (a, b, c), wound counter-clockwise seen from the side its
 * vertex normals face (swapped if need be); a degenerate one (a pole of a
 * sphere) is dropped. */
static void
mesh_tri(mesh *m, uint32_t a, uint32_t b, uint32_t c)
{
    const float *pa = m->pos + a * 3, *pb = m->pos + b * 3, *pc = m->pos + c * 3;
    float        e1[3], e2[3], x[3];
    for (int i = 0; i < 3; i++)
        e1[i] = pb[i] - pa[i], e2[i] = pc[i] - pa[i];
    x[0] = e1[1] * e2[2] - e1[2] * e2[1];
    x[1] = e1[2] * e2[0] - e1[0] * e2[2];
    x[2] = e1[0] * e2[1] - e1[1] * e2[0];
    float area = sqrtf(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]);
    if (area < 1e-9f)
        return;
    float facing = 0;
    for (int i = 0; i < 3; i++)
        facing += x[i] * (m->nrm[a * 3 + i] + m->nrm[b * 3 + i] + m->nrm[c * 3 + i]);
    if (facing < 0) {
        uint32_t t = b;
        b = c;
        c = t;
    }
    if (m->ni + 3 > m->capi) {
        m->capi = m->capi ? m->capi * 2 : 192;
        m->idx = xrealloc(m->idx, sizeof(uint32_t) * m->capi);
    }
    m->idx[m->ni++] = a;
    m->idx[m->ni++] = b;
    m->idx[m->ni++] = c;
}

static void
mesh_free(mesh *m)
{
    free(m->pos);
    free(m->nrm);
    free(m->uv);
    free(m->idx);
    *m = (mesh){0};
}

/* A quad from corner c spanned by edges a (along +u) and b (up the image,
 * -v), facing n; UVs (u0, v0) at the top-left to (u1, v1) bottom-right. */
static void
mesh_quad(mesh *m, const float c[3], const float a[3], const float b[3], const float n[3], float u0,
          float v0, float u1, float v1)
{
    float p[4][3];
    for (int i = 0; i < 3; i++) {
        p[0][i] = c[i];               /* bottom-left */
        p[1][i] = c[i] + a[i];        /* bottom-right */
        p[2][i] = c[i] + a[i] + b[i]; /* top-right */
        p[3][i] = c[i] + b[i];        /* top-left */
    }
    uint32_t i0 = mesh_vertex(m, p[0], n, u0, v1), i1 = mesh_vertex(m, p[1], n, u1, v1);
    uint32_t i2 = mesh_vertex(m, p[2], n, u1, v0), i3 = mesh_vertex(m, p[3], n, u0, v0);
    mesh_tri(m, i0, i1, i2);
    mesh_tri(m, i0, i2, i3);
}

/* A box centred on the origin with half extents h; each face maps the whole
 * texture, upright on the sides. */
static void
mesh_box(mesh *m, const float h[3])
{
    static const float faces[6][2][3] = {
        /* normal, up the image */
        {{1, 0, 0}, {0, 1, 0}},  {{-1, 0, 0}, {0, 1, 0}}, {{0, 0, 1}, {0, 1, 0}},
        {{0, 0, -1}, {0, 1, 0}}, {{0, 1, 0}, {0, 0, -1}}, {{0, -1, 0}, {0, 0, 1}},
    };
    for (int f = 0; f < 6; f++) {
        const float *n = faces[f][0], *up = faces[f][1];
        /* right = up x n, so right x up = n: the quad faces out. */
        float r[3] = {up[1] * n[2] - up[2] * n[1], up[2] * n[0] - up[0] * n[2],
                      up[0] * n[1] - up[1] * n[0]};
        float c[3], a[3], b[3];
        for (int i = 0; i < 3; i++) {
            a[i] = 2 * r[i] * h[i];
            b[i] = 2 * up[i] * h[i];
            c[i] = n[i] * h[i] - r[i] * h[i] - up[i] * h[i];
        }
        mesh_quad(m, c, a, b, n, 0, 0, 1, 1);
    }
}

/* A UV sphere of radius r: u around from +x, v from the north pole (the
 * image's top) to the south; (u, v) scaled to [0, su] x [0, sv]. */
static void
mesh_sphere(mesh *m, float r, int segs, int rings, float su, float sv, float u_off, float v_off)
{
    uint32_t base = m->nv;
    for (int i = 0; i <= rings; i++) {
        float th = PI * i / rings;
        for (int j = 0; j <= segs; j++) {
            float ph = 2 * PI * j / segs;
            float n[3] = {sinf(th) * cosf(ph), cosf(th), -sinf(th) * sinf(ph)};
            float p[3] = {r * n[0], r * n[1], r * n[2]};
            mesh_vertex(m, p, n, u_off + su * j / segs, v_off + sv * i / rings);
        }
    }
    for (int i = 0; i < rings; i++)
        for (int j = 0; j < segs; j++) {
            uint32_t a = base + (uint32_t)(i * (segs + 1) + j), b = a + 1;
            uint32_t c = a + (uint32_t)(segs + 1), d = c + 1;
            mesh_tri(m, a, c, d);
            mesh_tri(m, a, d, b);
        }
}

/* A cylinder of radius r from y = -hh to +hh, with caps: the side maps the
 * texture once around, each cap a disc of it. */
static void
mesh_cylinder(mesh *m, float r, float hh, int segs)
{
    uint32_t base = m->nv;
    for (int j = 0; j <= segs; j++) {
        float ph = 2 * PI * j / segs, n[3] = {cosf(ph), 0, -sinf(ph)};
        float top[3] = {r * n[0], hh, r * n[2]}, bot[3] = {r * n[0], -hh, r * n[2]};
        mesh_vertex(m, top, n, (float)j / segs, 0);
        mesh_vertex(m, bot, n, (float)j / segs, 1);
    }
    for (int j = 0; j < segs; j++) {
        uint32_t a = base + 2 * (uint32_t)j;
        mesh_tri(m, a, a + 1, a + 3);
        mesh_tri(m, a, a + 3, a + 2);
    }
    for (int cap = 0; cap < 2; cap++) {
        float    y = cap ? -hh : hh, n[3] = {0, cap ? -1.0f : 1.0f, 0}, ctr[3] = {0, y, 0};
        uint32_t c = mesh_vertex(m, ctr, n, 0.5f, 0.5f), first = m->nv;
        for (int j = 0; j <= segs; j++) {
            float ph = 2 * PI * j / segs, p[3] = {r * cosf(ph), y, -r * sinf(ph)};
            mesh_vertex(m, p, n, 0.5f + 0.5f * cosf(ph), 0.5f + 0.5f * sinf(ph));
        }
        for (uint32_t j = 0; j < (uint32_t)segs; j++)
            mesh_tri(m, c, first + j, first + j + 1);
    }
}

/* A horizontal square of edge `size` at y = 0, facing up, the texture
 * repeated `rep` times across. */
static void
mesh_plane(mesh *m, float size, float rep)
{
    float c[3] = {-size / 2, 0, size / 2}, a[3] = {size, 0, 0}, b[3] = {0, 0, -size};
    float n[3] = {0, 1, 0};
    mesh_quad(m, c, a, b, n, 0, 0, rep, rep);
}

/* ---- textures ---- */

typedef enum pattern {
    PAT_BRICKS,
    PAT_CHECKER,
    PAT_NOISE,
    PAT_STRIPES,
    PAT_RINGS,
    PAT_DOTS,
    PAT_COUNT
} pattern;

/* What a texture holds; each map is derived from one pattern value. */
typedef enum map_kind { MAP_COLOR, MAP_MR, MAP_NORMAL, MAP_EMISSIVE, MAP_OCCLUSION } map_kind;

static float
clamp01(float x)
{
    return x < 0 ? 0 : x > 1 ? 1 : x;
}

static float
fract(float x)
{
    return x - floorf(x);
}

/* The pattern's value in [0, 1] at (u, v) in [0, 1)^2; tiles seamlessly. */
static float
pattern_value(pattern p, uint64_t key, float u, float v)
{
    switch (p) {
    case PAT_BRICKS: {
        float bu = u * 4 + ((int)floorf(v * 8) & 1) * 0.5f, bv = v * 8;
        float fu = fract(bu), fv = fract(bv);
        if (fu < 0.04f || fv < 0.08f)
            return 0.05f * procgen_noise(key, u, v, 64);
        float tint = procgen_lattice(key + 1, (int64_t)floorf(bu) & 3, (int64_t)floorf(bv));
        return 0.45f + 0.35f * tint + 0.2f * procgen_fbm(key + 2, u, v, 16, 3);
    }
    case PAT_CHECKER: {
        int   cx = (int)floorf(u * 8), cy = (int)floorf(v * 8);
        float n = procgen_fbm(key, u, v, 8, 3);
        return ((cx + cy) & 1) ? 0.85f + 0.15f * n : 0.15f * n;
    }
    case PAT_NOISE: /* marble */
        return 0.5f + 0.5f * sinf(2 * PI * (2 * u + 4 * procgen_fbm(key, u, v, 4, 4)));
    case PAT_STRIPES: {
        float s = 0.5f + 0.5f * sinf(2 * PI * 6 * (u + v));
        return clamp01((s - 0.5f) * 4 + 0.5f) * (0.8f + 0.2f * procgen_noise(key, u, v, 32));
    }
    case PAT_RINGS: { /* wood */
        float du = u - 0.5f, dv = (v - 0.5f) * 0.3f;
        float r = sqrtf(du * du + dv * dv) * 14 + 1.5f * procgen_fbm(key, u, v, 4, 3);
        return powf(fract(r), 3);
    }
    case PAT_DOTS: {
        float fu = fract(u * 6) - 0.5f, fv = fract(v * 6) - 0.5f;
        float d = sqrtf(fu * fu + fv * fv);
        return clamp01((0.32f - d) * 20) * (0.8f + 0.2f * procgen_noise(key, u, v, 16));
    }
    case PAT_COUNT:
        break;
    }
    return 0;
}

typedef struct tex_desc {
    map_kind kind;
    pattern  pat;
    uint64_t key;
    uint32_t size;
    float    c0[3], c1[3]; /* colours at pattern values 0 and 1 (colour, emissive) */
    bool     exr;          /* half-float linear EXR instead of 8-bit sRGB PNG */
} tex_desc;

/* One texel of the map, RGB in [0, 1] (an emissive EXR may exceed 1). */
static void
texel(const tex_desc *d, uint32_t x, uint32_t y, float rgb[3])
{
    float u = (x + 0.5f) / d->size, v = (y + 0.5f) / d->size;
    float h = pattern_value(d->pat, d->key, u, v);
    switch (d->kind) {
    case MAP_COLOR:
        for (int c = 0; c < 3; c++)
            rgb[c] = clamp01(d->c0[c] + (d->c1[c] - d->c0[c]) * h +
                             0.08f * (procgen_lattice(d->key + 5 + (uint64_t)c, x, y) - 0.5f));
        break;
    case MAP_MR: /* glTF: G roughness, B metallic */
        rgb[0] = 1;
        rgb[1] = 0.25f + 0.7f * (1 - h);
        rgb[2] = h > 0.6f ? 0.9f : 0.05f;
        break;
    case MAP_NORMAL: {
        /* Tangent space from the pattern as a height field: x along +u,
         * y up the image (-v), as glTF's bitangent. */
        float e = 1.0f / d->size, k = 0.08f * d->size / 32;
        float dhdu = (pattern_value(d->pat, d->key, fract(u + e), v) -
                      pattern_value(d->pat, d->key, fract(u - e + 1), v)) *
                     k;
        float dhdv = (pattern_value(d->pat, d->key, u, fract(v + e)) -
                      pattern_value(d->pat, d->key, u, fract(v - e + 1))) *
                     k;
        float n[3] = {-dhdu, dhdv, 1}, len = sqrtf(n[0] * n[0] + n[1] * n[1] + 1);
        for (int c = 0; c < 3; c++)
            rgb[c] = 0.5f + 0.5f * n[c] / len;
        break;
    }
    case MAP_EMISSIVE: { /* dark but for the pattern's brightest parts */
        float g = clamp01((h - 0.6f) * 2.5f);
        for (int c = 0; c < 3; c++)
            rgb[c] = d->c1[c] * g * (d->exr ? 4.0f : 1.0f);
        break;
    }
    case MAP_OCCLUSION: {
        float o = 0.35f + 0.65f * sqrtf(h);
        rgb[0] = rgb[1] = rgb[2] = o;
        break;
    }
    }
}

static void
texture_write(const char *path, const tex_desc *d)
{
    char      err[TEX_ERR_LEN];
    tex_image img;
    if (tex_image_alloc(&img, d->size, d->size, 3, d->exr ? TEX_TYPE_HALF : TEX_TYPE_U8, err) !=
        TEX_OK)
        tool_die("%s: %s", path, err);
    img.srgb = !d->exr;
    /* Data maps are stored as is; colour is authored in sRGB. */
    for (uint32_t y = 0; y < d->size; y++)
        for (uint32_t x = 0; x < d->size; x++) {
            float  rgb[3] = {0, 0, 0};
            size_t at = ((size_t)y * d->size + x) * 3;
            texel(d, x, y, rgb);
            for (int c = 0; c < 3; c++) {
                if (d->exr)
                    ((uint16_t *)img.pixels)[at + (size_t)c] =
                        tex_float_to_half(tex_srgb_to_linear(clamp01(rgb[c] / 4)) * 4);
                else
                    ((uint8_t *)img.pixels)[at + (size_t)c] =
                        (uint8_t)lrintf(clamp01(rgb[c]) * 255);
            }
        }
    tex_result r =
        d->exr ? tex_exr_write_scanline(path, &img, NULL, 0, err) : tex_png_write(path, &img, err);
    tex_image_free(&img);
    if (r != TEX_OK)
        tool_die("%s: %s", path, err);
}

/* ---- the glTF document ---- */

typedef struct gltf {
    const char *dir, *name;
    buf         bin;
    buf         views, accessors, meshes, nodes, materials, textures, images, cameras;
    uint32_t    nviews, naccessors, nmeshes, nnodes, nmaterials, ntextures, ncameras;
    uint32_t    light_node; /* UINT32_MAX: none */
    uint64_t    ntris, texture_bytes;
} gltf;

/* Appends data to the .bin (4-byte aligned) as a buffer view; returns its
 * index. */
static uint32_t
gltf_view(gltf *g, const void *data, size_t n, int target)
{
    static const char zero[4] = {0};
    buf_add(&g->bin, zero, (4 - g->bin.n % 4) % 4);
    buf_sep(&g->views, g->nviews);
    buf_printf(&g->views,
               "{\"buffer\": 0, \"byteOffset\": %zu, \"byteLength\": %zu, \"target\": %d}",
               g->bin.n, n, target);
    buf_add(&g->bin, data, n);
    return g->nviews++;
}

static uint32_t
gltf_accessor(gltf *g, uint32_t view, int ctype, uint32_t count, const char *type, const float *min,
              const float *max)
{
    buf_sep(&g->accessors, g->naccessors);
    buf_printf(&g->accessors,
               "{\"bufferView\": %u, \"componentType\": %d, \"count\": %u, \"type\": \"%s\"", view,
               ctype, count, type);
    if (min && max)
        buf_printf(&g->accessors, ", \"min\": [%.9g, %.9g, %.9g], \"max\": [%.9g, %.9g, %.9g]",
                   (double)min[0], (double)min[1], (double)min[2], (double)max[0], (double)max[1],
                   (double)max[2]);
    buf_add(&g->accessors, "}", 1);
    return g->naccessors++;
}

/* Adds mesh m with material `mat` as a glTF mesh of one primitive; returns
 * the mesh's index. */
static uint32_t
gltf_mesh(gltf *g, const mesh *m, uint32_t mat, const char *name)
{
    enum { ARRAY = 34962, ELEMENTS = 34963, FLOAT = 5126, UINT = 5125 };
    float min[3] = {INFINITY, INFINITY, INFINITY}, max[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (uint32_t i = 0; i < m->nv; i++)
        for (int c = 0; c < 3; c++) {
            min[c] = fminf(min[c], m->pos[i * 3 + (uint32_t)c]);
            max[c] = fmaxf(max[c], m->pos[i * 3 + (uint32_t)c]);
        }
    uint32_t pos = gltf_accessor(g, gltf_view(g, m->pos, sizeof(float) * 3 * m->nv, ARRAY), FLOAT,
                                 m->nv, "VEC3", min, max);
    uint32_t nrm = gltf_accessor(g, gltf_view(g, m->nrm, sizeof(float) * 3 * m->nv, ARRAY), FLOAT,
                                 m->nv, "VEC3", NULL, NULL);
    uint32_t uv = gltf_accessor(g, gltf_view(g, m->uv, sizeof(float) * 2 * m->nv, ARRAY), FLOAT,
                                m->nv, "VEC2", NULL, NULL);
    uint32_t idx = gltf_accessor(g, gltf_view(g, m->idx, sizeof(uint32_t) * m->ni, ELEMENTS), UINT,
                                 m->ni, "SCALAR", NULL, NULL);
    buf_sep(&g->meshes, g->nmeshes);
    buf_add(&g->meshes, "{\"name\": ", 9);
    buf_json_str(&g->meshes, name);
    buf_printf(&g->meshes,
               ", \"primitives\": [{\"attributes\": {\"POSITION\": %u, \"NORMAL\": %u, "
               "\"TEXCOORD_0\": %u}, \"indices\": %u, \"material\": %u, \"mode\": 4}]}",
               pos, nrm, uv, idx, mat);
    g->ntris += m->ni / 3;
    return g->nmeshes++;
}

/* A node placing mesh `mesh_index` at t, turned by `yaw` radians about +y and
 * scaled by s. */
static void
gltf_node_mesh(gltf *g, uint32_t mesh_index, const float t[3], float yaw, float s)
{
    buf_sep(&g->nodes, g->nnodes);
    buf_printf(&g->nodes,
               "{\"mesh\": %u, \"translation\": [%.6g, %.6g, %.6g], \"rotation\": [0, %.9g, 0, "
               "%.9g], \"scale\": [%.6g, %.6g, %.6g]}",
               mesh_index, (double)t[0], (double)t[1], (double)t[2], (double)sinf(yaw / 2),
               (double)cosf(yaw / 2), (double)s, (double)s, (double)s);
    g->nnodes++;
}

/* The column-major matrix of a frame at `eye` whose -z looks at `at`, +y up
 * as far as `up` allows: how glTF cameras and lights point. */
static void
look_at(const float eye[3], const float at[3], const float up[3], float m[16])
{
    float f[3], r[3], u[3];
    for (int i = 0; i < 3; i++)
        f[i] = at[i] - eye[i];
    float fl = sqrtf(f[0] * f[0] + f[1] * f[1] + f[2] * f[2]);
    for (int i = 0; i < 3; i++)
        f[i] /= fl;
    r[0] = f[1] * up[2] - f[2] * up[1];
    r[1] = f[2] * up[0] - f[0] * up[2];
    r[2] = f[0] * up[1] - f[1] * up[0];
    float rl = sqrtf(r[0] * r[0] + r[1] * r[1] + r[2] * r[2]);
    for (int i = 0; i < 3; i++)
        r[i] /= rl;
    u[0] = r[1] * f[2] - r[2] * f[1];
    u[1] = r[2] * f[0] - r[0] * f[2];
    u[2] = r[0] * f[1] - r[1] * f[0];
    for (int i = 0; i < 3; i++) {
        m[i] = r[i];
        m[4 + i] = u[i];
        m[8 + i] = -f[i];
        m[12 + i] = eye[i];
    }
    m[3] = m[7] = m[11] = 0;
    m[15] = 1;
}

static void
gltf_node_matrix(gltf *g, const char *what, uint32_t index, const float m[16])
{
    buf_sep(&g->nodes, g->nnodes);
    buf_printf(&g->nodes, "{%s%u%s, \"matrix\": [", what, index,
               strcmp(what, "\"camera\": ") == 0 ? "" : "}}");
    for (int i = 0; i < 16; i++)
        buf_printf(&g->nodes, "%s%.9g", i ? ", " : "", (double)m[i]);
    buf_add(&g->nodes, "]}", 2);
    g->nnodes++;
}

static void
gltf_camera(gltf *g, const float eye[3], const float at[3], float yfov)
{
    float m[16], up[3] = {0, 1, 0};
    look_at(eye, at, up, m);
    buf_sep(&g->cameras, g->ncameras);
    buf_printf(&g->cameras,
               "{\"type\": \"perspective\", \"perspective\": {\"yfov\": %.6g, \"aspectRatio\": "
               "1.3333333, \"znear\": 0.05, \"zfar\": 500}}",
               (double)yfov);
    gltf_node_matrix(g, "\"camera\": ", g->ncameras++, m);
}

/* The one directional light, shining from `from` towards `at`. */
static void
gltf_sun(gltf *g, const float from[3], const float at[3])
{
    float m[16], up[3] = {0, 0, -1};
    look_at(from, at, up, m);
    g->light_node = g->nnodes;
    gltf_node_matrix(g, "\"extensions\": {\"KHR_lights_punctual\": {\"light\": ", 0, m);
}

/* Writes texture d to DIR/textures/FILE and adds it as an image and a
 * texture; returns the texture's index. `file` is used as given in the
 * URI, so it must need no escaping (scenegen's names are plain). */
static uint32_t
gltf_texture(gltf *g, const char *file, const tex_desc *d)
{
    char path[4096], uri[512];
    snprintf(uri, sizeof uri, "textures/%s", file);
    snprintf(path, sizeof path, "%s/%s", g->dir, uri);
    texture_write(path, d);
    struct stat st;
    if (stat(path, &st) == 0)
        g->texture_bytes += (uint64_t)st.st_size;
    buf_sep(&g->images, g->ntextures);
    buf_add(&g->images, "{\"uri\": ", 8);
    buf_json_str(&g->images, uri);
    buf_add(&g->images, "}", 1);
    buf_sep(&g->textures, g->ntextures);
    buf_printf(&g->textures, "{\"sampler\": 0, \"source\": %u}", g->ntextures);
    return g->ntextures++;
}

#define NO_TEX UINT32_MAX

typedef struct mat_desc {
    const char *name;
    float       base[3];
    float       metallic, roughness;
    float       emissive[3];
    uint32_t    base_tex, mr_tex, normal_tex, emissive_tex, occlusion_tex; /* NO_TEX: none */
} mat_desc;

static uint32_t
gltf_material(gltf *g, const mat_desc *m)
{
    buf *b = &g->materials;
    buf_sep(b, g->nmaterials);
    buf_add(b, "{\"name\": ", 9);
    buf_json_str(b, m->name);
    buf_printf(b,
               ", \"pbrMetallicRoughness\": {\"baseColorFactor\": [%.6g, %.6g, %.6g, 1], "
               "\"metallicFactor\": %.6g, \"roughnessFactor\": %.6g",
               (double)m->base[0], (double)m->base[1], (double)m->base[2], (double)m->metallic,
               (double)m->roughness);
    if (m->base_tex != NO_TEX)
        buf_printf(b, ", \"baseColorTexture\": {\"index\": %u}", m->base_tex);
    if (m->mr_tex != NO_TEX)
        buf_printf(b, ", \"metallicRoughnessTexture\": {\"index\": %u}", m->mr_tex);
    buf_add(b, "}", 1);
    if (m->normal_tex != NO_TEX)
        buf_printf(b, ", \"normalTexture\": {\"index\": %u, \"scale\": 1}", m->normal_tex);
    if (m->occlusion_tex != NO_TEX)
        buf_printf(b, ", \"occlusionTexture\": {\"index\": %u, \"strength\": 1}", m->occlusion_tex);
    if (m->emissive_tex != NO_TEX)
        buf_printf(b, ", \"emissiveTexture\": {\"index\": %u}", m->emissive_tex);
    if (m->emissive[0] > 0 || m->emissive[1] > 0 || m->emissive[2] > 0)
        buf_printf(b, ", \"emissiveFactor\": [%.6g, %.6g, %.6g]", (double)m->emissive[0],
                   (double)m->emissive[1], (double)m->emissive[2]);
    buf_add(b, "}", 1);
    return g->nmaterials++;
}

static void
write_file(const char *path, const void *data, size_t n)
{
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "wb");
    if (!f)
        tool_die("%s: %s", tmp, strerror(errno));
    if (fwrite(data, 1, n, f) != n || fclose(f) != 0) {
        int e = errno;
        remove(tmp);
        tool_die("%s: %s", tmp, strerror(e));
    }
    if (rename(tmp, path) != 0) {
        int e = errno;
        remove(tmp);
        tool_die("%s: %s", path, strerror(e));
    }
}

/* Writes DIR/NAME.bin and then DIR/NAME.gltf (last, so a build that sees
 * the .gltf sees a whole scene). */
static void
gltf_finish(gltf *g)
{
    char path[4096], bin_name[512];
    snprintf(bin_name, sizeof bin_name, "%s.bin", g->name);
    snprintf(path, sizeof path, "%s/%s", g->dir, bin_name);
    write_file(path, g->bin.p, g->bin.n);

    buf j = {0};
    buf_printf(&j, "{\n\"asset\": {\"version\": \"2.0\", \"generator\": \"scenegen\"},\n");
    if (g->light_node != UINT32_MAX)
        buf_printf(&j, "\"extensionsUsed\": [\"KHR_lights_punctual\"],\n"
                       "\"extensions\": {\"KHR_lights_punctual\": {\"lights\": [{\"type\": "
                       "\"directional\", \"color\": [1, 0.95, 0.9], \"intensity\": 3}]}},\n");
    buf_printf(&j, "\"scene\": 0,\n\"scenes\": [{\"nodes\": [");
    for (uint32_t i = 0; i < g->nnodes; i++)
        buf_printf(&j, "%s%u", i ? ", " : "", i);
    buf_printf(&j, "]}],\n\"nodes\": [\n%s\n],\n", g->nodes.p);
    if (g->ncameras)
        buf_printf(&j, "\"cameras\": [\n%s\n],\n", g->cameras.p);
    buf_printf(&j, "\"meshes\": [\n%s\n],\n", g->meshes.p);
    buf_printf(&j, "\"materials\": [\n%s\n],\n", g->materials.p);
    if (g->ntextures)
        buf_printf(&j,
                   "\"samplers\": [{\"magFilter\": 9729, \"minFilter\": 9987, \"wrapS\": 10497, "
                   "\"wrapT\": 10497}],\n\"textures\": [\n%s\n],\n\"images\": [\n%s\n],\n",
                   g->textures.p, g->images.p);
    buf_printf(&j, "\"accessors\": [\n%s\n],\n", g->accessors.p);
    buf_printf(&j, "\"bufferViews\": [\n%s\n],\n", g->views.p);
    buf_printf(&j, "\"buffers\": [{\"uri\": ");
    buf_json_str(&j, bin_name);
    buf_printf(&j, ", \"byteLength\": %zu}]\n}\n", g->bin.n);
    snprintf(path, sizeof path, "%s/%s.gltf", g->dir, g->name);
    write_file(path, j.p, j.n);
    printf("scenegen: %s: %u meshes, %" PRIu64 " triangles, %u materials, %u textures (%.1f MB), "
           "%zu bytes of geometry\n",
           path, g->nmeshes, g->ntris, g->nmaterials, g->ntextures, g->texture_bytes / 1e6,
           g->bin.n);
    free(j.p);
    buf *all[] = {&g->bin,       &g->views,    &g->accessors, &g->meshes, &g->nodes,
                  &g->materials, &g->textures, &g->images,    &g->cameras};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        free(all[i]->p);
}

/* ---- the scenes ---- */

/* A random number in [0, 1) from the seed and a counter: the scene's dice. */
static float
dice(uint64_t seed, uint64_t n)
{
    return (float)(procgen_mix64(seed * 0x9E3779B97F4A7C15ULL + n) >> 40) * 0x1p-24f;
}

/* An RGB colour of hue h, saturation s and value v, all in [0, 1]. */
static void
hsv(float h, float s, float v, float rgb[3])
{
    static const float n[3] = {5, 3, 1};
    for (int c = 0; c < 3; c++) {
        float k = fmodf(n[c] + h * 6, 6);
        rgb[c] = v - v * s * fmaxf(0, fminf(fminf(k, 4 - k), 1));
    }
}

static void
scene_default(gltf *g, uint64_t seed)
{
    /* Six materials: the ground's checker, and five for the objects. */
    static const char   *names[6] = {"ground", "bricks", "marble", "stripes", "wood", "lamp"};
    static const pattern pats[6] = {PAT_CHECKER, PAT_BRICKS, PAT_NOISE,
                                    PAT_STRIPES, PAT_RINGS,  PAT_DOTS};
    /* A path tracer should have something to show: polished marble,
     * brushed-looking striped metal, a satin ground. */
    static const float roughness[6] = {0.45f, 0.8f, 0.12f, 0.3f, 0.6f, 0.6f};
    static const float metallic[6] = {0, 0, 0, 1, 0, 0};
    uint32_t           mats[6];
    for (int i = 0; i < 6; i++) {
        tex_desc d = {.kind = MAP_COLOR,
                      .pat = pats[i],
                      .key = procgen_mix64(seed * 100 + (uint64_t)i),
                      .size = 512};
        hsv(dice(seed, (uint64_t)i * 2), 0.5f, 0.35f, d.c0);
        hsv(dice(seed, (uint64_t)i * 2 + 1), 0.35f, 0.95f, d.c1);
        char file[64];
        snprintf(file, sizeof file, "%s_basecolor.png", names[i]);
        mat_desc m = {.name = names[i],
                      .base = {1, 1, 1},
                      .metallic = metallic[i],
                      .roughness = roughness[i],
                      .base_tex = gltf_texture(g, file, &d),
                      .mr_tex = NO_TEX,
                      .normal_tex = NO_TEX,
                      .emissive_tex = NO_TEX,
                      .occlusion_tex = NO_TEX};
        if (pats[i] == PAT_BRICKS) {
            tex_desc n = d;
            n.kind = MAP_NORMAL;
            snprintf(file, sizeof file, "%s_normal.png", names[i]);
            m.normal_tex = gltf_texture(g, file, &n);
        }
        if (pats[i] == PAT_DOTS) {
            tex_desc e = d;
            e.kind = MAP_EMISSIVE;
            e.exr = true;
            e.size = 256;
            hsv(dice(seed, 99), 0.6f, 1.0f, e.c1);
            snprintf(file, sizeof file, "%s_emissive.exr", names[i]);
            m.emissive_tex = gltf_texture(g, file, &e);
            m.emissive[0] = m.emissive[1] = m.emissive[2] = 1;
        }
        mats[i] = gltf_material(g, &m);
    }

    mesh m = {0};
    mesh_plane(&m, 24, 6);
    gltf_node_mesh(g, gltf_mesh(g, &m, mats[0], "ground"), (float[3]){0, 0, 0}, 0, 1);
    mesh_free(&m);

    /* Eight objects on a loose ring around the origin. */
    static const struct {
        char  shape; /* b: box, s: sphere, c: cylinder */
        int   mat;
        float size[3];
    } objs[8] = {
        {'b', 1, {0.9f, 0.9f, 0.9f}}, {'s', 2, {1.0f, 0, 0}},  {'c', 4, {0.7f, 1.1f, 0}},
        {'b', 3, {1.4f, 0.5f, 0.6f}}, {'s', 5, {0.6f, 0, 0}},  {'c', 3, {0.45f, 1.6f, 0}},
        {'b', 4, {0.5f, 1.3f, 0.5f}}, {'s', 1, {0.75f, 0, 0}},
    };
    for (int i = 0; i < 8; i++) {
        char  name[32];
        float lift;
        switch (objs[i].shape) {
        case 'b':
            mesh_box(&m, objs[i].size);
            lift = objs[i].size[1];
            snprintf(name, sizeof name, "box%d", i);
            break;
        case 's':
            mesh_sphere(&m, objs[i].size[0], 48, 24, 1, 1, 0, 0);
            lift = objs[i].size[0];
            snprintf(name, sizeof name, "sphere%d", i);
            break;
        default:
            mesh_cylinder(&m, objs[i].size[0], objs[i].size[1], 48);
            lift = objs[i].size[1];
            snprintf(name, sizeof name, "cylinder%d", i);
            break;
        }
        float ang = 2 * PI * (i + 0.3f * dice(seed, 200 + (uint64_t)i)) / 8;
        float rad = 2.2f + 1.6f * dice(seed, 300 + (uint64_t)i) + (i & 1) * 1.2f;
        float t[3] = {rad * cosf(ang), lift, rad * sinf(ang) - 0.5f};
        gltf_node_mesh(g, gltf_mesh(g, &m, mats[objs[i].mat], name), t,
                       2 * PI * dice(seed, 400 + (uint64_t)i), 1);
        mesh_free(&m);
    }
    gltf_camera(g, (float[3]){0, 6.5f, 12.5f}, (float[3]){0, 0.6f, 0}, 0.7f);
    gltf_sun(g, (float[3]){4, 10, 6}, (float[3]){0, 0, 0});
}

static void
scene_many_textures(gltf *g, uint64_t seed)
{
    enum { COLS = 8, ROWS = 6 };
    static const char    *slots[5] = {"basecolor", "metalrough", "normal", "emissive", "occlusion"};
    static const uint32_t sizes[3] = {128, 192, 256};
    for (int o = 0; o <= COLS * ROWS; o++) { /* the last is the ground */
        bool     ground = o == COLS * ROWS;
        char     name[32];
        uint32_t tex[5];
        uint64_t k = (uint64_t)o * 16;
        pattern  pat = (pattern)(procgen_mix64(seed * 7919 + (uint64_t)o) % PAT_COUNT);
        if (ground)
            snprintf(name, sizeof name, "ground");
        else
            snprintf(name, sizeof name, "m%02d", o);
        for (int s = 0; s < 5; s++) {
            tex_desc d = {.kind = (map_kind)s,
                          .pat = pat,
                          .key = procgen_mix64(seed * 1000003 + k + (uint64_t)s),
                          .size = sizes[procgen_mix64(seed + k + (uint64_t)s) % 3]};
            hsv(dice(seed, k + 1), 0.55f, 0.3f, d.c0);
            hsv(dice(seed, k + 2), 0.4f, 0.95f, d.c1);
            /* Every fourth emissive map is a half-float EXR. */
            d.exr = s == MAP_EMISSIVE && o % 4 == 0;
            if (s == MAP_EMISSIVE)
                hsv(dice(seed, k + 3), 0.7f, 1, d.c1);
            char file[64];
            snprintf(file, sizeof file, "%s_%s.%s", name, slots[s], d.exr ? "exr" : "png");
            tex[s] = gltf_texture(g, file, &d);
        }
        float    e = 0.3f + 0.5f * dice(seed, k + 4);
        mat_desc md = {.name = name,
                       .base = {1, 1, 1},
                       .metallic = 1,
                       .roughness = 1,
                       .emissive = {e, e, e},
                       .base_tex = tex[0],
                       .mr_tex = tex[1],
                       .normal_tex = tex[2],
                       .emissive_tex = tex[3],
                       .occlusion_tex = tex[4]};
        uint32_t mat = gltf_material(g, &md);

        mesh m = {0};
        if (ground) {
            mesh_plane(&m, 30, 8);
            gltf_node_mesh(g, gltf_mesh(g, &m, mat, "ground"), (float[3]){0, 0, 0}, 0, 1);
            mesh_free(&m);
            break;
        }
        int   col = o % COLS, row = o / COLS;
        float lift;
        switch (o % 3) {
        case 0:
            mesh_box(&m, (float[3]){0.7f, 0.7f, 0.7f});
            lift = 0.7f;
            break;
        case 1:
            mesh_sphere(&m, 0.8f, 32, 16, 1, 1, 0, 0);
            lift = 0.8f;
            break;
        default:
            mesh_cylinder(&m, 0.6f, 0.8f, 32);
            lift = 0.8f;
            break;
        }
        float t[3] = {(col - (COLS - 1) / 2.0f) * 2.4f, lift, (row - (ROWS - 1) / 2.0f) * 2.4f};
        gltf_node_mesh(g, gltf_mesh(g, &m, mat, name), t, 2 * PI * dice(seed, k + 5), 1);
        mesh_free(&m);
    }
    gltf_camera(g, (float[3]){0, 19, 18.5f}, (float[3]){0, 0, 0.8f}, 0.7f);
    gltf_sun(g, (float[3]){5, 12, 8}, (float[3]){0, 0, 0});
}

static void
scene_udim(gltf *g, uint64_t seed)
{
    /* Tiles 1001-1003 (v in [0, 1)) and 1011-1013 (v in [1, 2)): each its
     * own hue and pattern. */
    for (int row = 0; row < 2; row++)
        for (int col = 0; col < 3; col++) {
            int      tile = 1001 + col + 10 * row, i = row * 3 + col;
            tex_desc d = {.kind = MAP_COLOR,
                          .pat = (pattern)(i % PAT_COUNT),
                          .key = procgen_mix64(seed * 31 + (uint64_t)tile),
                          .size = 256};
            hsv(i / 6.0f, 0.8f, 0.25f, d.c0);
            hsv(i / 6.0f, 0.5f, 1.0f, d.c1);
            char path[4096];
            snprintf(path, sizeof path, "%s/textures/udim.%d.png", g->dir, tile);
            texture_write(path, &d);
            struct stat st;
            if (stat(path, &st) == 0)
                g->texture_bytes += (uint64_t)st.st_size;
        }
    /* The image's URI is written as is: assimp 5.2 hands it to the importer
     * without percent-decoding, and the texture system resolves "<UDIM>". */
    buf_add(&g->images, "{\"uri\": ", 8);
    buf_json_str(&g->images, "textures/udim.<UDIM>.png");
    buf_add(&g->images, "}", 1);
    buf_printf(&g->textures, "{\"sampler\": 0, \"source\": 0}");
    g->ntextures = 1;
    mat_desc md = {.name = "udim",
                   .base = {1, 1, 1},
                   .roughness = 0.5f,
                   .base_tex = 0,
                   .mr_tex = NO_TEX,
                   .normal_tex = NO_TEX,
                   .emissive_tex = NO_TEX,
                   .occlusion_tex = NO_TEX};
    uint32_t mat = gltf_material(g, &md);

    /* The wall: one quad per tile, row v in [1, 2) below row [0, 1), so each
     * tile's image stands upright; UVs kept a hair inside their tile, so no
     * interpolated u or v lands on the next tile's edge. */
    mesh        m = {0};
    const float eps = 1.0f / 512, n[3] = {0, 0, 1};
    for (int row = 0; row < 2; row++)
        for (int col = 0; col < 3; col++) {
            float c[3] = {-3.0f + 2 * col, 2.0f - 2 * row, 0}, a[3] = {2, 0, 0}, b[3] = {0, 2, 0};
            mesh_quad(&m, c, a, b, n, col + eps, row + eps, col + 1 - eps, row + 1 - eps);
        }
    gltf_node_mesh(g, gltf_mesh(g, &m, mat, "wall"), (float[3]){0, 0, -1}, 0, 1);
    mesh_free(&m);
    /* A sphere wrapped once around by all six tiles. */
    mesh_sphere(&m, 1.2f, 64, 32, 3 - 2 * eps, 2 - 2 * eps, eps, eps);
    gltf_node_mesh(g, gltf_mesh(g, &m, mat, "sphere"), (float[3]){0, 1.2f, 2.2f}, 0.4f, 1);
    mesh_free(&m);
    gltf_camera(g, (float[3]){0, 2.4f, 8.5f}, (float[3]){0, 1.3f, 0}, 0.7f);
    gltf_sun(g, (float[3]){3, 6, 8}, (float[3]){0, 0, 0});
}

static void
make_dir(const char *path)
{
    if (mkdir(path, 0777) != 0 && errno != EEXIST)
        tool_die("%s: %s", path, strerror(errno));
}

/* DIR/sky.exr, the default scene's environment (render --envmap): a
 * lat-long map, +y up, 512 x 256 float RGB, of a clear sky (blue at the
 * zenith, pale at the horizon) over a grey-brown ground. No sun: the
 * scene's directional light is the sun. */
static void
sky_write(const char *dir)
{
    enum { W = 512, H = 256 };
    char      err[TEX_ERR_LEN], path[4096];
    tex_image img;
    if (tex_image_alloc(&img, W, H, 3, TEX_TYPE_FLOAT, err) != TEX_OK)
        tool_die("sky.exr: %s", err);
    static const float zenith[3] = {0.20f, 0.36f, 0.80f}, horizon[3] = {0.85f, 0.90f, 1.00f};
    static const float ground[3] = {0.16f, 0.14f, 0.12f};
    for (int j = 0; j < H; j++) {
        float y = cosf(3.14159265f * ((float)j + 0.5f) / H); /* the direction's height */
        for (int i = 0; i < W; i++) {
            float *px = (float *)img.pixels + ((size_t)j * W + (size_t)i) * 3;
            for (int c = 0; c < 3; c++) {
                float up = y > 0 ? sqrtf(y) : 0;
                /* A hazy horizon: the ground fades in over some 20 degrees. */
                float below = y < 0 ? fminf(1, -y * 3) : 0;
                float sky = horizon[c] + (zenith[c] - horizon[c]) * up;
                px[c] = sky + (ground[c] - sky) * below;
            }
        }
    }
    snprintf(path, sizeof path, "%s/sky.exr", dir);
    if (tex_exr_write_scanline(path, &img, NULL, 0, err) != TEX_OK)
        tool_die("%s: %s", path, err);
    tex_image_free(&img);
}

int
main(int argc, char **argv)
{
    static const char *const names[] = {"default", "many-textures", "udim"};
    static void (*const builds[])(gltf *, uint64_t) = {scene_default, scene_many_textures,
                                                       scene_udim};
    uint64_t    seed;
    int         which;
    const char *dir;
    procgen_command_line(argc, argv, usage_text, names, 3, &seed, &which, &dir);
    char tdir[4096];
    snprintf(tdir, sizeof tdir, "%s/textures", dir);
    make_dir(dir);
    make_dir(tdir);
    gltf g = {.dir = dir, .name = names[which], .light_node = UINT32_MAX};
    builds[which](&g, seed);
    gltf_finish(&g);
    if (builds[which] == scene_default)
        sky_write(dir);
    return 0;
}
