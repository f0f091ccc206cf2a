/* PNG through libpng 1.6: tex_png_read() and tex_png_write().
 *
 * libpng reports errors by calling an error function that must not return;
 * ours records the message and longjmp()s back. Each setjmp() sits in a
 * function (png_decode(), png_encode()) that keeps all its state in a
 * struct owned by its caller and reads no local it changed after setjmp(),
 * so no local needs `volatile`; the caller frees whatever the struct holds,
 * on success or failure alike. Warnings are recorded, never printed. */
#define _POSIX_C_SOURCE 200809L /* mkstemp, fdopen, fileno, fchmod */
#include "tex_image.h"
#include "tex_io_internal.h"

#include <png.h>
#include <zlib.h>

#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define IHDR_TYPE 0x49484452u /* "IHDR" as libpng's png_get_io_chunk_type() gives it */

typedef struct png_job {
    jmp_buf     jmp;
    FILE       *f;
    png_structp png;
    png_infop   info;
    tex_image   img;  /* the image, or with `rows` one row of it */
    tex_rows_fn rows; /* tex_png_read_rows()'s consumer; NULL for a whole read */
    void       *rows_ctx;
    bool        armed;                /* jmp is set: on_error() may longjmp() */
    tex_result  code;                 /* TEX_OK until something fails */
    char       *err;                  /* the caller's TEX_ERR_LEN bytes */
    char        warning[TEX_ERR_LEN]; /* libpng's first warning; "" if none */
    bool        have_ihdr;            /* IHDR's fields as read, before libpng checks them */
    uint32_t    width, height;
    int         depth, color;
    /* Reading: where the chunk being read starts, to check its CRC when
     * libpng fails inside it (libpng checks it only at the chunk's end). */
    uint64_t pos;        /* bytes read so far */
    uint64_t file_size;  /* UINT64_MAX when unknown (not a regular file) */
    bool     in_chunk;   /* a chunk header has been read */
    uint64_t chunk_data; /* the file offset of its data */
    uint32_t chunk_len;
    png_byte chunk_type[4];
    /* What a read by rows may hold beyond its rows; NULL: no limit. */
    const tex__decode_budget *budget;
} png_job;

