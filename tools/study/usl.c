/* The Universal Scalability Law fit (usl.h). */
#include "usl.h"

#include <math.h>
#include <string.h>

/* The linearised model y = sigma x1 + kappa x2 at one point, with
 * x1 = N - 1, x2 = N (N - 1), y = N / S - 1 = N T / T(1) - 1. */
static void
lin_point(const usl_point *p, double t1, double *x1, double *x2, double *y)
{
    double n = p->threads;
    *x1 = n - 1;
    *x2 = n * (n - 1);
    *y = n * p->secs / t1 - 1;
}

/* The residual sum of squares of the linearised model at (s, k). Summed
 * over the points rather than expanded from the normal equations' sums,
 * whose terms cancel each other to rounding error near a good fit. */
static double
lin_sse(const usl_point *p, int n, double t1, double s, double k)
{
    double sse = 0;
    for (int i = 0; i < n; i++) {
        double x1, x2, y;
        lin_point(&p[i], t1, &x1, &x2, &y);
        double r = y - s * x1 - k * x2;
        sse += r * r;
    }
    return sse;
}

static bool
point_valid(const usl_point *p)
{
    /* isfinite() first: a NaN fails every comparison, which would let it
     * through a test written as "reject if below". */
    return isfinite(p->threads) && isfinite(p->secs) && p->threads >= 1 && p->secs > 0;
}

/* sigma and kappa by least squares under sigma, kappa >= 0. For two
 * coefficients the constrained optimum is the unconstrained optimum of one
 * of four faces (both free, kappa = 0, sigma = 0, both 0), so when the free
 * solution is infeasible the best feasible face solution is the answer. */
static void
fit_coefficients(const usl_point *p, int n, double t1, bool contention_only, double *sigma,
                 double *kappa)
{
    double s11 = 0, s12 = 0, s22 = 0, s1y = 0, s2y = 0;
    for (int i = 0; i < n; i++) {
        double x1, x2, y;
        lin_point(&p[i], t1, &x1, &x2, &y);
        s11 += x1 * x1, s12 += x1 * x2, s22 += x2 * x2;
        s1y += x1 * y, s2y += x2 * y;
    }
    /* s11 > 0: the caller saw a point above 1 thread. */
    double cand[2][2] = {{fmax(0, s1y / s11), 0}, {0, 0}}; /* (sigma, kappa) */
    int    ncand = 1;
    if (!contention_only) {
        /* Two distinct counts above 1 make x1 and x2 independent (x2 / x1
         * = N differs), so det > 0 but for rounding. */
        double det = s11 * s22 - s12 * s12;
        if (det > 0) {
            double s = (s1y * s22 - s2y * s12) / det;
            double k = (s2y * s11 - s1y * s12) / det;
            if (s >= 0 && k >= 0) {
                *sigma = s, *kappa = k;
                return;
            }
        }
        /* The sigma = 0 face; fmax() also covers the both-0 corner. */
        cand[1][0] = 0, cand[1][1] = fmax(0, s2y / s22), ncand = 2;
    }
    int    best = 0;
    double best_sse = lin_sse(p, n, t1, cand[0][0], cand[0][1]);
    for (int c = 1; c < ncand; c++) {
        double sse = lin_sse(p, n, t1, cand[c][0], cand[c][1]);
        if (sse < best_sse)
            best = c, best_sse = sse;
    }
    *sigma = cand[best][0], *kappa = cand[best][1];
}

usl_result
usl_fit_points(const usl_point *p, int n, usl_fit *out)
{
    if (!out)
        return USL_ERR_INVALID;
    memset(out, 0, sizeof *out);
    if (n < 0 || (n > 0 && !p))
        return USL_ERR_INVALID;
    for (int i = 0; i < n; i++)
        if (!point_valid(&p[i]))
            return USL_ERR_INVALID;
    if (n == 0)
        return USL_ERR_TOO_FEW;

    double t1 = 0, first_above = 0;
    int    nbase = 0;
    bool   one_count = true; /* every point above 1 thread at first_above */
    for (int i = 0; i < n; i++) {
        if (p[i].threads == 1) {
            t1 += p[i].secs, nbase++;
        } else if (first_above == 0) {
            first_above = p[i].threads;
        } else if (p[i].threads != first_above) {
            one_count = false;
        }
    }
    if (nbase == 0)
        return USL_ERR_NO_BASELINE;
    if (first_above == 0)
        return USL_ERR_TOO_FEW;
    t1 /= nbase;

    usl_fit f = {.contention_only = one_count, .npoints = n};
    fit_coefficients(p, n, t1, one_count, &f.sigma, &f.kappa);

    if (f.sigma >= 1) {
        /* dX/dN has the sign of 1 - sigma - kappa N^2: flat or falling from
         * X(1) = 1 everywhere. */
        f.peak_threads = 1, f.peak_speedup = 1;
    } else if (f.kappa > 0) {
        f.peak_threads = fmax(1, sqrt((1 - f.sigma) / f.kappa));
        f.peak_speedup = usl_speedup(&f, f.peak_threads);
    } else {
        f.peak_speedup = f.sigma > 0 ? 1 / f.sigma : INFINITY;
    }

    double mean = 0, ss_res = 0, ss_tot = 0;
    for (int i = 0; i < n; i++)
        mean += t1 / p[i].secs;
    mean /= n;
    for (int i = 0; i < n; i++) {
        double s = t1 / p[i].secs, r = s - usl_speedup(&f, p[i].threads);
        ss_res += r * r;
        ss_tot += (s - mean) * (s - mean);
    }
    f.r2 = ss_tot > 0 ? 1 - ss_res / ss_tot : ss_res == 0 ? 1 : 0;

    *out = f;
    return USL_OK;
}

double
usl_speedup(const usl_fit *f, double threads)
{
    double n = threads;
    return n / (1 + f->sigma * (n - 1) + f->kappa * n * (n - 1));
}

const char *
usl_result_str(usl_result r)
{
    switch (r) {
    case USL_OK:
        return "ok";
    case USL_ERR_NO_BASELINE:
        return "no 1-thread baseline";
    case USL_ERR_TOO_FEW:
        return "no point above 1 thread";
    case USL_ERR_INVALID:
        return "invalid point (threads < 1, secs <= 0, or not finite)";
    }
    return "unknown usl_result";
}
