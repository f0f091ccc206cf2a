/* texture-bench: how fast the texture system filters, per thread count. The
 * options and the result line are a contract (docs/design.md):
 *
 *   texture-bench threads=T lookups=N secs=S mlookups=R
 *
 * N counts every thread's lookups; S is the median of --repeat runs, each
 * on a new texture system (a cold cache, as a new render would have).
 *
 * random:   per lookup, thread t draws s, t and the file (in that order)
 *           from xorshift64* seeded with (t + 1) * 0x9E3779B97F4A7C15:
 *           s = (draw >> 11) * 2^-53, t likewise, file = draw % nfiles.
 * coherent: thread t takes work units u = j T + t; unit u walks the
 *           256x256 raster of region (u / nfiles) % 16 (a 4x4 grid over the
 *           texture) of file u % nfiles, at texel steps of 1/1024.
 * Derivatives are 1/1024 (closest, bilinear) or 1/256 (trilinear).
 * On stderr: the texture system's statistics for the last run, a checksum
 * of every result (equal checksums: equal images), and the peak RSS. */
#define _POSIX_C_SOURCE 200809L

#include "texture.h"
#include "tool.h"
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
    bool        raw; /* the stored values, as OpenImageIO's TextureSystem returns them */
    float       deriv;
    size_t      max_memory_mb;
    int         repeat;
    tex_system *ts;
} bench;

typedef struct worker {
    const bench       *b;
    pthread_barrier_t *start;
    unsigned           t, nthreads;
    double             start_time, end_time, sum;
    uint64_t           bits;
    unsigned           errors;
} worker;

static const char usage_text[] =
    "usage: texture-bench [--threads T[,T...]] [--lookups M] [--pattern coherent|random]\n"
    "                     [--filter closest|bilinear|trilinear] [--max-memory-mb N]\n"
    "                     [--repeat K] [--raw] FILE...\n"
    "  --threads LIST     thread counts, one result line each (default 1)\n"
    "  --lookups M        lookups per thread (default 1000000)\n"
    "  --pattern P        random (default) or coherent\n"
    "  --filter F         closest, bilinear (default) or trilinear\n"
    "  --max-memory-mb N  tile cache cap (default 1024)\n"
    "  --repeat K         timed runs, each with a cold cache; median reported (3)\n"
    "  --raw              stored values, no sRGB decoding (as OpenImageIO returns\n"
    "                     an 8-bit .tx's)\n";

/* What a thread accumulates: kept on its own stack while it runs (workers
 * sit side by side in one array, and writing there per lookup would bounce
 * a cache line between the threads). */
typedef struct tally {
    double   sum;
    uint64_t bits;
    unsigned errors;
} tally;

static void
lookup(const bench *b, tex_thread *tc, const tex_opts *o, ustr file, float s, float t, tally *k)
{
    tex_derivs d = {b->deriv, 0, 0, b->deriv};
    float      rgb[3];
    if (tex_lookup(b->ts, tc, file, s, t, &d, o, rgb) != TEX_OK)
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
    w->start_time = tool_now();
    if (!b->coherent) {
        for (uint64_t i = 0; i < b->lookups; i++) {
            float s = (float)tool_unit(tool_xorshift64star(&x));
            float t = (float)tool_unit(tool_xorshift64star(&x));
            lookup(b, tc, &o, b->files[tool_xorshift64star(&x) % b->nfiles], s, t, &k);
        }
    } else {
        uint64_t done = 0;
        for (uint64_t j = 0; done < b->lookups; j++) {
            uint64_t u = j * w->nthreads + w->t, r = (u / b->nfiles) % 16;
            ustr     file = b->files[u % b->nfiles];
            for (uint32_t y = 0; y < 256 && done < b->lookups; y++)
                for (uint32_t xx = 0; xx < 256 && done < b->lookups; xx++, done++)
                    lookup(b, tc, &o, file, ((r % 4) * 256 + xx + 0.5f) / 1024,
                           ((r / 4) * 256 + y + 0.5f) / 1024, &k);
        }
    }
    w->end_time = tool_now();
    w->sum = k.sum, w->bits = k.bits, w->errors = k.errors;
    tex_thread_destroy(tc);
    return NULL;
}

