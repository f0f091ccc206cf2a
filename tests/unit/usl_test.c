/* tools/study/usl.h: the Universal Scalability Law fit. Most cases time a made-up
 * workload with the law itself, T(N) = T(1) / X(N), so the fit has known
 * answers: exact recovery of sigma and kappa and the peak, linear scaling,
 * contention alone, two thread counts only, the clamps at 0, bad input, and
 * +-2% noise (from a fixed xorshift, so every run is the same). */
#include "usl.h"

#include "check.h"

#include <math.h>
#include <stdint.h>

#define T1 8.0 /* seconds on one thread */

static const double counts[] = {1, 2, 4, 8, 16, 32};
enum { NCOUNTS = sizeof counts / sizeof counts[0], MAX_POINTS = 64 };

static double
law(double sigma, double kappa, double n)
{
    return n / (1 + sigma * (n - 1) + kappa * n * (n - 1));
}

/* One point per count in counts[0..ncounts), timed by the law. */
static int
timed(usl_point *p, int ncounts, double sigma, double kappa)
{
    for (int i = 0; i < ncounts; i++)
        p[i] = (usl_point){counts[i], T1 / law(sigma, kappa, counts[i])};
    return ncounts;
}

/* The constrained fits' other coefficient, as the header defines it: least
 * squares of y = N T / T(1) - 1 on x = N - 1 (sigma alone) or x = N (N - 1)
 * (kappa alone), through the origin. */
static double
one_coefficient(const usl_point *p, int n, bool kappa)
{
    double sxx = 0, sxy = 0;
    for (int i = 0; i < n; i++) {
        double N = p[i].threads, x = kappa ? N * (N - 1) : N - 1, y = N * p[i].secs / T1 - 1;
        sxx += x * x, sxy += x * y;
    }
    return sxy / sxx;
}

/* sigma 0.05, kappa 0.002 at 1..32 threads: both back to 1e-6, and the peak
 * where the formula puts it. */
static void
case_exact(const char *arg)
{
    (void)arg;
    usl_point p[NCOUNTS];
    usl_fit   f;
    REQUIRE(usl_fit_points(p, timed(p, NCOUNTS, 0.05, 0.002), &f) == USL_OK);
    CHECK_REL(f.sigma, 0.05, 1e-6);
    CHECK_REL(f.kappa, 0.002, 1e-6);
    CHECK(!f.contention_only);
    CHECK_EQ_INT(f.npoints, NCOUNTS);
    double peak = sqrt((1 - 0.05) / 0.002);
    CHECK_REL(f.peak_threads, peak, 1e-6);
    CHECK_REL(f.peak_speedup, law(0.05, 0.002, peak), 1e-6);
    CHECK_REL(f.r2, 1, 1e-9);
    /* Order does not matter. */
    usl_point r[NCOUNTS];
    for (int i = 0; i < NCOUNTS; i++)
        r[i] = p[NCOUNTS - 1 - i];
    usl_fit g;
    REQUIRE(usl_fit_points(r, NCOUNTS, &g) == USL_OK);
    CHECK_REL(g.sigma, f.sigma, 1e-12);
    CHECK_REL(g.kappa, f.kappa, 1e-12);
}

/* T / N: nothing to fit, no peak, and the ceiling is infinite. */
static void
case_linear(const char *arg)
{
    (void)arg;
    usl_point p[NCOUNTS];
    usl_fit   f;
    REQUIRE(usl_fit_points(p, timed(p, NCOUNTS, 0, 0), &f) == USL_OK);
    CHECK_ABS(f.sigma, 0, 1e-12);
    CHECK_ABS(f.kappa, 0, 1e-12);
    CHECK(f.peak_threads == 0 || f.peak_threads > 1e5); /* none, or far out */
    CHECK_REL(f.r2, 1, 1e-9);
    CHECK_REL(usl_speedup(&f, 32), 32, 1e-9);
}

/* kappa 0: sigma back, kappa 0 (at most rounding), and the ceiling 1/sigma. */
static void
case_contention(const char *arg)
{
    (void)arg;
    usl_point p[NCOUNTS];
    usl_fit   f;
    REQUIRE(usl_fit_points(p, timed(p, NCOUNTS, 0.1, 0), &f) == USL_OK);
    CHECK_REL(f.sigma, 0.1, 1e-9);
    CHECK_ABS(f.kappa, 0, 1e-12);
    CHECK(!f.contention_only);
    if (f.kappa == 0) {
        CHECK(f.peak_threads == 0);
        CHECK_REL(f.peak_speedup, 10, 1e-9);
    } else {
        CHECK(f.peak_threads > 1e5);
    }
    CHECK_REL(f.r2, 1, 1e-9);
}

