/* tex_png_read() and tex_png_write(): the contract in texture/include/tex_image.h.
 *
 * Layout cases write every colour type and bit depth with libpng itself
 * (plain and Adam7-interlaced, several sizes) and check that every decoded
 * sample is exactly what was written, expanded as the contract says.
 * The pngsuite_* cases take the PngSuite folder as their argument and skip
 * (exit 77) when it is missing. */
#define _POSIX_C_SOURCE 200809L

#include "check.h"
#include "tex_file_testing.h"
#include "tex_image.h"

#include <png.h>
#include <zlib.h>

#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- writing test files with libpng ---- */

typedef struct png_spec {
    uint32_t        w, h;
    int             color, depth;
    bool            interlace;
    const uint16_t *samples; /* w * h * file channels values, each below 2^depth */
    png_color       palette[256];
    int             npalette;
    png_byte        trns[256]; /* palette alpha */
    int             ntrns;     /* palette entries with an alpha; 0: no tRNS */
    bool            has_key;   /* grey or RGB tRNS */
    png_color_16    key;
} png_spec;

static int
file_channels(int color)
{
    switch (color) {
    case PNG_COLOR_TYPE_GRAY_ALPHA:
        return 2;
    case PNG_COLOR_TYPE_RGB:
        return 3;
    case PNG_COLOR_TYPE_RGB_ALPHA:
        return 4;
    default: /* grey, palette */
        return 1;
    }
}

static void
spec_write(const char *path, const png_spec *s)
{
    FILE *f = fopen(path, "wb");
    REQUIRE(f != NULL);
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    REQUIRE(png != NULL);
    png_infop info = png_create_info_struct(png);
    REQUIRE(info != NULL);
    int        fc = file_channels(s->color), bytes = s->depth == 16 ? 2 : 1;
    size_t     stride = (size_t)s->w * (size_t)fc * (size_t)bytes;
    png_byte  *data = malloc(stride * s->h);
    png_bytep *rows = malloc(s->h * sizeof *rows);
    REQUIRE(data && rows);
    /* One byte per sample below 8 bits (png_set_packing() packs them), two
     * big-endian bytes at 16. */
    for (size_t i = 0; i < (size_t)s->w * s->h * (size_t)fc; i++) {
        if (bytes == 2) {
            data[2 * i] = (png_byte)(s->samples[i] >> 8);
            data[2 * i + 1] = (png_byte)s->samples[i];
        } else {
            data[i] = (png_byte)s->samples[i];
        }
    }
    for (uint32_t y = 0; y < s->h; y++)
        rows[y] = data + y * stride;
    if (setjmp(png_jmpbuf(png))) {
        fprintf(stderr, "libpng failed to write %s\n", path);
        exit(1);
    }
    png_init_io(png, f);
    png_set_IHDR(png, info, s->w, s->h, s->depth, s->color,
                 s->interlace ? PNG_INTERLACE_ADAM7 : PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    if (s->color == PNG_COLOR_TYPE_PALETTE)
        png_set_PLTE(png, info, s->palette, s->npalette);
    if (s->ntrns)
        png_set_tRNS(png, info, s->trns, s->ntrns, NULL);
    if (s->has_key)
        png_set_tRNS(png, info, NULL, 0, &s->key);
    png_write_info(png, info);
    if (s->depth < 8)
        png_set_packing(png);
    png_write_image(png, rows); /* all Adam7 passes when interlaced */
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    REQUIRE(fclose(f) == 0);
    free(rows);
    free(data);
}

/* What tex_png_read() must give for s: palette expanded, tRNS as alpha,
 * grey below 8 bits scaled to 0..255. Returns the channel count. */
static int
spec_expected(const png_spec *s, uint16_t *out)
{
    int      fc = file_channels(s->color), depth = s->depth;
    uint16_t max = (uint16_t)((1u << depth) - 1);
    unsigned scale = depth < 8 ? 255u / max : 1u; /* 255, 85, 17 */
    int      n = 0;
    for (size_t p = 0; p < (size_t)s->w * s->h; p++) {
        const uint16_t *in = s->samples + p * (size_t)fc;
        n = 0;
        if (s->color == PNG_COLOR_TYPE_PALETTE) {
            png_color c = s->palette[in[0]];
            out[n++] = c.red;
            out[n++] = c.green;
            out[n++] = c.blue;
            if (s->ntrns)
                out[n++] = in[0] < s->ntrns ? s->trns[in[0]] : 255;
        } else {
            for (int c = 0; c < fc; c++)
                out[n++] = (uint16_t)(in[c] * scale);
            if (s->has_key) {
                bool hit =
                    s->color == PNG_COLOR_TYPE_GRAY
                        ? in[0] == s->key.gray
                        : in[0] == s->key.red && in[1] == s->key.green && in[2] == s->key.blue;
                out[n++] = hit ? 0 : (uint16_t)(max * scale);
            }
        }
        out += n;
    }
    return n;
}

/* Random samples, extremes first, and the tRNS key in every 5th pixel. */
static void
spec_fill(png_spec *s, uint16_t *samples, uint64_t seed)
{
    int      fc = file_channels(s->color);
    uint32_t max =
        s->color == PNG_COLOR_TYPE_PALETTE ? (uint32_t)s->npalette - 1 : (1u << s->depth) - 1;
    for (size_t i = 0; i < (size_t)s->w * s->h * (size_t)fc; i++) {
        uint32_t r = (uint32_t)(tex_test_rand(&seed) >> 32);
        samples[i] = (uint16_t)(i == 0 ? 0 : i == 1 ? max : r % (max + 1));
    }
    if (s->has_key) {
        for (size_t p = 3; p < (size_t)s->w * s->h; p += 5) {
            if (s->color == PNG_COLOR_TYPE_GRAY) {
                samples[p] = s->key.gray;
            } else {
                samples[3 * p] = s->key.red;
                samples[3 * p + 1] = s->key.green;
                samples[3 * p + 2] = s->key.blue;
            }
        }
    }
    s->samples = samples;
}

/* Writes s, reads it back, compares every sample. */
static void
spec_check(png_spec *s, uint64_t seed)
{
    size_t    npix = (size_t)s->w * s->h;
    uint16_t *samples = malloc(npix * 4 * sizeof *samples);
    uint16_t *want = malloc(npix * 4 * sizeof *want);
    REQUIRE(samples && want);
    spec_fill(s, samples, seed);
    int nch = spec_expected(s, want);

    const char *path = tex_test_path("layout.png");
    spec_write(path, s);
    tex_image  img;
    char       err[TEX_ERR_LEN] = "";
    tex_result r = tex_png_read(path, &img, err);
    if (r != TEX_OK)
        fprintf(stderr, "color %d depth %d %s %ux%u: %s\n", s->color, s->depth,
                s->interlace ? "interlaced" : "plain", s->w, s->h, err);
    REQUIRE(r == TEX_OK);
    CHECK_EQ_INT(img.width, s->w);
    CHECK_EQ_INT(img.height, s->h);
    CHECK_EQ_INT(img.nchannels, nch);
    CHECK_EQ_INT(img.type, s->depth == 16 ? TEX_TYPE_U16 : TEX_TYPE_U8);
    CHECK(img.srgb);
    REQUIRE(img.nchannels == (uint32_t)nch && img.width == s->w && img.height == s->h);
    int bad = 0;
    for (size_t i = 0; i < npix * (size_t)nch; i++) {
        unsigned got = img.type == TEX_TYPE_U16 ? ((const uint16_t *)img.pixels)[i]
                                                : ((const uint8_t *)img.pixels)[i];
        if (got != want[i] && bad++ < 5)
            fprintf(stderr, "color %d depth %d %s %ux%u: sample %zu (pixel %zu) is %u, not %u\n",
                    s->color, s->depth, s->interlace ? "interlaced" : "plain", s->w, s->h, i,
                    i / (size_t)nch, got, want[i]);
    }
    CHECK_EQ_INT(bad, 0);
    tex_test_rows_check(tex_png_read_rows, path, &img); /* row by row: the same */
    tex_image_free(&img);
    free(samples);
    free(want);
}

static const uint32_t sizes[][2] = {{1, 1}, {5, 3}, {37, 23}, {3, 40}};

/* Every size, plain and interlaced, for one colour type at one depth. */
static void
layout_check(int color, int depth, bool trns)
{
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        for (int interlace = 0; interlace < 2; interlace++) {
            png_spec s = {.w = sizes[k][0],
                          .h = sizes[k][1],
                          .color = color,
                          .depth = depth,
                          .interlace = interlace};
            uint64_t seed = 0x9E3779B97F4A7C15u * (uint64_t)(depth + 16 * color + 1) + k;
            if (color == PNG_COLOR_TYPE_PALETTE) {
                s.npalette = 1 << depth;
                for (int i = 0; i < s.npalette; i++) {
                    uint64_t r = tex_test_rand(&seed);
                    s.palette[i] =
                        (png_color){(png_byte)r, (png_byte)(r >> 8), (png_byte)(r >> 16)};
                    s.trns[i] = i == 0 ? 0 : i == 1 ? 255 : (png_byte)(r >> 24);
                }
                if (trns) /* the last entry has none: it must read as opaque */
                    s.ntrns = s.npalette > 1 ? s.npalette - 1 : 1;
            } else if (trns) {
                uint32_t max = (1u << depth) - 1;
                s.has_key = true;
                s.key.gray = (png_uint_16)(max / 3);
                s.key.red = (png_uint_16)(max / 5);
                s.key.green = (png_uint_16)(max / 2);
                s.key.blue = (png_uint_16)max;
            }
            spec_check(&s, seed);
        }
    }
}

