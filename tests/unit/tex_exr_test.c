/* The OpenEXR shim, texture/include/tex_exr.h.
 *
 * Round trips write with tex_exr_write_*() and read back with the same
 * shim, so they check exactness and layout (every sample, every tile of
 * every level, edge tiles zero-padded), not OpenEXR's own file layout:
 * that is what the layouts case does, on files written by other tools
 * (${RT_TESTDATA}/exr-layouts, skipped with exit 77 when missing), against
 * the sizes in its README and properties known without our reader: a
 * window origin, every half value present, NaN and Inf present,
 * colour-coded MIP levels, lossless codecs agreeing bit for bit. */
#define _POSIX_C_SOURCE 200809L

#include "check.h"
#include "tex_exr.h"
#include "tex_file_testing.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- test images ---- */

/* Random finite samples: any half or float bit pattern but Inf and NaN,
 * so an exact round trip means bit-exact. */
static tex_image
image_random(uint32_t w, uint32_t h, uint32_t nch, tex_type type, uint64_t seed)
{
    char      err[TEX_ERR_LEN];
    tex_image img;
    REQUIRE(tex_image_alloc(&img, w, h, nch, type, err) == TEX_OK);
    uint64_t s = seed * 0x9E3779B97F4A7C15u + 1;
    size_t   n = (size_t)w * h * nch;
    for (size_t i = 0; i < n; i++) {
        uint64_t r = tex_test_rand(&s);
        if (type == TEX_TYPE_HALF) {
            uint16_t v = (uint16_t)r;
            if ((v & 0x7c00) == 0x7c00)
                v &= 0xbfff; /* exponent 31 -> 15 */
            ((uint16_t *)img.pixels)[i] = v;
        } else {
            uint32_t v = (uint32_t)r;
            if ((v & 0x7f800000u) == 0x7f800000u)
                v &= 0xbfffffffu;
            ((uint32_t *)img.pixels)[i] = v;
        }
    }
    return img;
}

static void
check_same_image(const tex_image *got, const tex_image *want, const char *what)
{
    CHECK_EQ_INT(got->width, want->width);
    CHECK_EQ_INT(got->height, want->height);
    CHECK_EQ_INT(got->nchannels, want->nchannels);
    CHECK_EQ_INT(got->type, want->type);
    CHECK(!got->srgb);
    if (got->width != want->width || got->height != want->height ||
        got->nchannels != want->nchannels || got->type != want->type)
        return;
    size_t ss = tex_type_size(got->type), n = (size_t)got->width * got->height * got->nchannels;
    for (size_t i = 0; i < n; i++) {
        if (memcmp((const char *)got->pixels + i * ss, (const char *)want->pixels + i * ss, ss)) {
            RT_CHECK_FAIL_("%s: sample %zu (pixel %zu, %zu; channel %zu) differs", what, i,
                           i / got->nchannels % got->width, i / got->nchannels / got->width,
                           i % got->nchannels);
            return;
        }
    }
}

/* Every tile of `level` through tex_exr_read_tile(), in reverse order,
 * against `img` (read whole, by OpenEXR): the valid part equal, the rest
 * zero; each tile through the fast path (exr_chunks.h) if `fast`, else
 * none. */
static void
check_tiles(tex_exr *f, const tex_exr_info *info, uint32_t level, const tex_image *img, bool fast)
{
    uint64_t       fast0 = tex_exr_fast_chunks(f);
    char           err[TEX_ERR_LEN];
    uint32_t       tw = info->tile_width, th = info->tile_height;
    size_t         px = tex_type_size(info->type) * info->nchannels;
    uint32_t       nx = (img->width + tw - 1) / tw, ny = (img->height + th - 1) / th;
    unsigned char *tile = malloc((size_t)tw * th * px);
    REQUIRE(tile);
    for (uint32_t k = nx * ny; k-- > 0;) {
        uint32_t tx = k % nx, ty = k / nx;
        memset(tile, 0xa5, (size_t)tw * th * px);
        tex_result r = tex_exr_read_tile(f, level, tx, ty, tile, err);
        if (r != TEX_OK) {
            RT_CHECK_FAIL_("level %u tile (%u, %u): %d %s", level, tx, ty, r, err);
            continue;
        }
        bool ok = true;
        for (uint32_t y = 0; y < th && ok; y++) {
            for (uint32_t x = 0; x < tw && ok; x++) {
                uint32_t             X = tx * tw + x, Y = ty * th + y;
                const unsigned char *p = tile + ((size_t)y * tw + x) * px;
                if (X < img->width && Y < img->height) {
                    ok = !memcmp(p, (const char *)img->pixels + ((size_t)Y * img->width + X) * px,
                                 px);
                } else {
                    for (size_t b = 0; b < px; b++)
                        ok &= p[b] == 0;
                }
                if (!ok)
                    RT_CHECK_FAIL_("level %u tile (%u, %u) pixel (%u, %u) is wrong", level, tx, ty,
                                   x, y);
            }
        }
    }
    CHECK_EQ_INT(tex_exr_fast_chunks(f) - fast0, fast ? nx * ny : 0);
    CHECK_EQ_INT(tex_exr_read_tile(f, level, nx, 0, tile, err), TEX_ERR_INVALID);
    CHECK_EQ_INT(tex_exr_read_tile(f, level, 0, ny, tile, err), TEX_ERR_INVALID);
    free(tile);
}

static float
sample(const tex_image *img, size_t i)
{
    return img->type == TEX_TYPE_HALF ? tex_half_to_float(((const uint16_t *)img->pixels)[i])
                                      : ((const float *)img->pixels)[i];
}

/* ---- round trips ---- */

static void
scanline_round_trip(tex_type type)
{
    char err[TEX_ERR_LEN];
    for (uint32_t nch = 1; nch <= 4; nch++) {
        const char *path = tex_test_path("scan.exr");
        tex_image   src = image_random(37, 23, nch, type, nch);
        CHECK_EQ_INT(tex_exr_write_scanline(path, &src, NULL, 0, err), TEX_OK);
        tex_exr     *f;
        tex_exr_info info;
        tex_result   r = tex_exr_open(path, &f, &info, err);
        CHECK_EQ_INT(r, TEX_OK);
        if (r != TEX_OK) {
            fprintf(stderr, "%s\n", err);
            tex_image_free(&src);
            continue;
        }
        CHECK_EQ_INT(info.width, 37);
        CHECK_EQ_INT(info.height, 23);
        CHECK_EQ_INT(info.x0, 0);
        CHECK_EQ_INT(info.y0, 0);
        CHECK_EQ_INT(info.display_x0, 0);
        CHECK_EQ_INT(info.display_y0, 0);
        CHECK_EQ_INT(info.display_width, 37);
        CHECK_EQ_INT(info.display_height, 23);
        CHECK_EQ_INT(info.nchannels, nch);
        CHECK_EQ_INT(info.type, type);
        CHECK(!info.tiled);
        CHECK_EQ_INT(info.tile_width, 0);
        CHECK_EQ_INT(info.nlevels, 1);
        CHECK(!info.luminance_chroma);
        CHECK_EQ_INT(info.nparts, 1);
        uint32_t w = 0, h = 0;
        CHECK(tex_exr_level_size(f, 0, &w, &h));
        CHECK_EQ_INT(w, 37);
        CHECK_EQ_INT(h, 23);
        CHECK(!tex_exr_level_size(f, 1, &w, &h));
        tex_image got;
        CHECK_EQ_INT(tex_exr_read_image(f, 0, &got, err), TEX_OK);
        check_same_image(&got, &src, "scanline");
        tex_image_free(&got);
        /* Twice: the same handle reads again. */
        CHECK_EQ_INT(tex_exr_read_image(f, 0, &got, err), TEX_OK);
        check_same_image(&got, &src, "scanline again");
        tex_image_free(&got);
        uint16_t tile[64];
        CHECK_EQ_INT(tex_exr_read_tile(f, 0, 0, 0, tile, err), TEX_ERR_INVALID);
        CHECK_EQ_STR(err, "not a tiled file");
        CHECK_EQ_INT(tex_exr_read_image(f, 1, &got, err), TEX_ERR_INVALID);
        CHECK(got.pixels == NULL);
        tex_exr_close(f);
        tex_image_free(&src);
    }
}

