// oiio-ustring-bench: the workload of ustring-bench, run on OpenImageIO's
// ustring table instead of ours, so the two can be compared on one machine
// (tools/compare/compare-oiio). Options and semantics follow ustring-bench's contract
// (docs/design.md); one result line per thread count:
//
//   oiio-ustring-bench threads=T ops=N secs=S mops=R
//
// where N counts the operations of all threads and S is the median of
// --repeat timed runs.
//
// One difference is forced by OIIO: its table is global to the process and
// cannot be emptied, while ustring-bench starts every run on a fresh table.
// A "brand-new" string of op i of thread t is line#t#n with n = i + run * M
// (M = --ops, run = 0, 1, ... over every timed run of the process), so that it is new in every run,
// not just the first; for the first run this is exactly the contract's line#t#i. Strings interned
// by earlier runs stay in OIIO's table, so with --new-fraction > 0 later runs see a larger table
// than ustring-bench's do.
#include "oiio_bench_util.h"
#include "texpaths.h"

#include <OpenImageIO/ustring.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <getopt.h>
#include <pthread.h>
#include <string>
#include <vector>

// tool.h: the prefix of the messages tool_median() might print.
extern "C" const char tool_prog[] = "oiio-ustring-bench";

namespace
{

using oiio_bench::bad_usage;
using oiio_bench::die;
using oiio_bench::MAX_LIST;
using oiio_bench::now;
using oiio_bench::parse_threads;
using oiio_bench::parse_u64;

struct Lines {
    std::vector<char>         storage;
    std::vector<const char *> s;
    std::vector<size_t>       len;
    size_t                    size() const
    {
        return s.size();
    }
};

struct Bench {
    Lines    lines;
    unsigned threads[MAX_LIST];
    int      nthreads = 0;
    uint64_t ops = 1000000; // per thread
    int      repeat = 3;
    double   new_fraction = 0;
    bool     same_string = false;
    uint64_t run = 0; // serial number of the next run, see the top comment
};

struct Worker {
    const Bench       *b;
    pthread_barrier_t *start;
    unsigned           t;
    uint64_t           first_op; // n of op 0 in its new strings
    uint64_t           checksum;
    bool               failed;
    double             start_time, end_time; // read by the thread itself
};

const char usage_text[] =
    "usage: oiio-ustring-bench [--strings FILE | --generate N] [--seed S]\n"
    "                          [--threads T[,T...]] [--ops M] [--new-fraction F]\n"
    "                          [--same-string] [--repeat K]\n"
    "  --strings FILE    intern the lines of FILE (one string per line)\n"
    "  --generate N      intern N generated texture paths instead (default 1000)\n"
    "  --seed S          seed of the generated paths (default 1)\n"
    "  --threads LIST    thread counts (default 1,2)\n"
    "  --ops M           operations per thread (default 1000000)\n"
    "  --new-fraction F  share of operations that intern a brand-new string\n"
    "  --same-string     every operation interns the first line\n"
    "  --repeat K        timed runs per thread count; the median is reported (3)\n"
    "Same workload as ustring-bench, on OpenImageIO's ustring table.\n";

void
usage(FILE *f)
{
    std::fputs(usage_text, f);
}

void
lines_index(Lines &l)
{
    const char *p = l.storage.data(), *end = p + l.storage.size();
    while (p < end) {
        const char *nl = static_cast<const char *>(std::memchr(p, '\n', size_t(end - p)));
        size_t      n = nl ? size_t(nl - p) : size_t(end - p);
        l.s.push_back(p);
        l.len.push_back(n);
        p += n + 1;
    }
}

void
lines_read(Lines &l, const char *path)
{
    FILE *f = std::fopen(path, "rb");
    if (!f)
        die(1, std::string(path) + ": cannot open: " + std::strerror(errno));
    char   chunk[1 << 16];
    size_t got;
    while ((got = std::fread(chunk, 1, sizeof chunk, f)) > 0)
        l.storage.insert(l.storage.end(), chunk, chunk + got);
    bool bad = std::ferror(f);
    std::fclose(f);
    if (bad)
        die(1, std::string(path) + ": read error");
    lines_index(l);
    if (l.size() == 0)
        die(1, std::string(path) + ": no strings in the file");
}

void
lines_generate(Lines &l, uint64_t n, uint64_t seed)
{
    l.storage.resize(n * (TEXPATH_MAX_LEN + 1));
    size_t size = 0;
    for (uint64_t i = 0; i < n; i++) {
        size += texpath_make(seed, i, l.storage.data() + size, TEXPATH_MAX_LEN + 1);
        l.storage[size++] = '\n';
    }
    l.storage.resize(size);
    lines_index(l);
}

// Writes line + '#' + t + '#' + n into buf, as ustring-bench does.
size_t
new_string(char *buf, size_t cap, const char *line, size_t len, unsigned t, uint64_t n)
{
    if (len > cap - 48)
        len = cap - 48; // keep room for the suffix; such long lines are rare
    std::memcpy(buf, line, len);
    int k = std::snprintf(buf + len, cap - len, "#%u#%" PRIu64, t, n);
    return len + size_t(k);
}

void *
worker_main(void *arg)
{
    Worker        *wk = static_cast<Worker *>(arg);
    const Bench   &b = *wk->b;
    const Lines   &l = b.lines;
    char           buf[4096];
    uint64_t       x = tool_seed(wk->t), sum = 0;
    const double   f = b.new_fraction;
    const bool     same = b.same_string;
    const size_t   nlines = l.size();
    const uint64_t ops = b.ops;
    // Exceptions are caught apart so that a thread that fails still meets
    // the others at the barrier.
    try {
        // Warm-up, untimed, as in ustring-bench.
        for (size_t i = 0; i < nlines && i < 1000; i++)
            sum += uintptr_t(OIIO::ustring(OIIO::string_view(l.s[i], l.len[i])).c_str());
    } catch (const std::exception &) {
        wk->failed = true;
    }
    pthread_barrier_wait(wk->start);
    if (wk->failed)
        return nullptr;
    wk->start_time = now();
    try {
        for (uint64_t i = 0; i < ops; i++) {
            uint64_t    r = tool_xorshift64star(&x);
            size_t      k = same ? 0 : size_t(r % nlines);
            const char *p;
            if (f > 0 && tool_unit(r) < f) {
                size_t n = new_string(buf, sizeof buf, l.s[k], l.len[k], wk->t, wk->first_op + i);
                p = OIIO::ustring(OIIO::string_view(buf, n)).c_str();
            } else {
                p = OIIO::ustring(OIIO::string_view(l.s[k], l.len[k])).c_str();
            }
            sum += uintptr_t(p);
        }
    } catch (const std::exception &) {
        wk->failed = true;
    }
    wk->end_time = now();
    wk->checksum = sum;
    return nullptr;
}

// Seconds for one run: threads start together at a barrier; the run lasts
// from the first thread's start to the last one's end, read by each thread
// itself, as in ustring-bench.
double
run_once(Bench &b, unsigned nthreads, uint64_t &checksum)
{
    std::vector<Worker>    wk(nthreads);
    std::vector<pthread_t> tid(nthreads);
    pthread_barrier_t      start;
    pthread_barrier_init(&start, nullptr, nthreads + 1);
    uint64_t first_op = b.run++ * b.ops;
    for (unsigned t = 0; t < nthreads; t++) {
        wk[t] = Worker{&b, &start, t, first_op, 0, false, 0, 0};
        if (pthread_create(&tid[t], nullptr, worker_main, &wk[t]) != 0)
            die(1, "cannot start a thread");
    }
    pthread_barrier_wait(&start);
    bool   failed = false;
    double first = 0, last = 0;
    for (unsigned t = 0; t < nthreads; t++) {
        pthread_join(tid[t], nullptr);
        failed |= wk[t].failed;
        checksum ^= wk[t].checksum;
        first = t == 0 || wk[t].start_time < first ? wk[t].start_time : first;
        last = std::max(last, wk[t].end_time);
    }
    pthread_barrier_destroy(&start);
    if (failed)
        die(1, "an intern call failed (out of memory?)");
    return last - first;
}

void
run_config(Bench &b, unsigned nthreads, uint64_t &checksum)
{
    std::vector<double> secs;
    for (int k = 0; k < b.repeat; k++)
        secs.push_back(run_once(b, nthreads, checksum));
    double   median = oiio_bench::median(secs); // as ustring-bench picks it
    uint64_t ops = b.ops * nthreads;
    std::printf("oiio-ustring-bench threads=%u ops=%" PRIu64 " secs=%.4f mops=%.2f\n", nthreads,
                ops, median, double(ops) / median / 1e6);
    std::fflush(stdout);
}

int
run(int argc, char **argv)
{
    static const struct option longopts[] = {{"strings", required_argument, nullptr, 'S'},
                                             {"generate", required_argument, nullptr, 'g'},
                                             {"seed", required_argument, nullptr, 's'},
                                             {"threads", required_argument, nullptr, 't'},
                                             {"ops", required_argument, nullptr, 'o'},
                                             {"new-fraction", required_argument, nullptr, 'f'},
                                             {"same-string", no_argument, nullptr, '1'},
                                             {"repeat", required_argument, nullptr, 'r'},
                                             {nullptr, 0, nullptr, 0}};
    static const tool_cli      cli = {usage_text, longopts, nullptr};
    Bench                      b;
    const char                *strings_file = nullptr;
    uint64_t                   generate = 1000, seed = 1;
    int                        c;
    // The front end of every tool (tool.h): --help, --version, and an
    // unknown option named in one line, exit 2.
    while ((c = tool_getopt(argc, argv, &cli)) != -1) {
        switch (c) {
        case 'S':
            strings_file = optarg;
            break;
        case 'g':
            generate = parse_u64(optarg, "--generate", TEXPATH_UNIQUE_MAX);
            break;
        case 's':
            seed = parse_u64(optarg, "--seed", UINT64_MAX);
            break;
        case 't':
            b.nthreads = parse_threads(optarg, b.threads);
            break;
        case 'o':
            b.ops = parse_u64(optarg, "--ops", uint64_t(1) << 40);
            break;
        case 'f': {
            char *end;
            b.new_fraction = std::strtod(optarg, &end);
            if (*end || !(b.new_fraction >= 0 && b.new_fraction <= 1))
                bad_usage(std::string("bad --new-fraction '") + optarg + "' (0..1)");
            break;
        }
        case '1':
            b.same_string = true;
            break;
        case 'r':
            b.repeat = int(parse_u64(optarg, "--repeat", 63));
            break;
        default: // tool_getopt() returns only the options above
            return 2;
        }
    }
    if (optind < argc) {
        std::fprintf(stderr, "oiio-ustring-bench: unexpected argument '%s'\n", argv[optind]);
        usage(stderr);
        return 2;
    }
    if (strings_file)
        lines_read(b.lines, strings_file);
    else
        lines_generate(b.lines, generate, seed);
    if (b.nthreads == 0)
        b.nthreads = parse_threads("1,2", b.threads);

    // Every line is interned before timing.
    uint64_t checksum = 0;
    for (size_t i = 0; i < b.lines.size(); i++)
        checksum +=
            uintptr_t(OIIO::ustring(OIIO::string_view(b.lines.s[i], b.lines.len[i])).c_str());

    for (int j = 0; j < b.nthreads; j++)
        run_config(b, b.threads[j], checksum);
    // The pointers are summed so that no interning can be optimised away;
    // looking at the sum keeps the compiler from dropping the sums too.
    if (checksum == 0)
        std::fputs("oiio-ustring-bench: note: pointer checksum is 0\n", stderr);
    return 0;
}

} // namespace

const oiio_bench::Tool oiio_bench::tool = {"oiio-ustring-bench", nullptr};

// main: tool_getopt(); --help -> usage, exit 0; --version; bad flag -> one line,
// exit 2; bad value -> one line, exit 2; runtime failure -> one line, exit 1.
// OIIO and the standard library report failure by exception: none escapes.
int
main(int argc, char **argv)
{
    return oiio_bench::main_guarded(run, argc, argv);
}
