/* Fuzz target: the list of missing tiles that `render --resume` reads from
 * a partial EXR (rt:missing_tiles, rt_tiles_missing_parse()). The input is
 * a tile count (two bytes) and the attribute's text. Checks: a list it
 * accepts names only tiles below the count, and formatting the map it
 * made and parsing that again gives the same map. */
#include "fuzz_input.h"
#include "rt_render.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_MAX_TILES 4096

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_input in = {data, size};
    uint32_t   ntiles = fuzz_range(&in, 1, FUZZ_MAX_TILES);
    char      *text = fuzz_string(&in, 4096, NULL);
    uint8_t   *done = malloc(ntiles), *again = malloc(ntiles);
    if (text && done && again && rt_tiles_missing_parse(text, done, ntiles)) {
        char *list = rt_tiles_missing_format(done, ntiles);
        if (list &&
            (!rt_tiles_missing_parse(list, again, ntiles) || memcmp(done, again, ntiles) != 0))
            fuzz_fail("a tile map does not survive formatting and parsing");
        free(list);
    }
    free(again);
    free(done);
    free(text);
    return 0;
}
