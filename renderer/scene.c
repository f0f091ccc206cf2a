/* Scene import through assimp's C API: see rt_scene.h for the contract. */
#define _DEFAULT_SOURCE /* madvise(), MADV_HUGEPAGE */
#include "import_guard.h"
#include "rt_paths.h"
#include "rt_scene.h"
#include "scene_internal.h"
#include "tex_image.h"

#include <assimp/GltfMaterial.h>
#include <assimp/cfileio.h>
#include <assimp/cimport.h>
#include <assimp/material.h>
#include <assimp/postprocess.h>
#include <assimp/scene.h>
#include <assimp/version.h>

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#if defined(__linux__) && defined(__GLIBC__)
#include <malloc.h>
#include <sys/mman.h>
#endif

#define RT_PI 3.14159265358979323846 /* M_PI is XSI, not C11 or POSIX */

/* The scene and the strings it owns. Every string the scene hands out
 * (path, folder, material names, slot filenames, embedded names) is one
 * malloc listed here, so rt_scene_free() needs no per-field knowledge. */
typedef struct scene_priv {
    rt_scene pub; /* first, so an rt_scene * is a scene_priv * */
    char   **strs;
    size_t   nstrs, capstrs;
} scene_priv;

/* A 4x4 affine transform, row-major as aiMatrix4x4 (translation in column
 * 3). Doubles: deep hierarchies of float products drift. */
typedef struct xform {
    double m[4][4];
} xform;

/* A mesh's vertices as the scene keeps them (see mesh_join_make()). */
typedef struct mesh_join {
    uint32_t *remap; /* per aiMesh vertex: its index among the kept ones;
                      * UINT32_MAX: no triangle uses it */
    uint32_t *kept;  /* per kept vertex, in the file's order: the aiMesh vertex */
    uint32_t  nkept;
    bool      done;
} mesh_join;

/* What the hierarchy walk carries from one node to the next. */
typedef struct walk {
    const struct aiScene *ai;
    scene_priv           *s;
    mesh_join            *joins;               /* one per ai->mMeshes[], made by the count */
    bool                  uv1;                 /* the scene keeps UV set 1 */
    uint64_t              nverts, ntris;       /* counted, or filled so far */
    uint32_t              nmeshes, ninstances; /* by the count */
    bool                  fill;                /* false: count only */
    rt_result             r;                   /* the count's first failure */
    bool                  far;                 /* a vertex beyond RT_MAX_COORD, or not finite */
    double                far_at[3];           /* the first such vertex */
} walk;

const char *
rt_result_str(rt_result r)
{
    switch (r) {
    case RT_OK:
        return "ok";
    case RT_ERR_OPEN:
        return "cannot open";
    case RT_ERR_FORMAT:
        return "not a scene file";
    case RT_ERR_EMPTY:
        return "no triangles";
    case RT_ERR_NOMEM:
        return "out of memory";
    case RT_ERR_INVALID:
        return "invalid argument";
    }
    return "unknown error";
}

/* --- strings owned by the scene ---------------------------------------- */

static char *
scene_keep(scene_priv *s, char *str)
{
    if (!str)
        return NULL;
    if (s->nstrs == s->capstrs) {
        size_t cap = s->capstrs ? s->capstrs * 2 : 16;
        char **n = realloc(s->strs, cap * sizeof *n);
        if (!n) {
            free(str);
            return NULL;
        }
        s->strs = n;
        s->capstrs = cap;
    }
    s->strs[s->nstrs++] = str;
    return str;
}

static char *
scene_strdup(scene_priv *s, const char *str)
{
    return scene_keep(s, strdup(str));
}

/* --- transforms ---------------------------------------------------------- */

static xform
xform_from_ai(const struct aiMatrix4x4 *a)
{
    xform x = {{{a->a1, a->a2, a->a3, a->a4},
                {a->b1, a->b2, a->b3, a->b4},
                {a->c1, a->c2, a->c3, a->c4},
                {a->d1, a->d2, a->d3, a->d4}}};
    return x;
}

static xform
xform_mul(const xform *a, const xform *b)
{
    xform r;
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++)
            r.m[i][j] = a->m[i][0] * b->m[0][j] + a->m[i][1] * b->m[1][j] +
                        a->m[i][2] * b->m[2][j] + a->m[i][3] * b->m[3][j];
    return r;
}

static xform
xform_identity(void)
{
    xform x = {{{1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 0}, {0, 0, 0, 1}}};
    return x;
}

static void
xform_point(const xform *x, const struct aiVector3D *p, double out[3])
{
    for (int i = 0; i < 3; i++)
        out[i] = x->m[i][0] * p->x + x->m[i][1] * p->y + x->m[i][2] * p->z + x->m[i][3];
}

static void
xform_dir(const xform *x, const struct aiVector3D *d, double out[3])
{
    for (int i = 0; i < 3; i++)
        out[i] = x->m[i][0] * d->x + x->m[i][1] * d->y + x->m[i][2] * d->z;
}

/* The cofactor matrix of the upper 3x3, divided by its determinant: the
 * inverse transpose, which carries normals. A singular matrix keeps the
 * cofactors (normals are renormalised anyway). */
static void
xform_normal_matrix(const xform *x, double n[3][3], double *det)
{
    const double(*m)[4] = x->m;
    n[0][0] = m[1][1] * m[2][2] - m[1][2] * m[2][1];
    n[0][1] = m[1][2] * m[2][0] - m[1][0] * m[2][2];
    n[0][2] = m[1][0] * m[2][1] - m[1][1] * m[2][0];
    n[1][0] = m[0][2] * m[2][1] - m[0][1] * m[2][2];
    n[1][1] = m[0][0] * m[2][2] - m[0][2] * m[2][0];
    n[1][2] = m[0][1] * m[2][0] - m[0][0] * m[2][1];
    n[2][0] = m[0][1] * m[1][2] - m[0][2] * m[1][1];
    n[2][1] = m[0][2] * m[1][0] - m[0][0] * m[1][2];
    n[2][2] = m[0][0] * m[1][1] - m[0][1] * m[1][0];
    *det = m[0][0] * n[0][0] + m[0][1] * n[0][1] + m[0][2] * n[0][2];
    double inv = *det != 0 ? 1.0 / *det : 1.0;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            n[i][j] *= inv;
}

static bool
normalize3(double v[3])
{
    double len = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    if (!(len > 1e-30) || !isfinite(len))
        return false;
    v[0] /= len, v[1] /= len, v[2] /= len;
    return true;
}

static void
cross3(const double a[3], const double b[3], double out[3])
{
    out[0] = a[1] * b[2] - a[2] * b[1];
    out[1] = a[2] * b[0] - a[0] * b[2];
    out[2] = a[0] * b[1] - a[1] * b[0];
}

static void
store3(float *dst, const double v[3])
{
    dst[0] = (float)v[0], dst[1] = (float)v[1], dst[2] = (float)v[2];
}

/* --- shared vertices ----------------------------------------------------- */

/* Triangles share a vertex where assimp's JoinIdenticalVertices step would
 * have them share it, found in O(n): that step took 0.6 s on a
 * 524k-triangle height field, whose OBJ import makes one vertex per face
 * corner. Its rule: the same position, and normals, UV set 0, tangents and
 * bitangents each no further apart than 1e-5 (as a squared distance in
 * floats, so an attribute that is NaN passes); where several earlier
 * vertices qualify, the latest, which is the one assimp's hash map finds.
 * So the joined vertices, and the image, are as they were when assimp
 * joined them. Vertices that no triangle uses are dropped, as there, from
 * the bounds as well; the kept ones keep the file's order. Where this
 * differs from assimp 5.2:
 * - A position is found by its bits (-0 as +0). assimp hashes the bits too,
 *   but then accepts anything within 1e-5 that shares the hash bucket: a
 *   chance of about one in the vertex count for a pair of near positions.
 * - UV set 1 is compared as UV set 0 is (5.2 ignores it, later versions do
 *   not), since a material may read it.
 * - Only the JOIN_SCAN_MAX latest vertices at one position are looked at,
 *   so that a file that piles vertices onto one point stays linear
 *   (DESIGN.md, "Untrusted input"; assimp's step is quadratic there). A
 *   vertex whose twin is older is kept on its own, as if never joined. */

enum { JOIN_SCAN_MAX = 64 };

/* The key of a multilinear hash of positions (strongly universal in its
 * top 32 bits: Lemire and Kaser, "Strongly universal string hashing is
 * fast", 2014), drawn once per process, so that no file can be made whose
 * positions collide: ustring's keyed hash of 0..3, secret as its keys are
 * (ustring.h; USTR_HASH_SEED fixes both). */
