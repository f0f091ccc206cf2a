/* The lock-free strategy.
 *
 * Index: an open-addressing array of atomic slots, linear probing, each slot
 * one word:
 *   EMPTY          free
 *   FROZEN         free and closed: this array is moving, look in `next`
 *   rep            a published string (also in `next` once its move copied it)
 * On x86-64 a rep word also carries 15 bits of the hash in its top 16 bits
 * (user pointers fit in 48), so a probe passes most other strings
 * without touching their memory; a rep above 2^48 is stored untagged and
 * compared the slow way. Reps never move and never die before the table,
 * and a slot only ever goes EMPTY -> rep or EMPTY -> FROZEN, so
 * a probe that reaches a free slot has proved its key is not in this array.
 *
 * Lookups take no lock and write nothing shared: they announce an epoch in
 * their own thread record, probe, and follow `next` past a FROZEN slot.
 *
 * Inserts claim room (the array's `claimed` count, at most half the slots),
 * then publish with a compare-and-swap on an EMPTY slot. When no room is
 * left, the inserter makes `next` (4x or 2x, see GROW_4X_BELOW), FREEZES the free slot its
 * probe ended on (so nobody can later insert its key into this array) and
 * goes on in `next`. Then every inserter that sees a `next` helps copy: it
 * claims a chunk of slots, freezes the free ones and copies the reps.
 * Copying a slot is idempotent, so nobody ever waits for a helper that was
 * preempted mid-chunk: a thread that needs the move finished copies every
 * unfinished chunk again itself. An array holds at most one rep per key,
 * and an inserter reaches `next` only through a closed slot at the end of
 * its key's probe, so its key was not, and can never be, in the older
 * array: equal strings always meet in the same array.
 *
 * Migrations never nest: a full array starts its own move only once it is
 * `current`, i.e. once the array before it is fully copied. Room: new
 * inserts are admitted only while `claimed` < half the slots, and copies
 * bring at most the old array's reps, fewer than its capacity, which is at
 * most half of `next` (it is at least twice as big). So an array never
 * fills, and every probe ends.
 *
 * Reclamation: when the last chunk is copied, `current` advances (a seq_cst
 * compare-and-swap: the unlink) and the old array retires through the
 * table's epoch domain (ustr_epoch.h, where the proof is). Lookups enter
 * the domain and load `current` with seq_cst, as the proof asks.
 *
 * Shards: the table holds USTR__LF_SHARDS such chains, one `current` each,
 * and a string lives in the chain its hash picks (ustr__lf_shard_of()); everything
 * above holds per chain, which shares only the epoch domain with the
 * others. A single array took every insert's claim on one counter and
 * every growth in one move: at 16 threads, inserts of new strings ran at
 * a third of the sharded lock's rate. */
#include "ustring_internal.h"

#include <errno.h>

/* Race points: where tests/stress/ustr_race_test.c stops a thread to force
 * an interleaving that a timed race would hit once in a blue moon. Live
 * only in the copy of this library that test builds (USTR_RACE_POINTS);
 * here they are nothing. */
#ifdef USTR_RACE_POINTS
void ustr__race_point(const char *where); /* the test's */
#define RACE_POINT(where) ustr__race_point(where)
#else
#define RACE_POINT(where) ((void)0)
#endif

#define EMPTY  ((uintptr_t)0)
#define FROZEN ((uintptr_t)1)
#define CHUNK  ((size_t)512) /* slots a helper copies at a time */

/* Arrays under this many slots grow 4x, larger ones 2x. A move costs a
 * compare-and-swap on every free slot and another on every copied rep, and
 * over a table's growth the moves add up to the sum of its arrays: growing
 * 4x a third of it, where 2x made inserting new strings the slowest of the
 * locks (issue 33). The price is room: an index at 1/8 to 1/2 load, 16 to
 * 64 bytes a string in 8-byte slots, no more than the locked index's 16-byte
 * slots at 3/8 to 3/4. Past 2^16 slots a shard (some 2 million strings in
 * all) 2x again, so a huge table's spare room stays within 2x. */
#define GROW_4X_BELOW ((size_t)1 << 16)

/* Inserts between two looks of a thread at whether to free retired
 * arrays (reclaim_due()). */
#define RECLAIM_EVERY 256

/* The least a reclaim attempt waits for: retired arrays of 1/8 of the
 * index, and 64 KiB (reclaim_due()). */
