// oiio-texture-bench: the workload of texture-bench, run on OpenImageIO's
// TextureSystem instead of ours, so the two can be compared on the same files
// (tools/compare/compare-oiio-texture). Options and semantics follow texture-bench's
// contract (docs/design.md); one result line per thread count:
//
//   oiio-texture-bench threads=T lookups=N secs=S mlookups=R
//
// where N counts the lookups of all threads and S is the median of --repeat
// timed runs. On stderr, after each result line, a checksum of the results
// and the process's peak RSS, in texture-bench's format, to compare with it:
//
//   checksum SUM XOR, peak RSS M MiB
//
// Every timed run starts cold, as texture-bench's do: it gets a fresh,
// unshared TextureSystem (with its own ImageCache), destroyed after the run,
// and no thread warms it up. Before any timing, every file is opened once on
// a scratch TextureSystem, so that a bad file stops the bench before it
// starts and OIIO's one-time set-up (its plugin registry, for one) is not
// in the first run.
//
// The peak RSS includes some 120 MiB that the process holds before it looks
// at any texture (libOpenImageIO loads some 260 shared libraries); the last
// stderr line gives that figure, to subtract.
//
// How OIIO is configured, to do the work our side does:
//   TextureOpt  swrap = twrap = WrapPeriodic, fill 0, 3 channels (RGB);
//               closest:   InterpClosest  + MipModeOneLevel
//               bilinear:  InterpBilinear + MipModeOneLevel
//               trilinear: InterpBilinear + MipModeTrilinear
//   attributes  max_memory_MB = --max-memory-mb, max_open_files 256,
//               autotile 0, automip 1 (MIP levels are built for untiled
//               files, as ours does); gray_to_rgb, accept_untiled and the
//               rest keep OIIO's defaults.
// Lookups go through texture(ustring filename, ...), with the names interned
// once before timing, as texture-bench looks up pre-interned names.
#include "oiio_bench_util.h"

#include <OpenImageIO/imageio.h>
#include <OpenImageIO/texture.h>
#include <OpenImageIO/ustring.h>

#include <algorithm>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <getopt.h>
#include <pthread.h>
#include <string>
#include <sys/resource.h>
#include <vector>

// tool.h: the prefix of the messages tool_median() might print.
extern "C" const char tool_prog[] = "oiio-texture-bench";

