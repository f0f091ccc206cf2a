/* Reading an EXR tile without OpenEXR's own decoder: io_exr.cpp's fast
 * path for the tiles a renderer reads most (ZIP, ZIPS or uncompressed;
 * every channel read at the file's own sample type). OpenEXR 3.1's C++
 * reader inflates a ZIP tile with zlib; libdeflate does the same work
 * about 2.25 times as fast (the 5,552 tiles of the OpenImageIO compare's
 * 16 EXRs, 127 MiB: 0.28 s against 0.63 s), and inflating was half of a
 * cold random lookup's time (docs/benchmarks.md). OpenEXR's C core
 * (OpenEXRCore) still finds each tile, checks its chunk table and reads
 * its bytes; only the decoding is ours.
 *
 * Whatever this path cannot read exactly as OpenEXR would (a channel list
 * that differs from the C++ reader's, a chunk whose sizes disagree with
 * the header, a damaged stream) it refuses, and the caller reads that
 * tile through OpenEXR's C++ API instead: same pixels, same errors. The
 * tests compare the two on every tile (tests/unit/tex_exr_test.c). */
#ifndef TEX_EXR_TILES_H
#define TEX_EXR_TILES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TEX__EXR_MAX_CHANNELS 64 /* more, and OpenEXR's C++ reader reads the file */

/* What the file's channels are, in the order the file stores them (its
 * channel list's, sorted by name), and where each one goes: the file
 * stores a tile line by line, and in each line every channel in turn,
 * `width` samples of size[c] bytes, little-endian. */
typedef struct tex__exr_layout {
    uint32_t    nchannels;                     /* the file's */
    const char *name[TEX__EXR_MAX_CHANNELS];   /* as the C++ reader lists them */
    uint8_t     size[TEX__EXR_MAX_CHANNELS];   /* bytes per sample: 2 (half) or 4 */
    int16_t     offset[TEX__EXR_MAX_CHANNELS]; /* byte offset in an output pixel; -1: unread */
    uint32_t    pixel;                         /* bytes per output pixel */
    uint32_t    tile_width, tile_height;       /* the file's tile size */
} tex__exr_layout;

typedef struct tex__exr_tiles tex__exr_tiles; /* one open file; one thread at a time */

/* Opens part 0 of the file open at `fd` (`size` bytes, read with pread()
 * only) for reading tiles as `lay` says; `lay` is copied, its names must
 * outlive the reader. NULL where the fast path cannot read this file
 * (not ZIP, ZIPS or uncompressed; another channel list or tile size than
 * `lay`'s; no memory; OpenEXRCore refuses the headers): read it through
 * OpenEXR's C++ API. Prints nothing. */
tex__exr_tiles *tex__exr_tiles_open(int fd, uint64_t size, const tex__exr_layout *lay);
void            tex__exr_tiles_close(tex__exr_tiles *t); /* NULL is a no-op */

/* Reads tile (tx, ty) of MIP level `level`, whose valid part is width x
 * height pixels, into `out` (tile_width x tile_height pixels of
 * lay->pixel bytes, rows tile_width pixels apart): the valid part's
 * samples of the channels read; nothing else is written. False, with
 * `out` untouched, where this tile cannot be read here (missing, damaged,
 * or sizes that disagree with `lay`). */
bool tex__exr_tiles_read(tex__exr_tiles *t, uint32_t level, uint32_t tx, uint32_t ty,
                         uint32_t width, uint32_t height, void *out);

#ifdef __cplusplus
}
#endif

#endif
