/* What the programs in tools/ share (tool.h). */
#define _GNU_SOURCE /* getrusage(RUSAGE_THREAD); and clock_gettime, strtok_r, strdup */

#include "tool.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

double
tool_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double
thread_cpu_secs(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static long
thread_sleeps(void)
{
    struct rusage ru;
    return getrusage(RUSAGE_THREAD, &ru) == 0 ? ru.ru_nvcsw : 0;
}

void
tool_thread_clock_start(tool_thread_clock *c)
{
    c->slept = thread_sleeps();
    c->cpu = thread_cpu_secs();
    c->start = tool_now();
}

void
tool_thread_clock_stop(tool_thread_clock *c)
{
    c->end = tool_now();
    c->cpu = thread_cpu_secs() - c->cpu;
    c->slept = thread_sleeps() - c->slept;
}

void
tool_late_add(tool_late *l, const tool_thread_clock *c)
{
    double wall = c->end - c->start;
    l->first = !l->n || c->start < l->first ? c->start : l->first;
    l->final = !l->n || c->end > l->final ? c->end : l->final;
    l->last_start = !l->n || c->start > l->last_start ? c->start : l->last_start;
    l->waited += !c->slept && c->cpu < wall ? wall - c->cpu : 0;
    l->wall += wall, l->n++;
}

double
tool_late_secs(const tool_late *l)
{
    return l->final - l->first;
}

void
tool_late_shares(const tool_late *l, double share[2])
{
    share[0] = l->wall > 0 ? l->waited / l->wall : 0;
    share[1] = l->final > l->first ? (l->last_start - l->first) / (l->final - l->first) : 0;
}

void
tool_late_warn(unsigned threads, unsigned cpus, const char *what, const double (*late)[2],
               int rounds)
{
    double off[64], start[64];
    rounds = rounds < 64 ? rounds : 64;
    for (int k = 0; k < rounds; k++)
        off[k] = late[k][0], start[k] = late[k][1];
    double o = tool_median(off, rounds), s = tool_median(start, rounds);
    if (threads > cpus || (o <= TOOL_LATE_WARN && s <= TOOL_LATE_WARN))
        return;
    fprintf(stderr,
            "%s: warning: %u thread%s%s%s: waiting for a CPU %.0f%% of the run, the last started "
            "%.0f%% into it (medians over rounds): not side by side (another job, or runs too "
            "short)\n",
            tool_prog, threads, threads > 1 ? "s" : "", what ? ", " : "", what ? what : "", 100 * o,
            100 * s);
}

static int
cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double
tool_median(const double *values, int n)
{
    if (n < 1)
        return 0;
    double  small[64];
    double *v = n <= 64 ? small : malloc((size_t)n * sizeof *v);
    if (!v)
        tool_die("out of memory");
    memcpy(v, values, (size_t)n * sizeof *v);
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    double m = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
    if (v != small)
        free(v);
    return m;
}

/* "PROG: message" on stderr, one line; status >= 0: then exit with it. */
static void vsay(int status, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
static void
vsay(int status, const char *fmt, va_list ap)
{
    fprintf(stderr, "%s: ", tool_prog);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    if (status >= 0)
        exit(status);
}

void
tool_die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsay(1, fmt, ap);
    abort(); /* not reached: vsay() exits */
}

void
tool_say(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsay(-1, fmt, ap);
    va_end(ap);
}

void
tool_bad_usage(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsay(2, fmt, ap);
    abort(); /* not reached: vsay() exits */
}

uint64_t
tool_parse_u64(const char *arg, const char *opt, uint64_t max)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(arg, &end, 10);
    if (errno || *end || arg[0] == '-' || v < 1 || v > max)
        tool_bad_usage("bad %s '%s' (1..%" PRIu64 ")", opt, arg, max);
    return v;
}

const char *
tool_list_first(tool_list *l, const char *arg)
{
    l->copy = strdup(arg);
    l->save = NULL;
    if (!l->copy)
        tool_die("out of memory");
    return strtok_r(l->copy, ",", &l->save);
}

const char *
tool_list_next(tool_list *l)
{
    return strtok_r(NULL, ",", &l->save);
}

void
tool_list_free(tool_list *l)
{
    free(l->copy);
    l->copy = NULL;
}

/* ---- the command line ---- */

enum { OPT_VERSION = 0x7f01 }; /* beyond any character a program uses */

void
tool_usage_error(const tool_cli *cli)
{
    fputs(cli->usage, stderr);
    exit(2);
}

int
tool_getopt(int argc, char **argv, const tool_cli *cli)
{
    static struct option   all[TOOL_MAX_OPTIONS + 3];
    static char            shorts[64];
    static const tool_cli *built;
    if (built != cli) { /* the program's options, then ours */
        int n = 0;
        for (; cli->options && cli->options[n].name && n < TOOL_MAX_OPTIONS; n++)
            all[n] = cli->options[n];
        all[n++] = (struct option){"help", no_argument, NULL, 'h'};
        all[n++] = (struct option){"version", no_argument, NULL, OPT_VERSION};
        all[n] = (struct option){0};
        /* ':' first: a missing value is ':', not '?' */
        snprintf(shorts, sizeof shorts, ":h%s", cli->short_options ? cli->short_options : "");
        built = cli;
        opterr = 0; /* our own messages */
    }
    int c = getopt_long(argc, argv, shorts, all, NULL);
    switch (c) {
    case 'h':
        fputs(cli->usage, stdout);
        exit(0);
    case OPT_VERSION:
        printf("%s %s\n", tool_prog, TOOL_VERSION);
        exit(0);
    case ':':
        fprintf(stderr, "%s: '%s' needs a value\n", tool_prog, argv[optind - 1]);
        break;
    case '?': {
        /* A long option ("--raw=1": a value it does not take; "--nope")
         * is named as written; glibc's optopt then holds the option's
         * value, or 0, not a letter that was typed. */
        const char *word = argv[optind - 1];
        int         len = (int)strcspn(word, "=");
        bool        known = false;
        for (int i = 0; strncmp(word, "--", 2) == 0 && all[i].name && !known; i++)
            known = (int)strlen(all[i].name) == len - 2 &&
                    strncmp(all[i].name, word + 2, (size_t)len - 2) == 0;
        if (known)
            fprintf(stderr, "%s: '%.*s' takes no value\n", tool_prog, len, word);
        else if (strncmp(word, "--", 2) == 0)
            fprintf(stderr, "%s: unknown option '%.*s'\n", tool_prog, len, word);
        else
            fprintf(stderr, "%s: unknown option '-%c'\n", tool_prog, optopt);
        break;
    }
    default:
        return c;
    }
    fprintf(stderr, "Try '%s --help'.\n", tool_prog);
    exit(2);
}
