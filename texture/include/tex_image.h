/* Images in memory and the file formats that hold them: the I/O layer of the
 * texture system.
 *
 * Readers decode a whole file (PNG, JPEG, scanline EXR, TIFF) or one tile
 * of a tiled EXR or TIFF into a tex_image of the file's own sample type, so an 8-bit
 * texture stays 8-bit in the cache; lookups convert to linear float.
 *
 * Errors: every fallible call returns a tex_result and, on failure, writes
 * one line saying what is wrong into err (TEX_ERR_LEN bytes, no file name,
 * no newline): "not a PNG file", "truncated: IDAT ends early",
 * "10000x100000 pixels is over the limit (65536 per side, 268435456 in all)". The caller puts the
 * file name in front. Readers never allocate before checking the size
 * against TEX_MAX_DIM and TEX_MAX_PIXELS. */
#ifndef TEX_IMAGE_H
#define TEX_IMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef enum tex_result {
    TEX_OK = 0,
    TEX_ERR_OPEN,        /* the file cannot be opened or read (errno's reason) */
    TEX_ERR_FORMAT,      /* not a file of the expected format */
    TEX_ERR_CORRUPT,     /* damaged or truncated */
    TEX_ERR_UNSUPPORTED, /* a valid file in a layout out of scope (deep EXR, CMYK) */
    TEX_ERR_TOO_LARGE,   /* dimensions over TEX_MAX_DIM or TEX_MAX_PIXELS */
    TEX_ERR_NOMEM,       /* an allocation failed */
    TEX_ERR_WRITE,       /* the output cannot be written (nothing is left behind) */
    TEX_ERR_INVALID,     /* a bad argument */
} tex_result;

const char *tex_result_str(tex_result r); /* "cannot open", "not a valid file", ... */

#define TEX_ERR_LEN 256

/* Limits on what a file may ask for, checked before anything is allocated. */
#define TEX_MAX_DIM    65536u              /* width or height */
#define TEX_MAX_PIXELS ((uint64_t)1 << 28) /* width * height: 16384 x 16384 */

/* Sample types, as stored. */
typedef enum tex_type {
    TEX_TYPE_U8 = 0,
    TEX_TYPE_U16,
    TEX_TYPE_HALF, /* IEEE 754 binary16, stored as uint16_t */
    TEX_TYPE_FLOAT,
} tex_type;

size_t tex_type_size(tex_type type); /* bytes per sample: 1, 2, 2, 4 */

/* An image: rows top to bottom, tightly packed, channels interleaved. With
 * 1 channel it is Y (grey), 2 Y+A, 3 RGB, 4 RGBA. */
typedef struct tex_image {
    uint32_t width, height;
    uint32_t nchannels; /* 1..4 */
    tex_type type;
    bool     srgb; /* samples are sRGB-encoded (PNG, JPEG); false: linear (EXR) */
    /* Colour premultiplied by alpha, the last channel of 2 or 4 (associated
     * alpha: EXR always; TIFF where its ExtraSamples say so; PNG never).
     * The texture system divides it out as it loads each tile, so lookups
     * give straight colour whatever the file held. */
    bool  associated;
    void *pixels; /* width * height * nchannels samples; owned by the image */
} tex_image;

/* Allocates pixels for the given shape (zeroed). TEX_ERR_TOO_LARGE over the
 * limits, TEX_ERR_NOMEM when memory runs out; on failure img->pixels is
 * NULL. */
tex_result tex_image_alloc(tex_image *img, uint32_t width, uint32_t height, uint32_t nchannels,
                           tex_type type, char err[TEX_ERR_LEN]);
void       tex_image_free(tex_image *img); /* frees pixels; NULL pixels is a no-op */
size_t     tex_image_bytes(const tex_image *img);

/* Checks width x height against the limits; writes the reason into err. */
tex_result tex_check_size(uint64_t width, uint64_t height, char err[TEX_ERR_LEN]);

/* Opens `path` for reading if it is a regular file (symbolic links
 * followed), so that a name a scene gives cannot block a reader or stream
 * to it forever: a FIFO (opening one waits for a writer), a device such as
 * /dev/zero or /dev/stdin, a socket. Returns the descriptor (O_CLOEXEC,
 * blocking reads; yours to close), or -1 with err "cannot open: REASON"
 * (strerror's, "Is a directory" for a directory) or "cannot open: a FIFO,
 * not a regular file" (a character device, a block device, a socket), and
 * errno set: open()'s or stat()'s, EISDIR, or EINVAL for the others. Safe
 * on any thread. */
