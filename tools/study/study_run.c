/* One render of a study as its own process (study_run.h). */
#define _POSIX_C_SOURCE 200809L

#include "study_run.h"
#include "rt_render.h" /* RT_MAX_RANKS */

#include <cJSON.h>
#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* The render (or mpirun) now running; 0: none. Lock-free, so a signal
 * handler may read it. Relaxed: the handler only needs some recent value,
 * and a signal that comes between spawn and store is seen by spawn_wait()'s
 * check of `stop_asked` after the store. */
static _Atomic pid_t         running;
static volatile sig_atomic_t stop_asked, interrupt_noted;
static const char *const     mode_flag[] = {NULL, "--bypass-texture", "--early-out"};

void
study_run_stop(void)
{
    stop_asked = 1;
    pid_t pid = atomic_load_explicit(&running, memory_order_relaxed);
    if (pid > 0)
        kill(pid, SIGINT); /* render stops at its next tile; mpirun tells its ranks */
}

void
study_run_note_interrupt(void)
{
    interrupt_noted = 1;
}

/* Whether a render ended as Ctrl-C ends one: render's own exit status
 * for it (130), or the signal itself when it came before render's
 * handler was in place. */
static bool
ended_by_interrupt(int status)
{
    return (WIFEXITED(status) && WEXITSTATUS(status) == 130) ||
           (WIFSIGNALED(status) && WTERMSIG(status) == SIGINT);
}

/* The command line of one run: [mpirun --oversubscribe -np K] render
 * REST... -t T --ustring-lock L [-r WxH] [mode] --quiet --stats-json J -o
 * E. Later options win over the user's, so the run is what it says. */
static char **
argv_make(const study_launch *l, const char *json, const char *exr, char np[16], char t[16],
          char res[32])
{
    char **argv = calloc((size_t)l->nrest + 24, sizeof *argv), **a = argv;
    if (!argv)
        return NULL;
    snprintf(np, 16, "%u", l->ranks);
    snprintf(t, 16, "%u", l->threads);
    snprintf(res, 32, "%ux%u", l->width, l->height);
    if (l->ranks > 1) {
        *a++ = (char *)l->mpirun;
        *a++ = "--oversubscribe";
        *a++ = "-np";
        *a++ = np;
    }
    *a++ = (char *)l->render;
    for (int i = 0; i < l->nrest; i++)
        *a++ = l->rest[i];
    *a++ = "-t";
    *a++ = t;
    *a++ = "--ustring-lock";
    *a++ = (char *)ustr_lock_name(l->lock);
    if (l->warm_up) {
        *a++ = "-r64x48";
        *a++ = "--spp=1";
        *a++ = "--open-textures=upfront";
    } else if (l->width && l->height) {
        *a++ = "-r";
        *a++ = res;
    }
    if (mode_flag[l->mode])
        *a++ = (char *)mode_flag[l->mode];
    *a++ = "--quiet";
    *a++ = "--exr-compression=none"; /* written after the timing; the quickest to write */
    *a++ = "--stats-json";
    *a++ = (char *)json;
    *a++ = "-o";
    *a++ = (char *)exr;
    return argv;
}

/* Runs argv in a process group of its own and waits; its wait status, or
 * -1 if it could not start. */
static int
spawn_wait(char **argv)
{
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attr, 0);
    pid_t pid;
    int   status = -1;
    if (posix_spawnp(&pid, argv[0], NULL, &attr, argv, environ) == 0) {
        atomic_store_explicit(&running, pid, memory_order_relaxed);
        if (stop_asked)
            kill(pid, SIGINT); /* asked between the spawn and the store */
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
            ;
        atomic_store_explicit(&running, 0, memory_order_relaxed);
    }
    posix_spawnattr_destroy(&attr);
    return status;
}

char *
study_text_read(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    char  *text = malloc(cap);
    while (text) {
        n += fread(text + n, 1, cap - 1 - n, f);
        if (n < cap - 1)
            break;
        char *more = cap < (256u << 20) ? realloc(text, cap * 2) : NULL;
        if (!more) {
            free(text);
            errno = ENOMEM;
        }
        text = more, cap *= 2;
    }
    if (text)
        text[n] = '\0';
    fclose(f);
    return text;
}

