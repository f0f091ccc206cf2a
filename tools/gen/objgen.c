/* objgen: writes the untextured OBJ + MTL benchmark scenes of issue 13,
 * the same byte for byte for a given --seed, so only this recipe is
 * committed (scenes/CMakeLists.txt writes lambert at build time).
 *
 *   lambert      a closed mesh of 69,632 triangles (a UV sphere of 256
 *                segments and 137 rings, its radius displaced by smooth
 *                noise) standing on a floor quad (2 triangles): 69,634 in
 *                all. Lambertian only: the MTL gives Kd (mesh 0.5, floor
 *                0.4) and Ks 0 and nothing else, so render and Embree's
 *                `pathtracer` both see pure diffuse reflection. Vertex
 *                normals are written, so neither loader makes its own.
 *   heightfield  800 x 800 quads of noise terrain, two triangles each:
 *                1,280,000 triangles, Kd only, no normals; for eyelight
 *                throughput (about 45 MB, so generated only on demand).
 *
 * Writes DIR/NAME.obj and DIR/NAME.mtl. The OBJ's first comment lines give
 * the triangle count and a camera that frames the scene, for render
 * (--camera-pos, --look-at, --fov) and for Embree's tutorials (--vp, --vi,
 * --fov). Prints one line:
 *   objgen NAME triangles=N vertices=V obj=DIR/NAME.obj */
#define _POSIX_C_SOURCE 200809L

#include "procgen.h"
#include "tool.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

const char tool_prog[] = "objgen"; /* tool.h: its messages' prefix */

#define PI 3.14159265358979323846f

static const char usage_text[] =
    "usage: objgen [--seed K] lambert|heightfield DIR\n"
    "Writes DIR/NAME.obj and DIR/NAME.mtl for scene NAME (untextured).\n"
    "  --seed K    variant (default 1); the same seed gives the same files\n";

static void *
xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        tool_die("out of memory");
    return p;
}

/* A triangle mesh with one normal per vertex (or none: nrm NULL). */
typedef struct mesh {
    float    *pos, *nrm; /* 3 per vertex */
    uint32_t *idx;       /* 3 per triangle, counter-clockwise seen from outside */
    uint32_t  nv, nt;
} mesh;

static void
mesh_alloc(mesh *m, uint32_t nv, uint32_t nt, int normals)
{
    m->pos = xmalloc(sizeof(float) * 3 * nv);
    m->nrm = normals ? xmalloc(sizeof(float) * 3 * nv) : NULL;
    m->idx = xmalloc(sizeof(uint32_t) * 3 * nt);
    m->nv = nv;
    m->nt = 0;
}

static void
mesh_free(mesh *m)
{
    free(m->pos);
    free(m->nrm);
    free(m->idx);
    *m = (mesh){0};
}

static void
mesh_tri(mesh *m, uint32_t a, uint32_t b, uint32_t c)
{
    m->idx[3 * m->nt] = a;
    m->idx[3 * m->nt + 1] = b;
    m->idx[3 * m->nt + 2] = c;
    m->nt++;
}

/* Vertex normals: the area-weighted average of the faces around each
 * vertex, so a closed mesh shades smoothly across every edge. */
static void
mesh_normals(mesh *m)
{
    memset(m->nrm, 0, sizeof(float) * 3 * m->nv);
    for (uint32_t t = 0; t < m->nt; t++) {
        const uint32_t *ix = &m->idx[3 * t];
        const float    *a = &m->pos[3 * ix[0]], *b = &m->pos[3 * ix[1]], *c = &m->pos[3 * ix[2]];
        float           e1[3], e2[3];
        for (int k = 0; k < 3; k++)
            e1[k] = b[k] - a[k], e2[k] = c[k] - a[k];
        float x[3] = {e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2],
                      e1[0] * e2[1] - e1[1] * e2[0]};
        for (int v = 0; v < 3; v++)
            for (int k = 0; k < 3; k++)
                m->nrm[3 * ix[v] + k] += x[k];
    }
    for (uint32_t v = 0; v < m->nv; v++) {
        float *n = &m->nrm[3 * v];
        float  len = sqrtf(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
        for (int k = 0; k < 3; k++)
            n[k] = len > 0 ? n[k] / len : (k == 1);
    }
}

/* ---- writing ---- */

typedef struct out {
    FILE *f;
    char  path[4096];
} out;

static void
out_open(out *o, const char *dir, const char *name, const char *ext)
{
    snprintf(o->path, sizeof o->path, "%s/%s.%s", dir, name, ext);
    o->f = fopen(o->path, "w");
    if (!o->f)
        tool_die("%s: %s", o->path, strerror(errno));
}

static void
out_close(out *o)
{
    if (ferror(o->f) || fclose(o->f) != 0)
        tool_die("%s: write failed", o->path);
}

