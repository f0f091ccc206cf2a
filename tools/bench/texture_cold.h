/* texture-bench --cold: the texture system's first touch of files against
 * a plain decode of the same files (decode_floor.h), issue 33. The result
 * line is a contract (docs/design.md):
 *
 *   texture-bench cold files=N bytes=B decode_secs=A secs=S ratio=X spread=L-H
 *
 * B: level 0's decoded bytes, summed over the files. A and S: medians of
 * the rounds, floor and ours interleaved (floor, ours, floor, ours...).
 * X = S / A; L and H: the lowest and highest of the rounds' own ratios. */
#ifndef TEXTURE_COLD_H
#define TEXTURE_COLD_H

#include <stdbool.h>
#include <stddef.h>

typedef struct texture_cold_opts {
    char *const *files;
    unsigned     nfiles;
    int          rounds;        /* timed rounds of each side, at least 1 */
    bool         raw;           /* ours opens the files raw (data textures) */
    size_t       max_memory_mb; /* ours: the texture memory budget */
} texture_cold_opts;

/* Runs the benchmark: prints the result line on stdout, each round and the
 * level 0 checksums on stderr. Ends the program (tool_die(), exit 1) when a
 * file cannot be read by either side, or when level 0 read back through
 * the texture system differs from the floor's decode. */
void texture_cold_run(const texture_cold_opts *o);

#endif