bool
study_run_render(const study_launch *l, study_run *r, bool *interrupted, char err[STUDY_ERR_LEN])
{
    *r = (study_run){.mode = l->mode, .lock = l->lock, .threads = l->threads, .ranks = l->ranks};
    if (interrupted)
        *interrupted = false;
    char json[4200], exr[4200], partial[4200], np[16], t[16], res[32];
    snprintf(json, sizeof json, "%s.run.json.tmp", l->tmp);
    snprintf(exr, sizeof exr, "%s.run.tmp.exr", l->tmp);
    snprintf(partial, sizeof partial, "%s.run.tmp.partial.exr", l->tmp);
    char **argv = argv_make(l, json, exr, np, t, res);
    if (!argv) {
        snprintf(err, STUDY_ERR_LEN, "out of memory");
        return false;
    }
    /* As root, Open MPI's mpirun refuses to start unless these say it may
     * (docs/distributed.md); a value the user set stays. */
    if (l->ranks > 1 && geteuid() == 0) {
        setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 0);
        setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 0);
    }
    int status = spawn_wait(argv);
    free(argv);
    char *text =
        status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? study_text_read(json) : NULL;
    remove(json), remove(exr), remove(partial);
    char prog[240];
    snprintf(prog, sizeof prog, "%.200s%s%s", l->ranks > 1 ? l->mpirun : l->render,
             l->ranks > 1 ? " -np " : "", l->ranks > 1 ? np : "");
    bool ok = false;
    if (status == -1)
        snprintf(err, STUDY_ERR_LEN, "%s: cannot start it", prog);
    else if (stop_asked || (interrupt_noted && ended_by_interrupt(status))) {
        snprintf(err, STUDY_ERR_LEN, "interrupted");
        if (interrupted)
            *interrupted = true;
    } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        snprintf(err, STUDY_ERR_LEN, "%s failed (%s %d; its message is above)", prog,
                 WIFEXITED(status) ? "exit" : "signal",
                 WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
    else if (!text)
        snprintf(err, STUDY_ERR_LEN, "%s: no statistics in %.150s", prog, json);
    else
        ok = study_run_parse(text, r, err);
    free(text);
    return ok;
}

/* ---- reading --stats-json ---- */

static double
num(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

static uint64_t
count(const cJSON *o, const char *key)
{
    /* Converted only within range: a file's 1e300 cast to an integer is
     * undefined (the ASan build's float-cast-overflow found it). */
    double v = num(o, key);
    return v > 0 ? (v < 18446744073709551616.0 ? (uint64_t)v : UINT64_MAX) : 0;
}

/* The work's counts (rt_counters.h), under their own names: in render's
 * --stats-json and in a study's runs alike. */
static void
work_read(const cJSON *o, study_run *r)
{
#define READ(name, label) r->name = count(o, #name);
    RT_WORK_COUNTS(READ)
#undef READ
}

/* One process's workers, from its per-thread arrays: min and max busy
 * time, and the sums. */
static void
threads_read(const cJSON *root, study_run *r)
{
    const cJSON *busy = cJSON_GetObjectItemCaseSensitive(root, "thread_busy_secs");
    const cJSON *cpu = cJSON_GetObjectItemCaseSensitive(root, "thread_cpu_secs");
    const cJSON *b, *c;
    int          k = 0;
    cJSON_ArrayForEach(b, busy)
    {
        double s = cJSON_IsNumber(b) ? b->valuedouble : 0;
        r->busy_min = k++ == 0 || s < r->busy_min ? s : r->busy_min;
        r->busy_max = s > r->busy_max ? s : r->busy_max;
        r->busy_secs += s;
    }
    cJSON_ArrayForEach(c, cpu) r->cpu_secs += cJSON_IsNumber(c) ? c->valuedouble : 0;
}

/* Adds the string table's and texture system's counts in `o` (render's
 * report, or one rank's entry in it) to r's. */
static void
tables_add(const cJSON *o, study_run *r)
{
    const cJSON *u = cJSON_GetObjectItemCaseSensitive(o, "ustring");
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(o, "texture");
#define ADD(name, what) r->ustr.name += count(u, #name);
    USTR_STATS_COUNTS(ADD) /* ustring.h */
#undef ADD
#define ADD(name, what) r->tex.name += count(t, #name);
    TEX_STATS_COUNTS(ADD) /* texture.h */
#undef ADD
}

/* Under mpirun, one entry per rank: a rank's mean thread for the busy
 * range, and the job's sums. */
static void
ranks_read(const cJSON *ranks, study_run *r)
{
    const cJSON *k;
    int          i = 0;
    r->busy_secs = r->cpu_secs = r->busy_min = r->busy_max = 0;
    r->ustr = (ustr_stats){.lock = r->ustr.lock};
    r->tex = (tex_stats){0};
    cJSON_ArrayForEach(k, ranks)
    {
        double n = num(k, "threads"), busy = num(k, "busy_secs");
        double mean = busy / (n > 0 ? n : 1);
        r->busy_min = i++ == 0 || mean < r->busy_min ? mean : r->busy_min;
        r->busy_max = mean > r->busy_max ? mean : r->busy_max;
        r->busy_secs += busy, r->cpu_secs += num(k, "cpu_secs");
        r->comm_secs += num(k, "comm_secs");
        tables_add(k, r);
    }
}

bool
study_run_parse(const char *json, study_run *r, char err[STUDY_ERR_LEN])
{
    cJSON *root = cJSON_Parse(json);
    if (!cJSON_IsObject(root) ||
        !cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(root, "render_secs"))) {
        snprintf(err, STUDY_ERR_LEN, "render's statistics are not its --stats-json");
        cJSON_Delete(root);
        return false;
    }
    r->workers = (unsigned)count(root, "threads");
    r->render_secs = num(root, "render_secs"), r->load_secs = num(root, "load_secs");
    r->open_secs = num(root, "open_secs");
    r->bvh_secs = num(root, "bvh_secs");
    work_read(root, r);
    r->tiles = count(root, "tiles_rendered");
    const cJSON *lock =
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(root, "ustring"), "lock");
    r->ustr = (ustr_stats){.lock = USTR_LOCK_DEFAULT};
    if (!cJSON_IsString(lock) || ustr_lock_parse(lock->valuestring, &r->ustr.lock) != USTR_OK)
        r->ustr.lock = USTR_LOCK_DEFAULT;
    r->tex = (tex_stats){0};
    tables_add(root, r);
    threads_read(root, r);
    const cJSON *ranks = cJSON_GetObjectItemCaseSensitive(root, "ranks");
    if (cJSON_GetArraySize(ranks) > 0)
        ranks_read(ranks, r);
    cJSON_Delete(root);
    return true;
}

