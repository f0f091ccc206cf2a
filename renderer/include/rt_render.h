/* Rendering a loaded scene: the Embree BVH, the tile scheduler, the
 * integrators and shading with texture lookups by filename, and writing the
 * image. */
#ifndef RT_RENDER_H
#define RT_RENDER_H

#include "rt_counters.h"
#include "rt_options.h"
#include "rt_scene.h"
#include "texture.h"

#include <stdint.h>

/* What one worker did; summed into rt_render_stats after the join. */
typedef struct rt_thread_stats {
    double   busy_secs; /* wall clock from the worker's start to its end */
    double   cpu_secs;  /* of which on a CPU: the rest it waited or was preempted */
    uint64_t tiles;
    RT_WORK_COUNTS(RT_WORK_COUNT_FIELD) /* rt_counters.h */
} rt_thread_stats;

/* Adds what `from` did to `to`: every field above. */
void rt_thread_stats_add(rt_thread_stats *to, const rt_thread_stats *from);

/* What one rank of a render spread over processes did (rt_dist.h). */
typedef struct rt_rank_stats {
    double          load_secs, bvh_secs, render_secs;
    double          comm_secs;  /* in MPI calls: asking for tiles, answering, sending results */
    uint64_t        bytes_sent; /* tile requests and answers, pixels, statistics */
    unsigned        threads;
    rt_thread_stats work; /* summed over the rank's workers */
    tex_stats       tex;  /* the rank's own texture cache */
    ustr_stats      ustr; /* and string table */
} rt_rank_stats;

#define RT_MAX_RANKS 1024

typedef struct rt_render_stats {
    double load_secs, bvh_secs, render_secs;
    /* The workers' time opening textures (decoding, MIP levels, first
     * tiles; the texture system's open_us while they ran), summed over
     * them: opens before they start (an --envmap's) are not theirs. */
    double          open_secs;
    double          started; /* rt_now() at the first worker's start; 0: none started */
    unsigned        threads;
    rt_thread_stats total; /* this process's workers (a distributed render: every rank's) */
    rt_thread_stats per_thread[RT_MAX_THREADS]; /* this process's workers */
    uint64_t        ntiles;
    bool            resumed; /* from a partial image (--resume) */
    bool            partial; /* cancelled: the image lacks tiles (rt_image.done) */
    unsigned        nranks;  /* 0: one process; else ranks[0..nranks-1], on rank 0 */
    /* The view rendered: position, forward, up (the image's), vertical
     * field; from_file: the scene's own camera, unchanged by the command
     * line. */
    rt_camera camera;
    /* The scene rendered: triangles, meshes, their instances, lights (the
     * default one included). */
    uint32_t      ntris, nmeshes, ninstances, nlights;
    rt_rank_stats ranks[RT_MAX_RANKS];
} rt_render_stats;

typedef struct rt_image {
    uint32_t width, height;
    float   *rgba; /* linear, 4 floats per pixel, top row first */
    /* Which tiles (of the options' --tile edge, row by row) hold rendered
     * pixels, one byte each, 1: rendered; NULL: all of them. rt_render()
     * sets it when it was cancelled before the end; given to rt_render()
     * with rgba, it resumes: tiles marked 1 are kept, the others rendered.
     * rt_image_free() frees both. */
    uint8_t *done;
} rt_image;

/* Asks the running rt_render() to stop: every worker finishes the tile it
 * is on and takes no other, and rt_render() returns RT_OK with img->done
 * saying which tiles were rendered. A lock-free atomic store, so safe to
 * call from a signal handler (SIGINT, SIGTERM). Stays set for the process. */
void rt_render_cancel(void);
bool rt_render_cancelled(void);

/* Renders `scene` as `o` says into *img (allocated here unless img->rgba
 * is given to resume, see rt_image.done; rt_image_free() it;
 * both NULL after a failure).
 * Texture lookups go through `ts`, names through `strings`. The image
 * depends only on the scene and the options that change the picture,
 * never on threads, tile size or lock strategy. */
rt_result rt_render(const rt_options *o, const rt_scene *scene, tex_system *ts, ustr_table *strings,
                    rt_image *img, rt_render_stats *stats, char err[RT_ERR_LEN]);

/* Where one render's workers get their tiles. rt_render() hands every tile
 * out from a counter; a render spread over processes (rt_dist.h) gives each
 * process the tiles another one hands it. */
typedef struct rt_tile_source {
    /* The next tile for this process to render; false when there is none
     * left. Called by every worker thread, concurrently. */
    bool (*next)(void *ctx, uint32_t *tile);
    /* Called on the thread that called rt_render_from() about every
     * millisecond while the workers run: where a distributed render talks
     * to the other processes, so that no worker thread does. */
    void (*poll)(void *ctx);
    void    *ctx;
    unsigned rank; /* the process's name in --progress lines */
} rt_tile_source;

/* rt_render() with the tiles from `src` (NULL: all of them, as rt_render()
 * does). img->done says which tiles this call rendered; it is kept (not
 * freed as a whole image's would be) when `src` is given. */
