/* texgen: writes benchmark textures, DIR/tex00.png, tex01.png, ...: RGB,
 * SIZE x SIZE, with detail at every scale (bricks, mortar, value noise in
 * four octaves, rings), so every MIP level differs from the next and a
 * filter that picks the wrong texel shows. Deterministic for a seed.
 * With --constant V instead: DIR/constant.exr, SIZE x SIZE/2 float RGB of
 * value V everywhere (a uniform environment for white-furnace tests).
 * With --huge BITS: DIR/hugeBITS.png, the largest texture the texture
 * system takes (16384 x 16384 RGB, 8 or 16 bits a sample: 0.8 or 1.6 GB
 * decoded) in a file of a few MB, written a row at a time: what tests of
 * memory use read. */
#define _POSIX_C_SOURCE 200809L

#include "procgen.h"
#include "tex_exr.h"
#include "tex_image.h"
#include "tool.h"

#include <png.h>

#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

const char tool_prog[] = "texgen"; /* tool.h: its messages' prefix */

enum { TEX_HUGE_SIDE = 16384 };

static const char usage_text[] =
    "usage: texgen [--count N] [--size S] [--seed K] [--constant V | --huge BITS] DIR\n"
    "  --count N   textures to write, 1..100 (default 16)\n"
    "  --constant V  write DIR/constant.exr instead: float RGB, V everywhere\n"
    "  --huge BITS   write DIR/hugeBITS.png instead: 16384x16384 RGB, 8 or 16 bits\n"
    "  --size S    edge in pixels, 16..8192 (default 1024)\n"
    "  --seed K    variant (default 1)\n";

static void
texel(uint64_t key, uint32_t size, uint32_t x, uint32_t y, uint8_t rgb[3])
{
    float u = (x + 0.5f) / size, v = (y + 0.5f) / size;
    /* Bricks: 8 courses, every other one offset by half a brick. */
    float bu = u * 4 + ((int)(v * 8) & 1) * 0.5f, bv = v * 8;
    int   bx = (int)floorf(bu), by = (int)floorf(bv);
    float fu = bu - bx, fv = bv - by;
    bool  mortar = fu < 0.04f || fv < 0.08f;
    float tint = procgen_lattice(key + 7, bx & 3, by);
    float n = 0, amp = 0.5f;
    for (int o = 0; o < 4; o++, amp *= 0.5f)
        n += amp * procgen_noise(key + (uint64_t)o, u, v, 8 << (2 * o));
    float ring =
        0.5f + 0.5f * sinf(60.0f * sqrtf((u - 0.5f) * (u - 0.5f) + (v - 0.5f) * (v - 0.5f)));
    float base[3] = {0.35f + 0.5f * tint, 0.25f + 0.3f * procgen_lattice(key + 9, bx, by), 0.2f};
    for (int c = 0; c < 3; c++) {
        float val = mortar ? 0.8f - 0.3f * n : base[c] * (0.6f + 0.6f * n) + 0.08f * ring;
        val += 0.15f * procgen_lattice(key + 11 + (uint64_t)c, x, y); /* per-texel grain */
        rgb[c] = (uint8_t)(val < 0 ? 0 : val > 1 ? 255 : lrintf(val * 255));
    }
}

static int
write_constant(const char *dir, uint32_t size, float v)
{
    char      err[TEX_ERR_LEN], path[4096];
    tex_image img;
    if (tex_image_alloc(&img, size, size / 2, 3, TEX_TYPE_FLOAT, err) != TEX_OK) {
        tool_say("%s", err);
        return 1;
    }
    for (size_t i = 0; i < (size_t)size * (size / 2) * 3; i++)
        ((float *)img.pixels)[i] = v;
    snprintf(path, sizeof path, "%s/constant.exr", dir);
    tex_result r = tex_exr_write_scanline(path, &img, NULL, 0, err);
    tex_image_free(&img);
    if (r != TEX_OK) {
        tool_say("%s: %s", path, err);
        return 1;
    }
    return 0;
}

/* A row of the huge texture's band b (1024 rows each): ramps and steps
 * along x that differ per band and channel, so that every MIP level
 * differs from the next, yet rows repeat and compress to almost nothing
 * (PNG's "up" filter makes a repeated row zeros). */
