/* study: a timing study of thread scaling and of what interning costs.
 *
 *   study SCENE [--threads 1,2,4,...] [--modes full,bypass,early-out]
 *               [--locks default,rwspin,...] [--repeat K] [--out PREFIX]
 *               [--quick] [render options: -r W H, --spp N, --integrator I, ...]
 *
 * Renders SCENE for every (mode, lock, thread count), K times each, in
 * rounds that visit every configuration once (so a slow spell of the
 * machine touches them all), and reports the median (min and max kept).
 * Every render is a `render` process of its own (study_run.h), its
 * --stats-json read back: a study's time is render's. Only the operating
 * system's file cache carries over (one small untimed render first fills
 * it for everyone). Unless -r or --spp is given, the image first grows
 * until the fastest configuration takes --min-render-ms (work_size()).
 *
 * Prints the machine's cores, then per mode and lock the classic table
 * (time, percent of light speed, expected linear time), the interning cost
 * (bypass minus early-out) per thread count, the lock strategies side by
 * side, and a Universal Scalability Law fit of each curve over the thread
 * counts up to the physical cores. Writes PREFIX.csv and PREFIX.json (every
 * run, every statistic) and PREFIX.png (gnuplot: time against threads,
 * with the ideal curve and the core count), each through a temporary file.
 * Ctrl-C stops after the current render (a second stops it too); what was
 * measured is written. `study --plot STUDY.json` prints the tables and
 * draws the picture again from a study's JSON. */
#define _POSIX_C_SOURCE 200809L

#include "rt_json.h"
#include "rt_render.h"
#include "study_run.h"
#include "study_table.h"
#include "tool.h"
#include "usl.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_LIST 64

extern char **environ;

static void
usage(FILE *f)
{
    fputs("usage: study SCENE [options] [render options]\n"
          "  --threads LIST   thread counts (default 1,2,4,8,12,16,20,24,32)\n"
          "  --modes LIST     full, bypass, early-out (default all three)\n"
          "  --locks LIST     mutex, spin, rwspin, sharded, lockfree, default (default: default)\n"
          "  --repeat K       renders per configuration, median reported (default 3)\n"
          "  --mpi-ranks LIST MPI ranks: 1 renders in this process, K > 1 runs\n"
          "                   `mpirun -np K render` (default 1)\n"
          "  --render PATH    the render program for K > 1 (default: ../renderer/render\n"
          "                   beside this program)\n"
          "  --mpirun PATH    the MPI launcher (default mpirun)\n"
          "  --min-render-ms MS  unless -r or --spp is given, grow the image until the\n"
          "                   fastest render takes MS (default 100; 0: never)\n"
          "  --out PREFIX     PREFIX.csv, PREFIX.json, PREFIX.png (default study)\n"
          "  --plot FILE      no renders: the tables and PREFIX.png again from a study's\n"
          "                   FILE.json (PREFIX: FILE without .json, unless --out)\n"
          "  --quick          a smoke run: threads 1,2, repeat 1, 64x48, each unless\n"
          "                   --threads, --repeat or -r says otherwise\n"
          "  render options   as `render` takes them: -r W H, --spp N, --integrator I, ...\n",
          f);
}

const char tool_prog[] = "study"; /* tool.h: the prefix of its messages */

/* ---- the plan ---- */

typedef struct plan {
    unsigned        threads[MAX_LIST];
    int             nthreads;
    rt_texture_mode modes[3];
    int             nmodes;
    ustr_lock       locks[MAX_LIST];
    int             nlocks;
    unsigned        ranks[MAX_LIST]; /* --mpi-ranks: 1, in this process; K: under mpirun */
    int             nranks;
    int             repeat;
    const char     *out;
    const char     *render, *mpirun; /* for ranks > 1 */
    char          **rest;            /* the scene and render options, as given */
    int             nrest;
    int             argc; /* the whole command line, for the provenance */
    char          **argv;
    rt_options      o;               /* the render options every run starts from */
    bool            work_given;      /* -r, --resolution or --spp given, or --quick */
    unsigned        width, height;   /* 0: o's; else the size work_size() chose */
    char            work[256];       /* what work_size() did, "" if nothing */
    unsigned        hw;              /* the hardware threads of the machine the study ran on */
    double          min_render_secs; /* --min-render-ms: work_size()'s aim; 0: none */
} plan;

/* Splits a comma-separated list (tool_list); `item` checks and stores one
 * entry. */
static int
parse_list(const char *opt, const char *arg, int max, bool (*item)(const char *s, void *dst, int i),
           void *dst)
{
    tool_list l;
    int       n = 0;
    for (const char *t = tool_list_first(&l, arg); t; t = tool_list_next(&l)) {
        if (n == max)
            tool_bad_usage("%s: at most %d entries", opt, max);
        if (!item(t, dst, n))
            tool_bad_usage("%s: '%s' is not valid here", opt, t);
        n++;
    }
    tool_list_free(&l);
    if (n == 0)
        tool_bad_usage("%s: the list is empty", opt);
    return n;
}

/* A count in 1..max into ((unsigned *)dst)[i]. */
static bool
item_count(const char *s, unsigned long max, void *dst, int i)
{
    char         *end;
    unsigned long v = strtoul(s, &end, 10);
    if (*s == '-' || end == s || *end || v < 1 || v > max)
        return false;
    ((unsigned *)dst)[i] = (unsigned)v;
    return true;
}

static bool
item_threads(const char *s, void *dst, int i)
{
    return item_count(s, RT_MAX_THREADS, dst, i);
}

static bool
item_ranks(const char *s, void *dst, int i)
{
    return item_count(s, RT_MAX_RANKS, dst, i);
}

static bool
item_mode(const char *s, void *dst, int i)
{
    for (int m = RT_TEXTURE_FULL; m <= RT_TEXTURE_EARLY_OUT; m++) {
        if (strcmp(s, rt_texture_mode_name((rt_texture_mode)m)) == 0) {
            ((rt_texture_mode *)dst)[i] = (rt_texture_mode)m;
            return true;
        }
    }
    return false;
}

static bool
item_lock(const char *s, void *dst, int i)
{
    return ustr_lock_parse(s, &((ustr_lock *)dst)[i]) == USTR_OK;
}

/* Takes the study's own options out of argv; the rest (the scene and the
 * render options) go through render's parser. */