static uint64_t       pos_seed[4];
static pthread_once_t pos_once = PTHREAD_ONCE_INIT;

static void
pos_seed_draw(void)
{
    for (uint64_t i = 0; i < 4; i++)
        pos_seed[i] = ustr_hash_bytes((const char *)&i, sizeof i);
}

_Static_assert(sizeof(ai_real) == sizeof(float) &&
                   sizeof(struct aiVector3D) == 3 * sizeof(uint32_t),
               "positions are compared as three 32-bit words");

/* Vertex v's position as bits, -0 as +0. */
static void
pos_bits(const struct aiMesh *m, unsigned v, uint32_t p[3])
{
    memcpy(p, &m->mVertices[v], 3 * sizeof *p);
    for (int k = 0; k < 3; k++)
        if (p[k] == 0x80000000u)
            p[k] = 0;
}

__extension__ typedef unsigned __int128 u128;

/* The sum is taken in 128 bits, where it cannot wrap (each product is
 * under 2^96), and its low 64 bits kept: the multilinear hash mod 2^64,
 * with no wrap-around for the fuzz build's unsigned-overflow check. */
static uint64_t
pos_hash(const uint32_t p[3])
{
    return (uint64_t)((u128)pos_seed[0] + (u128)pos_seed[1] * p[0] + (u128)pos_seed[2] * p[1] +
                      (u128)pos_seed[3] * p[2]);
}

/* assimp's test, in its arithmetic: apart when |a - b|^2 > 1e-5f^2. */
static bool
vec_near(const struct aiVector3D *a, const struct aiVector3D *b)
{
    const float eps2 = 1e-5f * 1e-5f;
    float       x = a->x - b->x, y = a->y - b->y, z = a->z - b->z;
    return !(x * x + y * y + z * z > eps2);
}

/* Vertices a and b, at one position, as one to assimp's join (with UV set
 * 1 where the scene keeps it). */
static bool
vertex_near(const struct aiMesh *m, bool uv1, unsigned a, unsigned b)
{
    const struct aiVector3D *t0 = m->mTextureCoords[0], *t1 = m->mTextureCoords[1];
    bool                     frame = m->mTangents && m->mBitangents;
    return (!m->mNormals || vec_near(&m->mNormals[a], &m->mNormals[b])) &&
           (!t0 || vec_near(&t0[a], &t0[b])) && (!uv1 || !t1 || vec_near(&t1[a], &t1[b])) &&
           (!frame || (vec_near(&m->mTangents[a], &m->mTangents[b]) &&
                       vec_near(&m->mBitangents[a], &m->mBitangents[b])));
}

/* The positions met so far: an open-addressing index of the latest kept
 * vertex at each, grown by doubling so it stays at most half full. */
typedef struct pos_index {
    uint32_t *slots;  /* kept index + 1; 0: free */
    uint64_t *hashes; /* per kept vertex: its position's hash */
    uint32_t *older;  /* per kept vertex: the one kept before it at its
                       * position, + 1; 0: none */
    unsigned bits;
    uint32_t npos;
} pos_index;

static bool
pos_index_grow(pos_index *t)
{
    unsigned  bits = t->bits ? t->bits + 1 : 10;
    size_t    cap = (size_t)1 << bits, mask = cap - 1;
    uint32_t *slots = calloc(cap, sizeof *slots);
    if (!slots)
        return false;
    for (size_t o = 0; t->slots && o < (size_t)1 << t->bits; o++) {
        uint32_t u = t->slots[o];
        if (!u)
            continue;
        size_t i = (size_t)(t->hashes[u - 1] >> (64 - bits));
        while (slots[i])
            i = (i + 1) & mask;
        slots[i] = u;
    }
    free(t->slots);
    t->slots = slots;
    t->bits = bits;
    return true;
}

/* The index among the kept of vertex v's twin; UINT32_MAX: none, and v is
 * kept as kept index `next`. */
static uint32_t
pos_index_join(pos_index *t, const struct aiMesh *m, bool uv1, const uint32_t *kept, unsigned v,
               uint32_t next)
{
    uint32_t p[3], q[3];
    pos_bits(m, v, p);
    uint64_t h = pos_hash(p);
    size_t   mask = ((size_t)1 << t->bits) - 1, i = (size_t)(h >> (64 - t->bits));
    uint32_t u;
    for (; (u = t->slots[i]) != 0; i = (i + 1) & mask) {
        if (t->hashes[u - 1] != h)
            continue;
        pos_bits(m, kept[u - 1], q);
        if (memcmp(p, q, sizeof p) == 0)
            break;
    }
    t->hashes[next] = h;
    t->older[next] = u;
    if (u) { /* v's position: the latest vertex there first, as assimp's map */
        uint32_t w = u;
        for (int n = 0; w && n < JOIN_SCAN_MAX; n++, w = t->older[w - 1])
            if (vertex_near(m, uv1, v, kept[w - 1]))
                return w - 1;
    } else {
        t->npos++;
    }
    t->slots[i] = next + 1;
    return UINT32_MAX;
}

/* Fills j for mesh m: which vertices its triangles use, and which of them
 * join. Each face index must address one of m's vertices (as
 * rt__scene_build() requires); one that does not is RT_ERR_FORMAT. */
static rt_result
mesh_join_make(const struct aiMesh *m, bool scene_uv1, mesh_join *j)
{
    pthread_once(&pos_once, pos_seed_draw);
    unsigned n = m->mNumVertices;
    j->done = true;
    j->remap = malloc((n ? n : 1) * sizeof *j->remap);
    if (!j->remap)
        return RT_ERR_NOMEM;
    for (unsigned v = 0; v < n; v++)
        j->remap[v] = UINT32_MAX;
    uint32_t nused = 0;
    for (unsigned f = 0; f < m->mNumFaces; f++) {
        const struct aiFace *face = &m->mFaces[f];
        if (face->mNumIndices != 3)
            continue; /* as mesh_append() */
        for (int k = 0; k < 3; k++) {
            unsigned ix = face->mIndices[k];
            if (ix >= n)
                return RT_ERR_FORMAT;
            if (j->remap[ix] == UINT32_MAX)
                j->remap[ix] = 0, nused++;
        }
    }
    size_t    nk = nused ? nused : 1;
    pos_index t = {.hashes = malloc(nk * sizeof *t.hashes), .older = malloc(nk * sizeof *t.older)};
    bool      uv1 = scene_uv1 && m->mTextureCoords[1];
    rt_result r = RT_ERR_NOMEM;
    if (!(j->kept = malloc(nk * sizeof *j->kept)) || !t.hashes || !t.older || !pos_index_grow(&t))
        goto out;
    for (unsigned v = 0; v < n; v++) {
        if (j->remap[v] == UINT32_MAX)
            continue;
        uint32_t twin = pos_index_join(&t, m, uv1, j->kept, v, j->nkept);
        if (twin != UINT32_MAX) {
            j->remap[v] = twin;
            continue;
        }
        j->kept[j->nkept] = v;
        j->remap[v] = j->nkept++;
        if ((size_t)t.npos > (size_t)1 << (t.bits - 1) && !pos_index_grow(&t))
            goto out;
    }
    r = RT_OK;
out:
    free(t.slots), free(t.hashes), free(t.older);
    return r;
}

static void
mesh_joins_free(mesh_join *joins, unsigned n)
{
    for (unsigned i = 0; joins && i < n; i++)
        free(joins[i].remap), free(joins[i].kept);
    free(joins);
}

/* --- geometry ------------------------------------------------------------ */

/* Whether a point is finite and within RT_MAX_COORD on every axis. */
static bool
coords_ok(const double p[3])
{
    return fabs(p[0]) <= RT_MAX_COORD && fabs(p[1]) <= RT_MAX_COORD && fabs(p[2]) <= RT_MAX_COORD;
}

