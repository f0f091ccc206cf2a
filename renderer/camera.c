/* The camera: a pinhole view, and its rays traced in packets. Camera rays
 * of neighbouring pixels are coherent: they visit the same BVH nodes, so
 * Embree traces eight of them together (rtcIntersect8, native on AVX2)
 * faster than one at a time. */
#include "render_internal.h"

#include <math.h>
#include <stdlib.h>

void
rt__view_setup(const rt_options *o, const rt_scene *s, rt__view *v)
{
    v->origin = o->has_camera_pos ? v3_load(o->camera_pos) : v3_load(s->camera.position);
    v->forward = o->has_look_at ? v3_norm(v3_sub(v3_load(o->look_at), v->origin))
                                : v3_load(s->camera.forward);
    if (v3_dot(v->forward, v->forward) == 0) /* --look-at the scene's camera itself */
        v->forward = v3_load(s->camera.forward);
    /* Up: the scene camera's, but where --look-at turns the automatic one
     * (which looks down on the scene) the world's, so that the view stays
     * level. */
    v3 up = s->camera.from_file || !o->has_look_at ? v3_load(s->camera.up)
            : o->up == RT_UP_Z                     ? (v3){0, 0, 1}
            : o->up == RT_UP_X                     ? (v3){1, 0, 0}
                                                   : (v3){0, 1, 0};
    v->right = v3_norm(v3_cross(v->forward, up));
    if (v3_dot(v->right, v->right) < 0.5f) /* looking along up: pick another */
        v->right = v3_norm(v3_cross(v->forward, (v3){0, 0, 1}));
    v->up = v3_cross(v->right, v->forward);
    float yfov = o->has_fov ? o->fov_degrees * RT_PI_F / 180 : s->camera.yfov;
    v->tan_y = tanf(yfov / 2);
    v->aspect = (float)o->width / (float)o->height;
    v->step_x = v3_mul(v->right, 2 * v->aspect * v->tan_y / (float)o->width);
    v->step_y = v3_mul(v->up, -2 * v->tan_y / (float)o->height);
    v->corner = v3_add(v->forward,
                       v3_add(v3_mul(v->right, -v->aspect * v->tan_y), v3_mul(v->up, v->tan_y)));
}

v3
rt__view_ray(const rt__view *v, float x, float y)
{
    return v3_add(v->corner, v3_add(v3_mul(v->step_x, x), v3_mul(v->step_y, y)));
}

/* ---- packets ---- */

void
rt__packet_fill(rt__packet *p, const rt__view *v, const float x[RT__PACKET],
                const float y[RT__PACKET], const bool traced[RT__PACKET])
{
    struct RTCRay8 *r = &p->rh.ray;
    float           dx[RT__PACKET], dy[RT__PACKET], dz[RT__PACKET];
    /* Lane by lane over arrays, each lane's arithmetic as rt__view_ray()
     * and v3_norm() do it, so the compiler makes it four lanes wide: a
     * square root and a division per four rays instead of per ray (a
     * packet's set-up waited on them). Lanes that trace nothing are
     * computed too, and left invalid. */
    for (int l = 0; l < RT__PACKET; l++) {
        dx[l] = v->corner.x + (v->step_x.x * x[l] + v->step_y.x * y[l]);
        dy[l] = v->corner.y + (v->step_x.y * x[l] + v->step_y.y * y[l]);
        dz[l] = v->corner.z + (v->step_x.z * x[l] + v->step_y.z * y[l]);
    }
    for (int l = 0; l < RT__PACKET; l++) {
        float inv = 1 / sqrtf(dx[l] * dx[l] + dy[l] * dy[l] + dz[l] * dz[l]);
        r->dir_x[l] = dx[l] * inv, r->dir_y[l] = dy[l] * inv, r->dir_z[l] = dz[l] * inv;
    }
    for (int l = 0; l < RT__PACKET; l++) {
        p->ray[l] = (v3){dx[l], dy[l], dz[l]};
        p->valid[l] = traced[l] ? -1 : 0;
        r->org_x[l] = v->origin.x, r->org_y[l] = v->origin.y, r->org_z[l] = v->origin.z;
        r->tnear[l] = 0, r->tfar[l] = INFINITY, r->time[l] = 0;
        r->mask[l] = UINT32_MAX, r->id[l] = 0, r->flags[l] = 0;
        p->rh.hit.geomID[l] = RTC_INVALID_GEOMETRY_ID;
        p->rh.hit.instID[0][l] = RTC_INVALID_GEOMETRY_ID;
    }
}

