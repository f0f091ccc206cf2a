/* One render of a study, run as its own process: `render` (or `mpirun -np
 * K render`) with the study's render options and the run's texture mode,
 * lock and thread count, and its --stats-json read back. A study's figure
 * is then what a user who runs `render` sees: a new process each time,
 * with nothing warm from the render before but the operating system's file
 * cache, and the process's start and exit outside render_secs (render
 * times itself from its first worker's start to its last one's end). */
#ifndef STUDY_RUN_H
#define STUDY_RUN_H

#include "rt_counters.h"
#include "rt_options.h"
#include "texture.h"
#include "ustring.h"

#include <stdbool.h>
#include <stdint.h>

#define STUDY_ERR_LEN 512

/* The most rounds a study runs (--repeat), and a study's file may hold. */
#define STUDY_MAX_REPEAT 63

/* What one run asks for. */
typedef struct study_launch {
    const char     *render; /* the render program */
    const char     *mpirun; /* the launcher, for ranks > 1 */
    char *const    *rest;   /* the scene and render options, as the user gave them */
    int             nrest;
    const char     *tmp; /* prefix of the run's temporary files (removed after it) */
    rt_texture_mode mode;
    ustr_lock       lock;
    unsigned        threads;       /* -t: per process */
    unsigned        ranks;         /* 1: `render` alone; K > 1: under `mpirun -np K` */
    unsigned        width, height; /* 0: the resolution in rest (or render's default) */
    bool            warm_up;       /* a small untimed render that opens every texture (64x48,
                                    * 1 spp, --open-textures upfront): the scene loads, the OS
                                    * caches its files */
} study_launch;

/* What the render reported of itself (its --stats-json), plus what it was
 * asked. Under mpirun the counts are the job's (every rank's); the thread
 * figures are per rank. */
typedef struct study_run {
    int             round;
    rt_texture_mode mode;
    ustr_lock       lock; /* asked for */
    unsigned        threads, ranks;
    unsigned        workers; /* worker threads that ran (rank 0's under mpirun) */
    double          render_secs, load_secs, bvh_secs;
    double          open_secs;           /* the workers' time opening textures, summed over them */
    double          busy_min, busy_max;  /* per thread (under mpirun: a rank's mean thread) */
    double          busy_secs, cpu_secs; /* summed over threads (and ranks): cpu / busy is the
                                          * share of time the workers were on a CPU */
    double comm_secs;                    /* under mpirun: every rank's time in MPI calls */
    RT_WORK_COUNTS(RT_WORK_COUNT_FIELD)  /* the job's: every rank's */
    ustr_stats ustr; /* the string table's (ustr.lock: its own strategy, rank 0's under mpirun,
                      * the CSV's table_lock); under mpirun the counts are every rank's summed */
    tex_stats tex;   /* the texture system's; likewise */
    uint64_t  tiles; /* tiles rendered */
} study_run;

/* Runs the render `l` describes and fills *r from its statistics. On
 * failure returns false with one line in err; `*interrupted` (may be NULL)
 * then says whether the render ended because study_run_stop() was called.
 * The render runs in a process group of its own, so that Ctrl-C at a
 * terminal reaches the study alone, which lets the render finish (or asks
 * it to stop: study_run_stop()). Its stderr is the study's. */
bool study_run_render(const study_launch *l, study_run *r, bool *interrupted,
                      char err[STUDY_ERR_LEN]);

/* From a signal handler: asks the running render (if any) to stop, as
 * Ctrl-C would; its run then fails, interrupted. Async-signal-safe. */
void study_run_stop(void);

/* From a signal handler: the user pressed Ctrl-C, and the study will stop
 * after this render. A render that Ctrl-C reached anyway (it came while
 * the render was being started, before it had a process group of its
 * own) then counts as interrupted, not failed. Async-signal-safe. */
void study_run_note_interrupt(void);

/* Fills *r (all but round and what was asked) from the text of a
 * --stats-json file; false with one line in err if it is not one. */
bool study_run_parse(const char *json, study_run *r, char err[STUDY_ERR_LEN]);

/* A study's JSON read back (study --plot): its scene, the machine's
 * physical cores, online CPUs and those the study could use, and its runs,
 * as study wrote them. A file from an older study that lacks a column reads
 * it as 0. */
typedef struct study_file {
    char      *scene;
    unsigned   physical_cores, hardware_threads, usable_cpus;
    study_run *runs;
    int        nruns;
} study_file;

/* Fills *f from the text of a study's JSON; false with one line in err if
 * it is not one. Free it with study_file_free(). */
bool study_file_parse(const char *json, study_file *f, char err[STUDY_ERR_LEN]);
void study_file_free(study_file *f);

/* The whole of a text file (at most 256 MiB), NUL-terminated, for free();
 * NULL with errno set if it cannot be read. */
char *study_text_read(const char *path);

/* The share of the workers' time on a CPU, 0..1 (0 when unknown). */
double study_run_cpu_share(const study_run *r);

#endif
