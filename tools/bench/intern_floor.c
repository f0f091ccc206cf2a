/* The floor for a hot intern (intern_floor.h says what it is for). A slot
 * is a bare pointer, the simplest index that works: no tag, no copy of the
 * hash. Slots of hash and pointer, which pass another string without
 * reading it, ran no faster (the same time within the noise, 194
 * instructions an operation against 183; docs/benchmarks.md). */
#include "intern_floor.h"

#include "ustring_internal.h" /* ustr__hash(), ustr__rep_matches() */

#include <stdlib.h>

struct intern_floor {
    size_t           mask;    /* capacity - 1 */
    size_t           count;   /* strings held */
    size_t           room;    /* most strings held: half the capacity */
    const ustr__rep *slots[]; /* NULL: empty */
};

intern_floor *
intern_floor_create(size_t n)
{
    /* The capacity the lock-free table starts with for n strings, in all
     * (lockfree.c): both probe an index of the same load. */
    size_t        cap = ustr__pow2_at_least(2 * n);
    intern_floor *f = calloc(1, sizeof *f + cap * sizeof f->slots[0]);
    if (!f)
        return NULL;
    f->mask = cap - 1;
    f->room = cap / 2;
    return f;
}

void
intern_floor_destroy(intern_floor *f)
{
    free(f);
}

bool
intern_floor_add(intern_floor *f, ustr u)
{
    const ustr__rep *r = ustr__rep_of(u);
    size_t           i = r->hash & f->mask;
    for (; f->slots[i]; i = (i + 1) & f->mask)
        if (f->slots[i] == r) /* one table holds one copy of a string */
            return true;
    if (f->count == f->room)
        return false;
    f->slots[i] = r;
    f->count++;
    return true;
}

ustr
intern_floor_find(const intern_floor *f, const char *s, size_t len)
{
    uint64_t hash = ustr__hash(s, len);
    for (size_t i = hash & f->mask;; i = (i + 1) & f->mask) {
        const ustr__rep *r = f->slots[i];
        if (!r)
            return NULL; /* never full, so every probe ends */
        if (ustr__rep_matches(r, hash, s, len))
            return r->chars;
    }
}