static void
case_grey(const char *arg)
{
    (void)arg;
    for (int d = 1; d <= 16; d *= 2)
        layout_check(PNG_COLOR_TYPE_GRAY, d, false);
}

static void
case_grey_alpha(const char *arg)
{
    (void)arg;
    layout_check(PNG_COLOR_TYPE_GRAY_ALPHA, 8, false);
    layout_check(PNG_COLOR_TYPE_GRAY_ALPHA, 16, false);
}

static void
case_rgb(const char *arg)
{
    (void)arg;
    layout_check(PNG_COLOR_TYPE_RGB, 8, false);
    layout_check(PNG_COLOR_TYPE_RGB, 16, false);
}

static void
case_rgba(const char *arg)
{
    (void)arg;
    layout_check(PNG_COLOR_TYPE_RGB_ALPHA, 8, false);
    layout_check(PNG_COLOR_TYPE_RGB_ALPHA, 16, false);
}

static void
case_palette(const char *arg)
{
    (void)arg;
    for (int d = 1; d <= 8; d *= 2)
        layout_check(PNG_COLOR_TYPE_PALETTE, d, false);
}

static void
case_palette_trns(const char *arg)
{
    (void)arg;
    for (int d = 1; d <= 8; d *= 2)
        layout_check(PNG_COLOR_TYPE_PALETTE, d, true);
}

static void
case_grey_trns(const char *arg)
{
    (void)arg;
    for (int d = 1; d <= 16; d *= 2)
        layout_check(PNG_COLOR_TYPE_GRAY, d, true);
}

static void
case_rgb_trns(const char *arg)
{
    (void)arg;
    layout_check(PNG_COLOR_TYPE_RGB, 8, true);
    layout_check(PNG_COLOR_TYPE_RGB, 16, true);
}

/* ---- tex_png_write() ---- */

static tex_image
image_make(uint32_t w, uint32_t h, uint32_t nch, tex_type type, uint64_t seed)
{
    tex_image img;
    char      err[TEX_ERR_LEN];
    REQUIRE(tex_image_alloc(&img, w, h, nch, type, err) == TEX_OK);
    img.srgb = true;
    size_t n = (size_t)w * h * nch;
    for (size_t i = 0; i < n; i++) {
        uint64_t r = tex_test_rand(&seed);
        if (type == TEX_TYPE_U16)
            ((uint16_t *)img.pixels)[i] = (uint16_t)(i == 0 ? 0 : i == 1 ? 65535 : r);
        else
            ((uint8_t *)img.pixels)[i] = (uint8_t)(i == 0 ? 0 : i == 1 ? 255 : r);
    }
    return img;
}

/* Whether the file has an sRGB chunk, asked of libpng directly. */
static bool
file_has_srgb(const char *path)
{
    FILE *f = fopen(path, "rb");
    REQUIRE(f != NULL);
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop   info = png_create_info_struct(png);
    REQUIRE(png && info);
    if (setjmp(png_jmpbuf(png))) {
        fprintf(stderr, "libpng failed to read %s\n", path);
        exit(1);
    }
    png_init_io(png, f);
    png_read_info(png, info);
    int  intent = -1;
    bool has = png_get_sRGB(png, info, &intent) != 0;
    png_destroy_read_struct(&png, &info, NULL);
    fclose(f);
    return has;
}

/* Entries in a folder, . and .. aside. */
static int
dir_count(const char *dir)
{
    DIR *d = opendir(dir);
    REQUIRE(d != NULL);
    int            n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            n++;
    closedir(d);
    return n;
}

static void
case_write_read(const char *arg)
{
    (void)arg;
    const char *path = tex_test_path("written.png");
    for (int t = 0; t < 2; t++) {
        tex_type type = t ? TEX_TYPE_U16 : TEX_TYPE_U8;
        for (uint32_t nch = 1; nch <= 4; nch++) {
            for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
                tex_image  img = image_make(sizes[k][0], sizes[k][1], nch, type, nch * 7 + k + 1);
                char       err[TEX_ERR_LEN] = "";
                tex_result r = tex_png_write(path, &img, err);
                if (r != TEX_OK)
                    fprintf(stderr, "write: %s\n", err);
                REQUIRE(r == TEX_OK);
                CHECK(file_has_srgb(path));
                tex_image back;
                r = tex_png_read(path, &back, err);
                if (r != TEX_OK)
                    fprintf(stderr, "read: %s\n", err);
                REQUIRE(r == TEX_OK);
                CHECK_EQ_INT(back.width, img.width);
                CHECK_EQ_INT(back.height, img.height);
                CHECK_EQ_INT(back.nchannels, nch);
                CHECK_EQ_INT(back.type, type);
                CHECK(back.srgb);
                CHECK_EQ_U64(tex_image_bytes(&back), tex_image_bytes(&img));
                CHECK(memcmp(back.pixels, img.pixels, tex_image_bytes(&img)) == 0);
                tex_image_free(&back);
                tex_image_free(&img);
            }
        }
    }
    CHECK_EQ_INT(dir_count(tex_test_dir()), 1); /* no temporary file left */
}

