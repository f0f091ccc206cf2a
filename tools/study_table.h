/* The arithmetic of a timing study's tables, apart from any rendering, so
 * it can be checked on made-up figures: the median time of each
 * configuration, its speed-up and "percent of light speed" against the
 * 1-thread time, the linear expectation, and what interning costs
 * (bypass minus early-out) as seconds and as a share of the full render.
 *
 *   -t1   4.440 s
 *   -t2   2.300 s   97%  (expected 2.220 s)
 *
 * light speed(N) = (t1 / N) / tN; expected(N) = t1 / N. */
#ifndef STUDY_TABLE_H
#define STUDY_TABLE_H

#include <stdbool.h>
#include <stdio.h>

/* The median of n >= 1 values (the mean of the middle two when n is even);
 * values is not changed. */
double study_median(const double *values, int n);

/* One row of a mode's table: N threads, their median time, and what the
 * 1-thread median t1 makes of it. t1 <= 0 (no 1-thread run): light speed
 * and expected are 0. */
typedef struct study_row {
    unsigned threads;
    double   secs;       /* median */
    double   speedup;    /* t1 / secs */
    double   lightspeed; /* (t1 / N) / secs, 1 = linear */
    double   expected;   /* t1 / N */
} study_row;

study_row study_row_make(unsigned threads, double secs, double t1);

/* What interning costs at one thread count: bypass minus early-out, and
 * that as a share of the full render (0 when there is no full time). */
typedef struct study_intern {
    double secs;
    double share;
} study_intern;

study_intern study_intern_make(double bypass, double early_out, double full);

/* Prints a row as the classic study line: "-tN   S s" then, past one
 * thread, "  P%  (expected E s)"; a '*' after N when N exceeds the machine's
 * physical cores. */
void study_row_print(FILE *f, const study_row *r, unsigned cores);

#endif
