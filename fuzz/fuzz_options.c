/* Fuzz target: render's command-line parser (rt_options_parse). The input
 * is the argument words, separated by NUL bytes, after "render". Checks the
 * parser's contract: -1 (go on) with options inside the documented limits,
 * or an exit status of 0 or 2; and the tile grid of what it accepted. */
#include "fuzz_input.h"
#include "rt_options.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_MAX_ARGS 64

static void
check_options(const rt_options *o)
{
    if (o->threads < 1 || o->threads > RT_MAX_THREADS || o->width < 1 ||
        o->width > RT_MAX_RESOLUTION || o->height < 1 || o->height > RT_MAX_RESOLUTION ||
        o->spp < 1 || o->spp > RT_MAX_SPP || o->max_depth > RT_MAX_DEPTH || o->tile < 1 ||
        (uint64_t)o->width * o->height * o->spp > RT_MAX_PIXEL_SAMPLES || !o->scene || !o->output ||
        o->nsearch_paths > RT_MAX_SEARCH_PATHS)
        fuzz_fail("accepted options out of the documented limits");
    uint32_t tx = rt_options_tiles_x(o), n = rt_options_tiles(o);
    uint64_t want_x = ((uint64_t)o->width + o->tile - 1) / o->tile;
    uint64_t want = want_x * (((uint64_t)o->height + o->tile - 1) / o->tile);
    if (tx != want_x || n != want)
        fuzz_fail("the tile grid does not cover the image");
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* Words copied out, NUL-terminated: getopt may permute argv. */
    char *buf = malloc(size + 1), *argv[FUZZ_MAX_ARGS + 2];
    if (!buf)
        return 0;
    memcpy(buf, data, size);
    buf[size] = '\0';
    int argc = 0;
    argv[argc++] = "render";
    for (size_t at = 0; at < size && argc <= FUZZ_MAX_ARGS; at += strlen(buf + at) + 1)
        argv[argc++] = buf + at;
    argv[argc] = NULL;

    /* --help and usage errors print (tools/fuzz closes stdout and stderr
     * for this target; libFuzzer keeps its own reports). */
    rt_options o;
    int        r = rt_options_parse(argc, argv, &o);
    if (r == -1)
        check_options(&o);
    else if (r != 0 && r != 2)
        fuzz_fail("the parser returned an exit status it does not document");
    free(buf);
    return 0;
}
