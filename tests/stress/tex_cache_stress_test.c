/* The tile cache under a memory cap far smaller than the textures, with more
 * threads than cores (run under ThreadSanitizer by the tsan preset): every
 * lookup must return the exact texel while tiles are evicted, retired and
 * reloaded underneath it. */
#include "check.h"
#include "tex_exr.h"
#include "tex_file_testing.h"
#include "texture.h"
#include "ustring.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { SIZE = 512, NTEX = 3, LOOKUPS = 6000 };

static const char *dir; /* tex_test_dir() */
static ustr        names[NTEX];
static tex_system *ts;

/* Texel (x, y) channel c of texture k: a hash of all four, which repeats
 * nowhere, so a wrong tile or a torn read shows. (A linear pattern, as this
 * was, repeats every 256 texels and along a tile's diagonal: a lookup
 * served from the tile 256 texels away passed every test.) */
static uint8_t
value(int k, uint32_t x, uint32_t y, uint32_t c)
{
    uint32_t h = x * 0x9E3779B1u ^ y * 0x85EBCA77u ^ c * 0xC2B2AE3Du ^ (uint32_t)k * 0x27D4EB2Fu;
    h ^= h >> 15;
    h *= 0x2C1B3C6Du;
    h ^= h >> 12;
    return (uint8_t)h;
}

/* Writes texture k, n x n RGBA with value()'s texels, as DIR/PREFIXk.png;
 * its interned path. */
static ustr
texture_write(const char *prefix, int k, uint32_t n)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s%d.png", dir, prefix, k);
    tex_test_png_rgba(path, n, value, k);
    return ustr_intern_cstr(path);
}

static void
textures_make(void)
{
    for (int k = 0; k < NTEX; k++)
        names[k] = texture_write("t", k, SIZE);
}

/* One closest-texel lookup of texel (x, y) of texture k (n x n, `name`),
 * counted in *wrong (a texel not value()'s) or *failed. */
static void
lookup_check(tex_thread *tc, ustr name, int k, uint32_t n, uint32_t x, uint32_t y, unsigned *wrong,
             unsigned *failed)
{
    tex_opts o = {.raw = true, .filter = TEX_FILTER_CLOSEST};
    float    rgba[4];
    if (tex_lookup(ts, tc, name, (x + 0.5f) / n, (y + 0.5f) / n, NULL, &o, rgba) != TEX_OK) {
        (*failed)++;
        return;
    }
    for (uint32_t c = 0; c < 4; c++)
        if ((int)(rgba[c] * 255.0f + 0.5f) != value(k, x, y, c))
            (*wrong)++;
}

/* A thread of lookups: `lookups` random texels of textures[0..ntex-1]
 * (texture k is size0 square if k == 0, else size), texture 0 first when
 * first0 is set; what came back wrong or failed, counted. */
typedef struct worker {
    pthread_t          thread;
    unsigned           id;
    unsigned           wrong, failed;
    pthread_barrier_t *start;
    const ustr        *textures;
    int                ntex, lookups;
    uint32_t           size0, size;
    bool               first0;
} worker;

static void *
worker_main(void *arg)
{
    worker     *w = arg;
    tex_thread *tc;
    if (tex_thread_create(ts, &tc) != TEX_OK) {
        w->failed++;
        return NULL;
    }
    uint64_t x = (w->id + 1) * 0x9E3779B97F4A7C15ULL;
    pthread_barrier_wait(w->start);
    for (int i = 0; i < w->lookups; i++) {
        x ^= x >> 12, x ^= x << 25, x ^= x >> 27;
        uint64_t r = x * 0x2545F4914F6CDD1DULL;
        int      k = i == 0 && w->first0 ? 0 : (int)(r % (uint64_t)w->ntex);
        uint32_t n = k == 0 ? w->size0 : w->size;
        lookup_check(tc, w->textures[k], k, n, (uint32_t)(r >> 8) % n, (uint32_t)(r >> 24) % n,
                     &w->wrong, &w->failed);
    }
    tex_thread_destroy(tc);
    return NULL;
}