double
study_run_cpu_share(const study_run *r)
{
    return r->busy_secs > 0 ? r->cpu_secs / r->busy_secs : 0;
}

/* ---- a study's own JSON ---- */

static const char *
text(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : "";
}

/* One of the JSON's "runs", whose keys are the CSV's columns. */
static bool
row_read(const cJSON *o, study_run *r)
{
    static const char *const modes[] = {"full", "bypass", "early-out"};
    bool                     mode_ok = false;
    for (int m = 0; m < 3; m++)
        if (strcmp(text(o, "mode"), modes[m]) == 0)
            r->mode = (rt_texture_mode)m, mode_ok = true;
    if (!mode_ok || ustr_lock_parse(text(o, "lock"), &r->lock) != USTR_OK)
        return false;
    if (ustr_lock_parse(text(o, "table_lock"), &r->ustr.lock) != USTR_OK)
        r->ustr.lock = r->lock; /* written before studies reported it */
    /* What a study writes and no more: a round past --repeat's 63 made
     * --plot walk every round up to it (2^31 of them: a hang). */
    uint64_t round = count(o, "round"), threads = count(o, "threads"), ranks = count(o, "ranks");
    if (round < 1 || round > STUDY_MAX_REPEAT || threads < 1 || threads > RT_MAX_THREADS ||
        ranks > RT_MAX_RANKS)
        return false;
    r->round = (int)round, r->threads = (unsigned)threads;
    r->ranks = ranks ? (unsigned)ranks : 1;
    r->workers = (unsigned)count(o, "workers");
    r->render_secs = num(o, "render_secs"), r->load_secs = num(o, "load_secs");
    r->open_secs = num(o, "open_secs");
    r->bvh_secs = num(o, "bvh_secs"), r->busy_min = num(o, "busy_min_secs");
    r->busy_max = num(o, "busy_max_secs"), r->cpu_secs = num(o, "cpu_secs");
    /* busy_secs as written; a study's file from before it had the column:
     * cpu_share = cpu_secs / busy_secs, kept as the row says. */
    double share = num(o, "cpu_share");
    r->busy_secs = num(o, "busy_secs");
    r->busy_secs = r->busy_secs > 0 ? r->busy_secs : share > 0 ? r->cpu_secs / share : 0;
    r->comm_secs = num(o, "comm_secs");
    work_read(o, r);
#define READ(name, what) r->ustr.name = count(o, "ustr_" #name);
    USTR_STATS_COUNTS(READ)
#undef READ
#define READ(name, what) r->tex.name = count(o, "tex_" #name);
    TEX_STATS_COUNTS(READ)
#undef READ
    return r->threads > 0 && r->render_secs > 0;
}

bool
study_file_parse(const char *json, study_file *f, char err[STUDY_ERR_LEN])
{
    *f = (study_file){0};
    cJSON       *root = cJSON_Parse(json);
    const cJSON *runs = cJSON_GetObjectItemCaseSensitive(root, "runs");
    const char  *scene = text(root, "scene");
    int          n = cJSON_GetArraySize(runs);
    if (!cJSON_IsObject(root) || !cJSON_IsArray(runs) || !scene[0]) {
        snprintf(err, STUDY_ERR_LEN, "not a study's JSON (no scene, or no runs)");
        cJSON_Delete(root);
        return false;
    }
    f->scene = strdup(scene);
    f->runs = calloc(n > 0 ? (size_t)n : 1, sizeof *f->runs);
    f->physical_cores = (unsigned)count(root, "physical_cores");
    f->hardware_threads = (unsigned)count(root, "hardware_threads");
    f->usable_cpus = (unsigned)count(root, "usable_cpus");
    bool         ok = f->scene && f->runs;
    const cJSON *o;
    cJSON_ArrayForEach(o, runs)
    {
        if (!ok)
            break;
        ok = row_read(o, &f->runs[f->nruns]);
        if (!ok)
            snprintf(err, STUDY_ERR_LEN, "run %d: not a run of a study", f->nruns + 1);
        f->nruns++;
    }
    if (!f->scene || !f->runs)
        snprintf(err, STUDY_ERR_LEN, "out of memory");
    cJSON_Delete(root);
    if (!ok)
        study_file_free(f);
    return ok;
}

void
study_file_free(study_file *f)
{
    free(f->scene);
    free(f->runs);
    *f = (study_file){0};
}
