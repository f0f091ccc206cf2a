/* maketx: converts a PNG, JPEG, EXR or TIFF into a tiled, MIP-mapped
 * texture, the texture system's fast path (it reads such files one tile at
 * a time): an EXR, or a TIFF as OpenImageIO's maketx writes (`.tx`), chosen
 * by the output's name. `maketx in.png` writes in.tx, as OpenImageIO's does.
 *
 * An EXR is linear: 8- and 16-bit sources are decoded from sRGB (unless
 * --raw, for data such as normal maps) and stored as half floats (or
 * floats with --float). A TIFF keeps the source's samples (8-bit sRGB stays
 * 8-bit sRGB) unless --half or --float asks otherwise. Each level is
 * filtered from the one above by exact area coverage, in linear light for
 * sRGB data (tex_image_downsample's, row by row: tex_mip_chain), not
 * point-sampled. */
#include "tex_exr.h"
#include "tex_image.h"
#include "tex_tiff.h"
#include "tool.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const char tool_prog[] = "maketx"; /* tool.h: its messages' prefix */

static const char usage_text[] =
    "usage: maketx [--tile N] [--raw] [--half | --float] [-o OUT] IN\n"
    "  -o, --output FILE  the texture to write: FILE.exr a tiled, MIP-mapped EXR;\n"
    "                     FILE.tx, .tif or .tiff a tiled, MIP-mapped TIFF\n"
    "                     (OpenImageIO's format); default: IN's name as .tx\n"
    "  --tile N           tile edge in pixels, 8..1024 (default 64; TIFF: a\n"
    "                     multiple of 16)\n"
    "  --raw              data, not colour: do not decode sRGB\n"
    "  --half             16-bit float samples (EXR's default)\n"
    "  --float            32-bit float samples\n"
    "                     (TIFF's default: the source's own samples)\n";

/* A texture made as its source is read: each row converted, level 0 and
 * every level below it built by a MIP chain and written a row of tiles at
 * a time, so that no level is ever whole in memory (a 16384x16384 PNG
 * took 3.15 GB when it was). */
typedef struct maketx_job {
    const char           *in, *out;
    uint32_t              tile;
    bool                  raw, tiff;
    bool                  keep_type; /* TIFF: the source's samples */
    tex_type              type;      /* otherwise HALF or FLOAT */
    tex_image             stored;    /* the output's shape */
    uint32_t              nlevels;
    tex_exr_tiled_writer *exr;
    tex_tiff_writer      *tif;
    tex_mip_chain        *chain;
    bool                  write_failed; /* err names the output, not the input */
} maketx_job;

static tex_result
band_write(void *ctx, uint32_t level, uint32_t y0, const tex_image *band, char err[TEX_ERR_LEN])
{
    maketx_job *j = ctx;
    tex_result  r = j->tif ? tex_tiff_tiled_put(j->tif, level, y0, band, err)
                           : tex_exr_tiled_put(j->exr, level, y0, band, err);
    j->write_failed = r != TEX_OK;
    return r;
}

/* At the first row: the output's shape, the file and the chain. */
static tex_result
job_begin(maketx_job *j, const tex_image *shape, char err[TEX_ERR_LEN])
{
    j->stored = *shape;
    j->stored.srgb = shape->srgb && !j->raw;
    if (!j->keep_type) { /* to float: linear */
        j->stored.type = j->type;
        j->stored.srgb = false;
    }
    j->nlevels = tex_mip_levels(shape->width, shape->height);
    tex_result r;
    if (j->tiff) {
        char software[1024];
        snprintf(software, sizeof software, "rt maketx %s", j->in);
        r = tex_tiff_tiled_begin(j->out, &j->stored, j->nlevels, j->tile, software, &j->tif, err);
    } else {
        tex_exr_attr attrs[] = {
            {.name = "rt:maketx_source", .kind = TEX_EXR_ATTR_STRING, .s = j->in}};
        r = tex_exr_tiled_begin(j->out, &j->stored, j->nlevels, j->tile, attrs, 1, &j->exr, err);
    }
    j->write_failed = r != TEX_OK;
    if (r == TEX_OK)
        r = tex_mip_chain_new(&j->stored, j->nlevels, j->tile, band_write, j, &j->chain, err);
    return r;
}

static tex_result
row_take(void *ctx, const tex_image *shape, uint32_t y, const void *row, char err[TEX_ERR_LEN])
{
    maketx_job *j = ctx;
    tex_result  r = y == 0 ? job_begin(j, shape, err) : TEX_OK;
    if (r != TEX_OK)
        return r;
    bool srgb = shape->srgb && !j->raw; /* what the row holds */
    if (j->stored.type == shape->type && j->stored.srgb == srgb)
        return tex_mip_chain_push(j->chain, row, err);
    tex_image src = *shape, conv;
    src.height = 1;
    src.pixels = (void *)row;
    src.srgb = srgb;
    r = tex_image_convert(&src, j->stored.type, j->stored.srgb, &conv, err);
    if (r == TEX_OK)
        r = tex_mip_chain_push(j->chain, conv.pixels, err);
    tex_image_free(&conv);
    return r;
}

