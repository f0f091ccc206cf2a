/* The keyed string hash (ustring/hash.c, issue 14): avalanche, the two
 * collision families it was built against, the per-process seed and
 * USTR_HASH_SEED, and a flood: names that all collide under the former hash
 * intern in time linear in their number. Cases that take an argument run
 * once per lock strategy (its name). */
#define _POSIX_C_SOURCE 200809L

#include "check.h"
#include "hash_unkeyed.h"
#include "time_testing.h"
#include "ustr_testing.h"
#include "ustring.h"
#include "ustring_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static uint64_t
rng(uint64_t *x)
{
    *x ^= *x >> 12, *x ^= *x << 25, *x ^= *x >> 27;
    return *x * 0x2545F4914F6CDD1DULL;
}

static int
cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Distinct values among n, sorting them in place. */
static size_t
distinct(uint64_t *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_u64);
    size_t d = n > 0;
    for (size_t i = 1; i < n; i++)
        d += v[i] != v[i - 1];
    return d;
}

/* Flipping any input bit flips each output bit with probability 1/2: over
 * 2,000 random inputs of each of several lengths (the tail alone, one block
 * and a tail, four blocks and a tail), every (input bit, output bit) rate
 * within 0.5 +- 0.06, 5.4 standard deviations, for a few seeds. */
static void
case_avalanche(const char *arg)
{
    (void)arg;
    static const size_t lens[] = {7, 16, 24, 70};
    enum { SAMPLES = 2000, MAXLEN = 70 };
    uint64_t x = 0x1234567;
    for (uint64_t seed = 1; seed <= 3; seed++) {
        ustr__hash_seed_set(seed);
        for (size_t li = 0; li < sizeof lens / sizeof *lens; li++) {
            size_t    len = lens[li];
            uint32_t *flips = calloc(len * 8 * 64, sizeof *flips);
            REQUIRE(flips != NULL);
            for (int s = 0; s < SAMPLES; s++) {
                unsigned char buf[MAXLEN];
                for (size_t i = 0; i < len; i++)
                    buf[i] = (unsigned char)rng(&x);
                uint64_t h = ustr_hash_bytes((const char *)buf, len);
                for (size_t bit = 0; bit < len * 8; bit++) {
                    buf[bit / 8] ^= (unsigned char)(1u << bit % 8);
                    uint64_t d = h ^ ustr_hash_bytes((const char *)buf, len);
                    buf[bit / 8] ^= (unsigned char)(1u << bit % 8);
                    for (int o = 0; o < 64; o++)
                        flips[bit * 64 + (size_t)o] += (uint32_t)(d >> o & 1);
                }
            }
            double worst = 0;
            for (size_t i = 0; i < len * 8 * 64; i++) {
                double dev = (double)flips[i] / SAMPLES - 0.5;
                worst = dev * dev > worst * worst ? dev : worst;
            }
            if (!(worst > -0.06 && worst < 0.06))
                fprintf(stderr, "seed %llu, %zu bytes: a bit flips with rate %.3f\n",
                        (unsigned long long)seed, len, 0.5 + worst);
            CHECK(worst > -0.06 && worst < 0.06);
            free(flips);
        }
    }
}

static void
family_name(uint64_t i, char name[24])
{
    hash_unkeyed_family_name(i, name);
}

/* The former hash's family spreads: 100,000 names, one hash under the
 * former hash, get 100,000 hashes and fill the 2^18 slots' low bits as
 * random values would (82,000 expected; at least 78,000). */
static void
case_old_family(const char *arg)
{
    (void)arg;
    enum { N = 100000 };
    uint64_t *h = malloc(N * sizeof *h), *old = malloc(N * sizeof *old);
    REQUIRE(h && old);
    for (uint64_t i = 0; i < N; i++) {
        char name[24];
        family_name(i, name);
        h[i] = ustr_hash_bytes(name, sizeof name);
        old[i] = hash_unkeyed(name, sizeof name);
    }
    CHECK_EQ_U64(distinct(old, N), 1); /* the attack is real */
    size_t full = distinct(h, N);
    for (size_t i = 0; i < N; i++)
        h[i] &= ((uint64_t)1 << 18) - 1;
    size_t slots = distinct(h, N);
    fprintf(stderr, "distinct hashes %zu, distinct low 18 bits %zu\n", full, slots);
    CHECK_EQ_U64(full, N);
    CHECK(slots >= 78000);
    free(h), free(old);
}

/* A block and its copy 64 blocks later cancel in a rotate-xor chain with
 * the same keys at every position: X Z..Z X Z and Y Z..Z Y Z (blocks 0 and
 * 64 of 66, the last being the tail, which has keys of its own) collide
 * under the former hash for any X and Y, and not here. */