static void
case_scanline_half(const char *arg)
{
    (void)arg;
    scanline_round_trip(TEX_TYPE_HALF);
}

static void
case_scanline_float(const char *arg)
{
    (void)arg;
    scanline_round_trip(TEX_TYPE_FLOAT);
}

static void
case_attributes(const char *arg)
{
    (void)arg;
    char         err[TEX_ERR_LEN];
    const char  *path = tex_test_path("attr.exr");
    tex_image    src = image_random(5, 3, 3, TEX_TYPE_HALF, 7);
    tex_exr_attr attrs[] = {
        {.name = "rt:source", .kind = TEX_EXR_ATTR_STRING, .s = "textures/brick.png"},
        {.name = "rt:gain", .f = 2.5f},
        {.name = "rt:empty", .kind = TEX_EXR_ATTR_STRING, .s = ""},
        {.name = "rt:gain", .f = -0.125f}, /* the last value wins */
        {.name = "owner", .kind = TEX_EXR_ATTR_STRING, .s = "tests \xc3\xa9t\xc3\xa9"},
        {.name = "rt:kind", .f = 1},
        {.name = "rt:kind", .kind = TEX_EXR_ATTR_STRING, .s = "string now"}, /* of the other kind */
        {.name = "rt:count", .kind = TEX_EXR_ATTR_INT, .i = -7},
        {.name = "rt:rays", .kind = TEX_EXR_ATTR_DOUBLE, .d = 9007199254740991.0}, /* 2^53 - 1 */
    };
    CHECK_EQ_INT(tex_exr_write_scanline(path, &src, attrs, sizeof attrs / sizeof *attrs, err),
                 TEX_OK);
    tex_exr     *f;
    tex_exr_info info;
    REQUIRE(tex_exr_open(path, &f, &info, err) == TEX_OK);
    const char *s = NULL;
    float       v = 0;
    CHECK(tex_exr_attr_string(f, "rt:source", &s));
    CHECK_EQ_STR(s, "textures/brick.png");
    CHECK(tex_exr_attr_string(f, "rt:empty", &s));
    CHECK_EQ_STR(s, "");
    CHECK(tex_exr_attr_string(f, "owner", &s));
    CHECK_EQ_STR(s, "tests \xc3\xa9t\xc3\xa9");
    CHECK(tex_exr_attr_string(f, "rt:kind", &s));
    CHECK_EQ_STR(s, "string now");
    CHECK(tex_exr_attr_float(f, "rt:gain", &v));
    CHECK(v == -0.125f);
    CHECK(tex_exr_attr_float(f, "pixelAspectRatio", &v)); /* OpenEXR's own */
    CHECK(v == 1.0f);
    s = "untouched";
    CHECK(!tex_exr_attr_string(f, "rt:gain", &s)); /* a float, not a string */
    CHECK(!tex_exr_attr_string(f, "nothing", &s));
    CHECK_EQ_STR(s, "untouched");
    v = 42;
    CHECK(!tex_exr_attr_float(f, "rt:source", &v));
    CHECK(!tex_exr_attr_float(f, "nothing", &v));
    CHECK(v == 42);
    CHECK(!tex_exr_attr_float(f, NULL, &v));
    /* Numbers keep their types: an int, a double with all its bits. */
    double d = 0;
    CHECK(tex_exr_attr_number(f, "rt:count", &d));
    CHECK(d == -7);
    CHECK(tex_exr_attr_number(f, "rt:rays", &d));
    CHECK(d == 9007199254740991.0);
    CHECK(tex_exr_attr_number(f, "rt:gain", &d));
    CHECK(d == -0.125);
    CHECK(!tex_exr_attr_string(f, "rt:count", &s)); /* not a string */
    d = 3;
    CHECK(!tex_exr_attr_number(f, "rt:source", &d));
    CHECK(!tex_exr_attr_number(f, "nothing", &d));
    CHECK(d == 3);
    tex_exr_close(f);

    /* Refused: nothing is written. */
    const char  *bad_path = tex_test_path("bad_attr.exr");
    tex_exr_attr bad[][1] = {
        {{.name = "dataWindow", .kind = TEX_EXR_ATTR_STRING, .s = "x"}},
        {{.name = "compression", .f = 1}},
        {{.name = "tiles", .f = 1}},
        {{.name = "", .f = 1}},
        {{.name = NULL, .f = 1}},
        {{.name = "an_attribute_name_of_32_bytes_xx", .f = 1}},
        {{.name = "rt:null", .kind = TEX_EXR_ATTR_STRING, .s = NULL}},
        {{.name = "rt:kind", .kind = (tex_exr_attr_kind)9}},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        err[0] = '\0';
        CHECK_EQ_INT(tex_exr_write_scanline(bad_path, &src, bad[i], 1, err), TEX_ERR_INVALID);
        CHECK_ONE_LINE(err);
        struct stat st;
        CHECK(stat(bad_path, &st) != 0);
    }
    CHECK_EQ_INT(tex_exr_write_scanline(bad_path, &src, NULL, 2, err), TEX_ERR_INVALID);
    CHECK_EQ_INT(tex_exr_write_scanline(path, &src, bad[0], 1, err), TEX_ERR_INVALID);
    CHECK_CONTAINS(err, "dataWindow");
    tex_image_free(&src);
}

/* levels[0..n-1] of w x h, each its own random content. */
static void
levels_random(tex_image *lv, uint32_t n, uint32_t w, uint32_t h, uint32_t nch, tex_type type)
{
    for (uint32_t l = 0; l < n; l++)
        lv[l] = image_random(w >> l ? w >> l : 1, h >> l ? h >> l : 1, nch, type, 100 + l);
}

static void
tiled_round_trip(uint32_t w, uint32_t h, uint32_t nch, tex_type type, uint32_t tile, bool mip)
{
    char      err[TEX_ERR_LEN];
    uint32_t  n = mip ? tex_mip_levels(w, h) : 1;
    tex_image lv[TEX_EXR_MAX_LEVELS];
    levels_random(lv, n, w, h, nch, type);
    const char *path = tex_test_path("tiled.exr");
    CHECK_EQ_INT(tex_exr_write_tiled(path, lv, n, tile, NULL, 0, err), TEX_OK);
    tex_exr     *f;
    tex_exr_info info;
    tex_result   r = tex_exr_open(path, &f, &info, err);
    CHECK_EQ_INT(r, TEX_OK);
    if (r == TEX_OK) {
        CHECK_EQ_INT(info.width, w);
        CHECK_EQ_INT(info.height, h);
        CHECK_EQ_INT(info.nchannels, nch);
        CHECK_EQ_INT(info.type, type);
        CHECK(info.tiled);
        CHECK_EQ_INT(info.tile_width, tile);
        CHECK_EQ_INT(info.tile_height, tile);
        CHECK_EQ_INT(info.nlevels, n);
        for (uint32_t l = 0; l < n; l++) {
            uint32_t lw = 0, lh = 0;
            CHECK(tex_exr_level_size(f, l, &lw, &lh));
            CHECK_EQ_INT(lw, lv[l].width);
            CHECK_EQ_INT(lh, lv[l].height);
            check_tiles(f, &info, l, &lv[l], true); /* ZIP, one sample type */
            tex_image got;
            CHECK_EQ_INT(tex_exr_read_image(f, l, &got, err), TEX_OK);
            check_same_image(&got, &lv[l], "tiled level");
            tex_image_free(&got);
        }
        /* Tiles again after whole-level reads: the frame buffer is reset. */
        check_tiles(f, &info, 0, &lv[0], true);
        CHECK(!tex_exr_level_size(f, n, NULL, NULL));
        uint16_t t[4];
        CHECK_EQ_INT(tex_exr_read_tile(f, n, 0, 0, t, err), TEX_ERR_INVALID);
        CHECK_ONE_LINE(err);
        tex_exr_close(f);
    }
    for (uint32_t l = 0; l < n; l++)
        tex_image_free(&lv[l]);
}

