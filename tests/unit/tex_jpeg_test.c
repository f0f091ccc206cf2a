/* tex_jpeg_read(): the contract in texture/include/tex_image.h. The JPEGs are
 * written here with libjpeg from a smooth pattern at quality 95 and must
 * come back within a small error; CMYK must be refused. Damaged and
 * truncated files are in tex_image_badinput_test.c. */
#define _POSIX_C_SOURCE 200809L

#include "check.h"
#include "tex_file_testing.h"
#include "tex_image.h"
#include "tex_jpeg_testing.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define TOLERANCE 8 /* of 255, on a smooth pattern at quality 95 */

static const uint32_t sizes[][2] = {{1, 1}, {8, 8}, {37, 23}, {64, 48}, {300, 7}};

/* Writes the pattern as a JPEG, reads it back, compares. */
static void
round_trip(int ncomp, J_COLOR_SPACE stored, bool progressive)
{
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        uint32_t       w = sizes[k][0], h = sizes[k][1];
        uint8_t       *want = tex_test_jpeg_pattern(w, h, ncomp);
        size_t         n;
        unsigned char *jpg = tex_test_jpeg_encode(
            want, w, h, ncomp, ncomp == 1 ? JCS_GRAYSCALE : JCS_RGB, stored, progressive, 95, &n);
        const char *path = tex_test_path("t.jpg");
        tex_test_file_write(path, jpg, n);
        free(jpg);

        tex_image  img;
        char       err[TEX_ERR_LEN] = "";
        tex_result r = tex_jpeg_read(path, &img, err);
        if (r != TEX_OK)
            fprintf(stderr, "%ux%u: %s\n", w, h, err);
        REQUIRE(r == TEX_OK);
        CHECK_EQ_INT(img.width, w);
        CHECK_EQ_INT(img.height, h);
        CHECK_EQ_INT(img.nchannels, ncomp);
        CHECK_EQ_INT(img.type, TEX_TYPE_U8);
        CHECK(img.srgb);
        REQUIRE(img.width == w && img.height == h && img.nchannels == (uint32_t)ncomp);
        int            worst = 0;
        size_t         at = 0;
        const uint8_t *got = img.pixels;
        for (size_t i = 0; i < (size_t)w * h * (size_t)ncomp; i++) {
            int d = abs((int)got[i] - (int)want[i]);
            if (d > worst)
                worst = d, at = i;
        }
        if (worst > TOLERANCE)
            RT_CHECK_FAIL_("%ux%u %s: sample %zu is %d, not %d (error %d > %d)", w, h,
                           progressive ? "progressive" : "baseline", at, got[at], want[at], worst,
                           TOLERANCE);
        tex_test_rows_check(tex_jpeg_read_rows, path, &img); /* row by row: the same */
        tex_image_free(&img);
        free(want);
    }
}

static void
case_baseline_grey(const char *arg)
{
    (void)arg;
    round_trip(1, JCS_GRAYSCALE, false);
}

static void
case_baseline_rgb(const char *arg)
{
    (void)arg;
    round_trip(3, JCS_YCbCr, false); /* 4:2:0, libjpeg's default */
}

static void
case_progressive_grey(const char *arg)
{
    (void)arg;
    round_trip(1, JCS_GRAYSCALE, true);
}

static void
case_progressive_rgb(const char *arg)
{
    (void)arg;
    round_trip(3, JCS_YCbCr, true);
}

/* Colour stored as RGB, not YCbCr (Adobe transform 0). */
static void
case_stored_rgb(const char *arg)
{
    (void)arg;
    round_trip(3, JCS_RGB, false);
}

/* CMYK and YCCK are valid JPEGs the renderer does not take. */
static void
refused(J_COLOR_SPACE stored, const char *word)
{
    uint8_t       *px = tex_test_jpeg_pattern(16, 16, 4);
    size_t         n;
    unsigned char *jpg = tex_test_jpeg_encode(px, 16, 16, 4, JCS_CMYK, stored, false, 95, &n);
    const char    *path = tex_test_path("cmyk.jpg");
    tex_test_file_write(path, jpg, n);
    tex_image  img;
    char       err[TEX_ERR_LEN] = "";
    tex_result r = tex_jpeg_read(path, &img, err);
    CHECK_EQ_INT(r, TEX_ERR_UNSUPPORTED);
    CHECK_CONTAINS(err, word);
    CHECK_ONE_LINE(err);
    CHECK(img.pixels == NULL);
    free(jpg);
    free(px);
}

static void
case_cmyk(const char *arg)
{
    (void)arg;
    refused(JCS_CMYK, "CMYK");
}

static void
case_ycck(const char *arg)
{
    (void)arg;
    refused(JCS_YCCK, "YCCK");
}

/* The offset of SOF0 (baseline) in a file written by libjpeg, where it
 * comes before the first scan. */
static size_t
sof0_find(const unsigned char *d, size_t n)
{
    for (size_t p = 2; p + 4 <= n; p += 2 + ((size_t)d[p + 2] << 8 | d[p + 3])) {
        REQUIRE(d[p] == 0xFF && d[p + 1] != 0xDA);
        if (d[p + 1] == 0xC0)
            return p;
    }
    REQUIRE(!"no SOF0");
    return 0;
}

/* Valid JPEG processes the reader does not take: 12-bit samples, lossless
 * (SOF3). Patched into a baseline file: refused before the data is read. */
static void
case_unsupported_process(const char *arg)
{
    (void)arg;
    uint8_t       *px = tex_test_jpeg_pattern(16, 16, 3);
    size_t         n;
    unsigned char *jpg = tex_test_jpeg_encode(px, 16, 16, 3, JCS_RGB, JCS_YCbCr, false, 95, &n);
    size_t         sof = sof0_find(jpg, n);
    const char    *path = tex_test_path("process.jpg");
    tex_image      img;
    char           err[TEX_ERR_LEN] = "";

    jpg[sof + 4] = 12; /* sample precision */
    tex_test_file_write(path, jpg, n);
    CHECK_EQ_INT(tex_jpeg_read(path, &img, err), TEX_ERR_UNSUPPORTED);
    CHECK_CONTAINS(err, "precision 12");
    CHECK(img.pixels == NULL);
    jpg[sof + 4] = 8;

    jpg[sof + 1] = 0xC3; /* lossless */
    tex_test_file_write(path, jpg, n);
    CHECK_EQ_INT(tex_jpeg_read(path, &img, err), TEX_ERR_UNSUPPORTED);
    CHECK_CONTAINS(err, "0xc3");
    CHECK_ONE_LINE(err);
    CHECK(img.pixels == NULL);
    free(jpg);
    free(px);
}

static const rt_test_case cases[] = {
    {"baseline_grey", case_baseline_grey},
    {"baseline_rgb", case_baseline_rgb},
    {"progressive_grey", case_progressive_grey},
    {"progressive_rgb", case_progressive_rgb},
    {"stored_rgb", case_stored_rgb},
    {"cmyk", case_cmyk},
    {"ycck", case_ycck},
    {"unsupported_process", case_unsupported_process},
    {NULL, NULL},
};

int
main(int argc, char **argv)
{
    return rt_test_main(cases, argc, argv);
}
