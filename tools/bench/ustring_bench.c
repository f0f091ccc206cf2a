/* ustring-bench: how fast the intern table is, per lock strategy and thread
 * count. The options and the result line are a contract (docs/design.md):
 *
 *   ustring-bench lock=L threads=T ops=N secs=S mops=R
 *
 * one per run, where N counts the operations of all threads and S is the
 * median of --repeat timed runs. --scale runs the four standard workloads
 * for every strategy and prints them as tables. --floor times each strategy
 * against the floor (intern_floor.h), one line per strategy:
 *
 *   ustring-bench floor lock=L threads=1 ops=N floor_mops=F mops=R ratio=X
 *       spread=A-B speedup2=S floor_speedup2=G checksum=C floor_checksum=C
 *
 * (one line), where X is the median over the rounds of the table's time
 * over the floor's, A-B its range, S the table's 2-thread throughput over
 * its 1-thread throughput and G the same for the floor read by 2 threads at
 * once: what this machine gives the simplest code, the ceiling for S. With
 * --threads T,..., a speedupT=S floor_speedupT=G pair for each T instead of
 * 2. */
#define _POSIX_C_SOURCE 200809L

#include "intern_floor.h"
#include "texpaths.h"
#include "tool.h"
#include "ustr_cpus.h"
#include "ustring.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_LIST 32
#define WARM_UP  1000 /* interns each thread makes untimed before the barrier */

const char tool_prog[] = "ustring-bench";

typedef struct strings {
    char  **s;
    size_t *len;
    size_t  n;
    char   *storage;
} strings;

typedef struct workload {
    const char *name;
    double      new_fraction;
    bool        same_string; /* every op interns line 0 */
    uint64_t    ops;         /* per thread */
} workload;

typedef struct bench {
    strings   lines;
    unsigned  threads[MAX_LIST];
    int       nthreads;
    ustr_lock locks[MAX_LIST];
    int       nlocks;
    int       repeat;
    bool      print_stats;
    bool      print_rounds; /* --rounds: each run's time on stderr as it ends */
    unsigned  cpus;         /* the CPUs it may run on (ustr_cpus.h), read once */
    bool      floor;        /* --floor */
} bench;

typedef struct worker {
    const bench        *b;
    const workload     *w;
    ustr_table         *table;
    const intern_floor *floor; /* non-NULL: look up here instead (--floor) */
    pthread_barrier_t  *start;
    unsigned            t;
    tool_thread_clock   clock; /* read by the thread itself */
    uint64_t            checksum;
    bool                failed;
} worker;

static const char usage_text[] =
    "usage: ustring-bench [--strings FILE | --generate N] [--seed S]\n"
    "                     [--threads T[,T...]] [--ops M] [--new-fraction F]\n"
    "                     [--same-string] [--lock L[,L...]|all] [--repeat K]\n"
    "                     [--scale] [--stats] [--rounds] [--floor]\n"
    "  --strings FILE    intern the lines of FILE (one string per line)\n"
    "  --generate N      intern N generated texture paths instead (default 1000)\n"
    "  --seed S          seed of the generated paths (default 1)\n"
    "  --threads LIST    thread counts (default 1,2; with --scale 1,2,8,32)\n"
    "  --ops M           operations per thread (default 1000000; with --scale the\n"
    "                    new-string workloads run M/5)\n"
    "  --new-fraction F  share of operations that intern a brand-new string\n"
    "  --same-string     every operation interns the first line\n"
    "  --lock LIST       mutex, spin, rwspin, sharded, lockfree, default or all\n"
    "  --repeat K        timed runs per configuration; the median is reported (3)\n"
    "  --scale           run hot, 10% new, 100% new and same-string workloads for\n"
    "                    every lock and print tables of throughput and speed-up\n"
    "  --stats           print the table's statistics after each configuration\n"
    "  --rounds          print each timed run as it ends, in the order run (stderr):\n"
    "                    a round runs every lock at every thread count, the locks'\n"
    "                    order rotating by round\n"
    "  --floor           hot lookups against the floor, a plain table with the same\n"
    "                    hash and compare; rounds alternate the floor and the table\n"
    "                    at 1 thread, then both at each --threads count (default 2;\n"
    "                    the floor's speed-up is the machine's ceiling); --repeat\n"
    "                    rounds, default 5\n";

