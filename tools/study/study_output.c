/* A study's files: the provenance, PREFIX.csv, PREFIX.json and the plot
 * PREFIX.png through gnuplot (study_plan.h). */
#define _POSIX_C_SOURCE 200809L

#include "rt_json.h"
#include "study_plan.h"
#include "tool.h"
#include "usl.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

void
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

/* The texture memory budget the renders had: the default's figure, not the
 * 0 that asks for it. */
static unsigned
max_memory_mb(const rt_options *o)
{
    return o->max_memory_mb ? (unsigned)o->max_memory_mb : TEX_DEFAULT_MAX_MEMORY_MB;
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
            rt_intern_mode_name(o->intern), rt_open_mode_name(o->open), max_memory_mb(o),
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
    rt_json_num(j, "max_memory_mb", max_memory_mb(o), ok);
    rt_json_str(j, "restrict_paths", o->restrict_paths ? "yes" : "no", ok);
    rt_json_str(j, "envmap", o->envmap, ok);
}

void
provenance_print(const plan *p, const provenance *v, FILE *f)
{
    fprintf(f, "command: %s\nversion: study %s, %s\nrender: %s\ncpu: %s\noptions: ", v->command,
            RT_VERSION, v->date, v->render, v->cpu);
    options_print(&p->o, f);
    fputc('\n', f);
}

/* ---- files: each through a temporary file and a rename ---- */

FILE *
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
/* 17 of a run's own, then the lists': columns_of() checks the sum. */
#define ONE_(name, what) +1
#define NCOLUMNS         (17 + RT_WORK_NCOUNTS USTR_STATS_COUNTS(ONE_) TEX_STATS_COUNTS(ONE_))

/* A run's columns, in the CSV's order. */
static void
columns_of(const run *r, column c[NCOLUMNS])
{
    const column all[] = {
        COUNT("round", (uint64_t)r->round),
        TEXT("mode", rt_texture_mode_name(r->mode)),
        TEXT("lock", ustr_lock_name(r->lock)),
        COUNT("threads", r->threads),
        COUNT("workers", r->workers),
        TEXT("table_lock", ustr_lock_name(r->ustr.lock)),
        SECS("render_secs", r->render_secs),
        SECS("load_secs", r->load_secs),
        SECS("bvh_secs", r->bvh_secs),
        SECS("busy_min_secs", r->busy_min),
        SECS("busy_max_secs", r->busy_max),
        SECS("busy_secs", r->busy_secs),
        SECS("open_secs", r->open_secs),
        SECS("cpu_secs", r->cpu_secs),
        SECS("cpu_share", study_run_cpu_share(r)),
#define WORK(name, label) COUNT(#name, r->name),
        RT_WORK_COUNTS(WORK) /* rt_counters.h */
#undef WORK
#define USTR(name, what) COUNT("ustr_" #name, r->ustr.name),
        USTR_STATS_COUNTS(USTR) /* ustring.h */
#undef USTR
#define TEX(name, what) COUNT("tex_" #name, r->tex.name),
        TEX_STATS_COUNTS(TEX) /* texture.h */
#undef TEX
        COUNT("ranks", r->ranks),
        SECS("comm_secs", r->comm_secs),
    };
    _Static_assert(sizeof all / sizeof all[0] == NCOLUMNS, "NCOLUMNS counts every column");
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

bool
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
bool
write_json(const plan *p, const run *runs, int n, unsigned cores, bool complete,
           const provenance *pv, const verdict *v)
{
    char   path[4096], err[256];
    bool   ok = true;
    cJSON *j = cJSON_CreateObject();
    rt_json_str(j, "scene", p->o.scene, &ok);
    rt_json_num(j, "physical_cores", cores, &ok);
    rt_json_num(j, "hardware_threads", (double)sysconf(_SC_NPROCESSORS_ONLN), &ok);
    rt_json_num(j, "usable_cpus", p->hw, &ok); /* its affinity: where '*' goes */
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
    rt_json_str(prov, "render", pv->render, &ok);
    rt_json_str(prov, "cpu_model", pv->cpu, &ok);
    options_json(&p->o, rt_json_obj(prov, "options", &ok), &ok);
    verdict_json(p, v, j, &ok);
    rt_json_str(j, "work", p->work[0] ? p->work : NULL, &ok);
    rows_json(p, runs, n, j, &ok);
    runs_json(runs, n, j, &ok);
    snprintf(path, sizeof path, "%s.json", p->out);
    if (rt_json_write(j, ok, path, err, sizeof err) == RT_OK)
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
bool
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