int tex_open_regular(const char *path, char err[TEX_ERR_LEN]);

/* A name taken from a file (a texture's, a material library's), made safe
 * to print on a terminal: every control character (C0, DEL, C1) and every
 * byte that is not part of valid UTF-8 written as \xNN; printable UTF-8
 * kept as it is. Cut to size - 1 bytes, never inside a character or an
 * escape. */
void tex_name_printable(char *dst, size_t size, const char *src);

/* Where an output named `path` goes. A symbolic link (a chain of them) is
 * written through: the file it leads to is replaced, or created where a
 * dangling link points, and the link stays. A FIFO or a character device
 * (/dev/stdout on a pipe, /dev/null) is written directly: *direct, no
 * *target. Otherwise *target is the regular file's own path (realpath),
 * existing or not, malloc'd. A directory, a block device or a socket is
 * refused: TEX_ERR_WRITE, "cannot write: Is a directory". */
tex_result tex_output_resolve(const char *path, char **target, bool *direct, char err[TEX_ERR_LEN]);

/* Copies what fd holds, from its start, to the FIFO or device at `path`
 * (opened for writing, never created); TEX_ERR_WRITE with errno's reason. */
tex_result tex_output_copy(int fd, const char *path, char err[TEX_ERR_LEN]);

/* Writing a file whole or not at all: into a temporary file beside the
 * file `path` leads to (r->f), synced and renamed over it at the end. A
 * failure at any step never leaves a half-written file there, nor the
 * temporary one: an old file stays whole, or is replaced whole and keeps
 * its permissions; a new file gets 0666 less the umask. A symbolic link is
 * written through, a FIFO or a character device written directly from an
 * unlinked temporary file at the end (tex_output_resolve()). begin:
 * TEX_OK, or TEX_ERR_WRITE with errno's reason ("cannot write: Permission
 * denied"), TEX_ERR_NOMEM. end(ok): renames (or copies) if ok and every
 * write succeeded; TEX_OK, or TEX_ERR_WRITE (err set when the failure is
 * its own; when ok is false it leaves err alone). One thread per
 * tex_replace. */
typedef struct tex_replace {
    FILE       *f; /* write here */
    char       *tmp, *target;
    const char *path;
    unsigned    mode;
    bool        direct;
} tex_replace;
tex_result tex_replace_begin(tex_replace *r, const char *path, char err[TEX_ERR_LEN]);
tex_result tex_replace_end(tex_replace *r, bool ok, char err[TEX_ERR_LEN]);

/* sRGB transfer functions (IEC 61966-2-1), for values in [0, 1]. */
float tex_srgb_to_linear(float v);
float tex_linear_to_srgb(float v);

/* IEEE 754 binary16 <-> float, rounding to nearest even. */
float    tex_half_to_float(uint16_t h);
uint16_t tex_float_to_half(float f);

/* Converts src to `type`: samples are decoded to linear light (colour
 * channels of an sRGB source; alpha is never encoded) and encoded again as
 * dst_srgb says (ignored for HALF and FLOAT, which are always linear).
 * Integer types clamp to [0, 1]. On failure dst holds no pixels. */
tex_result tex_image_convert(const tex_image *src, tex_type type, bool dst_srgb, tex_image *dst,
                             char err[TEX_ERR_LEN]);

/* Reads a PNG, JPEG, EXR or TIFF (level 0, whole), whichever the file's first
 * bytes say it is. */
tex_result tex_image_read(const char *path, tex_image *out, char err[TEX_ERR_LEN]);

/* Rows of an image handed over as they are decoded, top to bottom: `fn`
 * is called once per row, y = 0 first, with the image's shape (width,
 * height, channels, type, srgb as tex_image_read() would give them;
 * pixels NULL) and the row's width * nchannels samples, valid during the
 * call. A result other than TEX_OK from fn stops the read, which returns
 * it with err as fn wrote it. A file found damaged after some rows were
 * given fails like any other: the caller drops what it took. */
typedef tex_result (*tex_rows_fn)(void *ctx, const tex_image *shape, uint32_t y, const void *row,
                                  char err[TEX_ERR_LEN]);

/* tex_image_read() by rows: a PNG that is not interlaced and a baseline
 * JPEG are never whole in memory (a row is); an interlaced PNG (Adam7's
 * passes fill rows all over the image), a progressive or multi-scan JPEG
 * (libjpeg keeps the whole image's coefficients) and an EXR are read
 * whole first (the texture system charges that to its memory budget,
 * tex_config.max_memory_mb, first); a TIFF is read a row of tiles or a
 * strip at a time (tex_tiff_read_rows()). */
