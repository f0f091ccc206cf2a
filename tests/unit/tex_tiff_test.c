/* texture/include/tex_tiff.h: tiled MIP-mapped TIFF (OpenImageIO's .tx) read tile
 * by tile, TIFF in strips read by rows, the tiled writer behind maketx, the
 * texture system reading .tx files, and bad input. Files are written here
 * with libtiff directly, by our maketx, and (case oiio, skipped where it is
 * not installed) by OpenImageIO's maketx and oiiotool. */
#define _POSIX_C_SOURCE 200809L

#include "check.h"
#include "tex_file_testing.h"
#include "tex_image.h"
#include "tex_tiff.h"
#include "texture.h"
#include "ustring.h"

#include <tiffio.h>

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- helpers ---- */

static tex_image
noise_image(uint32_t w, uint32_t h, uint32_t nc, tex_type type, uint64_t seed)
{
    char      err[TEX_ERR_LEN];
    tex_image img;
    REQUIRE(tex_image_alloc(&img, w, h, nc, type, err) == TEX_OK);
    size_t n = (size_t)w * h * nc;
    for (size_t i = 0; i < n; i++) {
        uint64_t v = tex_test_rand(&seed);
        switch (type) {
        case TEX_TYPE_U8:
            ((uint8_t *)img.pixels)[i] = (uint8_t)v;
            break;
        case TEX_TYPE_U16:
            ((uint16_t *)img.pixels)[i] = (uint16_t)v;
            break;
        case TEX_TYPE_HALF:
            ((uint16_t *)img.pixels)[i] = tex_float_to_half((float)(v % 1000) / 500.0f);
            break;
        default:
            ((float *)img.pixels)[i] = (float)(v % 100000) / 7777.0f;
        }
    }
    return img;
}

/* Level `level` of an open tiled file, put together from its tiles. */
static tex_image
level_from_tiles(tex_tiff *f, const tex_tiff_info *info, uint32_t level)
{
    char      err[TEX_ERR_LEN];
    uint32_t  w, h, tw = info->tile_width, th = info->tile_height;
    tex_image img;
    REQUIRE(tex_tiff_level_size(f, level, &w, &h));
    REQUIRE(tex_image_alloc(&img, w, h, info->nchannels, info->type, err) == TEX_OK);
    img.srgb = info->srgb;
    size_t px = info->nchannels * tex_type_size(info->type);
    char  *tile = malloc((size_t)tw * th * px);
    REQUIRE(tile);
    for (uint32_t ty = 0; ty * th < h; ty++)
        for (uint32_t tx = 0; tx * tw < w; tx++) {
            tex_result r = tex_tiff_read_tile(f, level, tx, ty, tile, err);
            if (r != TEX_OK)
                RT_CHECK_FAIL_("tile (%u, %u) of level %u: %s", tx, ty, level, err);
            for (uint32_t y = 0; y < th && ty * th + y < h; y++) {
                uint32_t n = w - tx * tw < tw ? w - tx * tw : tw;
                memcpy((char *)img.pixels + ((size_t)(ty * th + y) * w + tx * tw) * px,
                       tile + (size_t)y * tw * px, n * px);
                /* the padding is zeroed */
                for (size_t b = n * px; b < tw * px; b++)
                    CHECK(tile[(size_t)y * tw * px + b] == 0);
            }
        }
    free(tile);
    return img;
}

static bool
same_pixels(const tex_image *a, const tex_image *b)
{
    return a->width == b->width && a->height == b->height && a->nchannels == b->nchannels &&
           a->type == b->type && memcmp(a->pixels, b->pixels, tex_image_bytes(a)) == 0;
}

/* Every level of `path` (tiled) equals the pyramid tex_image_downsample()
 * makes from `top`, and level 0 read by rows equals `top`. */
static void
check_levels(const char *path, const tex_image *top)
{
    char          err[TEX_ERR_LEN];
    tex_tiff     *f;
    tex_tiff_info info;
    REQUIRE(tex_tiff_open(path, &f, &info, err) == TEX_OK);
    CHECK(info.tiled);
    CHECK_EQ_INT(info.nlevels, tex_mip_levels(top->width, top->height));
    CHECK_EQ_INT(info.type, top->type);
    CHECK_EQ_INT(info.srgb, top->srgb);
    tex_image want = *top, next;
    REQUIRE(tex_image_alloc(&want, top->width, top->height, top->nchannels, top->type, err) ==
            TEX_OK);
    memcpy(want.pixels, top->pixels, tex_image_bytes(top));
    want.srgb = top->srgb; /* levels are averaged in linear light */
    for (uint32_t l = 0; l < info.nlevels; l++) {
        tex_image got = level_from_tiles(f, &info, l);
        if (!same_pixels(&got, &want))
            RT_CHECK_FAIL_("%s: level %u (%ux%u) differs from the pyramid", path, l, got.width,
                           got.height);
        tex_image_free(&got);
        if (l + 1 < info.nlevels) {
            REQUIRE(tex_image_downsample(&want, &next, err) == TEX_OK);
            tex_image_free(&want);
            want = next;
        }
    }
    tex_image_free(&want);
    tex_tiff_close(f);
    tex_image whole;
    REQUIRE(tex_image_read(path, &whole, err) == TEX_OK);
    CHECK(same_pixels(&whole, top));
    CHECK_EQ_INT(whole.srgb, top->srgb);
    tex_image_free(&whole);
}

/* Runs a command; its exit status. */
static int
run(const char *cmd)
{
    int s = system(cmd);
    return WIFEXITED(s) ? WEXITSTATUS(s) : -1;
}

/* ---- the tiled writer and maketx ---- */

/* tex_tiff_tiled_begin/put/end by hand, through a MIP chain, for every
 * sample type and channel count: each level as the pyramid, read back
 * tile by tile. */
static tex_result
band_put(void *ctx, uint32_t level, uint32_t y0, const tex_image *band, char err[TEX_ERR_LEN])
{
    return tex_tiff_tiled_put(ctx, level, y0, band, err);
}

