/* What the render loop's files share (render.c: tiles, workers and the
 * simple integrators; bvh.c: Embree; camera.c: the view; shading.c: hits
 * and texture slots; path.c: the path tracer; progress.c: what a render
 * shows while it runs; clock.c: the clocks). Not a public header. */
#ifndef RT_RENDER_INTERNAL_H
#define RT_RENDER_INTERNAL_H

#include "rt_lights.h"
#include "rt_render.h"
#include "rt_sampler.h"
#include "rt_vec.h"

#include <embree3/rtcore.h>
#include <pthread.h>
#include <stdatomic.h>

/* Seconds of CPU time the calling thread has run (clock.c; rt_now(), in
 * rt_render.h, is the wall clock). */
double rt__thread_cpu_secs(void);

/* The scene's Embree BVH (bvh.c): rt__bvh_build() fills both, or returns an
 * error with err; rt__bvh_free() releases what was made. */
typedef struct rt__bvh {
    RTCDevice device;
    RTCScene  scene;
} rt__bvh;
rt_result rt__bvh_build(const rt_scene *s, rt__bvh *b, char err[RT_ERR_LEN]);
void      rt__bvh_free(rt__bvh *b);

/* What a render shows while it runs (progress.c). The bar, on a terminal
 * (not with --quiet): d of total tiles done, the time since t0 and the
 * time left at the rate so far; final ends its line. */
void rt__progress_bar(const rt_options *o, uint32_t d, uint32_t total, double t0, bool final);

/* --progress: a line on stderr as the workers start (the render is under
 * way: its signal handlers are in place), once the first tile is done,
 * then at most one a second, and one at the end; for logs, where a bar
 * cannot be drawn, and for programs that wait on a render's progress. With
 * a tile source (src), this process's own tiles: it cannot see the others'. */
typedef struct rt__progress_log {
    uint32_t shown; /* tiles done at the last line */
    double   at;    /* rt_now() of the last line */
} rt__progress_log;
void rt__progress_line(const rt_options *o, rt__progress_log *pl, uint32_t d, uint32_t total,
                       double start, const rt_tile_source *src, bool first, bool final);

/* The camera: a pinhole (camera.c). */
typedef struct rt__view {
    v3    origin, forward, right, up;
    float tan_y, aspect;
    v3    step_x, step_y; /* how rt__view_ray() changes one pixel right, one down */
    v3    corner;         /* the ray through the image's top left corner */
} rt__view;
void rt__view_setup(const rt_options *o, const rt_scene *s, rt__view *v);
/* A direction (not normalised) through image point (x, y), in pixels from
 * the top left; it moves by step_x and step_y per pixel. */
v3 rt__view_ray(const rt__view *v, float x, float y);

/* A texture file to open before the first tile (--open-textures upfront):
 * a name as a slot interns it, and whether lookups read it as data. */
typedef struct rt__open_job {
    ustr name;
    bool raw;
} rt__open_job;

/* The environment map (--envmap), looked up by filename like a slot. */
typedef struct rt__env {
    const char *filename; /* NULL: none, black (rt__env_radiance()) */
    size_t      filename_len;
    ustr        name; /* interned at setup (--intern once) */
    /* Every texel the same (tex_file_info.constant): a lookup's direction
     * does not matter, so none is mapped to coordinates; the lookup itself,
     * by filename, still happens. */
    bool constant;
} rt__env;

/* How many workers are still running. Each one signals `left` as it goes,
 * so the main thread, waiting between progress updates, wakes the moment
 * the last one leaves instead of at its next update. */
typedef struct rt__crew {
    pthread_mutex_t lock; /* guards running and open; takes no other lock */
    pthread_cond_t  left; /* a worker has left: running fell */
    pthread_cond_t  gate; /* open: every worker has been started */
    unsigned        running;
    bool            open;
} rt__crew;

