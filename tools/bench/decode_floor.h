/* decode_floor: the least a texture's first touch can cost, a plain decode
 * of the file with libpng or libjpeg-turbo alone into one buffer, which
 * `texture-bench --cold` times beside the texture system's first touch of
 * the same files (docs/benchmarks.md, issue 33).
 *
 * It decodes to the samples the texture system stores at level 0, and no
 * further: a palette, grey below 8 bits and tRNS expanded as libpng
 * expands them, JPEG as grey or RGB; 16-bit samples as the file stores
 * them, big-endian. No MIP levels, no tiles, no sRGB conversion. */
#ifndef DECODE_FLOOR_H
#define DECODE_FLOOR_H

#include <stddef.h>
#include <stdint.h>

#define DECODE_FLOOR_ERR_LEN 256

typedef struct decode_floor_image {
    uint32_t       width, height;
    uint32_t       nchannels;    /* 1..4: Y, Y+A, RGB, RGBA */
    uint32_t       sample_bytes; /* 1, or 2 for 16-bit PNG (big-endian) */
    unsigned char *pixels;       /* rows top to bottom, packed (decode_floor_free()) */
    void          *block;        /* the memory pixels lie in */
} decode_floor_image;

/* Decodes the PNG or JPEG at `path` (by its first bytes) into *out. 0 on
 * success; -1 with one line in err otherwise ("not a PNG or JPEG file",
 * libpng's or libjpeg's message), out->pixels then NULL. Prints nothing;
 * calls may run on many threads at once. */
int decode_floor_file(const char *path, decode_floor_image *out, char err[DECODE_FLOOR_ERR_LEN]);

/* Frees what decode_floor_file() allocated; pixels NULL after. */
void decode_floor_free(decode_floor_image *img);

/* Bytes of the decoded samples. */
size_t decode_floor_bytes(const decode_floor_image *img);

/* A checksum of samples in row-major order, channels interleaved, each as
 * its value (a byte, or a 16-bit sample): start from DECODE_FLOOR_HASH0 and
 * fold every sample in. The same for the texture system's read-back of
 * level 0 as for decode_floor_checksum(), when both hold the same values. */
#define DECODE_FLOOR_HASH0 UINT64_C(0xcbf29ce484222325)
static inline uint64_t
decode_floor_hash(uint64_t h, uint32_t sample)
{
    return (h ^ sample) * UINT64_C(0x100000001b3);
}
uint64_t decode_floor_checksum(const decode_floor_image *img);

#endif
