/* Fuzz target: the scene importer's own code, after assimp has parsed a
 * file (rt__scene_build). The input is decoded into an aiScene as assimp's
 * ValidateDataStructure step leaves one: counts match arrays, face indices
 * address their mesh's vertices, material properties are well formed. What
 * a file controls is left to the input: every float (NaN and infinities
 * too), names, texture paths ("*N" references to embedded textures among
 * them), the node hierarchy and its transforms, the type and length of
 * each material property, embedded textures, cameras and lights. Checks
 * the scene's contract: indices address vertices, material indices
 * address materials, slot names are the interned filenames, the camera's
 * frame is orthonormal, light directions are unit vectors. */
#include "fuzz_input.h"
#include "rt_scene.h"
#include "scene_internal.h"
#include "ustring.h"

#include <assimp/GltfMaterial.h>
#include <assimp/material.h>
#include <assimp/scene.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_MAX_MESHES    4
#define FUZZ_MAX_VERTS     48
#define FUZZ_MAX_FACES     48
#define FUZZ_MAX_NODES     24
#define FUZZ_MAX_DEPTH     8
#define FUZZ_MAX_MATERIALS 4
#define FUZZ_MAX_PROPS     24
#define FUZZ_MAX_TEXTURES  3
#define FUZZ_MAX_CAMERAS   2
#define FUZZ_MAX_LIGHTS    3
#define FUZZ_MAX_ALLOCS    4096

/* Every allocation of one decoded scene, freed together. */
typedef struct arena {
    void  *p[FUZZ_MAX_ALLOCS];
    size_t n;
} arena;

typedef struct builder {
    fuzz_input       in;
    arena           *a;
    struct aiScene   ai;
    struct aiString *node_names[FUZZ_MAX_NODES];
    unsigned         nnodes;
} builder;

static void *
zalloc(builder *b, size_t n, size_t size)
{
    if (b->a->n == FUZZ_MAX_ALLOCS)
        fuzz_fail("the scene decoder's arena is full");
    void *p = calloc(n ? n : 1, size);
    if (!p)
        fuzz_fail("out of memory decoding a scene");
    return b->a->p[b->a->n++] = p;
}

static void
string_set(struct aiString *s, const char *bytes, size_t len)
{
    if (len >= MAXLEN)
        len = MAXLEN - 1;
    s->length = (ai_uint32)len;
    memcpy(s->data, bytes, len);
    s->data[len] = '\0';
}

static void
string_take(builder *b, struct aiString *s, size_t max)
{
    size_t len;
    char  *bytes = fuzz_string(&b->in, max, &len);
    if (!bytes)
        fuzz_fail("out of memory decoding a scene");
    string_set(s, bytes, len);
    free(bytes);
}

static struct aiVector3D
vec3(builder *b)
{
    return (struct aiVector3D){fuzz_float(&b->in), fuzz_float(&b->in), fuzz_float(&b->in)};
}

/* --- meshes ---------------------------------------------------------------- */

static struct aiVector3D *
vec3_array(builder *b, unsigned n)
{
    struct aiVector3D *v = zalloc(b, n, sizeof *v);
    for (unsigned i = 0; i < n; i++)
        v[i] = vec3(b);
    return v;
}

static struct aiMesh *
mesh_take(builder *b, unsigned nmaterials)
{
    struct aiMesh *m = zalloc(b, 1, sizeof *m);
    uint8_t        has = fuzz_u8(&b->in);
    m->mPrimitiveTypes = has & 0x80 ? aiPrimitiveType_POINT : aiPrimitiveType_TRIANGLE;
    m->mNumVertices = fuzz_range(&b->in, 0, FUZZ_MAX_VERTS);
    m->mVertices = vec3_array(b, m->mNumVertices);
    if (has & 1)
        m->mNormals = vec3_array(b, m->mNumVertices);
    for (unsigned set = 0; set < 2; set++)
        if (has & (2u << set)) {
            m->mTextureCoords[set] = vec3_array(b, m->mNumVertices);
            m->mNumUVComponents[set] = 2;
        }
    if (has & 8) {
        m->mTangents = vec3_array(b, m->mNumVertices);
        m->mBitangents = vec3_array(b, m->mNumVertices);
    }
    m->mNumFaces = m->mNumVertices ? fuzz_range(&b->in, 0, FUZZ_MAX_FACES) : 0;
    m->mFaces = zalloc(b, m->mNumFaces, sizeof *m->mFaces);
    for (unsigned f = 0; f < m->mNumFaces; f++) {
        struct aiFace *face = &m->mFaces[f];
        face->mNumIndices = has & 0x40 ? fuzz_range(&b->in, 1, 4) : 3;
        face->mIndices = zalloc(b, face->mNumIndices, sizeof *face->mIndices);
        for (unsigned k = 0; k < face->mNumIndices; k++)
            face->mIndices[k] = fuzz_range(&b->in, 0, m->mNumVertices - 1);
    }
    m->mMaterialIndex = fuzz_range(&b->in, 0, nmaterials - 1);
    return m;
}

