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
 * Plain values: a sampler lives on one thread's stack. */
#ifndef RT_SAMPLER_H
#define RT_SAMPLER_H

#include <stdint.h>

typedef struct rt_sampler {
    uint32_t pixel;          /* hash of the seed and the pixel */
    uint32_t index_reversed; /* the sample within the pixel, bits reversed */
    uint32_t pair;           /* the next pair of dimensions */
} rt_sampler;

void rt_sampler_start(rt_sampler *s, uint64_t seed, uint32_t px, uint32_t py, uint32_t index);

/* The next pair of dimensions, each in [0, 1). */
void rt_sampler_2d(rt_sampler *s, float u[2]);

/* The next dimension on its own (it takes a pair's place: the first
 * coordinate of the pair rt_sampler_2d() would have drawn), in [0, 1). */
float rt_sampler_1d(rt_sampler *s);

#endif
