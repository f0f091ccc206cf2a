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
gltf_old_assimp(const char *path)
{
    if (!rt__path_is_gltf(path))
        return false;
    unsigned major = aiGetVersionMajor(), minor = aiGetVersionMinor();
    return major < 5 || (major == 5 && minor < 3);
}

/* The file's first camera, if it has one (rt_scene_frame() makes one
 * otherwise). */
void
rt__camera_load(const struct aiScene *ai, rt_scene *s)
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

rt_result
rt__lights_load(const struct aiScene *ai, rt_scene *s)
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
