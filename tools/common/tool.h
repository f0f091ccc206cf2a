/* What every program in tools/ shares (benchmarks, the study, generators,
 * image utilities): one command-line front end (getopt_long with --help
 * and --version), one way to fail with an exit status, option values and
 * lists, a monotonic clock, the median, and the workload contract's random
 * generator (docs/design.md).
 *
 * The library is `tool` (tools/common/CMakeLists.txt). The generator below
 * is inline and needs no library; the C++ benches (compare/oiio_bench_util.h)
 * use it too, so that both sides of a comparison draw the same numbers. */
#ifndef RT_TOOLS_TOOL_H
#define RT_TOOLS_TOOL_H

#include <getopt.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The program's name, the prefix of every message below. Each program that
 * links `tool` defines it once, for instance
 *
 *     const char tool_prog[] = "ustring-bench";
 *
 * (a program that does not fails to link). */
extern const char tool_prog[];

/* ---- time ---- */

/* Seconds on CLOCK_MONOTONIC; only differences mean anything. Safe on any
 * thread. */
double tool_now(void);

/* What a timed thread reads of itself over its timed stretch, between
 * tool_thread_clock_start() and _stop(), on that thread: */
typedef struct tool_thread_clock {
    double start, end; /* tool_now() */
    double cpu;        /* CPU seconds it ran between them (CLOCK_THREAD_CPUTIME_ID) */
    long   slept;      /* times it went to sleep by its own choice between them (a lock
                        * that sleeps, I/O: voluntary context switches) */
} tool_thread_clock;
void tool_thread_clock_start(tool_thread_clock *c);
void tool_thread_clock_stop(tool_thread_clock *c);

/* How far a timed run's threads fell short of running side by side, from
 * what each read itself: tool_late_add() once per thread with its clock;
 * zero-initialised. */
typedef struct tool_late {
    double   first, final, last_start; /* the run: first start to last end */
    double   waited, wall;             /* summed over threads */
    unsigned n;
} tool_late;
void tool_late_add(tool_late *l, const tool_thread_clock *c);
/* The run's seconds, first start to last end. */
double tool_late_secs(const tool_late *l);
/* share[0]: of the threads' time start to end, the share they were off a
 * CPU without having gone to sleep (waiting for a CPU: a thread that slept
 * on a lock is off a CPU by its own choice, and its time off is not
 * counted, since its wait for a CPU cannot be told from its sleep);
 * share[1]: of the run, the share before the last thread started. */
void tool_late_shares(const tool_late *l, double share[2]);
/* Above this median share of either, threads that had a CPU each did not
 * run side by side: another job took a CPU, or the run was too short for
 * the scheduler to start them together (2 threads of a 40 us run were
 * slower than 1 on a 2-vCPU VM, their starts 40 us apart). */
#define TOOL_LATE_WARN 0.1
/* Warns on stderr ("PROG: warning: T threads, WHAT: waiting for a CPU ...") where
 * `threads` is no more than `cpus` and the median over `rounds` of either
 * share (late[round], tool_late_shares()' two) is above TOOL_LATE_WARN:
 * that figure is not the threads' scaling. what: a label, or NULL. */
void tool_late_warn(unsigned threads, unsigned cpus, const char *what, const double (*late)[2],
                    int rounds);

/* The median of values[0..n): the middle one, or the mean of the middle
 * two when n is even; 0 when n < 1. values is not changed. The one median
 * of every tool (the study's tables, the benches' result lines). */
double tool_median(const double *values, int n);

/* ---- the contract's generator ---- */

/* Thread t's first state: (t + 1) * 0x9E3779B97F4A7C15 (never 0). */
static inline uint64_t
tool_seed(unsigned t)
{
    return (t + 1) * 0x9E3779B97F4A7C15ULL;
}

/* The next draw of xorshift64*. *x is one thread's own state, from
 * tool_seed(); it never becomes 0. */
static inline uint64_t
tool_xorshift64star(uint64_t *x)
{
    *x ^= *x >> 12;
    *x ^= *x << 25;
    *x ^= *x >> 27;
    return *x * 0x2545F4914F6CDD1DULL;
}

/* A draw as a uniform number in [0, 1): its top 53 bits. */
static inline double
tool_unit(uint64_t draw)
{
    return (double)(draw >> 11) * 0x1p-53;
}

/* ---- failing ---- */

/* A runtime failure: prints "PROG: " and the message on stderr, one line,
 * and exits with status 1. Does not return. */
void tool_die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* A failure the program reports and goes on from (or returns from):
 * "PROG: " and the message on stderr, one line. */
void tool_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A bad command line: as tool_die(), but exit status 2. */
void tool_bad_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* ---- options ---- */

/* The value of option `opt` ("--ops"): a whole decimal number in 1..max.
 * Anything else (a minus sign, junk after the digits, a number too large
 * for 64 bits) is tool_bad_usage("bad OPT 'ARG' (1..MAX)"). */
uint64_t tool_parse_u64(const char *arg, const char *opt, uint64_t max);

/* The items of a comma-separated list, in order; empty items are skipped:
 *
 *     tool_list l;
 *     for (const char *it = tool_list_first(&l, arg); it; it = tool_list_next(&l))
 *         use(it);
 *     tool_list_free(&l);
 *
 * An item stays valid until tool_list_free(); the list owns a copy of arg,
 * so arg itself is not changed. Out of memory: tool_die(). */
typedef struct tool_list {
    char *copy; /* of arg, cut at the commas */
    char *save; /* strtok_r()'s place in it */
} tool_list;

const char *tool_list_first(tool_list *l, const char *arg); /* NULL: no items */
const char *tool_list_next(tool_list *l);                   /* NULL: no more */
void        tool_list_free(tool_list *l);

/* ---- the command line ---- */

#define TOOL_MAX_OPTIONS 32 /* a program's own long options, at most */

/* A program's command line: its usage text (printed by --help on stdout,
 * "usage: PROG ..."), its long options (getopt_long's, ending with an
 * all-zero entry; NULL: none) and its short ones (getopt's; NULL: none). */
typedef struct tool_cli {
    const char          *usage;
    const struct option *options;
    const char          *short_options;
} tool_cli;

/* getopt_long() over cli's options plus -h/--help and --version, which
 * every program so takes: returns the next option's value, -1 when the
 * options end (optind is then the first operand; "--opt=value" and
 * "--opt value" both work, as getopt_long() makes them). --help prints the
 * usage and exits 0; --version prints "PROG VERSION" and exits 0; an
 * unknown option or one missing its value is tool_bad_usage(): "PROG:
 * unknown option '--x'", "Try 'PROG --help'.", exit status 2. Call it with
 * one cli per program; not thread-safe (getopt is not). */
int tool_getopt(int argc, char **argv, const tool_cli *cli);

/* Prints "usage" on stderr and exits 2: a command line of the wrong shape
 * (no operand, too many). */
void tool_usage_error(const tool_cli *cli) __attribute__((noreturn));

#ifdef __cplusplus
}
#endif

#endif
