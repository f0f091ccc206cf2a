/* Decodes that cannot go by rows, under the texture system's memory budget
 * (tex_config.max_memory_mb): an interlaced PNG holds its whole image, a
 * multi-scan JPEG its coefficients, an EXR without MIP levels its image.
 * Within the budget they give the texels of their plain and baseline
 * twins; past it they are refused in one line that names the numbers,
 * reported once, and give the fill colour; decodes that fit alone but not
 * together take turns; a decode's charge evicts tiles. The files are
 * written here (libpng, libjpeg, the OpenEXR shim). */
#define _POSIX_C_SOURCE 200809L

#include "check.h"
#include "tex_exr.h"
#include "tex_file_testing.h"
#include "tex_image.h"
#include "tex_jpeg_testing.h"
#include "texture.h"
#include "ustring.h"

#include <math.h>
#include <png.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- files ---- */

/* An RGBA8 PNG of w x h texels of pattern(), Adam7-interlaced or not,
 * written a row at a time (libpng picks each pass's texels from the
 * rows), so that a large one costs the test no image in memory. */
static ustr
png_write(const char *name, uint32_t w, uint32_t h, bool interlaced, bool zero)
{
    const char *path = tex_test_path(name);
    FILE       *f = fopen(path, "wb");
    REQUIRE(f != NULL);
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop   info = png ? png_create_info_struct(png) : NULL;
    png_byte   *row = calloc(w, 4);
    REQUIRE(info != NULL && row != NULL);
    if (setjmp(png_jmpbuf(png))) {
        fprintf(stderr, "libpng failed to write %s\n", path);
        exit(1);
    }
    png_init_io(png, f);
    png_set_IHDR(png, info, w, h, 8, PNG_COLOR_TYPE_RGB_ALPHA,
                 interlaced ? PNG_INTERLACE_ADAM7 : PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_set_compression_level(png, 1);
    png_write_info(png, info);
    int passes = png_set_interlace_handling(png);
    for (int pass = 0; pass < passes; pass++)
        for (uint32_t y = 0; y < h; y++) {
            for (uint32_t x = 0; !zero && x < w; x++)
                for (uint32_t c = 0; c < 4; c++)
                    row[4 * x + c] = (png_byte)(x * 7 + y * 13 + c * 50 + (x * y >> 3));
            png_write_row(png, row);
        }
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    REQUIRE(fclose(f) == 0);
    free(row);
    return ustr_intern_cstr(path);
}

typedef enum {
    JPEG_BASELINE = TEX_TEST_JPEG_BASELINE,
    JPEG_PROGRESSIVE = TEX_TEST_JPEG_PROGRESSIVE,
    JPEG_MULTISCAN = TEX_TEST_JPEG_MULTISCAN,
} jpeg_kind;

/* An RGB JPEG (YCbCr 4:2:0) of the smooth test pattern. */
static ustr
jpeg_write(const char *name, uint32_t w, uint32_t h, jpeg_kind kind)
{
    uint8_t       *pixels = tex_test_jpeg_pattern(w, h, 3);
    size_t         n;
    unsigned char *buf =
        tex_test_jpeg_encode(pixels, w, h, 3, JCS_RGB, JCS_YCbCr, (int)kind, 90, &n);
    const char *path = tex_test_path(name);
    tex_test_file_write(path, buf, n);
    free(buf);
    free(pixels);
    return ustr_intern_cstr(path);
}

/* A half RGBA EXR of w x h, scanlines or one level of 64x64 tiles: read
 * whole by the texture system, since it has no MIP levels to read. */
static ustr
exr_write(const char *name, uint32_t w, uint32_t h, bool tiled)
{
    tex_image img;
    char      err[TEX_ERR_LEN];
    REQUIRE(tex_image_alloc(&img, w, h, 4, TEX_TYPE_HALF, err) == TEX_OK);
    const char *path = tex_test_path(name);
    tex_result  r = tiled ? tex_exr_write_tiled(path, &img, 1, 64, NULL, 0, err)
                          : tex_exr_write_scanline(path, &img, NULL, 0, err);
    if (r != TEX_OK)
        fprintf(stderr, "%s: %s\n", path, err);
    REQUIRE(r == TEX_OK);
    tex_image_free(&img);
    return ustr_intern_cstr(path);
}

/* ---- the system ---- */

static int  reports;
static char report_name[512], report_reason[TEX_ERR_LEN];

static void
on_report(void *ctx, const char *name, const char *reason)
{
    (void)ctx;
    reports++; /* only the main thread opens files in the cases that count */
    snprintf(report_name, sizeof report_name, "%s", name);
    snprintf(report_reason, sizeof report_reason, "%s", reason);
}

static tex_system *
system_new(size_t max_memory_mb)
{
    tex_config  cfg = {.max_memory_mb = max_memory_mb, .report = on_report};
    tex_system *ts;
    REQUIRE(tex_system_create(&cfg, &ts, NULL) == TEX_OK);
    reports = 0;
    return ts;
}

/* Every texel of a and b, looked up at its centre (closest, raw), equal to
 * within `tolerance` of 255. */
static void
same_texels(tex_system *ts, tex_thread *tc, ustr a, ustr b, float tolerance)
{
    tex_file_info ia, ib;
    REQUIRE(tex_file_info_get(ts, a, &ia) == TEX_OK);
    REQUIRE(tex_file_info_get(ts, b, &ib) == TEX_OK);
    CHECK_EQ_INT(ia.width, ib.width);
    CHECK_EQ_INT(ia.height, ib.height);
    CHECK_EQ_INT(ia.nchannels, ib.nchannels);
    REQUIRE(ia.width == ib.width && ia.height == ib.height);
    tex_opts o = {.filter = TEX_FILTER_CLOSEST, .raw = true};
    float    worst = 0;
    for (uint32_t y = 0; y < ia.height; y++)
        for (uint32_t x = 0; x < ia.width; x++) {
            float s = (x + 0.5f) / ia.width, t = (y + 0.5f) / ia.height, pa[4], pb[4];
            CHECK_EQ_INT(tex_lookup(ts, tc, a, s, t, NULL, &o, pa), TEX_OK);
            CHECK_EQ_INT(tex_lookup(ts, tc, b, s, t, NULL, &o, pb), TEX_OK);
            for (int c = 0; c < 4; c++)
                worst = fabsf(pa[c] - pb[c]) > worst ? fabsf(pa[c] - pb[c]) : worst;
        }
    if (worst * 255 > tolerance + 1e-3f)
        RT_CHECK_FAIL_("%s and %s differ by %.1f of 255", a, b, worst * 255);
}

/* `name` refused with `words` in its one report, and drawn with the fill. */
static void
refused(tex_system *ts, tex_thread *tc, ustr name, const char *words)
{
    tex_opts o = {.fill = {0.25f, 0.5f, 0.75f, 1}};
    float    rgba[4];
    int      before = reports;
    for (int i = 0; i < 3; i++) {
        CHECK_EQ_INT(tex_lookup(ts, tc, name, 0.5f, 0.5f, NULL, &o, rgba), TEX_ERR_TOO_LARGE);
        CHECK(rgba[0] == 0.25f && rgba[1] == 0.5f && rgba[2] == 0.75f);
    }
    CHECK_EQ_INT(reports - before, 1);
    CHECK_EQ_STR(report_name, name);
    CHECK_CONTAINS(report_reason, words);
    CHECK_ONE_LINE(report_reason);
}

/* `name` loads: a lookup at its centre succeeds. */
static void
loads(tex_system *ts, tex_thread *tc, ustr name)
{
    tex_opts o = {0};
    float    rgba[4];
    CHECK_EQ_INT(tex_lookup(ts, tc, name, 0.5f, 0.5f, NULL, &o, rgba), TEX_OK);
}

/* ---- cases ---- */

/* An interlaced PNG within the budget gives its plain twin's texels; one
 * whose image is over it is refused, while its plain twin, decoded a row
 * at a time, is not. The plain one within the budget is read whole by the
 * fast path (texture/io_png_fast.c); the one over it goes to libpng, a
 * row at a time, without a word. */
static void
case_png(const char *arg)
{
    (void)arg;
    tex_system *ts = system_new(1);
    tex_thread *tc;
    REQUIRE(tex_thread_create(ts, &tc) == TEX_OK);
    uint64_t fast = tex_png_fast_reads();
    same_texels(ts, tc, png_write("a7.png", 203, 150, true, false),
                png_write("plain.png", 203, 150, false, false), 0);
    fast = tex_png_fast_reads() - fast; /* plain.png's reads, none of a7.png's */
    CHECK(fast >= 1);
    refused(ts, tc, png_write("big-a7.png", 600, 600, true, false),
            "interlaced PNG 600x600 needs 2 MiB to decode, over the texture memory budget of "
            "1 MiB (--max-memory-mb)");
    uint64_t before = tex_png_fast_reads();
    loads(ts, tc, png_write("big.png", 600, 600, false, false));
    CHECK_EQ_U64(tex_png_fast_reads(), before);
    CHECK_EQ_INT(reports, 1);
    tex_thread_destroy(tc);
    tex_system_destroy(ts);
}

/* A progressive JPEG and a multi-scan one (a sequential scan per
 * component) within the budget give their baseline twin's texels (the
 * same quantised coefficients); over it, both are refused by name, while
 * the baseline twin is not. */
static void
case_jpeg(const char *arg)
{
    (void)arg;
    tex_system *ts = system_new(1);
    tex_thread *tc;
    REQUIRE(tex_thread_create(ts, &tc) == TEX_OK);
    ustr base = jpeg_write("base.jpg", 150, 101, JPEG_BASELINE);
    same_texels(ts, tc, jpeg_write("prog.jpg", 150, 101, JPEG_PROGRESSIVE), base, 0);
    same_texels(ts, tc, jpeg_write("multi.jpg", 150, 101, JPEG_MULTISCAN), base, 0);
    /* 4:2:0: 128x128 luma blocks and 64x64 of each chroma, 128 bytes each. */
    refused(ts, tc, jpeg_write("big-prog.jpg", 1024, 1024, JPEG_PROGRESSIVE),
            "progressive JPEG 1024x1024 needs 3 MiB to decode, over the texture memory budget of "
            "1 MiB (--max-memory-mb)");
    refused(ts, tc, jpeg_write("big-multi.jpg", 1024, 1024, JPEG_MULTISCAN),
            "multi-scan JPEG 1024x1024 needs 3 MiB to decode");
    loads(ts, tc, jpeg_write("big.jpg", 1024, 1024, JPEG_BASELINE));
    CHECK_EQ_INT(reports, 2);
    tex_thread_destroy(tc);
    tex_system_destroy(ts);
}

/* An EXR without MIP levels is decoded whole, so charged whole. */
static void
case_exr(const char *arg)
{
    (void)arg;
    tex_system *ts = system_new(1);
    tex_thread *tc;
    REQUIRE(tex_thread_create(ts, &tc) == TEX_OK);
    loads(ts, tc, exr_write("small.exr", 100, 80, false));
    CHECK_EQ_INT(reports, 0);
    refused(ts, tc, exr_write("big.exr", 600, 600, false),
            "scanline EXR 600x600 needs 3 MiB to decode, over the texture memory budget of 1 MiB");
    refused(ts, tc, exr_write("big-tiled.exr", 600, 600, true),
            "one-level tiled EXR 600x600 needs 3 MiB to decode");
    tex_thread_destroy(tc);
    tex_system_destroy(ts);
}

/* The widest progressive JPEG there is decodes: libjpeg's own working
 * memory fits the margin its limit (max_memory_to_use) leaves it beside
 * the coefficients (with 1 MiB it would not). Tall enough that its
 * coefficients are more rows than libjpeg reads at once, which is when
 * the limit bites. */
static void
case_jpeg_wide(const char *arg)
{
    (void)arg;
    tex_system *ts = system_new(128);
    tex_thread *tc;
    REQUIRE(tex_thread_create(ts, &tc) == TEX_OK);
    loads(ts, tc, jpeg_write("wide.jpg", 65500, 256, JPEG_PROGRESSIVE)); /* JPEG_MAX_DIMENSION */
    if (reports)
        fprintf(stderr, "%s\n", report_reason);
    CHECK_EQ_INT(reports, 0);
    tex_thread_destroy(tc);
    tex_system_destroy(ts);
}

/* The charge comes out of the tiles' share: a decode that needs most of
 * the budget evicts what the cache holds beyond the rest. */
static void
case_evicts(const char *arg)
{
    (void)arg;
    tex_system *ts = system_new(2);
    tex_thread *tc;
    REQUIRE(tex_thread_create(ts, &tc) == TEX_OK);
    ustr     plain = png_write("fill.png", 1024, 1024, false, false);
    tex_opts o = {.filter = TEX_FILTER_CLOSEST};
    float    rgba[4];
    for (int y = 0; y < 16; y++) /* a texel of each of 256 level-0 tiles: 4 MiB */
        for (int x = 0; x < 16; x++)
            tex_lookup(ts, tc, plain, (x + 0.5f) / 16, (y + 0.5f) / 16, NULL, &o, rgba);
    tex_stats st;
    tex_system_stats(ts, &st);
    CHECK(st.memory > (3u << 19)); /* the cache is full: over 1.5 MiB */
    /* 700x500 RGBA8: 1.34 MiB of the 2, leaving the tiles 0.66 MiB and
     * the one tile this thread may still hold. */
    CHECK_EQ_INT(tex_file_open(ts, tc, png_write("a7.png", 700, 500, true, true), false), TEX_OK);
    tex_system_stats(ts, &st);
    uint64_t tile = sizeof(float) * 4 * 64 * 64; /* more than a tile and its header */
    if (st.memory > (2u << 20) - 700u * 500 * 4 + tile)
        RT_CHECK_FAIL_("%" PRIu64 " bytes of tiles beside a 1.34 MiB decode in a 2 MiB budget",
                       st.memory);
    tex_thread_destroy(tc);
    tex_system_destroy(ts);
}

/* Peak resident memory of this process, in bytes (VmHWM). */
static uint64_t
peak_rss(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char  line[256];
    long  kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmHWM: %ld kB", &kb) == 1)
            break;
    if (f)
        fclose(f);
    REQUIRE(kb > 0);
    return (uint64_t)kb << 10;
}

typedef struct opener {
    tex_system        *ts;
    ustr               name;
    pthread_barrier_t *start;
    tex_result         r;
} opener;

static void *
opener_main(void *arg)
{
    opener     *o = arg;
    tex_thread *tc;
    if (tex_thread_create(o->ts, &tc) != TEX_OK) {
        o->r = TEX_ERR_NOMEM;
        return NULL;
    }
    pthread_barrier_wait(o->start);
    o->r = tex_file_open(o->ts, tc, o->name, false);
    tex_thread_destroy(tc);
    return NULL;
}

/* Four interlaced PNGs of 48 MiB each, opened by four threads at once
 * under a 64 MiB budget: each fits alone, so none is refused (whether a
 * file is refused does not depend on what else is opening), and they
 * decode one at a time, so the process's peak grows by one image, not by
 * one per decode the CPUs would run at once (not checked under a
 * sanitizer; the tsan preset runs the rest, label stress). */
static void
case_shared(const char *arg)
{
    (void)arg;
    enum { N = 4 };
    opener            o[N];
    pthread_t         th[N];
    pthread_barrier_t start;
    tex_system       *ts = system_new(64);
    for (int i = 0; i < N; i++) {
        char name[32];
        snprintf(name, sizeof name, "big%d.png", i);
        o[i] = (opener){.ts = ts, .name = png_write(name, 4096, 3072, true, true), .start = &start};
    }
    pthread_barrier_init(&start, NULL, N);
    uint64_t before = peak_rss();
    for (int i = 0; i < N; i++)
        REQUIRE(pthread_create(&th[i], NULL, opener_main, &o[i]) == 0);
    for (int i = 0; i < N; i++)
        pthread_join(th[i], NULL);
    uint64_t grew = peak_rss() - before;
    printf("peak RSS grew by %" PRIu64 " MiB for four 48 MiB decodes\n", grew >> 20);
    for (int i = 0; i < N; i++)
        CHECK_EQ_INT(o[i].r, TEX_OK);
    CHECK_EQ_INT(reports, 0);
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    grew = 0; /* the sanitizer's allocator, not ours, decides what stays resident */
#endif
    if (grew > (uint64_t)(48 + 24) << 20)
        RT_CHECK_FAIL_("peak RSS grew by %" PRIu64 " MiB: decodes over the 64 MiB budget at once",
                       grew >> 20);
    pthread_barrier_destroy(&start);
    tex_system_destroy(ts);
}

static const rt_test_case cases[] = {
    {"png", case_png}, {"jpeg", case_jpeg},     {"jpeg_wide", case_jpeg_wide},
    {"exr", case_exr}, {"evicts", case_evicts}, {"shared", case_shared},
    {NULL, NULL},
};

int
main(int argc, char **argv)
{
    return rt_test_main(cases, argc, argv);
}