/* A new file gets 0666 less the umask, as open() would give it, not
 * mkstemp()'s 0600; an existing file keeps its mode. */
static void
case_write_mode(const char *arg)
{
    (void)arg;
    tex_image   img = image_make(4, 4, 3, TEX_TYPE_U8, 1);
    char        err[TEX_ERR_LEN] = "";
    struct stat st;
    const char *path = tex_test_path("mode.png");
    umask(022);
    REQUIRE(tex_png_write(path, &img, err) == TEX_OK);
    REQUIRE(stat(path, &st) == 0);
    CHECK_EQ_INT(st.st_mode & 0777, 0644);

    REQUIRE(chmod(path, 0640) == 0);
    REQUIRE(tex_png_write(path, &img, err) == TEX_OK);
    REQUIRE(stat(path, &st) == 0);
    CHECK_EQ_INT(st.st_mode & 0777, 0640);

    path = tex_test_path("mode2.png");
    umask(027);
    REQUIRE(tex_png_write(path, &img, err) == TEX_OK);
    REQUIRE(stat(path, &st) == 0);
    CHECK_EQ_INT(st.st_mode & 0777, 0640);
    umask(022);
    tex_image_free(&img);
}

/* Writing over a file replaces it whole. */
static void
case_write_replace(const char *arg)
{
    (void)arg;
    const char *path = tex_test_path("replace.png");
    tex_test_file_write(path, "old contents", 12);
    tex_image img = image_make(9, 7, 4, TEX_TYPE_U16, 3);
    char      err[TEX_ERR_LEN] = "";
    REQUIRE(tex_png_write(path, &img, err) == TEX_OK);
    tex_image back;
    REQUIRE(tex_png_read(path, &back, err) == TEX_OK);
    CHECK(memcmp(back.pixels, img.pixels, tex_image_bytes(&img)) == 0);
    CHECK_EQ_INT(dir_count(tex_test_dir()), 1);
    tex_image_free(&back);
    tex_image_free(&img);
}

/* A write that cannot happen says why and leaves nothing behind. Tests run
 * as root, which may write anywhere, so "not writable" is a folder that
 * does not exist, or a path that is a folder. */
static void
case_write_fail(const char *arg)
{
    (void)arg;
    tex_image img = image_make(8, 8, 3, TEX_TYPE_U8, 5);
    char      err[TEX_ERR_LEN] = "";

    tex_result r = tex_png_write(tex_test_path("missing/dir/out.png"), &img, err);
    CHECK_EQ_INT(r, TEX_ERR_WRITE);
    CHECK_CONTAINS(err, "No such file or directory");
    CHECK_ONE_LINE(err);

    const char *sub = tex_test_path("sub");
    REQUIRE(mkdir(sub, 0755) == 0);
    r = tex_png_write(sub, &img, err); /* the temporary is made next to it, then rename fails */
    CHECK_EQ_INT(r, TEX_ERR_WRITE);
    CHECK_CONTAINS(err, "directory");
    CHECK_ONE_LINE(err);
    char slash[4300];
    snprintf(slash, sizeof slash, "%s/", sub);
    r = tex_png_write(slash, &img, err);
    CHECK_EQ_INT(r, TEX_ERR_WRITE);
    CHECK_ONE_LINE(err);
    CHECK_EQ_INT(dir_count(tex_test_dir()), 1); /* only sub/ */
    CHECK_EQ_INT(dir_count(sub), 0);

    /* Bad arguments. */
    tex_image half = img;
    half.type = TEX_TYPE_HALF;
    CHECK_EQ_INT(tex_png_write(tex_test_path("x.png"), &half, err), TEX_ERR_INVALID);
    CHECK_ONE_LINE(err);
    tex_image five = img;
    five.nchannels = 5;
    CHECK_EQ_INT(tex_png_write(tex_test_path("x.png"), &five, err), TEX_ERR_INVALID);
    tex_image none = img;
    none.pixels = NULL;
    CHECK_EQ_INT(tex_png_write(tex_test_path("x.png"), &none, err), TEX_ERR_INVALID);
    tex_image empty = img;
    empty.width = 0;
    CHECK_EQ_INT(tex_png_write(tex_test_path("x.png"), &empty, err), TEX_ERR_INVALID);
    CHECK_EQ_INT(tex_png_write(NULL, &img, err), TEX_ERR_INVALID);
    CHECK_EQ_INT(dir_count(tex_test_dir()), 1);
    tex_image_free(&img);
}

/* A write that fails part-way (here: over the file-size limit, as on a
 * full disk) says why and leaves nothing behind, not even the old file's
 * replacement half-written. */
static void
case_write_fail_midway(const char *arg)
{
    (void)arg;
    const char *path = tex_test_path("big.png");
    tex_test_file_write(path, "old", 3);
    tex_image img = image_make(256, 256, 4, TEX_TYPE_U16, 9); /* noise: ~512 KiB of PNG */
    char      err[TEX_ERR_LEN] = "";
    signal(SIGXFSZ, SIG_IGN); /* write() fails with EFBIG instead */
    struct rlimit rl = {.rlim_cur = 64 * 1024, .rlim_max = RLIM_INFINITY};
    REQUIRE(setrlimit(RLIMIT_FSIZE, &rl) == 0);
    tex_result r = tex_png_write(path, &img, err);
    rl.rlim_cur = RLIM_INFINITY;
    REQUIRE(setrlimit(RLIMIT_FSIZE, &rl) == 0);
    CHECK_EQ_INT(r, TEX_ERR_WRITE);
    CHECK_CONTAINS(err, "File too large");
    CHECK_ONE_LINE(err);
    CHECK_EQ_INT(dir_count(tex_test_dir()), 1); /* the old file, untouched */
    size_t         n;
    unsigned char *old = tex_test_file_read(path, &n);
    CHECK(n == 3 && memcmp(old, "old", 3) == 0);
    free(old);
    tex_image_free(&img);
}

/* ---- PngSuite ---- */

/* The folder from the command line, or exits 77 (skipped) without it. */
static const char *
suite_dir(const char *arg)
{
    struct stat st;
    if (!arg || stat(arg, &st) != 0 || !S_ISDIR(st.st_mode)) {
        printf("skipped: no PngSuite folder at %s (set RT_TESTDATA; see "
               "tests/CMakeLists.txt)\n",
               arg ? arg : "(none given)");
        exit(TEX_TEST_SKIP);
    }
    return arg;
}

typedef struct suite_file {
    char name[64]; /* without .png */
} suite_file;

/* The folder's *.png files, sorted; *n is their count. */
static suite_file *
suite_list(const char *dir, size_t *n)
{
    DIR *d = opendir(dir);
    REQUIRE(d != NULL);
    suite_file    *files = NULL;
    size_t         cap = 0;
    struct dirent *e;
    *n = 0;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len < 5 || len >= 64 + 4 || strcmp(e->d_name + len - 4, ".png") != 0)
            continue;
        if (*n == cap) {
            cap = cap ? 2 * cap : 256;
            files = realloc(files, cap * sizeof *files);
            REQUIRE(files != NULL);
        }
        snprintf(files[*n].name, sizeof files[0].name, "%.*s", (int)(len - 4), e->d_name);
        (*n)++;
    }
    closedir(d);
    for (size_t i = 1; i < *n; i++) /* insertion sort: a few hundred names */
        for (size_t j = i; j > 0 && strcmp(files[j - 1].name, files[j].name) > 0; j--) {
            suite_file t = files[j];
            files[j] = files[j - 1];
            files[j - 1] = t;
        }
    return files;
}