static void
case_writer(const char *arg)
{
    (void)arg;
    static const struct {
        uint32_t w, h, nc, tile;
        tex_type type;
        bool     srgb;
    } kinds[] = {{150, 97, 3, 64, TEX_TYPE_U8, true},
                 {64, 64, 4, 16, TEX_TYPE_U8, false},
                 {1, 37, 1, 16, TEX_TYPE_U16, true},
                 {300, 7, 2, 32, TEX_TYPE_HALF, false},
                 {33, 65, 4, 16, TEX_TYPE_FLOAT, false}};
    char err[TEX_ERR_LEN];
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        tex_image src = noise_image(kinds[k].w, kinds[k].h, kinds[k].nc, kinds[k].type, k + 1);
        src.srgb = kinds[k].srgb;
        const char      *path = tex_test_path("writer.tx");
        uint32_t         nlevels = tex_mip_levels(src.width, src.height);
        tex_tiff_writer *w;
        tex_mip_chain   *c;
        REQUIRE(tex_tiff_tiled_begin(path, &src, nlevels, kinds[k].tile, "test", &w, err) ==
                TEX_OK);
        REQUIRE(tex_mip_chain_new(&src, nlevels, kinds[k].tile, band_put, w, &c, err) == TEX_OK);
        size_t row = (size_t)src.width * src.nchannels * tex_type_size(src.type);
        for (uint32_t y = 0; y < src.height; y++)
            REQUIRE(tex_mip_chain_push(c, (char *)src.pixels + y * row, err) == TEX_OK);
        tex_mip_chain_free(c);
        REQUIRE(tex_tiff_tiled_end(w, true, err) == TEX_OK);
        check_levels(path, &src);
        tex_image_free(&src);
    }
}

/* What the writer refuses, and that a failed write leaves nothing. */
static void
case_writer_invalid(const char *arg)
{
    (void)arg;
    char             err[TEX_ERR_LEN];
    tex_image        img = noise_image(40, 40, 3, TEX_TYPE_U8, 9);
    tex_tiff_writer *w;
    const char      *path = tex_test_path("invalid.tx");
    CHECK_EQ_INT(tex_tiff_tiled_begin(path, &img, 1, 20, NULL, &w, err), TEX_ERR_INVALID);
    CHECK_CONTAINS(err, "multiple of 16");
    CHECK_EQ_INT(tex_tiff_tiled_begin(path, &img, 3, 16, NULL, &w, err), TEX_ERR_INVALID);
    CHECK_EQ_INT(tex_tiff_tiled_begin("/nonexistent/dir/x.tx", &img, 1, 16, NULL, &w, err),
                 TEX_ERR_WRITE);
    CHECK_CONTAINS(err, "No such file");
    /* A band of the wrong width, a row twice, a row never written. */
    REQUIRE(tex_tiff_tiled_begin(path, &img, 1, 16, NULL, &w, err) == TEX_OK);
    tex_image band = img;
    band.height = 16;
    band.width = 39;
    CHECK_EQ_INT(tex_tiff_tiled_put(w, 0, 0, &band, err), TEX_ERR_INVALID);
    band.width = 40;
    CHECK_EQ_INT(tex_tiff_tiled_put(w, 0, 0, &band, err), TEX_OK);
    CHECK_EQ_INT(tex_tiff_tiled_put(w, 0, 0, &band, err), TEX_ERR_INVALID);
    CHECK_EQ_INT(tex_tiff_tiled_put(w, 0, 8, &band, err), TEX_ERR_INVALID);
    CHECK_EQ_INT(tex_tiff_tiled_end(w, true, err), TEX_ERR_INVALID);
    CHECK_CONTAINS(err, "2 rows of tiles were never written");
    struct stat st;
    CHECK(stat(path, &st) != 0);
    DIR *d = opendir(tex_test_dir());
    REQUIRE(d);
    for (struct dirent *e; (e = readdir(d));)
        if (strstr(e->d_name, "invalid.tx"))
            RT_CHECK_FAIL_("left behind: %s", e->d_name);
    closedir(d);
    tex_image_free(&img);
}

/* maketx writes .tx by default (`maketx in.png` makes in.tx, saying so),
 * keeps 8-bit sRGB samples, and makes --raw, --half and --float ones: each
 * level is the pyramid of what it stores. */
static void
case_maketx(const char *arg)
{
    (void)arg;
    char      err[TEX_ERR_LEN], cmd[2048];
    tex_image png = noise_image(150, 97, 3, TEX_TYPE_U8, 3);
    png.srgb = true;
    const char *in = tex_test_path("maketx.png");
    REQUIRE(tex_png_write(in, &png, err) == TEX_OK);
    const char *log = tex_test_path("maketx.log");
    snprintf(cmd, sizeof cmd, "'%s' '%s' 2>'%s'", MAKETX, in, log);
    REQUIRE(run(cmd) == 0);
    size_t n;
    char  *said = (char *)tex_test_file_read(log, &n);
    CHECK_CONTAINS(said, "maketx.tx: tiled MIP-mapped TIFF, 150x97 RGB 8-bit sRGB, 8 levels");
    free(said);
    check_levels(tex_test_path("maketx.tx"), &png);

    static const struct {
        const char *flags, *name;
        tex_type    type;
        bool        srgb;
    } kinds[] = {{"--raw --tile 16", "raw.tif", TEX_TYPE_U8, false},
                 {"--half", "half.tx", TEX_TYPE_HALF, false},
                 {"--float --tile 32", "float.tiff", TEX_TYPE_FLOAT, false}};
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        const char *out = tex_test_path(kinds[k].name);
        snprintf(cmd, sizeof cmd, "'%s' %s -o '%s' '%s' 2>/dev/null", MAKETX, kinds[k].flags, out,
                 in);
        REQUIRE(run(cmd) == 0);
        tex_image top = png;
        if (kinds[k].type != TEX_TYPE_U8) {
            REQUIRE(tex_image_convert(&png, kinds[k].type, false, &top, err) == TEX_OK);
        } else {
            REQUIRE(tex_image_alloc(&top, 150, 97, 3, TEX_TYPE_U8, err) == TEX_OK);
            memcpy(top.pixels, png.pixels, tex_image_bytes(&png));
        }
        top.srgb = kinds[k].srgb;
        check_levels(out, &top);
        tex_image_free(&top);
    }
    snprintf(cmd, sizeof cmd, "'%s' --tile 24 -o '%s' '%s' 2>/dev/null", MAKETX,
             tex_test_path("x.tx"), in);
    CHECK_EQ_INT(run(cmd), 2); /* TIFF tiles are multiples of 16 */
    tex_image_free(&png);
}