/* One count above 1: sigma alone, from that point (the mean of its
 * repeats), kappa 0 and flagged; superlinear there clamps sigma to 0. */
static void
case_two_points(const char *arg)
{
    (void)arg;
    usl_fit f;
    REQUIRE(usl_fit_points((usl_point[]){{1, 10}, {2, 6}}, 2, &f) == USL_OK);
    CHECK(f.contention_only);
    CHECK_REL(f.sigma, 2 * 6 / 10.0 - 1, 1e-12);
    CHECK(f.kappa == 0);
    CHECK(f.peak_threads == 0);
    CHECK_REL(f.peak_speedup, 1 / f.sigma, 1e-12);
    CHECK_REL(f.r2, 1, 1e-12);

    REQUIRE(usl_fit_points((usl_point[]){{2, 6}, {1, 10}, {2, 6.2}}, 3, &f) == USL_OK);
    CHECK(f.contention_only);
    CHECK_EQ_INT(f.npoints, 3);
    CHECK_REL(f.sigma, (0.2 + 0.24) / 2, 1e-12);

    /* Two baselines are averaged: T(1) = 10. */
    REQUIRE(usl_fit_points((usl_point[]){{1, 9}, {1, 11}, {2, 6}}, 3, &f) == USL_OK);
    CHECK_REL(f.sigma, 0.2, 1e-12);

    REQUIRE(usl_fit_points((usl_point[]){{1, 10}, {2, 4}}, 2, &f) == USL_OK);
    CHECK(f.contention_only);
    CHECK(f.sigma == 0 && f.kappa == 0);
    CHECK(f.peak_threads == 0 && isinf(f.peak_speedup));
}

/* A law with negative kappa (speedup curving up at high N) fits kappa 0
 * and refits sigma alone; negative sigma (superlinear at low N) the other
 * way round; sigma > 1 peaks at 1 thread. */
static void
case_clamp(const char *arg)
{
    (void)arg;
    usl_point p[NCOUNTS];
    usl_fit   f;
    int       n = timed(p, 4, 0.1, -0.001); /* 1..8 threads: X stays positive */
    REQUIRE(usl_fit_points(p, n, &f) == USL_OK);
    CHECK(f.kappa == 0);
    CHECK(!f.contention_only);
    CHECK_REL(f.sigma, one_coefficient(p, n, false), 1e-9);
    CHECK_REL(f.sigma, 0.1 - 0.001 * 430 / 59, 1e-9); /* by hand: sums of x1 x2, x1^2 */
    CHECK(f.r2 < 1);

    n = timed(p, NCOUNTS, -0.02, 0.001);
    REQUIRE(usl_fit_points(p, n, &f) == USL_OK);
    CHECK(f.sigma == 0);
    CHECK_REL(f.kappa, one_coefficient(p, n, true), 1e-9);
    CHECK(f.kappa > 0);
    CHECK_REL(f.peak_threads, sqrt(1 / f.kappa), 1e-12);

    n = timed(p, NCOUNTS, 1.5, 0.01);
    REQUIRE(usl_fit_points(p, n, &f) == USL_OK);
    CHECK_REL(f.sigma, 1.5, 1e-9);
    CHECK_REL(f.kappa, 0.01, 1e-9);
    CHECK(f.peak_threads == 1 && f.peak_speedup == 1);
}

