/* The string hash, keyed per process.
 *
 * Each 16-byte block is folded by one 64x64->128-bit multiply (low half xor
 * high half) of its two words, each xored with a secret key; the folds of
 * different blocks do not depend on each other, so they run in parallel,
 * and a rotate-xor chains them. Texture paths are 30-90 bytes, so this
 * costs a handful of multiplies and little latency. A final fold mixes
 * every input bit into both ends of the result: low bits pick the slot,
 * the top bits the sharded lock's shard, bits 32-37 the lock-free index's.
 *
 * Why keyed (texture names come from scene files written by others):
 * - With known keys a block whose first word equals its key folds to 0
 *   whatever its second word: 2^64 blocks with one hash. The unkeyed hash
 *   this replaces had such a family (its first key, db 28 b4 a0 d1 7e 03
 *   e7, followed by any 8 bytes), so a scene could name thousands of
 *   textures with one hash and make every table's probing quadratic.
 *   Here the keys are secret, drawn from getrandom() when the process
 *   starts: finding such a block means guessing a 64-bit key.
 * - The keys advance by secret odd steps from block to block, so a block's
 *   fold depends on its position. With one key pair for every block, the
 *   rotate-xor chain would repeat after 64 blocks (29 * 64 = 0 mod 64) and
 *   a block at i and its copy at i + 64 would cancel, for any keys: a
 *   collision family in strings over a kilobyte.
 * tests/unit/ustr_hash_test.c checks avalanche, both families, the seed
 * and a flood of every lock strategy.
 * USTR_HASH_SEED (a number, decimal or 0x hex) in the environment fixes
 * the keys, for a run that must probe the same slots each time (a table's
 * contents and every result are the same either way: only where strings
 * sit in an index depends on the keys). A fixed seed is a known key: do not
 * set it where scenes are untrusted. */
#define _DEFAULT_SOURCE /* getrandom() */
#include "ustring_internal.h"

#include <errno.h>
#include <stdalign.h>
#include <stdlib.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

/* The keys (what each one keys: ustr__hash() in ustring_internal.h).
 * Written once, by keys_init() before main() or by ustr__hash_seed_set()
 * in tests, before any thread can hash. */
uint64_t        ustr__hash_keys[8];
static uint64_t seed_used;

static uint64_t
splitmix64(uint64_t *x)
{
    uint64_t z = *x = ustr__add_wrap(*x, 0x9E3779B97F4A7C15u);
    z = ustr__mul_wrap(z ^ (z >> 30), 0xBF58476D1CE4E5B9u);
    z = ustr__mul_wrap(z ^ (z >> 27), 0x94D049BB133111EBu);
    return z ^ (z >> 31);
}

void
ustr__hash_seed_set(uint64_t seed)
{
    uint64_t x = seed_used = seed;
    for (int i = 0; i < 8; i++)
        ustr__hash_keys[i] = splitmix64(&x);
    ustr__hash_keys[3] |= 1, ustr__hash_keys[4] |= 1;
}

uint64_t
ustr_hash_seed(void)
{
    return seed_used;
}

/* The seed from USTR_HASH_SEED, else from getrandom(), else (no
 * getrandom(): another libc, a seccomp filter) from the clock, the process
 * and where ASLR put things. Before main(): so no thread can hash before
 * the keys are set, and no call pays for a check. */
__attribute__((constructor)) static void
keys_init(void)
{
    const char *fixed = getenv("USTR_HASH_SEED");
    char       *end;
    errno = 0;
    uint64_t seed = fixed && *fixed ? strtoull(fixed, &end, 0) : 0;
    if (fixed && *fixed && errno == 0 && *end == '\0') {
        ustr__hash_seed_set(seed);
        return;
    }
    size_t got = 0;
    while (got < sizeof seed) {
        ssize_t n = getrandom((char *)&seed + got, sizeof seed - got, 0);
        if (n > 0)
            got += (size_t)n;
        else if (n < 0 && errno != EINTR)
            break;
    }
    if (got < sizeof seed) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        seed =
            ustr__add_wrap(ustr__mul_wrap((uint64_t)ts.tv_sec, 1000000000u), (uint64_t)ts.tv_nsec);
        seed ^= (uint64_t)getpid() << 32 ^ (uint64_t)(uintptr_t)&ts ^
                (uint64_t)(uintptr_t)ustr__hash_keys << 7;
    }
    ustr__hash_seed_set(seed);
}

uint64_t
ustr_hash_bytes(const char *s, size_t len)
{
    return ustr__hash(s, len);
}
