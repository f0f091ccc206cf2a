/* A scene, ready to render: every mesh flattened into world space, the
 * materials with their texture slots, a camera and lights.
 *
 * rt_scene_load() imports a file through assimp (glTF 2.0 .gltf/.glb,
 * OBJ/MTL and PLY; every other importer is taken out), applies the node
 * hierarchy's transforms, triangulates, and keeps per-vertex normals, UVs
 * and tangents. The result is plain data owned by the scene: no assimp
 * type leaks out, and nothing in it changes while a render runs, so any
 * number of threads may read it. */
#ifndef RT_SCENE_H
#define RT_SCENE_H

#include "ustring.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum rt_result {
    RT_OK = 0,
    RT_ERR_OPEN,   /* the scene file cannot be read */
    RT_ERR_FORMAT, /* not a scene assimp can read, or corrupt */
    RT_ERR_EMPTY,  /* no triangles to render */
    RT_ERR_NOMEM,
    RT_ERR_INVALID, /* a bad argument */
} rt_result;

const char *rt_result_str(rt_result r);

#define RT_ERR_LEN 256

/* The five glTF metallic-roughness slots; OBJ/MTL maps fill the ones that
 * correspond (map_Kd: base colour, map_Ks: metallic-roughness, map_bump:
 * normal, map_d: the base colour's alpha, kept as its own slot). */
typedef enum rt_slot {
    RT_SLOT_BASE_COLOR = 0,
    RT_SLOT_METALLIC_ROUGHNESS,
    RT_SLOT_NORMAL,
    RT_SLOT_EMISSIVE,
    RT_SLOT_OCCLUSION,
    RT_SLOT_OPACITY, /* OBJ map_d */
    RT_SLOT_COUNT
} rt_slot;

typedef struct rt_texture_slot {
    /* The texture's path resolved against the scene's folder ('\' read as
     * '/'), or a stable synthetic name for a texture embedded in a .glb
     * ("scene.glb#embedded0.png"); NULL: the slot is empty. Owned by the
     * scene; interned on demand by the shading code, which is the point. */
    const char *filename;
    size_t      filename_len; /* known, as a string type of C++ or a shading language knows it */
    ustr        name;         /* filename interned at load (used by --intern once) */
    uint32_t    uv;           /* UV set 0 (scene uvs) or 1 (uvs1); higher sets read as 0 */
    bool        raw;          /* data, not colour (normal, metallic-roughness, occlusion,
                               * opacity) */
    /* glTF's KHR_texture_transform: a lookup reads the texture at
     * (x[0][0] u + x[0][1] v + x[0][2], x[1][0] u + x[1][1] v + x[1][2]),
     * its footprint turned alike. uv_transformed false: (u, v) as it is
     * (and x unused). Its texCoord, which would pick another UV set, is
     * not read. */
    bool  uv_transformed;
    float uv_xform[2][3];
} rt_texture_slot;

/* The most a colour the renderer adds up may hold: emission, a light's
 * intensity, a texel. What a file gives beyond it, or below 0, or as NaN,
 * is brought inside [0, RT_MAX_RADIANCE] as it is read (rt_radiance()), so
 * that no sample or pixel sum becomes infinite or NaN: a 1e38 emission
 * summed over 8 samples was infinite, a NaN texel a NaN pixel. Far above
 * any real light (a sun-lit scene's are some 1e5). */
#define RT_MAX_RADIANCE 1e9f

/* v within [0, most]; NaN gives 0. */
static inline float
rt_radiance(float v, float most)
{
    return v > 0 ? (v < most ? v : most) : 0;
}

typedef struct rt_material {
    const char *name;
    float       base_color[4]; /* linear RGBA factor, each in [0, 1] */
    float       metallic, roughness;
    float       specular; /* weight of the dielectric specular layer, 0..1: glTF's
                           * KHR_materials_specular factor (default 1); OBJ/MTL:
                           * the largest component of Ks (none: 0, Lambert) */
    float emissive[3];    /* linear, already scaled by strength; [0, RT_MAX_RADIANCE] */
    float normal_scale, occlusion_strength;
    float alpha_cutoff; /* < 0: opaque (glTF OPAQUE) or blended; else MASK at
                         * this cutoff (glTF alphaCutoff, default 0.5; an
                         * OBJ map_d gives 0.5 on the opacity slot) */
    bool alpha_blend;   /* glTF BLEND: stochastic transparency, each hit kept
                         * with probability alpha (so a pixel's samples
                         * average to the blend) */
    bool            double_sided;
    rt_texture_slot slots[RT_SLOT_COUNT];
} rt_material;

typedef enum rt_light_kind { RT_LIGHT_POINT, RT_LIGHT_SPOT, RT_LIGHT_DIRECTIONAL } rt_light_kind;

