/* The 8-bit 2:1 MIP halving by AVX-512 VBMI (mip_simd.c), for mip.c's
 * fast path: the same bytes as its scalar halving, 64 samples a step. */
#ifndef TEX_MIP_INTERNAL_H
#define TEX_MIP_INTERNAL_H

#include "tex_image.h" /* tex_downsampler */

#include <stdbool.h>
#include <stdint.h>

/* Whether tex__halve_u8_simd() may be called: the CPU has AVX-512 F, BW
 * and VBMI, the OS saves their registers, its tables are built and pass
 * their check, and the tests have not switched it off. Thread-safe; the
 * first call builds its tables (under 0.1 ms), and the 8-bit sRGB ones if
 * need be. */
bool tex__halve_u8_simd_ready(void);

/* Output row `out` of w texels of nc channels (1 to 4) from source rows
 * `top` and `bottom` of 2w texels: each output channel the mean of a 2x2
 * block, in linear light where `srgb` (alpha, the last of 2 or 4 channels,
 * never), encoded again. The very bytes of mip.c's halve_u8_row(). Reads
 * no byte outside the rows and writes none outside `out`. Only where
 * tex__halve_u8_simd_ready() said true. */
void tex__halve_u8_simd(const uint8_t *top, const uint8_t *bottom, uint8_t *out, uint32_t w,
                        uint32_t nc, bool srgb);

/* Tests: how many output rows a downsampler has made by tex__halve_u8_simd()
 * (8-bit, even sides, and the path ready when it was made; otherwise 0). */
uint32_t tex__downsampler_simd_rows(const tex_downsampler *d);

/* Tests: false makes tex__halve_u8_simd_ready() say false from then on, so
 * that both paths can be compared in one process; true gives it back. */
void tex__halve_u8_simd_allow(bool allow);

#endif
