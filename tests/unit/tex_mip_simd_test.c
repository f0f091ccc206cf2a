/* The 8-bit MIP halving by AVX-512 VBMI (texture/mip_simd.c) against the
 * scalar halving it stands for: the same bytes, for every channel count,
 * sRGB or not, at every width up to two steps of 64 and beyond, and no
 * byte read or written outside the rows. Skipped where the CPU lacks
 * VBMI (the scalar path is then the only one, and the other tests cover it). */
#include "check.h"
#include "tex_file_testing.h"
#include "tex_image.h"
#include "tex_mip_internal.h"
#include "tex_srgb_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static void
skip_without_simd(void)
{
    tex__srgb_u8_init();
    if (!tex__halve_u8_simd_ready()) {
        fprintf(stderr, "skipped: this CPU has no AVX-512 VBMI, so only the scalar path runs\n");
        exit(TEX_TEST_SKIP);
    }
}

static uint64_t rng = 0x9E3779B97F4A7C15ULL;

static uint8_t
random_byte(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (uint8_t)(rng >> 24);
}

/* Two source rows of 2w texels: random bytes, or with `ramp` neighbours a
 * code apart (k, k + 1), whose means lie nearest the encoder's thresholds. */
static void
fill_rows(uint8_t *p, size_t bytes, bool ramp)
{
    for (size_t i = 0; i < bytes; i++)
        p[i] = ramp ? (uint8_t)(i / 7 + (i & 1)) : random_byte();
}

/* The 2w x 2 image halved by tex_image_downsample(), the SIMD path allowed
 * or not; its one row into out. */
static void
halve_image(const uint8_t *rows, uint32_t w, uint32_t nc, bool srgb, bool simd, uint8_t *out)
{
    char      err[TEX_ERR_LEN];
    tex_image src = {.width = 2 * w,
                     .height = 2,
                     .nchannels = nc,
                     .type = TEX_TYPE_U8,
                     .srgb = srgb,
                     .pixels = (void *)rows},
              dst;
    tex__halve_u8_simd_allow(simd);
    REQUIRE(tex_image_downsample(&src, &dst, err) == TEX_OK);
    tex__halve_u8_simd_allow(true);
    memcpy(out, dst.pixels, (size_t)w * nc);
    tex_image_free(&dst);
}

/* Every channel count and encoding, widths 1 to 140 and some beyond: each
 * row of outputs the scalar's, byte for byte. */
static void
case_same_bytes(const char *arg)
{
    (void)arg;
    skip_without_simd();
    static const uint32_t wide[] = {255, 256, 257, 1000, 4096};
    for (uint32_t nc = 1; nc <= 4; nc++)
        for (int srgb = 0; srgb < 2; srgb++)
            for (uint32_t k = 0; k < 140 + sizeof wide / sizeof wide[0]; k++) {
                uint32_t w = k < 140 ? k + 1 : wide[k - 140];
                size_t   bytes = (size_t)4 * w * nc, n = (size_t)w * nc;
                uint8_t *rows = malloc(bytes), *simd = malloc(n), *scalar = malloc(n);
                REQUIRE(rows && simd && scalar);
                for (int ramp = 0; ramp < 2; ramp++) {
                    fill_rows(rows, bytes, ramp);
                    halve_image(rows, w, nc, srgb, true, simd);
                    halve_image(rows, w, nc, srgb, false, scalar);
                    size_t i = 0;
                    while (i < n && simd[i] == scalar[i])
                        i++;
                    if (i < n)
                        RT_CHECK_FAIL_("%u channels, %s, width %u, %s rows: byte %zu is %u, "
                                       "the scalar path's %u",
                                       nc, srgb ? "sRGB" : "linear", w, ramp ? "ramp" : "random", i,
                                       simd[i], scalar[i]);
                }
                free(rows), free(simd), free(scalar);
            }
}

/* Rows that end where an unreadable page begins, and an output row with
 * guard bytes after it: each width reads and writes its own bytes only
 * (a read past the rows would fault), and writes the scalar's. */
static void
case_bounds(const char *arg)
{
    (void)arg;
    skip_without_simd();
    size_t   page = (size_t)sysconf(_SC_PAGESIZE);
    uint8_t *map = mmap(NULL, 3 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    REQUIRE(map != MAP_FAILED);
    REQUIRE(mprotect(map + 2 * page, page, PROT_NONE) == 0);
    uint8_t *end = map + 2 * page; /* the first unreadable byte */
    for (uint32_t nc = 1; nc <= 4; nc++)
        for (uint32_t w = 1; w <= 200; w++) {
            size_t   row = (size_t)2 * w * nc, n = (size_t)w * nc;
            uint8_t *top = end - 2 * row, *bottom = end - row, out[800 + 64], want[800];
            fill_rows(top, 2 * row, false);
            memset(out, 0xa5, sizeof out);
            tex__halve_u8_simd(top, bottom, out, w, nc, nc != 2);
            halve_image(top, w, nc, nc != 2, false, want);
            CHECK(memcmp(out, want, n) == 0);
            for (size_t i = n; i < sizeof out; i++)
                if (out[i] != 0xa5)
                    RT_CHECK_FAIL_("%u channels, width %u: byte %zu past the row written", nc, w,
                                   i - n);
        }
    munmap(map, 3 * page);
}

/* The tests' switch: off, the path says it is not ready; on, ready again. */
static void
case_switch(const char *arg)
{
    (void)arg;
    skip_without_simd();
    tex__halve_u8_simd_allow(false);
    CHECK(!tex__halve_u8_simd_ready());
    tex__halve_u8_simd_allow(true);
    CHECK(tex__halve_u8_simd_ready());
}

int
main(int argc, char **argv)
{
    static const rt_test_case cases[] = {{"same_bytes", case_same_bytes},
                                         {"bounds", case_bounds},
                                         {"switch", case_switch},
                                         {NULL, NULL}};
    return rt_test_main(cases, argc, argv);
}
