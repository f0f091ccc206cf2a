/* What the image loaders' fuzz targets (fuzz_png.c, fuzz_jpeg.c) share:
 * the shape every decoded image must have, the work done on one, and the
 * rows of a read by rows gathered into an image. */
#ifndef FUZZ_IMAGE_H
#define FUZZ_IMAGE_H

#include "fuzz_input.h"
#include "tex_image.h"

#include <stdint.h>
#include <string.h>

/* Work on decoded images only while they are small: the limits allow
 * 2^28 pixels, which would make each input take seconds. */
#define FUZZ_MAX_WORK_PIXELS (1u << 16)

/* A decoded image within the documented limits, or the target fails. */
static inline void
fuzz_image_check(const tex_image *img)
{
    if (!img->pixels || img->width == 0 || img->height == 0 || img->width > TEX_MAX_DIM ||
        img->height > TEX_MAX_DIM || (uint64_t)img->width * img->height > TEX_MAX_PIXELS ||
        img->nchannels < 1 || img->nchannels > 4)
        fuzz_fail("decoded image out of its documented shape");
}

/* The next MIP level and a float copy of a small image: both read every
 * decoded sample. */
static inline void
fuzz_image_use(const tex_image *img)
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

/* The rows of a read by rows: how many came, and the image they make,
 * gathered where it has at most `max_pixels` pixels (else img stays
 * empty). Zero it before the read; free img after. */
typedef struct fuzz_rows {
    tex_image img;
    uint32_t  next, height; /* rows taken; the image's height, as the rows say */
    uint64_t  max_pixels;
} fuzz_rows;

/* A tex_rows_fn's work for fuzz_rows g: rows in order, or the target fails. */
static inline tex_result
fuzz_rows_take(fuzz_rows *g, const tex_image *shape, uint32_t y, const void *row,
               char err[TEX_ERR_LEN])
{
    if (y != g->next++ || (y && shape->height != g->height))
        fuzz_fail("rows handed over out of order, or of another image");
    g->height = shape->height;
    if ((uint64_t)shape->width * shape->height > g->max_pixels)
        return TEX_OK;
    if (y == 0 && tex_image_alloc(&g->img, shape->width, shape->height, shape->nchannels,
                                  shape->type, err) != TEX_OK)
        return TEX_ERR_NOMEM;
    g->img.srgb = shape->srgb;
    size_t stride = (size_t)shape->width * shape->nchannels * tex_type_size(shape->type);
    memcpy((char *)g->img.pixels + (size_t)y * stride, row, stride);
    return TEX_OK;
}

#endif
