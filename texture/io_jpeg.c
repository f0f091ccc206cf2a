/* JPEG through libjpeg-turbo: tex_jpeg_read(), tex_jpeg_read_rows().
 *
 * libjpeg reports a fatal error by calling error_exit(), which must not
 * return; ours records the message and longjmp()s back. As in io_png.c, the
 * setjmp() sits in a function (jpeg_decode()) that keeps its state in a
 * struct owned by its caller and reads no local it changed after setjmp(),
 * so no local needs `volatile`.
 *
 * Damaged data is only a warning to libjpeg: at the end of the input it
 * inserts an EOI marker, and a broken entropy-coded segment leaves blocks
 * grey. A texture must not silently come out half grey, so the warnings
 * that mean lost pixels (see pixels_lost()) make the read fail; the others
 * (an unknown JFIF version, extraneous bytes before a marker) are ignored.
 * Arithmetic-coded files, whose decoder gives no such warnings, are not
 * read. Nothing is ever printed. */
#include "tex_image.h"
#include "tex_io_internal.h"

#include <stdio.h> /* before jpeglib.h, which needs FILE and size_t */

#include <jpeglib.h>

#include <jerror.h> /* after jpeglib.h: its message list depends on JPEG_LIB_VERSION */

#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The file's bytes for libjpeg, by pread() from a descriptor in blocks of
 * SOURCE_BYTES: a stdio stream over it cost system calls of its own (a
 * duplicate descriptor, its flags, a stat, and 4 KiB reads), most of the
 * calls a small texture's decode made. At the end of the file, or on a read
 * error, it does what libjpeg's own sources do: a warning (JWRN_JPEG_EOF)
 * and an EOI marker; an empty file is JERR_INPUT_EMPTY. */
enum { SOURCE_BYTES = 1 << 16 };

typedef struct fd_source {
    struct jpeg_source_mgr pub; /* first: libjpeg hands callbacks a pointer to it */
    int                    fd;
    uint64_t               at;         /* the file offset of the next block */
    bool                   started;    /* a byte has been read */
    int                    read_errno; /* a read failed: why; 0: none did */
    JOCTET                *buf;        /* SOURCE_BYTES */
} fd_source;

typedef struct jpeg_job {
    struct jpeg_error_mgr         pub; /* first: libjpeg hands callbacks a pointer to it */
    jmp_buf                       jmp;
    struct jpeg_decompress_struct cinfo;
    fd_source                     src;
    tex_image                     img;       /* a whole read's image (tex__rows_collect()) */
    unsigned char                *row_block; /* the one row's memory */
    tex_rows_fn                   rows;      /* where each row goes */
    void                         *rows_ctx;
    tex_result                    code; /* TEX_OK until something fails */
    char                         *err;  /* the caller's TEX_ERR_LEN bytes */
    int                           lost; /* the first warning that means lost pixels; 0: none */
    char                          lost_msg[JMSG_LENGTH_MAX]; /* its text */
    char last_msg[JMSG_LENGTH_MAX]; /* output_message()'s text, never printed */
    /* What a read by rows may hold beyond its rows; NULL: no limit. */
    const tex__decode_budget *budget;
} jpeg_job;

/* Warnings after which some pixels are not what the file meant. */
static bool
pixels_lost(int code)
{
    switch (code) {
    case JWRN_JPEG_EOF:      /* "Premature end of JPEG file": the rest is grey */
    case JWRN_HIT_MARKER:    /* a scan ends before its last block */
    case JWRN_HUFF_BAD_CODE: /* entropy-coded data is garbage */
    case JWRN_MUST_RESYNC:   /* a restart marker is missing: blocks skipped */
        return true;
    default:
        return false;
    }
}

static void
on_output_message(j_common_ptr cinfo)
{
    jpeg_job *job = (jpeg_job *)cinfo->err;
    (*cinfo->err->format_message)(cinfo, job->last_msg);
}

static void
on_emit_message(j_common_ptr cinfo, int level)
{
    if (level >= 0) /* trace messages */
        return;
    jpeg_job *job = (jpeg_job *)cinfo->err;
    cinfo->err->num_warnings++;
    if (!job->lost && pixels_lost(cinfo->err->msg_code)) {
        job->lost = cinfo->err->msg_code;
        (*cinfo->err->format_message)(cinfo, job->lost_msg);
    }
}

