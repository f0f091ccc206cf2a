/* The import's memory budget. A PLY header of a few bytes can declare
 * billions of elements, and assimp reserves for them before reading one
 * (10-48 GB); a glTF can name a 10 GB buffer in a sparse file (only the
 * glTF 2, OBJ and PLY importers are kept: assimp_read.cpp). So while
 * an import runs, the process's data size (RLIMIT_DATA: its heap and
 * private writable mappings) may grow by no more than a budget of
 * RT_IMPORT_BUDGET_BASE_MB plus RT_IMPORT_BUDGET_PER_BYTE times the bytes
 * the files it opened hold on disk (allocated blocks: a sparse file claims
 * gigabytes and holds none). An allocation past it fails as if memory had
 * run out, and the import then says that its budget was the limit.
 *
 * The limit is the process's while the import runs, not the import's own:
 * another thread that allocates meanwhile draws on the same room. render
 * imports before its workers start; a program that loads scenes beside
 * busy threads gives them the budget's headroom, 256 MiB at least. Only the
 * soft limit is lowered, never below a limit already set, and it is put
 * back at the end. Off under the sanitizers, whose allocators reserve large
 * private mappings and abort when one is refused. One import at a time
 * (the caller holds the import's lock). */
#ifndef RT_IMPORT_BUDGET_H
#define RT_IMPORT_BUDGET_H

#include <stdbool.h>
#include <stdint.h>

#define RT_IMPORT_BUDGET_BASE_MB  256
#define RT_IMPORT_BUDGET_PER_BYTE 16

/* Limits the data size to its size now plus the base. False where no
 * limit can be set (no /proc, the sanitizers): the import runs unbounded. */
bool rt__import_budget_start(void);

/* A file the import opened: its blocks add to the budget. */
void rt__import_budget_file(int fd);

/* Puts the limit before back; the budget the import had, in bytes (0: none
 * was set). */
uint64_t rt__import_budget_stop(void);

#endif
