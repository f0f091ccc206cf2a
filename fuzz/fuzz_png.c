/* Fuzz target: the PNG loader (tex_png_read, and by rows, where plain
 * files take the fast path), and what the texture system does next with a
 * decoded image: a MIP level and a conversion to float. Checks the
 * loader's contract: an image within the limits, or a one-line error and
 * no pixels; and that both reads agree. */
#include "fuzz_image.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static tex_result
gather(void *ctx, const tex_image *shape, uint32_t y, const void *row, char err[TEX_ERR_LEN])
{
    return fuzz_rows_take(ctx, shape, y, row, err);
}

/* A read by rows, which takes the fast path for a plain PNG
 * (texture/io_png_fast.c), against a whole read by libpng alone: the
 * same result, message and pixels. (Where libpng finds the deflate stream
 * damaged, the fast path may not: libdeflate reads a few streams zlib
 * rejects.) */
static void
by_rows_agrees(const char *path, tex_result whole, const tex_image *img, const char *whole_err)
{
    fuzz_rows  g = {.max_pixels = UINT64_MAX};
    char       err[TEX_ERR_LEN];
    uint64_t   fast = tex_png_fast_reads();
    tex_result r = tex_png_read_rows(path, gather, &g, err);
    bool       took = tex_png_fast_reads() != fast;
    if (r == TEX_OK && whole == TEX_OK) {
        if (g.next != img->height || g.img.width != img->width ||
            g.img.nchannels != img->nchannels || g.img.type != img->type ||
            memcmp(g.img.pixels, img->pixels, tex_image_bytes(img)) != 0)
            fuzz_fail("read by rows, the image differs from the whole read's");
    } else if (r == TEX_OK) {
        if (!took || !strstr(whole_err, "damaged image data"))
            fuzz_fail("read by rows, a file the whole read rejects");
    } else if (r != whole || (!took && strcmp(err, whole_err) != 0)) {
        fuzz_fail("read by rows, another failure than the whole read's");
    }
    tex_image_free(&g.img);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file(data, size);
    tex_image   img = {0};
    char        err[TEX_ERR_LEN];
    setenv("RT_PNG_FAST", "0", 1); /* libpng's read: the reference */
    tex_result r = tex_png_read(path, &img, err);
    unsetenv("RT_PNG_FAST");
    by_rows_agrees(path, r, &img, err);
    if (r == TEX_OK) {
        fuzz_image_check(&img);
        fuzz_image_use(&img);
        tex_image_free(&img);
    } else {
        fuzz_check_err(err, sizeof err);
        if (img.pixels)
            fuzz_fail("a failed read left pixels");
    }
    return 0;
}