static void
on_error_exit(j_common_ptr cinfo)
{
    jpeg_job *job = (jpeg_job *)cinfo->err;
    char      msg[JMSG_LENGTH_MAX];
    (*cinfo->err->format_message)(cinfo, msg);
    if (job->src.read_errno) {
        job->code = TEX_ERR_OPEN;
        snprintf(job->err, TEX_ERR_LEN, "cannot read: %s", strerror(job->src.read_errno));
    } else if (job->lost == JWRN_JPEG_EOF) {
        /* The inserted EOI made the stream look wrong: say why. */
        job->code = TEX_ERR_CORRUPT;
        tex__io_message(job->err, "truncated: ", job->lost_msg);
    } else {
        switch (cinfo->err->msg_code) {
        case JERR_INPUT_EMPTY:
            job->code = TEX_ERR_FORMAT;
            snprintf(job->err, TEX_ERR_LEN, "empty file: not a JPEG file");
            break;
        case JERR_NO_SOI: /* "Not a JPEG file: starts with 0x89 0x50" */
            job->code = TEX_ERR_FORMAT;
            tex__io_message(job->err, "", msg);
            break;
        case JERR_OUT_OF_MEMORY:
            job->code = TEX_ERR_NOMEM;
            tex__io_message(job->err, "", msg);
            break;
        case JERR_NO_BACKING_STORE: /* over max_memory_to_use (coefficients_reserve()) */
            job->code = TEX_ERR_TOO_LARGE;
            snprintf(job->err, TEX_ERR_LEN,
                     "JPEG needs more memory to decode than the %ld bytes it was granted",
                     cinfo->mem->max_memory_to_use);
            break;
        case JERR_BAD_PRECISION:   /* 12- or 16-bit samples */
        case JERR_SOF_UNSUPPORTED: /* lossless, hierarchical */
        case JERR_CONVERSION_NOTIMPL:
            job->code = TEX_ERR_UNSUPPORTED;
            tex__io_message(job->err, "", msg);
            break;
        default:
            job->code = TEX_ERR_CORRUPT;
            tex__io_message(job->err, "", msg);
            break;
        }
    }
    longjmp(job->jmp, 1);
}

/* libjpeg's other allocations for one decode, which count against
 * max_memory_to_use beside the coefficients: a few rows of MCUs at each
 * stage (upsampling, colour conversion) and tables; between 1 and 4 MiB
 * at the widest JPEG there is (65500 RGB, tex_budget.jpeg_wide), so a
 * margin, not an estimate. */
#define JPEG_WORKING_BYTES ((long)16 << 20)

/* Whether the file can hold a whole first scan of a multi-scan image,
 * whose coefficient array libjpeg allocates, and zeroes, before it reads a
 * byte of any scan: a scan codes at least one bit for each block of each
 * component it covers (a DC code is a bit at least), so a file of fewer
 * bytes than the fewest blocks of any component, in bits, ends inside its
 * first scan and would fail as cut short, but only after the allocation:
 * 1.5 GB for 120 bytes declaring 16k x 16k (fuzz/fuzz_jpeg.c), with no
 * budget in the tools' reads. False with the job's error. */
static bool
scans_fit(jpeg_job *job, uint64_t fewest_blocks)
{
    struct stat st;
    if (fstat(job->src.fd, &st) != 0 || (uint64_t)st.st_size >= fewest_blocks / 8)
        return true; /* a size unknown: the decode finds out */
    job->code = TEX_ERR_CORRUPT;
    snprintf(
        job->err, TEX_ERR_LEN,
        "truncated: a multi-scan JPEG of %ux%u needs at least %" PRIu64 " bytes, the file has %lld",
        job->cinfo.image_width, job->cinfo.image_height, fewest_blocks / 8, (long long)st.st_size);
    return false;
}

/* A file of several scans (progressive, or components in scans of their
 * own) is decoded from a coefficient array of the whole image, which
 * jpeg_start_decompress() allocates: refused where the file is too short
 * to fill it (scans_fit()), and charged to the budget, where there is one,
 * first. Every read tells libjpeg to stay within that array and a margin
 * (max_memory_to_use: past it libjpeg would want a backing store, which
 * this build refuses), should our sum ever fall short of libjpeg's own. */