static const char *
suite_path(const char *dir, const char *name)
{
    static char buf[4][4200];
    static int  next;
    char       *p = buf[next++ % 4];
    snprintf(p, sizeof buf[0], "%s/%s.png", dir, name);
    return p;
}

/* Whether the file has a chunk of `type`: walked here, not by libpng. */
static bool
suite_has_chunk(const char *path, const char *type)
{
    size_t         n;
    unsigned char *d = tex_test_file_read(path, &n);
    bool           has = false;
    for (size_t p = 8; p + 12 <= n;) {
        uint32_t len =
            (uint32_t)d[p] << 24 | (uint32_t)d[p + 1] << 16 | (uint32_t)d[p + 2] << 8 | d[p + 3];
        if (memcmp(d + p + 4, type, 4) == 0)
            has = true;
        if (len > n - p - 12)
            break;
        p += 12 + (size_t)len;
    }
    free(d);
    return has;
}

static bool
suite_has_trns(const char *path)
{
    return suite_has_chunk(path, "tRNS");
}

/* PngSuite names: 32x32 unless sNN (NxN) or cdf/cdh/cds (pHYs tests:
 * 8x32 "flat", 32x8 "high", 8x8 "square" pixels); the last four letters
 * are colour type, kind and bit depth ("0g04", "3p08", "6a16"). */
static void
suite_expect(const char *name, uint32_t *w, uint32_t *h, int *color, int *depth)
{
    *w = *h = 32;
    if (name[0] == 's' && name[1] >= '0' && name[1] <= '9')
        *w = *h = (uint32_t)((name[1] - '0') * 10 + (name[2] - '0'));
    if (strncmp(name, "cdf", 3) == 0)
        *w = 8, *h = 32;
    if (strncmp(name, "cdh", 3) == 0)
        *w = 32, *h = 8;
    if (strncmp(name, "cds", 3) == 0)
        *w = *h = 8;
    size_t len = strlen(name);
    *color = name[len - 4] - '0';
    *depth = (name[len - 2] - '0') * 10 + (name[len - 1] - '0');
}

static void
case_pngsuite_valid(const char *arg)
{
    const char *dir = suite_dir(arg);
    size_t      n, valid = 0;
    suite_file *files = suite_list(dir, &n);
    for (size_t i = 0; i < n; i++) {
        const char *name = files[i].name;
        if (name[0] == 'x')
            continue;
        valid++;
        uint32_t w, h;
        int      color, depth;
        suite_expect(name, &w, &h, &color, &depth);
        static const int base[] = {1, 0, 3, 3, 2, 0, 4};
        REQUIRE(color >= 0 && color <= 6 && base[color] != 0);
        int nch = base[color] + (color != 4 && color != 6 && suite_has_trns(suite_path(dir, name)));

        tex_image  img;
        char       err[TEX_ERR_LEN] = "";
        tex_result r = tex_png_read(suite_path(dir, name), &img, err);
        if (r != TEX_OK) {
            RT_CHECK_FAIL_("%s: %s (%s)", name, err, tex_result_str(r));
            continue;
        }
        if (img.width != w || img.height != h || img.nchannels != (uint32_t)nch ||
            img.type != (depth == 16 ? TEX_TYPE_U16 : TEX_TYPE_U8) || !img.srgb || !img.pixels)
            RT_CHECK_FAIL_("%s: %ux%u, %u channels, type %d; want %ux%u, %d channels, %s", name,
                           img.width, img.height, img.nchannels, (int)img.type, w, h, nch,
                           depth == 16 ? "U16" : "U8");
        tex_image_free(&img);
    }
    CHECK_EQ_INT(valid, 161); /* pngsuite/README.md */
    free(files);
}

static void
case_pngsuite_corrupt(const char *arg)
{
    const char *dir = suite_dir(arg);
    size_t      n, corrupt = 0;
    suite_file *files = suite_list(dir, &n);
    for (size_t i = 0; i < n; i++) {
        const char *name = files[i].name;
        if (name[0] != 'x')
            continue;
        corrupt++;
        tex_image  img;
        char       err[TEX_ERR_LEN] = "";
        tex_result r = tex_png_read(suite_path(dir, name), &img, err);
        printf("%s: %s: %s\n", name, tex_result_str(r), err);
        if (r == TEX_OK)
            RT_CHECK_FAIL_("%s: read as a %ux%u image", name, img.width, img.height);
        CHECK(r == TEX_ERR_FORMAT || r == TEX_ERR_CORRUPT);
        CHECK_ONE_LINE(err);
        CHECK(img.pixels == NULL);
        tex_image_free(&img);
    }
    CHECK_EQ_INT(corrupt, 14); /* pngsuite/README.md */
    free(files);
}

/* One sample of a decoded image. */
static unsigned
sample(const tex_image *img, uint32_t x, uint32_t y, uint32_t c)
{
    size_t i = ((size_t)y * img->width + x) * img->nchannels + c;
    return img->type == TEX_TYPE_U16 ? ((const uint16_t *)img->pixels)[i]
                                     : ((const uint8_t *)img->pixels)[i];
}

typedef struct known_pixel {
    const char *file;
    uint32_t    x, y;
    unsigned    v[4]; /* as many as the image has channels */
} known_pixel;

/* PngSuite publishes no sample values, so these were read off the files
 * with a separate, throwaway decoder (Python and zlib, written for the
 * check and not kept), which agreed with tex_png_read() on every sample of
 * every valid file. They show the layouts a texture can arrive in: grey
 * ramps, sub-byte grey scaled by 255, 85 or 17, alpha ramping across, and
 * a 4-bit grey tRNS background that becomes alpha 0. */
static const known_pixel known[] = {
    {"basn0g01", 0, 0, {255}},
    {"basn0g01", 31, 0, {0}},
    {"basn0g01", 0, 31, {0}},
    {"basn0g02", 0, 0, {0}},
    {"basn0g02", 15, 0, {255}},
    {"basn0g02", 15, 31, {170}},
    {"basn0g04", 15, 0, {51}},
    {"basn0g04", 16, 0, {68}},
    {"basn0g04", 31, 31, {238}},
    {"basn0g08", 0, 0, {0}},
    {"basn0g08", 1, 0, {1}},
    {"basn0g08", 31, 0, {31}},
    {"basn0g08", 0, 1, {32}},
    {"basn0g08", 31, 31, {3}},
    {"basn0g16", 0, 0, {0}},
    {"basn0g16", 1, 0, {2304}},
    {"basn0g16", 0, 1, {512}},
    {"basn0g16", 31, 31, {255}},
    {"basn2c08", 0, 0, {255, 255, 255}},
    {"basn2c08", 1, 0, {255, 255, 254}},
    {"basn2c08", 0, 1, {255, 255, 223}},
    {"basn2c08", 31, 31, {0, 0, 0}},
    {"basn2c16", 0, 0, {65535, 65535, 0}},
    {"basn2c16", 1, 0, {63421, 65535, 0}},
    {"basn2c16", 31, 31, {0, 0, 65535}},
    {"basn4a08", 0, 0, {255, 0}},
    {"basn4a08", 31, 0, {255, 255}},
    {"basn4a08", 1, 1, {246, 8}},
    {"basn4a08", 0, 31, {0, 0}},
    {"basn6a08", 0, 0, {255, 0, 8, 0}},
    {"basn6a08", 31, 0, {255, 0, 8, 255}},
    {"basn6a08", 0, 31, {0, 32, 255, 0}},
    {"tbbn0g04", 0, 0, {255, 0}},
    {"tbbn0g04", 15, 2, {204, 255}},
};

