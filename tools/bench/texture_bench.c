/* texture-bench: how fast the texture system filters, per thread count. The
 * options and the result line are a contract (docs/design.md):
 *
 *   texture-bench threads=T lookups=N secs=S mlookups=R
 *
 * N counts every thread's lookups; S is the median of --repeat runs, each
 * on a new texture system (a cold cache, as a new render would have): the
 * files' opening, decoding and first tile loads are in S, so few lookups
 * measure mostly those (--floor times warm lookups).
 *
 * random:   per lookup, thread t draws s, t and the file (in that order)
 *           from xorshift64* seeded with (t + 1) * 0x9E3779B97F4A7C15:
 *           s = (draw >> 11) * 2^-53, t likewise, file = draw % nfiles.
 * coherent: thread t takes work units u = j T + t; unit u walks the
 *           256x256 raster of region (u / nfiles) % 16 (a 4x4 grid over the
 *           texture) of file u % nfiles, at texel steps of 1/1024.
 * Derivatives are 1/1024 (closest, bilinear) or 1/256 (trilinear); for
 * anisotropic (3/256, 0) and (0, 3/1024), a footprint 4:1 whose probes
 * blend two levels.
 * On stderr: the texture system's statistics for the last run, a checksum
 * of every result (equal checksums: equal images), and the peak RSS.
 *
 * --floor: the same lookups, warm, against the floor (texture_floor.h),
 * interleaved, --repeat rounds (5 by default); one line per thread count:
 *
 *   texture-bench floor threads=T filter=F lookups=N floor_mlookups=A
 *                 mlookups=B ratio=X spread=L-H        (one line)
 *
 * A and B from the median times of the floor and of the texture system;
 * X = B's time / A's, L and H the lowest and highest of the rounds' own
 * ratios. Both sides' checksums are printed on stderr and must be equal
 * (exit 1 otherwise): the floor did the same work. */
#define _POSIX_C_SOURCE 200809L

#include "texture.h"
#include "texture_cold.h"
#include "texture_floor.h"
#include "tool.h"
#include "ustr_cpus.h"
#include "ustring.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#define MAX_LIST 32

const char tool_prog[] = "texture-bench";

typedef struct bench {
    ustr       *files;
    unsigned    nfiles;
    uint64_t    lookups; /* per thread */
    bool        coherent;
    tex_filter  filter;
    bool        raw;    /* the stored values, as OpenImageIO's TextureSystem returns them */
    tex_derivs  derivs; /* every lookup's */
    size_t      max_memory_mb;
    int         repeat;
    unsigned    cpus; /* the CPUs it may run on (ustr_cpus.h), read once */
    tex_system *ts;
} bench;

typedef struct worker {
    const bench         *b;
    const texture_floor *floor; /* --floor's run of the floor: look up there, not in b->ts */
    pthread_barrier_t   *start;
    unsigned             t, nthreads;
    tool_thread_clock    clock; /* read by the thread itself */
    double               sum;
    uint64_t             bits;
    unsigned             errors;
} worker;

static const char usage_text[] =
    "usage: texture-bench [--threads T[,T...]] [--lookups M] [--pattern coherent|random]\n"
    "                     [--filter closest|bilinear|trilinear|anisotropic]\n"
    "                     [--max-memory-mb N] [--repeat K] [--raw] [--cold | --floor] FILE...\n"
    "  --threads LIST     thread counts, one result line each (default 1)\n"
    "  --lookups M        lookups per thread (default 1000000)\n"
    "  --pattern P        random (default) or coherent\n"
    "  --filter F         closest, bilinear (default), trilinear or anisotropic\n"
    "  --max-memory-mb N  tile cache cap (default 1024)\n"
    "  --repeat K         timed runs, each with a cold cache (the files' decoding\n"
    "                     is in the time); median reported (3)\n"
    "  --raw              stored values, no sRGB decoding (as OpenImageIO returns\n"
    "                     an 8-bit .tx's)\n"
    "  --cold             time the first touch of the files (decode, MIP levels,\n"
    "                     every tile) against a plain libpng/libjpeg decode of them,\n"
    "                     interleaved, --repeat rounds (default 5); one thread\n"
    "  --floor            time warm lookups against the same lookups on whole\n"
    "                     arrays of the same texels, interleaved, --repeat rounds\n"
    "                     (default 5); fails unless both give the same results\n";

/* What a thread accumulates: kept on its own stack while it runs (workers
 * sit side by side in one array, and writing there per lookup would bounce
 * a cache line between the threads). */
typedef struct tally {
    double   sum;
    uint64_t bits;
    unsigned errors;
} tally;

