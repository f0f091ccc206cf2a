/* OpenEXR files: reading one tile or one whole level, and writing scanline
 * and tiled MIP-mapped files. The texture system's only door to OpenEXR.
 *
 * Implemented in io_exr.cpp, the project's one C++ file, over OpenEXR's C++
 * API (Imf::) of OpenEXR 3.1. Not OpenEXRCore's C API: in 3.1 it cannot
 * decode DWAA/DWAB files ("not yet implemented in C"), and it does not turn
 * luminance/chroma (Y, RY, BY) into RGB, which the C++ RgbaInputFile does.
 * The C++ API reads one tile of any level without touching the rest of the
 * file (the tile cache's fast path) and converts between sample types.
 * One exception: the files renderers read most (ZIP, ZIPS or uncompressed,
 * every chosen channel at the output's sample type) have their chunks,
 * tiles or blocks of scanlines, found and read by OpenEXRCore and decoded
 * by our own code, inflating with libdeflate, about twice as fast as
 * OpenEXR 3.1's zlib (texture/exr_chunks.h; tex_exr_fast_chunks()).
 * Every OpenEXR exception stops in io_exr.cpp: each call here returns a
 * tex_result and, on failure, one line in err (see tex_image.h: no file
 * name, no newline). Nothing is printed, by this code or by OpenEXR.
 *
 * What a file may hold:
 * - Part 0 is read; a multipart file opens and info.nparts says how many
 *   parts it has. Deep data: TEX_ERR_UNSUPPORTED, "deep data is not
 *   supported".
 * - Channels become 1 Y, 2 YA, 3 RGB or 4 RGBA, by name:
 *     Y with RY and/or BY (luminance/chroma): RGB, or RGBA with A, converted
 *       by OpenEXR's RgbaInputFile (scanline files only; in a tiled file:
 *       TEX_ERR_UNSUPPORTED);
 *     any of R, G, B: RGB, or RGBA with A; a missing one of R, G, B reads
 *       as 0 (a file with only G is green);
 *     Y: Y, or YA with A;
 *     none of R, G, B, Y: the first channels in the file's order (OpenEXR
 *       sorts them by name), up to 4, as Y, YA, RGB or RGBA by their count
 *       (a lone Z depth channel reads as Y).
 *   Other channels are ignored. A chosen channel that is subsampled (other
 *   than RY/BY) gives TEX_ERR_UNSUPPORTED.
 * - Samples: TEX_TYPE_HALF if every chosen channel is HALF, else
 *   TEX_TYPE_FLOAT (UINT channels are converted to float).
 * - Levels: a tiled ONE_LEVEL file and every scanline file have 1;
 *   MIPMAP_LEVELS files have all of theirs (ROUND_DOWN or ROUND_UP: ask
 *   tex_exr_level_size(), do not assume width >> level); RIPMAP_LEVELS
 *   files are read at level 0 only (nlevels is 1).
 *
 * Limits, checked after OpenEXR has parsed the headers and before it or we
 * allocate per-image memory:
 * - the data window against TEX_MAX_DIM and TEX_MAX_PIXELS
 *   (tex_check_size(): TEX_ERR_TOO_LARGE);
 * - a tile of at most TEX_EXR_MAX_TILE_PIXELS pixels (TEX_ERR_TOO_LARGE);
 * - one chunk (a tile, or a block of scanlines, all channels, unpacked;
 *   a whole block of the compression's lines even where the image is
 *   shorter, as OpenEXR allocates it) of
 *   at most TEX_EXR_MAX_CHUNK_BYTES (TEX_ERR_TOO_LARGE), which bounds
 *   OpenEXR's own buffers however many channels a header lists: its
 *   decompressor, made when a part is opened, takes up to about 1.4 times
 *   a chunk (fuzz-exr saw 360 MB under the former limit of 256 MiB), and
 *   a tiled file keeps it while it is open. 64 MiB still holds a 2048 x
 *   2048 tile of float RGBA, or 256 lines (DWAB) of 16384 float RGBA
 *   pixels;
 * - a chunk table that fits in the file: 8 bytes per chunk of part 0
 *   (TEX_ERR_CORRUPT), so the tile tables OpenEXR builds to read a part
 *   are no larger than the file itself.
 * The largest allocation for a file within these limits is the image that
 * tex_exr_read_image() returns (at most TEX_MAX_PIXELS * 4 channels * 4
 * bytes); OpenEXR's buffers are of the order of one chunk, and so are the
 * fast path's, kept while the file is open: two buffers of the largest
 * chunk (48 KiB for 64x64 tiles of half RGB), libdeflate's 11.5 KiB, and
 * OpenEXRCore's own parse of the headers with its copy of part 0's chunk
 * table (8 bytes a chunk, within the limit above).
 * Before OpenEXR reads a header, every attribute is checked against what
 * is left of the file (OpenEXR allocates what a string, an unknown type or
 * a preview image claims before reading it): TEX_ERR_CORRUPT, "truncated:
 * header attribute 'X' of N bytes runs past the end of the file".
 *
 * Threads: a tex_exr is used by one thread at a time; different tex_exr
 * handles (of the same file or not) may be used at once on different
 * threads. Every call decodes on the calling thread; OpenEXR's thread pool
 * is not used, except by a scanline write given threads (see
 * tex_exr_write_opts). That pool is process-wide and OpenEXR hands it the
 * chunks of every file it reads or writes, so it has threads only while
 * such a write runs: the first write grows it, the last one to end empties
 * it (joining its threads), and no pool thread outlives the writes (none
 * is left at exit). A read on another thread during such a write decodes
 * on the pool instead of its own thread: correct, only slower. Writing
 * touches only its own temporary file. */
