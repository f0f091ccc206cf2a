/* renderer/scene_normals.c: smooth normals for meshes that have none.
 * Each case writes a scene file, imports it through assimp twice, once
 * with assimp's own GenSmoothNormals step and once without, and checks
 * rt__normals_smooth() on the second against
 * - assimp's normals, vertex by vertex, to within 1e-5: they may sum in
 *   another order, and where many normals nearly cancel the rounding grows
 *   (7.6e-7 seen, 23 at one point); a vertex gathered into the wrong group
 *   would move its normal by 1/23 or more;
 * - a brute-force O(n^2) statement of the same rule, summed in the same
 *   order as the grid does it, bit for bit. */
#include "check.h"
#include "scene_build.h"

#include <assimp/cimport.h>
#include <assimp/postprocess.h>

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* What rt_scene_load() asks of assimp before the scene build (scene.c). */
enum {
    IMPORT = aiProcess_Triangulate | aiProcess_SortByPType | aiProcess_ValidateDataStructure |
             aiProcess_FindInvalidData | aiProcess_FlipUVs
};

static char dir[64], path[128];

static void
scene_write(const char *name, const char *text)
{
    if (!dir[0]) {
        snprintf(dir, sizeof dir, "/tmp/rt_normals_XXXXXX");
        REQUIRE(mkdtemp(dir));
    }
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    REQUIRE(f);
    fputs(text, f);
    REQUIRE(fclose(f) == 0);
}

static const struct aiScene *
import(unsigned flags)
{
    struct aiPropertyStore *props = aiCreatePropertyStore();
    aiSetImportPropertyInteger(props, AI_CONFIG_PP_SBP_REMOVE,
                               aiPrimitiveType_POINT | aiPrimitiveType_LINE);
    const struct aiScene *s = aiImportFileExWithProperties(path, flags, NULL, props);
    aiReleasePropertyStore(props);
    if (!s)
        fprintf(stderr, "%s: %s\n", path, aiGetErrorString());
    REQUIRE(s && s->mNumMeshes > 0);
    return s;
}

/* The rule of scene_normals.c's header, vertex by vertex over every other:
 * gathered vertices summed in the grid's order (by cell, x then y then z,
 * then by index), so that the result must be the same bits. */
static uint32_t
cell_along(float v, float lo, float eps)
{
    double c = floor(((double)v - lo) / (4 * (double)eps));
    return c > 0 ? (uint32_t)c : 0;
}

static int
by_cell(const void *a, const void *b, void *ctx)
{
    const uint32_t *ka = (const uint32_t *)ctx + 4 * *(const uint32_t *)a,
                   *kb = (const uint32_t *)ctx + 4 * *(const uint32_t *)b;
    for (int k = 0; k < 4; k++)
        if (ka[k] != kb[k])
            return ka[k] < kb[k] ? -1 : 1;
    return 0;
}