static void
case_tiled_mip(const char *arg)
{
    (void)arg;
    tiled_round_trip(100, 37, 4, TEX_TYPE_HALF, 16, true);
    tiled_round_trip(100, 37, 3, TEX_TYPE_FLOAT, 16, true);
    tiled_round_trip(100, 37, 1, TEX_TYPE_HALF, 16, true);
    tiled_round_trip(37, 100, 2, TEX_TYPE_FLOAT, 7, true); /* tall, odd tiles */
    tiled_round_trip(64, 64, 3, TEX_TYPE_HALF, 64, true);  /* one tile per level */
}

static void
case_tiled_one_level(const char *arg)
{
    (void)arg;
    tiled_round_trip(100, 37, 4, TEX_TYPE_HALF, 16, false);
    tiled_round_trip(1, 1, 1, TEX_TYPE_FLOAT, 16, true); /* 1x1: one level either way */
    tiled_round_trip(5, 3, 3, TEX_TYPE_HALF, 1, true);   /* 1x1 tiles */
}

/* Bad arguments to the writers: TEX_ERR_INVALID and nothing at path. */
static void
case_write_invalid(const char *arg)
{
    (void)arg;
    char        err[TEX_ERR_LEN];
    const char *path = tex_test_path("invalid.exr");
    tex_image   ok = image_random(8, 4, 3, TEX_TYPE_HALF, 1), u8;
    REQUIRE(tex_image_alloc(&u8, 8, 4, 3, TEX_TYPE_U8, err) == TEX_OK);
    tex_image five = ok, none = ok, zero = ok;
    five.nchannels = 5;
    none.pixels = NULL;
    zero.width = 0;
    struct {
        const tex_image *img;
        const char      *word;
    } bad[] = {{&u8, "half or float"},
               {&five, "1-4 channels"},
               {&none, "no pixels"},
               {&zero, "empty"},
               {NULL, "no pixels"}};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        CHECK_EQ_INT(tex_exr_write_scanline(path, bad[i].img, NULL, 0, err), TEX_ERR_INVALID);
        CHECK_CONTAINS(err, bad[i].word);
        CHECK_ONE_LINE(err);
        if (bad[i].img) {
            CHECK_EQ_INT(tex_exr_write_tiled(path, bad[i].img, 1, 16, NULL, 0, err),
                         TEX_ERR_INVALID);
            CHECK_CONTAINS(err, bad[i].word);
        }
    }
    CHECK_EQ_INT(tex_exr_write_scanline(NULL, &ok, NULL, 0, err), TEX_ERR_INVALID);
    CHECK_EQ_INT(tex_exr_write_tiled(NULL, &ok, 1, 16, NULL, 0, err), TEX_ERR_INVALID);
    CHECK_EQ_INT(tex_exr_write_tiled(path, NULL, 1, 16, NULL, 0, err), TEX_ERR_INVALID);

    /* Levels: 8x4 takes 1 or 4 (8x4, 4x2, 2x1, 1x1). */
    tex_image lv[5];
    levels_random(lv, 5, 8, 4, 3, TEX_TYPE_HALF);
    CHECK_EQ_INT(tex_exr_write_tiled(path, lv, 3, 4, NULL, 0, err), TEX_ERR_INVALID);
    CHECK_CONTAINS(err, "1 or 4");
    CHECK_EQ_INT(tex_exr_write_tiled(path, lv, 5, 4, NULL, 0, err), TEX_ERR_INVALID);
    CHECK_EQ_INT(tex_exr_write_tiled(path, lv, 4, 0, NULL, 0, err), TEX_ERR_INVALID);
    CHECK_CONTAINS(err, "tile size");
    CHECK_EQ_INT(tex_exr_write_tiled(path, lv, 4, 4097, NULL, 0, err), TEX_ERR_INVALID);
    tex_image saved = lv[2];
    lv[2] = lv[1]; /* 4x2 where 2x1 belongs */
    CHECK_EQ_INT(tex_exr_write_tiled(path, lv, 4, 4, NULL, 0, err), TEX_ERR_INVALID);
    CHECK_CONTAINS(err, "level 2");
    lv[2] = saved;
    lv[3].type = TEX_TYPE_FLOAT; /* type differs from level 0 */
    CHECK_EQ_INT(tex_exr_write_tiled(path, lv, 4, 4, NULL, 0, err), TEX_ERR_INVALID);
    CHECK_CONTAINS(err, "level 3");
    lv[3].type = TEX_TYPE_HALF;
    lv[3].nchannels = 4;
    CHECK_EQ_INT(tex_exr_write_tiled(path, lv, 4, 4, NULL, 0, err), TEX_ERR_INVALID);
    lv[3].nchannels = 3;
    struct stat st;
    CHECK(stat(path, &st) != 0);
    CHECK_EQ_INT(tex_exr_write_tiled(path, lv, 4, 4, NULL, 0, err), TEX_OK);
    for (int i = 0; i < 5; i++)
        tex_image_free(&lv[i]);
    CHECK_EQ_INT(remove(path), 0);
    tex_image_free(&ok);
    tex_image_free(&u8);
}

/* Names in tex_test_dir() other than `keep`: temporary files left behind. */
static int
stray_files(const char *keep)
{
    DIR *d = opendir(tex_test_dir());
    REQUIRE(d);
    int            n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && strcmp(e->d_name, keep)) {
            fprintf(stderr, "stray file: %s\n", e->d_name);
            n++;
        }
    }
    closedir(d);
    return n;
}

/* A file written over another replaces it whole, and leaves nothing else. */
static void
case_write_replace(const char *arg)
{
    (void)arg;
    char        err[TEX_ERR_LEN];
    const char *path = tex_test_path("replace.exr");
    tex_image   a = image_random(9, 9, 4, TEX_TYPE_FLOAT, 1);
    tex_image   b = image_random(3, 2, 1, TEX_TYPE_HALF, 2);
    CHECK_EQ_INT(tex_exr_write_scanline(path, &a, NULL, 0, err), TEX_OK);
    CHECK_EQ_INT(tex_exr_write_tiled(path, &b, 1, 2, NULL, 0, err), TEX_OK);
    tex_exr     *f;
    tex_exr_info info;
    REQUIRE(tex_exr_open(path, &f, &info, err) == TEX_OK);
    tex_image got;
    CHECK_EQ_INT(tex_exr_read_image(f, 0, &got, err), TEX_OK);
    check_same_image(&got, &b, "replaced");
    tex_image_free(&got);
    tex_exr_close(f);
    CHECK_EQ_INT(stray_files("replace.exr"), 0);
    tex_image_free(&a);
    tex_image_free(&b);
}

/* A write that fails half-way (the file size limit, EFBIG) leaves the old
 * file as it was and no temporary file. Run in a child, which alone gets
 * the limit. */