/* ---- strings ---- */

static void
strings_index(strings *l, size_t size)
{
    size_t n = 0;
    for (size_t i = 0; i < size; i++)
        n += l->storage[i] == '\n';
    if (size && l->storage[size - 1] != '\n')
        n++; /* a last line without its newline */
    l->s = malloc((n ? n : 1) * sizeof *l->s);
    l->len = malloc((n ? n : 1) * sizeof *l->len);
    if (!l->s || !l->len)
        tool_die("out of memory");
    char *p = l->storage, *end = l->storage + size;
    for (l->n = 0; p < end; l->n++) {
        char  *nl = memchr(p, '\n', (size_t)(end - p));
        size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
        l->s[l->n] = p;
        l->len[l->n] = len;
        p += len + 1;
    }
}

static void
strings_read(strings *l, const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        tool_die("%s: cannot open: %s", path, strerror(errno));
    size_t cap = 1 << 16, size = 0;
    l->storage = malloc(cap);
    for (size_t got; l->storage && (got = fread(l->storage + size, 1, cap - size, f)) > 0;) {
        size += got;
        if (size == cap)
            l->storage = realloc(l->storage, cap *= 2);
    }
    if (!l->storage)
        tool_die("out of memory");
    if (ferror(f))
        tool_die("%s: read error", path);
    fclose(f);
    strings_index(l, size);
    if (l->n == 0)
        tool_die("%s: no strings in the file", path);
}

static void
strings_generate(strings *l, size_t n, uint64_t seed)
{
    l->storage = malloc(n * (TEXPATH_MAX_LEN + 1));
    if (!l->storage)
        tool_die("out of memory");
    size_t size = 0;
    for (size_t i = 0; i < n; i++) {
        size += texpath_make(seed, i, l->storage + size, TEXPATH_MAX_LEN + 1);
        l->storage[size++] = '\n';
    }
    strings_index(l, size);
}

/* ---- one run ---- */

/* The line that operation draw r interns (the contract's step 3). */
static inline size_t
line_of(const workload *w, const strings *l, uint64_t r)
{
    return w->same_string ? 0 : (size_t)(r % l->n);
}

/* Writes line + '#' + t + '#' + i into buf (the contract's new string). */
static size_t
new_string(char *buf, size_t cap, const char *line, size_t len, unsigned t, uint64_t i)
{
    if (len > cap - 48)
        len = cap - 48; /* keep room for the suffix; such long lines are rare */
    memcpy(buf, line, len);
    int n = snprintf(buf + len, cap - len, "#%u#%" PRIu64, t, i);
    return len + (size_t)n;
}

static void *
worker_main(void *arg)
{
    worker         *wk = arg;
    const strings  *l = &wk->b->lines;
    const workload *w = wk->w;
    char           *buf = malloc(4096);
    uint64_t        x = tool_seed(wk->t), sum = 0;

    /* Warm-up, untimed: the thread's first use of the table registers it,
     * and its caches fill. */
    for (size_t i = 0; i < l->n && i < WARM_UP; i++)
        sum += (uintptr_t)ustr_table_intern(wk->table, l->s[i], l->len[i]);

    pthread_barrier_wait(wk->start);
    tool_thread_clock_start(&wk->clock);
    for (uint64_t i = 0; i < w->ops; i++) {
        uint64_t r = tool_xorshift64star(&x);
        size_t   k = line_of(w, l, r);
        ustr     u;
        if (w->new_fraction > 0 && tool_unit(r) < w->new_fraction)
            u = ustr_table_intern(wk->table, buf,
                                  new_string(buf, 4096, l->s[k], l->len[k], wk->t, i));
        else
            u = ustr_table_intern(wk->table, l->s[k], l->len[k]);
        if (!u) {
            wk->failed = true;
            break;
        }
        sum += (uintptr_t)u;
    }
    tool_thread_clock_stop(&wk->clock);
    wk->checksum = sum;
    free(buf);
    return NULL;
}

