/* ustr_cpus.h: the CPUs this process may run on, by its affinity. */
#define _GNU_SOURCE /* sched_getaffinity(), CPU_ALLOC() */
#include "ustr_cpus.h"

#include <sched.h>
#include <unistd.h>

#include <stdbool.h>
#include <stddef.h>

/* The calling thread's affinity into a set sized for the machine; false
 * where it cannot be read. *set is the caller's to CPU_FREE(). */
static bool
affinity(cpu_set_t **set, size_t *bytes, int *ncpus)
{
    long conf = sysconf(_SC_NPROCESSORS_CONF);
    *ncpus = conf > 1024 ? (int)conf : 1024;
    *bytes = CPU_ALLOC_SIZE(*ncpus);
    *set = CPU_ALLOC(*ncpus);
    return *set && sched_getaffinity(0, *bytes, *set) == 0;
}

unsigned
ustr_cpus_usable(void)
{
    cpu_set_t *set;
    size_t     bytes;
    int        ncpus, count = 0;
    if (affinity(&set, &bytes, &ncpus))
        count = CPU_COUNT_S(bytes, set);
    CPU_FREE(set);
    if (count > 0)
        return (unsigned)count;
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    return online > 0 ? (unsigned)online : 1;
}

unsigned
ustr_cpus_usable_ids(unsigned *ids, unsigned max)
{
    cpu_set_t *set;
    size_t     bytes;
    int        ncpus;
    unsigned   n = 0;
    if (affinity(&set, &bytes, &ncpus))
        for (int c = 0; c < ncpus && n < max; c++)
            if (CPU_ISSET_S(c, bytes, set))
                ids[n++] = (unsigned)c;
    CPU_FREE(set);
    return n;
}
