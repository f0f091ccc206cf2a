/* What the parts of `study` share (study.c: the command line, the runs
 * and main; study_results.c: medians, tables, the verdict and the USL fit;
 * study_output.c: the provenance, the CSV, the JSON and the plot): the
 * plan, a run, the verdict and the provenance. Internal to the program. */
#ifndef STUDY_PLAN_H
#define STUDY_PLAN_H

#include "rt_render.h"
#include "study_run.h"
#include "study_table.h"

#include <stdbool.h>
#include <stdio.h>

#define MAX_LIST 64

typedef struct plan {
    unsigned        threads[MAX_LIST];
    int             nthreads;
    rt_texture_mode modes[3];
    int             nmodes;
    ustr_lock       locks[MAX_LIST];
    int             nlocks;
    unsigned        ranks[MAX_LIST]; /* --mpi-ranks: 1, a render alone; K: under mpirun */
    int             nranks;
    int             repeat;
    const char     *out;
    const char     *render, *mpirun; /* every run; runs of ranks > 1 */
    char          **rest;            /* the scene and render options, as given */
    int             nrest;
    int             argc; /* the whole command line, for the provenance */
    char          **argv;
    rt_options      o;               /* the render options every run starts from */
    bool            work_given;      /* -r, --resolution or --spp given, or --quick */
    unsigned        width, height;   /* 0: o's; else the size work_size() chose */
    char            work[256];       /* what work_size() did, "" if nothing */
    unsigned        hw;              /* the CPUs the study could run on (ustr_cpus.h) */
    double          min_render_secs; /* --min-render-ms: work_size()'s aim; 0: none */
    int             deadline_secs;   /* --deadline: from the start; < 0: none */
    unsigned        grace_secs;      /* --grace: after the deadline, until the render stops */
} plan;

typedef study_run run;

/* What the study concludes: the text's last section and the JSON's
 * "verdict". For one rank count (1 when the study has it, else its first):
 * for each mode, at the most threads with every lock measured, the
 * fastest lock and its ratio over each other; and what interning costs
 * each lock at each thread count. */
typedef struct verdict {
    unsigned ranks;
    struct {
        unsigned threads; /* 0: no thread count has every lock */
        double   secs[MAX_LIST];
        double   lo[MAX_LIST], hi[MAX_LIST]; /* each lock's fastest and slowest run */
        int      best;
    } modes[3];
    study_intern intern[MAX_LIST][MAX_LIST]; /* [lock][thread count] */
    bool         intern_ok[MAX_LIST][MAX_LIST];
    bool         have_intern; /* bypass and early-out both measured */
    bool         have_share;  /* and the full render, for its share */
} verdict;

/* Where the figures come from: the command, this program's version, the
 * date, the CPU, and every render option that changes what a render costs
 * (the text's header and the JSON's "provenance"). */
typedef struct provenance {
    char command[2048]; /* the words, ' ' between, a word with a space quoted */
    char date[32];      /* UTC, ISO 8601 */
    char cpu[128];      /* /proc/cpuinfo's "model name"; "unknown" */
    char render[1024];  /* the render program every run starts (--render, or where it was found) */
} provenance;

/* ---- study_results.c ---- */

/* The median over one configuration's runs of its workers' share of time
 * on a CPU; 0: none. */
double cpu_share_of(const run *runs, int n, unsigned ranks, rt_texture_mode mode, ustr_lock lock,
                    unsigned threads);

/* The median render time of one configuration over its runs; 0: none. */
double median_of(const run *runs, int n, unsigned ranks, rt_texture_mode mode, ustr_lock lock,
                 unsigned threads, double *lo, double *hi);

/* Every table: per rank count, mode and lock the times against threads,
 * then the locks side by side. */
void print_tables(const plan *p, const run *runs, int n, unsigned marked, FILE *f);

/* The Universal Scalability Law on each curve, over N <= the cores. */
void print_usl(const plan *p, const run *runs, int n, unsigned cores, FILE *f);

/* "ranks K, " before a heading when the study has ranks other than 1. */
const char *ranks_label(const plan *p, unsigned ranks, char buf[32]);

/* What the runs say (the verdict above), drawn from them. */
void verdict_make(const plan *p, const run *runs, int n, verdict *v);

/* The verdict as the text's last section. */
void verdict_print(const plan *p, const verdict *v, unsigned marked, FILE *f);

/* ---- study_output.c ---- */

/* PREFIX.EXT's temporary file, open to write (tmp and path: the two names,
 * renamed at the end); NULL after saying why not. */
FILE *file_begin(const char *prefix, const char *ext, char tmp[4096], char path[4096]);

/* Where the figures come from, for the plan on this machine now. */
void provenance_make(const plan *p, provenance *v);

/* The provenance as the text's header. */
void provenance_print(const plan *p, const provenance *v, FILE *f);

/* PREFIX.csv: a row per run, the same columns as the JSON's runs. */
bool write_csv(const plan *p, const run *runs, int n);

/* The JSON: the machine, the plan, the provenance, the verdict, the table
 * rows and every run. */
bool write_json(const plan *p, const run *runs, int n, unsigned cores, bool complete,
                const provenance *pv, const verdict *v);

/* The plot, by gnuplot, two panels: render time against threads for every
 * (mode, lock), min-max error bars, the ideal t1 / N of each (clipped to
 * the measured times' range), the physical cores and hardware threads
 * marked above the frame; and % of light speed against threads. Colours
 * per lock from the Okabe-Ito palette, which colour-blind readers tell
 * apart; a dash and point per mode. */
bool write_png(const plan *p, const run *runs, int n, unsigned cores);

#endif