static tex_result
coefficients_reserve(jpeg_job *job)
{
    struct jpeg_decompress_struct *cinfo = &job->cinfo;
    if (!cinfo->progressive_mode && cinfo->comps_in_scan == cinfo->num_components) {
        cinfo->mem->max_memory_to_use = JPEG_WORKING_BYTES; /* one scan: no coefficient array */
        return TEX_OK;
    }
    uint64_t bytes = 0, fewest = UINT64_MAX;
    for (int c = 0; c < cinfo->num_components; c++) {
        const jpeg_component_info *comp = &cinfo->comp_info[c];
        uint64_t blocks = (uint64_t)comp->width_in_blocks * comp->height_in_blocks;
        fewest = blocks < fewest ? blocks : fewest;
        /* jdcoefct.c rounds each array up to whole MCUs. */
        uint64_t w = (comp->width_in_blocks + comp->h_samp_factor - 1) / comp->h_samp_factor *
                     comp->h_samp_factor;
        uint64_t h = (comp->height_in_blocks + comp->v_samp_factor - 1) / comp->v_samp_factor *
                     comp->v_samp_factor;
        bytes += w * h * DCTSIZE2 * sizeof(JCOEF);
    }
    if (!scans_fit(job, fewest))
        return job->code;
    char what[64];
    snprintf(what, sizeof what, "%s JPEG %ux%u",
             cinfo->progressive_mode ? "progressive" : "multi-scan", cinfo->image_width,
             cinfo->image_height);
    tex_result r =
        job->budget ? job->budget->reserve(job->budget->ctx, bytes, what, job->err) : TEX_OK;
    if (r == TEX_OK)
        cinfo->mem->max_memory_to_use = (long)(bytes + JPEG_WORKING_BYTES);
    return r;
}

/* Set by tests only (tex__jpeg_fail_reads_from()). Relaxed: a test sets it
 * before the reads it means, on the thread that makes them, and no other
 * memory hangs on it. */
static _Atomic uint64_t fail_reads_from = UINT64_MAX;

void
tex__jpeg_fail_reads_from(uint64_t offset)
{
    atomic_store_explicit(&fail_reads_from, offset, memory_order_relaxed);
}

static void
source_init(j_decompress_ptr cinfo)
{
    (void)cinfo;
}

static boolean
source_fill(j_decompress_ptr cinfo)
{
    fd_source *s = (fd_source *)cinfo->src;
    ssize_t    n = -1;
    if (s->at >= atomic_load_explicit(&fail_reads_from, memory_order_relaxed))
        errno = EIO; /* a test's failing disk */
    else
        do
            n = pread(s->fd, s->buf, SOURCE_BYTES, (off_t)s->at);
        while (n < 0 && errno == EINTR);
    if (n < 0)
        s->read_errno = errno;
    if (n <= 0) {
        if (!s->started && !s->read_errno)
            ERREXIT(cinfo, JERR_INPUT_EMPTY);
        WARNMS(cinfo, JWRN_JPEG_EOF);
        s->buf[0] = (JOCTET)0xFF;
        s->buf[1] = (JOCTET)JPEG_EOI;
        n = 2;
    } else {
        s->at += (uint64_t)n;
    }
    s->started = true;
    s->pub.next_input_byte = s->buf;
    s->pub.bytes_in_buffer = (size_t)n;
    return TRUE;
}

static void
source_skip(j_decompress_ptr cinfo, long n)
{
    fd_source *s = (fd_source *)cinfo->src;
    if (n <= 0)
        return;
    if ((size_t)n <= s->pub.bytes_in_buffer) {
        s->pub.next_input_byte += n;
        s->pub.bytes_in_buffer -= (size_t)n;
        return;
    }
    s->at += (uint64_t)n - s->pub.bytes_in_buffer; /* a marker's length: at most 65533 */
    s->pub.bytes_in_buffer = 0;                    /* the next read fills from there */
}

static void
source_term(j_decompress_ptr cinfo)
{
    (void)cinfo;
}

