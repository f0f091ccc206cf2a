/* Smooth normals for a mesh that has none, as assimp's GenSmoothNormals
 * step makes them, found through a hash grid in O(n).
 *
 * assimp 5.2's step (GenVertexNormalsProcess without an angle limit, its
 * default), which this follows in the same float arithmetic:
 * - each face's normal, cross(b - a, c - a) normalised (a, b and c its
 *   first, second and last corners), is written to its vertices; where
 *   faces share a vertex, the later face's normal stays. A face of one or
 *   two corners writes NaN, which no sum takes;
 * - eps is 1e-4 of the diagonal of the bounds of all the mesh's vertices;
 * - the vertices are taken in order, and one not yet given a normal
 *   gathers every vertex v with |v - it|^2 < eps^2 (itself included), sums
 *   their face normals, normalises the sum, and gives it to all of them.
 * assimp gathers through a sort of the vertices along one direction, and
 * scans every vertex whose projection falls within eps: on a large height
 * field, where a whole row projects alike, most of a load's time
 * (docs/render-performance.md).
 * Here the vertices sit in cells 4 eps wide, so a gathering looks at the
 * vertices of at most 8 cells, 3.4 on average.
 *
 * Where this differs:
 * - the gathered normals are summed in cell order, then index order;
 *   assimp sums them in its sort's order, which for vertices at one
 *   position its std::sort leaves unspecified. Normals can differ from
 *   assimp's in their last bits.
 * - a NaN coordinate is left out of the bounds. assimp's std::min and
 *   std::max let it reset them, so its eps, and which vertices fall
 *   outside its bounds, depend on where the NaN sits; here every finite
 *   vertex lies inside the bounds. (A NaN vertex gathers nothing, itself
 *   included, in both.)
 * - where eps * eps overflows a float (a diagonal over about 1.8e23, or an
 *   infinite coordinate), every normal is 0, which the scene turns into
 *   its default; assimp would gather everything then. The scene build
 *   refuses such positions where a triangle uses them (RT_MAX_COORD), as
 *   long as no node's transform scales them down below it.
 * - assimp's sort can, at rounding boundaries, admit or miss a pair right
 *   at distance eps that the rule above would not; here the rule holds.
 *
 * Untrusted input: gatherers are at least eps apart from each other (a
 * vertex within eps of an earlier one was given its normal), so few of
 * them look at any one cell: those within eps of it, in a cube 6 eps wide,
 * where balls of radius eps / 2 around them cannot overlap: at most 655,
 * by volume. A NaN vertex gathers nothing and is skipped. The work stays
 * linear in the vertex count however the positions are piled up
 * (tests/unit/rt_normals_test.c, pile). The cells are found through the
 * scene's keyed position hash. */
#include "scene_build.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Cells per axis: the bounds' extent is at most their diagonal, 2,500
 * cells of 4 eps; the clamp in cell_of() is for rounding at the far end. */
enum { CELL_BITS = 21 };

/* The cells that hold vertices: an open-addressing table, grown by
 * doubling so that it stays at most half full, of packed cell coordinates
 * (+ 1; 0: a free slot) and each cell's first vertex; the rest follow
 * through `next`, in index order. */
typedef struct grid {
    uint64_t *keys;
    uint32_t *heads; /* vertex + 1 */
    uint32_t *next;  /* per vertex: the next one in its cell, + 1; 0: none */
    uint64_t *cell;  /* per vertex: its packed cell + 1; 0: NaN, in none */
    unsigned  bits;
    size_t    ncells;
    double    lo[3], width;
} grid;

/* assimp's aiVector3D::NormalizeSafe(), in its arithmetic. */
static struct aiVector3D
normalize_safe(struct aiVector3D v)
{
    float len = sqrtf(v.x * v.x + v.y * v.y + v.z * v.z);
    if (len > 0) {
        float inv = 1.0f / len;
        v.x *= inv, v.y *= inv, v.z *= inv;
    }
    return v;
}

static void
face_normals(const struct aiMesh *m, struct aiVector3D *fn)
{
    const struct aiVector3D *p = m->mVertices;
    for (unsigned f = 0; f < m->mNumFaces; f++) {
        const struct aiFace *face = &m->mFaces[f];
        unsigned             k = face->mNumIndices;
        if (k < 3) {
            for (unsigned i = 0; i < k; i++)
                fn[face->mIndices[i]].x = NAN;
            continue;
        }
        struct aiVector3D a = p[face->mIndices[0]], b = p[face->mIndices[1]],
                          c = p[face->mIndices[k - 1]];
        struct aiVector3D e1 = {b.x - a.x, b.y - a.y, b.z - a.z},
                          e2 = {c.x - a.x, c.y - a.y, c.z - a.z};
        struct aiVector3D n = normalize_safe((struct aiVector3D){
            e1.y * e2.z - e1.z * e2.y, e1.z * e2.x - e1.x * e2.z, e1.x * e2.y - e1.y * e2.x});
        for (unsigned i = 0; i < k; i++)
            fn[face->mIndices[i]] = n;
    }
}

