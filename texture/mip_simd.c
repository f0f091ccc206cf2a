/* The 8-bit 2:1 MIP halving by AVX-512 VBMI (tex_mip_internal.h).
 *
 * Each output sample of the scalar halving (mip.c, halve_u8_one()) is four
 * table reads (the bytes' linear values), three float adds and an encode
 * that is two more table reads (srgb.c): some 25 instructions a sample,
 * about a third of a JPEG's first touch (`texture-bench --cold`, perf).
 * AVX2 has no fast table read (its gathers made the round slower, see
 * docs/benchmarks.md); VBMI's byte permute reads a 128-entry byte table for
 * 64 indices in one instruction. So, 64 output samples a step:
 *
 * - Decode: the 256 linear floats as four planes of bytes, byte p of each
 *   float in plane p; a plane is read for 64 indices by two permutes and a
 *   blend on the index's top bit, and the four planes interleaved back into
 *   floats. Interleaving puts the 64 floats in an order of its own ("plane
 *   order": lane p of 128-bit block b of register q, lane 4b + p, is
 *   sample 16b + 4q + p); packing back to bytes restores the natural
 *   order, so the floats are never reordered.
 * - Sums: (a + b) + (c + d), the scalar's adds in the scalar's order. The
 *   scalar's mean is a quarter of that sum, a power of two, which changes
 *   no bit of a normal float (the smallest nonzero value is 1/255 / 12.92),
 *   so the quarter is folded into the encode's constants (63.75, 4 up[k],
 *   the cells in sqrt(sum)).
 * - Encode, sRGB: the scalar's code is the number of thresholds up[k] the
 *   mean reaches (srgb.c). Cut [0, 4], the sums, into 512 cells of equal
 *   width in sqrt(sum): the curve is steepest there at its knee, about 184
 *   codes a unit of sqrt(sum), so a cell (1/256 wide) spans at most 0.72
 *   of a code and holds at most one threshold (made_cells() checks it for
 *   every cell, at its smallest float). The code is then the cell's first
 *   code, plus one if the sum reaches that code's threshold: a 512-entry
 *   byte table (four permutes) and a 256-entry float table (four planes,
 *   as the decode). sqrtf() rounds correctly and so is monotonic, so each
 *   cell is one run of floats.
 * - Encode, not sRGB (alpha, data): lrintf(mean * 255) is rint(sum * 63.75)
 *   for the same reason as the sums.
 *
 * The last step of a row loads and stores under masks, so no byte outside
 * the rows is read or written. What it is worth is in docs/benchmarks.md
 * ("MIP levels by AVX-512"); test tex_mip_simd compares every byte with the
 * scalar path. */
#include "tex_mip_internal.h"
#include "tex_srgb_internal.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

/* Set by tests only; relaxed: it is read again at each downsampler's
 * creation, and no other memory hangs on it. */
static atomic_bool simd_allowed = true;

void
tex__halve_u8_simd_allow(bool allow)
{
    atomic_store_explicit(&simd_allowed, allow, memory_order_relaxed);
}

#if defined(__x86_64__)

#define VBMI __attribute__((target("avx512f,avx512bw,avx512vbmi")))

enum { CELLS = 512, BLOCK = 8 };

/* Each loop over four registers below carries `#pragma GCC unroll 4`
 * (clang reads it too): GCC at -O2, the project's build, leaves them
 * rolled and keeps their registers in arrays on the stack, a store and a
 * load for every value (-O3 peels them itself; the figures:
 * docs/benchmarks.md, "A cold JPEG within 1.3x"). */

/* 256 floats as four planes of bytes: plane p holds byte p of each. */
typedef struct planes {
    uint8_t b[4][256];
} planes;

static struct {
    planes  srgb, unorm; /* the linear value of each byte: tex__srgb_u8, k / 255 */
    planes  up4;         /* 4 up[k], the thresholds against the sum of four */
    uint8_t cell_code[CELLS];
    /* Per channel count and first output channel r: where output r + t's
     * top-left input lies from output r's, t < 64 (at most 126). */
    uint8_t window[4][4][64];
} tables __attribute__((aligned(64)));

static bool           ready;
static pthread_once_t ready_once = PTHREAD_ONCE_INIT;

static void
planes_of(planes *p, const float v[256])
{
    for (int k = 0; k < 256; k++) {
        uint32_t bits;
        memcpy(&bits, &v[k], sizeof bits);
        for (int b = 0; b < 4; b++)
            p->b[b][k] = (uint8_t)(bits >> (8 * b));
    }
}