static void
case_pngsuite_pixels(const char *arg)
{
    const char *dir = suite_dir(arg);
    for (size_t k = 0; k < sizeof known / sizeof known[0]; k++) {
        const known_pixel *p = &known[k];
        tex_image          img;
        char               err[TEX_ERR_LEN] = "";
        if (tex_png_read(suite_path(dir, p->file), &img, err) != TEX_OK) {
            RT_CHECK_FAIL_("%s: %s", p->file, err);
            continue;
        }
        for (uint32_t c = 0; c < img.nchannels; c++)
            if (sample(&img, p->x, p->y, c) != p->v[c])
                RT_CHECK_FAIL_("%s (%u, %u) channel %u: %u, not %u", p->file, p->x, p->y, c,
                               sample(&img, p->x, p->y, c), p->v[c]);
        tex_image_free(&img);
    }
}

/* Files that differ only in how the same pixels are stored must decode to
 * the same samples: interlaced (i in the 4th letter) and plain, every zlib
 * level, IDAT split in 1, 2, 4 or 9 chunks, and background chunks, which
 * the reader ignores. */
static void
case_pngsuite_same(const char *arg)
{
    const char *dir = suite_dir(arg);
    size_t      n, pairs = 0;
    suite_file *files = suite_list(dir, &n);
    for (size_t i = 0; i < n; i++) {
        const char *name = files[i].name;
        char        ref[64];
        snprintf(ref, sizeof ref, "%s", name);
        size_t len = strlen(name);
        if (name[0] == 'x' || len != 8)
            continue;
        if (name[3] == 'i')
            ref[3] = 'n'; /* interlaced: the plain twin */
        if (name[0] == 'z')
            memcpy(ref, "z00", 3);
        if (strncmp(name, "oi", 2) == 0 || strncmp(name, "bg", 2) == 0)
            snprintf(ref, sizeof ref, "basn%s", name + 4);
        if (strcmp(ref, name) == 0)
            continue;
        struct stat st;
        if (stat(suite_path(dir, ref), &st) != 0)
            continue;
        tex_image a, b;
        char      err[TEX_ERR_LEN] = "";
        REQUIRE(tex_png_read(suite_path(dir, name), &a, err) == TEX_OK);
        REQUIRE(tex_png_read(suite_path(dir, ref), &b, err) == TEX_OK);
        if (a.width != b.width || a.height != b.height || a.nchannels != b.nchannels ||
            a.type != b.type || memcmp(a.pixels, b.pixels, tex_image_bytes(&a)) != 0)
            RT_CHECK_FAIL_("%s and %s decode differently", name, ref);
        pairs++;
        tex_image_free(&a);
        tex_image_free(&b);
    }
    CHECK_EQ_INT(pairs, 52); /* 33 interlaced twins, 3 zlib levels, 8 split IDATs, 8 bKGD */
    printf("%zu pairs compared\n", pairs);
    free(files);
}

static uint32_t rows_seen;

static tex_result
rows_stop_at_5(void *ctx, const tex_image *shape, uint32_t y, const void *row,
               char err[TEX_ERR_LEN])
{
    (void)ctx, (void)shape, (void)row;
    rows_seen++;
    if (y < 5)
        return TEX_OK;
    snprintf(err, TEX_ERR_LEN, "stopped at row %u", y);
    return TEX_ERR_WRITE;
}

/* By rows: the consumer's failure stops the read at once and is what it
 * returns; a file cut short fails as a whole read does, after the rows it
 * had (the caller drops them). */
static void
case_rows_stop(const char *arg)
{
    (void)arg;
    char      err[TEX_ERR_LEN];
    tex_image img;
    REQUIRE(tex_image_alloc(&img, 200, 200, 3, TEX_TYPE_U8, err) == TEX_OK);
    uint64_t seed = 7; /* noise: the data does not compress, and spans many IDAT chunks */
    for (size_t i = 0; i < tex_image_bytes(&img); i++)
        ((uint8_t *)img.pixels)[i] = (uint8_t)(tex_test_rand(&seed) >> 56);
    const char *path = tex_test_path("rows.png");
    REQUIRE(tex_png_write(path, &img, err) == TEX_OK);
    tex_image_free(&img);

    rows_seen = 0;
    CHECK_EQ_INT(tex_png_read_rows(path, rows_stop_at_5, NULL, err), TEX_ERR_WRITE);
    CHECK_EQ_INT(rows_seen, 6);
    CHECK(strcmp(err, "stopped at row 5") == 0);

    size_t         n;
    unsigned char *bytes = tex_test_file_read(path, &n);
    const char    *cut = tex_test_path("rows_cut.png");
    tex_test_file_write(cut, bytes, n / 2);
    free(bytes);
    tex_test_rows_ g = {0};
    CHECK_EQ_INT(tex_png_read_rows(cut, tex_test_rows_take_, &g, err), TEX_ERR_CORRUPT);
    CHECK_CONTAINS(err, "truncated");
    CHECK(g.next > 0 && g.next < 200); /* some rows, not all */
    tex_image_free(&g.img);
}

/* ---- the fast path (texture/io_png_fast.c) ---- */

/* Reads `path` by rows into *img, with the fast path allowed or not
 * (RT_PNG_FAST=0); says whether it took the fast path. */
static tex_result
read_rows_as(const char *path, bool fast, tex_image *img, char err[TEX_ERR_LEN], bool *took)
{
    tex_test_rows_ g = {0};
    uint64_t       before = tex_png_fast_reads();
    if (!fast)
        REQUIRE(setenv("RT_PNG_FAST", "0", 1) == 0);
    tex_result r = tex_png_read_rows(path, tex_test_rows_take_, &g, err);
    unsetenv("RT_PNG_FAST");
    *took = tex_png_fast_reads() != before;
    CHECK_EQ_INT(g.out_of_order, 0);
    if (r != TEX_OK)
        tex_image_free(&g.img);
    *img = g.img;
    return r;
}

/* The file read by rows with the fast path and by libpng alone: the same
 * result, message and pixels; read whole, the same again. Returns whether
 * the fast path took it. */