static void
case_period_family(const char *arg)
{
    (void)arg;
    enum { LEN = 66 * 16, PAIRS = 1000 };
    char    *a = malloc(LEN), *b = malloc(LEN);
    uint64_t x = 99, same_old = 0, same_new = 0;
    REQUIRE(a && b);
    memset(a, 'z', LEN);
    memset(b, 'z', LEN);
    for (int p = 0; p < PAIRS; p++) {
        for (int i = 0; i < 16; i++) {
            a[i] = a[64 * 16 + i] = (char)rng(&x);
            b[i] = b[64 * 16 + i] = (char)rng(&x);
        }
        same_old += hash_unkeyed(a, LEN) == hash_unkeyed(b, LEN);
        same_new += ustr_hash_bytes(a, LEN) == ustr_hash_bytes(b, LEN);
    }
    CHECK_EQ_U64(same_old, PAIRS); /* the family is real */
    CHECK_EQ_U64(same_new, 0);
    free(a), free(b);
}

/* USTR_HASH_SEED fixes the seed (CTest sets it to 0x2a for this case): the
 * same hashes as re-keying from 42 by hand, other ones under seed 43. */
static void
case_fixed_seed(const char *arg)
{
    (void)arg;
    CHECK_EQ_U64(ustr_hash_seed(), 42);
    uint64_t h = ustr_hash_bytes("textures/brick.png", 18);
    ustr__hash_seed_set(43);
    CHECK(ustr_hash_bytes("textures/brick.png", 18) != h);
    ustr__hash_seed_set(42);
    CHECK_EQ_U64(ustr_hash_bytes("textures/brick.png", 18), h);
}

/* Without USTR_HASH_SEED each process draws its own: two runs of this
 * program ("print_seed") print different seeds. */
static void
case_print_seed(const char *arg)
{
    (void)arg;
    printf("%llu\n", (unsigned long long)ustr_hash_seed());
}

static void
case_random_seed(const char *arg)
{
    (void)arg;
    unsigned long long seed[2] = {0, 0};
    char               self[4096], cmd[4200];
    ssize_t            n = readlink("/proc/self/exe", self, sizeof self - 1);
    REQUIRE(n > 0);
    self[n] = '\0';
    snprintf(cmd, sizeof cmd, "env -u USTR_HASH_SEED '%s' print_seed", self);
    for (int r = 0; r < 2; r++) {
        FILE *p = popen(cmd, "r");
        REQUIRE(p != NULL);
        CHECK(fscanf(p, "%llu", &seed[r]) == 1);
        CHECK_EQ_INT(pclose(p), 0);
    }
    CHECK(seed[0] != seed[1]);
}

/* Seconds to intern n names made by make(i) into a fresh table; gives up
 * past `limit` seconds, returning what it took so far. */
static double
intern_secs(ustr_lock lock, size_t n, void (*make)(uint64_t i, char name[24]), double limit)
{
    ustr_table *t;
    REQUIRE(ustr_table_create(&(ustr_config){.lock = lock}, &t) == USTR_OK);
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (uint64_t i = 0; i < n; i++) {
        char name[24];
        make(i, name);
        REQUIRE(ustr_table_intern(t, name, sizeof name) != NULL);
        if (i % 1024 == 1023 && test_secs_since(&t0) > limit)
            break;
    }
    double secs = test_secs_since(&t0);
    ustr_table_destroy(t);
    return secs;
}

/* Random names of the family's length: the baseline. */
static void
random_name(uint64_t i, char name[24])
{
    uint64_t x = (i + 1) * 0x9E3779B97F4A7C15ULL, w[3] = {rng(&x), rng(&x), rng(&x)};
    memcpy(name, w, 24);
}

/* The flood: 100,000 names of the former hash's family intern about as
 * fast as 100,000 random names (under the former hash, the family's probes
 * grow with every name: some 5e9 comparisons, minutes instead of tens of
 * milliseconds). Timed, but against a bound 5x the baseline where failure
 * means 100x or more; the best of three runs each. */
static void
case_flood(const char *arg)
{
    ustr_lock lock = ustr_test_lock(arg);
    enum { N = 100000 };
    double fam = 1e9, rnd = 1e9;
    for (int r = 0; r < 3; r++) {
        double b = intern_secs(lock, N, random_name, 1e9);
        double f = intern_secs(lock, N, family_name, 5 * b); /* given up past 5x */
        fam = f < fam ? f : fam;
        rnd = b < rnd ? b : rnd;
    }
    fprintf(stderr, "%s: family %.1f ms, random %.1f ms\n", arg, fam * 1e3, rnd * 1e3);
    CHECK(fam < 5 * rnd);
}

int
main(int argc, char **argv)
{
    static const rt_test_case cases[] = {
        {"avalanche", case_avalanche},
        {"old_family", case_old_family},
        {"period_family", case_period_family},
        {"fixed_seed", case_fixed_seed},
        {"print_seed", case_print_seed},
        {"random_seed", case_random_seed},
        {"flood", case_flood},
        {NULL, NULL},
    };
    return rt_test_main(cases, argc, argv);
}