static struct aiVector3D *
brute_force(const struct aiMesh *m)
{
    unsigned           n = m->mNumVertices;
    struct aiVector3D *fn = calloc(n, sizeof *fn), *out = calloc(n, sizeof *out);
    bool              *had = calloc(n, sizeof *had);
    uint32_t          *order = malloc(n * sizeof *order), *key = malloc(4 * n * sizeof *key);
    REQUIRE(fn && out && had && order && key);
    for (unsigned f = 0; f < m->mNumFaces; f++) {
        const unsigned *ix = m->mFaces[f].mIndices;
        unsigned        k = m->mFaces[f].mNumIndices;
        if (k < 3) { /* a point or a line: NaN, which no sum takes */
            for (unsigned i = 0; i < k; i++)
                fn[ix[i]].x = NAN;
            continue;
        }
        struct aiVector3D a = m->mVertices[ix[0]], b = m->mVertices[ix[1]],
                          c = m->mVertices[ix[k - 1]];
        float e1[3] = {b.x - a.x, b.y - a.y, b.z - a.z}, e2[3] = {c.x - a.x, c.y - a.y, c.z - a.z};
        float x = e1[1] * e2[2] - e1[2] * e2[1], y = e1[2] * e2[0] - e1[0] * e2[2],
              z = e1[0] * e2[1] - e1[1] * e2[0], len = sqrtf(x * x + y * y + z * z);
        if (len > 0) {
            float inv = 1.0f / len;
            x *= inv, y *= inv, z *= inv;
        }
        for (unsigned i = 0; i < k; i++)
            fn[ix[i]] = (struct aiVector3D){x, y, z};
    }
    float lo[3] = {1e10f, 1e10f, 1e10f}, hi[3] = {-1e10f, -1e10f, -1e10f};
    for (unsigned v = 0; v < n; v++)
        for (int k = 0; k < 3; k++) {
            float p = (&m->mVertices[v].x)[k];
            if (p != p)
                continue; /* NaN: out of the bounds */
            lo[k] = lo[k] < p ? lo[k] : p;
            hi[k] = p < hi[k] ? hi[k] : p;
        }
    float d[3] = {hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]};
    float eps = sqrtf(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]) * 1e-4f;
    for (unsigned v = 0; v < n; v++) {
        for (int k = 0; k < 3; k++)
            key[4 * v + k] = cell_along((&m->mVertices[v].x)[k], lo[k], eps);
        key[4 * v + 3] = v;
        order[v] = v;
    }
    qsort_r(order, n, sizeof *order, by_cell, key);
    for (unsigned i = 0; i < n; i++) {
        if (had[i])
            continue;
        struct aiVector3D p = m->mVertices[i], sum = {0, 0, 0};
        for (unsigned o = 0; o < n; o++) {
            unsigned          j = order[o];
            struct aiVector3D q = m->mVertices[j];
            float             dx = q.x - p.x, dy = q.y - p.y, dz = q.z - p.z;
            if (!(dx * dx + dy * dy + dz * dz < eps * eps))
                continue;
            if (fn[j].x == fn[j].x)
                sum.x += fn[j].x, sum.y += fn[j].y, sum.z += fn[j].z;
        }
        float len = sqrtf(sum.x * sum.x + sum.y * sum.y + sum.z * sum.z);
        if (len > 0) {
            float inv = 1.0f / len;
            sum.x *= inv, sum.y *= inv, sum.z *= inv;
        }
        for (unsigned j = 0; j < n; j++) {
            struct aiVector3D q = m->mVertices[j];
            float             dx = q.x - p.x, dy = q.y - p.y, dz = q.z - p.z;
            if (dx * dx + dy * dy + dz * dz < eps * eps)
                out[j] = sum, had[j] = true;
        }
    }
    free(fn), free(had), free(order), free(key);
    return out;
}

/* rt__normals_smooth() on m, checked bit for bit against the brute force;
 * the normals are the caller's to free. */
static struct aiVector3D *
smooth_checked(const struct aiMesh *m)
{
    struct aiVector3D *n = NULL, *b = brute_force(m);
    CHECK(rt__normals_smooth(m, &n) == RT_OK);
    REQUIRE(n);
    unsigned off = 0;
    for (unsigned v = 0; v < m->mNumVertices; v++)
        off += memcmp(&n[v], &b[v], sizeof n[v]) != 0;
    CHECK_EQ_INT(off, 0);
    free(b);
    return n;
}

/* The file at `path`: every mesh's normals from rt__normals_smooth()
 * against assimp's and against the brute force. */
static void
check_file(void)
{
    const struct aiScene *ours = import(IMPORT),
                         *theirs = import(IMPORT | aiProcess_GenSmoothNormals);
    REQUIRE(ours->mNumMeshes == theirs->mNumMeshes);
    for (unsigned i = 0; i < ours->mNumMeshes; i++) {
        const struct aiMesh *m = ours->mMeshes[i], *a = theirs->mMeshes[i];
        REQUIRE(!m->mNormals && a->mNormals && m->mNumVertices == a->mNumVertices);
        struct aiVector3D *n = smooth_checked(m);
        unsigned           off_assimp = 0;
        for (unsigned v = 0; v < m->mNumVertices; v++)
            for (int k = 0; k < 3; k++)
                off_assimp += !(fabsf((&n[v].x)[k] - (&a->mNormals[v].x)[k]) <= 1e-5f);
        CHECK_EQ_INT(off_assimp, 0);
        free(n);
    }
    aiReleaseImport(ours);
    aiReleaseImport(theirs);
}

static uint64_t rng = 0x9E3779B97F4A7C15u;

