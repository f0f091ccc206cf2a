/* The index of the locked strategies: linear probing over (hash, rep) slots,
 * kept at most 3/4 full. The hash sits in the slot so a probe rejects a
 * mismatch without touching the string. Callers hold the shard's lock. */
#include "ustring_internal.h"

size_t
ustr__pow2_at_least(size_t n)
{
    size_t p = 16;
    while (p < n)
        p *= 2;
    return p;
}

static bool
over_load(size_t count, size_t capacity)
{
    return count * 4 > capacity * 3;
}

ustr_result
ustr__map_init(ustr_table *t, ustr__map *m, size_t capacity)
{
    size_t cap = ustr__pow2_at_least(capacity + capacity / 3 + 1);
    m->slots = ustr__alloc_zeroed(t, cap * sizeof(ustr__slot));
    if (!m->slots)
        return USTR_ERR_NOMEM;
    m->mask = cap - 1;
    m->count = 0;
    ustr__index_grew(t, (int64_t)cap, (int64_t)(cap * sizeof(ustr__slot)), 0);
    return USTR_OK;
}

void
ustr__map_free(ustr_table *t, ustr__map *m)
{
    ustr__free(t, m->slots, (m->mask + 1) * sizeof(ustr__slot));
    m->slots = NULL;
}

const ustr__rep *
ustr__map_find(const ustr__map *m, uint64_t hash, const char *s, size_t len)
{
    for (size_t i = hash & m->mask;; i = (i + 1) & m->mask) {
        const ustr__slot *sl = &m->slots[i];
        if (!sl->rep)
            return NULL;
        if (sl->hash == hash && ustr__rep_matches(sl->rep, hash, s, len))
            return sl->rep;
    }
}

static void
place(ustr__slot *slots, size_t mask, uint64_t hash, const ustr__rep *r)
{
    size_t i = hash & mask;
    while (slots[i].rep)
        i = (i + 1) & mask;
    slots[i] = (ustr__slot){hash, r};
}

static bool
grow(ustr_table *t, ustr__map *m)
{
    size_t      old_cap = m->mask + 1, cap = old_cap * 2;
    ustr__slot *slots = ustr__alloc_zeroed(t, cap * sizeof(ustr__slot));
    if (!slots)
        return false;
    for (size_t i = 0; i < old_cap; i++)
        if (m->slots[i].rep)
            place(slots, cap - 1, m->slots[i].hash, m->slots[i].rep);
    ustr__free(t, m->slots, old_cap * sizeof(ustr__slot));
    m->slots = slots;
    m->mask = cap - 1;
    ustr__index_grew(t, (int64_t)old_cap, (int64_t)(old_cap * sizeof(ustr__slot)), 1);
    return true;
}

bool
ustr__map_insert(ustr_table *t, ustr__map *m, const ustr__rep *r)
{
    if (over_load(m->count + 1, m->mask + 1) && !grow(t, m))
        return false;
    place(m->slots, m->mask, r->hash, r);
    m->count++;
    return true;
}
