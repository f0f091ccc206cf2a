/* Hits and their materials: interpolating a hit's attributes, footprints
 * for MIP levels, and looking each texture slot up by filename in the mode
 * the options ask for. */
#include "render_internal.h"

#include <string.h>

/* A slot that names a file (render_internal.h): interned, looked up or
 * short-circuited as the options' mode says. */
void
rt__slot_lookup(rt__worker *w, const rt_texture_slot *slot, const float uv[2], const tex_derivs *d,
                const float constant[4], float out[4], tex_wrap swrap, tex_wrap twrap)
{
    memcpy(out, constant, 4 * sizeof(float));
    if (w->o->texture_mode == RT_TEXTURE_EARLY_OUT) {
        w->st->early_outs++;
        return;
    }
    ustr name = slot->name;
    if (w->o->intern == RT_INTERN_PER_LOOKUP) {
        name = ustr_table_intern(w->strings, slot->filename, slot->filename_len);
        w->st->interns++;
    }
    if (w->o->texture_mode == RT_TEXTURE_BYPASS) {
        w->st->bypasses++;
        return;
    }
    tex_opts   o = {.filter = TEX_FILTER_TRILINEAR,
                    .swrap = swrap,
                    .twrap = twrap,
                    .raw = slot->raw,
                    .fill = {1, 1, 1, 1}};
    float      t[4], st[2] = {uv[0], uv[1]};
    tex_derivs td;
    if (slot->uv_transformed) { /* glTF's KHR_texture_transform */
        const float(*x)[3] = slot->uv_xform;
        st[0] = x[0][0] * uv[0] + x[0][1] * uv[1] + x[0][2];
        st[1] = x[1][0] * uv[0] + x[1][1] * uv[1] + x[1][2];
        td = (tex_derivs){
            x[0][0] * d->dsdx + x[0][1] * d->dtdx, x[1][0] * d->dsdx + x[1][1] * d->dtdx,
            x[0][0] * d->dsdy + x[0][1] * d->dtdy, x[1][0] * d->dsdy + x[1][1] * d->dtdy};
        d = &td;
    }
    w->st->lookups++;
    if (tex_lookup(w->ts, w->tc, name, st[0], st[1], d, &o, t) != TEX_OK)
        w->st->lookup_errors++;
    /* A texel NaN, negative or huge (an EXR's) is brought into range as
     * the material's factors are (rt_radiance()). */
    for (int c = 0; c < 4; c++)
        out[c] = rt_radiance(constant[c] * t[c], RT_MAX_RADIANCE);
}

/* What shading a hit on a material reads beyond its normal: interpolating
 * only that keeps a hit's cost to what the integrator and texture mode use
 * (--early-out, --bypass-texture and most integrators read no UVs). */

uint8_t
rt__material_needs(const rt_options *o, const rt_material *m)
{
    uint8_t n = o->integrator == RT_INTEGRATOR_UV ? RT__NEED_UV0 : 0;
    bool    full = o->texture_mode == RT_TEXTURE_FULL; /* else no lookup reads a coordinate */
    for (int k = RT_SLOT_BASE_COLOR; k <= RT_SLOT_OCCLUSION; k++) { /* the slots shade() reads */
        if (!m->slots[k].filename)
            continue;
        n |= RT__NEED_LOOKUP;
        if (full)
            n |= m->slots[k].uv == 1 ? RT__NEED_UV1 : RT__NEED_UV0;
    }
    if (full && m->slots[RT_SLOT_NORMAL].filename)
        n |= RT__NEED_TANGENT;
    return n;
}

/* Interpolates the triangle's attributes at barycentrics (b1, b2): the
 * normal, and what `needs` asks for (the rest stays zero). */
