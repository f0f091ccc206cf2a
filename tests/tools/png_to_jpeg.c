/* png_to_jpeg: a test helper, not a tool. Writes each 8-bit grey or RGB PNG
 * given as a baseline JPEG beside it (NAME.png -> NAME.jpg), at quality Q,
 * YCbCr with libjpeg's default 4:2:0 chroma subsampling (grey stays grey):
 * the JPEG inputs of texture_bench_test.sh and of the --cold measurements
 * in docs/benchmarks.md.
 *
 *   png_to_jpeg Q FILE.png...
 *
 * Exit status 0, or 1 with a message on the first file that fails. */
#include "check.h"
#include "tex_image.h"
#include "tex_jpeg_testing.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int
convert(const char *path, int quality)
{
    char      err[TEX_ERR_LEN];
    tex_image img;
    size_t    n = strlen(path), size;
    if (n < 4 || strcmp(path + n - 4, ".png") != 0) {
        fprintf(stderr, "png_to_jpeg: %s: not a .png name\n", path);
        return 1;
    }
    if (tex_png_read(path, &img, err) != TEX_OK) {
        fprintf(stderr, "png_to_jpeg: %s: %s\n", path, err);
        return 1;
    }
    if (img.type != TEX_TYPE_U8 || (img.nchannels != 1 && img.nchannels != 3)) {
        fprintf(stderr, "png_to_jpeg: %s: not 8-bit grey or RGB\n", path);
        tex_image_free(&img);
        return 1;
    }
    bool           grey = img.nchannels == 1;
    unsigned char *jpeg = tex_test_jpeg_encode(
        img.pixels, img.width, img.height, (int)img.nchannels, grey ? JCS_GRAYSCALE : JCS_RGB,
        grey ? JCS_GRAYSCALE : JCS_YCbCr, TEX_TEST_JPEG_BASELINE, quality, &size);
    tex_image_free(&img);
    char out[4096];
    snprintf(out, sizeof out, "%.*s.jpg", (int)(n - 4), path);
    FILE *f = fopen(out, "wb");
    bool  ok = f && fwrite(jpeg, 1, size, f) == size;
    ok = f && fclose(f) == 0 && ok;
    free(jpeg);
    if (!ok)
        fprintf(stderr, "png_to_jpeg: %s: cannot write\n", out);
    return ok ? 0 : 1;
}

int
main(int argc, char **argv)
{
    int quality = argc > 1 ? atoi(argv[1]) : 0;
    if (argc < 3 || quality < 1 || quality > 100) {
        fprintf(stderr, "usage: png_to_jpeg QUALITY(1-100) FILE.png...\n");
        return 2;
    }
    for (int i = 2; i < argc; i++)
        if (convert(argv[i], quality) != 0)
            return 1;
    return rt_test_failures ? 1 : 0;
}