static void
mesh_append(walk *w, const struct aiMesh *m, const mesh_join *j, const xform *x)
{
    rt_scene *s = &w->s->pub;
    uint32_t  base = (uint32_t)w->nverts;
    double    nm[3][3], det;
    xform_normal_matrix(x, nm, &det);

    for (uint32_t u = 0; u < j->nkept; u++) {
        uint32_t i = base + u, v = j->kept[u];
        double   p[3], n[3] = {0, 0, 1}, t[3], b[3];
        xform_point(x, &m->mVertices[v], p);
        if (!w->far && !coords_ok(p)) {
            w->far = true;
            memcpy(w->far_at, p, sizeof p);
        }
        store3(&s->positions[3 * i], p);
        for (int k = 0; k < 3; k++) {
            if (p[k] < s->bounds_min[k])
                s->bounds_min[k] = (float)p[k];
            if (p[k] > s->bounds_max[k])
                s->bounds_max[k] = (float)p[k];
        }
        if (m->mNormals) {
            const struct aiVector3D *a = &m->mNormals[v];
            for (int k = 0; k < 3; k++)
                n[k] = nm[k][0] * a->x + nm[k][1] * a->y + nm[k][2] * a->z;
            if (!normalize3(n))
                n[0] = 0, n[1] = 0, n[2] = 1;
        }
        store3(&s->normals[3 * i], n);
        if (m->mTextureCoords[0]) {
            s->uvs[2 * i] = m->mTextureCoords[0][v].x;
            s->uvs[2 * i + 1] = m->mTextureCoords[0][v].y;
        }
        if (s->uvs1 && m->mTextureCoords[1]) {
            s->uvs1[2 * i] = m->mTextureCoords[1][v].x;
            s->uvs1[2 * i + 1] = m->mTextureCoords[1][v].y;
        }
        if (m->mTextureCoords[0] && m->mTangents && m->mBitangents) {
            xform_dir(x, &m->mTangents[v], t);
            xform_dir(x, &m->mBitangents[v], b);
            if (normalize3(t)) {
                /* Handedness in world space, so a mirroring transform
                 * flips it with the geometry. assimp's bitangent follows
                 * the final (flipped) v, down the image; the contract's
                 * cross(n, t) * w points up it, hence the minus. */
                double c[3];
                cross3(n, t, c);
                double h = -(c[0] * b[0] + c[1] * b[1] + c[2] * b[2]);
                store3(&s->tangents[4 * i], t);
                s->tangents[4 * i + 3] = h < 0 ? -1.0f : 1.0f;
            }
        }
    }

    /* A mirroring transform (negative determinant) turns the winding
     * around; swap two corners so the geometric normal keeps agreeing
     * with the shading normals. */
    bool mirror = det < 0;
    for (unsigned f = 0; f < m->mNumFaces; f++) {
        const struct aiFace *face = &m->mFaces[f];
        if (face->mNumIndices != 3)
            continue; /* never after Triangulate + SortByPType; counted alike */
        uint32_t t = (uint32_t)w->ntris++;
        s->indices[3 * t] = base + j->remap[face->mIndices[0]];
        s->indices[3 * t + 1] = base + j->remap[face->mIndices[mirror ? 2 : 1]];
        s->indices[3 * t + 2] = base + j->remap[face->mIndices[mirror ? 1 : 2]];
        s->material[t] = m->mMaterialIndex < s->nmaterials ? m->mMaterialIndex : 0;
    }
    w->nverts += j->nkept;
}

static uint64_t
mesh_tris(const struct aiMesh *m)
{
    uint64_t n = 0;
    for (unsigned f = 0; f < m->mNumFaces; f++)
        n += m->mFaces[f].mNumIndices == 3;
    return n;
}

/* Depth-first over the hierarchy; each node's meshes are instanced under
 * its accumulated transform. Recursion depth is the file's nesting, which
 * assimp's own importers have already recursed through. The count joins
 * each mesh's vertices, once however often it is instanced. */
static void
walk_node(walk *w, const struct aiNode *node, const xform *parent)
{
    xform local = xform_from_ai(&node->mTransformation);
    xform x = xform_mul(parent, &local);
    for (unsigned i = 0; i < node->mNumMeshes && w->r == RT_OK; i++) {
        if (node->mMeshes[i] >= w->ai->mNumMeshes)
            continue;
        const struct aiMesh *m = w->ai->mMeshes[node->mMeshes[i]];
        mesh_join           *j = &w->joins[node->mMeshes[i]];
        if (!(m->mPrimitiveTypes & aiPrimitiveType_TRIANGLE))
            continue;
        if (w->fill) {
            mesh_append(w, m, j, &x);
        } else {
            if (!j->done) {
                if ((w->r = mesh_join_make(m, w->uv1, j)) != RT_OK)
                    return;
                w->nmeshes++;
            }
            w->ninstances++;
            w->nverts += j->nkept;
            w->ntris += mesh_tris(m);
        }
    }
    for (unsigned i = 0; i < node->mNumChildren && w->r == RT_OK; i++)
        walk_node(w, node->mChildren[i], &x);
}

/* The world transform of the first node named `name`; false if none. */
static bool
node_find(const struct aiNode *node, const struct aiString *name, const xform *parent, xform *out)
{
    xform local = xform_from_ai(&node->mTransformation);
    xform x = xform_mul(parent, &local);
    if (node->mName.length == name->length &&
        memcmp(node->mName.data, name->data, name->length) == 0) {
        *out = x;
        return true;
    }
    for (unsigned i = 0; i < node->mNumChildren; i++)
        if (node_find(node->mChildren[i], name, &x, out))
            return true;
    return false;
}

/* The local transform of the first node named `name`; false if none. */
static bool
node_find_local(const struct aiNode *node, const struct aiString *name, xform *out)
{
    if (!node)
        return false;
    if (node->mName.length == name->length &&
        memcmp(node->mName.data, name->data, name->length) == 0) {
        *out = xform_from_ai(&node->mTransformation);
        return true;
    }
    for (unsigned i = 0; i < node->mNumChildren; i++)
        if (node_find_local(node->mChildren[i], name, out))
            return true;
    return false;
}

static xform
node_transform(const struct aiScene *ai, const struct aiString *name)
{
    xform id = xform_identity(), x;
    if (ai->mRootNode && node_find(ai->mRootNode, name, &id, &x))
        return x;
    return id;
}

/* --- materials ----------------------------------------------------------- */

/* The folder of `path` ("." when it has none). */
static char *
path_folder(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return strdup(".");
    if (slash == path)
        return strdup("/");
    size_t n = (size_t)(slash - path);
    char  *f = malloc(n + 1);
    if (f) {
        memcpy(f, path, n);
        f[n] = '\0';
    }
    return f;
}

/* A texture reference as the shading code will open it: '\' read as '/',
 * leading "./" dropped, relative paths joined to the scene's folder. */
static char *
texture_path(const char *folder, const char *ref)
{
    size_t n = strlen(ref);
    char  *r = malloc(n + 1);
    if (!r)
        return NULL;
    for (size_t i = 0; i <= n; i++)
        r[i] = ref[i] == '\\' ? '/' : ref[i];
    const char *rel = r;
    while (rel[0] == '.' && rel[1] == '/')
        rel += 2;
    if (r[0] == '/' || strcmp(folder, ".") == 0) {
        char *d = strdup(rel);
        free(r);
        return d;
    }
    size_t fl = strlen(folder);
    bool   sep = fl > 0 && folder[fl - 1] != '/';
    size_t len = fl + sep + strlen(rel);
    char  *out = malloc(len + 1);
    if (out)
        snprintf(out, len + 1, "%s%s%s", folder, sep ? "/" : "", rel);
    free(r);
    return out;
}

/* Material properties are read only as stored: assimp reads any other
 * type as a string of digits (a float as an int, too), and when that is
 * not one, throws a C++ exception through our C frames or fails an
 * assertion (both found by fuzz-scene); and given no count it writes every
 * element of an array, however many, into the one value asked for. Each
 * read below checks the type and gives a count. A buffer holds a bool (1
 * byte: glTF's doubleSided) or 32-bit values; of another length, assimp
 * would read an int past its end. */
static const struct aiMaterialProperty *
mat_numeric(const struct aiMaterial *mat, const char *key, unsigned type, unsigned idx,
            bool integer)
{
    const struct aiMaterialProperty *p;
    if (aiGetMaterialProperty(mat, key, type, idx, &p) != aiReturn_SUCCESS || p->mDataLength == 0)
        return NULL;
    bool buffer = p->mType == aiPTI_Buffer && (p->mDataLength == 1 || p->mDataLength % 4 == 0);
    bool real = p->mType == aiPTI_Float || p->mType == aiPTI_Double;
    return buffer || p->mType == aiPTI_Integer || (real && !integer) ? p : NULL;
}

static float
mat_float(const struct aiMaterial *mat, const char *key, unsigned type, unsigned idx, float def)
{
    ai_real  v;
    unsigned n = 1;
    if (mat_numeric(mat, key, type, idx, false) &&
        aiGetMaterialFloatArray(mat, key, type, idx, &v, &n) == aiReturn_SUCCESS && n == 1 &&
        isfinite(v))
        return (float)v;
    return def;
}