static void
plan_parse(int argc, char **argv, plan *p)
{
    *p = (plan){.repeat = 3, .out = "study", .argc = argc, .argv = argv, .min_render_secs = 0.1};
    static const unsigned default_threads[] = {1, 2, 4, 8, 12, 16, 20, 24, 32};
    memcpy(p->threads, default_threads, sizeof default_threads);
    p->nthreads = sizeof default_threads / sizeof *default_threads;
    p->modes[0] = RT_TEXTURE_FULL, p->modes[1] = RT_TEXTURE_BYPASS;
    p->modes[2] = RT_TEXTURE_EARLY_OUT, p->nmodes = 3;
    p->locks[0] = USTR_LOCK_DEFAULT, p->nlocks = 1;
    p->ranks[0] = 1, p->nranks = 1;
    p->mpirun = "mpirun";
    bool   quick = false, resolution = false, threads_given = false, repeat_given = false;
    char **rest = calloc((size_t)argc + 3, sizeof *rest);
    int    n = 0;
    if (!rest)
        tool_die("out of memory");
    rest[n++] = "study";
    rest[n++] = "--quiet";
    static const char *const own[] = {"--threads", "--modes",  "--locks",
                                      "--repeat",  "--out",    "--mpi-ranks",
                                      "--render",  "--mpirun", "--min-render-ms"};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = NULL; /* v: the option's value */
        char        name[16] = "";
        /* One of ours, as "--name value" or "--name=value" (as render's). */
        for (size_t k = 0; k < sizeof own / sizeof *own && !name[0]; k++) {
            size_t len = strlen(own[k]);
            if (strncmp(a, own[k], len) == 0 && (a[len] == '\0' || a[len] == '=')) {
                snprintf(name, sizeof name, "%s", own[k]);
                v = a[len] == '=' ? a + len + 1 : i + 1 < argc ? argv[++i] : NULL;
            }
        }
        if (name[0] && !v)
            tool_bad_usage("%s needs a value", name);
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            exit(0);
        } else if (strcmp(a, "--quick") == 0) {
            quick = true;
        } else if (strcmp(name, "--threads") == 0) {
            p->nthreads = parse_list(name, v, MAX_LIST, item_threads, p->threads);
            threads_given = true;
        } else if (strcmp(name, "--modes") == 0) {
            p->nmodes = parse_list(name, v, 3, item_mode, p->modes);
        } else if (strcmp(name, "--locks") == 0) {
            p->nlocks = parse_list(name, v, MAX_LIST, item_lock, p->locks);
        } else if (strcmp(name, "--repeat") == 0) {
            char *end;
            long  k = strtol(v, &end, 10);
            if (*end || end == v || k < 1 || k > 63)
                tool_bad_usage("--repeat: '%s' is not a count (1..63)", v);
            p->repeat = (int)k;
            repeat_given = true;
        } else if (strcmp(name, "--min-render-ms") == 0) {
            char *end;
            long  k = strtol(v, &end, 10);
            if (*end || end == v || k < 0 || k > 600000)
                tool_bad_usage("--min-render-ms: '%s' is not a time in ms (0..600000)", v);
            p->min_render_secs = (double)k / 1e3;
        } else if (strcmp(name, "--out") == 0) {
            p->out = v;
        } else if (strcmp(name, "--mpi-ranks") == 0) {
            p->nranks = parse_list(name, v, MAX_LIST, item_ranks, p->ranks);
        } else if (strcmp(name, "--render") == 0) {
            p->render = v;
        } else if (strcmp(name, "--mpirun") == 0) {
            p->mpirun = v;
        } else {
            resolution |= strncmp(a, "-r", 2) == 0 || strncmp(a, "--resolution", 12) == 0;
            p->work_given |= strncmp(a, "--spp", 5) == 0;
            rest[n++] = argv[i];
        }
    }
    p->work_given |= resolution || quick;
    if (quick) { /* what the user gave wins */
        if (!threads_given)
            p->threads[0] = 1, p->threads[1] = 2, p->nthreads = 2;
        if (!repeat_given)
            p->repeat = 1;
        if (!resolution)
            rest[n++] = "-r64x48";
    }
    /* rt_options_parse() permutes what it is given: keep our own order. */
    p->rest = calloc((size_t)n + 1, sizeof *p->rest);
    if (!p->rest)
        tool_die("out of memory");
    memcpy(p->rest, rest + 2, (size_t)(n - 2) * sizeof *rest); /* without "study --quiet" */
    p->nrest = n - 2;
    int rc = rt_options_parse(n, rest, &p->o);
    if (rc >= 0)
        exit(rc); /* 0: --version; its usage errors are study's too */
    free(rest);
}

/* ---- the machine ---- */

/* Physical cores: distinct (package, core) pairs in sysfs; 0 when unknown. */
static unsigned
physical_cores(void)
{
    unsigned pairs[1024][2], n = 0;
    long     cpus = sysconf(_SC_NPROCESSORS_CONF);
    for (long c = 0; c < cpus && n < 1024; c++) {
        char     path[128];
        unsigned v[2];
        bool     ok = true;
        for (int k = 0; k < 2 && ok; k++) {
            snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%ld/topology/%s", c,
                     k == 0 ? "physical_package_id" : "core_id");
            FILE *f = fopen(path, "r");
            ok = f && fscanf(f, "%u", &v[k]) == 1;
            if (f)
                fclose(f);
        }
        if (!ok)
            continue;
        bool seen = false;
        for (unsigned i = 0; i < n && !seen; i++)
            seen = pairs[i][0] == v[0] && pairs[i][1] == v[1];
        if (!seen)
            pairs[n][0] = v[0], pairs[n][1] = v[1], n++;
    }
    return n;
}

/* ---- one run ---- */

typedef study_run run;

/* Ctrl-C: the first lets the running render finish, then the study writes
 * what it measured; the second stops that render too (study_run_stop()). */
static volatile sig_atomic_t stop_requested;

static void
on_interrupt(int sig)
{
    (void)sig;
    static const char first[] = "\nstudy: stopping after this render (Ctrl-C again: now)\n";
    if (stop_requested) {
        study_run_stop();
    } else {
        study_run_note_interrupt();
        ssize_t n = write(STDERR_FILENO, first, sizeof first - 1);
        (void)n; /* nothing to do if stderr is gone */
    }
    stop_requested = 1;
}

/* The render program: --render, else ../renderer/render beside this
 * program (the build tree's layout). */
static const char *
render_path(const plan *p, char buf[4096])
{
    if (p->render)
        return p->render;
    ssize_t n = readlink("/proc/self/exe", buf, 4096 - 32);
    if (n <= 0)
        return "render";
    buf[n] = '\0';
    char *slash = strrchr(buf, '/');
    snprintf(slash ? slash : buf, 32, "/../renderer/render");
    return buf;
}

/* Renders once as its own process (study_run.h): `render`, or under
 * `mpirun -np ranks`; dies on a failed render unless Ctrl-C ended it
 * (then false). */
static bool
render_one(const plan *p, rt_texture_mode mode, ustr_lock lock, unsigned threads, unsigned ranks,
           run *r, bool warm_up)
{
    char         prog[4096], err[STUDY_ERR_LEN];
    study_launch l = {.render = render_path(p, prog),
                      .mpirun = p->mpirun,
                      .rest = p->rest,
                      .nrest = p->nrest,
                      .tmp = p->out,
                      .mode = mode,
                      .lock = lock,
                      .threads = threads,
                      .ranks = ranks,
                      .width = p->width,
                      .height = p->height,
                      .warm_up = warm_up};
    bool         interrupted;
    if (study_run_render(&l, r, &interrupted, err))
        return true;
    if (!interrupted)
        tool_die("%s: %s", p->o.scene, err);
    return false;
}

/* ---- results ---- */

/* The median render time of one configuration over its runs; 0: none. */
static double
median_of(const run *runs, int n, unsigned ranks, rt_texture_mode mode, ustr_lock lock,
          unsigned threads, double *lo, double *hi)
{
    double v[64];
    int    k = 0;
    for (int i = 0; i < n && k < 64; i++)
        if (runs[i].ranks == ranks && runs[i].mode == mode && runs[i].lock == lock &&
            runs[i].threads == threads)
            v[k++] = runs[i].render_secs;
    *lo = *hi = 0;
    for (int i = 0; i < k; i++) {
        *lo = i == 0 || v[i] < *lo ? v[i] : *lo;
        *hi = v[i] > *hi ? v[i] : *hi;
    }
    return k ? tool_median(v, k) : 0;
}

/* The median over one configuration's runs of its workers' share of time
 * on a CPU; 0: none. */
static double
cpu_share_of(const run *runs, int n, unsigned ranks, rt_texture_mode mode, ustr_lock lock,
             unsigned threads)
{
    double v[64];
    int    k = 0;
    for (int i = 0; i < n && k < 64; i++)
        if (runs[i].ranks == ranks && runs[i].mode == mode && runs[i].lock == lock &&
            runs[i].threads == threads)
            v[k++] = study_run_cpu_share(&runs[i]);
    return k ? tool_median(v, k) : 0;
}

/* How many renders one configuration had (fewer than --repeat when the
 * study was interrupted). */
static int
runs_of(const run *runs, int n, unsigned ranks, rt_texture_mode mode, ustr_lock lock,
        unsigned threads)
{
    int k = 0;
    for (int i = 0; i < n; i++)
        k += runs[i].ranks == ranks && runs[i].mode == mode && runs[i].lock == lock &&
             runs[i].threads == threads;
    return k;
}

/* "-tN", with '*' past the physical cores, padded to a column. */
static const char *
threads_label(unsigned threads, unsigned cores, char buf[16])
{
    snprintf(buf, 16, "-t%u%s", threads, cores && threads > cores ? "*" : "");
    return buf;
}