static float
uniform(void) /* [0, 1) */
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (float)(rng >> 40) * 0x1p-24f;
}

typedef struct text {
    char  *s;
    size_t len, cap;
} text;

static void __attribute__((format(printf, 2, 3))) put(text *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char line[256];
    int  k = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    REQUIRE(k > 0 && (size_t)k < sizeof line);
    if (t->len + (size_t)k + 1 > t->cap) {
        t->cap = 2 * (t->len + (size_t)k + 1);
        REQUIRE((t->s = realloc(t->s, t->cap)));
    }
    memcpy(t->s + t->len, line, (size_t)k + 1);
    t->len += (size_t)k;
}

/* A height field of 24 x 24 quads, its OBJ faces naming shared `v` lines:
 * the importer makes a vertex per corner, and smoothing joins them. */
static void
case_grid(const char *arg)
{
    (void)arg;
    text t = {0};
    enum { N = 25 };
    for (int y = 0; y < N; y++)
        for (int x = 0; x < N; x++)
            put(&t, "v %d %.6f %d\n", x, 3 * uniform(), y);
    for (int y = 0; y + 1 < N; y++)
        for (int x = 0; x + 1 < N; x++) {
            int a = y * N + x + 1;
            put(&t, "f %d %d %d %d\n", a, a + N, a + N + 1, a + 1);
        }
    scene_write("grid.obj", t.s);
    check_file();
    free(t.s);
}

/* Positions closer than eps (1e-4 of the diagonal, here 1.7e-4) smooth as
 * one, and the order of gathering counts: along x, corners at 0, 0.6 eps
 * and 1.2 eps; the first gathers the second, then the third (not within
 * eps of the first) gathers the second again and overwrites its normal.
 * One more pair is 3 eps apart and stays apart. A degenerate triangle
 * adds a zero normal. */
static void
case_near(const char *arg)
{
    (void)arg;
    const double e = 1.7320508e-4; /* the diagonal of the unit cube * 1e-4 */
    char         s[1024];
    snprintf(s, sizeof s,
             "v 0 0 0\nv 1 1 1\nv 0 1 0\n"                /* 1-3: reaches the unit cube */
             "v %.9f 0 0\nv 0 0 1\nv 1 0 0.5\n"           /* 4-6: a corner at 0.6 e */
             "v %.9f 0 0\nv 0.5 -1e-3 1\nv 0.2 0.9 0\n"   /* 7-9: a corner at 1.2 e */
             "v 0.5 0.5 0.5\nv 1 0 0\nv 0 0.5 1\n"        /* 10-12 */
             "v %.9f 0.5 0.5\nv 0.2 1 0.2\nv 0 0.1 0.9\n" /* 13-15: 3 e from 10 */
             "v 0.3 0.3 0.3\nv 0.3 0.3 0.3\nv 0.6 0.6 0.6\n"
             "f 1 2 3\nf 4 5 6\nf 7 8 9\nf 10 11 12\nf 13 14 15\nf 16 17 18\n",
             0.6 * e, 1.2 * e, 0.5 + 3 * e);
    scene_write("near.obj", s);
    check_file();
}

/* An indexed PLY: a fan of four triangles around one shared vertex, which
 * keeps the last face's normal (assimp writes each face's normal over the
 * previous one at a shared vertex before it smooths). */
static void
case_shared(const char *arg)
{
    (void)arg;
    scene_write("fan.ply", "ply\nformat ascii 1.0\nelement vertex 5\n"
                           "property float x\nproperty float y\nproperty float z\n"
                           "element face 4\nproperty list uchar int vertex_indices\n"
                           "end_header\n"
                           "0 0 0\n1 0 0.2\n0 1 0.4\n-1 0 0.1\n0 -1 0.9\n"
                           "3 0 1 2\n3 0 2 3\n3 0 3 4\n3 0 4 1\n");
    check_file();
}

/* 3,000 triangles whose corners come from 500 points, some of them moved
 * by less than eps: heavy sharing, in every direction. */
