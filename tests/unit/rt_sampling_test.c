/* renderer/include/rt_sampler.h and renderer/include/rt_bsdf.h: the path tracer's sample
 * sequences and its material.
 *
 * The sampler against the definition of a (0,2)-sequence: every aligned
 * block of 2^m samples of a pair of dimensions has exactly one point in
 * each elementary interval of area 2^-m; and against its contract:
 * deterministic in (seed, pixel, index), values in [0, 1), pixels and pairs
 * decorrelated.
 *
 * The BSDF by Monte Carlo with a fixed xorshift generator (so every run
 * draws the same numbers): white and grey furnaces, energy conservation of
 * coloured materials, agreement of sample() with eval(), the pdf against
 * the density sample() actually draws from, reciprocity of the specular
 * layers, and the horizon. */
#include "check.h"
#include "rt_bsdf.h"
#include "rt_sampler.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

/* CHECK(cond) with a printf-style note of the inputs that broke it. */
#define CHECKF(cond, fmt, ...)                                                                     \
    do {                                                                                           \
        if (!(cond))                                                                               \
            RT_CHECK_FAIL_("CHECK(%s) failed: " fmt, #cond, __VA_ARGS__);                          \
    } while (0)

#define PI_D 3.14159265358979323846

/* ---- a fixed random stream (xorshift64, Marsaglia's 13/7/17) ---- */

static float
rnd(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return (float)(*s >> 40) * 0x1p-24f; /* [0, 1) */
}

/* ===================================================================== */
/* Sampler                                                               */
/* ===================================================================== */

/* Pair `pair` of sample `index` of pixel (px, py). */
static void
pair_at(uint64_t seed, uint32_t px, uint32_t py, uint32_t index, uint32_t pair, float u[2])
{
    rt_sampler s;
    rt_sampler_start(&s, seed, px, py, index);
    for (uint32_t p = 0; p <= pair; p++)
        rt_sampler_2d(&s, u);
}

static bool
same_pair(const float a[2], const float b[2])
{
    return a[0] == b[0] && a[1] == b[1];
}

static const uint64_t seeds[] = {0, 1, 0x123456789abcdefULL, UINT64_MAX};
#define NSEEDS (sizeof seeds / sizeof seeds[0])

/* The same (seed, pixel, index) gives the same values, whatever is drawn in
 * between; a different seed, pixel or index gives a different first pair. */
static void
case_determinism(const char *arg)
{
    (void)arg;
    static const uint32_t px[] = {0, 1, 17, 1919, UINT32_MAX};
    static const uint32_t idx[] = {0, 1, 15, 16, 1000, UINT32_MAX};
    for (size_t k = 0; k < NSEEDS; k++) {
        for (size_t i = 0; i < sizeof px / sizeof px[0]; i++) {
            for (size_t n = 0; n < sizeof idx / sizeof idx[0]; n++) {
                uint64_t   seed = seeds[k];
                uint32_t   x = px[i], y = px[(i + 2) % 5], index = idx[n];
                rt_sampler a, b, other;
                rt_sampler_start(&a, seed, x, y, index);
                float first[64][2];
                for (int d = 0; d < 64; d++) {
                    if (d % 3 == 2)
                        first[d][0] = rt_sampler_1d(&a), first[d][1] = 0;
                    else
                        rt_sampler_2d(&a, first[d]);
                }
                /* Another pixel drawn in between changes nothing. */
                rt_sampler_start(&other, seed + 1, x + 1, y, index + 1);
                for (int d = 0; d < 10; d++)
                    rt_sampler_1d(&other);
                rt_sampler_start(&b, seed, x, y, index);
                for (int d = 0; d < 64; d++) {
                    float u[2] = {0, 0};
                    if (d % 3 == 2)
                        u[0] = rt_sampler_1d(&b);
                    else
                        rt_sampler_2d(&b, u);
                    CHECKF(same_pair(u, first[d]),
                           "seed %llx pixel (%u, %u) index %u dim %d: (%.9g %.9g) then (%.9g %.9g)",
                           (unsigned long long)seed, x, y, index, d, first[d][0], first[d][1], u[0],
                           u[1]);
                }

                /* Any one input changed: a different first pair. */
                float u0[2], u[2];
                pair_at(seed, x, y, index, 0, u0);
                struct {
                    const char *what;
                    uint64_t    seed;
                    uint32_t    x, y, index;
                } changed[] = {
                    {"seed + 1", seed + 1, x, y, index},
                    {"seed high bits", seed ^ (1ULL << 40), x, y, index},
                    {"px + 1", seed, x + 1, y, index},
                    {"py + 1", seed, x, y + 1, index},
                    {"px, py swapped", seed, y, x, index},
                    {"index + 1", seed, x, y, index + 1},
                    {"index + 2^20", seed, x, y, index + (1U << 20)},
                };
                for (size_t c = 0; c < sizeof changed / sizeof changed[0]; c++) {
                    if (changed[c].x == x && changed[c].y == y && changed[c].seed == seed &&
                        changed[c].index == index)
                        continue; /* px == py: swapping changes nothing */
                    pair_at(changed[c].seed, changed[c].x, changed[c].y, changed[c].index, 0, u);
                    CHECKF(!same_pair(u, u0), "%s: seed %llx pixel (%u, %u) index %u: (%.9g %.9g)",
                           changed[c].what, (unsigned long long)seed, x, y, index, u[0], u[1]);
                }
            }
        }
    }

    /* rt_sampler_1d takes a pair of its own: whatever follows it is the
     * pair after, as if a whole pair had been drawn. */
    for (uint32_t i = 0; i < 64; i++) {
        rt_sampler a, b;
        float      ua[2], ub[2];
        rt_sampler_start(&a, 7, 3, 4, i);
        rt_sampler_start(&b, 7, 3, 4, i);
        rt_sampler_1d(&a);
        rt_sampler_2d(&b, ub);
        rt_sampler_2d(&a, ua);
        rt_sampler_2d(&b, ub);
        CHECKF(same_pair(ua, ub), "index %u: pair 1 after a 1d (%.9g %.9g), after a 2d (%.9g %.9g)",
               i, ua[0], ua[1], ub[0], ub[1]);
    }

    /* No two pixels of a 64x64 block share their first pair, for any seed
     * (a pixel hash that dropped bits of px or py would make some equal). */
    enum { SIDE = 64 };
    uint64_t *keys = malloc(sizeof *keys * SIDE * SIDE);
    REQUIRE(keys);
    for (size_t k = 0; k < NSEEDS; k++) {
        for (uint32_t y = 0; y < SIDE; y++) {
            for (uint32_t x = 0; x < SIDE; x++) {
                float u[2];
                pair_at(seeds[k], x, y, 0, 0, u);
                keys[y * SIDE + x] = (uint64_t)(u[0] * 0x1p24f) << 24 | (uint64_t)(u[1] * 0x1p24f);
            }
        }
        int dups = 0;
        for (size_t i = 0; i < SIDE * SIDE; i++)
            for (size_t j = i + 1; j < SIDE * SIDE; j++)
                dups += keys[i] == keys[j];
        CHECKF(dups == 0, "seed %llx: %d pairs of pixels share their first pair",
               (unsigned long long)seeds[k], dups);
    }
    free(keys);
}

/* Draw number d of sample `index`, 1d or 2d (a pattern every test of kept
 * seeds shares), into u. */
static void
kept_draw(rt_sampler *s, uint32_t index, uint32_t d, float u[2])
{
    u[0] = u[1] = 0;
    if ((d + index) % 3 == 0)
        u[0] = rt_sampler_1d(s);
    else
        rt_sampler_2d(s, u);
}

/* Pairs sample `index` draws: from 3 to past the kept ones. */
static uint32_t
kept_pairs(uint32_t index)
{
    return (index * 7 + 3) % (RT_SAMPLER_KEPT_PAIRS + 9);
}

/* A pixel's kept seeds change no value: its samples, each reaching a
 * different number of pairs (past the kept ones, with 1d and 2d draws),
 * give what rt_sampler_start() gives each on its own, drawn one after
 * another as the path tracer draws them, and two at once, interleaved,
 * in descending and ascending order. */
static void
case_kept(const char *arg)
{
    (void)arg;
    static const uint32_t px[] = {0, 5, 1919, UINT32_MAX};
    const size_t          npx = sizeof px / sizeof px[0];
    for (size_t k = 0; k < NSEEDS; k++)
        for (size_t i = 0; i < npx; i++) {
            uint32_t         x = px[i], y = px[(i + 1) % npx];
            rt_sampler_pixel kept;
            rt_sampler_pixel_init(&kept, seeds[k], x, y);
            for (uint32_t index = 0; index < 48; index++) {
                rt_sampler a, b;
                rt_sampler_start_kept(&a, &kept, index);
                rt_sampler_start(&b, seeds[k], x, y, index);
                for (uint32_t d = 0; d < kept_pairs(index); d++) {
                    float ua[2], ub[2];
                    kept_draw(&a, index, d, ua);
                    kept_draw(&b, index, d, ub);
                    CHECKF(same_pair(ua, ub),
                           "seed %llx pixel (%u, %u) index %u pair %u: kept (%.9g %.9g), "
                           "fresh (%.9g %.9g)",
                           (unsigned long long)seeds[k], x, y, index, d, ua[0], ua[1], ub[0],
                           ub[1]);
                }
            }
            CHECK_EQ_INT(kept.known, RT_SAMPLER_KEPT_PAIRS); /* some sample went past them */

            /* Two samples live at once on a fresh pixel, draws alternating. */
            rt_sampler_pixel_init(&kept, seeds[k], x, y);
            for (uint32_t n = 0; n < 24; n++) {
                uint32_t   index[2] = {47 - n, n};
                rt_sampler a[2], b[2];
                for (int m = 0; m < 2; m++) {
                    rt_sampler_start_kept(&a[m], &kept, index[m]);
                    rt_sampler_start(&b[m], seeds[k], x, y, index[m]);
                }
                for (uint32_t d = 0; d < RT_SAMPLER_KEPT_PAIRS + 9; d++)
                    for (int m = 0; m < 2; m++) {
                        if (d >= kept_pairs(index[m]))
                            continue;
                        float ua[2], ub[2];
                        kept_draw(&a[m], index[m], d, ua);
                        kept_draw(&b[m], index[m], d, ub);
                        CHECKF(same_pair(ua, ub),
                               "interleaved: seed %llx pixel (%u, %u) index %u pair %u: kept "
                               "(%.9g %.9g), fresh (%.9g %.9g)",
                               (unsigned long long)seeds[k], x, y, index[m], d, ua[0], ua[1], ub[0],
                               ub[1]);
                    }
            }
        }
}

/* Every value in [0, 1), and the values reach both ends of it. */
static void
case_range(const char *arg)
{
    (void)arg;
    static const uint32_t px[] = {0, 1, 2, 640, 65535, 65536, 0x7fffffffU, UINT32_MAX};
    static const uint32_t base[] = {0, 1000, (1U << 24) - 100, UINT32_MAX - 99};
    float                 lo = 1, hi = 0;
    long                  bad = 0;
    for (size_t k = 0; k < NSEEDS; k++) {
        for (size_t i = 0; i < sizeof px / sizeof px[0]; i++) {
            for (size_t n = 0; n < sizeof base / sizeof base[0]; n++) {
                for (uint32_t j = 0; j < 100; j++) {
                    uint32_t   x = px[i], y = px[(i + 3) % 8], index = base[n] + j;
                    rt_sampler s;
                    rt_sampler_start(&s, seeds[k], x, y, index);
                    for (int d = 0; d < 48; d++) {
                        float u[2];
                        if (d % 4 == 3)
                            u[0] = u[1] = rt_sampler_1d(&s);
                        else
                            rt_sampler_2d(&s, u);
                        for (int c = 0; c < 2; c++) {
                            if (!(u[c] >= 0 && u[c] < 1) && bad++ < 10)
                                RT_CHECK_FAIL_("seed %llx pixel (%u, %u) index %u dim %d: %.9g",
                                               (unsigned long long)seeds[k], x, y, index, d, u[c]);
                            lo = u[c] < lo ? u[c] : lo;
                            hi = u[c] > hi ? u[c] : hi;
                        }
                    }
                }
            }
        }
    }
    CHECK_EQ_INT(bad, 0);
    /* 614400 values: the extremes come within 1e-4 of the ends. */
    CHECKF(lo < 1e-4f && hi > 1 - 1e-4f, "values span [%.9g, %.9g]", lo, hi);
}

/* Whether the 2^m points pts[0..2^m) have exactly one point in each cell of
 * every elementary grid 2^a x 2^(m - a); on failure says which grid. */
static bool
is_net(const float (*pts)[2], int m, int *bad_a)
{
    int n = 1 << m, count[256];
    for (int a = 0; a <= m; a++) {
        for (int c = 0; c < n; c++)
            count[c] = 0;
        float sx = (float)(1 << a), sy = (float)(1 << (m - a)); /* exact products */
        for (int i = 0; i < n; i++) {
            int cx = (int)(pts[i][0] * sx), cy = (int)(pts[i][1] * sy);
            if (cx < 0 || cx >= (1 << a) || cy < 0 || cy >= (1 << (m - a))) {
                *bad_a = a;
                return false;
            }
            count[cx << (m - a) | cy]++;
        }
        for (int c = 0; c < n; c++) {
            if (count[c] != 1) {
                *bad_a = a;
                return false;
            }
        }
    }
    return true;
}

/* Whether the 2^m values v[0..2^m) have one in each interval of width 2^-m. */
static bool
is_stratified_1d(const float *v, int m)
{
    int n = 1 << m, count[256] = {0};
    for (int i = 0; i < n; i++) {
        int c = (int)(v[i] * (float)n);
        if (c < 0 || c >= n || count[c]++)
            return false;
    }
    return true;
}

/* The first 2^m samples of a pixel, and every aligned block of 2^m after
 * them, form a (0, m, 2)-net in each pair of dimensions: m = 4 (grids 16x1,
 * 8x2, 4x4, 2x8, 1x16), m = 6 (64x1 ... 8x8 ... 1x64) and every m up to 8;
 * and 1d dimensions are stratified the same way. */
static void
case_stratification(const char *arg)
{
    (void)arg;
    enum { N = 256 };
    static const uint32_t pixels[][2] = {{0, 0},    {1, 0},       {0, 1},
                                         {37, 211}, {1919, 1079}, {UINT32_MAX, 5}};
    static const uint32_t pairs[] = {0, 1, 5, 17};
    float(*pts)[2] = malloc(sizeof *pts * N);
    float *v = malloc(sizeof *v * N);
    REQUIRE(pts && v);
    int nets = 0;
    for (size_t k = 0; k < NSEEDS; k++) {
        for (size_t p = 0; p < sizeof pixels / sizeof pixels[0]; p++) {
            uint32_t x = pixels[p][0], y = pixels[p][1];
            for (size_t q = 0; q < sizeof pairs / sizeof pairs[0]; q++) {
                for (uint32_t i = 0; i < N; i++)
                    pair_at(seeds[k], x, y, i, pairs[q], pts[i]);
                for (int m = 1; m <= 8; m++) {
                    for (int start = 0; start < N; start += 1 << m) {
                        int a = -1;
                        CHECKF(is_net(pts + start, m, &a),
                               "seed %llx pixel (%u, %u) pair %u: samples %d..%d, grid %dx%d",
                               (unsigned long long)seeds[k], x, y, pairs[q], start,
                               start + (1 << m) - 1, 1 << a, 1 << (m - a));
                        nets++;
                    }
                }
            }
            /* A 1d dimension: the 3rd draw after two pairs. */
            for (uint32_t i = 0; i < N; i++) {
                rt_sampler s;
                float      u[2];
                rt_sampler_start(&s, seeds[k], x, y, i);
                rt_sampler_2d(&s, u);
                rt_sampler_1d(&s);
                v[i] = rt_sampler_1d(&s);
            }
            for (int m = 1; m <= 8; m++)
                for (int start = 0; start < N; start += 1 << m)
                    CHECKF(is_stratified_1d(v + start, m),
                           "seed %llx pixel (%u, %u) 1d: samples %d..%d not stratified",
                           (unsigned long long)seeds[k], x, y, start, start + (1 << m) - 1);
        }
    }
    CHECK(nets == (int)(NSEEDS * 6 * 4 * 255)); /* the loops ran */
    free(pts);
    free(v);
}

/* Upper limit of chi-square with k degrees of freedom at p = 1e-6
 * (Wilson and Hilferty's approximation, z = 4.75). */
static double
chi2_limit(int k)
{
    double v = 2.0 / (9.0 * k), c = 1 - v + 4.75 * sqrt(v);
    return k * c * c * c;
}

/* Pearson's correlation of a[0..n) and b[0..n). */
static double
correlation(const float *a, const float *b, int n)
{
    double ma = 0, mb = 0, sab = 0, saa = 0, sbb = 0;
    for (int i = 0; i < n; i++)
        ma += a[i], mb += b[i];
    ma /= n, mb /= n;
    for (int i = 0; i < n; i++) {
        sab += (a[i] - ma) * (b[i] - mb);
        saa += (a[i] - ma) * (a[i] - ma);
        sbb += (b[i] - mb) * (b[i] - mb);
    }
    return sab / sqrt(saa * sbb);
}

/* Means of 1024 samples near 1/2; dimensions of a pixel and of neighbouring
 * pixels uncorrelated, different pairs jointly uniform; a pair's first
 * sample uniform over the pixels of a block. */
static void
case_uniformity(const char *arg)
{
    (void)arg;
    enum { N = 1024, PAIRS = 4 };
    static const uint32_t pixels[][2] = {{0, 0}, {5, 9}, {640, 360}, {UINT32_MAX, UINT32_MAX}};
    float(*d)[N] = malloc(sizeof *d * 2 * PAIRS); /* d[2 p + c][i]: pair p, coordinate c */
    REQUIRE(d);
    double chi2_sum = 0;
    int    chi2_n = 0;
    for (size_t p = 0; p < sizeof pixels / sizeof pixels[0]; p++) {
        uint32_t x = pixels[p][0], y = pixels[p][1];
        for (int i = 0; i < N; i++) {
            rt_sampler s;
            rt_sampler_start(&s, 42, x, y, (uint32_t)i);
            for (int q = 0; q < PAIRS; q++) {
                float u[2];
                rt_sampler_2d(&s, u);
                d[2 * q][i] = u[0];
                d[2 * q + 1][i] = u[1];
            }
        }
        for (int a = 0; a < 2 * PAIRS; a++) {
            double mean = 0;
            for (int i = 0; i < N; i++)
                mean += d[a][i];
            mean /= N;
            CHECKF(fabs(mean - 0.5) < 0.01, "pixel (%u, %u) dim %d: mean %.6f", x, y, a, mean);
            /* Any two dimensions, a pair's own two included: never the
             * same sequence, and uncorrelated: for 1024 independent values
             * |r| has a standard deviation of 0.03; between shuffled,
             * scrambled pairs it is 0.04 (measured over 400 pixels), and
             * one pixel in 200 exceeds 0.12, so the bound is 4.5 of them. */
            for (int b = a + 1; b < 2 * PAIRS; b++) {
                double r = correlation(d[a], d[b], N);
                CHECKF(fabs(r) < 0.18, "pixel (%u, %u) dims %d and %d: correlation %.4f", x, y, a,
                       b, r);
                int equal = 0;
                for (int i = 0; i < N; i++)
                    equal += d[a][i] == d[b][i];
                CHECKF(equal < 4, "pixel (%u, %u) dims %d and %d: %d equal values", x, y, a, b,
                       equal);
                /* Dimensions of different pairs: each pair orders the
                 * samples its own way (the shuffle), so their joint 16x16
                 * histogram is flat. Without the shuffle both would be
                 * scrambles of the same points, packed into 16 of the 256
                 * cells (chi-square about 15000). With it, each block of
                 * 16 samples is a permutation matrix of the grid, whose
                 * counts vary less than independent points' on average
                 * (chi-square about 240, not 255) but with a longer tail
                 * (up to 490 in 900 tries): hence no tight limit per
                 * pair of dimensions, and one on the mean. */
                if (a / 2 == b / 2)
                    continue;
                int cells[256] = {0};
                for (int i = 0; i < N; i++)
                    cells[(int)(d[a][i] * 16) * 16 + (int)(d[b][i] * 16)]++;
                double chi2 = 0;
                for (int c = 0; c < 256; c++)
                    chi2 += (cells[c] - 4.0) * (cells[c] - 4.0) / 4.0;
                CHECKF(chi2 < 600, "pixel (%u, %u) dims %d and %d: chi-square %.1f", x, y, a, b,
                       chi2);
                chi2_sum += chi2;
                chi2_n++;
            }
        }
    }
    free(d);
    CHECKF(chi2_sum / chi2_n > 200 && chi2_sum / chi2_n < 290,
           "mean chi-square %.1f over %d pairs of dimensions", chi2_sum / chi2_n, chi2_n);

    /* Sample 0 of pair 0 over a 64x64 block of pixels: its histogram of 16
     * bins is flat (chi-square, 15 degrees of freedom: 40 is p < 0.001),
     * and a pixel's value tells nothing of its neighbour's. */
    enum { SIDE = 64 };
    float *first = malloc(sizeof *first * SIDE * SIDE),
          *right = malloc(sizeof *right * SIDE * SIDE);
    REQUIRE(first && right);
    for (size_t k = 0; k < NSEEDS; k++) {
        for (uint32_t pair = 0; pair < 3; pair += 2) {
            int bins[16] = {0};
            for (uint32_t y = 0; y < SIDE; y++) {
                for (uint32_t x = 0; x < SIDE; x++) {
                    float u[2], w[2];
                    pair_at(seeds[k], x, y, 0, pair, u);
                    pair_at(seeds[k], x + 1, y, 0, pair, w);
                    first[y * SIDE + x] = u[0];
                    right[y * SIDE + x] = w[0];
                    bins[(int)(u[0] * 16)]++;
                }
            }
            double chi2 = 0, expect = SIDE * SIDE / 16.0;
            for (int b = 0; b < 16; b++)
                chi2 += (bins[b] - expect) * (bins[b] - expect) / expect;
            CHECKF(chi2 < 40, "seed %llx pair %u: chi-square %.2f over pixels",
                   (unsigned long long)seeds[k], pair, chi2);
            double r = correlation(first, right, SIDE * SIDE);
            CHECKF(fabs(r) < 0.06, "seed %llx pair %u: neighbours correlate %.4f",
                   (unsigned long long)seeds[k], pair, r);
        }
    }
    free(first);
    free(right);
}

/* ===================================================================== */
/* BSDF                                                                  */
/* ===================================================================== */

static v3
dir_at(float cos_t, float phi)
{
    float s = 1 - cos_t * cos_t;
    s = s > 0 ? sqrtf(s) : 0;
    return (v3){s * cosf(phi), s * sinf(phi), cos_t};
}

/* wo at cos_o; its azimuth is not 0, as the tables' is, so the estimate
 * also checks that only cos_o matters. */
static v3
wo_at(float cos_o)
{
    return dir_at(cos_o, 0.7f);
}

static bool
finite3(const float f[3])
{
    return isfinite(f[0]) && isfinite(f[1]) && isfinite(f[2]);
}

#define MAT_FMT "base (%.3f %.3f %.3f) metallic %.3f roughness %.3f specular %.3f"
#define MAT_ARGS(b)                                                                                \
    (double)(b).base[0], (double)(b).base[1], (double)(b).base[2], (double)(b).metallic,           \
        (double)(b).roughness, (double)(b).specular

/* The directional albedo of b at cos_o, by side^2 draws of rt_bsdf_sample:
 * the mean of f cos(wi) / pdf, failed draws counting 0. The draws are
 * jittered, u on a side x side grid and u_lobe on side^2 strata in random
 * order (stratification cuts the noise of the rough lobes tenfold, so the
 * tolerances below are mostly the model's error, not the estimate's).
 * Checks each successful draw on the way (wi unit and above the horizon, f
 * and pdf finite, f >= 0, pdf > 0). *failed: the fraction of failed draws. */
static void
albedo_estimate(const rt_bsdf *b, float cos_o, int side, uint64_t *rng, double out[3],
                double *failed)
{
    int  n = side * side;
    int *strata = malloc(sizeof *strata * (size_t)n);
    REQUIRE(strata);
    for (int i = 0; i < n; i++)
        strata[i] = i;
    for (int i = n - 1; i > 0; i--) { /* Fisher-Yates */
        int j = (int)(rnd(rng) * (float)(i + 1)), t = strata[i];
        j = j <= i ? j : i;
        strata[i] = strata[j], strata[j] = t;
    }
    v3     wo = wo_at(cos_o);
    double sum[3] = {0, 0, 0};
    int    fails = 0, bad = 0;
    for (int i = 0; i < n; i++) {
        float u_lobe = ((float)strata[i] + rnd(rng)) / (float)n, f[3], pdf;
        float u[2] = {((float)(i % side) + rnd(rng)) / (float)side,
                      ((float)(i / side) + rnd(rng)) / (float)side};
        u_lobe = u_lobe < 1 ? u_lobe : 0x1.fffffep-1f;
        u[0] = u[0] < 1 ? u[0] : 0x1.fffffep-1f;
        u[1] = u[1] < 1 ? u[1] : 0x1.fffffep-1f;
        v3 wi;
        if (!rt_bsdf_sample(b, wo, u_lobe, u, &wi, f, &pdf)) {
            fails++;
            continue;
        }
        bool ok = wi.z > 0 && fabsf(v3_len(wi) - 1) < 1e-4f && finite3(f) && f[0] >= 0 &&
                  f[1] >= 0 && f[2] >= 0 && isfinite(pdf) && pdf > 0;
        if (!ok) {
            if (bad++ < 3)
                RT_CHECK_FAIL_(MAT_FMT " cos_o %.3f u (%.9g %.9g %.9g): wi (%g %g %g) f (%g %g "
                                       "%g) pdf %g",
                               MAT_ARGS(*b), (double)cos_o, u_lobe, u[0], u[1], wi.x, wi.y, wi.z,
                               f[0], f[1], f[2], pdf);
            continue;
        }
        for (int c = 0; c < 3; c++)
            sum[c] += (double)f[c] * wi.z / pdf;
    }
    for (int c = 0; c < 3; c++)
        out[c] = sum[c] / n;
    if (failed)
        *failed = (double)fails / n;
    free(strata);
}

/* base 1, specular 1: all the light comes back, at every metallic,
 * roughness and angle; and the tables say so too. Roughness 0.35 is where
 * the multiple-scattering tables were found least accurate (about 1% too
 * much light from white metal at normal incidence). */
static void
case_white_furnace(const char *arg)
{
    (void)arg;
    static const float metallic[] = {0, 0.5f, 1};
    static const float rough[] = {0, 0.1f, 0.3f, 0.35f, 0.5f, 0.8f, 1};
    static const float cos_o[] = {1, 0.7f, 0.3f, 0.1f};
    uint64_t           rng = 0x9e3779b97f4a7c15ULL;
    double             worst = 0;
    for (size_t m = 0; m < 3; m++) {
        for (size_t r = 0; r < sizeof rough / sizeof rough[0]; r++) {
            for (size_t c = 0; c < 4; c++) {
                rt_bsdf b = {{1, 1, 1}, metallic[m], rough[r], 1};
                double  est[3];
                albedo_estimate(&b, cos_o[c], 200, &rng, est, NULL);
                CHECKF(fabs(est[0] - 1) < 0.015, MAT_FMT " cos_o %.2f: albedo %.5f", MAT_ARGS(b),
                       (double)cos_o[c], est[0]);
                worst = fabs(est[0] - 1) > worst ? fabs(est[0] - 1) : worst;
                float tab[3];
                rt_bsdf_albedo(&b, cos_o[c], tab);
                for (int k = 0; k < 3; k++)
                    CHECKF(fabsf(tab[k] - 1) < 0.005f, MAT_FMT " cos_o %.2f: rt_bsdf_albedo %.5f",
                           MAT_ARGS(b), (double)cos_o[c], tab[k]);
            }
        }
    }
    printf("white furnace: worst |albedo - 1| %.5f\n", worst);
}

/* base 0.5, specular 0, metallic 0: plain Lambert, f = 0.5 / pi. */
static void
case_grey_furnace(const char *arg)
{
    (void)arg;
    static const float rough[] = {0, 0.5f, 1};
    static const float cos_o[] = {1, 0.7f, 0.3f, 0.1f, 0.01f};
    uint64_t           rng = 0x2545f4914f6cdd1dULL;
    for (size_t r = 0; r < 3; r++) {
        for (size_t c = 0; c < 5; c++) {
            rt_bsdf b = {{0.5f, 0.5f, 0.5f}, 0, rough[r], 0};
            double  est[3], failed;
            albedo_estimate(&b, cos_o[c], 100, &rng, est, &failed);
            for (int k = 0; k < 3; k++)
                CHECKF(fabs(est[k] - 0.5) < 0.01, MAT_FMT " cos_o %.2f: albedo %.5f", MAT_ARGS(b),
                       (double)cos_o[c], est[k]);
            CHECKF(failed == 0, MAT_FMT " cos_o %.2f: %.4f of the draws failed", MAT_ARGS(b),
                   (double)cos_o[c], failed);
            float tab[3];
            rt_bsdf_albedo(&b, cos_o[c], tab);
            CHECKF(fabsf(tab[0] - 0.5f) < 1e-5f, MAT_FMT " cos_o %.2f: rt_bsdf_albedo %.6f",
                   MAT_ARGS(b), (double)cos_o[c], tab[0]);

            /* eval: 0.5 / pi for any wi above the horizon; the pdf is the
             * cosine lobe's, the specular layer having no albedo to draw. */
            v3 wo = wo_at(cos_o[c]);
            for (int i = 0; i < 2000; i++) {
                v3    wi = dir_at(1 - rnd(&rng), 2 * RT_PI_F * rnd(&rng));
                float f[3], pdf;
                bool  ok = rt_bsdf_eval(&b, wo, wi, f, &pdf);
                bool  good = ok;
                for (int k = 0; k < 3; k++)
                    good = good && fabsf(f[k] - 0.5f / RT_PI_F) < 1e-6f;
                good = good && fabsf(pdf - wi.z / RT_PI_F) < 1e-5f * (1 + pdf);
                CHECKF(good, MAT_FMT " wo.z %.3f wi (%g %g %g): %d f (%.8g %.8g %.8g) pdf %.8g",
                       MAT_ARGS(b), (double)wo.z, wi.x, wi.y, wi.z, ok, f[0], f[1], f[2], pdf);
                if (!good)
                    break;
            }

            /* sample: the cosine lobe itself, each draw as eval says, and
             * the draws where it puts them: the mean of wi.z is 2/3 (a
             * uniform hemisphere's is 1/2, with f * cos / pdf still 1/2:
             * the albedo alone cannot tell). 20,000 draws: its standard
             * error is sqrt(1/18 / 20000) = 0.0017. */
            double sum_z = 0;
            int    n = 0, bad = 0;
            for (int i = 0; i < 20000; i++) {
                float u[2] = {rnd(&rng), rnd(&rng)}, f[3], pdf;
                v3    wi;
                if (!rt_bsdf_sample(&b, wo, rnd(&rng), u, &wi, f, &pdf))
                    continue;
                bad += !(fabsf(pdf - wi.z / RT_PI_F) < 1e-4f * (1 + pdf) &&
                         fabsf(f[0] - 0.5f / RT_PI_F) < 1e-6f);
                sum_z += wi.z;
                n++;
            }
            CHECKF(bad == 0 && n > 19000, MAT_FMT " cos_o %.2f: %d of %d draws not as eval says",
                   MAT_ARGS(b), (double)cos_o[c], bad, n);
            CHECKF(fabs(sum_z / n - 2.0 / 3) < 0.01,
                   MAT_FMT " cos_o %.2f: mean wi.z %.4f, want 2/3", MAT_ARGS(b), (double)cos_o[c],
                   sum_z / n);
        }
    }
}

/* A random material: each component in [0, 1]; some at the ends. */
static rt_bsdf
material_random(uint64_t *rng)
{
    rt_bsdf b;
    for (int c = 0; c < 3; c++)
        b.base[c] = rnd(rng) < 0.15f ? 1.0f : rnd(rng);
    b.metallic = rnd(rng) < 0.25f ? (rnd(rng) < 0.5f ? 0.0f : 1.0f) : rnd(rng);
    b.roughness = rnd(rng) < 0.15f ? (rnd(rng) < 0.5f ? 0.0f : 1.0f) : rnd(rng);
    b.specular = rnd(rng) < 0.5f ? 1.0f : rnd(rng);
    return b;
}

/* No channel of any material reflects more than comes in, and what it
 * reflects is what rt_bsdf_albedo says. */
static void
case_energy(const char *arg)
{
    (void)arg;
    uint64_t rng = 0xd1b54a32d192ed03ULL;
    double   worst = 0, worst_tab = 0;
    for (int k = 0; k < 60; k++) {
        rt_bsdf b = material_random(&rng);
        if (k < 6) /* the brightest: white rough metal and dielectric, grazing */
            b = (rt_bsdf){{1, 1, 1}, k < 3 ? 1.0f : 0.0f, 0.6f + 0.2f * (float)(k % 3), 1};
        float  cos_o = k < 6 ? 0.05f : 0.02f + 0.98f * rnd(&rng);
        double est[3];
        float  tab[3];
        albedo_estimate(&b, cos_o, 160, &rng, est, NULL);
        rt_bsdf_albedo(&b, cos_o, tab);
        for (int c = 0; c < 3; c++) {
            CHECKF(est[c] <= 1.015, MAT_FMT " cos_o %.3f: channel %d reflects %.5f", MAT_ARGS(b),
                   (double)cos_o, c, est[c]);
            CHECKF(fabs(est[c] - tab[c]) < 0.015,
                   MAT_FMT " cos_o %.3f: channel %d reflects %.5f, rt_bsdf_albedo %.5f",
                   MAT_ARGS(b), (double)cos_o, c, est[c], (double)tab[c]);
            worst = est[c] > worst ? est[c] : worst;
            worst_tab = fabs(est[c] - tab[c]) > worst_tab ? fabs(est[c] - tab[c]) : worst_tab;
        }
    }
    printf("energy: highest albedo %.5f, worst |estimate - table| %.5f\n", worst, worst_tab);
}

static bool
near_rel(float a, float b, float rel)
{
    return fabsf(a - b) <= rel * fmaxf(fabsf(a), fabsf(b)) + 1e-30f;
}

/* rt_bsdf_sample's f and pdf are rt_bsdf_eval's at the wi it returns. */
static void
case_sample_eval(const char *arg)
{
    (void)arg;
    uint64_t rng = 0x5851f42d4c957f2dULL;
    int      mismatches = 0, drawn = 0;
    for (int i = 0; i < 50000; i++) {
        rt_bsdf b = material_random(&rng);
        v3      wo = dir_at(1 - rnd(&rng), 2 * RT_PI_F * rnd(&rng)), wi;
        float   u_lobe = rnd(&rng), u[2] = {rnd(&rng), rnd(&rng)};
        float   fs[3], ps, fe[3], pe;
        bool    ok_s = rt_bsdf_sample(&b, wo, u_lobe, u, &wi, fs, &ps);
        if (!ok_s && wi.z > 0 && ps == 0)
            continue; /* a draw whose pdf underflows: nothing to compare */
        bool ok_e = rt_bsdf_eval(&b, wo, wi, fe, &pe);
        drawn += ok_s;
        bool same = ok_s == ok_e && near_rel(ps, pe, 1e-4f);
        for (int c = 0; c < 3; c++)
            same = same && near_rel(fs[c], fe[c], 1e-4f);
        if (!same && mismatches++ < 5)
            RT_CHECK_FAIL_(MAT_FMT " wo (%g %g %g) wi (%g %g %g): sample %d f (%g %g %g) pdf %g; "
                                   "eval %d f (%g %g %g) pdf %g",
                           MAT_ARGS(b), wo.x, wo.y, wo.z, wi.x, wi.y, wi.z, ok_s, fs[0], fs[1],
                           fs[2], ps, ok_e, fe[0], fe[1], fe[2], pe);
    }
    CHECK_EQ_INT(mismatches, 0);
    CHECK(drawn > 40000); /* most draws succeed, so the comparison means something */
}

/* Quadrature around the mirror direction of wo: directions (theta, phi) in
 * a frame whose pole is (-wo.x, -wo.y, wo.z), theta uniform in [0, pi], so
 * the strata are finest where a glossy lobe peaks. */
typedef struct mirror_frame {
    v3 t, b, pole;
} mirror_frame;

static mirror_frame
mirror_frame_of(v3 wo)
{
    mirror_frame m = {.pole = {-wo.x, -wo.y, wo.z}};
    v3_frame(m.pole, &m.t, &m.b);
    return m;
}

static v3
mirror_dir(const mirror_frame *m, double theta, double phi)
{
    v3 l = {(float)(sin(theta) * cos(phi)), (float)(sin(theta) * sin(phi)), (float)cos(theta)};
    return v3_norm(v3_from_local(l, m->t, m->b, m->pole));
}

/* The integral of eval's pdf over [theta0, theta1] x [phi0, phi1] of the
 * mirror frame, with nt x np jittered strata (unbiased; the Jacobian is
 * sin theta). */
static double
pdf_integral_cell(const rt_bsdf *b, v3 wo, const mirror_frame *m, double theta0, double theta1,
                  double phi0, double phi1, int nt, int np, uint64_t *rng)
{
    double sum = 0, dt = (theta1 - theta0) / nt, dp = (phi1 - phi0) / np;
    for (int j = 0; j < nt; j++) {
        for (int i = 0; i < np; i++) {
            double theta = theta0 + (j + rnd(rng)) * dt, phi = phi0 + (i + rnd(rng)) * dp;
            v3     wi = mirror_dir(m, theta, phi);
            float  f[3], pdf;
            if (wi.z > 0 && rt_bsdf_eval(b, wo, wi, f, &pdf))
                sum += pdf * sin(theta);
        }
    }
    return sum * dt * dp;
}

/* The pdf integrates over the upper hemisphere to at most 1, and to the
 * fraction of rt_bsdf_sample's draws that stay above it: the mass lost is
 * only the visible normals that reflect wo below the horizon. That loss is
 * small where the cosine lobe dominates (metallic 0) but not for rough
 * metal: at alpha = 1, D = 1/pi and the pdf is G1(wo) / (4 pi cos_o), a
 * constant, so the integral is exactly 1 / (1 + cos_o), 1/2 at normal
 * incidence. */
static void
case_pdf_integral(const char *arg)
{
    (void)arg;
    static const float metallic[] = {0, 0.5f, 1};
    static const float rough[] = {0.3f, 0.5f, 0.8f, 1};
    static const float cos_o[] = {1, 0.7f, 0.3f, 0.1f};
    uint64_t           rng = 0xbf58476d1ce4e5b9ULL;
    double             worst = 0;
    for (size_t m = 0; m < 3; m++) {
        for (size_t r = 0; r < 4; r++) {
            for (size_t c = 0; c < 4; c++) {
                rt_bsdf      b = {{0.8f, 0.6f, 0.4f}, metallic[m], rough[r], 1};
                v3           wo = wo_at(cos_o[c]);
                mirror_frame mf = mirror_frame_of(wo);
                double total = pdf_integral_cell(&b, wo, &mf, 0, PI_D, 0, 2 * PI_D, 250, 250, &rng);
                double est[3], failed;
                albedo_estimate(&b, cos_o[c], 200, &rng, est, &failed);
                CHECKF(total <= 1.005, MAT_FMT " cos_o %.2f: pdf integrates to %.5f", MAT_ARGS(b),
                       (double)cos_o[c], total);
                /* 40000 jittered draws: the fraction's standard deviation
                 * is under 0.0025, the quadrature's error under 0.001. */
                worst = fabs(total - (1 - failed)) > worst ? fabs(total - (1 - failed)) : worst;
                CHECKF(fabs(total - (1 - failed)) < 0.01,
                       MAT_FMT " cos_o %.2f: pdf integrates to %.5f, %.5f of the draws stay above",
                       MAT_ARGS(b), (double)cos_o[c], total, 1 - failed);
                if (metallic[m] == 0)
                    CHECKF(total >= 0.97, MAT_FMT " cos_o %.2f: pdf integrates to %.5f",
                           MAT_ARGS(b), (double)cos_o[c], total);
                if (metallic[m] == 1 && rough[r] == 1)
                    CHECKF(fabs(total - 1 / (1 + (double)cos_o[c])) < 0.002,
                           MAT_FMT " cos_o %.2f: pdf integrates to %.5f, not 1 / (1 + cos_o)",
                           MAT_ARGS(b), (double)cos_o[c], total);
            }
        }
    }
    printf("pdf integral: worst |integral - fraction drawn above| %.5f\n", worst);
}

/* The directions rt_bsdf_sample draws are distributed as its pdf says:
 * their histogram over cells of the mirror frame (24 theta x 16 phi, plus
 * the draws that fail) against the pdf integrated over each cell (16 x 16
 * strata: with 8 x 8 the quadrature's own error fails the grazing glossy
 * lobes), Pearson's chi-square (cells expecting under 5 draws pooled). */
static void
case_pdf_histogram(const char *arg)
{
    (void)arg;
    enum { NT = 24, NP = 16, SUB = 16, DRAWS = 60000 };
    static const float metallic[] = {0, 0.5f, 1};
    static const float rough[] = {0.3f, 0.6f, 1};
    static const float cos_o[] = {1, 0.5f, 0.15f};
    uint64_t           rng = 0x94d049bb133111ebULL;
    double             worst = 0;
    for (size_t m = 0; m < 3; m++) {
        for (size_t r = 0; r < 3; r++) {
            for (size_t c = 0; c < 3; c++) {
                rt_bsdf      b = {{0.9f, 0.5f, 0.2f}, metallic[m], rough[r], 1};
                v3           wo = wo_at(cos_o[c]);
                mirror_frame mf = mirror_frame_of(wo);
                double       expect[NT * NP + 1], above = 0;
                long         count[NT * NP + 1] = {0};
                for (int j = 0; j < NT; j++) {
                    for (int i = 0; i < NP; i++) {
                        double p = pdf_integral_cell(&b, wo, &mf, PI_D * j / NT,
                                                     PI_D * (j + 1) / NT, 2 * PI_D * i / NP,
                                                     2 * PI_D * (i + 1) / NP, SUB, SUB, &rng);
                        expect[j * NP + i] = p * DRAWS;
                        above += p;
                    }
                }
                expect[NT * NP] = (1 - above) * DRAWS; /* the failed draws */
                for (int k = 0; k < DRAWS; k++) {
                    float u_lobe = rnd(&rng), u[2] = {rnd(&rng), rnd(&rng)}, f[3], pdf;
                    v3    wi;
                    if (!rt_bsdf_sample(&b, wo, u_lobe, u, &wi, f, &pdf)) {
                        count[NT * NP]++;
                        continue;
                    }
                    float  d = v3_dot(wi, mf.pole);
                    double theta = acos(d > 1 ? 1 : d < -1 ? -1 : d);
                    double phi = atan2(v3_dot(wi, mf.b), v3_dot(wi, mf.t));
                    int    j = (int)(theta / PI_D * NT), i = (int)((phi + PI_D) / (2 * PI_D) * NP);
                    j = j < NT ? j : NT - 1;
                    i = (i + NP / 2) % NP; /* atan2's -pi..pi to 0..2 pi */
                    count[j * NP + i]++;
                }
                double chi2 = 0, pool_e = 0;
                long   pool_n = 0;
                int    cells = 0;
                for (int k = 0; k <= NT * NP; k++) {
                    if (expect[k] < 5) {
                        pool_e += expect[k] > 0 ? expect[k] : 0;
                        pool_n += count[k];
                        continue;
                    }
                    chi2 += (count[k] - expect[k]) * (count[k] - expect[k]) / expect[k];
                    cells++;
                }
                if (pool_e >= 5 || pool_n > 0) {
                    double e = pool_e > 1 ? pool_e : 1;
                    chi2 += (pool_n - e) * (pool_n - e) / e;
                    cells++;
                }
                double limit = chi2_limit(cells - 1);
                CHECKF(chi2 < limit,
                       MAT_FMT " cos_o %.2f: chi-square %.1f over %d cells (limit %.1f)",
                       MAT_ARGS(b), (double)cos_o[c], chi2, cells, limit);
                worst = chi2 / limit > worst ? chi2 / limit : worst;
                CHECK(cells > 40); /* the test resolves the lobe */
            }
        }
    }
    printf("pdf histogram: worst chi-square / limit %.3f\n", worst);
}

/* Mirror direction of wo tilted by about `spread` radians: pairs where a
 * glossy lobe is large. */
static v3
near_mirror(v3 wo, float spread, uint64_t *rng)
{
    v3 d = {-wo.x + spread * (2 * rnd(rng) - 1), -wo.y + spread * (2 * rnd(rng) - 1),
            wo.z + spread * (2 * rnd(rng) - 1)};
    return v3_norm(d);
}

/* The specular layers are reciprocal: f(wo, wi) == f(wi, wo) for metal
 * (metallic 1) and for the dielectric layer alone (base 0, so no diffuse).
 * The diffuse weighting (1 - E_d(wo)) is not, by design. */
static void
case_reciprocity(const char *arg)
{
    (void)arg;
    uint64_t rng = 0x8cb92ba72f3d8dd7ULL;
    int      bad = 0, compared = 0;
    for (int k = 0; k < 40000; k++) {
        rt_bsdf b = material_random(&rng);
        if (k % 2) {
            b.metallic = 1;
        } else {
            b.metallic = 0;
            b.base[0] = b.base[1] = b.base[2] = 0;
            b.specular = 0.2f + 0.8f * rnd(&rng);
        }
        v3    wo = dir_at(1 - rnd(&rng), 2 * RT_PI_F * rnd(&rng));
        v3    wi = k % 4 < 2 ? dir_at(1 - rnd(&rng), 2 * RT_PI_F * rnd(&rng))
                             : near_mirror(wo, 0.02f + 0.3f * rnd(&rng), &rng);
        float f1[3], f2[3], p1, p2;
        bool  ok1 = rt_bsdf_eval(&b, wo, wi, f1, &p1), ok2 = rt_bsdf_eval(&b, wi, wo, f2, &p2);
        if (!(ok1 && ok2))
            continue; /* wi below the horizon */
        compared++;
        bool same = true;
        for (int c = 0; c < 3; c++)
            same = same && f1[c] > 0 && near_rel(f1[c], f2[c], 1e-3f);
        if (!same && bad++ < 5)
            RT_CHECK_FAIL_(MAT_FMT " wo (%g %g %g) wi (%g %g %g): f (%g %g %g), swapped (%g %g %g)",
                           MAT_ARGS(b), wo.x, wo.y, wo.z, wi.x, wi.y, wi.z, f1[0], f1[1], f1[2],
                           f2[0], f2[1], f2[2]);
    }
    CHECK_EQ_INT(bad, 0);
    CHECK(compared > 30000);
}

/* wo or wi at or below the horizon: false, f = 0 and pdf = 0, from eval
 * and from sample; a draw that leaves the hemisphere likewise. */
static void
case_horizon(const char *arg)
{
    (void)arg;
    static const float below[] = {0, -0.0f, -1e-6f, -0.3f, -1};
    static const float above[] = {1e-4f, 0.2f, 1};
    rt_bsdf            mats[] = {{{1, 1, 1}, 0, 0.5f, 1},
                                 {{0.5f, 0.5f, 0.5f}, 0, 0.5f, 0},
                                 {{0.9f, 0.6f, 0.3f}, 1, 0.2f, 1},
                                 {{0.9f, 0.6f, 0.3f}, 0.5f, 1, 1},
                                 {{1, 1, 1}, 1, 0, 1}};
    for (size_t k = 0; k < sizeof mats / sizeof mats[0]; k++) {
        for (size_t i = 0; i < sizeof below / sizeof below[0]; i++) {
            for (size_t j = 0; j < sizeof above / sizeof above[0]; j++) {
                v3 down = dir_at(below[i], 1.1f), up = dir_at(above[j], 4.0f);
                v3 pairs[3][2] = {{down, up}, {up, down}, {down, down}};
                for (int p = 0; p < 3; p++) {
                    float f[3] = {7, 7, 7}, pdf = 7;
                    bool  ok = rt_bsdf_eval(&mats[k], pairs[p][0], pairs[p][1], f, &pdf);
                    CHECKF(!ok && f[0] == 0 && f[1] == 0 && f[2] == 0 && pdf == 0,
                           MAT_FMT " wo.z %g wi.z %g: eval %d f (%g %g %g) pdf %g",
                           MAT_ARGS(mats[k]), pairs[p][0].z, pairs[p][1].z, ok, f[0], f[1], f[2],
                           pdf);
                }
                float u[2] = {0.3f, 0.6f}, f[3] = {7, 7, 7}, pdf = 7;
                v3    wi;
                bool  ok = rt_bsdf_sample(&mats[k], down, 0.5f, u, &wi, f, &pdf);
                CHECKF(!ok && f[0] == 0 && f[1] == 0 && f[2] == 0 && pdf == 0,
                       MAT_FMT " wo.z %g: sample %d f (%g %g %g) pdf %g", MAT_ARGS(mats[k]), down.z,
                       ok, f[0], f[1], f[2], pdf);
            }
        }
    }

    /* Rough metal at grazing wo: many visible normals reflect it below the
     * horizon; those draws say so and contribute nothing. */
    rt_bsdf  metal = {{0.9f, 0.6f, 0.3f}, 1, 1, 1};
    v3       wo = wo_at(0.2f);
    uint64_t rng = 0x1234567;
    int      failed = 0;
    for (int k = 0; k < 10000; k++) {
        float u_lobe = rnd(&rng), u[2] = {rnd(&rng), rnd(&rng)}, f[3] = {7, 7, 7}, pdf = 7;
        v3    wi = {0, 0, 7};
        bool  ok = rt_bsdf_sample(&metal, wo, u_lobe, u, &wi, f, &pdf);
        if (ok) {
            CHECKF(wi.z > 0 && pdf > 0, "wi (%g %g %g) pdf %g", wi.x, wi.y, wi.z, pdf);
            continue;
        }
        failed++;
        CHECKF(f[0] == 0 && f[1] == 0 && f[2] == 0 && pdf == 0 && wi.z <= 0,
               "failed draw: wi (%g %g %g) f (%g %g %g) pdf %g", wi.x, wi.y, wi.z, f[0], f[1], f[2],
               pdf);
    }
    CHECKF(failed > 500, "%d of 10000 draws failed", failed); /* 1 - 1/1.2 of them should */
}

/* Extreme but valid inputs (roughness 0 and 1, wo and wi at normal
 * incidence and a hair above the horizon, u at 0 and just under 1, out of
 * range parameters that the header says are clamped): f and pdf finite and
 * non-negative, never NaN. */
static void
case_extremes(const char *arg)
{
    (void)arg;
    static const float rough[] = {0, 1e-3f, 0.03f, 1, -1, 2};
    static const float cosines[] = {1, 0.999999f, 0.5f, 1e-3f, 1e-6f};
    static const float us[] = {0, 1e-7f, 0.5f, 0.99999994f};
    int                bad = 0;
    for (size_t r = 0; r < sizeof rough / sizeof rough[0]; r++) {
        for (int m = 0; m < 3; m++) {
            rt_bsdf b = {{1, 0.5f, 0}, 0.5f * (float)m, rough[r], m == 2 ? 7.0f : 1.0f};
            for (size_t i = 0; i < sizeof cosines / sizeof cosines[0]; i++) {
                v3 wo = wo_at(cosines[i]);
                for (size_t j = 0; j < sizeof cosines / sizeof cosines[0]; j++) {
                    v3    wis[2] = {dir_at(cosines[j], 2.5f), (v3){-wo.x, -wo.y, wo.z}};
                    float f[3], pdf;
                    for (int w = 0; w < 2; w++) {
                        rt_bsdf_eval(&b, wo, wis[w], f, &pdf);
                        bool good = finite3(f) && f[0] >= 0 && f[1] >= 0 && f[2] >= 0 &&
                                    isfinite(pdf) && pdf >= 0;
                        if (!good && bad++ < 5)
                            RT_CHECK_FAIL_(MAT_FMT " wo.z %g wi (%g %g %g): f (%g %g %g) pdf %g",
                                           MAT_ARGS(b), wo.z, wis[w].x, wis[w].y, wis[w].z, f[0],
                                           f[1], f[2], pdf);
                    }
                }
                for (size_t a = 0; a < 4; a++) {
                    for (size_t c = 0; c < 4; c++) {
                        for (size_t l = 0; l < 4; l++) {
                            float u[2] = {us[a], us[c]}, f[3], pdf;
                            v3    wi;
                            bool  ok = rt_bsdf_sample(&b, wo, us[l], u, &wi, f, &pdf);
                            bool  good =
                                finite3(f) && f[0] >= 0 && f[1] >= 0 && f[2] >= 0 &&
                                isfinite(pdf) && pdf >= 0 &&
                                (!ok || (wi.z > 0 && pdf > 0 && fabsf(v3_len(wi) - 1) < 1e-4f));
                            if (!good && bad++ < 5)
                                RT_CHECK_FAIL_(MAT_FMT " wo.z %g u (%g %g %g): %d wi (%g %g %g) f "
                                                       "(%g %g %g) pdf %g",
                                               MAT_ARGS(b), wo.z, us[l], u[0], u[1], ok, wi.x, wi.y,
                                               wi.z, f[0], f[1], f[2], pdf);
                        }
                    }
                }
                float alb[3];
                rt_bsdf_albedo(&b, cosines[i], alb);
                CHECKF(finite3(alb) && alb[0] >= 0 && alb[0] <= 1.001f && alb[1] <= 1.001f,
                       MAT_FMT " cos_o %g: rt_bsdf_albedo (%g %g %g)", MAT_ARGS(b),
                       (double)cosines[i], alb[0], alb[1], alb[2]);
            }
        }
    }
    CHECK_EQ_INT(bad, 0);
}

/* Out-of-range parameters are clamped (rt_bsdf.h: roughness, metallic and
 * specular each in [0, 1]): a material past a bound gives the very bits of
 * the one at it, in eval, sample and albedo. (extremes checks only that
 * such materials stay finite, which a clamp to the wrong bound passes.) */
static void
case_clamped(const char *arg)
{
    (void)arg;
    static const rt_bsdf pairs[][2] = {
        {{{1, 0.5f, 0}, 0.5f, -1, 1}, {{1, 0.5f, 0}, 0.5f, 0, 1}},
        {{{1, 0.5f, 0}, 0.5f, 2, 1}, {{1, 0.5f, 0}, 0.5f, 1, 1}},
        {{{1, 0.5f, 0}, -0.5f, 0.4f, 1}, {{1, 0.5f, 0}, 0, 0.4f, 1}},
        {{{1, 0.5f, 0}, 1.5f, 0.4f, 1}, {{1, 0.5f, 0}, 1, 0.4f, 1}},
        {{{1, 0.5f, 0}, 0.3f, 0.4f, -1}, {{1, 0.5f, 0}, 0.3f, 0.4f, 0}},
        {{{1, 0.5f, 0}, 0.3f, 0.4f, 7}, {{1, 0.5f, 0}, 0.3f, 0.4f, 1}},
        {{{1, 0.5f, 0}, -1, 0.4f, -1}, {{1, 0.5f, 0}, 0, 0.4f, 0}}, /* Lambert once clamped */
    };
    uint64_t rng = 0x51ED2701u;
    for (size_t k = 0; k < sizeof pairs / sizeof pairs[0]; k++) {
        const rt_bsdf *out = &pairs[k][0], *at = &pairs[k][1];
        int            differ = 0;
        for (int n = 0; n < 500; n++) {
            float cos_o = 0.05f + 0.95f * rnd(&rng);
            v3    wo = wo_at(cos_o), wi = dir_at(0.05f + 0.95f * rnd(&rng), 6.28f * rnd(&rng));
            float u[2] = {rnd(&rng), rnd(&rng)}, ul = rnd(&rng);
            float f[2][3], pdf[2], g[2][3], q[2], a[2][3];
            v3    w[2];
            bool  e[2], d[2];
            for (int m = 0; m < 2; m++) {
                const rt_bsdf *b = m ? at : out;
                e[m] = rt_bsdf_eval(b, wo, wi, f[m], &pdf[m]);
                d[m] = rt_bsdf_sample(b, wo, ul, u, &w[m], g[m], &q[m]);
                rt_bsdf_albedo(b, cos_o, a[m]);
            }
            differ += e[0] != e[1] || memcmp(f[0], f[1], sizeof f[0]) || pdf[0] != pdf[1];
            differ += d[0] != d[1] || memcmp(g[0], g[1], sizeof g[0]) || q[0] != q[1] ||
                      (d[0] && memcmp(&w[0], &w[1], sizeof w[0]));
            differ += memcmp(a[0], a[1], sizeof a[0]) != 0;
            differ += rt_bsdf_is_lambert(out) != rt_bsdf_is_lambert(at);
        }
        if (differ)
            RT_CHECK_FAIL_(MAT_FMT ": %d results differ from " MAT_FMT "'s", MAT_ARGS(*out), differ,
                           MAT_ARGS(*at));
    }
}

/* Near-specular lobes are evaluated accurately: at normal incidence the
 * pdf of pure metal is D(h) / 4 (G1 = 1), which the test computes in
 * double from the same wi. In single precision, 1 - cos^2 of the half
 * vector cancels when alpha^2 is near float's epsilon. */
static void
case_near_specular(const char *arg)
{
    (void)arg;
    static const float rough[] = {0, 0.05f, 0.1f, 0.3f};
    uint64_t           rng = 0x6a09e667f3bcc909ULL;
    for (size_t r = 0; r < sizeof rough / sizeof rough[0]; r++) {
        rt_bsdf b = {{1, 1, 1}, 1, rough[r], 1};
        double  alpha = (double)rough[r] * rough[r], worst = 0;
        alpha = alpha > 1e-3 ? alpha : 1e-3;
        double a2 = alpha * alpha;
        for (int k = 0; k < 20000; k++) {
            double theta = 6 * alpha * rnd(&rng), phi = 2 * PI_D * rnd(&rng);
            v3     wi = {(float)(sin(theta) * cos(phi)), (float)(sin(theta) * sin(phi)),
                         (float)cos(theta)};
            float  f[3], pdf;
            REQUIRE(rt_bsdf_eval(&b, (v3){0, 0, 1}, wi, f, &pdf));
            double hx = wi.x, hy = wi.y, hz = (double)wi.z + 1,
                   len = sqrt(hx * hx + hy * hy + hz * hz);
            hx /= len, hy /= len, hz /= len;
            double k2 = hx * hx + hy * hy + a2 * hz * hz, d = a2 / (PI_D * k2 * k2);
            double rel = fabs(pdf - d / 4) / (d / 4);
            worst = rel > worst ? rel : worst;
        }
        CHECKF(worst < 2e-3, "roughness %g: pdf off D / 4 by up to %.4g (relative)",
               (double)rough[r], worst);
    }
}

/* Values known in closed form. Near a mirror (roughness 0) the specular
 * layers reflect Schlick's Fresnel, F0 + (1 - F0) (1 - cos)^5: the metal
 * its base colour at normal incidence, the dielectric layer alone (base 0)
 * 0.04 there and more toward grazing. At wo = wi = n, G2 = 1 and
 * D = 1 / (pi alpha^2), so f = F0 / (4 pi alpha^2), the multiple-scattering
 * term being negligible there (under 0.1% at these roughnesses). */
static void
case_reference(const char *arg)
{
    (void)arg;
    static const float cos_o[] = {1, 0.7f, 0.3f, 0.1f};
    uint64_t           rng = 0x3c6ef372fe94f82bULL;
    rt_bsdf            metal = {{0.9f, 0.6f, 0.3f}, 1, 0, 1};
    rt_bsdf            layer = {{0, 0, 0}, 0, 0, 1};
    float              tab[3];
    double             est[3];
    rt_bsdf_albedo(&metal, 1, tab);
    albedo_estimate(&metal, 1, 100, &rng, est, NULL);
    for (int c = 0; c < 3; c++) {
        CHECKF(fabsf(tab[c] - metal.base[c]) < 0.005f, "smooth metal channel %d: albedo %.5f", c,
               tab[c]);
        CHECKF(fabs(est[c] - metal.base[c]) < 0.005, "smooth metal channel %d: estimate %.5f", c,
               est[c]);
    }
    for (size_t k = 0; k < sizeof cos_o / sizeof cos_o[0]; k++) {
        double m = 1 - cos_o[k], schlick = 0.04 + 0.96 * m * m * m * m * m;
        rt_bsdf_albedo(&layer, cos_o[k], tab);
        albedo_estimate(&layer, cos_o[k], 100, &rng, est, NULL);
        CHECKF(fabs(tab[0] - schlick) < 0.01 && fabs(est[0] - schlick) < 0.01,
               "smooth dielectric layer, cos_o %.2f: albedo %.5f, estimate %.5f, Schlick %.5f",
               (double)cos_o[k], tab[0], est[0], schlick);
    }

    static const float rough[] = {0.2f, 0.4f};
    v3                 n = {0, 0, 1};
    for (size_t r = 0; r < 2; r++) {
        double alpha = (double)rough[r] * rough[r], d = 1 / (PI_D * alpha * alpha);
        float  f[3], pdf;
        metal.roughness = layer.roughness = rough[r];
        REQUIRE(rt_bsdf_eval(&metal, n, n, f, &pdf));
        for (int c = 0; c < 3; c++)
            CHECKF(fabs(f[c] / (metal.base[c] * d / 4) - 1) < 0.01,
                   "metal roughness %.1f channel %d: f(n, n) %.6g, F0 D / 4 %.6g", (double)rough[r],
                   c, f[c], metal.base[c] * d / 4);
        REQUIRE(rt_bsdf_eval(&layer, n, n, f, &pdf));
        CHECKF(fabs(f[0] / (0.04 * d / 4) - 1) < 0.01,
               "dielectric layer roughness %.1f: f(n, n) %.6g, 0.04 D / 4 %.6g", (double)rough[r],
               f[0], 0.04 * d / 4);
    }
}

/* rt_sincos_turn() against libm in double over a fine grid of [0, 1) and
 * at the quarter turns, where its polynomials hand over; and the cosine
 * hemisphere it builds stays on the unit sphere, above the horizon. */
static void
case_sincos(const char *arg)
{
    (void)arg;
    double worst = 0, worst_len = 0;
    for (int i = 0; i <= 1 << 20; i++) {
        float u = i == 1 << 20 ? 0x1.fffffep-1f : (float)i / (1 << 20), s, c;
        rt_sincos_turn(u, &s, &c);
        worst = fmax(worst, fmax(fabs(s - sin(2 * PI_D * u)), fabs(c - cos(2 * PI_D * u))));
        float u2[2] = {(float)(((uint64_t)i * 7919) % (1 << 20)) / (1 << 20), u};
        v3    d = rt_cosine_hemisphere(u2);
        worst_len = fmax(worst_len, fabs(v3_len(d) - 1));
        CHECK(d.z >= 0);
    }
    CHECKF(worst < 3e-7, "sin/cos of 2 pi u off by %g", worst);
    CHECKF(worst_len < 1e-6, "cosine hemisphere direction's length off by %g", worst_len);
}

static const rt_test_case cases[] = {
    {"determinism", case_determinism},
    {"kept", case_kept},
    {"range", case_range},
    {"stratification", case_stratification},
    {"uniformity", case_uniformity},
    {"white_furnace", case_white_furnace},
    {"grey_furnace", case_grey_furnace},
    {"energy", case_energy},
    {"sample_eval", case_sample_eval},
    {"pdf_integral", case_pdf_integral},
    {"pdf_histogram", case_pdf_histogram},
    {"reciprocity", case_reciprocity},
    {"horizon", case_horizon},
    {"extremes", case_extremes},
    {"clamped", case_clamped},
    {"near_specular", case_near_specular},
    {"reference", case_reference},
    {"sincos", case_sincos},
    {NULL, NULL},
};

int
main(int argc, char **argv)
{
    return rt_test_main(cases, argc, argv);
}