/* Vertices of m, numbered from `first` (OBJ counts from 1 across the file),
 * then its faces as group `name` with material `mtl`. */
static void
obj_mesh(out *o, const mesh *m, uint32_t first, const char *name, const char *mtl)
{
    fprintf(o->f, "o %s\n", name);
    for (uint32_t v = 0; v < m->nv; v++) {
        const float *p = &m->pos[3 * v];
        fprintf(o->f, "v %.6f %.6f %.6f\n", p[0], p[1], p[2]);
    }
    for (uint32_t v = 0; m->nrm && v < m->nv; v++) {
        const float *n = &m->nrm[3 * v];
        fprintf(o->f, "vn %.6f %.6f %.6f\n", n[0], n[1], n[2]);
    }
    fprintf(o->f, "usemtl %s\n", mtl);
    for (uint32_t t = 0; t < m->nt; t++) {
        const uint32_t *ix = &m->idx[3 * t];
        uint32_t        a = first + ix[0], b = first + ix[1], c = first + ix[2];
        if (m->nrm)
            fprintf(o->f, "f %u//%u %u//%u %u//%u\n", a, a, b, b, c, c);
        else
            fprintf(o->f, "f %u %u %u\n", a, b, c);
    }
}

/* The OBJ's header: what it is, its triangle count and a camera. */
static void
obj_header(out *o, const char *name, uint64_t seed, uint32_t ntris, const float cam[3],
           const float at[3], float fov)
{
    fprintf(o->f,
            "# objgen %s, seed %llu: %u triangles\n"
            "# camera: render --camera-pos %g,%g,%g --look-at %g,%g,%g --fov %g\n"
            "# camera: pathtracer --vp %g %g %g --vi %g %g %g --fov %g\n"
            "mtllib %s.mtl\n",
            name, (unsigned long long)seed, ntris, cam[0], cam[1], cam[2], at[0], at[1], at[2], fov,
            cam[0], cam[1], cam[2], at[0], at[1], at[2], fov, name);
}

/* ---- the scenes ---- */

enum { SEGS = 256, RINGS = 137 }; /* lambert's sphere: 2 * SEGS * (RINGS - 1) triangles */

/* Smooth noise on the unit sphere, in [0, 1): fbm on the three coordinate
 * planes, so there is no seam and no pole. */
static float
sphere_noise(uint64_t k, const float d[3])
{
    float u[3] = {(d[0] + 1) * 0.5f, (d[1] + 1) * 0.5f, (d[2] + 1) * 0.5f};
    return (procgen_fbm(k, u[0], u[1], 3, 4) + procgen_fbm(k + 16, u[1], u[2], 3, 4) +
            procgen_fbm(k + 32, u[2], u[0], 3, 4)) /
           3;
}

