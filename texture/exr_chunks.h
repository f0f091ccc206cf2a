/* Reading EXR chunks without OpenEXR's own decoder: io_exr.cpp's fast path
 * for the files renderers read most (ZIP, ZIPS or uncompressed; every
 * channel read at the file's own sample type), tiles one at a time and
 * scanline blocks for a whole image. OpenEXR 3.1's C++ reader inflates a
 * ZIP chunk with zlib; libdeflate does the same work about 2.25 times as
 * fast (the 5,552 tiles of the OpenImageIO compare's 16 EXRs, 127 MiB:
 * 0.28 s against 0.63 s; an 8192x4096 half RGB scanline file, 192 MiB:
 * 0.22 s against 0.56 s), and inflating was half of a cold random
 * lookup's time (docs/benchmarks.md). OpenEXR's C core (OpenEXRCore)
 * still finds each chunk, checks its chunk table and reads its bytes; only
 * the decoding is ours.
 *
 * Whatever this path cannot read exactly as OpenEXR would (a channel list
 * that differs from the C++ reader's, a chunk table OpenEXR had to rebuild
 * or cannot follow, a chunk whose sizes disagree with the header, a
 * damaged stream, a file that shrank) it refuses, and the caller reads it
 * through OpenEXR's C++ API instead: same pixels, same errors. The tests
 * compare the two (tests/unit/tex_exr_test.c). One exception, by design:
 * libdeflate reads a few invalid deflate streams that zlib rejects (a
 * length symbol 286 or 287, a distance code 30 or 31, ...; OpenEXR 3.2 and
 * later, which inflate with libdeflate too, read them the same), so such a
 * chunk gives pixels where OpenEXR 3.1 says "data decompression (zlib)
 * failed" (tex_exr_badinput.damaged_zip_tile pins it). */
#ifndef TEX_EXR_CHUNKS_H
#define TEX_EXR_CHUNKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TEX__EXR_MAX_CHANNELS 64 /* more, and OpenEXR's C++ reader reads the file */

/* What the file's channels are, in the order the file stores them (its
 * channel list's, sorted by name), and where each one goes: the file
 * stores a chunk line by line, and in each line every channel in turn,
 * `width` samples of size[c] bytes, little-endian. */
typedef struct tex__exr_layout {
    uint32_t    nchannels;                     /* the file's */
    const char *name[TEX__EXR_MAX_CHANNELS];   /* as the C++ reader lists them */
    uint8_t     size[TEX__EXR_MAX_CHANNELS];   /* bytes per sample: 2 (half) or 4 */
    int16_t     offset[TEX__EXR_MAX_CHANNELS]; /* byte offset in an output pixel; -1: unread */
    uint32_t    pixel;                         /* bytes per output pixel */
    bool        tiled;                         /* tiles; false: scanline blocks */
    /* A chunk: a tile's size, or the data window's width and the
     * compression's lines per block (ZIP 16; ZIPS and none 1). */
    uint32_t chunk_width, chunk_height;
    uint32_t max_lines; /* of the largest chunk: fewer in an image shorter than a block */
} tex__exr_layout;

typedef struct tex__exr_chunks tex__exr_chunks; /* one open file; one thread at a time */

/* Opens part 0 of the file open at `fd` (`size` bytes, read with pread()
 * only) for reading chunks as `lay` says; `lay` is copied, its names must
 * outlive the reader. NULL where the fast path cannot read this file
 * (not ZIP, ZIPS or uncompressed; another channel list, storage or chunk
 * size than `lay`'s; no memory; OpenEXRCore refuses the headers): read it
 * through OpenEXR's C++ API. Prints nothing. */
tex__exr_chunks *tex__exr_chunks_open(int fd, uint64_t size, const tex__exr_layout *lay);
void             tex__exr_chunks_close(tex__exr_chunks *c); /* NULL is a no-op */

/* Reads tile (tx, ty) of MIP level `level`, whose valid part is width x
 * height pixels, into `out`, `row` bytes from one output line to the
 * next: the valid part's samples of the channels read; nothing else is
 * written. False, with `out` untouched, where this tile cannot be read
 * here (missing, damaged, or sizes that disagree with `lay`). */
bool tex__exr_chunks_tile(tex__exr_chunks *c, uint32_t level, uint32_t tx, uint32_t ty,
                          uint32_t width, uint32_t height, void *out, size_t row);

/* Reads the block of `height` scanlines that starts at line y (the file's
 * coordinates, data window included) into `out`, `row` bytes a line, as
 * tex__exr_chunks_tile() does. */
bool tex__exr_chunks_lines(tex__exr_chunks *c, int32_t y, uint32_t height, void *out, size_t row);

#ifdef __cplusplus
}
#endif

#endif