#define RECLAIM_SHARE     8
#define RECLAIM_MIN_BYTES ((size_t)64 << 10)

/* Only where user-space pointers are known to keep bits 48-63 clear: on
 * arm64, top-byte-ignore (HWASan, Android's tagged heap) puts tags there. */
#if defined(__x86_64__)
#define TAG_SHIFT 48
#define PTR_MASK  ((((uintptr_t)1) << TAG_SHIFT) - 1)

/* The slot word of r: bits 48-62 of its hash, with the top bit set so a
 * tagged word is never mistaken for an untagged one. */
static inline uintptr_t
tagged(const ustr__rep *r)
{
    uintptr_t p = (uintptr_t)r;
    if (p >> TAG_SHIFT)
        return p;
    return p | (uintptr_t)((r->hash >> TAG_SHIFT) | 0x8000) << TAG_SHIFT;
}

/* Whether the word may hold a string of this hash: false only for a tagged
 * word whose tag differs. */
static inline bool
tag_may_match(uintptr_t v, uint64_t hash)
{
    uintptr_t tag = v >> TAG_SHIFT;
    return !(tag & 0x8000) || tag == ((hash >> TAG_SHIFT) | 0x8000);
}

static inline const ustr__rep *
rep_of(uintptr_t v)
{
    return (const ustr__rep *)(v >> TAG_SHIFT & 0x8000 ? v & PTR_MASK : v);
}
#else
static inline uintptr_t
tagged(const ustr__rep *r)
{
    return (uintptr_t)r;
}

static inline bool
tag_may_match(uintptr_t v, uint64_t hash)
{
    (void)v, (void)hash;
    return true;
}

static inline const ustr__rep *
rep_of(uintptr_t v)
{
    return (const ustr__rep *)v;
}
#endif

struct ustr__lf_array {
    size_t                    mask; /* capacity - 1 */
    size_t                    max_claims;
    size_t                    shard; /* which of the table's indexes it belongs to */
    void                     *raw;
    _Atomic(ustr__lf_array *) next;                      /* set once, when the move starts */
    _Atomic bool              growing;                   /* a thread is making `next` */
    ustr_epoch_node           node;                      /* retirement */
    alignas(USTR__CACHE_LINE) _Atomic size_t claimed;    /* reps placed or about to be */
    alignas(USTR__CACHE_LINE) _Atomic size_t copy_claim; /* next chunk to copy */
    _Atomic size_t copy_done;                            /* chunks finished */
    _Atomic bool   moved;                                /* finish_move() saw every chunk copied */
    alignas(USTR__CACHE_LINE) _Atomic uintptr_t slots[];
    /* then one flag per chunk: _Atomic bool done[chunks] */
};

static size_t
chunks_of(size_t cap)
{
    return (cap + CHUNK - 1) / CHUNK;
}

static size_t
array_chunks(const ustr__lf_array *a)
{
    return chunks_of(a->mask + 1);
}

static size_t
array_bytes(size_t cap)
{
    return sizeof(ustr__lf_array) + cap * sizeof(_Atomic uintptr_t) +
           chunks_of(cap) * sizeof(_Atomic bool);
}

/* Whether chunk c has been copied (by someone). */
static _Atomic bool *
chunk_done(ustr__lf_array *a, size_t c)
{
    return (_Atomic bool *)(void *)(a->slots + a->mask + 1) + c;
}

