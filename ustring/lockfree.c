/* The lock-free strategy.
 *
 * Index: an open-addressing array of atomic slots, linear probing, each slot
 * one word:
 *   EMPTY          free
 *   FROZEN         free and closed: this array is moving, look in `next`
 *   rep            a published string
 *   rep | MOVED    a string that is (being) copied to `next`; still valid
 * Reps never move and never die before the table, and a slot only ever goes
 * EMPTY -> rep -> rep|MOVED or EMPTY -> FROZEN, so a probe that reaches a free
 * slot has proved its key is not in this array.
 *
 * Lookups take no lock and write nothing shared: they announce an epoch in
 * their own thread record, probe, and follow `next` past a FROZEN slot.
 *
 * Inserts claim room (the array's `claimed` count, at most half the slots),
 * then publish with a compare-and-swap on an EMPTY slot. When no room is
 * left, the inserter makes `next` (2x or more), FREEZES the free slot its
 * probe ended on (so nobody can later insert its key into this array) and
 * goes on in `next`. Then every inserter that sees a `next` helps copy: it
 * claims a chunk of slots and marks each MOVED or FROZEN, copying the reps.
 * A key is in at most one array of the chain at a time: an inserter reaches
 * `next` only through a closed slot at the end of its key's probe, so the
 * key was not, and can never be, in the older array.
 *
 * Migrations never nest: a full array starts its own move only once it is
 * `current`, i.e. once the array before it is fully copied. So `next` holds
 * the old array's reps (at most a quarter of it, by its sizing) plus at most
 * half of it in new inserts, and a copy never needs room that isn't there.
 *
 * Reclamation: when the last chunk is copied, `current` advances and the old
 * array retires. It is freed only once every thread's announced epoch is
 * newer than its retirement, or the thread is outside the table (epoch 0).
 * Proof sketch, all in the seq_cst total order: the reclaimer swaps
 * `current`, bumps the epoch, then scans records. A reader that announced
 * before the scan is seen and protects the array; one that announces after
 * it loads `current` after the swap, so it cannot reach the old array. */
#include "ustring_internal.h"

#include <errno.h>

#define EMPTY  ((uintptr_t)0)
#define FROZEN ((uintptr_t)1)
#define MOVED  ((uintptr_t)1)
#define CHUNK  ((size_t)512) /* slots a helper copies at a time */

struct ustr__lf_array {
    size_t                    mask; /* capacity - 1 */
    size_t                    max_claims;
    void                     *raw;
    _Atomic(ustr__lf_array *) next;                      /* set once, when the move starts */
    ustr__lf_array           *retired_next;              /* guarded by registry_lock */
    uint64_t                  retire_epoch;              /* guarded by registry_lock */
    alignas(USTR__CACHE_LINE) _Atomic size_t claimed;    /* reps placed or about to be */
    alignas(USTR__CACHE_LINE) _Atomic size_t copy_claim; /* next chunk to copy */
    _Atomic size_t copy_done;                            /* chunks copied */
    alignas(USTR__CACHE_LINE) _Atomic uintptr_t slots[];
};

static size_t
array_bytes(size_t cap)
{
    return sizeof(ustr__lf_array) + cap * sizeof(_Atomic uintptr_t);
}

static size_t
array_chunks(const ustr__lf_array *a)
{
    return (a->mask + CHUNK) / CHUNK;
}

static ustr__lf_array *
array_new(ustr_table *t, size_t cap)
{
    void           *raw;
    ustr__lf_array *a = ustr__lines_alloc(t, array_bytes(cap), &raw);
    if (!a)
        return NULL;
    memset(a, 0, array_bytes(cap)); /* EMPTY is 0; atomics start at 0 */
    a->mask = cap - 1;
    a->max_claims = cap / 2;
    a->raw = raw;
    ustr__index_grew(t, 0, (int64_t)array_bytes(cap), 0);
    return a;
}

static void
array_free(ustr_table *t, ustr__lf_array *a)
{
    size_t bytes = array_bytes(a->mask + 1);
    ustr__index_grew(t, 0, -(int64_t)bytes, 0);
    ustr__lines_free(t, a->raw, bytes);
}

/* ---- epochs ---- */