static bool
same_as_libpng(const char *path, const char *what)
{
    tex_image  a, b;
    char       ea[TEX_ERR_LEN] = "", eb[TEX_ERR_LEN] = "";
    bool       took, took_b;
    tex_result ra = read_rows_as(path, true, &a, ea, &took);
    tex_result rb = read_rows_as(path, false, &b, eb, &took_b);
    CHECK(!took_b); /* RT_PNG_FAST=0 */
    if (ra != rb || (ra != TEX_OK && strcmp(ea, eb) != 0))
        RT_CHECK_FAIL_("%s: %s \"%s\" with the fast path, %s \"%s\" by libpng", what,
                       tex_result_str(ra), ea, tex_result_str(rb), eb);
    else if (ra == TEX_OK &&
             (a.width != b.width || a.height != b.height || a.nchannels != b.nchannels ||
              a.type != b.type || memcmp(a.pixels, b.pixels, tex_image_bytes(&a)) != 0))
        RT_CHECK_FAIL_("%s: the fast path and libpng read different pixels", what);
    /* A whole read takes the path too, and gives the rows' image. */
    tex_image  c;
    char       ec[TEX_ERR_LEN] = "";
    uint64_t   before = tex_png_fast_reads();
    tex_result rc = tex_png_read(path, &c, ec);
    CHECK_EQ_INT(tex_png_fast_reads() - before, took);
    if (rc != ra || (rc != TEX_OK && strcmp(ec, ea) != 0))
        RT_CHECK_FAIL_("%s: read whole, %s \"%s\"; by rows, %s \"%s\"", what, tex_result_str(rc),
                       ec, tex_result_str(ra), ea);
    else if (rc == TEX_OK && (c.width != a.width || c.height != a.height || !c.srgb ||
                              memcmp(c.pixels, a.pixels, tex_image_bytes(&a)) != 0))
        RT_CHECK_FAIL_("%s: read whole, another image than by rows", what);
    tex_image_free(&a);
    tex_image_free(&b);
    tex_image_free(&c);
    return took;
}

/* Every PngSuite file, valid or not, reads by rows as libpng reads it; the
 * fast path takes exactly the plain ones: 8- or 16-bit grey, grey+alpha,
 * RGB or RGBA (colour types 0, 4, 2, 6), 8-bit palette (3), not
 * interlaced (IHDR, read here), no tRNS or PLTE but a palette image's,
 * none corrupt. */
static void
case_pngsuite_fast(const char *arg)
{
    const char *dir = suite_dir(arg);
    size_t      n, taken = 0;
    suite_file *files = suite_list(dir, &n);
    for (size_t i = 0; i < n; i++) {
        const char    *name = files[i].name, *path = suite_path(dir, name);
        size_t         size;
        unsigned char *d = tex_test_file_read(path, &size);
        bool           plain =
            name[0] != 'x' && size > 28 && (d[24] == 8 || (d[24] == 16 && d[25] != 3)) &&
            d[25] <= 6 && d[25] != 1 && d[25] != 5 && d[28] == 0 &&
            (d[25] == 3 || (!suite_has_chunk(path, "tRNS") && !suite_has_chunk(path, "PLTE")));
        free(d);
        bool took = same_as_libpng(path, name);
        if (took != plain)
            RT_CHECK_FAIL_("%s: the fast path %s it", name, took ? "took" : "refused");
        taken += took;
    }
    printf("%zu files taken by the fast path\n", taken);
    CHECK_EQ_INT(taken, 75);
    free(files);
}

/* ---- PNGs built by hand: filters, chunks and zlib streams ---- */

static void
put32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24), p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8), p[3] = (unsigned char)v;
}

/* A chunk, its CRC right unless `bad_crc`. */
static void
chunk_add(tex_test_bytes *b, const char *type, const void *data, size_t n, bool bad_crc)
{
    unsigned char head[8], crc[4];
    put32(head, (uint32_t)n);
    memcpy(head + 4, type, 4);
    tex_test_bytes_add(b, head, 8);
    tex_test_bytes_add(b, data, n);
    uLong c = crc32(crc32(0, head + 4, 4), data, (uInt)n);
    put32(crc, (uint32_t)c ^ (bad_crc ? 1u : 0u));
    tex_test_bytes_add(b, crc, 4);
}

static void
header_add(tex_test_bytes *b, uint32_t w, uint32_t h, int depth, int color)
{
    static const unsigned char sig[8] = {137, 'P', 'N', 'G', 13, 10, 26, 10};
    unsigned char              ihdr[13] = {0};
    put32(ihdr, w);
    put32(ihdr + 4, h);
    ihdr[8] = (unsigned char)depth;
    ihdr[9] = (unsigned char)color;
    tex_test_bytes_add(b, sig, 8);
    chunk_add(b, "IHDR", ihdr, 13, false);
}

/* PNG's predictor for filter 4, written out here as the specification
 * gives it, apart from the reader's. */
static int
paeth_spec(int a, int b, int c)
{
    int p = a + b - c, pa = abs(p - a), pb = abs(p - b), pc = abs(p - c);
    if (pa <= pb && pa <= pc)
        return a;
    return pb <= pc ? b : c;
}

/* Filters row y of pixels (w x h, bpp bytes a pixel) by `f` into out[0..1+w*bpp). */
static void
filter_row(const unsigned char *px, uint32_t w, uint32_t y, unsigned bpp, int f, unsigned char *out)
{
    size_t               n = (size_t)w * bpp;
    const unsigned char *row = px + y * n, *up = y ? row - n : NULL;
    out[0] = (unsigned char)f;
    for (size_t i = 0; i < n; i++) {
        int a = i >= bpp ? row[i - bpp] : 0, b = up ? up[i] : 0;
        int c = i >= bpp && up ? up[i - bpp] : 0;
        int pred = f == 1   ? a
                   : f == 2 ? b
                   : f == 3 ? (a + b) / 2
                   : f == 4 ? paeth_spec(a, b, c)
                            : 0;
        out[1 + i] = (unsigned char)(row[i] - pred);
    }
}

/* How a hand-built PNG differs from a plain one. */
typedef struct png_twist {
    int  depth;        /* bits a sample; 0: 8 */
    int  window_bits;  /* zlib's; 0: 15 */
    int  cinfo;        /* if not 0, the window the stream claims (log2 - 8), whatever it used */
    int  extra_rows;   /* rows added (> 0) to the stream, or left out (< 0) */
    int  bad_filter;   /* a filter byte of 5 in row 1 */
    bool idat_bytes;   /* the stream in one-byte IDAT chunks, and empty ones */
    bool text;         /* tEXt chunks before and after the image data */
    bool text_between; /* a tEXt chunk between two IDAT chunks */
    bool text_bad_crc; /* a tEXt chunk with a bad CRC */
    bool trns, plte;   /* such a chunk (for RGB) */
    bool critical;     /* a critical chunk we do not know ("ABCD") */
    bool after_iend;   /* a byte after IEND */
    bool garbage;      /* bytes after the zlib stream, in the last IDAT */
    /* Colour type 3: PLTE's and tRNS's data (none where NULL), and where. */
    const unsigned char *palette, *alphas;
    size_t               palette_len, alphas_len;
    bool                 alphas_first, palette_late, palette_twice;
} png_twist;

/* Writes a PNG of `px` (w x h, colour type color) filtered row y by
 * filter y % 5, changed as `t` says; returns its path. */