static int
mat_int(const struct aiMaterial *mat, const char *key, unsigned type, unsigned idx, int def)
{
    int      v;
    unsigned n = 1;
    if (mat_numeric(mat, key, type, idx, true) &&
        aiGetMaterialIntegerArray(mat, key, type, idx, &v, &n) == aiReturn_SUCCESS && n == 1)
        return v;
    return def;
}

/* An RGB or RGBA colour (alpha 1 when the file has three components);
 * false for anything else. Values are kept as stored, infinities too: the
 * path tracer counts and drops the samples they spoil. */
static bool
mat_color(const struct aiMaterial *mat, const char *key, unsigned type, unsigned idx,
          struct aiColor4D *out)
{
    const struct aiMaterialProperty *p = mat_numeric(mat, key, type, idx, false);
    struct aiColor4D                 c;
    if (!p || p->mDataLength < 3 * (p->mType == aiPTI_Double ? sizeof(double) : 4) ||
        aiGetMaterialColor(mat, key, type, idx, &c) != aiReturn_SUCCESS)
        return false;
    *out = c;
    return true;
}

/* Texture types that may fill each slot, best first (assimp 5.2 names:
 * glTF's metallicRoughness arrives as UNKNOWN, its occlusion as LIGHTMAP;
 * OBJ's map_bump as HEIGHT, map_Ks as SPECULAR, map_d as OPACITY). */
static const enum aiTextureType slot_types[RT_SLOT_COUNT][5] = {
    [RT_SLOT_BASE_COLOR] = {aiTextureType_BASE_COLOR, aiTextureType_DIFFUSE},
    [RT_SLOT_METALLIC_ROUGHNESS] = {aiTextureType_UNKNOWN, aiTextureType_DIFFUSE_ROUGHNESS,
                                    aiTextureType_METALNESS, aiTextureType_SPECULAR},
    [RT_SLOT_NORMAL] = {aiTextureType_NORMALS, aiTextureType_HEIGHT},
    [RT_SLOT_EMISSIVE] = {aiTextureType_EMISSIVE, aiTextureType_EMISSION_COLOR},
    [RT_SLOT_OCCLUSION] = {aiTextureType_LIGHTMAP, aiTextureType_AMBIENT_OCCLUSION},
    [RT_SLOT_OPACITY] = {aiTextureType_OPACITY},
};

typedef struct load_ctx {
    const struct aiScene *ai;
    scene_priv           *s;
    ustr_table           *strings;
    char                **embedded_names; /* per aiTexture; NULL: not usable */
} load_ctx;

static rt_result
slot_load(load_ctx *c, const struct aiMaterial *mat, rt_slot slot, rt_texture_slot *out)
{
    for (int k = 0; k < 5 && slot_types[slot][k] != aiTextureType_NONE; k++) {
        enum aiTextureType type = slot_types[slot][k];
        if (aiGetMaterialTextureCount(mat, type) == 0)
            continue;
        /* The path and UV set read here, not by aiGetMaterialTexture(),
         * which reads the mapping and UV set with no count: an array there
         * overruns its int. */
        struct aiString path;
        if (aiGetMaterialString(mat, AI_MATKEY_TEXTURE(type, 0), &path) != aiReturn_SUCCESS)
            continue;
        if (path.length == 0) { /* a glTF image of uri "": said once, the slot left empty */
            if (!c->s->pub.warning &&
                !(c->s->pub.warning = strdup("a texture with an empty file name: ignored")))
                return RT_ERR_NOMEM;
            continue;
        }
        int uv = 0;
        if (mat_int(mat, AI_MATKEY_MAPPING(type, 0), aiTextureMapping_UV) == aiTextureMapping_UV)
            uv = mat_int(mat, AI_MATKEY_UVWSRC(type, 0), 0);
        char *name;
        if (path.data[0] == '*') {
            /* Embedded ("*N"): the synthetic name made for texture N; an
             * out-of-range N or a raw texel array leaves the slot empty. */
            char         *end;
            unsigned long n = strtoul(path.data + 1, &end, 10);
            if (end == path.data + 1 || *end || n >= c->ai->mNumTextures || !c->embedded_names[n])
                return RT_OK;
            name = c->embedded_names[n];
        } else {
            name = scene_keep(c->s, texture_path(c->s->pub.folder, path.data));
            if (!name)
                return RT_ERR_NOMEM;
        }
        out->filename = name;
        out->filename_len = strlen(name);
        out->uv = uv == 1 ? 1 : 0; /* the scene keeps UV sets 0 and 1 */
        out->name = ustr_table_intern(c->strings, name, out->filename_len);
        if (!out->name)
            return RT_ERR_NOMEM; /* ENOMEM; ERANGE needs a 1 GiB path */
        return RT_OK;
    }
    return RT_OK;
}

static rt_result
material_load(load_ctx *c, const struct aiMaterial *mat, rt_material *m)
{
    struct aiString  str;
    struct aiColor4D col;

    m->name = scene_strdup(
        c->s, aiGetMaterialString(mat, AI_MATKEY_NAME, &str) == aiReturn_SUCCESS ? str.data : "");
    if (!m->name)
        return RT_ERR_NOMEM;

    /* glTF's base colour factor; else the classic diffuse colour with the
     * opacity ('d') as alpha (OBJ/MTL, PLY). */
    if (mat_color(mat, AI_MATKEY_BASE_COLOR, &col)) {
        m->base_color[0] = col.r, m->base_color[1] = col.g;
        m->base_color[2] = col.b, m->base_color[3] = col.a;
        /* KHR_materials_specular's factor; glTF's layer is there by default. */
        m->specular = mat_float(mat, AI_MATKEY_SPECULAR_FACTOR, 1.0f);
    } else {
        m->base_color[0] = m->base_color[1] = m->base_color[2] = 1;
        if (mat_color(mat, AI_MATKEY_COLOR_DIFFUSE, &col))
            m->base_color[0] = col.r, m->base_color[1] = col.g, m->base_color[2] = col.b;
        m->base_color[3] = mat_float(mat, AI_MATKEY_OPACITY, 1.0f);
        /* A classic material's specular colour (Ks) as the weight of the
         * specular layer: none, plain Lambert, when Ks is black or absent. */
        m->specular = 0;
        if (mat_color(mat, AI_MATKEY_COLOR_SPECULAR, &col)) {
            float k = col.r > col.g ? col.r : col.g;
            m->specular = k > col.b ? k : col.b;
        }
    }
    m->specular = m->specular < 0 ? 0 : m->specular > 1 ? 1 : m->specular;

    m->metallic = mat_float(mat, AI_MATKEY_METALLIC_FACTOR, 0.0f);
    m->roughness = mat_float(mat, AI_MATKEY_ROUGHNESS_FACTOR, -1.0f);
    if (m->roughness < 0) {
        /* No roughness: from a Phong exponent (Ns) as sqrt(2 / (Ns + 2)),
         * the usual Blinn-Phong to GGX mapping; without one, glTF's 1. */
        float ns = mat_float(mat, AI_MATKEY_SHININESS, -1.0f);
        m->roughness = ns >= 0 ? sqrtf(2.0f / (ns + 2.0f)) : 1.0f;
    }

    float strength = mat_float(mat, AI_MATKEY_EMISSIVE_INTENSITY, 1.0f);
    if (mat_color(mat, AI_MATKEY_COLOR_EMISSIVE, &col)) {
        m->emissive[0] = col.r * strength;
        m->emissive[1] = col.g * strength;
        m->emissive[2] = col.b * strength;
    }

    m->normal_scale = mat_float(mat, AI_MATKEY_GLTF_TEXTURE_SCALE(aiTextureType_NORMALS, 0), 1.0f);
    m->occlusion_strength =
        mat_float(mat, AI_MATKEY_GLTF_TEXTURE_STRENGTH(aiTextureType_LIGHTMAP, 0), 1.0f);

    m->double_sided = mat_int(mat, AI_MATKEY_TWOSIDED, 0) != 0;

    for (int k = 0; k < RT_SLOT_COUNT; k++) {
        rt_result r = slot_load(c, mat, (rt_slot)k, &m->slots[k]);
        if (r != RT_OK)
            return r;
        m->slots[k].raw = k == RT_SLOT_METALLIC_ROUGHNESS || k == RT_SLOT_NORMAL ||
                          k == RT_SLOT_OCCLUSION || k == RT_SLOT_OPACITY;
    }

    /* glTF alphaMode MASK cuts at alphaCutoff (default 0.5); BLEND is
     * stochastic transparency. An OBJ map_d is a cut-out: 0.5 on its
     * opacity. */
    m->alpha_cutoff = -1.0f;
    bool mode = aiGetMaterialString(mat, AI_MATKEY_GLTF_ALPHAMODE, &str) == aiReturn_SUCCESS;
    if (mode && strcmp(str.data, "MASK") == 0)
        m->alpha_cutoff = mat_float(mat, AI_MATKEY_GLTF_ALPHACUTOFF, 0.5f);
    else if (mode && strcmp(str.data, "BLEND") == 0)
        m->alpha_blend = true;
    else if (m->slots[RT_SLOT_OPACITY].filename)
        m->alpha_cutoff = 0.5f;
    return RT_OK;
}