/* The scalar's code of a sum of four: the thresholds it reaches. */
static int
code_of_sum(float sum)
{
    int code = 0;
    while (code < 255 && sum >= 4.0f * tex__srgb_up_u8[code])
        code++;
    return code;
}

static unsigned
cell_of(float sum)
{
    unsigned i = (unsigned)(sqrtf(sum) * 256.0f);
    return i < CELLS - 1 ? i : CELLS - 1;
}

/* Each cell's code at its smallest float; false if a cell holds two
 * thresholds (then the path stays off: never, on IEEE floats). */
static bool
made_cells(void)
{
    int before = 0;
    for (unsigned i = 0; i < CELLS; i++) {
        float lo = (float)(i * i) / 65536.0f; /* (i / 256)^2, exact */
        while (lo > 0 && cell_of(nextafterf(lo, 0)) == i)
            lo = nextafterf(lo, 0);
        int code = code_of_sum(lo);
        if (cell_of(lo) != i || code - before > 1)
            return false;
        tables.cell_code[i] = (uint8_t)code;
        before = code;
    }
    return code_of_sum(4.0f) - before <= 1; /* the last cell runs to 4 */
}

static void
made_windows(void)
{
    for (unsigned nc = 1; nc <= 4; nc++)
        for (unsigned r = 0; r < nc; r++)
            for (unsigned t = 0; t < 64; t++) {
                unsigned j = r + t; /* output j's top-left input: 2 nc (j / nc) + j % nc */
                tables.window[nc - 1][r][t] = (uint8_t)(2 * nc * (j / nc) + j % nc - r);
            }
}

static bool
cpu_has_vbmi(void)
{
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_OSXSAVE))
        return false;
    /* XCR0: the OS saves SSE, AVX, the opmasks and all 32 zmm registers. */
    uint32_t xcr0, high;
    __asm__("xgetbv" : "=a"(xcr0), "=d"(high) : "c"(0));
    if ((xcr0 & 0xe6) != 0xe6)
        return false;
    return __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & bit_AVX512F) && (b & bit_AVX512BW) &&
           (c & bit_AVX512VBMI);
}

static void
make_ready(void)
{
    if (!cpu_has_vbmi())
        return;
    tex__srgb_u8_init(); /* the tables below are made from it: built, or the cells would fail */
    float unorm[256], up4[256];
    for (int k = 0; k < 256; k++) {
        unorm[k] = (float)k / 255.0f; /* mip.c's table, to the bit */
        up4[k] = 4.0f * tex__srgb_up_u8[k];
    }
    planes_of(&tables.srgb, tex__srgb_u8);
    planes_of(&tables.unorm, unorm);
    planes_of(&tables.up4, up4);
    made_windows();
    ready = made_cells();
}

bool
tex__halve_u8_simd_ready(void)
{
    pthread_once(&ready_once, make_ready);
    return ready && atomic_load_explicit(&simd_allowed, memory_order_relaxed);
}

/* One plane read at 64 indices: entries 0-127 and 128-255 by a permute
 * each, chosen by the index's top bit. */
VBMI static inline __m512i
plane_read(const uint8_t p[256], __m512i idx)
{
    __m512i lo = _mm512_permutex2var_epi8(_mm512_load_si512(p), idx, _mm512_load_si512(p + 64));
    __m512i hi =
        _mm512_permutex2var_epi8(_mm512_load_si512(p + 128), idx, _mm512_load_si512(p + 192));
    return _mm512_mask_blend_epi8(_mm512_movepi8_mask(idx), lo, hi);
}

/* 64 floats of a table at 64 byte indices, in plane order. */
VBMI static inline void
table_read(const planes *t, __m512i idx, __m512 f[4])
{
    __m512i b0 = plane_read(t->b[0], idx), b1 = plane_read(t->b[1], idx);
    __m512i b2 = plane_read(t->b[2], idx), b3 = plane_read(t->b[3], idx);
    __m512i lo01 = _mm512_unpacklo_epi8(b0, b1), hi01 = _mm512_unpackhi_epi8(b0, b1);
    __m512i lo23 = _mm512_unpacklo_epi8(b2, b3), hi23 = _mm512_unpackhi_epi8(b2, b3);
    f[0] = _mm512_castsi512_ps(_mm512_unpacklo_epi16(lo01, lo23));
    f[1] = _mm512_castsi512_ps(_mm512_unpackhi_epi16(lo01, lo23));
    f[2] = _mm512_castsi512_ps(_mm512_unpacklo_epi16(hi01, hi23));
    f[3] = _mm512_castsi512_ps(_mm512_unpackhi_epi16(hi01, hi23));
}

