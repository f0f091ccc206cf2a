/* Materials: their factors, their texture slots, and the textures embedded in the file. */
#include "scene_build.h"

#include <assimp/GltfMaterial.h>
#include <assimp/material.h>
#include <assimp/scene.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

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
 * false for anything else. Values as stored: rt__material_load() brings
 * them into range. */
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

bool
rt__path_is_gltf(const char *path)
{
    const char *dot = strrchr(path, '.');
    return dot && (strcasecmp(dot, ".gltf") == 0 || strcasecmp(dot, ".glb") == 0);
}

/* glTF's KHR_texture_transform, as Debian's assimp 5.2 hands it over: its
 * glTF importer turns offset, rotation and scale into an aiUVTransform for
 * assimp's own frame (v up, rotation about the centre; glTF2Importer.cpp),
 * and FlipUVs then negates the translation's v and the rotation. Undone
 * here to the file's values (checked against files whose transform is
 * known: tests render.gltf_features), then made the matrix applied to
 * glTF's UVs, which are ours (FlipUVs undoes the importer's flip). The
 * rotation's direction is the one the extension's worked example fixes
 * (offset [0, 1], rotation pi/2, scale 0.5 reads the lower-left quarter):
 * u' = cos sx u + sin sy v + ox, v' = -sin sx u + cos sy v + oy. */
static void
uv_transform_load(const struct aiMaterial *mat, enum aiTextureType type, rt_texture_slot *out)
{
    struct aiUVTransform t;
    if (aiGetMaterialUVTransform(mat, _AI_MATKEY_UVTRANSFORM_BASE, type, 0, &t) != aiReturn_SUCCESS)
        return;
    double r = t.mRotation, sx = t.mScaling.x, sy = t.mScaling.y, c = cos(r), s = sin(r);
    double ox = t.mTranslation.x - 0.5 * sx * (1 - c + s);
    double oy = t.mTranslation.y + 0.5 * sy * (s + c - 1) + 1 - sy;
    float  x[2][3] = {{(float)(c * sx), (float)(s * sy), (float)ox},
                      {(float)(-s * sx), (float)(c * sy), (float)oy}};
    static const float identity[2][3] = {{1, 0, 0}, {0, 1, 0}};
    bool               finite = true;
    for (int i = 0; i < 6; i++)
        finite = finite && isfinite(x[i / 3][i % 3]);
    if (!finite || memcmp(x, identity, sizeof x) == 0)
        return; /* NaN or infinite values from a file read as none */
    memcpy(out->uv_xform, x, sizeof x);
    out->uv_transformed = true;
}

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
            name = rt__scene_keep(c->s, texture_path(c->s->pub.folder, path.data));
            if (!name)
                return RT_ERR_NOMEM;
        }
        out->filename = name;
        out->filename_len = strlen(name);
        out->uv = uv == 1 ? 1 : 0; /* the scene keeps UV sets 0 and 1 */
        if (c->s->gltf)
            uv_transform_load(mat, type, out);
        out->name = ustr_table_intern(c->strings, name, out->filename_len);
        if (!out->name)
            return RT_ERR_NOMEM; /* ENOMEM; ERANGE needs a 1 GiB path */
        return RT_OK;
    }
    return RT_OK;
}

rt_result
rt__material_load(load_ctx *c, const struct aiMaterial *mat, rt_material *m)
{
    struct aiString  str;
    struct aiColor4D col;

    m->name = rt__scene_strdup(
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
    /* A reflectance in [0, 1] (glTF's range; beyond it a surface gives
     * back more light than it gets); NaN as 0. A base colour of -5 made
     * negative pixels, 1e300 NaN ones (an audit). */
    for (int k = 0; k < 4; k++)
        m->base_color[k] = rt_radiance(m->base_color[k], 1);

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
        m->emissive[0] = rt_radiance(col.r * strength, RT_MAX_RADIANCE);
        m->emissive[1] = rt_radiance(col.g * strength, RT_MAX_RADIANCE);
        m->emissive[2] = rt_radiance(col.b * strength, RT_MAX_RADIANCE);
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
     * opacity; an OBJ 'd' under 1 (glass, a window) blends, as it
     * dissolves in the programs that write it. glTF's OPAQUE ignores its
     * alpha. */
    m->alpha_cutoff = -1.0f;
    bool mode = aiGetMaterialString(mat, AI_MATKEY_GLTF_ALPHAMODE, &str) == aiReturn_SUCCESS;
    if (mode && strcmp(str.data, "MASK") == 0)
        m->alpha_cutoff = mat_float(mat, AI_MATKEY_GLTF_ALPHACUTOFF, 0.5f);
    else if (mode && strcmp(str.data, "BLEND") == 0)
        m->alpha_blend = true;
    else if (m->slots[RT_SLOT_OPACITY].filename)
        m->alpha_cutoff = 0.5f;
    else if (!mode && m->base_color[3] < 1)
        m->alpha_blend = true;
    return RT_OK;
}

/* Copies each encoded embedded texture (mHeight == 0: PNG, JPEG bytes)
 * under the name "<path>#embedded<N>.<hint>". Raw texel arrays
 * (mHeight > 0, from formats such as MD2, never glTF) are left out: a slot
 * that names one stays empty. */
rt_result
rt__embedded_load(load_ctx *c)
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
        char  *name = rt__scene_keep(c->s, malloc(len));
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

/* KHR_materials_emissive_strength, which assimp 5.2 does not read: each
 * material's emission times its strength, before the lights are chosen.
 * assimp keeps glTF's material order (a default material it adds comes
 * after them). */
void
rt__emissive_strengths(rt_scene *s, const rt__gltf_facts *extra)
{
    /* Brought into range after the strength, as rt__material_load() does
     * without one: a factor of 1e20 times a strength of 1e30 was infinite
     * (a review). */
    for (uint32_t m = 0; extra && m < s->nmaterials && m < extra->nstrength; m++)
        if (!isnan(extra->strength[m]))
            for (int c = 0; c < 3; c++)
                s->materials[m].emissive[c] =
                    rt_radiance(s->materials[m].emissive[c] * extra->strength[m], RT_MAX_RADIANCE);
}

void
rt__specular_factors(rt_scene *s, const rt__gltf_facts *extra)
{
    for (uint32_t m = 0; extra && m < s->nmaterials && m < extra->nspecular; m++)
        if (!isnan(extra->specular[m]))
            s->materials[m].specular = extra->specular[m] > 1 ? 1 : extra->specular[m];
}
