// What oiio-ustring-bench and oiio-texture-bench share: the clock, the
// median of timed runs, their option values, and failing with an exit
// status. Header-only C++17, included by those two alone (they are built
// only where OpenImageIO is installed); the contract's generator comes from
// tool.h, inline, so that they draw the numbers our benches draw.
//
// Messages start with the bench's name: each bench defines, once,
//
//     const oiio_bench::Tool oiio_bench::tool = {"oiio-texture-bench", usage};
#ifndef RT_TOOLS_OIIO_BENCH_UTIL_H
#define RT_TOOLS_OIIO_BENCH_UTIL_H

#include "tool.h" // tool_getopt(), tool_seed(), tool_xorshift64star(), tool_unit()

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <new>
#include <string>
#include <vector>

namespace oiio_bench
{

constexpr int MAX_LIST = 32; // entries of --threads at most

struct Tool {
    const char *name;       // the prefix of every message: "oiio-ustring-bench"
    void (*usage)(FILE *f); // printed on stderr after a bad value; nullptr: none
};
extern const Tool tool; // defined by the bench

// Seconds on a steady clock; only differences mean anything. Safe on any
// thread.
inline double
now()
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

// The median of the timings: tool_median(), the one every tool uses
// (tools/common/tool.h; the mean of the middle two when the count is even).
inline double
median(const std::vector<double> &secs)
{
    return tool_median(secs.data(), static_cast<int>(secs.size()));
}

// "NAME: msg" on stderr, one line, and exit(status): 1 for a runtime
// failure, 2 for a bad command line.
[[noreturn]] inline void
die(int status, const std::string &msg)
{
    std::fprintf(stderr, "%s: %s\n", tool.name, msg.c_str());
    std::exit(status);
}

// A bad command line: "NAME: msg", then tool.usage (if any), exit 2.
[[noreturn]] inline void
bad_usage(const std::string &msg)
{
    std::fprintf(stderr, "%s: %s\n", tool.name, msg.c_str());
    if (tool.usage)
        tool.usage(stderr);
    std::exit(2);
}

// The value of option `opt` ("--ops"): a whole decimal number in 1..max.
// Anything else is bad_usage("bad OPT 'ARG' (1..MAX)").
inline uint64_t
parse_u64(const char *arg, const char *opt, uint64_t max)
{
    char *end;
    errno = 0;
    unsigned long long v = std::strtoull(arg, &end, 10);
    if (errno || *end || arg[0] == '-' || arg[0] == '\0' || v < 1 || v > max)
        bad_usage(std::string("bad ") + opt + " '" + arg + "' (1.." + std::to_string(max) + ")");
    return v;
}

// A --threads list, "T[,T...]", into out[MAX_LIST]; returns how many. Each
// count is 1..1024; anything else (an empty item included) is bad_usage().
inline int
parse_threads(const char *arg, unsigned *out)
{
    int         n = 0;
    std::string s(arg);
    size_t      pos = 0;
    for (;;) {
        size_t      comma = s.find(',', pos);
        std::string tok =
            s.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
        char *end;
        long  v = std::strtol(tok.c_str(), &end, 10);
        if (tok.empty() || *end || v < 1 || v > 1024 || n == MAX_LIST)
            bad_usage(std::string("bad --threads list '") + arg +
                      "' (1..1024, at most 32 entries)");
        out[n++] = unsigned(v);
        if (comma == std::string::npos)
            break;
        pos = comma + 1;
    }
    return n;
}

// main() of a bench: returns run(argc, argv). OIIO and the standard library
// report failure by exception: none escapes, each is die(1, what) ("out of
// memory" for std::bad_alloc).
inline int
main_guarded(int (*run)(int, char **), int argc, char **argv)
{
    try {
        return run(argc, argv);
    } catch (const std::bad_alloc &) {
        die(1, "out of memory");
    } catch (const std::exception &e) {
        die(1, e.what());
    }
}

} // namespace oiio_bench

#endif
