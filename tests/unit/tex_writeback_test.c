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
    CHECK_EQ_U64(s.tiles_kept, tiles_of(200));
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

/* A premultiplied file (an RGBA half scanline EXR) is divided by its alpha
 * once, as its tiles are cut, whether they are kept, written back and read
 * again, or spilled and loaded: never twice. */
static void
case_premultiplied(const char *arg)
{
    (void)arg;
    /* Under 1 MiB: the 128x128 file's 11 tiles of 32 KiB are kept; the
     * 256x256 one (its 512 KiB image charged while it decodes) has 27,
     * more than is left: spilled. */
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

int
main(int argc, char **argv)
{
    static const rt_test_case cases[] = {
        {"kept", case_kept},
        {"evicted", case_evicted},
        {"premultiplied", case_premultiplied},
        {"failed_decode", case_failed_decode},
        {"write_fails", case_write_fails},
        {NULL, NULL},
    };
    dir = tex_test_dir();
    return rt_test_main(cases, argc, argv);
}