/* Runs n workers like `like` (its id, counts and start aside), started
 * together; their wrong and failed lookups summed into *wrong, *failed. */
static void
workers_run(unsigned n, const worker *like, unsigned *wrong, unsigned *failed)
{
    worker           *w = calloc(n, sizeof *w);
    pthread_barrier_t start;
    REQUIRE(w);
    pthread_barrier_init(&start, NULL, n);
    for (unsigned i = 0; i < n; i++) {
        w[i] = *like;
        w[i].id = i, w[i].wrong = w[i].failed = 0, w[i].start = &start;
        REQUIRE(pthread_create(&w[i].thread, NULL, worker_main, &w[i]) == 0);
    }
    *wrong = *failed = 0;
    for (unsigned i = 0; i < n; i++) {
        pthread_join(w[i].thread, NULL);
        *wrong += w[i].wrong, *failed += w[i].failed;
    }
    pthread_barrier_destroy(&start);
    free(w);
}

/* workers_run(), then every lookup exact and none failed; the system's
 * counts, printed. */
static tex_stats
workers_check(unsigned n, const worker *like)
{
    unsigned wrong, failed;
    workers_run(n, like, &wrong, &failed);
    CHECK_EQ_INT(wrong, 0);
    CHECK_EQ_INT(failed, 0);
    tex_stats s;
    tex_system_stats(ts, &s);
    tex_stats_print(&s, "  ", stderr);
    return s;
}

static void
run(unsigned nthreads)
{
    /* 1 MiB holds about 60 tiles of 64x64 RGBA; the three textures have
     * about 250 at level 0 alone. */
    tex_config cfg = {.max_memory_mb = 1};
    REQUIRE(tex_system_create(&cfg, &ts, NULL) == TEX_OK);
    tex_stats s = workers_check(
        nthreads,
        &(worker){
            .textures = names, .ntex = NTEX, .lookups = LOOKUPS, .size0 = SIZE, .size = SIZE});
    CHECK_EQ_U64(s.lookups, (uint64_t)nthreads * LOOKUPS);
    CHECK(s.tiles_evicted > 0);          /* the cap was hit ... */
    CHECK(s.tiles_loaded > 3 * 64 + 10); /* ... and tiles came back */
    CHECK(s.peak_memory < (2u << 20));   /* never far over the cap */
    CHECK_EQ_U64(s.files_opened, NTEX);
    tex_system_destroy(ts);
}

static void
case_evict(const char *arg)
{
    (void)arg;
    run(8);
}

static void
case_evict_32(const char *arg)
{
    (void)arg;
    run(32);
}

/* Write-back (cache_tiles.c): small files whose decodes keep their tiles
 * in the cache, far more of them than the cap holds, looked up at random
 * by more threads than cores: kept tiles are evicted, written to the spill
 * file under the cache lock and read back while other threads keep, load
 * and look up, and every texel must still be exact. */
enum { NKEPT = 16, KEPT_SIZE = 128 };

static void
case_writeback(const char *arg)
{
    (void)arg;
    ustr kept[NKEPT];
    for (int k = 0; k < NKEPT; k++)
        kept[k] = texture_write("kept", k, KEPT_SIZE);
    /* 1 MiB holds about 60 tiles of 64x64 RGBA; a 128x128 file has 11
     * (4 at level 0, one at each of the 7 below), so about five files'. */
    REQUIRE(tex_system_create(&(tex_config){.max_memory_mb = 1}, &ts, NULL) == TEX_OK);
    tex_stats s = workers_check(8, &(worker){.textures = kept,
                                             .ntex = NKEPT,
                                             .lookups = 3000,
                                             .size0 = KEPT_SIZE,
                                             .size = KEPT_SIZE});
    CHECK(s.tiles_kept > 0);    /* decodes kept their tiles ... */
    CHECK(s.tiles_spilled > 0); /* ... the clock wrote some back as it evicted them ... */
    CHECK(s.tiles_loaded > 0);  /* ... and lookups read them back */
    CHECK(s.peak_memory < (1u << 20) + 8 * 3 * 17000 + 11 * 17000);
    tex_system_destroy(ts);
}