typedef struct rt_light {
    rt_light_kind kind;
    float         position[3];            /* world space (point, spot) */
    float         direction[3];           /* world space, normalised, where the light points */
    float         color[3];               /* linear, times intensity; [0, RT_MAX_RADIANCE] */
    float         inner_cone, outer_cone; /* spot: half angles from the axis, radians
                                           * (glTF's innerConeAngle, outerConeAngle) */
} rt_light;

/* The largest magnitude of a coordinate a scene or camera may have. Embree
 * asserts (and aborts the process) on a ray whose origin lies beyond
 * 1.8e18; this keeps every origin, the automatic camera's (2.6 times the
 * scene's radius from its centre) included, well inside that. */
#define RT_MAX_COORD 1e16

typedef struct rt_camera {
    float position[3], forward[3], up[3]; /* world space; forward and up orthonormal */
    float yfov;                           /* vertical field of view, radians */
    bool  from_file;                      /* false: framed on the bounding box */
} rt_camera;

/* All triangles of the scene in world space. Vertex arrays have nverts
 * entries; indices hold 3 per triangle; material[t] indexes materials. */
/* An axis of the world that is up (rt_scene.up, rt_scene_frame()). */
typedef enum rt_up_axis { RT_UP_Y = 0, RT_UP_Z, RT_UP_X } rt_up_axis;

typedef struct rt_scene {
    char    *path;   /* as given */
    char    *folder; /* textures resolve against this */
    uint32_t nverts, ntris;
    uint32_t nmeshes, ninstances; /* meshes with triangles; their placements in the hierarchy */
    float   *positions;           /* 3 per vertex */
    float   *normals;             /* 3 per vertex, normalised (computed if the file has none) */
    /* (s, t) as tex_lookup() takes them: (0, 0) is the image's top-left
     * (glTF's convention; OBJ's v is flipped on import). */
    float *uvs;  /* 2 per vertex, UV set 0; zero where the file has none */
    float *uvs1; /* 2 per vertex, UV set 1; NULL when no mesh has one */
    /* xyz along +s, normalised; w = +-1 such that cross(normal, xyz) * w
     * points up the image (-t): the glTF bitangent. Zero without UVs, and
     * everywhere when no material has a normal map (none reads them). */
    float    *tangents;    /* 4 per vertex */
    uint32_t *indices;     /* 3 per triangle, wound as in the file; a mirroring
                            * transform swaps two corners to keep that winding */
    uint32_t    *material; /* 1 per triangle */
    rt_material *materials;
    uint32_t     nmaterials;
    /* Every triangle has material[0]: a hit need not read material[], a
     * cache miss per hit on a large mesh (rt_scene_material_of()). */
    bool one_material;
    /* The file's punctual lights; and last, when they and the emissive
     * materials cannot show the scene (rt_scene_light_estimate() under
     * RT_WEAK_LIGHT of the default light's), one default directional light
     * (default_light set). */
    rt_light *lights;
    uint32_t  nlights;
    bool      default_light;
    rt_camera camera; /* the file's first camera, else framed on the bounds */
    /* The world's up as the file's format says (glTF: +y) or its shape
     * suggests: an OBJ or PLY much flatter along z than across (a terrain,
     * a city block from GIS data) is taken as z-up, up_guessed set; else +y. */
    rt_up_axis up;
    bool       up_guessed;
    float      bounds_min[3], bounds_max[3]; /* of all positions */
    float      focus_min[3], focus_max[3];   /* rt_scene_frame_bounds(), set by the import */
    /* Textures embedded in the file (.glb): their encoded bytes (PNG, JPEG)
     * under the synthetic names the slots use; handed to the texture
     * system, which reads them like files. */
    struct rt_embedded {
        const char *name;
        const void *data;
        size_t      size;
    } * embedded;
    uint32_t nembedded;
    /* What the import went on without, as one line, the first such thing:
     * a file assimp asked for and was refused ("FILE: not found, or outside
     * the allowed folders" under rt_scene_load_restricted(), "FILE: cannot
     * open: a FIFO, not a regular file", a missing material library), or a
     * texture with an empty file name; NULL: nothing. */
    char *warning;
} rt_scene;

/* The automatic camera, for a scene without one of its own: where the
 * world's up is (glTF's is +y by its specification; OBJ and PLY have none:
 * rt_scene.up is the import's guess), and which standard view to take. */
typedef enum rt_view {
    RT_VIEW_AUTO = 0, /* three-quarter: from the front, 45 degrees to the right, 30 up */
    RT_VIEW_FRONT,    /* front: from +z (y up), -y (z up) or +z (x up) */
    RT_VIEW_BACK,
    RT_VIEW_LEFT,
    RT_VIEW_RIGHT,
    RT_VIEW_TOP, /* down from above, the front at the image's bottom */
    RT_VIEW_BOTTOM,
} rt_view;

