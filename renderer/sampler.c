/* Shuffled, Owen-scrambled Sobol pairs (see rt_sampler.h). */
#include "rt_sampler.h"

#include <pthread.h>
#include <string.h>

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

static inline uint32_t
reverse_bits(uint32_t x)
{
    x = __builtin_bswap32(x); /* bytes, then nibbles, pairs and bits within them */
    x = ((x & 0x0f0f0f0fU) << 4) | ((x & 0xf0f0f0f0U) >> 4);
    x = ((x & 0x33333333U) << 2) | ((x & 0xccccccccU) >> 2);
    x = ((x & 0x55555555U) << 1) | ((x & 0xaaaaaaaaU) >> 1);
    return x;
}

/* Laine and Karras's hash of bit-reversed x (constants from Burley 2020):
 * adding the seed and xoring products with even constants only ever carry
 * from lower bits to higher ones, so on reversed bits each bit flips
 * depending only on the seed and the bits above it in x: an Owen scramble
 * of x is reverse_bits(lk(reverse_bits(x), seed)). */
static inline uint32_t
lk(uint32_t x, uint32_t seed)
{
    x += seed;
    x ^= x * 0x6c50b47cU;
    x ^= x * 0xb82f1e52U;
    x ^= x * 0xc7afe638U;
    x ^= x * 0x8d22f6e6U;
    return x;
}

/* Sobol's second dimension, bit-reversed: the xor of the reversed
 * direction numbers of i's set bits, 1, 3, 5, 15, ... (v_{k+1} = v_k ^
 * (v_k << 1): the reversal of v_1 = 2^31, v_{k+1} = v_k ^ (v_k >> 1),
 * primitive polynomial x + 1). The first dimension reversed is i itself. */
static uint32_t
sobol1_reversed_slow(uint32_t i)
{
    uint32_t r = 0;
    for (uint32_t v = 1; i; i >>= 1, v ^= v << 1)
        if (i & 1)
            r ^= v;
    return r;
}

/* The same, a byte at a time: the map is linear over GF(2) (an xor of one
 * value per set bit), so it is the xor of its values on i's four bytes,
 * tabulated once. The bit loop above, up to 32 branches on a scrambled
 * index, ran per dimension of every sample. */
static uint32_t       sobol1_bytes[4][256];
static pthread_once_t sobol1_once = PTHREAD_ONCE_INIT;

static void
sobol1_init(void)
{
    for (uint32_t b = 0; b < 4; b++)
        for (uint32_t v = 0; v < 256; v++)
            sobol1_bytes[b][v] = sobol1_reversed_slow(v << (8 * b));
}

static inline uint32_t
sobol1_reversed(uint32_t i)
{
    return sobol1_bytes[0][i & 0xff] ^ sobol1_bytes[1][(i >> 8) & 0xff] ^
           sobol1_bytes[2][(i >> 16) & 0xff] ^ sobol1_bytes[3][i >> 24];
}

static float
unit(uint32_t x)
{
    return (float)(x >> 8) * 0x1p-24f; /* 24 bits: never rounds up to 1 */
}

static uint32_t
pixel_hash(uint64_t seed, uint32_t px, uint32_t py)
{
    uint32_t h = mix32((uint32_t)seed ^ mix32((uint32_t)(seed >> 32) + 0x9e3779b9U));
    return mix32(h ^ mix32(px + mix32(py + 0x632be5abU)));
}

void
rt_sampler_start(rt_sampler *s, uint64_t seed, uint32_t px, uint32_t py, uint32_t index)
{
    s->pixel = pixel_hash(seed, px, py);
    s->index_reversed = reverse_bits(index);
    s->pair = 0;
    s->kept = NULL;
    pthread_once(&sobol1_once, sobol1_init);
}

void
rt_sampler_pixel_init(rt_sampler_pixel *p, uint64_t seed, uint32_t px, uint32_t py)
{
    p->hash = pixel_hash(seed, px, py);
    p->known = 0;
    pthread_once(&sobol1_once, sobol1_init);
}

void
rt_sampler_start_kept(rt_sampler *s, rt_sampler_pixel *p, uint32_t index)
{
    s->pixel = p->hash;
    s->index_reversed = reverse_bits(index);
    s->pair = 0;
    s->kept = p;
}

/* The next pair's seeds: its own, then each coordinate's, a hash of its
 * own (a scramble needs every bit of its seed random: a cheaper
 * derivation, an odd multiple, correlated neighbouring pairs measurably).
 * From the pixel's kept seeds where an earlier sample made them; else made
 * into buf, and kept when they are the pixel's next. seeds[k] for every k
 * below `known` was made from this pixel's hash, whoever made it; drawing
 * pairs in order from 0, as every sample does, is what fills them. */
static inline const uint32_t *
pair_seeds(rt_sampler *s, uint32_t buf[3])
{
    uint32_t          pair = s->pair++;
    rt_sampler_pixel *p = s->kept;
    if (p && pair < p->known)
        return p->seeds[pair];
    buf[0] = mix32(s->pixel + pair * 0x9e3779b9U);
    buf[1] = mix32(buf[0] ^ 0x2c1b3c6dU);
    buf[2] = mix32(buf[0] ^ 0x8da6b343U);
    if (p && pair == p->known && pair < RT_SAMPLER_KEPT_PAIRS) {
        memcpy(p->seeds[pair], buf, sizeof p->seeds[pair]);
        p->known++;
    }
    return buf;
}

/* The index of this sample in the pair's own order of the pixel's samples
 * (an Owen scramble of the index, so pairs do not line up with each
 * other), bit-reversed back: the first Sobol dimension's point, reversed. */
static inline uint32_t
pair_index(const rt_sampler *s, uint32_t pair_seed)
{
    return reverse_bits(lk(s->index_reversed, pair_seed));
}

void
rt_sampler_2d(rt_sampler *s, float u[2])
{
    /* Each coordinate is a Sobol dimension, Owen-scrambled; computed
     * bit-reversed, where the scramble works, so reversals cancel but one. */
    uint32_t        buf[3];
    const uint32_t *seed = pair_seeds(s, buf);
    uint32_t        i = pair_index(s, seed[0]);
    u[0] = unit(reverse_bits(lk(i, seed[1])));
    u[1] = unit(reverse_bits(lk(sobol1_reversed(i), seed[2])));
}

float
rt_sampler_1d(rt_sampler *s)
{
    uint32_t        buf[3];
    const uint32_t *seed = pair_seeds(s, buf);
    return unit(reverse_bits(lk(pair_index(s, seed[0]), seed[1])));
}
