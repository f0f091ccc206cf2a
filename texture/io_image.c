#include "tex_image.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

const char *
tex_result_str(tex_result r)
{
    switch (r) {
    case TEX_OK:
        return "ok";
    case TEX_ERR_OPEN:
        return "cannot open";
    case TEX_ERR_FORMAT:
        return "wrong file format";
    case TEX_ERR_CORRUPT:
        return "damaged file";
    case TEX_ERR_UNSUPPORTED:
        return "unsupported layout";
    case TEX_ERR_TOO_LARGE:
        return "image too large";
    case TEX_ERR_NOMEM:
        return "out of memory";
    case TEX_ERR_WRITE:
        return "cannot write";
    case TEX_ERR_INVALID:
        return "invalid argument";
    }
    return "unknown error";
}

size_t
tex_type_size(tex_type type)
{
    static const size_t size[] = {
        [TEX_TYPE_U8] = 1, [TEX_TYPE_U16] = 2, [TEX_TYPE_HALF] = 2, [TEX_TYPE_FLOAT] = 4};
    return type <= TEX_TYPE_FLOAT ? size[type] : 0;
}

tex_result
tex_check_size(uint64_t width, uint64_t height, char err[TEX_ERR_LEN])
{
    if (width == 0 || height == 0) {
        snprintf(err, TEX_ERR_LEN, "%" PRIu64 "x%" PRIu64 " pixels: empty image", width, height);
        return TEX_ERR_CORRUPT;
    }
    if (width > TEX_MAX_DIM || height > TEX_MAX_DIM || width * height > TEX_MAX_PIXELS) {
        snprintf(err, TEX_ERR_LEN,
                 "%" PRIu64 "x%" PRIu64 " pixels is over the limit (%u per side, %" PRIu64
                 " in all)",
                 width, height, TEX_MAX_DIM, TEX_MAX_PIXELS);
        return TEX_ERR_TOO_LARGE;
    }
    return TEX_OK;
}

size_t
tex_image_bytes(const tex_image *img)
{
    /* Within the limits this is at most 2^28 * 4 * 4 bytes: no overflow. */
    return (size_t)img->width * img->height * img->nchannels * tex_type_size(img->type);
}

uint32_t
tex_mip_levels(uint32_t width, uint32_t height)
{
    uint32_t n = 1;
    while (width > 1 || height > 1) {
        width = width > 1 ? width / 2 : 1;
        height = height > 1 ? height / 2 : 1;
        n++;
    }
    return n;
}

tex_result
tex_image_alloc(tex_image *img, uint32_t width, uint32_t height, uint32_t nchannels, tex_type type,
                char err[TEX_ERR_LEN])
{
    *img = (tex_image){.width = width, .height = height, .nchannels = nchannels, .type = type};
    if (nchannels < 1 || nchannels > 4 || tex_type_size(type) == 0) {
        snprintf(err, TEX_ERR_LEN, "%u channels of type %d: not an image shape", nchannels,
                 (int)type);
        return TEX_ERR_INVALID;
    }
    tex_result r = tex_check_size(width, height, err);
    if (r != TEX_OK)
        return r;
    img->pixels = calloc(1, tex_image_bytes(img));
    if (!img->pixels) {
        snprintf(err, TEX_ERR_LEN, "out of memory for %ux%u pixels", width, height);
        return TEX_ERR_NOMEM;
    }
    return TEX_OK;
}

void
tex_image_free(tex_image *img)
{
    free(img->pixels);
    img->pixels = NULL;
}

float
tex_srgb_to_linear(float v)
{
    return v <= 0.04045f ? v / 12.92f : powf((v + 0.055f) / 1.055f, 2.4f);
}

/* Its knee is TEX__SRGB_KNEE too (tex_srgb_internal.h): the 16-bit encoder
 * repeats this arithmetic below it. */
float
tex_linear_to_srgb(float v)
{
    return v <= 0.0031308f ? v * 12.92f : 1.055f * powf(v, 1.0f / 2.4f) - 0.055f;
}