/* The writer's end: renamed into place when r is TEX_OK. */
static tex_result
job_end(maketx_job *j, tex_result r, char err[TEX_ERR_LEN])
{
    tex_mip_chain_free(j->chain);
    if (!j->exr && !j->tif)
        return r;
    char       end_err[TEX_ERR_LEN];
    tex_result end = j->tif ? tex_tiff_tiled_end(j->tif, r == TEX_OK, end_err)
                            : tex_exr_tiled_end(j->exr, r == TEX_OK, end_err);
    if (r == TEX_OK && end != TEX_OK) {
        r = end;
        j->write_failed = true;
        memcpy(err, end_err, TEX_ERR_LEN);
    }
    return r;
}

static bool
ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), k = strlen(tail);
    return n >= k && strcasecmp(s + n - k, tail) == 0;
}

/* IN's name with its extension (if any) replaced by .tx: malloc'd. */
static char *
tx_name(const char *in)
{
    const char *slash = strrchr(in, '/'), *dot = strrchr(in, '.');
    size_t      stem = dot && (!slash || dot > slash + 1) ? (size_t)(dot - in) : strlen(in);
    char       *out = malloc(stem + sizeof ".tx");
    if (out) {
        memcpy(out, in, stem);
        memcpy(out + stem, ".tx", sizeof ".tx");
    }
    return out;
}

/* One line on stderr: what was written, so a user knows the format. */
static void
job_say(const maketx_job *j)
{
    static const char *kinds[] = {"", "Y", "YA", "RGB", "RGBA"};
    static const char *types[] = {"8-bit", "16-bit", "half-float", "float"};
    tool_say("wrote %s: tiled MIP-mapped %s, %ux%u %s %s%s, %u levels, %ux%u tiles", j->out,
             j->tiff ? "TIFF" : "OpenEXR", j->stored.width, j->stored.height,
             kinds[j->stored.nchannels], types[j->stored.type],
             j->stored.srgb ? " sRGB" : (j->stored.type <= TEX_TYPE_U16 ? " linear" : ""),
             j->nlevels, j->tile, j->tile);
}

int
main(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'}, {"tile", required_argument, NULL, 't'},
        {"raw", no_argument, NULL, 'r'},          {"float", no_argument, NULL, 'f'},
        {"half", no_argument, NULL, 'H'},         {NULL, 0, NULL, 0}};
    static const tool_cli cli = {usage_text, longopts, "o:"};
    const char           *out = NULL;
    long                  tile = 64;
    bool                  raw = false;
    int                   as = 0; /* 'H' half, 'f' float, 0: the format's default */
    int                   c;
    while ((c = tool_getopt(argc, argv, &cli)) != -1) {
        switch (c) {
        case 'o':
            out = optarg;
            break;
        case 't': {
            char *end;
            tile = strtol(optarg, &end, 10);
            if (*end || tile < 8 || tile > 1024)
                tool_bad_usage("bad --tile '%s' (8..1024)", optarg);
            break;
        }
        case 'r':
            raw = true;
            break;
        case 'f':
        case 'H':
            as = c;
            break;
        }
    }
    if (optind != argc - 1)
        tool_usage_error(&cli);
    char *made = out ? NULL : tx_name(argv[optind]);
    if (!out && !(out = made))
        tool_die("out of memory");
    bool tiff = ends_with(out, ".tx") || ends_with(out, ".tif") || ends_with(out, ".tiff");
    if (!tiff && !ends_with(out, ".exr"))
        tool_bad_usage("%s: name the output .exr, .tx, .tif or .tiff", out);
    if (tiff && tile % 16)
        tool_bad_usage("bad --tile '%ld' (TIFF tiles are a multiple of 16)", tile);
    maketx_job j = {.in = argv[optind],
                    .out = out,
                    .tile = (uint32_t)tile,
                    .raw = raw,
                    .tiff = tiff,
                    .keep_type = tiff && !as,
                    .type = as == 'f' ? TEX_TYPE_FLOAT : TEX_TYPE_HALF};
    char       err[TEX_ERR_LEN];
    tex_result r = job_end(&j, tex_image_read_rows(j.in, row_take, &j, err), err);
    if (r == TEX_OK)
        job_say(&j);
    if (r != TEX_OK)
        tool_die("%s: %s", j.write_failed ? out : j.in, err);
    free(made);
    return 0;
}
