/* imgstat: the statistics of an image (PNG, JPEG, EXR or TIFF) over a window, in
 * linear light, and its error against a reference: what convergence and
 * white-furnace tests check, and a quick look at a render's levels.
 *
 *   imgstat [--window X0,Y0,X1,Y1] [--clamp | --quantize] IMAGE [REFERENCE]
 *
 * Images: PNG, JPEG, EXR, TIFF, and PFM (what Embree's tutorials write).
 * --quantize encodes both images as Embree's tutorials store a render
 * (tutorials/pathtracer/pathtracer_device.cpp, renderTileStandard): clamped
 * to [0, 1], then floor(255.01 v) / 255: 8 bits, linear, no sRGB curve.
 * Their own PFMs come through unchanged, so a float render compares with
 * theirs like with like.
 * Prints one line, per channel R,G,B (alpha left out):
 *   imgstat pixels=N mean=R,G,B sd=R,G,B min=R,G,B max=R,G,B [rmse=R,G,B]
 * The window is half-open, [X0, X1) x [Y0, Y1), in pixels from the top
 * left (default: the whole image). Exit 0; 1 when a file cannot be read or
 * the sizes differ (one line naming the file); 2 on a bad command line. */
#include "tex_image.h"
#include "tool.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char tool_prog[] = "imgstat"; /* tool.h: its messages' prefix */

static const char usage_text[] =
    "usage: imgstat [--window X0,Y0,X1,Y1] [--clamp | --quantize] IMAGE [REFERENCE]\n"
    "  --window X0,Y0,X1,Y1  pixels [X0, X1) x [Y0, Y1) only (default: all)\n"
    "  --clamp               values clamped to [0, 1] first (as 8-bit output would)\n"
    "  --quantize            clamped, then to 8 bits as Embree's tutorials write them:\n"
    "                        floor(255.01 v) / 255, linear\n";

/* A PFM file (Portable Float Map: "PF" colour or "Pf" grey, width and
 * height, a scale whose sign gives the byte order, rows bottom first), as
 * Embree's tutorials write it: 0 if it is not one, 1 read, -1 broken. */
static int
read_pfm(const char *path, tex_image *out)
{
    FILE *f = fopen(path, "rb");
    char  kind[3] = "";
    if (!f || fread(kind, 1, 2, f) != 2 || kind[0] != 'P' || (kind[1] != 'F' && kind[1] != 'f')) {
        if (f)
            fclose(f);
        return 0;
    }
    unsigned w, h, nc = kind[1] == 'F' ? 3 : 1;
    double   scale;
    char     err[TEX_ERR_LEN];
    if (fscanf(f, "%u %u %lf", &w, &h, &scale) != 3 || fgetc(f) == EOF || w == 0 || h == 0 ||
        w > 65536 || h > 65536 || tex_image_alloc(out, w, h, nc, TEX_TYPE_FLOAT, err) != TEX_OK) {
        fclose(f);
        tool_say("%s: not a PFM image", path);
        return -1;
    }
    bool swap = scale > 0; /* big-endian; this machine reads little */
    for (unsigned y = 0; y < h; y++) {
        float *row = (float *)out->pixels + (size_t)(h - 1 - y) * w * nc;
        if (fread(row, sizeof(float), (size_t)w * nc, f) != (size_t)w * nc) {
            fclose(f);
            tex_image_free(out);
            tool_say("%s: truncated PFM image", path);
            return -1;
        }
        for (size_t i = 0; swap && i < (size_t)w * nc; i++) {
            uint32_t b;
            memcpy(&b, &row[i], 4);
            b = (b >> 24) | ((b >> 8) & 0xff00) | ((b << 8) & 0xff0000) | (b << 24);
            memcpy(&row[i], &b, 4);
        }
    }
    fclose(f);
    return 1;
}

/* Reads an image as linear float RGBA-or-less. */
static bool
read_linear(const char *path, tex_image *out)
{
    int pfm = read_pfm(path, out);
    if (pfm)
        return pfm > 0;
    char err[TEX_ERR_LEN];
    if (tex_image_read_linear(path, out, err) != TEX_OK) {
        tool_say("%s: %s", path, err);
        return false;
    }
    return true;
}

/* Channel c of pixel i: grey images give their value for R, G and B. */
static double
channel(const tex_image *img, size_t i, int c)
{
    uint32_t nc = img->nchannels;
    return ((const float *)img->pixels)[i * nc + (nc <= 2 ? 0 : (uint32_t)c)];
}