static const char *
png_build(const char *name, const unsigned char *px, uint32_t w, uint32_t h, int color,
          const png_twist *t)
{
    static const unsigned bpp_of[7] = {1, 0, 3, 1, 2, 0, 4};
    int                   depth = t->depth ? t->depth : 8;
    unsigned              bpp = bpp_of[color] * (unsigned)depth / 8;
    size_t                stride = 1 + (size_t)w * bpp;
    uint32_t              rows_in = (uint32_t)((int)h + t->extra_rows);
    unsigned char        *raw = calloc((size_t)rows_in + 1, stride);
    REQUIRE(raw != NULL);
    for (uint32_t y = 0; y < rows_in; y++)
        filter_row(px, w, y < h ? y : h - 1, bpp, (int)(y % 5), raw + y * stride);
    if (t->bad_filter)
        raw[stride] = 5;
    z_stream z = {0};
    REQUIRE(deflateInit2(&z, 9, Z_DEFLATED, t->window_bits ? t->window_bits : 15, 9,
                         Z_DEFAULT_STRATEGY) == Z_OK);
    uLong          zcap = deflateBound(&z, rows_in * stride) + 16;
    unsigned char *zd = malloc(zcap);
    REQUIRE(zd != NULL);
    z.next_in = raw, z.avail_in = (uInt)(rows_in * stride);
    z.next_out = zd, z.avail_out = (uInt)zcap;
    REQUIRE(deflate(&z, Z_FINISH) == Z_STREAM_END);
    size_t zn = z.total_out;
    deflateEnd(&z);
    if (t->cinfo) { /* the header, its check bits made right again */
        zd[0] = (unsigned char)(t->cinfo << 4 | 8);
        zd[1] = (unsigned char)(zd[1] & 0xe0);
        zd[1] = (unsigned char)(zd[1] + (31 - (zd[0] * 256 + zd[1]) % 31) % 31);
    }
    if (t->garbage)
        memcpy(zd + zn, "junk", 4), zn += 4;

    tex_test_bytes b = {0};
    header_add(&b, w, h, depth, color);
    if (t->text)
        chunk_add(&b, "tEXt", "Comment\0before", 14, false);
    if (t->text_bad_crc)
        chunk_add(&b, "tEXt", "Comment\0bad", 11, true);
    if (t->plte)
        chunk_add(&b, "PLTE", "\1\2\3\4\5\6", 6, false);
    if (t->trns)
        chunk_add(&b, "tRNS", "\0\1\0\2\0\3", 6, false);
    if (t->critical)
        chunk_add(&b, "ABCD", "x", 1, false);
    if (t->alphas && t->alphas_first)
        chunk_add(&b, "tRNS", t->alphas, t->alphas_len, false);
    for (int k = 0; t->palette && !t->palette_late && k < 1 + t->palette_twice; k++)
        chunk_add(&b, "PLTE", t->palette, t->palette_len, false);
    if (t->alphas && !t->alphas_first)
        chunk_add(&b, "tRNS", t->alphas, t->alphas_len, false);
    if (t->idat_bytes) {
        chunk_add(&b, "IDAT", "", 0, false);
        for (size_t i = 0; i < zn; i++)
            chunk_add(&b, "IDAT", zd + i, 1, false);
        chunk_add(&b, "IDAT", "", 0, false);
    } else if (t->text_between) {
        chunk_add(&b, "IDAT", zd, zn / 2, false);
        chunk_add(&b, "tEXt", "Comment\0between", 15, false);
        chunk_add(&b, "IDAT", zd + zn / 2, zn - zn / 2, false);
    } else {
        chunk_add(&b, "IDAT", zd, zn, false);
    }
    if (t->palette && t->palette_late)
        chunk_add(&b, "PLTE", t->palette, t->palette_len, false);
    if (t->text)
        chunk_add(&b, "tEXt", "Comment\0after", 13, false);
    chunk_add(&b, "IEND", "", 0, false);
    if (t->after_iend)
        tex_test_bytes_add(&b, "\0", 1);
    const char *path = tex_test_path(name);
    tex_test_file_write(path, b.p, b.n);
    free(b.p);
    free(zd);
    free(raw);
    return path;
}

/* Noise, w x h pixels of bpp bytes. */
static unsigned char *
noise(uint32_t w, uint32_t h, unsigned bpp, uint64_t seed)
{
    unsigned char *px = malloc((size_t)w * h * bpp);
    REQUIRE(px != NULL);
    for (size_t i = 0; i < (size_t)w * h * bpp; i++)
        px[i] = (unsigned char)(tex_test_rand(&seed) >> 56);
    return px;
}

/* Whether the image holds the samples of px (8-bit, or 16-bit big-endian
 * as a PNG stores them). */
static bool
same_samples(const tex_image *img, const unsigned char *px, size_t samples, bool wide)
{
    if (!wide)
        return memcmp(img->pixels, px, samples) == 0;
    const uint16_t *v = img->pixels;
    for (size_t i = 0; i < samples; i++)
        if (v[i] != (px[2 * i] << 8 | px[2 * i + 1]))
            return false;
    return true;
}

/* Every filter on every pixel size, 8 and 16 bits a sample, at widths down
 * to one pixel: the fast path's rows are the pixels filtered here, and
 * libpng's. */
static void
case_fast_filters(const char *arg)
{
    (void)arg;
    static const int      colors[] = {0, 4, 2, 6};
    static const uint32_t widths[] = {1, 2, 5, 33};
    for (int depth = 8; depth <= 16; depth += 8)
        for (size_t c = 0; c < 4; c++)
            for (size_t k = 0; k < 4; k++) {
                unsigned       nc = (unsigned)c + 1, bpp = nc * (unsigned)depth / 8;
                uint32_t       w = widths[k], h = 11;
                unsigned char *px = noise(w, h, bpp, 1000 * c + k + (size_t)depth);
                png_twist      t = {.depth = depth};
                char           what[64];
                snprintf(what, sizeof what, "colour type %d, %d bits, width %u", colors[c], depth,
                         w);
                const char *path = png_build("filters.png", px, w, h, colors[c], &t);
                CHECK(same_as_libpng(path, what));
                tex_image  img;
                char       err[TEX_ERR_LEN];
                bool       took;
                tex_result r = read_rows_as(path, true, &img, err, &took);
                REQUIRE(r == TEX_OK);
                CHECK_EQ_INT(img.nchannels, nc);
                CHECK_EQ_INT(img.type, depth == 16 ? TEX_TYPE_U16 : TEX_TYPE_U8);
                CHECK_EQ_INT(img.srgb, true);
                if (!same_samples(&img, px, (size_t)w * h * nc, depth == 16))
                    RT_CHECK_FAIL_("%s: not the pixels filtered", what);
                tex_image_free(&img);
                free(px);
            }
}

/* What the fast path takes and what it leaves to libpng, each read as
 * libpng reads it. */
