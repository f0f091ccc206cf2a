/* What the benchmarks in tools/ share: a monotonic clock, the workload
 * contract's random generator (DESIGN.md), the median of timed runs, option
 * values and lists, and the two ways a tool fails with its exit status.
 *
 * The library is bench_util (tools/CMakeLists.txt). The generator below is
 * inline and needs no library; the C++ benches (oiio_bench_util.h) use it
 * too, so that both sides of a comparison draw the same numbers. */
#ifndef RT_TOOLS_BENCH_UTIL_H
#define RT_TOOLS_BENCH_UTIL_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The program's name, the prefix of every message below. Each program that
 * links bench_util defines it once, for instance
 *
 *     const char bench_prog[] = "ustring-bench";
 *
 * (a program that does not fails to link). */
extern const char bench_prog[];

/* ---- time ---- */

/* Seconds on CLOCK_MONOTONIC; only differences mean anything. Safe on any
 * thread. */
double bench_now(void);

/* The median of n >= 1 timings: sorts secs[0..n) in place and returns
 * secs[n / 2] (the upper one of the middle two when n is even). */
double bench_median(double *secs, int n);

/* ---- the contract's generator ---- */

/* Thread t's first state: (t + 1) * 0x9E3779B97F4A7C15 (never 0). */
static inline uint64_t
bench_seed(unsigned t)
{
    return (t + 1) * 0x9E3779B97F4A7C15ULL;
}

/* The next draw of xorshift64*. *x is one thread's own state, from
 * bench_seed(); it never becomes 0. */
static inline uint64_t
bench_xorshift64star(uint64_t *x)
{
    *x ^= *x >> 12;
    *x ^= *x << 25;
    *x ^= *x >> 27;
    return *x * 0x2545F4914F6CDD1DULL;
}

/* A draw as a uniform number in [0, 1): its top 53 bits. */
static inline double
bench_unit(uint64_t draw)
{
    return (double)(draw >> 11) * 0x1p-53;
}

/* ---- failing ---- */

/* A runtime failure: prints "PROG: " and the message on stderr, one line,
 * and exits with status 1. Does not return. */
void bench_die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* A bad command line: as bench_die(), but exit status 2. */
void bench_bad_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* ---- options ---- */

/* The value of option `opt` ("--ops"): a whole decimal number in 1..max.
 * Anything else (a minus sign, junk after the digits, a number too large
 * for 64 bits) is bench_bad_usage("bad OPT 'ARG' (1..MAX)"). */
uint64_t bench_parse_u64(const char *arg, const char *opt, uint64_t max);

/* The items of a comma-separated list, in order; empty items are skipped:
 *
 *     bench_list l;
 *     for (const char *it = bench_list_first(&l, arg); it; it = bench_list_next(&l))
 *         use(it);
 *     bench_list_free(&l);
 *
 * An item stays valid until bench_list_free(); the list owns a copy of arg,
 * so arg itself is not changed. Out of memory: bench_die(). */
typedef struct bench_list {
    char *copy; /* of arg, cut at the commas */
    char *save; /* strtok_r()'s place in it */
} bench_list;

const char *bench_list_first(bench_list *l, const char *arg); /* NULL: no items */
const char *bench_list_next(bench_list *l);                   /* NULL: no more */
void        bench_list_free(bench_list *l);

#ifdef __cplusplus
}
#endif

#endif
