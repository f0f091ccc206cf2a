/* Write-back (texture/cache_tiles.c): a decode whose tiles fit in what the
 * cache has free keeps them there, nothing written to the spill file; a
 * kept tile is written there only as the clock evicts it, and read back
 * exact; a file too large to keep is spilled and loads on demand as
 * before; a failed decode leaves no kept tile behind; a kept tile that
 * cannot be written breaks its file, reported once, at its next miss. */
#include "check.h"
#include "tex_exr.h"
#include "tex_file_testing.h"
#include "texture.h"
#include "ustring.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

static const char *dir; /* tex_test_dir() */

/* Texel (x, y) channel c of file k: neighbours differ, files differ. */
static uint8_t
value(int k, uint32_t x, uint32_t y, uint32_t c)
{
    return (uint8_t)(x * 7 + y * 13 + c * 61 + (uint32_t)k * 29 + (x * y >> 3));
}

/* File k, n x n RGBA of value()'s texels, as DIR/NAME; its interned path. */
static ustr
png_make(const char *name, int k, uint32_t n)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    tex_test_png_rgba(path, n, value, k);
    return ustr_intern_cstr(path);
}

/* Tiles of 64x64 in every level of an n x n file: what its decode keeps. */
static uint64_t
tiles_of(uint32_t n)
{
    uint64_t tiles = 0;
    for (uint32_t l = 0, levels = tex_mip_levels(n, n); l < levels; l++) {
        uint64_t side = ((n >> l ? n >> l : 1) + 63) / 64;
        tiles += side * side;
    }
    return tiles;
}

static tex_system *
system_new(size_t max_memory_mb)
{
    tex_system *ts;
    REQUIRE(tex_system_create(&(tex_config){.max_memory_mb = max_memory_mb}, &ts, NULL) == TEX_OK);
    return ts;
}

static tex_thread *
thread_new(tex_system *ts)
{
    tex_thread *tc;
    REQUIRE(tex_thread_create(ts, &tc) == TEX_OK);
    return tc;
}

static tex_stats
stats(tex_system *ts)
{
    tex_stats s;
    tex_system_stats(ts, &s);
    return s;
}

/* Every texel of level 0 of file k (n x n) by closest raw lookups; how
 * many came back wrong (a failed lookup counts as wrong). */
static unsigned
texels_wrong(tex_system *ts, tex_thread *tc, ustr name, int k, uint32_t n)
{
    tex_opts o = {.raw = true, .filter = TEX_FILTER_CLOSEST};
    unsigned wrong = 0;
    for (uint32_t y = 0; y < n; y++)
        for (uint32_t x = 0; x < n; x++) {
            float rgba[4];
            if (tex_lookup(ts, tc, name, (x + 0.5f) / n, (y + 0.5f) / n, NULL, &o, rgba) !=
                TEX_OK) {
                wrong++;
                continue;
            }
            for (uint32_t c = 0; c < 4; c++)
                wrong += (int)(rgba[c] * 255.0f + 0.5f) != value(k, x, y, c);
        }
    return wrong;
}

/* One closest raw lookup in each level-0 tile of an n x n file, in order:
 * a new tile each, loaded from the spill file if the file was spilled. */
static void
touch_level0(tex_system *ts, tex_thread *tc, ustr name, uint32_t n, uint32_t ntiles)
{
    tex_opts o = {.raw = true, .filter = TEX_FILTER_CLOSEST};
    float    rgba[4];
    for (uint32_t i = 0; i < ntiles; i++)
        CHECK_EQ_INT(tex_lookup(ts, tc, name, ((i % (n / 64)) * 64 + 32.5f) / n,
                                ((i / (n / 64)) * 64 + 32.5f) / n, NULL, &o, rgba),
                     TEX_OK);
}

/* A file that fits is kept whole by its decode: every tile of every level
 * in the cache, none read, exact; one that does not fit what is free is
 * spilled and loads on demand. */
