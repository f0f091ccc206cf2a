/* What keeps a hostile scene file from killing an import unannounced:
 * nesting. assimp's importers, and the scene build's walk of the node
 * hierarchy, recurse once per level: a glTF of 14,000 nested nodes (311 KB)
 * or of a million nested JSON arrays in `extras` (2 MB) overflowed the main
 * thread's 8 MiB stack and ended the process with a bare SIGSEGV. So:
 *
 * - JSON nesting is counted before assimp reads a glTF (.gltf, or a .glb's
 *   JSON chunk): over RT_MAX_JSON_DEPTH levels the file is refused, "too
 *   deeply nested: JSON deeper than 1000 levels";
 * - the import itself runs on a stack of its own of RT_IMPORT_STACK_MB
 *   (address space, committed only as far as it is used), so that nesting the check cannot see
 * (glTF nodes nest by index, not in the JSON; other formats) has room: 300,000 nested glTF nodes
 *   load. Deeper still, the stack's guard is hit, and the process ends
 *   with one line, "PROG: FILE: too deeply nested: the import overflowed
 *   its 256 MiB stack", exit status 1, instead of a crash. (Not under the
 *   sanitizers, which report the overflow themselves.) */
/*
 * And memory: a PLY or OFF header of a few bytes can declare billions of
 * elements, and assimp reserves for them before reading one (10-48 GB). So
 * the import's allocations are counted against a budget of
 * RT_IMPORT_BUDGET_BASE_MB plus RT_IMPORT_BUDGET_PER_BYTE times the bytes
 * the files it opened hold on disk (allocated blocks: a sparse file claims
 * gigabytes and holds none). An allocation over it fails as if memory had
 * run out; the import then says which limit was hit. The count is kept by
 * malloc, calloc, realloc and free defined in this program, which hand
 * every call on to glibc's own and count only on the thread running the import (not
 * under the sanitizers, which bring their own malloc). */
#ifndef RT_IMPORT_GUARD_H
#define RT_IMPORT_GUARD_H

#include "rt_scene.h"

#include <stdbool.h>
#include <stdint.h>

#define RT_MAX_JSON_DEPTH  1000
#define RT_IMPORT_STACK_MB 256 /* $RT_IMPORT_STACK_MB (1..4096) sets another */

#define RT_IMPORT_BUDGET_BASE_MB  256
#define RT_IMPORT_BUDGET_PER_BYTE 16

/* When an allocation did not fit: the bytes the import held, the bytes it
 * then asked for, and the budget. */
typedef struct rt__budget_report {
    uint64_t held, asked, budget;
} rt__budget_report;

/* On the thread running the import: start counting against a budget of the base;
 * each file opened adds to it; stop reports whether it was exceeded, and
 * by what (the first request refused). */
void rt__import_budget_start(void);
void rt__import_budget_file(int fd);
bool rt__import_budget_stop(rt__budget_report *out);

/* RT_OK, or RT_ERR_FORMAT with err saying the JSON json[0..len) nests
 * deeper than RT_MAX_JSON_DEPTH, and at which byte (at0: where the JSON
 * starts in its file). Brackets inside strings do not count. import_check.c
 * runs it on a glTF's JSON before cJSON parses it (which stops at the same
 * depth, but says only that the JSON does not parse). */
rt_result rt__json_depth_check(const char *json, size_t len, uint64_t at0, char err[RT_ERR_LEN]);

/* Runs fn(arg) on the import's large stack: on the calling thread, which
 * switches to that stack and back (under the sanitizers, on a thread of its
 * own, waited for). An overflow of that stack ends the process as said
 * above, `name` being the file's. One call at a time (the caller holds the
 * import's lock). False, with errno, when the stack cannot be made. */
bool rt__import_on_big_stack(void (*fn)(void *), void *arg, const char *name);

#endif