/* assimp's ComputePositionEpsilon(): its ArrayBounds() starts at +-1e10;
 * NaN coordinates are left out (see the top). */
static float
position_eps(const struct aiMesh *m, float lo[3])
{
    float hi[3] = {-1e10f, -1e10f, -1e10f};
    lo[0] = lo[1] = lo[2] = 1e10f;
    for (unsigned v = 0; v < m->mNumVertices; v++) {
        const float *p = &m->mVertices[v].x;
        for (int k = 0; k < 3; k++) {
            if (p[k] != p[k])
                continue;
            lo[k] = lo[k] < p[k] ? lo[k] : p[k];
            hi[k] = p[k] < hi[k] ? hi[k] : p[k];
        }
    }
    float d[3] = {hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]};
    return sqrtf(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]) * 1e-4f;
}

/* The cell along one axis of coordinate x; monotonic in x. */
static uint32_t
cell_of(const grid *g, int k, double x)
{
    double c = floor((x - g->lo[k]) / g->width);
    return !(c > 0) ? 0 : c >= (1 << CELL_BITS) ? (1 << CELL_BITS) - 1 : (uint32_t)c;
}

static uint64_t
cell_pack(const uint32_t c[3])
{
    return ((uint64_t)c[0] | (uint64_t)c[1] << CELL_BITS | (uint64_t)c[2] << 2 * CELL_BITS) + 1;
}

/* Where packed cell `key` starts its probe: the keyed position hash of its
 * coordinates, so that no file can make its cells collide. */
static size_t
cell_home(const grid *g, uint64_t key)
{
    uint64_t c = key - 1, mask = ((uint64_t)1 << CELL_BITS) - 1;
    uint32_t xyz[3] = {(uint32_t)(c & mask), (uint32_t)(c >> CELL_BITS & mask),
                       (uint32_t)(c >> 2 * CELL_BITS)};
    return (size_t)(rt__pos_hash(xyz) >> (64 - g->bits));
}

/* The slot of packed cell `key`: its own, or the free one where it would go. */
static size_t
grid_slot(const grid *g, uint64_t key)
{
    size_t mask = ((size_t)1 << g->bits) - 1, i = cell_home(g, key);
    while (g->keys[i] && g->keys[i] != key)
        i = (i + 1) & mask;
    return i;
}

static bool
grid_grow(grid *g)
{
    unsigned  old = g->bits;
    uint64_t *keys = g->keys;
    uint32_t *heads = g->heads;
    g->bits = old ? old + 1 : 10;
    g->keys = calloc((size_t)1 << g->bits, sizeof *g->keys);
    g->heads = malloc(((size_t)1 << g->bits) * sizeof *g->heads);
    if (!g->keys || !g->heads) {
        free(keys), free(heads);
        return false;
    }
    for (size_t o = 0; old && o < (size_t)1 << old; o++)
        if (keys[o]) {
            size_t i = grid_slot(g, keys[o]);
            g->keys[i] = keys[o], g->heads[i] = heads[o];
        }
    free(keys), free(heads);
    return true;
}

/* Files every vertex with finite coordinates in its cell; a NaN vertex is
 * in none, as it is within eps of nothing. Last to first, each at the head
 * of its cell's list, so that the lists run in index order. The slots a
 * few vertices ahead are prefetched: consecutive vertices hash far apart. */