/* "ranks K, " before a heading when the study has ranks other than 1. */
static const char *
ranks_label(const plan *p, unsigned ranks, char buf[32])
{
    buf[0] = '\0';
    if (p->nranks > 1 || ranks > 1)
        snprintf(buf, 32, "ranks %u, ", ranks);
    return buf;
}

/* The render time of one configuration in round `round`; 0: none. */
static double
round_secs(const run *runs, int n, unsigned ranks, rt_texture_mode mode, ustr_lock lock,
           unsigned threads, int round)
{
    for (int i = 0; i < n; i++)
        if (runs[i].round == round && runs[i].ranks == ranks && runs[i].mode == mode &&
            runs[i].lock == lock && runs[i].threads == threads)
            return runs[i].render_secs;
    return 0;
}

/* What interning costs one lock at one thread count: the median over the
 * rounds that have bypass and early-out (and full, for the share) of
 * their difference (study_intern_rounds(), as render-bench). *ok false:
 * no round has both. */
static study_intern
intern_of(const plan *p, const run *runs, int n, unsigned rk, ustr_lock lock, unsigned th, bool *ok)
{
    double b[64], e[64], f[64];
    int    k = 0;
    for (int round = 1; round <= p->repeat && k < 64; round++) {
        b[k] = round_secs(runs, n, rk, RT_TEXTURE_BYPASS, lock, th, round);
        e[k] = round_secs(runs, n, rk, RT_TEXTURE_EARLY_OUT, lock, th, round);
        f[k] = round_secs(runs, n, rk, RT_TEXTURE_FULL, lock, th, round);
        k += b[k] > 0 && e[k] > 0;
    }
    *ok = k > 0;
    return k ? study_intern_rounds(b, e, f, k) : (study_intern){0};
}

/* The unit for the times of one (mode, lock) table: its largest median. */
static study_unit
table_unit(const plan *p, const run *runs, int n, unsigned rk, rt_texture_mode mode, ustr_lock lock)
{
    double lo, hi, most = 0;
    for (int t = 0; t < p->nthreads; t++) {
        double s = median_of(runs, n, rk, mode, lock, p->threads[t], &lo, &hi);
        most = s > most ? s : most;
    }
    return study_unit_for(most);
}

/* One mode's table for one lock: a row per thread count. */
static void
print_mode_table(const plan *p, const run *runs, int n, unsigned marked, unsigned rk, int m, int l,
                 FILE *f)
{
    char            rl[32];
    double          lo, hi;
    rt_texture_mode mode = p->modes[m];
    ustr_lock       lock = p->locks[l];
    /* An interrupted study has rows of fewer renders: say so. */
    bool short_rows = false;
    for (int t = 0; t < p->nthreads; t++) {
        int k = runs_of(runs, n, rk, mode, lock, p->threads[t]);
        short_rows |= k > 0 && k < p->repeat;
    }
    fprintf(f, "\n%s%s, lock %s (median of %s%d render%s%s)\n", ranks_label(p, rk, rl),
            rt_texture_mode_name(mode), ustr_lock_name(lock), short_rows ? "up to " : "", p->repeat,
            p->repeat > 1 ? "s" : "", short_rows ? "; interrupted: a row of fewer says so" : "");
    study_unit u = table_unit(p, runs, n, rk, mode, lock);
    study_row_header(f, p->repeat > 1);
    double t1 = median_of(runs, n, rk, mode, lock, 1, &lo, &hi);
    for (int t = 0; t < p->nthreads; t++) {
        double secs = median_of(runs, n, rk, mode, lock, p->threads[t], &lo, &hi);
        if (secs <= 0)
            continue;
        int       k = runs_of(runs, n, rk, mode, lock, p->threads[t]);
        study_row r = study_row_make(p->threads[t], secs, t1);
        r.cpu_share = cpu_share_of(runs, n, rk, mode, lock, p->threads[t]);
        study_row_print(f, &r, marked, u, p->repeat > 1, lo, hi,
                        study_row_noise(secs, lo, hi, r.cpu_share));
        if (k < p->repeat)
            fprintf(f, "          (%d of %d renders)\n", k, p->repeat);
    }
}

/* The tables of one rank count (rk): per mode and lock; the locks side by
 * side. Times in the unit that fits them; '*' past `marked` threads. */
static void
print_tables_ranks(const plan *p, const run *runs, int n, unsigned marked, unsigned rk, FILE *f)
{
    char   label[16], rl[32];
    double lo, hi;
    for (int m = 0; m < p->nmodes; m++)
        for (int l = 0; l < p->nlocks; l++)
            print_mode_table(p, runs, n, marked, rk, m, l, f);
    if (p->nlocks < 2)
        return;
    for (int m = 0; m < p->nmodes; m++) {
        study_unit u = table_unit(p, runs, n, rk, p->modes[m], p->locks[0]);
        fprintf(f, "\n%slocks side by side, %s (%s)\n  %-8s", ranks_label(p, rk, rl),
                rt_texture_mode_name(p->modes[m]), u.name, "threads");
        for (int l = 0; l < p->nlocks; l++)
            fprintf(f, " %10s", ustr_lock_name(p->locks[l]));
        fputc('\n', f);
        for (int t = 0; t < p->nthreads; t++) {
            fprintf(f, "  %-8s", threads_label(p->threads[t], marked, label));
            for (int l = 0; l < p->nlocks; l++)
                fprintf(f, " %10.*f", u.decimals,
                        u.per_sec * median_of(runs, n, rk, p->modes[m], p->locks[l], p->threads[t],
                                              &lo, &hi));
            fputc('\n', f);
        }
    }
}

/* ---- the verdict ---- */

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
        int      best;
    } modes[3];
    study_intern intern[MAX_LIST][MAX_LIST]; /* [lock][thread count] */
    bool         intern_ok[MAX_LIST][MAX_LIST];
    bool         have_intern; /* bypass and early-out both measured */
    bool         have_share;  /* and the full render, for its share */
} verdict;

static void
verdict_make(const plan *p, const run *runs, int n, verdict *v)
{
    double lo, hi;
    *v = (verdict){.ranks = p->ranks[0]};
    for (int r = 0; r < p->nranks; r++)
        v->ranks = p->ranks[r] == 1 ? 1 : v->ranks;
    for (int m = 0; m < p->nmodes; m++)
        v->have_share |= p->modes[m] == RT_TEXTURE_FULL;
    for (int m = 0; m < p->nmodes; m++) {
        for (int t = 0; t < p->nthreads; t++) {
            double secs[MAX_LIST];
            bool   all = true;
            for (int l = 0; l < p->nlocks; l++) {
                secs[l] =
                    median_of(runs, n, v->ranks, p->modes[m], p->locks[l], p->threads[t], &lo, &hi);
                all = all && secs[l] > 0;
            }
            if (all && p->threads[t] > v->modes[m].threads) {
                v->modes[m].threads = p->threads[t];
                memcpy(v->modes[m].secs, secs, sizeof secs);
                v->modes[m].best = study_fastest(secs, p->nlocks);
            }
        }
    }
    for (int l = 0; l < p->nlocks; l++)
        for (int t = 0; t < p->nthreads; t++) {
            v->intern[l][t] =
                intern_of(p, runs, n, v->ranks, p->locks[l], p->threads[t], &v->intern_ok[l][t]);
            v->have_intern |= v->intern_ok[l][t];
        }
}

/* s right-aligned in `width` characters (UTF-8: "µs" is one character of
 * two bytes, which printf's widths count twice). */
static void
print_right(FILE *f, const char *s, int width)
{
    int chars = 0;
    for (const char *c = s; *c; c++)
        chars += ((unsigned char)*c & 0xc0) != 0x80;
    fprintf(f, "%*s%s", width > chars ? width - chars : 0, "", s);
}