tex_result tex_image_read_rows(const char *path, tex_rows_fn fn, void *ctx, char err[TEX_ERR_LEN]);

/* An image in memory handed to fn by rows, as tex_image_read_rows() would
 * read it from a file. */
tex_result tex_image_rows(const tex_image *img, tex_rows_fn fn, void *ctx, char err[TEX_ERR_LEN]);

/* As tex_image_read(), converted to linear float (sRGB decoded, alpha as
 * stored): what image comparisons read. */
tex_result tex_image_read_linear(const char *path, tex_image *out, char err[TEX_ERR_LEN]);

/* Writes a linear float image (1-4 channels) times `scale` (colour only:
 * alpha as it is) by its name's extension: `.png` as 8-bit sRGB, clamped
 * to [0, 1]; `.ppm` the same bytes as a binary PPM (RGB: grey repeated,
 * alpha dropped); `.exr` as half floats. Through a temporary file, as
 * tex_png_write() and tex_exr_write_scanline() do. TEX_ERR_INVALID for
 * another extension or another kind of image. */
tex_result tex_image_write_linear(const char *path, const tex_image *img, float scale,
                                  char err[TEX_ERR_LEN]);

/* ---- MIP pyramids ---- */

/* Levels of a full chain down to 1x1: each level is max(1, size / 2). */
uint32_t tex_mip_levels(uint32_t width, uint32_t height);

/* Makes the next level of src (max(1, w/2) x max(1, h/2), same type and
 * channels) in *dst, by exact area coverage, so odd sizes are filtered, not
 * point-sampled. sRGB colour is averaged in linear light, alpha as is. On
 * failure dst holds no pixels. */
tex_result tex_image_downsample(const tex_image *src, tex_image *dst, char err[TEX_ERR_LEN]);

/* tex_image_downsample() a row at a time: the source's rows go in top to
 * bottom, and each row of the next level comes out as soon as the last
 * source row it covers is in, the same bytes as the whole image's
 * downsample. It holds a few rows, never an image. new: `shape` gives the
 * source's width, height, channels, type and srgb (its pixels are not
 * read); TEX_ERR_INVALID for an empty shape, TEX_ERR_NOMEM. push: takes
 * the next source row (width * nchannels samples) and returns the output
 * row it completes, valid until the next call, or NULL (at most one per
 * row; rows past the last are ignored). One thread at a time. */
typedef struct tex_downsampler tex_downsampler;
tex_result                     tex_downsampler_new(const tex_image *shape, tex_downsampler **out,
                                                   char err[TEX_ERR_LEN]);
const void                    *tex_downsampler_push(tex_downsampler *d, const void *row);
void                           tex_downsampler_free(tex_downsampler *d); /* NULL is a no-op */

/* A whole MIP chain from level 0's rows, in bands: each level's rows are
 * gathered into bands of `band_rows` (the last of a level may be shorter)
 * and handed to `band` as they fill, level 0's as given and every other
 * level's as the level above completes it. So an image of any size is
 * MIP-mapped and written out (cut into tiles, say) holding about two bands
 * per level and a few rows: a 16384x16384 16-bit RGBA texture in tens of
 * megabytes, not the 2.7 GB of its levels. The band is valid only during
 * the call (pixels: band->width * band->height samples, band->height <=
 * band_rows; with band_rows 1, the row itself, not a copy); y0 is its
 * first row in its level. A result other than TEX_OK from `band` stops
 * the chain: push returns it, with err as `band` wrote it. new: `shape` as
 * for tex_downsampler_new(), nlevels 1 to tex_mip_levels(), band_rows >= 1. */
typedef tex_result (*tex_band_fn)(void *ctx, uint32_t level, uint32_t y0, const tex_image *band,
                                  char err[TEX_ERR_LEN]);
typedef struct tex_mip_chain tex_mip_chain;
tex_result tex_mip_chain_new(const tex_image *shape, uint32_t nlevels, uint32_t band_rows,
                             tex_band_fn band, void *ctx, tex_mip_chain **out,
                             char err[TEX_ERR_LEN]);
/* Level 0's next row (rows past the last are ignored). */
tex_result tex_mip_chain_push(tex_mip_chain *c, const void *row, char err[TEX_ERR_LEN]);
void       tex_mip_chain_free(tex_mip_chain *c); /* NULL is a no-op */