/* One lookup of files[file], by the texture system or by the floor (which
 * returns RGBA; the first three count, as the system's three do). */
static inline void
lookup(const bench *b, const texture_floor *fl, tex_thread *tc, const tex_opts *o, unsigned file,
       float s, float t, tally *k)
{
    float rgb[4];
    if (fl)
        texture_floor_lookup(fl, file, s, t, &b->derivs, o, rgb);
    else if (tex_lookup(b->ts, tc, b->files[file], s, t, &b->derivs, o, rgb) != TEX_OK)
        k->errors++;
    for (int c = 0; c < 3; c++) {
        uint32_t bits;
        memcpy(&bits, &rgb[c], sizeof bits);
        k->sum += rgb[c];
        k->bits ^= (uint64_t)bits << (c * 11);
    }
}

static void *
worker_main(void *arg)
{
    worker      *w = arg;
    const bench *b = w->b;
    tex_thread  *tc;
    if (tex_thread_create(b->ts, &tc) != TEX_OK) {
        w->errors++;
        pthread_barrier_wait(w->start);
        return NULL;
    }
    tex_opts o = {.filter = b->filter, .nchannels = 3, .raw = b->raw};
    uint64_t x = tool_seed(w->t);
    tally    k = {0};
    pthread_barrier_wait(w->start);
    tool_thread_clock_start(&w->clock);
    if (!b->coherent) {
        for (uint64_t i = 0; i < b->lookups; i++) {
            float s = (float)tool_unit(tool_xorshift64star(&x));
            float t = (float)tool_unit(tool_xorshift64star(&x));
            lookup(b, w->floor, tc, &o, (unsigned)(tool_xorshift64star(&x) % b->nfiles), s, t, &k);
        }
    } else {
        uint64_t done = 0;
        for (uint64_t j = 0; done < b->lookups; j++) {
            uint64_t u = j * w->nthreads + w->t, r = (u / b->nfiles) % 16;
            unsigned file = (unsigned)(u % b->nfiles);
            for (uint32_t y = 0; y < 256 && done < b->lookups; y++)
                for (uint32_t xx = 0; xx < 256 && done < b->lookups; xx++, done++)
                    lookup(b, w->floor, tc, &o, file, ((r % 4) * 256 + xx + 0.5f) / 1024,
                           ((r / 4) * 256 + y + 0.5f) / 1024, &k);
        }
    }
    tool_thread_clock_stop(&w->clock);
    w->sum = k.sum, w->bits = k.bits, w->errors = k.errors;
    tex_thread_destroy(tc);
    return NULL;
}

/* The lookups on nthreads threads, on b->ts or on the floor fl (not NULL);
 * seconds, first start to last end. late (if not NULL): how far the
 * threads fell short of running side by side (tool_late_shares()). */
static double
run_threads(const bench *b, const texture_floor *fl, unsigned nthreads, double *sum, uint64_t *bits,
            double late[2])
{
    worker           *w = calloc(nthreads, sizeof *w);
    pthread_t        *tid = calloc(nthreads, sizeof *tid);
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, nthreads);
    for (unsigned t = 0; t < nthreads; t++) {
        w[t] = (worker){.b = b, .floor = fl, .start = &start, .t = t, .nthreads = nthreads};
        if (pthread_create(&tid[t], NULL, worker_main, &w[t]) != 0)
            tool_die("cannot start a thread");
    }
    tool_late run = {0};
    unsigned  errors = 0;
    *sum = 0, *bits = 0;
    for (unsigned t = 0; t < nthreads; t++) {
        pthread_join(tid[t], NULL);
        tool_late_add(&run, &w[t].clock);
        errors += w[t].errors;
        *sum += w[t].sum;
        *bits ^= w[t].bits;
    }
    if (errors)
        tool_die("%u lookups failed (see the messages above)", errors);
    pthread_barrier_destroy(&start);
    free(w);
    free(tid);
    if (late)
        tool_late_shares(&run, late);
    return tool_late_secs(&run);
}

/* One timed run on a fresh texture system; seconds, first start to last
 * end; `late` as run_threads(). */
static double
run_once(bench *b, unsigned nthreads, bool last, double *sum, uint64_t *bits, double late[2])
{
    tex_config cfg = {.max_memory_mb = b->max_memory_mb};
    if (tex_system_create(&cfg, &b->ts, NULL) != TEX_OK)
        tool_die("cannot create a texture system");
    double secs = run_threads(b, NULL, nthreads, sum, bits, late);
    if (last) {
        tex_stats s;
        tex_system_stats(b->ts, &s);
        tex_stats_print(&s, "  ", stderr);
    }
    tex_system_destroy(b->ts);
    return secs;
}