static void
case_errors(const char *arg)
{
    (void)arg;
    usl_fit f;
#define CHECK_FIT(pts, n, want)                                                                    \
    do {                                                                                           \
        f.npoints = -1;                                                                            \
        CHECK_EQ_INT(usl_fit_points(pts, n, &f), want);                                            \
        CHECK_EQ_INT(f.npoints, 0); /* zeroed */                                                   \
    } while (0)
    CHECK_FIT(((usl_point[]){{2, 5}, {4, 3}}), 2, USL_ERR_NO_BASELINE);
    CHECK_FIT(((usl_point[]){{1, 5}}), 1, USL_ERR_TOO_FEW);
    CHECK_FIT(((usl_point[]){{1, 5}, {1, 5.1}}), 2, USL_ERR_TOO_FEW);
    CHECK_FIT(NULL, 0, USL_ERR_TOO_FEW);
    CHECK_FIT(((usl_point[]){{1, 5}, {2, -3}}), 2, USL_ERR_INVALID);
    CHECK_FIT(((usl_point[]){{1, 5}, {2, 0}}), 2, USL_ERR_INVALID);
    CHECK_FIT(((usl_point[]){{1, NAN}, {2, 3}}), 2, USL_ERR_INVALID);
    CHECK_FIT(((usl_point[]){{1, 5}, {NAN, 3}}), 2, USL_ERR_INVALID);
    CHECK_FIT(((usl_point[]){{1, 5}, {2, INFINITY}}), 2, USL_ERR_INVALID);
    CHECK_FIT(((usl_point[]){{1, 5}, {0, 3}}), 2, USL_ERR_INVALID);
    CHECK_FIT(((usl_point[]){{1, 5}, {-2, 3}}), 2, USL_ERR_INVALID);
    CHECK_FIT(((usl_point[]){{1, 5}, {0.5, 3}}), 2, USL_ERR_INVALID);
    /* Invalid wins over a missing baseline: the bad point is the news. */
    CHECK_FIT(((usl_point[]){{2, 5}, {4, -1}}), 2, USL_ERR_INVALID);
    CHECK_FIT(NULL, 2, USL_ERR_INVALID);
    CHECK_FIT(((usl_point[]){{1, 5}, {2, 3}}), -1, USL_ERR_INVALID);
#undef CHECK_FIT
    CHECK_EQ_INT(usl_fit_points((usl_point[]){{1, 5}, {2, 3}}, 2, NULL), USL_ERR_INVALID);

    usl_result all[] = {USL_OK, USL_ERR_NO_BASELINE, USL_ERR_TOO_FEW, USL_ERR_INVALID,
                        (usl_result)99};
    for (int i = 0; i < 5; i++)
        CHECK(usl_result_str(all[i]) && usl_result_str(all[i])[0]);
    CHECK_EQ_STR(usl_result_str(USL_ERR_NO_BASELINE), "no 1-thread baseline");
}

/* Three repeats per count, each time off by up to +-2%: still close. */
static void
case_noisy(const char *arg)
{
    (void)arg;
    usl_point p[MAX_POINTS];
    int       n = 0;
    uint64_t  s = 0x9E3779B97F4A7C15ULL;
    for (int rep = 0; rep < 3; rep++) {
        for (int i = 0; i < NCOUNTS; i++) {
            s ^= s << 13, s ^= s >> 7, s ^= s << 17;
            double u = (double)(s >> 11) * 0x1p-53; /* [0, 1) */
            double t = T1 / law(0.05, 0.002, counts[i]) * (1 + 0.02 * (2 * u - 1));
            p[n++] = (usl_point){counts[i], t};
        }
    }
    usl_fit f;
    REQUIRE(usl_fit_points(p, n, &f) == USL_OK);
    CHECK_EQ_INT(f.npoints, 18);
    CHECK_ABS(f.sigma, 0.05, 0.01);
    CHECK_REL(f.kappa, 0.002, 0.1);
    CHECK_REL(f.peak_threads, sqrt((1 - 0.05) / 0.002), 0.1);
    CHECK(f.r2 > 0.99);
}

/* usl_speedup() is the formula, 1 at one thread, N with nothing fitted. */
static void
case_speedup(const char *arg)
{
    (void)arg;
    usl_fit      f = {.sigma = 0.1, .kappa = 0.01};
    const double ns[] = {1, 1.5, 2, 3, 10, 64, 1000};
    for (int i = 0; i < (int)(sizeof ns / sizeof ns[0]); i++)
        CHECK_REL(usl_speedup(&f, ns[i]),
                  ns[i] / (1 + 0.1 * (ns[i] - 1) + 0.01 * ns[i] * (ns[i] - 1)), 1e-15);
    CHECK(usl_speedup(&f, 1) == 1);
    usl_fit zero = {0};
    CHECK(usl_speedup(&zero, 48) == 48);
}

static const rt_test_case cases[] = {
    {"exact", case_exact},           {"linear", case_linear},   {"contention", case_contention},
    {"two_points", case_two_points}, {"clamp", case_clamp},     {"errors", case_errors},
    {"noisy", case_noisy},           {"speedup", case_speedup}, {NULL, NULL},
};

int
main(int argc, char **argv)
{
    return rt_test_main(cases, argc, argv);
}