/* A chunk type as text; bytes that are not letters become '?'. */
static void
chunk_name(png_uint_32 type, char name[5])
{
    for (int i = 0; i < 4; i++) {
        int c = (int)(type >> (24 - 8 * i)) & 0xff;
        name[i] = (char)((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ? c : '?');
    }
    name[4] = '\0';
}

/* Reads the rest of the chunk being read when libpng failed, to see
 * whether it was damaged: 1 when its CRC is wrong, -1 when the file ends
 * first, 0 otherwise. zlib inflates IDAT data before libpng reaches the
 * CRC after it, so damaged image data fails as a zlib error first. */
static int
chunk_recheck(png_job *job)
{
    if (!job->in_chunk || fseek(job->f, (long)(job->chunk_data - 4), SEEK_SET) != 0)
        return 0;
    unsigned char buf[8192];
    uLong         crc = crc32(0, job->chunk_type, 4);
    uint32_t      left = job->chunk_len;
    if (fread(buf, 1, 4, job->f) != 4)
        return -1;
    while (left > 0) {
        size_t n = left < sizeof buf ? left : sizeof buf;
        if (fread(buf, 1, n, job->f) != n)
            return -1;
        crc = crc32(crc, buf, (uInt)n);
        left -= (uint32_t)n;
    }
    if (fread(buf, 1, 4, job->f) != 4)
        return -1;
    return png_get_uint_32(buf) != (png_uint_32)crc;
}

/* Turns libpng's error text into a result and one line, unless the read or
 * write callback already said what went wrong. */
static void
error_classify(png_job *job, const char *msg)
{
    if (job->code != TEX_OK)
        return;
    size_t     len = strlen(msg);
    const char crc[] = ": CRC error";
    bool       is_crc = len > sizeof crc - 1 && strcmp(msg + len - (sizeof crc - 1), crc) == 0;
    char       name[5];
    int        damage = is_crc ? 0 : chunk_recheck(job);
    chunk_name(png_get_uint_32(job->chunk_type), name);
    if (damage > 0) {
        job->code = TEX_ERR_CORRUPT;
        snprintf(job->err, TEX_ERR_LEN, "bad CRC in %s chunk", name);
    } else if (damage < 0) {
        job->code = TEX_ERR_CORRUPT;
        snprintf(job->err, TEX_ERR_LEN, "truncated: %s chunk ends early", name);
    } else if (strcmp(msg, "Invalid IHDR data") == 0) {
        /* png_check_IHDR() gives its reasons as warnings, then this. */
        if (job->have_ihdr) {
            tex_result r = tex_check_size(job->width, job->height, job->err);
            if (r == TEX_ERR_TOO_LARGE) {
                job->code = r;
                return;
            }
        }
        job->code = TEX_ERR_CORRUPT;
        const char in[] = " in IHDR"; /* "Invalid bit depth in IHDR": said once is enough */
        size_t     wlen = strlen(job->warning);
        if (wlen > sizeof in - 1 && strcmp(job->warning + wlen - (sizeof in - 1), in) == 0)
            job->warning[wlen - (sizeof in - 1)] = '\0';
        const char *why = job->warning[0] ? job->warning : "rejected by libpng";
        tex__io_message(job->err, "bad IHDR: ", why);
        size_t n = strlen(job->err);
        if (job->have_ihdr)
            snprintf(job->err + n, TEX_ERR_LEN - n,
                     " (%" PRIu32 "x%" PRIu32 ", bit depth %d, colour type %d)", job->width,
                     job->height, job->depth, job->color);
    } else if (is_crc) {
        job->code = TEX_ERR_CORRUPT;
        snprintf(job->err, TEX_ERR_LEN, "bad CRC in %.*s chunk", (int)(len - (sizeof crc - 1)),
                 msg);
    } else if (strcmp(msg, "IEND: out of place") == 0) { /* only before IDAT, after IHDR */
        job->code = TEX_ERR_CORRUPT;
        snprintf(job->err, TEX_ERR_LEN, "no image data: IEND comes before any IDAT chunk");
    } else if (strcmp(msg, "Not enough image data") == 0) {
        job->code = TEX_ERR_CORRUPT;
        snprintf(job->err, TEX_ERR_LEN, "truncated: IDAT image data ends early");
    } else if (strncmp(msg, "IDAT: ", 6) == 0) { /* zlib's complaint, CRC right */
        job->code = TEX_ERR_CORRUPT;
        snprintf(job->err, TEX_ERR_LEN, "damaged image data in IDAT chunk: %s", msg + 6);
    } else if (strstr(msg, "memory")) { /* "Out of memory", "Insufficient memory" */
        job->code = TEX_ERR_NOMEM;
        tex__io_message(job->err, "", msg);
    } else {
        job->code = TEX_ERR_CORRUPT;
        tex__io_message(job->err, "", msg);
    }
}

/* Must not return once armed. Before that (inside png_create_*_struct(),
 * which has its own fallback) returning lets libpng fail the call. */
static void
on_error(png_structp png, png_const_charp msg)
{
    png_job *job = png_get_error_ptr(png);
    error_classify(job, msg ? msg : "unknown libpng error");
    if (job->armed)
        longjmp(job->jmp, 1);
}

static void
on_warning(png_structp png, png_const_charp msg)
{
    png_job *job = png_get_error_ptr(png);
    if (!job->warning[0] && msg)
        snprintf(job->warning, sizeof job->warning, "%s", msg);
}

static void
on_read(png_structp png, png_bytep data, size_t n)
{
    png_job *job = png_get_io_ptr(png);
    size_t   got = fread(data, 1, n, job->f);
    if (got == n) {
        png_uint_32 loc = png_get_io_state(png) & PNG_IO_MASK_LOC;
        if (loc == PNG_IO_CHUNK_HDR && n == 8) {
            job->in_chunk = true;
            job->chunk_len = png_get_uint_32(data);
            memcpy(job->chunk_type, data + 4, 4);
            job->chunk_data = job->pos + 8;
            /* A chunk longer than what is left of the file (with its CRC)
             * is cut short: say so now, before libpng allocates the length
             * it claims (a 100-byte file can claim a 1 GB text chunk). */
            if (job->chunk_data > job->file_size ||
                (uint64_t)job->chunk_len + 4 > job->file_size - job->chunk_data) {
                char name[5];
                chunk_name(png_get_uint_32(data + 4), name);
                job->code = TEX_ERR_CORRUPT;
                snprintf(job->err, TEX_ERR_LEN, "truncated: %s chunk ends early", name);
                png_error(png, job->err);
            }
        }
        job->pos += n;
        /* Keep IHDR's size, to report an oversized image as such when
         * libpng rejects it (png_set_user_limits()). */
        if (loc == PNG_IO_CHUNK_DATA && png_get_io_chunk_type(png) == IHDR_TYPE && n >= 8 &&
            !job->have_ihdr) {
            job->width = png_get_uint_32(data);
            job->height = png_get_uint_32(data + 4);
            job->depth = n > 8 ? data[8] : -1;
            job->color = n > 9 ? data[9] : -1;
            job->have_ihdr = true;
        }
        return;
    }
    if (ferror(job->f)) {
        job->code = TEX_ERR_OPEN;
        snprintf(job->err, TEX_ERR_LEN, "cannot read: %s", strerror(errno));
        png_error(png, job->err);
    }
    char        name[5];
    png_uint_32 loc = png_get_io_state(png) & PNG_IO_MASK_LOC;
    chunk_name(png_get_io_chunk_type(png), name);
    job->code = TEX_ERR_CORRUPT;
    if (loc == PNG_IO_CHUNK_DATA)
        snprintf(job->err, TEX_ERR_LEN, "truncated: %s chunk ends early", name);
    else if (loc == PNG_IO_CHUNK_CRC)
        snprintf(job->err, TEX_ERR_LEN, "truncated: %s chunk ends before its CRC", name);
    else if (loc == PNG_IO_CHUNK_HDR && png_get_io_chunk_type(png) != 0)
        snprintf(job->err, TEX_ERR_LEN, "truncated: file ends after the %s chunk", name);
    else
        snprintf(job->err, TEX_ERR_LEN, "truncated: file ends before the IHDR chunk");
    png_error(png, job->err);
}

/* Checks the 8-byte signature ourselves, to tell "not a PNG" from a PNG
 * that is damaged. */
static tex_result
signature_check(FILE *f, char err[TEX_ERR_LEN])
{
    png_byte sig[8];
    size_t   n = fread(sig, 1, sizeof sig, f);
    if (n < sizeof sig && ferror(f)) {
        snprintf(err, TEX_ERR_LEN, "cannot read: %s", strerror(errno));
        return TEX_ERR_OPEN;
    }
    if (n == 0) {
        snprintf(err, TEX_ERR_LEN, "empty file: not a PNG file");
        return TEX_ERR_FORMAT;
    }
    if (png_sig_cmp(sig, 0, n) == 0) {
        if (n == sizeof sig)
            return TEX_OK;
        snprintf(err, TEX_ERR_LEN, "truncated: file ends inside the PNG signature");
        return TEX_ERR_CORRUPT;
    }
    /* "\x89PNG" then damage, as when a text-mode transfer rewrites line ends. */
    if (n == sizeof sig && png_sig_cmp(sig, 0, 4) == 0) {
        snprintf(err, TEX_ERR_LEN, "damaged PNG signature");
        return TEX_ERR_CORRUPT;
    }
    snprintf(err, TEX_ERR_LEN, "not a PNG file");
    return TEX_ERR_FORMAT;
}

static bool
host_little_endian(void)
{
    const uint16_t one = 1;
    unsigned char  b;
    memcpy(&b, &one, 1);
    return b == 1;
}

/* A read by rows of an interlaced file holds the whole image: charged to
 * the budget before it is allocated. */
static tex_result
whole_image_reserve(png_job *job, uint32_t width, uint32_t height, int channels, tex_type type)
{
    if (!job->budget)
        return TEX_OK;
    char what[64];
    snprintf(what, sizeof what, "interlaced PNG %" PRIu32 "x%" PRIu32, width, height);
    uint64_t bytes = (uint64_t)width * height * (uint64_t)channels * tex_type_size(type);
    return job->budget->reserve(job->budget->ctx, bytes, what, job->err);
}

/* Everything libpng does for a read, after the signature. On failure
 * job->code says why; the caller frees what job holds. */
static void
png_decode(png_job *job)
{
    if (setjmp(job->jmp))
        return;
    job->armed = true;
    png_structp png = job->png;
    png_infop   info = job->info;

    png_set_read_fn(png, job, on_read);
    png_set_sig_bytes(png, 8);
    png_set_user_limits(png, TEX_MAX_DIM, TEX_MAX_DIM);
    /* Ancillary chunks are buffered whole, and compressed ones (iCCP, zTXt,
     * iTXt) inflated; past this a chunk is skipped with a warning. Image
     * data (IDAT) is streamed row by row and not bounded by it. */
    png_set_chunk_malloc_max(png, TEX_PNG_MAX_CHUNK_BYTES);
    png_set_benign_errors(png, 1); /* e.g. extra data after the image: warn, keep going */
    png_read_info(png, info);

    png_uint_32 width = png_get_image_width(png, info), height = png_get_image_height(png, info);
    job->code = tex_check_size(width, height, job->err); /* before anything is allocated */
    if (job->code != TEX_OK)
        return;

    int color = png_get_color_type(png, info), depth = png_get_bit_depth(png, info);
    if (color == PNG_COLOR_TYPE_PALETTE)
        png_set_palette_to_rgb(png);
    if (color == PNG_COLOR_TYPE_GRAY && depth < 8)
        png_set_expand_gray_1_2_4_to_8(png); /* scaled: 1 -> 255, 3 -> 255, 15 -> 255 */
    if (png_get_valid(png, info, PNG_INFO_tRNS))
        png_set_tRNS_to_alpha(png);
    if (depth == 16 && host_little_endian())
        png_set_swap(png);
    int passes = png_set_interlace_handling(png);
    png_read_update_info(png, info);

    int      channels = png_get_channels(png, info);
    tex_type type = png_get_bit_depth(png, info) == 16 ? TEX_TYPE_U16 : TEX_TYPE_U8;
    bool     row_at_a_time = job->rows && passes == 1;
    if (job->rows && !row_at_a_time)
        job->code = whole_image_reserve(job, width, height, channels, type);
    if (job->code == TEX_OK)
        job->code = tex_image_alloc(&job->img, width, row_at_a_time ? 1 : height,
                                    (uint32_t)channels, type, job->err);
    if (job->code != TEX_OK)
        return;
    job->img.srgb = true;
    size_t stride = (size_t)width * (size_t)channels * tex_type_size(type);
    if (png_get_rowbytes(png, info) != stride) { /* a transform we did not ask for */
        job->code = TEX_ERR_UNSUPPORTED;
        snprintf(job->err, TEX_ERR_LEN, "unexpected row size %zu after decoding, not %zu",
                 png_get_rowbytes(png, info), stride);
        return;
    }
    tex_image shape = job->img;
    shape.height = height;
    shape.pixels = NULL;
    png_bytep pixels = job->img.pixels;
    if (row_at_a_time) {
        for (png_uint_32 y = 0; y < height && job->code == TEX_OK; y++) {
            png_read_row(png, pixels, NULL);
            job->code = job->rows(job->rows_ctx, &shape, y, pixels, job->err);
        }
    } else {
        /* Interlaced files: each pass fills in more of the same rows. */
        for (int pass = 0; pass < passes; pass++)
            for (png_uint_32 y = 0; y < height; y++)
                png_read_row(png, pixels + y * stride, NULL);
        for (png_uint_32 y = 0; job->rows && y < height && job->code == TEX_OK; y++)
            job->code = job->rows(job->rows_ctx, &shape, y, pixels + y * stride, job->err);
    }
    if (job->code == TEX_OK)
        png_read_end(png, NULL); /* checks the rest of the file, up to IEND */
}

/* tex_png_read() with rows NULL, tex_png_read_rows() with a consumer and
 * out NULL; the file open as fd, or else path (tex__io_read_open()). */
static tex_result
png_read(const char *path, int fd, tex_rows_fn rows, void *rows_ctx,
         const tex__decode_budget *budget, tex_image *out, char err[TEX_ERR_LEN])
{
    FILE      *f;
    tex_result r = tex__io_read_open(path, fd, out, err, &f);
    if (r != TEX_OK)
        return r;
    r = signature_check(f, err);
    if (r != TEX_OK) {
        fclose(f);
        return r;
    }

    struct stat st;
    uint64_t    file_size =
        fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) ? (uint64_t)st.st_size : UINT64_MAX;
    if (file_size != UINT64_MAX) { /* a plain PNG without libpng (io_png_fast.c) */
        bool      taken;
        tex_image whole = {0};
        r = tex__png_fast_rows(fileno(f), file_size, rows ? rows : tex__rows_collect,
                               rows ? rows_ctx : &whole, budget, &taken, err);
        if (taken)
            return tex__io_read_close(f, r, &whole, out);
    }

    png_job *job = tex__io_read_state(sizeof *job, f, err);
    if (!job)
        return TEX_ERR_NOMEM;
    job->f = f;
    job->err = err;
    job->rows = rows;
    job->rows_ctx = rows_ctx;
    job->budget = budget;
    job->pos = 8; /* the signature */
    job->file_size = file_size;
    job->png = png_create_read_struct(PNG_LIBPNG_VER_STRING, job, on_error, on_warning);
    job->info = job->png ? png_create_info_struct(job->png) : NULL;
    if (job->info)
        png_decode(job);
    else
        error_classify(job, "out of memory");

    png_destroy_read_struct(&job->png, &job->info, NULL);
    r = tex__io_read_close(f, job->code, &job->img, out);
    free(job);
    return r;
}

