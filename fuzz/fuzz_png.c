/* Fuzz target: the PNG loader (tex_png_read), and what the texture system
 * does next with a decoded image: a MIP level and a conversion to float.
 * Checks the loader's contract: an image within the limits, or a one-line
 * error and no pixels. */
#include "fuzz_input.h"
#include "tex_image.h"

#include <stddef.h>
#include <stdint.h>

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

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file(data, size);
    tex_image   img = {0};
    char        err[TEX_ERR_LEN];
    tex_result  r = tex_png_read(path, &img, err);
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