static void
huge_row(uint32_t band, int bits, unsigned char *row)
{
    uint32_t max = (1u << bits) - 1;
    for (uint32_t x = 0; x < TEX_HUGE_SIDE; x++)
        for (uint32_t c = 0; c < 3; c++) {
            uint32_t v = (x % 1024) * 64 + ((x / 1024 + band + c) % 4) * 4096 + band * 1024 * c;
            v = (uint32_t)((uint64_t)(v % 65536) * max / 65535);
            size_t at = (size_t)x * 3 + c;
            if (bits == 16)
                row[2 * at] = (unsigned char)(v >> 8), row[2 * at + 1] = (unsigned char)v;
            else
                row[at] = (unsigned char)v;
        }
}

static int
write_huge(const char *dir, int bits)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/huge%d.png", dir, bits);
    FILE          *f = fopen(path, "wb");
    unsigned char *row = malloc((size_t)TEX_HUGE_SIDE * 3 * (size_t)(bits / 8));
    png_structp png = f ? png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL) : NULL;
    png_infop   info = png ? png_create_info_struct(png) : NULL;
    int         rc = 1;
    if (!row || !info || setjmp(png_jmpbuf(png))) /* libpng printed its reason */
        goto out;
    png_init_io(png, f);
    png_set_IHDR(png, info, TEX_HUGE_SIDE, TEX_HUGE_SIDE, bits, PNG_COLOR_TYPE_RGB,
                 PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_set_filter(png, 0, PNG_FILTER_UP);
    png_set_compression_level(png, 1);
    png_write_info(png, info);
    for (uint32_t y = 0; y < TEX_HUGE_SIDE; y++) {
        if (y % 1024 == 0)
            huge_row(y / 1024, bits, row);
        png_write_row(png, row);
    }
    png_write_end(png, NULL);
    rc = fflush(f) == 0 && !ferror(f) ? 0 : 1;
out:
    if (rc)
        tool_say("%s: cannot write%s%s", path, f ? "" : ": ", f ? "" : strerror(errno));
    png_destroy_write_struct(&png, &info);
    if (f && fclose(f) != 0)
        rc = 1;
    free(row);
    return rc;
}

int
main(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"count", required_argument, NULL, 'n'}, {"size", required_argument, NULL, 's'},
        {"seed", required_argument, NULL, 'k'},  {"constant", required_argument, NULL, 'c'},
        {"huge", required_argument, NULL, 'H'},  {NULL, 0, NULL, 0}};
    static const tool_cli cli = {usage_text, longopts, NULL};
    long                  count = 16, size = 1024, seed = 1, huge = 0;
    double                constant = -1;
    int                   c;
    while ((c = tool_getopt(argc, argv, &cli)) != -1) {
        char *end = NULL;
        switch (c) {
        case 'n':
            count = strtol(optarg, &end, 10);
            break;
        case 's':
            size = strtol(optarg, &end, 10);
            break;
        case 'k':
            seed = strtol(optarg, &end, 10);
            break;
        case 'c':
            constant = strtod(optarg, &end);
            if (!(constant >= 0) || *end)
                tool_bad_usage("--constant: '%s' is not a value >= 0", optarg);
            break;
        case 'H':
            huge = strtol(optarg, &end, 10);
            if (*end || (huge != 8 && huge != 16))
                tool_bad_usage("--huge: '%s' is not 8 or 16", optarg);
            break;
        }
        if (end && *end)
            tool_bad_usage("'%s' is not a number", optarg);
    }
    if (optind != argc - 1 || count < 1 || count > 100 || size < 16 || size > 8192)
        tool_usage_error(&cli);
    const char *dir = argv[optind];
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        tool_say("%s: cannot create: %s", dir, strerror(errno));
        return 1;
    }
    if (constant >= 0)
        return write_constant(dir, (uint32_t)size, (float)constant);
    if (huge)
        return write_huge(dir, (int)huge);
    for (long i = 0; i < count; i++) {
        char      err[TEX_ERR_LEN], path[4096];
        tex_image img;
        if (tex_image_alloc(&img, (uint32_t)size, (uint32_t)size, 3, TEX_TYPE_U8, err) != TEX_OK) {
            tool_say("%s", err);
            return 1;
        }
        img.srgb = true;
        uint64_t key = procgen_mix64((uint64_t)seed * 1000 + (uint64_t)i);
        for (uint32_t y = 0; y < (uint32_t)size; y++)
            for (uint32_t x = 0; x < (uint32_t)size; x++)
                texel(key, (uint32_t)size, x, y,
                      (uint8_t *)img.pixels + ((size_t)y * size + x) * 3);
        snprintf(path, sizeof path, "%s/tex%02ld.png", dir, i);
        tex_result r = tex_png_write(path, &img, err);
        tex_image_free(&img);
        if (r != TEX_OK) {
            tool_say("%s: %s", path, err);
            return 1;
        }
    }
    return 0;
}
