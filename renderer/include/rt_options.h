/* What `render` was asked to do: the command line, parsed and checked. */
#ifndef RT_OPTIONS_H
#define RT_OPTIONS_H

#include "rt_scene.h" /* rt_up_axis, rt_view */
#include "ustring.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef enum rt_integrator {
    RT_INTEGRATOR_EYELIGHT = 0, /* albedo x |cos| toward the eye, plus emission */
    RT_INTEGRATOR_NORMAL,       /* shading normal as colour */
    RT_INTEGRATOR_UV,           /* texture coordinates as colour */
    RT_INTEGRATOR_ALBEDO,       /* base colour, textured */
    RT_INTEGRATOR_AO,           /* ambient occlusion x albedo */
    RT_INTEGRATOR_PATH,         /* path tracing: lights, emission, the environment */
} rt_integrator;

/* How each texture lookup of a shading point behaves (a timing study
 * compares them): full, or --bypass-texture (intern the name, then return
 * the material's constant), or --early-out (return the constant before
 * interning). */
typedef enum rt_texture_mode {
    RT_TEXTURE_FULL = 0,
    RT_TEXTURE_BYPASS,
    RT_TEXTURE_EARLY_OUT,
} rt_texture_mode;

typedef enum rt_intern_mode {
    RT_INTERN_PER_LOOKUP = 0, /* intern the filename at every lookup (the default) */
    RT_INTERN_ONCE,           /* use the name interned at scene load */
} rt_intern_mode;

/* When the texture files a scene names are opened (decoded, for formats
 * without MIP levels, and their levels built): by the workers before the
 * first tile, in parallel, or each on its first lookup, where a worker that
 * needs a file another is opening waits for it (a study may want to see
 * that). Only full texturing opens files. */
typedef enum rt_open_mode {
    RT_OPEN_UPFRONT = 0,
    RT_OPEN_LAZY,
} rt_open_mode;

/* How the path tracer samples lights that are not points: multiple
 * importance sampling of both strategies (the default), or one of them
 * alone, for comparing them (all three converge to the same image). */
typedef enum rt_light_sampling {
    RT_SAMPLING_MIS = 0,
    RT_SAMPLING_LIGHT, /* next-event estimation only */
    RT_SAMPLING_BSDF,  /* the BSDF's directions only (point lights still by NEE) */
} rt_light_sampling;

/* How an EXR image is compressed (--exr-compression); PNG output ignores
 * it. All are lossless: the samples written are the floats rendered. zip,
 * the default, at zlib level 1; none is the quickest to write and the
 * largest file (docs/render-performance.md, "Writing the image"). */
typedef enum rt_exr_compression {
    RT_EXR_ZIP = 0,
    RT_EXR_NONE,
    RT_EXR_RLE,
    RT_EXR_ZIPS,
    RT_EXR_PIZ,
} rt_exr_compression;

#define RT_MAX_SEARCH_PATHS 16   /* --search-path, at most */
#define RT_MAX_OUTPUT_PATH  4000 /* bytes of -o and --stats-json (and room for .partial) */

typedef struct rt_options {
    const char       *scene;         /* the scene file (required) */
    const char       *output;        /* .exr or .png; default render.exr */
    unsigned          threads;       /* -t N; 0 is rejected; default: hardware threads */
    uint32_t          width, height; /* -r W H; default 640 x 480 */
    unsigned          spp;           /* --spp N; default 16 with path, else 1 */
    unsigned          tile;          /* --tile N (edge, pixels); default 32 */
    uint64_t          seed;          /* --seed N; default 0 */
    rt_texture_mode   texture_mode;
    rt_intern_mode    intern;
    rt_open_mode      open; /* --open-textures; default upfront */
    ustr_lock         lock; /* --ustring-lock; default USTR_LOCK_DEFAULT */
    rt_integrator     integrator;
    unsigned          max_depth;      /* --max-depth: bounces of a path; default 8 */
    const char       *envmap;         /* --envmap FILE: lat-long environment; NULL: none (black) */
    rt_light_sampling light_sampling; /* --light-sampling; default mis */
    size_t            max_memory_mb;  /* texture cache; 0: the texture system's default */
    uint64_t          max_scene_mb;   /* largest file an import reads; 0: rt_scene.h's default */
    rt_up_axis        up;             /* --up: the automatic camera's up axis; default y */
    bool              up_given; /* --up was given: the scene's guess (rt_scene.up) is not taken */
    rt_view           view;     /* --view; default auto (three-quarter; the file's camera) */
    bool              has_camera_pos, has_look_at, has_fov;
    float             camera_pos[3], look_at[3], fov_degrees; /* vertical */
    float             exposure;       /* stops, applied to PNG output; default 0 */
    bool              exposure_given; /* --exposure STOPS: else a dim PNG is exposed (main.c) */
    bool              resume;         /* --resume: finish the partial EXR at the output path */
    bool              restrict_paths; /* --restrict-paths: textures only from the scene's folder
                                       * and the search paths */
    const char        *search_paths[RT_MAX_SEARCH_PATHS]; /* --search-path DIR, repeatable */
    unsigned           nsearch_paths;
    bool               stats; /* --stats: the report on stderr */
    const char        *stats_json;
    bool               quiet;           /* no progress bar, no warnings but errors */
    bool               progress;        /* --progress: progress as lines, even with quiet */
    rt_exr_compression exr_compression; /* --exr-compression; default zip */
} rt_options;

/* Limits the command line enforces, with the reason in the error. */
#define RT_MAX_THREADS       1024
#define RT_MAX_SCENE_MB      (1u << 30) /* --max-scene-mb: 1 PiB */
#define RT_MAX_RESOLUTION    16384      /* per side */
#define RT_MAX_SPP           65536
#define RT_MAX_DEPTH         1024
#define RT_MAX_PIXEL_SAMPLES ((uint64_t)1 << 34) /* width * height * spp */

/* Parses argv into *o. Returns -1 to go on; otherwise the exit status main
 * should return at once: 0 after --help or --version (printed to stdout),
 * 2 after a usage error, which is printed as one line to stderr
 * ("render: -t: '0' is not a thread count (1..1024)") followed by
 * "Try 'render --help'." (named after argv[0]'s last component: a tool that
 * takes render's options names itself). Long options take "=" or a space. */
int rt_options_parse(int argc, char **argv, rt_options *o);

void rt_options_usage(FILE *f);

/* The image is cut into o->tile-pixel squares, row by row from the top
 * left; edge tiles are clipped. These give that grid's width and count. */
uint32_t rt_options_tiles_x(const rt_options *o);
uint32_t rt_options_tiles(const rt_options *o);

const char *rt_integrator_name(rt_integrator i);
const char *rt_texture_mode_name(rt_texture_mode m);       /* "full", "bypass", "early-out" */
const char *rt_intern_mode_name(rt_intern_mode m);         /* "per-lookup", "once" */
const char *rt_open_mode_name(rt_open_mode m);             /* "upfront", "lazy" */
const char *rt_light_sampling_name(rt_light_sampling m);   /* "mis", "light", "bsdf" */
const char *rt_exr_compression_name(rt_exr_compression c); /* "zip", "none", "rle", "zips", "piz" */
const char *rt_up_axis_name(rt_up_axis a);                 /* "y", "z", "x" */
const char *rt_view_name(rt_view v); /* "auto", "front", "back", "left", "right", "top", "bottom" */

#endif