/* Two registers of integers in plane order (each 0 to 511) as 32
 * unsigned words: registers 0 and 1 give each block's samples 0-7,
 * registers 2 and 3 its samples 8-15. */
VBMI static inline __m512i
words_of(__m512i d0, __m512i d1)
{
    return _mm512_packus_epi32(d0, d1);
}

/* Four registers of integers in plane order (each 0 to 255) as 64 bytes,
 * in the natural order. */
VBMI static inline __m512i
bytes_of(const __m512i d[4])
{
    return _mm512_packus_epi16(words_of(d[0], d[1]), words_of(d[2], d[3]));
}

/* A mask of the first `left` of 64 bytes (all of them from 64 on): what a
 * load or store may touch of a row with `left` bytes to go. */
static inline __mmask64
first_64(size_t left)
{
    return left >= 64 ? ~(__mmask64)0 : ((__mmask64)1 << left) - 1;
}

/* Bytes p[window[t]], t < 64, of a row with `left` bytes from p. */
VBMI static inline __m512i
window_read(const uint8_t *p, size_t left, __m512i window)
{
    __m512i lo = _mm512_maskz_loadu_epi8(first_64(left), p);
    __m512i hi = _mm512_maskz_loadu_epi8(first_64(left > 64 ? left - 64 : 0), p + 64);
    return _mm512_permutex2var_epi8(lo, window, hi);
}

/* The linear values of 64 bytes, plane order: alpha lanes (`unorm`, in
 * plane order) from the unorm table where the rest are sRGB. */
VBMI static inline __attribute__((always_inline)) void
decode(__m512i bytes, bool srgb, __mmask16 unorm, __m512 f[4])
{
    if (!srgb) {
        table_read(&tables.unorm, bytes, f);
        return;
    }
    table_read(&tables.srgb, bytes, f);
    if (!unorm)
        return;
    __m512 u[4];
    table_read(&tables.unorm, bytes, u);
#pragma GCC unroll 4
    for (int q = 0; q < 4; q++)
        f[q] = _mm512_mask_blend_ps(unorm, f[q], u[q]);
}

/* The codes of 64 sums of four, in the natural order (see the top). */
VBMI static inline __attribute__((always_inline)) __m512i
encode(const __m512 sum[4], bool srgb, __mmask16 unorm, __mmask64 unorm_bytes)
{
    __m512i u[4], cell[4], step[4];
#pragma GCC unroll 4
    for (int q = 0; q < 4; q++)
        u[q] = _mm512_cvtps_epi32(_mm512_mul_ps(sum[q], _mm512_set1_ps(63.75f)));
    if (!srgb)
        return bytes_of(u);
#pragma GCC unroll 4
    for (int q = 0; q < 4; q++) {
        __m512i i = _mm512_cvttps_epi32(_mm512_mul_ps(_mm512_sqrt_ps(sum[q]), _mm512_set1_ps(256)));
        cell[q] = _mm512_min_epi32(i, _mm512_set1_epi32(CELLS - 1));
    }
    /* A cell's code: its low 7 bits index a 128-entry quarter, its top 2
     * pick the quarter. */
    __m512i w0 = words_of(cell[0], cell[1]), w1 = words_of(cell[2], cell[3]);
    __m512i low = _mm512_packus_epi16(_mm512_and_si512(w0, _mm512_set1_epi16(127)),
                                      _mm512_and_si512(w1, _mm512_set1_epi16(127)));
    __m512i top = _mm512_packus_epi16(_mm512_srli_epi16(w0, 7), _mm512_srli_epi16(w1, 7));
    __m512i q[4];
#pragma GCC unroll 4
    for (int k = 0; k < 4; k++)
        q[k] = _mm512_permutex2var_epi8(_mm512_load_si512(tables.cell_code + 128 * k), low,
                                        _mm512_load_si512(tables.cell_code + 128 * k + 64));
    __mmask64 odd = _mm512_test_epi8_mask(top, _mm512_set1_epi8(1));
    __mmask64 high = _mm512_test_epi8_mask(top, _mm512_set1_epi8(2));
    __m512i   code = _mm512_mask_blend_epi8(high, _mm512_mask_blend_epi8(odd, q[0], q[1]),
                                            _mm512_mask_blend_epi8(odd, q[2], q[3]));
    /* Plus one where the sum reaches the code's threshold. */
    __m512 up[4];
    table_read(&tables.up4, code, up);
#pragma GCC unroll 4
    for (int k = 0; k < 4; k++)
        step[k] = _mm512_maskz_mov_epi32(_mm512_cmp_ps_mask(sum[k], up[k], _CMP_GE_OQ),
                                         _mm512_set1_epi32(1));
    code = _mm512_add_epi8(code, bytes_of(step));
    return unorm ? _mm512_mask_blend_epi8(unorm_bytes, code, bytes_of(u)) : code;
}