static void
case_kept(const char *arg)
{
    (void)arg;
    ustr        small = png_make("small.png", 0, 200);
    ustr        big = png_make("big.png", 1, 1024);
    tex_system *ts = system_new(1);
    tex_thread *tc = thread_new(ts);
    CHECK_EQ_INT(texels_wrong(ts, tc, small, 0, 200), 0);
    tex_stats s = stats(ts);
    CHECK_EQ_U64(s.tiles_kept, tiles_of(200)); /* 16 + 4 + 1 + one at each of the 5 below */
    CHECK_EQ_U64(s.tiles_loaded, 0);
    CHECK_EQ_U64(s.bytes_read, 0);
    CHECK_EQ_U64(s.tile_misses, 0);
    /* 1024x1024 RGBA is 16 MiB of tiles at level 0: spilled, not kept. */
    touch_level0(ts, tc, big, 1024, 3);
    s = stats(ts);
    REQUIRE(s.tiles_kept == tiles_of(200));
    CHECK_EQ_U64(s.tiles_loaded, 3);
    CHECK_EQ_U64(s.bytes_read, 3 * 64 * 64 * 4);
    tex_thread_destroy(tc);
    tex_system_destroy(ts);
}

/* Kept tiles pushed out by another file's loads are written back as they
 * go and read back exact; the ones read back count as loaded. */
static void
case_evicted(const char *arg)
{
    (void)arg;
    ustr        small = png_make("small.png", 2, 128);
    ustr        big = png_make("big.png", 3, 1024);
    tex_system *ts = system_new(1);
    tex_thread *tc = thread_new(ts);
    float       rgba[4];
    tex_opts    o = {.raw = true, .filter = TEX_FILTER_CLOSEST};
    REQUIRE(tex_lookup(ts, tc, small, 0.5f, 0.5f, NULL, &o, rgba) == TEX_OK);
    REQUIRE(stats(ts).tiles_kept == tiles_of(128)); /* 11 */
    /* 1 MiB holds about 60 tiles of 64x64 RGBA: 120 new ones push every
     * kept tile out. */
    touch_level0(ts, tc, big, 1024, 120);
    tex_stats s = stats(ts);
    CHECK_EQ_U64(s.tiles_spilled, tiles_of(128));
    uint64_t loaded = s.tiles_loaded;
    CHECK_EQ_INT(texels_wrong(ts, tc, small, 2, 128), 0);
    s = stats(ts);
    CHECK_EQ_U64(s.tiles_loaded - loaded, 4);     /* level 0's four, from the spill file */
    CHECK_EQ_U64(s.tiles_spilled, tiles_of(128)); /* read back, not written again */
    tex_thread_destroy(tc);
    tex_system_destroy(ts);
}

/* Bytes of texels in the tiles of every level of an n x n RGBA file: a
 * level's last row of tiles holds its rows and no more. */
static uint64_t
texel_bytes_of(uint32_t n)
{
    uint64_t bytes = 0;
    for (uint32_t l = 0, levels = tex_mip_levels(n, n); l < levels; l++) {
        uint64_t side = n >> l ? n >> l : 1, across = (side + 63) / 64;
        bytes += across * side * 64 * 4; /* rows of 64 texels, `across` tiles side by side */
    }
    return bytes;
}

/* Every texel of every level of an n x n file by closest raw lookups
 * (each level picked by its own footprint), as bytes. */
static void
every_level(tex_system *ts, tex_thread *tc, ustr name, uint32_t n, uint8_t *out)
{
    tex_opts o = {.raw = true, .filter = TEX_FILTER_CLOSEST};
    for (uint32_t l = 0, levels = tex_mip_levels(n, n); l < levels; l++) {
        uint32_t   side = n >> l ? n >> l : 1;
        float      step = (float)(1u << l) / (float)n;
        tex_derivs d = {step, 0, 0, step};
        for (uint32_t y = 0; y < side; y++)
            for (uint32_t x = 0; x < side; x++) {
                float rgba[4] = {-1, -1, -1, -1};
                CHECK_EQ_INT(
                    tex_lookup(ts, tc, name, (x + 0.5f) / side, (y + 0.5f) / side, &d, &o, rgba),
                    TEX_OK);
                for (int c = 0; c < 4; c++)
                    *out++ = (uint8_t)(rgba[c] * 255.0f + 0.5f);
            }
    }
}

/* Bilinear taps along the bottom of every level of an n x n file, where a
 * level's last row of tiles is shortest: at the last row's centre, between
 * it and the row above, and on the edge itself, clamped and wrapped. */
enum { EDGE_TS = 3, EDGE_WRAPS = 2 };

