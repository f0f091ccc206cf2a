/* maketx: converts a PNG, JPEG or EXR into a tiled, MIP-mapped EXR, the
 * texture system's fast path (it reads such files one tile at a time).
 *
 * Colour data stays linear: 8- and 16-bit sources are decoded from sRGB
 * (unless --raw, for data such as normal maps) and stored as half floats
 * (or floats with --float). Each level is filtered from the one above by
 * exact area coverage (tex_image_downsample), not point-sampled. */
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

/* The full MIP chain of img (taken over), or an error. */
static tex_result
pyramid(tex_image *img, tex_image **levels, uint32_t *nlevels, char err[TEX_ERR_LEN])
{
    *nlevels = tex_mip_levels(img->width, img->height);
    *levels = calloc(*nlevels, sizeof **levels);
    if (!*levels) {
        tex_image_free(img);
        snprintf(err, TEX_ERR_LEN, "out of memory");
        return TEX_ERR_NOMEM;
    }
    (*levels)[0] = *img;
    for (uint32_t l = 1; l < *nlevels; l++) {
        tex_result r = tex_image_downsample(&(*levels)[l - 1], &(*levels)[l], err);
        if (r != TEX_OK)
            return r;
    }
    return TEX_OK;
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
    const char *in = argv[optind];
    char        err[TEX_ERR_LEN];
    tex_image   src, lin;
    if (tex_image_read(in, &src, err) != TEX_OK)
        return fail(in, err);
    if (raw)
        src.srgb = false;
    tex_result r =
        tex_image_convert(&src, as_float ? TEX_TYPE_FLOAT : TEX_TYPE_HALF, false, &lin, err);
    tex_image_free(&src);
    if (r != TEX_OK)
        return fail(in, err);
    tex_image *levels = NULL;
    uint32_t   nlevels = 0;
    r = pyramid(&lin, &levels, &nlevels, err);
    if (r == TEX_OK) {
        tex_exr_attr attrs[] = {{.name = "rt:maketx_source", .is_string = true, .s = in}};
        r = tex_exr_write_tiled(out, levels, nlevels, (uint32_t)tile, attrs, 1, err);
    }
    for (uint32_t l = 0; levels && l < nlevels; l++)
        tex_image_free(&levels[l]);
    free(levels);
    if (r != TEX_OK)
        return fail(r == TEX_ERR_WRITE ? out : in, err);
    return 0;
}
