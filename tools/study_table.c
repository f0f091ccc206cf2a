/* Timing-study arithmetic (see study_table.h). */
#include "study_table.h"

#include <stdlib.h>
#include <string.h>

static int
cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double
study_median(const double *values, int n)
{
    if (n <= 0)
        return 0;
    double  small[64];
    double *v = n <= 64 ? small : malloc((size_t)n * sizeof *v);
    if (!v)
        return 0;
    memcpy(v, values, (size_t)n * sizeof *v);
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    double m = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
    if (v != small)
        free(v);
    return m;
}

study_row
study_row_make(unsigned threads, double secs, double t1)
{
    study_row r = {.threads = threads, .secs = secs};
    if (t1 > 0 && secs > 0 && threads > 0) {
        r.speedup = t1 / secs;
        r.expected = t1 / threads;
        r.lightspeed = r.expected / secs;
    }
    return r;
}

study_intern
study_intern_make(double bypass, double early_out, double full)
{
    study_intern c = {.secs = bypass - early_out};
    c.share = full > 0 ? c.secs / full : 0;
    return c;
}

void
study_row_print(FILE *f, const study_row *r, unsigned cores)
{
    char n[16];
    snprintf(n, sizeof n, "-t%u%s", r->threads, cores && r->threads > cores ? "*" : "");
    fprintf(f, "  %-6s %9.3f s", n, r->secs);
    if (r->threads > 1 && r->expected > 0)
        fprintf(f, "  %4.0f%%  (expected %.3f s)", 100 * r->lightspeed, r->expected);
    fputc('\n', f);
}