static ustr__lf_array *
array_new(ustr_table *t, size_t shard, size_t cap)
{
    void           *raw;
    ustr__lf_array *a = ustr__lines_alloc(t, array_bytes(cap), &raw);
    if (!a)
        return NULL;
    /* Zeroed: EMPTY is 0 and the counters start at 0. */
    a->mask = cap - 1;
    a->max_claims = cap / 2;
    a->shard = shard;
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

/* ---- epochs (ustr_epoch.h) ---- */

static inline void
epoch_enter(ustr_table *t, ustr__thread *th)
{
    ustr_epoch_enter(&t->lf.epochs, &th->rec);
}

static inline void
epoch_leave(ustr__thread *th)
{
    ustr_epoch_leave(&th->rec);
}

static inline ustr__lf_array *
current(ustr_table *t, size_t shard)
{
    /* seq_cst: the first shared pointer after entering (ustr_epoch.h). */
    return atomic_load_explicit(&t->lf.current[shard], memory_order_seq_cst);
}

static inline ustr__lf_array *
next_of(ustr__lf_array *a)
{
    /* Acquire pairs with the release that published `next`: we see its
     * zeroed slots. */
    return atomic_load_explicit(&a->next, memory_order_acquire);
}

static void
array_free_node(ustr_epoch_node *node, void *ctx)
{
    ustr_table     *t = ctx;
    ustr__lf_array *a = (ustr__lf_array *)(void *)((char *)node - offsetof(ustr__lf_array, node));
    /* Relaxed: a hint for reclaim_due(); the epoch domain's lock orders
     * the freeing itself. */
    atomic_fetch_sub_explicit(&t->lf.retired_bytes, array_bytes(a->mask + 1), memory_order_relaxed);
    array_free(t, a);
}

void
ustr__lockfree_reclaim(ustr_table *t)
{
    ustr_epoch_reclaim(&t->lf.epochs);
}

/* `a` is unlinked from `current`: free it once no reader can hold it. */
static void
retire(ustr_table *t, ustr__lf_array *a)
{
    /* Relaxed: as in array_free_node(). */
    atomic_fetch_add_explicit(&t->lf.retired_bytes, array_bytes(a->mask + 1), memory_order_relaxed);
    ustr_epoch_retire(&t->lf.epochs, &a->node, array_free_node, t);
}

/* Whether retired arrays are worth an attempt to free them. An attempt
 * is a membarrier: an interrupt on every CPU that runs one of the
 * process's threads, tens of microseconds in a VM (more when one of those
 * CPUs is descheduled), and more CPUs the more threads. Tried every 256
 * inserts of each thread, attempts ran inserting threads 20% slower on a
 * 2-vCPU VM; so they follow the memory to free instead of the inserts. What
 * waits meanwhile is bounded anyway: a table's arrays retired over its
 * growth come to a third of its index while it grows 4x, to its size
 * while 2x. */
static bool
reclaim_due(ustr_table *t)
{
    /* Relaxed, both: hints; the epoch domain's lock orders the real work. */
    size_t   retired = atomic_load_explicit(&t->lf.retired_bytes, memory_order_relaxed);
    uint64_t index = atomic_load_explicit(&t->index_bytes, memory_order_relaxed);
    return retired >= RECLAIM_MIN_BYTES && retired >= index / RECLAIM_SHARE;
}

/* ---- probing and placing ---- */

/* Finds the key in `a` alone. On a miss returns NULL with the free slot that
 * ended the probe in *at and its value (EMPTY or FROZEN) in *seen. Inline
 * always: it is most of a hit. */
static inline __attribute__((always_inline)) const ustr__rep *
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
        if (!tag_may_match(v, hash))
            continue;
        const ustr__rep *r = rep_of(v);
        if (ustr__rep_matches(r, hash, s, len))
            return r;
    }
}

static const ustr__rep *
lookup(ustr__lf_array *a, uint64_t hash, const char *s, size_t len)
{
    for (;;) {
        size_t           at;
        uintptr_t        seen = EMPTY; /* set by every miss; for the compiler */
        const ustr__rep *r = probe(a, hash, s, len, &at, &seen);
        if (r || seen == EMPTY)
            return r;
        a = next_of(a); /* FROZEN: the array moved on */
    }
}

/* Reserves room for one new rep. Copies take none: they are counted after
 * they land (see copy_range()), which the sizing above allows. */