/* ---- strips, byte orders, the texture system ---- */

/* Writes img as a TIFF in strips of `rows` rows, in `mode` ("w": host
 * order; "wb": big-endian). */
static void
strips_write(const char *path, const tex_image *img, uint32_t rows, const char *mode,
             uint16_t compression)
{
    TIFF *t = TIFFOpen(path, mode);
    REQUIRE(t);
    bool floats = img->type >= TEX_TYPE_HALF;
    TIFFSetField(t, TIFFTAG_IMAGEWIDTH, img->width);
    TIFFSetField(t, TIFFTAG_IMAGELENGTH, img->height);
    TIFFSetField(t, TIFFTAG_SAMPLESPERPIXEL, (uint16_t)img->nchannels);
    TIFFSetField(t, TIFFTAG_BITSPERSAMPLE, (uint16_t)(8 * tex_type_size(img->type)));
    TIFFSetField(t, TIFFTAG_SAMPLEFORMAT, floats ? SAMPLEFORMAT_IEEEFP : SAMPLEFORMAT_UINT);
    TIFFSetField(t, TIFFTAG_PHOTOMETRIC,
                 img->nchannels >= 3 ? PHOTOMETRIC_RGB : PHOTOMETRIC_MINISBLACK);
    TIFFSetField(t, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG);
    TIFFSetField(t, TIFFTAG_ROWSPERSTRIP, rows);
    TIFFSetField(t, TIFFTAG_COMPRESSION, compression);
    if (img->nchannels == 2 || img->nchannels == 4) {
        uint16_t extra = EXTRASAMPLE_UNASSALPHA;
        TIFFSetField(t, TIFFTAG_EXTRASAMPLES, 1, &extra);
    }
    size_t row = (size_t)img->width * img->nchannels * tex_type_size(img->type);
    char  *buf = malloc(row); /* libtiff swaps the bytes of what it is given, in place */
    REQUIRE(buf);
    for (uint32_t y = 0; y < img->height; y++) {
        memcpy(buf, (char *)img->pixels + y * row, row);
        REQUIRE(TIFFWriteScanline(t, buf, y, 0) == 1);
    }
    free(buf);
    TIFFClose(t);
}

/* TIFFs in strips (no tiles, one level), either byte order, compressed or
 * not: read whole and by rows as written; the texture system decodes and
 * spills them like a PNG. */
static void
case_strips(const char *arg)
{
    (void)arg;
    static const struct {
        uint32_t nc;
        tex_type type;
        uint32_t rows;
        char     mode[4];
        uint16_t compression;
    } kinds[] = {{3, TEX_TYPE_U16, 7, "wb", COMPRESSION_LZW},
                 {1, TEX_TYPE_FLOAT, 1, "wb", COMPRESSION_ADOBE_DEFLATE},
                 {4, TEX_TYPE_U8, 50, "wl", COMPRESSION_NONE},
                 {2, TEX_TYPE_HALF, 3, "w", COMPRESSION_PACKBITS}};
    char err[TEX_ERR_LEN];
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        tex_image img = noise_image(45, 31, kinds[k].nc, kinds[k].type, 20 + k);
        img.srgb = kinds[k].type <= TEX_TYPE_U16;
        const char *path = tex_test_path("strips.tif");
        strips_write(path, &img, kinds[k].rows, kinds[k].mode, kinds[k].compression);
        tex_image got;
        REQUIRE(tex_image_read(path, &got, err) == TEX_OK);
        if (!same_pixels(&got, &img))
            RT_CHECK_FAIL_("kind %zu: pixels differ", k);
        CHECK_EQ_INT(got.srgb, img.srgb);
        tex_test_rows_check(tex_image_read_rows, path, &got);
        tex_image_free(&got);
        tex_tiff     *f;
        tex_tiff_info info;
        REQUIRE(tex_tiff_open(path, &f, &info, err) == TEX_OK);
        CHECK(!info.tiled);
        CHECK_EQ_INT(info.nlevels, 1);
        char tile[16];
        CHECK_EQ_INT(tex_tiff_read_tile(f, 0, 0, 0, tile, err), TEX_ERR_INVALID);
        tex_tiff_close(f);
        tex_image_free(&img);
    }
}

/* The texture system reads a .tx tile by tile (tiled_on_disk), each level
 * what the file holds, under the open-file cap like a tiled EXR. */
static void
case_system(const char *arg)
{
    (void)arg;
    char      err[TEX_ERR_LEN], cmd[2048];
    tex_image png = noise_image(96, 80, 3, TEX_TYPE_U8, 5);
    png.srgb = true;
    const char *in = tex_test_path("sys.png");
    REQUIRE(tex_png_write(in, &png, err) == TEX_OK);
    const char *paths[2] = {tex_test_path("sys_a.tx"), tex_test_path("sys_b.tx")};
    for (int i = 0; i < 2; i++) {
        snprintf(cmd, sizeof cmd, "'%s' --tile 16 -o '%s' '%s' 2>/dev/null", MAKETX, paths[i], in);
        REQUIRE(run(cmd) == 0);
    }
    tex_system *ts;
    REQUIRE(tex_system_create(&(tex_config){.max_open_files = 1}, &ts, NULL) == TEX_OK);
    tex_thread *tc;
    REQUIRE(tex_thread_create(ts, &tc) == TEX_OK);
    ustr          names[2] = {ustr_intern_cstr(paths[0]), ustr_intern_cstr(paths[1])};
    tex_file_info fi;
    REQUIRE(tex_file_info_get(ts, names[0], &fi) == TEX_OK);
    CHECK(fi.tiled_on_disk);
    CHECK(fi.srgb);
    CHECK_EQ_INT(fi.nlevels, 7);
    CHECK_EQ_INT(fi.tile_width, 16);
    tex_image lv = png, next;
    REQUIRE(tex_image_alloc(&lv, 96, 80, 3, TEX_TYPE_U8, err) == TEX_OK);
    memcpy(lv.pixels, png.pixels, tex_image_bytes(&png));
    lv.srgb = true; /* levels are averaged in linear light */
    int bad = 0;
    for (uint32_t l = 0; l < fi.nlevels; l++) {
        tex_derivs d = {.dsdx = (float)(1u << l) / 96, .dtdy = (float)(1u << l) / 80};
        tex_opts   o = {.filter = TEX_FILTER_CLOSEST};
        for (uint32_t y = 0; y < lv.height; y++)
            for (uint32_t x = 0; x < lv.width; x++) {
                float rgba[4];
                /* alternate files: each lookup reopens the other's handle */
                ustr name = names[(x + y) & 1];
                CHECK_EQ_INT(tex_lookup(ts, tc, name, (x + 0.5f) / lv.width, (y + 0.5f) / lv.height,
                                        &d, &o, rgba),
                             TEX_OK);
                for (int c = 0; c < 3; c++) {
                    float v = ((uint8_t *)lv.pixels)[((size_t)y * lv.width + x) * 3 + c] / 255.0f;
                    if (fabsf(rgba[c] - tex_srgb_to_linear(v)) > 1e-6f && bad++ < 5)
                        RT_CHECK_FAIL_("level %u texel (%u, %u): %f", l, x, y, rgba[c]);
                }
            }
        if (l + 1 < fi.nlevels) {
            REQUIRE(tex_image_downsample(&lv, &next, err) == TEX_OK);
            tex_image_free(&lv);
            lv = next;
        }
    }
    tex_stats s;
    tex_system_stats(ts, &s);
    CHECK(s.files_closed > 0); /* the cap of 1 closed handles */
    CHECK(s.bytes_read > 0);
    CHECK_EQ_U64(s.file_errors, 0);
    tex_image_free(&lv);
    tex_thread_destroy(tc);
    tex_system_destroy(ts);
    tex_image_free(&png);
}