static void
verdict_print(const plan *p, const verdict *v, unsigned marked, FILE *f)
{
    char rl[32], label[16], t[32];
    fprintf(f, "\n%sverdict\n", ranks_label(p, v->ranks, rl));
    for (int m = 0; m < p->nmodes; m++) {
        const char *mode = rt_texture_mode_name(p->modes[m]);
        if (!v->modes[m].threads || v->modes[m].best < 0)
            continue;
        int b = v->modes[m].best;
        threads_label(v->modes[m].threads, marked, label);
        if (p->nlocks == 1) {
            study_secs_format(t, sizeof t, v->modes[m].secs[0],
                              study_unit_for(v->modes[m].secs[0]));
            fprintf(f, "  %s at %s: %s (one lock measured: %s)\n", mode, label, t,
                    ustr_lock_name(p->locks[0]));
            continue;
        }
        fprintf(f, "  %s at %s: %s is", mode, label, ustr_lock_name(p->locks[b]));
        for (int l = 0, k = 0; l < p->nlocks; l++)
            if (l != b)
                fprintf(f, "%s %.2fx %s", k++ ? "," : "", v->modes[m].secs[l] / v->modes[m].secs[b],
                        ustr_lock_name(p->locks[l]));
        fputc('\n', f);
    }
    if (!v->have_intern)
        return;
    fprintf(f, "  interning cost (bypass - early-out, the median over rounds%s)\n    %-8s",
            v->have_share ? "; its share of the full render" : "", "threads");
    for (int l = 0; l < p->nlocks; l++)
        fprintf(f, " %18s", ustr_lock_name(p->locks[l]));
    fputc('\n', f);
    unsigned flags = 0;
    for (int th = 0; th < p->nthreads; th++) {
        fprintf(f, "    %-8s", threads_label(p->threads[th], marked, label));
        for (int l = 0; l < p->nlocks; l++) {
            const study_intern *c = &v->intern[l][th];
            char                cell[48] = "-";
            if (v->intern_ok[l][th]) {
                study_secs_format(t, sizeof t, c->secs, study_unit_for(fabs(c->secs)));
                int at = snprintf(cell, sizeof cell, "%s%s", c->secs < 0 ? "!" : "", t);
                if (v->have_share && c->has_share)
                    snprintf(cell + at, sizeof cell - (size_t)at, " %5.1f%%", 100 * c->share);
                else if (v->have_share) /* no full render in its rounds: interrupted */
                    snprintf(cell + at, sizeof cell - (size_t)at, " %6s", "-");
                flags |= c->secs < 0 ? STUDY_NOISE_NEGATIVE : 0;
            }
            fputc(' ', f);
            print_right(f, cell, 18);
        }
        fputc('\n', f);
    }
    if (flags) {
        char note[200];
        study_noise_note(note, sizeof note, flags, 0, 0, 0, 0);
        fprintf(f, "    %s\n", note);
    }
}

static void
print_tables(const plan *p, const run *runs, int n, unsigned marked, FILE *f)
{
    for (int r = 0; r < p->nranks; r++)
        print_tables_ranks(p, runs, n, marked, p->ranks[r], f);
}

/* The Universal Scalability Law on each curve, over N <= the cores. */
static void
print_usl(const plan *p, const run *runs, int n, unsigned cores, FILE *f)
{
    fprintf(f,
            "\nmodel: Universal Scalability Law, X(N) = N / (1 + s (N - 1) + k N (N - 1)),\n"
            "fitted to the medians with N <= %u physical cores\n",
            cores);
    for (int ri = 0; ri < p->nranks; ri++) {
        unsigned rk = p->ranks[ri];
        char     rl[32];
        for (int m = 0; m < p->nmodes; m++) {
            for (int l = 0; l < p->nlocks; l++) {
                usl_point pts[MAX_LIST];
                int       k = 0;
                double    lo, hi;
                for (int t = 0; t < p->nthreads; t++) {
                    double secs =
                        median_of(runs, n, rk, p->modes[m], p->locks[l], p->threads[t], &lo, &hi);
                    if (secs > 0 && (!cores || p->threads[t] <= cores))
                        pts[k++] = (usl_point){(double)p->threads[t], secs};
                }
                usl_fit    fit;
                usl_result r = usl_fit_points(pts, k, &fit);
                fprintf(f, "  %s%s, lock %s: ", ranks_label(p, rk, rl),
                        rt_texture_mode_name(p->modes[m]), ustr_lock_name(p->locks[l]));
                if (r != USL_OK) {
                    fprintf(f, "no fit (%s)\n", usl_result_str(r));
                    continue;
                }
                fprintf(f, "contention s = %.4f, coherency k = %.5f", fit.sigma, fit.kappa);
                if (fit.contention_only)
                    fputs(" (too few points: contention alone)", f);
                if (fit.peak_threads > 0)
                    fprintf(f, ", peak at N = %.1f (speed-up %.2f)", fit.peak_threads,
                            fit.peak_speedup);
                else
                    fputs(", no peak", f);
                fputc('\n', f);
            }
        }
    }
}

/* ---- provenance ---- */

/* Where the figures come from: the command, this program's version, the
 * date, the CPU, and every render option that changes what a render costs
 * (the text's header and the JSON's "provenance"). */
typedef struct provenance {
    char command[2048]; /* the words, ' ' between, a word with a space quoted */
    char date[32];      /* UTC, ISO 8601 */
    char cpu[128];      /* /proc/cpuinfo's "model name"; "unknown" */
} provenance;

static void
provenance_make(const plan *p, provenance *v)
{
    /* As a shell would take it back: a word with anything but safe
     * characters in single quotes, a quote in it as '\''. */
    size_t at = 0;
    v->command[0] = '\0';
    for (int i = 0; i < p->argc && at + 8 < sizeof v->command; i++) {
        const char *w = p->argv[i];
        bool        q = !*w || strspn(w, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                                "0123456789-_./,:=+@%") != strlen(w);
        if (i)
            v->command[at++] = ' ';
        if (q)
            v->command[at++] = '\'';
        for (; *w && at + 6 < sizeof v->command; w++) {
            if (q && *w == '\'')
                at += (size_t)snprintf(v->command + at, 5, "'\\''");
            else
                v->command[at++] = *w;
        }
        if (q)
            v->command[at++] = '\'';
        v->command[at] = '\0';
    }
    time_t    now = time(NULL);
    struct tm tm;
    strftime(v->date, sizeof v->date, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tm));
    snprintf(v->cpu, sizeof v->cpu, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    char  line[512];
    while (f && fgets(line, sizeof line, f)) {
        char *colon = strchr(line, ':');
        if (strncmp(line, "model name", 10) == 0 && colon) {
            snprintf(v->cpu, sizeof v->cpu, "%s", colon + 2);
            v->cpu[strcspn(v->cpu, "\n")] = '\0';
            break;
        }
    }
    if (f)
        fclose(f);
}

/* The render options that change a render's cost, as "name value" words
 * after the scene's own size (text), or as members of o (JSON). */
static void
options_print(const rt_options *o, FILE *f)
{
    fprintf(f, "%ux%u pixels, spp %u, integrator %s, max_depth %u, light_sampling %s, tile %u",
            o->width, o->height, o->spp, rt_integrator_name(o->integrator), o->max_depth,
            rt_light_sampling_name(o->light_sampling), o->tile);
    fprintf(f, ", intern %s, open_textures %s, max_memory_mb %u, restrict_paths %s, envmap %s",
            rt_intern_mode_name(o->intern), rt_open_mode_name(o->open), (unsigned)o->max_memory_mb,
            o->restrict_paths ? "yes" : "no", o->envmap ? o->envmap : "none");
}

