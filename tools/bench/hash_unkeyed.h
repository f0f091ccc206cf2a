/* The string hash ustring used before it was keyed (issue 14), kept only
 * as a reference: hash-bench's baseline, and the tests' proof that the
 * collision families they build do collide under it. Never used to index
 * anything. Its fault: with fixed, public keys, a 16-byte block whose first
 * 8 bytes equal K1 folds to 0 whatever its other 8 bytes are. */
#ifndef RT_TOOLS_HASH_UNKEYED_H
#define RT_TOOLS_HASH_UNKEYED_H

#include "ustring_internal.h" /* the same primitives: loads, tail, fold, rotate */

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define HASH_UNKEYED_K1 0xE7037ED1A0B428DBu

static inline uint64_t
hash_unkeyed(const char *s, size_t len)
{
    uint64_t h = 0x9E3779B97F4A7C15u ^ len;
    size_t   n = len;
    for (; n > 16; s += 16, n -= 16)
        h = ustr__rotl(h, 29) ^ ustr__fold(ustr__load64(s) ^ HASH_UNKEYED_K1,
                                           ustr__load64(s + 8) ^ 0xA0761D6478BD642Fu);
    uint64_t a, b;
    ustr__tail_words(s, n, &a, &b);
    h = ustr__rotl(h, 29) ^ ustr__fold(a ^ 0x8EBC6AF09C88C6E3u, b ^ 0xD6E8FEB86659FD93u);
    return ustr__fold(h ^ 0xC2B2AE3D27D4EB4Fu, h ^ HASH_UNKEYED_K1);
}

/* Name i of the collision family: K1's 8 bytes, 8 bytes from i (letters
 * A-P), "/tex.png": 24 bytes, every one with the same unkeyed hash. */
#define HASH_UNKEYED_FAMILY_LEN 24

static inline void
hash_unkeyed_family_name(uint64_t i, char name[HASH_UNKEYED_FAMILY_LEN])
{
    uint64_t k1 = HASH_UNKEYED_K1;
    memcpy(name, &k1, 8); /* little-endian: the bytes the hash loaded as K1 */
    for (int b = 0; b < 8; b++)
        name[8 + b] = (char)('A' + (i >> (4 * b) & 15));
    memcpy(name + 16, "/tex.png", 8);
}

#endif