/* Level-0 lookups of `a` and `b` (8-bit RGBA, sRGB; `img` is a's pixels)
 * agree within one 8-bit step of premultiplied colour (however it was
 * rounded: OpenImageIO's differs from ours by one), where alpha is
 * 64 or more (below, a step of premultiplied colour is several steps of
 * straight). */
static void
lookups_agree(const char *a_path, const char *b_path, const tex_image *img)
{
    tex_system *ts;
    tex_thread *tc;
    REQUIRE(tex_system_create(&(tex_config){0}, &ts, NULL) == TEX_OK);
    REQUIRE(tex_thread_create(ts, &tc) == TEX_OK);
    ustr       a = ustr_intern_cstr(a_path), b = ustr_intern_cstr(b_path);
    tex_derivs d = {.dsdx = 1.0f / (float)img->width, .dtdy = 1.0f / (float)img->height};
    tex_opts   o = {.filter = TEX_FILTER_CLOSEST};
    int        bad = 0;
    for (uint32_t y = 0; y < img->height; y++)
        for (uint32_t x = 0; x < img->width; x++) {
            float    va[4], vb[4];
            float    u = (x + 0.5f) / (float)img->width, v = (y + 0.5f) / (float)img->height;
            unsigned alpha = ((const uint8_t *)img->pixels)[4 * (y * img->width + x) + 3];
            CHECK_EQ_INT(tex_lookup(ts, tc, a, u, v, &d, &o, va), TEX_OK);
            CHECK_EQ_INT(tex_lookup(ts, tc, b, u, v, &d, &o, vb), TEX_OK);
            float tol = (255.0f / (float)alpha + 0.5f) / 255.0f + 1e-4f;
            for (int c = 0; c < 3 && alpha >= 64; c++)
                if (fabsf(tex_linear_to_srgb(va[c]) - tex_linear_to_srgb(vb[c])) > tol && bad++ < 5)
                    RT_CHECK_FAIL_("texel (%u, %u) channel %d: %f against %f (alpha %u)", x, y, c,
                                   tex_linear_to_srgb(va[c]), tex_linear_to_srgb(vb[c]), alpha);
        }
    tex_thread_destroy(tc);
    tex_system_destroy(ts);
}

/* One RGBA texture as a straight-alpha PNG and as a tiled TIFF whose
 * ExtraSamples say its colour is premultiplied (associated alpha, as
 * OpenImageIO's maketx writes a .tx): lookups of every level-0 texel
 * agree within a step of the premultiplied values (alpha 128 or more
 * here). tex_tiff.oiio checks a .tx from OpenImageIO's maketx so. Read as
 * straight, the TIFF's colour came out darker by alpha: a lens texture's
 * mean 0.047 from the .tx against 0.211 from its PNG. */
static void
case_associated(const char *arg)
{
    (void)arg;
    char      err[TEX_ERR_LEN], png_path[4200], tx_path[4200];
    uint32_t  w = 64, h = 48;
    tex_image straight, premul;
    REQUIRE(tex_image_alloc(&straight, w, h, 4, TEX_TYPE_U8, err) == TEX_OK);
    REQUIRE(tex_image_alloc(&premul, w, h, 4, TEX_TYPE_U8, err) == TEX_OK);
    for (uint32_t i = 0; i < w * h; i++) {
        uint8_t *s = (uint8_t *)straight.pixels + 4 * i, *p = (uint8_t *)premul.pixels + 4 * i;
        unsigned a = 128 + (i * 37) % 128;
        for (int c = 0; c < 3; c++) {
            s[c] = (uint8_t)((i * 13 + (unsigned)c * 85) % 256);
            p[c] = (uint8_t)((s[c] * a + 127) / 255);
        }
        s[3] = p[3] = (uint8_t)a;
    }
    straight.srgb = premul.srgb = true;
    premul.associated = true;
    snprintf(png_path, sizeof png_path, "%s", tex_test_path("assoc.png"));
    snprintf(tx_path, sizeof tx_path, "%s", tex_test_path("assoc.tx"));
    REQUIRE(tex_png_write(png_path, &straight, err) == TEX_OK);
    tex_tiff_writer *wr;
    REQUIRE(tex_tiff_tiled_begin(tx_path, &premul, 1, 16, "test", &wr, err) == TEX_OK);
    for (uint32_t y0 = 0; y0 < h; y0 += 16) { /* in bands of a tile's rows */
        tex_image band = premul;
        band.height = h - y0 < 16 ? h - y0 : 16;
        band.pixels = (uint8_t *)premul.pixels + (size_t)y0 * w * 4;
        REQUIRE(tex_tiff_tiled_put(wr, 0, y0, &band, err) == TEX_OK);
    }
    REQUIRE(tex_tiff_tiled_end(wr, true, err) == TEX_OK);
    lookups_agree(png_path, tx_path, &straight);
    tex_image_free(&straight);
    tex_image_free(&premul);
}