/* Loader threads: once a decode has kept its first tiles, random exact
 * lookups of one spilled file until told to stop, so that tiles load and
 * evict while the decode goes on. */
typedef struct loader {
    pthread_t     thread;
    unsigned      id;
    ustr          name;
    int           k;
    uint32_t      n;
    _Atomic bool  stop;
    unsigned      wrong, failed;
    unsigned long lookups; /* made once the decode kept tiles */
} loader;

static void *
loader_main(void *arg)
{
    loader     *l = arg;
    tex_thread *tc;
    if (tex_thread_create(ts, &tc) != TEX_OK) {
        l->failed++;
        return NULL;
    }
    tex_stats s = {0};
    /* Relaxed: a flag polled; join() orders the counts. */
    while (s.tiles_kept == 0 && !atomic_load_explicit(&l->stop, memory_order_relaxed)) {
        sched_yield();
        tex_system_stats(ts, &s);
    }
    uint64_t x = (l->id + 7) * 0x9E3779B97F4A7C15ULL;
    while (!atomic_load_explicit(&l->stop, memory_order_relaxed)) {
        x ^= x >> 12, x ^= x << 25, x ^= x >> 27;
        uint64_t r = x * 0x2545F4914F6CDD1DULL;
        lookup_check(tc, l->name, l->k, l->n, (uint32_t)(r >> 8) % l->n, (uint32_t)(r >> 24) % l->n,
                     &l->wrong, &l->failed);
        l->lookups++;
    }
    tex_thread_destroy(tc);
    return NULL;
}

/* Kept tiles evicted, and written back, while their own file is still
 * decoding: once a 1024x1024 file's decode has kept its first row of
 * tiles (5.7 MB of them in all, under an 8 MiB cap), three threads load
 * tiles of a 2048x2048 one, spilled, and push the kept ones out. With `arg` "cut",
 * the decoding file is cut short, so the decode fails after keeping some
 * tiles, and drops them while the loaders may be writing others back.
 * Every texel exact, no tile lost or freed twice (ASan), no race (TSan).
 * libpng reads the files (RT_PNG_FAST=0), so no decode's charge shrinks
 * the room. */