static ustr_table *
table_preloaded(const bench *b, ustr_lock lock)
{
    ustr_table *t;
    ustr_config cfg = {.lock = lock, .initial_capacity = b->lines.n};
    ustr_result r = ustr_table_create(&cfg, &t);
    if (r != USTR_OK)
        tool_die("cannot create a table: %s", ustr_result_str(r));
    for (size_t i = 0; i < b->lines.n; i++)
        if (!ustr_table_intern(t, b->lines.s[i], b->lines.len[i]))
            tool_die("cannot intern the strings: %s", strerror(errno));
    return t;
}

/* Seconds for one timed run on `table`: threads start together at a
 * barrier, and the run lasts from the first thread's start to the last
 * one's end, as each thread reads the clock itself (a main thread that took
 * the times could be descheduled behind the workers when they outnumber the
 * cores). With `floor`, the threads look up there instead of in `table`.
 * *checksum: the sum of the threads' checksums. If `late` is not NULL,
 * how far the run's threads fell short of running side by side
 * (tool_late_shares()). */
static void *floor_main(void *arg);

static double
run_threads(const bench *b, const workload *w, ustr_table *table, const intern_floor *floor,
            unsigned nthreads, uint64_t *checksum, double late[2])
{
    worker           *wk = calloc(nthreads, sizeof *wk);
    pthread_t        *tid = calloc(nthreads, sizeof *tid);
    pthread_barrier_t start;
    if (!wk || !tid)
        tool_die("out of memory");
    pthread_barrier_init(&start, NULL, nthreads + 1);
    for (unsigned t = 0; t < nthreads; t++) {
        wk[t] = (worker){.b = b, .w = w, .table = table, .floor = floor, .start = &start, .t = t};
        if (pthread_create(&tid[t], NULL, floor ? floor_main : worker_main, &wk[t]) != 0)
            tool_die("cannot start a thread");
    }
    pthread_barrier_wait(&start);
    bool      failed = false;
    tool_late run = {0};
    uint64_t  sum = 0;
    for (unsigned t = 0; t < nthreads; t++) {
        pthread_join(tid[t], NULL);
        failed |= wk[t].failed;
        sum += wk[t].checksum;
        tool_late_add(&run, &wk[t].clock);
    }
    if (failed)
        tool_die("an intern call failed (out of memory?)");
    pthread_barrier_destroy(&start);
    free(wk);
    free(tid);
    *checksum = sum;
    if (late)
        tool_late_shares(&run, late);
    return tool_late_secs(&run);
}

/* Seconds for one timed run on a fresh table; `late` as run_threads(). */
static double
run_once(const bench *b, const workload *w, ustr_lock lock, unsigned nthreads, bool last,
         double late[2])
{
    ustr_table *table = table_preloaded(b, lock);
    uint64_t    checksum;
    double      secs = run_threads(b, w, table, NULL, nthreads, &checksum, late);
    if (last && b->print_stats) {
        ustr_stats s;
        ustr_table_stats(table, &s);
        ustr_stats_print(&s, "  ", stderr);
    }
    ustr_table_destroy(table);
    return secs;
}

/* Times every lock at every thread count, --repeat rounds, interleaved: a
 * round runs each lock at each thread count once, the locks in an order
 * that rotates by round, so that a machine whose speed drifts (another
 * job, a noisy neighbour) weighs on every lock and every thread count
 * alike, and both kinds of ratio hold (one lock's against another's, and
 * --scale's x, N threads' against 1's), where one after another would hand
 * the drift to whichever ran then. secs[j][i][k]: thread count j's time
 * with lock i in round k. Then prints the result lines, medians, and on
 * stderr a warning for each line whose threads, no more than the CPUs,
 * did not run side by side (tool_late_warn()): its figure is not the
 * lock's scaling. Progress on stderr where it is a terminal. */