static inline void
epoch_enter(ustr_table *t, ustr__thread *th)
{
    /* Acquire pairs with the seq_cst bump in retire(): seeing the new epoch
     * means seeing the `current` swap that came before it. */
    uint64_t e = atomic_load_explicit(&t->lf.epoch, memory_order_acquire);
    /* seq_cst, with the seq_cst load of `current` that follows it: see the
     * proof at the top. */
    atomic_store_explicit(&th->epoch, e, memory_order_seq_cst);
}

static inline void
epoch_leave(ustr__thread *th)
{
    /* Release: our reads of the arrays happen before a reclaimer that sees
     * this 0 frees them. */
    atomic_store_explicit(&th->epoch, 0, memory_order_release);
}

static inline ustr__lf_array *
current(ustr_table *t)
{
    /* seq_cst: ordered after our epoch announcement (see the proof). */
    return atomic_load_explicit(&t->lf.current, memory_order_seq_cst);
}

static inline ustr__lf_array *
next_of(ustr__lf_array *a)
{
    /* Acquire pairs with the release that published `next`: we see its
     * zeroed slots. */
    return atomic_load_explicit(&a->next, memory_order_acquire);
}

void
ustr__lockfree_reclaim(ustr_table *t)
{
    uint64_t oldest = UINT64_MAX;
    for (ustr__thread *th = t->threads; th; th = th->next) {
        /* seq_cst: the scan of the proof; acquire part pairs with the
         * release in epoch_leave(). */
        uint64_t e = atomic_load_explicit(&th->epoch, memory_order_seq_cst);
        if (e && e < oldest)
            oldest = e;
    }
    ustr__lf_array **link = &t->lf.retired;
    while (*link) {
        ustr__lf_array *a = *link;
        if (a->retire_epoch <= oldest) {
            *link = a->retired_next;
            array_free(t, a);
        } else {
            link = &a->retired_next;
        }
    }
    /* Relaxed: only a hint that makes inserts try again later. */
    atomic_store_explicit(&t->lf.has_retired, t->lf.retired != NULL, memory_order_relaxed);
}

static void
retire(ustr_table *t, ustr__lf_array *a)
{
    pthread_mutex_lock(&t->registry_lock);
    /* seq_cst: after the `current` swap and before the scan, in the total
     * order the proof uses. */
    a->retire_epoch = atomic_fetch_add_explicit(&t->lf.epoch, 2, memory_order_seq_cst) + 2;
    a->retired_next = t->lf.retired;
    t->lf.retired = a;
    ustr__lockfree_reclaim(t);
    pthread_mutex_unlock(&t->registry_lock);
}

/* ---- probing and placing ---- */

/* Finds the key in `a` alone. On a miss returns NULL with the free slot that
 * ended the probe in *at and its value (EMPTY or FROZEN) in *seen. */
static const ustr__rep *
probe(ustr__lf_array *a, uint64_t hash, const char *s, size_t len, size_t *at, uintptr_t *seen)
{
    for (size_t i = hash & a->mask;; i = (i + 1) & a->mask) {
        /* Acquire pairs with the release CAS that published the rep: seeing
         * the pointer means seeing its characters. */
        uintptr_t v = atomic_load_explicit(&a->slots[i], memory_order_acquire);
        if (v <= FROZEN) {
            *at = i;
            *seen = v;
            return NULL;
        }
        const ustr__rep *r = (const ustr__rep *)(v & ~MOVED);
        if (ustr__rep_matches(r, hash, s, len))
            return r;
    }
}

static const ustr__rep *
lookup(ustr__lf_array *a, uint64_t hash, const char *s, size_t len)
{
    for (;;) {
        size_t           at;
        uintptr_t        seen;
        const ustr__rep *r = probe(a, hash, s, len, &at, &seen);
        if (r || seen == EMPTY)
            return r;
        a = next_of(a); /* FROZEN: the array moved on */
    }
}

/* Reserves room for one rep. Copies always get it: the sizing above
 * guarantees the room exists. */
static bool
claim(ustr__lf_array *a, bool copying)
{
    if (copying) {
        /* Relaxed: a count, not a publication; the slot CAS publishes. */
        atomic_fetch_add_explicit(&a->claimed, 1, memory_order_relaxed);
        return true;
    }
    size_t c = atomic_load_explicit(&a->claimed, memory_order_relaxed);
    do {
        if (c >= a->max_claims)
            return false;
        /* Relaxed: as above. */
    } while (!atomic_compare_exchange_weak_explicit(&a->claimed, &c, c + 1, memory_order_relaxed,
                                                    memory_order_relaxed));
    return true;
}

