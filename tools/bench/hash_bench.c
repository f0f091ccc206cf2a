/* hash-bench: the string hash's cost (issue 14), in one interleaved run,
 * on the same realistic texture paths (texpaths.h), against:
 * - unkeyed: the hash before it was keyed (fixed constants, no per-block
 *   key steps), kept here only as the baseline;
 * - xxh3: XXH3_64bits_withSeed() from Debian's libxxhash (0.8), seeded.
 * Each round hashes every path --ops times over, the three alternating;
 * the median round gives ns per hash, and ratios against ustr_hash_bytes.
 * Each hash's results are summed into a checksum that is printed, so the
 * compiler cannot drop the work. */
#include "hash_unkeyed.h"
#include "texpaths.h"
#include "tool.h"
#include "ustring.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

const char tool_prog[] = "hash-bench";

static __attribute__((noinline)) uint64_t
unkeyed(const char *s, size_t len)
{
    return hash_unkeyed(s, len);
}

static __attribute__((noinline)) uint64_t
xxh3(const char *s, size_t len)
{
    return XXH3_64bits_withSeed(s, len, 0x243F6A8885A308D3u);
}

static __attribute__((noinline)) uint64_t
keyed(const char *s, size_t len)
{
    return ustr_hash_bytes(s, len);
}

/* ---- the run ---- */

typedef struct paths {
    char  **s;
    size_t *len, n, bytes;
} paths;

static paths
paths_make(size_t n)
{
    paths p = {calloc(n, sizeof(char *)), calloc(n, sizeof(size_t)), n, 0};
    if (!p.s || !p.len)
        tool_die("out of memory");
    for (size_t i = 0; i < n; i++) {
        char buf[256];
        p.len[i] = texpath_make(1, i, buf, sizeof buf);
        if (!(p.s[i] = strdup(buf)))
            tool_die("out of memory");
        p.bytes += p.len[i];
    }
    return p;
}

static double
round_secs(uint64_t (*hash)(const char *, size_t), const paths *p, uint64_t ops, uint64_t *sum)
{
    double t0 = tool_now();
    for (uint64_t r = 0; r < ops; r++)
        for (size_t i = 0; i < p->n; i++)
            *sum += hash(p->s[i], p->len[i]);
    return tool_now() - t0;
}

int
main(int argc, char **argv)
{
    static const struct option longs[] = {{"strings", required_argument, NULL, 'n'},
                                          {"ops", required_argument, NULL, 'o'},
                                          {"repeat", required_argument, NULL, 'r'},
                                          {NULL, 0, NULL, 0}};
    static const tool_cli      cli = {
             "usage: hash-bench [--strings N] [--ops M] [--repeat K]\n"
                  "Hashes N generated texture paths (default 1000) M times over (2000) with\n"
                  "ustr_hash_bytes, the former unkeyed hash and XXH3, alternating, K rounds\n"
                  "(7); prints the median ns per hash and the ratios.\n",
             longs, NULL};
    uint64_t n = 1000, ops = 2000, repeat = 7;
    for (int c; (c = tool_getopt(argc, argv, &cli)) != -1;) {
        if (c == 'n')
            n = tool_parse_u64(optarg, "--strings", 1000000);
        else if (c == 'o')
            ops = tool_parse_u64(optarg, "--ops", (uint64_t)1 << 32);
        else if (c == 'r')
            repeat = tool_parse_u64(optarg, "--repeat", 63);
    }
    if (optind != argc)
        tool_bad_usage("unexpected argument '%s'", argv[optind]);

    paths p = paths_make(n);
    enum { KEYED, UNKEYED, XXH3, N };
    static const char *const names[N] = {"ustr_hash_bytes (keyed)", "former unkeyed",
                                         "XXH3 seeded"};
    uint64_t (*const fns[N])(const char *, size_t) = {keyed, unkeyed, xxh3};
    double  *secs[N];
    uint64_t sum = 0;
    for (int h = 0; h < N; h++)
        if (!(secs[h] = calloc(repeat, sizeof(double))))
            tool_die("out of memory");
    for (uint64_t r = 0; r < repeat; r++)
        for (int h = 0; h < N; h++)
            secs[h][r] = round_secs(fns[h], &p, ops, &sum);
    printf("hash-bench: %zu paths, mean %.1f bytes, %" PRIu64 " rounds of %" PRIu64
           " passes (checksum %016" PRIx64 ")\n",
           p.n, (double)p.bytes / (double)p.n, repeat, ops, sum);
    double keyed_ns = 0;
    for (int h = 0; h < N; h++) {
        double ns = tool_median(secs[h], (int)repeat) * 1e9 / ((double)ops * (double)p.n);
        if (h == KEYED)
            keyed_ns = ns;
        printf("  %-26s %6.2f ns/hash  %5.2fx the keyed hash's time\n", names[h], ns,
               ns / keyed_ns);
    }
    return 0;
}