static void
run_rounds(const bench *b, const workload *w, double secs[][MAX_LIST][64])
{
    static double late[MAX_LIST][MAX_LIST][64][2]; /* threads, lock, round: run_threads()' */
    bool          progress = isatty(STDERR_FILENO);
    for (int k = 0; k < b->repeat; k++)
        for (int j = 0; j < b->nthreads; j++)
            for (int r = 0; r < b->nlocks; r++) {
                int i = (r + k) % b->nlocks;
                if (progress)
                    fprintf(stderr, "\rustring-bench: %s: round %d of %d, %u threads, %s      ",
                            w->name, k + 1, b->repeat, b->threads[j], ustr_lock_name(b->locks[i]));
                double *got = late[j][i][k];
                secs[j][i][k] = run_once(b, w, b->locks[i], b->threads[j], k == b->repeat - 1, got);
                if (b->print_rounds)
                    fprintf(stderr,
                            "%s  round %d: %u thread%s, %s, %.6f s, waiting for a CPU %.0f%%, last "
                            "start %.0f%%\n",
                            progress ? "\r\033[K" : "", k + 1, b->threads[j],
                            b->threads[j] > 1 ? "s" : "", ustr_lock_name(b->locks[i]),
                            secs[j][i][k], 100 * got[0], 100 * got[1]);
            }
    if (progress)
        fprintf(stderr, "\r%*s\r", 78, "");
    for (int j = 0; j < b->nthreads; j++)
        for (int i = 0; i < b->nlocks; i++) {
            double   median = tool_median(secs[j][i], b->repeat);
            uint64_t ops = w->ops * b->threads[j];
            printf("ustring-bench lock=%s threads=%u ops=%" PRIu64 " secs=%.4f mops=%.2f\n",
                   ustr_lock_name(b->locks[i]), b->threads[j], ops, median,
                   (double)ops / median / 1e6);
        }
    fflush(stdout);
    for (int j = 0; j < b->nthreads; j++)
        for (int i = 0; i < b->nlocks; i++)
            tool_late_warn(b->threads[j], b->cpus, ustr_lock_name(b->locks[i]), late[j][i],
                           b->repeat);
}

/* The default lock's throughput over the fastest other lock's at each
 * thread count, the figure issue 33 asks of the default (never the
 * slowest way, at least as fast as every other): the ratio of their
 * medians, and the range of the rounds' own ratios (each round ran both,
 * side by side). Nothing without the default and another lock. */
static void
default_verdict(const bench *b, double secs[][MAX_LIST][64]) /* threads, lock, round */
{
    const char *ours = ustr_lock_name(USTR_LOCK_DEFAULT);
    int         d = -1, others = 0; /* "default" and its name are one lock, not two */
    for (int i = 0; i < b->nlocks; i++) {
        bool same = strcmp(ustr_lock_name(b->locks[i]), ours) == 0;
        d = same && d < 0 ? i : d;
        others += !same;
    }
    if (d < 0 || others == 0)
        return;
    long hw = b->cpus;
    printf("default %s over the fastest other lock, throughput (the rounds' range):", ours);
    for (int j = 0; j < b->nthreads; j++) {
        double mine = tool_median(secs[j][d], b->repeat), best = 0, lo = 0, hi = 0;
        int    o = -1;
        for (int i = 0; i < b->nlocks; i++) {
            double m = tool_median(secs[j][i], b->repeat);
            if (strcmp(ustr_lock_name(b->locks[i]), ours) != 0 && (o < 0 || m < best))
                o = i, best = m;
        }
        for (int k = 0; k < b->repeat; k++) {
            double r = secs[j][o][k] / secs[j][d][k];
            lo = k == 0 || r < lo ? r : lo;
            hi = k == 0 || r > hi ? r : hi;
        }
        printf("%s %u thread%s%s %.2fx %s (%.2f-%.2f)", j ? "," : "", b->threads[j],
               b->threads[j] > 1 ? "s" : "", (long)b->threads[j] > hw ? "*" : "", best / mine,
               ustr_lock_name(b->locks[o]), lo, hi);
    }
    putchar('\n');
}

/* ---- --scale tables ---- */

static void
scale_table(const bench *b, const workload *w, double mops[][MAX_LIST])
{
    long hw = b->cpus;
    printf("\n%s: %" PRIu64 " ops per thread, %zu strings, median of %d; "
           "x = throughput / 1-thread throughput\n",
           w->name, w->ops, b->lines.n, b->repeat);
    printf("%-10s", "lock");
    for (int j = 0; j < b->nthreads; j++) {
        char head[32];
        snprintf(head, sizeof head, "%u thread%s%s", b->threads[j], b->threads[j] > 1 ? "s" : "",
                 (long)b->threads[j] > hw ? "*" : "");
        printf(j ? "  %-20s" : "  %-12s", head);
    }
    printf("\n%-10s", "");
    for (int j = 0; j < b->nthreads; j++)
        printf(j ? "  %8s %6s %5s" : "  %8s %3s", "secs", "Mops", j ? "x" : "");
    putchar('\n');
    for (int i = 0; i < b->nlocks; i++) {
        printf("%-10s", ustr_lock_name(b->locks[i]));
        for (int j = 0; j < b->nthreads; j++) {
            double secs = (double)(w->ops * b->threads[j]) / (mops[i][j] * 1e6);
            if (j == 0)
                printf("  %8.3f %6.1f", secs, mops[i][j]);
            else
                printf("  %8.3f %6.1f %5.2f", secs, mops[i][j], mops[i][j] / mops[i][0]);
        }
        putchar('\n');
    }
    printf("* more threads than the %ld CPUs this process may run on\n", hw);
}

