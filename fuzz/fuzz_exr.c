/* Fuzz target: the OpenEXR shim's reader (tex_exr.h): opening a file,
 * reading every level whole, a few tiles of each level of a tiled file,
 * and its attributes. Checks the shim's contract: an info within the
 * limits, images of the size it announced, one-line errors; and where a
 * level came through the fast path (texture/exr_chunks.h), that OpenEXR's
 * own reader, reading it too, gives the same pixels. */
#include "fuzz_input.h"
#include "tex_exr.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Decode levels and tiles only while they are small (the limits allow far
 * more), so each input takes milliseconds. */
#define FUZZ_MAX_WORK_PIXELS (1u << 18)

static void
check_info(const tex_exr_info *info)
{
    if (info->width == 0 || info->height == 0 || info->width > TEX_MAX_DIM ||
        info->height > TEX_MAX_DIM || (uint64_t)info->width * info->height > TEX_MAX_PIXELS ||
        info->nchannels < 1 || info->nchannels > 4 || info->nlevels < 1 ||
        info->nlevels > TEX_EXR_MAX_LEVELS ||
        (info->type != TEX_TYPE_HALF && info->type != TEX_TYPE_FLOAT))
        fuzz_fail("EXR info out of its documented range");
    if (info->tiled && ((uint64_t)info->tile_width * info->tile_height == 0 ||
                        (uint64_t)info->tile_width * info->tile_height > TEX_EXR_MAX_TILE_PIXELS))
        fuzz_fail("EXR tile size out of its documented range");
}

/* Level `level` of `path` read by OpenEXR alone (RT_EXR_FAST=0); NULL
 * pixels where it fails. */
static tex_image
read_reference(const char *path, uint32_t level)
{
    tex_image    img = {0};
    tex_exr     *f;
    tex_exr_info info;
    char         err[TEX_ERR_LEN];
    setenv("RT_EXR_FAST", "0", 1);
    tex_result r = tex_exr_open(path, &f, &info, err);
    unsetenv("RT_EXR_FAST");
    if (r == TEX_OK) {
        if (tex_exr_read_image(f, level, &img, err) != TEX_OK)
            img.pixels = NULL;
        if (tex_exr_fast_chunks(f) != 0)
            fuzz_fail("RT_EXR_FAST=0 took the fast path");
        tex_exr_close(f);
    }
    return img;
}

static void
read_level(const char *path, tex_exr *f, uint32_t level, uint32_t w, uint32_t h)
{
    tex_image img = {0};
    char      err[TEX_ERR_LEN];
    uint64_t  fast = tex_exr_fast_chunks(f);
    if (tex_exr_read_image(f, level, &img, err) == TEX_OK) {
        if (img.width != w || img.height != h || !img.pixels)
            fuzz_fail("EXR level read at another size than announced");
        /* The fast path's pixels are OpenEXR's. (Where OpenEXR fails, the
         * fast path may not: libdeflate reads a few streams zlib rejects.) */
        tex_image ref = tex_exr_fast_chunks(f) > fast ? read_reference(path, level) : img;
        if (ref.pixels && ref.pixels != img.pixels &&
            (ref.width != w || ref.height != h ||
             memcmp(ref.pixels, img.pixels, tex_image_bytes(&img)) != 0))
            fuzz_fail("the fast path and OpenEXR read different pixels");
        if (ref.pixels != img.pixels)
            tex_image_free(&ref);
        tex_image_free(&img);
    } else {
        fuzz_check_err(err, sizeof err);
        if (img.pixels)
            fuzz_fail("a failed level read left pixels");
    }
}

typedef struct tile_job {
    tex_exr *f;
    uint32_t level;
    void    *buf;
} tile_job;

static int
tile_read(void *ctx, uint32_t tx, uint32_t ty, char *err)
{
    tile_job *j = ctx;
    return tex_exr_read_tile(j->f, j->level, tx, ty, j->buf, err) != TEX_OK;
}

static void
read_tiles(tex_exr *f, const tex_exr_info *info, uint32_t level, uint32_t w, uint32_t h)
{
    size_t tile =
        (size_t)info->tile_width * info->tile_height * info->nchannels * tex_type_size(info->type);
    tile_job j = {.f = f, .level = level, .buf = malloc(tile)};
    if (!j.buf)
        return;
    fuzz_tiles_read((w + info->tile_width - 1) / info->tile_width,
                    (h + info->tile_height - 1) / info->tile_height, tile_read, &j, TEX_ERR_LEN);
    free(j.buf);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char  *path = fuzz_file(data, size);
    tex_exr     *f = NULL;
    tex_exr_info info;
    char         err[TEX_ERR_LEN];
    if (tex_exr_open(path, &f, &info, err) != TEX_OK) {
        fuzz_check_err(err, sizeof err);
        if (f)
            fuzz_fail("a failed open returned a file");
        return 0;
    }
    check_info(&info);
    const char *s;
    float       v;
    (void)tex_exr_attr_string(f, "owner", &s);
    (void)tex_exr_attr_float(f, "pixelAspectRatio", &v);
    for (uint32_t level = 0; level < info.nlevels; level++) {
        uint32_t w, h;
        if (!tex_exr_level_size(f, level, &w, &h))
            fuzz_fail("a level below nlevels has no size");
        if ((uint64_t)w * h > FUZZ_MAX_WORK_PIXELS)
            continue;
        if (info.tiled && (uint64_t)info.tile_width * info.tile_height <= FUZZ_MAX_WORK_PIXELS)
            read_tiles(f, &info, level, w, h);
        if (!info.tiled && level > 0)
            fuzz_fail("a scanline file with more than one level");
        read_level(path, f, level, w, h);
    }
    tex_exr_close(f);
    return 0;
}
