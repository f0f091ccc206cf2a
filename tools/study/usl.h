/* usl: Gunther's Universal Scalability Law fitted to measured thread scaling,
 * for the timing study (tools/study).
 *
 * The law models the speedup on N threads as
 *
 *     X(N) = N / (1 + sigma (N - 1) + kappa N (N - 1))
 *
 * sigma >= 0 is contention (the serial share: alone, it caps X at 1 / sigma)
 * and kappa >= 0 is coherency (the cost of threads agreeing with each other:
 * it makes X peak and then fall). From timings T_i at N_i threads the
 * measured speedup is S_i = T(1) / T_i, and the law rearranges into a linear
 * model through the origin,
 *
 *     N / S - 1 = sigma (N - 1) + kappa N (N - 1),
 *
 * which usl_fit_points() solves by least squares under sigma, kappa >= 0.
 *
 *     usl_point pts[] = {{1, 8.02}, {2, 4.20}, {4, 2.31}, {8, 1.52}};
 *     usl_fit   f;
 *     if (usl_fit_points(pts, 4, &f) == USL_OK)
 *         printf("sigma %.4f kappa %.5f peak %.1f threads\n", f.sigma, f.kappa,
 *                f.peak_threads);
 *
 * Plain functions of their arguments: no state, safe on any thread. The
 * library is usl (tools/study/CMakeLists.txt); link m too. */
#ifndef RT_TOOLS_USL_H
#define RT_TOOLS_USL_H

#include <stdbool.h>

typedef struct usl_point {
    double threads; /* N >= 1; need not be a whole number */
    double secs;    /* the time at N threads, > 0; the same work at every N */
} usl_point;

typedef enum usl_result {
    USL_OK = 0,
    USL_ERR_NO_BASELINE, /* no point at 1 thread: nothing to divide by */
    USL_ERR_TOO_FEW,     /* no point above 1 thread (or no points at all) */
    USL_ERR_INVALID,     /* a point with threads < 1, secs <= 0 or a NaN or
                          * infinity; n < 0; a NULL pointer */
} usl_result;

typedef struct usl_fit {
    double sigma; /* contention, >= 0 */
    double kappa; /* coherency, >= 0; 0 when contention_only */
    /* True when the points hold only one thread count above 1: two
     * distinct counts cannot separate the two terms, so kappa was not
     * fitted but set to 0. */
    bool contention_only;
    /* Where X(N) is largest over N >= 1: sqrt((1 - sigma) / kappa) when
     * kappa > 0, but never below 1; 1 whenever sigma >= 1 (more threads
     * only slow the work down). 0: no peak, X keeps rising (kappa == 0 and
     * sigma < 1). Not rounded to a whole thread count. */
    double peak_threads;
    /* X(peak_threads); with no peak, the ceiling X approaches instead:
     * 1 / sigma, or INFINITY when sigma == 0 too (linear scaling). */
    double peak_speedup;
    /* R^2 of the fitted X(N_i) against the measured S_i over every point
     * (baseline ones included): 1 - sum (S - X)^2 / sum (S - mean S)^2. On
     * the speedups, not the linearised form, so it reads as "how much of
     * the spread in speedup the law explains". 1 when every S_i is equal
     * and fitted exactly, 0 when they are equal and not. Can be negative:
     * the fit minimises error in the linearised form, not in S. */
    double r2;
    int    npoints; /* n: the points the fit used, repeats included */
} usl_fit;

/* Fits sigma and kappa to n points, in any order. T(1) is the mean time of
 * the points at exactly 1 thread (repeats are averaged there, so that each
 * one counts the same); repeats at other thread counts are each a point of
 * their own. A coefficient the unconstrained fit makes negative is fixed at
 * 0 and the other one refitted (the least-squares fit under both >= 0).
 *
 * On USL_OK *out holds the fit; on any error *out is zeroed. Checks, in
 * this order: USL_ERR_INVALID, then USL_ERR_TOO_FEW for n == 0, then
 * USL_ERR_NO_BASELINE, then USL_ERR_TOO_FEW. */
usl_result usl_fit_points(const usl_point *p, int n, usl_fit *out);

/* X(threads) for the fitted sigma and kappa: the formula above, so 1 at
 * 1 thread. Any threads >= 1 (extrapolating past the measured counts is the
 * point of the model). */
double usl_speedup(const usl_fit *f, double threads);

/* A short lower-case description of r, for messages ("no 1-thread
 * baseline"); never NULL, also for values outside the enum. */
const char *usl_result_str(usl_result r);

#endif