static void
case_random(const char *arg)
{
    (void)arg;
    text  t = {0};
    float pts[500][3];
    for (int i = 0; i < 500; i++)
        for (int k = 0; k < 3; k++)
            pts[i][k] = 10 * uniform();
    for (int f = 0; f < 3000; f++)
        for (int c = 0; c < 3; c++) {
            const float *p = pts[(int)(500 * uniform())];
            float        j = uniform() < 0.2f ? 1e-4f * uniform() : 0; /* eps is 1.7e-3 */
            put(&t, "v %.9g %.9g %.9g\n", p[0] + j, p[1], p[2] - j);
        }
    for (int f = 0; f < 3000; f++)
        put(&t, "f %d %d %d\n", 3 * f + 1, 3 * f + 2, 3 * f + 3);
    scene_write("random.obj", t.s);
    check_file();
    free(t.s);
}

/* A mesh built in memory: `nv` positions, the faces given as index lists
 * (`sizes[f]` indices each, taken in turn from `ix`). */
typedef struct mesh {
    struct aiMesh  m;
    struct aiFace *faces;
    unsigned      *ix;
} mesh;

static void
mesh_make(mesh *o, const struct aiVector3D *pos, unsigned nv, const unsigned *sizes,
          const unsigned *ix, unsigned nfaces)
{
    unsigned nix = 0;
    for (unsigned f = 0; f < nfaces; f++)
        nix += sizes[f];
    *o = (mesh){.m = {.mNumVertices = nv, .mNumFaces = nfaces}};
    o->m.mVertices = malloc((nv ? nv : 1) * sizeof *pos);
    o->faces = o->m.mFaces = malloc((nfaces ? nfaces : 1) * sizeof *o->faces);
    o->ix = malloc((nix ? nix : 1) * sizeof *o->ix);
    REQUIRE(o->m.mVertices && o->faces && o->ix);
    if (nv) /* memcpy() takes no NULL, even for 0 bytes */
        memcpy(o->m.mVertices, pos, nv * sizeof *pos);
    if (nix)
        memcpy(o->ix, ix, nix * sizeof *ix);
    for (unsigned f = 0, at = 0; f < nfaces; at += sizes[f++])
        o->faces[f] = (struct aiFace){sizes[f], &o->ix[at]};
}

static void
mesh_free(mesh *o)
{
    free(o->m.mVertices), free(o->faces), free(o->ix);
}

/* Pairs 0.94 eps apart that straddle a cell's side (cells are 4 eps wide
 * from the bounds' low corner), along each axis both ways and along a
 * diagonal across all three at once, at cells near both ends of the
 * bounds: each pair must be gathered as one (the same normal for both),
 * which a grid that looked at too few cells would miss. Unused NaN and
 * finite vertices after them must change nothing. */