static void
case_write_fail(const char *arg)
{
    (void)arg;
    char        err[TEX_ERR_LEN];
    const char *path = tex_test_path("keep.exr");
    tex_image   old = image_random(4, 4, 3, TEX_TYPE_HALF, 3);
    REQUIRE(tex_exr_write_scanline(path, &old, NULL, 0, err) == TEX_OK);
    size_t         n0;
    unsigned char *before = tex_test_file_read(path, &n0);
    fflush(NULL);
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        signal(SIGXFSZ, SIG_IGN);
        struct rlimit rl = {.rlim_cur = 64 * 1024, .rlim_max = 64 * 1024};
        REQUIRE(setrlimit(RLIMIT_FSIZE, &rl) == 0);
        /* Random floats barely compress: about 2.5 MB. */
        tex_image  big = image_random(400, 400, 4, TEX_TYPE_FLOAT, 4);
        tex_result r = tex_exr_write_scanline(path, &big, NULL, 0, err);
        fprintf(stderr, "scanline: %d %s\n", r, err);
        bool      good = r == TEX_ERR_WRITE && strstr(err, strerror(EFBIG));
        tex_image lv[9];
        levels_random(lv, 9, 400, 400, 4, TEX_TYPE_FLOAT);
        r = tex_exr_write_tiled(path, lv, 9, 64, NULL, 0, err);
        fprintf(stderr, "tiled: %d %s\n", r, err);
        good &= r == TEX_ERR_WRITE && strstr(err, strerror(EFBIG));
        _exit(good ? 0 : 1);
    }
    int st;
    REQUIRE(waitpid(pid, &st, 0) == pid);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    size_t         n1;
    unsigned char *after = tex_test_file_read(path, &n1);
    CHECK(n0 == n1 && memcmp(before, after, n0) == 0);
    CHECK_EQ_INT(stray_files("keep.exr"), 0);
    free(before);
    free(after);

    /* No such folder; a folder in the way. */
    CHECK_EQ_INT(tex_exr_write_scanline(tex_test_path("no/such/dir.exr"), &old, NULL, 0, err),
                 TEX_ERR_WRITE);
    CHECK_EQ_STR(err, "cannot write: No such file or directory");
    const char *dir = tex_test_path("a_folder");
    REQUIRE(mkdir(dir, 0700) == 0);
    CHECK_EQ_INT(tex_exr_write_scanline(dir, &old, NULL, 0, err), TEX_ERR_WRITE);
    CHECK_ONE_LINE(err);
    CHECK_EQ_INT(rmdir(dir), 0);
    CHECK_EQ_INT(stray_files("keep.exr"), 0);
    tex_image_free(&old);
}

static void
case_read_args(const char *arg)
{
    (void)arg;
    char         err[TEX_ERR_LEN];
    tex_exr     *f = (tex_exr *)&err; /* must become NULL */
    tex_exr_info info;
    CHECK_EQ_INT(tex_exr_open(NULL, &f, &info, err), TEX_ERR_INVALID);
    CHECK(f == NULL);
    CHECK_EQ_INT(tex_exr_open("x.exr", NULL, &info, err), TEX_ERR_INVALID);
    CHECK_EQ_INT(tex_exr_read_tile(NULL, 0, 0, 0, err, err), TEX_ERR_INVALID);
    tex_image img;
    CHECK_EQ_INT(tex_exr_read_image(NULL, 0, &img, err), TEX_ERR_INVALID);
    CHECK(!tex_exr_level_size(NULL, 0, NULL, NULL));
    const char *s;
    CHECK(!tex_exr_attr_string(NULL, "x", &s));
    tex_exr_close(NULL);

    tex_image lv[2];
    levels_random(lv, 2, 2, 1, 1, TEX_TYPE_HALF);
    const char *path = tex_test_path("args.exr");
    REQUIRE(tex_exr_write_tiled(path, lv, 2, 4, NULL, 0, err) == TEX_OK);
    REQUIRE(tex_exr_open(path, &f, &info, err) == TEX_OK);
    CHECK_EQ_INT(tex_exr_read_tile(f, 0, 0, 0, NULL, err), TEX_ERR_INVALID);
    CHECK_EQ_INT(tex_exr_read_tile(f, 2, 0, 0, err, err), TEX_ERR_INVALID);
    CHECK_EQ_INT(tex_exr_read_tile(f, 1, 1, 0, err, err), TEX_ERR_INVALID);
    CHECK_EQ_STR(err, "tile (1, 0) is outside level 1's 1x1 tiles");
    CHECK_EQ_INT(tex_exr_read_image(f, 2, &img, err), TEX_ERR_INVALID);
    CHECK_EQ_INT(tex_exr_read_image(f, 0, NULL, err), TEX_ERR_INVALID);
    tex_exr_close(f);
    tex_image_free(&lv[0]);
    tex_image_free(&lv[1]);
}

/* Separate handles of one file on separate threads (tex_exr.h: "different
 * tex_exr handles may be used at once"). */
typedef struct thread_job {
    const char      *path;
    const tex_image *levels;
    uint32_t         nlevels;
    int              failures;
} thread_job;

static void *
thread_main(void *arg)
{
    thread_job  *j = arg;
    char         err[TEX_ERR_LEN];
    tex_exr     *f;
    tex_exr_info info;
    if (tex_exr_open(j->path, &f, &info, err) != TEX_OK) {
        j->failures++;
        return NULL;
    }
    size_t         px = tex_type_size(info.type) * info.nchannels;
    unsigned char *tile = malloc((size_t)info.tile_width * info.tile_height * px);
    for (int round = 0; round < 4 && tile; round++) {
        for (uint32_t l = 0; l < j->nlevels; l++) {
            const tex_image *src = &j->levels[l];
            for (uint32_t ty = 0; ty * info.tile_height < src->height; ty++) {
                for (uint32_t tx = 0; tx * info.tile_width < src->width; tx++) {
                    if (tex_exr_read_tile(f, l, tx, ty, tile, err) != TEX_OK) {
                        j->failures++;
                        continue;
                    }
                    uint32_t x0 = tx * info.tile_width, y0 = ty * info.tile_height;
                    uint32_t row =
                        src->width - x0 < info.tile_width ? src->width - x0 : info.tile_width;
                    for (uint32_t y = 0; y < info.tile_height && y0 + y < src->height; y++) {
                        if (memcmp(tile + (size_t)y * info.tile_width * px,
                                   (const char *)src->pixels +
                                       ((size_t)(y0 + y) * src->width + x0) * px,
                                   row * px))
                            j->failures++;
                    }
                }
            }
        }
    }
    free(tile);
    tex_exr_close(f);
    return NULL;
}

static void
case_threads(const char *arg)
{
    (void)arg;
    char      err[TEX_ERR_LEN];
    tex_image lv[TEX_EXR_MAX_LEVELS];
    uint32_t  n = tex_mip_levels(200, 120);
    levels_random(lv, n, 200, 120, 4, TEX_TYPE_HALF);
    const char *path = tex_test_path("threads.exr");
    REQUIRE(tex_exr_write_tiled(path, lv, n, 32, NULL, 0, err) == TEX_OK);
    enum { NTHREADS = 4 };
    pthread_t  th[NTHREADS];
    thread_job jobs[NTHREADS];
    for (int i = 0; i < NTHREADS; i++) {
        jobs[i] = (thread_job){.path = path, .levels = lv, .nlevels = n};
        REQUIRE(pthread_create(&th[i], NULL, thread_main, &jobs[i]) == 0);
    }
    for (int i = 0; i < NTHREADS; i++) {
        pthread_join(th[i], NULL);
        CHECK_EQ_INT(jobs[i].failures, 0);
    }
    for (uint32_t l = 0; l < n; l++)
        tex_image_free(&lv[l]);
}

/* ---- compressions and threads (tex_exr_write_scanline_opts) ---- */

