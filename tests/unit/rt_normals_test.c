/* renderer/scene_normals.c: smooth normals for meshes that have none.
 * Each case writes a scene file, imports it through assimp twice, once
 * with assimp's own GenSmoothNormals step and once without, and checks
 * rt__smooth_normals() on the second against
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
        const unsigned   *ix = m->mFaces[f].mIndices;
        struct aiVector3D a = m->mVertices[ix[0]], b = m->mVertices[ix[1]], c = m->mVertices[ix[2]];
        float e1[3] = {b.x - a.x, b.y - a.y, b.z - a.z}, e2[3] = {c.x - a.x, c.y - a.y, c.z - a.z};
        float x = e1[1] * e2[2] - e1[2] * e2[1], y = e1[2] * e2[0] - e1[0] * e2[2],
              z = e1[0] * e2[1] - e1[1] * e2[0], len = sqrtf(x * x + y * y + z * z);
        if (len > 0) {
            float inv = 1.0f / len;
            x *= inv, y *= inv, z *= inv;
        }
        for (int k = 0; k < 3; k++)
            fn[ix[k]] = (struct aiVector3D){x, y, z};
    }
    float lo[3] = {1e10f, 1e10f, 1e10f}, hi[3] = {-1e10f, -1e10f, -1e10f};
    for (unsigned v = 0; v < n; v++)
        for (int k = 0; k < 3; k++) {
            float p = (&m->mVertices[v].x)[k];
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

/* The file at `path`: every mesh's normals from rt__smooth_normals()
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
        struct aiVector3D *n = NULL, *b = brute_force(m);
        CHECK(rt__smooth_normals(m, &n) == RT_OK);
        REQUIRE(n);
        unsigned off_assimp = 0, off_brute = 0;
        for (unsigned v = 0; v < m->mNumVertices; v++) {
            const float *x = &n[v].x, *y = &a->mNormals[v].x, *z = &b[v].x;
            for (int k = 0; k < 3; k++) {
                off_assimp += !(fabsf(x[k] - y[k]) <= 1e-5f);
                off_brute += memcmp(&x[k], &z[k], sizeof x[k]) != 0;
            }
        }
        CHECK_EQ_INT(off_assimp, 0);
        CHECK_EQ_INT(off_brute, 0);
        free(n), free(b);
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

/* Untrusted input: a file that piles a third of its corners onto one
 * point, with 300 more just beyond eps around it (each may gather, and
 * looks into the pile's cell), must not cost much more than one whose
 * corners are spread out (assimp's search, or a grid scanned per vertex,
 * would be quadratic here). The pile's work is bounded by the gatherers near a cell
 * (scene_normals.c), so the two take about the same time; the case fails
 * above 8x. */
static double
smooth_seconds(int piled)
{
    enum { TRIS = 60000 };
    struct aiMesh m = {0};
    m.mNumVertices = 3 * TRIS;
    m.mNumFaces = TRIS;
    m.mVertices = calloc(m.mNumVertices, sizeof *m.mVertices);
    m.mFaces = calloc(m.mNumFaces, sizeof *m.mFaces);
    unsigned *ix = malloc(m.mNumVertices * sizeof *ix);
    REQUIRE(m.mVertices && m.mFaces && ix);
    for (unsigned v = 0; v < m.mNumVertices; v++) {
        ix[v] = v;
        float r = 100 * uniform(), a = 6.2831853f * uniform(), b = 3.1415927f * uniform();
        m.mVertices[v] = (struct aiVector3D){r * cosf(a), 100 * uniform(), r * sinf(a)};
        if (piled && v % 3 == 0)
            m.mVertices[v] = (struct aiVector3D){50, 50, 50};
        else if (piled && v % 3 == 1 && v < 900) /* 1.5 eps from the pile, eps = 0.03 */
            m.mVertices[v] =
                (struct aiVector3D){50 + 0.045f * sinf(b) * cosf(a), 50 + 0.045f * cosf(b),
                                    50 + 0.045f * sinf(b) * sinf(a)};
    }
    for (unsigned f = 0; f < TRIS; f++)
        m.mFaces[f] = (struct aiFace){3, &ix[3 * f]};
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    struct aiVector3D *n = NULL;
    CHECK(rt__smooth_normals(&m, &n) == RT_OK);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (piled && n) { /* every piled corner has one normal: the gathered sum's */
        for (unsigned v = 3; v < m.mNumVertices; v += 3)
            CHECK(memcmp(&n[v], &n[0], sizeof n[0]) == 0);
    }
    free(n), free(ix), free(m.mVertices), free(m.mFaces);
    return (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
}

static void
case_pile(const char *arg)
{
    (void)arg;
    double spread = smooth_seconds(0), piled = smooth_seconds(1);
    spread = fmin(spread, smooth_seconds(0));
    fprintf(stderr, "spread %.4f s, piled %.4f s\n", spread, piled);
    CHECK(piled < 8 * spread + 0.05);
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
                                     {"pile", case_pile},     {NULL, NULL}};

int
main(int argc, char **argv)
{
    atexit(cleanup);
    return rt_test_main(cases, argc, argv);
}