/* One timed run on a fresh texture system; seconds, first start to last end. */
static double
run_once(bench *b, unsigned nthreads, bool last, double *sum, uint64_t *bits)
{
    tex_config cfg = {.max_memory_mb = b->max_memory_mb};
    if (tex_system_create(&cfg, &b->ts) != TEX_OK)
        tool_die("cannot create a texture system");
    worker           *w = calloc(nthreads, sizeof *w);
    pthread_t        *tid = calloc(nthreads, sizeof *tid);
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, nthreads);
    for (unsigned t = 0; t < nthreads; t++) {
        w[t] = (worker){.b = b, .start = &start, .t = t, .nthreads = nthreads};
        if (pthread_create(&tid[t], NULL, worker_main, &w[t]) != 0)
            tool_die("cannot start a thread");
    }
    double   first = 0, final = 0;
    unsigned errors = 0;
    *sum = 0, *bits = 0;
    for (unsigned t = 0; t < nthreads; t++) {
        pthread_join(tid[t], NULL);
        first = t == 0 || w[t].start_time < first ? w[t].start_time : first;
        final = w[t].end_time > final ? w[t].end_time : final;
        errors += w[t].errors;
        *sum += w[t].sum;
        *bits ^= w[t].bits;
    }
    if (errors)
        tool_die("%u lookups failed (see the messages above)", errors);
    if (last) {
        tex_stats s;
        tex_system_stats(b->ts, &s);
        tex_stats_print(&s, "  ", stderr);
    }
    tex_system_destroy(b->ts);
    pthread_barrier_destroy(&start);
    free(w);
    free(tid);
    return final - first;
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
                                             {NULL, 0, NULL, 0}};
    static const tool_cli      cli = {usage_text, longopts, NULL};
    bench                      b = {
                             .lookups = 1000000, .filter = TEX_FILTER_BILINEAR, .max_memory_mb = 1024, .repeat = 3};
    unsigned threads[MAX_LIST] = {1};
    int      nthreads = 1, c;
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
            else
                tool_bad_usage("bad --filter '%s' (closest, bilinear or trilinear)", optarg);
            break;
        case 'm':
            b.max_memory_mb = tool_parse_u64(optarg, "--max-memory-mb", 1 << 20);
            break;
        case 'r':
            b.repeat = (int)tool_parse_u64(optarg, "--repeat", 63);
            break;
        case 'R':
            b.raw = true;
            break;
        }
    }
    if (optind == argc) {
        tool_usage_error(&cli);
    }
    b.nfiles = (unsigned)(argc - optind);
    b.files = malloc(b.nfiles * sizeof *b.files);
    for (unsigned i = 0; i < b.nfiles; i++)
        b.files[i] = ustr_intern_cstr(argv[optind + (int)i]);
    b.deriv = b.filter == TEX_FILTER_TRILINEAR ? 1.0f / 256 : 1.0f / 1024;

    for (int k = 0; k < nthreads; k++) {
        double   secs[64], sum = 0;
        uint64_t bits = 0;
        for (int r = 0; r < b.repeat; r++)
            secs[r] = run_once(&b, threads[k], r == b.repeat - 1, &sum, &bits);
        uint64_t n = b.lookups * threads[k];
        double   median = tool_median(secs, b.repeat);
        printf("texture-bench threads=%u lookups=%" PRIu64 " secs=%.4f mlookups=%.3f\n", threads[k],
               n, median, (double)n / median / 1e6);
        fflush(stdout);
        struct rusage ru;
        getrusage(RUSAGE_SELF, &ru);
        fprintf(stderr, "  checksum %.6f %016" PRIx64 ", peak RSS %.1f MiB\n", sum, bits,
                (double)ru.ru_maxrss / 1024);
    }
    free(b.files);
    return 0;
}
