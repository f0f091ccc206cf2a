/* The shared helpers of the benchmarks in tools/ (bench_util.h). */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, strtok_r, strdup */

#include "bench_util.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

double
bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int
cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double
bench_median(double *secs, int n)
{
    qsort(secs, (size_t)n, sizeof secs[0], cmp_double);
    return secs[n / 2];
}

static void vfail(int status, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0), noreturn));
static void
vfail(int status, const char *fmt, va_list ap)
{
    fprintf(stderr, "%s: ", bench_prog);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    exit(status);
}

void
bench_die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfail(1, fmt, ap);
}

void
bench_bad_usage(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfail(2, fmt, ap);
}

uint64_t
bench_parse_u64(const char *arg, const char *opt, uint64_t max)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(arg, &end, 10);
    if (errno || *end || arg[0] == '-' || v < 1 || v > max)
        bench_bad_usage("bad %s '%s' (1..%" PRIu64 ")", opt, arg, max);
    return v;
}

const char *
bench_list_first(bench_list *l, const char *arg)
{
    l->copy = strdup(arg);
    l->save = NULL;
    if (!l->copy)
        bench_die("out of memory");
    return strtok_r(l->copy, ",", &l->save);
}

const char *
bench_list_next(bench_list *l)
{
    return strtok_r(NULL, ",", &l->save);
}

void
bench_list_free(bench_list *l)
{
    free(l->copy);
    l->copy = NULL;
}