static void
run_workload(const bench *b, const workload *w, bool table)
{
    static double mops[MAX_LIST][MAX_LIST], secs[MAX_LIST][MAX_LIST][64]; /* threads, lock, round */
    if (table)
        printf("# workload=%s new-fraction=%.2f same-string=%d\n", w->name, w->new_fraction,
               w->same_string);
    run_rounds(b, w, secs);
    for (int j = 0; j < b->nthreads; j++) {
        for (int i = 0; i < b->nlocks; i++)
            mops[i][j] =
                (double)(w->ops * b->threads[j]) / tool_median(secs[j][i], b->repeat) / 1e6;
    }
    if (table)
        scale_table(b, w, mops);
    default_verdict(b, secs);
}

/* ---- --floor ---- */

/* A floor over the table's own copies of the lines (intern_floor.h says
 * why its own would not do). */
static intern_floor *
floor_over(const bench *b, ustr_table *table)
{
    intern_floor *f = intern_floor_create(b->lines.n);
    if (!f)
        tool_die("out of memory");
    for (size_t i = 0; i < b->lines.n; i++)
        if (!intern_floor_add(f, ustr_table_intern(table, b->lines.s[i], b->lines.len[i])))
            tool_die("the floor is full"); /* it has room for every line */
    return f;
}

/* worker_main() on the floor: the same warm-up, draws, lines and checksum,
 * so that the checksums agree only if both did the same work. The floor is
 * only read here, so any number of threads may share it. */
static void *
floor_main(void *arg)
{
    worker         *wk = arg;
    const strings  *l = &wk->b->lines;
    const workload *w = wk->w;
    uint64_t        x = tool_seed(wk->t), sum = 0;
    for (size_t i = 0; i < l->n && i < WARM_UP; i++)
        sum += (uintptr_t)intern_floor_find(wk->floor, l->s[i], l->len[i]);
    pthread_barrier_wait(wk->start);
    tool_thread_clock_start(&wk->clock);
    for (uint64_t i = 0; i < w->ops; i++) {
        size_t k = line_of(w, l, tool_xorshift64star(&x));
        ustr   u = intern_floor_find(wk->floor, l->s[k], l->len[k]);
        if (!u)
            tool_die("the floor lost line %zu", k);
        sum += (uintptr_t)u;
    }
    tool_thread_clock_stop(&wk->clock);
    wk->checksum = sum;
    return NULL;
}

/* The least and the greatest of v[0..n), n >= 1. */
static void
range_of(const double *v, int n, double *lo, double *hi)
{
    *lo = *hi = v[0];
    for (int i = 1; i < n; i++) {
        *lo = v[i] < *lo ? v[i] : *lo;
        *hi = v[i] > *hi ? v[i] : *hi;
    }
}

/* --repeat rounds, each the floor, then the table at 1 thread on the same
 * strings, then both at each --threads count: interleaved, so that a
 * machine busy for a while slows both sides of a round rather than one
 * side of the comparison. Ratios are taken within a round; the line gives
 * their median and range. The floor's speed-up is the ceiling for the
 * table's: the same lookups from many threads with nothing shared written,
 * so what holds it under T is the machine (clocks that may drop as cores
 * wake, a shared cache, a busy neighbour), not the table. A side whose T
 * threads did not run side by side is warned of (tool_late_warn()): its
 * speed-up is not the table's or the machine's. */
