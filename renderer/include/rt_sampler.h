/* Per-pixel sample sequences for the integrators: each pair of dimensions
 * is a shuffled, Owen-scrambled Sobol (0,2)-sequence (Burley, "Practical
 * Hash-based Owen Scrambling", JCGT 2020), seeded by the render's seed, the
 * pixel and the pair's number. So a pixel's samples depend on nothing but
 * those (not on threads, tiles or the order pixels are drawn), the first
 * 2^k samples of a pixel stratify every pair of dimensions, and pixels and
 * pairs are decorrelated from each other.
 *
 *     rt_sampler s;
 *     rt_sampler_start(&s, seed, px, py, i);    // sample i of pixel (px, py)
 *     float lens[2], pick = rt_sampler_1d(&s);
 *     rt_sampler_2d(&s, lens);                  // the next pair
 *
 * or, for many samples of a pixel, rt_sampler_pixel_init() and
 * rt_sampler_start_kept() (below).
 *
 * Plain values, no locks: a sampler lives on one thread's stack, and a kept
 * sampler writes into its pixel's rt_sampler_pixel (below). */
#ifndef RT_SAMPLER_H
#define RT_SAMPLER_H

#include <stdint.h>

/* What every sample of one pixel shares: the seeds of its pairs of
 * dimensions (three hashes a pair, of the pixel and the pair's number
 * only), made by the first sample to reach a pair and kept for the rest.
 * Samplers started from it write into it: one thread at a time uses it,
 * and it outlives every sampler started from it. */
#define RT_SAMPLER_KEPT_PAIRS 32
typedef struct rt_sampler_pixel {
    uint32_t hash;  /* of the seed and the pixel */
    uint32_t known; /* pairs whose seeds are below */
    uint32_t seeds[RT_SAMPLER_KEPT_PAIRS][3];
} rt_sampler_pixel;

typedef struct rt_sampler {
    uint32_t          pixel;          /* hash of the seed and the pixel */
    uint32_t          index_reversed; /* the sample within the pixel, bits reversed */
    uint32_t          pair;           /* the next pair of dimensions */
    rt_sampler_pixel *kept;           /* NULL: every pair's seeds made afresh */
} rt_sampler;

void rt_sampler_start(rt_sampler *s, uint64_t seed, uint32_t px, uint32_t py, uint32_t index);

/* The same sequences, for a renderer that draws many samples of a pixel:
 * rt_sampler_pixel_init() once per pixel, then rt_sampler_start_kept() for
 * each of its samples, which reuses the seeds earlier samples made (made
 * afresh at every sample, they were a fifth to a quarter of the sampler's
 * instructions). The values drawn are those of rt_sampler_start(s, seed,
 * px, py, index), in whatever order the pixel's samples are drawn, even
 * interleaved; the first RT_SAMPLER_KEPT_PAIRS pairs are kept, later ones
 * made afresh. rt_sampler_start_kept() needs p made by
 * rt_sampler_pixel_init() (which also sets up the sampler's tables). */
void rt_sampler_pixel_init(rt_sampler_pixel *p, uint64_t seed, uint32_t px, uint32_t py);
void rt_sampler_start_kept(rt_sampler *s, rt_sampler_pixel *p, uint32_t index);

/* The next pair of dimensions, each in [0, 1). */
void rt_sampler_2d(rt_sampler *s, float u[2]);

/* The next dimension on its own (it takes a pair's place: the first
 * coordinate of the pair rt_sampler_2d() would have drawn), in [0, 1). */
float rt_sampler_1d(rt_sampler *s);

#endif
