/* Images in memory and the file formats that hold them: the I/O layer of the
 * texture system.
 *
 * Readers decode a whole file (PNG, JPEG, scanline EXR) or one tile of a
 * tiled EXR into a tex_image of the file's own sample type, so an 8-bit
 * texture stays 8-bit in the cache; lookups convert to linear float.
 *
 * Errors: every fallible call returns a tex_result and, on failure, writes
 * one line saying what is wrong into err (TEX_ERR_LEN bytes, no file name,
 * no newline): "not a PNG file", "truncated: IDAT ends early",
 * "10000x100000 pixels is over the limit of 268435456". The caller puts the
 * file name in front. Readers never allocate before checking the size
 * against TEX_MAX_DIM and TEX_MAX_PIXELS. */
#ifndef TEX_IMAGE_H
#define TEX_IMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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
    bool     srgb;   /* samples are sRGB-encoded (PNG, JPEG); false: linear (EXR) */
    void    *pixels; /* width * height * nchannels samples; owned by the image */
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

/* sRGB transfer functions (IEC 61966-2-1), for values in [0, 1]. */
float tex_srgb_to_linear(float v);
float tex_linear_to_srgb(float v);

/* ---- PNG (libpng) ---- */

/* Reads any PNG: 1, 2, 4, 8 and 16 bits; grey, grey+alpha, RGB, RGBA and
 * palette (tRNS becomes alpha); interlaced or not. 16-bit files give
 * TEX_TYPE_U16, all others TEX_TYPE_U8 (sub-byte grey scaled to 0..255);
 * srgb is true. */
tex_result tex_png_read(const char *path, tex_image *out, char err[TEX_ERR_LEN]);

/* Writes an 8- or 16-bit PNG of img (U8 or U16, 1-4 channels) with the sRGB
 * chunk. Written to a temporary file in the same folder and renamed, so a
 * failure never leaves a half-written file at `path`. */
tex_result tex_png_write(const char *path, const tex_image *img, char err[TEX_ERR_LEN]);

/* ---- JPEG (libjpeg-turbo) ---- */

/* Reads a baseline or progressive JPEG, grey (1 channel) or colour (3);
 * CMYK gives TEX_ERR_UNSUPPORTED. TEX_TYPE_U8, srgb true. */
tex_result tex_jpeg_read(const char *path, tex_image *out, char err[TEX_ERR_LEN]);

#endif