static void
run_floor(const bench *b, const workload *w, ustr_lock lock)
{
    double        floor_secs[64], secs[64], ratio[64] = {0}; /* repeat >= 1: for the compiler */
    double        speedup[MAX_LIST][64], floor_speedup[MAX_LIST][64];
    static double late[MAX_LIST][2][64][2]; /* thread count, floor or table, round */
    uint64_t      sum = 0, floor_sum = 0, s;
    for (int k = 0; k < b->repeat; k++) {
        ustr_table   *table = table_preloaded(b, lock);
        intern_floor *f = floor_over(b, table);
        floor_secs[k] = run_threads(b, w, table, f, 1, &s, NULL);
        floor_sum += s;
        secs[k] = run_threads(b, w, table, NULL, 1, &s, NULL);
        sum += s;
        ratio[k] = secs[k] / floor_secs[k];
        for (int j = 0; j < b->nthreads; j++) {
            unsigned n = b->threads[j];
            floor_speedup[j][k] =
                n * floor_secs[k] / run_threads(b, w, table, f, n, &s, late[j][0][k]);
            floor_sum += s;
            speedup[j][k] = n * secs[k] / run_threads(b, w, table, NULL, n, &s, late[j][1][k]);
            sum += s;
        }
        if (k == b->repeat - 1 && b->print_stats) {
            ustr_stats st;
            ustr_table_stats(table, &st);
            ustr_stats_print(&st, "  ", stderr);
        }
        intern_floor_destroy(f);
        ustr_table_destroy(table);
    }
    int    n = b->repeat;
    double lo, hi;
    range_of(ratio, n, &lo, &hi);
    printf("ustring-bench floor lock=%s threads=1 ops=%" PRIu64 " floor_mops=%.2f mops=%.2f "
           "ratio=%.2f spread=%.2f-%.2f",
           ustr_lock_name(lock), w->ops, (double)w->ops / tool_median(floor_secs, n) / 1e6,
           (double)w->ops / tool_median(secs, n) / 1e6, tool_median(ratio, n), lo, hi);
    for (int j = 0; j < b->nthreads; j++)
        printf(" speedup%u=%.2f floor_speedup%u=%.2f", b->threads[j], tool_median(speedup[j], n),
               b->threads[j], tool_median(floor_speedup[j], n));
    printf(" checksum=%016" PRIx64 " floor_checksum=%016" PRIx64 "\n", sum, floor_sum);
    fflush(stdout);
    for (int j = 0; j < b->nthreads; j++) {
        tool_late_warn(b->threads[j], b->cpus, "the floor", late[j][0], n);
        tool_late_warn(b->threads[j], b->cpus, ustr_lock_name(lock), late[j][1], n);
    }
}

/* ---- options ---- */

static int
parse_threads(const char *arg, unsigned *out)
{
    int       n = 0;
    tool_list list;
    for (const char *tok = tool_list_first(&list, arg); tok; tok = tool_list_next(&list)) {
        char *end;
        long  v = strtol(tok, &end, 10);
        if (*end || v < 1 || v > 1024 || n == MAX_LIST)
            tool_bad_usage("bad --threads list '%s' (1..1024, at most 32 entries)", arg);
        out[n++] = (unsigned)v;
    }
    tool_list_free(&list);
    if (n == 0)
        tool_bad_usage("bad --threads list '%s'", arg);
    return n;
}

static int
parse_locks(const char *arg, ustr_lock *out)
{
    if (strcmp(arg, "all") == 0) {
        for (int l = 0; l < USTR_LOCK_COUNT; l++)
            out[l] = (ustr_lock)(USTR_LOCK_MUTEX + l);
        return USTR_LOCK_COUNT;
    }
    int       n = 0;
    tool_list list;
    for (const char *tok = tool_list_first(&list, arg); tok; tok = tool_list_next(&list)) {
        if (n == MAX_LIST || ustr_lock_parse(tok, &out[n]) != USTR_OK)
            tool_bad_usage(
                "unknown lock strategy '%s' (mutex, spin, rwspin, sharded, lockfree, default)",
                tok);
        n++;
    }
    tool_list_free(&list);
    return n;
}