/* Copies each encoded embedded texture (mHeight == 0: PNG, JPEG bytes)
 * under the name "<path>#embedded<N>.<hint>". Raw texel arrays
 * (mHeight > 0, from formats such as MD2, never glTF) are left out: a slot
 * that names one stays empty. */
static rt_result
embedded_load(load_ctx *c)
{
    const struct aiScene *ai = c->ai;
    rt_scene             *s = &c->s->pub;
    if (ai->mNumTextures == 0)
        return RT_OK;
    c->embedded_names = calloc(ai->mNumTextures, sizeof *c->embedded_names);
    s->embedded = calloc(ai->mNumTextures, sizeof *s->embedded);
    if (!c->embedded_names || !s->embedded)
        return RT_ERR_NOMEM;
    for (unsigned i = 0; i < ai->mNumTextures; i++) {
        const struct aiTexture *t = ai->mTextures[i];
        if (!t || t->mHeight != 0 || t->mWidth == 0 || !t->pcData)
            continue;
        char hint[sizeof t->achFormatHint + 1];
        memcpy(hint, t->achFormatHint, sizeof t->achFormatHint);
        hint[sizeof t->achFormatHint] = '\0';
        for (char *h = hint; *h; h++)
            if (*h == '/' || *h == '\\' || *h == '.')
                *h = '_'; /* the hint is file data: keep it out of the path */
        size_t len = strlen(s->path) + 32 + strlen(hint);
        char  *name = scene_keep(c->s, malloc(len));
        void  *data = malloc(t->mWidth);
        if (!name || !data) {
            free(data);
            return RT_ERR_NOMEM;
        }
        snprintf(name, len, "%s#embedded%u.%s", s->path, i, hint[0] ? hint : "bin");
        memcpy(data, t->pcData, t->mWidth);
        s->embedded[s->nembedded].name = name;
        s->embedded[s->nembedded].data = data;
        s->embedded[s->nembedded].size = t->mWidth;
        s->nembedded++;
        c->embedded_names[i] = name;
    }
    return RT_OK;
}

/* --- camera and lights --------------------------------------------------- */

/* `up` made orthonormal to `fwd`; a degenerate one becomes the axis least
 * aligned with fwd. */
static void
camera_basis(double fwd[3], double up[3])
{
    if (!normalize3(fwd))
        fwd[0] = 0, fwd[1] = 0, fwd[2] = -1;
    for (int tries = 0; tries < 2; tries++) {
        /* up normalised first, so d is a cosine: a tiny up along fwd
         * (found by fuzz-scene) once passed as nearly perpendicular. */
        bool   ok = normalize3(up);
        double d = up[0] * fwd[0] + up[1] * fwd[1] + up[2] * fwd[2];
        double u[3] = {up[0] - d * fwd[0], up[1] - d * fwd[1], up[2] - d * fwd[2]};
        if (ok && fabs(d) < 0.9999 && normalize3(u)) {
            up[0] = u[0], up[1] = u[1], up[2] = u[2];
            return;
        }
        up[0] = fabs(fwd[1]) < 0.9 ? 0 : 1;
        up[1] = fabs(fwd[1]) < 0.9 ? 1 : 0;
        up[2] = 0;
    }
}

/* True for a glTF file read by an assimp older than 5.3, whose glTF2
 * importer writes mHorizontalFOV = yfov * aspectRatio (yfov without an
 * aspect) and copies the camera node's translation into mPosition. */
static bool
gltf_old_assimp(const char *path)
{
    const char *dot = strrchr(path, '.');
    if (!dot || (strcasecmp(dot, ".gltf") != 0 && strcasecmp(dot, ".glb") != 0))
        return false;
    unsigned major = aiGetVersionMajor(), minor = aiGetVersionMinor();
    return major < 5 || (major == 5 && minor < 3);
}

/* The file's first camera, if it has one (rt_scene_frame() makes one
 * otherwise). */
static void
camera_load(const struct aiScene *ai, rt_scene *s)
{
    if (ai->mNumCameras == 0 || !ai->mCameras[0])
        return;
    const struct aiCamera *c = ai->mCameras[0];
    rt_camera             *cam = &s->camera;
    double                 fwd[3], up[3], pos[3];
    xform                  x = node_transform(ai, &c->mName);
    bool                   old = gltf_old_assimp(s->path);
    struct aiVector3D      p = c->mPosition;
    /* mPosition is relative to the node; where an old glTF importer copied
     * the node's own translation there, count it once. */
    xform local = xform_identity();
    if (old && node_find_local(ai->mRootNode, &c->mName, &local) && p.x == local.m[0][3] &&
        p.y == local.m[1][3] && p.z == local.m[2][3])
        p.x = p.y = p.z = 0;
    xform_point(&x, &p, pos);
    xform_dir(&x, &c->mLookAt, fwd);
    xform_dir(&x, &c->mUp, up);
    camera_basis(fwd, up);
    /* mHorizontalFOV is the full horizontal angle: yfov = 2 atan(tan(h / 2)
     * / aspect); without an aspect it is the vertical angle. Old glTF
     * imports multiplied by the aspect instead. */
    double h = c->mHorizontalFOV, y;
    if (old)
        y = c->mAspect > 0 ? h / c->mAspect : h;
    else
        y = c->mAspect > 0 ? 2 * atan(tan(h / 2) / c->mAspect) : h;
    cam->yfov = (float)(y > 1e-4 && y < RT_PI - 1e-4 ? y : RT_PI / 4);
    cam->from_file = true;
    store3(cam->position, pos);
    store3(cam->forward, fwd);
    store3(cam->up, up);
}

static rt_result
lights_load(const struct aiScene *ai, rt_scene *s)
{
    if (ai->mNumLights == 0)
        return RT_OK;
    s->lights = calloc(ai->mNumLights, sizeof *s->lights);
    if (!s->lights)
        return RT_ERR_NOMEM;
    for (unsigned i = 0; i < ai->mNumLights; i++) {
        const struct aiLight *l = ai->mLights[i];
        rt_light             *o = &s->lights[s->nlights];
        if (!l)
            continue;
        switch (l->mType) {
        case aiLightSource_POINT:
            o->kind = RT_LIGHT_POINT;
            break;
        case aiLightSource_SPOT:
            o->kind = RT_LIGHT_SPOT;
            break;
        case aiLightSource_DIRECTIONAL:
            o->kind = RT_LIGHT_DIRECTIONAL;
            break;
        default:
            continue; /* ambient, area: not supported */
        }
        xform  x = node_transform(ai, &l->mName);
        double p[3], d[3];
        xform_point(&x, &l->mPosition, p);
        xform_dir(&x, &l->mDirection, d);
        if (!normalize3(d))
            d[0] = 0, d[1] = 0, d[2] = -1;
        store3(o->position, p);
        store3(o->direction, d);
        o->color[0] = l->mColorDiffuse.r;
        o->color[1] = l->mColorDiffuse.g;
        o->color[2] = l->mColorDiffuse.b;
        if (o->kind == RT_LIGHT_SPOT) {
            o->inner_cone = l->mAngleInnerCone;
            o->outer_cone = l->mAngleOuterCone;
        }
        s->nlights++;
    }
    if (s->nlights == 0) { /* ambient and area lights only: none kept (rt__scene_default_light()) */
        free(s->lights);
        s->lights = NULL;
    }
    return RT_OK;
}

/* --- loading ------------------------------------------------------------- */

/* assimp's C API keeps the last error in one global string, and its
 * importers are not documented as reentrant: one import at a time. */
static pthread_mutex_t import_lock = PTHREAD_MUTEX_INITIALIZER;

/* err = prefix + msg on one line, without the file's own name (the caller
 * prints that): assimp likes to quote it. */
