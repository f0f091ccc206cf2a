/* sRGB by table (tex_srgb_internal.h).
 *
 * Decoding is a table of every code's linear value, made by the very call
 * it stands for.
 *
 * Encoding is counting thresholds: up[k] is where the code steps from k to
 * k + 1, so the code of v is the number of thresholds v reaches.
 *
 * 8-bit: up[k] is the decode of (k + 0.5) / 255, and start[i] the code at
 * i / TEX__SRGB_CELLS_U8: the curve's steepest slope (12.92 * 255 codes a
 * unit, near 0) crosses at most one threshold per cell, so encoding is one
 * read and one comparison. It is the reference's rounding but where the
 * curve lands within a thousandth of a code of a half, which float error
 * may put either side (30 of every 16th float in [0, 1];
 * tests/unit/tex_srgb_test.c).
 *
 * 16-bit: exact. up[k] is the least float whose reference code,
 * lrintf(tex_linear_to_srgb(v) * 65535.0f), is above k, found by stepping
 * one float at a time from the mean of k's and k + 1's decodes (2.4 steps
 * on average, at most 10); the test compares the encoder with the reference
 * on every float where the tables decide. Cells of equal width would need
 * a million, one threshold each (12.92 x 65535 codes a unit near 0).
 * Instead, along the linear part (below TEX__SRGB_KNEE) the code is the
 * reference's own multiply and round; above it a cell is the floats of one
 * exponent and top 7 mantissa bits (1,153 cells, 2^-9 to 1), whose secant
 * is within |f''| h^2 / 8 of the curve: at most 0.1 codes (just above 0.5,
 * where the cells widen; 0.03 near 1, 0.005 at the knee). So the rounded
 * line is the code or one of its neighbours, and the thresholds either
 * side decide.
 *
 * What it was worth: a 16-bit sRGB PNG's first touch (`texture-bench
 * --cold`, 60 of the many-textures PNGs made 16-bit) took 2.58x libpng's
 * decode alone with powf() per sample, a third of the run in powf(); the
 * figures with the tables are in docs/benchmarks.md. */
#include "tex_image.h"
#include "tex_srgb_internal.h"

#include <math.h>
#include <pthread.h>

float   tex__srgb_u8[256], tex__srgb_up_u8[256];
uint8_t tex__srgb_start_u8[TEX__SRGB_CELLS_U8 + 1];

float          tex__srgb_u16[65536], tex__srgb_up_u16[65536];
tex__srgb_cell tex__srgb_cells_u16[TEX__SRGB_CELLS_U16];

static pthread_once_t u8_once = PTHREAD_ONCE_INIT, u16_once = PTHREAD_ONCE_INIT;

static void
u8_tables(void)
{
    for (int k = 0; k < 256; k++)
        tex__srgb_u8[k] = tex_srgb_to_linear((float)k / 255.0f);
    for (int k = 0; k < 255; k++)
        tex__srgb_up_u8[k] = tex_srgb_to_linear(((float)k + 0.5f) / 255.0f);
    tex__srgb_up_u8[255] = INFINITY; /* a sentinel: no code above 255 */
    int code = 0;
    for (int i = 0; i <= TEX__SRGB_CELLS_U8; i++) {
        while ((float)i / TEX__SRGB_CELLS_U8 >= tex__srgb_up_u8[code])
            code++;
        tex__srgb_start_u8[i] = (uint8_t)code;
    }
}

void
tex__srgb_u8_init(void)
{
    pthread_once(&u8_once, u8_tables);
}

/* The reference the 16-bit encoder stands for (sample_put() in mip.c
 * before the tables). */
static long
code_u16(float v)
{
    return lrintf(tex_linear_to_srgb(v) * 65535.0f);
}

/* The float with these bits. */
static float
float_of(uint32_t bits)
{
    float v;
    memcpy(&v, &bits, sizeof v);
    return v;
}

/* The curve in codes, in doubles: the cells' lines need only be close. */
static double
curve_u16(double v)
{
    return 65535.0 * (1.055 * pow(v, 1 / 2.4) - 0.055);
}

static void
u16_tables(void)
{
    for (int k = 0; k < 65536; k++)
        tex__srgb_u16[k] = tex_srgb_to_linear((float)k / 65535.0f);
    for (long k = 0; k < 65535; k++) {
        float t = 0.5f * (tex__srgb_u16[k] + tex__srgb_u16[k + 1]);
        while (t > 0 && code_u16(t) > k)
            t = nextafterf(t, 0);
        while (code_u16(t) <= k)
            t = nextafterf(t, 2);
        tex__srgb_up_u16[k] = t;
    }
    tex__srgb_up_u16[65535] = INFINITY;
    for (uint32_t i = 0; i < TEX__SRGB_CELLS_U16; i++) {
        double v0 = float_of((TEX__SRGB_CELL0_U16 + i) << 16);
        double v1 = float_of((TEX__SRGB_CELL0_U16 + i + 1) << 16);
        tex__srgb_cells_u16[i] = (tex__srgb_cell){
            (float)v0, (float)curve_u16(v0), (float)((curve_u16(v1) - curve_u16(v0)) / (v1 - v0))};
    }
}

void
tex__srgb_u16_init(void)
{
    pthread_once(&u16_once, u16_tables);
}