static void
case_writeback_decoding(const char *arg)
{
    bool cut = arg && strcmp(arg, "cut") == 0;
    setenv("RT_PNG_FAST", "0", 1);
    ustr big = texture_write("decoding_big", 1, 2048), small = texture_write("decoding", 2, 1024);
    if (cut) {
        size_t size;
        void  *bytes = tex_test_file_read(small, &size);
        tex_test_file_write(small, bytes, size * 3 / 4);
        free(bytes);
    }
    /* Over the rounds (one slow round may see none): the loaders did look
     * up while the decode ran, and kept tiles were written back (where the
     * decode runs to its end). */
    unsigned long loader_lookups = 0;
    uint64_t      spilled = 0;
    for (int round = 0; round < 3; round++) {
        REQUIRE(tex_system_create(&(tex_config){.max_memory_mb = 8}, &ts, NULL) == TEX_OK);
        tex_thread *tc;
        REQUIRE(tex_thread_create(ts, &tc) == TEX_OK);
        unsigned wrong = 0, failed = 0;
        lookup_check(tc, big, 1, 2048, 5, 5, &wrong, &failed); /* 23 MB: spilled */
        loader l[3];
        for (unsigned i = 0; i < 3; i++) {
            l[i] = (loader){.id = i + 3 * (unsigned)round, .name = big, .k = 1, .n = 2048};
            REQUIRE(pthread_create(&l[i].thread, NULL, loader_main, &l[i]) == 0);
        }
        tex_opts o = {.raw = true, .filter = TEX_FILTER_CLOSEST};
        float    rgba[4];
        CHECK_EQ_INT(tex_lookup(ts, tc, small, 0.5f, 0.5f, NULL, &o, rgba) != TEX_OK, cut);
        for (uint32_t y = 0; !cut && y < 1024; y += 7)
            for (uint32_t x = 0; x < 1024; x += 5)
                lookup_check(tc, small, 2, 1024, x, y, &wrong, &failed);
        for (unsigned i = 0; i < 3; i++) {
            atomic_store_explicit(&l[i].stop, true, memory_order_relaxed);
            pthread_join(l[i].thread, NULL);
            wrong += l[i].wrong, failed += l[i].failed;
            loader_lookups += l[i].lookups;
        }
        CHECK_EQ_INT(wrong, 0);
        CHECK_EQ_INT(failed, 0);
        tex_stats s;
        tex_system_stats(ts, &s);
        tex_stats_print(&s, "  ", stderr);
        CHECK(s.tiles_kept > 0);
        spilled += s.tiles_spilled;
        tex_thread_destroy(tc);
        tex_system_destroy(ts);
    }
    if (!cut) { /* a cut file's decode may fail before any kept tile is pushed out */
        CHECK(loader_lookups > 0);
        CHECK(spilled > 0);
    }
    unsetenv("RT_PNG_FAST");
}

typedef struct opener {
    pthread_t          thread;
    ustr               name;
    pthread_barrier_t *start;
    unsigned           wrong, failed;
} opener;

static void *
opener_main(void *arg)
{
    opener     *o = arg;
    tex_thread *tc;
    if (tex_thread_create(ts, &tc) != TEX_OK) {
        o->failed++;
        return NULL;
    }
    pthread_barrier_wait(o->start);
    lookup_check(tc, o->name, 0, 640, 1, 1, &o->wrong, &o->failed);
    tex_thread_destroy(tc);
    return NULL;
}

/* Two decodes at once cannot both keep their tiles in room for one: the
 * room is reserved, so one keeps, the other spills, and nothing kept is
 * written straight back (without the reservation, most of the first's
 * tiles were). Two 640x640 files of 144 tiles (2.4 MB) each, 4 MiB;
 * libpng reads them, as above. */
static void
case_writeback_reserved(const char *arg)
{
    (void)arg;
    setenv("RT_PNG_FAST", "0", 1);
    ustr f[2] = {texture_write("reserved_a", 0, 640), texture_write("reserved_b", 0, 640)};
    for (int round = 0; round < 8; round++) {
        REQUIRE(tex_system_create(&(tex_config){.max_memory_mb = 4}, &ts, NULL) == TEX_OK);
        pthread_barrier_t start;
        pthread_barrier_init(&start, NULL, 2);
        opener o[2];
        for (int i = 0; i < 2; i++) {
            o[i] = (opener){.name = f[i], .start = &start};
            REQUIRE(pthread_create(&o[i].thread, NULL, opener_main, &o[i]) == 0);
        }
        for (int i = 0; i < 2; i++) {
            pthread_join(o[i].thread, NULL);
            CHECK_EQ_INT(o[i].wrong + o[i].failed, 0);
        }
        pthread_barrier_destroy(&start);
        tex_stats s;
        tex_system_stats(ts, &s);
        CHECK_EQ_U64(s.tiles_kept, 144);
        CHECK_EQ_U64(s.tiles_spilled, 0);
        tex_system_destroy(ts);
    }
    unsetenv("RT_PNG_FAST");
}

/* ---- filtered lookups, tiled EXRs and the open-file cap ---- */

/* Filters that move between tiles and levels within one lookup (bilinear
 * across a tile edge, trilinear, anisotropic probes) hand the thread's one
 * hazard pointer from tile to tile; each result must equal, bit for bit,
 * the one a single thread computes with a cache that never evicts. */