/* ---- PNG (libpng) ---- */

/* Reads any PNG: 1, 2, 4, 8 and 16 bits; grey, grey+alpha, RGB, RGBA and
 * palette; interlaced or not. Grey stays 1 channel, grey+alpha 2, palette
 * becomes RGB, and a tRNS chunk becomes alpha (grey: 2 channels, RGB and
 * palette: 4). 16-bit files give TEX_TYPE_U16 in host byte order, all others
 * TEX_TYPE_U8 (sub-byte grey scaled to 0..255); srgb is true (gAMA, cHRM
 * and iCCP are ignored). On TEX_OK *out is yours (tex_image_free()); on
 * failure out->pixels is NULL. A file cut short anywhere (IEND included)
 * or with a bad CRC in a critical chunk is TEX_ERR_CORRUPT ("truncated:
 * IDAT chunk ends early", "bad CRC in IDAT chunk"); a bad CRC in an
 * ancillary chunk only drops that chunk. Prints nothing, warnings
 * included; calls may run on many threads at once. */
tex_result tex_png_read(const char *path, tex_image *out, char err[TEX_ERR_LEN]);
/* tex_png_read() by rows (tex_image_read_rows()). */
tex_result tex_png_read_rows(const char *path, tex_rows_fn fn, void *ctx, char err[TEX_ERR_LEN]);
/* Both read a plain PNG (8- or 16-bit grey, grey+alpha, RGB or RGBA, or
 * 8-bit palette; not interlaced, every CRC right; up to 64 MiB with its
 * inflated rows) whole, inflated by libdeflate and unfiltered by our own
 * code, about 2.45 times as fast as libpng with zlib, with libpng's pixels;
 * any other, or every PNG with RT_PNG_FAST=0 in the environment, by
 * libpng. tex_png_fast_reads() counts the reads that took that path in
 * this process. */
uint64_t tex_png_fast_reads(void);

/* The most tex_png_read() allocates for one ancillary chunk (text, iCCP,
 * EXIF; compressed ones once inflated): a larger one is skipped. A chunk
 * claiming more bytes than the file holds is "truncated" before anything
 * is allocated for it. */
#define TEX_PNG_MAX_CHUNK_BYTES ((size_t)16 << 20)

/* Writes an 8- or 16-bit PNG of img (U8 or U16 in host byte order, 1-4
 * channels) with the sRGB chunk. Written to a temporary file in the same
 * folder and renamed, so a failure never leaves a half-written file at
 * `path`, nor the temporary one: an old file stays whole, or is replaced
 * whole and keeps its permissions; a new file gets 0666 less the umask.
 * TEX_ERR_INVALID for another type or shape; TEX_ERR_WRITE with errno's
 * reason ("cannot write: No such file or directory"). */
tex_result tex_png_write(const char *path, const tex_image *img, char err[TEX_ERR_LEN]);

/* tex_png_write() with text[0..ntext) as tEXt chunks (uncompressed; a key
 * of 1-79 Latin-1 letters, digits, spaces and punctuation, as PNG wants;
 * the value any text): a render's options, say. TEX_ERR_INVALID for an
 * empty or long key or a NULL value. */
typedef struct tex_png_text {
    const char *key, *value;
} tex_png_text;
tex_result tex_png_write_text(const char *path, const tex_image *img, const tex_png_text *text,
                              size_t ntext, char err[TEX_ERR_LEN]);

/* ---- JPEG (libjpeg-turbo) ---- */

/* Reads a baseline or progressive JPEG, grey (1 channel) or colour (3,
 * stored as YCbCr or RGB); CMYK and YCCK give TEX_ERR_UNSUPPORTED, as do
 * 12-bit, lossless and arithmetic-coded files (libjpeg's arithmetic decoder
 * fills missing data without a word, so damage could not be told).
 * TEX_TYPE_U8, srgb true. Damage that libjpeg
 * only warns about and paints over with grey (a file cut short, EOI
 * included; a broken scan) is TEX_ERR_CORRUPT ("truncated: premature end
 * of JPEG file"). On failure out->pixels is NULL. Prints nothing; calls
 * may run on many threads at once. */
tex_result tex_jpeg_read(const char *path, tex_image *out, char err[TEX_ERR_LEN]);
/* tex_jpeg_read() by rows (tex_image_read_rows()). */
tex_result tex_jpeg_read_rows(const char *path, tex_rows_fn fn, void *ctx, char err[TEX_ERR_LEN]);

#endif
