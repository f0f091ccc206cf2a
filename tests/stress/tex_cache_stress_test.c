/* The tile cache under a memory cap far smaller than the textures, with more
 * threads than cores (run under ThreadSanitizer by the tsan preset): every
 * lookup must return the exact texel while tiles are evicted, retired and
 * reloaded underneath it. */
#include "check.h"
#include "texture.h"
#include "ustring.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { SIZE = 512, NTEX = 3, LOOKUPS = 6000 };

static char        dir[] = "/tmp/tex_cache_stress.XXXXXX";
static ustr        names[NTEX];
static tex_system *ts;

/* Texel (x, y) channel c of texture k: every texel differs from its
 * neighbours, so a wrong tile or a torn read shows. */
static uint8_t
value(int k, uint32_t x, uint32_t y, uint32_t c)
{
    return (uint8_t)(x * 7 + y * 13 + c * 61 + (uint32_t)k * 29);
}

static void
textures_make(void)
{
    char err[TEX_ERR_LEN];
    for (int k = 0; k < NTEX; k++) {
        tex_image img;
        REQUIRE(tex_image_alloc(&img, SIZE, SIZE, 4, TEX_TYPE_U8, err) == TEX_OK);
        uint8_t *p = img.pixels;
        for (uint32_t y = 0; y < SIZE; y++)
            for (uint32_t x = 0; x < SIZE; x++)
                for (uint32_t c = 0; c < 4; c++)
                    p[((size_t)y * SIZE + x) * 4 + c] = value(k, x, y, c);
        char path[256];
        snprintf(path, sizeof path, "%s/t%d.png", dir, k);
        REQUIRE(tex_png_write(path, &img, err) == TEX_OK);
        tex_image_free(&img);
        names[k] = ustr_intern_cstr(path);
    }
}

typedef struct worker {
    pthread_t          thread;
    unsigned           id;
    unsigned           wrong, failed;
    pthread_barrier_t *start;
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
    tex_opts o = {.raw = true, .filter = TEX_FILTER_CLOSEST};
    pthread_barrier_wait(w->start);
    for (int i = 0; i < LOOKUPS; i++) {
        x ^= x >> 12, x ^= x << 25, x ^= x >> 27;
        uint64_t r = x * 0x2545F4914F6CDD1DULL;
        int      k = (int)(r % NTEX);
        uint32_t tx = (uint32_t)(r >> 8) % SIZE, ty = (uint32_t)(r >> 24) % SIZE;
        float    rgba[4];
        if (tex_lookup(ts, tc, names[k], (tx + 0.5f) / SIZE, (ty + 0.5f) / SIZE, NULL, &o, rgba) !=
            TEX_OK) {
            w->failed++;
            continue;
        }
        for (uint32_t c = 0; c < 4; c++)
            if ((int)(rgba[c] * 255.0f + 0.5f) != value(k, tx, ty, c))
                w->wrong++;
    }
    tex_thread_destroy(tc);
    return NULL;
}

static void
run(unsigned nthreads)
{
    /* 1 MiB holds about 60 tiles of 64x64 RGBA; the three textures have
     * about 250 at level 0 alone. */
    tex_config cfg = {.max_memory_mb = 1};
    REQUIRE(tex_system_create(&cfg, &ts) == TEX_OK);
    worker           *w = calloc(nthreads, sizeof *w);
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, nthreads);
    for (unsigned i = 0; i < nthreads; i++) {
        w[i] = (worker){.id = i, .start = &start};
        REQUIRE(pthread_create(&w[i].thread, NULL, worker_main, &w[i]) == 0);
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
    CHECK_EQ_U64(s.lookups, (uint64_t)nthreads * LOOKUPS);
    CHECK(s.tiles_evicted > 0);          /* the cap was hit ... */
    CHECK(s.tiles_loaded > 3 * 64 + 10); /* ... and tiles came back */
    CHECK(s.peak_memory < (2u << 20));   /* never far over the cap */
    CHECK_EQ_U64(s.files_opened, NTEX);
    tex_stats_print(&s, "  ", stderr);
    pthread_barrier_destroy(&start);
    free(w);
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

int
main(int argc, char **argv)
{
    static const rt_test_case cases[] = {
        {"evict", case_evict}, {"evict_32", case_evict_32}, {NULL, NULL}};
    REQUIRE(mkdtemp(dir) != NULL);
    textures_make();
    int  rc = rt_test_main(cases, argc, argv);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    return rc;
}