void
rt__hit_fill(const rt_scene *s, uint32_t prim, float b1, float b2, uint8_t needs, rt__hit *h)
{
    const uint32_t *ix = &s->indices[3 * prim];
    uint32_t        i0 = ix[0], i1 = ix[1], i2 = ix[2];
    float           w0 = 1 - b1 - b2;
    /* Summed in locals and stored once: through h, each sum would go to
     * memory and back, since h's floats may alias the scene's arrays. */
    v3 n = v3_add(
        v3_add(v3_mul(v3_load(&s->normals[3 * i0]), w0), v3_mul(v3_load(&s->normals[3 * i1]), b1)),
        v3_mul(v3_load(&s->normals[3 * i2]), b2));
    h->m = &s->materials[rt_scene_material_of(s, prim)];
    h->n = v3_norm(n);
    h->tangent = (v3){0, 0, 0};
    h->tangent_w = 1;
    for (int set = 0; set < 2; set++) {
        const float *uvs = set == 0 ? s->uvs : s->uvs1;
        if (!uvs || !(needs & (set == 0 ? RT__NEED_UV0 : RT__NEED_UV1))) {
            h->uv[set][0] = h->uv[set][1] = 0;
            continue;
        }
        for (int c = 0; c < 2; c++)
            h->uv[set][c] = uvs[2 * i0 + c] * w0 + uvs[2 * i1 + c] * b1 + uvs[2 * i2 + c] * b2;
    }
    if (needs & RT__NEED_TANGENT) {
        v3 t = v3_add(v3_add(v3_mul(v3_load(&s->tangents[4 * i0]), w0),
                             v3_mul(v3_load(&s->tangents[4 * i1]), b1)),
                      v3_mul(v3_load(&s->tangents[4 * i2]), b2));
        h->tangent = t;
        h->tangent_w = s->tangents[4 * i0 + 3] < 0 ? -1.0f : 1.0f;
    }
}

/* rt__hit_derivatives() for a hit that reads textures: into duv, a local
 * of the caller's, since stores through h could alias the scene's floats
 * and would make the compiler reload them after each one. */
static void
derivatives(const rt__worker *w, uint32_t prim, uint8_t needs, const rt__hit *h, v3 ray,
            float duv[2][4])
{
    const rt_scene *s = w->s;
    const uint32_t *ix = &s->indices[3 * prim];
    v3              a = v3_load(&s->positions[3 * ix[0]]);
    v3              e1 = v3_sub(v3_load(&s->positions[3 * ix[1]]), a);
    v3              e2 = v3_sub(v3_load(&s->positions[3 * ix[2]]), a);
    float           d11 = v3_dot(e1, e1), d12 = v3_dot(e1, e2), d22 = v3_dot(e2, e2);
    float           det = d11 * d22 - d12 * d12;
    if (det == 0)
        return; /* a degenerate triangle: no footprint, the finest level */
    /* Each set's UVs at corners 1 and 2 less corner 0's, per coordinate. */
    bool  used[2] = {false, false};
    float du1[2][2], du2[2][2];
    for (int set = 0; set < 2; set++) {
        const float *uvs = set == 0 ? s->uvs : s->uvs1;
        used[set] = uvs && (needs & (set == 0 ? RT__NEED_UV0 : RT__NEED_UV1));
        for (int c = 0; c < 2 && used[set]; c++) {
            float uv0 = uvs[2 * ix[0] + c];
            du1[set][c] = uvs[2 * ix[1] + c] - uv0;
            du2[set][c] = uvs[2 * ix[2] + c] - uv0;
        }
    }
    float inv_det = 1 / det;
    v3    from_hit = v3_sub(w->v->origin, h->p);
    float reach = -v3_dot(from_hit, h->ng);
    for (int axis = 0; axis < 2; axis++) {
        v3    dir = v3_add(ray, axis == 0 ? w->v->step_x : w->v->step_y);
        float dn = v3_dot(dir, h->ng);
        if (fabsf(dn) < 1e-8f)
            continue; /* the neighbour ray runs along the plane */
        /* Where it meets the plane, from the hit; then in barycentrics. */
        v3    r = v3_add(from_hit, v3_mul(dir, reach / dn));
        float r1 = v3_dot(r, e1), r2 = v3_dot(r, e2);
        float db1 = (d22 * r1 - d12 * r2) * inv_det, db2 = (d11 * r2 - d12 * r1) * inv_det;
        for (int set = 0; set < 2; set++)
            for (int c = 0; c < 2 && used[set]; c++)
                duv[set][2 * axis + c] = db1 * du1[set][c] + db2 * du2[set][c];
    }
}

/* Texture-coordinate derivatives from the rays one pixel right and one
 * down (ray differentials, as a renderer picks MIP levels): where each meets
 * the hit's plane, in barycentrics, mapped through the triangle's UVs. `ray`
 * is the camera ray's direction before normalising; its neighbours are
 * ray + step_x and ray + step_y. */
void
rt__hit_derivatives(rt__worker *w, uint32_t prim, uint8_t needs, rt__hit *h, v3 ray)
{
    float duv[2][4] = {{0}};
    /* Only lookups that read textures need a footprint. */
    if ((needs & (RT__NEED_UV0 | RT__NEED_UV1)) && w->o->texture_mode == RT_TEXTURE_FULL &&
        v3_dot(h->ng, h->ng) != 0)
        derivatives(w, prim, needs, h, ray, duv);
    memcpy(h->duv, duv, sizeof duv);
}

