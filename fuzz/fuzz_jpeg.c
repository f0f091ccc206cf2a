/* Fuzz target: the JPEG loader, read by rows under a budget as the texture
 * system reads it (tex__jpeg_read_rows()), its input through the reader's
 * own source (io_jpeg.c: pread() in blocks, markers skipped across them,
 * the end of the file and lost pixels made errors). Checks the loader's
 * contract: every row handed over, in order and placed out of libjpeg-
 * turbo's non-temporal stores, or a one-line error; and that a small image
 * read whole (tex_jpeg_read()) is the same image. */
#include "fuzz_image.h"
#include "tex_io_internal.h" /* tex__jpeg_read_rows(): a read under a budget */

#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* fuzz_image_check(), and what a JPEG decodes to: grey or RGB, 8-bit sRGB. */
static void
check_image(const tex_image *img)
{
    fuzz_image_check(img);
    if ((img->nchannels != 1 && img->nchannels != 3) || img->type != TEX_TYPE_U8 || !img->srgb)
        fuzz_fail("decoded JPEG out of its documented shape (grey or RGB, 8-bit sRGB)");
}

/* What the reads may hold, as a texture system allows its decodes: the
 * coefficients of a progressive file are charged before libjpeg allocates
 * them. (A file too short to hold a first scan is refused before that; a
 * longer one may still declare 1.5 GB of coefficients, and
 * tex_jpeg_read(), for the tools, takes no budget.) */
#define FUZZ_BUDGET_BYTES ((uint64_t)192 << 20)

static tex_result
reserve(void *ctx, uint64_t bytes, const char *what, char err[TEX_ERR_LEN])
{
    uint64_t *held = ctx;
    if (bytes > FUZZ_BUDGET_BYTES - *held) {
        snprintf(err, TEX_ERR_LEN, "%.100s: over the budget", what);
        return TEX_ERR_TOO_LARGE;
    }
    *held += bytes;
    return TEX_OK;
}

static tex_result
gather(void *ctx, const tex_image *shape, uint32_t y, const void *row, char err[TEX_ERR_LEN])
{
    if (((uintptr_t)row & 31) != 16)
        fuzz_fail("a row handed over where libjpeg-turbo writes it past the caches");
    return fuzz_rows_take(ctx, shape, y, row, err);
}

/* A small image read whole (tex_jpeg_read(): its rows into an image made at
 * the first) is the read by rows' image, pixel for pixel. */
static void
whole_agrees(const char *path, const tex_image *rows)
{
    tex_image img = {0};
    char      err[TEX_ERR_LEN];
    if (tex_jpeg_read(path, &img, err) != TEX_OK)
        fuzz_fail("read whole, a file the read by rows took");
    check_image(&img);
    if (img.width != rows->width || img.height != rows->height ||
        img.nchannels != rows->nchannels ||
        memcmp(img.pixels, rows->pixels, tex_image_bytes(&img)) != 0)
        fuzz_fail("read whole, the image differs from the read by rows'");
    fuzz_image_use(&img);
    tex_image_free(&img);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file(data, size);
    int         fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        fuzz_fail("the input's file cannot be opened");
    uint64_t           held = 0;
    tex__decode_budget budget = {reserve, &held};
    fuzz_rows          g = {.max_pixels = FUZZ_MAX_WORK_PIXELS};
    char               err[TEX_ERR_LEN];
    tex_result         r = tex__jpeg_read_rows(fd, gather, &g, &budget, err);
    close(fd);
    if (r != TEX_OK) {
        fuzz_check_err(err, sizeof err);
    } else if (g.next == 0 || g.next != g.height) {
        fuzz_fail("a read by rows that did not hand over every row succeeded");
    } else if (g.img.pixels) {
        check_image(&g.img);
        whole_agrees(path, &g.img);
    }
    tex_image_free(&g.img);
    return 0;
}