namespace
{

using oiio_bench::bad_usage;
using oiio_bench::die;
using oiio_bench::MAX_LIST;
using oiio_bench::now;
using oiio_bench::parse_threads;
using oiio_bench::parse_u64;

constexpr int      NCHANNELS = 3; // RGB textures; no fill work for alpha
constexpr unsigned REGION = 256;  // coherent pattern: a region is 256 x 256 lookups
constexpr unsigned REGIONS = 4;   // ... on a 4 x 4 grid of regions per texture

enum class Filter { closest, bilinear, trilinear };

struct Bench {
    std::vector<std::string>   files;
    std::vector<OIIO::ustring> names; // interned once, before timing
    unsigned                   threads[MAX_LIST];
    int                        nthreads = 0;
    uint64_t                   lookups = 1000000; // per thread
    bool                       coherent = false;
    Filter                     filter = Filter::bilinear;
    uint64_t                   max_memory_mb = 1024;
    int                        repeat = 3;
    bool                       stats = false;
};

struct Worker {
    const Bench         *b;
    OIIO::TextureSystem *ts;
    pthread_barrier_t   *start;
    unsigned             t, nthreads;
    double               sum;         // of every result float, in lookup order
    uint64_t             xor_bits;    // see Checksum
    uint64_t             failures;    // texture() calls that returned false
    size_t               failed_file; // the first one's file index
    bool                 exception;
    double               start_time, end_time; // read by the thread itself
};

// A run's checksum, defined as texture-bench defines its own: sum is the
// sum of every result float as a double (each thread's in lookup order, then
// the threads' sums in thread order); xor_bits the XOR of every result's bit
// pattern, channel c's shifted left by 11 c bits.
struct Checksum {
    double   sum = 0;
    uint64_t xor_bits = 0;
};

const char usage_text[] =
    "usage: oiio-texture-bench [--threads T[,T...]] [--lookups M]\n"
    "                          [--pattern coherent|random]\n"
    "                          [--filter closest|bilinear|trilinear]\n"
    "                          [--max-memory-mb N] [--repeat K] [--stats] FILE...\n"
    "  --threads LIST     thread counts, one result line each (default 1)\n"
    "  --lookups M        lookups per thread (default 1000000)\n"
    "  --pattern P        random (default): uniform (s, t), random file;\n"
    "                     coherent: 256x256 rasters of one region of one file\n"
    "  --filter F         closest, bilinear (default) or trilinear\n"
    "  --max-memory-mb N  OIIO's tile cache cap, max_memory_MB (default 1024)\n"
    "  --repeat K         timed runs per thread count, each on a cold cache;\n"
    "                     the median is reported (default 3)\n"
    "  --stats            print OIIO's statistics of the last run of each count\n"
    "Same workload as texture-bench, on OpenImageIO's TextureSystem.\n";

void
usage(FILE *f)
{
    std::fputs(usage_text, f);
}

// OIIO's pending error message on one line ("; " between its lines).
std::string
oiio_error(const OIIO::TextureSystem *ts)
{
    std::string e = ts->geterror();
    while (!e.empty() && (e.back() == '\n' || e.back() == ' '))
        e.pop_back();
    for (size_t p; (p = e.find('\n')) != std::string::npos;)
        e.replace(p, 1, "; ");
    return e.empty() ? std::string("cannot be used (no message from OpenImageIO)") : e;
}

// A uniform number in [0, 1) from the top 53 bits of a draw, rounded to
// float (so it may round up to 1.0f, which periodic wrap maps to 0).
inline float
unit_float(uint64_t r)
{
    return float(tool_unit(r));
}

OIIO::TextureSystem *
ts_create(const Bench &b)
{
    OIIO::TextureSystem *ts = OIIO::TextureSystem::create(false);
    if (!ts)
        die(1, "cannot create an OpenImageIO TextureSystem");
    bool ok = ts->attribute("max_memory_MB", float(b.max_memory_mb));
    ok &= ts->attribute("max_open_files", 256);
    ok &= ts->attribute("autotile", 0);
    ok &= ts->attribute("automip", 1);
    if (!ok)
        die(1, "OpenImageIO refused an attribute: " + oiio_error(ts));
    return ts;
}

// Frees ts and the ImageCache it owns. In OIIO 2.4.7, destroy(ts) without
// teardown_imagecache leaks the private cache, every tile included (some
// 100 MiB a run here, contrary to texture.h), so it is asked for. (Under
// AddressSanitizer the call reports a new-delete-type-mismatch inside OIIO;
// run with ASAN_OPTIONS=new_delete_type_mismatch=0.)
void
ts_destroy(OIIO::TextureSystem *ts)
{
    OIIO::TextureSystem::destroy(ts, true);
}

void *
worker_main(void *arg)
{
    Worker              *wk = static_cast<Worker *>(arg);
    const Bench         &b = *wk->b;
    OIIO::TextureSystem *ts = wk->ts;
    const size_t         nfiles = b.names.size();
    const uint64_t       m = b.lookups;
    const float          d = b.filter == Filter::trilinear ? 1.0f / 256 : 1.0f / 1024;
    OIIO::TextureOpt     opt;
    opt.swrap = opt.twrap = OIIO::TextureOpt::WrapPeriodic;
    opt.fill = 0;
    opt.interpmode = b.filter == Filter::closest ? OIIO::TextureOpt::InterpClosest
                                                 : OIIO::TextureOpt::InterpBilinear;
    opt.mipmode = b.filter == Filter::trilinear ? OIIO::TextureOpt::MipModeTrilinear
                                                : OIIO::TextureOpt::MipModeOneLevel;
    double   sum = 0;
    uint64_t xor_bits = 0;
    uint64_t failures = 0;
    size_t   failed_file = 0;

    // One lookup; its result goes into the checksum.
    auto lookup = [&](size_t file, float s, float t) {
        float res[NCHANNELS];
        if (!ts->texture(b.names[file], opt, s, t, d, 0, 0, d, NCHANNELS, res)) {
            if (failures++ == 0)
                failed_file = file;
        }
        for (int c = 0; c < NCHANNELS; c++) {
            uint32_t bits;
            std::memcpy(&bits, &res[c], sizeof bits);
            sum += double(res[c]);
            xor_bits ^= uint64_t(bits) << (c * 11);
        }
    };

    // OIIO's per-thread state (its microcache), made before the barrier as
    // texture-bench makes its tex_thread; the ustring overload of texture()
    // finds it again through a thread-specific pointer at every call.
    try {
        ts->get_perthread_info(nullptr);
    } catch (const std::exception &) {
        wk->exception = true;
    }
    pthread_barrier_wait(wk->start);
    wk->start_time = now();
    // OIIO reports failure by exception (out of memory): it is caught here
    // so that the thread still ends cleanly and the run can report it.
    try {
        if (!b.coherent) {
            uint64_t x = tool_seed(wk->t);
            for (uint64_t i = 0; i < m; i++) {
                float  s = unit_float(tool_xorshift64star(&x));
                float  t = unit_float(tool_xorshift64star(&x));
                size_t file = size_t(tool_xorshift64star(&x) % nfiles);
                lookup(file, s, t);
            }
        } else {
            // Work unit u = j * T + t: file u % nfiles, region (u / nfiles) % 16,
            // walked row by row until the thread has done its M lookups.
            uint64_t done = 0;
            for (uint64_t j = 0; done < m; j++) {
                uint64_t u = j * wk->nthreads + wk->t;
                size_t   file = size_t(u % nfiles);
                unsigned r = unsigned((u / nfiles) % (REGIONS * REGIONS));
                unsigned rx = r % REGIONS, ry = r / REGIONS;
                for (unsigned y = 0; y < REGION && done < m; y++) {
                    // Exact in float: the numerators are multiples of 0.5
                    // below 1024, the divisor a power of 2.
                    float t = (float(ry * REGION + y) + 0.5f) / float(REGION * REGIONS);
                    for (unsigned x = 0; x < REGION && done < m; x++, done++) {
                        float s = (float(rx * REGION + x) + 0.5f) / float(REGION * REGIONS);
                        lookup(file, s, t);
                    }
                }
            }
        }
    } catch (const std::exception &) {
        wk->exception = true;
    }
    wk->end_time = now();
    wk->sum = sum;
    wk->xor_bits = xor_bits;
    wk->failures = failures;
    wk->failed_file = failed_file;
    return nullptr;
}

// Seconds for one run on a fresh TextureSystem: threads start together at a
// barrier; the run lasts from the first thread's start to the last one's
// end, read by each thread itself, as in texture-bench.
double
run_once(const Bench &b, unsigned nthreads, Checksum &sum, bool print_stats)
{
    OIIO::TextureSystem   *ts = ts_create(b);
    std::vector<Worker>    wk(nthreads);
    std::vector<pthread_t> tid(nthreads);
    pthread_barrier_t      start;
    pthread_barrier_init(&start, nullptr, nthreads + 1);
    for (unsigned t = 0; t < nthreads; t++) {
        wk[t] = Worker{&b, ts, &start, t, nthreads, 0, 0, 0, 0, false, 0, 0};
        if (pthread_create(&tid[t], nullptr, worker_main, &wk[t]) != 0)
            die(1, "cannot start a thread");
    }
    pthread_barrier_wait(&start);
    double first = 0, last = 0;
    for (unsigned t = 0; t < nthreads; t++) {
        pthread_join(tid[t], nullptr);
        if (wk[t].exception)
            die(1, "a lookup failed with an exception (out of memory?)");
        if (wk[t].failures)
            die(1, b.files[wk[t].failed_file] + ": " + oiio_error(ts));
        sum.sum += wk[t].sum;
        sum.xor_bits ^= wk[t].xor_bits;
        first = t == 0 || wk[t].start_time < first ? wk[t].start_time : first;
        last = std::max(last, wk[t].end_time);
    }
    pthread_barrier_destroy(&start);
    if (print_stats)
        std::fprintf(stderr, "%s", ts->getstats(2).c_str());
    ts_destroy(ts);
    return last - first;
}

double
peak_rss_mib()
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0)
        return 0;
    return double(ru.ru_maxrss) / 1024; // Linux: KiB
}