/* An isotropic footprint `width` wide (world units) at the hit, in each UV
 * set: width times the triangle's texture-to-world scale, the square root
 * of its UV area over its world area (a ray cone's footprint, after
 * Akenine-Moller et al., "Texture Level of Detail Strategies for Real-Time
 * Ray Tracing", 2019). */
void
rt__hit_footprint(rt__worker *w, uint32_t prim, uint8_t needs, rt__hit *h, float width)
{
    memset(h->duv, 0, sizeof h->duv);
    if (!(needs & (RT__NEED_UV0 | RT__NEED_UV1)) || w->o->texture_mode != RT_TEXTURE_FULL ||
        !(width > 0))
        return;
    const rt_scene *s = w->s;
    const uint32_t *ix = &s->indices[3 * prim];
    v3              a = v3_load(&s->positions[3 * ix[0]]);
    float           world = v3_len(v3_cross(v3_sub(v3_load(&s->positions[3 * ix[1]]), a),
                                            v3_sub(v3_load(&s->positions[3 * ix[2]]), a)));
    if (!(world > 0))
        return;
    for (int set = 0; set < 2; set++) {
        const float *uv = set == 0 ? s->uvs : s->uvs1;
        if (!uv)
            continue;
        float u0 = uv[2 * ix[0]], v0 = uv[2 * ix[0] + 1];
        float du1 = uv[2 * ix[1]] - u0, dv1 = uv[2 * ix[1] + 1] - v0;
        float du2 = uv[2 * ix[2]] - u0, dv2 = uv[2 * ix[2] + 1] - v0;
        float k = width * sqrtf(fabsf(du1 * dv2 - du2 * dv1) / world);
        h->duv[set][0] = k; /* ds/dx */
        h->duv[set][3] = k; /* dt/dy */
    }
}

static const float one[4] = {1, 1, 1, 1};

void
rt__surface_eval(rt__worker *w, const rt__hit *h, rt__surface *sf)
{
    const rt_material *m = h->m;
    float              nm[4], occ[4], em[4];
    float              emissive[4] = {m->emissive[0], m->emissive[1], m->emissive[2], 1};
    float              mr_const[4] = {1, m->roughness, m->metallic, 1}, mr[4];
    tex_derivs         d[2];
    for (int set = 0; set < 2; set++)
        d[set] = (tex_derivs){h->duv[set][0], h->duv[set][1], h->duv[set][2], h->duv[set][3]};
#define SLOT(k, constant, out)                                                                     \
    rt__slot_eval(w, &m->slots[k], h->uv[m->slots[k].uv & 1], &d[m->slots[k].uv & 1], constant, out)
    SLOT(RT_SLOT_BASE_COLOR, m->base_color, sf->base);
    SLOT(RT_SLOT_METALLIC_ROUGHNESS, mr_const, mr);
    SLOT(RT_SLOT_NORMAL, one, nm);
    SLOT(RT_SLOT_EMISSIVE, emissive, em);
    SLOT(RT_SLOT_OCCLUSION, one, occ);
#undef SLOT
    w->st->shading_points++;
    /* glTF: roughness in G, metallic in B. */
    sf->roughness = mr[1], sf->metallic = mr[2], sf->specular = m->specular;
    memcpy(sf->emissive, em, sizeof sf->emissive);
    sf->occlusion = 1 + m->occlusion_strength * (occ[0] - 1);

    /* The normal map in the tangent frame, when it was read (the other
     * modes' constant is no direction). */
    sf->n = h->n;
    if (w->o->texture_mode == RT_TEXTURE_FULL && m->slots[RT_SLOT_NORMAL].filename &&
        v3_dot(h->tangent, h->tangent) > 0) {
        v3    n = h->n, t = v3_norm(v3_sub(h->tangent, v3_mul(n, v3_dot(n, h->tangent))));
        v3    b = v3_mul(v3_cross(n, t), h->tangent_w);
        float x = (2 * nm[0] - 1) * m->normal_scale, y = (2 * nm[1] - 1) * m->normal_scale;
        sf->n = v3_norm(v3_add(v3_add(v3_mul(t, x), v3_mul(b, y)), v3_mul(n, 2 * nm[2] - 1)));
    }
}

