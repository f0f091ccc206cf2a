/* png_channels: a test helper, not a tool. Writes each 8-bit RGB PNG given
 * with N channels beside it (NAME.png -> NAME-cN.png): 1, grey (its
 * green); 2, grey and alpha; 3, its colour with the blue reversed (an
 * image that differs from it in one channel only, for imgdiff's test); 4,
 * its colour and alpha. The alpha is the red reversed, so it varies across
 * the image and is filtered like any channel. The grey and alpha inputs of
 * texture_bench_test.sh's --floor cases and of the measurements in
 * docs/benchmarks.md (texgen writes RGB).
 *
 *   png_channels N FILE.png...
 *
 * Exit status 0, 2 on a bad command line, or 1 with a message on the first
 * file that fails. */
#include "tex_image.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* src's RGB pixels as n channels in dst (allocated). */
static tex_result
reshape(const tex_image *src, uint32_t n, tex_image *dst, char err[TEX_ERR_LEN])
{
    tex_result r = tex_image_alloc(dst, src->width, src->height, n, TEX_TYPE_U8, err);
    if (r != TEX_OK)
        return r;
    dst->srgb = src->srgb;
    const uint8_t *p = src->pixels;
    uint8_t       *q = dst->pixels;
    for (size_t i = 0; i < (size_t)src->width * src->height; i++, p += 3, q += n) {
        uint8_t alpha = (uint8_t)(255 - p[0]);
        if (n == 4)
            q[0] = p[0], q[1] = p[1], q[2] = p[2], q[3] = alpha;
        else if (n == 3)
            q[0] = p[0], q[1] = p[1], q[2] = (uint8_t)(255 - p[2]);
        else
            q[0] = p[1];
        if (n == 2)
            q[1] = alpha;
    }
    return TEX_OK;
}

static int
convert(const char *path, uint32_t n)
{
    char      err[TEX_ERR_LEN], out[4096];
    tex_image img, shaped;
    size_t    len = strlen(path);
    if (len < 4 || len >= sizeof out - 8 || strcmp(path + len - 4, ".png") != 0) {
        fprintf(stderr, "png_channels: %s: not a .png name\n", path);
        return 1;
    }
    if (tex_png_read(path, &img, err) != TEX_OK) {
        fprintf(stderr, "png_channels: %s: %s\n", path, err);
        return 1;
    }
    if (img.type != TEX_TYPE_U8 || img.nchannels != 3) {
        fprintf(stderr, "png_channels: %s: not 8-bit RGB\n", path);
        tex_image_free(&img);
        return 1;
    }
    snprintf(out, sizeof out, "%.*s-c%u.png", (int)(len - 4), path, n);
    tex_result r = reshape(&img, n, &shaped, err);
    if (r == TEX_OK)
        r = tex_png_write(out, &shaped, err);
    tex_image_free(&img);
    tex_image_free(&shaped);
    if (r != TEX_OK) {
        fprintf(stderr, "png_channels: %s: %s\n", out, err);
        return 1;
    }
    return 0;
}

int
main(int argc, char **argv)
{
    if (argc < 3 || strlen(argv[1]) != 1 || !strchr("1234", argv[1][0])) {
        fprintf(stderr, "usage: png_channels 1|2|4 FILE.png...\n");
        return 2;
    }
    for (int i = 2; i < argc; i++)
        if (convert(argv[i], (uint32_t)(argv[1][0] - '0')) != 0)
            return 1;
    return 0;
}
