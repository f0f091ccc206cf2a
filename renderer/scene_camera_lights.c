/* The camera and the lights: the file's first camera, its punctual lights, in world space. */
#include "scene_build.h"

#include <assimp/scene.h>
#include <assimp/version.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define RT_PI 3.14159265358979323846 /* M_PI is XSI, not C11 or POSIX */

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
gltf_old_assimp(const scene_priv *s)
{
    if (!s->gltf)
        return false;
    unsigned major = aiGetVersionMajor(), minor = aiGetVersionMinor();
    return major < 5 || (major == 5 && minor < 3);
}

/* The file's first camera, if it has one (rt_scene_frame() makes one
 * otherwise). */
void
rt__camera_load(const struct aiScene *ai, scene_priv *priv)
{
    rt_scene *s = &priv->pub;
    if (ai->mNumCameras == 0 || !ai->mCameras[0])
        return;
    const struct aiCamera *c = ai->mCameras[0];
    rt_camera             *cam = &s->camera;
    double                 fwd[3], up[3], pos[3];
    xform                  x = node_transform(ai, &c->mName);
    bool                   old = gltf_old_assimp(priv);
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

/* Light l placed by x, into o; false for a kind render does not draw
 * (ambient, area). */
static bool
light_place(const struct aiLight *l, const xform *x, rt_light *o)
{
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
        return false;
    }
    double p[3], d[3];
    xform_point(x, &l->mPosition, p);
    xform_dir(x, &l->mDirection, d);
    if (!normalize3(d))
        d[0] = 0, d[1] = 0, d[2] = -1;
    store3(o->position, p);
    store3(o->direction, d);
    o->color[0] = rt_radiance(l->mColorDiffuse.r, RT_MAX_RADIANCE);
    o->color[1] = rt_radiance(l->mColorDiffuse.g, RT_MAX_RADIANCE);
    o->color[2] = rt_radiance(l->mColorDiffuse.b, RT_MAX_RADIANCE);
    if (o->kind == RT_LIGHT_SPOT) {
        o->inner_cone = l->mAngleInnerCone;
        o->outer_cone = l->mAngleOuterCone;
    }
    return true;
}

/* A glTF's light instances, gathered by walking assimp's node tree and
 * the JSON's graph together (rt__gltf_graph): `cap` of them fit. */
typedef struct instances {
    const struct aiScene *ai;
    const rt__gltf_graph *g;
    rt_scene             *s;
    uint32_t              cap;
} instances;

/* At most this many light instances: a glTF's nodes may share children,
 * which assimp copies, and a few levels of sharing make millions. */
#define RT_MAX_LIGHT_INSTANCES (1u << 16)

static bool
instances_walk(instances *w, const struct aiNode *a, uint32_t n, const xform *parent)
{
    xform   local = xform_from_ai(&a->mTransformation), x = xform_mul(parent, &local);
    int32_t l = w->g->light[n];
    if (l >= 0 && (uint32_t)l < w->ai->mNumLights && w->ai->mLights[l]) {
        if (w->s->nlights == RT_MAX_LIGHT_INSTANCES)
            return true; /* the rest are left out */
        if (w->s->nlights == w->cap) {
            uint32_t  cap = w->cap ? 2 * w->cap : 8;
            rt_light *grown = realloc(w->s->lights, cap * sizeof *grown);
            if (!grown)
                return false;
            w->s->lights = grown, w->cap = cap;
        }
        rt_light *o = &w->s->lights[w->s->nlights];
        *o = (rt_light){.kind = RT_LIGHT_POINT};
        w->s->nlights += light_place(w->ai->mLights[l], &x, o);
    }
    if (a->mNumChildren != w->g->count[n])
        return true; /* not the shape the JSON gave: its lights stay unplaced */
    for (uint32_t i = 0; i < a->mNumChildren; i++)
        if (!instances_walk(w, a->mChildren[i], w->g->kids[w->g->first[n] + i], &x))
            return false;
    return true;
}

/* Every node that holds a light, a light of its own (rt__gltf_graph). */
static rt_result
lights_instanced(const struct aiScene *ai, const rt__gltf_graph *g, rt_scene *s)
{
    instances            w = {.ai = ai, .g = g, .s = s};
    const xform          id = xform_identity();
    const struct aiNode *root = ai->mRootNode;
    bool                 ok = true;
    if (g->nroots == 1) {
        ok = instances_walk(&w, root, g->roots[0], &id);
    } else if (root->mNumChildren == g->nroots) { /* assimp's root over the scene's */
        xform top = xform_from_ai(&root->mTransformation);
        for (uint32_t i = 0; i < g->nroots && ok; i++)
            ok = instances_walk(&w, root->mChildren[i], g->roots[i], &top);
    }
    return ok ? RT_OK : RT_ERR_NOMEM;
}

rt_result
rt__lights_load(const struct aiScene *ai, rt_scene *s, const rt__gltf_facts *extra)
{
    if (ai->mNumLights == 0)
        return RT_OK;
    rt_result r = RT_OK;
    if (extra && extra->graph && ai->mRootNode) {
        r = lights_instanced(ai, extra->graph, s);
    } else if (!(s->lights = calloc(ai->mNumLights, sizeof *s->lights))) {
        r = RT_ERR_NOMEM;
    } else { /* one light per definition, at the node of its name */
        for (unsigned i = 0; i < ai->mNumLights; i++) {
            xform x =
                ai->mLights[i] ? node_transform(ai, &ai->mLights[i]->mName) : xform_identity();
            s->nlights += ai->mLights[i] && light_place(ai->mLights[i], &x, &s->lights[s->nlights]);
        }
    }
    if (s->nlights == 0) { /* ambient and area lights only: none kept (rt__scene_default_light()) */
        free(s->lights);
        s->lights = NULL;
    }
    return r;
}