enum { NSPECS = 2048, NEXR = 4, EXR_SIZE = 256 };

typedef struct spec {
    ustr       name;
    float      s, t;
    tex_derivs d;
    tex_opts   o;
    float      want[4];
} spec;

static spec *specs;
static ustr  exr_names[NEXR];

static void
exr_textures_make(void)
{
    char err[TEX_ERR_LEN];
    for (int k = 0; k < NEXR; k++) {
        tex_image levels[TEX_EXR_MAX_LEVELS];
        uint32_t  n = tex_mip_levels(EXR_SIZE, EXR_SIZE);
        REQUIRE(tex_image_alloc(&levels[0], EXR_SIZE, EXR_SIZE, 4, TEX_TYPE_HALF, err) == TEX_OK);
        uint16_t *p = levels[0].pixels;
        for (uint32_t y = 0; y < EXR_SIZE; y++)
            for (uint32_t x = 0; x < EXR_SIZE; x++)
                for (uint32_t c = 0; c < 4; c++)
                    p[((size_t)y * EXR_SIZE + x) * 4 + c] = tex_float_to_half(value(k, x, y, c));
        for (uint32_t l = 1; l < n; l++)
            REQUIRE(tex_image_downsample(&levels[l - 1], &levels[l], err) == TEX_OK);
        char path[4200];
        snprintf(path, sizeof path, "%s/t%d.exr", dir, k);
        /* 32x32 RGBA halves: 8 KiB tiles, about 90 per file with its levels. */
        REQUIRE(tex_exr_write_tiled(path, levels, n, 32, NULL, 0, err) == TEX_OK);
        for (uint32_t l = 0; l < n; l++)
            tex_image_free(&levels[l]);
        exr_names[k] = ustr_intern_cstr(path);
    }
}

static float
unit_rand(uint64_t *x)
{
    *x ^= *x >> 12, *x ^= *x << 25, *x ^= *x >> 27;
    return (float)((*x * 0x2545F4914F6CDD1DULL) >> 40) / (float)(1 << 24);
}

/* NSPECS lookups over `from`, and their results through a system whose cap
 * holds every tile. */
static void
specs_make(const ustr *from, int nfrom)
{
    specs = calloc(NSPECS, sizeof *specs);
    REQUIRE(specs != NULL);
    uint64_t x = 0x9E3779B97F4A7C15ULL;
    for (int i = 0; i < NSPECS; i++) {
        spec *p = &specs[i];
        p->name = from[(int)(unit_rand(&x) * (float)nfrom) % nfrom];
        p->s = unit_rand(&x) * 1.2f - 0.1f;
        p->t = unit_rand(&x) * 1.2f - 0.1f;
        float scale = unit_rand(&x) < 0.3f ? 0 : 0.1f * unit_rand(&x) * unit_rand(&x);
        p->d = (tex_derivs){scale * unit_rand(&x), scale * (unit_rand(&x) - 0.5f),
                            scale * (unit_rand(&x) - 0.5f) * 0.2f, scale * unit_rand(&x) * 0.2f};
        p->o = (tex_opts){.filter = (tex_filter)(i % 4),
                          .swrap = (tex_wrap)((i / 4) % 4),
                          .twrap = (tex_wrap)((i / 16) % 4),
                          .raw = (i / 64) % 2 == 0};
    }
    tex_system *ref;
    tex_thread *tc;
    REQUIRE(tex_system_create(NULL, &ref, NULL) == TEX_OK);
    REQUIRE(tex_thread_create(ref, &tc) == TEX_OK);
    for (int i = 0; i < NSPECS; i++) {
        spec *p = &specs[i];
        REQUIRE(tex_lookup(ref, tc, p->name, p->s, p->t, &p->d, &p->o, p->want) == TEX_OK);
    }
    tex_stats st;
    tex_system_stats(ref, &st);
    REQUIRE(st.tiles_evicted == 0);
    tex_thread_destroy(tc);
    tex_system_destroy(ref);
}

