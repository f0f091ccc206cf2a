/* Helpers shared by the ustring tests: a table of the strategy a case was
 * given on its command line, its statistics as a value, and a clock for the
 * timed phases of the stress tests. Needs _POSIX_C_SOURCE 200809L
 * (clock_gettime). */
#ifndef RT_TEST_USTR_TESTING_H
#define RT_TEST_USTR_TESTING_H

#include "check.h"
#include "ustring.h"

#include <stdint.h>
#include <time.h>

/* The strategy named by a case's argument; stops the case on a bad name. */
static inline ustr_lock
ustr_test_lock(const char *arg)
{
    ustr_lock lock = USTR_LOCK_DEFAULT;
    REQUIRE(arg != NULL);
    REQUIRE(ustr_lock_parse(arg, &lock) == USTR_OK);
    return lock;
}

static inline ustr_table *
ustr_test_table(const char *arg, size_t initial_capacity)
{
    ustr_config cfg = {.lock = ustr_test_lock(arg), .initial_capacity = initial_capacity};
    ustr_table *t = NULL;
    REQUIRE(ustr_table_create(&cfg, &t) == USTR_OK);
    REQUIRE(t != NULL);
    return t;
}

static inline ustr_stats
ustr_test_stats(ustr_table *t)
{
    ustr_stats s;
    ustr_table_stats(t, &s);
    return s;
}

/* Nanoseconds on CLOCK_MONOTONIC; only differences mean anything. */
static inline uint64_t
ustr_test_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#endif