/* Whether the file at path reads back as exactly `want`. */
static bool
reads_back(const char *path, const tex_image *want)
{
    char         err[TEX_ERR_LEN];
    tex_exr     *f;
    tex_exr_info info;
    if (tex_exr_open(path, &f, &info, err) != TEX_OK) {
        fprintf(stderr, "%s: %s\n", path, err);
        return false;
    }
    tex_image got;
    bool      same =
        tex_exr_read_image(f, 0, &got, err) == TEX_OK && got.width == want->width &&
        got.height == want->height && got.nchannels == want->nchannels && got.type == want->type &&
        memcmp(got.pixels, want->pixels,
               (size_t)want->width * want->height * want->nchannels * tex_type_size(want->type)) ==
            0;
    tex_image_free(&got);
    tex_exr_close(f);
    return same;
}

/* Every compression, zlib level and thread count gives back every bit,
 * and the file's bytes do not depend on the thread count. */
static void
case_compressions(const char *arg)
{
    (void)arg;
    char                             err[TEX_ERR_LEN];
    static const tex_exr_compression comps[] = {TEX_EXR_ZIP, TEX_EXR_NONE, TEX_EXR_RLE,
                                                TEX_EXR_ZIPS, TEX_EXR_PIZ};
    static const unsigned            threads[] = {0, 1, 2, 4, 64};
    /* 67 x 101: 7 blocks of ZIP's 16 lines and 4 of PIZ's 32, the last
     * ones short. */
    tex_image   imgs[] = {image_random(67, 101, 4, TEX_TYPE_FLOAT, 11),
                          image_random(67, 101, 3, TEX_TYPE_HALF, 12),
                          image_random(5, 1, 1, TEX_TYPE_FLOAT, 13)};
    const char *path = tex_test_path("comp.exr");
    for (size_t i = 0; i < sizeof imgs / sizeof *imgs; i++) {
        for (size_t c = 0; c < sizeof comps / sizeof *comps; c++) {
            bool zip = comps[c] == TEX_EXR_ZIP || comps[c] == TEX_EXR_ZIPS;
            for (int level = 0; level <= (zip ? 9 : 0); level += level == 0 ? 1 : 8) {
                unsigned char *first = NULL;
                size_t         nfirst = 0;
                for (size_t t = 0; t < sizeof threads / sizeof *threads; t++) {
                    tex_exr_write_opts o = {
                        .compression = comps[c], .zip_level = level, .threads = threads[t]};
                    tex_result r = tex_exr_write_scanline_opts(path, &imgs[i], NULL, 0, &o, err);
                    CHECK_EQ_INT(r, TEX_OK);
                    if (r != TEX_OK) {
                        fprintf(stderr, "%s\n", err);
                        continue;
                    }
                    if (!reads_back(path, &imgs[i]))
                        RT_CHECK_FAIL_("image %zu, compression %d, level %d, %u threads: "
                                       "pixels differ",
                                       i, (int)comps[c], level, threads[t]);
                    size_t         n;
                    unsigned char *bytes = tex_test_file_read(path, &n);
                    if (!first) {
                        first = bytes, nfirst = n;
                        continue;
                    }
                    if (n != nfirst || memcmp(bytes, first, n) != 0)
                        RT_CHECK_FAIL_("image %zu, compression %d, level %d: the file with %u "
                                       "threads differs from the one with 0",
                                       i, (int)comps[c], level, threads[t]);
                    free(bytes);
                }
                free(first);
            }
        }
    }
    /* NULL options are the defaults, and the compression is applied: a
     * flat image shrinks under ZIP, not under NONE. */
    tex_image flat;
    REQUIRE(tex_image_alloc(&flat, 64, 64, 4, TEX_TYPE_FLOAT, err) == TEX_OK);
    for (size_t k = 0; k < (size_t)64 * 64 * 4; k++)
        ((float *)flat.pixels)[k] = 0.5f;
    size_t             n_none, n_zip, n_null;
    tex_exr_write_opts none = {.compression = TEX_EXR_NONE};
    REQUIRE(tex_exr_write_scanline_opts(path, &flat, NULL, 0, &none, err) == TEX_OK);
    free(tex_test_file_read(path, &n_none));
    REQUIRE(tex_exr_write_scanline_opts(path, &flat, NULL, 0, NULL, err) == TEX_OK);
    free(tex_test_file_read(path, &n_null));
    REQUIRE(tex_exr_write_scanline(path, &flat, NULL, 0, err) == TEX_OK);
    free(tex_test_file_read(path, &n_zip));
    CHECK(n_none > (size_t)64 * 64 * 16);
    CHECK(n_zip < n_none / 10);
    CHECK_EQ_U64(n_null, n_zip);
    tex_image_free(&flat);

    /* Options outside the enum or zlib's levels: nothing is written. */
    const char              *bad_path = tex_test_path("bad_opts.exr");
    const tex_exr_write_opts bad[] = {{.compression = (tex_exr_compression)99},
                                      {.compression = (tex_exr_compression)-1},
                                      {.zip_level = 10},
                                      {.zip_level = -1}};
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        err[0] = '\0';
        CHECK_EQ_INT(tex_exr_write_scanline_opts(bad_path, &imgs[0], NULL, 0, &bad[k], err),
                     TEX_ERR_INVALID);
        CHECK_ONE_LINE(err);
        struct stat st;
        CHECK(stat(bad_path, &st) != 0);
    }
    for (size_t i = 0; i < sizeof imgs / sizeof *imgs; i++)
        tex_image_free(&imgs[i]);
}