/* Frames s->camera on the geometry that matters (s->focus_min..focus_max)
 * from `view`, far enough out that the box's corners fit a 45 degree
 * vertical field of view in a 4:3 image, looking at its centre with `up`
 * up, and aims the default light (s->default_light) from behind the new
 * camera. RT_VIEW_AUTO of a level (the box less than half as tall along
 * `up` as it is wide) is instead the first of several views, 30 to 75
 * degrees up, fitted to the vertices in the box, that puts them on 40% of
 * the image (else the one that puts the most).
 * A camera from the file is kept unless `view` is not RT_VIEW_AUTO: the
 * scene's own camera wins unless a view is asked for. rt_scene_load()
 * frames a scene without a camera as (RT_UP_Y, RT_VIEW_AUTO). */
void rt_scene_frame(rt_scene *s, rt_up_axis up, rt_view view);

/* The default light: a white directional light of this irradiance (a
 * white diffuse surface facing it comes out near 1), from behind the
 * camera's right shoulder. A scene gets it when its own lights give the
 * geometry that matters less than RT_WEAK_LIGHT of that by
 * rt_scene_light_estimate(): none at all, or a few small emitters in a
 * large level (which rendered black). */
#define RT_DEFAULT_LIGHT 3.0
#define RT_WEAK_LIGHT    1e-3

/* A rough irradiance the scene's own lights (not the default one) give the
 * geometry that matters (s->focus_min..focus_max, centre c, radius r): a
 * directional light its luminance; a point or spot light its luminance over
 * its squared distance to c, taken as at least (r / 2)^2; emitters their
 * flux (pi x area x luminance) spread over a sphere of radius r. Within an
 * order of magnitude for a lit room; what it must tell apart is light from
 * almost none. */
double rt_scene_light_estimate(const rt_scene *s);

/* The box that framing looks at: along each axis, the 2nd to the 98th
 * percentile of the triangles' corners (of up to 65536 triangles evenly
 * spaced in the file), so that far outliers, a skybox of a few triangles
 * or a vast ground plane of two do not shrink the rest to a dot; with
 * fewer than 50 corners, the whole bounding box. */
void rt_scene_frame_bounds(const rt_scene *s, float lo[3], float hi[3]);

/* Loads a scene. On RT_OK *out is yours; free it with rt_scene_free(). On
 * failure *out is NULL, nothing leaks, and err holds one line without the
 * file name ("cannot open: No such file or directory", "not a scene file:
 * ...", "no triangles"). `strings` is where slot names are interned (NULL:
 * the global table). Only regular files are opened (tex_open_regular()):
 * the scene, or a file it needs, that is a FIFO or a device fails with
 * RT_ERR_OPEN ("FILE: cannot open: a FIFO, not a regular file"); one it
 * can do without is named in s->warning. Safe to call from several
 * threads; the assimp import itself runs one at a time. Writes nothing to
 * stdout or stderr. */
rt_result rt_scene_load(const char *path, ustr_table *strings, rt_scene **out,
                        char err[RT_ERR_LEN]);
void      rt_scene_free(rt_scene *s); /* NULL is a no-op */

/* As rt_scene_load(), for scenes written by others: every file assimp
 * opens (the scene, its materials, its buffers) must pass
 * rt_paths_allow_fd(allowed), opened; one that does not is closed unread (allowed NULL:
 * no check). A refused file the import cannot do without fails it with
 * RT_ERR_OPEN, "FILE: not found, or outside the allowed folders"
 * (TEX_NOT_ALLOWED: a missing file, one that is not regular and one refused
 * read alike); one it can (an OBJ's material library) is named in
 * s->warning. Textures are checked by the texture system, not here. */
struct rt_paths;
rt_result rt_scene_load_restricted(const char *path, ustr_table *strings,
                                   const struct rt_paths *allowed, rt_scene **out,
                                   char err[RT_ERR_LEN]);

/* The largest file an import reads (the scene, its material libraries,
 * its buffers), checked on the file's size before a byte is read: a 1 TB
 * sparse OBJ would otherwise be scanned for an hour and a half. */
#define RT_MAX_SCENE_FILE_MB_DEFAULT 16384

/* How a scene is loaded; zero-initialised means rt_scene_load()'s. */
typedef struct rt_scene_load_opts {
    const struct rt_paths *allowed;        /* as rt_scene_load_restricted(); NULL: any file */
    uint64_t               max_file_bytes; /* 0: RT_MAX_SCENE_FILE_MB_DEFAULT MiB */
} rt_scene_load_opts;

/* As rt_scene_load_restricted(), with o's limits (NULL: none given). A
 * file over max_file_bytes is not read: the scene itself fails the load
 * with RT_ERR_OPEN, "1.0 TiB, over the 16.0 GiB a scene's file may be
 * (--max-scene-mb)"; a file it names as a buffer or material library is
 * refused as a missing one would be, the same words naming it. */
rt_result rt_scene_load_with(const char *path, ustr_table *strings, const rt_scene_load_opts *o,
                             rt_scene **out, char err[RT_ERR_LEN]);

/* Triangle t's index into materials. */
static inline uint32_t
rt_scene_material_of(const rt_scene *s, uint32_t t)
{
    return s->one_material ? s->material[0] : s->material[t];
}

#endif