tex_result
tex_png_read(const char *path, tex_image *out, char err[TEX_ERR_LEN])
{
    return png_read(path, -1, NULL, NULL, NULL, out, err);
}

tex_result
tex_png_read_rows(const char *path, tex_rows_fn fn, void *ctx, char err[TEX_ERR_LEN])
{
    return png_read(path, -1, fn, ctx, NULL, NULL, err);
}

tex_result
tex__png_read_fd(int fd, tex_image *out, char err[TEX_ERR_LEN])
{
    return png_read(NULL, fd, NULL, NULL, NULL, out, err);
}

tex_result
tex__png_read_rows(int fd, tex_rows_fn fn, void *ctx, const tex__decode_budget *budget,
                   char err[TEX_ERR_LEN])
{
    return png_read(NULL, fd, fn, ctx, budget, NULL, err);
}

/* ---- writing ---- */

static void
on_write(png_structp png, png_bytep data, size_t n)
{
    png_job *job = png_get_io_ptr(png);
    if (fwrite(data, 1, n, job->f) != n) {
        job->code = TEX_ERR_WRITE;
        snprintf(job->err, TEX_ERR_LEN, "cannot write: %s", strerror(errno));
        png_error(png, job->err);
    }
}

static void
on_flush(png_structp png)
{
    png_job *job = png_get_io_ptr(png);
    if (fflush(job->f) != 0) {
        job->code = TEX_ERR_WRITE;
        snprintf(job->err, TEX_ERR_LEN, "cannot write: %s", strerror(errno));
        png_error(png, job->err);
    }
}