/* Threads of this process, from /proc/self/task. */
static int
task_count(void)
{
    DIR *d = opendir("/proc/self/task");
    REQUIRE(d);
    int            n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

typedef struct write_job {
    const char      *path;
    const tex_image *img;
    unsigned         threads;
    int              failures;
} write_job;

static void *
write_main(void *arg)
{
    write_job         *j = arg;
    char               err[TEX_ERR_LEN];
    tex_exr_write_opts o = {.threads = j->threads, .zip_level = 1};
    for (int round = 0; round < 6; round++) {
        if (tex_exr_write_scanline_opts(j->path, j->img, NULL, 0, &o, err) != TEX_OK) {
            fprintf(stderr, "%s: %s\n", j->path, err);
            j->failures++;
        } else if (!reads_back(j->path, j->img)) {
            j->failures++;
        }
    }
    return NULL;
}

/* Writes with threads share OpenEXR's one pool, with each other and with
 * reads on other threads (whose chunks it runs while it has threads); the
 * pool is emptied when the last write ends: no thread outlives them. */
static void
case_write_threads(const char *arg)
{
    (void)arg;
    char      err[TEX_ERR_LEN];
    tex_image lv[TEX_EXR_MAX_LEVELS];
    uint32_t  n = tex_mip_levels(200, 120);
    levels_random(lv, n, 200, 120, 4, TEX_TYPE_HALF);
    const char *tiled = tex_test_path("read_while_writing.exr");
    REQUIRE(tex_exr_write_tiled(tiled, lv, n, 32, NULL, 0, err) == TEX_OK);
    enum { NWRITERS = 4, NREADERS = 2 };
    static const unsigned threads[NWRITERS] = {4, 2, 0, 3};
    tex_image             imgs[NWRITERS];
    write_job             writers[NWRITERS];
    thread_job            readers[NREADERS];
    pthread_t             th[NWRITERS + NREADERS];
    int                   before = task_count();
    for (int i = 0; i < NWRITERS; i++) {
        char name[32];
        snprintf(name, sizeof name, "writer%d.exr", i);
        imgs[i] = image_random(90, 130, 4, TEX_TYPE_FLOAT, 40 + (uint64_t)i);
        writers[i] =
            (write_job){.path = tex_test_path(name), .img = &imgs[i], .threads = threads[i]};
    }
    for (int i = 0; i < NREADERS; i++) {
        readers[i] = (thread_job){.path = tiled, .levels = lv, .nlevels = n};
        REQUIRE(pthread_create(&th[NWRITERS + i], NULL, thread_main, &readers[i]) == 0);
    }
    for (int i = 0; i < NWRITERS; i++)
        REQUIRE(pthread_create(&th[i], NULL, write_main, &writers[i]) == 0);
    for (int i = 0; i < NWRITERS + NREADERS; i++)
        pthread_join(th[i], NULL);
    for (int i = 0; i < NWRITERS; i++) {
        CHECK_EQ_INT(writers[i].failures, 0);
        tex_image_free(&imgs[i]);
    }
    for (int i = 0; i < NREADERS; i++)
        CHECK_EQ_INT(readers[i].failures, 0);
    CHECK_EQ_INT(task_count(), before);
    /* One write alone, too. */
    tex_exr_write_opts o = {.threads = 8};
    CHECK_EQ_INT(tex_exr_write_scanline_opts(tiled, &lv[0], NULL, 0, &o, err), TEX_OK);
    CHECK_EQ_INT(task_count(), before);
    for (uint32_t l = 0; l < n; l++)
        tex_image_free(&lv[l]);
}

/* ---- files written by others: ${RT_TESTDATA}/exr-layouts ---- */

enum {
    NAN_OK = 1,    /* NaN samples are part of the picture */
    INF_OK = 2,    /* so are infinities */
    TRUNCATED = 4, /* the file ends inside its first tile */
    FAST = 8,      /* chunks decoded by our own code (exr_chunks.h), not OpenEXR */
};

typedef struct layout layout;
typedef void          check_fn(const layout *, tex_image *levels);

struct layout {
    const char *name;
    tex_result  open;
    uint32_t    w, h;
    int32_t     x0, y0;
    int32_t     dx0, dy0; /* display window, inclusive corners as in the README; */
    int32_t     dx1, dy1; /* dx1 = dy1 = 0: the data window at (0, 0) */
    uint32_t    nch;
    tex_type    type;
    uint32_t    tile; /* 0: scanline */
    uint32_t    tile_h;
    uint32_t    nlevels;
    uint32_t    nparts;
    bool        yc;
    unsigned    flags;
    check_fn   *check;
};

static void
check_all_half_values(const layout *l, tex_image *lv)
{
    (void)l;
    /* "AllHalfValues contains every half value": each channel of the
     * 256x256 image holds each of the 65536 bit patterns. */
    static unsigned char seen[65536];
    for (uint32_t c = 0; c < 3; c++) {
        memset(seen, 0, sizeof seen);
        for (size_t i = c; i < (size_t)256 * 256 * 3; i += 3)
            seen[((uint16_t *)lv[0].pixels)[i]] = 1;
        size_t n = 0;
        for (size_t v = 0; v < 65536; v++)
            n += seen[v];
        CHECK_EQ_INT(n, 65536);
    }
}

static void
check_nan_inf(const layout *l, tex_image *lv)
{
    (void)l;
    size_t nan = 0, inf = 0, n = (size_t)lv[0].width * lv[0].height * 3;
    for (size_t i = 0; i < n; i++) {
        float v = sample(&lv[0], i);
        nan += !!isnan(v);
        inf += !!isinf(v); /* isinf(-Inf) may be -1 */
    }
    CHECK(nan > 0);
    CHECK(inf > 0);
}

/* Channels of one level that are all exactly 0, as a bit mask. */
static unsigned
zero_channels(const tex_image *img)
{
    unsigned zero = (1u << img->nchannels) - 1;
    for (size_t i = 0; i < (size_t)img->width * img->height * img->nchannels; i++)
        if (sample(img, i) != 0)
            zero &= ~(1u << (i % img->nchannels));
    return zero;
}

static void
check_green_only(const layout *l, tex_image *lv)
{
    /* G only: R and B read as 0, G is not all 0. */
    CHECK_EQ_INT(zero_channels(&lv[0]), 5);
    if (l->type == TEX_TYPE_FLOAT) { /* WideFloatRange: |G| up to about 1e38 */
        float mx = 0;
        for (size_t i = 1; i < (size_t)lv[0].width * lv[0].height * 3; i += 3)
            mx = fmaxf(mx, fabsf(sample(&lv[0], i)));
        CHECK(mx > 1e37f);
    }
}

static void
check_colour_coded(const layout *l, tex_image *lv)
{
    /* ColorCodedLevels: level i is dark (< 0.001) in R, G and B as bits 0,
     * 1, 2 of i % 7 say, so every level tells which one it is. */
    for (uint32_t i = 0; i < l->nlevels; i++) {
        for (uint32_t c = 0; c < 3; c++) {
            float mx = 0;
            for (size_t k = c; k < (size_t)lv[i].width * lv[i].height * 4; k += 4)
                mx = fmaxf(mx, sample(&lv[i], k));
            bool dark = ((i % 7) >> c) & 1;
            if (dark != (mx < 0.001f))
                RT_CHECK_FAIL_("level %u channel %u: max %g, %s expected", i, c, mx,
                               dark ? "dark" : "bright");
        }
    }
}

static void
check_has_colour(const layout *l, tex_image *lv)
{
    (void)l;
    /* Luminance/chroma converted to RGB: not grey everywhere, and nowhere
     * far below 0. */
    size_t n = (size_t)lv[0].width * lv[0].height, coloured = 0;
    float  mn = 0;
    for (size_t p = 0; p < n; p++) {
        float r = sample(&lv[0], p * 3), g = sample(&lv[0], p * 3 + 1);
        float b = sample(&lv[0], p * 3 + 2);
        coloured +=
            fabsf(r - g) > 0.05f * (r + g) + 1e-3f || fabsf(b - g) > 0.05f * (b + g) + 1e-3f;
        mn = fminf(mn, fminf(r, fminf(g, b)));
    }
    CHECK(coloured > n / 10);
    CHECK(mn > -0.1f);
}

/* From exr-layouts/README.md (exrheader's figures); channel counts and
 * types as tex_exr.h maps them. The display window is the data window
 * at (0, 0) unless DISPLAY() gives its inclusive corners. */
#define WIN(W, H)           .w = (W), .h = (H)
#define ONE                 .nlevels = 1, .nparts = 1
#define HALF(n)             .nch = (n), .type = TEX_TYPE_HALF
#define TILES(t, n)         .tile = (t), .tile_h = (t), .nlevels = (n), .nparts = 1
#define DISPLAY(a, b, c, d) .dx0 = (a), .dy0 = (b), .dx1 = (c), .dy1 = (d)
static const layout layouts[] = {
    {.name = "compression_b44.exr",
     WIN(586, 674),
     HALF(3),
     ONE,
     .yc = true,
     .check = check_has_colour},
    {.name = "compression_dwaa_v2.exr", WIN(587, 675), HALF(4), ONE},
    {.name = "compression_dwab_v2.exr", WIN(587, 675), HALF(4), ONE},
    {.name = "compression_none.exr", WIN(587, 675), HALF(4), ONE, .flags = FAST},
    {.name = "compression_piz.exr", WIN(587, 675), HALF(4), ONE},
    {.name = "compression_rle.exr", WIN(587, 675), HALF(4), ONE},
    {.name = "compression_zip.exr", WIN(587, 675), HALF(4), ONE, .flags = FAST},
    {.name = "compression_zips.exr", WIN(587, 675), HALF(4), ONE, .flags = FAST},
    {.name = "deep_scanline_11.deep.exr", .open = TEX_ERR_UNSUPPORTED},
    {.name = "displaywindow_t01.exr", WIN(400, 300), HALF(3), ONE},
    {.name = "displaywindow_t02.exr", WIN(400, 300), DISPLAY(1, 1, 400, 300), HALF(3), ONE},
    {.name = "displaywindow_t03.exr", WIN(400, 300), DISPLAY(30, 20, 399, 299), HALF(3), ONE},
    {.name = "displaywindow_t04.exr", WIN(400, 300), DISPLAY(0, 0, 369, 279), HALF(3), ONE},
    {.name = "displaywindow_t05.exr", WIN(400, 300), DISPLAY(30, 20, 369, 279), HALF(3), ONE},
    {.name = "displaywindow_t06.exr", WIN(400, 300), DISPLAY(-1, -1, 400, 300), HALF(3), ONE},
    {.name = "displaywindow_t07.exr", WIN(400, 300), DISPLAY(-40, -40, 440, 330), HALF(3), ONE},
    {.name = "displaywindow_t08.exr",
     WIN(400, 300),
     .x0 = 30,
     .y0 = 40,
     DISPLAY(0, 0, 500, 400),
     HALF(3),
     ONE},
    {.name = "float32_Gonly_WideFloatRange.exr",
     WIN(500, 500),
     .nch = 3,
     .type = TEX_TYPE_FLOAT,
     ONE,
     .check = check_green_only},
    {.name = "float32_rgb_10x20_test.exr",
     WIN(10, 20),
     .nch = 3,
     .type = TEX_TYPE_FLOAT,
     ONE,
     .flags = FAST},
    {.name = "half_AllHalfValues.exr",
     WIN(256, 256),
     HALF(3),
     ONE,
     .flags = NAN_OK | INF_OK,
     .check = check_all_half_values},
    {.name = "half_nan_inf_BrightRingsNanInf.exr",
     WIN(800, 800),
     HALF(3),
     ONE,
     .flags = NAN_OK | INF_OK | FAST,
     .check = check_nan_inf},
    {.name = "luminance_Y_pxr24_GrayRampsHorizontal.exr", WIN(800, 800), HALF(1), ONE},
    {.name = "multipart_10parts_Beachball.0001.exr",
     WIN(877, 876),
     .x0 = 654,
     .y0 = 245,
     DISPLAY(0, 0, 2047, 1555),
     HALF(4),
     .nlevels = 1,
     .nparts = 10,
     .flags = FAST},
    {.name = "scanline_b44_Cannon.exr", WIN(780, 566), HALF(3), ONE},
    {.name = "scanline_b44_YC_Flowers.exr",
     WIN(784, 734),
     HALF(3),
     ONE,
     .yc = true,
     .check = check_has_colour},
    /* Its alpha holds +-Inf (upstream test data of the line order, not a picture). */
    {.name = "scanline_lineorder_decreasing.exr", WIN(237, 119), HALF(4), ONE, .flags = INF_OK},
    {.name = "scanline_zip_rgba_Carrots.exr", WIN(600, 400), HALF(4), ONE, .flags = FAST},
    {.name = "small_stripes.exr", WIN(100, 50), HALF(4), ONE},
    /* G (half) and Z (float): RGB half with R = B = 0; Z is ignored. */
    {.name = "tiled_12x24_none_G_Z_float.exr",
     WIN(217, 197),
     HALF(3),
     .tile = 12,
     .tile_h = 24,
     .nlevels = 1,
     .nparts = 1,
     .flags = FAST,
     .check = check_green_only},
    /* 480 bytes: the header, the chunk table and 49 bytes of the first of 9
     * tiles, whose table entries point up to byte 2314. */
    {.name = "tiled_20x20_small.exr", WIN(60, 57), HALF(4), TILES(20, 1), .flags = TRUNCATED},
    {.name = "tiled_mipmap_cube_envmap_WavyLinesCube.exr",
     WIN(256, 1536),
     HALF(3),
     TILES(64, 11),
     .flags = FAST},
    {.name = "tiled_mipmap_latlong_envmap_WavyLinesLatLong.exr",
     WIN(1024, 512),
     HALF(3),
     TILES(64, 11),
     .flags = FAST},
    {.name = "tiled_mipmap_pxr24_ColorCodedLevels.exr",
     WIN(512, 512),
     HALF(4),
     TILES(64, 10),
     .check = check_colour_coded},
    {.name = "tiled_mipmap_zip_MirrorPattern.exr",
     WIN(512, 512),
     HALF(3),
     TILES(64, 10),
     .flags = FAST},
    {.name = "tiled_mipmap_zip_npot517_PeriodicPattern.exr",
     WIN(517, 517),
     HALF(3),
     TILES(64, 10),
     .flags = FAST},
    {.name = "tiled_single_piz_luminance_Garden.exr", WIN(874, 493), HALF(1), TILES(128, 1)},
};

/* The folder given on the command line, or exit 77 when it is missing. */
static const char *
testdata(const char *dir)
{
    struct stat st;
    if (!dir || stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        printf("skipped: no test data folder at %s\n", dir ? dir : "(none given)");
        exit(TEX_TEST_SKIP);
    }
    return dir;
}

static void
one_layout(const char *dir, const layout *l)
{
    char path[4096], err[TEX_ERR_LEN];
    snprintf(path, sizeof path, "%s/%s", dir, l->name);
    int          failures = rt_test_failures;
    tex_exr     *f;
    tex_exr_info in;
    tex_result   r = tex_exr_open(path, &f, &in, err);
    CHECK_EQ_INT(r, l->open);
    if (r != TEX_OK) {
        CHECK_ONE_LINE(err);
        if (l->open == TEX_ERR_UNSUPPORTED)
            CHECK_EQ_STR(err, "deep data is not supported");
        printf("%-50s refused: %s\n", l->name, err);
        return;
    }
    if (l->open != TEX_OK) {
        tex_exr_close(f);
        return;
    }
    int32_t dx1 = l->dx1 ? l->dx1 : (int32_t)l->w - 1, dy1 = l->dy1 ? l->dy1 : (int32_t)l->h - 1;
    CHECK_EQ_INT(in.width, l->w);
    CHECK_EQ_INT(in.height, l->h);
    CHECK_EQ_INT(in.x0, l->x0);
    CHECK_EQ_INT(in.y0, l->y0);
    CHECK_EQ_INT(in.display_x0, l->dx0);
    CHECK_EQ_INT(in.display_y0, l->dy0);
    CHECK_EQ_INT(in.display_width, dx1 - l->dx0 + 1);
    CHECK_EQ_INT(in.display_height, dy1 - l->dy0 + 1);
    CHECK_EQ_INT(in.nchannels, l->nch);
    CHECK_EQ_INT(in.type, l->type);
    CHECK_EQ_INT(in.tiled, l->tile != 0);
    CHECK_EQ_INT(in.tile_width, l->tile);
    CHECK_EQ_INT(in.tile_height, l->tile_h);
    CHECK_EQ_INT(in.nlevels, l->nlevels);
    CHECK_EQ_INT(in.nparts, l->nparts);
    CHECK_EQ_INT(in.luminance_chroma, l->yc);
    if (rt_test_failures != failures) {
        tex_exr_close(f);
        return;
    }

    if (l->flags & TRUNCATED) {
        /* Every tile is cut off, the first one included; the header is whole. */
        size_t px = tex_type_size(in.type) * in.nchannels;
        void  *tile = malloc((size_t)in.tile_width * in.tile_height * px);
        REQUIRE(tile);
        for (uint32_t k = 0; k < 9; k++) {
            CHECK_EQ_INT(tex_exr_read_tile(f, 0, k % 3, k / 3, tile, err), TEX_ERR_CORRUPT);
            CHECK_ONE_LINE(err);
        }
        tex_image img;
        CHECK_EQ_INT(tex_exr_read_image(f, 0, &img, err), TEX_ERR_CORRUPT);
        CHECK(img.pixels == NULL);
        printf("%-50s header read; pixels: %s\n", l->name, err);
        free(tile);
        tex_exr_close(f);
        return;
    }

    /* The reference: the same file read by OpenEXR alone. */
    tex_exr     *ref;
    tex_exr_info ref_in;
    REQUIRE(setenv("RT_EXR_FAST", "0", 1) == 0);
    r = tex_exr_open(path, &ref, &ref_in, err);
    unsetenv("RT_EXR_FAST");
    REQUIRE(r == TEX_OK);

    tex_image levels[TEX_EXR_MAX_LEVELS] = {{0}};
    for (uint32_t i = 0; i < in.nlevels; i++) {
        uint32_t w = l->w >> i ? l->w >> i : 1, h = l->h >> i ? l->h >> i : 1, lw, lh;
        CHECK(tex_exr_level_size(f, i, &lw, &lh));
        CHECK_EQ_INT(lw, w);
        CHECK_EQ_INT(lh, h);
        r = tex_exr_read_image(f, i, &levels[i], err);
        CHECK_EQ_INT(r, TEX_OK);
        if (r != TEX_OK) {
            fprintf(stderr, "%s level %u: %s\n", l->name, i, err);
            continue;
        }
        CHECK_EQ_INT(levels[i].width, w);
        CHECK_EQ_INT(levels[i].height, h);
        size_t n = (size_t)w * h * in.nchannels, nan = 0, inf = 0;
        for (size_t k = 0; k < n; k++) {
            float v = sample(&levels[i], k);
            nan += !!isnan(v);
            inf += !!isinf(v);
        }
        if ((nan && !(l->flags & NAN_OK)) || (inf && !(l->flags & INF_OK)))
            RT_CHECK_FAIL_("%s level %u: %zu NaN, %zu Inf samples", l->name, i, nan, inf);
        tex_image want;
        CHECK_EQ_INT(tex_exr_read_image(ref, i, &want, err), TEX_OK);
        if (want.pixels) {
            char what[80];
            snprintf(what, sizeof what, "%s level %u against OpenEXR's", l->name, i);
            check_same_image(&levels[i], &want, what);
            if (in.tiled)
                check_tiles(f, &in, i, &want, l->flags & FAST);
        }
        tex_image_free(&want);
    }
    /* Whole levels (and tiles) took the fast path where it reads the file. */
    CHECK_EQ_INT(tex_exr_fast_chunks(f) > 0, !!(l->flags & FAST));
    CHECK_EQ_INT(tex_exr_fast_chunks(ref), 0);
    tex_exr_close(ref);
    if (l->check && rt_test_failures == failures)
        l->check(l, levels);
    printf("%-50s %ux%u at (%d, %d), %u ch, %u level(s)%s\n", l->name, in.width, in.height, in.x0,
           in.y0, in.nchannels, in.nlevels, rt_test_failures == failures ? "" : ": FAILED");
    for (uint32_t i = 0; i < in.nlevels; i++)
        tex_image_free(&levels[i]);
    tex_exr_close(f);
}

static void
case_layouts(const char *arg)
{
    const char *dir = testdata(arg);
    tex_test_stderr_capture();
    for (size_t i = 0; i < sizeof layouts / sizeof *layouts; i++)
        one_layout(dir, &layouts[i]);
    CHECK_EQ_INT(tex_test_stderr_release(), 0);
    /* Every .exr in the folder is in the table. */
    DIR *d = opendir(dir);
    REQUIRE(d);
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (n < 4 || strcmp(e->d_name + n - 4, ".exr"))
            continue;
        bool known = false;
        for (size_t i = 0; i < sizeof layouts / sizeof *layouts; i++)
            known |= strcmp(layouts[i].name, e->d_name) == 0;
        if (!known)
            RT_CHECK_FAIL_("%s/%s is not in the layouts table", dir, e->d_name);
    }
    closedir(d);
}