static void
case_cells(const char *arg)
{
    (void)arg;
    enum { MAXV = 1024 };
    struct aiVector3D pos[MAXV];
    unsigned          sizes[MAXV], ix[3 * MAXV], nv = 0, nf = 0, pairs[64][2], np = 0;
    pos[nv++] = (struct aiVector3D){0, 0, 0}; /* the bounds: the unit cube */
    pos[nv++] = (struct aiVector3D){1, 1, 1};
    pos[nv++] = (struct aiVector3D){1, 0, 1};
    float     eps = sqrtf(3.0f) * 1e-4f, w = 4 * eps; /* as rt__normals_smooth() has it */
    const int boundaries[] = {2, 700, 1440};          /* 1443 cells span the cube */
    for (int b = 0; b < 3; b++)
        for (int axis = 0; axis < 4; axis++) /* x, y, z, then the diagonal */
            for (int sign = -1; sign <= 1; sign += 2) {
                float at = (float)boundaries[b] * w, c = 0.2f + 0.02f * (float)np,
                      d = 0.94f * eps * (float)sign;
                float step = axis == 3 ? d / sqrtf(3.0f) : d;
                float a[3] = {c, c, c}, e[3];
                for (int k = 0; k < 3; k++)
                    if (axis == k || axis == 3)
                        a[k] = at - step / 2;
                for (int k = 0; k < 3; k++)
                    e[k] = axis == k || axis == 3 ? a[k] + step : a[k];
                for (int k = 0; k < 3; k++) /* inside the cube: eps stays as above */
                    REQUIRE(a[k] > 0 && a[k] < 1 && e[k] > 0 && e[k] < 1);
                pairs[np][0] = nv, pos[nv++] = (struct aiVector3D){a[0], a[1], a[2]};
                pairs[np][1] = nv, pos[nv++] = (struct aiVector3D){e[0], e[1], e[2]};
                np++;
            }
    /* Each corner of a pair in a triangle of its own, the two with other
     * normals (that do not cancel): (a, q1, q2) and (b, q1, q3). */
    pos[nv++] = (struct aiVector3D){0.3f, 0.2f, 0.9f};
    pos[nv++] = (struct aiVector3D){0.7f, 0.9f, 0.1f};
    pos[nv++] = (struct aiVector3D){0.9f, 0.8f, 0.2f};
    for (unsigned p = 0; p < np; p++)
        for (unsigned k = 0; k < 2; k++) {
            sizes[nf++] = 3;
            ix[3 * nf - 3] = pairs[p][k], ix[3 * nf - 2] = nv - 3, ix[3 * nf - 1] = nv - 2 + k;
        }
    sizes[nf++] = 3, ix[3 * nf - 3] = 0, ix[3 * nf - 2] = 1, ix[3 * nf - 1] = 2;
    pos[nv++] = (struct aiVector3D){NAN, 0.5f, 0.5f}; /* unused: out of the bounds */
    pos[nv++] = (struct aiVector3D){0.5f, 0.5f, 0.5f};
    mesh o;
    mesh_make(&o, pos, nv, sizes, ix, nf);
    struct aiVector3D *n = smooth_checked(&o.m);
    for (unsigned p = 0; p < np; p++) {
        CHECK(memcmp(&n[pairs[p][0]], &n[pairs[p][1]], sizeof *n) == 0);
        CHECK(n[pairs[p][0]].x != 0 || n[pairs[p][0]].y != 0 || n[pairs[p][0]].z != 0);
    }
    CHECK(n[nv - 2].x == 0 && n[nv - 2].y == 0 && n[nv - 2].z == 0); /* NaN: none */
    free(n);
    mesh_free(&o);
}

/* No vertices; every vertex at one point (eps 0: nothing is within it, so
 * every normal is 0, as in assimp); a line and a point among triangles
 * (their vertices' normals are NaN, which no sum takes); an infinite
 * unused vertex (eps * eps overflows: every normal 0). */
static void
case_degenerate(const char *arg)
{
    (void)arg;
    struct aiVector3D *n = NULL;
    mesh               o;
    mesh_make(&o, NULL, 0, NULL, NULL, 0);
    CHECK(rt__normals_smooth(&o.m, &n) == RT_OK && n);
    free(n);
    mesh_free(&o);

    const struct aiVector3D same[4] = {{1, 2, 3}, {1, 2, 3}, {1, 2, 3}, {1, 2, 3}};
    const unsigned          tri2[2] = {3, 3}, ix2[6] = {0, 1, 2, 1, 2, 3};
    mesh_make(&o, same, 4, tri2, ix2, 2);
    n = smooth_checked(&o.m);
    for (unsigned v = 0; v < 4; v++)
        CHECK(n[v].x == 0 && n[v].y == 0 && n[v].z == 0);
    free(n);
    mesh_free(&o);

    const struct aiVector3D mixed[6] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0},
                                        {1, 1, 0}, {2, 2, 1}, {1, 0, 0}};
    const unsigned          sizes[4] = {3, 2, 1, 3}, ix[9] = {0, 1, 2, 3, 4, 5, 1, 3, 2};
    mesh_make(&o, mixed, 6, sizes, ix, 4);
    n = smooth_checked(&o.m);
    CHECK(n[4].x == 0 && n[4].y == 0 && n[4].z == 0); /* only in the line */
    CHECK(fabsf(n[0].z - 1) < 1e-6f);                 /* the triangles' normal, +z */
    free(n);
    mesh_free(&o);

    const struct aiVector3D far[4] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {INFINITY, 0, 0}};
    const unsigned          tri[1] = {3}, ix1[3] = {0, 1, 2};
    mesh_make(&o, far, 4, tri, ix1, 1);
    CHECK(rt__normals_smooth(&o.m, &n) == RT_OK && n);
    for (unsigned v = 0; v < 4; v++)
        CHECK(n[v].x == 0 && n[v].y == 0 && n[v].z == 0);
    free(n);
    mesh_free(&o);
}