static bool
claim(ustr__lf_array *a)
{
    /* Relaxed, load and CAS: a count, not a publication; the slot CAS
     * publishes. */
    size_t c = atomic_load_explicit(&a->claimed, memory_order_relaxed);
    do {
        if (c >= a->max_claims)
            return false;
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

/* a's successor, made now if needed; NULL when out of memory. One thread
 * makes it while the others that found `a` full wait for it: a big array
 * costs a moment to allocate, and every thread making its own to throw all
 * but one away costs far more. */
static ustr__lf_array *
next_or_make(ustr_table *t, ustr__lf_array *a)
{
    ustr_backoff b = USTR_BACKOFF_INIT;
    for (;;) {
        ustr__lf_array *n = next_of(a);
        if (n)
            return n;
        bool idle = false;
        /* Relaxed: the flag only elects the maker; `next` publishes. */
        if (atomic_compare_exchange_strong_explicit(&a->growing, &idle, true, memory_order_relaxed,
                                                    memory_order_relaxed))
            break;
        ustr_backoff_wait(&b); /* the maker may fail and clear the flag: look again */
    }
    size_t claimed = atomic_load_explicit(&a->claimed, memory_order_relaxed);
    size_t factor = a->mask + 1 < GROW_4X_BELOW ? 4 : 2;
    size_t cap = ustr__pow2_at_least(2 * factor * claimed);
    if (cap < factor * (a->mask + 1))
        cap = factor * (a->mask + 1);
    ustr__lf_array *fresh = array_new(t, a->shard, cap);
    if (!fresh) {
        /* Relaxed: as above; let another thread try. */
        atomic_store_explicit(&a->growing, false, memory_order_relaxed);
        return NULL;
    }
    /* Release publishes the zeroed array to whoever loads `next`. */
    atomic_store_explicit(&a->next, fresh, memory_order_release);
    return fresh;
}

static void advance(ustr_table *t, size_t shard);
static bool copy_chunk(ustr_table *t, ustr__lf_array *a);
static void copy_range(ustr_table *t, ustr__lf_array *a, size_t c);

/* Whether every rep of a moving array is in its successor. */
static bool
move_done(ustr__lf_array *a)
{
    /* Acquire pairs with the acq_rel count in copy_range() and the release
     * of `moved` in finish_move(): the copies of every chunk are visible
     * once we see either. */
    return atomic_load_explicit(&a->copy_done, memory_order_acquire) == array_chunks(a) ||
           atomic_load_explicit(&a->moved, memory_order_acquire);
}

/* Finishes the move of a shard's `current` now (needed only when its
 * successor filled before the move ended): helps with the chunks nobody
 * took, then copies again every chunk whose helper has not finished
 * (preempted, perhaps), rather than wait for it. Never waits, never
 * spins. */
static void
finish_move(ustr_table *t, size_t shard)
{
    ustr__lf_array *a = current(t, shard);
    if (!next_of(a))
        return;
    while (copy_chunk(t, a))
        ;
    for (size_t c = 0; c < array_chunks(a); c++)
        /* Acquire: pairs with the release of the flag in copy_range(); a
         * set flag means that chunk's copies are visible to us. */
        if (!atomic_load_explicit(chunk_done(a, c), memory_order_acquire))
            copy_range(t, a, c);
    /* Every flag is set now, by us or by a helper that had copied its whole
     * chunk, even if that helper has yet to add to copy_done. Release: our
     * view of all the copies goes to whoever sees `moved`. */
    atomic_store_explicit(&a->moved, true, memory_order_release);
    advance(t, shard);
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
        if (!copying && !claim(a)) {
            if (a != current(t, a->shard)) { /* never nest moves */
                finish_move(t, a->shard);
                a = current(t, a->shard);
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
        if (!copying)
            RACE_POINT("claimed"); /* room held, slot not yet taken */
        uintptr_t expect = EMPTY;
        /* Release publishes the rep's characters with the pointer (pairs with
         * the acquire in probe()). */
        if (atomic_compare_exchange_strong_explicit(&a->slots[i], &expect, tagged(r),
                                                    memory_order_release, memory_order_relaxed)) {
            *published = true;
            return r;
        }
        if (!copying)
            unclaim(a); /* lost the slot: look again */
    }
}

/* Closes slot i of a moving array and makes sure its rep is in n; returns
 * whether this call put it there. A free slot is closed (FROZEN), so no one
 * can publish into it behind us; a rep slot needs no mark, for it never
 * changes again. Idempotent: a rep is placed again, which finds it there
 * unless the thread that first copied it has not got that far yet. */
static bool
move_slot(ustr_table *t, ustr__lf_array *n, _Atomic uintptr_t *slot)
{
    /* Acquire: if it is a rep we are about to read it. */
    uintptr_t v = atomic_load_explicit(slot, memory_order_acquire);
    /* Release: whoever sees FROZEN also sees `next` (as in place()).
     * Acquire on failure: a rep appeared, and we are about to read it. */
    if (v == EMPTY && atomic_compare_exchange_strong_explicit(
                          slot, &v, FROZEN, memory_order_release, memory_order_acquire))
        return false;
    bool copied = false;
    if (v != FROZEN)
        place(t, n, rep_of(v), true, &copied);
    return copied;
}

/* Slots ahead of the copy whose memory is fetched early: a copy reads
 * each rep's hash (a miss: reps lie all over the arena) and then probes n
 * at a random place (another); one at a time, those misses were most of a
 * move's cost. */
#define FETCH_REP  64
#define FETCH_SLOT 32

/* Starts the loads that copying slot i + FETCH_SLOT and i + FETCH_REP of a
 * will need: the rep of the farther one, the home slot in n of the nearer
 * one (whose rep, fetched FETCH_REP - FETCH_SLOT slots ago, is there by
 * now). A hint: the copy itself reads every slot again. */
static inline void
prefetch_copy(ustr__lf_array *a, ustr__lf_array *n, size_t i, size_t end)
{
    /* Acquire, both: we read the rep behind the word (as in probe()). */
    if (i + FETCH_REP < end) {
        uintptr_t v = atomic_load_explicit(&a->slots[i + FETCH_REP], memory_order_acquire);
        if (v > FROZEN)
            __builtin_prefetch(rep_of(v));
    }
    if (i + FETCH_SLOT < end) {
        uintptr_t v = atomic_load_explicit(&a->slots[i + FETCH_SLOT], memory_order_acquire);
        if (v > FROZEN)
            __builtin_prefetch(&n->slots[rep_of(v)->hash & n->mask]);
    }
}

/* Copies chunk c of a to its successor; safe to run twice. */
static void
copy_range(ustr_table *t, ustr__lf_array *a, size_t c)
{
    ustr__lf_array *n = next_of(a);
    size_t          end = (c + 1) * CHUNK < a->mask + 1 ? (c + 1) * CHUNK : a->mask + 1;
    size_t          copied = 0;
    RACE_POINT("copying"); /* chunk taken, not yet copied */
    for (size_t i = c * CHUNK; i < end; i++) {
        prefetch_copy(a, n, i, end);
        copied += move_slot(t, n, &a->slots[i]);
    }
    /* Relaxed: a count, as in claim(); one add per chunk, not per rep. */
    if (copied)
        atomic_fetch_add_explicit(&n->claimed, copied, memory_order_relaxed);
    bool idle = false;
    /* acq_rel on the flag and the count: releases our copies to whoever
     * sees them, and acquires the other helpers' so the last can advance. */
    if (atomic_compare_exchange_strong_explicit(chunk_done(a, c), &idle, true, memory_order_acq_rel,
                                                memory_order_relaxed) &&
        atomic_fetch_add_explicit(&a->copy_done, 1, memory_order_acq_rel) + 1 == array_chunks(a))
        advance(t, a->shard);
}

/* Copies the next chunk nobody has taken; false when there is none. */
static bool
copy_chunk(ustr_table *t, ustr__lf_array *a)
{
    /* Relaxed: hands each chunk to one helper; nothing else is ordered. */
    size_t c = atomic_fetch_add_explicit(&a->copy_claim, 1, memory_order_relaxed);
    if (c >= array_chunks(a))
        return false;
    copy_range(t, a, c);
    return true;
}

/* Moves a shard's `current` past every fully copied array, retiring
 * each. */
static void
advance(ustr_table *t, size_t shard)
{
    for (;;) {
        ustr__lf_array *a = current(t, shard);
        ustr__lf_array *n = next_of(a);
        if (!n || !move_done(a))
            return;
        /* seq_cst: the swap of the reclamation proof. */
        if (atomic_compare_exchange_strong_explicit(&t->lf.current[shard], &a, n,
                                                    memory_order_seq_cst, memory_order_seq_cst)) {
            ustr__index_grew(t, (int64_t)(n->mask - a->mask), 0, 1);
            retire(t, a);
        }
    }
}

/* ---- the strategy ---- */

/* The string was not there: makes its rep and publishes it, or takes the
 * one another thread published meanwhile. NULL with errno when out of
 * memory. */
static const ustr__rep *
insert(ustr_table *t, ustr__thread *th, const char *s, size_t len, uint64_t hash)
{
    const ustr__rep *r = NULL;
    /* Allocate outside the epoch: an allocator is slow, and would keep
     * retired arrays from being freed meanwhile. */
    ustr__rep *mine = ustr__rep_make(t, th, s, len, hash);
    bool       published = false;
    if (mine) {
        epoch_enter(t, th);
        r = place(t, current(t, ustr__lf_shard_of(hash)), mine, false, &published);
        ustr__lf_array *a = current(t, ustr__lf_shard_of(hash));
        if (next_of(a)) /* a move is on: help it along */
            while (copy_chunk(t, a))
                ;
        epoch_leave(th);
    }

    if (published)
        ustr__count(&th->counters.inserts, 1);
    else if (mine)
        ustr__rep_unmake(t, th, mine);
    /* Only after an insert of this thread's own, every RECLAIM_EVERY of
     * them: a thread that only looks up (or lost the race to publish)
     * would otherwise, with 0 inserts, look at every miss. And only a try:
     * while one thread reclaims, the others insert on. Relaxed: a count of
     * this thread's own. */
    uint64_t inserts = atomic_load_explicit(&th->counters.inserts, memory_order_relaxed);
    if (published && inserts % RECLAIM_EVERY == 0 && reclaim_due(t))
        ustr_epoch_try_reclaim(&t->lf.epochs);
    if (!r)
        errno = ENOMEM; /* last: a free_fn above may have changed errno */
    return r;
}

/* Everything a hit needs is inline here, in one frame: the thread's
 * record, the hash, the epoch and the probe (a hit is the common case, and
 * calls and their frames were a third of its instructions). */
ustr
ustr__lockfree_intern(ustr_table *t, const char *s, size_t len)
{
    uint64_t      hash = ustr__hash(s, len); /* first: fewer values live across its loop */
    ustr__thread *th = ustr__thread_get(t, t->id);
    if (!th) {
        errno = ENOMEM;
        return NULL;
    }
    epoch_enter(t, th);
    const ustr__rep *r = lookup(current(t, ustr__lf_shard_of(hash)), hash, s, len);
    epoch_leave(th);
    if (!r)
        r = insert(t, th, s, len, hash);
    /* On every path, failures too: see ustr__count_release(). */
    ustr__count_release(&th->counters.lookups, r ? 1 : 0);
    return r ? r->chars : NULL; /* on NULL, errno was set by insert() */
}

ustr_result
ustr__lockfree_init(ustr_table *t)
{
    ustr_epoch_init(&t->lf.epochs);
    atomic_init(&t->lf.retired_bytes, 0);
    /* Room for initial_capacity strings spread evenly, twice over, as one
     * array would have; at least 16 slots each. */
    size_t cap = ustr__pow2_at_least(2 * t->initial_capacity / USTR__LF_SHARDS);
    cap = cap < 16 ? 16 : cap;
    for (size_t k = 0; k < USTR__LF_SHARDS; k++) {
        ustr__lf_array *a = array_new(t, k, cap);
        if (!a)
            return USTR_ERR_NOMEM; /* ustr_table_destroy() frees the shards made */
        ustr__index_grew(t, (int64_t)cap, 0, 0);
        atomic_init(&t->lf.current[k], a);
    }
    return USTR_OK;
}

void
ustr__lockfree_free(ustr_table *t)
{
    ustr_epoch_destroy(&t->lf.epochs); /* frees the retired arrays */
    for (size_t k = 0; k < USTR__LF_SHARDS; k++) {
        /* Relaxed: no other thread may use the table any more. */
        ustr__lf_array *a = atomic_load_explicit(&t->lf.current[k], memory_order_relaxed);
        while (a) {
            ustr__lf_array *n = atomic_load_explicit(&a->next, memory_order_relaxed);
            array_free(t, a);
            a = n;
        }
    }
}

uint64_t
ustr__lockfree_walk_count(ustr_table *t)
{
    /* A string being moved may be in two arrays: counted in the newest that
     * holds it. Relaxed, all: no thread interns meanwhile. */
    uint64_t n = 0;
    for (size_t k = 0; k < USTR__LF_SHARDS; k++)
        for (ustr__lf_array *a = atomic_load_explicit(&t->lf.current[k], memory_order_relaxed); a;
             a = atomic_load_explicit(&a->next, memory_order_relaxed)) {
            ustr__lf_array *later = atomic_load_explicit(&a->next, memory_order_relaxed);
            for (size_t i = 0; i <= a->mask; i++) {
                uintptr_t        v = atomic_load_explicit(&a->slots[i], memory_order_relaxed);
                const ustr__rep *r = rep_of(v);
                n += v > FROZEN && !(later && lookup(later, r->hash, r->chars, r->len) == r);
            }
        }
    return n;
}
