/* intern_floor: the floor for a hot intern (issue 33).
 *
 * The yardstick against which ustring-bench --floor measures a table's hit:
 * the same work done by the simplest code that could do it, on the same
 * machine in the same run. One thread, and nothing but the index: an
 * open-addressing array of pointers (linear probing, a power-of-two
 * capacity, at most half full, as the lock-free table sizes its own),
 * hashed with the table's own hash (ustr__hash(), keyed as every table's
 * is) and matched with the table's own compare (ustr__rep_matches(): the
 * stored hash, the length, then memcmp()). No locks, no atomics, no
 * epochs, no counters, no thread record.
 *
 * It keeps no strings of its own: it indexes those a ustr_table interned.
 * So the floor and the table read the very same copies at the very same
 * addresses, and the difference between their times is the index and what
 * the table does around it, not where the characters happen to lie.
 *
 * Built by one thread; once built, read by any number at once
 * (intern_floor_find() writes nothing), which makes the ceiling of a hot
 * intern's speed-up: the same lookups from many threads with nothing shared
 * written. Only while the table whose strings it holds lives.
 * docs/benchmarks.md ("The floor for a hot intern") has what it measured. */
#ifndef RT_TOOLS_INTERN_FLOOR_H
#define RT_TOOLS_INTERN_FLOOR_H

#include "ustring.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct intern_floor intern_floor; /* opaque */

/* An empty floor with room for n strings at most half full; free it with
 * intern_floor_destroy(). NULL when out of memory. Adding and freeing are
 * one thread's, with no reader meanwhile. */
intern_floor *intern_floor_create(size_t n);

/* Frees the index; the strings stay their table's. NULL is a no-op. */
void intern_floor_destroy(intern_floor *f);

/* Adds u, a string from a table that outlives f; adding one already there
 * does nothing (a strings file may repeat a line). false, and f unchanged,
 * when f already holds the n strings it was made for. */
bool intern_floor_add(intern_floor *f, ustr u);

/* The string of f whose bytes are the `len` at s, or NULL: what
 * ustr_table_intern() returns for a string the table holds. */
ustr intern_floor_find(const intern_floor *f, const char *s, size_t len);

#endif
