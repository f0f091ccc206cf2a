/* Whether an MPI launcher started this process: see rt_dist.h. Built with
 * and without MPI alike. */
#include "rt_dist.h"

#include <stdlib.h>

long
rt_dist_launched_ranks(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = getenv(vars[i]);
        if (v && *v)
            return strtol(v, NULL, 10);
    }
    return 0;
}