static size_t
bottom_taps(tex_system *ts, tex_thread *tc, ustr name, uint32_t n, float *out)
{
    static const tex_wrap wraps[EDGE_WRAPS] = {TEX_WRAP_CLAMP, TEX_WRAP_PERIODIC};
    size_t                k = 0;
    for (uint32_t l = 0, levels = tex_mip_levels(n, n); l < levels; l++) {
        uint32_t   side = n >> l ? n >> l : 1;
        float      step = (float)(1u << l) / (float)n;
        tex_derivs d = {step, 0, 0, step};
        float      ts_[EDGE_TS] = {1.0f - 0.5f / side, 1.0f - 1.0f / side, 1.0f};
        for (int w = 0; w < EDGE_WRAPS; w++)
            for (int e = 0; e < EDGE_TS; e++)
                for (uint32_t x = 0; x < side; x++, k += 4) {
                    tex_opts o = {.raw = true, /* the file as every_level() opened it */
                                  .filter = TEX_FILTER_BILINEAR,
                                  .swrap = wraps[w],
                                  .twrap = wraps[w]};
                    CHECK_EQ_INT(
                        tex_lookup(ts, tc, name, (x + 0.25f) / side, ts_[e], &d, &o, out + k),
                        TEX_OK);
                }
    }
    return k;
}

/* A decoded file's tiles hold only the rows of their level: a 200x200
 * file's last row of tiles in level 0 is 8 rows deep, and its levels
 * below 64x64 a tile of their rows each; the cache counts what they take.
 * Written back as they are evicted and read back, they give every texel
 * of every level as before, and the same bilinear taps along each
 * level's bottom edge (which an ASan build checks read no further). */
static void
case_rows_only(const char *arg)
{
    (void)arg;
    ustr        small = png_make("small.png", 4, 200);
    ustr        big = png_make("big.png", 5, 1024);
    tex_system *ts = system_new(1);
    tex_thread *tc = thread_new(ts);
    size_t      texels = 0;
    for (uint32_t l = 0; l < tex_mip_levels(200, 200); l++)
        texels += (size_t)(200 >> l ? 200 >> l : 1) * (200 >> l ? 200 >> l : 1);
    uint8_t *before = malloc(texels * 4), *after = malloc(texels * 4);
    size_t   edge = texels * EDGE_TS * EDGE_WRAPS * 4; /* more than the taps need */
    float   *edge_before = malloc(edge * sizeof(float)), *edge_after = malloc(edge * sizeof(float));
    REQUIRE(before && after && edge_before && edge_after);
    every_level(ts, tc, small, 200, before);
    size_t    taps = bottom_taps(ts, tc, small, 200, edge_before);
    tex_stats s = stats(ts);
    REQUIRE(s.tiles_kept == tiles_of(200));
    /* What is not texels is the tiles' headers, the same for each: far
     * less than a tile's 64 rows of 256 bytes, which the rows below a
     * level's image took when tiles were whole. */
    uint64_t header = (s.memory - texel_bytes_of(200)) / tiles_of(200);
    CHECK(s.memory > texel_bytes_of(200) && header <= 128);
    CHECK_EQ_U64(s.memory, texel_bytes_of(200) + header * tiles_of(200));
    CHECK_EQ_U64(s.peak_memory, s.memory);
    touch_level0(ts, tc, big, 1024, 120); /* every kept tile pushed out, written back */
    REQUIRE(stats(ts).tiles_spilled == tiles_of(200));
    /* Each tile counted resident as it was kept is taken off as it goes:
     * what the cache holds is back under its cap. */
    CHECK(stats(ts).memory <= (1u << 20));
    uint64_t loaded = stats(ts).tiles_loaded;
    every_level(ts, tc, small, 200, after);
    CHECK_EQ_U64(stats(ts).tiles_loaded - loaded, tiles_of(200)); /* all read back */
    CHECK(memcmp(before, after, texels * 4) == 0);
    CHECK_EQ_U64(bottom_taps(ts, tc, small, 200, edge_after), taps);
    CHECK(memcmp(edge_before, edge_after, taps * sizeof(float)) == 0);
    free(before), free(after), free(edge_before), free(edge_after);
    tex_thread_destroy(tc);
    tex_system_destroy(ts);
}