/* One worker thread: what it reads (shared, read-only) and its own state. */
typedef struct rt__worker {
    const rt_options     *o;
    const rt_scene       *s;
    const rt__view       *v;
    RTCScene              rtc;
    tex_system           *ts;
    ustr_table           *strings;
    rt_image             *img;
    const rt_lights      *lights; /* the path tracer's */
    const rt__env        *env;
    _Atomic uint32_t     *next_job, *tiles_done;
    rt__crew             *crew;
    const rt_tile_source *src;   /* tiles from here after the opens; NULL: from next_job */
    const rt__open_job   *opens; /* jobs 0..nopens-1; then the tiles */
    const uint8_t        *needs; /* rt__material_needs() per material */
    uint8_t              *done;  /* per tile, 1: rendered (rt_image.done) */
    uint32_t              nopens, tiles_x, ntiles;
    float                 scene_radius; /* half the bounds' diagonal: ray offsets, AO reach */
    bool                  cutouts;      /* some material cuts out by alpha: filter hits */
    rt_thread_stats      *st;
    tex_thread           *tc;
    pthread_t             thread;
    double                start, end; /* the worker's own clock readings */
} rt__worker;

typedef struct rt__hit {
    v3                 p, ng, n, tangent;
    float              tangent_w;
    float              uv[2][2];  /* per UV set */
    float              duv[2][4]; /* du/dx, dv/dx, du/dy, dv/dy per set */
    const rt_material *m;
} rt__hit;

/* The context of every trace of a render: Embree sees the first member;
 * the alpha filter finds the worker behind it. */
typedef struct rt__ray_ctx {
    struct RTCIntersectContext rtc;
    rt__worker                *w;
} rt__ray_ctx;
void rt__ray_ctx_init(rt__ray_ctx *c, rt__worker *w);

/* Camera rays traced together: the pixels of one block of the image,
 * RT__BLOCK_W x RT__BLOCK_H, aligned to the image (not to tiles), one
 * sample each. Which rays share a packet depends only on the block, never
 * on the tile size or thread that traces it, so a pixel's hit is the same
 * in every render of the image: a tile that cuts a block still traces the
 * whole block and shades its own pixels. */
enum { RT__BLOCK_W = 4, RT__BLOCK_H = 2, RT__PACKET = RT__BLOCK_W * RT__BLOCK_H };
typedef struct rt__packet {
    struct RTCRayHit8 rh;                /* rays in, hits out (Embree's layout) */
    int               valid[RT__PACKET]; /* -1: a ray; 0: a lane past the image */
    v3                ray[RT__PACKET];   /* each ray's direction before normalising */
} rt__packet;
_Static_assert(RT__PACKET == 8, "rt__packet_trace() calls rtcIntersect8");

/* Lane l becomes the camera ray through image point (x[l], y[l]), traced
 * where traced[l] (the others are left empty). */
void rt__packet_fill(rt__packet *p, const rt__view *v, const float x[RT__PACKET],
                     const float y[RT__PACKET], const bool traced[RT__PACKET]);
/* Traces the packet's rays; counts nothing (the caller counts rays). */
void rt__packet_trace(rt__worker *w, rt__packet *p);
/* Ask the memory system for what shading the packet's hits reads, so that
 * eight lanes' cache misses overlap instead of coming one after another
 * (on a large mesh each hit misses the cache several times). In two steps,
 * because the second reads what the first fetches: _prims asks for the
 * hit triangles' indices and materials; _vertices reads those indices and
 * asks for their vertex normals, and UVs and positions where the material
 * reads textures. A caller that can do other work between the two (trace
 * the next packet) finds both in cache; rt__packet_prefetch() does both at
 * once. */
void rt__packet_prefetch_prims(const rt__worker *w, const rt__packet *p);
void rt__packet_prefetch_vertices(const rt__worker *w, const rt__packet *p);
void rt__packet_prefetch(const rt__worker *w, const rt__packet *p);
/* Whether lane `lane` hit the scene; if so, *out is its ray and hit as a
 * single ray's. */
bool rt__packet_hit(const rt__packet *p, int lane, struct RTCRayHit *out);

/* Whether lane `lane` hit the scene, for a caller that reads the hit in
 * place (p->rh's arrays at `lane`) rather than copied out whole. */
