/* What the image codecs share (tex_io_internal.h). */
#define _POSIX_C_SOURCE 200809L /* fileno */
#include "tex_io_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int
tex__io_read_begin(const char *path, int fd, tex_image *out, char err[TEX_ERR_LEN], tex_result *r)
{
    if (out)
        *out = (tex_image){0};
    err[0] = '\0';
    *r = TEX_OK;
    if (fd >= 0)
        return fd;
    if (!path) {
        snprintf(err, TEX_ERR_LEN, "no file name");
        *r = TEX_ERR_INVALID;
        return -1;
    }
    if ((fd = tex_open_regular(path, err)) < 0)
        *r = TEX_ERR_OPEN;
    return fd;
}

tex_result
tex__io_read_open(const char *path, int fd, tex_image *out, char err[TEX_ERR_LEN], FILE **f)
{
    tex_result r;
    int        d = tex__io_read_begin(path, fd, out, err, &r);
    *f = NULL;
    if (d < 0)
        return r;
    if (d == fd) {
        /* A descriptor of our own on the caller's open file (which stays
         * theirs), at its start: no second open, nor its checks, by name. */
        d = fcntl(fd, F_DUPFD_CLOEXEC, 0);
        if (d < 0 || lseek(d, 0, SEEK_SET) != 0) {
            snprintf(err, TEX_ERR_LEN, "cannot open: %s", strerror(errno));
            if (d >= 0)
                close(d);
            return TEX_ERR_OPEN;
        }
    }
    fd = d;
    FILE *file = fdopen(fd, "rb");
    if (!file) {
        snprintf(err, TEX_ERR_LEN, "cannot open: %s", strerror(errno));
        close(fd);
        return TEX_ERR_OPEN;
    }
    *f = file;
    return TEX_OK;
}

void *
tex__io_read_state(size_t size, FILE *f, char err[TEX_ERR_LEN])
{
    void *state = calloc(1, size);
    if (!state) {
        fclose(f);
        snprintf(err, TEX_ERR_LEN, "out of memory");
    }
    return state;
}

tex_result
tex__io_read_close(FILE *f, tex_result code, tex_image *img, tex_image *out)
{
    fclose(f);
    if (code == TEX_OK && out)
        *out = *img;
    else
        tex_image_free(img);
    return code;
}

void
tex__io_message(char err[TEX_ERR_LEN], const char *prefix, const char *msg)
{
    int n = snprintf(err, TEX_ERR_LEN, "%s", prefix);
    if (n < 0 || n >= TEX_ERR_LEN)
        return;
    snprintf(err + n, (size_t)(TEX_ERR_LEN - n), "%s", msg);
    char *m = err + n;
    if (m[0] >= 'A' && m[0] <= 'Z' && m[1] >= 'a' && m[1] <= 'z')
        m[0] = (char)(m[0] - 'A' + 'a');
    for (char *p = m; *p; p++) /* one line */
        if (*p == '\n' || *p == '\r')
            *p = ' ';
}

tex_result
tex__rows_collect(void *ctx, const tex_image *shape, uint32_t y, const void *row,
                  char err[TEX_ERR_LEN])
{
    tex_image *img = ctx;
    size_t     stride = (size_t)shape->width * shape->nchannels * tex_type_size(shape->type);
    if (y == 0) {
        tex_result r =
            tex_image_alloc(img, shape->width, shape->height, shape->nchannels, shape->type, err);
        if (r != TEX_OK)
            return r;
        img->srgb = shape->srgb;
        img->associated = shape->associated;
    }
    memcpy((char *)img->pixels + y * stride, row, stride);
    return TEX_OK;
}

bool
tex__pio_all(int fd, bool write, void *buf, size_t n, uint64_t at)
{
    for (size_t done = 0; done < n;) {
        char   *p = (char *)buf + done;
        off_t   o = (off_t)(at + done);
        ssize_t k = write ? pwrite(fd, p, n - done, o) : pread(fd, p, n - done, o);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            if (k == 0)
                errno = 0;
            return false;
        }
        done += (size_t)k;
    }
    return true;
}

/* Here rather than in io_tiff.c: the sniffer (io_read.c) must know a TIFF
 * without loading the TIFF module (tiff_module.h). */
bool
tex__tiff_magic(const unsigned char m[4])
{
    return (m[0] == 'I' && m[1] == 'I' && (m[2] == 42 || m[2] == 43) && m[3] == 0) ||
           (m[0] == 'M' && m[1] == 'M' && m[2] == 0 && (m[3] == 42 || m[3] == 43));
}
