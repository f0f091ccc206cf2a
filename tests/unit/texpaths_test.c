/* texpath_make(): the contract in tools/gen/texpaths.h. */
#include "check.h"
#include "texpaths.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define N_UNIQUE 200000 /* the cold set of tools/compare/compare-oiio */

/* Every path of the first `n` of `seed`, TEXPATH_MAX_LEN + 1 bytes apart. */
static char *
paths_make(uint64_t seed, size_t n)
{
    char *all = malloc(n * (TEXPATH_MAX_LEN + 1));
    REQUIRE(all != NULL);
    for (size_t i = 0; i < n; i++)
        texpath_make(seed, i, all + i * (TEXPATH_MAX_LEN + 1), TEXPATH_MAX_LEN + 1);
    return all;
}

static void
case_lengths(const char *arg)
{
    (void)arg;
    char   buf[TEXPATH_MAX_LEN + 1];
    size_t lo = SIZE_MAX, hi = 0;
    for (uint64_t seed = 1; seed <= 3; seed++) {
        for (uint64_t i = 0; i < 300000; i++) {
            size_t n = texpath_make(seed, i, buf, sizeof buf);
            CHECK_EQ_INT(strlen(buf), n);
            lo = n < lo ? n : lo;
            hi = n > hi ? n : hi;
        }
    }
    /* Indices past the unique range follow the same templates. */
    for (uint64_t i = UINT64_MAX - 1000; i != 0; i++) {
        size_t n = texpath_make(7, i, buf, sizeof buf);
        lo = n < lo ? n : lo;
        hi = n > hi ? n : hi;
    }
    CHECK(lo >= TEXPATH_MIN_LEN);
    CHECK(hi <= TEXPATH_MAX_LEN);
}

static void
case_determinism(const char *arg)
{
    (void)arg;
    char a[TEXPATH_MAX_LEN + 1], b[TEXPATH_MAX_LEN + 1];
    for (uint64_t i = 0; i < 10000; i++) {
        uint64_t idx = i * UINT64_C(0x9E3779B97F4A7C15); /* all over the range */
        texpath_make(42, idx, a, sizeof a);
        texpath_make(99, idx, b, sizeof b); /* in between, to catch hidden state */
        texpath_make(42, idx, b, sizeof b);
        CHECK_EQ_STR(a, b);
    }
    /* Pinned, so that a change of output across versions or platforms
     * shows: benchmark results are only comparable on the same strings. */
    texpath_make(1, 0, a, sizeof a);
    CHECK_EQ_STR(a, "/prod/shows/ember/assets/prop/sword_78/tex/v001/sword_78_basecolor.1022.tx");
    texpath_make(1, 199999, a, sizeof a);
    CHECK_EQ_STR(a, "textures/stone/limestone_475/limestone_475_specular_1k.exr");
}

static void
case_seeds_differ(const char *arg)
{
    (void)arg;
    char a[TEXPATH_MAX_LEN + 1], b[TEXPATH_MAX_LEN + 1];
    int  same = 0;
    for (uint64_t i = 0; i < 10000; i++) {
        texpath_make(1, i, a, sizeof a);
        texpath_make(2, i, b, sizeof b);
        same += strcmp(a, b) == 0;
    }
    CHECK_EQ_INT(same, 0);
}

static int
cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void
case_unique(const char *arg)
{
    (void)arg;
    char  *all = paths_make(1, N_UNIQUE);
    char **p = malloc(N_UNIQUE * sizeof *p);
    REQUIRE(p != NULL);
    for (size_t i = 0; i < N_UNIQUE; i++)
        p[i] = all + i * (TEXPATH_MAX_LEN + 1);
    qsort(p, N_UNIQUE, sizeof *p, cmp_str);
    int dups = 0;
    for (size_t i = 1; i < N_UNIQUE; i++) {
        if (strcmp(p[i - 1], p[i]) == 0) {
            if (dups++ < 5)
                fprintf(stderr, "duplicate: %s\n", p[i]);
        }
    }
    CHECK_EQ_INT(dups, 0);
    free(p);
    free(all);
}

static void
case_printable(const char *arg)
{
    (void)arg;
    char *all = paths_make(1, N_UNIQUE);
    int   bad = 0;
    for (size_t i = 0; i < N_UNIQUE; i++) {
        const char *s = all + i * (TEXPATH_MAX_LEN + 1);
        for (const char *c = s; *c; c++) {
            if (*c <= ' ' || *c > '~') {
                if (bad++ < 5)
                    fprintf(stderr, "index %zu: byte %d in \"%s\"\n", i, *c, s);
            }
        }
    }
    CHECK_EQ_INT(bad, 0);
    free(all);
}

/* cap works like snprintf()'s. */
static void
case_truncate(const char *arg)
{
    (void)arg;
    char full[TEXPATH_MAX_LEN + 1], small[10];
    memset(small, 'x', sizeof small);
    size_t n = texpath_make(5, 123, full, sizeof full);
    CHECK_EQ_INT(texpath_make(5, 123, small, sizeof small), n);
    CHECK_EQ_INT(strlen(small), sizeof small - 1);
    CHECK(memcmp(small, full, sizeof small - 1) == 0);
    CHECK_EQ_INT(texpath_make(5, 123, NULL, 0), n);
}

static const rt_test_case cases[] = {
    {"lengths", case_lengths},
    {"determinism", case_determinism},
    {"seeds", case_seeds_differ},
    {"unique", case_unique},
    {"printable", case_printable},
    {"truncate", case_truncate},
    {NULL, NULL},
};

int
main(int argc, char **argv)
{
    return rt_test_main(cases, argc, argv);
}