/* Untrusted input: piled positions must not make the work grow faster
 * than the vertex count (assimp's search, or a grid scanned once per
 * vertex, would be quadratic here). Three meshes of 180,000 corners:
 * - spread out at random (the baseline);
 * - a third of them at one point, with 300 more just beyond eps around it
 *   (each gathers, and looks into the pile's cell);
 * - the same pile at the low corner of the bounds, in cell 0, where a NaN
 *   coordinate's cell index falls; then 60,000 unused NaN vertices, each
 *   of which would scan the pile were NaN vertices to gather (9.7 s when
 *   they did), and one unused finite vertex, which bounds that a NaN could
 *   reset (as assimp's) would take for all of them.
 * The pile's work is bounded by the gatherers near a cell (scene_normals.c),
 * so each takes about the baseline's CPU time; the case fails above 8x. */
static double
smooth_seconds(int kind)
{
    enum { TRIS = 60000, NANS = 60000 };
    unsigned      nv = 3 * TRIS + (kind == 2 ? NANS + 1 : 0);
    struct aiMesh m = {.mNumVertices = nv, .mNumFaces = TRIS};
    m.mVertices = calloc(nv, sizeof *m.mVertices);
    m.mFaces = calloc(m.mNumFaces, sizeof *m.mFaces);
    unsigned *ix = malloc(3 * TRIS * sizeof *ix);
    REQUIRE(m.mVertices && m.mFaces && ix);
    for (unsigned v = 0; v < 3 * TRIS; v++) {
        ix[v] = v;
        float r = 100 * uniform(), a = 6.2831853f * uniform(), b = 3.1415927f * uniform();
        m.mVertices[v] = (struct aiVector3D){r * cosf(a), 100 * uniform(), r * sinf(a)};
        float at = kind == 2 ? -100 : 50, y = kind == 2 ? 0 : 50; /* the low corner: cell 0 */
        if (kind && v % 3 == 0)
            m.mVertices[v] = (struct aiVector3D){at, y, at};
        else if (kind && v % 3 == 1 && v < 900) /* 1.5 eps from the pile, eps = 0.03 */
            m.mVertices[v] =
                (struct aiVector3D){at + 0.045f * sinf(b) * cosf(a), y + 0.045f * cosf(b),
                                    at + 0.045f * sinf(b) * sinf(a)};
    }
    for (unsigned v = 3 * TRIS; v < nv; v++)
        m.mVertices[v] = (struct aiVector3D){NAN, NAN, NAN};
    if (kind == 2)
        m.mVertices[nv - 1] = (struct aiVector3D){0, 50, 0};
    for (unsigned f = 0; f < TRIS; f++)
        m.mFaces[f] = (struct aiFace){3, &ix[3 * f]};
    struct timespec t0, t1; /* this thread's CPU time: other load does not count */
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
    struct aiVector3D *n = NULL;
    CHECK(rt__normals_smooth(&m, &n) == RT_OK);
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
    if (kind && n) { /* every piled corner has one normal: the gathered sum's */
        for (unsigned v = 3; v < 3 * TRIS; v += 3)
            CHECK(memcmp(&n[v], &n[0], sizeof n[0]) == 0);
    }
    free(n), free(ix), free(m.mVertices), free(m.mFaces);
    return (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
}

static void
case_pile(const char *arg)
{
    (void)arg;
    double spread = fmin(smooth_seconds(0), smooth_seconds(0));
    double piled = smooth_seconds(1), nans = smooth_seconds(2);
    fprintf(stderr, "spread %.4f s, piled %.4f s, piled with NaNs %.4f s\n", spread, piled, nans);
    CHECK(piled < 8 * spread + 0.05);
    CHECK(nans < 8 * spread + 0.05);
}

static void
cleanup(void)
{
    if (dir[0]) {
        char cmd[128];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        if (system(cmd) != 0)
            fprintf(stderr, "could not remove %s\n", dir);
    }
}

static const rt_test_case cases[] = {{"grid", case_grid},     {"near", case_near},
                                     {"shared", case_shared}, {"random", case_random},
                                     {"cells", case_cells},   {"degenerate", case_degenerate},
                                     {"pile", case_pile},     {NULL, NULL}};

int
main(int argc, char **argv)
{
    atexit(cleanup);
    return rt_test_main(cases, argc, argv);
}
