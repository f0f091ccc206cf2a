#include "procgen.h"
#include "tool.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

uint64_t
procgen_mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

float
procgen_lattice(uint64_t k, int64_t x, int64_t y)
{
    return (float)(procgen_mix64(
                       k ^ procgen_mix64((uint64_t)x * 0x9E3779B97F4A7C15ULL ^ (uint64_t)y)) >>
                   40) *
           0x1p-24f;
}

float
procgen_noise(uint64_t k, float u, float v, int cells)
{
    float   x = u * cells, y = v * cells;
    int64_t x0 = (int64_t)floorf(x), y0 = (int64_t)floorf(y);
    float   fx = x - x0, fy = y - y0;
    fx = fx * fx * (3 - 2 * fx);
    fy = fy * fy * (3 - 2 * fy);
    /* Wrap into [0, cells) from either side, so negative (u, v) tile too. */
    x0 = ((x0 % cells) + cells) % cells;
    y0 = ((y0 % cells) + cells) % cells;
    int64_t x1 = (x0 + 1) % cells, y1 = (y0 + 1) % cells;
    float   a = procgen_lattice(k, x0, y0), b = procgen_lattice(k, x1, y0);
    float   c = procgen_lattice(k, x0, y1), d = procgen_lattice(k, x1, y1);
    return (a + (b - a) * fx) + ((c + (d - c) * fx) - (a + (b - a) * fx)) * fy;
}

float
procgen_fbm(uint64_t k, float u, float v, int cells, int octaves)
{
    float n = 0, amp = 0.5f, total = 0;
    for (int o = 0; o < octaves; o++, amp *= 0.5f, cells *= 2) {
        n += amp * procgen_noise(k + (uint64_t)o, u, v, cells);
        total += amp;
    }
    return n / total;
}

/* A --seed value: decimal digits only, no sign or spaces, 64 bits. */
static bool
parse_seed(const char *s, uint64_t *out)
{
    char *end = NULL;
    if (*s < '0' || *s > '9')
        return false;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (*end || errno)
        return false;
    *out = v;
    return true;
}

void
procgen_command_line(int argc, char **argv, const char *usage, const char *const names[], int n,
                     uint64_t *seed, int *which, const char **dir)
{
    static const struct option longopts[] = {{"seed", required_argument, NULL, 'k'},
                                             {NULL, 0, NULL, 0}};
    const tool_cli             cli = {usage, longopts, NULL};
    int                        c;
    *seed = 1;
    while ((c = tool_getopt(argc, argv, &cli)) != -1)
        if (c == 'k' && !parse_seed(optarg, seed))
            tool_bad_usage("'%s' is not a number", optarg);
    if (optind != argc - 2)
        tool_usage_error(&cli);
    *dir = argv[optind + 1];
    for (*which = 0; *which < n; ++*which)
        if (strcmp(argv[optind], names[*which]) == 0)
            return;
    char   list[256] = "";
    size_t at = 0;
    for (int i = 0; i < n && at < sizeof list; i++)
        at += (size_t)snprintf(list + at, sizeof list - at, "%s%s", i ? ", " : "", names[i]);
    tool_bad_usage("unknown scene '%s' (%s)", argv[optind], list);
}
