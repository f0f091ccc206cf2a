/* Private to the image codecs in texture/ (io_png.c, io_jpeg.c): the steps every
 * read shares (opening the file, the decoder's state, handing the image
 * over), and a library's message made into one of ours. Kept apart from
 * texture_internal.h so that the codecs need only tex_image.h. */
#ifndef TEX_IO_INTERNAL_H
#define TEX_IO_INTERNAL_H

#include "tex_image.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* The start of every tex_*_read(): clears *out (unless out is NULL: a read
 * by rows) and err, and gives the descriptor to read: fd itself where fd
 * >= 0 (the caller's, opened by tex_open_regular() and left open), else
 * `path` opened by tex_open_regular(), yours to close. -1 with *r and err
 * set: a NULL path is TEX_ERR_INVALID ("no file name"); a file that cannot
 * be opened, or is not a regular file (a directory, a FIFO, a device),
 * TEX_ERR_OPEN ("cannot open: REASON"). */
int tex__io_read_begin(const char *path, int fd, tex_image *out, char err[TEX_ERR_LEN],
                       tex_result *r);

/* tex__io_read_begin(), then a stdio stream of the file at its start (a
 * PNG read: io_png.c; a JPEG is read by descriptor, as io_jpeg.c says),
 * over a duplicate of the caller's descriptor or over path's: on TEX_OK
 * *f is yours, to close with tex__io_read_close() or fclose(). Otherwise
 * *f is NULL and err says why, as tex__io_read_begin() says. Safe on any
 * thread. */
tex_result tex__io_read_open(const char *path, int fd, tex_image *out, char err[TEX_ERR_LEN],
                             FILE **f);

/* A decoder's state for the read of f: `size` zeroed bytes, yours to
 * free(). Out of memory: NULL, with f closed and "out of memory" in err
 * (the read then returns TEX_ERR_NOMEM). */
void *tex__io_read_state(size_t size, FILE *f, char err[TEX_ERR_LEN]);

/* The end of every tex_*_read() that opened f: closes f and hands the
 * decoded image over. On code == TEX_OK *out takes *img (the pixels are the
 * caller's now); otherwise, or when out is NULL (a read by rows, whose
 * img is its row buffer), img's pixels are freed and *out stays as
 * tex__io_read_open() left it. Returns code. */
tex_result tex__io_read_close(FILE *f, tex_result code, tex_image *img, tex_image *out);

/* A tex_rows_fn that gathers the rows into the tex_image ctx points to
 * (zeroed beforehand; allocated at row 0): a whole image from a reader by
 * rows (TIFF, the PNG fast path). In io_shared.c, below the codecs and
 * io_read.c alike, so that calls between them point one way. */
tex_result tex__rows_collect(void *ctx, const tex_image *shape, uint32_t y, const void *row,
                             char err[TEX_ERR_LEN]);

/* What a read by rows may hold beyond its rows, charged before it is
 * allocated: an interlaced PNG's whole image (Adam7's passes fill rows all
 * over it), a multi-scan JPEG's coefficients (libjpeg keeps every block of
 * a progressive file until its last scan), a plain PNG read whole by the
 * fast path (its file and rows). `reserve` is called at most once per
 * read, as a rule, with the bytes and what needs them ("interlaced PNG
 * 16384x16384"); TEX_OK grants them until the read returns (the caller of
 * the read gives them back then), anything else fails the read with that
 * result and err as `reserve` wrote it (but for the PNG fast path's ask,
 * which only sends a plain PNG on to libpng, a row at a time; the file
 * may then be charged twice, should it be rewritten meanwhile and turn
 * out interlaced). Such a file is refused, not read
 * smaller: libjpeg's scale_denom shrinks the output, not the coefficients,
 * and Adam7's first pass alone would be every eighth texel of every eighth
 * row, aliased, and a picture that changed with the budget. */
typedef struct tex__decode_budget {
    tex_result (*reserve)(void *ctx, uint64_t bytes, const char *what, char err[TEX_ERR_LEN]);
    void *ctx;
} tex__decode_budget;

/* tex_png_read_rows() and tex_jpeg_read_rows() of the file open as fd (as
 * tex__io_read_open() takes it: the caller's, left open), under a budget
 * (NULL: no limit but the image size limits). */
tex_result tex__png_read_rows(int fd, tex_rows_fn fn, void *ctx, const tex__decode_budget *budget,
                              char err[TEX_ERR_LEN]);
tex_result tex__jpeg_read_rows(int fd, tex_rows_fn fn, void *ctx, const tex__decode_budget *budget,
                               char err[TEX_ERR_LEN]);
/* Tests only: every read of a JPEG's bytes at or past `offset` fails with
 * EIO, as a failing disk's would (UINT64_MAX: none, as at start). */
void tex__jpeg_fail_reads_from(uint64_t offset);

/* tex_png_read() and tex_jpeg_read() of the file open as fd (the caller's). */
tex_result tex__png_read_fd(int fd, tex_image *out, char err[TEX_ERR_LEN]);
tex_result tex__jpeg_read_fd(int fd, tex_image *out, char err[TEX_ERR_LEN]);

/* The PNG fast path (io_png_fast.c): a plain PNG (8- or 16-bit grey,
 * grey+alpha, RGB or RGBA, or 8-bit palette; not interlaced, nothing in it
 * libpng would read otherwise than we do) read from fd, file_size bytes, inflated by libdeflate,
 * its rows handed to fn as tex_png_read_rows() hands them; the budget (NULL: none) is charged the
 * file and its inflated rows. *taken false: refused before any row was handed over (anything else,
 * or RT_PNG_FAST=0), to be read with libpng; true: the result is the read's. */
tex_result tex__png_fast_rows(int fd, uint64_t file_size, tex_rows_fn fn, void *ctx,
                              const tex__decode_budget *budget, bool *taken, char err[TEX_ERR_LEN]);

/* Writes prefix + msg into err as one line: a library's message (libpng's,
 * libjpeg's) made to read like ours. msg's first letter is lower-cased
 * unless it starts a capitalised word such as "IDAT" or "JPEG"; line breaks
 * become spaces; the whole is cut to TEX_ERR_LEN - 1 bytes. */
void tex__io_message(char err[TEX_ERR_LEN], const char *prefix, const char *msg);

/* All n bytes at offset `at` of fd, written from buf (write) or read into
 * it: pwrite()/pread() again after a short transfer or EINTR. False when
 * one fails (errno says why) or transfers nothing (errno 0: the end of the
 * file, or no room). The spill file and the TIFF writer's levels. */
bool tex__pio_all(int fd, bool write, void *buf, size_t n, uint64_t at);

/* Whether the CPU converts halves in hardware (F16C), asked once (mip.c);
 * the code built for it is chosen by this at run time. Any thread. */
bool tex__cpu_f16c(void);

/* Whether the first 4 bytes of a file are a TIFF's: little- or big-endian,
 * classic (42) or BigTIFF (43). */
bool tex__tiff_magic(const unsigned char m[4]);

#endif
