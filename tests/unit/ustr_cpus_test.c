/* ustring/include/ustr_cpus.h: the CPUs the process may run on are its
 * affinity's, not the machine's. The test pins its own thread and asks
 * again: a count taken from sysconf() would not move. */
#define _GNU_SOURCE /* sched_getaffinity(), sched_setaffinity() */
#include "check.h"
#include "ustr_cpus.h"

#include <sched.h>
#include <unistd.h>

enum { SKIP = 77 }; /* SKIP_RETURN_CODE in tests/CMakeLists.txt (RT_TEST_SKIP) */

/* The calling thread's affinity, read the plain way (up to 1,024 CPUs). */
static cpu_set_t
affinity(void)
{
    cpu_set_t set;
    REQUIRE(sched_getaffinity(0, sizeof set, &set) == 0);
    return set;
}

static void
pin(const cpu_set_t *set)
{
    REQUIRE(sched_setaffinity(0, sizeof *set, set) == 0);
}

/* The count and the numbers agree with the affinity as the kernel gives it. */
static void
case_usable(const char *arg)
{
    (void)arg;
    cpu_set_t set = affinity();
    unsigned  ids[1024], n = ustr_cpus_usable_ids(ids, 1024);
    CHECK_EQ_INT(ustr_cpus_usable(), CPU_COUNT(&set));
    CHECK_EQ_INT(n, CPU_COUNT(&set));
    for (unsigned i = 0; i < n; i++) {
        CHECK(CPU_ISSET(ids[i], &set));
        CHECK(i == 0 || ids[i] > ids[i - 1]);
    }
    unsigned first;
    CHECK_EQ_INT(ustr_cpus_usable_ids(&first, 1), 1); /* max is respected */
    CHECK_EQ_INT(first, ids[0]);
    CHECK_EQ_INT(ustr_cpus_usable_ids(NULL, 0), 0);
}

/* Pinned to one CPU, then two: the count follows, the machine's does not. */
static void
case_pinned(const char *arg)
{
    (void)arg;
    cpu_set_t all = affinity();
    unsigned  ids[2];
    if (ustr_cpus_usable_ids(ids, 2) < 2) {
        fprintf(stderr, "skipped: one CPU to run on, so pinning to it changes nothing\n");
        exit(SKIP);
    }
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(ids[1], &one);
    pin(&one);
    unsigned got;
    CHECK_EQ_INT(ustr_cpus_usable(), 1);
    CHECK_EQ_INT(ustr_cpus_usable_ids(&got, 1), 1);
    CHECK_EQ_INT(got, ids[1]);
    CPU_SET(ids[0], &one);
    pin(&one);
    CHECK_EQ_INT(ustr_cpus_usable(), 2);
    pin(&all);
    CHECK_EQ_INT(ustr_cpus_usable(), CPU_COUNT(&all));
}

static const rt_test_case cases[] = {
    {"usable", case_usable},
    {"pinned", case_pinned},
    {NULL, NULL},
};

int
main(int argc, char **argv)
{
    return rt_test_main(cases, argc, argv);
}