void
run_config(const Bench &b, unsigned nthreads)
{
    std::vector<double> secs;
    Checksum            first;
    for (int k = 0; k < b.repeat; k++) {
        Checksum c;
        secs.push_back(run_once(b, nthreads, c, b.stats && k == b.repeat - 1));
        if (k == 0)
            first = c;
        else if (c.sum != first.sum || c.xor_bits != first.xor_bits)
            std::fprintf(stderr,
                         "oiio-texture-bench: warning: threads=%u: run %d gave another "
                         "checksum (%.6f %016" PRIx64 ")\n",
                         nthreads, k + 1, c.sum, c.xor_bits);
    }
    double   median = oiio_bench::median(secs); // as texture-bench picks it
    uint64_t n = b.lookups * nthreads;
    std::printf("oiio-texture-bench threads=%u lookups=%" PRIu64 " secs=%.4f mlookups=%.3f\n",
                nthreads, n, median, double(n) / median / 1e6);
    std::fflush(stdout);
    // The line texture-bench prints after each result line, word for word.
    std::fprintf(stderr, "  checksum %.6f %016" PRIx64 ", peak RSS %.1f MiB\n", first.sum,
                 first.xor_bits, peak_rss_mib());
}

// Opens every file once, on a scratch TextureSystem, so that a bad one
// stops the bench before any timing: "oiio-texture-bench: FILE: reason".
void
files_check(const Bench &b)
{
    OIIO::TextureSystem *ts = ts_create(b);
    for (size_t i = 0; i < b.names.size(); i++) {
        OIIO::ImageSpec spec;
        if (!ts->get_imagespec(b.names[i], 0, spec))
            die(1, b.files[i] + ": " + oiio_error(ts));
        if (spec.nchannels < NCHANNELS)
            std::fprintf(stderr,
                         "oiio-texture-bench: note: %s has %d channel(s); OIIO fills the "
                         "rest with 0 (gray_to_rgb is off)\n",
                         b.files[i].c_str(), spec.nchannels);
    }
    ts_destroy(ts);
}