/* A premultiplied file (an RGBA half scanline EXR) is divided by its alpha
 * once, as its tiles are cut, whether they are kept, written back and read
 * again, or spilled and loaded: never twice. */
static void
case_premultiplied(const char *arg)
{
    (void)arg;
    /* Under 1 MiB: the 128x128 file's 11 tiles (five of 32 KiB, six of
     * their levels' few rows) are kept; the 256x256 one (its 512 KiB image charged while it
     * decodes) has 27, more than is left: spilled. */
    enum { NFILES = 2 };
    static const uint32_t sizes[NFILES] = {128, 256};
    char                  err[TEX_ERR_LEN], path[NFILES][512];
    tex_image             img[NFILES];
    ustr                  names[NFILES];
    for (uint32_t i = 0; i < NFILES; i++) {
        uint32_t n = sizes[i];
        REQUIRE(tex_image_alloc(&img[i], n, n, 4, TEX_TYPE_HALF, err) == TEX_OK);
        uint16_t *p = img[i].pixels;
        for (uint32_t y = 0; y < n; y++)
            for (uint32_t x = 0; x < n; x++) {
                uint16_t *t = p + ((size_t)y * n + x) * 4;
                float     a = 0.25f + (float)((x + 3 * y) % 7) / 10.0f; /* 0.25 .. 0.85 */
                for (uint32_t c = 0; c < 3; c++)
                    t[c] = tex_float_to_half(a * (float)value((int)i, x, y, c) / 255.0f);
                t[3] = tex_float_to_half(a);
            }
        snprintf(path[i], sizeof path[i], "%s/premultiplied%u.exr", dir, i);
        REQUIRE(tex_exr_write_scanline(path[i], &img[i], NULL, 0, err) == TEX_OK);
        names[i] = ustr_intern_cstr(path[i]);
    }
    ustr        big = png_make("big.png", 7, 1024);
    tex_system *ts = system_new(1);
    tex_thread *tc = thread_new(ts);
    tex_opts    o = {.filter = TEX_FILTER_CLOSEST};
    float       rgba[4];
    for (uint32_t i = 0; i < NFILES; i++)
        REQUIRE(tex_lookup(ts, tc, names[i], 0.5f, 0.5f, NULL, &o, rgba) == TEX_OK);
    REQUIRE(stats(ts).tiles_kept == tiles_of(sizes[0]));
    touch_level0(ts, tc, big, 1024, 120); /* every tile of both pushed out */
    REQUIRE(stats(ts).tiles_spilled == tiles_of(sizes[0]));
    unsigned wrong = 0;
    for (uint32_t i = 0; i < NFILES; i++) {
        uint32_t        n = sizes[i];
        const uint16_t *p = img[i].pixels;
        for (uint32_t y = 0; y < n; y++)
            for (uint32_t x = 0; x < n; x++) {
                const uint16_t *t = p + ((size_t)y * n + x) * 4;
                float           a = tex_half_to_float(t[3]);
                REQUIRE(tex_lookup(ts, tc, names[i], (x + 0.5f) / n, (y + 0.5f) / n, NULL, &o,
                                   rgba) == TEX_OK);
                for (int c = 0; c < 4; c++) {
                    uint16_t want = c < 3 ? tex_float_to_half(tex_half_to_float(t[c]) / a) : t[c];
                    if (rgba[c] != tex_half_to_float(want) && wrong++ < 5)
                        RT_CHECK_FAIL_("file %u texel (%u, %u) channel %d: %g, %g wanted", i, x, y,
                                       c, (double)rgba[c], (double)tex_half_to_float(want));
                }
            }
    }
    CHECK_EQ_INT(wrong, 0);
    tex_thread_destroy(tc);
    tex_system_destroy(ts);
    for (uint32_t i = 0; i < NFILES; i++)
        tex_image_free(&img[i]);
}

/* A PNG cut short after some rows of tiles were kept: its decode fails,
 * and the tiles it kept leave the cache with it. */
