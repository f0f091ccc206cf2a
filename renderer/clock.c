/* The renderer's clocks: the monotonic one every time in rt_render_stats
 * is measured with, and a thread's CPU time (a worker's share of time on a
 * CPU, beside its busy time). */
#include "render_internal.h"

#include <time.h>

static double
clock_secs(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double
rt_now(void)
{
    return clock_secs(CLOCK_MONOTONIC);
}

double
rt__thread_cpu_secs(void)
{
    return clock_secs(CLOCK_THREAD_CPUTIME_ID);
}
