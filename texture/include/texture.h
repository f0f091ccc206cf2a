/* The texture system: filtered lookups of image files named by ustr.
 *
 * Like a production texture cache, it is lazy (a file is opened on its first
 * lookup), MIP-mapped (levels from the file, or built on load when it has
 * none), tiled (the cache holds tiles, not images) and bounded in memory
 * (cold tiles are evicted under max_memory_mb and reloaded on demand). A
 * file that has to be decoded whole (PNG, JPEG, a scanline EXR, a TIFF in
 * strips) and whose tiles fit in what the cache has free keeps them there
 * as it is decoded; they go to the spill file only if they are evicted.
 *
 * Threads: one tex_system per render, shared by every worker; one
 * tex_thread per worker, never shared. A lookup that finds its tile in the
 * cache takes no lock and writes no cache line that another thread writes:
 * the file is found through the thread's microcache or a read-only table
 * keyed by the ustr pointer, the tile through an atomic pointer, and a tile
 * being evicted is freed only when no lookup can still be reading it (a
 * hazard pointer per thread, not a reference count per lookup; unlike
 * epochs, a preempted reader holds back one tile, not every eviction). */
#ifndef TEXTURE_H
#define TEXTURE_H

#include "tex_image.h"
#include "ustring.h"

#include <stdio.h>

typedef struct tex_system tex_system; /* opaque; one per render */
typedef struct tex_thread tex_thread; /* opaque; one per worker, never shared */

/* What a file refused by tex_config.allow, or one that cannot be opened
 * while `allow` is set, is reported as: the same words for both. */
#define TEX_NOT_ALLOWED "not found, or outside the allowed folders"

/* The texture memory budget a zero tex_config.max_memory_mb stands for. */
#define TEX_DEFAULT_MAX_MEMORY_MB 1024

typedef struct tex_config { /* zero-initialised means defaults */
    /* The texture memory budget in MiB; 0: TEX_DEFAULT_MAX_MEMORY_MB. The tile cache and what
     * decodes hold beyond their rows share it: an interlaced PNG's whole
     * image, a progressive (or multi-scan) JPEG's coefficients, an EXR
     * that is not MIP-mapped, read whole. A decode waits until the others
     * leave it room, and tiles are evicted to make it; a file that needs
     * more than all of it is refused ("interlaced PNG 16384x16384 needs
     * 2048 MiB to decode, over the texture memory budget of 1024 MiB
     * (--max-memory-mb)"), reported once and drawn with the fill colour,
     * as an unreadable one is, whatever else is opening at the time. Such
     * files are not read smaller instead: a progressive JPEG's
     * coefficients do not shrink with libjpeg's scaling, and a texture's
     * size must not change with the budget. Rows, a few rows of tiles per
     * level and per decode, are outside it. */
    size_t      max_memory_mb;
    unsigned    max_open_files; /* tiled files kept open at once; 0: 256 */
    ustr_table *strings;        /* where UDIM-resolved names are interned; NULL: the global table */
    /* Called once per file that cannot be used, with the file's name and the
     * reason (one line); NULL: tex_report_stderr(). May run on any worker
     * thread, never twice for one file. */
    void (*report)(void *ctx, const char *name, const char *reason);
    void *report_ctx;
    /* Untrusted scenes: NULL, any file may be read; else a file is read
     * only if allow(allow_ctx, fd) says so of it, opened: the file is
     * opened once, judged by its descriptor, and every read of it then
     * goes through that descriptor (a PNG or JPEG) or its /proc/self/fd
     * name (an EXR or TIFF, whose libraries open by name), so it is the
     * file judged that is read, whatever its name points to by then. Any other
     * is refused, reported once, and gives the fill colour. With `allow`
     * set, a file that cannot be opened (missing, not a regular file) and
     * one refused are reported alike, TEX_NOT_ALLOWED, so that a scene
     * learns nothing of what exists where it may not read. Files named by
     * tex_file_alias() or tex_file_alias_bytes() are the caller's own and
     * not checked. May run on any worker thread. */
    bool (*allow)(void *ctx, int fd);
    void *allow_ctx;
} tex_config;

/* The default report: "texture: NAME: REASON" on stderr, the name made
 * safe to print (tex_name_printable()). Any thread. */
void tex_report_stderr(const char *name, const char *reason);