static void
case_fast_chunks(const char *arg)
{
    (void)arg;
    typedef struct twist_case {
        const char *what;
        png_twist   t;
        bool        fast;
    } twist_case;
    static const twist_case cases[] = {
        {"plain", {0}, true},
        {"one-byte and empty IDAT chunks", {.idat_bytes = true}, true},
        {"tEXt before and after", {.text = true}, true},
        {"a 512-byte window, image larger", {.window_bits = 9}, false},
        {"a row too many in the stream", {.extra_rows = 1}, false},
        {"a row too few in the stream", {.extra_rows = -1}, false},
        {"filter byte 5", {.bad_filter = 1}, false},
        {"tEXt between IDAT chunks", {.text_between = true}, false},
        {"tEXt with a bad CRC", {.text_bad_crc = true}, false},
        {"tRNS", {.trns = true}, false},
        {"PLTE in RGB", {.plte = true}, false},
        {"an unknown critical chunk", {.critical = true}, false},
        {"a byte after IEND", {.after_iend = true}, false},
        {"bytes after the zlib stream", {.garbage = true}, false},
    };
    unsigned char *px = noise(40, 30, 3, 5);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *path = png_build("chunks.png", px, 40, 30, 2, &cases[i].t);
        bool        took = same_as_libpng(path, cases[i].what);
        if (took != cases[i].fast)
            RT_CHECK_FAIL_("%s: the fast path %s it", cases[i].what, took ? "took" : "refused");
    }
    free(px);
    /* A stream that reaches back 605 bytes (rows repeat every five, as the
     * filters do) but claims a 512-byte window: zlib, for libpng, says the
     * distance is too far back; libdeflate would follow it. */
    px = noise(40, 5, 3, 7);
    unsigned char *rep = malloc(40 * 30 * 3);
    REQUIRE(rep != NULL);
    for (int y = 0; y < 30; y++)
        memcpy(rep + y * 120, px + (y % 5) * 120, 120);
    png_twist lie = {.cinfo = 1};
    CHECK(!same_as_libpng(png_build("far.png", rep, 40, 30, 2, &lie), "a window too small"));
    free(rep);
    free(px);
    /* A small window does for an image that fits in it (4x4 RGB: 52 bytes). */
    px = noise(4, 4, 3, 6);
    png_twist t = {.window_bits = 9};
    CHECK(same_as_libpng(png_build("small.png", px, 4, 4, 2, &t), "a small window, small image"));
    free(px);
}

/* Palette images: the fast path expands them as libpng does (RGB, or RGBA
 * with tRNS, colours past its last alpha opaque), and leaves to libpng the
 * palettes and pixels libpng reads otherwise than by the book. */
static void
case_fast_palette(const char *arg)
{
    (void)arg;
    enum { W = 37, H = 9 };
    unsigned char       *rnd = noise(256 * 3 + 256, 1, 1, 11), idx[W * H];
    const unsigned char *plte = rnd, *alpha = rnd + 256 * 3;
    typedef struct palette_case {
        const char *what;
        unsigned    colours, alphas; /* PLTE's and tRNS's entries */
        png_twist   t;
        int         stray; /* if not 0, one pixel names this colour */
        bool        fast;
        bool        empty_trns; /* a tRNS of no alphas */
    } palette_case;
    const palette_case cases[] = {
        {"256 colours", 256, 0, {0}, 0, true, false},
        {"5 colours, 3 alphas", 5, 3, {0}, 0, true, false},
        {"1 colour, its alpha", 1, 1, {0}, 0, true, false},
        {"a pixel past the palette", 5, 0, {0}, 5, false, false},
        {"more alphas than colours", 5, 6, {0}, 0, false, false},
        {"no alphas (an empty tRNS)", 5, 0, {0}, 0, false, true},
        {"tRNS before PLTE", 5, 3, {.alphas_first = true}, 0, false, false},
        {"PLTE after the image data", 5, 0, {.palette_late = true}, 0, false, false},
        {"two PLTE chunks", 5, 0, {.palette_twice = true}, 0, false, false},
        {"a PLTE of 7 bytes", 5, 0, {.palette_len = 7}, 0, false, false},
        {"no PLTE", 0, 0, {0}, 0, false, false},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const palette_case *c = &cases[k];
        png_twist           t = c->t;
        t.palette = c->colours ? plte : NULL;
        t.palette_len = t.palette_len ? t.palette_len : 3 * (size_t)c->colours;
        t.alphas = c->alphas || c->empty_trns ? alpha : NULL;
        t.alphas_len = c->alphas;
        uint64_t seed = 100 + k;
        for (size_t i = 0; i < W * H; i++)
            idx[i] = (unsigned char)(c->colours ? (tex_test_rand(&seed) >> 32) % c->colours : 0);
        if (c->stray)
            idx[W * H / 2] = (unsigned char)c->stray;
        const char *path = png_build("palette.png", idx, W, H, 3, &t);
        bool        took = same_as_libpng(path, c->what);
        if (took != c->fast)
            RT_CHECK_FAIL_("%s: the fast path %s it", c->what, took ? "took" : "refused");
        if (!c->fast)
            continue;
        /* Expanded here too, by the book. */
        tex_image img;
        char      err[TEX_ERR_LEN];
        REQUIRE(read_rows_as(path, true, &img, err, &took) == TEX_OK);
        unsigned nc = c->alphas ? 4 : 3;
        CHECK_EQ_INT(img.nchannels, nc);
        for (size_t i = 0; i < W * H && img.nchannels == nc; i++) {
            const unsigned char *px = (const unsigned char *)img.pixels + i * nc;
            unsigned             want_a = idx[i] < c->alphas ? alpha[idx[i]] : 255;
            if (memcmp(px, plte + 3 * idx[i], 3) != 0 || (nc == 4 && px[3] != want_a)) {
                RT_CHECK_FAIL_("%s: pixel %zu is not colour %u", c->what, i, idx[i]);
                break;
            }
        }
        tex_image_free(&img);
    }
    free(rnd);
}

/* The one place the fast path and libpng part, pinned (io_png_fast.c says
 * why): a plain PNG whose deflate stream has a code-length repeat that
 * overruns (one bit flipped, the CRCs and Adler-32 right), found by a
 * review's differential fuzzer. libdeflate reads it; zlib, for libpng,
 * does not. Should a libdeflate release reject it, this fails, and the
 * comment and docs/benchmarks.md can drop the exception. */
static void
case_fast_divergence(const char *arg)
{
    struct stat st;
    if (!arg || stat(arg, &st) != 0) {
        RT_CHECK_FAIL_("no file at %s", arg ? arg : "(none given)");
        return;
    }
    tex_image  img, ref;
    char       err[TEX_ERR_LEN] = "", ref_err[TEX_ERR_LEN] = "";
    bool       took, took_ref;
    tex_result r = read_rows_as(arg, true, &img, err, &took);
    tex_result rr = read_rows_as(arg, false, &ref, ref_err, &took_ref);
    CHECK(took);
    CHECK_EQ_INT(r, TEX_OK);
    CHECK_EQ_INT(rr, TEX_ERR_CORRUPT);
    CHECK_CONTAINS(ref_err, "damaged image data in IDAT chunk: invalid bit length repeat");
    tex_image_free(&img);
    tex_image_free(&ref);
}

static const rt_test_case cases[] = {
    {"rows_stop", case_rows_stop},
    {"grey", case_grey},
    {"grey_alpha", case_grey_alpha},
    {"rgb", case_rgb},
    {"rgba", case_rgba},
    {"palette", case_palette},
    {"palette_trns", case_palette_trns},
    {"grey_trns", case_grey_trns},
    {"rgb_trns", case_rgb_trns},
    {"write_read", case_write_read},
    {"write_mode", case_write_mode},
    {"write_replace", case_write_replace},
    {"write_fail", case_write_fail},
    {"write_fail_midway", case_write_fail_midway},
    {"pngsuite_valid", case_pngsuite_valid},
    {"pngsuite_corrupt", case_pngsuite_corrupt},
    {"pngsuite_pixels", case_pngsuite_pixels},
    {"pngsuite_same", case_pngsuite_same},
    {"pngsuite_fast", case_pngsuite_fast},
    {"fast_filters", case_fast_filters},
    {"fast_chunks", case_fast_chunks},
    {"fast_palette", case_fast_palette},
    {"fast_divergence", case_fast_divergence},
    {NULL, NULL},
};

int
main(int argc, char **argv)
{
    return rt_test_main(cases, argc, argv);
}
