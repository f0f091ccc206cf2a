/* Minimal test support: CHECK macros that print both expressions and both
 * values, and a main() that runs one named case, so each case is its own
 * CTest entry (see rt_add_test() in tests/CMakeLists.txt).
 *
 *   static void case_equal(const char *arg) { CHECK_EQ_INT(1 + 1, 2); }
 *   static const rt_test_case cases[] = {{"equal", case_equal}, {NULL, NULL}};
 *   int main(int argc, char **argv) { return rt_test_main(cases, argc, argv); }
 *
 * `arg` is the optional second command-line word (a lock strategy, say). */
#ifndef RT_TEST_CHECK_H
#define RT_TEST_CHECK_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct rt_test_case {
    const char *name;
    void (*run)(const char *arg);
} rt_test_case;

static int rt_test_failures;

#define RT_CHECK_FAIL_(fmt, ...)                                                                   \
    do {                                                                                           \
        fprintf(stderr, "%s:%d: " fmt "\n", __FILE__, __LINE__, __VA_ARGS__);                      \
        rt_test_failures++;                                                                        \
    } while (0)

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond))                                                                               \
            RT_CHECK_FAIL_("CHECK(%s) failed", #cond);                                             \
    } while (0)

#define CHECK_EQ_INT(a, b)                                                                         \
    do {                                                                                           \
        long long a_ = (long long)(a), b_ = (long long)(b);                                        \
        if (a_ != b_)                                                                              \
            RT_CHECK_FAIL_("CHECK_EQ_INT(%s, %s): %lld != %lld", #a, #b, a_, b_);                  \
    } while (0)

#define CHECK_EQ_U64(a, b)                                                                         \
    do {                                                                                           \
        uint64_t a_ = (uint64_t)(a), b_ = (uint64_t)(b);                                           \
        if (a_ != b_)                                                                              \
            RT_CHECK_FAIL_("CHECK_EQ_U64(%s, %s): %" PRIu64 " != %" PRIu64, #a, #b, a_, b_);       \
    } while (0)

#define CHECK_EQ_PTR(a, b)                                                                         \
    do {                                                                                           \
        const void *a_ = (const void *)(a), *b_ = (const void *)(b);                               \
        if (a_ != b_)                                                                              \
            RT_CHECK_FAIL_("CHECK_EQ_PTR(%s, %s): %p != %p", #a, #b, a_, b_);                      \
    } while (0)

#define CHECK_NE_PTR(a, b)                                                                         \
    do {                                                                                           \
        const void *a_ = (const void *)(a), *b_ = (const void *)(b);                               \
        if (a_ == b_)                                                                              \
            RT_CHECK_FAIL_("CHECK_NE_PTR(%s, %s): both %p", #a, #b, a_);                           \
    } while (0)

#define CHECK_EQ_STR(a, b)                                                                         \
    do {                                                                                           \
        const char *a_ = (a), *b_ = (b);                                                           \
        if (!a_ || !b_ || strcmp(a_, b_) != 0)                                                     \
            RT_CHECK_FAIL_("CHECK_EQ_STR(%s, %s): \"%s\" != \"%s\"", #a, #b, a_ ? a_ : "(null)",   \
                           b_ ? b_ : "(null)");                                                    \
    } while (0)

/* Floating-point closeness (tests that use them include <math.h>):
 * |a - b| <= tol * |b|, and |a - b| <= tol. */
#define CHECK_REL(a, b, tol)                                                                       \
    do {                                                                                           \
        double a_ = (double)(a), b_ = (double)(b), t_ = (double)(tol);                             \
        if (!(fabs(a_ - b_) <= t_ * fmax(fabs(b_), 1e-30)))                                        \
            RT_CHECK_FAIL_("CHECK_REL(%s, %s, %s): %.9g != %.9g", #a, #b, #tol, a_, b_);           \
    } while (0)

#define CHECK_ABS(a, b, tol)                                                                       \
    do {                                                                                           \
        double a_ = (double)(a), b_ = (double)(b), t_ = (double)(tol);                             \
        if (!(fabs(a_ - b_) <= t_))                                                                \
            RT_CHECK_FAIL_("CHECK_ABS(%s, %s, %s): %.9g != %.9g", #a, #b, #tol, a_, b_);           \
    } while (0)

/* Stops the case at once: for a failure that makes the rest meaningless. */
#define REQUIRE(cond)                                                                              \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: REQUIRE(%s) failed\n", __FILE__, __LINE__, #cond);             \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

static inline int
rt_test_main(const rt_test_case *cases, int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s CASE [ARG]\ncases:", argv[0]);
        for (const rt_test_case *c = cases; c->name; c++)
            fprintf(stderr, " %s", c->name);
        fputc('\n', stderr);
        return 2;
    }
    for (const rt_test_case *c = cases; c->name; c++) {
        if (strcmp(c->name, argv[1]) == 0) {
            c->run(argc > 2 ? argv[2] : NULL);
            if (rt_test_failures)
                fprintf(stderr, "%s %s: %d check(s) failed\n", argv[1], argc > 2 ? argv[2] : "",
                        rt_test_failures);
            return rt_test_failures ? 1 : 0;
        }
    }
    fprintf(stderr, "%s: no case named '%s'\n", argv[0], argv[1]);
    return 2;
}

#endif