static void
case_failed_decode(const char *arg)
{
    (void)arg;
    ustr   name = png_make("cut.png", 4, 256);
    size_t size;
    void  *bytes = tex_test_file_read(name, &size);
    tex_test_file_write(name, bytes, size * 3 / 4);
    free(bytes);
    tex_system *ts = system_new(0);
    tex_thread *tc = thread_new(ts);
    tex_opts    o = {.raw = true, .filter = TEX_FILTER_CLOSEST};
    float       rgba[4];
    CHECK(tex_lookup(ts, tc, name, 0.5f, 0.5f, NULL, &o, rgba) != TEX_OK);
    tex_stats s = stats(ts);
    CHECK_EQ_U64(s.file_errors, 1);
    CHECK(s.tiles_kept >= 4);  /* at least level 0's first row of tiles ... */
    CHECK_EQ_U64(s.memory, 0); /* ... and none of them left */
    tex_thread_destroy(tc);
    tex_system_destroy(ts);
}

static char reported[TEX_ERR_LEN + 512];
static int  reports;

static void
report(void *ctx, const char *name, const char *reason)
{
    (void)ctx;
    snprintf(reported, sizeof reported, "%s: %s", name, reason);
    reports++;
}

/* Kept tiles whose write-back fails (the spill file may not grow past the
 * big file's range: RLIMIT_FSIZE, as a full disk would refuse it) leave
 * all the same, and their file breaks at its next miss: reported once,
 * with the reason, and no lookup returns what was never written. */
static void
case_write_fails(const char *arg)
{
    (void)arg;
    ustr        big = png_make("big.png", 5, 1024);
    ustr        small = png_make("small.png", 6, 128);
    tex_system *ts;
    REQUIRE(tex_system_create(&(tex_config){.max_memory_mb = 1, .report = report}, &ts, NULL) ==
            TEX_OK);
    tex_thread *tc = thread_new(ts);
    touch_level0(ts, tc, big, 1024, 1); /* spilled: its range written, first */
    float    rgba[4];
    tex_opts o = {.raw = true, .filter = TEX_FILTER_CLOSEST};
    REQUIRE(tex_lookup(ts, tc, small, 0.5f, 0.5f, NULL, &o, rgba) == TEX_OK);
    REQUIRE(stats(ts).tiles_kept == tiles_of(128));
    struct rlimit old, rl;
    REQUIRE(getrlimit(RLIMIT_FSIZE, &old) == 0);
    rl = old;
    rl.rlim_cur =
        tiles_of(1024) * 64 * 64 * 4; /* the big file's range: the small one's is past it */
    signal(SIGXFSZ, SIG_IGN);         /* pwrite() fails with EFBIG instead */
    REQUIRE(setrlimit(RLIMIT_FSIZE, &rl) == 0);
    touch_level0(ts, tc, big, 1024, 120);
    REQUIRE(setrlimit(RLIMIT_FSIZE, &old) == 0);
    CHECK_EQ_U64(stats(ts).tiles_spilled, tiles_of(128)); /* tried, and went */
    CHECK_EQ_INT(reports, 0);
    CHECK(tex_lookup(ts, tc, small, 0.5f, 0.5f, NULL, &o, rgba) != TEX_OK);
    CHECK(tex_lookup(ts, tc, small, 0.9f, 0.9f, NULL, &o, rgba) != TEX_OK);
    CHECK_EQ_INT(reports, 1);
    CHECK_CONTAINS(reported, "small.png: cannot write the tile spill file: File too large");
    CHECK_ONE_LINE(reported);
    CHECK_EQ_INT(texels_wrong(ts, tc, big, 5, 1024), 0); /* the other file is fine */
    tex_thread_destroy(tc);
    tex_system_destroy(ts);
}

/* An 8-bit PNG of w x h, nc channels of value(k, ...)'s texels, as DIR/NAME. */
static ustr
png_shaped(const char *name, int k, uint32_t w, uint32_t h, uint32_t nc)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    tex_test_png(path, w, h, nc, value, k);
    return ustr_intern_cstr(path);
}

/* A premultiplied half RGBA scanline EXR of w x h, alphas 0 to 0.75. */
static ustr
exr_shaped(const char *name, int k, uint32_t w, uint32_t h)
{
    char      err[TEX_ERR_LEN], path[512];
    tex_image img;
    REQUIRE(tex_image_alloc(&img, w, h, 4, TEX_TYPE_HALF, err) == TEX_OK);
    uint16_t *p = img.pixels;
    for (uint32_t y = 0; y < h; y++)
        for (uint32_t x = 0; x < w; x++) {
            uint16_t *t = p + ((size_t)y * w + x) * 4;
            float     a = (float)((x + 3 * y) % 7) / 8.0f;
            for (uint32_t c = 0; c < 3; c++)
                t[c] = tex_float_to_half(a * (float)value(k, x, y, c) / 255.0f);
            t[3] = tex_float_to_half(a);
        }
    snprintf(path, sizeof path, "%s/%s", dir, name);
    REQUIRE(tex_exr_write_scanline(path, &img, NULL, 0, err) == TEX_OK);
    tex_image_free(&img);
    return ustr_intern_cstr(path);
}