static void
options_json(const rt_options *o, cJSON *j, bool *ok)
{
    rt_json_num(j, "width", o->width, ok);
    rt_json_num(j, "height", o->height, ok);
    rt_json_num(j, "spp", o->spp, ok);
    rt_json_str(j, "integrator", rt_integrator_name(o->integrator), ok);
    rt_json_num(j, "max_depth", o->max_depth, ok);
    rt_json_str(j, "light_sampling", rt_light_sampling_name(o->light_sampling), ok);
    rt_json_num(j, "tile", o->tile, ok);
    rt_json_str(j, "intern", rt_intern_mode_name(o->intern), ok);
    rt_json_str(j, "open_textures", rt_open_mode_name(o->open), ok);
    rt_json_num(j, "max_memory_mb", (double)o->max_memory_mb, ok);
    rt_json_str(j, "restrict_paths", o->restrict_paths ? "yes" : "no", ok);
    rt_json_str(j, "envmap", o->envmap, ok);
}

static void
provenance_print(const plan *p, const provenance *v, FILE *f)
{
    fprintf(f, "command: %s\nversion: study %s, %s\ncpu: %s\noptions: ", v->command, RT_VERSION,
            v->date, v->cpu);
    options_print(&p->o, f);
    fputc('\n', f);
}

/* ---- files: each through a temporary file and a rename ---- */

static FILE *
file_begin(const char *prefix, const char *ext, char tmp[4096], char path[4096])
{
    snprintf(path, 4096, "%s.%s", prefix, ext);
    snprintf(tmp, 4096, "%s.%s.tmp", prefix, ext);
    FILE *f = fopen(tmp, "w");
    if (!f)
        fprintf(stderr, "study: %s: cannot write: %s\n", tmp, strerror(errno));
    return f;
}

static bool
file_end(FILE *f, const char *tmp, const char *path)
{
    bool ok = !ferror(f);
    ok = fclose(f) == 0 && ok;
    if (!ok || rename(tmp, path) != 0) {
        fprintf(stderr, "study: %s: cannot write\n", path);
        remove(tmp);
        return false;
    }
    return true;
}

/* One value of a run: a CSV column and a JSON key alike. */
typedef struct column {
    const char *name;
    enum { COL_TEXT, COL_COUNT, COL_SECS } kind;
    const char *text;
    uint64_t    count;
    double      secs;
} column;

#define TEXT(n, v)                                                                                 \
    {                                                                                              \
        .name = n, .kind = COL_TEXT, .text = (v)                                                   \
    }
#define COUNT(n, v)                                                                                \
    {                                                                                              \
        .name = n, .kind = COL_COUNT, .count = (v)                                                 \
    }
#define SECS(n, v)                                                                                 \
    {                                                                                              \
        .name = n, .kind = COL_SECS, .secs = (v)                                                   \
    }
#define NCOLUMNS (24 + RT_WORK_NCOUNTS)

/* A run's columns, in the CSV's order. */
static void
columns_of(const run *r, column c[NCOLUMNS])
{
    const column all[NCOLUMNS] = {
        COUNT("round", (uint64_t)r->round),
        TEXT("mode", rt_texture_mode_name(r->mode)),
        TEXT("lock", ustr_lock_name(r->lock)),
        COUNT("threads", r->threads),
        COUNT("workers", r->workers),
        TEXT("table_lock", ustr_lock_name(r->table_lock)),
        SECS("render_secs", r->render_secs),
        SECS("load_secs", r->load_secs),
        SECS("bvh_secs", r->bvh_secs),
        SECS("busy_min_secs", r->busy_min),
        SECS("busy_max_secs", r->busy_max),
        SECS("cpu_secs", r->cpu_secs),
        SECS("cpu_share", study_run_cpu_share(r)),
#define WORK(name, label) COUNT(#name, r->name),
        RT_WORK_COUNTS(WORK) /* rt_counters.h */
#undef WORK
        COUNT("ustr_lookups", r->ustr_lookups),
        COUNT("ustr_inserts", r->ustr_inserts),
        COUNT("ustr_contended", r->ustr_contended),
        COUNT("tex_tile_hits", r->tex_tile_hits),
        COUNT("tex_tile_misses", r->tex_tile_misses),
        COUNT("tex_tiles_loaded", r->tex_tiles_loaded),
        COUNT("tex_bytes_read", r->tex_bytes_read),
        COUNT("tex_files_opened", r->tex_files_opened),
        COUNT("tex_file_errors", r->tex_file_errors),
        COUNT("ranks", r->ranks),
        SECS("comm_secs", r->comm_secs),
    };
    memcpy(c, all, sizeof all);
}

/* A value as CSV and JSON both write it (JSON quotes text itself; no
 * text column holds a quote, a comma or a backslash). */
static void
column_print(FILE *f, const column *c)
{
    if (c->kind == COL_TEXT)
        fputs(c->text, f);
    else if (c->kind == COL_COUNT)
        fprintf(f, "%" PRIu64, c->count);
    else
        fprintf(f, "%.6f", c->secs);
}

static bool
write_csv(const plan *p, const run *runs, int n)
{
    char   tmp[4096], path[4096];
    column c[NCOLUMNS];
    FILE  *f = file_begin(p->out, "csv", tmp, path);
    if (!f)
        return false;
    columns_of(&(run){0}, c);
    for (int k = 0; k < NCOLUMNS; k++)
        fprintf(f, "%s%s", k ? "," : "", c[k].name);
    fputc('\n', f);
    for (int i = 0; i < n; i++) {
        columns_of(&runs[i], c);
        for (int k = 0; k < NCOLUMNS; k++) {
            fputs(k ? "," : "", f);
            column_print(f, &c[k]);
        }
        fputc('\n', f);
    }
    return file_end(f, tmp, path);
}

/* The verdict as the JSON's "verdict" object. */
static void
verdict_json(const plan *p, const verdict *v, cJSON *j, bool *ok)
{
    cJSON *vj = rt_json_obj(j, "verdict", ok);
    rt_json_num(vj, "ranks", v->ranks, ok);
    cJSON *modes = rt_json_array(vj, "modes", ok);
    for (int m = 0; m < p->nmodes; m++) {
        if (!v->modes[m].threads || v->modes[m].best < 0)
            continue;
        int    b = v->modes[m].best;
        cJSON *o = rt_json_push_obj(modes, ok);
        rt_json_str(o, "mode", rt_texture_mode_name(p->modes[m]), ok);
        rt_json_num(o, "threads", v->modes[m].threads, ok);
        rt_json_str(o, "best", ustr_lock_name(p->locks[b]), ok);
        cJSON *secs = rt_json_obj(o, "secs", ok), *over = rt_json_obj(o, "best_over", ok);
        for (int l = 0; l < p->nlocks; l++) {
            rt_json_num(secs, ustr_lock_name(p->locks[l]), v->modes[m].secs[l], ok);
            if (l != b)
                rt_json_num(over, ustr_lock_name(p->locks[l]),
                            v->modes[m].secs[l] / v->modes[m].secs[b], ok);
        }
    }
    cJSON *interning = rt_json_array(vj, "interning", ok);
    for (int l = 0; l < p->nlocks; l++)
        for (int t = 0; t < p->nthreads; t++)
            if (v->intern_ok[l][t]) {
                const study_intern *c = &v->intern[l][t];
                cJSON              *o = rt_json_push_obj(interning, ok);
                rt_json_str(o, "lock", ustr_lock_name(p->locks[l]), ok);
                rt_json_num(o, "threads", p->threads[t], ok);
                rt_json_num(o, "secs", c->secs, ok);
                if (c->has_share)
                    rt_json_num(o, "share", c->share, ok);
                else
                    rt_json_str(o, "share", NULL, ok); /* no full render measured */
            }
}

/* Every table row as the JSON's "rows": per rank count, mode, lock and
 * thread count, the median time, the runs' range, the workers' median share
 * of time on a CPU, and the row's flags ("waiting": under STUDY_MIN_CPU on
 * a CPU; "spread", "short": as the table's notes). */