/* The row a read by rows decodes into, 16 bytes past a 32-byte boundary.
 * libjpeg-turbo's SIMD colour conversion writes a 32-byte-aligned output
 * row with non-temporal stores, which bypass the caches: the consumer,
 * reading the row at once (the MIP chain, the tile cut, the copy into a
 * whole read's image), then read it back from memory; malloc() gave the
 * row that alignment or not by chance (the figures: docs/benchmarks.md,
 * "One open a file"). NULL and the job's error when out of memory. */
static JSAMPROW
row_alloc(jpeg_job *job, size_t stride)
{
    if (!(job->row_block = malloc(stride + 32))) {
        job->code = TEX_ERR_NOMEM;
        snprintf(job->err, TEX_ERR_LEN, "out of memory for a row of %zu bytes", stride);
        return NULL;
    }
    return job->row_block + ((48 - ((uintptr_t)job->row_block & 31)) & 31);
}

/* Everything libjpeg does for a read. On failure job->code says why; the
 * caller frees what job holds. */
static void
jpeg_decode(jpeg_job *job)
{
    struct jpeg_decompress_struct *cinfo = &job->cinfo;
    cinfo->err = jpeg_std_error(&job->pub);
    job->pub.error_exit = on_error_exit;
    job->pub.emit_message = on_emit_message;
    job->pub.output_message = on_output_message;
    if (setjmp(job->jmp))
        return;
    jpeg_create_decompress(cinfo);
    job->src.pub = (struct jpeg_source_mgr){.init_source = source_init,
                                            .fill_input_buffer = source_fill,
                                            .skip_input_data = source_skip,
                                            .resync_to_restart = jpeg_resync_to_restart,
                                            .term_source = source_term};
    cinfo->src = &job->src.pub;
    jpeg_read_header(cinfo, TRUE);
    /* Arithmetic coding: where its data stops (a marker, the end of the
     * file) libjpeg's decoder fills the rest with zeros and warns of
     * nothing, so a damaged file would pass as whole, and a few hundred
     * bytes that declare 11827x12860 make up 152 million pixels (found by
     * fuzz/fuzz_jpeg.c). Such files are all but unknown among textures. */
    if (cinfo->arith_code) {
        job->code = TEX_ERR_UNSUPPORTED;
        snprintf(job->err, TEX_ERR_LEN,
                 "arithmetic-coded JPEG: not read (its decoder cannot tell missing data)");
        return;
    }

    int channels;
    switch (cinfo->jpeg_color_space) {
    case JCS_GRAYSCALE:
        cinfo->out_color_space = JCS_GRAYSCALE;
        channels = 1;
        break;
    case JCS_YCbCr:
    case JCS_RGB:
        cinfo->out_color_space = JCS_RGB;
        channels = 3;
        break;
    case JCS_CMYK:
    case JCS_YCCK:
        job->code = TEX_ERR_UNSUPPORTED;
        snprintf(job->err, TEX_ERR_LEN, "%s JPEG: only grey and colour (YCbCr, RGB) are read",
                 cinfo->jpeg_color_space == JCS_CMYK ? "CMYK" : "YCCK (CMYK)");
        return;
    default:
        job->code = TEX_ERR_UNSUPPORTED;
        snprintf(job->err, TEX_ERR_LEN, "JPEG of %d components in an unknown colour space",
                 cinfo->num_components);
        return;
    }
    job->code = tex_check_size(cinfo->image_width, cinfo->image_height, job->err);
    if (job->code == TEX_OK) /* before libjpeg allocates for the whole image */
        job->code = coefficients_reserve(job);
    if (job->code != TEX_OK)
        return;

    jpeg_start_decompress(cinfo);
    if (cinfo->output_components != channels) {
        job->code = TEX_ERR_UNSUPPORTED;
        snprintf(job->err, TEX_ERR_LEN, "JPEG decodes to %d channels, not %d",
                 cinfo->output_components, channels);
        return;
    }
    job->code = tex_check_size(cinfo->output_width, cinfo->output_height, job->err);
    JSAMPROW row =
        job->code == TEX_OK ? row_alloc(job, (size_t)cinfo->output_width * channels) : NULL;
    if (!row)
        return;
    tex_image shape = {.width = cinfo->output_width,
                       .height = cinfo->output_height,
                       .nchannels = (uint32_t)channels,
                       .type = TEX_TYPE_U8,
                       .srgb = true};
    while (cinfo->output_scanline < cinfo->output_height) {
        JDIMENSION y = cinfo->output_scanline;
        if (jpeg_read_scanlines(cinfo, &row, 1) != 1) { /* only a suspending source does this */
            job->code = TEX_ERR_CORRUPT;
            snprintf(job->err, TEX_ERR_LEN, "JPEG data ends at row %u of %u", y,
                     cinfo->output_height);
            return;
        }
        /* Pixels lost (the data ended, or is corrupt) fail the read
         * (jpeg_read() says why): stop now, not after decoding the rest of
         * an image libjpeg fills in, which for a 627-byte file declaring
         * 16384x16384 took 1.7 s (an audit: 40 of them, 80 s). */
        if (job->lost)
            return;
        job->code = job->rows(job->rows_ctx, &shape, y, row, job->err);
        if (job->code != TEX_OK)
            return;
    }
    jpeg_finish_decompress(cinfo); /* reads up to EOI */
}