enum { GRID = 23, LEVELS = 10, RESULTS = GRID * GRID * LEVELS * 2 * 4 };

/* Bilinear lookups on a grid at the footprints of levels 0 to 9, raw and
 * not, of a file w wide, into out. */
static void
grid_lookups(tex_system *ts, tex_thread *tc, ustr name, uint32_t w, float *out)
{
    size_t k = 0;
    for (int raw = 0; raw < 2; raw++)
        for (int l = 0; l < LEVELS; l++) {
            float      d = (float)(1u << l) / (float)w;
            tex_derivs dv = {d, 0, 0, d};
            tex_opts   o = {.raw = raw, .filter = TEX_FILTER_BILINEAR};
            for (int i = 0; i < GRID; i++)
                for (int j = 0; j < GRID; j++, k += 4)
                    CHECK_EQ_INT(tex_lookup(ts, tc, name, (i + 0.37f) / GRID, (j + 0.61f) / GRID,
                                            l ? &dv : NULL, &o, out + k),
                                 TEX_OK);
        }
}

/* The three ways a decoded file's tiles reach a lookup give the same bits:
 * kept and read from the cache; spilled as they are cut (the cache full
 * when the file is opened) and loaded; kept, written back as they are
 * evicted, and loaded. Sizes that are not whole tiles, 3 and 4 channels,
 * and premultiplied EXRs (alpha 0 among them): padding, the spill file's
 * spans and the division by alpha, every level. */
static void
case_paths_agree(const char *arg)
{
    (void)arg;
    struct {
        ustr     name;
        uint32_t w;
    } files[] = {
        {png_shaped("odd_rgba.png", 9, 200, 75, 4), 200},
        {png_shaped("odd_rgb.png", 9, 130, 67, 3), 130},
        {png_shaped("thin.png", 9, 3, 300, 4), 3},
        {exr_shaped("odd_pm.exr", 3, 150, 90), 150},
        {exr_shaped("wide_pm.exr", 3, 190, 5), 190},
    };
    ustr         big = png_make("big.png", 8, 1024);
    static float kept[RESULTS], spilled[RESULTS], back[RESULTS];
    tex_opts o[2] = {{.filter = TEX_FILTER_CLOSEST}, {.raw = true, .filter = TEX_FILTER_CLOSEST}};
    float    rgba[4];
    for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
        tex_system *ts = system_new(64);
        tex_thread *tc = thread_new(ts);
        grid_lookups(ts, tc, files[f].name, files[f].w, kept);
        CHECK(stats(ts).tiles_kept > 0);
        CHECK_EQ_U64(stats(ts).tiles_loaded, 0);
        tex_thread_destroy(tc);
        tex_system_destroy(ts);

        ts = system_new(1);
        tc = thread_new(ts);
        touch_level0(ts, tc, big, 1024, 120); /* the cache full: the file is spilled */
        grid_lookups(ts, tc, files[f].name, files[f].w, spilled);
        CHECK_EQ_U64(stats(ts).tiles_kept, 0);
        tex_thread_destroy(tc);
        tex_system_destroy(ts);

        ts = system_new(1);
        tc = thread_new(ts);
        for (int i = 0; i < 2; i++) /* opened both ways, kept */
            REQUIRE(tex_lookup(ts, tc, files[f].name, 0.5f, 0.5f, NULL, &o[i], rgba) == TEX_OK);
        uint64_t nkept = stats(ts).tiles_kept;
        touch_level0(ts, tc, big, 1024, 120); /* and pushed out */
        CHECK(nkept > 0);
        CHECK_EQ_U64(stats(ts).tiles_spilled, nkept);
        grid_lookups(ts, tc, files[f].name, files[f].w, back);
        tex_thread_destroy(tc);
        tex_system_destroy(ts);

        unsigned differ = 0;
        for (size_t i = 0; i < RESULTS; i++)
            differ += memcmp(&kept[i], &spilled[i], sizeof(float)) != 0 ||
                      memcmp(&kept[i], &back[i], sizeof(float)) != 0;
        if (differ)
            RT_CHECK_FAIL_("file %zu: %u of %d results differ between the paths", f, differ,
                           RESULTS);
    }
}

