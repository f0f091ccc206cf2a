/* The decode floor (decode_floor.h): libpng's png_read_image() and
 * libjpeg's jpeg_read_scanlines() into one buffer, the simplest use of
 * each. As in texture/io_png.c, each setjmp() sits in a function whose state
 * lives in a struct its caller owns, so no local needs `volatile`. */
#define _POSIX_C_SOURCE 200809L

#include "decode_floor.h"

#include <png.h>
#include <stdio.h> /* before jpeglib.h, which needs FILE */

#include <jpeglib.h>

#include <errno.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

typedef struct floor_job {
    struct jpeg_error_mgr jerr; /* first: libjpeg hands its callbacks a pointer to it */
    jmp_buf               jmp;
    FILE                 *f;
    png_structp           png;
    png_infop             info;
    png_bytepp            rows;
    decode_floor_image   *img;
    char                 *err;
} floor_job;

size_t
decode_floor_bytes(const decode_floor_image *img)
{
    return (size_t)img->width * img->height * img->nchannels * img->sample_bytes;
}

/* The image's memory, its first sample 16 bytes past a 32-byte boundary,
 * and so every row where a row is a multiple of 32 bytes (every file the
 * bench's instructions use: 128, 192 and 256 RGB texels wide; of other
 * widths, every other row), as the texture system places the row it decodes into (io_jpeg.c says
 * why: libjpeg-turbo writes a 32-byte-aligned row with non-temporal
 * stores). Where malloc() happened to put it, the floor's JPEG round took
 * 28.5 ms or 30.5 from one build of the bench to the next (decoding into
 * one buffer at each offset: 27.3 ms at 16 or 48 mod 32, 30.2 at 0 or
 * 32): so placed, the floor is the faster one in every run and build. */
static unsigned char *
pixels_alloc(decode_floor_image *img)
{
    unsigned char *block = malloc(decode_floor_bytes(img) + 32);
    img->block = block;
    return block ? block + ((48 - ((uintptr_t)block & 31)) & 31) : NULL;
}

void
decode_floor_free(decode_floor_image *img)
{
    free(img->block);
    img->block = NULL;
    img->pixels = NULL;
}

static void
png_fail(png_structp png, png_const_charp msg)
{
    floor_job *job = png_get_error_ptr(png);
    snprintf(job->err, DECODE_FLOOR_ERR_LEN, "%s", msg);
    longjmp(job->jmp, 1);
}

static void
png_warn(png_structp png, png_const_charp msg)
{
    (void)png, (void)msg; /* a floor prints nothing */
}

/* Everything libpng does; false with job->err set on failure. */
static bool
png_floor(floor_job *job)
{
    if (setjmp(job->jmp))
        return false;
    job->png = png_create_read_struct(PNG_LIBPNG_VER_STRING, job, png_fail, png_warn);
    if (!job->png) {
        snprintf(job->err, DECODE_FLOOR_ERR_LEN, "out of memory");
        return false;
    }
    if (!(job->info = png_create_info_struct(job->png)))
        png_fail(job->png, "out of memory");
    png_init_io(job->png, job->f);
    png_read_info(job->png, job->info);
    /* What the texture system stores: palettes, grey below 8 bits and tRNS
     * expanded. 16-bit samples stay as stored, big-endian (the checksum
     * reads them so): swapping them is ours to do, not the floor's. */
    png_set_expand(job->png);
    png_set_interlace_handling(job->png);
    png_read_update_info(job->png, job->info);
    decode_floor_image *img = job->img;
    img->width = png_get_image_width(job->png, job->info);
    img->height = png_get_image_height(job->png, job->info);
    img->nchannels = png_get_channels(job->png, job->info);
    img->sample_bytes = png_get_bit_depth(job->png, job->info) == 16 ? 2 : 1;
    img->pixels = pixels_alloc(img);
    job->rows = malloc(img->height * sizeof *job->rows);
    if (!img->pixels || !job->rows)
        png_fail(job->png, "out of memory");
    size_t stride = (size_t)img->width * img->nchannels * img->sample_bytes;
    for (uint32_t y = 0; y < img->height; y++)
        job->rows[y] = img->pixels + y * stride;
    png_read_image(job->png, job->rows);
    png_read_end(job->png, NULL);
    return true;
}