/* --floor at one thread count: both sides once untimed (each side's first
 * touch of its memory stays out of round 1), then --repeat rounds of the
 * floor and the system in turn, so that the machine's drifts reach both. */
static void
floor_rounds(const bench *b, const texture_floor *fl, unsigned nthreads)
{
    static const char *const names[] = {"bilinear", "closest", "trilinear", "anisotropic"};
    double                   fsecs[64], secs[64], ratio[64], fsum, sum, late[2][64][2];
    uint64_t                 fbits, bits, n = b->lookups * nthreads;
    run_threads(b, fl, nthreads, &fsum, &fbits, NULL);
    run_threads(b, NULL, nthreads, &sum, &bits, NULL);
    for (int r = 0; r < b->repeat; r++) {
        fsecs[r] = run_threads(b, fl, nthreads, &fsum, &fbits, late[0][r]);
        secs[r] = run_threads(b, NULL, nthreads, &sum, &bits, late[1][r]);
        ratio[r] = secs[r] / fsecs[r];
        fprintf(stderr, "  round %d: floor %.4f s, ours %.4f s, ratio %.3f\n", r + 1, fsecs[r],
                secs[r], ratio[r]);
    }
    fprintf(stderr, "  checksum ours %.6f %016" PRIx64 ", floor %.6f %016" PRIx64 "\n", sum, bits,
            fsum, fbits);
    if (sum != fsum || bits != fbits)
        tool_die("the floor's results differ from the texture system's: not the same lookups");
    double fmed = tool_median(fsecs, b->repeat), med = tool_median(secs, b->repeat);
    double lo = ratio[0], hi = ratio[0];
    for (int r = 1; r < b->repeat; r++)
        lo = ratio[r] < lo ? ratio[r] : lo, hi = ratio[r] > hi ? ratio[r] : hi;
    printf("texture-bench floor threads=%u filter=%s lookups=%" PRIu64
           " floor_mlookups=%.3f mlookups=%.3f ratio=%.3f spread=%.3f-%.3f\n",
           nthreads, names[b->filter], n, (double)n / fmed / 1e6, (double)n / med / 1e6, med / fmed,
           lo, hi);
    fflush(stdout);
    tool_late_warn(nthreads, b->cpus, "the floor", late[0], b->repeat);
    tool_late_warn(nthreads, b->cpus, "ours", late[1], b->repeat);
}

/* --floor: one texture system for every thread count, warmed by the
 * lookups once, its files then read whole into the floor (which loads
 * every tile they have); the rounds should load none. */
static void
floor_run(bench *b, const unsigned *threads, int nthreads)
{
    tex_config cfg = {.max_memory_mb = b->max_memory_mb};
    if (tex_system_create(&cfg, &b->ts, NULL) != TEX_OK)
        tool_die("cannot create a texture system");
    double   sum;
    uint64_t bits;
    run_threads(b, NULL, threads[0], &sum, &bits, NULL);
    texture_floor *fl;
    char           err[TEX_ERR_LEN];
    if (texture_floor_create(b->ts, b->files, b->nfiles, b->raw, &fl, err) != TEX_OK)
        tool_die("%s", err);
    tex_stats warm, s;
    tex_system_stats(b->ts, &warm);
    fprintf(stderr, "  floor: %.1f MiB of texels; cache %.1f MiB\n",
            (double)texture_floor_bytes(fl) / (1 << 20), (double)warm.memory / (1 << 20));
    for (int k = 0; k < nthreads; k++)
        floor_rounds(b, fl, threads[k]);
    tex_system_stats(b->ts, &s);
    tex_stats_print(&s, "  ", stderr);
    if (s.tiles_loaded != warm.tiles_loaded)
        fprintf(stderr,
                "texture-bench: warning: %" PRIu64 " tiles loaded during the rounds: not warm "
                "(raise --max-memory-mb)\n",
                s.tiles_loaded - warm.tiles_loaded);
    texture_floor_destroy(fl);
    tex_system_destroy(b->ts);
}

