/* `render` without MPI: every render is one process, and one started by
 * an MPI launcher becomes `render-mpi` (built beside it with RT_MPI). See
 * rt_dist.h. */
#include "rt_dist.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#ifdef RT_DIST_MPI_PROGRAM
/* Replaces this process with RT_DIST_MPI_PROGRAM from this program's own
 * folder, given the same arguments and environment (the launcher's
 * variables included, so it joins the job as this process would have);
 * returns only when that fails, with err saying why. */
static void
become_mpi(char **argv, long ranks, char err[RT_ERR_LEN])
{
    char    self[PATH_MAX], path[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) {
        snprintf(err, RT_ERR_LEN, "started as one of %ld ranks: cannot find %s: %s", ranks,
                 RT_DIST_MPI_PROGRAM, strerror(errno));
        return;
    }
    self[n] = '\0';
    char *slash = strrchr(self, '/');
    int   len = slash ? (int)(slash - self) : 0;
    if (snprintf(path, sizeof path, "%.*s/%s", len, self, RT_DIST_MPI_PROGRAM) >=
        (int)sizeof path) {
        snprintf(err, RT_ERR_LEN, "started as one of %ld ranks: cannot find %s", ranks,
                 RT_DIST_MPI_PROGRAM);
        return;
    }
    execv(path, argv);
    snprintf(err, RT_ERR_LEN, "started as one of %ld ranks: cannot run %s beside it: %s", ranks,
             RT_DIST_MPI_PROGRAM, strerror(errno));
}
#endif

bool
rt_dist_start(int *argc, char ***argv, rt_dist **out, char err[RT_ERR_LEN])
{
    (void)argc;
    *out = NULL;
    /* Under a launcher with more ranks, each process would render and
     * write the whole image: hand over to the MPI build, or refuse rather
     * than do that K times. */
    long ranks = rt_dist_launched_ranks();
    if (ranks > 1) {
#ifdef RT_DIST_MPI_PROGRAM
        become_mpi(*argv, ranks, err);
#else
        (void)argv;
        snprintf(err, RT_ERR_LEN,
                 "started as one of %ld ranks, but built without MPI (cmake -DRT_MPI=ON)", ranks);
#endif
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
