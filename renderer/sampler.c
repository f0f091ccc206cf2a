/* Shuffled, Owen-scrambled Sobol pairs (see rt_sampler.h). */
#include "rt_sampler.h"

/* A 32-bit hash with full avalanche (a "lowbias32"-style xorshift-multiply
 * mix): seeds for the scrambles. */
static uint32_t
mix32(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x7feb352dU;
    x ^= x >> 15;
    x *= 0x846ca68bU;
    x ^= x >> 16;
    return x;
}

static uint32_t
reverse_bits(uint32_t x)
{
    x = (x << 16) | (x >> 16);
    x = ((x & 0x00ff00ffU) << 8) | ((x & 0xff00ff00U) >> 8);
    x = ((x & 0x0f0f0f0fU) << 4) | ((x & 0xf0f0f0f0U) >> 4);
    x = ((x & 0x33333333U) << 2) | ((x & 0xccccccccU) >> 2);
    x = ((x & 0x55555555U) << 1) | ((x & 0xaaaaaaaaU) >> 1);
    return x;
}

/* An Owen scramble of x's bits, most significant first: each bit is
 * flipped or not depending only on the seed and the bits above it. On the
 * reversed bits, "above" becomes "below", and adding the seed and xoring
 * products with even constants only ever carry from lower bits to higher
 * ones (Laine and Karras's construction; constants from Burley 2020). */
static uint32_t
owen(uint32_t x, uint32_t seed)
{
    x = reverse_bits(x);
    x += seed;
    x ^= x * 0x6c50b47cU;
    x ^= x * 0xb82f1e52U;
    x ^= x * 0xc7afe638U;
    x ^= x * 0x8d22f6e6U;
    return reverse_bits(x);
}

/* Sobol's second dimension: the xor of the direction numbers of i's set
 * bits, v_1 = 2^31 and v_{k+1} = v_k ^ (v_k >> 1) (primitive polynomial
 * x + 1). The first dimension is the bit reversal of i. */
static uint32_t
sobol1(uint32_t i)
{
    uint32_t r = 0;
    for (uint32_t v = 1U << 31; i; i >>= 1, v ^= v >> 1)
        if (i & 1)
            r ^= v;
    return r;
}

static float
unit(uint32_t x)
{
    return (float)(x >> 8) * 0x1p-24f; /* 24 bits: never rounds up to 1 */
}

void
rt_sampler_start(rt_sampler *s, uint64_t seed, uint32_t px, uint32_t py, uint32_t index)
{
    uint32_t h = mix32((uint32_t)seed ^ mix32((uint32_t)(seed >> 32) + 0x9e3779b9U));
    s->pixel = mix32(h ^ mix32(px + mix32(py + 0x632be5abU)));
    s->index = index;
    s->pair = 0;
}

void
rt_sampler_2d(rt_sampler *s, float u[2])
{
    uint32_t seed = mix32(s->pixel ^ mix32(s->pair++ * 0x85ebca6bU + 1));
    /* The pair's own order of the pixel's samples, then its own scramble
     * of each coordinate: pairs do not line up with each other. */
    uint32_t i = owen(s->index, seed);
    u[0] = unit(owen(reverse_bits(i), mix32(seed + 1)));
    u[1] = unit(owen(sobol1(i), mix32(seed + 2)));
}

float
rt_sampler_1d(rt_sampler *s)
{
    float u[2];
    rt_sampler_2d(s, u);
    return u[0];
}