static void
err_set(char *err, const char *prefix, const char *msg, const char *path)
{
    char   buf[RT_ERR_LEN];
    size_t plen = strlen(path), o = 0;
    for (const char *m = msg; *m && o + 1 < sizeof buf;) {
        if (plen && strncmp(m, path, plen) == 0) {
            m += plen;
            continue;
        }
        char ch = *m++;
        if (ch == '\n' || ch == '\r' || ch == '\t')
            ch = ' ';
        if (ch == ' ' && (o == 0 || buf[o - 1] == ' '))
            continue;
        buf[o++] = ch;
    }
    buf[o] = '\0';
    /* What quoting the name left behind: "" and a space before it. */
    char *q;
    while ((q = strstr(buf, " \"\"")) || (q = strstr(buf, "\"\""))) {
        size_t n = q[0] == ' ' ? 3 : 2;
        memmove(q, q + n, strlen(q + n) + 1);
    }
    /* ... and the words that led up to it: "for the file format of file". */
    size_t n = strlen(buf);
    while (n > 0 && (buf[n - 1] == ' ' || buf[n - 1] == '.'))
        buf[--n] = '\0';
    if (n >= 8 && strcmp(buf + n - 8, " of file") == 0)
        buf[n - 8] = '\0';
    char shown[RT_ERR_LEN]; /* assimp quotes what the file holds: names, values */
    tex_name_printable(shown, sizeof shown, buf);
    snprintf(err, RT_ERR_LEN, "%s%.200s", prefix, shown[0] ? shown : "unknown reason");
}

void
rt_scene_free(rt_scene *pub)
{
    if (!pub)
        return;
    scene_priv *s = (scene_priv *)pub;
    for (size_t i = 0; i < s->nstrs; i++)
        free(s->strs[i]);
    free(s->strs);
    free(pub->positions);
    free(pub->normals);
    free(pub->uvs);
    free(pub->uvs1);
    free(pub->tangents);
    free(pub->indices);
    free(pub->material);
    free(pub->materials);
    free(pub->lights);
    free(pub->warning);
    for (uint32_t i = 0; i < pub->nembedded; i++)
        free((void *)pub->embedded[i].data);
    free(pub->embedded);
    free(s);
}

/* KHR_materials_emissive_strength, which assimp 5.2 does not read: each
 * material's emission times its strength, before the lights are chosen.
 * assimp keeps glTF's material order (a default material it adds comes
 * after them). */
static void
emissive_strengths(rt_scene *s, const rt__gltf_facts *extra)
{
    for (uint32_t m = 0; extra && m < s->nmaterials && m < extra->nstrength; m++)
        if (!isnan(extra->strength[m]))
            for (int c = 0; c < 3; c++)
                s->materials[m].emissive[c] *= extra->strength[m];
}

/* What rt__scene_build() does into a scene allocated for it. */
static rt_result
scene_fill(const struct aiScene *ai, const char *path, ustr_table *strings,
           const rt__gltf_facts *extra, scene_priv *s, char *err)
{
    rt_scene  *pub = &s->pub;
    load_ctx   c = {.ai = ai, .s = s, .strings = strings};
    mesh_join *joins = NULL;
    rt_result  r = RT_ERR_NOMEM;

    pub->path = scene_strdup(s, path);
    pub->folder = scene_keep(s, path_folder(path));
    if (!pub->path || !pub->folder)
        goto fail;

    bool uv1 = false;
    for (unsigned i = 0; i < ai->mNumMeshes; i++)
        uv1 |= ai->mMeshes[i]->mTextureCoords[1] != NULL;
    walk w = {.ai = ai, .s = s, .uv1 = uv1};
    if (!(w.joins = joins = calloc(ai->mNumMeshes ? ai->mNumMeshes : 1, sizeof *joins)))
        goto fail;
    if (ai->mRootNode) {
        xform root = xform_identity();
        walk_node(&w, ai->mRootNode, &root);
    }
    if (w.r == RT_ERR_FORMAT) {
        snprintf(err, RT_ERR_LEN, "not a scene file: a face index out of range");
        r = w.r;
        goto out;
    }
    if ((r = w.r) != RT_OK)
        goto fail;
    r = RT_ERR_NOMEM;
    if (w.ntris == 0) {
        snprintf(err, RT_ERR_LEN, "no triangles");
        r = RT_ERR_EMPTY;
        goto out;
    }
    if (w.nverts > UINT32_MAX || w.ntris > UINT32_MAX / 3) {
        snprintf(err, RT_ERR_LEN, "too many triangles: %llu", (unsigned long long)w.ntris);
        r = RT_ERR_FORMAT;
        goto out;
    }

    if ((r = embedded_load(&c)) != RT_OK)
        goto fail;
    r = RT_ERR_NOMEM;
    pub->nmaterials = ai->mNumMaterials ? ai->mNumMaterials : 1;
    pub->materials = calloc(pub->nmaterials, sizeof *pub->materials);
    if (!pub->materials)
        goto fail;
    for (uint32_t i = 0; i < pub->nmaterials; i++) {
        if (i < ai->mNumMaterials && ai->mMaterials[i]) {
            if ((r = material_load(&c, ai->mMaterials[i], &pub->materials[i])) != RT_OK)
                goto fail;
        } else {
            rt_material *m = &pub->materials[i];
            m->name = "";
            m->base_color[0] = m->base_color[1] = m->base_color[2] = m->base_color[3] = 1;
            m->roughness = 1, m->normal_scale = 1, m->occlusion_strength = 1;
            m->alpha_cutoff = -1;
        }
    }
    emissive_strengths(pub, extra);
    r = RT_ERR_NOMEM;

    size_t nv = (size_t)w.nverts, nt = (size_t)w.ntris;
    pub->positions = malloc(nv * 3 * sizeof(float));
    pub->normals = malloc(nv * 3 * sizeof(float));
    pub->uvs = calloc(nv * 2, sizeof(float));
    pub->uvs1 = uv1 ? calloc(nv * 2, sizeof(float)) : NULL;
    pub->tangents = calloc(nv * 4, sizeof(float));
    pub->indices = malloc(nt * 3 * sizeof(uint32_t));
    pub->material = malloc(nt * sizeof(uint32_t));
    if (!pub->positions || !pub->normals || !pub->uvs || (uv1 && !pub->uvs1) || !pub->tangents ||
        !pub->indices || !pub->material)
        goto fail;
    for (int k = 0; k < 3; k++)
        pub->bounds_min[k] = INFINITY, pub->bounds_max[k] = -INFINITY;
    uint32_t nmeshes = w.nmeshes, ninstances = w.ninstances; /* the count's */
    w = (walk){.ai = ai, .s = s, .joins = joins, .uv1 = uv1, .fill = true};
    xform id = xform_identity();
    walk_node(&w, ai->mRootNode, &id);
    pub->nverts = (uint32_t)w.nverts;
    pub->ntris = (uint32_t)w.ntris;
    pub->nmeshes = nmeshes;
    pub->ninstances = ninstances;

    if (w.far) {
        snprintf(err, RT_ERR_LEN,
                 "a vertex at (%g, %g, %g): coordinates must be finite and within "
                 "+-%g",
                 w.far_at[0], w.far_at[1], w.far_at[2], RT_MAX_COORD);
        r = RT_ERR_FORMAT;
        goto out;
    }
    rt_scene_frame_bounds(pub, pub->focus_min, pub->focus_max);
    camera_load(ai, pub);
    if (!pub->camera.from_file)
        rt_scene_frame(pub, RT_UP_Y, RT_VIEW_AUTO);
    double cam[3] = {pub->camera.position[0], pub->camera.position[1], pub->camera.position[2]};
    if (!coords_ok(cam)) {
        snprintf(err, RT_ERR_LEN,
                 "the camera at (%g, %g, %g): coordinates must be finite and "
                 "within +-%g",
                 cam[0], cam[1], cam[2], RT_MAX_COORD);
        r = RT_ERR_FORMAT;
        goto out;
    }
    if ((r = lights_load(ai, pub)) != RT_OK || (r = rt__scene_default_light(pub)) != RT_OK)
        goto fail;
    goto out;
fail:
    snprintf(err, RT_ERR_LEN, "%s", rt_result_str(r));
out:
    mesh_joins_free(joins, ai->mNumMeshes);
    free(c.embedded_names);
    return r;
}

rt_result
rt__scene_build(const struct aiScene *ai, const char *path, ustr_table *strings,
                const rt__gltf_facts *extra, rt_scene **out, char err[RT_ERR_LEN])
{
    *out = NULL;
    scene_priv *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, RT_ERR_LEN, "out of memory");
        return RT_ERR_NOMEM;
    }
    rt_result r = scene_fill(ai, path, strings, extra, s, err);
    if (r != RT_OK) {
        rt_scene_free(&s->pub);
        return r;
    }
    *out = &s->pub;
    return RT_OK;
}

/* ---- files assimp opens: regular files only, within the allowed folders ---- */

