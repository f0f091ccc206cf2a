/* What keeps deep nesting in a hostile scene file from killing an import
 * unannounced. assimp's importers, and the scene build's walk of the node
 * hierarchy, recurse once per level: a glTF of 14,000 nested nodes (311 KB)
 * overflowed the main thread's 8 MiB stack and ended the process with a
 * bare SIGSEGV. So the import runs on a stack of its own of
 * RT_IMPORT_STACK_MB (address space, committed only as far as it is used),
 * so that nesting no check on the file can see (glTF nodes nest by index,
 * not in the JSON; other formats) has room: 300,000 nested glTF nodes load.
 * Deeper still, the stack's guard is hit, and the process ends with one
 * line, "PROG: FILE: too deeply nested: the import overflowed its 256 MiB
 * stack", exit status 1, instead of a crash (not under the sanitizers,
 * which report the overflow themselves). JSON nesting is refused before
 * that, by import_check.h. */
#ifndef RT_IMPORT_STACK_H
#define RT_IMPORT_STACK_H

#include <stdbool.h>

#define RT_IMPORT_STACK_MB 256 /* $RT_IMPORT_STACK_MB (1..4096) sets another */

/* Runs fn(arg) on the import's large stack: on the calling thread, which
 * switches to that stack and back (under the sanitizers, on a thread of its
 * own, waited for). An overflow of that stack ends the process as said
 * above, `name` being the file's. One call at a time (the caller holds the
 * import's lock). False, with errno, when the stack cannot be made. */
bool rt__import_on_big_stack(void (*fn)(void *), void *arg, const char *name);

#endif