static tex_image
read_level0(const char *dir, const char *name)
{
    char         path[4096], err[TEX_ERR_LEN];
    tex_exr     *f;
    tex_exr_info in;
    tex_image    img = {0};
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (tex_exr_open(path, &f, &in, err) != TEX_OK) {
        RT_CHECK_FAIL_("%s: %s", name, err);
        return img;
    }
    if (tex_exr_read_image(f, 0, &img, err) != TEX_OK)
        RT_CHECK_FAIL_("%s: %s", name, err);
    tex_exr_close(f);
    return img;
}

/* One picture through different codecs: the lossless ones agree bit for
 * bit; DWAA/DWAB (lossy in R, G, B; A is kept exactly) come close. The
 * eight display-window files hold the same pixels whatever their windows. */
static void
case_same_pixels(const char *arg)
{
    const char *dir = testdata(arg);
    tex_image   none = read_level0(dir, "compression_none.exr");
    REQUIRE(none.pixels);
    static const char *const lossless[] = {"piz", "rle", "zip", "zips"};
    for (size_t i = 0; i < sizeof lossless / sizeof *lossless; i++) {
        char name[64];
        snprintf(name, sizeof name, "compression_%s.exr", lossless[i]);
        tex_image img = read_level0(dir, name);
        if (img.pixels)
            check_same_image(&img, &none, name);
        tex_image_free(&img);
    }
    static const char *const lossy[] = {"dwaa_v2", "dwab_v2"};
    for (size_t i = 0; i < sizeof lossy / sizeof *lossy; i++) {
        char name[64];
        snprintf(name, sizeof name, "compression_%s.exr", lossy[i]);
        tex_image img = read_level0(dir, name);
        if (!img.pixels)
            continue;
        size_t n = (size_t)none.width * none.height, alpha_diff = 0;
        double err_sum = 0;
        for (size_t p = 0; p < n; p++) {
            for (int ch = 0; ch < 3; ch++) {
                float a = sample(&img, p * 4 + ch), b = sample(&none, p * 4 + ch);
                err_sum += fabsf(a - b) / (fabsf(b) + 0.01f);
            }
            alpha_diff +=
                ((uint16_t *)img.pixels)[p * 4 + 3] != ((uint16_t *)none.pixels)[p * 4 + 3];
        }
        double mean = err_sum / (double)(n * 3);
        printf("%s: mean relative difference %.4f from compression_none\n", name, mean);
        CHECK(mean < 0.05);
        CHECK_EQ_INT(alpha_diff, 0);
        tex_image_free(&img);
    }
    tex_image_free(&none);

    tex_image t01 = read_level0(dir, "displaywindow_t01.exr");
    REQUIRE(t01.pixels);
    for (int t = 2; t <= 8; t++) {
        char name[64];
        snprintf(name, sizeof name, "displaywindow_t%02d.exr", t);
        tex_image img = read_level0(dir, name);
        if (img.pixels)
            check_same_image(&img, &t01, name);
        tex_image_free(&img);
    }
    tex_image_free(&t01);
}

static const rt_test_case cases[] = {
    {"scanline_half", case_scanline_half},
    {"scanline_float", case_scanline_float},
    {"attributes", case_attributes},
    {"tiled_mip", case_tiled_mip},
    {"tiled_one_level", case_tiled_one_level},
    {"write_invalid", case_write_invalid},
    {"write_replace", case_write_replace},
    {"write_fail", case_write_fail},
    {"read_args", case_read_args},
    {"threads", case_threads},
    {"compressions", case_compressions},
    {"write_threads", case_write_threads},
    {"layouts", case_layouts},
    {"same_pixels", case_same_pixels},
    {NULL, NULL},
};

int
main(int argc, char **argv)
{
    return rt_test_main(cases, argc, argv);
}