/* What the hook knows: the folders, and the first file it refused and why
 * ("refused FILE: outside the allowed folders", "FILE: cannot open: a
 * FIFO, not a regular file"). */
typedef struct io_guard {
    const rt_paths *allowed;
    char            refused[RT_ERR_LEN];
} io_guard;

static size_t
io_read(struct aiFile *f, char *buf, size_t size, size_t count)
{
    return fread(buf, size, count, (FILE *)(void *)f->UserData);
}

static size_t
io_write(struct aiFile *f, const char *buf, size_t size, size_t count)
{
    return fwrite(buf, size, count, (FILE *)(void *)f->UserData);
}

static size_t
io_tell(struct aiFile *f)
{
    long at = ftell((FILE *)(void *)f->UserData);
    return at < 0 ? 0 : (size_t)at;
}

static size_t
io_size(struct aiFile *f)
{
    struct stat st;
    return fstat(fileno((FILE *)(void *)f->UserData), &st) == 0 ? (size_t)st.st_size : 0;
}

static enum aiReturn
io_seek(struct aiFile *f, size_t offset, enum aiOrigin origin)
{
    int whence = origin == aiOrigin_CUR ? SEEK_CUR : origin == aiOrigin_END ? SEEK_END : SEEK_SET;
    if (offset > (size_t)LONG_MAX)
        return aiReturn_FAILURE;
    return fseek((FILE *)(void *)f->UserData, (long)offset, whence) == 0 ? aiReturn_SUCCESS
                                                                         : aiReturn_FAILURE;
}

static void
io_flush(struct aiFile *f)
{
    fflush((FILE *)(void *)f->UserData);
}

static struct aiFile *
io_open(struct aiFileIO *io, const char *name, const char *mode)
{
    io_guard *g = (io_guard *)(void *)io->UserData;
    /* Only ever read (no importer writes), and only regular files: a FIFO
     * named as an OBJ's material library or a glTF buffer would otherwise
     * block the import forever. The folder check is made on the file
     * opened, so a name swapped for a link out after a check cannot
     * escape. */
    char why[TEX_ERR_LEN];
    if (strchr(mode, 'w') || strchr(mode, 'a') || strchr(mode, '+')) {
        char shown[160];
        tex_name_printable(shown, sizeof shown, name);
        if (!g->refused[0])
            snprintf(g->refused, sizeof g->refused, "%s: cannot open for writing", shown);
        return NULL;
    }
    int fd = tex_open_regular(name, why);
    if (fd < 0) {
        char shown[160];
        tex_name_printable(shown, sizeof shown, name);
        if (!g->refused[0])
            snprintf(g->refused, sizeof g->refused, "%s: %.90s", shown, why);
        return NULL;
    }
    if (!rt_paths_allow_fd(g->allowed, fd)) {
        char shown[200];
        close(fd);
        tex_name_printable(shown, sizeof shown, name);
        if (!g->refused[0])
            snprintf(g->refused, sizeof g->refused, "refused %s: outside the allowed folders",
                     shown);
        return NULL; /* as if it were not there */
    }
    rt__import_budget_file(fd);
    FILE          *fp = fdopen(fd, "rb");
    struct aiFile *f = fp ? calloc(1, sizeof *f) : NULL;
    if (!fp)
        close(fd);
    if (!f) {
        if (fp)
            fclose(fp);
        return NULL;
    }
    *f = (struct aiFile){io_read, io_write, io_tell, io_size, io_seek, io_flush, (char *)fp};
    return f;
}

static void
io_close(struct aiFileIO *io, struct aiFile *f)
{
    (void)io;
    if (f) {
        fclose((FILE *)(void *)f->UserData);
        free(f);
    }
}

/* ---- the OBJ importer's line buffer ---- */

/* assimp 5.2's OBJ importer reads through an IOStreamBuffer whose
 * constructor allocates a 16 MiB buffer and fills it, whatever the file's
 * size. glibc maps a block that big afresh, so the fill takes 4096 page
 * faults: some 12 ms, a third of what a small OBJ's whole render took. In
 * 2 MiB pages it takes 8. So, before an OBJ import, obj_heap_prepare()
 * leaves 20 MiB free at the top of the heap, advised for transparent huge
 * pages, for that buffer to be carved from:
 * - malloc and free 20 MiB: glibc maps and unmaps it, and on the free
 *   raises its dynamic mmap threshold to 20 MiB (mallopt(3)), as freeing
 *   assimp's buffer would have raised it to 16; blocks below that size now
 *   come from the heap;
 * - malloc 20 MiB again, now from the heap's top, madvise(MADV_HUGEPAGE) its
 *   2 MiB-aligned interior, and free it: it joins the top again, which
 *   glibc trims only beyond twice the threshold.
 * obj_heap_release() hands what is free back to the system afterwards,
 * as the unmapped buffer was. No mallopt(), so glibc's dynamic threshold
 * goes on adapting. Where huge pages are off or the threshold was fixed
 * (mallopt(), MALLOC_MMAP_THRESHOLD_), this costs a few system calls and
 * changes nothing else; nothing here is needed for correctness. */
static bool
obj_heap_prepare(const char *path)
{
#if defined(__linux__) && defined(__GLIBC__) && defined(MADV_HUGEPAGE)
    const char *dot = strrchr(path, '.');
    if (!dot || strcasecmp(dot, ".obj") != 0)
        return false;
    const size_t n = (size_t)20 << 20, huge = (size_t)2 << 20;
    /* volatile: a block freed unused would be elided by the compiler, and
     * this one is allocated for what its free() does inside glibc. */
    void *volatile first = malloc(n);
    free(first);
    char *p = malloc(n);
    if (!p)
        return false;
    uintptr_t a = ((uintptr_t)p + huge - 1) & ~(uintptr_t)(huge - 1);
    uintptr_t e = ((uintptr_t)p + n) & ~(uintptr_t)(huge - 1);
    if (e > a)
        madvise((void *)a, e - a, MADV_HUGEPAGE); /* EINVAL where huge pages are off */
    free(p);
    return true;
#else
    (void)path;
    return false;
#endif
}

static void
obj_heap_release(bool prepared)
{
#if defined(__linux__) && defined(__GLIBC__) && defined(MADV_HUGEPAGE)
    if (prepared)
        malloc_trim(0);
#else
    (void)prepared;
#endif
}

/* True where a material has a normal or bump map: only those read tangents
 * (rt_scene.h), and assimp's CalcTangentSpace costs a spatial sort. */
static bool
scene_needs_tangents(const struct aiScene *ai)
{
    for (unsigned i = 0; i < ai->mNumMaterials; i++)
        if (ai->mMaterials[i] &&
            (aiGetMaterialTextureCount(ai->mMaterials[i], aiTextureType_NORMALS) ||
             aiGetMaterialTextureCount(ai->mMaterials[i], aiTextureType_HEIGHT)))
            return true;
    return false;
}

void
rt__scene_warn(rt_scene *s, const char *text)
{
    size_t had = s->warning ? strlen(s->warning) + 2 : 0, n = had + strlen(text) + 1;
    char  *w = malloc(n);
    if (!w)
        return;
    snprintf(w, n, "%s%s%s", s->warning ? s->warning : "", had ? "; " : "", text);
    free(s->warning);
    s->warning = w;
}

/* The glTF extensions render implements, fully or in part (what it
 * ignores of them), and those assimp implements or refuses to load
 * without: whatever else a file uses is ignored. */
static const struct {
    const char *name;
    const char *ignored; /* NULL: none of it */
} gltf_extensions[] = {
    {"KHR_lights_punctual", NULL},
    {"KHR_materials_emissive_strength", NULL},
    {"KHR_materials_specular", "its textures"},
    /* Not read by Debian's assimp 5.2: a file that needs them fails to
     * import (named then); one that merely lists them has fallbacks. */
    {"KHR_draco_mesh_compression", NULL},
    {"EXT_meshopt_compression", NULL},
};

/* For a glTF: every extension the file uses that render ignores, named
 * once in a warning; one it requires that render ignores, an error naming
 * it (the file says it cannot be drawn right without it). `required` and
 * `used` as rt__gltf_precheck() gives them. */
