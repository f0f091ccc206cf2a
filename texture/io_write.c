/* Writing an image whatever its format: the name's extension decides. */
#include "tex_exr.h"
#include "tex_image.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

/* Whether path ends in ext, in any case. */
static bool
ends_with(const char *path, const char *ext)
{
    size_t n = strlen(path), e = strlen(ext);
    return n > e && strcasecmp(path + n - e, ext) == 0;
}

/* A binary PPM (P6): 8-bit RGB, grey repeated, alpha dropped; the format
 * programs with no PNG reader take (Embree's tutorials: tools/compare). */
static tex_result
ppm_write(const char *path, const tex_image *u8, char err[TEX_ERR_LEN])
{
    tex_replace out;
    tex_result  r = tex_replace_begin(&out, path, err);
    if (r != TEX_OK)
        return r;
    const uint8_t *p = u8->pixels;
    uint32_t       nc = u8->nchannels;
    fprintf(out.f, "P6\n%u %u\n255\n", (unsigned)u8->width, (unsigned)u8->height);
    for (size_t i = 0; i < (size_t)u8->width * u8->height; i++, p += nc) {
        uint8_t rgb[3] = {p[0], nc >= 3 ? p[1] : p[0], nc >= 3 ? p[2] : p[0]};
        fwrite(rgb, 1, 3, out.f);
    }
    return tex_replace_end(&out, true, err);
}

tex_result
tex_image_write_linear(const char *path, const tex_image *img, float scale, char err[TEX_ERR_LEN])
{
    bool ppm = ends_with(path, ".ppm"), png = ends_with(path, ".png") || ppm,
         exr = ends_with(path, ".exr");
    if (!png && !exr) {
        snprintf(err, TEX_ERR_LEN, "not a .png, .ppm or .exr name");
        return TEX_ERR_INVALID;
    }
    if (img->type != TEX_TYPE_FLOAT || img->srgb) {
        snprintf(err, TEX_ERR_LEN, "not a linear float image");
        return TEX_ERR_INVALID;
    }
    tex_image  scaled, out;
    tex_result r =
        tex_image_alloc(&scaled, img->width, img->height, img->nchannels, TEX_TYPE_FLOAT, err);
    if (r != TEX_OK)
        return r;
    const float *in = img->pixels;
    float       *to = scaled.pixels;
    for (size_t i = 0; i < (size_t)img->width * img->height * img->nchannels; i++) {
        bool alpha = (img->nchannels == 2 && i % 2 == 1) || (img->nchannels == 4 && i % 4 == 3);
        to[i] = alpha ? in[i] : in[i] * scale; /* alpha is coverage, not light */
    }
    r = tex_image_convert(&scaled, png ? TEX_TYPE_U8 : TEX_TYPE_HALF, png, &out, err);
    tex_image_free(&scaled);
    if (r != TEX_OK)
        return r;
    r = ppm   ? ppm_write(path, &out, err)
        : png ? tex_png_write(path, &out, err)
              : tex_exr_write_scanline(path, &out, NULL, 0, err);
    tex_image_free(&out);
    return r;
}