typedef enum encoding { ENC_FLOAT, ENC_CLAMP, ENC_EMBREE8 } encoding;

/* v as the encoding stores it. ENC_EMBREE8 is Embree's tutorials'
 * (unsigned)(255.01f * clamp(v, 0, 1)), read back as that over 255: an
 * 8-bit value they wrote, read from their PFM, comes back to itself. */
static double
encode(double v, encoding e)
{
    if (e == ENC_FLOAT)
        return v;
    v = v < 0 ? 0 : v > 1 ? 1 : v;
    return e == ENC_CLAMP ? v : floor((float)(255.01f * (float)v)) / 255;
}

static void
print3(const char *name, const double v[3])
{
    printf(" %s=%.6g,%.6g,%.6g", name, v[0], v[1], v[2]);
}

int
main(int argc, char **argv)
{
    static const struct option longopts[] = {{"window", required_argument, NULL, 'w'},
                                             {"clamp", no_argument, NULL, 'c'},
                                             {"quantize", no_argument, NULL, 'q'},
                                             {NULL, 0, NULL, 0}};
    static const tool_cli      cli = {usage_text, longopts, NULL};
    long                       win[4] = {0, 0, -1, -1};
    encoding                   enc = ENC_FLOAT;
    int                        c;
    while ((c = tool_getopt(argc, argv, &cli)) != -1) {
        switch (c) {
        case 'w': {
            char *end;
            char *p = optarg;
            for (int k = 0; k < 4; k++) {
                win[k] = strtol(p, &end, 10);
                if (end == p || win[k] < 0 || *end != (k < 3 ? ',' : '\0'))
                    tool_bad_usage("--window: '%s' is not X0,Y0,X1,Y1", optarg);
                p = end + 1;
            }
            break;
        }
        case 'c':
        case 'q':
            if (enc != ENC_FLOAT && enc != (c == 'c' ? ENC_CLAMP : ENC_EMBREE8))
                tool_bad_usage("--clamp and --quantize exclude each other");
            enc = c == 'c' ? ENC_CLAMP : ENC_EMBREE8;
            break;
        }
    }
    if (argc - optind < 1 || argc - optind > 2)
        tool_usage_error(&cli);
    tex_image img, ref;
    bool      have_ref = argc - optind == 2;
    if (!read_linear(argv[optind], &img))
        return 1;
    if (have_ref && !read_linear(argv[optind + 1], &ref)) {
        tex_image_free(&img);
        return 1;
    }
    if (have_ref && (ref.width != img.width || ref.height != img.height)) {
        tool_say("%s: %ux%u, but %s is %ux%u", argv[optind + 1], ref.width, ref.height,
                 argv[optind], img.width, img.height);
        return 1;
    }
    long x1 = win[2] < 0 || win[2] > (long)img.width ? (long)img.width : win[2];
    long y1 = win[3] < 0 || win[3] > (long)img.height ? (long)img.height : win[3];
    if (win[0] >= x1 || win[1] >= y1)
        tool_bad_usage("--window: empty within %ux%u", img.width, img.height);
    double sum[3] = {0}, sq[3] = {0}, lo[3] = {INFINITY, INFINITY, INFINITY},
           hi[3] = {-INFINITY, -INFINITY, -INFINITY}, err2[3] = {0};
    size_t n = 0;
    for (long y = win[1]; y < y1; y++) {
        for (long x = win[0]; x < x1; x++, n++) {
            size_t i = (size_t)y * img.width + (size_t)x;
            for (int k = 0; k < 3; k++) {
                double v = encode(channel(&img, i, k), enc);
                sum[k] += v, sq[k] += v * v;
                lo[k] = v < lo[k] ? v : lo[k];
                hi[k] = v > hi[k] ? v : hi[k];
                if (have_ref) {
                    double r = encode(channel(&ref, i, k), enc);
                    double d = v - r;
                    err2[k] += d * d;
                }
            }
        }
    }
    double mean[3], sd[3], rmse[3];
    for (int k = 0; k < 3; k++) {
        mean[k] = sum[k] / (double)n;
        double var = sq[k] / (double)n - mean[k] * mean[k];
        sd[k] = var > 0 ? sqrt(var) : 0;
        rmse[k] = sqrt(err2[k] / (double)n);
    }
    printf("imgstat pixels=%zu", n);
    print3("mean", mean), print3("sd", sd), print3("min", lo), print3("max", hi);
    if (have_ref)
        print3("rmse", rmse);
    putchar('\n');
    tex_image_free(&img);
    if (have_ref)
        tex_image_free(&ref);
    return 0;
}
