/* What the scene import's own files share: scene.c (the import, and the
 * build that calls on the rest), scene_mesh.c (the geometry),
 * scene_materials.c (materials, texture slots, embedded textures),
 * scene_camera_lights.c (the camera and the lights), scene_io.c (the
 * files assimp opens), scene_owned.c (the strings a scene keeps, its
 * warning) and scene_pos_hash.c (the position hash). Not a public header,
 * nor the fuzz target's: that is scene_internal.h. Everything here runs on
 * the import's own stack, one import at a time (rt_scene_load()). */
#ifndef RT_SCENE_BUILD_H
#define RT_SCENE_BUILD_H

#include "import_check.h" /* rt__gltf_facts */
#include "rt_paths.h"
#include "rt_scene.h"

#include <assimp/cfileio.h>
#include <assimp/scene.h>

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* --- the scene and the strings it owns (scene_owned.c) ------------------ */

/* The scene and the strings it owns. Every string the scene hands out
 * (path, folder, material names, slot filenames, embedded names) is one
 * malloc listed here, so rt_scene_free() needs no per-field knowledge. */
typedef struct scene_priv {
    rt_scene pub;  /* first, so an rt_scene * is a scene_priv * */
    bool     gltf; /* glTF by its bytes (rt__gltf_facts), else by its name */
    char   **strs;
    size_t   nstrs, capstrs;
} scene_priv;

/* Hands `str` (one malloc(), or NULL) to the scene, which frees it in
 * rt_scene_free(), and returns it. NULL when `str` is NULL, or when the
 * list cannot grow: `str` is freed then, and the caller fails with
 * RT_ERR_NOMEM. */
char *rt__scene_keep(scene_priv *s, char *str);

/* A copy of `str` that the scene keeps (rt__scene_keep()); NULL: out of
 * memory. */
char *rt__scene_strdup(scene_priv *s, const char *str);

/* --- transforms ---------------------------------------------------------- */

/* A 4x4 affine transform, row-major as aiMatrix4x4 (translation in column
 * 3). Doubles: deep hierarchies of float products drift. */
typedef struct xform {
    double m[4][4];
} xform;

/* xform_from_ai(): assimp's matrix as an xform; xform_mul(): a * b (b
 * applied first); xform_point(), xform_dir(): x applied to a point (with the
 * translation) and to a direction (without). */
static inline xform
xform_from_ai(const struct aiMatrix4x4 *a)
{
    xform x = {{{a->a1, a->a2, a->a3, a->a4},
                {a->b1, a->b2, a->b3, a->b4},
                {a->c1, a->c2, a->c3, a->c4},
                {a->d1, a->d2, a->d3, a->d4}}};
    return x;
}

static inline xform
xform_mul(const xform *a, const xform *b)
{
    xform r;
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++)
            r.m[i][j] = a->m[i][0] * b->m[0][j] + a->m[i][1] * b->m[1][j] +
                        a->m[i][2] * b->m[2][j] + a->m[i][3] * b->m[3][j];
    return r;
}

static inline xform
xform_identity(void)
{
    xform x = {{{1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 0}, {0, 0, 0, 1}}};
    return x;
}

static inline void
xform_point(const xform *x, const struct aiVector3D *p, double out[3])
{
    for (int i = 0; i < 3; i++)
        out[i] = x->m[i][0] * p->x + x->m[i][1] * p->y + x->m[i][2] * p->z + x->m[i][3];
}

static inline void
xform_dir(const xform *x, const struct aiVector3D *d, double out[3])
{
    for (int i = 0; i < 3; i++)
        out[i] = x->m[i][0] * d->x + x->m[i][1] * d->y + x->m[i][2] * d->z;
}

/* Scales v to length 1; false, v unchanged, where its length is under 1e-30
 * or not finite. */
static inline bool
normalize3(double v[3])
{
    double len = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    if (!(len > 1e-30) || !isfinite(len))
        return false;
    v[0] /= len, v[1] /= len, v[2] /= len;
    return true;
}

