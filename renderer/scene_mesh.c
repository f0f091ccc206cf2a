/* The scene's geometry: the hierarchy's meshes, their vertices joined, in world space. */
#include "scene_build.h"

#include <assimp/scene.h>

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* --- transforms (the rest: scene_build.h) -------------------------------- */

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

static void
cross3(const double a[3], const double b[3], double out[3])
{
    out[0] = a[1] * b[2] - a[2] * b[1];
    out[1] = a[2] * b[0] - a[0] * b[2];
    out[2] = a[0] * b[1] - a[1] * b[0];
}

/* --- shared vertices ----------------------------------------------------- */

/* Triangles share a vertex where assimp's JoinIdenticalVertices step would
 * have them share it, found in O(n): that step sorts, slow on a large
 * height field, whose OBJ import makes one vertex per face corner. Its rule: the same position, and
 * normals, UV set 0, tangents and bitangents each no further apart than 1e-5 (as a squared distance
 * in floats, so an attribute that is NaN passes); where several earlier vertices qualify, the
 * latest, which is the one assimp's hash map finds. So the joined vertices, and the image, are as
 * they were when assimp joined them. Vertices that no triangle uses are dropped, as there, from the
 * bounds as well; the kept ones keep the file's order. Where this differs from assimp 5.2:
 * - A position is found by its bits (-0 as +0). assimp hashes the bits too,
 *   but then accepts anything within 1e-5 that shares the hash bucket: a
 *   chance of about one in the vertex count for a pair of near positions.
 * - UV set 1 is compared as UV set 0 is (5.2 ignores it, later versions do
 *   not), since a material may read it.
 * - Only the JOIN_SCAN_MAX latest vertices at one position are looked at,
 *   so that a file that piles vertices onto one point stays linear
 *   (docs/design.md, "Untrusted input"; assimp's step is quadratic there). A
 *   vertex whose twin is older is kept on its own, as if never joined. */

enum { JOIN_SCAN_MAX = 64 };

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
vertex_near(const struct aiMesh *m, const struct aiVector3D *normals, bool uv1, unsigned a,
            unsigned b)
{
    const struct aiVector3D *t0 = m->mTextureCoords[0], *t1 = m->mTextureCoords[1];
    bool                     frame = m->mTangents && m->mBitangents;
    return (!normals || vec_near(&normals[a], &normals[b])) && (!t0 || vec_near(&t0[a], &t0[b])) &&
           (!uv1 || !t1 || vec_near(&t1[a], &t1[b])) &&
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
pos_index_join(pos_index *t, const struct aiMesh *m, const struct aiVector3D *normals, bool uv1,
               const uint32_t *kept, unsigned v, uint32_t next)
{
    uint32_t p[3], q[3];
    pos_bits(m, v, p);
    uint64_t h = rt__pos_hash(p);
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
            if (vertex_near(m, normals, uv1, v, kept[w - 1]))
                return w - 1;
    } else {
        t->npos++;
    }
    t->slots[i] = next + 1;
    return UINT32_MAX;
}

/* Mesh m's normals: the file's, else those j made (NULL before it did). */
static const struct aiVector3D *
join_normals(const struct aiMesh *m, const mesh_join *j)
{
    return m->mNormals ? m->mNormals : j->normals;
}

/* Fills j for mesh m: its normals where it has none (smooth, as assimp's
 * step would have made them: rt__normals_smooth()), which vertices its
 * triangles use, and which of them join. Each face index must address one
 * of m's vertices (as rt__scene_build() requires); one that does not is
 * RT_ERR_FORMAT. */
static rt_result
mesh_join_make(const struct aiMesh *m, bool scene_uv1, mesh_join *j)
{
    rt__pos_seed();
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
        for (unsigned k = 0; k < face->mNumIndices; k++)
            if (face->mIndices[k] >= n) /* rt__normals_smooth() reads every face */
                return RT_ERR_FORMAT;
        if (face->mNumIndices != 3)
            continue; /* as mesh_append() */
        for (int k = 0; k < 3; k++) {
            unsigned ix = face->mIndices[k];
            if (j->remap[ix] == UINT32_MAX)
                j->remap[ix] = 0, nused++;
        }
    }
    if (!m->mNormals && rt__normals_smooth(m, &j->normals) != RT_OK)
        return RT_ERR_NOMEM;
    const struct aiVector3D *normals = join_normals(m, j);
    size_t                   nk = nused ? nused : 1;
    pos_index t = {.hashes = malloc(nk * sizeof *t.hashes), .older = malloc(nk * sizeof *t.older)};
    bool      uv1 = scene_uv1 && m->mTextureCoords[1];
    rt_result r = RT_ERR_NOMEM;
    if (!(j->kept = malloc(nk * sizeof *j->kept)) || !t.hashes || !t.older || !pos_index_grow(&t))
        goto out;
    for (unsigned v = 0; v < n; v++) {
        if (j->remap[v] == UINT32_MAX)
            continue;
        uint32_t twin = pos_index_join(&t, m, normals, uv1, j->kept, v, j->nkept);
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

void
rt__mesh_joins_free(mesh_join *joins, unsigned n)
{
    for (unsigned i = 0; joins && i < n; i++)
        free(joins[i].remap), free(joins[i].kept), free(joins[i].normals);
    free(joins);
}

/* --- geometry ------------------------------------------------------------ */

static void
mesh_append(walk *w, const struct aiMesh *m, const mesh_join *j, const xform *x)
{
    rt_scene *s = &w->s->pub;
    uint32_t  base = (uint32_t)w->nverts;
    double    nm[3][3], det;
    xform_normal_matrix(x, nm, &det);
    const struct aiVector3D *normals = join_normals(m, j);

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
        if (normals) {
            const struct aiVector3D *a = &normals[v];
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
void
rt__walk_node(walk *w, const struct aiNode *node, const xform *parent)
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
        rt__walk_node(w, node->mChildren[i], &x);
}