static bool
grid_fill(grid *g, const struct aiMesh *m)
{
    enum { AHEAD = 8 };
    unsigned n = m->mNumVertices;
    g->next = calloc(n ? n : 1, sizeof *g->next);
    g->cell = malloc((n ? n : 1) * sizeof *g->cell);
    if (!g->next || !g->cell || !grid_grow(g))
        return false;
    for (unsigned v = 0; v < n; v++) {
        const float *p = &m->mVertices[v].x;
        uint32_t     c[3] = {cell_of(g, 0, p[0]), cell_of(g, 1, p[1]), cell_of(g, 2, p[2])};
        g->cell[v] = p[0] != p[0] || p[1] != p[1] || p[2] != p[2] ? 0 : cell_pack(c);
    }
    for (unsigned k = 0; k < n; k++) {
        unsigned v = n - 1 - k;
        if (v >= AHEAD && g->cell[v - AHEAD])
            __builtin_prefetch(&g->keys[cell_home(g, g->cell[v - AHEAD])], 1);
        if (!g->cell[v])
            continue;
        size_t i = grid_slot(g, g->cell[v]);
        if (g->keys[i]) {
            g->next[v] = g->heads[i];
        } else {
            g->keys[i] = g->cell[v];
            if (++g->ncells > (size_t)1 << (g->bits - 1)) {
                g->heads[i] = 0;
                if (!grid_grow(g))
                    return false;
                i = grid_slot(g, g->cell[v]);
            }
        }
        g->heads[i] = v + 1;
    }
    return true;
}

/* Vertex i's gathering: sums the face normals of every vertex within eps
 * of it and gives them all the normalised sum. */
static void
gather(const grid *g, const struct aiMesh *m, unsigned i, float eps, const struct aiVector3D *fn,
       struct aiVector3D *out, bool *had, uint32_t *found)
{
    const struct aiVector3D p = m->mVertices[i];
    const float             e2 = eps * eps;
    double                  reach = 1.001 * (double)eps; /* float rounding of |d|^2 < e2 */
    uint32_t                from[3], to[3];
    for (int k = 0; k < 3; k++) {
        from[k] = cell_of(g, k, (double)(&p.x)[k] - reach);
        to[k] = cell_of(g, k, (double)(&p.x)[k] + reach);
    }
    size_t            n = 0;
    struct aiVector3D sum = {0, 0, 0};
    uint32_t          c[3];
    for (c[0] = from[0]; c[0] <= to[0]; c[0]++)
        for (c[1] = from[1]; c[1] <= to[1]; c[1]++)
            for (c[2] = from[2]; c[2] <= to[2]; c[2]++) {
                size_t s = grid_slot(g, cell_pack(c));
                for (uint32_t u = g->keys[s] ? g->heads[s] : 0; u; u = g->next[u - 1]) {
                    const struct aiVector3D q = m->mVertices[u - 1];
                    float                   dx = q.x - p.x, dy = q.y - p.y, dz = q.z - p.z;
                    if (!(dx * dx + dy * dy + dz * dz < e2))
                        continue;
                    found[n++] = u - 1; /* each vertex once: n stays within the mesh's */
                    const struct aiVector3D f = fn[u - 1];
                    if (f.x == f.x) /* NaN: a point's or a line's */
                        sum.x += f.x, sum.y += f.y, sum.z += f.z;
                }
            }
    sum = normalize_safe(sum);
    for (size_t k = 0; k < n; k++) {
        out[found[k]] = sum;
        had[found[k]] = true;
    }
}

rt_result
rt__normals_smooth(const struct aiMesh *m, struct aiVector3D **normals)
{
    unsigned           n = m->mNumVertices;
    size_t             count = n ? n : 1;
    struct aiVector3D *out = calloc(count, sizeof *out), *fn = calloc(count, sizeof *fn);
    bool              *had = calloc(count, sizeof *had);
    uint32_t          *found = malloc(count * sizeof *found); /* one gathering's vertices */
    grid               g = {0};
    float              lo[3], eps = position_eps(m, lo);
    rt_result          r = RT_ERR_NOMEM;
    if (!out || !fn || !had || !found)
        goto out;
    rt__pos_seed();
    if (!(eps > 0 && isfinite(eps * eps))) { /* 0: one point; else bounds past float's */
        r = RT_OK;
        goto out;
    }
    for (int k = 0; k < 3; k++)
        g.lo[k] = lo[k];
    g.width = 4 * (double)eps;
    if (!grid_fill(&g, m))
        goto out;
    face_normals(m, fn);
    for (unsigned i = 0; i < n; i++) {
        if (i + 8 < n && g.cell[i + 8]) /* its own cell, the usual first probe */
            __builtin_prefetch(&g.keys[cell_home(&g, g.cell[i + 8])]);
        if (!had[i] && g.cell[i]) /* a NaN vertex (no cell) would gather nothing */
            gather(&g, m, i, eps, fn, out, had, found);
    }
    r = RT_OK;
out:
    free(fn), free(had), free(found), free(g.keys), free(g.heads), free(g.next), free(g.cell);
    if (r != RT_OK) {
        free(out);
        out = NULL;
    }
    *normals = out;
    return r;
}