/* Everything libpng does for a write; img has been checked; text[0..ntext)
 * as tEXt chunks. */
static void
png_encode(png_job *job, const tex_image *img, const tex_png_text *text, size_t ntext)
{
    if (setjmp(job->jmp))
        return;
    job->armed = true;
    static const int color[] = {PNG_COLOR_TYPE_GRAY, PNG_COLOR_TYPE_GRAY_ALPHA, PNG_COLOR_TYPE_RGB,
                                PNG_COLOR_TYPE_RGB_ALPHA};
    png_structp      png = job->png;
    int              depth = img->type == TEX_TYPE_U16 ? 16 : 8;

    png_set_write_fn(png, job, on_write, on_flush);
    png_set_IHDR(png, job->info, img->width, img->height, depth, color[img->nchannels - 1],
                 PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_set_sRGB(png, job->info, PNG_sRGB_INTENT_PERCEPTUAL);
    for (size_t i = 0; i < ntext; i++) {
        png_text t = {.compression = PNG_TEXT_COMPRESSION_NONE,
                      .key = (png_charp)text[i].key,
                      .text = (png_charp)text[i].value,
                      .text_length = strlen(text[i].value)};
        png_set_text(png, job->info, &t, 1); /* copies it */
    }
    /* zlib level 1: far less time than the default (6) on a noisy render,
     * for a slightly larger file; what a renderer's output, written once
     * and read by image viewers, wants. */
    png_set_compression_level(png, 1);
    png_write_info(png, job->info);
    if (depth == 16 && host_little_endian())
        png_set_swap(png); /* libpng copies each row before swapping: img stays as it is */
    size_t stride = (size_t)img->width * img->nchannels * tex_type_size(img->type);
    for (uint32_t y = 0; y < img->height; y++)
        png_write_row(png, (png_const_bytep)img->pixels + y * stride);
    png_write_end(png, NULL);
}

tex_result
tex_png_write(const char *path, const tex_image *img, char err[TEX_ERR_LEN])
{
    return tex_png_write_text(path, img, NULL, 0, err);
}

tex_result
tex_png_write_text(const char *path, const tex_image *img, const tex_png_text *text, size_t ntext,
                   char err[TEX_ERR_LEN])
{
    err[0] = '\0';
    if (!path || !img || !img->pixels) {
        snprintf(err, TEX_ERR_LEN, "no file name or no image");
        return TEX_ERR_INVALID;
    }
    for (size_t i = 0; i < ntext; i++) {
        size_t n = text[i].key ? strlen(text[i].key) : 0;
        if (n < 1 || n > 79 || !text[i].value) {
            snprintf(err, TEX_ERR_LEN, "text %zu: a key of 1-79 bytes and a value", i);
            return TEX_ERR_INVALID;
        }
    }
    if ((img->type != TEX_TYPE_U8 && img->type != TEX_TYPE_U16) || img->nchannels < 1 ||
        img->nchannels > 4) {
        snprintf(err, TEX_ERR_LEN, "%u channels of type %d: PNG takes 1-4 channels of U8 or U16",
                 img->nchannels, (int)img->type);
        return TEX_ERR_INVALID;
    }
    tex_result r = tex_check_size(img->width, img->height, err);
    if (r != TEX_OK)
        return r == TEX_ERR_TOO_LARGE ? r : TEX_ERR_INVALID;

    tex_replace out;
    if ((r = tex_replace_begin(&out, path, err)) != TEX_OK)
        return r;
    png_job *job = calloc(1, sizeof *job);
    if (!job) {
        snprintf(err, TEX_ERR_LEN, "out of memory");
        tex_replace_end(&out, false, err);
        return TEX_ERR_NOMEM;
    }
    job->f = out.f;
    job->err = err;
    job->png = png_create_write_struct(PNG_LIBPNG_VER_STRING, job, on_error, on_warning);
    job->info = job->png ? png_create_info_struct(job->png) : NULL;
    if (job->info)
        png_encode(job, img, text, ntext);
    else
        error_classify(job, "out of memory");
    png_destroy_write_struct(&job->png, &job->info);
    if (job->code == TEX_ERR_CORRUPT) /* libpng refused something: our fault, not the file's */
        job->code = TEX_ERR_WRITE;

    r = tex_replace_end(&out, job->code == TEX_OK, err);
    if (job->code != TEX_OK)
        r = job->code;
    free(job);
    return r;
}