static void
rows_json(const plan *p, const run *runs, int n, cJSON *j, bool *ok)
{
    static const struct {
        unsigned    flag;
        const char *name;
    } flags[] = {{STUDY_NOISE_WAITING, "waiting"},
                 {STUDY_NOISE_SPREAD, "spread"},
                 {STUDY_NOISE_SHORT, "short"}};
    cJSON *rows = rt_json_array(j, "rows", ok);
    for (int r = 0; r < p->nranks; r++)
        for (int m = 0; m < p->nmodes; m++)
            for (int l = 0; l < p->nlocks; l++)
                for (int t = 0; t < p->nthreads; t++) {
                    unsigned        rk = p->ranks[r], th = p->threads[t];
                    rt_texture_mode mode = p->modes[m];
                    double lo, hi, secs = median_of(runs, n, rk, mode, p->locks[l], th, &lo, &hi);
                    if (secs <= 0)
                        continue;
                    double   cpu = cpu_share_of(runs, n, rk, mode, p->locks[l], th);
                    unsigned noise = study_row_noise(secs, lo, hi, cpu);
                    cJSON   *o = rt_json_push_obj(rows, ok);
                    rt_json_num(o, "ranks", rk, ok);
                    rt_json_str(o, "mode", rt_texture_mode_name(mode), ok);
                    rt_json_str(o, "lock", ustr_lock_name(p->locks[l]), ok);
                    rt_json_num(o, "threads", th, ok);
                    rt_json_num(o, "secs", secs, ok);
                    rt_json_num(o, "min_secs", lo, ok);
                    rt_json_num(o, "max_secs", hi, ok);
                    rt_json_num(o, "cpu_share", cpu, ok);
                    cJSON *fl = rt_json_array(o, "flags", ok);
                    for (size_t k = 0; k < sizeof flags / sizeof *flags; k++)
                        if (noise & flags[k].flag)
                            rt_json_push_str(fl, flags[k].name, ok);
                }
}

/* Every run with the CSV's fields, as the JSON's "runs". */
static void
runs_json(const run *runs, int n, cJSON *j, bool *ok)
{
    cJSON *all = rt_json_array(j, "runs", ok);
    column c[NCOLUMNS];
    for (int i = 0; i < n; i++) {
        columns_of(&runs[i], c);
        cJSON *o = rt_json_push_obj(all, ok);
        for (int k = 0; k < NCOLUMNS; k++)
            if (c[k].kind == COL_TEXT)
                rt_json_str(o, c[k].name, c[k].text, ok);
            else
                rt_json_num(o, c[k].name, c[k].kind == COL_COUNT ? (double)c[k].count : c[k].secs,
                            ok);
    }
}

/* The JSON: the machine, the plan, the provenance, the verdict, the table
 * rows and every run. */
static bool
write_json(const plan *p, const run *runs, int n, unsigned cores, bool complete,
           const provenance *pv, const verdict *v)
{
    char   path[4096], err[256];
    bool   ok = true;
    cJSON *j = cJSON_CreateObject();
    rt_json_str(j, "scene", p->o.scene, &ok);
    rt_json_num(j, "physical_cores", cores, &ok);
    rt_json_num(j, "hardware_threads", (double)sysconf(_SC_NPROCESSORS_ONLN), &ok);
    rt_json_num(j, "repeat", p->repeat, &ok);
    rt_json_bool(j, "complete", complete, &ok);
    rt_json_num(j, "width", p->o.width, &ok);
    rt_json_num(j, "height", p->o.height, &ok);
    rt_json_num(j, "spp", p->o.spp, &ok);
    rt_json_str(j, "integrator", rt_integrator_name(p->o.integrator), &ok);
    cJSON *prov = rt_json_obj(j, "provenance", &ok);
    rt_json_str(prov, "command", pv->command, &ok);
    rt_json_str(prov, "version", RT_VERSION, &ok);
    rt_json_str(prov, "date", pv->date, &ok);
    rt_json_str(prov, "cpu_model", pv->cpu, &ok);
    options_json(&p->o, rt_json_obj(prov, "options", &ok), &ok);
    verdict_json(p, v, j, &ok);
    rt_json_str(j, "work", p->work[0] ? p->work : NULL, &ok);
    rows_json(p, runs, n, j, &ok);
    runs_json(runs, n, j, &ok);
    snprintf(path, sizeof path, "%s.json", p->out);
    if (rt_json_write(j, ok, path, err, sizeof err))
        return true;
    fprintf(stderr, "study: %s\n", err);
    return false;
}

/* Writes s as a gnuplot single-quoted string, in which '' stands for '. */
static void
gnuplot_string(FILE *g, const char *s)
{
    fputc('\'', g);
    for (; *s; s++) {
        if (*s == '\'')
            fputc('\'', g);
        fputc(*s, g);
    }
    fputc('\'', g);
}

/* The plot's data: a block of "threads median min max ideal
 * light-speed-%" rows per (ranks, mode, lock) that has any (has[i] says
 * which, in loop order: gnuplot's `index` counts only the blocks written,
 * so an interrupted study's empty ones are left out, not written empty);
 * the range of the measured times (0 and 0: none). */
static bool
plot_data(const plan *p, const run *runs, int n, const char *path, double *ylo, double *yhi,
          bool *has)
{
    FILE *d = fopen(path, "w");
    if (!d) {
        fprintf(stderr, "study: %s: cannot write: %s\n", path, strerror(errno));
        return false;
    }
    double lo, hi;
    int    i = 0;
    *ylo = 0, *yhi = 0;
    for (int r = 0; r < p->nranks; r++)
        for (int m = 0; m < p->nmodes; m++)
            for (int l = 0; l < p->nlocks; l++, i++) {
                unsigned rk = p->ranks[r];
                double   t1 = median_of(runs, n, rk, p->modes[m], p->locks[l], 1, &lo, &hi);
                has[i] = false;
                for (int t = 0; t < p->nthreads; t++) {
                    double s =
                        median_of(runs, n, rk, p->modes[m], p->locks[l], p->threads[t], &lo, &hi);
                    if (s <= 0)
                        continue;
                    if (!has[i])
                        fprintf(d, "# ranks %u %s %s\n", rk, rt_texture_mode_name(p->modes[m]),
                                ustr_lock_name(p->locks[l]));
                    has[i] = true;
                    study_row row = study_row_make(p->threads[t], s, t1);
                    fprintf(d, "%u %.9f %.9f %.9f %.9f %.3f\n", p->threads[t], s, lo, hi,
                            row.expected, 100 * row.lightspeed);
                    *ylo = *ylo == 0 || lo < *ylo ? lo : *ylo;
                    *yhi = hi > *yhi ? hi : *yhi;
                }
                if (has[i])
                    fputs("\n\n", d);
            }
    return fclose(d) == 0;
}

/* Tics of a time axis from lo to hi: 1, 2 and 5 times powers of ten, more
 * steps as the range narrows (so that a narrow range still has some),
 * labelled with the unit that suits each ("1 ms", "20 ms", "1.5 s"). */
static void
plot_time_tics(FILE *g, double lo, double hi)
{
    static const double coarse[] = {1, 2, 5}, medium[] = {1, 2, 3, 5, 7},
                        fine[] = {1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 7, 8, 9};
    const double *steps = hi >= 10 * lo ? coarse : hi >= 2 * lo ? medium : fine;
    int           nsteps = hi >= 10 * lo ? 3 : hi >= 2 * lo ? 5 : 12;
    fputs("set ytics (", g);
    int k = 0;
    for (double decade = 1e-7; decade < 1e5; decade *= 10)
        for (int i = 0; i < nsteps; i++) {
            double v = decade * steps[i];
            if (v < lo / 1.001 || v > hi * 1.001)
                continue;
            char       label[32];
            study_unit u = study_unit_for(v);
            snprintf(label, sizeof label, "%g %s", v * u.per_sec, u.name);
            fprintf(g, "%s'%s' %.9g", k++ ? ", " : "", label, v);
        }
    fputs(")\n", g);
}

/* The plot, by gnuplot, two panels: render time against threads for every
 * (mode, lock), min-max error bars, the ideal t1 / N of each (clipped to
 * the measured times' range), the physical cores and hardware threads
 * marked above the frame; and % of light speed against threads. Colours
 * per lock from the Okabe-Ito palette, which colour-blind readers tell
 * apart; a dash and point per mode. */
