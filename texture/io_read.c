/* Reading an image whatever its format: the first bytes decide. */
#include "tex_io_internal.h"
#include "tex_tiff.h"
#include "texture_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

tex__format
tex__sniff(int fd, char err[TEX_ERR_LEN], tex_result *r)
{
    unsigned char magic[8] = {0};
    ssize_t       n;
    do /* where they lie: the offset stays for the decoder */
        n = pread(fd, magic, sizeof magic, 0);
    while (n < 0 && errno == EINTR);
    if (n < 0) {
        snprintf(err, TEX_ERR_LEN, "cannot read: %s", strerror(errno));
        *r = TEX_ERR_OPEN;
        return TEX__FORMAT_UNKNOWN;
    }
    if (n >= 8 && memcmp(magic, "\x89PNG\r\n\x1a\n", 8) == 0)
        return TEX__FORMAT_PNG;
    if (n >= 3 && magic[0] == 0xff && magic[1] == 0xd8 && magic[2] == 0xff)
        return TEX__FORMAT_JPEG;
    if (n >= 4 && memcmp(magic, "\x76\x2f\x31\x01", 4) == 0)
        return TEX__FORMAT_EXR;
    if (n >= 4 && tex__tiff_magic(magic))
        return TEX__FORMAT_TIFF;
    snprintf(err, TEX_ERR_LEN, n == 0 ? "empty file" : "not a PNG, JPEG, EXR or TIFF file");
    *r = n == 0 ? TEX_ERR_CORRUPT : TEX_ERR_FORMAT;
    return TEX__FORMAT_UNKNOWN;
}

/* path opened and its format sniffed: the descriptor (-1 with *r and err
 * set when it cannot be opened or read, or is no image we read). A PNG or
 * JPEG is then decoded from it, not opened a second time. */
static int
open_sniffed(const char *path, tex__format *format, char err[TEX_ERR_LEN], tex_result *r)
{
    *format = TEX__FORMAT_UNKNOWN;
    int fd = tex_open_regular(path, err);
    if (fd < 0) {
        *r = TEX_ERR_OPEN;
        return -1;
    }
    *format = tex__sniff(fd, err, r);
    if (*format == TEX__FORMAT_UNKNOWN) {
        close(fd);
        return -1;
    }
    return fd;
}

tex_result
tex_image_read(const char *path, tex_image *out, char err[TEX_ERR_LEN])
{
    tex_result  r = TEX_OK;
    tex__format format;
    out->pixels = NULL;
    int fd = open_sniffed(path, &format, err, &r);
    switch (format) {
    case TEX__FORMAT_PNG:
        r = tex__png_read_fd(fd, out, err);
        break;
    case TEX__FORMAT_JPEG:
        r = tex__jpeg_read_fd(fd, out, err);
        break;
    case TEX__FORMAT_EXR: {
        tex_exr     *f;
        tex_exr_info info;
        r = tex_exr_open(path, &f, &info, err);
        if (r == TEX_OK) {
            r = tex_exr_read_image(f, 0, out, err);
            tex_exr_close(f);
            out->associated = out->nchannels == 2 || out->nchannels == 4; /* EXR's alpha is */
        }
        break;
    }
    case TEX__FORMAT_TIFF:
        r = tex_tiff_read_rows(path, tex__rows_collect, out, err);
        if (r != TEX_OK)
            tex_image_free(out);
        break;
    default:
        break;
    }
    if (fd >= 0)
        close(fd);
    return r;
}

tex_result
tex_image_rows(const tex_image *img, tex_rows_fn fn, void *ctx, char err[TEX_ERR_LEN])
{
    tex_image shape = *img;
    shape.pixels = NULL;
    size_t     stride = (size_t)img->width * img->nchannels * tex_type_size(img->type);
    tex_result r = TEX_OK;
    for (uint32_t y = 0; y < img->height && r == TEX_OK; y++)
        r = fn(ctx, &shape, y, (const char *)img->pixels + y * stride, err);
    return r;
}

tex_result
tex_image_read_rows(const char *path, tex_rows_fn fn, void *ctx, char err[TEX_ERR_LEN])
{
    tex_result  r = TEX_OK;
    tex__format format;
    tex_image   img;
    int         fd = open_sniffed(path, &format, err, &r);
    switch (format) {
    case TEX__FORMAT_PNG:
        r = tex__png_read_rows(fd, fn, ctx, NULL, err);
        break;
    case TEX__FORMAT_JPEG:
        r = tex__jpeg_read_rows(fd, fn, ctx, NULL, err);
        break;
    case TEX__FORMAT_TIFF:
        r = tex_tiff_read_rows(path, fn, ctx, err);
        break;
    case TEX__FORMAT_EXR:
        r = tex_image_read(path, &img, err);
        if (r == TEX_OK)
            r = tex_image_rows(&img, fn, ctx, err);
        tex_image_free(&img);
        break;
    default:
        break;
    }
    if (fd >= 0)
        close(fd);
    return r;
}

tex_result
tex_image_read_linear(const char *path, tex_image *out, char err[TEX_ERR_LEN])
{
    tex_image  img;
    tex_result r = tex_image_read(path, &img, err);
    out->pixels = NULL;
    if (r == TEX_OK)
        r = tex_image_convert(&img, TEX_TYPE_FLOAT, false, out, err);
    tex_image_free(&img);
    return r;
}
