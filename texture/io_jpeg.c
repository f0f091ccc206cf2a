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
 * Nothing is ever printed. */
#include "tex_image.h"
#include "tex_io_internal.h"

#include <stdio.h> /* before jpeglib.h, which needs FILE and size_t */

#include <jpeglib.h>

#include <jerror.h> /* after jpeglib.h: its message list depends on JPEG_LIB_VERSION */

#include <setjmp.h>
#include <stdlib.h>

typedef struct jpeg_job {
    struct jpeg_error_mgr         pub; /* first: libjpeg hands callbacks a pointer to it */
    jmp_buf                       jmp;
    struct jpeg_decompress_struct cinfo;
    FILE                         *f;
    tex_image                     img;  /* the image, or with `rows` one row of it */
    tex_rows_fn                   rows; /* tex_jpeg_read_rows()'s consumer; NULL: whole */
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
    case JWRN_JPEG_EOF:       /* "Premature end of JPEG file": the rest is grey */
    case JWRN_HIT_MARKER:     /* a scan ends before its last block */
    case JWRN_HUFF_BAD_CODE:  /* entropy-coded data is garbage */
    case JWRN_ARITH_BAD_CODE: /* likewise, arithmetic coding */
    case JWRN_MUST_RESYNC:    /* a restart marker is missing: blocks skipped */
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
    if (ferror(job->f)) {
        job->code = TEX_ERR_OPEN;
        snprintf(job->err, TEX_ERR_LEN, "cannot read: read error");
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

/* A file of several scans (progressive, or components in scans of their
 * own) is decoded from a coefficient array of the whole image, which
 * jpeg_start_decompress() allocates: charged to the budget first, and
 * libjpeg told to stay within it (max_memory_to_use: past it libjpeg
 * would want a backing store, which this build refuses), should our sum
 * ever fall short of libjpeg's own. */
static tex_result
coefficients_reserve(jpeg_job *job)
{
    struct jpeg_decompress_struct *cinfo = &job->cinfo;
    uint64_t                       bytes = 0;
    if (!job->budget)
        return TEX_OK;
    if (cinfo->progressive_mode || cinfo->comps_in_scan < cinfo->num_components) {
        for (int c = 0; c < cinfo->num_components; c++) {
            const jpeg_component_info *comp = &cinfo->comp_info[c];
            /* jdcoefct.c rounds each array up to whole MCUs. */
            uint64_t w = (comp->width_in_blocks + comp->h_samp_factor - 1) / comp->h_samp_factor *
                         comp->h_samp_factor;
            uint64_t h = (comp->height_in_blocks + comp->v_samp_factor - 1) / comp->v_samp_factor *
                         comp->v_samp_factor;
            bytes += w * h * DCTSIZE2 * sizeof(JCOEF);
        }
        char what[64];
        snprintf(what, sizeof what, "%s JPEG %ux%u",
                 cinfo->progressive_mode ? "progressive" : "multi-scan", cinfo->image_width,
                 cinfo->image_height);
        tex_result r = job->budget->reserve(job->budget->ctx, bytes, what, job->err);
        if (r != TEX_OK)
            return r;
    }
    cinfo->mem->max_memory_to_use = (long)bytes + JPEG_WORKING_BYTES;
    return TEX_OK;
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
    jpeg_stdio_src(cinfo, job->f);
    jpeg_read_header(cinfo, TRUE);

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
    job->code =
        tex_image_alloc(&job->img, cinfo->output_width, job->rows ? 1 : cinfo->output_height,
                        (uint32_t)channels, TEX_TYPE_U8, job->err);
    if (job->code != TEX_OK)
        return;
    job->img.srgb = true;
    tex_image shape = job->img;
    shape.height = cinfo->output_height;
    shape.pixels = NULL;
    size_t stride = (size_t)cinfo->output_width * (size_t)channels;
    while (cinfo->output_scanline < cinfo->output_height) {
        JDIMENSION y = cinfo->output_scanline;
        JSAMPROW   row = (JSAMPROW)job->img.pixels + (job->rows ? 0 : (size_t)y * stride);
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
        if (job->rows) {
            job->code = job->rows(job->rows_ctx, &shape, y, row, job->err);
            if (job->code != TEX_OK)
                return;
        }
    }
    jpeg_finish_decompress(cinfo); /* reads up to EOI */
}

/* tex_jpeg_read() with rows NULL, tex_jpeg_read_rows() with a consumer and
 * out NULL. */
static tex_result
jpeg_read(const char *path, tex_rows_fn rows, void *rows_ctx, const tex__decode_budget *budget,
          tex_image *out, char err[TEX_ERR_LEN])
{
    FILE      *f;
    tex_result r = tex__io_read_open(path, out, err, &f);
    if (r != TEX_OK)
        return r;
    jpeg_job *job = tex__io_read_state(sizeof *job, f, err);
    if (!job)
        return TEX_ERR_NOMEM;
    job->f = f;
    job->err = err;
    job->rows = rows;
    job->rows_ctx = rows_ctx;
    job->budget = budget;
    jpeg_decode(job);
    if (job->code == TEX_OK && ferror(f)) { /* the stdio source takes a read error for EOF */
        job->code = TEX_ERR_OPEN;
        snprintf(err, TEX_ERR_LEN, "cannot read: read error");
    } else if (job->code == TEX_OK && job->lost) {
        job->code = TEX_ERR_CORRUPT;
        tex__io_message(err, job->lost == JWRN_JPEG_EOF ? "truncated: " : "", job->lost_msg);
    }
    jpeg_destroy_decompress(&job->cinfo); /* safe on the zeroed struct if creating failed */
    r = tex__io_read_close(f, job->code, &job->img, out);
    free(job);
    return r;
}

tex_result
tex_jpeg_read(const char *path, tex_image *out, char err[TEX_ERR_LEN])
{
    return jpeg_read(path, NULL, NULL, NULL, out, err);
}

tex_result
tex_jpeg_read_rows(const char *path, tex_rows_fn fn, void *ctx, char err[TEX_ERR_LEN])
{
    return jpeg_read(path, fn, ctx, NULL, NULL, err);
}

tex_result
tex__jpeg_read_rows(const char *path, tex_rows_fn fn, void *ctx, const tex__decode_budget *budget,
                    char err[TEX_ERR_LEN])
{
    return jpeg_read(path, fn, ctx, budget, NULL, err);
}