#ifndef TEX_EXR_H
#define TEX_EXR_H

#include "tex_image.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TEX_EXR_MAX_TILE_PIXELS ((uint32_t)1 << 24) /* tile width * height: 4096 x 4096 */
#define TEX_EXR_MAX_CHUNK_BYTES ((uint64_t)1 << 26) /* unpacked bytes of one chunk */
#define TEX_EXR_MAX_LEVELS      32                  /* more than a 65536 chain needs */

typedef struct tex_exr tex_exr; /* opaque: an open file; one thread at a time */

typedef struct tex_exr_info {
    uint32_t width, height;                 /* data window of level 0, in pixels */
    int32_t  x0, y0;                        /* its top-left corner; may be negative */
    int32_t  display_x0, display_y0;        /* display window; may differ from */
    uint32_t display_width, display_height; /* the data window entirely */
    uint32_t nchannels;                     /* 1 Y, 2 YA, 3 RGB, 4 RGBA (see above) */
    tex_type type;                          /* TEX_TYPE_HALF or TEX_TYPE_FLOAT */
    bool     tiled;                         /* tiled file; false: scanlines */
    uint32_t tile_width;                    /* tile size; 0 and 0 in a scanline file */
    uint32_t tile_height;
    uint32_t nlevels;          /* 1..TEX_EXR_MAX_LEVELS; level 0 is the largest */
    bool     luminance_chroma; /* Y/RY/BY converted to RGB by OpenEXR */
    uint32_t nparts;           /* parts in the file; part 0 is the one read */
} tex_exr_info;

/* Whether OpenEXR can be used, with err saying why not. Where the shim is
 * loaded on first use (exr_module.h) this loads it now: call it before
 * work whose result is to be written as EXR, so that a broken installation
 * fails before the work rather than after it. Safe from any thread. */
bool tex_exr_available(char err[TEX_ERR_LEN]);

/* Opens `path` and reads its headers (not its pixels). On TEX_OK *out is
 * yours (free it with tex_exr_close()) and *info describes it. On failure
 * *out is NULL, nothing leaks, and err says why:
 *   TEX_ERR_OPEN "cannot open: No such file or directory" (or "Is a
 *     directory", any errno reason);
 *   TEX_ERR_FORMAT "not an OpenEXR file", "empty file: not an OpenEXR file";
 *   TEX_ERR_CORRUPT "truncated: ...", "bad header: <OpenEXR's reason>";
 *   TEX_ERR_UNSUPPORTED "deep data is not supported", ...;
 *   TEX_ERR_TOO_LARGE over the limits above; TEX_ERR_NOMEM. */
tex_result tex_exr_open(const char *path, tex_exr **out, tex_exr_info *info, char err[TEX_ERR_LEN]);
void       tex_exr_close(tex_exr *f); /* NULL is a no-op */

/* Size of `level` in pixels. False (and *width, *height untouched) when
 * level >= info.nlevels. Tiles across: ceil(width / tile_width). */
bool tex_exr_level_size(const tex_exr *f, uint32_t level, uint32_t *width, uint32_t *height);

