/* TIFF files through libtiff: tiled, MIP-mapped ones (OpenImageIO's `.tx`,
 * what studios' texture sets are) read one tile of one level at a time, as
 * tiled EXR is; any supported TIFF read by rows; and the tiled writer behind
 * `maketx in.png` (which writes in.tx).
 *
 * What a file may hold (anything else: TEX_ERR_UNSUPPORTED naming it):
 * - 1 to 4 samples per pixel, interleaved (PlanarConfiguration 1): grey
 *   (Y), grey and alpha (YA) with PhotometricInterpretation MinIsBlack,
 *   RGB or RGBA with RGB. Palette, YCbCr, CMYK, MinIsWhite, separate
 *   planes and more than 4 samples are not read.
 * - Samples of 8 or 16 bits unsigned (TEX_TYPE_U8, TEX_TYPE_U16, in host
 *   byte order whatever the file's), or IEEE floats of 16 or 32 bits
 *   (TEX_TYPE_HALF, TEX_TYPE_FLOAT). Integer samples are taken to be
 *   sRGB-encoded, as PNG's and JPEG's are (srgb true), unless the
 *   ImageDescription names another colour space as OpenImageIO writes it
 *   ("oiio:ColorSpace=Linear"). Floats are linear whatever the file says:
 *   OpenImageIO's `maketx -d half` of an 8-bit image keeps sRGB-encoded
 *   values in its floats, and such a texture looks too bright here (make
 *   it from linear data, or with our maketx, which decodes sRGB first).
 * - Any compression libtiff was built with (OpenImageIO writes ZIP).
 * - Levels: directory 0 is level 0. Each following directory with the same
 *   samples and tiles whose size is half the one before (rounded down or
 *   up, at least 1) is the next level; the chain ends at the first one
 *   that is not (a multi-page TIFF's pages are not levels), or at
 *   TEX_TIFF_MAX_LEVELS. A TIFF in strips has one level.
 *
 * Limits, checked before anything is allocated for pixels: every level's
 * size against TEX_MAX_DIM and TEX_MAX_PIXELS (tex_check_size(),
 * TEX_ERR_TOO_LARGE), a tile of at most TEX_TIFF_MAX_TILE_PIXELS and
 * TEX_TIFF_MAX_CHUNK_BYTES decoded; libtiff itself is held to
 * TEX_TIFF_MAX_CHUNK_BYTES for any one allocation, never maps the file, and
 * reads the tile and strip tables of a level on demand. Every tile of
 * every level must have room for its entries in the file (4 bytes at
 * least; TEX_ERR_CORRUPT "bad header: N tiles in a file of M bytes" for
 * level 0, the chain ends before a level that has not), so a small file
 * cannot make the tile cache size a table for millions of tiles. An error
 * libtiff reports during a read it then calls successful (it reads a tile
 * whose table entry lies past the end from offset 0) fails the read.
 *
 * Errors: as tex_image.h says (one line in err, no file name); libtiff's
 * own messages are caught per file and never printed. Threads: a tex_tiff
 * is used by one thread at a time; different handles may be used at once.
 *
 * libtiff is loaded on first use (tiff_module.h; CMake's RT_LAZY_MODULES,
 * on by default): a process that never reads or writes a TIFF never maps
 * it. The first call that takes a path (open, read_rows, tiled_begin)
 * loads it, from $RT_TIFF_MODULE or the build tree's lib/librt_tiff.so;
 * if that fails, those calls return TEX_ERR_UNSUPPORTED, "TIFF support did
 * not load: <reason>", and write nothing. tex_tiff_close(NULL) loads
 * nothing. Telling a TIFF by its first bytes (tex_image_read()) needs no
 * module; reading it does.
 */
#ifndef TEX_TIFF_H
#define TEX_TIFF_H

#include "tex_image.h"

#include <stdbool.h>
#include <stdint.h>

#define TEX_TIFF_MAX_TILE_PIXELS ((uint32_t)1 << 24) /* tile width * height: 4096 x 4096 */
#define TEX_TIFF_MAX_CHUNK_BYTES ((uint64_t)1 << 26) /* decoded bytes of a tile or strip */
#define TEX_TIFF_MAX_LEVELS      32

typedef struct tex_tiff tex_tiff; /* opaque: an open file; one thread at a time */