void
rt__packet_trace(rt__worker *w, rt__packet *p)
{
    rt__ray_ctx ctx;
    rt__ray_ctx_init(&ctx, w);
    ctx.rtc.flags = RTC_INTERSECT_CONTEXT_FLAG_COHERENT;
    rtcIntersect8(p->valid, w->rtc, &ctx.rtc, &p->rh);
}

void
rt__packet_prefetch_prims(const rt__worker *w, const rt__packet *p)
{
    const rt_scene *s = w->s;
    for (int l = 0; l < RT__PACKET; l++) {
        if (!rt__packet_lane_hit(p, l))
            continue;
        __builtin_prefetch(&s->indices[3 * p->rh.hit.primID[l]]);
        if (!s->one_material)
            __builtin_prefetch(&s->material[p->rh.hit.primID[l]]);
    }
}

void
rt__packet_prefetch_vertices(const rt__worker *w, const rt__packet *p)
{
    const rt_scene *s = w->s;
    for (int l = 0; l < RT__PACKET; l++) {
        if (!rt__packet_lane_hit(p, l))
            continue;
        uint32_t        prim = p->rh.hit.primID[l];
        const uint32_t *ix = &s->indices[3 * prim];
        bool uv = w->needs[rt_scene_material_of(s, prim)] & (RT__NEED_UV0 | RT__NEED_UV1);
        for (int k = 0; k < 3; k++) {
            __builtin_prefetch(&s->normals[3 * ix[k]]);
            if (uv && s->uvs) { /* and the footprint reads the positions */
                __builtin_prefetch(&s->uvs[2 * ix[k]]);
                __builtin_prefetch(&s->positions[3 * ix[k]]);
            }
        }
    }
}

void
rt__packet_prefetch(const rt__worker *w, const rt__packet *p)
{
    rt__packet_prefetch_prims(w, p);
    rt__packet_prefetch_vertices(w, p);
}

bool
rt__packet_hit(const rt__packet *p, int lane, struct RTCRayHit *out)
{
    const struct RTCRayHit8 *rh = &p->rh;
    if (!p->valid[lane] || rh->hit.geomID[lane] == RTC_INVALID_GEOMETRY_ID)
        return false;
    *out = (struct RTCRayHit){.ray = {.org_x = rh->ray.org_x[lane],
                                      .org_y = rh->ray.org_y[lane],
                                      .org_z = rh->ray.org_z[lane],
                                      .dir_x = rh->ray.dir_x[lane],
                                      .dir_y = rh->ray.dir_y[lane],
                                      .dir_z = rh->ray.dir_z[lane],
                                      .tnear = rh->ray.tnear[lane],
                                      .tfar = rh->ray.tfar[lane],
                                      .mask = UINT32_MAX},
                              .hit = {.Ng_x = rh->hit.Ng_x[lane],
                                      .Ng_y = rh->hit.Ng_y[lane],
                                      .Ng_z = rh->hit.Ng_z[lane],
                                      .u = rh->hit.u[lane],
                                      .v = rh->hit.v[lane],
                                      .primID = rh->hit.primID[lane],
                                      .geomID = rh->hit.geomID[lane]}};
    return true;
}

/* ---- the camera for benchmarks ---- */

struct rt_camera_rays {
    rt__view v;
};

rt_result
rt_camera_rays_create(const rt_options *o, const rt_scene *s, rt_camera_rays **out)
{
    *out = malloc(sizeof **out);
    if (!*out)
        return RT_ERR_NOMEM;
    rt__view_setup(o, s, &(*out)->v);
    return RT_OK;
}

void
rt_camera_rays_destroy(rt_camera_rays *c)
{
    free(c);
}

void
rt_camera_ray(const rt_camera_rays *c, float x, float y, float org[3], float dir[3])
{
    v3 d = v3_norm(rt__view_ray(&c->v, x, y));
    org[0] = c->v.origin.x, org[1] = c->v.origin.y, org[2] = c->v.origin.z;
    dir[0] = d.x, dir[1] = d.y, dir[2] = d.z;
}