int
main(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"strings", required_argument, NULL, 'S'}, {"generate", required_argument, NULL, 'g'},
        {"seed", required_argument, NULL, 's'},    {"threads", required_argument, NULL, 't'},
        {"ops", required_argument, NULL, 'o'},     {"new-fraction", required_argument, NULL, 'f'},
        {"same-string", no_argument, NULL, '1'},   {"lock", required_argument, NULL, 'l'},
        {"repeat", required_argument, NULL, 'r'},  {"scale", no_argument, NULL, 'x'},
        {"stats", no_argument, NULL, 'v'},         {"rounds", no_argument, NULL, 'R'},
        {"floor", no_argument, NULL, 'F'},         {NULL, 0, NULL, 0}};
    static const tool_cli cli = {usage_text, longopts, NULL};
    bench                 b = {.repeat = 0,
                               .cpus = ustr_cpus_usable()}; /* repeat 0: the default, 3 (5 with --floor) */
    workload              w = {.name = "custom"};
    const char           *strings_file = NULL;
    uint64_t              generate = 1000, seed = 1, ops = 0;
    bool                  scale = false;
    int                   c;
    while ((c = tool_getopt(argc, argv, &cli)) != -1) {
        switch (c) {
        case 'S':
            strings_file = optarg;
            break;
        case 'g':
            generate = tool_parse_u64(optarg, "--generate", TEXPATH_UNIQUE_MAX);
            break;
        case 's':
            seed = tool_parse_u64(optarg, "--seed", UINT64_MAX);
            break;
        case 't':
            b.nthreads = parse_threads(optarg, b.threads);
            break;
        case 'o':
            ops = tool_parse_u64(optarg, "--ops", (uint64_t)1 << 40);
            break;
        case 'f': {
            char *end;
            w.new_fraction = strtod(optarg, &end);
            if (*end || !(w.new_fraction >= 0 && w.new_fraction <= 1))
                tool_bad_usage("bad --new-fraction '%s' (0..1)", optarg);
            break;
        }
        case '1':
            w.same_string = true;
            break;
        case 'l':
            b.nlocks = parse_locks(optarg, b.locks);
            break;
        case 'r':
            b.repeat = (int)tool_parse_u64(optarg, "--repeat", 63);
            break;
        case 'x':
            scale = true;
            break;
        case 'v':
            b.print_stats = true;
            break;
        case 'R':
            b.print_rounds = true;
            break;
        case 'F':
            b.floor = true;
            break;
        }
    }
    if (optind < argc)
        tool_bad_usage("unexpected argument '%s'", argv[optind]);
    if (b.floor && (scale || w.new_fraction > 0))
        tool_bad_usage("--floor times hot lookups: it takes no --scale or --new-fraction");
    for (int j = 0; b.floor && j < b.nthreads; j++)
        if (b.threads[j] < 2)
            tool_bad_usage("--floor --threads takes counts of 2 or more (1 thread is its base)");
    if (b.repeat == 0)
        b.repeat = b.floor ? 5 : 3;
    if (strings_file)
        strings_read(&b.lines, strings_file);
    else
        strings_generate(&b.lines, generate, seed);
    if (b.nlocks == 0)
        b.nlocks = scale ? parse_locks("all", b.locks) : parse_locks("default", b.locks);
    if (b.nthreads == 0)
        b.nthreads = parse_threads(b.floor ? "2" : scale ? "1,2,8,32" : "1,2", b.threads);
    if (!ops)
        ops = 1000000;

    if (b.floor) {
        w.ops = ops;
        for (int i = 0; i < b.nlocks; i++)
            run_floor(&b, &w, b.locks[i]);
    } else if (!scale) {
        w.ops = ops;
        run_workload(&b, &w, false);
    } else {
        if (b.threads[0] != 1)
            tool_bad_usage("--scale needs 1 as the first thread count (the baseline)");
        /* New strings cost ten times a lookup and stay in memory: those
         * workloads run a fifth of the operations. */
        uint64_t few = ops >= 5 ? ops / 5 : 1;
        workload std[] = {
            {"hot lookups (preloaded strings)", 0.0, false, ops},
            {"10% new strings (UDIM-like)", 0.1, false, few},
            {"100% new strings", 1.0, false, few},
            {"same string on every thread", 0.0, true, ops},
        };
        for (size_t i = 0; i < sizeof std / sizeof std[0]; i++)
            run_workload(&b, &std[i], true);
    }
    free(b.lines.s);
    free(b.lines.len);
    free(b.lines.storage);
    return 0;
}
