/* A study's results: medians over the runs, the tables, the verdict and
 * the Universal Scalability Law fit (study_plan.h). */
#define _POSIX_C_SOURCE 200809L

#include "rt_json.h"
#include "study_plan.h"
#include "tool.h"
#include "usl.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* One configuration's runs, `of` each (at most 64) into v; how many. */
static int
config_values(const run *runs, int n, unsigned ranks, rt_texture_mode mode, ustr_lock lock,
              unsigned threads, double (*of)(const run *), double v[64])
{
    int k = 0;
    for (int i = 0; i < n && k < 64; i++)
        if (runs[i].ranks == ranks && runs[i].mode == mode && runs[i].lock == lock &&
            runs[i].threads == threads)
            v[k++] = of(&runs[i]);
    return k;
}

static double
render_secs(const run *r)
{
    return r->render_secs;
}

/* The share of a run's workers' time spent opening textures (decoding, MIP
 * levels, first tiles: render's open_secs over their busy time). */
static double
open_share(const run *r)
{
    return r->busy_secs > 0 ? r->open_secs / r->busy_secs : 0;
}

/* The median render time of one configuration over its runs; 0: none. */
double
median_of(const run *runs, int n, unsigned ranks, rt_texture_mode mode, ustr_lock lock,
          unsigned threads, double *lo, double *hi)
{
    double v[64];
    int    k = config_values(runs, n, ranks, mode, lock, threads, render_secs, v);
    *lo = *hi = 0;
    for (int i = 0; i < k; i++) {
        *lo = i == 0 || v[i] < *lo ? v[i] : *lo;
        *hi = v[i] > *hi ? v[i] : *hi;
    }
    return k ? tool_median(v, k) : 0;
}

/* The median over one configuration's runs of its workers' share of time
 * on a CPU; 0: none. */
double
cpu_share_of(const run *runs, int n, unsigned ranks, rt_texture_mode mode, ustr_lock lock,
             unsigned threads)
{
    double v[64];
    int    k = config_values(runs, n, ranks, mode, lock, threads, study_run_cpu_share, v);
    return k ? tool_median(v, k) : 0;
}

/* The median over a full configuration's runs of open_share(); 0: none. */
static double
open_share_of(const run *runs, int n, unsigned ranks, ustr_lock lock, unsigned threads)
{
    double v[64];
    int    k = config_values(runs, n, ranks, RT_TEXTURE_FULL, lock, threads, open_share, v);
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

/* "-tN", with '*' past `hw` (the hardware threads; 0: no mark). */
static const char *
threads_label(unsigned threads, unsigned hw, char buf[16])
{
    snprintf(buf, 16, "-t%u%s", threads, hw && threads > hw ? "*" : "");
    return buf;
}

/* "ranks K, " before a heading when the study has ranks other than 1. */
const char *
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
    /* What of a full render is the textures' first touch, not lookups: a
     * small image's full time is mostly that (an audit: 60% at 640x480). */
    if (mode != RT_TEXTURE_FULL)
        return;
    fputs("  opening textures (decoding, MIP levels, first tiles), of the workers' time:", f);
    for (int t = 0, k = 0; t < p->nthreads; t++)
        if (runs_of(runs, n, rk, mode, lock, p->threads[t]))
            fprintf(f, "%s -t%u %.0f%%", k++ ? "," : "", p->threads[t],
                    100 * open_share_of(runs, n, rk, lock, p->threads[t]));
    fputc('\n', f);
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

void
verdict_make(const plan *p, const run *runs, int n, verdict *v)
{
    *v = (verdict){.ranks = p->ranks[0]};
    for (int r = 0; r < p->nranks; r++)
        v->ranks = p->ranks[r] == 1 ? 1 : v->ranks;
    for (int m = 0; m < p->nmodes; m++)
        v->have_share |= p->modes[m] == RT_TEXTURE_FULL;
    for (int m = 0; m < p->nmodes; m++) {
        for (int t = 0; t < p->nthreads; t++) {
            double secs[MAX_LIST], los[MAX_LIST], his[MAX_LIST];
            bool   all = true;
            for (int l = 0; l < p->nlocks; l++) {
                secs[l] = median_of(runs, n, v->ranks, p->modes[m], p->locks[l], p->threads[t],
                                    &los[l], &his[l]);
                all = all && secs[l] > 0;
            }
            if (all && p->threads[t] > v->modes[m].threads) {
                v->modes[m].threads = p->threads[t];
                memcpy(v->modes[m].secs, secs, sizeof secs);
                memcpy(v->modes[m].lo, los, sizeof los);
                memcpy(v->modes[m].hi, his, sizeof his);
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

void
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
        /* A lock whose fastest run beat the best lock's slowest is not told
         * apart from it by these runs, whatever the medians say. */
        fprintf(f, "  %s at %s: %s is", mode, label, ustr_lock_name(p->locks[b]));
        for (int l = 0, k = 0; l < p->nlocks; l++)
            if (l != b)
                fprintf(f, "%s %.2fx %s%s", k++ ? "," : "",
                        v->modes[m].secs[l] / v->modes[m].secs[b], ustr_lock_name(p->locks[l]),
                        p->repeat > 1 && v->modes[m].lo[l] <= v->modes[m].hi[b]
                            ? " (runs overlap: not told apart)"
                            : "");
        fprintf(f, "%s\n", p->repeat == 1 ? " (one run each: no spread to judge by)" : "");
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

void
print_tables(const plan *p, const run *runs, int n, unsigned marked, FILE *f)
{
    for (int r = 0; r < p->nranks; r++)
        print_tables_ranks(p, runs, n, marked, p->ranks[r], f);
}

/* The Universal Scalability Law on each curve, over N <= the cores. */
void
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