/* ---- OpenImageIO's files ---- */

/* .tx files made by OpenImageIO's maketx (8-bit, 16-bit, half): every
 * level as OpenImageIO's own oiiotool reads it (--selectmip, written out
 * as a TIFF in strips). Skipped where OpenImageIO is not installed. */
static void
case_oiio(const char *arg)
{
    (void)arg;
    if (access("/usr/bin/maketx", X_OK) != 0 || access("/usr/bin/oiiotool", X_OK) != 0) {
        printf("skipped: OpenImageIO's maketx and oiiotool are not installed "
               "(apt-get install openimageio-tools, and this case runs)\n");
        exit(TEX_TEST_SKIP);
    }
    char      err[TEX_ERR_LEN], cmd[3 * 4200 + 200]; /* three paths */
    tex_image png = noise_image(150, 97, 4, TEX_TYPE_U8, 7);
    char      in[4200], tx[4200], lvpath[4200]; /* tex_test_path()'s buffers are reused */
    snprintf(in, sizeof in, "%s", tex_test_path("oiio.png"));
    snprintf(tx, sizeof tx, "%s", tex_test_path("oiio.tx"));
    snprintf(lvpath, sizeof lvpath, "%s", tex_test_path("oiio_level.tif"));
    REQUIRE(tex_png_write(in, &png, err) == TEX_OK);
    static const char *types[] = {"uint8", "uint16", "half"};
    for (int k = 0; k < 3; k++) {
        snprintf(cmd, sizeof cmd, "/usr/bin/maketx -d %s '%s' -o '%s' >/dev/null", types[k], in,
                 tx);
        REQUIRE(run(cmd) == 0);
        tex_tiff     *f;
        tex_tiff_info info;
        REQUIRE(tex_tiff_open(tx, &f, &info, err) == TEX_OK);
        CHECK_EQ_INT(info.nlevels, 8); /* 150x97 ... 1x1 */
        CHECK_EQ_INT(info.nchannels, 4);
        CHECK_EQ_INT(info.srgb, k < 2);
        for (uint32_t l = 0; l < info.nlevels; l++) {
            snprintf(cmd, sizeof cmd, "/usr/bin/oiiotool '%s' --selectmip %u -o '%s' >/dev/null",
                     tx, l, lvpath);
            REQUIRE(run(cmd) == 0);
            tex_image want, got = level_from_tiles(f, &info, l);
            REQUIRE(tex_image_read(lvpath, &want, err) == TEX_OK);
            if (!same_pixels(&got, &want))
                RT_CHECK_FAIL_("%s: level %u differs from oiiotool's", types[k], l);
            tex_image_free(&got), tex_image_free(&want);
        }
        tex_tiff_close(f);
        if (k == 0) /* its RGBA is premultiplied: lookups as the PNG's */
            lookups_agree(in, tx, &png);
    }
    tex_image_free(&png);
}

/* ---- bad input ---- */

/* Opens `path` and reads every tile of every level, expecting `want` (from
 * the open or the first failing read) with `word` in one line, and
 * nothing printed. */
static void
expect_bad(const char *path, tex_result want, const char *word)
{
    char          err[TEX_ERR_LEN] = "";
    tex_tiff     *f = NULL;
    tex_tiff_info info;
    tex_test_stderr_capture();
    tex_result r = tex_tiff_open(path, &f, &info, err);
    if (r == TEX_OK) {
        size_t px = info.nchannels * tex_type_size(info.type);
        char  *tile = info.tiled ? malloc((size_t)info.tile_width * info.tile_height * px) : NULL;
        for (uint32_t l = 0; r == TEX_OK && tile && l < info.nlevels; l++) {
            uint32_t w, h;
            tex_tiff_level_size(f, l, &w, &h);
            for (uint32_t ty = 0; r == TEX_OK && ty * info.tile_height < h; ty++)
                for (uint32_t tx = 0; r == TEX_OK && tx * info.tile_width < w; tx++)
                    r = tex_tiff_read_tile(f, l, tx, ty, tile, err);
        }
        free(tile);
        tex_tiff_close(f);
    }
    tex_image  img = {0};
    char       err2[TEX_ERR_LEN] = "";
    tex_result r2 = r == TEX_OK ? tex_image_read(path, &img, err2) : r;
    size_t     printed = tex_test_stderr_release();
    if (r == TEX_OK) {
        r = r2;
        memcpy(err, err2, sizeof err);
    }
    printf("%s: %s\n", tex_result_str(r), err);
    if (r != want)
        RT_CHECK_FAIL_("%s: %s (%s), want %s", path, tex_result_str(r), err, tex_result_str(want));
    CHECK_CONTAINS(err, word);
    CHECK_ONE_LINE(err);
    CHECK_EQ_INT(printed, 0);
    tex_image_free(&img);
}

/* A small tiled .tx of ours to damage. */
static unsigned char *
good_tx(size_t *n)
{
    char      err[TEX_ERR_LEN];
    tex_image img = noise_image(64, 48, 3, TEX_TYPE_U8, 11);
    img.srgb = true;
    const char      *path = tex_test_path("good.tx");
    tex_tiff_writer *w;
    REQUIRE(tex_tiff_tiled_begin(path, &img, 1, 16, NULL, &w, err) == TEX_OK);
    for (uint32_t y0 = 0; y0 < 48; y0 += 16) {
        tex_image band = img;
        band.height = 16;
        band.pixels = (char *)img.pixels + (size_t)y0 * 64 * 3;
        REQUIRE(tex_tiff_tiled_put(w, 0, y0, &band, err) == TEX_OK);
    }
    REQUIRE(tex_tiff_tiled_end(w, true, err) == TEX_OK);
    tex_image_free(&img);
    return (unsigned char *)tex_test_file_read(path, n);
}

/* Sets the value of `tag` in the first directory of a little-endian
 * classic TIFF. */