/* Reads tile (tx, ty) of `level` of a tiled file into `out`, which holds
 * tile_width * tile_height * nchannels samples of info.type: tile_height
 * rows of tile_width pixels, channels interleaved, whatever the tile's
 * valid size. An edge tile fills its valid part (top-left) and zeroes the
 * rest. Reads that tile's chunk only: the texture cache's fast path.
 * TEX_ERR_INVALID for a scanline file or a level or tile out of range;
 * TEX_ERR_CORRUPT, "tile (1, 2) of level 0: <reason>", when the tile is
 * missing or damaged (out then holds zeros or part of the tile). */
tex_result tex_exr_read_tile(tex_exr *f, uint32_t level, uint32_t tx, uint32_t ty, void *out,
                             char err[TEX_ERR_LEN]);

/* How many chunks (tiles, or blocks of scanlines) f's reads so far
 * decoded through the fast path: our own code (libdeflate for ZIP), not
 * OpenEXR's C++ reader. ZIP, ZIPS and uncompressed files whose chosen
 * channels are all at the output's sample type take it; the rest, and any
 * chunk it refuses (damaged, missing: a whole-level read then starts
 * again through OpenEXR), are read by OpenEXR, with the same pixels or
 * the same error. For tests and benchmarks, to see which path ran. 0 for
 * NULL. With RT_EXR_FAST=0 in the environment when a file is opened, it
 * takes no fast path: every chunk is OpenEXR's (the tests' reference, and
 * a way to rule the fast path out). */
uint64_t tex_exr_fast_chunks(const tex_exr *f);

/* Reads a whole level (scanline files: level 0 only) into *out, allocated
 * here: the data window placed at the image's top-left, info.nchannels
 * channels of info.type, srgb false. On TEX_OK free it with
 * tex_image_free(); on failure out->pixels is NULL. Errors as for
 * tex_exr_read_tile(), and TEX_ERR_NOMEM. */
tex_result tex_exr_read_image(tex_exr *f, uint32_t level, tex_image *out, char err[TEX_ERR_LEN]);

/* Header attributes of part 0. A string attribute: true and *value points
 * into f (valid until tex_exr_close()). A float (or double, converted)
 * attribute: true and *value set. False, with *value untouched, when
 * there is no attribute of that name and kind. */
bool tex_exr_attr_string(const tex_exr *f, const char *name, const char **value);
bool tex_exr_attr_float(const tex_exr *f, const char *name, float *value);
/* A number attribute (int, float or double) as a double: true and *value
 * set; false, *value untouched, when there is none of that name. */
bool tex_exr_attr_number(const tex_exr *f, const char *name, double *value);

/* One extra header attribute to write, of its own type (OpenEXR's float,
 * string, int or double attribute), so that tools read numbers as
 * numbers. Names are 1-31 bytes and may not be one of the attributes
 * OpenEXR writes itself (channels, compression, dataWindow, ...):
 * TEX_ERR_INVALID, as for a kind outside the enum. A repeated name keeps
 * the last value. */
typedef enum tex_exr_attr_kind {
    TEX_EXR_ATTR_FLOAT = 0, /* f */
    TEX_EXR_ATTR_STRING,    /* s, not NULL */
    TEX_EXR_ATTR_INT,       /* i */
    TEX_EXR_ATTR_DOUBLE,    /* d: counts, exact up to 2^53 */
} tex_exr_attr_kind;
typedef struct tex_exr_attr {
    const char       *name;
    tex_exr_attr_kind kind;
    const char       *s;
    float             f;
    int32_t           i;
    double            d;
} tex_exr_attr;

/* How a scanline file is compressed. All of these are lossless: every bit
 * of every half and float sample comes back. (OpenEXR's lossy ones, PXR24,
 * B44 and DWA, are not offered.) docs/render-performance.md measures them
 * on renders. */
typedef enum tex_exr_compression {
    TEX_EXR_ZIP = 0, /* zlib over blocks of 16 lines (the default) */
    TEX_EXR_NONE,
    TEX_EXR_RLE,  /* run lengths, line by line */
    TEX_EXR_ZIPS, /* zlib, line by line */
    TEX_EXR_PIZ,  /* wavelet and Huffman over blocks of 32 lines */
} tex_exr_compression;

/* Options of a scanline write; zero-initialised means defaults.
 * zip_level: zlib's level for ZIP and ZIPS, 1-9; 0: OpenEXR's default, 4.
 *   Readers do not care; on renders 1 takes much less time than 4 for
 *   files a little larger (docs/render-performance.md, the figures).
 * threads: the blocks of lines are compressed on up to this many threads
 *   of OpenEXR's pool (never more than the machine has CPUs, nor than the
 *   file has blocks) while the calling thread writes them out in order;
 *   0 or 1: everything on the calling thread. The file is the same either
 *   way. */