typedef struct tex_tiff_info {
    uint32_t width, height; /* level 0 */
    uint32_t nchannels;     /* 1 Y, 2 YA, 3 RGB, 4 RGBA */
    tex_type type;          /* U8, U16, HALF or FLOAT */
    bool     srgb;          /* see above */
    bool     associated;    /* ExtraSamples: premultiplied alpha (tex_image.associated) */
    bool     tiled;         /* false: strips (one level, no tiles) */
    uint32_t tile_width;    /* 0 and 0 in strips */
    uint32_t tile_height;
    uint32_t nlevels; /* 1..TEX_TIFF_MAX_LEVELS; level 0 is the largest */
} tex_tiff_info;

/* Opens `path` (a regular file only: tex_open_regular()) and reads its
 * directories (not its pixels). On TEX_OK *out is yours (tex_tiff_close())
 * and *info describes it. On failure *out is NULL, nothing leaks, and err
 * says why: TEX_ERR_OPEN "cannot open: ..."; TEX_ERR_FORMAT "not a TIFF
 * file"; TEX_ERR_CORRUPT "bad header: <libtiff's reason>";
 * TEX_ERR_UNSUPPORTED "12-bit samples are not supported", ...;
 * TEX_ERR_TOO_LARGE; TEX_ERR_NOMEM. */
tex_result tex_tiff_open(const char *path, tex_tiff **out, tex_tiff_info *info,
                         char err[TEX_ERR_LEN]);
void       tex_tiff_close(tex_tiff *f); /* NULL is a no-op */

/* Size of `level` in pixels. False (and *width, *height untouched) when
 * level >= info.nlevels. Tiles across: ceil(width / tile_width). */
bool tex_tiff_level_size(const tex_tiff *f, uint32_t level, uint32_t *width, uint32_t *height);

/* Reads tile (tx, ty) of `level` of a tiled file into `out`: tile_height
 * rows of tile_width pixels of info.nchannels samples of info.type, an
 * edge tile's valid part top-left and the rest zeroed, as
 * tex_exr_read_tile() does. Reads that tile only. TEX_ERR_INVALID for a
 * file in strips or a level or tile out of range; TEX_ERR_CORRUPT, "tile
 * (1, 2) of level 0: <reason>", when it is missing or damaged. */
tex_result tex_tiff_read_tile(tex_tiff *f, uint32_t level, uint32_t tx, uint32_t ty, void *out,
                              char err[TEX_ERR_LEN]);

/* Level 0 of `path` by rows (tex_image_read_rows()): never whole in memory;
 * at most a row of tiles or one strip is. */
tex_result tex_tiff_read_rows(const char *path, tex_rows_fn fn, void *ctx, char err[TEX_ERR_LEN]);

/* A tiled, MIP-mapped TIFF written a row of tiles at a time, as
 * tex_exr_tiled_begin/put/end() write an EXR (same calls, same order
 * rules: rows of different levels may interleave, each once): square
 * tiles of tile_size (16..1024, a multiple of 16, as TIFF wants), ZIP
 * compressed (with horizontal differencing for integer samples), `shape`'s
 * type and channels as stored, nlevels 1 or tex_mip_levels(w, h) with
 * sizes halved and rounded down; the ImageDescription says
 * "oiio:ColorSpace=sRGB" for sRGB integer samples, "=Linear" otherwise
 * (data, maketx --raw, floats), which OpenImageIO reads too.
 * Level 0 goes straight into the file; the levels below it wait in an
 * unlinked temporary file beside `path` (a third of level 0 in all)
 * until level 0 is done, since a TIFF directory is written whole. The file
 * is written under a temporary name and renamed over `path` by end (ok and
 * every tile written); otherwise nothing is left behind. `software` (may
 * be NULL) is stored as the Software tag. Errors as for
 * tex_exr_tiled_begin(). One thread per writer. */
typedef struct tex_tiff_writer tex_tiff_writer;
tex_result tex_tiff_tiled_begin(const char *path, const tex_image *shape, uint32_t nlevels,
                                uint32_t tile_size, const char *software, tex_tiff_writer **w,
                                char err[TEX_ERR_LEN]);
tex_result tex_tiff_tiled_put(tex_tiff_writer *w, uint32_t level, uint32_t y0,
                              const tex_image *band, char err[TEX_ERR_LEN]);
tex_result tex_tiff_tiled_end(tex_tiff_writer *w, bool ok, char err[TEX_ERR_LEN]);

#endif
