/* One image rendered by several processes: `mpirun -np K render ...`.
 *
 * Every rank loads the scene and builds its own BVH; rank 0 hands out tiles
 * as the ranks ask for them (a batch of one tile per worker thread, asked
 * for again before the last runs out, so fast and slow nodes balance), and
 * each rank renders its tiles with its -t threads. Only the thread that
 * called rt_dist_render() talks to other ranks (MPI_THREAD_FUNNELED): on
 * rank 0 it answers requests between its own workers' tiles. When a rank's
 * workers are done it sends rank 0 its tiles' pixels and its statistics;
 * rank 0 assembles the image, which is bit-identical to a single process's
 * (each pixel's samples are seeded by the pixel alone), and writes it.
 *
 * Built with RT_MPI (CMake option, on when MPI is found) into `render-mpi`
 * (dist.c). `render` itself has no MPI (dist_none.c): it starts faster,
 * and when a launcher starts it as one of several ranks it replaces
 * itself with the `render-mpi` beside it, so `mpirun -np K render` works.
 * Outside mpirun, rt_dist_start() gives NULL and the program is the
 * single-process renderer it always was. */
#ifndef RT_DIST_H
#define RT_DIST_H

#include "rt_render.h"

#include <stdbool.h>

typedef struct rt_dist rt_dist; /* opaque: this process's place in the job */

/* Joins the job when the process was started by an MPI launcher with more
 * than one rank (its environment says so; at most RT_MAX_RANKS): *out is
 * the job, NULL for a single process. `render` (no MPI) under such a
 * launcher does not return: it becomes `render-mpi` with the same *argv;
 * where there is none, it is refused (every rank would render and write
 * the whole image). False with err on failure. */
bool rt_dist_start(int *argc, char ***argv, rt_dist **out, char err[RT_ERR_LEN]);

/* The number of ranks an MPI launcher started this process among, from
 * its environment (Open MPI's OMPI_COMM_WORLD_SIZE, or a PMI launcher's
 * such as MPICH's); 0 when no launcher started it. */
long rt_dist_launched_ranks(void);

unsigned rt_dist_rank(const rt_dist *d);
unsigned rt_dist_size(const rt_dist *d);

/* Every rank calls it after loading the scene (`failure` NULL) or failing
 * to (`failure` says why, one line): true on every rank when all loaded and
 * all ranks render the same image (their image-options lines agree);
 * otherwise false on every rank, and on rank 0 err names the first rank
 * that failed and why ("rank 2: scene.gltf: cannot open: No such file or
 * directory"). */
bool rt_dist_agree(rt_dist *d, const rt_options *o, const char *failure, char err[RT_ERR_LEN]);

/* Renders this rank's share of the image (rt_render_from() with tiles from
 * rank 0) and gathers it: on rank 0 *img is then the whole image and stats
 * covers every rank (stats->nranks, stats->ranks[]); on the others *img
 * holds only what they rendered. Every rank must call it. */
rt_result rt_dist_render(rt_dist *d, const rt_options *o, const rt_scene *scene, tex_system *ts,
                         ustr_table *strings, rt_image *img, rt_render_stats *stats,
                         char err[RT_ERR_LEN]);

/* Leaves the job (MPI_Finalize) and frees d. NULL is a no-op. */
void rt_dist_finish(rt_dist *d);

#endif