static void
jpeg_fail(j_common_ptr cinfo)
{
    floor_job *job = (floor_job *)cinfo->err;
    (*cinfo->err->format_message)(cinfo, job->err);
    longjmp(job->jmp, 1);
}

/* libjpeg calls emit_message() for every warning and trace message. */
static void
jpeg_quiet(j_common_ptr cinfo, int level)
{
    (void)cinfo, (void)level;
}

/* Everything libjpeg does; false with job->err set on failure. */
static bool
jpeg_floor(floor_job *job, struct jpeg_decompress_struct *cinfo)
{
    cinfo->err = jpeg_std_error(&job->jerr);
    job->jerr.error_exit = jpeg_fail;
    job->jerr.emit_message = jpeg_quiet; /* warnings and traces: a floor prints nothing */
    if (setjmp(job->jmp))
        return false;
    jpeg_create_decompress(cinfo);
    jpeg_stdio_src(cinfo, job->f);
    jpeg_read_header(cinfo, TRUE);
    jpeg_start_decompress(cinfo);
    decode_floor_image *img = job->img;
    *img = (decode_floor_image){.width = cinfo->output_width,
                                .height = cinfo->output_height,
                                .nchannels = (uint32_t)cinfo->output_components,
                                .sample_bytes = 1};
    if (img->nchannels != 1 && img->nchannels != 3) {
        snprintf(job->err, DECODE_FLOOR_ERR_LEN, "JPEG of %u channels: not grey or RGB",
                 img->nchannels);
        return false;
    }
    if (!(img->pixels = pixels_alloc(img))) {
        snprintf(job->err, DECODE_FLOOR_ERR_LEN, "out of memory");
        return false;
    }
    while (cinfo->output_scanline < cinfo->output_height) {
        JSAMPROW row = img->pixels + (size_t)cinfo->output_scanline * img->width * img->nchannels;
        jpeg_read_scanlines(cinfo, &row, 1);
    }
    jpeg_finish_decompress(cinfo);
    return true;
}

static int
floor_decode(floor_job *job)
{
    unsigned char magic[8] = {0};
    size_t        n = fread(magic, 1, sizeof magic, job->f);
    rewind(job->f);
    bool ok;
    if (n == 8 && png_sig_cmp(magic, 0, 8) == 0) {
        ok = png_floor(job);
        png_destroy_read_struct(&job->png, &job->info, NULL);
        free(job->rows);
    } else if (n >= 3 && magic[0] == 0xff && magic[1] == 0xd8 && magic[2] == 0xff) {
        struct jpeg_decompress_struct cinfo = {0};
        ok = jpeg_floor(job, &cinfo);
        jpeg_destroy_decompress(&cinfo);
    } else {
        snprintf(job->err, DECODE_FLOOR_ERR_LEN, "not a PNG or JPEG file");
        ok = false;
    }
    return ok ? 0 : -1;
}

int
decode_floor_file(const char *path, decode_floor_image *out, char err[DECODE_FLOOR_ERR_LEN])
{
    floor_job job = {.img = out, .err = err};
    *out = (decode_floor_image){0};
    if (!(job.f = fopen(path, "rb"))) {
        snprintf(err, DECODE_FLOOR_ERR_LEN, "cannot open: %s", strerror(errno));
        return -1;
    }
    int r = floor_decode(&job);
    fclose(job.f);
    if (r != 0) {
        decode_floor_free(out);
    }
    return r;
}

uint64_t
decode_floor_checksum(const decode_floor_image *img)
{
    uint64_t h = DECODE_FLOOR_HASH0;
    size_t   n = (size_t)img->width * img->height * img->nchannels;
    for (size_t i = 0; i < n; i++) {
        const unsigned char *p = img->pixels + i * img->sample_bytes;
        h = decode_floor_hash(h, img->sample_bytes == 2 ? (uint32_t)p[0] << 8 | p[1] : p[0]);
    }
    return h;
}