typedef struct filter_worker {
    pthread_t          thread;
    unsigned           id, lookups, churn; /* churn: a new tex_thread every `churn` lookups */
    unsigned           wrong, failed;
    pthread_barrier_t *start;
} filter_worker;

static void *
filter_worker_main(void *arg)
{
    filter_worker *w = arg;
    tex_thread    *tc;
    if (tex_thread_create(ts, &tc) != TEX_OK) {
        w->failed++;
        return NULL;
    }
    uint64_t x = (w->id + 1) * 0x9E3779B97F4A7C15ULL;
    pthread_barrier_wait(w->start);
    for (unsigned i = 0; i < w->lookups; i++) {
        if (w->churn && i % w->churn == w->churn - 1) {
            tex_thread_destroy(tc);
            if (tex_thread_create(ts, &tc) != TEX_OK) {
                w->failed++;
                return NULL;
            }
        }
        const spec *p = &specs[(unsigned)(unit_rand(&x) * NSPECS) % NSPECS];
        float       got[4];
        if (tex_lookup(ts, tc, p->name, p->s, p->t, &p->d, &p->o, got) != TEX_OK) {
            w->failed++;
            continue;
        }
        if (memcmp(got, p->want, sizeof got) != 0 && w->wrong++ < 5)
            fprintf(stderr, "  %s (%g, %g) filter %d: %g %g %g %g, want %g %g %g %g\n", p->name,
                    p->s, p->t, p->o.filter, got[0], got[1], got[2], got[3], p->want[0], p->want[1],
                    p->want[2], p->want[3]);
    }
    tex_thread_destroy(tc);
    return NULL;
}

static void
filters_run(const tex_config *cfg, unsigned nthreads, unsigned lookups, unsigned churn,
            tex_stats *out)
{
    REQUIRE(tex_system_create(cfg, &ts, NULL) == TEX_OK);
    filter_worker    *w = calloc(nthreads, sizeof *w);
    pthread_barrier_t start;
    REQUIRE(w != NULL);
    pthread_barrier_init(&start, NULL, nthreads);
    for (unsigned i = 0; i < nthreads; i++) {
        w[i] = (filter_worker){.id = i, .lookups = lookups, .churn = churn, .start = &start};
        REQUIRE(pthread_create(&w[i].thread, NULL, filter_worker_main, &w[i]) == 0);
    }
    unsigned wrong = 0, failed = 0;
    for (unsigned i = 0; i < nthreads; i++) {
        pthread_join(w[i].thread, NULL);
        wrong += w[i].wrong;
        failed += w[i].failed;
    }
    CHECK_EQ_INT(wrong, 0);
    CHECK_EQ_INT(failed, 0);
    tex_stats s;
    tex_system_stats(ts, &s);
    CHECK_EQ_U64(s.lookups, (uint64_t)nthreads * lookups);
    CHECK(s.tiles_evicted > 0);
    /* Over the cap by at most the tiles being read and the retired ones
     * hazard pointers hold: a few per thread. */
    CHECK(s.peak_memory < (cfg->max_memory_mb << 20) + (size_t)nthreads * 3 * 17000);
    tex_stats_print(&s, "  ", stderr);
    pthread_barrier_destroy(&start);
    free(w);
    tex_system_destroy(ts);
    free(specs);
    *out = s;
}

/* PNGs (tiles from the spill file), sRGB-decoded and raw. */
static void
case_filters(const char *arg)
{
    (void)arg;
    specs_make(names, NTEX);
    tex_config cfg = {.max_memory_mb = 1};
    tex_stats  s;
    filters_run(&cfg, 8, 1500, 0, &s);
}

/* Tiled EXRs read tile by tile, with an open-file cap below the file count,
 * so handles are closed (trylock on the victim's lock) while other threads
 * read tiles of the victim and reopen it. */