int
run(int argc, char **argv)
{
    static const struct option longopts[] = {{"threads", required_argument, nullptr, 't'},
                                             {"lookups", required_argument, nullptr, 'l'},
                                             {"pattern", required_argument, nullptr, 'p'},
                                             {"filter", required_argument, nullptr, 'f'},
                                             {"max-memory-mb", required_argument, nullptr, 'm'},
                                             {"repeat", required_argument, nullptr, 'r'},
                                             {"stats", no_argument, nullptr, 's'},
                                             {nullptr, 0, nullptr, 0}};
    static const tool_cli      cli = {usage_text, longopts, nullptr};
    Bench                      b;
    int                        c;
    // The front end of every tool (tool.h): --help, --version, and an
    // unknown option named in one line, exit 2.
    while ((c = tool_getopt(argc, argv, &cli)) != -1) {
        switch (c) {
        case 't':
            b.nthreads = parse_threads(optarg, b.threads);
            break;
        case 'l':
            b.lookups = parse_u64(optarg, "--lookups", uint64_t(1) << 40);
            break;
        case 'p':
            if (std::strcmp(optarg, "random") == 0)
                b.coherent = false;
            else if (std::strcmp(optarg, "coherent") == 0)
                b.coherent = true;
            else
                bad_usage(std::string("bad --pattern '") + optarg + "' (coherent or random)");
            break;
        case 'f':
            if (std::strcmp(optarg, "closest") == 0)
                b.filter = Filter::closest;
            else if (std::strcmp(optarg, "bilinear") == 0)
                b.filter = Filter::bilinear;
            else if (std::strcmp(optarg, "trilinear") == 0)
                b.filter = Filter::trilinear;
            else
                bad_usage(std::string("bad --filter '") + optarg +
                          "' (closest, bilinear or trilinear)");
            break;
        case 'm':
            b.max_memory_mb = parse_u64(optarg, "--max-memory-mb", uint64_t(1) << 20);
            break;
        case 'r':
            b.repeat = int(parse_u64(optarg, "--repeat", 63));
            break;
        case 's':
            b.stats = true;
            break;
        default: // tool_getopt() returns only the options above
            return 2;
        }
    }
    if (optind == argc)
        bad_usage("no texture files");
    for (int i = optind; i < argc; i++) {
        b.files.emplace_back(argv[i]);
        b.names.emplace_back(argv[i]);
    }
    if (b.nthreads == 0)
        b.nthreads = parse_threads("1", b.threads);

    double rss_start = peak_rss_mib();
    files_check(b);
    for (int j = 0; j < b.nthreads; j++)
        run_config(b, b.threads[j]);
    std::fprintf(stderr,
                 "oiio-texture-bench: peak RSS before any texture work: %.1f MiB "
                 "(OpenImageIO's libraries)\n",
                 rss_start);
    return 0;
}

} // namespace

const oiio_bench::Tool oiio_bench::tool = {"oiio-texture-bench", usage};

// main: tool_getopt(); --help -> usage, exit 0; --version; bad flag or value ->
// one line, exit 2; runtime failure -> one line, exit 1. OIIO and the
// standard library report failure by exception: none escapes.
int
main(int argc, char **argv)
{
    return oiio_bench::main_guarded(run, argc, argv);
}