static rt_result
gltf_extensions_check(rt_scene *s, const char *required, const char *used, char err[RT_ERR_LEN])
{
    char ignored[RT_ERR_LEN] = "", needed[RT_ERR_LEN] = "";
    for (const char *p = used; *p;) {
        size_t      len = strcspn(p, ",");
        const char *part = NULL;
        bool        known = false;
        for (size_t k = 0; k < sizeof gltf_extensions / sizeof *gltf_extensions && !known; k++)
            if (strlen(gltf_extensions[k].name) == len &&
                strncmp(p, gltf_extensions[k].name, len) == 0)
                known = true, part = gltf_extensions[k].ignored;
        if (!known || part) {
            size_t n = strlen(ignored);
            snprintf(ignored + n, sizeof ignored - n, "%s%.*s%s%s%s", n ? ", " : "", (int)len, p,
                     part ? " (" : "", part ? part : "", part ? ")" : "");
            /* required: the whole name between separators */
            for (const char *q = required; !known && *q;) {
                size_t qlen = strcspn(q, ",");
                if (qlen == len && strncmp(q, p, len) == 0) {
                    size_t m = strlen(needed);
                    snprintf(needed + m, sizeof needed - m, "%s%.*s", m ? ", " : "", (int)len, p);
                }
                q += qlen;
                q += strspn(q, ", ");
            }
        }
        p += len;
        p += strspn(p, ", ");
    }
    if (needed[0]) {
        snprintf(err, RT_ERR_LEN,
                 "needs the glTF extensions %.150s, which render does not implement", needed);
        return RT_ERR_FORMAT;
    }
    if (ignored[0]) {
        char text[RT_ERR_LEN + 64];
        snprintf(text, sizeof text, "ignores the glTF extensions %s", ignored);
        rt__scene_warn(s, text);
    }
    return RT_OK;
}

rt_result
rt_scene_load(const char *path, ustr_table *strings, rt_scene **out, char err[RT_ERR_LEN])
{
    return rt_scene_load_restricted(path, strings, NULL, out, err);
}

/* One import, run on the import's own large stack (import_guard.h):
 * assimp's parse, its post-processing, the scene build and the release of
 * assimp's scene all recurse over the node hierarchy. */
typedef struct import_job {
    const char             *path;
    ustr_table             *strings;
    unsigned                flags;
    struct aiPropertyStore *props;
    io_guard                guard; /* every file assimp opens passes here */
    const rt__gltf_facts   *facts; /* what the precheck read of a glTF */
    rt_scene               *scene; /* the result, or NULL */
    rt_result               r;
    char                    err[RT_ERR_LEN];
} import_job;

static void
import_run(void *arg)
{
    import_job *j = arg;
    /* No log stream is attached: assimp's default logger is the null one,
     * so it writes nothing to stdout or stderr. */
    struct aiFileIO io = {io_open, io_close, (char *)(void *)&j->guard};
    /* On this thread, whose malloc arena assimp's buffer comes from. */
    bool heap = obj_heap_prepare(j->path);
    rt__import_budget_start();
    const struct aiScene *ai = aiImportFileExWithProperties(j->path, j->flags, &io, j->props);
    if (ai && scene_needs_tangents(ai))
        ai = aiApplyPostProcessing(ai, aiProcess_CalcTangentSpace); /* NULL: released */
    if (!ai && j->guard.refused[0]) {
        snprintf(j->err, RT_ERR_LEN, "%s", j->guard.refused);
        j->r = RT_ERR_OPEN;
    } else if (!ai && strstr(aiGetErrorString(), "No meshes remaining")) {
        /* SortByPType dropped every mesh: points and lines only. */
        snprintf(j->err, RT_ERR_LEN, "no triangles");
        j->r = RT_ERR_EMPTY;
    } else if (!ai) {
        err_set(j->err, "not a scene file: ", aiGetErrorString(), j->path);
        j->r = RT_ERR_FORMAT;
    } else if (!ai->mRootNode || ai->mNumMeshes == 0) {
        snprintf(j->err, RT_ERR_LEN, "no triangles");
        j->r = RT_ERR_EMPTY;
    } else {
        j->r = rt__scene_build(ai, j->path, j->strings, j->facts, &j->scene, j->err);
        if (j->r == RT_OK && j->guard.refused[0] && !j->scene->warning &&
            !(j->scene->warning = strdup(j->guard.refused))) {
            rt_scene_free(j->scene);
            j->scene = NULL;
            snprintf(j->err, RT_ERR_LEN, "out of memory");
            j->r = RT_ERR_NOMEM;
        }
    }
    uint64_t asked, budget;
    if (rt__import_budget_stop(&asked, &budget)) { /* whatever came of it, the file lied */
        rt_scene_free(j->scene);
        j->scene = NULL;
        snprintf(j->err, RT_ERR_LEN,
                 "too large for its size: the import asked for %.1f MiB, over its budget of "
                 "%.1f MiB (%d MiB + %d x the bytes its files hold)",
                 (double)asked / (1 << 20), (double)budget / (1 << 20), RT_IMPORT_BUDGET_BASE_MB,
                 RT_IMPORT_BUDGET_PER_BYTE);
        j->r = RT_ERR_NOMEM;
    }
    if (ai)
        aiReleaseImport(ai);
    obj_heap_release(heap); /* after assimp has freed all it had */
}

rt_result
rt_scene_load_restricted(const char *path, ustr_table *strings, const rt_paths *allowed,
                         rt_scene **out, char err[RT_ERR_LEN])
{
    char dummy[RT_ERR_LEN];
    if (!err)
        err = dummy;
    err[0] = '\0';
    if (out)
        *out = NULL;
    if (!path || !out || !*path) {
        snprintf(err, RT_ERR_LEN, "invalid argument");
        return RT_ERR_INVALID;
    }
    if (!strings && !(strings = ustr_global())) {
        snprintf(err, RT_ERR_LEN, "out of memory");
        return RT_ERR_NOMEM;
    }

    /* Our own check first, for a plain strerror() line: assimp would say
     * "unable to open file" for any of these. */
    char        why[TEX_ERR_LEN];
    int         fd = tex_open_regular(path, why);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        snprintf(err, RT_ERR_LEN, "%s", fd < 0 ? why : strerror(errno));
        if (fd >= 0)
            close(fd);
        return RT_ERR_OPEN;
    }
    close(fd);
    if (st.st_size == 0) {
        snprintf(err, RT_ERR_LEN, "not a scene file: empty file");
        return RT_ERR_FORMAT;
    }
    rt__gltf_facts facts;
    rt_result      deep = rt__gltf_precheck(path, &facts, err);
    if (deep != RT_OK) {
        free(facts.strength);
        return deep;
    }
    const char *required = facts.required, *used = facts.used;

    /* Triangulate + SortByPType with points and lines removed: triangles
     * only. FindInvalidData drops all-zero normal/UV arrays before
     * GenSmoothNormals recomputes them. FlipUVs: (0, 0) at the image's
     * top-left, as tex_lookup() takes (s, t); assimp runs it first, so
     * bitangents point down the image. Tangents only where a material has
     * a normal map, in a second pass: assimp runs its steps in a fixed
     * order, where CalcTangentSpace comes right after GenSmoothNormals, so
     * the second pass sees what the first would have shown it, and gives
     * the same tangents. Identical vertices are joined by
     * rt__scene_build() (mesh_join_make()), not by assimp. */
    struct aiPropertyStore *props = aiCreatePropertyStore();
    if (!props) {
        snprintf(err, RT_ERR_LEN, "out of memory");
        return RT_ERR_NOMEM;
    }
    aiSetImportPropertyInteger(props, AI_CONFIG_PP_SBP_REMOVE,
                               aiPrimitiveType_POINT | aiPrimitiveType_LINE);
    unsigned flags = aiProcess_Triangulate | aiProcess_GenSmoothNormals | aiProcess_SortByPType |
                     aiProcess_ValidateDataStructure | aiProcess_FindInvalidData |
                     aiProcess_FlipUVs;

    pthread_mutex_lock(&import_lock);
    import_job job = {
        .path = path, .strings = strings, .flags = flags, .props = props, .facts = &facts};
    job.guard.allowed = allowed;
    bool ran = rt__import_on_big_stack(import_run, &job, path);
    int  run_errno = errno;
    pthread_mutex_unlock(&import_lock);
    aiReleasePropertyStore(props);
    if (!ran) {
        snprintf(err, RT_ERR_LEN, "cannot start the import: %s", strerror(run_errno));
        return RT_ERR_NOMEM;
    }
    if ((job.r == RT_ERR_FORMAT || job.r == RT_ERR_EMPTY) && required[0]) /* what it needs first */
        snprintf(err, RT_ERR_LEN, "needs the glTF extensions %.95s (%.120s)", required, job.err);
    else
        snprintf(err, RT_ERR_LEN, "%s", job.err);
    if (job.r == RT_OK &&
        (job.r = gltf_extensions_check(job.scene, required, used, err)) != RT_OK) {
        rt_scene_free(job.scene);
        job.scene = NULL;
    }
    free(facts.strength);
    *out = job.scene;
    return job.r;
}
