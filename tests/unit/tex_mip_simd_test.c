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

/* Two source rows of `row` bytes each: random bytes, or with `ramp` the
 * same row twice, neighbours a code apart (k, k + 1), so that each 2x2
 * block holds two codes and its mean lies next to an encoder threshold. */
static void
fill_rows(uint8_t *top, uint8_t *bottom, size_t row, bool ramp)
{
    for (size_t i = 0; i < row; i++) {
        top[i] = ramp ? (uint8_t)(i / 7 + (i & 1)) : random_byte();
        bottom[i] = ramp ? top[i] : random_byte();
    }
}

/* The 2w x 2 image (its rows one after the other) halved by a
 * downsampler, the SIMD path allowed or not; its one row into out. It
 * checks that the downsampler made that row by the path it was allowed. */
static void
halve_image(const uint8_t *rows, uint32_t w, uint32_t nc, bool srgb, bool simd, uint8_t *out)
{
    char      err[TEX_ERR_LEN];
    tex_image shape = {
        .width = 2 * w, .height = 2, .nchannels = nc, .type = TEX_TYPE_U8, .srgb = srgb};
    tex_downsampler *d;
    tex__halve_u8_simd_allow(simd);
    REQUIRE(tex_downsampler_new(&shape, &d, err) == TEX_OK);
    tex__halve_u8_simd_allow(true);
    size_t row = (size_t)2 * w * nc;
    CHECK(tex_downsampler_push(d, rows) == NULL);
    const void *half = tex_downsampler_push(d, rows + row);
    REQUIRE(half);
    CHECK_EQ_INT(tex__downsampler_simd_rows(d), simd ? 1 : 0);
    memcpy(out, half, (size_t)w * nc);
    tex_downsampler_free(d);
}

/* Every channel count and encoding, widths 1 to 140 and some beyond: each
 * row of outputs the scalar's, byte for byte, called directly and through
 * a downsampler. */
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
                size_t   row = (size_t)2 * w * nc, n = (size_t)w * nc;
                uint8_t *rows = malloc(2 * row), *simd = malloc(n), *direct = malloc(n);
                uint8_t *scalar = malloc(n);
                REQUIRE(rows && simd && direct && scalar);
                for (int ramp = 0; ramp < 2; ramp++) {
                    fill_rows(rows, rows + row, row, ramp);
                    halve_image(rows, w, nc, srgb, true, simd);
                    halve_image(rows, w, nc, srgb, false, scalar);
                    tex__halve_u8_simd(rows, rows + row, direct, w, nc, srgb);
                    size_t i = 0;
                    while (i < n && simd[i] == scalar[i] && direct[i] == scalar[i])
                        i++;
                    if (i < n)
                        RT_CHECK_FAIL_("%u channels, %s, width %u, %s rows: byte %zu is %u (%u "
                                       "called directly), the scalar path's %u",
                                       nc, srgb ? "sRGB" : "linear", w, ramp ? "ramp" : "random", i,
                                       simd[i], direct[i], scalar[i]);
                }
                free(rows), free(simd), free(direct), free(scalar);
            }
}

/* A buffer of `bytes` that ends where an unreadable page begins. */
static uint8_t *
before_guard(size_t bytes, uint8_t **map, size_t *mapped)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    *mapped = (bytes + page - 1) / page * page + page;
    *map = mmap(NULL, *mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    REQUIRE(*map != MAP_FAILED);
    REQUIRE(mprotect(*map + *mapped - page, page, PROT_NONE) == 0);
    return *map + *mapped - page - bytes;
}

/* Each row ends where an unreadable page begins, and the output row has
 * guard bytes after it: each width reads and writes its own bytes only (a
 * read past either row would fault), and writes the scalar's. */
static void
case_bounds(const char *arg)
{
    (void)arg;
    skip_without_simd();
    for (uint32_t nc = 1; nc <= 4; nc++)
        for (uint32_t w = 1; w <= 200; w++) {
            size_t   row = (size_t)2 * w * nc, n = (size_t)w * nc, mapped[2];
            uint8_t *map[2], out[800 + 64], want[800], both[2 * 1600];
            uint8_t *top = before_guard(row, &map[0], &mapped[0]);
            uint8_t *bottom = before_guard(row, &map[1], &mapped[1]);
            fill_rows(top, bottom, row, false);
            memset(out, 0xa5, sizeof out);
            tex__halve_u8_simd(top, bottom, out, w, nc, nc != 2);
            memcpy(both, top, row), memcpy(both + row, bottom, row);
            halve_image(both, w, nc, nc != 2, false, want);
            CHECK(memcmp(out, want, n) == 0);
            for (size_t i = n; i < sizeof out; i++)
                if (out[i] != 0xa5)
                    RT_CHECK_FAIL_("%u channels, width %u: byte %zu past the row written", nc, w,
                                   i - n);
            munmap(map[0], mapped[0]), munmap(map[1], mapped[1]);
        }
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