static void
scene_lambert(const char *dir, uint64_t seed)
{
    uint64_t k = procgen_mix64(seed ^ 0x6c616d62657274ULL); /* "lambert" */
    mesh     m;
    uint32_t nring = RINGS - 1; /* rings of vertices between the poles */
    mesh_alloc(&m, SEGS * nring + 2, 2 * SEGS * nring, 1);

    /* Vertex 0 the north pole, then ring by ring from the north, then the
     * south pole; each ring closes on itself, so the mesh is closed. */
    float lo = INFINITY;
    for (uint32_t v = 0; v < m.nv; v++) {
        float d[3];
        if (v == 0 || v == m.nv - 1) {
            d[0] = d[2] = 0, d[1] = v == 0 ? 1 : -1;
        } else {
            uint32_t r = (v - 1) / SEGS, s = (v - 1) % SEGS;
            float    th = PI * (float)(r + 1) / RINGS, ph = 2 * PI * (float)s / SEGS;
            d[0] = sinf(th) * cosf(ph), d[1] = cosf(th), d[2] = -sinf(th) * sinf(ph);
        }
        /* A radius of 1 +- 0.3: lumps a few tenths across. */
        float radius = 1 + 1.2f * (sphere_noise(k, d) - 0.5f);
        for (int c = 0; c < 3; c++)
            m.pos[3 * v + c] = radius * d[c];
        lo = fminf(lo, m.pos[3 * v + 1]);
    }
    for (uint32_t v = 0; v < m.nv; v++)
        m.pos[3 * v + 1] -= lo; /* it stands on the floor, y = 0 */
#define RING(r, s) (1 + (r)*SEGS + (s) % SEGS)
    for (uint32_t s = 0; s < SEGS; s++) {
        mesh_tri(&m, 0, RING(0, s), RING(0, s + 1));
        for (uint32_t r = 0; r + 1 < nring; r++) {
            mesh_tri(&m, RING(r, s), RING(r + 1, s), RING(r + 1, s + 1));
            mesh_tri(&m, RING(r, s), RING(r + 1, s + 1), RING(r, s + 1));
        }
        mesh_tri(&m, m.nv - 1, RING(nring - 1, s + 1), RING(nring - 1, s));
    }
#undef RING
    mesh_normals(&m);

    /* The floor: 16 x 16, up, centred under the mesh. */
    mesh floor;
    mesh_alloc(&floor, 4, 2, 1);
    static const float corners[4][2] = {{-8, -8}, {-8, 8}, {8, 8}, {8, -8}};
    for (int v = 0; v < 4; v++) {
        float *p = &floor.pos[3 * v], *n = &floor.nrm[3 * v];
        p[0] = corners[v][0], p[1] = 0, p[2] = corners[v][1];
        n[0] = 0, n[1] = 1, n[2] = 0;
    }
    mesh_tri(&floor, 0, 1, 2);
    mesh_tri(&floor, 0, 2, 3);

    out obj, mtl;
    out_open(&obj, dir, "lambert", "obj");
    out_open(&mtl, dir, "lambert", "mtl");
    uint32_t ntris = m.nt + floor.nt;
    obj_header(&obj, "lambert", seed, ntris, (float[3]){0, 2.2f, 5}, (float[3]){0, 0.9f, 0}, 45);
    obj_mesh(&obj, &m, 1, "mesh", "mesh");
    obj_mesh(&obj, &floor, 1 + m.nv, "floor", "floor");
    out_close(&obj);
    /* Kd and Ks only: Embree's loader takes a missing Kd as 1 and reads Ns
     * only for Ks; assimp's gives render a specular layer only for Ks > 0. */
    fputs("# objgen lambert: Lambertian only (Kd; Ks 0), no textures\n"
          "newmtl mesh\nKd 0.5 0.5 0.5\nKs 0 0 0\n\n"
          "newmtl floor\nKd 0.4 0.4 0.4\nKs 0 0 0\n",
          mtl.f);
    out_close(&mtl);
    printf("objgen lambert triangles=%u vertices=%u obj=%s\n", ntris, m.nv + floor.nv, obj.path);
    mesh_free(&m);
    mesh_free(&floor);
}

enum { HF = 800 }; /* heightfield quads a side: 2 * HF * HF triangles */

static void
scene_heightfield(const char *dir, uint64_t seed)
{
    uint64_t k = procgen_mix64(seed ^ 0x6865696768746669ULL); /* "heightfi" */
    mesh     m;
    mesh_alloc(&m, (HF + 1) * (HF + 1), 2 * HF * HF, 0);
    /* 20 x 20 units, x along i, z along j, up to 3 high. */
    for (uint32_t j = 0; j <= HF; j++)
        for (uint32_t i = 0; i <= HF; i++) {
            float *p = &m.pos[3 * (j * (HF + 1) + i)];
            float  u = (float)i / HF, v = (float)j / HF;
            p[0] = -10 + 20 * u;
            p[1] = 3 * procgen_fbm(k, u, v, 4, 7);
            p[2] = -10 + 20 * v;
        }
    for (uint32_t j = 0; j < HF; j++)
        for (uint32_t i = 0; i < HF; i++) {
            uint32_t a = j * (HF + 1) + i, b = a + 1, c = a + HF + 1, d = c + 1;
            /* (i, j), (i, j + 1), (i + 1, j + 1): counter-clockwise from +y. */
            mesh_tri(&m, a, c, d);
            mesh_tri(&m, a, d, b);
        }
    out obj, mtl;
    out_open(&obj, dir, "heightfield", "obj");
    out_open(&mtl, dir, "heightfield", "mtl");
    obj_header(&obj, "heightfield", seed, m.nt, (float[3]){0, 9, 14}, (float[3]){0, 0, 0}, 50);
    obj_mesh(&obj, &m, 1, "terrain", "terrain");
    out_close(&obj);
    fputs("# objgen heightfield: Kd only, no textures\n"
          "newmtl terrain\nKd 0.5 0.5 0.5\nKs 0 0 0\n",
          mtl.f);
    out_close(&mtl);
    printf("objgen heightfield triangles=%u vertices=%u obj=%s\n", m.nt, m.nv, obj.path);
    mesh_free(&m);
}

int
main(int argc, char **argv)
{
    static const char *const names[] = {"lambert", "heightfield"};
    static void (*const builds[])(const char *, uint64_t) = {scene_lambert, scene_heightfield};
    uint64_t    seed;
    int         which;
    const char *dir;
    procgen_command_line(argc, argv, usage_text, names, 2, &seed, &which, &dir);
    if (mkdir(dir, 0777) != 0 && errno != EEXIST)
        tool_die("%s: %s", dir, strerror(errno));
    builds[which](dir, seed);
    return 0;
}