static void
ifd_patch(unsigned char *d, size_t n, uint16_t tag, uint32_t value)
{
    REQUIRE(n > 8 && d[0] == 'I');
    uint32_t ifd = d[4] | d[5] << 8 | d[6] << 16 | (uint32_t)d[7] << 24;
    REQUIRE(ifd + 2 <= n);
    uint16_t count = (uint16_t)(d[ifd] | d[ifd + 1] << 8);
    for (uint16_t i = 0; i < count; i++) {
        unsigned char *e = d + ifd + 2 + 12 * i;
        REQUIRE((size_t)(e + 12 - d) <= n);
        if ((e[0] | e[1] << 8) != tag)
            continue;
        uint16_t type = (uint16_t)(e[2] | e[3] << 8);
        for (int b = 0; b < (type == TIFF_SHORT ? 2 : 4); b++)
            e[8 + b] = (unsigned char)(value >> (8 * b));
        return;
    }
    RT_CHECK_FAIL_("tag %u not found", tag);
}

static void
case_bad_header(const char *arg)
{
    (void)arg;
    const char *path = tex_test_path("bad.tx");
    tex_test_file_write(path, "II*\0\x08\0\0\0garbage", 15);
    expect_bad(path, TEX_ERR_CORRUPT, "bad header");
    tex_test_file_write(path, "MM\0+\0\x08\0\0", 8); /* BigTIFF, cut */
    expect_bad(path, TEX_ERR_CORRUPT, "bad header");
    tex_test_file_write(path, "GIF89a", 6);
    expect_bad(path, TEX_ERR_FORMAT, "not a TIFF file");
    tex_test_file_write(path, "", 0);
    expect_bad(path, TEX_ERR_FORMAT, "not a TIFF file");
    tex_test_file_write(path, "II*\0\x08\0\0\0\x01\0", 10); /* a directory cut short */
    expect_bad(path, TEX_ERR_CORRUPT, "bad header");
    expect_bad(tex_test_path("missing.tx"), TEX_ERR_OPEN, "cannot open");
    REQUIRE(mkfifo(tex_test_path("fifo.tx"), 0600) == 0);
    expect_bad(tex_test_path("fifo.tx"), TEX_ERR_OPEN, "not a regular file");
}

/* A 4x4 TIFF in strips of zeros with these tags, as libtiff writes it. */
static void
layout_write(const char *path, uint16_t spp, uint16_t bits, uint16_t format, uint16_t photometric,
             uint16_t planar)
{
    TIFF *t = TIFFOpen(path, "w");
    REQUIRE(t);
    TIFFSetField(t, TIFFTAG_IMAGEWIDTH, 4);
    TIFFSetField(t, TIFFTAG_IMAGELENGTH, 4);
    TIFFSetField(t, TIFFTAG_SAMPLESPERPIXEL, spp);
    TIFFSetField(t, TIFFTAG_BITSPERSAMPLE, bits);
    TIFFSetField(t, TIFFTAG_SAMPLEFORMAT, format);
    TIFFSetField(t, TIFFTAG_PHOTOMETRIC, photometric);
    TIFFSetField(t, TIFFTAG_PLANARCONFIG, planar);
    if (photometric == PHOTOMETRIC_PALETTE) {
        uint16_t map[256] = {0};
        TIFFSetField(t, TIFFTAG_COLORMAP, map, map, map);
    }
    if (spp > 4 || (spp == 2 && photometric == PHOTOMETRIC_RGB)) {
        uint16_t extra[8] = {0};
        TIFFSetField(t, TIFFTAG_EXTRASAMPLES, spp > 4 ? spp - 3 : 0, extra);
    }
    unsigned char zeros[4 * 4 * 8 * 8] = {0};
    uint32_t      planes = planar == PLANARCONFIG_SEPARATE ? spp : 1;
    for (uint32_t p = 0; p < planes; p++)
        REQUIRE(TIFFWriteEncodedStrip(t, p, zeros, (tmsize_t)TIFFStripSize(t)) > 0);
    TIFFClose(t);
}

/* Layouts we do not read, each refused by name. */
static void
case_bad_layouts(const char *arg)
{
    (void)arg;
    static const struct {
        uint16_t    spp, bits, format, photometric, planar;
        const char *word;
    } kinds[] = {
        {5, 8, SAMPLEFORMAT_UINT, PHOTOMETRIC_RGB, PLANARCONFIG_CONTIG, "5 samples per pixel"},
        {3, 12, SAMPLEFORMAT_UINT, PHOTOMETRIC_RGB, PLANARCONFIG_CONTIG, "12-bit unsigned"},
        {1, 32, SAMPLEFORMAT_UINT, PHOTOMETRIC_MINISBLACK, PLANARCONFIG_CONTIG, "32-bit unsigned"},
        {1, 16, SAMPLEFORMAT_INT, PHOTOMETRIC_MINISBLACK, PLANARCONFIG_CONTIG, "16-bit signed"},
        {1, 64, SAMPLEFORMAT_IEEEFP, PHOTOMETRIC_MINISBLACK, PLANARCONFIG_CONTIG,
         "64-bit floating-point"},
        {1, 8, SAMPLEFORMAT_UINT, PHOTOMETRIC_PALETTE, PLANARCONFIG_CONTIG, "palette"},
        {4, 8, SAMPLEFORMAT_UINT, PHOTOMETRIC_SEPARATED, PLANARCONFIG_CONTIG, "CMYK"},
        {1, 8, SAMPLEFORMAT_UINT, PHOTOMETRIC_MINISWHITE, PLANARCONFIG_CONTIG, "MinIsWhite"},
        {3, 8, SAMPLEFORMAT_UINT, PHOTOMETRIC_RGB, PLANARCONFIG_SEPARATE, "separate sample planes"},
        {3, 8, SAMPLEFORMAT_UINT, PHOTOMETRIC_MINISBLACK, PLANARCONFIG_CONTIG, "3 samples of grey"},
    };
    char path[4200];
    snprintf(path, sizeof path, "%s", tex_test_path("layout.tif"));
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        layout_write(path, kinds[k].spp, kinds[k].bits, kinds[k].format, kinds[k].photometric,
                     kinds[k].planar);
        expect_bad(path, TEX_ERR_UNSUPPORTED, kinds[k].word);
    }
}

