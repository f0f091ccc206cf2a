/* imgdiff: compares two images (PNG, JPEG, EXR or TIFF) pixel by pixel, as image
 * regression tests do: a pixel fails when any channel differs by more than
 * --tolerance (in linear light, 0..1 for 8-bit images); the images match
 * when at most --max-fail pixels fail.
 *
 *   imgdiff [--tolerance E] [--max-fail N] [--quiet] [--diff OUT [--diff-scale K]] A B
 *
 * --diff writes |A - B| per channel, times K (default 1), as OUT (.png:
 * 8-bit sRGB, so a difference of 0.01 at K 10 shows as mid grey; .exr:
 * half floats, exact), written whether or not the images match.
 *
 * Prints one line: "imgdiff: match: 3 of 65536 pixels over 0.005 (max 0.0123
 * at 10,20)" or "imgdiff: differ: ...". Exit 0 on a match, 1 when they
 * differ or cannot be compared (sizes, channels, unreadable: one line
 * naming the file), 2 on a bad command line. */
#include "tex_image.h"
#include "tool.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char tool_prog[] = "imgdiff"; /* tool.h: its messages' prefix */

static const char usage_text[] =
    "usage: imgdiff [--tolerance E] [--max-fail N] [--quiet] [--diff OUT] A B\n"
    "  --tolerance E   largest per-channel difference that still passes (default 0)\n"
    "  --max-fail N    pixels allowed over the tolerance (default 0)\n"
    "  --quiet         print nothing; the exit status says it\n"
    "  --diff OUT      write |A - B| per channel as OUT (.png or .exr)\n"
    "  --diff-scale K  multiply the difference image by K (default 1)\n";

/* Reads an image as linear floats. */
static bool
read_linear(const char *path, tex_image *out)
{
    char err[TEX_ERR_LEN];
    if (tex_image_read_linear(path, out, err) != TEX_OK) {
        tool_say("%s: %s", path, err);
        return false;
    }
    return true;
}

/* |a - b| per channel, times scale, written to path; false (one line
 * said) when it cannot be. */
static bool
diff_write(const char *path, const tex_image *a, const tex_image *b, float scale)
{
    char      err[TEX_ERR_LEN];
    tex_image d;
    if (tex_image_alloc(&d, a->width, a->height, a->nchannels, TEX_TYPE_FLOAT, err) != TEX_OK) {
        tool_say("%s: %s", path, err);
        return false;
    }
    const float *fa = a->pixels, *fb = b->pixels;
    float       *fd = d.pixels;
    size_t       n = (size_t)a->width * a->height * a->nchannels;
    for (size_t i = 0; i < n; i++)
        fd[i] = scale * fabsf(fa[i] - fb[i]);
    if (a->nchannels == 2 || a->nchannels == 4) /* opaque: alpha's difference is in the counts */
        for (size_t i = a->nchannels - 1; i < n; i += a->nchannels)
            fd[i] = 1;
    tex_result r = tex_image_write_linear(path, &d, 1, err);
    tex_image_free(&d);
    if (r != TEX_OK)
        tool_say("%s: %s", path, err);
    return r == TEX_OK;
}

int
main(int argc, char **argv)
{
    static const struct option longopts[] = {{"tolerance", required_argument, NULL, 't'},
                                             {"max-fail", required_argument, NULL, 'm'},
                                             {"quiet", no_argument, NULL, 'q'},
                                             {"diff", required_argument, NULL, 'd'},
                                             {"diff-scale", required_argument, NULL, 's'},
                                             {NULL, 0, NULL, 0}};
    static const tool_cli      cli = {usage_text, longopts, NULL};
    double                     tolerance = 0;
    long                       max_fail = 0;
    bool                       quiet = false;
    const char                *diff = NULL;
    double                     diff_scale = 1;
    int                        c;
    while ((c = tool_getopt(argc, argv, &cli)) != -1) {
        char *end = NULL;
        switch (c) {
        case 't':
            tolerance = strtod(optarg, &end);
            if (*end || !(tolerance >= 0))
                tool_bad_usage("bad --tolerance '%s'", optarg);
            break;
        case 'm':
            max_fail = strtol(optarg, &end, 10);
            if (*end || max_fail < 0)
                tool_bad_usage("bad --max-fail '%s'", optarg);
            break;
        case 'q':
            quiet = true;
            break;
        case 'd':
            diff = optarg;
            break;
        case 's':
            diff_scale = strtod(optarg, &end);
            if (*end || !(diff_scale > 0) || isinf(diff_scale))
                tool_bad_usage("bad --diff-scale '%s'", optarg);
            break;
        }
    }
    if (argc - optind != 2)
        tool_usage_error(&cli);
    const char *pa = argv[optind], *pb = argv[optind + 1];
    tex_image   a, b;
    if (!read_linear(pa, &a))
        return 1;
    if (!read_linear(pb, &b)) {
        tex_image_free(&a);
        return 1;
    }
    int rc = 1;
    if (a.width != b.width || a.height != b.height || a.nchannels != b.nchannels) {
        tool_say("%s is %ux%u with %u channels, %s is %ux%u with %u", pa, a.width, a.height,
                 a.nchannels, pb, b.width, b.height, b.nchannels);
        goto done;
    }
    const float *fa = a.pixels, *fb = b.pixels;
    long         failed = 0;
    double       worst = 0;
    uint32_t     wx = 0, wy = 0;
    for (uint32_t y = 0; y < a.height; y++) {
        for (uint32_t x = 0; x < a.width; x++) {
            double d = 0;
            for (uint32_t k = 0; k < a.nchannels; k++) {
                size_t i = ((size_t)y * a.width + x) * a.nchannels + k;
                double e = fabs((double)fa[i] - (double)fb[i]);
                if (!(e == e)) /* NaN in one of them: as bad as it gets */
                    e = INFINITY;
                d = e > d ? e : d;
            }
            failed += d > tolerance;
            if (d > worst)
                worst = d, wx = x, wy = y;
        }
    }
    rc = failed <= max_fail ? 0 : 1;
    if (diff && !diff_write(diff, &a, &b, (float)diff_scale))
        rc = 1;
    if (!quiet)
        printf("imgdiff: %s: %ld of %lu pixels over %g (max %g at %u,%u)\n",
               rc ? "differ" : "match", failed, (unsigned long)a.width * a.height, tolerance, worst,
               wx, wy);
done:
    tex_image_free(&a);
    tex_image_free(&b);
    return rc;
}
