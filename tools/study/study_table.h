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
#include <stddef.h>
#include <stdio.h>

/* Medians: tool_median() (tools/common/tool.h), the one every tool uses. */

/* One row of a mode's table: N threads, their median time, and what the
 * 1-thread median t1 makes of it. t1 <= 0 (no 1-thread run): light speed
 * and expected are 0. */
typedef struct study_row {
    unsigned threads;
    double   secs;       /* median */
    double   speedup;    /* t1 / secs */
    double   lightspeed; /* (t1 / N) / secs, 1 = linear */
    double   expected;   /* t1 / N */
    double   cpu_share;  /* the workers' time on a CPU over their busy time, median; 0:
                          * not measured */
} study_row;

study_row study_row_make(unsigned threads, double secs, double t1);

/* What interning costs at one thread count: bypass minus early-out, and
 * that as a share of the full render (0 when there is no full time). */
typedef struct study_intern {
    double secs;
    double share;     /* 0 when there is none: see has_share */
    bool   has_share; /* a full render was measured (study_intern_rounds()) */
} study_intern;

study_intern study_intern_make(double bypass, double early_out, double full);

/* ---- reading at a glance ---- */

/* The unit a table's times print in: seconds when its largest time is 1 s
 * or more, milliseconds from 1 ms, microseconds below, so that no figure
 * prints as 0.000. */
typedef struct study_unit {
    const char *name;     /* "s", "ms", "µs" (UTF-8) */
    double      per_sec;  /* 1, 1e3, 1e6 */
    int         decimals; /* 3, 2, 1 */
} study_unit;

study_unit study_unit_for(double largest_secs);

/* secs in unit u with its name: "33.04 ms". */
void study_secs_format(char *buf, size_t size, double secs, study_unit u);

/* Why a figure should not be trusted as it is (flags, or-ed). */
#define STUDY_NOISY_SPREAD 0.10  /* a row's max - min over its median */
#define STUDY_SHORT_SECS   0.010 /* a render this short is mostly timer and start-up */
#define STUDY_MIN_CPU      0.90  /* workers on a CPU less than this share of their time waited */
enum {
    STUDY_NOISE_SPREAD = 1,   /* max - min > STUDY_NOISY_SPREAD x the median */
    STUDY_NOISE_SHORT = 2,    /* the median under STUDY_SHORT_SECS */
    STUDY_NOISE_NEGATIVE = 4, /* an interning cost below zero: noise larger than the cost */
    STUDY_NOISE_WAITING = 8,  /* the workers were on a CPU less than STUDY_MIN_CPU of the time */
};

/* The noise flags of a row: its median and its runs' min and max, and the
 * share of time its workers were on a CPU (0: not measured). */
unsigned study_row_noise(double median, double lo, double hi, double cpu_share);

/* The flags as a note and what to do about them: "! spread 25% of the
 * median: more --repeat; under 10 ms: a larger -r; on a CPU 56% of the
 * time: the threads waited"; "" for none. */
void study_noise_note(char *buf, size_t size, unsigned noise, double median, double lo, double hi,
                      double cpu_share);

/* The column heads of study_row_print()'s rows. */
void study_row_header(FILE *f, bool range);

/* Prints a row under study_row_header(): threads (a '*' after N when N is
 * above `marked`, the machine's hardware threads: the OS must preempt),
 * time, speed-up, % of light speed and the expected time (past one thread),
 * the workers' share of time on a CPU, and, when range, the runs' [min ..
 * max]; then the noise note. */
void study_row_print(FILE *f, const study_row *r, unsigned marked, study_unit u, bool range,
                     double lo, double hi, unsigned noise);

/* What interning costs, from rounds: round k's bypass, early-out and full
 * times (n rounds, n >= 1; full NULL, or 0 in a round: not measured).
 * secs: the median over the rounds of bypass - early-out; share: the
 * median of (bypass - early-out) / full over the rounds that have a full
 * time (has_share false, share 0, when none has: an interrupted study). Runs of one round ran close
 * in time, so a slow spell of the machine moves both sides of a difference alike: render-bench
 * computes its share the same way. */
study_intern study_intern_rounds(const double *bypass, const double *early_out, const double *full,
                                 int n);

/* The index of the smallest positive of secs[0..n), -1 if none: the best
 * lock of a verdict. */
int study_fastest(const double *secs, int n);

#endif