static inline bool
rt__packet_lane_hit(const rt__packet *p, int lane)
{
    return p->valid[lane] && p->rh.hit.geomID[lane] != RTC_INVALID_GEOMETRY_ID;
}

/* Whether any material cuts out by alpha (glTF MASK, OBJ map_d): then the
 * BVH enables context filters and traces pass shading.c's alpha_filter()
 * (rt__ray_ctx_init()). */
bool rt__scene_has_cutouts(const rt_scene *s);

/* What shading a hit reads beyond its normal (rt__material_needs()).
 * RT__NEED_LOOKUP: some slot that shading reads names a file, so shading
 * looks it up (or interns it) in every texture mode; without it a hit's
 * surface is the material's constants. */
enum { RT__NEED_UV0 = 1, RT__NEED_UV1 = 2, RT__NEED_TANGENT = 4, RT__NEED_LOOKUP = 8 };

uint8_t rt__material_needs(const rt_options *o, const rt_material *m);
/* `needs`: the hit's material's rt__material_needs(). */
void rt__hit_fill(const rt_scene *s, uint32_t prim, float b1, float b2, uint8_t needs, rt__hit *h);
/* The UV footprint of a hit, for MIP levels; zero (nothing computed)
 * when `needs`, the material's, reads no UVs. Primary rays: exact ray
 * differentials (ray = the camera direction before normalising). */
void rt__hit_derivatives(rt__worker *w, uint32_t prim, uint8_t needs, rt__hit *h, v3 ray);
/* Secondary rays: an isotropic footprint of `width` world units. */
void rt__hit_footprint(rt__worker *w, uint32_t prim, uint8_t needs, rt__hit *h, float width);

/* A slot with a file, in the options' mode: rt__slot_eval_wrap() below. */
void rt__slot_lookup(rt__worker *w, const rt_texture_slot *slot, const float uv[2],
                     const tex_derivs *d, const float constant[4], float out[4], tex_wrap swrap,
                     tex_wrap twrap);

/* One texture slot at a shading point, in the options' mode: `constant`
 * is the material's value, returned when the slot is empty or the lookup
 * is short-circuited, and the factor the texture is multiplied by
 * otherwise. Inline, so that an empty slot (most slots of most materials)
 * costs no call. */
static inline void
rt__slot_eval_wrap(rt__worker *w, const rt_texture_slot *slot, const float uv[2],
                   const tex_derivs *d, const float constant[4], float out[4], tex_wrap swrap,
                   tex_wrap twrap)
{
    if (slot->filename)
        rt__slot_lookup(w, slot, uv, d, constant, out, swrap, twrap);
    else
        out[0] = constant[0], out[1] = constant[1], out[2] = constant[2], out[3] = constant[3];
}

/* As rt__slot_eval_wrap(), repeating in both directions. */
static inline void
rt__slot_eval(rt__worker *w, const rt_texture_slot *slot, const float uv[2], const tex_derivs *d,
              const float constant[4], float out[4])
{
    rt__slot_eval_wrap(w, slot, uv, d, constant, out, TEX_WRAP_PERIODIC, TEX_WRAP_PERIODIC);
}

/* A hit's material with every slot looked up (five lookups, the timing
 * studies' unit of work). */
typedef struct rt__surface {
    float base[4]; /* linear RGBA */
    float metallic, roughness, specular;
    float emissive[3];
    float occlusion; /* 1: none */
    v3    n;         /* shading normal, normal map applied; not yet facing anything */
} rt__surface;
void rt__surface_eval(rt__worker *w, const rt__hit *h, rt__surface *sf);

/* The environment's radiance toward direction dir (from the scene), looked
 * up by filename in the options' mode; a footprint of `angle` radians. */
void rt__env_radiance(rt__worker *w, v3 dir, float angle, float rgb[3]);

/* One path-traced sample through the camera ray `ray` (unnormalised, from
 * the view's origin) whose hit is `first` (NULL: it missed the scene);
 * whether it hit. */
bool rt__path_sample(rt__worker *w, rt_sampler *smp, v3 ray, const struct RTCRayHit *first,
                     float rgb[3]);

#endif
