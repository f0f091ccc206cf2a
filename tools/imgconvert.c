/* imgconvert: any image the texture system reads (PNG, JPEG, EXR, TIFF) to a PNG
 * to look at, or an EXR, with an exposure: a render's EXR made viewable.
 *
 *   imgconvert [--exposure STOPS] IN OUT.png|OUT.exr
 *
 * Colour is scaled by 2^STOPS in linear light (alpha is not), then written
 * as 8-bit sRGB (PNG, clamped) or half floats (EXR). Exit 0, 1 when a file
 * cannot be read or written (one line naming it), 2 on a bad command line. */
#include "tex_image.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static void
usage(FILE *f)
{
    fputs("usage: imgconvert [--exposure STOPS] IN OUT.png|OUT.exr\n"
          "  --exposure STOPS  scale colour by 2^STOPS first (default 0)\n",
          f);
}

int
main(int argc, char **argv)
{
    static const struct option longopts[] = {{"exposure", required_argument, NULL, 'e'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    double                     stops = 0;
    int                        c;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        char *end = NULL;
        switch (c) {
        case 'e':
            stops = strtod(optarg, &end);
            if (*end || !(fabs(stops) <= 64)) {
                fprintf(stderr, "imgconvert: --exposure: '%s' is not a number of stops (-64..64)\n",
                        optarg);
                return 2;
            }
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (argc - optind != 2) {
        usage(stderr);
        return 2;
    }
    const char *in = argv[optind], *out = argv[optind + 1];
    char        err[TEX_ERR_LEN];
    tex_image   img;
    if (tex_image_read_linear(in, &img, err) != TEX_OK) {
        fprintf(stderr, "imgconvert: %s: %s\n", in, err);
        return 1;
    }
    tex_result r = tex_image_write_linear(out, &img, (float)exp2(stops), err);
    tex_image_free(&img);
    if (r != TEX_OK) {
        fprintf(stderr, "imgconvert: %s: %s\n", out, err);
        return r == TEX_ERR_INVALID ? 2 : 1;
    }
    return 0;
}
