/* maketx: converts a PNG, JPEG or EXR into a tiled, MIP-mapped EXR, the
 * texture system's fast path (it reads such files one tile at a time).
 *
 * Colour data stays linear: 8- and 16-bit sources are decoded from sRGB
 * (unless --raw, for data such as normal maps) and stored as half floats
 * (or floats with --float). Each level is filtered from the one above by
 * exact area coverage (tex_image_downsample's, row by row: tex_mip_chain),
 * not point-sampled. */
#include "tex_exr.h"
#include "tex_image.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void
usage(FILE *f)
{
    fputs("usage: maketx [--tile N] [--raw] [--float] -o OUT.exr IN\n"
          "  -o, --output FILE  the tiled, MIP-mapped EXR to write\n"
          "  --tile N           tile edge in pixels, 8..1024 (default 64)\n"
          "  --raw              data, not colour: do not decode sRGB\n"
          "  --float            32-bit float samples (default: half)\n",
          f);
}

static int
fail(const char *path, const char *err)
{
    fprintf(stderr, "maketx: %s: %s\n", path, err);
    return 1;
}

/* A texture made as its source is read: each row converted, level 0 and
 * every level below it built by a MIP chain and written a row of tiles at
 * a time, so that no level is ever whole in memory (a 16384x16384 PNG
 * took 3.15 GB when it was). */
typedef struct maketx_job {
    const char           *in, *out;
    uint32_t              tile;
    bool                  raw;
    tex_type              type; /* HALF or FLOAT */
    tex_exr_tiled_writer *writer;
    tex_mip_chain        *chain;
    bool                  write_failed; /* err names the output, not the input */
} maketx_job;

static tex_result
band_write(void *ctx, uint32_t level, uint32_t y0, const tex_image *band, char err[TEX_ERR_LEN])
{
    maketx_job *j = ctx;
    tex_result  r = tex_exr_tiled_put(j->writer, level, y0, band, err);
    j->write_failed = r != TEX_OK;
    return r;
}

/* At the first row: the output's shape, the file and the chain. */
static tex_result
job_begin(maketx_job *j, const tex_image *shape, char err[TEX_ERR_LEN])
{
    tex_image lin = *shape;
    lin.type = j->type;
    lin.srgb = false;
    uint32_t     nlevels = tex_mip_levels(shape->width, shape->height);
    tex_exr_attr attrs[] = {{.name = "rt:maketx_source", .kind = TEX_EXR_ATTR_STRING, .s = j->in}};
    tex_result   r = tex_exr_tiled_begin(j->out, &lin, nlevels, j->tile, attrs, 1, &j->writer, err);
    j->write_failed = r != TEX_OK;
    if (r == TEX_OK)
        r = tex_mip_chain_new(&lin, nlevels, j->tile, band_write, j, &j->chain, err);
    return r;
}

static tex_result
row_take(void *ctx, const tex_image *shape, uint32_t y, const void *row, char err[TEX_ERR_LEN])
{
    maketx_job *j = ctx;
    tex_result  r = y == 0 ? job_begin(j, shape, err) : TEX_OK;
    if (r != TEX_OK)
        return r;
    tex_image src = *shape, lin;
    src.height = 1;
    src.pixels = (void *)row;
    if (j->raw)
        src.srgb = false;
    r = tex_image_convert(&src, j->type, false, &lin, err);
    if (r == TEX_OK)
        r = tex_mip_chain_push(j->chain, lin.pixels, err);
    tex_image_free(&lin);
    return r;
}

int
main(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'}, {"tile", required_argument, NULL, 't'},
        {"raw", no_argument, NULL, 'r'},          {"float", no_argument, NULL, 'f'},
        {"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0}};
    const char *out = NULL;
    long        tile = 64;
    bool        raw = false, as_float = false;
    int         c;
    while ((c = getopt_long(argc, argv, "o:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'o':
            out = optarg;
            break;
        case 't': {
            char *end;
            tile = strtol(optarg, &end, 10);
            if (*end || tile < 8 || tile > 1024) {
                fprintf(stderr, "maketx: bad --tile '%s' (8..1024)\n", optarg);
                return 2;
            }
            break;
        }
        case 'r':
            raw = true;
            break;
        case 'f':
            as_float = true;
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (!out || optind != argc - 1) {
        usage(stderr);
        return 2;
    }
    maketx_job j = {.in = argv[optind],
                    .out = out,
                    .tile = (uint32_t)tile,
                    .raw = raw,
                    .type = as_float ? TEX_TYPE_FLOAT : TEX_TYPE_HALF};
    char       err[TEX_ERR_LEN];
    tex_result r = tex_image_read_rows(j.in, row_take, &j, err);
    tex_mip_chain_free(j.chain);
    if (j.writer) {
        char       end_err[TEX_ERR_LEN];
        tex_result end = tex_exr_tiled_end(j.writer, r == TEX_OK, end_err);
        if (r == TEX_OK && end != TEX_OK) {
            r = end;
            j.write_failed = true;
            memcpy(err, end_err, sizeof err);
        }
    }
    if (r != TEX_OK)
        return fail(j.write_failed ? out : j.in, err);
    return 0;
}