/* Sizes, tiles and tables out of bounds, patched into a good file. */
static void
case_bad_sizes(const char *arg)
{
    (void)arg;
    char path[4200];
    snprintf(path, sizeof path, "%s", tex_test_path("bad.tx"));
    static const struct {
        uint16_t    tag, tag2;
        uint32_t    value;
        tex_result  want;
        const char *word;
    } kinds[] = {
        {TIFFTAG_IMAGEWIDTH, TIFFTAG_IMAGELENGTH, 65535, TEX_ERR_TOO_LARGE, "limit"},
        {TIFFTAG_IMAGELENGTH, 0, 0, TEX_ERR_CORRUPT, "bad header"},
        {TIFFTAG_TILEWIDTH, TIFFTAG_TILELENGTH, 65520, TEX_ERR_TOO_LARGE, "limit"},
        {TIFFTAG_TILELENGTH, 0, 0, TEX_ERR_CORRUPT, "bad header"},
        {TIFFTAG_SAMPLESPERPIXEL, 0, 7, TEX_ERR_CORRUPT, "bad header"},
        {TIFFTAG_COMPRESSION, 0, 60000, TEX_ERR_UNSUPPORTED, "compression 60000"},
        /* a million 16x16 tiles claimed by a file of a few KB */
        {TIFFTAG_IMAGEWIDTH, TIFFTAG_IMAGELENGTH, 16000, TEX_ERR_CORRUPT, "tiles in a file of"},
        {TIFFTAG_TILEOFFSETS, 0, 0xfffffff0u, TEX_ERR_CORRUPT, "tile (0, 0) of level 0"},
        {TIFFTAG_TILEBYTECOUNTS, 0, 0x7ffffff0u, TEX_ERR_CORRUPT, "tile (0, 0) of level 0"}};
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        size_t         n;
        unsigned char *d = good_tx(&n);
        ifd_patch(d, n, kinds[k].tag, kinds[k].value);
        if (kinds[k].tag2)
            ifd_patch(d, n, kinds[k].tag2, kinds[k].value);
        tex_test_file_write(path, d, n);
        expect_bad(path, kinds[k].want, kinds[k].word);
        free(d);
    }
}

/* Cut short, or its compressed tiles overwritten: an error naming the
 * tile, never a crash or a hang. */
static void
case_bad_data(const char *arg)
{
    (void)arg;
    char           path[4200];
    size_t         n;
    unsigned char *d = good_tx(&n);
    snprintf(path, sizeof path, "%s", tex_test_path("bad.tx"));
    tex_test_file_write(path, d, n / 2); /* the directory is at the end */
    expect_bad(path, TEX_ERR_CORRUPT, "bad header: can not read TIFF directory");
    memset(d + 16, 0x5a, n / 3); /* tile data, after the 8-byte header */
    tex_test_file_write(path, d, n);
    expect_bad(path, TEX_ERR_CORRUPT, "tile (");
    free(d);
}

/* An uncompressed tiled TIFF whose tile table lies past the end of the
 * file: libtiff says so, then reads the tile from offset 0 (the header's
 * bytes) and calls it a success; the reader must call it damage. */
static void
case_bad_table(const char *arg)
{
    (void)arg;
    char path[4200];
    snprintf(path, sizeof path, "%s", tex_test_path("table.tif"));
    TIFF *t = TIFFOpen(path, "w");
    REQUIRE(t);
    TIFFSetField(t, TIFFTAG_IMAGEWIDTH, 32);
    TIFFSetField(t, TIFFTAG_IMAGELENGTH, 32);
    TIFFSetField(t, TIFFTAG_TILEWIDTH, 16);
    TIFFSetField(t, TIFFTAG_TILELENGTH, 16);
    TIFFSetField(t, TIFFTAG_SAMPLESPERPIXEL, 1);
    TIFFSetField(t, TIFFTAG_BITSPERSAMPLE, 8);
    TIFFSetField(t, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_MINISBLACK);
    TIFFSetField(t, TIFFTAG_COMPRESSION, COMPRESSION_NONE);
    unsigned char tile[256];
    memset(tile, 7, sizeof tile);
    for (uint32_t i = 0; i < 4; i++)
        REQUIRE(TIFFWriteEncodedTile(t, i, tile, sizeof tile) == sizeof tile);
    TIFFClose(t);
    size_t         n;
    unsigned char *d = tex_test_file_read(path, &n);
    ifd_patch(d, n, TIFFTAG_TILEOFFSETS, 0xfffffff0u);
    tex_test_file_write(path, d, n);
    expect_bad(path, TEX_ERR_CORRUPT, "tile (0, 0) of level 0");
    free(d);
}

static void
count_report(void *ctx, const char *name, const char *reason)
{
    (void)name, (void)reason;
    ++*(int *)ctx;
}

/* A .tx whose tiles turn out damaged: its lookups give the fill colour,
 * the failure is reported once, and its handle is closed at once (not
 * kept open, outside the open-file cap, until the system ends). */
static void
case_system_broken(const char *arg)
{
    (void)arg;
    char      path[4200], png[4200], cmd[9000], err[TEX_ERR_LEN];
    tex_image img = noise_image(64, 48, 3, TEX_TYPE_U8, 13);
    img.srgb = true;
    snprintf(png, sizeof png, "%s", tex_test_path("broken.png"));
    snprintf(path, sizeof path, "%s", tex_test_path("broken.tx"));
    REQUIRE(tex_png_write(png, &img, err) == TEX_OK);
    tex_image_free(&img);
    snprintf(cmd, sizeof cmd, "'%s' --tile 16 -o '%s' '%s' 2>/dev/null", MAKETX, path, png);
    REQUIRE(run(cmd) == 0); /* MIP-mapped: read tile by tile, not decoded whole */
    size_t         n;
    unsigned char *d = tex_test_file_read(path, &n);
    memset(d + 16, 0x5a, n / 3); /* level 0's first tiles, written first */
    tex_test_file_write(path, d, n);
    free(d);
    tex_system *ts;
    int         reports = 0;
    REQUIRE(tex_system_create(&(tex_config){.report = count_report, .report_ctx = &reports}, &ts,
                              NULL) == TEX_OK);
    tex_thread *tc;
    REQUIRE(tex_thread_create(ts, &tc) == TEX_OK);
    ustr       name = ustr_intern_cstr(path);
    tex_derivs dv = {0};
    tex_opts   o = {.filter = TEX_FILTER_CLOSEST, .fill = {1, 0, 1, 1}};
    float      rgba[4];
    for (int k = 0; k < 10; k++)
        tex_lookup(ts, tc, name, 0.1f * k, 0.5f, &dv, &o, rgba);
    CHECK(rgba[0] == 1 && rgba[1] == 0 && rgba[2] == 1); /* the fill */
    tex_stats st;
    tex_system_stats(ts, &st);
    CHECK_EQ_INT(reports, 1);
    CHECK_EQ_U64(st.file_errors, 1);
    CHECK_EQ_U64(st.files_closed, 1); /* the broken file's handle, at once */
    CHECK_EQ_U64(st.files_opened, 1); /* and never again */
    tex_thread_destroy(tc);
    tex_system_destroy(ts);
}

