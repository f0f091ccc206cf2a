/* The string hash. Each 16-byte block is folded by one 64x64->128-bit
 * multiply (low half xor high half); the folds of different blocks do not
 * depend on each other, so they run in parallel, and only a rotate-xor
 * chains them, which keeps block order significant. Texture paths are
 * 30-90 bytes, so this costs a handful of multiplies and little latency.
 * A final fold mixes every input bit into both ends of the result: low bits
 * pick the slot, high bits pick the shard.
 *
 * The key constants have bytes >= 0x80 in every position, so a word of text
 * xor a key is never 0, which would blind the multiply to the other word. */
#include "ustring_internal.h"

__extension__ typedef unsigned __int128 u128;

#define K0 0x9E3779B97F4A7C15u
#define K1 0xE7037ED1A0B428DBu
#define K2 0xA0761D6478BD642Fu
#define K3 0x8EBC6AF09C88C6E3u
#define K4 0xD6E8FEB86659FD93u
#define K5 0xC2B2AE3D27D4EB4Fu

static inline uint64_t
load64(const char *p)
{
    uint64_t w;
    memcpy(&w, p, sizeof w); /* unaligned-safe; compiles to one load */
    return w;
}

static inline uint64_t
load32(const char *p)
{
    uint32_t w;
    memcpy(&w, p, sizeof w);
    return w;
}

static inline uint64_t
fold(uint64_t x, uint64_t y)
{
    u128 p = (u128)x * y;
    return (uint64_t)p ^ (uint64_t)(p >> 64);
}

static inline uint64_t
rotl(uint64_t x, int r)
{
    return x << r | x >> (64 - r);
}

uint64_t
ustr_hash_bytes(const char *s, size_t len)
{
    uint64_t h = K0 ^ len;
    size_t   n = len;
    for (; n > 16; s += 16, n -= 16)
        h = rotl(h, 29) ^ fold(load64(s) ^ K1, load64(s + 8) ^ K2);
    /* The last 0..16 bytes, read with loads that may overlap rather than
     * byte by byte; the length, mixed in above, tells the cases apart. */
    uint64_t a = 0, b = 0;
    if (n >= 8) {
        a = load64(s);
        b = load64(s + n - 8);
    } else if (n >= 4) {
        a = load32(s);
        b = load32(s + n - 4);
    } else if (n > 0) {
        a = (uint64_t)(unsigned char)s[0] | (uint64_t)(unsigned char)s[n / 2] << 8 |
            (uint64_t)(unsigned char)s[n - 1] << 16;
    }
    h = rotl(h, 29) ^ fold(a ^ K3, b ^ K4);
    return fold(h ^ K5, h ^ K1);
}