static void
unclaim(ustr__lf_array *a)
{
    /* Relaxed: as in claim(). */
    atomic_fetch_sub_explicit(&a->claimed, 1, memory_order_relaxed);
}

/* a's successor, made now if needed; NULL when out of memory. */
static ustr__lf_array *
next_or_make(ustr_table *t, ustr__lf_array *a)
{
    ustr__lf_array *n = next_of(a);
    if (n)
        return n;
    size_t claimed = atomic_load_explicit(&a->claimed, memory_order_relaxed);
    size_t cap = ustr__pow2_at_least(4 * claimed);
    if (cap < 2 * (a->mask + 1))
        cap = 2 * (a->mask + 1);
    ustr__lf_array *fresh = array_new(t, cap);
    if (!fresh)
        return NULL;
    /* Release publishes the zeroed array; acquire on failure lets us use
     * the winner's. */
    if (atomic_compare_exchange_strong_explicit(&a->next, &n, fresh, memory_order_acq_rel,
                                                memory_order_acquire))
        return fresh;
    array_free(t, fresh);
    return n;
}

static void advance(ustr_table *t);

/* Copies one chunk of a's move if any is left; false when none is. */
static bool copy_chunk(ustr_table *t, ustr__lf_array *a);

/* Helps the move of `current` to its end, then waits for helpers that are
 * still copying (only when a new array fills before the old one is copied). */
static void
finish_move(ustr_table *t)
{
    ustr__lf_array *a = current(t);
    if (!next_of(a))
        return;
    while (copy_chunk(t, a))
        ;
    ustr_backoff b = USTR_BACKOFF_INIT;
    /* Acquire pairs with the acq_rel count of the last chunk: its copies are
     * visible once we see it. */
    while (atomic_load_explicit(&a->copy_done, memory_order_acquire) < array_chunks(a))
        ustr_backoff_wait(&b);
    advance(t);
}

/* Puts r into the chain from `a` on, or returns the equal rep already there.
 * *published says whether r went in. NULL: out of memory. */
static const ustr__rep *
place(ustr_table *t, ustr__lf_array *a, const ustr__rep *r, bool copying, bool *published)
{
    for (;;) {
        size_t           i;
        uintptr_t        seen;
        const ustr__rep *found = probe(a, r->hash, r->chars, r->len, &i, &seen);
        if (found)
            return found;
        if (seen == FROZEN) {
            a = next_of(a);
            continue;
        }
        if (!claim(a, copying)) {
            if (a != current(t)) { /* never nest moves */
                finish_move(t);
                a = current(t);
                continue;
            }
            ustr__lf_array *n = next_or_make(t, a);
            if (!n)
                return NULL;
            /* Close the slot where our key would go, so no one puts it into
             * this array after we put it into n. If the slot changed, look
             * again. Release: whoever sees FROZEN (acquire in probe()) also
             * sees `next`. */
            uintptr_t expect = EMPTY;
            if (atomic_compare_exchange_strong_explicit(&a->slots[i], &expect, FROZEN,
                                                        memory_order_release, memory_order_relaxed))
                a = n;
            continue;
        }
        uintptr_t expect = EMPTY;
        /* Release publishes the rep's characters with the pointer (pairs with
         * the acquire in probe()). */
        if (atomic_compare_exchange_strong_explicit(&a->slots[i], &expect, (uintptr_t)r,
                                                    memory_order_release, memory_order_relaxed)) {
            *published = true;
            return r;
        }
        unclaim(a); /* lost the slot: look again */
    }
}

/* Closes slot i of a moving array, copying its rep to `next`. */
static void
move_slot(ustr_table *t, ustr__lf_array *a, ustr__lf_array *n, size_t i)
{
    /* Acquire: if it is a rep we are about to read it. */
    uintptr_t v = atomic_load_explicit(&a->slots[i], memory_order_acquire);
    for (;;) {
        if (v & MOVED) /* FROZEN, or already moved */
            return;
        uintptr_t closed = v == EMPTY ? FROZEN : v | MOVED;
        /* Release: whoever sees FROZEN also sees `next` (as in place()).
         * Acquire, on failure too: if a rep appeared we are about to read it. */
        if (atomic_compare_exchange_weak_explicit(&a->slots[i], &v, closed, memory_order_acq_rel,
                                                  memory_order_acquire)) {
            if (v != EMPTY) {
                bool copied = false;
                place(t, n, (const ustr__rep *)v, true, &copied);
            }
            return;
        }
    }
}