/* v as floats into dst[0..2]. */
static inline void
store3(float *dst, const double v[3])
{
    dst[0] = (float)v[0], dst[1] = (float)v[1], dst[2] = (float)v[2];
}

/* Whether a point is finite and within RT_MAX_COORD on every axis. */
static inline bool
coords_ok(const double p[3])
{
    return fabs(p[0]) <= RT_MAX_COORD && fabs(p[1]) <= RT_MAX_COORD && fabs(p[2]) <= RT_MAX_COORD;
}

/* --- geometry (scene_mesh.c) --------------------------------------------- */

/* A mesh's vertices as the scene keeps them (mesh_join_make(), scene_mesh.c). */
typedef struct mesh_join {
    /* Per aiMesh vertex: its index among the kept ones; UINT32_MAX: no
     * triangle uses it. */
    uint32_t *remap;
    /* Per kept vertex, in the file's order: the aiMesh vertex. */
    uint32_t *kept;
    /* Per aiMesh vertex where the mesh has no normals: rt__normals_smooth();
     * else NULL. */
    struct aiVector3D *normals;
    uint32_t           nkept;
    bool               done;
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

/* Visits `node` and everything below it, depth-first, each node's meshes
 * under its accumulated transform (`parent`: the transform above `node`);
 * recursion as deep as the file's nesting. Mesh indices out of range and
 * meshes without triangles are skipped.
 * - w->fill false, the count: joins each mesh's vertices at its first
 *   instance (w->joins[], which the caller frees with rt__mesh_joins_free())
 *   and adds up w->nverts, w->ntris, w->nmeshes, w->ninstances. A face
 *   index out of range stops it with w->r = RT_ERR_FORMAT; no memory, with
 *   RT_ERR_NOMEM.
 * - w->fill true, after the count: appends every instance's vertices and
 *   triangles to w->s's arrays, which the caller allocated for the count's
 *   totals (bounds_min and bounds_max started empty), widens the bounds,
 *   and keeps the first vertex beyond RT_MAX_COORD in w->far, w->far_at.
 *   Cannot fail. */
void rt__walk_node(walk *w, const struct aiNode *node, const xform *parent);

/* Frees the count's joins, n of them, and the array; NULL is a no-op. */
void rt__mesh_joins_free(mesh_join *joins, unsigned n);

/* The keyed hash of a position's (or any three words') bits (scene_pos_hash.c): multilinear,
 * its key drawn once per process from ustring's keyed hash, so no file can
 * choose positions that collide. Call rt__pos_seed() (thread-safe, once is
 * enough) before the first rt__pos_hash(). */
void     rt__pos_seed(void);
uint64_t rt__pos_hash(const uint32_t p[3]);

/* --- smooth normals (scene_normals.c) ------------------------------------ */

/* Normals for mesh m, which has none, as assimp 5.2's GenSmoothNormals
 * step makes them (scene_normals.c says how, and where they can differ in
 * their last bits), in time linear in m's vertices. Every face index must
 * address one of m's vertices. On RT_OK *normals is one per vertex, the
 * caller's to free(); RT_ERR_NOMEM leaves it NULL. */
rt_result rt__normals_smooth(const struct aiMesh *m, struct aiVector3D **normals);

/* --- materials (scene_materials.c) --------------------------------------- */

/* What loading the materials needs; embedded_names is the caller's to free
 * (the names themselves are the scene's). */
typedef struct load_ctx {
    const struct aiScene *ai;
    scene_priv           *s;
    ustr_table           *strings;
    char                **embedded_names; /* per aiTexture; NULL: not usable */
} load_ctx;

/* Copies each encoded embedded texture of c->ai (PNG, JPEG bytes) into
 * s->embedded, under the name "<path>#embedded<N>.<hint>", and sets
 * c->embedded_names[N] to it; raw texel arrays are left out (NULL there).
 * Names and bytes are the scene's (rt_scene_free()). RT_OK or
 * RT_ERR_NOMEM. */
rt_result rt__embedded_load(load_ctx *c);

/* Whether `path` names a glTF (.gltf or .glb, any case): the guess where
 * no check read the file's bytes (scene_priv.gltf). */
bool rt__path_is_gltf(const char *path);

/* Fills *m, zeroed by the caller, from `mat`: its name, its factors (a
 * default for one that is missing or unreadable) and its texture slots.
 * Slot paths are resolved against the scene's folder and interned in
 * c->strings; an embedded one ("*N") takes its name from
 * c->embedded_names, so rt__embedded_load() comes first. A texture with an
 * empty file name leaves its slot empty, and says so in s->warning if that
 * holds nothing yet. Strings are the scene's. RT_OK or RT_ERR_NOMEM. */
rt_result rt__material_load(load_ctx *c, const struct aiMaterial *mat, rt_material *m);

/* Multiplies each material's emission by the strength `extra` gives it
 * (glTF's KHR_materials_emissive_strength; NAN: none); extra NULL: does
 * nothing. */
void rt__emissive_strengths(rt_scene *s, const rt__gltf_facts *extra);
/* Sets each material's specular weight to the factor `extra` gives it
 * (glTF's KHR_materials_specular, at most 1; NAN: none). */
void rt__specular_factors(rt_scene *s, const rt__gltf_facts *extra);

/* --- camera and lights (scene_camera_lights.c) --------------------------- */

/* s->camera from the file's first camera, in world space (from_file set);
 * a file without one leaves it as it is. A degenerate frame or field of
 * view is replaced by a usable one. Reads s->gltf (how old an importer
 * read a glTF's camera). Cannot fail. */
void rt__camera_load(const struct aiScene *ai, scene_priv *s);

/* s->lights, s->nlights: the file's point, spot and directional lights, in
 * world space, directions normalised: one per node that holds one where
 * `extra` has a glTF's node graph (a definition two nodes name is two
 * lights; at most 65536), else one per definition. Ambient and area
 * lights are left out; with none kept, s->lights stays NULL. RT_OK or
 * RT_ERR_NOMEM. */
rt_result rt__lights_load(const struct aiScene *ai, rt_scene *s, const rt__gltf_facts *extra);

/* --- files assimp opens (scene_io.c) ------------------------------------- */

/* Whether the file open as fd is at most max_bytes; if not, why, in `why`
 * ("1.0 TiB, over the 16.0 GiB a scene's file may be (--max-scene-mb)"). */
bool rt__scene_file_size_ok(int fd, uint64_t max_bytes, char why[RT_ERR_LEN]);

/* What the hook knows: the folders, and the first file it refused and why
 * ("FILE: not found, or outside the allowed folders" when restricted,
 * "FILE: cannot open: a FIFO, not a regular file" when not). */
typedef struct io_guard {
    const rt_paths *allowed;
    uint64_t        max_bytes; /* a file larger is not read (rt_scene_load_opts) */
    char            refused[RT_ERR_LEN];
} io_guard;

/* assimp's open and close callbacks (aiFileIO: its UserData is an
 * io_guard). rt__io_open() opens `name` for reading, and only a regular
 * file (tex_open_regular()) that rt_paths_allow_fd(g->allowed) passes,
 * adding it to the import's memory budget. Anything else, a mode that
 * writes included, is NULL, the first refusal written to g->refused (out
 * of memory: NULL, unsaid). rt__io_close() closes and frees what
 * rt__io_open() gave; NULL is a no-op. */
struct aiFile *rt__io_open(struct aiFileIO *io, const char *name, const char *mode);
void           rt__io_close(struct aiFileIO *io, struct aiFile *f);

/* Before an OBJ import, within it: leaves the heap ready for
 * the OBJ importer's 16 MiB line buffer, in huge pages (scene_io.c says
 * how). True when it did: `path` ends in .obj (any case), on Linux with
 * glibc. rt__obj_heap_release(), called with what that returned once
 * assimp has freed everything, hands the free heap back to the system. For
 * speed only: nothing depends on either for correctness. */
bool rt__obj_heap_prepare(const char *path);
void rt__obj_heap_release(bool prepared);

#endif