void
rt__env_radiance(rt__worker *w, v3 dir, float angle, float rgb[3])
{
    const rt__env *e = w->env;
    if (!e || !e->filename) {
        rgb[0] = rgb[1] = rgb[2] = 0;
        return;
    }
    /* The environment as a slot: white when short-circuited. */
    rt_texture_slot slot = {
        .filename = e->filename, .filename_len = e->filename_len, .name = e->name};
    float s = 0.5f, t = 0.5f, out[4];
    if (!e->constant)
        rt_env_coords(dir, &s, &t);
    /* An angle of the sphere in texture units: 2 pi across, pi down. */
    tex_derivs d = {angle / (2 * RT_PI_F), 0, 0, angle / RT_PI_F};
    rt__slot_eval_wrap(w, &slot, (float[2]){s, t}, &d, one, out, TEX_WRAP_PERIODIC, TEX_WRAP_CLAMP);
    memcpy(rgb, out, 3 * sizeof(float));
}

/* ---- alpha cut-outs ---- */

bool
rt__scene_has_cutouts(const rt_scene *s)
{
    for (uint32_t m = 0; m < s->nmaterials; m++)
        if (s->materials[m].alpha_cutoff >= 0 || s->materials[m].alpha_blend)
            return true;
    return false;
}

/* A number in [0, 1) fixed by the hit and the ray's direction: a blended
 * surface's threshold. The same ray meets the same threshold whichever
 * thread traces it, so the image does not depend on -t; different rays
 * (samples) meet different ones, so they average to the blend. */
static float
blend_threshold(uint32_t prim, float b1, float b2, const float dir[3])
{
    uint32_t bits[5];
    memcpy(&bits[0], &b1, 4), memcpy(&bits[1], &b2, 4);
    memcpy(&bits[2], dir, 12);
    uint64_t h = prim;
    for (int i = 0; i < 5; i++) { /* splitmix64 steps */
        h += 0x9E3779B97F4A7C15ULL ^ bits[i];
        h = (h ^ (h >> 30)) * 0xBF58476D1CE4E5B9ULL;
        h = (h ^ (h >> 27)) * 0x94D049BB133111EBULL;
        h ^= h >> 31;
    }
    return (float)(h >> 40) * 0x1p-24f;
}

/* Whether the surface is there at (b1, b2) of `prim`, for a ray along dir:
 * its alpha (the base colour's, times an OBJ map_d's opacity) reaches the
 * cutoff, or for a blended material the ray's threshold. Looked up like any
 * slot, at the finest level. */
static bool
alpha_passes(rt__worker *w, uint32_t prim, float b1, float b2, const float dir[3])
{
    const rt_material *m = &w->s->materials[w->s->material[prim]];
    if (m->alpha_cutoff < 0 && !m->alpha_blend)
        return true;
    rt__hit h;
    rt__hit_fill(w->s, prim, b1, b2, RT__NEED_UV0 | RT__NEED_UV1, &h);
    tex_derivs             d = {0, 0, 0, 0};
    float                  base[4], opacity[4];
    const rt_texture_slot *bs = &m->slots[RT_SLOT_BASE_COLOR], *os = &m->slots[RT_SLOT_OPACITY];
    rt__slot_eval(w, bs, h.uv[bs->uv & 1], &d, m->base_color, base);
    rt__slot_eval(w, os, h.uv[os->uv & 1], &d, one, opacity);
    float alpha = base[3] * opacity[0];
    if (m->alpha_blend)
        return alpha > blend_threshold(prim, b1, b2, dir);
    return alpha >= m->alpha_cutoff;
}

/* Embree's context filter: rejects hits where the surface is cut out.
 * Layouts (rtcore_ray.h): RTCRayN has N each of org x, y, z, tnear, dir x,
 * y, z, ...; RTCHitN N each of Ng x, y, z, u, v, primID. */
static void
alpha_filter(const struct RTCFilterFunctionNArguments *args)
{
    const rt__ray_ctx *c = (const rt__ray_ctx *)(const void *)args->context;
    const float       *f = (const float *)(const void *)args->hit;
    const unsigned    *u = (const unsigned *)(const void *)args->hit;
    const float       *r = (const float *)(const void *)args->ray;
    unsigned           n = args->N;
    for (unsigned i = 0; i < n; i++) {
        float dir[3] = {r[4 * n + i], r[5 * n + i], r[6 * n + i]};
        if (args->valid[i] && !alpha_passes(c->w, u[5 * n + i], f[3 * n + i], f[4 * n + i], dir))
            args->valid[i] = 0;
    }
}

void
rt__ray_ctx_init(rt__ray_ctx *c, rt__worker *w)
{
    rtcInitIntersectContext(&c->rtc);
    c->w = w;
    if (w->cutouts)
        c->rtc.filter = alpha_filter;
}