/* A directory whose next-directory offset points at itself: the levels
 * end, the file reads. */
static void
case_bad_loop(const char *arg)
{
    (void)arg;
    char           path[4200];
    size_t         n;
    unsigned char *d = good_tx(&n);
    snprintf(path, sizeof path, "%s", tex_test_path("loop.tx"));
    uint32_t       ifd = d[4] | d[5] << 8 | d[6] << 16 | (uint32_t)d[7] << 24;
    uint16_t       count = (uint16_t)(d[ifd] | d[ifd + 1] << 8);
    unsigned char *next = d + ifd + 2 + 12 * count;
    REQUIRE((size_t)(next + 4 - d) <= n);
    for (int b = 0; b < 4; b++)
        next[b] = (unsigned char)(ifd >> (8 * b));
    tex_test_file_write(path, d, n);
    char          err[TEX_ERR_LEN];
    tex_tiff     *f;
    tex_tiff_info info;
    tex_test_stderr_capture();
    CHECK_EQ_INT(tex_tiff_open(path, &f, &info, err), TEX_OK);
    CHECK_EQ_INT(tex_test_stderr_release(), 0);
    CHECK_EQ_INT(info.nlevels, 1);
    tex_tiff_close(f);
    free(d);
}

/* ---- the module (texture/tiff_module.h) ---- */

/* Whether a file whose name holds `name` is mapped into this process. */
static bool
mapped(const char *name)
{
    FILE *f = fopen("/proc/self/maps", "r");
    REQUIRE(f);
    char line[4096];
    bool found = false;
    while (!found && fgets(line, sizeof line, f))
        found = strstr(line, name) != NULL;
    fclose(f);
    return found;
}

/* Which tex_tiff.h this test calls. Built with RT_LAZY_MODULES (the
 * default), io_tiff_lazy.c's: the first call that needs the module loads
 * lib/librt_tiff.so, and every other case runs through it; otherwise
 * io_tiff.c's, linked in. Closing NULL needs no module and loads none. */
static void
case_module(const char *arg)
{
    (void)arg;
#ifndef RT_LAZY_MODULES
    printf("skipped: io_tiff.c is linked in (RT_LAZY_MODULES off): no module to load\n");
    exit(TEX_TEST_SKIP);
#endif
    tex_tiff_close(NULL);
    CHECK(!mapped("librt_tiff.so"));
    size_t n;
    free(good_tx(&n));
    char          err[TEX_ERR_LEN];
    tex_tiff     *f;
    tex_tiff_info info;
    REQUIRE(tex_tiff_open(tex_test_path("good.tx"), &f, &info, err) == TEX_OK);
    CHECK(mapped("librt_tiff.so"));
    tex_tiff_close(f);
}

/* A module that cannot load: every call that may load it fails as an
 * unsupported file does, saying why in one line; nothing is written;
 * closing NULL is still a no-op. */
static void
case_module_missing(const char *arg)
{
    (void)arg;
#ifndef RT_LAZY_MODULES
    printf("skipped: io_tiff.c is linked in (RT_LAZY_MODULES off): no module to miss\n");
    exit(TEX_TEST_SKIP);
#endif
    REQUIRE(setenv("RT_TIFF_MODULE", "/nonexistent/librt_tiff.so", 1) == 0);
    const char   *said = "TIFF support did not load: /nonexistent/librt_tiff.so: cannot open";
    char          err[TEX_ERR_LEN];
    tex_tiff     *f = (tex_tiff *)&err; /* not NULL: open must clear it */
    tex_tiff_info info;
    CHECK_EQ_INT(tex_tiff_open(tex_test_path("any.tx"), &f, &info, err), TEX_ERR_UNSUPPORTED);
    CHECK_EQ_PTR(f, NULL);
    CHECK_CONTAINS(err, said);
    CHECK(!strchr(err, '\n'));
    err[0] = '\0';
    CHECK_EQ_INT(tex_tiff_read_rows(tex_test_path("any.tx"), NULL, NULL, err), TEX_ERR_UNSUPPORTED);
    CHECK_CONTAINS(err, said);
    tex_image        img = noise_image(32, 32, 3, TEX_TYPE_U8, 1);
    tex_tiff_writer *w = (tex_tiff_writer *)&img;
    const char      *path = tex_test_path("never.tx");
    err[0] = '\0';
    CHECK_EQ_INT(tex_tiff_tiled_begin(path, &img, 1, 16, NULL, &w, err), TEX_ERR_UNSUPPORTED);
    CHECK_EQ_PTR(w, NULL);
    CHECK_CONTAINS(err, said);
    DIR *d = opendir(tex_test_dir());
    REQUIRE(d);
    for (struct dirent *e; (e = readdir(d));)
        CHECK(!strstr(e->d_name, "never.tx"));
    closedir(d);
    tex_tiff_close(NULL);
    CHECK(!mapped("librt_tiff.so"));
    tex_image_free(&img);
}

static const rt_test_case cases[] = {
    {"writer", case_writer},
    {"writer_invalid", case_writer_invalid},
    {"maketx", case_maketx},
    {"strips", case_strips},
    {"system", case_system},
    {"associated", case_associated},
    {"oiio", case_oiio},
    {"bad_header", case_bad_header},
    {"bad_layouts", case_bad_layouts},
    {"bad_sizes", case_bad_sizes},
    {"bad_data", case_bad_data},
    {"bad_loop", case_bad_loop},
    {"bad_table", case_bad_table},
    {"system_broken", case_system_broken},
    {"module", case_module},
    {"module_missing", case_module_missing},
    {NULL, NULL},
};

int
main(int argc, char **argv)
{
    return rt_test_main(cases, argc, argv);
}
