/* Time for tests that compare two timings of their own (never against a
 * fixed speed: CI machines are noisy). Needs POSIX's clock_gettime(): the
 * including file defines _POSIX_C_SOURCE. */
#ifndef RT_TESTS_TIME_TESTING_H
#define RT_TESTS_TIME_TESTING_H

#include <time.h>

/* Seconds on CLOCK_MONOTONIC since *t0 (taken with clock_gettime). */
static inline double
test_secs_since(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) + 1e-9 * (double)(t.tv_nsec - t0->tv_nsec);
}

#endif