static uint8_t
flat(int k, uint32_t x, uint32_t y, uint32_t c)
{
    (void)k, (void)x, (void)y;
    return (uint8_t)(c == 3 ? 255 : 100 + c);
}

/* A constant file is answered without tiles, so its decode does not keep
 * them: they go to the spill file, for the one kind of lookup that reads
 * them, a black wrap's, which finds them there. */
static void
case_constant(const char *arg)
{
    (void)arg;
    char path[512];
    snprintf(path, sizeof path, "%s/flat.png", dir);
    tex_test_png_rgba(path, 1024, flat, 0);
    ustr        name = ustr_intern_cstr(path);
    tex_system *ts = system_new(64);
    tex_thread *tc = thread_new(ts);
    float       rgba[4];
    tex_opts    o = {.raw = true, .filter = TEX_FILTER_CLOSEST};
    REQUIRE(tex_lookup(ts, tc, name, 0.3f, 0.3f, NULL, &o, rgba) == TEX_OK);
    tex_stats s = stats(ts);
    CHECK_EQ_U64(s.tiles_kept, tiles_of(1024));
    CHECK_EQ_U64(s.tiles_spilled, tiles_of(1024));
    CHECK_EQ_U64(s.memory, 0);
    CHECK_EQ_U64(s.tile_hits + s.tile_misses, 0);
    o.swrap = o.twrap = TEX_WRAP_BLACK;
    REQUIRE(tex_lookup(ts, tc, name, 0.7f, 0.2f, NULL, &o, rgba) == TEX_OK);
    for (int c = 0; c < 4; c++)
        CHECK_EQ_INT((int)(rgba[c] * 255.0f + 0.5f), flat(0, 0, 0, (uint32_t)c));
    CHECK_EQ_U64(stats(ts).tiles_loaded, 1); /* from the spill file */
    tex_thread_destroy(tc);
    tex_system_destroy(ts);
}

/* Once the clock has had to evict, decodes no longer keep their tiles,
 * even where there is room again: a cache under pressure holds tiles
 * lookups want, which a new file's tiles would push out. Here the room is
 * a scanline EXR's charge given back after its decode evicted for it. */
static void
case_evicting(const char *arg)
{
    (void)arg;
    ustr        big = png_make("big.png", 10, 1024);
    ustr        exr = exr_shaped("charged.exr", 3, 256, 256); /* 512 KiB charged */
    ustr        small = png_make("small.png", 11, 128);       /* 11 tiles, 99 KB */
    tex_system *ts = system_new(1);
    tex_thread *tc = thread_new(ts);
    touch_level0(ts, tc, big, 1024, 120); /* the cache full, tiles evicted */
    REQUIRE(stats(ts).tiles_evicted > 0);
    float    rgba[4];
    tex_opts o = {.raw = true, .filter = TEX_FILTER_CLOSEST};
    REQUIRE(tex_lookup(ts, tc, exr, 0.5f, 0.5f, NULL, &o, rgba) == TEX_OK);
    tex_stats s = stats(ts);
    REQUIRE(s.memory + (256 << 10) < (1 << 20)); /* room for the small file's tiles */
    CHECK_EQ_INT(texels_wrong(ts, tc, small, 11, 128), 0);
    CHECK_EQ_U64(stats(ts).tiles_kept, 0);
    tex_thread_destroy(tc);
    tex_system_destroy(ts);
}

int
main(int argc, char **argv)
{
    static const rt_test_case cases[] = {
        {"kept", case_kept},
        {"evicted", case_evicted},
        {"rows_only", case_rows_only},
        {"premultiplied", case_premultiplied},
        {"failed_decode", case_failed_decode},
        {"write_fails", case_write_fails},
        {"paths_agree", case_paths_agree},
        {"constant", case_constant},
        {"evicting", case_evicting},
        {NULL, NULL},
    };
    dir = tex_test_dir();
    return rt_test_main(cases, argc, argv);
}
