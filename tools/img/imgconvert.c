/* imgconvert: any image the texture system reads (PNG, JPEG, EXR, TIFF) to a PNG
 * to look at, or an EXR, with an exposure: a render's EXR made viewable; or
 * to a PPM, for programs that read no PNG (tools/compare gives Embree's
 * pathtracer a scene's textures so).
 *
 *   imgconvert [--exposure STOPS] IN OUT.png|OUT.ppm|OUT.exr
 *
 * Colour is scaled by 2^STOPS in linear light (alpha is not), then written
 * as 8-bit sRGB (PNG, clamped; PPM the same bytes, RGB only) or half floats
 * (EXR). Exit 0, 1 when a file cannot be read or written (one line naming
 * it), 2 on a bad command line. */
#include "tex_image.h"
#include "tool.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

const char tool_prog[] = "imgconvert"; /* tool.h: its messages' prefix */

static const char usage_text[] = "usage: imgconvert [--exposure STOPS] IN OUT.png|OUT.ppm|OUT.exr\n"
                                 "  --exposure STOPS  scale colour by 2^STOPS first (default 0)\n";

int
main(int argc, char **argv)
{
    static const struct option longopts[] = {{"exposure", required_argument, NULL, 'e'},
                                             {NULL, 0, NULL, 0}};
    static const tool_cli      cli = {usage_text, longopts, NULL};
    double                     stops = 0;
    int                        c;
    while ((c = tool_getopt(argc, argv, &cli)) != -1) {
        char *end = NULL;
        switch (c) {
        case 'e':
            stops = strtod(optarg, &end);
            if (*end || !(fabs(stops) <= 64))
                tool_bad_usage("--exposure: '%s' is not a number of stops (-64..64)", optarg);
            break;
        }
    }
    if (argc - optind != 2)
        tool_usage_error(&cli);
    const char *in = argv[optind], *out = argv[optind + 1];
    char        err[TEX_ERR_LEN];
    tex_image   img;
    if (tex_image_read_linear(in, &img, err) != TEX_OK) {
        tool_say("%s: %s", in, err);
        return 1;
    }
    tex_result r = tex_image_write_linear(out, &img, (float)exp2(stops), err);
    tex_image_free(&img);
    if (r != TEX_OK) {
        tool_say("%s: %s", out, err);
        return r == TEX_ERR_INVALID ? 2 : 1;
    }
    return 0;
}