/* --- materials ------------------------------------------------------------- */

typedef enum prop_kind { P_STRING, P_FLOAT, P_COLOR, P_INT } prop_kind;

/* The keys the importer reads, with the kind assimp's importers store. */
static const struct {
    const char *key;
    unsigned    semantic, index;
    prop_kind   kind;
} keys[] = {
    {AI_MATKEY_NAME, P_STRING},
    {AI_MATKEY_BASE_COLOR, P_COLOR},
    {AI_MATKEY_COLOR_DIFFUSE, P_COLOR},
    {AI_MATKEY_COLOR_SPECULAR, P_COLOR},
    {AI_MATKEY_COLOR_EMISSIVE, P_COLOR},
    {AI_MATKEY_OPACITY, P_FLOAT},
    {AI_MATKEY_SPECULAR_FACTOR, P_FLOAT},
    {AI_MATKEY_METALLIC_FACTOR, P_FLOAT},
    {AI_MATKEY_ROUGHNESS_FACTOR, P_FLOAT},
    {AI_MATKEY_SHININESS, P_FLOAT},
    {AI_MATKEY_EMISSIVE_INTENSITY, P_FLOAT},
    {AI_MATKEY_GLTF_TEXTURE_SCALE(aiTextureType_NORMALS, 0), P_FLOAT},
    {AI_MATKEY_GLTF_TEXTURE_STRENGTH(aiTextureType_LIGHTMAP, 0), P_FLOAT},
    {AI_MATKEY_TWOSIDED, P_INT},
    {AI_MATKEY_GLTF_ALPHAMODE, P_STRING},
    {AI_MATKEY_GLTF_ALPHACUTOFF, P_FLOAT},
};