static bool
write_png(const plan *p, const run *runs, int n, unsigned cores)
{
    static const char *palette[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                                    "#E69F00", "#56B4E9", "#000000", "#F0E442"};
    char               tmp[4096], path[4096], data[4096];
    double             ylo, yhi;
    snprintf(path, sizeof path, "%s.png", p->out);
    snprintf(tmp, sizeof tmp, "%s.png.tmp", p->out);
    snprintf(data, sizeof data, "%s.plot.tmp", p->out);
    static bool has[MAX_LIST * 3 * MAX_LIST];
    if (!plot_data(p, runs, n, data, &ylo, &yhi, has))
        return false;
    if (yhi <= 0) { /* interrupted before the first render: nothing to draw */
        remove(data);
        fprintf(stderr, "study: %s: no render measured, no plot\n", path);
        return true;
    }
    FILE *g = popen("gnuplot", "w");
    if (!g) {
        remove(data);
        fprintf(stderr, "study: cannot run gnuplot\n");
        return false;
    }
    unsigned most = 1;
    for (int t = 0; t < p->nthreads; t++)
        most = p->threads[t] > most ? p->threads[t] : most;
    long        hw = p->hw;
    const char *slash = strrchr(p->o.scene, '/');
    fputs("set terminal pngcairo size 1200,560 noenhanced font ',10'\nset output ", g);
    gnuplot_string(g, tmp);
    fputs("\ndata = ", g);
    gnuplot_string(g, data);
    fputs("\nset multiplot layout 1,2 title 'thread scaling: '.", g);
    gnuplot_string(g, slash ? slash + 1 : p->o.scene);
    fprintf(g, "\nset logscale x 2\nset xrange [0.8:%g]\nset xtics (", most * 1.25);
    for (int t = 0; t < p->nthreads; t++)
        fprintf(g, "%s'%u' %u", t ? ", " : "", p->threads[t], p->threads[t]);
    /* One key for both panels, under them. */
    fputs(")\nset grid\nset clip two\nset key at screen 0.5, screen 0.01 center bottom "
          "horizontal maxrows 2 font ',9'\nset xlabel 'threads'\nset tmargin 3\nset bmargin 7\n",
          g);
    /* The machine's limits, above the frame, where no curve runs. */
    if (cores)
        fprintf(g,
                "set arrow 1 from %u, graph 0 to %u, graph 1 nohead dt 2 lc rgb 'gray50'\n"
                "set label 1 '%u cores' at %u, graph 1 offset 0,0.7 center font ',8'\n",
                cores, cores, cores, cores);
    if (hw > 0 && (unsigned)hw != cores && (unsigned)hw <= most)
        fprintf(g,
                "set arrow 2 from %ld, graph 0 to %ld, graph 1 nohead dt 3 lc rgb 'gray50'\n"
                "set label 2 '%ld hardware threads' at %ld, graph 1 offset 0,0.7 center "
                "font ',8'\n",
                hw, hw, hw, hw);
    fprintf(g, "set logscale y 10\nset yrange [%.9g:%.9g]\n", ylo / 1.15, yhi * 1.15);
    plot_time_tics(g, ylo / 1.15, yhi * 1.15);
    fputs("set ylabel 'render time (median; bars: min to max)'\n"
          "set title 'time (dotted: ideal, t1 / N)'\nplot ",
          g);
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1)
            fputs("set ylabel '% of light speed (t1 / N / tN)'\nunset logscale y\nunset key\n"
                  "set yrange [0:*]\nset ytics auto\nset title '% of light speed'\nplot ",
                  g);
        int idx = 0, i = 0; /* idx: the blocks written (has[]); i: every series */
        for (int r = 0; r < p->nranks; r++) {
            char rl[32];
            ranks_label(p, p->ranks[r], rl);
            for (int m = 0; m < p->nmodes; m++)
                for (int l = 0; l < p->nlocks; l++, i++) {
                    if (!has[i])
                        continue;
                    const char *colour = palette[(r * p->nlocks + l) % 8];
                    fprintf(g, "%sdata index %d using 1:%s with %s lw 2 lc rgb '%s' dt %d pt %d ",
                            idx ? ", " : "", idx, pass ? "6" : "2:3:4",
                            pass ? "linespoints" : "yerrorlines", colour, m + 1, 5 + 2 * m);
                    fprintf(g, "title '%s%s, %s'", rl, rt_texture_mode_name(p->modes[m]),
                            ustr_lock_name(p->locks[l]));
                    if (pass == 0)
                        fprintf(g,
                                ", data index %d using 1:5 with lines lw 1 lc rgb '%s' dt 3 "
                                "notitle",
                                idx, colour);
                    idx++;
                }
        }
        fputs("\n", g);
    }
    fputs("unset multiplot\n", g);
    int rc = pclose(g);
    remove(data);
    if (rc != 0 || rename(tmp, path) != 0) {
        remove(tmp);
        fprintf(stderr, "study: %s: gnuplot could not draw it\n", path);
        return false;
    }
    return true;
}

/* ---- main ---- */

/* The results go to PREFIX.*: learn now, not after every render, that
 * they cannot (file_begin names the problem). */
static void
out_check(const plan *p)
{
    char  tmp[4096], path[4096];
    FILE *f = file_begin(p->out, "csv", tmp, path);
    if (!f)
        exit(1);
    fclose(f);
    remove(tmp);
}

/* Work sized to the machine: unless the user chose the resolution or the
 * samples, the image grows (its shape kept) until the fastest
 * configuration the study will time (early-out if it has it, at the most
 * threads the machine runs at once) takes at least --min-render-ms, so
 * that no row is timer noise or thread start-up; every row then renders
 * that size. `said`: the line that tells the user, "" if unchanged. */
static void
work_size(plan *p, unsigned hw, char said[256])
{
    said[0] = '\0';
    if (p->work_given || p->min_render_secs <= 0)
        return;
    rt_texture_mode mode = p->modes[p->nmodes - 1]; /* modes run full, bypass, early-out */
    for (int m = 0; m < p->nmodes; m++)
        mode = p->modes[m] == RT_TEXTURE_EARLY_OUT ? p->modes[m] : mode;
    unsigned threads = p->threads[0];
    for (int t = 0; t < p->nthreads; t++)
        if (p->threads[t] <= hw && (threads > hw || p->threads[t] > threads))
            threads = p->threads[t];
    unsigned w = p->o.width, h = p->o.height, w0 = w, h0 = h;
    run      r;
    for (int k = 0; k < 6; k++) {
        p->width = w, p->height = h;
        if (!render_one(p, mode, p->locks[0], threads, 1, &r, false))
            return; /* interrupted */
        if (r.render_secs >= p->min_render_secs || w >= RT_MAX_RESOLUTION || h >= RT_MAX_RESOLUTION)
            break;
        /* Time goes with pixels; aim 50% over, at most 8x a side a step. */
        double f = sqrt(1.5 * p->min_render_secs / (r.render_secs > 1e-4 ? r.render_secs : 1e-4));
        f = f > 8 ? 8 : f;
        double cap = (double)RT_MAX_RESOLUTION / (w > h ? w : h);
        f = f > cap ? cap : f;
        w = (unsigned)lround(w * f), h = (unsigned)lround(h * f);
        w = w ? w : 1, h = h ? h : 1;
    }
    p->o.width = p->width, p->o.height = p->height;
    if (p->width != w0 || p->height != h0)
        snprintf(said, 256,
                 "%ux%u scaled to %ux%u so that the fastest render (%s, -t %u: %.0f ms) takes >= "
                 "%.0f ms",
                 w0, h0, p->width, p->height, rt_texture_mode_name(mode), threads,
                 1e3 * r.render_secs, 1e3 * p->min_render_secs);
    else {
        p->width = p->height = 0; /* render's own size: no -r to add */
        snprintf(said, 256, "%ux%u kept: the fastest render (%s, -t %u: %.0f ms) takes >= %.0f ms",
                 w0, h0, rt_texture_mode_name(mode), threads, 1e3 * r.render_secs,
                 1e3 * p->min_render_secs);
    }
}