int
main(int argc, char **argv)
{
    static const struct option longopts[] = {{"threads", required_argument, NULL, 't'},
                                             {"lookups", required_argument, NULL, 'l'},
                                             {"pattern", required_argument, NULL, 'p'},
                                             {"filter", required_argument, NULL, 'f'},
                                             {"max-memory-mb", required_argument, NULL, 'm'},
                                             {"repeat", required_argument, NULL, 'r'},
                                             {"raw", no_argument, NULL, 'R'},
                                             {"cold", no_argument, NULL, 'C'},
                                             {"floor", no_argument, NULL, 'F'},
                                             {NULL, 0, NULL, 0}};
    static const tool_cli      cli = {usage_text, longopts, NULL};
    bench                      b = {.lookups = 1000000,
                                    .filter = TEX_FILTER_BILINEAR,
                                    .max_memory_mb = 1024,
                                    .repeat = 3,
                                    .cpus = ustr_cpus_usable()};
    unsigned                   threads[MAX_LIST] = {1};
    int                        nthreads = 1, c;
    bool                       cold = false, floor_bench = false, repeat_given = false;
    while ((c = tool_getopt(argc, argv, &cli)) != -1) {
        switch (c) {
        case 't': {
            nthreads = 0;
            tool_list list;
            for (const char *tok = tool_list_first(&list, optarg); tok;
                 tok = tool_list_next(&list)) {
                if (nthreads == MAX_LIST)
                    tool_bad_usage("at most %d thread counts", MAX_LIST);
                threads[nthreads++] = (unsigned)tool_parse_u64(tok, "--threads", 1024);
            }
            tool_list_free(&list);
            if (!nthreads)
                tool_bad_usage("bad --threads '%s'", optarg);
            break;
        }
        case 'l':
            b.lookups = tool_parse_u64(optarg, "--lookups", (uint64_t)1 << 40);
            break;
        case 'p':
            if (strcmp(optarg, "random") && strcmp(optarg, "coherent"))
                tool_bad_usage("bad --pattern '%s' (coherent or random)", optarg);
            b.coherent = strcmp(optarg, "coherent") == 0;
            break;
        case 'f':
            if (!strcmp(optarg, "closest"))
                b.filter = TEX_FILTER_CLOSEST;
            else if (!strcmp(optarg, "bilinear"))
                b.filter = TEX_FILTER_BILINEAR;
            else if (!strcmp(optarg, "trilinear"))
                b.filter = TEX_FILTER_TRILINEAR;
            else if (!strcmp(optarg, "anisotropic"))
                b.filter = TEX_FILTER_ANISOTROPIC;
            else
                tool_bad_usage("bad --filter '%s' (closest, bilinear, trilinear or anisotropic)",
                               optarg);
            break;
        case 'm':
            b.max_memory_mb = tool_parse_u64(optarg, "--max-memory-mb", 1 << 20);
            break;
        case 'r':
            b.repeat = (int)tool_parse_u64(optarg, "--repeat", 63);
            repeat_given = true;
            break;
        case 'R':
            b.raw = true;
            break;
        case 'C':
            cold = true;
            break;
        case 'F':
            floor_bench = true;
            break;
        }
    }
    if (optind == argc) {
        tool_usage_error(&cli);
    }
    if (cold && floor_bench)
        tool_bad_usage("--cold and --floor are two benchmarks: one at a time");
    if (cold) {
        texture_cold_run(&(texture_cold_opts){argv + optind, (unsigned)(argc - optind),
                                              repeat_given ? b.repeat : 5, b.raw, b.max_memory_mb});
        return 0;
    }
    b.nfiles = (unsigned)(argc - optind);
    b.files = malloc(b.nfiles * sizeof *b.files);
    for (unsigned i = 0; i < b.nfiles; i++)
        b.files[i] = ustr_intern_cstr(argv[optind + (int)i]);
    float deriv = b.filter == TEX_FILTER_TRILINEAR ? 1.0f / 256 : 1.0f / 1024;
    b.derivs = b.filter == TEX_FILTER_ANISOTROPIC ? (tex_derivs){3.0f / 256, 0, 0, 3.0f / 1024}
                                                  : (tex_derivs){deriv, 0, 0, deriv};
    if (floor_bench) {
        b.repeat = repeat_given ? b.repeat : 5;
        floor_run(&b, threads, nthreads);
        free(b.files);
        return 0;
    }

    for (int k = 0; k < nthreads; k++) {
        double   secs[64], late[64][2], sum = 0;
        uint64_t bits = 0;
        for (int r = 0; r < b.repeat; r++)
            secs[r] = run_once(&b, threads[k], r == b.repeat - 1, &sum, &bits, late[r]);
        uint64_t n = b.lookups * threads[k];
        double   median = tool_median(secs, b.repeat);
        printf("texture-bench threads=%u lookups=%" PRIu64 " secs=%.4f mlookups=%.3f\n", threads[k],
               n, median, (double)n / median / 1e6);
        fflush(stdout);
        struct rusage ru;
        getrusage(RUSAGE_SELF, &ru);
        fprintf(stderr, "  checksum %.6f %016" PRIx64 ", peak RSS %.1f MiB\n", sum, bits,
                (double)ru.ru_maxrss / 1024);
        tool_late_warn(threads[k], b.cpus, NULL, late, b.repeat);
    }
    free(b.files);
    return 0;
}