/* Creates a texture system, with its spill file (decoded tiles) made and
 * unlinked at once in $TMPDIR, else /tmp. On TEX_OK *out is yours; free it
 * with tex_system_destroy(). On failure *out is NULL, nothing leaks, and
 * err (if not NULL) says why: "cannot make the tile spill file in
 * /nosuch: No such file or directory", "out of memory". */
tex_result tex_system_create(const tex_config *cfg, tex_system **out, char err[TEX_ERR_LEN]);
/* No lookup may run during or after the call. NULL is a no-op. */
void tex_system_destroy(tex_system *ts);

/* A worker's context. Create it on the thread that will use it (or hand it
 * over before the first lookup); destroy it before the system. */
tex_result tex_thread_create(tex_system *ts, tex_thread **out);
void       tex_thread_destroy(tex_thread *tc); /* NULL is a no-op; its stats stay counted */

typedef enum tex_filter {
    TEX_FILTER_BILINEAR = 0, /* bilinear in the MIP level nearest the footprint */
    TEX_FILTER_CLOSEST,      /* nearest texel of the MIP level nearest the footprint */
    TEX_FILTER_TRILINEAR,    /* bilinear in the two levels around it, blended */
    TEX_FILTER_ANISOTROPIC,  /* trilinear probes along the footprint's major axis */
} tex_filter;

typedef enum tex_wrap {
    TEX_WRAP_PERIODIC = 0, /* repeat */
    TEX_WRAP_CLAMP,        /* the edge texel continues */
    TEX_WRAP_BLACK,        /* outside is 0 (alpha too) */
    TEX_WRAP_MIRROR,       /* repeat, every other copy flipped */
} tex_wrap;

typedef struct tex_opts {     /* zero-initialised means defaults */
    tex_filter filter;        /* default bilinear */
    tex_wrap   swrap, twrap;  /* default periodic */
    unsigned   first_channel; /* first channel returned (0: R or Y) */
    unsigned   nchannels;     /* channels returned, 1-4; 0: 4 */
    float      fill[4];       /* for channels the file lacks, and missing files */
    bool       raw;           /* data texture (normals, roughness): no sRGB decoding, and MIP
                               * levels average stored values (its own cache entry) */
    unsigned max_anisotropy;  /* probes at most; 0: 8 */
} tex_opts;

/* Screen-space derivatives of (s, t); all zero means "the finest level". */
typedef struct tex_derivs {
    float dsdx, dtdx, dsdy, dtdy;
} tex_derivs;

/* Filtered lookup of `name` at (s, t), where (0, 0) is the top-left corner
 * of the image and (1, 1) the bottom-right; writes o->nchannels floats to
 * result, linear (8- and 16-bit PNG and JPEG colour data are decoded from
 * sRGB unless o->raw). A grey file gives its value in R, G and B; channels
 * the file lacks (alpha of a grey or RGB file) give o->fill.
 *
 * A name containing "<UDIM>" is resolved per lookup: the integer tile
 * (u, v) = (floor(s), floor(t)) names the file 1001 + u + 10 v, interned
 * through the system's string table, and looked up at (s - u, t - v).
 *
 * Never fails in a way that stops a render: a missing or unreadable file
 * (or one whose tile cannot be read later: it is treated so from then on)
 * gives o->fill, is reported once, and returns its tex_result (a NULL name:
 * TEX_ERR_INVALID); TEX_OK otherwise. Safe concurrently with any other
 * lookup; `tc` belongs to the calling thread. */
tex_result tex_lookup(tex_system *ts, tex_thread *tc, ustr name, float s, float t,
                      const tex_derivs *d, const tex_opts *o, float *result);

/* Opens `name` now, as its first lookup with o->raw == raw would, so that
 * no lookup waits for it later: a renderer hands the files its scene names
 * to its workers before the first pixel, and they open in parallel, where
 * opening on first lookup has one worker wait while another decodes the
 * file it needs next. A tiled file's tiles still load on demand (a decoded
 * file's are kept as it is decoded, where they fit). A <UDIM> pattern opens
 * nothing (its tiles are files of their own, opened by their lookups),
 * unless its tiles' names would be longer than a path may be: then it is
 * reported, as its lookups' failure (TEX_ERR_INVALID) would be. A
 * file that cannot be used is reported once, as a lookup would report it,
 * and its tex_result returned. `tc` belongs to the calling thread. */
tex_result tex_file_open(tex_system *ts, tex_thread *tc, ustr name, bool raw);