/* Adds v to list[0..*n) if it is not there (at most MAX_LIST). */
static void
list_add(unsigned *list, int *n, unsigned v)
{
    for (int i = 0; i < *n; i++)
        if (list[i] == v)
            return;
    if (*n < MAX_LIST)
        list[(*n)++] = v;
}

static int
cmp_unsigned(const void *a, const void *b)
{
    unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
    return (x > y) - (x < y);
}

/* study --plot STUDY.json [--out PREFIX]: a study's tables, verdict and
 * picture again, from its JSON alone (made where the study ran, drawn
 * where gnuplot is): thread counts, modes, locks and rank counts as its
 * runs have them. PREFIX: the JSON's name without ".json". */
static int
plot_again(int argc, char **argv)
{
    const char *json = NULL, *out = NULL;
    for (int i = 1; i < argc; i++) {
        const char *v = strchr(argv[i], '=');
        bool plot = strncmp(argv[i], "--plot", 6) == 0, o = strncmp(argv[i], "--out", 5) == 0;
        if ((plot || o) && !v && i + 1 >= argc)
            tool_bad_usage("%s needs a value", argv[i]);
        if (plot)
            json = v ? v + 1 : argv[++i];
        else if (o)
            out = v ? v + 1 : argv[++i];
        else
            tool_bad_usage("--plot takes only --out; '%s' is not one", argv[i]);
    }
    char      *text = study_text_read(json), prefix[4096], err[STUDY_ERR_LEN];
    study_file f;
    if (!text)
        tool_die("%s: cannot read: %s", json, strerror(errno));
    bool ok = study_file_parse(text, &f, err);
    free(text);
    if (!ok)
        tool_die("%s: %s", json, err);
    snprintf(prefix, sizeof prefix, "%s", out ? out : json);
    size_t len = strlen(prefix);
    if (!out && len > 5 && strcmp(prefix + len - 5, ".json") == 0)
        prefix[len - 5] = '\0';
    plan p = {.out = prefix, .argc = argc, .argv = argv};
    p.o.scene = f.scene;
    unsigned modes[3], locks[MAX_LIST];
    int      nmodes = 0, nlocks = 0;
    for (int i = 0; i < f.nruns; i++) {
        list_add(p.threads, &p.nthreads, f.runs[i].threads);
        list_add(p.ranks, &p.nranks, f.runs[i].ranks);
        list_add(modes, &nmodes, f.runs[i].mode);
        list_add(locks, &nlocks, f.runs[i].lock);
        p.repeat = f.runs[i].round > p.repeat ? f.runs[i].round : p.repeat;
    }
    qsort(p.threads, (size_t)p.nthreads, sizeof *p.threads, cmp_unsigned);
    qsort(p.ranks, (size_t)p.nranks, sizeof *p.ranks, cmp_unsigned);
    qsort(modes, (size_t)nmodes, sizeof *modes, cmp_unsigned); /* full, bypass, early-out */
    for (int m = 0; m < nmodes; m++)
        p.modes[m] = (rt_texture_mode)modes[m];
    for (int l = 0; l < nlocks; l++)
        p.locks[l] = (ustr_lock)locks[l];
    p.nmodes = nmodes, p.nlocks = nlocks, p.repeat = p.repeat ? p.repeat : 1;
    p.hw = f.hardware_threads;
    printf("study: %s (from %s: %d runs, on %u physical cores, %u hardware threads)\n", f.scene,
           json, f.nruns, f.physical_cores, f.hardware_threads);
    print_tables(&p, f.runs, f.nruns, p.hw, stdout);
    verdict *v = calloc(1, sizeof *v);
    if (!v)
        tool_die("out of memory");
    verdict_make(&p, f.runs, f.nruns, v);
    verdict_print(&p, v, p.hw, stdout);
    free(v);
    ok = f.nruns > 0 && write_png(&p, f.runs, f.nruns, f.physical_cores);
    if (ok)
        printf("\nwrote %s.png\n", prefix);
    study_file_free(&f);
    return ok ? 0 : 1;
}

int
main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (strncmp(argv[i], "--plot", 6) == 0 && (argv[i][6] == '\0' || argv[i][6] == '='))
            return plot_again(argc, argv);
    plan p;
    plan_parse(argc, argv, &p);
    p.hw = (unsigned)sysconf(_SC_NPROCESSORS_ONLN);
    out_check(&p);
    unsigned   cores = physical_cores();
    long       hw = sysconf(_SC_NPROCESSORS_ONLN);
    provenance pv;
    provenance_make(&p, &pv);
    struct sigaction sa = {.sa_handler = on_interrupt}; /* no SA_RESTART: a wait ends */
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    /* A first, small, untimed render (study_launch.warm_up): the scene
     * must load (a bad scene stops here, before any file is written), and
     * the OS caches its files. Then
     * under mpirun, if the study goes there: a launcher that fails fails
     * now, not after the other renders. */
    run warm;
    render_one(&p, RT_TEXTURE_FULL, p.locks[0], 1, 1, &warm, true);
    for (int r = 0; r < p.nranks; r++)
        if (p.ranks[r] > 1) {
            render_one(&p, RT_TEXTURE_FULL, p.locks[0], 1, p.ranks[r], &warm, true);
            break;
        }
    work_size(&p, hw > 0 ? (unsigned)hw : 1, p.work);

    /* '*': more threads than the machine runs at once, so the OS preempts
     * some (a lock's holder among them): the one meaning of the mark in
     * every tool (ustring-bench's too). */
    printf("study: %s\nmachine: %u physical cores, %ld hardware threads (* marks thread counts "
           "above the hardware threads: the OS preempts)\n",
           p.o.scene, cores, hw);
    provenance_print(&p, &pv, stdout);
    if (p.work[0])
        printf("work: %s\n", p.work);

    int  total = p.repeat * p.nranks * p.nmodes * p.nlocks * p.nthreads, n = 0;
    run *runs = calloc((size_t)total, sizeof *runs);
    if (!runs)
        tool_die("out of memory");
    bool tty = isatty(STDERR_FILENO);
    for (int k = 0; k < p.repeat && !stop_requested; k++) {
        for (int r = 0; r < p.nranks && !stop_requested; r++) {
            for (int l = 0; l < p.nlocks && !stop_requested; l++) {
                for (int m = 0; m < p.nmodes && !stop_requested; m++) {
                    for (int t = 0; t < p.nthreads && !stop_requested; t++) {
                        char rl[32];
                        fprintf(stderr,
                                "%sstudy: render %d of %d: round %d, %s%s, lock %s, -t %u%s",
                                tty ? "\r" : "", n + 1, total, k + 1,
                                ranks_label(&p, p.ranks[r], rl), rt_texture_mode_name(p.modes[m]),
                                ustr_lock_name(p.locks[l]), p.threads[t], tty ? "        " : "\n");
                        if (render_one(&p, p.modes[m], p.locks[l], p.threads[t], p.ranks[r],
                                       &runs[n], false))
                            runs[n++].round = k + 1;
                    }
                }
            }
        }
    }
    if (tty)
        fputc('\n', stderr);
    bool complete = n == total;
    if (!complete)
        fprintf(stderr, "study: interrupted after %d of %d renders; writing what was measured\n", n,
                total);
    verdict *v = calloc(1, sizeof *v);
    if (!v)
        tool_die("out of memory");
    verdict_make(&p, runs, n, v);
    print_tables(&p, runs, n, hw > 0 ? (unsigned)hw : 0, stdout);
    print_usl(&p, runs, n, cores, stdout);
    verdict_print(&p, v, hw > 0 ? (unsigned)hw : 0, stdout);
    bool ok = write_csv(&p, runs, n) && write_json(&p, runs, n, cores, complete, &pv, v) &&
              write_png(&p, runs, n, cores);
    free(v);
    printf("\nwrote %s.csv, %s.json, %s.png%s\n", p.out, p.out, p.out,
           complete ? "" : " (interrupted: incomplete)");
    free(runs);
    free(p.rest);
    return ok ? (complete ? 0 : 130) : 1;
}
