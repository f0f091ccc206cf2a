/* Writing test JPEGs with libjpeg, for the JPEG reader's tests. */
#ifndef RT_TEST_TEX_JPEG_TESTING_H
#define RT_TEST_TEX_JPEG_TESTING_H

#include "check.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h> /* before jpeglib.h */
#include <stdlib.h>

#include <jpeglib.h>

/* How a test JPEG's scans go: one sequential scan (false, as a bool), libjpeg's
 * default progression (true), one sequential scan per component (which
 * libjpeg also decodes from a whole-image coefficient buffer), or one
 * sequential scan, arithmetic-coded. */
enum {
    TEX_TEST_JPEG_BASELINE,
    TEX_TEST_JPEG_PROGRESSIVE,
    TEX_TEST_JPEG_MULTISCAN,
    TEX_TEST_JPEG_ARITHMETIC
};

static inline void
tex_test_jpeg_scans(struct jpeg_compress_struct *c, int scans)
{
    static jpeg_scan_info one_each[4];
    c->arith_code = scans == TEX_TEST_JPEG_ARITHMETIC;
    if (scans == TEX_TEST_JPEG_PROGRESSIVE)
        jpeg_simple_progression(c);
    if (scans != TEX_TEST_JPEG_MULTISCAN)
        return;
    for (int i = 0; i < c->num_components && i < 4; i++)
        one_each[i] = (jpeg_scan_info){.comps_in_scan = 1, .component_index = {i}, .Se = 63};
    c->scan_info = one_each;
    c->num_scans = c->num_components < 4 ? c->num_components : 4;
}

/* Compresses w x h pixels of `ncomp` interleaved 8-bit samples in colour
 * space `in` (JCS_GRAYSCALE, JCS_RGB, JCS_CMYK) into a JPEG stored as
 * `stored` (JCS_GRAYSCALE, JCS_YCbCr, JCS_RGB, JCS_CMYK, JCS_YCCK), its
 * scans as `scans` says (tex_test_jpeg_scans()). Returns malloc()ed bytes, *size of them. libjpeg's
 * default error handler ends the test on failure. */
static inline unsigned char *
tex_test_jpeg_encode(const uint8_t *pixels, uint32_t w, uint32_t h, int ncomp, J_COLOR_SPACE in,
                     J_COLOR_SPACE stored, int scans, int quality, size_t *size)
{
    struct jpeg_compress_struct c;
    struct jpeg_error_mgr       jerr;
    unsigned char              *buf = NULL;
    unsigned long               n = 0;
    c.err = jpeg_std_error(&jerr);
    jpeg_create_compress(&c);
    jpeg_mem_dest(&c, &buf, &n);
    c.image_width = w;
    c.image_height = h;
    c.input_components = ncomp;
    c.in_color_space = in;
    jpeg_set_defaults(&c);
    jpeg_set_colorspace(&c, stored);
    jpeg_set_quality(&c, quality, TRUE);
    tex_test_jpeg_scans(&c, scans);
    jpeg_start_compress(&c, TRUE);
    while (c.next_scanline < c.image_height) {
        JSAMPROW row = (JSAMPROW)(pixels + (size_t)c.next_scanline * w * (size_t)ncomp);
        jpeg_write_scanlines(&c, &row, 1);
    }
    jpeg_finish_compress(&c);
    jpeg_destroy_compress(&c);
    REQUIRE(buf != NULL && n > 0);
    *size = n;
    return buf;
}

/* A smooth pattern JPEG keeps well, chroma subsampling included: ramps
 * across, down and diagonally, at most 255/63 per pixel. */
static inline uint8_t *
tex_test_jpeg_pattern(uint32_t w, uint32_t h, int ncomp)
{
    uint8_t *p = malloc((size_t)w * h * (size_t)ncomp);
    REQUIRE(p != NULL);
    uint32_t dx = w - 1 > 63 ? w - 1 : 63, dy = h - 1 > 63 ? h - 1 : 63;
    for (uint32_t y = 0; y < h; y++)
        for (uint32_t x = 0; x < w; x++)
            for (int c = 0; c < ncomp; c++) {
                unsigned v = c % 3 == 0   ? 255 * x / dx
                             : c % 3 == 1 ? 255 * y / dy
                                          : 255 * (x + y) / (dx + dy);
                if (c == 3)
                    v = 255 - v;
                p[((size_t)y * w + x) * (size_t)ncomp + (size_t)c] = (uint8_t)v;
            }
    return p;
}

#endif