static bool
copy_chunk(ustr_table *t, ustr__lf_array *a)
{
    size_t nchunks = array_chunks(a);
    /* Relaxed: hands each chunk to one helper; nothing else is ordered. */
    size_t c = atomic_fetch_add_explicit(&a->copy_claim, 1, memory_order_relaxed);
    if (c >= nchunks)
        return false;
    ustr__lf_array *n = next_of(a);
    size_t          end = (c + 1) * CHUNK < a->mask + 1 ? (c + 1) * CHUNK : a->mask + 1;
    for (size_t i = c * CHUNK; i < end; i++)
        move_slot(t, a, n, i);
    /* acq_rel: releases our copies to whoever sees the count, and acquires
     * the other helpers' so the last one can advance. */
    if (atomic_fetch_add_explicit(&a->copy_done, 1, memory_order_acq_rel) + 1 == nchunks)
        advance(t);
    return true;
}

/* Moves `current` past every fully copied array, retiring each. */
static void
advance(ustr_table *t)
{
    for (;;) {
        ustr__lf_array *a = current(t);
        ustr__lf_array *n = next_of(a);
        /* Acquire: as in finish_move(). */
        if (!n || atomic_load_explicit(&a->copy_done, memory_order_acquire) < array_chunks(a))
            return;
        /* seq_cst: the swap of the reclamation proof. */
        if (atomic_compare_exchange_strong_explicit(&t->lf.current, &a, n, memory_order_seq_cst,
                                                    memory_order_seq_cst)) {
            ustr__index_grew(t, (int64_t)(n->mask - a->mask), 0, 1);
            retire(t, a);
        }
    }
}

/* ---- the strategy ---- */

const ustr__rep *
ustr__lockfree_intern(ustr_table *t, ustr__thread *th, const char *s, size_t len, uint64_t hash)
{
    epoch_enter(t, th);
    const ustr__rep *r = lookup(current(t), hash, s, len);
    if (r) {
        epoch_leave(th);
        return r;
    }

    ustr__rep *mine = ustr__rep_make(t, th, s, len, hash);
    bool       published = false;
    if (mine) {
        r = place(t, current(t), mine, false, &published);
        ustr__lf_array *a = current(t);
        if (next_of(a)) /* a move is on: help it along */
            while (copy_chunk(t, a))
                ;
    }
    epoch_leave(th);

    if (published)
        ustr__count(&th->counters.inserts, 1);
    else if (mine)
        ustr__rep_unmake(t, th, mine);
    if (!r)
        errno = ENOMEM;
    /* Relaxed: a hint; the registry lock orders the real work. Only try:
     * a reclaimer already at it will do. */
    if (atomic_load_explicit(&t->lf.has_retired, memory_order_relaxed) &&
        pthread_mutex_trylock(&t->registry_lock) == 0) {
        ustr__lockfree_reclaim(t);
        pthread_mutex_unlock(&t->registry_lock);
    }
    return r;
}

ustr_result
ustr__lockfree_init(ustr_table *t)
{
    atomic_init(&t->lf.epoch, 2);
    ustr__lf_array *a = array_new(t, ustr__pow2_at_least(2 * t->initial_capacity));
    if (!a)
        return USTR_ERR_NOMEM;
    ustr__index_grew(t, (int64_t)(a->mask + 1), 0, 0);
    atomic_init(&t->lf.current, a);
    return USTR_OK;
}

void
ustr__lockfree_free(ustr_table *t)
{
    ustr__lf_array *a = atomic_load_explicit(&t->lf.current, memory_order_relaxed);
    while (a) {
        ustr__lf_array *n = atomic_load_explicit(&a->next, memory_order_relaxed);
        array_free(t, a);
        a = n;
    }
    while (t->lf.retired) {
        a = t->lf.retired;
        t->lf.retired = a->retired_next;
        array_free(t, a);
    }
}