rt_result rt_render_from(const rt_options *o, const rt_scene *scene, tex_system *ts,
                         ustr_table *strings, const rt_tile_source *src, rt_image *img,
                         rt_render_stats *stats, char err[RT_ERR_LEN]);

/* Seconds on the monotonic clock: what every time in rt_render_stats is
 * measured with. */
double rt_now(void);

/* Frees img's pixels and tile map and sets them NULL; a zeroed image is a
 * no-op. */
void rt_image_free(rt_image *img);

/* Whether an output path (already checked to be .exr or .png) names a PNG. */
bool rt_output_is_png(const char *path);

/* Where a partial image of `output` is written, and --resume reads it: the
 * output's name with ".partial" before its extension (render.exr:
 * render.partial.exr), so that a finished image is never replaced by a
 * partial one. */
void rt_partial_path(const char *output, char *buf, size_t size);

/* Writes img to o->output (EXR: float RGBA with metadata; PNG: 8-bit
 * sRGB after exposure), or, when img lacks tiles (img->done), to
 * rt_partial_path() of it, marked partial (EXR: rt:partial,
 * rt:missing_tiles), through a temporary file renamed into place. */
rt_result rt_image_write(const rt_options *o, const rt_image *img, const rt_render_stats *stats,
                         char err[RT_ERR_LEN]);

/* Every option that changes the image's pixels (the scene's file name, the
 * integrator and its settings, texture mode, samples, seed, tiles, camera
 * overrides), as one line: a partial EXR records it (rt:image_options), and
 * --resume continues only a render whose line is the same. A buffer of
 * RT_IMAGE_OPTIONS_LEN holds it whole (two paths of PATH_MAX and the
 * rest), so two renders never compare equal by being cut short alike. */
#define RT_IMAGE_OPTIONS_LEN 9216
void rt_image_options_format(const rt_options *o, char *buf, size_t size);
/* What differs between two such lines, `theirs` (a partial image's) and
 * `mine` (this render's), item by item, an item keyed by its first word:
 * "spp 64 (this render: 16), camera 1,2,3 (this render: unset)", into buf
 * (cut to size). Items the lines share are never listed. False when none
 * differs (the lines may still differ in order or form). */
bool rt_image_options_diff(const char *theirs, const char *mine, char *buf, size_t size);

/* A map of rendered tiles (rt_image.done) as the EXR of a partial render
 * records it: the tiles missing, as ascending "a-b" or "a" items joined by
 * commas, runs merged ("" when none). format: malloc'd, NULL out of
 * memory. parse: fills done[0..ntiles) (1 everywhere but the listed
 * tiles); false on anything format does not write for a partial render:
 * "", items out of order, touching or repeated, "b-a", a comma too many,
 * or a tile past ntiles. */
char *rt_tiles_missing_format(const uint8_t *done, uint32_t ntiles);
bool  rt_tiles_missing_parse(const char *s, uint8_t *done, uint32_t ntiles);

/* Sets the calling thread's floating point as rt_render()'s workers run:
 * denormals flushed to zero and read as zero (SSE's FTZ and DAZ), Embree's
 * advice for every thread that traces. A denormal operand costs a
 * microcode assist of about a hundred cycles, and Embree's traversal and a
 * path's dimming throughput can meet them. A benchmark's own tracing
 * threads call it too, to trace under the same settings. Per thread (the
 * MXCSR register is); nothing where the CPU has no SSE. */
void rt_thread_fp_setup(void);

/* The camera rays and the BVH that rt_render() uses, for benchmarks that
 * trace the same rays through raw Embree. */
typedef struct rt_camera_rays rt_camera_rays;
rt_result rt_camera_rays_create(const rt_options *o, const rt_scene *s, rt_camera_rays **out);
void      rt_camera_rays_destroy(rt_camera_rays *c);
/* The ray through image point (x, y), in pixels from the top left. */
void rt_camera_ray(const rt_camera_rays *c, float x, float y, float org[3], float dir[3]);

typedef struct rt_bvh rt_bvh;
rt_result             rt_bvh_create(const rt_scene *s, rt_bvh **out, char err[RT_ERR_LEN]);
void                 *rt_bvh_embree_scene(const rt_bvh *b); /* an RTCScene */
void                  rt_bvh_destroy(rt_bvh *b);

/* On a terminal (stderr), unless o->quiet: one line saying what the run
 * is doing before its first tile, "render: WHAT NAME ...", so that a long
 * import or BVH build is not silent. The next status, the progress bar or
 * rt_status_clear() replaces it; clear it before printing anything else.
 * NAME (or NULL) is shown safe to print (tex_name_printable()). */
void rt_status_show(const rt_options *o, const char *what, const char *name);
void rt_status_clear(const rt_options *o);

/* The final report (stderr) and its JSON twin. */
void      rt_report_print(const rt_options *o, const rt_render_stats *s, tex_system *ts,
                          ustr_table *strings, FILE *f);
rt_result rt_report_json(const rt_options *o, const rt_render_stats *s, tex_system *ts,
                         ustr_table *strings, const char *path, char err[RT_ERR_LEN]);

#endif