/* tex_jpeg_read() with rows NULL, tex_jpeg_read_rows() with a consumer and
 * out NULL; the file open as fd, or else path (tex__io_read_begin()). */
static tex_result
jpeg_read(const char *path, int fd, tex_rows_fn rows, void *rows_ctx,
          const tex__decode_budget *budget, tex_image *out, char err[TEX_ERR_LEN])
{
    tex_result r;
    int        d = tex__io_read_begin(path, fd, out, err, &r), own = d != fd ? d : -1;
    if (d < 0)
        return r;
    jpeg_job *job = calloc(1, sizeof *job);
    JOCTET   *buf = job ? malloc(SOURCE_BYTES) : NULL; /* not zeroed: 64 KiB a file */
    if (!buf) {
        free(job);
        if (own >= 0)
            close(own);
        snprintf(err, TEX_ERR_LEN, "out of memory");
        return TEX_ERR_NOMEM;
    }
    job->src.fd = d;
    job->src.buf = buf;
    job->err = err;
    /* A whole read is a read by rows into an image made at its first row:
     * a file declaring 16384x16384 whose data ends at once fails before
     * 768 MB are asked for. */
    job->rows = rows ? rows : tex__rows_collect;
    job->rows_ctx = rows ? rows_ctx : &job->img;
    job->budget = budget;
    jpeg_decode(job);
    if (job->code == TEX_OK && job->src.read_errno) { /* read as the end of the file */
        job->code = TEX_ERR_OPEN;
        snprintf(err, TEX_ERR_LEN, "cannot read: %s", strerror(job->src.read_errno));
    } else if (job->code == TEX_OK && job->lost) {
        job->code = TEX_ERR_CORRUPT;
        tex__io_message(err, job->lost == JWRN_JPEG_EOF ? "truncated: " : "", job->lost_msg);
    }
    jpeg_destroy_decompress(&job->cinfo); /* safe on the zeroed struct if creating failed */
    r = job->code;
    if (r == TEX_OK && out)
        *out = job->img;
    else
        tex_image_free(&job->img);
    if (own >= 0)
        close(own);
    free(job->row_block);
    free(buf);
    free(job);
    return r;
}

tex_result
tex_jpeg_read(const char *path, tex_image *out, char err[TEX_ERR_LEN])
{
    return jpeg_read(path, -1, NULL, NULL, NULL, out, err);
}

tex_result
tex_jpeg_read_rows(const char *path, tex_rows_fn fn, void *ctx, char err[TEX_ERR_LEN])
{
    return jpeg_read(path, -1, fn, ctx, NULL, NULL, err);
}

tex_result
tex__jpeg_read_fd(int fd, tex_image *out, char err[TEX_ERR_LEN])
{
    return jpeg_read(NULL, fd, NULL, NULL, NULL, out, err);
}

tex_result
tex__jpeg_read_rows(int fd, tex_rows_fn fn, void *ctx, const tex__decode_budget *budget,
                    char err[TEX_ERR_LEN])
{
    return jpeg_read(NULL, fd, fn, ctx, budget, NULL, err);
}
