/* The import's memory budget, as a limit on the process's data size
 * (import_budget.h). */
#include "import_budget.h"

#include <stdio.h>
#include <sys/resource.h>
#include <sys/stat.h>

/* RT_SANITIZED: set by CMake in sanitizer builds. */
#ifndef RT_SANITIZED
#define RT_SANITIZED 0
#endif

/* One import at a time, so one budget. */
static struct {
    bool          on;
    struct rlimit before;
    uint64_t      base;   /* the data size at the start */
    uint64_t      budget; /* what it may grow by */
} budget;

/* The process's data size now (VmData, what RLIMIT_DATA limits), or 0
 * where /proc does not say. */
static uint64_t
data_size(void)
{
    FILE *f = fopen("/proc/self/status", "re");
    if (!f)
        return 0;
    char               line[128];
    unsigned long long kb = 0;
    while (fgets(line, sizeof line, f) && sscanf(line, "VmData: %llu kB", &kb) != 1)
        ;
    fclose(f);
    return (uint64_t)kb << 10;
}

/* Sets the soft limit to base + budget, or leaves a lower one set. */
static void
apply(void)
{
    rlim_t want = (rlim_t)(budget.base + budget.budget);
    if (budget.before.rlim_cur != RLIM_INFINITY && budget.before.rlim_cur < want)
        want = budget.before.rlim_cur;
    struct rlimit lim = {.rlim_cur = want, .rlim_max = budget.before.rlim_max};
    setrlimit(RLIMIT_DATA, &lim); /* a failure leaves the limit as it was */
}

bool
rt__import_budget_start(void)
{
    budget.on = false;
    if (RT_SANITIZED || getrlimit(RLIMIT_DATA, &budget.before) != 0)
        return false;
    budget.base = data_size();
    if (!budget.base)
        return false;
    budget.budget = (uint64_t)RT_IMPORT_BUDGET_BASE_MB << 20;
    budget.on = true;
    apply();
    return true;
}

void
rt__import_budget_file(int fd)
{
    struct stat st;
    if (!budget.on || fstat(fd, &st) != 0)
        return;
    budget.budget += (uint64_t)st.st_blocks * 512 * RT_IMPORT_BUDGET_PER_BYTE;
    apply();
}

uint64_t
rt__import_budget_stop(void)
{
    if (!budget.on)
        return 0;
    budget.on = false;
    setrlimit(RLIMIT_DATA, &budget.before);
    return budget.budget;
}
