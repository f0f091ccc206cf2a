/* Fuzz target: the PNG loader (tex_png_read, and by rows, where plain
 * files take the fast path), and what the texture system does next with a
 * decoded image: a MIP level and a conversion to float. Checks the
 * loader's contract: an image within the limits, or a one-line error and
 * no pixels; and that both reads agree. */
#include "fuzz_input.h"
#include "tex_image.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Work on decoded images only while they are small: the limits allow
 * 2^28 pixels, which would make each input take seconds. */
#define FUZZ_MAX_WORK_PIXELS (1u << 16)

static void
check_image(const tex_image *img)
{
    if (!img->pixels || img->width == 0 || img->height == 0 || img->width > TEX_MAX_DIM ||
        img->height > TEX_MAX_DIM || (uint64_t)img->width * img->height > TEX_MAX_PIXELS ||
        img->nchannels < 1 || img->nchannels > 4)
        fuzz_fail("decoded image out of its documented shape");
}

/* The next MIP level and a float copy: both read every decoded sample. */
static void
use_image(const tex_image *img)
{
    if ((uint64_t)img->width * img->height > FUZZ_MAX_WORK_PIXELS)
        return;
    char      err[TEX_ERR_LEN];
    tex_image next = {0}, linear = {0};
    if (tex_image_downsample(img, &next, err) != TEX_OK)
        fuzz_fail("downsampling a decoded image failed");
    if (tex_image_convert(img, TEX_TYPE_FLOAT, false, &linear, err) != TEX_OK)
        fuzz_fail("converting a decoded image to float failed");
    tex_image_free(&next);
    tex_image_free(&linear);
}

/* The rows of a read by rows, gathered into one image. */
typedef struct gathered {
    tex_image img;
    uint32_t  next;
} gathered;

static tex_result
gather(void *ctx, const tex_image *shape, uint32_t y, const void *row, char err[TEX_ERR_LEN])
{
    gathered *g = ctx;
    if (y != g->next++)
        fuzz_fail("rows handed over out of order");
    if (y == 0 && tex_image_alloc(&g->img, shape->width, shape->height, shape->nchannels,
                                  shape->type, err) != TEX_OK)
        return TEX_ERR_NOMEM;
    size_t stride = (size_t)shape->width * shape->nchannels * tex_type_size(shape->type);
    memcpy((char *)g->img.pixels + (size_t)y * stride, row, stride);
    return TEX_OK;
}

/* A read by rows, which takes the fast path for a plain PNG
 * (texture/io_png_fast.c), against a whole read by libpng alone: the
 * same result, message and pixels. (Where libpng finds the deflate stream
 * damaged, the fast path may not: libdeflate reads a few streams zlib
 * rejects.) */
static void
by_rows_agrees(const char *path, tex_result whole, const tex_image *img, const char *whole_err)
{
    gathered   g = {0};
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
        check_image(&img);
        use_image(&img);
        tex_image_free(&img);
    } else {
        fuzz_check_err(err, sizeof err);
        if (img.pixels)
            fuzz_fail("a failed read left pixels");
    }
    return 0;
}