/* Names the files lookups will want (names[i] with raw[i] as o->raw),
 * opening none: a thread whose lookup finds its file being opened by
 * another thread then opens one of these that nobody has begun, instead of
 * sleeping until the other is done. Files still open on their first
 * lookup, or earlier in a thread that would otherwise wait; the work of
 * opening spreads over the threads as tex_file_open() from each would
 * spread it. Call before the threads that look up start (pthread_create()
 * orders the list before them), not while lookups run; a second call
 * replaces the list. TEX_ERR_NOMEM: nothing declared. */
tex_result tex_files_declare(tex_system *ts, const ustr *names, const bool *raw, size_t n);

/* Makes lookups of `name` read the file at `path` instead: for textures
 * embedded in a scene file, which the caller writes out under a path of
 * its own while the scene keeps its synthetic name. Call it before the
 * first lookup of `name`; after one, TEX_ERR_INVALID. */
tex_result tex_file_alias(tex_system *ts, ustr name, const char *path);
/* As tex_file_alias(), but lookups of `name` read the `size` bytes at
 * `data` as the file (an image embedded in a scene file). Nothing is
 * written where it could outlive the process: each open of it copies the
 * bytes into an anonymous memory file, gone when its reader closes it, so
 * no descriptor is held between opens. The bytes stay the caller's,
 * unchanged and alive until tex_system_destroy(). */
tex_result tex_file_alias_bytes(tex_system *ts, ustr name, const void *data, size_t size);

/* What a file looks like, opening it if needed. TEX_OK or its error. */
typedef struct tex_file_info {
    uint32_t width, height, nchannels, nlevels;
    uint32_t tile_width, tile_height;
    tex_type type;
    bool     srgb;
    bool     tiled_on_disk; /* tiles are read one at a time from the file */
    /* Every texel the same (checked when a file is decoded whole, by rows: a
     * PNG, a JPEG, a scanline EXR, a TIFF in strips, a tiled EXR or TIFF of
     * one level; one with MIP levels is read a tile at a time, so never
     * marked): lookups
     * return that value without filtering, wherever the wrap modes do not
     * reach black outside the image. */
    bool constant;
} tex_file_info;
tex_result tex_file_info_get(tex_system *ts, ustr name, tex_file_info *out);

/* The counts, one list each (adding one is one line here plus the code that
 * counts it; the render's report, its --stats-json and the study's columns
 * follow). X(name, what): `name` is a uint64_t field of tex_stats.
 *
 * Counted per thread, each thread writing only its own, and summed when read: */
#define TEX_THREAD_COUNTS(X)                                                                       \
    X(lookups, "lookups")                                                                          \
    X(microcache_hits, "lookups whose file was in the thread's own cache")                         \
    X(tile_hits, "tiles found in the cache")                                                       \
    X(tile_misses, "tiles not in the cache")                                                       \
    X(tiles_loaded, "tiles read into the cache")                                                   \
    X(tiles_kept, "tiles put into the cache by their file's decode")                               \
    X(tiles_spilled, "kept tiles written to the spill file as they were evicted")                  \
    X(tiles_evicted, "tiles the cache let go")                                                     \
    X(bytes_read, "decoded bytes brought into the cache")                                          \
    X(files_opened, "opens of a file (one closed and opened again counts twice)")                  \
    X(file_errors, "files that could not be read")                                                 \
    X(open_us, "microseconds threads spent opening files (a whole image: decoding, MIP levels, "   \
               "tiles, and any wait for the memory budget), summed over threads; not the wait "    \
               "for a turn to decode")

/* Kept by the system as a whole: */
#define TEX_SYSTEM_COUNTS(X)                                                                       \
    X(files_closed, "files closed to stay under the open-file limit")                              \
    X(memory, "bytes of tiles in the cache now")                                                   \
    X(peak_memory, "bytes of tiles in the cache at most")                                          \
    X(peak_decoding, "files being opened (decoded) at once, at most: no more than the CPUs")

#define TEX_STATS_COUNTS(X) TEX_THREAD_COUNTS(X) TEX_SYSTEM_COUNTS(X)

/* A snapshot of the counts. Safe while lookups run. */
typedef struct tex_stats {
#define TEX_STATS_FIELD_(name, what) uint64_t name;
    TEX_STATS_COUNTS(TEX_STATS_FIELD_)
#undef TEX_STATS_FIELD_
} tex_stats;

void tex_system_stats(tex_system *ts, tex_stats *out);
void tex_stats_print(const tex_stats *s, const char *prefix, FILE *f);

#endif
