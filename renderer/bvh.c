/* The scene's Embree BVH (render_internal.h), and the same for benchmarks
 * (rt_render.h, rt_bvh_create()). */
#include "render_internal.h"

#include <embree3/rtcore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

rt_result
rt__bvh_build(const rt_scene *s, rt__bvh *b, char err[RT_ERR_LEN])
{
    b->device = rtcNewDevice("verbose=0");
    if (!b->device) {
        snprintf(err, RT_ERR_LEN, "cannot start Embree");
        return RT_ERR_NOMEM;
    }
    b->scene = rtcNewScene(b->device);
    RTCGeometry g = rtcNewGeometry(b->device, RTC_GEOMETRY_TYPE_TRIANGLE);
    float      *vb = rtcSetNewGeometryBuffer(g, RTC_BUFFER_TYPE_VERTEX, 0, RTC_FORMAT_FLOAT3,
                                             3 * sizeof(float), s->nverts);
    unsigned   *ib = rtcSetNewGeometryBuffer(g, RTC_BUFFER_TYPE_INDEX, 0, RTC_FORMAT_UINT3,
                                             3 * sizeof(unsigned), s->ntris);
    if (!vb || !ib) {
        rtcReleaseGeometry(g);
        snprintf(err, RT_ERR_LEN, "out of memory for the BVH");
        return RT_ERR_NOMEM;
    }
    memcpy(vb, s->positions, (size_t)s->nverts * 3 * sizeof(float));
    memcpy(ib, s->indices, (size_t)s->ntris * 3 * sizeof(unsigned));
    rtcCommitGeometry(g);
    rtcAttachGeometry(b->scene, g);
    rtcReleaseGeometry(g);
    if (rt__scene_has_cutouts(s)) /* alpha_filter() rides on each trace's context */
        rtcSetSceneFlags(b->scene, RTC_SCENE_FLAG_CONTEXT_FILTER_FUNCTION);
    rtcCommitScene(b->scene);
    if (rtcGetDeviceError(b->device) != RTC_ERROR_NONE) {
        snprintf(err, RT_ERR_LEN, "Embree could not build the BVH");
        return RT_ERR_NOMEM;
    }
    return RT_OK;
}

void
rt__bvh_free(rt__bvh *b)
{
    if (b->scene)
        rtcReleaseScene(b->scene);
    if (b->device)
        rtcReleaseDevice(b->device);
}

/* ---- the BVH, for benchmarks ---- */

struct rt_bvh {
    rt__bvh b;
};

rt_result
rt_bvh_create(const rt_scene *s, rt_bvh **out, char err[RT_ERR_LEN])
{
    *out = calloc(1, sizeof **out);
    if (!*out) {
        snprintf(err, RT_ERR_LEN, "out of memory");
        return RT_ERR_NOMEM;
    }
    rt_result r = rt__bvh_build(s, &(*out)->b, err);
    if (r != RT_OK) {
        rt_bvh_destroy(*out);
        *out = NULL;
    }
    return r;
}

void *
rt_bvh_embree_scene(const rt_bvh *b)
{
    return b->b.scene;
}

void
rt_bvh_destroy(rt_bvh *b)
{
    if (b) {
        rt__bvh_free(&b->b);
        free(b);
    }
}