typedef struct tex_exr_write_opts {
    tex_exr_compression compression; /* default TEX_EXR_ZIP */
    int                 zip_level;   /* 0: OpenEXR's default */
    unsigned            threads;     /* 0: none but the caller */
} tex_exr_write_opts;

/* Writes `img` (TEX_TYPE_HALF or TEX_TYPE_FLOAT, 1-4 channels as Y, YA,
 * RGB, RGBA; img->srgb is ignored: EXR is linear) as a scanline file,
 * compressed as *opts says (NULL: the defaults), whose data and display
 * windows are (0, 0) to (w-1, h-1), with the extra attributes
 * attrs[0..nattrs-1]. The file is written under a temporary name in the
 * same folder, flushed to disk (fsync) and renamed over `path`, so a
 * failure leaves `path` as it was and no temporary file behind.
 * TEX_ERR_INVALID for a bad image, attribute or option (a compression not
 * in the enum, a zip_level outside 0-9), TEX_ERR_TOO_LARGE over
 * TEX_MAX_DIM or TEX_MAX_PIXELS, TEX_ERR_WRITE with errno's reason
 * ("cannot write: No space left on device"), TEX_ERR_NOMEM. Writes may run
 * concurrently, even to one path: each has its own temporary file, and the
 * last rename wins; they share OpenEXR's pool (see "Threads" above). If
 * the pool cannot start its threads, the write uses those it has, or none.
 */
tex_result tex_exr_write_scanline_opts(const char *path, const tex_image *img,
                                       const tex_exr_attr *attrs, size_t nattrs,
                                       const tex_exr_write_opts *opts, char err[TEX_ERR_LEN]);

/* tex_exr_write_scanline_opts() with the defaults: ZIP at OpenEXR's level,
 * on the calling thread. */
tex_result tex_exr_write_scanline(const char *path, const tex_image *img, const tex_exr_attr *attrs,
                                  size_t nattrs, char err[TEX_ERR_LEN]);

/* Writes a ZIP-compressed tiled file of square tiles of `tile_size`
 * (1..4096) pixels from levels[0..nlevels-1]: nlevels 1 makes a
 * ONE_LEVEL file; otherwise nlevels must be tex_mip_levels(w, h) and level
 * i must be max(1, w >> i) x max(1, h >> i), making a MIPMAP_LEVELS file
 * with ROUND_DOWN sizes (OpenEXR computes the same sizes). Every level has
 * level 0's type (HALF or FLOAT) and channel count. Attributes,
 * temporary file and errors as for tex_exr_write_scanline(). */
tex_result tex_exr_write_tiled(const char *path, const tex_image *levels, uint32_t nlevels,
                               uint32_t tile_size, const tex_exr_attr *attrs, size_t nattrs,
                               char err[TEX_ERR_LEN]);

/* tex_exr_write_tiled() a row of tiles at a time, for levels never whole
 * in memory (tex_mip_chain_new()). begin: as tex_exr_write_tiled() with
 * `shape` for level 0 (its pixels are not read); the file's tiles are
 * stored in the order written (RANDOM_Y), so rows of different levels may
 * interleave. put: the row of tiles of `level` starting at row y0 (a
 * multiple of tile_size), `band` that level's width and tile_size rows
 * (fewer at the bottom), level 0's type and channels; each row once.
 * end: with ok and every tile written, renames the file into place;
 * otherwise (ok false, a row missing: TEX_ERR_INVALID, an earlier put
 * failed) removes it. end always frees w. Errors as for
 * tex_exr_write_scanline(); after a failed put the others fail too. One
 * thread per writer. */
typedef struct tex_exr_tiled_writer tex_exr_tiled_writer;
tex_result tex_exr_tiled_begin(const char *path, const tex_image *shape, uint32_t nlevels,
                               uint32_t tile_size, const tex_exr_attr *attrs, size_t nattrs,
                               tex_exr_tiled_writer **w, char err[TEX_ERR_LEN]);
tex_result tex_exr_tiled_put(tex_exr_tiled_writer *w, uint32_t level, uint32_t y0,
                             const tex_image *band, char err[TEX_ERR_LEN]);
tex_result tex_exr_tiled_end(tex_exr_tiled_writer *w, bool ok, char err[TEX_ERR_LEN]);

#endif
