/* A build without MPI (RT_MPI off): every render is one process. See
 * rt_dist.h. */
#include "rt_dist.h"

#include <stdio.h>

bool
rt_dist_start(int *argc, char ***argv, rt_dist **out, char err[RT_ERR_LEN])
{
    (void)argc, (void)argv;
    *out = NULL;
    /* Under a launcher with more ranks, each process would render and
     * write the whole image: refuse rather than do that K times. */
    long ranks = rt_dist_launched_ranks();
    if (ranks > 1) {
        snprintf(err, RT_ERR_LEN,
                 "started as one of %ld ranks, but built without MPI (cmake -DRT_MPI=ON)", ranks);
        return false;
    }
    return true;
}

unsigned
rt_dist_rank(const rt_dist *d)
{
    (void)d;
    return 0;
}

unsigned
rt_dist_size(const rt_dist *d)
{
    (void)d;
    return 1;
}

bool
rt_dist_agree(rt_dist *d, const rt_options *o, const char *failure, char err[RT_ERR_LEN])
{
    (void)d, (void)o, (void)failure, (void)err;
    return true;
}

rt_result
rt_dist_render(rt_dist *d, const rt_options *o, const rt_scene *scene, tex_system *ts,
               ustr_table *strings, rt_image *img, rt_render_stats *stats, char err[RT_ERR_LEN])
{
    (void)d;
    return rt_render(o, scene, ts, strings, img, stats, err);
}

void
rt_dist_finish(rt_dist *d)
{
    (void)d;
}