static void
case_exr_handles(const char *arg)
{
    (void)arg;
    exr_textures_make();
    specs_make(exr_names, NEXR);
    tex_config cfg = {.max_memory_mb = 1, .max_open_files = 2};
    tex_stats  s;
    filters_run(&cfg, 8, 1500, 0, &s);
    CHECK(s.files_closed > 0);              /* the cap closed handles ... */
    CHECK(s.files_opened > s.files_closed); /* ... and they were reopened */
}

/* Workers destroy and recreate their tex_thread every few lookups while
 * others evict: the hazard scan walks the thread list under threads_lock. */
static void
case_thread_churn(const char *arg)
{
    (void)arg;
    specs_make(names, NTEX);
    tex_config cfg = {.max_memory_mb = 1};
    tex_stats  s;
    filters_run(&cfg, 8, 1200, 37, &s);
}

/* ---- declared files (tex_files_declare()) ---- */

enum { NDECL = 24, NLOOKED = 4, DECL_SIZE = 128, BIG_SIZE = 1024 };
static ustr decl[NDECL];

/* Texture k: BIG_SIZE square for k == 0 (its decode keeps the threads
 * that want it waiting), DECL_SIZE for the rest; texel values as value(). */
static void
declared_make(void)
{
    for (int k = 0; k < NDECL; k++)
        decl[k] = texture_write("d", k, k == 0 ? BIG_SIZE : DECL_SIZE);
}

/* Declared files, opened on first lookup: the threads that find texture 0
 * being opened by another open declared files nobody has begun instead of
 * sleeping, so files no lookup wants get opened too (each once), while
 * every texel read is still exact and no file is opened twice. */
static void
case_declared(const char *arg)
{
    (void)arg;
    declared_make();
    REQUIRE(tex_system_create(&(tex_config){.max_memory_mb = 64}, &ts, NULL) == TEX_OK);
    bool raw[NDECL];
    for (int k = 0; k < NDECL; k++)
        raw[k] = true;
    REQUIRE(tex_files_declare(ts, decl, raw, NDECL) == TEX_OK);
    /* Every thread wants texture 0 first, then texels of textures
     * 0..NLOOKED-1. */
    tex_stats st = workers_check(8, &(worker){.textures = decl,
                                              .ntex = NLOOKED,
                                              .lookups = 400,
                                              .size0 = BIG_SIZE,
                                              .size = DECL_SIZE,
                                              .first0 = true});
    /* Lookups want NLOOKED files; the waiting threads opened more, and no
     * file twice (files_opened counts each opening). */
    CHECK(st.files_opened > NLOOKED);
    CHECK(st.files_opened <= NDECL);
    CHECK_EQ_U64(st.file_errors, 0);
    /* Then every declared file, opened or not: each must now be opened
     * exactly once in all, so a file a waiting thread opened twice shows as
     * one opening too many whatever the timing. */
    tex_thread *tc;
    REQUIRE(tex_thread_create(ts, &tc) == TEX_OK);
    for (int k = 0; k < NDECL; k++)
        CHECK_EQ_INT(tex_file_open(ts, tc, decl[k], raw[k]), TEX_OK);
    tex_thread_destroy(tc);
    tex_system_stats(ts, &st);
    CHECK_EQ_U64(st.files_opened, NDECL);
    tex_system_destroy(ts);
}

int
main(int argc, char **argv)
{
    static const rt_test_case cases[] = {{"evict", case_evict},
                                         {"evict_32", case_evict_32},
                                         {"filters", case_filters},
                                         {"exr_handles", case_exr_handles},
                                         {"thread_churn", case_thread_churn},
                                         {"declared", case_declared},
                                         {"writeback", case_writeback},
                                         {"writeback_decoding", case_writeback_decoding},
                                         {"writeback_reserved", case_writeback_reserved},
                                         {NULL, NULL}};
    dir = tex_test_dir();
    textures_make();
    return rt_test_main(cases, argc, argv);
}
