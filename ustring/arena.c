/* String storage. Each thread carves reps out of its own 64 KiB blocks, so
 * interning new strings from many threads never meets on an allocator lock;
 * a big string gets a block of its own. */
#include "ustring_internal.h"

#include <stdlib.h>

struct ustr__block {
    ustr__block *next;
    size_t       size; /* bytes, this header included */
    /* data follows, 16-aligned on LP64 (the header is 16 bytes there) */
};

#define BLOCK_SIZE ((size_t)64 * 1024)
#define BIG_REP    (BLOCK_SIZE / 4) /* larger reps get a block of their own */

static inline char *
block_data(ustr__block *b)
{
    return (char *)(b + 1);
}

void *
ustr__alloc(const ustr_table *t, size_t size)
{
    if (t->allocator.alloc_fn)
        return t->allocator.alloc_fn(size, t->allocator.ctx);
    return malloc(size);
}

void *
ustr__alloc_zeroed(const ustr_table *t, size_t size)
{
    if (!t->allocator.alloc_fn)
        return calloc(1, size);
    void *p = t->allocator.alloc_fn(size, t->allocator.ctx);
    if (p)
        memset(p, 0, size);
    return p;
}

void
ustr__free(const ustr_table *t, void *p, size_t size)
{
    if (!p)
        return;
    if (t->allocator.free_fn)
        t->allocator.free_fn(p, size, t->allocator.ctx);
    else
        free(p);
}

void *
ustr__lines_alloc(const ustr_table *t, size_t size, void **raw)
{
    /* The allocator promises 16-byte alignment; take a line more and round. */
    *raw = ustr__alloc_zeroed(t, size + USTR__CACHE_LINE);
    if (!*raw)
        return NULL;
    uintptr_t line = USTR__CACHE_LINE;
    return (void *)(((uintptr_t)*raw + line - 1) & ~(line - 1));
}

void
ustr__lines_free(const ustr_table *t, void *raw, size_t size)
{
    ustr__free(t, raw, size + USTR__CACHE_LINE);
}

static size_t
rep_size(size_t len)
{
    /* len <= USTR_MAX_LEN, so this cannot overflow. */
    return (sizeof(ustr__rep) + len + 1 + 15) & ~(size_t)15;
}

static ustr__block *
block_new(const ustr_table *t, ustr__arena *a, size_t size)
{
    ustr__block *b = ustr__alloc(t, size);
    if (!b)
        return NULL;
    b->size = size;
    b->next = a->blocks;
    a->blocks = b;
    return b;
}

ustr__rep *
ustr__rep_make(const ustr_table *t, ustr__thread *th, const char *s, size_t len, uint64_t hash)
{
    ustr__arena *a = &th->arena;
    size_t       need = rep_size(len);
    char        *p;
    if (need > BIG_REP) {
        ustr__block *b = block_new(t, a, sizeof(ustr__block) + need);
        if (!b)
            return NULL;
        p = block_data(b);
    } else {
        if (!a->cur || (size_t)(a->end - a->cur) < need) {
            ustr__block *b = block_new(t, a, BLOCK_SIZE);
            if (!b)
                return NULL;
            a->cur = block_data(b);
            a->end = (char *)b + BLOCK_SIZE;
        }
        p = a->cur;
        a->cur += need;
    }
    ustr__rep *r = (ustr__rep *)(void *)p;
    r->hash = hash;
    r->len = len;
    if (len)
        memcpy(r->chars, s, len);
    r->chars[len] = '\0';
    ustr__count(&th->counters.string_bytes, (int64_t)need);
    return r;
}

void
ustr__rep_unmake(const ustr_table *t, ustr__thread *th, ustr__rep *r)
{
    ustr__arena *a = &th->arena;
    size_t       need = rep_size(r->len);
    if (need > BIG_REP) {
        /* r is the newest rep, so its block is the newest block. */
        ustr__block *b = a->blocks;
        a->blocks = b->next;
        ustr__free(t, b, b->size);
    } else {
        a->cur = (char *)r;
    }
    ustr__count(&th->counters.string_bytes, -(int64_t)need);
}

void
ustr__arena_free(const ustr_table *t, ustr__arena *a)
{
    ustr__block *b = a->blocks;
    while (b) {
        ustr__block *next = b->next;
        ustr__free(t, b, b->size);
        b = next;
    }
    a->blocks = NULL;
    a->cur = a->end = NULL;
}
