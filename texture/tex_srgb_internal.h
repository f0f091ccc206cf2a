/* sRGB by table, for 8- and 16-bit samples: codes to linear light and back
 * with the very bits tex_srgb_to_linear() and tex_linear_to_srgb()
 * (tex_image.h) give (but for 8-bit encodes within a thousandth of a code
 * of a half: srgb.c), for a table read or two instead of a powf(). Building
 * MIP levels converts every sample both ways, and lookups decode every
 * texel they blend: with powf() per sample a 16-bit sRGB PNG's first touch
 * took 2.6x its decode (texture/srgb.c has the figures). */
#ifndef TEX_SRGB_INTERNAL_H
#define TEX_SRGB_INTERNAL_H

#include <math.h>
#include <stdint.h>
#include <string.h>

/* Builds the 8-bit tables (6 KiB); once per process, and safe to call from
 * any thread, any number of times. Read the tables only after a call. */
void tex__srgb_u8_init(void);

/* Builds the 16-bit tables (526 KiB, 3.5 ms on the first call): call
 * it only where a 16-bit sRGB image appears, so that runs without one pay
 * nothing. Once per process, thread-safe, as above. */
void tex__srgb_u16_init(void);

/* A code as linear light: tex_srgb_to_linear(k / 255.0f) and
 * tex_srgb_to_linear(k / 65535.0f). */
extern float tex__srgb_u8[256];
extern float tex__srgb_u16[65536];

/* The encoders' tables (srgb.c says how they are made, and how close to
 * the reference each encoder is). */
extern float   tex__srgb_up_u8[256];
extern uint8_t tex__srgb_start_u8[];
enum { TEX__SRGB_CELLS_U8 = 4096 };

/* lrintf(tex_linear_to_srgb(v) * 255.0f) for v in [0, 1], but within a
 * thousandth of a code of a half (srgb.c): one table read and one
 * comparison, added rather than branched on (whether a sample crosses the
 * threshold in its cell is as random as the image). Outside [0, 1], NaN
 * included, it reads outside its table: callers clamp first. */
static inline uint8_t
tex__srgb_encode_u8(float v)
{
    int code = tex__srgb_start_u8[(int)(v * TEX__SRGB_CELLS_U8)];
    return (uint8_t)(code + (v >= tex__srgb_up_u8[code]));
}

/* One cell of the 16-bit encoder's curve, the floats that share an
 * exponent and their top 7 mantissa bits above the linear part: the code
 * at the cell's start and the slope across it, in codes. */
typedef struct tex__srgb_cell {
    float v0, code, slope;
} tex__srgb_cell;
/* Where tex_linear_to_srgb() (io_image.c) stops being linear: the two must
 * agree, or the encoder stops matching (tex_srgb.encode_u16 would say so). */
#define TEX__SRGB_KNEE 0.0031308f
/* Cells by a float's bits >> 16: from 2^-9's, below the knee, to 1.0's. */
enum { TEX__SRGB_CELL0_U16 = 118 << 7, TEX__SRGB_CELLS_U16 = (127 << 7) - TEX__SRGB_CELL0_U16 + 1 };
extern tex__srgb_cell tex__srgb_cells_u16[TEX__SRGB_CELLS_U16];
extern float          tex__srgb_up_u16[65536];

/* lrintf(tex_linear_to_srgb(v) * 65535.0f) for v in [0, 1], exactly.
 * Along the linear part, that arithmetic itself; above it, the cell's line
 * puts v within a tenth of a code of the curve, and the thresholds on either
 * side of that code settle it. Outside [0, 1], NaN included, it reads
 * outside its tables: callers clamp first. */
static inline uint16_t
tex__srgb_encode_u16(float v)
{
    if (v <= TEX__SRGB_KNEE)
        return (uint16_t)lrintf(v * 12.92f * 65535.0f);
    uint32_t bits;
    memcpy(&bits, &v, sizeof bits);
    const tex__srgb_cell *c = &tex__srgb_cells_u16[(bits >> 16) - TEX__SRGB_CELL0_U16];
    int                   code = (int)(c->code + c->slope * (v - c->v0) + 0.5f);
    code = code < 65535 ? code : 65535;
    code += v >= tex__srgb_up_u16[code];    /* up[65535] is infinite */
    code -= v < tex__srgb_up_u16[code - 1]; /* code > 2,600 here */
    return (uint16_t)code;
}

#endif