/* Texture types that fill the importer's slots. */
static const enum aiTextureType tex_types[] = {
    aiTextureType_BASE_COLOR,        aiTextureType_DIFFUSE,   aiTextureType_UNKNOWN,
    aiTextureType_DIFFUSE_ROUGHNESS, aiTextureType_METALNESS, aiTextureType_SPECULAR,
    aiTextureType_NORMALS,           aiTextureType_HEIGHT,    aiTextureType_EMISSIVE,
    aiTextureType_EMISSION_COLOR,    aiTextureType_LIGHTMAP,  aiTextureType_AMBIENT_OCCLUSION,
    aiTextureType_OPACITY,
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* A string property as assimp stores one: a 32-bit length, the bytes, NUL. */
static void
prop_string(builder *b, struct aiMaterialProperty *p, const char *s, size_t len)
{
    p->mType = aiPTI_String;
    p->mDataLength = (unsigned)(4 + len + 1);
    p->mData = zalloc(b, p->mDataLength, 1);
    uint32_t l32 = (uint32_t)len;
    memcpy(p->mData, &l32, 4);
    memcpy(p->mData + 4, s, len);
}

/* A texture path: bytes from the input, or an embedded reference "*N". */
static void
prop_texture_path(builder *b, struct aiMaterialProperty *p)
{
    char   ref[16];
    size_t len;
    char  *s = fuzz_string(&b->in, MAXLEN - 1, &len);
    if (!s)
        fuzz_fail("out of memory decoding a scene");
    if (fuzz_u8(&b->in) & 1) {
        len = (size_t)snprintf(ref, sizeof ref, "*%u", fuzz_range(&b->in, 0, FUZZ_MAX_TEXTURES));
        prop_string(b, p, ref, len);
    } else {
        prop_string(b, p, s, strnlen(s, len));
    }
    free(s);
}

/* Numbers: the kind's count of floats, or another count or type (a file
 * can hold an array where one value is expected). */
static void
prop_numbers(builder *b, struct aiMaterialProperty *p, prop_kind kind)
{
    uint8_t  how = fuzz_u8(&b->in);
    unsigned n = kind == P_COLOR ? 4 : 1;
    if (how & 0x10)
        n = fuzz_range(&b->in, 1, 4);
    if ((how & 0x60) == 0x20) {
        size_t len;
        char  *s = fuzz_string(&b->in, 32, &len); /* "0.5" where a float was due */
        if (!s)
            fuzz_fail("out of memory decoding a scene");
        prop_string(b, p, s, strnlen(s, len));
        free(s);
        return;
    }
    bool ints = (how & 0x60) == 0x40 || (kind == P_INT && !(how & 0x60));
    p->mType = ints ? aiPTI_Integer : (how & 0x60) == 0x60 ? aiPTI_Double : aiPTI_Float;
    size_t each = p->mType == aiPTI_Double ? sizeof(double) : 4;
    p->mDataLength = (unsigned)(n * each);
    p->mData = zalloc(b, n, each);
    for (unsigned i = 0; i < n; i++) {
        if (p->mType == aiPTI_Double) {
            double d = fuzz_float(&b->in);
            memcpy(p->mData + i * each, &d, each);
        } else {
            uint32_t bits = fuzz_u32(&b->in);
            memcpy(p->mData + i * each, &bits, each);
        }
    }
}

static struct aiMaterialProperty *
prop_take(builder *b)
{
    struct aiMaterialProperty *p = zalloc(b, 1, sizeof *p);
    unsigned                   k = fuzz_range(&b->in, 0, COUNT(keys) + 1);
    if (k < COUNT(keys)) {
        string_set(&p->mKey, keys[k].key, strlen(keys[k].key));
        p->mSemantic = keys[k].semantic;
        p->mIndex = keys[k].index;
        if (keys[k].kind == P_STRING) {
            size_t len;
            char  *s = fuzz_string(&b->in, MAXLEN - 1, &len);
            if (!s)
                fuzz_fail("out of memory decoding a scene");
            prop_string(b, p, s, strnlen(s, len));
            free(s);
        } else {
            prop_numbers(b, p, keys[k].kind);
        }
        return p;
    }
    /* A texture: its file, or the UV set it reads. */
    p->mSemantic = tex_types[fuzz_range(&b->in, 0, COUNT(tex_types) - 1)];
    p->mIndex = fuzz_range(&b->in, 0, 1);
    if (k == COUNT(keys)) {
        string_set(&p->mKey, _AI_MATKEY_TEXTURE_BASE, strlen(_AI_MATKEY_TEXTURE_BASE));
        prop_texture_path(b, p);
    } else {
        string_set(&p->mKey, _AI_MATKEY_UVWSRC_BASE, strlen(_AI_MATKEY_UVWSRC_BASE));
        prop_numbers(b, p, P_INT);
    }
    return p;
}

static struct aiMaterial *
material_take(builder *b)
{
    struct aiMaterial *m = zalloc(b, 1, sizeof *m);
    m->mNumProperties = fuzz_range(&b->in, 0, FUZZ_MAX_PROPS);
    m->mNumAllocated = m->mNumProperties;
    m->mProperties = zalloc(b, m->mNumProperties, sizeof *m->mProperties);
    for (unsigned i = 0; i < m->mNumProperties; i++)
        m->mProperties[i] = prop_take(b);
    return m;
}

/* --- embedded textures ----------------------------------------------------- */

static struct aiTexture *
texture_take(builder *b)
{
    struct aiTexture *t = zalloc(b, 1, sizeof *t);
    bool              raw = fuzz_u8(&b->in) & 1;
    t->mWidth = fuzz_range(&b->in, 0, 64);
    t->mHeight = raw ? fuzz_range(&b->in, 1, 4) : 0;
    size_t bytes = raw ? (size_t)t->mWidth * t->mHeight * sizeof(struct aiTexel) : t->mWidth;
    t->pcData = zalloc(b, bytes, 1);
    for (size_t i = 0; i < bytes; i++)
        ((uint8_t *)t->pcData)[i] = fuzz_u8(&b->in);
    size_t len;
    char  *hint = fuzz_string(&b->in, HINTMAXTEXTURELEN - 1, &len);
    if (!hint)
        fuzz_fail("out of memory decoding a scene");
    memcpy(t->achFormatHint, hint, len);
    free(hint);
    return t;
}

/* --- nodes, cameras, lights ------------------------------------------------ */

static void
transform_take(builder *b, struct aiMatrix4x4 *m)
{
    float  *f = &m->a1;
    uint8_t how = fuzz_u8(&b->in) % 4;
    for (int i = 0; i < 16; i++)
        f[i] = i % 5 == 0 ? 1.0f : 0.0f; /* identity */
    if (how == 1) {                      /* a translation */
        m->a4 = fuzz_float(&b->in), m->b4 = fuzz_float(&b->in), m->c4 = fuzz_float(&b->in);
    } else if (how == 2) { /* the 3x3 part: scales, rotations, mirrors, singular */
        for (int r = 0; r < 3; r++)
            for (int c = 0; c < 3; c++)
                f[4 * r + c] = fuzz_float(&b->in);
    } else if (how == 3) {
        for (int i = 0; i < 16; i++)
            f[i] = fuzz_float(&b->in);
    }
}

static struct aiNode *
node_take(builder *b, struct aiNode *parent, unsigned depth)
{
    struct aiNode *n = zalloc(b, 1, sizeof *n);
    n->mParent = parent;
    string_take(b, &n->mName, 16);
    b->node_names[b->nnodes++] = &n->mName;
    transform_take(b, &n->mTransformation);
    n->mNumMeshes = fuzz_range(&b->in, 0, 3);
    n->mMeshes = zalloc(b, n->mNumMeshes, sizeof *n->mMeshes);
    for (unsigned i = 0; i < n->mNumMeshes; i++)
        n->mMeshes[i] = fuzz_range(&b->in, 0, b->ai.mNumMeshes - 1);
    unsigned nchildren = depth < FUZZ_MAX_DEPTH ? fuzz_range(&b->in, 0, 3) : 0;
    n->mChildren = zalloc(b, nchildren, sizeof *n->mChildren);
    for (unsigned i = 0; i < nchildren && b->nnodes < FUZZ_MAX_NODES; i++)
        n->mChildren[n->mNumChildren++] = node_take(b, n, depth + 1);
    return n;
}

/* A camera's or light's name: a node's (so it takes that node's world
 * transform), or one of its own. */
static void
owner_name(builder *b, struct aiString *name)
{
    unsigned k = fuzz_range(&b->in, 0, b->nnodes);
    if (k < b->nnodes)
        *name = *b->node_names[k];
    else
        string_take(b, name, 16);
}

static struct aiCamera *
camera_take(builder *b)
{
    struct aiCamera *c = zalloc(b, 1, sizeof *c);
    owner_name(b, &c->mName);
    c->mPosition = vec3(b);
    c->mLookAt = vec3(b);
    c->mUp = vec3(b);
    c->mHorizontalFOV = fuzz_float(&b->in);
    c->mAspect = fuzz_float(&b->in);
    return c;
}

static struct aiLight *
light_take(builder *b)
{
    struct aiLight *l = zalloc(b, 1, sizeof *l);
    owner_name(b, &l->mName);
    l->mType = (enum aiLightSourceType)fuzz_range(&b->in, 0, 6);
    l->mPosition = vec3(b);
    l->mDirection = vec3(b);
    struct aiVector3D c = vec3(b);
    l->mColorDiffuse = (struct aiColor3D){c.x, c.y, c.z};
    l->mAngleInnerCone = fuzz_float(&b->in);
    l->mAngleOuterCone = fuzz_float(&b->in);
    return l;
}

/* --- the scene --------------------------------------------------------------- */

static void
scene_take(builder *b)
{
    struct aiScene *ai = &b->ai;
    ai->mNumMaterials = fuzz_range(&b->in, 1, FUZZ_MAX_MATERIALS);
    ai->mMaterials = zalloc(b, ai->mNumMaterials, sizeof *ai->mMaterials);
    for (unsigned i = 0; i < ai->mNumMaterials; i++)
        ai->mMaterials[i] = material_take(b);
    ai->mNumMeshes = fuzz_range(&b->in, 1, FUZZ_MAX_MESHES);
    ai->mMeshes = zalloc(b, ai->mNumMeshes, sizeof *ai->mMeshes);
    for (unsigned i = 0; i < ai->mNumMeshes; i++)
        ai->mMeshes[i] = mesh_take(b, ai->mNumMaterials);
    ai->mNumTextures = fuzz_range(&b->in, 0, FUZZ_MAX_TEXTURES);
    ai->mTextures = zalloc(b, ai->mNumTextures, sizeof *ai->mTextures);
    for (unsigned i = 0; i < ai->mNumTextures; i++)
        ai->mTextures[i] = texture_take(b);
    ai->mRootNode = node_take(b, NULL, 0);
    ai->mNumCameras = fuzz_range(&b->in, 0, FUZZ_MAX_CAMERAS);
    ai->mCameras = zalloc(b, ai->mNumCameras, sizeof *ai->mCameras);
    for (unsigned i = 0; i < ai->mNumCameras; i++)
        ai->mCameras[i] = camera_take(b);
    ai->mNumLights = fuzz_range(&b->in, 0, FUZZ_MAX_LIGHTS);
    ai->mLights = zalloc(b, ai->mNumLights, sizeof *ai->mLights);
    for (unsigned i = 0; i < ai->mNumLights; i++)
        ai->mLights[i] = light_take(b);
}

/* The scene file's path: its folder is where texture paths resolve. */
static char *
path_take(builder *b)
{
    static const char *const paths[] = {"scene.gltf", "dir/scene.glb", "/abs/dir/scene.obj",
                                        "./a/../b/scene.ply", "/scene.gltf"};
    unsigned                 k = fuzz_range(&b->in, 0, COUNT(paths));
    if (k < COUNT(paths))
        return strdup(paths[k]);
    size_t len;
    char  *p = fuzz_string(&b->in, 600, &len);
    if (p && !p[0]) {
        free(p);
        p = strdup("x");
    }
    return p;
}

/* --- checking what came out ------------------------------------------------ */

static bool
unit(const float v[3])
{
    float len = sqrtf(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    return fabsf(len - 1) < 1e-3f;
}

static void
check_scene(const rt_scene *s)
{
    if (s->ntris == 0 || s->nmaterials == 0 || !s->materials)
        fuzz_fail("a scene without triangles or materials was accepted");
    for (uint64_t i = 0; i < 3 * (uint64_t)s->ntris; i++)
        if (s->indices[i] >= s->nverts)
            fuzz_fail("a triangle index past the vertices");
    for (uint32_t t = 0; t < s->ntris; t++)
        if (s->material[t] >= s->nmaterials)
            fuzz_fail("a material index past the materials");
    for (uint32_t m = 0; m < s->nmaterials; m++) {
        const rt_material *mat = &s->materials[m];
        if (!mat->name)
            fuzz_fail("a material without a name");
        for (int k = 0; k < RT_SLOT_COUNT; k++) {
            const rt_texture_slot *slot = &mat->slots[k];
            if (slot->filename && (!slot->name || ustr_len(slot->name) != slot->filename_len ||
                                   memcmp(slot->name, slot->filename, slot->filename_len) != 0 ||
                                   strlen(slot->filename) != slot->filename_len || slot->uv > 1))
                fuzz_fail("a texture slot whose name is not its interned filename");
        }
    }
    const rt_camera *c = &s->camera;
    float dot = c->forward[0] * c->up[0] + c->forward[1] * c->up[1] + c->forward[2] * c->up[2];
    if (!unit(c->forward) || !unit(c->up) || !(fabsf(dot) < 1e-3f))
        fuzz_fail("the camera's frame is not orthonormal");
    if (!(c->yfov > 0 && c->yfov < 3.1416f))
        fuzz_fail("the camera's field of view is out of (0, pi)");
    bool emissive = false; /* emissive triangles light a scene without punctual lights */
    for (uint32_t m = 0; m < s->nmaterials; m++)
        for (int k = 0; k < 3; k++)
            emissive |= s->materials[m].emissive[k] > 0;
    if (s->nlights == 0 && !emissive)
        fuzz_fail("a scene with no light and nothing emissive, and no default light");
    for (uint32_t i = 0; i < s->nlights; i++)
        if (!unit(s->lights[i].direction))
            fuzz_fail("a light direction that is not a unit vector");
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static arena a;
    builder      b = {.in = {data, size}, .a = &a};
    char        *path = path_take(&b);
    ustr_table  *strings = NULL;
    if (path && ustr_table_create(NULL, &strings) == USTR_OK) {
        scene_take(&b);
        rt_scene *s;
        char      err[RT_ERR_LEN];
        if (rt__scene_build(&b.ai, path, strings, NULL, &s, err) == RT_OK) {
            check_scene(s);
            rt_scene_free(s);
        } else {
            fuzz_check_err(err, sizeof err);
        }
    }
    ustr_table_destroy(strings);
    free(path);
    for (size_t i = 0; i < a.n; i++)
        free(a.p[i]);
    a.n = 0;
    return 0;
}
