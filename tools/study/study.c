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
 * measured is written. --deadline SECS does the same by itself, SECS after
 * the study starts (the second stop --grace seconds later): a study given
 * a machine for minutes ends in time with what it measured. `study --plot
 * STUDY.json` prints the tables and draws the picture again from a study's
 * JSON.
 *
 * This file: the command line, the runs and main. The results (medians,
 * tables, verdict, USL) are study_results.c's, the files (provenance, CSV,
 * JSON, plot) study_output.c's; study_plan.h is what they share. */
#define _POSIX_C_SOURCE 200809L

#include "study_plan.h"
#include "tool.h"
#include "usl.h"
#include "ustr_cpus.h"

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

extern char **environ;

static void
usage(FILE *f)
{
    fputs("usage: study SCENE [options] [render options]\n"
          "  --threads LIST   thread counts (default 1,2,4,8,12,16,20,24,32)\n"
          "  --modes LIST     full, bypass, early-out (default all three)\n"
          "  --locks LIST     mutex, spin, rwspin, sharded, lockfree, default (default: default)\n"
          "  --repeat K       renders per configuration, median reported (default 3)\n"
          "  --mpi-ranks LIST MPI ranks: 1 runs `render`, K > 1 runs\n"
          "                   `mpirun -np K render` (default 1)\n"
          "  --render PATH    the render program (default: ../renderer/render beside\n"
          "                   this program, else render on PATH)\n"
          "  --mpirun PATH    the MPI launcher (default mpirun)\n"
          "  --min-render-ms MS  unless -r or --spp is given, grow the image until the\n"
          "                   fastest render takes MS (default 100; 0: never)\n"
          "  --deadline SECS  SECS after the start, stop as Ctrl-C would: the running\n"
          "                   render finishes, what was measured is written (incomplete)\n"
          "  --grace SECS     after the deadline, stop the running render too after SECS\n"
          "                   more, as a second Ctrl-C would (default 20)\n"
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

/* The value of --deadline or --grace: whole seconds, 0 to a week. */
static int
seconds_arg(const char *name, const char *v)
{
    char *end;
    long  k = strtol(v, &end, 10);
    if (*end || end == v || k < 0 || k > 7 * 24 * 3600)
        tool_bad_usage("%s: '%s' is not a time in seconds (0..604800)", name, v);
    return (int)k;
}

/* Takes the study's own options out of argv; the rest (the scene and the
 * render options) go through render's parser. */
static void
plan_parse(int argc, char **argv, plan *p)
{
    *p = (plan){.repeat = 3,
                .out = "study",
                .argc = argc,
                .argv = argv,
                .min_render_secs = 0.1,
                .deadline_secs = -1,
                .grace_secs = 20};
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
    static const char *const own[] = {"--threads",       "--modes",     "--locks",  "--repeat",
                                      "--out",           "--mpi-ranks", "--render", "--mpirun",
                                      "--min-render-ms", "--deadline",  "--grace"};
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
            if (*end || end == v || k < 1 || k > STUDY_MAX_REPEAT)
                tool_bad_usage("--repeat: '%s' is not a count (1..63)", v);
            p->repeat = (int)k;
            repeat_given = true;
        } else if (strcmp(name, "--min-render-ms") == 0) {
            char *end;
            long  k = strtol(v, &end, 10);
            if (*end || end == v || k < 0 || k > 600000)
                tool_bad_usage("--min-render-ms: '%s' is not a time in ms (0..600000)", v);
            p->min_render_secs = (double)k / 1e3;
        } else if (strcmp(name, "--deadline") == 0) {
            p->deadline_secs = seconds_arg(name, v);
        } else if (strcmp(name, "--grace") == 0) {
            p->grace_secs = (unsigned)seconds_arg(name, v);
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
    /* Each run's mode is the study's flag alone: one passed to every render
     * would turn the full rows into bypass or early-out ones, labelled full. */
    if (p->o.texture_mode != RT_TEXTURE_FULL)
        tool_bad_usage("%s: the study runs the texture modes --modes names "
                       "(full,bypass,early-out), not one for every render",
                       p->o.texture_mode == RT_TEXTURE_BYPASS ? "--bypass-texture" : "--early-out");
    free(rest);
}

/* ---- the machine ---- */

/* Physical cores among the CPUs the study may run on (ustr_cpus.h): distinct
 * (package, core) pairs in sysfs; 0 when unknown. */
static unsigned
physical_cores(void)
{
    static unsigned ids[1024], pairs[1024][2];
    unsigned        n = 0, ncpus = ustr_cpus_usable_ids(ids, 1024);
    for (unsigned i = 0; i < ncpus; i++) {
        char     path[128];
        unsigned v[2];
        bool     ok = true;
        for (int k = 0; k < 2 && ok; k++) {
            snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%u/topology/%s", ids[i],
                     k == 0 ? "physical_package_id" : "core_id");
            FILE *f = fopen(path, "r");
            ok = f && fscanf(f, "%u", &v[k]) == 1;
            if (f)
                fclose(f);
        }
        if (!ok)
            continue;
        bool seen = false;
        for (unsigned k = 0; k < n && !seen; k++)
            seen = pairs[k][0] == v[0] && pairs[k][1] == v[1];
        if (!seen)
            pairs[n][0] = v[0], pairs[n][1] = v[1], n++;
    }
    return n;
}

/* ---- one run ---- */

/* Ctrl-C or the deadline: the first lets the running render finish, then
 * the study writes what it measured, saying `note`; the second stops that
 * render too (study_run_stop()). Async-signal-safe: called from the
 * handlers. */
static volatile sig_atomic_t stop_requested;

static void
stop_step(const char *note, size_t len)
{
    if (stop_requested) {
        study_run_stop();
    } else {
        study_run_note_interrupt();
        ssize_t n = write(STDERR_FILENO, note, len);
        (void)n; /* nothing to do if stderr is gone */
    }
    stop_requested = 1;
}

static void
on_interrupt(int sig)
{
    (void)sig;
    static const char first[] = "\nstudy: stopping after this render (Ctrl-C again: now)\n";
    stop_step(first, sizeof first - 1);
}

/* --deadline: what the first alarm says (written before it is armed: no
 * formatting in a handler), the grace the second one waits, and whether
 * the first has come. */
static char                  deadline_note[128], grace_note[128];
static size_t                deadline_note_len, grace_note_len;
static unsigned              grace_secs;
static volatile sig_atomic_t deadline_passed;

/* SIGALRM in `secs` seconds; now for 0, which alarm() would take as "none".
 * Async-signal-safe (alarm(), raise()). */
static void
alarm_in(unsigned secs)
{
    if (secs)
        alarm(secs);
    else
        raise(SIGALRM); /* blocked inside the handler: delivered as it returns */
}

/* The deadline: the first stop, unless Ctrl-C made it already; either way
 * the running render is stopped (the second stop) the grace later. */
static void
on_deadline(int sig)
{
    (void)sig;
    if (deadline_passed) { /* the grace is over: the second stop */
        study_run_stop();
        return;
    }
    deadline_passed = 1;
    alarm_in(grace_secs);
    if (!stop_requested) {
        stop_step(deadline_note, deadline_note_len);
    } else { /* Ctrl-C made the first stop: say when the second comes */
        ssize_t n = write(STDERR_FILENO, grace_note, grace_note_len);
        (void)n;
    }
}

/* Ctrl-C's handler, and the deadline's if there is one. In the study's
 * own process, before its first render: the handlers are in place from
 * then on, so a stop can never find the study unable to take it. Each
 * handler blocks the other, so that the two never interleave their
 * reading and setting of what has been asked. */
static void
stops_arm(const plan *p)
{
    struct sigaction sa = {.sa_handler = on_interrupt}; /* no SA_RESTART: a wait ends */
    sigemptyset(&sa.sa_mask);
    sigaddset(&sa.sa_mask, SIGINT);
    sigaddset(&sa.sa_mask, SIGALRM);
    sigaction(SIGINT, &sa, NULL);
    if (p->deadline_secs < 0)
        return;
    int n = snprintf(deadline_note, sizeof deadline_note,
                     "\nstudy: the deadline (%d s) has passed: stopping after this render "
                     "(in %u s more: now)\n",
                     p->deadline_secs, p->grace_secs);
    deadline_note_len = n > 0 && (size_t)n < sizeof deadline_note ? (size_t)n : 0;
    n = snprintf(grace_note, sizeof grace_note,
                 "\nstudy: the deadline (%d s) has passed: the render stops in %u s\n",
                 p->deadline_secs, p->grace_secs);
    grace_note_len = n > 0 && (size_t)n < sizeof grace_note ? (size_t)n : 0;
    grace_secs = p->grace_secs;
    sa.sa_handler = on_deadline;
    sigaction(SIGALRM, &sa, NULL);
    alarm_in((unsigned)p->deadline_secs);
}

/* After the last render: a deadline still to come has nothing to stop. */
static void
stops_disarm(void)
{
    alarm(0);
}

/* The first executable `name` in a folder of PATH, written into buf;
 * `name` itself if there is none (starting it then fails, and says so). */
static const char *
on_path(const char *name, char buf[4096])
{
    for (const char *d = getenv("PATH"); d && *d;) {
        size_t n = strcspn(d, ":");
        if (n > 0 && n + strlen(name) + 2 <= 4096) {
            snprintf(buf, 4096, "%.*s/%s", (int)n, d, name);
            if (access(buf, X_OK) == 0)
                return buf;
        }
        d += n + (d[n] == ':');
    }
    return name;
}

/* The render program: --render, else ../renderer/render beside this
 * program (the build tree's layout), else `render` on PATH (programs
 * installed side by side, or run through a loader, as on a lent machine:
 * /proc/self/exe is then the loader). The study names it in its header. */
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
    return access(buf, X_OK) == 0 ? buf : on_path("render", buf);
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
        if (stop_requested)
            return; /* nothing more will be rendered */
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
    /* Six steps or the largest resolution may stop short of the aim: said. */
    const char *reached = r.render_secs >= p->min_render_secs ? "takes >=" : "falls short of";
    if (p->width != w0 || p->height != h0)
        snprintf(said, 256,
                 "%ux%u scaled to %ux%u so that the fastest render (%s, -t %u: %.0f ms) %s "
                 "%.0f ms",
                 w0, h0, p->width, p->height, rt_texture_mode_name(mode), threads,
                 1e3 * r.render_secs, reached, 1e3 * p->min_render_secs);
    else {
        p->width = p->height = 0; /* render's own size: no -r to add */
        snprintf(said, 256, "%ux%u kept: the fastest render (%s, -t %u: %.0f ms) %s %.0f ms", w0,
                 h0, rt_texture_mode_name(mode), threads, 1e3 * r.render_secs, reached,
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
    p.hw = f.usable_cpus ? f.usable_cpus : f.hardware_threads; /* older files: the machine's */
    char of[64] = "";
    if (f.hardware_threads > p.hw)
        snprintf(of, sizeof of, " of %u online (its CPU affinity)", f.hardware_threads);
    printf("study: %s (from %s: %d runs, on %u physical cores, %u hardware threads%s)\n", f.scene,
           json, f.nruns, f.physical_cores, p.hw, of);
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
    /* The CPUs the study and its renders may run on (the renders inherit
     * its affinity): where `*` goes, what the work is sized for. */
    p.hw = ustr_cpus_usable();
    out_check(&p);
    unsigned   cores = physical_cores();
    long       hw = p.hw, online = sysconf(_SC_NPROCESSORS_ONLN);
    provenance pv;
    provenance_make(&p, &pv);
    char prog[4096];
    snprintf(pv.render, sizeof pv.render, "%s", render_path(&p, prog));
    stops_arm(&p);
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
    work_size(&p, p.hw, p.work);

    /* '*': more threads than the machine runs at once, so the OS preempts
     * some (a lock's holder among them): the one meaning of the mark in
     * every tool (ustring-bench's too). */
    char of[64] = "";
    if (online > hw)
        snprintf(of, sizeof of, " of %ld online (its CPU affinity)", online);
    printf("study: %s\nmachine: %u physical cores, %ld hardware threads%s (* marks thread counts "
           "above the hardware threads: the OS preempts)\n",
           p.o.scene, cores, hw, of);
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
    stops_disarm();
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
    print_tables(&p, runs, n, p.hw, stdout);
    print_usl(&p, runs, n, cores, stdout);
    verdict_print(&p, v, p.hw, stdout);
    bool ok = write_csv(&p, runs, n) && write_json(&p, runs, n, cores, complete, &pv, v) &&
              write_png(&p, runs, n, cores);
    free(v);
    printf("\nwrote %s.csv, %s.json, %s.png%s\n", p.out, p.out, p.out,
           complete ? "" : " (interrupted: incomplete)");
    free(runs);
    free(p.rest);
    return ok ? (complete ? 0 : 130) : 1;
}