/* tex__halve_u8_simd() for one channel count and encoding, inlined with
 * both constant. */
VBMI static inline __attribute__((always_inline)) void
halve_nc(const uint8_t *top, const uint8_t *bottom, uint8_t *out, uint32_t w, uint32_t nc,
         bool srgb)
{
    /* Alpha lanes: every 2nd or 4th, in plane order (a lane's sample is
     * 16b + 4q + p, so p decides) and in the natural one. */
    __mmask16 unorm = !srgb ? 0 : nc == 2 ? 0xaaaa : nc == 4 ? 0x8888 : 0;
    __mmask64 unorm_bytes = nc == 2 ? 0xaaaaaaaaaaaaaaaaull : 0x8888888888888888ull;
    size_t    n = (size_t)w * nc, row = 2 * n;
    /* Steps a block at a time, sums first, then codes: a step's chain
     * (decode, sum, cell, threshold) is long, and two short loops of
     * independent steps overlap where one long one would wait. */
    for (size_t j0 = 0; j0 < n; j0 += BLOCK * 64) {
        __m512 sum[BLOCK][4];
        size_t left = (n - j0 + 63) / 64, steps = left < BLOCK ? left : BLOCK;
        for (size_t k = 0; k < steps; k++) {
            size_t  j = j0 + 64 * k, r = j % nc, a = 2 * (j - r) + r; /* j's top-left input */
            __m512i window = _mm512_load_si512(tables.window[nc - 1][r]);
            __m512  in[4][4];
            decode(window_read(top + a, row - a, window), srgb, unorm, in[0]);
            decode(window_read(top + a + nc, row - a - nc, window), srgb, unorm, in[1]);
            decode(window_read(bottom + a, row - a, window), srgb, unorm, in[2]);
            decode(window_read(bottom + a + nc, row - a - nc, window), srgb, unorm, in[3]);
#pragma GCC unroll 4
            for (int q = 0; q < 4; q++)
                sum[k][q] = _mm512_add_ps(_mm512_add_ps(in[0][q], in[1][q]),
                                          _mm512_add_ps(in[2][q], in[3][q]));
        }
        for (size_t k = 0; k < steps; k++) {
            size_t j = j0 + 64 * k;
            _mm512_mask_storeu_epi8(out + j, first_64(n - j),
                                    encode(sum[k], srgb, unorm, unorm_bytes));
        }
    }
}

VBMI void
tex__halve_u8_simd(const uint8_t *top, const uint8_t *bottom, uint8_t *out, uint32_t w, uint32_t nc,
                   bool srgb)
{
    switch (nc * 2 + srgb) {
    case 2:
        halve_nc(top, bottom, out, w, 1, false);
        break;
    case 3:
        halve_nc(top, bottom, out, w, 1, true);
        break;
    case 4:
        halve_nc(top, bottom, out, w, 2, false);
        break;
    case 5:
        halve_nc(top, bottom, out, w, 2, true);
        break;
    case 6:
        halve_nc(top, bottom, out, w, 3, false);
        break;
    case 7:
        halve_nc(top, bottom, out, w, 3, true);
        break;
    case 8:
        halve_nc(top, bottom, out, w, 4, false);
        break;
    default:
        halve_nc(top, bottom, out, w, 4, true);
        break;
    }
}

#else /* no x86-64: the scalar path alone */

bool
tex__halve_u8_simd_ready(void)
{
    return false;
}

void
tex__halve_u8_simd(const uint8_t *top, const uint8_t *bottom, uint8_t *out, uint32_t w, uint32_t nc,
                   bool srgb)
{
    (void)top, (void)bottom, (void)out, (void)w, (void)nc, (void)srgb;
}

#endif
